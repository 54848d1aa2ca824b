/*
 * tests/programs/getproc_versions.c -- the all-versions routing check.
 *
 * For every row of the generated getproc-versions.h (every version of every
 * hooked name) and each flags value (0, LEGACY_STREAM, PER_THREAD_DEFAULT_
 * STREAM), ask cuGetProcAddress_v2 (looked up with dlsym on libcuda, so
 * under the shim it is the shim's) and print one line:
 *   <base> <version> <flags>: rc=<rc> status=<st> <module>:<symbol>
 * where module is "shim" when the pointer lies in libcgshim.so, "driver"
 * otherwise, and symbol is dladdr's name for it. Then, with --check (under
 * the shim), judge each answer: a pointer for a hooked version must be the
 * shim's wrapper of that exact ABI (the hooks.def row of that PFN, its
 * _ptsz twin when the per-thread flag selects one); an unrouted version must
 * come back untouched. Closing line: "<n> checked, <m> routing misses".
 *
 * Built with -DVIA_RUNTIME and linked with a CUDA runtime (nvcc's static
 * one on the GPU host), the same queries go through the runtime's own door,
 * cudaGetDriverEntryPointByVersion, and each base name once more through
 * cudaGetDriverEntryPoint (the runtime's version), which must give a wrapper.
 *
 * With --twice after --check (or alone), every query is asked twice in a
 * row, as a runtime that looks an entry point up again does, and a few
 * names the shim does not hook are asked too (twice): the second answer
 * must be the first's (the shim keeps each thread's last answers, getproc.c),
 * and an unhooked name's must be the driver's own pointer.
 */
#define _GNU_SOURCE
#include <cuda.h>
#ifdef VIA_RUNTIME
#include <cuda_runtime_api.h>
#endif
#include <dlfcn.h>
#include <stdio.h>
#include <string.h>

typedef CUresult (*gpa_t)(const char *, void **, int, cuuint64_t, CUdriverProcAddressQueryResult *);

struct row {
	const char *base;
	int ver, twin;
	const char *pfn, *hook, *reason;
};

static const struct row rows[] = {
#define CG_VERSION(base, ver, twin, pfn, hook, reason) {#base, ver, twin, pfn, hook, reason},
#include "getproc-versions.h"
#undef CG_VERSION
};
#define NROWS (sizeof rows / sizeof rows[0])

/* The rows the driver may answer for (base, ver, flags): the plain row of
 * that version, and under the per-thread flag its _ptsz (or _ptds) twin:
 * the twin row of the lowest version from this one up to the next plain
 * version (a twin
 * can be younger than its plain form: cuEventRecord 2000, _ptsz 7000).
 * Both have the ABI of that version. */
static const struct row *twin_of(const struct row *plain)
{
	int next = 1 << 30;
	const struct row *best = NULL;
	for (size_t i = 0; i < NROWS; i++)
		if (!strcmp(rows[i].base, plain->base) && rows[i].twin == 0 && rows[i].ver > plain->ver &&
		    rows[i].ver < next)
			next = rows[i].ver;
	for (size_t i = 0; i < NROWS; i++)
		if (!strcmp(rows[i].base, plain->base) && rows[i].twin != 0 && rows[i].ver >= plain->ver &&
		    rows[i].ver < next && (!best || rows[i].ver < best->ver))
			best = &rows[i];
	return best;
}

#ifdef VIA_RUNTIME
static CUresult rt_gpa(const char *sym, void **p, int ver, cuuint64_t flags, CUdriverProcAddressQueryResult *st)
{
	enum cudaDriverEntryPointQueryResult q = cudaDriverEntryPointSymbolNotFound;
	cudaError_t e = cudaGetDriverEntryPointByVersion(sym, p, (unsigned)ver, flags, &q);
	*st = (CUdriverProcAddressQueryResult)q;
	return e == cudaSuccess ? CUDA_SUCCESS : CUDA_ERROR_INVALID_VALUE;
}

/* cudaGetDriverEntryPoint at the runtime's version: every hooked base name
 * must come back as a wrapper (the newest version of each is hooked). */
static unsigned long rt_unversioned(unsigned long *misses)
{
	unsigned long n = 0;
	for (size_t i = 0; i < NROWS; i++) {
		void *p = NULL;
		enum cudaDriverEntryPointQueryResult q;
		Dl_info di;
		if (i && !strcmp(rows[i].base, rows[i - 1].base))
			continue;
		if (cudaGetDriverEntryPoint(rows[i].base, &p, cudaEnableDefault, &q) != cudaSuccess || !p)
			continue;
		n++;
		if (!dladdr(p, &di) || !di.dli_fname || !strstr(di.dli_fname, "cgshim")) {
			(*misses)++;
			printf("MISS cudaGetDriverEntryPoint(%s): not the shim's\n", rows[i].base);
		}
	}
	return n;
}
#endif

/* Names the shim hooks at no version: answered with the driver's pointer. */
static const char *const unhooked[] = {"cuGetErrorString", "cuGetErrorName", "cuDriverGetVersion", "cuDeviceGetName"};

/* q asked again: the answer must not change. */
static int again(gpa_t gpa, const char *sym, int ver, cuuint64_t flags, CUresult rc, void *p,
		 CUdriverProcAddressQueryResult st)
{
	void *p2 = NULL;
	CUdriverProcAddressQueryResult st2 = CU_GET_PROC_ADDRESS_SYMBOL_NOT_FOUND;
	CUresult rc2 = gpa(sym, &p2, ver, flags, &st2);
	if (rc2 == rc && p2 == p && st2 == st)
		return 0;
	printf("MISS %s@%d flags %llu asked again: rc=%d status=%d %p, first rc=%d status=%d %p\n", sym, ver,
	       (unsigned long long)flags, (int)rc2, (int)st2, p2, (int)rc, (int)st, p);
	return 1;
}

int main(int argc, char **argv)
{
	int check = argc > 1 && !strcmp(argv[1], "--check");
	int twice = argc > 1 && !strcmp(argv[argc - 1], "--twice");
#ifdef VIA_RUNTIME
	gpa_t gpa = rt_gpa;
#else
	void *h = dlopen("libcuda.so.1", RTLD_NOW);
	gpa_t gpa = h ? (gpa_t)dlsym(h, "cuGetProcAddress_v2") : NULL;
#endif
	unsigned long checked = 0, misses = 0, offered = 0, unrouted = 0;
	static const unsigned flags_list[] = {0, CU_GET_PROC_ADDRESS_LEGACY_STREAM,
					      CU_GET_PROC_ADDRESS_PER_THREAD_DEFAULT_STREAM};
	if (!gpa) {
		printf("no cuGetProcAddress_v2\n");
		return 1;
	}
	for (size_t i = 0; i < NROWS; i++) {
		const struct row *r = &rows[i];
		if (r->twin)
			continue; /* asked through the plain row with the per-thread flag */
		for (int f = 0; f < 3; f++) {
			void *p = NULL;
			CUdriverProcAddressQueryResult st = CU_GET_PROC_ADDRESS_SYMBOL_NOT_FOUND;
			CUresult rc = gpa(r->base, &p, r->ver, flags_list[f], &st);
			Dl_info di;
			const char *mod = "-", *sym = "-";
			if (p && dladdr(p, &di)) {
				mod = di.dli_fname && strstr(di.dli_fname, "cgshim") ? "shim" : "driver";
				sym = di.dli_sname ? di.dli_sname : "?";
			}
			printf("%s %d %u: rc=%d status=%d %s:%s\n", r->base, r->ver, flags_list[f], (int)rc, (int)st,
			       mod, sym);
			if (twice)
				misses += (unsigned long)again(gpa, r->base, r->ver, flags_list[f], rc, p, st);
			if (!check || rc != CUDA_SUCCESS || !p)
				continue;
			const struct row *twin =
			    (flags_list[f] & CU_GET_PROC_ADDRESS_PER_THREAD_DEFAULT_STREAM) ? twin_of(r) : NULL;
			offered++;
			checked++;
			if (*r->hook && (!twin || *twin->hook)) {
				int ok = !strcmp(mod, "shim") &&
					 (!strcmp(sym, r->hook) || (twin && !strcmp(sym, twin->hook)));
				if (!ok) {
					misses++;
					printf("MISS %s@%d flags %u: got %s:%s, want shim:%s%s%s (%s)\n", r->base,
					       r->ver, flags_list[f], mod, sym, r->hook, twin ? " or shim:" : "",
					       twin ? twin->hook : "", r->pfn);
				}
			} else {
				unrouted++;
				if (!strcmp(mod, "shim")) {
					misses++;
					printf("MISS %s@%d flags %u: unrouted version answered by the shim (%s)\n",
					       r->base, r->ver, flags_list[f], sym);
				}
			}
		}
	}
	for (size_t i = 0; twice && i < sizeof unhooked / sizeof unhooked[0]; i++) {
		char name[64]; /* one buffer for every name: an answer is the name's, not the buffer's */
		void *p = NULL;
		CUdriverProcAddressQueryResult st = CU_GET_PROC_ADDRESS_SYMBOL_NOT_FOUND;
		CUresult rc;
		Dl_info di;
		snprintf(name, sizeof name, "%s", unhooked[i]);
		rc = gpa(name, &p, 12000, 0, &st);
		printf("%s 12000 0: rc=%d status=%d\n", name, (int)rc, (int)st);
		misses += (unsigned long)again(gpa, name, 12000, 0, rc, p, st);
		if (check && p && dladdr(p, &di) && di.dli_fname && strstr(di.dli_fname, "cgshim")) {
			misses++;
			printf("MISS %s: an unhooked name answered by the shim\n", name);
		}
	}
#ifdef VIA_RUNTIME
	if (check)
		checked += rt_unversioned(&misses);
#endif
	if (check)
		printf(
		    "%lu checked (%lu rows, %lu offered by the driver, %lu deliberately unrouted), %lu routing misses\n",
		    checked, (unsigned long)NROWS, offered, unrouted, misses);
	return misses ? 1 : 0;
}
