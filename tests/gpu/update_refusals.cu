/*
 * tests/gpu/update_refusals.cu -- which changes does cuGraphExecUpdate
 * refuse? (issue 15 point 2). For every case an exec is instantiated from
 * graph A (built with the driver's node API, one node) and updated from
 * graph B that differs in exactly one thing. Prints one table row per case:
 *   case | change | rc | result | errorNode is B's node | predicted rc/result
 * The predicted column is the shim's prediction (docs/update-refusals.md,
 * from docs/cuda-facts.md §5); the run fills the measured columns.
 * Then the same updates run under the shim: CGSHIM_LOG_FILE shows which ones
 * it predicted (CGS001 records) -- tests/gpu/issue15 compares.
 *
 * Build: nvcc -O2 -arch=sm_90 -o update_refusals tests/gpu/update_refusals.cu -lcuda
 */
#include <cuda.h>
#include <cuda_runtime.h>
#include <stdio.h>
#include <string.h>

__global__ void k_one(float *p)
{
	if (p)
		p[threadIdx.x] += 1.0f;
}
__global__ void k_two(float *p)
{
	if (p)
		p[threadIdx.x] *= 2.0f;
}
__global__ void k_coop(float *p)
{
	if (p)
		p[threadIdx.x] -= 1.0f;
}

/* the same kernel body in a module of its own (JIT from PTX) */
static const char *ptx = ".version 7.0\n.target sm_50\n.address_size 64\n"
			 ".visible .entry k_other(.param .u64 p)\n{\n\tret;\n}\n";

static void host_a(void *)
{
}
static void host_b(void *)
{
}

#define CK(x)                                                                                                          \
	do {                                                                                                           \
		CUresult r_ = (x);                                                                                     \
		if (r_) {                                                                                              \
			fprintf(stderr, "%s:%d %s = %d\n", __FILE__, __LINE__, #x, (int)r_);                           \
			return -1000 - (int)r_;                                                                        \
		}                                                                                                      \
	} while (0)

static CUdeviceptr buf, buf2;
static void *hostbuf;
static CUfunction f_one, f_two, f_coop, f_other, f_ctx2;
static CUcontext ctx1, ctx2;

enum { K_KERNEL, K_MEMSET, K_MEMCPY, K_HOST };

struct spec {
	int kind;
	CUfunction f;
	unsigned grid, block, shmem;
	int coop;
	CUdeviceptr p;
	unsigned elem;	    /* memset */
	unsigned value;	    /* memset */
	int cpykind;	    /* 0 DtoD, 1 HtoD */
	void (*fn)(void *); /* host */
};

static int add(CUgraph g, const struct spec *s, CUgraphNode *n)
{
	if (s->kind == K_KERNEL) {
		CUDA_KERNEL_NODE_PARAMS kp;
		memset(&kp, 0, sizeof kp);
		void *args[] = {(void *)&s->p};
		kp.func = s->f;
		kp.gridDimX = s->grid, kp.gridDimY = 1, kp.gridDimZ = 1;
		kp.blockDimX = s->block, kp.blockDimY = 1, kp.blockDimZ = 1;
		kp.sharedMemBytes = s->shmem;
		kp.kernelParams = args;
		CK(cuGraphAddKernelNode(n, g, NULL, 0, &kp));
		if (s->coop) {
			CUkernelNodeAttrValue v;
			memset(&v, 0, sizeof v);
			v.cooperative = 1;
			CK(cuGraphKernelNodeSetAttribute(*n, CU_LAUNCH_ATTRIBUTE_COOPERATIVE, &v));
		}
	} else if (s->kind == K_MEMSET) {
		CUDA_MEMSET_NODE_PARAMS m;
		memset(&m, 0, sizeof m);
		m.dst = s->p;
		m.elementSize = s->elem;
		m.width = 256 / s->elem;
		m.height = 1;
		m.value = s->value;
		CK(cuGraphAddMemsetNode(n, g, NULL, 0, &m, ctx1));
	} else if (s->kind == K_MEMCPY) {
		CUDA_MEMCPY3D c;
		memset(&c, 0, sizeof c);
		c.dstMemoryType = CU_MEMORYTYPE_DEVICE;
		c.dstDevice = s->p;
		if (s->cpykind) {
			c.srcMemoryType = CU_MEMORYTYPE_HOST;
			c.srcHost = hostbuf;
		} else {
			c.srcMemoryType = CU_MEMORYTYPE_DEVICE;
			c.srcDevice = buf2;
		}
		c.WidthInBytes = 256;
		c.Height = 1;
		c.Depth = 1;
		CK(cuGraphAddMemcpyNode(n, g, NULL, 0, &c, ctx1));
	} else {
		CUDA_HOST_NODE_PARAMS h = {s->fn, NULL};
		CK(cuGraphAddHostNode(n, g, NULL, 0, &h));
	}
	return 0;
}

static const char *rname(int r)
{
	static const char *n[] = {
	    "Success",		 "Error",	 "TopologyChanged",	      "NodeTypeChanged",  "FunctionChanged",
	    "ParametersChanged", "NotSupported", "UnsupportedFunctionChange", "AttributesChanged"};
	return r >= 0 && r < 9 ? n[r] : "?";
}

static int fails;

static void row(const char *name, const char *change, struct spec a, struct spec b, const char *predicted)
{
	CUgraph ga, gb;
	CUgraphNode na = NULL, nb = NULL;
	CUgraphExec e = NULL;
	CUgraphExecUpdateResultInfo info;
	int ra, rb;
	cuGraphCreate(&ga, 0);
	cuGraphCreate(&gb, 0);
	ra = add(ga, &a, &na);
	rb = add(gb, &b, &nb);
	if (ra || rb) {
		printf("| %s | %s | node add failed (%d/%d) | - | - | %s |\n", name, change, ra, rb, predicted);
		goto out;
	}
	if (cuGraphInstantiate(&e, ga, 0) != CUDA_SUCCESS) {
		printf("| %s | %s | instantiate failed | - | - | %s |\n", name, change, predicted);
		goto out;
	}
	memset(&info, 0, sizeof info);
	{
		CUresult rc = cuGraphExecUpdate(e, gb, &info);
		printf("| %s | %s | %d | %d %s | %s | %s |\n", name, change, (int)rc, (int)info.result,
		       rname(info.result),
		       info.errorNode == nb ? "yes"
		       : info.errorNode	    ? "other"
					    : "NULL",
		       predicted);
	}
out:
	if (e)
		cuGraphExecDestroy(e);
	cuGraphDestroy(ga);
	cuGraphDestroy(gb);
	fflush(stdout);
}

int main(void)
{
	CUdevice dev;
	CUmodule mod, mod2;
	cudaFree(0);
	CK(cuCtxGetCurrent(&ctx1));
	CK(cuCtxGetDevice(&dev));
	CK(cuMemAlloc(&buf, 4096));
	CK(cuMemAlloc(&buf2, 4096));
	CK(cuMemAllocHost(&hostbuf, 4096));
	cudaGetFuncBySymbol(&f_one, (const void *)k_one);
	cudaGetFuncBySymbol(&f_two, (const void *)k_two);
	cudaGetFuncBySymbol(&f_coop, (const void *)k_coop);
	CK(cuModuleLoadData(&mod, ptx));
	CK(cuModuleGetFunction(&f_other, mod, "k_other"));
	/* a second context with the same PTX module */
	CK(cuCtxCreate(&ctx2, NULL, 0, dev));
	CK(cuModuleLoadData(&mod2, ptx));
	CK(cuModuleGetFunction(&f_ctx2, mod2, "k_other"));
	CK(cuCtxSetCurrent(ctx1));

	struct spec k = {K_KERNEL, f_one, 1, 32, 0, 0, buf, 0, 0, 0, NULL};
	struct spec ms = {K_MEMSET, NULL, 0, 0, 0, 0, buf, 1, 7, 0, NULL};
	struct spec cp = {K_MEMCPY, NULL, 0, 0, 0, 0, buf, 0, 0, 0, NULL};
	struct spec h = {K_HOST, NULL, 0, 0, 0, 0, 0, 0, 0, 0, host_a};
	struct spec b;

	printf("| case | change | rc | result | errorNode | predicted (rc result) |\n|---|---|---|---|---|---|\n");
	b = k, b.grid = 4;
	row("kernel-grid", "grid 1 -> 4", k, b, "0 Success");
	b = k, b.block = 64;
	row("kernel-block", "block 32 -> 64", k, b, "0 Success");
	b = k, b.shmem = 1024;
	row("kernel-shmem", "dynamic shared memory 0 -> 1024", k, b, "0 Success");
	b = k, b.p = buf2;
	row("kernel-param", "pointer parameter buf -> buf2", k, b, "0 Success");
	b = k, b.f = f_two;
	row("kernel-func-same-module", "function k_one -> k_two (same module)", k, b, "0 Success");
	b = k, b.f = f_other;
	row("kernel-func-other-module", "function from another module (cuModuleLoadData)", k, b, "0 Success");
	b = k, b.f = f_ctx2;
	row("kernel-func-other-context", "function from another context", k, b, "910 UnsupportedFunctionChange");
	b = k, b.f = f_coop, b.coop = 1;
	row("kernel-cooperative", "non-cooperative -> cooperative", k, b, "910 AttributesChanged");
	b = ms, b.kind = K_KERNEL, b.f = f_one, b.grid = 1, b.block = 32;
	row("node-type", "memset -> kernel", ms, b, "910 NodeTypeChanged");
	b = ms, b.value = 9;
	row("memset-value", "value 7 -> 9", ms, b, "0 Success");
	b = ms, b.p = buf2;
	row("memset-dst", "dst buf -> buf2", ms, b, "0 Success");
	b = ms, b.elem = 4;
	row("memset-elem", "element size 1 -> 4", ms, b, "0 Success");
	b = cp, b.p = buf2 + 256;
	row("memcpy-dst", "dst buf -> buf2+256 (same kind)", cp, b, "0 Success");
	b = cp, b.cpykind = 1;
	row("memcpy-kind", "DtoD -> HtoD", cp, b, "910 ParametersChanged");
	b = h, b.fn = host_b;
	row("host-func", "host function a -> b", h, b, "0 Success");
	return fails;
}
