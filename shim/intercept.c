/*
 * shim/intercept.c -- the dlsym policy: which lookups get a wrapper.
 *
 * A lookup is redirected only when all of these hold (interposition.md 2.3):
 *   - the exact name is in hooks.def (a "cu[A-Z]" test is only a pre-filter);
 *   - the handle is libcuda.so.1's own handle (RTLD_DEFAULT, RTLD_NEXT and
 *     every other library's handle go to the real dlsym unchanged);
 *   - the caller is not libcuda itself;
 *   - the driver really has that name (otherwise the real dlsym answers
 *     NULL, as it would without us).
 * Everything else returns NULL here, and the entry stub tail-jumps to the
 * real dlsym with the caller's own return address.
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <errno.h>
#include <link.h>
#include <string.h>

#include "log.h"
#include "resolve.h"

void *cg_dlsym_policy(void *handle, const char *name, void *caller) CG_HIDDEN;

/* Sanitizer runtimes (ASan, TSan, UBSan) look up their interceptors' real
 * functions with dlsym(RTLD_NEXT, ...) from their own initialiser, before
 * they can run instrumented code: that lookup reaches this policy through
 * the exported stub. The entry and every check a foreign lookup meets up
 * to its rejection are therefore uninstrumented (CG_NO_SANITIZE) and call
 * nothing instrumented; only a "cu[A-Z]" name on a handle other than
 * RTLD_DEFAULT/RTLD_NEXT goes on to the instrumented part (by then every
 * runtime is up: such lookups come from the application or its libraries). */
static void *policy_cuda(void *handle, const char *name, void *caller);

CG_NO_SANITIZE void *cg_dlsym_policy(void *handle, const char *name, void *caller)
{
	cg_resolve_dlsym(); /* CG_NO_SANITIZE too */
	if (!name || name[0] != 'c' || name[1] != 'u' || name[2] < 'A' || name[2] > 'Z')
		return NULL;
	if (handle == RTLD_DEFAULT || handle == RTLD_NEXT)
		return NULL;
	return policy_cuda(handle, name, caller);
}

static void *policy_cuda(void *handle, const char *name, void *caller)
{
	int saved = errno;
	void *w = NULL;
	struct link_map *lm = NULL;
	Dl_info info;
	int st;

	st = atomic_load_explicit(&cg_state, memory_order_acquire);
	if (st == CG_OFF || st == CG_DEGRADED)
		goto out;
	if (cg_hook_by_name(name) < 0)
		goto out;
	/* Needs libcuda loaded; if it is not, this handle cannot be its. */
	if (!cg_driver_ok() || handle != cg_libcuda)
		goto out;
	if (dladdr1(caller, &info, (void **)&lm, RTLD_DL_LINKMAP) && lm == (struct link_map *)cg_libcuda)
		goto out;
	cg_ensure_init();
	w = cg_wrapper_by_name(name);
	if (w && cg_log_on(CG_L_DEBUG)) {
		struct cg_rec r;
		rec_begin(&r, CG_L_DEBUG, "call");
		rec_str(&r, "api", "dlsym");
		rec_str(&r, "sym", name);
		rec_bool(&r, "routed", 1);
		rec_end(&r);
	}
out:
	errno = saved;
	return w;
}
