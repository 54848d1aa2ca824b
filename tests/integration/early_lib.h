/* tests/integration/early_lib.h -- entry points resolved in libearly.so's constructor. */
#ifndef EARLY_LIB_H
#define EARLY_LIB_H
#include <cuda.h>
#include <cudaTypedefs.h>

struct early_api {
	PFN_cuInit_v2000 init;
	PFN_cuDevicePrimaryCtxRetain_v7000 retain;
	PFN_cuCtxSetCurrent_v4000 setCurrent;
	PFN_cuStreamCreate_v2000 streamCreate;
	PFN_cuStreamSynchronize_v2000 streamSync;
	PFN_cuGraphCreate_v10000 graphCreate;
	PFN_cuGraphDestroy_v10000 graphDestroy;
	PFN_cuGraphAddEmptyNode_v10000 addEmpty;
	PFN_cuGraphInstantiateWithFlags_v11040 instantiate;
	PFN_cuGraphExecUpdate_v12000 update;
	PFN_cuGraphLaunch_v10000 launch;
	PFN_cuGraphExecDestroy_v10000 execDestroy;
	int thread_ok;
};
extern struct early_api early_api;
#endif
