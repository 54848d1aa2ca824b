/*
 * tests/integration/nccl_doors.c -- how the shim's NCCL exports
 * (shim/nccl-hooks.def) look to a process, with and without a libnccl
 * (issue 33). Prints "key: value" lines; tests/integration/nccl_doors.py
 * runs it bare and under the shim and knows what each must say.
 *   nccl_doors lookups  dlsym(RTLD_DEFAULT) with no libnccl, then with the
 *                       stand-in libnccl.so.2 loaded RTLD_LOCAL (as a
 *                       framework's dependency is), dlsym on its handle, a
 *                       teardown through that pointer
 *   nccl_doors weak     a weak reference to ncclCommDestroy and no libnccl:
 *                       NULL bare; the shim's export under the shim, whose
 *                       call then gets the dynamic loader's answer to an
 *                       undefined symbol (docs/rules/CGS027.md, "Limits")
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <stdio.h>
#include <string.h>

extern int ncclCommDestroy(void *comm) __attribute__((weak));

static const char *who(void *p)
{
	Dl_info di;
	if (!p)
		return "null";
	if (!dladdr(p, &di) || !di.dli_fname)
		return "?";
	return strstr(di.dli_fname, "cgshim") ? "shim" : strstr(di.dli_fname, "libnccl") ? "libnccl" : "other";
}

int main(int argc, char **argv)
{
	const char *mode = argc > 1 ? argv[1] : "lookups";
	if (!strcmp(mode, "weak")) {
		printf("weak: %s\n", who((void *)ncclCommDestroy));
		fflush(stdout);
		if (ncclCommDestroy)
			printf("weak call: rc=%d\n", ncclCommDestroy(NULL));
		return 0;
	}
	void *p = dlsym(RTLD_DEFAULT, "ncclCommDestroy");
	printf("default, no libnccl: %s (dlerror %s)\n", who(p), dlerror() ? "set" : "clear");
	void *h = dlopen("libnccl.so.2", RTLD_NOW | RTLD_LOCAL);
	if (!h) {
		printf("no libnccl.so.2: %s\n", dlerror());
		return 1;
	}
	printf("default, local libnccl: %s\n", who(dlsym(RTLD_DEFAULT, "ncclCommAbort")));
	int (*init_all)(void **, int, const int *) = (int (*)(void **, int, const int *))dlsym(h, "ncclCommInitAll");
	int (*destroy)(void *) = (int (*)(void *))dlsym(h, "ncclCommDestroy");
	int (*fin)(void *) = (int (*)(void *))dlsym(h, "ncclCommFinalize");
	printf("handle ncclCommInitAll: %s\n", who((void *)init_all));
	printf("handle ncclCommDestroy: %s\n", who((void *)destroy));
	printf("handle ncclCommFinalize: %s\n", who((void *)fin));
	printf("handle ncclBogus: %s\n", who(dlsym(h, "ncclCommBogus")));
	void *comm = NULL;
	int dev = 0;
	printf("init: %d\n", init_all ? init_all(&comm, 1, &dev) : -1);
	printf("finalize: %d\n", fin ? fin(comm) : -1);
	printf("destroy: %d\n", destroy ? destroy(comm) : -1);
	printf("destroy NULL: %d\n", destroy ? destroy(NULL) : -1);
	return 0;
}
