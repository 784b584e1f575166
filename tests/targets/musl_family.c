// SPDX-License-Identifier: GPL-2.0-only
/* family.c built with musl-gcc: a dynamically linked musl program, whose C library is its dynamic
 * linker (ld-musl-ARCH.so.1). */
#include "family.c"
