/*
 * bench/exp/prefetch.h -- FOR MEASURING ONLY, never for use: forced into
 * every shim source by bench/exp/build.sh (variants pf-entry, pf-both).
 * At a hook's entry (cg_call_begin) and, with pf-both, right after its
 * driver call (CG_FWD), the code lines that hook ran in a steady capture
 * cycle of the stand-in are prefetched into L2 (prefetcht1). The lines are
 * not known when this is compiled: cgx_pf_tab is patched into the built
 * library by bench/exp/pf-lines.py from a lackey trace of that very build
 * (so the library must not be rebuilt after). What it measures: whether
 * a hook's cold code lines cost less fetched together than one by one
 * (docs/measurements.md, nineteenth session).
 */
#ifndef __ASSEMBLER__
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <dlfcn.h>
#include <stdint.h>
#define CGX_PF_SLOTS 8
#define CGX_PF_POOL 1500
/* magic, then per slot: hid (-1 unused), first index and count in off[] */
struct cgx_pf_tab_t {
	char magic[16];
	int16_t hid[CGX_PF_SLOTS];
	uint16_t first[CGX_PF_SLOTS], n[CGX_PF_SLOTS];
	uint16_t off[CGX_PF_POOL]; /* 64-byte line numbers from the library's base */
};
__attribute__((weak, aligned(64))) struct cgx_pf_tab_t cgx_pf_tab = {
    "CGXPFTAB-0123456", {-1, -1, -1, -1, -1, -1, -1, -1}, {0}, {0}, {0}};
__attribute__((weak)) uintptr_t cgx_pf_base;
__attribute__((weak)) __thread __attribute__((tls_model("initial-exec"))) int cgx_pf_cur;
static inline __attribute__((always_inline)) void cgx_pf(int hid)
{
	uintptr_t b = cgx_pf_base;
	if (__builtin_expect(!b, 0)) {
		Dl_info di;
		if (!dladdr((void *)&cgx_pf_tab, &di))
			return;
		cgx_pf_base = b = (uintptr_t)di.dli_fbase;
	}
	cgx_pf_cur = hid;
	for (int k = 0; k < CGX_PF_SLOTS; k++)
		if (cgx_pf_tab.hid[k] == hid) {
			const uint16_t *o = cgx_pf_tab.off + cgx_pf_tab.first[k];
			for (int i = 0, n = cgx_pf_tab.n[k]; i < n; i++)
				__builtin_prefetch((const void *)(b + (uintptr_t)o[i] * 64), 0, 2);
			return;
		}
}
#endif
