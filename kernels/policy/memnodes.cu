/*
 * kernels/policy/memnodes.cu -- topology-changing updates of execs whose
 * graphs hold memory nodes (cudaMallocAsync / cudaFreeAsync in the capture).
 *
 * Part 1, flags 0: each captured graph allocates a scratch buffer, fills it,
 * optionally scales it (the topology change), copies it to `out` and frees
 * it (alloc + free graph). The exec is launched twice per step.
 * Part 2, AutoFreeOnLaunch: each captured graph allocates a buffer, fills
 * it, optionally scales it, and leaves it allocated (alloc-only graph); the
 * exec is launched twice per step (the second launch frees the first one's
 * allocation). The application reads the graph allocation of the last
 * capture directly and frees it with cudaFree before destroying the exec.
 * Each captured graph is destroyed right after the update. Every update
 * must return cudaSuccess; the numbers are checked against what the NEW
 * graph computes. At exit no graph allocation may be outstanding.
 *
 * Bare (no shim): the first update that changes the node count returns 910
 * cudaErrorGraphExecUpdateFailure: exit 1.
 * Under libcgshim.so with CGSHIM_ON_UPDATE_FAILURE=reinstantiate: every
 * update succeeds, 3 rewrites per part (6 in all, predicted), no leak
 * record and no CGS011 violation, exit 0.
 */
#include <stdlib.h>
#include "policy_scenario.h"

#define N (1L << 16)

/* Returns the value the graph computes; *buf gets the graph allocation. */
static float capture(cudaStream_t s, cudaGraph_t *g, float **buf, float *out, int k, int scale, int free_it)
{
	float *t = NULL, v = (float)k;
	MUST(cudaStreamBeginCapture(s, cudaStreamCaptureModeGlobal));
	MUST(cudaMallocAsync((void **)&t, N * sizeof(float), s));
	LAUNCH_FILL(s, t, N, k);
	KERNEL_OK();
	if (scale) {
		LAUNCH_SCALE(s, t, N, 3.0);
		KERNEL_OK();
		v *= 3.0f;
	}
	if (out) {
		LAUNCH_COPY(s, out, t, N);
		KERNEL_OK();
	}
	if (free_it)
		MUST(cudaFreeAsync(t, s));
	MUST(cudaStreamEndCapture(s, g));
	*buf = t;
	return v;
}

static void part(cudaStream_t s, float *out, unsigned long long flags)
{
	int autofree = flags != 0;
	cudaGraph_t g;
	cudaGraphExec_t e = NULL;
	float *buf = NULL;
	unsigned long long got = 99;
	char what[80];
	/* scale at steps 1, 2, 4: node count changes at 1, 3, 4 */
	static const int scale_at[] = {0, 1, 1, 0, 1, 1};

	printf("part %s\n", autofree ? "AutoFreeOnLaunch" : "flags 0");
	for (int k = 0; k < 6; k++) {
		float want = capture(s, &g, &buf, autofree ? NULL : out, k + 1, scale_at[k], !autofree);
		if (k == 0)
			MUST(cudaGraphInstantiate(&e, g, flags));
		else
			sc_must_update(e, g);
		MUST(cudaGraphDestroy(g));
		for (int l = 0; l < 2; l++)
			MUST(cudaGraphLaunch(e, s));
		MUST(cudaStreamSynchronize(s));
		MUST(cudaGraphExecGetFlags(e, &got));
		if (got != flags) {
			printf("ABORT: exec flags %llu (want %llu)\n", got, flags);
			exit(1);
		}
		snprintf(what, sizeof what, "  step %d%s", k,
			 k && scale_at[k] != scale_at[k - 1] ? " (topology changed)" : "");
		/* alloc-only graph: the allocation of the last launch is the result */
		sc_check_buf(what, autofree ? buf : out, N, want);
	}
	if (autofree) /* the last launch's allocation is the application's to free */
		MUST(cudaFree(buf));
	MUST(cudaGraphExecDestroy(e));
}

int main(void)
{
	cudaStream_t s;
	float *out = NULL;

	MUST(cudaFree(0));
	MUST(cudaStreamCreate(&s));
	MUST(cudaMalloc((void **)&out, N * sizeof(float)));
	part(s, out, 0);
	part(s, out, cudaGraphInstantiateFlagAutoFreeOnLaunch);
	MUST(cudaDeviceSynchronize());
	MUST(cudaFree(out));
	MUST(cudaStreamDestroy(s));
	printf("memnodes: OK\n");
	return SCENARIO_EXIT();
}
