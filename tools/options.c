/* tools/options.c -- CGSHIM_* options from shim/config.def. */
#include <ctype.h>
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "config-values.h" /* the shim's own acceptance rules */
#include "options.h"

const struct opt_row opt_rows[] = {
#define CFG(field, name, kind, def, choices, doc) {#name, #kind, def, choices, doc},
#include "config.def"
#undef CFG
};
const unsigned opt_nrows = sizeof(opt_rows) / sizeof(opt_rows[0]);

void opt_name(const struct opt_row *row, char *buf, size_t len)
{
	const char *s = row->env;
	size_t i;

	if (!strncmp(s, "CGSHIM_", 7))
		s += 7;
	for (i = 0; s[i] && i + 1 < len; i++)
		buf[i] = s[i] == '_' ? '-' : (char)tolower((unsigned char)s[i]);
	if (len)
		buf[i] = '\0';
}

const struct opt_row *opt_find(const char *name, size_t len)
{
	char buf[128];
	unsigned i;

	for (i = 0; i < opt_nrows; i++) {
		opt_name(&opt_rows[i], buf, sizeof buf);
		if (strlen(buf) == len && !strncmp(buf, name, len))
			return &opt_rows[i];
	}
	return NULL;
}

int opt_check(const struct opt_row *row, const char *val, char *why, size_t len)
{
	long l;

	if (!strcmp(row->kind, "BOOL") && cg_value_bool(val) < 0) {
		snprintf(why, len, "is not a boolean (0/1/yes/no/true/false/on/off)");
		return -1;
	}
	if (!strcmp(row->kind, "ENUM") && cg_value_enum(val, row->choices) < 0) {
		snprintf(why, len, "is not one of %s", row->choices);
		return -1;
	}
	if (!strcmp(row->kind, "INT") && cg_value_long(val, row->choices, &l) < 0) {
		snprintf(why, len, "is not an integer in %s", row->choices);
		return -1;
	}
	return 0;
}

static const char *kind_lower(const char *kind)
{
	if (!strcmp(kind, "BOOL"))
		return "bool";
	if (!strcmp(kind, "INT"))
		return "int";
	if (!strcmp(kind, "ENUM"))
		return "enum";
	return "str";
}

static const char *metavar(const struct opt_row *row)
{
	if (!strcmp(row->kind, "INT"))
		return "N";
	if (!strcmp(row->kind, "ENUM"))
		return "WORD";
	return "TEXT";
}

void opt_print_help(FILE *f)
{
	char name[128], left[192];
	unsigned i;

	for (i = 0; i < opt_nrows; i++) {
		const struct opt_row *r = &opt_rows[i];
		opt_name(r, name, sizeof name);
		if (!strcmp(r->kind, "BOOL"))
			snprintf(left, sizeof left, "--%s[=0|1]", name);
		else
			snprintf(left, sizeof left, "--%s=%s", name, metavar(r));
		fprintf(f, "  %-32s %s", left, r->env);
		if (!strcmp(r->kind, "ENUM") || !strcmp(r->kind, "INT"))
			fprintf(f, " (%s; default %s)\n", r->choices, r->def);
		else if (!strcmp(r->kind, "BOOL"))
			fprintf(f, " (0/1/no/yes/false/true/off/on; default %s)\n", r->def);
		else if (*r->def)
			fprintf(f, " (default %s)\n", r->def);
		else
			fputc('\n', f);
		fprintf(f, "      %s\n", r->doc);
	}
}

/* Markdown cell text: '|' would end the cell, so it is escaped. */
static void put_cell(FILE *f, const char *s)
{
	for (; *s; s++) {
		if (*s == '|')
			fputc('\\', f);
		fputc(*s, f);
	}
}

void opt_print_env_table(FILE *f)
{
	unsigned i;

	fputs("| Variable | Type | Default | Values | Meaning |\n", f);
	fputs("|---|---|---|---|---|\n", f);
	for (i = 0; i < opt_nrows; i++) {
		const struct opt_row *r = &opt_rows[i];
		fprintf(f, "| `%s` | %s | ", r->env, kind_lower(r->kind));
		if (*r->def)
			fprintf(f, "`%s`", r->def);
		fputs(" | ", f);
		if (!strcmp(r->kind, "ENUM")) {
			const char *p = r->choices;
			int first = 1;
			while (*p) {
				const char *bar = strchr(p, '|');
				int n = bar ? (int)(bar - p) : (int)strlen(p);
				fprintf(f, "%s`%.*s`", first ? "" : ", ", n, p);
				first = 0;
				p += n + (bar ? 1 : 0);
			}
		} else if (!strcmp(r->kind, "INT")) {
			fprintf(f, "`%s`", r->choices);
		} else if (!strcmp(r->kind, "BOOL")) {
			/* every spelling cg_value_bool accepts, any case */
			fputs("`0`, `1`, `no`, `yes`, `false`, `true`, `off`, `on`", f);
		}
		fputs(" | ", f);
		put_cell(f, r->doc);
		fputs(" |\n", f);
	}
}
