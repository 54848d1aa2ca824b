/*
 * shim/suppress.h -- CGSHIM_SUPPRESS: a baseline (cgshim report
 * --write-baseline; docs/ci.md) applied at run time. A violation whose
 * fingerprint an entry matches is neither written nor counted.
 */
#ifndef CGSHIM_SUPPRESS_H
#define CGSHIM_SUPPRESS_H

#include <stdint.h>

/* 1 when an entry matches rule (an ID), kind (the record's handle field
 * names, sorted, comma-joined) and the first frame of site (the user's
 * Python frame, else the innermost native one): its function and file. The
 * file is read at the first call (a malformed one: one warning, nothing
 * suppressed). */
int cg_suppress_match(const char *rule, const char *kind, uint32_t site);

/* At exit: one warning naming the entries that matched nothing (stale). */
void cg_suppress_exit(void);

#endif
