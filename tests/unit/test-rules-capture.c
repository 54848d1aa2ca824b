/* tests/unit/test-rules-capture.c -- the capture rules (shim/rules/capture.c)
 * as pure functions: hand-built capture views, no process, no stand-in. */
#include "rules-case.h"

#define ME 100
#define OTHER 200
#define S ((CUstream)0x30)

static struct cg_capture_view cap(uint64_t id, int mode, int tid, int named)
{
	return (struct cg_capture_view){
	    .id = id, .stream = S, .mode = mode, .tid = tid, .site = 8, .named = named, .tname = "worker"};
}

static struct cg_capture_view C;

/* ---- CGS007 ------------------------------------------------------------- */
static int unsafe_live(struct cg_verdict *o, int m)
{
	(void)m;
	C = cap(3, CU_STREAM_CAPTURE_MODE_GLOBAL, OTHER, 0);
	return rules_capture_unsafe("cuMemAllocHost_v2", NULL, &C, ME, o);
}
static int unsafe_none(struct cg_verdict *o, int m)
{
	(void)m;
	return rules_capture_unsafe("cuMemAllocHost_v2", NULL, NULL, ME, o);
}
static int unsafe_named(struct cg_verdict *o, int m)
{
	(void)m;
	C = cap(3, CU_STREAM_CAPTURE_MODE_GLOBAL, OTHER, 1);
	return rules_capture_unsafe("cuMemAllocHost_v2", NULL, &C, ME, o);
}

/* ---- CGS008 ------------------------------------------------------------- */
static CUstream un[2] = {(CUstream)0x41, (CUstream)0x42};
static uint32_t forks[2] = {11, 12};
static int unjoined(struct cg_verdict *o, int m)
{
	(void)m;
	C = cap(3, 0, ME, 0);
	return rules_capture_unjoined(3, S, un, forks, 2, &C, o);
}
static int joined(struct cg_verdict *o, int m)
{
	(void)m;
	return rules_capture_unjoined(3, S, un, forks, 0, NULL, o);
}

/* ---- CGS013 ------------------------------------------------------------- */
static int event_live(struct cg_verdict *o, int m)
{
	(void)m;
	C = cap(4, CU_STREAM_CAPTURE_MODE_RELAXED, ME, 0);
	return rules_capture_event("cuEventQuery", &C, o);
}
static int event_none(struct cg_verdict *o, int m)
{
	(void)m;
	return rules_capture_event("cuEventQuery", NULL, o);
}

/* ---- CGS014 ------------------------------------------------------------- */
static int legacy(CUstream s, int ptsz, int blocking, struct cg_verdict *o)
{
	C = cap(5, 0, ME, 0);
	return rules_capture_legacy("cuStreamQuery", s, ptsz, blocking ? &C : NULL, "queries the legacy default stream",
				    o);
}
static int legacy_null(struct cg_verdict *o, int m)
{
	(void)m;
	return legacy(NULL, 0, 1, o);
}
static int legacy_handle(struct cg_verdict *o, int m)
{
	(void)m;
	return legacy(CU_STREAM_LEGACY, 1, 1, o);
}
static int legacy_ptsz(struct cg_verdict *o, int m)
{
	(void)m;
	return legacy(NULL, 1, 1, o);
}
static int legacy_nonblocking(struct cg_verdict *o, int m)
{
	(void)m;
	return legacy(NULL, 0, 0, o);
}
static int legacy_own_stream(struct cg_verdict *o, int m)
{
	(void)m;
	return legacy(S, 0, 1, o);
}
/* A synchronous copy (the BLOCK rows, hooks/capture-map.c sync_check): the
 * legacy stream, NULL; its _ptds twin's is the per-thread stream. */
static int legacy_sync(CUstream s, int ptsz, int blocking, struct cg_verdict *o)
{
	C = cap(5, CU_STREAM_CAPTURE_MODE_RELAXED, OTHER, 0);
	return rules_capture_legacy("cuMemcpyDtoH_v2", s, ptsz, blocking ? &C : NULL,
				    "copies synchronously on the legacy default stream", o);
}
static int legacy_sync_copy(struct cg_verdict *o, int m)
{
	(void)m;
	return legacy_sync(NULL, 0, 1, o);
}
static int legacy_sync_ptds(struct cg_verdict *o, int m)
{
	(void)m;
	return legacy_sync(CU_STREAM_PER_THREAD, 1, 1, o);
}
static int legacy_sync_nonblocking(struct cg_verdict *o, int m)
{
	(void)m;
	return legacy_sync(NULL, 0, 0, o);
}

/* ---- CGS015 ------------------------------------------------------------- */
static struct cg_capture_view MINE;
static int merge(struct cg_verdict *o, int m)
{
	(void)m;
	C = cap(6, 0, OTHER, 0);
	MINE = cap(7, 0, ME, 0);
	return rules_capture_merge("cuStreamWaitEvent", 7, &C, &MINE, o);
}
static int merge_same(struct cg_verdict *o, int m)
{
	(void)m;
	C = cap(7, 0, ME, 0);
	MINE = C;
	return rules_capture_merge("cuStreamWaitEvent", 7, &C, &MINE, o);
}
static int merge_outside(struct cg_verdict *o, int m)
{
	(void)m;
	C = cap(6, 0, OTHER, 0);
	return rules_capture_merge("cuStreamWaitEvent", 0, &C, NULL, o);
}

/* ---- CGS016 ------------------------------------------------------------- */
static int end(int mode, int tid, struct cg_verdict *o)
{
	C = cap(9, mode, tid, 0);
	return rules_capture_end_thread("cuStreamEndCapture", 9, S, &C, ME, o);
}
static int end_other_global(struct cg_verdict *o, int m)
{
	(void)m;
	return end(CU_STREAM_CAPTURE_MODE_GLOBAL, OTHER, o);
}
static int end_other_tl(struct cg_verdict *o, int m)
{
	(void)m;
	return end(CU_STREAM_CAPTURE_MODE_THREAD_LOCAL, OTHER, o);
}
static int end_own(struct cg_verdict *o, int m)
{
	(void)m;
	return end(CU_STREAM_CAPTURE_MODE_GLOBAL, ME, o);
}
static int end_relaxed(struct cg_verdict *o, int m)
{
	(void)m;
	return end(CU_STREAM_CAPTURE_MODE_RELAXED, OTHER, o);
}

/* ---- CGS021, CGS022 ------------------------------------------------------ */
static int end_none(struct cg_verdict *o, int m)
{
	(void)m;
	return rules_capture_end_not_capturing("cuStreamEndCapture", (CUstream)0x41, 1, o);
}
static int end_capturing(struct cg_verdict *o, int m)
{
	(void)m;
	return rules_capture_end_not_capturing("cuStreamEndCapture", (CUstream)0x41, 0, o);
}
static int end_joined(struct cg_verdict *o, int m)
{
	(void)m;
	C = cap(10, CU_STREAM_CAPTURE_MODE_RELAXED, ME, 0);
	return rules_capture_end_unmatched("cuStreamEndCapture", (CUstream)0x41, &C, o);
}
static int end_origin(struct cg_verdict *o, int m)
{
	(void)m;
	C = cap(10, CU_STREAM_CAPTURE_MODE_GLOBAL, ME, 0);
	return rules_capture_end_unmatched("cuStreamEndCapture", S, &C, o);
}
static int end_unknown(struct cg_verdict *o, int m)
{
	(void)m;
	return rules_capture_end_unmatched("cuStreamEndCapture", (CUstream)0x41, NULL, o);
}
static int begin_nested(struct cg_verdict *o, int m)
{
	(void)m;
	C = cap(11, CU_STREAM_CAPTURE_MODE_GLOBAL, ME, 0);
	return rules_capture_begin_capturing("cuStreamBeginCapture_v2", S, &C, o);
}
static int begin_joined(struct cg_verdict *o, int m)
{
	(void)m;
	C = cap(11, CU_STREAM_CAPTURE_MODE_RELAXED, OTHER, 0);
	return rules_capture_begin_capturing("cuStreamBeginCapture_v2", (CUstream)0x41, &C, o);
}
static int begin_named(struct cg_verdict *o, int m)
{
	(void)m;
	C = cap(11, CU_STREAM_CAPTURE_MODE_GLOBAL, ME, 1);
	return rules_capture_begin_capturing("cuStreamBeginCapture_v2", S, &C, o);
}
static int begin_free(struct cg_verdict *o, int m)
{
	(void)m;
	return rules_capture_begin_capturing("cuStreamBeginCapture_v2", S, NULL, o);
}

/* ---- CGS024, CGS025 ----------------------------------------------------- */
static int escape(const char *route, const char *kernel, const struct cg_capture_view *cv, struct cg_verdict *o)
{
	struct cg_escape_ev ev = {(CUstream)0x41, route, kernel, "sets memory", 0};
	return rules_capture_escape("cuLaunchKernel", &ev, cv, o);
}
static int escape_cached(struct cg_verdict *o, int m)
{
	(void)m;
	C = cap(12, CU_STREAM_CAPTURE_MODE_GLOBAL, ME, 0);
	return escape("other_stream", "_Z6k_fillPfld", &C, o);
}
static int escape_legacy(struct cg_verdict *o, int m)
{
	(void)m;
	C = cap(12, CU_STREAM_CAPTURE_MODE_GLOBAL, ME, 0);
	return escape("legacy_stream", NULL, &C, o);
}
static int escape_sync_ptds(struct cg_verdict *o, int m)
{
	struct cg_escape_ev ev = {CU_STREAM_PER_THREAD, "per_thread_stream", NULL, "copies memory synchronously", 0, 1};
	(void)m;
	C = cap(12, CU_STREAM_CAPTURE_MODE_GLOBAL, ME, 0);
	return rules_capture_escape("cuMemcpyDtoH_v2_ptds", &ev, &C, o);
}
static int escape_no_capture(struct cg_verdict *o, int m)
{
	(void)m;
	return escape("other_stream", "_Z6k_fillPfld", NULL, o);
}
static int empty_graph(struct cg_verdict *o, int m)
{
	(void)m;
	C = cap(13, CU_STREAM_CAPTURE_MODE_GLOBAL, ME, 0);
	return rules_capture_empty((CUgraph)0x77, 2, "_Z6k_fillPfld", &C, o);
}
static int empty_nothing_escaped(struct cg_verdict *o, int m)
{
	(void)m;
	C = cap(13, CU_STREAM_CAPTURE_MODE_GLOBAL, ME, 0);
	return rules_capture_empty((CUgraph)0x77, 0, "", &C, o);
}

/* ---- CGS026 -------------------------------------------------------------- */
static int again(long long captures, int sets, struct cg_verdict *o)
{
	struct model_churn_view cv = {.key = 9,
				      .site = 9,
				      .shape = 0xabcull,
				      .ptr_sets = sets,
				      .nodes = 2,
				      .captures = captures,
				      .insts = captures - 1,
				      .cap_ns = 3000000,
				      .inst_ns = 1000000,
				      .first_ns = 400000,
				      .mem_bytes = 4096};
	return rules_capture_again(&cv, (CUgraph)0x77, o);
}
static int again_ten(struct cg_verdict *o, int m)
{
	(void)m;
	return again(10, 1, o);
}
static int again_buffers(struct cg_verdict *o, int m)
{
	(void)m;
	return again(10, 3, o);
}
static int again_first(struct cg_verdict *o, int m)
{
	(void)m;
	return again(1, 1, o);
}

static const struct rule_case capture_cases[] = {
    {"CGS007", FIRES, "pinned allocation during another thread's global capture", unsafe_live,
     CUDA_ERROR_STREAM_CAPTURE_UNSUPPORTED, "capture", 3,
     "cuMemAllocHost_v2 allocates pinned host memory while capture 3 (global mode, stream 0x30, begun by thread "
     "200 \"worker\") is live on another thread"},
    {"CGS007", SILENT, "no colliding capture", unsafe_none, 0, NULL, 0, NULL},
    {"CGS007", SILENT, "capture named abandoned: counted", unsafe_named, 0, NULL, 0, NULL},
    {"CGS008", FIRES, "two forks not joined", unjoined, CUDA_ERROR_STREAM_CAPTURE_UNJOINED, "fork_site", 11,
     "ends with 2 forked stream(s) not joined back"},
    {"CGS008", SILENT, "every fork joined", joined, 0, NULL, 0, NULL},
    {"CGS013", FIRES, "query of a captured event", event_live, CUDA_ERROR_CAPTURED_EVENT, "capture", 4,
     "asks the host about an event recorded in the capture"},
    {"CGS013", SILENT, "event outside any capture", event_none, 0, NULL, 0, NULL},
    {"CGS014", FIRES, "NULL stream under a blocking capture", legacy_null, CUDA_ERROR_STREAM_CAPTURE_IMPLICIT,
     "capture", 5, "the legacy stream synchronises with every blocking stream"},
    {"CGS014", FIRES, "CU_STREAM_LEGACY under a blocking capture", legacy_handle, CUDA_ERROR_STREAM_CAPTURE_IMPLICIT,
     NULL, 0, NULL},
    {"CGS014", SILENT, "NULL in a _ptsz call is the per-thread stream", legacy_ptsz, 0, NULL, 0, NULL},
    {"CGS014", SILENT, "no blocking capture", legacy_nonblocking, 0, NULL, 0, NULL},
    {"CGS014", SILENT, "a stream of its own", legacy_own_stream, 0, NULL, 0, NULL},
    {"CGS014", FIRES, "a synchronous copy under another thread's blocking relaxed capture", legacy_sync_copy,
     CUDA_ERROR_STREAM_CAPTURE_IMPLICIT, "capture", 5,
     "cuMemcpyDtoH_v2 copies synchronously on the legacy default stream while capture 5 (relaxed mode"},
    {"CGS014", SILENT, "a _ptds synchronous copy is on the per-thread stream", legacy_sync_ptds, 0, NULL, 0, NULL},
    {"CGS014", SILENT, "a synchronous copy with no blocking capture", legacy_sync_nonblocking, 0, NULL, 0, NULL},
    {"CGS015", FIRES, "wait on another capture's event", merge, CUDA_ERROR_STREAM_CAPTURE_MERGE, "capture", 7,
     "makes a stream of capture 7 wait on an event recorded in capture 6"},
    {"CGS015", SILENT, "event of the same capture", merge_same, 0, NULL, 0, NULL},
    {"CGS015", SILENT, "waiting stream not capturing", merge_outside, 0, NULL, 0, NULL},
    {"CGS016", FIRES, "global capture ended on another thread", end_other_global,
     CUDA_ERROR_STREAM_CAPTURE_WRONG_THREAD, "capture_tid", OTHER, "ends the capture from another thread"},
    {"CGS016", FIRES, "thread-local capture ended on another thread", end_other_tl,
     CUDA_ERROR_STREAM_CAPTURE_WRONG_THREAD, NULL, 0, NULL},
    {"CGS016", SILENT, "ended on its own thread", end_own, 0, NULL, 0, NULL},
    {"CGS016", SILENT, "relaxed capture", end_relaxed, 0, NULL, 0, NULL},
    {"CGS021", FIRES, "end on a stream that captures nothing", end_none, CUDA_ERROR_ILLEGAL_STATE, "stream", 0x41,
     "cuStreamEndCapture on stream 0x41, which is not capturing: the call fails with 401"},
    {"CGS021", SILENT, "the stream is capturing", end_capturing, 0, NULL, 0, NULL},
    {"CGS022", FIRES, "end on a stream that joined the capture", end_joined, CUDA_ERROR_STREAM_CAPTURE_UNMATCHED,
     "joined_stream", 0x41, "ends the capture on stream 0x41, which joined it through an event wait"},
    {"CGS022", FIRES, "the capture is named", end_joined, CUDA_ERROR_STREAM_CAPTURE_UNMATCHED, "capture", 10,
     "903, and the capture is invalidated"},
    {"CGS022", SILENT, "end on the origin stream", end_origin, 0, NULL, 0, NULL},
    {"CGS022", SILENT, "capture unknown to the model", end_unknown, 0, NULL, 0, NULL},
    {"CGS023", FIRES, "begin on a stream capturing already", begin_nested, CUDA_ERROR_ILLEGAL_STATE, "capture", 11,
     "begins a capture on stream 0x30, which is capturing already"},
    {"CGS023", FIRES, "begin on a stream that joined a capture", begin_joined, CUDA_ERROR_ILLEGAL_STATE, "begin_stream",
     0x41, "which joined that capture through an event wait"},
    {"CGS023", SILENT, "the stream captures nothing", begin_free, 0, NULL, 0, NULL},
    {"CGS023", SILENT, "capture named abandoned: counted", begin_named, 0, NULL, 0, NULL},
    {"CGS024", FIRES, "kernel on a stream cached before the capture", escape_cached, -1, "launch_stream", 0x41,
     "launches kernel _Z6k_fillPfld on stream 0x41 while capture 12"},
    {"CGS024", FIRES, "the route is named", escape_cached, -1, "capture", 12, "that stream is not in the capture"},
    {"CGS024", FIRES, "a memset on the legacy stream", escape_legacy, -1, "device", 0,
     "sets memory on stream 0x41 while capture 12 (global mode, stream 0x30, begun by thread 100 \"worker\") is "
     "live: the legacy stream does not synchronise with a non-blocking capturing stream"},
    {"CGS024", FIRES, "a synchronous _ptds copy on the per-thread stream", escape_sync_ptds, -1, "launch_stream", 2,
     "cuMemcpyDtoH_v2_ptds copies memory synchronously on stream 0x2 while capture 12"},
    {"CGS024", SILENT, "no capture of this thread's live", escape_no_capture, 0, NULL, 0, NULL},
    {"CGS025", FIRES, "no kernel node, two kernels escaped", empty_graph, -1, "escaped_kernels", 2,
     "ended into graph 0x77 with no kernel node, while its thread launched 2 kernel(s) outside it (_Z6k_fillPfld)"},
    {"CGS025", SILENT, "nothing escaped", empty_nothing_escaped, 0, NULL, 0, NULL},
    {"CGS026", FIRES, "the same graph 10 times", again_ten, -1, "captures", 10,
     "captured the same graph (2 nodes, fingerprint 0000000000000abc) 10 times and instantiated it 9 times, 4.000 ms "
     "of capture and instantiation so far (3.600 ms past the first), 4096 bytes"},
    {"CGS026", FIRES, "over three buffer sets", again_buffers, -1, "buffer_sets", 3,
     "over 3 sets of buffers: keep one executable and move it with cuGraphExecUpdate"},
    {"CGS026", FIRES, "the waste past the first", again_ten, -1, "wasted_ns", 3600000, NULL},
    {"CGS026", SILENT, "a first capture", again_first, 0, NULL, 0, NULL},
};
RULE_CASES_TEST(capture_cases)

/* CGS024's grade: a kernel or an async copy that escapes is a warning, a
 * synchronous copy or memset a hint (a library's set-up copy, made for
 * now: cuFFT's plan creation in CuPy's capture test). */
static void test_escape_grades(void **state)
{
	struct cg_verdict v;
	(void)state;
	assert_int_equal(escape_cached(&v, 0), 1);
	assert_int_equal(v.hint, 0);
	assert_int_equal(escape_legacy(&v, 0), 1);
	assert_int_equal(v.hint, 0);
	assert_int_equal(escape_sync_ptds(&v, 0), 1);
	assert_int_equal(v.hint, 1);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_capture_cases),
	    cmocka_unit_test(test_escape_grades),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
