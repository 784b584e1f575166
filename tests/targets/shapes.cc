// SPDX-License-Identifier: GPL-2.0-only
/*
 * shapes: polymorphic C++ objects on the heap before heaptrace -p attaches, for the type census
 * by RTTI (tests/e2e/test_inventory.py runs the stripped copy, shapes_stripped: no .symtab, the
 * classes' vtables in no symbol table). It makes 20000 objects of three classes with virtual
 * functions (every 7th deleted again) and 6667 plain malloc blocks whose first word points at a
 * string literal in read-only data (what a vptr looks like, without being one), counts the live
 * objects per class with malloc_usable_size and writes
 *   type name=Circle blocks=N bytes=B         (one per class)
 * then "ready\n", waits for the breakpoints, sends SIGINT to heaptrace and exits 0 after the
 * detach. No stdio.
 */
#include <malloc.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>

#include "entries.h"
#include "expect.h"
#include "handshake.h"

struct Shape {
	virtual ~Shape() {}
	virtual double area() const = 0;
};

struct Circle : Shape {
	double r = 1;
	double area() const override { return 3.14 * r * r; }
};

struct Rect : Shape {
	double w = 1, h = 2;
	double area() const override { return w * h; }
};

struct Poly : Shape {
	int n = 6;
	double pts[6] = {};
	double area() const override { return n; }
};

#define NOBJ 20000
#define NPLAIN 6667

static Shape *objs[NOBJ];
static const char *volatile *plain[NPLAIN];

int main()
{
	unsigned long blocks[3] = { 0 }, bytes[3] = { 0 };
	static const char *const names[3] = { "Circle", "Rect", "Poly" };
	struct timespec start;
	long tracer;

	entries_save();
	for (unsigned i = 0; i < NOBJ; i++) {
		unsigned k = i % 3;

		objs[i] = k == 0 ? (Shape *)new Circle : k == 1 ? (Shape *)new Rect : new Poly;
	}
	for (unsigned i = 0; i < NOBJ; i += 7) {
		delete objs[i];
		objs[i] = nullptr;
	}
	for (unsigned i = 0; i < NPLAIN; i++) {
		plain[i] = (const char *volatile *)malloc(16 + i % 64);
		plain[i][0] = "a string literal, not a vtable";
	}
	for (unsigned i = 0; i < NOBJ; i++)
		if (objs[i]) {
			blocks[i % 3]++;
			bytes[i % 3] += malloc_usable_size(objs[i]);
		}
	for (unsigned k = 0; k < 3; k++) {
		struct expect_buf b;

		b.n = 0;
		expect_str(&b, "type name=");
		expect_str(&b, names[k]);
		expect_kv(&b, "blocks", blocks[k]);
		expect_kv(&b, "bytes", bytes[k]);
		expect_flush(&b);
	}
	prctl(PR_SET_PTRACER, PR_SET_PTRACER_ANY, 0, 0, 0);
	if (write(1, "ready\n", 6) != 6)
		return 2;
	clock_gettime(CLOCK_MONOTONIC, &start);
	while (!entries_trapped(1)) {
		if (handshake_expired(&start))
			return 99;
		handshake_pause();
	}
	tracer = handshake_tracer();
	if (tracer <= 0 || kill((pid_t)tracer, SIGINT) != 0)
		return 98;
	handshake_wait_reports(1);
	handshake_wait_untraced();
	return 0;
}
