/*
 * shim/suppress.c -- CGSHIM_SUPPRESS (suppress.h).
 *
 * The file is the report's baseline JSON. Its reader here is a scanner,
 * not a JSON parser: it takes each object of the "suppressions" list (or a
 * bare top-level list) and, in it, the string values of rule, function,
 * file and kind (\" and \\ escapes only); other keys and values are
 * skipped. Matching is the report's (report-findings.c): an absent field or
 * "*" matches anything; file also matches when one path ends with the
 * other at a '/' (the report shows Python files relative to its directory).
 * The shim names a native frame by module and exported symbol, the report
 * by source file and function: entries for native sites match at run time
 * only where the symbol is exported and the file is the module, or with
 * "*" (a finding not matched is written: nothing is hidden by mistake).
 */
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "config.h"
#include "log.h"
#include "site.h"
#include "suppress.h"

#define SUP_MAX 256
#define SUP_FIELD 256
#define SUP_FILE_MAX (1 << 20)

struct sup_entry {
	char rule[16], function[SUP_FIELD], file[SUP_FIELD], kind[128];
	_Atomic long long matched;
};

static struct sup_entry *sup;
static int n_sup;
static pthread_once_t sup_once = PTHREAD_ONCE_INIT;

/* The string starting after the opening quote at *p into out (cut to cap);
 * *p ends after the closing quote. 0, or -1 at the end of the text. */
static int sup_string(const char **p, const char *end, char *out, size_t cap)
{
	size_t n = 0;
	const char *s = *p;
	for (; s < end && *s != '"'; s++) {
		char c = *s;
		if (c == '\\' && s + 1 < end)
			c = *++s;
		if (n + 1 < cap)
			out[n++] = c;
	}
	out[n] = '\0';
	if (s >= end)
		return -1;
	*p = s + 1;
	return 0;
}

/* A field's value, cut to the field. */
static void sup_copy(char *dst, size_t cap, const char *src)
{
	size_t n = strnlen(src, cap - 1);
	memcpy(dst, src, n);
	dst[n] = '\0';
}

/* One object's fields, from after its '{' to after its '}'. */
static int sup_object(const char **p, const char *end, struct sup_entry *e)
{
	char key[32], val[SUP_FIELD];
	int depth = 1;
	const char *s = *p;

	memset(e, 0, sizeof *e);
	while (s < end && depth > 0) {
		if (*s == '"') {
			s++;
			if (sup_string(&s, end, key, sizeof key) < 0)
				return -1;
			while (s < end && (*s == ' ' || *s == '\t' || *s == '\n' || *s == '\r'))
				s++;
			if (depth == 1 && s < end && *s == ':') {
				s++;
				while (s < end && (*s == ' ' || *s == '\t' || *s == '\n' || *s == '\r'))
					s++;
				if (s < end && *s == '"') {
					s++;
					if (sup_string(&s, end, val, sizeof val) < 0)
						return -1;
					if (!strcmp(key, "rule"))
						sup_copy(e->rule, sizeof e->rule, val);
					else if (!strcmp(key, "function"))
						sup_copy(e->function, sizeof e->function, val);
					else if (!strcmp(key, "file"))
						sup_copy(e->file, sizeof e->file, val);
					else if (!strcmp(key, "kind"))
						sup_copy(e->kind, sizeof e->kind, val);
				}
			}
			continue;
		}
		if (*s == '{' || *s == '[')
			depth++;
		else if (*s == '}' || *s == ']')
			depth--;
		s++;
	}
	*p = s;
	return depth == 0 && e->rule[0] ? 0 : -1;
}

static void sup_load(void)
{
	const char *path = cg_cfg.suppress, *s, *end;
	char *text;
	ssize_t n, got = 0;
	int fd, saved = errno;

	if (!path || !*path)
		return;
	text = malloc(SUP_FILE_MAX + 1);
	sup = calloc(SUP_MAX, sizeof *sup);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (!text || !sup || fd < 0) {
		cg_warn("CGSHIM_SUPPRESS=%s cannot be read; nothing is suppressed", path);
		goto out;
	}
	while (got < SUP_FILE_MAX && (n = read(fd, text + got, (size_t)(SUP_FILE_MAX - got))) > 0)
		got += n;
	close(fd);
	text[got] = '\0';
	end = text + got;
	s = strstr(text, "\"suppressions\"");
	s = s ? strchr(s, '[') : strchr(text, '[');
	if (!s) {
		cg_warn("CGSHIM_SUPPRESS=%s has no suppressions list (docs/ci.md); nothing is suppressed", path);
		goto out;
	}
	for (s++; s < end && *s != ']';) {
		if (*s == '{') {
			s++;
			if (n_sup >= SUP_MAX || sup_object(&s, end, &sup[n_sup]) < 0) {
				cg_warn(
				    "CGSHIM_SUPPRESS=%s: entry %d is malformed, has no rule, or is past %d; nothing is "
				    "suppressed",
				    path, n_sup + 1, SUP_MAX);
				n_sup = 0;
				goto out;
			}
			n_sup++;
		} else {
			s++;
		}
	}
out:
	free(text);
	errno = saved;
}

static int sup_eq(const char *want, const char *have)
{
	return !want[0] || !strcmp(want, "*") || !strcmp(want, have);
}

/* Equal, or one ends with the other at a '/'. */
static int sup_file_eq(const char *want, const char *have)
{
	size_t lw = strlen(want), lh = strlen(have);
	if (sup_eq(want, have))
		return 1;
	if (lw > lh)
		return have[0] && !strcmp(want + lw - lh, have) && want[lw - lh - 1] == '/';
	return lw && !strcmp(have + lh - lw, want) && (lh == lw || have[lh - lw - 1] == '/');
}

/* Function and file of a first frame (site.h's cg_site_first forms). */
static void sup_frame(char *fr, const char **fn, const char **file)
{
	char *a, *b;
	*fn = "?";
	*file = "?";
	if (!strncmp(fr, "py:", 3) || !strncmp(fr, "pylib:", 6)) {
		char *body = strchr(fr, ':') + 1;
		if ((a = strrchr(body, ':'))) {
			*a = '\0';
			*fn = a + 1;
			if ((b = strrchr(body, ':')))
				*b = '\0';
		}
		*file = body;
	} else if ((a = strstr(fr, "+0x"))) {
		*a = '\0';
		if ((b = strchr(fr, ':'))) {
			*b = '\0';
			*fn = b + 1;
		}
		*file = fr;
	}
}

int cg_suppress_match(const char *rule, const char *kind, uint32_t site)
{
	char fr[512];
	const char *fn, *file;

	if (!cg_cfg.suppress || !*cg_cfg.suppress)
		return 0;
	pthread_once(&sup_once, sup_load);
	if (!n_sup)
		return 0;
	cg_site_first(site, fr, sizeof fr);
	sup_frame(fr, &fn, &file);
	for (int i = 0; i < n_sup; i++) {
		struct sup_entry *e = &sup[i];
		if (!strcmp(e->rule, rule) && sup_eq(e->kind, kind) && sup_eq(e->function, fn) &&
		    sup_file_eq(e->file, file)) {
			atomic_fetch_add_explicit(&e->matched, 1, memory_order_relaxed);
			return 1;
		}
	}
	return 0;
}

void cg_suppress_exit(void)
{
	if (!cg_cfg.suppress || !*cg_cfg.suppress)
		return;
	pthread_once(&sup_once, sup_load);
	for (int i = 0; i < n_sup; i++)
		if (!atomic_load(&sup[i].matched))
			cg_warn("CGSHIM_SUPPRESS: stale suppression (matched nothing): %s at %s (%s) kind %s",
				sup[i].rule, sup[i].function[0] ? sup[i].function : "*",
				sup[i].file[0] ? sup[i].file : "*", sup[i].kind[0] ? sup[i].kind : "*");
}
