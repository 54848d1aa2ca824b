/*
 * tools/report.h -- `cgshim report`: read JSONL logs (format v1,
 * include/cgshim/record.h) and render them as text, JSON, DOT or a
 * Chrome/Perfetto trace.
 */
#ifndef CGSHIM_TOOLS_REPORT_H
#define CGSHIM_TOOLS_REPORT_H

#include <stddef.h>
#include <stdio.h>

#include <jansson.h>

#include "cgshim/record.h"
#include "report-gen.h" /* the schema's readers and handler table (shim/gen-records.py report) */

/* One usable record: where its line is, and the fields used to order and
 * select records. The parsed record is not kept (a 200 MB log would take
 * gigabytes as JSON objects): rp_j parses it again when asked. kind is its
 * enum rp_ev, set once by the loader (report-load.c), the one reader of the
 * "ev" name: a view compares kinds (a switch, or a struct rp_on table),
 * never names (test style-ev-names); rp_ev_names[kind] is the name to
 * print. Never RP_EV_UNKNOWN: a kind the schema lacks is not loaded. */
struct rp_rec {
	long long ts, pid, tid, seq;
	long long off; /* byte offset of the line in its file */
	unsigned file, line, len;
	short kind;
};

struct rp_fetch; /* rp_j's state: open files, the last record parsed, symbols */

struct rp_log {
	struct rp_rec *recs; /* sorted by ts, then pid, seq, file order */
	size_t n, cap;
	char **files;
	unsigned nfiles;
	unsigned long malformed, newer, unknown_ev;
	struct rp_fetch *fetch;
};

/* A line's top-level record fields, read without building the line
 * (report-scan.c). 1 when the line is surely one JSON object with integer
 * v, ts, pid and a plain string ev of under 32 bytes; 0 when jansson must
 * decide (any doubt, any error). */
struct rp_scanned {
	long long v, ts, pid, tid, seq;
	int has_tid, has_seq;
	char ev[32];
};
int rp_scan(const char *line, size_t len, struct rp_scanned *out);

/* A log to read (report-input.c): a file, `-` for standard input, gzip
 * either way; an fd that pread works on, or -1 with the reason said. */
int rp_input_open(const char *path);
/* "cgshim report: WHAT N% ..." on stderr when it is a terminal (at most
 * ten a second); done < 0 clears the line. */
void rp_progress(const char *what, long long done, long long total);

/* rp_j's reading (report-prefetch.c): a reader's windows over the files,
 * a record parsed (always an object: an empty one if its bytes changed),
 * and the thread that parses ahead of a pass walking records in order
 * (rp_pre_take: record i, or NULL when the caller must parse it). */
struct rp_reader *rp_reader_new(unsigned nfiles);
void rp_reader_free(struct rp_reader *rd);
json_t *rp_reader_parse(struct rp_reader *rd, const int *fds, const struct rp_rec *r);
struct rp_pre *rp_pre_new(const struct rp_log *log, const int *fds);
json_t *rp_pre_take(struct rp_pre *p, size_t i);
void rp_pre_free(struct rp_pre *p);

/* Record i as JSON, symbolised (rp_symbolise). Borrowed: valid until the
 * next rp_j call; json_incref what must outlive it. Never NULL (an empty
 * object if the file changed under the report). */
json_t *rp_j(const struct rp_log *log, size_t i);

/* Read every file (unreadable ones are reported and skipped). Always
 * returns; problems go to stderr as FILE:LINE: messages. */
void rp_load(struct rp_log *log, char **files, int nfiles);
void rp_free(struct rp_log *log);

/* Field access that tolerates absent or mistyped fields. */
const char *rp_str(const json_t *j, const char *key); /* NULL if absent */
long long rp_int(const json_t *j, const char *key, long long def);
void rp_count(json_t *obj, const char *key, long long by); /* obj[key] += by, for a counter object */
int rp_has_int(const json_t *j, const char *key);
int rp_bool(const json_t *j, const char *key);
const char *rp_site0(const json_t *j, const char *key); /* first frame, or NULL */

/* A "repeat" record j (folded repeats of one violation key): adds its
 * repeats to row (the violation's, NULL when the log lacks it) and to the
 * counts by severity sev; returns them (report-fold.c). */
long long rp_fold_repeat(json_t *row, const json_t *j, json_t *sev);

/* Rows identical but for the fields of vary (NULL-ended) folded into the
 * first, with "count" and "last_<vary[0]>" (report-fold.c). New reference. */
json_t *rp_fold_rows(const json_t *rows, const char *const *vary);
/* The last cell of a folded row: cell ("-" if NULL), then "  xN (to IDKEY
 * LAST)" when it stands for several rows. A static buffer: one a printf. */
const char *rp_fold_note(const json_t *row, const char *cell, const char *idkey);

/* "1.5 MiB"; buf of at least 32 bytes. */
const char *rp_bytes(long long v, char *buf, size_t len);

/* The report document shared by text and --json output. New reference. */
json_t *rp_analyse(const struct rp_log *log);
void rp_print_text(FILE *f, const json_t *doc);
/* The cross-rank view (report-ranks.c): per-rank rows, graph memory per
 * rank and device, divergence across ranks; JSON null when no record
 * carries a rank. New reference. Printed by rp_print_ranks. */
json_t *rp_ranks(const struct rp_log *log);
void rp_print_ranks(FILE *f, const json_t *ranks);
/* report-where.c: per rank the captures, the capture in progress and the
 * last launch, and the first point where the ranks differ (null for fewer
 * than two ranks); printed after the ranks' tables. */
json_t *rp_where(const struct rp_log *log);
void rp_print_where(FILE *f, const json_t *where);

/* "Predictions the driver disagreed with" (report-mismatch.c): one row per
 * mismatch record, the call, its site, the driver's answer and the shim's
 * prediction. New reference; printed by rp_print_mismatches. */
json_t *rp_mismatches(const struct rp_log *log);
void rp_print_mismatches(FILE *f, const json_t *rows);

/* "Captures made again" (report-churn.c, issue 32): one row per recapture
 * record (a capture site's graph captured twice or more), the most wasted
 * time first. New reference; printed by rp_print_recaptures. */
json_t *rp_recaptures(const struct rp_log *log);
void rp_print_recaptures(FILE *f, const json_t *rows);
/* "Coverage" (report-coverage.c, issue 32): {"processes": per exit summary
 * its eager and graphed kernels and share, "top_eager": one row per
 * eager_top record}. New reference; printed by rp_print_coverage. */
json_t *rp_coverage(const struct rp_log *log);
void rp_print_coverage(FILE *f, const json_t *cov);

/* 0 on success, else an exit status (1 usage, 2 nothing to draw). graph:
 * a handle, first, last, or update:N / update:last (both sides of the Nth
 * failing update: a CGS001, or a 910 nothing predicted). */
int rp_dot(const struct rp_log *log, const char *graph, const char *out);
int rp_perfetto(const struct rp_log *log, const char *out);
/* One self-contained HTML page from the analysis doc, the pictures drawn
 * by dot, and OUT's .perfetto.json beside it. 0 or an exit status. */
int rp_html(const struct rp_log *log, const json_t *doc, const char *out);
/* The page's charts (report-html-chart.c): capture groups (folded rows,
 * largest first), graph-memory samples, pools; and the colour of series or
 * pool i. */
void rp_html_capture_chart(FILE *f, const json_t *groups);
void rp_html_graphmem_chart(FILE *f, const json_t *rows);
void rp_html_pool_chart(FILE *f, const json_t *pools);
const char *rp_html_colour(size_t i);
/* 0 if -o FILE names a type --dot can write (by extension), else -1 with
 * the reason on stderr. */
int rp_dot_check_output(const char *out);
/* A kernel's mangled name, demangled (c++filt, when on PATH) and shortened
 * for display; cached; the argument itself when it cannot be shortened. */
const char *rp_kernel_short(const char *mangled);

/* From now on, rp_j gives records whose "MODULE+0xOFF" site frames are
 * symbolised from the files the module records name (libdw). Returns the
 * stale modules (file changed since the run) as a JSON array owned by the
 * log, filled as frames of those modules are met. */
json_t *rp_symbolise(struct rp_log *log);

/* For report-load.c: the symbolisation of one parsed record, and freeing. */
void rp_sym_apply(void *ctx, const struct rp_rec *r, json_t *j);
void rp_sym_free(void *ctx);
void rp_fetch_set_sym(struct rp_log *log, void *sym, json_t *stale); /* report-load.c */

/* Text for XML and HTML (report-sarif.c): the five entities escaped,
 * control characters other than newline and tab written as spaces. */
void rp_xml_esc(FILE *f, const char *s);

int report_main(int argc, char **argv);

#endif
