/*
 * tests/unit/model-stubs.c -- what the model calls outside shim/model/,
 * stood in for its unit tests: no driver (every real_ and drv_ pointer is
 * NULL), no rules, no sites, no node details. cg_degrade is recorded, and
 * the tables' allocator (table.h) fails on demand.
 */
#include <stdlib.h>

#define CG_TABLE_EXPAND_HERE /* uthash's own expansion, for cg_table_expand below */
#include "call.h"
#include "nodes.h"
#include "pyframes.h"
#include "resolve.h"
#include "rules.h"
#include "site.h"
#include "state.h"
#include "table.h"
#include "model-stubs.h"

#define HOOK(name, pfn, params, args, cls) pfn real_##name;
#include "hooks.def"
#undef HOOK
#define DRV(name, pfn) pfn drv_##name;
#include "driver-calls.def"
#undef DRV
void *(*cg_real_dlsym)(void *, const char *);

int stub_degraded;
const char *stub_degrade_why;
int stub_table_fail; /* table allocations to fail from now on */

void cg_degrade(const char *why)
{
	stub_degraded++;
	stub_degrade_why = why;
}

__thread __attribute__((tls_model("initial-exec"))) int cg_table_oom_here;

long long stub_table_mallocs;

void *cg_table_malloc(size_t sz)
{
	stub_table_mallocs++;
	if (stub_table_fail)
		return NULL;
	return malloc(sz);
}

void cg_table_free(void *p, size_t sz)
{
	(void)sz;
	free(p);
}

/* No spare kept (tests/unit/test-table.c tests the spare itself). */
void *cg_spare_calloc_head(struct cg_spare *s, size_t sz, size_t head)
{
	(void)s, (void)head;
	return calloc(1, sz);
}

void cg_spare_free(struct cg_spare *s, void *p, size_t sz)
{
	(void)s, (void)sz;
	free(p);
}

__thread __attribute__((tls_model("initial-exec"))) void *cg_table_clean_got;
void cg_table_bzero(void *p, size_t n)
{
	memset(p, 0, n);
}
void cg_table_emptying(struct UT_hash_table *tbl)
{
	(void)tbl;
}

/* As shim/table.c's, so the stub's allocator failures reach expansions. */
int cg_table_expand(struct UT_hash_table *tbl)
{
	int oomed = 0;
	HASH_EXPAND_BUCKETS(hh, tbl, oomed);
	return oomed;
}

int cg_call_rec_at(struct cg_rec *r, const struct cg_call *c, CUresult rc, const char *via, uint64_t end)
{
	return 0;
}

uint32_t cg_site_here(int skip)
{
	return 0;
}
void cg_site_settle(uint32_t site)
{
}
int cg_site_pending(uint32_t site)
{
	return 0;
}
void cg_site_first(uint32_t site, char *out, unsigned cap)
{
	if (cap)
		out[0] = 0;
}

int nodes_describe(CUgraphNode n, int t, uint32_t index, struct cg_ndet *d)
{
	return 0;
}
void nodes_walk_end(void)
{
}
int nodes_launch_take(uint64_t cap, const CUgraphNode *nodes, size_t n, struct cg_ndet *det, int *chain)
{
	*chain = 0;
	return 0;
}
void nodes_launch_chain_check(size_t diff, size_t n, size_t at)
{
}
size_t nodes_launch_check(const CUgraphNode *nodes, size_t n, const struct cg_ndet *det)
{
	return 0;
}
int nodes_launch_list(uint64_t cap, CUgraphNode *out, size_t n)
{
	return 0;
}
int nodes_described(int t)
{
	return 0;
}
void nodes_fingerprint(const struct cg_ndet *d, uint32_t n, uint64_t *sig, uint64_t *ptrs)
{
	*sig = *ptrs = 0;
}
void rec_site(struct cg_rec *r, const char *key, uint32_t site)
{
}

/* model/nccl.c, linked for model_nccl_exec_from: no NCCL kernel here. */
int cg_nccl_kernel_name(const char *name)
{
	(void)name;
	return 0;
}

/* pyframes.c: no Python here. */
int cg_pyframes_finalizing(void)
{
	return 0;
}
