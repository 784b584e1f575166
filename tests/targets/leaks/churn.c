// SPDX-License-Identifier: GPL-2.0-only
/* leaks: allocations that are all freed again (counted in alloc_calls and free_calls only). */
#include <stdlib.h>

#include "expect.h"
#include "leaks.h"

void churn(unsigned n)
{
	unsigned i;

	for (i = 0; i < n; i++) {
		void *p = malloc(CHURN_SIZE);

		keep(p);
		free(p);
	}
}
