// SPDX-License-Identifier: GPL-2.0-only
/*
 * heaptrace: the command words and the exit codes. The only place that exits.
 *
 * Exit status: the traced program's own (128+signal when a signal killed it) when heaptrace
 * launched it; 0 after a clean --pid session; 1 on a usage error; 2 when tracing could not
 * start (no such program or process, a program that cannot run here, a process that cannot be
 * traced, permission denied, no allocator symbols found) or the report could not be written.
 * `heaptrace report FILE` exits 0, 1 on a usage error, 2 when FILE is not a log it reads
 * (missing, truncated, corrupt, a newer format) or the report could not be written.
 */
#include <stdio.h>
#include <string.h>

#include "cmd/logcmd.h"
#include "cmd/run.h"
#include "target/events.h"

int main(int argc, char **argv)
{
	/* first thing: from here on a signal sent to heaptrace is taken, never fatal */
	events_init();
	/* whole lines: the report and the messages go to standard error, often the terminal the
	 * program writes to as well; unbuffered, each line was several writes, which the
	 * program's output could land between */
	setvbuf(stderr, NULL, _IOLBF, BUFSIZ);
	if (argc > 1 && !strcmp(argv[1], "report"))
		return logcmd_report(argc - 1, argv + 1);
	if (argc > 1 && !strcmp(argv[1], "diff"))
		return logcmd_diff(argc - 1, argv + 1);
	return run_trace(argc, argv);
}
