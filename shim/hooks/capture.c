/*
 * shim/hooks/capture.c -- stream capture: begin, end (CGS008, CGS016), event
 * record and wait (CGS015), stream and context synchronize (CGS007, CGS014).
 * Private to shim/hooks/ (hooks.h): every wrapper forwards the caller's
 * arguments unchanged and returns the driver's result, except where the
 * user asked for a policy.
 */
#define _GNU_SOURCE
#include "../hot.h"
#include "hooks.h"

/* ======================================================================= */
/* stream capture                                                          */
/* ======================================================================= */

static const char *mode_str(int m)
{
	return m == 0 ? "global" : m == 1 ? "thread_local" : m == 2 ? "relaxed" : "?";
}

/* Device of the calling context: the current pool of that device is what
 * cuMemAllocAsync will use during this capture. Learned before the capture
 * starts, so no query is needed inside it. */
static CG_HOT void learn_current_pool(void)
{
	int dev = cg_current_device(); /* no driver call once one device is known (devices.c) */
	CUmemoryPool p = NULL, d = NULL;
	if (model_device_pool(dev, NULL))
		return;
	if (real_cuDeviceGetDefaultMemPool && real_cuDeviceGetDefaultMemPool(&d, dev) == CUDA_SUCCESS)
		model_pool_seen(d, dev, 1);
	if (real_cuDeviceGetMemPool && real_cuDeviceGetMemPool(&p, dev) == CUDA_SUCCESS && p != d)
		model_device_set_pool(dev, p, 0);
}

/* First-use work of the begin-capture hook, done ahead of the first
 * capture (issue 19: the first begin paid ~140 us of it on an H100).
 * cg_call_begin calls this from any hooked call while cg_warm_pending is
 * set: stage 1 (site: unwinder, libgcc_s, Python reader) needs no driver;
 * stage 2 (the current device's pool queries, whose first call may set up
 * the driver's pool state, a first cuMemGetInfo, not counted against the
 * MEMINFO budget, the late exit handler and the thread's name) needs a
 * current context. Both run only while no
 * capture is live, so no driver call lands inside one; a stage that finds
 * a capture live, or no context, is left for a later call (the begin hook
 * itself does the same work on its own if none came). Never from
 * cuGetProcAddress (the runtime's start-up burst: no context yet, and the
 * shim's own lookups). Claimed with an exchange: one thread does each
 * stage. */
_Atomic int cg_warm_pending CG_HOT_DATA = 3; /* bit 0: stage 1, bit 1: stage 2 */

static void warm_stages(void)
{
	int st;
	CUdevice dev = 0;
	st = atomic_load_explicit(&cg_warm_pending, memory_order_relaxed);
	if ((st & 1) && (atomic_fetch_and(&cg_warm_pending, ~1) & 1))
		cg_site_warm();
	if ((st & 2) && drv_cuCtxGetDevice && drv_cuCtxGetDevice(&dev) == CUDA_SUCCESS && /* a context is current */
	    !atomic_load_explicit(&cg_live_captures, memory_order_relaxed) &&
	    (atomic_fetch_and(&cg_warm_pending, ~2) & 2)) {
		size_t fr, total;
		char tname[16];
		learn_current_pool();
		if (cg_cfg.meminfo != CG_MEMINFO_OFF && drv_cuMemGetInfo_v2)
			drv_cuMemGetInfo_v2(&fr, &total);
		cg_exit_register_late(); /* its first atexit: 3-5 us in the first begin on the H100 host */
		cg_thread_name(tname);	 /* the thread's first prctl: 3-4 us likewise */
	}
}

void cg_warm_capture(int hid)
{
	if (hid == HID_cuGetProcAddress || hid == HID_cuGetProcAddress_v2 ||
	    atomic_load_explicit(&cg_live_captures, memory_order_relaxed))
		return;
	CG_KEEP_ERRNO(warm_stages());
}

/* Between the driver's begin and the application's next call a Global
 * capture is live, and any other thread's capture-unsafe call (a pinned
 * host allocation, a cudaMalloc) breaks it: the shim keeps that window as
 * short as the driver's. Everything that costs more than a few
 * microseconds runs before the real call (site with its backtrace and
 * Python frames, first-use init, pool lookup, memory sample, exit handler,
 * the capture's table entry); after it only the capture-safe capture-info
 * query and one table insert. The begin's call record is deferred to the
 * end of the capture (model_capture_begin), its post_ns measuring the
 * window the hook added. */
/* Whether a capture's end walks its graph (end_capture_common): a program
 * that updates executables gets its graphs walked there, off the update's
 * path; with a libnccl loaded the walk names the graph's NCCL kernels; at
 * debug level its nodes are written. nccl: whether a libnccl was loaded
 * before the real end call (-1: not asked), the same answer for the
 * graph's kernels (each launched before that call, from a library loaded
 * by then); cg_nccl_loaded asks the loader (~8 cache lines, issue 36). */
static int summary_wanted(int nccl)
{
	return cg_log_on(CG_L_DEBUG) || atomic_load_explicit(&cgh_updates_seen, memory_order_relaxed) ||
	       (nccl < 0 ? cg_nccl_loaded() : nccl);
}

/* A refused begin: no capture is live on this stream from this call. The
 * one it is in already (CGS023) goes on: abandoned only if known broken.
 * Out of line (issue 36): a steady capture loop never comes here, and the
 * record's 4 KB buffer stays out of begin_post's frame. */
static CG_COLD void begin_refused(struct cg_call *c, CUresult rc, CUstream s, int mode, int ptsz, CUgraph into,
				  uint32_t site, int asked, int nested, uint64_t id)
{
	struct cg_rec r;
	if (nested != 1)
		model_capture_begin_refused(s, ptsz, cg_routes[c->hid].name, rc);
	if (cg_call_rec(&r, c, rc)) {
		rec_hex(&r, "stream", (uintptr_t)s);
		rec_word(&r, "mode", mode_str(mode));
		if (asked != mode)
			rec_word(&r, "asked_mode", mode_str(asked));
		rec_u64(&r, "capture", id);
		rec_hex(&r, "graph", (uintptr_t)into);
		rec_site(&r, "site", site);
		rec_end(&r);
	}
}

static CG_HOT CUresult begin_post(struct cg_call *c, CUresult rc, CUstream s, int mode, int ptsz, CUgraph into,
				  uint32_t site, int asked, int nested)
{
	CUstreamCaptureStatus st = CU_STREAM_CAPTURE_STATUS_NONE;
	cuuint64_t id = 0;
	CUgraph g = NULL;
	CG_ERRNO_OUT; /* entered right after the driver's begin */
	cg_call_mark_out(c);
	if (CG_LIKELY(rc == CUDA_SUCCESS)) {
		if (ptsz && drv_cuStreamGetCaptureInfo_v3_ptsz)
			drv_cuStreamGetCaptureInfo_v3_ptsz(s, &st, &id, &g, NULL, NULL, NULL);
		else if (drv_cuStreamGetCaptureInfo_v3)
			drv_cuStreamGetCaptureInfo_v3(s, &st, &id, &g, NULL, NULL, NULL);
		if (cg_tls.via) {
			cg_tls.via_consumed = 1;
			cg_tls.via_rc = rc;
		}
		model_capture_begin(id, s, mode, ptsz, into, site, c, cg_tls.via, g);
		/* The launches described as they come when the end will want the
		 * graph's summary (below, end_capture_common: updates seen, debug;
		 * a libnccl alone is not asked here, ~90 instructions), so it asks
		 * the driver nothing a node (nodes.h nodes_launch_take). Into a
		 * graph of nodes already there: walked. */
		if (id && !into && model_tally.cap == id &&
		    (atomic_load_explicit(&cgh_updates_seen, memory_order_relaxed) || cg_log_on(CG_L_DEBUG)))
			model_tally.rec = nodes_launch_begin(id);
		CG_RETURN(rc);
	}
	begin_refused(c, rc, s, mode, ptsz, into, site, asked, nested, id);
	CG_RETURN(rc);
}

/* CGSHIM_CAPTURE_MODE (issue 14 point 5): the mode a begin-capture is
 * given. Only ever loosened: thread_local turns a global capture
 * thread-local (another thread's unsafe call, a pinned-allocation thread,
 * no longer breaks it), relaxed turns global and thread-local captures
 * relaxed; a mode already as loose as asked is kept. A rewrite is recorded
 * ("capture_mode") before the call, out of the capture's window. */
static int capture_mode_use(int asked)
{
	return cg_decide(CG_ASK_CAPTURE_MODE, asked, 0).mode;
}

static CG_COLD void capture_mode_record(int hid, CUstream s, int asked, int use, uint32_t site)
{
	emit_capture_mode(CG_L_INFO, &(struct ev_capture_mode){.api = cg_routes[hid].name,
							       .stream = (uintptr_t)s,
							       .asked = mode_str(asked),
							       .mode = mode_str(use),
							       .why = "CGSHIM_CAPTURE_MODE",
							       .site = site});
}

/* Whether s is a blocking stream (the legacy stream joins a capture on it:
 * CGS014). Asked before the begin, so no capture of this call is live; but
 * s may be in another capture already (a nested begin, CGS023), and
 * cuStreamGetFlags on a capturing stream answers 900 and invalidates that
 * capture (measured on the H200, driver 580: the end then answered 901
 * where bare it answers 0). So: never for a stream the model has in a
 * capture (nested), never for the legacy stream (a begin there is refused
 * anyway), and while any capture is live, only after the driver says s is
 * not capturing (cuStreamGetCaptureInfo on a non-legacy stream is safe:
 * measured likewise). A capture the shim never saw begin, with none it
 * knows live, is the one case still asked blind. */
/* The answers, per thread (a per-thread default stream is the thread's
 * own): a stream's flags never change, and a hooked stream destroy moves
 * stream_gen, which empties every thread's cache, so a handle handed out
 * again is asked again. A begin loop on one stream then asks nothing. */
#define SB_CACHE 4
static _Atomic unsigned stream_gen CG_HOT_DATA = 1; /* 0 only after a wrap: then nothing is kept */
static CG_TLS struct {
	CUstream s;
	unsigned gen;
	int ptsz, blocking;
} sb_cache[SB_CACHE];
static CG_TLS unsigned sb_next;

static int stream_blocking_asked(CUstream s, int ptsz)
{
	unsigned flags = 0;
	PFN_cuStreamGetFlags_v5050 f = ptsz ? drv_cuStreamGetFlags_ptsz : drv_cuStreamGetFlags;
	if (atomic_load_explicit(&cg_live_captures, memory_order_relaxed)) {
		CUstreamCaptureStatus st = CU_STREAM_CAPTURE_STATUS_ACTIVE;
		CUresult q = CUDA_ERROR_NOT_SUPPORTED;
		if (ptsz && drv_cuStreamGetCaptureInfo_v3_ptsz)
			q = drv_cuStreamGetCaptureInfo_v3_ptsz(s, &st, NULL, NULL, NULL, NULL, NULL);
		else if (!ptsz && drv_cuStreamGetCaptureInfo_v3)
			q = drv_cuStreamGetCaptureInfo_v3(s, &st, NULL, NULL, NULL, NULL, NULL);
		if (q != CUDA_SUCCESS || st != CU_STREAM_CAPTURE_STATUS_NONE)
			return -1; /* unknown: no CGS014 prediction for it */
	}
	if (!f || f(s, &flags) != CUDA_SUCCESS)
		return -1; /* unknown: no CGS014 prediction for it */
	return !(flags & CU_STREAM_NON_BLOCKING);
}

static CG_HOT int stream_blocking(CUstream s, int ptsz, int nested)
{
	unsigned gen = atomic_load_explicit(&stream_gen, memory_order_acquire);
	int b;
	if (nested || cg_caprule_is_legacy(s, ptsz))
		return 0;
	for (int i = 0; i < SB_CACHE; i++)
		if (sb_cache[i].s == s && sb_cache[i].gen == gen && sb_cache[i].ptsz == ptsz && gen)
			return sb_cache[i].blocking;
	b = stream_blocking_asked(s, ptsz);
	if (b < 0)
		return 0;
	if (gen) { /* 0: the cache's empty slots */
		unsigned k = sb_next++ % SB_CACHE;
		sb_cache[k].s = s, sb_cache[k].gen = gen, sb_cache[k].ptsz = ptsz, sb_cache[k].blocking = b;
	}
	return b;
}

/* CGS023, before a begin: s is in a live capture already (begun on it, or
 * joined): named, and 1 (2: that capture is known broken). Asked only while a capture is live, never about
 * the legacy stream (a begin there is refused anyway, and asking about it
 * while a blocking stream captures answers 906). */
static CG_HOT int begin_on_capturing(int hid, CUstream s, int ptsz)
{
	uint64_t id = 0;
	if (cg_caprule_is_legacy(s, ptsz) || !model_stream_capture(s, ptsz, &id, NULL, NULL))
		return 0;
	return cg_caprule_begin_capturing(cg_routes[hid].name, id, s);
}

static CG_COLD void begin_nested_after(int hid, CUresult rc)
{
	cg_caprule_after(cg_routes[hid].name, R_BEGIN_CAPTURING, CUDA_ERROR_ILLEGAL_STATE, rc);
}

/* The late exit handler (init.c), once a capture begins: registered by the
 * warm-up's stage 2 (warm_stages) or an earlier begin; only a begin before
 * that registration has returned asks pthread_once (issue 36: its control
 * word and the call were lines of every begin). Not the warm-up's bit: it
 * is cleared before stage 2 registers, and a begin in between (another
 * thread, or a child forked then) must still see the handler registered
 * when it goes on (the session's review). The flag is in the hot data. */
static CG_HOT void begin_exit_late(void)
{
	if (CG_UNLIKELY(!cg_exit_late_done()))
		cg_exit_register_late();
}

/* The modeless cuStreamBeginCapture (always global) begun with another mode:
 * through cuStreamBeginCapture_v2 (the same driver entry with a mode);
 * without it (a driver older than 10.1) the capture is left global. */
static CG_COLD CUresult begin_v1_as(int ptsz, CUstream s, int use, int *used)
{
	PFN_cuStreamBeginCapture_v10010 f = ptsz ? real_cuStreamBeginCapture_v2_ptsz : real_cuStreamBeginCapture_v2;
	if (!f) {
		*used = CU_STREAM_CAPTURE_MODE_GLOBAL;
		return ptsz ? real_cuStreamBeginCapture_ptsz(s) : real_cuStreamBeginCapture(s);
	}
	return f(s, (CUstreamCaptureMode)use);
}

/* rw_call: the call with the mode replaced by `use` (a CGSHIM_CAPTURE_MODE
 * rewrite; `used` may say the rewrite could not be made). */
#define BEGIN_CAPTURE(name, ptsz, params, args, mode_expr, into_expr, rw_call)                                         \
	CG_HOT CUresult cgh_##name params                                                                              \
	{                                                                                                              \
		struct cg_call c;                                                                                      \
		uint32_t site;                                                                                         \
		CUresult rc;                                                                                           \
		int asked, use, used, nested;                                                                          \
		CG_REAL(name);                                                                                         \
		if (!cg_call_begin(&c, HID_##name, CG_CALL_LIFE))                                                      \
			return CG_FWD(real_##name args);                                                               \
		nested = begin_on_capturing(HID_##name, hStream, ptsz); /* CGS023 */                                   \
		site = cg_site_here_deferred(SITE_SKIP);                                                               \
		asked = (int)(mode_expr);                                                                              \
		used = use = capture_mode_use(asked);                                                                  \
		cg_policy_collect();                                                                                   \
		learn_current_pool();                                                                                  \
		model_capture_presample(site, hStream);                                                                \
		model_capture_prepare_blocking(stream_blocking(hStream, ptsz, nested));                                \
		begin_exit_late();                                                                                     \
		if (use != asked)                                                                                      \
			capture_mode_record(HID_##name, hStream, asked, use, site);                                    \
		cg_call_mark_in(&c);                                                                                   \
		rc = use == asked ? CG_FWD(real_##name args) : CG_FWD(rw_call);                                        \
		if (nested)                                                                                            \
			begin_nested_after(HID_##name, rc);                                                            \
		return begin_post(&c, rc, hStream, used, ptsz, into_expr, site, asked, nested);                        \
	}
BEGIN_CAPTURE(cuStreamBeginCapture, 0, (CUstream hStream), (hStream), CU_STREAM_CAPTURE_MODE_GLOBAL, NULL,
	      begin_v1_as(0, hStream, use, &used))
BEGIN_CAPTURE(cuStreamBeginCapture_ptsz, 1, (CUstream hStream), (hStream), CU_STREAM_CAPTURE_MODE_GLOBAL, NULL,
	      begin_v1_as(1, hStream, use, &used))
BEGIN_CAPTURE(cuStreamBeginCapture_v2, 0, (CUstream hStream, CUstreamCaptureMode mode), (hStream, mode), mode, NULL,
	      real_cuStreamBeginCapture_v2(hStream, (CUstreamCaptureMode)use))
BEGIN_CAPTURE(cuStreamBeginCapture_v2_ptsz, 1, (CUstream hStream, CUstreamCaptureMode mode), (hStream, mode), mode,
	      NULL, real_cuStreamBeginCapture_v2_ptsz(hStream, (CUstreamCaptureMode)use))
BEGIN_CAPTURE(cuStreamBeginCaptureToGraph, 0,
	      (CUstream hStream, CUgraph hGraph, const CUgraphNode *dependencies, const CUgraphEdgeData *dependencyData,
	       size_t numDependencies, CUstreamCaptureMode mode),
	      (hStream, hGraph, dependencies, dependencyData, numDependencies, mode), mode, hGraph,
	      real_cuStreamBeginCaptureToGraph(hStream, hGraph, dependencies, dependencyData, numDependencies,
					       (CUstreamCaptureMode)use))
BEGIN_CAPTURE(cuStreamBeginCaptureToGraph_ptsz, 1,
	      (CUstream hStream, CUgraph hGraph, const CUgraphNode *dependencies, const CUgraphEdgeData *dependencyData,
	       size_t numDependencies, CUstreamCaptureMode mode),
	      (hStream, hGraph, dependencies, dependencyData, numDependencies, mode), mode, hGraph,
	      real_cuStreamBeginCaptureToGraph_ptsz(hStream, hGraph, dependencies, dependencyData, numDependencies,
						    (CUstreamCaptureMode)use))

/* Whether s captures nothing, as the driver says (asked only on the way to
 * a refusal: the model found no capture on s). Never for the legacy
 * stream: asking about it while a blocking capture is live answers 906. */
int cgh_stream_captures_nothing(CUstream s, int ptsz)
{
	CUstreamCaptureStatus st = CU_STREAM_CAPTURE_STATUS_ACTIVE;
	PFN_cuStreamGetCaptureInfo_v12030 f = ptsz ? drv_cuStreamGetCaptureInfo_v3_ptsz : drv_cuStreamGetCaptureInfo_v3;
	if (cg_caprule_is_legacy(s, ptsz) || !f)
		return 0;
	return f(s, &st, NULL, NULL, NULL, NULL, NULL) == CUDA_SUCCESS && st == CU_STREAM_CAPTURE_STATUS_NONE;
}

/* Re-capture churn (issue 32, model.h): the new graph's fingerprint when
 * its site may capture it again, counted per site; CGS026 at the
 * threshold. */
struct churn_step {
	int on, walk, set; /* set: the graph's entry set already (model_graph_captured) */
	uint64_t cheap;
	uint32_t idx;
};

static void churn_before(struct churn_step *ch, const struct model_cap_end *ce, size_t n, long kernels, uint64_t th)
{
	ch->on = ce->key && cg_churn_threshold > 0;
	if (!ch->on)
		return;
	/* cheap: the capture as this thread's tally saw it, when it saw it
	 * whole (every node of the graph from the hooks) */
	if (n && th && kernels >= 0)
		ch->cheap = cg_mix64(cg_mix64(cg_mix64(th, n), (uint64_t)kernels), (uint64_t)ce->n_alloc) | 1;
	ch->walk = !model_churn_again(ce, ch->cheap, &ch->idx);
}

/* The graph's churn entry when the count took it (no walk), for
 * model_graph_captured to set in its lock hold. */
static uint32_t churn_counted(struct churn_step *ch)
{
	ch->set = ch->on && !ch->walk;
	return ch->set ? ch->idx : 0;
}

/* A capture churn walks (the summary when one was walked anyway, else a
 * walk of its own): counted, CGS026 at the threshold. Its verdict (1 KB)
 * in this frame: a capture the count took already (churn_after) calls
 * nothing below it (issue 36). */
static CG_HOT __attribute__((noinline)) int churn_walked(struct churn_step *ch, const struct model_cap_end *ce,
							 CUgraph g, const struct cg_summary *sum, int hid)
{
	const char *api = cg_routes[hid].name; /* its line read only here */
	struct model_churn_fp fp = {0};
	struct model_churn_view v;
	struct cg_verdict vd;
	int fire = 0;
	struct cg_summary *own = sum ? NULL : model_graph_churn_walk(g);
	model_churn_fp_of(sum ? sum : own, &fp);
	model_summary_free(own);
	fp.cheap = ch->cheap;
	ch->idx = model_churn_capture(ce, &fp, cg_churn_threshold, &fire, &v);
	if (ch->idx)
		model_graph_churn_set(g, ch->idx);
	if (!fire || !rules_capture_again(&v, g, &vd))
		return 0;
	cg_verdict_write(&vd, api, 0, SITE_SKIP + 2);
	return 1;
}

/* Inlined: churn_walked's frame stands where churn_after's stood (the
 * verdict's site skip). */
static CG_HOT inline __attribute__((always_inline)) int
churn_after(struct churn_step *ch, const struct model_cap_end *ce, CUgraph g, const struct cg_summary *sum, int hid)
{
	if (!ch->on)
		return 0;
	if (ch->walk)
		return churn_walked(ch, ce, g, sum, hid);
	if (ch->idx && !ch->set)
		model_graph_churn_set(g, ch->idx);
	return 0;
}

/* The end's rare branches (issue 36), out of line so the hot path of
 * end_capture_common is contiguous and its frame small. An end the rules
 * named before the call: CGS022 (903) on a capturing stream, CGS021 on one
 * capturing nothing. The call is forwarded and checked against the
 * prediction; errno as the driver left it. */
static CG_COLD CUresult end_named_refused(struct cg_call *c, int hid, PFN_cuStreamEndCapture_v10000 fn, CUstream s,
					  CUgraph *ph, int errno_in, int capturing, uint64_t id)
{
	const int cg_errno_in = errno_in;
	CUresult rc;
	int rule = capturing ? R_END_UNMATCHED : R_END_NOT_CAPTURING;
	int want = capturing ? CUDA_ERROR_STREAM_CAPTURE_UNMATCHED : CUDA_ERROR_ILLEGAL_STATE;
	cg_call_mark_in(c);
	CG_FWD_OUT(rc, fn(s, ph));
	cg_call_mark_out(c);
	cg_caprule_after(cg_routes[hid].name, rule, want, rc);
	/* The 903 invalidates the capture, which goes on (its origin's
	 * end answers 901, CuPy's test_stream_capture_failure2). */
	if (capturing && rc == CUDA_ERROR_STREAM_CAPTURE_UNMATCHED)
		model_capture_invalidate(id, cg_routes[hid].name, 0);
	else if (capturing && rc == CUDA_SUCCESS)
		model_capture_end(id, s, *ph, rc);
	cg_call_end(c, rc);
	CG_RETURN(rc);
}

/* CGS016 (908): the end from a thread other than the begin's. */
static CG_COLD CUresult end_wrong_thread(struct cg_call *c, int hid, PFN_cuStreamEndCapture_v10000 fn, CUstream s,
					 CUgraph *ph, int errno_in, uint64_t id)
{
	const int cg_errno_in = errno_in;
	CUresult rc;
	cg_call_mark_in(c);
	CG_FWD_OUT(rc, fn(s, ph));
	cg_call_mark_out(c);
	cg_caprule_after(cg_routes[hid].name, R_END_WRONG_THREAD, CUDA_ERROR_STREAM_CAPTURE_WRONG_THREAD, rc);
	/* Either way the capture is over: success ends it, and the 908
	 * ends it too (measured on the H100, docs/capture-map.md). */
	if (rc == CUDA_SUCCESS || rc == CUDA_ERROR_STREAM_CAPTURE_WRONG_THREAD)
		model_capture_end(id, s, rc == CUDA_SUCCESS && ph ? *ph : NULL, rc);
	cg_call_end(c, rc);
	CG_RETURN(rc);
}

/* The stream model's suspects (n of them in un, unsite), confirmed by the
 * driver's own view of the forks (joins.c) before anything is named. */
static CG_COLD void end_unjoined(int hid, uint64_t id, CUstream s, int ptsz, CUstream *un, uint32_t *unsite, int n)
{
	struct cg_capture_view cv;
	struct cg_verdict v;
	int found;
	if ((n = model_capture_confirm_unjoined(id, s, ptsz, un, unsite, n)) <= 0)
		return;
	found = model_capture_find(id, &cv);
	if (rules_capture_unjoined(id, s, un, unsite, n, found ? &cv : NULL, &v))
		cg_verdict_write(&v, cg_routes[hid].name, 0, SITE_SKIP + 1);
	/* the end's 904 links back to the first unjoined fork's site */
	model_capture_breaker(id, cg_routes[hid].name, cg_rule_id(R_UNJOINED), CUDA_ERROR_STREAM_CAPTURE_UNJOINED,
			      unsite[0]);
}

/* A capture with forks, not known broken, at its end: the stream model's
 * suspects (named by end_unjoined). Whether it is found still, its view
 * cv again after, its breaker set. The suspects' lists in this frame, not
 * in end_capture_common's: an end without forks never enters it. */
static __attribute__((noinline)) int end_forks(int hid, uint64_t id, CUstream s, int ptsz, struct cg_capture_view *cv)
{
	CUstream un[CG_MAX_JOIN];
	uint32_t unsite[CG_MAX_JOIN];
	int n = model_capture_unjoined(id, un, unsite, CG_MAX_JOIN);
	if (CG_LIKELY(n <= 0))
		return 1;
	end_unjoined(hid, id, s, ptsz, un, unsite, n);
	return model_capture_find(id, cv);
}

/* The end's call record, once cg_call_rec_wanted said it is written (a
 * repeat's is only counted, without entering this frame): its 4 KB buffer
 * in this frame, not in end_capture_common's. */
static CG_HOT __attribute__((noinline)) void end_record(struct cg_call *c, CUresult rc, CUstream s, uint64_t id,
							CUgraph g, int have_counts, size_t n, uint32_t n_alloc,
							uint32_t n_free, const struct cg_summary *sum, int nccl)
{
	struct cg_rec r;
	if (!cg_call_rec_open(&r, c, rc))
		return;
	rec_hex(&r, "stream", (uintptr_t)s);
	rec_u64(&r, "capture", id);
	rec_hex(&r, "graph", (uintptr_t)g);
	if (have_counts) {
		rec_int(&r, "nodes", (long long)n);
		rec_int(&r, "alloc_nodes", n_alloc);
		rec_int(&r, "free_nodes", n_free);
	}
	if (sum) {
		rec_hex(&r, "fp", model_nccl_fp(sum));
		if (nccl)
			rec_int(&r, "nccl", nccl);
	}
	rec_end(&r);
}

static CG_HOT CUresult end_capture_common(int hid, PFN_cuStreamEndCapture_v10000 fn, int ptsz, CUstream s, CUgraph *ph)
{
	CG_ERRNO_IN; /* entered straight from the wrapper */
	struct cg_call c;
	uint64_t id = 0;
	CUgraph g0 = NULL;
	CUresult rc;
	int capturing;
	struct cg_capture_view cv;
	int found = 0;
	if (!cg_call_begin(&c, hid, CG_CALL_LIFE))
		return CG_FWD(fn(s, ph));
	capturing = model_stream_capture(s, ptsz, &id, &g0, NULL);
	/* The capture's view, found once for every check below (issue 36:
	 * each found it again, five lock round trips an end). */
	if (capturing && id)
		found = model_capture_find(id, &cv);
	/* CGS022 and CGS016 are asked only of a capture found and ended on
	 * another stream, from another thread (each rule's own first test,
	 * rules/capture.c): their checks' 1 KB verdict frames, and the calls
	 * below them, stay off a steady end's stack (issue 36). */
	if (CG_UNLIKELY(ph &&
			(capturing ? found && cv.stream != s &&
					 cg_caprule_end_unmatched(cg_routes[hid].name, id, s, &cv) /* CGS022: 903 */
				   : cgh_stream_captures_nothing(s, ptsz) &&
					 cg_caprule_end_none(cg_routes[hid].name, s)))) /* CGS021 */
		return end_named_refused(&c, hid, fn, s, ph, cg_errno_in, capturing, id);
	if (CG_UNLIKELY(capturing && found && cv.tid != cg_gettid() &&
			cg_caprule_end_thread(cg_routes[hid].name, id, s, &cv))) /* CGS016: 908 */
		return end_wrong_thread(&c, hid, fn, s, ph, cg_errno_in, id);
	/* the stream model's suspects (a broken capture's end answers 901
	 * whatever its forks), confirmed before anything is named; the view
	 * again after, its breaker set */
	if (found && !cv.broken && cv.forks)
		found = end_forks(hid, id, s, ptsz, &cv);
	/* CGS025 needs the capture as it was: found only when kernels escaped */
	int escaped = capturing && CG_UNLIKELY(cgh_escaped(id)) && found;
	/* NCCL work is listed with its capture's begin site (model/nccl.c) */
	uint32_t begin_site = 0;
	int nccl_lib = capturing ? cg_nccl_loaded() : -1;
	if (CG_UNLIKELY(nccl_lib > 0) && found)
		begin_site = cv.site;
	cg_call_mark_in(&c);
	CG_FWD_OUT(rc, fn(s, ph));
	cg_call_mark_out(&c);
	{
		CUgraph g = rc == CUDA_SUCCESS && ph ? *ph : NULL;
		if (CG_UNLIKELY(escaped))
			cgh_escape_end(id, &cv, g);
		struct cg_summary *sum = NULL;
		int nccl = 0, have_counts = 0, repeat = 0;
		uint32_t n_alloc = 0, n_free = 0;
		size_t n = 0;
		uint64_t th = model_tally_hash(id);
		int logged = id && model_tally.cap == id && model_tally.rec;
		long kernels = model_tally_take(id);
		struct model_cap_end ce = {0};
		struct churn_step ch = {0};
		/* The graph into the model before the capture's record, which
		 * names its id, with whether it is a repeat: by
		 * model_capture_end_facts for a capture the model knows. */
		if (capturing)
			repeat = model_capture_end_facts(id, s, g, rc, c.t_out, &ce);
		if (g && !ce.graph_taken)
			model_graph_new(g, 1, id, 0, 0);
		cgh_call_repeat(&c, repeat);
		if (g) {
			int counted;
			/* logged: the list and its count in one query (the walk takes the list) */
			counted = logged && nodes_launch_list_ask(id, g, &n);
			if (!counted)
				counted = drv_cuGraphGetNodes && drv_cuGraphGetNodes(g, NULL, &n) == CUDA_SUCCESS;
			churn_before(&ch, &ce, counted ? n : 0, kernels, th);
			/* A program that updates executables gets its graphs
			 * walked here, off the update's path (an update needs the
			 * new graph's summary). Otherwise no walk: the memory nodes
			 * are known from the hooks and the node count is one
			 * query; the full summary is walked on first need (an
			 * update, a rewrite, node records at debug level). */
			/* With a libnccl loaded the walk names the graph's NCCL
			 * kernels (model/nccl.c: CGS027, CGS028, the dump) and
			 * gives the fingerprint the cross-rank view compares. */
			if (summary_wanted(nccl_lib) || !counted) {
				/* every node a launch this thread logged: no query a node */
				uint64_t from = logged && kernels >= 0 && (size_t)kernels == n ? id : 0;
				sum = counted ? model_graph_summary_counted(g, n, from) : model_graph_summary(g);
			} else {
				have_counts =
				    model_graph_captured(g, n, kernels, churn_counted(&ch), &n_alloc, &n_free);
			}
			if (churn_after(&ch, &ce, g, sum, hid))
				c.flags &= ~CG_CALL_REPEAT; /* the end the rule names is written */
		}
		if (sum) { /* the counts from the walk; the fingerprint only for a record written */
			nccl = model_nccl_count(sum);
			if (nccl) {
				model_nccl_graph_set(g, nccl, begin_site);
				cgh_nccl_seen();
			}
			n = sum->n_nodes;
			n_alloc = sum->n_alloc;
			n_free = sum->n_free;
			have_counts = 1;
		}
		/* the capture's steady facts and its graph's shape: one lock hold */
		if (capturing)
			model_meminfo_steady_ended(id, &ce, have_counts,
						   cg_mix64((uint64_t)n << 32 | n_alloc << 16 | n_free, 0));
		if (cg_call_rec_wanted(&c, rc))
			end_record(&c, rc, s, id, g, have_counts, n, n_alloc, n_free, sum, nccl);
		model_summary_free(sum);
	}
	CG_RETURN(rc);
}

CG_HOT CUresult cgh_cuStreamEndCapture(CUstream hStream, CUgraph *phGraph)
{
	CG_REAL(cuStreamEndCapture);
	return end_capture_common(HID_cuStreamEndCapture, real_cuStreamEndCapture, 0, hStream, phGraph);
}

CUresult cgh_cuStreamEndCapture_ptsz(CUstream hStream, CUgraph *phGraph)
{
	CG_REAL(cuStreamEndCapture_ptsz);
	return end_capture_common(HID_cuStreamEndCapture_ptsz, real_cuStreamEndCapture_ptsz, 1, hStream, phGraph);
}

/* The mode asked for is read before the call overwrites it. */
void cgh_cuThreadExchangeStreamCaptureMode_pre(struct cg_call *c, struct cgh_frame *f, CUstreamCaptureMode *mode)
{
	f->want = mode ? (int)*mode : -1;
}

void cgh_cuThreadExchangeStreamCaptureMode_post(struct cg_call *c, struct cgh_frame *f, CUresult rc,
						CUstreamCaptureMode *mode)
{
	if (rc == CUDA_SUCCESS && f->want >= 0)
		model_thread_mode_set(f->want);
}

static void event_record_post(CUresult rc, int ptsz, CUevent ev, CUstream s)
{
	uint64_t id;
	if (rc == CUDA_SUCCESS && atomic_load_explicit(&cg_live_captures, memory_order_relaxed)) {
		if (model_stream_capture(s, ptsz, &id, NULL, NULL))
			model_capture_event_record(id, ev, s);
		else
			model_capture_event_forget(ev); /* recorded eagerly: no longer a captured event */
	}
}

void cgh_cuEventRecord_post(struct cg_call *c, struct cgh_frame *f, CUresult rc, CUevent hEvent, CUstream hStream)
{
	event_record_post(rc, 0, hEvent, hStream);
}

void cgh_cuEventRecord_ptsz_post(struct cg_call *c, struct cgh_frame *f, CUresult rc, CUevent hEvent, CUstream hStream)
{
	event_record_post(rc, 1, hEvent, hStream);
}

/* A wait that forks s into a capture is named by its site: taken before
 * the call (the capture is live either way, but the site is then only
 * taken for a wait on an event recorded in a capture). A wait of a
 * capturing stream on another capture's event: CGS015. */
static CGH_FRAMED void wait_event_pre(struct cg_call *c, struct cgh_frame *f, int ptsz, CUstream s, CUevent ev)
{
	f->deps = model_deps_change_enter(); /* a join changes a capture's dependencies, adding no node */
	if (atomic_load_explicit(&cg_live_captures, memory_order_relaxed)) {
		f->capturing = model_stream_capture(s, ptsz, &f->id, NULL, NULL);
		if (!f->capturing && model_capture_event_known(ev))
			f->site = cg_site_here(SITE_SKIP_PART + 1);
		else if (f->capturing)
			f->verdict = cg_caprule_merge(cg_routes[c->hid].name, f->id, ev); /* CGS015 */
	}
}

static void wait_event_post(struct cg_call *c, struct cgh_frame *f, CUresult rc, int ptsz, CUstream s, CUevent ev)
{
	uint64_t id;
	model_deps_change_leave(f->deps);
	if (f->verdict)
		cg_caprule_after(cg_routes[c->hid].name, R_CAPTURE_MERGE, CUDA_ERROR_STREAM_CAPTURE_MERGE, rc);
	else if (f->capturing && rc != CUDA_SUCCESS)
		cg_caprule_failed(cg_routes[c->hid].name, f->id, rc); /* 905: no rule, still the link */
	if (rc == CUDA_SUCCESS && atomic_load_explicit(&cg_live_captures, memory_order_relaxed) &&
	    model_stream_capture(s, ptsz, &id, NULL, NULL))
		model_capture_wait_event(id, s, ev, f->site);
}

#define WAIT_EVENT_PARTS(name, ptsz)                                                                                   \
	void cgh_##name##_pre(struct cg_call *c, struct cgh_frame *f, CUstream hStream, CUevent hEvent,                \
			      unsigned int Flags)                                                                      \
	{                                                                                                              \
		wait_event_pre(c, f, ptsz, hStream, hEvent);                                                           \
		CGH_FRAME_END();                                                                                       \
	}                                                                                                              \
	void cgh_##name##_post(struct cg_call *c, struct cgh_frame *f, CUresult rc, CUstream hStream, CUevent hEvent,  \
			       unsigned int Flags)                                                                     \
	{                                                                                                              \
		wait_event_post(c, f, rc, ptsz, hStream, hEvent);                                                      \
	}
WAIT_EVENT_PARTS(cuStreamWaitEvent, 0)
WAIT_EVENT_PARTS(cuStreamWaitEvent_ptsz, 1)

/* A capture's dependencies set or added to: counted (model.h
 * model_deps_change_enter), so no chain is taken for its graph. */
#define UPDATE_DEPS_PARTS(name, params)                                                                                \
	void cgh_##name##_pre(struct cg_call *c, struct cgh_frame *f, UNPAREN params)                                  \
	{                                                                                                              \
		f->deps = model_deps_change_enter();                                                                   \
	}                                                                                                              \
	void cgh_##name##_post(struct cg_call *c, struct cgh_frame *f, CUresult rc, UNPAREN params)                    \
	{                                                                                                              \
		model_deps_change_leave(f->deps);                                                                      \
	}
#define UNPAREN(...) __VA_ARGS__
UPDATE_DEPS_PARTS(cuStreamUpdateCaptureDependencies,
		  (CUstream hStream, CUgraphNode *dependencies, size_t numDependencies, unsigned int flags))
UPDATE_DEPS_PARTS(cuStreamUpdateCaptureDependencies_ptsz,
		  (CUstream hStream, CUgraphNode *dependencies, size_t numDependencies, unsigned int flags))
UPDATE_DEPS_PARTS(cuStreamUpdateCaptureDependencies_v2,
		  (CUstream hStream, CUgraphNode *dependencies, const CUgraphEdgeData *dependencyData,
		   size_t numDependencies, unsigned int flags))
UPDATE_DEPS_PARTS(cuStreamUpdateCaptureDependencies_v2_ptsz,
		  (CUstream hStream, CUgraphNode *dependencies, const CUgraphEdgeData *dependencyData,
		   size_t numDependencies, unsigned int flags))

/* Before the stream goes: out of the model's forks, so that no end of a
 * capture asks the driver about a freed handle (one relaxed load when no
 * capture is live). */
void cgh_cuStreamDestroy_v2_pre(struct cg_call *c, struct cgh_frame *f, CUstream hStream)
{
	atomic_fetch_add_explicit(&stream_gen, 1, memory_order_release); /* stream_blocking's caches */
	model_capture_stream_gone(hStream);
	cg_work_stream_gone(hStream); /* the dump asks no query of it after */
	CGH_FRAME_END();
}

void cgh_cuStreamDestroy_pre(struct cg_call *c, struct cgh_frame *f, CUstream hStream)
{
	atomic_fetch_add_explicit(&stream_gen, 1, memory_order_release); /* stream_blocking's caches */
	model_capture_stream_gone(hStream);
	cg_work_stream_gone(hStream); /* the dump asks no query of it after */
	CGH_FRAME_END();
}

/* ---- capture-unsafe calls ------------------------------------------------ */

static void stream_sync_pre(struct cg_call *c, struct cgh_frame *f, int ptsz, CUstream s)
{
	uint64_t id;
	struct cg_capture_view cv;
	if (atomic_load_explicit(&cg_live_captures, memory_order_relaxed)) {
		if (cg_caprule_legacy(cg_routes[c->hid].name, s, ptsz, "synchronizes the legacy default stream")) {
			f->verdict = 2; /* CGS014: 906 before any unsafe-class refusal */
		} else if (model_stream_capture(s, ptsz, &id, NULL, NULL)) {
			if (model_capture_find(id, &cv)) {
				cg_rule_unsafe_violation(cg_routes[c->hid].name, &cv,
							 "synchronizes a capturing stream");
				f->verdict = 1;
			}
		} else {
			/* another stream: the unsafe class (capture-map.md) */
			f->verdict = cg_rule_capture_unsafe(cg_routes[c->hid].name, "synchronizes another stream");
		}
	}
}

CGH_FRAMED void cgh_block_note(int hid, int kind, uintptr_t a0, uintptr_t a1, uintptr_t a2, uintptr_t a3)
{
	const uintptr_t a[4] = {a0, a1, a2, a3};
	cg_dump_blocked(hid, kind, a, cg_site_here(SITE_SKIP_PART));
	CGH_FRAME_END();
}

/* The answer checked against the prediction (cuStreamSynchronize,
 * cuCtxSynchronize); a good one outside any capture is a quiet point for
 * the memory sample (model_mem_quiet). */
static void sync_post(struct cg_call *c, struct cgh_frame *f, CUresult rc)
{
	if (!f->verdict && rc == CUDA_SUCCESS)
		model_mem_quiet();
	else if (f->verdict == 2)
		cg_caprule_after(cg_routes[c->hid].name, R_LEGACY_STREAM, CUDA_ERROR_STREAM_CAPTURE_IMPLICIT, rc);
	else if (f->verdict && rc != CUDA_ERROR_STREAM_CAPTURE_UNSUPPORTED)
		cg_mismatch(cg_routes[c->hid].name, R_CAPTURE_UNSAFE, CUDA_ERROR_STREAM_CAPTURE_UNSUPPORTED, rc, -1,
			    -1);
}

void cgh_cuStreamSynchronize_pre(struct cg_call *c, struct cgh_frame *f, CUstream hStream)
{
	stream_sync_pre(c, f, 0, hStream);
	CGH_FRAME_END();
}

void cgh_cuStreamSynchronize_post(struct cg_call *c, struct cgh_frame *f, CUresult rc, CUstream hStream)
{
	sync_post(c, f, rc);
}

void cgh_cuStreamSynchronize_ptsz_pre(struct cg_call *c, struct cgh_frame *f, CUstream hStream)
{
	stream_sync_pre(c, f, 1, hStream);
	CGH_FRAME_END();
}

void cgh_cuStreamSynchronize_ptsz_post(struct cg_call *c, struct cgh_frame *f, CUresult rc, CUstream hStream)
{
	sync_post(c, f, rc);
}

/* cuCtxSynchronize (2000) and cuCtxSynchronize_v2 (13000, takes the
 * context; CUDA 13's cudaDeviceSynchronize asks for this one): every mode,
 * any thread. */
void cgh_cuCtxSynchronize_pre(struct cg_call *c, struct cgh_frame *f)
{
	f->verdict = cg_caprule_device_sync("cuCtxSynchronize");
}

void cgh_cuCtxSynchronize_post(struct cg_call *c, struct cgh_frame *f, CUresult rc)
{
	sync_post(c, f, rc);
}

void cgh_cuCtxSynchronize_v2_pre(struct cg_call *c, struct cgh_frame *f, CUcontext ctx)
{
	f->verdict = cg_caprule_device_sync("cuCtxSynchronize_v2");
}

void cgh_cuCtxSynchronize_v2_post(struct cg_call *c, struct cgh_frame *f, CUresult rc, CUcontext ctx)
{
	sync_post(c, f, rc);
}
