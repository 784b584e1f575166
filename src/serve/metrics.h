/* SPDX-License-Identifier: GPL-2.0-only */
#ifndef HEAPTRACE_METRICS_H
#define HEAPTRACE_METRICS_H

/*
 * /metrics: the figures of every traced process in Prometheus' text exposition format 0.0.4,
 * labelled by pid, command and heap, and heaptrace's own CPU and memory under the names
 * Prometheus' client libraries give them (process_cpu_seconds_total,
 * process_resident_memory_bytes). The names are listed in man/heaptrace.1.
 */
#include <stdio.h>

#include "serve/capture.h"

/* Write m and heaptrace's own figures to f. */
void metrics_write(FILE *f, const struct capture_metrics *m);

/* A label value as the format wants it (\\, \" and \n escaped; bytes that are not UTF-8 as '?';
 * cut after METRICS_LABEL_MAX bytes at a character's start) onto f. */
#define METRICS_LABEL_MAX 160
void metrics_label(FILE *f, const char *s);

#endif
