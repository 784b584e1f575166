/* SPDX-License-Identifier: GPL-2.0-only */
#ifndef HEAPTRACE_STUB_ARCH_H
#define HEAPTRACE_STUB_ARCH_H

/* Entry stubs (stubs.h) exist for x86_64 and aarch64 only so far: every hook keeps its
 * breakpoint here. */
#define STUBS_SUPPORTED 0

#endif
