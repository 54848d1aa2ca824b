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

	if (!sc_nccl_load())
		return 1;
	CHECK(cudaFree(0), cudaSuccess);
	CHECK(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking), cudaSuccess);
	CHECK(cudaMalloc((void **)&x, N * sizeof(float)), cudaSuccess);
	LAUNCH_FILL(s, x, N, 1.0);
	CHECK(cudaGetLastError(), cudaSuccess);
	NCHECK(sc_nccl.init_all(&comm, 1, &dev));
	NCHECK(sc_nccl.all_reduce(x, x, N, SC_NCCL_FLOAT32, SC_NCCL_SUM, comm, s));
	CHECK(cudaStreamSynchronize(s), cudaSuccess);

	CHECK(cudaStreamBeginCapture(s, cudaStreamCaptureModeGlobal), cudaSuccess);
	LAUNCH_ADD(s, x, N, 1.0);
	CHECK(cudaGetLastError(), cudaSuccess);
	NCHECK(sc_nccl.all_reduce(x, x, N, SC_NCCL_FLOAT32, SC_NCCL_SUM, comm, s));
	CHECK(cudaStreamEndCapture(s, &g), cudaSuccess);
	CHECK(cudaGraphInstantiate(&e, g, 0), cudaSuccess);
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
