// SPDX-License-Identifier: GPL-2.0-only
/* musl_heapinv.c linked -static with musl-gcc (the allocator context in the program's own data). */
#include "musl_heapinv.c"
