// SPDX-License-Identifier: GPL-2.0-only
/* Perf maps, read as they grow (perfmap.h). */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#define PR_DOMAIN "perfmap"
#include "symbols/perfmap.h"
#include "util/log.h"
#include "util/util.h"

#define NAME_BLOCK (64u << 10) /* the names are kept in blocks of this size, never moved */
#define READ_CHUNK (64u << 10)

struct pm_entry {
	uint64_t start, end;
	uint64_t seq; /* the line's number: a later line wins */
	const char *name;
};

struct pm_named {
	uint64_t pc, offset;
	const char *name;
};

/* A block of names: strings handed out stay where they are until perfmap_free. */
struct pm_names {
	struct pm_names *next;
	size_t used, size;
	char s[];
};

struct perfmap {
	char *path; /* NULL: names only */
	uid_t uid;
	int64_t not_before; /* when the process started (s), 0: not known */
	enum perfmap_state state;
	int fd;
	uint64_t off; /* bytes of the file read */
	uint64_t retry_ns; /* PERFMAP_ABSENT: when to look again */
	char line[PERFMAP_MAX_LINE]; /* a line cut by the end of what was read */
	size_t nline;
	bool skipping; /* in a line too long */
	struct pm_entry *v; /* sorted by start, then seq */
	uint64_t *maxend; /* maxend[i]: the highest end of v[0..i] */
	size_t n, cap;
	struct pm_entry *fresh; /* lines added, not merged into v yet */
	size_t nfresh, fresh_cap;
	uint64_t seq;
	struct pm_names *names;
	struct pm_named *named; /* the memo, in the order names were given */
	size_t nnamed, named_cap;
	uint32_t *slots; /* the memo by pc: index in named + 1, 0 empty */
	size_t nslots;
};

struct perfmap *perfmap_new(const char *path, uid_t uid, int64_t not_before)
{
	struct perfmap *pm = xcalloc(1, sizeof(*pm));

	pm->path = path ? xstrdup(path) : NULL;
	pm->uid = uid;
	pm->not_before = not_before;
	pm->fd = -1;
	return pm;
}

void perfmap_free(struct perfmap *pm)
{
	if (!pm)
		return;
	if (pm->fd >= 0)
		close(pm->fd);
	while (pm->names) {
		struct pm_names *b = pm->names;

		pm->names = b->next;
		free(b);
	}
	free(pm->path);
	free(pm->v);
	free(pm->maxend);
	free(pm->fresh);
	free(pm->named);
	free(pm->slots);
	free(pm);
}

enum perfmap_state perfmap_state(const struct perfmap *pm)
{
	return pm->state;
}

static const char *keep_name(struct perfmap *pm, const char *s, size_t len)
{
	struct pm_names *b = pm->names;
	char *out;

	if (len > PERFMAP_MAX_NAME)
		len = PERFMAP_MAX_NAME;
	if (!b || b->size - b->used < len + 1) {
		size_t size = NAME_BLOCK;

		b = xmalloc(sizeof(*b) + size);
		b->next = pm->names;
		b->used = 0;
		b->size = size;
		pm->names = b;
	}
	out = b->s + b->used;
	memcpy(out, s, len);
	out[len] = '\0';
	b->used += len + 1;
	return out;
}

/* Hex digits at *p (an optional 0x before them), at most 16; *p moves past them. */
static int parse_hex(const char **p, const char *end, uint64_t *v)
{
	const char *s = *p;
	uint64_t x = 0;
	unsigned digits = 0;

	if (end - s >= 2 && s[0] == '0' && (s[1] | 0x20) == 'x')
		s += 2;
	for (; s < end; s++) {
		unsigned c = (unsigned char)*s, d;

		if (c >= '0' && c <= '9')
			d = c - '0';
		else if ((c | 0x20) >= 'a' && (c | 0x20) <= 'f')
			d = (c | 0x20) - 'a' + 10;
		else
			break;
		if (++digits > 16)
			return -EINVAL;
		x = x << 4 | d;
	}
	if (!digits)
		return -EINVAL;
	*v = x;
	*p = s;
	return 0;
}

int perfmap_parse_line(const char *line, size_t len, uint64_t *start, uint64_t *size,
		       const char **name, size_t *name_len)
{
	const char *p = line, *end = line + len;

	if (parse_hex(&p, end, start) || p == end || *p++ != ' ')
		return -EINVAL;
	if (parse_hex(&p, end, size) || p == end || *p++ != ' ')
		return -EINVAL;
	if (end > p && end[-1] == '\r')
		end--;
	if (p == end)
		return -EINVAL;
	*name = p;
	*name_len = (size_t)(end - p);
	return 0;
}

static void add_line(struct perfmap *pm, const char *line, size_t len)
{
	uint64_t start, size;
	const char *name;
	size_t name_len;

	if (perfmap_parse_line(line, len, &start, &size, &name, &name_len) || !size ||
	    start + size < start) {
		pr_dbg(2, "%s: a line that is no \"START SIZE name\" skipped", pm->path);
		return;
	}
	if (pm->nfresh == pm->fresh_cap) {
		pm->fresh_cap = pm->fresh_cap ? 2 * pm->fresh_cap : 256;
		pm->fresh = xrealloc(pm->fresh, pm->fresh_cap * sizeof(*pm->fresh));
	}
	pm->fresh[pm->nfresh++] = (struct pm_entry){ start, start + size, pm->seq++,
						     keep_name(pm, name, name_len) };
}

/* The lines in buf, not merged yet. */
static void feed_lines(struct perfmap *pm, const char *buf, size_t len)
{
	while (len) {
		const char *nl = memchr(buf, '\n', len);
		size_t k = nl ? (size_t)(nl - buf) : len;

		if (!pm->skipping && pm->nline + k > sizeof(pm->line)) {
			pm->skipping = true;
			pm->nline = 0;
		}
		if (!pm->skipping) {
			memcpy(pm->line + pm->nline, buf, k);
			pm->nline += k;
		}
		if (!nl)
			break;
		if (!pm->skipping)
			add_line(pm, pm->line, pm->nline);
		pm->skipping = false;
		pm->nline = 0;
		buf += k + 1;
		len -= k + 1;
	}
}

static int by_start(const void *a, const void *b)
{
	const struct pm_entry *x = a, *y = b;

	if (x->start != y->start)
		return x->start < y->start ? -1 : 1;
	return x->seq < y->seq ? -1 : x->seq > y->seq;
}

/* Merge the fresh entries into v (both sorted), and the maxima of the ends again. */
static size_t merge_fresh(struct perfmap *pm)
{
	size_t added = pm->nfresh, i = pm->n, j = pm->nfresh, k;

	if (!added)
		return 0;
	qsort(pm->fresh, pm->nfresh, sizeof(*pm->fresh), by_start);
	if (pm->n + added > pm->cap) {
		pm->cap = pm->n + added > 2 * pm->cap ? pm->n + added : 2 * pm->cap;
		pm->v = xrealloc(pm->v, pm->cap * sizeof(*pm->v));
		pm->maxend = xrealloc(pm->maxend, pm->cap * sizeof(*pm->maxend));
	}
	for (k = pm->n + added; j > 0;) {
		if (i > 0 && by_start(&pm->v[i - 1], &pm->fresh[j - 1]) > 0)
			pm->v[--k] = pm->v[--i];
		else
			pm->v[--k] = pm->fresh[--j];
	}
	pm->n += added;
	pm->nfresh = 0;
	for (k = 0; k < pm->n; k++)
		pm->maxend[k] = k && pm->maxend[k - 1] > pm->v[k].end ? pm->maxend[k - 1] :
									pm->v[k].end;
	return added;
}

size_t perfmap_feed(struct perfmap *pm, const char *buf, size_t len)
{
	feed_lines(pm, buf, len);
	return merge_fresh(pm);
}

/* Drop what was read: the file was written anew. The memo stays. */
static void restart(struct perfmap *pm)
{
	pm->off = 0;
	pm->n = 0;
	pm->nfresh = 0;
	pm->nline = 0;
	pm->skipping = false;
}

/* Open the file and check it as perf does; false if it is not there or not to be used. */
static bool open_checked(struct perfmap *pm)
{
	struct stat st;
	int fd = open(pm->path, O_RDONLY | O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK);
	const char *why = NULL;

	if (fd < 0 && errno != ELOOP) {
		pm->state = PERFMAP_ABSENT;
		pm->retry_ns = now_ns() + PERFMAP_RETRY_NS;
		return false;
	}
	if (fd < 0 || fstat(fd, &st))
		why = "it is a symbolic link";
	else if (!S_ISREG(st.st_mode))
		why = "it is not a regular file";
	else if (st.st_mode & S_IWOTH)
		why = "it is writable by other users";
	if (!why && st.st_uid != pm->uid && st.st_uid != 0) {
		pr_warn("%s is ignored, as perf would: it is owned by uid %u, neither the "
			"process's user (uid %u) nor root", pm->path, (unsigned)st.st_uid,
			(unsigned)pm->uid);
		why = "";
	} else if (why) {
		pr_warn("%s is ignored, as perf would: %s", pm->path, why);
	}
	if (!why && pm->not_before && (int64_t)st.st_mtime < pm->not_before) {
		pr_info("%s is ignored: it was last written before the process started (by an "
			"earlier process of the same pid)", pm->path);
		why = "";
	}
	if (why) {
		if (fd >= 0)
			close(fd);
		pm->state = PERFMAP_IGNORED;
		return false;
	}
	pm->fd = fd;
	pm->state = PERFMAP_OPEN;
	return true;
}

bool perfmap_refresh(struct perfmap *pm)
{
	char buf[READ_CHUNK];
	struct stat st;
	ssize_t got;

	if (!pm->path || pm->state == PERFMAP_IGNORED)
		return false;
	if (pm->fd < 0 &&
	    ((pm->state == PERFMAP_ABSENT && now_ns() < pm->retry_ns) || !open_checked(pm)))
		return false;
	if (!fstat(pm->fd, &st) && (uint64_t)st.st_size < pm->off)
		restart(pm);
	while ((got = pread(pm->fd, buf, sizeof(buf), (off_t)pm->off)) > 0) {
		feed_lines(pm, buf, (size_t)got);
		pm->off += (uint64_t)got;
		if ((size_t)got < sizeof(buf))
			break;
	}
	return merge_fresh(pm) > 0;
}

const char *perfmap_find(const struct perfmap *pm, uint64_t at, uint64_t *start)
{
	const struct pm_entry *best = NULL;
	size_t lo = 0, hi = pm->n;

	while (lo < hi) { /* lo: the number of entries that start at or below at */
		size_t mid = lo + (hi - lo) / 2;

		if (pm->v[mid].start <= at)
			lo = mid + 1;
		else
			hi = mid;
	}
	/* every entry that holds at is among those, back to where no earlier one reaches it */
	for (size_t i = lo; i-- > 0 && pm->maxend[i] > at;)
		if (pm->v[i].end > at && (!best || pm->v[i].seq > best->seq))
			best = &pm->v[i];
	if (!best)
		return NULL;
	*start = best->start;
	return best->name;
}

static const struct pm_named *memo_find(const struct perfmap *pm, uint64_t pc)
{
	if (!pm->nslots)
		return NULL;
	for (size_t i = hash64(pc) & (pm->nslots - 1);; i = (i + 1) & (pm->nslots - 1)) {
		uint32_t s = pm->slots[i];

		if (!s)
			return NULL;
		if (pm->named[s - 1].pc == pc)
			return &pm->named[s - 1];
	}
}

static void memo_slot(struct perfmap *pm, uint32_t idx)
{
	size_t i = hash64(pm->named[idx].pc) & (pm->nslots - 1);

	while (pm->slots[i])
		i = (i + 1) & (pm->nslots - 1);
	pm->slots[i] = idx + 1;
}

static void memo_add(struct perfmap *pm, uint64_t pc, uint64_t offset, const char *name)
{
	if (pm->nnamed == pm->named_cap) {
		pm->named_cap = pm->named_cap ? 2 * pm->named_cap : 64;
		pm->named = xrealloc(pm->named, pm->named_cap * sizeof(*pm->named));
	}
	pm->named[pm->nnamed] = (struct pm_named){ pc, offset, name };
	if (2 * (pm->nnamed + 1) > pm->nslots) { /* at most half full */
		free(pm->slots);
		pm->nslots = pm->nslots ? 2 * pm->nslots : 128;
		pm->slots = xcalloc(pm->nslots, sizeof(*pm->slots));
		for (size_t i = 0; i < pm->nnamed; i++)
			memo_slot(pm, (uint32_t)i);
	}
	memo_slot(pm, (uint32_t)pm->nnamed++);
}

const char *perfmap_name(struct perfmap *pm, uint64_t pc, bool read, uint64_t *offset)
{
	const struct pm_named *m = memo_find(pm, pc);
	const char *name;
	uint64_t start;

	if (m) {
		*offset = m->offset;
		return m->name;
	}
	if (!pc)
		return NULL;
	name = perfmap_find(pm, pc - 1, &start);
	if (!name && read && perfmap_refresh(pm))
		name = perfmap_find(pm, pc - 1, &start);
	if (!name)
		return NULL;
	*offset = pc - start;
	memo_add(pm, pc, *offset, name);
	return name;
}

size_t perfmap_named(const struct perfmap *pm)
{
	return pm->nnamed;
}

const char *perfmap_named_at(const struct perfmap *pm, size_t i, uint64_t *pc, uint64_t *offset)
{
	*pc = pm->named[i].pc;
	*offset = pm->named[i].offset;
	return pm->named[i].name;
}

void perfmap_note(struct perfmap *pm, uint64_t pc, uint64_t offset, const char *name)
{
	if (pc && !memo_find(pm, pc))
		memo_add(pm, pc, offset, keep_name(pm, name, strlen(name)));
}
