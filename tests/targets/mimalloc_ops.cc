// SPDX-License-Identifier: GPL-2.0-only
/* vendor.h linked with mimalloc (tests/targets/Makefile links it with -lmimalloc). */
#define VENDOR_MIMALLOC
#include "vendor.h"
