/*
 * shim/nodes-fingerprint.c -- the two fingerprints of a summary's node
 * descriptions (nodes.h nodes_fingerprint): what lets an update from a
 * graph of the exec's class skip the node-by-node pass.
 */
#include "hot.h"
#include "ledger.h"
#include "model.h"
#include "nodes.h"

/* Odd multipliers, one a kept parameter position (CG_NODE_MAXP of them):
 * a node's parameters are summed as independent products, so the work a
 * node is one multiply-xorshift step in each chain (cg_mix64's steps, two
 * a parameter before, made the fingerprint ~1.3 us of a 64-kernel end of
 * capture on the H200: 2026-11-29, bench/sampler.c). */
static const uint64_t fp_pos[CG_NODE_MAXP] = {0x9E3779B97F4A7C15ull, 0xC2B2AE3D27D4EB4Full, 0x165667B19E3779F9ull,
					      0xD6E8FEB86659FD93ull, 0xFF51AFD7ED558CCDull, 0xC4CEB9FE1A85EC53ull,
					      0x27D4EB2F165667C5ull, 0x94D049BB133111EBull};
#define FP_K1 0xBF58476D1CE4E5B9ull
#define FP_K2 0x94D049BB133111EBull
#define FP_K3 0x2545F4914F6CDD1Dull

CG_HOT void nodes_fingerprint(const struct cg_ndet *d, uint32_t n, uint64_t *sig, uint64_t *ptrs)
{
	uint64_t hs = 0x9E3779B97F4A7C15ull ^ n, hp = hs;
	for (uint32_t j = 0; j < n; j++) {
		const struct cg_ndet *x = &d[j];
		uint64_t head = (uint64_t)x->node << 8 | x->type, s = head, p = head;
		switch (x->type) {
		case CU_GRAPH_NODE_TYPE_KERNEL:
			s ^= x->mctx * FP_K1 ^ (uint64_t)x->coop * FP_K2;
			p ^= (uint64_t)(uintptr_t)x->name * FP_K1 ^ (uint64_t)x->np * FP_K2;
			for (uint32_t k = 0; k < x->np && k < CG_NODE_MAXP; k++) {
				const struct cg_kparam *q = &x->p[k];
				uint64_t v = CG_PTRISH(q->val) ? q->val : 0;
				p += (v + ((uint64_t)q->idx << 1 | q->embedded) * FP_K3) * fp_pos[k];
			}
			break;
		case CU_GRAPH_NODE_TYPE_MEMCPY:
			s ^= (uint64_t)x->grid[0] * FP_K1;
			p ^= x->dst * FP_K1 ^ x->src * FP_K2;
			break;
		case CU_GRAPH_NODE_TYPE_MEMSET:
			s ^= x->bytes * FP_K1;
			p ^= x->dst * FP_K1;
			break;
		default:
			break;
		}
		hs = cg_mix64(hs, s);
		hp = cg_mix64(hp, p);
	}
	*sig = hs | 1;
	*ptrs = hp | 1;
}
