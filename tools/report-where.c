/*
 * tools/report-where.c -- "where is each rank?" (issue 33): over the logs
 * (and dump records) of several ranks, per rank the captures it made in
 * order, the capture in progress, the last graph launched; then the first
 * point where the ranks differ:
 *   skipped     one rank lacks a capture the other made at that index
 *               (their sequences line up again one index later): the
 *               capture size one rank skipped;
 *   differ      the same capture index holds different graphs;
 *   behind      one rank made fewer captures than another (it is still
 *               before, or inside, the capture the other made next);
 *   launch      the ranks' last launches are graphs of different captures;
 *   collective  one rank's last launch holds NCCL kernels (it is in a
 *               collective) while another's does not, or that one is
 *               capturing.
 * Graphs are compared across processes by the fingerprint the end of
 * capture records ("fp": topology, kernel names, grids, extents; no
 * handle or address), else by node count. Launches come from trace-level
 * call records and from dump records ("stream" parts, newest first).
 * Ranks as report-ranks.c finds them (the record's "rank").
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "report.h"

static int wh_prefix(const char *s, const char *p)
{
	return s && !strncmp(s, p, strlen(p));
}

/* The rank row, made on first use. */
static json_t *wh_row(json_t *rows, const char *rank)
{
	json_t *row = json_object_get(rows, rank);
	if (row)
		return row;
	row = json_object();
	json_object_set_new(row, "rank", json_string(rank));
	json_object_set_new(row, "captures", json_array());
	json_object_set_new(row, "open", json_object());     /* capture id -> begin */
	json_object_set_new(row, "execs", json_object());    /* exec -> {graph, nccl} */
	json_object_set_new(row, "graph_ix", json_object()); /* graph -> capture index */
	json_object_set_new(row, "capsite", json_object());  /* pid/capture -> begin site */
	json_object_set_new(row, "blocked", json_array());
	json_object_set(rows, rank, row);
	json_decref(row);
	return row;
}

static void wh_set_str(json_t *o, const char *k, const char *v)
{
	if (v)
		json_object_set_new(o, k, json_string(v));
}

/* A dump's "exec=0x.. launch=N thread=T": the exec's handle. */
static void wh_launch_from_dump(json_t *row, const char *s, long long ts)
{
	char exec[40];
	json_t *l;
	if (!s || sscanf(s, "exec=%39s", exec) != 1)
		return;
	l = json_object();
	json_object_set_new(l, "exec", json_string(exec));
	json_object_set_new(l, "from", json_string(rp_ev_names[RP_EV_DUMP]));
	json_object_set_new(l, "ts", json_integer(ts));
	json_object_set_new(row, "last_launch", l);
}

/* A capture record: its site, by process and capture id. */
static void wh_capture(json_t *row, const struct rp_rec *r, const json_t *j)
{
	char key[64];
	snprintf(key, sizeof key, "%lld/%lld", r->pid, rp_int(j, "capture", 0));
	if (rp_site0(j, "site"))
		json_object_set_new(json_object_get(row, "capsite"), key, json_string(rp_site0(j, "site")));
}

/* A call record that succeeded: captures begun and ended, instantiations,
 * the last launch. */
static void wh_call(json_t *row, const struct rp_rec *r, const json_t *j)
{
	const char *api = rp_str(j, "api");
	char key[64];
	if (!api || rp_int(j, "rc", 0))
		return;
	snprintf(key, sizeof key, "%lld", rp_int(j, "capture", 0));
	if (wh_prefix(api, "cuStreamBeginCapture")) {
		json_t *o = json_object();
		json_object_set_new(o, "capture", json_integer(rp_int(j, "capture", 0)));
		wh_set_str(o, "stream", rp_str(j, "stream"));
		wh_set_str(o, "site", rp_site0(j, "site"));
		json_object_set_new(json_object_get(row, "open"), key, o);
	} else if (wh_prefix(api, "cuStreamEndCapture") && rp_str(j, "graph") && strcmp(rp_str(j, "graph"), "0x0")) {
		json_t *caps = json_object_get(row, "captures"), *c = json_object();
		char sk[64];
		const char *site;
		snprintf(sk, sizeof sk, "%lld/%lld", r->pid, rp_int(j, "capture", 0));
		site = json_string_value(json_object_get(json_object_get(row, "capsite"), sk));
		json_object_set_new(c, "index", json_integer((long long)json_array_size(caps)));
		json_object_set_new(c, "capture", json_integer(rp_int(j, "capture", 0)));
		wh_set_str(c, "graph", rp_str(j, "graph"));
		wh_set_str(c, "fp", rp_str(j, "fp"));
		json_object_set_new(c, "nodes", json_integer(rp_int(j, "nodes", -1)));
		json_object_set_new(c, "nccl", json_integer(rp_int(j, "nccl", 0)));
		wh_set_str(c, "site", site);
		json_object_set_new(json_object_get(row, "graph_ix"), rp_str(j, "graph"),
				    json_integer((long long)json_array_size(caps)));
		json_array_append_new(caps, c);
		json_object_del(json_object_get(row, "open"), key);
	} else if (wh_prefix(api, "cuGraphInstantiate") && rp_str(j, "exec") && rp_str(j, "graph")) {
		json_t *x = json_object();
		wh_set_str(x, "graph", rp_str(j, "graph"));
		json_object_set_new(x, "nccl", json_integer(rp_int(j, "nccl", 0)));
		json_object_set_new(json_object_get(row, "execs"), rp_str(j, "exec"), x);
	} else if ((wh_prefix(api, "cuGraphLaunch") || wh_prefix(api, "cudaGraphLaunch")) && rp_str(j, "exec")) {
		json_t *l = json_object();
		wh_set_str(l, "exec", rp_str(j, "exec"));
		json_object_set_new(l, "from", json_string(rp_ev_names[RP_EV_CALL]));
		json_object_set_new(l, "ts", json_integer(r->ts));
		json_object_set_new(row, "last_launch", l);
	}
}

/* A dump record's part: a live capture, a stream's last launch, a blocked
 * thread. */
static void wh_dump(json_t *row, const struct rp_rec *r, const json_t *j)
{
	const char *part = rp_str(j, "part");
	char key[64];
	if (!part)
		return;
	if (!strcmp(part, "capture")) {
		json_t *o = json_object();
		snprintf(key, sizeof key, "%lld", rp_int(j, "capture", 0));
		json_object_set_new(o, "capture", json_integer(rp_int(j, "capture", 0)));
		wh_set_str(o, "stream", rp_str(j, "stream"));
		wh_set_str(o, "site", rp_site0(j, "begin_site"));
		json_object_set_new(o, "nodes", json_integer(rp_int(j, "nodes", -1)));
		json_object_set_new(o, "from", json_string(rp_ev_names[RP_EV_DUMP]));
		json_object_set_new(json_object_get(row, "open"), key, o);
	} else if (!strcmp(part, "stream")) {
		json_t *gl = json_object_get(j, "graph_launches");
		if (json_is_array(gl) && json_array_size(gl))
			wh_launch_from_dump(row, json_string_value(json_array_get(gl, 0)), r->ts);
	} else if (!strcmp(part, "thread") && rp_str(j, "call")) {
		json_t *b = json_object();
		wh_set_str(b, "call", rp_str(j, "call"));
		json_object_set_new(b, "blocked_ms", json_integer(rp_int(j, "blocked_ms", 0)));
		wh_set_str(b, "site", rp_site0(j, "site"));
		json_array_append_new(json_object_get(row, "blocked"), b);
	}
}

static void wh_record(json_t *rows, const struct rp_rec *r, json_t *j)
{
	const char *rank = rp_str(j, "rank");
	json_t *row;
	if (!rank)
		return;
	row = wh_row(rows, rank);
	switch (r->kind) {
	case RP_EV_CAPTURE:
		wh_capture(row, r, j);
		break;
	case RP_EV_CALL:
		wh_call(row, r, j);
		break;
	case RP_EV_DUMP:
		wh_dump(row, r, j);
		break;
	}
}

/* What identifies a graph across ranks. */
static const char *wh_key(const json_t *c, char *buf, size_t cap)
{
	if (rp_str(c, "fp"))
		return rp_str(c, "fp");
	snprintf(buf, cap, "nodes=%lld", rp_int(c, "nodes", -1));
	return buf;
}

static int wh_same(const json_t *a, const json_t *b)
{
	char x[32], y[32];
	if (!a || !b)
		return 0;
	if (rp_str(a, "fp") && rp_str(b, "fp"))
		return !strcmp(rp_str(a, "fp"), rp_str(b, "fp"));
	return !strcmp(wh_key(a, x, sizeof x), wh_key(b, y, sizeof y));
}

/* "#3 (12 nodes, 2 NCCL kernels, fp 0x.., at site)" */
static void wh_cap_text(const json_t *c, char *buf, size_t cap)
{
	long long nc = rp_int(c, "nccl", 0);
	char nccl[40] = "";
	if (nc)
		snprintf(nccl, sizeof nccl, ", %lld NCCL kernel%s", nc, nc == 1 ? "" : "s");
	snprintf(buf, cap, "#%lld (%lld nodes%s%s%s%s%s)", rp_int(c, "index", -1), rp_int(c, "nodes", -1), nccl,
		 rp_str(c, "fp") ? ", fp " : "", rp_str(c, "fp") ? rp_str(c, "fp") : "",
		 rp_str(c, "site") ? ", at " : "", rp_str(c, "site") ? rp_str(c, "site") : "");
}

static json_t *wh_div(const char *what, long long index, const char *text)
{
	json_t *d = json_object();
	json_object_set_new(d, "what", json_string(what));
	json_object_set_new(d, "index", json_integer(index));
	json_object_set_new(d, "text", json_string(text));
	return d;
}

/* The first capture index where rank b's sequence leaves rank a's. */
static json_t *wh_capture_div(const json_t *a, const json_t *b)
{
	const json_t *ca = json_object_get(a, "captures"), *cb = json_object_get(b, "captures");
	const char *ra = rp_str(a, "rank"), *rb = rp_str(b, "rank");
	size_t na = json_array_size(ca), nb = json_array_size(cb), k;
	char t1[400], t2[400], msg[1200];
	for (k = 0; k < na && k < nb; k++)
		if (!wh_same(json_array_get(ca, k), json_array_get(cb, k)))
			break;
	if (k == na && k == nb)
		return NULL;
	if (k == na || k == nb) {
		const json_t *more = k == na ? b : a, *less = k == na ? a : b;
		wh_cap_text(json_array_get(json_object_get(more, "captures"), k), t1, sizeof t1);
		snprintf(msg, sizeof msg, "rank %s made %zu captures, rank %s %zu: rank %s has not made capture %s%s",
			 rp_str(less, "rank"), k, rp_str(more, "rank"),
			 json_array_size(json_object_get(more, "captures")), rp_str(less, "rank"), t1,
			 json_object_size(json_object_get(less, "open")) ? " (it has a capture in progress)" : "");
		return wh_div("behind", (long long)k, msg);
	}
	wh_cap_text(json_array_get(ca, k), t1, sizeof t1);
	wh_cap_text(json_array_get(cb, k), t2, sizeof t2);
	if (k + 1 < na && wh_same(json_array_get(ca, k + 1), json_array_get(cb, k))) {
		snprintf(msg, sizeof msg,
			 "capture %s of rank %s has no counterpart on rank %s: rank %s skipped it (its capture "
			 "#%zu is rank %s's #%zu)",
			 t1, ra, rb, rb, k, ra, k + 1);
		return wh_div("skipped", (long long)k, msg);
	}
	if (k + 1 < nb && wh_same(json_array_get(cb, k + 1), json_array_get(ca, k))) {
		snprintf(msg, sizeof msg,
			 "capture %s of rank %s has no counterpart on rank %s: rank %s skipped it (its capture "
			 "#%zu is rank %s's #%zu)",
			 t2, rb, ra, ra, k, rb, k + 1);
		return wh_div("skipped", (long long)k, msg);
	}
	snprintf(msg, sizeof msg, "capture #%zu holds different graphs: rank %s %s, rank %s %s", k, ra, t1, rb, t2);
	return wh_div("differ", (long long)k, msg);
}

/* The capture (index) and NCCL kernels of a rank's last launch: -1 none. */
static long long wh_last(const json_t *row, long long *nccl)
{
	const json_t *l = json_object_get(row, "last_launch"), *x;
	const char *g;
	*nccl = 0;
	if (!l || !(x = json_object_get(json_object_get(row, "execs"), rp_str(l, "exec"))))
		return -1;
	*nccl = rp_int(x, "nccl", 0);
	g = rp_str(x, "graph");
	return g && json_object_get(json_object_get(row, "graph_ix"), g)
		   ? json_integer_value(json_object_get(json_object_get(row, "graph_ix"), g))
		   : -1;
}

static json_t *wh_launch_div(const json_t *a, const json_t *b)
{
	long long na, nb, ia = wh_last(a, &na), ib = wh_last(b, &nb);
	int la = json_object_get(a, "last_launch") != NULL, lb = json_object_get(b, "last_launch") != NULL;
	int oa = json_object_size(json_object_get(a, "open")) > 0,
	    ob = json_object_size(json_object_get(b, "open")) > 0;
	char msg[600];
	if (la && lb && ia >= 0 && ib >= 0 && ia != ib) {
		snprintf(msg, sizeof msg,
			 "last launch: rank %s replayed capture #%lld's graph, rank %s capture #%lld's",
			 rp_str(a, "rank"), ia, rp_str(b, "rank"), ib);
		return wh_div("launch", ia < ib ? ia : ib, msg);
	}
	if ((na > 0) != (nb > 0) || (na > 0 && ob) || (nb > 0 && oa)) {
		const json_t *in = na > 0 ? a : b, *out = na > 0 ? b : a;
		long long iin = na > 0 ? ia : ib;
		int oout = na > 0 ? ob : oa;
		snprintf(msg, sizeof msg,
			 "rank %s is in a collective (its last launch, capture #%lld's graph, holds NCCL kernels), "
			 "rank %s is not (%s)",
			 rp_str(in, "rank"), iin, rp_str(out, "rank"),
			 oout				       ? "it is capturing"
			 : json_object_get(out, "last_launch") ? "its last launch holds none"
							       : "no launch seen");
		return wh_div("collective", iin, msg);
	}
	return NULL;
}

static int wh_cmp(const void *x, const void *y)
{
	const char *a = rp_str(*(json_t *const *)x, "rank"), *b = rp_str(*(json_t *const *)y, "rank");
	char *ea, *eb;
	long long na = strtoll(a, &ea, 10), nb = strtoll(b, &eb, 10);
	if (!*ea && !*eb && *a && *b)
		return na < nb ? -1 : na > nb;
	return strcmp(a, b);
}

json_t *rp_where(const struct rp_log *log)
{
	json_t *rows = json_object(), *out, *list = json_array(), **v, *row, *first = NULL;
	const char *k;
	size_t i, n;
	for (i = 0; i < log->n; i++) {
		const struct rp_rec *r = &log->recs[i];
		if (r->kind != RP_EV_CAPTURE && r->kind != RP_EV_CALL && r->kind != RP_EV_DUMP)
			continue; /* not parsed */
		wh_record(rows, r, rp_j(log, i));
	}
	n = json_object_size(rows);
	if (n < 2) {
		json_decref(rows);
		json_decref(list);
		return json_null();
	}
	v = malloc(n * sizeof *v);
	if (!v) {
		json_decref(rows);
		json_decref(list);
		return json_null();
	}
	i = 0;
	json_object_foreach(rows, k, row) v[i++] = row;
	qsort(v, n, sizeof *v, wh_cmp);
	/* the first difference of any rank from the lowest, by capture index */
	for (i = 1; i < n; i++) {
		json_t *d = wh_capture_div(v[0], v[i]);
		if (d && (!first || rp_int(d, "index", 0) < rp_int(first, "index", 0))) {
			json_decref(first);
			first = d;
		} else {
			json_decref(d);
		}
	}
	for (i = 1; i < n && !first; i++)
		first = wh_launch_div(v[0], v[i]);
	for (i = 0; i < n; i++) {
		json_t *o = json_object(), *caps = json_object_get(v[i], "captures"), *c;
		long long nccl, ix = wh_last(v[i], &nccl);
		json_object_set(o, "rank", json_object_get(v[i], "rank"));
		json_object_set_new(o, "captures", json_integer((long long)json_array_size(caps)));
		if ((c = json_array_get(caps, json_array_size(caps) - 1)))
			json_object_set(o, "last_capture", c);
		{
			const char *ck;
			json_t *cv, *open = json_array();
			json_object_foreach(json_object_get(v[i], "open"), ck, cv) json_array_append(open, cv);
			json_object_set_new(o, "capturing", open);
		}
		if (json_object_get(v[i], "last_launch")) {
			json_t *l = json_deep_copy(json_object_get(v[i], "last_launch"));
			json_object_set_new(l, "capture_index", json_integer(ix));
			json_object_set_new(l, "nccl", json_integer(nccl));
			json_object_set_new(o, "last_launch", l);
		}
		json_object_set(o, "blocked", json_object_get(v[i], "blocked"));
		json_array_append_new(list, o);
	}
	free(v);
	json_decref(rows);
	out = json_object();
	json_object_set_new(out, "ranks", list);
	json_object_set_new(out, "first_divergence", first ? first : json_null());
	return out;
}

void rp_print_where(FILE *f, const json_t *w)
{
	json_t *row, *b, *d = json_object_get(w, "first_divergence");
	size_t i, k;
	char t[400];
	if (!json_is_object(w))
		return;
	fputs("\n== Where each rank is\n", f);
	json_array_foreach(json_object_get(w, "ranks"), i, row)
	{
		json_t *c = json_object_get(row, "last_capture"), *l = json_object_get(row, "last_launch");
		fprintf(f, "  rank %s: %lld captures", rp_str(row, "rank"), rp_int(row, "captures", 0));
		if (c) {
			wh_cap_text(c, t, sizeof t);
			fprintf(f, ", last %s", t);
		}
		fputc('\n', f);
		json_array_foreach(json_object_get(row, "capturing"), k, c)
		    fprintf(f, "    capturing: capture %lld on stream %s%s%s\n", rp_int(c, "capture", 0),
			    rp_str(c, "stream") ? rp_str(c, "stream") : "?", rp_str(c, "site") ? ", begun at " : "",
			    rp_str(c, "site") ? rp_str(c, "site") : "");
		if (l)
			fprintf(f, "    last launch: exec %s, capture #%lld's graph%s (%s)\n", rp_str(l, "exec"),
				rp_int(l, "capture_index", -1), rp_int(l, "nccl", 0) ? ", holds NCCL kernels" : "",
				rp_str(l, "from"));
		else
			fputs("    last launch: none seen (launches are logged at trace level, or in a dump)\n", f);
		json_array_foreach(json_object_get(row, "blocked"), k, b)
		    fprintf(f, "    blocked: %s for %lld ms%s%s\n", rp_str(b, "call"), rp_int(b, "blocked_ms", 0),
			    rp_str(b, "site") ? " at " : "", rp_str(b, "site") ? rp_str(b, "site") : "");
	}
	if (json_is_object(d))
		fprintf(f, "  FIRST DIVERGENCE (%s): %s\n", rp_str(d, "what"), rp_str(d, "text"));
	else
		fputs("  no divergence: the ranks made the same captures and replay the same graph\n", f);
}
