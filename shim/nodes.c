/*
 * shim/nodes.c -- node details (nodes.h): kernel names, launch shapes,
 * parameter layout and values; memcpy and memset operands.
 *
 * Every query here is made by the shim for itself (driver-calls.def) and is
 * capture-safe: cuGraph*NodeGetParams read a node, cuFuncGetName /
 * cuKernelGetName / cuFuncGetParamInfo / cuKernelGetParamInfo read a loaded
 * function; none enqueues stream work or synchronises. Called from the
 * graph walk only, never from the launch path.
 */
#include <pthread.h>
#include <stdio.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

#include "cgshim/record.h"
#include "hot.h"
#include "model.h"
#include "ledger.h"
#include "locks.h"
#include "nodes.h"
#include "nodes-int.h"
#include "resolve.h"

/* ---- interned kernel names ------------------------------------------- */
/* The driver's name string lives as long as its module; the shim keeps its
 * own copy, once per distinct name, for the life of the process (bounded by
 * the number of distinct kernels the process puts in graphs; past
 * NAME_SLOTS names a node's name is left unknown). */
#define NAME_SLOTS 8192
static const char *names[NAME_SLOTS];
/* names_lock (locks.h): names[], mods[] and fn_tab[] */

static const char *nodes_intern(const char *s)
{
	uint64_t h = 1469598103934665603ull;
	const char *out = NULL;
	if (!s)
		return NULL;
	for (const char *c = s; *c; c++)
		h = (h ^ (unsigned char)*c) * 1099511628211ull;
	pthread_mutex_lock(&names_lock);
	for (size_t k = 0, i = h & (NAME_SLOTS - 1); k < NAME_SLOTS / 2; k++, i = (i + 1) & (NAME_SLOTS - 1)) {
		if (!names[i]) {
			names[i] = strdup(s);
			out = names[i];
			break;
		}
		if (!strcmp(names[i], s)) {
			out = names[i];
			break;
		}
	}
	pthread_mutex_unlock(&names_lock);
	return out;
}

/* ---- module contexts --------------------------------------------------
 * A function's context has no driver query, and an update to a function of
 * another context is refused (910, UnsupportedFunctionChange; one of
 * another module of the same context is accepted: docs/update-refusals.md).
 * So the hooked cuModuleLoad* calls note the context current at the load,
 * under names_lock; past MOD_SLOTS live modules a module's context is left
 * unknown and such an update is left to the driver's answer. */
#define MOD_SLOTS 1024
static struct {
	uint64_t mod, ctx;
} mods[MOD_SLOTS];

void nodes_module_loaded(CUmodule m)
{
	CUcontext ctx = NULL;
	int free_i = -1;
	if (!m || !drv_cuCtxGetCurrent || drv_cuCtxGetCurrent(&ctx) != CUDA_SUCCESS || !ctx)
		return;
	pthread_mutex_lock(&names_lock);
	for (int i = 0; i < MOD_SLOTS; i++) {
		if (mods[i].mod == (uint64_t)(uintptr_t)m) {
			free_i = i;
			break;
		}
		if (!mods[i].mod && free_i < 0)
			free_i = i;
	}
	if (free_i >= 0)
		mods[free_i].mod = (uint64_t)(uintptr_t)m, mods[free_i].ctx = (uint64_t)(uintptr_t)ctx;
	pthread_mutex_unlock(&names_lock);
}

/* The module's functions are forgotten with it (fn_tab, below). */
static void nodes_fn_module_gone_locked(uint64_t m);

/* Unloads so far (nodes_unloads). */
static _Atomic unsigned unloads;

unsigned nodes_unloads(void)
{
	return atomic_load_explicit(&unloads, memory_order_relaxed);
}

void nodes_module_unloaded(CUmodule m)
{
	atomic_fetch_add_explicit(&unloads, 1, memory_order_relaxed);
	pthread_mutex_lock(&names_lock);
	for (int i = 0; m && i < MOD_SLOTS; i++)
		if (mods[i].mod == (uint64_t)(uintptr_t)m)
			mods[i].mod = 0, mods[i].ctx = 0;
	if (m)
		nodes_fn_module_gone_locked((uint64_t)(uintptr_t)m);
	pthread_mutex_unlock(&names_lock);
}

/* Under names_lock. */
static uint64_t nodes_module_ctx_locked(uint64_t m)
{
	for (int i = 0; m && i < MOD_SLOTS; i++)
		if (mods[i].mod == m)
			return mods[i].ctx;
	return 0;
}

/* ---- kernel nodes ----------------------------------------------------- */
/* Parameter i of the function (or library kernel): offset and size.
 * Returns the driver's answer; 500 when neither query exists. */
static CG_HOT CUresult nodes_param_info(CUfunction f, CUkernel k, size_t i, size_t *off, size_t *size)
{
	if (f && drv_cuFuncGetParamInfo)
		return drv_cuFuncGetParamInfo(f, i, off, size);
	if (k && drv_cuKernelGetParamInfo)
		return drv_cuKernelGetParamInfo(k, i, off, size);
	return CUDA_ERROR_NOT_FOUND;
}

/* Parameters beyond this many are not asked about (a kernel has at most
 * 32764 bytes of parameters; this bounds the walk, not the memory). */
#define MAX_ASK 1024

/* What a function is, asked once per function handle (a graph of a
 * thousand nodes runs a few dozen kernels): name, module, parameter
 * layout. A handle dies with its module or library, and the driver hands
 * the same address to a later module's function (JAX unloads and loads
 * executables all the time; a layout kept past the unload read past the
 * new function's kernelParams: issue 30). So an entry is asked again
 *   - after a hooked cuModuleUnload of its module (stale), or any hooked
 *     cuLibraryUnload (fn_gen: a CUkernel's library has no query the shim
 *     may count on);
 *   - whenever the driver's answer for the handle disagrees with it:
 *     before a node's parameters are read, the driver confirms the count
 *     (nodes_fn_check), so an unload the shim does not see (the runtime's
 *     own, a destroyed context) cannot make a walk read past the array.
 * A second disagreement marks the entry bad: its nodes are not described,
 * one warning says so. Entries are reference counted (a walk holds one
 * while it reads the layout); one taken out of fn_tab is freed by its last
 * holder. Past FN_SLOTS functions the driver is asked every time. */
#define FN_SLOTS 4096
struct fn_ent {
	uint64_t func;
	uint64_t seq; /* unique per entry (the per-walk memo) */
	const char *name;
	uint64_t module;
	uint64_t mctx; /* the module's context when a hooked load saw it, else 0 */
	int np;	       /* -1: layout unknown */
	uint32_t *lay; /* np (offset, size) pairs */
	unsigned gen;  /* fn_gen when asked */
	int refs;      /* holders, under names_lock */
	uint8_t dead;  /* out of fn_tab: freed at refs 0 */
	uint8_t stale; /* its module was unloaded */
	uint8_t bad;   /* the driver disagreed twice: not described (atomic: read unlocked) */
	uint8_t trunc; /* more than MAX_ASK parameters: the first MAX_ASK kept */
	uint8_t kern;  /* asked as a library kernel (CUkernel queries) */
	uint8_t wide;  /* a parameter of more than 8 bytes */
};
static struct fn_ent *fn_tab[FN_SLOTS];
static unsigned fn_gen; /* under names_lock */
static uint64_t fn_seq; /* under names_lock */
static int fn_warned;	/* under names_lock: warnings written (at most FN_WARN_MAX) */
#define FN_WARN_MAX 8

static struct fn_ent *nodes_fn_ask(CUfunction f, CUkernel k, unsigned gen)
{
	struct fn_ent *e = calloc(1, sizeof *e);
	uint32_t lay_small[2 * 64], *lay = lay_small;
	size_t cap = 64, i;
	const char *nm = NULL;
	CUresult rc = CUDA_SUCCESS;
	if (!e)
		return NULL;
	e->func = f ? (uint64_t)(uintptr_t)f : (uint64_t)(uintptr_t)k;
	e->kern = !f;
	e->gen = gen;
	e->refs = 1;
	if (f && drv_cuFuncGetModule) {
		CUmodule m = NULL;
		if (drv_cuFuncGetModule(&m, f) == CUDA_SUCCESS)
			e->module = (uint64_t)(uintptr_t)m;
	}
	if (e->module) { /* once per function: a walk asks per node (a scan per node cost 19% of a 64-node capture) */
		pthread_mutex_lock(&names_lock);
		e->mctx = nodes_module_ctx_locked(e->module);
		pthread_mutex_unlock(&names_lock);
	}
	if (f && drv_cuFuncGetName && drv_cuFuncGetName(&nm, f) == CUDA_SUCCESS)
		e->name = nodes_intern(nm);
	else if (!f && k && drv_cuKernelGetName && drv_cuKernelGetName(&nm, k) == CUDA_SUCCESS)
		e->name = nodes_intern(nm);
	for (i = 0; i < MAX_ASK; i++) {
		size_t off = 0, size = 0;
		rc = nodes_param_info(f, f ? NULL : k, i, &off, &size);
		if (rc != CUDA_SUCCESS)
			break;
		if (i == cap) {
			uint32_t *g = malloc(4 * cap * sizeof *g);
			if (!g)
				break;
			memcpy(g, lay, 2 * cap * sizeof *g);
			if (lay != lay_small)
				free(lay);
			lay = g;
			cap *= 2;
		}
		lay[2 * i] = (uint32_t)off;
		lay[2 * i + 1] = (uint32_t)size;
	}
	/* Past the last parameter the driver answers INVALID_VALUE; anything
	 * else on the first one (no such query, a function it cannot
	 * describe) leaves the layout unknown. */
	e->np = !i && rc != CUDA_ERROR_INVALID_VALUE ? -1 : (int)i;
	for (size_t j = 0; j < i; j++)
		e->wide |= lay[2 * j + 1] > 8;
	e->trunc = i == MAX_ASK;
	if (e->np > 0) {
		e->lay = malloc(2 * (size_t)e->np * sizeof *e->lay);
		if (e->lay)
			memcpy(e->lay, lay, 2 * (size_t)e->np * sizeof *e->lay);
		else
			e->np = -1;
	}
	if (lay != lay_small)
		free(lay);
	return e;
}

/* Under names_lock: e leaves fn_tab (or never entered it). */
static void nodes_fn_drop_locked(struct fn_ent *e)
{
	e->dead = 1;
	if (!e->refs) {
		free(e->lay);
		free(e);
	}
}

/* Give back an entry from nodes_fn_get. */
static void nodes_fn_put(struct fn_ent *e)
{
	pthread_mutex_lock(&names_lock);
	if (--e->refs == 0 && e->dead) {
		free(e->lay);
		free(e);
	}
	pthread_mutex_unlock(&names_lock);
}

/* A handle's home slot in a table of slots (a power of two): fn_tab, al_tab. */
static size_t nodes_hash(uint64_t key, size_t slots)
{
	return (size_t)((key >> 4) * 0x9E3779B97F4A7C15ull >> 52) & (slots - 1);
}

/* The entry of f (or library kernel k), held (nodes_fn_put); asked again
 * when stale, of an older fn_gen, or when renew is set. NULL: no memory. */
static CG_HOT struct fn_ent *nodes_fn_get(CUfunction f, CUkernel k, int renew)
{
	uint64_t key = f ? (uint64_t)(uintptr_t)f : (uint64_t)(uintptr_t)k;
	size_t h = nodes_hash(key, FN_SLOTS), i = h;
	struct fn_ent *e;
	unsigned gen;
	pthread_mutex_lock(&names_lock);
	for (size_t n = 0; n < 64; n++, i = (i + 1) & (FN_SLOTS - 1))
		if (!fn_tab[i] || fn_tab[i]->func == key)
			break;
	e = fn_tab[i] && fn_tab[i]->func == key ? fn_tab[i] : NULL;
	if (e && !renew && !e->stale && e->gen == fn_gen) {
		e->refs++;
		pthread_mutex_unlock(&names_lock);
		return e;
	}
	gen = fn_gen;
	pthread_mutex_unlock(&names_lock);
	e = nodes_fn_ask(f, k, gen); /* no lock across driver calls */
	if (!e)
		return NULL;
	pthread_mutex_lock(&names_lock);
	e->seq = ++fn_seq;
	i = h;
	size_t reuse = FN_SLOTS, n; /* reuse: the first slot of a forgotten function */
	for (n = 0; n < 64; n++, i = (i + 1) & (FN_SLOTS - 1)) {
		struct fn_ent *w = fn_tab[i];
		if (w && w->func != key && reuse == FN_SLOTS && (w->stale || w->gen != fn_gen))
			reuse = i;
		if (w && w->func == key) {
			if (!renew && !w->stale && w->gen == fn_gen) { /* another thread asked first */
				w->refs++;
				e->refs = 0;
				nodes_fn_drop_locked(e);
				pthread_mutex_unlock(&names_lock);
				return w;
			}
			fn_tab[i] = e; /* the old one goes when its holders do */
			nodes_fn_drop_locked(w);
			pthread_mutex_unlock(&names_lock);
			return e;
		}
		if (!w)
			break;
	}
	if (reuse != FN_SLOTS || n < 64) { /* n < 64: slot i is empty; lookups stop at a key or an empty slot */
		if (reuse != FN_SLOTS) {
			nodes_fn_drop_locked(fn_tab[reuse]);
			i = reuse;
		}
		fn_tab[i] = e;
		pthread_mutex_unlock(&names_lock);
		return e;
	}
	/* neighbourhood full: this walk uses it, then it goes (the name is
	 * interned, so the description keeps it) */
	e->dead = 1;
	pthread_mutex_unlock(&names_lock);
	return e;
}

/* Whether the driver still describes f (or k) as e does: parameter np-1
 * where e has it, and none at np. Two capture-safe queries. A layout
 * that passes bounds every read of a node's kernelParams by the array the
 * driver returned, whatever the cache missed. */
/* Whether the driver still describes f/k as e does: its last parameter
 * where e has it (every argument e reads exists), and none past it: the
 * same name (a C++ name spells the parameters), else the parameter past
 * e's last refused. That refusal is the driver's error path: ~1.5 us on
 * the H200, against ~20 ns for the name (2026-11-29, docs/measurements.md),
 * once per function a capture. */
static CG_HOT int nodes_fn_check(CUfunction f, CUkernel k, const struct fn_ent *e)
{
	size_t off = 0, size = 0, last = e->np > 0 ? (size_t)e->np - 1 : 0;
	const char *nm = NULL;
	if (e->np < 0)
		return 1; /* nothing is read */
	if (e->np > 0 && (nodes_param_info(f, k, last, &off, &size) != CUDA_SUCCESS || off != e->lay[2 * last] ||
			  size != e->lay[2 * last + 1]))
		return 0;
	if (e->trunc)
		return 1;
	if (e->name &&
	    (f ? drv_cuFuncGetName && drv_cuFuncGetName(&nm, f) == CUDA_SUCCESS
	       : k && drv_cuKernelGetName && drv_cuKernelGetName(&nm, k) == CUDA_SUCCESS) &&
	    nm)
		return !strcmp(nm, e->name);
	return nodes_param_info(f, k, (size_t)e->np, &off, &size) == CUDA_ERROR_INVALID_VALUE;
}

/* The last function this thread confirmed in the current walk: a graph
 * runs the same kernel in many nodes, the driver is asked once. A walk
 * runs inside one application call that holds the graph, whose functions
 * it may not unload meanwhile. */
static __thread struct {
	uint64_t func, seq;
	long long walk;
} fn_ok;

/* The entry of node function f/k that the driver confirms, held; NULL
 * when there is none (no memory) or the driver disagreed twice (bad: one
 * warning, the node is not described). */
static struct fn_ent *nodes_fn(CUfunction f, CUkernel k)
{
	uint64_t key = f ? (uint64_t)(uintptr_t)f : (uint64_t)(uintptr_t)k;
	long long walk = model_graph_walks();
	struct fn_ent *e = nodes_fn_get(f, k, 0);
	if (!e || __atomic_load_n(&e->bad, __ATOMIC_RELAXED))
		return e;
	if (fn_ok.func == key && fn_ok.seq == e->seq && fn_ok.walk == walk)
		return e;
	if (!nodes_fn_check(f, k, e)) {
		nodes_fn_put(e); /* a reused handle the shim did not see unloaded */
		if (!(e = nodes_fn_get(f, k, 1)))
			return NULL;
		if (!nodes_fn_check(f, k, e)) {
			int warn;
			pthread_mutex_lock(&names_lock);
			__atomic_store_n(&e->bad, 1, __ATOMIC_RELAXED);
			warn = fn_warned < FN_WARN_MAX ? ++fn_warned : 0;
			pthread_mutex_unlock(&names_lock);
			if (warn)
				cg_warn(
				    "function %p: the driver's parameter layout changed while it was read; its kernel "
				    "nodes are not described",
				    (void *)(uintptr_t)key);
			return e;
		}
	}
	fn_ok.func = key, fn_ok.seq = e->seq, fn_ok.walk = walk;
	return e;
}

static void nodes_fn_module_gone_locked(uint64_t m)
{
	for (size_t i = 0; i < FN_SLOTS; i++)
		if (fn_tab[i] && fn_tab[i]->module == m)
			fn_tab[i]->stale = 1;
}

void nodes_library_unloaded(void)
{
	atomic_fetch_add_explicit(&unloads, 1, memory_order_relaxed);
	pthread_mutex_lock(&names_lock);
	fn_gen++;
	pthread_mutex_unlock(&names_lock);
}

/* Packed parameters: the buffer and its size from an extra array the
 * driver returned for a node (CU_LAUNCH_PARAM_BUFFER_POINTER, _SIZE, END).
 * 0: not a form the shim reads (an unknown key, no END within 8 pairs). */
static int nodes_extra(void *const *extra, const unsigned char **buf, size_t *size)
{
	*buf = NULL;
	*size = 0;
	for (int k = 0; k < 8; k++, extra += 2) {
		if (extra[0] == CU_LAUNCH_PARAM_END)
			return 1;
		if (extra[0] == CU_LAUNCH_PARAM_BUFFER_POINTER)
			*buf = extra[1];
		else if (extra[0] == CU_LAUNCH_PARAM_BUFFER_SIZE)
			*size = extra[1] ? *(const size_t *)extra[1] : 0;
		else
			return 0;
	}
	return 0;
}

/* ---- launch-handle aliases (nodes-launch.c) ----------------------------
 * The runtime launches by a CUkernel, and a node the walk reads gives both
 * the context's CUfunction (kp.func: the entry's key) and that CUkernel
 * (kp.kern) (measured, H200, 2026-11-29: docs/measurements.md). A walk
 * that reads both notes kern -> (func, the entry's seq), so a captured
 * launch by the CUkernel finds the entry (nodes_fn_cached). An alias holds
 * no pointer: it lives while its entry does (the same seq in fn_tab, not
 * stale, of the current fn_gen; a renewed or forgotten entry ends it). A
 * kernel seen with two live functions (two contexts) keeps no alias
 * (func 0): its launches are walked, never described with another
 * context's function. Past AL_PROBE collisions the home slot is taken
 * over (an alias lost costs a walk). Under names_lock. */
#define AL_SLOTS 2048
#define AL_PROBE 8
static struct {
	uint64_t kern, func, seq;
} al_tab[AL_SLOTS];

/* The live fn_tab entry of key (whatever its seq), or NULL. Under names_lock. */
static CG_HOT struct fn_ent *nodes_fn_find_locked(uint64_t key)
{
	size_t i = nodes_hash(key, FN_SLOTS);
	for (size_t n = 0; n < 64; n++, i = (i + 1) & (FN_SLOTS - 1))
		if (!fn_tab[i] || fn_tab[i]->func == key)
			break;
	if (fn_tab[i] && fn_tab[i]->func == key && !fn_tab[i]->stale && fn_tab[i]->gen == fn_gen &&
	    !__atomic_load_n(&fn_tab[i]->bad, __ATOMIC_RELAXED))
		return fn_tab[i];
	return NULL;
}

static void nodes_alias_note(uint64_t kern, const struct fn_ent *e)
{
	size_t h = nodes_hash(kern, AL_SLOTS), i = h, n;
	pthread_mutex_lock(&names_lock);
	for (n = 0; n < AL_PROBE; n++, i = (i + 1) & (AL_SLOTS - 1))
		if (!al_tab[i].kern || al_tab[i].kern == kern)
			break;
	if (n == AL_PROBE)
		i = h;
	if (al_tab[i].kern == kern && al_tab[i].func != e->func) {
		const struct fn_ent *w = al_tab[i].func ? nodes_fn_find_locked(al_tab[i].func) : NULL;
		if (!al_tab[i].func || (w && w->seq == al_tab[i].seq)) { /* two live functions */
			al_tab[i].func = 0;
			pthread_mutex_unlock(&names_lock);
			return;
		}
	}
	al_tab[i].kern = kern, al_tab[i].func = e->func, al_tab[i].seq = e->seq;
	pthread_mutex_unlock(&names_lock);
}

/* The function entry this thread's walk described its last kernel node
 * with, held until the walk ends (nodes_walk_end): a graph runs the same
 * kernel in many nodes, and a walk runs inside one application call that
 * holds the graph, whose functions it may not unload meanwhile. Saves two
 * names_lock round trips and a table probe a node (issue 36). */
static __thread struct {
	uint64_t key;
	struct fn_ent *e;
} fn_held;

CG_HOT void nodes_walk_end(void)
{
	if (fn_held.e)
		nodes_fn_put(fn_held.e);
	fn_held.e = NULL;
	fn_held.key = 0;
}

static _Atomic int coop_seen;

void nodes_coop_note(void)
{
	if (!atomic_load_explicit(&coop_seen, memory_order_relaxed))
		atomic_store_explicit(&coop_seen, 1, memory_order_release);
}

CG_HOT int nodes_coop_possible(void)
{
	return atomic_load_explicit(&coop_seen, memory_order_acquire);
}

static void nodes_kernel(CUgraphNode n, struct cg_ndet *d)
{
	CUDA_KERNEL_NODE_PARAMS kp;
	struct fn_ent *fe;
	memset(&kp, 0, sizeof kp);
	d->np_all = 0xffff;
	if (!drv_cuGraphKernelNodeGetParams_v2 || drv_cuGraphKernelNodeGetParams_v2(n, &kp) != CUDA_SUCCESS)
		return;
	d->func = kp.func ? (uint64_t)(uintptr_t)kp.func : (uint64_t)(uintptr_t)kp.kern;
	d->grid[0] = kp.gridDimX, d->grid[1] = kp.gridDimY, d->grid[2] = kp.gridDimZ;
	d->block[0] = kp.blockDimX, d->block[1] = kp.blockDimY, d->block[2] = kp.blockDimZ;
	d->shmem = kp.sharedMemBytes;
	if (drv_cuGraphKernelNodeGetAttribute && nodes_coop_possible()) {
		CUkernelNodeAttrValue v;
		memset(&v, 0, sizeof v);
		if (drv_cuGraphKernelNodeGetAttribute(n, CU_LAUNCH_ATTRIBUTE_COOPERATIVE, &v) == CUDA_SUCCESS)
			d->coop = v.cooperative != 0;
	}
	uint64_t key = kp.func ? (uint64_t)(uintptr_t)kp.func : (uint64_t)(uintptr_t)kp.kern;
	if (fn_held.e && fn_held.key == key) {
		fe = fn_held.e;
	} else {
		nodes_walk_end();
		fe = nodes_fn(kp.func, kp.func ? NULL : kp.kern);
		if (!fe)
			return;
		fn_held.e = fe, fn_held.key = key;
		if (kp.func && kp.kern) /* a function's kernel is one: noted once a function a walk */
			nodes_alias_note((uint64_t)(uintptr_t)kp.kern, fe);
	}
	nodes_kernel_fill(fe, kp.kernelParams, kp.extra, d, n); /* fe stays held for the walk's next node */
}

CG_HOT int nodes_kernel_fill(const struct fn_ent *fe, void **kernelParams, void **extra, struct cg_ndet *d,
			     CUgraphNode n)
{
	d->name = fe->name;
	d->module = fe->module;
	d->mctx = fe->mctx;
	if (__atomic_load_n(&fe->bad, __ATOMIC_RELAXED) || fe->np < 0)
		return 0;

	/* The values: one pointer per parameter (kernelParams, an array of
	 * exactly the function's count, which nodes_fn had the driver confirm),
	 * or a packed buffer (extra), read only inside the size it gives.
	 * Neither, a buffer without its size, or a size short of the layout:
	 * the node's values are not read and its parameters not described. */
	const unsigned char *packed = NULL;
	size_t packed_size = 0, need = 0;
	if (!kernelParams && fe->np > 0) {
		if (!extra || !nodes_extra(extra, &packed, &packed_size) || !packed)
			return 0;
		for (int j = 0; j < fe->np; j++)
			if ((size_t)fe->lay[2 * j] + fe->lay[2 * j + 1] > need)
				need = (size_t)fe->lay[2 * j] + fe->lay[2 * j + 1];
		if (packed_size < need) {
			int warn;
			if (!n)
				return -1; /* a launch: its capture's graph is walked */
			pthread_mutex_lock(&names_lock);
			warn = packed_size && fn_warned < FN_WARN_MAX ? ++fn_warned : 0;
			pthread_mutex_unlock(&names_lock);
			if (warn)
				cg_warn(
				    "kernel node %p: its packed parameters hold %zu bytes, its function's layout %zu; "
				    "its parameters are not described",
				    (void *)n, packed_size, need);
			return 0;
		}
	}
	struct cg_kparam *keep = d->p;
	uint32_t nk = 0;
	uint64_t h = 1469598103934665603ull;
	size_t i;
	for (i = 0; (int)i < fe->np; i++) {
		size_t off = fe->lay[2 * i], size = fe->lay[2 * i + 1];
		const unsigned char *v = NULL;
		if (kernelParams)
			v = kernelParams[i];
		else
			v = packed + off;
		if (v)
			h = nodes_fnv(h, v, size);
		if (size <= 8 && nk < CG_NODE_MAXP) {
			keep[nk++] = (struct cg_kparam){.off = (uint32_t)off,
							.size = (uint16_t)size,
							.idx = (uint8_t)(i < 255 ? i : 255),
							.val = v ? nodes_word(v, size) : 0};
		} else if (size > 8 && v) {
			/* words inside a struct parameter that point into the ledger */
			for (size_t w = (8 - off % 8) % 8, k = 0; w + 8 <= size && k < 64 && nk < CG_NODE_MAXP;
			     w += 8, k++) {
				uint64_t word;
				memcpy(&word, v + w, 8);
				if (!ledger_tracked(word))
					continue;
				keep[nk++] = (struct cg_kparam){.off = (uint32_t)(off + w),
								.size = (uint16_t)(size < 65535 ? size : 65535),
								.idx = (uint8_t)(i < 255 ? i : 255),
								.embedded = 1,
								.val = word};
			}
		}
	}
	d->np_all = (uint16_t)i;
	d->phash = h;
	d->np = (uint8_t)nk;
	return 0;
}

CG_HOT struct fn_ent *nodes_fn_cached(uint64_t key)
{
	struct fn_ent *e;
	pthread_mutex_lock(&names_lock);
	if (!(e = nodes_fn_find_locked(key))) { /* a CUkernel a walk saw beside its function */
		size_t i = nodes_hash(key, AL_SLOTS);
		for (size_t n = 0; n < AL_PROBE && al_tab[i].kern; n++, i = (i + 1) & (AL_SLOTS - 1))
			if (al_tab[i].kern == key) {
				if (al_tab[i].func && (e = nodes_fn_find_locked(al_tab[i].func)) &&
				    e->seq != al_tab[i].seq)
					e = NULL;
				break;
			}
	}
	if (e)
		e->refs++;
	pthread_mutex_unlock(&names_lock);
	return e;
}

CG_HOT uint64_t nodes_fn_key(const struct fn_ent *e)
{
	return e->func;
}

CG_HOT int nodes_fn_confirm(const struct fn_ent *e)
{
	CUfunction f = e->kern ? NULL : (CUfunction)(uintptr_t)e->func;
	CUkernel k = e->kern ? (CUkernel)(uintptr_t)e->func : NULL;
	return nodes_fn_check(f, k, e);
}

CG_HOT void nodes_fn_confirmed_in_walk(const struct fn_ent *e)
{
	fn_ok.func = e->func, fn_ok.seq = e->seq, fn_ok.walk = model_graph_walks();
}

CG_HOT uint64_t nodes_fn_seq(const struct fn_ent *e)
{
	return e->seq;
}

CG_HOT int nodes_fn_wide(const struct fn_ent *e)
{
	return e->wide;
}

int nodes_fn_small(const struct fn_ent *e)
{
	int bad = __atomic_load_n(&e->bad, __ATOMIC_RELAXED);
	return !bad && e->np >= 0 && e->np <= CG_NODE_MAXP && !e->wide ? e->np : -1;
}

CG_HOT void nodes_fn_release(struct fn_ent *e)
{
	nodes_fn_put(e);
}

/* ---- copies and memsets ----------------------------------------------- */
static int nodes_kind(CUmemorytype src, CUmemorytype dst)
{
	if (src == CU_MEMORYTYPE_ARRAY || dst == CU_MEMORYTYPE_ARRAY)
		return CG_CPY_ARRAY;
	if (src == CU_MEMORYTYPE_UNIFIED || dst == CU_MEMORYTYPE_UNIFIED)
		return CG_CPY_UNIFIED;
	if (src == CU_MEMORYTYPE_HOST)
		return dst == CU_MEMORYTYPE_HOST ? CG_CPY_H2H : CG_CPY_H2D;
	if (src == CU_MEMORYTYPE_DEVICE)
		return dst == CU_MEMORYTYPE_HOST ? CG_CPY_D2H : CG_CPY_D2D;
	return CG_CPY_UNKNOWN;
}

const char *nodes_copy_kind(int kind)
{
	static const char *const k[] = {"unknown", "HtoD", "DtoH", "DtoD", "HtoH", "unified", "array"};
	return kind >= 0 && kind <= CG_CPY_ARRAY ? k[kind] : "unknown";
}

static uint64_t nodes_operand(CUmemorytype t, const void *host, CUdeviceptr dev, CUarray arr, size_t x, size_t y,
			      size_t z, size_t pitch, size_t height)
{
	uint64_t base = t == CU_MEMORYTYPE_HOST	   ? (uint64_t)(uintptr_t)host
			: t == CU_MEMORYTYPE_ARRAY ? (uint64_t)(uintptr_t)arr
						   : (uint64_t)dev; /* device and unified both use the device field */
	if (t == CU_MEMORYTYPE_ARRAY)
		return base;
	return base + x + y * pitch + z * height * pitch;
}

static void nodes_memcpy(CUgraphNode n, struct cg_ndet *d)
{
	CUDA_MEMCPY3D c;
	memset(&c, 0, sizeof c);
	if (!drv_cuGraphMemcpyNodeGetParams || drv_cuGraphMemcpyNodeGetParams(n, &c) != CUDA_SUCCESS)
		return;
	d->src = nodes_operand(c.srcMemoryType, c.srcHost, c.srcDevice, c.srcArray, c.srcXInBytes, c.srcY, c.srcZ,
			       c.srcPitch, c.srcHeight);
	d->dst = nodes_operand(c.dstMemoryType, c.dstHost, c.dstDevice, c.dstArray, c.dstXInBytes, c.dstY, c.dstZ,
			       c.dstPitch, c.dstHeight);
	d->bytes = (uint64_t)c.WidthInBytes * (c.Height ? c.Height : 1) * (c.Depth ? c.Depth : 1);
	d->grid[0] = (uint32_t)nodes_kind(c.srcMemoryType, c.dstMemoryType);
}

static void nodes_memset(CUgraphNode n, struct cg_ndet *d)
{
	CUDA_MEMSET_NODE_PARAMS m;
	memset(&m, 0, sizeof m);
	if (!drv_cuGraphMemsetNodeGetParams || drv_cuGraphMemsetNodeGetParams(n, &m) != CUDA_SUCCESS)
		return;
	d->dst = m.dst;
	d->src = m.value;
	d->shmem = m.elementSize;
	d->bytes = (uint64_t)m.elementSize * m.width * (m.height ? m.height : 1);
}

int nodes_described(int t)
{
	return t == CU_GRAPH_NODE_TYPE_KERNEL || t == CU_GRAPH_NODE_TYPE_MEMCPY || t == CU_GRAPH_NODE_TYPE_MEMSET;
}

const struct cg_ndet *nodes_of(const struct cg_summary *s, uint32_t i)
{
	uint32_t lo = 0, hi;
	if (!s || !s->det)
		return NULL;
	hi = s->n_det;
	while (lo < hi) {
		uint32_t mid = (lo + hi) / 2;
		if (s->det[mid].node < i)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo < s->n_det && s->det[lo].node == i ? &s->det[lo] : NULL;
}

CG_HOT int nodes_describe(CUgraphNode n, int t, uint32_t index, struct cg_ndet *d)
{
	memset(d, 0, sizeof *d);
	d->node = index;
	d->type = (uint8_t)t;
	switch (t) {
	case CU_GRAPH_NODE_TYPE_KERNEL:
		nodes_kernel(n, d);
		break;
	case CU_GRAPH_NODE_TYPE_MEMCPY:
		nodes_memcpy(n, d);
		break;
	case CU_GRAPH_NODE_TYPE_MEMSET:
		nodes_memset(n, d);
		break;
	default:
		break;
	}
	return 0;
}

/* ---- records and comparison ------------------------------------------- */
static void nodes_elem_u64(struct cg_rec *r, uint64_t v)
{
	char num[24];
	*rec_fmt_u64_(num, v) = 0;
	rec_elem_raw(r, num);
}

static void nodes_triple(struct cg_rec *r, const char *key, const uint32_t v[3])
{
	rec_open(r, key, '[');
	for (int k = 0; k < 3; k++)
		nodes_elem_u64(r, v[k]);
	rec_close(r, ']');
}

/* One [a, b, value] element of a params/param_ptrs list (value in hex). */
static void nodes_param_elem(struct cg_rec *r, uint64_t a, uint64_t b, uint64_t val)
{
	char el[80], *o = el;
	*o++ = '[';
	o = rec_fmt_u64_(o, a);
	*o++ = ',';
	o = rec_fmt_u64_(o, b);
	*o++ = ',';
	o = rec_fmt_hex_(o, val, r->json);
	*o++ = ']';
	*o = 0;
	rec_elem_raw(r, el);
}

void nodes_rec(struct cg_rec *r, const struct cg_ndet *d)
{
	if (!d)
		return;
	switch (d->type) {
	case CU_GRAPH_NODE_TYPE_KERNEL:
		if (d->name)
			rec_str(r, "kernel", d->name);
		rec_hex(r, "func", d->func);
		nodes_triple(r, "grid", d->grid);
		nodes_triple(r, "block", d->block);
		rec_u64(r, "shmem", d->shmem);
		if (d->np_all == 0xffff)
			break;
		rec_u64(r, "nparams", d->np_all);
		/* params: [offset, size, value] per kept parameter (value: its
		 * first 8 bytes as a little-endian hex number) */
		rec_open(r, "params", '[');
		for (uint32_t k = 0; k < d->np; k++)
			if (!d->p[k].embedded)
				nodes_param_elem(r, d->p[k].off, d->p[k].size, d->p[k].val);
		rec_close(r, ']');
		/* param_ptrs: [index, offset, value] of pointers inside struct
		 * parameters */
		rec_open(r, "param_ptrs", '[');
		for (uint32_t k = 0; k < d->np; k++)
			if (d->p[k].embedded)
				nodes_param_elem(r, d->p[k].idx, d->p[k].off, d->p[k].val);
		rec_close(r, ']');
		rec_hex(r, "params_hash", d->phash);
		break;
	case CU_GRAPH_NODE_TYPE_MEMCPY:
		rec_hex(r, "dst", d->dst);
		rec_hex(r, "src", d->src);
		rec_u64(r, "bytes", d->bytes);
		rec_str(r, "kind", nodes_copy_kind((int)d->grid[0]));
		break;
	case CU_GRAPH_NODE_TYPE_MEMSET:
		rec_hex(r, "dst", d->dst);
		rec_u64(r, "bytes", d->bytes);
		rec_u64(r, "elem", d->shmem);
		rec_hex(r, "value", d->src);
		break;
	default:
		break;
	}
}
