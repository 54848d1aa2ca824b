/*
 * kernels/policy/per_node.cu -- per-node exec calls after a rewrite.
 *
 * Graph A: fill(1) -> add(2) -> add(4), instantiated and launched (7). The
 * exec is updated from graph B: fill(1) -> add(2) (one node fewer, so the
 * driver refuses the update; the shim rewrites it). B is destroyed right
 * after the update, as applications do. The application still holds the
 * nodes of A, the graph it instantiated:
 *  - cudaGraphExecKernelNodeSetParams on A's add(2) node, which has a
 *    counterpart in B, sets its value to 10: must succeed and take effect
 *    (1 + 10 = 11);
 *  - the same on A's add(4) node, which has no counterpart: must return the
 *    driver's error (cudaErrorInvalidValue here) and change nothing (11).
 *
 * Bare (no shim): the update returns 910 cudaErrorGraphExecUpdateFailure:
 * exit 1. Under libcgshim.so with CGSHIM_ON_UPDATE_FAILURE=reinstantiate:
 * one rewrite, one record ("warning") naming the node without counterpart,
 * exit 0.
 */
#include <stdlib.h>
#include "policy_scenario.h"

#define N 4096L

static float *buf;

/* The kernel node of g whose third argument (the value) is v. */
static cudaGraphNode_t node_with_value(cudaGraph_t g, double v, struct cudaKernelNodeParams *out)
{
	cudaGraphNode_t nodes[8];
	size_t n = 8;
	MUST(cudaGraphGetNodes(g, nodes, &n));
	for (size_t i = 0; i < n; i++) {
		struct cudaKernelNodeParams p;
		enum cudaGraphNodeType t;
		MUST(cudaGraphNodeGetType(nodes[i], &t));
		if (t != cudaGraphNodeTypeKernel)
			continue;
		MUST(cudaGraphKernelNodeGetParams(nodes[i], &p));
		if (*(double *)p.kernelParams[2] == v) {
			*out = p;
			return nodes[i];
		}
	}
	printf("ABORT: no kernel node with value %g\n", v);
	exit(1);
}

int main(void)
{
	cudaStream_t s;
	cudaGraph_t ga, gb;
	cudaGraphExec_t e = NULL;
	struct cudaKernelNodeParams p2, p4;
	long n = N;
	double v;
	int rc;

	MUST(cudaFree(0));
	MUST(cudaStreamCreate(&s));
	MUST(cudaMalloc((void **)&buf, N * sizeof(float)));

	MUST(cudaStreamBeginCapture(s, cudaStreamCaptureModeGlobal));
	LAUNCH_FILL(s, buf, N, 1.0);
	KERNEL_OK();
	LAUNCH_ADD(s, buf, N, 2.0);
	KERNEL_OK();
	LAUNCH_ADD(s, buf, N, 4.0);
	KERNEL_OK();
	MUST(cudaStreamEndCapture(s, &ga));
	cudaGraphNode_t add2 = node_with_value(ga, 2.0, &p2);
	cudaGraphNode_t add4 = node_with_value(ga, 4.0, &p4);
	MUST(cudaGraphInstantiate(&e, ga, 0));
	MUST(cudaGraphLaunch(e, s));
	MUST(cudaStreamSynchronize(s));
	sc_check_buf("graph A", buf, N, 7.0f);

	MUST(cudaStreamBeginCapture(s, cudaStreamCaptureModeGlobal));
	LAUNCH_FILL(s, buf, N, 1.0);
	KERNEL_OK();
	LAUNCH_ADD(s, buf, N, 2.0);
	KERNEL_OK();
	MUST(cudaStreamEndCapture(s, &gb));
	sc_must_update(e, gb);
	MUST(cudaGraphDestroy(gb));
	MUST(cudaGraphLaunch(e, s));
	MUST(cudaStreamSynchronize(s));
	sc_check_buf("after update (graph B)", buf, N, 3.0f);

	/* A's add(2) node has a counterpart: value 10 */
	v = 10.0;
	{
		void *args[] = {(void *)&buf, (void *)&n, (void *)&v, NULL};
		p2.kernelParams = args;
		p2.extra = NULL;
		MUST(cudaGraphExecKernelNodeSetParams(e, add2, &p2));
	}
	MUST(cudaGraphLaunch(e, s));
	MUST(cudaStreamSynchronize(s));
	sc_check_buf("counterpart set to 10", buf, N, 11.0f);

	/* A's add(4) node has none: the driver's error, nothing changes */
	v = 100.0;
	{
		void *args[] = {(void *)&buf, (void *)&n, (void *)&v, NULL};
		p4.kernelParams = args;
		p4.extra = NULL;
		rc = (int)cudaGraphExecKernelNodeSetParams(e, add4, &p4);
	}
	printf("set params on node without counterpart: rc=%d (%s)\n", rc, cudaGetErrorName((cudaError_t)rc));
	if (rc == cudaSuccess) {
		printf("ABORT: a node without counterpart was accepted\n");
		return 1;
	}
	CHECK(cudaGetLastError(), rc); /* the runtime keeps it as last error */
	MUST(cudaGraphLaunch(e, s));
	MUST(cudaStreamSynchronize(s));
	sc_check_buf("unchanged", buf, N, 11.0f);

	MUST(cudaGraphExecDestroy(e));
	MUST(cudaGraphDestroy(ga));
	MUST(cudaFree(buf));
	MUST(cudaStreamDestroy(s));
	printf("per_node: %s\n", scenario_failures ? "FAILED" : "OK");
	return SCENARIO_EXIT();
}
