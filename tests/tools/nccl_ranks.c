/*
 * tests/tools/nccl_ranks.c -- one rank of a stand-in "serving" program for
 * the cross-rank view (tools/report-where.c, issue 33): per capture size
 * (1, 2, 4, 8 x 256 elements) a graph of a kernel and an all-reduce
 * (tests/standin/nccl.c), instantiated; then every graph replayed twice,
 * and the graphs destroyed before the communicator.
 *   RANK         the rank (the shim writes it on every record)
 *   SKIP_SIZE    a size this rank does not capture (a divergence)
 *   NO_REPLAY=1  stop after the captures (a rank stuck before its replay)
 *   RAISE_DUMP=1 raise SIGUSR1 after the replays, the graphs alive, and
 *                give the shim's watchdog a second to write its dump (only
 *                under the shim, which takes the signal)
 * Built as C against the stand-in runtime; prints its checks (scenario.h).
 */
#include <signal.h>
#include <stdlib.h>

#include "nccl_scenario.h"

int main(void)
{
	static const int sizes[] = {1, 2, 4, 8};
	cudaStream_t s;
	cudaGraph_t g[4];
	cudaGraphExec_t e[4];
	sc_nccl_comm_t comm = NULL;
	float *x = NULL;
	int dev = 0, n = 0, skip = getenv("SKIP_SIZE") ? atoi(getenv("SKIP_SIZE")) : 0;

	if (!sc_nccl_load())
		return 1;
	CHECK(cudaFree(0), cudaSuccess);
	CHECK(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking), cudaSuccess);
	CHECK(cudaMalloc((void **)&x, 8 * 256 * sizeof(float)), cudaSuccess);
	NCHECK(sc_nccl.init_all(&comm, 1, &dev));
	for (int i = 0; i < 4; i++) {
		long len = sizes[i] * 256L;
		if (sizes[i] == skip)
			continue;
		CHECK(cudaStreamBeginCapture(s, cudaStreamCaptureModeGlobal), cudaSuccess);
		LAUNCH_FILL(s, x, len, 1.0);
		NCHECK(sc_nccl.all_reduce(x, x, (size_t)len, SC_NCCL_FLOAT32, SC_NCCL_SUM, comm, s));
		CHECK(cudaStreamEndCapture(s, &g[n]), cudaSuccess);
		CHECK(cudaGraphInstantiate(&e[n], g[n], 0), cudaSuccess);
		n++;
	}
	if (!getenv("NO_REPLAY"))
		for (int r = 0; r < 2; r++)
			for (int i = 0; i < n; i++)
				CHECK(cudaGraphLaunch(e[i], s), cudaSuccess);
	CHECK(cudaStreamSynchronize(s), cudaSuccess);
	if (getenv("RAISE_DUMP")) {
		raise(SIGUSR1);
		sleep(1);
	}
	for (int i = 0; i < n; i++) {
		CHECK(cudaGraphExecDestroy(e[i]), cudaSuccess);
		CHECK(cudaGraphDestroy(g[i]), cudaSuccess);
	}
	NCHECK(sc_nccl.destroy(comm));
	return SCENARIO_EXIT() ? 1 : 0;
}
