// SPDX-License-Identifier: GPL-2.0-only
/* Diagnostics on stderr, one line each. */
#include <stdarg.h>
#include <stdio.h>

#include "util/log.h"

int log_level;

void log_print(int level, const char *domain, const char *fmt, ...)
{
	va_list ap;

	if (level > log_level)
		return;
	if (level >= 2)
		fprintf(stderr, "heaptrace[%s]: ", domain);
	else
		fputs(level < 0 ? "heaptrace: " : level == 0 ? "heaptrace: warning: " : "heaptrace: ",
		      stderr);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
}
