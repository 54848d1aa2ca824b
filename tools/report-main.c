/*
 * tools/report-main.c -- the command line of `cgshim report`: options,
 * loading, and which rendering runs (text, --json, --dot, --perfetto,
 * --html), with the CI outputs of report-findings.c beside any of the
 * analysis renderings (--fail-on, --baseline, --write-baseline, --sarif,
 * --junit).
 */
#include <getopt.h>
#include <stdio.h>
#include <string.h>

#include "report-findings.h"
#include "report.h"

static void report_usage(FILE *f)
{
	fputs("usage: cgshim report [--json] LOG...\n"
	      "       cgshim report --dot GRAPH|update:N [-o FILE.dot|.svg|.png|.pdf|...] LOG...\n"
	      "       cgshim report --perfetto OUT.json LOG...\n"
	      "       cgshim report --html OUT.html LOG...\n"
	      "\n"
	      "Reads JSONL logs written with CGSHIM_LOG_FORMAT=jsonl (several files, processes\n"
	      "and ranks are merged and ordered by time); - is standard input; gzip is read\n"
	      "as it is (LOG.jsonl.gz, or zcat-free: gzip on standard input).\n"
	      "  (default)          text: summary, violations, memory tables, failing calls\n"
	      "  --json             the same content as one JSON document (exact integers)\n"
	      "  --dot GRAPH        Graphviz DOT of one graph: its handle as logged, or first/last;\n"
	      "                     needs CGSHIM_LOG=debug for the nodes, else only its allocations\n"
	      "  --dot update:N     the Nth failing update (CGS001; or update:last): the exec's\n"
	      "                     graph and the new one side by side, differences in red,\n"
	      "                     the reason on the picture (node records at the default level)\n"
	      "  -o FILE            output file for --dot; its extension picks the type: .dot/.gv\n"
	      "                     DOT text, .svg .png .pdf .ps .eps .jpg .jpeg .gif by dot -T<ext>\n"
	      "  --perfetto OUT     Chrome trace-event JSON for ui.perfetto.dev / chrome://tracing\n"
	      "  --html OUT.html    one self-contained page with every section of the text report,\n"
	      "                     charts, the rule pages, graphs and failing updates drawn by\n"
	      "                     dot, and OUT.perfetto.json beside it\n"
	      "CI (any of them with text, --json or --html; docs/ci.md):\n"
	      "  --fail-on=error|warn  exit 3 when a new finding has that severity or worse\n"
	      "  --baseline B.json     findings B lists are known: only new ones are shown and\n"
	      "                        counted; B's entries that matched nothing are listed as stale\n"
	      "  --write-baseline B.json  write this run's findings (fingerprints) to B\n"
	      "  --sarif OUT.sarif     SARIF 2.1.0, one result per fingerprint\n"
	      "  --junit OUT.xml       JUnit XML, one test case per fingerprint\n"
	      "Exit status: 0 if a record was read, 2 if no usable record, 1 on usage errors\n"
	      "or a file that could not be read or written, 3 for --fail-on.\n",
	      f);
}

int report_main(int argc, char **argv)
{
	const char *dot = NULL, *out = NULL, *perfetto = NULL, *html = NULL;
	struct rp_ci ci = {0};
	int i, json = 0, rc = 0, nfiles;
	struct rp_log log;
	json_t *stale;
	char **files;

	/* Options anywhere (GNU permutation): `report LOG --json` is --json. */
	static const struct option longs[] = {
	    {"help", no_argument, NULL, 'h'},
	    {"json", no_argument, NULL, 'j'},
	    {"dot", required_argument, NULL, 'd'},
	    {"output", required_argument, NULL, 'o'},
	    {"perfetto", required_argument, NULL, 'p'},
	    {"html", required_argument, NULL, 'H'},
	    {"fail-on", required_argument, NULL, 'F'},
	    {"baseline", required_argument, NULL, 'B'},
	    {"write-baseline", required_argument, NULL, 'W'},
	    {"sarif", required_argument, NULL, 'S'},
	    {"junit", required_argument, NULL, 'J'},
	    {NULL, 0, NULL, 0},
	};
	int c;

	opterr = 0;
	optind = 1;
	while ((c = getopt_long(argc, argv, ":ho:", longs, NULL)) != -1) {
		switch (c) {
		case 'h':
			report_usage(stdout);
			return 0;
		case 'j':
			json = 1;
			break;
		case 'd':
			dot = optarg;
			break;
		case 'o':
			out = optarg;
			break;
		case 'p':
			perfetto = optarg;
			break;
		case 'H':
			html = optarg;
			break;
		case 'F':
			ci.fail_on = optarg;
			break;
		case 'B':
			ci.baseline = optarg;
			break;
		case 'W':
			ci.write_baseline = optarg;
			break;
		case 'S':
			ci.sarif = optarg;
			break;
		case 'J':
			ci.junit = optarg;
			break;
		case ':':
			fprintf(stderr, "cgshim report: option %s needs a value\n", argv[optind - 1]);
			report_usage(stderr);
			return 1;
		default:
			fprintf(stderr, "cgshim report: unknown or ambiguous option %s\n", argv[optind - 1]);
			report_usage(stderr);
			return 1;
		}
	}
	i = optind;
	files = argv + i;
	nfiles = argc - i;
	if (nfiles <= 0) {
		fprintf(stderr, "cgshim report: no log file given\n");
		report_usage(stderr);
		return 1;
	}
	if ((dot != NULL) + (perfetto != NULL) + (html != NULL) + json > 1) {
		fprintf(stderr, "cgshim report: --json, --dot, --perfetto and --html exclude each other\n");
		return 1;
	}
	if (out && !dot) {
		fprintf(stderr, "cgshim report: -o goes with --dot\n");
		return 1;
	}
	if (rp_dot_check_output(out) < 0 || rp_ci_check(&ci))
		return 1;
	if ((dot || perfetto) && (ci.fail_on || ci.baseline || ci.write_baseline || ci.sarif || ci.junit)) {
		fprintf(stderr, "cgshim report: --fail-on, --baseline, --write-baseline, --sarif and --junit go with "
				"the text, --json or --html report\n");
		return 1;
	}

	rp_load(&log, files, nfiles);
	if (log.n == 0) {
		fprintf(stderr, "cgshim report: no usable record in %d file%s\n", nfiles, nfiles == 1 ? "" : "s");
		rp_free(&log);
		return 2;
	}
	stale = rp_symbolise(&log);
	if (dot) {
		rc = rp_dot(&log, dot, out);
	} else if (perfetto) {
		rc = rp_perfetto(&log, perfetto);
	} else {
		json_t *doc = rp_analyse(&log);
		int ci_rc = rp_ci_run(&log, doc, &ci);
		rp_progress(NULL, -1, 0); /* the progress line gives way to the output */
		json_object_set(doc, "stale_modules", stale);
		if (html) {
			rc = rp_html(&log, doc, html);
		} else if (json) {
			if (json_dumpf(doc, stdout, JSON_INDENT(2) | JSON_PRESERVE_ORDER) < 0)
				rc = 1;
			fputc('\n', stdout);
		} else {
			rp_print_text(stdout, doc);
			rp_ci_print(stdout, doc);
		}
		if (!rc)
			rc = ci_rc;
		json_decref(doc);
	}
	rp_progress(NULL, -1, 0);
	rp_free(&log); /* stale belongs to the log */
	if (fflush(stdout) != 0) {
		perror("cgshim report: stdout");
		rc = 1;
	}
	return rc;
}
