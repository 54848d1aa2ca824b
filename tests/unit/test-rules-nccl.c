/* tests/unit/test-rules-nccl.c -- the NCCL rules (shim/rules/nccl.c) as pure
 * functions: hand-built teardown events and ledger findings, no process, no
 * stand-in driver or NCCL. */
#include "rules-case.h"

/* ---- CGS027 ------------------------------------------------------------- */
static const struct model_nccl_exec two[2] = {
    {(CUgraphExec)0x100, (CUgraph)0x200, 3, 11, 12, 2, 0, 5},
    {(CUgraphExec)0x101, (CUgraph)0x201, 4, 13, 14, 1, 0, 0},
};

static int teardown(const char *api, int n, struct cg_verdict *o)
{
	CUgraphExec h[2] = {two[0].e, two[1].e};
	struct cg_nccl_teardown_ev ev;
	memset(&ev, 0, sizeof ev);
	ev.api = api;
	ev.comm = (const void *)0xc0;
	ev.n = n;
	ev.shown = n < 2 ? n : 2;
	ev.x = two;
	ev.handles = h;
	strcpy(ev.where[0], "py:serve.py:40:capture");
	return rules_nccl_teardown(&ev, o);
}
static int destroy_two(struct cg_verdict *o, int m)
{
	(void)m;
	return teardown("ncclCommDestroy", 2, o);
}
static int abort_one(struct cg_verdict *o, int m)
{
	(void)m;
	return teardown("ncclCommAbort", 1, o);
}
static int destroy_none(struct cg_verdict *o, int m)
{
	(void)m;
	return teardown("ncclCommDestroy", 0, o);
}

/* ---- CGS028 ------------------------------------------------------------- */
static struct cg_stale unmapped(void)
{
	struct cg_stale s;
	memset(&s, 0, sizeof s);
	s.e = (CUgraphExec)0x100;
	s.g = (CUgraph)0x200;
	s.capture = 3;
	s.node = 1;
	s.val = 0x7010;
	s.base = 0x7000;
	s.size = 0x1000;
	s.kind = LG_VMM;
	return s;
}
static int remap_same(struct cg_verdict *o, int m)
{
	struct cg_stale s = unmapped();
	(void)m;
	return rules_nccl_remap(0x7000, 0x1000, &s, 2, o);
}
static int remap_no_nccl(struct cg_verdict *o, int m)
{
	struct cg_stale s = unmapped();
	(void)m;
	return rules_nccl_remap(0x7000, 0x1000, &s, 0, o);
}
static int remap_elsewhere(struct cg_verdict *o, int m)
{
	struct cg_stale s = unmapped();
	(void)m;
	return rules_nccl_remap(0x9000, 0x1000, &s, 2, o);
}

static const struct rule_case nccl_cases[] = {
    {"CGS027", FIRES, "destroy with two execs holding NCCL work", destroy_two, -1, "execs_live", 2,
     "exec 0x100 (capture 3, 2 NCCL kernels, captured at py:serve.py:40:capture), exec 0x101"},
    {"CGS027", FIRES, "abort names the fix", abort_one, -1, "capture", 3, "destroy the graphs first"},
    {"CGS027", SILENT, "no live exec holds NCCL work", destroy_none, 0, NULL, 0, NULL},
    {"CGS028", FIRES, "mapped again where the unmap made an NCCL exec stale", remap_same, -1, "unmapped", 0x7000,
     "exec 0x100 (capture 3, 2 NCCL kernels) points into it"},
    {"CGS028", SILENT, "the stale exec holds no NCCL work", remap_no_nccl, 0, NULL, 0, NULL},
    {"CGS028", SILENT, "mapped at other addresses", remap_elsewhere, 0, NULL, 0, NULL},
};
RULE_CASES_TEST(nccl_cases)

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_nccl_cases),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
