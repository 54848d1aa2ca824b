/*
 * tools/report-names.c -- kernel names for people: the shim logs the
 * mangled name (cuFuncGetName); the report demangles it with c++filt when
 * one is on PATH (the shim never demangles: it links only libc/libdl/
 * pthread) and shortens it for a picture: no return type, no template
 * arguments, no parameters, the last two scopes, at most 40 characters.
 * Each distinct name is demangled once (one c++filt run) and cached for
 * the process.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "report.h"

#define RN_MAX 512

static struct {
	char *mangled, *shortname;
} rn_cache[RN_MAX];
static int rn_n, rn_have_filt = -1;

/* c++filt NAME, its first output line into out; 0 on success. */
static int rn_filt(const char *name, char *out, size_t cap)
{
	int fd[2];
	pid_t pid;
	ssize_t got = 0, k;
	int status;
	if (rn_have_filt < 0)
		rn_have_filt = system("command -v c++filt >/dev/null 2>&1") == 0;
	if (!rn_have_filt || pipe(fd) < 0)
		return -1;
	pid = fork();
	if (pid < 0) {
		close(fd[0]);
		close(fd[1]);
		return -1;
	}
	if (pid == 0) {
		dup2(fd[1], 1);
		close(fd[0]);
		close(fd[1]);
		execlp("c++filt", "c++filt", "--", name, (char *)NULL);
		_exit(127);
	}
	close(fd[1]);
	while ((size_t)got + 1 < cap && (k = read(fd[0], out + got, cap - 1 - (size_t)got)) != 0) {
		if (k < 0) {
			if (errno == EINTR)
				continue;
			break;
		}
		got += k;
	}
	close(fd[0]);
	while (waitpid(pid, &status, 0) < 0 && errno == EINTR)
		;
	out[got] = 0;
	out[strcspn(out, "\n")] = 0;
	return WIFEXITED(status) && WEXITSTATUS(status) == 0 && got > 0 ? 0 : -1;
}

/* "void ns::a::kern<int, 4>(float*, long)" -> "a::kern" */
static void rn_shorten(const char *d, char *out, size_t cap)
{
	char buf[1024];
	size_t n = 0;
	int depth = 0;
	/* drop template arguments and everything from the parameter list on */
	for (const char *p = d; *p && n + 1 < sizeof buf; p++) {
		if (*p == '<') {
			depth++;
			continue;
		}
		if (*p == '>') {
			depth -= depth > 0;
			continue;
		}
		if (depth)
			continue;
		if (*p == '(')
			break;
		buf[n++] = *p;
	}
	buf[n] = 0;
	/* drop the return type: the name starts after the last space */
	char *name = strrchr(buf, ' ');
	name = name ? name + 1 : buf;
	/* the last two scopes */
	char *last = NULL, *prev = NULL;
	for (char *p = strstr(name, "::"); p; p = strstr(p + 2, "::")) {
		prev = last;
		last = p;
	}
	if (prev)
		name = prev + 2;
	if (strlen(name) > 40) {
		snprintf(out, cap, "%.37s...", name);
		return;
	}
	snprintf(out, cap, "%.100s", *name ? name : d);
}

const char *rp_kernel_short(const char *mangled)
{
	char dem[4096], s[128];
	if (!mangled)
		return NULL;
	for (int i = 0; i < rn_n; i++)
		if (!strcmp(rn_cache[i].mangled, mangled))
			return rn_cache[i].shortname;
	if (rn_filt(mangled, dem, sizeof dem) != 0)
		snprintf(dem, sizeof dem, "%s", mangled);
	rn_shorten(dem, s, sizeof s);
	if (rn_n == RN_MAX)
		return mangled;
	rn_cache[rn_n].mangled = strdup(mangled);
	rn_cache[rn_n].shortname = strdup(s);
	if (!rn_cache[rn_n].mangled || !rn_cache[rn_n].shortname)
		return mangled;
	return rn_cache[rn_n++].shortname;
}
