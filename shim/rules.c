/* shim/rules.c -- rule table, switches, violation and mismatch records. */
#include <signal.h>
#include <stdio.h>
#include <stdatomic.h>
#include <string.h>

#include "call.h"
#include "cgshim/record.h"
#include "config.h"
#include "rules.h"
#include "site.h"

/* doc: the rule's page, written on every violation so a log line leads to
 * the explanation (CGSHIM_RULE_DOC: relative to the source tree). */
static const struct {
	const char *id, *slug, *sev, *title, *doc;
} rule_tab[R_COUNT] = {
	{"", "", "", "", ""},
#define RULE(e, id, slug, sev, title) {id, slug, sev, title, CGSHIM_RULE_DOC_DIR id ".md"},
#include "rules.def"
#undef RULE
};

static _Atomic long long n_viol[R_COUNT];

const char *cg_rule_id(int rule)
{
	return rule > 0 && rule < R_COUNT ? rule_tab[rule].id : "";
}

int cg_rule_on(int rule)
{
	const char *off = cg_cfg.rules_off, *id = cg_rule_id(rule);
	size_t l = strlen(id);
	if (!off || !*off)
		return 1;
	for (const char *p = strstr(off, id); p; p = strstr(p + 1, id))
		if ((p == off || p[-1] == ',' || p[-1] == ' ') && (p[l] == 0 || p[l] == ',' || p[l] == ' '))
			return 0;
	return 1;
}

int cg_violation_begin(struct cg_rec *r, int rule, const char *api, int predicted_rc, const char *msg)
{
	int sev_err = !strcmp(rule_tab[rule].sev, "error");
	if (!cg_rule_on(rule)) {
		r->on = 0;
		return 0;
	}
	atomic_fetch_add(&n_viol[rule], 1);
	rec_begin(r, sev_err ? CG_L_ERROR : CG_L_WARN, CGSHIM_EV_VIOLATION);
	rec_str(r, "rule", rule_tab[rule].id);
	rec_str(r, "name", rule_tab[rule].slug);
	rec_str(r, "severity", rule_tab[rule].sev);
	rec_str(r, "api", api);
	rec_str(r, "msg", msg);
	rec_str(r, "doc", rule_tab[rule].doc);
	if (predicted_rc >= 0) {
		rec_int(r, "predicted_rc", predicted_rc);
		rec_str(r, "predicted_err", cg_result_name(predicted_rc));
	}
	return 1;
}

/* CGSHIM_ON_VIOLATION=abort: stop before the driver call, after this
 * thread's records (a batched violation among them) reach the log. */
static void abort_if_asked(int rule)
{
	if (cg_cfg.on_violation == CG_VIOL_ABORT && cg_rule_on(rule)) {
		cg_log_flush_thread();
		raise(SIGABRT);
	}
}

void cg_violation_counted(int rule)
{
	if (!cg_rule_on(rule))
		return;
	atomic_fetch_add(&n_viol[rule], 1);
	abort_if_asked(rule);
}

void cg_violation_end(struct cg_rec *r, int rule)
{
	rec_end(r);
	abort_if_asked(rule);
}

void cg_rule_leak(CUgraphExec e, const struct cg_mnode *m, const char *when)
{
	struct cg_rec r;
	char msg[256];
	snprintf(msg, sizeof msg,
		 "graph allocation 0x%llx (%zu bytes) is still outstanding at %s; destroying an executable frees none of "
		 "its allocations",
		 (unsigned long long)m->dptr, m->size, !strcmp(when, "exit") ? "exit" : "cuGraphExecDestroy");
	if (!cg_violation_begin(&r, R_LEAK, !strcmp(when, "exit") ? "exit" : "cuGraphExecDestroy", -1, msg))
		return;
	rec_hex(&r, "exec", (uintptr_t)e);
	rec_hex(&r, "dptr", m->dptr);
	rec_u64(&r, "size", m->size);
	rec_hex(&r, "pool", (uintptr_t)m->pool);
	rec_str(&r, "when", when);
	rec_site(&r, "alloc_site", m->site);
	rec_end(&r); /* leaks never abort: they are found after the fact */
	{
		struct cg_rec l;
		rec_begin(&l, CG_L_WARN, CGSHIM_EV_LEAK);
		rec_hex(&l, "exec", (uintptr_t)e);
		rec_hex(&l, "dptr", m->dptr);
		rec_u64(&l, "size", m->size);
		rec_hex(&l, "pool", (uintptr_t)m->pool);
		rec_str(&l, "when", when);
		rec_site(&l, "site", m->site);
		rec_end(&l);
	}
}

long long cg_violations_total(void)
{
	long long t = 0;
	for (int i = 1; i < R_COUNT; i++)
		t += atomic_load(&n_viol[i]);
	return t;
}

void cg_rules_summary(struct cg_rec *r)
{
	rec_open(r, "rules", '{');
	for (int i = 1; i < R_COUNT; i++) {
		long long n = atomic_load(&n_viol[i]);
		if (n)
			rec_int(r, rule_tab[i].id, n);
	}
	rec_close(r, '}');
}

void cg_mismatch(const char *api, int rule, int predicted_rc, int rc, int predicted_result, int result)
{
	struct cg_rec r;
	rec_begin(&r, CG_L_WARN, CGSHIM_EV_MISMATCH);
	rec_str(&r, "api", api);
	rec_str(&r, "rule", cg_rule_id(rule));
	rec_int(&r, "predicted_rc", predicted_rc);
	rec_int(&r, "rc", rc);
	if (predicted_result >= 0)
		rec_int(&r, "predicted_result", predicted_result);
	if (result >= 0)
		rec_int(&r, "result", result);
	rec_end(&r);
}

/* ---- CGS007: capture-unsafe calls ---------------------------------------- */

static const char *unsafe_mode(int m)
{
	return m == 0 ? "global" : m == 1 ? "thread_local" : m == 2 ? "relaxed" : "?";
}

/* What a capture-unsafe call does, for the message (by entry point). */
static const char *unsafe_what(const char *api)
{
	if (!strncmp(api, "cuMemHostAlloc", 14) || !strncmp(api, "cuMemAllocHost", 14))
		return "allocates pinned host memory";
	if (!strncmp(api, "cuMemHostRegister", 17))
		return "registers (pins) host memory";
	if (!strncmp(api, "cuMemFreeHost", 13))
		return "frees pinned host memory";
	if (!strncmp(api, "cuMemHostUnregister", 19))
		return "unregisters host memory";
	if (!strncmp(api, "cuModuleUnload", 14) || !strncmp(api, "cuLibraryUnload", 15))
		return "unloads a module or library";
	return "makes a capture-unsafe call";
}

/* The fields every capture-breaking violation carries (issue 14): the
 * calling thread's id and name, its site, and the capture it breaks (id,
 * stream, mode, owning thread's id and name, begin site). The first such
 * call of a capture becomes the capture's breaker, the link its failed end
 * points back to. site: the caller's, taken by the caller. */
void cg_rule_capture_fields(struct cg_rec *r, const struct cg_capture_view *cv, uint32_t site)
{
	char me_name[16];
	model_thread_name(me_name);
	rec_u64(r, "capture", cv->id);
	rec_hex(r, "stream", (uintptr_t)cv->stream);
	rec_word(r, "mode", unsafe_mode(cv->mode));
	rec_int(r, "capture_tid", cv->tid);
	rec_str(r, "capture_thread", cv->tname);
	rec_int(r, "call_tid", cg_gettid());
	rec_str(r, "call_thread", me_name);
	rec_int(r, "call_mode", model_thread_mode());
	rec_site(r, "site", site);
	rec_site(r, "begin_site", cv->site);
}

void cg_rule_capture_violation(int rule, const char *api, const struct cg_capture_view *cv, int predicted_rc,
			       const char *msg, uint32_t site)
{
	struct cg_rec r;
	/* The first call that breaks the capture is its link; an end from the
	 * wrong thread (908) ends the capture too (measured), so it is one. */
	model_capture_breaker(cv->id, api, cg_rule_id(rule), predicted_rc < 0 ? 0 : predicted_rc, site);
	if (cg_violation_begin(&r, rule, api, predicted_rc, msg)) {
		cg_rule_capture_fields(&r, cv, site);
		cg_violation_end(&r, rule);
	}
}

void cg_rule_unsafe_violation(const char *api, const struct cg_capture_view *cv, const char *what)
{
	char msg[400];
	int me = cg_gettid();
	uint32_t site = cg_site_here(3);
	snprintf(msg, sizeof msg,
		 "%s %s while capture %llu (%s mode, stream 0x%llx, begun by thread %d%s%s%s) is live%s: the call "
		 "fails with 900 and invalidates that capture (its end returns 901)",
		 api, what ? what : unsafe_what(api), (unsigned long long)cv->id, unsafe_mode(cv->mode),
		 (unsigned long long)(uintptr_t)cv->stream, cv->tid, cv->tname[0] ? " \"" : "", cv->tname,
		 cv->tname[0] ? "\"" : "", cv->tid == me ? "" : " on another thread");
	cg_rule_capture_violation(R_CAPTURE_UNSAFE, api, cv, CUDA_ERROR_STREAM_CAPTURE_UNSUPPORTED, msg, site);
}

int cg_rule_capture_unsafe(const char *api, const char *what)
{
	struct cg_capture_view cv;
	if (!atomic_load_explicit(&cg_live_captures, memory_order_relaxed))
		return 0;
	if (!model_capture_conflict(model_thread_mode(), &cv))
		return 0;
	/* A capture named abandoned refuses every such call until the process
	 * ends (a pinned-allocation loop then fails thousands of times): the
	 * abandoned record said it once; these are counted. */
	if (cv.named)
		cg_violation_counted(R_CAPTURE_UNSAFE);
	else
		cg_rule_unsafe_violation(api, &cv, what);
	return 1;
}

void cg_rule_capture_unsafe_after(const char *api, int predicted, int rc)
{
	if (predicted && rc != CUDA_ERROR_STREAM_CAPTURE_UNSUPPORTED)
		cg_mismatch(api, R_CAPTURE_UNSAFE, CUDA_ERROR_STREAM_CAPTURE_UNSUPPORTED, rc, -1, -1);
}

/* ---- stale pointers and pageable copies (issue 15; ledger.c finds) ---- */
static const char *rule_kind_name(int kind)
{
	switch (kind) {
	case 1: return "cuMemAlloc";
	case 2: return "stream-ordered";
	case 3: return "VMM mapping";
	case 4: return "pinned host";
	case 5: return "registered host";
	default: return "unknown";
	}
}

static const char *rule_ref_name(int what)
{
	return what == CG_REF_DST ? "dst" : what == CG_REF_SRC ? "src" : "param";
}

static void rule_stale_fields(struct cg_rec *r, const struct cg_stale *s)
{
	rec_hex(r, "exec", (uintptr_t)s->e);
	rec_hex(r, "graph", (uintptr_t)s->g);
	rec_int(r, "node_index", s->node);
	if (s->kernel)
		rec_str(r, "kernel", s->kernel);
	if (s->what == CG_REF_PARAM) {
		rec_int(r, "param", s->param);
		if (s->embedded)
			rec_bool(r, "in_struct", 1);
	} else {
		rec_str(r, "operand", rule_ref_name(s->what));
	}
	rec_hex(r, "pointer", s->val);
	rec_hex(r, "alloc", s->base);
	rec_u64(r, "alloc_size", s->size);
	rec_str(r, "alloc_kind", rule_kind_name(s->kind));
	rec_int(r, "pointers", s->nrefs);
	if (s->capture)
		rec_u64(r, "capture", s->capture);
	rec_site(r, "alloc_site", s->alloc_site);
	rec_site(r, "capture_site", s->capture_site);
	rec_site(r, "exec_site", s->exec_site);
	rec_site(r, "free_site", s->free_site);
}

static void rule_stale_where(char *o, size_t cap, const struct cg_stale *s)
{
	if (s->what == CG_REF_PARAM)
		snprintf(o, cap, "node %u (kernel %s) parameter %d%s", s->node, s->kernel ? s->kernel : "?", s->param,
			 s->embedded ? " (inside a struct)" : "");
	else
		snprintf(o, cap, "node %u (%s operand)", s->node, rule_ref_name(s->what));
}

void cg_rule_stale_free(const struct cg_stale *s, const char *api)
{
	struct cg_rec r;
	char msg[512], where[200];
	rule_stale_where(where, sizeof where, s);
	snprintf(msg, sizeof msg,
		 "%s frees %s memory 0x%llx (%llu bytes) that exec 0x%llx still points into: %s holds 0x%llx; "
		 "its next launch will read or write freed memory",
		 api, rule_kind_name(s->kind), (unsigned long long)s->base, (unsigned long long)s->size,
		 (unsigned long long)(uintptr_t)s->e, where, (unsigned long long)s->val);
	if (!cg_violation_begin(&r, R_STALE_FREE, api, -1, msg))
		return;
	rule_stale_fields(&r, s);
	cg_violation_end(&r, R_STALE_FREE);
}

void cg_rule_stale_launch(const struct cg_stale *s, const char *api, int first)
{
	struct cg_rec r;
	char msg[512], where[200];
	if (!first) {
		cg_violation_counted(R_STALE_LAUNCH);
		return;
	}
	rule_stale_where(where, sizeof where, s);
	snprintf(msg, sizeof msg,
		 "%s of exec 0x%llx: %s points into 0x%llx (%llu bytes, %s), which was freed after the capture; "
		 "the replay will read or write freed memory (or whatever was allocated there since)",
		 api, (unsigned long long)(uintptr_t)s->e, where, (unsigned long long)s->base,
		 (unsigned long long)s->size, rule_kind_name(s->kind));
	if (!cg_violation_begin(&r, R_STALE_LAUNCH, api, -1, msg))
		return;
	rule_stale_fields(&r, s);
	rec_site(&r, "site", cg_site_here(3));
	cg_violation_end(&r, R_STALE_LAUNCH);
}

void cg_rule_pageable_copy(const char *api, CUgraphExec e, CUgraph g, uint32_t node, int what, uint64_t host, uint64_t bytes,
			   uint32_t exec_site, uint32_t capture_site)
{
	struct cg_rec r;
	char msg[400];
	snprintf(msg, sizeof msg,
		 "exec 0x%llx: copy node %u %s 0x%llx (%llu bytes) is pageable host memory (neither pinned nor "
		 "registered): every replay copies through it synchronously with respect to the host, and reads "
		 "whatever the program left there",
		 (unsigned long long)(uintptr_t)e, node, what == CG_REF_SRC ? "reads from" : "writes to",
		 (unsigned long long)host, (unsigned long long)bytes);
	if (!cg_violation_begin(&r, R_PAGEABLE_COPY, api, -1, msg))
		return;
	rec_hex(&r, "exec", (uintptr_t)e);
	rec_hex(&r, "graph", (uintptr_t)g);
	rec_int(&r, "node_index", node);
	rec_str(&r, "operand", rule_ref_name(what));
	rec_hex(&r, "host", host);
	rec_u64(&r, "bytes", bytes);
	rec_site(&r, "capture_site", capture_site);
	rec_site(&r, "exec_site", exec_site);
	cg_violation_end(&r, R_PAGEABLE_COPY);
}
