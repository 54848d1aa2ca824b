/*
 * tests/integration/host_harm.c -- the hostile-attack defects of issue 30
 * (point 5), one mode each; harm.py runs a mode bare and under the shim and
 * compares, or checks what it must print. Adapted from ../shared/repro.
 *
 *   symbols         for every name on stdin: found by dlsym(RTLD_DEFAULT),
 *                   by dlsym(libcuda's handle)? A name the driver lacks must
 *                   not be found through the shim either (symprobe.c).
 *   reinst_back     an update rewritten by the reinstantiate policy, then an
 *                   update back to the original topology from a graph that
 *                   has a live exec of its own: the driver accepts it
 *                   (reinst_back.c).
 *   nulldestroy     cuGraphDestroy(NULL) before and after an exec goes back
 *                   to its original topology (reinst_nulldestroy.c).
 *   fork N          N forks while one thread instantiates and destroys, and
 *                   another instantiates, updates, captures, allocates,
 *                   frees, destroys and starts threads (every path that
 *                   takes one of the shim's locks that a test can reach);
 *                   each child makes
 *                   CUDA calls that take them all, then _exits. A child not
 *                   done in 120 s is hung, one done after 10 s slow
 *                   (fork_ledger.c). The stand-in's own
 *                   mutex is taken around the fork (STANDIN_GMU_OFF, its
 *                   offset in libcuda.so.1) so that only the shim is tested.
 *   fork_loader     a thread inside dl_iterate_phdr (the loader's list
 *                   lock held: glibc leaves it held in a child) while the
 *                   main thread forks; the child makes 200 rounds of
 *                   graph calls (sites: the shim's Python lookup turns)
 *                   and 20 captures (each end asks whether a libnccl is
 *                   loaded) and _exits. A child not done in 120 s is hung.
 *   sites N         N distinct one-frame call sites (code stubs), each
 *                   instantiating once; prints the peak RSS (lifecycle.c).
 *   frees E K       E execs of one kernel node each, pointing into K
 *                   allocations per exec, then every allocation freed;
 *                   prints the free phase's time and the peak RSS
 *                   (ledgerscale.c).
 */
#define _GNU_SOURCE
#include <cuda.h>
#include <dlfcn.h>
#include <link.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

static CUcontext ctx;
static CUstream strm;

static void kfn(void **p, unsigned long n)
{
	(void)p;
	(void)n;
}

static double now(void)
{
	struct timespec t;
	clock_gettime(CLOCK_MONOTONIC, &t);
	return (double)t.tv_sec + (double)t.tv_nsec / 1e9;
}

/* CPU time of the calling thread: the phases' cost on a loaded machine */
static double cpu(void)
{
	struct timespec t;
	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t);
	return (double)t.tv_sec + (double)t.tv_nsec / 1e9;
}

static long maxrss_kb(void)
{
	struct rusage u;
	getrusage(RUSAGE_SELF, &u);
	return u.ru_maxrss;
}

/* n kernel nodes in a chain; node i takes the pointer base + 8 i (0: a long) */
static CUgraph chain(int n, CUdeviceptr base)
{
	CUgraph g;
	CUgraphNode prev = NULL, nd;
	cuGraphCreate(&g, 0);
	for (int i = 0; i < n; i++) {
		CUDA_KERNEL_NODE_PARAMS kp;
		CUdeviceptr a = base ? base + 8 * (CUdeviceptr)i : (CUdeviceptr)i;
		void *params[] = {&a, NULL};
		memset(&kp, 0, sizeof kp);
		kp.func = (CUfunction)kfn;
		kp.gridDimX = kp.gridDimY = kp.gridDimZ = 1;
		kp.blockDimX = kp.blockDimY = kp.blockDimZ = 1;
		kp.kernelParams = params;
		cuGraphAddKernelNode(&nd, g, prev ? &prev : NULL, prev ? 1 : 0, &kp);
		prev = nd;
	}
	return g;
}

/* ---- symbols ------------------------------------------------------------- */

static int mode_symbols(void)
{
	char name[256];
	void *h = dlopen("libcuda.so.1", RTLD_NOW | RTLD_NOLOAD);
	while (fgets(name, sizeof name, stdin)) {
		name[strcspn(name, "\n")] = 0;
		if (!name[0])
			continue;
		printf("%s: default=%d handle=%d\n", name, dlsym(RTLD_DEFAULT, name) != NULL,
		       h && dlsym(h, name) != NULL);
	}
	return 0;
}

/* ---- reinstantiate ------------------------------------------------------- */

static int mode_reinst_back(void)
{
	CUgraphExec x, xb;
	CUgraphExecUpdateResultInfo info;
	CUgraph g4a = chain(4, 0), g1 = chain(1, 0), g4b = chain(4, 0);
	printf("instantiate: rc=%d\n", (int)cuGraphInstantiateWithFlags(&x, g4a, 0));
	/* the source graph of the update back has a live exec of its own */
	printf("instantiate other: rc=%d\n", (int)cuGraphInstantiateWithFlags(&xb, g4b, 0));
	printf("update to 1 node: rc=%d\n", (int)cuGraphExecUpdate(x, g1, &info));
	printf("update back: rc=%d\n", (int)cuGraphExecUpdate(x, g4b, &info));
	printf("launch: rc=%d\n", (int)cuGraphLaunch(x, strm));
	printf("launch other: rc=%d\n", (int)cuGraphLaunch(xb, strm));
	return 0;
}

static int mode_nulldestroy(void)
{
	CUgraphExec x;
	CUgraphExecUpdateResultInfo info;
	printf("destroy NULL before: rc=%d\n", (int)cuGraphDestroy(NULL));
	CUgraph a = chain(4, 0), b = chain(1, 0), a2 = chain(4, 0);
	cuGraphInstantiateWithFlags(&x, a, 0);
	printf("update to 1 node: rc=%d\n", (int)cuGraphExecUpdate(x, b, &info));
	printf("update back: rc=%d\n", (int)cuGraphExecUpdate(x, a2, &info));
	printf("destroy NULL after: rc=%d\n", (int)cuGraphDestroy(NULL));
	printf("exec destroy NULL after: rc=%d\n", (int)cuGraphExecDestroy(NULL));
	printf("destroy a2: rc=%d\n", (int)cuGraphDestroy(a2));
	printf("destroy a2 again: rc=%d\n", (int)cuGraphDestroy(a2));
	return 0;
}

/* ---- fork ---------------------------------------------------------------- */

static pthread_mutex_t *gmu;
static void gmu_prepare(void)
{
	pthread_mutex_lock(gmu);
}
static void gmu_parent(void)
{
	pthread_mutex_unlock(gmu);
}
static void gmu_child(void)
{
	pthread_mutexattr_t a;
	pthread_mutexattr_init(&a);
	pthread_mutexattr_settype(&a, PTHREAD_MUTEX_RECURSIVE);
	pthread_mutex_init(gmu, &a);
}

static void gmu_setup(void)
{
	Dl_info di;
	const char *off = getenv("STANDIN_GMU_OFF");
	void *h = dlopen("libcuda.so.1", RTLD_NOW | RTLD_NOLOAD);
	void *ri = h ? dlsym(h, "cuInit") : NULL;
	if (off && ri && dladdr(ri, &di))
		gmu = (pthread_mutex_t *)(void *)((char *)di.dli_fbase + strtoul(off, NULL, 0));
	if (gmu)
		pthread_atfork(gmu_prepare, gmu_parent, gmu_child);
}

static CUdeviceptr fork_buf;
static CUgraph fork_graph;
static _Atomic int fork_stop;

static void *short_thread(void *a)
{
	CUgraph g;
	(void)a;
	cuCtxSetCurrent(ctx);
	if (!cuGraphCreate(&g, 0)) /* the thread's first call registers it; its exit unregisters */
		cuGraphDestroy(g);
	return NULL;
}

/* One round of every kind of work the shim keeps state for: graphs and
 * execs (model, ledger, settle, sites, node names), updates (the policy's
 * proxies and garbage), captures, allocations and frees (the ledger's
 * ranges), records (the log's buffers), a thread that comes and goes. */
static int work_round(CUstream st, int child)
{
	CUgraphExec x = NULL;
	CUgraphExecUpdateResultInfo info;
	CUgraph g, g1 = chain(1, fork_buf), cg = NULL;
	CUdeviceptr d = 0;
	pthread_t t;
	int bad = 0;
	bad += cuGraphInstantiateWithFlags(&x, fork_graph, 0) != CUDA_SUCCESS;
	g = chain(8, fork_buf);
	if (x) {
		(void)cuGraphExecUpdate(x, g1, &info); /* 910, or rewritten under the policy */
		(void)cuGraphExecUpdate(x, g, &info);
		bad += cuGraphLaunch(x, st) != CUDA_SUCCESS;
		cuGraphExecDestroy(x);
	}
	bad += cuMemAlloc(&d, 256) != CUDA_SUCCESS;
	if (!cuStreamBeginCapture(st, CU_STREAM_CAPTURE_MODE_THREAD_LOCAL)) {
		CUfunction f = (CUfunction)kfn;
		void *params[] = {&d, NULL};
		cuLaunchKernel(f, 1, 1, 1, 1, 1, 1, 0, st, params, NULL);
		if (!cuStreamEndCapture(st, &cg) && cg) {
			if (!cuGraphInstantiateWithFlags(&x, cg, 0))
				cuGraphExecDestroy(x);
			cuGraphDestroy(cg);
		}
	}
	cuMemFree(d);
	cuGraphDestroy(g);
	cuGraphDestroy(g1);
	if (!child && !pthread_create(&t, NULL, short_thread, NULL))
		pthread_join(t, NULL);
	return bad;
}

/* Worker 0 instantiates and destroys in a tight loop (the ledger's and the
 * model's locks held most of the time: 129 of 1,600 children hung before
 * lg_lock was in the fork handlers); worker 1 does every kind of work. */
static void *fork_worker(void *a)
{
	CUstream st;
	CUgraphExec x;
	cuCtxSetCurrent(ctx);
	cuStreamCreate(&st, 0);
	while (!atomic_load(&fork_stop)) {
		if (a)
			work_round(st, 0);
		else if (!cuGraphInstantiateWithFlags(&x, fork_graph, 0))
			cuGraphExecDestroy(x);
	}
	return NULL;
}

static int mode_fork(int n)
{
	int ok = 0, hung = 0, failed = 0, slow = 0;
	pthread_t t[2];
	gmu_setup();
	cuMemAlloc(&fork_buf, 4096);
	fork_graph = chain(8, fork_buf);
	for (int i = 0; i < 2; i++)
		pthread_create(&t[i], NULL, fork_worker, i ? &fork_stop : NULL);
	for (int i = 0; i < n; i++) {
		int st, done = 0;
		pid_t p = fork();
		if (p == 0) {
			/* the child's stream: the context is not usable for real in
			 * a forked child; the stand-in's is, and the shim's state is
			 * what is tested */
			_exit(work_round(strm, 1) ? 1 : 0);
		}
		if (p < 0) {
			failed++;
			continue;
		}
		/* 10 s, then up to 110 s more: a child done by then was slow (a
		 * loaded host, qemu-user, TSan: 1 of 250 children went past 10 s
		 * there, run in parallel with other suites), not hung; a child
		 * blocked on a lock never finishes */
		for (int k = 0; k < 12000 && !done; k++) {
			if (waitpid(p, &st, WNOHANG) == p)
				done = 1;
			else
				usleep(10000);
			slow += k == 1000 && !done;
		}
		if (done) {
			ok += WIFEXITED(st) && WEXITSTATUS(st) == 0;
			failed += !(WIFEXITED(st) && WEXITSTATUS(st) == 0);
		} else {
			hung++;
			kill(p, SIGKILL);
			waitpid(p, &st, 0);
		}
	}
	atomic_store(&fork_stop, 1);
	for (int i = 0; i < 2; i++)
		pthread_join(t[i], NULL);
	printf("fork: forks=%d ok=%d failed=%d hung=%d slow=%d\n", n, ok, failed, hung, slow);
	return hung != 0 || failed != 0;
}

/* ---- fork_loader ----------------------------------------------------------- */

static int loader_in[2], loader_out[2];

/* Holds the loader's list lock until the main thread says so. */
static int loader_hold(struct dl_phdr_info *info, size_t size, void *arg)
{
	char c = 1;
	(void)info, (void)size, (void)arg;
	if (write(loader_in[1], &c, 1) != 1 || read(loader_out[0], &c, 1) != 1)
		return 1;
	return 1;
}

static void *loader_holder(void *a)
{
	(void)a;
	dl_iterate_phdr(loader_hold, NULL);
	return NULL;
}

static int graph_rounds(int n)
{
	int bad = 0;
	for (int i = 0; i < n; i++) {
		CUgraph g;
		CUgraphExec x;
		if (cuGraphCreate(&g, 0) != CUDA_SUCCESS)
			return 1;
		if (cuGraphInstantiateWithFlags(&x, g, 0) == CUDA_SUCCESS)
			bad += cuGraphExecDestroy(x) != CUDA_SUCCESS;
		bad += cuGraphDestroy(g) != CUDA_SUCCESS;
	}
	return bad;
}

/* n begin/end captures on a stream of the child's own: the end asks
 * whether a libnccl is loaded (nccl-lib.c), which must not wait on the
 * loader's list lock either. */
static int capture_rounds(int n)
{
	CUstream s;
	int bad = 0;
	if (cuStreamCreate(&s, CU_STREAM_NON_BLOCKING) != CUDA_SUCCESS)
		return 1;
	for (int i = 0; i < n; i++) {
		CUgraph g = NULL;
		bad += cuStreamBeginCapture_v2(s, CU_STREAM_CAPTURE_MODE_RELAXED) != CUDA_SUCCESS;
		bad += cuStreamEndCapture(s, &g) != CUDA_SUCCESS;
		if (g)
			bad += cuGraphDestroy(g) != CUDA_SUCCESS;
	}
	return bad + (cuStreamDestroy(s) != CUDA_SUCCESS);
}

static int mode_fork_loader(void)
{
	pthread_t t;
	int st, done = 0, hung = 0;
	char c = 1;
	graph_rounds(3); /* the shim set up in the parent */
	if (pipe(loader_in) || pipe(loader_out) || pthread_create(&t, NULL, loader_holder, NULL))
		return 2;
	if (read(loader_in[0], &c, 1) != 1)
		return 2;
	pid_t p = fork();
	if (p == 0)
		_exit(graph_rounds(200) || capture_rounds(20) ? 1 : 0);
	for (int k = 0; p > 0 && k < 12000 && !done; k++) {
		if (waitpid(p, &st, WNOHANG) == p)
			done = 1;
		else
			usleep(10000);
	}
	if (p > 0 && !done) {
		hung = 1;
		kill(p, SIGKILL);
		waitpid(p, &st, 0);
	}
	if (write(loader_out[1], &c, 1) != 1)
		return 2;
	pthread_join(t, NULL);
	printf("fork_loader: forked=%d hung=%d failed=%d\n", p > 0, hung,
	       p <= 0 || (done && !(WIFEXITED(st) && WEXITSTATUS(st) == 0)));
	return p <= 0 || hung || !(WIFEXITED(st) && WEXITSTATUS(st) == 0);
}

/* ---- sites --------------------------------------------------------------- */

static int mode_sites(long n)
{
#if defined(__x86_64__)
	/* stub i: push rbx; call *%rcx; pop rbx; ret -- called as
	 * stub(phExec, graph, flags, fn): a distinct return address per stub */
	const size_t stub = 16;
	CUgraph g = chain(1, 0);
	long bad = 0;
	unsigned char *code = mmap(NULL, (size_t)n * stub, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	static const unsigned char tmpl[] = {0x53, 0xff, 0xd1, 0x5b, 0xc3};
	double t0;
	if (code == MAP_FAILED)
		return 2;
	for (long i = 0; i < n; i++) {
		memcpy(code + i * stub, tmpl, sizeof tmpl);
		memset(code + i * stub + sizeof tmpl, 0x90, stub - sizeof tmpl);
	}
	mprotect(code, (size_t)n * stub, PROT_READ | PROT_EXEC);
	t0 = now();
	for (long i = 0; i < n; i++) {
		CUgraphExec x = NULL;
		CUresult (*f)(CUgraphExec *, CUgraph, unsigned long long, void *) =
		    (CUresult(*)(CUgraphExec *, CUgraph, unsigned long long, void *))(void *)(code + i * stub);
		CUresult rc = f(&x, g, 0, (void *)cuGraphInstantiateWithFlags);
		if (rc || !x)
			bad++;
		else
			cuGraphExecDestroy(x);
	}
	printf("sites: n=%ld bad=%ld\n", n, bad);
	fprintf(stderr, "sites: %.3f s, maxrss %ld KB\n", now() - t0, maxrss_kb());
	return bad != 0;
#else
	(void)n;
	printf("sites: skipped (x86-64 stubs)\n");
	return 77;
#endif
}

/* ---- frees --------------------------------------------------------------- */

static int mode_frees(long n, int k)
{
	CUdeviceptr *d = calloc((size_t)n * (size_t)k, sizeof *d);
	CUgraphExec *x = calloc((size_t)n, sizeof *x);
	long bad = 0;
	double t0, t1, c0, c1, c2;
	if (!d || !x)
		return 2;
	t0 = now();
	c0 = cpu();
	for (long i = 0; i < n; i++) {
		CUgraph g;
		CUgraphNode nd;
		CUDA_KERNEL_NODE_PARAMS kp;
		void *params[9];
		for (int j = 0; j < k && j < 8; j++) {
			bad += cuMemAlloc(&d[i * k + j], 64) != CUDA_SUCCESS;
			params[j] = &d[i * k + j];
		}
		params[k < 8 ? k : 8] = NULL;
		cuGraphCreate(&g, 0);
		memset(&kp, 0, sizeof kp);
		kp.func = (CUfunction)kfn;
		kp.gridDimX = kp.gridDimY = kp.gridDimZ = 1;
		kp.blockDimX = kp.blockDimY = kp.blockDimZ = 1;
		kp.kernelParams = params;
		cuGraphAddKernelNode(&nd, g, NULL, 0, &kp);
		bad += cuGraphInstantiateWithFlags(&x[i], g, 0) != CUDA_SUCCESS;
		cuGraphDestroy(g);
	}
	t1 = now();
	c1 = cpu();
	for (long i = 0; i < n * k; i++)
		bad += cuMemFree(d[i]) != CUDA_SUCCESS;
	c2 = cpu();
	fprintf(stderr, "frees: build %.3f s (cpu %.3f), free phase %.3f s (cpu %.3f), maxrss %ld KB\n", t1 - t0,
		c1 - c0, now() - t1, c2 - c1, maxrss_kb());
	for (long i = 0; i < n; i++)
		bad += cuGraphLaunch(x[i], strm) != CUDA_SUCCESS; /* stale: the shim may say so, the driver runs it */
	for (long i = 0; i < n; i++)
		cuGraphExecDestroy(x[i]);
	printf("frees: execs=%ld per_exec=%d bad=%ld\n", n, k, bad);
	free(d);
	free(x);
	return bad != 0;
}

int main(int argc, char **argv)
{
	const char *m = argc > 1 ? argv[1] : "";
	CUdevice dev;
	setvbuf(stdout, NULL, _IOLBF, 0);
	cuInit(0);
	cuDeviceGet(&dev, 0);
	cuDevicePrimaryCtxRetain(&ctx, dev);
	cuCtxSetCurrent(ctx);
	cuStreamCreate(&strm, 0);
	if (!strcmp(m, "symbols"))
		return mode_symbols();
	if (!strcmp(m, "reinst_back"))
		return mode_reinst_back();
	if (!strcmp(m, "nulldestroy"))
		return mode_nulldestroy();
	if (!strcmp(m, "fork") && argc > 2)
		return mode_fork(atoi(argv[2]));
	if (!strcmp(m, "fork_loader"))
		return mode_fork_loader();
	if (!strcmp(m, "sites") && argc > 2)
		return mode_sites(atol(argv[2]));
	if (!strcmp(m, "frees") && argc > 3)
		return mode_frees(atol(argv[2]), atoi(argv[3]));
	fprintf(stderr, "usage: host_harm MODE [ARG]...\n");
	return 2;
}
