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

/* One usable record. j is owned by the log; the other fields are cached
 * from it (ev points into j). */
struct rp_rec {
	json_t *j;
	const char *ev;
	long long ts, pid, tid, seq;
	unsigned file, line;
};

struct rp_log {
	struct rp_rec *recs; /* sorted by ts, then pid, seq, file order */
	size_t n, cap;
	char **files;
	unsigned nfiles;
	unsigned long malformed, newer, unknown_ev;
};

/* Read every file (unreadable ones are reported and skipped). Always
 * returns; problems go to stderr as FILE:LINE: messages. */
void rp_load(struct rp_log *log, char **files, int nfiles);
void rp_free(struct rp_log *log);

/* Field access that tolerates absent or mistyped fields. */
const char *rp_str(const json_t *j, const char *key); /* NULL if absent */
long long rp_int(const json_t *j, const char *key, long long def);
int rp_has_int(const json_t *j, const char *key);
int rp_bool(const json_t *j, const char *key);
const char *rp_site0(const json_t *j, const char *key); /* first frame, or NULL */

/* "1.5 MiB"; buf of at least 32 bytes. */
const char *rp_bytes(long long v, char *buf, size_t len);

/* The report document shared by text and --json output. New reference. */
json_t *rp_analyse(const struct rp_log *log);
void rp_print_text(FILE *f, const json_t *doc);

/* 0 on success, else an exit status (1 usage, 2 nothing to draw). graph:
 * a handle, first, last, or update:N / update:last (both sides of the Nth
 * failing update, CGS001). */
int rp_dot(const struct rp_log *log, const char *graph, const char *out);
int rp_perfetto(const struct rp_log *log, const char *out);
/* One self-contained HTML page from the analysis doc, the pictures drawn
 * by dot, and OUT's .perfetto.json beside it. 0 or an exit status. */
int rp_html(const struct rp_log *log, const json_t *doc, const char *out);
/* 0 if -o FILE names a type --dot can write (by extension), else -1 with
 * the reason on stderr. */
int rp_dot_check_output(const char *out);

/* Symbolise "MODULE+0xOFF" site frames in place from the files the module
 * records name (libdw). Returns the stale modules (file changed since the
 * run) as a new JSON array. */
json_t *rp_symbolise(struct rp_log *log);

int report_main(int argc, char **argv);

#endif
