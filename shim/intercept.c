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

#include "doors.h"
#include "log.h"
#include "resolve.h"

void *cg_dlsym_policy(void *handle, const char *name, void *caller) CG_HIDDEN;

void *cg_dlsym_policy(void *handle, const char *name, void *caller)
{
	int saved = errno;
	void *w = NULL;
	struct link_map *lm = NULL;
	Dl_info info;
	int st;

	cg_resolve_dlsym();
	if (!name || name[0] != 'c' || name[1] != 'u' || name[2] < 'A' || name[2] > 'Z')
		goto out;
	if (handle == RTLD_DEFAULT || handle == RTLD_NEXT)
		goto out;
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
	if (!cg_ready())
		goto out;
	w = cg_wrapper_by_name(name);
	if (w)
		cg_door_routed(cg_hook_by_name(name), CG_DOOR_DLSYM);
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
