/*
 * shim/rules/capture.c -- the capture rules, pure verdicts (verdict.h), as
 * measured by the capture map (docs/capture-map.md, issue 14):
 *
 *   CGS007  a capture-unsafe call while a capture its thread's mode
 *           collides with is live: 900, the capture invalidated
 *   CGS008  a capture ends with forked streams not joined back: 904
 *   CGS013  cuEventQuery/cuEventSynchronize of an event recorded in a live
 *           capture: 907, the capture invalidated (every mode, any thread)
 *   CGS014  the legacy stream (NULL outside _ptsz, CU_STREAM_LEGACY) used
 *           while a blocking stream captures: 906, invalidated
 *   CGS015  a stream of one capture waits on an event of another: 902,
 *           both invalidated
 *   CGS016  a global or thread-local capture ended from another thread: 908
 *   CGS021  a capture ended on a stream that is not capturing: 401
 *   CGS022  a capture ended on a stream that joined another stream's
 *           capture (not its origin): 903, that capture invalidated
 *   CGS023  a capture begun on a stream already capturing (its own capture
 *           or one it joined): 401 (the stand-in's answer; the GPU row
 *           measures it), the capture going on
 *   CGS024  the thread that began a live capture launches, copies or sets
 *           memory on a stream the driver says is in no capture: accepted,
 *           run once now, missing from every replay (warn)
 *   CGS025  a capture ends with no kernel node while its thread launched
 *           kernels outside it (CGS024's): the graph is empty of work (warn)
 *   CGS026  one capture site captured the same graph (fingerprint: topology,
 *           node types, kernels, launch dimensions) threshold times: the
 *           time and memory spent so far (hint, once per site and graph)
 *
 * Each takes the capture(s) the hook looked up (NULL: none) and the calling
 * thread's id. Every capture-breaking verdict carries the same fields: the
 * capture (id, stream, mode, owning thread's id and name, begin site), the
 * calling thread (CG_VF_CALLER) and the call's site (CG_VF_SITE_HERE: the
 * writer gets the site the breaker note took). A capture already named
 * abandoned gives a repeat verdict: counted, not written.
 */
#include <stdio.h>
#include <string.h>

#include "../hot.h"
#include "../rules.h"
#include "verdict.h"

static const char *rules_capture_mode(int m)
{
	return m == 0 ? "global" : m == 1 ? "thread_local" : m == 2 ? "relaxed" : "?";
}

/* What a capture-unsafe call does, for the message (by entry point). */
static const char *capture_unsafe_what(const char *api)
{
	if (!strncmp(api, "cuMemHostAlloc", 14) || !strncmp(api, "cuMemAllocHost", 14))
		return "allocates pinned host memory";
	if (!strncmp(api, "cuMemHostRegister", 17))
		return "registers (pins) host memory";
	if (!strncmp(api, "cuMemFreeHost", 13))
		return "frees pinned host memory";
	if (!strncmp(api, "cuMemHostUnregister", 19))
		return "unregisters host memory";
	if (!strncmp(api, "cuModuleUnload", 14) || !strncmp(api, "cuLibraryUnload", 15))
		return "unloads a module or library";
	return "makes a capture-unsafe call";
}

static void capture_fields(struct cg_verdict *v, const struct cg_capture_view *cv)
{
	cg_vf_u64(v, "capture", cv->id);
	cg_vf_hex(v, "stream", (uintptr_t)cv->stream);
	cg_vf_word(v, "mode", rules_capture_mode(cv->mode));
	cg_vf_int(v, "capture_tid", cv->tid);
	cg_vf_str(v, "capture_thread", cv->tname);
	cg_vf_caller(v);
	cg_vf_site_here(v, "site");
	cg_vf_site(v, "begin_site", cv->site);
}

/* The message of CGS013-CGS016: the call, the capture, the effect. */
static void capture_msg(struct cg_verdict *v, const char *api, const struct cg_capture_view *cv, const char *what,
			const char *effect)
{
	snprintf(v->msg, 480, "%s %s while capture %llu (%s mode, stream 0x%llx, begun by thread %d%s%s%s) is live: %s",
		 api, what, (unsigned long long)cv->id, rules_capture_mode(cv->mode),
		 (unsigned long long)(uintptr_t)cv->stream, cv->tid, cv->tname[0] ? " \"" : "", cv->tname,
		 cv->tname[0] ? "\"" : "", effect);
}

int rules_capture_unsafe(const char *api, const char *what, const struct cg_capture_view *cv, int me,
			 struct cg_verdict *v)
{
	if (!cv)
		return 0;
	cg_verdict_init(v, R_CAPTURE_UNSAFE, CUDA_ERROR_STREAM_CAPTURE_UNSUPPORTED);
	/* A capture named abandoned refuses every such call until the process
	 * ends (a pinned-allocation loop then fails thousands of times): the
	 * abandoned record said it once; these are counted. */
	if (cv->named) {
		v->repeat = 1;
		return 1;
	}
	snprintf(v->msg, 400,
		 "%s %s while capture %llu (%s mode, stream 0x%llx, begun by thread %d%s%s%s) is live%s: the call "
		 "fails with 900 and invalidates that capture (its end returns 901)",
		 api, what ? what : capture_unsafe_what(api), (unsigned long long)cv->id, rules_capture_mode(cv->mode),
		 (unsigned long long)(uintptr_t)cv->stream, cv->tid, cv->tname[0] ? " \"" : "", cv->tname,
		 cv->tname[0] ? "\"" : "", cv->tid == me ? "" : " on another thread");
	capture_fields(v, cv);
	return 1;
}

int rules_capture_event(const char *api, const struct cg_capture_view *cv, struct cg_verdict *v)
{
	if (!cv)
		return 0;
	cg_verdict_init(v, R_CAPTURED_EVENT, CUDA_ERROR_CAPTURED_EVENT);
	capture_msg(v, api, cv, "asks the host about an event recorded in the capture",
		    "the call fails with 907 and invalidates that capture (its end returns 901); wait with "
		    "cuStreamWaitEvent inside the capture, query after it ends");
	capture_fields(v, cv);
	return 1;
}

int rules_capture_is_legacy(CUstream s, int ptsz)
{
	return cg_caprule_is_legacy(s, ptsz);
}

int rules_capture_legacy(const char *api, CUstream s, int ptsz, const struct cg_capture_view *blocking,
			 const char *what, struct cg_verdict *v)
{
	if (!rules_capture_is_legacy(s, ptsz) || !blocking)
		return 0;
	cg_verdict_init(v, R_LEGACY_STREAM, CUDA_ERROR_STREAM_CAPTURE_IMPLICIT);
	capture_msg(v, api, blocking, what,
		    "the legacy stream synchronises with every blocking stream, the capturing one among them: 906, "
		    "the capture invalidated (its end returns 901); use a non-blocking stream for the capture or a "
		    "stream of your own for this work");
	capture_fields(v, blocking);
	return 1;
}

int rules_capture_merge(const char *api, uint64_t capture, const struct cg_capture_view *other,
			const struct cg_capture_view *mine, struct cg_verdict *v)
{
	char what[160];
	if (!capture || !other || other->id == capture || !mine)
		return 0;
	cg_verdict_init(v, R_CAPTURE_MERGE, CUDA_ERROR_STREAM_CAPTURE_MERGE);
	snprintf(what, sizeof what, "makes a stream of capture %llu wait on an event recorded in capture %llu",
		 (unsigned long long)capture, (unsigned long long)other->id);
	capture_msg(v, api, mine, what, "two captures cannot merge: 902, both invalidated (both ends return 901)");
	capture_fields(v, mine);
	return 1;
}

CG_HOT int rules_capture_end_thread(const char *api, uint64_t capture, CUstream s, const struct cg_capture_view *cv,
				    int me, struct cg_verdict *v)
{
	if (!capture || !cv || cv->stream != s || cv->tid == me || cv->mode == CU_STREAM_CAPTURE_MODE_RELAXED)
		return 0;
	cg_verdict_init(v, R_END_WRONG_THREAD, CUDA_ERROR_STREAM_CAPTURE_WRONG_THREAD);
	capture_msg(v, api, cv, "ends the capture from another thread than the one that began it",
		    "a global or thread-local capture must end on its own thread: 908, and the capture stays open");
	capture_fields(v, cv);
	return 1;
}

int rules_capture_unjoined(uint64_t capture, CUstream s, CUstream const *unjoined, const uint32_t *fork_sites, int n,
			   const struct cg_capture_view *cv, struct cg_verdict *v)
{
	if (!capture || n <= 0)
		return 0;
	cg_verdict_init(v, R_UNJOINED, CUDA_ERROR_STREAM_CAPTURE_UNJOINED);
	snprintf(v->msg, 256,
		 "capture %llu on stream 0x%llx ends with %d forked stream(s) not joined back: make the "
		 "origin stream wait on an event recorded on each forked stream after its last work",
		 (unsigned long long)capture, (unsigned long long)(uintptr_t)s, n);
	cg_vf_u64(v, "capture", capture);
	cg_vf_hex(v, "stream", (uintptr_t)s);
	cg_vf_handles(v, "unjoined", (void *const *)unjoined, n);
	cg_vf_site(v, "fork_site", fork_sites[0]);
	if (cv)
		cg_vf_site(v, "begin_site", cv->site);
	return 1;
}

int rules_capture_end_not_capturing(const char *api, CUstream s, int none, struct cg_verdict *v)
{
	if (!none)
		return 0;
	cg_verdict_init(v, R_END_NOT_CAPTURING, CUDA_ERROR_ILLEGAL_STATE);
	snprintf(v->msg, 400,
		 "%s on stream 0x%llx, which is not capturing: the call fails with 401 (cudaErrorIllegalState) and "
		 "returns no graph; end a capture on the stream that began it, once",
		 api, (unsigned long long)(uintptr_t)s);
	cg_vf_hex(v, "stream", (uintptr_t)s);
	cg_vf_caller(v);
	cg_vf_site_here(v, "site");
	return 1;
}

/* CGS022 and CGS023: api does something (does) on stream s, which is in
 * capture cv (which: how); s is the record's field key. */
static void on_stream(struct cg_verdict *v, const char *api, const struct cg_capture_view *cv, CUstream s,
		      const char *does, const char *which, const char *effect, const char *key)
{
	char what[160];
	snprintf(what, sizeof what, "%s on stream 0x%llx, which %s", does, (unsigned long long)(uintptr_t)s, which);
	capture_msg(v, api, cv, what, effect);
	cg_vf_hex(v, key, (uintptr_t)s);
	capture_fields(v, cv);
}

CG_HOT int rules_capture_end_unmatched(const char *api, CUstream s, const struct cg_capture_view *cv,
				       struct cg_verdict *v)
{
	if (!cv || cv->stream == s)
		return 0;
	cg_verdict_init(v, R_END_UNMATCHED, CUDA_ERROR_STREAM_CAPTURE_UNMATCHED);
	on_stream(v, api, cv, s, "ends the capture", "joined it through an event wait",
		  "only the origin stream can end a capture: 903, and the capture is invalidated (the origin's end "
		  "returns 901)",
		  "joined_stream");
	return 1;
}

int rules_capture_begin_capturing(const char *api, CUstream s, const struct cg_capture_view *cv, struct cg_verdict *v)
{
	if (!cv)
		return 0;
	cg_verdict_init(v, R_BEGIN_CAPTURING, CUDA_ERROR_ILLEGAL_STATE);
	if (cv->named) { /* named abandoned already: its refusals are counted */
		v->repeat = 1;
		return 1;
	}
	on_stream(v, api, cv, s, "begins a capture",
		  cv->stream == s ? "is capturing already" : "joined that capture through an event wait",
		  "captures do not nest: the call fails with 401 (cudaErrorIllegalState) and the capture goes on; "
		  "end it first, or capture on another stream",
		  "begin_stream");
	return 1;
}

/* Why the work went elsewhere, for the message. */
static const char *escape_why(const char *route)
{
	if (!strcmp(route, "legacy_stream"))
		return "the legacy stream does not synchronise with a non-blocking capturing stream";
	if (!strcmp(route, "per_thread_stream"))
		return "the per-thread default stream is not the capturing stream";
	return "that stream is not in the capture (a handle cached before it?)";
}

int rules_capture_escape(const char *api, const struct cg_escape_ev *ev, const struct cg_capture_view *cv,
			 struct cg_verdict *v)
{
	char what[200], effect[400];
	if (!ev || !cv || !ev->route)
		return 0;
	cg_verdict_init(v, R_ESCAPED, -1);
	if (ev->kernel)
		snprintf(what, sizeof what, "launches kernel %.120s on stream 0x%llx", ev->kernel,
			 (unsigned long long)(uintptr_t)ev->s);
	else
		snprintf(what, sizeof what, "%s on stream 0x%llx", ev->what ? ev->what : "enqueues work",
			 (unsigned long long)(uintptr_t)ev->s);
	snprintf(effect, sizeof effect,
		 "%s; it runs once, now, and every replay of the graph lacks it: use the capturing stream, or join "
		 "this one to the capture with an event wait",
		 escape_why(ev->route));
	capture_msg(v, api, cv, what, effect);
	/* A synchronous copy or memset is made for now (its caller waits for
	 * it): libraries copy set-up data so, e.g. cuFFT's plan creation
	 * inside CuPy's own capture test (test_capture_run_on_same_stream,
	 * measured on the H200 2026-11-29), and nothing the shim checks tells
	 * that from a copy meant to be replayed: a hint. */
	v->hint = ev->sync != 0;
	cg_vf_hex(v, "launch_stream", (uintptr_t)ev->s);
	cg_vf_word(v, "route", ev->route);
	if (ev->kernel)
		cg_vf_str(v, "kernel", ev->kernel);
	if (ev->device >= 0)
		cg_vf_int(v, "device", ev->device);
	capture_fields(v, cv);
	return 1;
}

int rules_capture_empty(CUgraph g, int n, const char *kernels, const struct cg_capture_view *cv, struct cg_verdict *v)
{
	if (!cv || n <= 0)
		return 0;
	cg_verdict_init(v, R_EMPTY_GRAPH, -1);
	snprintf(v->msg, 480,
		 "capture %llu on stream 0x%llx ended into graph 0x%llx with no kernel node, while its thread launched "
		 "%d kernel(s) outside it (%.200s): the graph replays none of that work",
		 (unsigned long long)cv->id, (unsigned long long)(uintptr_t)cv->stream,
		 (unsigned long long)(uintptr_t)g, n, kernels && kernels[0] ? kernels : "names unknown");
	cg_vf_u64(v, "capture", cv->id);
	cg_vf_hex(v, "stream", (uintptr_t)cv->stream);
	cg_vf_hex(v, "graph", (uintptr_t)g);
	cg_vf_int(v, "escaped_kernels", n);
	if (kernels && kernels[0])
		cg_vf_str(v, "kernels", kernels);
	cg_vf_caller(v);
	cg_vf_site_here(v, "site");
	cg_vf_site(v, "begin_site", cv->site);
	return 1;
}

int rules_capture_again(const struct model_churn_view *cv, CUgraph g, struct cg_verdict *v)
{
	char bufs[120];
	if (!cv || cv->captures < 2)
		return 0;
	cg_verdict_init(v, R_RECAPTURE, -1);
	if (cv->ptr_sets <= 1)
		snprintf(bufs, sizeof bufs,
			 "over the same buffers every time: keep the executable and launch it again");
	else
		snprintf(bufs, sizeof bufs,
			 "over %d%s sets of buffers: keep one executable and move it with cuGraphExecUpdate",
			 cv->ptr_sets, cv->more_ptrs ? "+" : "");
	snprintf(v->msg, CG_VERDICT_MSG,
		 "this site captured the same graph (%d nodes, fingerprint %016llx) %lld times and instantiated it "
		 "%lld times, %.3f ms of capture and instantiation so far (%.3f ms past the first), %llu bytes of "
		 "graph memory a graph; %s",
		 cv->nodes, (unsigned long long)cv->shape, cv->captures, cv->insts,
		 (double)(cv->cap_ns + cv->inst_ns) / 1e6, (double)model_churn_wasted(cv) / 1e6,
		 (unsigned long long)cv->mem_bytes, bufs);
	cg_vf_hex(v, "graph", (uintptr_t)g);
	cg_vf_hex(v, "fingerprint", cv->shape);
	cg_vf_int(v, "nodes", cv->nodes);
	cg_vf_int(v, "captures", cv->captures);
	cg_vf_int(v, "instantiations", cv->insts);
	cg_vf_u64(v, "capture_ns", cv->cap_ns);
	cg_vf_u64(v, "instantiate_ns", cv->inst_ns);
	cg_vf_u64(v, "wasted_ns", model_churn_wasted(cv));
	cg_vf_u64(v, "graph_mem_bytes", cv->mem_bytes);
	cg_vf_int(v, "buffer_sets", cv->ptr_sets);
	cg_vf_caller(v);
	cg_vf_site(v, "begin_site", cv->site);
	return 1;
}
