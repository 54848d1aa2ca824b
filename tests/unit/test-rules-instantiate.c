/* tests/unit/test-rules-instantiate.c -- the instantiate and launch rules
 * (shim/rules/instantiate.c) as pure functions: hand-built summaries and
 * a fake model view, no process, no stand-in driver. */
#include "rules-case.h"

static CUgraphExec fake_live;

static int fake_live_exec(CUgraph g, struct cg_exec_view *out)
{
	(void)g;
	memset(out, 0, sizeof *out);
	out->h = fake_live;
	out->launches = 3;
	out->site = 9;
	return fake_live != NULL;
}

static const struct cg_model_view view = {.graph_live_exec = fake_live_exec};

#define GRAPH ((CUgraph)0x200)

static struct cg_summary sum_mem = {.n_nodes = 2, .n_alloc = 1, .n_free = 1};
static struct cg_summary sum_plain = {.n_nodes = 2};

static int inst(const struct cg_summary *s, uint64_t flags, CUgraphExec live, struct cg_verdict *o, int m)
{
	struct cg_instantiate_ev ev = {GRAPH, flags, s, 5};
	int n = 0;
	fake_live = live;
	if (n < m && rules_instantiate_second(&ev, &view, &o[n]))
		n++;
	if (n < m && rules_instantiate_device_launch(&ev, &o[n]))
		n++;
	return n;
}

/* ---- CGS004 ------------------------------------------------------------- */
static int second(struct cg_verdict *o, int m)
{
	return inst(&sum_mem, 0, (CUgraphExec)0x900, o, m);
}
static int second_none(struct cg_verdict *o, int m)
{
	return inst(&sum_mem, 0, NULL, o, m);
}
static int second_plain(struct cg_verdict *o, int m)
{
	return inst(&sum_plain, 0, (CUgraphExec)0x900, o, m);
}
static int second_unknown(struct cg_verdict *o, int m)
{
	return inst(NULL, 0, (CUgraphExec)0x900, o, m);
}

/* ---- CGS010 ------------------------------------------------------------- */
static int dl_autofree(struct cg_verdict *o, int m)
{
	return inst(&sum_plain,
		    CUDA_GRAPH_INSTANTIATE_FLAG_DEVICE_LAUNCH | CUDA_GRAPH_INSTANTIATE_FLAG_AUTO_FREE_ON_LAUNCH, NULL,
		    o, m);
}
static int dl_mem(struct cg_verdict *o, int m)
{
	return inst(&sum_mem, CUDA_GRAPH_INSTANTIATE_FLAG_DEVICE_LAUNCH, NULL, o, m);
}
static int dl_plain(struct cg_verdict *o, int m)
{
	return inst(&sum_plain, CUDA_GRAPH_INSTANTIATE_FLAG_DEVICE_LAUNCH, NULL, o, m);
}
static int autofree_host(struct cg_verdict *o, int m)
{
	return inst(&sum_mem, CUDA_GRAPH_INSTANTIATE_FLAG_AUTO_FREE_ON_LAUNCH, NULL, o, m);
}
static int compose(int mem, struct cg_verdict *o)
{
	struct cg_compose_ev ev = {GRAPH, mem, 5, 6, "cloned"};
	return rules_instantiate_compose(&ev, o);
}
static int clone_mem(struct cg_verdict *o, int m)
{
	(void)m;
	return compose(2, o);
}
static int clone_plain(struct cg_verdict *o, int m)
{
	(void)m;
	return compose(0, o);
}

/* ---- CGS005 ------------------------------------------------------------- */
static const struct cg_mnode mem2[2] = {{.dptr = 0x1000, .size = 64, .site = 3}, {.dptr = 0x2000, .is_free = 1}};
static int relaunch(int unfreed, int autofree, struct cg_verdict *o)
{
	struct cg_launch_ev ev = {(CUgraphExec)0x100, unfreed, autofree, mem2, 2};
	return rules_instantiate_relaunch(&ev, o);
}
static int relaunch_unfreed(struct cg_verdict *o, int m)
{
	(void)m;
	return relaunch(1, 0, o);
}
static int relaunch_autofree(struct cg_verdict *o, int m)
{
	(void)m;
	return relaunch(1, 1, o);
}
static int relaunch_freed(struct cg_verdict *o, int m)
{
	(void)m;
	return relaunch(0, 0, o);
}

static const struct rule_case instantiate_cases[] = {
    {"CGS004", FIRES, "memory-node graph with a live exec", second, CUDA_ERROR_NOT_SUPPORTED, "other_exec", 0x900,
     "is already instantiated as exec 0x900 (launched 3 times)"},
    {"CGS004", SILENT, "no live exec", second_none, 0, NULL, 0, NULL},
    {"CGS004", SILENT, "no memory nodes", second_plain, 0, NULL, 0, NULL},
    {"CGS004", SILENT, "summary unknown", second_unknown, 0, NULL, 0, NULL},
    {"CGS010", FIRES, "DeviceLaunch with AutoFreeOnLaunch", dl_autofree, CUDA_ERROR_INVALID_VALUE, "flags",
     CUDA_GRAPH_INSTANTIATE_FLAG_DEVICE_LAUNCH | CUDA_GRAPH_INSTANTIATE_FLAG_AUTO_FREE_ON_LAUNCH,
     "DeviceLaunch cannot be combined with AutoFreeOnLaunch"},
    {"CGS010", FIRES, "DeviceLaunch with memory nodes", dl_mem, CUDA_ERROR_INVALID_VALUE, "graph", 0x200,
     "DeviceLaunch cannot be combined with memory nodes in the graph"},
    {"CGS010", FIRES, "memory-node graph cloned", clone_mem, -1, "graph_site", 6, "holds 2 memory node(s)"},
    {"CGS010", SILENT, "DeviceLaunch of a plain graph", dl_plain, 0, NULL, 0, NULL},
    {"CGS010", SILENT, "AutoFreeOnLaunch without DeviceLaunch", autofree_host, 0, NULL, 0, NULL},
    {"CGS010", SILENT, "plain graph cloned", clone_plain, 0, NULL, 0, NULL},
    {"CGS005", FIRES, "relaunch with unfreed allocations", relaunch_unfreed, CUDA_ERROR_INVALID_VALUE, "alloc_site", 3,
     "while 1 graph allocation(s) of its previous launch are unfreed"},
    {"CGS005", SILENT, "AutoFreeOnLaunch", relaunch_autofree, 0, NULL, 0, NULL},
    {"CGS005", SILENT, "everything freed", relaunch_freed, 0, NULL, 0, NULL},
};
RULE_CASES_TEST(instantiate_cases)

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_instantiate_cases),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
