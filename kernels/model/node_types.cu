/*
 * kernels/model/node_types.cu -- one graph with a node of every type
 * cuda.h knows, added through cuGraphAddNode (CUgraphNodeParams), walked
 * at its instantiate, then each exec node set again with the setters that
 * apply to it (issue 30: the shim describes what it knows, skips the rest,
 * and reads nothing it does not own):
 *   kernel (a module function), memset, memcpy (device to device), host (user data the shim
 *   never reads), empty, event record, event wait, batch memory operation
 *   (a 32-bit write), a child graph holding an alloc and a free node
 *   (ownership moved), a conditional IF with a body graph holding a kernel
 *   node; on the stand-in also external-semaphore signal and wait (the GPU
 *   needs a semaphore exported by another API).
 */
#include "scenario.h"
#include "drvapi.h"

static const char ptx[] = DRV_PTX_HEAD ".visible .entry k1(.param .u64 a)\n{\n\tret;\n}\n";

static void host_fn(void *ud)
{
	(void)ud;
}

/* A 1x1x1 launch of f with args. */
static void kernel_params(CUgraphNodeParams *p, CUfunction f, void **args)
{
	memset(p, 0, sizeof *p);
	p->type = CU_GRAPH_NODE_TYPE_KERNEL;
	p->kernel.func = f;
	p->kernel.gridDimX = p->kernel.gridDimY = p->kernel.gridDimZ = 1;
	p->kernel.blockDimX = p->kernel.blockDimY = p->kernel.blockDimZ = 1;
	p->kernel.kernelParams = args;
}

/* 16 words of dst set to value. */
static void memset_params(CUgraphNodeParams *p, unsigned *dst, unsigned value, CUcontext ctx)
{
	memset(p, 0, sizeof *p);
	p->type = CU_GRAPH_NODE_TYPE_MEMSET;
	p->memset.dst = (CUdeviceptr)(uintptr_t)dst;
	p->memset.value = value;
	p->memset.elementSize = 4;
	p->memset.width = 16;
	p->memset.height = 1;
	p->memset.ctx = ctx;
}

/* 256 bytes from src to dst, device to device. */
static void copy_params(CUgraphNodeParams *p, unsigned *src, unsigned *dst, CUcontext ctx)
{
	memset(p, 0, sizeof *p);
	p->type = CU_GRAPH_NODE_TYPE_MEMCPY;
	p->memcpy.copyParams.srcMemoryType = CU_MEMORYTYPE_DEVICE;
	p->memcpy.copyParams.srcDevice = (CUdeviceptr)(uintptr_t)src;
	p->memcpy.copyParams.dstMemoryType = CU_MEMORYTYPE_DEVICE;
	p->memcpy.copyParams.dstDevice = (CUdeviceptr)(uintptr_t)dst;
	p->memcpy.copyParams.WidthInBytes = 256;
	p->memcpy.copyParams.Height = p->memcpy.copyParams.Depth = 1;
	p->memcpy.copyCtx = ctx;
}

static CUgraphNode add(CUgraph g, CUgraphNodeParams *p)
{
	CUgraphNode n = NULL;
	CUresult rc = d.addn(&n, g, NULL, 0, p);
	/* which type a driver refuses (on the H200, driver 580, one add answered
	 * 1 where the stand-in answers 0: the type was not printed then) */
	if (rc != CUDA_SUCCESS)
		printf("cuGraphAddNode of node type %d:\n", (int)p->type);
	CHECK(rc, CUDA_SUCCESS);
	return n;
}

int main(void)
{
	cudaStream_t s;
	cudaEvent_t ev[3];
	CUmodule m;
	CUfunction k1;
	CUcontext ctx;
	cudaGraph_t g, child;
	cudaGraphExec_t e;
	unsigned *word = NULL;
	unsigned long long arg = 5;
	void *kargs[] = {&arg};
	CUgraphNodeParams p;
	CUgraphNode kn, msn, cpn, hn, recn, waitn, opn;
	CUgraphConditionalHandle h;
	CUgraph body[1];
	CUstreamBatchMemOpParams op;

	CHECK(cudaFree(0), cudaSuccess);
	CHECK(cudaStreamCreate(&s), cudaSuccess);
	for (int i = 0; i < 3; i++)
		CHECK(cudaEventCreate(&ev[i]), cudaSuccess);
	CHECK(cudaMalloc((void **)&word, 4096), cudaSuccess);
	drv_init();
	drv_init_nodes();
	CHECK(d.ctx(&ctx), CUDA_SUCCESS);
	CHECK(d.load(&m, ptx), CUDA_SUCCESS);
	CHECK(d.getf(&k1, m, "k1"), CUDA_SUCCESS);
	CHECK(cudaGraphCreate(&g, 0), cudaSuccess);

	kernel_params(&p, k1, kargs);
	kn = add((CUgraph)g, &p);
	memset_params(&p, word, 0, ctx);
	msn = add((CUgraph)g, &p);
	copy_params(&p, word, word + 256, ctx);
	cpn = add((CUgraph)g, &p);
	memset(&p, 0, sizeof p);
	p.type = CU_GRAPH_NODE_TYPE_HOST;
	p.host.fn = host_fn;
	p.host.userData = (void *)(uintptr_t)0x10; /* never a pointer the shim may follow */
	hn = add((CUgraph)g, &p);
	memset(&p, 0, sizeof p);
	p.type = CU_GRAPH_NODE_TYPE_EMPTY;
	add((CUgraph)g, &p);
	memset(&p, 0, sizeof p);
	p.type = CU_GRAPH_NODE_TYPE_EVENT_RECORD;
	p.eventRecord.event = (CUevent)ev[0];
	recn = add((CUgraph)g, &p);
	memset(&p, 0, sizeof p);
	p.type = CU_GRAPH_NODE_TYPE_WAIT_EVENT;
	p.eventWait.event = (CUevent)ev[1];
	waitn = add((CUgraph)g, &p);
	memset(&op, 0, sizeof op);
	op.writeValue.operation = CU_STREAM_MEM_OP_WRITE_VALUE_32;
	op.writeValue.address = (CUdeviceptr)(uintptr_t)word;
	op.writeValue.value = 1;
	memset(&p, 0, sizeof p);
	p.type = CU_GRAPH_NODE_TYPE_BATCH_MEM_OP;
	p.memOp.ctx = ctx;
	p.memOp.count = 1;
	p.memOp.paramArray = &op;
	opn = add((CUgraph)g, &p);

	/* a child graph holding an alloc and a free node, moved into g */
	CHECK(cudaGraphCreate(&child, 0), cudaSuccess);
	memset(&p, 0, sizeof p);
	p.type = CU_GRAPH_NODE_TYPE_MEM_ALLOC;
	p.alloc.poolProps.allocType = CU_MEM_ALLOCATION_TYPE_PINNED;
	p.alloc.poolProps.location.type = CU_MEM_LOCATION_TYPE_DEVICE;
	p.alloc.poolProps.location.id = 0;
	p.alloc.bytesize = 1 << 20;
	CUgraphNode an = add((CUgraph)child, &p), fn;
	CUdeviceptr dp = p.alloc.dptr;
	memset(&p, 0, sizeof p);
	p.type = CU_GRAPH_NODE_TYPE_MEM_FREE;
	p.free.dptr = dp;
	CHECK(d.addn(&fn, (CUgraph)child, &an, 1, &p), CUDA_SUCCESS);
	memset(&p, 0, sizeof p);
	p.type = CU_GRAPH_NODE_TYPE_GRAPH;
	p.graph.graph = (CUgraph)child;
	p.graph.ownership = CU_GRAPH_CHILD_GRAPH_OWNERSHIP_MOVE;
	add((CUgraph)g, &p);

	/* a conditional IF whose body holds a kernel node */
	CHECK(d.cond(&h, (CUgraph)g, ctx, 1, CU_GRAPH_COND_ASSIGN_DEFAULT), CUDA_SUCCESS);
	memset(&p, 0, sizeof p);
	p.type = CU_GRAPH_NODE_TYPE_CONDITIONAL;
	p.conditional.handle = h;
	p.conditional.type = CU_GRAPH_COND_TYPE_IF;
	p.conditional.size = 1;
	p.conditional.ctx = ctx;
	add((CUgraph)g, &p);
	/* the driver sets phGraph_out to its own array (cuda.h: "CUDA-owned
	 * array populated ... during creation of the node"); a caller's array
	 * put there is not written: on the H200 reading one gave garbage, and
	 * the body's add answered 1 */
	body[0] = p.conditional.phGraph_out[0];
	kernel_params(&p, k1, kargs);
	add(body[0], &p);

#ifndef __CUDACC__
	/* external semaphores: the stand-in takes any handle (no import) */
	CUexternalSemaphore sem = (CUexternalSemaphore)(uintptr_t)0x5e3;
	CUDA_EXTERNAL_SEMAPHORE_SIGNAL_PARAMS sp;
	CUDA_EXTERNAL_SEMAPHORE_WAIT_PARAMS wp;
	CUgraphNode sn, wn;
	memset(&sp, 0, sizeof sp);
	memset(&wp, 0, sizeof wp);
	memset(&p, 0, sizeof p);
	p.type = CU_GRAPH_NODE_TYPE_EXT_SEMAS_SIGNAL;
	p.extSemSignal.extSemArray = &sem;
	p.extSemSignal.paramsArray = &sp;
	p.extSemSignal.numExtSems = 1;
	sn = add((CUgraph)g, &p);
	memset(&p, 0, sizeof p);
	p.type = CU_GRAPH_NODE_TYPE_EXT_SEMAS_WAIT;
	p.extSemWait.extSemArray = &sem;
	p.extSemWait.paramsArray = &wp;
	p.extSemWait.numExtSems = 1;
	wn = add((CUgraph)g, &p);
#endif

	CHECK(cudaGraphInstantiate(&e, g, 0), cudaSuccess);

	/* each exec node set again through the setters that apply to it */
	arg = 6;
	kernel_params(&p, k1, kargs);
	CHECK(d.setn((CUgraphExec)e, kn, &p), CUDA_SUCCESS);
	memset_params(&p, word, 3, ctx);
	CHECK(d.setn((CUgraphExec)e, msn, &p), CUDA_SUCCESS);
	copy_params(&p, word + 512, word + 256, ctx);
	CHECK(d.setn((CUgraphExec)e, cpn, &p), CUDA_SUCCESS);
	memset(&p, 0, sizeof p);
	p.type = CU_GRAPH_NODE_TYPE_HOST;
	p.host.fn = host_fn;
	p.host.userData = (void *)(uintptr_t)0x20;
	CHECK(d.setn((CUgraphExec)e, hn, &p), CUDA_SUCCESS);
	memset(&p, 0, sizeof p);
	p.type = CU_GRAPH_NODE_TYPE_EVENT_RECORD;
	p.eventRecord.event = (CUevent)ev[2];
	CHECK(d.setn((CUgraphExec)e, recn, &p), CUDA_SUCCESS);
	CHECK(d.setrec((CUgraphExec)e, recn, (CUevent)ev[0]), CUDA_SUCCESS);
	memset(&p, 0, sizeof p);
	p.type = CU_GRAPH_NODE_TYPE_WAIT_EVENT;
	p.eventWait.event = (CUevent)ev[2];
	CHECK(d.setn((CUgraphExec)e, waitn, &p), CUDA_SUCCESS);
	CHECK(d.setwait((CUgraphExec)e, waitn, (CUevent)ev[1]), CUDA_SUCCESS);
	op.writeValue.value = 2;
	memset(&p, 0, sizeof p);
	p.type = CU_GRAPH_NODE_TYPE_BATCH_MEM_OP;
	p.memOp.ctx = ctx;
	p.memOp.count = 1;
	p.memOp.paramArray = &op;
	CHECK(d.setn((CUgraphExec)e, opn, &p), CUDA_SUCCESS);
	CUDA_BATCH_MEM_OP_NODE_PARAMS bp = {ctx, 1, &op, 0};
	CHECK(d.setop((CUgraphExec)e, opn, &bp), CUDA_SUCCESS);
#ifndef __CUDACC__
	CUDA_EXT_SEM_SIGNAL_NODE_PARAMS ssp = {&sem, &sp, 1};
	CUDA_EXT_SEM_WAIT_NODE_PARAMS swp = {&sem, &wp, 1};
	CHECK(d.setsig((CUgraphExec)e, sn, &ssp), CUDA_SUCCESS);
	CHECK(d.setsw((CUgraphExec)e, wn, &swp), CUDA_SUCCESS);
#endif

	CHECK(cudaGraphLaunch(e, s), cudaSuccess);
	CHECK(cudaStreamSynchronize(s), cudaSuccess);
	CHECK(cudaGraphExecDestroy(e), cudaSuccess);
	CHECK(cudaGraphDestroy(g), cudaSuccess);
	CHECK(d.unload(m), CUDA_SUCCESS);
	for (int i = 0; i < 3; i++)
		CHECK(cudaEventDestroy(ev[i]), cudaSuccess);
	CHECK(cudaFree(word), cudaSuccess);
	CHECK(cudaStreamDestroy(s), cudaSuccess);
	printf("done\n");
	return SCENARIO_EXIT();
}
