// SPDX-License-Identifier: GPL-2.0-only
/* leaks: many small blocks (the largest count, the smallest bytes). */
#include <stdlib.h>

#include "leaks.h"

void *leak_small(void)
{
	void *p = malloc(SMALL_SIZE); /* site(leak_small) */

	return p;
}
