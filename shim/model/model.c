/*
 * shim/model/model.c -- life cycle of the model: its locks, fork handling, the shared totals.
 * See model.h for the lock contract, model-int.h for what the model's files share.
 */
#include "model-int.h"

_Atomic int cg_live_captures;
pthread_mutex_t model_cap_lock = PTHREAD_MUTEX_INITIALIZER;
pthread_mutex_t model_gx_lock = PTHREAD_MUTEX_INITIALIZER;
pthread_mutex_t model_mem_lock = PTHREAD_MUTEX_INITIALIZER;
struct model_totals model_tot;


struct cg_table model_capture_table = CG_TABLE_INIT("capture table");
struct cg_table model_graph_table = CG_TABLE_INIT("graph table");
struct cg_table model_exec_table = CG_TABLE_INIT("exec table");
struct cg_table model_pool_table = CG_TABLE_INIT("pool table");
struct cg_table model_alloc_table = CG_TABLE_INIT("allocation table");

int model_table_added(struct cg_table *t)
{
	if (CG_LIKELY(!cg_table_add_failed(t)))
		return 0;
	cg_degrade(t->name);
	return -1;
}
/* ====================================================================== */
/* life cycle                                                             */
/* ====================================================================== */

int cg_model_init(void)
{
	/* Warm up backtrace(): its first call loads libgcc_s; do it here,
	 * outside any hook that may run inside a capture or a malloc. */
	(void)cg_site_here(0);
	return 0;
}

void cg_model_lock_all(void)
{
	cg_site_lock();
	pthread_mutex_lock(&model_cap_lock);
	pthread_mutex_lock(&model_gx_lock);
	pthread_mutex_lock(&model_mem_lock);
	pthread_mutex_lock(&model_last_lock);
}

void cg_model_unlock_all(void)
{
	pthread_mutex_unlock(&model_last_lock);
	pthread_mutex_unlock(&model_mem_lock);
	pthread_mutex_unlock(&model_gx_lock);
	pthread_mutex_unlock(&model_cap_lock);
	cg_site_unlock();
}

/* In the child the locks taken by cg_model_lock_all are initialised again
 * rather than unlocked: they belong to the parent's thread (see
 * cg_policy_atfork_child), and the child's only thread is the one here. */
void cg_model_lock_reset(void)
{
	pthread_mutex_init(&model_last_lock, NULL);
	pthread_mutex_init(&model_mem_lock, NULL);
	pthread_mutex_init(&model_gx_lock, NULL);
	pthread_mutex_init(&model_cap_lock, NULL);
	cg_site_lock_reset();
}

void cg_model_after_fork_child(void)
{
	/* The child has one thread; captures of the parent's other threads
	 * do not exist here. The CUDA context is not usable in a forked
	 * child anyway; keep the tables for the exit summary. */
	struct cg_capture *c, *tmp;
	HASH_ITER(hh, model_captures, c, tmp)
	{
		HASH_DEL(model_captures, c);
		free(c->l);
		free(c);
	}
	atomic_store(&cg_live_captures, 0);
}
void cg_model_exit_summary(void)
{
	struct cg_exec *x, *tmp;
	struct cg_pool *p, *ptmp;
	long long launches = model_tot.launches_destroyed, n_exec_live = 0;
	struct cg_rec r;

	/* Executables still alive: their launch counts and outstanding
	 * graph allocations. */
	pthread_mutex_lock(&model_gx_lock);
	HASH_ITER(hh, model_execs, x, tmp)
	{
		long long n = atomic_load(&x->launches);
		launches += n;
		n_exec_live++;
		rec_begin(&r, CG_L_INFO, CGSHIM_EV_LAUNCHES);
		rec_hex(&r, "exec", (uintptr_t)x->h);
		rec_hex(&r, "graph", (uintptr_t)x->graph);
		rec_int(&r, "count", n);
		rec_str(&r, "reason", "exit");
		rec_end(&r);
	}
	pthread_mutex_unlock(&model_gx_lock);
	pthread_mutex_lock(&model_gx_lock);
	HASH_ITER(hh, model_execs, x, tmp)
	{
		if (atomic_load(&x->outstanding) > 0 && atomic_load(&x->launches) > 0 && x->n_mem) {
			struct cg_mnode *mem = malloc((size_t)x->n_mem * sizeof *mem);
			int n = x->n_mem;
			CUgraphExec h = x->h;
			if (!mem)
				continue;
			memcpy(mem, x->mem, (size_t)n * sizeof *mem);
			pthread_mutex_unlock(&model_gx_lock);
			model_alloc_leaks(h, mem, n, "exit");
			free(mem);
			pthread_mutex_lock(&model_gx_lock);
		}
	}
	pthread_mutex_unlock(&model_gx_lock);
	model_graphmem_sample("exit", NULL);

	/* Pools: copy the table under the lock, ask the driver outside it. */
	{
		struct cg_pool *copy = NULL;
		int np = 0, k = 0;
		pthread_mutex_lock(&model_mem_lock);
		np = (int)HASH_COUNT(model_pools);
		copy = np ? malloc((size_t)np * sizeof *copy) : NULL;
		if (copy)
			HASH_ITER(hh, model_pools, p, ptmp)
			copy[k++] = *p;
		pthread_mutex_unlock(&model_mem_lock);
		for (int i = 0; i < k; i++) {
			struct cg_pool *q = &copy[i];
			cuuint64_t v[4] = {0, 0, 0, 0};
			int have = 0;
			if (!q->destroyed && drv_cuMemPoolGetAttribute && !atomic_load(&cg_live_captures)) {
				have = 1;
				for (int a = 0; a < 4; a++)
					if (drv_cuMemPoolGetAttribute(
						    q->h, (CUmemPool_attribute)(CU_MEMPOOL_ATTR_RESERVED_MEM_CURRENT + a),
						    &v[a]) != CUDA_SUCCESS)
						have = 0;
			}
			rec_begin(&r, CG_L_INFO, CGSHIM_EV_POOL);
			rec_hex(&r, "pool", (uintptr_t)q->h);
			rec_int(&r, "dev", q->dev);
			rec_bool(&r, "default", q->is_default);
			rec_bool(&r, "ipc", q->ipc);
			rec_bool(&r, "destroyed", q->destroyed);
			if (have) {
				rec_u64(&r, "reserved", v[0]);
				rec_u64(&r, "reserved_high", v[1]);
				rec_u64(&r, "used", v[2]);
				rec_u64(&r, "used_high", v[3]);
			}
			rec_int(&r, "allocs", q->allocs);
			rec_u64(&r, "alloc_bytes", q->bytes);
			rec_site(&r, "site", q->site);
			rec_end(&r);
		}
		free(copy);
	}

	/* Captures still open: begun, never ended (an exception between
	 * begin and end, or a thread that died): named, and listed below. */
	struct cap_snap open_caps[CAP_NOTE_MAX];
	int n_open = 0, n_open_all = 0;
	{
		struct cg_capture *c, *ctmp;
		pthread_mutex_lock(&model_cap_lock);
		HASH_ITER(hh, model_captures, c, ctmp)
		{
			n_open_all++;
			if (n_open < CAP_NOTE_MAX) {
				model_capture_snap_locked(c, &open_caps[n_open++]);
				c->brec = 0;
			}
		}
		pthread_mutex_unlock(&model_cap_lock);
		for (int i = 0; i < n_open; i++)
			model_caprec_abandoned(&open_caps[i], "exit", NULL, 0, 0);
	}

	rec_begin(&r, CG_L_INFO, CGSHIM_EV_SUMMARY);
	rec_int(&r, "graphs", model_tot.graphs);
	rec_int(&r, "execs", model_tot.execs);
	rec_int(&r, "execs_live", n_exec_live);
	rec_int(&r, "launches", launches);
	rec_int(&r, "updates", model_tot.updates);
	rec_int(&r, "update_failures", model_tot.update_failures);
	rec_int(&r, "failures", cg_failures_total());
	rec_int(&r, "captures", model_tot.captures);
	rec_int(&r, "captures_invalidated", model_tot.captures_bad);
	rec_int(&r, "captures_open", n_open_all);
	if (n_open) {
		rec_open(&r, "open_captures", '[');
		for (int i = 0; i < n_open; i++) {
			char num[24];
			snprintf(num, sizeof num, "%llu", (unsigned long long)open_caps[i].id);
			rec_elem_raw(&r, num);
		}
		rec_close(&r, ']');
	}
	rec_int(&r, "pools", model_tot.pools);
	rec_int(&r, "alloc_nodes", model_tot.alloc_nodes);
	rec_u64(&r, "alloc_bytes", (unsigned long long)model_tot.alloc_bytes);
	rec_int(&r, "rewrites", model_tot.rewrites);
	rec_int(&r, "violations", cg_violations_total());
	rec_int(&r, "leaks", model_tot.leaks);
	rec_int(&r, "meminfo_skipped", model_meminfo_skipped());
	rec_int(&r, "meminfo_reused", model_meminfo_reused());
	cg_rules_summary(&r);
	cg_door_summary(&r);
	rec_end(&r);
}
