/*
 * tests/integration/dump_host.c -- a host stuck in CUDA calls, for the dump
 * (issue 33; dump.py runs it under the shim on the stand-in, whose
 * synchronize calls wait while STANDIN_SYNC_UNTIL's file is missing or for
 * STANDIN_SYNC_MS each).
 *
 * usage: dump_host MODE [N]
 *   blocked    stream s is given a kernel and two launches of a graph
 *              (another stream given a kernel is destroyed); a
 *              capture is left open on stream c; thread "syncer" blocks in
 *              cuStreamSynchronize(s) and thread "evsync" in
 *              cuEventSynchronize of an event recorded on s; prints
 *              "ready" and waits for both
 *   handler    the same, with the program's own SIGUSR1 handler installed
 *              before its first CUDA call (so before the shim's): it prints
 *              "app handler ran" on stdout
 *   late       the same, the handler installed after the first CUDA call
 *              (after the shim took the signal)
 *   locks      blocked, then a fork whose prepare handler (registered
 *              before the first CUDA call, so it runs after the shim's,
 *              which takes every lock of the shim) prints "locks held" and
 *              waits until the release file exists: the dump is asked
 *              while another thread holds the shim's locks
 *   under N    two threads, N/2 cuStreamSynchronize calls each (each as
 *              long as STANDIN_SYNC_MS); prints "over K" for the calls that
 *              really lasted longer than STALL_MS (the environment's
 *              threshold in ms)
 *   exit       a capture left open at exit (no waits)
 *   fork       a child forked after the shim's set-up prints "child PID"
 *              and blocks in cuStreamSynchronize(s); the parent waits
 */
#define _GNU_SOURCE
#include <sys/wait.h>
#include <cuda.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "host_util.h"

static void on_usr1(int sig)
{
	(void)sig;
	say_app_handler();
}

static CUcontext ctx;
static CUstream s, c;

static void *syncer(void *arg)
{
	(void)arg;
	cuCtxSetCurrent(ctx);
	pthread_setname_np(pthread_self(), "syncer");
	cuStreamSynchronize(s);
	return NULL;
}

static CUevent ev;

static void *evsync(void *arg)
{
	(void)arg;
	cuCtxSetCurrent(ctx);
	pthread_setname_np(pthread_self(), "evsync");
	cuEventSynchronize(ev);
	return NULL;
}

static void prepare_block(void)
{
	const char *rel = getenv("DUMP_RELEASE");
	say("locks held\n");
	while (rel && access(rel, F_OK) != 0)
		usleep(5000);
}

static double now_ms(void)
{
	struct timespec t;
	clock_gettime(CLOCK_MONOTONIC, &t);
	return t.tv_sec * 1e3 + t.tv_nsec / 1e6;
}

static int over;
static pthread_mutex_t over_mu = PTHREAD_MUTEX_INITIALIZER;

static void *under_loop(void *arg)
{
	int n = (int)(long)arg;
	double lim = atof(getenv("STALL_MS") ? getenv("STALL_MS") : "1e9");
	cuCtxSetCurrent(ctx);
	for (int i = 0; i < n; i++) {
		double t0 = now_ms();
		cuStreamSynchronize(s);
		if (now_ms() - t0 > lim) {
			pthread_mutex_lock(&over_mu);
			over++;
			pthread_mutex_unlock(&over_mu);
		}
	}
	return NULL;
}

int main(int argc, char **argv)
{
	const char *mode = argc > 1 ? argv[1] : "blocked";
	CUdevice dev;
	CUdeviceptr d;
	CUgraph g;
	CUgraphExec x;
	pthread_t a, b;
	void *pp[] = {&d, NULL};
	char line[64];
	if (!strcmp(mode, "handler"))
		signal(SIGUSR1, on_usr1);
	if (!strcmp(mode, "locks"))
		pthread_atfork(prepare_block, NULL, NULL);
	cuInit(0);
	cuDeviceGet(&dev, 0);
	cuDevicePrimaryCtxRetain(&ctx, dev);
	cuCtxSetCurrent(ctx);
	cuStreamCreate(&s, CU_STREAM_NON_BLOCKING);
	cuStreamCreate(&c, CU_STREAM_NON_BLOCKING);
	if (!strcmp(mode, "under")) {
		int n = argc > 2 ? atoi(argv[2]) : 100;
		pthread_create(&a, NULL, under_loop, (void *)(long)(n / 2));
		pthread_create(&b, NULL, under_loop, (void *)(long)(n - n / 2));
		pthread_join(a, NULL);
		pthread_join(b, NULL);
		snprintf(line, sizeof line, "over %d\n", over);
		say(line);
		return 0;
	}
	if (!strcmp(mode, "fork")) {
		pid_t p = fork();
		if (p == 0) {
			snprintf(line, sizeof line, "child %d\n", (int)getpid());
			say(line);
			cuStreamSynchronize(s);
			_exit(0);
		}
		waitpid(p, NULL, 0);
		say("done\n");
		return 0;
	}
	if (!strcmp(mode, "late"))
		signal(SIGUSR1, on_usr1);
	cuMemAlloc(&d, 4096);
	cuStreamBeginCapture(s, CU_STREAM_CAPTURE_MODE_GLOBAL);
	cuLaunchKernel((CUfunction)(void *)kern, 1, 1, 1, 32, 1, 1, 0, s, pp, NULL);
	cuStreamEndCapture(s, &g);
	cuGraphInstantiate(&x, g, 0);
	cuLaunchKernel((CUfunction)(void *)kern, 1, 1, 1, 32, 1, 1, 0, s, pp, NULL);
	cuGraphLaunch(x, s);
	cuGraphLaunch(x, s);
	cuEventCreate(&ev, 0);
	cuEventRecord(ev, s);
	{ /* a stream given work, then destroyed: the dump must not name it */
		CUstream d;
		cuStreamCreate(&d, CU_STREAM_NON_BLOCKING);
		cuLaunchKernel((CUfunction)(void *)kern, 1, 1, 1, 32, 1, 1, 0, d, pp, NULL);
		cuStreamDestroy(d);
	}
	/* a capture left open on c */
	cuStreamBeginCapture(c, CU_STREAM_CAPTURE_MODE_RELAXED);
	cuLaunchKernel((CUfunction)(void *)kern, 1, 1, 1, 32, 1, 1, 0, c, pp, NULL);
	if (!strcmp(mode, "exit")) {
		say("exiting\n");
		return 0;
	}
	pthread_create(&a, NULL, syncer, NULL);
	pthread_create(&b, NULL, evsync, NULL);
	usleep(100000);
	say("ready\n");
	if (!strcmp(mode, "locks")) {
		pid_t p = fork();
		if (p == 0)
			_exit(0);
	}
	pthread_join(a, NULL);
	pthread_join(b, NULL);
	say("done\n");
	return 0;
}
