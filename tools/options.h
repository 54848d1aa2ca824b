/*
 * tools/options.h -- the launcher's CGSHIM_* options, generated from
 * shim/config.def (the same table the shim parses).
 */
#ifndef CGSHIM_TOOLS_OPTIONS_H
#define CGSHIM_TOOLS_OPTIONS_H

#include <stdio.h>

struct opt_row {
	const char *env;     /* CGSHIM_LOG_FILE */
	const char *kind;    /* BOOL, INT, ENUM, STR */
	const char *def;     /* default as written in the table */
	const char *choices; /* "a|b|c", "min..max" or "" */
	const char *doc;
};

extern const struct opt_row opt_rows[];
extern const unsigned opt_nrows;

/* Option spelling of a row: NAME minus CGSHIM_, lower case, '_' -> '-'.
 * Writes into buf (NUL-terminated, truncated to len). */
void opt_name(const struct opt_row *row, char *buf, size_t len);

/* Row whose option name is name (without the leading "--"), or NULL. */
const struct opt_row *opt_find(const char *name, size_t len);

/* 0 if val is acceptable for row, else -1 with a reason written to why. */
int opt_check(const struct opt_row *row, const char *val, char *why, size_t len);

/* `cgshim --help` option section and `cgshim --list-env` Markdown table. */
void opt_print_help(FILE *f);
void opt_print_env_table(FILE *f);

#endif
