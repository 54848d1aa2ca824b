/*
 * shim/model/allocations.c -- graph allocations (memory nodes): where each one lives and who frees it.
 * See model.h for the lock contract, model-int.h for what the model's files share.
 */
#include "model-int.h"

/* spare: a released allocation's entry, kept for the next one (table.h):
 * a capture loop's allocation node makes and drops one a step.
 * last: the entry made or found last (issue 36), under model_mem_lock: a
 * capture loop's allocation is found again by its free, its executable's
 * instantiation and destroy and its graph's destroy, each then reading
 * one entry instead of the table's header, a bucket and the entry's hash
 * handle. Cleared with the entry it names (alloc_drop_locked). Both on
 * one line (a graph's destroy reads both; last was on a line of its own
 * for the instantiation and the destroys). */
static struct {
	struct cg_spare spare;
	struct cg_alloc *last;
} __attribute__((aligned(32))) alloc_line = {.spare = CG_SPARE_INIT(sizeof(struct cg_alloc))};

/* The entries by address, under model_mem_lock: a handle index (table.h,
 * issue 36), since a capture loop's entry comes and goes every step, and
 * with it uthash's table header and bucket array (made, zeroed and freed
 * a step). A device pointer is the index's pointer-sized key. */
_Static_assert(sizeof(CUdeviceptr) == sizeof(void *), "a device pointer is the handle index's key");
static struct cg_hidx model_allocs = CG_HIDX_INIT(struct cg_alloc, dptr, link);

static CG_HOT struct cg_alloc *alloc_find_locked(CUdeviceptr p)
{
	struct cg_alloc *a = alloc_line.last;
	if (a && a->dptr == p)
		return a;
	a = cg_hidx_find(&model_allocs, (const void *)(uintptr_t)p);
	if (a)
		alloc_line.last = a;
	return a;
}

static void alloc_drop_locked(struct cg_alloc *a)
{
	if (alloc_line.last == a)
		alloc_line.last = NULL;
	cg_hidx_del(&model_allocs, a);
	cg_spare_free(&alloc_line.spare, a, sizeof *a);
}

CG_HOT int model_alloc_graph_at(const struct cg_mnode *m_in, CUstream s, uint64_t capture, CUgraph g, const char *api,
				int *level, struct ev_alloc *out)
{
	struct cg_alloc *a;
	struct cg_pool *p;
	struct cg_mnode mm = *m_in, *m = &mm;
	int is_default = 0, ipc = m->ipc, dev, repeat = 0;
	uint32_t pool_site = 0;
	if (!mm.dev)
		mm.dev = model_pool_mnode_dev(&mm);
	dev = CG_MNODE_DEV(m);
	pthread_mutex_lock(&model_mem_lock);
	a = alloc_find_locked(m->dptr);
	if (!a) {
		a = cg_spare_calloc(&alloc_line.spare, sizeof *a);
		if (a) {
			a->dptr = m->dptr;
			cg_hidx_add(&model_allocs, a);
			if (model_table_added(&model_alloc_table)) {
				cg_spare_free(&alloc_line.spare, a, sizeof *a);
				a = NULL;
			}
		}
	}
	if (a) {
		alloc_line.last = a;
		a->size = m->size;
		a->capture = capture;
		a->graph = g;
		a->site = m->site;
		a->exec = NULL;
		a->dev = mm.dev;
	}
	p = m->pool ? model_pool_get_locked(m->pool) : NULL;
	if (p) {
		p->allocs++;
		p->bytes += m->size;
		is_default = p->is_default;
		ipc = ipc || p->ipc;
		pool_site = p->site;
	}
	model_tot.alloc_nodes++;
	model_tot.alloc_bytes += m->size;
	if (dev >= 0 && dev < CG_MAX_DEV) {
		model_dev_alloc[dev].nodes++;
		model_dev_alloc[dev].bytes += m->size;
	}
	pthread_mutex_unlock(&model_mem_lock);
	if (capture) /* counted, and whether the capture repeats, in one round trip */
		repeat = model_capture_count_alloc(capture, 1, m->size);
	if (*level < 0)
		*level = cg_log_life_level(repeat);
	if (out && cg_log_on(*level)) { /* a capture's graph is known from its first memory
					 * node; its ids only where the record is written */
		struct model_ids ids = {0};
		model_ids_get(g, NULL, &ids);
		*out = (struct ev_alloc){.api = api,
					 .dptr = m->dptr,
					 .size = m->size,
					 .pool = (uintptr_t)m->pool,
					 .pool_default = is_default,
					 .ipc = ipc,
					 .dev = dev,
					 .stream = (uintptr_t)s,
					 .capture = capture,
					 .graph = (uintptr_t)g,
					 .ids = model_ids_emit(&ids),
					 .site = m->site,
					 .pool_site = pool_site};
	}
	return repeat;
}

void model_summary_devs_rec(struct cg_rec *r, const struct cg_summary *s)
{
	unsigned long long by[CG_MAX_DEV] = {0};
	int any = 0;
	if (!r->on)
		return;
	rec_int(r, "dev", cg_current_device());
	for (uint32_t i = 0; s && s->mem && i < s->n_alloc + s->n_free; i++)
		if (!s->mem[i].is_free && s->mem[i].dev) {
			by[CG_MNODE_DEV(&s->mem[i])] += s->mem[i].size;
			any = 1;
		}
	if (!any)
		return;
	rec_open(r, "alloc_devs", '{');
	for (int d = 0; d < CG_MAX_DEV; d++)
		if (by[d]) {
			char k[4] = {(char)('0' + d / 10), (char)('0' + d % 10), 0};
			rec_u64(r, d < 10 ? k + 1 : k, by[d]);
		}
	rec_close(r, '}');
}

CG_HOT int model_alloc_lookup(CUdeviceptr p, uint64_t *capture, CUgraph *graph, size_t *size, uint32_t *site)
{
	struct cg_alloc *a;
	int ok = 0;
	pthread_mutex_lock(&model_mem_lock);
	a = alloc_find_locked(p);
	if (a) {
		*capture = a->capture;
		*graph = a->graph;
		*size = a->size;
		*site = a->site;
		ok = 1;
	}
	pthread_mutex_unlock(&model_mem_lock);
	return ok;
}

/* Executables whose launches make these allocations. */
CG_HOT void model_alloc_set_exec(CUgraphExec e, const struct cg_mnode *mem, int n)
{
	pthread_mutex_lock(&model_mem_lock);
	for (int i = 0; i < n; i++) {
		struct cg_alloc *a;
		if (mem[i].is_free)
			continue;
		a = alloc_find_locked(mem[i].dptr);
		if (!a) {
			a = cg_spare_calloc(&alloc_line.spare, sizeof *a);
			if (!a)
				continue;
			a->dptr = mem[i].dptr;
			a->size = mem[i].size;
			a->site = mem[i].site;
			a->dev = mem[i].dev;
			cg_hidx_add(&model_allocs, a);
			if (model_table_added(&model_alloc_table)) {
				cg_spare_free(&alloc_line.spare, a, sizeof *a);
				continue;
			}
		}
		a->exec = e;
	}
	pthread_mutex_unlock(&model_mem_lock);
}

/* Executable e no longer makes these allocations (destroyed, or updated to
 * other ones): entries nothing refers to go; with allocations outstanding
 * from its launches they stay, as orphans, until freed. */
CG_HOT void model_alloc_release_exec(CUgraphExec e, const struct cg_mnode *mem, int n, int outstanding)
{
	if (n <= 0) /* no memory node: no lock round trip */
		return;
	pthread_mutex_lock(&model_mem_lock);
	for (int i = 0; i < n; i++) {
		struct cg_alloc *a;
		if (mem[i].is_free)
			continue;
		a = alloc_find_locked(mem[i].dptr);
		if (!a || a->exec != e)
			continue;
		a->exec = NULL;
		if (outstanding)
			a->orphan = 1;
		else if (!a->graph && !a->orphan) {
			alloc_drop_locked(a);
		}
	}
	pthread_mutex_unlock(&model_mem_lock);
}

/* Graph g is destroyed: its allocation nodes no longer name the entries. */
CG_HOT void model_alloc_release_graph(CUgraph g, const struct cg_mnode *mem, int n)
{
	if (n <= 0) /* no memory node: no lock round trip */
		return;
	pthread_mutex_lock(&model_mem_lock);
	for (int i = 0; i < n; i++) {
		struct cg_alloc *a;
		if (mem[i].is_free)
			continue;
		a = alloc_find_locked(mem[i].dptr);
		if (!a || a->graph != g)
			continue;
		a->graph = NULL;
		if (!a->exec && !a->orphan) {
			alloc_drop_locked(a);
		}
	}
	pthread_mutex_unlock(&model_mem_lock);
}

void model_alloc_freed(CUdeviceptr p)
{
	struct cg_alloc *a;
	CUgraphExec e = NULL;
	pthread_mutex_lock(&model_mem_lock);
	a = alloc_find_locked(p);
	if (a) {
		e = a->exec;
		if (!a->exec && !a->graph) { /* an orphan, or nothing refers to it: done */
			alloc_drop_locked(a);
		}
	}
	pthread_mutex_unlock(&model_mem_lock);
	if (e) {
		struct cg_exec *x = model_exec_fast(e);
		if (x && atomic_load(&x->outstanding) > 0)
			atomic_fetch_sub(&x->outstanding, 1);
	}
}

void model_alloc_leaks(CUgraphExec e, uint64_t exec_id, const struct cg_mnode *mem, int n, struct model_leak **out,
		       int *n_out)
{
	for (int i = 0; i < n; i++) {
		if (mem[i].is_free || model_mnode_has(mem, n, mem[i].dptr, 1))
			continue;
		struct model_leak *grown = realloc(*out, (size_t)(*n_out + 1) * sizeof **out);
		if (grown) { /* else this one is counted, not named */
			*out = grown;
			grown[*n_out].e = e;
			grown[*n_out].exec_id = exec_id;
			grown[*n_out].m = mem[i];
			(*n_out)++;
		}
		pthread_mutex_lock(&model_mem_lock);
		model_tot.leaks++;
		pthread_mutex_unlock(&model_mem_lock);
	}
}

/* A reset took back device dev's memory (model/reset.c): its entries go
 * whatever still refers to them (a graph or exec of another device; their
 * own release then finds none, as after a free), orphans included. An
 * entry of no known device goes only with all. */
int model_alloc_forget(int dev, int all)
{
	struct cg_alloc *a, *tmp;
	int n = 0;
	pthread_mutex_lock(&model_mem_lock);
	CG_HIDX_EACH(&model_allocs, a, tmp)
	{
		if (!all && (!a->dev || CG_MNODE_DEV(a) != dev))
			continue;
		alloc_drop_locked(a);
		n++;
	}
	pthread_mutex_unlock(&model_mem_lock);
	return n;
}
