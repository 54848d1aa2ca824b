/*
 * shim/hooks/memory.c -- allocation: cuMemAlloc/cuMemFree (CGS007 in capture),
 * stream-ordered allocation and free (CGS006, CGS009), pools.
 * Private to shim/hooks/ (hooks.h): every wrapper forwards the caller's
 * arguments unchanged and returns the driver's result, except where the
 * user asked for a policy.
 */
#define _GNU_SOURCE
#include "../hot.h"
#include "hooks.h"

/* cuMemAlloc/cuMemFree: capture-unsafe (CGS007); the answer is checked
 * against the prediction. */
void cgh_cuMemAlloc_v2_pre(struct cg_call *c, struct cgh_frame *f, CUdeviceptr *dptr, size_t bytesize)
{
	model_mem_moved();
	f->verdict = cg_rule_capture_unsafe("cuMemAlloc_v2", "allocates with cuMemAlloc");
}

void cgh_cuMemAlloc_v2_post(struct cg_call *c, struct cgh_frame *f, CUresult rc, CUdeviceptr *dptr, size_t bytesize)
{
	if (f->verdict && rc != CUDA_ERROR_STREAM_CAPTURE_UNSUPPORTED)
		cg_mismatch("cuMemAlloc_v2", R_CAPTURE_UNSAFE, CUDA_ERROR_STREAM_CAPTURE_UNSUPPORTED, rc, -1, -1);
	if (rc == CUDA_SUCCESS && atomic_load_explicit(&cg_live_captures, memory_order_relaxed))
		model_capture_plain_alloc(bytesize); /* caching allocator growing in relaxed mode */
	if (rc == CUDA_SUCCESS && dptr)
		ledger_add(*dptr, bytesize, LG_DEVICE, cg_site_here(SITE_SKIP_PART));
	if (rc == CUDA_SUCCESS)
		model_mem_settled();
}

void cgh_cuMemAlloc_v2_rec(struct cg_rec *r, struct cgh_frame *f, CUresult rc, CUdeviceptr *dptr, size_t bytesize)
{
	rec_hex(r, "dptr", rc == CUDA_SUCCESS && dptr ? *dptr : 0);
	rec_u64(r, "size", bytesize);
}

void cgh_cuMemFree_v2_pre(struct cg_call *c, struct cgh_frame *f, CUdeviceptr dptr)
{
	model_mem_moved();
	f->verdict = cg_rule_capture_unsafe("cuMemFree_v2", "frees with cuMemFree");
}

void cgh_cuMemFree_v2_post(struct cg_call *c, struct cgh_frame *f, CUresult rc, CUdeviceptr dptr)
{
	if (f->verdict && rc != CUDA_ERROR_STREAM_CAPTURE_UNSUPPORTED)
		cg_mismatch("cuMemFree_v2", R_CAPTURE_UNSAFE, CUDA_ERROR_STREAM_CAPTURE_UNSUPPORTED, rc, -1, -1);
	if (rc == CUDA_SUCCESS) {
		model_alloc_freed(dptr);
		if (cgh_ledger_free(dptr, 0, 0, "cuMemFree_v2"))
			c->flags |= CG_CALL_LIFE;
		model_mem_settled();
	}
}

/* ======================================================================= */
/* stream-ordered allocation                                               */
/* ======================================================================= */

/* CGS006: a captured allocation from an IPC-capable pool. Out of line
 * (issue 36): only such a pool comes here (the rule's first condition),
 * and the verdict's buffer stays out of alloc_async_pre's frame. */
static CG_COLD void alloc_ipc_check(struct cgh_frame *f, size_t size, CUstream s, const char *api, uint32_t pool_site)
{
	struct cg_alloc_ev ev = {api, size, f->pool, f->ipc, pool_site, s, f->id, f->site};
	struct cg_verdict v;
	if (rules_memory_ipc_pool(&ev, &v))
		cg_verdict_write(&v, api, 0, SITE_SKIP_PART + 1);
}

/* Stream-ordered allocation: in a capture, a graph node (CGS006 for an
 * IPC pool); outside, a range of the ledger. */
static CG_HOT CGH_FRAMED void alloc_async_pre(struct cgh_frame *f, size_t size, CUmemoryPool explicit_pool, CUstream s,
					      int ptsz, const char *api)
{
	uint32_t pool_site = 0;
	f->pool = explicit_pool;
	if (atomic_load_explicit(&cg_live_captures, memory_order_relaxed))
		f->capturing = model_stream_capture(s, ptsz, &f->id, &f->g, NULL);
	if (!f->capturing)
		model_mem_moved(); /* may grow the pool; a captured one is a node */
	if (f->capturing) {
		/* the context's device: 0 without cuCtxGetDevice where it can be no other (cg_current_device) */
		int dev = cg_current_device();
		f->site = cg_site_here(SITE_SKIP_PART + 1);
		model_pool_for_alloc(dev, &f->pool, &f->ipc, &f->is_default, &pool_site, &f->mdev);
		if (CG_UNLIKELY(f->ipc))
			alloc_ipc_check(f, size, s, api, pool_site);
	}
}

static CG_HOT void alloc_async_post(struct cg_call *c, struct cgh_frame *f, CUresult rc, CUdeviceptr *dptr, size_t size,
				    CUstream s, const char *api)
{
	if (f->capturing) {
		if (rc == CUDA_SUCCESS && dptr) {
			struct cg_mnode m;
			memset(&m, 0, sizeof m);
			m.dptr = *dptr;
			m.size = size;
			m.pool = f->pool;
			m.site = f->site;
			m.ipc = (uint8_t)f->ipc;
			m.pool_default = (uint8_t)f->is_default;
			m.dev = f->mdev; /* model_graph_add_mnode and model_alloc_graph need not look it up */
			model_graph_add_mnode(f->g, &m);
			/* made inside a repeat capture (model_capture_repeat, asked
			 * with the capture's count): left to debug */
			int level = -1;
			struct ev_alloc a;
			f->repeat = model_alloc_graph_at(&m, s, f->id, f->g, api, &level, &a);
			if (cg_log_on(level))
				emit_alloc(level, &a);
		} else {
			f->repeat = model_capture_repeat(f->id);
		}
		c->flags |= CG_CALL_LIFE;
		cgh_call_repeat(c, f->repeat);
	} else if (rc == CUDA_SUCCESS && dptr) {
		/* outside capture: a range of the ledger (graph allocations never
		 * are). No call site: a framework on cudaMallocAsync allocates per
		 * tensor, and a backtrace each time would cost more than the
		 * allocation; CGS018 still names the capture, exec and free sites. */
		ledger_add(*dptr, size, LG_ASYNC, 0);
	}
}

static void alloc_async_rec(struct cg_rec *r, struct cgh_frame *f, CUresult rc, CUdeviceptr *dptr, size_t size,
			    CUstream s)
{
	rec_hex(r, "dptr", rc == CUDA_SUCCESS && dptr ? *dptr : 0);
	rec_u64(r, "size", size);
	rec_hex(r, "pool", (uintptr_t)f->pool);
	rec_hex(r, "stream", (uintptr_t)s);
	if (f->capturing)
		rec_u64(r, "capture", f->id);
}

#define ALLOC_ASYNC(name, ptsz)                                                                                        \
	CG_HOT void cgh_##name##_pre(struct cg_call *c, struct cgh_frame *f, CUdeviceptr *dptr, size_t bytesize,       \
				     CUstream hStream)                                                                 \
	{                                                                                                              \
		alloc_async_pre(f, bytesize, NULL, hStream, ptsz, #name);                                              \
		CGH_FRAME_END();                                                                                       \
	}                                                                                                              \
	CG_HOT void cgh_##name##_post(struct cg_call *c, struct cgh_frame *f, CUresult rc, CUdeviceptr *dptr,          \
				      size_t bytesize, CUstream hStream)                                               \
	{                                                                                                              \
		alloc_async_post(c, f, rc, dptr, bytesize, hStream, #name);                                            \
	}                                                                                                              \
	void cgh_##name##_rec(struct cg_rec *r, struct cgh_frame *f, CUresult rc, CUdeviceptr *dptr, size_t bytesize,  \
			      CUstream hStream)                                                                        \
	{                                                                                                              \
		alloc_async_rec(r, f, rc, dptr, bytesize, hStream);                                                    \
	}
ALLOC_ASYNC(cuMemAllocAsync, 0)
ALLOC_ASYNC(cuMemAllocAsync_ptsz, 1)

#define ALLOC_POOL(name, ptsz)                                                                                         \
	CG_HOT void cgh_##name##_pre(struct cg_call *c, struct cgh_frame *f, CUdeviceptr *dptr, size_t bytesize,       \
				     CUmemoryPool pool, CUstream hStream)                                              \
	{                                                                                                              \
		alloc_async_pre(f, bytesize, pool, hStream, ptsz, #name);                                              \
		CGH_FRAME_END();                                                                                       \
	}                                                                                                              \
	CG_HOT void cgh_##name##_post(struct cg_call *c, struct cgh_frame *f, CUresult rc, CUdeviceptr *dptr,          \
				      size_t bytesize, CUmemoryPool pool, CUstream hStream)                            \
	{                                                                                                              \
		alloc_async_post(c, f, rc, dptr, bytesize, hStream, #name);                                            \
	}                                                                                                              \
	void cgh_##name##_rec(struct cg_rec *r, struct cgh_frame *f, CUresult rc, CUdeviceptr *dptr, size_t bytesize,  \
			      CUmemoryPool pool, CUstream hStream)                                                     \
	{                                                                                                              \
		alloc_async_rec(r, f, rc, dptr, bytesize, hStream);                                                    \
	}
ALLOC_POOL(cuMemAllocFromPoolAsync, 0)
ALLOC_POOL(cuMemAllocFromPoolAsync_ptsz, 1)

/* CGS009 for a captured free: out of line, so the verdict's buffer is not
 * in free_async_pre's frame. */
static CG_HOT __attribute__((noinline)) void free_foreign_check(struct cg_call *c, struct cgh_frame *f, CUdeviceptr p,
								CUstream s)
{
	struct cg_free_ev ev = {p, s, f->id};
	struct cg_verdict v;
	if (rules_memory_free_foreign(&ev, &cg_model_view_live, &v))
		cg_verdict_write(&v, cg_routes[c->hid].name, 0, SITE_SKIP_PART + 1);
}

/* A stream-ordered free: in a capture, a free node (CGS009 for memory the
 * capture did not allocate); outside, the ledger's range goes. */
static CG_HOT CGH_FRAMED void free_async_pre(struct cg_call *c, struct cgh_frame *f, int ptsz, CUdeviceptr p,
					     CUstream s)
{
	if (atomic_load_explicit(&cg_live_captures, memory_order_relaxed))
		f->capturing = model_stream_capture(s, ptsz, &f->id, &f->g, NULL);
	if (!f->capturing)
		model_mem_moved(); /* may give memory back to the pool; a captured one is a node */
	if (f->capturing) {
		free_foreign_check(c, f, p, s);
		c->flags |= CG_CALL_LIFE;
		cgh_call_repeat(c, model_capture_repeat(f->id));
	}
}

static void free_async_post(struct cg_call *c, struct cgh_frame *f, CUresult rc, CUdeviceptr p)
{
	if (rc == CUDA_SUCCESS) {
		if (f->capturing) {
			struct cg_mnode m;
			memset(&m, 0, sizeof m);
			m.dptr = p;
			m.is_free = 1;
			model_graph_add_mnode(f->g, &m);
		} else {
			model_alloc_freed(p);
			if (cgh_ledger_free(p, 0, 0, cg_routes[c->hid].name))
				c->flags |= CG_CALL_LIFE;
		}
	}
}

static void free_async_rec(struct cg_rec *r, struct cgh_frame *f, CUdeviceptr p, CUstream s)
{
	rec_hex(r, "dptr", p);
	rec_hex(r, "stream", (uintptr_t)s);
	if (f->capturing)
		rec_u64(r, "capture", f->id);
}

#define FREE_ASYNC(name, ptsz)                                                                                         \
	CG_HOT void cgh_##name##_pre(struct cg_call *c, struct cgh_frame *f, CUdeviceptr dptr, CUstream hStream)       \
	{                                                                                                              \
		free_async_pre(c, f, ptsz, dptr, hStream);                                                             \
		CGH_FRAME_END();                                                                                       \
	}                                                                                                              \
	CG_HOT void cgh_##name##_post(struct cg_call *c, struct cgh_frame *f, CUresult rc, CUdeviceptr dptr,           \
				      CUstream hStream)                                                                \
	{                                                                                                              \
		free_async_post(c, f, rc, dptr);                                                                       \
	}                                                                                                              \
	void cgh_##name##_rec(struct cg_rec *r, struct cgh_frame *f, CUresult rc, CUdeviceptr dptr, CUstream hStream)  \
	{                                                                                                              \
		free_async_rec(r, f, dptr, hStream);                                                                   \
	}
FREE_ASYNC(cuMemFreeAsync, 0)
FREE_ASYNC(cuMemFreeAsync_ptsz, 1)

/* ======================================================================= */
/* pools                                                                   */
/* ======================================================================= */

void cgh_cuMemPoolCreate_pre(struct cg_call *c, struct cgh_frame *f, CUmemoryPool *pool,
			     const CUmemPoolProps *poolProps)
{
	model_mem_moved();
}

void cgh_cuMemPoolCreate_post(struct cg_call *c, struct cgh_frame *f, CUresult rc, CUmemoryPool *pool,
			      const CUmemPoolProps *poolProps)
{
	f->site = cg_site_here(SITE_SKIP_PART);
	if (rc == CUDA_SUCCESS && pool)
		model_pool_new(*pool, poolProps, f->site);
}

void cgh_cuMemPoolCreate_rec(struct cg_rec *r, struct cgh_frame *f, CUresult rc, CUmemoryPool *pool,
			     const CUmemPoolProps *poolProps)
{
	rec_hex(r, "pool", rc == CUDA_SUCCESS && pool ? (uintptr_t)*pool : 0);
	if (poolProps) {
		rec_int(r, "dev", poolProps->location.id);
		rec_u64(r, "handle_types", poolProps->handleTypes);
	}
	rec_site(r, "site", f->site);
}

void cgh_cuMemPoolDestroy_pre(struct cg_call *c, struct cgh_frame *f, CUmemoryPool pool)
{
	model_mem_moved();
}

void cgh_cuMemPoolDestroy_post(struct cg_call *c, struct cgh_frame *f, CUresult rc, CUmemoryPool pool)
{
	if (rc == CUDA_SUCCESS)
		model_pool_destroy(pool);
}

void cgh_cuMemPoolDestroy_rec(struct cg_rec *r, struct cgh_frame *f, CUresult rc, CUmemoryPool pool)
{
	rec_hex(r, "pool", (uintptr_t)pool);
}

/* A pool the application asked for: the model learns it (its device, and
 * whether it is the device's default). */
static int location_dev(const CUmemLocation *location)
{
	return location && location->type == CU_MEM_LOCATION_TYPE_DEVICE ? location->id : -1;
}

void cgh_cuDeviceGetDefaultMemPool_post(struct cg_call *c, struct cgh_frame *f, CUresult rc, CUmemoryPool *pool_out,
					CUdevice dev)
{
	if (rc == CUDA_SUCCESS && pool_out)
		model_pool_seen(*pool_out, dev, 1);
}

void cgh_cuDeviceGetMemPool_post(struct cg_call *c, struct cgh_frame *f, CUresult rc, CUmemoryPool *pool, CUdevice dev)
{
	if (rc == CUDA_SUCCESS && pool)
		model_pool_seen(*pool, dev, 0);
}

void cgh_cuMemGetDefaultMemPool_post(struct cg_call *c, struct cgh_frame *f, CUresult rc, CUmemoryPool *pool_out,
				     CUmemLocation *location, CUmemAllocationType type)
{
	int dev = location_dev(location);
	if (rc == CUDA_SUCCESS && pool_out)
		model_pool_seen(*pool_out, dev, dev >= 0);
}

void cgh_cuMemGetMemPool_post(struct cg_call *c, struct cgh_frame *f, CUresult rc, CUmemoryPool *pool,
			      CUmemLocation *location, CUmemAllocationType type)
{
	if (rc == CUDA_SUCCESS && pool)
		model_pool_seen(*pool, location_dev(location), 0);
}

/* A device's current pool set (LIFE). */
static CGH_FRAMED void set_pool_post(struct cgh_frame *f, CUresult rc, int dev, CUmemoryPool pool)
{
	f->site = cg_site_here(SITE_SKIP_PART + 1);
	if (rc == CUDA_SUCCESS)
		model_device_set_pool(dev, pool, f->site);
}

static void set_pool_rec(struct cg_rec *r, struct cgh_frame *f, int dev, CUmemoryPool pool)
{
	rec_int(r, "dev", dev);
	rec_hex(r, "pool", (uintptr_t)pool);
	rec_site(r, "site", f->site);
}

void cgh_cuDeviceSetMemPool_post(struct cg_call *c, struct cgh_frame *f, CUresult rc, CUdevice dev, CUmemoryPool pool)
{
	set_pool_post(f, rc, dev, pool);
	CGH_FRAME_END();
}

void cgh_cuDeviceSetMemPool_rec(struct cg_rec *r, struct cgh_frame *f, CUresult rc, CUdevice dev, CUmemoryPool pool)
{
	set_pool_rec(r, f, dev, pool);
}

void cgh_cuMemSetMemPool_post(struct cg_call *c, struct cgh_frame *f, CUresult rc, CUmemLocation *location,
			      CUmemAllocationType type, CUmemoryPool pool)
{
	set_pool_post(f, rc, location_dev(location), pool);
	CGH_FRAME_END();
}

void cgh_cuMemSetMemPool_rec(struct cg_rec *r, struct cgh_frame *f, CUresult rc, CUmemLocation *location,
			     CUmemAllocationType type, CUmemoryPool pool)
{
	set_pool_rec(r, f, location_dev(location), pool);
}
