// SPDX-License-Identifier: GPL-2.0-only
/*
 * Finding a thread's own slot of a pthread key in its struct pthread (unwind/pytss.h): on
 * synthetic structs laid out as glibc's (the slot, decoys that hold the same value, an unused
 * key, a cut window, two candidates), then on this host's own threads, whose slot of a real
 * key must be found at one offset in every thread.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <pthread.h>
#include <sys/uio.h>
#include <unistd.h>

#include "unwind/pytss.h"
#include "unittest.h"

#define PD 0x7f0000001000ull /* the synthetic struct's address */
#define VAL 0x55550000abc0ull /* the key's value: a thread state */

/* A struct pthread as glibc 2.36 lays it out on x86_64: the array of { seq, data } at 784,
 * specific[0] (its address) right after it; key 3 in use (seq 1) holding VAL. */
struct fake {
	uint64_t w[PYTSS_WINDOW / 8];
};

static void put(struct fake *f, unsigned off, uint64_t v)
{
	f->w[off / 8] = v;
}

static void glibc_like(struct fake *f, unsigned array, unsigned key)
{
	memset(f, 0, sizeof(*f));
	put(f, 0, PD); /* the TCB's self pointer */
	put(f, 16, PD);
	for (unsigned k = 0; k < PYTSS_KEYS; k++)
		put(f, array + 16 * k, 2 * k + 1); /* keys in use elsewhere, other values */
	put(f, array + 16 * key + 8, VAL);
	put(f, array + 16 * PYTSS_KEYS, PD + array); /* specific[0] */
}

static int slot(const struct fake *f, size_t len, unsigned key)
{
	return pytss_slot((const uint8_t *)f, len, PD, key, VAL);
}

TEST_CASE(found)
{
	struct fake f;

	glibc_like(&f, 784, 3);
	CHECK_EQ(slot(&f, sizeof(f), 3), 784 + 16 * 3 + 8);
	/* another glibc, another place; the first and last keys */
	glibc_like(&f, 1552, 0);
	CHECK_EQ(slot(&f, sizeof(f), 0), 1552 + 8);
	glibc_like(&f, 784, 31);
	CHECK_EQ(slot(&f, sizeof(f), 31), 784 + 16 * 31 + 8);
}

TEST_CASE(decoys)
{
	struct fake f;

	glibc_like(&f, 784, 3);
	/* the value elsewhere after an odd word, but no word points to an array it is key 3 of */
	put(&f, 200, 7);
	put(&f, 208, VAL);
	put(&f, 2000, 9);
	put(&f, 2008, VAL);
	CHECK_EQ(slot(&f, sizeof(f), 3), 784 + 16 * 3 + 8);
	/* the value in another key's slot is no match for key 3 */
	glibc_like(&f, 784, 5);
	CHECK_EQ(slot(&f, sizeof(f), 3), -ENOENT);
}

TEST_CASE(not_found)
{
	struct fake f;

	/* the key not in use (an even sequence number) */
	glibc_like(&f, 784, 3);
	put(&f, 784 + 16 * 3, 2);
	CHECK_EQ(slot(&f, sizeof(f), 3), -ENOENT);
	/* no word holds the array's address (not glibc's struct) */
	glibc_like(&f, 784, 3);
	put(&f, 784 + 16 * PYTSS_KEYS, 0);
	CHECK_EQ(slot(&f, sizeof(f), 3), -ENOENT);
	/* the window read ends before the slot, or before the word that points to the array */
	glibc_like(&f, 784, 3);
	CHECK_EQ(slot(&f, 784 + 16 * 3 + 8, 3), -ENOENT);
	CHECK_EQ(slot(&f, 784 + 16 * PYTSS_KEYS, 3), -ENOENT);
	CHECK_EQ(slot(&f, 784 + 16 * PYTSS_KEYS + 8, 3), 784 + 16 * 3 + 8);
	CHECK_EQ(slot(&f, 0, 3), -ENOENT);
}

TEST_CASE(ambiguous)
{
	struct fake f;

	/* a second place that passes every check: no slot is taken */
	glibc_like(&f, 784, 3);
	put(&f, 3000 - 8, 1);
	put(&f, 3000, VAL);
	put(&f, 3500, PD + 3000 - 16 * 3 - 8);
	CHECK_EQ(slot(&f, sizeof(f), 3), -EEXIST);
}

TEST_CASE(bad_arguments)
{
	struct fake f;

	glibc_like(&f, 784, 3);
	CHECK_EQ(slot(&f, sizeof(f), PYTSS_KEYS), -EINVAL);
	CHECK_EQ(pytss_slot((const uint8_t *)&f, sizeof(f), PD, 3, 0), -EINVAL);
}

/* ---- this host's C library ---- */

static pthread_key_t key;

/* The slot of key found in the calling thread's struct pthread, read as heaptrace reads
 * another process's (a short read where the struct ends a mapping), or a negative errno. */
static void *own_slot(void *arg)
{
	uint8_t buf[PYTSS_WINDOW];
	uintptr_t pd = (uintptr_t)pthread_self();
	struct iovec local = { buf, sizeof(buf) }, remote = { (void *)pd, sizeof(buf) };
	ssize_t len;
	int *out = arg;

	pthread_setspecific(key, out);
	len = process_vm_readv(getpid(), &local, 1, &remote, 1, 0);
	out[0] = len > 0 ? pytss_slot(buf, len, pd, key, (uintptr_t)out) : -EFAULT;
	/* the slot found is where the C library keeps the value */
	out[1] = out[0] >= 0 && *(void **)(pd + out[0]) == pthread_getspecific(key);
	return NULL;
}

TEST_CASE(host_threads)
{
#ifdef __GLIBC__
	pthread_key_t other[3];
	int main_slot[2], thread_slot[2];
	pthread_t t;

	for (unsigned i = 0; i < 3; i++) /* the key is not the first */
		REQUIRE(!pthread_key_create(&other[i], NULL));
	REQUIRE(!pthread_key_create(&key, NULL));
	REQUIRE(key < PYTSS_KEYS);
	own_slot(main_slot);
	REQUIRE(!pthread_create(&t, NULL, own_slot, thread_slot));
	pthread_join(t, NULL);
	CHECK(main_slot[0] > 0);
	CHECK(main_slot[1]);
	CHECK_EQ(thread_slot[0], main_slot[0]);
	CHECK(thread_slot[1]);
#else
	printf("# skip: not glibc\n");
#endif
}
