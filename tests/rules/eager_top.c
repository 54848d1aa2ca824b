/*
 * tests/rules/eager_top.c -- the top eager kernels by call site (issue 32,
 * coverage), checked by check_eager_top.py against the counts the program
 * prints itself: k_add from site_a, k_fill from site_b, k_scale from
 * site_c, launched in a period of 8 (5, 2, 1: a fixed sampling gap of 256
 * would see only one of them) by the main thread, and k_add and k_scale by
 * a worker from the same two sites (its rows merge with the main thread's);
 * a captured graph launched GRAPHED times (its kernels are not eager).
 * With an argument "fork": a forked child launches FORKED k_fill from
 * site_b and exits (its summary counts only those).
 */
#include <pthread.h>
#include <stdlib.h>
#include <sys/wait.h>
#include <unistd.h>

#include "scenario.h"

#define ITER 8000
#define WORKER 3000
#define GRAPHED 10
#define FORKED 100

static float *buf;
static long n_a, n_b, n_c;

/* One launch each, straight from the function (the site's first frame;
 * exported: the frame is named by the dynamic symbol table). */
#define SITE(name, kernel, value)                                                                                      \
	void name(cudaStream_t s);                                                                                     \
	__attribute__((noinline)) void name(cudaStream_t s)                                                            \
	{                                                                                                              \
		long n = 1;                                                                                            \
		double v = (value);                                                                                    \
		void *args[] = {&buf, &n, &v, NULL};                                                                   \
		(void)cudaLaunchKernel((const void *)(kernel), (dim3){1, 1, 1}, (dim3){1, 1, 1}, args, 0, s);          \
		__asm__ __volatile__("" ::: "memory"); /* no tail call: the frame stays */                             \
	}
SITE(site_a, k_add, 1.0)
SITE(site_b, k_fill, 2.0)
SITE(site_c, k_scale, 1.0)

static void *worker(void *arg)
{
	cudaStream_t s;
	(void)arg;
	CHECK(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking), cudaSuccess);
	for (int i = 0; i < WORKER; i++) {
		site_a(s);
		site_c(s);
	}
	CHECK(cudaStreamSynchronize(s), cudaSuccess);
	CHECK(cudaStreamDestroy(s), cudaSuccess);
	return NULL;
}

int main(int argc, char **argv)
{
	cudaStream_t s;
	cudaGraph_t g = NULL;
	cudaGraphExec_t e = NULL;
	pthread_t t;

	CHECK(cudaFree(0), cudaSuccess);
	CHECK(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking), cudaSuccess);
	CHECK(cudaMalloc((void **)&buf, 256 * sizeof(float)), cudaSuccess);
	for (int i = 0; i < ITER; i++) {
		for (int k = 0; k < 5; k++, n_a++)
			site_a(s);
		for (int k = 0; k < 2; k++, n_b++)
			site_b(s);
		site_c(s);
		n_c++;
	}
	pthread_create(&t, NULL, worker, NULL);
	pthread_join(t, NULL);
	n_a += WORKER;
	n_c += WORKER;
	CHECK(cudaStreamBeginCapture(s, cudaStreamCaptureModeGlobal), cudaSuccess);
	LAUNCH_COPY(s, buf + 128, buf, 128);
	LAUNCH_COPY(s, buf, buf + 128, 128);
	CHECK(cudaStreamEndCapture(s, &g), cudaSuccess);
	CHECK(cudaGraphInstantiate(&e, g, 0), cudaSuccess);
	for (int i = 0; i < GRAPHED; i++)
		CHECK(cudaGraphLaunch(e, s), cudaSuccess);
	CHECK(cudaStreamSynchronize(s), cudaSuccess);
	printf("site_a _Z5k_addPfld %ld\nsite_b _Z6k_fillPfld %ld\nsite_c _Z7k_scalePfld %ld\ngraphed %d\n", n_a, n_b,
	       n_c, 2 * GRAPHED);
	fflush(stdout);
	if (argc > 1 && !strcmp(argv[1], "fork")) {
		pid_t c = fork();
		int st = 0;
		if (c == 0) {
			for (int i = 0; i < FORKED; i++)
				site_b(s);
			CHECK(cudaStreamSynchronize(s), cudaSuccess);
			printf("child %d site_b _Z6k_fillPfld %d\n", (int)getpid(), FORKED);
			fflush(stdout);
			exit(0);
		}
		CHECK(waitpid(c, &st, 0) == c && WIFEXITED(st) && !WEXITSTATUS(st), 1);
	}
	CHECK(cudaGraphExecDestroy(e), cudaSuccess);
	CHECK(cudaGraphDestroy(g), cudaSuccess);
	return SCENARIO_EXIT();
}
