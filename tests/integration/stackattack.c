/* tests/integration/stackattack.c (from ../shared/repro, issue 30) -- the shim walks the caller's stack at begin-capture (a copy
 * of the stack "within known bounds", finished later) and at instantiate,
 * allocation, etc. (a live walk). Run CUDA graph work from unusual stacks:
 *   tiny      pthread with PTHREAD_STACK_MIN stack
 *   setstack  pthread on a custom mmap'd stack (guard pages both sides), pthread_attr_setstack
 *   ucontext  makecontext/swapcontext coroutine on an mmap'd stack with guard pages
 *   altstack  capture begun and ended in a SIGUSR1 handler running on a sigaltstack
 *   altmain   as altstack, the sigaltstack buffer an array on main's stack
 *   fiber     hand-made fiber: rsp switched to the top of an mmap'd stack (guard page
 *             above), then a call of the work function (no terminating frame);
 *             FIBER_WARM=1 runs the work once on main's stack first
 * Each mode does: stream create, begin capture, kernel launch, end, instantiate,
 * launch, update, cuMemAlloc/Free, destroy; prints each rc. Compare bare vs shim. */
#define _GNU_SOURCE
#include <cuda.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <ucontext.h>
#include <unistd.h>
#include <limits.h>
static CUcontext ctx;
static void kfn(void **p, unsigned long n)
{
	(void)p;
	(void)n;
}
static int rounds = 3;
__attribute__((noinline)) static void work(const char *who)
{
	cuCtxSetCurrent(ctx);
	for (int r = 0; r < rounds; r++) {
		CUstream s;
		CUgraph g = NULL, g2 = NULL;
		CUgraphExec x = NULL;
		CUdeviceptr d = 0;
		int a = cuStreamCreate(&s, CU_STREAM_NON_BLOCKING);
		int b = cuStreamBeginCapture(s, CU_STREAM_CAPTURE_MODE_GLOBAL);
		long v = 1;
		void *params[] = {&v, NULL};
		int c = cuLaunchKernel((CUfunction)kfn, 1, 1, 1, 1, 1, 1, 0, s, params, NULL);
		int e = cuStreamEndCapture(s, &g);
		int f = cuGraphInstantiateWithFlags(&x, g, 0);
		int l = cuGraphLaunch(x, s);
		int m = cuMemAlloc(&d, 256);
		int m2 = cuMemFree(d);
		cuGraphClone(&g2, g);
		CUgraphExecUpdateResultInfo info;
		int u = cuGraphExecUpdate(x, g2, &info);
		int z = cuGraphExecDestroy(x) | cuGraphDestroy(g) | cuGraphDestroy(g2) | cuStreamDestroy(s);
		if (r == rounds - 1)
			printf(
			    "%s: create=%d begin=%d launchK=%d end=%d inst=%d launch=%d alloc=%d free=%d update=%d destroy=%d\n",
			    who, a, b, c, e, f, l, m, m2, u, z);
	}
	fflush(stdout);
}
static void *thr(void *arg)
{
	work((const char *)arg);
	return NULL;
}
#define GUARD_HI (1u << 20)
static void *guarded(size_t size) /* a PROT_NONE page below, 1 MiB PROT_NONE above */
{
	char *p = mmap(NULL, size + 4096 + GUARD_HI, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	mprotect(p, 4096, PROT_NONE);
	mprotect(p + 4096 + size, GUARD_HI, PROT_NONE);
	return p + 4096;
}
static ucontext_t uc_main, uc_co;
static void co_entry(void)
{
	work("ucontext");
}
static void handler(int sig)
{
	(void)sig;
	work(getenv("ALTMAIN") ? "altmain" : "altstack");
}
static char *fiber_top;
__attribute__((noinline, used)) static void fiber_body(void)
{
	work("fiber");
}
int main(int argc, char **argv)
{
	const char *mode = argc > 1 ? argv[1] : "tiny";
	if (argc > 2)
		rounds = atoi(argv[2]);
	CUdevice dev;
	cuInit(0);
	cuDeviceGet(&dev, 0);
	cuDevicePrimaryCtxRetain(&ctx, dev);
	cuCtxSetCurrent(ctx);
	if (!strcmp(mode, "tiny") || !strcmp(mode, "setstack")) {
		pthread_attr_t a;
		pthread_t t;
		pthread_attr_init(&a);
		if (!strcmp(mode, "tiny"))
			pthread_attr_setstacksize(&a, PTHREAD_STACK_MIN > 65536 ? PTHREAD_STACK_MIN : 65536);
		else
			pthread_attr_setstack(&a, guarded(64 * 1024), 64 * 1024);
		/* a sanitizer's runtime may refuse a small stack (TSan needs
		 * ~900 KiB): say so with 77, which stacks.py reports as a skip */
		if (pthread_create(&t, &a, thr, (void *)mode)) {
			printf("%s: pthread_create refused the stack\n", mode);
			return 77;
		}
		pthread_join(t, NULL);
	} else if (!strcmp(mode, "ucontext")) {
		size_t sz = 64 * 1024;
		getcontext(&uc_co);
		uc_co.uc_stack.ss_sp = guarded(sz);
		uc_co.uc_stack.ss_size = sz;
		uc_co.uc_link = &uc_main;
		makecontext(&uc_co, co_entry, 0);
		swapcontext(&uc_main, &uc_co);
	} else if (!strcmp(mode, "altstack") || !strcmp(mode, "altmain")) {
		static char mainbuf[1 << 16];
		char localbuf[1 << 16];
		stack_t ss = {0};
		ss.ss_size = 1 << 16;
		ss.ss_sp = !strcmp(mode, "altmain") ? (void *)localbuf : guarded(1 << 16);
		if (!strcmp(mode, "altmain"))
			setenv("ALTMAIN", "1", 1);
		(void)mainbuf;
		sigaltstack(&ss, NULL);
		struct sigaction sa = {0};
		sa.sa_handler = handler;
		sa.sa_flags = SA_ONSTACK;
		sigaction(SIGUSR1, &sa, NULL);
		raise(SIGUSR1);
	} else if (!strcmp(mode, "fiber")) {
		size_t sz = 64 * 1024;
		fiber_top = (char *)guarded(sz) + sz;
		/* FIBER_WARM: the shim initialised and warmed on the normal stack first */
		if (getenv("FIBER_WARM"))
			work("main-stack first");
#if defined(__x86_64__)
		/* switch to the fiber's stack and call its body from there, as a
		 * minimal fiber switch does (no terminating frame set up); the
		 * stack pointer stays 16-byte aligned at the call */
		__asm__ volatile("mov %%rsp, %%r12\n\t"
				 "mov %0, %%rsp\n\t"
				 "sub $16, %%rsp\n\t"
				 "call fiber_body\n\t"
				 "mov %%r12, %%rsp\n\t"
				 :
				 : "r"(fiber_top)
				 : "r12", "rax", "rcx", "rdx", "rsi", "rdi", "r8", "r9", "r10", "r11", "memory", "cc");
#elif defined(__aarch64__)
		/* the same on aarch64: x29 still names main's frame record */
		__asm__ volatile("mov x19, sp\n\t"
				 "mov sp, %0\n\t"
				 "sub sp, sp, #16\n\t"
				 "bl fiber_body\n\t"
				 "mov sp, x19\n\t"
				 :
				 : "r"(fiber_top)
				 : "x19", "x0", "x1", "x2", "x3", "x4", "x5", "x6", "x7", "x8", "x9", "x10", "x11",
				   "x12", "x13", "x14", "x15", "x16", "x17", "x30", "memory", "cc");
#else
#error "stackattack: fiber switch written for x86_64 and aarch64"
#endif
	}
	printf("done %s\n", mode);
	return 0;
}
