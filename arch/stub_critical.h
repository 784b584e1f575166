/* SPDX-License-Identifier: GPL-2.0-only */
#ifndef HEAPTRACE_STUB_CRITICAL_H
#define HEAPTRACE_STUB_CRITICAL_H

/*
 * The critical sections of stub code that reserves its records with an exclusive pair
 * (aarch64, arm; their stubcode.c's CS_BEGIN and CS_END): for each of the entry, the free and
 * the return, the check of the store-exclusive's status (cs_res) and the record's writing up to
 * its tag's store.
 */
#include <stdint.h>

/* [first, second) each: a thread whose pc lies in one, or that was interrupted there (a signal
 * frame on its stack holds that pc), may hold a record reserved and not yet written
 * (stubprobe.c). */
extern const uint8_t ht_stub_cs_entry_res[], ht_stub_cs_entry_res_end[], ht_stub_cs_entry[],
	ht_stub_cs_entry_end[], ht_stub_cs_free_res[], ht_stub_cs_free_res_end[],
	ht_stub_cs_free[], ht_stub_cs_free_end[], ht_stub_cs_ret_res[], ht_stub_cs_ret_res_end[],
	ht_stub_cs_ret[], ht_stub_cs_ret_end[];
#define STUB_CRITICAL                                                                             \
	{                                                                                         \
		{ ht_stub_cs_entry_res, ht_stub_cs_entry_res_end },                               \
		{ ht_stub_cs_entry, ht_stub_cs_entry_end },                                       \
		{ ht_stub_cs_free_res, ht_stub_cs_free_res_end },                                 \
		{ ht_stub_cs_free, ht_stub_cs_free_end },                                         \
		{ ht_stub_cs_ret_res, ht_stub_cs_ret_res_end }, { ht_stub_cs_ret, ht_stub_cs_ret_end } \
	}

#endif
