// SPDX-License-Identifier: GPL-2.0-only
/* Functions of known parameters, built with -g, for test_params (what params_words reads). */
#include <stdarg.h>
#include <stddef.h>

struct big {
	long a, b, c;
};

typedef size_t pool_size;

void *p_none(void)
{
	return NULL;
}

void *p_two(void *pool, const pool_size n)
{
	return (char *)pool + n;
}

void *p_ten(size_t a1, size_t a2, size_t a3, size_t a4, size_t a5, size_t a6, size_t a7,
	    size_t a8, size_t a9, size_t a10)
{
	return (void *)(a1 + a2 + a3 + a4 + a5 + a6 + a7 + a8 + a9 + a10);
}

/* a 64-bit integer after an int: on a 32-bit ABI, the next even register pair */
void *p_pair(int a, long long b)
{
	return (void *)(size_t)(a + b);
}

void *p_var(size_t n, ...)
{
	va_list ap;
	size_t m;

	va_start(ap, n);
	m = va_arg(ap, size_t);
	va_end(ap);
	return (void *)(n + m);
}

void *p_struct(struct big b, size_t n)
{
	return (void *)(b.a + n);
}

void *p_ldouble(long double x, size_t n)
{
	return (void *)(n + (size_t)x);
}

struct big p_sret(size_t n)
{
	struct big b = { (long)n, 0, 0 };

	return b;
}

void *p_double(double x, size_t n)
{
	return (void *)(n + (size_t)x);
}
