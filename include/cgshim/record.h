/*
 * include/cgshim/record.h -- the versioned log-record format shared by the
 * shim (writer) and the tools (readers). The full schema, field by field, is
 * docs/log-format.md; this header holds the names both sides must agree on.
 *
 * One record per line. JSONL: one JSON object per line, always carrying
 *   "v"    CGSHIM_RECORD_VERSION
 *   "ev"   one of the CGSHIM_EV_* names
 *   "seq"  per-process sequence number, from 1
 *   "ts"   CLOCK_MONOTONIC in nanoseconds (comparable across processes)
 *   "pid", "tid"
 * Handles and addresses are strings "0x..." (64-bit values survive every
 * JSON parser that way). Readers must ignore fields they do not know;
 * writers bump CGSHIM_RECORD_VERSION when a field changes meaning.
 */
#ifndef CGSHIM_RECORD_H
#define CGSHIM_RECORD_H

#define CGSHIM_RECORD_VERSION 1
#define CGSHIM_RECORD_VERSION_MIN 1

/* Where a rule's page lives (violation records' "doc": DIR + ID + ".md"),
 * relative to the cgshim source tree. */
#define CGSHIM_RULE_DOC_DIR "docs/rules/"

/* clang-format off */
/* BEGIN generated from records.def by tests/lists_check.py --write */
#define CGSHIM_EV_START "start" /* first record of a process */
#define CGSHIM_EV_CALL "call" /* one intercepted call */
#define CGSHIM_EV_ALLOC "alloc" /* a captured graph allocation, with provenance */
#define CGSHIM_EV_CAPTURE "capture" /* a capture ended: its ledger */
#define CGSHIM_EV_LAUNCHES "launches" /* launch count of an exec */
#define CGSHIM_EV_VIOLATION "violation" /* a rule fired, written before the driver call */
#define CGSHIM_EV_MISMATCH "mismatch" /* prediction vs the driver's real answer */
#define CGSHIM_EV_REWRITE "rewrite" /* an update turned into re-instantiation */
#define CGSHIM_EV_LEAK "leak" /* graph allocation outstanding at exec destroy/exit */
#define CGSHIM_EV_POOL "pool" /* pool usage sample */
#define CGSHIM_EV_GRAPHMEM "graphmem" /* device graph-memory sample */
#define CGSHIM_EV_NODE "node" /* one node of a graph summary (for --dot) */
#define CGSHIM_EV_SUMMARY "summary" /* exit summary */
#define CGSHIM_EV_WARNING "warning" /* the shim's own trouble (degraded, malformed env) */
#define CGSHIM_EV_INVALIDATED "invalidated" /* a live capture found invalidated, and by what */
#define CGSHIM_EV_ABANDONED "abandoned" /* a capture never ended: named at a later refusal or at exit */
#define CGSHIM_EV_BROKEN "broken" /* a failed end of capture linked to the first call that broke it */
#define CGSHIM_EV_CAPMODE "capture_mode" /* a begin-capture's mode rewritten (CGSHIM_CAPTURE_MODE) */
#define CGSHIM_EV_MODULE "module" /* a loaded object named by call sites: path, build-id */
#define CGSHIM_EV_REPEAT "repeat" /* repeats of one violation (rule, call site, object) folded: the total, at exit */
#define CGSHIM_EV_FOLDED "folded" /* violations not written (folded repeats, past CGSHIM_PRINT_LIMIT): the tally at exit */
#define CGSHIM_EV_UPDATE_DIFF "update_diff" /* a node an update changes: kernel and fields */
#define CGSHIM_EV_DUMP "dump" /* where is it stuck: one part of a dump (blocked threads, live captures, streams' last work), on a signal, a stall or at exit */
#define CGSHIM_EV_FATAL "fatal" /* a fatal signal: batches written, then the signal, thread, last calls, live captures */
#define CGSHIM_EV_RECAPTURE "recapture" /* one graph captured again and again at one site: captures, instantiations, launches, time and memory, at exit */
#define CGSHIM_EV_EAGER_TOP "eager_top" /* one kernel and call site among the most launched eagerly, at exit */
/* END generated */
/* clang-format on */

#endif
