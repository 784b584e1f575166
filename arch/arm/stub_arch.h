/* SPDX-License-Identifier: GPL-2.0-only */
#ifndef HEAPTRACE_STUB_ARCH_H
#define HEAPTRACE_STUB_ARCH_H

/* Entry stubs (stubs.h) exist only for x86_64 so far: every hook keeps its breakpoint. */
#define STUBS_SUPPORTED 0

#endif
