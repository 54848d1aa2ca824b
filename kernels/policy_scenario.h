/*
 * kernels/policy_scenario.h -- what the policy scenarios (the programs of
 * kernels/policy/, CGSHIM_ON_UPDATE_FAILURE=reinstantiate, issue 5) share,
 * on top of scenario.h, for both builds (nvcc and gcc against the
 * stand-in).
 *
 * A scenario stops at its first wrong step: MUST(call) prints the call as
 * CHECK does and exits 1 unless it returned cudaSuccess (KERNEL_OK() after
 * a launch). sc_check_buf(what, dev, n, want) copies dev[0..n) back, prints
 * "what: value (want want)" and exits 1 unless every element is want.
 * sc_must_update(e, g) updates e from g and exits 1 unless the update
 * succeeded and left no error behind (cudaGetLastError): bare, the driver
 * refuses these updates; under the policy they must succeed.
 */
#ifndef CGSHIM_POLICY_SCENARIO_H
#define CGSHIM_POLICY_SCENARIO_H

#include <stdlib.h>

#include "scenario.h"

#define MUST(call)                                                                                                     \
	do {                                                                                                           \
		if (CHECK(call, cudaSuccess) != cudaSuccess) {                                                         \
			printf("ABORT: unexpected return code (line %d)\n", __LINE__);                                 \
			exit(1);                                                                                       \
		}                                                                                                      \
	} while (0)
#define KERNEL_OK() MUST(cudaGetLastError())

static inline void sc_check_buf(const char *what, const float *dev, long n, float want)
{
	float *h = (float *)malloc(n * sizeof(float));
	long bad = 0;
	MUST(cudaMemcpy(h, dev, n * sizeof(float), cudaMemcpyDeviceToHost));
	for (long i = 0; i < n; i++)
		bad += h[i] != want;
	printf("%s: %g (want %g)%s\n", what, (double)h[0], (double)want, bad ? " MISMATCH" : "");
	free(h);
	if (bad) {
		printf("ABORT: wrong numbers\n");
		exit(1);
	}
}

static inline void sc_must_update(cudaGraphExec_t e, cudaGraph_t g)
{
	cudaGraphExecUpdateResultInfo info;
	memset(&info, 0xff, sizeof info);
	MUST(cudaGraphExecUpdate(e, g, &info));
	if (info.result != cudaGraphExecUpdateSuccess) {
		printf("ABORT: update result %d\n", (int)info.result);
		exit(1);
	}
	MUST(cudaGetLastError());
}

#endif
