// SPDX-License-Identifier: GPL-2.0-only
/* The state of the run the tracer's modules share (session.h). */
#include "trace/session.h"

struct session session = { .launched_status = -1 };
