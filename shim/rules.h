/*
 * shim/rules.h -- violation records. A violation is written before the
 * driver call it predicts; with CGSHIM_ON_VIOLATION=abort it then raises
 * SIGABRT (still before the call) so a debugger stops at the culprit.
 */
#ifndef CGSHIM_RULES_H
#define CGSHIM_RULES_H

#include "log.h"
#include "model.h"
#include "ledger.h"

enum cg_rule {
	R_NONE = 0,
#define RULE(e, id, slug, sev, predicted, title) e,
#include "rules.def"
#undef RULE
	R_COUNT
};

const char *cg_rule_id(int rule);

/* Write verdict v (rules/verdict.h) of the call api as a violation record;
 * 0 when its rule is off. skip: the caller's frames to drop when the
 * verdict names the call site (CG_VF_SITE_HERE), as for cg_site_here.
 * Then, unless CG_VW_NO_ABORT, CGSHIM_ON_VIOLATION=abort stops here. */
struct cg_verdict;
enum { CG_VW_BATCHED = 1, CG_VW_NO_ABORT = 2 }; /* rec_batched; found after the fact */
int cg_verdict_write(const struct cg_verdict *v, const char *api, unsigned flags, int skip);
/* A capture-breaking verdict v, written with site as its call site (the
 * hook noted the call as the capture's breaker, model_capture_breaker,
 * before). A repeat verdict is counted only. */
int cg_verdict_write_capture(const struct cg_verdict *v, const char *api, uint64_t capture, uint32_t site);
/* A verdict counted, not written: a repeat a record already said. */
void cg_verdict_count(const struct cg_verdict *v);

/* CGS011 for each graph allocation the model found outstanding (n of them,
 * from model_exec_destroy or model_exec_exit: when "exec_destroy" or
 * "exit"); frees the list. */
void cg_rule_leaks(struct model_leak *leaks, int n, const char *when);
/* The rules that fired (ids[i]) and their violation counts, in rule
 * order; returns how many (the "rules" object of summary and folded). */
int cg_rules_counts(const char *ids[R_COUNT], unsigned long long counts[R_COUNT]);
long long cg_violations_total(void);
/* At exit: one "repeat" record per folded key (rule, site, object) with
 * its count, then one "folded" line with the totals when anything was
 * folded or not printed (a warning on stderr: the print limit's). */
void cg_rules_fold_exit(void);
/* The legacy default stream: CU_STREAM_LEGACY, or NULL where the default
 * stream is not per-thread. Inline: every launch during a capture asks. */
static inline int cg_caprule_is_legacy(CUstream s, int ptsz)
{
	return s == CU_STREAM_LEGACY || (!s && !ptsz);
}
/* CGS007 after a capture-unsafe call (hooks/hooks.h has the check before it):
 * a predicted refusal the driver did not make is a mismatch. */
void cg_rule_capture_unsafe_after(const char *api, int predicted, int rc);
/* CGS019: the launch or upload of a stale exec, before the call. The first
 * one is written in full, later ones counted. */
void cg_rule_stale_launch(const struct cg_stale *s, const char *api, int first);
/* CGS018 for every executable one free made stale (f from ledger_free),
 * with the free's site; after the call. */
void cg_rule_stale_frees(struct ledger_freed *f, const char *api);
/* CGS020: the copy nodes of an executable whose host operand (what:
 * CG_REF_SRC or CG_REF_DST) is pageable (in no pinned or registered range),
 * from ledger_exec_set. */
void cg_rule_pageable_copies(const struct ledger_pageable *p, const char *api);

/* A prediction checked against the driver's answer. */
void cg_mismatch(const char *api, int rule, int predicted_rc, int rc, int predicted_result, int result);
/* The same for a call on exec e / graph g (NULL: none) made at site (0:
 * unknown): the report's "Predictions the driver disagreed with" names the
 * call and --dot draws an unpredicted failing update from them, marking
 * the driver's error node: error_index, its index among g's nodes (-1:
 * none named, or not among them). */
void cg_mismatch_at(const char *api, int rule, int predicted_rc, int rc, int predicted_result, int result,
		    CUgraphExec e, CUgraph g, uint32_t site, long long error_index);

#endif
