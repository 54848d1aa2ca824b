/*
 * shim/model/nccl.c -- NCCL work in graphs (issue 33): which graphs and
 * executables hold NCCL kernels, with the capture and begin site they came
 * from, and the rank-neutral fingerprint of a captured graph (model.h).
 *
 * The kernel names come from a full summary (nodes.h: the walk asks
 * cuFuncGetName once per function): the end of capture walks its graph
 * while a libnccl is loaded (hooks/capture.c), never otherwise, and never
 * on a launch path. A graph built or changed node by node after its
 * capture is not looked at again (a new generation forgets the count).
 */
#include "model-int.h"
#include "../nccl-lib.h"

static uint64_t nccl_str_hash(const char *s)
{
	uint64_t h = 0xcbf29ce484222325ull;
	for (; s && *s; s++)
		h = (h ^ (unsigned char)*s) * 0x100000001b3ull;
	return h;
}

/* Whether a description's kernel name is NCCL's, kept per name address:
 * a description's name is interned (nodes.h: never freed), so its address
 * names it for the life of the process. The two substring searches a node
 * cost ~1.5 us at the end of a 64-kernel capture on the H200 (2026-11-29,
 * bench/sampler.c; docs/measurements.md). A direct-mapped table of words
 * (address << 1 | answer), read and written whole, lock-free: a lost store
 * only costs a search again. */
#define NCCL_NAME_SLOTS 256
static _Atomic uint64_t nccl_names[NCCL_NAME_SLOTS];

static int nccl_name(const char *name)
{
	uint64_t key = (uint64_t)(uintptr_t)name, w;
	size_t i = (size_t)((key >> 4) * 0x9E3779B97F4A7C15ull >> 56);
	int yes;
	if (!name)
		return 0;
	w = atomic_load_explicit(&nccl_names[i], memory_order_relaxed);
	if (w >> 1 == key)
		return (int)(w & 1);
	yes = cg_nccl_kernel_name(name);
	atomic_store_explicit(&nccl_names[i], key << 1 | (uint64_t)yes, memory_order_relaxed);
	return yes;
}

CG_HOT int model_nccl_count(const struct cg_summary *s)
{
	const char *last = NULL;
	int n = 0, last_yes = 0;
	for (uint32_t k = 0; s && k < s->n_det; k++)
		if (s->det[k].type == CU_GRAPH_NODE_TYPE_KERNEL) {
			if (s->det[k].name != last) /* a graph runs one kernel in many nodes */
				last = s->det[k].name, last_yes = nccl_name(last);
			n += last_yes;
		}
	return n;
}

CG_HOT uint64_t model_nccl_fp(const struct cg_summary *s)
{
	uint64_t h;
	if (!s)
		return 0;
	/* the topology hash is made of types, counts and indices only */
	h = cg_mix64(0x6E63636C00000000ull ^ s->topo, (uint64_t)s->n_nodes << 32 | s->n_edges);
	for (uint32_t k = 0; k < s->n_det; k++) {
		const struct cg_ndet *d = &s->det[k];
		h = cg_mix64(h, (uint64_t)d->type << 32 | d->node);
		if (d->type == CU_GRAPH_NODE_TYPE_KERNEL) {
			h = cg_mix64(h, nccl_str_hash(d->name));
			h = cg_mix64(h, (uint64_t)d->grid[0] << 32 | d->grid[1]);
			h = cg_mix64(h, (uint64_t)d->grid[2] << 32 | d->block[0]);
			h = cg_mix64(h, (uint64_t)d->block[1] << 32 | d->block[2]);
			h = cg_mix64(h, d->shmem);
		} else { /* memcpy: grid[0] is the kind; memset: shmem the element size */
			h = cg_mix64(h, d->bytes);
			h = cg_mix64(h, (uint64_t)d->grid[0] << 32 | d->shmem);
		}
	}
	return h | 1;
}

void model_nccl_graph_set(CUgraph g, int nccl, uint32_t begin_site)
{
	struct cg_graph *gr;
	pthread_mutex_lock(&model_gx_lock);
	gr = model_graph_find_locked(g);
	if (gr) {
		gr->nccl = nccl;
		gr->nccl_gen = gr->gen;
		gr->nccl_site = begin_site;
	}
	pthread_mutex_unlock(&model_gx_lock);
}

CG_HOT int model_nccl_exec_from(CUgraphExec e, CUgraph g, uint64_t capture, uint32_t cap_site)
{
	int n;
	pthread_mutex_lock(&model_gx_lock);
	n = model_nccl_exec_from_locked(model_exec_find_locked(e), g, capture, cap_site);
	pthread_mutex_unlock(&model_gx_lock);
	return n;
}

int model_nccl_exec_from_locked(struct cg_exec *x, CUgraph g, uint64_t capture, uint32_t cap_site)
{
	return model_nccl_exec_of_graph_locked(x, model_graph_find_locked(g), capture, cap_site);
}

int model_nccl_exec(CUgraphExec e)
{
	struct cg_exec *x;
	int n = 0;
	pthread_mutex_lock(&model_gx_lock);
	x = model_exec_find_locked(e);
	if (x && X_GET(x, live))
		n = x->nccl;
	pthread_mutex_unlock(&model_gx_lock);
	return n;
}

int model_nccl_execs(struct model_nccl_exec *out, int max, int try_only)
{
	struct cg_exec *x, *tmp;
	int n = 0;
	if (try_only) {
		if (pthread_mutex_trylock(&model_gx_lock))
			return -1;
	} else {
		pthread_mutex_lock(&model_gx_lock);
	}
	MODEL_EXECS_EACH(x, tmp)
	{
		if (!X_GET(x, live) || x->nccl <= 0)
			continue;
		if (n < max) {
			struct model_nccl_exec *o = &out[n];
			o->e = X_GET(x, h);
			o->g = x->graph;
			o->capture = x->capture;
			o->cap_site = x->cap_site;
			o->exec_site = x->site;
			o->nccl = x->nccl;
			o->dev = x->inst_dev;
			o->launches = atomic_load_explicit(&x->launches, memory_order_relaxed);
		}
		n++;
	}
	pthread_mutex_unlock(&model_gx_lock);
	return n;
}
