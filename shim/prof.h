/*
 * shim/prof.h -- the in-place cost profile (meson -Dprof=true only).
 *
 * What the GPU host's caches do to the shim cannot be simulated well
 * (docs/measurements.md: the stand-in's cache simulation overstates a
 * cut's gain by ~2x on the H200 host), so this build measures it where it
 * happens: CG_PROF_MARK(label) reads the time-stamp counter and adds the
 * cycles since this thread's previous mark to the bucket (hook, previous
 * label, label). The generic marks are a hook's entry (cg_call_begin), the
 * real call's start and end (CG_FWD) and its exit (the call record, or
 * CG_RETURN); a hand-placed mark (label >= CG_PROF_USER) splits a step
 * further. The time a mark itself takes is not counted. With
 * CG_PROF_OUT=<path> the buckets are written at exit (%p: the pid), one
 * line each: hook (its row of hooks.def, from 0; -1: none), from, to,
 * count, total cycles and the median of the first 4096 (cycles), after a
 * line with the counter's rate (tsc_per_ns).
 * Without -Dprof the marks compile to nothing.
 */
#ifndef CGSHIM_PROF_H
#define CGSHIM_PROF_H

enum {
	CG_PROF_ENTRY = 1,
	CG_PROF_FWD0,
	CG_PROF_FWD1,
	CG_PROF_CALL_END,
	CG_PROF_REC_END,
	CG_PROF_RETURN,
	CG_PROF_USER = 16 /* hand-placed: CG_PROF_USER + n, n < 1000 */
};

#ifdef CG_PROF
void cg_prof_mark(unsigned label, int hid);
#define CG_PROF_MARK(label) cg_prof_mark((label), -1)
#define CG_PROF_ENTER(hid) cg_prof_mark(CG_PROF_ENTRY, (hid))
#else
#define CG_PROF_MARK(label) ((void)0)
#define CG_PROF_ENTER(hid) ((void)0)
#endif

#endif
