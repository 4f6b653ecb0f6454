/* test_outname.c: the expansion of output names (src/command/outname.c): %p, %h,
 * %q{ENV} and %% in -o and --log-file, and the errors that name the option. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "command/outname.h"
#include "util/util.h"

static const char *fake_env(const char *name)
{
	if (strcmp(name, "OMPI_COMM_WORLD_RANK") == 0)
		return "3";
	if (strcmp(name, "EMPTY") == 0)
		return "";
	return NULL;
}

static void expect_name(const char *pattern, const char *want)
{
	ga_error err = { 0 };
	char *got = ga_expand_output_name("-o", pattern, 4242, "node7", fake_env, &err);
	if (!got)
		fprintf(stderr, "%s\n", err.msg);
	assert_non_null(got);
	assert_string_equal(got, want);
	free(got);
}

static void expect_name_error(const char *pattern, const char *msg_part)
{
	ga_error err = { 0 };
	char *got = ga_expand_output_name("--log-file", pattern, 4242, "node7", fake_env, &err);
	assert_null(got);
	assert_int_equal(err.code, GA_ERR_USAGE);
	if (!strstr(err.msg, msg_part))
		fprintf(stderr, "message: %s\n", err.msg);
	assert_non_null(strstr(err.msg, msg_part));
	assert_non_null(strstr(err.msg, "--log-file"));
}

static void test_output_names(void **state)
{
	(void)state;
	expect_name("run.json", "run.json");
	expect_name("run-%p.json", "run-4242.json");
	expect_name("%h/%p", "node7/4242");
	expect_name("rank%q{OMPI_COMM_WORLD_RANK}.json", "rank3.json");
	expect_name("a%q{EMPTY}b", "ab");
	expect_name("100%%.txt", "100%.txt");
	expect_name("%%p", "%p");
	expect_name("", "");
	expect_name_error("rank%q{UNSET_VARIABLE}.json", "UNSET_VARIABLE is not set");
	expect_name_error("rank%q{}.json", "needs a variable name");
	expect_name_error("rank%qX.json", "needs a variable name");
	expect_name_error("rank%q{OPEN.json", "needs a variable name");
	expect_name_error("run%x.json", "unknown '%x'");
	expect_name_error("run%", "at the end");
	assert_null(ga_expand_output_name("-o", NULL, 1, "h", fake_env, NULL));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_output_names),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
