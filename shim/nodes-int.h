/*
 * shim/nodes-int.h -- what nodes.c shares with nodes-launch.c (module
 * model): the function table's entries, and the one description of a
 * kernel's arguments both the walk and the captured launches use, so a
 * summary from either holds the same facts.
 */
#ifndef CGSHIM_NODES_INT_H
#define CGSHIM_NODES_INT_H

#include <stdint.h>
#include <string.h>

#include "cuda-abi.h"
#include "model.h"
#include "nodes.h"

struct fn_ent;
/* The entry of function (or library kernel) key when the table holds a
 * current one, as a walk asked it; or, for a CUkernel, the entry of the
 * function a walk read beside it in a node (an alias: nodes.c); held
 * (nodes_fn_release). NULL when there is none, it is stale or bad: the
 * driver is not asked. */
struct fn_ent *nodes_fn_cached(uint64_t key);
/* The handle e describes (the walk's key: the node's kp.func, else its
 * kp.kern), which a description from a launch names as its function. */
uint64_t nodes_fn_key(const struct fn_ent *e);
/* Whether the driver still describes e's function as e does (two
 * capture-safe queries, in the form e was asked: CUfunction or CUkernel). */
int nodes_fn_confirm(const struct fn_ent *e);
/* e, which the driver confirmed (nodes_fn_confirm) in the capture whose
 * graph this thread's current walk reads, is taken as confirmed for its
 * nodes in that walk (nodes_fn's per-walk memo): the graph has held the
 * function since the launch that put it there, as a walk's graph holds
 * its functions for the walk. */
void nodes_fn_confirmed_in_walk(const struct fn_ent *e);
/* e's unique number (a renewed entry has another). */
uint64_t nodes_fn_seq(const struct fn_ent *e);
void nodes_fn_release(struct fn_ent *e);
/* Whether e's function has a parameter of more than 8 bytes (its words
 * are matched against the ledger). */
int nodes_fn_wide(const struct fn_ent *e);
/* The parameter count of e when a launch of it by kernelParams is
 * described by nodes_launch_rec's template (0 to CG_NODE_MAXP parameters,
 * none of more than 8 bytes, e not bad: each parameter is kept, p[i] is
 * parameter i), else -1 (nodes_kernel_fill each launch). */
int nodes_fn_small(const struct fn_ent *e);
/* The n <= 8 bytes at v as a kept value: what memcpy(&val, v, n) gives a
 * zeroed val, the 8- and 4-byte forms in line. */
static inline uint64_t nodes_word(const void *v, size_t n)
{
	uint64_t w = 0;
	if (n == 8)
		memcpy(&w, v, 8);
	else if (n == 4)
		memcpy(&w, v, 4);
	else
		memcpy(&w, v, n);
	return w;
}
/* A parameter's n bytes at p hashed into h (a description's phash, written
 * as params_hash): 8-byte words mixed (cg_mix64), then the tail bytes
 * FNV-1a. A byte at a time cost ~160 instructions a kernel node of three
 * parameters in every walk (issue 36). nodes_kernel_fill and
 * nodes-launch.c's template path hash with it alike. */
static inline uint64_t nodes_fnv(uint64_t h, const void *p, size_t n)
{
	const unsigned char *c = p;
	size_t i = 0;
	for (; i + 8 <= n; i += 8) {
		uint64_t w;
		memcpy(&w, c + i, 8);
		h = cg_mix64(h, w);
	}
	for (; i < n; i++)
		h = (h ^ c[i]) * 1099511628211ull;
	return h;
}
/* d's name, module, context and argument description from entry fe and the
 * argument arrays (kernelParams, or extra's packed buffer), read only
 * inside fe's layout, which the caller had the driver confirm. n: the node
 * described (a short packed buffer is warned about), or NULL for a
 * captured launch (then -1 for a short packed buffer, nothing written
 * about it). 0 otherwise. */
int nodes_kernel_fill(const struct fn_ent *fe, void **kernelParams, void **extra, struct cg_ndet *d, CUgraphNode n);

#endif
