/*
 * kernels/model/deferred_summary.cu -- executables of captured graphs whose
 * summary the shim completes later (issue 3: no graph walk at capture end
 * or instantiate). The update predictions must be what they would be with
 * a walk at instantiation, whatever happens to the graph afterwards:
 *
 *  A  exec of a 1-kernel capture, its graph destroyed, then updated from a
 *     2-kernel capture: 910, predicted (CGS001) from the destroyed graph.
 *  B  two execs of one 1-kernel capture, then a child-graph node added to
 *     that graph through the API: updating the first exec from the changed
 *     graph is 910, predicted; the graph destroyed, the second exec updated
 *     from a fresh 1-kernel capture: success, no rule.
 *  C  a capture with a graph allocation freed in the graph: its exec,
 *     graph destroyed, launched twice: no rule, no leak.
 */
#include "scenario.h"

#define N 1024L

static cudaGraph_t capture(cudaStream_t s, float *buf, int kernels)
{
	cudaGraph_t g = NULL;
	CHECK(cudaStreamBeginCapture(s, cudaStreamCaptureModeGlobal), cudaSuccess);
	for (int k = 0; k < kernels; k++) {
		LAUNCH_ADD(s, buf, N, 1.0);
		CHECK(cudaGetLastError(), cudaSuccess);
	}
	CHECK(cudaStreamEndCapture(s, &g), cudaSuccess);
	return g;
}

int main(void)
{
	cudaStream_t s;
	float *buf = NULL, *tmp = NULL;
	cudaGraphExec_t a = NULL, b1 = NULL, b2 = NULL, c = NULL;
	cudaGraph_t g, child = NULL;
	cudaGraphNode_t node;
	cudaGraphExecUpdateResultInfo info;

	CHECK(cudaFree(0), cudaSuccess);
	CHECK(cudaStreamCreate(&s), cudaSuccess);
	CHECK(cudaMalloc((void **)&buf, N * sizeof(float)), cudaSuccess);

	/* Instantiations first: the shim walks graphs at capture end only once
	 * the process has updated an exec, so every summary below is partial. */
	cudaGraph_t gb;
	g = capture(s, buf, 1); /* A: graph destroyed before any update */
	CHECK(cudaGraphInstantiate(&a, g, 0), cudaSuccess);
	CHECK(cudaGraphDestroy(g), cudaSuccess);
	gb = capture(s, buf, 1); /* B: two execs, then the graph changes */
	CHECK(cudaGraphInstantiate(&b1, gb, 0), cudaSuccess);
	CHECK(cudaGraphInstantiate(&b2, gb, 0), cudaSuccess);
	CHECK(cudaGraphCreate(&child, 0), cudaSuccess);
	CHECK(cudaGraphAddChildGraphNode(&node, gb, NULL, 0, child), cudaSuccess);
	/* C: a graph allocation freed in the graph */
	CHECK(cudaStreamBeginCapture(s, cudaStreamCaptureModeGlobal), cudaSuccess);
	CHECK(cudaMallocAsync((void **)&tmp, N * sizeof(float), s), cudaSuccess);
	LAUNCH_FILL(s, tmp, N, 2.0);
	LAUNCH_COPY(s, buf, tmp, N);
	CHECK(cudaFreeAsync(tmp, s), cudaSuccess);
	CHECK(cudaStreamEndCapture(s, &g), cudaSuccess);
	CHECK(cudaGraphInstantiate(&c, g, 0), cudaSuccess);
	CHECK(cudaGraphDestroy(g), cudaSuccess);

	/* A: updated from a 2-kernel capture */
	g = capture(s, buf, 2);
	CHECK(cudaGraphExecUpdate(a, g, &info), cudaErrorGraphExecUpdateFailure);
	CHECK(cudaGetLastError(), cudaErrorGraphExecUpdateFailure);
	CHECK(cudaGraphDestroy(g), cudaSuccess);
	/* B: the first exec from the changed graph; the second, after the
	 * graph is gone, from a fresh capture of the original shape */
	CHECK(cudaGraphExecUpdate(b1, gb, &info), cudaErrorGraphExecUpdateFailure);
	CHECK(cudaGetLastError(), cudaErrorGraphExecUpdateFailure);
	CHECK(cudaGraphDestroy(gb), cudaSuccess);
	g = capture(s, buf, 1);
	CHECK(cudaGraphExecUpdate(b2, g, &info), cudaSuccess);
	CHECK(cudaGraphLaunch(b2, s), cudaSuccess);
	CHECK(cudaGraphDestroy(g), cudaSuccess);
	/* C: launched twice */
	CHECK(cudaGraphLaunch(c, s), cudaSuccess);
	CHECK(cudaGraphLaunch(c, s), cudaSuccess);
	CHECK(cudaStreamSynchronize(s), cudaSuccess);
	{
		float h = 0;
		CHECK(cudaMemcpy(&h, buf, sizeof h, cudaMemcpyDeviceToHost), cudaSuccess);
		printf("buf[0] = %.1f (want 2.0)\n", h);
		EXPECT(h == 2.0f);
	}

	CHECK(cudaGraphExecDestroy(a), cudaSuccess);
	CHECK(cudaGraphExecDestroy(b1), cudaSuccess);
	CHECK(cudaGraphExecDestroy(b2), cudaSuccess);
	CHECK(cudaGraphExecDestroy(c), cudaSuccess);
	CHECK(cudaGraphDestroy(child), cudaSuccess);
	CHECK(cudaFree(buf), cudaSuccess);
	CHECK(cudaStreamDestroy(s), cudaSuccess);
	return SCENARIO_EXIT();
}
