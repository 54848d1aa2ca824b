/* shim/config.c -- parse CGSHIM_* from the environment, driven by config.def. */
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <unistd.h>

#include "config.h"
#include "config-values.h"
#include "hot.h"

struct cg_config cg_cfg;
/* The first of hot.h's CG_HOT_DATA in link order (config.c before the
 * other objects with some): the section starts a line. */
int cg_churn_threshold CG_HOT_DATA __attribute__((aligned(64)));

const struct cg_config_row cg_config_rows[] = {
#define CFG(field, name, kind, def, choices, doc) {#name, #kind, def, choices, doc},
#include "config.def"
#undef CFG
};
const unsigned cg_config_nrows = sizeof(cg_config_rows) / sizeof(cg_config_rows[0]);

/* config.h: a malformed value must not be able to start a line of its own
 * on stderr. */
void cg_config_quote(const char *val, char *out, size_t cap)
{
	static const char hex[] = "0123456789abcdef";
	size_t n = 0, i;
	for (i = 0; val[i] && i < 64 && n + 5 < cap; i++) {
		unsigned char c = (unsigned char)val[i];
		if (c >= 0x20 && c < 0x7f && c != '"' && c != '\\') {
			out[n++] = (char)c;
		} else if (c == '"' || c == '\\') {
			out[n++] = '\\';
			out[n++] = (char)c;
		} else {
			out[n++] = '\\';
			out[n++] = 'x';
			out[n++] = hex[c >> 4];
			out[n++] = hex[c & 15];
		}
	}
	if (val[i] && n + 4 <= cap) {
		memcpy(out + n, "...", 3);
		n += 3;
	}
	out[n] = 0;
}

static void config_warn(const char *name, const char *val, const char *why, const char *def)
{
	char buf[512], q[300];
	int n;
	cg_config_quote(val, q, sizeof q);
	n = snprintf(buf, sizeof buf, "cgshim: warning: %s=\"%s\" %s; using the default \"%s\"\n", name, q, why, def);
	if (n > 0)
		(void)!write(2, buf, (size_t)n < sizeof buf ? (size_t)n : sizeof buf - 1);
}

/* The IDs of rules.def (config.c links no rule code: the unit test builds it
 * alone). */
static const char *const config_rule_ids[] = {
#define RULE(e, id, slug, sev, predicted, title) id,
#include "rules.def"
#undef RULE
};

/* One warning per unknown ID in CGSHIM_RULES_OFF (separated by commas or
 * spaces, as rules.c reads it): a misspelt ID would otherwise leave its rule
 * on without a word. Returns the number of unknown IDs. */
static int config_check_rules_off(const char *off)
{
	int bad = 0;
	while (off && *off) {
		size_t n = strcspn(off, ", ");
		int known = 0;
		for (unsigned i = 0; n && i < sizeof config_rule_ids / sizeof config_rule_ids[0]; i++)
			known |= strlen(config_rule_ids[i]) == n && !strncmp(config_rule_ids[i], off, n);
		if (n && !known) {
			/* The ID as written, escaped: a newline in it must not
			 * start a line of its own on stderr (issue 30). */
			char buf[512], id[33], q[160];
			int l;
			memcpy(id, off, n > 32 ? 32 : n);
			id[n > 32 ? 32 : n] = 0;
			cg_config_quote(id, q, sizeof q);
			l = snprintf(buf, sizeof buf,
				     "cgshim: warning: CGSHIM_RULES_OFF names \"%s\", which is not a rule ID "
				     "(%s..%s, docs/rules/README.md); ignored\n",
				     q, config_rule_ids[0],
				     config_rule_ids[sizeof config_rule_ids / sizeof config_rule_ids[0] - 1]);
			if (l > 0)
				(void)!write(2, buf, (size_t)l < sizeof buf ? (size_t)l : sizeof buf - 1);
			bad++;
		}
		off += n;
		off += strspn(off, ", ");
	}
	return bad;
}

#define KIND_BOOL 1
#define KIND_INT 2
#define KIND_ENUM 3
#define KIND_STR 4

/* Returns 0 if set from val, -1 if malformed (then the default is used). */
static int set_field(int kind, void *field, const char *val, const char *choices)
{
	long l;
	int v;
	switch (kind) {
	case KIND_BOOL:
		if ((v = cg_value_bool(val)) < 0)
			return -1;
		*(int *)field = v;
		return 0;
	case KIND_INT:
		if (cg_value_long(val, choices, &l) < 0)
			return -1;
		*(long *)field = l;
		return 0;
	case KIND_ENUM:
		if ((v = cg_value_enum(val, choices)) < 0)
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
#define CFG(field, name, kind, def, choices, doc)                                                                      \
	set_field(KIND_##kind, &cg_cfg.field, def, choices);                                                           \
	val = getenv_fn(#name);                                                                                        \
	if (val && set_field(KIND_##kind, &cg_cfg.field, val, choices) < 0) {                                          \
		bad++;                                                                                                 \
		config_warn(#name, val,                                                                                \
			    KIND_##kind == KIND_ENUM  ? "is not one of " choices                                       \
			    : KIND_##kind == KIND_INT ? "is not an integer in " choices                                \
						      : "is not a boolean (0/1/yes/no/true/false/on/off)",             \
			    def);                                                                                      \
		set_field(KIND_##kind, &cg_cfg.field, def, choices);                                                   \
	}
#include "config.def"
#undef CFG
	bad += config_check_rules_off(cg_cfg.rules_off);
	cg_churn_threshold = cg_cfg.churn_threshold;
	if (cg_cfg.log_level == CG_L_AUTO)
		cg_cfg.log_level = (cg_cfg.log_file && *cg_cfg.log_file) ? CG_L_INFO : CG_L_WARN;
	/* A file is for `cgshim report`, which reads JSONL only: a file sink
	 * writes text only when asked to. "stderr"/"stdout" are not files
	 * (log.c's cg_log_open). */
	if (cg_cfg.log_format == CG_FMT_AUTO)
		cg_cfg.log_format = cg_cfg.log_file && *cg_cfg.log_file && strcmp(cg_cfg.log_file, "stderr") &&
					    strcmp(cg_cfg.log_file, "stdout")
					? CG_FMT_JSONL
					: CG_FMT_TEXT;
	return bad;
}
