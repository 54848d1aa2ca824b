/*
 * tests/tools/ci_app.c -- a program for the CI outputs' tests (test_ci.py),
 * against the stand-in runtime:
 *   ci_app clean    capture, instantiate, an update of the same shape: no finding
 *   ci_app cgs001   one CGS001 (update to a graph with one more node) in update_a
 *   ci_app new      that one, and a second CGS001 from another function (update_b)
 *   ci_app nvtx     the CGS001 inside NVTX ranges "outer" > "decode" (nvtx3)
 *   ci_app label    the CGS001 inside cgshim_push("phase-a") (include/cgshim/label.h)
 *   ci_app long     the CGS001 inside cgshim_push of a 200-byte test id, and
 *                   update_b's inside that and an NVTX range of 600 bytes
 *                   (300 two-byte characters: more than a label keeps)
 *   ci_app thread   issue 34: cgshim_process_label("t.py::test_p"); a thread
 *                   that never pushed makes a CGS001 (carries it), the main
 *                   thread one inside cgshim_push("own") (its own stack only);
 *                   cleared, the thread's second CGS001 carries no label
 */
#include <pthread.h>
#include <stdio.h>
#include <string.h>

#include "cgshim/label.h"
#include "nvtx3/nvToolsExt.h"
#include "scenario.h"

#define N 1024L

static cudaGraph_t capture(cudaStream_t s, float *buf, int kernels)
{
	cudaGraph_t g = NULL;
	CHECK(cudaStreamBeginCapture(s, cudaStreamCaptureModeGlobal), cudaSuccess);
	for (int k = 0; k < kernels; k++) {
		LAUNCH_ADD(s, buf, N, 2.0);
		CHECK(cudaGetLastError(), cudaSuccess);
	}
	CHECK(cudaStreamEndCapture(s, &g), cudaSuccess);
	return g;
}

/* Update e (one kernel) from a graph of `kernels` kernels; a second
 * function so that its call site is another fingerprint. */
__attribute__((noinline)) static void update_a(cudaGraphExec_t e, cudaStream_t s, float *buf, int kernels)
{
	cudaGraphExecUpdateResultInfo info;
	cudaGraph_t g = capture(s, buf, kernels);
	memset(&info, 0, sizeof info);
	CHECK(cudaGraphExecUpdate(e, g, &info), kernels == 1 ? cudaSuccess : cudaErrorGraphExecUpdateFailure);
	(void)cudaGetLastError();
	CHECK(cudaGraphDestroy(g), cudaSuccess);
}

__attribute__((noinline)) static void update_b(cudaGraphExec_t e, cudaStream_t s, float *buf)
{
	cudaGraphExecUpdateResultInfo info;
	cudaGraph_t g = capture(s, buf, 3);
	memset(&info, 0, sizeof info);
	CHECK(cudaGraphExecUpdate(e, g, &info), cudaErrorGraphExecUpdateFailure);
	(void)cudaGetLastError();
	CHECK(cudaGraphDestroy(g), cudaSuccess);
}

struct upd {
	cudaGraphExec_t e;
	cudaStream_t s;
	float *buf;
	int second; /* another call site: not folded into the first's record */
};

static void *loader(void *arg)
{
	struct upd *u = arg;
	if (u->second)
		update_a(u->e, u->s, u->buf, 3);
	else
		update_b(u->e, u->s, u->buf);
	return NULL;
}

static void on_thread(cudaGraphExec_t e, cudaStream_t s, float *buf, int second)
{
	struct upd u = {e, s, buf, second};
	pthread_t t;
	CHECK(pthread_create(&t, NULL, loader, &u), 0);
	CHECK(pthread_join(t, NULL), 0);
}

int main(int argc, char **argv)
{
	const char *mode = argc > 1 ? argv[1] : "clean";
	cudaStream_t s;
	cudaGraphExec_t e = NULL;
	float *buf = NULL;

	CHECK(cudaFree(0), cudaSuccess);
	CHECK(cudaStreamCreate(&s), cudaSuccess);
	CHECK(cudaMalloc((void **)&buf, N * sizeof(float)), cudaSuccess);
	cudaGraph_t g1 = capture(s, buf, 1);
	CHECK(cudaGraphInstantiate(&e, g1, 0), cudaSuccess);
	CHECK(cudaGraphLaunch(e, s), cudaSuccess);

	if (!strcmp(mode, "clean")) {
		update_a(e, s, buf, 1);
	} else if (!strcmp(mode, "cgs001") || !strcmp(mode, "new")) {
		update_a(e, s, buf, 2);
		if (!strcmp(mode, "new"))
			update_b(e, s, buf);
	} else if (!strcmp(mode, "nvtx")) {
		nvtxRangePushA("outer");
		nvtxRangePushA("decode");
		update_a(e, s, buf, 2);
		nvtxRangePop();
		nvtxRangePop();
		update_a(e, s, buf, 1); /* after the pops: no range */
	} else if (!strcmp(mode, "label")) {
		printf("push depth %d\n", cgshim_push("phase-a"));
		update_a(e, s, buf, 2);
		printf("pop depth %d\n", cgshim_pop());
	} else if (!strcmp(mode, "thread")) {
		printf("process label %d\n", cgshim_process_label("t.py::test_p"));
		on_thread(e, s, buf, 0);
		cgshim_push("own");
		update_a(e, s, buf, 2);
		cgshim_pop();
		cgshim_process_label(NULL);
		on_thread(e, s, buf, 1);
	} else if (!strcmp(mode, "long")) {
		char id[201], big[601];
		memset(id, 'p', sizeof id - 1);
		memcpy(id, "test_long.py::test_x[", 21);
		id[199] = ']';
		id[200] = '\0';
		for (int i = 0; i < 600; i += 2) {
			big[i] = (char)0xc3; /* U+00E9 */
			big[i + 1] = (char)0xa9;
		}
		big[600] = '\0';
		cgshim_push(id);
		update_a(e, s, buf, 2);
		nvtxRangePushA(big);
		update_b(e, s, buf);
		nvtxRangePop();
		cgshim_pop();
	} else {
		fprintf(stderr, "ci_app: unknown mode %s\n", mode);
		return 2;
	}
	CHECK(cudaGraphLaunch(e, s), cudaSuccess);
	CHECK(cudaStreamSynchronize(s), cudaSuccess);
	CHECK(cudaGraphExecDestroy(e), cudaSuccess);
	CHECK(cudaGraphDestroy(g1), cudaSuccess);
	CHECK(cudaFree(buf), cudaSuccess);
	CHECK(cudaStreamDestroy(s), cudaSuccess);
	return SCENARIO_EXIT();
}
