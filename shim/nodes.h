/*
 * shim/nodes.h -- what each node of a graph does (issue 15): for kernel
 * nodes the function, its name, grid, block, dynamic shared memory and the
 * parameter layout and values; for memcpy and memset nodes the operands,
 * sizes and kinds.
 *
 * Learned where a graph is walked (model/graphs.c summary_walk: end of
 * capture once updates are seen, first need, debug-level instantiate),
 * only with capture-safe queries (no stream work, no synchronisation;
 * driver-calls.def); or, for a graph of captured launches alone, from the
 * launches as the hooks saw them (nodes-launch.c; never on the eager
 * launch path).
 *
 * Memory bound: one struct cg_ndet (224 bytes, its CG_NODE_MAXP kept values
 * of 16 bytes inline: no allocation per node, one free per summary) per
 * kernel, memcpy or memset node (other nodes have none): 235 bytes with the
 * summary's 11 bytes of handle, type and dependency count, under the
 * 256-byte budget. Kept, in
 * parameter order until CG_NODE_MAXP: the value of each parameter of at
 * most 8 bytes, and each 8-byte-aligned word of a larger parameter (first
 * 64 words) that points into a tracked allocation (ledger.h), as device
 * pointers inside structs are. The rest is only folded into phash (a change
 * there is still seen, not located).
 */
#ifndef CGSHIM_NODES_H
#define CGSHIM_NODES_H

#include <stddef.h>
#include <stdint.h>

#include "cuda-abi.h"
#include "emit.h"
#include "log.h"

#define CG_NODE_MAXP 8

/* A kept parameter value: a parameter of at most 8 bytes (embedded 0), or
 * an 8-byte word inside a larger parameter (a struct) that pointed into a
 * range of the allocation ledger when the node was walked (embedded 1). */
struct cg_kparam {
	uint32_t off;  /* byte offset in the parameter buffer (cuFuncGetParamInfo) */
	uint16_t size; /* the parameter's size (clipped to 65535) */
	uint8_t idx;   /* parameter index (clipped to 255) */
	uint8_t embedded;
	uint64_t val; /* first min(size, 8) bytes, little-endian; or the word */
};

/* Copy kinds (from the two memory types of a CUDA_MEMCPY3D). */
enum { CG_CPY_UNKNOWN, CG_CPY_H2D, CG_CPY_D2H, CG_CPY_D2D, CG_CPY_H2H, CG_CPY_UNIFIED, CG_CPY_ARRAY };

struct cg_ndet {
	uint32_t node;			  /* index in the summary's nodes */
	uint8_t type;			  /* CUgraphNodeType */
	uint8_t np;			  /* kernel: parameters kept in p[] */
	uint16_t np_all;		  /* kernel: parameters of the function (0xffff: layout unknown) */
	uint32_t shmem;			  /* kernel: dynamic shared memory; memset: element size */
	uint8_t coop;			  /* kernel: cooperative launch attribute */
	const char *name;		  /* kernel: interned mangled name (never freed), NULL unknown */
	uint64_t func;			  /* kernel: the node's CUfunction (kp.func), its CUkernel where func is NULL */
	uint64_t module;		  /* kernel: its module (cuFuncGetModule), 0 unknown */
	uint64_t mctx;			  /* kernel: the module's context (nodes_module_loaded), 0 unknown */
	uint64_t dst, src;		  /* memcpy: operands; memset: dst, src = value */
	uint64_t bytes;			  /* memcpy/memset: bytes written */
	uint32_t grid[3], block[3];	  /* kernel; memcpy: grid[0] = kind (CG_CPY_*) */
	uint64_t phash;			  /* kernel: FNV-1a of every parameter byte read */
	struct cg_kparam p[CG_NODE_MAXP]; /* kernel: np entries */
};

/* Fingerprints of a summary's n descriptions, each a 64-bit hash that
 * lets an update of one summary from another skip a node-by-node pass
 * when they are equal (a collision, ~2^-64, costs a missed prediction or
 * record, never a wrong call):
 *   sig   what the update refusal rule compares (rules/update.c): type,
 *         position, the function's module context, cooperative, memset
 *         extent, copy kind; equal: no refusal to predict;
 *   ptrs  the values that can be addresses (ledger.h CG_PTRISH) by
 *         position, with each node's function and parameter layout; equal:
 *         every pointer is where it was (same references, no argument
 *         moved to other memory).
 * Never 0 (0 means "not computed"). */
void nodes_fingerprint(const struct cg_ndet *d, uint32_t n, uint64_t *sig, uint64_t *ptrs);
/* Fill d for node n of type t through capture-safe queries. 0 on success;
 * on failure d holds what was learned (type at least). */
int nodes_describe(CUgraphNode n, int t, uint32_t index, struct cg_ndet *d);
/* The end of this thread's walk: gives back the kernel function entry
 * nodes_describe kept from node to node. Every walk that describes nodes
 * ends with it. */
void nodes_walk_end(void);
/* A kernel node may carry the cooperative launch attribute only after one
 * of the ways to give it one (issue 36): a cooperative launch
 * (cuLaunchCooperativeKernel*, or cuLaunchKernelEx* with
 * CU_LAUNCH_ATTRIBUTE_COOPERATIVE) made while a capture was live, or
 * cuGraphKernelNodeSetAttribute(COOPERATIVE). cuGraphAddKernelNode,
 * cuGraphAddNode and the node setters take no attribute, a stream's
 * attributes do not include it, and cuGraphKernelNodeCopyAttributes and
 * cuGraphClone copy only what a node already has. Until one of these was
 * seen, the walk does not ask each kernel node for the attribute (a
 * driver query a node, ~58 ns on the H100): it is 0. Sticky for the
 * process, so a graph of any capture or thread is asked once one was seen.
 * nodes_coop_note: a relaxed load and, the first time, a store. */
void nodes_coop_note(void);
int nodes_coop_possible(void);
/* ---- a captured graph's details from its launches (nodes-launch.c) ----
 * nodes_launch_begin: this thread's capture cap is logged from here on (1)
 * or cannot be (0: no memory). nodes_launch_rec: a launch the thread's
 * tally counted as its kernels-th of capture cap, described from the
 * caller's arguments (the launch hooks, only while model_tally.rec).
 * The launch's handle f may be a CUkernel (the runtime's launches are):
 * the description names the function a walk read beside that kernel in a
 * node (nodes.c aliases), as the walk names it.
 * nodes_launch_take: the n descriptions of capture cap's graph, whose node
 * handles are nodes, into det, when the log is provably that graph (1;
 * the contract is at the top of nodes-launch.c), else 0: walk it. One take
 * a capture. *chain: 1 with a take when also no capture dependency changed
 * without a node meanwhile (model.h model_deps_unchanged): node i > 0
 * depends on node i - 1 alone, the first on none (model/topo.c
 * model_topo_chain). nodes_launch_check (CGSHIM_SUMMARY_CHECK): the nodes
 * walked as well and compared with det; differing nodes counted (and one
 * warning names the first): the caller walks instead.
 * nodes_launch_chain_check (the same check of the chain): diff nodes of n
 * whose dependencies the driver's edges gave otherwise, the first at:
 * counted with the others, one warning in the process.
 * nodes_launch_list_ask: at capture cap's end, graph g's node list and its
 * count *n in one driver query into the log (1), while this thread logs cap
 * and the graph has at most as many nodes as launches logged; else 0 (then
 * the caller asks the count).
 * nodes_launch_list: that list into out when it holds n handles (1, as
 * the driver gave it in the same call), else 0. */
int nodes_launch_begin(uint64_t cap);
int nodes_launch_list_ask(uint64_t cap, CUgraph g, size_t *n);
int nodes_launch_list(uint64_t cap, CUgraphNode *out, size_t n);
void nodes_launch_rec(uint64_t cap, uint32_t kernels, CUfunction f, unsigned gx, unsigned gy, unsigned gz, unsigned bx,
		      unsigned by, unsigned bz, unsigned shmem, void **kp, void **extra);
int nodes_launch_take(uint64_t cap, const CUgraphNode *nodes, size_t n, struct cg_ndet *det, int *chain);
size_t nodes_launch_check(const CUgraphNode *nodes, size_t n, const struct cg_ndet *det);
void nodes_launch_chain_check(size_t diff, size_t n, size_t at);
/* Summaries taken from launches, and nodes the check found otherwise. */
long long nodes_launch_summaries(void);
long long nodes_launch_check_diffs(void);
/* Whether nodes of type t get a description (kernel, memcpy, memset). */
int nodes_described(int t);
/* A module loaded (in the current context) or unloaded through a hooked
 * call; an unload forgets what the shim knew of the module's functions
 * (their handles may come back for other functions). */
void nodes_module_loaded(CUmodule m);
void nodes_module_unloaded(CUmodule m);
/* Module and library unloads seen so far (a function handle taken before
 * one may be stale: the dump then asks the driver no kernel name). */
unsigned nodes_unloads(void);
/* A library unloaded through a hooked call: every function is asked
 * again at its next walk (a library kernel's library is not known). */
void nodes_library_unloaded(void);
/* The description of node i of s, or NULL (binary search). */
struct cg_summary;
const struct cg_ndet *nodes_of(const struct cg_summary *s, uint32_t i);
/* Write d's fields into an open node record. */
void nodes_rec(struct cg_rec *r, const struct cg_ndet *d);
/* Fields that differ between two descriptions of the same node position,
 * as a bitmask of CG_ND_* (0: same as far as known). */
enum {
	CG_ND_FUNC = 1,
	CG_ND_GRID = 2,
	CG_ND_BLOCK = 4,
	CG_ND_SHMEM = 8,
	CG_ND_PARAMS = 16,
	CG_ND_OPERANDS = 32,
	CG_ND_SIZE = 64,
	CG_ND_KIND = 128,
	CG_ND_ELEM = 256
};
const char *nodes_copy_kind(int kind);

/* An update of exec e from graph g that the type/topology checks let
 * through: the facts of one "update_diff" record per node whose details
 * differ between the exec's summary (old) and the graph's (nu), naming the
 * kernel, the fields and the first differing kept parameter with both
 * values, handed to out (the hook's writer, emit_update_diff) at their
 * level (info for a pointer moved to another allocation, else debug).
 * Returns the number of records handed. Not on the launch path. */
struct cg_summary;
int nodes_update_diff(CUgraphExec e, CUgraph g, const struct cg_summary *old, const struct cg_summary *nu,
		      int (*out)(int level, const struct ev_update_diff *f));
/* The kernel name of node i of s, or NULL. */
const char *nodes_kernel_name(const struct cg_summary *s, uint32_t i);

#endif
