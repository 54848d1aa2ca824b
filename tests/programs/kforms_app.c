/*
 * tests/programs/kforms_app.c -- the stand-in answers for the handle a
 * kernel launch names as the real stack does (measured: .gpujob/kprobe.cu
 * on an H200, driver 580.159.04, CUDA 13.0, 2026-11-29,
 * docs/measurements.md "Launch handles"):
 *   - the runtime (<<<>>>, cudaLaunchKernel) launches by a CUkernel
 *     (cudaGetKernel's); cuKernelGetFunction gives its function in the
 *     context;
 *   - on that CUkernel cuFuncGetName, cuFuncGetParamInfo and
 *     cuFuncGetModule answer 400 (INVALID_HANDLE), cuKernelGetName,
 *     cuKernelGetParamInfo and cuKernelGetLibrary answer;
 *   - cuGraphKernelNodeGetParams_v2 on a node captured from a launch by the
 *     runtime, by cuLaunchKernel with the CUkernel or with its function,
 *     or added by cuGraphAddKernelNode with either, gives func (the
 *     function), kern (the CUkernel) and ctx;
 *   - a library kernel (cuLibraryGetKernel) alike.
 * Run without the shim (suite standin). Exit 0 iff every answer is the
 * measured one.
 */
#include <dlfcn.h>

#include "scenario.h"
#include "drvapi.h"

static const char ptx[] = DRV_PTX_HEAD ".visible .entry libk(.param .u64 a)\n{\n\tret;\n}\n";

static struct {
	CUresult (*fname)(const char **, CUfunction);
	CUresult (*kname)(const char **, CUkernel);
	CUresult (*fparam)(CUfunction, size_t, size_t *, size_t *);
	CUresult (*kparam)(CUkernel, size_t, size_t *, size_t *);
	CUresult (*fmod)(CUmodule *, CUfunction);
	CUresult (*klib)(CUlibrary *, CUkernel);
	CUresult (*kfunc)(CUfunction *, CUkernel);
	CUresult (*launch)(CUfunction, unsigned, unsigned, unsigned, unsigned, unsigned, unsigned, unsigned, CUstream,
			   void **, void **);
	CUresult (*getp)(CUgraphNode, CUDA_KERNEL_NODE_PARAMS *);
	CUresult (*nodes)(CUgraph, CUgraphNode *, size_t *);
	CUresult (*ctx)(CUcontext *);
} q;

/* The one node of g gives func f, kern k and the current context. */
static void node_is(const char *form, cudaGraph_t g, CUfunction f, CUkernel k)
{
	CUgraphNode n[2];
	size_t nn = 2;
	CUDA_KERNEL_NODE_PARAMS kp;
	CUcontext ctx = NULL;
	CHECK(q.nodes((CUgraph)g, n, &nn), CUDA_SUCCESS);
	EXPECT(nn == 1);
	memset(&kp, 0, sizeof kp);
	CHECK(q.getp(n[0], &kp), CUDA_SUCCESS);
	CHECK(q.ctx(&ctx), CUDA_SUCCESS);
	printf("%s: func %s, kern %s, ctx %s\n", form, kp.func == f ? "the function" : "OTHER",
	       kp.kern == k ? "the kernel" : "OTHER", kp.ctx && kp.ctx == ctx ? "current" : "OTHER");
	EXPECT(kp.func == f && kp.kern == k && kp.ctx == ctx);
	CHECK(cudaGraphDestroy(g), cudaSuccess);
}

int main(void)
{
	cudaStream_t s;
	cudaGraph_t g;
	cudaKernel_t rk;
	CUkernel k, lk;
	CUfunction f, lf;
	CUlibrary l, kl = NULL;
	CUmodule m = NULL;
	const char *n1 = NULL, *n2 = NULL;
	size_t off = 0, size = 0;
	float *buf;
	long n = 16;
	double v = 1;
	unsigned long long one = 1;
	void *args[] = {&buf, &n, &v, NULL}, *largs[] = {&one};

	CHECK(cudaFree(0), cudaSuccess);
	CHECK(cudaStreamCreate(&s), cudaSuccess);
	CHECK(cudaMalloc((void **)&buf, 64), cudaSuccess);
	drv_init();
	(void)drv_init_nodes;
	/* the stand-in's cuGetProcAddress table lacks these: by name, as the shim takes them */
	void *lib = dlopen("libcuda.so.1", RTLD_NOW | RTLD_NOLOAD);
	EXPECT(lib != NULL);
	if (!lib)
		return 1;
	*(void **)&q.fname = dlsym(lib, "cuFuncGetName");
	*(void **)&q.kname = dlsym(lib, "cuKernelGetName");
	*(void **)&q.fparam = dlsym(lib, "cuFuncGetParamInfo");
	*(void **)&q.kparam = dlsym(lib, "cuKernelGetParamInfo");
	EXPECT(q.fname && q.kname && q.fparam && q.kparam);
	if (!q.fname || !q.kname || !q.fparam || !q.kparam)
		return 1;
	drv_entry("cuFuncGetModule", (void **)&q.fmod);
	drv_entry_at("cuKernelGetLibrary", (void **)&q.klib, 12050);
	drv_entry("cuKernelGetFunction", (void **)&q.kfunc);
	drv_entry_at("cuLaunchKernel", (void **)&q.launch, 4000);
	drv_entry("cuGraphKernelNodeGetParams", (void **)&q.getp);
	drv_entry("cuGraphGetNodes", (void **)&q.nodes);
	drv_entry("cuCtxGetCurrent", (void **)&q.ctx);

	/* the runtime's kernel and its function */
	CHECK(cudaGetKernel(&rk, (const void *)k_fill), cudaSuccess);
	k = (CUkernel)rk;
	CHECK(q.kfunc(&f, k), CUDA_SUCCESS);
	EXPECT((void *)f != (void *)k);
	CHECK(q.fname(&n1, (CUfunction)(void *)k), CUDA_ERROR_INVALID_HANDLE);
	CHECK(q.kname(&n1, k), CUDA_SUCCESS);
	CHECK(q.fname(&n2, f), CUDA_SUCCESS);
	EXPECT(n1 && n2 && !strcmp(n1, n2));
	printf("names: %s %s\n", n1 ? n1 : "-", n2 ? n2 : "-");
	CHECK(q.fparam((CUfunction)(void *)k, 0, &off, &size), CUDA_ERROR_INVALID_HANDLE);
	CHECK(q.fmod(&m, (CUfunction)(void *)k), CUDA_ERROR_INVALID_HANDLE);
	CHECK(q.klib(&kl, k), CUDA_SUCCESS);
	EXPECT(kl != NULL);

	/* every launch form: the node gives func, kern and ctx */
	CHECK(cudaStreamBeginCapture(s, cudaStreamCaptureModeGlobal), cudaSuccess);
	LAUNCH_FILL(s, buf, n, 1.0);
	CHECK(cudaStreamEndCapture(s, &g), cudaSuccess);
	node_is("runtime launch", g, f, k);
	/* the kernel's parameters were learned at that launch: its layout now */
	CHECK(q.kparam(k, 0, &off, &size), CUDA_SUCCESS);
	CHECK(cudaStreamBeginCapture(s, cudaStreamCaptureModeGlobal), cudaSuccess);
	CHECK(q.launch((CUfunction)(void *)k, 1, 1, 1, 16, 1, 1, 0, (CUstream)s, args, NULL), CUDA_SUCCESS);
	CHECK(cudaStreamEndCapture(s, &g), cudaSuccess);
	node_is("cuLaunchKernel(CUkernel)", g, f, k);
	CHECK(cudaStreamBeginCapture(s, cudaStreamCaptureModeGlobal), cudaSuccess);
	CHECK(q.launch(f, 1, 1, 1, 16, 1, 1, 0, (CUstream)s, args, NULL), CUDA_SUCCESS);
	CHECK(cudaStreamEndCapture(s, &g), cudaSuccess);
	node_is("cuLaunchKernel(CUfunction)", g, f, k);
	for (int form = 0; form < 2; form++) {
		CUgraphNode nd;
		CUDA_KERNEL_NODE_PARAMS kp = drv_kparams(form ? NULL : f, form ? k : NULL, args, NULL);
		CHECK(cudaGraphCreate(&g, 0), cudaSuccess);
		CHECK(d.addk(&nd, (CUgraph)g, NULL, 0, &kp), CUDA_SUCCESS);
		node_is(form ? "cuGraphAddKernelNode(kern)" : "cuGraphAddKernelNode(func)", g, f, k);
	}

	/* a library kernel alike */
	CHECK(d.lload(&l, ptx, NULL, NULL, 0, NULL, NULL, 0), CUDA_SUCCESS);
	CHECK(d.getk(&lk, l, "libk"), CUDA_SUCCESS);
	CHECK(q.kfunc(&lf, lk), CUDA_SUCCESS);
	CHECK(q.fname(&n1, (CUfunction)(void *)lk), CUDA_ERROR_INVALID_HANDLE);
	CHECK(q.fparam((CUfunction)(void *)lk, 0, &off, &size), CUDA_ERROR_INVALID_HANDLE);
	CHECK(q.kparam(lk, 0, &off, &size), CUDA_SUCCESS);
	CHECK(cudaStreamBeginCapture(s, cudaStreamCaptureModeGlobal), cudaSuccess);
	CHECK(q.launch((CUfunction)(void *)lk, 1, 1, 1, 1, 1, 1, 0, (CUstream)s, largs, NULL), CUDA_SUCCESS);
	CHECK(cudaStreamEndCapture(s, &g), cudaSuccess);
	node_is("library kernel", g, lf, lk);
	CHECK(d.lunload(l), CUDA_SUCCESS);

	CHECK(cudaFree(buf), cudaSuccess);
	CHECK(cudaStreamDestroy(s), cudaSuccess);
	printf("%s\n", scenario_failures ? "FAILED" : "done");
	return SCENARIO_EXIT();
}
