/*
 * shim/hooks/graph.c -- graphs and nodes: create, destroy, clone, explicit memory
 * and child nodes, generic node adds (CGS010 for a memory-node graph cloned
 * or made a child).
 * Private to shim/hooks/ (hooks.h): every wrapper forwards the caller's
 * arguments unchanged and returns the driver's result, except where the
 * user asked for a policy.
 */
#define _GNU_SOURCE
#include "../hot.h"
#include "hooks.h"

/* ======================================================================= */
/* graphs and nodes                                                        */
/* ======================================================================= */

/* cuGraphCreate (LIFE): the policy collects retired executables first. */
void cgh_cuGraphCreate_pre(struct cg_call *c, struct cgh_frame *f, CUgraph *phGraph, unsigned int flags)
{
	cg_policy_collect();
}

void cgh_cuGraphCreate_post(struct cg_call *c, struct cgh_frame *f, CUresult rc, CUgraph *phGraph, unsigned int flags)
{
	f->site = cg_site_here(SITE_SKIP_PART);
	if (rc == CUDA_SUCCESS && phGraph)
		model_graph_new(*phGraph, 0, 0, f->site, 0);
}

void cgh_cuGraphCreate_rec(struct cg_rec *r, struct cgh_frame *f, CUresult rc, CUgraph *phGraph, unsigned int flags)
{
	rec_hex(r, "graph", rc == CUDA_SUCCESS && phGraph ? (uintptr_t)*phGraph : 0);
	rec_site(r, "site", f->site);
}

/* The destroy's call record, in a frame of its own (the generated
 * wrappers' cgh_<name>_record: the driver's call stays at the
 * application's stack depth). */
static __attribute__((noinline)) void graph_destroy_record(struct cg_call *c, CUresult rc, CUgraph g)
{
	struct cg_rec r;
	if (cg_call_rec_open(&r, c, rc)) {
		rec_hex(&r, "graph", (uintptr_t)g);
		rec_end(&r);
	}
}

/* CUSTOM: the policy may defer the destroy (a replacement exec runs the
 * graph): the driver is then not called at all. */
CG_HOT CUresult cgh_cuGraphDestroy(CUgraph hGraph)
{
	struct cg_call c;
	CUresult rc;
	CG_REAL(cuGraphDestroy);
	if (cg_ready() && !cg_tls.in_shim)
		model_graph_settle(hGraph); /* execs with a partial summary of it get the full one first */
	if (CG_UNLIKELY(cg_policy_graph_destroy(hGraph))) {
		/* deferred: the replacement exec behind an app handle runs it */
		model_graph_destroy(hGraph);
		errno = cg_errno_in;
		return CUDA_SUCCESS;
	}
	if (!cg_call_begin(&c, HID_cuGraphDestroy, CG_CALL_LIFE))
		return CG_FWD(real_cuGraphDestroy(hGraph));
	CG_FWD_OUT(rc, real_cuGraphDestroy(hGraph));
	if (rc == CUDA_SUCCESS)
		cgh_call_repeat(&c, model_graph_destroy(hGraph));
	if (cg_call_rec_wanted(&c, rc))
		graph_destroy_record(&c, rc, hGraph);
	CG_RETURN(rc);
}

/* Rule CGS010 for clone/child: a graph with memory nodes. skip: the
 * shim's frames above the caller (cg_verdict_write). */
static CGH_FRAMED int memgraph_composition_check(CUgraph g, const char *api, const char *what, uint32_t site, int skip)
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
	cg_verdict_write(&v, api, 0, skip + 1);
	return 1;
}

void cgh_cuGraphClone_pre(struct cg_call *c, struct cgh_frame *f, CUgraph *phGraphClone, CUgraph originalGraph)
{
	f->site = cg_site_here(SITE_SKIP_PART);
	memgraph_composition_check(originalGraph, "cuGraphClone", "cloned", f->site, SITE_SKIP_PART);
	CGH_FRAME_END();
}

void cgh_cuGraphClone_post(struct cg_call *c, struct cgh_frame *f, CUresult rc, CUgraph *phGraphClone,
			   CUgraph originalGraph)
{
	if (rc == CUDA_SUCCESS && phGraphClone)
		model_graph_new(*phGraphClone, 2, 0, f->site, 0);
}

void cgh_cuGraphClone_rec(struct cg_rec *r, struct cgh_frame *f, CUresult rc, CUgraph *phGraphClone,
			  CUgraph originalGraph)
{
	rec_hex(r, "graph", (uintptr_t)originalGraph);
	rec_hex(r, "clone", rc == CUDA_SUCCESS && phGraphClone ? (uintptr_t)*phGraphClone : 0);
	rec_site(r, "site", f->site);
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
	if (!is_free) {
		struct ev_alloc a;
		struct emit_access ac = {acc, nacc};
		model_alloc_graph(&m, NULL, 0, g, api, &a);
		if (acc && nacc)
			a.access = EMIT_ACCESS(&ac);
		emit_alloc(cg_log_life_level(0), &a);
	}
}

void cgh_cuGraphAddMemAllocNode_pre(struct cg_call *c, struct cgh_frame *f, CUgraphNode *phGraphNode, CUgraph hGraph,
				    const CUgraphNode *dependencies, size_t numDependencies,
				    CUDA_MEM_ALLOC_NODE_PARAMS *nodeParams)
{
	model_graph_settle(hGraph);
}

void cgh_cuGraphAddMemAllocNode_post(struct cg_call *c, struct cgh_frame *f, CUresult rc, CUgraphNode *phGraphNode,
				     CUgraph hGraph, const CUgraphNode *dependencies, size_t numDependencies,
				     CUDA_MEM_ALLOC_NODE_PARAMS *nodeParams)
{
	if (rc == CUDA_SUCCESS && nodeParams)
		explicit_mnode(hGraph, nodeParams->dptr, nodeParams->bytesize, 0, cg_site_here(SITE_SKIP_PART),
			       &nodeParams->poolProps, nodeParams->accessDescs, nodeParams->accessDescCount,
			       "cuGraphAddMemAllocNode");
}

void cgh_cuGraphAddMemAllocNode_rec(struct cg_rec *r, struct cgh_frame *f, CUresult rc, CUgraphNode *phGraphNode,
				    CUgraph hGraph, const CUgraphNode *dependencies, size_t numDependencies,
				    CUDA_MEM_ALLOC_NODE_PARAMS *nodeParams)
{
	rec_hex(r, "graph", (uintptr_t)hGraph);
	rec_hex(r, "node", rc == CUDA_SUCCESS && phGraphNode ? (uintptr_t)*phGraphNode : 0);
	if (nodeParams) {
		rec_hex(r, "dptr", rc == CUDA_SUCCESS ? nodeParams->dptr : 0);
		rec_u64(r, "size", nodeParams->bytesize);
	}
}

void cgh_cuGraphAddMemFreeNode_pre(struct cg_call *c, struct cgh_frame *f, CUgraphNode *phGraphNode, CUgraph hGraph,
				   const CUgraphNode *dependencies, size_t numDependencies, CUdeviceptr dptr)
{
	model_graph_settle(hGraph);
}

void cgh_cuGraphAddMemFreeNode_post(struct cg_call *c, struct cgh_frame *f, CUresult rc, CUgraphNode *phGraphNode,
				    CUgraph hGraph, const CUgraphNode *dependencies, size_t numDependencies,
				    CUdeviceptr dptr)
{
	if (rc == CUDA_SUCCESS)
		explicit_mnode(hGraph, dptr, 0, 1, 0, NULL, NULL, 0, "cuGraphAddMemFreeNode");
}

void cgh_cuGraphAddMemFreeNode_rec(struct cg_rec *r, struct cgh_frame *f, CUresult rc, CUgraphNode *phGraphNode,
				   CUgraph hGraph, const CUgraphNode *dependencies, size_t numDependencies,
				   CUdeviceptr dptr)
{
	rec_hex(r, "graph", (uintptr_t)hGraph);
	rec_hex(r, "dptr", dptr);
}

void cgh_cuGraphAddChildGraphNode_pre(struct cg_call *c, struct cgh_frame *f, CUgraphNode *phGraphNode, CUgraph hGraph,
				      const CUgraphNode *dependencies, size_t numDependencies, CUgraph childGraph)
{
	memgraph_composition_check(childGraph, "cuGraphAddChildGraphNode", "used as a child graph (cloned)",
				   cg_site_here(SITE_SKIP_PART), SITE_SKIP_PART);
	model_graph_settle(hGraph);
}

void cgh_cuGraphAddChildGraphNode_post(struct cg_call *c, struct cgh_frame *f, CUresult rc, CUgraphNode *phGraphNode,
				       CUgraph hGraph, const CUgraphNode *dependencies, size_t numDependencies,
				       CUgraph childGraph)
{
	if (rc == CUDA_SUCCESS)
		model_graph_mutated(hGraph);
}

void cgh_cuGraphAddChildGraphNode_rec(struct cg_rec *r, struct cgh_frame *f, CUresult rc, CUgraphNode *phGraphNode,
				      CUgraph hGraph, const CUgraphNode *dependencies, size_t numDependencies,
				      CUgraph childGraph)
{
	rec_hex(r, "graph", (uintptr_t)hGraph);
	rec_hex(r, "child", (uintptr_t)childGraph);
}

/* cuGraphAddNode and _v2 share everything but the edge data. */
static CGH_FRAMED void add_node_pre(CUgraph g, const CUgraphNodeParams *p, const char *api)
{
	if (p && p->type == CU_GRAPH_NODE_TYPE_GRAPH && p->graph.ownership != CU_GRAPH_CHILD_GRAPH_OWNERSHIP_MOVE)
		memgraph_composition_check(p->graph.graph, api, "used as a child graph without ownership move",
					   cg_site_here(SITE_SKIP_PART + 1), SITE_SKIP_PART + 1);
	model_graph_settle(g);
}

static CGH_FRAMED void add_node_post(CUresult rc, CUgraph g, const CUgraphNodeParams *p, const char *api)
{
	if (rc == CUDA_SUCCESS && p) {
		if (p->type == CU_GRAPH_NODE_TYPE_MEM_ALLOC)
			explicit_mnode(g, p->alloc.dptr, p->alloc.bytesize, 0, cg_site_here(SITE_SKIP_PART + 1),
				       &p->alloc.poolProps, p->alloc.accessDescs, p->alloc.accessDescCount, api);
		else if (p->type == CU_GRAPH_NODE_TYPE_MEM_FREE)
			explicit_mnode(g, p->free.dptr, 0, 1, 0, NULL, NULL, 0, api);
		else
			model_graph_mutated(g);
	}
}

static void add_node_rec(struct cg_rec *r, CUresult rc, CUgraphNode *ph, CUgraph g, const CUgraphNodeParams *p)
{
	rec_hex(r, "graph", (uintptr_t)g);
	rec_str(r, "type", p ? rules_update_node_type(p->type) : "?");
	rec_hex(r, "node", rc == CUDA_SUCCESS && ph ? (uintptr_t)*ph : 0);
}

#define ADD_NODE_PARTS(name, params)                                                                                   \
	void cgh_##name##_pre(struct cg_call *c, struct cgh_frame *f, UNPAREN params)                                  \
	{                                                                                                              \
		add_node_pre(hGraph, nodeParams, #name);                                                               \
		CGH_FRAME_END();                                                                                       \
	}                                                                                                              \
	void cgh_##name##_post(struct cg_call *c, struct cgh_frame *f, CUresult rc, UNPAREN params)                    \
	{                                                                                                              \
		add_node_post(rc, hGraph, nodeParams, #name);                                                          \
		CGH_FRAME_END();                                                                                       \
	}                                                                                                              \
	void cgh_##name##_rec(struct cg_rec *r, struct cgh_frame *f, CUresult rc, UNPAREN params)                      \
	{                                                                                                              \
		add_node_rec(r, rc, phGraphNode, hGraph, nodeParams);                                                  \
	}
#define UNPAREN(...) __VA_ARGS__
ADD_NODE_PARTS(cuGraphAddNode, (CUgraphNode * phGraphNode, CUgraph hGraph, const CUgraphNode *dependencies,
				size_t numDependencies, CUgraphNodeParams *nodeParams))
ADD_NODE_PARTS(cuGraphAddNode_v2,
	       (CUgraphNode * phGraphNode, CUgraph hGraph, const CUgraphNode *dependencies,
		const CUgraphEdgeData *dependencyData, size_t numDependencies, CUgraphNodeParams *nodeParams))

/* Both kernel-node ABIs (v1 params before 12.0, v2 after): the model only
 * needs to know that the graph changed. */
#define ADD_KERNEL_NODE_PARTS(name, params_t)                                                                          \
	void cgh_##name##_pre(struct cg_call *c, struct cgh_frame *f, CUgraphNode *phGraphNode, CUgraph hGraph,        \
			      const CUgraphNode *dependencies, size_t numDependencies, const params_t *nodeParams)     \
	{                                                                                                              \
		model_graph_settle(hGraph);                                                                            \
	}                                                                                                              \
	void cgh_##name##_post(struct cg_call *c, struct cgh_frame *f, CUresult rc, CUgraphNode *phGraphNode,          \
			       CUgraph hGraph, const CUgraphNode *dependencies, size_t numDependencies,                \
			       const params_t *nodeParams)                                                             \
	{                                                                                                              \
		if (rc == CUDA_SUCCESS)                                                                                \
			model_graph_mutated(hGraph);                                                                   \
	}
ADD_KERNEL_NODE_PARTS(cuGraphAddKernelNode, CUDA_KERNEL_NODE_PARAMS_v1)
ADD_KERNEL_NODE_PARTS(cuGraphAddKernelNode_v2, CUDA_KERNEL_NODE_PARAMS)

/* An edge added or removed: the graph's summary is stale (a captured graph
 * is walked again at its next need), and while a capture is live it is
 * counted as a capture dependency change (model.h model_deps_change_enter:
 * the capturing graph's edges are no longer its launches' chain). */
static void deps_edit_pre(struct cgh_frame *f, CUgraph g)
{
	model_graph_settle(g);
	f->deps = model_deps_change_enter();
}

static void deps_edit_post(struct cgh_frame *f, CUresult rc, CUgraph g)
{
	model_deps_change_leave(f->deps);
	if (rc == CUDA_SUCCESS)
		model_graph_mutated(g);
}

#define DEPS_EDIT_PARTS(name, params)                                                                                  \
	void cgh_##name##_pre(struct cg_call *c, struct cgh_frame *f, UNPAREN params)                                  \
	{                                                                                                              \
		deps_edit_pre(f, hGraph);                                                                              \
	}                                                                                                              \
	void cgh_##name##_post(struct cg_call *c, struct cgh_frame *f, CUresult rc, UNPAREN params)                    \
	{                                                                                                              \
		deps_edit_post(f, rc, hGraph);                                                                         \
	}
DEPS_EDIT_PARTS(cuGraphAddDependencies,
		(CUgraph hGraph, const CUgraphNode *from, const CUgraphNode *to, size_t numDependencies))
DEPS_EDIT_PARTS(cuGraphAddDependencies_v2, (CUgraph hGraph, const CUgraphNode *from, const CUgraphNode *to,
					    const CUgraphEdgeData *edgeData, size_t numDependencies))
DEPS_EDIT_PARTS(cuGraphRemoveDependencies,
		(CUgraph hGraph, const CUgraphNode *from, const CUgraphNode *to, size_t numDependencies))
DEPS_EDIT_PARTS(cuGraphRemoveDependencies_v2, (CUgraph hGraph, const CUgraphNode *from, const CUgraphNode *to,
					       const CUgraphEdgeData *edgeData, size_t numDependencies))

/* A node destroyed: its graph is not named, so every proof that counted a
 * graph's nodes (the capture tally's no-copy) stops standing. */
void cgh_cuGraphDestroyNode_post(struct cg_call *c, struct cgh_frame *f, CUresult rc, CUgraphNode hNode)
{
	if (rc == CUDA_SUCCESS)
		model_graph_node_destroyed();
}
