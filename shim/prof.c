/*
 * shim/prof.c -- the in-place cost profile's buckets (prof.h). One
 * open-addressed table, claimed without a lock (a bucket's key is set
 * once by compare-and-swap; counts are atomic adds), so threads may mark
 * at once; a full table drops marks. Compiled empty without -Dprof.
 */
#include "prof.h"

#ifdef CG_PROF
#define _GNU_SOURCE
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <x86intrin.h>

#define PROF_SLOTS 2048
#define PROF_KEEP 4096 /* the first samples of a step kept for its median */

static struct {
	_Atomic uint64_t key; /* hook << 24 | from << 12 | to, +1; 0: free */
	_Atomic uint64_t n, cycles;
	uint32_t kept[PROF_KEEP];
} prof_tab[PROF_SLOTS];

static __thread uint64_t prof_last;
static __thread unsigned prof_last_label;
static __thread int prof_hid = -1;
static uint64_t prof_t0_tsc, prof_t0_ns;

static uint64_t prof_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

static void prof_add(uint64_t key, uint64_t cyc)
{
	uint64_t h = key * 0x9e3779b97f4a7c15ull;
	for (unsigned i = 0; i < 64; i++) {
		unsigned s = (unsigned)((h >> 40) + i) & (PROF_SLOTS - 1);
		uint64_t k = atomic_load_explicit(&prof_tab[s].key, memory_order_relaxed), none = 0;
		if (k == 0 && atomic_compare_exchange_strong(&prof_tab[s].key, &none, key))
			k = key;
		else if (k == 0)
			k = none;
		if (k == key) {
			uint64_t n = atomic_fetch_add_explicit(&prof_tab[s].n, 1, memory_order_relaxed);
			atomic_fetch_add_explicit(&prof_tab[s].cycles, cyc, memory_order_relaxed);
			if (n < PROF_KEEP)
				prof_tab[s].kept[n] = (uint32_t)cyc;
			return;
		}
	}
}

void cg_prof_mark(unsigned label, int hid)
{
	uint64_t t = __rdtsc();
	if (!prof_t0_tsc) {
		prof_t0_ns = prof_ns();
		prof_t0_tsc = __rdtsc();
	}
	if (label == CG_PROF_ENTRY)
		prof_hid = hid;
	/* a step longer than ~1 ms is the application's time between hooks or
	 * a preemption: not the shim's */
	if (prof_last && label != CG_PROF_ENTRY && t - prof_last < 4000000)
		prof_add(((uint64_t)(prof_hid + 1) << 24 | (uint64_t)prof_last_label << 12 | label) + 1, t - prof_last);
	prof_last_label = label;
	prof_last = __rdtsc();
}

static int prof_cmp(const void *a, const void *b)
{
	uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;
	return x < y ? -1 : x > y;
}

__attribute__((destructor)) static void prof_write(void)
{
	const char *path = getenv("CG_PROF_OUT");
	char buf[512], *o = buf;
	const char *off = getenv("CGSHIM_DISABLE");
	if (!path || !prof_t0_tsc || (off && *off && *off != '0'))
		return; /* a pass-through run's marks are its envelopes' only */
	for (const char *p = path; *p && o < buf + sizeof buf - 24; p++) {
		if (p[0] == '%' && p[1] == 'p') {
			o += snprintf(o, 24, "%d", (int)getpid());
			p++;
		} else
			*o++ = *p;
	}
	*o = 0;
	FILE *f = fopen(buf, "w");
	if (!f)
		return;
	uint64_t ns = prof_ns() - prof_t0_ns, tsc = __rdtsc() - prof_t0_tsc;
	fprintf(f, "tsc_per_ns %.6f\n", (double)tsc / (double)ns);
	for (unsigned s = 0; s < PROF_SLOTS; s++) {
		uint64_t k = prof_tab[s].key;
		if (!k)
			continue;
		k--;
		int hid = (int)(k >> 24) - 1;
		uint64_t n = prof_tab[s].n, m = n < PROF_KEEP ? n : PROF_KEEP;
		qsort(prof_tab[s].kept, m, sizeof(uint32_t), prof_cmp);
		fprintf(f, "%d %u %u %lu %lu %u\n", hid, (unsigned)(k >> 12 & 0xfff), (unsigned)(k & 0xfff),
			(unsigned long)n, (unsigned long)prof_tab[s].cycles, m ? prof_tab[s].kept[m / 2] : 0);
	}
	fclose(f);
}
#endif
