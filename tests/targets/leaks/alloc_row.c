// SPDX-License-Identifier: GPL-2.0-only
/* leaks: the leaf shared by two chains; frame 1 of both, told apart by frame 2. */
#include <stdlib.h>

#include "leaks.h"

void *alloc_row(size_t size)
{
	void *p = malloc(size); /* site(alloc_row) */

	return p;
}
