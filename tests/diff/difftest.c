/*
 * tests/diff/difftest.c -- differential tester: seeded random sequences of
 * driver and runtime graph calls, one output line per call.
 *
 *   difftest SEED COUNT [nomem|rewrite] [from=I]
 *
 * Runs COUNT sequences; sequence i draws from its own generator seeded by
 * (SEED, i) and starts and ends with no live object, so one difference
 * cannot shift the sequences after it. Every call prints
 *   <seq> <op> rc=<rc> [outputs] errno=<errno>
 * with errno set to a sentinel before the call. Handles are printed by
 * identity class, never by value: a create's output as "new"/"null" (and the
 * tester keeps it in a slot), a handle a query returns as the name of the
 * slot holding that value ("g3", "n5", "e1"), "null", or "other". run.py runs
 * this program bare and under the shim (LD_PRELOAD) with the same arguments
 * and compares the outputs line by line.
 *
 * What it feeds the calls: valid handles, NULL, a garbage value, dangling
 * handles (used right after their destroy, before any other create, so the
 * driver cannot have reused the address), double destroys, and a NULL
 * out-pointer for every hooked call that has one. "nomem" leaves out graph
 * memory nodes (the reinstantiate configuration: a rewrite of a memory-node
 * graph holds its one executable, a documented limit).
 */
#define _GNU_SOURCE
#include <cuda.h>
#include <cudaTypedefs.h>
#include <cuda_runtime_api.h>
#include <dlfcn.h>
#include <errno.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "standin.h"

/* Exact exported names whose cuda.h spelling is a macro for another ABI,
 * or which cuda.h declares only in per-thread mode. */
CUresult dt_cuGraphAddNode(CUgraphNode *, CUgraph, const CUgraphNode *, size_t,
			   CUgraphNodeParams *) __asm__("cuGraphAddNode");
CUresult dt_cuGraphInstantiate_v2(CUgraphExec *, CUgraph, CUgraphNode *, char *,
				  size_t) __asm__("cuGraphInstantiate_v2");
CUresult dt_cuGraphLaunch_ptsz(CUgraphExec, CUstream) __asm__("cuGraphLaunch_ptsz");
CUresult dt_cuGraphUpload_ptsz(CUgraphExec, CUstream) __asm__("cuGraphUpload_ptsz");
CUresult dt_cuGraphExecUpdate(CUgraphExec, CUgraph, CUgraphNode *,
			      CUgraphExecUpdateResult *) __asm__("cuGraphExecUpdate");
CUresult dt_cuStreamGetCaptureInfo(CUstream, CUstreamCaptureStatus *, cuuint64_t *) __asm__("cuStreamGetCaptureInfo");

#define NG 6
#define NE 6
#define NN 8
#define ERRNO_SENTINEL 4242
#define GARBAGE ((void *)(uintptr_t)0x5eed0ba0dULL)

static uint64_t rng;
static unsigned long seq;
static int nomem, rewrite;
static FILE *out;

static uint64_t rnd(void)
{
	/* splitmix64 */
	uint64_t z = (rng += 0x9E3779B97F4A7C15ull);
	z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
	z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
	return z ^ (z >> 31);
}
static int pick(int n)
{
	return (int)(rnd() % (uint64_t)n);
}
static int chance(int pct)
{
	return pick(100) < pct;
}

struct gslot {
	CUgraph h;
	int live, mem;
	int closed; /* no nodes added (a clone of a memory-node graph) */
	CUgraphNode node[NN];
	int n;
};
struct eslot {
	CUgraphExec h;
	int live;
	int src;    /* graph slot it was instantiated from */
	int frozen; /* "rewrite" mode: not used again until the teardown */
};
static struct gslot G[NG];
static struct eslot E[NE];
static CUstream S;
static CUdeviceptr buf;
static CUfunction kfn;
static int capturing;

static void kern(void **params, unsigned long n)
{
	(void)n;
	(*STANDIN_ARG(params, 0, long *))++;
}

/* ---- output ------------------------------------------------------------- */

static char line[512];
static size_t lp;

static void begin(const char *op)
{
	lp = (size_t)snprintf(line, sizeof line, "%lu %s", seq, op);
	errno = ERRNO_SENTINEL;
}
static void add(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static void add(const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	if (lp < sizeof line)
		lp += (size_t)vsnprintf(line + lp, sizeof line - lp, fmt, ap);
	va_end(ap);
}
static void end(int rc, int err)
{
	fprintf(out, "%s rc=%d errno=%d\n", line, rc, err == ERRNO_SENTINEL ? 0 : err);
}
/* One call: CALL(op, expr) evaluates expr with errno at the sentinel. */
#define CALL(rcv, expr)                                                                                                \
	do {                                                                                                           \
		errno = ERRNO_SENTINEL;                                                                                \
		rcv = (int)(expr);                                                                                     \
		err = errno;                                                                                           \
	} while (0)

static const char *hname(const void *h)
{
	static char b[4][16];
	static int k;
	char *o = b[k++ & 3];
	if (!h)
		return "null";
	for (int i = 0; i < NG; i++) {
		if (G[i].live && G[i].h == h) {
			snprintf(o, 16, "g%d", i);
			return o;
		}
		for (int j = 0; j < G[i].n; j++)
			if (G[i].live && G[i].node[j] == h) {
				snprintf(o, 16, "n%d.%d", i, j);
				return o;
			}
	}
	for (int i = 0; i < NE; i++)
		if (E[i].live && E[i].h == h) {
			snprintf(o, 16, "e%d", i);
			return o;
		}
	return "other";
}

/* ---- handle choice -------------------------------------------------------- */

enum { H_VALID, H_NULL, H_GARBAGE };

static int live_graph(void)
{
	int c[NG], n = 0;
	for (int i = 0; i < NG; i++)
		if (G[i].live)
			c[n++] = i;
	return n ? c[pick(n)] : -1;
}
static int free_graph(void)
{
	for (int i = 0; i < NG; i++)
		if (!G[i].live)
			return i;
	return -1;
}
static int live_exec(void)
{
	int c[NE], n = 0;
	for (int i = 0; i < NE; i++)
		if (E[i].live && !E[i].frozen)
			c[n++] = i;
	return n ? c[pick(n)] : -1;
}
static int free_exec(void)
{
	for (int i = 0; i < NE; i++)
		if (!E[i].live)
			return i;
	return -1;
}
/* A graph argument: mostly a live one, else NULL or garbage. */
static CUgraph arg_graph(int *slot)
{
	int k = pick(100);
	*slot = -1;
	if (k < 6)
		return NULL;
	if (k < 10)
		return (CUgraph)GARBAGE;
	*slot = live_graph();
	return *slot >= 0 ? G[*slot].h : NULL;
}
static CUgraphExec arg_exec(int *slot)
{
	int k = pick(100);
	*slot = -1;
	if (k < 5)
		return NULL;
	if (k < 9)
		return (CUgraphExec)GARBAGE;
	*slot = live_exec();
	return *slot >= 0 ? E[*slot].h : NULL;
}

static void kparams(CUDA_KERNEL_NODE_PARAMS *p, void **args)
{
	memset(p, 0, sizeof *p);
	p->func = kfn;
	p->gridDimX = p->gridDimY = p->gridDimZ = 1;
	p->blockDimX = 1 + (unsigned)pick(4);
	p->blockDimY = p->blockDimZ = 1;
	p->kernelParams = args;
}

static size_t deps(int gs, CUgraphNode *d)
{
	size_t n = 0;
	if (gs < 0)
		return 0;
	for (int j = 0; j < G[gs].n && n < 3; j++)
		if (chance(35))
			d[n++] = G[gs].node[j];
	return n;
}

static void graph_forget(int s)
{
	G[s].live = 0;
	G[s].n = 0;
	G[s].mem = 0;
	G[s].closed = 0;
}

/* ---- operations ----------------------------------------------------------- */

static void op_graph_create(void)
{
	int s = free_graph(), rc, err;
	CUgraph g = NULL;
	int nul = chance(5) || s < 0;
	begin("cuGraphCreate");
	CALL(rc, cuGraphCreate(nul ? NULL : &g, 0));
	add(" out=%s", nul ? "-" : g ? "new" : "null");
	end(rc, err);
	if (!nul && rc == 0 && g) {
		G[s].h = g;
		G[s].live = 1;
		G[s].n = 0;
		G[s].mem = 0;
		G[s].closed = 0;
	}
}

static void add_node_common(const char *op, int gs, int rc, int err, CUgraphNode n, int nul, int mem)
{
	add(" out=%s", nul ? "-" : n ? "new" : "null");
	end(rc, err);
	if (!nul && rc == 0 && n && gs >= 0 && G[gs].n < NN) {
		G[gs].node[G[gs].n++] = n;
		G[gs].mem |= mem;
	}
	(void)op;
}

static void op_add_kernel(void)
{
	int gs, rc, err, v = pick(3);
	CUgraph g = arg_graph(&gs);
	CUgraphNode d[3], n = NULL;
	size_t nd = deps(gs, d);
	void *args[] = {&buf, NULL};
	CUDA_KERNEL_NODE_PARAMS p;
	int nul = chance(5), nulp = chance(4);
	kparams(&p, args);
	if (gs >= 0 && (G[gs].n >= NN || G[gs].closed))
		return;
	if (v == 0) {
		begin("cuGraphAddKernelNode_v2");
		add(" g=%s nd=%zu", hname(g), nd);
		CALL(rc, cuGraphAddKernelNode(nul ? NULL : &n, g, d, nd, nulp ? NULL : &p));
	} else if (v == 1) {
		CUgraphNodeParams np;
		memset(&np, 0, sizeof np);
		np.type = CU_GRAPH_NODE_TYPE_KERNEL;
		np.kernel.func = kfn;
		np.kernel.gridDimX = np.kernel.gridDimY = np.kernel.gridDimZ = 1;
		np.kernel.blockDimX = np.kernel.blockDimY = np.kernel.blockDimZ = 1;
		np.kernel.kernelParams = args;
		begin("cuGraphAddNode");
		add(" g=%s nd=%zu", hname(g), nd);
		CALL(rc, dt_cuGraphAddNode(nul ? NULL : &n, g, d, nd, nulp ? NULL : &np));
	} else {
		begin("cuGraphAddEmptyNode");
		add(" g=%s nd=%zu", hname(g), nd);
		CALL(rc, cuGraphAddEmptyNode(nul ? NULL : &n, g, d, nd));
	}
	add_node_common("", gs, rc, err, n, nul, 0);
}

static void op_add_mem(void)
{
	int gs, rc, err;
	CUgraph g = arg_graph(&gs);
	CUgraphNode d[3], n = NULL, fn = NULL;
	size_t nd = deps(gs, d);
	CUDA_MEM_ALLOC_NODE_PARAMS p;
	int nul = chance(5), nulp = chance(4);
	if (nomem || (gs >= 0 && G[gs].n >= NN - 1))
		return;
	memset(&p, 0, sizeof p);
	p.poolProps.allocType = CU_MEM_ALLOCATION_TYPE_PINNED;
	p.poolProps.location.type = CU_MEM_LOCATION_TYPE_DEVICE;
	p.poolProps.location.id = 0;
	p.bytesize = 4096u << pick(3);
	begin("cuGraphAddMemAllocNode");
	add(" g=%s nd=%zu", hname(g), nd);
	CALL(rc, cuGraphAddMemAllocNode(nul ? NULL : &n, g, d, nd, nulp ? NULL : &p));
	add_node_common("", gs, rc, err, n, nul, 1);
	if (rc || nul || !n || gs < 0 || !chance(60))
		return;
	nul = chance(5);
	begin("cuGraphAddMemFreeNode");
	CALL(rc, cuGraphAddMemFreeNode(nul ? NULL : &fn, g, &n, 1, chance(5) ? (CUdeviceptr)0x1000 : p.dptr));
	add_node_common("", gs, rc, err, fn, nul, 1);
}

static void op_add_child(void)
{
	int gs, cs, rc, err;
	CUgraph g = arg_graph(&gs), c = arg_graph(&cs);
	CUgraphNode d[3], n = NULL;
	size_t nd = deps(gs, d);
	int nul = chance(5);
	if ((gs >= 0 && G[gs].n >= NN) || (gs >= 0 && gs == cs))
		return;
	begin("cuGraphAddChildGraphNode");
	add(" g=%s child=%s", hname(g), hname(c));
	CALL(rc, cuGraphAddChildGraphNode(nul ? NULL : &n, g, d, nd, c));
	add_node_common("", gs, rc, err, n, nul, 0);
}

static void op_clone(void)
{
	int gs, s = free_graph(), rc, err;
	CUgraph g = arg_graph(&gs), c = NULL;
	int nul = chance(5) || s < 0;
	begin("cuGraphClone");
	add(" g=%s", hname(g));
	CALL(rc, cuGraphClone(nul ? NULL : &c, g));
	add(" out=%s", nul ? "-" : c ? "new" : "null");
	end(rc, err);
	if (!nul && rc == 0 && c) {
		/* a clone's nodes are other handles: none kept */
		G[s].h = c;
		G[s].live = 1;
		G[s].n = 0;
		G[s].mem = gs >= 0 ? G[gs].mem : 0;
		G[s].closed = G[s].mem;
	}
}

static void op_graph_destroy(void)
{
	int gs, rc, err;
	CUgraph g = arg_graph(&gs);
	begin("cuGraphDestroy");
	add(" g=%s", hname(g));
	CALL(rc, cuGraphDestroy(g));
	end(rc, err);
	if (rc == 0 && gs >= 0) {
		graph_forget(gs);
		/* dangling: a second destroy, or a use, right away */
		int k = pick(4);
		if (k == 0) {
			begin("cuGraphDestroy(again)");
			CALL(rc, cuGraphDestroy(g));
			end(rc, err);
		} else if (k == 1) {
			CUgraph c = NULL;
			begin("cuGraphClone(dangling)");
			CALL(rc, cuGraphClone(&c, g));
			add(" out=%s", c ? "new" : "null");
			end(rc, err);
			if (rc == 0 && c) {
				begin("cuGraphDestroy(clone)");
				CALL(rc, cuGraphDestroy(c));
				end(rc, err);
			}
		} else if (k == 2) {
			CUgraphExec e = NULL;
			begin("cuGraphInstantiateWithFlags(dangling)");
			CALL(rc, cuGraphInstantiateWithFlags(&e, g, 0));
			add(" out=%s", e ? "new" : "null");
			end(rc, err);
			if (rc == 0 && e) {
				begin("cuGraphExecDestroy(of dangling)");
				CALL(rc, cuGraphExecDestroy(e));
				end(rc, err);
			}
		}
	}
}

static void op_instantiate(void)
{
	int gs, s = free_exec(), rc, err, v = pick(5);
	CUgraph g = arg_graph(&gs);
	CUgraphExec e = NULL;
	CUgraphNode en = NULL;
	char log[64];
	int nul = chance(5) || s < 0;
	unsigned long long flags = chance(20) ? CUDA_GRAPH_INSTANTIATE_FLAG_AUTO_FREE_ON_LAUNCH : 0;
	switch (v) {
	case 0:
		begin("cuGraphInstantiate_v2");
		add(" g=%s", hname(g));
		CALL(rc, dt_cuGraphInstantiate_v2(nul ? NULL : &e, g, chance(20) ? NULL : &en, log, sizeof log));
		break;
	case 1:
		begin("cuGraphInstantiateWithFlags");
		add(" g=%s f=%llu", hname(g), flags);
		CALL(rc, cuGraphInstantiateWithFlags(nul ? NULL : &e, g, flags));
		break;
	case 2: {
		CUDA_GRAPH_INSTANTIATE_PARAMS ip;
		int nulp = chance(10);
		memset(&ip, 0, sizeof ip);
		ip.flags = flags;
		begin("cuGraphInstantiateWithParams");
		add(" g=%s f=%llu", hname(g), flags);
		CALL(rc, cuGraphInstantiateWithParams(nul ? NULL : &e, g, nulp ? NULL : &ip));
		add(" res=%d", nulp ? -1 : (int)ip.result_out);
		break;
	}
	default:
		begin("cudaGraphInstantiate");
		add(" g=%s f=%llu", hname(g), flags);
		CALL(rc, cudaGraphInstantiate(nul ? NULL : (cudaGraphExec_t *)&e, g, flags));
		break;
	}
	add(" out=%s", nul ? "-" : e ? "new" : "null");
	end(rc, err);
	if (!nul && rc == 0 && e) {
		E[s].h = e;
		E[s].live = 1;
		E[s].frozen = 0;
		E[s].src = gs;
	}
}

static void op_exec_destroy(void)
{
	int es, rc, err;
	CUgraphExec e = arg_exec(&es);
	begin("cuGraphExecDestroy");
	add(" e=%s", hname(e));
	CALL(rc, cuGraphExecDestroy(e));
	end(rc, err);
	if (rc == 0 && es >= 0) {
		E[es].live = 0;
		int k = pick(3);
		if (k == 0) {
			begin("cuGraphExecDestroy(again)");
			CALL(rc, cuGraphExecDestroy(e));
			end(rc, err);
		} else if (k == 1) {
			begin("cuGraphLaunch(dangling)");
			CALL(rc, cuGraphLaunch(e, S));
			end(rc, err);
		}
	}
}

static void op_launch(void)
{
	int es, rc, err, v = pick(5);
	CUgraphExec e = arg_exec(&es);
	static const char *const names[] = {"cuGraphLaunch", "cuGraphLaunch_ptsz", "cudaGraphLaunch", "cuGraphUpload",
					    "cuGraphUpload_ptsz"};
	begin(names[v]);
	add(" e=%s", hname(e));
	switch (v) {
	case 0:
		CALL(rc, cuGraphLaunch(e, S));
		break;
	case 1:
		CALL(rc, dt_cuGraphLaunch_ptsz(e, S));
		break;
	case 2:
		CALL(rc, cudaGraphLaunch(e, S));
		break;
	case 3:
		CALL(rc, cuGraphUpload(e, S));
		break;
	default:
		CALL(rc, dt_cuGraphUpload_ptsz(e, S));
		break;
	}
	end(rc, err);
}

static void op_update(void)
{
	int es, gs, rc, err, v = pick(3);
	CUgraphExec e = arg_exec(&es);
	CUgraph g = arg_graph(&gs);
	if (v == 0) {
		CUgraphExecUpdateResultInfo info;
		int nul = chance(20);
		memset(&info, 0, sizeof info);
		begin("cuGraphExecUpdate_v2");
		add(" e=%s g=%s", hname(e), hname(g));
		CALL(rc, cuGraphExecUpdate_v2(e, g, nul ? NULL : &info));
		if (!nul)
			/* errorFromNode is a node of the exec's source graph,
			 * which may be gone (its address reused): class only */
			add(" result=%d err=%s from=%s", (int)info.result, hname(info.errorNode),
			    info.errorFromNode ? "set" : "null");
	} else if (v == 1) {
		CUgraphNode en = NULL;
		CUgraphExecUpdateResult res = (CUgraphExecUpdateResult)77;
		int n1 = chance(15), n2 = chance(15);
		begin("cuGraphExecUpdate");
		add(" e=%s g=%s nulls=%d%d", hname(e), hname(g), n1, n2);
		CALL(rc, dt_cuGraphExecUpdate(e, g, n1 ? NULL : &en, n2 ? NULL : &res));
		add(" result=%d err=%s", n2 ? -1 : (int)res, n1 ? "-" : hname(en));
	} else {
		cudaGraphExecUpdateResultInfo info;
		memset(&info, 0, sizeof info);
		begin("cudaGraphExecUpdate");
		add(" e=%s g=%s", hname(e), hname(g));
		CALL(rc, cudaGraphExecUpdate(e, g, &info));
		add(" result=%d err=%s", (int)info.result, hname(info.errorNode));
	}
	end(rc, err);
	/* Under the reinstantiate policy an update the driver refuses (910)
	 * succeeds as a rewrite: from then on the application's exec stands
	 * for the new graph while the bare one is unchanged, a difference
	 * that is asked for. Such an exec (and one updated for real, so that
	 * both runs agree on which) is left alone until the teardown; the
	 * graphs involved go on being used. */
	if (rewrite && es >= 0 && (rc == 0 || rc == 910))
		E[es].frozen = 1;
}

static void op_exec_node(void)
{
	int es, rc, err, v = pick(4);
	CUgraphExec e = arg_exec(&es);
	int gs = es >= 0 && chance(85) ? E[es].src : live_graph();
	CUgraphNode n = gs >= 0 && G[gs].live && G[gs].n ? G[gs].node[pick(G[gs].n)] : (chance(50) ? NULL : GARBAGE);
	void *args[] = {&buf, NULL};
	CUDA_KERNEL_NODE_PARAMS p;
	kparams(&p, args);
	if (v == 0) {
		begin("cuGraphExecKernelNodeSetParams_v2");
		add(" e=%s n=%s", hname(e), hname(n));
		CALL(rc, cuGraphExecKernelNodeSetParams_v2(e, n, chance(5) ? NULL : &p));
		end(rc, err);
	} else if (v == 1) {
		unsigned en = 9;
		int nul = chance(20);
		begin("cuGraphNodeGetEnabled");
		add(" e=%s n=%s", hname(e), hname(n));
		CALL(rc, cuGraphNodeGetEnabled(e, n, nul ? NULL : &en));
		add(" out=%u", nul ? 99 : en);
		end(rc, err);
	} else if (v == 2) {
		begin("cuGraphNodeSetEnabled");
		add(" e=%s n=%s", hname(e), hname(n));
		CALL(rc, cuGraphNodeSetEnabled(e, n, (unsigned)pick(2)));
		end(rc, err);
	} else {
		cuuint64_t f = 77;
		int nul = chance(25);
		begin("cuGraphExecGetFlags");
		add(" e=%s", hname(e));
		CALL(rc, cuGraphExecGetFlags(e, nul ? NULL : &f));
		add(" out=%llu", nul ? 99ull : (unsigned long long)f);
		end(rc, err);
	}
}

static void op_destroy_node(void)
{
	int gs = live_graph(), rc, err;
	CUgraphNode n;
	int j;
	if (gs < 0 || !G[gs].n || G[gs].n >= NN)
		return;
	j = G[gs].n - 1; /* the last: no node depends on it */
	n = G[gs].node[j];
	begin("cuGraphDestroyNode");
	add(" n=%s", hname(n));
	CALL(rc, cuGraphDestroyNode(chance(10) ? NULL : n));
	end(rc, err);
	if (rc == 0)
		G[gs].n--;
}

static void op_capture(void)
{
	int s = free_graph(), rc, err, n = 1 + pick(3), v = pick(3), mem = 0;
	CUgraph g = NULL;
	CUdeviceptr d = 0;
	void *args[] = {&buf, NULL};
	if (s < 0)
		return;
	begin(v == 2 ? "cudaStreamBeginCapture" : "cuStreamBeginCapture_v2");
	if (v == 2)
		CALL(rc, cudaStreamBeginCapture(S, cudaStreamCaptureModeGlobal));
	else
		CALL(rc, cuStreamBeginCapture_v2(S, (CUstreamCaptureMode)pick(3)));
	end(rc, err);
	if (rc)
		return;
	capturing = 1;
	for (int i = 0; i < n; i++) {
		int k = pick(10);
		if (k < 5) {
			begin("cuLaunchKernel");
			CALL(rc, cuLaunchKernel(kfn, 1, 1, 1, 1 + (unsigned)pick(2), 1, 1, 0, S, args, NULL));
		} else if (k < 7 && !nomem && !d) {
			int nul = chance(8);
			begin("cuMemAllocAsync");
			CALL(rc, cuMemAllocAsync(nul ? NULL : &d, 4096, S));
			mem |= rc == 0 && d;
		} else if (k < 8 && d) {
			begin("cuMemFreeAsync");
			CALL(rc, cuMemFreeAsync(d, S));
			d = 0;
		} else if (k < 9) {
			CUstreamCaptureStatus st = (CUstreamCaptureStatus)9;
			cuuint64_t id = 0;
			CUgraph cg = NULL;
			const CUgraphNode *dn = NULL;
			size_t nd = 99;
			int nul = pick(4);
			begin("cuStreamGetCaptureInfo_v3");
			CALL(rc, cuStreamGetCaptureInfo_v3(S, nul == 0 ? NULL : &st, nul == 1 ? NULL : &id,
							   nul == 2 ? NULL : &cg, &dn, NULL, nul == 3 ? NULL : &nd));
			add(" st=%d idset=%d nd=%zu", (int)st, id != 0, nd);
		} else {
			CUstreamCaptureStatus st = (CUstreamCaptureStatus)9;
			int nul = chance(25);
			begin("cuStreamIsCapturing");
			CALL(rc, cuStreamIsCapturing(S, nul ? NULL : &st));
			add(" st=%d", (int)st);
		}
		end(rc, err);
	}
	{
		int nul = chance(4);
		begin(v == 2 ? "cudaStreamEndCapture" : "cuStreamEndCapture");
		if (v == 2)
			CALL(rc, cudaStreamEndCapture(S, nul ? NULL : (cudaGraph_t *)&g));
		else
			CALL(rc, cuStreamEndCapture(S, nul ? NULL : &g));
		add(" out=%s", nul ? "-" : g ? "new" : "null");
		end(rc, err);
		if (nul && rc) {
			/* the capture may still be live: end it for real */
			begin("cuStreamEndCapture(retry)");
			CALL(rc, cuStreamEndCapture(S, &g));
			add(" out=%s", g ? "new" : "null");
			end(rc, err);
		}
	}
	capturing = 0;
	if (rc == 0 && g) {
		G[s].h = g;
		G[s].live = 1;
		G[s].mem = mem;
		G[s].closed = 0;
		G[s].n = 0;
		size_t nn = NN;
		CUgraphNode nodes[NN * 4];
		nn = NN * 4;
		if (cuGraphGetNodes(g, nodes, &nn) == 0) {
			for (size_t i = 0; i < nn && i < NN; i++)
				G[s].node[G[s].n++] = nodes[i];
		}
		if (mem)
			G[s].n = G[s].n < NN ? G[s].n : NN;
	}
}

/* Calls with a NULL (or otherwise bad) out-pointer or argument that the
 * shim's hand-written hooks look at. */
static void op_misc(void)
{
	int rc, err, k = pick(12);
	switch (k) {
	case 0: {
		begin("cuMemAlloc_v2(NULL)");
		CALL(rc, cuMemAlloc_v2(NULL, 64));
		break;
	}
	case 1: {
		CUdeviceptr d = 0;
		begin("cuMemAllocAsync");
		CALL(rc, cuMemAllocAsync(chance(30) ? NULL : &d, 64, S));
		add(" out=%s", d ? "set" : "null");
		end(rc, err);
		if (rc == 0 && d) {
			begin("cuMemFreeAsync");
			CALL(rc, cuMemFreeAsync(d, S));
			end(rc, err);
			if (chance(30)) {
				begin("cuMemFreeAsync(again)");
				CALL(rc, cuMemFreeAsync(d, S));
			} else
				return;
		} else
			return;
		break;
	}
	case 2: {
		CUmemoryPool p = NULL;
		int nul = chance(30);
		begin("cuDeviceGetDefaultMemPool");
		CALL(rc, cuDeviceGetDefaultMemPool(nul ? NULL : &p, chance(10) ? 7 : 0));
		add(" out=%s", p ? "set" : "null");
		break;
	}
	case 3: {
		CUmemoryPool p = NULL;
		begin("cuDeviceGetMemPool");
		CALL(rc, cuDeviceGetMemPool(chance(30) ? NULL : &p, 0));
		add(" out=%s", p ? "set" : "null");
		break;
	}
	case 4: {
		CUmemoryPool p = NULL;
		CUmemPoolProps pp;
		memset(&pp, 0, sizeof pp);
		pp.allocType = CU_MEM_ALLOCATION_TYPE_PINNED;
		pp.location.type = CU_MEM_LOCATION_TYPE_DEVICE;
		begin("cuMemPoolCreate");
		CALL(rc, cuMemPoolCreate(chance(20) ? NULL : &p, chance(10) ? NULL : &pp));
		add(" out=%s", p ? "new" : "null");
		end(rc, err);
		if (rc == 0 && p) {
			begin("cuMemPoolDestroy");
			CALL(rc, cuMemPoolDestroy(p));
			end(rc, err);
			if (chance(30)) {
				begin("cuMemPoolDestroy(again)");
				CALL(rc, cuMemPoolDestroy(p));
			} else
				return;
		} else
			return;
		break;
	}
	case 5: {
		begin("cuThreadExchangeStreamCaptureMode(NULL)");
		CALL(rc, cuThreadExchangeStreamCaptureMode(NULL));
		break;
	}
	case 6: {
		begin("cuStreamEndCapture(not capturing)");
		CUgraph g = NULL;
		CALL(rc, cuStreamEndCapture(S, chance(50) ? NULL : &g));
		add(" out=%s", g ? "new" : "null");
		break;
	}
	case 7: {
		void *pfn = NULL;
		CUdriverProcAddressQueryResult st = (CUdriverProcAddressQueryResult)9;
		static const char *const names[] = {"cuGraphLaunch", "cuNoSuchCall", "cuGraphExecUpdate", ""};
		const char *nm = names[pick(4)];
		int nul = chance(20);
		begin("cuGetProcAddress_v2");
		add(" %s", nm);
		CALL(rc,
		     cuGetProcAddress_v2(nm, nul ? NULL : &pfn, 12000 + 10 * pick(100), 0, chance(30) ? NULL : &st));
		add(" out=%s st=%d", pfn ? "set" : "null", (int)st);
		break;
	}
	case 8: {
		begin("cuMemFree_v2(garbage)");
		CALL(rc, cuMemFree_v2((CUdeviceptr)0x1234));
		break;
	}
	case 9: {
		begin("cuStreamSynchronize");
		CALL(rc, cuStreamSynchronize(chance(20) ? (CUstream)GARBAGE : S));
		break;
	}
	case 10: {
		CUmemoryPool p = NULL;
		CUmemLocation loc = {CU_MEM_LOCATION_TYPE_DEVICE, 0};
		begin("cuMemGetDefaultMemPool");
		CALL(rc, cuMemGetDefaultMemPool(chance(30) ? NULL : &p, chance(10) ? NULL : &loc,
						CU_MEM_ALLOCATION_TYPE_PINNED));
		add(" out=%s", p ? "set" : "null");
		break;
	}
	default: {
		CUstreamCaptureStatus st = (CUstreamCaptureStatus)9;
		cuuint64_t id = 0;
		begin("cuStreamGetCaptureInfo");
		CALL(rc, dt_cuStreamGetCaptureInfo(S, chance(30) ? NULL : &st, chance(30) ? NULL : &id));
		add(" st=%d", (int)st);
		break;
	}
	}
	end(rc, err);
}

/* Every other hooked entry point, by its exact exported name (the global
 * scope gives the shim's wrapper under the preload, the driver's bare), with
 * a NULL out-pointer, NULL parameters or a garbage handle. */
typedef CUresult (*pfn_begin1)(CUstream); /* legacy typedefs cuda.h hides */
typedef CUresult (*pfn_instantiate5)(CUgraphExec *, CUgraph, CUgraphNode *, char *, size_t);

static void *sym(const char *n)
{
	return dlsym(RTLD_DEFAULT, n);
}
#define SYM(T, n) ((T)sym(n))

static void op_sweep(void)
{
	int rc = 0, err = 0, k = pick(42), es;
	CUgraphExec e = arg_exec(&es);
	int gs = live_graph();
	CUgraph g = gs >= 0 ? G[gs].h : NULL;
	CUgraphNode n = gs >= 0 && G[gs].n ? G[gs].node[0] : NULL;
	CUgraphExec ne = NULL;
	CUgraphNode nn = NULL;
	CUmemoryPool pool = NULL;
	CUstreamCaptureStatus st = (CUstreamCaptureStatus)9;
	cuuint64_t id = 0, v64 = 0;
	void *pfn = NULL;
	const char *name = "?";
#define SW(nm, T, args)                                                                                                \
	do {                                                                                                           \
		T f_ = SYM(T, nm);                                                                                     \
		name = nm;                                                                                             \
		begin(nm);                                                                                             \
		if (!f_) {                                                                                             \
			add(" absent");                                                                                \
			end(-1, ERRNO_SENTINEL);                                                                       \
			return;                                                                                        \
		}                                                                                                      \
		CALL(rc, f_ args);                                                                                     \
	} while (0)
	switch (k) {
	case 0:
		SW("cuGetProcAddress", PFN_cuGetProcAddress_v11030,
		   ("cuGraphLaunch", chance(50) ? NULL : &pfn, 12000, 0));
		add(" out=%s", pfn ? "set" : "null");
		break;
	case 1:
		SW("cuGraphAddNode_v2", PFN_cuGraphAddNode_v12030, (chance(50) ? NULL : &nn, g, NULL, NULL, 0, NULL));
		add(" out=%s", nn ? "new" : "null");
		break;
	case 2:
		SW("cuGraphInstantiate", pfn_instantiate5, (NULL, g, NULL, NULL, 0));
		break;
	case 3: {
		CUDA_GRAPH_INSTANTIATE_PARAMS ip;
		memset(&ip, 0, sizeof ip);
		SW("cuGraphInstantiateWithParams_ptsz", PFN_cuGraphInstantiateWithParams_v12000_ptsz,
		   (chance(50) ? NULL : &ne, chance(50) ? (CUgraph)GARBAGE : NULL, &ip));
		add(" out=%s", ne ? "new" : "null");
		if (rc == 0 && ne)
			cuGraphExecDestroy(ne);
		break;
	}
	case 4:
		SW("cuStreamEndCapture_ptsz", PFN_cuStreamEndCapture_v10000_ptsz, (S, NULL));
		break;
	case 5:
		SW("cuStreamIsCapturing_ptsz", PFN_cuStreamIsCapturing_v10000_ptsz, (S, chance(50) ? NULL : &st));
		add(" st=%d", (int)st);
		break;
	case 6: {
		CUgraph cg = NULL;
		const CUgraphNode *dn = NULL;
		size_t nd = 99;
		SW("cuStreamGetCaptureInfo_v2", PFN_cuStreamGetCaptureInfo_v11030,
		   (S, chance(50) ? NULL : &st, chance(50) ? NULL : &id, &cg, &dn, chance(50) ? NULL : &nd));
		add(" st=%d nd=%zu", (int)st, nd);
		break;
	}
	case 7: {
		CUdeviceptr d = 0;
		SW("cuMemAllocFromPoolAsync", PFN_cuMemAllocFromPoolAsync_v11020,
		   (chance(50) ? NULL : &d, 64, chance(50) ? (CUmemoryPool)GARBAGE : NULL, S));
		add(" out=%s", d ? "set" : "null");
		break;
	}
	case 8: {
		CUmemLocation loc = {CU_MEM_LOCATION_TYPE_DEVICE, 0};
		SW("cuMemGetMemPool", PFN_cuMemGetMemPool_v13000,
		   (chance(50) ? NULL : &pool, chance(50) ? NULL : &loc, CU_MEM_ALLOCATION_TYPE_PINNED));
		add(" out=%s", pool ? "set" : "null");
		break;
	}
	case 9:
		SW("cuDeviceGetGraphMemAttribute", PFN_cuDeviceGetGraphMemAttribute_v11040,
		   (0, CU_GRAPH_MEM_ATTR_USED_MEM_CURRENT, chance(50) ? NULL : &v64));
		break;
	case 10: {
		CUdeviceptr d = 0;
		SW("cuMemAllocAsync_ptsz", PFN_cuMemAllocAsync_v11020_ptsz, (chance(50) ? NULL : &d, 64, S));
		add(" out=%s", d ? "set" : "null");
		if (rc == 0 && d)
			cuMemFreeAsync(d, S);
		break;
	}
	case 11:
		SW("cuStreamBeginCaptureToGraph", PFN_cuStreamBeginCaptureToGraph_v12030,
		   (S, chance(50) ? NULL : (CUgraph)GARBAGE, NULL, NULL, 0, CU_STREAM_CAPTURE_MODE_GLOBAL));
		break;
	case 12:
		SW("cuDeviceSetMemPool", PFN_cuDeviceSetMemPool_v11020, (0, chance(50) ? NULL : (CUmemoryPool)GARBAGE));
		break;
	case 13:
		SW("cuMemSetMemPool", PFN_cuMemSetMemPool_v13000,
		   (NULL, CU_MEM_ALLOCATION_TYPE_PINNED, (CUmemoryPool)GARBAGE));
		break;
	case 14:
		SW("cuDeviceSetGraphMemAttribute", PFN_cuDeviceSetGraphMemAttribute_v11040,
		   (0, CU_GRAPH_MEM_ATTR_USED_MEM_HIGH, chance(50) ? NULL : &v64));
		break;
	case 15:
		SW("cuMemPoolSetAttribute", PFN_cuMemPoolSetAttribute_v11020,
		   (chance(50) ? NULL : (CUmemoryPool)GARBAGE, CU_MEMPOOL_ATTR_RELEASE_THRESHOLD,
		    chance(50) ? NULL : &v64));
		break;
	case 16:
		SW("cuMemPoolTrimTo", PFN_cuMemPoolTrimTo_v11020, (chance(50) ? NULL : (CUmemoryPool)GARBAGE, 0));
		break;
	case 17:
		SW("cuEventRecord_ptsz", PFN_cuEventRecord_v7000_ptsz, (chance(50) ? NULL : (CUevent)GARBAGE, S));
		break;
	case 18:
		SW("cuStreamWaitEvent_ptsz", PFN_cuStreamWaitEvent_v7000_ptsz,
		   (S, chance(50) ? NULL : (CUevent)GARBAGE, 0));
		break;
	case 19:
		SW("cuStreamUpdateCaptureDependencies", PFN_cuStreamUpdateCaptureDependencies_v11030, (S, NULL, 0, 0));
		break;
	case 20:
		SW("cuCtxSynchronize", PFN_cuCtxSynchronize_v2000, ());
		break;
	case 21:
		SW("cuStreamSynchronize_ptsz", PFN_cuStreamSynchronize_v7000_ptsz,
		   (chance(50) ? S : (CUstream)GARBAGE));
		break;
	case 22:
		SW("cuGraphExecChildGraphNodeSetParams", PFN_cuGraphExecChildGraphNodeSetParams_v11010,
		   (e, n, chance(50) ? NULL : (CUgraph)GARBAGE));
		break;
	case 23:
		SW("cuGraphExecMemsetNodeSetParams", PFN_cuGraphExecMemsetNodeSetParams_v10020, (e, n, NULL, NULL));
		break;
	case 24:
		SW("cuGraphExecMemcpyNodeSetParams", PFN_cuGraphExecMemcpyNodeSetParams_v10020, (e, n, NULL, NULL));
		break;
	case 25:
		SW("cuGraphExecHostNodeSetParams", PFN_cuGraphExecHostNodeSetParams_v10020, (e, n, NULL));
		break;
	case 26:
		SW("cuGraphExecEventRecordNodeSetEvent", PFN_cuGraphExecEventRecordNodeSetEvent_v11010,
		   (e, n, (CUevent)GARBAGE));
		break;
	case 27:
		SW("cuGraphExecEventWaitNodeSetEvent", PFN_cuGraphExecEventWaitNodeSetEvent_v11010, (e, n, NULL));
		break;
	case 28:
		SW("cuGraphExecNodeSetParams", PFN_cuGraphExecNodeSetParams_v12020, (e, n, NULL));
		break;
	case 29:
		SW("cuStreamBeginCapture", pfn_begin1, (chance(50) ? NULL : (CUstream)GARBAGE));
		break;
	case 30:
		SW("cuStreamBeginCapture_ptsz", pfn_begin1, ((CUstream)GARBAGE));
		break;
	case 31:
		SW("cuStreamBeginCapture_v2_ptsz", PFN_cuStreamBeginCapture_v10010_ptsz,
		   ((CUstream)GARBAGE, CU_STREAM_CAPTURE_MODE_RELAXED));
		break;
	case 32:
		SW("cuStreamBeginCaptureToGraph_ptsz", PFN_cuStreamBeginCaptureToGraph_v12030_ptsz,
		   (S, NULL, NULL, NULL, 0, CU_STREAM_CAPTURE_MODE_GLOBAL));
		break;
	case 33:
		SW("cuStreamGetCaptureInfo_ptsz", PFN_cuStreamGetCaptureInfo_v10010_ptsz,
		   (S, chance(50) ? NULL : &st, chance(50) ? NULL : &id));
		add(" st=%d", (int)st);
		break;
	case 34: {
		size_t nd = 99;
		SW("cuStreamGetCaptureInfo_v3_ptsz", PFN_cuStreamGetCaptureInfo_v12030_ptsz,
		   (S, chance(50) ? NULL : &st, NULL, NULL, NULL, NULL, chance(50) ? NULL : &nd));
		add(" st=%d nd=%zu", (int)st, nd);
		break;
	}
	case 35:
		SW("cuStreamUpdateCaptureDependencies_v2", PFN_cuStreamUpdateCaptureDependencies_v12030,
		   (S, NULL, NULL, 0, 0));
		break;
	case 36:
		SW("cuEventRecord", PFN_cuEventRecord_v2000, (chance(50) ? NULL : (CUevent)GARBAGE, S));
		break;
	case 37:
		SW("cuStreamWaitEvent", PFN_cuStreamWaitEvent_v3020, (S, chance(50) ? NULL : (CUevent)GARBAGE, 0));
		break;
	case 38: {
		CUdeviceptr d = 0;
		SW("cuMemAllocFromPoolAsync_ptsz", PFN_cuMemAllocFromPoolAsync_v11020_ptsz,
		   (chance(50) ? NULL : &d, 64, (CUmemoryPool)GARBAGE, S));
		break;
	}
	case 39:
		SW("cuMemFreeAsync_ptsz", PFN_cuMemFreeAsync_v11020_ptsz, ((CUdeviceptr)0x1234, S));
		break;
	case 40:
		SW("cuDeviceGraphMemTrim", PFN_cuDeviceGraphMemTrim_v11040, (chance(50) ? 0 : 7));
		break;
	default: {
		void *args[] = {&buf, NULL};
		CUDA_KERNEL_NODE_PARAMS p;
		kparams(&p, args);
		SW("cuGraphExecKernelNodeSetParams", PFN_cuGraphExecKernelNodeSetParams_v10010,
		   (e, n, chance(30) ? NULL : (CUDA_KERNEL_NODE_PARAMS_v1 *)&p));
		break;
	}
	}
#undef SW
	(void)name;
	end(rc, err);
}

static void teardown(void)
{
	int rc, err;
	for (int i = 0; i < NE; i++)
		if (E[i].live) {
			begin("end:cuGraphExecDestroy");
			add(" e=%s", hname(E[i].h));
			CALL(rc, cuGraphExecDestroy(E[i].h));
			end(rc, err);
			E[i].live = 0;
		}
	for (int i = 0; i < NG; i++)
		if (G[i].live) {
			begin("end:cuGraphDestroy");
			add(" g=%s", hname(G[i].h));
			CALL(rc, cuGraphDestroy(G[i].h));
			end(rc, err);
			graph_forget(i);
		}
}

static void sequence(uint64_t seed, unsigned long i, int len)
{
	rng = seed ^ (0xA24BAED4963EE407ull * (i + 1));
	seq = i;
	for (int k = 0; k < len; k++) {
		int o = pick(100);
		if (o < 8)
			op_graph_create();
		else if (o < 26)
			op_add_kernel();
		else if (o < 31)
			op_add_mem();
		else if (o < 34)
			op_add_child();
		else if (o < 38)
			op_clone();
		else if (o < 43)
			op_graph_destroy();
		else if (o < 55)
			op_instantiate();
		else if (o < 60)
			op_exec_destroy();
		else if (o < 68)
			op_launch();
		else if (o < 80)
			op_update();
		else if (o < 86)
			op_exec_node();
		else if (o < 88)
			op_destroy_node();
		else if (o < 93)
			op_capture();
		else if (o < 97)
			op_misc();
		else
			op_sweep();
	}
	teardown();
}

int main(int argc, char **argv)
{
	static char obuf[1 << 16];
	uint64_t seed;
	unsigned long n, first = 0;
	int len = 30;
	CUdevice dev;
	CUcontext ctx;
	if (argc < 3) {
		fprintf(stderr, "usage: difftest SEED COUNT [nomem|rewrite] [from=I]\n");
		return 2;
	}
	seed = strtoull(argv[1], NULL, 0);
	n = strtoul(argv[2], NULL, 0);
	/* "nomem": no memory nodes; "rewrite": nomem, and an exec is frozen
	 * after an update that succeeds or fails with 910; "from=I": start at
	 * sequence I (a long run in chunks: the stand-in slows down as a
	 * process accumulates driver state) */
	for (int a = 3; a < argc; a++) {
		if (!strcmp(argv[a], "rewrite"))
			rewrite = nomem = 1;
		else if (!strcmp(argv[a], "nomem"))
			nomem = 1;
		else if (!strncmp(argv[a], "from=", 5))
			first = strtoul(argv[a] + 5, NULL, 0);
	}
	out = stdout;
	setvbuf(out, obuf, _IOFBF, sizeof obuf);
	kfn = (CUfunction)(void *)kern;
	if (cuInit(0) || cuDeviceGet(&dev, 0) || cuDevicePrimaryCtxRetain(&ctx, dev) || cuCtxSetCurrent(ctx) ||
	    cuStreamCreate(&S, 0) || cuMemAlloc_v2(&buf, 64) || cudaFree(NULL)) {
		fprintf(stderr, "difftest: set-up failed\n");
		return 2;
	}
	for (unsigned long i = first; i < first + n; i++)
		sequence(seed, i, len);
	fprintf(out, "done %lu\n", n);
	fflush(out);
	return 0;
}
