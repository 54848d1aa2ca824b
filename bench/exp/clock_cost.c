/* bench/exp/clock_cost.c -- FOR MEASURING ONLY, on the GPU host: what one
 * clock_gettime(CLOCK_MONOTONIC) and one rdtsc cost, warm (200,000 in a
 * row) and after 8 MB of other reads (2,000 times each; a cold figure
 * includes the measurement's own drain of those reads, which the cold
 * rdtsc shows, so the clock's own cold cost is the difference).
 * docs/measurements.md, twentieth session.
 *   gcc -O2 -o /tmp/clk bench/exp/clock_cost.c && taskset -c 4 /tmp/clk */
#define _GNU_SOURCE
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#include <x86intrin.h>

static uint64_t now_ns(void)
{
	struct timespec t;
	clock_gettime(CLOCK_MONOTONIC, &t);
	return (uint64_t)t.tv_sec * 1000000000ull + (uint64_t)t.tv_nsec;
}

/* 8 MB of a 64 MB buffer read and written in a scattered order: the
 * clock's code and data leave the caches. */
static void evict(char *buf, size_t size, size_t salt)
{
	for (size_t i = 0; i < size / 8; i += 64)
		buf[(i * 7919 + salt) % size]++;
}

int main(void)
{
	enum { WARM = 200000, COLD = 2000 };
	const size_t size = 64u << 20;
	volatile uint64_t sink = 0;
	double cold_clock = 0, cold_tsc = 0, ghz;
	unsigned aux = 0;
	uint64_t t0, t1, c0, c1;
	char *buf = malloc(size);
	struct timespec pause = {0, 100000000};

	if (!buf)
		return 1;
	t0 = now_ns();
	for (int i = 0; i < WARM; i++)
		sink += now_ns();
	t1 = now_ns();
	printf("warm clock_gettime %.1f ns\n", (double)(t1 - t0) / WARM);
	t0 = now_ns();
	for (int i = 0; i < WARM; i++)
		sink += __rdtsc();
	t1 = now_ns();
	printf("warm rdtsc %.1f ns\n", (double)(t1 - t0) / WARM);
	for (size_t i = 0; i < size; i += 64)
		buf[i] = 1;
	for (int k = 0; k < COLD; k++) {
		evict(buf, size, 0);
		c0 = __rdtscp(&aux);
		sink += now_ns();
		c1 = __rdtscp(&aux);
		cold_clock += (double)(c1 - c0);
		evict(buf, size, 13);
		c0 = __rdtscp(&aux);
		sink += __rdtsc();
		c1 = __rdtscp(&aux);
		cold_tsc += (double)(c1 - c0);
	}
	t0 = now_ns();
	c0 = __rdtsc();
	nanosleep(&pause, NULL);
	t1 = now_ns();
	c1 = __rdtsc();
	ghz = (double)(c1 - c0) / (double)(t1 - t0);
	printf("tsc %.3f GHz; cold clock_gettime %.1f ns; cold rdtsc %.1f ns\n", ghz, cold_clock / COLD / ghz,
	       cold_tsc / COLD / ghz);
	free(buf);
	return 0;
}
