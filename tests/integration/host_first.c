/*
 * tests/integration/host_first.c -- "the host comes first" (issue 12): what
 * a process must see the same with or without the shim. One mode per
 * argument; it prints "key: value" lines that run.py compares between the
 * bare run and the run under the shim, or checks against what they must say.
 *
 *   fork          fork with threads holding batched records, after a
 *                 (rewritten) update; the child updates, launches, destroys
 *   nullout       NULL out-pointers of cuGraphExecUpdate (v1 and v2)
 *   errno         errno after each hooked call, as the program set it
 *   fd2 FILE      close fd 2, open FILE (it becomes fd 2), make records
 *   fd2early FILE the same before the first CUDA call (the sink is bound
 *                 by the first record, when fd 2 is FILE already)
 *                 (run.py checks FILE holds only the program's line)
 *   daemon FILE   close fds 3..1023, open FILE, make records
 *   dup2 FILE     dup2 FILE over every open fd above 2, make records
 *   absent        dlsym(RTLD_DEFAULT) of runtime names, with and without libcudart
 *   noisy         records at warn level (a CGS001 violation), then exit 0
 *   wait          one hooked call, a line from stdin, then noisy
 *   cycles N      N capture/instantiate/launch/destroy cycles with memory
 *                 nodes; prints the heap growth (mallinfo2) after the first 200
 *   launches      three execs launched once each
 *   plain         captures without memory nodes: instantiate, update, launch
 */
#define _GNU_SOURCE
#include <cuda.h>
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <malloc.h>
#include <pthread.h>
#include <stdatomic.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "standin.h"

/* The 4-argument update under its exported name (cuda.h renames it to _v2). */
CUresult update_v1(CUgraphExec e, CUgraph g, CUgraphNode *en,
		   CUgraphExecUpdateResult *res) __asm__("cuGraphExecUpdate");

static CUstream s;

static void setup(void)
{
	CUcontext ctx;
	cuInit(0);
	cuDevicePrimaryCtxRetain(&ctx, 0);
	cuCtxSetCurrent(ctx);
	cuStreamCreate(&s, 0);
}

/* A graph of n empty nodes in a chain. */
static CUgraph chain(int n)
{
	CUgraph g;
	CUgraphNode prev = NULL, cur;
	cuGraphCreate(&g, 0);
	for (int i = 0; i < n; i++) {
		cuGraphAddEmptyNode(&cur, g, prev ? &prev : NULL, prev ? 1 : 0);
		prev = cur;
	}
	return g;
}

static CUgraphExec inst(CUgraph g)
{
	CUgraphExec e = NULL;
	cuGraphInstantiate(&e, g, 0);
	return e;
}

/* An update the model predicts to fail (CGS001: node count), which writes a
 * violation record before the call. */
static void noisy(void)
{
	CUgraphExecUpdateResultInfo ri;
	CUgraph a = chain(1), b = chain(2);
	CUgraphExec e = inst(a);
	printf("noisy update: rc=%d\n", (int)cuGraphExecUpdate(e, b, &ri));
	printf("noisy launch: rc=%d\n", (int)cuGraphLaunch(e, s));
	cuGraphExecDestroy(e);
	cuGraphDestroy(a);
	cuGraphDestroy(b);
}

/* ---- fork ---------------------------------------------------------------- */

static CUgraphExec fork_exec;
static _Atomic int stop, pause_req, parked; /* read by the launcher threads without the lock */
static pthread_mutex_t mu = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t cv = PTHREAD_COND_INITIALIZER;

/* Launches until stopped; parks (outside any driver call, so the stand-in's
 * own lock is free at the fork) while the main thread forks. */
static void *launcher(void *arg)
{
	long bad = 0;
	(void)arg;
	while (!stop) {
		if (pause_req) {
			pthread_mutex_lock(&mu);
			parked++;
			pthread_cond_broadcast(&cv);
			while (pause_req && !stop)
				pthread_cond_wait(&cv, &mu);
			parked--;
			pthread_mutex_unlock(&mu);
			continue;
		}
		bad += cuGraphLaunch(fork_exec, s) != CUDA_SUCCESS;
		usleep(100); /* trace records in every thread's batch, not gigabytes */
	}
	return (void *)bad;
}

static int mode_fork(void)
{
	const char *pol = getenv("CGSHIM_ON_UPDATE_FAILURE");
	CUgraphExecUpdateResultInfo ri;
	CUgraph a = chain(1), b = chain(2), a2 = chain(1), t = chain(1);
	CUgraphExec e = inst(a);
	pthread_t th[4];
	int ok = 0;
	fork_exec = inst(t);
	/* abort would stop the process before a failing update: not this one */
	if (!pol || strcmp(pol, "abort"))
		cuGraphExecUpdate(e, b, &ri); /* rewritten under reinstantiate */
	cuGraphLaunch(e, s);
	for (int i = 0; i < 4; i++)
		pthread_create(&th[i], NULL, launcher, NULL);
	for (int k = 0; k < 3; k++) {
		pid_t pid;
		int status = 0, waited = 0;
		usleep(2000);
		pthread_mutex_lock(&mu);
		pause_req = 1;
		while (parked < 4)
			pthread_cond_wait(&cv, &mu);
		pthread_mutex_unlock(&mu);
		pid = fork();
		if (pid == 0) {
			alarm(5); /* a hung child must not outlive the test */
			cuGraphExecUpdate(e, a2, &ri);
			if (cuGraphLaunch(e, s) != CUDA_SUCCESS)
				_exit(4);
			if (cuGraphExecDestroy(e) != CUDA_SUCCESS)
				_exit(5);
			exit(0); /* atexit: the shim's exit summary runs in the child too */
		}
		pthread_mutex_lock(&mu);
		pause_req = 0;
		pthread_cond_broadcast(&cv);
		pthread_mutex_unlock(&mu);
		while (waitpid(pid, &status, WNOHANG) == 0 && waited < 4000) {
			usleep(1000);
			waited++;
		}
		if (waited >= 4000) {
			kill(pid, SIGKILL);
			waitpid(pid, &status, 0);
			printf("child %d: hung (killed after 4 s)\n", k);
			break;
		} else if (WIFEXITED(status) && WEXITSTATUS(status) == 0) {
			ok++;
		} else {
			printf("child %d: status 0x%x\n", k, status);
		}
	}
	stop = 1;
	pthread_mutex_lock(&mu);
	pthread_cond_broadcast(&cv);
	pthread_mutex_unlock(&mu);
	long bad = 0;
	for (int i = 0; i < 4; i++) {
		void *r;
		pthread_join(th[i], &r);
		bad += (long)r;
	}
	printf("fork: %d/3 children exited 0, %ld failed launches\n", ok, bad);
	return 0;
}

/* ---- NULL out-pointers --------------------------------------------------- */

static int mode_nullout(void)
{
	CUgraphNode en = NULL;
	CUgraphExecUpdateResult res = CU_GRAPH_EXEC_UPDATE_SUCCESS;
	CUgraphExecUpdateResultInfo ri;
	CUgraph a = chain(1), b = chain(2), a2 = chain(1);
	CUgraphExec e = inst(a);
	printf("v1(same topology, NULL, &res): rc=%d\n", (int)update_v1(e, a2, NULL, &res));
	printf("v1(same topology, &en, NULL): rc=%d\n", (int)update_v1(e, a2, &en, NULL));
	printf("v1(changed topology, NULL, &res): rc=%d\n", (int)update_v1(e, b, NULL, &res));
	printf("v1(changed topology, &en, NULL): rc=%d\n", (int)update_v1(e, b, &en, NULL));
	printf("v1(changed topology, NULL, NULL): rc=%d\n", (int)update_v1(e, b, NULL, NULL));
	/* still the 1-node exec: a 1-node update succeeds, a 2-node one fails */
	printf("v1(same topology): rc=%d result=%d\n", (int)update_v1(e, a2, &en, &res), (int)res);
	printf("v2(same topology, NULL): rc=%d\n", (int)cuGraphExecUpdate(e, a2, NULL));
	memset(&ri, 0, sizeof ri);
	printf("v2(same topology): rc=%d result=%d\n", (int)cuGraphExecUpdate(e, a2, &ri), (int)ri.result);
	/* NULL out-pointers of other hooked calls: the driver's answer */
	printf("cuGraphCreate(NULL): rc=%d\n", (int)cuGraphCreate(NULL, 0));
	printf("cuGraphInstantiate(NULL): rc=%d\n", (int)cuGraphInstantiate(NULL, a2, 0));
	printf("cuGraphAddEmptyNode(NULL): rc=%d\n", (int)cuGraphAddEmptyNode(NULL, a2, NULL, 0));
	printf("cuGraphExecGetFlags(NULL): rc=%d\n", (int)cuGraphExecGetFlags(e, NULL));
	printf("cuThreadExchangeStreamCaptureMode(NULL): rc=%d\n", (int)cuThreadExchangeStreamCaptureMode(NULL));
	cuStreamBeginCapture(s, CU_STREAM_CAPTURE_MODE_GLOBAL);
	printf("cuMemAllocAsync(NULL) in capture: rc=%d\n", (int)cuMemAllocAsync(NULL, 4096, s));
	printf("cuStreamEndCapture(NULL): rc=%d\n", (int)cuStreamEndCapture(s, NULL));
	{
		CUgraph g = NULL;
		CUstreamCaptureStatus st;
		printf("capture still open: %d\n", cuStreamIsCapturing(s, &st) == CUDA_SUCCESS && st != 0);
		printf("cuStreamEndCapture: rc=%d\n", (int)cuStreamEndCapture(s, &g));
	}
	printf("cuMemAllocAsync(NULL): rc=%d\n", (int)cuMemAllocAsync(NULL, 4096, s));
	printf("cuDeviceGetMemPool(NULL): rc=%d\n", (int)cuDeviceGetMemPool(NULL, 0));
	return 0;
}

/* ---- errno ---------------------------------------------------------------- */

#define ERRNO_MARK 4242
#define E(label, call)                                                                                                 \
	do {                                                                                                           \
		int rc_;                                                                                               \
		errno = ERRNO_MARK;                                                                                    \
		rc_ = (int)(call);                                                                                     \
		printf("%s: rc=%d errno=%d\n", label, rc_, errno);                                                     \
	} while (0)

static int mode_errno(void)
{
	CUgraph a, b, m = NULL;
	CUgraphExec e, em = NULL;
	CUgraphNode n;
	CUgraphExecUpdateResultInfo ri;
	CUdeviceptr p = 0;
	E("cuGraphCreate", cuGraphCreate(&a, 0));
	E("cuGraphAddEmptyNode", cuGraphAddEmptyNode(&n, a, NULL, 0));
	b = chain(2);
	E("cuGraphInstantiate", cuGraphInstantiate(&e, a, 0));
	E("cuGraphExecUpdate(CGS001)", cuGraphExecUpdate(e, b, &ri));
	E("cuGraphLaunch", cuGraphLaunch(e, s));
	E("cuStreamBeginCapture", cuStreamBeginCapture(s, CU_STREAM_CAPTURE_MODE_GLOBAL));
	E("cuMemAllocAsync", cuMemAllocAsync(&p, 1 << 20, s));
	E("cuStreamEndCapture", cuStreamEndCapture(s, &m));
	E("cuGraphInstantiate(mem)", cuGraphInstantiate(&em, m, 0));
	E("cuGraphLaunch(mem)", cuGraphLaunch(em, s));
	E("cuGraphLaunch(mem, CGS005)", cuGraphLaunch(em, s));
	E("cuStreamSynchronize", cuStreamSynchronize(s));
	E("cuGraphExecDestroy", cuGraphExecDestroy(e));
	E("cuGraphDestroy", cuGraphDestroy(a));
	return 0;
}

/* ---- records into the application's files ------------------------------- */

static int mode_fd(const char *how, const char *path)
{
	int fd;
	CUgraph g = chain(1); /* the shim starts and opens its log here */
	CUgraphExec e = inst(g);
	cuGraphLaunch(e, s); /* info records, batched */
	if (!strcmp(how, "fd2early")) {
		fd = 2; /* opened by main before setup() */
	} else if (!strcmp(how, "fd2")) {
		close(2);
		fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0644);
		printf("data file is fd %d\n", fd);
	} else if (!strcmp(how, "daemon")) {
		for (int i = 3; i < 1024; i++)
			close(i);
		fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0644);
		printf("data file is fd %d\n", fd);
	} else {
		fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0644);
		for (int i = 3; i < 1024; i++)
			if (i != fd && fcntl(i, F_GETFD) >= 0)
				dup2(fd, i);
	}
	if (write(fd, "app data\n", 9) != 9)
		return 1;
	noisy(); /* warn records at once, info records batched */
	cuGraphExecDestroy(e);
	cuGraphDestroy(g);
	return 0; /* run.py reads the file after the exit flush */
}

/* ---- dlsym of runtime names ------------------------------------------------ */

static const char *where(void *p)
{
	static char buf[2][256];
	static int k;
	Dl_info di;
	char *b = buf[k++ & 1];
	if (!p)
		return "null";
	if (!dladdr(p, &di) || !di.dli_fname)
		return "?";
	const char *base = strrchr(di.dli_fname, '/');
	snprintf(b, 256, "%s", base ? base + 1 : di.dli_fname);
	return b;
}

static int mode_absent(void)
{
	const char *names[] = {"cudaGraphLaunch", "cudaStreamBeginCapture", "cudaMallocAsync"};
	void *rt;
	for (int i = 0; i < 3; i++) {
		dlerror();
		void *p = dlsym(RTLD_DEFAULT, names[i]);
		printf("no libcudart: dlsym(RTLD_DEFAULT,%s): %s%s\n", names[i], where(p),
		       !p && dlerror() ? " dlerror=set" : "");
	}
	printf("dlsym(RTLD_DEFAULT,printf): %s\n",
	       dlsym(RTLD_DEFAULT, "printf") == (void *)printf ? "same" : "differs");
	printf("driver name via dlsym(RTLD_DEFAULT,cuGraphLaunch): %s\n", where(dlsym(RTLD_DEFAULT, "cuGraphLaunch")));
	rt = dlopen("libcudart.so.13", RTLD_NOW | RTLD_GLOBAL);
	printf("libcudart loaded: %s\n", rt ? "yes" : "no");
	for (int i = 0; i < 3; i++) {
		void *p = dlsym(RTLD_DEFAULT, names[i]);
		printf("with libcudart: dlsym(RTLD_DEFAULT,%s): %s\n", names[i], p ? "found" : "null");
		if (p && i == 0) {
			int (*launch)(void *, void *) = (int (*)(void *, void *))p;
			printf("with libcudart: %s(NULL,NULL) rc=%d\n", names[i], launch(NULL, NULL));
		}
	}
	return 0;
}

/* ---- heap over many cycles ------------------------------------------------- */

static void cycle(void)
{
	CUgraph g = NULL;
	CUgraphExec e = NULL;
	CUdeviceptr p = 0;
	cuStreamBeginCapture(s, CU_STREAM_CAPTURE_MODE_GLOBAL);
	cuMemAllocAsync(&p, 4096, s);
	cuMemFreeAsync(p, s);
	cuStreamEndCapture(s, &g);
	cuGraphInstantiate(&e, g, 0);
	cuGraphLaunch(e, s);
	cuGraphExecDestroy(e);
	cuGraphDestroy(g);
	cuDeviceGraphMemTrim(0); /* the stand-in's graph-memory reservation back */
}

static int mode_cycles(long n)
{
	struct mallinfo2 m0, m1;
	for (int i = 0; i < 200; i++)
		cycle();
	m0 = mallinfo2();
	for (long i = 0; i < n; i++)
		cycle();
	cuStreamSynchronize(s);
	m1 = mallinfo2();
	/* The stand-in keeps a record per graph allocation it ever made, so
	 * run.py compares this with the bare run's figure. */
	printf("heap growth over %ld cycles: %ld bytes\n", n, (long)m1.uordblks - (long)m0.uordblks);
	return 0;
}

static int mode_launches(void)
{
	for (int i = 0; i < 3; i++) {
		CUgraph g = chain(1);
		CUgraphExec e = inst(g);
		printf("launch %d: rc=%d\n", i, (int)cuGraphLaunch(e, s));
		cuGraphExecDestroy(e);
		cuGraphDestroy(g);
	}
	return 0;
}

static void k_nop(void **a, unsigned long nt)
{
	(void)a;
	(void)nt;
}

/* A captured graph of one kernel: no memory nodes, so its exec gets a
 * partial summary with an empty memory-node list. */
static CUgraph capture_kernel(void)
{
	CUgraph g = NULL;
	void *args[] = {NULL};
	cuStreamBeginCapture(s, CU_STREAM_CAPTURE_MODE_GLOBAL);
	cuLaunchKernel((CUfunction)(void *)k_nop, 1, 1, 1, 1, 1, 1, 0, s, args, NULL);
	cuStreamEndCapture(s, &g);
	return g;
}

static int mode_plain(void)
{
	CUgraphExecUpdateResultInfo ri;
	CUgraph a = capture_kernel(), b = capture_kernel();
	CUgraphExec e = inst(a);
	printf("plain launch: rc=%d\n", (int)cuGraphLaunch(e, s));
	printf("plain update: rc=%d\n", (int)cuGraphExecUpdate(e, b, &ri));
	printf("plain launch: rc=%d\n", (int)cuGraphLaunch(e, s));
	cuGraphExecDestroy(e);
	cuGraphDestroy(a);
	cuGraphDestroy(b);
	return 0;
}

int main(int argc, char **argv)
{
	const char *m = argc > 1 ? argv[1] : "";
	setvbuf(stdout, NULL, _IOLBF, 0);
	if (!strcmp(m, "fd2early") && argc > 2) {
		close(2);
		printf("data file is fd %d\n", open(argv[2], O_WRONLY | O_CREAT | O_TRUNC, 0644));
	}
	setup();
	if (!strcmp(m, "fork"))
		return mode_fork();
	if (!strcmp(m, "nullout"))
		return mode_nullout();
	if (!strcmp(m, "errno"))
		return mode_errno();
	if ((!strcmp(m, "fd2") || !strcmp(m, "fd2early") || !strcmp(m, "daemon") || !strcmp(m, "dup2")) && argc > 2)
		return mode_fd(m, argv[2]);
	if (!strcmp(m, "absent"))
		return mode_absent();
	if (!strcmp(m, "noisy")) {
		noisy();
		return 0;
	}
	if (!strcmp(m, "wait")) {
		char line[16];
		cuGraphDestroy(chain(1)); /* the shim starts and opens its log */
		printf("ready\n");
		if (!fgets(line, sizeof line, stdin))
			return 3;
		noisy();
		return 0;
	}
	if (!strcmp(m, "cycles") && argc > 2)
		return mode_cycles(atol(argv[2]));
	if (!strcmp(m, "launches"))
		return mode_launches();
	if (!strcmp(m, "plain"))
		return mode_plain();
	fprintf(stderr, "usage: host_first MODE [ARG]\n");
	return 2;
}
