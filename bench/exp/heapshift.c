/* bench/exp/heapshift.c -- FOR MEASURING ONLY: preloaded instead of the
 * shim (bench/phases.py --before), takes $CGX_SHIFT bytes of the heap at
 * start-up and keeps them, touched: does moving where the driver's heap
 * objects land, as the shim's own allocations do, change what the
 * driver's calls cost? (docs/measurements.md, nineteenth session) */
#include <stdlib.h>
#include <string.h>
static void *cgx_kept;
__attribute__((constructor)) static void cgx_shift(void)
{
	const char *e = getenv("CGX_SHIFT");
	size_t n = e ? strtoul(e, NULL, 0) : 0;
	if (n && (cgx_kept = malloc(n)))
		memset(cgx_kept, 1, n);
}
