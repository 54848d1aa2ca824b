/*
 * kernels/model/launch_alias.cu -- a captured graph described from the
 * launches the shim saw (issue 36) when they name a CUkernel: the runtime
 * launches by one (<<<>>>), and so may a program (cuLaunchKernel with a
 * library kernel), while the node a walk reads gives the context's
 * CUfunction beside it (measured on the H200, 2026-11-29:
 * docs/measurements.md "Launch handles"). The shim finds the walk's
 * function entry through the CUkernel (nodes.c, launch-handle aliases).
 *
 *  1. Two rounds: library L loaded, its kernel libk taken; three captures
 *     of libk launched by its CUkernel twice and k_fill by the runtime
 *     once; L unloaded. At debug each capture's end summarises its graph:
 *     the first of a round is walked (a first capture; after the unload
 *     the entries and their aliases are asked again), the two others are
 *     described from their launches: 4.
 *  2. With 2 devices (STANDIN_DEVICES=2, or a 2-GPU host): L again, libk
 *     captured twice on device 0 (walked, then from launches), twice on
 *     device 1 (its function is device 1's: the first described from the
 *     launches with device 0's function is refused by the take's
 *     comparison and walked, after which libk has two live functions and
 *     no alias: walked), once more on device 0 (walked): 1 more.
 * stdout is deterministic.
 */
#include "scenario.h"
#include "drvapi.h"

static const char ptx[] = DRV_PTX_HEAD ".visible .entry libk(.param .u64 a)\n{\n\tret;\n}\n";

static CUresult (*launch)(CUfunction, unsigned, unsigned, unsigned, unsigned, unsigned, unsigned, unsigned, CUstream,
			  void **, void **);

/* One capture on s: libk by its CUkernel twice, k_fill by the runtime when buf. */
static void capture(cudaStream_t s, CUkernel k, float *buf)
{
	cudaGraph_t g;
	unsigned long long one = 1;
	void *args[] = {&one};
	CHECK(cudaStreamBeginCapture(s, cudaStreamCaptureModeThreadLocal), cudaSuccess);
	for (int i = 0; i < 2; i++)
		CHECK(launch((CUfunction)(void *)k, 1, 1, 1, 1, 1, 1, 0, (CUstream)s, args, NULL), CUDA_SUCCESS);
	if (buf)
		LAUNCH_FILL(s, buf, 16, 1.0);
	CHECK(cudaStreamEndCapture(s, &g), cudaSuccess);
	CHECK(cudaGraphDestroy(g), cudaSuccess);
}

int main(void)
{
	cudaStream_t s, s1;
	CUlibrary l;
	CUkernel k;
	float *buf;
	int ndev = 0;

	CHECK(cudaFree(0), cudaSuccess);
	CHECK(cudaStreamCreate(&s), cudaSuccess);
	CHECK(cudaMalloc((void **)&buf, 64), cudaSuccess);
	drv_init();
	(void)drv_init_nodes;
	drv_entry_at("cuLaunchKernel", (void **)&launch, 4000);
	for (int round = 0; round < 2; round++) {
		CHECK(d.lload(&l, ptx, NULL, NULL, 0, NULL, NULL, 0), CUDA_SUCCESS);
		CHECK(d.getk(&k, l, "libk"), CUDA_SUCCESS);
		for (int i = 0; i < 3; i++)
			capture(s, k, buf);
		CHECK(cudaStreamSynchronize(s), cudaSuccess);
		CHECK(d.lunload(l), CUDA_SUCCESS);
	}
	if (cudaGetDeviceCount(&ndev) == cudaSuccess && ndev >= 2) {
		CHECK(d.lload(&l, ptx, NULL, NULL, 0, NULL, NULL, 0), CUDA_SUCCESS);
		CHECK(d.getk(&k, l, "libk"), CUDA_SUCCESS);
		capture(s, k, NULL);
		capture(s, k, NULL);
		CHECK(cudaSetDevice(1), cudaSuccess);
		CHECK(cudaStreamCreate(&s1), cudaSuccess);
		capture(s1, k, NULL);
		capture(s1, k, NULL);
		CHECK(cudaStreamDestroy(s1), cudaSuccess);
		CHECK(cudaSetDevice(0), cudaSuccess);
		capture(s, k, NULL);
		CHECK(d.lunload(l), CUDA_SUCCESS);
	}
	CHECK(cudaFree(buf), cudaSuccess);
	CHECK(cudaStreamDestroy(s), cudaSuccess);
	printf("done\n");
	return SCENARIO_EXIT();
}
