// SPDX-License-Identifier: GPL-2.0-only
/* leaks: calloc blocks; their size is nmemb * size. */
#include <stdlib.h>

#include "leaks.h"

void *leak_calloc(void)
{
	void *p = calloc(CALLOC_NMEMB, CALLOC_SIZE); /* site(leak_calloc) */

	return p;
}
