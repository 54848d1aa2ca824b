/*
 * kernels/rules/cgs027_nccl-teardown-with-live-graphs.cu -- reproducer for
 * CGS027.
 *
 * Each rank's all-reduce (two ranks, one per device, with two devices
 * visible; else one: nccl_scenario.h) captured into a graph, instantiated
 * and replayed; then the communicators are destroyed while the executables
 * live (CGS027, before each call). One rank's all-reduce captures no NCCL
 * kernel (measured on H200s, 2026-11-29), so on a GPU the rule needs the
 * two-rank path: CUDA_VISIBLE_DEVICES=0,1. The stand-in's all-reduce is a
 * kernel either way (one rank by default, two under STANDIN_DEVICES=2).
 * With NCCL >= 2.26 ncclCommDestroy waits until the graphs are destroyed
 * (the last rank's for every rank's graph): it runs on a second thread
 * here, so the main thread's destroy of the graphs ends the wait (a
 * program that did both on one thread would hang). The stand-in (NCCL
 * before 2.26) returns at once.
 */
#include "nccl_scenario.h"

#define N 1024L

int main(void)
{
	struct sc_nccl_ranks r;
	pthread_t t;

	if (!sc_nccl_start(&r))
		return 1;
	sc_nccl_alloc(&r, N);
	sc_nccl_warm(&r, N);

	sc_nccl_capture(&r, N);
	sc_nccl_replay(&r, 1);

	/* CGS027: the executables hold NCCL work */
	t = sc_nccl_teardown(&r);
	fprintf(stderr, "ncclCommDestroy %s after 1 s with the graphs alive\n",
		sc_nccl_wait(1000) ? "returned" : "still waiting");
	sc_nccl_destroy_graphs(&r);
	EXPECT(sc_nccl_wait(30000)); /* the graphs gone, the teardown ends */
	if (!sc_nccl_wait(0)) {
		printf("ncclCommDestroy still waiting 30 s after the graphs went\n");
		fflush(stdout);
		_exit(1); /* its thread would keep the process alive */
	}
	pthread_join(t, NULL);
	EXPECT(sc_nccl_rc == 0);
	sc_nccl_finish(&r, 1);
	return SCENARIO_EXIT();
}
