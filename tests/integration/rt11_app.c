/*
 * tests/integration/rt11_app.c -- a program written against the CUDA 11.x
 * runtime ABI (5-argument cudaGraphInstantiate, 4-argument
 * cudaGraphExecUpdate), linked to the stand-in libcudart.so.11.0. Declares
 * the 11.x prototypes itself: the 13.0 headers only have the new forms.
 */
#include <stdio.h>
#include <stddef.h>

typedef int err_t;
typedef void *stream_t, *graph_t, *exec_t, *node_t;
err_t cudaStreamCreate(stream_t *);
err_t cudaStreamBeginCapture(stream_t, int);
err_t cudaStreamEndCapture(stream_t, graph_t *);
err_t cudaMallocAsync(void **, size_t, stream_t);
err_t cudaFreeAsync(void *, stream_t);
err_t cudaGraphInstantiate(exec_t *, graph_t, node_t *, char *, size_t);
err_t cudaGraphExecUpdate(exec_t, graph_t, node_t *, int *);
err_t cudaGraphLaunch(exec_t, stream_t);
err_t cudaStreamSynchronize(stream_t);
err_t cudaGraphExecDestroy(exec_t);
err_t cudaRuntimeGetVersion(int *);
err_t cudaFree(void *);

static graph_t capture(stream_t s, int nallocs)
{
	graph_t g = NULL;
	void *p[4];
	cudaStreamBeginCapture(s, 0);
	for (int i = 0; i < nallocs; i++)
		cudaMallocAsync(&p[i], 1 << 20, s);
	for (int i = 0; i < nallocs; i++)
		cudaFreeAsync(p[i], s);
	printf("end capture: %d\n", cudaStreamEndCapture(s, &g));
	return g;
}

int main(void)
{
	stream_t s;
	exec_t e = NULL;
	node_t en = NULL;
	int v = 0, result = -1;
	char log[64];
	cudaRuntimeGetVersion(&v);
	printf("runtime %d\n", v);
	cudaFree(0);
	cudaStreamCreate(&s);
	graph_t g1 = capture(s, 1), g2 = capture(s, 1), g3 = capture(s, 2);
	printf("instantiate: %d\n", cudaGraphInstantiate(&e, g1, &en, log, sizeof log));
	printf("launch: %d\n", cudaGraphLaunch(e, s));
	int rc = cudaGraphExecUpdate(e, g2, &en, &result);
	printf("update same: %d result=%d\n", rc, result);
	result = -1;
	rc = cudaGraphExecUpdate(e, g3, &en, &result);
	printf("update topology: %d result=%d\n", rc, result);
	printf("launch: %d\n", cudaGraphLaunch(e, s));
	printf("sync: %d\n", cudaStreamSynchronize(s));
	printf("destroy: %d\n", cudaGraphExecDestroy(e));
	return 0;
}
