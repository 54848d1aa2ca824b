/*
 * kernels/model/copy_tally.cu -- the capture's kernel tally (captures.c):
 * an instantiation of a captured graph asks whether the graph holds a copy
 * (CGS020's question); the tally answers it with one node-count query when
 * the thread that began the capture counted every node as a kernel or a
 * memory node, and the type of every node is asked otherwise:
 *
 *  A  3 cycles of capture (alloc, 4 kernels, free), instantiate, destroy:
 *     tallied.
 *  B  a captured cudaMemcpyAsync from calloc'd memory: not tallied (an async
 *     copy turns the tally off), and CGS020 names the copy.
 *  C  a fork to s2 and a join: a kernel on s2, not the origin stream, turns
 *     it off.
 *  D  G1 captured (4 kernels), then G2 captured and one of G2's nodes
 *     destroyed: G1's instantiation is not tallied (a node destroy names no
 *     graph, so no count proves anything after it).
 *  E  a kernel launched into the capture by another thread: the tally falls
 *     short of the graph's kernels; not tallied.
 *  F  a kernel on another, non-capturing stream while the capture is live:
 *     off.
 *  G  two captures live at once on this thread (s, then s3): neither is
 *     tallied.
 *  H  a tallied capture, then an empty node added through
 *     cudaGraphAddEmptyNode (not hooked: the graph's generation stays): the
 *     node count no longer matches, so every type is asked.
 * 11 copy checks, 3 tallied; one CGS020.
 */
#include <pthread.h>
#include <stdlib.h>

#include "scenario.h"

#define N 1024L

static cudaStream_t s, s2, s3, s4;
static float *buf;

static void inst_destroy(cudaGraph_t g)
{
	cudaGraphExec_t e = NULL;
	CHECK(cudaGraphInstantiate(&e, g, cudaGraphInstantiateFlagAutoFreeOnLaunch), cudaSuccess);
	CHECK(cudaGraphExecDestroy(e), cudaSuccess);
	CHECK(cudaGraphDestroy(g), cudaSuccess);
}

static cudaGraph_t kernels(int n)
{
	cudaGraph_t g = NULL;
	CHECK(cudaStreamBeginCapture(s, cudaStreamCaptureModeGlobal), cudaSuccess);
	for (int k = 0; k < n; k++)
		LAUNCH_ADD(s, buf, N, 1.0);
	CHECK(cudaStreamEndCapture(s, &g), cudaSuccess);
	return g;
}

static void *other_thread(void *arg)
{
	(void)arg;
	LAUNCH_ADD(s, buf, N, 2.0);
	CHECK(cudaGetLastError(), cudaSuccess);
	return NULL;
}

int main(void)
{
	cudaGraph_t g, g1, g2, ga;
	cudaEvent_t fork, join;
	float *p = NULL, *host = (float *)calloc(N, sizeof(float));
	pthread_t t;

	CHECK(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking), cudaSuccess);
	CHECK(cudaStreamCreateWithFlags(&s2, cudaStreamNonBlocking), cudaSuccess);
	CHECK(cudaStreamCreateWithFlags(&s3, cudaStreamNonBlocking), cudaSuccess);
	CHECK(cudaStreamCreateWithFlags(&s4, cudaStreamNonBlocking), cudaSuccess);
	CHECK(cudaEventCreateWithFlags(&fork, cudaEventDisableTiming), cudaSuccess);
	CHECK(cudaEventCreateWithFlags(&join, cudaEventDisableTiming), cudaSuccess);
	CHECK(cudaMalloc((void **)&buf, N * sizeof(float)), cudaSuccess);

	for (int i = 0; i < 3; i++) { /* A */
		CHECK(cudaStreamBeginCapture(s, cudaStreamCaptureModeGlobal), cudaSuccess);
		CHECK(cudaMallocAsync((void **)&p, N * sizeof(float), s), cudaSuccess);
		for (int k = 0; k < 4; k++)
			LAUNCH_ADD(s, p, N, 1.0);
		CHECK(cudaFreeAsync(p, s), cudaSuccess);
		CHECK(cudaStreamEndCapture(s, &g), cudaSuccess);
		inst_destroy(g);
	}

	CHECK(cudaStreamBeginCapture(s, cudaStreamCaptureModeGlobal), cudaSuccess); /* B */
	CHECK(cudaMemcpyAsync(buf, host, N * sizeof(float), cudaMemcpyHostToDevice, s), cudaSuccess);
	LAUNCH_ADD(s, buf, N, 1.0);
	CHECK(cudaStreamEndCapture(s, &g), cudaSuccess);
	inst_destroy(g);

	CHECK(cudaStreamBeginCapture(s, cudaStreamCaptureModeGlobal), cudaSuccess); /* C */
	LAUNCH_ADD(s, buf, N, 1.0);
	CHECK(cudaEventRecord(fork, s), cudaSuccess);
	CHECK(cudaStreamWaitEvent(s2, fork, 0), cudaSuccess);
	LAUNCH_ADD(s2, buf, N, 1.0);
	CHECK(cudaEventRecord(join, s2), cudaSuccess);
	CHECK(cudaStreamWaitEvent(s, join, 0), cudaSuccess);
	CHECK(cudaStreamEndCapture(s, &g), cudaSuccess);
	inst_destroy(g);

	g1 = kernels(4); /* D */
	g2 = kernels(2);
	{
		cudaGraphNode_t nodes[2];
		size_t n = 2;
		CHECK(cudaGraphGetNodes(g2, nodes, &n), cudaSuccess);
		CHECK(cudaGraphDestroyNode(nodes[1]), cudaSuccess);
	}
	inst_destroy(g1);
	CHECK(cudaGraphDestroy(g2), cudaSuccess);

	CHECK(cudaStreamBeginCapture(s, cudaStreamCaptureModeGlobal), cudaSuccess); /* E */
	LAUNCH_ADD(s, buf, N, 1.0);
	pthread_create(&t, NULL, other_thread, NULL);
	pthread_join(t, NULL);
	CHECK(cudaStreamEndCapture(s, &g), cudaSuccess);
	inst_destroy(g);

	CHECK(cudaStreamBeginCapture(s, cudaStreamCaptureModeGlobal), cudaSuccess); /* F */
	LAUNCH_ADD(s, buf, N, 1.0);
	LAUNCH_ADD(s4, buf, N, 1.0);
	CHECK(cudaStreamEndCapture(s, &g), cudaSuccess);
	inst_destroy(g);

	CHECK(cudaStreamBeginCapture(s, cudaStreamCaptureModeGlobal), cudaSuccess); /* G */
	LAUNCH_ADD(s, buf, N, 1.0);
	CHECK(cudaStreamBeginCapture(s3, cudaStreamCaptureModeGlobal), cudaSuccess);
	LAUNCH_ADD(s3, buf, N, 1.0);
	CHECK(cudaStreamEndCapture(s3, &ga), cudaSuccess);
	CHECK(cudaStreamEndCapture(s, &g), cudaSuccess);
	inst_destroy(ga);
	inst_destroy(g);

	g = kernels(4); /* H */
	{
		cudaGraphNode_t empty;
		CHECK(cudaGraphAddEmptyNode(&empty, g, NULL, 0), cudaSuccess);
	}
	inst_destroy(g);

	CHECK(cudaStreamSynchronize(s4), cudaSuccess);
	CHECK(cudaFree(buf), cudaSuccess);
	free(host);
	printf("done\n");
	return SCENARIO_EXIT();
}
