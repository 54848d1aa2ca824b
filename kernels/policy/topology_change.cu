/*
 * kernels/policy/topology_change.cu -- an application that updates its exec
 * from graphs of changing topology and aborts on any failure.
 *
 * Graph A (fill + add) is captured, instantiated (flags 0) and launched.
 * Then, step by step, a graph is captured whose topology sometimes changes
 * (an extra kernel some steps, fewer nodes others, and once the same node
 * count and dependency counts but a fork instead of a chain, which the shim
 * cannot predict and the driver refuses), cudaGraphExecUpdate is called
 * (anything but cudaSuccess, result Success and a clean last-error state
 * exits 1), the exec is uploaded and launched, its flags are read, and the
 * numbers are checked on the host against what the NEW graph computes.
 *
 * Bare (no shim): the first update with a different node count returns 910
 * cudaErrorGraphExecUpdateFailure (result 2 TopologyChanged): exit 1.
 * Under libcgshim.so with CGSHIM_ON_UPDATE_FAILURE=reinstantiate: every
 * update succeeds, 8 rewrites, all predicted (7 by node count, 1 by the
 * edges: the fork, issue 31; it was a "failed" rewrite before), exit 0.
 */
#include <stdlib.h>
#include "policy_scenario.h"

#define N 4096L

static float *a, *b;

/* Chain on a: fill(k), add(2), [scale(3)], [add(0.5)]; returns the value. */
static float capture_chain(cudaStream_t s, cudaGraph_t *g, int k, int scale, int extra_add)
{
	float v = (float)k;
	MUST(cudaStreamBeginCapture(s, cudaStreamCaptureModeGlobal));
	LAUNCH_FILL(s, a, N, k);
	KERNEL_OK();
	LAUNCH_ADD(s, a, N, 2.0);
	KERNEL_OK();
	v += 2.0f;
	if (scale) {
		LAUNCH_SCALE(s, a, N, 3.0);
		KERNEL_OK();
		v *= 3.0f;
	}
	if (extra_add) {
		LAUNCH_ADD(s, a, N, 0.5);
		KERNEL_OK();
		v += 0.5f;
	}
	MUST(cudaStreamEndCapture(s, g));
	return v;
}

/* fill(a,5) -> fill(b,7) -> add(a,1) as a chain, or fill(a,5) forking into
 * fill(b,7) (second stream) and add(a,1): same node count, same types, same
 * dependency counts, different edges and exit nodes. */
static void capture_fork(cudaStream_t s, cudaStream_t s2, cudaEvent_t e1, cudaEvent_t e2, cudaGraph_t *g, int fork)
{
	MUST(cudaStreamBeginCapture(s, cudaStreamCaptureModeGlobal));
	LAUNCH_FILL(s, a, N, 5.0);
	KERNEL_OK();
	if (fork) {
		MUST(cudaEventRecord(e1, s));
		MUST(cudaStreamWaitEvent(s2, e1, 0));
		LAUNCH_FILL(s2, b, N, 7.0);
		KERNEL_OK();
		LAUNCH_ADD(s, a, N, 1.0);
		KERNEL_OK();
		MUST(cudaEventRecord(e2, s2));
		MUST(cudaStreamWaitEvent(s, e2, 0));
	} else {
		LAUNCH_FILL(s, b, N, 7.0);
		KERNEL_OK();
		LAUNCH_ADD(s, a, N, 1.0);
		KERNEL_OK();
	}
	MUST(cudaStreamEndCapture(s, g));
}

static void update_launch(cudaGraphExec_t e, cudaGraph_t g, cudaStream_t s)
{
	unsigned long long flags = 99;
	sc_must_update(e, g);
	MUST(cudaGraphUpload(e, s));
	MUST(cudaGraphLaunch(e, s));
	MUST(cudaStreamSynchronize(s));
	MUST(cudaGraphExecGetFlags(e, &flags));
	if (flags != 0) {
		printf("ABORT: exec flags %llu (want 0)\n", flags);
		exit(1);
	}
}

int main(void)
{
	cudaStream_t s, s2;
	cudaEvent_t e1, e2;
	cudaGraph_t g;
	cudaGraphExec_t e = NULL;
	int prev_nodes = 2, changes = 0;
	char what[64];

	MUST(cudaFree(0));
	MUST(cudaStreamCreate(&s));
	MUST(cudaStreamCreate(&s2));
	MUST(cudaEventCreateWithFlags(&e1, cudaEventDisableTiming));
	MUST(cudaEventCreateWithFlags(&e2, cudaEventDisableTiming));
	MUST(cudaMalloc((void **)&a, N * sizeof(float)));
	MUST(cudaMalloc((void **)&b, N * sizeof(float)));

	/* graph A: fill + add */
	float want = capture_chain(s, &g, 1, 0, 0);
	MUST(cudaGraphInstantiate(&e, g, 0));
	MUST(cudaGraphDestroy(g));
	MUST(cudaGraphLaunch(e, s));
	MUST(cudaStreamSynchronize(s));
	sc_check_buf("graph A", a, N, want);

	for (int k = 1; k <= 8; k++) {
		int scale = k % 2 == 1 && k != 6, extra = k % 3 == 0;
		int nodes = 2 + scale + extra;
		if (k == 6) /* same node count as step 5, another kernel in the last node */
			scale = 0, extra = 1, nodes = 3;
		want = capture_chain(s, &g, k, scale, extra);
		changes += nodes != prev_nodes;
		printf("step %d: %d nodes%s\n", k, nodes, nodes != prev_nodes ? " (topology changed)" : "");
		prev_nodes = nodes;
		update_launch(e, g, s);
		MUST(cudaGraphDestroy(g));
		snprintf(what, sizeof what, "step %d", k);
		sc_check_buf(what, a, N, want);
	}

	/* chain of 3 (node count changes), then the fork (edges change only) */
	capture_fork(s, s2, e1, e2, &g, 0);
	changes++;
	printf("chain: 3 nodes (topology changed)\n");
	update_launch(e, g, s);
	MUST(cudaGraphDestroy(g));
	sc_check_buf("chain a", a, N, 6.0f);
	sc_check_buf("chain b", b, N, 7.0f);
	MUST(cudaMemset(a, 0, N * sizeof(float)));
	MUST(cudaMemset(b, 0, N * sizeof(float)));
	capture_fork(s, s2, e1, e2, &g, 1);
	printf("fork: 3 nodes (edges changed)\n");
	update_launch(e, g, s);
	MUST(cudaGraphDestroy(g));
	sc_check_buf("fork a", a, N, 6.0f);
	sc_check_buf("fork b", b, N, 7.0f);
	printf("topology changes: %d by node count, 1 by edges\n", changes);

	MUST(cudaGraphExecDestroy(e));
	MUST(cudaFree(a));
	MUST(cudaFree(b));
	MUST(cudaEventDestroy(e1));
	MUST(cudaEventDestroy(e2));
	MUST(cudaStreamDestroy(s));
	MUST(cudaStreamDestroy(s2));
	printf("topology_change: OK\n");
	return SCENARIO_EXIT();
}
