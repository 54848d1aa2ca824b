/*
 * shim/nccl-lib.c -- find the process's libnccl and the definitions the
 * shim's NCCL exports hide (nccl-lib.h).
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <link.h>
#include <stddef.h>
#include <string.h>

#include "hot.h"
#include "module.h"
#include "nccl-lib.h"
#include "resolve.h"

static void *_Atomic nccl_h CG_HOT_DATA;

/* dlpi_adds of the last full scan that found no libnccl: while no object
 * was loaded since, the next question ends at the first object. */
static _Atomic unsigned long long nccl_scanned_adds CG_HOT_DATA = ~0ull;

/* A scan's state. path: where a found libnccl's name goes, NULL for the
 * first scan of a question, which only says whether one is loaded (and
 * keeps the caller's frame small: issue 36, every end of capture asks). */
struct nccl_find {
	char *path;
	int found, first;
	unsigned long long adds;
};

#define NCCL_PATH_MAX 512

/* Basename "libnccl.so" or "libnccl.so.<anything>". */
static int nccl_is_lib(const char *path)
{
	const char *b = strrchr(path, '/');
	b = b ? b + 1 : path;
	return !strncmp(b, "libnccl.so", 10) && (b[10] == 0 || b[10] == '.');
}

static CG_HOT int nccl_find_cb(struct dl_phdr_info *info, size_t size, void *arg)
{
	struct nccl_find *f = arg;
	if (f->first) {
		f->first = 0;
		f->adds = size >= offsetof(struct dl_phdr_info, dlpi_subs) ? info->dlpi_adds : ~0ull;
		if (f->adds != ~0ull && f->adds == atomic_load_explicit(&nccl_scanned_adds, memory_order_relaxed))
			return 1; /* nothing loaded since the last scan found none */
	}
	if (!info->dlpi_name || !info->dlpi_name[0] || !nccl_is_lib(info->dlpi_name) ||
	    strlen(info->dlpi_name) >= NCCL_PATH_MAX)
		return 0;
	if (f->path)
		strcpy(f->path, info->dlpi_name);
	f->found = 1;
	return 1;
}

/* In a forked child, where the loader's list may not be scanned
 * (cg_module_iterate), libnccl is asked of dlopen by its soname: one
 * loaded under another name after the fork goes unseen there. */
static CG_COLD void *nccl_handle_forked(void)
{
	void *none = NULL, *h = dlopen("libnccl.so.2", RTLD_NOW | RTLD_NOLOAD | RTLD_NODELETE);
	if (h && !atomic_compare_exchange_strong(&nccl_h, &none, h))
		dlclose(h);
	return atomic_load_explicit(&nccl_h, memory_order_acquire);
}

/* A libnccl was seen loaded: its name, by a second scan, and its handle. */
static CG_COLD void *nccl_handle_found(void)
{
	char path[NCCL_PATH_MAX];
	struct nccl_find f = {.path = path, .first = 0, .adds = ~0ull}; /* every object, whatever was loaded since */
	void *h;
	if (cg_module_iterate(nccl_find_cb, &f) < 0 || !f.found)
		return NULL; /* unloaded since the first scan */
	/* outside the iteration: dlopen takes the loader's other lock */
	h = dlopen(path, RTLD_NOW | RTLD_NOLOAD | RTLD_NODELETE);
	if (!h)
		return NULL;
	{
		void *none = NULL;
		if (!atomic_compare_exchange_strong(&nccl_h, &none, h))
			dlclose(h); /* another thread cached the same object: drop our reference */
	}
	return atomic_load_explicit(&nccl_h, memory_order_acquire);
}

CG_HOT void *cg_nccl_handle(void)
{
	struct nccl_find f = {.path = NULL, .first = 1, .adds = ~0ull};
	void *h = atomic_load_explicit(&nccl_h, memory_order_acquire);
	if (h)
		return h;
	if (CG_UNLIKELY(cg_module_iterate(nccl_find_cb, &f) < 0)) /* the loader's lock: not from a signal handler */
		return nccl_handle_forked();
	if (CG_LIKELY(!f.found)) {
		atomic_store_explicit(&nccl_scanned_adds, f.adds, memory_order_relaxed);
		return NULL;
	}
	return nccl_handle_found();
}

void *cg_nccl_next(const char *name)
{
	void *p, *h;
	cg_resolve_dlsym();
	if (!cg_real_dlsym)
		return NULL;
	/* called from the shim: RTLD_NEXT searches after the shim */
	p = cg_real_dlsym(RTLD_NEXT, name);
	if (p)
		return p;
	h = cg_nccl_handle();
	return h ? cg_real_dlsym(h, name) : NULL;
}

int cg_nccl_kernel_name(const char *name)
{
	return name && (strstr(name, "ncclDevKernel_") || strstr(name, "ncclKernel_"));
}
