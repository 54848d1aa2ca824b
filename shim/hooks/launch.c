/*
 * shim/hooks/launch.c -- launch and upload: the hot path (CGS005, CGS019).
 * Private to shim/hooks/ (hooks.h): every wrapper forwards the caller's
 * arguments unchanged and returns the driver's result, except where the
 * user asked for a policy.
 */
#define _GNU_SOURCE
#include "../hot.h"
#include "hooks.h"

/* ======================================================================= */
/* launch and upload: the hot path                                         */
/* ======================================================================= */

static __attribute__((noinline, cold)) void launch_unfreed_violation(CUgraphExec e, const char *api, int unfreed)
{
	struct cg_verdict v;
	struct cg_mnode *mem = NULL;
	int n = model_exec_mnodes(e, &mem);
	struct cg_launch_ev ev = {e, unfreed, 0, mem, n};
	if (rules_instantiate_relaunch(&ev, &v))
		cg_verdict_write(&v, api, 0, 2);
	free(mem);
}

static __attribute__((noinline)) void launch_record_as(int hid, CUgraphExec e, CUstream s, CUresult rc, uint64_t t0,
						       long long n, int flags)
{
	struct cg_call c = {hid, flags, t0};
	struct cg_rec r;
	if (cg_call_rec(&r, &c, rc)) {
		rec_hex(&r, "exec", (uintptr_t)e);
		rec_hex(&r, "stream", (uintptr_t)s);
		if (n)
			rec_int(&r, "launch", n);
		rec_end(&r);
	}
}

/* A launch record at trace level (info when it fails). */
static void launch_record(int hid, CUgraphExec e, CUstream s, CUresult rc, uint64_t t0, long long n)
{
	launch_record_as(hid, e, s, rc, t0, n, 0);
}

/* The graph memory after an exec's first launch, per device. */
static __attribute__((noinline, cold)) void launch_graphmem(CUgraphExec e)
{
	struct ev_graphmem g[CG_MAX_DEV];
	int n = cg_model_graphmem("first_launch", e, g);
	for (int i = 0; i < n; i++)
		emit_graphmem(CG_L_INFO, &g[i]);
}

static __attribute__((noinline)) void launch_every(CUgraphExec e, long long n)
{
	emit_launches(CG_L_INFO, &(struct ev_launches){.exec = (uintptr_t)e, .count = n, .reason = "every"});
}

/* A launch the driver refused: the exec's count taken back, the record. */
static __attribute__((noinline, cold)) void launch_failed(int hid, struct cg_exec *x, CUgraphExec e, CUstream s,
							  CUresult rc, uint64_t t0, long long n)
{
	if (x)
		model_exec_launch_failed(x);
	launch_record(hid, e, s, rc, t0, n);
}

/* A launch worth a look: traced, an exec's first (it maps the graph's
 * memory), or every CGSHIM_LAUNCH_SUMMARY_EVERY-th. */
static __attribute__((noinline)) void launch_noted(int hid, CUgraphExec e, CUstream s, CUresult rc, uint64_t t0,
						   long long n, int trace)
{
	if (trace)
		launch_record(hid, e, s, rc, t0, n);
	if (n == 1) {
		model_mem_moved(); /* a first launch maps graph memory */
		launch_graphmem(e);
	}
	if (cg_cfg.launch_every && n % cg_cfg.launch_every == 0)
		launch_every(e, n);
}

/* Contract: no allocation, no lock, no driver call besides the launch on the
 * common path: one state load, one TLS load, a lock-free index probe and
 * relaxed atomics, one of them a locked add (the launch count). Inlined
 * into each wrapper, whose CG_REAL read errno: cg_errno_in is that value
 * (one errno lookup a launch, not two: issue 36). */
static CG_HOT inline __attribute__((always_inline)) CUresult launch_common(int hid, PFN_cuGraphLaunch_v10000 fn,
									   CUgraphExec e, CUstream s, int cg_errno_in)
{
	CUgraphExec real;
	struct cg_exec *x;
	long long n = 0;
	int unfreed = 0, autofree = 0, trace;
	uint64_t t0 = 0;
	CUresult rc;
	int st = atomic_load_explicit(&cg_state, memory_order_acquire);
	if (CG_UNLIKELY(st != CG_READY)) {
		if (st != CG_SETUP)
			return CG_FWD(fn(cg_policy_exec(e), s));
		cg_ensure_init(cgh_wire);
		if (!cg_ready())
			return CG_FWD(fn(cg_policy_exec(e), s));
	}
	if (CG_UNLIKELY(cg_tls.in_shim))
		return CG_FWD(fn(cg_policy_exec(e), s));
	trace = cg_log_on(CG_L_TRACE);
	if (CG_UNLIKELY(trace))
		t0 = cg_now_ns();
	x = model_exec_fast(e);
	/* The exec behind the application's handle, without a lock: the
	 * record carries it (it differs from e only after a rewrite). */
	real = x ? model_exec_real(x) : cg_policy_exec(e);
	if (CG_UNLIKELY(real != e) && CG_UNLIKELY(atomic_load_explicit(&cg_policy_pending, memory_order_relaxed)))
		cg_policy_launch_pending(e, s, hid == HID_cuGraphLaunch_ptsz);
	if (CG_LIKELY(x != NULL)) {
		n = model_exec_launched(x, &unfreed, &autofree);
		cg_work_graph(s, e, n); /* the dump's last work (doors.h): no clock */
		if (CG_UNLIKELY(unfreed && !autofree))
			launch_unfreed_violation(e, cg_routes[hid].name, unfreed);
	}
	int stale = cgh_ledger_launch(e, cg_routes[hid].name); /* CGS019: one relaxed load unless an exec is stale */
	rc = CG_FWD(fn(real, s));
	/* The launch a CGS019 announced: logged at info beside it. */
	if (CG_UNLIKELY(stale) && rc == CUDA_SUCCESS && !trace)
		CG_KEEP_ERRNO(launch_record_as(hid, e, s, rc, t0, n, CG_CALL_LIFE));
	if (CG_UNLIKELY(rc != CUDA_SUCCESS))
		CG_KEEP_ERRNO(launch_failed(hid, x, e, s, rc, t0, n));
	else if (CG_UNLIKELY(trace || n == 1 || (cg_cfg.launch_every && n % cg_cfg.launch_every == 0)))
		CG_KEEP_ERRNO(launch_noted(hid, e, s, rc, t0, n, trace));
	return rc;
}

CUresult cgh_cuGraphLaunch(CUgraphExec hGraphExec, CUstream hStream)
{
	CG_REAL(cuGraphLaunch);
	return launch_common(HID_cuGraphLaunch, real_cuGraphLaunch, hGraphExec, hStream, cg_errno_in);
}

CUresult cgh_cuGraphLaunch_ptsz(CUgraphExec hGraphExec, CUstream hStream)
{
	CG_REAL(cuGraphLaunch_ptsz);
	return launch_common(HID_cuGraphLaunch_ptsz, real_cuGraphLaunch_ptsz, hGraphExec, hStream, cg_errno_in);
}

static CUresult upload_common(int hid, PFN_cuGraphUpload_v11010 fn, CUgraphExec e, CUstream s)
{
	CG_ERRNO_IN; /* entered straight from the wrapper */
	struct cg_call c;
	CUresult rc;
	CUgraphExec real = cg_policy_exec(e);
	if (!cg_call_begin(&c, hid, 0))
		return CG_FWD(fn(real, s));
	model_mem_moved(); /* uploads map the graph's memory */
	int stale = cgh_ledger_launch(e, cg_routes[hid].name);
	CG_FWD_OUT(rc, fn(real, s));
	launch_record_as(hid, e, s, rc, c.t0, 0, stale ? CG_CALL_LIFE : 0);
	CG_RETURN(rc);
}

CUresult cgh_cuGraphUpload(CUgraphExec hGraphExec, CUstream hStream)
{
	CG_REAL(cuGraphUpload);
	return upload_common(HID_cuGraphUpload, real_cuGraphUpload, hGraphExec, hStream);
}

CUresult cgh_cuGraphUpload_ptsz(CUgraphExec hGraphExec, CUstream hStream)
{
	CG_REAL(cuGraphUpload_ptsz);
	return upload_common(HID_cuGraphUpload_ptsz, real_cuGraphUpload_ptsz, hGraphExec, hStream);
}
