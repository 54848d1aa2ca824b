/*
 * bench/baton.h -- lockstep mode of the benchmarks (bench/baton.py lockstep_ring()).
 *
 * On the lent VM the host's speed moves between levels (up to ~2x) within a
 * fraction of a second, so runs taken seconds apart disagree by more than a
 * 10% bar. In lockstep mode the processes of one measurement (bare, under
 * the shim, ...), pinned to one core, pass a baton around a ring of pipes
 * after every iteration: iteration i of each runs right after iteration i of
 * the one before it, and a bar is judged on the per-iteration ratios.
 * BENCH_BATON=RFD,WFD,FIRST in the environment turns the mode on (RFD: read
 * the turn from the previous process, WFD: pass it to the next, FIRST=1: this
 * one starts).
 */
#ifndef CGSHIM_BENCH_BATON_H
#define CGSHIM_BENCH_BATON_H

#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

static int baton_r = -1, baton_w = -1;

/* A partner that is gone (EOF, error) no longer holds this side back. */
static void baton_wait(void)
{
	char c;
	if (baton_r >= 0 && read(baton_r, &c, 1) != 1) {
		close(baton_r);
		baton_r = -1;
	}
}

static void baton_pass(void)
{
	char c = 0;
	if (baton_w >= 0 && write(baton_w, &c, 1) != 1) {
		close(baton_w);
		baton_w = -1;
	}
}

/* Returns 1 in lockstep mode, after waiting for this side's first turn. */
static int baton_init(void)
{
	const char *spec = getenv("BENCH_BATON");
	int first = 0;
	if (!spec || sscanf(spec, "%d,%d,%d", &baton_r, &baton_w, &first) != 3)
		return baton_r = baton_w = -1, 0;
	signal(SIGPIPE, SIG_IGN); /* the partner may be gone at the last pass */
	if (!first)
		baton_wait();
	return 1;
}

/* One iteration done: the partner's turn, then this side's next. */
static void baton_turn(void)
{
	baton_pass();
	baton_wait();
}

#endif
