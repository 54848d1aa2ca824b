/* tests/unit/test-rules-memory.c -- the memory rules (shim/rules/memory.c)
 * as pure functions: hand-built events, ledger findings and a fake model
 * view, no process, no stand-in driver. */
#include "rules-case.h"

/* The fake model: one graph allocation at 0x1000 (capture 7). */
static int fake_alloc_lookup(CUdeviceptr p, uint64_t *capture, uint32_t *site)
{
	if (p < 0x1000 || p >= 0x1100)
		return 0;
	*capture = 7;
	*site = 21;
	return 1;
}

static const struct cg_model_view view = {.alloc_lookup = fake_alloc_lookup};

/* ---- CGS006 ------------------------------------------------------------- */
static int ipc(CUmemoryPool pool, int is_ipc, uint64_t capture, struct cg_verdict *o)
{
	struct cg_alloc_ev ev = {"cuMemAllocAsync", 256, pool, is_ipc, 4, (CUstream)0x30, capture, 5};
	return rules_memory_ipc_pool(&ev, o);
}
static int ipc_capture(struct cg_verdict *o, int m)
{
	(void)m;
	return ipc((CUmemoryPool)0xd0, 1, 7, o);
}
static int ipc_plain_pool(struct cg_verdict *o, int m)
{
	(void)m;
	return ipc((CUmemoryPool)0xd0, 0, 7, o);
}
static int ipc_no_capture(struct cg_verdict *o, int m)
{
	(void)m;
	return ipc((CUmemoryPool)0xd0, 1, 0, o);
}
static int ipc_no_pool(struct cg_verdict *o, int m)
{
	(void)m;
	return ipc(NULL, 1, 7, o);
}

/* ---- CGS009 ------------------------------------------------------------- */
static int fr(CUdeviceptr p, uint64_t capture, struct cg_verdict *o)
{
	struct cg_free_ev ev = {p, (CUstream)0x30, capture};
	return rules_memory_free_foreign(&ev, &view, o);
}
static int free_unknown(struct cg_verdict *o, int m)
{
	(void)m;
	return fr(0x5000, 7, o);
}
static int free_other(struct cg_verdict *o, int m)
{
	(void)m;
	return fr(0x1000, 8, o);
}
static int free_own(struct cg_verdict *o, int m)
{
	(void)m;
	return fr(0x1000, 7, o);
}
static int free_outside(struct cg_verdict *o, int m)
{
	(void)m;
	return fr(0x5000, 0, o);
}

/* ---- CGS011 ------------------------------------------------------------- */
static const struct cg_mnode leak_mem[3] = {
    {.dptr = 0x1000, .size = 64, .pool = (CUmemoryPool)0xd0, .site = 3},
    {.dptr = 0x2000, .size = 64, .site = 4},
    {.dptr = 0x2000, .is_free = 1},
};
static int leak_out(struct cg_verdict *o, int m)
{
	(void)m;
	return rules_memory_leak((CUgraphExec)0x100, leak_mem, 3, 0, "exit", o);
}
static int leak_freed(struct cg_verdict *o, int m)
{
	(void)m;
	return rules_memory_leak((CUgraphExec)0x100, leak_mem, 3, 1, "exit", o);
}
static int leak_free_node(struct cg_verdict *o, int m)
{
	(void)m;
	return rules_memory_leak((CUgraphExec)0x100, leak_mem, 3, 2, "destroy", o);
}

/* ---- CGS018, CGS019 ----------------------------------------------------- */
static struct cg_stale stale(uint64_t val)
{
	return (struct cg_stale){.e = (CUgraphExec)0x100,
				 .g = (CUgraph)0x200,
				 .node = 2,
				 .kernel = "_Z4stepPf",
				 .param = 1,
				 .what = CG_REF_PARAM,
				 .val = val,
				 .base = 0x7000,
				 .size = 0x100,
				 .kind = 2,
				 .nrefs = 1};
}
static int stale_free_in(struct cg_verdict *o, int m)
{
	(void)m;
	struct cg_stale s = stale(0x7010);
	return rules_memory_stale_free(&s, "cuMemFreeAsync", o);
}
static int stale_free_out(struct cg_verdict *o, int m)
{
	(void)m;
	struct cg_stale s = stale(0x7100); /* one past the range */
	return rules_memory_stale_free(&s, "cuMemFreeAsync", o);
}
static int stale_launch_first(struct cg_verdict *o, int m)
{
	(void)m;
	struct cg_stale s = stale(0x7010);
	return rules_memory_stale_launch(&s, "cuGraphLaunch", 1, o);
}
static int stale_launch_again(struct cg_verdict *o, int m)
{
	(void)m;
	struct cg_stale s = stale(0x7010);
	return rules_memory_stale_launch(&s, "cuGraphLaunch", 0, o);
}

/* ---- CGS020 ------------------------------------------------------------- */
static int pageable(int what, struct cg_verdict *o)
{
	return rules_memory_pageable_copy((CUgraphExec)0x100, (CUgraph)0x200, 1, what, 0x7f0000, 4096, 5, 6, o);
}
static int pageable_src(struct cg_verdict *o, int m)
{
	(void)m;
	return pageable(CG_REF_SRC, o);
}
static int pageable_dst(struct cg_verdict *o, int m)
{
	(void)m;
	return pageable(CG_REF_DST, o);
}
static int pageable_param(struct cg_verdict *o, int m)
{
	(void)m;
	return pageable(CG_REF_PARAM, o);
}

static const struct rule_case memory_cases[] = {
    {"CGS006", FIRES, "IPC pool during capture", ipc_capture, CUDA_ERROR_NOT_SUPPORTED, "pool_site", 4,
     "the pool has export handle types (IPC-capable)"},
    {"CGS006", SILENT, "pool without export handles", ipc_plain_pool, 0, NULL, 0, NULL},
    {"CGS006", SILENT, "outside capture", ipc_no_capture, 0, NULL, 0, NULL},
    {"CGS006", SILENT, "pool unknown", ipc_no_pool, 0, NULL, 0, NULL},
    {"CGS009", FIRES, "memory not allocated by a graph", free_unknown, -1, "dptr", 0x5000,
     "the memory was not allocated in this capture"},
    {"CGS009", FIRES, "allocated by another capture", free_other, -1, "alloc_capture", 7,
     "the allocation was made by another capture or graph"},
    {"CGS009", SILENT, "allocated in this capture", free_own, 0, NULL, 0, NULL},
    {"CGS009", SILENT, "outside capture", free_outside, 0, NULL, 0, NULL},
    {"CGS011", FIRES, "allocation outstanding at exit", leak_out, -1, "dptr", 0x1000,
     "graph allocation 0x1000 (64 bytes) is still outstanding at exit"},
    {"CGS011", SILENT, "freed by a free node of its graph", leak_freed, 0, NULL, 0, NULL},
    {"CGS011", SILENT, "a free node", leak_free_node, 0, NULL, 0, NULL},
    {"CGS018", FIRES, "freed range a parameter points into", stale_free_in, -1, "pointer", 0x7010,
     "cuMemFreeAsync frees stream-ordered memory 0x7000 (256 bytes) that exec 0x100 still points into"},
    {"CGS018", SILENT, "pointer past the freed range", stale_free_out, 0, NULL, 0, NULL},
    {"CGS019", FIRES, "first launch of a stale exec", stale_launch_first, -1, "alloc", 0x7000,
     "node 2 (kernel _Z4stepPf) parameter 1 points into 0x7000"},
    {"CGS019", SILENT, "later launches: counted", stale_launch_again, 0, NULL, 0, NULL},
    {"CGS020", FIRES, "copy reads pageable memory", pageable_src, -1, "host", 0x7f0000, "reads from 0x7f0000"},
    {"CGS020", FIRES, "copy writes pageable memory", pageable_dst, -1, "bytes", 4096, "writes to 0x7f0000"},
    {"CGS020", SILENT, "a kernel parameter is no copy", pageable_param, 0, NULL, 0, NULL},
};
RULE_CASES_TEST(memory_cases)

/* CGS011's grade (docs/rules/CGS011.md): warn at the exec's destroy, a
 * hint at process exit (the context's teardown gives the memory back). */
static void test_leak_grade(void **state)
{
	struct cg_verdict v;
	(void)state;
	assert_int_equal(rules_memory_leak((CUgraphExec)0x100, leak_mem, 3, 0, "exec_destroy", &v), 1);
	assert_int_equal(v.hint, 0);
	assert_int_equal(rules_memory_leak((CUgraphExec)0x100, leak_mem, 3, 0, "exit", &v), 1);
	assert_int_equal(v.hint, 1);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_memory_cases),
	    cmocka_unit_test(test_leak_grade),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
