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
#endif
