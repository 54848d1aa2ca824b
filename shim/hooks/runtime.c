/*
 * shim/hooks/runtime.c -- exported cuda* wrappers (rt-hooks.def).
 *
 * ABI: cudaGraphInstantiate is (exec*, graph, errNode*, log, size) in 11.x
 * and (exec*, graph, flags) from 12.0; cudaGraphExecUpdate is (exec, graph,
 * errNode*, result*) in 11.x and (exec, graph, resultInfo*) from 12.0. The
 * wrappers take the longer form (extra register arguments are harmless on
 * x86-64 SysV) and forward the form of the loaded runtime's major version,
 * read once with its own cudaRuntimeGetVersion (no driver call).
 *
 * The wrapper sets cg_tls.via; a driver hook underneath writes the record
 * with "via" and marks it consumed. If the runtime failed before reaching
 * the driver, the wrapper writes the record itself.
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <errno.h>
#include <stdint.h>
#include <string.h>

#include "../call.h"
#include "../config.h"
#include "../emit.h"
#include "../hot.h"
#include "../init.h"
#include "exports.h"

typedef int rt_err;

/* The runtime's entry points (rt_sym) and whether the wrappers are on
 * (rt_active), in one table whose first cache line holds the flag and the
 * entries a capture loop calls each step (rt-hooks.def's first rows): a
 * loop's runtime call reads one line of its own (issue 36: the flag was a
 * line of cg_cfg, the entries spread over two). */
#define RTHOOK(name, cls, params, args, abi) RT_IDX_##name,
enum {
#include "../rt-hooks.def"
	RT_N
};
#undef RTHOOK

static struct {
	_Atomic int on; /* 0: not read yet; 1: CGSHIM_RUNTIME_HOOKS on; -1: off */
	void *fn[RT_N];
} rt_tab __attribute__((aligned(64)));

static int rt_major_cached CG_HOT_DATA;

static CG_HOT void *rt_sym(void **slot, const char *name)
{
	void *p = __atomic_load_n(slot, __ATOMIC_ACQUIRE);
	if (!p) {
		cg_resolve_dlsym();
		p = cg_real_dlsym ? cg_real_dlsym(RTLD_NEXT, name) : NULL;
		__atomic_store_n(slot, p, __ATOMIC_RELEASE);
	}
	return p;
}

static void rt_major_learn(void)
{
	int v = 0;
	cg_resolve_dlsym();
	rt_err (*ver)(int *) =
	    cg_real_dlsym ? (rt_err(*)(int *))cg_real_dlsym(RTLD_NEXT, "cudaRuntimeGetVersion") : NULL;
	if (ver && ver(&v) == 0 && v > 0)
		rt_major_cached = v / 1000;
	else
		rt_major_cached = 13;
}

static CG_HOT int rt_major(void)
{
	if (!rt_major_cached) /* before the wrapper takes the application's errno: kept */
		CG_KEEP_ERRNO(rt_major_learn());
	return rt_major_cached;
}

static CG_HOT int rt_active(void)
{
	int st = atomic_load_explicit(&cg_state, memory_order_acquire), on;
	if (st == CG_SETUP) {
		cg_ensure_init(cgh_wire);
		st = atomic_load_explicit(&cg_state, memory_order_acquire);
	}
	if (st != CG_READY)
		return 0;
	on = atomic_load_explicit(&rt_tab.on, memory_order_relaxed);
	if (CG_UNLIKELY(!on)) { /* the settings are read once, before READY */
		on = cg_cfg.runtime_hooks ? 1 : -1;
		atomic_store_explicit(&rt_tab.on, on, memory_order_relaxed);
	}
	return on > 0 && !cg_tls.in_shim;
}

struct rt_frame {
	const char *prev_via;
	int prev_consumed;
	uint64_t t0;
};

static CG_HOT void rt_enter(struct rt_frame *f, const char *name)
{
	cg_door_call(CG_DOOR_RUNTIME);
	f->prev_via = cg_tls.via;
	f->prev_consumed = cg_tls.via_consumed;
	/* The clock only when a record of this call could carry it: nearly
	 * every runtime call reaches a driver hook, which writes the record. */
	f->t0 = cg_log_on(CG_L_TRACE) ? cg_now_ns() : 0;
	cg_tls.via = name;
	cg_tls.via_consumed = 0;
}

/* The runtime call's own record, when no driver hook consumed it (rt_leave
 * asks). */
static void rt_leave_record(const struct rt_frame *f, const char *name, rt_err rc)
{
	int level = rc ? CG_L_INFO : CG_L_TRACE;
	if (cg_log_on(level)) {
		if (rc)
			cg_count_failure(-1, (CUresult)rc);
		emit_call(level,
			  &(struct ev_call){.api = name,
					    .rc = rc,
					    .has_rc = 1,
					    .err = rc ? cg_result_name(rc) : NULL,
					    .msg = rc ? "the runtime answered without reaching the driver" : NULL,
					    .dur_ns = f->t0 ? cg_now_ns() - f->t0 : 0,
					    .has_dur_ns = f->t0 != 0});
	}
}

static CG_HOT rt_err rt_leave(struct rt_frame *f, const char *name, rt_err rc)
{
	if (!cg_tls.via_consumed) /* errno kept only where a record may be written (issue 36) */
		CG_KEEP_ERRNO(rt_leave_record(f, name, rc));
	cg_tls.via = f->prev_via;
	cg_tls.via_consumed = f->prev_consumed;
	return rc;
}

#define RT_EXPORT __attribute__((visibility("default")))
#define RT_REAL(name, type) ((type)rt_sym(&rt_tab.fn[RT_IDX_##name], #name))
#define RT_MISSING 49 /* cudaErrorCallRequiresNewerDriver-like: no runtime to forward to */

/* Generic body: forward `call` with the real pointer `fn`. errno: the
 * runtime gets the application's value (the lookup and start-up may have
 * set it) and rt_leave restores what the runtime left. */
#define RT_BODY(name, type, call)                                                                                      \
	CG_ERRNO_IN;                                                                                                   \
	type fn = RT_REAL(name, type);                                                                                 \
	struct rt_frame f;                                                                                             \
	rt_err rc;                                                                                                     \
	if (!fn) {                                                                                                     \
		errno = cg_errno_in;                                                                                   \
		return 35; /* cudaErrorInsufficientDriver: no libcudart behind us */                                   \
	}                                                                                                              \
	if (!rt_active())                                                                                              \
		return CG_FWD(call);                                                                                   \
	rt_enter(&f, #name);                                                                                           \
	rc = CG_FWD(call);                                                                                             \
	return rt_leave(&f, #name, rc);

/* CUSTOM rows: the form forwarded depends on the runtime's major. Both
 * run every iteration of a capture (instantiate) or update loop: CG_HOT. */
CG_HOT RT_EXPORT rt_err cudaGraphInstantiate(void **exec, void *graph, void *a2, void *a3, size_t a4)
{
	typedef rt_err (*f5)(void **, void *, void *, void *, size_t);
	typedef rt_err (*f3)(void **, void *, unsigned long long);
	if (rt_major() < 12) {
		RT_BODY(cudaGraphInstantiate, f5, fn(exec, graph, a2, a3, a4))
	} else {
		RT_BODY(cudaGraphInstantiate, f3, fn(exec, graph, (unsigned long long)(uintptr_t)a2))
	}
}

CG_HOT RT_EXPORT rt_err cudaGraphExecUpdate(void *exec, void *graph, void *a2, void *a3)
{
	typedef rt_err (*f4)(void *, void *, void *, void *);
	typedef rt_err (*f3)(void *, void *, void *);
	if (rt_major() < 12) {
		RT_BODY(cudaGraphExecUpdate, f4, fn(exec, graph, a2, a3))
	} else {
		RT_BODY(cudaGraphExecUpdate, f3, fn(exec, graph, a2))
	}
}

/* The GEN rows of rt-hooks.def: forward the row's arguments as they came. */
#define RTHOOK_GEN(name, params, args)                                                                                 \
	RT_EXPORT rt_err name params                                                                                   \
	{                                                                                                              \
		typedef rt_err(*ft) params;                                                                            \
		RT_BODY(name, ft, fn args)                                                                             \
	}
#define RTHOOK_HOT(name, params, args) CG_HOT RTHOOK_GEN(name, params, args)
#define RTHOOK_CUSTOM(name, params, args)
#define RTHOOK(name, cls, params, args, abi) RTHOOK_##cls(name, params, args)
#include "../rt-hooks.def"
#undef RTHOOK

void *cg_rt_export(const char *name)
{
	static const struct {
		const char *name;
		void *fn;
	} tab[] = {
#define RTHOOK(n, cls, params, args, abi) {#n, (void *)n},
#include "../rt-hooks.def"
#undef RTHOOK
	};
	for (unsigned i = 0; i < sizeof tab / sizeof *tab; i++)
		if (!strcmp(name, tab[i].name))
			return tab[i].fn;
	return NULL;
}
