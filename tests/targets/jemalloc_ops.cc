// SPDX-License-Identifier: GPL-2.0-only
/* vendor.h linked with jemalloc (tests/targets/Makefile links it with -ljemalloc). */
#define VENDOR_JEMALLOC
#include "vendor.h"
