/*
 * kernels/rules/valid_nccl-graphs-destroyed-first.cu -- the fix of CGS027:
 * the graph that captured the all-reduce is destroyed before the
 * communicator, so ncclCommDestroy has nothing to wait for. Silent.
 */
#include "nccl_scenario.h"

#define N 1024L

int main(void)
{
	cudaStream_t s;
	cudaGraph_t g = NULL;
	cudaGraphExec_t e = NULL;
	sc_nccl_comm_t comm = NULL;
	float *x = NULL;
	int dev = 0;

	if (!sc_nccl_start(&s))
		return 1;
	CHECK(cudaMalloc((void **)&x, N * sizeof(float)), cudaSuccess);
	sc_nccl_warm(s, x, N, &comm, &dev);

	sc_nccl_capture(s, x, N, comm, &g, &e);
	for (int i = 0; i < 3; i++)
		CHECK(cudaGraphLaunch(e, s), cudaSuccess);
	CHECK(cudaStreamSynchronize(s), cudaSuccess);

	/* the graphs first, then the communicator */
	CHECK(cudaGraphExecDestroy(e), cudaSuccess);
	CHECK(cudaGraphDestroy(g), cudaSuccess);
	NCHECK(sc_nccl.destroy(comm));
	CHECK(cudaFree(x), cudaSuccess);
	CHECK(cudaStreamDestroy(s), cudaSuccess);
	return SCENARIO_EXIT();
}
