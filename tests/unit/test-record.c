/* tests/unit/test-record.c -- the record builder: JSON validity, escaping,
 * truncation of over-long records, level filtering, whole-line writes. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "config.h"
#include "log.h"
#include "state.h"

/* init.c is not linked: the two things log.c needs from it. */
CG_TLS struct cg_tls cg_tls;
int cg_gettid(void)
{
	return 4242;
}

static char path[64];

static int setup(void **state)
{
	(void)state;
	strcpy(path, "/tmp/cgshim-rec-XXXXXX");
	int fd = mkstemp(path);
	close(fd);
	memset(&cg_cfg, 0, sizeof cg_cfg);
	cg_cfg.log_file = path;
	cg_cfg.log_format = CG_FMT_JSONL;
	cg_log_level = CG_L_INFO;
	assert_int_equal(cg_log_open(), 0);
	return 0;
}

static char *slurp(void)
{
	static char buf[65536];
	FILE *f;
	cg_log_flush_thread(); /* info records are batched per thread */
	f = fopen(path, "r");
	size_t n = fread(buf, 1, sizeof buf - 1, f);
	fclose(f);
	buf[n] = 0;
	return buf;
}

static void test_json_fields(void **state)
{
	struct cg_rec r;
	(void)state;
	rec_begin(&r, CG_L_INFO, "call");
	rec_str(&r, "api", "cuGraphLaunch");
	rec_hex(&r, "exec", 0xabcULL);
	rec_int(&r, "rc", -3);
	rec_bool(&r, "routed", 1);
	rec_open(&r, "site", '[');
	rec_elem_str(&r, "py:a.py:1:f");
	rec_elem_str(&r, "lib.so+0x10");
	rec_close(&r, ']');
	rec_u64(&r, "size", 1ull << 40);
	rec_end(&r);
	char *s = slurp();
	assert_non_null(strstr(s, "{\"v\":1,\"ev\":\"call\",\"seq\":"));
	assert_non_null(strstr(s, ",\"pid\":"));
	assert_non_null(strstr(s,
			       ",\"tid\":4242,\"api\":\"cuGraphLaunch\",\"exec\":\"0xabc\",\"rc\":-3,"
			       "\"routed\":true,\"site\":[\"py:a.py:1:f\",\"lib.so+0x10\"],\"size\":1099511627776}\n"));
	unlink(path);
}

static void test_escaping(void **state)
{
	struct cg_rec r;
	(void)state;
	rec_begin(&r, CG_L_INFO, "warning");
	rec_str(&r, "msg", "quote\" back\\slash new\nline tab\t");
	rec_end(&r);
	assert_non_null(strstr(slurp(), "\"msg\":\"quote\\\" back\\\\slash new\\u000aline tab\\u0009\"}\n"));
	unlink(path);
}

/* Bytes that are not UTF-8 (an executable name can hold any) become
 * \u00XX, so the line stays valid JSON; well-formed UTF-8 is kept. */
static void test_escaping_non_utf8(void **state)
{
	struct cg_rec r;
	(void)state;
	rec_begin(&r, CG_L_INFO, "start");
	/* é (2 bytes), € (3), U+1F600 (4), then a lone 0xff, a stray
	 * continuation 0x80, an overlong 0xc0 0xaf, a surrogate 0xed 0xa0 0x80
	 * and a sequence cut short by the end of the string. */
	rec_str(&r, "exe", "/bin/\xc3\xa9\xe2\x82\xac\xf0\x9f\x98\x80-\xff\x80\xc0\xaf\xed\xa0\x80\xe2\x82");
	rec_end(&r);
	assert_non_null(strstr(slurp(), "\"exe\":\"/bin/\xc3\xa9\xe2\x82\xac\xf0\x9f\x98\x80-\\u00ff\\u0080"
					"\\u00c0\\u00af\\u00ed\\u00a0\\u0080\\u00e2\\u0082\"}\n"));
	unlink(path);
}

static void test_level_filter(void **state)
{
	struct cg_rec r;
	(void)state;
	rec_begin(&r, CG_L_TRACE, "call");
	rec_str(&r, "api", "x");
	rec_end(&r);
	assert_string_equal(slurp(), "");
	unlink(path);
}

static void test_truncation_keeps_valid_json(void **state)
{
	struct cg_rec r;
	char big[600];
	(void)state;
	memset(big, 'x', sizeof big - 1);
	big[sizeof big - 1] = 0;
	rec_begin(&r, CG_L_INFO, "violation");
	rec_open(&r, "site", '[');
	for (int i = 0; i < 20; i++)
		rec_elem_str(&r, big);
	rec_close(&r, ']');
	rec_end(&r);
	char *s = slurp();
	size_t n = strlen(s);
	assert_true(n < CG_REC_MAX + 1);
	assert_int_equal(s[n - 1], '\n');
	assert_non_null(strstr(s, "\"trunc\":true}"));
	/* brackets balance outside strings */
	int sq = 0, cu = 0, instr = 0;
	for (size_t i = 0; i < n; i++) {
		char c = s[i];
		if (instr) {
			if (c == '\\')
				i++;
			else if (c == '"')
				instr = 0;
			continue;
		}
		if (c == '"')
			instr = 1;
		sq += c == '[' ? 1 : c == ']' ? -1 : 0;
		cu += c == '{' ? 1 : c == '}' ? -1 : 0;
	}
	assert_int_equal(sq, 0);
	assert_int_equal(cu, 0);
	assert_int_equal(instr, 0);
	unlink(path);
}

static void test_text_format(void **state)
{
	struct cg_rec r;
	(void)state;
	cg_cfg.log_format = CG_FMT_TEXT;
	rec_begin(&r, CG_L_WARN, "violation");
	rec_str(&r, "rule", "CGS004");
	rec_str(&r, "name", "second-instantiation");
	rec_str(&r, "api", "cuGraphInstantiateWithFlags");
	rec_word(&r, "via", "cudaGraphInstantiate");
	rec_str(&r, "msg", "a \"second\" one\nforged");
	rec_int(&r, "predicted_rc", 801);
	rec_str(&r, "predicted_err", "CUDA_ERROR_NOT_SUPPORTED");
	rec_hex(&r, "graph", 0x1234);
	rec_int(&r, "graph_id", 7);
	rec_int(&r, "cuda_graph_id", 5);
	rec_int(&r, "node_index", 3);
	rec_open(&r, "site", '[');
	rec_elem_str(&r, "app+0x10");
	rec_elem_str(&r, "libc.so.6:__libc_start_main+0x85");
	rec_close(&r, ']');
	rec_str(&r, "doc", "docs/rules/CGS004.md");
	rec_end(&r);
	char *s = slurp();
	/* for people (shim/log-text.c): the header names the rule and the
	 * runtime call, indented lines the rest; no value forges a line */
	assert_non_null(strstr(s, " warn violation CGS004 second-instantiation in cudaGraphInstantiate\n"
				  "    a \"second\" one\\x0aforged\n"
				  "    predicted: the driver answers CUDA_ERROR_NOT_SUPPORTED (801)\n"
				  "    objects: graph 0x1234 #7 (driver's id 5)\n"
				  "    node_index: 3\n"
				  "    site: app+0x10\n"
				  "          libc.so.6:__libc_start_main+0x85\n"
				  "    driver entry point: cuGraphInstantiateWithFlags\n"
				  "    rule page: docs/rules/CGS004.md\n"));
	/* no runtime hook saw the call (a static cudart): the header names the
	 * runtime call from the entry point (rt-names.def); an entry point no
	 * runtime call reaches keeps its name */
	truncate(path, 0);
	rec_begin(&r, CG_L_ERROR, "violation");
	rec_str(&r, "rule", "CGS001");
	rec_str(&r, "name", "update-will-fail");
	rec_str(&r, "api", "cuGraphExecUpdate_v2");
	rec_end(&r);
	rec_begin(&r, CG_L_ERROR, "violation");
	rec_str(&r, "rule", "CGS007");
	rec_str(&r, "name", "x");
	rec_str(&r, "api", "cuModuleLoadData");
	rec_end(&r);
	s = slurp();
	assert_non_null(strstr(s, " error violation CGS001 update-will-fail in cudaGraphExecUpdate\n"
				  "    driver entry point: cuGraphExecUpdate_v2 (no runtime hook saw the call"));
	assert_non_null(strstr(s, " error violation CGS007 x in cuModuleLoadData\n"));
	assert_null(strstr(s, "driver entry point: cuModuleLoadData"));
	/* another warning is the same kind of block (issue 35), with its kind
	 * in the header; a record below warn stays one line of key=value */
	truncate(path, 0);
	rec_begin(&r, CG_L_WARN, "mismatch");
	rec_str(&r, "api", "cuGraphExecUpdate_v2");
	rec_str(&r, "via", "cudaGraphExecUpdate");
	rec_int(&r, "predicted_rc", 801);
	rec_end(&r);
	rec_begin(&r, CG_L_WARN, "warning");
	rec_str(&r, "msg", "the shim's own trouble");
	rec_end(&r);
	rec_begin(&r, CG_L_INFO, "alloc");
	rec_int(&r, "size", 64);
	rec_end(&r);
	s = slurp();
	assert_non_null(strstr(s, " warn mismatch in cudaGraphExecUpdate\n"
				  "    predicted_rc: 801\n"
				  "    driver entry point: cuGraphExecUpdate_v2\n"));
	assert_non_null(strstr(s, " warn warning\n    the shim's own trouble\n"));
	assert_non_null(strstr(s, " info alloc size=64\n"));
	assert_true(!strncmp(s, "cgshim ", 7));
	/* Wall clock, UTC with microseconds: "cgshim 2026-11-24T18:40:01.123456Z 1:4242 ". */
	{
		char year[16];
		time_t now = time(NULL);
		struct tm tm;
		gmtime_r(&now, &tm);
		snprintf(year, sizeof year, "%04d", tm.tm_year + 1900);
		assert_memory_equal(s + 7, year, 4);
		assert_int_equal(s[11], '-');
		assert_int_equal(s[14], '-');
		assert_int_equal(s[17], 'T');
		assert_int_equal(s[20], ':');
		assert_int_equal(s[26], '.');
		assert_int_equal(s[33], 'Z');
		assert_int_equal(s[34], ' ');
	}
	unlink(path);
}

/* Batching: info records wait in the thread's buffer; a warn record is
 * written at once and carries the earlier lines of the thread with it, in
 * order. */
static void test_batching_order(void **state)
{
	struct cg_rec r;
	char buf[4096];
	FILE *f;
	size_t n;
	(void)state;
	rec_begin(&r, CG_L_INFO, "call");
	rec_str(&r, "api", "first");
	rec_end(&r);
	f = fopen(path, "r");
	n = fread(buf, 1, sizeof buf - 1, f);
	fclose(f);
	assert_int_equal(n, 0); /* still batched */
	rec_begin(&r, CG_L_WARN, "violation");
	rec_str(&r, "rule", "CGS001");
	rec_end(&r);
	f = fopen(path, "r");
	n = fread(buf, 1, sizeof buf - 1, f);
	fclose(f);
	buf[n] = 0;
	char *a = strstr(buf, "\"first\""), *b = strstr(buf, "CGS001");
	assert_non_null(a);
	assert_non_null(b);
	assert_true(a < b);
	unlink(path);
}

static void test_result_names(void **state)
{
	(void)state;
	assert_string_equal(cg_result_name(910), "CUDA_ERROR_GRAPH_EXEC_UPDATE_FAILURE");
	assert_string_equal(cg_result_name(801), "CUDA_ERROR_NOT_SUPPORTED");
	assert_string_equal(cg_result_name(12345), "CUDA_ERROR_OTHER");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test_setup(test_json_fields, setup),
	    cmocka_unit_test_setup(test_escaping, setup),
	    cmocka_unit_test_setup(test_escaping_non_utf8, setup),
	    cmocka_unit_test_setup(test_level_filter, setup),
	    cmocka_unit_test_setup(test_truncation_keeps_valid_json, setup),
	    cmocka_unit_test_setup(test_text_format, setup),
	    cmocka_unit_test_setup(test_batching_order, setup),
	    cmocka_unit_test(test_result_names),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
