/*
 * bench/sampler.c -- a minimal sampling profiler for GPU hosts without perf:
 * preloaded beside the shim, it samples the main thread's CPU time
 * (ITIMER_PROF, every 100 us of CPU), keeps the innermost frames of each
 * sample, and at exit prints to stderr the functions (dladdr names, or
 * module+offset) that were on the stack most often ("incl") and innermost
 * ("self"). A diagnosis tool for where the shim's time goes (issue 17
 * point 4), not part of the shim.
 *   gcc -O2 -shared -fPIC -o sampler.so bench/sampler.c -ldl
 *   LD_PRELOAD="libcgshim.so sampler.so" SAMPLER_DEPTH=12 ./workload ...
 * SAMPLER_UNDER=name keeps only the samples with that function on the stack
 * (the percentages are then of those); SAMPLER_TOP=N prints N rows (60).
 * SAMPLER_US=N samples the main thread every N us of wall-clock time
 * (a POSIX timer on CLOCK_MONOTONIC, high resolution) instead of ITIMER_PROF,
 * whose CPU-time accounting some kernels keep at the 4 ms tick (~350 samples
 * a run on the H200 host, 2026-11-28). SAMPLER_RAW=FILE also writes every
 * sample's frames, innermost first, as "module+0xoffset" words, one sample a
 * line, for bench/sampler-raw.py to attribute with the library's symbols.
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <execinfo.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <sys/time.h>
#include <time.h>
#include <unistd.h>

#define MAXS 120000
#define DEPTH 48
static void *samples[MAXS][DEPTH];
static int nsamp, depth = 12;

static void on_prof(int sig)
{
	(void)sig;
	if (nsamp < MAXS) {
		void *pcs[DEPTH + 2];
		int n = backtrace(pcs, depth + 2);
		for (int i = 2; i < n && i - 2 < DEPTH; i++)
			samples[nsamp][i - 2] = pcs[i];
		nsamp++;
	}
}

struct ent {
	const char *name;
	int self, incl;
};

static int by_incl(const void *a, const void *b)
{
	return ((const struct ent *)b)->incl - ((const struct ent *)a)->incl;
}

static const char *name_of(void *pc, char *buf, size_t cap)
{
	Dl_info di;
	if (dladdr(pc, &di) && di.dli_sname)
		return di.dli_sname;
	if (dladdr(pc, &di) && di.dli_fname) {
		const char *b = strrchr(di.dli_fname, '/');
		snprintf(buf, cap, "%s+0x%lx", b ? b + 1 : di.dli_fname, (unsigned long)((char *)pc - (char *)di.dli_fbase));
		return buf;
	}
	snprintf(buf, cap, "%p", pc);
	return buf;
}

static timer_t wall_timer;
static int wall_on;

/* Every sample's frames as module+offset words (SAMPLER_RAW). */
static void write_raw(const char *path)
{
	FILE *f = fopen(path, "w");
	if (!f)
		return;
	for (int s = 0; s < nsamp; s++) {
		for (int k = 0; k < DEPTH && samples[s][k]; k++) {
			Dl_info di;
			const char *b = "?";
			unsigned long off = (unsigned long)samples[s][k];
			if (dladdr(samples[s][k], &di) && di.dli_fname) {
				b = strrchr(di.dli_fname, '/') ? strrchr(di.dli_fname, '/') + 1 : di.dli_fname;
				off = (unsigned long)((char *)samples[s][k] - (char *)di.dli_fbase);
			}
			fprintf(f, "%s%s+0x%lx", k ? " " : "", b, off);
		}
		fputc('\n', f);
	}
	fclose(f);
}

__attribute__((destructor)) static void report(void)
{
	struct itimerval off = {0};
	static struct ent tab[8192];
	int nt = 0;
	const char *under = getenv("SAMPLER_UNDER");
	int kept = 0;
	setitimer(ITIMER_PROF, &off, NULL);
	if (wall_on)
		timer_delete(wall_timer);
	if (getenv("SAMPLER_RAW"))
		write_raw(getenv("SAMPLER_RAW"));
	for (int s = 0; s < nsamp; s++) {
		if (under) {
			int has = 0;
			for (int f = 0; f < DEPTH && samples[s][f] && !has; f++) {
				char buf[256];
				has = !strcmp(name_of(samples[s][f], buf, sizeof buf), under);
			}
			if (!has)
				continue;
		}
		kept++;
		const char *seen[DEPTH];
		int ns = 0;
		for (int f = 0; f < DEPTH && samples[s][f]; f++) {
			char buf[256];
			const char *nm = name_of(samples[s][f], buf, sizeof buf);
			int dup = 0, k;
			for (k = 0; k < nt; k++)
				if (!strcmp(tab[k].name, nm))
					break;
			if (k == nt) {
				if (nt == 8192)
					continue;
				tab[nt].name = strdup(nm);
				nt++;
			}
			for (int j = 0; j < ns; j++)
				dup |= seen[j] == tab[k].name;
			if (!dup) {
				tab[k].incl++;
				seen[ns++] = tab[k].name;
			}
			if (f == 0)
				tab[k].self++;
		}
	}
	qsort(tab, (size_t)nt, sizeof tab[0], by_incl);
	fprintf(stderr, "sampler: %d samples, %d kept%s%s\n%7s %7s  function\n", nsamp, kept, under ? " under " : "",
		under ? under : "", "incl%", "self%");
	int top = getenv("SAMPLER_TOP") ? atoi(getenv("SAMPLER_TOP")) : 60;
	for (int k = 0; k < nt && k < top && kept; k++)
		fprintf(stderr, "%7.1f %7.1f  %s\n", 100.0 * tab[k].incl / kept, 100.0 * tab[k].self / kept, tab[k].name);
}

__attribute__((constructor)) static void start(void)
{
	struct itimerval it = {{0, 100}, {0, 100}};
	const char *d = getenv("SAMPLER_DEPTH");
	if (d && atoi(d) > 0 && atoi(d) <= DEPTH)
		depth = atoi(d);
	const char *us = getenv("SAMPLER_US");
	void *prime[4];
	backtrace(prime, 4); /* loads the unwinder here, not in the handler */
	signal(SIGPROF, on_prof);
	if (us && atoi(us) > 0) {
		struct sigevent ev = {0};
		long n = atol(us);
		struct itimerspec ts = {{n / 1000000, n % 1000000 * 1000}, {n / 1000000, n % 1000000 * 1000}};
		ev.sigev_notify = SIGEV_THREAD_ID;
		ev.sigev_signo = SIGPROF;
		ev._sigev_un._tid = (pid_t)syscall(SYS_gettid);
		if (timer_create(CLOCK_MONOTONIC, &ev, &wall_timer) == 0 && timer_settime(wall_timer, 0, &ts, NULL) == 0) {
			wall_on = 1;
			return;
		}
	}
	setitimer(ITIMER_PROF, &it, NULL);
}
