/*
 * kernels/rules/cgs028_remap-under-nccl-graph.cu -- reproducer for CGS028
 * (with its CGS018).
 *
 * Each rank's graph (two ranks, one per device, with two devices visible;
 * else one: nccl_scenario.h) captures a kernel and an all-reduce over
 * memory mapped through the VMM calls (as PyTorch's expandable segments
 * and torch_memory_saver map it). Rank 0's mapping is then released under
 * its live executable (CGS018, a hint: nothing replays it yet) and backed
 * again at the same address by a new allocation (CGS028: the executable
 * holds NCCL work over the old backing). One rank's all-reduce captures no
 * NCCL kernel (measured on H200s, 2026-11-29), so on a GPU the rule needs
 * the two-rank path: CUDA_VISIBLE_DEVICES=0,1; the stand-in's all-reduce
 * is a kernel either way (one rank by default, two under
 * STANDIN_DEVICES=2). The graphs are destroyed before any replay, and
 * before the communicators.
 */
#include "nccl_scenario.h"

#define N 1024L

int main(void)
{
	struct sc_nccl_ranks r;
	CUdeviceptr va[SC_NCCL_MAX_RANKS] = {0};
	CUmemGenericAllocationHandle h[SC_NCCL_MAX_RANKS] = {0};
	CUmemAllocationProp prop[SC_NCCL_MAX_RANKS];
	CUmemAccessDesc acc[SC_NCCL_MAX_RANKS];
	size_t sz = 2u << 20;

	if (!sc_nccl_start(&r))
		return 1;
	for (int i = 0; i < r.n; i++) {
		sc_nccl_on(&r, i);
		memset(&prop[i], 0, sizeof prop[i]);
		prop[i].type = CU_MEM_ALLOCATION_TYPE_PINNED;
		prop[i].location.type = CU_MEM_LOCATION_TYPE_DEVICE;
		prop[i].location.id = r.dev[i];
		memset(&acc[i], 0, sizeof acc[i]);
		acc[i].location = prop[i].location;
		acc[i].flags = CU_MEM_ACCESS_FLAGS_PROT_READWRITE;
		CHECK(cuMemAddressReserve(&va[i], sz, 0, 0, 0), CUDA_SUCCESS);
		CHECK(cuMemCreate(&h[i], sz, &prop[i], 0), CUDA_SUCCESS);
		CHECK(cuMemMap(va[i], sz, 0, h[i], 0), CUDA_SUCCESS);
		CHECK(cuMemSetAccess(va[i], sz, &acc[i], 1), CUDA_SUCCESS);
		r.x[i] = (float *)(uintptr_t)va[i];
	}
	sc_nccl_on(&r, 0);
	sc_nccl_warm(&r, N);

	sc_nccl_capture(&r, N);
	sc_nccl_replay(&r, 1);

	CHECK(cuMemUnmap(va[0], sz), CUDA_SUCCESS); /* CGS018: rank 0's exec points into it */
	CHECK(cuMemRelease(h[0]), CUDA_SUCCESS);
	CHECK(cuMemCreate(&h[0], sz, &prop[0], 0), CUDA_SUCCESS);
	CHECK(cuMemMap(va[0], sz, 0, h[0], 0), CUDA_SUCCESS); /* CGS028: backed again under it */
	CHECK(cuMemSetAccess(va[0], sz, &acc[0], 1), CUDA_SUCCESS);

	sc_nccl_destroy_graphs(&r);
	sc_nccl_destroy_comms(&r);
	for (int i = 0; i < r.n; i++) {
		sc_nccl_on(&r, i);
		CHECK(cuMemUnmap(va[i], sz), CUDA_SUCCESS);
		CHECK(cuMemRelease(h[i]), CUDA_SUCCESS);
		CHECK(cuMemAddressFree(va[i], sz), CUDA_SUCCESS);
	}
	sc_nccl_finish(&r, 0);
	return SCENARIO_EXIT();
}
