// SPDX-License-Identifier: GPL-2.0-only
/* A traced process's symbolizer, kept between reports and read ahead (symcache.h). */
#include <pthread.h>
#include <signal.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#define PR_DOMAIN "symbols"
#include "util/log.h"
#include "util/maps.h"
#include "target/process.h"
#include "symbols/symbols.h"
#include "trace/symcache.h"
#include "util/util.h"

struct symcache {
	struct symbolizer *sym; /* made by the reader while it runs, NULL before */
	struct modlist mods; /* the modules sym knows, as they were then */
	char **files; /* the file each is read from (sym_sources) */
	bool kept; /* one of the SYMCACHE_KEEP */
	pthread_t reader;
	bool reading; /* the reader was started and not joined */
	pthread_mutex_t lock; /* done and abandoned */
	bool done; /* the reader finished */
	bool abandoned; /* dropped while reading: the reader frees it */
};

static unsigned nkept, nreading;

static void free_files(char **files, size_t n)
{
	for (size_t i = 0; i < n; i++)
		free(files[i]);
	free(files);
}

static void cache_free(struct symcache *c)
{
	sym_close(c->sym);
	free_files(c->files, c->mods.n);
	modlist_clear(&c->mods);
	pthread_mutex_destroy(&c->lock);
	free(c);
}

/* c->mods and c->files are set: this thread alone touches c->sym until it is joined. */
static void *read_ahead(void *arg)
{
	struct symcache *c = arg;
	bool abandoned;

	c->sym = sym_open_sources(&c->mods, c->files);
	sym_warm(c->sym);
	pthread_mutex_lock(&c->lock);
	c->done = true;
	abandoned = c->abandoned;
	pthread_mutex_unlock(&c->lock);
	if (abandoned)
		cache_free(c);
	return NULL;
}

static struct symcache *cache_new(const struct modlist *ml)
{
	struct symcache *c = xcalloc(1, sizeof(*c));

	modlist_copy(&c->mods, ml);
	c->files = sym_sources(&c->mods);
	pthread_mutex_init(&c->lock, NULL);
	return c;
}

void symcache_warm(struct proc *p)
{
	struct symcache *c;
	sigset_t all, old;
	int ret;

	if (p->symcache || nreading || nkept >= SYMCACHE_KEEP)
		return;
	c = cache_new(&p->mods);
	c->kept = true;
	nkept++;
	p->symcache = c;
	/* every signal stays heaptrace's main thread's (events.c waits for them there) */
	sigfillset(&all);
	pthread_sigmask(SIG_BLOCK, &all, &old);
	ret = pthread_create(&c->reader, NULL, read_ahead, c);
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	if (ret) {
		pr_dbg(1, "no thread to read symbols ahead: %s", strerror(ret));
		return; /* symcache_get makes the symbolizer */
	}
	c->reading = true;
	nreading++;
}

static void join(struct symcache *c)
{
	if (!c->reading)
		return;
	pthread_join(c->reader, NULL);
	c->reading = false;
	nreading--;
}

/*
 * The first module of ml that c's symbolizer does not know as ml has it now (ml->n: it knows
 * them all), or SIZE_MAX if one it knows is no longer as it was (start again). Modules are only
 * ever appended to a process's list (maps.h); a module's bias may become known later.
 */
static size_t first_new(const struct symcache *c, const struct modlist *ml)
{
	if (ml->n < c->mods.n)
		return SIZE_MAX;
	for (size_t i = 0; i < c->mods.n; i++) {
		const struct module *a = &c->mods.v[i], *b = &ml->v[i];

		if (a->base != b->base || strcmp(a->path, b->path))
			return SIZE_MAX;
		if (a->bias_known && (!b->bias_known || a->bias != b->bias))
			return SIZE_MAX;
		if (!a->bias_known && b->bias_known)
			return i;
	}
	return c->mods.n;
}

/* Bring c up to ml's modules, from its first new one. */
static void catch_up(struct symcache *c, const struct modlist *ml, size_t from)
{
	free_files(c->files, c->mods.n);
	modlist_clear(&c->mods);
	modlist_copy(&c->mods, ml);
	c->files = sym_sources(&c->mods);
	sym_add_modules(c->sym, &c->mods, from, c->files);
}

struct symbolizer *symcache_get(struct proc *p)
{
	struct symcache *c = p->symcache;
	size_t from;

	if (c)
		join(c);
	if (c && c->sym) {
		from = first_new(c, &p->mods);
		if (from == SIZE_MAX) {
			symcache_drop(p);
			c = NULL;
		} else if (from < p->mods.n) {
			catch_up(c, &p->mods, from);
		}
	}
	if (!c) {
		c = cache_new(&p->mods);
		c->kept = nkept < SYMCACHE_KEEP;
		nkept += c->kept;
		p->symcache = c;
	}
	if (!c->sym)
		c->sym = sym_open_sources(&c->mods, c->files);
	sym_set_jit(c->sym, p->jit); /* made by the unwinder where it met JIT code */
	return c->sym;
}

void symcache_release(struct proc *p)
{
	if (p->symcache && !p->symcache->kept)
		symcache_drop(p);
}

void symcache_drop(struct proc *p)
{
	struct symcache *c = p->symcache;
	bool done;

	if (!c)
		return;
	p->symcache = NULL;
	nkept -= c->kept;
	if (c->reading) {
		pthread_mutex_lock(&c->lock);
		done = c->done;
		c->abandoned = !done;
		pthread_mutex_unlock(&c->lock);
		if (!done) {
			pthread_detach(c->reader);
			nreading--;
			return;
		}
		join(c);
	}
	cache_free(c);
}
