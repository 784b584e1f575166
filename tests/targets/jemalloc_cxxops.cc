// SPDX-License-Identifier: GPL-2.0-only
/* cxxops.cc linked with jemalloc (tests/targets/Makefile links it with -ljemalloc). */
#include "cxxops.cc"
