/*
 * shim/cuda-abi.h -- the CUDA headers as the shim needs them.
 *
 * __CUDA_API_VERSION_INTERNAL exposes the legacy PFN typedefs (5-argument
 * cuGraphInstantiate, 1-argument cuStreamBeginCapture) that hooks.def names.
 * The shim never relies on cuda.h's function prototypes: every wrapper has
 * its own C identifier (cgh_<name>) and the exact exported name as its asm
 * label, checked against the PFN typedef at compile time.
 */
#ifndef CGSHIM_CUDA_ABI_H
#define CGSHIM_CUDA_ABI_H
#define __CUDA_API_VERSION_INTERNAL 1
#include <cuda.h>
#include <cudaTypedefs.h>

/* The driver's own ids of graphs, executables and nodes (CUDA 13.1, the
 * ids cuGraphDebugDotPrint, Nsight Systems and CUPTI name): declared here
 * so that the shim builds against older headers and finds them at run time
 * (driver-calls.def; NULL on a driver without them, and the record fields
 * left out). */
typedef CUresult(CUDAAPI *cg_pfn_cuGraphGetId)(CUgraph hGraph, unsigned int *graphId);
typedef CUresult(CUDAAPI *cg_pfn_cuGraphExecGetId)(CUgraphExec hGraphExec, unsigned int *graphId);
typedef CUresult(CUDAAPI *cg_pfn_cuGraphNodeGetLocalId)(CUgraphNode hNode, unsigned int *nodeId);
typedef CUresult(CUDAAPI *cg_pfn_cuGraphNodeGetToolsId)(CUgraphNode hNode, unsigned long long *toolsNodeId);
#endif
