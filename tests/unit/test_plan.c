/* test_plan.c: the collection plan (src/analyze/plan.c) for the shipped
 * rules, against the plan that main.c's plan_metrics made before the plan
 * moved to the analysis stage.
 *
 * reference_plan below is that function as it was, with its strstr: the
 * roofline's FLOP counters are the names with "__sass_" and no ".peak_".
 * Besides matching it name by name and bundle by bundle, the shape of the
 * plan is checked on its own terms. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdlib.h>
#include <string.h>

#include "analyze/plan.h"
#include "analyze/roofline.h"
#include "rules/rules.h"
#include "util/util.h"

#include "helpers.h"

#ifndef GA_TEST_RULES
#error "GA_TEST_RULES must name the shipped rules directory"
#endif

#define DURATION "gpu__time_duration.sum"
#define GR_ACTIVE "gr__cycles_active.max"
#define GR_ELAPSED "gr__cycles_elapsed.max"

static ga_ruleset shipped;

static int setup(void **state)
{
	(void)state;
	load_rules(&shipped, GA_TEST_RULES);
	return 0;
}

static int teardown(void **state)
{
	(void)state;
	ga_ruleset_free(&shipped);
	return 0;
}

/* ---- main.c's plan_metrics, as it was ---------------------------------- */

static void ref_add(ga_plan *mp, const char *name, size_t bundle)
{
	for (size_t j = 0; j < mp->n; j++)
		if (strcmp(mp->names[j], name) == 0)
			return;
	mp->names = ga_xrealloc(mp->names, (mp->n + 1) * sizeof(*mp->names));
	mp->bundle = ga_xrealloc(mp->bundle, (mp->n + 1) * sizeof(*mp->bundle));
	mp->names[mp->n] = ga_xstrdup(name);
	mp->bundle[mp->n++] = bundle;
}

static void reference_plan(int quick, char **extra, size_t n_extra, ga_plan *mp)
{
	char **names = NULL;
	size_t *bundle = NULL, n, next = 0;

	memset(mp, 0, sizeof(*mp));
	if (quick) {
		n = ga_classifier_required_metric_names(&shipped, &names);
		bundle = ga_xcalloc(n ? n : 1, sizeof(*bundle));
	} else {
		n = ga_ruleset_metric_bundles(&shipped, &names, &bundle);
	}
	for (size_t i = 0; i < n; i++)
		if (bundle[i] == 0)
			ref_add(mp, names[i], 0);
	ref_add(mp, DURATION, 0);
	ref_add(mp, GR_ACTIVE, 0);   /* loop ranges: the kernel's own time */
	ref_add(mp, GR_ELAPSED, 0);
	next = 1;
	if (!quick) {
		const char **roof = NULL;
		size_t n_roof = ga_roofline_metric_names(&roof);
		for (int flops = 0; flops < 2; flops++, next++)
			for (size_t i = 0; i < n_roof; i++)
				if ((strstr(roof[i], "__sass_") && !strstr(roof[i], ".peak_")) == flops)
					ref_add(mp, roof[i], next);
	}
	for (size_t i = 0; i < n; i++)
		if (bundle[i] > 0)
			ref_add(mp, names[i], next + bundle[i] - 1);
	if (n && bundle[n - 1] > 0)
		next += bundle[n - 1];
	for (size_t i = 0; i < n_extra; i++)
		ref_add(mp, extra[i], next);
	for (size_t i = 0; i < n; i++)
		free(names[i]);
	free(names);
	free(bundle);
}

/* ---- checks ------------------------------------------------------------- */

static void same_plan(const ga_plan *got, const ga_plan *want)
{
	assert_int_equal(got->n, want->n);
	for (size_t i = 0; i < want->n; i++) {
		assert_string_equal(got->names[i], want->names[i]);
		if (got->bundle[i] != want->bundle[i])
			fail_msg("%s: bundle %zu, expected %zu", want->names[i], got->bundle[i],
			         want->bundle[i]);
	}
}

static long find(const ga_plan *p, const char *name)
{
	for (size_t i = 0; i < p->n; i++)
		if (strcmp(p->names[i], name) == 0)
			return (long)i;
	return -1;
}

/* The roofline's FLOP counters: the add, multiply and fused multiply-add
 * counts of each precision (not the integer or conversion counts that
 * rules read under the same prefix). */
static int is_flop_count(const char *name)
{
	static const char *const ops[] = { "fadd", "fmul", "ffma", "dadd", "dmul", "dfma",
	                                   "hadd", "hmul", "hfma" };
	const char *prefix = "sm__sass_thread_inst_executed_op_";
	size_t n = strlen(prefix);
	if (strncmp(name, prefix, n) != 0 || strstr(name, ".peak_"))
		return 0;
	for (size_t i = 0; i < sizeof(ops) / sizeof(ops[0]); i++)
		if (strncmp(name + n, ops[i], 4) == 0 && strcmp(name + n + 4, "_pred_on.sum") == 0)
			return 1;
	return 0;
}

static void test_full_plan(void **state)
{
	ga_plan got, want;
	char *extra[] = { "foo__bar.sum", "dram__bytes.sum" };
	(void)state;

	ga_plan_metrics(&shipped, &(ga_plan_opts){ .extra = (const char *const *)extra,
	                                           .n_extra = 2 }, &got);
	reference_plan(0, extra, 2, &want);
	same_plan(&got, &want);

	/* Bundles ascend; the duration and the classifier's come first. */
	for (size_t i = 1; i < got.n; i++)
		assert_true(got.bundle[i] >= got.bundle[i - 1]);
	assert_int_equal(got.bundle[find(&got, DURATION)], 0);
	assert_int_equal(got.bundle[find(&got, "smsp__issue_active.avg.pct_of_peak_sustained_active")],
	                 0);
	/* The roofline's bytes and peaks in bundle 1, its nine FLOP counters
	 * alone in bundle 2, the rules' from 3 on. */
	assert_int_equal(got.bundle[find(&got, "dram__bytes.sum")], 1);
	assert_int_equal(got.bundle[find(&got, "sm__sass_thread_inst_executed_op_ffma_pred_on.sum"
	                                       ".peak_sustained")], 1);
	size_t flops = 0;
	for (size_t i = 0; i < got.n; i++) {
		assert_int_equal(is_flop_count(got.names[i]), got.bundle[i] == 2);
		flops += got.bundle[i] == 2;
	}
	assert_int_equal(flops, 9);
	assert_true(got.bundle[find(&got, "l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_ld.sum")]
	            >= 3);
	/* --metrics last, in a bundle of their own; one already planned stays. */
	assert_int_equal(find(&got, "foo__bar.sum"), (long)got.n - 1);
	assert_int_equal(got.bundle[got.n - 1], got.bundle[got.n - 2] + 1);
	assert_int_equal(got.bundle[find(&got, "dram__bytes.sum")], 1);
	ga_plan_free(&got);
	ga_plan_free(&want);
}

static void test_quick_plan(void **state)
{
	ga_plan got, want;
	char *extra[] = { "foo__bar.sum" };
	(void)state;

	ga_plan_metrics(&shipped, &(ga_plan_opts){ .quick = 1,
	                                           .extra = (const char *const *)extra,
	                                           .n_extra = 1 }, &got);
	reference_plan(1, extra, 1, &want);
	same_plan(&got, &want);
	/* No roofline, no rule: the classifier's required names and the
	 * duration in bundle 0, --metrics in bundle 1. */
	assert_int_equal(find(&got, "dram__bytes.sum"), -1);
	assert_int_equal(find(&got, "sm__pipe_fma_cycles_active.avg.pct_of_peak_sustained_active"),
	                 -1);  /* wrapped in avail(): not required */
	for (size_t i = 0; i + 1 < got.n; i++)
		assert_int_equal(got.bundle[i], 0);
	assert_string_equal(got.names[got.n - 1], "foo__bar.sum");
	assert_int_equal(got.bundle[got.n - 1], 1);
	ga_plan_free(&got);
	ga_plan_free(&want);
}

/* The rules' source-line trigger travels with the plan: a line
 * "RULE-ID<TAB>EXPRESSION" for each of the four shipped rules with
 * `source_lines`; each expression parses, and every name it reads is a
 * metric the plan collects (the collector can only evaluate what it
 * measured); --quick collects no rule's metric and so has none. */
static void trigger_name_planned(void *ctx, const char *name)
{
	if (find(ctx, name) < 0)
		fail_msg("the source-line trigger reads %s, which the plan does not collect", name);
}

static void test_source_trigger(void **state)
{
	static const char *const ids[] = {
		"fp32-accurate-math", "memory-latency-stalls", "sfu-heavy-math",
		"shared-bank-conflicts", "thread-divergence", "uncoalesced-global-access",
	};
	size_t seen[GA_ARRAY_LEN(ids)] = {0}, n_lines = 0, off, k;
	char msg[256], *line, *save = NULL, *text;
	ga_plan got;
	(void)state;

	ga_plan_metrics(&shipped, NULL, &got);
	assert_non_null(got.source_when);
	assert_non_null(strstr(got.source_when, "l1tex__t_sectors_pipe_lsu_mem_global_op_ld.sum"));
	assert_int_equal(got.source_when[strlen(got.source_when) - 1], '\n');
	/* of those, the rules whose models read the source view's opcodes */
	assert_string_equal(got.source_opcodes,
	                    "fp32-accurate-math,memory-latency-stalls,sfu-heavy-math");
	text = ga_xstrdup(got.source_when);
	for (line = strtok_r(text, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
		char *tab = strchr(line, '\t');
		ga_expr *e;
		if (!tab)
			fail_msg("trigger line '%s' has no tab", line);
		*tab = '\0';
		for (k = 0; k < GA_ARRAY_LEN(ids) && strcmp(ids[k], line) != 0; k++)
			;
		if (k == GA_ARRAY_LEN(ids))
			fail_msg("a trigger line for rule '%s', which has no source_lines", line);
		seen[k]++;
		off = 0;
		if (!(e = ga_expr_parse(tab + 1, &off, msg, sizeof(msg))))
			fail_msg("%s: its trigger does not parse at %zu: %s", line, off, msg);
		ga_expr_foreach_name(e, trigger_name_planned, &got);
		ga_expr_free(e);
		n_lines++;
	}
	assert_int_equal(n_lines, GA_ARRAY_LEN(ids));
	for (k = 0; k < GA_ARRAY_LEN(ids); k++)
		assert_int_equal(seen[k], 1);
	free(text);
	ga_plan_free(&got);

	ga_plan_metrics(&shipped, &(ga_plan_opts){ .quick = 1 }, &got);
	assert_null(got.source_when);
	ga_plan_free(&got);
}

/* No options: the full plan without --metrics. */
static void test_no_options(void **state)
{
	ga_plan got, want;
	(void)state;
	ga_plan_metrics(&shipped, NULL, &got);
	reference_plan(0, NULL, 0, &want);
	same_plan(&got, &want);
	ga_plan_free(&got);
	ga_plan_free(&want);
	assert_null(got.names);
	assert_int_equal(got.n, 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_full_plan),
		cmocka_unit_test(test_quick_plan),
		cmocka_unit_test(test_no_options),
		cmocka_unit_test(test_source_trigger),
	};
	return cmocka_run_group_tests(tests, setup, teardown);
}
