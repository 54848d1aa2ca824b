/*
 * kernels/model/module_reuse.cu -- a function handle reused after its
 * module is unloaded (issue 30: JAX's test suite died of SIGSEGV in the
 * shim's node walk). XLA builds its graphs node by node, so each
 * instantiate below is walked (nodes.c) and each kernel node's parameters
 * read through the kernelParams array the driver returns:
 *
 *  A  module M1 with wide(8 x u64): a graph of one node, instantiated,
 *     launched; graph, exec and M1 unloaded (cuModuleUnload).
 *  B  module M2 with narrow(1 x u64): the driver may give it wide's handle
 *     (the stand-in does, as the driver's allocator does); a graph of it,
 *     instantiated: a layout kept from A would read 7 pointers past the
 *     array (ASan: heap-buffer-overflow; bare: a wild read).
 *  C  M2 unloaded where no preload sees it (the stand-in's own hook, as the
 *     runtime unloads its modules; on the GPU cuModuleUnload), M3 with
 *     wide again, then narrow's handle reused the other way; instantiated.
 *  D  the same through libraries (cuLibraryLoadData, cuLibraryGetKernel,
 *     kernel nodes made from the CUkernel, which give back the kernel's
 *     function in the context beside it): L1 wide, unloaded, L2 narrow.
 * The driver entry points come from the runtime (no -lcuda), as XLA's do.
 */
#include <dlfcn.h>
#include "scenario.h"
#include "drvapi.h"

static const char ptx_wide[] =
    DRV_PTX_HEAD ".visible .entry wide(.param .u64 a0, .param .u64 a1, .param .u64 a2, "
		 ".param .u64 a3, .param .u64 a4, .param .u64 a5, .param .u64 a6, .param .u64 a7)\n"
		 "{\n\tret;\n}\n";
static const char ptx_narrow[] = DRV_PTX_HEAD ".visible .entry narrow(.param .u64 a0)\n{\n\tret;\n}\n";

/* One kernel node of f (or library kernel k) with args[0..n), instantiated, launched, destroyed. */
static void one_node(cudaStream_t s, CUfunction f, CUkernel k, unsigned long long *args, int n)
{
	void *ptrs[8];
	CUDA_KERNEL_NODE_PARAMS kp;
	cudaGraph_t g;
	cudaGraphExec_t e;
	CUgraphNode node;
	for (int i = 0; i < n; i++)
		ptrs[i] = &args[i];
	kp = drv_kparams(f, k, ptrs, NULL);
	CHECK(cudaGraphCreate(&g, 0), cudaSuccess);
	CHECK(d.addk(&node, (CUgraph)g, NULL, 0, &kp), CUDA_SUCCESS);
	CHECK(cudaGraphInstantiate(&e, g, 0), cudaSuccess);
	CHECK(cudaGraphLaunch(e, s), cudaSuccess);
	CHECK(cudaStreamSynchronize(s), cudaSuccess);
	CHECK(cudaGraphExecDestroy(e), cudaSuccess);
	CHECK(cudaGraphDestroy(g), cudaSuccess);
}

/* An unload no preload sees: the stand-in's test hook; on the GPU the
 * driver's (the shim sees that one; its check is the stand-in's case). */
static CUresult unload_unseen(CUmodule m)
{
#ifdef __CUDACC__
	return d.unload(m);
#else
	void *h = dlopen("libcuda.so.1", RTLD_NOW | RTLD_NOLOAD);
	CUresult (*quiet)(CUmodule) = h ? (CUresult(*)(CUmodule))dlsym(h, "standin_module_unload_unhooked") : NULL;
	return quiet ? quiet(m) : CUDA_ERROR_NOT_FOUND;
#endif
}

int main(void)
{
	cudaStream_t s;
	CUmodule m1, m2, m3;
	CUlibrary l1, l2;
	CUfunction wide, narrow, wide2;
	CUkernel kw, kn;
	unsigned long long args[8] = {1, 2, 3, 4, 5, 6, 7, 8};

	CHECK(cudaFree(0), cudaSuccess);
	CHECK(cudaStreamCreate(&s), cudaSuccess);
	drv_init();

	CHECK(d.load(&m1, ptx_wide), CUDA_SUCCESS); /* A */
	CHECK(d.getf(&wide, m1, "wide"), CUDA_SUCCESS);
	one_node(s, wide, NULL, args, 8);
	CHECK(d.unload(m1), CUDA_SUCCESS);

	CHECK(d.load(&m2, ptx_narrow), CUDA_SUCCESS); /* B */
	CHECK(d.getf(&narrow, m2, "narrow"), CUDA_SUCCESS);
	fprintf(stderr, "B: narrow %s wide's handle\n", narrow == wide ? "reuses" : "does not reuse");
	one_node(s, narrow, NULL, args, 1);

	CHECK(unload_unseen(m2), CUDA_SUCCESS); /* C */
	CHECK(d.load(&m3, ptx_wide), CUDA_SUCCESS);
	CHECK(d.getf(&wide2, m3, "wide"), CUDA_SUCCESS);
	fprintf(stderr, "C: wide %s narrow's handle\n", wide2 == narrow ? "reuses" : "does not reuse");
	one_node(s, wide2, NULL, args, 8);
	CHECK(d.unload(m3), CUDA_SUCCESS);
	CHECK(d.load(&m2, ptx_narrow), CUDA_SUCCESS);
	CHECK(d.getf(&narrow, m2, "narrow"), CUDA_SUCCESS);
	CHECK(unload_unseen(m2), CUDA_SUCCESS);
	CHECK(d.load(&m2, ptx_narrow), CUDA_SUCCESS);
	CHECK(d.getf(&narrow, m2, "narrow"), CUDA_SUCCESS);
	one_node(s, narrow, NULL, args, 1);
	CHECK(d.unload(m2), CUDA_SUCCESS);

	CHECK(d.lload(&l1, ptx_wide, NULL, NULL, 0, NULL, NULL, 0), CUDA_SUCCESS); /* D */
	CHECK(d.getk(&kw, l1, "wide"), CUDA_SUCCESS);
	one_node(s, NULL, kw, args, 8);
	CHECK(d.lunload(l1), CUDA_SUCCESS);
	CHECK(d.lload(&l2, ptx_narrow, NULL, NULL, 0, NULL, NULL, 0), CUDA_SUCCESS);
	CHECK(d.getk(&kn, l2, "narrow"), CUDA_SUCCESS);
	fprintf(stderr, "D: narrow %s wide's kernel handle\n", kn == kw ? "reuses" : "does not reuse");
	one_node(s, NULL, kn, args, 1);
	CHECK(d.lunload(l2), CUDA_SUCCESS);

	CHECK(cudaStreamDestroy(s), cudaSuccess);
	printf("done\n");
	return SCENARIO_EXIT();
}
