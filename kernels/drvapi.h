/*
 * kernels/drvapi.h -- driver entry points for scenarios that load modules
 * and build kernel nodes themselves, as XLA does: taken from the runtime
 * (cudaGetDriverEntryPointByVersion), so neither build links libcuda and
 * the shim's wrappers are what the scenario calls. Include after
 * scenario.h (CHECK, EXPECT), once per program.
 */
#ifndef CGSHIM_DRVAPI_H
#define CGSHIM_DRVAPI_H

#include <cuda.h>

#define DRV_PTX_HEAD ".version 8.0\n.target sm_90\n.address_size 64\n"

static struct {
	CUresult (*load)(CUmodule *, const void *);
	CUresult (*unload)(CUmodule);
	CUresult (*getf)(CUfunction *, CUmodule, const char *);
	CUresult (*lload)(CUlibrary *, const void *, CUjit_option *, void **, unsigned, CUlibraryOption *, void **,
			  unsigned);
	CUresult (*lunload)(CUlibrary);
	CUresult (*getk)(CUkernel *, CUlibrary, const char *);
	CUresult (*addk)(CUgraphNode *, CUgraph, const CUgraphNode *, size_t, const CUDA_KERNEL_NODE_PARAMS *);
	CUresult (*setk)(CUgraphExec, CUgraphNode, const CUDA_KERNEL_NODE_PARAMS *);
	CUresult (*addn)(CUgraphNode *, CUgraph, const CUgraphNode *, size_t, CUgraphNodeParams *);
	CUresult (*setn)(CUgraphExec, CUgraphNode, CUgraphNodeParams *);
	CUresult (*cond)(CUgraphConditionalHandle *, CUgraph, CUcontext, unsigned, unsigned);
	CUresult (*ctx)(CUcontext *);
	CUresult (*setrec)(CUgraphExec, CUgraphNode, CUevent);
	CUresult (*setwait)(CUgraphExec, CUgraphNode, CUevent);
	CUresult (*setop)(CUgraphExec, CUgraphNode, const CUDA_BATCH_MEM_OP_NODE_PARAMS *);
	CUresult (*setsig)(CUgraphExec, CUgraphNode, const CUDA_EXT_SEM_SIGNAL_NODE_PARAMS *);
	CUresult (*setsw)(CUgraphExec, CUgraphNode, const CUDA_EXT_SEM_WAIT_NODE_PARAMS *);
} d;

static void drv_entry_at(const char *name, void **p, unsigned version)
{
	enum cudaDriverEntryPointQueryResult q;
	CHECK(cudaGetDriverEntryPointByVersion(name, p, version, cudaEnableDefault, &q), cudaSuccess);
	EXPECT(*p && q == cudaDriverEntryPointSuccess);
}

static void drv_entry(const char *name, void **p)
{
	drv_entry_at(name, p, 12000);
}

/* The generic node calls and the setters of every node type (node_types). */
static void drv_init_nodes(void)
{
	drv_entry_at("cuGraphAddNode", (void **)&d.addn, 12020);
	drv_entry_at("cuGraphExecNodeSetParams", (void **)&d.setn, 12020);
	drv_entry_at("cuGraphConditionalHandleCreate", (void **)&d.cond, 12030);
	drv_entry("cuCtxGetCurrent", (void **)&d.ctx);
	drv_entry("cuGraphExecEventRecordNodeSetEvent", (void **)&d.setrec);
	drv_entry("cuGraphExecEventWaitNodeSetEvent", (void **)&d.setwait);
	drv_entry("cuGraphExecBatchMemOpNodeSetParams", (void **)&d.setop);
	drv_entry("cuGraphExecExternalSemaphoresSignalNodeSetParams", (void **)&d.setsig);
	drv_entry("cuGraphExecExternalSemaphoresWaitNodeSetParams", (void **)&d.setsw);
}

static void drv_init(void)
{
	drv_entry("cuModuleLoadData", (void **)&d.load);
	drv_entry("cuModuleUnload", (void **)&d.unload);
	drv_entry("cuModuleGetFunction", (void **)&d.getf);
	drv_entry("cuLibraryLoadData", (void **)&d.lload);
	drv_entry("cuLibraryUnload", (void **)&d.lunload);
	drv_entry("cuLibraryGetKernel", (void **)&d.getk);
	drv_entry("cuGraphAddKernelNode", (void **)&d.addk);
	drv_entry("cuGraphExecKernelNodeSetParams", (void **)&d.setk);
}

/* A 1x1x1 launch of f (or library kernel k) with these arguments. */
static CUDA_KERNEL_NODE_PARAMS drv_kparams(CUfunction f, CUkernel k, void **params, void **extra)
{
	CUDA_KERNEL_NODE_PARAMS kp;
	memset(&kp, 0, sizeof kp);
	kp.func = f;
	kp.kern = k;
	kp.gridDimX = kp.gridDimY = kp.gridDimZ = 1;
	kp.blockDimX = kp.blockDimY = kp.blockDimZ = 1;
	kp.kernelParams = params;
	kp.extra = extra;
	return kp;
}

#endif
