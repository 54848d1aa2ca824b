/*
 * tests/integration/dlsym_edge.c -- the edge cases of the dlsym and
 * cuGetProcAddress doors, and host safety (errno, bad input, threads, fork).
 * Prints "key: value" lines; run bare and under the shim by
 * tests/integration/run.py, which knows what each line must say in both.
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>
#include <cuda.h>

static void *h;

static const char *who(void *p)
{
	static char buf[4][256];
	static int k;
	Dl_info di;
	char *b = buf[k++ & 3];
	if (!p)
		return "null";
	if (!dladdr(p, &di) || !di.dli_fname)
		return "?";
	const char *base = strrchr(di.dli_fname, '/');
	base = base ? base + 1 : di.dli_fname;
	snprintf(b, 256, "%s:%s",
		 strstr(base, "cgshim")	   ? "shim"
		 : strstr(base, "libcuda") ? "driver"
					   : base,
		 di.dli_sname ? di.dli_sname : "?");
	return b;
}

typedef CUresult (*gpa2_t)(const char *, void **, int, cuuint64_t, CUdriverProcAddressQueryResult *);
typedef CUresult (*gpa1_t)(const char *, void **, int, cuuint64_t);
typedef CUresult (*launch_t)(CUgraphExec, CUstream);
static launch_t launch;
static CUgraphExec exec;
static CUcontext ctx;

static void *launcher(void *arg)
{
	(void)arg;
	cuCtxSetCurrent(ctx);
	for (int i = 0; i < 1000; i++)
		if (launch(exec, NULL) != CUDA_SUCCESS)
			return (void *)1;
	return NULL;
}

int main(void)
{
	CUdriverProcAddressQueryResult st;
	void *p, *sentinel = (void *)0x1234;
	CUresult rc;
	h = dlopen("libcuda.so.1", RTLD_NOW);
	if (!h) {
		printf("no libcuda\n");
		return 1;
	}
	printf("dlsym(cuda,cuGraphLaunch): %s\n", who(dlsym(h, "cuGraphLaunch")));
	printf("dlsym(cuda,cuGraphLaunch_ptsz): %s\n", who(dlsym(h, "cuGraphLaunch_ptsz")));
	printf("dlsym(cuda,cuInit): %s\n", who(dlsym(h, "cuInit")));
	printf("dlsym(cuda,cuGetExportTable): %s\n", who(dlsym(h, "cuGetExportTable")));
	p = dlsym(h, "cuNoSuchFunction");
	printf("dlsym(cuda,cuNoSuchFunction): %s dlerror=%s\n", who(p), dlerror() ? "set" : "unset");
	void *libm = dlopen("libm.so.6", RTLD_NOW);
	printf("dlsym(libm,cuGraphLaunch): %s\n", who(libm ? dlsym(libm, "cuGraphLaunch") : NULL));
	printf("dlsym(libm,cos): %s\n", libm && dlsym(libm, "cos") ? "found" : "null");
	printf("dlsym(RTLD_DEFAULT,printf): %s\n",
	       dlsym(RTLD_DEFAULT, "printf") == (void *)printf ? "same" : "differs");

	gpa2_t gpa2 = (gpa2_t)dlsym(h, "cuGetProcAddress_v2");
	gpa1_t gpa1 = (gpa1_t)dlsym(h, "cuGetProcAddress");
	printf("dlsym(cuda,cuGetProcAddress_v2): %s\n", who((void *)gpa2));
	printf("dlsym(cuda,cuGetProcAddress): %s\n", who((void *)gpa1));
	rc = cuInit(0);
	printf("cuInit: %d\n", rc);

	struct {
		const char *name;
		int ver;
		unsigned flags;
	} q[] = {
	    {"cuGetProcAddress", 12000, 0},
	    {"cuGetProcAddress", 11030, 0},
	    {"cuGraphLaunch", 13000, 0},
	    {"cuGraphLaunch", 13000, 2},
	    {"cuGraphInstantiate", 13000, 0},
	    {"cuGraphInstantiate", 10000, 0},
	    {"cuGraphExecUpdate", 11000, 0},
	    {"cuGraphExecUpdate", 12000, 0},
	    {"cuStreamBeginCapture", 13000, 2},
	    {"cuMemAllocAsync", 13000, 0},
	    {"cuInit", 13000, 0},
	    {"cuGetExportTable", 13000, 0},
	};
	for (unsigned i = 0; i < sizeof q / sizeof q[0]; i++) {
		p = NULL;
		st = 99;
		rc = gpa2(q[i].name, &p, q[i].ver, q[i].flags, &st);
		printf("gpa2(%s,%d,%u): rc=%d status=%d %s\n", q[i].name, q[i].ver, q[i].flags, rc, st, who(p));
	}
	/* self lookup through the returned v1 and v2 */
	{
		gpa1_t v1 = NULL;
		gpa2(("cuGetProcAddress"), (void **)&v1, 11030, 0, NULL);
		p = NULL;
		rc = v1 ? v1("cuGraphLaunch", &p, 12000, 2) : (CUresult)-1;
		printf("v1(cuGraphLaunch,12000,2): rc=%d %s\n", rc, who(p));
	}
	p = sentinel;
	st = 99;
	rc = gpa2("cuNoSuch", &p, 13000, 0, &st);
	printf("gpa2(unknown): rc=%d status=%d pfn=%s\n", rc, st, p == sentinel ? "untouched" : p ? "set" : "null");
	p = sentinel;
	rc = gpa1("cuNoSuch", &p, 13000, 0);
	printf("gpa1(unknown): rc=%d pfn=%s\n", rc, p == sentinel ? "untouched" : p ? "set" : "null");
	p = sentinel;
	st = 99;
	rc = gpa2("cuGraphLaunch", &p, 14000, 0, &st);
	printf("gpa2(version 14000): rc=%d status=%d pfn=%s\n", rc, st, p == sentinel ? "untouched" : "set");
	p = NULL;
	rc = gpa2("cuGraphLaunch", &p, 13000, 0, NULL);
	printf("gpa2(status NULL): rc=%d %s\n", rc, who(p));
	p = sentinel;
	rc = gpa2("", &p, 13000, 0, &st);
	printf("gpa2(empty): rc=%d status=%d pfn=%s\n", rc, st, p == sentinel ? "untouched" : p ? "set" : "null");

	/* host safety: errno kept, bad handles get the driver's own error */
	{
		typedef CUresult (*create_t)(CUgraph *, unsigned);
		typedef CUresult (*upd_t)(CUgraphExec, CUgraph, CUgraphExecUpdateResultInfo *);
		create_t create = NULL;
		upd_t upd = NULL;
		CUgraph g = NULL;
		CUdevice dev;
		cuDeviceGet(&dev, 0);
		cuDevicePrimaryCtxRetain(&ctx, dev);
		cuCtxSetCurrent(ctx);
		gpa2("cuGraphCreate", (void **)&create, 13000, 0, NULL);
		gpa2("cuGraphExecUpdate", (void **)&upd, 13000, 0, NULL);
		gpa2("cuGraphLaunch", (void **)&launch, 13000, 0, NULL);
		errno = 4242;
		rc = create(&g, 0);
		printf("errno after cuGraphCreate: %s (rc=%d)\n", errno == 4242 ? "kept" : "changed", rc);
		printf("launch(NULL exec): rc=%d\n", launch(NULL, NULL));
		printf("update(NULL, NULL, NULL): rc=%d\n", upd(NULL, NULL, NULL));
		printf("update(NULL exec, graph, NULL): rc=%d\n", upd(NULL, g, NULL));

		/* 4 threads launching one exec, while the main thread forks */
		typedef CUresult (*inst_t)(CUgraphExec *, CUgraph, unsigned long long);
		typedef CUresult (*empty_t)(CUgraphNode *, CUgraph, const CUgraphNode *, size_t);
		inst_t inst = NULL;
		empty_t add_empty = (empty_t)dlsym(h, "cuGraphAddEmptyNode");
		CUgraphNode n;
		gpa2("cuGraphInstantiateWithFlags", (void **)&inst, 13000, 0, NULL);
		add_empty(&n, g, NULL, 0);
		rc = inst(&exec, g, 0);
		printf("instantiate: rc=%d\n", rc);
		pthread_t t[4];
		for (int i = 0; i < 4; i++)
			pthread_create(&t[i], NULL, launcher, NULL);
		int child_ok = 0;
		for (int i = 0; i < 3; i++) {
			pid_t pid = fork();
			if (pid == 0) {
				void *pp = NULL;
				gpa2("cuGraphLaunch", &pp, 13000, 0, NULL);
				_exit(pp ? 0 : 3);
			}
			int status = 0;
			waitpid(pid, &status, 0);
			child_ok += WIFEXITED(status) && WEXITSTATUS(status) == 0;
		}
		long bad = 0;
		for (int i = 0; i < 4; i++) {
			void *ret;
			pthread_join(t[i], &ret);
			bad += (long)ret;
		}
		printf("threads: %ld failed, forks: %d/3 children ok\n", bad, child_ok);
	}
	return 0;
}
