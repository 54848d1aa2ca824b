/* shim/config.h -- the parsed CGSHIM_* configuration (read-only after init). */
#ifndef CGSHIM_CONFIG_H
#define CGSHIM_CONFIG_H

/* The enums of config.def's ENUM rows (its CFG_ENUM rows); an ENUM field
 * holds the index of its choice. CG_FMT_AUTO is resolved by cg_config_load
 * (jsonl to a file, else text). */
/* clang-format off */
/* BEGIN generated from config.def by tests/lists_check.py --write */
enum cg_level { CG_L_AUTO, CG_L_OFF, CG_L_ERROR, CG_L_WARN, CG_L_HINT, CG_L_INFO, CG_L_DEBUG, CG_L_TRACE };
#define CG_L_NAMES { "auto", "off", "error", "warn", "hint", "info", "debug", "trace" }
enum cg_format { CG_FMT_AUTO, CG_FMT_TEXT, CG_FMT_JSONL };
#define CG_FMT_NAMES { "auto", "text", "jsonl" }
enum cg_meminfo { CG_MEMINFO_AUTO, CG_MEMINFO_ON, CG_MEMINFO_OFF };
#define CG_MEMINFO_NAMES { "auto", "on", "off" }
enum cg_on_violation { CG_VIOL_LOG, CG_VIOL_ABORT };
#define CG_VIOL_NAMES { "log", "abort" }
enum cg_on_update { CG_UPD_LOG, CG_UPD_REINSTANTIATE, CG_UPD_ABORT };
#define CG_UPD_NAMES { "log", "reinstantiate", "abort" }
enum cg_capture_mode { CG_CAPMODE_KEEP, CG_CAPMODE_THREAD_LOCAL, CG_CAPMODE_RELAXED };
#define CG_CAPMODE_NAMES { "keep", "thread_local", "relaxed" }
/* END generated */
/* clang-format on */

struct cg_config {
#define CFG(field, name, kind, def, choices, doc) CFG_TYPE_##kind field;
#define CFG_TYPE_BOOL int
#define CFG_TYPE_INT long
#define CFG_TYPE_ENUM int
#define CFG_TYPE_STR const char *
#include "config.def"
#undef CFG
};

struct cg_config_row {
	const char *name, *kind, *def, *choices, *doc;
};

/* Filled once by cg_config_load() from the constructor; never written after. */
extern struct cg_config cg_cfg;
/* cg_cfg.churn_threshold's copy in the hot data (hot.h), set with it: a
 * capture's end and an instantiation read it every cycle, and cg_cfg's
 * line of it holds nothing else a capture loop reads (issue 36). */
extern int cg_churn_threshold;
extern const struct cg_config_row cg_config_rows[];
extern const unsigned cg_config_nrows;

/*
 * Parse the environment into cg_cfg. Malformed values get one warning each
 * (written to stderr through write(2)) and the default. Returns the number of
 * malformed values. getenv_fn lets tests feed their own environment.
 */
int cg_config_load(const char *(*getenv_fn)(const char *));

/* val as it may be echoed on a line of its own (a malformed setting, a log
 * path): printable ASCII kept (quote and backslash escaped), every other
 * byte as \xNN, at most 64 input bytes then "...". A newline in an
 * environment value must not start a forged line (issue 30). */
void cg_config_quote(const char *val, char *out, size_t cap);

#endif
