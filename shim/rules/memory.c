/*
 * shim/rules/memory.c -- the stream-ordered memory rules, pure verdicts
 * (verdict.h):
 *
 *   CGS006  an allocation from an IPC-capable pool during capture: 801,
 *           the capture continues with an unset pointer
 *   CGS009  cuMemFreeAsync during capture of memory that capture did not
 *           allocate: the free becomes a node freeing it at every launch
 *   CGS011  a graph allocation outstanding at exec destroy or exit
 *   CGS018  memory a live exec's nodes point into is freed or unmapped
 *   CGS019  launch or upload of an exec whose nodes point into freed memory
 *   CGS020  a graph's copy reads or writes pageable host memory
 *
 * CGS018-CGS020 judge what the ledger found (model/ledger.c: which exec points
 * where, which host ranges are pinned).
 * Nothing here writes, locks or calls the driver.
 */
#include <stdio.h>
#include <string.h>

#include "../hot.h"
#include "../rules.h"
#include "verdict.h"

CG_HOT int rules_memory_ipc_pool(const struct cg_alloc_ev *ev, struct cg_verdict *v)
{
	if (!ev->capture || !ev->pool || !ev->ipc)
		return 0;
	cg_verdict_init(v, R_IPC_POOL_CAPTURE, CUDA_ERROR_NOT_SUPPORTED);
	snprintf(v->msg, 300,
		 "%s of %zu bytes from pool 0x%llx during capture %llu: the pool has export handle types "
		 "(IPC-capable) and cannot back graph allocations; the call fails with 801 but the "
		 "capture continues, and later nodes use an unset pointer",
		 ev->api, ev->size, (unsigned long long)(uintptr_t)ev->pool, (unsigned long long)ev->capture);
	cg_vf_hex(v, "pool", (uintptr_t)ev->pool);
	cg_vf_u64(v, "capture", ev->capture);
	cg_vf_hex(v, "stream", (uintptr_t)ev->s);
	cg_vf_u64(v, "size", ev->size);
	cg_vf_site(v, "site", ev->site);
	cg_vf_site(v, "pool_site", ev->pool_site);
	return 1;
}

CG_HOT int rules_memory_free_foreign(const struct cg_free_ev *ev, const struct cg_model_view *mv, struct cg_verdict *v)
{
	uint64_t acap = 0;
	uint32_t asite = 0;
	int known;
	if (!ev->capture)
		return 0;
	known = mv->alloc_lookup(ev->p, &acap, &asite);
	if (known && acap == ev->capture)
		return 0;
	cg_verdict_init(v, R_FREE_FOREIGN, -1);
	snprintf(v->msg, 300,
		 "cuMemFreeAsync of 0x%llx during capture %llu: %s; the free becomes a node of this "
		 "graph and frees the memory at every launch",
		 (unsigned long long)ev->p, (unsigned long long)ev->capture,
		 known ? "the allocation was made by another capture or graph"
		       : "the memory was not allocated in this capture");
	cg_vf_hex(v, "dptr", ev->p);
	cg_vf_u64(v, "capture", ev->capture);
	cg_vf_hex(v, "stream", (uintptr_t)ev->s);
	if (known) {
		cg_vf_u64(v, "alloc_capture", acap);
		cg_vf_site(v, "alloc_site", asite);
	}
	cg_vf_site_here(v, "site");
	return 1;
}

int rules_memory_leak(CUgraphExec e, const struct cg_mnode *mem, int n, int i, const char *when, struct cg_verdict *v)
{
	const struct cg_mnode *m = &mem[i];
	int at_exit = !strcmp(when, "exit");
	if (m->is_free || model_mnode_has(mem, n, m->dptr, 1))
		return 0;
	cg_verdict_init(v, R_LEAK, -1);
	v->hint = at_exit; /* the context's teardown gives it back: docs/rules/CGS011.md */
	snprintf(
	    v->msg, 256,
	    "graph allocation 0x%llx (%zu bytes) is still outstanding at %s; destroying an executable frees none of "
	    "its allocations",
	    (unsigned long long)m->dptr, m->size, at_exit ? "exit" : "cuGraphExecDestroy");
	cg_vf_hex(v, "exec", (uintptr_t)e);
	cg_vf_hex(v, "dptr", m->dptr);
	cg_vf_u64(v, "size", m->size);
	cg_vf_hex(v, "pool", (uintptr_t)m->pool);
	cg_vf_str(v, "when", when);
	cg_vf_site(v, "alloc_site", m->site);
	return 1;
}

static const char *memory_kind_name(int kind)
{
	switch (kind) {
	case 1:
		return "cuMemAlloc";
	case 2:
		return "stream-ordered";
	case 3:
		return "VMM mapping";
	case 4:
		return "pinned host";
	case 5:
		return "registered host";
	default:
		return "unknown";
	}
}

static const char *memory_ref_name(int what)
{
	return what == CG_REF_DST ? "dst" : what == CG_REF_SRC ? "src" : "param";
}

static void memory_stale_fields(struct cg_verdict *v, const struct cg_stale *s)
{
	cg_vf_hex(v, "exec", (uintptr_t)s->e);
	cg_vf_hex(v, "graph", (uintptr_t)s->g);
	cg_vf_int(v, "node_index", s->node);
	if (s->kernel)
		cg_vf_str(v, "kernel", s->kernel);
	if (s->what == CG_REF_PARAM) {
		cg_vf_int(v, "param", s->param);
		if (s->embedded)
			cg_vf_bool(v, "in_struct", 1);
	} else {
		cg_vf_str(v, "operand", memory_ref_name(s->what));
	}
	cg_vf_hex(v, "pointer", s->val);
	cg_vf_hex(v, "alloc", s->base);
	cg_vf_u64(v, "alloc_size", s->size);
	cg_vf_str(v, "alloc_kind", memory_kind_name(s->kind));
	cg_vf_int(v, "pointers", s->nrefs);
	if (s->capture)
		cg_vf_u64(v, "capture", s->capture);
	cg_vf_site(v, "alloc_site", s->alloc_site);
	cg_vf_site(v, "capture_site", s->capture_site);
	cg_vf_site(v, "exec_site", s->exec_site);
	cg_vf_site(v, "free_site", s->free_site);
}

static void memory_stale_where(char *o, size_t cap, const struct cg_stale *s)
{
	if (s->what == CG_REF_PARAM)
		snprintf(o, cap, "node %u (kernel %s) parameter %d%s", s->node, s->kernel ? s->kernel : "?", s->param,
			 s->embedded ? " (inside a struct)" : "");
	else
		snprintf(o, cap, "node %u (%s operand)", s->node, memory_ref_name(s->what));
}

static int memory_points_in(const struct cg_stale *s)
{
	return s->val >= s->base && s->val - s->base < s->size;
}

int rules_memory_stale_free(const struct cg_stale *s, const char *api, struct cg_verdict *v)
{
	char where[200];
	if (!memory_points_in(s))
		return 0;
	cg_verdict_init(v, R_STALE_FREE, -1);
	memory_stale_where(where, sizeof where, s);
	snprintf(v->msg, 512,
		 "%s frees %s memory 0x%llx (%llu bytes) that exec 0x%llx still points into: %s holds 0x%llx; "
		 "its next launch will read or write freed memory",
		 api, memory_kind_name(s->kind), (unsigned long long)s->base, (unsigned long long)s->size,
		 (unsigned long long)(uintptr_t)s->e, where, (unsigned long long)s->val);
	memory_stale_fields(v, s);
	return 1;
}

int rules_memory_stale_launch(const struct cg_stale *s, const char *api, int first, struct cg_verdict *v)
{
	char where[200];
	cg_verdict_init(v, R_STALE_LAUNCH, -1);
	if (!first) {
		v->repeat = 1;
		return 1;
	}
	memory_stale_where(where, sizeof where, s);
	snprintf(v->msg, 512,
		 "%s of exec 0x%llx: %s points into 0x%llx (%llu bytes, %s), which was freed after the capture; "
		 "the replay will read or write freed memory (or whatever was allocated there since)",
		 api, (unsigned long long)(uintptr_t)s->e, where, (unsigned long long)s->base,
		 (unsigned long long)s->size, memory_kind_name(s->kind));
	memory_stale_fields(v, s);
	cg_vf_site_here(v, "site");
	return 1;
}

int rules_memory_pageable_copy(CUgraphExec e, CUgraph g, uint32_t node, int what, uint64_t host, uint64_t bytes,
			       uint32_t exec_site, uint32_t capture_site, struct cg_verdict *v)
{
	if (what != CG_REF_SRC && what != CG_REF_DST)
		return 0;
	cg_verdict_init(v, R_PAGEABLE_COPY, -1);
	snprintf(v->msg, 400,
		 "exec 0x%llx: copy node %u %s 0x%llx (%llu bytes) is pageable host memory (neither pinned nor "
		 "registered): every replay copies through it synchronously with respect to the host, and reads "
		 "whatever the program left there",
		 (unsigned long long)(uintptr_t)e, node, what == CG_REF_SRC ? "reads from" : "writes to",
		 (unsigned long long)host, (unsigned long long)bytes);
	cg_vf_hex(v, "exec", (uintptr_t)e);
	cg_vf_hex(v, "graph", (uintptr_t)g);
	cg_vf_int(v, "node_index", node);
	cg_vf_str(v, "operand", memory_ref_name(what));
	cg_vf_hex(v, "host", host);
	cg_vf_u64(v, "bytes", bytes);
	cg_vf_site(v, "capture_site", capture_site);
	cg_vf_site(v, "exec_site", exec_site);
	return 1;
}
