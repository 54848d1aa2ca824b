/*
 * tools/report.c -- `cgshim report`: the text rendering of the analysis
 * document (report-analyse.c: summary, violations, memory tables, failing
 * calls). --json prints the document itself, so text and JSON carry the
 * same content.
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "report.h"

static long long rp_geti(const json_t *o, const char *k)
{
	return rp_int(o, k, 0);
}

/* ---- text rendering ---- */

static const char *rp_cell(const json_t *o, const char *k, char *buf, size_t len)
{
	json_t *v = json_object_get(o, k);
	if (json_is_string(v))
		return json_string_value(v);
	if (json_is_integer(v)) {
		snprintf(buf, len, "%" JSON_INTEGER_FORMAT, json_integer_value(v));
		return buf;
	}
	if (json_is_boolean(v))
		return json_is_true(v) ? "yes" : "no";
	return "-";
}

static const char *rp_bcell(const json_t *o, const char *k, char *buf, size_t len)
{
	json_t *v = json_object_get(o, k);
	if (!json_is_integer(v))
		return "-";
	return rp_bytes((long long)json_integer_value(v), buf, len);
}

/* Each use gets its own buffer (a compound literal lives until the end of
 * the enclosing block), so several cells can go into one printf. */
#define RP_CELL(o, k) rp_cell((o), (k), (char[48]){0}, 48)
#define RP_BCELL(o, k) rp_bcell((o), (k), (char[48]){0}, 48)

static void rp_print_value(FILE *f, const char *k, const json_t *v)
{
	size_t idx;
	json_t *e;

	if (json_is_array(v)) {
		fprintf(f, "    %s:\n", k);
		json_array_foreach(v, idx, e)
		{
			if (json_is_string(e))
				fprintf(f, "      #%zu %s\n", idx, json_string_value(e));
		}
		return;
	}
	fprintf(f, "    %s: ", k);
	if (json_is_real(v))
		fprintf(f, "%.3f", json_real_value(v));
	else if (json_is_string(v))
		fputs(json_string_value(v), f);
	else {
		char *s = json_dumps(v, JSON_ENCODE_ANY | JSON_COMPACT);
		fputs(s ? s : "?", f);
		free(s);
	}
	fputc('\n', f);
}

/* The captures past the table's rows (report-analyse.c): per process,
 * site and batch size, the most first. */
static void rp_print_captures_rest(FILE *f, const json_t *doc)
{
	const json_t *a = json_object_get(doc, "captures_rest"), *row;
	long long other = rp_geti(doc, "captures_rest_other"), n = 0;
	size_t i;

	json_array_foreach(a, i, row) n += rp_geti(row, "count");
	if (!n && !other)
		return;
	fprintf(f, "  ... and %lld more capture(s) of other figures, past the table's rows, by site and batch size:\n",
		n + other);
	fprintf(f, "  %-7s %8s %10s %11s %-19s  %s\n", "pid", "captures", "alloc", "invalidated", "captures", "site");
	json_array_foreach(a, i, row)
	    fprintf(f, "  %-7s %8lld %10s %11lld %9s-%-9s  %s\n", RP_CELL(row, "pid"), rp_geti(row, "count"),
		    RP_BCELL(row, "alloc_bytes"), rp_geti(row, "invalidated"), RP_CELL(row, "first_capture"),
		    RP_CELL(row, "last_capture"), RP_CELL(row, "site"));
	if (other)
		fprintf(f, "  %-7s %8lld  (of yet other sites and batch sizes)\n", "other", other);
}

void rp_print_text(FILE *f, const json_t *doc)
{
	const json_t *sum = json_object_get(doc, "summary"), *shim = json_object_get(doc, "shim_summary");
	json_t *a, *row, *v;
	char b1[32];
	const char *k;
	size_t i;

	fprintf(f, "== cgshim report: %lld records from", rp_geti(sum, "records"));
	json_array_foreach(json_object_get(doc, "files"), i, v) fprintf(f, " %s", json_string_value(v));
	fputs("\n\n== Summary\n", f);
	fprintf(f, "  processes    %lld\n", rp_geti(sum, "processes"));
	fprintf(f, "  captures     %lld (%lld ok, %lld invalidated)\n", rp_geti(sum, "captures"),
		rp_geti(sum, "captures_ok"), rp_geti(sum, "captures_invalidated"));
	if (rp_geti(sum, "invalidations") || rp_geti(sum, "captures_abandoned"))
		fprintf(f, "  broken       %lld invalidation(s) seen, %lld capture(s) never ended\n",
			rp_geti(sum, "invalidations"), rp_geti(sum, "captures_abandoned"));
	fprintf(f, "  graphs       %lld\n", rp_geti(sum, "graphs"));
	fprintf(f, "  executables  %lld\n", rp_geti(sum, "execs"));
	fprintf(f, "  launches     %lld%s\n", rp_geti(sum, "launches"),
		!strcmp(rp_str(sum, "launches_from"), "trace")	? " (from trace-level call records)"
		: !strcmp(rp_str(sum, "launches_from"), "none") ? " (no launch records in the log)"
								: "");
	fprintf(f, "  updates      %lld (%lld ok, %lld failed)\n", rp_geti(sum, "updates"), rp_geti(sum, "updates_ok"),
		rp_geti(sum, "updates_failed"));
	fprintf(f, "  failures     %lld", rp_geti(sum, "failures"));
	i = 0;
	json_object_foreach(json_object_get(sum, "failures_by_error"), k, v)
	    fprintf(f, "%s%s x%" JSON_INTEGER_FORMAT, i++ ? ", " : " (", k, json_integer_value(v));
	fputs(i ? ")\n" : "\n", f);
	fprintf(f, "  rewrites     %lld%s\n", rp_geti(sum, "rewrites"),
		rp_geti(sum, "rewrites") ? " (see Rewrites)" : "");
	fprintf(f, "  leaks        %lld (%s)\n", rp_geti(sum, "leaks"),
		rp_bytes(rp_geti(sum, "leak_bytes"), b1, sizeof b1));
	fprintf(f, "  violations   %lld", rp_geti(sum, "violations"));
	i = 0;
	json_object_foreach(json_object_get(sum, "violations_by_severity"), k, v)
	    fprintf(f, "%s%" JSON_INTEGER_FORMAT " %s", i++ ? ", " : " (", json_integer_value(v), k);
	fputs(i ? ")\n" : "\n", f);
	if (rp_geti(sum, "records_condensed"))
		fprintf(f,
			"  condensed    %lld lifecycle record(s) of steady capture cycles, each repeating the one "
			"before (written at CGSHIM_LOG=debug)\n",
			rp_geti(sum, "records_condensed"));
	if (rp_geti(sum, "mismatches"))
		fprintf(f, "  mismatches   %lld (the shim's prediction disagreed with the driver)\n",
			rp_geti(sum, "mismatches"));
	if (rp_geti(sum, "shim_warnings"))
		fprintf(f, "  shim warnings %lld\n", rp_geti(sum, "shim_warnings"));
	json_array_foreach(json_object_get(doc, "stale_modules"), i, v)
	    fprintf(f,
		    "  STALE BINARY %s: changed since the run (build-id %s logged, %s on disk); "
		    "its frames are offsets\n",
		    rp_str(v, "path"), rp_str(v, "logged"), rp_str(v, "on_disk"));
	if (rp_geti(sum, "counts_from_summary"))
		fprintf(f,
			"  (graphs, executables, launches, updates, captures, rewrites and violations "
			"of %lld process%s are its shim's exit summary)\n",
			rp_geti(sum, "counts_from_summary"), rp_geti(sum, "counts_from_summary") == 1 ? "" : "es");
	if (json_is_object(shim)) {
		fputs("  shim exit summary:", f);
		json_object_foreach((json_t *)shim, k, v)
		    fprintf(f, " %s=%" JSON_INTEGER_FORMAT, k, json_integer_value(v));
		fputc('\n', f);
	}

	a = json_object_get(doc, "processes");
	if (json_array_size(a)) {
		fputs("\n== Processes\n", f);
		fprintf(f, "  %-8s %-8s %-6s %-8s %s\n", "pid", "ppid", "rank", "records", "exe");
		json_array_foreach(a, i, row)
		    fprintf(f, "  %-8s %-8s %-6s %-8s %s\n", RP_CELL(row, "pid"), RP_CELL(row, "ppid"),
			    RP_CELL(row, "rank"), RP_CELL(row, "records"), RP_CELL(row, "exe"));
	}
	rp_print_ranks(f, json_object_get(doc, "ranks"));
	rp_print_mismatches(f, json_object_get(doc, "mispredictions"));

	a = json_object_get(doc, "violations");
	if (json_array_size(a)) {
		fputs("\n== Violations (by rule and call site)\n", f);
		json_array_foreach(a, i, row)
		{
			json_t *first = json_object_get(row, "first");
			fprintf(f, "\n  %s %s [%s] x%lld at %s  (%s)\n", RP_CELL(row, "rule"), RP_CELL(row, "name"),
				RP_CELL(row, "severity"), rp_geti(row, "count"), RP_CELL(row, "site"),
				RP_CELL(row, "doc"));
			if (rp_str(first, "msg"))
				fprintf(f, "    %s\n", rp_str(first, "msg"));
			json_object_foreach(first, k, v)
			{
				if (strcmp(k, "msg") && strcmp(k, "rule") && strcmp(k, "name") &&
				    strcmp(k, "severity") && strcmp(k, "doc") && !json_is_array(v))
					rp_print_value(f, k, v);
			}
			json_object_foreach(first, k, v) if (json_is_array(v)) rp_print_value(f, k, v);
		}
	}

	static const char *const cap_vary[] = {"capture", "graph", NULL};
	static const char *const brk_vary[] = {"capture", "t_ms", "age_ns", NULL};
	static const char *const mem_vary[] = {"t_ms", "exec", "graph", NULL};
	static const char *const leak_vary[] = {"dptr", "exec", "graph", NULL};
	static const char *const rw_vary[] = {"t_ms", "exec", "graph", "dur_ns", NULL};
	json_t *folded;

	/* identical rows but for their ids folded, with a count (rp_fold_rows) */
	a = folded = rp_fold_rows(json_object_get(doc, "captures"), cap_vary);
	if (json_array_size(a)) {
		const json_t *t = json_object_get(doc, "capture_totals");
		fputs("\n== Memory per capture (one row per captured graph, e.g. per batch size)\n", f);
		fprintf(f, "  %-7s %-8s %-8s %-14s %-12s %5s %10s %10s %10s %10s %10s %10s %10s %12s  %s\n", "pid",
			"capture", "rc", "stream", "mode", "anode", "alloc", "malloc", "free-before", "free-after",
			"delta", "unattrib", "inst-delta", "graph", "site");
		json_array_foreach(a, i, row)
		    fprintf(f, "  %-7s %-8s %-8s %-14s %-12s %5s %10s %10s %10s %10s %10s %10s %10s %12s  %s\n",
			    RP_CELL(row, "pid"), RP_CELL(row, "capture"), rp_geti(row, "rc") ? "INVALID" : "ok",
			    RP_CELL(row, "stream"), RP_CELL(row, "mode"), RP_CELL(row, "alloc_nodes"),
			    RP_BCELL(row, "alloc_bytes"), RP_BCELL(row, "malloc_bytes"), RP_BCELL(row, "free_before"),
			    RP_BCELL(row, "free_after"), RP_BCELL(row, "delta"), RP_BCELL(row, "unattributed"),
			    RP_BCELL(row, "instantiate_delta"), RP_CELL(row, "graph"),
			    rp_fold_note(row, rp_str(row, "site"), "capture"));
		fprintf(f, "  %-7s %-8s %-8s %-14s %-12s %5lld %10s %10s %10s %10s %10s %10s %10s\n", "total", "", "",
			"", "", rp_geti(t, "alloc_nodes"), RP_BCELL(t, "alloc_bytes"), RP_BCELL(t, "malloc_bytes"), "",
			"", RP_BCELL(t, "delta"), RP_BCELL(t, "unattributed"), RP_BCELL(t, "instantiate_delta"));
	}
	rp_print_captures_rest(f, doc);

	rp_print_recaptures(f, json_object_get(doc, "recaptures"));
	rp_print_coverage(f, json_object_get(doc, "coverage"));

	json_decref(folded);
	a = folded = rp_fold_rows(json_object_get(doc, "broken_captures"), brk_vary);
	if (json_array_size(a)) {
		fputs("\n== Broken captures (invalidated; abandoned = never ended)\n", f);
		fprintf(f, "  %-11s %-7s %-8s %-9s %-7s %-12s %-22s %-8s %s\n", "what", "pid", "capture", "begin-tid",
			"mode", "how", "call", "call-tid", "call site / begin site");
		json_array_foreach(a, i, row)
		{
			const char *how = rp_str(row, "found_by") ? rp_str(row, "found_by") : rp_str(row, "reason");
			fprintf(f, "  %-11s %-7s %-8s %-9s %-7s %-12s %-22s %-8s %s\n", RP_CELL(row, "what"),
				RP_CELL(row, "pid"), RP_CELL(row, "capture"), RP_CELL(row, "begin_tid"),
				RP_CELL(row, "mode"), how ? how : "-", RP_CELL(row, "api"), RP_CELL(row, "call_tid"),
				RP_CELL(row, "site"));
			fprintf(f, "  %-11s %-7s %-8s %-9s %-7s %-12s %-22s %-8s %s\n", "", "", "", "", "", "", "", "",
				rp_fold_note(row, rp_str(row, "begin_site"), "capture"));
		}
	}

	a = json_object_get(doc, "capture_chains");
	if (json_array_size(a)) {
		fputs("\n== Who broke the capture (each failed end, linked to the first call that broke it)\n", f);
		json_array_foreach(a, i, row)
		{
			const char *bt = rp_str(row, "begin_thread"), *ct = rp_str(row, "by_thread");
			fprintf(f, "  capture %s (pid %s, %s mode, stream %s) ended with %s %s\n",
				RP_CELL(row, "capture"), RP_CELL(row, "pid"), RP_CELL(row, "mode"),
				RP_CELL(row, "stream"), RP_CELL(row, "rc"), RP_CELL(row, "err"));
			fprintf(f, "    begun    on thread %s%s%s%s at %s\n", RP_CELL(row, "begin_tid"),
				bt && *bt ? " \"" : "", bt && *bt ? bt : "", bt && *bt ? "\"" : "",
				rp_str(row, "begin_site") ? rp_str(row, "begin_site") : "-");
			if (rp_str(row, "by_api"))
				fprintf(f, "    broken   by %s (%s, rc %s) on thread %s%s%s%s at %s\n",
					rp_str(row, "by_api"),
					rp_str(row, "by_rule") ? rp_str(row, "by_rule") : "not predicted",
					RP_CELL(row, "by_rc"), RP_CELL(row, "by_tid"), ct && *ct ? " \"" : "",
					ct && *ct ? ct : "", ct && *ct ? "\"" : "",
					rp_str(row, "by_site") ? rp_str(row, "by_site") : "-");
			else
				fputs("    broken   by no call the shim saw (unhooked call or lazy module load)\n", f);
		}
	}

	a = json_object_get(doc, "pools");
	if (json_array_size(a)) {
		fputs("\n== Memory per pool\n", f);
		fprintf(f, "  %-7s %-16s %-8s %-4s %7s %10s %10s %10s  %s\n", "pid", "pool", "kind", "ipc", "allocs",
			"bytes", "used-high", "resv-high", "site");
		json_array_foreach(a, i, row) fprintf(
		    f, "  %-7s %-16s %-8s %-4s %7s %10s %10s %10s  %s\n", RP_CELL(row, "pid"), RP_CELL(row, "pool"),
		    json_is_true(json_object_get(row, "default")) ? "default" : "explicit",
		    json_is_true(json_object_get(row, "ipc")) ? "yes" : "no", RP_CELL(row, "allocs"),
		    RP_BCELL(row, "alloc_bytes"), RP_BCELL(row, "used_high"), RP_BCELL(row, "reserved_high"),
		    RP_CELL(row, "site"));
	}

	json_decref(folded);
	a = folded = rp_fold_rows(json_object_get(doc, "graphmem"), mem_vary);
	if (json_array_size(a)) {
		fputs("\n== Graph memory over time (device graph-memory samples)\n", f);
		fprintf(f, "  %10s %-7s %-3s %-13s %-14s %-14s %10s %10s %10s %10s\n", "t (ms)", "pid", "dev", "when",
			"exec", "graph", "used", "used-high", "reserved", "resv-high");
		json_array_foreach(a, i, row) fprintf(
		    f, "  %10.3f %-7s %-3s %-13s %-14s %-14s %10s %10s %10s %10s\n",
		    json_real_value(json_object_get(row, "t_ms")), RP_CELL(row, "pid"), RP_CELL(row, "dev"),
		    RP_CELL(row, "when"), rp_str(row, "exec") && *rp_str(row, "exec") ? rp_str(row, "exec") : "-",
		    RP_CELL(row, "graph"), RP_BCELL(row, "used"), RP_BCELL(row, "used_high"), RP_BCELL(row, "reserved"),
		    RP_BCELL(row, "reserved_high"));
		json_array_foreach(a, i, row) if (rp_geti(row, "count") > 1)
		    fprintf(f, "  (the row at %.3f ms: x%lld, the same figures until %.3f ms)\n",
			    json_real_value(json_object_get(row, "t_ms")), rp_geti(row, "count"),
			    json_real_value(json_object_get(row, "last_t_ms")));
	}

	json_decref(folded);
	a = folded = rp_fold_rows(json_object_get(doc, "leaks"), leak_vary);
	if (json_array_size(a)) {
		fputs("\n== Graph allocations outstanding (leaks)\n", f);
		fprintf(f, "  %-7s %-16s %10s %-16s %-16s %-13s %s\n", "pid", "dptr", "size", "pool", "exec", "when",
			"site");
		json_array_foreach(a, i, row)
		    fprintf(f, "  %-7s %-16s %10s %-16s %-16s %-13s %s\n", RP_CELL(row, "pid"), RP_CELL(row, "dptr"),
			    RP_BCELL(row, "size"), RP_CELL(row, "pool"), RP_CELL(row, "exec"), RP_CELL(row, "when"),
			    rp_fold_note(row, rp_str(row, "site"), "dptr"));
	}

	json_decref(folded);
	a = folded = rp_fold_rows(json_object_get(doc, "rewrites"), rw_vary);
	if (json_array_size(a)) {
		fputs("\n== Rewrites (failing updates turned into re-instantiation, "
		      "CGSHIM_ON_UPDATE_FAILURE=reinstantiate)\n",
		      f);
		fprintf(f, "  %10s %-7s %-16s %-16s %-10s %-6s %9s  %s\n", "t (ms)", "pid", "exec", "graph", "reason",
			"reused", "dur (us)", "why");
		json_array_foreach(a, i, row)
		{
			char dur[32] = "-";
			if (rp_has_int(row, "dur_ns"))
				snprintf(dur, sizeof dur, "%.1f", (double)rp_geti(row, "dur_ns") / 1e3);
			fprintf(f, "  %10.3f %-7s %-16s %-16s %-10s %-6s %9s  %s\n",
				json_real_value(json_object_get(row, "t_ms")), RP_CELL(row, "pid"),
				RP_CELL(row, "exec"), RP_CELL(row, "graph"), RP_CELL(row, "reason"),
				RP_CELL(row, "reused"), dur, rp_fold_note(row, rp_str(row, "why"), "exec"));
		}
	}
	json_decref(folded);

	a = json_object_get(doc, "failing_calls");
	if (json_array_size(a)) {
		fputs("\n== Failing calls\n", f);
		fprintf(f, "  %-32s %-44s %6s  %s\n", "api", "error", "count", "first site");
		json_array_foreach(a, i, row) fprintf(f, "  %-32s %-44s %6lld  %s\n", RP_CELL(row, "api"),
						      RP_CELL(row, "err"), rp_geti(row, "count"), RP_CELL(row, "site"));
	}
}
