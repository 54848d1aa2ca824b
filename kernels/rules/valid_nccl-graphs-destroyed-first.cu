/*
 * kernels/rules/valid_nccl-graphs-destroyed-first.cu -- the fix of CGS027:
 * the graphs that captured the all-reduces (one per rank: two ranks with
 * two devices visible, else one; nccl_scenario.h) are destroyed before the
 * communicators, so ncclCommDestroy has nothing to wait for. Silent.
 */
#include "nccl_scenario.h"

#define N 1024L

int main(void)
{
	struct sc_nccl_ranks r;

	if (!sc_nccl_start(&r))
		return 1;
	sc_nccl_alloc(&r, N);
	sc_nccl_warm(&r, N);

	sc_nccl_capture(&r, N);
	sc_nccl_replay(&r, 3);

	/* the graphs first, then the communicators */
	sc_nccl_destroy_graphs(&r);
	sc_nccl_destroy_comms(&r);
	sc_nccl_finish(&r, 1);
	return SCENARIO_EXIT();
}
