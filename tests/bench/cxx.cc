// SPDX-License-Identifier: GPL-2.0-only
/*
 * Benchmark workload: C++ allocation through operator new/delete (which call malloc/free):
 * single objects, vector growth and string growth, ROUNDS times (default 2000).
 *
 *	cxx [ROUNDS]
 */
#include <cstdlib>
#include <memory>
#include <string>
#include <vector>

struct node {
	long key;
	std::string name;
};

__attribute__((noipa)) static size_t objects(int round)
{
	std::vector<std::unique_ptr<node>> v;
	size_t sum = 0;

	for (int i = 0; i < 20; i++)
		v.push_back(std::make_unique<node>(node{ i, std::string(32 + i, 'a' + round % 26) }));
	for (auto &n : v)
		sum += n->name.size();
	return sum;
}

__attribute__((noipa)) static size_t vector_growth(int round)
{
	std::vector<long> v;

	for (long i = 0; i < 4000 + round % 7; i++)
		v.push_back(i); /* about a dozen reallocations */
	return v.size();
}

__attribute__((noipa)) static size_t string_growth(int round)
{
	std::string s;

	for (int i = 0; i < 3000; i++)
		s += static_cast<char>('a' + (i + round) % 26);
	return s.size();
}

int main(int argc, char **argv)
{
	int rounds = argc > 1 ? std::atoi(argv[1]) : 2000;
	size_t sum = 0;

	for (int r = 0; r < rounds; r++)
		sum += objects(r) + vector_growth(r) + string_growth(r);
	return sum ? 0 : 1;
}
