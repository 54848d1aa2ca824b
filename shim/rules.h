/*
 * shim/rules.h -- violation records. A violation is written before the
 * driver call it predicts; with CGSHIM_ON_VIOLATION=abort it then raises
 * SIGABRT (still before the call) so a debugger stops at the culprit.
 */
#ifndef CGSHIM_RULES_H
#define CGSHIM_RULES_H

#include "log.h"
#include "model.h"

enum cg_rule {
	R_NONE = 0,
#define RULE(e, id, slug, sev, title) e,
#include "rules.def"
#undef RULE
	R_COUNT
};

int cg_rule_on(int rule);
/* Start a violation record (returns 0 if the rule is off; then write nothing). */
int cg_violation_begin(struct cg_rec *r, int rule, const char *api, int predicted_rc, const char *msg);
void cg_violation_end(struct cg_rec *r, int rule);
/* A violation counted (summary, CGSHIM_ON_VIOLATION=abort) but not written:
 * for repeats whose record would add nothing to one already written. */
void cg_violation_counted(int rule);
const char *cg_rule_id(int rule);

void cg_rule_leak(CUgraphExec e, const struct cg_mnode *m, const char *when);
/* Per-rule violation counts as a "rules" object field of record r. */
void cg_rules_summary(struct cg_rec *r);
long long cg_violations_total(void);
long long cg_failures_total(void);
/* A prediction checked against the driver's answer. */
void cg_mismatch(const char *api, int rule, int predicted_rc, int rc, int predicted_result, int result);

#endif
