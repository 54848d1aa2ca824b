/*
 * shim/hooks/reset.c -- a device's primary context reset
 * (cuDevicePrimaryCtxReset and its _v2 form: cudaDeviceReset reaches one
 * of them through cuGetProcAddress, the unversioned one on the H200's CUDA
 * 13.0 static runtime). LIFE rows: generated wrappers (gen-hooks.py),
 * these are their parts. The driver destroys every graph, executable, pool,
 * stream and allocation made in the device's primary context; after it
 * succeeded the policy forgets the executables' replacements and the model
 * forgets the objects (model.h model_reset_device), without a record,
 * a leak or a verdict for any of them: the program released them all in
 * one call. The call record says what was forgotten.
 */
#include "hooks.h"

/* What this thread's reset forgot, from its post part to its record. */
static CG_TLS struct model_reset reset_last;

/* Before the driver: the policy's retired replacements are destroyed
 * while they are alive (cg_policy_collect); after the reset they are dead
 * handles, and cg_policy_reset drops any left without a driver call. */
static void reset_pre(void)
{
	cg_policy_collect();
}

static void reset_post(CUresult rc, CUdevice dev)
{
	CUgraphExec *execs;
	int n = 0;
	memset(&reset_last, 0, sizeof reset_last);
	if (rc != CUDA_SUCCESS)
		return;
	/* the policy first, while the model still maps each handle (model.h) */
	execs = model_reset_execs((int)dev, &n);
	cg_policy_reset(execs, n);
	free(execs);
	model_reset_device((int)dev, &reset_last);
}

static void reset_rec(struct cg_rec *r, CUresult rc, CUdevice dev)
{
	rec_int(r, "dev", (int)dev);
	if (rc != CUDA_SUCCESS)
		return;
	rec_int(r, "forgot_execs", reset_last.execs);
	rec_int(r, "forgot_graphs", reset_last.graphs);
	rec_int(r, "forgot_pools", reset_last.pools);
	rec_int(r, "forgot_allocs", reset_last.allocs);
	rec_int(r, "forgot_captures", reset_last.captures);
}

/* The parts of both rows (one ABI: the device). */
#define RESET_PARTS(name)                                                                                              \
	void cgh_##name##_pre(struct cg_call *c, struct cgh_frame *f, CUdevice dev)                                    \
	{                                                                                                              \
		reset_pre();                                                                                           \
	}                                                                                                              \
	void cgh_##name##_post(struct cg_call *c, struct cgh_frame *f, CUresult rc, CUdevice dev)                      \
	{                                                                                                              \
		reset_post(rc, dev);                                                                                   \
	}                                                                                                              \
	void cgh_##name##_rec(struct cg_rec *r, struct cgh_frame *f, CUresult rc, CUdevice dev)                        \
	{                                                                                                              \
		reset_rec(r, rc, dev);                                                                                 \
	}

RESET_PARTS(cuDevicePrimaryCtxReset)
RESET_PARTS(cuDevicePrimaryCtxReset_v2)
