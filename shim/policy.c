/* shim/policy.c -- re-instantiation behind the application's exec handle. */
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "call.h"
#include "cgshim/record.h"
#include "config.h"
#include "policy.h"
#include "table.h"

_Atomic int cg_policy_active;
_Atomic int cg_policy_pending; /* proxies with allocations to free at their next launch */

struct proxy {
	CUgraphExec app, real;
	CUgraph graph;
	/* The graph `real` was instantiated from. Its nodes are what per-node
	 * calls are mapped to, so when the application destroys it the shim
	 * keeps it alive (held_dead) until `real` is replaced or destroyed. */
	CUgraph held;
	int held_dead;
	uint32_t n_nodes;
	CUgraphNode *orig_nodes; /* nodes of the graph the app instantiated */
	CUgraphNode *new_nodes;  /* nodes of the graph behind `real`, same order */
	long long rewrites, launches_at_last;
	int warned;
	/* AutoFreeOnLaunch: allocations of the replaced executable's last
	 * launch, freed (stream-ordered) before the next launch of the handle,
	 * as the replaced executable's own next launch would have done. */
	CUdeviceptr *pending;
	int n_pending;
	UT_hash_handle hh;
};

static pthread_rwlock_t proxy_lock = PTHREAD_RWLOCK_INITIALIZER;
static struct proxy *proxies;

CUgraphExec cg_policy_exec_slow(CUgraphExec app)
{
	struct proxy *p;
	CUgraphExec r = app;
	pthread_rwlock_rdlock(&proxy_lock);
	HASH_FIND_PTR(proxies, &app, p);
	if (p)
		r = p->real;
	pthread_rwlock_unlock(&proxy_lock);
	return r;
}

CUgraphNode cg_policy_node(CUgraphExec app, CUgraphNode node, int *found)
{
	struct proxy *p;
	CUgraphNode r = node;
	*found = 1;
	if (!atomic_load_explicit(&cg_policy_active, memory_order_relaxed))
		return node;
	pthread_rwlock_rdlock(&proxy_lock);
	HASH_FIND_PTR(proxies, &app, p);
	if (p && p->orig_nodes) {
		*found = 0;
		for (uint32_t i = 0; i < p->n_nodes; i++)
			if (p->orig_nodes[i] == node) {
				r = p->new_nodes[i];
				*found = r != NULL;
				break;
			}
	}
	pthread_rwlock_unlock(&proxy_lock);
	return r;
}

int cg_policy_reinstantiate(CUgraphExec app, CUgraph g, const char *reason, int rc_update)
{
	struct cg_summary *old_sum, *new_sum;
	struct cg_exec_view v, other;
	struct proxy *p;
	CUgraphExec fresh = NULL, prev_real;
	CUstreamCaptureMode mode = CU_STREAM_CAPTURE_MODE_RELAXED;
	uint64_t t0 = cg_now_ns();
	CUresult rc;
	struct cg_rec r;
	cuuint64_t flags;
	struct cg_mnode *mem = NULL;
	int n_mem = 0, n_carried = 0;
	CUdeviceptr carried[8];
	CUgraph prev_held = NULL;
	int prev_dead = 0;

	if (cg_cfg.on_update_failure != CG_UPD_REINSTANTIATE || !real_cuGraphInstantiateWithFlags)
		return 0;
	if (!model_exec_view(app, &v))
		return 0;
	/* Device code may hold the raw handle of a device-launch exec. */
	if (v.flags & CUDA_GRAPH_INSTANTIATE_FLAG_DEVICE_LAUNCH)
		return 0;
	/* A memory-node graph with its own live exec cannot be instantiated again. */
	if (model_graph_live_exec(g, &other) && other.h != app)
		return 0;
	flags = v.flags & ~(cuuint64_t)CUDA_GRAPH_INSTANTIATE_FLAG_UPLOAD;
	prev_real = cg_policy_exec(app);

	cg_tls.in_shim++;
	/* Relaxed so that the shim's own instantiate cannot invalidate an
	 * unrelated capture of another thread (PyTorch does the same). */
	if (drv_cuThreadExchangeStreamCaptureMode)
		drv_cuThreadExchangeStreamCaptureMode(&mode);
	new_sum = model_graph_summary(g);
	rc = real_cuGraphInstantiateWithFlags(&fresh, g, flags);
	if (drv_cuThreadExchangeStreamCaptureMode)
		drv_cuThreadExchangeStreamCaptureMode(&mode);
	cg_tls.in_shim--;
	if (rc != CUDA_SUCCESS) {
		model_summary_free(new_sum);
		rec_begin(&r, CG_L_WARN, CGSHIM_EV_REWRITE);
		rec_hex(&r, "exec", (uintptr_t)app);
		rec_hex(&r, "graph", (uintptr_t)g);
		rec_str(&r, "reason", reason);
		rec_int(&r, "rc_instantiate", rc);
		rec_str(&r, "msg", "re-instantiation failed; the driver's update result is returned");
		rec_end(&r);
		return 0;
	}

	old_sum = model_exec_summary(app);
	/* Graph allocations the replaced executable's last launch left
	 * allocated (alloc nodes with no free node in its graph). */
	if (v.unfreed_nodes > 0 && v.launches > 0)
		n_mem = model_exec_mnodes(app, &mem);
	pthread_rwlock_wrlock(&proxy_lock);
	HASH_FIND_PTR(proxies, &app, p);
	if (!p) {
		p = calloc(1, sizeof *p);
		if (p) {
			p->app = app;
			HASH_ADD_PTR(proxies, app, p);
			if (cg_table_oom) {
				cg_table_oom = 0;
				free(p);
				p = NULL;
			}
		}
		/* Node handles the application holds are those of the graph it
		 * instantiated first; keep them as the reference. */
		if (p && old_sum) {
			p->n_nodes = old_sum->n_nodes;
			p->orig_nodes = malloc((old_sum->n_nodes + 1) * sizeof *p->orig_nodes);
			if (p->orig_nodes)
				memcpy(p->orig_nodes, old_sum->nodes, old_sum->n_nodes * sizeof *p->orig_nodes);
		}
	}
	if (p && mem && v.launches > p->launches_at_last) {
		CUdeviceptr *d = realloc(p->pending, (p->n_pending + n_mem + 1) * sizeof *d);
		if (d) {
			p->pending = d;
			for (int i = 0; i < n_mem; i++) {
				int freed = 0;
				if (mem[i].is_free)
					continue;
				for (int k = 0; k < n_mem; k++)
					freed |= mem[k].is_free && mem[k].dptr == mem[i].dptr;
				if (!freed)
					carried[n_carried < 8 ? n_carried++ : 7] = mem[i].dptr;
				if (!freed && (flags & CUDA_GRAPH_INSTANTIATE_FLAG_AUTO_FREE_ON_LAUNCH)) {
					if (!p->n_pending)
						atomic_fetch_add(&cg_policy_pending, 1);
					d[p->n_pending++] = mem[i].dptr;
				}
			}
		}
	}
	if (p) {
		p->real = fresh;
		p->graph = g;
		p->rewrites++;
		p->launches_at_last = v.launches;
		free(p->new_nodes);
		p->new_nodes = calloc(p->n_nodes + 1, sizeof *p->new_nodes);
		if (p->new_nodes && new_sum && old_sum)
			for (uint32_t i = 0; i < p->n_nodes && i < new_sum->n_nodes; i++)
				if (old_sum->types[i] == new_sum->types[i])
					p->new_nodes[i] = new_sum->nodes[i];
		prev_held = p->held;
		prev_dead = p->held_dead;
		p->held = g;
		p->held_dead = 0;
	}
	pthread_rwlock_unlock(&proxy_lock);
	free(mem);
	if (!p) {
		real_cuGraphExecDestroy(fresh);
		model_summary_free(old_sum);
		model_summary_free(new_sum);
		return 0;
	}
	atomic_store(&cg_policy_active, 1);
	/* The previous replacement (not the app's original) is no longer
	 * reachable: destroy it. The original stays until the app destroys
	 * its handle, so its handle value cannot be reused meanwhile. */
	if (prev_real != app)
		real_cuGraphExecDestroy(prev_real);
	if (prev_dead && prev_held && prev_held != g)
		drv_cuGraphDestroy(prev_held); /* the application destroyed it earlier */
	model_exec_rewritten(app, fresh, g, new_sum);
	model_summary_free(old_sum);

	rec_begin(&r, CG_L_INFO, CGSHIM_EV_REWRITE);
	rec_hex(&r, "exec", (uintptr_t)app);
	rec_hex(&r, "old_real", (uintptr_t)prev_real);
	rec_hex(&r, "new_real", (uintptr_t)fresh);
	rec_hex(&r, "graph", (uintptr_t)g);
	rec_str(&r, "reason", reason);
	rec_int(&r, "rc_update", rc_update);
	rec_u64(&r, "flags", flags);
	rec_int(&r, "rewrites", p->rewrites);
	rec_u64(&r, "dur_ns", cg_now_ns() - t0);
	if (n_carried) {
		/* AutoFreeOnLaunch: freed before the next launch; otherwise they
		 * stay the application's to free, as after an update. */
		rec_open(&r, (flags & CUDA_GRAPH_INSTANTIATE_FLAG_AUTO_FREE_ON_LAUNCH) ? "free_at_next_launch"
											: "outstanding",
			 '[');
		for (int i = 0; i < n_carried; i++)
			rec_elem_hex(&r, carried[i]);
		rec_close(&r, ']');
	}
	rec_end(&r);
	if (!p->warned && p->rewrites >= 8 && v.launches > 0 && p->rewrites * 2 >= v.launches && (p->warned = 1))
		cg_warn("exec 0x%llx: %lld rewrites for %lld launches: the update fails nearly every step "
			"(thrashing); capture a graph whose topology does not change, or keep one exec per shape",
			(unsigned long long)(uintptr_t)app, p->rewrites, v.launches);
	return 1;
}

void cg_policy_forget(CUgraphExec app)
{
	struct proxy *p;
	if (!atomic_load(&cg_policy_active))
		return;
	pthread_rwlock_wrlock(&proxy_lock);
	HASH_FIND_PTR(proxies, &app, p);
	if (p)
		HASH_DEL(proxies, p);
	pthread_rwlock_unlock(&proxy_lock);
	if (!p)
		return;
	if (p->real && p->real != app)
		real_cuGraphExecDestroy(p->real);
	if (p->held_dead && p->held)
		drv_cuGraphDestroy(p->held);
	if (p->n_pending) /* never launched again: they stay allocated, as after an update */
		atomic_fetch_sub(&cg_policy_pending, 1);
	free(p->pending);
	free(p->orig_nodes);
	free(p->new_nodes);
	free(p);
}

void cg_policy_launch_pending(CUgraphExec app, CUstream s, int ptsz)
{
	struct proxy *p;
	CUdeviceptr *d = NULL;
	int n = 0;
	CUstreamCaptureMode mode = CU_STREAM_CAPTURE_MODE_RELAXED;
	pthread_rwlock_wrlock(&proxy_lock);
	HASH_FIND_PTR(proxies, &app, p);
	if (p && p->n_pending) {
		d = p->pending;
		n = p->n_pending;
		p->pending = NULL;
		p->n_pending = 0;
		atomic_fetch_sub(&cg_policy_pending, 1);
	}
	pthread_rwlock_unlock(&proxy_lock);
	if (!n)
		return;
	cg_tls.in_shim++;
	if (drv_cuThreadExchangeStreamCaptureMode)
		drv_cuThreadExchangeStreamCaptureMode(&mode);
	if (!real_cuMemFreeAsync)
		(void)cg_need_real(HID_cuMemFreeAsync);
	if (ptsz && !real_cuMemFreeAsync_ptsz)
		(void)cg_need_real(HID_cuMemFreeAsync_ptsz);
	for (int i = 0; i < n; i++) {
		/* the application may have freed it already: ignore the error */
		if (ptsz && real_cuMemFreeAsync_ptsz)
			(void)real_cuMemFreeAsync_ptsz(d[i], s);
		else if (real_cuMemFreeAsync)
			(void)real_cuMemFreeAsync(d[i], s);
	}
	if (drv_cuThreadExchangeStreamCaptureMode)
		drv_cuThreadExchangeStreamCaptureMode(&mode);
	cg_tls.in_shim--;
	free(d);
}

int cg_policy_graph_destroy(CUgraph g)
{
	struct proxy *p, *tmp;
	int held = 0;
	if (!atomic_load_explicit(&cg_policy_active, memory_order_relaxed))
		return 0;
	pthread_rwlock_wrlock(&proxy_lock);
	HASH_ITER(hh, proxies, p, tmp)
	{
		if (p->held == g && !p->held_dead) {
			p->held_dead = 1;
			held = 1;
			break;
		}
	}
	pthread_rwlock_unlock(&proxy_lock);
	return held;
}
