/*
 * shim/hooks/graph.c -- graphs and nodes: create, destroy, clone, explicit memory
 * and child nodes, generic node adds (CGS010 for a memory-node graph cloned
 * or made a child).
 * Private to shim/hooks/ (hooks.h): every wrapper forwards the caller's
 * arguments unchanged and returns the driver's result, except where the
 * user asked for a policy.
 */
#define _GNU_SOURCE
#include "hooks.h"

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
	struct cg_verdict v;
	struct cg_summary *s;
	if (!model_graph_info(g, &origin, &cap, &gsite, &mem))
		return 0;
	if (!mem) {
		s = model_graph_summary(g);
		mem = s ? (int)(s->n_alloc + s->n_free) : 0;
		model_summary_free(s);
	}
	struct cg_compose_ev ev = {g, mem, site, gsite, what};
	if (!rules_instantiate_compose(&ev, &v))
		return 0;
	cg_verdict_write(&v, api, 0, SITE_SKIP + 1);
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
		rec_str(&r, "type", p ? rules_update_node_type(p->type) : "?");
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
