// SPDX-License-Identifier: GPL-2.0-only
/* static_preheap: tests/targets/heapinv.c linked -static (main_arena in the executable's own
 * data; the brk area starts with the main thread's TLS block). */
#include "heapinv.c"
