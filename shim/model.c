/*
 * shim/model.c -- captures, graphs, executables, pools, allocations.
 * See model.h for the lock contract.
 */
#define _GNU_SOURCE
#include <pthread.h>
#include <stdio.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "call.h"
#include "cgshim/record.h"
#include "doors.h"
#include "model.h"
#include "nodes.h"
#include "resolve.h"
#include "rules.h"
#include "site.h"
#include "table.h"

int cg_table_oom;
_Atomic int cg_live_captures;

static pthread_mutex_t cap_lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_mutex_t gx_lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_mutex_t mem_lock = PTHREAD_MUTEX_INITIALIZER;

/* Totals for the exit summary (under the lock of the table they count). */
static struct {
	long long captures, captures_bad, graphs, execs, updates, update_failures, alloc_nodes, alloc_bytes,
		pools, leaks, rewrites, launches_destroyed;
} tot;

static void oom_check(const char *what)
{
	if (cg_table_oom) {
		cg_table_oom = 0;
		cg_degrade(what);
	}
}

static const char *mode_name(int m)
{
	return m == CU_STREAM_CAPTURE_MODE_GLOBAL         ? "global"
	       : m == CU_STREAM_CAPTURE_MODE_THREAD_LOCAL ? "thread_local"
	       : m == CU_STREAM_CAPTURE_MODE_RELAXED      ? "relaxed"
							  : "?";
}

/* Devices the process was seen using (bit d): graph memory is sampled on
 * each of them at exit. Set where the shim learns a device (a context's,
 * a pool's, a memory node's), never on the launch path. */
static _Atomic unsigned devs_seen;

static void dev_seen(int d)
{
	if (d >= 0 && d < CG_MAX_DEV)
		atomic_fetch_or_explicit(&devs_seen, 1u << d, memory_order_relaxed);
}

int cg_current_device(void)
{
	CUdevice d = 0;
	if (drv_cuCtxGetDevice && drv_cuCtxGetDevice(&d) == CUDA_SUCCESS && d >= 0 && d < CG_MAX_DEV) {
		dev_seen(d);
		return d;
	}
	return 0;
}

/* Budget of CGSHIM_MEMINFO=auto: cuMemGetInfo costs ~7 us on an H100, a
 * capture + instantiate has four boundaries (begin, end, instantiate
 * before and after). Under auto a boundary first tries the last sample of
 * its device (reuse below); real samples go on while they have cost under
 * 0.5% of the time since the first one, plus a start-up allowance (about 35
 * samples): a tight capture loop is slowed by at most ~0.5%. A 1% share was
 * tried and measured worse on the H100 (docs/design.md): in a PyTorch
 * process PyTorch's capture_begin then paid ~100 us more per capture.
 * CGSHIM_MEMINFO=on samples every boundary for real. */
#define MEMINFO_SHARE 200
#define MEMINFO_ALLOWANCE_NS 250000ull
/* Reuse: a boundary takes the device's previous sample instead of a new
 * one when nothing the shim sees has moved device memory since (mem_epoch:
 * bumped by model_mem_moved from the hooks that allocate, free, trim,
 * instantiate, destroy an exec, upload or first-launch an exec)
 * and the sample is younger than MEMINFO_REUSE_NS. The age bound limits
 * what the shim cannot see (VMM cuMemCreate, managed memory, lazy module
 * loads, other processes) to what happens in that window. Typical wins: an
 * instantiate right after its end-capture reuses the end's sample; a
 * capture with no allocation inside reuses its begin's sample at its end. */
#define MEMINFO_REUSE_NS 1000000ull
static _Atomic uint64_t meminfo_t0, meminfo_spent;
static _Atomic long long meminfo_skipped, meminfo_reused;
static _Atomic int meminfo_hold; /* calls to skip before the budget is looked at again */
static _Atomic uint64_t mem_epoch;
static pthread_mutex_t last_lock = PTHREAD_MUTEX_INITIALIZER; /* sampling boundaries only */
static struct {
	int have;
	size_t free;
	uint64_t epoch, ns;
} last_sample[CG_MAX_DEV];

void model_mem_moved(void)
{
	atomic_fetch_add_explicit(&mem_epoch, 1, memory_order_relaxed);
}

/* Free device memory now, or 0 when a capture is live (cuMemGetInfo is
 * sampled only outside captures), sampling is off, or over its budget. */
static int sample_free(size_t *free_out)
{
	size_t fr = 0, total = 0;
	uint64_t t0, t1, first, ep;
	int dev;
	if (cg_cfg.meminfo == CG_MEMINFO_OFF || atomic_load(&cg_live_captures) || !drv_cuMemGetInfo_v2)
		return 0;
	dev = cg_current_device();
	ep = atomic_load_explicit(&mem_epoch, memory_order_relaxed);
	t0 = cg_now_ns();
	if (cg_cfg.meminfo == CG_MEMINFO_AUTO) {
		int hit = 0;
		pthread_mutex_lock(&last_lock);
		if (last_sample[dev].have && last_sample[dev].epoch == ep && t0 - last_sample[dev].ns < MEMINFO_REUSE_NS) {
			*free_out = last_sample[dev].free;
			hit = 1;
		}
		pthread_mutex_unlock(&last_lock);
		if (hit) {
			atomic_fetch_add_explicit(&meminfo_reused, 1, memory_order_relaxed);
			return 1;
		}
	}
	/* Over budget, the next calls skip without even reading the clock. */
	if (cg_cfg.meminfo == CG_MEMINFO_AUTO && atomic_load_explicit(&meminfo_hold, memory_order_relaxed) > 0) {
		atomic_fetch_sub_explicit(&meminfo_hold, 1, memory_order_relaxed);
		atomic_fetch_add(&meminfo_skipped, 1);
		return 0;
	}
	first = atomic_load(&meminfo_t0);
	if (!first) {
		uint64_t zero = 0;
		atomic_compare_exchange_strong(&meminfo_t0, &zero, t0);
		first = atomic_load(&meminfo_t0);
	}
	if (cg_cfg.meminfo == CG_MEMINFO_AUTO &&
	    atomic_load(&meminfo_spent) > (t0 - first) / MEMINFO_SHARE + MEMINFO_ALLOWANCE_NS) {
		atomic_store_explicit(&meminfo_hold, 15, memory_order_relaxed);
		atomic_fetch_add(&meminfo_skipped, 1);
		return 0;
	}
	if (drv_cuMemGetInfo_v2(&fr, &total) != CUDA_SUCCESS)
		return 0;
	t1 = cg_now_ns();
	atomic_fetch_add(&meminfo_spent, t1 - t0);
	pthread_mutex_lock(&last_lock);
	last_sample[dev].have = 1;
	last_sample[dev].free = fr;
	last_sample[dev].epoch = ep; /* read before the query: a move during it invalidates */
	last_sample[dev].ns = t1;
	pthread_mutex_unlock(&last_lock);
	*free_out = fr;
	return 1;
}

long long model_meminfo_reused(void)
{
	return atomic_load(&meminfo_reused);
}

long long model_meminfo_skipped(void)
{
	return atomic_load(&meminfo_skipped);
}

int model_sample_free(size_t *free_out)
{
	return sample_free(free_out);
}

/* ====================================================================== */
/* captures                                                               */
/* ====================================================================== */

/* Cross-stream structure of a capture (event record/wait edges, forked
 * streams): allocated at its first event, most captures have none. */
struct cap_links {
	int n_fork;
	struct {
		CUstream s;
		uint32_t site;
		int joined;
	} fork[CG_MAX_JOIN];
	int n_ev;
	struct {
		CUevent ev;
		CUstream s;
	} evs[64];
	int n_edge;
	struct {
		CUstream from, to;
	} edge[64];
};

/* The first call seen to break a capture (issue 14, the link at the end):
 * a predicted violation (rule set) or a refusal the shim did not predict.
 * api and rule point at static strings. */
struct cap_breaker {
	const char *api, *rule;
	int tid, rc;
	char tname[16];
	uint32_t site;
};

struct cg_capture {
	uint64_t id;
	CUstream stream;
	int mode, tid, ptsz;
	char tname[16]; /* the begin thread's name (pthread_getname_np) */
	struct cap_breaker br;
	int blocking; /* begun on a blocking stream: the legacy stream joins it (906) */
	uint32_t site;
	uint64_t t0;
	CUgraph into;
	struct cap_links *l;
	int n_alloc;
	unsigned long long alloc_bytes, malloc_bytes;
	int have_before;
	size_t free_before;
	/* invalid: the shim knows the capture is invalidated (counted once in
	 * captures_invalidated); named: its "abandoned" record is written. */
	int invalid, named;
	/* The begin call, whose record is written later (brec) */
	int brec;
	struct cg_call bcall;
	const char *bvia;
	uint64_t bend;
	CUgraph bgraph;
	UT_hash_handle hh;
};

/* What a record about a capture needs, copied out under cap_lock. */
struct cap_snap {
	uint64_t id, t0;
	CUstream stream;
	int mode, tid, invalid;
	char tname[16];
	struct cap_breaker br;
	uint32_t site;
	int brec;
	struct cg_call bcall;
	const char *bvia;
	uint64_t bend;
	CUgraph graph;
};

static void cap_snap_locked(const struct cg_capture *c, struct cap_snap *o)
{
	o->id = c->id;
	o->t0 = c->t0;
	o->stream = c->stream;
	o->mode = c->mode;
	o->tid = c->tid;
	memcpy(o->tname, c->tname, sizeof o->tname);
	o->br = c->br;
	o->invalid = c->invalid;
	o->site = c->site;
	o->brec = c->brec;
	o->bcall = c->bcall;
	o->bvia = c->bvia;
	o->bend = c->bend;
	o->graph = c->into ? c->into : c->bgraph;
}

static struct cg_capture *captures;
static CG_TLS int thread_mode_set;
static CG_TLS int thread_mode;

int model_thread_mode(void)
{
	return thread_mode_set ? thread_mode : CU_STREAM_CAPTURE_MODE_GLOBAL;
}

void model_thread_mode_set(int mode)
{
	thread_mode_set = 1;
	thread_mode = mode;
}

int model_stream_capture(CUstream s, int ptsz, uint64_t *id, CUgraph *graph, int *status)
{
	CUstreamCaptureStatus st = CU_STREAM_CAPTURE_STATUS_NONE;
	cuuint64_t cid = 0;
	CUgraph g = NULL;
	CUresult rc;
	if (!atomic_load_explicit(&cg_live_captures, memory_order_relaxed))
		return 0;
	if (ptsz && drv_cuStreamGetCaptureInfo_v3_ptsz)
		rc = drv_cuStreamGetCaptureInfo_v3_ptsz(s, &st, &cid, &g, NULL, NULL, NULL);
	else if (drv_cuStreamGetCaptureInfo_v3)
		rc = drv_cuStreamGetCaptureInfo_v3(s, &st, &cid, &g, NULL, NULL, NULL);
	else
		return 0;
	if (rc != CUDA_SUCCESS || st == CU_STREAM_CAPTURE_STATUS_INVALIDATED) {
		/* An invalidated capture may answer without its id (or with an
		 * error): find it by its origin stream. */
		struct cg_capture *c, *tmp;
		int found = 0, me = cg_gettid();
		pthread_mutex_lock(&cap_lock);
		HASH_ITER(hh, captures, c, tmp)
		{
			if (c->stream == s && (s || !c->ptsz || c->tid == me)) {
				cid = c->id;
				found = 1;
				break;
			}
		}
		pthread_mutex_unlock(&cap_lock);
		if (!found && rc != CUDA_SUCCESS)
			return 0;
		/* Only the driver's own Invalidated answer (an error such as
		 * 906 on the legacy stream invalidates nothing). */
		if (rc == CUDA_SUCCESS)
			model_capture_seen_invalid(s, ptsz, cid, NULL);
		st = CU_STREAM_CAPTURE_STATUS_INVALIDATED;
	}
	if (st == CU_STREAM_CAPTURE_STATUS_NONE)
		return 0;
	if (id)
		*id = cid;
	if (graph)
		*graph = g;
	if (status)
		*status = st;
	return 1;
}

static CG_TLS int presample_have;
static CG_TLS size_t presample_free;
static CG_TLS struct cg_capture *prepared;

/* The calling thread's name, read (one prctl) at most every 50 ms per
 * thread: a begin-capture asks for it every time, and threads are named
 * at start far more often than renamed (a rename shows within 50 ms). */
void model_thread_name(char name[16])
{
	static CG_TLS char cached[16];
	static CG_TLS int64_t cached_at;
	struct timespec t;
	int64_t now = 0;
	if (!clock_gettime(CLOCK_MONOTONIC_COARSE, &t))
		now = (int64_t)t.tv_sec * 1000000000 + t.tv_nsec;
	if (!cached_at || !now || now - cached_at > 50000000) {
		if (pthread_getname_np(pthread_self(), cached, 16))
			cached[0] = 0;
		cached_at = now ? now : 0;
	}
	memcpy(name, cached, 16);
}

void model_capture_presample(void)
{
	presample_have = sample_free(&presample_free);
	if (!prepared)
		prepared = calloc(1, sizeof *prepared);
	if (prepared) /* the name now: a syscall, kept out of the begin's window */
		model_thread_name(prepared->tname);
}

void model_capture_prepare_blocking(int blocking)
{
	if (prepared)
		prepared->blocking = blocking;
}

void model_capture_begin(uint64_t id, CUstream s, int mode, int ptsz, CUgraph into, uint32_t site,
			 const struct cg_call *bc, const char *via, CUgraph graph)
{
	struct cg_capture *c = prepared;
	size_t fr = presample_free;
	int have = presample_have;
	presample_have = 0;
	prepared = NULL;
	if (!c)
		c = calloc(1, sizeof *c);
	if (!c) {
		cg_degrade("capture table");
		return;
	}
	c->id = id;
	c->stream = s;
	c->mode = mode;
	c->tid = cg_gettid();
	memset(&c->br, 0, sizeof c->br);
	c->ptsz = ptsz;
	c->site = site;
	c->into = into;
	c->have_before = have;
	c->free_before = have ? fr : 0;
	c->brec = bc != NULL;
	if (bc)
		c->bcall = *bc;
	c->bvia = via;
	c->bgraph = graph;
	c->t0 = bc && bc->t_out ? bc->t_out : cg_now_ns();
	pthread_mutex_lock(&cap_lock);
	HASH_ADD(hh, captures, id, sizeof c->id, c);
	oom_check("capture table");
	tot.captures++;
	/* The begin hook's end: the deferred record's stamp and post_ns. */
	c->bend = bc && bc->t0 ? cg_now_ns() : 0;
	pthread_mutex_unlock(&cap_lock);
	atomic_fetch_add(&cg_live_captures, 1);
}

/* The deferred record of a capture's begin call (see model_capture_begin). */
static void begin_record(const struct cap_snap *k)
{
	struct cg_rec r;
	if (!k->brec || !cg_call_rec_at(&r, &k->bcall, CUDA_SUCCESS, k->bvia, k->bend))
		return;
	rec_hex(&r, "stream", (uintptr_t)k->stream);
	rec_word(&r, "mode", mode_name(k->mode));
	rec_u64(&r, "capture", k->id);
	rec_hex(&r, "graph", (uintptr_t)k->graph);
	rec_site(&r, "site", k->site);
	if (k->tid != cg_gettid())
		rec_int(&r, "call_tid", k->tid);
	rec_end(&r);
}

static void cap_fields(struct cg_rec *r, const struct cap_snap *k)
{
	rec_u64(r, "capture", k->id);
	rec_hex(r, "stream", (uintptr_t)k->stream);
	rec_word(r, "mode", mode_name(k->mode));
	rec_int(r, "begin_tid", k->tid);
	rec_str(r, "begin_thread", k->tname);
	rec_site(r, "begin_site", k->site);
}

/* "invalidated": how the shim learned it (found_by: "call", a call that
 * failed with 900 against it; "capture_info", the application's query;
 * "shim_query", the shim's own capture-safe query). A capture whose end
 * fails without any of these is counted in captures_invalidated only. */
static void invalidated_record(const struct cap_snap *k, const char *found_by, const char *api, uint32_t call_site,
			       const char *by_api, int by_tid, uint32_t by_site)
{
	struct cg_rec r;
	rec_begin(&r, CG_L_INFO, CGSHIM_EV_INVALIDATED);
	cap_fields(&r, k);
	rec_word(&r, "found_by", found_by);
	if (api)
		rec_word(&r, "api", api);
	rec_int(&r, "call_tid", cg_gettid());
	rec_bool(&r, "other_thread", k->tid != cg_gettid());
	rec_site(&r, "site", call_site);
	/* A refusal that raced the begin, now known to be the culprit. */
	if (by_api) {
		rec_word(&r, "by_api", by_api);
		rec_int(&r, "by_tid", by_tid);
		rec_site(&r, "by_site", by_site);
	}
	rec_end(&r);
}

/* "abandoned": a capture never ended, named at the first call it makes
 * fail after it was invalidated (reason "refused"), at a failed begin on
 * its stream ("begin_failed"), or at exit ("exit"). */
static void abandoned_record(const struct cap_snap *k, const char *reason, const char *api, int rc,
			     uint32_t call_site)
{
	struct cg_rec r;
	begin_record(k);
	rec_begin(&r, CG_L_WARN, CGSHIM_EV_ABANDONED);
	cap_fields(&r, k);
	rec_word(&r, "reason", reason);
	rec_u64(&r, "age_ns", cg_now_ns() - k->t0);
	rec_bool(&r, "invalidated", k->invalid);
	if (api) {
		rec_word(&r, "api", api);
		rec_int(&r, "rc", rc);
		rec_int(&r, "call_tid", cg_gettid());
		rec_site(&r, "site", call_site);
	}
	rec_str(&r, "msg",
		!strcmp(reason, "exit")
			? "capture still open at exit: it was begun and never ended"
			: "capture begun long ago was never ended and still blocks this call: end it (or use "
			  "thread_local capture mode) after a failure inside the capture");
	rec_end(&r);
}

static int conflicts_locked(const struct cg_capture *c, int me, int mode)
{
	if (mode == CU_STREAM_CAPTURE_MODE_RELAXED)
		return 0;
	return (c->tid == me && c->mode != CU_STREAM_CAPTURE_MODE_RELAXED) ||
	       (mode == CU_STREAM_CAPTURE_MODE_GLOBAL && c->mode == CU_STREAM_CAPTURE_MODE_GLOBAL);
}

#define CAP_NOTE_MAX 8

/* The last 900 that no capture in the model explained: a call racing a
 * begin (its check ran before the capture was in the model, the driver
 * refused it after). An invalidation found later by a capture-info query
 * is attributed to it when it came after that capture's begin. Under
 * cap_lock. */
static struct {
	const char *api;
	int tid;
	char tname[16];
	uint32_t site;
	uint64_t ts;
} unexplained;

static void breaker_set_locked(struct cg_capture *c, const char *api, const char *rule, int rc, int tid,
			       const char *tname, uint32_t site)
{
	if (c->br.api)
		return; /* the first one is the culprit; later ones are its echoes */
	c->br.api = api;
	c->br.rule = rule;
	c->br.rc = rc;
	c->br.tid = tid;
	c->br.site = site;
	snprintf(c->br.tname, sizeof c->br.tname, "%s", tname ? tname : "");
}

void model_capture_breaker(uint64_t id, const char *api, const char *rule, int rc, uint32_t site)
{
	struct cg_capture *c;
	char tname[16];
	model_thread_name(tname);
	pthread_mutex_lock(&cap_lock);
	HASH_FIND(hh, captures, &id, sizeof id, c);
	if (c)
		breaker_set_locked(c, api, rule, rc, cg_gettid(), tname, site);
	pthread_mutex_unlock(&cap_lock);
}

void model_capture_refused(const char *api)
{
	struct cg_capture *c, *tmp;
	struct cap_snap inv[CAP_NOTE_MAX], ab[CAP_NOTE_MAX];
	int n_inv = 0, n_ab = 0, n_conf = 0, me = cg_gettid(), mode = model_thread_mode();
	uint32_t site;
	if (!atomic_load(&cg_live_captures))
		return;
	pthread_mutex_lock(&cap_lock);
	HASH_ITER(hh, captures, c, tmp)
	{
		if (!conflicts_locked(c, me, mode))
			continue;
		n_conf++;
		if (!c->invalid && n_inv < CAP_NOTE_MAX) {
			c->invalid = 1;
			tot.captures_bad++;
			cap_snap_locked(c, &inv[n_inv++]);
		} else if (c->invalid && !c->named && n_ab < CAP_NOTE_MAX) {
			c->named = 1;
			cap_snap_locked(c, &ab[n_ab++]);
			c->brec = 0; /* written with the abandoned record */
		}
	}
	pthread_mutex_unlock(&cap_lock);
	if (n_conf && !n_inv && !n_ab)
		return; /* refused by captures already named */
	/* The capture is dead already: the site costs nothing it could widen. */
	site = cg_site_here(2);
	if (!n_conf) {
		char tname[16];
		model_thread_name(tname);
		pthread_mutex_lock(&cap_lock);
		unexplained.api = api;
		unexplained.tid = me;
		memcpy(unexplained.tname, tname, sizeof tname);
		unexplained.site = site;
		unexplained.ts = cg_now_ns();
		pthread_mutex_unlock(&cap_lock);
		return;
	}
	/* A refusal no rule predicted is still the first breaking call seen. */
	for (int i = 0; i < n_inv; i++)
		model_capture_breaker(inv[i].id, api, NULL, CUDA_ERROR_STREAM_CAPTURE_UNSUPPORTED, site);
	for (int i = 0; i < n_inv; i++)
		invalidated_record(&inv[i], "call", api, site, NULL, 0, 0);
	for (int i = 0; i < n_ab; i++)
		abandoned_record(&ab[i], "refused", api, CUDA_ERROR_STREAM_CAPTURE_UNSUPPORTED, site);
}

static int on_stream_locked(const struct cg_capture *c, CUstream s, int ptsz, int me)
{
	return c->stream == s && (s || !c->ptsz || !ptsz || c->tid == me);
}

void model_capture_begin_refused(CUstream s, int ptsz, const char *api, int rc)
{
	struct cg_capture *c, *tmp;
	struct cap_snap k;
	int found = 0, me = cg_gettid();
	if (!atomic_load(&cg_live_captures))
		return;
	pthread_mutex_lock(&cap_lock);
	HASH_ITER(hh, captures, c, tmp)
	{
		if (on_stream_locked(c, s, ptsz, me) && !c->named) {
			c->named = 1;
			cap_snap_locked(c, &k);
			c->brec = 0;
			found = 1;
			break;
		}
	}
	pthread_mutex_unlock(&cap_lock);
	if (found)
		abandoned_record(&k, "begin_failed", api, rc, cg_site_here(2));
}

/* Mark the capture (by id, else by origin stream) invalidated; fills k and
 * returns 1 when this is news. Under cap_lock. */
static int seen_invalid_locked(CUstream s, int ptsz, uint64_t id, struct cap_snap *k, const char **by_api,
			       int *by_tid, uint32_t *by_site)
{
	struct cg_capture *c = NULL, *tmp;
	int me = cg_gettid();
	if (id)
		HASH_FIND(hh, captures, &id, sizeof id, c);
	if (!c)
		HASH_ITER(hh, captures, c, tmp)
		if (on_stream_locked(c, s, ptsz, me))
			break;
	if (!c || c->invalid)
		return 0;
	c->invalid = 1;
	tot.captures_bad++;
	cap_snap_locked(c, k);
	if (unexplained.api && unexplained.ts >= (c->bcall.t_in ? c->bcall.t_in : c->t0)) {
		*by_api = unexplained.api;
		*by_tid = unexplained.tid;
		*by_site = unexplained.site;
		breaker_set_locked(c, unexplained.api, NULL, CUDA_ERROR_STREAM_CAPTURE_UNSUPPORTED, unexplained.tid,
				   unexplained.tname, unexplained.site);
		unexplained.api = NULL;
	}
	return 1;
}

void model_capture_seen_invalid(CUstream s, int ptsz, uint64_t id, const char *api)
{
	struct cap_snap k;
	const char *by_api = NULL;
	int news, by_tid = 0;
	uint32_t by_site = 0;
	if (!atomic_load(&cg_live_captures))
		return;
	pthread_mutex_lock(&cap_lock);
	news = seen_invalid_locked(s, ptsz, id, &k, &by_api, &by_tid, &by_site);
	pthread_mutex_unlock(&cap_lock);
	if (news)
		invalidated_record(&k, api ? "capture_info" : "shim_query", api, 0, by_api, by_tid, by_site);
}

static struct cg_capture *cap_find_locked(uint64_t id)
{
	struct cg_capture *c;
	HASH_FIND(hh, captures, &id, sizeof id, c);
	return c;
}

int model_capture_find(uint64_t id, struct cg_capture_view *out)
{
	struct cg_capture *c;
	int ok = 0;
	pthread_mutex_lock(&cap_lock);
	c = cap_find_locked(id);
	if (c) {
		out->id = c->id;
		out->stream = c->stream;
		out->mode = c->mode;
		out->tid = c->tid;
		out->site = c->site;
		out->named = c->named;
		memcpy(out->tname, c->tname, sizeof out->tname);
		ok = 1;
	}
	pthread_mutex_unlock(&cap_lock);
	return ok;
}

int model_capture_conflict(int thread_mode_now, struct cg_capture_view *out)
{
	struct cg_capture *c, *tmp;
	int me = cg_gettid(), found = 0;
	if (!atomic_load(&cg_live_captures) || thread_mode_now == CU_STREAM_CAPTURE_MODE_RELAXED)
		return 0;
	pthread_mutex_lock(&cap_lock);
	HASH_ITER(hh, captures, c, tmp)
	{
		int hit = 0;
		if (c->tid == me && c->mode != CU_STREAM_CAPTURE_MODE_RELAXED)
			hit = 1; /* this thread's own non-relaxed capture */
		else if (thread_mode_now == CU_STREAM_CAPTURE_MODE_GLOBAL && c->mode == CU_STREAM_CAPTURE_MODE_GLOBAL)
			hit = 1; /* any thread's global capture */
		if (hit) {
			out->id = c->id;
			out->stream = c->stream;
			out->mode = c->mode;
			out->tid = c->tid;
			out->site = c->site;
			out->named = c->named;
			memcpy(out->tname, c->tname, sizeof out->tname);
			found = 1;
			break;
		}
	}
	pthread_mutex_unlock(&cap_lock);
	return found;
}

static struct cap_links *links_locked(struct cg_capture *c)
{
	if (!c->l)
		c->l = calloc(1, sizeof *c->l); /* NULL: the capture's links go untracked */
	return c->l;
}

void model_capture_event_record(uint64_t id, CUevent ev, CUstream s)
{
	struct cg_capture *c;
	struct cap_links *l;
	pthread_mutex_lock(&cap_lock);
	c = cap_find_locked(id);
	if (c && (l = links_locked(c))) {
		int i;
		for (i = 0; i < l->n_ev; i++)
			if (l->evs[i].ev == ev)
				break;
		if (i == l->n_ev && l->n_ev < 64)
			l->n_ev++;
		if (i < 64) {
			l->evs[i].ev = ev;
			l->evs[i].s = s;
		}
	}
	pthread_mutex_unlock(&cap_lock);
}

int model_capture_event_known(CUevent ev)
{
	struct cg_capture *c, *tmp;
	int known = 0;
	pthread_mutex_lock(&cap_lock);
	HASH_ITER(hh, captures, c, tmp)
	{
		for (int i = 0; c->l && i < c->l->n_ev && !known; i++)
			known = c->l->evs[i].ev == ev;
		if (known)
			break;
	}
	pthread_mutex_unlock(&cap_lock);
	return known;
}

static void view_locked(const struct cg_capture *c, struct cg_capture_view *out)
{
	out->id = c->id;
	out->stream = c->stream;
	out->mode = c->mode;
	out->tid = c->tid;
	out->site = c->site;
	out->named = c->named;
	memcpy(out->tname, c->tname, sizeof out->tname);
}

int model_capture_of_event(CUevent ev, struct cg_capture_view *out)
{
	struct cg_capture *c, *tmp;
	int known = 0;
	if (!atomic_load_explicit(&cg_live_captures, memory_order_relaxed))
		return 0;
	pthread_mutex_lock(&cap_lock);
	HASH_ITER(hh, captures, c, tmp)
	{
		for (int i = 0; c->l && i < c->l->n_ev && !known; i++)
			known = c->l->evs[i].ev == ev;
		if (known) {
			view_locked(c, out);
			break;
		}
	}
	pthread_mutex_unlock(&cap_lock);
	return known;
}

void model_capture_event_forget(CUevent ev)
{
	struct cg_capture *c, *tmp;
	pthread_mutex_lock(&cap_lock);
	HASH_ITER(hh, captures, c, tmp)
	{
		for (int i = 0; c->l && i < c->l->n_ev; i++)
			if (c->l->evs[i].ev == ev)
				c->l->evs[i].ev = NULL; /* slot kept: edges name streams, not events */
	}
	pthread_mutex_unlock(&cap_lock);
}

int model_capture_any(struct cg_capture_view *out)
{
	struct cg_capture *c, *tmp;
	int found = 0;
	if (model_capture_conflict(model_thread_mode(), out))
		return 1; /* the one this thread's mode collides with first */
	if (!atomic_load_explicit(&cg_live_captures, memory_order_relaxed))
		return 0;
	pthread_mutex_lock(&cap_lock);
	HASH_ITER(hh, captures, c, tmp)
	{
		view_locked(c, out);
		found = 1;
		break;
	}
	pthread_mutex_unlock(&cap_lock);
	return found;
}

int model_capture_blocking(struct cg_capture_view *out)
{
	struct cg_capture *c, *tmp;
	int found = 0;
	if (!atomic_load_explicit(&cg_live_captures, memory_order_relaxed))
		return 0;
	pthread_mutex_lock(&cap_lock);
	HASH_ITER(hh, captures, c, tmp)
	{
		if (c->blocking) {
			view_locked(c, out);
			found = 1;
			break;
		}
	}
	pthread_mutex_unlock(&cap_lock);
	return found;
}

void model_capture_wait_event(uint64_t id, CUstream s, CUevent ev, uint32_t site)
{
	struct cg_capture *c;
	struct cap_links *l;
	pthread_mutex_lock(&cap_lock);
	c = cap_find_locked(id);
	if (c && (l = links_locked(c))) {
		CUstream from = NULL;
		int known = s == c->stream;
		for (int i = 0; i < l->n_ev; i++)
			if (l->evs[i].ev == ev)
				from = l->evs[i].s;
		for (int i = 0; i < l->n_fork && !known; i++)
			if (l->fork[i].s == s)
				known = 1;
		if (!known && l->n_fork < CG_MAX_JOIN) {
			/* s joins the capture: a fork */
			l->fork[l->n_fork].s = s;
			l->fork[l->n_fork].site = site;
			l->fork[l->n_fork].joined = 0;
			l->n_fork++;
		} else if (from && from != s && l->n_edge < 64) {
			l->edge[l->n_edge].from = from;
			l->edge[l->n_edge].to = s;
			l->n_edge++;
		}
	}
	pthread_mutex_unlock(&cap_lock);
}

/* A forked stream is joined if a chain of event waits leads from it back to
 * the origin stream. */
static int joined_locked(struct cg_capture *c, CUstream s, int depth)
{
	if (s == c->stream)
		return 1;
	if (depth > CG_MAX_JOIN)
		return 0;
	for (int i = 0; i < c->l->n_edge; i++)
		if (c->l->edge[i].from == s && joined_locked(c, c->l->edge[i].to, depth + 1))
			return 1;
	return 0;
}

int model_capture_unjoined(uint64_t id, CUstream *streams, uint32_t *sites, int max)
{
	struct cg_capture *c;
	int n = 0;
	pthread_mutex_lock(&cap_lock);
	c = cap_find_locked(id);
	if (c && c->l)
		for (int i = 0; i < c->l->n_fork && n < max; i++)
			if (!joined_locked(c, c->l->fork[i].s, 0)) {
				streams[n] = c->l->fork[i].s;
				sites[n] = c->l->fork[i].site;
				n++;
			}
	pthread_mutex_unlock(&cap_lock);
	return n;
}

void model_capture_plain_alloc(size_t size)
{
	struct cg_capture *c, *tmp;
	int me = cg_gettid();
	pthread_mutex_lock(&cap_lock);
	HASH_ITER(hh, captures, c, tmp)
	{
		if (c->tid == me) {
			c->malloc_bytes += size;
			break;
		}
	}
	pthread_mutex_unlock(&cap_lock);
}

static void capture_count_alloc(uint64_t id, size_t size)
{
	struct cg_capture *c;
	pthread_mutex_lock(&cap_lock);
	c = cap_find_locked(id);
	if (c) {
		c->n_alloc++;
		c->alloc_bytes += size;
	}
	pthread_mutex_unlock(&cap_lock);
}

/* "broken": the end of a capture that failed (901, 904, ...) linked back to
 * the first call seen to break it (issue 14): its API, rule, thread id and
 * name and site, beside the capture's begin thread and site. Written by
 * the end-capture call's thread after the driver answered. A capture broken
 * by nothing the shim saw (an unhooked call) says so. */
static void broken_record(const struct cap_snap *k, int rc)
{
	struct cg_rec r;
	char msg[768], bsite[200], csite[200];
	int n;
	cg_site_first(k->site, bsite, sizeof bsite);
	cg_site_first(k->br.site, csite, sizeof csite);
	rec_begin(&r, CG_L_ERROR, CGSHIM_EV_BROKEN);
	cap_fields(&r, k);
	rec_int(&r, "rc", rc);
	rec_str(&r, "err", cg_result_name(rc));
	rec_int(&r, "end_tid", cg_gettid());
	n = snprintf(msg, sizeof msg, "capture %llu (%s mode, stream 0x%llx), begun%s%s on thread %d%s%s%s, ended with %d",
		     (unsigned long long)k->id, mode_name(k->mode), (unsigned long long)(uintptr_t)k->stream,
		     bsite[0] ? " at " : "", bsite, k->tid, k->tname[0] ? " \"" : "", k->tname, k->tname[0] ? "\"" : "", rc);
	if (k->br.api) {
		rec_word(&r, "by_api", k->br.api);
		if (k->br.rule)
			rec_word(&r, "by_rule", k->br.rule);
		rec_int(&r, "by_rc", k->br.rc);
		rec_int(&r, "by_tid", k->br.tid);
		rec_str(&r, "by_thread", k->br.tname);
		rec_bool(&r, "by_other_thread", k->br.tid != k->tid);
		rec_site(&r, "by_site", k->br.site);
		if (n > 0 && (size_t)n < sizeof msg)
			snprintf(msg + n, sizeof msg - n, ": it was broken by %s on thread %d%s%s%s%s%s (%s%s%s)", k->br.api,
				 k->br.tid, k->br.tname[0] ? " \"" : "", k->br.tname, k->br.tname[0] ? "\"" : "",
				 csite[0] ? " at " : "", csite,
				 k->br.rule ? k->br.rule : "not predicted", k->br.rule ? ", named before the call" : "",
				 k->br.rc ? "" : "; the call itself succeeded");
	} else if (n > 0 && (size_t)n < sizeof msg) {
		snprintf(msg + n, sizeof msg - n,
			 ": no call the shim saw broke it (an unhooked call, or a lazy module load the driver made)");
	}
	rec_str(&r, "msg", msg);
	rec_end(&r);
}

void model_capture_end(uint64_t id, CUstream s, CUgraph graph, CUresult rc)
{
	struct cg_capture *c;
	struct cg_rec r;
	size_t fr = 0;
	int have_after;
	struct cap_snap k;
	pthread_mutex_lock(&cap_lock);
	c = cap_find_locked(id);
	if (c) {
		HASH_DEL(captures, c);
		if (rc != CUDA_SUCCESS && !c->invalid)
			tot.captures_bad++;
		cap_snap_locked(c, &k);
	}
	pthread_mutex_unlock(&cap_lock);
	if (!c)
		return;
	atomic_fetch_sub(&cg_live_captures, 1);
	begin_record(&k);
	have_after = sample_free(&fr);
	rec_begin(&r, CG_L_INFO, CGSHIM_EV_CAPTURE);
	rec_u64(&r, "capture", c->id);
	rec_hex(&r, "stream", (uintptr_t)c->stream);
	rec_word(&r, "mode", mode_name(c->mode));
	rec_int(&r, "begin_tid", c->tid);
	rec_hex(&r, "graph", (uintptr_t)graph);
	rec_int(&r, "rc", rc);
	rec_u64(&r, "dur_ns", cg_now_ns() - c->t0);
	rec_int(&r, "alloc_nodes", c->n_alloc);
	rec_u64(&r, "alloc_bytes", c->alloc_bytes);
	rec_u64(&r, "malloc_bytes", c->malloc_bytes);
	if (c->have_before && have_after) {
		long long delta = (long long)c->free_before - (long long)fr;
		rec_u64(&r, "free_before", c->free_before);
		rec_u64(&r, "free_after", fr);
		rec_int(&r, "delta", delta);
		rec_int(&r, "unattributed", delta - (long long)c->malloc_bytes);
	}
	rec_site(&r, "site", c->site);
	rec_end(&r);
	if (rc != CUDA_SUCCESS)
		broken_record(&k, rc);
	(void)s;
	free(c->l);
	if (!prepared) { /* the ending thread's next begin takes it: no calloc per capture */
		memset(c, 0, sizeof *c);
		prepared = c;
	} else {
		free(c);
	}
}

/* ====================================================================== */
/* graphs and executables                                                 */
/* ====================================================================== */

struct cg_graph {
	CUgraph h;
	int origin; /* 0 built, 1 captured, 2 cloned */
	uint64_t capture;
	uint32_t site;
	uint32_t gen;
	int n_mem, cap_mem;
	struct cg_mnode *mem;
	struct cg_summary *sum;
	uint32_t sum_gen;
	uint32_t cap_gen; /* gen at the end of its capture (0: not captured) */
	uint32_t n_nodes_cap;
	int pending;      /* execs holding a partial summary of this graph */
	CUgraphExec live_exec; /* latest live exec instantiated from it */
	UT_hash_handle hh;
};

struct cg_exec {
	/* Read by launches without gx_lock (model_exec_fast,
	 * model_exec_launched), possibly while another thread updates or
	 * destroys the exec, or reuses the struct for a new one: written
	 * (under gx_lock) with atomic stores, read with relaxed loads (plain
	 * movs on x86), and never cleared by the memset of a reused struct. */
	CUgraphExec h;
	int live;
	int unfreed_nodes; /* alloc nodes without a free node in the same graph */
	int foreign_frees; /* free nodes of allocations made by another graph */
	uint64_t flags;
	_Atomic long long launches;
	_Atomic(CUgraphExec) real; /* the exec behind h: h, or a re-instantiation */
	_Atomic int outstanding; /* graph allocations of the last launch not yet freed */
	/* Under gx_lock only. */
	CUgraph graph;
	uint32_t site;
	int n_mem;
	struct cg_mnode *mem;
	struct cg_summary *sum;
	uint32_t sum_gen; /* gen of graph the (partial) summary describes */
	int inst_dev;     /* device of the context it was instantiated in */
	unsigned devmask; /* devices its allocation nodes allocate on (bit d) */
	long long updates, update_failures;
	struct cg_exec *next_free;
	UT_hash_handle hh;
};
#define X_SET(x, f, v) __atomic_store_n(&(x)->f, (v), __ATOMIC_RELAXED)
#define X_GET(x, f) __atomic_load_n(&(x)->f, __ATOMIC_RELAXED)

static struct cg_graph *graphs;
static struct cg_exec *execs, *exec_free_list;

#define FAST_SLOTS 8192
#define FAST_TOMB ((struct cg_exec *)1)
static _Atomic(struct cg_exec *) fast_idx[FAST_SLOTS];
/* Set when an exec did not fit its neighbourhood of the index: only then
 * does a miss need the locked table (else a miss is an untracked exec). */
static _Atomic int fast_overflow;

static unsigned fast_hash(CUgraphExec e)
{
	uintptr_t x = (uintptr_t)e;
	x ^= x >> 17;
	x *= 0x9E3779B97F4A7C15ull;
	return (unsigned)(x >> 40) & (FAST_SLOTS - 1);
}

static void fast_insert(struct cg_exec *x)
{
	unsigned h = fast_hash(x->h);
	for (int i = 0; i < 64; i++) {
		unsigned k = (h + (unsigned)i) & (FAST_SLOTS - 1);
		struct cg_exec *cur = atomic_load_explicit(&fast_idx[k], memory_order_relaxed);
		if (!cur || cur == FAST_TOMB) {
			atomic_store_explicit(&fast_idx[k], x, memory_order_release);
			return;
		}
	}
	/* Full neighbourhood: the exec is still found through the locked table. */
	atomic_store(&fast_overflow, 1);
}

static void fast_remove(struct cg_exec *x)
{
	unsigned h = fast_hash(x->h);
	for (int i = 0; i < 64; i++) {
		unsigned k = (h + (unsigned)i) & (FAST_SLOTS - 1);
		struct cg_exec *cur = atomic_load_explicit(&fast_idx[k], memory_order_relaxed);
		if (!cur)
			return;
		if (cur == x) {
			atomic_store_explicit(&fast_idx[k], FAST_TOMB, memory_order_release);
			return;
		}
	}
}

CUgraphExec model_exec_real(struct cg_exec *x)
{
	return atomic_load_explicit(&x->real, memory_order_acquire);
}

struct cg_exec *model_exec_fast(CUgraphExec e)
{
	unsigned h = fast_hash(e);
	struct cg_exec *x;
	for (int i = 0; i < 64; i++) {
		x = atomic_load_explicit(&fast_idx[(h + (unsigned)i) & (FAST_SLOTS - 1)], memory_order_acquire);
		if (!x)
			break;
		if (x != FAST_TOMB && X_GET(x, h) == e && X_GET(x, live))
			return x;
	}
	if (!atomic_load_explicit(&fast_overflow, memory_order_relaxed))
		return NULL;
	pthread_mutex_lock(&gx_lock);
	HASH_FIND_PTR(execs, &e, x);
	pthread_mutex_unlock(&gx_lock);
	return x;
}

/* A launch of x runs free nodes of allocations other graphs made: those
 * allocations are freed (their executables' outstanding counts drop). */
static void exec_foreign_frees(struct cg_exec *x)
{
	CUdeviceptr d[16];
	int n = 0;
	pthread_mutex_lock(&gx_lock);
	for (int i = 0; i < x->n_mem && n < 16; i++)
		if (x->mem[i].is_free && !model_mnode_has(x->mem, x->n_mem, x->mem[i].dptr, 0))
			d[n++] = x->mem[i].dptr;
	pthread_mutex_unlock(&gx_lock);
	for (int i = 0; i < n; i++)
		model_alloc_freed(d[i]);
}

long long model_exec_launched(struct cg_exec *x, int *unfreed_before, int *autofree)
{
	long long n = atomic_fetch_add_explicit(&x->launches, 1, memory_order_relaxed) + 1;
	int unfreed_nodes = X_GET(x, unfreed_nodes);
	*autofree = (X_GET(x, flags) & CUDA_GRAPH_INSTANTIATE_FLAG_AUTO_FREE_ON_LAUNCH) != 0;
	*unfreed_before = n > 1 ? atomic_load_explicit(&x->outstanding, memory_order_relaxed) : 0;
	if (unfreed_nodes)
		atomic_store_explicit(&x->outstanding, unfreed_nodes, memory_order_relaxed);
	if (CG_UNLIKELY(X_GET(x, foreign_frees)))
		exec_foreign_frees(x);
	return n;
}

void model_exec_launch_failed(struct cg_exec *x)
{
	atomic_fetch_sub_explicit(&x->launches, 1, memory_order_relaxed);
}

static struct cg_graph *graph_find_locked(CUgraph g)
{
	struct cg_graph *x;
	HASH_FIND_PTR(graphs, &g, x);
	return x;
}

void model_summary_free(struct cg_summary *s)
{
	if (!s || atomic_fetch_sub_explicit(&s->refs, 1, memory_order_acq_rel) != 1)
		return;
	free(s->mem);
	if (s->det) {
		nodes_release(s->det, s->n_det);
		free(s->det);
	}
	free(s); /* nodes, ndeps and types live in the same block */
}

struct cg_summary *model_summary_ref(struct cg_summary *s)
{
	if (s)
		atomic_fetch_add_explicit(&s->refs, 1, memory_order_relaxed);
	return s;
}

struct node_ix {
	CUgraphNode node;
	uint32_t index;
};


/* Walk a graph through capture-safe driver queries: node list, types,
 * edges, memory-node parameters. No lock held. Done once per graph
 * generation (at end of capture or first use) and cached, so an update
 * compares cached summaries instead of walking two graphs. */
static struct cg_summary *summary_walk(CUgraph g)
{
	size_t n = 0, ne = 0, nm = 0;
	struct cg_summary *s;
	struct cg_mnode mem_small[16], *mem = mem_small;
	size_t mem_cap = 16;
	if (!drv_cuGraphGetNodes || !drv_cuGraphNodeGetType || drv_cuGraphGetNodes(g, NULL, &n) != CUDA_SUCCESS)
		return NULL;
	/* One block: header, node handles, dependency counts, types. */
	s = malloc(sizeof *s + (n + 1) * (sizeof *s->nodes + sizeof *s->ndeps + 1));
	if (!s)
		return NULL;
	memset(s, 0, sizeof *s);
	atomic_init(&s->refs, 1);
	s->nodes = (CUgraphNode *)(s + 1);
	s->ndeps = (uint16_t *)(s->nodes + n + 1);
	s->types = (uint8_t *)(s->ndeps + n + 1);
	memset(s->ndeps, 0, (n + 1) * sizeof *s->ndeps);
	if (n && drv_cuGraphGetNodes(g, s->nodes, &n) != CUDA_SUCCESS)
		goto fail;
	s->n_nodes = (uint32_t)n;
	/* node details (nodes.c): best effort, the summary stands without */
	s->det = n ? malloc(n * sizeof *s->det) : NULL;
	for (size_t i = 0; i < n; i++) {
		CUgraphNodeType t = 0;
		drv_cuGraphNodeGetType(s->nodes[i], &t);
		s->types[i] = (uint8_t)t;
		if (s->det && nodes_described(t))
			nodes_describe(s->nodes[i], t, (uint32_t)i, &s->det[s->n_det++]);
		if (t != CU_GRAPH_NODE_TYPE_MEM_ALLOC && t != CU_GRAPH_NODE_TYPE_MEM_FREE)
			continue;
		if (nm == mem_cap) {
			struct cg_mnode *grown = malloc(2 * mem_cap * sizeof *grown);
			if (!grown)
				goto fail;
			memcpy(grown, mem, nm * sizeof *mem);
			if (mem != mem_small)
				free(mem);
			mem = grown;
			mem_cap *= 2;
		}
		struct cg_mnode *m = &mem[nm];
		memset(m, 0, sizeof *m);
		if (t == CU_GRAPH_NODE_TYPE_MEM_ALLOC) {
			CUDA_MEM_ALLOC_NODE_PARAMS p;
			memset(&p, 0, sizeof p);
			if (drv_cuGraphMemAllocNodeGetParams &&
			    drv_cuGraphMemAllocNodeGetParams(s->nodes[i], &p) == CUDA_SUCCESS) {
				m->dptr = p.dptr;
				m->size = p.bytesize;
				m->ipc = p.poolProps.handleTypes != CU_MEM_HANDLE_TYPE_NONE;
				if (p.poolProps.location.type == CU_MEM_LOCATION_TYPE_DEVICE &&
				    p.poolProps.location.id >= 0 && p.poolProps.location.id < CG_MAX_DEV)
					m->dev = (uint8_t)(p.poolProps.location.id + 1);
			}
			s->n_alloc++;
		} else {
			if (drv_cuGraphMemFreeNodeGetParams)
				drv_cuGraphMemFreeNodeGetParams(s->nodes[i], &m->dptr);
			m->is_free = 1;
			s->n_free++;
		}
		nm++;
	}
	if (drv_cuGraphGetEdges && drv_cuGraphGetEdges(g, NULL, NULL, &ne) == CUDA_SUCCESS && ne) {
		/* dependency counts in O(N + E): node -> index, open addressing;
		 * scratch on the stack for graphs of a few hundred nodes */
		size_t cap = 16;
		while (cap < 2 * n)
			cap *= 2;
		size_t bytes = cap * sizeof(struct node_ix) + 2 * ne * sizeof(CUgraphNode);
		_Alignas(16) unsigned char scratch_small[8192];
		unsigned char *scratch = bytes <= sizeof scratch_small ? scratch_small : malloc(bytes);
		if (scratch) {
			struct node_ix *ix = (struct node_ix *)scratch;
			CUgraphNode *from = (CUgraphNode *)(ix + cap), *to = from + ne;
			memset(ix, 0, cap * sizeof *ix);
			if (drv_cuGraphGetEdges(g, from, to, &ne) == CUDA_SUCCESS) {
				for (size_t i = 0; i < n; i++) {
					size_t h = ((uintptr_t)s->nodes[i] >> 4) * 0x9E3779B97F4A7C15ull >> 20 & (cap - 1);
					while (ix[h].node)
						h = (h + 1) & (cap - 1);
					ix[h].node = s->nodes[i];
					ix[h].index = (uint32_t)i;
				}
				s->n_edges = (uint32_t)ne;
				for (size_t e = 0; e < ne; e++) {
					size_t h = ((uintptr_t)to[e] >> 4) * 0x9E3779B97F4A7C15ull >> 20 & (cap - 1);
					while (ix[h].node && ix[h].node != to[e])
						h = (h + 1) & (cap - 1);
					if (ix[h].node)
						s->ndeps[ix[h].index]++;
				}
			}
			if (scratch != scratch_small)
				free(scratch);
		}
	}
	{
		/* The topology hash (see struct cg_summary): per node one
		 * multiply-xorshift step, so a 1,000-node walk pays ~1 us once
		 * and every later update of this generation compares 8 bytes. */
		uint64_t h = 0x9E3779B97F4A7C15ull ^ ((uint64_t)s->n_nodes << 32 | s->n_edges);
		for (uint32_t i = 0; i < s->n_nodes; i++) {
			h ^= (uint64_t)s->types[i] << 16 | s->ndeps[i];
			h *= 0xff51afd7ed558ccdull;
			h ^= h >> 33;
		}
		s->topo = h | 1;
	}
	/* Details, exactly as many as described (none: no array) */
	if (s->det && !s->n_det) {
		free(s->det);
		s->det = NULL;
	} else if (s->det && s->n_det < n) {
		struct cg_ndet *d = realloc(s->det, s->n_det * sizeof *d);
		if (d)
			s->det = d;
	}
	/* Memory nodes, exactly as many as found (one slot kept for callers
	 * that index mem[0] of an empty list). */
	s->mem = malloc((nm + 1) * sizeof *s->mem);
	if (!s->mem)
		goto fail;
	memcpy(s->mem, mem, nm * sizeof *mem);
	memset(&s->mem[nm], 0, sizeof *s->mem);
	if (mem != mem_small)
		free(mem);
	return s;
fail:
	if (mem != mem_small)
		free(mem);
	model_summary_free(s);
	return NULL;
}

/* Pools of memory nodes: the walk only sees properties; the pool comes
 * from what the shim recorded when the allocation was made. */
static void summary_fill_pools(struct cg_summary *s, const struct cg_graph *gr)
{
	if (!s || !gr)
		return;
	for (uint32_t i = 0; i < s->n_alloc + s->n_free; i++) {
		struct cg_mnode *m = &s->mem[i];
		if (m->is_free)
			continue;
		for (int k = 0; k < gr->n_mem; k++)
			if (!gr->mem[k].is_free && gr->mem[k].dptr == m->dptr) {
				m->pool = gr->mem[k].pool;
				m->site = gr->mem[k].site;
				m->pool_default = gr->mem[k].pool_default;
				if (!m->dev)
					m->dev = gr->mem[k].dev;
				break;
			}
	}
}

void model_graph_new(CUgraph g, int origin, uint64_t capture, uint32_t site)
{
	struct cg_graph *x;
	if (!g)
		return;
	pthread_mutex_lock(&gx_lock);
	x = graph_find_locked(g);
	if (!x) {
		x = calloc(1, sizeof *x);
		if (!x) {
			pthread_mutex_unlock(&gx_lock);
			cg_degrade("graph table");
			return;
		}
		x->h = g;
		HASH_ADD_PTR(graphs, h, x);
		oom_check("graph table");
		tot.graphs++;
	}
	x->origin = origin;
	x->capture = capture;
	x->site = site;
	x->gen++;
	pthread_mutex_unlock(&gx_lock);
}

static void alloc_release_graph(CUgraph g, const struct cg_mnode *mem, int n);
static void alloc_release_exec(CUgraphExec e, const struct cg_mnode *mem, int n, int outstanding);

void model_graph_destroy(CUgraph g)
{
	struct cg_graph *x;
	pthread_mutex_lock(&gx_lock);
	x = graph_find_locked(g);
	if (x)
		HASH_DEL(graphs, x);
	pthread_mutex_unlock(&gx_lock);
	if (x) {
		alloc_release_graph(g, x->mem, x->n_mem);
		model_summary_free(x->sum);
		free(x->mem);
		free(x);
	}
}

void model_graph_mutated(CUgraph g)
{
	struct cg_graph *x;
	pthread_mutex_lock(&gx_lock);
	x = graph_find_locked(g);
	if (x)
		x->gen++;
	pthread_mutex_unlock(&gx_lock);
}

static uint8_t mnode_dev(const struct cg_mnode *m);

void model_graph_add_mnode(CUgraph g, const struct cg_mnode *m_in)
{
	struct cg_graph *x;
	struct cg_mnode mm = *m_in, *m = &mm;
	if (!mm.is_free && !mm.dev)
		mm.dev = mnode_dev(&mm); /* before gx_lock: it may take mem_lock */
	pthread_mutex_lock(&gx_lock);
	x = graph_find_locked(g);
	if (!x) {
		x = calloc(1, sizeof *x);
		if (x) {
			x->h = g;
			HASH_ADD_PTR(graphs, h, x);
			oom_check("graph table");
			tot.graphs++;
		}
	}
	if (x) {
		if (x->n_mem == x->cap_mem) {
			int nc = x->cap_mem ? x->cap_mem * 2 : 4;
			struct cg_mnode *nm = realloc(x->mem, (size_t)nc * sizeof *nm);
			if (nm) {
				x->mem = nm;
				x->cap_mem = nc;
			}
		}
		if (x->n_mem < x->cap_mem)
			x->mem[x->n_mem++] = *m;
		x->gen++;
	}
	pthread_mutex_unlock(&gx_lock);
}

/* The graph's cached summary if current (a reference), else NULL; *gen
 * gets the graph's generation (0 when the graph is unknown). */
static struct cg_summary *summary_cached(CUgraph g, uint32_t *gen)
{
	struct cg_graph *x;
	struct cg_summary *s = NULL;
	pthread_mutex_lock(&gx_lock);
	x = graph_find_locked(g);
	if (x && x->sum && x->sum_gen == x->gen)
		s = model_summary_ref(x->sum);
	*gen = x ? x->gen : 0;
	pthread_mutex_unlock(&gx_lock);
	return s;
}

struct cg_summary *model_graph_summary(CUgraph g)
{
	struct cg_graph *x;
	uint32_t gen;
	struct cg_summary *s = summary_cached(g, &gen);
	if (s)
		return s;
	s = summary_walk(g);
	if (!s)
		return NULL;
	pthread_mutex_lock(&gx_lock);
	x = graph_find_locked(g);
	if (x) {
		summary_fill_pools(s, x);
		if (x->gen == gen) {
			model_summary_free(x->sum);
			x->sum = model_summary_ref(s);
			x->sum_gen = gen;
		}
	}
	pthread_mutex_unlock(&gx_lock);
	return s;
}

CUgraph model_summary_graph(const struct cg_summary *s)
{
	struct cg_graph *x, *tmp;
	CUgraph g = NULL;
	pthread_mutex_lock(&gx_lock);
	HASH_ITER(hh, graphs, x, tmp)
	if (x->sum == s && x->sum_gen == x->gen) {
		g = x->h;
		break;
	}
	pthread_mutex_unlock(&gx_lock);
	return g;
}

struct cg_summary *model_graph_summary_cached(CUgraph g)
{
	uint32_t gen;
	return summary_cached(g, &gen);
}

/* Alloc and free nodes among n memory nodes. */
static void mnode_counts(const struct cg_mnode *m, int n, uint32_t *n_alloc, uint32_t *n_free)
{
	*n_alloc = *n_free = 0;
	for (int i = 0; i < n; i++) {
		if (m[i].is_free)
			(*n_free)++;
		else
			(*n_alloc)++;
	}
}

int model_graph_captured(CUgraph g, size_t n_nodes, uint32_t *n_alloc, uint32_t *n_free)
{
	struct cg_graph *x;
	pthread_mutex_lock(&gx_lock);
	x = graph_find_locked(g);
	*n_alloc = *n_free = 0;
	if (x) {
		x->cap_gen = x->gen;
		x->n_nodes_cap = (uint32_t)n_nodes;
		mnode_counts(x->mem, x->n_mem, n_alloc, n_free);
	}
	pthread_mutex_unlock(&gx_lock);
	return x != NULL;
}

struct cg_summary *model_graph_partial(CUgraph g)
{
	struct cg_graph *x;
	struct cg_summary *s = NULL;
	pthread_mutex_lock(&gx_lock);
	x = graph_find_locked(g);
	if (x && x->origin == 1 && x->cap_gen && x->cap_gen == x->gen) {
		s = calloc(1, sizeof *s);
		if (s)
			s->mem = malloc(((size_t)x->n_mem + 1) * sizeof *s->mem);
		if (s && s->mem) {
			atomic_init(&s->refs, 1);
			s->partial = 1;
			s->n_nodes = x->n_nodes_cap;
			if (x->n_mem) /* x->mem is NULL for a graph without memory nodes */
				memcpy(s->mem, x->mem, (size_t)x->n_mem * sizeof *s->mem);
			memset(&s->mem[x->n_mem], 0, sizeof *s->mem);
			mnode_counts(x->mem, x->n_mem, &s->n_alloc, &s->n_free);
		} else if (s) {
			free(s);
			s = NULL;
		}
	}
	pthread_mutex_unlock(&gx_lock);
	return s;
}

static void exec_set_summary(struct cg_exec *x, struct cg_summary *sum);

void model_graph_settle(CUgraph g)
{
	struct cg_graph *gr;
	struct cg_summary *full;
	int pending;
	pthread_mutex_lock(&gx_lock);
	gr = graph_find_locked(g);
	pending = gr ? gr->pending : 0;
	pthread_mutex_unlock(&gx_lock);
	if (!pending)
		return;
	full = model_graph_summary(g); /* walks now, g still as instantiated */
	pthread_mutex_lock(&gx_lock);
	gr = graph_find_locked(g);
	if (gr) {
		struct cg_exec *x, *tmp;
		HASH_ITER(hh, execs, x, tmp)
		{
			if (x->graph != g || !x->sum || !x->sum->partial || !x->sum_gen)
				continue;
			if (full && x->sum_gen == gr->gen)
				exec_set_summary(x, model_summary_ref(full)); /* releases the claim */
			else
				x->sum_gen = 0; /* changed unseen: the exec keeps its partial view */
		}
		gr->pending = 0;
	}
	pthread_mutex_unlock(&gx_lock);
	model_summary_free(full);
}

static struct cg_exec *exec_find_locked(CUgraphExec e)
{
	struct cg_exec *x;
	HASH_FIND_PTR(execs, &e, x);
	return x;
}

static void exec_view_fill(const struct cg_exec *x, struct cg_exec_view *out)
{
	out->h = x->h;
	out->graph = x->graph;
	out->flags = x->flags;
	out->site = x->site;
	out->launches = atomic_load(&x->launches);
	out->mem_nodes = x->n_mem;
	out->unfreed_nodes = x->unfreed_nodes;
	out->live = x->live;
}

int model_graph_live_exec(CUgraph g, struct cg_exec_view *out)
{
	struct cg_graph *gr;
	struct cg_exec *x = NULL;
	pthread_mutex_lock(&gx_lock);
	gr = graph_find_locked(g);
	if (gr && gr->live_exec)
		x = exec_find_locked(gr->live_exec);
	if (x && x->live && x->graph == g)
		exec_view_fill(x, out);
	else
		x = NULL;
	pthread_mutex_unlock(&gx_lock);
	return x != NULL;
}

int model_graph_info(CUgraph g, int *origin, uint64_t *capture, uint32_t *site, int *mem_nodes)
{
	struct cg_graph *gr;
	int ok = 0;
	pthread_mutex_lock(&gx_lock);
	gr = graph_find_locked(g);
	if (gr) {
		*origin = gr->origin;
		*capture = gr->capture;
		*site = gr->site;
		*mem_nodes = gr->n_mem;
		ok = 1;
	}
	pthread_mutex_unlock(&gx_lock);
	return ok;
}

/* x stops waiting for the full summary of x->graph (its partial view is
 * replaced, or x goes): the graph's count of such execs drops. */
static void exec_release_claim_locked(struct cg_exec *x)
{
	if (x->sum && x->sum->partial && x->sum_gen) {
		struct cg_graph *gr = graph_find_locked(x->graph);
		if (gr && gr->pending)
			gr->pending--;
	}
	x->sum_gen = 0;
}

static void exec_set_summary(struct cg_exec *x, struct cg_summary *sum)
{
	if (sum != x->sum)
		exec_release_claim_locked(x); /* a partial view replaced (update, rewrite) */
	/* x->mem borrows the summary's memory nodes: summaries are immutable
	 * and shared by reference, so an exec costs no copy of its nodes. */
	model_summary_free(x->sum);
	x->sum = sum;
	x->mem = sum ? sum->mem : NULL;
	x->n_mem = sum && sum->mem ? (int)(sum->n_alloc + sum->n_free) : 0;
	int unfreed = 0, foreign = 0;
	x->devmask = 0;
	for (int i = 0; i < x->n_mem; i++) {
		if (!x->mem[i].is_free && x->mem[i].dev)
			x->devmask |= 1u << CG_MNODE_DEV(&x->mem[i]);
		/* a free node of an allocation made elsewhere / an allocation
		 * with no free node in this graph */
		int other = model_mnode_has(x->mem, x->n_mem, x->mem[i].dptr, !x->mem[i].is_free);
		if (x->mem[i].is_free)
			foreign += !other;
		else
			unfreed += !other;
	}
	X_SET(x, unfreed_nodes, unfreed);
	X_SET(x, foreign_frees, foreign);
}

static void alloc_set_exec(CUgraphExec e, const struct cg_mnode *mem, int n);

void model_exec_new(CUgraphExec e, CUgraph g, uint64_t flags, uint32_t site, struct cg_summary *sum)
{
	struct cg_exec *x;
	struct cg_graph *gr;
	int dev = cg_current_device(); /* the exec belongs to the instantiating context */
	pthread_mutex_lock(&gx_lock);
	x = exec_find_locked(e);
	if (!x) {
		x = exec_free_list;
		if (x)
			exec_free_list = x->next_free;
		else
			x = calloc(1, sizeof *x);
		if (!x) {
			pthread_mutex_unlock(&gx_lock);
			model_summary_free(sum);
			cg_degrade("exec table");
			return;
		}
		/* a launch may still read the lock-free fields of a reused struct */
		memset(&x->graph, 0, sizeof *x - offsetof(struct cg_exec, graph));
		X_SET(x, h, e);
		HASH_ADD_PTR(execs, h, x);
		oom_check("exec table");
		tot.execs++;
	}
	exec_release_claim_locked(x); /* a reused handle: before x->graph changes */
	x->graph = g;
	x->inst_dev = dev;
	X_SET(x, flags, flags);
	x->site = site;
	atomic_store(&x->real, e);
	atomic_store(&x->launches, 0);
	atomic_store(&x->outstanding, 0);
	exec_set_summary(x, sum);
	X_SET(x, live, 1);
	x->sum_gen = 0;
	gr = graph_find_locked(g);
	if (gr) {
		gr->live_exec = e;
		if (sum && sum->partial) {
			x->sum_gen = gr->gen;
			gr->pending++;
		}
	}
	fast_insert(x);
	pthread_mutex_unlock(&gx_lock);
	if (x->n_mem)
		alloc_set_exec(e, x->mem, x->n_mem);
}

int model_exec_view(CUgraphExec e, struct cg_exec_view *out)
{
	struct cg_exec *x;
	pthread_mutex_lock(&gx_lock);
	x = exec_find_locked(e);
	if (x)
		exec_view_fill(x, out);
	pthread_mutex_unlock(&gx_lock);
	return x != NULL;
}

int model_exec_mnodes(CUgraphExec e, struct cg_mnode **out)
{
	struct cg_exec *x;
	int n = 0;
	*out = NULL;
	pthread_mutex_lock(&gx_lock);
	x = exec_find_locked(e);
	if (x && x->n_mem) {
		*out = malloc((size_t)x->n_mem * sizeof **out);
		if (*out) {
			memcpy(*out, x->mem, (size_t)x->n_mem * sizeof **out);
			n = x->n_mem;
		}
	}
	pthread_mutex_unlock(&gx_lock);
	return n;
}

struct cg_summary *model_exec_summary(CUgraphExec e)
{
	struct cg_exec *x;
	struct cg_summary *s = NULL;
	CUgraph g = NULL;
	pthread_mutex_lock(&gx_lock);
	x = exec_find_locked(e);
	if (x && x->sum && x->sum->partial)
		g = x->graph;
	else if (x)
		s = model_summary_ref(x->sum);
	pthread_mutex_unlock(&gx_lock);
	if (!g)
		return s;
	/* First need of the full summary: its graph is still as instantiated
	 * (changes and destruction through hooks settle it first). */
	model_graph_settle(g);
	pthread_mutex_lock(&gx_lock);
	x = exec_find_locked(e);
	if (x && x->sum && !x->sum->partial)
		s = model_summary_ref(x->sum);
	pthread_mutex_unlock(&gx_lock);
	return s;
}

void model_update_summaries(CUgraphExec e, CUgraph g, struct cg_summary **old, struct cg_summary **nu)
{
	struct cg_exec *x;
	struct cg_graph *gr;
	int have_old = 0, have_nu = 0;
	*old = *nu = NULL;
	pthread_mutex_lock(&gx_lock);
	x = exec_find_locked(e);
	if (!x || !x->sum || !x->sum->partial) {
		*old = x ? model_summary_ref(x->sum) : NULL;
		have_old = 1;
	}
	gr = graph_find_locked(g);
	if (gr && gr->sum && gr->sum_gen == gr->gen) {
		*nu = model_summary_ref(gr->sum);
		have_nu = 1;
	}
	pthread_mutex_unlock(&gx_lock);
	/* Otherwise as the two calls would (the exec's first, which may settle
	 * and walk the graph it was instantiated from). */
	if (!have_old)
		*old = model_exec_summary(e);
	if (!have_nu)
		*nu = model_graph_summary(g);
}

void model_exec_updated(CUgraphExec e, CUgraph g, struct cg_summary *sum)
{
	struct cg_exec *x;
	struct cg_summary *old = NULL; /* keeps the old memory nodes alive for the release */
	struct cg_mnode *old_mem = NULL;
	int old_n = 0;
	pthread_mutex_lock(&gx_lock);
	tot.updates++;
	x = exec_find_locked(e);
	if (x) {
		x->updates++;
		if (x->n_mem && x->sum) {
			old = model_summary_ref(x->sum);
			old_mem = x->mem;
			old_n = x->n_mem;
		}
		/* The exec now runs the new graph's parameters, memory nodes
		 * included (measured: it adopts the new allocations). */
		exec_set_summary(x, sum);
		sum = NULL;
	}
	pthread_mutex_unlock(&gx_lock);
	model_summary_free(sum);
	if (old) {
		alloc_release_exec(e, old_mem, old_n, 0);
		model_summary_free(old);
	}
	if (x && x->n_mem)
		alloc_set_exec(e, x->mem, x->n_mem);
	(void)g;
}

void model_exec_update_failed(CUgraphExec e)
{
	struct cg_exec *x;
	pthread_mutex_lock(&gx_lock);
	tot.updates++;
	tot.update_failures++;
	x = exec_find_locked(e);
	if (x)
		x->update_failures++;
	pthread_mutex_unlock(&gx_lock);
}

void model_exec_rewritten(CUgraphExec app, CUgraphExec real_new, CUgraph g, struct cg_summary *sum)
{
	struct cg_exec *x;
	struct cg_graph *gr;
	pthread_mutex_lock(&gx_lock);
	tot.rewrites++;
	x = exec_find_locked(app);
	if (x) {
		exec_set_summary(x, sum); /* before x->graph changes: releases a claim on the old one */
		x->graph = g;
		sum = NULL;
		atomic_store(&x->outstanding, 0);
		atomic_store_explicit(&x->real, real_new, memory_order_release);
		gr = graph_find_locked(g);
		if (gr)
			gr->live_exec = app;
	}
	pthread_mutex_unlock(&gx_lock);
	model_summary_free(sum);
}

static void leak_records(CUgraphExec e, const struct cg_mnode *mem, int n, const char *when);

void model_exec_destroy(CUgraphExec e)
{
	struct cg_exec *x;
	struct cg_graph *gr;
	struct cg_mnode *mem = NULL;
	struct cg_summary *sum = NULL;
	int n = 0, outstanding = 0;
	long long launches = 0;
	CUgraph g = NULL;
	pthread_mutex_lock(&gx_lock);
	x = exec_find_locked(e);
	if (x) {
		HASH_DEL(execs, x);
		fast_remove(x);
		X_SET(x, live, 0);
		launches = atomic_load(&x->launches);
		outstanding = atomic_load(&x->outstanding);
		g = x->graph;
		gr = graph_find_locked(x->graph);
		if (gr && gr->live_exec == e)
			gr->live_exec = NULL;
		exec_release_claim_locked(x);
		sum = x->sum; /* keeps mem alive until the leak records are out */
		mem = x->mem;
		n = x->n_mem;
		x->mem = NULL;
		x->n_mem = 0;
		x->sum = NULL;
		tot.launches_destroyed += launches;
		x->next_free = exec_free_list;
		exec_free_list = x;
	}
	pthread_mutex_unlock(&gx_lock);
	if (!x)
		return;
	if (launches) { /* an exec never launched has no count to report */
		struct cg_rec r;
		rec_begin(&r, CG_L_INFO, CGSHIM_EV_LAUNCHES);
		rec_hex(&r, "exec", (uintptr_t)e);
		rec_hex(&r, "graph", (uintptr_t)g);
		rec_int(&r, "count", launches);
		rec_str(&r, "reason", "destroy");
		rec_end(&r);
	}
	if (outstanding && launches)
		leak_records(e, mem, n, "exec_destroy");
	alloc_release_exec(e, mem, n, outstanding && launches);
	model_summary_free(sum);
}

/* ====================================================================== */
/* pools and allocations                                                  */
/* ====================================================================== */

struct cg_pool {
	CUmemoryPool h;
	int dev, is_default, ipc, destroyed;
	uint32_t site;
	long long allocs;
	unsigned long long bytes;
	UT_hash_handle hh;
};

/* 104 bytes with the hash handle (a 112-byte heap chunk): the pool, stream
 * and thread of an allocation are in its "alloc" record and the graph's
 * memory nodes, not repeated here. */
/* An entry lives while something refers to its address: the graph that
 * holds the allocation node (graph), the executable whose launches make it
 * (exec), or, once both are gone, an allocation that executable left
 * outstanding (orphan) until it is freed. The table stays as large as the
 * live graphs and executables, however many addresses a process cycles
 * through. */
struct cg_alloc {
	CUdeviceptr dptr;
	size_t size;
	uint64_t capture;
	CUgraph graph;    /* graph holding the allocation node; NULL once destroyed */
	CUgraphExec exec; /* exec whose launches make this allocation */
	uint32_t site;
	uint32_t orphan; /* its exec went with allocations outstanding: kept until freed */
	UT_hash_handle hh;
};

static struct cg_pool *pools;
static struct cg_alloc *allocs;
static struct {
	CUmemoryPool pool;
	uint32_t site;
} cur_pool[CG_MAX_DEV];
/* Graph allocations the shim attributed to each device (under mem_lock). */
static struct {
	long long nodes;
	unsigned long long bytes;
} dev_alloc[CG_MAX_DEV];

/* Device (plus one) of a graph allocation node whose device is not known
 * yet: its pool's, else the calling context's (a capture-safe query). */
static uint8_t mnode_dev(const struct cg_mnode *m)
{
	int d = -1;
	if (m->dev)
		return m->dev;
	if (m->pool) {
		struct cg_pool *x;
		pthread_mutex_lock(&mem_lock);
		HASH_FIND_PTR(pools, &m->pool, x);
		if (x)
			d = x->dev;
		pthread_mutex_unlock(&mem_lock);
	}
	if (d < 0 || d >= CG_MAX_DEV)
		d = cg_current_device();
	dev_seen(d);
	return (uint8_t)(d + 1);
}

static struct cg_pool *pool_get_locked(CUmemoryPool p)
{
	struct cg_pool *x;
	HASH_FIND_PTR(pools, &p, x);
	if (!x && p) {
		x = calloc(1, sizeof *x);
		if (!x)
			return NULL;
		x->h = p;
		x->dev = -1;
		HASH_ADD_PTR(pools, h, x);
		oom_check("pool table");
		tot.pools++;
	}
	return x;
}

void model_pool_new(CUmemoryPool p, const CUmemPoolProps *props, uint32_t site)
{
	struct cg_pool *x;
	pthread_mutex_lock(&mem_lock);
	x = pool_get_locked(p);
	if (x) {
		x->site = site;
		x->destroyed = 0;
		if (props) {
			x->ipc = props->handleTypes != CU_MEM_HANDLE_TYPE_NONE;
			x->dev = props->location.id;
		}
	}
	pthread_mutex_unlock(&mem_lock);
}

void model_pool_destroy(CUmemoryPool p)
{
	struct cg_pool *x;
	pthread_mutex_lock(&mem_lock);
	HASH_FIND_PTR(pools, &p, x);
	if (x)
		x->destroyed = 1;
	pthread_mutex_unlock(&mem_lock);
}

void model_pool_seen(CUmemoryPool p, int dev, int is_default)
{
	struct cg_pool *x;
	pthread_mutex_lock(&mem_lock);
	x = pool_get_locked(p);
	if (x) {
		if (dev >= 0)
			x->dev = dev;
		if (is_default)
			x->is_default = 1;
	}
	if (dev >= 0 && dev < CG_MAX_DEV && !cur_pool[dev].pool && is_default)
		cur_pool[dev].pool = p;
	pthread_mutex_unlock(&mem_lock);
	dev_seen(dev);
}

void model_device_set_pool(int dev, CUmemoryPool p, uint32_t site)
{
	if (dev < 0 || dev >= CG_MAX_DEV)
		return;
	pthread_mutex_lock(&mem_lock);
	cur_pool[dev].pool = p;
	cur_pool[dev].site = site;
	pool_get_locked(p);
	pthread_mutex_unlock(&mem_lock);
	dev_seen(dev);
}

CUmemoryPool model_device_pool(int dev, uint32_t *site)
{
	CUmemoryPool p = NULL;
	if (dev < 0 || dev >= CG_MAX_DEV)
		return NULL;
	pthread_mutex_lock(&mem_lock);
	p = cur_pool[dev].pool;
	if (site)
		*site = cur_pool[dev].site;
	pthread_mutex_unlock(&mem_lock);
	return p;
}

int model_pool_info(CUmemoryPool p, int *ipc, int *is_default, uint32_t *site)
{
	struct cg_pool *x;
	int ok = 0;
	pthread_mutex_lock(&mem_lock);
	HASH_FIND_PTR(pools, &p, x);
	if (x) {
		*ipc = x->ipc;
		*is_default = x->is_default;
		*site = x->site;
		ok = 1;
	}
	pthread_mutex_unlock(&mem_lock);
	return ok;
}

void model_alloc_graph(const struct cg_mnode *m, CUstream s, uint64_t capture, CUgraph g, const char *api)
{
	model_alloc_graph_access(m, s, capture, g, api, NULL, 0);
}

/* "D:rw", "D:r" or "D:none" per access descriptor (a location that is not
 * a device: "?"); at most 16. */
static void access_rec(struct cg_rec *r, const CUmemAccessDesc *acc, size_t n)
{
	rec_open(r, "access", '[');
	for (size_t i = 0; i < n && i < 16; i++) {
		char t[32], *o = t;
		if (acc[i].location.type == CU_MEM_LOCATION_TYPE_DEVICE)
			o = rec_fmt_i64_(o, acc[i].location.id);
		else
			*o++ = '?';
		*o++ = ':';
		o = stpcpy(o, acc[i].flags == CU_MEM_ACCESS_FLAGS_PROT_READWRITE ? "rw"
			      : acc[i].flags == CU_MEM_ACCESS_FLAGS_PROT_READ    ? "r"
										 : "none");
		rec_elem_str(r, t);
	}
	rec_close(r, ']');
}

void model_alloc_graph_access(const struct cg_mnode *m_in, CUstream s, uint64_t capture, CUgraph g, const char *api,
			      const CUmemAccessDesc *acc, size_t nacc)
{
	struct cg_alloc *a;
	struct cg_pool *p;
	struct cg_rec r;
	struct cg_mnode mm = *m_in, *m = &mm;
	int is_default = 0, ipc = m->ipc, dev;
	uint32_t pool_site = 0;
	if (!mm.dev)
		mm.dev = mnode_dev(&mm);
	dev = CG_MNODE_DEV(m);
	pthread_mutex_lock(&mem_lock);
	HASH_FIND(hh, allocs, &m->dptr, sizeof m->dptr, a);
	if (!a) {
		a = calloc(1, sizeof *a);
		if (a) {
			a->dptr = m->dptr;
			HASH_ADD(hh, allocs, dptr, sizeof a->dptr, a);
			oom_check("allocation table");
		}
	}
	if (a) {
		a->size = m->size;
		a->capture = capture;
		a->graph = g;
		a->site = m->site;
		a->exec = NULL;
	}
	p = m->pool ? pool_get_locked(m->pool) : NULL;
	if (p) {
		p->allocs++;
		p->bytes += m->size;
		is_default = p->is_default;
		ipc = ipc || p->ipc;
		pool_site = p->site;
	}
	tot.alloc_nodes++;
	tot.alloc_bytes += m->size;
	if (dev >= 0 && dev < CG_MAX_DEV) {
		dev_alloc[dev].nodes++;
		dev_alloc[dev].bytes += m->size;
	}
	pthread_mutex_unlock(&mem_lock);
	if (capture)
		capture_count_alloc(capture, m->size);
	rec_begin(&r, CG_L_INFO, CGSHIM_EV_ALLOC);
	rec_word(&r, "api", api);
	rec_hex(&r, "dptr", m->dptr);
	rec_u64(&r, "size", m->size);
	rec_hex(&r, "pool", (uintptr_t)m->pool);
	rec_bool(&r, "pool_default", is_default);
	rec_bool(&r, "ipc", ipc);
	rec_int(&r, "dev", dev);
	if (acc && nacc)
		access_rec(&r, acc, nacc);
	rec_hex(&r, "stream", (uintptr_t)s);
	rec_u64(&r, "capture", capture);
	rec_hex(&r, "graph", (uintptr_t)g);
	rec_site(&r, "site", m->site);
	rec_site(&r, "pool_site", pool_site);
	rec_end(&r);
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

int model_alloc_lookup(CUdeviceptr p, uint64_t *capture, CUgraph *graph, size_t *size, uint32_t *site)
{
	struct cg_alloc *a;
	int ok = 0;
	pthread_mutex_lock(&mem_lock);
	HASH_FIND(hh, allocs, &p, sizeof p, a);
	if (a) {
		*capture = a->capture;
		*graph = a->graph;
		*size = a->size;
		*site = a->site;
		ok = 1;
	}
	pthread_mutex_unlock(&mem_lock);
	return ok;
}

/* Executables whose launches make these allocations. */
static void alloc_set_exec(CUgraphExec e, const struct cg_mnode *mem, int n)
{
	pthread_mutex_lock(&mem_lock);
	for (int i = 0; i < n; i++) {
		struct cg_alloc *a;
		if (mem[i].is_free)
			continue;
		HASH_FIND(hh, allocs, &mem[i].dptr, sizeof mem[i].dptr, a);
		if (!a) {
			a = calloc(1, sizeof *a);
			if (!a)
				continue;
			a->dptr = mem[i].dptr;
			a->size = mem[i].size;
			a->site = mem[i].site;
			HASH_ADD(hh, allocs, dptr, sizeof a->dptr, a);
			oom_check("allocation table");
		}
		a->exec = e;
	}
	pthread_mutex_unlock(&mem_lock);
}

/* Executable e no longer makes these allocations (destroyed, or updated to
 * other ones): entries nothing refers to go; with allocations outstanding
 * from its launches they stay, as orphans, until freed. */
static void alloc_release_exec(CUgraphExec e, const struct cg_mnode *mem, int n, int outstanding)
{
	pthread_mutex_lock(&mem_lock);
	for (int i = 0; i < n; i++) {
		struct cg_alloc *a;
		if (mem[i].is_free)
			continue;
		HASH_FIND(hh, allocs, &mem[i].dptr, sizeof mem[i].dptr, a);
		if (!a || a->exec != e)
			continue;
		a->exec = NULL;
		if (outstanding)
			a->orphan = 1;
		else if (!a->graph && !a->orphan) {
			HASH_DEL(allocs, a);
			free(a);
		}
	}
	pthread_mutex_unlock(&mem_lock);
}

/* Graph g is destroyed: its allocation nodes no longer name the entries. */
static void alloc_release_graph(CUgraph g, const struct cg_mnode *mem, int n)
{
	pthread_mutex_lock(&mem_lock);
	for (int i = 0; i < n; i++) {
		struct cg_alloc *a;
		if (mem[i].is_free)
			continue;
		HASH_FIND(hh, allocs, &mem[i].dptr, sizeof mem[i].dptr, a);
		if (!a || a->graph != g)
			continue;
		a->graph = NULL;
		if (!a->exec && !a->orphan) {
			HASH_DEL(allocs, a);
			free(a);
		}
	}
	pthread_mutex_unlock(&mem_lock);
}

void model_alloc_freed(CUdeviceptr p)
{
	struct cg_alloc *a;
	CUgraphExec e = NULL;
	pthread_mutex_lock(&mem_lock);
	HASH_FIND(hh, allocs, &p, sizeof p, a);
	if (a) {
		e = a->exec;
		if (!a->exec && !a->graph) { /* an orphan, or nothing refers to it: done */
			HASH_DEL(allocs, a);
			free(a);
		}
	}
	pthread_mutex_unlock(&mem_lock);
	if (e) {
		struct cg_exec *x = model_exec_fast(e);
		if (x && atomic_load(&x->outstanding) > 0)
			atomic_fetch_sub(&x->outstanding, 1);
	}
}

static void leak_records(CUgraphExec e, const struct cg_mnode *mem, int n, const char *when)
{
	for (int i = 0; i < n; i++) {
		if (mem[i].is_free || model_mnode_has(mem, n, mem[i].dptr, 1))
			continue;
		cg_rule_leak(e, &mem[i], when);
		pthread_mutex_lock(&mem_lock);
		tot.leaks++;
		pthread_mutex_unlock(&mem_lock);
	}
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
	pthread_mutex_lock(&cap_lock);
	pthread_mutex_lock(&gx_lock);
	pthread_mutex_lock(&mem_lock);
	pthread_mutex_lock(&last_lock);
}

void cg_model_unlock_all(void)
{
	pthread_mutex_unlock(&last_lock);
	pthread_mutex_unlock(&mem_lock);
	pthread_mutex_unlock(&gx_lock);
	pthread_mutex_unlock(&cap_lock);
	cg_site_unlock();
}

/* In the child the locks taken by cg_model_lock_all are initialised again
 * rather than unlocked: they belong to the parent's thread (see
 * cg_policy_atfork_child), and the child's only thread is the one here. */
void cg_model_lock_reset(void)
{
	pthread_mutex_init(&last_lock, NULL);
	pthread_mutex_init(&mem_lock, NULL);
	pthread_mutex_init(&gx_lock, NULL);
	pthread_mutex_init(&cap_lock, NULL);
	cg_site_lock_reset();
}

void cg_model_after_fork_child(void)
{
	/* The child has one thread; captures of the parent's other threads
	 * do not exist here. The CUDA context is not usable in a forked
	 * child anyway; keep the tables for the exit summary. */
	struct cg_capture *c, *tmp;
	HASH_ITER(hh, captures, c, tmp)
	{
		HASH_DEL(captures, c);
		free(c->l);
		free(c);
	}
	atomic_store(&cg_live_captures, 0);
}

/* One graphmem record for device dev (four driver queries, made only when
 * the info-level record is written and no capture is live). Returns 0
 * when the attributes could not be read. */
static int graphmem_dev(int dev, const char *when, CUgraphExec e, int exec_dev, int launch_dev,
			unsigned long long exec_bytes)
{
	cuuint64_t v[4] = {0, 0, 0, 0};
	struct cg_rec r;
	for (int i = 0; i < 4; i++)
		if (real_cuDeviceGetGraphMemAttribute(dev, (CUgraphMem_attribute)i, &v[i]) != CUDA_SUCCESS)
			return 0;
	rec_begin(&r, CG_L_INFO, CGSHIM_EV_GRAPHMEM);
	rec_int(&r, "dev", dev);
	rec_u64(&r, "used", v[0]);
	rec_u64(&r, "used_high", v[1]);
	rec_u64(&r, "reserved", v[2]);
	rec_u64(&r, "reserved_high", v[3]);
	rec_str(&r, "when", when);
	if (e) {
		rec_hex(&r, "exec", (uintptr_t)e);
		rec_int(&r, "exec_dev", exec_dev);
		rec_u64(&r, "exec_bytes", exec_bytes);
		if (launch_dev != exec_dev)
			rec_int(&r, "launch_dev", launch_dev);
	} else {
		/* exit: what the model holds for the device */
		CUmemoryPool def = NULL, cur;
		struct cg_pool *p, *ptmp;
		long long nodes;
		unsigned long long bytes;
		pthread_mutex_lock(&mem_lock);
		HASH_ITER(hh, pools, p, ptmp)
		if (p->is_default && p->dev == dev) {
			def = p->h;
			break;
		}
		cur = cur_pool[dev].pool;
		nodes = dev_alloc[dev].nodes;
		bytes = dev_alloc[dev].bytes;
		pthread_mutex_unlock(&mem_lock);
		if (def)
			rec_hex(&r, "default_pool", (uintptr_t)def);
		if (cur)
			rec_hex(&r, "current_pool", (uintptr_t)cur);
		rec_int(&r, "alloc_nodes", nodes);
		rec_u64(&r, "alloc_bytes", bytes);
	}
	rec_end(&r);
	return 1;
}

/* Graph memory per device. e: the exec whose first launch took the sample
 * (the app's handle): one record per device its allocation nodes allocate
 * on (the instantiating context's device when it has none), whatever
 * context launched it (launch_dev names that one when it differs). NULL
 * (exit): one record per device the process was seen using. */
static void graphmem_sample(const char *when, CUgraphExec e)
{
	unsigned mask = 0;
	int exec_dev = 0, launch_dev = 0;
	unsigned long long by[CG_MAX_DEV] = {0};
	if (!cg_log_on(CG_L_INFO) || atomic_load(&cg_live_captures) || !real_cuDeviceGetGraphMemAttribute)
		return;
	launch_dev = cg_current_device();
	if (e) {
		struct cg_exec *x;
		pthread_mutex_lock(&gx_lock);
		x = exec_find_locked(e);
		if (x) {
			exec_dev = x->inst_dev;
			mask = x->devmask;
			for (int i = 0; i < x->n_mem; i++)
				if (!x->mem[i].is_free && x->mem[i].dev)
					by[CG_MNODE_DEV(&x->mem[i])] += x->mem[i].size;
		} else {
			exec_dev = launch_dev;
		}
		pthread_mutex_unlock(&gx_lock);
		if (!mask)
			mask = 1u << exec_dev;
	} else {
		mask = atomic_load_explicit(&devs_seen, memory_order_relaxed) | 1u << launch_dev;
	}
	for (int d = 0; d < CG_MAX_DEV; d++)
		if (mask & 1u << d)
			(void)graphmem_dev(d, when, e, exec_dev, launch_dev, by[d]);
}

void cg_model_graphmem(const char *when, CUgraphExec e)
{
	graphmem_sample(when, e);
}

void cg_model_exit_summary(void)
{
	struct cg_exec *x, *tmp;
	struct cg_pool *p, *ptmp;
	long long launches = tot.launches_destroyed, n_exec_live = 0;
	struct cg_rec r;

	/* Executables still alive: their launch counts and outstanding
	 * graph allocations. */
	pthread_mutex_lock(&gx_lock);
	HASH_ITER(hh, execs, x, tmp)
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
	pthread_mutex_unlock(&gx_lock);
	pthread_mutex_lock(&gx_lock);
	HASH_ITER(hh, execs, x, tmp)
	{
		if (atomic_load(&x->outstanding) > 0 && atomic_load(&x->launches) > 0 && x->n_mem) {
			struct cg_mnode *mem = malloc((size_t)x->n_mem * sizeof *mem);
			int n = x->n_mem;
			CUgraphExec h = x->h;
			if (!mem)
				continue;
			memcpy(mem, x->mem, (size_t)n * sizeof *mem);
			pthread_mutex_unlock(&gx_lock);
			leak_records(h, mem, n, "exit");
			free(mem);
			pthread_mutex_lock(&gx_lock);
		}
	}
	pthread_mutex_unlock(&gx_lock);
	graphmem_sample("exit", NULL);

	/* Pools: copy the table under the lock, ask the driver outside it. */
	{
		struct cg_pool *copy = NULL;
		int np = 0, k = 0;
		pthread_mutex_lock(&mem_lock);
		np = (int)HASH_COUNT(pools);
		copy = np ? malloc((size_t)np * sizeof *copy) : NULL;
		if (copy)
			HASH_ITER(hh, pools, p, ptmp)
			copy[k++] = *p;
		pthread_mutex_unlock(&mem_lock);
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
		pthread_mutex_lock(&cap_lock);
		HASH_ITER(hh, captures, c, ctmp)
		{
			n_open_all++;
			if (n_open < CAP_NOTE_MAX) {
				cap_snap_locked(c, &open_caps[n_open++]);
				c->brec = 0;
			}
		}
		pthread_mutex_unlock(&cap_lock);
		for (int i = 0; i < n_open; i++)
			abandoned_record(&open_caps[i], "exit", NULL, 0, 0);
	}

	rec_begin(&r, CG_L_INFO, CGSHIM_EV_SUMMARY);
	rec_int(&r, "graphs", tot.graphs);
	rec_int(&r, "execs", tot.execs);
	rec_int(&r, "execs_live", n_exec_live);
	rec_int(&r, "launches", launches);
	rec_int(&r, "updates", tot.updates);
	rec_int(&r, "update_failures", tot.update_failures);
	rec_int(&r, "failures", cg_failures_total());
	rec_int(&r, "captures", tot.captures);
	rec_int(&r, "captures_invalidated", tot.captures_bad);
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
	rec_int(&r, "pools", tot.pools);
	rec_int(&r, "alloc_nodes", tot.alloc_nodes);
	rec_u64(&r, "alloc_bytes", (unsigned long long)tot.alloc_bytes);
	rec_int(&r, "rewrites", tot.rewrites);
	rec_int(&r, "violations", cg_violations_total());
	rec_int(&r, "leaks", tot.leaks);
	rec_int(&r, "meminfo_skipped", atomic_load(&meminfo_skipped));
	rec_int(&r, "meminfo_reused", atomic_load(&meminfo_reused));
	cg_rules_summary(&r);
	cg_door_summary(&r);
	rec_end(&r);
}
