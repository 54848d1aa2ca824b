/*
 * shim/pyframes.h -- the calling thread's Python frames, when it holds the
 * GIL of a loaded CPython (3.12's frame layout read directly after one
 * checked walk; other versions through PyEval_GetFrame and friends).
 */
#ifndef CGSHIM_PYFRAMES_H
#define CGSHIM_PYFRAMES_H

#include <stddef.h>

/* Fill out (cap bytes, NUL-terminated) with "py:file:line:func;..." for at
 * most max frames, innermost first; "" when the thread holds no GIL, no
 * interpreter is loaded, or its API could not be resolved (looked up again
 * now and then: cg_pyframes_none says when). Never blocks: a thread that finds the resolver's lock busy
 * gets no frames this time. Makes no CUDA call. */
void cg_pyframes(char *out, size_t cap, int max);
/* Whether a site's Python frames are none without looking (max <= 0, or
 * no interpreter found yet and not this call's turn to look again: every
 * 64th such call looks); cg_pyframes is called only after it said 0, once
 * a site. No lock, no lookup. */
int cg_pyframes_none(int max);
/* Whether a Python interpreter in this process is finalizing: its module
 * globals (tensors, graphs) then go in no particular order, and a tensor
 * freed before the graph that used it is no bug (the graph is never
 * replayed: the ledger leaves the CGS018 warning out). No lock of the
 * shim; 0 without an interpreter. */
int cg_pyframes_finalizing(void);

#endif
