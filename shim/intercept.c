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
 *
 * RTLD_DEFAULT lookups of the shim's own export names (hooks.def and
 * rt-hooks.def) are the one place where the shim's exports could be found
 * where the process has no such symbol: without the shim,
 * dlsym(RTLD_DEFAULT, "cudaGraphLaunch") in a process without libcudart is
 * NULL. When the real lookup would land on the shim's own export, the
 * answer is what follows the shim in the global search order
 * (dlsym(RTLD_NEXT) from here), which is what the process would get
 * without it:
 *   - shim off (CGSHIM_DISABLE=1): that definition, or NULL;
 *   - cuda* names: the wrapper when a libcudart follows (it forwards
 *     there), else NULL (the wrapper would have nothing to forward to);
 *   - cu* names with the shim on: the wrapper when a definition follows
 *     (the driver's, in the global scope), else NULL: a name the driver
 *     lacks (an older driver, the stand-in) is not found, as without the
 *     shim, rather than found and answering CUDA_ERROR_NOT_FOUND
 *     (issue 30).
 * nccl* names (nccl-hooks.def) follow the cuda* names' rule on
 * RTLD_DEFAULT: without a libnccl after the shim, NULL. On a libnccl's own
 * handle (dlopen("libnccl.so.2") then dlsym, as XLA's NCCL stub does) the
 * exact names get the shim's export, which forwards to that library, unless
 * the caller is libnccl itself or the shim is off.
 * NULL is given as CG_DLSYM_ABSENT, which the entry stub turns into a
 * NULL return without calling the real dlsym; the failed RTLD_NEXT lookup
 * has set dlerror. A libcudart visible only in a dlopen'ed library's local
 * scope is not seen by that lookup.
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <errno.h>
#include <link.h>
#include <string.h>

#include "doors.h"
#include "emit.h"
#include "hooks/exports.h"
#include "init.h"
#include "log.h"
#include "nccl-lib.h"
#include "resolve.h"

/* The dlsym call record's own fields (records.def, "call": EXT). */
static void dlsym_fields(struct cg_rec *r, const char *key, const void *name)
{
	(void)key;
	rec_str(r, "sym", name);
	rec_bool(r, "routed", 1);
}

void *cg_dlsym_policy(void *handle, const char *name, void *caller) CG_HIDDEN;

#define CG_DLSYM_ABSENT ((void *)-1) /* dlsym-entry.S: return NULL */

/* RTLD_DEFAULT lookup of name: NULL (let the real dlsym answer), a pointer
 * to return, or CG_DLSYM_ABSENT. See the contract above. */
static void *default_lookup(const char *name)
{
	int is_rt = name[2] == 'd' && name[3] == 'a';
	int st = atomic_load_explicit(&cg_state, memory_order_acquire);
	void *own, *next;
	if (is_rt)
		own = cg_rt_export(name);
	else {
		int hid = cg_hook_by_name(name);
		own = hid < 0 ? NULL : cg_hook_wrappers[hid];
	}
	if (!own || cg_real_dlsym(RTLD_DEFAULT, name) != own)
		return NULL; /* not ours, or defined before the shim: the real answer stands */
	next = cg_real_dlsym(RTLD_NEXT, name);
	if (st == CG_OFF)
		return next ? next : CG_DLSYM_ABSENT;
	return next ? NULL : CG_DLSYM_ABSENT;
}

/* Sanitizer runtimes (ASan, TSan, UBSan) look up their interceptors' real
 * functions with dlsym(RTLD_NEXT, ...) from their own initialiser, before
 * they can run instrumented code: that lookup reaches this policy through
 * the exported stub. The entry and every check a foreign lookup meets up
 * to its rejection are therefore uninstrumented (CG_NO_SANITIZE) and call
 * nothing instrumented; only a "cu" name on RTLD_DEFAULT or a "cu[A-Z]" name
 * on a library handle goes on to the instrumented part (by then every
 * runtime is up: such lookups come from the application or its libraries). */
static void *policy_cuda(void *handle, const char *name, void *caller);
static void *policy_nccl(void *handle, const char *name, void *caller);

CG_NO_SANITIZE void *cg_dlsym_policy(void *handle, const char *name, void *caller)
{
	cg_resolve_dlsym(); /* CG_NO_SANITIZE too */
	if (!name || !cg_real_dlsym || handle == RTLD_NEXT)
		return NULL;
	if (name[0] == 'n' && name[1] == 'c' && name[2] == 'c' && name[3] == 'l' && name[4] == 'C' && name[5] == 'o')
		return policy_nccl(handle, name, caller); /* ncclComm*: the application's lookups only */
	if (name[0] != 'c' || name[1] != 'u')
		return NULL;
	if (handle != RTLD_DEFAULT && (name[2] < 'A' || name[2] > 'Z'))
		return NULL;
	return policy_cuda(handle, name, caller);
}

static void *policy_cuda(void *handle, const char *name, void *caller)
{
	int saved = errno;
	void *w = NULL;
	struct link_map *lm = NULL;
	Dl_info info;
	int st, hid;

	if (handle == RTLD_DEFAULT) {
		w = default_lookup(name);
		goto out;
	}
	st = atomic_load_explicit(&cg_state, memory_order_acquire);
	if (st == CG_OFF || st == CG_DEGRADED)
		goto out;
	hid = cg_hook_by_name(name);
	if (hid < 0)
		goto out;
	/* Needs libcuda loaded; if it is not, this handle cannot be its. */
	if (!cg_driver_ok() || handle != cg_libcuda)
		goto out;
	if (dladdr1(caller, &info, (void **)&lm, RTLD_DL_LINKMAP) && lm == (struct link_map *)cg_libcuda)
		goto out;
	cg_ensure_init(cgh_wire);
	if (!cg_ready())
		goto out;
	if (*cg_routes[hid].real) { /* the driver has the name */
		w = cg_hook_wrappers[hid];
		cg_door_routed(hid, CG_DOOR_DLSYM);
	}
	if (w && cg_log_on(CG_L_DEBUG))
		emit_call(CG_L_DEBUG, &(struct ev_call){.api = "dlsym", .more = {dlsym_fields, name}});
out:
	errno = saved;
	return w;
}

/* nccl* names (the contract above). */
static void *policy_nccl(void *handle, const char *name, void *caller)
{
	int saved = errno;
	void *w = NULL, *own = cg_nccl_export(name), *h;
	struct link_map *lm = NULL;
	Dl_info info;
	int st = atomic_load_explicit(&cg_state, memory_order_acquire);
	if (!own)
		goto out;
	if (handle == RTLD_DEFAULT) {
		void *next;
		if (cg_real_dlsym(RTLD_DEFAULT, name) != own)
			goto out; /* defined before the shim: the real answer stands */
		next = cg_real_dlsym(RTLD_NEXT, name);
		w = st == CG_OFF ? (next ? next : CG_DLSYM_ABSENT) : (next ? NULL : CG_DLSYM_ABSENT);
		goto out;
	}
	if (st == CG_OFF || st == CG_DEGRADED || !(h = cg_nccl_handle()) || handle != h)
		goto out;
	if (dladdr1(caller, &info, (void **)&lm, RTLD_DL_LINKMAP) && lm == (struct link_map *)h)
		goto out;
	if (cg_nccl_next(name))
		w = own;
out:
	errno = saved;
	return w;
}
