/* shim/unwind.c -- call-site unwinding (x86-64, aarch64) with a
 * per-return-address rule cache.
 *
 * A frame's rule comes from the module's .eh_frame (unwind-cfi.c), worked
 * out the first time that return address is seen: CFA = sp or the frame
 * pointer (%rbp; x29, the frame record's) plus an offset, the return
 * address and the saved frame pointer at CFA offsets. On aarch64 a
 * function that keeps a frame record is followed through it (CFA = x29 +
 * k, x29 and x30 read from the record), code built without frame records
 * through its sp-based rule. Anything else answers -1 and the caller falls
 * back to the generic unwinder, so the result is never a guess. The
 * architecture's part: unwind-int.h, and the entry points below.
 *
 * Cache: 4-way set-associative slots {pc, module, rule}. Readers take no lock (the
 * pc is read before and after the rest, seqlock style); one filler at a
 * time under a try-lock (never waits: a busy filler means this rule is just
 * not kept), so a fork or a signal mid-fill cannot deadlock anything. The
 * module identity (link map and load address) is checked on every hit, so
 * code unloaded and replaced at the same address is not read with stale
 * rules.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <link.h>
#include <sys/mman.h>
#include <unistd.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

#include "hot.h"
#include "locks.h"
#include "stack.h"
#include "thread.h"
#include "unwind-int.h"
#include "unwind.h"

#define SLOTS 4096

struct slot {
	_Atomic uintptr_t pc;
	_Atomic uintptr_t mod;
	_Atomic uint64_t rule;
};

static struct slot cache[SLOTS];
/* The cache is 4-way set associative: a direct-mapped one let two return
 * addresses used in turn evict each other (PyTorch's capture loop: the
 * begin's walk found a cold frame every other capture, issue 19). */
#define WAYS 4
#define SETS (SLOTS / WAYS)
static _Atomic unsigned char victim[SETS]; /* next way to replace, round robin */

static unsigned set_of(uintptr_t pc)
{
	uint64_t x = (uint64_t)pc * 0x9E3779B97F4A7C15ull;
	return (unsigned)(x >> 40) & (SETS - 1);
}

/* A module's identity in a slot: its link map and load address. */
static uintptr_t mod_of(const struct dl_find_object *fo)
{
	return (uintptr_t)fo->dlfo_link_map ^ (uintptr_t)fo->dlfo_map_start;
}

/* The cached rule for pc, or 0. */
static uint64_t rule_cached(uintptr_t pc, const struct dl_find_object *fo)
{
	uintptr_t mod = mod_of(fo);
	struct slot *set = &cache[set_of(pc) * WAYS];
	for (int w = 0; w < WAYS; w++) {
		struct slot *s = &set[w];
		if (atomic_load_explicit(&s->pc, memory_order_acquire) == pc) {
			uintptr_t m = atomic_load_explicit(&s->mod, memory_order_relaxed);
			uint64_t rule = atomic_load_explicit(&s->rule, memory_order_relaxed);
			atomic_thread_fence(memory_order_acquire);
			if (atomic_load_explicit(&s->pc, memory_order_relaxed) == pc && m == mod && rule)
				return rule;
		}
	}
	return 0;
}

static uint64_t rule_for(uintptr_t pc, const struct dl_find_object *fo)
{
	uint64_t rule = rule_cached(pc, fo);
	uintptr_t mod = mod_of(fo);
	unsigned set = set_of(pc);
	if (rule)
		return rule;
	rule = cg_unwind_rule(pc, fo);
	if (pthread_mutex_trylock(&fill_lock) == 0) {
		/* an empty way, else the set's next victim */
		struct slot *s = NULL;
		for (int w = 0; w < WAYS && !s; w++)
			if (!atomic_load_explicit(&cache[set * WAYS + w].pc, memory_order_relaxed))
				s = &cache[set * WAYS + w];
		if (!s)
			s = &cache[set * WAYS +
				   (atomic_fetch_add_explicit(&victim[set], 1, memory_order_relaxed) % WAYS)];
		atomic_store_explicit(&s->pc, 0, memory_order_relaxed);
		atomic_thread_fence(memory_order_release);
		atomic_store_explicit(&s->mod, mod, memory_order_relaxed);
		atomic_store_explicit(&s->rule, rule, memory_order_relaxed);
		atomic_store_explicit(&s->pc, pc, memory_order_release);
		pthread_mutex_unlock(&fill_lock);
	}
	return rule;
}

/* ---- the walk ------------------------------------------------------------ */

/* A walk's registers, and where it reads the stack: [base, base + len) of
 * the live stack (the thread's known stack), or of a copy (copy != NULL:
 * cg_unwind_finish, or a stack outside the thread's known one). */
struct walk {
	uintptr_t sp, bp, pc;
	const unsigned char *copy;
	uintptr_t base;
	size_t len;
	struct memo_rec *rec; /* a live walk's stack reads are kept here (memo below) */
};

/* The walk memo. A live walk is a function of its start (sp, bp, pc) and
 * of the stack words it reads (return addresses, saved %rbp): the rules
 * depend on the return addresses only. Each thread keeps its last
 * MEMO_WAYS complete walks with the words they read; a walk from the same
 * start that finds every one of those words unchanged is the same walk,
 * and its frames are copied without a module lookup or a rule (a capture
 * loop's begin, allocation and instantiation sites: ~1,500 instructions a
 * site on the stand-in, and cache misses on the GPU host, where the
 * driver's work between two hooks evicts the rule cache). The words read
 * lie between the start's sp and the stack's top, mapped while the
 * thread lives. Per thread, malloc'd at the first walk and freed at the
 * thread's exit (none where glibc has no _dl_find_object: no walk runs).
 * Laid out for a lookup that starts with cold caches (issue 36: in a
 * capture loop that shares its core the other processes' turns evict them,
 * and each line touched is a miss): the ways' starts share one line, read
 * first; a way's other fields, its words (address beside value) and its
 * frames follow one another, so a hit reads ~4 lines of the block. */
#define MEMO_WAYS 4
#define MEMO_WORDS 128
struct memo_word {
	uintptr_t addr, val;
};
struct memo {
	uintptr_t bp;
	uint64_t mask;
	int max, n, nw;
	int bp_used; /* a CFA came from the start's %rbp (else any %rbp will do) */
	/* The caller's value for this walk (cg_unwind_tag): GV_GEN the way's
	 * generation (one more at each walk kept here), GV_TAG the tag the
	 * value was made for, GV_VAL the value (0 none). One word, set by a
	 * compare-and-swap from the generation the setter found with no value
	 * yet: a value is only ever kept with the walk and the tag it was
	 * made from (a signal handler's walk kept here meanwhile, or its value
	 * set first, makes the swap fail). */
	_Atomic uint64_t gv;
	struct memo_word w[MEMO_WORDS];
	void *pcs[64];
} __attribute__((aligned(64))); /* each way's header on a line of its own */
/* The walk being recorded. bp_src: where %rbp came from (-1: the start,
 * else the read at that index); need: which reads the walk depends on
 * (every return address; a saved %rbp only when a CFA comes from it: a
 * register the code uses for data is saved with other values every call). */
struct memo_rec {
	uintptr_t sp, bp, pc;
	int nw, bp_used, bp_src;
	unsigned char need[MEMO_WORDS];
	struct memo_word w[MEMO_WORDS];
};
struct memos {
	struct {
		uintptr_t pc, sp;
	} start[MEMO_WAYS] __attribute__((aligned(64))); /* way k's start (with its bp) */
	uintptr_t lo, hi; /* the thread's known stack (cg_stack_bounds); hi 0: not known yet */
	unsigned next;
	struct memo way[MEMO_WAYS] __attribute__((aligned(64)));
	struct memo_rec rec;
};

/* A stack word at a, from [base, base + len): the thread's own stack (a
 * live walk, mapped while the thread lives) or the copy. An address
 * outside ends the walk: a fiber's stack without a terminating frame is
 * never read past its top (issue 30). */
static int stack_word(struct walk *w, uintptr_t a, uintptr_t *v)
{
	if (a < w->base || a - w->base + sizeof *v > w->len)
		return -1;
	if (w->copy) {
		memcpy(v, w->copy + (a - w->base), sizeof *v);
		return 0;
	}
	*v = *(const uintptr_t *)a;
	if (w->rec) {
		if (w->rec->nw < MEMO_WORDS) {
			w->rec->w[w->rec->nw].addr = a;
			w->rec->w[w->rec->nw].val = *v;
			w->rec->need[w->rec->nw] = 1;
		}
		w->rec->nw++; /* past MEMO_WORDS: not kept */
	}
	return 0;
}

#define WALK_HARD (-1) /* a frame this unwinder does not follow */
#define WALK_COLD (-2) /* stopped at a frame whose rule is not cached (cold == 0) */
#define WALK_OFF (-3)  /* the start lies outside the thread's known stack (walk_live) */

/* Frames from w on into pcs[*np..max), *np updated; *mask gets bit i for
 * a CUDA frame. cold: work out rules not cached; else stop before the
 * first such frame, w then holding its registers. Returns 0 or WALK_*. */
static int walk(struct walk *w, void **pcs, int *np, int max, uint64_t *mask, int cold)
{
	int n = *np, st = 0;
	while (n < max && w->pc > 4096) {
		struct dl_find_object fo;
		uint64_t rule;
		uintptr_t cfa, next, sp = w->sp, bp = w->bp, pc = w->pc;
		if (_dl_find_object((void *)(pc - 1), &fo) != 0) {
			pcs[n++] = (void *)pc; /* not in any module (JIT code): the last frame, as libgcc has it */
			break;
		}
		rule = cold ? rule_for(pc - 1, &fo) : rule_cached(pc - 1, &fo);
		if (!rule || (rule & R_HARD)) {
			st = rule ? WALK_HARD : WALK_COLD;
			break;
		}
		pcs[n] = (void *)pc;
		if (rule & R_CUDA)
			*mask |= 1ull << n;
		n++;
		if (rule & R_STOP)
			break;
		if ((rule & R_CFA_FP) && w->rec) { /* the memo must match where %rbp came from */
			if (w->rec->bp_src < 0)
				w->rec->bp_used = 1;
			else
				w->rec->need[w->rec->bp_src] = 1;
		}
		cfa = ((rule & R_CFA_FP) ? bp : sp) + (uintptr_t)(int64_t)(int32_t)(uint32_t)rule;
		/* Frames only go up the stack, by sane amounts. */
		if (cfa <= sp || cfa - sp > (64u << 20) || (cfa & 7) || stack_word(w, cfa + CG_RA_OFF(rule), &next))
			break;
		if ((rule & R_FP_SAVED) && stack_word(w, cfa + (intptr_t)(int16_t)(uint16_t)(rule >> 48), &w->bp))
			break;
		if ((rule & R_FP_SAVED) && w->rec && w->rec->nw <= MEMO_WORDS) {
			w->rec->bp_src = w->rec->nw - 1;
			w->rec->need[w->rec->bp_src] = 0;
		}
		w->sp = cfa;
		w->pc = cg_unwind_ra(next);
	}
	*np = n;
	return st;
}

static struct cg_thread_kind memo_kind;
/* The block's pointer, and the thread's counts for tests beside it (one
 * line of the thread's TLS, read by every walk: a global counter cost a
 * shared line written at every site). */
static __thread __attribute__((tls_model("initial-exec"))) struct {
	void *blk;
	unsigned long hits, tag_hits;
} memo_tls;

unsigned long cg_unwind_memo_hits(void)
{
	return memo_tls.hits;
}

unsigned long cg_unwind_tag_hits(void)
{
	return memo_tls.tag_hits;
}

static struct memos *memos_align(void *p)
{
	return p ? (struct memos *)(((uintptr_t)p + 63) & ~(uintptr_t)63) : NULL;
}

/* The thread's block, its start rounded up to a cache line. NULL without
 * _dl_find_object (glibc < 2.35): no walk runs, and a way is kept only by
 * a walk, so a block would never be used (asked only while there is none:
 * off a steady site's path). */
static struct memos *memos_get(void)
{
	void *p = __builtin_expect(memo_tls.blk != NULL, 1) ? memo_tls.blk
		  : _dl_find_object ? cg_thread_block(&memo_kind, &memo_tls.blk, sizeof(struct memos) + 63)
				    : NULL;
	return memos_align(p);
}

/* A walk from (sp, bp, pc) that the memo answers: frames into pcs, *np
 * and *mask set, or (t asking a tag the way has a value for) t->val
 * alone. Else 0. */
/* Whether every word m read still holds its value (two a turn: the
 * comparison is most of a steady site's instructions). */
static inline __attribute__((always_inline)) int memo_words_same(const struct memo *m)
{
	const struct memo_word *p = m->w, *end = m->w + m->nw;
	for (; end - p >= 2; p += 2)
		if (((*(const uintptr_t *)p[0].addr ^ p[0].val) | (*(const uintptr_t *)p[1].addr ^ p[1].val)) != 0)
			return 0;
	return p == end || *(const uintptr_t *)p->addr == p->val;
}

#define GV_GEN(gv) ((unsigned)((gv) >> 44))
#define GV_TAG(gv) ((unsigned)((gv) >> 32) & CG_UNWIND_TAG_MAX)
#define GV_VAL(gv) ((uint32_t)(gv))
#define GV(gen, tag, val) ((uint64_t)((gen)&0xfffffu) << 44 | (uint64_t)(tag) << 32 | (val))

static inline __attribute__((always_inline)) int memo_answer(struct memos *ms, uintptr_t sp, uintptr_t bp, uintptr_t pc,
							     void **pcs, int *np, int max, uint64_t *mask,
							     struct cg_unwind_tag *t)
{
	if (!ms)
		return 0;
	for (int k = 0; k < MEMO_WAYS; k++) {
		const struct memo *m = &ms->way[k];
		uint64_t gv;
		if (ms->start[k].pc != pc || ms->start[k].sp != sp)
			continue;
		gv = atomic_load_explicit(&m->gv, memory_order_relaxed);
		if ((m->bp_used && m->bp != bp) || m->max != max || !m->n || !memo_words_same(m))
			continue;
		if (t) {
			atomic_signal_fence(memory_order_seq_cst);
			if (atomic_load_explicit(&m->gv, memory_order_relaxed) != gv)
				continue; /* a signal handler's walk was kept here meanwhile */
			if (t->tag && GV_TAG(gv) == t->tag && GV_VAL(gv)) {
				t->val = GV_VAL(gv);
				memo_tls.tag_hits++;
				return 1;
			}
			t->way = (unsigned)k + 1;
			t->gen = GV_GEN(gv);
		}
		memcpy(pcs, m->pcs, (size_t)m->n * sizeof *pcs);
		*np = m->n;
		*mask = m->mask;
		memo_tls.hits++;
		return 1;
	}
	return 0;
}

/* A walk recorded from its start to the end (st 0) is kept (with t's tag,
 * and its place in t). */
static void memo_keep(struct memos *ms, struct walk *w, void **pcs, int n, int max, uint64_t mask,
		      struct cg_unwind_tag *t)
{
	struct memo *m;
	unsigned k, gen;
	if (!w->rec || w->rec->nw > MEMO_WORDS || n <= 0 || n > 64)
		return;
	k = ms->next++ % MEMO_WAYS;
	m = &ms->way[k];
	m->n = 0; /* a signal handler's walk in between sees no half-written way */
	gen = (GV_GEN(atomic_load_explicit(&m->gv, memory_order_relaxed)) + 1) & 0xfffffu;
	atomic_store_explicit(&m->gv, GV(gen, 0, 0), memory_order_relaxed); /* no value, a new generation */
	atomic_signal_fence(memory_order_seq_cst);
	m->nw = 0;
	for (int i = 0; i < ms->rec.nw; i++)
		if (ms->rec.need[i])
			m->w[m->nw++] = ms->rec.w[i];
	memcpy(m->pcs, pcs, (size_t)n * sizeof *pcs);
	ms->start[k].sp = ms->rec.sp, m->bp = ms->rec.bp, ms->start[k].pc = ms->rec.pc;
	m->bp_used = ms->rec.bp_used;
	m->max = max;
	m->mask = mask;
	atomic_signal_fence(memory_order_seq_cst);
	m->n = n;
	if (t)
		t->way = k + 1, t->gen = gen;
}

void cg_unwind_tag_set(const struct cg_unwind_tag *t, uint32_t val)
{
	struct memos *ms = memos_align(memo_tls.blk);
	struct memo *m;
	uint64_t old;
	if (!ms || !t || !t->tag || t->tag > CG_UNWIND_TAG_MAX || !val || !t->way || t->way > MEMO_WAYS)
		return;
	m = &ms->way[t->way - 1];
	old = atomic_load_explicit(&m->gv, memory_order_relaxed);
	if (GV_GEN(old) != t->gen || GV_VAL(old))
		return;
	/* fails if the way was kept again, or given a value, since the load */
	(void)atomic_compare_exchange_strong_explicit(&m->gv, &old, GV(t->gen, t->tag, val), memory_order_relaxed,
						      memory_order_relaxed);
}

/* Where a live walk from w's start may read. Inside the thread's known
 * stack, the live words from there to the stack's top (returns 1; the
 * bounds are kept in the thread's memo block: two compares). Else (a fiber, a coroutine, a signal stack, bounds
 * unknown) returns 0: the walk reads a copy made through cg_stack_copy,
 * which cannot fault, and a frame it does not follow ends it there (the
 * generic unwinder would read the live stack without bounds). */
static __attribute__((noinline)) int walk_bounded_learn(struct memos *ms, struct walk *w)
{
	uintptr_t lo, hi;
	if (!cg_stack_bounds(&lo, &hi))
		return 0;
	if (ms)
		ms->lo = lo, ms->hi = hi;
	if (w->sp < lo || w->sp >= hi)
		return 0;
	w->base = lo;
	w->len = hi - lo;
	return 1;
}

static inline __attribute__((always_inline)) int walk_bounded(struct memos *ms, struct walk *w)
{
	if (__builtin_expect(!ms || !ms->hi, 0))
		return walk_bounded_learn(ms, w);
	if (w->sp < ms->lo || w->sp >= ms->hi)
		return 0;
	w->base = ms->lo;
	w->len = ms->hi - ms->lo;
	return 1;
}

/* walk() of the live stack, recorded for the memo (with memos), or
 * WALK_OFF. The memo was asked before (unwind_from), before the bounds
 * are looked at: it was recorded by a bounded walk of this thread from the
 * same sp, so its words lie in the same stack. */
static int walk_live(struct memos *ms, struct walk *w, void **pcs, int *np, int max, uint64_t *mask, int cold,
		     struct cg_unwind_tag *t)
{
	int st;
	if (ms) {
		ms->rec.sp = w->sp, ms->rec.bp = w->bp, ms->rec.pc = w->pc;
		ms->rec.nw = ms->rec.bp_used = 0;
		ms->rec.bp_src = -1;
		w->rec = &ms->rec;
	}
	if (!walk_bounded(ms, w)) {
		w->rec = NULL;
		return WALK_OFF;
	}
	st = walk(w, pcs, np, max, mask, cold);
	if (!st)
		memo_keep(ms, w, pcs, *np, max, *mask, t);
	w->rec = NULL;
	return st;
}

/* One copy buffer kept ready, its pages touched (cg_unwind_spare_fill, from
 * the warm-up): the first deferred walk of the process takes it instead of
 * a malloc of 16 KiB whose pages fault in the begin hook. */
static _Atomic(struct cg_unwind_rest *) spare;

void cg_unwind_spare_fill(void)
{
	struct cg_unwind_rest *r;
	if (atomic_load_explicit(&spare, memory_order_relaxed))
		return;
	r = malloc(sizeof *r);
	if (!r)
		return;
	memset(r, 0, sizeof *r);
	r = atomic_exchange(&spare, r);
	free(r);
}

void cg_unwind_rest_free(struct cg_unwind_rest *r)
{
	struct cg_unwind_rest *none = NULL;
	if (r && !atomic_compare_exchange_strong(&spare, &none, r))
		free(r);
}

/* The spare, else a new copy buffer (NULL without memory); errno kept. */
static struct cg_unwind_rest *rest_get(void)
{
	struct cg_unwind_rest *r = atomic_exchange(&spare, NULL);
	int saved = errno;
	if (!r)
		r = malloc(sizeof *r);
	errno = saved;
	return r;
}

/* The registers of w's frame, where a deferred walk goes on. */
static void rest_at(struct cg_unwind_rest *r, const struct walk *w)
{
	r->pc = w->pc;
	r->sp = w->sp;
	r->bp = w->bp;
}

/* Copy the stack from w's sp up (cg_stack_copy: never past the thread's
 * stack top or the last mapped page) into r, and point w at the copy. */
static void walk_copy(struct walk *w, struct cg_unwind_rest *r)
{
	int saved = errno;
	r->base = w->sp;
	r->len = cg_stack_copy(r->stack, w->sp, sizeof r->stack);
	errno = saved;
	w->copy = r->stack;
	w->base = r->base;
	w->len = r->len;
}

/* cg_unwind and cg_unwind_warm on a stack outside the thread's known one:
 * the walk over a copy. *rest (warm only: rest != NULL) keeps the copy at
 * a cold frame. Returns the count. */
static __attribute__((noinline, cold)) int walk_off_stack(struct walk *w, void **pcs, int max, uint64_t *mask,
							  struct cg_unwind_rest **rest)
{
	struct cg_unwind_rest *r = rest_get();
	int n = 0, st;
	if (!r)
		return 0; /* no frames rather than an unbounded read */
	walk_copy(w, r);
	st = walk(w, pcs, &n, max, mask, !rest);
	if (st == WALK_COLD && rest) {
		rest_at(r, w);
		*rest = r;
		return n;
	}
	cg_unwind_rest_free(r);
	return n;
}

/* cg_unwind's walk when the memo did not answer. */
static __attribute__((noinline)) int unwind_walk(struct memos *ms, uintptr_t sp, uintptr_t bp, uintptr_t pc, void **pcs,
						 int max, uint64_t *cuda, struct cg_unwind_tag *t)
{
	struct walk w0 = {sp, bp, pc, NULL, 0, 0, NULL}, *w = &w0;
	uint64_t mask = 0;
	int n = 0, st = walk_live(ms, w, pcs, &n, max, &mask, 1, t);
	if (st == WALK_OFF)
		n = walk_off_stack(w, pcs, max, &mask, NULL);
	else if (st)
		return -1;
	if (cuda)
		*cuda = mask;
	return n;
}

/* cg_unwind_warm's walk when the memo did not answer. */
static __attribute__((noinline)) int unwind_warm_walk(struct memos *ms, uintptr_t sp, uintptr_t bp, uintptr_t pc,
						      void **pcs, int max, uint64_t *cuda, struct cg_unwind_rest **rest,
						      struct cg_unwind_tag *t)
{
	struct walk w0 = {sp, bp, pc, NULL, 0, 0, NULL}, *w = &w0;
	uint64_t mask = 0;
	int n = 0, st = walk_live(ms, w, pcs, &n, max, &mask, 0, t);
	if (st == WALK_OFF) {
		n = walk_off_stack(w, pcs, max, &mask, rest);
	} else {
		if (st == WALK_HARD)
			return -1;
		if (st == WALK_COLD) {
			struct cg_unwind_rest *r = rest_get();
			if (!r)
				return -1;
			rest_at(r, w);
			walk_copy(w, r);
			*rest = r;
		}
	}
	if (cuda)
		*cuda = mask;
	return n;
}

/* The walks from (sp, bp, pc), the state of the entry point's caller
 * (pcs[0] is the return address into it): the memo first, with nothing
 * written on the way (a steady site's whole path), then the walk (rest:
 * cg_unwind_warm's). */
static inline __attribute__((always_inline)) int unwind_from(uintptr_t sp, uintptr_t bp, uintptr_t pc, void **pcs,
							     int max, uint64_t *cuda, struct cg_unwind_rest **rest,
							     struct cg_unwind_tag *t)
{
	struct memos *ms;
	uint64_t mask = 0;
	int n = 0;
	if (rest)
		*rest = NULL;
	if (t)
		t->val = 0, t->way = 0;
	if (max > 64)
		return -1;
	ms = memos_get();
	/* a way is kept only by a walk, which needed _dl_find_object: asked
	 * after (its GOT line is off a steady site's path, issue 36) */
	if (memo_answer(ms, sp, bp, pc, pcs, &n, max, &mask, t)) {
		if (cuda)
			*cuda = mask;
		return n; /* 0 with t->val */
	}
	if (!_dl_find_object)
		return -1;
	return rest ? unwind_warm_walk(ms, sp, bp, pc, pcs, max, cuda, rest, t)
		    : unwind_walk(ms, sp, bp, pc, pcs, max, cuda, t);
}

/* The entry points: the caller's registers, exactly. */
#if defined(__x86_64__)
CG_HOT __attribute__((noinline)) int cg_unwind(void **pcs, int max, uint64_t *cuda, struct cg_unwind_tag *t)
{
	/* This function keeps a frame pointer (__builtin_frame_address(0)
	 * makes GCC and Clang set one up): its caller's state is exact. */
	uintptr_t *fp = __builtin_frame_address(0);
	return unwind_from((uintptr_t)(fp + 2), fp[0], fp[1], pcs, max, cuda, NULL, t);
}

CG_HOT __attribute__((noinline)) int cg_unwind_warm(void **pcs, int max, uint64_t *cuda, struct cg_unwind_rest **rest,
						    struct cg_unwind_tag *t)
{
	uintptr_t *fp = __builtin_frame_address(0);
	return unwind_from((uintptr_t)(fp + 2), fp[0], fp[1], pcs, max, cuda, rest, t);
}
#elif defined(__aarch64__)
/* A C function's own frame does not say where its caller's sp was (the
 * frame record may sit anywhere in the frame): cg_unwind and
 * cg_unwind_warm are two-instruction stubs that pass on sp, x29 and x30 as
 * they are at the call (a BL pushes nothing: they are the caller's state
 * after the return) and branch to the C part, which returns to the
 * caller. x30 is not signed yet (that is the callee's prologue). */
__attribute__((visibility("hidden"))) int cg_unwind_at(void **pcs, int max, uint64_t *cuda, struct cg_unwind_tag *t,
						       uintptr_t sp, uintptr_t fp, uintptr_t pc);
__attribute__((visibility("hidden"))) int cg_unwind_warm_at(void **pcs, int max, uint64_t *cuda,
							    struct cg_unwind_rest **rest, struct cg_unwind_tag *t,
							    uintptr_t sp, uintptr_t fp, uintptr_t pc);

int cg_unwind_at(void **pcs, int max, uint64_t *cuda, struct cg_unwind_tag *t, uintptr_t sp, uintptr_t fp, uintptr_t pc)
{
	return unwind_from(sp, fp, pc, pcs, max, cuda, NULL, t);
}

int cg_unwind_warm_at(void **pcs, int max, uint64_t *cuda, struct cg_unwind_rest **rest, struct cg_unwind_tag *t,
		      uintptr_t sp, uintptr_t fp, uintptr_t pc)
{
	return unwind_from(sp, fp, pc, pcs, max, cuda, rest, t);
}

#define CG_UNWIND_STUB(name, r_sp, r_fp, r_pc, target)                                                                 \
	__asm__(".pushsection .text\n\t.p2align 2\n\t.globl " #name "\n\t.hidden " #name "\n\t.type " #name            \
		", %function\n" #name ":\n\t.cfi_startproc\n\thint #34\n\tmov " #r_sp ", sp\n\tmov " #r_fp             \
		", x29\n\tmov " #r_pc ", x30\n\tb " #target "\n\t.cfi_endproc\n\t.size " #name ", .-" #name            \
		"\n\t.popsection")
CG_UNWIND_STUB(cg_unwind, x4, x5, x6, cg_unwind_at);
CG_UNWIND_STUB(cg_unwind_warm, x5, x6, x7, cg_unwind_warm_at);
#else
#error "cgshim: unwind.c's entry points know x86_64 and aarch64"
#endif

int cg_unwind_finish(struct cg_unwind_rest *r, void **pcs, int n, int max, uint64_t *cuda)
{
	struct walk w = {r->sp, r->bp, r->pc, r->stack, r->base, r->len, NULL};
	uint64_t mask = cuda ? *cuda : 0;
	if (!_dl_find_object || max > 64 || n >= max)
		return n;
	/* A frame the fast rules do not follow ends the site there: there is
	 * no generic unwinder for a copy. */
	(void)walk(&w, pcs, &n, max, &mask, 1);
	if (cuda)
		*cuda = mask;
	return n;
}
