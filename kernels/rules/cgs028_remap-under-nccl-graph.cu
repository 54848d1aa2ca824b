/*
 * kernels/rules/cgs028_remap-under-nccl-graph.cu -- reproducer for CGS028
 * (with its CGS018).
 *
 * A graph captures a kernel and a one-rank all-reduce over memory mapped
 * through the VMM calls (as PyTorch's expandable segments and
 * torch_memory_saver map it). The mapping is then released under the live
 * executable (CGS018, a hint: nothing replays it yet) and backed again at
 * the same address by a new allocation (CGS028: the executable holds NCCL
 * work over the old backing). The graph is destroyed before any replay,
 * and before the communicator.
 */
#include "nccl_scenario.h"

#define N 1024L

int main(void)
{
	cudaStream_t s;
	cudaGraph_t g = NULL;
	cudaGraphExec_t e = NULL;
	sc_nccl_comm_t comm = NULL;
	CUdeviceptr va = 0;
	CUmemGenericAllocationHandle h = 0;
	CUmemAllocationProp prop;
	CUmemAccessDesc acc;
	size_t sz = 2u << 20;
	float *x;
	int dev = 0;

	if (!sc_nccl_start(&s))
		return 1;
	memset(&prop, 0, sizeof prop);
	prop.type = CU_MEM_ALLOCATION_TYPE_PINNED;
	prop.location.type = CU_MEM_LOCATION_TYPE_DEVICE;
	prop.location.id = dev;
	memset(&acc, 0, sizeof acc);
	acc.location = prop.location;
	acc.flags = CU_MEM_ACCESS_FLAGS_PROT_READWRITE;
	CHECK(cuMemAddressReserve(&va, sz, 0, 0, 0), CUDA_SUCCESS);
	CHECK(cuMemCreate(&h, sz, &prop, 0), CUDA_SUCCESS);
	CHECK(cuMemMap(va, sz, 0, h, 0), CUDA_SUCCESS);
	CHECK(cuMemSetAccess(va, sz, &acc, 1), CUDA_SUCCESS);
	x = (float *)(uintptr_t)va;
	sc_nccl_warm(s, x, N, &comm, &dev);

	sc_nccl_capture(s, x, N, comm, &g, &e);
	CHECK(cudaGraphLaunch(e, s), cudaSuccess);
	CHECK(cudaStreamSynchronize(s), cudaSuccess);

	CHECK(cuMemUnmap(va, sz), CUDA_SUCCESS); /* CGS018: the exec points into it */
	CHECK(cuMemRelease(h), CUDA_SUCCESS);
	CHECK(cuMemCreate(&h, sz, &prop, 0), CUDA_SUCCESS);
	CHECK(cuMemMap(va, sz, 0, h, 0), CUDA_SUCCESS); /* CGS028: backed again under it */
	CHECK(cuMemSetAccess(va, sz, &acc, 1), CUDA_SUCCESS);

	CHECK(cudaGraphExecDestroy(e), cudaSuccess);
	CHECK(cudaGraphDestroy(g), cudaSuccess);
	NCHECK(sc_nccl.destroy(comm));
	CHECK(cuMemUnmap(va, sz), CUDA_SUCCESS);
	CHECK(cuMemRelease(h), CUDA_SUCCESS);
	CHECK(cuMemAddressFree(va, sz), CUDA_SUCCESS);
	CHECK(cudaStreamDestroy(s), cudaSuccess);
	return SCENARIO_EXIT();
}
