/* tests/unit/rules-case.h -- the table every rule unit test is written as:
 * one row per case, naming the rule ID it exercises and whether the rule
 * fires (FIRES) or stays silent (SILENT: no verdict, or a repeat that is
 * only counted). tests/unit/rules_cover.py reads
 * these rows: every rule of shim/rules.def needs one of each. */
#ifndef CGSHIM_TEST_RULES_CASE_H
#define CGSHIM_TEST_RULES_CASE_H

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <string.h>

#include "rules.h"
#include "rules/verdict.h"

enum { SILENT = 0, FIRES = 1 };

/* A case: run() calls the pure rule on its hand-built event and model view
 * and returns the verdicts it gave (out[0..n)); the row's expectations are
 * checked against the first verdict of rule id. */
struct rule_case {
	const char *id; /* "CGS001" */
	int fires;	/* FIRES or SILENT */
	const char *name;
	int (*run)(struct cg_verdict *out, int max);
	int predicted_rc;    /* FIRES: the verdict's predicted rc (-1: none) */
	const char *field;   /* FIRES: a field the verdict must carry, or NULL */
	uint64_t value;	     /* ... with this value */
	const char *msg_has; /* FIRES: text the reason must contain, or NULL */
};

static const struct cg_verdict *rule_case_find(const struct cg_verdict *v, int n, const char *id)
{
	for (int i = 0; i < n; i++)
		if (!strcmp(cg_rule_id(v[i].rule), id))
			return &v[i];
	return NULL;
}

static void rule_case_check(const struct rule_case *c)
{
	struct cg_verdict out[8];
	memset(out, 0, sizeof out);
	int n = c->run(out, 8);
	const struct cg_verdict *v = rule_case_find(out, n, c->id);
	print_message("  %s %s: %s\n", c->id, c->fires ? "fires" : "silent", c->name);
	if (!c->fires) { /* no verdict, or a repeat: nothing written */
		assert_true(v == NULL || v->repeat);
		return;
	}
	assert_non_null(v);
	assert_false(v->repeat);
	assert_int_equal(v->predicted_rc, c->predicted_rc);
	assert_true(v->msg[0] != 0);
	if (c->msg_has && !strstr(v->msg, c->msg_has))
		fail_msg("reason \"%s\" lacks \"%s\"", v->msg, c->msg_has);
	if (c->field) {
		const struct cg_vfield *f = cg_verdict_field(v, c->field);
		assert_non_null(f);
		assert_int_equal(f->val, c->value);
	}
}

#define RULE_CASES_TEST(table)                                                                                         \
	static void test_##table(void **state)                                                                         \
	{                                                                                                              \
		(void)state;                                                                                           \
		for (size_t i = 0; i < sizeof table / sizeof *table; i++)                                              \
			rule_case_check(&table[i]);                                                                    \
	}

/* rules.c is not linked: the rule IDs from the one list. */
static const char *const rule_case_ids[] = {
    "",
#define RULE(e, id, slug, sev, predicted, title) id,
#include "rules.def"
#undef RULE
};
const char *cg_rule_id(int rule)
{
	return rule > 0 && rule < R_COUNT ? rule_case_ids[rule] : "";
}

#endif
