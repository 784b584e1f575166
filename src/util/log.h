/* SPDX-License-Identifier: GPL-2.0-only */
#ifndef HEAPTRACE_LOG_H
#define HEAPTRACE_LOG_H

/*
 * Diagnostics go to stderr, prefixed "heaptrace:". Each .c file may define PR_DOMAIN
 * (a short module name) before including this header; debug lines carry it.
 */
#ifndef PR_DOMAIN
#define PR_DOMAIN "main"
#endif

extern int log_level; /* 0: errors and warnings, 1: info (-v), 2+: debug (-vv ...) */

void log_print(int level, const char *domain, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

#define pr_err(...) log_print(-1, PR_DOMAIN, __VA_ARGS__)
#define pr_warn(...) log_print(0, PR_DOMAIN, __VA_ARGS__)
#define pr_info(...) log_print(1, PR_DOMAIN, __VA_ARGS__)
#define pr_dbg(lvl, ...)                                                                           \
	do {                                                                                       \
		if (log_level >= 1 + (lvl))                                                        \
			log_print(1 + (lvl), PR_DOMAIN, __VA_ARGS__);                              \
	} while (0)

#endif
