/*
 * kernels/model/update_alt.cu -- the known-update memo across graphs
 * (issue 36, docs/design.md): one exec updated in turn from two graphs of
 * its topology with other kernel arguments, as a replay loop keeping a
 * graph per batch variant does, and every change that must end the memo.
 * Each graph: K kernels in a chain on buf; only the scalar differs.
 *
 *  A  e from G0; 8 updates alternating a, b: the first of each is analysed
 *     (its summary joins the memo), the other 6 are known.
 *  B  a kernel node added to a (cudaGraphAddKernelNode): the next update
 *     from a is analysed, CGS001 named before the driver's 910. a is
 *     captured again; 4 updates a, b: 2 analysed, 2 known.
 *  C  a child graph node added to b: CGS001 and 910; b again, 2 known of 4.
 *  D  a memory allocation node added to a: CGS001 and 910; 2 known of 4.
 *  E  a node of b destroyed (cudaGraphDestroyNode names no graph): the next
 *     update, from the unchanged a, is analysed; b destroyed and captured
 *     again (its handle may come back): 2 known of 4.
 *  F  c, the same chain on buf2: another class. 4 updates c, a, c, a are
 *     all analysed, each naming K kernels moved to other memory (update_diff
 *     "repointed"), none known.
 * 32 updates, 3 refused (each predicted by CGS001), 14 known.
 */
#include "scenario.h"

#define N 1024L
#define K 4

static cudaGraph_t chain(cudaStream_t s, float *buf, double v)
{
	cudaGraph_t g = NULL;
	CHECK(cudaStreamBeginCapture(s, cudaStreamCaptureModeGlobal), cudaSuccess);
	for (int k = 0; k < K; k++)
		LAUNCH_ADD(s, buf, N, v);
	CHECK(cudaGetLastError(), cudaSuccess);
	CHECK(cudaStreamEndCapture(s, &g), cudaSuccess);
	return g;
}

static void update(cudaGraphExec_t e, cudaGraph_t g, cudaStream_t s)
{
	cudaGraphExecUpdateResultInfo info;
	CHECK(cudaGraphExecUpdate(e, g, &info), cudaSuccess);
	CHECK(cudaGraphLaunch(e, s), cudaSuccess);
}

/* n updates of e, from x and y in turn */
static void alternate(cudaGraphExec_t e, cudaGraph_t x, cudaGraph_t y, cudaStream_t s, int n)
{
	for (int i = 0; i < n; i++)
		update(e, i % 2 ? y : x, s);
}

static void refused(cudaGraphExec_t e, cudaGraph_t g)
{
	cudaGraphExecUpdateResultInfo info;
	CHECK(cudaGraphExecUpdate(e, g, &info), cudaErrorGraphExecUpdateFailure);
	(void)cudaGetLastError(); /* the runtime keeps the refusal as its last error */
}

static cudaGraphNode_t first_node(cudaGraph_t g, size_t want)
{
	cudaGraphNode_t nodes[K + 1];
	size_t n = K + 1;
	CHECK(cudaGraphGetNodes(g, nodes, &n), cudaSuccess);
	EXPECT(n >= want);
	return nodes[want - 1];
}

int main(void)
{
	cudaStream_t s;
	cudaGraph_t g0, a, b, c, child;
	cudaGraphNode_t node;
	cudaGraphExec_t e = NULL;
	struct cudaKernelNodeParams kp;
	struct cudaMemAllocNodeParams mp;
	float *buf = NULL, *buf2 = NULL;
	long kn = N;
	double kv = 9.0;
	void *kargs[] = {(void *)&buf, (void *)&kn, (void *)&kv, NULL};

	CHECK(cudaStreamCreate(&s), cudaSuccess);
	CHECK(cudaMalloc((void **)&buf, N * sizeof(float)), cudaSuccess);
	CHECK(cudaMalloc((void **)&buf2, N * sizeof(float)), cudaSuccess);
	CHECK(cudaGraphCreate(&child, 0), cudaSuccess); /* C's, before A */
	g0 = chain(s, buf, 1.0);
	CHECK(cudaGraphInstantiate(&e, g0, 0), cudaSuccess);
	a = chain(s, buf, 2.0);
	b = chain(s, buf, 3.0);
	alternate(e, a, b, s, 8); /* A */

	memset(&kp, 0, sizeof kp); /* B: one more k_add on buf */
	kp.func = (void *)k_add;
	kp.gridDim.x = (unsigned)((N + 255) / 256), kp.gridDim.y = kp.gridDim.z = 1;
	kp.blockDim.x = 256, kp.blockDim.y = kp.blockDim.z = 1;
	kp.kernelParams = kargs;
	CHECK(cudaGraphAddKernelNode(&node, a, NULL, 0, &kp), cudaSuccess);
	refused(e, a);
	CHECK(cudaGraphDestroy(a), cudaSuccess);
	a = chain(s, buf, 4.0);
	alternate(e, a, b, s, 4);

	CHECK(cudaGraphAddChildGraphNode(&node, b, NULL, 0, child), cudaSuccess); /* C */
	refused(e, b);
	CHECK(cudaGraphDestroy(b), cudaSuccess);
	b = chain(s, buf, 5.0);
	alternate(e, a, b, s, 4);

	memset(&mp, 0, sizeof mp); /* D */
	mp.poolProps = sc_pool_props(0, cudaMemHandleTypeNone);
	mp.bytesize = 1 << 20;
	CHECK(cudaGraphAddMemAllocNode(&node, a, NULL, 0, &mp), cudaSuccess);
	refused(e, a);
	CHECK(cudaGraphDestroy(a), cudaSuccess);
	a = chain(s, buf, 6.0);
	alternate(e, a, b, s, 4);

	CHECK(cudaGraphDestroyNode(first_node(b, K)), cudaSuccess); /* E */
	update(e, a, s);
	CHECK(cudaGraphDestroy(b), cudaSuccess);
	b = chain(s, buf, 7.0);
	alternate(e, a, b, s, 4);

	c = chain(s, buf2, 8.0); /* F */
	alternate(e, c, a, s, 4);

	CHECK(cudaStreamSynchronize(s), cudaSuccess);
	CHECK(cudaGraphExecDestroy(e), cudaSuccess);
	cudaGraph_t left[] = {g0, a, b, c, child};
	for (int i = 0; i < 5; i++)
		CHECK(cudaGraphDestroy(left[i]), cudaSuccess);
	CHECK(cudaFree(buf), cudaSuccess);
	CHECK(cudaFree(buf2), cudaSuccess);
	CHECK(cudaStreamDestroy(s), cudaSuccess);
	printf("done\n");
	return SCENARIO_EXIT();
}
