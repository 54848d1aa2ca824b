/*
 * kernels/model/launch_forms.cu -- captured launches in every argument form
 * the launch log (shim/nodes-launch.c) describes, each capture taken three
 * times with other values (issue 36): the first is walked (no walk has
 * described its functions yet), the next two are described from their
 * launches, which CGSHIM_SUMMARY_CHECK=1 compares with a walk node by node.
 *
 *  mixed  .u8, .u16, .u32, .f32, .u64: kept values of 1, 2, 4 and 8 bytes
 *         at aligned offsets (the template path: nodes_fn_small)
 *  zero   no parameters, kernelParams NULL (the template path)
 *  eight  eight .u32 (CG_NODE_MAXP parameters: the template path)
 *  nine   nine .u32 (more than CG_NODE_MAXP: nodes_kernel_fill)
 *  wide   a 24-byte struct whose word 1 is a device pointer (kept as a
 *         param_ptr: nodes_kernel_fill)
 *  pair   a .u64 and a .u32 packed in extra (nodes_kernel_fill)
 *  f0-f9  one .u32 each: 16 functions a capture (the log's index of them)
 *
 * A fourth capture unloads a module of its own between two launches
 * (relaxed mode): it is walked, not described from its launches (a
 * handle's function may have changed with an unload). Two captures of 34
 * functions follow: the first walked (its g functions new), the second
 * too (more functions than the log keeps, FN_MAX).
 */
#include "scenario.h"
#include "drvapi.h"

static const char ptx_a[] = DRV_PTX_HEAD
    ".visible .entry mixed(.param .u8 a, .param .u16 b, .param .u32 c, .param .f32 d, .param .u64 e)\n"
    "{\n\tret;\n}\n"
    ".visible .entry zero()\n{\n\tret;\n}\n"
    ".visible .entry eight(.param .u32 a0, .param .u32 a1, .param .u32 a2, .param .u32 a3, .param .u32 a4, "
    ".param .u32 a5, .param .u32 a6, .param .u32 a7)\n{\n\tret;\n}\n"
    ".visible .entry nine(.param .u32 a0, .param .u32 a1, .param .u32 a2, .param .u32 a3, .param .u32 a4, "
    ".param .u32 a5, .param .u32 a6, .param .u32 a7, .param .u32 a8)\n{\n\tret;\n}\n"
    ".visible .entry wide(.param .align 8 .b8 s[24])\n{\n\tret;\n}\n"
    ".visible .entry pair(.param .u64 a, .param .u32 b)\n{\n\tret;\n}\n";
/* ptx_fn(name): sixteen entries name0..name15 of one .u32 each */
#define PTX_FN1(p, i) ".visible .entry " p #i "(.param .u32 a)\n{\n\tret;\n}\n"
#define PTX_FN(p)                                                                                                      \
	DRV_PTX_HEAD PTX_FN1(p, 0) PTX_FN1(p, 1) PTX_FN1(p, 2) PTX_FN1(p, 3) PTX_FN1(p, 4) PTX_FN1(p, 5) PTX_FN1(p, 6) \
	    PTX_FN1(p, 7) PTX_FN1(p, 8) PTX_FN1(p, 9) PTX_FN1(p, 10) PTX_FN1(p, 11) PTX_FN1(p, 12) PTX_FN1(p, 13)      \
		PTX_FN1(p, 14) PTX_FN1(p, 15)
static const char ptx_b[] = PTX_FN("f"), ptx_c[] = PTX_FN("g");

static CUresult (*launch)(CUfunction, unsigned, unsigned, unsigned, unsigned, unsigned, unsigned, unsigned, CUstream,
			  void **, void **);
static CUfunction mixed, zero, eight, nine, wide, pair, f[16], g[16];

static void go(cudaStream_t s, CUfunction fn, void **args, void **extra, unsigned grid)
{
	CHECK(launch(fn, grid, 1, 1, 32, 1, 1, 0, (CUstream)s, args, extra), CUDA_SUCCESS);
}

/* One capture, every form, values from r; the module m unloaded between
 * two launches when given (relaxed mode). */
static void capture(cudaStream_t s, unsigned r, float *buf, CUmodule m)
{
	cudaGraph_t g;
	cudaGraphExec_t e;
	unsigned char a = (unsigned char)(5 + r);
	unsigned short b = (unsigned short)(0x1234 + r);
	unsigned c = 0xdeadbe00u + r, u[9];
	float x = 1.5f + (float)r;
	unsigned long long q = 0x1122334455667700ull + r, st[3] = {r, (unsigned long long)(uintptr_t)buf, 7};
	struct {
		unsigned long long a;
		unsigned b, pad;
	} packed = {0x99 + r, 0x77 + r, 0};
	size_t psize = 12;
	void *mixed_p[] = {&a, &b, &c, &x, &q}, *u_p[9], *wide_p[] = {st};
	void *pair_x[] = {CU_LAUNCH_PARAM_BUFFER_POINTER, &packed, CU_LAUNCH_PARAM_BUFFER_SIZE, &psize,
			  CU_LAUNCH_PARAM_END};
	for (int i = 0; i < 9; i++)
		u[i] = 100 * r + (unsigned)i, u_p[i] = &u[i];
	CHECK(cudaStreamBeginCapture(s, m ? cudaStreamCaptureModeRelaxed : cudaStreamCaptureModeThreadLocal),
	      cudaSuccess);
	go(s, mixed, mixed_p, NULL, 1);
	if (m)
		CHECK(d.unload(m), CUDA_SUCCESS);
	go(s, zero, NULL, NULL, 2);
	go(s, eight, u_p, NULL, 3);
	go(s, nine, u_p, NULL, 4);
	go(s, mixed, mixed_p, NULL, 5);
	go(s, wide, wide_p, NULL, 6);
	go(s, pair, NULL, pair_x, 7);
	for (int i = 0; i < 10; i++)
		go(s, f[i], u_p, NULL, 8);
	go(s, mixed, mixed_p, NULL, 9);
	go(s, eight, u_p, NULL, 10);
	CHECK(cudaStreamEndCapture(s, &g), cudaSuccess);
	CHECK(cudaGraphInstantiate(&e, g, 0), cudaSuccess); /* at debug: a node record a node */
	CHECK(cudaGraphExecDestroy(e), cudaSuccess);
	CHECK(cudaGraphDestroy(g), cudaSuccess);
}

/* One capture of 34 functions (zero, eight, f0-f15, g0-g15): more than
 * the log keeps, walked. */
static void capture_many(cudaStream_t s)
{
	cudaGraph_t gr;
	unsigned u = 1;
	void *one[] = {&u}, *u_p[] = {&u, &u, &u, &u, &u, &u, &u, &u};
	CHECK(cudaStreamBeginCapture(s, cudaStreamCaptureModeThreadLocal), cudaSuccess);
	go(s, zero, NULL, NULL, 1);
	go(s, eight, u_p, NULL, 1);
	for (int i = 0; i < 16; i++) {
		go(s, f[i], one, NULL, 1);
		go(s, g[i], one, NULL, 1);
	}
	CHECK(cudaStreamEndCapture(s, &gr), cudaSuccess);
	CHECK(cudaGraphDestroy(gr), cudaSuccess);
}

int main(void)
{
	cudaStream_t s;
	CUmodule ma, mb, mc, md;
	float *buf = NULL;
	char name[4];

	CHECK(cudaFree(0), cudaSuccess);
	CHECK(cudaStreamCreate(&s), cudaSuccess);
	CHECK(cudaMalloc((void **)&buf, 4096), cudaSuccess);
	drv_init();
	(void)drv_init_nodes;
	drv_entry_at("cuLaunchKernel", (void **)&launch, 4000);
	CHECK(d.load(&ma, ptx_a), CUDA_SUCCESS);
	CHECK(d.load(&mb, ptx_b), CUDA_SUCCESS);
	CHECK(d.load(&md, ptx_c), CUDA_SUCCESS);
	CHECK(d.getf(&mixed, ma, "mixed"), CUDA_SUCCESS);
	CHECK(d.getf(&zero, ma, "zero"), CUDA_SUCCESS);
	CHECK(d.getf(&eight, ma, "eight"), CUDA_SUCCESS);
	CHECK(d.getf(&nine, ma, "nine"), CUDA_SUCCESS);
	CHECK(d.getf(&wide, ma, "wide"), CUDA_SUCCESS);
	CHECK(d.getf(&pair, ma, "pair"), CUDA_SUCCESS);
	for (int i = 0; i < 16; i++) {
		snprintf(name, sizeof name, "f%d", i);
		CHECK(d.getf(&f[i], mb, name), CUDA_SUCCESS);
		snprintf(name, sizeof name, "g%d", i);
		CHECK(d.getf(&g[i], md, name), CUDA_SUCCESS);
	}
	for (unsigned r = 0; r < 3; r++)
		capture(s, r, buf, NULL);
	CHECK(d.load(&mc, ptx_b), CUDA_SUCCESS);
	capture(s, 3, buf, mc);
	for (int i = 0; i < 2; i++) /* the first: its g functions no walk described */
		capture_many(s);
	CHECK(cudaStreamSynchronize(s), cudaSuccess);
	CHECK(d.unload(md), CUDA_SUCCESS);
	CHECK(d.unload(mb), CUDA_SUCCESS);
	CHECK(d.unload(ma), CUDA_SUCCESS);
	CHECK(cudaFree(buf), cudaSuccess);
	CHECK(cudaStreamDestroy(s), cudaSuccess);
	printf("done\n");
	return SCENARIO_EXIT();
}
