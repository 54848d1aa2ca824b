/*
 * shim/model/ledger.c -- the allocation ledger and the pointers live executables
 * hold into it (ledger.h). It only finds: what it found (struct
 * ledger_freed, ledger_pageable, the why of a stale launch) goes back to
 * the hook, which hands it to the rules' writer (rules.c).
 *
 * Ranges: one array sorted by base, binary search (O(log n) lookup, O(n)
 * memmove on add/free: a few microseconds at 10^4 live ranges; allocation
 * calls are not on the launch path). References: per executable, an array
 * sorted by value, built at instantiate/update from the node details
 * (nodes.h), only for values that fall inside a range then (24 bytes each).
 *
 * The interval index: each range lists the executables that held
 * references into it when their references were worked out (its holders),
 * so a free or unmap scans those, not every live executable (a free cost
 * time linear in live execs: 13 s for 80k frees at 20k execs, issue 30).
 * Executables are found by handle in a hash table. A holder entry names an
 * exec by handle and by the serial its references were worked out under:
 * an exec destroyed or worked out again since leaves a dead entry, skipped
 * by the scan and dropped when the list next grows.
 */
#define _GNU_SOURCE
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "../ledger.h"
#include "../model.h"
#include "../nodes.h"
#include "../pyframes.h"
#include "../site.h"
#include "../state.h"
#include "model-int.h"

struct lg_holder {
	CUgraphExec e;
	uint64_t serial;
};

struct lg_holders {
	uint32_t n, cap;
	struct lg_holder v[];
};

struct lg_range {
	uint64_t base, size;
	uint32_t site;
	uint8_t kind;
	struct lg_holders *h; /* the execs with references into it (may hold dead entries) */
};

struct lg_ref {
	uint64_t val;
	const char *kernel; /* interned (nodes.c), NULL for copies */
	uint32_t node;
	int16_t param; /* kernel parameter index, -1 for an operand */
	uint8_t what;  /* CG_REF_* */
	uint8_t embedded;
};

struct lg_exec {
	CUgraphExec e;
	CUgraph g;
	uint64_t capture;
	uint32_t exec_site, capture_site;
	struct lg_ref *refs;
	uint32_t nrefs;
	int stale, launch_said;
	struct cg_summary *sum; /* a reference on the summary refs came from */
	uint64_t epoch;		/* lg_epoch when refs were worked out */
	int pending;		/* refs not worked out yet (ledger_exec_pending) */
	uint64_t serial;	/* lg_serial when refs were last set (holder entries) */
	struct cg_hlink link;
	/* The first free that made it stale: written whole (ledger_fill)
	 * before stale is set, read only while it is; last, and left as a
	 * reused entry had it (ledger_exec_new_locked: two lines fewer). */
	struct cg_stale why;
};

static struct lg_range *rg;
static size_t nrg, caprg;
/* by handle (table.h: a capture loop's exec comes and goes every step) */
static struct cg_hidx execs = CG_HIDX_INIT(struct lg_exec, e, link);
static struct cg_table exec_table = CG_TABLE_INIT("ledger exec table");
/* A destroyed exec's entry, kept for the next one (table.h). */
static struct cg_spare exec_spare = CG_SPARE_INIT(sizeof(struct lg_exec));
static uint64_t lg_serial;
static _Atomic long long lg_examined;

long long ledger_examined(void)
{
	return atomic_load_explicit(&lg_examined, memory_order_relaxed);
}
/* Bumped under lg_lock by every change of the ranges: an exec's refs worked
 * out from the same summary at the same epoch are still exact. */
static uint64_t lg_epoch;

_Atomic int ledger_stale_n;
/* Executables whose references are still to be worked out: every scan of
 * the ranges (ledger_free) works them out first. */
static _Atomic int lg_pending_n;
#define STALE_MAX 256
static _Atomic(uintptr_t) stale_tab[STALE_MAX];

static void ledger_pending_clear_locked(struct lg_exec *x)
{
	if (x->pending) {
		x->pending = 0;
		atomic_fetch_sub_explicit(&lg_pending_n, 1, memory_order_relaxed);
	}
}

/* First range with base > v, minus one: the range that may hold v. */
static long ledger_find_locked(uint64_t v)
{
	size_t lo = 0, hi = nrg;
	while (lo < hi) {
		size_t mid = (lo + hi) / 2;
		if (rg[mid].base <= v)
			lo = mid + 1;
		else
			hi = mid;
	}
	if (lo == 0)
		return -1;
	lo--;
	return v - rg[lo].base < rg[lo].size ? (long)lo : -1;
}

void ledger_add(uint64_t base, uint64_t size, int kind, uint32_t site)
{
	if (!base || !size)
		return;
	pthread_mutex_lock(&lg_lock);
	if (nrg == caprg) {
		size_t nc = caprg ? 2 * caprg : 256;
		struct lg_range *g = realloc(rg, nc * sizeof *g);
		if (!g) {
			pthread_mutex_unlock(&lg_lock);
			cg_degrade("allocation ledger");
			return;
		}
		rg = g;
		caprg = nc;
	}
	size_t lo = 0, hi = nrg;
	while (lo < hi) {
		size_t mid = (lo + hi) / 2;
		if (rg[mid].base < base)
			lo = mid + 1;
		else
			hi = mid;
	}
	if (lo < nrg && rg[lo].base == base) {
		/* the driver handed the address out again: our free was missed
		 * (the holders stay: their references still point here) */
		rg[lo] = (struct lg_range){base, size, site, (uint8_t)kind, rg[lo].h};
	} else {
		memmove(&rg[lo + 1], &rg[lo], (nrg - lo) * sizeof *rg);
		rg[lo] = (struct lg_range){base, size, site, (uint8_t)kind, NULL};
		nrg++;
	}
	lg_epoch++;
	model_epoch_bump();
	pthread_mutex_unlock(&lg_lock);
}

CG_HOT uint64_t ledger_epoch(void)
{
	uint64_t e;
	pthread_mutex_lock(&lg_lock);
	e = lg_epoch;
	pthread_mutex_unlock(&lg_lock);
	return e;
}

int ledger_tracked(uint64_t v)
{
	int hit;
	if (!v)
		return 0;
	pthread_mutex_lock(&lg_lock);
	hit = ledger_find_locked(v) >= 0;
	pthread_mutex_unlock(&lg_lock);
	return hit;
}

uint64_t ledger_base(uint64_t v)
{
	uint64_t b = 0;
	if (!v)
		return 0;
	pthread_mutex_lock(&lg_lock);
	long i = ledger_find_locked(v);
	if (i >= 0)
		b = rg[i].base;
	pthread_mutex_unlock(&lg_lock);
	return b;
}

static int ledger_kind_host(int kind)
{
	return kind == LG_PINNED || kind == LG_REGISTERED;
}

/* First reference of x into [lo, lo+size), or NULL; *n counts them. */
static const struct lg_ref *ledger_refs_in(const struct lg_exec *x, uint64_t lo, uint64_t size, int *n)
{
	size_t a = 0, b = x->nrefs;
	const struct lg_ref *first = NULL;
	*n = 0;
	while (a < b) {
		size_t mid = (a + b) / 2;
		if (x->refs[mid].val < lo)
			a = mid + 1;
		else
			b = mid;
	}
	for (; a < x->nrefs && x->refs[a].val - lo < size; a++) {
		if (!first)
			first = &x->refs[a];
		(*n)++;
	}
	return first;
}

static void ledger_stale_mark_locked(struct lg_exec *x)
{
	if (x->stale)
		return;
	x->stale = 1;
	model_epoch_bump();
	for (int i = 0; i < STALE_MAX; i++) {
		uintptr_t z = 0;
		if (atomic_compare_exchange_strong(&stale_tab[i], &z, (uintptr_t)x->e)) {
			atomic_fetch_add_explicit(&ledger_stale_n, 1, memory_order_release);
			return;
		}
	}
	/* table full: every launch takes the slow path, which finds it by lock */
	atomic_fetch_add_explicit(&ledger_stale_n, 1, memory_order_release);
}

static CG_HOT void ledger_stale_clear_locked(struct lg_exec *x)
{
	if (!x->stale)
		return;
	x->stale = 0;
	model_epoch_bump();
	x->launch_said = 0;
	for (int i = 0; i < STALE_MAX; i++) {
		uintptr_t v = (uintptr_t)x->e;
		if (atomic_compare_exchange_strong(&stale_tab[i], &v, 0))
			break;
	}
	atomic_fetch_sub_explicit(&ledger_stale_n, 1, memory_order_release);
}

static void ledger_fill(struct cg_stale *s, const struct lg_exec *x, const struct lg_ref *ref, const struct lg_range *r,
			int nrefs)
{
	memset(s, 0, sizeof *s);
	s->e = x->e;
	s->g = x->g;
	s->capture = x->capture;
	s->exec_site = x->exec_site;
	s->capture_site = x->capture_site;
	s->node = ref->node;
	s->kernel = ref->kernel;
	s->param = ref->param;
	s->what = ref->what;
	s->embedded = ref->embedded;
	s->val = ref->val;
	s->base = r->base;
	s->size = r->size;
	s->kind = r->kind;
	s->alloc_site = r->site;
	s->nrefs = nrefs;
}

/* The last exec found or made (lg_lock): an update's and a destroy's
 * lookups are of the exec the step works on, and a hit reads one line of
 * it where the table read its header, a bucket and the chain. It goes
 * with its entry (ledger_exec_gone). */
static struct lg_exec *lg_last;

static CG_HOT struct lg_exec *ledger_exec_find_locked(CUgraphExec e)
{
	struct lg_exec *x = lg_last;
	if (x && x->e == e)
		return x;
	x = cg_hidx_find(&execs, e);
	if (x)
		lg_last = x;
	return x;
}

/* The exec a holder entry names, NULL when it is gone or was worked out
 * again since the entry was made. */
static struct lg_exec *ledger_holder_exec_locked(const struct lg_holder *h)
{
	struct lg_exec *x = ledger_exec_find_locked(h->e);
	return x && x->serial == h->serial ? x : NULL;
}

/* x (its current serial) among the holders of range r. A full list first
 * drops its dead entries, and grows only if that freed less than half. */
static void ledger_holder_add_locked(struct lg_range *r, const struct lg_exec *x)
{
	struct lg_holders *h = r->h;
	if (h && h->n && h->v[h->n - 1].e == x->e && h->v[h->n - 1].serial == x->serial)
		return;
	int grow = !h;
	if (h && h->n == h->cap) {
		uint32_t k = 0;
		for (uint32_t i = 0; i < h->n; i++)
			if (ledger_holder_exec_locked(&h->v[i]))
				h->v[k++] = h->v[i];
		h->n = k;
		grow = k > h->cap / 2;
	}
	if (grow) {
		uint32_t nc = h ? 2 * h->cap : 4;
		struct lg_holders *g = realloc(h, sizeof *g + nc * sizeof g->v[0]);
		if (!g)
			return; /* not indexed: a free of r will not name x */
		if (!h)
			g->n = 0;
		g->cap = nc;
		r->h = h = g;
	}
	h->v[h->n].e = x->e;
	h->v[h->n++].serial = x->serial;
}

/* Execs with pointers into gone (a part of a range whose holders are h):
 * marked stale, findings appended, each one's handle and serial in *mk
 * (for ledger_free_site). An exec already stale is said once (until an
 * update reads its nodes again). */
static void ledger_scan_locked(const struct lg_range *gone, const struct lg_holders *h, struct ledger_freed *out,
			       int *nf, int *more)
{
	if (h)
		atomic_fetch_add_explicit(&lg_examined, h->n, memory_order_relaxed);
	for (uint32_t i = 0; h && i < h->n; i++) {
		struct lg_exec *x = ledger_holder_exec_locked(&h->v[i]);
		int n;
		const struct lg_ref *ref = x && !x->stale ? ledger_refs_in(x, gone->base, gone->size, &n) : NULL;
		if (!ref)
			continue;
		ledger_fill(&x->why, x, ref, gone, n);
		ledger_stale_mark_locked(x);
		if (out->n_marked == out->cap_marked) {
			int nc = out->cap_marked ? 2 * out->cap_marked : 16;
			struct lg_holder *m = realloc(out->marked, (size_t)nc * sizeof *m);
			if (m) {
				out->marked = m;
				out->cap_marked = nc;
			}
		}
		if (out->n_marked < out->cap_marked)
			out->marked[out->n_marked++] = h->v[i];
		if (*nf < LEDGER_FOUND)
			ledger_fill(&out->s[(*nf)++], x, ref, gone, n);
		else
			(*more)++;
	}
}

static void ledger_resolve_pending(void);

int ledger_free(uint64_t base, uint64_t size, int host, struct ledger_freed *out)
{
	int nf = 0, more = 0;
	out->base = base, out->size = size, out->n = out->more = 0;
	out->marked = NULL, out->n_marked = out->cap_marked = 0;
	ledger_resolve_pending();
	pthread_mutex_lock(&lg_lock);
	lg_epoch++;
	model_epoch_bump();
	if (!size) {
		/* a free: the range that starts at base */
		long i = ledger_find_locked(base);
		if (i >= 0 && rg[i].base == base && ledger_kind_host(rg[i].kind) == !!host) {
			struct lg_range gone = rg[i];
			memmove(&rg[i], &rg[i + 1], (nrg - (size_t)i - 1) * sizeof *rg);
			nrg--;
			ledger_scan_locked(&gone, gone.h, out, &nf, &more);
			free(gone.h);
		}
	} else {
		/* an unmap: every range overlapping [base, base+size), trimmed
		 * where it reaches out of it (several mappings may go at once) */
		uint64_t end = base + size;
		long i = ledger_find_locked(base);
		size_t k = i >= 0 ? (size_t)i : 0;
		while (k < nrg && rg[k].base < end) {
			struct lg_range *r = &rg[k];
			uint64_t lo = r->base > base ? r->base : base;
			uint64_t hi = r->base + r->size < end ? r->base + r->size : end;
			if (lo >= hi || ledger_kind_host(r->kind) != !!host) {
				k++;
				continue;
			}
			struct lg_range gone = *r;
			struct lg_holders *drop = NULL;
			gone.base = lo;
			gone.size = hi - lo;
			if (lo == r->base && hi == r->base + r->size) {
				drop = r->h;
				memmove(&rg[k], &rg[k + 1], (nrg - k - 1) * sizeof *rg);
				nrg--;
			} else if (lo == r->base) {
				r->size -= hi - r->base;
				r->base = hi;
				k++;
			} else {
				r->size = lo - r->base; /* the tail past end, if any, is dropped too */
				k++;
			}
			ledger_scan_locked(&gone, gone.h, out, &nf, &more);
			free(drop);
		}
	}
	pthread_mutex_unlock(&lg_lock);
	/* a Python interpreter finalizing (pyframes.h): its globals go in no
	 * order; the execs stay stale (CGS019), no CGS018 warning */
	if (!nf || cg_pyframes_finalizing()) {
		free(out->marked); /* no ledger_free_site follows */
		out->marked = NULL, out->n_marked = 0;
		return 0;
	}
	out->n = nf, out->more = more;
	return nf + more;
}

int ledger_remapped(uint64_t base, uint64_t size, struct cg_stale *out, int max)
{
	struct lg_exec *x, *tmp;
	int n = 0;
	if (!atomic_load_explicit(&ledger_stale_n, memory_order_acquire))
		return 0; /* nothing unmapped under a live exec: one load per map */
	pthread_mutex_lock(&lg_lock);
	CG_HIDX_EACH(&execs, x, tmp)
	{
		if (!x->stale || x->why.kind != LG_VMM || x->why.base >= base + size ||
		    base >= x->why.base + x->why.size)
			continue;
		if (n < max)
			out[n] = x->why;
		n++;
	}
	pthread_mutex_unlock(&lg_lock);
	return n;
}

void ledger_free_site(struct ledger_freed *f, uint32_t site)
{
	pthread_mutex_lock(&lg_lock);
	for (int i = 0; i < f->n_marked; i++) {
		struct lg_exec *x = ledger_holder_exec_locked(&f->marked[i]);
		if (x && x->stale && !x->why.free_site && x->why.base >= f->base &&
		    x->why.base - f->base < (f->size ? f->size : 1))
			x->why.free_site = site;
	}
	pthread_mutex_unlock(&lg_lock);
	free(f->marked);
	f->marked = NULL, f->n_marked = 0;
}

static int ledger_ref_cmp(const void *a, const void *b)
{
	const struct lg_ref *x = a, *y = b;
	return x->val < y->val ? -1 : x->val > y->val;
}

/* A new exec in the table, NULL when it cannot be had (the ledger then
 * knows nothing of it: no finding names it). */
static CG_HOT struct lg_exec *ledger_exec_new_locked(CUgraphExec e)
{
	struct lg_exec *x = cg_spare_calloc_head(&exec_spare, sizeof *x, offsetof(struct lg_exec, why));
	if (CG_UNLIKELY(!x))
		return NULL;
	x->e = e;
	cg_hidx_add(&execs, x);
	if (CG_UNLIKELY(cg_table_add_failed(&exec_table))) {
		cg_spare_free(&exec_spare, x, sizeof *x);
		return NULL;
	}
	atomic_fetch_add_explicit(&model_xl.lg_entries, 1, memory_order_relaxed);
	lg_last = x;
	return x;
}

CG_HOT int ledger_exec_known(CUgraphExec e)
{
	int known;
	if (!atomic_load_explicit(&model_xl.lg_entries, memory_order_relaxed))
		return 0; /* a loop of pending execs only: the table is empty */
	pthread_mutex_lock(&lg_lock);
	known = ledger_exec_find_locked(e) != NULL;
	pthread_mutex_unlock(&lg_lock);
	return known;
}

/* A pending entry kept on the model's exec (model_exec_new lg_pending,
 * model-int.h), as ledger_exec_pending would have made it. */
struct lg_pend {
	CUgraphExec e;
	CUgraph g;
	uint64_t capture;
	uint32_t site, csite;
};

/* A resolution in flight (ledger_resolve_pending): an exec's references
 * worked out with no lock held, from the summary the model gives. A
 * destroy of the exec meanwhile (ledger_exec_gone) marks it dead, and what
 * was worked out is dropped, not published: else the ledger kept an entry
 * for the dead handle, and a later free of a range it pointed into named
 * it (CGS018). On the resolver's stack, listed under lg_lock (lg_flights)
 * from before the exec's pending entry is taken from the model (a destroy
 * after the take owes the ledger its ledger_exec_gone: the model's exec
 * held no entry then) until the publish. */
struct lg_flight {
	CUgraphExec e;
	int dead, taken;
	/* a hook's own ledger_exec_set published newer references meanwhile
	 * (an update): these are dropped (else a false CGS018, docs/design.md) */
	int superseded;
	struct lg_pend pend; /* the model's pending entry, when taken */
	struct lg_flight *next;
};
static struct lg_flight *lg_flights;

static void ledger_flight_unlink_locked(struct lg_flight *fl)
{
	struct lg_flight **p = &lg_flights;
	while (*p && *p != fl)
		p = &(*p)->next;
	if (*p)
		*p = fl->next;
}

void ledger_after_fork_child(void)
{
	lg_flights = NULL;
}

/* e's pending entry on the model's exec, taken (the exec's flag cleared):
 * 1 with it in *o, 0 when e has none (one load while no exec has one).
 * Called without lg_lock: the two locks are never held together. */
static int ledger_model_take(CUgraphExec e, struct lg_pend *o)
{
	struct cg_exec *x;
	int got = 0;
	if (!atomic_load_explicit(&model_xl.lg_n, memory_order_relaxed))
		return 0;
	pthread_mutex_lock(&model_gx_lock);
	x = model_exec_find_locked(e);
	if (x && x->lg_pending) {
		x->lg_pending = 0;
		atomic_fetch_sub_explicit(&model_xl.lg_n, 1, memory_order_relaxed);
		*o = (struct lg_pend){e, x->lg_graph, x->lg_capture, x->site, x->lg_csite};
		got = 1;
	}
	pthread_mutex_unlock(&model_gx_lock);
	return got;
}

/* Up to max execs with a pending entry on the model's exec, in the order
 * made (the model's list order, as the ledger's own entries are kept). */
static int ledger_model_pending(struct lg_pend *out, int max)
{
	struct cg_exec *x, *tmp;
	int n = 0;
	pthread_mutex_lock(&model_gx_lock);
	MODEL_EXECS_EACH(x, tmp)
	{
		if (n == max)
			break;
		if (x->lg_pending)
			out[n++] = (struct lg_pend){x->h, x->lg_graph, 0, 0, 0};
	}
	pthread_mutex_unlock(&model_gx_lock);
	return n;
}

/* Whether p is a host operand no host range holds: pageable. */
static int ledger_pageable_locked(uint64_t p)
{
	long i = ledger_find_locked(p);
	return i < 0 || !ledger_kind_host(rg[i].kind);
}

/* Whether summary b's nodes hold the same possible pointers as a's, node
 * for node (kernel parameters that can be addresses, copy and memset
 * operands): then the references worked out from a hold for b (a serving
 * loop's fresh capture with new scalar arguments). */
static int ledger_same_ptrs(const struct cg_summary *a, const struct cg_summary *b)
{
	if (!a->det || !b->det || a->n_det != b->n_det)
		return 0;
	if (a->ptrs && b->ptrs) /* the same comparison, folded (nodes.h) */
		return a->ptrs == b->ptrs;
	for (uint32_t j = 0; j < a->n_det; j++) {
		const struct cg_ndet *x = &a->det[j], *y = &b->det[j];
		if (x->type != y->type || x->node != y->node || x->name != y->name)
			return 0;
		if (x->type == CU_GRAPH_NODE_TYPE_KERNEL) {
			if (x->np != y->np)
				return 0;
			for (uint32_t k = 0; k < x->np; k++)
				if (x->p[k].idx != y->p[k].idx || x->p[k].embedded != y->p[k].embedded ||
				    ((CG_PTRISH(x->p[k].val) || CG_PTRISH(y->p[k].val)) && x->p[k].val != y->p[k].val))
					return 0;
		} else if (x->dst != y->dst || (x->type == CU_GRAPH_NODE_TYPE_MEMCPY && x->src != y->src)) {
			return 0;
		}
	}
	return 1;
}

/* ledger_exec_set; fl: a resolution in flight (ledger_resolve_pending),
 * its pending entry taken already, published only if not dead, and
 * unlisted; NULL for a hook's own call. */
static CG_HOT void ledger_exec_work(CUgraphExec e, CUgraph g, uint32_t exec_site, const struct cg_summary *sum,
				    struct ledger_pageable *out, struct lg_flight *fl)
{
	struct lg_ref *refs = NULL;
	size_t n = 0, cap = 0;
	int npg = 0;
	out->n = 0;
	int origin = 0, mn = 0;
	uint64_t capture = 0;
	uint32_t csite = 0;
	struct cg_summary *old_sum = NULL;
	struct lg_pend pend = {0};
	int taken;
	if (!e)
		return;
	if (!exec_site && sum && !fl) {
		/* An update from the summary the refs came from, with no range
		 * added or freed since (a replay/update loop on one graph):
		 * nothing to work out again. */
		int same;
		pthread_mutex_lock(&lg_lock);
		struct lg_exec *x0 = ledger_exec_find_locked(e);
		same = x0 && x0->epoch == lg_epoch && !x0->stale &&
		       (x0->sum == sum || (x0->sum && ledger_same_ptrs(x0->sum, sum)));
		if (same && x0->sum != sum) { /* the new summary, the refs it gives are the old ones */
			old_sum = x0->sum;
			x0->sum = model_summary_ref((struct cg_summary *)sum);
		}
		pthread_mutex_unlock(&lg_lock);
		if (same) {
			model_summary_free(old_sum);
			return;
		}
	}
	model_graph_info(g, &origin, &capture, &csite, &mn);
	if (fl)
		taken = fl->taken, pend = fl->pend;
	else
		taken = ledger_model_take(e, &pend);
	pthread_mutex_lock(&lg_lock);
	for (struct lg_flight *f = lg_flights; !fl && CG_UNLIKELY(f); f = f->next)
		if (f->e == e)
			f->superseded = 1; /* these references are newer than its */
	for (uint32_t j = 0; sum && sum->det && j < sum->n_det; j++) {
		const struct cg_ndet *d = &sum->det[j];
		uint32_t i = d->node;
		struct lg_ref cand[CG_NODE_MAXP + 2];
		int nc = 0;
		if (d->type == CU_GRAPH_NODE_TYPE_KERNEL) {
			for (uint32_t k = 0; k < d->np; k++)
				cand[nc++] = (struct lg_ref){d->p[k].val, d->name,	i,
							     d->p[k].idx, CG_REF_PARAM, d->p[k].embedded};
		} else if (d->type == CU_GRAPH_NODE_TYPE_MEMCPY) {
			int kind = (int)d->grid[0];
			cand[nc++] = (struct lg_ref){d->dst, NULL, i, -1, CG_REF_DST, 0};
			cand[nc++] = (struct lg_ref){d->src, NULL, i, -1, CG_REF_SRC, 0};
			if ((kind == CG_CPY_H2D || kind == CG_CPY_H2H) && ledger_pageable_locked(d->src) && npg < 8)
				out->c[npg].node = i, out->c[npg].what = CG_REF_SRC, out->c[npg].host = d->src,
				out->c[npg++].bytes = d->bytes;
			if ((kind == CG_CPY_D2H || kind == CG_CPY_H2H) && ledger_pageable_locked(d->dst) && npg < 8)
				out->c[npg].node = i, out->c[npg].what = CG_REF_DST, out->c[npg].host = d->dst,
				out->c[npg++].bytes = d->bytes;
		} else if (d->type == CU_GRAPH_NODE_TYPE_MEMSET) {
			cand[nc++] = (struct lg_ref){d->dst, NULL, i, -1, CG_REF_DST, 0};
		}
		for (int k = 0; k < nc; k++) {
			if (!CG_PTRISH(cand[k].val) || ledger_find_locked(cand[k].val) < 0)
				continue;
			if (n == cap) {
				size_t c2 = cap ? 2 * cap : 16;
				struct lg_ref *r2 = realloc(refs, c2 * sizeof *r2);
				if (!r2)
					break;
				refs = r2;
				cap = c2;
			}
			refs[n++] = cand[k];
		}
	}
	{
		/* Often sorted already (a chain of kernels on one buffer): glibc's
		 * qsort is a merge sort with a malloc'd buffer. */
		size_t k = 1;
		while (k < n && refs[k - 1].val <= refs[k].val)
			k++;
		if (k < n)
			qsort(refs, n, sizeof *refs, ledger_ref_cmp);
	}
	if (fl)
		ledger_flight_unlink_locked(fl);
	struct lg_exec *x = fl && fl->dead ? NULL : ledger_exec_find_locked(e);
	if (!x && (n || taken) && !(fl && fl->dead)) /* a pending entry had one, refs or not */
		x = ledger_exec_new_locked(e);
	if (x && taken && (!fl || !fl->superseded || !x->exec_site)) /* as ledger_exec_pending kept it */
		x->g = pend.g, x->capture = pend.capture, x->exec_site = pend.site, x->capture_site = pend.csite;
	if (x && fl && fl->superseded)
		x = NULL; /* the newer references stand: only the instantiation's identity was owed */
	if (x) {
		if (!x->g)
			x->g = g;
		free(x->refs);
		x->refs = refs;
		x->nrefs = (uint32_t)n;
		x->serial = ++lg_serial; /* the entries of its earlier refs die */
		for (size_t k = 0; k < n; k++) {
			long r = ledger_find_locked(refs[k].val);
			if (r >= 0)
				ledger_holder_add_locked(&rg[r], x);
		}
		if (exec_site) { /* 0: an update, the instantiation's site stays */
			x->g = g;
			x->capture = capture;
			x->exec_site = exec_site;
			x->capture_site = csite;
		}
		ledger_stale_clear_locked(x); /* its nodes were read again just now */
		ledger_pending_clear_locked(x);
		refs = NULL;
		if (x->sum != sum) {
			old_sum = x->sum;
			x->sum = sum ? model_summary_ref((struct cg_summary *)sum) : NULL;
		}
		x->epoch = lg_epoch;
	}
	pthread_mutex_unlock(&lg_lock);
	model_summary_free(old_sum);
	free(refs);
	out->e = e, out->g = g, out->exec_site = exec_site, out->capture_site = csite, out->n = npg;
}

CG_HOT void ledger_exec_set(CUgraphExec e, CUgraph g, uint32_t exec_site, const struct cg_summary *sum,
			    struct ledger_pageable *out)
{
	ledger_exec_work(e, g, exec_site, sum, out, NULL);
}

CG_HOT void ledger_exec_pending(CUgraphExec e, CUgraph g, uint32_t exec_site, uint64_t capture, uint32_t csite)
{
	struct cg_summary *old_sum = NULL;
	struct lg_ref *old_refs = NULL;
	struct lg_exec *x;
	if (!e)
		return;
	pthread_mutex_lock(&lg_lock);
	x = ledger_exec_find_locked(e);
	if (!x)
		x = ledger_exec_new_locked(e);
	if (x) {
		old_refs = x->refs, old_sum = x->sum;
		x->refs = NULL, x->nrefs = 0, x->sum = NULL;
		x->serial = ++lg_serial;
		x->g = g, x->capture = capture, x->exec_site = exec_site, x->capture_site = csite;
		ledger_stale_clear_locked(x);
		if (!x->pending) {
			x->pending = 1;
			atomic_fetch_add_explicit(&lg_pending_n, 1, memory_order_relaxed);
		}
	}
	pthread_mutex_unlock(&lg_lock);
	model_summary_free(old_sum);
	free(old_refs);
}

/* Works out the references of every pending executable, one at a time,
 * with no lock held across the walk (model_exec_summary settles the graph
 * under the model's walk lock: a graph is never walked while a hook
 * changes or destroys it). An exec destroyed meanwhile is simply gone:
 * before its entry is taken (its pending flag gone with it) or, after,
 * by its resolution marked dead (struct lg_flight). */
static void ledger_resolve_pending(void)
{
	int budget = atomic_load_explicit(&lg_pending_n, memory_order_relaxed), n = 0, own;
	long on_model = atomic_load_explicit(&model_xl.lg_n, memory_order_relaxed);
	struct lg_pend *todo;
	struct lg_exec *x, *tmp;
	if (budget < 0)
		budget = 0;
	if (on_model > 0)
		budget += (int)on_model;
	if (budget <= 0)
		return;
	/* one pass over the table for all of them (one pass each was
	 * quadratic in the pending execs) */
	todo = malloc((size_t)budget * sizeof *todo);
	if (!todo)
		return;
	pthread_mutex_lock(&lg_lock);
	CG_HIDX_EACH(&execs, x, tmp)
	{
		if (n == budget)
			break;
		if (x->pending)
			todo[n++] = (struct lg_pend){x->e, x->g, 0, 0, 0};
	}
	pthread_mutex_unlock(&lg_lock);
	own = n; /* then those kept on the model's execs */
	if (n < budget)
		n += ledger_model_pending(todo + n, budget - n);
	for (int i = 0; i < n; i++) {
		struct lg_flight fl = {.e = todo[i].e};
		struct cg_summary *full;
		struct ledger_pageable pg;
		int still = 1;
		pthread_mutex_lock(&lg_lock);
		if (i < own) {
			x = ledger_exec_find_locked(fl.e);
			still = x && x->pending; /* worked out or gone meanwhile */
		}
		if (still)
			fl.next = lg_flights, lg_flights = &fl;
		pthread_mutex_unlock(&lg_lock);
		if (still && i >= own) /* taken now, listed already: a destroy from here on marks fl */
			still = fl.taken = ledger_model_take(fl.e, &fl.pend);
		if (!still) {
			if (i >= own) {
				pthread_mutex_lock(&lg_lock);
				ledger_flight_unlink_locked(&fl);
				pthread_mutex_unlock(&lg_lock);
			}
			continue;
		}
		full = model_exec_summary(fl.e);
		/* no copies: never pending; no summary to be had: no
		 * references, the entry no longer pending all the same */
		ledger_exec_work(fl.e, todo[i].g, 0, full, &pg, &fl);
		model_summary_free(full);
	}
	free(todo);
}

CG_HOT void ledger_exec_gone(CUgraphExec e)
{
	struct lg_exec *x;
	pthread_mutex_lock(&lg_lock);
	for (struct lg_flight *fl = lg_flights; CG_UNLIKELY(fl); fl = fl->next)
		if (fl->e == e)
			fl->dead = 1; /* its references are dropped at the publish */
	x = ledger_exec_find_locked(e);
	if (x) {
		cg_hidx_del(&execs, x);
		atomic_fetch_sub_explicit(&model_xl.lg_entries, 1, memory_order_relaxed);
		if (lg_last == x)
			lg_last = NULL;
		ledger_stale_clear_locked(x);
		ledger_pending_clear_locked(x);
	}
	pthread_mutex_unlock(&lg_lock);
	if (x) {
		model_summary_free(x->sum);
		free(x->refs);
		cg_spare_free(&exec_spare, x, sizeof *x);
	}
}

int ledger_launch_slow(CUgraphExec e, struct cg_stale *why, int *first)
{
	int hit = 0;
	for (int i = 0; i < STALE_MAX && !hit; i++)
		hit = atomic_load_explicit(&stale_tab[i], memory_order_relaxed) == (uintptr_t)e;
	if (!hit && atomic_load_explicit(&ledger_stale_n, memory_order_relaxed) <= STALE_MAX)
		return 0;
	pthread_mutex_lock(&lg_lock);
	struct lg_exec *x = ledger_exec_find_locked(e);
	if (x && x->stale) {
		hit = 1;
		*first = !x->launch_said;
		x->launch_said = 1;
		*why = x->why;
	} else {
		hit = 0;
	}
	pthread_mutex_unlock(&lg_lock);
	return hit;
}
