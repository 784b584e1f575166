// SPDX-License-Identifier: GPL-2.0-only
/* leaks: load_index keeps INDEX_ROWS rows of INDEX_ROW_SIZE bytes through the same alloc_row. */
#include "expect.h"
#include "leaks.h"

void load_index(unsigned rows)
{
	unsigned i;

	for (i = 0; i < rows; i++) {
		void *row = alloc_row(INDEX_ROW_SIZE); /* call(alloc_row) */

		keep(row);
	}
}
