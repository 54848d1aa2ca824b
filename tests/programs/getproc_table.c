/*
 * tests/programs/getproc_table.c -- cuGetProcAddress parity table.
 *
 * dlopen("libcuda.so.1"), dlsym cuGetProcAddress and cuGetProcAddress_v2,
 * and print one line per query: rc, symbol status, and which exported symbol
 * the returned pointer equals (compared with dlsym(handle, candidate)).
 * Run on the real GPU and against the stand-in; outputs are compared line by
 * line (tests/standin/getproc_table.expected), so nothing machine-dependent
 * (no addresses) is printed.
 */
#include <cuda.h>
#include <dlfcn.h>
#include <stdio.h>
#include <string.h>

typedef CUresult (*gpa_v1_t)(const char *, void **, int, cuuint64_t);
typedef CUresult (*gpa_v2_t)(const char *, void **, int, cuuint64_t, CUdriverProcAddressQueryResult *);

struct query {
	int api; /* 1: cuGetProcAddress, 2: cuGetProcAddress_v2 */
	const char *name;
	int version;
	unsigned flags;
	int null_status; /* pass symbolStatus = NULL (v2 only) */
};

static const struct query queries[] = {
    {2, "cuGraphInstantiate", 10000, 0, 0},
    {2, "cuGraphInstantiate", 11000, 0, 0},
    {2, "cuGraphInstantiate", 11040, 0, 0},
    {2, "cuGraphInstantiate", 12000, 0, 0},
    {2, "cuGraphInstantiate", 13000, 0, 0},
    {2, "cuGraphInstantiate", 13000, 2, 0},
    {2, "cuGraphInstantiateWithFlags", 11040, 0, 0},
    {2, "cuGraphInstantiateWithFlags", 13000, 0, 0},
    {2, "cuGraphInstantiateWithParams", 11000, 0, 0},
    {2, "cuGraphInstantiateWithParams", 11040, 0, 0},
    {2, "cuGraphInstantiateWithParams", 12000, 0, 0},
    {2, "cuGraphInstantiateWithParams", 13000, 2, 0},
    {2, "cuGraphExecUpdate", 10000, 0, 0},
    {2, "cuGraphExecUpdate", 11000, 0, 0},
    {2, "cuGraphExecUpdate", 11040, 0, 0},
    {2, "cuGraphExecUpdate", 12000, 0, 0},
    {2, "cuGraphExecUpdate", 13000, 0, 0},
    {2, "cuGraphExecUpdate", 13000, 2, 0},
    {2, "cuGraphLaunch", 10000, 0, 0},
    {2, "cuGraphLaunch", 13000, 0, 0},
    {2, "cuGraphLaunch", 13000, 1, 0},
    {2, "cuGraphLaunch", 13000, 2, 0},
    {2, "cuMemAllocAsync", 11000, 0, 0},
    {2, "cuMemAllocAsync", 11040, 0, 0},
    {2, "cuMemAllocAsync", 12000, 0, 0},
    {2, "cuMemAllocAsync", 12000, 2, 0},
    {2, "cuGetProcAddress", 10000, 0, 0},
    {2, "cuGetProcAddress", 11030, 0, 0},
    {2, "cuGetProcAddress", 11040, 0, 0},
    {2, "cuGetProcAddress", 12000, 0, 0},
    {2, "cuGetProcAddress", 13000, 0, 0},
    {2, "cuStreamBeginCapture", 10000, 0, 0},
    {2, "cuStreamBeginCapture", 10000, 2, 0},
    {2, "cuStreamBeginCapture", 12000, 0, 0},
    {2, "cuStreamBeginCapture", 12000, 2, 0},
    {2, "cuStreamGetCaptureInfo", 11000, 0, 0},
    {2, "cuStreamGetCaptureInfo", 12000, 0, 0},
    {2, "cuStreamGetCaptureInfo", 13000, 0, 0},
    {2, "cuStreamGetCaptureInfo", 13000, 2, 0},
    {2, "cuMemAlloc", 13000, 0, 0},
    {2, "cuCtxSynchronize", 2000, 0, 0},
    {2, "cuCtxSynchronize", 12080, 0, 0},
    {2, "cuCtxSynchronize", 13000, 0, 0},
    {2, "cuMemFree", 13000, 0, 0},
    {2, "cuGraphAddNode", 12020, 0, 0},
    {2, "cuGraphAddNode", 13000, 0, 0},
    {2, "cuGraphExecKernelNodeSetParams", 11000, 0, 0},
    {2, "cuGraphExecKernelNodeSetParams", 13000, 0, 0},
    {2, "cuInit", 2000, 0, 0},
    {2, "cuStandinNoSuchFunction", 13000, 0, 0},
    {2, "", 0, 0, 0},
    {2, "", 13000, 0, 0},
    {2, "cuGraphLaunch", 14000, 0, 0},
    {2, "cuGraphLaunch", 13000, 0, 1},
    {2, "cuStandinNoSuchFunction", 13000, 0, 1},
    {1, "cuGraphInstantiate", 11030, 0, 0},
    {1, "cuGraphInstantiate", 13000, 0, 0},
    {1, "cuGraphExecUpdate", 11030, 0, 0},
    {1, "cuGraphExecUpdate", 13000, 0, 0},
    {1, "cuGraphLaunch", 13000, 2, 0},
    {1, "cuGetProcAddress", 11030, 0, 0},
    {1, "cuGetProcAddress", 13000, 0, 0},
    {1, "cuStandinNoSuchFunction", 13000, 0, 0},
    {1, "", 13000, 0, 0},
    {1, "cuGraphLaunch", 14000, 0, 0},
};

static const char *suffixes[] = {"", "_v2", "_v3", "_ptsz", "_v2_ptsz", "_v3_ptsz", NULL};

/* Name of the exported symbol equal to p, among base+suffix candidates. */
static const char *which(void *h, const char *base, void *p, char *buf, size_t len)
{
	if (!p)
		return "null";
	for (int i = 0; suffixes[i]; i++) {
		snprintf(buf, len, "%s%s", base, suffixes[i]);
		if (*base && dlsym(h, buf) == p)
			return buf;
	}
	return "other";
}

int main(void)
{
	void *h = dlopen("libcuda.so.1", RTLD_NOW);
	if (!h) {
		printf("dlopen libcuda.so.1 failed\n");
		return 1;
	}
	gpa_v1_t v1 = (gpa_v1_t)dlsym(h, "cuGetProcAddress");
	gpa_v2_t v2 = (gpa_v2_t)dlsym(h, "cuGetProcAddress_v2");
	if (!v1 || !v2) {
		printf("cuGetProcAddress missing\n");
		return 1;
	}
	static char sentinel;
	for (size_t i = 0; i < sizeof queries / sizeof queries[0]; i++) {
		const struct query *q = &queries[i];
		void *pfn = &sentinel;
		int status = 77;
		CUresult rc;
		if (q->api == 1)
			rc = v1(q->name, &pfn, q->version, q->flags);
		else
			rc = v2(q->name, &pfn, q->version, q->flags,
				q->null_status ? NULL : (CUdriverProcAddressQueryResult *)&status);
		char buf[128];
		const char *got = pfn == &sentinel ? "untouched" : which(h, q->name, pfn, buf, sizeof buf);
		char st[16];
		if (q->api == 1 || q->null_status)
			snprintf(st, sizeof st, "-");
		else if (status == 77)
			snprintf(st, sizeof st, "untouched");
		else
			snprintf(st, sizeof st, "%d", status);
		printf("v%d name=\"%s\" ver=%d flags=%u%s: rc=%d status=%s pfn=%s\n", q->api, q->name, q->version,
		       q->flags, q->null_status ? " status=NULL" : "", (int)rc, st, got);
	}
	return 0;
}
