/*
 * tools/cgshim.c -- the launcher: `cgshim [options] [--] command args...`
 * turns options into CGSHIM_* variables, prepends libcgshim.so to
 * LD_PRELOAD, runs the command and exits with its status.
 * `cgshim report LOG...` reads the logs (tools/report.c).
 */
#include <errno.h>
#include <getopt.h>
#include <glob.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "cgshim/record.h"
#include "launch.h"
#include "options.h"
#include "tally.h"
#include "cgshim/record.h"
#ifdef CGSHIM_HAVE_REPORT
#include "report.h"
#endif

#ifndef CGSHIM_VERSION
#define CGSHIM_VERSION "unknown"
#endif

#define DEFAULT_LOG_FILE "cgshim-%p.jsonl"

static void usage(FILE *f)
{
	fputs("usage: cgshim [options] [--] command [args...]\n"
	      "       cgshim report [report options] LOG...   (cgshim report --help)\n"
	      "       cgshim --list-env | --version | --help\n"
	      "\n"
	      "Runs command with libcgshim.so preloaded (prepended to LD_PRELOAD). Without a\n"
	      "log option the shim writes JSONL to " DEFAULT_LOG_FILE " in the current\n"
	      "directory, listed when the command ends; read it with `cgshim report`.\n"
	      "Exits with the command's status (128+N if killed by signal N, 127 if not found),\n"
	      "or with --error-exitcode's N when a process of the tree recorded an error-level\n"
	      "finding. The last line on stderr counts the tree's findings (ERROR SUMMARY).\n"
	      "\n"
	      "Launcher options:\n"
	      "  --stderr                         keep the shim's default sink: text on stderr\n"
	      "  --list-env                       print the CGSHIM_* table as Markdown\n"
	      "  --version, --help\n"
	      "\n"
	      "Shim options (each sets the environment variable shown for the command;\n"
	      "--NAME VALUE works too; the variable CGSHIM_LIB overrides the library path):\n",
	      f);
	opt_print_help(f);
}

/* Whether log file path holds a start record of this run: one whose "run"
 * is token (the shim writes CGSHIM_TALLY_FILE there, unique per launch),
 * in JSONL or the text format. A token that would need escaping, or none,
 * cannot be looked for: then any file counts. */
static int log_of_run(const char *path, const char *token)
{
	char want[2][4200], *line = NULL;
	size_t cap = 0, i;
	long lines = 0;
	int found = 0;
	FILE *f;

	if (!token || !*token)
		return 1;
	for (i = 0; token[i]; i++)
		if (!strchr("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789/._-+", token[i]))
			return 1;
	snprintf(want[0], sizeof want[0], "\"run\":\"%s\"", token);
	snprintf(want[1], sizeof want[1], " run=\"%s\"", token);
	if (!(f = fopen(path, "r")))
		return 0;
	/* the start records: each process's first line in the file */
	while (!found && ++lines < (1L << 20) && getline(&line, &cap, f) > 0)
		if (strstr(line, "\"ev\":\"" CGSHIM_EV_START "\"") || strstr(line, " " CGSHIM_EV_START " "))
			found = strstr(line, want[0]) || strstr(line, want[1]);
	free(line);
	fclose(f);
	return found;
}

/*
 * List the log files the shim wrote: the template with %p and %r as
 * wildcards, keeping files modified since the launch (a forking child writes
 * one file per process) that hold a process of this run (log_of_run: a run
 * of a second before wrote files that are new enough too).
 */
static char *list_logs(const char *tmpl, const struct timespec *since)
{
	const char *token = getenv("CGSHIM_TALLY_FILE");
	char pat[4096];
	size_t i, o = 0;
	glob_t g;
	int found = 0;
	char *names = NULL;
	size_t nlen = 0;
	FILE *ns = open_memstream(&names, &nlen);

	for (i = 0; tmpl[i] && o + 2 < sizeof pat; i++) {
		if (tmpl[i] == '%' && (tmpl[i + 1] == 'p' || tmpl[i + 1] == 'r')) {
			pat[o++] = '*';
			i++;
		} else if (strchr("*?[\\", tmpl[i])) {
			pat[o++] = '\\';
			pat[o++] = tmpl[i];
		} else {
			pat[o++] = tmpl[i];
		}
	}
	pat[o] = '\0';
	if (glob(pat, 0, NULL, &g) == 0) {
		for (i = 0; i < g.gl_pathc; i++) {
			struct stat st;
			if (stat(g.gl_pathv[i], &st) < 0 || !S_ISREG(st.st_mode))
				continue;
			if (st.st_mtim.tv_sec < since->tv_sec ||
			    (st.st_mtim.tv_sec == since->tv_sec && st.st_mtim.tv_nsec < since->tv_nsec) ||
			    !log_of_run(g.gl_pathv[i], token))
				continue;
			fprintf(stderr, "%s%s", found ? ", " : "cgshim: log written to ", g.gl_pathv[i]);
			if (ns)
				fprintf(ns, "%s%s", found ? " " : "", g.gl_pathv[i]);
			found++;
		}
		globfree(&g);
	}
	if (found)
		fputc('\n', stderr);
	else
		fprintf(stderr, "cgshim: no log file matching %s was written\n", tmpl);
	if (ns)
		fclose(ns);
	/* What the ERROR SUMMARY line tells to read: the files, or their
	 * pattern when there are many (a test suite's children). */
	if (found > 4 && names) {
		free(names);
		names = strdup(pat);
	}
	if (!found) {
		free(names);
		names = NULL;
	}
	return names;
}

/* CGSHIM_ERROR_EXITCODE as the launcher applies it (0: the program's own
 * status); a malformed value was already refused by the option check when
 * it came as --error-exitcode, and is ignored with a word when it came from
 * the environment. */
static int error_exitcode(void)
{
	const char *v = getenv("CGSHIM_ERROR_EXITCODE");
	char *end;
	long l;

	if (!v || !*v)
		return 0;
	l = strtol(v, &end, 10);
	if (*end || l < 0 || l > 255) {
		fprintf(stderr, "cgshim: CGSHIM_ERROR_EXITCODE=\"%s\" is not an integer in 0..255; ignored\n", v);
		return 0;
	}
	return (int)l;
}

static int set_option(const struct opt_row *row, const char *val)
{
	char why[256];

	if (opt_check(row, val, why, sizeof why) < 0) {
		fprintf(stderr, "cgshim: %s=\"%s\" %s\n", row->env, val, why);
		return -1;
	}
	if (setenv(row->env, val, 1) < 0) {
		fprintf(stderr, "cgshim: setenv %s: %s\n", row->env, strerror(errno));
		return -1;
	}
	return 0;
}

/* Option codes above the characters: OPT_ROW + i is opt_rows[i]. */
enum { OPT_STDERR = 256, OPT_LIST_ENV, OPT_VERSION, OPT_ROW };
/* config.def has 13 rows; a table past this fails the launcher-options test. */
#define OPT_MAX_ROWS 64

/* Exit status of the launcher when parse_options ends it early. */
static int launch_status;

/*
 * Read the launcher's options with getopt_long, stopping at the command
 * ("+": its own options are not ours). Sets *first to the command's index.
 * Returns -1 to go on and launch, else 0 with launch_status set (--help,
 * --version, --list-env, or a usage error). A value taken from the next
 * argument is never "--": `cgshim --log -- cmd` is a missing value, not
 * the level "--".
 */
static int parse_options(int argc, char **argv, int *first, int *use_stderr, int *log_opt, int *fmt_opt,
			 const char **log_tmpl)
{
	static char names[OPT_MAX_ROWS][64];
	static struct option longs[OPT_MAX_ROWS + 5] = {
	    {"help", no_argument, NULL, 'h'},
	    {"version", no_argument, NULL, OPT_VERSION},
	    {"list-env", no_argument, NULL, OPT_LIST_ENV},
	    {"stderr", no_argument, NULL, OPT_STDERR},
	};
	unsigned r, n = 4;
	int c;

	for (r = 0; r < opt_nrows && r < OPT_MAX_ROWS; r++, n++) {
		opt_name(&opt_rows[r], names[r], sizeof names[r]);
		longs[n].name = names[r];
		longs[n].has_arg = !strcmp(opt_rows[r].kind, "BOOL") ? optional_argument : required_argument;
		longs[n].flag = NULL;
		longs[n].val = OPT_ROW + (int)r;
	}
	memset(&longs[n], 0, sizeof longs[n]);
	opterr = 0;
	optind = 1;
	launch_status = 1;
	while ((c = getopt_long(argc, argv, "+:h", longs, NULL)) != -1) {
		const struct opt_row *row;
		const char *val;

		switch (c) {
		case 'h':
			usage(stdout);
			launch_status = 0;
			return 0;
		case OPT_VERSION:
			printf("cgshim %s (log format v%d)\n", CGSHIM_VERSION, CGSHIM_RECORD_VERSION);
			launch_status = 0;
			return 0;
		case OPT_LIST_ENV:
			opt_print_env_table(stdout);
			launch_status = 0;
			return 0;
		case OPT_STDERR:
			*use_stderr = 1;
			continue;
		case ':':
			fprintf(stderr, "cgshim: option %s needs a value\n", argv[optind - 1]);
			return 0;
		case '?':
			fprintf(stderr, "cgshim: unknown or ambiguous option %s (cgshim --help)\n", argv[optind - 1]);
			return 0;
		}
		row = &opt_rows[c - OPT_ROW];
		val = optarg ? optarg : "1"; /* a BOOL alone */
		if (optarg && optarg == argv[optind - 1] && !strcmp(optarg, "--")) {
			fprintf(stderr, "cgshim: option %s needs a value before \"--\"\n", argv[optind - 2]);
			return 0;
		}
		if (set_option(row, val) < 0)
			return 0;
		if (!strcmp(row->env, "CGSHIM_LOG_FILE")) {
			*log_opt = 1;
			*log_tmpl = *val ? val : NULL;
		}
		if (!strcmp(row->env, "CGSHIM_LOG_FORMAT"))
			*fmt_opt = 1;
	}
	*first = optind;
	return -1;
}

int main(int argc, char **argv)
{
	int i, rc, use_stderr = 0, log_opt = 0, fmt_opt = 0;
	const char *log_tmpl = NULL;
	struct timespec start;
	struct tally tally;
	char *lib, *logs = NULL;

	if (argc > 1 && !strcmp(argv[1], "report")) {
#ifdef CGSHIM_HAVE_REPORT
		return report_main(argc - 1, argv + 1);
#else
		fprintf(stderr, "cgshim: this build has no report (built without jansson or libdw); "
				"copy the logs to a host with the full build\n");
		return 1;
#endif
	}

	if (parse_options(argc, argv, &i, &use_stderr, &log_opt, &fmt_opt, &log_tmpl) >= 0)
		return launch_status;
	if (i >= argc) {
		fprintf(stderr, "cgshim: no command given\n");
		usage(stderr);
		return 1;
	}
	if (use_stderr && log_opt) {
		fprintf(stderr, "cgshim: --stderr and --log-file exclude each other\n");
		return 1;
	}

	/* A log file named *.jsonl is what `cgshim report` reads: write it so
	 * unless a format was asked for. */
	if (log_opt && log_tmpl && !fmt_opt && !getenv("CGSHIM_LOG_FORMAT")) {
		size_t l = strlen(log_tmpl);
		if (l > 6 && !strcmp(log_tmpl + l - 6, ".jsonl"))
			setenv("CGSHIM_LOG_FORMAT", "jsonl", 1);
	}
	if (use_stderr) {
		unsetenv("CGSHIM_LOG_FILE");
		log_tmpl = NULL;
	} else if (!log_opt) {
		const char *env = getenv("CGSHIM_LOG_FILE");
		if (env && *env) {
			log_tmpl = env;
		} else {
			setenv("CGSHIM_LOG_FILE", DEFAULT_LOG_FILE, 1);
			log_tmpl = DEFAULT_LOG_FILE;
			if (!fmt_opt && !getenv("CGSHIM_LOG_FORMAT"))
				setenv("CGSHIM_LOG_FORMAT", "jsonl", 1);
		}
	}

	lib = launch_find_lib();
	if (!lib || access(lib, R_OK) < 0) {
		fprintf(stderr, "cgshim: cannot read %s (set CGSHIM_LIB to libcgshim.so)\n",
			lib ? lib : "libcgshim.so");
		free(lib);
		return 1;
	}
	if (launch_preload(lib) < 0) {
		fprintf(stderr, "cgshim: cannot set LD_PRELOAD: %s\n", strerror(errno));
		free(lib);
		return 1;
	}
	/* NVTX ranges become labels (shim/labels.c): the shim is the NVTX
	 * injection library, unless another tool (Nsight Systems) is. */
	if (!getenv("NVTX_INJECTION64_PATH"))
		setenv("NVTX_INJECTION64_PATH", lib, 1);
	free(lib);

	clock_gettime(CLOCK_REALTIME, &start);
	/* File times have the kernel's coarse clock granularity: step back a
	 * little so a file written right at the start still counts. */
	start.tv_sec -= 1;
	tally_begin(&tally);
	rc = launch_run(argv + i);
	tally_end(&tally);
	if (rc == 126 || rc == 127) /* nothing ran: no log, no summary */
		return rc;
	if (log_tmpl)
		logs = list_logs(log_tmpl, &start);
	tally_print(&tally, logs);
	free(logs);
	free(tally.path);
	return tally_status(&tally, rc, error_exitcode());
}
