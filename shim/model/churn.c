/*
 * shim/model/churn.c -- re-capture churn (issue 32): per capture site and
 * graph fingerprint, the captures, instantiations and launches, the time
 * spent capturing and instantiating, and the graph memory of one graph.
 * See model.h ("re-capture churn") for the contract.
 *
 * A fixed table of MODEL_CHURN_MAX entries, never freed or moved, so an
 * executable keeps its entry's index and adds its launches at destroy with
 * one atomic add and no lock. Entries are found by (key, shape) under
 * model_last_lock (the steady judgement's, taken at the same end: one
 * lock line for both, issue 36), at the end of a capture and a sighting's
 * instantiation only, never on a launch. A full table counts the rest as
 * untracked (exit).
 *
 * Walks are spent only on graphs that may be captured again: the first
 * capture of a site's cheap key is a sighting (an entry without a
 * fingerprint: its time, memory and instantiations kept, no walk); the
 * second is walked and the sighting takes its fingerprint (or merges into
 * the entry that has it, forwarding later counts);
 * from the threshold on (the rule fired) the cheap key alone counts. A
 * program that captures each graph once walks none for this.
 */
#include "model-int.h"

/* A capture loop's step counts into its entry at the end of capture
 * (model_churn_again: the search's key, cheap, fwd and fired, the counts
 * and the memory) and at the instantiation (walked, insts, inst_ns): those
 * fields in the entry's first 64-byte line (issue 36), the firsts (read
 * once), the fingerprint and the launches in the second, the pointer
 * hashes after (an entry 192 bytes, the table aligned).
 * An instantiation counts into a walked entry (walked: its shape is set)
 * without model_last_lock (issue 36: its round trip was a line of a
 * capture loop's step): only a sighting is ever forwarded into another
 * entry and a shape once set stays, so such an entry is its own count's
 * home. Its instantiation counts are atomics (a merge adds to them under
 * the lock); walked is stored atomically (read by that test unlocked). */
struct churn_ent {
	uint32_t key, site;
	uint64_t cheap, mem_bytes;
	uint32_t fwd; /* merged into entry fwd (1-based): counts go there */
	uint16_t fired;
	uint16_t walked; /* shape set (churn_walked_set) */
	long long captures;
	_Atomic long long insts;
	uint64_t cap_ns;
	_Atomic uint64_t inst_ns;
	uint64_t shape; /* 0: a sighting, not walked yet */
	uint64_t first_cap_ns;
	_Atomic uint64_t first_inst_ns;
	_Atomic long long launches; /* of destroyed executables */
	int n_ptrs, more_ptrs;
	int nodes;
	uint64_t ptrs[MODEL_CHURN_PTRS]; /* distinct pointer hashes, first ones */
} __attribute__((aligned(64)));
_Static_assert(offsetof(struct churn_ent, shape) == 64, "churn_ent: a loop's step reads the first line only");

static struct churn_ent churn_tab[MODEL_CHURN_MAX];
static int churn_n CG_HOT_DATA;
static long long churn_untracked;

static CG_HOT void churn_view_locked(const struct churn_ent *e, struct model_churn_view *v)
{
	memset(v, 0, sizeof *v);
	v->key = e->key;
	v->site = e->site;
	v->shape = e->shape;
	v->ptrs0 = e->ptrs[0];
	v->ptr_sets = e->n_ptrs;
	v->more_ptrs = e->more_ptrs;
	v->nodes = e->nodes;
	v->captures = e->captures;
	v->insts = atomic_load_explicit(&e->insts, memory_order_relaxed);
	v->launches = atomic_load_explicit(&e->launches, memory_order_relaxed);
	v->cap_ns = e->cap_ns;
	v->inst_ns = atomic_load_explicit(&e->inst_ns, memory_order_relaxed);
	v->first_ns = e->first_cap_ns + atomic_load_explicit(&e->first_inst_ns, memory_order_relaxed);
	v->mem_bytes = e->mem_bytes;
}

static void churn_ptrs_locked(struct churn_ent *e, uint64_t ptrs)
{
	if (!ptrs)
		return;
	for (int i = 0; i < e->n_ptrs; i++)
		if (e->ptrs[i] == ptrs)
			return;
	if (e->n_ptrs < MODEL_CHURN_PTRS)
		e->ptrs[e->n_ptrs++] = ptrs;
	else
		e->more_ptrs = 1;
}

static void churn_count_locked(struct churn_ent *e, const struct model_cap_end *ce)
{
	e->captures++;
	e->cap_ns += ce->dur_ns;
	if (e->captures == 1)
		e->first_cap_ns = ce->dur_ns;
	if (ce->alloc_bytes > e->mem_bytes)
		e->mem_bytes = ce->alloc_bytes;
}

/* e takes its fingerprint (shape, never 0); under the lock. */
static void churn_walked_set(struct churn_ent *e, uint64_t shape)
{
	e->shape = shape;
	__atomic_store_n(&e->walked, 1, __ATOMIC_RELEASE);
}

static struct churn_ent *churn_new_locked(const struct model_cap_end *ce, uint64_t shape, uint64_t cheap)
{
	struct churn_ent *e;
	if (churn_n >= MODEL_CHURN_MAX) {
		churn_untracked++;
		return NULL;
	}
	e = &churn_tab[churn_n++];
	e->key = ce->key;
	e->site = ce->site;
	if (shape)
		churn_walked_set(e, shape);
	e->cheap = cheap;
	return e;
}

static struct churn_ent *churn_resolve(uint32_t idx)
{
	struct churn_ent *e = &churn_tab[idx - 1];
	for (int hops = 0; e->fwd && hops < 4; hops++)
		e = &churn_tab[e->fwd - 1];
	return e;
}

CG_HOT int model_churn_again(const struct model_cap_end *ce, uint64_t cheap, uint32_t *idx)
{
	struct churn_ent *e = NULL;
	int done = 0;
	*idx = 0;
	if (!cheap || !ce->key)
		return 0;
	pthread_mutex_lock(&model_last_lock);
	/* Every entry in use has a key (never 0: model_churn_capture is
	 * called with ce's), those past churn_n are zero: the search stops at
	 * the first key 0, so a loop's own entry, usually the first, is found
	 * without reading churn_n's line (issue 36). */
	for (int i = 0; i < MODEL_CHURN_MAX && churn_tab[i].key; i++)
		if (!churn_tab[i].fwd && churn_tab[i].key == ce->key && churn_tab[i].cheap == cheap) {
			e = &churn_tab[i];
			break;
		}
	/* a fired fingerprint counts it; a key seen once (a sighting) or
	 * walked before is walked; a new one is sighted */
	if (e ? e->fired : (e = churn_new_locked(ce, 0, cheap)) != NULL) {
		churn_count_locked(e, ce);
		*idx = (uint32_t)(e - churn_tab) + 1;
		done = 1;
	}
	pthread_mutex_unlock(&model_last_lock);
	return done;
}

uint32_t model_churn_capture(const struct model_cap_end *ce, const struct model_churn_fp *fp, int threshold, int *fire,
			     struct model_churn_view *v)
{
	struct churn_ent *e = NULL, *sight = NULL;
	uint32_t idx = 0;
	*fire = 0;
	if (!fp->shape || !ce->key)
		return 0;
	pthread_mutex_lock(&model_last_lock);
	for (int i = 0; i < churn_n; i++) {
		struct churn_ent *x = &churn_tab[i];
		if (x->fwd || x->key != ce->key)
			continue;
		if (x->shape == fp->shape)
			e = x;
		else if (!x->shape && fp->cheap && x->cheap == fp->cheap)
			sight = x;
	}
	if (!e && sight) { /* the sighting was this graph's twin: it takes the fingerprint */
		churn_walked_set(sight, fp->shape);
		e = sight;
		sight = NULL;
	} else if (!e) {
		e = churn_new_locked(ce, fp->shape, fp->cheap);
	}
	if (e && sight) { /* this graph under another cheap key before: one entry */
		e->captures += sight->captures;
		e->cap_ns += sight->cap_ns;
		/* a sighting's counts change under the lock only */
		atomic_fetch_add_explicit(&e->insts, atomic_load_explicit(&sight->insts, memory_order_relaxed),
					  memory_order_relaxed);
		atomic_fetch_add_explicit(&e->inst_ns, atomic_load_explicit(&sight->inst_ns, memory_order_relaxed),
					  memory_order_relaxed);
		atomic_fetch_add(&e->launches, atomic_exchange(&sight->launches, 0));
		sight->fwd = (uint32_t)(e - churn_tab) + 1;
	}
	if (e) {
		e->nodes = fp->nodes;
		churn_count_locked(e, ce);
		churn_ptrs_locked(e, fp->ptrs);
		/* the cheap key of the capture that fired: later captures with
		 * the same one count here without a walk (model_churn_again) */
		if (threshold > 0 && !e->fired && e->captures >= threshold) {
			e->fired = 1;
			if (fp->cheap)
				e->cheap = fp->cheap;
			*fire = 1;
		}
		churn_view_locked(e, v);
		idx = (uint32_t)(e - churn_tab) + 1;
	}
	pthread_mutex_unlock(&model_last_lock);
	return idx;
}

static CG_HOT void churn_inst_count(struct churn_ent *e, uint64_t ns)
{
	atomic_fetch_add_explicit(&e->inst_ns, ns, memory_order_relaxed);
	if (!atomic_fetch_add_explicit(&e->insts, 1, memory_order_relaxed))
		atomic_store_explicit(&e->first_inst_ns, ns, memory_order_relaxed);
}

CG_HOT void model_churn_instantiated(uint32_t idx, uint64_t ns)
{
	struct churn_ent *e;
	if (!idx || idx > MODEL_CHURN_MAX)
		return;
	/* a walked entry: never forwarded (struct churn_ent), no lock */
	e = &churn_tab[idx - 1];
	if (CG_LIKELY(__atomic_load_n(&e->walked, __ATOMIC_ACQUIRE))) {
		churn_inst_count(e, ns);
		return;
	}
	pthread_mutex_lock(&model_last_lock);
	churn_inst_count(churn_resolve(idx), ns);
	pthread_mutex_unlock(&model_last_lock);
}

CG_HOT void model_churn_launched(uint32_t idx, long long n)
{
	/* fwd is written under the lock; a destroy racing the merge adds to
	 * the merged entry, read at exit through the forward as well */
	if (idx && idx <= MODEL_CHURN_MAX && n)
		atomic_fetch_add_explicit(&churn_tab[idx - 1].launches, n, memory_order_relaxed);
}

static int churn_by_waste(const void *a, const void *b)
{
	uint64_t x = model_churn_wasted(a), y = model_churn_wasted(b);
	return x < y ? 1 : x > y ? -1 : 0;
}

int model_churn_exit(struct model_churn_view *out, int max, long long *untracked)
{
	static long long live[MODEL_CHURN_MAX];
	struct model_churn_view *all;
	int n = 0, i, j;
	memset(live, 0, sizeof live);
	model_exec_churn_live(live, MODEL_CHURN_MAX);
	if (!(all = calloc(MODEL_CHURN_MAX, sizeof *all)))
		return 0;
	pthread_mutex_lock(&model_last_lock);
	*untracked = churn_untracked;
	for (i = 0; i < churn_n; i++) {
		struct model_churn_view *v = &all[n];
		if (churn_tab[i].fwd || !churn_tab[i].shape || churn_tab[i].captures < 2)
			continue;
		churn_view_locked(&churn_tab[i], v);
		for (j = 0; j < churn_n; j++) {
			/* live executables and launches of entries merged into it */
			if (j == i || (churn_tab[j].fwd && churn_resolve((uint32_t)j + 1) == &churn_tab[i]))
				v->launches += live[j] + (j == i ? 0 : atomic_load(&churn_tab[j].launches));
			v->fps_at_site += churn_tab[j].key == v->key && !churn_tab[j].fwd;
		}
		n++;
	}
	pthread_mutex_unlock(&model_last_lock);
	qsort(all, (size_t)n, sizeof *all, churn_by_waste);
	if (n > max)
		n = max;
	memcpy(out, all, (size_t)n * sizeof *all);
	free(all);
	return n;
}

void model_churn_after_fork_child(void)
{
	/* the parent's captures are not the child's: their cost stays theirs */
	memset(churn_tab, 0, sizeof churn_tab);
	churn_n = 0;
	churn_untracked = 0;
}

static uint64_t name_hash(const char *p)
{
	uint64_t h = 0xcbf29ce484222325ull; /* FNV-1a */
	while (*p)
		h = (h ^ (unsigned char)*p++) * 0x100000001b3ull;
	return h;
}

/* What a graph is, apart from where its pointers point: the topology hash
 * (node types, dependency counts and signatures, child graphs), then per
 * described node its function, launch dimensions, dynamic shared memory
 * and cooperative flag (kernel), copy kind and size (memcpy), size
 * (memset). */
void model_churn_fp_of(const struct cg_summary *s, struct model_churn_fp *fp)
{
	uint64_t h;
	fp->shape = fp->ptrs = 0;
	if (!s || s->partial || !s->topo || (s->n_det && !s->det))
		return;
	h = cg_mix64(s->topo, s->n_nodes);
	for (uint32_t j = 0; j < s->n_det; j++) {
		const struct cg_ndet *d = &s->det[j];
		h = cg_mix64(h, (uint64_t)d->node << 8 | d->type);
		if (d->type == CU_GRAPH_NODE_TYPE_KERNEL) {
			/* the name's bytes, else the handle: the same kernel from a
			 * module loaded again, or in another process, is the same */
			h = cg_mix64(h, d->name ? name_hash(d->name) : d->func);
			h = cg_mix64(h, (uint64_t)d->grid[0] << 32 | d->grid[1]);
			h = cg_mix64(h, (uint64_t)d->grid[2] << 32 | d->block[0]);
			h = cg_mix64(h, (uint64_t)d->block[1] << 32 | d->block[2]);
			h = cg_mix64(h, (uint64_t)d->shmem << 8 | d->coop);
		} else {
			h = cg_mix64(cg_mix64(h, d->grid[0]), d->bytes);
		}
	}
	fp->shape = h | 1;
	fp->ptrs = s->ptrs;
	fp->nodes = (int)s->n_nodes;
}
