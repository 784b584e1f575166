// SPDX-License-Identifier: GPL-2.0-only
/* leaks: main -> load_all -> load_table/load_index -> alloc_row -> malloc (chains 4 deep). */
#include "leaks.h"

void load_all(void)
{
	load_table(TABLE_ROWS); /* call(load_table) */
	load_index(INDEX_ROWS); /* call(load_index) */
}
