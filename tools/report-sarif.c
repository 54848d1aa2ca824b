/*
 * tools/report-sarif.c -- the findings (report-findings.c) as SARIF 2.1.0
 * (rule metadata from shim/rules.def, one result per fingerprint, its
 * location from the symbolised call site, partialFingerprints) and as JUnit
 * XML (one test case per fingerprint: a failure for a new finding, skipped
 * for one the baseline knows; one passing case when there is none).
 */
#include <stdlib.h>
#include <string.h>

#include "report-findings.h"

#ifndef CGSHIM_VERSION
#define CGSHIM_VERSION "unknown"
#endif

static const struct {
	const char *id, *slug, *sev, *title;
} rp_rules[] = {
#define RULE(e, id, slug, sev, predicted, title) {id, slug, sev, title},
#include "rules.def"
#undef RULE
};
#define RP_NRULES (sizeof rp_rules / sizeof rp_rules[0])

static json_t *rp_text(const char *s)
{
	return json_pack("{s:s}", "text", s ? s : "");
}

static const char *rp_level(const char *sev)
{
	return sev && !strcmp(sev, "error") ? "error" : sev && !strcmp(sev, "warn") ? "warning" : "note";
}

static json_t *rp_sarif_rules(void)
{
	json_t *rules = json_array();
	char help[256];
	for (size_t i = 0; i < RP_NRULES; i++) {
		snprintf(help, sizeof help, "docs/rules/%s.md in the cgshim source tree", rp_rules[i].id);
		json_array_append_new(rules,
				      json_pack("{s:s,s:s,s:o,s:o,s:o,s:{s:s}}", "id", rp_rules[i].id, "name",
						rp_rules[i].slug, "shortDescription", rp_text(rp_rules[i].title),
						"fullDescription", rp_text(rp_rules[i].title), "help", rp_text(help),
						"defaultConfiguration", "level", rp_level(rp_rules[i].sev)));
	}
	return rules;
}

static int rp_rule_index(const char *id)
{
	for (size_t i = 0; i < RP_NRULES; i++)
		if (id && !strcmp(rp_rules[i].id, id))
			return (int)i;
	return -1;
}

static json_t *rp_sarif_result(const json_t *f)
{
	json_t *r = json_object(), *loc = json_object(), *phys, *props;
	const char *file = rp_str(f, "file"), *fn = rp_str(f, "function");
	int ri = rp_rule_index(rp_str(f, "rule"));

	json_object_set_new(r, "ruleId", json_string(rp_str(f, "rule")));
	if (ri >= 0)
		json_object_set_new(r, "ruleIndex", json_integer(ri));
	json_object_set_new(r, "level", json_string(rp_level(rp_str(f, "severity"))));
	json_object_set_new(r, "message", rp_text(rp_str(f, "msg")));
	if (file && strcmp(file, "?")) {
		phys = json_pack("{s:{s:s}}", "artifactLocation", "uri", file);
		if (rp_int(f, "line", 0) > 0)
			json_object_set_new(phys, "region",
					    json_pack("{s:I}", "startLine", (json_int_t)rp_int(f, "line", 0)));
		json_object_set_new(loc, "physicalLocation", phys);
	}
	if (fn && strcmp(fn, "?"))
		json_object_set_new(loc, "logicalLocations",
				    json_pack("[{s:s,s:s}]", "fullyQualifiedName", fn, "kind", "function"));
	json_object_set_new(r, "locations", json_pack("[o]", loc));
	json_object_set_new(r, "partialFingerprints", json_pack("{s:s}", "cgshim/v1", rp_str(f, "fingerprint")));
	json_object_set_new(r, "baselineState", json_string(rp_str(f, "baseline")));
	json_object_set_new(r, "occurrenceCount", json_integer(rp_int(f, "count", 1)));
	props = json_pack("{s:s,s:s,s:O,s:O}", "kind", rp_str(f, "kind"), "api", rp_str(f, "api"), "labels",
			  json_object_get(f, "labels"), "pids", json_object_get(f, "pids"));
	if (json_object_get(f, "stack"))
		json_object_set(props, "stack", json_object_get(f, "stack"));
	json_object_set_new(r, "properties", props);
	return r;
}

int rp_sarif_write(const json_t *findings, const char *path)
{
	json_t *results = json_array(), *f, *doc;
	size_t i;
	int rc;

	json_array_foreach(findings, i, f) json_array_append_new(results, rp_sarif_result(f));
	doc = json_pack("{s:s,s:s,s:[{s:{s:{s:s,s:s,s:o}},s:o,s:s}]}", "$schema",
			"https://json.schemastore.org/sarif-2.1.0.json", "version", "2.1.0", "runs", "tool", "driver",
			"name", "cgshim", "version", CGSHIM_VERSION, "rules", rp_sarif_rules(), "results", results,
			"columnKind", "utf16CodeUnits");
	rc = doc ? json_dump_file(doc, path, JSON_INDENT(2) | JSON_PRESERVE_ORDER) : -1;
	json_decref(doc);
	if (rc < 0)
		fprintf(stderr, "cgshim report: cannot write the SARIF file %s\n", path);
	return rc < 0 ? -1 : 0;
}

void rp_xml_esc(FILE *o, const char *s)
{
	for (; s && *s; s++) {
		switch (*s) {
		case '&':
			fputs("&amp;", o);
			break;
		case '<':
			fputs("&lt;", o);
			break;
		case '>':
			fputs("&gt;", o);
			break;
		case '"':
			fputs("&quot;", o);
			break;
		case '\'':
			fputs("&apos;", o);
			break;
		default:
			fputc((unsigned char)*s < 0x20 && *s != '\n' && *s != '\t' ? ' ' : *s, o);
		}
	}
}

int rp_junit_write(const json_t *findings, const char *path)
{
	FILE *o = fopen(path, "w");
	long long failures = 0, skipped = 0;
	size_t i, k;
	json_t *f, *l;

	if (!o) {
		fprintf(stderr, "cgshim report: cannot write the JUnit file %s\n", path);
		return -1;
	}
	json_array_foreach(findings, i, f)
	{
		if (!strcmp(rp_str(f, "baseline"), "new"))
			failures++;
		else
			skipped++;
	}
	fprintf(o, "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<testsuites>\n");
	fprintf(o, "  <testsuite name=\"cgshim\" tests=\"%zu\" failures=\"%lld\" errors=\"0\" skipped=\"%lld\">\n",
		json_array_size(findings) ? json_array_size(findings) : 1, failures, skipped);
	if (!json_array_size(findings))
		fputs("    <testcase classname=\"cgshim\" name=\"no findings\"/>\n", o);
	json_array_foreach(findings, i, f)
	{
		fputs("    <testcase classname=\"cgshim.", o);
		rp_xml_esc(o, rp_str(f, "rule"));
		fputs("\" name=\"", o);
		rp_xml_esc(o, rp_str(f, "rule"));
		fputs(" ", o);
		rp_xml_esc(o, rp_str(f, "name"));
		fputs(" at ", o);
		rp_xml_esc(o, rp_str(f, "site"));
		fputs("\">\n", o);
		if (!strcmp(rp_str(f, "baseline"), "new")) {
			fputs("      <failure type=\"", o);
			rp_xml_esc(o, rp_str(f, "severity"));
			fputs("\" message=\"", o);
			rp_xml_esc(o, rp_str(f, "msg"));
			fputs("\">", o);
			fprintf(o, "%s x%lld, fingerprint %s, kind ", rp_str(f, "rule"), rp_int(f, "count", 0),
				rp_str(f, "fingerprint"));
			rp_xml_esc(o, rp_str(f, "kind"));
			json_array_foreach(json_object_get(f, "labels"), k, l)
			{
				fputs("\nlabels: ", o);
				rp_xml_esc(o, json_string_value(l));
			}
			fputs("\nrule page: ", o);
			rp_xml_esc(o, rp_str(f, "doc"));
			fputs("</failure>\n", o);
		} else {
			fputs("      <skipped message=\"in the baseline\"/>\n", o);
		}
		fputs("    </testcase>\n", o);
	}
	fputs("  </testsuite>\n</testsuites>\n", o);
	if (fclose(o) != 0) {
		fprintf(stderr, "cgshim report: cannot write the JUnit file %s\n", path);
		return -1;
	}
	return 0;
}
