// tests/gpu/issue32_ck.h -- the check of issue 32's GPU programs
// (issue32_escape.cu, issue32_churn.cu): a failing runtime call prints
// FAIL and its error, and main returns 1.
#ifndef ISSUE32_CK_H
#define ISSUE32_CK_H

#include <cstdio>

#define CK(x)                                                                                                          \
	do {                                                                                                           \
		cudaError_t e_ = (x);                                                                                  \
		if (e_ != cudaSuccess) {                                                                               \
			std::printf("FAIL %s: %s\n", #x, cudaGetErrorString(e_));                                      \
			return 1;                                                                                      \
		}                                                                                                      \
	} while (0)

#endif
