/*
 * kernels/model/chain_joins.cu -- a capture whose launches are not a chain
 * although every node is one of them, on the origin stream, in order (issue
 * 36: the end of a logged capture takes its graph for a chain, asking no
 * edges, only while no capture dependency changed without a node). One
 * executable of a 4-kernel chain, updated from a second chain (accepted:
 * updates are seen, the kernel described, so the next captures are logged),
 * then from a capture of the same 4 launches whose last node also depends
 * on the first, made by the first argument:
 *
 *  wait     an event recorded after the first launch, waited on by the
 *           origin stream before the last (a join into the capturing stream)
 *  update   cudaStreamUpdateCaptureDependencies adds the first node to the
 *           origin's dependencies before the last launch
 *  adddeps  cuGraphAddDependencies on the capturing graph: first -> third
 *  chain    none: the update is accepted
 *  pdl      (nvcc builds only) the last launch by cudaLaunchKernelEx with
 *           programmatic stream serialization: its edge is programmatic
 *           (no chain either); the driver's answer to the update is not
 *           judged here, the shim's must agree with it (no mismatch), and
 *           CGSHIM_SUMMARY_CHECK finds no node differing (tests/gpu/issue36)
 *
 * The driver refuses the update (TopologyChanged) and CGS001 says so first;
 * a graph taken for a chain would hash as the executable's and the shim
 * would predict nothing (a mismatch).
 *
 * usage: model_chain_joins [wait|update|adddeps|chain]
 */
#include <string.h>

#include "scenario.h"
#include "drvapi.h"

#define N 1024L

static CUresult (*add_deps)(CUgraph, const CUgraphNode *, const CUgraphNode *, size_t);

#ifdef __CUDACC__
static void launch_pdl(cudaStream_t s, float *buf, double v)
{
	cudaLaunchConfig_t cfg;
	cudaLaunchAttribute at[1];
	memset(&cfg, 0, sizeof cfg);
	memset(at, 0, sizeof at);
	at[0].id = cudaLaunchAttributeProgrammaticStreamSerialization;
	at[0].val.programmaticStreamSerializationAllowed = 1;
	cfg.gridDim = dim3(SC_GRID(N));
	cfg.blockDim = dim3(256);
	cfg.stream = s;
	cfg.attrs = at;
	cfg.numAttrs = 1;
	CHECK(cudaLaunchKernelEx(&cfg, k_add, buf, (long)N, v), cudaSuccess);
}
#else
static void launch_pdl(cudaStream_t s, float *buf, double v)
{
	(void)s, (void)buf, (void)v; /* the stand-in has no cuLaunchKernelEx: main refuses the mode */
}
#endif

/* The origin's one capture dependency now (the node just launched). */
static cudaGraphNode_t last_node(cudaStream_t s, cudaGraph_t *g)
{
	enum cudaStreamCaptureStatus st;
	const cudaGraphNode_t *deps = NULL;
	size_t nd = 0;
	CHECK(cudaStreamGetCaptureInfo(s, &st, NULL, g, &deps, NULL, &nd), cudaSuccess);
	EXPECT(st == cudaStreamCaptureStatusActive && nd == 1);
	return nd ? deps[0] : NULL;
}

static cudaGraph_t capture(cudaStream_t s, float *buf, const char *mode, cudaEvent_t ev, double v)
{
	cudaGraph_t g = NULL, cg = NULL;
	cudaGraphNode_t first = NULL, third = NULL;
	CHECK(cudaStreamBeginCapture(s, cudaStreamCaptureModeGlobal), cudaSuccess);
	for (int i = 0; i < 4; i++) {
		if (i == 3 && !strcmp(mode, "wait"))
			CHECK(cudaStreamWaitEvent(s, ev, 0), cudaSuccess);
		if (i == 3 && !strcmp(mode, "update"))
			CHECK(cudaStreamUpdateCaptureDependencies(s, &first, NULL, 1, cudaStreamAddCaptureDependencies),
			      cudaSuccess);
		if (i == 3 && !strcmp(mode, "pdl"))
			launch_pdl(s, buf, v);
		else
			LAUNCH_ADD(s, buf, N, v); /* one site: the loop's */
		CHECK(cudaGetLastError(), cudaSuccess);
		if (i == 0) {
			first = last_node(s, &cg);
			if (!strcmp(mode, "wait"))
				CHECK(cudaEventRecord(ev, s), cudaSuccess);
		}
		if (i == 2 && !strcmp(mode, "adddeps")) {
			third = last_node(s, &cg);
			CHECK(add_deps((CUgraph)cg, (CUgraphNode *)&first, (CUgraphNode *)&third, 1), CUDA_SUCCESS);
		}
	}
	CHECK(cudaStreamEndCapture(s, &g), cudaSuccess);
	return g;
}

int main(int argc, char **argv)
{
	const char *mode = argc > 1 ? argv[1] : "wait";
	int chain = !strcmp(mode, "chain"), pdl = !strcmp(mode, "pdl");
	cudaStream_t s;
	cudaEvent_t ev;
	float *buf = NULL;
	cudaGraph_t g0, g1, g2;
	cudaGraphExec_t e;
	cudaGraphExecUpdateResultInfo info;

#ifndef __CUDACC__
	if (pdl) {
		printf("mode pdl: nvcc builds only\n");
		return 77;
	}
#endif
	CHECK(cudaFree(0), cudaSuccess);
	CHECK(cudaMalloc((void **)&buf, N * sizeof(float)), cudaSuccess);
	CHECK(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking), cudaSuccess);
	CHECK(cudaEventCreateWithFlags(&ev, cudaEventDisableTiming), cudaSuccess);
	drv_entry_at("cuGraphAddDependencies", (void **)&add_deps, 10000);

	g0 = capture(s, buf, "chain", ev, 1.0);
	CHECK(cudaGraphInstantiate(&e, g0, 0), cudaSuccess);
	g1 = capture(s, buf, "chain", ev, 2.0); /* accepted: updates seen from here on */
	CHECK(cudaGraphExecUpdate(e, g1, &info), cudaSuccess);
	CHECK(cudaGraphDestroy(g1), cudaSuccess);

	g2 = capture(s, buf, mode, ev, 3.0);
	if (pdl) { /* whatever the driver answers (a refusal leaves e as it was) */
		cudaError_t rc = cudaGraphExecUpdate(e, g2, &info);
		(void)cudaGetLastError();
		printf("pdl update: %d\n", (int)rc);
	} else {
		CHECK(cudaGraphExecUpdate(e, g2, &info), chain ? cudaSuccess : cudaErrorGraphExecUpdateFailure);
		EXPECT(info.result == (chain ? cudaGraphExecUpdateSuccess : cudaGraphExecUpdateErrorTopologyChanged));
	}
	CHECK(cudaGraphDestroy(g2), cudaSuccess);

	CHECK(cudaGraphLaunch(e, s), cudaSuccess);
	CHECK(cudaStreamSynchronize(s), cudaSuccess);
	CHECK(cudaGraphExecDestroy(e), cudaSuccess);
	CHECK(cudaGraphDestroy(g0), cudaSuccess);
	CHECK(cudaEventDestroy(ev), cudaSuccess);
	CHECK(cudaStreamDestroy(s), cudaSuccess);
	CHECK(cudaFree(buf), cudaSuccess);
	printf("mode %s\n", mode);
	return SCENARIO_EXIT();
}
