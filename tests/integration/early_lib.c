/*
 * tests/integration/early_lib.c -- libearly.so: a library whose constructor
 * reaches the driver before the shim's constructor has run, as
 * libcublasLt.so.13's does: dlopen("libcuda.so.1"), dlsym of
 * cuGetProcAddress_v2 (the shim's dlsym), then graph entry points through
 * it. It also makes one call from a thread it starts and joins. The program
 * (early_app.c) uses the pointers from main. The loader runs this
 * constructor before the preloaded shim's because the program depends on
 * this library and not on the shim (run.py checks the order with LD_DEBUG).
 */
#define __CUDA_API_VERSION_INTERNAL 1
#include <cuda.h>
#include <cudaTypedefs.h>
#include <dlfcn.h>
#include <pthread.h>
#include <stdio.h>

#include "early_lib.h"

struct early_api early_api;

#define GPA(field, name, ver)                                                                                          \
	do {                                                                                                           \
		void *p_ = NULL;                                                                                       \
		CUdriverProcAddressQueryResult st_;                                                                    \
		if (gpa(name, &p_, ver, 0, &st_) == CUDA_SUCCESS && p_)                                                \
			early_api.field = p_;                                                                          \
	} while (0)

static void *ctor_thread(void *arg)
{
	CUgraph g;
	(void)arg;
	if (early_api.graphCreate && early_api.graphCreate(&g, 0) == CUDA_SUCCESS) {
		early_api.graphDestroy(g);
		early_api.thread_ok = 1;
	}
	return NULL;
}

__attribute__((constructor)) static void early_ctor(void)
{
	pthread_t t;
	void *h = dlopen("libcuda.so.1", RTLD_NOW | RTLD_GLOBAL);
	PFN_cuGetProcAddress_v12000 gpa;
	fprintf(stderr, "early_lib: constructor\n");
	if (!h)
		return;
	gpa = (PFN_cuGetProcAddress_v12000)dlsym(h, "cuGetProcAddress_v2");
	if (!gpa)
		return;
	GPA(init, "cuInit", 2000);
	GPA(graphCreate, "cuGraphCreate", 13000);
	GPA(graphDestroy, "cuGraphDestroy", 13000);
	GPA(addEmpty, "cuGraphAddEmptyNode", 13000);
	GPA(instantiate, "cuGraphInstantiateWithFlags", 13000);
	GPA(update, "cuGraphExecUpdate", 13000);
	GPA(launch, "cuGraphLaunch", 13000);
	GPA(execDestroy, "cuGraphExecDestroy", 13000);
	GPA(streamCreate, "cuStreamCreate", 13000);
	GPA(streamSync, "cuStreamSynchronize", 13000);
	GPA(retain, "cuDevicePrimaryCtxRetain", 13000);
	GPA(setCurrent, "cuCtxSetCurrent", 13000);
	if (early_api.init)
		early_api.init(0);
	if (pthread_create(&t, NULL, ctor_thread, NULL) == 0)
		pthread_join(t, NULL);
}
