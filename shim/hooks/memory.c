/*
 * shim/hooks/memory.c -- allocation: cuMemAlloc/cuMemFree (CGS007 in capture),
 * stream-ordered allocation and free (CGS006, CGS009), pools.
 * Private to shim/hooks/ (hooks.h): every wrapper forwards the caller's
 * arguments unchanged and returns the driver's result, except where the
 * user asked for a policy.
 */
#define _GNU_SOURCE
#include "hooks.h"

CUresult cgh_cuMemAlloc_v2(CUdeviceptr *dptr, size_t bytesize)
{
	struct cg_call c;
	CUresult rc;
	int predicted;
	CG_REAL(cuMemAlloc_v2);
	if (!cg_call_begin(&c, HID_cuMemAlloc_v2, 0))
		return CG_FWD(real_cuMemAlloc_v2(dptr, bytesize));
	model_mem_moved();
	predicted = cg_rule_capture_unsafe("cuMemAlloc_v2", "allocates with cuMemAlloc");
	rc = CG_FWD(real_cuMemAlloc_v2(dptr, bytesize));
	int saved = errno;
	if (predicted && rc != CUDA_ERROR_STREAM_CAPTURE_UNSUPPORTED)
		cg_mismatch("cuMemAlloc_v2", R_CAPTURE_UNSAFE, CUDA_ERROR_STREAM_CAPTURE_UNSUPPORTED, rc, -1, -1);
	if (rc == CUDA_SUCCESS && atomic_load_explicit(&cg_live_captures, memory_order_relaxed))
		model_capture_plain_alloc(bytesize); /* caching allocator growing in relaxed mode */
	if (rc == CUDA_SUCCESS && dptr)
		ledger_add(*dptr, bytesize, LG_DEVICE, cg_site_here(SITE_SKIP));
	{
		struct cg_rec r;
		if (cg_call_rec(&r, &c, rc)) {
			rec_hex(&r, "dptr", rc == CUDA_SUCCESS && dptr ? *dptr : 0);
			rec_u64(&r, "size", bytesize);
			rec_end(&r);
		}
	}
	errno = saved;
	return rc;
}

CUresult cgh_cuMemFree_v2(CUdeviceptr dptr)
{
	struct cg_call c;
	CUresult rc;
	int predicted;
	CG_REAL(cuMemFree_v2);
	if (!cg_call_begin(&c, HID_cuMemFree_v2, 0))
		return CG_FWD(real_cuMemFree_v2(dptr));
	model_mem_moved();
	predicted = cg_rule_capture_unsafe("cuMemFree_v2", "frees with cuMemFree");
	rc = CG_FWD(real_cuMemFree_v2(dptr));
	int saved = errno;
	if (predicted && rc != CUDA_ERROR_STREAM_CAPTURE_UNSUPPORTED)
		cg_mismatch("cuMemFree_v2", R_CAPTURE_UNSAFE, CUDA_ERROR_STREAM_CAPTURE_UNSUPPORTED, rc, -1, -1);
	if (rc == CUDA_SUCCESS) {
		model_alloc_freed(dptr);
		if (cgh_ledger_free(dptr, 0, 0, "cuMemFree_v2"))
			c.flags |= CG_CALL_LIFE;
	}
	cg_call_end(&c, rc);
	errno = saved;
	return rc;
}

/* ======================================================================= */
/* stream-ordered allocation                                               */
/* ======================================================================= */

static CUresult alloc_async_common(struct cg_call *c, CUresult (*call)(void *), void *ctx, CUdeviceptr *dptr,
				   size_t size, CUmemoryPool explicit_pool, CUstream s, int ptsz, const char *api)
{
	CG_ERRNO_IN; /* entered straight from the wrapper */
	uint64_t id = 0;
	CUgraph g = NULL;
	int capturing = 0, ipc = 0, is_default = 0;
	uint32_t pool_site = 0, site = 0;
	CUmemoryPool pool = explicit_pool;
	CUresult rc;
	struct cg_rec r;
	if (atomic_load_explicit(&cg_live_captures, memory_order_relaxed))
		capturing = model_stream_capture(s, ptsz, &id, &g, NULL);
	if (!capturing)
		model_mem_moved(); /* may grow the pool; a captured one is a node */
	if (capturing) {
		site = cg_site_here(SITE_SKIP + 1);
		if (!pool)
			pool = model_device_pool(cg_current_device(), NULL);
		if (pool && !model_pool_info(pool, &ipc, &is_default, &pool_site))
			ipc = is_default = 0;
		struct cg_alloc_ev ev = {api, size, pool, ipc, pool_site, s, id, site};
		struct cg_verdict v;
		if (rules_memory_ipc_pool(&ev, &v))
			cg_verdict_write(&v, api, 0, SITE_SKIP + 1);
	}
	rc = CG_FWD(call(ctx));
	int saved = errno;
	if (capturing) {
		if (rc == CUDA_SUCCESS && dptr) {
			struct cg_mnode m;
			memset(&m, 0, sizeof m);
			m.dptr = *dptr;
			m.size = size;
			m.pool = pool;
			m.site = site;
			m.ipc = (uint8_t)ipc;
			m.pool_default = (uint8_t)is_default;
			model_graph_add_mnode(g, &m);
			model_alloc_graph(&m, s, id, g, api);
		}
		c->flags |= CG_CALL_LIFE;
	} else if (rc == CUDA_SUCCESS && dptr) {
		/* outside capture: a range of the ledger (graph allocations never
		 * are). No call site: a framework on cudaMallocAsync allocates per
		 * tensor, and a backtrace each time would cost more than the
		 * allocation; CGS018 still names the capture, exec and free sites. */
		ledger_add(*dptr, size, LG_ASYNC, 0);
	}
	if (cg_call_rec(&r, c, rc)) {
		rec_hex(&r, "dptr", rc == CUDA_SUCCESS && dptr ? *dptr : 0);
		rec_u64(&r, "size", size);
		rec_hex(&r, "pool", (uintptr_t)pool);
		rec_hex(&r, "stream", (uintptr_t)s);
		if (capturing)
			rec_u64(&r, "capture", id);
		rec_end(&r);
	}
	errno = saved;
	return rc;
}

struct alloc_args {
	void *fn;
	CUdeviceptr *dptr;
	size_t size;
	CUmemoryPool pool;
	CUstream s;
};

static CUresult call_alloc(void *v)
{
	struct alloc_args *a = v;
	return ((PFN_cuMemAllocAsync_v11020)a->fn)(a->dptr, a->size, a->s);
}

static CUresult call_alloc_pool(void *v)
{
	struct alloc_args *a = v;
	return ((PFN_cuMemAllocFromPoolAsync_v11020)a->fn)(a->dptr, a->size, a->pool, a->s);
}

#define ALLOC_ASYNC(name, ptsz)                                                                    \
	CUresult cgh_##name(CUdeviceptr *dptr, size_t bytesize, CUstream hStream)                  \
	{                                                                                          \
		struct cg_call c;                                                                  \
		struct alloc_args a = {(void *)real_##name, dptr, bytesize, NULL, hStream};        \
		CG_REAL(name);                                                                     \
		a.fn = (void *)real_##name;                                                        \
		if (!cg_call_begin(&c, HID_##name, 0))                                             \
			return CG_FWD(real_##name(dptr, bytesize, hStream));                       \
		return alloc_async_common(&c, call_alloc, &a, dptr, bytesize, NULL, hStream, ptsz, #name); \
	}
ALLOC_ASYNC(cuMemAllocAsync, 0)
ALLOC_ASYNC(cuMemAllocAsync_ptsz, 1)

#define ALLOC_POOL(name, ptsz)                                                                     \
	CUresult cgh_##name(CUdeviceptr *dptr, size_t bytesize, CUmemoryPool pool, CUstream hStream) \
	{                                                                                          \
		struct cg_call c;                                                                  \
		struct alloc_args a = {(void *)real_##name, dptr, bytesize, pool, hStream};        \
		CG_REAL(name);                                                                     \
		a.fn = (void *)real_##name;                                                        \
		if (!cg_call_begin(&c, HID_##name, 0))                                             \
			return CG_FWD(real_##name(dptr, bytesize, pool, hStream));                 \
		return alloc_async_common(&c, call_alloc_pool, &a, dptr, bytesize, pool, hStream, ptsz, #name); \
	}
ALLOC_POOL(cuMemAllocFromPoolAsync, 0)
ALLOC_POOL(cuMemAllocFromPoolAsync_ptsz, 1)

static CUresult free_async_common(int hid, PFN_cuMemFreeAsync_v11020 fn, int ptsz, CUdeviceptr p, CUstream s)
{
	CG_ERRNO_IN; /* entered straight from the wrapper */
	struct cg_call c;
	uint64_t id = 0;
	CUgraph g = NULL;
	int capturing = 0;
	CUresult rc;
	struct cg_rec r;
	if (!cg_call_begin(&c, hid, 0))
		return CG_FWD(fn(p, s));
	if (atomic_load_explicit(&cg_live_captures, memory_order_relaxed))
		capturing = model_stream_capture(s, ptsz, &id, &g, NULL);
	if (!capturing)
		model_mem_moved(); /* may give memory back to the pool; a captured one is a node */
	if (capturing) {
		struct cg_free_ev ev = {p, s, id};
		struct cg_verdict v;
		if (rules_memory_free_foreign(&ev, &cg_model_view_live, &v))
			cg_verdict_write(&v, cg_routes[hid].name, 0, SITE_SKIP + 1);
		c.flags |= CG_CALL_LIFE;
	}
	rc = CG_FWD(fn(p, s));
	int saved = errno;
	if (rc == CUDA_SUCCESS) {
		if (capturing) {
			struct cg_mnode m;
			memset(&m, 0, sizeof m);
			m.dptr = p;
			m.is_free = 1;
			model_graph_add_mnode(g, &m);
		} else {
			model_alloc_freed(p);
			if (cgh_ledger_free(p, 0, 0, cg_routes[hid].name))
				c.flags |= CG_CALL_LIFE;
		}
	}
	if (cg_call_rec(&r, &c, rc)) {
		rec_hex(&r, "dptr", p);
		rec_hex(&r, "stream", (uintptr_t)s);
		if (capturing)
			rec_u64(&r, "capture", id);
		rec_end(&r);
	}
	errno = saved;
	return rc;
}

CUresult cgh_cuMemFreeAsync(CUdeviceptr dptr, CUstream hStream)
{
	CG_REAL(cuMemFreeAsync);
	return free_async_common(HID_cuMemFreeAsync, real_cuMemFreeAsync, 0, dptr, hStream);
}

CUresult cgh_cuMemFreeAsync_ptsz(CUdeviceptr dptr, CUstream hStream)
{
	CG_REAL(cuMemFreeAsync_ptsz);
	return free_async_common(HID_cuMemFreeAsync_ptsz, real_cuMemFreeAsync_ptsz, 1, dptr, hStream);
}

/* ======================================================================= */
/* pools                                                                   */
/* ======================================================================= */

CUresult cgh_cuMemPoolCreate(CUmemoryPool *pool, const CUmemPoolProps *poolProps)
{
	struct cg_call c;
	struct cg_rec r;
	CUresult rc;
	uint32_t site;
	CG_REAL(cuMemPoolCreate);
	if (!cg_call_begin(&c, HID_cuMemPoolCreate, CG_CALL_LIFE))
		return CG_FWD(real_cuMemPoolCreate(pool, poolProps));
	model_mem_moved();
	rc = CG_FWD(real_cuMemPoolCreate(pool, poolProps));
	int saved = errno;
	site = cg_site_here(SITE_SKIP);
	if (rc == CUDA_SUCCESS && pool)
		model_pool_new(*pool, poolProps, site);
	if (cg_call_rec(&r, &c, rc)) {
		rec_hex(&r, "pool", rc == CUDA_SUCCESS && pool ? (uintptr_t)*pool : 0);
		if (poolProps) {
			rec_int(&r, "dev", poolProps->location.id);
			rec_u64(&r, "handle_types", poolProps->handleTypes);
		}
		rec_site(&r, "site", site);
		rec_end(&r);
	}
	errno = saved;
	return rc;
}

CUresult cgh_cuMemPoolDestroy(CUmemoryPool pool)
{
	struct cg_call c;
	struct cg_rec r;
	CUresult rc;
	CG_REAL(cuMemPoolDestroy);
	if (!cg_call_begin(&c, HID_cuMemPoolDestroy, CG_CALL_LIFE))
		return CG_FWD(real_cuMemPoolDestroy(pool));
	model_mem_moved();
	rc = CG_FWD(real_cuMemPoolDestroy(pool));
	int saved = errno;
	if (rc == CUDA_SUCCESS)
		model_pool_destroy(pool);
	if (cg_call_rec(&r, &c, rc)) {
		rec_hex(&r, "pool", (uintptr_t)pool);
		rec_end(&r);
	}
	errno = saved;
	return rc;
}

static CUresult pool_get_post(struct cg_call *c, CUresult rc, CUmemoryPool *p, int dev, int is_default)
{
	int saved = errno;
	if (rc == CUDA_SUCCESS && p)
		model_pool_seen(*p, dev, is_default);
	cg_call_end(c, rc);
	errno = saved;
	return rc;
}

CUresult cgh_cuDeviceGetDefaultMemPool(CUmemoryPool *pool_out, CUdevice dev)
{
	struct cg_call c;
	CG_REAL(cuDeviceGetDefaultMemPool);
	if (!cg_call_begin(&c, HID_cuDeviceGetDefaultMemPool, 0))
		return CG_FWD(real_cuDeviceGetDefaultMemPool(pool_out, dev));
	return pool_get_post(&c, CG_FWD(real_cuDeviceGetDefaultMemPool(pool_out, dev)), pool_out, dev, 1);
}

CUresult cgh_cuDeviceGetMemPool(CUmemoryPool *pool, CUdevice dev)
{
	struct cg_call c;
	CG_REAL(cuDeviceGetMemPool);
	if (!cg_call_begin(&c, HID_cuDeviceGetMemPool, 0))
		return CG_FWD(real_cuDeviceGetMemPool(pool, dev));
	return pool_get_post(&c, CG_FWD(real_cuDeviceGetMemPool(pool, dev)), pool, dev, 0);
}

CUresult cgh_cuMemGetDefaultMemPool(CUmemoryPool *pool_out, CUmemLocation *location, CUmemAllocationType type)
{
	struct cg_call c;
	int dev = location && location->type == CU_MEM_LOCATION_TYPE_DEVICE ? location->id : -1;
	CG_REAL(cuMemGetDefaultMemPool);
	if (!cg_call_begin(&c, HID_cuMemGetDefaultMemPool, 0))
		return CG_FWD(real_cuMemGetDefaultMemPool(pool_out, location, type));
	return pool_get_post(&c, CG_FWD(real_cuMemGetDefaultMemPool(pool_out, location, type)), pool_out, dev,
			     dev >= 0);
}

CUresult cgh_cuMemGetMemPool(CUmemoryPool *pool, CUmemLocation *location, CUmemAllocationType type)
{
	struct cg_call c;
	int dev = location && location->type == CU_MEM_LOCATION_TYPE_DEVICE ? location->id : -1;
	CG_REAL(cuMemGetMemPool);
	if (!cg_call_begin(&c, HID_cuMemGetMemPool, 0))
		return CG_FWD(real_cuMemGetMemPool(pool, location, type));
	return pool_get_post(&c, CG_FWD(real_cuMemGetMemPool(pool, location, type)), pool, dev, 0);
}

static CUresult set_pool_post(struct cg_call *c, CUresult rc, int dev, CUmemoryPool pool)
{
	struct cg_rec r;
	int saved = errno;
	uint32_t site = cg_site_here(SITE_SKIP + 1);
	if (rc == CUDA_SUCCESS)
		model_device_set_pool(dev, pool, site);
	if (cg_call_rec(&r, c, rc)) {
		rec_int(&r, "dev", dev);
		rec_hex(&r, "pool", (uintptr_t)pool);
		rec_site(&r, "site", site);
		rec_end(&r);
	}
	errno = saved;
	return rc;
}

CUresult cgh_cuDeviceSetMemPool(CUdevice dev, CUmemoryPool pool)
{
	struct cg_call c;
	CG_REAL(cuDeviceSetMemPool);
	if (!cg_call_begin(&c, HID_cuDeviceSetMemPool, CG_CALL_LIFE))
		return CG_FWD(real_cuDeviceSetMemPool(dev, pool));
	return set_pool_post(&c, CG_FWD(real_cuDeviceSetMemPool(dev, pool)), dev, pool);
}

CUresult cgh_cuMemSetMemPool(CUmemLocation *location, CUmemAllocationType type, CUmemoryPool pool)
{
	struct cg_call c;
	int dev = location && location->type == CU_MEM_LOCATION_TYPE_DEVICE ? location->id : -1;
	CG_REAL(cuMemSetMemPool);
	if (!cg_call_begin(&c, HID_cuMemSetMemPool, CG_CALL_LIFE))
		return CG_FWD(real_cuMemSetMemPool(location, type, pool));
	return set_pool_post(&c, CG_FWD(real_cuMemSetMemPool(location, type, pool)), dev, pool);
}
