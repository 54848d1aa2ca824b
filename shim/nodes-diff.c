/*
 * shim/nodes-diff.c -- what changed between an exec's graph and an update's
 * source, node by node (nodes.h: nodes_update_diff, nodes_kernel_name):
 * the node records a failing update writes, from the two summaries the
 * model keeps. Reads only the summaries' own arrays.
 */
#include <stdio.h>
#include <string.h>

#include "cgshim/record.h"
#include "hot.h"
#include "ledger.h"
#include "model.h"
#include "nodes.h"

/* Index of the first kept parameter whose value differs, -1 if none. */
static int nodes_param_diff(const struct cg_ndet *a, const struct cg_ndet *b)
{
	uint32_t n = a->np < b->np ? a->np : b->np;
	for (uint32_t k = 0; k < n; k++)
		if (a->p[k].val != b->p[k].val)
			return (int)k;
	return -1;
}

static unsigned nodes_diff(const struct cg_ndet *a, const struct cg_ndet *b)
{
	unsigned m = 0;
	if (!a || !b || a->type != b->type)
		return 0;
	switch (a->type) {
	case CU_GRAPH_NODE_TYPE_KERNEL:
		if (a->func != b->func)
			m |= CG_ND_FUNC;
		if (memcmp(a->grid, b->grid, sizeof a->grid))
			m |= CG_ND_GRID;
		if (memcmp(a->block, b->block, sizeof a->block))
			m |= CG_ND_BLOCK;
		if (a->shmem != b->shmem)
			m |= CG_ND_SHMEM;
		if (a->np_all != 0xffff && b->np_all != 0xffff && a->phash != b->phash)
			m |= CG_ND_PARAMS;
		break;
	case CU_GRAPH_NODE_TYPE_MEMCPY:
		if (a->grid[0] != b->grid[0])
			m |= CG_ND_KIND;
		if (a->dst != b->dst || a->src != b->src)
			m |= CG_ND_OPERANDS;
		if (a->bytes != b->bytes)
			m |= CG_ND_SIZE;
		break;
	case CU_GRAPH_NODE_TYPE_MEMSET:
		if (a->shmem != b->shmem)
			m |= CG_ND_ELEM;
		if (a->dst != b->dst || a->src != b->src)
			m |= CG_ND_OPERANDS;
		if (a->bytes != b->bytes)
			m |= CG_ND_SIZE;
		break;
	default:
		break;
	}
	return m;
}

/* Comma-separated field names of a CG_ND_* mask into buf (cap bytes). */
static void nodes_diff_text(unsigned mask, char *buf, size_t cap)
{
	static const char *const f[] = {"function", "grid", "block", "shared memory", "parameters",
					"operands", "size", "kind",  "element size"};
	size_t n = 0;
	if (!cap)
		return;
	buf[0] = 0;
	for (unsigned k = 0; k < sizeof f / sizeof *f; k++) {
		if (!(mask & (1u << k)))
			continue;
		size_t l = strlen(f[k]);
		if (n + l + 3 > cap)
			break;
		if (n) {
			buf[n++] = ',';
			buf[n++] = ' ';
		}
		memcpy(buf + n, f[k], l + 1);
		n += l;
	}
}

const char *nodes_kernel_name(const struct cg_summary *s, uint32_t i)
{
	const struct cg_ndet *d = nodes_of(s, i);
	return d ? d->name : NULL;
}

CG_HOT int nodes_update_diff(CUgraphExec e, CUgraph g, const struct cg_summary *old, const struct cg_summary *nu,
			     int (*out)(int level, const struct ev_update_diff *f))
{
	int n = 0;
	/* reached only when both sides have the same node types in the same
	 * order: their descriptions pair up one to one */
	if (!old || !nu || !old->det || !nu->det || old->n_det != nu->n_det || !cg_log_on(CG_L_INFO))
		return 0;
	/* Below debug only a pointer moved to other memory is written: none
	 * can have when every pointer is where it was (nodes_fingerprint). */
	if (!cg_log_on(CG_L_DEBUG) && old->ptrs && old->ptrs == nu->ptrs)
		return 0;
	for (uint32_t j = 0; j < nu->n_det; j++) {
		const struct cg_ndet *a = &old->det[j], *b = &nu->det[j];
		uint32_t i = b->node;
		unsigned m = nodes_diff(a, b);
		char fields[128];
		struct ev_update_diff f;
		if (!m)
			continue;
		/* Info only for a pointer moved into or out of another allocation
		 * (issue 15: the kernel now works on other memory); new argument
		 * values, grids and the like are what updates are for: debug.
		 * A serving loop's update then writes nothing at info (issue 17). */
		int k = (m & CG_ND_PARAMS) ? nodes_param_diff(a, b) : -1;
		uint64_t ba = 0, bb = 0;
		/* The parameter reported: the first changed one that moved between
		 * allocations, else the first changed one. Only 8-byte values can
		 * be device pointers, and only values inside the 48-bit address
		 * space: a changed float, int or double costs no ledger lookup (a
		 * fresh update of 64 kernels made 128 locked lookups). */
		for (uint32_t q = k >= 0 ? (uint32_t)k : a->np; q < a->np && q < b->np; q++) {
			if (a->p[q].val == b->p[q].val || (a->p[q].size != 8 && !a->p[q].embedded) ||
			    (!CG_PTRISH(a->p[q].val) && !CG_PTRISH(b->p[q].val)))
				continue;
			ba = ledger_base(a->p[q].val), bb = ledger_base(b->p[q].val);
			if (ba != bb) {
				k = (int)q;
				break;
			}
		}
		if (!cg_log_on(ba != bb ? CG_L_INFO : CG_L_DEBUG))
			continue;
		n++;
		nodes_diff_text(m, fields, sizeof fields);
		f = (struct ev_update_diff){.exec = (uintptr_t)e,
					    .graph = (uintptr_t)g,
					    .index = i,
					    .type = b->type == CU_GRAPH_NODE_TYPE_KERNEL   ? "kernel"
						    : b->type == CU_GRAPH_NODE_TYPE_MEMCPY ? "memcpy"
											   : "memset",
					    .kernel = b->name,
					    .exec_kernel = a->name && a->name != b->name ? a->name : NULL,
					    .fields = fields};
		if (k >= 0) {
			f.param = a->p[k].idx;
			f.exec_value = a->p[k].val;
			f.graph_value = b->p[k].val;
			f.has_param = f.has_exec_value = f.has_graph_value = 1;
			/* a pointer moved from one allocation to another: the
			 * update succeeds, the kernel now works on other memory */
			if (ba && bb && ba != bb) {
				f.exec_alloc = ba;
				f.graph_alloc = bb;
				f.repointed = 1;
				f.has_exec_alloc = f.has_graph_alloc = f.has_repointed = 1;
			}
		}
		if (m & CG_ND_GRID) {
			f.exec_grid = EMIT_TRIPLE(a->grid);
			f.graph_grid = EMIT_TRIPLE(b->grid);
		}
		if (m & CG_ND_BLOCK) {
			f.exec_block = EMIT_TRIPLE(a->block);
			f.graph_block = EMIT_TRIPLE(b->block);
		}
		out(ba != bb ? CG_L_INFO : CG_L_DEBUG, &f);
	}
	return n;
}
