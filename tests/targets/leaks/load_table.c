// SPDX-License-Identifier: GPL-2.0-only
/* leaks: load_table keeps TABLE_ROWS rows of TABLE_ROW_SIZE bytes, never freed. */
#include "expect.h"
#include "leaks.h"

void load_table(unsigned rows)
{
	unsigned i;

	for (i = 0; i < rows; i++) {
		void *row = alloc_row(TABLE_ROW_SIZE); /* call(alloc_row) */

		keep(row);
	}
}
