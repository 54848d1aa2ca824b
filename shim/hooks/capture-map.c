/*
 * shim/hooks/capture-map.c -- the hooks of the capture map's routes that no
 * other module owns (issue 14): event query/synchronize (CGS013), stream
 * query (CGS014 on the legacy stream; a capturing stream's query is CGS007),
 * the kernel launches, async and synchronous copies and memsets (CGS014,
 * CGS024) and module/library loads (CGS017).
 *
 * Launch contract: while no capture is live (cg_live_captures == 0, one
 * relaxed load) a launch is forwarded at once: no lock, no allocation, no
 * record, not even at trace level; a kernel launch adds one to its
 * thread's eager count (counters.h: a TLS add, issue 32's coverage). With a capture live, a launch on the
 * legacy stream is looked at (CGS014 before the call), and so is one by a
 * thread whose own capture is live (model_tally.cap) on another stream
 * than that capture's origin (CGS024: the driver's capture-safe query
 * says whether the stream is in a capture); everything else is still
 * forwarded untouched, and an accepted one counted in this thread's
 * capture tally (model_tally_launch: a TLS write).
 */
#include <errno.h>
#include <stdatomic.h>

#include "../hot.h"
#include "hooks.h"
#include "../call.h"
#include "../counters.h"
#include "../model.h"
#include "../nodes.h"
#include "../rules.h"
#include "../site.h"
#include "hooks.h"

/* cuEventQuery/cuEventSynchronize of an event recorded in a live capture:
 * CGS013 (907). */
static void event_host_pre(struct cg_call *c, struct cgh_frame *f, CUevent ev)
{
	if (atomic_load_explicit(&cg_live_captures, memory_order_relaxed))
		f->verdict = cg_caprule_event(cg_routes[c->hid].name, ev);
}

static void event_host_post(struct cg_call *c, struct cgh_frame *f, CUresult rc, int sync)
{
	if (f->verdict)
		cg_caprule_after(cg_routes[c->hid].name, R_CAPTURED_EVENT, CUDA_ERROR_CAPTURED_EVENT, rc);
	else if (sync && rc == CUDA_ERROR_STREAM_CAPTURE_UNSUPPORTED)
		model_capture_refused(cg_routes[c->hid].name); /* a synchronize the unsafe class refused */
}

void cgh_cuEventQuery_pre(struct cg_call *c, struct cgh_frame *f, CUevent hEvent)
{
	event_host_pre(c, f, hEvent);
	CGH_FRAME_END();
}

void cgh_cuEventQuery_post(struct cg_call *c, struct cgh_frame *f, CUresult rc, CUevent hEvent)
{
	event_host_post(c, f, rc, 0);
}

void cgh_cuEventSynchronize_pre(struct cg_call *c, struct cgh_frame *f, CUevent hEvent)
{
	event_host_pre(c, f, hEvent);
	CGH_FRAME_END();
}

void cgh_cuEventSynchronize_post(struct cg_call *c, struct cgh_frame *f, CUresult rc, CUevent hEvent)
{
	event_host_post(c, f, rc, 1);
}

/* cuStreamQuery: of a capturing stream, CGS007 (900, invalidated in every
 * mode); of the legacy stream under a blocking capture, CGS014 (906); of
 * the legacy stream otherwise, CGS007 by the modes (the unsafe class). The
 * verdict's rule and predicted result go to the post part. */
static void stream_query_pre(struct cg_call *c, struct cgh_frame *f, int ptsz, CUstream s)
{
	struct cg_capture_view cv;
	uint64_t id;
	if (atomic_load_explicit(&cg_live_captures, memory_order_relaxed)) {
		if (cg_caprule_legacy(cg_routes[c->hid].name, s, ptsz, "queries the legacy default stream")) {
			f->verdict = 1;
			f->rule = R_LEGACY_STREAM;
			f->predicted_rc = CUDA_ERROR_STREAM_CAPTURE_IMPLICIT;
		} else if (model_stream_capture(s, ptsz, &id, NULL, NULL) && model_capture_find(id, &cv)) {
			cg_rule_unsafe_violation(cg_routes[c->hid].name, &cv, "queries a capturing stream");
			f->verdict = 1;
			f->rule = R_CAPTURE_UNSAFE;
			f->predicted_rc = CUDA_ERROR_STREAM_CAPTURE_UNSUPPORTED;
		} else if (!ptsz && (s == NULL || s == CU_STREAM_LEGACY) &&
			   cg_rule_capture_unsafe(cg_routes[c->hid].name,
						  "queries the legacy default stream (capture-unsafe)")) {
			/* no blocking capture: the unsafe class, by the modes (measured
			 * on the H200, driver 580: 900 under a global capture of a
			 * non-blocking stream, the capture invalidated) */
			f->verdict = 1;
			f->rule = R_CAPTURE_UNSAFE;
			f->predicted_rc = CUDA_ERROR_STREAM_CAPTURE_UNSUPPORTED;
		}
	}
}

static void stream_query_post(struct cg_call *c, struct cgh_frame *f, CUresult rc)
{
	if (f->verdict)
		cg_caprule_after(cg_routes[c->hid].name, f->rule, f->predicted_rc, rc);
}

void cgh_cuStreamQuery_pre(struct cg_call *c, struct cgh_frame *f, CUstream hStream)
{
	stream_query_pre(c, f, 0, hStream);
	CGH_FRAME_END();
}

void cgh_cuStreamQuery_post(struct cg_call *c, struct cgh_frame *f, CUresult rc, CUstream hStream)
{
	stream_query_post(c, f, rc);
}

void cgh_cuStreamQuery_ptsz_pre(struct cg_call *c, struct cgh_frame *f, CUstream hStream)
{
	stream_query_pre(c, f, 1, hStream);
	CGH_FRAME_END();
}

void cgh_cuStreamQuery_ptsz_post(struct cg_call *c, struct cgh_frame *f, CUresult rc, CUstream hStream)
{
	stream_query_post(c, f, rc);
}

/* A launch on the legacy stream while a capture is live (the wrapper tests
 * the stream inline): under a blocking capture, named (CGS014) before the
 * call; the answer checked after. Kept out of line so the launch wrappers
 * stay a load and a tail call. */
static __attribute__((noinline, cold)) int cgh_launch_check(int hid, CUstream s, int ptsz)
{
	struct cg_call c;
	if (!cg_call_begin(&c, hid, 0))
		return 0;
	return cg_caprule_legacy(cg_routes[hid].name, s, ptsz, "launches a kernel on the legacy default stream");
}

static __attribute__((noinline, cold)) void cgh_launch_after(int hid, CUresult rc)
{
	struct cg_call c;
	if (cg_call_begin(&c, hid, 0)) {
		cg_caprule_after(cg_routes[hid].name, R_LEGACY_STREAM, CUDA_ERROR_STREAM_CAPTURE_IMPLICIT, rc);
		cg_call_end(&c, rc);
	}
}

/* No config: the driver refuses the call; no stream to look at. Neither
 * NULL, CU_STREAM_LEGACY (0x1) nor CU_STREAM_PER_THREAD (0x2). */
#define CGH_NO_STREAM ((CUstream)(uintptr_t)0x10)

/* A launch or copy on a capturing stream that the driver refused with a
 * capture error no rule predicted (a copy to pageable memory inside a
 * capture, .item()'s): the first failing call the capture's end links to.
 * Only after a failure, only while a capture is live. */
static __attribute__((noinline, cold)) void cgh_failed(int hid, CUstream s, int ptsz, CUresult rc)
{
	struct cg_call c;
	uint64_t id = 0;
	if (cg_call_begin(&c, hid, 0)) {
		if (s != CGH_NO_STREAM && model_stream_capture(s, ptsz, &id, NULL, NULL))
			cg_caprule_failed(cg_routes[hid].name, id, rc);
		cg_call_end(&c, rc);
	}
}

/* The kernels this thread launched outside the capture it began (CGS024),
 * for that capture's end (CGS025): the thread's own, no lock. */
#define ESC_NAMES 200
static CG_TLS struct {
	uint64_t cap; /* the capture they escaped, 0 none */
	int kernels;
	char names[ESC_NAMES]; /* the first ones' names, comma-joined */
} esc;

/* CGS024: this thread began capture model_tally.cap, still live, and sends
 * work (a kernel f, or a copy or memset: what) to stream s, which is not
 * that capture's origin. Named before the call when the stream is in no
 * capture: the legacy stream with no blocking capture live (the caller's
 * CGS014 check found none; it is never asked about, a query of it could
 * answer 906), or any other stream the driver's capture-safe query says
 * captures nothing. A stream joined to a capture (an event wait), or in
 * another one, is left alone. *name: the kernel's, for the count after
 * the driver accepts (NULL for a copy or memset). sync: a synchronous copy
 * or memset (a hint, rules_capture_escape). Returns 1 when named. */
static __attribute__((noinline, cold)) int escape_named(int hid, CUstream s, int ptsz, CUfunction f, const char *what,
							const char **name, int skip, int sync)
{
	struct cg_capture_view cv;
	struct cg_escape_ev ev = {s, "other_stream", NULL, what, -1, sync};
	struct cg_verdict v;
	CUdevice dev;
	if (!model_tally.cap)
		return 0;
	if (cg_caprule_is_legacy(s, ptsz))
		ev.route = "legacy_stream";
	else if (!cgh_stream_captures_nothing(s, ptsz))
		return 0;
	else if (s == CU_STREAM_PER_THREAD || (ptsz && !s))
		ev.route = "per_thread_stream";
	if (!model_capture_find(model_tally.cap, &cv) || cv.tid != cg_gettid()) {
		model_tally.cap = 0; /* ended by another thread: nothing left to escape */
		model_tally.stream = NULL;
		return 0;
	}
	ev.kernel = cg_launch_name(f);
	if (drv_cuCtxGetDevice && drv_cuCtxGetDevice(&dev) == CUDA_SUCCESS)
		ev.device = (int)dev;
	if (!rules_capture_escape(cg_routes[hid].name, &ev, &cv, &v))
		return 0;
	cg_verdict_write(&v, cg_routes[hid].name, 0, skip);
	*name = !f ? NULL : ev.kernel ? ev.kernel : "?"; /* no function: a copy or memset */
	return 1;
}

/* The launch path's entry: the shim acts on this call (escape_named's site:
 * it, this function and the hook). */
static __attribute__((noinline, cold)) int cgh_escape_check(int hid, CUstream s, int ptsz, CUfunction f,
							    const char *what, const char **name)
{
	struct cg_call c;
	int named;
	if (!model_tally.cap || s == CGH_NO_STREAM || !cg_call_begin(&c, hid, 0))
		return 0;
	named = escape_named(hid, s, ptsz, f, what, name, 3, 0);
	CGH_FRAME_END();
	return named;
}

/* After the call CGS024 named: its call record at info (beside the
 * violation, whatever the answer), and a kernel the driver accepted kept
 * for its capture's end (name NULL: a copy or memset). */
static __attribute__((noinline, cold)) void cgh_escape_after(int hid, CUresult rc, const char *name, CUfunction f)
{
	struct cg_call c;
	size_t n;
	if (cg_call_begin(&c, hid, CG_CALL_LIFE))
		cg_call_end(&c, rc);
	if (!name || rc != CUDA_SUCCESS)
		return;
	if (cg_count_eager()) /* an escaped kernel ran eagerly */
		model_eager_sample(f);
	if (esc.cap != model_tally.cap) {
		esc.cap = model_tally.cap;
		esc.kernels = 0;
		esc.names[0] = 0;
	}
	esc.kernels++;
	model_tally.esc = 1;
	n = strlen(esc.names);
	if (!strstr(esc.names, name) && n + strlen(name) + 2 < ESC_NAMES)
		snprintf(esc.names + n, ESC_NAMES - n, "%s%s", n ? "," : "", name);
}

/* esc.cap is only ever model_tally.cap when set, with model_tally.esc set
 * too, and the tally's cap moves on only at a begin (esc 0 again) or at
 * its capture's end, after this question: a steady end reads the tally's
 * line (read anyway), not esc's (issue 36). */
CG_HOT int cgh_escaped(uint64_t id)
{
	return id && model_tally.cap == id && model_tally.esc && esc.cap == id && esc.kernels;
}

void cgh_escape_end(uint64_t id, const struct cg_capture_view *cv, CUgraph g)
{
	CUgraphNode *nodes = NULL;
	CUgraphNodeType t;
	size_t n = 0, i;
	struct cg_verdict v;
	int kernel = 0;
	if (CG_LIKELY(esc.cap != id) || !id)
		return;
	esc.cap = 0;
	if (!g || !cv || !esc.kernels || !drv_cuGraphGetNodes || !drv_cuGraphNodeGetType ||
	    drv_cuGraphGetNodes(g, NULL, &n) != CUDA_SUCCESS)
		return;
	if (n && !(nodes = calloc(n, sizeof *nodes)))
		return;
	if (n && drv_cuGraphGetNodes(g, nodes, &n) != CUDA_SUCCESS)
		kernel = 1; /* unknown: say nothing */
	for (i = 0; i < n && !kernel; i++)
		kernel = drv_cuGraphNodeGetType(nodes[i], &t) != CUDA_SUCCESS || t == CU_GRAPH_NODE_TYPE_KERNEL;
	free(nodes);
	if (!kernel && rules_capture_empty(g, esc.kernels, esc.names, cv, &v))
		cg_verdict_write(&v, "cuStreamEndCapture", 0, 2);
}

#define CGH_CAPTURE_ERR(rc)                                                                                            \
	((rc) >= CUDA_ERROR_STREAM_CAPTURE_UNSUPPORTED && (rc) <= CUDA_ERROR_STREAM_CAPTURE_WRONG_THREAD)

/* The envelope of every hook of this file that sees launches and async
 * work. The wrapper itself touches nothing errno could see: while no
 * capture is live it is a load and a tail call; while one is, a launch on a
 * stream other than the legacy one is forwarded as it came and only a
 * capture error in the answer takes a helper (an unpredicted call's error
 * is still linked to its capture). Everything else -- the driver not yet
 * resolved, a launch on the legacy stream (`check`: nonzero when a
 * violation was named before the call, then checked after it) -- goes to
 * the out-of-line name_slow with the full envelope (CG_REAL, CG_FWD).
 * Measured on the stand-in (callgrind): ~59 instructions a launch inside a
 * capture before, most of them saving 11 arguments across a call to
 * __errno_location. A kernel launch its thread's count made a sample (one in
 * CGSHIM_EAGER_SAMPLE on average, counters.h) goes to name_sampled: with no
 * capture live it takes the sample, then does the fast path's work and
 * call; with one live the sample is taken in line. */
#define LIVE_CAPTURE_HOOK(name, ptsz, params, args, stream_expr, check, kernel, fn_expr, what, dims_expr, coop,        \
			  rec_stmt)                                                                                    \
	static __attribute__((noinline, cold)) CUresult name##_slow params                                             \
	{                                                                                                              \
		CUresult rc;                                                                                           \
		const char *esc_name = NULL;                                                                           \
		if (kernel && !cg_eager_tls.reg)                                                                       \
			cg_eager_register(); /* the driver not resolved at the thread's first launch */                \
		CG_REAL(name);                                                                                         \
		if (!atomic_load_explicit(&cg_live_captures, memory_order_relaxed)) {                                  \
			if (kernel) {                                                                                  \
				if (cg_count_eager())                                                                  \
					CG_KEEP_ERRNO(model_eager_sample((fn_expr)));                                  \
				cg_work_kernel((stream_expr), (fn_expr));                                              \
			}                                                                                              \
			return CG_FWD(real_##name args);                                                               \
		}                                                                                                      \
		if (kernel && !model_tally.cap) {                                                                      \
			if (cg_count_eager())                                                                          \
				CG_KEEP_ERRNO(model_eager_sample((fn_expr)));                                          \
			cg_work_kernel((stream_expr), (fn_expr));                                                      \
		}                                                                                                      \
		if (coop)                                                                                              \
			nodes_coop_note(); /* a kernel node may now be cooperative */                                  \
		model_tally.off = 1;	   /* not counted: another stream, or the driver resolved late */              \
		if (!(check)) {                                                                                        \
			int escaped = cgh_escape_check(HID_##name, (stream_expr), ptsz, (fn_expr), what, &esc_name);   \
			rc = CG_FWD(real_##name args);                                                                 \
			if (CG_UNLIKELY(escaped))                                                                      \
				CG_KEEP_ERRNO(cgh_escape_after(HID_##name, rc, esc_name, (fn_expr)));                  \
			else if (CG_UNLIKELY(CGH_CAPTURE_ERR(rc)))                                                     \
				CG_KEEP_ERRNO(cgh_failed(HID_##name, (stream_expr), ptsz, rc));                        \
			return rc;                                                                                     \
		}                                                                                                      \
		rc = CG_FWD(real_##name args);                                                                         \
		CG_KEEP_ERRNO(cgh_launch_after(HID_##name, rc));                                                       \
		return rc;                                                                                             \
	}                                                                                                              \
	/* A launch into this thread's capture while its launches are described                                      \
	 * (model_tally.rec): apart, so the common path keeps no more arguments                                      \
	 * alive across the driver's call than it did. */ \
	static __attribute__((noinline)) CUresult name##_logged params                                                 \
	{                                                                                                              \
		CUresult rc = real_##name args;                                                                        \
		if (CG_LIKELY(rc == CUDA_SUCCESS)) {                                                                   \
			model_tally_launch((stream_expr), kernel, (uint64_t)(uintptr_t)(fn_expr) ^ (dims_expr));       \
			rec_stmt; /* nodes.h nodes_launch_rec: errno kept */                                           \
		} else if (CGH_CAPTURE_ERR(rc)) {                                                                      \
			CG_KEEP_ERRNO(cgh_failed(HID_##name, (stream_expr), ptsz, rc));                                \
		}                                                                                                      \
		return rc;                                                                                             \
	}                                                                                                              \
	static __attribute__((noinline, cold, unused)) CUresult name##_sampled params                                  \
	{                                                                                                              \
		CG_KEEP_ERRNO(model_eager_sample((fn_expr)));                                                          \
		cg_work_kernel((stream_expr), (fn_expr));                                                              \
		return real_##name args;                                                                               \
	}                                                                                                              \
	CUresult cgh_##name params                                                                                     \
	{                                                                                                              \
		CUresult rc;                                                                                           \
		CG_PROF_ENTER(HID_##name);                                                                             \
		if (CG_UNLIKELY(!atomic_load_explicit(&cg_driver_resolved, memory_order_acquire) || !real_##name))     \
			return name##_slow args;                                                                       \
		if (CG_UNLIKELY(kernel && !cg_eager_tls.reg))                                                          \
			cg_eager_register(); /* the first launch: its sample's stack as deep as any */                 \
		if (CG_LIKELY(!atomic_load_explicit(&cg_live_captures, memory_order_relaxed))) {                       \
			if (kernel) {                                                                                  \
				if (CG_UNLIKELY(cg_eager_add()))                                                       \
					return name##_sampled args;                                                    \
				cg_work_kernel((stream_expr), (fn_expr)); /* the dump's last work: no clock */         \
			}                                                                                              \
			return real_##name args;                                                                       \
		}                                                                                                      \
		if (kernel && !model_tally.cap) {                                                                      \
			if (CG_UNLIKELY(cg_eager_add())) /* a thread with no capture of its own launches eagerly */    \
				CG_KEEP_ERRNO(model_eager_sample((fn_expr)));                                          \
			cg_work_kernel((stream_expr), (fn_expr));                                                      \
		}                                                                                                      \
		if (CG_UNLIKELY(coop))                                                                                 \
			nodes_coop_note(); /* a kernel node may now be cooperative */                                  \
		if (CG_UNLIKELY(cg_caprule_is_legacy((stream_expr), ptsz)))                                            \
			return name##_slow args;                                                                       \
		if (CG_UNLIKELY(model_tally.cap && (const void *)(stream_expr) != model_tally.stream))                 \
			return name##_slow args; /* CGS024's question: this thread's capture, another stream */        \
		if (CG_UNLIKELY(model_tally.rec))                                                                      \
			return name##_logged args;                                                                     \
		CG_PROF_MARK(CG_PROF_FWD0);                                                                            \
		rc = real_##name args;                                                                                 \
		CG_PROF_MARK(CG_PROF_FWD1);                                                                            \
		if (CG_LIKELY(rc == CUDA_SUCCESS))                                                                     \
			model_tally_launch((stream_expr), kernel, (uint64_t)(uintptr_t)(fn_expr) ^ (dims_expr));       \
		else if (CG_UNLIKELY(CGH_CAPTURE_ERR(rc)))                                                             \
			CG_KEEP_ERRNO(cgh_failed(HID_##name, (stream_expr), ptsz, rc));                                \
		CG_PROF_MARK(CG_PROF_RETURN);                                                                          \
		return rc;                                                                                             \
	}

#define LAUNCH_HOOK(name, ptsz, params, args, stream_expr, dims_expr, coop, rec_stmt)                                  \
	LIVE_CAPTURE_HOOK(name, ptsz, params, args, stream_expr,                                                       \
			  cg_caprule_is_legacy((stream_expr), ptsz) &&                                                 \
			      cgh_launch_check(HID_##name, (stream_expr), ptsz),                                       \
			  1, f, "launches a kernel", dims_expr, coop, rec_stmt)

/* A launch's dimensions, folded for the capture tally's hash (churn's cheap
 * key): read only when the launch goes into this thread's capture. */
#define CGH_DIMS(gx, gy, gz, bx, by, bz)                                                                               \
	((uint64_t)(gx) << 40 ^ (uint64_t)(gy) << 20 ^ (uint64_t)(gz) ^                                                \
	 ((uint64_t)(bx) << 42 ^ (uint64_t)(by) << 21 ^ (bz)) * 0x9E3779B97F4A7C15ull)
#define CGH_DIMS_EX(c)                                                                                                 \
	((c) ? CGH_DIMS((c)->gridDimX, (c)->gridDimY, (c)->gridDimZ, (c)->blockDimX, (c)->blockDimY, (c)->blockDimZ)   \
	     : 0)

#define LAUNCH_PARAMS                                                                                                  \
	(CUfunction f, unsigned int gridDimX, unsigned int gridDimY, unsigned int gridDimZ, unsigned int blockDimX,    \
	 unsigned int blockDimY, unsigned int blockDimZ, unsigned int sharedMemBytes, CUstream hStream,                \
	 void **kernelParams, void **extra)
#define LAUNCH_ARGS                                                                                                    \
	(f, gridDimX, gridDimY, gridDimZ, blockDimX, blockDimY, blockDimZ, sharedMemBytes, hStream, kernelParams, extra)

#define LAUNCH_DIMS CGH_DIMS(gridDimX, gridDimY, gridDimZ, blockDimX, blockDimY, blockDimZ)

/* Whether a cuLaunchKernelEx configuration asks for a cooperative launch
 * (nodes.h nodes_coop_note): read only while a capture is live, within the
 * numAttrs entries the driver reads too (at most 64 looked at). */
static inline int cgh_ex_coop(const CUlaunchConfig *c)
{
	if (!c || !c->attrs)
		return 0;
	for (unsigned i = 0; i < c->numAttrs && i < 64; i++)
		if (c->attrs[i].id == CU_LAUNCH_ATTRIBUTE_COOPERATIVE)
			return 1;
	return 0;
}

/* Whether a captured cuLaunchKernelEx configuration may give its node an
 * edge of other than default data (a programmatic or launch-order port:
 * programmatic serialization, a programmatic or launch-completion event),
 * within the numAttrs entries the driver reads (at most 64 looked at):
 * then its capture's graph is no plain chain (model.h model_deps_changed). */
static inline int cgh_ex_edges(const CUlaunchConfig *c)
{
	if (!c || !c->attrs)
		return 0;
	for (unsigned i = 0; i < c->numAttrs && i < 64; i++)
		if (c->attrs[i].id == CU_LAUNCH_ATTRIBUTE_PROGRAMMATIC_STREAM_SERIALIZATION ||
		    c->attrs[i].id == CU_LAUNCH_ATTRIBUTE_PROGRAMMATIC_EVENT ||
		    c->attrs[i].id == CU_LAUNCH_ATTRIBUTE_LAUNCH_COMPLETION_EVENT)
			return 1;
	return 0;
}

#define COOP_PARAMS                                                                                                    \
	(CUfunction f, unsigned int gridDimX, unsigned int gridDimY, unsigned int gridDimZ, unsigned int blockDimX,    \
	 unsigned int blockDimY, unsigned int blockDimZ, unsigned int sharedMemBytes, CUstream hStream,                \
	 void **kernelParams)
#define COOP_ARGS                                                                                                      \
	(f, gridDimX, gridDimY, gridDimZ, blockDimX, blockDimY, blockDimZ, sharedMemBytes, hStream, kernelParams)

/* A counted launch described (model_tally.rec): the launch's own
 * arguments, as its node will hold them. A cooperative launch is not
 * described: its capture's graph is walked. */
#define LAUNCH_REC                                                                                                     \
	nodes_launch_rec(model_tally.cap, model_tally.kernels, f, gridDimX, gridDimY, gridDimZ, blockDimX, blockDimY,  \
			 blockDimZ, sharedMemBytes, kernelParams, extra)
#define LAUNCH_REC_EX                                                                                                  \
	((cgh_ex_edges(config) ? model_deps_changed() : (void)0),                                                      \
	 nodes_launch_rec(model_tally.cap, model_tally.kernels, f, config->gridDimX, config->gridDimY,                 \
			  config->gridDimZ, config->blockDimX, config->blockDimY, config->blockDimZ,                   \
			  config->sharedMemBytes, kernelParams, extra))

LAUNCH_HOOK(cuLaunchKernel, 0, LAUNCH_PARAMS, LAUNCH_ARGS, hStream, LAUNCH_DIMS, 0, LAUNCH_REC)
LAUNCH_HOOK(cuLaunchKernel_ptsz, 1, LAUNCH_PARAMS, LAUNCH_ARGS, hStream, LAUNCH_DIMS, 0, LAUNCH_REC)
LAUNCH_HOOK(cuLaunchKernelEx, 0, (const CUlaunchConfig *config, CUfunction f, void **kernelParams, void **extra),
	    (config, f, kernelParams, extra), config ? config->hStream : CGH_NO_STREAM, CGH_DIMS_EX(config),
	    cgh_ex_coop(config), LAUNCH_REC_EX)
LAUNCH_HOOK(cuLaunchKernelEx_ptsz, 1, (const CUlaunchConfig *config, CUfunction f, void **kernelParams, void **extra),
	    (config, f, kernelParams, extra), config ? config->hStream : CGH_NO_STREAM, CGH_DIMS_EX(config),
	    cgh_ex_coop(config), LAUNCH_REC_EX)
LAUNCH_HOOK(cuLaunchCooperativeKernel, 0, COOP_PARAMS, COOP_ARGS, hStream, LAUNCH_DIMS, 1, (void)0)
LAUNCH_HOOK(cuLaunchCooperativeKernel_ptsz, 1, COOP_PARAMS, COOP_ARGS, hStream, LAUNCH_DIMS, 1, (void)0)

/* cuGraphKernelNodeSetAttribute(COOPERATIVE): noted before the call,
 * whatever the value (the value is not read: the driver checks it). */
void cgh_cuGraphKernelNodeSetAttribute_pre(struct cg_call *c, struct cgh_frame *f, CUgraphNode hNode,
					   CUkernelNodeAttrID attr, const CUkernelNodeAttrValue *value)
{
	if (attr == CU_LAUNCH_ATTRIBUTE_COOPERATIVE)
		nodes_coop_note();
}

void cgh_cuGraphKernelNodeSetAttribute_post(struct cg_call *c, struct cgh_frame *f, CUresult rc, CUgraphNode hNode,
					    CUkernelNodeAttrID attr, const CUkernelNodeAttrValue *value)
{
	if (rc == CUDA_SUCCESS && attr == CU_LAUNCH_ATTRIBUTE_COOPERATIVE)
		model_graph_node_changed(); /* its graph's cached summary says otherwise */
}

/* Async copies and memsets: the launch contract (one relaxed load while no
 * capture is live), looked at only on the legacy stream (CGS014). */
#define ASYNC_HOOK(name, ptsz, params, args, what, esc_what)                                                           \
	LIVE_CAPTURE_HOOK(name, ptsz, params, args, hStream,                                                           \
			  cg_caprule_is_legacy(hStream, ptsz) && cgh_async_check(HID_##name, hStream, ptsz, what), 0,  \
			  NULL, esc_what, 0, 0, (void)0)

/* The same for an async copy or memset on the legacy stream. */
static __attribute__((noinline, cold)) int cgh_async_check(int hid, CUstream s, int ptsz, const char *what)
{
	struct cg_call c;
	if (!cg_call_begin(&c, hid, 0))
		return 0;
	return cg_caprule_legacy(cg_routes[hid].name, s, ptsz, what);
}

#define COPY_P (CUdeviceptr dst, CUdeviceptr src, size_t ByteCount, CUstream hStream)
#define COPY_A (dst, src, ByteCount, hStream)
#define HTOD_P (CUdeviceptr dstDevice, const void *srcHost, size_t ByteCount, CUstream hStream)
#define HTOD_A (dstDevice, srcHost, ByteCount, hStream)
#define DTOH_P (void *dstHost, CUdeviceptr srcDevice, size_t ByteCount, CUstream hStream)
#define DTOH_A (dstHost, srcDevice, ByteCount, hStream)
#define DTOD_P (CUdeviceptr dstDevice, CUdeviceptr srcDevice, size_t ByteCount, CUstream hStream)
#define DTOD_A (dstDevice, srcDevice, ByteCount, hStream)
#define SET8_P (CUdeviceptr dstDevice, unsigned char uc, size_t N, CUstream hStream)
#define SET8_A (dstDevice, uc, N, hStream)
#define SET32_P (CUdeviceptr dstDevice, unsigned int ui, size_t N, CUstream hStream)
#define SET32_A (dstDevice, ui, N, hStream)
#define COPY_WHAT "copies on the legacy default stream"
#define SET_WHAT "sets memory on the legacy default stream"

ASYNC_HOOK(cuMemcpyAsync, 0, COPY_P, COPY_A, COPY_WHAT, "copies memory")
ASYNC_HOOK(cuMemcpyAsync_ptsz, 1, COPY_P, COPY_A, COPY_WHAT, "copies memory")
ASYNC_HOOK(cuMemcpyHtoDAsync_v2, 0, HTOD_P, HTOD_A, COPY_WHAT, "copies memory")
ASYNC_HOOK(cuMemcpyHtoDAsync_v2_ptsz, 1, HTOD_P, HTOD_A, COPY_WHAT, "copies memory")
ASYNC_HOOK(cuMemcpyDtoHAsync_v2, 0, DTOH_P, DTOH_A, COPY_WHAT, "copies memory")
ASYNC_HOOK(cuMemcpyDtoHAsync_v2_ptsz, 1, DTOH_P, DTOH_A, COPY_WHAT, "copies memory")
ASYNC_HOOK(cuMemcpyDtoDAsync_v2, 0, DTOD_P, DTOD_A, COPY_WHAT, "copies memory")
ASYNC_HOOK(cuMemcpyDtoDAsync_v2_ptsz, 1, DTOD_P, DTOD_A, COPY_WHAT, "copies memory")
ASYNC_HOOK(cuMemsetD8Async, 0, SET8_P, SET8_A, SET_WHAT, "sets memory")
ASYNC_HOOK(cuMemsetD8Async_ptsz, 1, SET8_P, SET8_A, SET_WHAT, "sets memory")
ASYNC_HOOK(cuMemsetD32Async, 0, SET32_P, SET32_A, SET_WHAT, "sets memory")
ASYNC_HOOK(cuMemsetD32Async_ptsz, 1, SET32_P, SET32_A, SET_WHAT, "sets memory")

/* Synchronous copies and memsets (BLOCK rows of hooks.def, the dump's
 * hooks: the generated envelope) run on the legacy stream, the _ptds forms
 * on the per-thread one. Measured on an H200 (driver 580.159.04,
 * 2026-11-29, docs/rules/CGS014.md): while a blocking stream captures, in
 * every mode and from any thread, 906 and that capture invalidated (CGS014,
 * named before the call); while only non-blocking streams capture, 0, run
 * now and not in the graph: made by the thread whose capture is live, that
 * work escaped it (CGS024, route legacy_stream; per_thread_stream for a
 * _ptds form, whose stream is never the legacy one). While no capture is
 * live the pre part costs one relaxed load. f->verdict: 1 CGS014 named
 * (checked after the call), 2 CGS024 named. */
/* The stream a synchronous copy runs on, as the records name it (the
 * dump's convention): 0x0 the legacy one, 0x2 the per-thread one (_ptds). */
#define SYNC_STREAM(ptds) ((ptds) ? CU_STREAM_PER_THREAD : (CUstream)NULL)

static __attribute__((noinline, cold)) void sync_check(struct cg_call *c, struct cgh_frame *f, int ptds,
						       const char *what, const char *esc_what)
{
	const char *name = NULL;
	if (cg_caprule_legacy(cg_routes[c->hid].name, SYNC_STREAM(ptds), ptds, what))
		f->verdict = 1;
	else if (escape_named(c->hid, SYNC_STREAM(ptds), ptds, NULL, esc_what, &name, 4, 1)) /* +this, part, wrapper */
		f->verdict = 2;
	CGH_FRAME_END();
}

static void sync_after(struct cg_call *c, struct cgh_frame *f, int ptds, CUresult rc)
{
	uint64_t id = 0;
	if (f->verdict == 1)
		cg_caprule_after(cg_routes[c->hid].name, R_LEGACY_STREAM, CUDA_ERROR_STREAM_CAPTURE_IMPLICIT, rc);
	else if (f->verdict == 2)
		c->flags |= CG_CALL_LIFE; /* CGS024: the call's record follows at info */
	else if (CG_UNLIKELY(CGH_CAPTURE_ERR(rc)) && model_stream_capture(SYNC_STREAM(ptds), ptds, &id, NULL, NULL))
		cg_caprule_failed(cg_routes[c->hid].name, id, rc); /* unpredicted: the capture's link */
}

#define SYNC_PARTS(name, ptds, what, esc_what, ...)                                                                    \
	void cgh_##name##_pre(struct cg_call *c, struct cgh_frame *f, __VA_ARGS__)                                     \
	{                                                                                                              \
		if (CG_UNLIKELY(atomic_load_explicit(&cg_live_captures, memory_order_relaxed)))                        \
			sync_check(c, f, ptds, what, esc_what);                                                        \
		CGH_FRAME_END();                                                                                       \
	}                                                                                                              \
	void cgh_##name##_post(struct cg_call *c, struct cgh_frame *f, CUresult rc, __VA_ARGS__)                       \
	{                                                                                                              \
		sync_after(c, f, ptds, rc);                                                                            \
	}

#define SYNC_COPY_WHAT "copies synchronously on the legacy default stream"
#define SYNC_SET_WHAT "sets memory synchronously on the legacy default stream"
#define SYNC_COPY_ESC "copies memory synchronously"
#define SYNC_SET_ESC "sets memory synchronously"
#define SC_ANY CUdeviceptr dst, CUdeviceptr src, size_t ByteCount
#define SC_HTOD CUdeviceptr dstDevice, const void *srcHost, size_t ByteCount
#define SC_DTOH void *dstHost, CUdeviceptr srcDevice, size_t ByteCount
#define SC_DTOD CUdeviceptr dstDevice, CUdeviceptr srcDevice, size_t ByteCount

SYNC_PARTS(cuMemcpy, 0, SYNC_COPY_WHAT, SYNC_COPY_ESC, SC_ANY)
SYNC_PARTS(cuMemcpy_ptds, 1, SYNC_COPY_WHAT, SYNC_COPY_ESC, SC_ANY)
SYNC_PARTS(cuMemcpyHtoD_v2, 0, SYNC_COPY_WHAT, SYNC_COPY_ESC, SC_HTOD)
SYNC_PARTS(cuMemcpyHtoD_v2_ptds, 1, SYNC_COPY_WHAT, SYNC_COPY_ESC, SC_HTOD)
SYNC_PARTS(cuMemcpyDtoH_v2, 0, SYNC_COPY_WHAT, SYNC_COPY_ESC, SC_DTOH)
SYNC_PARTS(cuMemcpyDtoH_v2_ptds, 1, SYNC_COPY_WHAT, SYNC_COPY_ESC, SC_DTOH)
SYNC_PARTS(cuMemcpyDtoD_v2, 0, SYNC_COPY_WHAT, SYNC_COPY_ESC, SC_DTOD)
SYNC_PARTS(cuMemcpyDtoD_v2_ptds, 1, SYNC_COPY_WHAT, SYNC_COPY_ESC, SC_DTOD)
SYNC_PARTS(cuMemsetD8_v2, 0, SYNC_SET_WHAT, SYNC_SET_ESC, CUdeviceptr dstDevice, unsigned char uc, size_t N)
SYNC_PARTS(cuMemsetD8_v2_ptds, 1, SYNC_SET_WHAT, SYNC_SET_ESC, CUdeviceptr dstDevice, unsigned char uc, size_t N)
SYNC_PARTS(cuMemsetD32_v2, 0, SYNC_SET_WHAT, SYNC_SET_ESC, CUdeviceptr dstDevice, unsigned int ui, size_t N)
SYNC_PARTS(cuMemsetD32_v2_ptds, 1, SYNC_SET_WHAT, SYNC_SET_ESC, CUdeviceptr dstDevice, unsigned int ui, size_t N)

/* Module and library loads (LIFE rows: a record at info, rare calls). A
 * load inside a capture leaves it alone (capture-map.md; CGS017 was
 * retired when the map was measured again: the unload, not the load,
 * breaks a capture). The module's functions are learnt after a load.
 * A load puts code and constants in device memory: it moves it (a sample
 * reused across one would count the load against the next capture), and,
 * lasting milliseconds, it is where the sample a following begin-capture
 * reuses is cheapest (model_mem_settled: PyTorch's first capture comes
 * right after its first kernels' libraries load). */
static void module_loaded(CUresult rc, CUmodule m)
{
	if (rc == CUDA_SUCCESS && m)
		nodes_module_loaded(m);
	model_mem_moved();
	model_mem_settled();
}

void cgh_cuModuleLoad_post(struct cg_call *c, struct cgh_frame *f, CUresult rc, CUmodule *module, const char *fname)
{
	module_loaded(rc, rc == CUDA_SUCCESS && module ? *module : NULL);
}

void cgh_cuModuleLoadData_post(struct cg_call *c, struct cgh_frame *f, CUresult rc, CUmodule *module, const void *image)
{
	module_loaded(rc, rc == CUDA_SUCCESS && module ? *module : NULL);
}

void cgh_cuModuleLoadDataEx_post(struct cg_call *c, struct cgh_frame *f, CUresult rc, CUmodule *module,
				 const void *image, unsigned int numOptions, CUjit_option *options, void **optionValues)
{
	module_loaded(rc, rc == CUDA_SUCCESS && module ? *module : NULL);
}

void cgh_cuModuleLoadFatBinary_post(struct cg_call *c, struct cgh_frame *f, CUresult rc, CUmodule *module,
				    const void *fatCubin)
{
	module_loaded(rc, rc == CUDA_SUCCESS && module ? *module : NULL);
}

void cgh_cuLibraryLoadData_post(struct cg_call *c, struct cgh_frame *f, CUresult rc, CUlibrary *library,
				const void *code, CUjit_option *jitOptions, void **jitOptionsValues,
				unsigned int numJitOptions, CUlibraryOption *libraryOptions, void **libraryOptionValues,
				unsigned int numLibraryOptions)
{
	module_loaded(rc, NULL);
}

void cgh_cuLibraryLoadFromFile_post(struct cg_call *c, struct cgh_frame *f, CUresult rc, CUlibrary *library,
				    const char *fileName, CUjit_option *jitOptions, void **jitOptionsValues,
				    unsigned int numJitOptions, CUlibraryOption *libraryOptions,
				    void **libraryOptionValues, unsigned int numLibraryOptions)
{
	module_loaded(rc, NULL);
}
