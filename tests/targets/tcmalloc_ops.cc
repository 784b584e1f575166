// SPDX-License-Identifier: GPL-2.0-only
/* vendor.h linked with tcmalloc (tests/targets/Makefile links it with -ltcmalloc). */
#define VENDOR_TCMALLOC
#include "vendor.h"
