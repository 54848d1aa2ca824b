/*
 * bench/exp/touch.h -- FOR MEASURING ONLY, never for use: forced into every
 * shim source by bench/exp/build.sh, which also makes cg_call_begin
 * (shim/hooks/hooks.h) call cgx_touch(hid) at every hook's entry. Each call
 * reads CGX_LINES distinct cache lines of a static area, a different set
 * for each hook (seven hooks a capture cycle: 7 x CGX_LINES lines a cycle),
 * as independent loads (CGX_IND) or as one dependent chain (CGX_DEP): what
 * a cycle's extra cold lines cost, in bench/run.py --before
 * (docs/measurements.md, nineteenth session).
 */
#ifndef __ASSEMBLER__
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <stdint.h>
#ifndef CGX_LINES
#define CGX_LINES 14
#endif
__attribute__((weak, aligned(64))) char cgx_area[64 * CGX_LINES * 64];
static inline __attribute__((always_inline)) void cgx_touch(int hid)
{
#ifdef CGX_ONLY_HID
	if (hid != CGX_ONLY_HID)
		return;
#endif
#if defined(CGX_IND)
	volatile char *b = cgx_area + (hid & 63) * CGX_LINES * 64;
	for (int i = 0; i < CGX_LINES; i++)
		(void)b[i * 64];
#elif defined(CGX_DEP)
	char *b = cgx_area + (hid & 63) * CGX_LINES * 64;
	uintptr_t x = 0;
	for (int i = 0; i < CGX_LINES; i++)
		x = *(volatile uintptr_t *)(b + i * 64 + (x & 1));
	__asm__ volatile("" ::"r"(x));
#endif
}
#endif
