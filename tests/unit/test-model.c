/*
 * tests/unit/test-model.c -- the model linked alone (model-stubs.c stands
 * in for the rest of the shim): the one map from an application's exec
 * handle to the real exec, a table's allocation failure, the execs'
 * claims on graphs (a destroyed graph's die with it), the ledger's pending
 * entry kept on the model's exec, and an alike update's NCCL work.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <pthread.h>

#include "ledger.h"
#include "model/model-int.h"
#include "model-stubs.h"

#define H(x) ((CUgraphExec)(uintptr_t)(x))
#define G(x) ((CUgraph)(uintptr_t)(x))

/* model_exec_destroy, its leak list (none in these tests) freed */
static void destroy(CUgraphExec e)
{
	struct model_leak *leaks;
	struct ev_launches lr;
	int quiet, n = model_exec_destroy(e, &leaks, NULL, &lr, &quiet, NULL);
	assert_int_equal(n, 0);
	free(leaks);
}

static int setup(void **state)
{
	stub_degraded = 0;
	stub_degrade_why = NULL;
	stub_table_fail = 0;
	return 0;
}

/* Link seams (meson.build: --wrap): where the model calls out between two
 * of its locks, a test arms one to run another thread's step right there,
 * to its end (joined), then the call goes on. Disarmed as it fires. */
static void (*seam_leaks)(void);
static int seam_fired;
void __real_model_alloc_leaks(CUgraphExec e, uint64_t exec_id, const struct cg_mnode *mem, int n,
			      struct model_leak **out, int *n_out);
void __wrap_model_alloc_leaks(CUgraphExec e, uint64_t exec_id, const struct cg_mnode *mem, int n,
			      struct model_leak **out, int *n_out)
{
	void (*f)(void) = seam_leaks;
	seam_leaks = NULL;
	if (f) {
		f();
		seam_fired++;
	}
	__real_model_alloc_leaks(e, exec_id, mem, n, out, n_out);
}

static void (*seam_info)(void);
int __real_model_graph_info(CUgraph g, int *origin, uint64_t *capture, uint32_t *site, int *mem_nodes);
int __wrap_model_graph_info(CUgraph g, int *origin, uint64_t *capture, uint32_t *site, int *mem_nodes)
{
	void (*f)(void) = seam_info;
	seam_info = NULL;
	if (f) {
		f();
		seam_fired++;
	}
	return __real_model_graph_info(g, origin, capture, site, mem_nodes);
}

/* A destroy of victim on another thread as the hook makes it (the model
 * first, then the ledger if the model's exec held no pending entry of its
 * own), run to its end. No cmocka assert off the main thread. */
static CUgraphExec victim;
static void *destroy_main(void *arg)
{
	struct model_leak *leaks = NULL;
	struct ev_launches lr;
	int quiet, on_model = 0;
	(void)arg;
	model_exec_destroy(victim, &leaks, NULL, &lr, &quiet, &on_model);
	free(leaks);
	if (!on_model)
		ledger_exec_gone(victim);
	return NULL;
}
static void destroy_victim_elsewhere(void)
{
	pthread_t th;
	if (pthread_create(&th, NULL, destroy_main, NULL) == 0)
		pthread_join(th, NULL);
}

static void exec_map_unknown_handle_is_itself(void **state)
{
	assert_ptr_equal(model_exec_real_of(H(0x1000)), H(0x1000));
	assert_int_equal(model_exec_set_real(H(0x1000), H(0x2000)), 0);
	assert_ptr_equal(model_exec_real_of(H(0x1000)), H(0x1000));
}

static void exec_map_new_exec_stands_for_itself(void **state)
{
	model_exec_new(H(0x1100), G(0x9100), 0, 0, NULL, 0, -1, 0, 0, NULL, 0);
	assert_ptr_equal(model_exec_real_of(H(0x1100)), H(0x1100));
	destroy(H(0x1100));
}

static void exec_map_set_real_is_seen_by_every_reader(void **state)
{
	struct cg_exec *x;
	model_exec_new(H(0x1200), G(0x9200), 0, 0, NULL, 0, -1, 0, 0, NULL, 0);
	assert_int_equal(model_exec_set_real(H(0x1200), H(0x2200)), 1);
	assert_ptr_equal(model_exec_real_of(H(0x1200)), H(0x2200));
	/* the launch path reads the same map */
	x = model_exec_fast(H(0x1200));
	assert_non_null(x);
	assert_ptr_equal(model_exec_real(x), H(0x2200));
	/* a rewrite's bookkeeping keeps the real exec the policy set */
	model_exec_rewritten(H(0x1200), G(0x9201), NULL);
	assert_ptr_equal(model_exec_real_of(H(0x1200)), H(0x2200));
	/* another exec is not affected */
	model_exec_new(H(0x1300), G(0x9300), 0, 0, NULL, 0, -1, 0, 0, NULL, 0);
	assert_ptr_equal(model_exec_real_of(H(0x1300)), H(0x1300));
	destroy(H(0x1300));
	destroy(H(0x1200));
}

static void exec_map_forgets_a_destroyed_exec(void **state)
{
	model_exec_new(H(0x1400), G(0x9400), 0, 0, NULL, 0, -1, 0, 0, NULL, 0);
	assert_int_equal(model_exec_set_real(H(0x1400), H(0x2400)), 1);
	destroy(H(0x1400));
	assert_ptr_equal(model_exec_real_of(H(0x1400)), H(0x1400));
	assert_int_equal(model_exec_set_real(H(0x1400), H(0x2401)), 0);
	/* the handle value reused by the driver: a fresh exec, standing for itself */
	model_exec_new(H(0x1400), G(0x9401), 0, 0, NULL, 0, -1, 0, 0, NULL, 0);
	assert_ptr_equal(model_exec_real_of(H(0x1400)), H(0x1400));
	destroy(H(0x1400));
}

/* A summary as an instantiation from a captured graph not yet walked
 * gets (model_graph_partial): the exec claims its graph until settled. */
static struct cg_summary *partial_summary(void)
{
	struct cg_summary *s = calloc(1, sizeof *s);
	assert_non_null(s);
	atomic_init(&s->refs, 1);
	s->partial = 1;
	return s;
}

/* Every graph's claims are counted in one sum that a graph destroy or
 * node add reads without the lock (model_graph_claimed): the sum follows
 * each claim made and dropped, and a graph destroyed with claims on it
 * (its destroy did not settle) takes them along; the handle, come back as
 * another graph, is claimed by nothing. Without the clear at the destroy
 * the sum stays above zero and every later destroy takes the lock again;
 * without the count at the instantiation a claimed graph is not settled. */
static void graph_claims_die_with_the_graph(void **state)
{
	long base = atomic_load(&model_xl.claims);
	model_graph_new(G(0x9700), 1, 0, 0, 0);
	model_graph_new(G(0x9800), 1, 0, 0, 0);
	assert_int_equal(model_graph_claimed(G(0x9700)), 0);
	model_exec_new(H(0x1700), G(0x9700), 0, 0, partial_summary(), 0, -1, 0, 0, NULL, 0);
	model_exec_new(H(0x1701), G(0x9700), 0, 0, partial_summary(), 0, -1, 0, 0, NULL, 0);
	model_exec_new(H(0x1800), G(0x9800), 0, 0, partial_summary(), 0, -1, 0, 0, NULL, 0);
	assert_int_equal(model_graph_claimed(G(0x9700)), 2);
	assert_int_equal(model_graph_claimed(G(0x9800)), 1);
	assert_int_equal(atomic_load(&model_xl.claims), base + 3);
	/* an exec that goes drops its claim */
	destroy(H(0x1800));
	assert_int_equal(model_graph_claimed(G(0x9800)), 0);
	assert_int_equal(atomic_load(&model_xl.claims), base + 2);
	/* a graph destroyed under its claims: they go with it */
	model_graph_destroy(G(0x9700));
	assert_int_equal(atomic_load(&model_xl.claims), base);
	model_graph_new(G(0x9700), 1, 0, 0, 0);
	assert_int_equal(model_graph_claimed(G(0x9700)), 0);
	/* the execs that claimed it go later: nothing counted twice */
	destroy(H(0x1700));
	destroy(H(0x1701));
	assert_int_equal(atomic_load(&model_xl.claims), base);
	model_graph_destroy(G(0x9700));
	model_graph_destroy(G(0x9800));
}

/* The graph table keeps the last entry it found (model_graph_last): a
 * destroyed graph's goes with it, so its handle is unknown until the
 * driver hands it out again, then another graph (another id). Without the
 * drop at the destroy the lookup after it answers from the freed entry. */
static void graph_last_found_goes_with_the_graph(void **state)
{
	struct model_ids ids;
	uint64_t first;
	model_graph_new(G(0x9a00), 1, 0, 0, 0);
	model_graph_new(G(0x9b00), 1, 0, 0, 0);
	model_ids_get(G(0x9a00), NULL, &ids);
	first = ids.graph;
	assert_int_not_equal(first, 0);
	assert_ptr_equal(model_graph_last->h, G(0x9a00));
	model_graph_destroy(G(0x9a00));
	assert_null(model_graph_last);
	model_ids_get(G(0x9a00), NULL, &ids);
	assert_int_equal(ids.graph, 0);
	/* another graph's lookup is not disturbed, and is kept */
	model_ids_get(G(0x9b00), NULL, &ids);
	assert_int_not_equal(ids.graph, 0);
	assert_ptr_equal(model_graph_last->h, G(0x9b00));
	/* the handle again: another graph */
	model_graph_new(G(0x9a00), 1, 0, 0, 0);
	model_ids_get(G(0x9a00), NULL, &ids);
	assert_int_not_equal(ids.graph, 0);
	assert_int_not_equal(ids.graph, first);
	first = ids.graph;
	/* another graph destroyed: its lookup made it the last, then it went */
	model_graph_destroy(G(0x9b00));
	assert_null(model_graph_last);
	model_ids_get(G(0x9a00), NULL, &ids);
	assert_int_equal(ids.graph, first);
	model_graph_destroy(G(0x9a00));
}

/* A summary of one node, its one reference held; *part (n bytes) calloc'd. */
static struct cg_summary *one_node_summary(void **part, size_t n)
{
	struct cg_summary *s = calloc(1, sizeof *s);
	assert_non_null(s);
	*part = calloc(1, n);
	assert_non_null(*part);
	atomic_init(&s->refs, 1);
	s->n_nodes = 1;
	return s;
}

/* A full summary of one kernel node whose first parameter is p. */
static struct cg_summary *kernel_summary(uint64_t p)
{
	void *det;
	struct cg_summary *s = one_node_summary(&det, sizeof *s->det);
	s->det = det;
	s->n_det = 1;
	s->det[0].type = CU_GRAPH_NODE_TYPE_KERNEL;
	s->det[0].name = "k";
	s->det[0].np = 1;
	s->det[0].p[0].val = p;
	return s;
}

/* The ledger keeps the last exec it found or made (lg_last): a destroyed
 * exec's goes with it. Its references' holder entries outlive it, so the
 * free of the memory they pointed into looks it up by handle: it must find
 * nothing (no exec made stale). Without the drop at ledger_exec_gone the
 * lookup reads the freed entry (ASan: heap-use-after-free; the plain build
 * sees it only where the freed entry's handle survives the free). */
static void ledger_last_found_goes_with_the_exec(void **state)
{
	struct ledger_freed f;
	struct ledger_pageable pg;
	struct cg_summary *s = kernel_summary(0x7f0000100010ull), *s2;
	memset(&f, 0, sizeof f);
	ledger_add(0x7f0000100000ull, 4096, LG_DEVICE, 0);
	ledger_exec_set(H(0x1900), G(0x9900), 1, s, &pg);
	ledger_exec_gone(H(0x1900));
	assert_int_equal(ledger_free(0x7f0000100000ull, 0, 0, &f), 0);
	assert_int_equal(f.n, 0);
	ledger_free_site(&f, 0);
	/* a live exec's references still make it stale */
	memset(&f, 0, sizeof f);
	ledger_add(0x7f0000200000ull, 4096, LG_DEVICE, 0);
	ledger_exec_set(H(0x1a00), G(0x9a00), 1, s, &pg);
	s2 = kernel_summary(0x7f0000200010ull);
	ledger_exec_set(H(0x1b00), G(0x9b00), 1, s2, &pg);
	assert_int_equal(ledger_free(0x7f0000200000ull, 0, 0, &f), 1);
	ledger_free_site(&f, 0);
	ledger_exec_gone(H(0x1b00));
	ledger_exec_gone(H(0x1a00));
	model_summary_free(s);
	model_summary_free(s2);
}

/* A walked summary of one memo class (model.h model_memo_class): all
 * alike. */
static struct cg_summary *class_summary(void)
{
	struct cg_summary *s = calloc(1, sizeof *s);
	assert_non_null(s);
	atomic_init(&s->refs, 1);
	s->n_nodes = 1;
	s->topo = 0x70, s->sig = 0x50, s->ptrs = 0x90;
	return s;
}

/* e's NCCL facts (model_nccl_execs), 0 nccl when it holds none. */
static struct model_nccl_exec nccl_of(CUgraphExec e)
{
	struct model_nccl_exec v[8], none = {0};
	int n = model_nccl_execs(v, 8, 0);
	for (int i = 0; i < n && i < 8; i++)
		if (v[i].e == e)
			return v[i];
	return none;
}

/* An update between summaries of one memo class takes its graph's NCCL
 * work as model_nccl_exec_from would (model_exec_updated_alike): what the
 * analysis saw (model_update_summaries: the exec, the graph's facts) while
 * the model epoch has not moved, else looked up again. Without the epoch
 * check the stale facts of the second update would stand. */
static void update_alike_takes_the_graphs_nccl(void **state)
{
	struct cg_update_seen seen;
	struct model_nccl_exec v;
	uint64_t epoch;
	model_graph_new(G(0x9c00), 1, 0xc0, 5, 0);
	model_nccl_graph_set(G(0x9c00), 3, 77);
	model_exec_new(H(0x1c00), G(0x9d00), 0, 0, class_summary(), 0, -1, 0, 0, NULL, 0);
	assert_int_equal(nccl_of(H(0x1c00)).nccl, 0);
	epoch = model_epoch_now();
	pthread_mutex_lock(&model_gx_lock);
	seen.x = model_exec_find_locked(H(0x1c00));
	model_nccl_of_graph_locked(model_graph_find_locked(G(0x9c00)), &seen);
	pthread_mutex_unlock(&model_gx_lock);
	assert_int_equal(seen.nccl, 3);
	assert_int_equal(seen.site, 77);
	assert_int_equal(seen.capture, 0xc0);
	model_exec_updated_alike(H(0x1c00), G(0x9c00), class_summary(), epoch, &seen);
	v = nccl_of(H(0x1c00));
	assert_int_equal(v.nccl, 3);
	assert_int_equal(v.cap_site, 77);
	assert_int_equal(v.capture, 0xc0);
	/* the epoch moved since the analysis (some graph changed): what it saw
	 * no longer stands, the exec and the graph are looked up again */
	seen.nccl = 99, seen.site = 98, seen.capture = 97;
	epoch = model_epoch_now();
	model_graph_mutated(G(0x9e00));
	model_exec_updated_alike(H(0x1c00), G(0x9c00), class_summary(), epoch, &seen);
	v = nccl_of(H(0x1c00));
	assert_int_equal(v.nccl, 3);
	assert_int_equal(v.cap_site, 77);
	assert_int_equal(v.capture, 0xc0);
	destroy(H(0x1c00));
	model_graph_destroy(G(0x9c00));
}

/* n handles whose first slot in the launch index is e's (model-int.h
 * model_exec_home), other than e: made, they fill e's neighbourhood. */
static void same_home(CUgraphExec e, CUgraphExec *out, int n)
{
	unsigned home = model_exec_home(e);
	for (uintptr_t h = 0x100000; n; h += 16)
		if ((CUgraphExec)h != e && model_exec_home((CUgraphExec)h) == home)
			*out++ = (CUgraphExec)h, n--;
}

/* Run first, on an empty exec table: an exec the launch index has no slot
 * for goes into the table, whose first add allocates it. The execs the
 * index holds need no table (issue 36: an instantiation and a destroy
 * touch no table line). */
static void exec_table_failure_is_its_own(void **state)
{
	long long graphs_before = cg_table_failures(&model_graph_table);
	CUgraphExec full[64];
	struct cg_exec_view v;
	same_home(H(0x1500), full, 64);
	stub_table_fail = 1; /* the index's execs allocate nothing */
	for (int i = 0; i < 64; i++)
		model_exec_new(full[i], G(0x9400), 0, 0, NULL, 0, -1, 0, 0, NULL, 0);
	assert_int_equal(cg_table_failures(&model_exec_table), 0);
	assert_int_equal(stub_degraded, 0);
	assert_int_equal(model_exec_view(full[63], &v), 1);
	model_exec_new(H(0x1500), G(0x9500), 0, 0, NULL, 0, -1, 0, 0, NULL, 0);
	stub_table_fail = 0;
	assert_int_equal(cg_table_failures(&model_exec_table), 1);
	assert_int_equal(cg_table_failures(&model_graph_table), graphs_before);
	assert_int_equal(cg_table_failures(&model_pool_table), 0);
	assert_int_equal(stub_degraded, 1);
	assert_string_equal(stub_degrade_why, "exec table");
	/* the exec did not go in: nothing half registered */
	assert_int_equal(model_exec_view(H(0x1500), &v), 0);
	assert_null(model_exec_fast(H(0x1500)));
	assert_ptr_equal(model_exec_real_of(H(0x1500)), H(0x1500));
	assert_int_equal(model_execs_live(), 64);
	/* the report was taken: the next add does not see it again, and the
	 * table's exec is found, listed and destroyed as the index's are */
	model_exec_new(H(0x1500), G(0x9600), 0, 0, NULL, 0, -1, 0, 0, NULL, 0);
	assert_int_equal(cg_table_failures(&model_exec_table), 1);
	assert_int_equal(stub_degraded, 1);
	assert_int_equal(model_exec_view(H(0x1500), &v), 1);
	assert_ptr_equal(v.graph, G(0x9600));
	assert_non_null(model_exec_fast(H(0x1500)));
	assert_int_equal(model_execs_live(), 65);
	destroy(H(0x1500));
	assert_int_equal(model_exec_view(H(0x1500), &v), 0);
	assert_null(model_exec_fast(H(0x1500)));
	for (int i = 0; i < 64; i++)
		destroy(full[i]);
	assert_int_equal(model_execs_live(), 0);
}

/* The live execs are listed in the order made, whichever leaves first
 * (the exit's launch records and the ledger's pending entries go by it). */
static void exec_list_keeps_the_order_made(void **state)
{
	struct ev_launches *lr;
	struct model_leak *leaks;
	long long launches, live;
	int n_lr;
	for (int i = 0; i < 5; i++)
		model_exec_new(H(0x3000 + 16 * i), G(0x9a00), 0, 0, NULL, 0, -1, 0, 0, NULL, 0);
	destroy(H(0x3000));	 /* the first */
	destroy(H(0x3000 + 32)); /* a middle one */
	destroy(H(0x3000 + 64)); /* the last */
	model_exec_new(H(0x3000 + 80), G(0x9a00), 0, 0, NULL, 0, -1, 0, 0, NULL, 0);
	model_exec_new(H(0x3000), G(0x9a00), 0, 0, NULL, 0, -1, 0, 0, NULL, 0);
	assert_int_equal(model_exec_exit(&launches, &live, &leaks, &lr, &n_lr), 0);
	free(leaks);
	assert_int_equal(live, 4);
	assert_int_equal(n_lr, 4);
	assert_int_equal(lr[0].exec, 0x3000 + 16);
	assert_int_equal(lr[1].exec, 0x3000 + 48);
	assert_int_equal(lr[2].exec, 0x3000 + 80);
	assert_int_equal(lr[3].exec, 0x3000);
	free(lr);
	for (int i = 0; i < 6; i++)
		if (i != 2 && i != 4)
			destroy(H(0x3000 + 16 * i));
	assert_int_equal(model_execs_live(), 0);
	assert_int_equal(model_exec_exit(&launches, &live, &leaks, &lr, &n_lr), 0);
	assert_int_equal(live, 0);
	free(leaks);
	free(lr);
}

static void pool_table_failure_is_its_own(void **state)
{
	int ipc, def;
	uint32_t site;
	stub_table_fail = 1;
	model_pool_seen((CUmemoryPool)(uintptr_t)0x7000, 0, 1);
	stub_table_fail = 0;
	assert_int_equal(cg_table_failures(&model_pool_table), 1);
	assert_int_equal(cg_table_failures(&model_exec_table), 1); /* the test before's, unchanged */
	assert_string_equal(stub_degrade_why, "pool table");
	assert_int_equal(model_pool_info((CUmemoryPool)(uintptr_t)0x7000, &ipc, &def, &site), 0);
}

/* A pool handle the driver gives again after that pool's destroy is a new
 * pool: the old one's default flag, device and counts do not carry over
 * (caches keyed by a handle die with it). */
static void pool_handle_reused_is_a_new_pool(void **state)
{
	CUmemoryPool p = (CUmemoryPool)(uintptr_t)0x7100;
	CUmemPoolProps props = {0};
	struct ev_pool *out = NULL;
	int ipc = -1, def = -1, n;
	uint32_t site = 0;
	(void)state;
	model_pool_seen(p, 0, 1);
	assert_int_equal(model_pool_info(p, &ipc, &def, &site), 1);
	assert_int_equal(def, 1);
	model_pool_destroy(p);
	props.location.id = 1;
	model_pool_new(p, &props, 77);
	assert_int_equal(model_pool_info(p, &ipc, &def, &site), 1);
	assert_int_equal(def, 0);
	assert_int_equal(ipc, 0);
	assert_int_equal(site, 77);
	n = model_pool_exit(&out);
	for (int i = 0; i < n; i++)
		if (out[i].pool == (uintptr_t)p) {
			assert_int_equal(out[i].default_, 0);
			assert_int_equal(out[i].destroyed, 0);
			assert_int_equal(out[i].dev, 1);
		}
	free(out);
}

/* A captured allocation's pool answer (model_pool_for_alloc) follows every
 * change to what it reads, though each thread keeps its last answer
 * (issue 36): the current pool set, the pool's properties learned, its
 * default flag, another current pool, a pool asked by handle, the current
 * one destroyed. Each step asks twice: the second is the kept answer. */
static void pool_answer_follows_every_change(void **state)
{
	CUmemoryPool P = (CUmemoryPool)(uintptr_t)0x7500, Q = (CUmemoryPool)(uintptr_t)0x7600, p;
	CUmemPoolProps props = {.handleTypes = CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR,
				.location = {.type = CU_MEM_LOCATION_TYPE_DEVICE, .id = 2}};
	int ipc, def, found;
	uint32_t site;
	uint8_t mdev;
	(void)state;
#define ASK(dev, asked)                                                                                                \
	do {                                                                                                           \
		int again_;                                                                                            \
		p = (asked);                                                                                           \
		found = model_pool_for_alloc((dev), &p, &ipc, &def, &site, &mdev);                                     \
		CUmemoryPool p2_ = (asked);                                                                            \
		int ipc2_, def2_;                                                                                      \
		uint32_t site2_;                                                                                       \
		uint8_t mdev2_;                                                                                        \
		again_ = model_pool_for_alloc((dev), &p2_, &ipc2_, &def2_, &site2_, &mdev2_);                          \
		assert_int_equal(again_, found);                                                                       \
		assert_ptr_equal(p2_, p);                                                                              \
		assert_int_equal(ipc2_, ipc);                                                                          \
		assert_int_equal(def2_, def);                                                                          \
		assert_int_equal(site2_, site);                                                                        \
		assert_int_equal(mdev2_, mdev);                                                                        \
	} while (0)
	model_device_set_pool(1, P, 11);
	ASK(1, NULL);
	assert_int_equal(found, 1);
	assert_ptr_equal(p, P);
	assert_int_equal(ipc, 0);
	assert_int_equal(site, 0);
	assert_int_equal(mdev, 2); /* the pool's device unknown: the context's */
	model_pool_new(P, &props, 22);
	ASK(1, NULL);
	assert_int_equal(ipc, 1);
	assert_int_equal(site, 22);
	assert_int_equal(mdev, 3); /* the pool's own device */
	assert_int_equal(def, 0);
	model_pool_seen(P, 2, 1);
	ASK(1, NULL);
	assert_int_equal(def, 1);
	model_device_set_pool(1, Q, 33);
	ASK(1, NULL);
	assert_ptr_equal(p, Q);
	assert_int_equal(ipc, 0);
	assert_int_equal(def, 0);
	ASK(1, P);
	assert_ptr_equal(p, P);
	assert_int_equal(ipc, 1);
	model_pool_destroy(Q); /* device 1 has no default pool the model knows */
	ASK(1, NULL);
	assert_null(p);
	assert_int_equal(found, 0);
	assert_int_equal(mdev, 2);
#undef ASK
}

/* Destroying a device's current pool makes its default pool current again
 * (the driver's rule, cuMemPoolDestroy): the model's current pool follows,
 * so a later captured allocation is not described from the dead pool. */
static void pool_destroyed_current_falls_back_to_default(void **state)
{
	CUmemoryPool def = (CUmemoryPool)(uintptr_t)0x7200, mine = (CUmemoryPool)(uintptr_t)0x7300;
	CUmemPoolProps props = {0};
	(void)state;
	model_pool_seen(def, 2, 1);
	props.location.id = 2;
	model_pool_new(mine, &props, 5);
	model_device_set_pool(2, mine, 5);
	assert_ptr_equal(model_device_pool(2, NULL), mine);
	model_pool_destroy(mine);
	assert_ptr_equal(model_device_pool(2, NULL), def);
}

/* A pending entry kept on the model's exec (model_exec_new lg_pending, the
 * ledger having none for the handle): the ledger makes no entry of its own;
 * the first free works it out with the instantiation's graph, sites and
 * capture (the CGS018 finding's), the entry the ledger's from then on (its
 * destroy owes ledger_exec_gone); an exec destroyed before any free owes
 * the ledger nothing and leaves it empty. */
static void ledger_pending_kept_on_the_model_exec(void **state)
{
	struct ledger_freed f;
	struct model_leak *leaks = NULL;
	struct ev_launches lr;
	int quiet, on_model = -1;
	memset(&f, 0, sizeof f);
	ledger_add(0x7f0000300000ull, 4096, LG_DEVICE, 0);
	assert_int_equal(ledger_exec_known(H(0x1d00)), 0);
	model_exec_new(H(0x1d00), G(0x9e00), 0, 0x51, kernel_summary(0x7f0000300010ull), 0, -1, 7, 0x52, NULL, 1);
	assert_int_equal(ledger_exec_known(H(0x1d00)), 0);
	assert_int_equal(ledger_free(0x7f0000300000ull, 0, 0, &f), 1);
	assert_int_equal(f.n, 1);
	assert_ptr_equal(f.s[0].e, H(0x1d00));
	assert_ptr_equal(f.s[0].g, G(0x9e00));
	assert_int_equal(f.s[0].exec_site, 0x51);
	assert_int_equal(f.s[0].capture, 7);
	assert_int_equal(f.s[0].capture_site, 0x52);
	ledger_free_site(&f, 0);
	assert_int_equal(ledger_exec_known(H(0x1d00)), 1);
	assert_int_equal(model_exec_destroy(H(0x1d00), &leaks, NULL, &lr, &quiet, &on_model), 0);
	assert_int_equal(on_model, 0);
	free(leaks);
	ledger_exec_gone(H(0x1d00));
	assert_int_equal(ledger_exec_known(H(0x1d00)), 0);
	model_exec_new(H(0x1e00), G(0x9f00), 0, 0x53, kernel_summary(0x7f0000400010ull), 0, -1, 8, 0x54, NULL, 1);
	assert_int_equal(model_exec_destroy(H(0x1e00), &leaks, NULL, &lr, &quiet, &on_model), 0);
	assert_int_equal(on_model, 1);
	free(leaks);
	assert_int_equal(ledger_exec_known(H(0x1e00)), 0);
}

/* A free works out the references of the pending execs (ledger_free ->
 * ledger_resolve_pending) with no lock held between the model's summary
 * and the ledger's entry, and the exec's thread may destroy it right
 * there (the seam: the ledger asks the model about the graph in that
 * window). The references must not be published for the dead handle: an
 * entry kept for it made a later free of the range it pointed into name
 * it (CGS018 of a destroyed exec). Once with the ledger's own pending
 * entry (the ledger knew the handle at the instantiation), once with the
 * model's (taken from the model's exec first: the destroy then owes the
 * ledger its ledger_exec_gone). Both fail without the resolution's
 * liveness check: the handle known to the ledger, the last free 1. */
static void free_while_destroyed(CUgraphExec e, uint64_t range)
{
	struct ledger_freed f;
	memset(&f, 0, sizeof f);
	victim = e;
	seam_fired = 0;
	seam_info = destroy_victim_elsewhere;
	assert_int_equal(ledger_free(range, 0, 0, &f), 0);
	assert_int_equal(seam_fired, 1);
	assert_int_equal(ledger_exec_known(e), 0);
}

static void ledger_resolve_drops_an_exec_destroyed_meanwhile(void **state)
{
	struct ledger_freed f;
	(void)state;
	memset(&f, 0, sizeof f);
	ledger_add(0x7f0000500000ull, 4096, LG_DEVICE, 0); /* what both point into */
	ledger_add(0x7f0000600000ull, 4096, LG_DEVICE, 0);
	ledger_add(0x7f0000700000ull, 4096, LG_DEVICE, 0);
	model_exec_new(H(0x5000), G(0xa000), 0, 0x61, kernel_summary(0x7f0000500010ull), 0, -1, 9, 0x62, NULL, 0);
	ledger_exec_pending(H(0x5000), G(0xa000), 0x61, 9, 0x62);
	assert_int_equal(ledger_exec_known(H(0x5000)), 1);
	free_while_destroyed(H(0x5000), 0x7f0000600000ull);

	model_exec_new(H(0x5100), G(0xa100), 0, 0x63, kernel_summary(0x7f0000500020ull), 0, -1, 10, 0x64, NULL, 1);
	assert_int_equal(ledger_exec_known(H(0x5100)), 0);
	free_while_destroyed(H(0x5100), 0x7f0000700000ull);

	assert_int_equal(ledger_free(0x7f0000500000ull, 0, 0, &f), 0);
	assert_int_equal(model_execs_live(), 0);
}

/* An update of the exec on another thread in the same window (the hook's
 * ledger_exec_set from the new graph's summary, pointing elsewhere): its
 * references are newer than those the resolution worked out from the
 * summary it read before, and must stand. Before, the resolution
 * published its older ones over them: a later free of the range the exec
 * no longer pointed into named it (a false CGS018), and the free of the
 * range it now pointed into named nothing. Once with the ledger's own
 * pending entry, once with the model's; the instantiation's site is kept
 * either way (the update names none). */
static struct cg_summary *upd_sum;
static void *update_main(void *arg)
{
	struct ledger_pageable pg;
	(void)arg;
	ledger_exec_set(victim, G(0xb0f0), 0, upd_sum, &pg);
	return NULL;
}
static void update_victim_elsewhere(void)
{
	pthread_t th;
	if (pthread_create(&th, NULL, update_main, NULL) == 0)
		pthread_join(th, NULL);
}

static void free_while_updated(CUgraphExec e, uint64_t trigger, uint64_t old_range, uint64_t new_range, uint32_t site)
{
	struct ledger_freed f;
	memset(&f, 0, sizeof f);
	victim = e;
	upd_sum = kernel_summary(new_range + 0x10);
	seam_fired = 0;
	seam_info = update_victim_elsewhere;
	assert_int_equal(ledger_free(trigger, 0, 0, &f), 0);
	assert_int_equal(seam_fired, 1);
	model_summary_free(upd_sum);
	assert_int_equal(ledger_free(old_range, 0, 0, &f), 0); /* no longer pointed into */
	assert_int_equal(ledger_free(new_range, 0, 0, &f), 1);
	assert_ptr_equal(f.s[0].e, e);
	assert_int_equal(f.s[0].exec_site, site);
	ledger_free_site(&f, 0);
}

static void ledger_resolve_yields_to_an_update_meanwhile(void **state)
{
	struct model_leak *leaks = NULL;
	struct ev_launches lr;
	int quiet, on_model = -1;
	(void)state;
	for (int i = 0; i < 6; i++)
		ledger_add(0x7f0000800000ull + 0x100000ull * i, 4096, LG_DEVICE, 0);
	model_exec_new(H(0x5200), G(0xb000), 0, 0x71, kernel_summary(0x7f0000800010ull), 0, -1, 11, 0x72, NULL, 0);
	ledger_exec_pending(H(0x5200), G(0xb000), 0x71, 11, 0x72);
	free_while_updated(H(0x5200), 0x7f0000a00000ull, 0x7f0000800000ull, 0x7f0000900000ull, 0x71);

	model_exec_new(H(0x5300), G(0xb100), 0, 0x73, kernel_summary(0x7f0000b00010ull), 0, -1, 12, 0x74, NULL, 1);
	assert_int_equal(ledger_exec_known(H(0x5300)), 0);
	free_while_updated(H(0x5300), 0x7f0000d00000ull, 0x7f0000b00000ull, 0x7f0000c00000ull, 0x73);

	for (CUgraphExec e = H(0x5200); e; e = e == H(0x5200) ? H(0x5300) : NULL) {
		assert_int_equal(model_exec_destroy(e, &leaks, NULL, &lr, &quiet, &on_model), 0);
		free(leaks);
		leaks = NULL;
		ledger_exec_gone(e);
	}
	assert_int_equal(model_execs_live(), 0);
}

/* A summary of one allocation node no node of its graph frees. */
static struct cg_summary *alloc_summary(CUdeviceptr d)
{
	void *mem;
	struct cg_summary *s = one_node_summary(&mem, sizeof *s->mem);
	s->mem = mem;
	s->n_alloc = 1;
	s->mem[0] = (struct cg_mnode){.dptr = d, .size = 256, .dev = 1};
	return s;
}

/* The exit's leak records (model_exec_exit) walk the live execs while
 * another thread may still destroy one: each leak is worked out outside
 * gx_lock (model_alloc_leaks takes mem_lock), and a destroy there of the
 * exec the walk goes to next took it off the list (its link cleared, the
 * struct on the free list): the walk ended early, and the execs after it
 * were never named. Three execs whose launch left an allocation; the
 * second destroyed while the first's leak is worked out: the third is
 * still named. */
static void exit_leaks_survive_a_destroy_meanwhile(void **state)
{
	struct ev_launches *lr;
	struct model_leak *leaks;
	long long launches, live;
	int n_lr, n, unfreed, autofree, third = 0;
	(void)state;
	for (int i = 0; i < 3; i++) {
		model_exec_new(H(0x4000 + 16 * i), G(0x9c00), 0, 0, alloc_summary(0x7e0000000000ull + 4096 * i), 0, 0,
			       0, 0, NULL, 0);
		model_exec_launched(model_exec_fast(H(0x4000 + 16 * i)), &unfreed, &autofree);
	}
	victim = H(0x4010);
	seam_fired = 0;
	seam_leaks = destroy_victim_elsewhere;
	n = model_exec_exit(&launches, &live, &leaks, &lr, &n_lr);
	assert_int_equal(seam_fired, 1);
	assert_int_equal(n_lr, 3); /* the launch records: all three, before the leaks */
	for (int i = 0; i < n; i++)
		third += leaks[i].e == H(0x4020) && leaks[i].m.dptr == 0x7e0000002000ull;
	assert_int_equal(third, 1);
	assert_ptr_equal(leaks[0].e, H(0x4000));
	free(leaks);
	free(lr);
	victim = H(0x4000); /* their own leaks at the destroy, freed */
	destroy_main(NULL);
	victim = H(0x4020);
	destroy_main(NULL);
	assert_int_equal(model_execs_live(), 0);
}

/* The driver's own exec id (cuGraphExecGetId) of a handle the driver has
 * destroyed behind the model's back: its context went (cudaDeviceReset,
 * cuCtxDestroy: no hook; the exit summary's CGS011 still names the exec),
 * or another thread destroyed it between a record's lookup and a query
 * made then. The shim never asks about a dead handle (for the real driver
 * a read of freed memory), and every record gives the id the handle had
 * while it lived: the id is asked of the handle the instantiation was
 * just given. */
static CUgraphExec fake_live;
static unsigned fake_live_id;
static int fake_dead_asks;
static CUresult fake_exec_id(CUgraphExec e, unsigned *id)
{
	if (!e || e != fake_live) {
		fake_dead_asks++;
		return CUDA_ERROR_INVALID_VALUE;
	}
	*id = fake_live_id;
	return CUDA_SUCCESS;
}

static void exec_cuda_id_never_asked_of_a_dead_handle(void **state)
{
	struct model_ids ids;
	drv_cuGraphExecGetId = fake_exec_id;
	fake_dead_asks = 0;
	fake_live = H(0x1a00), fake_live_id = 41;
	model_exec_new(H(0x1a00), G(0x9a00), 0, 0, NULL, 0, -1, 0, 0, NULL, 0);
	fake_live = NULL; /* the context went: the driver's exec is gone */
	model_ids_get(NULL, H(0x1a00), &ids);
	assert_int_equal(fake_dead_asks, 0);
	assert_int_not_equal(ids.exec, 0);
	assert_int_equal(ids.cuda_exec, 41);
	/* the handle value comes back as another exec: its own id */
	fake_live = H(0x1a00), fake_live_id = 42;
	model_exec_new(H(0x1a00), G(0x9a01), 0, 0, NULL, 0, -1, 0, 0, NULL, 0);
	model_ids_get(NULL, H(0x1a00), &ids);
	assert_int_equal(ids.cuda_exec, 42);
	destroy(H(0x1a00));
	assert_int_equal(fake_dead_asks, 0);
	drv_cuGraphExecGetId = NULL;
}

/* Run before any other allocation entry: the index's first add allocates
 * its slot array. A failed add leaves nothing half registered. */
static void alloc_table_failure_is_its_own(void **state)
{
	struct cg_mnode m = {.dptr = 0x7100, .size = 256, .dev = 1};
	struct ev_alloc a;
	uint64_t cap;
	CUgraph g;
	size_t size;
	uint32_t site;
	stub_table_fail = 1;
	model_alloc_graph(&m, NULL, 0, G(0x9e00), "cuMemAllocAsync", &a);
	stub_table_fail = 0;
	assert_int_equal(cg_table_failures(&model_alloc_table), 1);
	assert_int_equal(stub_degraded, 1);
	assert_string_equal(stub_degrade_why, "allocation table");
	assert_int_equal(model_alloc_lookup(m.dptr, &cap, &g, &size, &site), 0);
}

/* Issue 36: a capture loop's graph allocation entry comes and goes every
 * step (made by its allocation node, dropped with its graph); the
 * allocations' handle index keeps its slot array, so a steady step takes
 * no table memory (uthash made and freed its header and bucket array
 * every step). The entry is found by its address until its graph lets it
 * go. */
static void alloc_entry_steady_step_takes_no_table_memory(void **state)
{
	struct cg_mnode m = {.dptr = 0x7000, .size = 256, .site = 5, .dev = 1};
	struct ev_alloc a;
	uint64_t cap;
	CUgraph g;
	size_t size;
	uint32_t site;
	for (int step = 0; step < 4; step++) {
		long long before = stub_table_mallocs;
		model_alloc_graph(&m, NULL, 0, G(0x9d00 + step), "cuMemAllocAsync", &a);
		assert_int_equal(model_alloc_lookup(m.dptr, &cap, &g, &size, &site), 1);
		assert_ptr_equal(g, G(0x9d00 + step));
		assert_int_equal(size, 256);
		assert_int_equal(site, 5);
		model_alloc_release_graph(G(0x9d00 + step), &m, 1);
		assert_int_equal(model_alloc_lookup(m.dptr, &cap, &g, &size, &site), 0);
		if (step)
			assert_int_equal(stub_table_mallocs, before);
	}
	assert_int_equal(stub_degraded, 0);
}

/* The device count (cuDeviceGetCount, asked once to learn whether the
 * process sees one device) is not one of the queries the shim makes while
 * a capture is live (docs/design.md, what the shim promises: only
 * capture-safe ones; as cuMemGetInfo, it waits until the model counts
 * none). A multi-device process's first answer of device 0 may come inside
 * another stream's capture: the count is asked at the next answer outside
 * one, and from then on no driver call is made. */
static int count_asks, ctxdev_asks;
static CUresult fake_ctx_dev0(CUdevice *d)
{
	ctxdev_asks++;
	*d = 0;
	return CUDA_SUCCESS;
}
static CUresult fake_count_one(int *n)
{
	count_asks++;
	*n = 1;
	return CUDA_SUCCESS;
}

static void device_count_not_asked_inside_a_live_capture(void **state)
{
	(void)state;
	drv_cuCtxGetDevice = fake_ctx_dev0;
	drv_cuDeviceGetCount = fake_count_one;
	atomic_store(&cg_live_captures, 1);
	assert_int_equal(cg_current_device(), 0);
	assert_int_equal(ctxdev_asks, 1);
	assert_int_equal(count_asks, 0);
	atomic_store(&cg_live_captures, 0);
	assert_int_equal(cg_current_device(), 0);
	assert_int_equal(ctxdev_asks, 2);
	assert_int_equal(count_asks, 1);
	/* one device known: answered without the driver */
	assert_int_equal(cg_current_device(), 0);
	assert_int_equal(ctxdev_asks, 2);
	assert_int_equal(count_asks, 1);
	drv_cuCtxGetDevice = NULL;
	drv_cuDeviceGetCount = NULL;
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test_setup(exec_table_failure_is_its_own, setup),
	    cmocka_unit_test_setup(exec_list_keeps_the_order_made, setup),
	    cmocka_unit_test_setup(alloc_table_failure_is_its_own, setup),
	    cmocka_unit_test_setup(alloc_entry_steady_step_takes_no_table_memory, setup),
	    cmocka_unit_test_setup(pool_table_failure_is_its_own, setup),
	    cmocka_unit_test_setup(pool_handle_reused_is_a_new_pool, setup),
	    cmocka_unit_test_setup(pool_destroyed_current_falls_back_to_default, setup),
	    cmocka_unit_test_setup(pool_answer_follows_every_change, setup),
	    cmocka_unit_test_setup(exec_map_unknown_handle_is_itself, setup),
	    cmocka_unit_test_setup(exec_map_new_exec_stands_for_itself, setup),
	    cmocka_unit_test_setup(exec_map_set_real_is_seen_by_every_reader, setup),
	    cmocka_unit_test_setup(exec_map_forgets_a_destroyed_exec, setup),
	    cmocka_unit_test_setup(graph_claims_die_with_the_graph, setup),
	    cmocka_unit_test_setup(graph_last_found_goes_with_the_graph, setup),
	    cmocka_unit_test_setup(ledger_last_found_goes_with_the_exec, setup),
	    cmocka_unit_test_setup(ledger_pending_kept_on_the_model_exec, setup),
	    cmocka_unit_test_setup(exit_leaks_survive_a_destroy_meanwhile, setup),
	    cmocka_unit_test_setup(ledger_resolve_drops_an_exec_destroyed_meanwhile, setup),
	    cmocka_unit_test_setup(ledger_resolve_yields_to_an_update_meanwhile, setup),
	    cmocka_unit_test_setup(exec_cuda_id_never_asked_of_a_dead_handle, setup),
	    cmocka_unit_test_setup(update_alike_takes_the_graphs_nccl, setup),
	    /* last: it leaves the model knowing one device */
	    cmocka_unit_test_setup(device_count_not_asked_inside_a_live_capture, setup),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
