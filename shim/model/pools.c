/*
 * shim/model/pools.c -- memory pools and each device's current pool.
 * See model.h for the lock contract, model-int.h for what the model's files share.
 */
#include "model-int.h"

struct cg_pool *model_pools;
struct model_pool_cur model_cur_pool[CG_MAX_DEV];
struct model_dev_allocs model_dev_alloc[CG_MAX_DEV];

/* The pool found last, under model_mem_lock (issue 36): an allocation in
 * a capture finds its pool twice (model_pool_for_alloc, model_alloc_graph),
 * each capture of a loop the same one. An entry lives as long as the
 * process (a destroyed pool's is marked, not freed): the hint never dangles. */
static struct cg_pool *pool_last;

/* Bumped under model_mem_lock by every change to what
 * model_pool_for_alloc reads: a pool made, its ipc flag, default flag,
 * site or device set, a device's current pool or its site set. Each
 * thread's memo of its last answer is good while the count has not moved
 * (issue 36: a capture loop's allocation asks the same every step, and
 * the lock, the device's current pool and the pool's entry were a lock
 * round trip and three lines). Starts at 1: a memo's 0 is none. */
static _Atomic unsigned long pool_gen CG_HOT_DATA = 1;
struct pool_memo {
	unsigned long gen;
	int dev, found;
	CUmemoryPool asked, pool; /* the caller's *pool (NULL: dev's current), the answer */
	int ipc, is_default, d;
	uint32_t site;
};
static CG_TLS struct pool_memo pool_memo;

static void pool_changed_locked(void)
{
	atomic_fetch_add_explicit(&pool_gen, 1, memory_order_release);
}

static CG_HOT struct cg_pool *pool_find_locked(CUmemoryPool p)
{
	struct cg_pool *x = pool_last;
	if (x && x->h == p)
		return x;
	HASH_FIND_PTR(model_pools, &p, x);
	if (x)
		pool_last = x;
	return x;
}

/* Device (plus one) of a graph allocation node whose device is not known
 * yet: its pool's, else the calling context's (a capture-safe query). */
uint8_t model_pool_mnode_dev(const struct cg_mnode *m)
{
	int d = -1;
	if (m->dev)
		return m->dev;
	if (m->pool) {
		struct cg_pool *x;
		pthread_mutex_lock(&model_mem_lock);
		x = pool_find_locked(m->pool);
		if (x)
			d = x->dev;
		pthread_mutex_unlock(&model_mem_lock);
	}
	if (d < 0 || d >= CG_MAX_DEV)
		d = cg_current_device();
	model_dev_seen(d);
	return (uint8_t)(d + 1);
}

CG_HOT struct cg_pool *model_pool_get_locked(CUmemoryPool p)
{
	struct cg_pool *x;
	x = pool_find_locked(p);
	if (!x && p) {
		x = calloc(1, sizeof *x);
		if (!x)
			return NULL;
		x->h = p;
		x->dev = -1;
		HASH_ADD_PTR(model_pools, h, x);
		if (model_table_added(&model_pool_table)) {
			free(x);
			return NULL;
		}
		model_tot.pools++;
		pool_changed_locked();
	}
	return x;
}

void model_pool_new(CUmemoryPool p, const CUmemPoolProps *props, uint32_t site)
{
	struct cg_pool *x;
	pthread_mutex_lock(&model_mem_lock);
	x = model_pool_get_locked(p);
	if (x && x->destroyed) {
		/* a destroyed pool's handle given to a new pool: nothing of the
		 * old one (default, device, its allocations) carries over */
		x->dev = -1;
		x->is_default = x->ipc = 0;
		x->allocs = 0;
		x->bytes = 0;
	}
	if (x) {
		x->site = site;
		x->destroyed = 0;
		if (props) {
			x->ipc = props->handleTypes != CU_MEM_HANDLE_TYPE_NONE;
			x->dev = props->location.id;
		}
		pool_changed_locked();
	}
	pthread_mutex_unlock(&model_mem_lock);
}

void model_pool_destroy(CUmemoryPool p)
{
	struct cg_pool *x;
	pthread_mutex_lock(&model_mem_lock);
	x = pool_find_locked(p);
	if (x)
		x->destroyed = 1;
	pool_changed_locked();
	/* the driver's rule: a device whose current pool is destroyed has its
	 * default pool as the current one again (NULL when the model has not
	 * seen it: the next begin asks, learn_current_pool) */
	for (int d = 0; d < CG_MAX_DEV; d++) {
		struct cg_pool *q, *tmp, *def = NULL;
		if (model_cur_pool[d].pool != p)
			continue;
		HASH_ITER(hh, model_pools, q, tmp)
		if (q->is_default && q->dev == d && !q->destroyed)
			def = q;
		__atomic_store_n(&model_cur_pool[d].pool, def ? def->h : NULL,
				 __ATOMIC_RELAXED); /* model_device_pool */
		model_cur_pool[d].site = def ? def->site : 0;
	}
	pthread_mutex_unlock(&model_mem_lock);
}

void model_pool_seen(CUmemoryPool p, int dev, int is_default)
{
	struct cg_pool *x;
	pthread_mutex_lock(&model_mem_lock);
	x = model_pool_get_locked(p);
	if (x && ((dev >= 0 && x->dev != dev) || (is_default && !x->is_default))) {
		if (dev >= 0)
			x->dev = dev;
		if (is_default)
			x->is_default = 1;
		pool_changed_locked();
	}
	if (dev >= 0 && dev < CG_MAX_DEV && !model_cur_pool[dev].pool && is_default) {
		__atomic_store_n(&model_cur_pool[dev].pool, p, __ATOMIC_RELAXED); /* model_device_pool */
		pool_changed_locked();
	}
	pthread_mutex_unlock(&model_mem_lock);
	model_dev_seen(dev);
}

void model_device_set_pool(int dev, CUmemoryPool p, uint32_t site)
{
	if (dev < 0 || dev >= CG_MAX_DEV)
		return;
	pthread_mutex_lock(&model_mem_lock);
	__atomic_store_n(&model_cur_pool[dev].pool, p, __ATOMIC_RELAXED); /* model_device_pool */
	model_cur_pool[dev].site = site;
	model_pool_get_locked(p);
	pool_changed_locked();
	pthread_mutex_unlock(&model_mem_lock);
	model_dev_seen(dev);
}

CG_HOT CUmemoryPool model_device_pool(int dev, uint32_t *site)
{
	CUmemoryPool p = NULL;
	if (dev < 0 || dev >= CG_MAX_DEV)
		return NULL;
	if (!site) { /* the pool alone: no lock (the stores are atomic), as each begin asks */
		/* this thread's allocation memo answers while nothing it read
		 * moved (pool_gen): its line is the capture's allocation's
		 * next, the devices' table a line of its own (issue 36) */
		const struct pool_memo *m = &pool_memo;
		if (m->pool && !m->asked && m->dev == dev &&
		    m->gen == atomic_load_explicit(&pool_gen, memory_order_acquire))
			return m->pool;
		return __atomic_load_n(&model_cur_pool[dev].pool, __ATOMIC_RELAXED);
	}
	pthread_mutex_lock(&model_mem_lock);
	p = model_cur_pool[dev].pool;
	*site = model_cur_pool[dev].site;
	pthread_mutex_unlock(&model_mem_lock);
	return p;
}

CG_HOT int model_pool_for_alloc(int dev, CUmemoryPool *pool, int *ipc, int *is_default, uint32_t *site, uint8_t *mdev)
{
	struct cg_pool *x = NULL;
	struct pool_memo *m = &pool_memo;
	int d = -1, found;
	if (m->gen == atomic_load_explicit(&pool_gen, memory_order_acquire) && m->dev == dev && m->asked == *pool) {
		*pool = m->pool; /* this thread's last answer, nothing it read changed since */
		*ipc = m->ipc;
		*is_default = m->is_default;
		*site = m->site;
		d = m->d;
		found = m->found;
	} else {
		*ipc = *is_default = 0;
		*site = 0;
		m->dev = dev;
		m->asked = *pool;
		pthread_mutex_lock(&model_mem_lock);
		if (!*pool && dev >= 0 && dev < CG_MAX_DEV)
			*pool = model_cur_pool[dev].pool;
		if (*pool)
			x = pool_find_locked(*pool);
		if (x) {
			*ipc = x->ipc;
			*is_default = x->is_default;
			*site = x->site;
			d = x->dev;
		}
		m->gen = atomic_load_explicit(&pool_gen, memory_order_relaxed);
		pthread_mutex_unlock(&model_mem_lock);
		found = x != NULL;
		m->pool = *pool, m->ipc = *ipc, m->is_default = *is_default, m->site = *site, m->d = d,
		m->found = found;
	}
	/* as model_pool_mnode_dev answers */
	if (d < 0 || d >= CG_MAX_DEV)
		d = dev;
	*mdev = d >= 0 && d < CG_MAX_DEV ? (uint8_t)(d + 1) : 0;
	if (*mdev)
		model_dev_seen(d);
	return found;
}

int model_pool_info(CUmemoryPool p, int *ipc, int *is_default, uint32_t *site)
{
	struct cg_pool *x;
	int ok = 0;
	pthread_mutex_lock(&model_mem_lock);
	x = pool_find_locked(p);
	if (x) {
		*ipc = x->ipc;
		*is_default = x->is_default;
		*site = x->site;
		ok = 1;
	}
	pthread_mutex_unlock(&model_mem_lock);
	return ok;
}

/* At exit: a "pool" record per pool. The table is copied under the lock,
 * the driver asked outside it. */
int model_pool_exit(struct ev_pool **out)
{
	struct cg_pool *p, *ptmp, *copy = NULL;
	struct ev_pool *o;
	int np = 0, k = 0;
	pthread_mutex_lock(&model_mem_lock);
	np = (int)HASH_COUNT(model_pools);
	copy = np ? malloc((size_t)np * sizeof *copy) : NULL;
	if (copy)
		HASH_ITER(hh, model_pools, p, ptmp)
	copy[k++] = *p;
	pthread_mutex_unlock(&model_mem_lock);
	*out = o = k ? calloc((size_t)k, sizeof *o) : NULL;
	if (!o) {
		free(copy);
		return 0;
	}
	for (int i = 0; i < k; i++) {
		struct cg_pool *q = &copy[i];
		cuuint64_t v[4] = {0, 0, 0, 0};
		int have = 0;
		if (!q->destroyed && drv_cuMemPoolGetAttribute && !atomic_load(&cg_live_captures)) {
			have = 1;
			for (int a = 0; a < 4; a++)
				if (drv_cuMemPoolGetAttribute(
					q->h, (CUmemPool_attribute)(CU_MEMPOOL_ATTR_RESERVED_MEM_CURRENT + a), &v[a]) !=
				    CUDA_SUCCESS)
					have = 0;
		}
		o[i] = (struct ev_pool){.pool = (uintptr_t)q->h,
					.dev = q->dev,
					.default_ = q->is_default,
					.ipc = q->ipc,
					.destroyed = q->destroyed,
					.reserved = v[0],
					.has_reserved = have,
					.reserved_high = v[1],
					.has_reserved_high = have,
					.used = v[2],
					.has_used = have,
					.used_high = v[3],
					.has_used_high = have,
					.allocs = q->allocs,
					.alloc_bytes = q->bytes,
					.site = q->site};
	}
	free(copy);
	return k;
}
