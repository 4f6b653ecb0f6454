/* test_load.c: rule and classifier files (src/rules/: ruleset.c, load.c,
 * parse.c, check.c).
 *
 * Fixtures live in tests/fixtures (GA_TEST_FIXTURES); the tests chdir there
 * so diagnostics name files relative to it, e.g. rules-bad/empty.yaml.
 * Each rules-bad/NAME.yaml has exactly one problem (several-errors.yaml has
 * three) and NAME.expected holds the exact diagnostics it must produce. */
#include <dirent.h>
#include <errno.h>
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include "profile/profile.h"
#include "rules/rules.h"
#include "util/util.h"

#ifndef GA_TEST_FIXTURES
#error "GA_TEST_FIXTURES must name the tests/fixtures directory"
#endif

static int setup(void **state)
{
	(void)state;
	if (chdir(GA_TEST_FIXTURES) != 0) {
		fprintf(stderr, "cannot chdir to %s: %s\n", GA_TEST_FIXTURES, strerror(errno));
		return -1;
	}
	return 0;
}

/* The diagnostics as ga_diags_print writes them. */
static char *print_diags(const ga_diags *d)
{
	char *s = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&s, &len);

	assert_non_null(f);
	ga_diags_print(d, f);
	fclose(f);
	return s;
}

static void fail_with_diags(const ga_diags *d, const char *what)
{
	char *s = print_diags(d);
	fprintf(stderr, "%s: unexpected diagnostics:\n%s", what, s);
	free(s);
	fail();
}

struct vars {
	const char *const *names;
	const double *values;
	size_t n;
};

static int lookup(void *ctx, const char *name, double *out)
{
	const struct vars *v = ctx;
	size_t i;

	for (i = 0; i < v->n; i++) {
		if (strcmp(v->names[i], name) == 0) {
			*out = v->values[i];
			return 0;
		}
	}
	return -1;
}

static void test_names(void **state)
{
	(void)state;
	assert_string_equal(ga_class_name(GA_CLASS_COMPUTE), "compute");
	assert_string_equal(ga_class_name(GA_CLASS_MEMORY), "memory");
	assert_string_equal(ga_class_name(GA_CLASS_LATENCY), "latency");
	assert_string_equal(ga_class_name(GA_CLASS_DIVERGENCE), "divergence");
	assert_string_equal(ga_class_name(GA_CLASS_NONE), "none");
	assert_int_equal(ga_class_from_name("memory"), GA_CLASS_MEMORY);
	assert_int_equal(ga_class_from_name("divergence"), GA_CLASS_DIVERGENCE);
	assert_int_equal(ga_class_from_name("Memory"), GA_CLASS_NONE);
	assert_int_equal(ga_class_from_name(""), GA_CLASS_NONE);
	assert_int_equal(ga_class_from_name(NULL), GA_CLASS_NONE);

	assert_string_equal(ga_severity_name(GA_SEV_LOW), "low");
	assert_string_equal(ga_severity_name(GA_SEV_MEDIUM), "medium");
	assert_string_equal(ga_severity_name(GA_SEV_HIGH), "high");
	assert_int_equal(ga_severity_from_name("high"), GA_SEV_HIGH);
	assert_int_equal(ga_severity_from_name("low"), GA_SEV_LOW);
	assert_int_equal(ga_severity_from_name("severe"), -1);
	assert_int_equal(ga_severity_from_name(NULL), -1);
}

static void test_diags_print(void **state)
{
	ga_diags d = {0};
	char *s;

	(void)state;
	ga_diags_add(&d, "a.yaml", 3, 7, "bad %s %d", "thing", 42);
	ga_diags_add(&d, "dir", 0, 0, "cannot open");
	ga_diags_add(&d, "b.yaml", 5, 0, "no column");
	ga_diags_add(&d, NULL, 0, 0, "no file");
	assert_int_equal(d.n, 4);
	assert_string_equal(d.v[0].file, "a.yaml");
	assert_int_equal(d.v[0].line, 3);
	assert_int_equal(d.v[0].col, 7);
	assert_string_equal(d.v[0].msg, "bad thing 42");
	s = print_diags(&d);
	assert_string_equal(s, "a.yaml:3:7: error: bad thing 42\n"
	                       "dir: error: cannot open\n"
	                       "b.yaml:5: error: no column\n"
	                       "error: no file\n");
	free(s);
	ga_diags_free(&d);
	assert_int_equal(d.n, 0);
	assert_null(d.v);
}

static void test_load_good(void **state)
{
	ga_ruleset rs;
	ga_diags d = {0};
	const ga_rule *r;
	const ga_classifier *c;
	const char *names[] = { "launch__occupancy_theoretical_pct", "device__sm_count",
	                        "sm__warps_active.avg.pct_of_peak_sustained_active" };
	const double values[] = { 25, 132, 30 };
	struct vars vars = { names, values, 3 };
	double v = 0;

	(void)state;
	ga_ruleset_init(&rs);
	if (ga_rules_load_dir(&rs, "rules-good", &d) != 0)
		fail_with_diags(&d, "rules-good");
	assert_int_equal(ga_ruleset_validate(&rs, &d), 0);
	assert_int_equal(d.n, 0);
	assert_int_equal(rs.n_rules, 2);

	/* Files are loaded in name order: occupancy.yaml, uncoalesced.yaml. */
	assert_string_equal(rs.rules[0].id, "test-low-occupancy");
	assert_string_equal(rs.rules[1].id, "test-uncoalesced");

	r = ga_ruleset_find(&rs, "test-uncoalesced");
	assert_ptr_equal(r, &rs.rules[1]);
	assert_string_equal(r->title, "Test rule about sectors per request");
	assert_int_equal(r->klass, GA_CLASS_MEMORY);
	assert_int_equal(r->checklist, 1);
	assert_int_equal(r->severity, GA_SEV_HIGH);
	assert_float_equal(r->speedup_min, 2, 0);
	assert_float_equal(r->speedup_max, 10, 0);
	assert_int_equal(r->n_metrics, 1);
	assert_string_equal(r->metrics[0].name, "ld_spr");
	assert_string_equal(r->metrics[0].src,
	                    "l1tex__t_sectors_pipe_lsu_mem_global_op_ld.sum / "
	                    "l1tex__t_requests_pipe_lsu_mem_global_op_ld.sum");
	assert_non_null(r->metrics[0].expr);
	assert_string_equal(r->when_src, "ld_spr > 8 and launch__time_share > 0.01");
	assert_non_null(r->when);
	assert_string_equal(r->estimate_src, "clamp(1 - 4 / ld_spr, 0, 1)");
	assert_non_null(r->estimate);
	assert_int_equal(r->n_evidence, 2);
	assert_string_equal(r->evidence[0], "ld_spr");
	assert_string_equal(r->evidence[1], "dram__bytes_read.sum");
	assert_string_equal(r->fix, "Synthetic fix text.");
	assert_string_equal(r->example, "a[threadIdx.x * 32]  ->  a[threadIdx.x]\n");
	assert_string_equal(r->explain, "Synthetic explanation.\n");
	assert_string_equal(r->path, "rules-good/uncoalesced.yaml");
	assert_int_equal(r->line, 2);           /* line 1 is a comment */

	r = ga_ruleset_find(&rs, "test-low-occupancy");
	assert_non_null(r);
	assert_string_equal(r->title, "Test rule: low occupancy");
	assert_int_equal(r->klass, GA_CLASS_LATENCY);
	assert_int_equal(r->checklist, 3);
	assert_int_equal(r->severity, GA_SEV_MEDIUM);
	assert_float_equal(r->speedup_min, 1, 0);
	assert_float_equal(r->speedup_max, 1.5, 0);
	assert_int_equal(r->n_metrics, 0);
	assert_int_equal(r->n_evidence, 0);
	assert_string_equal(r->example, "__launch_bounds__(256, 2)");
	/* The block scalar expression parses and evaluates. */
	assert_int_equal(ga_expr_eval(r->when, lookup, &vars, &v, NULL, 0), GA_EVAL_OK);
	assert_float_equal(v, 1, 0);
	assert_int_equal(ga_expr_eval(r->estimate, lookup, &vars, &v, NULL, 0), GA_EVAL_OK);
	assert_float_equal(v, 0.25, 0);

	assert_null(ga_ruleset_find(&rs, "no-such-rule"));

	assert_true(rs.has_classifier);
	c = &rs.classifier;
	assert_string_equal(c->path, "rules-good/classify.yaml");
	assert_float_equal(c->close_margin, 10, 0);
	assert_int_equal(c->n_metrics, 3);
	assert_string_equal(c->metrics[0].name, "sm");
	assert_string_equal(c->metrics[1].name, "mem");
	/* A plain scalar over two lines is folded into one. */
	assert_string_equal(c->metrics[1].src,
	                    "max(dram__throughput.avg.pct_of_peak_sustained_elapsed, "
	                    "l1tex__throughput.avg.pct_of_peak_sustained_active)");
	assert_string_equal(c->metrics[2].name, "warp_eff");
	assert_int_equal(c->n_evidence, 3);
	assert_string_equal(c->evidence[2], "warp_eff");
	assert_int_equal(c->n_order, 4);
	assert_int_equal(c->order[0].klass, GA_CLASS_DIVERGENCE);
	assert_int_equal(c->order[1].klass, GA_CLASS_MEMORY);
	assert_int_equal(c->order[2].klass, GA_CLASS_COMPUTE);
	assert_int_equal(c->order[3].klass, GA_CLASS_LATENCY);
	assert_string_equal(c->order[1].when_src, "mem >= 60 and mem > sm");
	assert_string_equal(c->order[3].score_src, "100 - max(sm, mem)");
	assert_non_null(c->order[3].when);
	assert_non_null(c->order[3].score);

	ga_ruleset_free(&rs);
	assert_int_equal(rs.n_rules, 0);
	assert_false(rs.has_classifier);
	ga_diags_free(&d);
}

static char *slurp(const char *path)
{
	ga_error err;
	char *s = ga_read_file(path, NULL, &err);

	if (!s)
		fail_msg("%s", err.msg);
	return s;
}

static int cmp_str(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

static size_t count_lines(const char *s)
{
	size_t n = 0;

	for (; *s; s++)
		n += *s == '\n';
	return n;
}

static void test_bad_corpus(void **state)
{
	static const char *const required[] = {
		"missing-when", "unknown-key", "bad-class", "bad-expr", "bad-expr-block",
		"yaml-syntax", "speedup-order", "duplicate-key", "classifier-missing-class",
		"not-a-mapping", "empty", "several-errors",
	};
	DIR *dp;
	struct dirent *de;
	char **files = NULL;
	size_t n = 0, cap = 0, i, j, failures = 0;

	(void)state;
	dp = opendir("rules-bad");
	assert_non_null(dp);
	while ((de = readdir(dp)) != NULL) {
		if (ga_str_has_suffix(de->d_name, ".yaml"))
			GA_PUSH(files, n, cap, ga_xstrndup(de->d_name, strlen(de->d_name) - 5));
	}
	closedir(dp);
	qsort(files, n, sizeof(*files), cmp_str);

	for (i = 0; i < GA_ARRAY_LEN(required); i++) {
		for (j = 0; j < n && strcmp(files[j], required[i]) != 0; j++)
			;
		if (j == n)
			fail_msg("rules-bad/%s.yaml is missing", required[i]);
	}

	for (i = 0; i < n; i++) {
		char *path = ga_xasprintf("rules-bad/%s.yaml", files[i]);
		char *exp_path = ga_xasprintf("rules-bad/%s.expected", files[i]);
		char *expected = slurp(exp_path), *got;
		ga_ruleset rs;
		ga_diags d = {0};
		int ret;

		ga_ruleset_init(&rs);
		ret = ga_rules_load_file(&rs, path, &d);
		got = print_diags(&d);
		if (strcmp(got, expected) != 0) {
			fprintf(stderr, "%s: diagnostics differ\n--- expected\n%s--- got\n%s---\n",
			        path, expected, got);
			failures++;
		}
		/* The return value counts the new diagnostics... */
		assert_int_equal(ret, (int)d.n);
		assert_int_equal(d.n, count_lines(expected));
		assert_true(d.n > 0);
		/* ...and nothing broken makes it into the set. */
		assert_int_equal(rs.n_rules, 0);
		assert_false(rs.has_classifier);
		assert_int_equal(rs.n_owners, 0);
		if (strcmp(files[i], "several-errors") == 0)
			assert_int_equal(d.n, 3);

		free(got);
		free(expected);
		free(exp_path);
		free(path);
		ga_diags_free(&d);
		ga_ruleset_free(&rs);
		free(files[i]);
	}
	free(files);
	assert_int_equal(failures, 0);
}

static void test_override(void **state)
{
	ga_ruleset rs;
	ga_diags d = {0};
	const ga_rule *r;

	(void)state;
	ga_ruleset_init(&rs);
	assert_int_equal(ga_rules_load_dir(&rs, "rules-good", &d), 0);
	r = ga_ruleset_find(&rs, "test-low-occupancy");
	assert_non_null(r);
	assert_string_equal(r->title, "Test rule: low occupancy");
	assert_int_equal(r->severity, GA_SEV_MEDIUM);

	/* A trailing slash is fine, and .yml files count. */
	if (ga_rules_load_dir(&rs, "rules-override/", &d) != 0)
		fail_with_diags(&d, "rules-override");
	assert_int_equal(ga_ruleset_validate(&rs, &d), 0);
	assert_int_equal(rs.n_rules, 3);

	r = ga_ruleset_find(&rs, "test-low-occupancy");
	assert_non_null(r);
	assert_ptr_equal(r, &rs.rules[0]);     /* replaced in place */
	assert_string_equal(r->title, "Overridden occupancy rule");
	assert_int_equal(r->severity, GA_SEV_LOW);
	assert_float_equal(r->speedup_max, 2, 0);
	assert_string_equal(r->when_src, "achieved_occupancy__pct < 25");
	assert_string_equal(r->path, "rules-override/occupancy.yml");

	r = ga_ruleset_find(&rs, "test-uncoalesced");
	assert_non_null(r);
	assert_string_equal(r->path, "rules-good/uncoalesced.yaml");

	r = ga_ruleset_find(&rs, "test-extra");
	assert_non_null(r);
	assert_ptr_equal(r, &rs.rules[2]);
	assert_int_equal(r->klass, GA_CLASS_COMPUTE);
	assert_float_equal(r->speedup_min, 1.2, 0);
	assert_int_equal(r->n_metrics, 2);
	assert_string_equal(r->metrics[1].name, "low");

	/* The classifier from the first directory stays. */
	assert_true(rs.has_classifier);
	assert_string_equal(rs.classifier.path, "rules-good/classify.yaml");

	/* Loading rules-good again restores the original rule. */
	assert_int_equal(ga_rules_load_dir(&rs, "rules-good", &d), 0);
	assert_int_equal(rs.n_rules, 3);
	assert_string_equal(ga_ruleset_find(&rs, "test-low-occupancy")->title,
	                    "Test rule: low occupancy");

	ga_ruleset_free(&rs);
	ga_diags_free(&d);
}

static void test_metric_names(void **state)
{
	static const char *const expected[] = {
		"dram__bytes_read.sum",
		"dram__throughput.avg.pct_of_peak_sustained_elapsed",
		"l1tex__t_requests_pipe_lsu_mem_global_op_ld.sum",
		"l1tex__t_sectors_pipe_lsu_mem_global_op_ld.sum",
		"l1tex__throughput.avg.pct_of_peak_sustained_active",
		"sm__throughput.avg.pct_of_peak_sustained_elapsed",
		"sm__warps_active.avg.pct_of_peak_sustained_active",
		"smsp__thread_inst_executed_per_inst_executed.ratio",
	};
	ga_ruleset rs;
	ga_diags d = {0};
	char **names = (char **)1;
	size_t n, i;

	(void)state;
	ga_ruleset_init(&rs);
	assert_int_equal(ga_ruleset_metric_names(&rs, &names), 0);
	free(names);

	assert_int_equal(ga_rules_load_dir(&rs, "rules-good", &d), 0);
	n = ga_ruleset_metric_names(&rs, &names);
	for (i = 0; i < n && i < GA_ARRAY_LEN(expected); i++)
		assert_string_equal(names[i], expected[i]);
	assert_int_equal(n, GA_ARRAY_LEN(expected));
	for (i = 0; i < n; i++)
		free(names[i]);
	free(names);

	/* After the override, the occupancy rule reads another metric. */
	assert_int_equal(ga_rules_load_dir(&rs, "rules-override", &d), 0);
	n = ga_ruleset_metric_names(&rs, &names);
	assert_int_equal(n, GA_ARRAY_LEN(expected) + 1);
	assert_string_equal(names[0], "achieved_occupancy__pct");
	assert_string_equal(names[n - 2], "smsp__inst_executed.avg.per_cycle_active");
	assert_string_equal(names[n - 1], "smsp__thread_inst_executed_per_inst_executed.ratio");
	for (i = 0; i < n; i++) {
		assert_false(strcmp(names[i], "sm__warps_active.avg.pct_of_peak_sustained_active")
		             == 0);
		if (i)
			assert_true(strcmp(names[i - 1], names[i]) < 0);
	}
	for (i = 0; i < n; i++)
		free(names[i]);
	free(names);
	ga_ruleset_free(&rs);
	ga_diags_free(&d);
}

static void test_missing_dir_and_file(void **state)
{
	ga_ruleset rs;
	ga_diags d = {0};
	char *s;

	(void)state;
	ga_ruleset_init(&rs);
	assert_int_equal(ga_rules_load_dir(&rs, "no-such-dir", &d), 1);
	assert_int_equal(d.n, 1);
	assert_string_equal(d.v[0].file, "no-such-dir");
	assert_int_equal(d.v[0].line, 0);
	assert_int_equal(d.v[0].col, 0);
	assert_int_equal(ga_rules_load_file(&rs, "rules-bad/no-such-file.yaml", &d), 1);
	s = print_diags(&d);
	assert_string_equal(s,
	        "no-such-dir: error: cannot open rules directory: No such file or directory\n"
	        "rules-bad/no-such-file.yaml: error: cannot read rule file: "
	        "No such file or directory\n");
	free(s);

	/* Nothing loaded: validate wants a classifier. */
	assert_int_equal(ga_ruleset_validate(&rs, &d), 1);
	assert_null(d.v[2].file);
	assert_string_equal(d.v[2].msg, "no classifier loaded: a rules directory must hold "
	                    "classify.yaml with a top-level 'classifier' key");
	ga_ruleset_free(&rs);
	ga_diags_free(&d);
}

/* ---- files written at run time into a scratch directory ---- */

static char scratch[64];

static void write_file(const char *name, const char *text)
{
	char *path = ga_xasprintf("%s/%s", scratch, name);
	FILE *f = fopen(path, "w");

	assert_non_null(f);
	fputs(text, f);
	fclose(f);
	free(path);
}

static void remove_scratch(void)
{
	DIR *dp = opendir(scratch);
	struct dirent *de;

	if (!dp)
		return;
	while ((de = readdir(dp)) != NULL) {
		char *path;
		/* Only . and ..: a test may write a dot-file (.hidden.yaml). */
		if (strcmp(de->d_name, ".") == 0 || strcmp(de->d_name, "..") == 0)
			continue;
		path = ga_xasprintf("%s/%s", scratch, de->d_name);
		unlink(path);
		free(path);
	}
	closedir(dp);
	/* A file left in it would leave the directory behind in /tmp. */
	assert_int_equal(rmdir(scratch), 0);
}

#define RULE(id, extra)                                                       \
	"id: " id "\ntitle: t\nclass: compute\nchecklist: 2\nseverity: low\n"  \
	"speedup: [1, 2]\nwhen: a__b > 1\nestimate: 0.5\nfix: f\nexample: e\n" \
	"explain: x\n" extra

static void test_same_dir_duplicate_id(void **state)
{
	ga_ruleset rs;
	ga_diags d = {0};
	char *s, *expect;

	(void)state;
	snprintf(scratch, sizeof(scratch), "/tmp/ga-test-load-XXXXXX");
	assert_non_null(mkdtemp(scratch));
	write_file("a.yaml", RULE("dup", ""));
	write_file("b.yaml", RULE("dup", ""));
	write_file("c.txt", "not: loaded\n");
	write_file(".hidden.yaml", "not loaded either\n");

	ga_ruleset_init(&rs);
	assert_int_equal(ga_rules_load_dir(&rs, scratch, &d), 1);
	s = print_diags(&d);
	expect = ga_xasprintf("%s/b.yaml:1:5: error: rule id 'dup' is used by another file "
	                      "in this directory\n", scratch);
	assert_string_equal(s, expect);
	free(s);
	free(expect);
	assert_int_equal(rs.n_rules, 1);
	assert_string_equal(ga_ruleset_find(&rs, "dup")->path + strlen(scratch), "/a.yaml");
	ga_ruleset_free(&rs);
	ga_diags_free(&d);
	remove_scratch();
}

static void test_classifier_replaced(void **state)
{
	static const char cls[] =
		"classifier:\n"
		"  order:\n"
		"    - {class: compute, when: 1, score: 1}\n"
		"    - {class: memory, when: 1, score: 2}\n"
		"    - {class: latency, when: 1, score: 3}\n"
		"    - {class: divergence, when: 1, score: 4}\n";
	ga_ruleset rs;
	ga_diags d = {0};
	char *path;

	(void)state;
	snprintf(scratch, sizeof(scratch), "/tmp/ga-test-load-XXXXXX");
	assert_non_null(mkdtemp(scratch));
	write_file("classify.yaml", cls);
	path = ga_xasprintf("%s/classify.yaml", scratch);

	ga_ruleset_init(&rs);
	assert_int_equal(ga_rules_load_dir(&rs, "rules-good", &d), 0);
	assert_int_equal(ga_rules_load_file(&rs, path, &d), 0);
	assert_true(rs.has_classifier);
	assert_string_equal(rs.classifier.path, path);
	assert_float_equal(rs.classifier.close_margin, 10, 0);   /* the default */
	assert_int_equal(rs.classifier.n_metrics, 0);
	assert_int_equal(rs.classifier.n_order, 4);
	assert_int_equal(rs.classifier.order[0].klass, GA_CLASS_COMPUTE);
	assert_string_equal(rs.classifier.order[3].score_src, "4");

	/* A broken classifier does not replace a good one. */
	assert_int_equal(ga_rules_load_file(&rs, "rules-bad/classifier-missing-class.yaml", &d),
	                 1);
	assert_string_equal(rs.classifier.path, path);
	ga_ruleset_free(&rs);
	ga_diags_free(&d);
	free(path);
	remove_scratch();
}

/* Classifier constants: named expressions that read no metric, through
 * other constants too; one that reads a metric, or an unknown name, is NAN. */
static void test_classifier_value(void **state)
{
	static const char cls[] =
		"classifier:\n"
		"  metrics:\n"
		"    busy_pct: 60\n"
		"    idle_frac: (100 - busy_pct) / 100\n"
		"    sm: 2 * sm__cycles_active.avg\n"
		"  order:\n"
		"    - {class: compute, when: sm > busy_pct, score: 1}\n"
		"    - {class: memory, when: 1, score: 2}\n"
		"    - {class: latency, when: 1, score: 3}\n"
		"    - {class: divergence, when: 1, score: 4}\n";
	ga_ruleset rs;
	ga_diags d = {0};
	char *path;

	(void)state;
	snprintf(scratch, sizeof(scratch), "/tmp/ga-test-load-XXXXXX");
	assert_non_null(mkdtemp(scratch));
	write_file("classify.yaml", cls);
	path = ga_xasprintf("%s/classify.yaml", scratch);

	ga_ruleset_init(&rs);
	assert_true(isnan(ga_classifier_value(&rs, "busy_pct")));   /* no classifier yet */
	assert_int_equal(ga_rules_load_file(&rs, path, &d), 0);
	assert_float_equal(ga_classifier_value(&rs, "busy_pct"), 60, 0);
	assert_float_equal(ga_classifier_value(&rs, "idle_frac"), 0.4, 1e-12);
	assert_true(isnan(ga_classifier_value(&rs, "sm")));
	assert_true(isnan(ga_classifier_value(&rs, "no_such_name")));
	ga_ruleset_free(&rs);
	ga_diags_free(&d);
	free(path);
	remove_scratch();
}

/* Rules may use the classifier's named expressions; names that are defined
 * nowhere are reported by ga_ruleset_validate, once the classifier is known. */
static void test_validate_names(void **state)
{
	ga_ruleset rs;
	ga_diags d = {0};
	char *s, *expect, *path, **names;
	size_t n, i;

	(void)state;
	snprintf(scratch, sizeof(scratch), "/tmp/ga-test-load-XXXXXX");
	assert_non_null(mkdtemp(scratch));
	write_file("uses-classifier.yaml",
	           "id: uses-classifier\ntitle: t\nclass: divergence\nchecklist: 2\n"
	           "severity: low\nspeedup: [1, 2]\nmetrics:\n  loss: 100 - warp_eff\n"
	           "when: loss > 30 and sm < 50\nestimate: loss / 100\n"
	           "evidence: [warp_eff, loss]\nfix: f\nexample: e\nexplain: x\n");
	write_file("typo.yaml",
	           "# a comment first\n"
	           "id: typo\ntitle: t\nclass: memory\nchecklist: 2\nseverity: low\n"
	           "speedup: [1, 2]\nmetrics:\n  ratio: a__b / c__d\n  r2: ratio * raito\n"
	           "when: ratio > 1 and raito > 2\nestimate: 0.5\nevidence: [ratio, ratoi]\n"
	           "fix: f\nexample: e\nexplain: x\n");

	/* Loading alone is fine: the classifier may come from another directory. */
	ga_ruleset_init(&rs);
	assert_int_equal(ga_rules_load_dir(&rs, scratch, &d), 0);
	assert_int_equal(rs.n_rules, 2);

	/* Without a classifier, 'warp_eff' and 'sm' are unknown too: one
	 * diagnostic for the classifier, three per rule. */
	assert_int_equal(ga_ruleset_validate(&rs, &d), 7);
	ga_diags_free(&d);

	assert_int_equal(ga_rules_load_dir(&rs, "rules-good", &d), 0);
	assert_int_equal(ga_ruleset_validate(&rs, &d), 3);
	s = print_diags(&d);
	path = ga_xasprintf("%s/typo.yaml", scratch);
	expect = ga_xasprintf(
	        "%s:10:15: error: rule 'typo': unknown name 'raito' in 'metrics.r2' (not a named "
	        "expression of the rule or the classifier; metric names contain '__')\n"
	        "%s:11:21: error: rule 'typo': unknown name 'raito' in 'when' (not a named "
	        "expression of the rule or the classifier; metric names contain '__')\n"
	        "%s:2: error: rule 'typo': evidence 'ratoi' is neither a named expression of "
	        "the rule or the classifier nor a metric name (metric names contain '__')\n",
	        path, path, path);
	assert_string_equal(s, expect);
	free(s);
	free(expect);

	/* Metric names leave out the classifier's named expressions. */
	n = ga_ruleset_metric_names(&rs, &names);
	for (i = 0; i < n; i++) {
		assert_true(strcmp(names[i], "sm") != 0);
		assert_true(strcmp(names[i], "warp_eff") != 0);
		assert_true(strcmp(names[i], "loss") != 0);
	}
	for (i = 0; i < n; i++)
		free(names[i]);
	free(names);

	free(path);
	ga_ruleset_free(&rs);
	ga_diags_free(&d);
	remove_scratch();
}

/* Positions of errors inside expressions in scalars of every style. */
static void test_expression_positions(void **state)
{
	static const struct {
		const char *when;       /* the text after "when:" (may span lines) */
		const char *diag;       /* expected position and message */
	} cases[] = {
		{ " a__b > )\n", "7:14: error: in 'when': unexpected ')'" },
		{ " 'a__b > )'\n", "7:15: error: in 'when': unexpected ')'" },
		{ " \"a__b\\t> )\"\n", "7:16: error: in 'when': unexpected ')'" },
		{ " a__b >\n  1 )\n", "8:5: error: in 'when': unexpected ')'" },
		{ " |\n  a__b > 1\n\n  and c__d > )\n", "10:14: error: in 'when': unexpected ')'" },
		{ " >\n  a__b > 1\n  and\n    (c__d > 2\n", "10:14: error: in 'when': expected ')' "
		  "to close '(' at offset 15" },
		{ " |-\n    x__y > 1 and @\n", "8:18: error: in 'when': unexpected character '@'" },
		{ "\n", "7:6: error: in 'when': empty expression" },
		{ " [1]\n", "7:7: error: 'when' must be an expression (a string)" },
	};
	size_t i;

	(void)state;
	snprintf(scratch, sizeof(scratch), "/tmp/ga-test-load-XXXXXX");
	assert_non_null(mkdtemp(scratch));
	for (i = 0; i < GA_ARRAY_LEN(cases); i++) {
		ga_ruleset rs;
		ga_diags d = {0};
		char *text = ga_xasprintf("id: p\ntitle: t\nclass: compute\nchecklist: 2\n"
		                          "severity: low\nspeedup: [1, 2]\nwhen:%s"
		                          "estimate: 0.5\nfix: f\nexample: e\nexplain: x\n",
		                          cases[i].when);
		char *path = ga_xasprintf("%s/p.yaml", scratch);
		char *expect = ga_xasprintf("%s:%s\n", path, cases[i].diag);
		char *got;

		write_file("p.yaml", text);
		ga_ruleset_init(&rs);
		ga_rules_load_file(&rs, path, &d);
		got = print_diags(&d);
		if (strcmp(got, expect) != 0)
			fail_msg("case %zu: got \"%s\", expected \"%s\"", i, got, expect);
		free(got);
		free(expect);
		free(path);
		free(text);
		ga_ruleset_free(&rs);
		ga_diags_free(&d);
	}
	remove_scratch();
}

/* A rule's `source_lines`: what the collector can evaluate (no pseudo
 * metrics, neither directly nor through a named expression), and the
 * trigger text with every named expression written out. */
static void test_source_lines(void **state)
{
	static const char rule_head[] =
		"id: src\ntitle: t\nclass: memory\nchecklist: 2\nseverity: low\n"
		"speedup: [1, 2]\nmetrics:\n  waves: launch__waves_per_sm\n"
		"  ratio: a__b.sum / max(c__d.sum, 1)\n  busy: mem - 1\n"
		"when: ratio > 2\nestimate: 0.5\nfix: f\nexample: e\nexplain: x\n";
	ga_ruleset rs;
	ga_diags d = {0};
	char *path, *s, *expect, *trigger;

	(void)state;
	snprintf(scratch, sizeof(scratch), "/tmp/ga-test-load-XXXXXX");
	assert_non_null(mkdtemp(scratch));
	path = ga_xasprintf("%s/src.yaml", scratch);

	/* Pseudo metrics, directly and through 'waves', at their columns. */
	s = ga_xasprintf("%ssource_lines: ratio > 2 and waves < 1 or launch__grid_size < 9\n",
	                 rule_head);
	write_file("src.yaml", s);
	free(s);
	ga_ruleset_init(&rs);
	assert_int_equal(ga_rules_load_file(&rs, path, &d), 2);
	assert_int_equal(rs.n_rules, 0);
	s = print_diags(&d);
	expect = ga_xasprintf(
	        "%s:16:29: error: in 'source_lines': 'waves' reads 'launch__waves_per_sm', "
	        "which the collector does not measure; use CUPTI metrics only\n"
	        "%s:16:42: error: in 'source_lines': 'launch__grid_size' is computed by "
	        "gpuadvise, not measured by the collector; use CUPTI metrics only\n", path, path);
	assert_string_equal(s, expect);
	free(s);
	free(expect);
	ga_diags_free(&d);
	ga_ruleset_free(&rs);

	/* A rule's own names and the classifier's are written out in
	 * parentheses, recursively; metric names stay.  The tabs and newlines
	 * of the YAML text do not reach the trigger, where they separate its
	 * parts: "ID<TAB>EXPRESSION<NEWLINE>". */
	s = ga_xasprintf("%ssource_lines: |\n  ratio > (\n   2\t)\n  and\tbusy > sm\n", rule_head);
	write_file("src.yaml", s);
	free(s);
	ga_ruleset_init(&rs);
	assert_int_equal(ga_rules_load_file(&rs, path, &d), 0);
	assert_int_equal(ga_rules_load_dir(&rs, "rules-good", &d), 0);
	if (ga_ruleset_validate(&rs, &d) != 0)
		fail_with_diags(&d, "source_lines");
	trigger = ga_ruleset_source_trigger(&rs);
	assert_non_null(trigger);
	assert_string_equal(trigger,
	        "src\t(a__b.sum / max(c__d.sum, 1)) > 2 and "
	        "((max(dram__throughput.avg.pct_of_peak_sustained_elapsed, "
	        "l1tex__throughput.avg.pct_of_peak_sustained_active)) - 1) > "
	        "(sm__throughput.avg.pct_of_peak_sustained_elapsed)\n");
	free(trigger);
	ga_ruleset_free(&rs);

	/* No rule with source_lines: no trigger. */
	ga_ruleset_init(&rs);
	assert_int_equal(ga_rules_load_dir(&rs, "rules-good", &d), 0);
	assert_null(ga_ruleset_source_trigger(&rs));
	ga_ruleset_free(&rs);

	/* A classifier name that reads a pseudo metric is reported once the
	 * classifier is known. */
	write_file("classify.yaml", "classifier:\n  metrics:\n    sm: launch__block_size\n"
	           "    mem: x__y\n  order:\n"
	           "    - {class: compute, when: sm > 1, score: 1}\n"
	           "    - {class: memory, when: mem > 1, score: 1}\n"
	           "    - {class: latency, when: 1, score: 1}\n"
	           "    - {class: divergence, when: 0, score: 1}\n");
	ga_ruleset_init(&rs);
	assert_int_equal(ga_rules_load_dir(&rs, scratch, &d), 0);
	assert_int_equal(ga_ruleset_validate(&rs, &d), 1);
	s = print_diags(&d);
	expect = ga_xasprintf("%s:1: error: rule 'src': 'source_lines' reads "
	                      "'launch__block_size' through a classifier name; the collector "
	                      "does not measure it\n", path);
	assert_string_equal(s, expect);
	free(s);
	free(expect);
	ga_ruleset_free(&rs);
	ga_diags_free(&d);
	free(path);
	remove_scratch();
}

#ifdef GA_TEST_RULES
/* The shipped rules load and validate cleanly, and read only metric names. */
static void test_shipped_rules(void **state)
{
	ga_ruleset rs;
	ga_diags d = {0};
	char **names;
	size_t n, i;

	(void)state;
	ga_ruleset_init(&rs);
	if (ga_rules_load_dir(&rs, GA_TEST_RULES, &d) != 0 || ga_ruleset_validate(&rs, &d) != 0)
		fail_with_diags(&d, GA_TEST_RULES);
	assert_true(rs.has_classifier);
	assert_true(rs.n_rules >= 1);
	for (i = 0; i < rs.n_rules; i++)
		assert_true(ga_str_has_prefix(rs.rules[i].path, GA_TEST_RULES "/"));
	n = ga_ruleset_metric_names(&rs, &names);
	assert_true(n >= 1);
	for (i = 0; i < n; i++) {
		if (!strstr(names[i], "__") || ga_str_has_prefix(names[i], "launch__") ||
		    ga_str_has_prefix(names[i], "device__"))
			fail_msg("metric_names gave '%s'", names[i]);
	}
	for (i = 0; i < n; i++)
		free(names[i]);
	free(names);
	ga_ruleset_free(&rs);
	ga_diags_free(&d);
}
#endif

#ifdef GA_TEST_RULES
/* Named expressions evaluated as the engine does: a rule's own names (those
 * before the one being evaluated), then the classifier's, then the launch's
 * metrics.  A failed named value makes its reader fail. */
struct scoped {
	const ga_named_expr *rule, *cls;
	size_t n_rule, n_cls;
	const ga_profile *p;
	const ga_launch *l;
	const double *scale;      /* per metric, to move ratios across cut-offs */
};

static int scoped_lookup(void *ctx, const char *name, double *out)
{
	const struct scoped *sc = ctx;
	struct scoped inner = *sc;
	const ga_expr *e = NULL;
	size_t i;

	for (i = 0; i < sc->n_rule && !e; i++) {
		if (strcmp(sc->rule[i].name, name) == 0) {
			e = sc->rule[i].expr;
			inner.n_rule = i;
		}
	}
	for (i = 0; i < sc->n_cls && !e; i++) {
		if (strcmp(sc->cls[i].name, name) == 0) {
			e = sc->cls[i].expr;
			inner.rule = NULL;
			inner.n_rule = 0;
			inner.n_cls = i;
		}
	}
	if (e)
		return ga_expr_eval(e, scoped_lookup, &inner, out, NULL, 0) == GA_EVAL_OK ? 0 : -1;
	for (i = 0; i < sc->p->n_metrics; i++) {
		if (strcmp(sc->p->metrics[i], name) == 0 && isfinite(sc->l->values[i])) {
			*out = sc->l->values[i] * sc->scale[i];
			return 0;
		}
	}
	return -1;
}

/* Metrics only, as the collector has them. */
static int metric_lookup(void *ctx, const char *name, double *out)
{
	const struct scoped *sc = ctx;
	size_t i;

	assert_true(strstr(name, "__") != NULL);
	for (i = 0; i < sc->p->n_metrics; i++) {
		if (strcmp(sc->p->metrics[i], name) == 0 && isfinite(sc->l->values[i])) {
			*out = sc->l->values[i] * sc->scale[i];
			return 0;
		}
	}
	return -1;
}

static void no_pseudo(void *ctx, const char *name)
{
	(void)ctx;
	if (!strstr(name, "__") || ga_str_has_prefix(name, "launch__") ||
	    ga_str_has_prefix(name, "device__") || ga_str_has_prefix(name, "program__"))
		fail_msg("the source-line trigger reads '%s'", name);
}

#define N_TRIALS 40

/* Truth of a trigger (a failure counts as false, as in the collector). */
static int trigger_holds(const ga_expr *e, struct scoped *sc)
{
	double v;

	return ga_expr_eval(e, metric_lookup, sc, &v, NULL, 0) == GA_EVAL_OK && v != 0;
}

/* The trigger's lines, "ID<TAB>EXPRESSION<NEWLINE>": one per rule with
 * `source_lines`, in rule order, each expression parsed as the collector
 * parses it.  Returns how many; ids and exprs are freed by the caller. */
static size_t trigger_lines(const ga_ruleset *rs, const char *text, char ***ids,
                            ga_expr ***exprs)
{
	size_t n = 0, k;
	const char *s = text;

	*ids = ga_xcalloc(rs->n_rules, sizeof(**ids));
	*exprs = ga_xcalloc(rs->n_rules, sizeof(**exprs));
	for (k = 0; k < rs->n_rules; k++) {
		const char *tab, *nl;
		char *expr, msg[256];
		size_t off = 0;
		if (!rs->rules[k].source_lines)
			continue;
		tab = strchr(s, '\t');
		nl = strchr(s, '\n');
		if (!tab || !nl || tab > nl)
			fail_msg("line %zu of the trigger is not ID<TAB>EXPRESSION<NEWLINE>", n + 1);
		(*ids)[n] = ga_xstrndup(s, (size_t)(tab - s));
		assert_string_equal((*ids)[n], rs->rules[k].id);
		expr = ga_xstrndup(tab + 1, (size_t)(nl - tab - 1));
		assert_null(strchr(expr, '\t'));
		(*exprs)[n] = ga_expr_parse(expr, &off, msg, sizeof(msg));
		if (!(*exprs)[n])
			fail_msg("%s: does not parse at %zu: %s", (*ids)[n], off, msg);
		ga_expr_foreach_name((*exprs)[n], no_pseudo, NULL);
		free(expr);
		n++;
		s = nl + 1;
	}
	assert_string_equal(s, "");   /* no line for a rule without source_lines */
	return n;
}

/* The shipped rules' trigger has a line for each rule with
 * `source_lines`, which parses, reads only CUPTI metrics, and holds on the
 * launches of the H200 recording exactly where the rule's own
 * `source_lines`, with its named expressions, does.  It picks the kernels
 * that get the three findings the source view can place on lines, and
 * those whose XU work sfu-heavy-math and fp32-accurate-math split by
 * opcode. */
static void test_shipped_source_trigger(void **state)
{
	static const struct {
		const char *kernel;     /* prefix of the launch's name */
		int holds;
	} expect[] = {
		{ "copy_strided(", 1 },          /* uncoalesced-global-access */
		{ "transpose_naive(", 1 },       /* uncoalesced-global-access */
		{ "branch_evenodd(", 1 },        /* thread-divergence */
		{ "smem_conflict(", 1 },         /* shared-bank-conflicts */
		{ "copy_coalesced(", 0 },
		{ "fma_loop(", 0 },
	};
	ga_ruleset rs;
	ga_diags d = {0};
	ga_profile p;
	ga_error err;
	char *text, **ids;
	ga_expr **lines;
	size_t i, k, n_lines, with_lines = 0, seen[GA_ARRAY_LEN(expect)] = {0};
	size_t held[GA_ARRAY_LEN(expect)] = {0}, trials_held = 0;
	double *scale;
	uint64_t lcg = 21;

	(void)state;
	ga_ruleset_init(&rs);
	if (ga_rules_load_dir(&rs, GA_TEST_RULES, &d) != 0 || ga_ruleset_validate(&rs, &d) != 0)
		fail_with_diags(&d, GA_TEST_RULES);
	ga_profile_init(&p);
	assert_int_equal(ga_profile_load(&p, "recorded/testapp-all.json", &err), 0);
	text = ga_ruleset_source_trigger(&rs);
	assert_non_null(text);
	n_lines = trigger_lines(&rs, text, &ids, &lines);

	scale = ga_xcalloc(p.n_metrics * N_TRIALS, sizeof(*scale));
	for (k = 0; k < p.n_metrics * N_TRIALS; k++) {
		/* Trial 0 as recorded; the others scale each metric by its own
		 * factor between 1/8 and 8 (a fixed LCG), which moves ratios
		 * such as sectors per request into every band of the rules. */
		lcg = lcg * 6364136223846793005u + 1442695040888963407u;
		scale[k] = k < p.n_metrics ? 1 : exp2((double)(lcg >> 11) / 9007199254740992.0 * 6 - 3);
	}
	for (i = 0; i < p.n_launches * N_TRIALS; i++) {
		struct scoped sc = { NULL, rs.classifier.metrics, 0, rs.classifier.n_metrics, &p,
		                     &p.launches[i % p.n_launches],
		                     scale + i / p.n_launches * p.n_metrics };
		int any = 0;
		size_t line = 0;
		for (k = 0; k < rs.n_rules; k++) {
			const ga_rule *r = &rs.rules[k];
			double v;
			int own;
			if (!r->source_lines)
				continue;
			sc.rule = r->metrics;
			sc.n_rule = r->n_metrics;
			own = ga_expr_eval(r->source_lines, scoped_lookup, &sc, &v, NULL, 0) ==
			      GA_EVAL_OK && v != 0;
			if (trigger_holds(lines[line], &sc) != own)
				fail_msg("%s on %s (trial %zu): the rule says %d, its trigger line "
				         "%d", r->id, sc.l->name, i / p.n_launches, own, !own);
			any |= own;
			line++;
		}
		if (i >= p.n_launches) {
			trials_held += any;
			continue;
		}
		/* Launches measured different metric sets: the trigger holds on
		 * those that measured the rule's inputs. */
		for (k = 0; k < GA_ARRAY_LEN(expect); k++) {
			if (ga_str_has_prefix(p.launches[i].name, expect[k].kernel)) {
				if (any && !expect[k].holds)
					fail_msg("%s: trigger holds", p.launches[i].name);
				held[k] += any;
				seen[k]++;
			}
		}
	}
	/* The scaled trials are not all on one side of the cut-offs. */
	assert_true(trials_held > 0 && trials_held < p.n_launches * (N_TRIALS - 1));
	for (k = 0; k < rs.n_rules; k++)
		with_lines += rs.rules[k].source_lines != NULL;
	assert_int_equal(with_lines, 6);
	assert_int_equal(n_lines, 6);
	assert_non_null(ga_ruleset_find(&rs, "memory-latency-stalls")->source_lines);
	assert_non_null(ga_ruleset_find(&rs, "sfu-heavy-math")->source_lines);
	assert_non_null(ga_ruleset_find(&rs, "fp32-accurate-math")->source_lines);
	assert_non_null(ga_ruleset_find(&rs, "uncoalesced-global-access")->source_lines);
	assert_non_null(ga_ruleset_find(&rs, "shared-bank-conflicts")->source_lines);
	assert_non_null(ga_ruleset_find(&rs, "thread-divergence")->source_lines);
	for (k = 0; k < GA_ARRAY_LEN(expect); k++) {
		assert_true(seen[k] > 0);
		if (expect[k].holds && held[k] == 0)
			fail_msg("%s: the trigger holds on none of its launches", expect[k].kernel);
	}

	free(scale);
	for (k = 0; k < n_lines; k++) {
		free(ids[k]);
		ga_expr_free(lines[k]);
	}
	free(ids);
	free(lines);
	free(text);
	ga_profile_free(&p);
	ga_ruleset_free(&rs);
	ga_diags_free(&d);
}
#endif

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_names),
		cmocka_unit_test(test_diags_print),
		cmocka_unit_test(test_load_good),
		cmocka_unit_test(test_bad_corpus),
		cmocka_unit_test(test_override),
		cmocka_unit_test(test_metric_names),
		cmocka_unit_test(test_missing_dir_and_file),
		cmocka_unit_test(test_same_dir_duplicate_id),
		cmocka_unit_test(test_classifier_replaced),
		cmocka_unit_test(test_classifier_value),
		cmocka_unit_test(test_validate_names),
		cmocka_unit_test(test_expression_positions),
		cmocka_unit_test(test_source_lines),
#ifdef GA_TEST_RULES
		cmocka_unit_test(test_shipped_rules),
		cmocka_unit_test(test_shipped_source_trigger),
#endif
	};

	return cmocka_run_group_tests(tests, setup, NULL);
}
