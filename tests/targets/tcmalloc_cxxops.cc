// SPDX-License-Identifier: GPL-2.0-only
/* cxxops.cc linked with tcmalloc (tests/targets/Makefile links it with -ltcmalloc). */
#include "cxxops.cc"
