/*
 * tools/report-findings.h -- findings for CI (issue 34): violation records
 * grouped by a stable fingerprint, a baseline of known findings, the
 * --fail-on exit status, and the SARIF and JUnit files (report-sarif.c).
 *
 * A fingerprint is the rule, the call site's function and file (the
 * report's site: the innermost Python frame of the program, else the
 * innermost native frame; never an address or a line), and the object
 * kind (the names of the handle fields the record carries, e.g.
 * "exec,graph"). It survives a rebuild, a re-run and an edit elsewhere in
 * the file. docs/ci.md describes the baseline file.
 */
#ifndef CGSHIM_TOOLS_REPORT_FINDINGS_H
#define CGSHIM_TOOLS_REPORT_FINDINGS_H

#include <stdio.h>

#include <jansson.h>

#include "report.h"

struct rp_ci {
	const char *fail_on;	    /* "error", "warn" or NULL */
	const char *baseline;	    /* known findings: reported as such, not new */
	const char *write_baseline; /* write this run's findings there */
	const char *sarif, *junit;  /* output files */
};

/* 0 when the options are usable, else 1 with the reason on stderr. */
int rp_ci_check(const struct rp_ci *ci);

/*
 * The findings of log into doc ("findings": one object per fingerprint;
 * "baseline": what the baseline matched and its stale entries), the
 * violations table of doc cut to the new findings when a baseline is
 * given, and the files asked for written. Returns 0, 1 (a file could not
 * be read or written: said on stderr) or 3 (--fail-on: a new finding at
 * or above that severity).
 */
int rp_ci_run(const struct rp_log *log, json_t *doc, const struct rp_ci *ci);

/* The text sections: the baseline's verdict, findings by label stack. */
void rp_ci_print(FILE *f, const json_t *doc);

/* Fingerprint fields of one violation record into o (rule, function,
 * file, line, kind, fingerprint). */
void rp_fingerprint(const json_t *rec, json_t *o);

/* report-sarif.c: the findings as SARIF 2.1.0 and as JUnit XML. 0 or -1
 * (said on stderr). */
int rp_sarif_write(const json_t *findings, const char *path);
int rp_junit_write(const json_t *findings, const char *path);

#endif
