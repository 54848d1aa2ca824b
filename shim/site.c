/* shim/site.c -- interned call sites (native frames + Python frames). */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <errno.h>
#include <link.h>
#include <execinfo.h>
#include <sys/uio.h>
#include <unistd.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "config.h"
#include "hot.h"
#include "locks.h"
#include "resolve.h"
#include "module.h"
#include "pyframes.h"
#include "site.h"
#include "table.h"
#include "thread.h"
#include "unwind.h"

struct site_key {
	void *pc[CG_BT_MAX];
	unsigned char n;
	char py[CG_PY_MAX];
};

/* A site whose native walk stopped at a cold frame (cg_site_here_deferred):
 * the frames so far, where to go on from, and the walk's parameters. */
struct site_pend {
	struct cg_unwind_rest *rest;
	void *pcs[CG_BT_MAX + 8];
	int n, want, skip;
	uint64_t cuda;
};

struct site_ent {
	struct site_key key;
	unsigned char *kb; /* compact lookup key: used pcs, then the Python text */
	size_t klen;
	uint32_t id;
	/* pend: not yet interned (key.py only), settled on first use; alias:
	 * once settled, the id of the same site interned before it */
	struct site_pend *pend;
	uint32_t alias;
	char *text;    /* native frames rendered once ("a\nb\n"), on first use */
	char *frag[2]; /* the site as a list body: [0] text, [1] JSON, on first use */
	size_t frag_len[2];
	UT_hash_handle hh;
};

static struct site_ent *site_tab;
static struct cg_table site_table = CG_TABLE_INIT("site table"); /* a failed add: the site is not interned (id 0) */
static struct site_ent **site_by_id;
static uint32_t site_n, site_cap;
static _Atomic long long sites_deferred;
/* Deferred sites not settled yet: none (a steady loop's case), and
 * cg_site_pending and cg_site_settle answer without site_lock. Written
 * under site_lock; a site id reaches another thread after its increment. */
static _Atomic unsigned sites_waiting CG_HOT_DATA;
/* Sites are never removed (an id stays valid while any record or model
 * object may name it), so their number is capped: a program that makes
 * calls from ever new places (generated code, a JIT's stubs: 10^6 one-frame
 * sites took 1.3 GB, issue 30) gets id 0 (no site) for each new one past
 * the cap, counted in the summary's sites_dropped. ~1.2 KiB a site: at most
 * ~80 MB. */
#define SITE_MAX 65536u
static _Atomic long long sites_dropped;

long long cg_sites_dropped(void)
{
	return atomic_load_explicit(&sites_dropped, memory_order_relaxed);
}

long long cg_sites_deferred(void)
{
	return atomic_load_explicit(&sites_deferred, memory_order_relaxed);
}

/* Module file name of pc. _dl_find_object (glibc >= 2.35) is a lock-free
 * lookup; dladdr also searches the symbol table (linear in large
 * libraries such as libtorch), so it is only the fallback. */
extern int _dl_find_object(void *pc, struct dl_find_object *result) __attribute__((weak));

static const char *module_of(void *pc)
{
	Dl_info di;
	if (_dl_find_object) {
		struct dl_find_object fo;
		if (_dl_find_object(pc, &fo) == 0 && fo.dlfo_link_map)
			return fo.dlfo_link_map->l_name;
		return NULL;
	}
	return dladdr(pc, &di) ? di.dli_fname : NULL;
}

static int cuda_frame(void *pc)
{
	return cg_cuda_module(module_of(pc));
}

void cg_site_warm(void)
{
	void *pcs[2];
	if (cg_cfg.backtrace > 0) {
		(void)backtrace(pcs, 2); /* the fallback's one-time dlopen of libgcc_s */
		cg_unwind_prefault();
		cg_unwind_spare_fill();
		cg_stack_thread_warm();
	}
	/* One site of this stack, interned like any other (the site table's
	 * first allocations, the unwinder's rules for the CUDA libraries'
	 * frames, the Python reader): a site no record names is never
	 * written. */
	(void)cg_site_here(0);
}

/* The kept native frames of a walk: the first outside the shim and the
 * CUDA runtime/driver (runtime hooks put both on the stack), then up to
 * depth more. pcs[0] is the return into the function that walked. */
static void site_pick(struct site_key *k, void *const *pcs, int n, uint64_t cuda, int skip, int depth)
{
	int i = skip + 1;
	while (i < n - 1 && (cuda >> i & 1))
		i++;
	for (k->n = 0; i < n && k->n < depth; i++)
		k->pc[k->n++] = pcs[i];
}

/* Hash only what is used (the fixed-size key was ~0.5 KiB). */
static size_t site_kb(const struct site_key *k, unsigned char *kb)
{
	size_t klen = k->n * sizeof k->pc[0], pl = strlen(k->py);
	memcpy(kb, k->pc, klen);
	memcpy(kb + klen, k->py, pl);
	return klen + pl;
}

/* A new id for e, under site_lock; 0 when the table cannot grow or is
 * full (SITE_MAX: counted as dropped). */
static uint32_t site_id_locked(struct site_ent *e)
{
	if (site_n >= SITE_MAX) {
		atomic_fetch_add_explicit(&sites_dropped, 1, memory_order_relaxed);
		return 0;
	}
	if (site_n + 1 >= site_cap) {
		uint32_t nc = site_cap ? site_cap * 2 : 256;
		struct site_ent **nb = realloc(site_by_id, nc * sizeof *nb);
		if (!nb)
			return 0;
		site_by_id = nb;
		site_cap = nc;
	}
	e->id = ++site_n;
	site_by_id[e->id] = e;
	return e->id;
}

/* e (with its key) into the lookup table, under site_lock. 0 on failure. */
static int site_add_locked(struct site_ent *e, const unsigned char *kb, size_t klen)
{
	e->kb = malloc(klen + 1);
	if (!e->kb)
		return 0;
	memcpy(e->kb, kb, klen);
	e->klen = klen;
	HASH_ADD_KEYPTR(hh, site_tab, e->kb, e->klen, e);
	if (cg_table_add_failed(&site_table)) {
		free(e->kb);
		e->kb = NULL;
		return 0;
	}
	return 1;
}

static uint32_t site_intern(const struct site_key *k)
{
	unsigned char kb[sizeof k->pc + CG_PY_MAX];
	size_t klen = site_kb(k, kb);
	struct site_ent *e;
	uint32_t id;
	pthread_mutex_lock(&site_lock);
	HASH_FIND(hh, site_tab, kb, klen, e);
	if (e) {
		id = e->id;
		pthread_mutex_unlock(&site_lock);
		return id;
	}
	e = site_n < SITE_MAX ? calloc(1, sizeof *e) : NULL;
	if (!e || !site_id_locked(e)) {
		if (!e && site_n >= SITE_MAX)
			atomic_fetch_add_explicit(&sites_dropped, 1, memory_order_relaxed);
		free(e);
		pthread_mutex_unlock(&site_lock);
		return 0;
	}
	e->key = *k;
	if (!site_add_locked(e, kb, klen)) {
		site_by_id[e->id] = NULL;
		site_n--;
		free(e);
		pthread_mutex_unlock(&site_lock);
		return 0;
	}
	id = e->id;
	pthread_mutex_unlock(&site_lock);
	return id;
}

/* The thread's last sites of native frames only (no Python text): a site
 * taken again from the same place is its id without site_lock and the
 * hash (a capture loop's begin, allocation and instantiation, every
 * cycle: ~440 instructions a site on the stand-in). Sites are never
 * removed, so an id once found stays right. Malloc'd at the thread's
 * first site, freed at its exit. */
#define RECENT_WAYS 4
struct recent {
	unsigned next;
	struct {
		uint32_t id;
		unsigned char n;
		void *pc[CG_BT_MAX];
	} way[RECENT_WAYS];
};
static struct cg_thread_kind recent_kind;
static __thread __attribute__((tls_model("initial-exec"))) void *recent;

static struct recent *recent_get(void)
{
	return __builtin_expect(recent != NULL, 1) ? recent
						   : cg_thread_block(&recent_kind, &recent, sizeof(struct recent));
}

static CG_HOT uint32_t site_intern_recent(const struct site_key *k)
{
	struct recent *r = k->py[0] ? NULL : recent_get();
	uint32_t id;
	if (r)
		for (int i = 0; i < RECENT_WAYS; i++)
			if (r->way[i].id && r->way[i].n == k->n && !memcmp(r->way[i].pc, k->pc, k->n * sizeof k->pc[0]))
				return r->way[i].id;
	id = site_intern(k);
	if (r && id) {
		unsigned w = r->next++ % RECENT_WAYS;
		r->way[w].id = 0; /* a signal handler's site in between sees no half-written way */
		memcpy(r->way[w].pc, k->pc, k->n * sizeof k->pc[0]);
		r->way[w].n = k->n;
		r->way[w].id = id;
	}
	return id;
}

/* The walk's frames the cached unwinder cannot give: glibc's backtrace,
 * and the CUDA frames found by module. */
static int site_backtrace(void **pcs, int want, uint64_t *cuda)
{
	int n = backtrace(pcs, want);
	*cuda = 0;
	for (int f = 0; f < n && f < 64; f++)
		*cuda |= (uint64_t)cuda_frame(pcs[f]) << f;
	return n;
}

/* Whether frames from..n-1 are all the shim's or the CUDA libraries'. */
static int site_all_cuda(uint64_t cuda, int from, int n)
{
	for (int i = from; i < n && i < 64; i++)
		if (!(cuda >> i & 1))
			return 0;
	return 1;
}

/* Ask for the frames kept, the shim's, and a few of the CUDA libraries
 * above them. The cached unwinder answers in tens of nanoseconds a frame;
 * the generic one (~0.5 us a frame) only where the cached one declines. */
static int site_want(int skip, int depth)
{
	return depth + skip + 4 < CG_BT_MAX + 8 ? depth + skip + 4 : CG_BT_MAX + 8;
}

/* The site of a walk's frames (pcs[0..n)), with the thread's Python
 * frames unless nopy: its key is made in this function's frame (~1 KiB,
 * out of the entry points', whose walk then starts nearer the hook's
 * stack lines). The id is kept with the walk in the walk memo (t names
 * it; way 0: not a walk the memo kept, or frames not the first walk's)
 * when the site has no Python frames, which the tag then says. */
static __attribute__((noinline)) uint32_t site_of(void *const *pcs, int n, uint64_t cuda, int skip, int nopy,
						  const struct cg_unwind_tag *t)
{
	struct site_key k;
	uint32_t id;
	k.n = 0;
	k.py[0] = 0;
	if (cg_cfg.backtrace > 0)
		site_pick(&k, pcs, n, cuda, skip, (int)cg_cfg.backtrace);
	if (!nopy)
		cg_pyframes(k.py, sizeof k.py, (int)cg_cfg.python_frames);
	id = site_intern_recent(&k);
	if (nopy && t->way && id)
		cg_unwind_tag_set(t, id);
	return id;
}

/* A cold frame: the rest of the walk waits (site_settle_locked); the
 * site gets an id of its own now. */
static CG_COLD uint32_t site_defer(struct cg_unwind_rest *rest, void *const *pcs, int n, uint64_t cuda, int want,
				   int skip, int nopy)
{
	struct site_pend *p = malloc(sizeof *p);
	struct site_ent *e = p ? calloc(1, sizeof *e) : NULL;
	uint32_t id;
	if (!e) {
		free(p);
		cg_unwind_rest_free(rest);
		return 0;
	}
	memcpy(p->pcs, pcs, (size_t)n * sizeof pcs[0]);
	p->rest = rest;
	p->n = n;
	p->want = want;
	p->skip = skip;
	p->cuda = cuda;
	if (!nopy)
		cg_pyframes(e->key.py, sizeof e->key.py, (int)cg_cfg.python_frames);
	e->pend = p;
	pthread_mutex_lock(&site_lock);
	id = site_id_locked(e);
	if (id)
		atomic_fetch_add_explicit(&sites_waiting, 1, memory_order_release);
	pthread_mutex_unlock(&site_lock);
	if (!id) {
		cg_unwind_rest_free(rest);
		free(p);
		free(e);
		return 0;
	}
	atomic_fetch_add_explicit(&sites_deferred, 1, memory_order_relaxed);
	return id;
}

/* What a site's id depends on besides its walk's frames and the depth
 * asked (the memo's own key): skip and the kept depth (<= CG_BT_MAX), and
 * that it has no Python frames (a tag is asked only then). 0 (no tag, the
 * full path) for a skip past 63. */
static unsigned site_tag(int skip, int depth)
{
	return skip >= 0 && skip < 64 ? 1u + (unsigned)skip + 64u * (unsigned)depth : 0;
}

/* Both entry points: inlined into each, so that the walk starts in the
 * entry point's frame (skip counts from it). defer: stop at a cold frame
 * (cg_site_here_deferred). A steady loop's site is the walk memo's value
 * for the walk (cg_unwind_tag): the same start over the same stack words,
 * so the same frames, without copying, picking or looking them up. */
static inline __attribute__((always_inline)) uint32_t site_make(int skip, int defer)
{
	struct cg_unwind_rest *rest = NULL;
	struct cg_unwind_tag t;
	void *pcs[CG_BT_MAX + 8];
	int n = 0, depth = (int)cg_cfg.backtrace, want = site_want(skip, depth), nopy;
	uint64_t cuda = 0;

	if (depth <= 0 && cg_cfg.python_frames <= 0)
		return 0;
	/* Python's frames are looked for (or not) first: a site with them is
	 * never the memo's value */
	nopy = cg_pyframes_none((int)cg_cfg.python_frames);
	t.tag = nopy ? site_tag(skip, depth) : 0;
	t.way = 0;
	if (depth > 0) {
		n = defer ? cg_unwind_warm(pcs, want, &cuda, &rest, &t) : cg_unwind(pcs, want, &cuda, &t);
		if (t.val)
			return t.val;
		if (n < 0) {
			n = site_backtrace(pcs, want, &cuda);
			t.way = 0;
		}
		/* Cut before the first frame past the CUDA libraries (a runtime
		 * with more frames of its own than the slack: a sanitizer's
		 * build, a real cudart's internals): walk again, as deep as a
		 * site may go, rather than keep a frame of the runtime. */
		if (!rest && n == want && want < CG_BT_MAX + 8 && site_all_cuda(cuda, skip + 1, n)) {
			n = cg_unwind(pcs, CG_BT_MAX + 8, &cuda, NULL);
			if (n < 0)
				n = site_backtrace(pcs, CG_BT_MAX + 8, &cuda);
			t.way = 0; /* these frames are not the tagged walk's */
		}
		if (rest)
			return site_defer(rest, pcs, n, cuda, want, skip, nopy);
	}
	return site_of(pcs, n, cuda, skip, nopy, &t);
}

CG_HOT uint32_t cg_site_here(int skip)
{
	return site_make(skip, 0);
}

CG_HOT uint32_t cg_site_here_deferred(int skip)
{
	return site_make(skip, 1);
}

/* Finish a deferred site's walk (the cold rules worked out now, from the
 * stack's copy) and intern it; a site already interned meanwhile becomes
 * what this id stands for (alias). Under site_lock. */
static void site_settle_locked(struct site_ent *e)
{
	struct site_pend *p = e->pend;
	struct site_ent *f;
	unsigned char kb[sizeof e->key.pc + CG_PY_MAX];
	size_t klen;
	int n;
	e->pend = NULL;
	atomic_fetch_sub_explicit(&sites_waiting, 1, memory_order_relaxed);
	n = cg_unwind_finish(p->rest, p->pcs, p->n, p->want, &p->cuda);
	site_pick(&e->key, p->pcs, n, p->cuda, p->skip, (int)cg_cfg.backtrace);
	klen = site_kb(&e->key, kb);
	HASH_FIND(hh, site_tab, kb, klen, f);
	if (f)
		e->alias = f->id;
	else
		(void)site_add_locked(e, kb, klen); /* not in the table: still its own id */
	cg_unwind_rest_free(p->rest);
	free(p);
}

/* The entry under id site as it stands (pending or not), or NULL. */
static struct site_ent *site_by_id_locked(uint32_t site)
{
	return site && site <= site_n ? site_by_id[site] : NULL;
}

/* The entry of site id, settled, through its alias; NULL if none. */
static CG_HOT struct site_ent *site_ent_locked(uint32_t site)
{
	struct site_ent *e = site_by_id_locked(site);
	if (e && e->pend)
		site_settle_locked(e);
	if (e && e->alias)
		e = site_by_id[e->alias];
	return e;
}

CG_HOT int cg_site_pending(uint32_t site)
{
	struct site_ent *e;
	int pending;
	if (!atomic_load_explicit(&sites_waiting, memory_order_acquire))
		return 0;
	pthread_mutex_lock(&site_lock);
	e = site_by_id_locked(site);
	pending = e && e->pend;
	pthread_mutex_unlock(&site_lock);
	return pending;
}

CG_HOT void cg_site_settle(uint32_t site)
{
	if (!atomic_load_explicit(&sites_waiting, memory_order_acquire))
		return; /* then site_ent_locked would only follow an alias */
	pthread_mutex_lock(&site_lock);
	(void)site_ent_locked(site);
	pthread_mutex_unlock(&site_lock);
}

static void frame_text(void *pc, char *out, unsigned cap)
{
	Dl_info di;
	if (dladdr(pc, &di) && di.dli_fname) {
		const char *base = strrchr(di.dli_fname, '/');
		base = base ? base + 1 : di.dli_fname;
		cg_module_note(di.dli_fbase, base);
		if (di.dli_sname && di.dli_saddr)
			snprintf(out, cap, "%s:%s+0x%lx", base, di.dli_sname,
				 (unsigned long)((char *)pc - (char *)di.dli_saddr));
		else
			snprintf(out, cap, "%s+0x%lx", base, (unsigned long)((char *)pc - (char *)di.dli_fbase));
	} else {
		snprintf(out, cap, "%p", pc);
	}
}

static int site_copy(uint32_t site, struct site_key *k)
{
	int ok = 0;
	struct site_ent *e;
	pthread_mutex_lock(&site_lock);
	e = site_ent_locked(site);
	if (e) {
		*k = e->key;
		ok = 1;
	}
	pthread_mutex_unlock(&site_lock);
	return ok;
}

/* Render a site's native frames once and keep the text with the site:
 * symbolisation (dladdr) is slow in large libraries, sites repeat. */
static char *site_text_locked(struct site_ent *e)
{
	char buf[300];
	size_t cap = 64, n = 0;
	char *t;
	if (e->text)
		return e->text;
	t = malloc(cap);
	if (!t)
		return NULL;
	t[0] = 0;
	for (int i = 0; i < e->key.n; i++) {
		size_t l;
		frame_text(e->key.pc[i], buf, sizeof buf);
		l = strlen(buf);
		if (n + l + 2 > cap) {
			char *nt = realloc(t, cap = (n + l + 2) * 2);
			if (!nt)
				break;
			t = nt;
		}
		memcpy(t + n, buf, l);
		n += l;
		t[n++] = '\n';
		t[n] = 0;
	}
	e->text = t;
	return t;
}

/* Each line of text ("a\nb\n": a site's rendered native frames), cut to
 * 299 bytes, to each(line, arg). */
static void text_lines_each(const char *text, void (*each)(const char *, void *), void *arg)
{
	char fr[300];
	for (const char *line = text ? text : ""; *line;) {
		const char *nl = strchr(line, '\n');
		size_t l;
		if (!nl)
			break;
		l = (size_t)(nl - line) < sizeof fr - 1 ? (size_t)(nl - line) : sizeof fr - 1;
		memcpy(fr, line, l);
		fr[l] = 0;
		each(fr, arg);
		line = nl + 1;
	}
}

static void each_elem(const char *f, void *arg)
{
	rec_elem_str(arg, f);
}

/* The site as the body of a JSON array (or a text list), built once per
 * format: a site is written on every lifecycle record that names it. */
static const char *site_frag_locked(struct site_ent *e, int json, size_t *len)
{
	struct cg_rec *t;
	char py[CG_PY_MAX];
	const char *nat;
	char *frag;
	if (e->frag[json]) {
		*len = e->frag_len[json];
		return e->frag[json];
	}
	t = malloc(sizeof *t);
	if (!t)
		return NULL;
	t->on = 1;
	t->json = json;
	t->level = CG_L_INFO;
	t->n = 0;
	t->trunc = 0;
	t->nfields = 0;
	memcpy(py, e->key.py, sizeof py);
	if (py[0]) {
		char *save = NULL, *tok;
		for (tok = strtok_r(py, ";", &save); tok; tok = strtok_r(NULL, ";", &save))
			rec_elem_str(t, tok);
	}
	nat = site_text_locked(e);
	text_lines_each(nat, each_elem, t);
	frag = t->trunc ? NULL : malloc(t->n + 1);
	if (frag) {
		memcpy(frag, t->buf, t->n);
		frag[t->n] = 0;
		e->frag[json] = frag;
		e->frag_len[json] = t->n;
		*len = t->n;
	}
	free(t);
	return frag;
}

static void rec_site_frag(struct cg_rec *r, const char *key, const char *frag, size_t len)
{
	if (!frag)
		return;
	/* Fragments are never freed once set (sites live as long as the
	 * process), so this copy needs no lock. */
	rec_open(r, key, '[');
	rec_raw_elems(r, frag, len);
	rec_close(r, ']');
}

void rec_site(struct cg_rec *r, const char *key, uint32_t site)
{
	struct site_ent *e;
	const char *frag = NULL;
	size_t len = 0;
	if (!r->on || !site)
		return;
	pthread_mutex_lock(&site_lock);
	e = site_ent_locked(site);
	if (e)
		frag = site_frag_locked(e, r->json ? 1 : 0, &len);
	pthread_mutex_unlock(&site_lock);
	rec_site_frag(r, key, frag, len);
}

/* site_lock, tried every millisecond for at most wait_ms. */
static int site_lock_try(int wait_ms)
{
	for (int k = 0; pthread_mutex_trylock(&site_lock) != 0; k++) {
		struct timespec pause = {0, 1000000};
		if (k >= wait_ms)
			return -1;
		nanosleep(&pause, NULL);
	}
	return 0;
}

/* A frame as "module+0xoffset" with no lock: _dl_find_object is lock-free
 * where dladdr takes the loader's lock (held by a dlopen whose constructor
 * may be the very call that is stuck) and cg_module_note the module
 * table's. Without _dl_find_object (glibc < 2.35): the address alone. */
static void frame_raw(void *pc, char *out, unsigned cap)
{
	struct dl_find_object fo;
	if (_dl_find_object && _dl_find_object(pc, &fo) == 0 && fo.dlfo_link_map) {
		const char *name = fo.dlfo_link_map->l_name, *base;
		base = name && *name ? strrchr(name, '/') : NULL;
		base = base ? base + 1 : name && *name ? name : program_invocation_short_name;
		snprintf(out, cap, "%s+0x%lx", base, (unsigned long)((char *)pc - (char *)fo.dlfo_map_start));
	} else {
		snprintf(out, cap, "%p", pc);
	}
}

/* The site's frames for the dump, under site_lock: Python's, then the
 * native ones as rendered once before (with symbols) or raw. each(frame,
 * arg) for every frame. */
static void site_frames_nowait_locked(struct site_ent *e, void (*each)(const char *, void *), void *arg)
{
	char py[CG_PY_MAX], fr[300];
	memcpy(py, e->key.py, sizeof py);
	for (char *save = NULL, *tok = strtok_r(py, ";", &save); tok; tok = strtok_r(NULL, ";", &save))
		each(tok, arg);
	if (e->text) {
		text_lines_each(e->text, each, arg);
		return;
	}
	for (int i = 0; i < e->key.n; i++) {
		frame_raw(e->key.pc[i], fr, sizeof fr);
		each(fr, arg);
	}
}

int rec_site_try(struct cg_rec *r, const char *key, uint32_t site, int wait_ms)
{
	struct site_ent *e;
	if (!r->on || !site)
		return 0;
	if (site_lock_try(wait_ms))
		return -1;
	e = site_ent_locked(site); /* a deferred walk settles: the unwinder takes only trylocks */
	if (e) {
		rec_open(r, key, '[');
		site_frames_nowait_locked(e, each_elem, r);
		rec_close(r, ']');
	}
	pthread_mutex_unlock(&site_lock);
	return 0;
}

struct lines_out {
	const char *indent;
	char *out;
	size_t cap, n;
};

static void each_line(const char *f, void *arg)
{
	struct lines_out *o = arg;
	if (o->n < o->cap) {
		int w = snprintf(o->out + o->n, o->cap - o->n, "%s%s\n", o->indent, f);
		if (w > 0)
			o->n = o->n + (size_t)w < o->cap ? o->n + (size_t)w : o->cap;
	}
}

int cg_site_lines_try(uint32_t site, const char *indent, char *out, size_t cap, int wait_ms)
{
	struct site_ent *e;
	struct lines_out o = {indent, out, cap, 0};
	out[0] = 0;
	if (!site)
		return 0;
	if (site_lock_try(wait_ms))
		return -1;
	e = site_ent_locked(site); /* a deferred walk settles: the unwinder takes only trylocks */
	if (e)
		site_frames_nowait_locked(e, each_line, &o);
	pthread_mutex_unlock(&site_lock);
	return 0;
}

void cg_site_first(uint32_t site, char *out, unsigned cap)
{
	struct site_key k;
	out[0] = 0;
	if (!site_copy(site, &k))
		return;
	if (k.py[0]) {
		/* The innermost frame of the user's own code ("py:"), else the
		 * innermost frame: a sync inside print(tensor) is the script's
		 * print line, not torch/_tensor_str.py's. */
		char *f = k.py, *user = NULL;
		while (f && *f) {
			char *semi = strchr(f, ';');
			if (!strncmp(f, "py:", 3)) {
				user = f;
				if (semi)
					*semi = 0;
				break;
			}
			f = semi ? semi + 1 : NULL;
		}
		if (!user) {
			char *semi = strchr(k.py, ';');
			if (semi)
				*semi = 0;
			user = k.py;
		}
		snprintf(out, cap, "%s", user);
	} else if (k.n) {
		frame_text(k.pc[0], out, cap);
	}
}
