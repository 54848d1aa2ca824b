/* tests/unit/test-rules-update.c -- the update rules (shim/rules/update.c)
 * as pure functions: hand-built summaries and a fake model view, no
 * process, no stand-in driver. */
#include "rules-case.h"

#include "nodes.h"

/* nodes.c is not linked: the two read-only helpers the rules use. */
const char *nodes_kernel_name(const struct cg_summary *s, uint32_t i)
{
	for (uint32_t k = 0; s && s->det && k < s->n_det; k++)
		if (s->det[k].node == i)
			return s->det[k].name;
	return NULL;
}

const char *nodes_copy_kind(int kind)
{
	return kind == CG_CPY_H2D ? "h2d" : kind == CG_CPY_D2H ? "d2h" : "other";
}

/* ---- the fake model view ----------------------------------------------- */
static CUgraphExec fake_live; /* the live exec of any graph, NULL: none */
static uint64_t fake_ctx;

static int fake_live_exec(CUgraph g, struct cg_exec_view *out)
{
	(void)g;
	memset(out, 0, sizeof *out);
	out->h = fake_live;
	out->site = 7;
	return fake_live != NULL;
}

static int fake_pool_info(CUmemoryPool p, int *ipc, int *is_default, uint32_t *site)
{
	*ipc = 0;
	*is_default = (uintptr_t)p == 0xd0;
	*site = (uint32_t)(uintptr_t)p;
	return 1;
}

static uint64_t fake_current_ctx(void)
{
	return fake_ctx;
}

static const struct cg_model_view view = {fake_live_exec, fake_pool_info, fake_current_ctx};

#define EXEC ((CUgraphExec)0x100)
#define GRAPH ((CUgraph)0x200)

/* ---- summaries ---------------------------------------------------------- */
static CUgraphNode nodes_a[4] = {(CUgraphNode)0xa0, (CUgraphNode)0xa1, (CUgraphNode)0xa2, (CUgraphNode)0xa3};
static CUgraphNode nodes_b[4] = {(CUgraphNode)0xb0, (CUgraphNode)0xb1, (CUgraphNode)0xb2, (CUgraphNode)0xb3};

/* A summary of n nodes: kernel, kernel, ... with a chain of dependencies. */
static void sum_chain(struct cg_summary *s, uint8_t *types, uint16_t *ndeps, CUgraphNode *nodes, uint32_t n)
{
	memset(s, 0, sizeof *s);
	s->n_nodes = n;
	s->n_edges = n ? n - 1 : 0;
	s->types = types;
	s->ndeps = ndeps;
	s->nodes = nodes;
	for (uint32_t i = 0; i < n; i++) {
		types[i] = CU_GRAPH_NODE_TYPE_KERNEL;
		ndeps[i] = i ? 1 : 0;
	}
}

struct pair {
	struct cg_summary old, nu;
	uint8_t to[4], tn[4];
	uint16_t do_[4], dn[4];
	uint32_t so[4], sn[4]; /* dependency signatures (issue 31) */
	struct cg_mnode mo[2], mn[2];
	struct cg_ndet xo[4], xn[4];
	/* a child graph node's summaries (model_summary_kid) */
	struct cg_summary ko, kn;
	uint8_t kto[4], ktn[4];
	uint16_t kdo[4], kdn[4];
	struct cg_ndet kxo, kxn;
	struct cg_kid kido, kidn;
};

static void pair_init(struct pair *p, uint32_t n_old, uint32_t n_new)
{
	memset(p, 0, sizeof *p);
	sum_chain(&p->old, p->to, p->do_, nodes_a, n_old);
	sum_chain(&p->nu, p->tn, p->dn, nodes_b, n_new);
	/* a chain: node i depends on node i-1 on both sides */
	for (uint32_t i = 1; i < 4; i++)
		p->so[i] = p->sn[i] = 0x1000 + i - 1;
	p->old.depsig = p->so;
	p->nu.depsig = p->sn;
	fake_live = NULL;
	fake_ctx = 0;
}

/* One memory node on each side: an allocation (is_free 0). */
static void pair_alloc(struct pair *p, uint64_t dptr_o, uint64_t dptr_n, uint64_t pool_o, uint64_t pool_n)
{
	p->mo[0] = (struct cg_mnode){.dptr = dptr_o, .size = 64, .pool = (CUmemoryPool)(uintptr_t)pool_o, .site = 11};
	p->mn[0] = (struct cg_mnode){.dptr = dptr_n, .size = 64, .pool = (CUmemoryPool)(uintptr_t)pool_n, .site = 12};
	p->old.mem = p->mo;
	p->nu.mem = p->mn;
	p->old.n_alloc = p->nu.n_alloc = 1;
	p->to[0] = p->tn[0] = CU_GRAPH_NODE_TYPE_MEM_ALLOC;
}

/* Node details of node i on both sides (kernel unless t says otherwise). */
static void pair_det(struct pair *p, uint32_t i, int t)
{
	p->xo[0] = (struct cg_ndet){.node = i, .type = (uint8_t)t, .name = "k_old"};
	p->xn[0] = (struct cg_ndet){.node = i, .type = (uint8_t)t, .name = "k_new"};
	p->old.det = p->xo;
	p->nu.det = p->xn;
	p->old.n_det = p->nu.n_det = 1;
	p->to[i] = p->tn[i] = (uint8_t)t;
}

/* Node i a child graph node on both sides, its graph a chain of n_old
 * kernels in the exec's summary and n_new in the graph's. */
static void pair_kid(struct pair *p, uint32_t i, uint32_t n_old, uint32_t n_new)
{
	p->to[i] = p->tn[i] = CU_GRAPH_NODE_TYPE_GRAPH;
	sum_chain(&p->ko, p->kto, p->kdo, nodes_a, n_old);
	sum_chain(&p->kn, p->ktn, p->kdn, nodes_b, n_new);
	p->kido = (struct cg_kid){.node = i, .s = &p->ko};
	p->kidn = (struct cg_kid){.node = i, .s = &p->kn};
	p->old.kids = &p->kido;
	p->nu.kids = &p->kidn;
	p->old.n_kids = p->nu.n_kids = 1;
}

/* The update rules in the hook's order (hooks: update_predict). */
static int run_update(struct pair *p, struct cg_verdict *out, int max, int same)
{
	struct cg_update_ev ev = {EXEC, GRAPH, &p->old, same ? &p->old : &p->nu};
	struct cg_update_pred up;
	int n = 0;
	if (rules_update_instantiated(&ev, &view, &out[0]))
		return 1;
	if (rules_update_fail(&ev, &view, &up, &out[0]))
		return 1;
	if (rules_update_same_memory(&ev))
		return 0;
	for (uint32_t pos = 0; pos != UINT32_MAX && n < max;)
		n += rules_update_memory(&ev, &view, &pos, out + n, max - n);
	return n;
}

static struct pair P;

/* ---- CGS001 ------------------------------------------------------------- */
static int upd_count(struct cg_verdict *o, int m)
{
	pair_init(&P, 2, 3);
	return run_update(&P, o, m, 0);
}
/* issue 31: a -> b -> c against a -> {b, c}: the same types and counts,
 * node 2 depends on node 0 instead of node 1 */
static int upd_edges(struct cg_verdict *o, int m)
{
	pair_init(&P, 3, 3);
	P.sn[2] = 0x1000;
	return run_update(&P, o, m, 0);
}
static int upd_edges_same(struct cg_verdict *o, int m)
{
	pair_init(&P, 3, 3);
	return run_update(&P, o, m, 0);
}
static int upd_type(struct cg_verdict *o, int m)
{
	pair_init(&P, 3, 3);
	P.tn[1] = CU_GRAPH_NODE_TYPE_MEMSET;
	return run_update(&P, o, m, 0);
}
static int upd_deps(struct cg_verdict *o, int m)
{
	pair_init(&P, 3, 3);
	P.dn[2] = 2;
	return run_update(&P, o, m, 0);
}
static int upd_ctx(struct cg_verdict *o, int m)
{
	pair_init(&P, 2, 2);
	pair_det(&P, 1, CU_GRAPH_NODE_TYPE_KERNEL);
	P.xn[0].mctx = 0xc2; /* old context unknown: the current one (0xc1) */
	fake_ctx = 0xc1;
	return run_update(&P, o, m, 0);
}
static int upd_coop(struct cg_verdict *o, int m)
{
	pair_init(&P, 2, 2);
	pair_det(&P, 0, CU_GRAPH_NODE_TYPE_KERNEL);
	P.xn[0].coop = 1;
	return run_update(&P, o, m, 0);
}
static int upd_memset(struct cg_verdict *o, int m)
{
	pair_init(&P, 2, 2);
	pair_det(&P, 1, CU_GRAPH_NODE_TYPE_MEMSET);
	P.xo[0].bytes = 256;
	P.xn[0].bytes = 512;
	return run_update(&P, o, m, 0);
}
static int upd_memcpy(struct cg_verdict *o, int m)
{
	pair_init(&P, 2, 2);
	pair_det(&P, 1, CU_GRAPH_NODE_TYPE_MEMCPY);
	P.xo[0].grid[0] = CG_CPY_H2D;
	P.xn[0].grid[0] = CG_CPY_D2H;
	return run_update(&P, o, m, 0);
}
/* issue 31: child graph nodes, compared inside (the update is recursive) */
static int upd_kid_count(struct cg_verdict *o, int m)
{
	pair_init(&P, 2, 2);
	pair_kid(&P, 1, 1, 2);
	return run_update(&P, o, m, 0);
}
static int upd_kid_type(struct cg_verdict *o, int m)
{
	pair_init(&P, 2, 2);
	pair_kid(&P, 1, 2, 2);
	P.ktn[1] = CU_GRAPH_NODE_TYPE_MEMSET;
	return run_update(&P, o, m, 0);
}
static int upd_kid_memcpy(struct cg_verdict *o, int m)
{
	pair_init(&P, 2, 2);
	pair_kid(&P, 0, 1, 1);
	P.kto[0] = P.ktn[0] = CU_GRAPH_NODE_TYPE_MEMCPY;
	P.kxo = (struct cg_ndet){.node = 0, .type = CU_GRAPH_NODE_TYPE_MEMCPY, .grid = {CG_CPY_D2H}};
	P.kxn = (struct cg_ndet){.node = 0, .type = CU_GRAPH_NODE_TYPE_MEMCPY, .grid = {CG_CPY_H2D}};
	P.ko.det = &P.kxo;
	P.kn.det = &P.kxn;
	P.ko.n_det = P.kn.n_det = 1;
	return run_update(&P, o, m, 0);
}
static int upd_kid_same(struct cg_verdict *o, int m)
{
	pair_init(&P, 2, 2);
	pair_kid(&P, 1, 2, 2);
	return run_update(&P, o, m, 0);
}
/* a child not walked on one side (depth, a failed query): not compared */
static int upd_kid_unknown(struct cg_verdict *o, int m)
{
	pair_init(&P, 2, 2);
	pair_kid(&P, 1, 1, 2);
	P.nu.kids = NULL;
	P.nu.n_kids = 0;
	return run_update(&P, o, m, 0);
}
static int upd_same(struct cg_verdict *o, int m)
{
	pair_init(&P, 3, 3);
	return run_update(&P, o, m, 0);
}
static int upd_own(struct cg_verdict *o, int m)
{
	pair_init(&P, 3, 3);
	return run_update(&P, o, m, 1);
}
static int upd_hash(struct cg_verdict *o, int m)
{
	pair_init(&P, 3, 3);
	P.old.topo = P.nu.topo = 0x1234; /* equal hashes: no node loop */
	P.tn[1] = CU_GRAPH_NODE_TYPE_MEMSET;
	return run_update(&P, o, m, 0);
}
static int upd_ctx_same(struct cg_verdict *o, int m)
{
	pair_init(&P, 2, 2);
	pair_det(&P, 1, CU_GRAPH_NODE_TYPE_KERNEL);
	P.xn[0].mctx = 0xc1; /* the current context: accepted */
	fake_ctx = 0xc1;
	return run_update(&P, o, m, 0);
}
static int upd_elem(struct cg_verdict *o, int m)
{
	pair_init(&P, 2, 2);
	pair_det(&P, 1, CU_GRAPH_NODE_TYPE_MEMSET);
	P.xo[0].bytes = P.xn[0].bytes = 256;
	P.xo[0].shmem = 1;
	P.xn[0].shmem = 4; /* the element size alone may change */
	return run_update(&P, o, m, 0);
}

/* ---- CGS002 ------------------------------------------------------------- */
static int upd_inst(struct cg_verdict *o, int m)
{
	pair_init(&P, 2, 2);
	pair_alloc(&P, 0x1000, 0x1000, 0, 0);
	fake_live = (CUgraphExec)0x900;
	return run_update(&P, o, m, 0);
}
static int upd_inst_self(struct cg_verdict *o, int m)
{
	pair_init(&P, 2, 2);
	pair_alloc(&P, 0x1000, 0x1000, 0, 0);
	fake_live = EXEC; /* the graph's live exec is the one updated */
	return run_update(&P, o, m, 0);
}
static int upd_inst_nomem(struct cg_verdict *o, int m)
{
	pair_init(&P, 2, 2);
	fake_live = (CUgraphExec)0x900;
	return run_update(&P, o, m, 0);
}

/* ---- CGS003, CGS012 ----------------------------------------------------- */
static int upd_swap(struct cg_verdict *o, int m)
{
	pair_init(&P, 2, 2);
	pair_alloc(&P, 0x1000, 0x2000, 0, 0);
	return run_update(&P, o, m, 0);
}
static int upd_swap_freed(struct cg_verdict *o, int m)
{
	pair_init(&P, 3, 3);
	pair_alloc(&P, 0x1000, 0x2000, 0, 0);
	/* the exec's graph frees its own allocation: nothing escapes */
	P.mo[1] = (struct cg_mnode){.dptr = 0x1000, .is_free = 1};
	P.mn[1] = (struct cg_mnode){.dptr = 0x2000, .is_free = 1};
	P.old.n_free = P.nu.n_free = 1;
	P.to[2] = P.tn[2] = CU_GRAPH_NODE_TYPE_MEM_FREE;
	return run_update(&P, o, m, 0);
}
static int upd_pool(struct cg_verdict *o, int m)
{
	pair_init(&P, 2, 2);
	pair_alloc(&P, 0x1000, 0x1000, 0xd0, 0xe0);
	return run_update(&P, o, m, 0);
}
static int upd_pool_unknown(struct cg_verdict *o, int m)
{
	pair_init(&P, 2, 2);
	pair_alloc(&P, 0x1000, 0x1000, 0xd0, 0); /* an explicit node: pool unknown */
	return run_update(&P, o, m, 0);
}

static const struct rule_case update_cases[] = {
    {"CGS001", FIRES, "node count differs", upd_count, CUDA_ERROR_GRAPH_EXEC_UPDATE_FAILURE, "predicted_result",
     CU_GRAPH_EXEC_UPDATE_ERROR_TOPOLOGY_CHANGED, "node count differs: exec has 2 nodes, graph 0x200 has 3"},
    {"CGS001", FIRES, "a node changed type", upd_type, CUDA_ERROR_GRAPH_EXEC_UPDATE_FAILURE, "node_index", 1,
     "node 1 changed type: kernel in the exec, memset in the graph"},
    {"CGS001", FIRES, "a node's dependencies changed", upd_deps, CUDA_ERROR_GRAPH_EXEC_UPDATE_FAILURE,
     "predicted_result", CU_GRAPH_EXEC_UPDATE_ERROR_TOPOLOGY_CHANGED, "has 1 dependencies in the exec and 2"},
    {"CGS001", FIRES, "same counts, other edges (chain against fork/join)", upd_edges,
     CUDA_ERROR_GRAPH_EXEC_UPDATE_FAILURE, "node_index", 2, "but on other nodes (or with other edge data)"},
    {"CGS001", SILENT, "same counts, same edges", upd_edges_same, 0, NULL, 0, NULL},
    {"CGS001", FIRES, "function from another context", upd_ctx, CUDA_ERROR_GRAPH_EXEC_UPDATE_FAILURE,
     "predicted_result", CU_GRAPH_EXEC_UPDATE_ERROR_UNSUPPORTED_FUNCTION_CHANGE, "is from another context"},
    {"CGS001", FIRES, "cooperative launch added", upd_coop, CUDA_ERROR_GRAPH_EXEC_UPDATE_FAILURE, "predicted_result",
     CU_GRAPH_EXEC_UPDATE_ERROR_ATTRIBUTES_CHANGED, "cooperative launch added"},
    {"CGS001", FIRES, "memset extent changed", upd_memset, CUDA_ERROR_GRAPH_EXEC_UPDATE_FAILURE, "predicted_result",
     CU_GRAPH_EXEC_UPDATE_ERROR_PARAMETERS_CHANGED, "256 -> 512 bytes"},
    {"CGS001", FIRES, "copy kind changed", upd_memcpy, CUDA_ERROR_GRAPH_EXEC_UPDATE_FAILURE, "predicted_result",
     CU_GRAPH_EXEC_UPDATE_ERROR_PARAMETERS_CHANGED, "kind h2d -> d2h"},
    {"CGS001", FIRES, "child graph: node count", upd_kid_count, CUDA_ERROR_GRAPH_EXEC_UPDATE_FAILURE, "node_index", 1,
     "node 1 (graph): its child graph differs: 1 nodes in the exec's, 2 in the graph's"},
    {"CGS001", FIRES, "child graph: a node changed type", upd_kid_type, CUDA_ERROR_GRAPH_EXEC_UPDATE_FAILURE,
     "predicted_result", CU_GRAPH_EXEC_UPDATE_ERROR_NODE_TYPE_CHANGED,
     "its child graph differs: node 1 changed type: kernel in the exec, memset in the graph"},
    {"CGS001", FIRES, "child graph: copy kind changed", upd_kid_memcpy, CUDA_ERROR_GRAPH_EXEC_UPDATE_FAILURE,
     "predicted_result", CU_GRAPH_EXEC_UPDATE_ERROR_PARAMETERS_CHANGED,
     "node 0 (graph): its child graph differs: node 0 (memcpy): kind d2h -> h2d"},
    {"CGS001", SILENT, "child graph: same", upd_kid_same, 0, NULL, 0, NULL},
    {"CGS001", SILENT, "child graph: not walked on one side", upd_kid_unknown, 0, NULL, 0, NULL},
    {"CGS001", SILENT, "same topology", upd_same, 0, NULL, 0, NULL},
    {"CGS001", SILENT, "the exec's own summary", upd_own, 0, NULL, 0, NULL},
    {"CGS001", SILENT, "equal topology hashes", upd_hash, 0, NULL, 0, NULL},
    {"CGS001", SILENT, "function from the same context", upd_ctx_same, 0, NULL, 0, NULL},
    {"CGS001", SILENT, "memset element size alone", upd_elem, 0, NULL, 0, NULL},
    {"CGS002", FIRES, "memory-node graph instantiated elsewhere", upd_inst, CUDA_ERROR_NOT_SUPPORTED, "other_exec",
     0x900, "is itself instantiated as exec 0x900"},
    {"CGS002", SILENT, "the graph's live exec is the updated one", upd_inst_self, 0, NULL, 0, NULL},
    {"CGS002", SILENT, "no memory nodes", upd_inst_nomem, 0, NULL, 0, NULL},
    {"CGS003", FIRES, "escaping allocation replaced", upd_swap, -1, "new_dptr", 0x2000,
     "replaces its graph allocation 0x1000 (64 bytes) by 0x2000"},
    {"CGS003", SILENT, "allocation freed by its own graph", upd_swap_freed, 0, NULL, 0, NULL},
    {"CGS003", SILENT, "same allocation", upd_pool, 0, NULL, 0, NULL},
    {"CGS012", FIRES, "allocation from another pool", upd_pool, -1, "other_pool", 0xe0,
     "from pool 0xe0 where the exec's came from pool 0xd0 (default)"},
    {"CGS012", SILENT, "a pool unknown", upd_pool_unknown, 0, NULL, 0, NULL},
    {"CGS012", SILENT, "same pool", upd_swap, 0, NULL, 0, NULL},
};
RULE_CASES_TEST(update_cases)

/* The memory rules resume where they stopped when out[] is full. */
static void test_update_memory_resumes(void **state)
{
	struct cg_verdict v[2];
	struct cg_update_ev ev;
	uint32_t pos = 0;
	int n = 0;
	(void)state;
	pair_init(&P, 2, 2);
	pair_alloc(&P, 0x1000, 0x2000, 0xd0, 0xe0); /* CGS012 and CGS003 on one pair */
	ev = (struct cg_update_ev){EXEC, GRAPH, &P.old, &P.nu};
	while (pos != UINT32_MAX)
		n += rules_update_memory(&ev, &view, &pos, v, 2);
	assert_int_equal(n, 2);
	assert_string_equal(cg_rule_id(v[0].rule), "CGS012");
	assert_string_equal(cg_rule_id(v[1].rule), "CGS003");
}

/* rules_update_none (the hook's O(1) answer for a steady update loop):
 * yes for two walked summaries of one topology and refusal fingerprint
 * without memory nodes, and then the full rules agree (no verdict, the
 * same memory); no for each difference the full rules speak of (a
 * verdict, or memory nodes that differ). */
static void none_base(int n_new)
{
	pair_init(&P, 3, (uint32_t)n_new);
	pair_det(&P, 1, CU_GRAPH_NODE_TYPE_KERNEL);
	P.old.topo = P.nu.topo = 0x7070;
	P.old.sig = P.nu.sig = 0x5050;
	P.old.ptrs = P.nu.ptrs = 0x9090;
}

static void none_check(int want, const char *what)
{
	struct cg_verdict v[8];
	struct cg_update_ev ev = {EXEC, GRAPH, &P.old, &P.nu};
	int none = rules_update_none(&P.old, &P.nu), n;
	memset(v, 0, sizeof v);
	n = run_update(&P, v, 8, 0);
	print_message("  rules_update_none %d (want %d), full rules %d verdicts: %s\n", none, want, n, what);
	assert_int_equal(none, want);
	if (none) {
		assert_int_equal(n, 0);
		assert_int_equal(rules_update_same_memory(&ev), 1);
	} else { /* each case below: the full analysis has something to say */
		assert_true(n > 0 || !rules_update_same_memory(&ev));
	}
}

static void test_update_none(void **state)
{
	(void)state;
	none_base(3);
	none_check(1, "one topology and refusal fingerprint, no memory node");
	none_base(3);
	P.xn[0].name = "k_other"; /* other scalar arguments or kernel names: not the rules' concern */
	P.old.ptrs = 0x9191;
	none_check(1, "other pointer fingerprints");
	none_base(3);
	P.nu.topo = 0x7071;
	P.tn[2] = CU_GRAPH_NODE_TYPE_MEMSET;
	none_check(0, "other topology hash (a node changed type)");
	none_base(3);
	P.old.topo = P.nu.topo = 0; /* not walked: compared in full */
	P.tn[2] = CU_GRAPH_NODE_TYPE_MEMSET;
	none_check(0, "no topology hash");
	none_base(4);
	none_check(0, "other node count under one hash");
	none_base(3);
	P.nu.sig = 0x5051;
	P.xn[0].coop = 1;
	none_check(0, "other refusal fingerprint (cooperative launch added)");
	none_base(3);
	P.old.sig = P.nu.sig = 0; /* not computed: the refusal pass runs */
	P.xn[0].coop = 1;
	none_check(0, "no refusal fingerprint");
	none_base(3);
	pair_alloc(&P, 0x1000, 0x2000, 0, 0);
	none_check(0, "memory nodes (an allocation replaced)");
	none_base(3);
	pair_alloc(&P, 0x1000, 0x1000, 0, 0);
	P.old.n_alloc = 0;
	fake_live = (CUgraphExec)0x900;
	none_check(0, "a memory node in the graph only (instantiated elsewhere)");
	none_base(3);
	P.mo[0] = (struct cg_mnode){.dptr = 0x1000, .is_free = 1};
	P.old.mem = P.mo;
	P.old.n_free = 1;
	none_check(0, "a free node in the exec only");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_update_cases),
	    cmocka_unit_test(test_update_memory_resumes),
	    cmocka_unit_test(test_update_none),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
