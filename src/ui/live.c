// SPDX-License-Identifier: GPL-2.0-only
/*
 * --live: the heap of the traced process as a top-like view (see live.h). The figures are taken
 * from the table at each refresh, after the rings and the return log were read; growth is per
 * backtrace since the previous refresh, rates are per second over the same span.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <locale.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <poll.h>
#include <sys/eventfd.h>
#include <sys/ioctl.h>
#include <sys/stat.h>
#include <termios.h>
#include <unistd.h>
#ifdef HAVE_NCURSES
#include <curses.h>
#endif

#define PR_DOMAIN "live"
#include "account/calls.h"
#include "unwind/frames.h"
#include "ui/live.h"
#include "util/log.h"
#include "target/process.h"
#include "output/labels.h"
#include "output/report.h"
#include "symbols/symbols.h"
#include "trace/symcache.h"
#include "trace/snapshot.h"
#include "util/util.h"

#define TICK_NS 50000000 /* how often keys are looked at */
#define SAMPLES 512 /* live-byte samples kept for the sparkline (one per refresh) */
#define SPARK_NS 60000000000ull /* the sparkline covers the last minute */
#define HOLD_MAX (1u << 20) /* the program's output held while the view is up */

enum live_sort { LS_SIZE, LS_COUNT, LS_GROWTH, LS_NKEYS };
static const char *const sort_names[LS_NKEYS] = { "size", "count", "growth" };

struct row {
	uint32_t bt;
	uint64_t size, count;
	int64_t growth;
};

static struct live {
	bool on, curses;
	int pid;
	uint64_t interval_ns, next_refresh, next_tick, last_ns;
	unsigned top;
	enum live_sort sort;
	bool paused, frames; /* frames: showing the backtrace of the selected row */
	unsigned sel; /* selected row */
	uint32_t sel_bt; /* its backtrace, kept across refreshes; UINT32_MAX: the top row */
	/* figures of the last refresh */
	struct row *rows;
	size_t nrows, rows_cap;
	uint64_t *prev; /* live bytes per backtrace at the previous refresh */
	uint32_t nprev, prev_epoch;
	uint64_t prev_allocs, prev_frees;
	double alloc_rate, free_rate;
	struct table_summary sum;
	uint64_t rss;
	uint64_t not_seen; /* proc.calls_not_seen */
	uint64_t sample_bytes; /* table.sample_bytes: the rows are estimates */
	bool stuck; /* proc.stubs_stuck */
	struct {
		uint64_t t, bytes;
	} samples[SAMPLES];
	unsigned nsamples, sample_next;
	struct proc *sym_p;
	/* the launched program's terminal output, through a pseudo-terminal */
	int master, slave;
	bool redirect[3]; /* which of the program's fds 1 and 2 go to the slave */
	int stop; /* eventfd: the pump copies what is there, then ends */
	pthread_t pump;
	bool pumping;
	pthread_mutex_t mu;
	bool holding; /* the view is up: output is held in hold, else written through */
	char *hold;
	size_t hold_len, dropped;
#ifdef HAVE_NCURSES
	SCREEN *scr;
	FILE *keys;
#endif
} lv = { .master = -1, .slave = -1, .stop = -1, .sel_bt = UINT32_MAX,
	.mu = PTHREAD_MUTEX_INITIALIZER };

/* ---- the program's output while the view is up ---- */

static void write_all(int fd, const char *buf, size_t len)
{
	while (len) {
		ssize_t n = write(fd, buf, len);

		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			return; /* the terminal is gone: nothing to keep it for */
		buf += n;
		len -= n;
	}
}

static void hold_append(const char *buf, size_t n)
{
	if (!lv.hold)
		lv.hold = xmalloc(HOLD_MAX);
	if (n > HOLD_MAX) {
		lv.dropped += n - HOLD_MAX;
		buf += n - HOLD_MAX;
		n = HOLD_MAX;
	}
	if (lv.hold_len + n > HOLD_MAX) { /* keep the newest */
		size_t drop = lv.hold_len + n - HOLD_MAX;

		memmove(lv.hold, lv.hold + drop, lv.hold_len - drop);
		lv.hold_len -= drop;
		lv.dropped += drop;
	}
	memcpy(lv.hold + lv.hold_len, buf, n);
	lv.hold_len += n;
}

/* Copies one read of the pseudo-terminal's output: the bytes copied, 0 once no writer is left
 * (EIO), -1 on an interrupted read. */
static ssize_t pump_once(void)
{
	char buf[4096];
	ssize_t n = read(lv.master, buf, sizeof(buf));

	if (n < 0 && errno == EINTR)
		return -1;
	if (n <= 0)
		return 0;
	pthread_mutex_lock(&lv.mu);
	if (lv.holding)
		hold_append(buf, n);
	else
		write_all(STDOUT_FILENO, buf, n);
	pthread_mutex_unlock(&lv.mu);
	return n;
}

/* Copies the pseudo-terminal's output until every writer closed it (the program and what it
 * started have ended), or, once told to stop (lv.stop), until nothing is left to read: what
 * the program wrote before it ended is not lost to a pump that was slow to run. After the stop
 * HOLD_MAX bytes at most, so that a child writing on and on cannot keep heaptrace. A poll of
 * the master waits for the kernel's queued copy from the slave, as a read does. Runs with every
 * signal blocked, as heaptrace's main thread. */
static void *pump(void *arg)
{
	struct pollfd fds[2] = { { .fd = lv.master, .events = POLLIN },
				 { .fd = lv.stop, .events = POLLIN } };
	ssize_t left = HOLD_MAX, n;
	bool stopping = false;

	(void)arg;
	for (;;) {
		if (poll(fds, 2, stopping ? 0 : -1) < 0) {
			if (errno == EINTR)
				continue;
			return NULL;
		}
		if (fds[0].revents) { /* POLLHUP too: the read says EIO */
			if (!(n = pump_once()) || (stopping && (left -= n) <= 0))
				return NULL;
		} else if (stopping) {
			return NULL;
		}
		stopping = stopping || fds[1].revents;
	}
}

/* True if fd is the terminal of heaptrace's standard output. */
static bool same_terminal(int fd)
{
	struct stat a, b;

	return isatty(fd) && !fstat(fd, &a) && !fstat(STDOUT_FILENO, &b) && a.st_rdev == b.st_rdev;
}

static int open_pty(void)
{
	struct termios tio;
	struct winsize ws;
	const char *name;

	lv.master = posix_openpt(O_RDWR | O_NOCTTY | O_CLOEXEC);
	if (lv.master < 0 || grantpt(lv.master) || unlockpt(lv.master) ||
	    !(name = ptsname(lv.master)) ||
	    (lv.slave = open(name, O_RDWR | O_NOCTTY | O_CLOEXEC)) < 0) {
		int e = errno;

		pr_err("--live: cannot open a pseudo-terminal for the program's output: %s",
		       strerror(e));
		return -e;
	}
	/* the program sees its terminal's settings and size */
	if (!tcgetattr(STDOUT_FILENO, &tio))
		tcsetattr(lv.slave, TCSANOW, &tio);
	if (!ioctl(STDOUT_FILENO, TIOCGWINSZ, &ws))
		ioctl(lv.slave, TIOCSWINSZ, &ws);
	return 0;
}

static int live_prepare(const struct tracer_opts *o)
{
	lv.on = true;
	lv.interval_ns = (uint64_t)(o->interval > 0 ? o->interval * 1e9 : 1e9);
	lv.top = o->report.top ? o->report.top : 10;
	lv.sort = o->report.sort == SORT_COUNT ? LS_COUNT : LS_SIZE;
#ifdef HAVE_NCURSES
	lv.curses = isatty(STDOUT_FILENO);
#else
	if (isatty(STDOUT_FILENO))
		pr_warn("--live: this heaptrace was built without ncurses: plain text only");
#endif
	if (!lv.curses || o->pid)
		return 0;
	for (int fd = 1; fd <= 2; fd++)
		lv.redirect[fd] = same_terminal(fd);
	return open_pty();
}

static void live_child_setup(void)
{
	for (int fd = 1; fd <= 2; fd++)
		if (lv.redirect[fd] && lv.slave >= 0)
			dup2(lv.slave, fd); /* the copy has no close-on-exec */
}

/* ---- figures ---- */

static struct proc *live_proc(void)
{
	struct proc *first = NULL;

	for (struct proc *p = procs; p; p = p->next) {
		if (!p->counting)
			continue;
		if (p->pid == lv.pid)
			return p;
		if (!first)
			first = p;
	}
	return first;
}

static uint64_t row_key(const struct row *r)
{
	return lv.sort == LS_SIZE ? r->size : lv.sort == LS_COUNT ? r->count : 0;
}

static int row_cmp(const void *x, const void *y)
{
	const struct row *a = x, *b = y;

	if (lv.sort == LS_GROWTH) {
		if (a->growth != b->growth)
			return a->growth < b->growth ? 1 : -1;
	} else if (row_key(a) != row_key(b)) {
		return row_key(a) < row_key(b) ? 1 : -1;
	}
	if (a->size != b->size)
		return a->size < b->size ? 1 : -1;
	return a->bt < b->bt ? -1 : a->bt > b->bt;
}

static void sort_rows(void)
{
	if (lv.nrows) /* no rows yet: no array (qsort's base must not be NULL) */
		qsort(lv.rows, lv.nrows, sizeof(*lv.rows), row_cmp);
	lv.sel = 0;
	for (size_t i = 0; i < lv.nrows; i++)
		if (lv.rows[i].bt == lv.sel_bt)
			lv.sel = i;
}

/* Take the figures of p now: every backtrace with live blocks, or whose bytes changed. */
static void take(struct proc *p, uint64_t now)
{
	struct table *t = &p->table;
	double dt = lv.last_ns ? (now - lv.last_ns) / 1e9 : 0;

	snapshot_drain(p);
	calls_park(p); /* a realloc in flight still has its old block */
	if (t->epoch != lv.prev_epoch) { /* an execve: the backtraces are new */
		lv.nprev = 0;
		lv.prev_epoch = t->epoch;
		lv.prev_allocs = lv.prev_frees = 0;
	}
	lv.nrows = 0;
	for (uint32_t i = 0; i < t->nbts; i++) {
		const struct bt *b = &t->bts[i];
		uint64_t before = i < lv.nprev ? lv.prev[i] : 0;

		if (!b->count && b->size == before)
			continue;
		if (lv.nrows == lv.rows_cap) {
			lv.rows_cap = lv.rows_cap ? 2 * lv.rows_cap : 256;
			lv.rows = xrealloc(lv.rows, lv.rows_cap * sizeof(*lv.rows));
		}
		lv.rows[lv.nrows++] = (struct row){ i, b->size, b->count,
						    (int64_t)(b->size - before) };
	}
	lv.prev = xrealloc(lv.prev, (t->nbts + 1) * sizeof(*lv.prev));
	for (uint32_t i = 0; i < t->nbts; i++)
		lv.prev[i] = t->bts[i].size;
	lv.nprev = t->nbts;
	lv.sum = t->sum;
	lv.not_seen = p->calls_not_seen;
	lv.sample_bytes = t->sample_bytes;
	lv.stuck = p->stubs_stuck;
	calls_unpark(p);
	lv.alloc_rate = dt > 0 ? (lv.sum.alloc_calls - lv.prev_allocs) / dt : 0;
	lv.free_rate = dt > 0 ? (lv.sum.free_calls - lv.prev_frees) / dt : 0;
	lv.prev_allocs = lv.sum.alloc_calls;
	lv.prev_frees = lv.sum.free_calls;
	lv.last_ns = now;
	proc_read_statm(p);
	lv.rss = p->has_statm ? p->statm[1] : 0;
	lv.samples[lv.sample_next] = (typeof(lv.samples[0])){ now, lv.sum.live_bytes };
	lv.sample_next = (lv.sample_next + 1) % SAMPLES;
	if (lv.nsamples < SAMPLES)
		lv.nsamples++;
	sort_rows();
	lv.sym_p = p;
}

#ifdef HAVE_NCURSES /* the frame list is the terminal view's only */
/* Frame idx of backtrace bt of p, symbolised (the blocks found at the attach have none). */
static void frame_of(struct proc *p, uint32_t bt, unsigned idx, struct sym_frame *sf)
{
	static char cls[48];
	const struct bt *b = &p->table.bts[bt];
	/* p's own, kept between refreshes: opening one per refresh inflated the C library's
	 * debug sections every second */
	struct snapshot_resolver rc = { p, symcache_get(p) };

	*sf = (struct sym_frame){ .line = -1 };
	if (table_bt_before_attach(&p->table, b)) {
		snprintf(cls, sizeof(cls), "[blocks of up to %" PRIu64 " bytes]",
			 table_bt_pcs(&p->table, b)[1]);
		sf->function = idx ? cls : "[before attach]";
		return;
	}
	snapshot_resolve_frame(&rc, frames_addr(table_bt_pcs(&p->table, b)[idx]), idx, sf);
}
#endif

/* The label of backtrace bt (output/labels.h): its first frame past the allocators and
 * their wrappers, "function (file:line)". */
static const char *site(struct proc *p, uint32_t bt, char *buf, size_t len)
{
	struct snapshot_resolver rc = { p, symcache_get(p) };
	struct report_info ri = { .resolve = snapshot_resolve_frame, .resolve_ctx = &rc };

	report_label(&ri, &p->table, &p->table.bts[bt], buf, len);
	return buf;
}

static const char *human(char *buf, size_t len, uint64_t v)
{
	static const char *const unit[] = { "B", "KiB", "MiB", "GiB", "TiB" };
	double x = v;
	unsigned u = 0;

	while (x >= 1024 && u + 1 < ARRAY_SIZE(unit)) {
		x /= 1024;
		u++;
	}
	snprintf(buf, len, u ? "%.1f %s" : "%.0f %s", x, unit[u]);
	return buf;
}

static void row_text(struct proc *p, const struct row *r, char *buf, size_t len)
{
	char where[512];

	snprintf(buf, len, "%12" PRIu64 " %8" PRIu64 " %+12" PRId64 "  %s", r->size, r->count,
		 r->growth, site(p, r->bt, where, sizeof(where)));
}

#define ROWS_HEAD "       BYTES   BLOCKS       GROWTH  ALLOCATED BY"

static void header_text(char *l1, char *l2, size_t len)
{
	char a[32], b[32], c[32];

	snprintf(l1, len, "live %s (%" PRIu64 " bytes) in %" PRIu64 " blocks   peak %s   RSS %s",
		 human(a, sizeof(a), lv.sum.live_bytes), lv.sum.live_bytes, lv.sum.live_blocks,
		 human(b, sizeof(b), lv.sum.peak_live_bytes), human(c, sizeof(c), lv.rss));
	char unseen[96] = "";

	if (lv.not_seen || lv.stuck) /* heaptrace fell behind: the counts are not exact */
		snprintf(unseen, sizeof(unseen), "   %" PRIu64 "%s calls not seen (not exact)",
			 lv.not_seen, lv.stuck ? "+" : "");
	else if (lv.sample_bytes) /* --sample-bytes: the rows are estimates, this line is not */
		snprintf(unseen, sizeof(unseen), "   rows sampled (1 in %" PRIu64 " bytes)",
			 lv.sample_bytes);
	snprintf(l2, len, "allocations %.0f/s   frees %.0f/s   %" PRIu64 " calls, %" PRIu64
		 " frees in all   refresh %.3g s   sort: %s%s%s",
		 lv.alloc_rate, lv.free_rate, lv.sum.alloc_calls, lv.sum.free_calls,
		 lv.interval_ns / 1e9, sort_names[lv.sort], lv.paused ? "   PAUSED" : "", unseen);
}

/* ---- plain text, when standard output is not a terminal ---- */

static void plain_frame(struct proc *p, uint64_t now)
{
	char l1[256], l2[256], buf[768];

	header_text(l1, l2, sizeof(l1));
	printf("heaptrace --live: pid %d, %.3f s: %s\n%s\n%s\n", p->pid,
	       (now - p->start_ns) / 1e9, l1, l2, ROWS_HEAD);
	for (size_t i = 0; i < lv.nrows && i < lv.top; i++) {
		row_text(p, &lv.rows[i], buf, sizeof(buf));
		printf("%s\n", buf);
	}
	putchar('\n');
	fflush(stdout);
}

/* ---- the terminal view ---- */
#ifdef HAVE_NCURSES

static void line(int y, const char *s, attr_t attr)
{
	attron(attr);
	mvaddnstr(y, 0, s, COLS);
	for (int x = getcurx(stdscr); attr && x < COLS && getcury(stdscr) == y; x++)
		addch(' ');
	attroff(attr);
}

/* The live bytes of the last minute, one cell per refresh, scaled to the largest. */
static void sparkline(int y, uint64_t now)
{
	static const char *const utf8[8] = { "▁", "▂", "▃", "▄", "▅", "▆", "▇", "█" };
	static const char ascii[8] = { '_', '.', ',', '-', '~', '=', '+', '#' };
	int width = COLS - 16, n = 0;
	uint64_t max = 1;
	unsigned first;

	if (width <= 0)
		return;
	while (n < (int)lv.nsamples && n < width) {
		unsigned k = (lv.sample_next + SAMPLES - 1 - n) % SAMPLES;

		if (now - lv.samples[k].t > SPARK_NS)
			break;
		if (lv.samples[k].bytes > max)
			max = lv.samples[k].bytes;
		n++;
	}
	mvaddstr(y, 0, "last minute:   ");
	first = (lv.sample_next + SAMPLES - n) % SAMPLES;
	for (int i = 0; i < n; i++) {
		uint64_t v = lv.samples[(first + i) % SAMPLES].bytes;
		unsigned level = (unsigned)(v * 7 / max);

		if (MB_CUR_MAX > 1)
			addstr(utf8[level]);
		else
			addch(ascii[level]);
	}
}

/* The last lines of the program's held output, control characters left out. */
static void output_pane(int y, int nlines)
{
	size_t end, start;
	char buf[512];

	pthread_mutex_lock(&lv.mu);
	end = lv.hold_len;
	while (end && (lv.hold[end - 1] == '\n' || lv.hold[end - 1] == '\r'))
		end--;
	for (int k = nlines - 1; k >= 0; k--) {
		size_t n = 0;

		start = end;
		while (start && lv.hold[start - 1] != '\n')
			start--;
		for (size_t i = start; i < end && n < sizeof(buf) - 1; i++)
			if ((unsigned char)lv.hold[i] >= ' ' || lv.hold[i] == '\t')
				buf[n++] = lv.hold[i] == '\t' ? ' ' : lv.hold[i];
		buf[n] = '\0';
		if (start < end || k < nlines - 1)
			mvaddnstr(y + k, 0, buf, COLS);
		if (!start)
			break;
		end = start - 1;
	}
	pthread_mutex_unlock(&lv.mu);
}

static void draw_frames(struct proc *p, int y, int last)
{
	const struct row *r = &lv.rows[lv.sel];
	const struct bt *b = &p->table.bts[r->bt];
	char buf[768];

	snprintf(buf, sizeof(buf), "backtrace of %" PRIu64 " bytes in %" PRIu64 " blocks "
		 "(growth %+" PRId64 "); %" PRIu64 " allocations, %" PRIu64 " bytes in all",
		 r->size, r->count, r->growth, b->total_count, b->total_size);
	line(y++, buf, A_BOLD);
	for (unsigned d = 0; d < b->depth && y < last; d++) {
		struct sym_frame sf;
		int n;

		frame_of(p, r->bt, d, &sf);
		n = snprintf(buf, sizeof(buf), "%3u  0x%-14" PRIx64 " %s", d,
			     frames_addr(table_bt_pcs(&p->table, b)[d]),
			     sf.function ? sf.function : "??");
		if (sf.function && !table_bt_before_attach(&p->table, b))
			n += snprintf(buf + n, sizeof(buf) - n, "+0x%" PRIx64, sf.offset);
		if (sf.file && sf.line > 0)
			n += snprintf(buf + n, sizeof(buf) - n, "  %s:%d", sf.file, sf.line);
		if (sf.module)
			n += snprintf(buf + n, sizeof(buf) - n, "  [%s]", sf.module);
		if (report_frame_guessed(&p->table, b, d) && n < (int)sizeof(buf))
			snprintf(buf + n, sizeof(buf) - n, "  [guess: found by scanning the stack]");
		line(y++, buf, 0);
	}
}

static void draw(uint64_t now)
{
	struct proc *p = lv.sym_p;
	char l1[256], l2[256], buf[768];
	int pane = lv.master >= 0 ? (LINES >= 24 ? 5 : 2) : 0;
	int last = LINES - 1 - (pane ? pane + 1 : 0); /* rows end above the pane and the keys */
	int y = 0;

	erase();
	snprintf(buf, sizeof(buf), "heaptrace --live   pid %d   %s", p->pid,
		 p->command ? p->command : "");
	line(y++, buf, A_REVERSE);
	header_text(l1, l2, sizeof(l1));
	line(y++, l1, 0);
	line(y++, l2, 0);
	sparkline(y++, now);
	y++;
	if (lv.frames && lv.nrows) {
		draw_frames(p, y, last);
	} else {
		size_t first = 0;

		line(y++, ROWS_HEAD, A_BOLD);
		if (last > y && lv.sel >= (size_t)(last - y)) /* scrolled to the selected row */
			first = lv.sel - (last - y) + 1;
		for (size_t i = first; i < lv.nrows && y < last; i++) {
			row_text(p, &lv.rows[i], buf, sizeof(buf));
			line(y++, buf, i == lv.sel ? A_REVERSE : 0);
		}
	}
	if (pane) {
		line(last, "-- the program's output --", A_BOLD);
		output_pane(last + 1, pane);
	}
	line(LINES - 1, lv.frames ? "enter/left: back   p: pause   q: detach" :
				    "s: sort (size, count, growth)   p/space: pause   up/down, "
				    "enter: frames   q: detach",
	     A_REVERSE);
	refresh();
}

static void view_open(void)
{
	lv.keys = isatty(STDIN_FILENO) ? NULL : fopen("/dev/tty", "re");
	setlocale(LC_CTYPE, ""); /* UTF-8 block characters where the terminal has them */
	lv.scr = newterm(NULL, stdout, lv.keys ? lv.keys : stdin);
	if (!lv.scr) {
		pr_warn("--live: cannot use this terminal (TERM=%s): plain text",
			getenv("TERM") ? getenv("TERM") : "");
		lv.curses = false;
		return;
	}
	raw(); /* Ctrl-C is a key of the view: the program in the same group gets no SIGINT */
	noecho();
	nodelay(stdscr, TRUE);
	keypad(stdscr, TRUE);
	set_escdelay(25);
	curs_set(0);
	pthread_mutex_lock(&lv.mu);
	lv.holding = lv.master >= 0;
	pthread_mutex_unlock(&lv.mu);
}

/* Take the keys typed since the last look. Return true for q or Ctrl-C. */
static bool keys(uint64_t now)
{
	bool redraw = false;
	int c;

	while ((c = getch()) != ERR) {
		redraw = true;
		switch (c) {
		case 'q':
		case 'Q':
		case 3: /* Ctrl-C, raw */
			return true;
		case 's':
			lv.sort = (lv.sort + 1) % LS_NKEYS;
			sort_rows();
			break;
		case 'p':
		case ' ':
			lv.paused = !lv.paused;
			break;
		case KEY_UP:
		case 'k':
			if (lv.sel)
				lv.sel--;
			if (lv.sel < lv.nrows)
				lv.sel_bt = lv.rows[lv.sel].bt;
			break;
		case KEY_DOWN:
		case 'j':
			if (lv.sel + 1 < lv.nrows)
				lv.sel++;
			if (lv.sel < lv.nrows)
				lv.sel_bt = lv.rows[lv.sel].bt;
			break;
		case '\n':
		case '\r':
		case KEY_ENTER:
			lv.frames = !lv.frames && lv.nrows;
			if (lv.frames) /* the backtrace stays in view when the order changes */
				lv.sel_bt = lv.rows[lv.sel].bt;
			break;
		case KEY_RIGHT:
			lv.frames = lv.nrows > 0;
			if (lv.frames)
				lv.sel_bt = lv.rows[lv.sel].bt;
			break;
		case KEY_LEFT:
		case KEY_BACKSPACE:
		case 27:
			lv.frames = false;
			break;
		case KEY_RESIZE:
			break;
		default:
			redraw = false;
		}
	}
	if (redraw && lv.sym_p)
		draw(now);
	return false;
}

/* Follow the terminal's size: heaptrace takes SIGWINCH itself, ncurses never sees it. Return
 * true if it changed. */
static bool follow_size(void)
{
	struct winsize ws;

	if (ioctl(STDOUT_FILENO, TIOCGWINSZ, &ws) || !ws.ws_row || !ws.ws_col ||
	    (ws.ws_row == LINES && ws.ws_col == COLS))
		return false;
	resizeterm(ws.ws_row, ws.ws_col);
	if (lv.master >= 0) /* the program's terminal has the size of heaptrace's */
		ioctl(lv.master, TIOCSWINSZ, &ws);
	return lv.sym_p != NULL;
}

static void full_repaint(void)
{
	clearok(curscr, TRUE);
}

static void view_close(void)
{
	if (!lv.scr)
		return;
	endwin();
	delscreen(lv.scr);
	lv.scr = NULL;
	if (lv.keys)
		fclose(lv.keys);
	lv.keys = NULL;
}

#else /* no ncurses: plain text only */
static void view_open(void)
{
	lv.curses = false;
}

static bool keys(uint64_t now)
{
	(void)now;
	return false;
}

static bool follow_size(void)
{
	return false;
}

static void full_repaint(void)
{
}

static void draw(uint64_t now)
{
	(void)now;
}

static void view_close(void)
{
}
#endif

static void live_begin(int pid)
{
	lv.pid = pid;
	if (lv.slave >= 0) { /* the program has its copies */
		close(lv.slave);
		lv.slave = -1;
	}
	if (lv.curses)
		view_open();
	if (lv.master >= 0 && (lv.stop = eventfd(0, EFD_CLOEXEC)) >= 0 &&
	    !pthread_create(&lv.pump, NULL, pump, NULL))
		lv.pumping = true;
	lv.next_refresh = now_ns(); /* a first screen at once */
}

static bool live_step(uint64_t now, uint64_t *until)
{
	struct proc *p = live_proc();

	bool stale;

	if (!lv.on || !p)
		return false;
	/* figures of another process (the first one ended, -f), or of the image before an
	 * execve: not to be shown, even paused */
	stale = p != lv.sym_p || p->table.epoch != lv.prev_epoch;
	if (stale)
		lv.next_refresh = now;
	if (now >= lv.next_refresh) {
		if (!lv.paused || stale)
			take(p, now);
		if (lv.curses) {
			full_repaint(); /* over what others wrote to the terminal meanwhile */
			draw(now);
		} else if (!lv.paused) {
			plain_frame(p, now);
		}
		lv.next_refresh = now + lv.interval_ns;
	}
	if (lv.curses && now >= lv.next_tick) {
		if (follow_size())
			draw(now);
		if (keys(now))
			return true;
		lv.next_tick = now + TICK_NS;
	}
	if (!*until || lv.next_refresh < *until)
		*until = lv.next_refresh;
	if (lv.curses && lv.next_tick < *until)
		*until = lv.next_tick;
	return false;
}

static void live_end(void)
{
	if (!lv.on)
		return;
	if (lv.curses)
		view_close();
	lv.sym_p = NULL;
	pthread_mutex_lock(&lv.mu);
	if (lv.dropped) {
		char note[128];

		snprintf(note, sizeof(note), "heaptrace: the first %zu bytes of the program's "
			 "output while --live was up are not shown\n", lv.dropped);
		write_all(STDERR_FILENO, note, strlen(note));
	}
	write_all(STDOUT_FILENO, lv.hold, lv.hold_len);
	lv.hold_len = 0;
	lv.holding = false;
	pthread_mutex_unlock(&lv.mu);
	lv.on = false;
}

/* How long the output of what the program started may keep heaptrace after the program ended. */
#define PUMP_LINGER_NS 200000000

/* Waits for the pump: until no writer is left, PUMP_LINGER_NS at most; then what was written
 * by then is copied and the pump ends. A child that keeps the terminal open would keep
 * heaptrace: its later output is left to it. */
static void pump_finish(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_REALTIME, &ts);
	ts.tv_nsec += PUMP_LINGER_NS;
	if (ts.tv_nsec >= 1000000000) {
		ts.tv_sec++;
		ts.tv_nsec -= 1000000000;
	}
	if (pthread_timedjoin_np(lv.pump, NULL, &ts)) {
		uint64_t one = 1;

		if (write(lv.stop, &one, sizeof(one)) != sizeof(one))
			return; /* cannot be told: it ends with heaptrace, its fds stay open */
		pthread_join(lv.pump, NULL);
	}
	lv.pumping = false;
}

static void live_finish(void)
{
	live_end();
	if (lv.pumping)
		pump_finish();
	if (!lv.pumping && lv.master >= 0) {
		close(lv.master);
		lv.master = -1;
	}
	if (!lv.pumping && lv.stop >= 0) {
		close(lv.stop);
		lv.stop = -1;
	}
	if (lv.slave >= 0)
		close(lv.slave);
	lv.slave = -1;
	free(lv.rows);
	free(lv.prev);
	free(lv.hold);
	lv.rows = NULL;
	lv.prev = NULL;
	lv.hold = NULL;
}

const struct tracer_view live_view = {
	.prepare = live_prepare,
	.child_setup = live_child_setup,
	.begin = live_begin,
	.step = live_step,
	.end = live_end,
	.finish = live_finish,
};
