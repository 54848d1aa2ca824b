/* shim/rules.c -- rule table, switches, violation and mismatch records. */
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <stdatomic.h>
#include <string.h>

#include "call.h"
#include "cgshim/record.h"
#include "config.h"
#include "decide.h"
#include "emit.h"
#include "findings.h"
#include "fold.h"
#include "hot.h"
#include "resolve.h"
#include "rules.h"
#include "rules/verdict.h"
#include "site.h"
#include "suppress.h"

/* doc: the rule's page, written on every violation so a log line leads to
 * the explanation (CGSHIM_RULE_DOC: relative to the source tree). */
static const struct {
	const char *id, *slug, *sev, *title, *doc;
} rule_tab[R_COUNT] = {
    {"", "", "", "", ""},
#define RULE(e, id, slug, sev, predicted, title) {id, slug, sev, title, CGSHIM_RULE_DOC_DIR id ".md"},
#include "rules.def"
#undef RULE
};

static _Atomic long long n_viol[R_COUNT];

/* The record level of a rule's severity: error, warn or hint. */
static int rule_level(int rule)
{
	const char *s = rule_tab[rule].sev;
	return s[0] == 'e' ? CG_L_ERROR : s[0] == 'h' ? CG_L_HINT : CG_L_WARN;
}

const char *cg_rule_id(int rule)
{
	return rule > 0 && rule < R_COUNT ? rule_tab[rule].id : "";
}

static int cg_rule_on(int rule)
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

/* The level of verdict v's record: its rule's, or hint where the rule
 * grades this finding lower (verdict.h). */
static int verdict_level(const struct cg_verdict *v)
{
	return v->hint ? CG_L_HINT : rule_level(v->rule);
}

/* CGSHIM_ON_VIOLATION=abort: stop before the driver call, after this
 * thread's records (a batched violation among them) reach the log. */
static void abort_if_asked(int rule)
{
	if (cg_rule_on(rule) && cg_decide(CG_ASK_VIOLATION, rule_level(rule) == CG_L_HINT, 0).abort) {
		cg_log_flush_thread();
		raise(SIGABRT);
	}
}

static void cg_violation_counted(int rule)
{
	if (!cg_rule_on(rule))
		return;
	atomic_fetch_add(&n_viol[rule], 1);
	cg_count_noted();
	if (rule_level(rule) != CG_L_HINT) /* a hint is no finding: CI passes on it */
		cg_findings_note(rule_level(rule) == CG_L_ERROR);
	abort_if_asked(rule);
}

/* ---- verdicts: the one writer of violation records ------------------- */

static uint64_t rules_current_ctx(void)
{
	CUcontext cur = NULL;
	if (drv_cuCtxGetCurrent && drv_cuCtxGetCurrent(&cur) == CUDA_SUCCESS)
		return (uint64_t)(uintptr_t)cur;
	return 0;
}

static CG_HOT int rules_alloc_lookup(CUdeviceptr p, uint64_t *capture, uint32_t *site)
{
	CUgraph g = NULL;
	size_t size = 0;
	return model_alloc_lookup(p, capture, &g, &size, site);
}

const struct cg_model_view cg_model_view_live = {
    .graph_live_exec = model_graph_live_exec,
    .pool_info = model_pool_info,
    .current_ctx = rules_current_ctx,
    .alloc_lookup = rules_alloc_lookup,
};

static int verdict_needs_site(const struct cg_verdict *v)
{
	for (int i = 0; i < v->nf; i++)
		if (v->f[i].kind == CG_VF_SITE_HERE)
			return 1;
	return 0;
}

/* The fold key of v (fold.h): the call site is the field "site" (or
 * "free_site": a free's), else the first site the verdict names; the
 * object its first handle, with the node and the capture when it names
 * them (every capture a refusal breaks is announced). A graph or exec is
 * told by its id as well as its handle: the driver gives a destroyed
 * one's handle again (seen under TSan, whose allocator reuses at once:
 * two execs' CGS011 folded as one). */
static uint64_t verdict_u64(const struct cg_verdict *v, const char *key)
{
	for (int i = 0; i < v->nf; i++)
		if (v->f[i].kind == CG_VF_U64 && !strcmp(v->f[i].key, key))
			return v->f[i].val;
	return 0;
}

static void verdict_fold_key(const struct cg_verdict *v, uint32_t here, struct cg_fold_key *k)
{
	int site_rank = 3;
	*k = (struct cg_fold_key){.rule = v->rule, .node = -1};
	for (int i = 0; i < v->nf; i++) {
		const struct cg_vfield *f = &v->f[i];
		if (f->kind == CG_VF_SITE || f->kind == CG_VF_SITE_HERE) {
			int rank = !strcmp(f->key, "site") ? 0 : !strcmp(f->key, "free_site") ? 1 : 2;
			if (rank < site_rank) {
				site_rank = rank;
				k->site = f->kind == CG_VF_SITE_HERE ? here : (uint32_t)f->val;
				k->site_key = f->key;
			}
		} else if (f->kind == CG_VF_HEX && !k->obj_key) {
			k->obj = f->val;
			k->obj_key = f->key;
		} else if (f->kind == CG_VF_INT && !strcmp(f->key, "node_index")) {
			k->node = (int64_t)f->val;
		} else if (f->kind == CG_VF_U64 && !strcmp(f->key, "capture")) {
			k->capture = f->val;
		}
	}
	if (k->obj_key && (!strcmp(k->obj_key, "graph") || !strcmp(k->obj_key, "exec"))) {
		int is_graph = !strcmp(k->obj_key, "graph");
		k->obj_id = verdict_u64(v, is_graph ? "graph_id" : "exec_id"); /* a dropped one's, from its facts */
		if (!k->obj_id && !is_graph) /* lock-free: a launch's violation folds with no lock (fold.h) */
			k->obj_id = model_exec_id_fast((CUgraphExec)(uintptr_t)k->obj);
		if (!k->obj_id && is_graph) { /* graphs are named off the launch path */
			struct model_ids ids;
			model_ids_get((CUgraph)(uintptr_t)k->obj, NULL, &ids);
			k->obj_id = ids.graph;
		}
	}
}

/* Whether a violation of v is written: counted either way; a repeat of
 * its rule, site and object is folded (fold.h), and past the print limit
 * on stderr it is not printed. CGSHIM_ON_VIOLATION=abort still stops
 * before the call for one not written (unless CG_VW_NO_ABORT). */
static int cg_violation_take(const struct cg_verdict *v, unsigned flags, uint32_t here)
{
	struct cg_fold_key k;
	atomic_fetch_add(&n_viol[v->rule], 1);
	cg_count_noted();
	if (verdict_level(v) != CG_L_HINT) /* a hint is no finding: CI passes on it */
		cg_findings_note(verdict_level(v) == CG_L_ERROR);
	verdict_fold_key(v, here, &k);
	if (cg_fold_note(&k) && (!cg_log_on(verdict_level(v)) || cg_print_take()))
		return 1;
	if (!(flags & CG_VW_NO_ABORT))
		abort_if_asked(v->rule);
	return 0;
}

/* CGSHIM_SUPPRESS: rules whose every written instance so far was
 * suppressed; their repeats (counted, never written) are not counted. */
static _Atomic int rule_hidden[R_COUNT], rule_shown[R_COUNT];

static int cmp_key(const void *a, const void *b)
{
	return strcmp(*(const char *const *)a, *(const char *const *)b);
}

/* Whether a baseline entry (suppress.h) matches v: its fingerprint is the
 * rule, the site field's first frame and the handle fields' names. */
static int verdict_suppressed(const struct cg_verdict *v, uint32_t here)
{
	const char *keys[CG_VERDICT_FIELDS];
	char kind[256];
	uint32_t site = 0;
	int nk = 0, o = 0;

	if (!cg_cfg.suppress || !*cg_cfg.suppress)
		return 0;
	for (int i = 0; i < v->nf; i++) {
		if (v->f[i].kind == CG_VF_HEX)
			keys[nk++] = v->f[i].key;
		else if (!strcmp(v->f[i].key, "site") &&
			 (v->f[i].kind == CG_VF_SITE_HERE || v->f[i].kind == CG_VF_SITE))
			site = v->f[i].kind == CG_VF_SITE_HERE ? here : (uint32_t)v->f[i].val;
	}
	qsort(keys, (size_t)nk, sizeof keys[0], cmp_key);
	kind[0] = '\0';
	for (int i = 0; i < nk && o < (int)sizeof kind; i++)
		o += snprintf(kind + o, sizeof kind - (size_t)o, "%s%s", i ? "," : "", keys[i]);
	if (!cg_suppress_match(cg_rule_id(v->rule), kind, site)) {
		atomic_store(&rule_shown[v->rule], 1);
		return 0;
	}
	atomic_store(&rule_hidden[v->rule], 1);
	return 1;
}

static int repeat_hidden(int rule)
{
	return atomic_load(&rule_hidden[rule]) && !atomic_load(&rule_shown[rule]);
}

/* A verdict's fields as facts: every value the record needs, taken before
 * the writer runs (which reads nothing else): the call's site for
 * SITE_HERE, an executable's site for EXEC_SITE, the calling thread for
 * CALLER (its three fields). */
struct verdict_facts {
	int nf;
	struct cg_vfield f[CG_VERDICT_FIELDS + 2 + 4];
	char thread[16];
};

static void verdict_facts(const struct cg_verdict *v, uint32_t here, struct verdict_facts *o)
{
	o->nf = 0;
	for (int i = 0; i < v->nf; i++) {
		struct cg_vfield f = v->f[i];
		if (f.kind == CG_VF_SITE_HERE) {
			f.kind = CG_VF_SITE;
			f.val = here;
		} else if (f.kind == CG_VF_EXEC_SITE) {
			struct cg_exec_view ev;
			f.kind = CG_VF_SITE;
			f.val = model_exec_view((CUgraphExec)(uintptr_t)f.val, &ev) ? ev.site : 0;
		} else if (f.kind == CG_VF_CALLER) {
			model_thread_name(o->thread);
			o->f[o->nf++] = (struct cg_vfield){"call_tid", CG_VF_INT, (uint64_t)(int64_t)cg_gettid(), 0, 0};
			o->f[o->nf++] = (struct cg_vfield){"call_thread", CG_VF_STR, 0, o->thread, 0};
			f = (struct cg_vfield){"call_mode", CG_VF_INT, (uint64_t)(int64_t)model_thread_mode(), 0, 0};
		}
		o->f[o->nf++] = f;
	}
	{ /* the ids of the graph and exec it names (issue 35: a handle comes back) */
		CUgraph g = NULL;
		CUgraphExec e = NULL;
		struct model_ids ids;
		for (int i = 0; i < v->nf; i++)
			if (v->f[i].kind == CG_VF_HEX && !strcmp(v->f[i].key, "graph"))
				g = (CUgraph)(uintptr_t)v->f[i].val;
			else if (v->f[i].kind == CG_VF_HEX && !strcmp(v->f[i].key, "exec"))
				e = (CUgraphExec)(uintptr_t)v->f[i].val;
		model_ids_get(g, e, &ids);
		if (verdict_u64(v, "exec_id")) /* the verdict's own (a dropped exec's leak) */
			ids.exec = 0;
		if (ids.graph)
			o->f[o->nf++] = (struct cg_vfield){"graph_id", CG_VF_U64, ids.graph, 0, 0};
		if (ids.cuda_graph)
			o->f[o->nf++] = (struct cg_vfield){"cuda_graph_id", CG_VF_U64, ids.cuda_graph, 0, 0};
		if (ids.exec)
			o->f[o->nf++] = (struct cg_vfield){"exec_id", CG_VF_U64, ids.exec, 0, 0};
		if (ids.cuda_exec)
			o->f[o->nf++] = (struct cg_vfield){"cuda_exec_id", CG_VF_U64, ids.cuda_exec, 0, 0};
	}
}

/* The violation record's extension (records.def): the verdict's own
 * fields, from the facts alone. */
static void verdict_fields_rec(struct cg_rec *r, const char *key, const void *arg)
{
	const struct verdict_facts *o = arg;
	(void)key;
	for (int i = 0; i < o->nf; i++) {
		const struct cg_vfield *f = &o->f[i];
		switch (f->kind) {
		case CG_VF_HEX:
			rec_hex(r, f->key, f->val);
			break;
		case CG_VF_U64:
			rec_u64(r, f->key, f->val);
			break;
		case CG_VF_INT:
			rec_int(r, f->key, (long long)(int64_t)f->val);
			break;
		case CG_VF_BOOL:
			rec_bool(r, f->key, (int)f->val);
			break;
		case CG_VF_STR:
			rec_str(r, f->key, f->str);
			break;
		case CG_VF_WORD:
			rec_word(r, f->key, f->str);
			break;
		case CG_VF_SITE:
			rec_site(r, f->key, (uint32_t)f->val);
			break;
		case CG_VF_DPTRS: {
			const struct cg_mnode *m = f->ptr;
			rec_open(r, f->key, '[');
			for (int k = 0; k < (int)f->val; k++)
				if (!m[k].is_free)
					rec_elem_hex(r, m[k].dptr);
			rec_close(r, ']');
			break;
		}
		case CG_VF_HANDLES: {
			void *const *h = f->ptr;
			rec_open(r, f->key, '[');
			for (int k = 0; k < (int)f->val; k++)
				rec_elem_hex(r, (uintptr_t)h[k]);
			rec_close(r, ']');
			break;
		}
		}
	}
}

/* The record of v; here: the call's site for CG_VF_SITE_HERE fields. */
static int verdict_emit(const struct cg_verdict *v, const char *api, unsigned flags, uint32_t here)
{
	struct verdict_facts o;
	int rule = v->rule;
	if (!cg_rule_on(rule) || verdict_suppressed(v, here) || !cg_violation_take(v, flags, here))
		return 0;
	if (cg_log_on(verdict_level(v)))
		verdict_facts(v, here, &o);
	emit_violation(
	    verdict_level(v),
	    &(struct ev_violation){.rule = rule_tab[rule].id,
				   .name = rule_tab[rule].slug,
				   .severity = v->hint ? "hint" : rule_tab[rule].sev,
				   .api = api,
				   .via = cg_tls.via, /* the call as the program made it (the text header) */
				   .msg = v->msg,
				   .doc = rule_tab[rule].doc,
				   .predicted_rc = v->predicted_rc,
				   .has_predicted_rc = v->predicted_rc >= 0,
				   .predicted_err = v->predicted_rc >= 0 ? cg_result_name(v->predicted_rc) : NULL,
				   .more = {verdict_fields_rec, &o},
				   .batched = (flags & CG_VW_BATCHED) != 0});
	if (!(flags & CG_VW_NO_ABORT))
		abort_if_asked(rule);
	return 1;
}

int cg_verdict_write(const struct cg_verdict *v, const char *api, unsigned flags, int skip)
{
	uint32_t here = 0;
	if (v->repeat) {
		if (!repeat_hidden(v->rule))
			cg_violation_counted(v->rule);
		return 0;
	}
	if (!cg_rule_on(v->rule))
		return 0;
	/* The call site costs a backtrace: taken only for a verdict that
	 * names it (the fold key has it too). */
	if (verdict_needs_site(v))
		here = cg_site_here(skip + 1);
	return verdict_emit(v, api, flags, here);
}

int cg_verdict_write_capture(const struct cg_verdict *v, const char *api, uint64_t capture, uint32_t site)
{
	if (v->repeat) {
		if (!repeat_hidden(v->rule))
			cg_violation_counted(v->rule);
		return 0;
	}
	return verdict_emit(v, api, 0, site);
}

void cg_verdict_count(const struct cg_verdict *v)
{
	cg_violation_counted(v->rule);
}

static void cg_rule_leak(CUgraphExec e, uint64_t exec_id, const struct cg_mnode *m, const char *when)
{
	struct cg_verdict v;
	if (!rules_memory_leak(e, m, 1, 0, when, &v))
		return;
	if (exec_id) /* the model dropped e already: its id is in the facts */
		cg_vf_u64(&v, "exec_id", exec_id);
	/* leaks never abort: they are found after the fact */
	if (!cg_verdict_write(&v, !strcmp(when, "exit") ? "exit" : "cuGraphExecDestroy", CG_VW_NO_ABORT, 0))
		return;
	emit_leak(verdict_level(&v), &(struct ev_leak){.exec = (uintptr_t)e,
						       .dptr = m->dptr,
						       .size = m->size,
						       .pool = (uintptr_t)m->pool,
						       .when = when,
						       .site = m->site});
}

CG_HOT void cg_rule_leaks(struct model_leak *leaks, int n, const char *when)
{
	for (int i = 0; i < n; i++)
		cg_rule_leak(leaks[i].e, leaks[i].exec_id, &leaks[i].m, when);
	free(leaks);
}

long long cg_violations_total(void)
{
	long long t = 0;
	for (int i = 1; i < R_COUNT; i++)
		t += atomic_load(&n_viol[i]);
	return t;
}

int cg_rules_counts(const char *ids[R_COUNT], unsigned long long counts[R_COUNT])
{
	int n = 0;
	for (int i = 1; i < R_COUNT; i++) {
		long long c = atomic_load(&n_viol[i]);
		if (c) {
			ids[n] = rule_tab[i].id;
			counts[n++] = (unsigned long long)c;
		}
	}
	return n;
}

void cg_rules_fold_exit(void)
{
	struct cg_fold_key k;
	uint64_t count, repeats = cg_fold_repeats(), unprinted = cg_print_unprinted();
	int pos = 0, limited = cg_print_limited();
	while (cg_fold_next(&pos, &k, &count))
		emit_repeat(CG_L_INFO, &(struct ev_repeat){.rule = rule_tab[k.rule].id,
							   .name = rule_tab[k.rule].slug,
							   .severity = rule_tab[k.rule].sev,
							   .object_key = k.obj_key,
							   .object = k.obj,
							   .node_index = k.node,
							   .has_node_index = k.node >= 0,
							   .capture = k.capture,
							   .has_capture = k.capture != 0,
							   .call_site_key = k.site_key,
							   .call_site = k.site,
							   .count = count,
							   .repeats = count - 1});
	if (!repeats && !unprinted && !cg_fold_full())
		return;
	/* One closing line: on stderr (the print limit's) a warning, so the
	 * user sees what was not printed; in a log file an info record. */
	if (cg_log_on(limited ? CG_L_WARN : CG_L_INFO)) {
		char msg[320];
		int n = 0;
		if (unprinted)
			n = snprintf(msg, sizeof msg, "%llu violation records not printed (CGSHIM_PRINT_LIMIT=%ld); ",
				     (unsigned long long)unprinted, (long)cg_cfg.print_limit);
		if (repeats)
			n += snprintf(msg + n, sizeof msg - (size_t)n,
				      "%llu repeats of one rule, call site and object folded into their first record; ",
				      (unsigned long long)repeats);
		snprintf(msg + n, sizeof msg - (size_t)n, "totals by rule below%s",
			 limited ? "; CGSHIM_LOG_FILE keeps every record" : "");
		const char *ids[R_COUNT];
		unsigned long long counts[R_COUNT];
		struct emit_counts rc = {ids, counts, cg_rules_counts(ids, counts)};
		emit_folded(limited ? CG_L_WARN : CG_L_INFO,
			    &(struct ev_folded){.msg = msg,
						.unprinted = unprinted,
						.repeats = repeats,
						.unfolded = cg_fold_full(),
						.print_limit = limited ? cg_cfg.print_limit : 0,
						.violations = cg_violations_total(),
						.rules = EMIT_COUNTS(&rc)});
	}
}

void cg_mismatch_at(const char *api, int rule, int predicted_rc, int rc, int predicted_result, int result,
		    CUgraphExec e, CUgraph g, uint32_t site, long long error_index)
{
	struct model_ids ids;
	model_ids_get(g, e, &ids);
	emit_mismatch(CG_L_WARN,
		      &(struct ev_mismatch){.api = api,
					    .rule = cg_rule_id(rule),
					    .predicted_rc = predicted_rc,
					    .rc = rc,
					    .predicted_result = predicted_result,
					    .has_predicted_result = predicted_result >= 0,
					    .result = result,
					    .has_result = result >= 0,
					    .exec = (uintptr_t)e,
					    .has_exec = e != NULL,
					    .graph = (uintptr_t)g,
					    .has_graph = g != NULL,
					    .ids = model_ids_emit(&ids),
					    .node_index = (int)error_index, /* the driver's error node in g */
					    .has_node_index = error_index >= 0,
					    .via = cg_tls.via,
					    .site = site});
}

void cg_mismatch(const char *api, int rule, int predicted_rc, int rc, int predicted_result, int result)
{
	cg_mismatch_at(api, rule, predicted_rc, rc, predicted_result, result, NULL, NULL, 0, -1);
}

/* ---- CGS007 ------------------------------------------------------------ */

void cg_rule_capture_unsafe_after(const char *api, int predicted, int rc)
{
	if (predicted && rc != CUDA_ERROR_STREAM_CAPTURE_UNSUPPORTED)
		cg_mismatch(api, R_CAPTURE_UNSAFE, CUDA_ERROR_STREAM_CAPTURE_UNSUPPORTED, rc, -1, -1);
}

/* ---- stale pointers and pageable copies (issue 15; model/ledger.c finds) ---- */

/* CGS018: a free or unmap made e stale (written after the call). */
static void cg_rule_stale_free(const struct cg_stale *s, const char *api)
{
	struct cg_verdict v;
	if (rules_memory_stale_free(s, api, &v))
		cg_verdict_write(&v, api, 0, 1);
}

void cg_rule_stale_launch(const struct cg_stale *s, const char *api, int first)
{
	struct cg_verdict v;
	if (rules_memory_stale_launch(s, api, first, &v))
		cg_verdict_write(&v, api, 0, 3);
}

void cg_rule_pageable_copies(const struct ledger_pageable *p, const char *api)
{
	struct cg_verdict v;
	for (int k = 0; k < p->n; k++)
		if (rules_memory_pageable_copy(p->e, p->g, p->c[k].node, p->c[k].what, p->c[k].host, p->c[k].bytes,
					       p->exec_site, p->capture_site, &v))
			cg_verdict_write(&v, api, 0, 1);
}

/* Not inlined: the free's site is counted from here (the hook's frame and
 * the application's above it). */
__attribute__((noinline)) void cg_rule_stale_frees(struct ledger_freed *f, const char *api)
{
	uint32_t fsite = cg_site_here(2);
	for (int k = 0; k < f->n; k++) {
		struct cg_stale s = f->s[k];
		s.free_site = fsite;
		cg_rule_stale_free(&s, api);
	}
	if (f->more)
		cg_warn("%s: %d more executables hold pointers into the freed range 0x%llx", api, f->more,
			(unsigned long long)f->base);
	ledger_free_site(f, fsite); /* the launch check reports the free site too */
}
