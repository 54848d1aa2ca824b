/*
 * shim/model/reset.c -- a device's primary context reset (model.h
 * model_reset_*): the model forgets what cuDevicePrimaryCtxReset(_v2)
 * destroyed, through its own removal paths, and says nothing about it.
 * See model.h for the lock contract, model-int.h for what the model's files share.
 *
 * The reset destroys every graph, executable, pool, stream and allocation
 * made in the device's primary context. What the model keeps of a dead
 * object can only mislead: an allocation it held outstanding was named at
 * exit (CGS011), and a handle the driver gives a new object after the reset
 * would be taken for the dead one (its memory nodes, its live exec, its
 * pool). Forgetting too much only loses later diagnostics; forgetting too
 * little can make a false one. So where the model does not know an object's
 * device (graphs, live captures) it forgets every one when the process has
 * used no other device (model_dev_seen), and otherwise those it can tie to
 * the device (docs/design.md, Known limits).
 */
#include "../ledger.h"
#include "model-int.h"

/* A list of handles grown under a model lock (the reset path may allocate). */
struct handles {
	void **v;
	int n, cap, failed;
};

/* h appended; 1 when out of memory (the list is then abandoned). */
static int handles_push(struct handles *l, void *h)
{
	if (l->n == l->cap) {
		int cap = l->cap ? 2 * l->cap : 16;
		void **grown = realloc(l->v, (size_t)cap * sizeof *grown);
		if (!grown) {
			l->failed = 1;
			return 1;
		}
		l->v = grown;
		l->cap = cap;
	}
	l->v[l->n++] = h;
	return 0;
}

/* The list (malloc'd, *n of them; each a handle to be cast back to its
 * type by value); NULL when empty (*n 0) or out of memory (*n -1). */
static void **handles_take(struct handles *l, int *n)
{
	*n = l->failed ? -1 : l->n;
	if (*n > 0)
		return l->v;
	free(l->v);
	return NULL;
}

/* Whether graph gr is tied to device dev: a memory node on it, or an
 * executable forgotten (execs, n of them; graphs, the graph each was
 * instantiated from) was made from it. gx_lock held. */
static int graph_on_dev_locked(const struct cg_graph *gr, int dev, const CUgraph *graphs, int n)
{
	for (int i = 0; i < gr->n_mem; i++)
		if (CG_MNODE_DEV(&gr->mem[i]) == dev)
			return 1;
	for (uint32_t i = 0; gr->sum && gr->sum->mem && i < gr->sum->n_alloc + gr->sum->n_free; i++)
		if (CG_MNODE_DEV(&gr->sum->mem[i]) == dev)
			return 1;
	for (int i = 0; i < n; i++)
		if (graphs[i] == gr->h)
			return 1;
	return 0;
}

/* Whether a reset of dev forgets every object whose device the model does
 * not know: the process has used no other device (or dev is out of range). */
static int reset_all(int dev)
{
	return dev < 0 || dev >= CG_MAX_DEV || !(model_devs_seen() & ~(1u << dev));
}

CUgraphExec *model_reset_execs(int dev, int *n_out)
{
	int all = reset_all(dev);
	struct cg_exec *x, *tmp;
	struct handles v = {0};
	CUgraphExec *out;
	void **vv;
	pthread_mutex_lock(&model_gx_lock);
	MODEL_EXECS_EACH(x, tmp)
	if ((all || x->inst_dev == dev) && handles_push(&v, x->h))
		break;
	pthread_mutex_unlock(&model_gx_lock);
	vv = handles_take(&v, n_out);
	out = *n_out > 0 ? malloc((size_t)*n_out * sizeof *out) : NULL;
	for (int i = 0; out && i < *n_out; i++)
		out[i] = (CUgraphExec)vv[i];
	if (vv && !out)
		*n_out = -1;
	free(vv);
	return out;
}

/* Forgets exec e as its destroy would, minus what a destroy says: its
 * outstanding allocations were taken back by the reset (no leak, no orphan
 * entry), its launch count is not written. Returns 0 when the model did not
 * know e, else 1 with *g its graph. */
static int exec_forget(CUgraphExec e, CUgraph *g)
{
	struct model_leak *leaks = NULL;
	struct ev_launches lr;
	struct cg_exec *x;
	int quiet = 0, lg_pending = 0;
	pthread_mutex_lock(&model_gx_lock);
	x = model_exec_find_locked(e);
	if (x) {
		atomic_store(&x->outstanding, 0);
		*g = x->graph;
	}
	pthread_mutex_unlock(&model_gx_lock);
	if (!x)
		return 0;
	(void)model_exec_destroy(e, &leaks, NULL, &lr, &quiet, &lg_pending);
	free(leaks); /* none: nothing was outstanding */
	if (!lg_pending)
		ledger_exec_gone(e);
	return 1;
}

/* The graphs to forget: every one when the process used no other device
 * (all), else those tied to dev. Malloc'd, *n of them (-1: out of memory,
 * none listed). */
static void **graphs_to_forget(int dev, int all, const CUgraph *graphs, int n_graphs, int *n_out)
{
	struct cg_graph *gr, *tmp;
	struct handles v = {0};
	pthread_mutex_lock(&model_gx_lock);
	CG_HIDX_EACH(&model_graphs, gr, tmp)
	if ((all || graph_on_dev_locked(gr, dev, graphs, n_graphs)) && handles_push(&v, gr->h))
		break;
	pthread_mutex_unlock(&model_gx_lock);
	return handles_take(&v, n_out);
}

/* The pools of dev the application made (with all, those of no known
 * device too): destroyed as their destroy would (model_pool_destroy). The
 * device's default pool stays known (the device has one after the reset
 * too) but is no longer its current pool: the next capture's begin learns
 * the current one again (learn_current_pool). */
static int pools_forget(int dev, int all)
{
	struct cg_pool *p, *tmp;
	CUmemoryPool v[64];
	int n = 0, total = 0, more;
	do {
		more = 0;
		n = 0;
		pthread_mutex_lock(&model_mem_lock);
		HASH_ITER(hh, model_pools, p, tmp)
		{
			if ((p->dev != dev && !(all && p->dev < 0)) || p->is_default || p->destroyed)
				continue;
			if (n == (int)(sizeof v / sizeof v[0])) {
				more = 1;
				break;
			}
			v[n++] = p->h;
		}
		pthread_mutex_unlock(&model_mem_lock);
		for (int i = 0; i < n; i++)
			model_pool_destroy(v[i]);
		total += n;
	} while (more);
	model_device_set_pool(dev, NULL, 0);
	return total;
}

/* Out of memory for a list: the same, one at a time (a lock round trip and
 * a walk from the start each time; only then). */
static int execs_forget_each(int dev, int all)
{
	int n = 0;
	for (;;) {
		struct cg_exec *x, *tmp;
		CUgraphExec h = NULL;
		CUgraph g = NULL;
		pthread_mutex_lock(&model_gx_lock);
		MODEL_EXECS_EACH(x, tmp)
		if (all || x->inst_dev == dev) {
			h = x->h;
			break;
		}
		pthread_mutex_unlock(&model_gx_lock);
		if (!h || !exec_forget(h, &g))
			return n;
		n++;
	}
}

static int graphs_forget_each(void)
{
	int n = 0;
	for (;;) {
		struct cg_graph *gr;
		CUgraph h;
		pthread_mutex_lock(&model_gx_lock);
		gr = model_graphs.head;
		h = gr ? gr->h : NULL;
		pthread_mutex_unlock(&model_gx_lock);
		if (!h)
			return n;
		(void)model_graph_destroy(h);
		n++;
	}
}

void model_reset_device(int dev, struct model_reset *out)
{
	int all = reset_all(dev);
	CUgraphExec *execs;
	CUgraph *graphs = NULL;
	void **gone;
	int n_execs = 0, n_graphs = 0, n_gone = 0;
	memset(out, 0, sizeof *out);
	/* executables instantiated in the device's context, and the graphs
	 * they were made from */
	execs = model_reset_execs(dev, &n_execs);
	if (n_execs > 0)
		graphs = calloc((size_t)n_execs, sizeof *graphs);
	for (int i = 0; i < n_execs; i++) {
		CUgraph g = NULL;
		if (!exec_forget(execs[i], &g))
			continue;
		out->execs++;
		if (graphs && g)
			graphs[n_graphs++] = g;
	}
	free(execs);
	if (n_execs < 0)
		out->execs += execs_forget_each(dev, all);
	if (n_execs < 0 || (n_execs > 0 && !graphs)) /* out of memory: their graphs unknown, the safe side */
		all = 1;
	gone = graphs_to_forget(dev, all, graphs, n_graphs, &n_gone);
	free(graphs);
	for (int i = 0; i < n_gone; i++) {
		(void)model_graph_destroy((CUgraph)gone[i]); /* its allocation entries released with it */
		out->graphs++;
	}
	free(gone);
	if (n_gone < 0) /* out of memory: all of them (all is set, or graphs was listed) */
		out->graphs += graphs_forget_each();
	out->pools = pools_forget(dev, all);
	/* what is left of the device's graph allocations: orphans of execs
	 * destroyed before the reset, entries of graphs of another device */
	out->allocs = model_alloc_forget(dev, all);
	if (all)
		out->captures = model_capture_drop_all();
	model_epoch_bump(); /* graphs and execs went: no known update stands */
	model_mem_moved();  /* the device's memory went back */
}
