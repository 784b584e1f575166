// SPDX-License-Identifier: GPL-2.0-only
/* leaks: one big block (the largest bytes, the smallest count). */
#include <stdlib.h>

#include "leaks.h"

void *leak_big(void)
{
	void *p = malloc(BIG_SIZE); /* site(leak_big) */

	return p;
}
