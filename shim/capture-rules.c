/*
 * shim/capture-rules.c -- verdicts of the capture rules the map measured
 * (docs/capture-map.md, issue 14) beyond CGS007: each is called by a hook
 * before it forwards, decides from the model alone (no driver call, so
 * nothing here can itself break a capture), and when the call will break a
 * capture writes the violation through cg_rule_capture_violation (the
 * calling thread's id and name, its site, the capture's id, stream, mode,
 * owning thread and begin site) and returns 1. The capture then records
 * the call as its breaker: its failed end links back here.
 *
 *   CGS013  cuEventQuery/cuEventSynchronize of an event recorded in a live
 *           capture: 907, the capture invalidated (every mode, any thread)
 *   CGS014  the legacy stream (NULL outside _ptsz, CU_STREAM_LEGACY) used
 *           while a blocking stream captures: 906, invalidated
 *   CGS015  a stream of one capture waits on an event of another: 902,
 *           both invalidated
 *   CGS016  a global or thread-local capture ended from another thread: 908
 */
#include <stdio.h>
#include <stdatomic.h>

#include "call.h"
#include "model.h"
#include "rules.h"
#include "site.h"

#define CAPRULE_SKIP 2 /* this function and the hook */

static const char *caprule_mode(int m)
{
	return m == 0 ? "global" : m == 1 ? "thread_local" : m == 2 ? "relaxed" : "?";
}

static void caprule_write(int rule, const char *api, const struct cg_capture_view *cv, int rc, const char *what,
			  const char *effect)
{
	char msg[480];
	snprintf(msg, sizeof msg, "%s %s while capture %llu (%s mode, stream 0x%llx, begun by thread %d%s%s%s) is live: %s",
		 api, what, (unsigned long long)cv->id, caprule_mode(cv->mode), (unsigned long long)(uintptr_t)cv->stream,
		 cv->tid, cv->tname[0] ? " \"" : "", cv->tname, cv->tname[0] ? "\"" : "", effect);
	cg_rule_capture_violation(rule, api, cv, rc, msg, cg_site_here(CAPRULE_SKIP + 1));
}

int cg_caprule_event(const char *api, CUevent ev)
{
	struct cg_capture_view cv;
	if (!atomic_load_explicit(&cg_live_captures, memory_order_relaxed) || !model_capture_of_event(ev, &cv))
		return 0;
	caprule_write(R_CAPTURED_EVENT, api, &cv, CUDA_ERROR_CAPTURED_EVENT,
		      "asks the host about an event recorded in the capture",
		      "the call fails with 907 and invalidates that capture (its end returns 901); wait with "
		      "cuStreamWaitEvent inside the capture, query after it ends");
	return 1;
}

int cg_caprule_is_legacy(CUstream s, int ptsz)
{
	return s == CU_STREAM_LEGACY || (!s && !ptsz);
}

int cg_caprule_legacy(const char *api, CUstream s, int ptsz, const char *what)
{
	struct cg_capture_view cv;
	if (!cg_caprule_is_legacy(s, ptsz) || !atomic_load_explicit(&cg_live_captures, memory_order_relaxed) ||
	    !model_capture_blocking(&cv))
		return 0;
	caprule_write(R_LEGACY_STREAM, api, &cv, CUDA_ERROR_STREAM_CAPTURE_IMPLICIT, what,
		      "the legacy stream synchronises with every blocking stream, the capturing one among them: 906, "
		      "the capture invalidated (its end returns 901); use a non-blocking stream for the capture or a "
		      "stream of your own for this work");
	return 1;
}

int cg_caprule_merge(const char *api, uint64_t capture, CUevent ev)
{
	struct cg_capture_view cv, mine;
	if (!capture || !model_capture_of_event(ev, &cv) || cv.id == capture || !model_capture_find(capture, &mine))
		return 0;
	{
		char what[160];
		snprintf(what, sizeof what, "makes a stream of capture %llu wait on an event recorded in capture %llu",
			 (unsigned long long)capture, (unsigned long long)cv.id);
		caprule_write(R_CAPTURE_MERGE, api, &mine, CUDA_ERROR_STREAM_CAPTURE_MERGE, what,
			      "two captures cannot merge: 902, both invalidated (both ends return 901)");
	}
	model_capture_breaker(cv.id, api, cg_rule_id(R_CAPTURE_MERGE), CUDA_ERROR_STREAM_CAPTURE_MERGE,
			      cg_site_here(CAPRULE_SKIP));
	return 1;
}

int cg_caprule_end_thread(const char *api, uint64_t capture, CUstream s)
{
	struct cg_capture_view cv;
	if (!capture || !model_capture_find(capture, &cv) || cv.stream != s || cv.tid == cg_gettid() ||
	    cv.mode == CU_STREAM_CAPTURE_MODE_RELAXED)
		return 0;
	caprule_write(R_END_WRONG_THREAD, api, &cv, CUDA_ERROR_STREAM_CAPTURE_WRONG_THREAD,
		      "ends the capture from another thread than the one that began it",
		      "a global or thread-local capture must end on its own thread: 908, and the capture stays open");
	return 1;
}

/* cuCtxSynchronize (both forms): the device's streams include the
 * capturing ones, so the driver refuses it (900, CGS007) while any capture
 * is live, whatever the modes (capture-map.md), unlike the rest of the
 * unsafe class. */
int cg_caprule_device_sync(const char *api)
{
	struct cg_capture_view cv;
	if (!atomic_load_explicit(&cg_live_captures, memory_order_relaxed) || !model_capture_any(&cv))
		return 0;
	if (cv.named)
		cg_violation_counted(R_CAPTURE_UNSAFE); /* named abandoned already */
	else
		cg_rule_unsafe_violation(api, &cv, "synchronizes the device, whose streams include the capturing one");
	return 1;
}

/* A call no rule predicted failed with a capture error (900-908) against
 * capture: it is the first failing call seen, the link the capture's failed
 * end points back to (unless a named call came first). Only on failure. */
void cg_caprule_failed(const char *api, uint64_t capture, int rc)
{
	if (capture && rc >= CUDA_ERROR_STREAM_CAPTURE_UNSUPPORTED && rc <= CUDA_ERROR_STREAM_CAPTURE_WRONG_THREAD)
		model_capture_breaker(capture, api, NULL, rc, cg_site_here(CAPRULE_SKIP));
}

void cg_caprule_after(const char *api, int rule, int predicted_rc, int rc)
{
	if (rc != predicted_rc)
		cg_mismatch(api, rule, predicted_rc, rc, -1, -1);
}
