/*
 * kernels/model/handle_reuse.cu -- graph identity (issue 35): 17 graphs,
 * each captured (two kernels in a chain), instantiated twice, its execs
 * and the graph destroyed before the next. The driver's allocator gives a
 * destroyed graph's handle to the next graph (the stand-in's does: its
 * graphs are malloc'd), so a report keyed by handle drew the 17 as one
 * graph with 17 parallel edges, each twice (one set per instantiation).
 * Each graph must get its own graph_id and each instantiation its own
 * exec_id; `cgshim report --dot HANDLE` draws 17 graphs, each edge once.
 * Prints on stderr "graph I 0x..." per graph.
 */
#include "scenario.h"

#define N 1024L
#define GRAPHS 17

int main(void)
{
	cudaStream_t s;
	float *p = NULL;

	CHECK(cudaFree(0), cudaSuccess);
	CHECK(cudaStreamCreate(&s), cudaSuccess);
	CHECK(cudaMalloc((void **)&p, N * sizeof(float)), cudaSuccess);
	for (int i = 0; i < GRAPHS; i++) {
		cudaGraph_t g = NULL;
		cudaGraphExec_t e1 = NULL, e2 = NULL;
		CHECK(cudaStreamBeginCapture(s, cudaStreamCaptureModeGlobal), cudaSuccess);
		LAUNCH_FILL(s, p, N, 1.0);
		CHECK(cudaGetLastError(), cudaSuccess);
		LAUNCH_ADD(s, p, N, (double)i);
		CHECK(cudaGetLastError(), cudaSuccess);
		CHECK(cudaStreamEndCapture(s, &g), cudaSuccess);
		fprintf(stderr, "graph %d %p\n", i, (void *)g);
		CHECK(cudaGraphInstantiate(&e1, g, 0), cudaSuccess);
		CHECK(cudaGraphInstantiate(&e2, g, 0), cudaSuccess);
		CHECK(cudaGraphLaunch(e2, s), cudaSuccess);
		CHECK(cudaStreamSynchronize(s), cudaSuccess);
		CHECK(cudaGraphExecDestroy(e1), cudaSuccess);
		CHECK(cudaGraphExecDestroy(e2), cudaSuccess);
		CHECK(cudaGraphDestroy(g), cudaSuccess);
	}
	CHECK(cudaFree(p), cudaSuccess);
	CHECK(cudaStreamDestroy(s), cudaSuccess);
	printf("graphs: %d\nfailures: %d\n", GRAPHS, scenario_failures);
	return SCENARIO_EXIT();
}
