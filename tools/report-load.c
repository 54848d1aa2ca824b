/* tools/report-load.c -- read JSONL logs into records, tolerating damage. */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <sys/stat.h>
#include <unistd.h>

#include "report.h"

/* rp_j's state. */
struct rp_fetch {
	int *fds;	      /* one per file, opened by rp_load */
	struct rp_reader *rd; /* the main thread's (report-prefetch.c) */
	struct rp_pre *pre;   /* the parser ahead, made at the first rp_j */
	json_t *cur;	      /* the record last parsed */
	size_t cur_i;
	void *sym;     /* report-symbols.c's context, or NULL */
	json_t *stale; /* owned here, filled by report-symbols.c */
};

/* Per-file cap on line-level messages; the rest are only counted. */
#define RP_MAX_LINE_MSGS 10

/* The known record kinds are the schema's (rp_ev_names, generated from
 * records.def by shim/gen-records.py report). One value read as a type:
 * the rules every reader follows, the generated rd_<event>() ones too. */
const char *rp_v_str(const json_t *v)
{
	return json_is_string(v) ? json_string_value(v) : NULL;
}

int rp_v_int(const json_t *v, long long *out)
{
	if (json_is_integer(v))
		*out = (long long)json_integer_value(v);
	else if (json_is_real(v))
		*out = (long long)json_real_value(v);
	else if (json_is_boolean(v))
		*out = json_is_true(v);
	else
		return 0;
	return json_is_number(v) ? 1 : 2;
}

int rp_v_bool(const json_t *v, int *out)
{
	if (json_is_boolean(v))
		*out = json_is_true(v);
	else if (json_is_integer(v))
		*out = json_integer_value(v) != 0;
	else
		return 0;
	return json_is_boolean(v) ? 1 : 2;
}

const char *rp_str(const json_t *j, const char *key)
{
	return rp_v_str(json_object_get(j, key));
}

void rp_count(json_t *obj, const char *key, long long by)
{
	json_t *v = json_object_get(obj, key);
	if (v)
		json_integer_set(v, json_integer_value(v) + by);
	else
		json_object_set_new(obj, key, json_integer(by));
}

long long rp_int(const json_t *j, const char *key, long long def)
{
	long long v;
	return rp_v_int(json_object_get(j, key), &v) ? v : def;
}

int rp_has_int(const json_t *j, const char *key)
{
	return json_is_number(json_object_get(j, key));
}

int rp_bool(const json_t *j, const char *key)
{
	int v;
	return rp_v_bool(json_object_get(j, key), &v) ? v : 0;
}

const char *rp_site0(const json_t *j, const char *key)
{
	return rp_v_site0(json_object_get(j, key));
}

/* The frame a person wants to see first: the innermost Python frame of the
 * user's own code ("py:"; the shim writes installed packages and the
 * standard library as "pylib:") when there is one, else the innermost. */
const char *rp_v_site0(const json_t *v)
{
	size_t i;
	if (json_is_string(v))
		return json_string_value(v);
	if (!json_is_array(v) || !json_is_string(json_array_get(v, 0)))
		return NULL;
	for (i = 0; i < json_array_size(v); i++) {
		const char *f = json_string_value(json_array_get(v, i));
		if (f && !strncmp(f, "py:", 3))
			return f;
		if (!f || strncmp(f, "pylib:", 6))
			break; /* native frames follow the Python ones */
	}
	return json_string_value(json_array_get(v, 0));
}

const char *rp_bytes(long long v, char *buf, size_t len)
{
	static const char *unit[] = {"KiB", "MiB", "GiB", "TiB"};
	double d = v < 0 ? -(double)v : (double)v; /* -v overflows for INT64_MIN */
	int u = -1;

	if (d < 1024) {
		snprintf(buf, len, "%lld B", v);
		return buf;
	}
	while (d >= 1024 && u < 3) {
		d /= 1024;
		u++;
	}
	snprintf(buf, len, "%s%.1f %s", v < 0 ? "-" : "", d, unit[u]);
	return buf;
}

/* A line of the shim's text format: "cgshim " then a time stamp (the
 * wall-clock "2026-...Z" of today's shim, or the monotonic "SECONDS.MICROS"
 * of older ones). */
static int rp_text_record(const char *line)
{
	return !strncmp(line, "cgshim ", 7) && line[7] >= '0' && line[7] <= '9';
}

static int rp_cmp(const void *a, const void *b)
{
	const struct rp_rec *x = a, *y = b;

	if (x->ts != y->ts)
		return x->ts < y->ts ? -1 : 1;
	if (x->pid != y->pid)
		return x->pid < y->pid ? -1 : 1;
	if (x->seq != y->seq)
		return x->seq < y->seq ? -1 : 1;
	if (x->file != y->file)
		return x->file < y->file ? -1 : 1;
	return x->line < y->line ? -1 : x->line > y->line;
}

static int rp_push(struct rp_log *log, const struct rp_rec *r)
{
	if (log->n == log->cap) {
		size_t cap = log->cap ? log->cap * 2 : 1024;
		struct rp_rec *p = realloc(log->recs, cap * sizeof *p);
		if (!p)
			return -1;
		log->recs = p;
		log->cap = cap;
	}
	log->recs[log->n++] = *r;
	return 0;
}

/* Validate one parsed line. Returns NULL if usable, else the reason. */
static const char *rp_check(struct rp_log *log, json_t *j, struct rp_rec *r)
{
	const char *ev;
	json_t *v;

	if (!json_is_object(j))
		return "not a JSON object";
	v = json_object_get(j, "v");
	if (!json_is_integer(v))
		return "no integer \"v\" (format version)";
	if (json_integer_value(v) > CGSHIM_RECORD_VERSION || json_integer_value(v) < CGSHIM_RECORD_VERSION_MIN)
		return "newer";
	if (!(ev = rp_str(j, "ev")))
		return "no string \"ev\"";
	if (!rp_has_int(j, "ts"))
		return "no integer \"ts\"";
	if (!rp_has_int(j, "pid"))
		return "no integer \"pid\"";
	r->ts = rp_int(j, "ts", 0);
	r->pid = rp_int(j, "pid", 0);
	r->tid = rp_int(j, "tid", r->pid);
	r->seq = rp_int(j, "seq", 0);
	/* the kind, once: no view reads the name again */
	if ((r->kind = (short)rp_ev_kind(ev, strlen(ev))) != RP_EV_UNKNOWN)
		return NULL;
	log->unknown_ev++;
	return "unknown";
}

/* The fast path (rp_scan) for a well-formed line of a known kind; 0 sends
 * the line to jansson, which decides and words any complaint. */
static int rp_fast(struct rp_scanned *sc, const char *line, size_t len, struct rp_rec *r)
{
	if (!rp_scan(line, len, sc) || sc->v > CGSHIM_RECORD_VERSION || sc->v < CGSHIM_RECORD_VERSION_MIN)
		return 0;
	/* the kind, once: no view reads the name again */
	if ((r->kind = (short)rp_ev_kind(sc->ev, strlen(sc->ev))) == RP_EV_UNKNOWN)
		return 0;
	r->ts = sc->ts;
	r->pid = sc->pid;
	r->tid = sc->has_tid ? sc->tid : sc->pid;
	r->seq = sc->has_seq ? sc->seq : 0;
	return 1;
}

static void rp_load_file(struct rp_log *log, const char *path, int fd, unsigned fidx)
{
	int fd2 = fd < 0 ? -1 : dup(fd);
	FILE *f = fd2 < 0 ? NULL : fdopen(fd2, "r");
	struct rp_scanned sc;
	struct stat st;
	long long total = fd >= 0 && fstat(fd, &st) == 0 ? (long long)st.st_size : 0;
	char *line = NULL;
	size_t cap = 0;
	ssize_t len;
	long long off = 0, next = 0;
	unsigned lineno = 0, msgs = 0, usable = 0;
	unsigned long bad = 0;

	if (!f) {
		if (fd >= 0) /* else rp_input_open said why */
			fprintf(stderr, "cgshim report: %s: %s\n", path, strerror(errno));
		if (fd2 >= 0)
			close(fd2);
		return;
	}
	while ((len = getline(&line, &cap, f)) >= 0) {
		struct rp_rec r;
		json_error_t err;
		const char *why;
		json_t *j;
		int complete = len > 0 && line[len - 1] == '\n';

		lineno++;
		off = next;
		next += len;
		while (len > 0 && (line[len - 1] == '\n' || line[len - 1] == '\r'))
			line[--len] = '\0';
		if (len == 0)
			continue;
		memset(&r, 0, sizeof r);
		r.file = fidx;
		r.line = lineno;
		r.off = off;
		r.len = (unsigned)len;
		if ((lineno & 0xffff) == 0)
			rp_progress("reading", next, total);
		if (rp_fast(&sc, line, (size_t)len, &r)) {
			if (rp_push(log, &r) < 0) {
				fprintf(stderr, "cgshim report: %s:%u: out of memory; stopping here\n", path, lineno);
				break;
			}
			usable++;
			continue;
		}
		j = json_loadb(line, (size_t)len, 0, &err);
		if (!j && rp_text_record(line)) {
			/* Said once, and the file left: every other line would be
			 * another "not JSON". */
			fprintf(stderr,
				"cgshim report: %s:%u: this is the shim's text format, which the "
				"report does not read; run the program again with "
				"CGSHIM_LOG_FORMAT=jsonl (the default for a CGSHIM_LOG_FILE "
				"unless CGSHIM_LOG_FORMAT=text was set; the launcher's default "
				"log is JSONL)\n",
				path, lineno);
			usable = 1; /* no "no usable record" line on top of this */
			break;
		}
		if (!j) {
			bad++;
			if (msgs++ < RP_MAX_LINE_MSGS)
				fprintf(stderr, "cgshim report: %s:%u: %s (skipped): %s\n", path, lineno,
					complete ? "not JSON" : "truncated last line", err.text);
			continue;
		}
		why = rp_check(log, j, &r);
		if (why && !strcmp(why, "newer")) {
			if (log->newer++ == 0)
				fprintf(stderr,
					"cgshim report: %s:%u: record format v%lld is not "
					"supported (this "
					"reader knows v%d..v%d); such records are skipped\n",
					path, lineno, rp_int(j, "v", 0), CGSHIM_RECORD_VERSION_MIN,
					CGSHIM_RECORD_VERSION);
			json_decref(j);
			continue;
		}
		if (why && !strcmp(why, "unknown")) {
			if (log->unknown_ev == 1)
				fprintf(stderr,
					"cgshim report: %s:%u: unknown record kind \"%s\" (ignored; "
					"further ones silently)\n",
					path, lineno, rp_str(j, "ev"));
			json_decref(j);
			continue;
		}
		if (why) {
			bad++;
			if (msgs++ < RP_MAX_LINE_MSGS)
				fprintf(stderr, "cgshim report: %s:%u: %s (skipped)\n", path, lineno, why);
			json_decref(j);
			continue;
		}
		if (rp_push(log, &r) < 0) {
			fprintf(stderr, "cgshim report: %s:%u: out of memory; stopping here\n", path, lineno);
			json_decref(j);
			break;
		}
		json_decref(j);
		usable++;
	}
	if (ferror(f))
		fprintf(stderr, "cgshim report: %s: read error: %s\n", path, strerror(errno));
	if (msgs > RP_MAX_LINE_MSGS)
		fprintf(stderr, "cgshim report: %s: %u more bad lines not shown\n", path, msgs - RP_MAX_LINE_MSGS);
	if (lineno == 0 && !ferror(f))
		fprintf(stderr, "cgshim report: %s: empty file\n", path);
	else if (usable == 0)
		fprintf(stderr, "cgshim report: %s: no usable record in %u lines\n", path, lineno);
	log->malformed += bad;
	rp_progress(NULL, -1, 0);
	free(line);
	fclose(f);
}

void rp_load(struct rp_log *log, char **files, int nfiles)
{
	int i;

	memset(log, 0, sizeof *log);
	log->files = files;
	log->nfiles = (unsigned)nfiles;
	log->fetch = calloc(1, sizeof *log->fetch);
	if (log->fetch)
		log->fetch->fds = calloc((size_t)nfiles + 1, sizeof *log->fetch->fds);
	if (log->fetch)
		log->fetch->rd = rp_reader_new((unsigned)nfiles);
	if (!log->fetch || !log->fetch->fds || !log->fetch->rd) {
		fprintf(stderr, "cgshim report: out of memory\n");
		exit(1);
	}
	log->fetch->cur_i = (size_t)-1;
	for (i = 0; i < nfiles; i++) {
		/* kept open for rp_j; a file that cannot be opened has no record */
		log->fetch->fds[i] = rp_input_open(files[i]);
		rp_load_file(log, !strcmp(files[i], "-") ? "standard input" : files[i], log->fetch->fds[i],
			     (unsigned)i);
	}
	if (log->n > 1)
		qsort(log->recs, log->n, sizeof *log->recs, rp_cmp);
}

void rp_free(struct rp_log *log)
{
	size_t i;

	if (log->fetch) {
		for (i = 0; i < log->nfiles; i++)
			if (log->fetch->fds[i] >= 0)
				close(log->fetch->fds[i]);
		rp_pre_free(log->fetch->pre); /* before the files close */
		free(log->fetch->fds);
		rp_reader_free(log->fetch->rd);
		json_decref(log->fetch->cur);
		rp_sym_free(log->fetch->sym);
		json_decref(log->fetch->stale);
		free(log->fetch);
	}
	free(log->recs);
	memset(log, 0, sizeof *log);
}

json_t *rp_j(const struct rp_log *log, size_t i)
{
	struct rp_fetch *f = log->fetch;
	json_t *j;

	if (f->cur && f->cur_i == i)
		return f->cur;
	json_decref(f->cur);
	f->cur = NULL;
	if (!f->pre)
		f->pre = rp_pre_new(log, f->fds);
	if ((i & 0xffff) == 0 && i) { /* a pass's progress, by its place in the file */
		struct stat st;
		if (fstat(f->fds[log->recs[i].file], &st) == 0)
			rp_progress("analysing", log->recs[i].off, (long long)st.st_size);
	}
	if (!(j = rp_pre_take(f->pre, i)))
		j = rp_reader_parse(f->rd, f->fds, &log->recs[i]);
	if (f->sym)
		rp_sym_apply(f->sym, &log->recs[i], j);
	f->cur = j;
	f->cur_i = i;
	return j;
}

/* report-symbols.c installs its context here. */
void rp_fetch_set_sym(struct rp_log *log, void *sym, json_t *stale)
{
	log->fetch->sym = sym;
	log->fetch->stale = stale;
}
