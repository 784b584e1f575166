// SPDX-License-Identifier: GPL-2.0-only
/* family.c built with musl-gcc -static: the musl malloc family inside the executable. */
#include "family.c"
