/*
 * tools/report-perfetto.c -- `cgshim report --perfetto OUT.json`: the
 * Chrome trace-event format that ui.perfetto.dev and chrome://tracing load.
 * One track per (pid, tid); times in microseconds from the first event.
 * A call record is written when the call returns, so a call spans
 * [ts - dur_ns, ts]; a capture record likewise ends its capture.
 */
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "report.h"

static int pf_prefix(const char *s, const char *p)
{
	return s && !strncmp(s, p, strlen(p));
}

/* Start of a record's span. ts and dur_ns come from the file and may be
 * anything an int64 holds: the difference saturates instead of overflowing. */
static long long pf_start(const struct rp_log *log, size_t i)
{
	const struct rp_rec *r = &log->recs[i];
	long long dur, s;
	if (r->kind != RP_EV_CALL && r->kind != RP_EV_CAPTURE)
		return r->ts;
	dur = rp_int(rp_j(log, i), "dur_ns", 0);
	if (dur < 0)
		dur = 0;
	return __builtin_sub_overflow(r->ts, dur, &s) ? LLONG_MIN : s;
}

/* a - b in microseconds, for any two int64 stamps (no overflow: in double). */
static double pf_us(long long a, long long b)
{
	return ((double)a - (double)b) / 1e3;
}

/* The record's own fields, for an event's args. */
static json_t *pf_args(const json_t *j)
{
	json_t *a = json_object(), *v;
	const char *k;

	json_object_foreach((json_t *)j, k, v)
	{
		if (strcmp(k, "v") && strcmp(k, "ts") && strcmp(k, "pid") && strcmp(k, "tid"))
			json_object_set(a, k, v);
	}
	return a;
}

struct pf_out {
	FILE *f;
	size_t n;
	int err;
};

static json_t *pf_event(const char *ph, const char *name, const char *cat, double ts_us, long long pid, long long tid)
{
	json_t *e = json_object();
	json_object_set_new(e, "name", json_string(name));
	json_object_set_new(e, "ph", json_string(ph));
	json_object_set_new(e, "cat", json_string(cat));
	json_object_set_new(e, "ts", json_real(ts_us));
	json_object_set_new(e, "pid", json_integer(pid));
	json_object_set_new(e, "tid", json_integer(tid));
	return e;
}

/* One event written out (the trace is streamed: no event is kept). */
static void pf_emit(struct pf_out *o, json_t *e)
{
	if (o->n++)
		fputs(",\n", o->f);
	if (json_dumpf(e, o->f, JSON_COMPACT) < 0)
		o->err = 1;
	json_decref(e);
}

static void pf_meta(struct pf_out *evs, json_t *seen, const char *what, long long pid, long long tid, const char *label)
{
	char key[64];
	json_t *e;

	snprintf(key, sizeof key, "%s/%lld/%lld", what, pid, tid);
	if (json_object_get(seen, key))
		return;
	json_object_set_new(seen, key, json_true());
	e = pf_event("M", what, "__metadata", 0, pid, tid);
	json_object_set_new(e, "args", json_pack("{s:s}", "name", label));
	pf_emit(evs, e);
}

int rp_perfetto(const struct rp_log *log, const char *out)
{
	json_t *seen = json_object(), *exe = json_object();
	struct pf_out ev = {fopen(out, "w"), 0, 0}, *evs = &ev;
	long long t0 = 0;
	int have_t0 = 0, rc = 0;
	char label[512], name[256];
	size_t i;

	if (!ev.f) {
		fprintf(stderr, "cgshim report: cannot write %s: %s\n", out, strerror(errno));
		json_decref(seen);
		json_decref(exe);
		return 1;
	}
	fputs("{\"traceEvents\":[\n", ev.f);
	for (i = 0; i < log->n; i++) {
		long long s = pf_start(log, i);
		if (!have_t0 || s < t0)
			t0 = s, have_t0 = 1;
		if (log->recs[i].kind == RP_EV_START && rp_str(rp_j(log, i), "exe")) {
			snprintf(name, sizeof name, "%lld", log->recs[i].pid);
			json_object_set_new(exe, name, json_string(rp_str(rp_j(log, i), "exe")));
		}
	}

	for (i = 0; i < log->n; i++) {
		const struct rp_rec *r = &log->recs[i];
		const json_t *j = rp_j(log, i);
		double ts = pf_us(r->ts, t0);
		long long tid = r->tid;
		const char *pe;
		json_t *e;
		size_t n0;

		snprintf(name, sizeof name, "%lld", r->pid);
		pe = rp_str(exe, name);
		if (pe) {
			const char *base = strrchr(pe, '/');
			snprintf(label, sizeof label, "%s (pid %lld)", base ? base + 1 : pe, r->pid);
		} else {
			snprintf(label, sizeof label, "pid %lld", r->pid);
		}
		pf_meta(evs, seen, "process_name", r->pid, 0, label);
		n0 = ev.n;

		switch (r->kind) {
		case RP_EV_CALL: {
			const char *api = rp_str(j, "api");
			int launch = pf_prefix(api, "cuGraphLaunch") || pf_prefix(api, "cudaGraphLaunch");
			if (rp_has_int(j, "dur_ns") || launch) {
				e = pf_event("X", api ? api : "call", launch ? "launch" : "call",
					     pf_us(pf_start(log, i), t0), r->pid, tid);
				json_object_set_new(e, "dur", json_real((double)rp_int(j, "dur_ns", 0) / 1e3));
				json_object_set_new(e, "args", pf_args(j));
				pf_emit(evs, e);
			}
			if (rp_int(j, "rc", 0) != 0) {
				snprintf(label, sizeof label, "%s failed: %s", api ? api : "call",
					 rp_str(j, "err") ? rp_str(j, "err") : "error");
				e = pf_event("i", label, "failure", ts, r->pid, tid);
				json_object_set_new(e, "s", json_string("t"));
				json_object_set_new(e, "args", pf_args(j));
				pf_emit(evs, e);
			}
			break;
		}
		case RP_EV_CAPTURE:
			tid = rp_int(j, "begin_tid", r->tid);
			/* capture ids are integers in the log */
			snprintf(label, sizeof label, "capture %lld%s", rp_int(j, "capture", 0),
				 rp_int(j, "rc", 0) ? " (invalidated)" : "");
			e = pf_event("X", label, "capture", pf_us(pf_start(log, i), t0), r->pid, tid);
			json_object_set_new(e, "dur", json_real((double)rp_int(j, "dur_ns", 0) / 1e3));
			json_object_set_new(e, "args", pf_args(j));
			pf_emit(evs, e);
			break;
		case RP_EV_VIOLATION:
		case RP_EV_MISMATCH:
		case RP_EV_LEAK:
		case RP_EV_REWRITE:
		case RP_EV_WARNING:
		case RP_EV_INVALIDATED:
		case RP_EV_ABANDONED:
			if (r->kind == RP_EV_VIOLATION)
				snprintf(label, sizeof label, "%s %s", rp_str(j, "rule") ? rp_str(j, "rule") : "?",
					 rp_str(j, "name") ? rp_str(j, "name") : "violation");
			else
				snprintf(label, sizeof label, "%s", rp_ev_names[r->kind]);
			e = pf_event("i", label, rp_ev_names[r->kind], ts, r->pid, tid);
			json_object_set_new(e, "s", json_string("t"));
			json_object_set_new(e, "args", pf_args(j));
			pf_emit(evs, e);
			break;
		case RP_EV_GRAPHMEM:
			snprintf(label, sizeof label, "graph memory dev %lld", rp_int(j, "dev", 0));
			e = pf_event("C", label, "graphmem", ts, r->pid, 0);
			json_object_set_new(e, "args",
					    json_pack("{s:I,s:I}", "used", (json_int_t)rp_int(j, "used", 0), "reserved",
						      (json_int_t)rp_int(j, "reserved", 0)));
			pf_emit(evs, e);
			break;
		}
		if (ev.n != n0) { /* this record made an event */
			snprintf(label, sizeof label, "tid %lld", tid);
			pf_meta(evs, seen, "thread_name", r->pid, tid, label);
		}
	}

	fputs("\n],\"displayTimeUnit\":\"ns\"}\n", ev.f);
	if (ferror(ev.f) | (fclose(ev.f) != 0) || ev.err) {
		fprintf(stderr, "cgshim report: cannot write %s: %s\n", out, strerror(errno));
		rc = 1;
	}
	json_decref(seen);
	json_decref(exe);
	return rc;
}
