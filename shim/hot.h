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

/* CG_HOT_DATA marks a variable that the steady loops read on every
 * iteration and that is written only rarely (set-up, a first answer, a
 * configuration or a state change): the flags each hook's entry reads,
 * the real entries and driver calls of a loop's hooks. The linker
 * gathers the section's variables from every object in one place (an
 * orphan section of one name), so the lines a cycle reads for them are
 * two or three instead of one each, scattered through .data and .bss
 * (issue 36: in lockstep every line is a miss, a cache line ~35 ns). A
 * variable written often does not belong here: each write would take
 * the line from the other threads that read it. */
#define CG_HOT_DATA __attribute__((section("cg_hot_data")))

/* CG_COLD marks the out-of-line part of a hot function: the branches a
 * steady loop never takes (errors, violations, first-time set-up, rare
 * modes, records of non-repeats), moved into a function of their own so
 * the hot code that runs is contiguous and short, and its frame small
 * (a record's or a verdict's buffer lives in the cold part's frame). GCC
 * places cold functions in .text.unlikely, away from the hot ones. */
#define CG_COLD __attribute__((noinline, cold))

#endif
