/*
 * kernels/model/update_memo.cu -- the identical-update memo (the update
 * hook's fast path, docs/design.md) and the changes that must end it. An
 * update of exec e from a graph that holds e's own summary again, with no
 * memory node and nothing to say, is answered without the analysis once
 * the analysis found it so and nothing it reads changed since:
 *
 *  A  e from a one-kernel graph G0; S captured identically; 6 updates of e
 *     from S, each followed by a launch: the first is analysed (S's summary
 *     is of e's class, model.h: remembered), the other 5 are known.
 *  B  a child-graph node added to S: the next update from S is analysed
 *     again, and CGS001 predicts the driver's 910 (topology changed).
 *  C  S destroyed; S2 captured like G0, 2 updates from it (the second
 *     known); S2 destroyed and T captured with two kernels (a driver may
 *     hand S2's handle out again): CGS001 and 910 again.
 *  D  U captured like G0: 3 updates from U (the last 2 known); e updated
 *     from V (another scalar, the same class): analysed, V joins the memo,
 *     so the next 3 from U are known.
 * 11 updates known of 17; 2 predicted refusals, no mismatch.
 */
#include "scenario.h"

#define N 1024L

static cudaGraph_t capture(cudaStream_t s, float *buf, int kernels, double v)
{
	cudaGraph_t g = NULL;
	CHECK(cudaStreamBeginCapture(s, cudaStreamCaptureModeGlobal), cudaSuccess);
	for (int k = 0; k < kernels; k++)
		LAUNCH_ADD(s, buf, N, v);
	CHECK(cudaGetLastError(), cudaSuccess);
	CHECK(cudaStreamEndCapture(s, &g), cudaSuccess);
	return g;
}

static void updates(cudaGraphExec_t e, cudaGraph_t g, cudaStream_t s, int n)
{
	cudaGraphExecUpdateResultInfo info;
	for (int i = 0; i < n; i++) {
		CHECK(cudaGraphExecUpdate(e, g, &info), cudaSuccess);
		CHECK(cudaGraphLaunch(e, s), cudaSuccess);
	}
}

int main(void)
{
	cudaStream_t s;
	cudaGraph_t g0, sg, s2, t, u, v, child;
	cudaGraphNode_t node;
	cudaGraphExec_t e = NULL;
	cudaGraphExecUpdateResultInfo info;
	float *buf = NULL;

	CHECK(cudaStreamCreate(&s), cudaSuccess);
	CHECK(cudaMalloc((void **)&buf, N * sizeof(float)), cudaSuccess);
	g0 = capture(s, buf, 1, 1.0);
	CHECK(cudaGraphInstantiate(&e, g0, 0), cudaSuccess);
	sg = capture(s, buf, 1, 1.0);
	CHECK(cudaGraphCreate(&child, 0), cudaSuccess); /* B's, before A */
	updates(e, sg, s, 6);				/* A */

	CHECK(cudaGraphAddChildGraphNode(&node, sg, NULL, 0, child), cudaSuccess); /* B */
	CHECK(cudaGraphExecUpdate(e, sg, &info), cudaErrorGraphExecUpdateFailure);
	(void)cudaGetLastError(); /* the runtime keeps the refusal as its last error */
	CHECK(cudaGraphDestroy(sg), cudaSuccess);
	s2 = capture(s, buf, 1, 1.0); /* C */
	updates(e, s2, s, 2);
	CHECK(cudaGraphDestroy(s2), cudaSuccess);
	t = capture(s, buf, 2, 1.0);
	CHECK(cudaGraphExecUpdate(e, t, &info), cudaErrorGraphExecUpdateFailure);
	(void)cudaGetLastError();

	u = capture(s, buf, 1, 1.0); /* D */
	v = capture(s, buf, 1, 2.0);
	updates(e, u, s, 3);
	updates(e, v, s, 1);
	updates(e, u, s, 3);

	CHECK(cudaStreamSynchronize(s), cudaSuccess);
	CHECK(cudaGraphExecDestroy(e), cudaSuccess);
	cudaGraph_t left[] = {g0, t, u, v, child};
	for (int i = 0; i < 5; i++)
		CHECK(cudaGraphDestroy(left[i]), cudaSuccess);
	CHECK(cudaFree(buf), cudaSuccess);
	CHECK(cudaStreamDestroy(s), cudaSuccess);
	printf("done\n");
	return SCENARIO_EXIT();
}
