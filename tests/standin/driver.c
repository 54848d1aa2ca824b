/*
 * tests/standin/driver.c -- CPU stand-in for libcuda.so.1 (TEST DOUBLE).
 *
 * Never installed. CI runs the shim against this library because it has no
 * GPU. It reproduces the measured driver behaviour written down in
 * docs/cuda-facts.md (cited as "cuda-facts §N"); see
 * tests/standin/README.md for what is measured and what is inferred.
 *
 * Model: STANDIN_DEVICES devices (default 1, at most STANDIN_MAX_DEV), one
 * primary context each; the current context's device is the current device.
 * Device memory is host memory, everything executes synchronously at issue
 * time (graphs at launch).
 * All state is behind one recursive mutex; capture mode and the per-thread
 * default stream are thread-local. Every handle is validated against a
 * registry before use, so garbage handles give an error, never a crash.
 *
 * Exports: every symbol of shim/hooks.def with exactly its PFN ABI (checked by
 * static assertions), plus what the stand-in runtime and the tests use. The
 * library is linked with -Bsymbolic-functions so that the addresses handed
 * out by cuGetProcAddress are this library's own definitions, equal to
 * dlsym(handle, "<exact name>"), even when a preload exports the same names.
 */
#define _GNU_SOURCE
#define __CUDA_API_VERSION_INTERNAL 1
#include <cuda.h>
#include <cudaTypedefs.h>
#include <dlfcn.h>
#include <errno.h>

#include <pthread.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <uthash.h>

#include "standin.h"

#define DRIVER_VERSION 13000
#define MiB (1024ull * 1024ull)
#define GiB (1024ull * MiB)
#define TOTAL_MEM (80ull * GiB)
#define POOL_GRAN (2ull * MiB)
#define GRAPH_CHUNK (32ull * MiB)
#define PLAIN_GRAN (2ull * MiB)
#define STANDIN_MAX_DEV 8

#define EXPORT __attribute__((visibility("default")))

/* Define an exported entry point `name` with the ABI of NVIDIA's `pfn`. */
#define DEF(name, pfn, params)                                                                                         \
	EXPORT CUresult sd_##name params __asm__(#name);                                                               \
	_Static_assert(__builtin_types_compatible_p(__typeof__(&sd_##name), pfn), #name " does not match " #pfn);      \
	EXPORT CUresult sd_##name params

/* ------------------------------------------------------------------------ */
/* locking, tracing                                                          */

static pthread_mutex_t g_mu = PTHREAD_RECURSIVE_MUTEX_INITIALIZER_NP;
static int g_verbose = -1;

static void unlock_cb(int *unused)
{
	(void)unused;
	pthread_mutex_unlock(&g_mu);
}

static void trace(const char *fn)
{
	if (g_verbose < 0) {
		const char *v = getenv("STANDIN_VERBOSE");
		g_verbose = v && *v && *v != '0';
	}
	if (g_verbose)
		fprintf(stderr, "[standin] %s\n", fn + 3 /* skip "sd_" */);
}

#define ENTER()                                                                                                        \
	trace(__func__);                                                                                               \
	pthread_mutex_lock(&g_mu);                                                                                     \
	__attribute__((cleanup(unlock_cb))) int guard_ = 0;                                                            \
	(void)guard_

static size_t round_up(size_t v, size_t g)
{
	return (v + g - 1) / g * g;
}

/* ------------------------------------------------------------------------ */
/* blockable synchronisation (the dump's tests, docs/dump.md)                */
/* The synchronize calls (cuStreamSynchronize*, cuCtxSynchronize*,
 * cuEventSynchronize) and the synchronous copies and memsets (cuMemcpy*,
 * cuMemsetD8/D32: they wait for the work before them) stand for work that
 * takes time, outside the lock, as the driver's own waits do (another
 * thread's calls go on meanwhile):
 *   STANDIN_SYNC_MS=N         each one first waits N ms;
 *   STANDIN_SYNC_UNTIL=path   each one waits until the file path exists
 *                             (polled every 5 ms; a test's release).
 * While one waits, cuStreamQuery of its stream (of any, for a context or
 * event wait) answers CUDA_ERROR_NOT_READY: the stream has work not done. */
#define SYNC_WAITERS 64
static _Atomic uintptr_t g_sync_waiting[SYNC_WAITERS]; /* the stream waited on, 1: all */

static int sync_ms;
static const char *sync_until;
static pthread_once_t sync_env_once = PTHREAD_ONCE_INIT;

static void sync_env(void)
{
	const char *v = getenv("STANDIN_SYNC_MS");
	sync_until = getenv("STANDIN_SYNC_UNTIL");
	sync_ms = v ? atoi(v) : 0;
}

static void sync_wait_outside(uintptr_t what)
{
	int slot = -1, ms;
	const char *until;
	pthread_once(&sync_env_once, sync_env);
	ms = sync_ms;
	until = sync_until;
	if (ms <= 0 && !(until && *until))
		return;
	for (int i = 0; i < SYNC_WAITERS && slot < 0; i++) {
		uintptr_t none = 0;
		if (atomic_compare_exchange_strong(&g_sync_waiting[i], &none, what ? what : 1))
			slot = i;
	}
	if (ms > 0) {
		struct timespec t = {ms / 1000, (long)(ms % 1000) * 1000000L};
		while (nanosleep(&t, &t) != 0 && errno == EINTR)
			;
	}
	while (until && *until && access(until, F_OK) != 0) {
		struct timespec t = {0, 5000000L};
		nanosleep(&t, NULL);
	}
	if (slot >= 0)
		atomic_store(&g_sync_waiting[slot], 0);
}

static int sync_waiting_on(uintptr_t s)
{
	for (int i = 0; i < SYNC_WAITERS; i++) {
		uintptr_t w = atomic_load(&g_sync_waiting[i]);
		if (w && (w == 1 || w == s))
			return 1;
	}
	return 0;
}

/* ------------------------------------------------------------------------ */
/* handle registry                                                           */

enum kind { K_STREAM = 1, K_EVENT, K_GRAPH, K_NODE, K_EXEC, K_POOL, K_MODULE, K_LIBRARY, K_FUNC, K_KERNEL, K_HKERN };

struct obj {
	void *key;
	int kind;
	int dev; /* the device whose primary context holds it (a reset destroys it) */
	UT_hash_handle hh;
};

static struct obj *g_objs;
static int cur_dev(void);

/* o is made in the current context (a pool: set to its location after). */
static void reg_add(struct obj *o, int kind)
{
	o->key = o;
	o->kind = kind;
	o->dev = cur_dev();
	HASH_ADD_PTR(g_objs, key, o);
}

/* STANDIN_REUSE_HANDLES=1: a destroyed graph's, executable's or pool's
 * struct is kept and handed to the next one of its kind, last destroyed
 * first, so its handle comes back at once, as the driver's often do
 * (tests/model device_reset: handles reused after a context reset); else
 * calloc and free. At most REUSE_MAX kept per kind (the oldest freed). */
#define REUSE_MAX 8
static void *g_reuse[K_HKERN + 1][REUSE_MAX];
static int g_nreuse[K_HKERN + 1];

static int reuse_on(void)
{
	static int on = -1;
	if (on < 0) {
		const char *v = getenv("STANDIN_REUSE_HANDLES");
		on = v && *v && *v != '0';
	}
	return on;
}

static void *obj_calloc(int kind, size_t size)
{
	if (!reuse_on() || !g_nreuse[kind])
		return calloc(1, size);
	return memset(g_reuse[kind][--g_nreuse[kind]], 0, size);
}

static void obj_free(int kind, void *p)
{
	if (!reuse_on()) {
		free(p);
		return;
	}
	if (g_nreuse[kind] == REUSE_MAX) {
		free(g_reuse[kind][0]);
		memmove(&g_reuse[kind][0], &g_reuse[kind][1], (REUSE_MAX - 1) * sizeof g_reuse[kind][0]);
		g_nreuse[kind]--;
	}
	g_reuse[kind][g_nreuse[kind]++] = p;
}

static void reg_del(struct obj *o)
{
	HASH_DEL(g_objs, o);
	o->kind = 0;
}

static void *reg_find(const void *p, int kind)
{
	struct obj *o = NULL;
	if (!p)
		return NULL;
	HASH_FIND_PTR(g_objs, &p, o);
	return (o && o->kind == kind) ? o : NULL;
}

/* ------------------------------------------------------------------------ */
/* objects                                                                   */

struct graph;
struct node;
struct capture;

/* A module's function or a library's kernel (K_FUNC, K_KERNEL), from
 * the entries of the PTX text it was loaded from (.entry NAME(.param
 * ...)): name and parameter layout. Slots are a fixed pool reused last
 * freed first, as the driver hands a new module's function the address of
 * one unloaded before it (issue 30: JAX's crash). */
#define SF_MAXP 64
#define SF_SLOTS 256
struct sfunc {
	struct obj o;
	void *owner;			     /* its module or library (registered) */
	struct sfunc *func[STANDIN_MAX_DEV]; /* K_KERNEL: its CUfunction in each device's context, once asked */
	struct sfunc *kern;		     /* K_FUNC of a library kernel: that kernel */
	char name[64];
	int np;
	uint32_t off[SF_MAXP], size[SF_MAXP];
	size_t nbytes;
	int used;
};

/* A kernel's launch and its copied arguments. As the driver (cuda.h,
 * cuGraphKernelNodeGetParams): the node owns them, and a getter returns
 * either kernelParams or extra, whichever was set. Each array is its own
 * allocation of exactly its size, so a reader that goes past the
 * function's parameter count is caught by ASan (issue 30). kp_free gives
 * them back; kp_dup makes a copy its own. Nothing in them points into the
 * struct: node_add and graph_clone move it by value (extra's size once
 * pointed at nbytes, and so at the caller's stack after the move). */
enum { KP_PTRS, KP_PACKED, KP_PTR_ONLY };
struct kparams {
	CUfunction fn; /* the function launched: a CUkernel's is its function in the context */
	CUkernel kern; /* its library or runtime kernel, NULL for a module's function */
	CUcontext ctx; /* the context current when it was set (its function's) */
	unsigned grid[3], block[3], shmem;
	int coop;	     /* CU_LAUNCH_ATTRIBUTE_COOPERATIVE (cuLaunchCooperativeKernel, a node's attribute) */
	int np;		     /* the function's parameters */
	int form;	     /* KP_*: kernelParams, extra with buffer and size, extra with a buffer pointer alone */
	size_t nbytes;	     /* bytes of vals */
	unsigned char *vals; /* the argument bytes, at the function's offsets */
	void **ptrs;	     /* KP_PTRS: np pointers into vals */
	void **extra;	     /* packed forms: {BUFFER_POINTER, vals, [BUFFER_SIZE, size,] END} */
	size_t *size;	     /* KP_PACKED: nbytes again, the size extra points at */
};

struct allocp {
	CUmemPoolProps props;
	size_t size;
	CUdeviceptr dptr;
	/* Peer access asked for the allocation (accessDescs), returned by
	 * cuGraphMemAllocNodeGetParams: at most one per device. */
	size_t nacc;
	CUmemAccessDesc acc[STANDIN_MAX_DEV];
};

struct nparams {
	int type;
	struct kparams k;
	CUDA_MEMSET_NODE_PARAMS ms;
	CUDA_MEMCPY3D cp;
	CUDA_HOST_NODE_PARAMS hp;
	struct graph *child; /* owned */
	struct allocp al;
	CUdeviceptr fr;
	CUevent ev;
	/* external semaphores (signal, wait) and batch memory operations: the
	 * arrays the node was given, copied (owned; np_own after a struct copy) */
	unsigned nsem, nops;
	CUexternalSemaphore *sems;
	void *semp; /* nsem CUDA_EXTERNAL_SEMAPHORE_{SIGNAL,WAIT}_PARAMS */
	CUstreamBatchMemOpParams *ops;
	unsigned opflags;
	/* conditional: its handle, type, and the body graphs it owns */
	CUgraphConditionalHandle cond;
	int ctype;
	unsigned nbody;
	struct graph **body;
};

struct node {
	struct obj o;
	struct graph *g;
	uint64_t id;
	struct node **deps;
	size_t ndeps;
	unsigned mark;
	struct nparams p;
};

struct graph {
	struct obj o;
	unsigned id; /* cuGraphGetId (CUDA 13.1): the driver numbers its graphs */
	struct node **nodes;
	size_t n, cap;
	int nexec;		   /* live execs instantiated from this graph */
	struct node *owner;	   /* set when moved into a parent (ownership MOVE) */
	struct capture *capturing; /* capture in progress into this graph */
};

struct xg;
struct xnode {
	CUgraphNode src;
	uint64_t src_id;
	int type;
	size_t ndeps;
	size_t *deps;
	struct nparams p; /* p.child unused; see child */
	struct xg *child;
	int enabled;
};

struct xg {
	size_t n;
	struct xnode *v;
	size_t *order;
};

struct gres {
	size_t bytes[STANDIN_MAX_DEV]; /* per device of the memory nodes (poolProps.location) */
	struct exec *exec;	       /* NULL once the exec is destroyed */
	struct gres *next;
};

struct exec {
	struct obj o;
	unsigned id;	 /* cuGraphExecGetId (CUDA 13.1) */
	struct graph *g; /* source graph; NULL after it is destroyed */
	uint64_t flags;
	int has_mem;
	struct xg *x;
	struct gres *res;
};

struct pool {
	struct obj o;
	CUmemPoolProps props;
	int reuse[3];
	uint64_t threshold, res_cur, res_high, used_cur, used_high;
	int is_default;
};

struct capture {
	uint64_t id;
	struct graph *g;
	int mode;
	pthread_t thr;
	int invalid;
	int to_graph;
	struct stream *origin;
	struct capture *next;
};

struct stream {
	struct obj o;
	int dev; /* device current when it was created; -1: the legacy/per-thread stream (current device) */
	unsigned flags;
	int legacy;
	uint64_t id;
	struct capture *cap;
	struct node **deps;
	size_t ndeps;
	CUgraphEdgeData *edata;
};

struct event {
	struct obj o;
	unsigned flags;
	int recorded_out; /* last recorded outside any capture (905 when a capture waits on it) */
	struct capture *cap;
	struct node **deps;
	size_t ndeps;
};

enum akind { A_PLAIN = 1, A_POOL, A_GRAPH };

struct alloc {
	CUdeviceptr addr;
	size_t size;
	int kind;
	int live;
	int dev; /* graph allocations: the device of the node's poolProps.location; else the current one */
	struct pool *pool;
	struct gres *res;
	UT_hash_handle hh;
};

static struct alloc *g_allocs;
static struct capture *g_caps;
static struct gres *g_gres;
static uint64_t g_next_cap_id = 1, g_next_node_id = 1, g_next_stream_id = 16;
static size_t g_plain_bytes, g_graph_used_high[STANDIN_MAX_DEV], g_graph_res_high[STANDIN_MAX_DEV];
static unsigned g_mark = 1;

static struct stream g_legacy = {.legacy = 1, .id = 1, .dev = -1};
static struct pool g_default_pool[STANDIN_MAX_DEV];
static struct pool *g_cur_pool[STANDIN_MAX_DEV];
static int g_inited_objs;

/* One primary context per device: the address of its slot is the handle. */
static int g_ctx_obj[STANDIN_MAX_DEV];
#define PRIMARY_CTX_OF(d) ((CUcontext)&g_ctx_obj[(d)])

/* Device count: STANDIN_DEVICES (1..STANDIN_MAX_DEV), default 1, read once. */
static int ndev(void)
{
	static int n;
	if (!n) {
		const char *v = getenv("STANDIN_DEVICES");
		int k = v && *v ? atoi(v) : 1;
		n = k < 1 ? 1 : k > STANDIN_MAX_DEV ? STANDIN_MAX_DEV : k;
	}
	return n;
}

static int dev_ok(int d)
{
	return d >= 0 && d < ndev();
}

/* Device of a context handle, or -1 when it is not a primary context. */
static int ctx_dev(CUcontext c)
{
	for (int d = 0; d < ndev(); d++)
		if (c == PRIMARY_CTX_OF(d))
			return d;
	return -1;
}

/* A context argument: NULL (the current one) or a primary context. */
static int ctx_ok(CUcontext c)
{
	return !c || ctx_dev(c) >= 0;
}

static __thread CUcontext t_ctx;
static __thread int t_mode; /* CU_STREAM_CAPTURE_MODE_GLOBAL == 0 */
static __thread struct stream *t_pts;

/* The current context's device (0 with no current context). */
static int cur_dev(void)
{
	int d = t_ctx ? ctx_dev(t_ctx) : 0;
	return d < 0 ? 0 : d;
}

static int stream_dev(const struct stream *s)
{
	return s && s->dev >= 0 ? s->dev : cur_dev();
}

static void init_objs(void)
{
	if (g_inited_objs)
		return;
	g_inited_objs = 1;
	reg_add(&g_legacy.o, K_STREAM);
	for (int d = 0; d < ndev(); d++) {
		struct pool *p = &g_default_pool[d];
		memset(&p->props, 0, sizeof p->props);
		p->props.allocType = CU_MEM_ALLOCATION_TYPE_PINNED;
		p->props.handleTypes = CU_MEM_HANDLE_TYPE_NONE;
		p->props.location.type = CU_MEM_LOCATION_TYPE_DEVICE;
		p->props.location.id = d;
		p->is_default = 1;
		reg_add(&p->o, K_POOL);
		p->o.dev = d;
		g_cur_pool[d] = p;
	}
}

#define ENTER_OBJ()                                                                                                    \
	ENTER();                                                                                                       \
	init_objs()

/* ------------------------------------------------------------------------ */
/* memory accounting                                                         */

static size_t pools_reserved(void)
{
	size_t s = 0;
	struct obj *o, *t;
	HASH_ITER(hh, g_objs, o, t)
	{
		if (o->kind == K_POOL)
			s += ((struct pool *)o)->res_cur;
	}
	return s;
}

/* Graph memory reserved on device dev (-1: all devices). */
static size_t graph_reserved(int dev)
{
	size_t s = 0;
	for (struct gres *r = g_gres; r; r = r->next)
		for (int d = 0; d < STANDIN_MAX_DEV; d++)
			if (dev < 0 || d == dev)
				s += r->bytes[d];
	return s;
}

/* One budget of TOTAL_MEM for all devices (cuMemGetInfo is not per device here). */
static size_t mem_free(void)
{
	size_t used = g_plain_bytes + pools_reserved() + graph_reserved(-1);
	return used >= TOTAL_MEM ? 0 : TOTAL_MEM - used;
}

static void graph_mem_high(void)
{
	for (int d = 0; d < STANDIN_MAX_DEV; d++) {
		size_t r = graph_reserved(d);
		if (r > g_graph_res_high[d])
			g_graph_res_high[d] = r;
		if (r > g_graph_used_high[d])
			g_graph_used_high[d] = r;
	}
}

static struct alloc *alloc_find(CUdeviceptr p)
{
	struct alloc *a = NULL;
	HASH_FIND(hh, g_allocs, &p, sizeof p, a);
	return a;
}

/* The allocation record whose range contains p, or NULL. */
static struct alloc *alloc_containing(CUdeviceptr p)
{
	struct alloc *a, *t;
	HASH_ITER(hh, g_allocs, a, t)
	{
		if (p >= a->addr && p < a->addr + (a->size ? a->size : 1))
			return a;
	}
	return NULL;
}

/* The last cuMemFree'd plain block, kept for the next cuMemAlloc of its
 * size: the driver usually hands the same address back to an allocation
 * of the size just freed (the stale-pointer bugs rest on it: CGS018,
 * CGS019), and so does the stand-in, whatever the host's heap did in
 * between (a preloaded library's own allocations moved calloc's answer). */
static void *g_plain_last;
static size_t g_plain_last_size;

static struct alloc *alloc_new(size_t size, int kind)
{
	void *buf;
	if (kind == A_PLAIN && g_plain_last && g_plain_last_size == size) {
		buf = g_plain_last;
		g_plain_last = NULL;
		memset(buf, 0, size ? size : 1);
	} else {
		buf = calloc(1, size ? size : 1);
	}
	if (!buf)
		return NULL;
	struct alloc *a = calloc(1, sizeof *a);
	a->addr = (CUdeviceptr)(uintptr_t)buf;
	a->size = size;
	a->kind = kind;
	a->dev = cur_dev(); /* a graph allocation's: its node's location (graph_addr_new) */
	HASH_ADD(hh, g_allocs, addr, sizeof a->addr, a);
	return a;
}

static void alloc_release(struct alloc *a)
{
	HASH_DEL(g_allocs, a);
	if (a->kind == A_PLAIN) {
		free(g_plain_last);
		g_plain_last = (void *)(uintptr_t)a->addr;
		g_plain_last_size = a->size;
	} else {
		free((void *)(uintptr_t)a->addr);
	}
	free(a);
}

static void pool_note_alloc(struct pool *p, size_t size)
{
	p->used_cur += size;
	if (p->used_cur > p->used_high)
		p->used_high = p->used_cur;
	size_t need = round_up(p->used_cur, POOL_GRAN);
	if (need > p->res_cur)
		p->res_cur = need;
	if (p->res_cur > p->res_high)
		p->res_high = p->res_cur;
}

static void pool_trim(struct pool *p, size_t keep)
{
	size_t target = round_up(p->used_cur, POOL_GRAN);
	size_t k = round_up(keep, POOL_GRAN);
	if (k > target)
		target = k;
	if (p->res_cur > target)
		p->res_cur = target;
}

/* Stream/context/event synchronisation releases pool memory above the release threshold. */
static void pools_sync_release(void)
{
	struct obj *o, *t;
	HASH_ITER(hh, g_objs, o, t)
	{
		if (o->kind == K_POOL) {
			struct pool *p = (struct pool *)o;
			pool_trim(p, p->threshold);
		}
	}
}

/* Free any live allocation (plain, pool or graph). 0 or CUDA_ERROR_INVALID_VALUE. */
static CUresult free_any(CUdeviceptr p)
{
	struct alloc *a = alloc_find(p);
	if (!a || !a->live)
		return CUDA_ERROR_INVALID_VALUE;
	switch (a->kind) {
	case A_PLAIN:
		g_plain_bytes -= round_up(a->size, PLAIN_GRAN);
		alloc_release(a);
		break;
	case A_POOL:
		if (a->pool && a->pool->used_cur >= a->size)
			a->pool->used_cur -= a->size;
		alloc_release(a);
		break;
	case A_GRAPH:
		/* the address stays reserved for its node */
		a->live = 0;
		a->res = NULL;
		break;
	}
	return CUDA_SUCCESS;
}

/* Device-side address check for copies: inside a live allocation, or unknown
 * to the stand-in (treated as host memory for unified copies). A graph
 * address that is not live gives CUDA_ERROR_INVALID_VALUE ("Allocation not
 * found", cuda-facts §4/§5). */
static CUresult check_dev(CUdeviceptr p, size_t n, int strict)
{
	if (n == 0)
		return CUDA_SUCCESS;
	struct alloc *a = alloc_containing(p);
	if (!a)
		return (strict || p == 0) ? CUDA_ERROR_INVALID_VALUE : CUDA_SUCCESS;
	if (!a->live)
		return CUDA_ERROR_INVALID_VALUE;
	if (p + n > a->addr + a->size)
		return CUDA_ERROR_INVALID_VALUE;
	return CUDA_SUCCESS;
}

/* ------------------------------------------------------------------------ */
/* streams and capture state                                                 */

static struct stream *per_thread_stream(void)
{
	if (!t_pts) {
		t_pts = calloc(1, sizeof *t_pts);
		t_pts->id = 2 + 1000 * (g_next_stream_id++);
		t_pts->dev = -1;
		reg_add(&t_pts->o, K_STREAM);
	}
	return t_pts;
}

/* Resolve a stream handle. ptsz: stream 0 is the per-thread stream. */
static struct stream *get_stream(CUstream h, int ptsz)
{
	if (h == NULL)
		return ptsz ? per_thread_stream() : &g_legacy;
	if (h == CU_STREAM_LEGACY)
		return &g_legacy;
	if (h == CU_STREAM_PER_THREAD)
		return per_thread_stream();
	return reg_find(h, K_STREAM);
}

/* Any capture whose streams are blocking (legacy stream would depend on it). */
static int blocking_capture_exists(int invalidate)
{
	int hit = 0;
	struct obj *o, *t;
	HASH_ITER(hh, g_objs, o, t)
	{
		if (o->kind != K_STREAM)
			continue;
		struct stream *s = (struct stream *)o;
		if (s->cap && !(s->flags & CU_STREAM_NON_BLOCKING) && s != t_pts) {
			hit = 1;
			if (invalidate)
				s->cap->invalid = 1;
		}
	}
	return hit;
}

/* Capture-unsafe call (cuMemAlloc, cuMemFree, syncs, synchronous copies),
 * cuda-facts §6: fails with 900 and invalidates the conflicting captures. */
static CUresult unsafe_call(void)
{
	int m = t_mode;
	if (m == CU_STREAM_CAPTURE_MODE_RELAXED)
		return CUDA_SUCCESS;
	int hit = 0;
	pthread_t self = pthread_self();
	for (struct capture *c = g_caps; c; c = c->next) {
		int own = pthread_equal(c->thr, self) && c->mode != CU_STREAM_CAPTURE_MODE_RELAXED;
		int glob = m == CU_STREAM_CAPTURE_MODE_GLOBAL && c->mode == CU_STREAM_CAPTURE_MODE_GLOBAL;
		if (own || glob) {
			c->invalid = 1;
			hit = 1;
		}
	}
	return hit ? CUDA_ERROR_STREAM_CAPTURE_UNSUPPORTED : CUDA_SUCCESS;
}

static void set_deps(struct node ***dst, size_t *nd, struct node *const *src, size_t n)
{
	free(*dst);
	*dst = NULL;
	*nd = 0;
	if (n) {
		*dst = malloc(n * sizeof **dst);
		memcpy(*dst, src, n * sizeof **dst);
		*nd = n;
	}
}

static void add_deps(struct node ***dst, size_t *nd, struct node *const *src, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		size_t j;
		for (j = 0; j < *nd; j++)
			if ((*dst)[j] == src[i])
				break;
		if (j < *nd)
			continue;
		*dst = realloc(*dst, (*nd + 1) * sizeof **dst);
		(*dst)[(*nd)++] = src[i];
	}
}

/*
 * Classify an asynchronous operation on stream s.
 * Returns 0 and *cap = NULL: execute now; 0 and *cap set: record a node;
 * else an error (901 invalidated capture, 906 legacy stream vs blocking capture).
 */
static CUresult stream_op(struct stream *s, struct capture **cap)
{
	*cap = NULL;
	if (s->cap) {
		if (s->cap->invalid)
			return CUDA_ERROR_STREAM_CAPTURE_INVALIDATED;
		*cap = s->cap;
		return CUDA_SUCCESS;
	}
	if (s->legacy && blocking_capture_exists(1))
		return CUDA_ERROR_STREAM_CAPTURE_IMPLICIT;
	return CUDA_SUCCESS;
}

/* ------------------------------------------------------------------------ */
/* graphs and nodes                                                          */

static void kp_free(struct kparams *k)
{
	free(k->vals);
	free(k->ptrs);
	free(k->extra);
	free(k->size);
	k->vals = NULL, k->ptrs = NULL, k->extra = NULL, k->size = NULL;
}

/* The arrays of k point into vals: built for k's own vals. */
static int kp_arrays(struct kparams *k, const struct sfunc *f)
{
	k->ptrs = NULL, k->extra = NULL, k->size = NULL;
	if (k->form == KP_PTRS) {
		k->ptrs = malloc((size_t)k->np * sizeof *k->ptrs + (k->np ? 0 : 1)); /* never NULL: 0 params too */
		if (!k->ptrs)
			return 0;
		for (int i = 0; i < k->np; i++)
			k->ptrs[i] = k->vals + (f ? f->off[i] : 8 * (size_t)i);
		return 1;
	}
	k->extra = malloc((k->form == KP_PACKED ? 5 : 3) * sizeof *k->extra);
	if (!k->extra)
		return 0;
	if (k->form == KP_PACKED && !(k->size = malloc(sizeof *k->size))) {
		free(k->extra);
		k->extra = NULL;
		return 0;
	}
	k->extra[0] = CU_LAUNCH_PARAM_BUFFER_POINTER;
	k->extra[1] = k->vals;
	if (k->form == KP_PACKED) {
		k->extra[2] = CU_LAUNCH_PARAM_BUFFER_SIZE;
		*k->size = k->nbytes;
		k->extra[3] = k->size;
		k->extra[4] = CU_LAUNCH_PARAM_END;
	} else {
		k->extra[2] = CU_LAUNCH_PARAM_END;
	}
	return 1;
}

static const struct sfunc *sfunc_of(const void *h);

/* A struct copy of k becomes a copy of its own. */
static void kp_dup(struct kparams *k)
{
	unsigned char *v = malloc(k->nbytes + 1);
	if (v && k->vals)
		memcpy(v, k->vals, k->nbytes);
	k->vals = v;
	if (!v || !kp_arrays(k, sfunc_of(k->fn)))
		abort(); /* a test double out of memory */
}

static void fn_learn(void *fn, int np);
static CUfunction fn_resolve(CUfunction h, CUkernel *kern);

/* Parse extra (bounded): the buffer, and its size when given. */
static CUresult kp_extra(void **extra, const unsigned char **buf, size_t *size, int *has_size)
{
	*buf = NULL, *size = 0, *has_size = 0;
	for (int k = 0; k < 8; k++, extra += 2) {
		if (extra[0] == CU_LAUNCH_PARAM_END)
			return CUDA_SUCCESS;
		if (extra[0] == CU_LAUNCH_PARAM_BUFFER_POINTER)
			*buf = extra[1];
		else if (extra[0] == CU_LAUNCH_PARAM_BUFFER_SIZE && extra[1])
			*size = *(size_t *)extra[1], *has_size = 1;
		else
			return CUDA_ERROR_INVALID_VALUE;
	}
	return CUDA_ERROR_INVALID_VALUE;
}

/* Fill k (owned arrays) from a launch's or a node's arguments. A module
 * function's layout is its PTX's; a host function (standin.h) has np 8-byte
 * parameters, kernelParams NULL-terminated. extra: the buffer is copied
 * when its size is given (it must cover the layout); a buffer pointer
 * alone "has no effect" (cuda.h, CU_LAUNCH_PARAM_BUFFER_POINTER): the
 * arguments are zero and the node returns the pointer form back. */
static CUresult kp_set(struct kparams *k, CUfunction fn, const unsigned grid[3], const unsigned block[3],
		       unsigned shmem, void **params, void **extra)
{
	const unsigned char *buf = NULL;
	size_t size = 0;
	int has_size = 0;
	CUkernel kern = NULL;
	if (!fn || (params && extra))
		return CUDA_ERROR_INVALID_VALUE;
	if (!(fn = fn_resolve(fn, &kern)))
		return CUDA_ERROR_OUT_OF_MEMORY;
	const struct sfunc *f = sfunc_of(fn);
	struct kparams n = {.fn = fn, .kern = kern, .ctx = PRIMARY_CTX_OF(cur_dev()), .shmem = shmem, .form = KP_PTRS};
	for (int i = 0; i < 3; i++) {
		n.grid[i] = grid[i];
		n.block[i] = block[i];
		if (!grid[i] || !block[i])
			return CUDA_ERROR_INVALID_VALUE;
	}
	if (extra) {
		CUresult rc = kp_extra(extra, &buf, &size, &has_size);
		if (rc)
			return rc;
		n.form = has_size && buf ? KP_PACKED : KP_PTR_ONLY;
	}
	if (f) {
		n.np = f->np;
		n.nbytes = f->nbytes;
		if (!extra && f->np && !params)
			return CUDA_ERROR_INVALID_VALUE;
	} else if (params) {
		while (params[n.np])
			if (++n.np > STANDIN_MAX_KERNEL_PARAMS)
				return CUDA_ERROR_INVALID_VALUE;
		n.nbytes = 8 * (size_t)n.np;
	} else if (n.form == KP_PACKED) {
		n.np = (int)(size / 8 < STANDIN_MAX_KERNEL_PARAMS ? size / 8 : STANDIN_MAX_KERNEL_PARAMS);
		n.nbytes = 8 * (size_t)n.np;
	}
	if (n.form == KP_PACKED && size < n.nbytes)
		return CUDA_ERROR_INVALID_VALUE;
	n.vals = calloc(1, n.nbytes + 1);
	if (!n.vals)
		return CUDA_ERROR_OUT_OF_MEMORY;
	if (params)
		for (int i = 0; i < n.np; i++)
			memcpy(n.vals + (f ? f->off[i] : 8 * (size_t)i), params[i], f ? f->size[i] : 8);
	else if (n.form == KP_PACKED)
		memcpy(n.vals, buf, n.nbytes);
	if (!kp_arrays(&n, f)) {
		kp_free(&n);
		return CUDA_ERROR_OUT_OF_MEMORY;
	}
	*k = n;
	if (!f)
		fn_learn((void *)fn, n.np);
	return CUDA_SUCCESS;
}

/* A host function runs with a NULL-terminated pointer array (standin.h);
 * a module function has no code here. */
static void kp_run(const struct kparams *k)
{
	void *ptrs[STANDIN_MAX_KERNEL_PARAMS + 1];
	uint64_t vals[STANDIN_MAX_KERNEL_PARAMS];
	if (sfunc_of(k->fn) || k->np > STANDIN_MAX_KERNEL_PARAMS)
		return;
	for (int i = 0; i < k->np; i++) {
		memcpy(&vals[i], k->vals + 8 * (size_t)i, 8);
		ptrs[i] = &vals[i];
	}
	ptrs[k->np] = NULL;
	unsigned long nt =
	    (unsigned long)k->grid[0] * k->grid[1] * k->grid[2] * k->block[0] * k->block[1] * k->block[2];
	((standin_kernel_fn)(void *)k->fn)(ptrs, nt);
}

static void memset_run(const CUDA_MEMSET_NODE_PARAMS *m)
{
	size_t h = m->height ? m->height : 1;
	for (size_t r = 0; r < h; r++) {
		char *row = (char *)(uintptr_t)m->dst + r * m->pitch;
		for (size_t i = 0; i < m->width; i++) {
			switch (m->elementSize) {
			case 1:
				((uint8_t *)row)[i] = (uint8_t)m->value;
				break;
			case 2:
				((uint16_t *)row)[i] = (uint16_t)m->value;
				break;
			default:
				((uint32_t *)row)[i] = m->value;
				break;
			}
		}
	}
}

static const char *cp_src(const CUDA_MEMCPY3D *c)
{
	return c->srcMemoryType == CU_MEMORYTYPE_HOST ? (const char *)c->srcHost
						      : (const char *)(uintptr_t)c->srcDevice;
}

static char *cp_dst(const CUDA_MEMCPY3D *c)
{
	return c->dstMemoryType == CU_MEMORYTYPE_HOST ? (char *)c->dstHost : (char *)(uintptr_t)c->dstDevice;
}

static void memcpy_run(const CUDA_MEMCPY3D *c)
{
	size_t h = c->Height ? c->Height : 1, d = c->Depth ? c->Depth : 1;
	size_t sp = c->srcPitch ? c->srcPitch : c->WidthInBytes;
	size_t dp = c->dstPitch ? c->dstPitch : c->WidthInBytes;
	size_t sh = c->srcHeight ? c->srcHeight : h, dh = c->dstHeight ? c->dstHeight : h;
	for (size_t z = 0; z < d; z++)
		for (size_t y = 0; y < h; y++)
			memmove(cp_dst(c) + c->dstXInBytes + (c->dstY + y + (c->dstZ + z) * dh) * dp,
				cp_src(c) + c->srcXInBytes + (c->srcY + y + (c->srcZ + z) * sh) * sp, c->WidthInBytes);
}

static void cp_linear(CUDA_MEMCPY3D *c, CUmemorytype st, const void *src, CUmemorytype dt, void *dst, size_t n)
{
	memset(c, 0, sizeof *c);
	c->srcMemoryType = st;
	c->dstMemoryType = dt;
	if (st == CU_MEMORYTYPE_HOST)
		c->srcHost = src;
	else
		c->srcDevice = (CUdeviceptr)(uintptr_t)src;
	if (dt == CU_MEMORYTYPE_HOST)
		c->dstHost = dst;
	else
		c->dstDevice = (CUdeviceptr)(uintptr_t)dst;
	c->WidthInBytes = n;
	c->Height = 1;
	c->Depth = 1;
}

/* The driver's graph and exec ids (CUDA 13.1): one sequence each, from 1. */
static unsigned g_next_graph_id = 1, g_next_exec_id = 1;

static struct graph *graph_new(void)
{
	struct graph *g = obj_calloc(K_GRAPH, sizeof *g);
	g->id = g_next_graph_id++;
	reg_add(&g->o, K_GRAPH);
	return g;
}

static void graph_free(struct graph *g);

/* The arrays of p other than the kernel's and the graphs. */
static void np_arrays_free(struct nparams *p)
{
	free(p->sems);
	free(p->semp);
	free(p->ops);
	p->sems = NULL, p->semp = NULL, p->ops = NULL;
}

static void *dup_bytes(const void *src, size_t n)
{
	void *d = malloc(n ? n : 1);
	if (!d)
		abort(); /* a test double out of memory */
	if (n)
		memcpy(d, src, n);
	return d;
}

static size_t sem_param_size(int type)
{
	return type == CU_GRAPH_NODE_TYPE_EXT_SEMAS_SIGNAL ? sizeof(CUDA_EXTERNAL_SEMAPHORE_SIGNAL_PARAMS)
							   : sizeof(CUDA_EXTERNAL_SEMAPHORE_WAIT_PARAMS);
}

/* A struct copy of p becomes a copy of its own (arrays; graphs are the
 * caller's). */
static void np_own(struct nparams *p)
{
	if (p->type == CU_GRAPH_NODE_TYPE_KERNEL)
		kp_dup(&p->k);
	if (p->sems) {
		p->sems = dup_bytes(p->sems, p->nsem * sizeof *p->sems);
		p->semp = dup_bytes(p->semp, p->nsem * sem_param_size(p->type));
	}
	if (p->ops)
		p->ops = dup_bytes(p->ops, p->nops * sizeof *p->ops);
}

static void np_free(struct nparams *p)
{
	if (p->type == CU_GRAPH_NODE_TYPE_KERNEL)
		kp_free(&p->k);
	np_arrays_free(p);
	for (unsigned i = 0; i < p->nbody; i++)
		graph_free(p->body[i]);
	free(p->body);
	p->body = NULL, p->nbody = 0;
	if (p->type == CU_GRAPH_NODE_TYPE_GRAPH && p->child) {
		graph_free(p->child);
		p->child = NULL;
	}
}

/* Remove every reference to node n from streams and events (capture deps). */
static void forget_node(struct node *n)
{
	struct obj *o, *t;
	HASH_ITER(hh, g_objs, o, t)
	{
		struct node ***d = NULL;
		size_t *nd = NULL;
		if (o->kind == K_STREAM) {
			d = &((struct stream *)o)->deps;
			nd = &((struct stream *)o)->ndeps;
		} else if (o->kind == K_EVENT) {
			d = &((struct event *)o)->deps;
			nd = &((struct event *)o)->ndeps;
		} else if (o->kind == K_NODE && o != &n->o) {
			d = &((struct node *)o)->deps;
			nd = &((struct node *)o)->ndeps;
		} else {
			continue;
		}
		for (size_t i = 0; i < *nd;) {
			if ((*d)[i] == n) {
				memmove(&(*d)[i], &(*d)[i + 1], (*nd - i - 1) * sizeof **d);
				(*nd)--;
			} else {
				i++;
			}
		}
	}
}

static void node_free(struct node *n)
{
	forget_node(n);
	reg_del(&n->o);
	np_free(&n->p);
	free(n->deps);
	free(n);
}

static void graph_free(struct graph *g)
{
	for (size_t i = 0; i < g->n; i++) {
		reg_del(&g->nodes[i]->o);
	}
	for (size_t i = 0; i < g->n; i++) {
		np_free(&g->nodes[i]->p);
		free(g->nodes[i]->deps);
		free(g->nodes[i]);
	}
	free(g->nodes);
	/* execs keep their snapshot; forget the source */
	struct obj *o, *t;
	HASH_ITER(hh, g_objs, o, t)
	{
		if (o->kind == K_EXEC && ((struct exec *)o)->g == g)
			((struct exec *)o)->g = NULL;
	}
	reg_del(&g->o);
	obj_free(K_GRAPH, g);
}

static int graph_has_mem(const struct graph *g)
{
	for (size_t i = 0; i < g->n; i++) {
		int t = g->nodes[i]->p.type;
		if (t == CU_GRAPH_NODE_TYPE_MEM_ALLOC || t == CU_GRAPH_NODE_TYPE_MEM_FREE)
			return 1;
		if (t == CU_GRAPH_NODE_TYPE_GRAPH && g->nodes[i]->p.child && graph_has_mem(g->nodes[i]->p.child))
			return 1;
	}
	return 0;
}

/* Validate a dependency list against graph g. */
static CUresult check_deps(struct graph *g, const CUgraphNode *deps, size_t n)
{
	if (n && !deps)
		return CUDA_ERROR_INVALID_VALUE;
	for (size_t i = 0; i < n; i++) {
		struct node *d = reg_find(deps[i], K_NODE);
		if (!d || d->g != g)
			return CUDA_ERROR_INVALID_VALUE;
		for (size_t j = 0; j < i; j++)
			if (deps[j] == deps[i])
				return CUDA_ERROR_INVALID_VALUE;
	}
	return CUDA_SUCCESS;
}

/* Add a node; p is copied, ownership of p->child and p->k's arrays moves. */
static struct node *node_add(struct graph *g, const struct nparams *p, struct node *const *deps, size_t ndeps)
{
	struct node *n = calloc(1, sizeof *n);
	n->g = g;
	n->id = g_next_node_id++;
	n->p = *p; /* ownership of p's arrays moves too */
	set_deps(&n->deps, &n->ndeps, deps, ndeps);
	reg_add(&n->o, K_NODE);
	if (g->n == g->cap) {
		g->cap = g->cap ? 2 * g->cap : 8;
		g->nodes = realloc(g->nodes, g->cap * sizeof *g->nodes);
	}
	g->nodes[g->n++] = n;
	if (p->type == CU_GRAPH_NODE_TYPE_GRAPH && p->child)
		p->child->owner = n;
	return n;
}

static size_t node_index(const struct graph *g, const struct node *n)
{
	for (size_t i = 0; i < g->n; i++)
		if (g->nodes[i] == n)
			return i;
	return (size_t)-1;
}

/* Deep copy of a graph without memory nodes (cuGraphClone, child clone). */
static struct graph *graph_clone(const struct graph *src)
{
	struct graph *g = graph_new();
	for (size_t i = 0; i < src->n; i++) {
		const struct node *sn = src->nodes[i];
		struct nparams p = sn->p;
		if (p.type == CU_GRAPH_NODE_TYPE_GRAPH && p.child)
			p.child = graph_clone(p.child);
		np_own(&p);
		if (p.nbody) {
			struct graph **b = calloc(p.nbody, sizeof *b);
			for (unsigned j = 0; j < p.nbody; j++)
				b[j] = graph_clone(p.body[j]);
			p.body = b;
		}
		struct node **deps = calloc(sn->ndeps + 1, sizeof *deps);
		for (size_t j = 0; j < sn->ndeps; j++)
			deps[j] = g->nodes[node_index(src, sn->deps[j])];
		node_add(g, &p, deps, sn->ndeps);
		free(deps);
	}
	return g;
}

/* A graph address for a new MEM_ALLOC node (fixed for the node's life, cuda-facts §3). */
static CUresult graph_addr_new(struct allocp *al)
{
	struct alloc *a = alloc_new(al->size, A_GRAPH);
	if (!a)
		return CUDA_ERROR_OUT_OF_MEMORY;
	a->dev = al->props.location.id;
	al->dptr = a->addr;
	return CUDA_SUCCESS;
}

/* Is dptr freed by a MEM_FREE node of g already? */
static int graph_frees(const struct graph *g, CUdeviceptr dptr)
{
	for (size_t i = 0; i < g->n; i++) {
		const struct nparams *p = &g->nodes[i]->p;
		if (p->type == CU_GRAPH_NODE_TYPE_MEM_FREE && p->fr == dptr)
			return 1;
		if (p->type == CU_GRAPH_NODE_TYPE_GRAPH && p->child && graph_frees(p->child, dptr))
			return 1;
	}
	return 0;
}

static int graph_allocates(const struct graph *g, CUdeviceptr dptr)
{
	for (size_t i = 0; i < g->n; i++) {
		const struct nparams *p = &g->nodes[i]->p;
		if (p->type == CU_GRAPH_NODE_TYPE_MEM_ALLOC && p->al.dptr == dptr)
			return 1;
		if (p->type == CU_GRAPH_NODE_TYPE_GRAPH && p->child && graph_allocates(p->child, dptr))
			return 1;
	}
	return 0;
}

/* Rules for a MEM_FREE node (cuda-facts §3/§4): address from an alloc node of this
 * graph or a live graph allocation; not freed twice in one graph. */
static CUresult check_free_node(struct graph *g, CUdeviceptr dptr)
{
	if (graph_frees(g, dptr))
		return CUDA_ERROR_INVALID_VALUE;
	if (graph_allocates(g, dptr))
		return CUDA_SUCCESS;
	struct alloc *a = alloc_find(dptr);
	if (a && a->kind == A_GRAPH && a->live)
		return CUDA_SUCCESS;
	return CUDA_ERROR_INVALID_VALUE;
}

static CUresult check_alloc_props(const CUmemPoolProps *pp)
{
	if (pp->handleTypes != CU_MEM_HANDLE_TYPE_NONE)
		return CUDA_ERROR_INVALID_VALUE;
	if (pp->allocType != CU_MEM_ALLOCATION_TYPE_PINNED)
		return CUDA_ERROR_INVALID_VALUE;
	if (pp->location.type != CU_MEM_LOCATION_TYPE_DEVICE || !dev_ok(pp->location.id))
		return CUDA_ERROR_INVALID_VALUE;
	return CUDA_SUCCESS;
}

/* accessDescs of a memory node (inferred from the documentation): device
 * locations only, each device at most once, flags none/read/readwrite, at
 * most one per device. Kept on the node and returned by
 * cuGraphMemAllocNodeGetParams. */
static CUresult alloc_access(struct allocp *al, const CUmemAccessDesc *acc, size_t n)
{
	if (n && !acc)
		return CUDA_ERROR_INVALID_VALUE;
	if (n > (size_t)ndev())
		return CUDA_ERROR_INVALID_VALUE;
	for (size_t i = 0; i < n; i++) {
		if (acc[i].location.type != CU_MEM_LOCATION_TYPE_DEVICE || !dev_ok(acc[i].location.id) ||
		    acc[i].flags > CU_MEM_ACCESS_FLAGS_PROT_READWRITE)
			return CUDA_ERROR_INVALID_VALUE;
		for (size_t j = 0; j < i; j++)
			if (acc[j].location.id == acc[i].location.id)
				return CUDA_ERROR_INVALID_VALUE;
		al->acc[i] = acc[i];
	}
	al->nacc = n;
	return CUDA_SUCCESS;
}

/* Common front end of the explicit node-adding calls. */
static CUresult add_node_common(CUgraphNode *ph, CUgraph hg, const CUgraphNode *deps, size_t nd, struct nparams *p)
{
	if (!ph)
		return CUDA_ERROR_INVALID_VALUE;
	struct graph *g = reg_find(hg, K_GRAPH);
	if (!g || g->owner)
		return CUDA_ERROR_INVALID_VALUE;
	CUresult rc = check_deps(g, deps, nd);
	if (rc)
		return rc;
	if (p->type == CU_GRAPH_NODE_TYPE_MEM_ALLOC) {
		if ((rc = check_alloc_props(&p->al.props)))
			return rc;
		if (p->al.size == 0)
			return CUDA_ERROR_INVALID_VALUE;
		if ((rc = graph_addr_new(&p->al)))
			return rc;
	}
	if (p->type == CU_GRAPH_NODE_TYPE_MEM_FREE && (rc = check_free_node(g, p->fr)))
		return rc;
	struct node **dn = calloc(nd + 1, sizeof *dn);
	for (size_t i = 0; i < nd; i++)
		dn[i] = reg_find(deps[i], K_NODE);
	struct node *n = node_add(g, p, dn, nd);
	free(dn);
	*ph = (CUgraphNode)n;
	return CUDA_SUCCESS;
}

/* Child graph node: clone (no memory nodes: else 801) or move (cuda-facts §3). */
static CUresult child_params(struct nparams *p, CUgraph hchild, int ownership, struct graph *parent)
{
	struct graph *c = reg_find(hchild, K_GRAPH);
	if (!c || c->owner || c == parent || c->capturing)
		return CUDA_ERROR_INVALID_VALUE;
	p->type = CU_GRAPH_NODE_TYPE_GRAPH;
	if (ownership == CU_GRAPH_CHILD_GRAPH_OWNERSHIP_MOVE) {
		if (c->nexec)
			return CUDA_ERROR_INVALID_VALUE;
		p->child = c;
		return CUDA_SUCCESS;
	}
	if (ownership != CU_GRAPH_CHILD_GRAPH_OWNERSHIP_CLONE)
		return CUDA_ERROR_INVALID_VALUE;
	if (graph_has_mem(c))
		return CUDA_ERROR_NOT_SUPPORTED;
	p->child = graph_clone(c);
	return CUDA_SUCCESS;
}

/* ------------------------------------------------------------------------ */
/* capture: adding nodes                                                     */

static CUresult cap_add(struct capture *c, struct stream *s, struct nparams *p, struct node **out)
{
	(void)c;
	struct node *n = node_add(c->g, p, s->deps, s->ndeps);
	set_deps(&s->deps, &s->ndeps, &n, 1);
	if (out)
		*out = n;
	return CUDA_SUCCESS;
}

/* ------------------------------------------------------------------------ */
/* exec snapshots                                                            */

static void xg_free(struct xg *x)
{
	if (!x)
		return;
	for (size_t i = 0; i < x->n; i++) {
		if (x->v[i].type == CU_GRAPH_NODE_TYPE_KERNEL)
			kp_free(&x->v[i].p.k);
		np_arrays_free(&x->v[i].p);
		free(x->v[i].deps);
		xg_free(x->v[i].child);
	}
	free(x->v);
	free(x->order);
	free(x);
}

static CUresult xg_build(const struct graph *g, struct xg **out)
{
	struct xg *x = calloc(1, sizeof *x);
	x->n = g->n;
	x->v = calloc(g->n + 1, sizeof *x->v);
	x->order = calloc(g->n + 1, sizeof *x->order);
	for (size_t i = 0; i < g->n; i++) {
		const struct node *n = g->nodes[i];
		struct xnode *v = &x->v[i];
		v->src = (CUgraphNode)n;
		v->src_id = n->id;
		v->type = n->p.type;
		v->p = n->p;
		v->p.child = NULL;
		v->p.body = NULL, v->p.nbody = 0; /* bodies are not run here */
		np_own(&v->p);
		v->enabled = 1;
		v->ndeps = n->ndeps;
		v->deps = calloc(n->ndeps + 1, sizeof *v->deps);
		for (size_t j = 0; j < n->ndeps; j++)
			v->deps[j] = node_index(g, n->deps[j]);
		if (n->p.type == CU_GRAPH_NODE_TYPE_GRAPH && n->p.child) {
			CUresult rc = xg_build(n->p.child, &v->child);
			if (rc) {
				xg_free(x);
				return rc;
			}
		}
	}
	/* topological order, ties by creation order */
	char *done = calloc(g->n + 1, 1);
	for (size_t k = 0; k < g->n; k++) {
		size_t pick = (size_t)-1;
		for (size_t i = 0; i < g->n && pick == (size_t)-1; i++) {
			if (done[i])
				continue;
			size_t j;
			for (j = 0; j < x->v[i].ndeps; j++)
				if (!done[x->v[i].deps[j]])
					break;
			if (j == x->v[i].ndeps)
				pick = i;
		}
		if (pick == (size_t)-1) {
			free(done);
			xg_free(x);
			return CUDA_ERROR_INVALID_VALUE; /* cycle */
		}
		done[pick] = 1;
		x->order[k] = pick;
	}
	free(done);
	*out = x;
	return CUDA_SUCCESS;
}

/* Sum of the exec's allocation sizes on device dev (2 MiB granules), recursively. */
static size_t xg_alloc_bytes(const struct xg *x, int dev)
{
	size_t s = 0;
	for (size_t i = 0; i < x->n; i++) {
		if (x->v[i].type == CU_GRAPH_NODE_TYPE_MEM_ALLOC && x->v[i].p.al.props.location.id == dev)
			s += round_up(x->v[i].p.al.size, POOL_GRAN);
		if (x->v[i].child)
			s += xg_alloc_bytes(x->v[i].child, dev);
	}
	return s;
}

/* Graph memory is reserved in 32 MiB chunks at launch/upload (cuda-facts §7),
 * on the device each memory node allocates on (its poolProps.location),
 * whichever context launches the exec (inferred). */
static void exec_reserve(struct exec *e)
{
	for (int d = 0; d < ndev(); d++) {
		size_t need = xg_alloc_bytes(e->x, d);
		if (!need)
			continue;
		need = round_up(need, GRAPH_CHUNK);
		if (!e->res) {
			e->res = calloc(1, sizeof *e->res);
			e->res->exec = e;
			e->res->next = g_gres;
			g_gres = e->res;
		}
		if (e->res->bytes[d] < need)
			e->res->bytes[d] = need;
	}
	graph_mem_high();
}

/* Walk the exec's alloc nodes: mode 0 = count live ones, 1 = free live ones. */
static int xg_live_allocs(const struct xg *x, int do_free)
{
	int cnt = 0;
	for (size_t i = 0; i < x->n; i++) {
		if (x->v[i].type == CU_GRAPH_NODE_TYPE_MEM_ALLOC) {
			struct alloc *a = alloc_find(x->v[i].p.al.dptr);
			if (a && a->live) {
				cnt++;
				if (do_free)
					free_any(a->addr);
			}
		}
		if (x->v[i].child)
			cnt += xg_live_allocs(x->v[i].child, do_free);
	}
	return cnt;
}

static void xg_run(const struct xg *x, struct exec *e)
{
	for (size_t k = 0; k < x->n; k++) {
		const struct xnode *v = &x->v[x->order[k]];
		switch (v->type) {
		case CU_GRAPH_NODE_TYPE_KERNEL:
			if (v->enabled)
				kp_run(&v->p.k);
			break;
		case CU_GRAPH_NODE_TYPE_MEMSET:
			if (v->enabled)
				memset_run(&v->p.ms);
			break;
		case CU_GRAPH_NODE_TYPE_MEMCPY:
			if (v->enabled)
				memcpy_run(&v->p.cp);
			break;
		case CU_GRAPH_NODE_TYPE_HOST:
			if (v->enabled && v->p.hp.fn)
				v->p.hp.fn(v->p.hp.userData);
			break;
		case CU_GRAPH_NODE_TYPE_GRAPH:
			if (v->child)
				xg_run(v->child, e);
			break;
		case CU_GRAPH_NODE_TYPE_MEM_ALLOC: {
			struct alloc *a = alloc_find(v->p.al.dptr);
			if (a) {
				a->live = 1;
				a->res = e->res;
			}
			break;
		}
		case CU_GRAPH_NODE_TYPE_MEM_FREE: {
			struct alloc *a = alloc_find(v->p.fr);
			if (a && a->kind == A_GRAPH && a->live)
				free_any(a->addr);
			break;
		}
		default:
			break;
		}
	}
}

static struct xnode *xg_find(struct xg *x, const struct node *n)
{
	for (size_t i = 0; i < x->n; i++)
		if (x->v[i].src_id == n->id)
			return &x->v[i];
	return NULL;
}

/* ------------------------------------------------------------------------ */
/* error strings                                                             */

struct errname {
	int code;
	const char *name, *str;
};

static const struct errname g_errs[] = {
    {0, "CUDA_SUCCESS", "no error"},
    {1, "CUDA_ERROR_INVALID_VALUE", "invalid argument"},
    {2, "CUDA_ERROR_OUT_OF_MEMORY", "out of memory"},
    {3, "CUDA_ERROR_NOT_INITIALIZED", "initialization error"},
    {4, "CUDA_ERROR_DEINITIALIZED", "driver shutting down"},
    {100, "CUDA_ERROR_NO_DEVICE", "no CUDA-capable device is detected"},
    {101, "CUDA_ERROR_INVALID_DEVICE", "invalid device ordinal"},
    {201, "CUDA_ERROR_INVALID_CONTEXT", "invalid device context"},
    {400, "CUDA_ERROR_INVALID_HANDLE", "invalid resource handle"},
    {401, "CUDA_ERROR_ILLEGAL_STATE", "the operation cannot be performed in the present state"},
    {500, "CUDA_ERROR_NOT_FOUND", "named symbol not found"},
    {600, "CUDA_ERROR_NOT_READY", "device not ready"},
    {801, "CUDA_ERROR_NOT_SUPPORTED", "operation not supported"},
    {900, "CUDA_ERROR_STREAM_CAPTURE_UNSUPPORTED", "operation not permitted when stream is capturing"},
    {901, "CUDA_ERROR_STREAM_CAPTURE_INVALIDATED", "operation failed due to a previous error during capture"},
    {902, "CUDA_ERROR_STREAM_CAPTURE_MERGE", "operation would result in a merge of separate capture sequences"},
    {903, "CUDA_ERROR_STREAM_CAPTURE_UNMATCHED", "capture was not ended in the same stream as it began"},
    {904, "CUDA_ERROR_STREAM_CAPTURE_UNJOINED", "capturing stream has unjoined work"},
    {905, "CUDA_ERROR_STREAM_CAPTURE_ISOLATION", "dependency created on uncaptured work in another stream"},
    {906, "CUDA_ERROR_STREAM_CAPTURE_IMPLICIT",
     "operation would make the legacy stream depend on a capturing blocking stream"},
    {907, "CUDA_ERROR_CAPTURED_EVENT", "operation not permitted on an event last recorded in a capturing stream"},
    {908, "CUDA_ERROR_STREAM_CAPTURE_WRONG_THREAD",
     "attempt to terminate a thread-local capture sequence from another thread"},
    {910, "CUDA_ERROR_GRAPH_EXEC_UPDATE_FAILURE",
     "the graph update was not performed because it included changes which violated constraints specific to instantiated graph update"},
    {999, "CUDA_ERROR_UNKNOWN", "unknown error"},
};

static const struct errname *err_lookup(CUresult e)
{
	for (size_t i = 0; i < sizeof g_errs / sizeof g_errs[0]; i++)
		if (g_errs[i].code == (int)e)
			return &g_errs[i];
	return NULL;
}

DEF(cuGetErrorName, PFN_cuGetErrorName_v6000, (CUresult error, const char **pStr))
{
	if (!pStr)
		return CUDA_ERROR_INVALID_VALUE;
	const struct errname *e = err_lookup(error);
	*pStr = e ? e->name : NULL;
	return e ? CUDA_SUCCESS : CUDA_ERROR_INVALID_VALUE;
}

DEF(cuGetErrorString, PFN_cuGetErrorString_v6000, (CUresult error, const char **pStr))
{
	if (!pStr)
		return CUDA_ERROR_INVALID_VALUE;
	const struct errname *e = err_lookup(error);
	*pStr = e ? e->str : NULL;
	return e ? CUDA_SUCCESS : CUDA_ERROR_INVALID_VALUE;
}

/* ------------------------------------------------------------------------ */
/* init, device, context                                                     */

DEF(cuInit, PFN_cuInit_v2000, (unsigned int Flags))
{
	ENTER_OBJ();
	return Flags ? CUDA_ERROR_INVALID_VALUE : CUDA_SUCCESS;
}

DEF(cuDriverGetVersion, PFN_cuDriverGetVersion_v2020, (int *driverVersion))
{
	if (!driverVersion)
		return CUDA_ERROR_INVALID_VALUE;
	*driverVersion = DRIVER_VERSION;
	return CUDA_SUCCESS;
}

/* Not supported by the stand-in: the private runtime-driver tables. */
DEF(cuGetExportTable, PFN_cuGetExportTable_v3000, (const void **ppExportTable, const CUuuid *pExportTableId))
{
	(void)ppExportTable;
	(void)pExportTableId;
	return CUDA_ERROR_NOT_SUPPORTED;
}

DEF(cuDeviceGet, PFN_cuDeviceGet_v2000, (CUdevice * device, int ordinal))
{
	if (!device)
		return CUDA_ERROR_INVALID_VALUE;
	if (!dev_ok(ordinal))
		return CUDA_ERROR_INVALID_DEVICE;
	*device = ordinal;
	return CUDA_SUCCESS;
}

DEF(cuDeviceGetCount, PFN_cuDeviceGetCount_v2000, (int *count))
{
	if (!count)
		return CUDA_ERROR_INVALID_VALUE;
	*count = ndev();
	return CUDA_SUCCESS;
}

DEF(cuDeviceGetName, PFN_cuDeviceGetName_v2000, (char *name, int len, CUdevice dev))
{
	if (!name || len <= 0)
		return CUDA_ERROR_INVALID_VALUE;
	if (!dev_ok(dev))
		return CUDA_ERROR_INVALID_DEVICE;
	snprintf(name, (size_t)len, "cgshim CPU stand-in");
	return CUDA_SUCCESS;
}

DEF(cuDeviceTotalMem_v2, PFN_cuDeviceTotalMem_v3020, (size_t * bytes, CUdevice dev))
{
	if (!bytes)
		return CUDA_ERROR_INVALID_VALUE;
	if (!dev_ok(dev))
		return CUDA_ERROR_INVALID_DEVICE;
	*bytes = TOTAL_MEM;
	return CUDA_SUCCESS;
}

DEF(cuDeviceGetAttribute, PFN_cuDeviceGetAttribute_v2000, (int *pi, CUdevice_attribute attrib, CUdevice dev))
{
	if (!pi)
		return CUDA_ERROR_INVALID_VALUE;
	if (!dev_ok(dev))
		return CUDA_ERROR_INVALID_DEVICE;
	switch (attrib) {
	case CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR:
		*pi = 9;
		break;
	case CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR:
		*pi = 0;
		break;
	case CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT:
		*pi = 132;
		break;
	case CU_DEVICE_ATTRIBUTE_WARP_SIZE:
		*pi = 32;
		break;
	case CU_DEVICE_ATTRIBUTE_MAX_THREADS_PER_BLOCK:
		*pi = 1024;
		break;
	case CU_DEVICE_ATTRIBUTE_MAX_BLOCK_DIM_X:
	case CU_DEVICE_ATTRIBUTE_MAX_BLOCK_DIM_Y:
		*pi = 1024;
		break;
	case CU_DEVICE_ATTRIBUTE_MAX_BLOCK_DIM_Z:
		*pi = 64;
		break;
	case CU_DEVICE_ATTRIBUTE_MAX_GRID_DIM_X:
		*pi = 2147483647;
		break;
	case CU_DEVICE_ATTRIBUTE_MAX_GRID_DIM_Y:
	case CU_DEVICE_ATTRIBUTE_MAX_GRID_DIM_Z:
		*pi = 65535;
		break;
	case CU_DEVICE_ATTRIBUTE_UNIFIED_ADDRESSING:
	case CU_DEVICE_ATTRIBUTE_MEMORY_POOLS_SUPPORTED:
	case CU_DEVICE_ATTRIBUTE_CONCURRENT_KERNELS:
		*pi = 1;
		break;
	case CU_DEVICE_ATTRIBUTE_MEMPOOL_SUPPORTED_HANDLE_TYPES:
		*pi = CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR;
		break;
	default:
		*pi = 0;
		break;
	}
	return CUDA_SUCCESS;
}

DEF(cuDevicePrimaryCtxRetain, PFN_cuDevicePrimaryCtxRetain_v7000, (CUcontext * pctx, CUdevice dev))
{
	if (!pctx)
		return CUDA_ERROR_INVALID_VALUE;
	if (!dev_ok(dev))
		return CUDA_ERROR_INVALID_DEVICE;
	*pctx = PRIMARY_CTX_OF(dev);
	return CUDA_SUCCESS;
}

DEF(cuDevicePrimaryCtxRelease, PFN_cuDevicePrimaryCtxRelease_v7000, (CUdevice dev))
{
	return dev_ok(dev) ? CUDA_SUCCESS : CUDA_ERROR_INVALID_DEVICE;
}

DEF(cuDevicePrimaryCtxRelease_v2, PFN_cuDevicePrimaryCtxRelease_v11000, (CUdevice dev))
{
	return dev_ok(dev) ? CUDA_SUCCESS : CUDA_ERROR_INVALID_DEVICE;
}

DEF(cuCtxGetCurrent, PFN_cuCtxGetCurrent_v4000, (CUcontext * pctx))
{
	if (!pctx)
		return CUDA_ERROR_INVALID_VALUE;
	*pctx = t_ctx;
	return CUDA_SUCCESS;
}

DEF(cuCtxSetCurrent, PFN_cuCtxSetCurrent_v4000, (CUcontext ctx))
{
	if (!ctx_ok(ctx))
		return CUDA_ERROR_INVALID_CONTEXT;
	t_ctx = ctx;
	return CUDA_SUCCESS;
}

DEF(cuCtxGetDevice, PFN_cuCtxGetDevice_v2000, (CUdevice * device))
{
	trace(__func__); /* counted by run_model.py after_begin_flags */
	if (!device)
		return CUDA_ERROR_INVALID_VALUE;
	if (!t_ctx) /* as the driver: no context current */
		return CUDA_ERROR_INVALID_CONTEXT;
	*device = cur_dev();
	return CUDA_SUCCESS;
}

DEF(cuCtxGetDevice_v2, PFN_cuCtxGetDevice_v13000, (CUdevice * device, CUcontext ctx))
{
	if (!device)
		return CUDA_ERROR_INVALID_VALUE;
	if (!ctx_ok(ctx) || (!ctx && !t_ctx))
		return CUDA_ERROR_INVALID_CONTEXT;
	*device = ctx ? ctx_dev(ctx) : cur_dev();
	return CUDA_SUCCESS;
}

/* capture-map.md: synchronising the device waits for the capturing
 * streams too: refused (900) and every live capture invalidated, in every
 * mode and from every thread. */
static CUresult device_sync_call(void)
{
	int hit = 0;
	for (struct capture *c = g_caps; c; c = c->next) {
		c->invalid = 1;
		hit = 1;
	}
	return hit ? CUDA_ERROR_STREAM_CAPTURE_UNSUPPORTED : CUDA_SUCCESS;
}

DEF(cuCtxSynchronize, PFN_cuCtxSynchronize_v2000, (void))
{
	sync_wait_outside(1);
	ENTER_OBJ();
	CUresult rc = device_sync_call();
	if (rc)
		return rc;
	pools_sync_release();
	return CUDA_SUCCESS;
}

/* CUDA 13's form, which its runtime's cudaDeviceSynchronize asks for: the
 * context argument (NULL = current) selects the context; only the primary
 * one exists here. */
DEF(cuCtxSynchronize_v2, PFN_cuCtxSynchronize_v13000, (CUcontext ctx))
{
	sync_wait_outside(1);
	ENTER_OBJ();
	if (!ctx_ok(ctx))
		return CUDA_ERROR_INVALID_CONTEXT;
	CUresult rc = device_sync_call();
	if (rc)
		return rc;
	pools_sync_release();
	return CUDA_SUCCESS;
}

/* ------------------------------------------------------------------------ */
/* streams and events                                                        */

DEF(cuStreamCreate, PFN_cuStreamCreate_v2000, (CUstream * phStream, unsigned int Flags))
{
	ENTER_OBJ();
	if (!phStream || (Flags & ~CU_STREAM_NON_BLOCKING))
		return CUDA_ERROR_INVALID_VALUE;
	struct stream *s = calloc(1, sizeof *s);
	s->flags = Flags;
	s->dev = cur_dev();
	s->id = g_next_stream_id++;
	reg_add(&s->o, K_STREAM);
	*phStream = (CUstream)s;
	return CUDA_SUCCESS;
}

static CUresult stream_destroy(CUstream hStream);

DEF(cuStreamDestroy_v2, PFN_cuStreamDestroy_v4000, (CUstream hStream))
{
	return stream_destroy(hStream);
}

/* the pre-4.0 export: the same call */
DEF(cuStreamDestroy, PFN_cuStreamDestroy_v2000, (CUstream hStream))
{
	return stream_destroy(hStream);
}

/* s out of the registry and freed (a destroy, a context reset). */
static void stream_free(struct stream *s)
{
	reg_del(&s->o);
	free(s->deps);
	free(s->edata);
	free(s);
}

static CUresult stream_destroy(CUstream hStream)
{
	ENTER_OBJ();
	struct stream *s = reg_find(hStream, K_STREAM);
	if (!s || s->legacy || s == t_pts || hStream == CU_STREAM_PER_THREAD)
		return CUDA_ERROR_INVALID_HANDLE;
	/* A stream forked into a capture may be destroyed in it: the driver
	 * answers 0 and the capture goes on without it (NCCL does so, measured
	 * on the H200 under tests/gpu/multigpu; valid_join-by-capture-
	 * dependencies). The origin's destroy is not measured: refused. */
	if (s->cap && s->cap->origin == s) {
		s->cap->invalid = 1;
		return CUDA_ERROR_STREAM_CAPTURE_UNSUPPORTED;
	}
	stream_free(s);
	return CUDA_SUCCESS;
}

static CUresult stream_query(CUstream h, int ptsz)
{
	ENTER_OBJ();
	struct stream *s = get_stream(h, ptsz);
	if (!s)
		return CUDA_ERROR_INVALID_HANDLE;
	if (s->cap) {
		s->cap->invalid = 1;
		return CUDA_ERROR_STREAM_CAPTURE_UNSUPPORTED;
	}
	if (s->legacy && blocking_capture_exists(1)) /* capture-map.md: 906, invalidated */
		return CUDA_ERROR_STREAM_CAPTURE_IMPLICIT;
	/* With no blocking capture, the legacy stream's query is capture-unsafe
	 * (900 and invalidated under a global capture; measured on the H200,
	 * driver 580, 2026-11-29: kernels/model/begin_flags B) */
	if (s->legacy)
		return unsafe_call();
	return CUDA_SUCCESS;
}

static CUresult stream_get_flags(CUstream h, unsigned *flags, int ptsz)
{
	ENTER_OBJ();
	struct stream *s = get_stream(h, ptsz);
	if (!s)
		return CUDA_ERROR_INVALID_HANDLE;
	if (!flags)
		return CUDA_ERROR_INVALID_VALUE;
	/* Not on a capturing stream: 900, and the capture is invalidated
	 * (measured on the H200, driver 580, 2026-11-28: begin, cuStreamGetFlags
	 * 900, the capture's end 901) */
	if (s->cap) {
		s->cap->invalid = 1;
		return CUDA_ERROR_STREAM_CAPTURE_UNSUPPORTED;
	}
	/* the per-thread stream never joins the legacy stream here
	 * (blocking_capture_exists): said as non-blocking */
	*flags = s == t_pts ? CU_STREAM_NON_BLOCKING : s->flags;
	return CUDA_SUCCESS;
}

DEF(cuStreamGetFlags, PFN_cuStreamGetFlags_v5050, (CUstream hStream, unsigned int *flags))
{
	return stream_get_flags(hStream, flags, 0);
}

DEF(cuStreamGetFlags_ptsz, PFN_cuStreamGetFlags_v7000_ptsz, (CUstream hStream, unsigned int *flags))
{
	return stream_get_flags(hStream, flags, 1);
}

DEF(cuStreamQuery, PFN_cuStreamQuery_v2000, (CUstream hStream))
{
	if (sync_waiting_on((uintptr_t)hStream))
		return CUDA_ERROR_NOT_READY;
	return stream_query(hStream, 0);
}

DEF(cuStreamQuery_ptsz, PFN_cuStreamQuery_v7000_ptsz, (CUstream hStream))
{
	return stream_query(hStream, 1);
}

/* Synchronising a capturing stream: 900 and the capture is invalidated (cuda-facts §6). */
static CUresult stream_sync(CUstream h, int ptsz)
{
	sync_wait_outside((uintptr_t)h);
	ENTER_OBJ();
	struct stream *s = get_stream(h, ptsz);
	if (!s)
		return CUDA_ERROR_INVALID_HANDLE;
	if (s->cap) {
		s->cap->invalid = 1;
		return CUDA_ERROR_STREAM_CAPTURE_UNSUPPORTED;
	}
	/* capture-map.md: the legacy stream under a blocking capture answers
	 * 906 in every mode and from every thread, before the unsafe class */
	if (s->legacy && blocking_capture_exists(1))
		return CUDA_ERROR_STREAM_CAPTURE_IMPLICIT;
	CUresult rc = unsafe_call();
	if (rc)
		return rc;
	pools_sync_release();
	return CUDA_SUCCESS;
}

DEF(cuStreamSynchronize, PFN_cuStreamSynchronize_v2000, (CUstream hStream))
{
	return stream_sync(hStream, 0);
}

DEF(cuStreamSynchronize_ptsz, PFN_cuStreamSynchronize_v7000_ptsz, (CUstream hStream))
{
	return stream_sync(hStream, 1);
}

static CUresult stream_get_id(CUstream h, unsigned long long *id, int ptsz)
{
	ENTER_OBJ();
	struct stream *s = get_stream(h, ptsz);
	if (!s)
		return CUDA_ERROR_INVALID_HANDLE;
	if (!id)
		return CUDA_ERROR_INVALID_VALUE;
	*id = s->id;
	return CUDA_SUCCESS;
}

DEF(cuStreamGetId, PFN_cuStreamGetId_v12000, (CUstream hStream, unsigned long long *streamId))
{
	return stream_get_id(hStream, streamId, 0);
}

DEF(cuStreamGetId_ptsz, PFN_cuStreamGetId_v12000_ptsz, (CUstream hStream, unsigned long long *streamId))
{
	return stream_get_id(hStream, streamId, 1);
}

DEF(cuEventCreate, PFN_cuEventCreate_v2000, (CUevent * phEvent, unsigned int Flags))
{
	ENTER_OBJ();
	if (!phEvent || (Flags & ~0xfu))
		return CUDA_ERROR_INVALID_VALUE;
	struct event *e = calloc(1, sizeof *e);
	e->flags = Flags;
	reg_add(&e->o, K_EVENT);
	*phEvent = (CUevent)e;
	return CUDA_SUCCESS;
}

/* e out of the registry and freed (a destroy, a context reset). */
static void event_free(struct event *e)
{
	reg_del(&e->o);
	free(e->deps);
	free(e);
}

DEF(cuEventDestroy_v2, PFN_cuEventDestroy_v4000, (CUevent hEvent))
{
	ENTER_OBJ();
	struct event *e = reg_find(hEvent, K_EVENT);
	if (!e)
		return CUDA_ERROR_INVALID_HANDLE;
	event_free(e);
	return CUDA_SUCCESS;
}

static CUresult event_record(CUevent he, CUstream hs, int ptsz)
{
	ENTER_OBJ();
	struct event *e = reg_find(he, K_EVENT);
	struct stream *s = get_stream(hs, ptsz);
	if (!e || !s)
		return CUDA_ERROR_INVALID_HANDLE;
	struct capture *c;
	CUresult rc = stream_op(s, &c);
	if (rc)
		return rc;
	e->cap = c;
	e->recorded_out = !c;
	if (c)
		set_deps(&e->deps, &e->ndeps, s->deps, s->ndeps);
	else
		set_deps(&e->deps, &e->ndeps, NULL, 0);
	return CUDA_SUCCESS;
}

DEF(cuEventRecord, PFN_cuEventRecord_v2000, (CUevent hEvent, CUstream hStream))
{
	return event_record(hEvent, hStream, 0);
}

DEF(cuEventRecord_ptsz, PFN_cuEventRecord_v7000_ptsz, (CUevent hEvent, CUstream hStream))
{
	return event_record(hEvent, hStream, 1);
}

/* Querying/synchronising an event last recorded in a capture: 907 (cuda-facts §6). */
static CUresult event_wait_host(CUevent he, int sync)
{
	ENTER_OBJ();
	struct event *e = reg_find(he, K_EVENT);
	if (!e)
		return CUDA_ERROR_INVALID_HANDLE;
	if (e->cap) {
		e->cap->invalid = 1; /* docs/capture-map.md: 907 and the capture invalidated */
		return CUDA_ERROR_CAPTURED_EVENT;
	}
	if (sync) {
		CUresult rc = unsafe_call();
		if (rc)
			return rc;
		pools_sync_release();
	}
	return CUDA_SUCCESS;
}

DEF(cuEventSynchronize, PFN_cuEventSynchronize_v2000, (CUevent hEvent))
{
	sync_wait_outside(1);
	return event_wait_host(hEvent, 1);
}

DEF(cuEventQuery, PFN_cuEventQuery_v2000, (CUevent hEvent))
{
	return event_wait_host(hEvent, 0);
}

static CUresult stream_wait_event(CUstream hs, CUevent he, unsigned flags, int ptsz)
{
	ENTER_OBJ();
	struct stream *s = get_stream(hs, ptsz);
	struct event *e = reg_find(he, K_EVENT);
	if (!s || !e)
		return CUDA_ERROR_INVALID_HANDLE;
	if (flags & ~1u)
		return CUDA_ERROR_INVALID_VALUE;
	struct capture *c = e->cap;
	if (!c) {
		struct capture *sc;
		/* capture-map.md: a capture waiting on an event recorded outside
		 * it, without the external flag, breaks isolation: 905, invalidated */
		if (s->cap && e->recorded_out && !(flags & CU_EVENT_WAIT_EXTERNAL)) {
			s->cap->invalid = 1;
			return CUDA_ERROR_STREAM_CAPTURE_ISOLATION;
		}
		return stream_op(s, &sc); /* waiting on completed work: nothing to do */
	}
	if (c->invalid)
		return CUDA_ERROR_STREAM_CAPTURE_INVALIDATED;
	if (s->cap == NULL) {
		if (s->legacy)
			return CUDA_ERROR_STREAM_CAPTURE_IMPLICIT;
		s->cap = c; /* fork: s joins the capture */
		set_deps(&s->deps, &s->ndeps, e->deps, e->ndeps);
		return CUDA_SUCCESS;
	}
	if (s->cap != c) {
		s->cap->invalid = 1;
		c->invalid = 1;
		return CUDA_ERROR_STREAM_CAPTURE_MERGE;
	}
	if (s->cap->invalid)
		return CUDA_ERROR_STREAM_CAPTURE_INVALIDATED;
	add_deps(&s->deps, &s->ndeps, e->deps, e->ndeps);
	return CUDA_SUCCESS;
}

DEF(cuStreamWaitEvent, PFN_cuStreamWaitEvent_v3020, (CUstream hStream, CUevent hEvent, unsigned int Flags))
{
	return stream_wait_event(hStream, hEvent, Flags, 0);
}

DEF(cuStreamWaitEvent_ptsz, PFN_cuStreamWaitEvent_v7000_ptsz, (CUstream hStream, CUevent hEvent, unsigned int Flags))
{
	return stream_wait_event(hStream, hEvent, Flags, 1);
}

/* ------------------------------------------------------------------------ */
/* stream capture                                                            */

static CUresult begin_capture(CUstream hs, int mode, int ptsz, struct graph *into, const CUgraphNode *deps, size_t nd)
{
	struct stream *s = get_stream(hs, ptsz);
	if (!s)
		return CUDA_ERROR_INVALID_HANDLE;
	if (mode < CU_STREAM_CAPTURE_MODE_GLOBAL || mode > CU_STREAM_CAPTURE_MODE_RELAXED)
		return CUDA_ERROR_INVALID_VALUE;
	if (s->legacy)
		return CUDA_ERROR_STREAM_CAPTURE_UNSUPPORTED;
	if (s->cap)
		return CUDA_ERROR_ILLEGAL_STATE;
	struct capture *c = calloc(1, sizeof *c);
	c->id = g_next_cap_id++;
	c->mode = mode;
	c->thr = pthread_self();
	c->origin = s;
	if (into) {
		c->g = into;
		c->to_graph = 1;
	} else {
		c->g = graph_new();
	}
	c->g->capturing = c;
	c->next = g_caps;
	g_caps = c;
	s->cap = c;
	struct node **dn = calloc(nd + 1, sizeof *dn);
	for (size_t i = 0; i < nd; i++)
		dn[i] = reg_find(deps[i], K_NODE);
	set_deps(&s->deps, &s->ndeps, dn, nd);
	free(dn);
	return CUDA_SUCCESS;
}

DEF(cuStreamBeginCapture, PFN_cuStreamBeginCapture_v10000, (CUstream hStream))
{
	ENTER_OBJ();
	return begin_capture(hStream, CU_STREAM_CAPTURE_MODE_GLOBAL, 0, NULL, NULL, 0);
}

DEF(cuStreamBeginCapture_ptsz, PFN_cuStreamBeginCapture_v10000_ptsz, (CUstream hStream))
{
	ENTER_OBJ();
	return begin_capture(hStream, CU_STREAM_CAPTURE_MODE_GLOBAL, 1, NULL, NULL, 0);
}

DEF(cuStreamBeginCapture_v2, PFN_cuStreamBeginCapture_v10010, (CUstream hStream, CUstreamCaptureMode mode))
{
	ENTER_OBJ();
	return begin_capture(hStream, (int)mode, 0, NULL, NULL, 0);
}

DEF(cuStreamBeginCapture_v2_ptsz, PFN_cuStreamBeginCapture_v10010_ptsz, (CUstream hStream, CUstreamCaptureMode mode))
{
	ENTER_OBJ();
	return begin_capture(hStream, (int)mode, 1, NULL, NULL, 0);
}

static CUresult begin_to_graph(CUstream hs, CUgraph hg, const CUgraphNode *deps, const CUgraphEdgeData *ed, size_t nd,
			       CUstreamCaptureMode mode, int ptsz)
{
	(void)ed;
	struct graph *g = reg_find(hg, K_GRAPH);
	if (!g || g->owner || g->capturing)
		return CUDA_ERROR_INVALID_VALUE;
	CUresult rc = check_deps(g, deps, nd);
	if (rc)
		return rc;
	return begin_capture(hs, (int)mode, ptsz, g, deps, nd);
}

DEF(cuStreamBeginCaptureToGraph, PFN_cuStreamBeginCaptureToGraph_v12030,
    (CUstream hStream, CUgraph hGraph, const CUgraphNode *dependencies, const CUgraphEdgeData *dependencyData,
     size_t numDependencies, CUstreamCaptureMode mode))
{
	ENTER_OBJ();
	return begin_to_graph(hStream, hGraph, dependencies, dependencyData, numDependencies, mode, 0);
}

DEF(cuStreamBeginCaptureToGraph_ptsz, PFN_cuStreamBeginCaptureToGraph_v12030_ptsz,
    (CUstream hStream, CUgraph hGraph, const CUgraphNode *dependencies, const CUgraphEdgeData *dependencyData,
     size_t numDependencies, CUstreamCaptureMode mode))
{
	ENTER_OBJ();
	return begin_to_graph(hStream, hGraph, dependencies, dependencyData, numDependencies, mode, 1);
}

/* Mark every ancestor-or-self of the nodes in `from` with g_mark. */
static void mark_ancestors(struct node *const *from, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		if (from[i]->mark == g_mark)
			continue;
		from[i]->mark = g_mark;
		mark_ancestors(from[i]->deps, from[i]->ndeps);
	}
}

static void capture_finish(struct capture *c, int destroy_graph)
{
	struct obj *o, *t;
	HASH_ITER(hh, g_objs, o, t)
	{
		if (o->kind == K_STREAM && ((struct stream *)o)->cap == c) {
			struct stream *s = (struct stream *)o;
			s->cap = NULL;
			set_deps(&s->deps, &s->ndeps, NULL, 0);
		} else if (o->kind == K_EVENT && ((struct event *)o)->cap == c) {
			struct event *e = (struct event *)o;
			e->cap = NULL;
			set_deps(&e->deps, &e->ndeps, NULL, 0);
		}
	}
	for (struct capture **pp = &g_caps; *pp; pp = &(*pp)->next) {
		if (*pp == c) {
			*pp = c->next;
			break;
		}
	}
	c->g->capturing = NULL;
	if (destroy_graph && !c->to_graph)
		graph_free(c->g);
	free(c);
}

static CUresult end_capture(CUstream hs, CUgraph *phGraph, int ptsz)
{
	ENTER_OBJ();
	struct stream *s = get_stream(hs, ptsz);
	if (!s)
		return CUDA_ERROR_INVALID_HANDLE;
	if (!phGraph)
		return CUDA_ERROR_INVALID_VALUE;
	struct capture *c = s->cap;
	if (!c) /* capture-map.md: a stream not capturing answers 401, not 903 */
		return CUDA_ERROR_ILLEGAL_STATE;
	if (c->origin != s) {
		/* A stream that joined the capture cannot end it: 903, and the
		 * capture is invalidated (its origin's end then answers 901:
		 * CuPy's test_stream_capture_failure2 asserts it on the GPU). */
		c->invalid = 1;
		return CUDA_ERROR_STREAM_CAPTURE_UNMATCHED;
	}
	if (c->mode != CU_STREAM_CAPTURE_MODE_RELAXED && !pthread_equal(c->thr, pthread_self())) {
		/* capture-map.md (H100): the 908 also ends the capture (status
		 * none after it, a later end answers 401). */
		*phGraph = NULL;
		capture_finish(c, 1);
		return CUDA_ERROR_STREAM_CAPTURE_WRONG_THREAD;
	}
	if (c->invalid) {
		*phGraph = NULL;
		capture_finish(c, 1);
		return CUDA_ERROR_STREAM_CAPTURE_INVALIDATED;
	}
	/* every forked stream must have been joined back into the origin */
	g_mark++;
	mark_ancestors(s->deps, s->ndeps);
	struct obj *o, *t;
	HASH_ITER(hh, g_objs, o, t)
	{
		if (o->kind != K_STREAM || o == &s->o || ((struct stream *)o)->cap != c)
			continue;
		struct stream *f = (struct stream *)o;
		for (size_t i = 0; i < f->ndeps; i++) {
			if (f->deps[i]->mark != g_mark) {
				*phGraph = NULL;
				capture_finish(c, 1);
				return CUDA_ERROR_STREAM_CAPTURE_UNJOINED;
			}
		}
	}
	struct graph *g = c->g;
	capture_finish(c, 0);
	*phGraph = (CUgraph)g;
	return CUDA_SUCCESS;
}

DEF(cuStreamEndCapture, PFN_cuStreamEndCapture_v10000, (CUstream hStream, CUgraph *phGraph))
{
	return end_capture(hStream, phGraph, 0);
}

DEF(cuStreamEndCapture_ptsz, PFN_cuStreamEndCapture_v10000_ptsz, (CUstream hStream, CUgraph *phGraph))
{
	return end_capture(hStream, phGraph, 1);
}

static CUresult capture_info(CUstream hs, int ptsz, CUstreamCaptureStatus *st, cuuint64_t *id, CUgraph *g,
			     const CUgraphNode **deps, const CUgraphEdgeData **ed, size_t *nd)
{
	ENTER_OBJ();
	struct stream *s = get_stream(hs, ptsz);
	if (!s)
		return CUDA_ERROR_INVALID_HANDLE;
	if (!st)
		return CUDA_ERROR_INVALID_VALUE;
	if (s->legacy && blocking_capture_exists(0))
		return CUDA_ERROR_STREAM_CAPTURE_IMPLICIT;
	struct capture *c = s->cap;
	if (!c) {
		*st = CU_STREAM_CAPTURE_STATUS_NONE;
		return CUDA_SUCCESS;
	}
	*st = c->invalid ? CU_STREAM_CAPTURE_STATUS_INVALIDATED : CU_STREAM_CAPTURE_STATUS_ACTIVE;
	if (id)
		*id = c->id;
	if (g)
		*g = (CUgraph)c->g;
	if (deps)
		*deps = (const CUgraphNode *)s->deps;
	if (ed) {
		free(s->edata);
		s->edata = calloc(s->ndeps + 1, sizeof *s->edata);
		*ed = s->edata;
	}
	if (nd)
		*nd = s->ndeps;
	return CUDA_SUCCESS;
}

DEF(cuStreamIsCapturing, PFN_cuStreamIsCapturing_v10000, (CUstream hStream, CUstreamCaptureStatus *captureStatus))
{
	return capture_info(hStream, 0, captureStatus, NULL, NULL, NULL, NULL, NULL);
}

DEF(cuStreamIsCapturing_ptsz, PFN_cuStreamIsCapturing_v10000_ptsz,
    (CUstream hStream, CUstreamCaptureStatus *captureStatus))
{
	return capture_info(hStream, 1, captureStatus, NULL, NULL, NULL, NULL, NULL);
}

DEF(cuStreamGetCaptureInfo, PFN_cuStreamGetCaptureInfo_v10010,
    (CUstream hStream, CUstreamCaptureStatus *captureStatus_out, cuuint64_t *id_out))
{
	return capture_info(hStream, 0, captureStatus_out, id_out, NULL, NULL, NULL, NULL);
}

DEF(cuStreamGetCaptureInfo_ptsz, PFN_cuStreamGetCaptureInfo_v10010_ptsz,
    (CUstream hStream, CUstreamCaptureStatus *captureStatus_out, cuuint64_t *id_out))
{
	return capture_info(hStream, 1, captureStatus_out, id_out, NULL, NULL, NULL, NULL);
}

DEF(cuStreamGetCaptureInfo_v2, PFN_cuStreamGetCaptureInfo_v11030,
    (CUstream hStream, CUstreamCaptureStatus *captureStatus_out, cuuint64_t *id_out, CUgraph *graph_out,
     const CUgraphNode **dependencies_out, size_t *numDependencies_out))
{
	return capture_info(hStream, 0, captureStatus_out, id_out, graph_out, dependencies_out, NULL,
			    numDependencies_out);
}

DEF(cuStreamGetCaptureInfo_v2_ptsz, PFN_cuStreamGetCaptureInfo_v11030_ptsz,
    (CUstream hStream, CUstreamCaptureStatus *captureStatus_out, cuuint64_t *id_out, CUgraph *graph_out,
     const CUgraphNode **dependencies_out, size_t *numDependencies_out))
{
	return capture_info(hStream, 1, captureStatus_out, id_out, graph_out, dependencies_out, NULL,
			    numDependencies_out);
}

DEF(cuStreamGetCaptureInfo_v3, PFN_cuStreamGetCaptureInfo_v12030,
    (CUstream hStream, CUstreamCaptureStatus *captureStatus_out, cuuint64_t *id_out, CUgraph *graph_out,
     const CUgraphNode **dependencies_out, const CUgraphEdgeData **edgeData_out, size_t *numDependencies_out))
{
	return capture_info(hStream, 0, captureStatus_out, id_out, graph_out, dependencies_out, edgeData_out,
			    numDependencies_out);
}

DEF(cuStreamGetCaptureInfo_v3_ptsz, PFN_cuStreamGetCaptureInfo_v12030_ptsz,
    (CUstream hStream, CUstreamCaptureStatus *captureStatus_out, cuuint64_t *id_out, CUgraph *graph_out,
     const CUgraphNode **dependencies_out, const CUgraphEdgeData **edgeData_out, size_t *numDependencies_out))
{
	return capture_info(hStream, 1, captureStatus_out, id_out, graph_out, dependencies_out, edgeData_out,
			    numDependencies_out);
}

static CUresult update_cap_deps(CUstream hs, CUgraphNode *deps, size_t nd, unsigned flags, int ptsz)
{
	ENTER_OBJ();
	struct stream *s = get_stream(hs, ptsz);
	if (!s)
		return CUDA_ERROR_INVALID_HANDLE;
	if (flags > CU_STREAM_SET_CAPTURE_DEPENDENCIES)
		return CUDA_ERROR_INVALID_VALUE;
	if (!s->cap)
		return CUDA_ERROR_ILLEGAL_STATE;
	if (s->cap->invalid)
		return CUDA_ERROR_STREAM_CAPTURE_INVALIDATED;
	CUresult rc = check_deps(s->cap->g, deps, nd);
	if (rc)
		return rc;
	struct node **dn = calloc(nd + 1, sizeof *dn);
	for (size_t i = 0; i < nd; i++)
		dn[i] = reg_find(deps[i], K_NODE);
	if (flags == CU_STREAM_SET_CAPTURE_DEPENDENCIES)
		set_deps(&s->deps, &s->ndeps, dn, nd);
	else
		add_deps(&s->deps, &s->ndeps, dn, nd);
	free(dn);
	return CUDA_SUCCESS;
}

DEF(cuStreamUpdateCaptureDependencies, PFN_cuStreamUpdateCaptureDependencies_v11030,
    (CUstream hStream, CUgraphNode *dependencies, size_t numDependencies, unsigned int flags))
{
	return update_cap_deps(hStream, dependencies, numDependencies, flags, 0);
}

DEF(cuStreamUpdateCaptureDependencies_ptsz, PFN_cuStreamUpdateCaptureDependencies_v11030_ptsz,
    (CUstream hStream, CUgraphNode *dependencies, size_t numDependencies, unsigned int flags))
{
	return update_cap_deps(hStream, dependencies, numDependencies, flags, 1);
}

DEF(cuStreamUpdateCaptureDependencies_v2, PFN_cuStreamUpdateCaptureDependencies_v12030,
    (CUstream hStream, CUgraphNode *dependencies, const CUgraphEdgeData *dependencyData, size_t numDependencies,
     unsigned int flags))
{
	(void)dependencyData;
	return update_cap_deps(hStream, dependencies, numDependencies, flags, 0);
}

DEF(cuStreamUpdateCaptureDependencies_v2_ptsz, PFN_cuStreamUpdateCaptureDependencies_v12030_ptsz,
    (CUstream hStream, CUgraphNode *dependencies, const CUgraphEdgeData *dependencyData, size_t numDependencies,
     unsigned int flags))
{
	(void)dependencyData;
	return update_cap_deps(hStream, dependencies, numDependencies, flags, 1);
}

DEF(cuThreadExchangeStreamCaptureMode, PFN_cuThreadExchangeStreamCaptureMode_v10010, (CUstreamCaptureMode * mode))
{
	if (!mode || (int)*mode < 0 || *mode > CU_STREAM_CAPTURE_MODE_RELAXED)
		return CUDA_ERROR_INVALID_VALUE;
	int old = t_mode;
	t_mode = (int)*mode;
	*mode = (CUstreamCaptureMode)old;
	return CUDA_SUCCESS;
}

/* ------------------------------------------------------------------------ */
/* kernels, host functions, copies, memsets                                  */

static CUresult launch_kernel_as(CUfunction f, unsigned gx, unsigned gy, unsigned gz, unsigned bx, unsigned by,
				 unsigned bz, unsigned shmem, CUstream hs, void **params, void **extra, int ptsz,
				 int coop)
{
	ENTER_OBJ();
	struct stream *s = get_stream(hs, ptsz);
	if (!s)
		return CUDA_ERROR_INVALID_HANDLE;
	struct nparams p = {.type = CU_GRAPH_NODE_TYPE_KERNEL};
	const unsigned grid[3] = {gx, gy, gz}, block[3] = {bx, by, bz};
	CUresult rc = kp_set(&p.k, f, grid, block, shmem, params, extra);
	if (rc)
		return rc;
	p.k.coop = coop;
	struct capture *c;
	if ((rc = stream_op(s, &c)))
		return rc;
	if (c)
		return cap_add(c, s, &p, NULL);
	kp_run(&p.k);
	kp_free(&p.k);
	return CUDA_SUCCESS;
}

static CUresult launch_kernel(CUfunction f, unsigned gx, unsigned gy, unsigned gz, unsigned bx, unsigned by,
			      unsigned bz, unsigned shmem, CUstream hs, void **params, void **extra, int ptsz)
{
	return launch_kernel_as(f, gx, gy, gz, bx, by, bz, shmem, hs, params, extra, ptsz, 0);
}

DEF(cuLaunchKernel, PFN_cuLaunchKernel_v4000,
    (CUfunction f, unsigned int gridDimX, unsigned int gridDimY, unsigned int gridDimZ, unsigned int blockDimX,
     unsigned int blockDimY, unsigned int blockDimZ, unsigned int sharedMemBytes, CUstream hStream, void **kernelParams,
     void **extra))
{
	return launch_kernel(f, gridDimX, gridDimY, gridDimZ, blockDimX, blockDimY, blockDimZ, sharedMemBytes, hStream,
			     kernelParams, extra, 0);
}

DEF(cuLaunchKernel_ptsz, PFN_cuLaunchKernel_v7000_ptsz,
    (CUfunction f, unsigned int gridDimX, unsigned int gridDimY, unsigned int gridDimZ, unsigned int blockDimX,
     unsigned int blockDimY, unsigned int blockDimZ, unsigned int sharedMemBytes, CUstream hStream, void **kernelParams,
     void **extra))
{
	return launch_kernel(f, gridDimX, gridDimY, gridDimZ, blockDimX, blockDimY, blockDimZ, sharedMemBytes, hStream,
			     kernelParams, extra, 1);
}

/* Inferred: a cooperative launch is a kernel launch whose node carries the
 * cooperative attribute (cuGraphKernelNodeGetAttribute answers 1); the
 * stand-in has no grid-wide barrier to honour, so it runs as any kernel. */
DEF(cuLaunchCooperativeKernel, PFN_cuLaunchCooperativeKernel_v9000,
    (CUfunction f, unsigned int gridDimX, unsigned int gridDimY, unsigned int gridDimZ, unsigned int blockDimX,
     unsigned int blockDimY, unsigned int blockDimZ, unsigned int sharedMemBytes, CUstream hStream,
     void **kernelParams))
{
	return launch_kernel_as(f, gridDimX, gridDimY, gridDimZ, blockDimX, blockDimY, blockDimZ, sharedMemBytes,
				hStream, kernelParams, NULL, 0, 1);
}

DEF(cuLaunchCooperativeKernel_ptsz, PFN_cuLaunchCooperativeKernel_v9000_ptsz,
    (CUfunction f, unsigned int gridDimX, unsigned int gridDimY, unsigned int gridDimZ, unsigned int blockDimX,
     unsigned int blockDimY, unsigned int blockDimZ, unsigned int sharedMemBytes, CUstream hStream,
     void **kernelParams))
{
	return launch_kernel_as(f, gridDimX, gridDimY, gridDimZ, blockDimX, blockDimY, blockDimZ, sharedMemBytes,
				hStream, kernelParams, NULL, 1, 1);
}

static CUresult launch_host(CUstream hs, CUhostFn fn, void *ud, int ptsz)
{
	ENTER_OBJ();
	struct stream *s = get_stream(hs, ptsz);
	if (!s)
		return CUDA_ERROR_INVALID_HANDLE;
	if (!fn)
		return CUDA_ERROR_INVALID_VALUE;
	struct capture *c;
	CUresult rc = stream_op(s, &c);
	if (rc)
		return rc;
	struct nparams p = {.type = CU_GRAPH_NODE_TYPE_HOST, .hp = {fn, ud}};
	if (c)
		return cap_add(c, s, &p, NULL);
	fn(ud);
	return CUDA_SUCCESS;
}

DEF(cuLaunchHostFunc, PFN_cuLaunchHostFunc_v10000, (CUstream hStream, CUhostFn fn, void *userData))
{
	return launch_host(hStream, fn, userData, 0);
}

DEF(cuLaunchHostFunc_ptsz, PFN_cuLaunchHostFunc_v10000_ptsz, (CUstream hStream, CUhostFn fn, void *userData))
{
	return launch_host(hStream, fn, userData, 1);
}

/*
 * A synchronous copy or memset (async 0) runs on the legacy stream, or on
 * the per-thread one for the _ptds forms (ptsz 1). Measured on an H200
 * (driver 580.159.04, 2026-11-29, syncprobe: cudaMemcpy D2H/H2D/D2D
 * pageable and pinned, cudaMemset, cuMemcpyDtoH/DtoD, cuMemsetD8): while a
 * blocking stream captures, in every mode and from any thread, 906 and
 * that capture invalidated; while only non-blocking streams capture, 0,
 * run now, no node (not the unsafe class: even a global capture lets it
 * run). The per-thread stream of a _ptds form is not the legacy one: 0 and
 * run now, unless it is itself capturing, then 900 and invalidated as a
 * synchronize of a capturing stream is (inferred, not measured).
 */
static CUresult sync_copy_call(int ptsz)
{
	if (!ptsz)
		return blocking_capture_exists(1) ? CUDA_ERROR_STREAM_CAPTURE_IMPLICIT : CUDA_SUCCESS;
	if (t_pts && t_pts->cap) {
		t_pts->cap->invalid = 1;
		return CUDA_ERROR_STREAM_CAPTURE_UNSUPPORTED;
	}
	return CUDA_SUCCESS;
}

/* A copy: dst/src memory types; a synchronous one: sync_copy_call. */
static CUresult do_copy(CUmemorytype dt, void *dst, CUmemorytype st, const void *src, size_t n, int async, CUstream hs,
			int ptsz)
{
	ENTER_OBJ();
	struct stream *s = NULL;
	struct capture *c = NULL;
	CUresult rc;
	if (async) {
		if (!(s = get_stream(hs, ptsz)))
			return CUDA_ERROR_INVALID_HANDLE;
		if ((rc = stream_op(s, &c)))
			return rc;
	} else if ((rc = sync_copy_call(ptsz))) {
		return rc;
	}
	if (n && (!dst || !src))
		return CUDA_ERROR_INVALID_VALUE;
	if (dt == CU_MEMORYTYPE_DEVICE || dt == CU_MEMORYTYPE_UNIFIED)
		if (!c && (rc = check_dev((CUdeviceptr)(uintptr_t)dst, n, dt == CU_MEMORYTYPE_DEVICE)))
			return rc;
	if (st == CU_MEMORYTYPE_DEVICE || st == CU_MEMORYTYPE_UNIFIED)
		if (!c && (rc = check_dev((CUdeviceptr)(uintptr_t)src, n, st == CU_MEMORYTYPE_DEVICE)))
			return rc;
	struct nparams p = {.type = CU_GRAPH_NODE_TYPE_MEMCPY};
	cp_linear(&p.cp, st, src, dt, dst, n);
	if (c)
		return cap_add(c, s, &p, NULL);
	if (n)
		memcpy_run(&p.cp);
	return CUDA_SUCCESS;
}

#define DPTR(p) ((void *)(uintptr_t)(p))

/* A synchronous copy or memset waits for the work before it (the legacy
 * stream's, or the per-thread one's for the _ptds forms: here any). */
#define SYNC_COPY(call) (sync_wait_outside(1), (call))

DEF(cuMemcpy, PFN_cuMemcpy_v4000, (CUdeviceptr dst, CUdeviceptr src, size_t ByteCount))
{
	return SYNC_COPY(
	    do_copy(CU_MEMORYTYPE_UNIFIED, DPTR(dst), CU_MEMORYTYPE_UNIFIED, DPTR(src), ByteCount, 0, NULL, 0));
}

DEF(cuMemcpy_ptds, PFN_cuMemcpy_v7000_ptds, (CUdeviceptr dst, CUdeviceptr src, size_t ByteCount))
{
	return SYNC_COPY(
	    do_copy(CU_MEMORYTYPE_UNIFIED, DPTR(dst), CU_MEMORYTYPE_UNIFIED, DPTR(src), ByteCount, 0, NULL, 1));
}

DEF(cuMemcpyAsync, PFN_cuMemcpyAsync_v4000, (CUdeviceptr dst, CUdeviceptr src, size_t ByteCount, CUstream hStream))
{
	return do_copy(CU_MEMORYTYPE_UNIFIED, DPTR(dst), CU_MEMORYTYPE_UNIFIED, DPTR(src), ByteCount, 1, hStream, 0);
}

DEF(cuMemcpyAsync_ptsz, PFN_cuMemcpyAsync_v7000_ptsz,
    (CUdeviceptr dst, CUdeviceptr src, size_t ByteCount, CUstream hStream))
{
	return do_copy(CU_MEMORYTYPE_UNIFIED, DPTR(dst), CU_MEMORYTYPE_UNIFIED, DPTR(src), ByteCount, 1, hStream, 1);
}

DEF(cuMemcpyHtoD_v2, PFN_cuMemcpyHtoD_v3020, (CUdeviceptr dstDevice, const void *srcHost, size_t ByteCount))
{
	return SYNC_COPY(
	    do_copy(CU_MEMORYTYPE_DEVICE, DPTR(dstDevice), CU_MEMORYTYPE_HOST, srcHost, ByteCount, 0, NULL, 0));
}

DEF(cuMemcpyHtoD_v2_ptds, PFN_cuMemcpyHtoD_v7000_ptds, (CUdeviceptr dstDevice, const void *srcHost, size_t ByteCount))
{
	return SYNC_COPY(
	    do_copy(CU_MEMORYTYPE_DEVICE, DPTR(dstDevice), CU_MEMORYTYPE_HOST, srcHost, ByteCount, 0, NULL, 1));
}

DEF(cuMemcpyDtoH_v2, PFN_cuMemcpyDtoH_v3020, (void *dstHost, CUdeviceptr srcDevice, size_t ByteCount))
{
	return SYNC_COPY(
	    do_copy(CU_MEMORYTYPE_HOST, dstHost, CU_MEMORYTYPE_DEVICE, DPTR(srcDevice), ByteCount, 0, NULL, 0));
}

DEF(cuMemcpyDtoH_v2_ptds, PFN_cuMemcpyDtoH_v7000_ptds, (void *dstHost, CUdeviceptr srcDevice, size_t ByteCount))
{
	return SYNC_COPY(
	    do_copy(CU_MEMORYTYPE_HOST, dstHost, CU_MEMORYTYPE_DEVICE, DPTR(srcDevice), ByteCount, 0, NULL, 1));
}

DEF(cuMemcpyDtoD_v2, PFN_cuMemcpyDtoD_v3020, (CUdeviceptr dstDevice, CUdeviceptr srcDevice, size_t ByteCount))
{
	return SYNC_COPY(do_copy(CU_MEMORYTYPE_DEVICE, DPTR(dstDevice), CU_MEMORYTYPE_DEVICE, DPTR(srcDevice),
				 ByteCount, 0, NULL, 0));
}

DEF(cuMemcpyDtoD_v2_ptds, PFN_cuMemcpyDtoD_v7000_ptds, (CUdeviceptr dstDevice, CUdeviceptr srcDevice, size_t ByteCount))
{
	return SYNC_COPY(do_copy(CU_MEMORYTYPE_DEVICE, DPTR(dstDevice), CU_MEMORYTYPE_DEVICE, DPTR(srcDevice),
				 ByteCount, 0, NULL, 1));
}

DEF(cuMemcpyHtoDAsync_v2, PFN_cuMemcpyHtoDAsync_v3020,
    (CUdeviceptr dstDevice, const void *srcHost, size_t ByteCount, CUstream hStream))
{
	return do_copy(CU_MEMORYTYPE_DEVICE, DPTR(dstDevice), CU_MEMORYTYPE_HOST, srcHost, ByteCount, 1, hStream, 0);
}

DEF(cuMemcpyHtoDAsync_v2_ptsz, PFN_cuMemcpyHtoDAsync_v7000_ptsz,
    (CUdeviceptr dstDevice, const void *srcHost, size_t ByteCount, CUstream hStream))
{
	return do_copy(CU_MEMORYTYPE_DEVICE, DPTR(dstDevice), CU_MEMORYTYPE_HOST, srcHost, ByteCount, 1, hStream, 1);
}

DEF(cuMemcpyDtoHAsync_v2, PFN_cuMemcpyDtoHAsync_v3020,
    (void *dstHost, CUdeviceptr srcDevice, size_t ByteCount, CUstream hStream))
{
	return do_copy(CU_MEMORYTYPE_HOST, dstHost, CU_MEMORYTYPE_DEVICE, DPTR(srcDevice), ByteCount, 1, hStream, 0);
}

DEF(cuMemcpyDtoHAsync_v2_ptsz, PFN_cuMemcpyDtoHAsync_v7000_ptsz,
    (void *dstHost, CUdeviceptr srcDevice, size_t ByteCount, CUstream hStream))
{
	return do_copy(CU_MEMORYTYPE_HOST, dstHost, CU_MEMORYTYPE_DEVICE, DPTR(srcDevice), ByteCount, 1, hStream, 1);
}

DEF(cuMemcpyDtoDAsync_v2, PFN_cuMemcpyDtoDAsync_v3020,
    (CUdeviceptr dstDevice, CUdeviceptr srcDevice, size_t ByteCount, CUstream hStream))
{
	return do_copy(CU_MEMORYTYPE_DEVICE, DPTR(dstDevice), CU_MEMORYTYPE_DEVICE, DPTR(srcDevice), ByteCount, 1,
		       hStream, 0);
}

DEF(cuMemcpyDtoDAsync_v2_ptsz, PFN_cuMemcpyDtoDAsync_v7000_ptsz,
    (CUdeviceptr dstDevice, CUdeviceptr srcDevice, size_t ByteCount, CUstream hStream))
{
	return do_copy(CU_MEMORYTYPE_DEVICE, DPTR(dstDevice), CU_MEMORYTYPE_DEVICE, DPTR(srcDevice), ByteCount, 1,
		       hStream, 1);
}

static CUresult do_memset(CUdeviceptr dst, unsigned value, unsigned esize, size_t n, int async, CUstream hs, int ptsz)
{
	ENTER_OBJ();
	struct stream *s = NULL;
	struct capture *c = NULL;
	CUresult rc;
	if (async) {
		if (!(s = get_stream(hs, ptsz)))
			return CUDA_ERROR_INVALID_HANDLE;
		if ((rc = stream_op(s, &c)))
			return rc;
	} else if ((rc = sync_copy_call(ptsz))) {
		return rc;
	}
	if (!c && (rc = check_dev(dst, n * esize, 1)))
		return rc;
	struct nparams p = {.type = CU_GRAPH_NODE_TYPE_MEMSET};
	p.ms.dst = dst;
	p.ms.value = value;
	p.ms.elementSize = esize;
	p.ms.width = n;
	p.ms.height = 1;
	p.ms.pitch = 0;
	if (c)
		return cap_add(c, s, &p, NULL);
	memset_run(&p.ms);
	return CUDA_SUCCESS;
}

DEF(cuMemsetD8_v2, PFN_cuMemsetD8_v3020, (CUdeviceptr dstDevice, unsigned char uc, size_t N))
{
	return SYNC_COPY(do_memset(dstDevice, uc, 1, N, 0, NULL, 0));
}

DEF(cuMemsetD8_v2_ptds, PFN_cuMemsetD8_v7000_ptds, (CUdeviceptr dstDevice, unsigned char uc, size_t N))
{
	return SYNC_COPY(do_memset(dstDevice, uc, 1, N, 0, NULL, 1));
}

/* Not hooked by the shim (the tests' unhooked capture breaker:
 * capture_threads query). */
DEF(cuMemsetD16_v2, PFN_cuMemsetD16_v3020, (CUdeviceptr dstDevice, unsigned short us, size_t N))
{
	return SYNC_COPY(do_memset(dstDevice, us, 2, N, 0, NULL, 0));
}

DEF(cuMemsetD32_v2, PFN_cuMemsetD32_v3020, (CUdeviceptr dstDevice, unsigned int ui, size_t N))
{
	return SYNC_COPY(do_memset(dstDevice, ui, 4, N, 0, NULL, 0));
}

DEF(cuMemsetD32_v2_ptds, PFN_cuMemsetD32_v7000_ptds, (CUdeviceptr dstDevice, unsigned int ui, size_t N))
{
	return SYNC_COPY(do_memset(dstDevice, ui, 4, N, 0, NULL, 1));
}

DEF(cuMemsetD8Async, PFN_cuMemsetD8Async_v3020, (CUdeviceptr dstDevice, unsigned char uc, size_t N, CUstream hStream))
{
	return do_memset(dstDevice, uc, 1, N, 1, hStream, 0);
}

DEF(cuMemsetD8Async_ptsz, PFN_cuMemsetD8Async_v7000_ptsz,
    (CUdeviceptr dstDevice, unsigned char uc, size_t N, CUstream hStream))
{
	return do_memset(dstDevice, uc, 1, N, 1, hStream, 1);
}

DEF(cuMemsetD32Async, PFN_cuMemsetD32Async_v3020, (CUdeviceptr dstDevice, unsigned int ui, size_t N, CUstream hStream))
{
	return do_memset(dstDevice, ui, 4, N, 1, hStream, 0);
}

DEF(cuMemsetD32Async_ptsz, PFN_cuMemsetD32Async_v7000_ptsz,
    (CUdeviceptr dstDevice, unsigned int ui, size_t N, CUstream hStream))
{
	return do_memset(dstDevice, ui, 4, N, 1, hStream, 1);
}

/* ------------------------------------------------------------------------ */
/* allocation                                                                */

/* cuMemGetInfo calls made in this process, the shim's included: a
 * scenario that finds this (dlsym) can check which of its hooks sampled
 * (kernels/model/quiet_sync.cu); the real driver has no such symbol. */
static _Atomic unsigned long meminfo_calls;
EXPORT unsigned long standin_meminfo_calls(void)
{
	return atomic_load(&meminfo_calls);
}

DEF(cuMemGetInfo_v2, PFN_cuMemGetInfo_v3020, (size_t * free, size_t *total))
{
	ENTER_OBJ();
	atomic_fetch_add(&meminfo_calls, 1);
	if (!free || !total)
		return CUDA_ERROR_INVALID_VALUE;
	*free = mem_free();
	*total = TOTAL_MEM;
	return CUDA_SUCCESS;
}

DEF(cuMemAlloc_v2, PFN_cuMemAlloc_v3020, (CUdeviceptr * dptr, size_t bytesize))
{
	ENTER_OBJ();
	CUresult rc = unsafe_call();
	if (rc)
		return rc;
	if (!dptr || !bytesize)
		return CUDA_ERROR_INVALID_VALUE;
	if (round_up(bytesize, PLAIN_GRAN) > mem_free())
		return CUDA_ERROR_OUT_OF_MEMORY;
	struct alloc *a = alloc_new(bytesize, A_PLAIN);
	if (!a)
		return CUDA_ERROR_OUT_OF_MEMORY;
	a->live = 1;
	g_plain_bytes += round_up(bytesize, PLAIN_GRAN);
	*dptr = a->addr;
	return CUDA_SUCCESS;
}

DEF(cuMemFree_v2, PFN_cuMemFree_v3020, (CUdeviceptr dptr))
{
	ENTER_OBJ();
	CUresult rc = unsafe_call();
	if (rc)
		return rc;
	if (dptr == 0)
		return CUDA_SUCCESS;
	return free_any(dptr);
}

/* ---- pinned host memory --------------------------------------------------
 * Plain host memory here, tracked so that frees and unregisters of unknown
 * pointers fail as the real driver's do. Capture-unsafe like cuMemAlloc
 * (docs/host-memory-capture.md: from another thread while a Global capture
 * is live the call fails with 900 and invalidates the capture; ThreadLocal
 * counts only the calling thread's captures; Relaxed allows it). */
struct host_blk {
	void *p;
	size_t size;
	int registered; /* 1: cuMemHostRegister'd user memory, 0: allocated here */
	struct host_blk *next;
};
static struct host_blk *g_host;

static struct host_blk **host_find(void *p)
{
	struct host_blk **b;
	for (b = &g_host; *b; b = &(*b)->next)
		if ((*b)->p == p)
			return b;
	return NULL;
}

static CUresult host_alloc(void **pp, size_t bytesize)
{
	CUresult rc = unsafe_call();
	struct host_blk *b;
	if (rc)
		return rc;
	if (!pp || !bytesize)
		return CUDA_ERROR_INVALID_VALUE;
	b = calloc(1, sizeof *b);
	if (!b || !(b->p = calloc(1, bytesize))) {
		free(b);
		return CUDA_ERROR_OUT_OF_MEMORY;
	}
	b->size = bytesize;
	b->next = g_host;
	g_host = b;
	*pp = b->p;
	return CUDA_SUCCESS;
}

static CUresult host_register(void *p, size_t bytesize)
{
	CUresult rc = unsafe_call();
	struct host_blk *b;
	if (rc)
		return rc;
	if (!p || !bytesize)
		return CUDA_ERROR_INVALID_VALUE;
	if (host_find(p))
		return CUDA_ERROR_HOST_MEMORY_ALREADY_REGISTERED;
	b = calloc(1, sizeof *b);
	if (!b)
		return CUDA_ERROR_OUT_OF_MEMORY;
	b->p = p;
	b->size = bytesize;
	b->registered = 1;
	b->next = g_host;
	g_host = b;
	return CUDA_SUCCESS;
}

/* Free (registered 0) or unregister (1) the block at p. */
static CUresult host_release(void *p, int registered)
{
	CUresult rc = unsafe_call();
	struct host_blk **bp, *b;
	if (rc)
		return rc;
	bp = host_find(p);
	if (!bp || (*bp)->registered != registered)
		return registered ? CUDA_ERROR_HOST_MEMORY_NOT_REGISTERED : CUDA_ERROR_INVALID_VALUE;
	b = *bp;
	*bp = b->next;
	if (!registered)
		free(b->p);
	free(b);
	return CUDA_SUCCESS;
}

DEF(cuMemHostAlloc, PFN_cuMemHostAlloc_v2020, (void **pp, size_t bytesize, unsigned int Flags))
{
	ENTER_OBJ();
	(void)Flags;
	return host_alloc(pp, bytesize);
}

/* The pre-3.2 export (32-bit size) answers 201 whatever the capture, the
 * mode or the thread on the H100/H200 (driver 580; inferred: a v1 entry
 * point refuses the v2 contexts today's API makes) and leaves a capture
 * alone (docs/host-memory-capture.md, tests/gpu/hostalloc_probe.cu). */
DEF(cuMemAllocHost, PFN_cuMemAllocHost_v2000, (void **pp, unsigned int bytesize))
{
	ENTER_OBJ();
	(void)pp;
	(void)bytesize;
	return CUDA_ERROR_INVALID_CONTEXT;
}

DEF(cuMemAllocHost_v2, PFN_cuMemAllocHost_v3020, (void **pp, size_t bytesize))
{
	ENTER_OBJ();
	return host_alloc(pp, bytesize);
}

DEF(cuMemHostRegister, PFN_cuMemHostRegister_v4000, (void *p, size_t bytesize, unsigned int Flags))
{
	ENTER_OBJ();
	(void)Flags;
	return host_register(p, bytesize);
}

DEF(cuMemHostRegister_v2, PFN_cuMemHostRegister_v6050, (void *p, size_t bytesize, unsigned int Flags))
{
	ENTER_OBJ();
	(void)Flags;
	return host_register(p, bytesize);
}

DEF(cuMemFreeHost, PFN_cuMemFreeHost_v2000, (void *p))
{
	ENTER_OBJ();
	return host_release(p, 0);
}

DEF(cuMemHostUnregister, PFN_cuMemHostUnregister_v4000, (void *p))
{
	ENTER_OBJ();
	return host_release(p, 1);
}

/* ---- modules and libraries ----------------------------------------------
 * No code: a module's functions are the .entry declarations of the PTX
 * text it is given (a function runs as a no-op), with the layout the PTX
 * gives their .param lists. As measured (docs/capture-map.md): a load
 * inside a capture succeeds and leaves the capture alone, in every mode and
 * from any thread; an unload is in the unsafe class (900, the capture
 * invalidated). Unknown handles give INVALID_HANDLE. */
#define MOD_MAXF 16
struct smod {
	struct obj o;
	int nf;
	struct sfunc *f[MOD_MAXF];
};

static struct sfunc g_sf[SF_SLOTS];
static int g_sf_free[SF_SLOTS], g_sf_nfree = -1; /* a stack of free slot indices */

static struct sfunc *sf_alloc(void)
{
	if (g_sf_nfree < 0) {
		for (int i = 0; i < SF_SLOTS; i++)
			g_sf_free[i] = SF_SLOTS - 1 - i; /* slot 0 first */
		g_sf_nfree = SF_SLOTS;
	}
	if (!g_sf_nfree)
		return NULL;
	struct sfunc *f = &g_sf[g_sf_free[--g_sf_nfree]];
	memset(f, 0, sizeof *f);
	f->used = 1;
	return f;
}

static void sf_release(struct sfunc *f)
{
	if (!f || !f->used)
		return;
	for (int d = 0; d < STANDIN_MAX_DEV; d++)
		if (f->func[d])
			sf_release(f->func[d]);
	reg_del(&f->o);
	f->used = 0;
	g_sf_free[g_sf_nfree++] = (int)(f - g_sf);
}

static const struct sfunc *sfunc_of(const void *h)
{
	const struct sfunc *f = reg_find(h, K_FUNC);
	return f ? f : reg_find(h, K_KERNEL);
}

/* Bytes of a PTX scalar type (.u64, .f32, .b8, ...); 0 if not one. */
static size_t ptx_type_size(const char *t, size_t n)
{
	if (n < 3 || t[0] != '.' || !strchr("usbf", t[1]))
		return 0;
	if (n == 3 && t[2] == '8')
		return 1;
	if (n == 4 && !strncmp(t + 2, "16", 2))
		return 2;
	if (n == 4 && !strncmp(t + 2, "32", 2))
		return 4;
	if (n == 4 && !strncmp(t + 2, "64", 2))
		return 8;
	return 0;
}

/* One .param declaration in [p, end): its size and alignment. */
static int ptx_param(const char *p, const char *end, size_t *size, size_t *align)
{
	size_t ts = 0, count = 1;
	*align = 0;
	while (p < end) {
		while (p < end && (*p == ' ' || *p == '\t' || *p == '\n' || *p == '\r'))
			p++;
		const char *w = p;
		while (p < end && !strchr(" \t\r\n[", *p))
			p++;
		if (p == w && p < end && *p == '[') {
			count = strtoul(p + 1, NULL, 10);
			break;
		}
		if ((size_t)(p - w) == 6 && !strncmp(w, ".align", 6)) {
			while (p < end && (*p == ' ' || *p == '\t'))
				p++;
			*align = strtoul(p, NULL, 10);
			while (p < end && *p >= '0' && *p <= '9')
				p++;
		} else if (!ts) {
			ts = ptx_type_size(w, (size_t)(p - w));
		}
	}
	if (!ts)
		return 0;
	*size = ts * count;
	if (!*align)
		*align = ts;
	return 1;
}

/* The .entry functions of a PTX text (at most MOD_MAXF, SF_MAXP parameters). */
static CUresult ptx_entries(struct smod *m, const char *img, int kind)
{
	size_t len = strnlen(img, 1u << 20);
	const char *end = img + len, *p = img;
	while (m->nf < MOD_MAXF && (p = memmem(p, (size_t)(end - p), ".entry", 6))) {
		p += 6;
		while (p < end && (*p == ' ' || *p == '\t'))
			p++;
		const char *nm = p;
		while (p < end && !strchr(" \t\r\n(", *p))
			p++;
		struct sfunc *f = sf_alloc();
		if (!f)
			return CUDA_ERROR_OUT_OF_MEMORY;
		snprintf(f->name, sizeof f->name, "%.*s", (int)(p - nm), nm);
		f->owner = m;
		const char *open = memchr(p, '(', (size_t)(end - p)),
			   *close = open ? memchr(open, ')', (size_t)(end - open)) : NULL;
		const char *body = memchr(p, '{', (size_t)(end - p));
		size_t off = 0;
		if (open && close && (!body || open < body)) {
			for (const char *q = open + 1; q < close && f->np < SF_MAXP;) {
				const char *d = memmem(q, (size_t)(close - q), ".param", 6), *e;
				size_t size, align;
				if (!d)
					break;
				d += 6;
				e = memchr(d, ',', (size_t)(close - d));
				e = e ? e : close;
				if (!ptx_param(d, e, &size, &align)) {
					sf_release(f);
					return CUDA_ERROR_INVALID_PTX;
				}
				off = round_up(off, align);
				f->off[f->np] = (uint32_t)off;
				f->size[f->np++] = (uint32_t)size;
				off += size;
				q = e;
			}
			p = close;
		}
		f->nbytes = off;
		reg_add(&f->o, kind);
		m->f[m->nf++] = f;
	}
	return CUDA_SUCCESS;
}

static CUresult handle_load(void **out, const void *image, int kind)
{
	ENTER_OBJ();
	if (!out || !image)
		return CUDA_ERROR_INVALID_VALUE;
	struct smod *m = calloc(1, sizeof *m);
	if (!m)
		return CUDA_ERROR_OUT_OF_MEMORY;
	CUresult rc = ptx_entries(m, image, kind == K_MODULE ? K_FUNC : K_KERNEL);
	if (rc) {
		for (int i = 0; i < m->nf; i++)
			sf_release(m->f[i]);
		free(m);
		return rc;
	}
	reg_add(&m->o, kind);
	*out = m;
	return CUDA_SUCCESS;
}

static CUresult handle_unload(void *h, int kind)
{
	ENTER_OBJ();
	struct smod *m = reg_find(h, kind);
	if (!m)
		return CUDA_ERROR_INVALID_HANDLE;
	CUresult rc = unsafe_call();
	if (rc)
		return rc;
	for (int i = m->nf - 1; i >= 0; i--) /* the first function's slot is the next one handed out */
		sf_release(m->f[i]);
	reg_del(&m->o);
	free(m);
	return CUDA_SUCCESS;
}

static CUresult handle_get(void **out, void *h, int kind, const char *name)
{
	ENTER_OBJ();
	struct smod *m = reg_find(h, kind);
	if (!out || !name)
		return CUDA_ERROR_INVALID_VALUE;
	if (!m)
		return CUDA_ERROR_INVALID_HANDLE;
	for (int i = 0; i < m->nf; i++)
		if (!strcmp(m->f[i]->name, name)) {
			*out = m->f[i];
			return CUDA_SUCCESS;
		}
	return CUDA_ERROR_NOT_FOUND;
}

DEF(cuModuleLoadData, PFN_cuModuleLoadData_v2000, (CUmodule * module, const void *image))
{
	return handle_load((void **)module, image, K_MODULE);
}

DEF(cuModuleUnload, PFN_cuModuleUnload_v2000, (CUmodule hmod))
{
	return handle_unload(hmod, K_MODULE);
}

/* Test hook (no CUDA name, so no shim sees it): a module unloaded as the
 * runtime unloads its own, through no entry point a preload can hook. */
EXPORT CUresult standin_module_unload_unhooked(CUmodule hmod)
{
	return handle_unload(hmod, K_MODULE);
}

DEF(cuModuleGetFunction, PFN_cuModuleGetFunction_v2000, (CUfunction * hfunc, CUmodule hmod, const char *name))
{
	return handle_get((void **)hfunc, hmod, K_MODULE, name);
}

DEF(cuLibraryGetKernel, PFN_cuLibraryGetKernel_v12000, (CUkernel * pKernel, CUlibrary library, const char *name))
{
	return handle_get((void **)pKernel, library, K_LIBRARY, name);
}

/* A library kernel's function in the current context (one per device's
 * primary context, as the driver has one per context: kprobe's
 * cuKernelGetFunction), made at its first need. NULL: no slot. */
static struct sfunc *kernel_func(struct sfunc *k)
{
	int d = cur_dev();
	if (!k->func[d]) {
		struct sfunc *f = sf_alloc();
		if (!f)
			return NULL;
		void *owner = k->owner;
		*f = *k;
		f->o = (struct obj){0};
		memset(f->func, 0, sizeof f->func);
		f->kern = k;
		f->owner = owner;
		reg_add(&f->o, K_FUNC);
		k->func[d] = f;
	}
	return k->func[d];
}

/* ---- the runtime's kernels ----------------------------------------------
 * Measured (docs/measurements.md, kprobe, H200 driver 580.159.04, CUDA 13.0,
 * 2026-11-29): the CUDA runtime launches kernel<<<>>> and cudaLaunchKernel
 * by a CUkernel (cudaGetKernel's, a library kernel of its fatbin), not by a
 * CUfunction; cuKernelGetFunction gives that kernel's function in the
 * current context (= cudaGetFuncBySymbol), and the cuFunc* queries answer
 * 400 on the CUkernel. Here the stand-in cudart asks standin_runtime_kernel
 * (no CUDA name, so no shim sees it: the runtime registers its fatbin
 * privately) for the CUkernel of each host function it launches: one per
 * function for the process, whose function in every context is the host
 * function itself (the stand-in has one function per kernel). */
#define HK_SLOTS 1024
struct hkern {
	struct obj o;
	void *fn;
};
static struct hkern g_hk[HK_SLOTS]; /* open addressing on fn; never freed, as the runtime's */
static struct smod *g_rt_lib;	    /* their library (cuKernelGetLibrary) */

static struct hkern *hk_find(const void *fn, int add)
{
	size_t i = (size_t)(((uint64_t)(uintptr_t)fn >> 4) * 0x9E3779B97F4A7C15ull >> 54) & (HK_SLOTS - 1);
	for (size_t n = 0; fn && n < HK_SLOTS; n++, i = (i + 1) & (HK_SLOTS - 1)) {
		if (g_hk[i].fn == fn)
			return &g_hk[i];
		if (!g_hk[i].fn) {
			if (!add)
				return NULL;
			g_hk[i].fn = (void *)fn;
			reg_add(&g_hk[i].o, K_HKERN);
			return &g_hk[i];
		}
	}
	return NULL;
}

/* Test hook (no CUDA name): the runtime's CUkernel of host function fn. */
EXPORT CUresult standin_runtime_kernel(CUkernel *out, const void *fn)
{
	ENTER_OBJ();
	struct hkern *k;
	if (!out || !fn)
		return CUDA_ERROR_INVALID_VALUE;
	if (!g_rt_lib && (g_rt_lib = calloc(1, sizeof *g_rt_lib)))
		reg_add(&g_rt_lib->o, K_LIBRARY);
	if (!(k = hk_find(fn, 1)))
		return CUDA_ERROR_OUT_OF_MEMORY;
	*out = (CUkernel)k;
	return CUDA_SUCCESS;
}

/* A launch handle's function in the current context, and its kernel
 * (kp_set). Measured (kprobe, 2026-11-29): a node launched by a CUkernel or
 * by that kernel's function gives back both, func and kern
 * (cuGraphKernelNodeGetParams_v2). A module's function has no kernel
 * (inferred). NULL: no memory. */
static CUfunction fn_resolve(CUfunction h, CUkernel *kern)
{
	struct hkern *hk = reg_find(h, K_HKERN);
	struct sfunc *k = reg_find(h, K_KERNEL), *f = reg_find(h, K_FUNC);
	*kern = NULL;
	if (hk) {
		*kern = (CUkernel)hk;
		return (CUfunction)hk->fn;
	}
	if (k) {
		*kern = (CUkernel)k;
		return (CUfunction)kernel_func(k);
	}
	if (f) {
		*kern = (CUkernel)f->kern;
		return h;
	}
	if ((hk = hk_find(h, 0)))
		*kern = (CUkernel)hk;
	return h;
}

/* The kernel's function in the current context. */
DEF(cuKernelGetFunction, PFN_cuKernelGetFunction_v12000, (CUfunction * pFunc, CUkernel kernel))
{
	ENTER_OBJ();
	struct sfunc *k = reg_find(kernel, K_KERNEL);
	struct hkern *hk = reg_find(kernel, K_HKERN);
	if (!pFunc)
		return CUDA_ERROR_INVALID_VALUE;
	if (hk) {
		*pFunc = (CUfunction)hk->fn;
		return CUDA_SUCCESS;
	}
	if (!k)
		return CUDA_ERROR_INVALID_HANDLE;
	if (!(*pFunc = (CUfunction)kernel_func(k)))
		return CUDA_ERROR_OUT_OF_MEMORY;
	return CUDA_SUCCESS;
}

DEF(cuKernelGetLibrary, PFN_cuKernelGetLibrary_v12050, (CUlibrary * pLib, CUkernel kernel))
{
	ENTER_OBJ();
	struct sfunc *k = reg_find(kernel, K_KERNEL);
	if (!pLib)
		return CUDA_ERROR_INVALID_VALUE;
	if (reg_find(kernel, K_HKERN) && g_rt_lib) {
		*pLib = (CUlibrary)g_rt_lib;
		return CUDA_SUCCESS;
	}
	if (!k)
		return CUDA_ERROR_INVALID_HANDLE;
	*pLib = k->owner;
	return CUDA_SUCCESS;
}

/* A module function's module; a library kernel's function gives its
 * library's handle (the stand-in has no per-context module of a library). */
DEF(cuFuncGetModule, PFN_cuFuncGetModule_v11000, (CUmodule * hmod, CUfunction hfunc))
{
	ENTER_OBJ();
	const struct sfunc *f = reg_find(hfunc, K_FUNC);
	if (!hmod)
		return CUDA_ERROR_INVALID_VALUE;
	if (!f)
		return CUDA_ERROR_INVALID_HANDLE;
	*hmod = f->owner;
	return CUDA_SUCCESS;
}

DEF(cuLibraryLoadData, PFN_cuLibraryLoadData_v12000,
    (CUlibrary * library, const void *code, CUjit_option *jitOptions, void **jitOptionsValues,
     unsigned int numJitOptions, CUlibraryOption *libraryOptions, void **libraryOptionValues,
     unsigned int numLibraryOptions))
{
	(void)jitOptions, (void)jitOptionsValues, (void)numJitOptions;
	(void)libraryOptions, (void)libraryOptionValues, (void)numLibraryOptions;
	return handle_load((void **)library, code, K_LIBRARY);
}

DEF(cuLibraryUnload, PFN_cuLibraryUnload_v12000, (CUlibrary library))
{
	return handle_unload(library, K_LIBRARY);
}

/* ------------------------------------------------------------------------ */
/* virtual memory management (issue 15: PyTorch's expandable segments)      */
/* Inferred (driver API reference): cuMemAddressReserve gives a VA range,
 * cuMemCreate a physical handle, cuMemMap maps a handle at an offset of a
 * reservation (granularity POOL_GRAN), cuMemUnmap unmaps a mapped range,
 * cuMemRelease drops a handle (memory lives while mapped), cuMemAddressFree
 * returns the reservation. Here a reservation is calloc'd host memory (so
 * kernels on mapped addresses compute); a handle only records its size; a
 * mapping is a (start, size) entry checked against the reservation. */

struct vmm_res {
	CUdeviceptr base;
	size_t size;
	void *mem;
	struct vmm_res *next;
};
struct vmm_map {
	CUdeviceptr start;
	size_t size;
	struct vmm_map *next;
};
struct vmm_handle {
	size_t size;
	int released;
};
static struct vmm_res *vmm_res_list;
static struct vmm_map *vmm_maps;

static struct vmm_res *vmm_res_of(CUdeviceptr p, size_t size)
{
	for (struct vmm_res *r = vmm_res_list; r; r = r->next)
		if (p >= r->base && p + size <= r->base + r->size)
			return r;
	return NULL;
}

DEF(cuMemAddressReserve, PFN_cuMemAddressReserve_v10020,
    (CUdeviceptr * ptr, size_t size, size_t alignment, CUdeviceptr addr, unsigned long long flags))
{
	ENTER_OBJ();
	(void)alignment, (void)addr, (void)flags;
	if (!ptr || !size || size % POOL_GRAN)
		return CUDA_ERROR_INVALID_VALUE;
	struct vmm_res *r = calloc(1, sizeof *r);
	void *m = r ? aligned_alloc(POOL_GRAN, size) : NULL;
	if (!m) {
		free(r);
		return CUDA_ERROR_OUT_OF_MEMORY;
	}
	memset(m, 0, size);
	r->base = (CUdeviceptr)(uintptr_t)m;
	r->size = size;
	r->mem = m;
	r->next = vmm_res_list;
	vmm_res_list = r;
	*ptr = r->base;
	return CUDA_SUCCESS;
}

DEF(cuMemAddressFree, PFN_cuMemAddressFree_v10020, (CUdeviceptr ptr, size_t size))
{
	ENTER_OBJ();
	for (struct vmm_res **pr = &vmm_res_list; *pr; pr = &(*pr)->next)
		if ((*pr)->base == ptr && (*pr)->size == size) {
			struct vmm_res *r = *pr;
			for (struct vmm_map *m = vmm_maps; m; m = m->next)
				if (m->start >= r->base && m->start < r->base + r->size)
					return CUDA_ERROR_INVALID_VALUE; /* still mapped */
			*pr = r->next;
			free(r->mem);
			free(r);
			return CUDA_SUCCESS;
		}
	return CUDA_ERROR_INVALID_VALUE;
}

DEF(cuMemCreate, PFN_cuMemCreate_v10020,
    (CUmemGenericAllocationHandle * handle, size_t size, const CUmemAllocationProp *prop, unsigned long long flags))
{
	ENTER_OBJ();
	if (!handle || !prop || !size || size % POOL_GRAN || flags)
		return CUDA_ERROR_INVALID_VALUE;
	struct vmm_handle *h = calloc(1, sizeof *h);
	if (!h)
		return CUDA_ERROR_OUT_OF_MEMORY;
	h->size = size;
	*handle = (CUmemGenericAllocationHandle)(uintptr_t)h;
	return CUDA_SUCCESS;
}

DEF(cuMemRelease, PFN_cuMemRelease_v10020, (CUmemGenericAllocationHandle handle))
{
	ENTER_OBJ();
	if (!handle)
		return CUDA_ERROR_INVALID_VALUE;
	/* the handle's memory lives while mapped; the struct is kept (small) */
	((struct vmm_handle *)(uintptr_t)handle)->released = 1;
	return CUDA_SUCCESS;
}

DEF(cuMemMap, PFN_cuMemMap_v10020,
    (CUdeviceptr ptr, size_t size, size_t offset, CUmemGenericAllocationHandle handle, unsigned long long flags))
{
	ENTER_OBJ();
	struct vmm_handle *h = (struct vmm_handle *)(uintptr_t)handle;
	if (!h || flags || offset + size > h->size || !vmm_res_of(ptr, size))
		return CUDA_ERROR_INVALID_VALUE;
	for (struct vmm_map *m = vmm_maps; m; m = m->next)
		if (ptr < m->start + m->size && m->start < ptr + size)
			return CUDA_ERROR_INVALID_VALUE; /* overlaps a mapping */
	struct vmm_map *m = calloc(1, sizeof *m);
	if (!m)
		return CUDA_ERROR_OUT_OF_MEMORY;
	m->start = ptr;
	m->size = size;
	m->next = vmm_maps;
	vmm_maps = m;
	return CUDA_SUCCESS;
}

DEF(cuMemUnmap, PFN_cuMemUnmap_v10020, (CUdeviceptr ptr, size_t size))
{
	ENTER_OBJ();
	/* every mapping inside [ptr, ptr+size) goes; one only partly inside is an error */
	for (struct vmm_map *m = vmm_maps; m; m = m->next)
		if (ptr < m->start + m->size && m->start < ptr + size &&
		    (m->start < ptr || m->start + m->size > ptr + size))
			return CUDA_ERROR_INVALID_VALUE;
	int n = 0;
	for (struct vmm_map **pm = &vmm_maps; *pm;) {
		struct vmm_map *m = *pm;
		if (m->start >= ptr && m->start + m->size <= ptr + size) {
			*pm = m->next;
			free(m);
			n++;
		} else {
			pm = &m->next;
		}
	}
	return n ? CUDA_SUCCESS : CUDA_ERROR_INVALID_VALUE;
}

DEF(cuMemSetAccess, PFN_cuMemSetAccess_v10020,
    (CUdeviceptr ptr, size_t size, const CUmemAccessDesc *desc, size_t count))
{
	ENTER_OBJ();
	if (!desc || !count || !vmm_res_of(ptr, size))
		return CUDA_ERROR_INVALID_VALUE;
	return CUDA_SUCCESS;
}

/* p NULL: the current pool of the stream's device. */
static CUresult alloc_async(CUdeviceptr *dptr, size_t size, struct pool *p, CUstream hs, int ptsz)
{
	struct stream *s = get_stream(hs, ptsz);
	if (!s)
		return CUDA_ERROR_INVALID_HANDLE;
	if (!p)
		p = g_cur_pool[stream_dev(s)];
	if (!dptr || !p)
		return CUDA_ERROR_INVALID_VALUE;
	struct capture *c;
	CUresult rc = stream_op(s, &c);
	if (rc)
		return rc;
	if (!size)
		return CUDA_ERROR_INVALID_VALUE;
	if (c) {
		/* cuda-facts §4: IPC-capable pool under capture -> 801, capture stays valid */
		if (p->props.handleTypes != CU_MEM_HANDLE_TYPE_NONE)
			return CUDA_ERROR_NOT_SUPPORTED;
		struct nparams np = {.type = CU_GRAPH_NODE_TYPE_MEM_ALLOC};
		np.al.props = p->props; /* pool identity is lost (cuda-facts §3) */
		np.al.size = size;
		if ((rc = graph_addr_new(&np.al)))
			return rc;
		cap_add(c, s, &np, NULL);
		*dptr = np.al.dptr;
		return CUDA_SUCCESS;
	}
	size_t grow = round_up(p->used_cur + size, POOL_GRAN);
	if (grow > p->res_cur && grow - p->res_cur > mem_free())
		return CUDA_ERROR_OUT_OF_MEMORY;
	struct alloc *a = alloc_new(size, A_POOL);
	if (!a)
		return CUDA_ERROR_OUT_OF_MEMORY;
	a->live = 1;
	a->pool = p;
	pool_note_alloc(p, size);
	*dptr = a->addr;
	return CUDA_SUCCESS;
}

DEF(cuMemAllocAsync, PFN_cuMemAllocAsync_v11020, (CUdeviceptr * dptr, size_t bytesize, CUstream hStream))
{
	ENTER_OBJ();
	return alloc_async(dptr, bytesize, NULL, hStream, 0);
}

DEF(cuMemAllocAsync_ptsz, PFN_cuMemAllocAsync_v11020_ptsz, (CUdeviceptr * dptr, size_t bytesize, CUstream hStream))
{
	ENTER_OBJ();
	return alloc_async(dptr, bytesize, NULL, hStream, 1);
}

DEF(cuMemAllocFromPoolAsync, PFN_cuMemAllocFromPoolAsync_v11020,
    (CUdeviceptr * dptr, size_t bytesize, CUmemoryPool pool, CUstream hStream))
{
	ENTER_OBJ();
	struct pool *p = reg_find(pool, K_POOL);
	if (!p)
		return CUDA_ERROR_INVALID_VALUE;
	return alloc_async(dptr, bytesize, p, hStream, 0);
}

DEF(cuMemAllocFromPoolAsync_ptsz, PFN_cuMemAllocFromPoolAsync_v11020_ptsz,
    (CUdeviceptr * dptr, size_t bytesize, CUmemoryPool pool, CUstream hStream))
{
	ENTER_OBJ();
	struct pool *p = reg_find(pool, K_POOL);
	if (!p)
		return CUDA_ERROR_INVALID_VALUE;
	return alloc_async(dptr, bytesize, p, hStream, 1);
}

static CUresult free_async(CUdeviceptr dptr, CUstream hs, int ptsz)
{
	ENTER_OBJ();
	struct stream *s = get_stream(hs, ptsz);
	if (!s)
		return CUDA_ERROR_INVALID_HANDLE;
	struct capture *c;
	CUresult rc = stream_op(s, &c);
	if (rc)
		return rc;
	if (c) {
		if ((rc = check_free_node(c->g, dptr)))
			return rc;
		struct nparams np = {.type = CU_GRAPH_NODE_TYPE_MEM_FREE, .fr = dptr};
		return cap_add(c, s, &np, NULL);
	}
	return free_any(dptr);
}

DEF(cuMemFreeAsync, PFN_cuMemFreeAsync_v11020, (CUdeviceptr dptr, CUstream hStream))
{
	return free_async(dptr, hStream, 0);
}

DEF(cuMemFreeAsync_ptsz, PFN_cuMemFreeAsync_v11020_ptsz, (CUdeviceptr dptr, CUstream hStream))
{
	return free_async(dptr, hStream, 1);
}

/* ------------------------------------------------------------------------ */
/* pools                                                                     */

DEF(cuMemPoolCreate, PFN_cuMemPoolCreate_v11020, (CUmemoryPool * pool, const CUmemPoolProps *poolProps))
{
	ENTER_OBJ();
	if (!pool || !poolProps)
		return CUDA_ERROR_INVALID_VALUE;
	if (poolProps->allocType != CU_MEM_ALLOCATION_TYPE_PINNED ||
	    poolProps->location.type != CU_MEM_LOCATION_TYPE_DEVICE || !dev_ok(poolProps->location.id))
		return CUDA_ERROR_INVALID_VALUE;
	if (poolProps->handleTypes & ~(CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR | CU_MEM_HANDLE_TYPE_FABRIC))
		return CUDA_ERROR_INVALID_VALUE;
	struct pool *p = obj_calloc(K_POOL, sizeof *p);
	p->props = *poolProps;
	reg_add(&p->o, K_POOL);
	p->o.dev = poolProps->location.id;
	*pool = (CUmemoryPool)p;
	return CUDA_SUCCESS;
}

static void pool_destroy(struct pool *p);

DEF(cuMemPoolDestroy, PFN_cuMemPoolDestroy_v11020, (CUmemoryPool pool))
{
	ENTER_OBJ();
	struct pool *p = reg_find(pool, K_POOL);
	if (!p || p->is_default)
		return CUDA_ERROR_INVALID_VALUE;
	pool_destroy(p);
	return CUDA_SUCCESS;
}

static void pool_destroy(struct pool *p)
{
	for (int d = 0; d < ndev(); d++)
		if (g_cur_pool[d] == p)
			g_cur_pool[d] = &g_default_pool[d];
	struct alloc *a, *t;
	HASH_ITER(hh, g_allocs, a, t)
	{
		if (a->pool == p)
			a->pool = NULL;
	}
	reg_del(&p->o);
	obj_free(K_POOL, p);
}

DEF(cuMemPoolTrimTo, PFN_cuMemPoolTrimTo_v11020, (CUmemoryPool pool, size_t minBytesToKeep))
{
	ENTER_OBJ();
	struct pool *p = reg_find(pool, K_POOL);
	if (!p)
		return CUDA_ERROR_INVALID_VALUE;
	pool_trim(p, minBytesToKeep);
	return CUDA_SUCCESS;
}

DEF(cuMemPoolSetAttribute, PFN_cuMemPoolSetAttribute_v11020, (CUmemoryPool pool, CUmemPool_attribute attr, void *value))
{
	ENTER_OBJ();
	struct pool *p = reg_find(pool, K_POOL);
	if (!p || !value)
		return CUDA_ERROR_INVALID_VALUE;
	switch (attr) {
	case CU_MEMPOOL_ATTR_REUSE_FOLLOW_EVENT_DEPENDENCIES:
	case CU_MEMPOOL_ATTR_REUSE_ALLOW_OPPORTUNISTIC:
	case CU_MEMPOOL_ATTR_REUSE_ALLOW_INTERNAL_DEPENDENCIES:
		p->reuse[attr - 1] = *(int *)value != 0;
		return CUDA_SUCCESS;
	case CU_MEMPOOL_ATTR_RELEASE_THRESHOLD:
		p->threshold = *(cuuint64_t *)value;
		return CUDA_SUCCESS;
	case CU_MEMPOOL_ATTR_RESERVED_MEM_HIGH:
		if (*(cuuint64_t *)value)
			return CUDA_ERROR_INVALID_VALUE;
		p->res_high = p->res_cur;
		return CUDA_SUCCESS;
	case CU_MEMPOOL_ATTR_USED_MEM_HIGH:
		if (*(cuuint64_t *)value)
			return CUDA_ERROR_INVALID_VALUE;
		p->used_high = p->used_cur;
		return CUDA_SUCCESS;
	default:
		return CUDA_ERROR_INVALID_VALUE;
	}
}

DEF(cuMemPoolGetAttribute, PFN_cuMemPoolGetAttribute_v11020, (CUmemoryPool pool, CUmemPool_attribute attr, void *value))
{
	ENTER_OBJ();
	struct pool *p = reg_find(pool, K_POOL);
	if (!p || !value)
		return CUDA_ERROR_INVALID_VALUE;
	switch (attr) {
	case CU_MEMPOOL_ATTR_REUSE_FOLLOW_EVENT_DEPENDENCIES:
	case CU_MEMPOOL_ATTR_REUSE_ALLOW_OPPORTUNISTIC:
	case CU_MEMPOOL_ATTR_REUSE_ALLOW_INTERNAL_DEPENDENCIES:
		*(int *)value = p->reuse[attr - 1];
		return CUDA_SUCCESS;
	case CU_MEMPOOL_ATTR_RELEASE_THRESHOLD:
		*(cuuint64_t *)value = p->threshold;
		break;
	case CU_MEMPOOL_ATTR_RESERVED_MEM_CURRENT:
		*(cuuint64_t *)value = p->res_cur;
		break;
	case CU_MEMPOOL_ATTR_RESERVED_MEM_HIGH:
		*(cuuint64_t *)value = p->res_high;
		break;
	case CU_MEMPOOL_ATTR_USED_MEM_CURRENT:
		*(cuuint64_t *)value = p->used_cur;
		break;
	case CU_MEMPOOL_ATTR_USED_MEM_HIGH:
		*(cuuint64_t *)value = p->used_high;
		break;
	default:
		return CUDA_ERROR_INVALID_VALUE;
	}
	return CUDA_SUCCESS;
}

DEF(cuDeviceGetDefaultMemPool, PFN_cuDeviceGetDefaultMemPool_v11020, (CUmemoryPool * pool_out, CUdevice dev))
{
	ENTER_OBJ();
	if (!pool_out)
		return CUDA_ERROR_INVALID_VALUE;
	if (!dev_ok(dev))
		return CUDA_ERROR_INVALID_DEVICE;
	*pool_out = (CUmemoryPool)&g_default_pool[dev];
	return CUDA_SUCCESS;
}

DEF(cuDeviceGetMemPool, PFN_cuDeviceGetMemPool_v11020, (CUmemoryPool * pool, CUdevice dev))
{
	ENTER_OBJ();
	if (!pool)
		return CUDA_ERROR_INVALID_VALUE;
	if (!dev_ok(dev))
		return CUDA_ERROR_INVALID_DEVICE;
	*pool = (CUmemoryPool)g_cur_pool[dev];
	return CUDA_SUCCESS;
}

DEF(cuDeviceSetMemPool, PFN_cuDeviceSetMemPool_v11020, (CUdevice dev, CUmemoryPool pool))
{
	ENTER_OBJ();
	struct pool *p = reg_find(pool, K_POOL);
	if (!dev_ok(dev))
		return CUDA_ERROR_INVALID_DEVICE;
	if (!p || p->props.location.id != dev) /* a pool of another device (inferred) */
		return CUDA_ERROR_INVALID_VALUE;
	g_cur_pool[dev] = p;
	return CUDA_SUCCESS;
}

static CUresult check_loc(const CUmemLocation *loc, CUmemAllocationType type)
{
	if (!loc || type != CU_MEM_ALLOCATION_TYPE_PINNED)
		return CUDA_ERROR_INVALID_VALUE;
	if (loc->type != CU_MEM_LOCATION_TYPE_DEVICE)
		return CUDA_ERROR_NOT_SUPPORTED; /* host pools are not modelled */
	if (!dev_ok(loc->id))
		return CUDA_ERROR_INVALID_DEVICE;
	return CUDA_SUCCESS;
}

DEF(cuMemGetDefaultMemPool, PFN_cuMemGetDefaultMemPool_v13000,
    (CUmemoryPool * pool_out, CUmemLocation *location, CUmemAllocationType type))
{
	ENTER_OBJ();
	CUresult rc = check_loc(location, type);
	if (rc)
		return rc;
	if (!pool_out)
		return CUDA_ERROR_INVALID_VALUE;
	*pool_out = (CUmemoryPool)&g_default_pool[location->id];
	return CUDA_SUCCESS;
}

DEF(cuMemGetMemPool, PFN_cuMemGetMemPool_v13000,
    (CUmemoryPool * pool, CUmemLocation *location, CUmemAllocationType type))
{
	ENTER_OBJ();
	CUresult rc = check_loc(location, type);
	if (rc)
		return rc;
	if (!pool)
		return CUDA_ERROR_INVALID_VALUE;
	*pool = (CUmemoryPool)g_cur_pool[location->id];
	return CUDA_SUCCESS;
}

DEF(cuMemSetMemPool, PFN_cuMemSetMemPool_v13000,
    (CUmemLocation * location, CUmemAllocationType type, CUmemoryPool pool))
{
	ENTER_OBJ();
	CUresult rc = check_loc(location, type);
	if (rc)
		return rc;
	struct pool *p = reg_find(pool, K_POOL);
	if (!p || p->props.location.id != location->id)
		return CUDA_ERROR_INVALID_VALUE;
	g_cur_pool[location->id] = p;
	return CUDA_SUCCESS;
}

/* ------------------------------------------------------------------------ */
/* graph memory attributes                                                   */

DEF(cuDeviceGraphMemTrim, PFN_cuDeviceGraphMemTrim_v11040, (CUdevice device))
{
	ENTER_OBJ();
	if (!dev_ok(device))
		return CUDA_ERROR_INVALID_DEVICE;
	for (struct gres **pp = &g_gres; *pp;) {
		struct gres *r = *pp;
		int in_use = 0;
		struct alloc *a, *t;
		HASH_ITER(hh, g_allocs, a, t)
		{
			if (a->kind == A_GRAPH && a->live && a->res == r && a->dev == device)
				in_use = 1;
		}
		/* the device's part of an unused reservation goes; the
		 * reservation itself when no device's part is left */
		if (!in_use)
			r->bytes[device] = 0;
		int left = 0;
		for (int d = 0; d < STANDIN_MAX_DEV; d++)
			left |= r->bytes[d] != 0;
		if (left) {
			pp = &r->next;
			continue;
		}
		if (r->exec)
			r->exec->res = NULL;
		*pp = r->next;
		free(r);
	}
	return CUDA_SUCCESS;
}

DEF(cuDeviceGetGraphMemAttribute, PFN_cuDeviceGetGraphMemAttribute_v11040,
    (CUdevice device, CUgraphMem_attribute attr, void *value))
{
	ENTER_OBJ();
	if (!dev_ok(device))
		return CUDA_ERROR_INVALID_DEVICE;
	if (!value)
		return CUDA_ERROR_INVALID_VALUE;
	size_t r = graph_reserved(device);
	switch (attr) {
	case CU_GRAPH_MEM_ATTR_USED_MEM_CURRENT:
	case CU_GRAPH_MEM_ATTR_RESERVED_MEM_CURRENT:
		*(cuuint64_t *)value = r;
		break;
	case CU_GRAPH_MEM_ATTR_USED_MEM_HIGH:
		*(cuuint64_t *)value = g_graph_used_high[device];
		break;
	case CU_GRAPH_MEM_ATTR_RESERVED_MEM_HIGH:
		*(cuuint64_t *)value = g_graph_res_high[device];
		break;
	default:
		return CUDA_ERROR_INVALID_VALUE;
	}
	return CUDA_SUCCESS;
}

DEF(cuDeviceSetGraphMemAttribute, PFN_cuDeviceSetGraphMemAttribute_v11040,
    (CUdevice device, CUgraphMem_attribute attr, void *value))
{
	ENTER_OBJ();
	if (!dev_ok(device))
		return CUDA_ERROR_INVALID_DEVICE;
	if (!value)
		return CUDA_ERROR_INVALID_VALUE;
	if (*(cuuint64_t *)value != 0)
		return CUDA_ERROR_INVALID_VALUE;
	switch (attr) {
	case CU_GRAPH_MEM_ATTR_USED_MEM_HIGH:
		g_graph_used_high[device] = graph_reserved(device);
		break;
	case CU_GRAPH_MEM_ATTR_RESERVED_MEM_HIGH:
		g_graph_res_high[device] = graph_reserved(device);
		break;
	default:
		return CUDA_ERROR_INVALID_VALUE;
	}
	return CUDA_SUCCESS;
}

/* ------------------------------------------------------------------------ */
/* graphs                                                                    */

DEF(cuGraphCreate, PFN_cuGraphCreate_v10000, (CUgraph * phGraph, unsigned int flags))
{
	ENTER_OBJ();
	if (!phGraph || flags)
		return CUDA_ERROR_INVALID_VALUE;
	*phGraph = (CUgraph)graph_new();
	return CUDA_SUCCESS;
}

DEF(cuGraphDestroy, PFN_cuGraphDestroy_v10000, (CUgraph hGraph))
{
	ENTER_OBJ();
	struct graph *g = reg_find(hGraph, K_GRAPH);
	if (!g || g->owner || g->capturing)
		return CUDA_ERROR_INVALID_VALUE;
	graph_free(g);
	return CUDA_SUCCESS;
}

/* Clone of a graph holding memory nodes: not supported (cuda-facts §4, code inferred). */
DEF(cuGraphClone, PFN_cuGraphClone_v10000, (CUgraph * phGraphClone, CUgraph originalGraph))
{
	ENTER_OBJ();
	struct graph *g = reg_find(originalGraph, K_GRAPH);
	if (!g || !phGraphClone || g->owner)
		return CUDA_ERROR_INVALID_VALUE;
	if (graph_has_mem(g))
		return CUDA_ERROR_NOT_SUPPORTED;
	*phGraphClone = (CUgraph)graph_clone(g);
	return CUDA_SUCCESS;
}

DEF(cuGraphAddEmptyNode, PFN_cuGraphAddEmptyNode_v10000,
    (CUgraphNode * phGraphNode, CUgraph hGraph, const CUgraphNode *dependencies, size_t numDependencies))
{
	ENTER_OBJ();
	struct nparams p = {.type = CU_GRAPH_NODE_TYPE_EMPTY};
	return add_node_common(phGraphNode, hGraph, dependencies, numDependencies, &p);
}

static CUresult kernel_np(struct nparams *p, const CUDA_KERNEL_NODE_PARAMS_v1 *k1, const CUDA_KERNEL_NODE_PARAMS_v2 *k2)
{
	if (!k1 && !k2)
		return CUDA_ERROR_INVALID_VALUE;
	p->type = CU_GRAPH_NODE_TYPE_KERNEL;
	if (k2) {
		const unsigned grid[3] = {k2->gridDimX, k2->gridDimY, k2->gridDimZ};
		const unsigned block[3] = {k2->blockDimX, k2->blockDimY, k2->blockDimZ};
		return kp_set(&p->k, k2->func ? k2->func : (CUfunction)(void *)k2->kern, grid, block,
			      k2->sharedMemBytes, k2->kernelParams, k2->extra);
	}
	const unsigned grid[3] = {k1->gridDimX, k1->gridDimY, k1->gridDimZ};
	const unsigned block[3] = {k1->blockDimX, k1->blockDimY, k1->blockDimZ};
	return kp_set(&p->k, k1->func, grid, block, k1->sharedMemBytes, k1->kernelParams, k1->extra);
}

DEF(cuGraphAddKernelNode, PFN_cuGraphAddKernelNode_v10000,
    (CUgraphNode * phGraphNode, CUgraph hGraph, const CUgraphNode *dependencies, size_t numDependencies,
     const CUDA_KERNEL_NODE_PARAMS_v1 *nodeParams))
{
	ENTER_OBJ();
	struct nparams p = {0};
	CUresult rc = kernel_np(&p, nodeParams, NULL);
	if (rc)
		return rc;
	return add_node_common(phGraphNode, hGraph, dependencies, numDependencies, &p);
}

DEF(cuGraphAddKernelNode_v2, PFN_cuGraphAddKernelNode_v12000,
    (CUgraphNode * phGraphNode, CUgraph hGraph, const CUgraphNode *dependencies, size_t numDependencies,
     const CUDA_KERNEL_NODE_PARAMS *nodeParams))
{
	ENTER_OBJ();
	struct nparams p = {0};
	CUresult rc = kernel_np(&p, NULL, nodeParams);
	if (rc)
		return rc;
	return add_node_common(phGraphNode, hGraph, dependencies, numDependencies, &p);
}

DEF(cuGraphAddMemAllocNode, PFN_cuGraphAddMemAllocNode_v11040,
    (CUgraphNode * phGraphNode, CUgraph hGraph, const CUgraphNode *dependencies, size_t numDependencies,
     CUDA_MEM_ALLOC_NODE_PARAMS *nodeParams))
{
	ENTER_OBJ();
	if (!nodeParams)
		return CUDA_ERROR_INVALID_VALUE;
	struct nparams p = {.type = CU_GRAPH_NODE_TYPE_MEM_ALLOC};
	p.al.props = nodeParams->poolProps;
	p.al.size = nodeParams->bytesize;
	CUresult rc = alloc_access(&p.al, nodeParams->accessDescs, nodeParams->accessDescCount);
	if (rc)
		return rc;
	rc = add_node_common(phGraphNode, hGraph, dependencies, numDependencies, &p);
	if (rc == CUDA_SUCCESS)
		nodeParams->dptr = ((struct node *)*phGraphNode)->p.al.dptr;
	return rc;
}

DEF(cuGraphAddMemFreeNode, PFN_cuGraphAddMemFreeNode_v11040,
    (CUgraphNode * phGraphNode, CUgraph hGraph, const CUgraphNode *dependencies, size_t numDependencies,
     CUdeviceptr dptr))
{
	ENTER_OBJ();
	struct nparams p = {.type = CU_GRAPH_NODE_TYPE_MEM_FREE, .fr = dptr};
	return add_node_common(phGraphNode, hGraph, dependencies, numDependencies, &p);
}

DEF(cuGraphAddChildGraphNode, PFN_cuGraphAddChildGraphNode_v10000,
    (CUgraphNode * phGraphNode, CUgraph hGraph, const CUgraphNode *dependencies, size_t numDependencies,
     CUgraph childGraph))
{
	ENTER_OBJ();
	struct graph *g = reg_find(hGraph, K_GRAPH);
	if (!g || !phGraphNode)
		return CUDA_ERROR_INVALID_VALUE;
	CUresult rc = check_deps(g, dependencies, numDependencies);
	if (rc)
		return rc;
	struct nparams p = {0};
	if ((rc = child_params(&p, childGraph, CU_GRAPH_CHILD_GRAPH_OWNERSHIP_CLONE, g)))
		return rc;
	if ((rc = add_node_common(phGraphNode, hGraph, dependencies, numDependencies, &p)))
		np_free(&p);
	return rc;
}

/* ---- event, external-semaphore, batch-memory-operation and conditional
 * node parameters (issue 30) -- Inferred from cuda.h: an event must be a
 * live event; semaphore and operation arrays are copied (count >= 1,
 * arrays non-NULL; semaphore handles are not validated: the stand-in has
 * no cuImportExternalSemaphore); a conditional's handle must come from
 * cuGraphConditionalHandleCreate on the same graph, size 1 (WHILE), 1 or 2
 * (IF), >= 1 (SWITCH); the node creates and owns its body graphs, and
 * phGraph_out is set to the node's own array of them (what the caller
 * put there is ignored). Bodies are not run (no device code sets the value). */
#define COND_MAX 1024
static struct {
	CUgraphConditionalHandle h;
	struct graph *g;
} g_cond[COND_MAX];
static unsigned g_ncond;

DEF(cuGraphConditionalHandleCreate, PFN_cuGraphConditionalHandleCreate_v12030,
    (CUgraphConditionalHandle * pHandle_out, CUgraph hGraph, CUcontext ctx, unsigned int defaultLaunchValue,
     unsigned int flags))
{
	ENTER_OBJ();
	struct graph *g = reg_find(hGraph, K_GRAPH);
	(void)defaultLaunchValue;
	if (!pHandle_out || !g || (ctx && !ctx_ok(ctx)) || (flags & ~(unsigned)CU_GRAPH_COND_ASSIGN_DEFAULT))
		return CUDA_ERROR_INVALID_VALUE;
	if (g_ncond == COND_MAX)
		return CUDA_ERROR_OUT_OF_MEMORY;
	g_cond[g_ncond].h = 0x1000 + g_ncond;
	g_cond[g_ncond].g = g;
	*pHandle_out = g_cond[g_ncond++].h;
	return CUDA_SUCCESS;
}

static CUresult sems_np(struct nparams *p, int type, const CUexternalSemaphore *sems, const void *params, unsigned n)
{
	if (!n || !sems || !params)
		return CUDA_ERROR_INVALID_VALUE;
	p->type = type;
	p->nsem = n;
	p->sems = dup_bytes(sems, n * sizeof *sems);
	p->semp = dup_bytes(params, n * sem_param_size(type));
	return CUDA_SUCCESS;
}

static CUresult memop_np(struct nparams *p, CUcontext ctx, unsigned count, const CUstreamBatchMemOpParams *ops,
			 unsigned flags)
{
	if (!count || !ops || (ctx && !ctx_ok(ctx)))
		return CUDA_ERROR_INVALID_VALUE;
	for (unsigned i = 0; i < count; i++)
		if (ops[i].operation != CU_STREAM_MEM_OP_WAIT_VALUE_32 &&
		    ops[i].operation != CU_STREAM_MEM_OP_WRITE_VALUE_32 &&
		    ops[i].operation != CU_STREAM_MEM_OP_WAIT_VALUE_64 &&
		    ops[i].operation != CU_STREAM_MEM_OP_WRITE_VALUE_64 && ops[i].operation != CU_STREAM_MEM_OP_BARRIER)
			return CUDA_ERROR_INVALID_VALUE;
	p->type = CU_GRAPH_NODE_TYPE_BATCH_MEM_OP;
	p->nops = count;
	p->ops = dup_bytes(ops, count * sizeof *ops);
	p->opflags = flags;
	return CUDA_SUCCESS;
}

static CUresult cond_np(struct nparams *p, struct graph *g, CUDA_CONDITIONAL_NODE_PARAMS *c)
{
	unsigned i;
	for (i = 0; i < g_ncond && g_cond[i].h != c->handle; i++)
		;
	if (i == g_ncond || g_cond[i].g != g || !c->size || (c->type == CU_GRAPH_COND_TYPE_WHILE && c->size != 1) ||
	    (c->type == CU_GRAPH_COND_TYPE_IF && c->size > 2) ||
	    (c->type != CU_GRAPH_COND_TYPE_IF && c->type != CU_GRAPH_COND_TYPE_WHILE &&
	     c->type != CU_GRAPH_COND_TYPE_SWITCH) ||
	    (c->ctx && !ctx_ok(c->ctx)))
		return CUDA_ERROR_INVALID_VALUE;
	p->type = CU_GRAPH_NODE_TYPE_CONDITIONAL;
	p->cond = c->handle;
	p->ctype = c->type;
	p->nbody = c->size;
	p->body = calloc(c->size, sizeof *p->body);
	for (i = 0; i < c->size; i++)
		p->body[i] = graph_new();
	return CUDA_SUCCESS;
}

/* cuGraphAddNode(_v2): generic node parameters. */
static CUresult add_node_generic(CUgraphNode *ph, CUgraph hg, const CUgraphNode *deps, size_t nd, CUgraphNodeParams *np)
{
	struct graph *g = reg_find(hg, K_GRAPH);
	if (!g || !ph || !np)
		return CUDA_ERROR_INVALID_VALUE;
	CUresult rc = check_deps(g, deps, nd);
	if (rc)
		return rc;
	struct nparams p = {0};
	switch (np->type) {
	case CU_GRAPH_NODE_TYPE_KERNEL:
		rc = kernel_np(&p, NULL, (const CUDA_KERNEL_NODE_PARAMS_v2 *)&np->kernel);
		break;
	case CU_GRAPH_NODE_TYPE_EMPTY:
		p.type = CU_GRAPH_NODE_TYPE_EMPTY;
		break;
	case CU_GRAPH_NODE_TYPE_MEMSET:
		p.type = CU_GRAPH_NODE_TYPE_MEMSET;
		p.ms.dst = np->memset.dst;
		p.ms.pitch = np->memset.pitch;
		p.ms.value = np->memset.value;
		p.ms.elementSize = np->memset.elementSize;
		p.ms.width = np->memset.width;
		p.ms.height = np->memset.height;
		if (p.ms.elementSize != 1 && p.ms.elementSize != 2 && p.ms.elementSize != 4)
			rc = CUDA_ERROR_INVALID_VALUE;
		break;
	case CU_GRAPH_NODE_TYPE_MEMCPY:
		p.type = CU_GRAPH_NODE_TYPE_MEMCPY;
		p.cp = np->memcpy.copyParams;
		break;
	case CU_GRAPH_NODE_TYPE_HOST:
		p.type = CU_GRAPH_NODE_TYPE_HOST;
		p.hp.fn = np->host.fn;
		p.hp.userData = np->host.userData;
		if (!p.hp.fn)
			rc = CUDA_ERROR_INVALID_VALUE;
		break;
	case CU_GRAPH_NODE_TYPE_GRAPH:
		rc = child_params(&p, np->graph.graph, (int)np->graph.ownership, g);
		break;
	case CU_GRAPH_NODE_TYPE_MEM_ALLOC:
		p.type = CU_GRAPH_NODE_TYPE_MEM_ALLOC;
		p.al.props = np->alloc.poolProps;
		p.al.size = np->alloc.bytesize;
		rc = alloc_access(&p.al, np->alloc.accessDescs, np->alloc.accessDescCount);
		break;
	case CU_GRAPH_NODE_TYPE_MEM_FREE:
		p.type = CU_GRAPH_NODE_TYPE_MEM_FREE;
		p.fr = np->free.dptr;
		break;
	case CU_GRAPH_NODE_TYPE_EVENT_RECORD:
	case CU_GRAPH_NODE_TYPE_WAIT_EVENT:
		p.type = np->type;
		p.ev = np->type == CU_GRAPH_NODE_TYPE_EVENT_RECORD ? np->eventRecord.event : np->eventWait.event;
		if (!reg_find(p.ev, K_EVENT))
			rc = CUDA_ERROR_INVALID_VALUE;
		break;
	case CU_GRAPH_NODE_TYPE_EXT_SEMAS_SIGNAL:
		rc = sems_np(&p, np->type, np->extSemSignal.extSemArray, np->extSemSignal.paramsArray,
			     np->extSemSignal.numExtSems);
		break;
	case CU_GRAPH_NODE_TYPE_EXT_SEMAS_WAIT:
		rc = sems_np(&p, np->type, np->extSemWait.extSemArray, np->extSemWait.paramsArray,
			     np->extSemWait.numExtSems);
		break;
	case CU_GRAPH_NODE_TYPE_BATCH_MEM_OP:
		rc = memop_np(&p, np->memOp.ctx, np->memOp.count, np->memOp.paramArray, np->memOp.flags);
		break;
	case CU_GRAPH_NODE_TYPE_CONDITIONAL:
		rc = cond_np(&p, g, &np->conditional);
		break;
	default:
		return CUDA_ERROR_NOT_SUPPORTED;
	}
	if (rc) {
		if (p.type != CU_GRAPH_NODE_TYPE_GRAPH)
			np_free(&p);
		return rc;
	}
	if ((rc = add_node_common(ph, hg, deps, nd, &p))) {
		if (p.type == CU_GRAPH_NODE_TYPE_GRAPH && np->graph.ownership == CU_GRAPH_CHILD_GRAPH_OWNERSHIP_CLONE)
			np_free(&p);
		return rc;
	}
	struct node *n = (struct node *)*ph;
	if (p.type == CU_GRAPH_NODE_TYPE_MEM_ALLOC)
		np->alloc.dptr = n->p.al.dptr;
	if (p.type == CU_GRAPH_NODE_TYPE_GRAPH)
		np->graph.graph = (CUgraph)n->p.child;
	if (p.type == CU_GRAPH_NODE_TYPE_CONDITIONAL)
		/* the node's own array, as the driver's "CUDA-owned array
		 * populated ... during creation of the node": the caller's
		 * pointer is replaced, never written through (on the H200 a
		 * caller that read its own array got garbage: node_types) */
		np->conditional.phGraph_out = (CUgraph *)n->p.body;
	return CUDA_SUCCESS;
}

DEF(cuGraphAddNode, PFN_cuGraphAddNode_v12020,
    (CUgraphNode * phGraphNode, CUgraph hGraph, const CUgraphNode *dependencies, size_t numDependencies,
     CUgraphNodeParams *nodeParams))
{
	ENTER_OBJ();
	return add_node_generic(phGraphNode, hGraph, dependencies, numDependencies, nodeParams);
}

DEF(cuGraphAddNode_v2, PFN_cuGraphAddNode_v12030,
    (CUgraphNode * phGraphNode, CUgraph hGraph, const CUgraphNode *dependencies, const CUgraphEdgeData *dependencyData,
     size_t numDependencies, CUgraphNodeParams *nodeParams))
{
	ENTER_OBJ();
	(void)dependencyData;
	return add_node_generic(phGraphNode, hGraph, dependencies, numDependencies, nodeParams);
}

DEF(cuGraphNodeSetParams, PFN_cuGraphNodeSetParams_v12020, (CUgraphNode hNode, CUgraphNodeParams *nodeParams))
{
	ENTER_OBJ();
	struct node *n = reg_find(hNode, K_NODE);
	if (!n || !nodeParams || (int)nodeParams->type != n->p.type)
		return CUDA_ERROR_INVALID_VALUE;
	switch (n->p.type) {
	case CU_GRAPH_NODE_TYPE_KERNEL: {
		struct nparams p = {0};
		CUresult rc = kernel_np(&p, NULL, (const CUDA_KERNEL_NODE_PARAMS_v2 *)&nodeParams->kernel);
		if (rc)
			return rc;
		p.k.coop = n->p.k.coop; /* the node's attributes stay (inferred) */
		kp_free(&n->p.k);
		n->p.k = p.k;
		return CUDA_SUCCESS;
	}
	case CU_GRAPH_NODE_TYPE_EMPTY:
		return CUDA_SUCCESS;
	default:
		/* MEM_ALLOC / MEM_FREE: not supported (cuda-facts §3); others not modelled */
		return CUDA_ERROR_INVALID_VALUE;
	}
}

DEF(cuGraphDestroyNode, PFN_cuGraphDestroyNode_v10000, (CUgraphNode hNode))
{
	ENTER_OBJ();
	struct node *n = reg_find(hNode, K_NODE);
	if (!n)
		return CUDA_ERROR_INVALID_VALUE;
	/* a child graph's node too: the graph a child graph node owns is
	 * changed through its handle (cuGraphChildGraphNodeGetGraph: "changes
	 * to the graph will be reflected in the node") */
	struct graph *g = n->g;
	size_t i = node_index(g, n);
	memmove(&g->nodes[i], &g->nodes[i + 1], (g->n - i - 1) * sizeof *g->nodes);
	g->n--;
	node_free(n);
	return CUDA_SUCCESS;
}

static CUresult edges_common(CUgraph hg, const CUgraphNode *from, const CUgraphNode *to, size_t n, int add)
{
	struct graph *g = reg_find(hg, K_GRAPH);
	if (!g || (n && (!from || !to)))
		return CUDA_ERROR_INVALID_VALUE;
	for (size_t i = 0; i < n; i++) {
		struct node *a = reg_find(from[i], K_NODE), *b = reg_find(to[i], K_NODE);
		if (!a || !b || a->g != g || b->g != g || a == b)
			return CUDA_ERROR_INVALID_VALUE;
		size_t j;
		for (j = 0; j < b->ndeps; j++)
			if (b->deps[j] == a)
				break;
		if (add && j < b->ndeps)
			return CUDA_ERROR_INVALID_VALUE;
		if (!add && j == b->ndeps)
			return CUDA_ERROR_INVALID_VALUE;
	}
	for (size_t i = 0; i < n; i++) {
		struct node *a = (struct node *)from[i], *b = (struct node *)to[i];
		if (add) {
			add_deps(&b->deps, &b->ndeps, &a, 1);
		} else {
			for (size_t j = 0; j < b->ndeps; j++) {
				if (b->deps[j] == a) {
					memmove(&b->deps[j], &b->deps[j + 1], (b->ndeps - j - 1) * sizeof *b->deps);
					b->ndeps--;
					break;
				}
			}
		}
	}
	return CUDA_SUCCESS;
}

DEF(cuGraphAddDependencies, PFN_cuGraphAddDependencies_v10000,
    (CUgraph hGraph, const CUgraphNode *from, const CUgraphNode *to, size_t numDependencies))
{
	ENTER_OBJ();
	return edges_common(hGraph, from, to, numDependencies, 1);
}

DEF(cuGraphAddDependencies_v2, PFN_cuGraphAddDependencies_v12030,
    (CUgraph hGraph, const CUgraphNode *from, const CUgraphNode *to, const CUgraphEdgeData *edgeData,
     size_t numDependencies))
{
	ENTER_OBJ();
	(void)edgeData;
	return edges_common(hGraph, from, to, numDependencies, 1);
}

DEF(cuGraphRemoveDependencies, PFN_cuGraphRemoveDependencies_v10000,
    (CUgraph hGraph, const CUgraphNode *from, const CUgraphNode *to, size_t numDependencies))
{
	ENTER_OBJ();
	return edges_common(hGraph, from, to, numDependencies, 0);
}

DEF(cuGraphRemoveDependencies_v2, PFN_cuGraphRemoveDependencies_v12030,
    (CUgraph hGraph, const CUgraphNode *from, const CUgraphNode *to, const CUgraphEdgeData *edgeData,
     size_t numDependencies))
{
	ENTER_OBJ();
	(void)edgeData;
	return edges_common(hGraph, from, to, numDependencies, 0);
}

DEF(cuGraphGetNodes, PFN_cuGraphGetNodes_v10000, (CUgraph hGraph, CUgraphNode *nodes, size_t *numNodes))
{
	ENTER_OBJ();
	struct graph *g = reg_find(hGraph, K_GRAPH);
	if (!g || !numNodes)
		return CUDA_ERROR_INVALID_VALUE;
	if (nodes) {
		size_t k;
		for (k = 0; k < *numNodes && k < g->n; k++)
			nodes[k] = (CUgraphNode)g->nodes[k];
		for (; k < *numNodes; k++)
			nodes[k] = NULL;
		if (*numNodes > g->n)
			*numNodes = g->n;
	} else {
		*numNodes = g->n;
	}
	return CUDA_SUCCESS;
}

DEF(cuGraphGetRootNodes, PFN_cuGraphGetRootNodes_v10000, (CUgraph hGraph, CUgraphNode *rootNodes, size_t *numRootNodes))
{
	ENTER_OBJ();
	struct graph *g = reg_find(hGraph, K_GRAPH);
	if (!g || !numRootNodes)
		return CUDA_ERROR_INVALID_VALUE;
	size_t cnt = 0;
	for (size_t i = 0; i < g->n; i++) {
		if (g->nodes[i]->ndeps)
			continue;
		if (rootNodes && cnt < *numRootNodes)
			rootNodes[cnt] = (CUgraphNode)g->nodes[i];
		cnt++;
	}
	if (!rootNodes || cnt < *numRootNodes)
		*numRootNodes = cnt;
	return CUDA_SUCCESS;
}

static CUresult get_edges(CUgraph hg, CUgraphNode *from, CUgraphNode *to, CUgraphEdgeData *ed, size_t *num)
{
	struct graph *g = reg_find(hg, K_GRAPH);
	if (!g || !num || (!from) != (!to) || (ed && !from))
		return CUDA_ERROR_INVALID_VALUE;
	size_t cnt = 0;
	for (size_t i = 0; i < g->n; i++) {
		for (size_t j = 0; j < g->nodes[i]->ndeps; j++) {
			if (from && cnt < *num) {
				from[cnt] = (CUgraphNode)g->nodes[i]->deps[j];
				to[cnt] = (CUgraphNode)g->nodes[i];
				if (ed)
					memset(&ed[cnt], 0, sizeof ed[cnt]);
			}
			cnt++;
		}
	}
	if (from) {
		for (size_t k = cnt; k < *num; k++) {
			from[k] = to[k] = NULL;
		}
		if (cnt < *num)
			*num = cnt;
	} else {
		*num = cnt;
	}
	return CUDA_SUCCESS;
}

DEF(cuGraphGetEdges, PFN_cuGraphGetEdges_v10000, (CUgraph hGraph, CUgraphNode *from, CUgraphNode *to, size_t *numEdges))
{
	ENTER_OBJ();
	return get_edges(hGraph, from, to, NULL, numEdges);
}

DEF(cuGraphGetEdges_v2, PFN_cuGraphGetEdges_v12030,
    (CUgraph hGraph, CUgraphNode *from, CUgraphNode *to, CUgraphEdgeData *edgeData, size_t *numEdges))
{
	ENTER_OBJ();
	return get_edges(hGraph, from, to, edgeData, numEdges);
}

/* A node's dependencies: with NULL the count; else up to *num of them, the
 * rest of the array NULL and *num the count obtained (as the driver). */
static CUresult node_deps(CUgraphNode hn, CUgraphNode *deps, CUgraphEdgeData *ed, size_t *num)
{
	/* Fault injection, not the driver: STANDIN_REFUSE_NODE_DEPS=1 refuses
	 * these queries, so that the shim's fallback to cuGraphGetEdges is
	 * tested (tests/rules/meson.build, the *-edges cases). */
	static int refuse = -1;
	if (refuse < 0)
		refuse = getenv("STANDIN_REFUSE_NODE_DEPS") != NULL;
	if (refuse)
		return CUDA_ERROR_NOT_SUPPORTED;
	struct node *n = reg_find(hn, K_NODE);
	if (!n || !num || (ed && !deps))
		return CUDA_ERROR_INVALID_VALUE;
	if (!deps) {
		*num = n->ndeps;
		return CUDA_SUCCESS;
	}
	size_t k = 0;
	for (; k < n->ndeps && k < *num; k++) {
		deps[k] = (CUgraphNode)n->deps[k];
		if (ed)
			memset(&ed[k], 0, sizeof ed[k]);
	}
	for (size_t j = k; j < *num; j++)
		deps[j] = NULL;
	*num = k;
	return CUDA_SUCCESS;
}

DEF(cuGraphNodeGetDependencies, PFN_cuGraphNodeGetDependencies_v10000,
    (CUgraphNode hNode, CUgraphNode *dependencies, size_t *numDependencies))
{
	ENTER_OBJ();
	return node_deps(hNode, dependencies, NULL, numDependencies);
}

DEF(cuGraphNodeGetDependencies_v2, PFN_cuGraphNodeGetDependencies_v12030,
    (CUgraphNode hNode, CUgraphNode *dependencies, CUgraphEdgeData *edgeData, size_t *numDependencies))
{
	ENTER_OBJ();
	return node_deps(hNode, dependencies, edgeData, numDependencies);
}

DEF(cuGraphNodeGetType, PFN_cuGraphNodeGetType_v10000, (CUgraphNode hNode, CUgraphNodeType *type))
{
	ENTER_OBJ();
	struct node *n = reg_find(hNode, K_NODE);
	if (!n || !type)
		return CUDA_ERROR_INVALID_VALUE;
	*type = (CUgraphNodeType)n->p.type;
	return CUDA_SUCCESS;
}

/* The graph a child graph node owns, not a copy: changes to it are
 * changes to the node, and it goes with the node (the driver's contract;
 * INVALID_VALUE for another node type). */
DEF(cuGraphChildGraphNodeGetGraph, PFN_cuGraphChildGraphNodeGetGraph_v10000, (CUgraphNode hNode, CUgraph *phGraph))
{
	ENTER_OBJ();
	struct node *n = reg_find(hNode, K_NODE);
	if (!n || !phGraph || n->p.type != CU_GRAPH_NODE_TYPE_GRAPH || !n->p.child)
		return CUDA_ERROR_INVALID_VALUE;
	*phGraph = (CUgraph)n->p.child;
	return CUDA_SUCCESS;
}

/* The ids of CUDA 13.1 (cuGraphDebugDotPrint's, Nsight Systems' and
 * CUPTI's): exported for the shim's run-time lookup (its records carry them
 * when the driver has them); the 13.0 headers here do not declare them. */
typedef CUresult (*sd_pfn_graph_id)(CUgraph, unsigned int *);
typedef CUresult (*sd_pfn_exec_id)(CUgraphExec, unsigned int *);
typedef CUresult (*sd_pfn_node_id)(CUgraphNode, unsigned int *);
typedef CUresult (*sd_pfn_tools_id)(CUgraphNode, unsigned long long *);
DEF(cuGraphGetId, sd_pfn_graph_id, (CUgraph hGraph, unsigned int *graphId))
{
	ENTER_OBJ();
	struct graph *g = reg_find(hGraph, K_GRAPH);
	if (!g || !graphId)
		return CUDA_ERROR_INVALID_VALUE;
	*graphId = g->id;
	return CUDA_SUCCESS;
}

DEF(cuGraphExecGetId, sd_pfn_exec_id, (CUgraphExec hGraphExec, unsigned int *graphId))
{
	ENTER_OBJ();
	struct exec *e = reg_find(hGraphExec, K_EXEC);
	if (!e || !graphId)
		return CUDA_ERROR_INVALID_VALUE;
	*graphId = e->id;
	return CUDA_SUCCESS;
}

DEF(cuGraphNodeGetLocalId, sd_pfn_node_id, (CUgraphNode hNode, unsigned int *nodeId))
{
	ENTER_OBJ();
	struct node *n = reg_find(hNode, K_NODE);
	size_t i;
	if (!n || !nodeId)
		return CUDA_ERROR_INVALID_VALUE;
	for (i = 0; i < n->g->n && n->g->nodes[i] != n; i++)
		;
	*nodeId = (unsigned)i; /* local to its graph: with the graph's id, unique */
	return CUDA_SUCCESS;
}

DEF(cuGraphNodeGetToolsId, sd_pfn_tools_id, (CUgraphNode hNode, unsigned long long *toolsNodeId))
{
	ENTER_OBJ();
	struct node *n = reg_find(hNode, K_NODE);
	if (!n || !toolsNodeId)
		return CUDA_ERROR_INVALID_VALUE;
	*toolsNodeId = n->id;
	return CUDA_SUCCESS;
}

DEF(cuGraphMemAllocNodeGetParams, PFN_cuGraphMemAllocNodeGetParams_v11040,
    (CUgraphNode hNode, CUDA_MEM_ALLOC_NODE_PARAMS *params_out))
{
	ENTER_OBJ();
	struct node *n = reg_find(hNode, K_NODE);
	if (!n || !params_out || n->p.type != CU_GRAPH_NODE_TYPE_MEM_ALLOC)
		return CUDA_ERROR_INVALID_VALUE;
	memset(params_out, 0, sizeof *params_out);
	params_out->poolProps = n->p.al.props;
	/* the node's own array: valid while the node lives */
	params_out->accessDescs = n->p.al.nacc ? n->p.al.acc : NULL;
	params_out->accessDescCount = n->p.al.nacc;
	params_out->bytesize = n->p.al.size;
	params_out->dptr = n->p.al.dptr;
	return CUDA_SUCCESS;
}

DEF(cuGraphMemFreeNodeGetParams, PFN_cuGraphMemFreeNodeGetParams_v11040, (CUgraphNode hNode, CUdeviceptr *dptr_out))
{
	ENTER_OBJ();
	struct node *n = reg_find(hNode, K_NODE);
	if (!n || !dptr_out || n->p.type != CU_GRAPH_NODE_TYPE_MEM_FREE)
		return CUDA_ERROR_INVALID_VALUE;
	*dptr_out = n->p.fr;
	return CUDA_SUCCESS;
}

static void kernel_out(const struct kparams *k, CUfunction *fn, unsigned *g, unsigned *b, unsigned *shmem,
		       void ***params, void ***extra)
{
	*fn = k->fn;
	memcpy(g, k->grid, sizeof k->grid);
	memcpy(b, k->block, sizeof k->block);
	*shmem = k->shmem;
	*params = k->form == KP_PTRS ? k->ptrs : NULL;
	*extra = k->form == KP_PTRS ? NULL : k->extra;
}

DEF(cuGraphKernelNodeGetParams, PFN_cuGraphKernelNodeGetParams_v10000,
    (CUgraphNode hNode, CUDA_KERNEL_NODE_PARAMS_v1 *nodeParams))
{
	ENTER_OBJ();
	struct node *n = reg_find(hNode, K_NODE);
	if (!n || !nodeParams || n->p.type != CU_GRAPH_NODE_TYPE_KERNEL)
		return CUDA_ERROR_INVALID_VALUE;
	unsigned g[3], b[3];
	kernel_out(&n->p.k, &nodeParams->func, g, b, &nodeParams->sharedMemBytes, &nodeParams->kernelParams,
		   &nodeParams->extra);
	nodeParams->gridDimX = g[0], nodeParams->gridDimY = g[1], nodeParams->gridDimZ = g[2];
	nodeParams->blockDimX = b[0], nodeParams->blockDimY = b[1], nodeParams->blockDimZ = b[2];
	return CUDA_SUCCESS;
}

DEF(cuGraphKernelNodeGetParams_v2, PFN_cuGraphKernelNodeGetParams_v12000,
    (CUgraphNode hNode, CUDA_KERNEL_NODE_PARAMS *nodeParams))
{
	ENTER_OBJ();
	struct node *n = reg_find(hNode, K_NODE);
	if (!n || !nodeParams || n->p.type != CU_GRAPH_NODE_TYPE_KERNEL)
		return CUDA_ERROR_INVALID_VALUE;
	memset(nodeParams, 0, sizeof *nodeParams);
	unsigned g[3], b[3];
	kernel_out(&n->p.k, &nodeParams->func, g, b, &nodeParams->sharedMemBytes, &nodeParams->kernelParams,
		   &nodeParams->extra);
	nodeParams->gridDimX = g[0], nodeParams->gridDimY = g[1], nodeParams->gridDimZ = g[2];
	nodeParams->blockDimX = b[0], nodeParams->blockDimY = b[1], nodeParams->blockDimZ = b[2];
	/* Measured (kprobe, H200, 2026-11-29): func is the context's function
	 * (cuKernelGetFunction's), kern the CUkernel and ctx the context, for a
	 * node launched by <<<>>>, cudaLaunchKernel or cuLaunchKernel with
	 * either handle; a module's function has no kernel (NULL, inferred). */
	nodeParams->kern = n->p.k.kern;
	nodeParams->ctx = n->p.k.ctx;
	return CUDA_SUCCESS;
}

/* A kernel node's launch attributes: the stand-in keeps only the
 * cooperative one (inferred: another attribute answers INVALID_VALUE here,
 * where the driver keeps it). Capture-safe queries of the node. */
DEF(cuGraphKernelNodeGetAttribute, PFN_cuGraphKernelNodeGetAttribute_v11000,
    (CUgraphNode hNode, CUkernelNodeAttrID attr, CUkernelNodeAttrValue *value_out))
{
	ENTER_OBJ();
	struct node *n = reg_find(hNode, K_NODE);
	if (!n || !value_out || n->p.type != CU_GRAPH_NODE_TYPE_KERNEL || attr != CU_LAUNCH_ATTRIBUTE_COOPERATIVE)
		return CUDA_ERROR_INVALID_VALUE;
	value_out->cooperative = n->p.k.coop;
	return CUDA_SUCCESS;
}

DEF(cuGraphKernelNodeSetAttribute, PFN_cuGraphKernelNodeSetAttribute_v11000,
    (CUgraphNode hNode, CUkernelNodeAttrID attr, const CUkernelNodeAttrValue *value))
{
	ENTER_OBJ();
	struct node *n = reg_find(hNode, K_NODE);
	if (!n || !value || n->p.type != CU_GRAPH_NODE_TYPE_KERNEL || attr != CU_LAUNCH_ATTRIBUTE_COOPERATIVE)
		return CUDA_ERROR_INVALID_VALUE;
	n->p.k.coop = value->cooperative != 0;
	return CUDA_SUCCESS;
}

/* ------------------------------------------------------------------------ */
/* function and node queries (issue 15)                                      */
/* Inferred: cuFuncGetName gives the symbol's (mangled) name and
 * cuFuncGetParamInfo each parameter's offset and size; both make no stream
 * work, so they are capture-safe. Here a CUfunction (and a CUkernel) is a
 * standin_kernel_fn: the name is its symbol (dladdr), every parameter is 8
 * bytes, and the count is what the function's first node or launch passed
 * (a function never launched has no known layout: 500 NOT_FOUND). */

static struct fnarity {
	void *fn;
	int np;
} fn_arity[256];

static void fn_learn(void *fn, int np)
{
	for (int i = 0; i < 256; i++)
		if (fn_arity[i].fn == fn || !fn_arity[i].fn) {
			fn_arity[i].fn = fn;
			fn_arity[i].np = np;
			return;
		}
}

static int fn_params(void *fn)
{
	for (int i = 0; i < 256 && fn_arity[i].fn; i++)
		if (fn_arity[i].fn == fn)
			return fn_arity[i].np;
	return -1;
}

/* The function a query names: a cuKernel* query (as_kernel) takes a
 * CUkernel (or, unmeasured, a function); a cuFunc* query answers 400 on a
 * CUkernel (measured, kprobe 2026-11-29: cuFuncGetName, cuFuncGetParamInfo,
 * cuFuncGetModule, cuFuncIsLoaded). NULL: INVALID_HANDLE. */
static void *fn_query(void *h, int as_kernel)
{
	const struct hkern *hk = reg_find(h, K_HKERN);
	if (hk)
		return as_kernel ? hk->fn : NULL;
	return !as_kernel && reg_find(h, K_KERNEL) ? NULL : h;
}

static CUresult fn_name(const char **name, void *h, int as_kernel)
{
	Dl_info di;
	void *fn = h ? fn_query(h, as_kernel) : NULL;
	const struct sfunc *f = sfunc_of(fn);
	if (!name || !h)
		return CUDA_ERROR_INVALID_VALUE;
	if (!fn)
		return CUDA_ERROR_INVALID_HANDLE;
	if (f) {
		*name = f->name;
		return CUDA_SUCCESS;
	}
	if (!dladdr(fn, &di) || !di.dli_sname)
		return CUDA_ERROR_INVALID_HANDLE;
	*name = di.dli_sname;
	return CUDA_SUCCESS;
}

static CUresult fn_param(void *h, size_t i, size_t *off, size_t *size, int as_kernel)
{
	void *fn = h ? fn_query(h, as_kernel) : NULL;
	const struct sfunc *f = sfunc_of(fn);
	if (!h || !off || !size)
		return CUDA_ERROR_INVALID_VALUE;
	if (!fn)
		return CUDA_ERROR_INVALID_HANDLE;
	if (f) {
		if (i >= (size_t)f->np)
			return CUDA_ERROR_INVALID_VALUE;
		*off = f->off[i];
		*size = f->size[i];
		return CUDA_SUCCESS;
	}
	int np = fn_params(fn);
	if (np < 0)
		return CUDA_ERROR_NOT_FOUND;
	if (i >= (size_t)np)
		return CUDA_ERROR_INVALID_VALUE;
	*off = 8 * i;
	*size = 8;
	return CUDA_SUCCESS;
}

DEF(cuFuncGetName, PFN_cuFuncGetName_v12030, (const char **name, CUfunction hfunc))
{
	ENTER_OBJ();
	return fn_name(name, (void *)hfunc, 0);
}

DEF(cuKernelGetName, PFN_cuKernelGetName_v12030, (const char **name, CUkernel hfunc))
{
	ENTER_OBJ();
	return fn_name(name, (void *)hfunc, 1);
}

DEF(cuFuncGetParamInfo, PFN_cuFuncGetParamInfo_v12040,
    (CUfunction func, size_t paramIndex, size_t *paramOffset, size_t *paramSize))
{
	ENTER_OBJ();
	return fn_param((void *)func, paramIndex, paramOffset, paramSize, 0);
}

DEF(cuKernelGetParamInfo, PFN_cuKernelGetParamInfo_v12040,
    (CUkernel kernel, size_t paramIndex, size_t *paramOffset, size_t *paramSize))
{
	ENTER_OBJ();
	return fn_param((void *)kernel, paramIndex, paramOffset, paramSize, 1);
}

DEF(cuGraphMemcpyNodeGetParams, PFN_cuGraphMemcpyNodeGetParams_v10000,
    (CUgraphNode hNode, CUDA_MEMCPY3D_v2 *nodeParams))
{
	ENTER_OBJ();
	struct node *n = reg_find(hNode, K_NODE);
	if (!n || !nodeParams || n->p.type != CU_GRAPH_NODE_TYPE_MEMCPY)
		return CUDA_ERROR_INVALID_VALUE;
	*nodeParams = n->p.cp;
	return CUDA_SUCCESS;
}

DEF(cuGraphMemsetNodeGetParams, PFN_cuGraphMemsetNodeGetParams_v10000,
    (CUgraphNode hNode, CUDA_MEMSET_NODE_PARAMS_v1 *nodeParams))
{
	ENTER_OBJ();
	struct node *n = reg_find(hNode, K_NODE);
	if (!n || !nodeParams || n->p.type != CU_GRAPH_NODE_TYPE_MEMSET)
		return CUDA_ERROR_INVALID_VALUE;
	*nodeParams = n->p.ms;
	return CUDA_SUCCESS;
}

/* ------------------------------------------------------------------------ */
/* instantiate                                                               */

#define KNOWN_IFLAGS                                                                                                   \
	(CUDA_GRAPH_INSTANTIATE_FLAG_AUTO_FREE_ON_LAUNCH | CUDA_GRAPH_INSTANTIATE_FLAG_UPLOAD |                        \
	 CUDA_GRAPH_INSTANTIATE_FLAG_DEVICE_LAUNCH | CUDA_GRAPH_INSTANTIATE_FLAG_USE_NODE_PRIORITY)

static CUresult exec_upload(struct exec *e, struct stream *s);

static CUresult instantiate(CUgraphExec *ph, CUgraph hg, unsigned long long flags, CUgraphInstantiateResult *result)
{
	if (result)
		*result = CUDA_GRAPH_INSTANTIATE_ERROR;
	struct graph *g = reg_find(hg, K_GRAPH);
	if (!ph || !g || g->owner)
		return CUDA_ERROR_INVALID_VALUE;
	if (flags & ~(unsigned long long)KNOWN_IFLAGS)
		return CUDA_ERROR_INVALID_VALUE;
	int has_mem = graph_has_mem(g);
	/* inferred from the docs (cuda-facts §3), not measured */
	if ((flags & CUDA_GRAPH_INSTANTIATE_FLAG_DEVICE_LAUNCH) &&
	    ((flags & CUDA_GRAPH_INSTANTIATE_FLAG_AUTO_FREE_ON_LAUNCH) || has_mem))
		return CUDA_ERROR_INVALID_VALUE;
	/* cuda-facts §3/§4: one live exec per graph with memory nodes -> 801 */
	if (has_mem && g->nexec > 0)
		return CUDA_ERROR_NOT_SUPPORTED;
	struct xg *x;
	CUresult rc = xg_build(g, &x);
	if (rc) {
		if (result)
			*result = CUDA_GRAPH_INSTANTIATE_INVALID_STRUCTURE;
		return rc;
	}
	struct exec *e = obj_calloc(K_EXEC, sizeof *e);
	e->id = g_next_exec_id++;
	e->g = g;
	e->flags = flags;
	e->has_mem = has_mem;
	e->x = x;
	reg_add(&e->o, K_EXEC);
	g->nexec++;
	*ph = (CUgraphExec)e;
	if (result)
		*result = CUDA_GRAPH_INSTANTIATE_SUCCESS;
	return CUDA_SUCCESS;
}

static CUresult instantiate_log(CUgraphExec *ph, CUgraph hg, CUgraphNode *err, char *log, size_t n)
{
	if (err)
		*err = NULL;
	if (log && n)
		log[0] = 0;
	return instantiate(ph, hg, 0, NULL);
}

DEF(cuGraphInstantiate, PFN_cuGraphInstantiate_v10000,
    (CUgraphExec * phGraphExec, CUgraph hGraph, CUgraphNode *phErrorNode, char *logBuffer, size_t bufferSize))
{
	ENTER_OBJ();
	return instantiate_log(phGraphExec, hGraph, phErrorNode, logBuffer, bufferSize);
}

DEF(cuGraphInstantiate_v2, PFN_cuGraphInstantiate_v11000,
    (CUgraphExec * phGraphExec, CUgraph hGraph, CUgraphNode *phErrorNode, char *logBuffer, size_t bufferSize))
{
	ENTER_OBJ();
	return instantiate_log(phGraphExec, hGraph, phErrorNode, logBuffer, bufferSize);
}

DEF(cuGraphInstantiateWithFlags, PFN_cuGraphInstantiateWithFlags_v11040,
    (CUgraphExec * phGraphExec, CUgraph hGraph, unsigned long long flags))
{
	ENTER_OBJ();
	/* UPLOAD without a stream is accepted and ignored here (inferred). */
	return instantiate(phGraphExec, hGraph, flags, NULL);
}

static CUresult instantiate_params(CUgraphExec *ph, CUgraph hg, CUDA_GRAPH_INSTANTIATE_PARAMS *ip, int ptsz)
{
	if (!ip)
		return CUDA_ERROR_INVALID_VALUE;
	ip->hErrNode_out = NULL;
	struct stream *s = NULL;
	if (ip->flags & CUDA_GRAPH_INSTANTIATE_FLAG_UPLOAD) {
		s = get_stream(ip->hUploadStream, ptsz);
		if (!s) {
			ip->result_out = CUDA_GRAPH_INSTANTIATE_ERROR;
			return CUDA_ERROR_INVALID_HANDLE;
		}
	}
	CUresult rc = instantiate(ph, hg, ip->flags, &ip->result_out);
	if (rc || !s)
		return rc;
	return exec_upload((struct exec *)*ph, s);
}

DEF(cuGraphInstantiateWithParams, PFN_cuGraphInstantiateWithParams_v12000,
    (CUgraphExec * phGraphExec, CUgraph hGraph, CUDA_GRAPH_INSTANTIATE_PARAMS *instantiateParams))
{
	ENTER_OBJ();
	return instantiate_params(phGraphExec, hGraph, instantiateParams, 0);
}

DEF(cuGraphInstantiateWithParams_ptsz, PFN_cuGraphInstantiateWithParams_v12000_ptsz,
    (CUgraphExec * phGraphExec, CUgraph hGraph, CUDA_GRAPH_INSTANTIATE_PARAMS *instantiateParams))
{
	ENTER_OBJ();
	return instantiate_params(phGraphExec, hGraph, instantiateParams, 1);
}

/* Destroying an exec frees none of its allocations (cuda-facts §3). */
static void exec_free(struct exec *e)
{
	if (e->g && e->g->nexec > 0)
		e->g->nexec--;
	if (e->res)
		e->res->exec = NULL;
	reg_del(&e->o);
	xg_free(e->x);
	obj_free(K_EXEC, e);
}

DEF(cuGraphExecDestroy, PFN_cuGraphExecDestroy_v10000, (CUgraphExec hGraphExec))
{
	ENTER_OBJ();
	struct exec *e = reg_find(hGraphExec, K_EXEC);
	if (!e)
		return CUDA_ERROR_INVALID_VALUE;
	CUresult rc = unsafe_call(); /* capture-map.md: the unsafe class */
	if (rc)
		return rc;
	exec_free(e);
	return CUDA_SUCCESS;
}

DEF(cuGraphExecGetFlags, PFN_cuGraphExecGetFlags_v12000, (CUgraphExec hGraphExec, cuuint64_t *flags))
{
	ENTER_OBJ();
	struct exec *e = reg_find(hGraphExec, K_EXEC);
	if (!e || !flags)
		return CUDA_ERROR_INVALID_VALUE;
	*flags = e->flags & ~(cuuint64_t)CUDA_GRAPH_INSTANTIATE_FLAG_UPLOAD;
	return CUDA_SUCCESS;
}

/* ------------------------------------------------------------------------ */
/* launch, upload                                                            */

static CUresult exec_upload(struct exec *e, struct stream *s)
{
	struct capture *c;
	CUresult rc = stream_op(s, &c);
	if (rc)
		return rc;
	if (c)
		return CUDA_ERROR_STREAM_CAPTURE_UNSUPPORTED;
	exec_reserve(e);
	return CUDA_SUCCESS;
}

static CUresult graph_upload(CUgraphExec he, CUstream hs, int ptsz)
{
	ENTER_OBJ();
	struct exec *e = reg_find(he, K_EXEC);
	if (!e)
		return CUDA_ERROR_INVALID_VALUE;
	struct stream *s = get_stream(hs, ptsz);
	if (!s)
		return CUDA_ERROR_INVALID_HANDLE;
	return exec_upload(e, s);
}

DEF(cuGraphUpload, PFN_cuGraphUpload_v11010, (CUgraphExec hGraphExec, CUstream hStream))
{
	return graph_upload(hGraphExec, hStream, 0);
}

DEF(cuGraphUpload_ptsz, PFN_cuGraphUpload_v11010_ptsz, (CUgraphExec hGraphExec, CUstream hStream))
{
	return graph_upload(hGraphExec, hStream, 1);
}

static CUresult graph_launch(CUgraphExec he, CUstream hs, int ptsz)
{
	ENTER_OBJ();
	struct exec *e = reg_find(he, K_EXEC);
	if (!e)
		return CUDA_ERROR_INVALID_VALUE;
	struct stream *s = get_stream(hs, ptsz);
	if (!s)
		return CUDA_ERROR_INVALID_HANDLE;
	struct capture *c;
	CUresult rc = stream_op(s, &c);
	if (rc)
		return rc;
	if (c) {
		/* launching an exec into a capture is not modelled */
		c->invalid = 1;
		return CUDA_ERROR_STREAM_CAPTURE_UNSUPPORTED;
	}
	/* cuda-facts §3/§4: unfreed allocations from the previous launch */
	if (xg_live_allocs(e->x, 0)) {
		if (!(e->flags & CUDA_GRAPH_INSTANTIATE_FLAG_AUTO_FREE_ON_LAUNCH))
			return CUDA_ERROR_INVALID_VALUE;
		xg_live_allocs(e->x, 1);
	}
	exec_reserve(e);
	xg_run(e->x, e);
	return CUDA_SUCCESS;
}

DEF(cuGraphLaunch, PFN_cuGraphLaunch_v10000, (CUgraphExec hGraphExec, CUstream hStream))
{
	return graph_launch(hGraphExec, hStream, 0);
}

DEF(cuGraphLaunch_ptsz, PFN_cuGraphLaunch_v10000_ptsz, (CUgraphExec hGraphExec, CUstream hStream))
{
	return graph_launch(hGraphExec, hStream, 1);
}

/* ------------------------------------------------------------------------ */
/* whole-graph update (cuda-facts §5)                                             */

static int same_dep_set(const struct xnode *v, const struct node *n, const struct graph *g)
{
	for (size_t j = 0; j < n->ndeps; j++) {
		size_t idx = node_index(g, n->deps[j]), k;
		for (k = 0; k < v->ndeps; k++)
			if (v->deps[k] == idx)
				break;
		if (k == v->ndeps)
			return 0;
	}
	return 1;
}

/* Compare snapshot x with graph g; on mismatch fill result and error nodes. */
static int update_check(const struct xg *x, const struct graph *g, CUgraphExecUpdateResult *res, CUgraphNode *errn,
			CUgraphNode *errfrom)
{
	if (x->n != g->n) {
		*res = CU_GRAPH_EXEC_UPDATE_ERROR_TOPOLOGY_CHANGED;
		return 0;
	}
	for (size_t i = 0; i < g->n; i++) {
		const struct xnode *v = &x->v[i];
		const struct node *n = g->nodes[i];
		*errn = (CUgraphNode)n;
		*errfrom = v->src;
		if (v->type != n->p.type) {
			*res = CU_GRAPH_EXEC_UPDATE_ERROR_NODE_TYPE_CHANGED;
			return 0;
		}
		if (v->ndeps != n->ndeps || !same_dep_set(v, n, g)) {
			*res = CU_GRAPH_EXEC_UPDATE_ERROR_TOPOLOGY_CHANGED;
			return 0;
		}
		switch (v->type) {
		case CU_GRAPH_NODE_TYPE_MEMSET:
			/* the extent in bytes may not change; the element size may
			 * (measured on the H100, docs/update-refusals.md) */
			if ((size_t)v->p.ms.width * v->p.ms.elementSize !=
				(size_t)n->p.ms.width * n->p.ms.elementSize ||
			    v->p.ms.height != n->p.ms.height) {
				*res = CU_GRAPH_EXEC_UPDATE_ERROR_PARAMETERS_CHANGED;
				return 0;
			}
			break;
		case CU_GRAPH_NODE_TYPE_KERNEL:
			/* a cooperative change is refused (docs/update-refusals.md) */
			if (v->p.k.coop != n->p.k.coop) {
				*res = CU_GRAPH_EXEC_UPDATE_ERROR_ATTRIBUTES_CHANGED;
				return 0;
			}
			break;
		case CU_GRAPH_NODE_TYPE_MEMCPY:
			if (v->p.cp.srcMemoryType != n->p.cp.srcMemoryType ||
			    v->p.cp.dstMemoryType != n->p.cp.dstMemoryType) {
				*res = CU_GRAPH_EXEC_UPDATE_ERROR_PARAMETERS_CHANGED;
				return 0;
			}
			break;
		case CU_GRAPH_NODE_TYPE_GRAPH: {
			CUgraphNode a, b;
			if (!v->child || !n->p.child || !update_check(v->child, n->p.child, res, &a, &b))
				return 0;
			break;
		}
		default:
			break;
		}
	}
	*errn = *errfrom = NULL;
	return 1;
}

/* Adopt g's parameters into x (same shape, checked). Alloc nodes adopt the
 * new graph's address, size and props (cuda-facts §5, observed). */
static void update_apply(struct xg *x, const struct graph *g)
{
	for (size_t i = 0; i < g->n; i++) {
		struct xnode *v = &x->v[i];
		const struct node *n = g->nodes[i];
		if (v->type == CU_GRAPH_NODE_TYPE_GRAPH) {
			update_apply(v->child, n->p.child);
			continue;
		}
		if (v->type == CU_GRAPH_NODE_TYPE_MEM_ALLOC && v->p.al.dptr != n->p.al.dptr) {
			/* cuda-facts §5: after the update the old address reads as
			 * "Allocation not found": drop a live allocation there */
			struct alloc *a = alloc_find(v->p.al.dptr);
			if (a && a->kind == A_GRAPH && a->live)
				free_any(a->addr);
		}
		if (v->type == CU_GRAPH_NODE_TYPE_KERNEL)
			kp_free(&v->p.k);
		np_arrays_free(&v->p);
		v->p = n->p;
		v->p.child = NULL;
		v->p.body = NULL, v->p.nbody = 0;
		np_own(&v->p);
	}
}

static CUresult exec_update(CUgraphExec he, CUgraph hg, CUgraphExecUpdateResultInfo *info)
{
	info->result = CU_GRAPH_EXEC_UPDATE_ERROR;
	info->errorNode = info->errorFromNode = NULL;
	struct exec *e = reg_find(he, K_EXEC);
	struct graph *g = reg_find(hg, K_GRAPH);
	if (!e || !g || g->owner || g->capturing)
		return CUDA_ERROR_INVALID_VALUE;
	/* cuda-facts §4/§5: updating graph with memory nodes and its own live exec */
	if (graph_has_mem(g) && g->nexec > 0) {
		info->result = CU_GRAPH_EXEC_UPDATE_SUCCESS;
		return CUDA_ERROR_NOT_SUPPORTED;
	}
	CUgraphExecUpdateResult res = CU_GRAPH_EXEC_UPDATE_SUCCESS;
	CUgraphNode en = NULL, ef = NULL;
	/* Fault injection, not the driver: STANDIN_UPDATE_REFUSE=R refuses
	 * every update with 910 and result R, a refusal the shim's model cannot
	 * foresee (its mismatch record, the report's "Predictions the driver
	 * disagreed with", --dot of an unpredicted failure: run.py 'mispredicted'). */
	const char *inject = getenv("STANDIN_UPDATE_REFUSE");
	if (inject && *inject) {
		info->result = (CUgraphExecUpdateResult)atoi(inject);
		return CUDA_ERROR_GRAPH_EXEC_UPDATE_FAILURE;
	}
	if (!update_check(e->x, g, &res, &en, &ef)) {
		info->result = res;
		info->errorNode = en;
		info->errorFromNode = ef;
		return CUDA_ERROR_GRAPH_EXEC_UPDATE_FAILURE;
	}
	update_apply(e->x, g);
	e->has_mem = graph_has_mem(g);
	info->result = CU_GRAPH_EXEC_UPDATE_SUCCESS;
	return CUDA_SUCCESS;
}

DEF(cuGraphExecUpdate, PFN_cuGraphExecUpdate_v10020,
    (CUgraphExec hGraphExec, CUgraph hGraph, CUgraphNode *hErrorNode_out, CUgraphExecUpdateResult *updateResult_out))
{
	ENTER_OBJ();
	if (!hErrorNode_out || !updateResult_out)
		return CUDA_ERROR_INVALID_VALUE;
	CUgraphExecUpdateResultInfo info;
	CUresult rc = exec_update(hGraphExec, hGraph, &info);
	*hErrorNode_out = info.errorNode;
	*updateResult_out = info.result;
	return rc;
}

DEF(cuGraphExecUpdate_v2, PFN_cuGraphExecUpdate_v12000,
    (CUgraphExec hGraphExec, CUgraph hGraph, CUgraphExecUpdateResultInfo *resultInfo))
{
	ENTER_OBJ();
	CUgraphExecUpdateResultInfo info;
	CUresult rc = exec_update(hGraphExec, hGraph, &info);
	if (resultInfo)
		*resultInfo = info;
	return rc;
}

/* ------------------------------------------------------------------------ */
/* per-node exec setters                                                     */

/* The exec's copy of node hn; NULL (-> INVALID_VALUE) unless hn is a live node
 * of the exec's source graph. */
static struct xnode *exec_node(CUgraphExec he, CUgraphNode hn, struct exec **pe)
{
	struct exec *e = reg_find(he, K_EXEC);
	struct node *n = reg_find(hn, K_NODE);
	if (!e || !n || !e->g || n->g != e->g)
		return NULL;
	if (pe)
		*pe = e;
	return xg_find(e->x, n);
}

static CUresult exec_set_kernel(CUgraphExec he, CUgraphNode hn, const CUDA_KERNEL_NODE_PARAMS_v1 *k1,
				const CUDA_KERNEL_NODE_PARAMS_v2 *k2)
{
	struct xnode *v = exec_node(he, hn, NULL);
	if (!v || v->type != CU_GRAPH_NODE_TYPE_KERNEL)
		return CUDA_ERROR_INVALID_VALUE;
	struct nparams p = {0};
	CUresult rc = kernel_np(&p, k1, k2);
	if (rc)
		return rc;
	p.k.coop = v->p.k.coop; /* the node's attributes stay (inferred) */
	kp_free(&v->p.k);
	v->p.k = p.k;
	return CUDA_SUCCESS;
}

DEF(cuGraphExecKernelNodeSetParams, PFN_cuGraphExecKernelNodeSetParams_v10010,
    (CUgraphExec hGraphExec, CUgraphNode hNode, const CUDA_KERNEL_NODE_PARAMS_v1 *nodeParams))
{
	ENTER_OBJ();
	if (!nodeParams)
		return CUDA_ERROR_INVALID_VALUE;
	return exec_set_kernel(hGraphExec, hNode, nodeParams, NULL);
}

DEF(cuGraphExecKernelNodeSetParams_v2, PFN_cuGraphExecKernelNodeSetParams_v12000,
    (CUgraphExec hGraphExec, CUgraphNode hNode, const CUDA_KERNEL_NODE_PARAMS_v2 *nodeParams))
{
	ENTER_OBJ();
	if (!nodeParams)
		return CUDA_ERROR_INVALID_VALUE;
	return exec_set_kernel(hGraphExec, hNode, NULL, nodeParams);
}

static CUresult exec_set_memset(struct xnode *v, const CUDA_MEMSET_NODE_PARAMS *m)
{
	if (!v || v->type != CU_GRAPH_NODE_TYPE_MEMSET || !m)
		return CUDA_ERROR_INVALID_VALUE;
	if (m->width != v->p.ms.width || m->height != v->p.ms.height || m->elementSize != v->p.ms.elementSize)
		return CUDA_ERROR_INVALID_VALUE;
	v->p.ms = *m;
	return CUDA_SUCCESS;
}

static CUresult exec_set_memcpy(struct xnode *v, const CUDA_MEMCPY3D *c)
{
	if (!v || v->type != CU_GRAPH_NODE_TYPE_MEMCPY || !c)
		return CUDA_ERROR_INVALID_VALUE;
	if (c->srcMemoryType != v->p.cp.srcMemoryType || c->dstMemoryType != v->p.cp.dstMemoryType)
		return CUDA_ERROR_INVALID_VALUE;
	v->p.cp = *c;
	return CUDA_SUCCESS;
}

static CUresult exec_set_child(struct xnode *v, CUgraph hchild)
{
	struct graph *c = reg_find(hchild, K_GRAPH);
	if (!v || v->type != CU_GRAPH_NODE_TYPE_GRAPH || !c || !v->child)
		return CUDA_ERROR_INVALID_VALUE;
	if (graph_has_mem(c))
		return CUDA_ERROR_INVALID_VALUE;
	CUgraphExecUpdateResult r;
	CUgraphNode a, b;
	if (!update_check(v->child, c, &r, &a, &b))
		return CUDA_ERROR_INVALID_VALUE;
	update_apply(v->child, c);
	return CUDA_SUCCESS;
}

/* The exec's copy of a semaphore or operation node takes the new arrays
 * (same count: the node's shape is fixed, inferred). */
static CUresult exec_set_sems(struct xnode *v, int type, const CUexternalSemaphore *sems, const void *params,
			      unsigned n)
{
	struct nparams p = {0};
	if (!v || v->type != type || n != v->p.nsem || sems_np(&p, type, sems, params, n))
		return CUDA_ERROR_INVALID_VALUE;
	np_arrays_free(&v->p);
	v->p.sems = p.sems, v->p.semp = p.semp;
	return CUDA_SUCCESS;
}

static CUresult exec_set_memop(struct xnode *v, CUcontext ctx, unsigned count, const CUstreamBatchMemOpParams *ops,
			       unsigned flags)
{
	struct nparams p = {0};
	if (!v || v->type != CU_GRAPH_NODE_TYPE_BATCH_MEM_OP || memop_np(&p, ctx, count, ops, flags))
		return CUDA_ERROR_INVALID_VALUE;
	np_arrays_free(&v->p);
	v->p.ops = p.ops, v->p.nops = p.nops, v->p.opflags = p.opflags;
	return CUDA_SUCCESS;
}

static CUresult exec_set_event(CUgraphExec he, CUgraphNode hn, CUevent ev, int type);

DEF(cuGraphExecNodeSetParams, PFN_cuGraphExecNodeSetParams_v12020,
    (CUgraphExec hGraphExec, CUgraphNode hNode, CUgraphNodeParams *nodeParams))
{
	ENTER_OBJ();
	struct xnode *v = exec_node(hGraphExec, hNode, NULL);
	if (!v || !nodeParams || (int)nodeParams->type != v->type)
		return CUDA_ERROR_INVALID_VALUE;
	switch (v->type) {
	case CU_GRAPH_NODE_TYPE_KERNEL:
		return exec_set_kernel(hGraphExec, hNode, NULL,
				       (const CUDA_KERNEL_NODE_PARAMS_v2 *)&nodeParams->kernel);
	case CU_GRAPH_NODE_TYPE_MEMSET: {
		CUDA_MEMSET_NODE_PARAMS m = {.dst = nodeParams->memset.dst,
					     .pitch = nodeParams->memset.pitch,
					     .value = nodeParams->memset.value,
					     .elementSize = nodeParams->memset.elementSize,
					     .width = nodeParams->memset.width,
					     .height = nodeParams->memset.height};
		return exec_set_memset(v, &m);
	}
	case CU_GRAPH_NODE_TYPE_MEMCPY:
		return exec_set_memcpy(v, &nodeParams->memcpy.copyParams);
	case CU_GRAPH_NODE_TYPE_HOST:
		if (!nodeParams->host.fn)
			return CUDA_ERROR_INVALID_VALUE;
		v->p.hp.fn = nodeParams->host.fn;
		v->p.hp.userData = nodeParams->host.userData;
		return CUDA_SUCCESS;
	case CU_GRAPH_NODE_TYPE_GRAPH:
		return exec_set_child(v, nodeParams->graph.graph);
	case CU_GRAPH_NODE_TYPE_EMPTY:
		return CUDA_SUCCESS;
	case CU_GRAPH_NODE_TYPE_EVENT_RECORD:
		return exec_set_event(hGraphExec, hNode, nodeParams->eventRecord.event, v->type);
	case CU_GRAPH_NODE_TYPE_WAIT_EVENT:
		return exec_set_event(hGraphExec, hNode, nodeParams->eventWait.event, v->type);
	case CU_GRAPH_NODE_TYPE_EXT_SEMAS_SIGNAL:
		return exec_set_sems(v, v->type, nodeParams->extSemSignal.extSemArray,
				     nodeParams->extSemSignal.paramsArray, nodeParams->extSemSignal.numExtSems);
	case CU_GRAPH_NODE_TYPE_EXT_SEMAS_WAIT:
		return exec_set_sems(v, v->type, nodeParams->extSemWait.extSemArray, nodeParams->extSemWait.paramsArray,
				     nodeParams->extSemWait.numExtSems);
	case CU_GRAPH_NODE_TYPE_BATCH_MEM_OP:
		return exec_set_memop(v, nodeParams->memOp.ctx, nodeParams->memOp.count, nodeParams->memOp.paramArray,
				      nodeParams->memOp.flags);
	default:
		/* MEM_ALLOC / MEM_FREE are not supported (cuda-facts §3), nor a
		 * conditional's (inferred) */
		return CUDA_ERROR_INVALID_VALUE;
	}
}

DEF(cuGraphExecExternalSemaphoresSignalNodeSetParams, PFN_cuGraphExecExternalSemaphoresSignalNodeSetParams_v11020,
    (CUgraphExec hGraphExec, CUgraphNode hNode, const CUDA_EXT_SEM_SIGNAL_NODE_PARAMS *nodeParams))
{
	ENTER_OBJ();
	if (!nodeParams)
		return CUDA_ERROR_INVALID_VALUE;
	return exec_set_sems(exec_node(hGraphExec, hNode, NULL), CU_GRAPH_NODE_TYPE_EXT_SEMAS_SIGNAL,
			     nodeParams->extSemArray, nodeParams->paramsArray, nodeParams->numExtSems);
}

DEF(cuGraphExecExternalSemaphoresWaitNodeSetParams, PFN_cuGraphExecExternalSemaphoresWaitNodeSetParams_v11020,
    (CUgraphExec hGraphExec, CUgraphNode hNode, const CUDA_EXT_SEM_WAIT_NODE_PARAMS *nodeParams))
{
	ENTER_OBJ();
	if (!nodeParams)
		return CUDA_ERROR_INVALID_VALUE;
	return exec_set_sems(exec_node(hGraphExec, hNode, NULL), CU_GRAPH_NODE_TYPE_EXT_SEMAS_WAIT,
			     nodeParams->extSemArray, nodeParams->paramsArray, nodeParams->numExtSems);
}

DEF(cuGraphExecBatchMemOpNodeSetParams, PFN_cuGraphExecBatchMemOpNodeSetParams_v11070,
    (CUgraphExec hGraphExec, CUgraphNode hNode, const CUDA_BATCH_MEM_OP_NODE_PARAMS *nodeParams))
{
	ENTER_OBJ();
	if (!nodeParams)
		return CUDA_ERROR_INVALID_VALUE;
	return exec_set_memop(exec_node(hGraphExec, hNode, NULL), nodeParams->ctx, nodeParams->count,
			      nodeParams->paramArray, nodeParams->flags);
}

DEF(cuGraphExecMemsetNodeSetParams, PFN_cuGraphExecMemsetNodeSetParams_v10020,
    (CUgraphExec hGraphExec, CUgraphNode hNode, const CUDA_MEMSET_NODE_PARAMS *memsetParams, CUcontext ctx))
{
	ENTER_OBJ();
	if (!ctx_ok(ctx))
		return CUDA_ERROR_INVALID_CONTEXT;
	return exec_set_memset(exec_node(hGraphExec, hNode, NULL), memsetParams);
}

DEF(cuGraphExecMemcpyNodeSetParams, PFN_cuGraphExecMemcpyNodeSetParams_v10020,
    (CUgraphExec hGraphExec, CUgraphNode hNode, const CUDA_MEMCPY3D *copyParams, CUcontext ctx))
{
	ENTER_OBJ();
	if (!ctx_ok(ctx))
		return CUDA_ERROR_INVALID_CONTEXT;
	return exec_set_memcpy(exec_node(hGraphExec, hNode, NULL), copyParams);
}

DEF(cuGraphExecHostNodeSetParams, PFN_cuGraphExecHostNodeSetParams_v10020,
    (CUgraphExec hGraphExec, CUgraphNode hNode, const CUDA_HOST_NODE_PARAMS *nodeParams))
{
	ENTER_OBJ();
	struct xnode *v = exec_node(hGraphExec, hNode, NULL);
	if (!v || v->type != CU_GRAPH_NODE_TYPE_HOST || !nodeParams || !nodeParams->fn)
		return CUDA_ERROR_INVALID_VALUE;
	v->p.hp = *nodeParams;
	return CUDA_SUCCESS;
}

DEF(cuGraphExecChildGraphNodeSetParams, PFN_cuGraphExecChildGraphNodeSetParams_v11010,
    (CUgraphExec hGraphExec, CUgraphNode hNode, CUgraph childGraph))
{
	ENTER_OBJ();
	return exec_set_child(exec_node(hGraphExec, hNode, NULL), childGraph);
}

static CUresult exec_set_event(CUgraphExec he, CUgraphNode hn, CUevent ev, int type)
{
	struct xnode *v = exec_node(he, hn, NULL);
	if (!v || v->type != type)
		return CUDA_ERROR_INVALID_VALUE;
	if (!reg_find(ev, K_EVENT))
		return CUDA_ERROR_INVALID_HANDLE;
	v->p.ev = ev;
	return CUDA_SUCCESS;
}

DEF(cuGraphExecEventRecordNodeSetEvent, PFN_cuGraphExecEventRecordNodeSetEvent_v11010,
    (CUgraphExec hGraphExec, CUgraphNode hNode, CUevent event))
{
	ENTER_OBJ();
	return exec_set_event(hGraphExec, hNode, event, CU_GRAPH_NODE_TYPE_EVENT_RECORD);
}

DEF(cuGraphExecEventWaitNodeSetEvent, PFN_cuGraphExecEventWaitNodeSetEvent_v11010,
    (CUgraphExec hGraphExec, CUgraphNode hNode, CUevent event))
{
	ENTER_OBJ();
	return exec_set_event(hGraphExec, hNode, event, CU_GRAPH_NODE_TYPE_WAIT_EVENT);
}

static int enable_type_ok(int t)
{
	return t == CU_GRAPH_NODE_TYPE_KERNEL || t == CU_GRAPH_NODE_TYPE_MEMCPY || t == CU_GRAPH_NODE_TYPE_MEMSET;
}

DEF(cuGraphNodeSetEnabled, PFN_cuGraphNodeSetEnabled_v11060,
    (CUgraphExec hGraphExec, CUgraphNode hNode, unsigned int isEnabled))
{
	ENTER_OBJ();
	struct xnode *v = exec_node(hGraphExec, hNode, NULL);
	if (!v || !enable_type_ok(v->type))
		return CUDA_ERROR_INVALID_VALUE;
	v->enabled = isEnabled != 0;
	return CUDA_SUCCESS;
}

DEF(cuGraphNodeGetEnabled, PFN_cuGraphNodeGetEnabled_v11060,
    (CUgraphExec hGraphExec, CUgraphNode hNode, unsigned int *isEnabled))
{
	ENTER_OBJ();
	struct xnode *v = exec_node(hGraphExec, hNode, NULL);
	if (!v || !enable_type_ok(v->type) || !isEnabled)
		return CUDA_ERROR_INVALID_VALUE;
	*isEnabled = (unsigned)v->enabled;
	return CUDA_SUCCESS;
}

/* ------------------------------------------------------------------------ */
/* the primary context's reset                                               */

/* Whether the reset of dev destroys o: a stream (not the legacy or a
 * per-thread one), event, graph (not one owned by a node or captured
 * into), executable or pool (not a default one) made in dev's context.
 * Modules, libraries and functions stay (below: parity). */
static int reset_takes(const struct obj *o, int dev)
{
	switch (o->kind) {
	case K_STREAM: {
		const struct stream *s = (const struct stream *)o;
		return s->dev == dev && !s->legacy;
	}
	case K_GRAPH: {
		const struct graph *g = (const struct graph *)o;
		return o->dev == dev && !g->owner && !g->capturing;
	}
	case K_POOL:
		return o->dev == dev && !((const struct pool *)o)->is_default;
	case K_EVENT:
	case K_EXEC:
		return o->dev == dev;
	default:
		return 0;
	}
}

static void reset_destroy(struct obj *o)
{
	switch (o->kind) {
	case K_STREAM:
		stream_free((struct stream *)o);
		break;
	case K_EVENT:
		event_free((struct event *)o);
		break;
	case K_GRAPH:
		graph_free((struct graph *)o);
		break;
	case K_EXEC:
		exec_free((struct exec *)o);
		break;
	case K_POOL:
		pool_destroy((struct pool *)o);
		break;
	}
}

/* cuDevicePrimaryCtxReset(_v2): "destroys all allocations and resets all
 * state on the primary context" (cuda.h). Every capture begun on a stream
 * of dev ends (its graph goes), then its executables, graphs, events,
 * streams and pools are destroyed, its allocations (plain, pool, graph)
 * freed and its graph-memory reservations released; its default pool is
 * emptied and current again. A handle from before the reset then answers
 * as any destroyed one (the registry no longer knows it: an error, never
 * a crash). Parity: the context handle stays the same and current (the
 * real driver's primary context is made again at its next use; not
 * measured whether its handle changes); modules, libraries and functions,
 * pinned host memory and VMM reservations are kept (the real reset unloads
 * the context's modules and frees its host allocations); a stream of dev
 * forked into another device's capture is destroyed with the others. */
static CUresult primary_reset(CUdevice dev)
{
	ENTER_OBJ();
	if (!dev_ok(dev))
		return CUDA_ERROR_INVALID_DEVICE;
	for (struct capture *c = g_caps, *next; c; c = next) {
		next = c->next;
		if (stream_dev(c->origin) == dev)
			capture_finish(c, 1);
	}
	/* one at a time: a graph's destroy takes its nodes out of the registry,
	 * which would leave an iteration's next pointer dangling */
	for (;;) {
		struct obj *o, *t, *hit = NULL;
		HASH_ITER(hh, g_objs, o, t)
		{
			if (reset_takes(o, dev)) {
				hit = o;
				break;
			}
		}
		if (!hit)
			break;
		reset_destroy(hit);
	}
	struct alloc *a, *t;
	HASH_ITER(hh, g_allocs, a, t)
	{
		int d = a->kind == A_POOL && a->pool ? a->pool->o.dev : a->dev;
		if (d != dev)
			continue;
		if (a->kind == A_PLAIN && a->live)
			g_plain_bytes -= round_up(a->size, PLAIN_GRAN);
		alloc_release(a);
	}
	for (struct gres **pp = &g_gres; *pp;) {
		struct gres *r = *pp;
		int left = 0;
		r->bytes[dev] = 0;
		for (int d = 0; d < STANDIN_MAX_DEV; d++)
			left |= r->bytes[d] != 0;
		if (left || r->exec) {
			pp = &r->next;
			continue;
		}
		*pp = r->next;
		free(r);
	}
	struct pool *def = &g_default_pool[dev];
	def->res_cur = def->used_cur = def->threshold = 0;
	g_cur_pool[dev] = def;
	return CUDA_SUCCESS;
}

DEF(cuDevicePrimaryCtxReset, PFN_cuDevicePrimaryCtxReset_v7000, (CUdevice dev))
{
	return primary_reset(dev);
}

DEF(cuDevicePrimaryCtxReset_v2, PFN_cuDevicePrimaryCtxReset_v11000, (CUdevice dev))
{
	return primary_reset(dev);
}

/* ------------------------------------------------------------------------ */
/* cuGetProcAddress (cuda-facts §2.1)                                             */

struct procent {
	const char *base;
	int ver;
	void *fn;   /* exported symbol, plain */
	void *ptsz; /* per-thread twin, or NULL */
};

EXPORT CUresult sd_cuGetProcAddress(const char *, void **, int, cuuint64_t) __asm__("cuGetProcAddress");
EXPORT CUresult sd_cuGetProcAddress_v2(const char *, void **, int, cuuint64_t,
				       CUdriverProcAddressQueryResult *) __asm__("cuGetProcAddress_v2");

/* E: no per-thread twin; P: has one named <sym>_ptsz; D: <sym>_ptds. */
#define E(base, ver, sym) {#base, ver, (void *)&sd_##sym, NULL},
#define P(base, ver, sym) {#base, ver, (void *)&sd_##sym, (void *)&sd_##sym##_ptsz},
#define D(base, ver, sym) {#base, ver, (void *)&sd_##sym, (void *)&sd_##sym##_ptds},

static const struct procent g_procs[] = {
    E(cuGetErrorName, 6000, cuGetErrorName) E(cuGetErrorString, 6000, cuGetErrorString) E(cuInit, 2000, cuInit)
	E(cuDriverGetVersion, 2020, cuDriverGetVersion) E(cuGetExportTable, 3000, cuGetExportTable)
	    E(cuGetProcAddress, 11030, cuGetProcAddress) E(cuGetProcAddress, 12000,
							   cuGetProcAddress_v2) E(cuDeviceGet, 2000, cuDeviceGet)
		E(cuDeviceGetCount, 2000, cuDeviceGetCount) E(cuDeviceGetName, 2000, cuDeviceGetName) E(
		    cuDeviceTotalMem, 3020, cuDeviceTotalMem_v2) E(cuDeviceGetAttribute, 2000, cuDeviceGetAttribute)
		    E(cuDevicePrimaryCtxRetain, 7000, cuDevicePrimaryCtxRetain) E(cuDevicePrimaryCtxRelease, 7000,
										  cuDevicePrimaryCtxRelease)
			E(cuDevicePrimaryCtxReset, 7000, cuDevicePrimaryCtxReset) E(cuDevicePrimaryCtxReset, 11000,
										    cuDevicePrimaryCtxReset_v2)
			    E(cuDevicePrimaryCtxRelease, 11000, cuDevicePrimaryCtxRelease_v2) E(
				cuCtxGetCurrent, 4000, cuCtxGetCurrent) E(cuCtxSetCurrent, 4000, cuCtxSetCurrent)
				E(cuCtxGetDevice, 2000, cuCtxGetDevice) E(cuCtxGetDevice, 13000, cuCtxGetDevice_v2) E(
				    cuCtxSynchronize, 2000,
				    cuCtxSynchronize) E(cuCtxSynchronize, 13000,
							cuCtxSynchronize_v2) E(cuStreamCreate, 2000, cuStreamCreate)
				    E(cuStreamDestroy, 2000, cuStreamDestroy) E(
					cuStreamDestroy, 4000, cuStreamDestroy_v2) P(cuStreamQuery, 2000, cuStreamQuery)
					P(cuStreamSynchronize, 2000,
					  cuStreamSynchronize) P(cuStreamGetId, 12000, cuStreamGetId)
					    P(cuStreamGetFlags, 5050, cuStreamGetFlags) P(
						cuStreamWaitEvent, 3020,
						cuStreamWaitEvent) E(cuEventCreate, 2000, cuEventCreate)
						E(cuEventDestroy, 4000, cuEventDestroy_v2) P(
						    cuEventRecord, 2000,
						    cuEventRecord) E(cuEventSynchronize, 2000,
								     cuEventSynchronize) E(cuEventQuery, 2000,
											   cuEventQuery)
						    E(cuModuleLoadData, 2000,
						      cuModuleLoadData) E(cuModuleUnload, 2000, cuModuleUnload)
							E(cuLibraryLoadData, 12000,
							  cuLibraryLoadData) E(cuLibraryUnload, 12000, cuLibraryUnload)
							    P(cuStreamBeginCapture, 10000, cuStreamBeginCapture)
								P(cuStreamBeginCapture, 10010, cuStreamBeginCapture_v2)
								    P(cuStreamBeginCaptureToGraph, 12030,
								      cuStreamBeginCaptureToGraph)
									P(cuStreamEndCapture, 10000,
									  cuStreamEndCapture) P(cuStreamIsCapturing,
												10000,
												cuStreamIsCapturing)
									    P(cuStreamGetCaptureInfo, 10010,
									      cuStreamGetCaptureInfo)
										P(cuStreamGetCaptureInfo, 11030, cuStreamGetCaptureInfo_v2) P(cuStreamGetCaptureInfo, 12030, cuStreamGetCaptureInfo_v3) P(cuStreamUpdateCaptureDependencies, 11030, cuStreamUpdateCaptureDependencies) P(cuStreamUpdateCaptureDependencies, 12030, cuStreamUpdateCaptureDependencies_v2) E(cuThreadExchangeStreamCaptureMode, 10010, cuThreadExchangeStreamCaptureMode) P(cuLaunchKernel, 4000, cuLaunchKernel) P(cuLaunchCooperativeKernel,
																																																												  9000,
																																																												  cuLaunchCooperativeKernel) E(cuGraphKernelNodeGetAttribute, 11000, cuGraphKernelNodeGetAttribute) E(cuGraphKernelNodeSetAttribute, 11000, cuGraphKernelNodeSetAttribute) P(cuLaunchHostFunc,
																																																																																	     10000, cuLaunchHostFunc) D(cuMemcpy, 4000, cuMemcpy) P(cuMemcpyAsync,
																																																																																								    4000, cuMemcpyAsync) D(cuMemcpyHtoD, 3020, cuMemcpyHtoD_v2) D(cuMemcpyDtoH, 3020, cuMemcpyDtoH_v2) D(cuMemcpyDtoD, 3020, cuMemcpyDtoD_v2) P(cuMemcpyHtoDAsync, 3020, cuMemcpyHtoDAsync_v2) P(cuMemcpyDtoHAsync, 3020, cuMemcpyDtoHAsync_v2) P(cuMemcpyDtoDAsync,
																																																																																																																						  3020,
																																																																																																																						  cuMemcpyDtoDAsync_v2) D(cuMemsetD8,
																																																																																																																									  3020, cuMemsetD8_v2) D(cuMemsetD32,
																																																																																																																												 3020, cuMemsetD32_v2) P(cuMemsetD8Async, 3020, cuMemsetD8Async) P(cuMemsetD32Async,
																																																																																																																																				   3020, cuMemsetD32Async) E(cuMemGetInfo, 3020, cuMemGetInfo_v2) E(cuMemAlloc, 3020, cuMemAlloc_v2) E(cuMemFree, 3020, cuMemFree_v2) E(cuMemAllocHost,
																																																																																																																																																					2000,
																																																																																																																																																					cuMemAllocHost) E(cuMemAllocHost,
																																																																																																																																																							  3020, cuMemAllocHost_v2) E(cuMemHostAlloc, 2020, cuMemHostAlloc) E(cuMemFreeHost,
																																																																																																																																																															     2000, cuMemFreeHost) E(cuMemHostRegister,
																																																																																																																																																																		    4000, cuMemHostRegister) E(cuMemHostRegister,
																																																																																																																																																																					       6050,
																																																																																																																																																																					       cuMemHostRegister_v2) E(cuMemHostUnregister, 4000, cuMemHostUnregister) E(cuMemAddressReserve, 10020, cuMemAddressReserve) E(cuMemAddressFree, 10020, cuMemAddressFree) E(cuMemCreate,
																																																																																																																																																																																											 10020, cuMemCreate) E(cuMemRelease,
																																																																																																																																																																																													       10020, cuMemRelease) E(cuMemMap,
																																																																																																																																																																																																      10020,
																																																																																																																																																																																																      cuMemMap) E(cuMemUnmap,
																																																																																																																																																																																																		  10020,
																																																																																																																																																																																																		  cuMemUnmap) E(cuMemSetAccess,
																																																																																																																																																																																																				10020, cuMemSetAccess) P(cuMemAllocAsync,
																																																																																																																																																																																																							 11020, cuMemAllocAsync) P(cuMemAllocFromPoolAsync, 11020, cuMemAllocFromPoolAsync) P(cuMemFreeAsync,
																																																																																																																																																																																																																	      11020,
																																																																																																																																																																																																																	      cuMemFreeAsync) E(cuMemPoolCreate,
																																																																																																																																																																																																																				11020, cuMemPoolCreate) E(cuMemPoolDestroy,
																																																																																																																																																																																																																							  11020,
																																																																																																																																																																																																																							  cuMemPoolDestroy) E(cuMemPoolTrimTo,
																																																																																																																																																																																																																									      11020,
																																																																																																																																																																																																																									      cuMemPoolTrimTo) E(cuMemPoolSetAttribute, 11020, cuMemPoolSetAttribute) E(cuMemPoolGetAttribute,
																																																																																																																																																																																																																																			11020, cuMemPoolGetAttribute) E(cuDeviceGetDefaultMemPool,
																																																																																																																																																																																																																																							11020, cuDeviceGetDefaultMemPool) E(cuDeviceGetMemPool,
																																																																																																																																																																																																																																											    11020, cuDeviceGetMemPool) E(cuDeviceSetMemPool, 11020, cuDeviceSetMemPool) E(cuMemGetDefaultMemPool,
																																																																																																																																																																																																																																																					  13000,
																																																																																																																																																																																																																																																					  cuMemGetDefaultMemPool) E(cuMemGetMemPool, 13000, cuMemGetMemPool) E(cuMemSetMemPool, 13000, cuMemSetMemPool) E(cuDeviceGraphMemTrim, 11040, cuDeviceGraphMemTrim) E(cuDeviceGetGraphMemAttribute, 11040, cuDeviceGetGraphMemAttribute) E(cuDeviceSetGraphMemAttribute,
																																																																																																																																																																																																																																																																																		    11040,
																																																																																																																																																																																																																																																																																		    cuDeviceSetGraphMemAttribute) E(cuGraphCreate,
																																																																																																																																																																																																																																																																																						    10000,
																																																																																																																																																																																																																																																																																						    cuGraphCreate) E(cuGraphDestroy,
																																																																																																																																																																																																																																																																																								     10000,
																																																																																																																																																																																																																																																																																								     cuGraphDestroy) E(cuGraphClone, 10000, cuGraphClone) E(cuGraphAddEmptyNode, 10000, cuGraphAddEmptyNode) E(cuGraphAddKernelNode, 10000, cuGraphAddKernelNode) E(cuGraphAddKernelNode, 12000, cuGraphAddKernelNode_v2) E(cuGraphAddMemAllocNode,
																																																																																																																																																																																																																																																																																																																			    11040,
																																																																																																																																																																																																																																																																																																																			    cuGraphAddMemAllocNode) E(cuGraphAddMemFreeNode, 11040, cuGraphAddMemFreeNode) E(cuGraphAddChildGraphNode,
																																																																																																																																																																																																																																																																																																																													     10000,
																																																																																																																																																																																																																																																																																																																													     cuGraphAddChildGraphNode) E(cuGraphAddNode, 12020, cuGraphAddNode) E(cuGraphAddNode, 12030, cuGraphAddNode_v2) E(cuGraphNodeSetParams, 12020, cuGraphNodeSetParams) E(cuGraphDestroyNode,
																																																																																																																																																																																																																																																																																																																																																		   10000,
																																																																																																																																																																																																																																																																																																																																																		   cuGraphDestroyNode) E(cuGraphAddDependencies, 10000, cuGraphAddDependencies) E(cuGraphAddDependencies,
																																																																																																																																																																																																																																																																																																																																																												  12030,
																																																																																																																																																																																																																																																																																																																																																												  cuGraphAddDependencies_v2) E(cuGraphRemoveDependencies,
																																																																																																																																																																																																																																																																																																																																																															       10000,
																																																																																																																																																																																																																																																																																																																																																															       cuGraphRemoveDependencies) E(cuGraphRemoveDependencies,
																																																																																																																																																																																																																																																																																																																																																																			    12030, cuGraphRemoveDependencies_v2) E(cuGraphGetNodes, 10000, cuGraphGetNodes) E(cuGraphGetRootNodes,
																																																																																																																																																																																																																																																																																																																																																																													      10000, cuGraphGetRootNodes) E(cuGraphGetEdges, 10000, cuGraphGetEdges) E(cuGraphGetEdges,
																																																																																																																																																																																																																																																																																																																																																																																						       12030,
																																																																																																																																																																																																																																																																																																																																																																																						       cuGraphGetEdges_v2) E(cuGraphNodeGetType,
																																																																																																																																																																																																																																																																																																																																																																																									     10000, cuGraphNodeGetType) E(cuGraphChildGraphNodeGetGraph, 10000, cuGraphChildGraphNodeGetGraph) E(cuGraphMemAllocNodeGetParams,
																																																																																																																																																																																																																																																																																																																																																																																																						 11040, cuGraphMemAllocNodeGetParams) E(cuGraphMemFreeNodeGetParams,
																																																																																																																																																																																																																																																																																																																																																																																																											11040, cuGraphMemFreeNodeGetParams) E(cuGraphKernelNodeGetParams, 10000, cuGraphKernelNodeGetParams) E(cuGraphKernelNodeGetParams, 12000, cuGraphKernelNodeGetParams_v2) E(cuGraphInstantiate,
																																																																																																																																																																																																																																																																																																																																																																																																																																   10000,
																																																																																																																																																																																																																																																																																																																																																																																																																																   cuGraphInstantiate) E(cuGraphInstantiate, 11000, cuGraphInstantiate_v2) E(cuGraphInstantiateWithFlags,
																																																																																																																																																																																																																																																																																																																																																																																																																																									     11040, cuGraphInstantiateWithFlags) P(cuGraphInstantiateWithParams, 12000, cuGraphInstantiateWithParams) E(cuGraphExecDestroy, 10000, cuGraphExecDestroy) E(cuGraphExecGetFlags, 12000, cuGraphExecGetFlags) E(cuGraphExecUpdate,
																																																																																																																																																																																																																																																																																																																																																																																																																																																																			    10020,
																																																																																																																																																																																																																																																																																																																																																																																																																																																																			    cuGraphExecUpdate) E(cuGraphExecUpdate,
																																																																																																																																																																																																																																																																																																																																																																																																																																																																						 12000, cuGraphExecUpdate_v2) P(cuGraphLaunch,
																																																																																																																																																																																																																																																																																																																																																																																																																																																																										10000, cuGraphLaunch) P(cuGraphUpload, 11010,
																																																																																																																																																																																																																																																																																																																																																																																																																																																																													cuGraphUpload) E(cuGraphExecKernelNodeSetParams,
																																																																																																																																																																																																																																																																																																																																																																																																																																																																															 10010,
																																																																																																																																																																																																																																																																																																																																																																																																																																																																															 cuGraphExecKernelNodeSetParams) E(cuGraphExecKernelNodeSetParams,
																																																																																																																																																																																																																																																																																																																																																																																																																																																																																			   12000,
																																																																																																																																																																																																																																																																																																																																																																																																																																																																																			   cuGraphExecKernelNodeSetParams_v2) E(cuGraphExecNodeSetParams, 12020, cuGraphExecNodeSetParams) E(cuGraphExecMemsetNodeSetParams, 10020, cuGraphExecMemsetNodeSetParams) E(cuGraphExecMemcpyNodeSetParams,
																																																																																																																																																																																																																																																																																																																																																																																																																																																																																																								      10020,
																																																																																																																																																																																																																																																																																																																																																																																																																																																																																																								      cuGraphExecMemcpyNodeSetParams)
										    E(cuGraphExecHostNodeSetParams, 10020, cuGraphExecHostNodeSetParams) E(cuGraphExecChildGraphNodeSetParams, 11010, cuGraphExecChildGraphNodeSetParams) E(cuGraphExecEventRecordNodeSetEvent, 11010, cuGraphExecEventRecordNodeSetEvent) E(
											cuGraphExecEventWaitNodeSetEvent,
											11010,
											cuGraphExecEventWaitNodeSetEvent) E(cuGraphNodeSetEnabled,
															    11060,
															    cuGraphNodeSetEnabled)
											E(cuGraphNodeGetEnabled, 11060,
											  cuGraphNodeGetEnabled) E(cuModuleGetFunction,
														   2000,
														   cuModuleGetFunction)
											    E(cuLibraryGetKernel, 12000, cuLibraryGetKernel) E(
												cuKernelGetFunction,
												12000,
												cuKernelGetFunction) E(cuKernelGetLibrary, 12050, cuKernelGetLibrary)
												E(cuFuncGetModule,
												  11000,
												  cuFuncGetModule)
												    E(cuGraphConditionalHandleCreate,
												      12030,
												      cuGraphConditionalHandleCreate)
													E(cuGraphExecExternalSemaphoresSignalNodeSetParams,
													  11020,
													  cuGraphExecExternalSemaphoresSignalNodeSetParams)
													    E(cuGraphExecExternalSemaphoresWaitNodeSetParams,
													      11020,
													      cuGraphExecExternalSemaphoresWaitNodeSetParams)
														E(cuGraphExecBatchMemOpNodeSetParams,
														  11070,
														  cuGraphExecBatchMemOpNodeSetParams)};

#undef E
#undef P
#undef D

/* 0 found, 1 symbol not found, 2 version not sufficient. */
static int proc_lookup(const char *sym, int ver, cuuint64_t flags, void **out)
{
	const struct procent *best = NULL;
	int known = 0;
	for (size_t i = 0; i < sizeof g_procs / sizeof g_procs[0]; i++) {
		if (strcmp(g_procs[i].base, sym) != 0)
			continue;
		known = 1;
		if (g_procs[i].ver <= ver && (!best || g_procs[i].ver > best->ver))
			best = &g_procs[i];
	}
	if (!known)
		return CU_GET_PROC_ADDRESS_SYMBOL_NOT_FOUND;
	if (!best)
		return CU_GET_PROC_ADDRESS_VERSION_NOT_SUFFICIENT;
	*out = (flags & CU_GET_PROC_ADDRESS_PER_THREAD_DEFAULT_STREAM) && best->ptsz ? best->ptsz : best->fn;
	return CU_GET_PROC_ADDRESS_SUCCESS;
}

static CUresult proc_check(const char *sym, void **pfn, int ver, cuuint64_t flags)
{
	if (!sym || !pfn || ver > DRIVER_VERSION || ver < 0)
		return CUDA_ERROR_INVALID_VALUE;
	if (flags > (CU_GET_PROC_ADDRESS_LEGACY_STREAM | CU_GET_PROC_ADDRESS_PER_THREAD_DEFAULT_STREAM))
		return CUDA_ERROR_INVALID_VALUE;
	return CUDA_SUCCESS;
}

/* v1 (11030): unknown or too new -> 500 with *pfn untouched (cuda-facts §2.1). */
EXPORT CUresult sd_cuGetProcAddress(const char *symbol, void **pfn, int cudaVersion, cuuint64_t flags)
{
	trace(__func__);
	CUresult rc = proc_check(symbol, pfn, cudaVersion, flags);
	if (rc)
		return rc;
	void *f = NULL;
	if (proc_lookup(symbol, cudaVersion, flags, &f) != CU_GET_PROC_ADDRESS_SUCCESS)
		return CUDA_ERROR_NOT_FOUND;
	*pfn = f;
	return CUDA_SUCCESS;
}
_Static_assert(__builtin_types_compatible_p(__typeof__(&sd_cuGetProcAddress), PFN_cuGetProcAddress_v11030),
	       "cuGetProcAddress");

/* v2 (12000): unknown -> success, status 1, NULL; too new -> success, status 2, NULL. */
EXPORT CUresult sd_cuGetProcAddress_v2(const char *symbol, void **pfn, int cudaVersion, cuuint64_t flags,
				       CUdriverProcAddressQueryResult *symbolStatus)
{
	trace(__func__);
	CUresult rc = proc_check(symbol, pfn, cudaVersion, flags);
	if (rc)
		return rc;
	void *f = NULL;
	int st = proc_lookup(symbol, cudaVersion, flags, &f);
	*pfn = f;
	if (symbolStatus)
		*symbolStatus = (CUdriverProcAddressQueryResult)st;
	return CUDA_SUCCESS;
}
_Static_assert(__builtin_types_compatible_p(__typeof__(&sd_cuGetProcAddress_v2), PFN_cuGetProcAddress_v12000),
	       "cuGetProcAddress_v2");
