/* tests/unit/test-config.c -- the CGSHIM_* parser, table-driven. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <string.h>

#include "config.h"

static const char *env_names[8], *env_vals[8];
static int env_n;

static const char *fake_getenv(const char *name)
{
	for (int i = 0; i < env_n; i++)
		if (!strcmp(env_names[i], name))
			return env_vals[i];
	return NULL;
}

static void set_env(const char *n, const char *v)
{
	env_names[env_n] = n;
	env_vals[env_n] = v;
	env_n++;
}

static int setup(void **state)
{
	(void)state;
	env_n = 0;
	return 0;
}

static void test_defaults(void **state)
{
	(void)state;
	assert_int_equal(cg_config_load(fake_getenv), 0);
	assert_int_equal(cg_cfg.disable, 0);
	assert_int_equal(cg_cfg.log_level, CG_L_WARN); /* auto without a file */
	assert_int_equal(cg_cfg.log_format, CG_FMT_TEXT);
	assert_int_equal(cg_cfg.backtrace, 6);
	assert_int_equal(cg_cfg.on_update_failure, CG_UPD_LOG);
	assert_string_equal(cg_cfg.log_file, "");
}

static void test_auto_level_with_file(void **state)
{
	(void)state;
	set_env("CGSHIM_LOG_FILE", "/tmp/x-%p.jsonl");
	assert_int_equal(cg_config_load(fake_getenv), 0);
	assert_int_equal(cg_cfg.log_level, CG_L_INFO);
	/* a file is JSONL (what the report reads) unless text is asked for */
	assert_int_equal(cg_cfg.log_format, CG_FMT_JSONL);
	set_env("CGSHIM_LOG_FORMAT", "text");
	assert_int_equal(cg_config_load(fake_getenv), 0);
	assert_int_equal(cg_cfg.log_format, CG_FMT_TEXT);
}

static void test_auto_format_stderr(void **state)
{
	(void)state;
	set_env("CGSHIM_LOG_FILE", "stderr");
	assert_int_equal(cg_config_load(fake_getenv), 0);
	assert_int_equal(cg_cfg.log_format, CG_FMT_TEXT);
}

struct row {
	const char *name, *val;
	int bad;
};

static void test_values(void **state)
{
	static const struct row rows[] = {
	    {"CGSHIM_DISABLE", "1", 0},
	    {"CGSHIM_DISABLE", "yes", 0},
	    {"CGSHIM_DISABLE", "ON", 0},
	    {"CGSHIM_DISABLE", "2", 1},
	    {"CGSHIM_DISABLE", "", 1},
	    {"CGSHIM_LOG", "trace", 0},
	    {"CGSHIM_LOG", "TRACE", 0},
	    {"CGSHIM_LOG", "loud", 1},
	    {"CGSHIM_LOG", "", 1},
	    {"CGSHIM_BACKTRACE", "0", 0},
	    {"CGSHIM_BACKTRACE", "32", 0},
	    {"CGSHIM_BACKTRACE", "33", 1},
	    {"CGSHIM_BACKTRACE", "-1", 1},
	    {"CGSHIM_BACKTRACE", "10x", 1},
	    {"CGSHIM_BACKTRACE", "", 1},
	    {"CGSHIM_BACKTRACE", "99999999999999999999", 1},
	    {"CGSHIM_LOG_FORMAT", "jsonl", 0},
	    {"CGSHIM_ON_UPDATE_FAILURE", "reinstantiate", 0},
	    {"CGSHIM_ON_UPDATE_FAILURE", "reinst", 1},
	};
	(void)state;
	for (unsigned i = 0; i < sizeof rows / sizeof rows[0]; i++) {
		env_n = 0;
		set_env(rows[i].name, rows[i].val);
		int bad = cg_config_load(fake_getenv);
		if (bad != rows[i].bad)
			fail_msg("%s=\"%s\": %d malformed, expected %d", rows[i].name, rows[i].val, bad, rows[i].bad);
	}
}

static void test_malformed_gets_default(void **state)
{
	(void)state;
	set_env("CGSHIM_BACKTRACE", "lots");
	set_env("CGSHIM_LOG", "trace");
	assert_int_equal(cg_config_load(fake_getenv), 1);
	assert_int_equal(cg_cfg.backtrace, 6);
	assert_int_equal(cg_cfg.log_level, CG_L_TRACE);
}

static void test_table_is_complete(void **state)
{
	(void)state;
	assert_true(cg_config_nrows >= 5);
	for (unsigned i = 0; i < cg_config_nrows; i++) {
		assert_non_null(cg_config_rows[i].doc);
		assert_true(strlen(cg_config_rows[i].doc) > 10);
		assert_true(!strncmp(cg_config_rows[i].name, "CGSHIM_", 7));
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test_setup(test_defaults, setup),
	    cmocka_unit_test_setup(test_auto_level_with_file, setup),
	    cmocka_unit_test_setup(test_auto_format_stderr, setup),
	    cmocka_unit_test_setup(test_values, setup),
	    cmocka_unit_test_setup(test_malformed_gets_default, setup),
	    cmocka_unit_test_setup(test_table_is_complete, setup),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
