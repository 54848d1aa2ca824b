/*
 * shim/summary.h -- the exit summary. It sits above the model and the
 * rules: it asks both (and the doors) for what they counted; nothing but
 * the exit path calls into it.
 */
#ifndef CGSHIM_SUMMARY_H
#define CGSHIM_SUMMARY_H

/* At exit (CGSHIM_SUMMARY on, after a CUDA call): the model's own exit
 * records (live executables' launch counts and leaks, graph memory per
 * device, pools, captures still open), then one "summary" record. */
void cg_summary_exit(void);

#endif
