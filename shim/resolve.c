/*
 * shim/resolve.c -- find the real driver entry points and route lookups.
 *
 * Real pointers are looked up by exact exported name with the real dlsym on
 * libcuda's own handle (never a guessed suffix). The routing table keyed on
 * the real address lets cuGetProcAddress substitution keep whatever ABI the
 * driver chose: the driver decides the variant, we only swap a pointer we
 * recognise for our wrapper of that same exported name.
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <errno.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "hot.h"
#include "locks.h"
#include "log.h"
#include "resolve.h"

#define HOOK(name, pfn, params, args, cls) pfn real_##name;
#include "hooks.def"
#undef HOOK

#define DRV(name, pfn) pfn drv_##name;
#include "driver-calls.def"
#undef DRV

/* The real entries of the hooks a steady capture, update or launch loop
 * calls every iteration, and the driver calls the shim makes there, with
 * the hot flags (hot.h CG_HOT_DATA): the section named on the definitions
 * above. */
#define HOT_PTR(var) extern __typeof__(var) var CG_HOT_DATA;
HOT_PTR(real_cuStreamBeginCapture_v2)
HOT_PTR(real_cuMemAllocAsync)
HOT_PTR(real_cuLaunchKernel)
HOT_PTR(real_cuMemFreeAsync)
HOT_PTR(real_cuStreamEndCapture)
HOT_PTR(real_cuGraphInstantiateWithFlags)
HOT_PTR(real_cuGraphExecDestroy)
HOT_PTR(real_cuGraphDestroy)
HOT_PTR(real_cuGraphExecUpdate_v2)
HOT_PTR(real_cuGraphLaunch)
HOT_PTR(real_cuGetProcAddress_v2)
HOT_PTR(real_cuStreamGetCaptureInfo_v3)
HOT_PTR(drv_cuGraphGetNodes)
HOT_PTR(drv_cuGraphGetId)
HOT_PTR(drv_cuGraphExecGetId)
HOT_PTR(drv_cuCtxGetDevice)
HOT_PTR(drv_cuGraphNodeGetType)
#undef HOT_PTR

const struct cg_route cg_routes[HID_COUNT] = {
#define HOOK(name, pfn, params, args, cls) {#name, (void **)&real_##name, CG_CLS_##cls},
#include "hooks.def"
#undef HOOK
};

void *(*cg_real_dlsym)(void *, const char *);
void *cg_libcuda;
_Atomic int cg_driver_resolved CG_HOT_DATA;

/* Sorted by name for cg_hook_by_name; sorted by real address after resolve. */
static short by_name[HID_COUNT];
static struct {
	void *real;
	short hid;
} by_real[HID_COUNT];
static int n_by_real;
static pthread_once_t name_once = PTHREAD_ONCE_INIT;

static int cmp_name(const void *a, const void *b)
{
	return strcmp(cg_routes[*(const short *)a].name, cg_routes[*(const short *)b].name);
}

static void sort_names(void)
{
	for (int i = 0; i < HID_COUNT; i++)
		by_name[i] = (short)i;
	qsort(by_name, HID_COUNT, sizeof by_name[0], cmp_name);
}

int cg_hook_by_name(const char *name)
{
	int lo = 0, hi = HID_COUNT - 1;
	pthread_once(&name_once, sort_names);
	while (lo <= hi) {
		int mid = (lo + hi) / 2;
		int c = strcmp(name, cg_routes[by_name[mid]].name);
		if (!c)
			return by_name[mid];
		if (c < 0)
			hi = mid - 1;
		else
			lo = mid + 1;
	}
	return -1;
}

/* CG_NO_SANITIZE: the dlsym entry calls it on every lookup, a sanitizer
 * runtime's start-up lookups included (intercept.c). */
CG_NO_SANITIZE void cg_resolve_dlsym(void)
{
	if (__atomic_load_n(&cg_real_dlsym, __ATOMIC_ACQUIRE))
		return;
	/* glibc >= 2.34 moved dlsym into libc under GLIBC_2.34; older symbol
	 * versions remain for old binaries. Never fall back to the public
	 * dlsym: it is our own hook. */
	void *p = dlvsym(RTLD_NEXT, "dlsym", "GLIBC_2.34");
	if (!p)
		p = dlvsym(RTLD_NEXT, "dlsym", "GLIBC_2.2.5");
	__atomic_store_n(&cg_real_dlsym, (void *(*)(void *, const char *))p, __ATOMIC_RELEASE);
}

static int cmp_real(const void *a, const void *b)
{
	const char *x = *(char *const *)a, *y = *(char *const *)b;
	return x < y ? -1 : x > y;
}

int cg_resolve_driver(void)
{
	void *h;
	if (atomic_load_explicit(&cg_driver_resolved, memory_order_acquire))
		return 0;
	pthread_mutex_lock(&resolve_lock);
	if (atomic_load_explicit(&cg_driver_resolved, memory_order_relaxed)) {
		pthread_mutex_unlock(&resolve_lock);
		return 0;
	}
	cg_resolve_dlsym();
	/* NOLOAD: we only attach to a driver the process already loaded (the
	 * app's dlopen or its -lcuda). NODELETE keeps it across an app dlclose,
	 * since we keep pointers into it. */
	h = dlopen("libcuda.so.1", RTLD_NOW | RTLD_NOLOAD | RTLD_NODELETE);
	if (!h) {
		pthread_mutex_unlock(&resolve_lock);
		return -1;
	}
	cg_libcuda = h;
	n_by_real = 0;
	for (int i = 0; i < HID_COUNT; i++) {
		void *p = cg_real_dlsym(h, cg_routes[i].name);
		*cg_routes[i].real = p;
		if (p) {
			by_real[n_by_real].real = p;
			by_real[n_by_real].hid = (short)i;
			n_by_real++;
		}
	}
#define DRV(name, pfn) drv_##name = (pfn)cg_real_dlsym(h, #name);
#include "driver-calls.def"
#undef DRV
	qsort(by_real, (size_t)n_by_real, sizeof by_real[0], cmp_real);
	atomic_store_explicit(&cg_driver_resolved, 1, memory_order_release);
	pthread_mutex_unlock(&resolve_lock);
	return 0;
}

int cg_hid_by_real(void *real)
{
	int lo = 0, hi = n_by_real - 1;
	while (lo <= hi) {
		int mid = (lo + hi) / 2;
		if (by_real[mid].real == real)
			return by_real[mid].hid;
		if ((char *)real < (char *)by_real[mid].real)
			hi = mid - 1;
		else
			lo = mid + 1;
	}
	return -1;
}

/* Hooked base names (every base with a row in getproc-versions.h), sorted
 * and unique, since the table is sorted by base. */
static const char *const hooked_bases[] = {
#define CG_VERSION(base, ver, twin, pfn, hook, reason) #base,
#include "getproc-versions.h"
#undef CG_VERSION
};

const char *cg_hooked_base(const char *name)
{
	int lo = 0, hi = (int)(sizeof hooked_bases / sizeof hooked_bases[0]) - 1;
	while (lo <= hi) {
		int mid = (lo + hi) / 2;
		int c = strcmp(name, hooked_bases[mid]);
		if (!c)
			return hooked_bases[mid];
		if (c < 0)
			hi = mid - 1;
		else
			lo = mid + 1;
	}
	return NULL;
}

const char *cg_launch_name(CUfunction f)
{
	const char *nm = NULL;
	int err = errno;
	CUresult rc = f && drv_cuFuncGetName ? drv_cuFuncGetName(&nm, f) : CUDA_ERROR_INVALID_HANDLE;
	if (rc == CUDA_ERROR_INVALID_HANDLE && f && drv_cuKernelGetName) {
		nm = NULL;
		rc = drv_cuKernelGetName(&nm, (CUkernel)(void *)f);
	}
	errno = err;
	return rc == CUDA_SUCCESS ? nm : NULL;
}
