/*
 * tools/report-scan.c -- the loader's fast path: checks that a line is
 * one JSON object and reads its top-level "v", "ev", "ts", "pid", "tid" and
 * "seq" without building it. Building every line with jansson was half of
 * the report's time (the records are parsed again when used, rp_j).
 *
 * Contract: rp_scan answers 1 only for a line jansson reads as an object
 * whose fields it reports here exactly as rp_int/rp_str would; for anything
 * it is not sure of (escapes, non-ASCII bytes, reals, big numbers, deep
 * nesting, errors) it answers 0 and the caller parses the line with jansson,
 * whose answer and error text stay the reference.
 */
#include <string.h>

#include "report.h"

#define SC_MAX_DEPTH 64

struct sc {
	const char *p, *end;
};

static void sc_ws(struct sc *s)
{
	while (s->p < s->end && (*s->p == ' ' || *s->p == '\t' || *s->p == '\n' || *s->p == '\r'))
		s->p++;
}

/* A string of plain ASCII without escapes: [*b, *b + *n). 0 if not sure. */
static int sc_string(struct sc *s, const char **b, size_t *n)
{
	const char *q;
	if (s->p >= s->end || *s->p != '"')
		return 0;
	for (q = s->p + 1; q < s->end; q++) {
		unsigned char c = (unsigned char)*q;
		if (c == '"')
			break;
		if (c == '\\' || c < 0x20 || c >= 0x80)
			return 0;
	}
	if (q >= s->end)
		return 0;
	*b = s->p + 1;
	*n = (size_t)(q - s->p - 1);
	s->p = q + 1;
	return 1;
}

/* A JSON number. *is_int: an integer jansson reads as such (no fraction,
 * no exponent, at most 18 digits), in *v; else 0, a shape left to jansson
 * when it matters. */
static int sc_number(struct sc *s, long long *v, int *is_int)
{
	const char *q = s->p;
	long long x = 0;
	int neg = 0, nd = 0;
	*is_int = 0;
	if (q < s->end && *q == '-')
		neg = 1, q++;
	if (q >= s->end || *q < '0' || *q > '9')
		return 0;
	if (*q == '0' && q + 1 < s->end && q[1] >= '0' && q[1] <= '9')
		return 0; /* leading zero: jansson's error */
	while (q < s->end && *q >= '0' && *q <= '9') {
		if (++nd <= 18)
			x = x * 10 + (*q - '0');
		q++;
	}
	if (nd > 18)
		return 0; /* may not fit: jansson says */
	*is_int = 1;
	if (q < s->end && *q == '.') {
		*is_int = 0;
		q++;
		if (q >= s->end || *q < '0' || *q > '9')
			return 0;
		while (q < s->end && *q >= '0' && *q <= '9')
			q++;
	}
	if (q < s->end && (*q == 'e' || *q == 'E')) {
		*is_int = 0;
		q++;
		if (q < s->end && (*q == '+' || *q == '-'))
			q++;
		if (q >= s->end || *q < '0' || *q > '9')
			return 0;
		while (q < s->end && *q >= '0' && *q <= '9')
			if (++nd > 18 + 3)
				return 0; /* 1e400 overflows: jansson says */
			else
				q++;
	}
	*v = neg ? -x : x;
	s->p = q;
	return 1;
}

static int sc_value(struct sc *s, int depth);

static int sc_literal(struct sc *s, const char *w)
{
	size_t n = strlen(w);
	if ((size_t)(s->end - s->p) < n || memcmp(s->p, w, n))
		return 0;
	s->p += n;
	return 1;
}

static int sc_container(struct sc *s, int depth, char close)
{
	const char *b;
	size_t n;
	if (depth > SC_MAX_DEPTH)
		return 0;
	s->p++;
	sc_ws(s);
	if (s->p < s->end && *s->p == close) {
		s->p++;
		return 1;
	}
	for (;;) {
		sc_ws(s);
		if (close == '}') {
			if (!sc_string(s, &b, &n))
				return 0;
			sc_ws(s);
			if (s->p >= s->end || *s->p++ != ':')
				return 0;
			sc_ws(s);
		}
		if (!sc_value(s, depth + 1))
			return 0;
		sc_ws(s);
		if (s->p >= s->end)
			return 0;
		if (*s->p == ',') {
			s->p++;
			continue;
		}
		if (*s->p++ != close)
			return 0;
		return 1;
	}
}

static int sc_value(struct sc *s, int depth)
{
	const char *b;
	size_t n;
	long long v;
	int is_int = 0;
	if (s->p >= s->end)
		return 0;
	switch (*s->p) {
	case '"':
		return sc_string(s, &b, &n);
	case '{':
		return sc_container(s, depth, '}');
	case '[':
		return sc_container(s, depth, ']');
	case 't':
		return sc_literal(s, "true");
	case 'f':
		return sc_literal(s, "false");
	case 'n':
		return sc_literal(s, "null");
	default:
		return sc_number(s, &v, &is_int);
	}
}

/* The top-level fields; found bits: 1 v, 2 ts, 4 pid, 8 tid, 16 seq, 32 ev. */
int rp_scan(const char *line, size_t len, struct rp_scanned *out)
{
	struct sc s = {line, line + len};
	const char *b;
	size_t n;
	unsigned found = 0;

	memset(out, 0, sizeof *out);
	sc_ws(&s);
	if (s.p >= s.end || *s.p != '{')
		return 0;
	s.p++;
	sc_ws(&s);
	if (s.p < s.end && *s.p == '}') {
		s.p++;
	} else {
		for (;;) {
			const char *key;
			size_t kn;
			sc_ws(&s);
			if (!sc_string(&s, &key, &kn))
				return 0;
			sc_ws(&s);
			if (s.p >= s.end || *s.p++ != ':')
				return 0;
			sc_ws(&s);
			if (s.p < s.end && (*s.p == '-' || (*s.p >= '0' && *s.p <= '9'))) {
				long long v;
				int is_int = 0;
				unsigned bit = 0;
				if (!sc_number(&s, &v, &is_int) || !is_int)
					return 0;
				if (kn == 1 && *key == 'v')
					bit = 1, out->v = v;
				else if (kn == 2 && !memcmp(key, "ts", 2))
					bit = 2, out->ts = v;
				else if (kn == 3 && !memcmp(key, "pid", 3))
					bit = 4, out->pid = v;
				else if (kn == 3 && !memcmp(key, "tid", 3))
					bit = 8, out->tid = v;
				else if (kn == 3 && !memcmp(key, "seq", 3))
					bit = 16, out->seq = v;
				found |= bit;
			} else if (kn == 2 && !memcmp(key, "ev", 2) && s.p < s.end && *s.p == '"') {
				if (!sc_string(&s, &b, &n) || n >= sizeof out->ev)
					return 0;
				memcpy(out->ev, b, n);
				out->ev[n] = '\0';
				found |= 32;
			} else {
				/* a duplicate key of another type than the one seen
				 * first: jansson keeps the last; leave it to jansson */
				if ((kn == 1 && *key == 'v') || (kn == 2 && !memcmp(key, "ts", 2)) ||
				    (kn == 2 && !memcmp(key, "ev", 2)) ||
				    (kn == 3 &&
				     (!memcmp(key, "pid", 3) || !memcmp(key, "tid", 3) || !memcmp(key, "seq", 3))))
					return 0;
				if (!sc_value(&s, 1))
					return 0;
			}
			sc_ws(&s);
			if (s.p >= s.end)
				return 0;
			if (*s.p == ',') {
				s.p++;
				continue;
			}
			if (*s.p++ != '}')
				return 0;
			break;
		}
	}
	sc_ws(&s);
	if (s.p != s.end)
		return 0;
	/* only the complete case is answered here */
	if ((found & (1 | 2 | 4 | 32)) != (1 | 2 | 4 | 32))
		return 0;
	out->has_tid = !!(found & 8);
	out->has_seq = !!(found & 16);
	return 1;
}
