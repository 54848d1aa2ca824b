/*
 * shim/hot.h -- CG_HOT marks a function on the paths a steady loop runs
 * every iteration: capture (begin, allocation, launches, free, end,
 * instantiate, destroy), update and launch. GCC places hot functions
 * together (.text.hot, grouped by the linker's default script), so the
 * code a loop runs shares cache lines instead of lying scattered among
 * the cold functions of 600 KB of text. In lockstep, where every turn
 * starts with the caches evicted, each line is a miss (issue 36: the
 * capture loop's instruction misses fell by a quarter on the stand-in's
 * cache simulation). Which functions: those the loops of bench/workload.cu
 * run every iteration (callgrind --dump-instr, docs/measurements.md);
 * a function marked that stops being hot costs nothing but its place.
 */
#ifndef CGSHIM_HOT_H
#define CGSHIM_HOT_H

#define CG_HOT __attribute__((hot))

/* CG_COLD marks the out-of-line part of a hot function: the branches a
 * steady loop never takes (errors, violations, first-time set-up, rare
 * modes, records of non-repeats), moved into a function of their own so
 * the hot code that runs is contiguous and short, and its frame small
 * (a record's or a verdict's buffer lives in the cold part's frame). GCC
 * places cold functions in .text.unlikely, away from the hot ones. */
#define CG_COLD __attribute__((noinline, cold))

#endif
