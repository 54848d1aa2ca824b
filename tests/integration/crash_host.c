/*
 * tests/integration/crash_host.c -- a host that dies of a signal (issue 30):
 * the shim's log must keep every record made before the crash and a `fatal`
 * record, and the program must end as it does bare (run.py case crash_log
 * runs each mode bare and under the shim and compares).
 *
 * Every mode: three launches of a captured graph, a capture left open, then
 *   raise      raise(SIGSEGV)
 *   fault      a store through a NULL pointer (a fault the kernel sends)
 *   abort      abort()
 *   handler    the program's own SIGSEGV handler (signal(), installed before
 *              its first CUDA call) prints and _exits 42
 *   oneshot    an SA_SIGINFO|SA_RESETHAND handler, installed before the first
 *              CUDA call, prints what it got and returns; the second raise
 *              then takes the default action
 *   late       a handler installed after the first capture (so after the
 *              shim's) prints, then hands on to the action it replaced
 *   thread     a second thread made records (batched, unwritten) and waits;
 *              the main thread then raises SIGSEGV
 *   recover    a handler (installed before the first CUDA call) that counts
 *              and returns, as a runtime using SIGSEGV on purpose: three
 *              raises, then more CUDA calls, then a normal exit 0
 *   overflow   a stack overflow, with the program's handler on a 64 KiB
 *              alternate stack (SA_ONSTACK); it prints and _exits 43
 *   overflow8  the same on an 8 KiB alternate stack: too small for the
 *              shim's record, which it leaves out
 */
#define _GNU_SOURCE
#include <cuda.h>
#include <pthread.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "host_util.h"

static void own(int sig)
{
	(void)sig;
	say_app_handler();
	_exit(42);
}

static void oneshot(int sig, siginfo_t *si, void *uc)
{
	char m[96];
	(void)uc;
	snprintf(m, sizeof m, "oneshot handler: signo=%d si_signo=%d code=%d\n", sig, si->si_signo, si->si_code);
	say(m);
}

static int recovered;

static void recover(int sig)
{
	(void)sig;
	recovered++;
}

static struct sigaction replaced;

static void late(int sig, siginfo_t *si, void *uc)
{
	say("late handler ran\n");
	if (replaced.sa_flags & SA_SIGINFO) {
		replaced.sa_sigaction(sig, si, uc);
	} else if (replaced.sa_handler != SIG_DFL && replaced.sa_handler != SIG_IGN) {
		replaced.sa_handler(sig);
	} else {
		sigaction(sig, &replaced, NULL);
		raise(sig);
	}
}

static void on_overflow(int sig)
{
	(void)sig;
	say("overflow handler ran\n");
	_exit(43);
}

static volatile int stop_deeper; /* never set: the recursion ends in the overflow */

static int deeper(volatile char *up)
{
	volatile char frame[512];
	if (stop_deeper)
		return 0;
	frame[0] = up ? up[0] + 1 : 0;
	return deeper(frame) + frame[1]; /* not a tail call */
}

static CUstream s;

/* A capture, instantiate and launch on this thread; its records wait in
 * this thread's batch. */
static CUgraphExec one_graph(void)
{
	CUdeviceptr d;
	CUgraph g = NULL;
	CUgraphExec x;
	void *pp[] = {&d, NULL};
	cuMemAlloc(&d, 4096);
	cuStreamBeginCapture(s, CU_STREAM_CAPTURE_MODE_GLOBAL);
	cuLaunchKernel((CUfunction)(void *)kern, 1, 1, 1, 32, 1, 1, 0, s, pp, NULL);
	cuStreamEndCapture(s, &g);
	cuGraphInstantiate(&x, g, 0);
	return x;
}

static pthread_mutex_t mu = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t cv = PTHREAD_COND_INITIALIZER;
static int ready;

static void *worker(void *arg)
{
	CUcontext ctx = arg;
	CUstream ws;
	CUgraph g;
	CUgraphExec x;
	cuCtxSetCurrent(ctx);
	cuStreamCreate(&ws, CU_STREAM_NON_BLOCKING);
	cuGraphCreate(&g, 0);
	cuGraphInstantiate(&x, g, 0);
	cuGraphLaunch(x, ws);
	pthread_mutex_lock(&mu);
	ready = 1;
	pthread_cond_signal(&cv);
	pthread_mutex_unlock(&mu);
	pause(); /* alive, its batch unwritten, until the process dies */
	return NULL;
}

int main(int argc, char **argv)
{
	const char *m = argc > 1 ? argv[1] : "raise";
	CUcontext ctx;
	CUgraphExec x;
	setvbuf(stdout, NULL, _IONBF, 0);
	if (!strcmp(m, "handler"))
		signal(SIGSEGV, own);
	if (!strcmp(m, "recover"))
		signal(SIGSEGV, recover);
	if (!strcmp(m, "oneshot")) {
		struct sigaction sa;
		memset(&sa, 0, sizeof sa);
		sa.sa_sigaction = oneshot;
		sa.sa_flags = SA_SIGINFO | SA_RESETHAND;
		sigemptyset(&sa.sa_mask);
		sigaction(SIGSEGV, &sa, NULL);
	}
	if (!strncmp(m, "overflow", 8)) { /* before the shim starts: it keeps this action */
		static char alt[64 << 10];
		stack_t ss = {.ss_sp = alt, .ss_size = m[8] == '8' ? 8 << 10 : sizeof alt, .ss_flags = 0};
		struct sigaction sa;
		memset(&sa, 0, sizeof sa);
		sa.sa_handler = on_overflow;
		sa.sa_flags = SA_ONSTACK;
		sigemptyset(&sa.sa_mask);
		sigaltstack(&ss, NULL);
		sigaction(SIGSEGV, &sa, NULL);
	}
	cuInit(0);
	cuDevicePrimaryCtxRetain(&ctx, 0);
	cuCtxSetCurrent(ctx);
	cuStreamCreate(&s, CU_STREAM_NON_BLOCKING);
	x = one_graph(); /* the shim starts at its first hooked call, in here */
	if (!strcmp(m, "late")) {
		struct sigaction sa;
		memset(&sa, 0, sizeof sa);
		sa.sa_sigaction = late;
		sa.sa_flags = SA_SIGINFO;
		sigemptyset(&sa.sa_mask);
		sigaction(SIGSEGV, &sa, &replaced);
	}
	for (int i = 0; i < 3; i++)
		cuGraphLaunch(x, s);
	cuStreamSynchronize(s);
	if (!strcmp(m, "thread")) {
		pthread_t t;
		pthread_create(&t, NULL, worker, ctx);
		pthread_mutex_lock(&mu);
		while (!ready)
			pthread_cond_wait(&cv, &mu);
		pthread_mutex_unlock(&mu);
	}
	cuStreamBeginCapture(s, CU_STREAM_CAPTURE_MODE_GLOBAL); /* left open */
	say("about to crash\n");
	if (!strncmp(m, "overflow", 8))
		return deeper(NULL);
	if (!strcmp(m, "recover")) {
		char line[64];
		CUgraph g;
		raise(SIGSEGV);
		raise(SIGSEGV);
		raise(SIGSEGV);
		cuStreamEndCapture(s, &g);
		cuGraphDestroy(g);
		cuGraphExecDestroy(x);
		snprintf(line, sizeof line, "recovered %d times\n", recovered);
		say(line);
		return 0;
	}
	if (!strcmp(m, "fault"))
		*(volatile int *)(uintptr_t)(argc - 2) = 1; /* argc is 2: NULL, unknown to the compiler */
	else if (!strcmp(m, "abort"))
		abort();
	raise(SIGSEGV);
	if (!strcmp(m, "oneshot")) {
		say("oneshot: raising again\n");
		raise(SIGSEGV);
	}
	say("survived\n");
	return 0;
}
