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

	if (!sc_nccl_start(&s))
		return 1;
	CHECK(cudaMalloc((void **)&x, N * sizeof(float)), cudaSuccess);
	sc_nccl_warm(s, x, N, &comm, &dev);

	sc_nccl_capture(s, x, N, comm, &g, &e);
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
