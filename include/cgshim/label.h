/*
 * include/cgshim/label.h -- label a phase of a program for cgshim: every
 * record the shim writes on this thread between a push and its pop carries
 * the thread's label stack ("labels", innermost last; docs/log-format.md),
 * as NVTX ranges do (nvtxRangePush/Pop, when the shim is the NVTX
 * injection: the launcher sets NVTX_INJECTION64_PATH).
 *
 * The functions are weak references: a program built with this header
 * runs without the shim (the calls then do nothing and return -1). Link
 * nothing; under `cgshim -- prog` or LD_PRELOAD=libcgshim.so they resolve
 * to the shim's.
 *
 *     #include <cgshim/label.h>
 *     cgshim_label_push("decode");   ...   cgshim_label_pop();
 */
#ifndef CGSHIM_LABEL_H
#define CGSHIM_LABEL_H

#ifdef __cplusplus
extern "C" {
#endif

/* Push a copy of label on the calling thread's stack (511 bytes kept: a
 * longer one is cut and ends in U+2026, its records say labels_truncated);
 * returns the new depth, or -1 (no shim, or deeper than 16: the push is
 * counted so that its pop still matches, the label not kept). */
int cgshim_label_push(const char *label) __attribute__((weak));
/* Pop the innermost label; returns the new depth, or -1 (no shim, or the
 * stack was empty). */
int cgshim_label_pop(void) __attribute__((weak));

/* Set the process's label, carried by the records of every thread whose
 * own stack is empty (a loader or worker thread that never pushed), in
 * place of that stack; NULL or "" clears it. A test harness sets it at a
 * test's setup and clears it at its teardown (the pytest plugin does).
 * Returns 0, or -1 (no shim). */
int cgshim_label_process(const char *label) __attribute__((weak));

/* The weak-safe spellings: what a program calls. */
static inline int cgshim_push(const char *label)
{
	return cgshim_label_push ? cgshim_label_push(label) : -1;
}

static inline int cgshim_pop(void)
{
	return cgshim_label_pop ? cgshim_label_pop() : -1;
}

static inline int cgshim_process_label(const char *label)
{
	return cgshim_label_process ? cgshim_label_process(label) : -1;
}

#ifdef __cplusplus
}
#endif

#endif
