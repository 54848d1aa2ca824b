/*
 * tests/integration/early_app.c -- CGS001 through entry points that
 * libearly.so resolved in its constructor, before the shim's constructor
 * ran. An exec of a 1-node graph is updated from a 2-node graph: the driver
 * refuses with 910 (topology changed). Prints deterministic text only.
 */
#define __CUDA_API_VERSION_INTERNAL 1
#include <stdio.h>

#include "early_lib.h"

int main(void)
{
	struct early_api *a = &early_api;
	CUcontext ctx;
	CUstream s;
	CUgraph g1, g2;
	CUgraphNode n1, n2, n3;
	CUgraphExec e;
	CUgraphExecUpdateResultInfo info;
	CUresult rc;

	if (!a->update || !a->launch || !a->addEmpty) {
		printf("entry points missing\n");
		return 1;
	}
	printf("constructor thread call: %s\n", a->thread_ok ? "ok" : "failed");
	a->retain(&ctx, 0);
	a->setCurrent(ctx);
	a->streamCreate(&s, CU_STREAM_NON_BLOCKING);
	a->graphCreate(&g1, 0);
	a->addEmpty(&n1, g1, NULL, 0);
	a->graphCreate(&g2, 0);
	a->addEmpty(&n2, g2, NULL, 0);
	a->addEmpty(&n3, g2, &n2, 1);
	printf("instantiate: %d\n", (int)a->instantiate(&e, g1, 0));
	printf("launch: %d\n", (int)a->launch(e, s));
	rc = a->update(e, g2, &info);
	printf("update: %d result=%d\n", (int)rc, (int)info.result);
	printf("launch after update: %d\n", (int)a->launch(e, s));
	a->streamSync(s);
	a->execDestroy(e);
	a->graphDestroy(g1);
	a->graphDestroy(g2);
	return 0;
}
