/*
 * kernels/model/kernel_forms.cu -- kernel nodes in every form the driver
 * may hand back to the shim's node walk (issue 30), in one graph built node
 * by node, instantiated, its exec's kernel nodes set again, launched:
 *
 *  zero   no parameters, kernelParams NULL
 *  big    one 4 KiB struct parameter (.align 8 .b8 [4096]) whose word 3 is a
 *         device pointer (the walk keeps it as a param_ptr)
 *  pair   two u64 parameters packed in extra (BUFFER_POINTER, BUFFER_SIZE)
 *  bare   no parameters, extra with a buffer pointer alone (no size)
 *  libk   a library kernel (cuLibraryGetKernel) with one u64, by CUkernel:
 *         the node gives back its function in the context (func) and the
 *         CUkernel (kern), as the H200 did (2026-11-29), so the walk
 *         describes it by the function
 * The stand-in returns each node's arguments as the driver owns them: an
 * array of exactly the parameter count, or the extra array that was set,
 * each in its own allocation (ASan sees a read past them).
 */
#include "scenario.h"
#include "drvapi.h"

static const char ptx[] = DRV_PTX_HEAD ".visible .entry zero()\n{\n\tret;\n}\n"
				       ".visible .entry big(.param .align 8 .b8 s[4096])\n{\n\tret;\n}\n"
				       ".visible .entry pair(.param .u64 a, .param .u64 b)\n{\n\tret;\n}\n"
				       ".visible .entry libk(.param .u64 a)\n{\n\tret;\n}\n";

int main(void)
{
	cudaStream_t s;
	CUmodule m;
	CUlibrary l;
	CUfunction zero, big, pair;
	CUkernel libk;
	cudaGraph_t g;
	cudaGraphExec_t e;
	CUgraphNode n[5];
	float *buf = NULL;
	static unsigned long long st[512]; /* the 4 KiB struct */
	unsigned long long packed[2] = {7, 9}, one = 3;
	size_t psize = sizeof packed;
	void *big_p[] = {st}, *libk_p[] = {&one};
	void *pair_x[] = {CU_LAUNCH_PARAM_BUFFER_POINTER, packed, CU_LAUNCH_PARAM_BUFFER_SIZE, &psize,
			  CU_LAUNCH_PARAM_END};
	void *bare_x[] = {CU_LAUNCH_PARAM_BUFFER_POINTER, packed, CU_LAUNCH_PARAM_END};

	CHECK(cudaFree(0), cudaSuccess);
	CHECK(cudaStreamCreate(&s), cudaSuccess);
	CHECK(cudaMalloc((void **)&buf, 4096), cudaSuccess);
	st[3] = (unsigned long long)(uintptr_t)buf;
	drv_init();
	CHECK(d.load(&m, ptx), CUDA_SUCCESS);
	CHECK(d.getf(&zero, m, "zero"), CUDA_SUCCESS);
	CHECK(d.getf(&big, m, "big"), CUDA_SUCCESS);
	CHECK(d.getf(&pair, m, "pair"), CUDA_SUCCESS);
	CHECK(d.lload(&l, ptx, NULL, NULL, 0, NULL, NULL, 0), CUDA_SUCCESS);
	CHECK(d.getk(&libk, l, "libk"), CUDA_SUCCESS);

	CUDA_KERNEL_NODE_PARAMS kp[5] = {drv_kparams(zero, NULL, NULL, NULL), drv_kparams(big, NULL, big_p, NULL),
					 drv_kparams(pair, NULL, NULL, pair_x), drv_kparams(zero, NULL, NULL, bare_x),
					 drv_kparams(NULL, libk, libk_p, NULL)};
	CHECK(cudaGraphCreate(&g, 0), cudaSuccess);
	for (int i = 0; i < 5; i++)
		CHECK(d.addk(&n[i], (CUgraph)g, NULL, 0, &kp[i]), CUDA_SUCCESS);
	CHECK(cudaGraphInstantiate(&e, g, 0), cudaSuccess);
	packed[0] = 8;
	st[4] = 1;
	for (int i = 0; i < 5; i++)
		CHECK(d.setk((CUgraphExec)e, n[i], &kp[i]), CUDA_SUCCESS);
	CHECK(cudaGraphLaunch(e, s), cudaSuccess);
	CHECK(cudaStreamSynchronize(s), cudaSuccess);
	CHECK(cudaGraphExecDestroy(e), cudaSuccess);
	CHECK(cudaGraphDestroy(g), cudaSuccess);
	CHECK(d.lunload(l), CUDA_SUCCESS);
	CHECK(d.unload(m), CUDA_SUCCESS);
	CHECK(cudaFree(buf), cudaSuccess);
	CHECK(cudaStreamDestroy(s), cudaSuccess);
	printf("done\n");
	return SCENARIO_EXIT();
}
