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
#include "nccl-lib.h"
#include "resolve.h"

static void *_Atomic nccl_h;

/* dlpi_adds of the last full scan that found no libnccl: while no object
 * was loaded since, the next question ends at the first object. */
static _Atomic unsigned long long nccl_scanned_adds = ~0ull;

struct nccl_find {
	char path[512];
	int found, first;
	unsigned long long adds;
};

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
	    strlen(info->dlpi_name) >= sizeof f->path)
		return 0;
	strcpy(f->path, info->dlpi_name);
	f->found = 1;
	return 1;
}

/* Set in a forked child (cg_nccl_after_fork_child): there the loader's list
 * lock, which dl_iterate_phdr takes, stays held for good when another
 * thread of the parent held it at the fork (glibc resets only the lock
 * dlopen takes), so the child asks dlopen by the library's soname instead
 * of scanning: a libnccl loaded under another name after the fork goes
 * unseen there (tests/integration harm-fork_loader). */
static _Atomic int nccl_forked;

void cg_nccl_after_fork_child(void)
{
	atomic_store_explicit(&nccl_forked, 1, memory_order_relaxed);
}

static CG_COLD void *nccl_handle_forked(void)
{
	void *none = NULL, *h = dlopen("libnccl.so.2", RTLD_NOW | RTLD_NOLOAD | RTLD_NODELETE);
	if (h && !atomic_compare_exchange_strong(&nccl_h, &none, h))
		dlclose(h);
	return atomic_load_explicit(&nccl_h, memory_order_acquire);
}

CG_HOT void *cg_nccl_handle(void)
{
	struct nccl_find f;
	void *h = atomic_load_explicit(&nccl_h, memory_order_acquire);
	if (h)
		return h;
	if (CG_UNLIKELY(atomic_load_explicit(&nccl_forked, memory_order_relaxed)))
		return nccl_handle_forked();
	f.found = 0;
	f.first = 1;
	f.adds = ~0ull;
	dl_iterate_phdr(nccl_find_cb, &f); /* the loader's lock: not from a signal handler */
	if (!f.found) {
		atomic_store_explicit(&nccl_scanned_adds, f.adds, memory_order_relaxed);
		return NULL;
	}
	/* outside the iteration: dlopen takes the loader's other lock */
	h = dlopen(f.path, RTLD_NOW | RTLD_NOLOAD | RTLD_NODELETE);
	if (!h)
		return NULL;
	{
		void *none = NULL;
		if (!atomic_compare_exchange_strong(&nccl_h, &none, h))
			dlclose(h); /* another thread cached the same object: drop our reference */
	}
	return atomic_load_explicit(&nccl_h, memory_order_acquire);
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
