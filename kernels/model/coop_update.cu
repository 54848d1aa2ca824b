/*
 * kernels/model/coop_update.cu -- the cooperative attribute, asked of a
 * kernel node only once a node can carry it (issue 36, nodes.h
 * nodes_coop_note). One executable of a 3-kernel capture, updated from a
 * plain capture (accepted), then from a graph whose second node is
 * cooperative: the driver refuses (AttributesChanged) and CGS001 says so
 * first. How the node became cooperative, by the first argument:
 *
 *  launch  cuLaunchCooperativeKernel in the capture (the default)
 *  attr    cuGraphKernelNodeSetAttribute(COOPERATIVE) on the captured
 *          node, after the capture's end walked the graph
 *  plain   not at all: the update is accepted, no node is asked
 *
 * usage: model_coop_update [launch|attr|plain]
 */
#include <string.h>

#include "scenario.h"
#include "drvapi.h"

static const char ptx[] = DRV_PTX_HEAD ".visible .entry k(.param .u64 a)\n{\n\tret;\n}\n";

static CUresult (*launch)(CUfunction, unsigned, unsigned, unsigned, unsigned, unsigned, unsigned, unsigned, CUstream,
			  void **, void **);
static CUresult (*coop)(CUfunction, unsigned, unsigned, unsigned, unsigned, unsigned, unsigned, unsigned, CUstream,
			void **);
static CUresult (*setattr)(CUgraphNode, CUkernelNodeAttrID, const CUkernelNodeAttrValue *);

/* Three launches of k; the one at index coop_at (-1: none) cooperative. */
static cudaGraph_t capture(cudaStream_t s, CUfunction k, int coop_at, unsigned long long v)
{
	cudaGraph_t g = NULL;
	void *p[] = {&v};
	CHECK(cudaStreamBeginCapture(s, cudaStreamCaptureModeGlobal), cudaSuccess);
	for (int i = 0; i < 3; i++) {
		if (i == coop_at)
			CHECK(coop(k, 1, 1, 1, 1, 1, 1, 0, (CUstream)s, p), CUDA_SUCCESS);
		else
			CHECK(launch(k, 1, 1, 1, 1, 1, 1, 0, (CUstream)s, p, NULL), CUDA_SUCCESS);
	}
	CHECK(cudaStreamEndCapture(s, &g), cudaSuccess);
	return g;
}

int main(int argc, char **argv)
{
	const char *mode = argc > 1 ? argv[1] : "launch";
	int plain = !strcmp(mode, "plain");
	cudaStream_t s;
	CUmodule m;
	CUfunction k;
	cudaGraph_t g0, g1, g2;
	cudaGraphExec_t e;
	cudaGraphExecUpdateResultInfo info;

	CHECK(cudaFree(0), cudaSuccess);
	CHECK(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking), cudaSuccess);
	drv_init();
	drv_entry("cuLaunchKernel", (void **)&launch);
	drv_entry("cuLaunchCooperativeKernel", (void **)&coop);
	drv_entry("cuGraphKernelNodeSetAttribute", (void **)&setattr);
	CHECK(d.load(&m, ptx), CUDA_SUCCESS);
	CHECK(d.getf(&k, m, "k"), CUDA_SUCCESS);

	g0 = capture(s, k, -1, 1);
	CHECK(cudaGraphInstantiate(&e, g0, 0), cudaSuccess);
	g1 = capture(s, k, -1, 2); /* plain: accepted */
	CHECK(cudaGraphExecUpdate(e, g1, &info), cudaSuccess);
	CHECK(cudaGraphDestroy(g1), cudaSuccess);

	g2 = capture(s, k, !strcmp(mode, "launch") ? 1 : -1, 3);
	if (!strcmp(mode, "attr")) {
		cudaGraphNode_t n[3];
		size_t nn = 3;
		CUkernelNodeAttrValue v;
		memset(&v, 0, sizeof v);
		v.cooperative = 1;
		CHECK(cudaGraphGetNodes(g2, n, &nn), cudaSuccess);
		EXPECT(nn == 3);
		CHECK(setattr((CUgraphNode)n[1], CU_LAUNCH_ATTRIBUTE_COOPERATIVE, &v), CUDA_SUCCESS);
	}
	CHECK(cudaGraphExecUpdate(e, g2, &info), plain ? cudaSuccess : cudaErrorGraphExecUpdateFailure);
	if (!plain)
		EXPECT(info.result == cudaGraphExecUpdateErrorAttributesChanged);
	CHECK(cudaGraphDestroy(g2), cudaSuccess);
	CHECK(cudaGraphLaunch(e, s), cudaSuccess);
	CHECK(cudaStreamSynchronize(s), cudaSuccess);
	CHECK(cudaGraphExecDestroy(e), cudaSuccess);
	CHECK(cudaGraphDestroy(g0), cudaSuccess);
	CHECK(d.unload(m), CUDA_SUCCESS);
	CHECK(cudaStreamDestroy(s), cudaSuccess);
	printf("%s done\n", mode);
	return SCENARIO_EXIT();
}
