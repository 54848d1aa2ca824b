/*
 * shim/hooks-driver.c -- the hand-written driver wrappers (CUSTOM rows of
 * hooks.def): model updates, rule checks before the real call, records
 * after it. Every wrapper forwards the caller's arguments unchanged and
 * returns the driver's result, except where the user asked for a policy
 * (CGSHIM_ON_UPDATE_FAILURE=reinstantiate, CGSHIM_ON_VIOLATION=abort).
 */
#define _GNU_SOURCE
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "call.h"
#include "cgshim/record.h"
#include "config.h"
#include "model.h"
#include "ledger.h"
#include "nodes.h"
#include "policy.h"
#include "rules.h"
#include "site.h"

#define SITE_SKIP 1
extern void cg_model_graphmem(const char *when, CUgraphExec e);

/* Set by the first cuGraphExecUpdate of the process. */
static _Atomic int updates_seen;

static const char *const node_type_names[] = {
	"kernel", "memcpy", "memset", "host", "graph", "empty", "wait_event", "event_record",
	"ext_sem_signal", "ext_sem_wait", "mem_alloc", "mem_free", "batch_mem_op", "conditional"};

static const char *node_type(int t)
{
	return t >= 0 && t < (int)(sizeof node_type_names / sizeof *node_type_names) ? node_type_names[t] : "?";
}

/* ======================================================================= */
/* graphs and nodes                                                        */
/* ======================================================================= */

CUresult cgh_cuGraphCreate(CUgraph *phGraph, unsigned int flags)
{
	struct cg_call c;
	struct cg_rec r;
	CUresult rc;
	uint32_t site;
	CG_REAL(cuGraphCreate);
	if (!cg_call_begin(&c, HID_cuGraphCreate, CG_CALL_LIFE))
		return CG_FWD(real_cuGraphCreate(phGraph, flags));
	cg_policy_collect();
	rc = CG_FWD(real_cuGraphCreate(phGraph, flags));
	int saved = errno;
	site = cg_site_here(SITE_SKIP);
	if (rc == CUDA_SUCCESS && phGraph)
		model_graph_new(*phGraph, 0, 0, site);
	if (cg_call_rec(&r, &c, rc)) {
		rec_hex(&r, "graph", rc == CUDA_SUCCESS && phGraph ? (uintptr_t)*phGraph : 0);
		rec_site(&r, "site", site);
		rec_end(&r);
	}
	errno = saved;
	return rc;
}

CUresult cgh_cuGraphDestroy(CUgraph hGraph)
{
	struct cg_call c;
	struct cg_rec r;
	CUresult rc;
	CG_REAL(cuGraphDestroy);
	if (cg_ready() && !cg_tls.in_shim)
		model_graph_settle(hGraph); /* execs with a partial summary of it get the full one first */
	if (cg_policy_graph_destroy(hGraph)) {
		/* deferred: the replacement exec behind an app handle runs it */
		model_graph_destroy(hGraph);
		errno = cg_errno_in;
		return CUDA_SUCCESS;
	}
	if (!cg_call_begin(&c, HID_cuGraphDestroy, CG_CALL_LIFE))
		return CG_FWD(real_cuGraphDestroy(hGraph));
	rc = CG_FWD(real_cuGraphDestroy(hGraph));
	int saved = errno;
	if (rc == CUDA_SUCCESS)
		model_graph_destroy(hGraph);
	if (cg_call_rec(&r, &c, rc)) {
		rec_hex(&r, "graph", (uintptr_t)hGraph);
		rec_end(&r);
	}
	errno = saved;
	return rc;
}

/* Rule CGS010 for clone/child: a graph with memory nodes. */
static int memgraph_composition_check(CUgraph g, const char *api, const char *what, uint32_t site)
{
	int origin, mem;
	uint64_t cap;
	uint32_t gsite;
	struct cg_rec r;
	char msg[256];
	struct cg_summary *s;
	if (!model_graph_info(g, &origin, &cap, &gsite, &mem))
		return 0;
	if (!mem) {
		s = model_graph_summary(g);
		mem = s ? (int)(s->n_alloc + s->n_free) : 0;
		model_summary_free(s);
	}
	if (!mem)
		return 0;
	snprintf(msg, sizeof msg,
		 "graph 0x%llx holds %d memory node(s) and cannot be %s (only a child moved with "
		 "CU_GRAPH_CHILD_GRAPH_OWNERSHIP_MOVE through cuGraphAddNode, from CUDA 12.9)",
		 (unsigned long long)(uintptr_t)g, mem, what);
	if (cg_violation_begin(&r, R_DEVICE_LAUNCH_MEM, api, -1, msg)) {
		rec_hex(&r, "graph", (uintptr_t)g);
		rec_site(&r, "site", site);
		rec_site(&r, "graph_site", gsite);
		cg_violation_end(&r, R_DEVICE_LAUNCH_MEM);
	}
	return 1;
}

CUresult cgh_cuGraphClone(CUgraph *phGraphClone, CUgraph originalGraph)
{
	struct cg_call c;
	struct cg_rec r;
	CUresult rc;
	uint32_t site;
	CG_REAL(cuGraphClone);
	if (!cg_call_begin(&c, HID_cuGraphClone, CG_CALL_LIFE))
		return CG_FWD(real_cuGraphClone(phGraphClone, originalGraph));
	site = cg_site_here(SITE_SKIP);
	memgraph_composition_check(originalGraph, "cuGraphClone", "cloned", site);
	rc = CG_FWD(real_cuGraphClone(phGraphClone, originalGraph));
	int saved = errno;
	if (rc == CUDA_SUCCESS && phGraphClone)
		model_graph_new(*phGraphClone, 2, 0, site);
	if (cg_call_rec(&r, &c, rc)) {
		rec_hex(&r, "graph", (uintptr_t)originalGraph);
		rec_hex(&r, "clone", rc == CUDA_SUCCESS && phGraphClone ? (uintptr_t)*phGraphClone : 0);
		rec_site(&r, "site", site);
		rec_end(&r);
	}
	errno = saved;
	return rc;
}

/* An explicit memory node. pp, acc, nacc: an allocation node's pool
 * properties and access descriptors (pp NULL for a free node): its device
 * (poolProps.location) and the peer access it asks for (accessDescs) go
 * into the model and the "alloc" record. */
static void explicit_mnode(CUgraph g, CUdeviceptr dptr, size_t size, int is_free, uint32_t site,
			   const CUmemPoolProps *pp, const CUmemAccessDesc *acc, size_t nacc, const char *api)
{
	struct cg_mnode m;
	memset(&m, 0, sizeof m);
	m.dptr = dptr;
	m.size = size;
	m.is_free = (uint8_t)is_free;
	m.site = site;
	if (pp) {
		m.ipc = pp->handleTypes != CU_MEM_HANDLE_TYPE_NONE;
		if (pp->location.type == CU_MEM_LOCATION_TYPE_DEVICE && pp->location.id >= 0 &&
		    pp->location.id < CG_MAX_DEV)
			m.dev = (uint8_t)(pp->location.id + 1);
	}
	model_graph_add_mnode(g, &m);
	if (!is_free)
		model_alloc_graph_access(&m, NULL, 0, g, api, acc, nacc);
}

CUresult cgh_cuGraphAddMemAllocNode(CUgraphNode *phGraphNode, CUgraph hGraph, const CUgraphNode *dependencies,
				    size_t numDependencies, CUDA_MEM_ALLOC_NODE_PARAMS *nodeParams)
{
	struct cg_call c;
	CUresult rc;
	CG_REAL(cuGraphAddMemAllocNode);
	if (!cg_call_begin(&c, HID_cuGraphAddMemAllocNode, CG_CALL_LIFE))
		return CG_FWD(real_cuGraphAddMemAllocNode(phGraphNode, hGraph, dependencies, numDependencies,
							  nodeParams));
	model_graph_settle(hGraph);
	rc = CG_FWD(real_cuGraphAddMemAllocNode(phGraphNode, hGraph, dependencies, numDependencies, nodeParams));
	int saved = errno;
	if (rc == CUDA_SUCCESS && nodeParams)
		explicit_mnode(hGraph, nodeParams->dptr, nodeParams->bytesize, 0, cg_site_here(SITE_SKIP),
			       &nodeParams->poolProps, nodeParams->accessDescs, nodeParams->accessDescCount,
			       "cuGraphAddMemAllocNode");
	{
		struct cg_rec r;
		if (cg_call_rec(&r, &c, rc)) {
			rec_hex(&r, "graph", (uintptr_t)hGraph);
			rec_hex(&r, "node", rc == CUDA_SUCCESS && phGraphNode ? (uintptr_t)*phGraphNode : 0);
			if (nodeParams) {
				rec_hex(&r, "dptr", rc == CUDA_SUCCESS ? nodeParams->dptr : 0);
				rec_u64(&r, "size", nodeParams->bytesize);
			}
			rec_end(&r);
		}
	}
	errno = saved;
	return rc;
}

CUresult cgh_cuGraphAddMemFreeNode(CUgraphNode *phGraphNode, CUgraph hGraph, const CUgraphNode *dependencies,
				   size_t numDependencies, CUdeviceptr dptr)
{
	struct cg_call c;
	CUresult rc;
	CG_REAL(cuGraphAddMemFreeNode);
	if (!cg_call_begin(&c, HID_cuGraphAddMemFreeNode, CG_CALL_LIFE))
		return CG_FWD(real_cuGraphAddMemFreeNode(phGraphNode, hGraph, dependencies, numDependencies, dptr));
	model_graph_settle(hGraph);
	rc = CG_FWD(real_cuGraphAddMemFreeNode(phGraphNode, hGraph, dependencies, numDependencies, dptr));
	int saved = errno;
	if (rc == CUDA_SUCCESS)
		explicit_mnode(hGraph, dptr, 0, 1, 0, NULL, NULL, 0, "cuGraphAddMemFreeNode");
	{
		struct cg_rec r;
		if (cg_call_rec(&r, &c, rc)) {
			rec_hex(&r, "graph", (uintptr_t)hGraph);
			rec_hex(&r, "dptr", dptr);
			rec_end(&r);
		}
	}
	errno = saved;
	return rc;
}

CUresult cgh_cuGraphAddChildGraphNode(CUgraphNode *phGraphNode, CUgraph hGraph, const CUgraphNode *dependencies,
				      size_t numDependencies, CUgraph childGraph)
{
	struct cg_call c;
	CUresult rc;
	CG_REAL(cuGraphAddChildGraphNode);
	if (!cg_call_begin(&c, HID_cuGraphAddChildGraphNode, CG_CALL_LIFE))
		return CG_FWD(real_cuGraphAddChildGraphNode(phGraphNode, hGraph, dependencies, numDependencies,
							    childGraph));
	memgraph_composition_check(childGraph, "cuGraphAddChildGraphNode", "used as a child graph (cloned)",
				   cg_site_here(SITE_SKIP));
	model_graph_settle(hGraph);
	rc = CG_FWD(real_cuGraphAddChildGraphNode(phGraphNode, hGraph, dependencies, numDependencies, childGraph));
	int saved = errno;
	if (rc == CUDA_SUCCESS)
		model_graph_mutated(hGraph);
	{
		struct cg_rec r;
		if (cg_call_rec(&r, &c, rc)) {
			rec_hex(&r, "graph", (uintptr_t)hGraph);
			rec_hex(&r, "child", (uintptr_t)childGraph);
			rec_end(&r);
		}
	}
	errno = saved;
	return rc;
}

/* cuGraphAddNode and _v2 share everything but the edge data. */
static void add_node_pre(CUgraph g, const CUgraphNodeParams *p, const char *api)
{
	if (p && p->type == CU_GRAPH_NODE_TYPE_GRAPH &&
	    p->graph.ownership != CU_GRAPH_CHILD_GRAPH_OWNERSHIP_MOVE)
		memgraph_composition_check(p->graph.graph, api, "used as a child graph without ownership move",
					   cg_site_here(SITE_SKIP + 1));
	(void)g;
}

static void add_node_post(struct cg_call *c, CUresult rc, CUgraphNode *ph, CUgraph g, const CUgraphNodeParams *p,
			  const char *api)
{
	struct cg_rec r;
	if (rc == CUDA_SUCCESS && p) {
		if (p->type == CU_GRAPH_NODE_TYPE_MEM_ALLOC)
			explicit_mnode(g, p->alloc.dptr, p->alloc.bytesize, 0, cg_site_here(SITE_SKIP + 1),
				       &p->alloc.poolProps, p->alloc.accessDescs, p->alloc.accessDescCount, api);
		else if (p->type == CU_GRAPH_NODE_TYPE_MEM_FREE)
			explicit_mnode(g, p->free.dptr, 0, 1, 0, NULL, NULL, 0, api);
		else
			model_graph_mutated(g);
	}
	if (cg_call_rec(&r, c, rc)) {
		rec_hex(&r, "graph", (uintptr_t)g);
		rec_str(&r, "type", p ? node_type(p->type) : "?");
		rec_hex(&r, "node", rc == CUDA_SUCCESS && ph ? (uintptr_t)*ph : 0);
		rec_end(&r);
	}
}

CUresult cgh_cuGraphAddNode(CUgraphNode *phGraphNode, CUgraph hGraph, const CUgraphNode *dependencies,
			    size_t numDependencies, CUgraphNodeParams *nodeParams)
{
	struct cg_call c;
	CUresult rc;
	CG_REAL(cuGraphAddNode);
	if (!cg_call_begin(&c, HID_cuGraphAddNode, 0))
		return CG_FWD(real_cuGraphAddNode(phGraphNode, hGraph, dependencies, numDependencies, nodeParams));
	add_node_pre(hGraph, nodeParams, "cuGraphAddNode");
	model_graph_settle(hGraph);
	rc = CG_FWD(real_cuGraphAddNode(phGraphNode, hGraph, dependencies, numDependencies, nodeParams));
	int saved = errno;
	add_node_post(&c, rc, phGraphNode, hGraph, nodeParams, "cuGraphAddNode");
	errno = saved;
	return rc;
}

CUresult cgh_cuGraphAddNode_v2(CUgraphNode *phGraphNode, CUgraph hGraph, const CUgraphNode *dependencies,
			       const CUgraphEdgeData *dependencyData, size_t numDependencies,
			       CUgraphNodeParams *nodeParams)
{
	struct cg_call c;
	CUresult rc;
	CG_REAL(cuGraphAddNode_v2);
	if (!cg_call_begin(&c, HID_cuGraphAddNode_v2, 0))
		return CG_FWD(real_cuGraphAddNode_v2(phGraphNode, hGraph, dependencies, dependencyData, numDependencies,
					      nodeParams));
	add_node_pre(hGraph, nodeParams, "cuGraphAddNode_v2");
	model_graph_settle(hGraph);
	rc = CG_FWD(real_cuGraphAddNode_v2(phGraphNode, hGraph, dependencies, dependencyData, numDependencies,
					   nodeParams));
	int saved = errno;
	add_node_post(&c, rc, phGraphNode, hGraph, nodeParams, "cuGraphAddNode_v2");
	errno = saved;
	return rc;
}

/* Both kernel-node ABIs (v1 params before 12.0, v2 after): the model only
 * needs to know that the graph changed. */
#define ADD_KERNEL_NODE_BODY(name)                                                                 \
	struct cg_call c;                                                                          \
	CUresult rc;                                                                               \
	CG_REAL(name);                                                                             \
	if (!cg_call_begin(&c, HID_##name, 0))                                                     \
		return CG_FWD(real_##name(phGraphNode, hGraph, dependencies, numDependencies, nodeParams)); \
	model_graph_settle(hGraph);                                                                \
	rc = CG_FWD(real_##name(phGraphNode, hGraph, dependencies, numDependencies, nodeParams));  \
	int saved = errno;                                                                         \
	if (rc == CUDA_SUCCESS)                                                                    \
		model_graph_mutated(hGraph);                                                       \
	cg_call_end(&c, rc);                                                                       \
	errno = saved;                                                                             \
	return rc;

CUresult cgh_cuGraphAddKernelNode(CUgraphNode *phGraphNode, CUgraph hGraph, const CUgraphNode *dependencies,
				  size_t numDependencies, const CUDA_KERNEL_NODE_PARAMS_v1 *nodeParams)
{
	ADD_KERNEL_NODE_BODY(cuGraphAddKernelNode)
}

CUresult cgh_cuGraphAddKernelNode_v2(CUgraphNode *phGraphNode, CUgraph hGraph, const CUgraphNode *dependencies,
				     size_t numDependencies, const CUDA_KERNEL_NODE_PARAMS *nodeParams)
{
	ADD_KERNEL_NODE_BODY(cuGraphAddKernelNode_v2)
}

CUresult cgh_cuGraphDestroyNode(CUgraphNode hNode)
{
	struct cg_call c;
	CUresult rc;
	CG_REAL(cuGraphDestroyNode);
	if (!cg_call_begin(&c, HID_cuGraphDestroyNode, 0))
		return CG_FWD(real_cuGraphDestroyNode(hNode));
	rc = CG_FWD(real_cuGraphDestroyNode(hNode));
	int saved = errno;
	cg_call_end(&c, rc);
	errno = saved;
	return rc;
}

/* ======================================================================= */
/* instantiate                                                             */
/* ======================================================================= */

struct inst_pre {
	struct cg_summary *sum;
	uint32_t site;
	int predicted_rc, rule;
	int have_free;
	size_t free_before; /* device memory the instantiation itself takes */
};

static void instantiate_pre(struct inst_pre *p, CUgraph g, uint64_t flags, const char *api)
{
	struct cg_exec_view live;
	struct cg_rec r;
	char msg[320];
	int mem;
	cg_policy_collect();
	p->site = cg_site_here(SITE_SKIP + 1);
	/* A captured graph unchanged since its capture needs no walk: the
	 * exec gets a partial summary, completed on first need. */
	p->sum = model_graph_summary_cached(g);
	if (!p->sum && !cg_log_on(CG_L_DEBUG))
		p->sum = model_graph_partial(g);
	if (!p->sum)
		p->sum = model_graph_summary(g);
	p->predicted_rc = 0;
	p->rule = 0;
	mem = p->sum ? (int)(p->sum->n_alloc + p->sum->n_free) : 0;
	if (mem && model_graph_live_exec(g, &live)) {
		snprintf(msg, sizeof msg,
			 "graph 0x%llx has %d memory node(s) and is already instantiated as exec 0x%llx "
			 "(launched %lld times); only one executable of such a graph may exist at a time: "
			 "destroy it first, or update it instead of instantiating again",
			 (unsigned long long)(uintptr_t)g, mem, (unsigned long long)(uintptr_t)live.h, live.launches);
		p->predicted_rc = CUDA_ERROR_NOT_SUPPORTED;
		p->rule = R_SECOND_INSTANTIATE;
		if (cg_violation_begin(&r, R_SECOND_INSTANTIATE, api, CUDA_ERROR_NOT_SUPPORTED, msg)) {
			rec_hex(&r, "graph", (uintptr_t)g);
			rec_hex(&r, "other_exec", (uintptr_t)live.h);
			rec_site(&r, "site", p->site);
			rec_site(&r, "exec_site", live.site);
			cg_violation_end(&r, R_SECOND_INSTANTIATE);
		}
	}
	if ((flags & CUDA_GRAPH_INSTANTIATE_FLAG_DEVICE_LAUNCH) &&
	    ((flags & CUDA_GRAPH_INSTANTIATE_FLAG_AUTO_FREE_ON_LAUNCH) || mem)) {
		snprintf(msg, sizeof msg,
			 "DeviceLaunch cannot be combined with %s",
			 (flags & CUDA_GRAPH_INSTANTIATE_FLAG_AUTO_FREE_ON_LAUNCH) ? "AutoFreeOnLaunch"
										  : "memory nodes in the graph");
		p->predicted_rc = CUDA_ERROR_INVALID_VALUE;
		p->rule = R_DEVICE_LAUNCH_MEM;
		if (cg_violation_begin(&r, R_DEVICE_LAUNCH_MEM, api, CUDA_ERROR_INVALID_VALUE, msg)) {
			rec_hex(&r, "graph", (uintptr_t)g);
			rec_u64(&r, "flags", flags);
			rec_site(&r, "site", p->site);
			cg_violation_end(&r, R_DEVICE_LAUNCH_MEM);
		}
	}
	p->have_free = model_sample_free(&p->free_before);
}

/* Node records for pictures: type, dependencies by index, memory-node
 * parameters with the pool and site the shim recorded. At debug level for
 * every instantiated graph; at info for both sides of an update that
 * CGS001 predicts to fail (side "exec": the exec's summary, its edges read
 * from the graph it was taken from while that lives unchanged, else none
 * (g NULL, "deps" absent); side "graph": the new graph), so `cgshim report --dot update:N` can draw them at the default
 * level. Edges are matched to the summary's nodes by handle. */
static void emit_nodes_at(CUgraph g, const struct cg_summary *s, int level, const char *side, CUgraphExec e)
{
	struct cg_rec r;
	CUgraphNode *from = NULL, *to = NULL;
	size_t ne = 0;
	if (!s || !s->types || !cg_log_on(level))
		return;
	if (g && drv_cuGraphGetEdges && drv_cuGraphGetEdges(g, NULL, NULL, &ne) == CUDA_SUCCESS && ne) {
		from = calloc(ne, sizeof *from);
		to = calloc(ne, sizeof *to);
		if (!from || !to || drv_cuGraphGetEdges(g, from, to, &ne) != CUDA_SUCCESS)
			ne = 0;
	}
	for (uint32_t i = 0, m = 0; i < s->n_nodes; i++) {
		rec_begin(&r, level, "node");
		rec_hex(&r, "graph", (uintptr_t)g);
		if (side) {
			rec_str(&r, "side", side);
			rec_hex(&r, "exec", (uintptr_t)e);
		}
		rec_int(&r, "index", i);
		rec_str(&r, "type", node_type(s->types[i]));
		if (!g) {
			rec_int(&r, "ndeps", s->ndeps[i]);
			goto mem;
		}
		rec_open(&r, "deps", '[');
		for (size_t e = 0; e < ne; e++)
			if (to[e] == s->nodes[i])
				for (uint32_t k = 0; k < s->n_nodes; k++)
					if (s->nodes[k] == from[e]) {
						char num[16];
						snprintf(num, sizeof num, "%u", k);
						rec_elem_raw(&r, num);
						break;
					}
		rec_close(&r, ']');
	mem:
		if (s->types[i] == CU_GRAPH_NODE_TYPE_MEM_ALLOC || s->types[i] == CU_GRAPH_NODE_TYPE_MEM_FREE) {
			const struct cg_mnode *mn = &s->mem[m++];
			rec_hex(&r, "dptr", mn->dptr);
			if (!mn->is_free) {
				rec_u64(&r, "size", mn->size);
				if (mn->dev)
					rec_int(&r, "dev", CG_MNODE_DEV(mn));
				rec_hex(&r, "pool", (uintptr_t)mn->pool);
				rec_site(&r, "site", mn->site);
			}
		}
		nodes_rec(&r, nodes_of(s, i));
		rec_end(&r);
	}
	free(from);
	free(to);
}

static void emit_nodes(CUgraph g, const struct cg_summary *s)
{
	emit_nodes_at(g, s, CG_L_DEBUG, NULL, NULL);
}

static CUresult instantiate_post(struct cg_call *c, struct inst_pre *p, CUresult rc, CUgraphExec *ph, CUgraph g,
				 uint64_t flags, const char *api)
{
	struct cg_rec r;
	size_t fr = 0;
	int saved = errno;
	model_mem_moved(); /* the "after" sample is a real one: the instantiation took memory */
	if (p->predicted_rc && (int)rc != p->predicted_rc)
		cg_mismatch(api, p->rule, p->predicted_rc, rc, -1, -1);
	if (rc == CUDA_SUCCESS && ph) {
		/* the model first; the ledger needs the node details: the full
		 * summary (walked now when the instantiation had a partial one).
		 * Its findings (CGS020) precede the call's record. p->sum stays
		 * valid: the exec holds it. */
		model_exec_new(*ph, g, flags, p->site, model_summary_ref(p->sum));
		struct cg_summary *full = model_exec_summary(*ph);
		ledger_exec_set(*ph, g, p->site, full, api);
		model_summary_free(full);
	}
	if (cg_call_rec(&r, c, rc)) {
		rec_hex(&r, "graph", (uintptr_t)g);
		rec_hex(&r, "exec", rc == CUDA_SUCCESS && ph ? (uintptr_t)*ph : 0);
		rec_u64(&r, "flags", flags);
		if (p->sum) {
			rec_int(&r, "nodes", p->sum->n_nodes);
			rec_int(&r, "alloc_nodes", p->sum->n_alloc);
			rec_int(&r, "free_nodes", p->sum->n_free);
		}
		if (rc == CUDA_SUCCESS)
			model_summary_devs_rec(&r, p->sum); /* dev, alloc_devs */
		if (p->have_free && model_sample_free(&fr)) {
			int origin = 0, mn = 0;
			uint64_t cap = 0;
			uint32_t gs = 0;
			rec_u64(&r, "free_before", p->free_before);
			rec_u64(&r, "free_after", fr);
			rec_int(&r, "delta", (long long)p->free_before - (long long)fr);
			if (model_graph_info(g, &origin, &cap, &gs, &mn) && cap)
				rec_u64(&r, "capture", cap);
		}
		rec_site(&r, "site", p->site);
		rec_end(&r);
	}
	emit_nodes(g, p->sum);
	model_summary_free(p->sum);
	errno = saved;
	return rc;
}

#define INSTANTIATE_5(name)                                                                        \
	CUresult cgh_##name(CUgraphExec *phGraphExec, CUgraph hGraph, CUgraphNode *phErrorNode,    \
			    char *logBuffer, size_t bufferSize)                                    \
	{                                                                                          \
		struct cg_call c;                                                                  \
		struct inst_pre p;                                                                 \
		CG_REAL(name);                                                                     \
		if (!cg_call_begin(&c, HID_##name, CG_CALL_LIFE))                                  \
			return CG_FWD(real_##name(phGraphExec, hGraph, phErrorNode, logBuffer, bufferSize)); \
		instantiate_pre(&p, hGraph, 0, #name);                                             \
		return instantiate_post(&c, &p,                                                    \
					CG_FWD(real_##name(phGraphExec, hGraph, phErrorNode, logBuffer, bufferSize)), \
					phGraphExec, hGraph, 0, #name);                            \
	}
INSTANTIATE_5(cuGraphInstantiate)
INSTANTIATE_5(cuGraphInstantiate_v2)

CUresult cgh_cuGraphInstantiateWithFlags(CUgraphExec *phGraphExec, CUgraph hGraph, unsigned long long flags)
{
	struct cg_call c;
	struct inst_pre p;
	CG_REAL(cuGraphInstantiateWithFlags);
	if (!cg_call_begin(&c, HID_cuGraphInstantiateWithFlags, CG_CALL_LIFE))
		return CG_FWD(real_cuGraphInstantiateWithFlags(phGraphExec, hGraph, flags));
	instantiate_pre(&p, hGraph, flags, "cuGraphInstantiateWithFlags");
	return instantiate_post(&c, &p, CG_FWD(real_cuGraphInstantiateWithFlags(phGraphExec, hGraph, flags)),
				phGraphExec, hGraph, flags, "cuGraphInstantiateWithFlags");
}

#define INSTANTIATE_PARAMS(name)                                                                   \
	CUresult cgh_##name(CUgraphExec *phGraphExec, CUgraph hGraph,                              \
			    CUDA_GRAPH_INSTANTIATE_PARAMS *instantiateParams)                      \
	{                                                                                          \
		struct cg_call c;                                                                  \
		struct inst_pre p;                                                                 \
		uint64_t fl = instantiateParams ? instantiateParams->flags : 0;                    \
		CG_REAL(name);                                                                     \
		if (!cg_call_begin(&c, HID_##name, CG_CALL_LIFE))                                  \
			return CG_FWD(real_##name(phGraphExec, hGraph, instantiateParams));        \
		instantiate_pre(&p, hGraph, fl, #name);                                            \
		return instantiate_post(&c, &p, CG_FWD(real_##name(phGraphExec, hGraph, instantiateParams)), \
					phGraphExec, hGraph, fl, #name);                           \
	}
INSTANTIATE_PARAMS(cuGraphInstantiateWithParams)
INSTANTIATE_PARAMS(cuGraphInstantiateWithParams_ptsz)

CUresult cgh_cuGraphExecDestroy(CUgraphExec hGraphExec)
{
	struct cg_call c;
	struct cg_rec r;
	CUresult rc;
	CUgraphExec real;
	CG_REAL(cuGraphExecDestroy);
	real = cg_policy_exec(hGraphExec);
	if (!cg_call_begin(&c, HID_cuGraphExecDestroy, CG_CALL_LIFE)) {
		cg_policy_forget(hGraphExec);
		return CG_FWD(real_cuGraphExecDestroy(hGraphExec));
	}
	/* capture-map.md: destroying an executable is in the unsafe class
	 * (CGS007). A refused destroy leaves the executable alive: the model
	 * and the policy forget it only once the driver destroyed it. */
	if (CG_UNLIKELY(cg_rule_capture_unsafe("cuGraphExecDestroy", "destroys an executable graph"))) {
		rc = CG_FWD(real_cuGraphExecDestroy(hGraphExec));
		int saved = errno;
		cg_rule_capture_unsafe_after("cuGraphExecDestroy", 1, rc);
		if (rc == CUDA_SUCCESS) {
			cg_policy_forget(hGraphExec); /* before the model drops the exec: model.h */
			model_exec_destroy(hGraphExec);
		}
		cg_call_end(&c, rc);
		errno = saved;
		return rc;
	}
	cg_policy_collect();
	/* Replacements and cached executables go with the handle; the
	 * application's own executable is the one it names. Before the model
	 * drops the exec: the policy reads the real exec from it (model.h). */
	cg_policy_forget(hGraphExec);
	/* Outstanding graph allocations are reported by the model (CGS011). */
	model_exec_destroy(hGraphExec);
	model_mem_moved(); /* the exec's device memory goes back */
	ledger_exec_gone(hGraphExec);
	rc = CG_FWD(real_cuGraphExecDestroy(hGraphExec));
	int saved = errno;
	if (cg_call_rec(&r, &c, rc)) {
		rec_hex(&r, "exec", (uintptr_t)hGraphExec);
		if (real != hGraphExec)
			rec_hex(&r, "real", (uintptr_t)real);
		rec_end(&r);
	}
	errno = saved;
	return rc;
}

/* ======================================================================= */
/* update                                                                  */
/* ======================================================================= */

static const char *update_result_name(int res);

struct upd_pred {
	int rc, result, rule;
	/* quiet: the new graph is known to have the exec's topology (same
	 * summary, or equal topology hashes) and the same memory nodes, and
	 * nothing was written: a successful update then changes nothing the
	 * shim models and is counted, not recorded, below debug level. */
	int quiet;
	uint32_t err_index, from_index;
	CUgraphNode err_node, from_node;
	char why[256];
};

/* The reason a predicted update fails, as text (it goes into the CGS001
 * record and, under reinstantiate, into every rewrite record): built with
 * stpcpy and the record's number formatters, as snprintf costs more than
 * the rest of a rewrite's bookkeeping. Every text fits the 256-byte why[]. */
static void why_count(char *o, uint32_t exec_nodes, CUgraph g, uint32_t graph_nodes)
{
	o = rec_fmt_u64_(stpcpy(o, "node count differs: exec has "), exec_nodes);
	o = rec_fmt_hex_(stpcpy(o, " nodes, graph "), (uintptr_t)g, 0);
	*rec_fmt_u64_(stpcpy(o, " has "), graph_nodes) = 0;
}

static void why_type(char *o, uint32_t i, int exec_type, int graph_type)
{
	o = rec_fmt_u64_(stpcpy(o, "node "), i);
	o = stpcpy(stpcpy(o, " changed type: "), node_type(exec_type));
	stpcpy(stpcpy(stpcpy(o, " in the exec, "), node_type(graph_type)), " in the graph");
}

static void why_deps(char *o, uint32_t i, int type, unsigned exec_deps, unsigned graph_deps)
{
	o = rec_fmt_u64_(stpcpy(o, "node "), i);
	o = stpcpy(stpcpy(stpcpy(o, " ("), node_type(type)), ") has ");
	o = rec_fmt_u64_(o, exec_deps);
	o = rec_fmt_u64_(stpcpy(o, " dependencies in the exec and "), graph_deps);
	stpcpy(o, " in the graph");
}

/* Predict cuGraphExecUpdate from the exec's summary (kept since
 * instantiate) and the new graph's summary. Writes violations CGS001,
 * CGS002, CGS003, CGS012 before the call. */
static void update_predict(struct upd_pred *p, CUgraphExec e, CUgraph g, struct cg_summary **newsum,
			   const char *api)
{
	struct cg_summary *old, *nu;
	struct cg_exec_view live, ev;
	/* From the first update on, graphs are walked as their capture ends
	 * (see end_capture_common): an updating program's next update then
	 * finds its graph's summary ready. */
	atomic_store_explicit(&updates_seen, 1, memory_order_relaxed);
	model_update_summaries(e, g, &old, &nu);
	struct cg_rec r;
	char msg[400];
	/* The call site costs a backtrace: taken only when a violation is written. */
	memset(p, 0, sizeof *p);
	p->result = CU_GRAPH_EXEC_UPDATE_SUCCESS;
	*newsum = nu;

	if (nu && nu->n_alloc + nu->n_free && model_graph_live_exec(g, &live) && live.h != e) {
		p->rc = CUDA_ERROR_NOT_SUPPORTED;
		p->rule = R_UPDATE_INSTANTIATED;
		snprintf(msg, sizeof msg,
			 "graph 0x%llx holds memory nodes and is itself instantiated as exec 0x%llx; it cannot "
			 "be used to update exec 0x%llx (driver: 801, result left Success)",
			 (unsigned long long)(uintptr_t)g, (unsigned long long)(uintptr_t)live.h,
			 (unsigned long long)(uintptr_t)e);
		if (cg_violation_begin(&r, R_UPDATE_INSTANTIATED, api, p->rc, msg)) {
			rec_hex(&r, "exec", (uintptr_t)e);
			rec_hex(&r, "graph", (uintptr_t)g);
			rec_hex(&r, "other_exec", (uintptr_t)live.h);
			rec_site(&r, "site", cg_site_here(SITE_SKIP + 1));
			rec_site(&r, "other_exec_site", live.site);
			cg_violation_end(&r, R_UPDATE_INSTANTIATED);
		}
		goto out;
	}
	if (!old || !nu)
		goto out;
	if (old == nu) {
		/* O(1): the exec's own summary (an update from the graph it runs). */
	} else if (old->topo && old->topo == nu->topo && old->n_nodes == nu->n_nodes) {
		/* Same topology hash: the node-by-node type and edge loop below
		 * only runs when they differ, to name the difference. */
	} else if (old->n_nodes != nu->n_nodes) {
		p->rc = CUDA_ERROR_GRAPH_EXEC_UPDATE_FAILURE;
		p->result = CU_GRAPH_EXEC_UPDATE_ERROR_TOPOLOGY_CHANGED;
		why_count(p->why, old->n_nodes, g, nu->n_nodes);
	} else {
		for (uint32_t i = 0; i < nu->n_nodes; i++) {
			if (old->types[i] != nu->types[i]) {
				p->rc = CUDA_ERROR_GRAPH_EXEC_UPDATE_FAILURE;
				p->result = CU_GRAPH_EXEC_UPDATE_ERROR_NODE_TYPE_CHANGED;
				p->err_index = i;
				p->err_node = nu->nodes[i];
				p->from_node = old->nodes[i];
				why_type(p->why, i, old->types[i], nu->types[i]);
				break;
			}
			if (old->ndeps[i] != nu->ndeps[i]) {
				p->rc = CUDA_ERROR_GRAPH_EXEC_UPDATE_FAILURE;
				p->result = CU_GRAPH_EXEC_UPDATE_ERROR_TOPOLOGY_CHANGED;
				p->err_index = i;
				p->err_node = nu->nodes[i];
				p->from_node = old->nodes[i];
				why_deps(p->why, i, nu->types[i], old->ndeps[i], nu->ndeps[i]);
				break;
			}
		}
	}
	/* Same shape, other summaries: node details the driver will not take
	 * (nodes.c); they are not in the topology hash. */
	if (!p->rc && old != nu && nodes_update_refusal(old, nu, &p->err_index, &p->result, p->why, sizeof p->why)) {
		p->rc = CUDA_ERROR_GRAPH_EXEC_UPDATE_FAILURE;
		p->err_node = nu->nodes[p->err_index];
		p->from_node = old->nodes[p->err_index];
	}
	if (p->rc) {
		p->rule = R_UPDATE_FAIL;
		/* Under reinstantiate, a handle already rewritten once had its
		 * CGS001 written in full then: later ones are counted, and each
		 * rewrite record carries its reason (why). A thrashing loop
		 * then costs one record per rewrite, not three. */
		if (cg_cfg.on_update_failure == CG_UPD_REINSTANTIATE && cg_policy_rewritten_before(e)) {
			cg_violation_counted(R_UPDATE_FAIL);
			goto out;
		}
		snprintf(msg, sizeof msg, "cuGraphExecUpdate of exec 0x%llx from graph 0x%llx will fail with %s: %s",
			 (unsigned long long)(uintptr_t)e, (unsigned long long)(uintptr_t)g,
			 update_result_name(p->result),
			 p->why);
		if (cg_violation_begin(&r, R_UPDATE_FAIL, api, p->rc, msg)) {
			rec_hex(&r, "exec", (uintptr_t)e);
			rec_hex(&r, "graph", (uintptr_t)g);
			rec_int(&r, "predicted_result", p->result);
			rec_int(&r, "exec_nodes", old->n_nodes);
			rec_int(&r, "graph_nodes", nu->n_nodes);
			if (p->err_node) {
				const char *kn = nodes_kernel_name(nu, p->err_index);
				const char *ko = nodes_kernel_name(old, p->err_index);
				if (kn)
					rec_str(&r, "kernel", kn);
				if (ko && ko != kn)
					rec_str(&r, "exec_kernel", ko);
				rec_int(&r, "node_index", p->err_index);
				rec_hex(&r, "error_node", (uintptr_t)p->err_node);
				rec_hex(&r, "error_from_node", (uintptr_t)p->from_node);
			}
			rec_site(&r, "site", cg_site_here(SITE_SKIP + 1));
			if (!model_exec_view(e, &ev)) /* only for the record: one lock less per update */
				memset(&ev, 0, sizeof ev);
			rec_site(&r, "exec_site", ev.site);
			/* Under reinstantiate the refusal is averted behind the
			 * handle: the warning goes out with the thread's batch, in
			 * order, instead of a write of its own (update_post flushes
			 * the batch if the call fails after all). */
			if (cg_cfg.on_update_failure == CG_UPD_REINSTANTIATE)
				rec_batched(&r);
			cg_violation_end(&r, R_UPDATE_FAIL);
			emit_nodes_at(model_summary_graph(old), old, CG_L_INFO, "exec", e);
			emit_nodes_at(g, nu, CG_L_INFO, "graph", e);
		}
		goto out;
	}
	/* The update will succeed: say which nodes it changes (nodes.c; nothing
	 * to compare when the exec already holds this summary), then what it
	 * does to graph allocations. */
	if (old != nu)
		nodes_update_diff(e, g, old, nu);
	p->quiet = old->n_alloc == nu->n_alloc && old->n_free == nu->n_free;
	for (uint32_t i = 0; p->quiet && old != nu && i < old->n_alloc + old->n_free; i++)
		if (old->mem[i].dptr != nu->mem[i].dptr || old->mem[i].size != nu->mem[i].size ||
		    old->mem[i].pool != nu->mem[i].pool || old->mem[i].is_free != nu->mem[i].is_free)
			p->quiet = 0;
	if (p->quiet)
		goto out; /* same memory nodes: neither CGS012 nor CGS003 can apply */
	for (uint32_t i = 0, ia = 0; i < old->n_alloc + old->n_free && ia < nu->n_alloc + nu->n_free; i++, ia++) {
		const struct cg_mnode *a = &old->mem[i], *b = &nu->mem[ia];
		if (a->is_free || b->is_free)
			continue;
		if (a->pool != b->pool && a->pool && b->pool) {
			int ipc, def_a = 0, def_b = 0;
			uint32_t sa = 0, sb = 0;
			model_pool_info(a->pool, &ipc, &def_a, &sa);
			model_pool_info(b->pool, &ipc, &def_b, &sb);
			snprintf(msg, sizeof msg,
				 "update of exec 0x%llx carries an allocation from pool 0x%llx%s where the exec's came "
				 "from pool 0x%llx%s; the driver checks neither pool nor size and accepts it",
				 (unsigned long long)(uintptr_t)e, (unsigned long long)(uintptr_t)b->pool,
				 def_b ? " (default)" : "", (unsigned long long)(uintptr_t)a->pool,
				 def_a ? " (default)" : "");
			if (cg_violation_begin(&r, R_POOL_CHANGED, api, -1, msg)) {
				rec_hex(&r, "exec", (uintptr_t)e);
				rec_hex(&r, "pool", (uintptr_t)a->pool);
				rec_hex(&r, "other_pool", (uintptr_t)b->pool);
				rec_site(&r, "pool_site", sa);
				rec_site(&r, "other_pool_site", sb);
				rec_site(&r, "alloc_site", a->site);
				rec_site(&r, "other_alloc_site", b->site);
				cg_violation_end(&r, R_POOL_CHANGED);
			}
		}
		/* Only an allocation that outlives the launch (no free node in
		 * the exec's graph) can be held by the program: swapping one that
		 * the graph frees itself is harmless. */
		int escapes = !model_mnode_has(old->mem, (int)(old->n_alloc + old->n_free), a->dptr, 1);
		if (escapes && (a->dptr != b->dptr || a->size != b->size)) {
			snprintf(msg, sizeof msg,
				 "update of exec 0x%llx will succeed but replaces its graph allocation 0x%llx (%zu bytes) "
				 "by 0x%llx (%zu bytes): pointers taken from the original capture are dead after the next "
				 "launch",
				 (unsigned long long)(uintptr_t)e, (unsigned long long)a->dptr, a->size,
				 (unsigned long long)b->dptr, b->size);
			if (cg_violation_begin(&r, R_ALLOC_SWAP, api, -1, msg)) {
				rec_hex(&r, "exec", (uintptr_t)e);
				rec_hex(&r, "graph", (uintptr_t)g);
				rec_hex(&r, "dptr", a->dptr);
				rec_hex(&r, "new_dptr", b->dptr);
				rec_u64(&r, "size", a->size);
				rec_u64(&r, "new_size", b->size);
				rec_hex(&r, "pool", (uintptr_t)a->pool);
				rec_hex(&r, "new_pool", (uintptr_t)b->pool);
				rec_site(&r, "alloc_site", a->site);
				rec_site(&r, "new_alloc_site", b->site);
				cg_violation_end(&r, R_ALLOC_SWAP);
			}
		}
	}
out:
	model_summary_free(old);
}

static const char *update_result_name(int res)
{
	static const char *n[] = {"Success", "Error", "TopologyChanged", "NodeTypeChanged", "FunctionChanged",
				  "ParametersChanged", "NotSupported", "UnsupportedFunctionChange", "AttributesChanged"};
	return res >= 0 && res < 9 ? n[res] : "?";
}

/* Shared tail of both update forms. rc/result/err nodes are the driver's
 * answer or, after a rewrite, success; result is -1 when the application
 * passed no place for it (the shim never substitutes its own). */
static void update_post(struct cg_call *c, struct upd_pred *p, CUgraphExec app, CUgraph g, struct cg_summary *nu,
			CUresult rc, int result, CUgraphNode errn, CUgraphNode fromn, int rewritten, const char *api)
{
	struct cg_rec r;
	if (!rewritten && (p->rc != (int)rc || (rc == CUDA_ERROR_GRAPH_EXEC_UPDATE_FAILURE && result >= 0 &&
						 p->result != result)))
		cg_mismatch(api, p->rule, p->rc, rc, p->result, result);
	if (rc == CUDA_SUCCESS)
		ledger_exec_set(app, g, 0, nu, api); /* the exec's nodes now point where g's do */
	if (rc == CUDA_SUCCESS && !rewritten)
		model_exec_updated(app, g, nu);
	else {
		if (!rewritten)
			model_exec_update_failed(app);
		model_summary_free(nu);
	}
	/* Counted like launches (the exit summary's updates): a successful
	 * update that changes nothing the shim models -- same topology, same
	 * memory nodes, nothing predicted, not rewritten -- writes no call
	 * record below debug level (docs/log-format.md). The record is most
	 * of the shim's cost of an update from an identical graph. */
	if (p->quiet && rc == CUDA_SUCCESS && !rewritten && !cg_log_on(CG_L_DEBUG)) {
		if (cg_tls.via)
			cg_tls.via_consumed = 1; /* the runtime hook writes nothing either */
		return;
	}
	if (cg_call_rec(&r, c, rc)) {
		rec_hex(&r, "exec", (uintptr_t)app);
		rec_hex(&r, "graph", (uintptr_t)g);
		if (result >= 0) { /* -1: the application gave nowhere to put it */
			rec_int(&r, "result", result);
			rec_word(&r, "result_name", update_result_name(result));
		}
		if (errn)
			rec_hex(&r, "error_node", (uintptr_t)errn);
		if (fromn)
			rec_hex(&r, "error_from_node", (uintptr_t)fromn);
		if (p->rule)
			rec_str(&r, "predicted_by", cg_rule_id(p->rule));
		if (rewritten)
			rec_bool(&r, "rewritten", 1);
		rec_end(&r);
	}
	if (rc != CUDA_SUCCESS)
		cg_log_flush_thread(); /* a program may stop on this error: its records first */
}

/* Policy before the call: abort on a predicted refusal. */
static void update_policy_pre(const struct upd_pred *p)
{
	if (p->rc == CUDA_ERROR_GRAPH_EXEC_UPDATE_FAILURE && cg_cfg.on_update_failure == CG_UPD_ABORT)
		raise(SIGABRT);
}

/* Policy after the driver's answer: under reinstantiate, a refusal with 910
 * is replaced by a re-instantiation. Only the driver's own refusal counts: a
 * prediction is never acted on unasked, since the driver may answer
 * something else (1 for a bad handle, success where the model is wrong).
 * The reason is "predicted" when the model saw it coming (why: what
 * differs), "failed" when it did not. Returns 1 when rewritten. */
static int update_policy_post(const struct upd_pred *p, CUgraphExec app, CUgraph g, struct cg_summary *nu,
			      CUresult rc)
{
	int pred = p->rc == CUDA_ERROR_GRAPH_EXEC_UPDATE_FAILURE;
	if (rc != CUDA_ERROR_GRAPH_EXEC_UPDATE_FAILURE)
		return 0;
	return cg_policy_reinstantiate(app, g, nu, pred ? "predicted" : "failed", rc, pred ? p->why : NULL);
}

CUresult cgh_cuGraphExecUpdate_v2(CUgraphExec hGraphExec, CUgraph hGraph, CUgraphExecUpdateResultInfo *resultInfo)
{
	struct cg_call c;
	struct upd_pred p;
	struct cg_summary *nu;
	CUresult rc;
	int rewritten = 0, result = -1, saved;
	CUgraphNode en = NULL, fn = NULL;
	CUgraphExec app = hGraphExec, real = cg_policy_exec(hGraphExec);
	CG_REAL(cuGraphExecUpdate_v2);
	if (!cg_call_begin(&c, HID_cuGraphExecUpdate_v2, CG_CALL_LIFE))
		return CG_FWD(real_cuGraphExecUpdate_v2(real, hGraph, resultInfo));
	update_predict(&p, app, hGraph, &nu, "cuGraphExecUpdate_v2");
	update_policy_pre(&p);
	/* The application's pointer as given (TensorRT-LLM passes NULL, which
	 * the driver accepts): the result is read only from it. */
	rc = CG_FWD(real_cuGraphExecUpdate_v2(real, hGraph, resultInfo));
	saved = errno;
	if (resultInfo) {
		result = (int)resultInfo->result;
		en = resultInfo->errorNode;
		fn = resultInfo->errorFromNode;
	}
	if (update_policy_post(&p, app, hGraph, nu, rc)) {
		rc = CUDA_SUCCESS;
		rewritten = 1;
	}
	if (rewritten) {
		result = CU_GRAPH_EXEC_UPDATE_SUCCESS;
		en = fn = NULL;
		if (resultInfo)
			memset(resultInfo, 0, sizeof *resultInfo);
	}
	update_post(&c, &p, app, hGraph, nu, rc, result, en, fn, rewritten, "cuGraphExecUpdate_v2");
	errno = saved;
	return rc;
}

CUresult cgh_cuGraphExecUpdate(CUgraphExec hGraphExec, CUgraph hGraph, CUgraphNode *hErrorNode_out,
			       CUgraphExecUpdateResult *updateResult_out)
{
	struct cg_call c;
	struct upd_pred p;
	struct cg_summary *nu;
	CUgraphNode en = NULL;
	CUresult rc;
	int rewritten = 0, result = -1, saved;
	CUgraphExec app = hGraphExec, real = cg_policy_exec(hGraphExec);
	CG_REAL(cuGraphExecUpdate);
	if (!cg_call_begin(&c, HID_cuGraphExecUpdate, CG_CALL_LIFE))
		return CG_FWD(real_cuGraphExecUpdate(real, hGraph, hErrorNode_out, updateResult_out));
	if (!hErrorNode_out || !updateResult_out) {
		/* v1 requires both out-pointers: the driver answers
		 * INVALID_VALUE and updates nothing. Its answer, untouched. */
		rc = CG_FWD(real_cuGraphExecUpdate(real, hGraph, hErrorNode_out, updateResult_out));
		saved = errno;
		cg_call_end(&c, rc);
		errno = saved;
		return rc;
	}
	update_predict(&p, app, hGraph, &nu, "cuGraphExecUpdate");
	update_policy_pre(&p);
	rc = CG_FWD(real_cuGraphExecUpdate(real, hGraph, hErrorNode_out, updateResult_out));
	saved = errno;
	if (rc == CUDA_SUCCESS || rc == CUDA_ERROR_GRAPH_EXEC_UPDATE_FAILURE) { /* written by the driver */
		en = *hErrorNode_out;
		result = (int)*updateResult_out;
	}
	if (update_policy_post(&p, app, hGraph, nu, rc)) {
		rc = CUDA_SUCCESS;
		rewritten = 1;
	}
	if (rewritten) {
		en = NULL;
		result = CU_GRAPH_EXEC_UPDATE_SUCCESS;
		*hErrorNode_out = NULL;
		*updateResult_out = CU_GRAPH_EXEC_UPDATE_SUCCESS;
	}
	update_post(&c, &p, app, hGraph, nu, rc, result, en, NULL, rewritten, "cuGraphExecUpdate");
	errno = saved;
	return rc;
}

/* ======================================================================= */
/* launch and upload: the hot path                                         */
/* ======================================================================= */

static __attribute__((noinline, cold)) void launch_unfreed_violation(CUgraphExec e, const char *api, int unfreed)
{
	struct cg_rec r;
	struct cg_mnode *mem = NULL;
	char msg[320];
	int n = model_exec_mnodes(e, &mem);
	snprintf(msg, sizeof msg,
		 "exec 0x%llx is relaunched while %d graph allocation(s) of its previous launch are unfreed and it was "
		 "not instantiated with AutoFreeOnLaunch: free them (cuMemFreeAsync, a free node) or instantiate "
		 "with CUDA_GRAPH_INSTANTIATE_FLAG_AUTO_FREE_ON_LAUNCH",
		 (unsigned long long)(uintptr_t)e, unfreed);
	if (cg_violation_begin(&r, R_RELAUNCH_UNFREED, api, CUDA_ERROR_INVALID_VALUE, msg)) {
		rec_hex(&r, "exec", (uintptr_t)e);
		rec_open(&r, "dptrs", '[');
		for (int i = 0; i < n; i++)
			if (!mem[i].is_free)
				rec_elem_hex(&r, mem[i].dptr);
		rec_close(&r, ']');
		for (int i = 0; i < n; i++)
			if (!mem[i].is_free) {
				rec_site(&r, "alloc_site", mem[i].site);
				break;
			}
		rec_site(&r, "site", cg_site_here(2));
		cg_violation_end(&r, R_RELAUNCH_UNFREED);
	}
	free(mem);
}

static __attribute__((noinline)) void launch_record_as(int hid, CUgraphExec e, CUstream s, CUresult rc,
						       uint64_t t0, long long n, int flags)
{
	struct cg_call c = {hid, flags, t0};
	struct cg_rec r;
	if (cg_call_rec(&r, &c, rc)) {
		rec_hex(&r, "exec", (uintptr_t)e);
		rec_hex(&r, "stream", (uintptr_t)s);
		if (n)
			rec_int(&r, "launch", n);
		rec_end(&r);
	}
}

/* A launch record at trace level (info when it fails). */
static void launch_record(int hid, CUgraphExec e, CUstream s, CUresult rc, uint64_t t0, long long n)
{
	launch_record_as(hid, e, s, rc, t0, n, 0);
}

static __attribute__((noinline)) void launch_every(CUgraphExec e, long long n)
{
	struct cg_rec r;
	rec_begin(&r, CG_L_INFO, "launches");
	rec_hex(&r, "exec", (uintptr_t)e);
	rec_int(&r, "count", n);
	rec_str(&r, "reason", "every");
	rec_end(&r);
}

/* Contract: no allocation, no lock, no driver call besides the launch on the
 * common path: one state load, one TLS load, a lock-free index probe and
 * two relaxed atomics. */
static inline CUresult launch_common(int hid, PFN_cuGraphLaunch_v10000 fn, CUgraphExec e, CUstream s)
{
	CG_ERRNO_IN; /* entered straight from the wrapper */
	CUgraphExec real;
	struct cg_exec *x;
	long long n = 0;
	int unfreed = 0, autofree = 0, trace;
	uint64_t t0 = 0;
	CUresult rc;
	int st = atomic_load_explicit(&cg_state, memory_order_acquire);
	if (CG_UNLIKELY(st != CG_READY)) {
		if (st != CG_SETUP)
			return CG_FWD(fn(cg_policy_exec(e), s));
		cg_ensure_init();
		if (!cg_ready())
			return CG_FWD(fn(cg_policy_exec(e), s));
	}
	if (CG_UNLIKELY(cg_tls.in_shim))
		return CG_FWD(fn(cg_policy_exec(e), s));
	trace = cg_log_on(CG_L_TRACE);
	if (CG_UNLIKELY(trace))
		t0 = cg_now_ns();
	x = model_exec_fast(e);
	/* The exec behind the application's handle, without a lock: the
	 * record carries it (it differs from e only after a rewrite). */
	real = x ? model_exec_real(x) : cg_policy_exec(e);
	if (CG_UNLIKELY(real != e) && CG_UNLIKELY(atomic_load_explicit(&cg_policy_pending, memory_order_relaxed)))
		cg_policy_launch_pending(e, s, hid == HID_cuGraphLaunch_ptsz);
	if (CG_LIKELY(x != NULL)) {
		n = model_exec_launched(x, &unfreed, &autofree);
		if (CG_UNLIKELY(unfreed && !autofree))
			launch_unfreed_violation(e, cg_routes[hid].name, unfreed);
	}
	int stale = ledger_launch(e, cg_routes[hid].name); /* CGS019: one relaxed load unless an exec is stale */
	rc = CG_FWD(fn(real, s));
	if (CG_UNLIKELY(stale) && rc == CUDA_SUCCESS && !trace) {
		int saved = errno; /* the launch a CGS019 announced: logged at info beside it */
		launch_record_as(hid, e, s, rc, t0, n, CG_CALL_LIFE);
		errno = saved;
	}
	if (CG_UNLIKELY(rc != CUDA_SUCCESS)) {
		int saved = errno;
		if (x)
			model_exec_launch_failed(x);
		launch_record(hid, e, s, rc, t0, n);
		errno = saved;
	} else if (CG_UNLIKELY(trace || n == 1 || (cg_cfg.launch_every && n % cg_cfg.launch_every == 0))) {
		int saved = errno;
		if (trace)
			launch_record(hid, e, s, rc, t0, n);
		if (n == 1) {
			model_mem_moved(); /* a first launch maps graph memory */
			cg_model_graphmem("first_launch", e);
		}
		if (cg_cfg.launch_every && n % cg_cfg.launch_every == 0)
			launch_every(e, n);
		errno = saved;
	}
	return rc;
}

CUresult cgh_cuGraphLaunch(CUgraphExec hGraphExec, CUstream hStream)
{
	CG_REAL(cuGraphLaunch);
	return launch_common(HID_cuGraphLaunch, real_cuGraphLaunch, hGraphExec, hStream);
}

CUresult cgh_cuGraphLaunch_ptsz(CUgraphExec hGraphExec, CUstream hStream)
{
	CG_REAL(cuGraphLaunch_ptsz);
	return launch_common(HID_cuGraphLaunch_ptsz, real_cuGraphLaunch_ptsz, hGraphExec, hStream);
}

static CUresult upload_common(int hid, PFN_cuGraphUpload_v11010 fn, CUgraphExec e, CUstream s)
{
	CG_ERRNO_IN; /* entered straight from the wrapper */
	struct cg_call c;
	CUresult rc;
	CUgraphExec real = cg_policy_exec(e);
	if (!cg_call_begin(&c, hid, 0))
		return CG_FWD(fn(real, s));
	model_mem_moved(); /* uploads map the graph's memory */
	int stale = ledger_launch(e, cg_routes[hid].name);
	rc = CG_FWD(fn(real, s));
	int saved = errno;
	launch_record_as(hid, e, s, rc, c.t0, 0, stale ? CG_CALL_LIFE : 0);
	errno = saved;
	return rc;
}

CUresult cgh_cuGraphUpload(CUgraphExec hGraphExec, CUstream hStream)
{
	CG_REAL(cuGraphUpload);
	return upload_common(HID_cuGraphUpload, real_cuGraphUpload, hGraphExec, hStream);
}

CUresult cgh_cuGraphUpload_ptsz(CUgraphExec hGraphExec, CUstream hStream)
{
	CG_REAL(cuGraphUpload_ptsz);
	return upload_common(HID_cuGraphUpload_ptsz, real_cuGraphUpload_ptsz, hGraphExec, hStream);
}

/* ======================================================================= */
/* stream capture                                                          */
/* ======================================================================= */

static const char *mode_str(int m)
{
	return m == 0 ? "global" : m == 1 ? "thread_local" : m == 2 ? "relaxed" : "?";
}

/* Device of the calling context: the current pool of that device is what
 * cuMemAllocAsync will use during this capture. Learned before the capture
 * starts, so no query is needed inside it. */
static void learn_current_pool(void)
{
	int dev = cg_current_device();
	CUmemoryPool p = NULL, d = NULL;
	if (model_device_pool(dev, NULL))
		return;
	if (real_cuDeviceGetDefaultMemPool && real_cuDeviceGetDefaultMemPool(&d, dev) == CUDA_SUCCESS)
		model_pool_seen(d, dev, 1);
	if (real_cuDeviceGetMemPool && real_cuDeviceGetMemPool(&p, dev) == CUDA_SUCCESS && p != d)
		model_device_set_pool(dev, p, 0);
}

/* First-use work of the begin-capture hook, done ahead of the first
 * capture (issue 19: the first begin paid ~140 us of it on an H100).
 * cg_call_begin calls this from any hooked call while cg_warm_pending is
 * set: stage 1 (site: unwinder, libgcc_s, Python reader) needs no driver;
 * stage 2 (the current device's pool queries, whose first call may set up
 * the driver's pool state, and a first cuMemGetInfo, not counted against
 * the MEMINFO budget) needs a current context. Both run only while no
 * capture is live, so no driver call lands inside one; a stage that finds
 * a capture live, or no context, is left for a later call (the begin hook
 * itself does the same work on its own if none came). Never from
 * cuGetProcAddress (the runtime's start-up burst: no context yet, and the
 * shim's own lookups). Claimed with an exchange: one thread does each
 * stage. */
_Atomic int cg_warm_pending = 3; /* bit 0: stage 1, bit 1: stage 2 */

void cg_warm_capture(int hid)
{
	int saved = errno, st;
	CUdevice dev = 0;
	if (hid == HID_cuGetProcAddress || hid == HID_cuGetProcAddress_v2 ||
	    atomic_load_explicit(&cg_live_captures, memory_order_relaxed))
		return;
	st = atomic_load_explicit(&cg_warm_pending, memory_order_relaxed);
	if ((st & 1) && (atomic_fetch_and(&cg_warm_pending, ~1) & 1))
		cg_site_warm();
	if ((st & 2) && drv_cuCtxGetDevice && drv_cuCtxGetDevice(&dev) == CUDA_SUCCESS && /* a context is current */
	    !atomic_load_explicit(&cg_live_captures, memory_order_relaxed) &&
	    (atomic_fetch_and(&cg_warm_pending, ~2) & 2)) {
		size_t fr, total;
		learn_current_pool();
		if (cg_cfg.meminfo != CG_MEMINFO_OFF && drv_cuMemGetInfo_v2)
			drv_cuMemGetInfo_v2(&fr, &total);
	}
	errno = saved;
}

/* Between the driver's begin and the application's next call a Global
 * capture is live, and any other thread's capture-unsafe call (a pinned
 * host allocation, a cudaMalloc) breaks it: the shim keeps that window as
 * short as the driver's. Everything that costs more than a few
 * microseconds runs before the real call (site with its backtrace and
 * Python frames, first-use init, pool lookup, memory sample, exit handler,
 * the capture's table entry); after it only the capture-safe capture-info
 * query and one table insert. The begin's call record is deferred to the
 * end of the capture (model_capture_begin), its post_ns measuring the
 * window the hook added. */
static CUresult begin_post(struct cg_call *c, CUresult rc, CUstream s, int mode, int ptsz, CUgraph into,
			   uint32_t site, int asked)
{
	struct cg_rec r;
	CUstreamCaptureStatus st = CU_STREAM_CAPTURE_STATUS_NONE;
	cuuint64_t id = 0;
	CUgraph g = NULL;
	int saved = errno;
	cg_call_mark_out(c);
	if (rc == CUDA_SUCCESS) {
		if (ptsz && drv_cuStreamGetCaptureInfo_v3_ptsz)
			drv_cuStreamGetCaptureInfo_v3_ptsz(s, &st, &id, &g, NULL, NULL, NULL);
		else if (drv_cuStreamGetCaptureInfo_v3)
			drv_cuStreamGetCaptureInfo_v3(s, &st, &id, &g, NULL, NULL, NULL);
		if (cg_tls.via) {
			cg_tls.via_consumed = 1;
			cg_tls.via_rc = rc;
		}
		model_capture_begin(id, s, mode, ptsz, into, site, c, cg_tls.via, g);
		errno = saved;
		return rc;
	}
	/* Refused: no capture is live on this stream from this call. */
	model_capture_begin_refused(s, ptsz, cg_routes[c->hid].name, rc);
	if (cg_call_rec(&r, c, rc)) {
		rec_hex(&r, "stream", (uintptr_t)s);
		rec_word(&r, "mode", mode_str(mode));
		if (asked != mode)
			rec_word(&r, "asked_mode", mode_str(asked));
		rec_u64(&r, "capture", id);
		rec_hex(&r, "graph", (uintptr_t)into);
		rec_site(&r, "site", site);
		rec_end(&r);
	}
	errno = saved;
	return rc;
}

/* CGSHIM_CAPTURE_MODE (issue 14 point 5): the mode a begin-capture is
 * given. Only ever loosened: thread_local turns a global capture
 * thread-local (another thread's unsafe call, a pinned-allocation thread,
 * no longer breaks it), relaxed turns global and thread-local captures
 * relaxed; a mode already as loose as asked is kept. A rewrite is recorded
 * ("capture_mode") before the call, out of the capture's window. */
static int capture_mode_use(int asked)
{
	int want = cg_cfg.capture_mode == CG_CAPMODE_RELAXED        ? CU_STREAM_CAPTURE_MODE_RELAXED
		   : cg_cfg.capture_mode == CG_CAPMODE_THREAD_LOCAL ? CU_STREAM_CAPTURE_MODE_THREAD_LOCAL
								    : asked;
	/* loosest last: global 0 < thread_local 1 < relaxed 2 */
	return cg_cfg.capture_mode != CG_CAPMODE_KEEP && asked >= CU_STREAM_CAPTURE_MODE_GLOBAL && want > asked ? want
														  : asked;
}

static void capture_mode_record(int hid, CUstream s, int asked, int use, uint32_t site)
{
	struct cg_rec r;
	rec_begin(&r, CG_L_INFO, CGSHIM_EV_CAPMODE);
	rec_word(&r, "api", cg_routes[hid].name);
	rec_hex(&r, "stream", (uintptr_t)s);
	rec_word(&r, "asked", mode_str(asked));
	rec_word(&r, "mode", mode_str(use));
	rec_str(&r, "why", "CGSHIM_CAPTURE_MODE");
	rec_site(&r, "site", site);
	rec_end(&r);
}

/* Whether s is a blocking stream (the legacy stream joins a capture on it:
 * CGS014). Asked before the begin, so no capture of this call is live. */
static int stream_blocking(CUstream s, int ptsz)
{
	unsigned flags = 0;
	PFN_cuStreamGetFlags_v5050 f = ptsz ? drv_cuStreamGetFlags_ptsz : drv_cuStreamGetFlags;
	if (!f || f(s, &flags) != CUDA_SUCCESS)
		return 0; /* unknown: no CGS014 prediction for it */
	return !(flags & CU_STREAM_NON_BLOCKING);
}

/* The modeless cuStreamBeginCapture (always global) begun with another mode:
 * through cuStreamBeginCapture_v2 (the same driver entry with a mode);
 * without it (a driver older than 10.1) the capture is left global. */
static CUresult begin_v1_as(int ptsz, CUstream s, int use, int *used)
{
	PFN_cuStreamBeginCapture_v10010 f = ptsz ? real_cuStreamBeginCapture_v2_ptsz : real_cuStreamBeginCapture_v2;
	if (!f) {
		*used = CU_STREAM_CAPTURE_MODE_GLOBAL;
		return ptsz ? real_cuStreamBeginCapture_ptsz(s) : real_cuStreamBeginCapture(s);
	}
	return f(s, (CUstreamCaptureMode)use);
}

/* rw_call: the call with the mode replaced by `use` (a CGSHIM_CAPTURE_MODE
 * rewrite; `used` may say the rewrite could not be made). */
#define BEGIN_CAPTURE(name, ptsz, params, args, mode_expr, into_expr, rw_call)                     \
	CUresult cgh_##name params                                                                 \
	{                                                                                          \
		struct cg_call c;                                                                  \
		uint32_t site;                                                                     \
		CUresult rc;                                                                       \
		int asked, use, used;                                                              \
		CG_REAL(name);                                                                     \
		if (!cg_call_begin(&c, HID_##name, CG_CALL_LIFE))                                  \
			return CG_FWD(real_##name args);                                           \
		site = cg_site_here(SITE_SKIP);                                                    \
		asked = (int)(mode_expr);                                                          \
		used = use = capture_mode_use(asked);                                              \
		cg_policy_collect();                                                               \
		learn_current_pool();                                                              \
		model_capture_presample();                                                         \
		model_capture_prepare_blocking(stream_blocking(hStream, ptsz));                    \
		cg_exit_register_late();                                                           \
		if (use != asked)                                                                  \
			capture_mode_record(HID_##name, hStream, asked, use, site);                \
		cg_call_mark_in(&c);                                                               \
		rc = use == asked ? CG_FWD(real_##name args) : CG_FWD(rw_call);                    \
		return begin_post(&c, rc, hStream, used, ptsz, into_expr, site, asked);            \
	}
BEGIN_CAPTURE(cuStreamBeginCapture, 0, (CUstream hStream), (hStream), CU_STREAM_CAPTURE_MODE_GLOBAL, NULL,
	      begin_v1_as(0, hStream, use, &used))
BEGIN_CAPTURE(cuStreamBeginCapture_ptsz, 1, (CUstream hStream), (hStream), CU_STREAM_CAPTURE_MODE_GLOBAL, NULL,
	      begin_v1_as(1, hStream, use, &used))
BEGIN_CAPTURE(cuStreamBeginCapture_v2, 0, (CUstream hStream, CUstreamCaptureMode mode), (hStream, mode), mode, NULL,
	      real_cuStreamBeginCapture_v2(hStream, (CUstreamCaptureMode)use))
BEGIN_CAPTURE(cuStreamBeginCapture_v2_ptsz, 1, (CUstream hStream, CUstreamCaptureMode mode), (hStream, mode), mode,
	      NULL, real_cuStreamBeginCapture_v2_ptsz(hStream, (CUstreamCaptureMode)use))
BEGIN_CAPTURE(cuStreamBeginCaptureToGraph, 0,
	      (CUstream hStream, CUgraph hGraph, const CUgraphNode *dependencies, const CUgraphEdgeData *dependencyData,
	       size_t numDependencies, CUstreamCaptureMode mode),
	      (hStream, hGraph, dependencies, dependencyData, numDependencies, mode), mode, hGraph,
	      real_cuStreamBeginCaptureToGraph(hStream, hGraph, dependencies, dependencyData, numDependencies,
					       (CUstreamCaptureMode)use))
BEGIN_CAPTURE(cuStreamBeginCaptureToGraph_ptsz, 1,
	      (CUstream hStream, CUgraph hGraph, const CUgraphNode *dependencies, const CUgraphEdgeData *dependencyData,
	       size_t numDependencies, CUstreamCaptureMode mode),
	      (hStream, hGraph, dependencies, dependencyData, numDependencies, mode), mode, hGraph,
	      real_cuStreamBeginCaptureToGraph_ptsz(hStream, hGraph, dependencies, dependencyData, numDependencies,
						    (CUstreamCaptureMode)use))

static CUresult end_capture_common(int hid, PFN_cuStreamEndCapture_v10000 fn, int ptsz, CUstream s, CUgraph *ph)
{
	CG_ERRNO_IN; /* entered straight from the wrapper */
	struct cg_call c;
	struct cg_rec r;
	uint64_t id = 0;
	CUgraph g0 = NULL;
	CUresult rc;
	int capturing, n;
	CUstream un[CG_MAX_JOIN];
	uint32_t unsite[CG_MAX_JOIN];
	struct cg_capture_view cv;
	if (!cg_call_begin(&c, hid, CG_CALL_LIFE))
		return CG_FWD(fn(s, ph));
	capturing = model_stream_capture(s, ptsz, &id, &g0, NULL);
	if (capturing && cg_caprule_end_thread(cg_routes[hid].name, id, s)) { /* CGS016: 908 */
		cg_call_mark_in(&c);
		rc = CG_FWD(fn(s, ph));
		cg_call_mark_out(&c);
		int saved = errno;
		cg_caprule_after(cg_routes[hid].name, R_END_WRONG_THREAD, CUDA_ERROR_STREAM_CAPTURE_WRONG_THREAD, rc);
		/* Either way the capture is over: success ends it, and the 908
		 * ends it too (measured on the H100, docs/capture-map.md). */
		if (rc == CUDA_SUCCESS || rc == CUDA_ERROR_STREAM_CAPTURE_WRONG_THREAD)
			model_capture_end(id, s, rc == CUDA_SUCCESS && ph ? *ph : NULL, rc);
		cg_call_end(&c, rc);
		errno = saved;
		return rc;
	}
	if (capturing && (n = model_capture_unjoined(id, un, unsite, CG_MAX_JOIN)) > 0) {
		char msg[256];
		snprintf(msg, sizeof msg,
			 "capture %llu on stream 0x%llx ends with %d forked stream(s) not joined back: make the "
			 "origin stream wait on an event recorded on each forked stream after its last work",
			 (unsigned long long)id, (unsigned long long)(uintptr_t)s, n);
		if (cg_violation_begin(&r, R_UNJOINED, cg_routes[hid].name, CUDA_ERROR_STREAM_CAPTURE_UNJOINED, msg)) {
			rec_u64(&r, "capture", id);
			rec_hex(&r, "stream", (uintptr_t)s);
			rec_open(&r, "unjoined", '[');
			for (int i = 0; i < n; i++)
				rec_elem_hex(&r, (uintptr_t)un[i]);
			rec_close(&r, ']');
			rec_site(&r, "fork_site", unsite[0]);
			if (model_capture_find(id, &cv))
				rec_site(&r, "begin_site", cv.site);
			cg_violation_end(&r, R_UNJOINED);
		}
		/* the end's 904 links back to the first unjoined fork's site */
		model_capture_breaker(id, cg_routes[hid].name, cg_rule_id(R_UNJOINED), CUDA_ERROR_STREAM_CAPTURE_UNJOINED,
				      unsite[0]);
	}
	cg_call_mark_in(&c);
	rc = CG_FWD(fn(s, ph));
	cg_call_mark_out(&c);
	int saved = errno;
	{
		CUgraph g = rc == CUDA_SUCCESS && ph ? *ph : NULL;
		struct cg_summary *sum = NULL;
		int have_counts = 0;
		uint32_t n_alloc = 0, n_free = 0;
		size_t n = 0;
		if (capturing)
			model_capture_end(id, s, g, rc);
		if (g) {
			model_graph_new(g, 1, id, 0);
			/* A program that updates executables gets its graphs
			 * walked here, off the update's path (an update needs the
			 * new graph's summary). Otherwise no walk: the memory nodes
			 * are known from the hooks and the node count is one
			 * query; the full summary is walked on first need (an
			 * update, a rewrite, node records at debug level). */
			if (cg_log_on(CG_L_DEBUG) || atomic_load_explicit(&updates_seen, memory_order_relaxed) ||
			    !drv_cuGraphGetNodes || drv_cuGraphGetNodes(g, NULL, &n) != CUDA_SUCCESS) {
				sum = model_graph_summary(g);
			} else {
				have_counts = model_graph_captured(g, n, &n_alloc, &n_free);
			}
		}
		if (cg_call_rec(&r, &c, rc)) {
			rec_hex(&r, "stream", (uintptr_t)s);
			rec_u64(&r, "capture", id);
			rec_hex(&r, "graph", (uintptr_t)g);
			if (sum) {
				rec_int(&r, "nodes", sum->n_nodes);
				rec_int(&r, "alloc_nodes", sum->n_alloc);
				rec_int(&r, "free_nodes", sum->n_free);
			} else if (have_counts) {
				rec_int(&r, "nodes", (long long)n);
				rec_int(&r, "alloc_nodes", n_alloc);
				rec_int(&r, "free_nodes", n_free);
			}
			rec_end(&r);
		}
		model_summary_free(sum);
	}
	errno = saved;
	return rc;
}

CUresult cgh_cuStreamEndCapture(CUstream hStream, CUgraph *phGraph)
{
	CG_REAL(cuStreamEndCapture);
	return end_capture_common(HID_cuStreamEndCapture, real_cuStreamEndCapture, 0, hStream, phGraph);
}

CUresult cgh_cuStreamEndCapture_ptsz(CUstream hStream, CUgraph *phGraph)
{
	CG_REAL(cuStreamEndCapture_ptsz);
	return end_capture_common(HID_cuStreamEndCapture_ptsz, real_cuStreamEndCapture_ptsz, 1, hStream, phGraph);
}

CUresult cgh_cuThreadExchangeStreamCaptureMode(CUstreamCaptureMode *mode)
{
	struct cg_call c;
	CUresult rc;
	int want = mode ? (int)*mode : -1;
	CG_REAL(cuThreadExchangeStreamCaptureMode);
	if (!cg_call_begin(&c, HID_cuThreadExchangeStreamCaptureMode, 0))
		return CG_FWD(real_cuThreadExchangeStreamCaptureMode(mode));
	rc = CG_FWD(real_cuThreadExchangeStreamCaptureMode(mode));
	int saved = errno;
	if (rc == CUDA_SUCCESS && want >= 0)
		model_thread_mode_set(want);
	cg_call_end(&c, rc);
	errno = saved;
	return rc;
}

static CUresult event_record_common(int hid, PFN_cuEventRecord_v2000 fn, int ptsz, CUevent ev, CUstream s)
{
	CG_ERRNO_IN; /* entered straight from the wrapper */
	struct cg_call c;
	uint64_t id;
	CUresult rc;
	if (!cg_call_begin(&c, hid, 0))
		return CG_FWD(fn(ev, s));
	rc = CG_FWD(fn(ev, s));
	int saved = errno;
	if (rc == CUDA_SUCCESS && atomic_load_explicit(&cg_live_captures, memory_order_relaxed)) {
		if (model_stream_capture(s, ptsz, &id, NULL, NULL))
			model_capture_event_record(id, ev, s);
		else
			model_capture_event_forget(ev); /* recorded eagerly: no longer a captured event */
	}
	cg_call_end(&c, rc);
	errno = saved;
	return rc;
}

CUresult cgh_cuEventRecord(CUevent hEvent, CUstream hStream)
{
	CG_REAL(cuEventRecord);
	return event_record_common(HID_cuEventRecord, real_cuEventRecord, 0, hEvent, hStream);
}

CUresult cgh_cuEventRecord_ptsz(CUevent hEvent, CUstream hStream)
{
	CG_REAL(cuEventRecord_ptsz);
	return event_record_common(HID_cuEventRecord_ptsz, real_cuEventRecord_ptsz, 1, hEvent, hStream);
}

static CUresult wait_event_common(int hid, PFN_cuStreamWaitEvent_v3020 fn, int ptsz, CUstream s, CUevent ev,
				  unsigned flags)
{
	CG_ERRNO_IN; /* entered straight from the wrapper */
	struct cg_call c;
	uint64_t id_before = 0, id;
	uint32_t site = 0;
	int was = 0, merge = 0;
	CUresult rc;
	if (!cg_call_begin(&c, hid, 0))
		return CG_FWD(fn(s, ev, flags));
	/* A wait that forks s into a capture is named by its site: taken
	 * before the call (the capture is live either way, but the site is
	 * then only taken for a wait on an event recorded in a capture). */
	if (atomic_load_explicit(&cg_live_captures, memory_order_relaxed)) {
		was = model_stream_capture(s, ptsz, &id_before, NULL, NULL);
		if (!was && model_capture_event_known(ev))
			site = cg_site_here(SITE_SKIP + 1);
		else if (was)
			merge = cg_caprule_merge(cg_routes[hid].name, id_before, ev); /* CGS015 */
	}
	rc = CG_FWD(fn(s, ev, flags));
	int saved = errno;
	if (merge)
		cg_caprule_after(cg_routes[hid].name, R_CAPTURE_MERGE, CUDA_ERROR_STREAM_CAPTURE_MERGE, rc);
	else if (was && rc != CUDA_SUCCESS)
		cg_caprule_failed(cg_routes[hid].name, id_before, rc); /* 905: no rule, still the link */
	if (rc == CUDA_SUCCESS && atomic_load_explicit(&cg_live_captures, memory_order_relaxed) &&
	    model_stream_capture(s, ptsz, &id, NULL, NULL))
		model_capture_wait_event(id, s, ev, site);
	cg_call_end(&c, rc);
	errno = saved;
	return rc;
}

CUresult cgh_cuStreamWaitEvent(CUstream hStream, CUevent hEvent, unsigned int Flags)
{
	CG_REAL(cuStreamWaitEvent);
	return wait_event_common(HID_cuStreamWaitEvent, real_cuStreamWaitEvent, 0, hStream, hEvent, Flags);
}

CUresult cgh_cuStreamWaitEvent_ptsz(CUstream hStream, CUevent hEvent, unsigned int Flags)
{
	CG_REAL(cuStreamWaitEvent_ptsz);
	return wait_event_common(HID_cuStreamWaitEvent_ptsz, real_cuStreamWaitEvent_ptsz, 1, hStream, hEvent, Flags);
}

/* ---- capture-unsafe calls ------------------------------------------------ */

static CUresult stream_sync_common(int hid, PFN_cuStreamSynchronize_v2000 fn, int ptsz, CUstream s)
{
	CG_ERRNO_IN; /* entered straight from the wrapper */
	struct cg_call c;
	uint64_t id;
	struct cg_capture_view cv;
	int predicted = 0;
	CUresult rc;
	if (!cg_call_begin(&c, hid, 0))
		return CG_FWD(fn(s));
	if (atomic_load_explicit(&cg_live_captures, memory_order_relaxed)) {
		if (cg_caprule_legacy(cg_routes[hid].name, s, ptsz, "synchronizes the legacy default stream")) {
			predicted = 2; /* CGS014: 906 before any unsafe-class refusal */
		} else if (model_stream_capture(s, ptsz, &id, NULL, NULL)) {
			if (model_capture_find(id, &cv)) {
				cg_rule_unsafe_violation(cg_routes[hid].name, &cv, "synchronizes a capturing stream");
				predicted = 1;
			}
		} else {
			/* another stream: the unsafe class (capture-map.md) */
			predicted = cg_rule_capture_unsafe(cg_routes[hid].name, "synchronizes another stream");
		}
	}
	rc = CG_FWD(fn(s));
	int saved = errno;
	if (predicted == 2)
		cg_caprule_after(cg_routes[hid].name, R_LEGACY_STREAM, CUDA_ERROR_STREAM_CAPTURE_IMPLICIT, rc);
	else if (predicted && rc != CUDA_ERROR_STREAM_CAPTURE_UNSUPPORTED)
		cg_mismatch(cg_routes[hid].name, R_CAPTURE_UNSAFE, CUDA_ERROR_STREAM_CAPTURE_UNSUPPORTED, rc, -1, -1);
	cg_call_end(&c, rc);
	errno = saved;
	return rc;
}

CUresult cgh_cuStreamSynchronize(CUstream hStream)
{
	CG_REAL(cuStreamSynchronize);
	return stream_sync_common(HID_cuStreamSynchronize, real_cuStreamSynchronize, 0, hStream);
}

CUresult cgh_cuStreamSynchronize_ptsz(CUstream hStream)
{
	CG_REAL(cuStreamSynchronize_ptsz);
	return stream_sync_common(HID_cuStreamSynchronize_ptsz, real_cuStreamSynchronize_ptsz, 1, hStream);
}

/* cuCtxSynchronize (2000) and cuCtxSynchronize_v2 (13000, takes the
 * context; CUDA 13's cudaDeviceSynchronize asks for this one). */
#define CTX_SYNC_BODY(name, args)                                                                  \
	struct cg_call c;                                                                          \
	CUresult rc;                                                                               \
	int predicted;                                                                             \
	CG_REAL(name);                                                                             \
	if (!cg_call_begin(&c, HID_##name, 0))                                                     \
		return real_##name args;                                                           \
	predicted = cg_caprule_device_sync(#name); /* every mode, any thread */                   \
	rc = CG_FWD(real_##name args);                                                             \
	int saved = errno;                                                                         \
	if (predicted && rc != CUDA_ERROR_STREAM_CAPTURE_UNSUPPORTED)                             \
		cg_mismatch(#name, R_CAPTURE_UNSAFE, CUDA_ERROR_STREAM_CAPTURE_UNSUPPORTED, rc, -1, -1); \
	cg_call_end(&c, rc);                                                                       \
	errno = saved;                                                                             \
	return rc;

CUresult cgh_cuCtxSynchronize(void)
{
	CTX_SYNC_BODY(cuCtxSynchronize, ())
}

CUresult cgh_cuCtxSynchronize_v2(CUcontext ctx)
{
	CTX_SYNC_BODY(cuCtxSynchronize_v2, (ctx))
}

CUresult cgh_cuMemAlloc_v2(CUdeviceptr *dptr, size_t bytesize)
{
	struct cg_call c;
	CUresult rc;
	int predicted;
	CG_REAL(cuMemAlloc_v2);
	if (!cg_call_begin(&c, HID_cuMemAlloc_v2, 0))
		return CG_FWD(real_cuMemAlloc_v2(dptr, bytesize));
	model_mem_moved();
	predicted = cg_rule_capture_unsafe("cuMemAlloc_v2", "allocates with cuMemAlloc");
	rc = CG_FWD(real_cuMemAlloc_v2(dptr, bytesize));
	int saved = errno;
	if (predicted && rc != CUDA_ERROR_STREAM_CAPTURE_UNSUPPORTED)
		cg_mismatch("cuMemAlloc_v2", R_CAPTURE_UNSAFE, CUDA_ERROR_STREAM_CAPTURE_UNSUPPORTED, rc, -1, -1);
	if (rc == CUDA_SUCCESS && atomic_load_explicit(&cg_live_captures, memory_order_relaxed))
		model_capture_plain_alloc(bytesize); /* caching allocator growing in relaxed mode */
	if (rc == CUDA_SUCCESS && dptr)
		ledger_add(*dptr, bytesize, LG_DEVICE, cg_site_here(SITE_SKIP));
	{
		struct cg_rec r;
		if (cg_call_rec(&r, &c, rc)) {
			rec_hex(&r, "dptr", rc == CUDA_SUCCESS && dptr ? *dptr : 0);
			rec_u64(&r, "size", bytesize);
			rec_end(&r);
		}
	}
	errno = saved;
	return rc;
}

CUresult cgh_cuMemFree_v2(CUdeviceptr dptr)
{
	struct cg_call c;
	CUresult rc;
	int predicted;
	CG_REAL(cuMemFree_v2);
	if (!cg_call_begin(&c, HID_cuMemFree_v2, 0))
		return CG_FWD(real_cuMemFree_v2(dptr));
	model_mem_moved();
	predicted = cg_rule_capture_unsafe("cuMemFree_v2", "frees with cuMemFree");
	rc = CG_FWD(real_cuMemFree_v2(dptr));
	int saved = errno;
	if (predicted && rc != CUDA_ERROR_STREAM_CAPTURE_UNSUPPORTED)
		cg_mismatch("cuMemFree_v2", R_CAPTURE_UNSAFE, CUDA_ERROR_STREAM_CAPTURE_UNSUPPORTED, rc, -1, -1);
	if (rc == CUDA_SUCCESS) {
		model_alloc_freed(dptr);
		if (ledger_free(dptr, 0, 0, "cuMemFree_v2"))
			c.flags |= CG_CALL_LIFE;
	}
	cg_call_end(&c, rc);
	errno = saved;
	return rc;
}

/* ======================================================================= */
/* stream-ordered allocation                                               */
/* ======================================================================= */

static CUresult alloc_async_common(struct cg_call *c, CUresult (*call)(void *), void *ctx, CUdeviceptr *dptr,
				   size_t size, CUmemoryPool explicit_pool, CUstream s, int ptsz, const char *api)
{
	CG_ERRNO_IN; /* entered straight from the wrapper */
	uint64_t id = 0;
	CUgraph g = NULL;
	int capturing = 0, ipc = 0, is_default = 0;
	uint32_t pool_site = 0, site = 0;
	CUmemoryPool pool = explicit_pool;
	CUresult rc;
	struct cg_rec r;
	if (atomic_load_explicit(&cg_live_captures, memory_order_relaxed))
		capturing = model_stream_capture(s, ptsz, &id, &g, NULL);
	if (!capturing)
		model_mem_moved(); /* may grow the pool; a captured one is a node */
	if (capturing) {
		site = cg_site_here(SITE_SKIP + 1);
		if (!pool)
			pool = model_device_pool(cg_current_device(), NULL);
		if (pool && model_pool_info(pool, &ipc, &is_default, &pool_site) && ipc) {
			char msg[300];
			snprintf(msg, sizeof msg,
				 "%s of %zu bytes from pool 0x%llx during capture %llu: the pool has export handle types "
				 "(IPC-capable) and cannot back graph allocations; the call fails with 801 but the "
				 "capture continues, and later nodes use an unset pointer",
				 api, size, (unsigned long long)(uintptr_t)pool, (unsigned long long)id);
			if (cg_violation_begin(&r, R_IPC_POOL_CAPTURE, api, CUDA_ERROR_NOT_SUPPORTED, msg)) {
				rec_hex(&r, "pool", (uintptr_t)pool);
				rec_u64(&r, "capture", id);
				rec_hex(&r, "stream", (uintptr_t)s);
				rec_u64(&r, "size", size);
				rec_site(&r, "site", site);
				rec_site(&r, "pool_site", pool_site);
				cg_violation_end(&r, R_IPC_POOL_CAPTURE);
			}
		}
	}
	rc = CG_FWD(call(ctx));
	int saved = errno;
	if (capturing) {
		if (rc == CUDA_SUCCESS && dptr) {
			struct cg_mnode m;
			memset(&m, 0, sizeof m);
			m.dptr = *dptr;
			m.size = size;
			m.pool = pool;
			m.site = site;
			m.ipc = (uint8_t)ipc;
			m.pool_default = (uint8_t)is_default;
			model_graph_add_mnode(g, &m);
			model_alloc_graph(&m, s, id, g, api);
		}
		c->flags |= CG_CALL_LIFE;
	} else if (rc == CUDA_SUCCESS && dptr) {
		/* outside capture: a range of the ledger (graph allocations never
		 * are). No call site: a framework on cudaMallocAsync allocates per
		 * tensor, and a backtrace each time would cost more than the
		 * allocation; CGS018 still names the capture, exec and free sites. */
		ledger_add(*dptr, size, LG_ASYNC, 0);
	}
	if (cg_call_rec(&r, c, rc)) {
		rec_hex(&r, "dptr", rc == CUDA_SUCCESS && dptr ? *dptr : 0);
		rec_u64(&r, "size", size);
		rec_hex(&r, "pool", (uintptr_t)pool);
		rec_hex(&r, "stream", (uintptr_t)s);
		if (capturing)
			rec_u64(&r, "capture", id);
		rec_end(&r);
	}
	errno = saved;
	return rc;
}

struct alloc_args {
	void *fn;
	CUdeviceptr *dptr;
	size_t size;
	CUmemoryPool pool;
	CUstream s;
};

static CUresult call_alloc(void *v)
{
	struct alloc_args *a = v;
	return ((PFN_cuMemAllocAsync_v11020)a->fn)(a->dptr, a->size, a->s);
}

static CUresult call_alloc_pool(void *v)
{
	struct alloc_args *a = v;
	return ((PFN_cuMemAllocFromPoolAsync_v11020)a->fn)(a->dptr, a->size, a->pool, a->s);
}

#define ALLOC_ASYNC(name, ptsz)                                                                    \
	CUresult cgh_##name(CUdeviceptr *dptr, size_t bytesize, CUstream hStream)                  \
	{                                                                                          \
		struct cg_call c;                                                                  \
		struct alloc_args a = {(void *)real_##name, dptr, bytesize, NULL, hStream};        \
		CG_REAL(name);                                                                     \
		a.fn = (void *)real_##name;                                                        \
		if (!cg_call_begin(&c, HID_##name, 0))                                             \
			return CG_FWD(real_##name(dptr, bytesize, hStream));                       \
		return alloc_async_common(&c, call_alloc, &a, dptr, bytesize, NULL, hStream, ptsz, #name); \
	}
ALLOC_ASYNC(cuMemAllocAsync, 0)
ALLOC_ASYNC(cuMemAllocAsync_ptsz, 1)

#define ALLOC_POOL(name, ptsz)                                                                     \
	CUresult cgh_##name(CUdeviceptr *dptr, size_t bytesize, CUmemoryPool pool, CUstream hStream) \
	{                                                                                          \
		struct cg_call c;                                                                  \
		struct alloc_args a = {(void *)real_##name, dptr, bytesize, pool, hStream};        \
		CG_REAL(name);                                                                     \
		a.fn = (void *)real_##name;                                                        \
		if (!cg_call_begin(&c, HID_##name, 0))                                             \
			return CG_FWD(real_##name(dptr, bytesize, pool, hStream));                 \
		return alloc_async_common(&c, call_alloc_pool, &a, dptr, bytesize, pool, hStream, ptsz, #name); \
	}
ALLOC_POOL(cuMemAllocFromPoolAsync, 0)
ALLOC_POOL(cuMemAllocFromPoolAsync_ptsz, 1)

static CUresult free_async_common(int hid, PFN_cuMemFreeAsync_v11020 fn, int ptsz, CUdeviceptr p, CUstream s)
{
	CG_ERRNO_IN; /* entered straight from the wrapper */
	struct cg_call c;
	uint64_t id = 0, acap = 0;
	CUgraph g = NULL, ag = NULL;
	size_t sz = 0;
	uint32_t asite = 0;
	int capturing = 0;
	CUresult rc;
	struct cg_rec r;
	if (!cg_call_begin(&c, hid, 0))
		return CG_FWD(fn(p, s));
	if (atomic_load_explicit(&cg_live_captures, memory_order_relaxed))
		capturing = model_stream_capture(s, ptsz, &id, &g, NULL);
	if (!capturing)
		model_mem_moved(); /* may give memory back to the pool; a captured one is a node */
	if (capturing) {
		int known = model_alloc_lookup(p, &acap, &ag, &sz, &asite);
		if (!known || acap != id) {
			char msg[300];
			snprintf(msg, sizeof msg,
				 "cuMemFreeAsync of 0x%llx during capture %llu: %s; the free becomes a node of this "
				 "graph and frees the memory at every launch",
				 (unsigned long long)p, (unsigned long long)id,
				 known ? "the allocation was made by another capture or graph"
				       : "the memory was not allocated in this capture");
			if (cg_violation_begin(&r, R_FREE_FOREIGN, cg_routes[hid].name, -1, msg)) {
				rec_hex(&r, "dptr", p);
				rec_u64(&r, "capture", id);
				rec_hex(&r, "stream", (uintptr_t)s);
				if (known) {
					rec_u64(&r, "alloc_capture", acap);
					rec_site(&r, "alloc_site", asite);
				}
				rec_site(&r, "site", cg_site_here(SITE_SKIP + 1));
				cg_violation_end(&r, R_FREE_FOREIGN);
			}
		}
		c.flags |= CG_CALL_LIFE;
	}
	rc = CG_FWD(fn(p, s));
	int saved = errno;
	if (rc == CUDA_SUCCESS) {
		if (capturing) {
			struct cg_mnode m;
			memset(&m, 0, sizeof m);
			m.dptr = p;
			m.is_free = 1;
			model_graph_add_mnode(g, &m);
		} else {
			model_alloc_freed(p);
			if (ledger_free(p, 0, 0, cg_routes[hid].name))
				c.flags |= CG_CALL_LIFE;
		}
	}
	if (cg_call_rec(&r, &c, rc)) {
		rec_hex(&r, "dptr", p);
		rec_hex(&r, "stream", (uintptr_t)s);
		if (capturing)
			rec_u64(&r, "capture", id);
		rec_end(&r);
	}
	errno = saved;
	return rc;
}

CUresult cgh_cuMemFreeAsync(CUdeviceptr dptr, CUstream hStream)
{
	CG_REAL(cuMemFreeAsync);
	return free_async_common(HID_cuMemFreeAsync, real_cuMemFreeAsync, 0, dptr, hStream);
}

CUresult cgh_cuMemFreeAsync_ptsz(CUdeviceptr dptr, CUstream hStream)
{
	CG_REAL(cuMemFreeAsync_ptsz);
	return free_async_common(HID_cuMemFreeAsync_ptsz, real_cuMemFreeAsync_ptsz, 1, dptr, hStream);
}

/* ======================================================================= */
/* pools                                                                   */
/* ======================================================================= */

CUresult cgh_cuMemPoolCreate(CUmemoryPool *pool, const CUmemPoolProps *poolProps)
{
	struct cg_call c;
	struct cg_rec r;
	CUresult rc;
	uint32_t site;
	CG_REAL(cuMemPoolCreate);
	if (!cg_call_begin(&c, HID_cuMemPoolCreate, CG_CALL_LIFE))
		return CG_FWD(real_cuMemPoolCreate(pool, poolProps));
	model_mem_moved();
	rc = CG_FWD(real_cuMemPoolCreate(pool, poolProps));
	int saved = errno;
	site = cg_site_here(SITE_SKIP);
	if (rc == CUDA_SUCCESS && pool)
		model_pool_new(*pool, poolProps, site);
	if (cg_call_rec(&r, &c, rc)) {
		rec_hex(&r, "pool", rc == CUDA_SUCCESS && pool ? (uintptr_t)*pool : 0);
		if (poolProps) {
			rec_int(&r, "dev", poolProps->location.id);
			rec_u64(&r, "handle_types", poolProps->handleTypes);
		}
		rec_site(&r, "site", site);
		rec_end(&r);
	}
	errno = saved;
	return rc;
}

CUresult cgh_cuMemPoolDestroy(CUmemoryPool pool)
{
	struct cg_call c;
	struct cg_rec r;
	CUresult rc;
	CG_REAL(cuMemPoolDestroy);
	if (!cg_call_begin(&c, HID_cuMemPoolDestroy, CG_CALL_LIFE))
		return CG_FWD(real_cuMemPoolDestroy(pool));
	model_mem_moved();
	rc = CG_FWD(real_cuMemPoolDestroy(pool));
	int saved = errno;
	if (rc == CUDA_SUCCESS)
		model_pool_destroy(pool);
	if (cg_call_rec(&r, &c, rc)) {
		rec_hex(&r, "pool", (uintptr_t)pool);
		rec_end(&r);
	}
	errno = saved;
	return rc;
}

static CUresult pool_get_post(struct cg_call *c, CUresult rc, CUmemoryPool *p, int dev, int is_default)
{
	int saved = errno;
	if (rc == CUDA_SUCCESS && p)
		model_pool_seen(*p, dev, is_default);
	cg_call_end(c, rc);
	errno = saved;
	return rc;
}

CUresult cgh_cuDeviceGetDefaultMemPool(CUmemoryPool *pool_out, CUdevice dev)
{
	struct cg_call c;
	CG_REAL(cuDeviceGetDefaultMemPool);
	if (!cg_call_begin(&c, HID_cuDeviceGetDefaultMemPool, 0))
		return CG_FWD(real_cuDeviceGetDefaultMemPool(pool_out, dev));
	return pool_get_post(&c, CG_FWD(real_cuDeviceGetDefaultMemPool(pool_out, dev)), pool_out, dev, 1);
}

CUresult cgh_cuDeviceGetMemPool(CUmemoryPool *pool, CUdevice dev)
{
	struct cg_call c;
	CG_REAL(cuDeviceGetMemPool);
	if (!cg_call_begin(&c, HID_cuDeviceGetMemPool, 0))
		return CG_FWD(real_cuDeviceGetMemPool(pool, dev));
	return pool_get_post(&c, CG_FWD(real_cuDeviceGetMemPool(pool, dev)), pool, dev, 0);
}

CUresult cgh_cuMemGetDefaultMemPool(CUmemoryPool *pool_out, CUmemLocation *location, CUmemAllocationType type)
{
	struct cg_call c;
	int dev = location && location->type == CU_MEM_LOCATION_TYPE_DEVICE ? location->id : -1;
	CG_REAL(cuMemGetDefaultMemPool);
	if (!cg_call_begin(&c, HID_cuMemGetDefaultMemPool, 0))
		return CG_FWD(real_cuMemGetDefaultMemPool(pool_out, location, type));
	return pool_get_post(&c, CG_FWD(real_cuMemGetDefaultMemPool(pool_out, location, type)), pool_out, dev,
			     dev >= 0);
}

CUresult cgh_cuMemGetMemPool(CUmemoryPool *pool, CUmemLocation *location, CUmemAllocationType type)
{
	struct cg_call c;
	int dev = location && location->type == CU_MEM_LOCATION_TYPE_DEVICE ? location->id : -1;
	CG_REAL(cuMemGetMemPool);
	if (!cg_call_begin(&c, HID_cuMemGetMemPool, 0))
		return CG_FWD(real_cuMemGetMemPool(pool, location, type));
	return pool_get_post(&c, CG_FWD(real_cuMemGetMemPool(pool, location, type)), pool, dev, 0);
}

static CUresult set_pool_post(struct cg_call *c, CUresult rc, int dev, CUmemoryPool pool)
{
	struct cg_rec r;
	int saved = errno;
	uint32_t site = cg_site_here(SITE_SKIP + 1);
	if (rc == CUDA_SUCCESS)
		model_device_set_pool(dev, pool, site);
	if (cg_call_rec(&r, c, rc)) {
		rec_int(&r, "dev", dev);
		rec_hex(&r, "pool", (uintptr_t)pool);
		rec_site(&r, "site", site);
		rec_end(&r);
	}
	errno = saved;
	return rc;
}

CUresult cgh_cuDeviceSetMemPool(CUdevice dev, CUmemoryPool pool)
{
	struct cg_call c;
	CG_REAL(cuDeviceSetMemPool);
	if (!cg_call_begin(&c, HID_cuDeviceSetMemPool, CG_CALL_LIFE))
		return CG_FWD(real_cuDeviceSetMemPool(dev, pool));
	return set_pool_post(&c, CG_FWD(real_cuDeviceSetMemPool(dev, pool)), dev, pool);
}

CUresult cgh_cuMemSetMemPool(CUmemLocation *location, CUmemAllocationType type, CUmemoryPool pool)
{
	struct cg_call c;
	int dev = location && location->type == CU_MEM_LOCATION_TYPE_DEVICE ? location->id : -1;
	CG_REAL(cuMemSetMemPool);
	if (!cg_call_begin(&c, HID_cuMemSetMemPool, CG_CALL_LIFE))
		return CG_FWD(real_cuMemSetMemPool(location, type, pool));
	return set_pool_post(&c, CG_FWD(real_cuMemSetMemPool(location, type, pool)), dev, pool);
}
