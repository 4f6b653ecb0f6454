/* test_limits.c: hostile and extreme input, one test per bug or limit
 * found while hardening (docs/FUZZING.md, docs/LIMITS.md): numbers at the
 * edge of a double in the engine and the reports, rule files with aliases,
 * deep nesting or megabytes of text, JSON nested past jansson's limit, a
 * saved JSON report imported as a profile, and atomic output files.
 * Several of these only fail loudly in the sanitized build
 * (-Db_sanitize=address,undefined), where undefined behaviour aborts. */
#include <errno.h>
#include <limits.h>
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cmocka.h>

#include "profile/profile.h"
#include "report/report.h"
#include "analyze/analyze.h"
#include "rules/rules.h"
#include "util/util.h"

#include "helpers.h"

#ifndef GA_TEST_RULES
#error "GA_TEST_RULES must name the shipped rules directory"
#endif
#ifndef GA_TEST_FIXTURES
#error "GA_TEST_FIXTURES must name the tests/fixtures directory"
#endif

/* ---- helpers ------------------------------------------------------------ */

static char scratch[4096];      /* a private directory for each test */

static int setup(void **state)
{
	const char *tmp = getenv("TMPDIR");

	(void)state;
	snprintf(scratch, sizeof(scratch), "%s/gpuadvise-limits-XXXXXX",
	         tmp && *tmp ? tmp : "/tmp");
	return mkdtemp(scratch) ? 0 : -1;
}

static int teardown(void **state)
{
	char *cmd = ga_xasprintf("rm -rf '%s'", scratch);
	int rc = system(cmd);

	(void)state;
	free(cmd);
	return rc == 0 ? 0 : -1;
}

static char *path_in(const char *name)
{
	return ga_xasprintf("%s/%s", scratch, name);
}

static void write_text(const char *path, const char *text)
{
	FILE *f = fopen(path, "w");

	assert_non_null(f);
	assert_int_equal(fputs(text, f) >= 0, 1);
	assert_int_equal(fclose(f), 0);
}

static char *read_text(const char *path)
{
	ga_error err = {0};
	char *s = ga_read_file(path, NULL, &err);

	if (!s)
		fail_msg("%s", err.msg);
	return s;
}

/* Files in the scratch directory whose name contains ".tmp.". */
static int tmp_files_left(void)
{
	char *cmd = ga_xasprintf("ls -a '%s' | grep -q '\\.tmp\\.'", scratch);
	int rc = system(cmd);

	free(cmd);
	return rc == 0;
}

/* Load one rule file on its own; the diagnostics printed, as the CLI would. */
static char *diags_of_file(const char *path)
{
	ga_ruleset rs;
	ga_diags d = {0};
	char *s = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&s, &len);

	assert_non_null(f);
	ga_ruleset_init(&rs);
	ga_rules_load_file(&rs, path, &d);
	ga_diags_print(&d, f);
	fclose(f);
	ga_diags_free(&d);
	ga_ruleset_free(&rs);
	return s;
}

static const char one_launch_profile[] =
	"{\"format\":\"gpuadvise-profile\",\"schema\":1,"
	"\"device\":{\"name\":\"X\",\"sm_count\":1},\"metrics\":[\"a__b.sum\"],\"launches\":[%s]}";

static void load_profile_text(ga_profile *p, const char *launches)
{
	char *text = ga_xasprintf(one_launch_profile, launches);
	ga_error err = {0};

	if (ga_profile_load_string(p, text, "test", &err) != 0)
		fail_msg("%s", err.msg);
	free(text);
}

/* ---- engine ------------------------------------------------------------- */

/* Durations and values near DBL_MAX: their double sums overflow.  Shares
 * were NaN (inf / inf), which reached the findings' savings and the
 * ranking; means were infinite and read as missing. */
static void test_sums_that_overflow(void **state)
{
	ga_profile p;
	ga_ruleset rs;
	ga_analysis a;
	ga_error err = {0};
	double shares = 0;

	(void)state;
	load_profile_text(&p,
		"{\"name\":\"k1\",\"grid\":[1,1,1],\"block\":[32,1,1],\"duration_ns\":1e308,"
		"\"values\":{\"a__b.sum\":1e308}},"
		"{\"name\":\"k1\",\"grid\":[1,1,1],\"block\":[32,1,1],\"duration_ns\":1e308,"
		"\"values\":{\"a__b.sum\":1e308}},"
		"{\"name\":\"k2\",\"grid\":[1,1,1],\"block\":[32,1,1],\"duration_ns\":1e308,"
		"\"values\":{\"a__b.sum\":1e308}}");
	load_rules(&rs, GA_TEST_RULES);
	assert_int_equal(ga_analyze(&p, &rs, NULL, &a, &err), 0);
	assert_int_equal(a.n_groups, 2);
	for (size_t i = 0; i < a.n_groups; i++) {
		const ga_group *g = &a.groups[i];
		assert_true(isfinite(g->share));
		shares += g->share;
		assert_true(isfinite(g->mean_ns));
		assert_true(fabs(g->mean_ns - 1e308) < 1e294);
		/* the mean of 1e308 and 1e308 is 1e308, not infinity */
		assert_true(isfinite(g->values[0]));
		assert_true(fabs(fabs(g->values[0]) - 1e308) < 1e294);
	}
	assert_true(fabs(shares - 1.0) < 1e-12);
	assert_true(fabs(a.groups[0].share - 2.0 / 3.0) < 1e-12);
	for (size_t i = 0; i < a.n_findings; i++)
		assert_true(isfinite(a.findings[i].saving));
	ga_analysis_free(&a);
	ga_ruleset_free(&rs);
	ga_profile_free(&p);
}

/* launch__shared_mem_per_block added two longs: static + dynamic shared
 * memory of LONG_MAX each overflowed (undefined behaviour; UBSan aborts). */
static void test_shared_memory_sum(void **state)
{
	char *dir = path_in("smem-rules");
	char *cls, *rule;
	ga_profile p;
	ga_ruleset rs;
	ga_analysis a;
	ga_error err = {0};
	char *launch;

	(void)state;
	assert_int_equal(mkdir(dir, 0700), 0);
	cls = ga_xasprintf("%s/classify.yaml", dir);
	rule = ga_xasprintf("%s/smem.yaml", dir);
	write_text(cls,
		"classifier:\n"
		"  metrics: {latency_line_pct: 40, roofline_tensor_min_pct: 10, roofline_dram_min_pct: 1,\n"
		"            source_min_waste_pct: 2, source_min_stall_pct: 10,\n"
		"            source_branch_drop_lanes: 2}\n"
		"  order:\n"
		"    - {class: compute, when: \"1\", score: \"1\"}\n"
		"    - {class: memory, when: \"0\", score: \"0\"}\n"
		"    - {class: latency, when: \"0\", score: \"0\"}\n"
		"    - {class: divergence, when: \"0\", score: \"0\"}\n");
	write_text(rule,
		"id: smem\ntitle: Shared memory\nclass: memory\nchecklist: 1\n"
		"severity: low\nspeedup: [1, 2]\n"
		"metrics:\n  smem: launch__shared_mem_per_block\n"
		"when: smem > 0\nestimate: \"0.5\"\nevidence: [smem]\n"
		"fix: f\nexample: e\nexplain: x\n");
	load_rules(&rs, dir);
	launch = ga_xasprintf("{\"name\":\"k\",\"grid\":[1,1,1],\"block\":[32,1,1],"
	                      "\"smem_static\":%ld,\"smem_dynamic\":%ld,\"values\":{}}",
	                      LONG_MAX, LONG_MAX);
	load_profile_text(&p, launch);
	assert_int_equal(ga_analyze(&p, &rs, NULL, &a, &err), 0);
	assert_int_equal(a.n_findings, 1);
	assert_int_equal(a.findings[0].n_evidence, 1);
	assert_true(fabs(a.findings[0].evidence[0].value - 2.0 * (double)LONG_MAX) < 1e5);
	ga_analysis_free(&a);
	ga_ruleset_free(&rs);
	ga_profile_free(&p);
	free(launch);
	free(cls);
	free(rule);
	free(dir);
}

/* A duration of 1e300 ns printed its hundreds of digits of seconds. */
static void test_huge_duration_format(void **state)
{
	char buf[64];

	(void)state;
	assert_string_equal(ga_fmt_duration(1e300, buf, sizeof(buf)), "1e+291 s");
	assert_string_equal(ga_fmt_duration(-1e300, buf, sizeof(buf)), "-1e+291 s");
	assert_string_equal(ga_fmt_duration(999999e9, buf, sizeof(buf)), "999999 s");
	assert_string_equal(ga_fmt_duration(1e15, buf, sizeof(buf)), "1e+06 s");
	assert_string_equal(ga_fmt_duration(NAN, buf, sizeof(buf)), "n/a");
}

/* ---- rule files --------------------------------------------------------- */

static void test_yaml_aliases_rejected(void **state)
{
	char *path = path_in("alias.yaml");
	char *out, *want;

	(void)state;
	write_text(path, "id: alias\ntitle: &t Title\nfix: *t\n");
	out = diags_of_file(path);
	want = ga_xasprintf("%s:3:6: error: YAML alias '*t' is not allowed in rule files; "
	                    "write the value out\n", path);
	assert_string_equal(out, want);
	free(want);
	free(out);
	free(path);
}

static void test_billion_laughs(void **state)
{
	char *path = path_in("laughs.yaml");
	ga_buf b = {0};
	char *out;

	(void)state;
	ga_buf_puts(&b, "a0: &a0 [x, x, x, x, x, x, x, x, x, x]\n");
	for (int i = 1; i < 12; i++) {
		ga_buf_printf(&b, "a%d: &a%d [", i, i);
		for (int k = 0; k < 10; k++)
			ga_buf_printf(&b, "%s*a%d", k ? ", " : "", i - 1);
		ga_buf_puts(&b, "]\n");
	}
	write_text(path, b.s);
	out = diags_of_file(path);
	/* 110 aliases: the first 50 at their positions, then a count. */
	assert_non_null(strstr(out, "laughs.yaml:2:10: error: YAML alias '*a0'"));
	assert_non_null(strstr(out, "laughs.yaml: error: 60 more errors not shown\n"));
	ga_buf_free(&b);
	free(out);
	free(path);
}

static void test_deep_nesting(void **state)
{
	char *flow = path_in("flow.yaml"), *block = path_in("block.yaml");
	char *quoted = path_in("quoted.yaml");
	ga_buf b = {0};
	char *out, *want;

	(void)state;
	/* 200,000 brackets: libyaml alone took minutes on these. */
	ga_buf_puts(&b, "id: x\ntitle: ");
	for (int i = 0; i < 200000; i++)
		ga_buf_putc(&b, '[');
	write_text(flow, b.s);
	ga_buf_free(&b);
	out = diags_of_file(flow);
	want = ga_xasprintf("%s:2:72: error: nested more than 64 levels deep\n", flow);
	assert_string_equal(out, want);
	free(want);
	free(out);

	for (int i = 0; i < 70; i++)
		ga_buf_printf(&b, "%*sk:\n", 2 * i, "");
	write_text(block, b.s);
	ga_buf_free(&b);
	out = diags_of_file(block);
	want = ga_xasprintf("%s:65:129: error: nested more than 64 levels deep\n", block);
	assert_string_equal(out, want);
	free(want);
	free(out);

	/* Brackets in quotes, comments and block scalars are text. */
	ga_buf_puts(&b, "id: quoted\ntitle: \"");
	for (int i = 0; i < 100; i++)
		ga_buf_puts(&b, "[{");
	ga_buf_puts(&b, "\"\n# [[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[\n"
	            "example: |\n  a[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[\n"
	            "  [[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[\n"
	            "fix: 'x [[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[['\n");
	write_text(quoted, b.s);
	ga_buf_free(&b);
	out = diags_of_file(quoted);
	assert_null(strstr(out, "nested"));
	assert_non_null(strstr(out, "missing required key"));
	free(out);
	free(flow);
	free(block);
	free(quoted);
}

static void test_large_rule_file(void **state)
{
	char *path = path_in("large.yaml"), *link = path_in("zero.yaml");
	ga_buf b = {0};
	char *out, *want;

	(void)state;
	ga_buf_puts(&b, "id: large\nexplain: |\n");
	while (b.len <= 1024 * 1024)
		ga_buf_puts(&b, "  all work and no play\n");
	write_text(path, b.s);
	ga_buf_free(&b);
	out = diags_of_file(path);
	want = ga_xasprintf("%s: error: rule file is larger than 1024 KiB; is it a rule "
	                    "file?\n", path);
	assert_string_equal(out, want);
	free(want);
	free(out);

	/* Endless: not a regular file, so not read at all. */
	assert_int_equal(symlink("/dev/zero", link), 0);
	out = diags_of_file(link);
	assert_non_null(strstr(out, "a character device, not a regular file: skipped"));
	free(out);
	free(path);
	free(link);
}

/* An expression of 100,000 names: walking its names searched a list of
 * the names seen so far for each one (minutes for a large rule file). */
static void collect_count(void *ctx, const char *name)
{
	(void)name;
	(*(size_t *)ctx)++;
}

static void test_many_names(void **state)
{
	ga_buf b = {0};
	ga_expr *e;
	char msg[256];
	size_t off, n = 0;

	(void)state;
	ga_buf_puts(&b, "max(");
	for (int i = 0; i < 100000; i++)
		ga_buf_printf(&b, "%sx%d__y", i ? ", " : "", i % 50000);
	ga_buf_puts(&b, ")");
	e = ga_expr_parse(b.s, &off, msg, sizeof(msg));
	assert_non_null(e);
	ga_expr_foreach_name(e, collect_count, &n);
	assert_int_equal(n, 50000);
	ga_expr_free(e);
	ga_buf_free(&b);
}

/* Thousands of problems in one file: fifty reported, the rest counted. */
static void test_many_problems(void **state)
{
	char *path = path_in("classify.yaml");
	ga_buf b = {0};
	ga_ruleset rs;
	ga_diags d = {0};

	(void)state;
	ga_buf_puts(&b, "classifier:\n  order:\n    - class: compute\n      when: min(");
	for (int i = 0; i < 20000; i++)
		ga_buf_printf(&b, "%sx%d", i ? ", " : "", i);
	ga_buf_puts(&b, ")\n      score: \"1\"\n");
	write_text(path, b.s);
	ga_ruleset_init(&rs);
	assert_int_equal(ga_rules_load_file(&rs, path, &d), 51);
	assert_false(rs.has_classifier);
	assert_int_equal(d.v[0].line, 4);
	assert_int_equal(d.v[0].col, 17);
	assert_string_equal(d.v[50].msg, "19951 more errors not shown");
	ga_diags_free(&d);
	ga_ruleset_free(&rs);
	ga_buf_free(&b);
	free(path);
}

static void test_many_named_expressions(void **state)
{
	char *path = path_in("named.yaml");
	ga_buf b = {0};
	char *out, *want;

	(void)state;
	ga_buf_puts(&b, "id: named\nmetrics:\n");
	for (int i = 0; i < 300; i++)
		ga_buf_printf(&b, "  m%d: x__y + %d\n", i, i);
	ga_buf_puts(&b, "evidence: [");
	for (int i = 0; i < 100; i++)
		ga_buf_printf(&b, "%sm%d", i ? ", " : "", i);
	ga_buf_puts(&b, "]\n");
	write_text(path, b.s);
	out = diags_of_file(path);
	want = ga_xasprintf("%s:259:3: error: more than 256 named expressions\n", path);
	assert_non_null(strstr(out, want));
	free(want);
	want = ga_xasprintf("%s:303:322: error: more than 64 'evidence' entries\n", path);
	assert_non_null(strstr(out, want));
	free(want);
	free(out);
	ga_buf_free(&b);
	free(path);
}

/* ---- profiles ----------------------------------------------------------- */

static void test_json_depth(void **state)
{
	ga_buf b = {0};
	ga_profile p;
	ga_error err = {0};

	(void)state;
	ga_buf_puts(&b, "{\"format\":\"gpuadvise-profile\",\"device\":");
	for (int i = 0; i < 100000; i++)
		ga_buf_putc(&b, '[');
	assert_int_equal(ga_profile_load_string(&p, b.s, "deep.json", &err), -1);
	assert_int_equal(err.code, GA_ERR_PROFILE);
	assert_non_null(strstr(err.msg, "deep.json:1:"));
	assert_non_null(strstr(err.msg, "invalid JSON: maximum parsing depth reached"));
	ga_buf_free(&b);
}

static void test_number_overflow(void **state)
{
	ga_profile p;
	ga_error err = {0};
	char *text = ga_xasprintf(one_launch_profile,
		"{\"name\":\"k\",\"grid\":[1,1,1],\"block\":[1,1,1],\"values\":{\"a__b.sum\":1e309}}");

	(void)state;
	assert_int_equal(ga_profile_load_string(&p, text, "big.json", &err), -1);
	assert_non_null(strstr(err.msg, "invalid JSON: real number overflow"));
	free(text);
}

/* A JSON report (-f json) imports as the profile it embeds; the CLI used to
 * parse every file twice to find out which it was. */
static void test_report_as_profile(void **state)
{
	ga_profile p, q;
	ga_ruleset rs;
	ga_analysis a;
	ga_error err = {0};
	char *report = NULL, *s1, *s2;
	size_t len = 0;
	FILE *f;

	(void)state;
	ga_profile_init(&p);
	if (ga_profile_load(&p, GA_TEST_FIXTURES "/recorded/testapp-all.json",
	                    &err) != 0)
		fail_msg("%s", err.msg);
	load_rules(&rs, GA_TEST_RULES);
	assert_int_equal(ga_analyze(&p, &rs, NULL, &a, &err), 0);
	f = open_memstream(&report, &len);
	assert_non_null(f);
	assert_int_equal(ga_report_json(f, &a, &rs, NULL), 0);
	fclose(f);
	assert_int_equal(ga_profile_load_string(&q, report, "report.json", &err), 0);
	s1 = ga_profile_to_string(&p, 0);
	s2 = ga_profile_to_string(&q, 0);
	assert_string_equal(s1, s2);
	free(s1);
	free(s2);
	ga_profile_free(&q);

	assert_int_equal(ga_profile_load_string(&q, "{\"format\":\"gpuadvise-report\"}",
	                                        "r.json", &err), -1);
	assert_string_equal(err.msg, "r.json: report has no 'profile'");

	free(report);
	ga_analysis_free(&a);
	ga_ruleset_free(&rs);
	ga_profile_free(&p);
}

/* ---- output files ------------------------------------------------------- */

static void test_atomic_write(void **state)
{
	char *path = path_in("out.txt"), *dir = path_in("dir");
	char *real = path_in("real.txt"), *link = path_in("link.txt");
	ga_error err = {0};
	char *s;

	(void)state;
	assert_int_equal(ga_write_file_atomic(path, "one\n", 4, &err), 0);
	assert_int_equal(ga_write_file_atomic(path, "two\n", 4, &err), 0);
	s = read_text(path);
	assert_string_equal(s, "two\n");
	free(s);
	assert_false(tmp_files_left());

	/* A directory: an error naming it, nothing left behind. */
	assert_int_equal(mkdir(dir, 0700), 0);
	assert_int_equal(ga_write_file_atomic(dir, "x", 1, &err), -1);
	assert_int_equal(err.code, GA_ERR_IO);
	s = ga_xasprintf("cannot write %s: it is a directory", dir);
	assert_string_equal(err.msg, s);
	free(s);
	assert_false(tmp_files_left());

	/* A symbolic link stays; the file it names is replaced. */
	write_text(real, "old\n");
	assert_int_equal(symlink("real.txt", link), 0);
	assert_int_equal(ga_write_file_atomic(link, "new\n", 4, &err), 0);
	s = read_text(real);
	assert_string_equal(s, "new\n");
	free(s);
	{
		struct stat st;
		assert_int_equal(lstat(link, &st), 0);
		assert_true(S_ISLNK(st.st_mode));
	}
	assert_false(tmp_files_left());

	/* A device is written in place (no rename over /dev/null). */
	assert_int_equal(ga_write_file_atomic("/dev/null", "x", 1, &err), 0);
	{
		struct stat st;
		assert_int_equal(stat("/dev/null", &st), 0);
		assert_true(S_ISCHR(st.st_mode));
	}
	free(path);
	free(dir);
	free(real);
	free(link);
}

/* A link planted under the temporary name must not be followed (the file
 * it names would be truncated); the write goes to another name. */
static void test_atomic_write_planted_link(void **state)
{
	char *path = path_in("report.txt"), *victim = path_in("victim.txt");
	char *planted = ga_xasprintf("%s.tmp.%ld", path, (long)getpid());
	ga_error err = {0};
	char *s;
	struct stat st;

	(void)state;
	write_text(victim, "precious\n");
	assert_int_equal(symlink(victim, planted), 0);
	assert_int_equal(ga_write_file_atomic(path, "report\n", 7, &err), 0);
	s = read_text(victim);
	assert_string_equal(s, "precious\n");
	free(s);
	s = read_text(path);
	assert_string_equal(s, "report\n");
	free(s);
	/* The planted link is not ours: left alone. */
	assert_int_equal(lstat(planted, &st), 0);
	assert_true(S_ISLNK(st.st_mode));
	unlink(planted);
	assert_false(tmp_files_left());
	free(path);
	free(victim);
	free(planted);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_sums_that_overflow, setup, teardown),
		cmocka_unit_test_setup_teardown(test_shared_memory_sum, setup, teardown),
		cmocka_unit_test_setup_teardown(test_huge_duration_format, setup, teardown),
		cmocka_unit_test_setup_teardown(test_yaml_aliases_rejected, setup, teardown),
		cmocka_unit_test_setup_teardown(test_billion_laughs, setup, teardown),
		cmocka_unit_test_setup_teardown(test_deep_nesting, setup, teardown),
		cmocka_unit_test_setup_teardown(test_large_rule_file, setup, teardown),
		cmocka_unit_test_setup_teardown(test_many_names, setup, teardown),
		cmocka_unit_test_setup_teardown(test_many_problems, setup, teardown),
		cmocka_unit_test_setup_teardown(test_many_named_expressions, setup, teardown),
		cmocka_unit_test_setup_teardown(test_json_depth, setup, teardown),
		cmocka_unit_test_setup_teardown(test_number_overflow, setup, teardown),
		cmocka_unit_test_setup_teardown(test_report_as_profile, setup, teardown),
		cmocka_unit_test_setup_teardown(test_atomic_write, setup, teardown),
		cmocka_unit_test_setup_teardown(test_atomic_write_planted_link, setup, teardown),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
