/*
 * shim/log-text.c -- a violation record, or another warning (any warn or
 * error record: the shim's own trouble, a mismatch, a leak, a fatal
 * signal), for people (CGSHIM_LOG_FORMAT=text, the default on stderr), in
 * the manner of compute-sanitizer: a header line with the severity, the
 * record's kind, the rule and the call as the program wrote it (the
 * runtime's name when a runtime call is on the stack), then indented lines:
 * the message, the prediction, the objects with their ids, the other
 * fields, each call site a frame per line, the driver entry point and the
 * rule's page. With no runtime call on the stack (a static cudart reaches
 * the driver through cuGetProcAddress) the header names the runtime call
 * that reaches the entry point (rt-names.def); the JSONL does not.
 *
 * The record is built as JSON (log.c) and rendered here from that JSON, so
 * the text and the JSONL carry the same fields; a string's control bytes
 * and bytes that are not UTF-8 stay escaped (\xNN), so no value can forge
 * a line. No allocation, no stdio stream, no lock: it runs wherever a
 * record is written.
 */
#include <string.h>

#include "log.h"

#define LT_FIELDS 64
#define LT_WRAP 100

struct lt_field {
	const char *k, *v; /* v: the raw JSON value */
	size_t kl, vl;
	int used;
};

struct lt_out {
	char *o;
	size_t n, cap;
	int full;
};

static void lt_put(struct lt_out *w, const char *s, size_t l)
{
	if (w->full || w->n + l + 8 > w->cap) { /* room for the closing " ...\n" */
		w->full = 1;
		return;
	}
	memcpy(w->o + w->n, s, l);
	w->n += l;
}

static void lt_puts(struct lt_out *w, const char *s)
{
	lt_put(w, s, strlen(s));
}

/* End of the JSON value at p (a string, a number, a word, or a bracketed
 * value with strings inside), within [p, e). */
static const char *lt_skip(const char *p, const char *e)
{
	int depth = 0, instr = 0;
	for (; p < e; p++) {
		char c = *p;
		if (instr) {
			if (c == '\\')
				p++;
			else if (c == '"' && (instr = 0, depth == 0))
				return p + 1;
			continue;
		}
		if (c == '"')
			instr = 1;
		else if (c == '[' || c == '{')
			depth++;
		else if ((c == ']' || c == '}') && depth > 0 && --depth == 0)
			return p + 1;
		else if ((c == ',' || c == '}' || c == ']') && depth == 0)
			return p;
	}
	return e;
}

/* A JSON string's body (v points at its opening quote) for people: \" and
 * \\ unescaped, \u00XX (a control byte, or a byte that is not UTF-8) as
 * \xXX as the text format always wrote them. Other values as they are. */
static void lt_val(struct lt_out *w, const char *v, size_t l)
{
	const char *e = v + l;
	if (l < 2 || *v != '"') {
		lt_put(w, v, l);
		return;
	}
	for (v++, e--; v < e; v++) {
		if (*v != '\\' || v + 1 >= e) {
			lt_put(w, v, 1);
			continue;
		}
		v++;
		if (*v == 'u' && e - v >= 5 && v[1] == '0' && v[2] == '0') {
			char x[4] = {'\\', 'x', v[3], v[4]};
			lt_put(w, x, 4);
			v += 4;
		} else if (*v == '"' || *v == '\\' || *v == '/') {
			lt_put(w, v, 1);
		} else {
			lt_put(w, v - 1, 2);
		}
	}
}

static struct lt_field *lt_get(struct lt_field *f, int nf, const char *k)
{
	size_t kl = strlen(k);
	for (int i = 0; i < nf; i++)
		if (f[i].kl == kl && !memcmp(f[i].k, k, kl))
			return &f[i];
	return NULL;
}

static int lt_is(const struct lt_field *f, const char *suffix)
{
	size_t sl = strlen(suffix);
	return f->kl >= sl && !memcmp(f->k + f->kl - sl, suffix, sl);
}

/* The value of field k (used up), for the header; NULL when absent. */
static struct lt_field *lt_take(struct lt_field *f, int nf, const char *k)
{
	struct lt_field *x = lt_get(f, nf, k);
	if (x)
		x->used = 1;
	return x;
}

/* "    key: " then the frames of a site array, one per line under the first. */
static void lt_site(struct lt_out *w, const struct lt_field *s)
{
	const char *p = s->v + 1, *e = s->v + s->vl - 1;
	size_t pad = 4 + s->kl + 2;
	int first = 1;
	lt_puts(w, "    ");
	lt_put(w, s->k, s->kl);
	lt_puts(w, ": ");
	while (p < e) {
		const char *q = lt_skip(p, e);
		if (!first) {
			lt_puts(w, "\n");
			for (size_t i = 0; i < pad; i++)
				lt_put(w, " ", 1);
		}
		lt_val(w, p, (size_t)(q - p));
		first = 0;
		p = q < e && *q == ',' ? q + 1 : q;
		if (q == p && q < e)
			p++;
	}
	if (first)
		lt_puts(w, "-");
	lt_puts(w, "\n");
}

/* The runtime call that reaches the driver entry point v (a raw JSON
 * string, quoted), from rt-names.def; NULL when none does. A linear scan of
 * ~120 rows, at violation-writing time only. */
static const char *lt_rt_name(const char *v, size_t l)
{
	static const struct {
		const char *drv, *rt;
	} tab[] = {
#define RTNAME(d, r) {#d, #r},
#include "rt-names.def"
#undef RTNAME
	};
	if (l < 3 || v[0] != '"' || v[l - 1] != '"')
		return NULL;
	for (size_t i = 0; i < sizeof tab / sizeof tab[0]; i++)
		if (strlen(tab[i].drv) == l - 2 && !memcmp(tab[i].drv, v + 1, l - 2))
			return tab[i].rt;
	return NULL;
}

size_t cg_log_text_block(const char *js, size_t n, const char *prefix, char *out, size_t cap)
{
	struct lt_field f[LT_FIELDS], *x, *via, *api, *ev;
	struct lt_out w = {out, 0, cap, 0};
	const char *p = js, *e = js + n;
	int nf = 0;
	size_t col;
	const char *rt = NULL; /* the runtime name derived from api (no via) */

	/* the fields of the object {"k":v,...} */
	while (p < e && *p != '{')
		p++;
	for (p++; p < e && nf < LT_FIELDS;) {
		const char *k, *v;
		while (p < e && (*p == ',' || *p == ' '))
			p++;
		if (p >= e || *p != '"')
			break;
		k = ++p;
		while (p < e && *p != '"')
			p++;
		if (p + 1 >= e || p[1] != ':')
			break;
		f[nf].k = k;
		f[nf].kl = (size_t)(p - k);
		v = p + 2;
		p = lt_skip(v, e);
		f[nf].v = v;
		f[nf].vl = (size_t)(p - v);
		f[nf].used = 0;
		nf++;
	}
	ev = lt_take(f, nf, "ev");
	for (const char *const *h = (const char *const[]){"v", "seq", "ts", "pid", "tid", "rank", "severity", NULL}; *h;
	     h++)
		lt_take(f, nf, *h);

	/* cgshim TIME PID:TID LEVEL KIND RULE name in CALL */
	lt_puts(&w, prefix);
	lt_puts(&w, " ");
	if (ev)
		lt_val(&w, ev->v, ev->vl);
	if ((x = lt_take(f, nf, "rule")) && x->vl > 2) { /* a mismatch no rule predicted: "" */
		lt_puts(&w, " ");
		lt_val(&w, x->v, x->vl);
	}
	if ((x = lt_take(f, nf, "name"))) {
		lt_puts(&w, " ");
		lt_val(&w, x->v, x->vl);
	}
	via = lt_take(f, nf, "via");
	api = lt_take(f, nf, "api");
	if (!via && api)
		rt = lt_rt_name(api->v, api->vl);
	if (via || api) {
		lt_puts(&w, " in ");
		if (rt)
			lt_puts(&w, rt);
		else
			lt_val(&w, (via ? via : api)->v, (via ? via : api)->vl);
	}
	lt_puts(&w, "\n");
	if ((x = lt_take(f, nf, "msg"))) {
		lt_puts(&w, "    ");
		lt_val(&w, x->v, x->vl);
		lt_puts(&w, "\n");
	}
	if ((x = lt_take(f, nf, "predicted_err"))) {
		struct lt_field *rc = lt_take(f, nf, "predicted_rc");
		lt_puts(&w, "    predicted: the driver answers ");
		lt_val(&w, x->v, x->vl);
		if (rc) {
			lt_puts(&w, " (");
			lt_val(&w, rc->v, rc->vl);
			lt_puts(&w, ")");
		}
		lt_puts(&w, "\n");
	}
	/* the objects: handles, each with its id where the record has one */
	col = 0;
	for (int i = 0; i < nf; i++) {
		char idk[64];
		struct lt_field *id;
		if (f[i].used || f[i].vl < 4 || memcmp(f[i].v, "\"0x", 3) || f[i].kl + 9 > sizeof idk)
			continue;
		f[i].used = 1;
		lt_puts(&w, col ? ", " : "    objects: ");
		lt_put(&w, f[i].k, f[i].kl);
		lt_puts(&w, " ");
		lt_val(&w, f[i].v, f[i].vl);
		memcpy(idk, f[i].k, f[i].kl);
		memcpy(idk + f[i].kl, "_id", 4);
		if ((id = lt_take(f, nf, idk))) {
			lt_puts(&w, " #");
			lt_put(&w, id->v, id->vl);
		}
		/* the driver's own id (CUDA 13.1), as Nsight Systems names it */
		memcpy(idk, "cuda_", 5);
		memcpy(idk + 5, f[i].k, f[i].kl);
		memcpy(idk + 5 + f[i].kl, "_id", 4);
		if ((id = lt_take(f, nf, idk))) {
			lt_puts(&w, " (driver's id ");
			lt_put(&w, id->v, id->vl);
			lt_puts(&w, ")");
		}
		col = 1;
	}
	if (col)
		lt_puts(&w, "\n");
	/* the other fields: scalars and small values, wrapped; sites last */
	col = 0;
	for (int i = 0; i < nf; i++) {
		if (f[i].used || lt_is(&f[i], "site") || (f[i].kl == 3 && !memcmp(f[i].k, "doc", 3)))
			continue;
		f[i].used = 1;
		if (col && col + f[i].kl + f[i].vl + 4 > LT_WRAP) {
			lt_puts(&w, "\n");
			col = 0;
		}
		lt_puts(&w, col ? ", " : "    ");
		lt_put(&w, f[i].k, f[i].kl);
		lt_puts(&w, ": ");
		lt_val(&w, f[i].v, f[i].vl);
		col += f[i].kl + f[i].vl + 4;
	}
	if (col)
		lt_puts(&w, "\n");
	for (int i = 0; i < nf; i++)
		if (!f[i].used && lt_is(&f[i], "site")) {
			f[i].used = 1;
			if (f[i].vl >= 2 && f[i].v[0] == '[')
				lt_site(&w, &f[i]);
		}
	if ((via || rt) && api) {
		lt_puts(&w, "    driver entry point: ");
		lt_val(&w, api->v, api->vl);
		lt_puts(&w, rt ? " (no runtime hook saw the call: the header names the runtime call that reaches it)\n"
			       : "\n");
	}
	if ((x = lt_take(f, nf, "doc"))) {
		lt_puts(&w, "    rule page: ");
		lt_val(&w, x->v, x->vl);
		lt_puts(&w, "\n");
	}
	if (w.full) { /* cut at the last whole line, marked */
		while (w.n && out[w.n - 1] != '\n')
			w.n--;
		memcpy(out + w.n, "    ...\n", 8);
		w.n += 8;
	}
	return w.n;
}
