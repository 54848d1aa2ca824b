/*
 * tools/tally.c -- read the tree's findings back from CGSHIM_TALLY_FILE
 * (tally.h). Lines are "PID ERRORS WARNINGS" (shim/findings.c); a process
 * writes one at its first error and one at exit, so per pid the largest
 * count of each column is the process's total. A malformed line (a full
 * disk cut it) is skipped.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "tally.h"

void tally_begin(struct tally *t)
{
	const char *env = getenv("CGSHIM_TALLY_FILE");
	struct stat st;

	memset(t, 0, sizeof *t);
	if (env && *env) {
		t->path = strdup(env);
		if (t->path && stat(t->path, &st) == 0)
			t->from = st.st_size;
		return;
	}
	{
		const char *dir = getenv("TMPDIR");
		char buf[4096];
		int fd;

		snprintf(buf, sizeof buf, "%s/cgshim-tally-XXXXXX", dir && *dir ? dir : "/tmp");
		fd = mkstemp(buf);
		if (fd < 0)
			return; /* no summary line, no error exit code: said by tally_print */
		close(fd);
		t->path = strdup(buf);
		t->own = 1;
		if (t->path)
			setenv("CGSHIM_TALLY_FILE", t->path, 1);
	}
}

struct tally_pid {
	long pid;
	long long e, w;
};

void tally_end(struct tally *t)
{
	struct tally_pid *p = NULL;
	size_t n = 0, cap = 0, i;
	char line[128];
	FILE *f;

	if (!t->path)
		return;
	f = fopen(t->path, "r");
	if (f && fseek(f, t->from, SEEK_SET) == 0) {
		while (fgets(line, sizeof line, f)) {
			long pid;
			long long e, w;
			if (sscanf(line, "%ld %lld %lld", &pid, &e, &w) != 3 || e < 0 || w < 0)
				continue;
			for (i = 0; i < n && p[i].pid != pid; i++)
				;
			if (i == n) {
				if (n == cap) {
					struct tally_pid *np = realloc(p, (cap = cap ? 2 * cap : 16) * sizeof *p);
					if (!np)
						break;
					p = np;
				}
				p[n++] = (struct tally_pid){pid, 0, 0};
			}
			if (e > p[i].e)
				p[i].e = e;
			if (w > p[i].w)
				p[i].w = w;
		}
	}
	if (f)
		fclose(f);
	for (i = 0; i < n; i++) {
		t->errors += p[i].e;
		t->warnings += p[i].w;
		t->processes += p[i].e || p[i].w;
	}
	free(p);
	if (t->own)
		unlink(t->path);
}

void tally_print(const struct tally *t, const char *logs)
{
	if (!t->path) {
		fputs("cgshim: ERROR SUMMARY: unknown (no tally file could be made in $TMPDIR)\n", stderr);
		return;
	}
	fprintf(stderr, "cgshim: ERROR SUMMARY: %lld error%s, %lld warning%s", t->errors, t->errors == 1 ? "" : "s",
		t->warnings, t->warnings == 1 ? "" : "s");
	if (t->processes)
		fprintf(stderr, " in %d process%s", t->processes, t->processes == 1 ? "" : "es");
	if (t->errors + t->warnings == 0)
		fputc('\n', stderr);
	else if (logs)
		fprintf(stderr, "; see them: cgshim report %s\n", logs);
	else
		fputs("; see them above (the shim's records on stderr)\n", stderr);
}

int tally_status(const struct tally *t, int rc, int code)
{
	return code != 0 && t->errors > 0 ? code : rc;
}
