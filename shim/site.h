/*
 * shim/site.h -- call sites: native backtrace plus, when the calling thread
 * holds the GIL of a loaded Python interpreter, its innermost Python frames.
 *
 * Sites are interned: a site id (uint32_t, 0 = none) is what model records
 * keep, so a tracked node costs 4 bytes for its site. Symbolisation
 * (dladdr) happens only when a record naming the site is written.
 */
#ifndef CGSHIM_SITE_H
#define CGSHIM_SITE_H

#include <stdint.h>

#include "log.h"

#define CG_BT_MAX 32
#define CG_PY_MAX 768

/* Capture the current site; skip = frames of the shim to drop. Never makes
 * a CUDA call. Safe in any hook; costs a few microseconds. */
uint32_t cg_site_here(int skip);
/* The same for a hook about to open a window the shim must keep short
 * (the begin-capture hook): a frame whose unwind rule is not cached yet
 * (2-20 us each, the first time) is not worked out now; the stack above it
 * is copied (~16 KiB) and the walk finished when the site is first needed
 * (a record that names it, cg_site_settle), under its id. Costs what
 * cg_site_here costs on a known stack. */
uint32_t cg_site_here_deferred(int skip);
/* Finish a deferred site now (the end of the capture it began): its walk
 * needs no driver call, only time. */
void cg_site_settle(uint32_t site);
/* Whether site's walk still waits: its id is not yet the id its stack will
 * have (a site interned meanwhile may own that), so nothing keyed by site
 * (the steady captures) should count it. */
int cg_site_pending(uint32_t site);
/* Sites whose walk waited so far (the summary's sites_deferred). */
long long cg_sites_deferred(void);
/* New sites not interned because the table was full (the summary's
 * sites_dropped): their records carry no site. */
long long cg_sites_dropped(void);
/* First-use initialisation of what cg_site_here needs, without interning a
 * site: the unwinder's walk of this stack (module lookups, .eh_frame_hdr
 * pages), glibc's backtrace (its first call loads libgcc_s), the Python
 * reader's symbol resolution. Called once outside any capture
 * (cg_warm_capture), so the first begin-capture does not pay for it. */
void cg_site_warm(void);
/* Append site as a JSON array (or text list) under key. */
void rec_site(struct cg_rec *r, const char *key, uint32_t site);
/* The same from the dump (dump.c), which waits on no lock another thread
 * may hold forever: the site table's lock is tried every millisecond for at
 * most wait_ms; -1 when it stayed held (nothing written). */
int rec_site_try(struct cg_rec *r, const char *key, uint32_t site, int wait_ms);
/* The site's frames, Python then native, one a line after indent, into
 * out (cap bytes); the same trylock. Returns 0, or -1 (out empty). */
int cg_site_lines_try(uint32_t site, const char *indent, char *out, size_t cap, int wait_ms);
/* First frame as text ("py:serve.py:12:capture" or "libx.so:fn+0x10"). */
void cg_site_first(uint32_t site, char *out, unsigned cap);

#endif
