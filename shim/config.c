/* shim/config.c -- parse CGSHIM_* from the environment, driven by config.def. */
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <unistd.h>

#include "config.h"

struct cg_config cg_cfg;

const struct cg_config_row cg_config_rows[] = {
#define CFG(field, name, kind, def, choices, doc) {#name, #kind, def, choices, doc},
#include "config.def"
#undef CFG
};
const unsigned cg_config_nrows = sizeof(cg_config_rows) / sizeof(cg_config_rows[0]);

static void config_warn(const char *name, const char *val, const char *why, const char *def)
{
	char buf[512];
	int n = snprintf(buf, sizeof buf, "cgshim: warning: %s=\"%.64s\" %s; using the default \"%s\"\n",
			 name, val, why, def);
	if (n > 0)
		(void)!write(2, buf, (size_t)n < sizeof buf ? (size_t)n : sizeof buf - 1);
}

/* 1/0 on success, -1 on malformed. */
static int parse_bool(const char *s)
{
	static const char *yes[] = {"1", "yes", "true", "on"}, *no[] = {"0", "no", "false", "off"};
	for (unsigned i = 0; i < 4; i++) {
		if (!strcasecmp(s, yes[i]))
			return 1;
		if (!strcasecmp(s, no[i]))
			return 0;
	}
	return -1;
}

/* Whole-string decimal within [lo, hi]: rejects "", "10x", overflow. */
static int parse_long(const char *s, long lo, long hi, long *out)
{
	char *end;
	long v;
	if (!*s)
		return -1;
	errno = 0;
	v = strtol(s, &end, 10);
	if (errno || *end || v < lo || v > hi)
		return -1;
	*out = v;
	return 0;
}

/* Index of s among "a|b|c" choices, or -1. */
static int parse_enum(const char *s, const char *choices)
{
	int idx = 0;
	size_t len = strlen(s);
	const char *p = choices;
	while (*p) {
		const char *bar = strchr(p, '|');
		size_t n = bar ? (size_t)(bar - p) : strlen(p);
		if (n == len && !strncasecmp(p, s, n))
			return idx;
		idx++;
		p += n + (bar ? 1 : 0);
	}
	return -1;
}

static void parse_range(const char *choices, long *lo, long *hi)
{
	*lo = LONG_MIN;
	*hi = LONG_MAX;
	if (choices && *choices)
		sscanf(choices, "%ld..%ld", lo, hi);
}

#define KIND_BOOL 1
#define KIND_INT 2
#define KIND_ENUM 3
#define KIND_STR 4

/* Returns 0 if set from val, -1 if malformed (then the default is used). */
static int set_field(int kind, void *field, const char *val, const char *choices)
{
	long lo, hi, l;
	int v;
	switch (kind) {
	case KIND_BOOL:
		if ((v = parse_bool(val)) < 0)
			return -1;
		*(int *)field = v;
		return 0;
	case KIND_INT:
		parse_range(choices, &lo, &hi);
		if (parse_long(val, lo, hi, &l) < 0)
			return -1;
		*(long *)field = l;
		return 0;
	case KIND_ENUM:
		if ((v = parse_enum(val, choices)) < 0)
			return -1;
		*(int *)field = v;
		return 0;
	default:
		*(const char **)field = val;
		return 0;
	}
}

int cg_config_load(const char *(*getenv_fn)(const char *))
{
	int bad = 0;
	const char *val;
#define CFG(field, name, kind, def, choices, doc)                                                  \
	set_field(KIND_##kind, &cg_cfg.field, def, choices);                                       \
	val = getenv_fn(#name);                                                                    \
	if (val && set_field(KIND_##kind, &cg_cfg.field, val, choices) < 0) {                     \
		bad++;                                                                             \
		config_warn(#name, val,                                                            \
			    KIND_##kind == KIND_ENUM   ? "is not one of " choices                      \
			    : KIND_##kind == KIND_INT  ? "is not an integer in " choices               \
						       : "is not a boolean (0/1/yes/no/true/false/on/off)", \
			    def);                                                                  \
		set_field(KIND_##kind, &cg_cfg.field, def, choices);                               \
	}
#include "config.def"
#undef CFG
	if (cg_cfg.log_level == CG_L_AUTO)
		cg_cfg.log_level = (cg_cfg.log_file && *cg_cfg.log_file) ? CG_L_INFO : CG_L_WARN;
	return bad;
}
