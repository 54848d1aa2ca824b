/*
 * shim/model/captures.c -- stream captures: begin, end, invalidation, cross-stream links.
 * See model.h for the lock contract, model-int.h for what the model's files share.
 */
#include "model-int.h"

struct cap_line model_cap_line;

void model_capture_records_set(const struct model_capture_records *w)
{
	model_cap_line.rec = *w;
}

/* Hand a record's facts to the writer, when one is set. */
#define CAPREC(kind, ...)                                                                                              \
	do {                                                                                                           \
		if (model_caprec)                                                                                      \
			model_caprec->kind(__VA_ARGS__);                                                               \
	} while (0)

CG_HOT void model_capture_snap_locked(const struct cg_capture *c, struct cap_snap *o)
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

/* The live captures (model-int.h model_cap_line, CAP_EACH) keep both ends
 * in one line: a begin links, an end unlinks. */
CG_TLS struct cg_cap_tally model_tally;
static struct cg_capture *cap_find_locked(uint64_t id);

/* A capture's entry, zeroed, 64-aligned (model-int.h): NULL when out of memory. */
static struct cg_capture *cap_alloc(void)
{
	void *p = NULL;
	if (posix_memalign(&p, 64, sizeof(struct cg_capture)))
		return NULL;
	return memset(p, 0, sizeof(struct cg_capture));
}

void model_captures_forget(void)
{
	model_cap_list.head = model_cap_list.tail = NULL;
}

static void cap_link_locked(struct cg_capture *c)
{
	c->next = NULL;
	c->prev = model_cap_list.tail;
	if (model_cap_list.tail)
		model_cap_list.tail->next = c;
	else
		model_cap_list.head = c;
	model_cap_list.tail = c;
}

static void cap_unlink_locked(struct cg_capture *c)
{
	if (c->prev)
		c->prev->next = c->next;
	else
		model_cap_list.head = c->next;
	if (c->next)
		c->next->prev = c->prev;
	else
		model_cap_list.tail = c->prev;
	c->next = c->prev = NULL;
}
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

CG_HOT int model_stream_capture(CUstream s, int ptsz, uint64_t *id, CUgraph *graph, int *status)
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
		struct cg_capture *c;
		int found = 0, me = cg_gettid();
		pthread_mutex_lock(&model_cap_lock);
		CAP_EACH(c)
		{
			if (c->stream == s && (s || !c->ptsz || c->tid == me)) {
				cid = c->id;
				found = 1;
				break;
			}
		}
		pthread_mutex_unlock(&model_cap_lock);
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

static CG_TLS int presample_have, presample_steady, presample_pending;
static CG_TLS size_t presample_free;
static CG_TLS uint32_t presample_key;
static CG_TLS struct cg_capture *prepared;

/* The steady judgement's key: the begin site, or without one (no
 * backtraces, no Python frames) the stream, with the top bit set so it
 * never equals a site id. Without it such a capture loop was never
 * steady: every boundary sampled cuMemGetInfo and every record was
 * written (bench/split.sh: backtraces off made the 64-node loop slower,
 * 1.160 against 1.055 with them). Keyed by stream, two kinds of capture
 * on one stream alternate shapes and are simply never steady. */
static uint32_t steady_key(uint32_t site, CUstream s)
{
	uint64_t h;
	if (site)
		return site;
	h = (uint64_t)(uintptr_t)s * 0x9E3779B97F4A7C15ull;
	return (uint32_t)(h >> 33) | 0x80000000u;
}

CG_HOT void model_capture_presample(uint32_t site, CUstream s)
{
	/* A begin whose site still waits for its walk is not judged: its id
	 * may not be its stack's (site.h). */
	presample_pending = cg_site_pending(site);
	presample_key = steady_key(site, s);
	presample_steady = !presample_pending && model_meminfo_steady_begin(presample_key);
	model_meminfo_begin_was(presample_steady);
	presample_have = !presample_steady && model_sample_free(&presample_free);
	if (!prepared)
		prepared = cap_alloc();
	if (prepared) /* the name now: a syscall, kept out of the begin's window */
		cg_thread_name(prepared->tname);
}

CG_HOT void model_capture_prepare_blocking(int blocking)
{
	if (prepared)
		prepared->blocking = blocking;
}

CG_HOT void model_capture_begin(uint64_t id, CUstream s, int mode, int ptsz, CUgraph into, uint32_t site,
				const struct cg_call *bc, const char *via, CUgraph graph)
{
	struct cg_capture *c = prepared;
	size_t fr = presample_free;
	int have = presample_have, steady = presample_steady;
	presample_have = presample_steady = 0;
	prepared = NULL;
	if (!c)
		c = cap_alloc();
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
	c->steady = steady;
	c->site_pending = presample_pending;
	c->steady_key = presample_key;
	presample_pending = 0;
	presample_key = 0;
	c->noted0 = cg_noted_total();
	c->brec = bc != NULL;
	if (bc)
		c->bcall = *bc;
	c->bvia = via;
	c->bgraph = graph;
	c->t0 = bc && bc->t_out ? bc->t_out : cg_now_ns();
	pthread_mutex_lock(&model_cap_lock);
	cap_link_locked(c);
	model_tot.captures++;
	/* The begin hook's end: the deferred record's stamp and post_ns. */
	c->bend = bc && bc->t0 ? cg_now_ns() : 0;
	/* The tally follows this capture unless this thread's earlier one is
	 * still live (two at once: neither is counted whole). One whose end
	 * another thread made is over. */
	if (model_tally.cap && cap_find_locked(model_tally.cap)) {
		model_tally.off = 1;
	} else {
		model_tally.cap = id;
		model_tally.stream = s;
		model_tally.kernels = 0;
		model_tally.h = 0;
		model_tally.off = !id;
		model_tally.rec = 0;
		model_tally.esc = 0;
	}
	pthread_mutex_unlock(&model_cap_lock);
	atomic_fetch_add(&cg_live_captures, 1);
}

CG_HOT long model_tally_take(uint64_t id)
{
	long k = -1;
	if (!id || model_tally.cap != id)
		return -1;
	if (!model_tally.off)
		k = model_tally.kernels;
	model_tally.cap = 0;
	model_tally.stream = NULL;
	model_tally.rec = 0;
	return k;
}

static int conflicts_locked(const struct cg_capture *c, int me, int mode)
{
	if (mode == CU_STREAM_CAPTURE_MODE_RELAXED)
		return 0;
	return (c->tid == me && c->mode != CU_STREAM_CAPTURE_MODE_RELAXED) ||
	       (mode == CU_STREAM_CAPTURE_MODE_GLOBAL && c->mode == CU_STREAM_CAPTURE_MODE_GLOBAL);
}

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
	cg_thread_name(tname);
	pthread_mutex_lock(&model_cap_lock);
	c = cap_find_locked(id);
	if (c)
		breaker_set_locked(c, api, rule, rc, cg_gettid(), tname, site);
	pthread_mutex_unlock(&model_cap_lock);
}

void model_capture_refused(const char *api)
{
	struct cg_capture *c;
	struct cap_snap inv[CAP_NOTE_MAX], ab[CAP_NOTE_MAX];
	int n_inv = 0, n_ab = 0, n_conf = 0, me = cg_gettid(), mode = model_thread_mode();
	uint32_t site;
	if (!atomic_load(&cg_live_captures))
		return;
	pthread_mutex_lock(&model_cap_lock);
	CAP_EACH(c)
	{
		if (!conflicts_locked(c, me, mode))
			continue;
		n_conf++;
		if (!c->invalid && n_inv < CAP_NOTE_MAX) {
			c->invalid = 1;
			model_tot.captures_bad++;
			model_capture_snap_locked(c, &inv[n_inv++]);
		} else if (c->invalid && !c->named && n_ab < CAP_NOTE_MAX) {
			c->named = 1;
			model_capture_snap_locked(c, &ab[n_ab++]);
			c->brec = 0; /* written with the abandoned record */
		}
	}
	pthread_mutex_unlock(&model_cap_lock);
	if (n_conf && !n_inv && !n_ab)
		return; /* refused by captures already named */
	/* The capture is dead already: the site costs nothing it could widen. */
	site = cg_site_here(2);
	if (!n_conf) {
		char tname[16];
		cg_thread_name(tname);
		pthread_mutex_lock(&model_cap_lock);
		unexplained.api = api;
		unexplained.tid = me;
		memcpy(unexplained.tname, tname, sizeof tname);
		unexplained.site = site;
		unexplained.ts = cg_now_ns();
		pthread_mutex_unlock(&model_cap_lock);
		return;
	}
	/* A refusal no rule predicted is still the first breaking call seen. */
	for (int i = 0; i < n_inv; i++)
		model_capture_breaker(inv[i].id, api, NULL, CUDA_ERROR_STREAM_CAPTURE_UNSUPPORTED, site);
	for (int i = 0; i < n_inv; i++)
		CAPREC(invalidated, &inv[i], "call", api, site, NULL, 0, 0);
	for (int i = 0; i < n_ab; i++)
		CAPREC(abandoned, &ab[i], "refused", api, CUDA_ERROR_STREAM_CAPTURE_UNSUPPORTED, site);
}

static int on_stream_locked(const struct cg_capture *c, CUstream s, int ptsz, int me)
{
	return c->stream == s && (s || !c->ptsz || !ptsz || c->tid == me);
}

void model_capture_begin_refused(CUstream s, int ptsz, const char *api, int rc)
{
	struct cg_capture *c;
	struct cap_snap k;
	int found = 0, me = cg_gettid();
	if (!atomic_load(&cg_live_captures))
		return;
	pthread_mutex_lock(&model_cap_lock);
	CAP_EACH(c)
	{
		if (on_stream_locked(c, s, ptsz, me) && !c->named) {
			c->named = 1;
			model_capture_snap_locked(c, &k);
			c->brec = 0;
			found = 1;
			break;
		}
	}
	pthread_mutex_unlock(&model_cap_lock);
	if (found)
		CAPREC(abandoned, &k, "begin_failed", api, rc, cg_site_here(2));
}

/* Mark the capture (by id, else by origin stream) invalidated; fills k and
 * returns 1 when this is news. Under cap_lock. */
static int seen_invalid_locked(CUstream s, int ptsz, uint64_t id, struct cap_snap *k, const char **by_api, int *by_tid,
			       uint32_t *by_site)
{
	struct cg_capture *c = NULL;
	int me = cg_gettid();
	if (id)
		c = cap_find_locked(id);
	if (!c)
		CAP_EACH(c)
	if (on_stream_locked(c, s, ptsz, me))
		break;
	if (!c || c->invalid)
		return 0;
	c->invalid = 1;
	model_tot.captures_bad++;
	model_capture_snap_locked(c, k);
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
	pthread_mutex_lock(&model_cap_lock);
	news = seen_invalid_locked(s, ptsz, id, &k, &by_api, &by_tid, &by_site);
	pthread_mutex_unlock(&model_cap_lock);
	if (news)
		CAPREC(invalidated, &k, api ? "capture_info" : "shim_query", api, 0, by_api, by_tid, by_site);
}

/* The live capture of that id; among several of one id (0: the driver
 * gave none) the latest begun, as the hash table answered before. */
static CG_HOT struct cg_capture *cap_find_locked(uint64_t id)
{
	struct cg_capture *c = model_cap_list.tail;
	while (c && c->id != id)
		c = c->prev;
	return c;
}

void model_capture_invalidate(uint64_t id, const char *api, uint32_t site)
{
	struct cg_capture *c;
	struct cap_snap k;
	int news = 0;
	pthread_mutex_lock(&model_cap_lock);
	c = cap_find_locked(id);
	if (c && !c->invalid) {
		c->invalid = 1;
		model_tot.captures_bad++;
		model_capture_snap_locked(c, &k);
		news = 1;
	}
	pthread_mutex_unlock(&model_cap_lock);
	if (news)
		CAPREC(invalidated, &k, "call", api, site, NULL, 0, 0);
}

/* The view of capture c the rules and the records read. */
static void cap_view(const struct cg_capture *c, struct cg_capture_view *out)
{
	out->id = c->id;
	out->stream = c->stream;
	out->mode = c->mode;
	out->tid = c->tid;
	out->site = c->site;
	out->named = c->named;
	out->broken = c->invalid || c->br.api;
	memcpy(out->tname, c->tname, sizeof out->tname);
	out->forks = c->l && c->l->n_fork;
}

CG_HOT int model_capture_find(uint64_t id, struct cg_capture_view *out)
{
	struct cg_capture *c;
	int ok = 0;
	pthread_mutex_lock(&model_cap_lock);
	c = cap_find_locked(id);
	if (c) {
		cap_view(c, out);
		ok = 1;
	}
	pthread_mutex_unlock(&model_cap_lock);
	return ok;
}

int model_capture_conflict(int thread_mode_now, struct cg_capture_view *out)
{
	struct cg_capture *c;
	int me = cg_gettid(), found = 0;
	if (!atomic_load(&cg_live_captures) || thread_mode_now == CU_STREAM_CAPTURE_MODE_RELAXED)
		return 0;
	pthread_mutex_lock(&model_cap_lock);
	CAP_EACH(c)
	{
		int hit = 0;
		if (c->tid == me && c->mode != CU_STREAM_CAPTURE_MODE_RELAXED)
			hit = 1; /* this thread's own non-relaxed capture */
		else if (thread_mode_now == CU_STREAM_CAPTURE_MODE_GLOBAL && c->mode == CU_STREAM_CAPTURE_MODE_GLOBAL)
			hit = 1; /* any thread's global capture */
		if (hit) {
			cap_view(c, out);
			found = 1;
			break;
		}
	}
	pthread_mutex_unlock(&model_cap_lock);
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
	pthread_mutex_lock(&model_cap_lock);
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
	pthread_mutex_unlock(&model_cap_lock);
}

int model_capture_event_known(CUevent ev)
{
	struct cg_capture *c;
	int known = 0;
	pthread_mutex_lock(&model_cap_lock);
	CAP_EACH(c)
	{
		for (int i = 0; c->l && i < c->l->n_ev && !known; i++)
			known = c->l->evs[i].ev == ev;
		if (known)
			break;
	}
	pthread_mutex_unlock(&model_cap_lock);
	return known;
}

static void view_locked(const struct cg_capture *c, struct cg_capture_view *out)
{
	cap_view(c, out);
}

int model_capture_of_event(CUevent ev, struct cg_capture_view *out)
{
	struct cg_capture *c;
	int known = 0;
	if (!atomic_load_explicit(&cg_live_captures, memory_order_relaxed))
		return 0;
	pthread_mutex_lock(&model_cap_lock);
	CAP_EACH(c)
	{
		for (int i = 0; c->l && i < c->l->n_ev && !known; i++)
			known = c->l->evs[i].ev == ev;
		if (known) {
			view_locked(c, out);
			break;
		}
	}
	pthread_mutex_unlock(&model_cap_lock);
	return known;
}

void model_capture_event_forget(CUevent ev)
{
	struct cg_capture *c;
	pthread_mutex_lock(&model_cap_lock);
	CAP_EACH(c)
	{
		for (int i = 0; c->l && i < c->l->n_ev; i++)
			if (c->l->evs[i].ev == ev)
				c->l->evs[i].ev = NULL; /* slot kept: edges name streams, not events */
	}
	pthread_mutex_unlock(&model_cap_lock);
}

int model_capture_any(struct cg_capture_view *out)
{
	struct cg_capture *c;
	int found = 0;
	if (model_capture_conflict(model_thread_mode(), out))
		return 1; /* the one this thread's mode collides with first */
	if (!atomic_load_explicit(&cg_live_captures, memory_order_relaxed))
		return 0;
	pthread_mutex_lock(&model_cap_lock);
	CAP_EACH(c)
	{
		view_locked(c, out);
		found = 1;
		break;
	}
	pthread_mutex_unlock(&model_cap_lock);
	return found;
}

int model_capture_blocking(struct cg_capture_view *out)
{
	struct cg_capture *c;
	int found = 0;
	if (!atomic_load_explicit(&cg_live_captures, memory_order_relaxed))
		return 0;
	pthread_mutex_lock(&model_cap_lock);
	CAP_EACH(c)
	{
		if (c->blocking) {
			view_locked(c, out);
			found = 1;
			break;
		}
	}
	pthread_mutex_unlock(&model_cap_lock);
	return found;
}

void model_capture_wait_event(uint64_t id, CUstream s, CUevent ev, uint32_t site)
{
	struct cg_capture *c;
	struct cap_links *l;
	pthread_mutex_lock(&model_cap_lock);
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
	pthread_mutex_unlock(&model_cap_lock);
}

/* s is being destroyed: it leaves every capture's forks (a destroyed stream
 * is no longer in a capture, and its handle may be reused or never be
 * queried again: joins.c asks the driver about each fork). */
void model_capture_stream_gone(CUstream s)
{
	struct cg_capture *c;
	if (!atomic_load_explicit(&cg_live_captures, memory_order_relaxed))
		return;
	pthread_mutex_lock(&model_cap_lock);
	CAP_EACH(c)
	{
		struct cap_links *l = c->l;
		for (int i = 0; l && i < l->n_fork; i++)
			if (l->fork[i].s == s) {
				l->fork[i] = l->fork[--l->n_fork];
				break;
			}
	}
	pthread_mutex_unlock(&model_cap_lock);
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

CG_HOT int model_capture_unjoined(uint64_t id, CUstream *streams, uint32_t *sites, int max)
{
	struct cg_capture *c;
	int n = 0;
	pthread_mutex_lock(&model_cap_lock);
	c = cap_find_locked(id);
	if (c && c->l)
		for (int i = 0; i < c->l->n_fork && n < max; i++)
			if (!joined_locked(c, c->l->fork[i].s, 0)) {
				streams[n] = c->l->fork[i].s;
				sites[n] = c->l->fork[i].site;
				n++;
			}
	pthread_mutex_unlock(&model_cap_lock);
	return n;
}

void model_capture_plain_alloc(size_t size)
{
	struct cg_capture *c;
	int me = cg_gettid();
	pthread_mutex_lock(&model_cap_lock);
	CAP_EACH(c)
	{
		if (c->tid == me) {
			c->malloc_bytes += size;
			break;
		}
	}
	pthread_mutex_unlock(&model_cap_lock);
}

/* A steady capture that broke nothing and saw no violation or failure
 * anywhere since its begin repeats the one before, so far: its records go
 * to debug level (call.h, CG_CALL_REPEAT). */
static int cap_repeats(const struct cg_capture *c)
{
	return c->steady && !c->invalid && !c->br.api && cg_noted_total() == c->noted0;
}

/* The steady judgement's facts of ended capture c: to the table now, or
 * left in out for the caller's model_meminfo_steady_ended. */
static CG_HOT void steady_end_facts(const struct cg_capture *c, struct model_cap_end *out, int skipped, int have,
				    long long unattributed)
{
	if (c->site_pending)
		return;
	if (!out) {
		model_meminfo_steady_capture(c->steady_key, c->id, skipped, have, unattributed);
		return;
	}
	out->steady_do = 1;
	out->steady_key = c->steady_key;
	out->steady_skipped = skipped;
	out->steady_have = have;
	out->steady_unattributed = unattributed;
}

int model_capture_end(uint64_t id, CUstream s, CUgraph graph, CUresult rc)
{
	return model_capture_end_facts(id, s, graph, rc, 0, NULL);
}

CG_HOT int model_capture_end_facts(uint64_t id, CUstream s, CUgraph graph, CUresult rc, uint64_t t_end,
				   struct model_cap_end *out)
{
	struct cg_capture *c;
	struct ev_capture f;
	size_t fr = 0;
	int have_after, repeat, shown;
	uint64_t dur;
	struct cap_snap k;
	if (out)
		memset(out, 0, sizeof *out);
	pthread_mutex_lock(&model_cap_lock);
	c = cap_find_locked(id);
	if (c) {
		cap_unlink_locked(c);
		if (rc != CUDA_SUCCESS && !c->invalid)
			model_tot.captures_bad++;
	}
	pthread_mutex_unlock(&model_cap_lock);
	if (!c)
		return 0;
	atomic_fetch_sub(&cg_live_captures, 1);
	/* Its begin site's walk, if it waited (cg_site_here_deferred): now,
	 * out of the capture, whatever the log level. */
	cg_site_settle(c->site);
	repeat = rc == CUDA_SUCCESS && cap_repeats(c);
	if (repeat)
		c->bcall.flags |= CG_CALL_REPEAT;
	/* c is this thread's alone once unlinked: its facts are taken for a
	 * record written only (a repeat's begin is only counted) */
	shown = c->brec && model_cap_line.rec.begin_shown && model_cap_line.rec.begin_shown(&c->bcall);
	if (shown || rc != CUDA_SUCCESS)
		model_capture_snap_locked(c, &k);
	/* the graph into the model before the records, which name its id */
	if (out && graph) {
		model_graph_new(graph, 1, id, 0, repeat);
		out->graph_taken = 1;
	}
	if (shown)
		model_cap_line.rec.begin(&k);
	have_after = !c->steady && model_sample_free(&fr);
	dur = (t_end ? t_end : cg_now_ns()) - c->t0; /* the end's own clock: no read of its own */
	if (out) {
		out->key = c->steady_key ? c->steady_key : steady_key(c->site, c->stream);
		out->site = c->site;
		out->dur_ns = dur;
		out->alloc_bytes = c->alloc_bytes;
		out->n_alloc = c->n_alloc;
	}
	f = (struct ev_capture){.capture = c->id,
				.stream = (uintptr_t)c->stream,
				.mode = model_capture_mode_name(c->mode),
				.begin_tid = c->tid,
				.graph = (uintptr_t)graph,
				.rc = rc,
				.dur_ns = dur,
				.alloc_nodes = c->n_alloc,
				.alloc_bytes = c->alloc_bytes,
				.malloc_bytes = c->malloc_bytes,
				.meminfo = model_meminfo_word(c->steady),
				.site = c->site};
	/* its ids (issue 35, the hook put the graph in the model), for a
	 * record written: a repeat's is at debug (cg_log_life_level) */
	if (graph && cg_log_on(repeat ? CG_L_DEBUG : CG_L_INFO))
		f.ids = model_ids_of(graph, NULL);
	if (c->have_before && have_after) {
		long long delta = (long long)c->free_before - (long long)fr;
		f.free_before = c->free_before;
		f.free_after = fr;
		f.delta = delta;
		f.unattributed = delta - (long long)c->malloc_bytes;
		f.has_free_before = f.has_free_after = f.has_delta = f.has_unattributed = 1;
		steady_end_facts(c, out, 0, 1, delta - (long long)c->malloc_bytes);
	} else {
		steady_end_facts(c, out, c->steady, 0, 0);
	}
	if (model_caprec)
		model_caprec->ended(&f, repeat);
	if (rc != CUDA_SUCCESS)
		CAPREC(broken, &k, rc);
	(void)s;
	if (c->l) /* a capture with no fork or event: no call into free */
		free(c->l);
	if (!prepared) { /* the ending thread's next begin takes it: no calloc per capture */
		memset(c, 0, sizeof *c);
		prepared = c;
	} else {
		free(c);
	}
	return repeat;
}

/* n captured allocations of size bytes (the allocation hook: 1, or 0 to
 * ask the repeat alone) counted in capture id, in the same round trip. */
CG_HOT int model_capture_count_alloc(uint64_t id, int n, size_t size)
{
	struct cg_capture *c;
	int repeat = 0;
	pthread_mutex_lock(&model_cap_lock);
	c = cap_find_locked(id);
	if (c) {
		c->n_alloc += n;
		c->alloc_bytes += size;
		repeat = cap_repeats(c);
	}
	pthread_mutex_unlock(&model_cap_lock);
	return repeat;
}

CG_HOT int model_capture_repeat(uint64_t id)
{
	return model_capture_count_alloc(id, 0, 0);
}
