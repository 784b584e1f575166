/* SPDX-License-Identifier: GPL-2.0-only */
#ifndef HEAPTRACE_CFI_H
#define HEAPTRACE_CFI_H

/*
 * Stepping one frame with DWARF call frame information read by libdw: a module's .eh_frame
 * or, where it has none for the pc (gcc's C code on arm and mips64, or any code built without
 * unwind tables but with -g), its .debug_frame, from the file or its separate debug file.
 * libunwind reads .eh_frame and .ARM.exidx; this is for the frames it cannot step. Where
 * libdw refuses the rules (no ABI description for the architecture), cfirows.c reads
 * .debug_frame instead.
 */
#include <elfutils/libdwfl.h>
#include <stdbool.h>
#include <stdint.h>

#include "unwind/frames.h"

/* The CFI of mod that describes at (an address as dwfl sees it: a return address's call
 * site), .eh_frame first: CFI_EH_HDR (.eh_frame with the .eh_frame_hdr index libunwind
 * needs), CFI_EH, CFI_DEBUG, or CFI_NONE. */
enum cfi_table { CFI_NONE, CFI_EH_HDR, CFI_EH, CFI_DEBUG };
enum cfi_table cfi_covers(Dwfl_Module *mod, Dwarf_Addr at);

/* Is the code at at (an exact pc) in mod a signal frame's: does .eh_frame describe it with a
 * CIE that says so (augmentation 'S')? The C library's restorer, where a signal handler
 * returns, has one: its rules restore the interrupted code's registers from the kernel's
 * ucontext. */
bool cfi_signal_frame(Dwfl_Module *mod, Dwarf_Addr at);

/* One word of the traced process's memory at addr; 0 or -errno. */
typedef int (*cfi_read_fn)(uint64_t addr, uint64_t *val);

/*
 * Step from the frame whose registers are r (DWARF numbered as arch_ops.dwarf_regs says) and
 * whose code address at lies in mod (at: pc - 1 for a return address) to its caller: r
 * becomes the caller's registers (a register the rules leave unknown is dropped from
 * r->known, sp is the CFA) and *ret the caller's pc (the return address, as the frame's
 * return-address column holds it). Registers and memory words are arch_ops.word_size wide.
 * Return 0; 1 if the rules say there is no caller (the return address is undefined: _start);
 * -ENOENT if mod has no CFI for at; -EINVAL for a rule that needs a register r does not know
 * or an expression this does not evaluate; or the -errno of a memory read.
 */
int cfi_step(Dwfl_Module *mod, Dwarf_Addr at, cfi_read_fn read, struct frames_regs *r,
	     uint64_t *ret);

/* Where a cfi_rule finds a caller's register. */
enum cfi_where { CFI_LOST, CFI_KEPT, CFI_AT_CFA };

/*
 * A frame's rules in the few numbers most code's come to, for a step without libdw or
 * libunwind (fallback.c's quick step): the CFA is register cfa_reg (the stack or the frame
 * pointer: arch_ops.dwarf_sp, fp_reg) plus cfa_off; the return address and the frame pointer
 * are saved at the CFA plus ra_off and fp_off (CFI_AT_CFA), keep their value (CFI_KEPT) or are
 * not known (CFI_LOST: for the return address, there is no caller).
 */
struct cfi_rule {
	int64_t cfa_off, ra_off, fp_off;
	unsigned cfa_reg;
	enum cfi_where ra, fp;
};

/*
 * The rule .eh_frame gives mod's code at at (an exact pc, or a return address's call site),
 * the table libunwind steps by. Return 0; -ENOENT if .eh_frame has no rules for at; -EINVAL
 * if they are not that simple (an expression, a register saved in another, a signal frame's).
 */
int cfi_rule(Dwfl_Module *mod, Dwarf_Addr at, struct cfi_rule *out);

#endif
