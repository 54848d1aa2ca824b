/*
 * kernels/rules/cgs027_nccl-teardown-with-live-graphs.cu -- reproducer for
 * CGS027.
 *
 * A one-rank communicator's all-reduce captured into a graph, instantiated
 * and replayed; then the communicator is destroyed while the executable
 * lives (CGS027, before the call). With NCCL >= 2.26 ncclCommDestroy waits
 * until the graph is destroyed: it runs on a second thread here, so the
 * main thread's destroy of the graph ends the wait (a program that did
 * both on one thread would hang). The stand-in (NCCL before 2.26) returns
 * at once.
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
	pthread_t t;

	if (!sc_nccl_load())
		return 1;
	CHECK(cudaFree(0), cudaSuccess);
	CHECK(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking), cudaSuccess);
	CHECK(cudaMalloc((void **)&x, N * sizeof(float)), cudaSuccess);
	LAUNCH_FILL(s, x, N, 1.0);
	CHECK(cudaGetLastError(), cudaSuccess);
	NCHECK(sc_nccl.init_all(&comm, 1, &dev));
	NCHECK(sc_nccl.all_reduce(x, x, N, SC_NCCL_FLOAT32, SC_NCCL_SUM, comm, s)); /* warm-up, eager */
	CHECK(cudaStreamSynchronize(s), cudaSuccess);

	CHECK(cudaStreamBeginCapture(s, cudaStreamCaptureModeGlobal), cudaSuccess);
	LAUNCH_ADD(s, x, N, 1.0);
	CHECK(cudaGetLastError(), cudaSuccess);
	NCHECK(sc_nccl.all_reduce(x, x, N, SC_NCCL_FLOAT32, SC_NCCL_SUM, comm, s));
	CHECK(cudaStreamEndCapture(s, &g), cudaSuccess);
	CHECK(cudaGraphInstantiate(&e, g, 0), cudaSuccess);
	CHECK(cudaGraphLaunch(e, s), cudaSuccess);
	CHECK(cudaStreamSynchronize(s), cudaSuccess);

	/* CGS027: the executable holds NCCL work */
	t = sc_nccl_teardown(comm);
	fprintf(stderr, "ncclCommDestroy %s after 1 s with the graph alive\n",
		sc_nccl_wait(1000) ? "returned" : "still waiting");
	CHECK(cudaGraphExecDestroy(e), cudaSuccess);
	CHECK(cudaGraphDestroy(g), cudaSuccess);
	EXPECT(sc_nccl_wait(30000)); /* the graphs gone, the teardown ends */
	if (!sc_nccl_wait(0)) {
		printf("ncclCommDestroy still waiting 30 s after the graphs went\n");
		fflush(stdout);
		_exit(1); /* its thread would keep the process alive */
	}
	pthread_join(t, NULL);
	EXPECT(sc_nccl_rc == 0);
	CHECK(cudaFree(x), cudaSuccess);
	CHECK(cudaStreamDestroy(s), cudaSuccess);
	return SCENARIO_EXIT();
}
