/* test_engine.c: grouping, classification and ranking (src/rules/engine.c).
 *
 * Two kinds of input:
 *   - RECORDED profiles (GA_TEST_FIXTURES/recorded/testapp-*.json), made by
 *     gpuadvise's own collector on an H200, analysed with the shipped rules
 *     (GA_TEST_RULES).  These are the acceptance criteria: each test kernel
 *     lands in the class it was written to show.
 *   - SYNTHETIC profiles built in code below (every ga_profile made by
 *     new_profile() is synthetic: names, durations and metric values are
 *     made up), analysed with the small hand-written rule set in
 *     GA_TEST_FIXTURES/engine-rules: a classifier over syn__* metrics and
 *     three rules (syn-ratio, syn-same-launch, syn-repeated).  The expected
 *     values are worked out by hand from those inputs in the comments. */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cmocka.h>
#include <malloc.h>

#include "profile/profile.h"
#include "analyze/analyze.h"
#include "rules/rules.h"
#include "util/util.h"

#include "helpers.h"

#ifndef GA_TEST_FIXTURES
#error "GA_TEST_FIXTURES must name the tests/fixtures directory"
#endif
#ifndef GA_TEST_RULES
#error "GA_TEST_RULES must name the shipped rules directory"
#endif

#define RECORDED GA_TEST_FIXTURES "/recorded/"
#define ENGINE_RULES GA_TEST_FIXTURES "/engine-rules"
#define MODEL_RULES GA_TEST_FIXTURES "/model-rules"

/* ------------------------------------------------------------------------ */
/* Helpers                                                                  */

/* The shipped-style rules of dir, with a classifier. */
static void load_classified_rules(ga_ruleset *rs, const char *dir)
{
	load_rules(rs, dir);
	assert_true(rs->has_classifier);
}

static void load_profile(ga_profile *p, const char *path)
{
	ga_error err = {0};

	ga_profile_init(p);
	if (ga_profile_load(p, path, &err) != 0)
		fail_msg("cannot load %s: %s", path, err.msg);
}

static void analyze(const ga_profile *p, const ga_ruleset *rs, int verbose, ga_analysis *a)
{
	ga_error err = {0};
	ga_analyze_opts o = {.verbose = verbose};

	if (ga_analyze(p, rs, &o, a, &err) != 0)
		fail_msg("ga_analyze failed: %s", err.msg);
}

static const ga_group *group_named(const ga_analysis *a, const char *name)
{
	const ga_group *found = NULL;

	for (size_t i = 0; i < a->n_groups; i++)
		if (strcmp(a->groups[i].name, name) == 0) {
			if (found)
				fail_msg("more than one group named %s", name);
			found = &a->groups[i];
		}
	if (!found)
		fail_msg("no group named %s", name);
	return found;
}

/* The finding of rule id for group g, or NULL. */
static const ga_finding *finding_for(const ga_analysis *a, const ga_group *g, const char *id)
{
	for (size_t i = 0; i < g->n_findings; i++) {
		const ga_finding *f = &a->findings[g->findings[i]];
		if (strcmp(f->rule->id, id) == 0)
			return f;
	}
	return NULL;
}

static double evidence_value(const ga_finding *f, const char *name)
{
	for (size_t i = 0; i < f->n_evidence; i++)
		if (strcmp(f->evidence[i].name, name) == 0)
			return f->evidence[i].value;
	fail_msg("finding %s has no evidence %s", f->rule->id, name);
	return NAN;
}

/* Index of the first note containing every one of the (NULL-terminated)
 * strings, or -1. */
static long note_with(const ga_analysis *a, ...)
{
	for (size_t i = 0; i < a->n_notes; i++) {
		va_list ap;
		const char *s;
		int all = 1;

		va_start(ap, a);
		while ((s = va_arg(ap, const char *)) != NULL)
			if (!strstr(a->notes[i], s))
				all = 0;
		va_end(ap);
		if (all)
			return (long)i;
	}
	return -1;
}

static void dump_notes(const ga_analysis *a)
{
	for (size_t i = 0; i < a->n_notes; i++)
		print_message("note: %s\n", a->notes[i]);
}

static void assert_close(double got, double want, double tol)
{
	if (!(fabs(got - want) <= tol * fmax(1.0, fabs(want))))
		fail_msg("got %.17g, want %.17g", got, want);
}

/* ---- synthetic profiles ---- */

/* The metrics every synthetic launch may carry.  A profile only lists the
 * ones passed to new_profile, so a test can leave one out entirely. */
static const char *const SYN_ALL[] = {
	"syn__sm", "syn__mem", "syn__warp_eff", "syn__latency_flag", "syn__lat",
	"syn__num", "syn__den", "syn__est", NULL,
};

/* A SYNTHETIC profile with the given metric names (NULL-terminated). */
static void new_profile(ga_profile *p, const char *const *metrics)
{
	ga_profile_init(p);
	p->device.name = ga_xstrdup("Synthetic GPU");
	p->device.chip = ga_xstrdup("SYN");
	p->device.cc_major = 9;
	p->device.sm_count = 4;
	p->device.max_threads_per_sm = 2048;
	p->device.warp_size = 32;
	for (size_t i = 0; metrics[i]; i++)
		ga_profile_add_metric(p, metrics[i]);
}

/* Append a SYNTHETIC launch: grid (gx,1,1) block (bx,1,1) unless changed
 * afterwards, duration dur_ns (NAN = unknown), and metric values given as
 * name, value pairs ending with NULL.  Returns its index. */
static size_t add_launch(ga_profile *p, int pid, const char *name, unsigned gx, unsigned bx,
                         double dur_ns, ...)
{
	ga_launch *l = ga_profile_add_launch(p);
	va_list ap;
	const char *m;

	l->name = ga_xstrdup(name);
	l->mangled = ga_xasprintf("_Z%zu%s", strlen(name), name);
	l->pid = pid;
	l->index = (long)p->n_launches - 1;
	l->grid[0] = gx;
	l->grid[1] = l->grid[2] = 1;
	l->block[0] = bx;
	l->block[1] = l->block[2] = 1;
	l->registers = 32;
	l->duration_ns = dur_ns;
	l->occ_theoretical_pct = 100;
	va_start(ap, dur_ns);
	while ((m = va_arg(ap, const char *)) != NULL) {
		double v = va_arg(ap, double);
		long idx = ga_profile_metric_index(p, m);
		if (idx < 0)
			fail_msg("synthetic profile has no metric %s", m);
		l->values[idx] = v;
	}
	va_end(ap);
	return p->n_launches - 1;
}

/* A plain compute-bound kernel for the synthetic classifier: sm 90, mem 10,
 * warp efficiency 100 (no rule fires unless the caller adds metrics). */
#define PLAIN "syn__sm", 90.0, "syn__mem", 10.0, "syn__warp_eff", 100.0, \
              "syn__latency_flag", 0.0, "syn__lat", 10.0

/* ------------------------------------------------------------------------ */
/* Recorded profiles with the shipped rules                                 */

static int setup_shipped(void **state)
{
	ga_ruleset *rs = ga_xmalloc(sizeof(*rs));
	load_classified_rules(rs, GA_TEST_RULES);
	*state = rs;
	return 0;
}

static int teardown_rules(void **state)
{
	ga_ruleset *rs = *state;
	ga_ruleset_free(rs);
	free(rs);
	return 0;
}

/* One kernel per file; its class and (optionally) its top finding. */
static void check_single(const ga_ruleset *rs, const char *file, ga_class want,
                         const char *top_rule)
{
	ga_profile p;
	ga_analysis a;

	load_profile(&p, file);
	analyze(&p, rs, 0, &a);
	assert_int_equal(a.n_groups, 1);
	if (a.groups[0].klass != want)
		fail_msg("%s: class %s, want %s (%s)", file, ga_class_name(a.groups[0].klass),
		         ga_class_name(want), a.groups[0].class_note);
	if (top_rule) {
		assert_true(a.n_findings > 0);
		assert_string_equal(a.findings[0].rule->id, top_rule);
		assert_true(a.groups[0].n_findings > 0);
		assert_int_equal(a.groups[0].findings[0], 0);
	}
	ga_analysis_free(&a);
	ga_profile_free(&p);
}

static void test_recorded_matmul_naive(void **state)
{
	check_single(*state, RECORDED "testapp-matmul_naive.json", GA_CLASS_MEMORY, NULL);
}

static void test_recorded_copy_strided(void **state)
{
	check_single(*state, RECORDED "testapp-copy_strided.json", GA_CLASS_MEMORY,
	             "uncoalesced-global-access");
}

static void test_recorded_branch_evenodd(void **state)
{
	check_single(*state, RECORDED "testapp-branch_evenodd.json", GA_CLASS_DIVERGENCE, NULL);
}

static void test_recorded_chain_one_warp(void **state)
{
	check_single(*state, RECORDED "testapp-chain_one_warp.json", GA_CLASS_LATENCY, NULL);
}

static void test_recorded_fma_loop(void **state)
{
	check_single(*state, RECORDED "testapp-fma_loop.json", GA_CLASS_COMPUTE, NULL);
}

/* testapp-all: every kernel of the test program in one run. */
static void test_recorded_all_invariants(void **state)
{
	const ga_ruleset *rs = *state;
	ga_profile p;
	ga_analysis a;
	double share_sum = 0, total = 0;

	load_profile(&p, RECORDED "testapp-all.json");
	analyze(&p, rs, 0, &a);
	assert_true(a.n_groups >= 5);
	assert_true(a.n_findings > 0);

	/* Each launch is in exactly one group, whose key matches it. */
	size_t *seen = ga_xcalloc(p.n_launches, sizeof(size_t));
	for (size_t gi = 0; gi < a.n_groups; gi++) {
		const ga_group *g = &a.groups[gi];
		double sum = 0;
		assert_true(g->n_launches > 0);
		for (size_t k = 0; k < g->n_launches; k++) {
			const ga_launch *l = &p.launches[g->launches[k]];
			assert_true(g->launches[k] < p.n_launches);
			seen[g->launches[k]]++;
			assert_int_equal(l->pid, g->pid);
			assert_string_equal(l->mangled, g->mangled);
			assert_memory_equal(l->grid, g->grid, sizeof(g->grid));
			assert_memory_equal(l->block, g->block, sizeof(g->block));
			sum += l->duration_ns;
		}
		/* Repeats the collector counted but did not profile, from the
		 * profile's own "unprofiled" entries of this kernel, count at
		 * the mean of its profiled launches. */
		long unprofiled = 0;
		for (size_t u = 0; u < p.n_unprofiled; u++) {
			const ga_unprofiled *up = &p.unprofiled[u];
			if (up->pid == g->pid && strcmp(up->mangled, g->mangled) == 0 &&
			    memcmp(up->grid, g->grid, sizeof(g->grid)) == 0 &&
			    memcmp(up->block, g->block, sizeof(g->block)) == 0)
				unprofiled += up->launches;
		}
		assert_int_equal(g->unprofiled, unprofiled);
		sum += sum / (double)g->n_launches * (double)unprofiled;
		assert_close(g->total_ns, sum, 1e-12);
		total += sum;
	}
	for (size_t i = 0; i < p.n_launches; i++)
		assert_int_equal(seen[i], 1);
	free(seen);
	/* ... and no two groups share a key. */
	for (size_t i = 0; i < a.n_groups; i++)
		for (size_t j = i + 1; j < a.n_groups; j++) {
			const ga_group *x = &a.groups[i], *y = &a.groups[j];
			assert_false(x->pid == y->pid && strcmp(x->mangled, y->mangled) == 0 &&
			             memcmp(x->grid, y->grid, sizeof(x->grid)) == 0 &&
			             memcmp(x->block, y->block, sizeof(x->block)) == 0);
		}
	assert_close(a.total_ns, total, 1e-12);

	/* Groups by total time, descending; shares add up to 1. */
	for (size_t gi = 0; gi < a.n_groups; gi++) {
		const ga_group *g = &a.groups[gi];
		if (gi > 0)
			assert_true(a.groups[gi - 1].total_ns >= g->total_ns);
		assert_close(g->share, g->total_ns / total, 1e-12);
		share_sum += g->share;
		/* Exactly one class for every group. */
		assert_true(g->klass >= 0 && g->klass < GA_CLASS__COUNT);
		assert_true(g->runner_up == GA_CLASS_NONE ||
		            (g->runner_up >= 0 && g->runner_up < GA_CLASS__COUNT &&
		             g->runner_up != g->klass));
		assert_non_null(g->class_note);
	}
	assert_close(share_sum, 1.0, 1e-9);

	/* Findings ranked by saving; saving = share x estimate; estimates 0..1. */
	size_t listed = 0;
	for (size_t fi = 0; fi < a.n_findings; fi++) {
		const ga_finding *f = &a.findings[fi];
		assert_true(f->group < a.n_groups);
		assert_true(f->estimate >= 0 && f->estimate <= 1);
		assert_close(f->saving, a.groups[f->group].share * f->estimate, 1e-12);
		if (fi > 0)
			assert_true(a.findings[fi - 1].saving >= f->saving);
	}
	/* Each group lists its own findings, in rank order, each once. */
	for (size_t gi = 0; gi < a.n_groups; gi++) {
		const ga_group *g = &a.groups[gi];
		for (size_t k = 0; k < g->n_findings; k++) {
			assert_true(g->findings[k] < a.n_findings);
			assert_int_equal(a.findings[g->findings[k]].group, gi);
			if (k > 0)
				assert_true(g->findings[k - 1] < g->findings[k]);
		}
		listed += g->n_findings;
	}
	assert_int_equal(listed, a.n_findings);

	/* The same kernels get the same classes as in their one-kernel runs. */
	assert_int_equal(group_named(&a, "matmul_naive(float const*, float const*, float*, int)")
	                 ->klass, GA_CLASS_MEMORY);
	assert_int_equal(group_named(&a, "copy_strided(float const*, float*, unsigned int)")->klass,
	                 GA_CLASS_MEMORY);
	assert_int_equal(group_named(&a, "branch_evenodd(float const*, float*, unsigned int, int)")
	                 ->klass, GA_CLASS_DIVERGENCE);
	assert_int_equal(group_named(&a, "chain_one_warp(double*, double, int)")->klass,
	                 GA_CLASS_LATENCY);
	assert_int_equal(group_named(&a, "fma_loop(float*, float, int)")->klass, GA_CLASS_COMPUTE);
	assert_non_null(finding_for(&a, group_named(&a, "copy_strided(float const*, float*, "
	                                                "unsigned int)"),
	                            "uncoalesced-global-access"));

	ga_analysis_free(&a);
	ga_profile_free(&p);
}

/* ------------------------------------------------------------------------ */
/* Synthetic profiles with tests/fixtures/engine-rules                      */

static int setup_synthetic(void **state)
{
	ga_ruleset *rs = ga_xmalloc(sizeof(*rs));
	load_classified_rules(rs, ENGINE_RULES);
	assert_int_equal(rs->n_rules, 3);
	assert_int_equal((int)rs->classifier.close_margin, 10);
	*state = rs;
	return 0;
}

/* SYNTHETIC: launches differing in one key field each land in their own
 * group; two launches sharing (pid, name, grid, block) are averaged by
 * duration. */
static void test_grouping_and_weighted_means(void **state)
{
	const ga_ruleset *rs = *state;
	ga_profile p;
	ga_analysis a;
	long sm, mem;

	new_profile(&p, SYN_ALL);
	sm = ga_profile_metric_index(&p, "syn__sm");
	mem = ga_profile_metric_index(&p, "syn__mem");
	/* The pair: 100 ns at sm 10 and 300 ns at sm 50 -> weighted mean 40 (the
	 * plain mean would be 30).  syn__mem is missing from the first, so its
	 * mean is the second's value alone. */
	size_t l0 = add_launch(&p, 1, "k_a", 4, 128, 100.0, "syn__sm", 10.0, "syn__warp_eff", 100.0,
	                       "syn__latency_flag", 0.0, "syn__lat", 10.0, NULL);
	add_launch(&p, 2, "k_a", 4, 128, 50.0, PLAIN, NULL);          /* other pid */
	add_launch(&p, 1, "k_a", 8, 128, 40.0, PLAIN, NULL);          /* other grid.x */
	add_launch(&p, 1, "k_a", 4, 64, 30.0, PLAIN, NULL);           /* other block.x */
	add_launch(&p, 1, "k_b", 4, 128, 20.0, PLAIN, NULL);          /* other name */
	size_t lz = add_launch(&p, 1, "k_c", 4, 128, 10.0, PLAIN, NULL);
	size_t l1 = add_launch(&p, 1, "k_a", 4, 128, 300.0, "syn__sm", 50.0, "syn__mem", 80.0,
	                       "syn__warp_eff", 100.0, "syn__latency_flag", 0.0, "syn__lat",
	                       10.0, NULL);
	size_t ly = add_launch(&p, 1, "k_c", 4, 128, 10.0, PLAIN, NULL);
	p.launches[ly].grid[2] = 2;                                    /* other grid.z */
	size_t lb = add_launch(&p, 1, "k_c", 4, 128, 5.0, PLAIN, NULL);
	p.launches[lb].block[1] = 2;                                   /* other block.y */

	analyze(&p, rs, 0, &a);
	assert_int_equal(a.n_groups, 8);
	assert_close(a.total_ns, 565.0, 1e-12);

	/* Ordered by total time: k_a pair (400) first. */
	const ga_group *g = &a.groups[0];
	assert_string_equal(g->name, "k_a");
	assert_int_equal(g->pid, 1);
	assert_int_equal(g->grid[0], 4);
	assert_int_equal(g->block[0], 128);
	assert_int_equal(g->n_launches, 2);
	assert_int_equal(g->launches[0], l0);
	assert_int_equal(g->launches[1], l1);
	assert_close(g->total_ns, 400.0, 1e-12);
	assert_close(g->mean_ns, 200.0, 1e-12);
	assert_close(g->share, 400.0 / 565.0, 1e-12);
	assert_close(g->values[sm], 40.0, 1e-12);
	assert_close(g->values[mem], 80.0, 1e-12);
	/* sm 40, mem 80: memory. */
	assert_int_equal(g->klass, GA_CLASS_MEMORY);

	/* The rest, one launch each, by total time (ties by name). */
	const double want_total[] = {400, 50, 40, 30, 20, 10, 10, 5};
	for (size_t i = 0; i < a.n_groups; i++) {
		assert_close(a.groups[i].total_ns, want_total[i], 1e-12);
		if (i > 0)
			assert_int_equal(a.groups[i].n_launches, 1);
	}
	assert_int_equal(a.groups[1].pid, 2);
	assert_int_equal(a.groups[2].grid[0], 8);
	assert_int_equal(a.groups[3].block[0], 64);
	assert_string_equal(a.groups[4].name, "k_b");
	/* The two k_c groups of 10 ns: grid z 1 and grid z 2, apart. */
	assert_string_equal(a.groups[5].name, "k_c");
	assert_string_equal(a.groups[6].name, "k_c");
	assert_int_equal(a.groups[5].grid[2] + a.groups[6].grid[2], 3);
	assert_true(a.groups[5].launches[0] == lz || a.groups[6].launches[0] == lz);
	assert_int_equal(a.groups[7].block[1], 2);
	assert_int_equal(a.groups[7].launches[0], lb);

	ga_analysis_free(&a);
	ga_profile_free(&p);
}

/* SYNTHETIC: five launches of one kernel form one group with launch__count 5;
 * the rule syn-repeated (launch__count >= 2, estimate 0.25) fires for it and
 * not for the kernel launched once. */
static void test_repeated_launches(void **state)
{
	const ga_ruleset *rs = *state;
	ga_profile p;
	ga_analysis a;

	new_profile(&p, SYN_ALL);
	for (int i = 0; i < 5; i++)
		add_launch(&p, 7, "again", 64, 256, 100.0 + 20.0 * i, PLAIN, NULL);
	add_launch(&p, 7, "once", 64, 256, 1000.0, PLAIN, NULL);

	analyze(&p, rs, 0, &a);
	assert_int_equal(a.n_groups, 2);
	const ga_group *again = group_named(&a, "again");
	const ga_group *once = group_named(&a, "once");
	assert_int_equal(again->n_launches, 5);
	assert_close(again->total_ns, 700.0, 1e-12);    /* 100+120+140+160+180 */
	assert_close(again->mean_ns, 140.0, 1e-12);
	assert_close(again->share, 700.0 / 1700.0, 1e-12);
	/* "once" takes more time, so it comes first. */
	assert_ptr_equal(once, &a.groups[0]);

	const ga_finding *f = finding_for(&a, again, "syn-repeated");
	assert_non_null(f);
	assert_close(evidence_value(f, "launch__count"), 5.0, 0);
	assert_close(evidence_value(f, "launch__duration_ns"), 140.0, 1e-12);
	assert_close(f->estimate, 0.25, 0);
	assert_close(f->saving, 0.25 * 700.0 / 1700.0, 1e-12);
	assert_null(finding_for(&a, once, "syn-repeated"));
	assert_int_equal(once->n_findings, 0);
	assert_int_equal(a.n_findings, 1);

	ga_analysis_free(&a);
	ga_profile_free(&p);
}

/* SYNTHETIC: syn-ratio reads syn__num / syn__den.  Where the profile has no
 * syn__num at all, or has it as NAN for the kernel, the rule does not fire,
 * and with verbose a note names the metric. */
static void test_missing_metric(void **state)
{
	const ga_ruleset *rs = *state;
	static const char *const no_num[] = {
		"syn__sm", "syn__mem", "syn__warp_eff", "syn__latency_flag", "syn__lat",
		"syn__den", "syn__est", NULL,
	};
	ga_profile p;
	ga_analysis a;

	/* Not collected at all. */
	new_profile(&p, no_num);
	add_launch(&p, 1, "k", 1, 32, 100.0, PLAIN, "syn__den", 1.0, "syn__est", 0.5, NULL);
	analyze(&p, rs, 1, &a);
	assert_int_equal(a.n_findings, 0);
	if (note_with(&a, "k: rule syn-ratio", "syn__num", NULL) < 0) {
		dump_notes(&a);
		fail_msg("no note names the missing metric syn__num");
	}
	ga_analysis_free(&a);
	/* Without verbose: the same result, no notes. */
	analyze(&p, rs, 0, &a);
	assert_int_equal(a.n_findings, 0);
	assert_int_equal(a.n_notes, 0);
	ga_analysis_free(&a);
	ga_profile_free(&p);

	/* Collected, but NAN for this kernel; present for another, where it fires
	 * (the control: the same rule does fire when the value is there). */
	new_profile(&p, SYN_ALL);
	add_launch(&p, 1, "nan_num", 1, 32, 100.0, PLAIN, "syn__num", NAN, "syn__den", 1.0,
	           "syn__est", 0.5, NULL);
	add_launch(&p, 1, "has_num", 1, 64, 100.0, PLAIN, "syn__num", 5.0, "syn__den", 1.0,
	           "syn__est", 0.5, NULL);
	analyze(&p, rs, 1, &a);
	assert_null(finding_for(&a, group_named(&a, "nan_num"), "syn-ratio"));
	const ga_finding *f = finding_for(&a, group_named(&a, "has_num"), "syn-ratio");
	assert_non_null(f);
	assert_close(evidence_value(f, "ratio"), 5.0, 0);
	assert_close(evidence_value(f, "syn__num"), 5.0, 0);
	if (note_with(&a, "nan_num: rule syn-ratio", "syn__num", NULL) < 0) {
		dump_notes(&a);
		fail_msg("no note names the NAN metric syn__num");
	}
	assert_int_equal(note_with(&a, "has_num: rule syn-ratio", NULL), -1);
	ga_analysis_free(&a);
	ga_profile_free(&p);
}

/* SYNTHETIC: syn__den = 0 makes the named expression `ratio` a division by
 * zero, so the rule does not fire and the note says so. */
static void test_division_by_zero(void **state)
{
	const ga_ruleset *rs = *state;
	ga_profile p;
	ga_analysis a;

	new_profile(&p, SYN_ALL);
	add_launch(&p, 1, "zero_den", 1, 32, 100.0, PLAIN, "syn__num", 5.0, "syn__den", 0.0,
	           "syn__est", 0.5, NULL);
	analyze(&p, rs, 1, &a);
	assert_int_equal(a.n_groups, 1);
	assert_int_equal(a.n_findings, 0);
	if (note_with(&a, "zero_den: rule syn-ratio", "division by zero", "syn__den", NULL) < 0) {
		dump_notes(&a);
		fail_msg("no note on the division by zero");
	}
	ga_analysis_free(&a);
	ga_profile_free(&p);
}

/* SYNTHETIC: the estimate is clamped to 0..1, an estimate that cannot be
 * evaluated ranks the finding with no saving (and says so), and
 * saving = share x estimate. */
static void test_estimate_clamp_and_saving(void **state)
{
	const ga_ruleset *rs = *state;
	ga_profile p;
	ga_analysis a;

	new_profile(&p, SYN_ALL);
	/* Durations 600 / 300 / 100 of 1000: shares 0.6, 0.3, 0.1. */
	add_launch(&p, 1, "over", 1, 32, 600.0, PLAIN, "syn__num", 3.0, "syn__den", 1.0,
	           "syn__est", 1.7, NULL);
	add_launch(&p, 1, "under", 1, 64, 300.0, PLAIN, "syn__num", 3.0, "syn__den", 1.0,
	           "syn__est", -0.3, NULL);
	add_launch(&p, 1, "noest", 1, 96, 100.0, PLAIN, "syn__num", 3.0, "syn__den", 1.0, NULL);
	analyze(&p, rs, 1, &a);
	assert_int_equal(a.n_findings, 3);

	const ga_finding *over = finding_for(&a, group_named(&a, "over"), "syn-ratio");
	const ga_finding *under = finding_for(&a, group_named(&a, "under"), "syn-ratio");
	const ga_finding *noest = finding_for(&a, group_named(&a, "noest"), "syn-ratio");
	assert_non_null(over);
	assert_non_null(under);
	assert_non_null(noest);
	assert_close(over->estimate, 1.0, 0);
	assert_close(over->saving, 0.6, 1e-12);
	assert_close(under->estimate, 0.0, 0);
	assert_close(under->saving, 0.0, 0);
	/* Its input is missing: it still fires, ranks with no saving and
	 * names the input instead of a number. */
	assert_true(isnan(noest->estimate));
	assert_true(isnan(noest->speedup));
	assert_close(noest->saving, 0.0, 0);
	assert_non_null(noest->estimate_missing);
	assert_string_equal(noest->estimate_missing, "syn__est");
	assert_null(over->estimate_missing);
	assert_ptr_equal(over, &a.findings[0]);
	if (note_with(&a, "noest: rule syn-ratio", "estimate", "syn__est", NULL) < 0) {
		dump_notes(&a);
		fail_msg("no note on the estimate that cannot be evaluated");
	}
	ga_analysis_free(&a);
	ga_profile_free(&p);
}

/* SYNTHETIC: a rule with `low` and `high` prints the model's range,
 * 1/(1-low) .. 1/(1-high), not its stock `speedup`, widened to hold the
 * estimate; a missing input of `high` is reported like one of the
 * estimate's.  The roofline's pseudo metrics: one launch moves 5e5 bytes
 * through DRAM at 1e12 B/s (the device's bandwidth, no peak counters), so
 * its bound is 500 ns of its 1000 and the headroom 0.5; the FP32 peak is
 * the table's 256 FLOP/clock/SM x 4 SMs x 1 GHz. */
static void test_model_range(void **state)
{
	(void)state;
	static const char *const names[] = {
		"syn__sm", "syn__mem", "syn__warp_eff", "syn__latency_flag", "syn__lat",
		"syn__num", "syn__den", "syn__est", "dram__bytes.sum", "gpu__time_duration.sum", NULL,
	};
	ga_ruleset rs;
	ga_diags d = {0};
	ga_profile p;
	ga_analysis a;

	load_classified_rules(&rs, ENGINE_RULES);
	ga_rules_load_dir(&rs, MODEL_RULES, &d);
	ga_ruleset_validate(&rs, &d);
	assert_int_equal(d.n, 0);
	ga_diags_free(&d);
	const ga_rule *r = ga_ruleset_find(&rs, "syn-model");
	assert_non_null(r);
	assert_non_null(r->model);
	new_profile(&p, names);
	p.device.sm_clock_mhz = 1000;
	p.device.mem_bandwidth_gbs = 1000;
	add_launch(&p, 1, "ranged", 3, 40, 1000.0, PLAIN, "syn__num", 200.0, "syn__den", 0.1,
	           "syn__est", 0.5, "dram__bytes.sum", 5e5, "gpu__time_duration.sum", 1000.0,
	           NULL);
	/* low above the estimate (0.9 / 2 < 0.9 < high 1.0, clamped): widened. */
	add_launch(&p, 1, "clamped", 1, 64, 1000.0, PLAIN, "syn__num", 200.0, "syn__den", 0.1,
	           "syn__est", 0.95, NULL);
	analyze(&p, &rs, 1, &a);
	const ga_finding *f = finding_for(&a, group_named(&a, "ranged"), "syn-model");
	assert_non_null(f);
	assert_close(f->estimate, 0.5, 0);
	assert_close(f->low, 0.25, 1e-15);
	assert_close(f->high, 0.6, 1e-15);
	assert_close(f->speedup_min, 1 / 0.75, 1e-12);
	assert_close(f->speedup_max, 1 / 0.4, 1e-12);
	assert_close(evidence_value(f, "launch__warps"), 6, 0);
	assert_close(evidence_value(f, "roofline__bound_ns"), 500, 1e-9);
	assert_close(evidence_value(f, "roofline__headroom_share"), 0.5, 1e-12);
	assert_close(evidence_value(f, "device__peak_fp32_flops"), 256 * 4 * 1e9, 1);
	assert_close(evidence_value(f, "device__peak_fp64_flops"), 128 * 4 * 1e9, 1);
	assert_close(evidence_value(f, "device__peak_tensor_flops"), 4096 * 4 * 1e9, 1);
	f = finding_for(&a, group_named(&a, "clamped"), "syn-model");
	assert_non_null(f);
	assert_close(f->low, 0.475, 1e-12);
	assert_close(f->high, 1.0, 0);
	assert_true(isinf(f->speedup_max));
	/* No DRAM bytes nor FLOP: no bound. */
	assert_true(isnan(evidence_value(f, "roofline__bound_ns")));
	ga_analysis_free(&a);
	ga_profile_free(&p);

	/* `high` reads syn__den, missing here: the input is named. */
	static const char *const no_den[] = {
		"syn__sm", "syn__mem", "syn__warp_eff", "syn__latency_flag", "syn__lat",
		"syn__num", "syn__est", NULL,
	};
	new_profile(&p, no_den);
	add_launch(&p, 1, "noden", 1, 32, 100.0, PLAIN, "syn__num", 200.0, "syn__est", 0.5, NULL);
	analyze(&p, &rs, 0, &a);
	f = finding_for(&a, group_named(&a, "noden"), "syn-model");
	assert_non_null(f);
	assert_non_null(f->estimate_missing);
	assert_string_equal(f->estimate_missing, "syn__den");
	assert_close(f->saving, 0, 0);
	ga_analysis_free(&a);
	ga_profile_free(&p);
	ga_ruleset_free(&rs);
}

/* SYNTHETIC: findings are ranked by saving, then by severity (which comes
 * before the checklist order: syn-repeated is checklist item 1, syn-ratio
 * item 3).  One kernel gets syn-ratio (high, estimate 0.25) and syn-repeated
 * (low, 0.25): equal savings, so the high one comes first; a bigger kernel's
 * syn-ratio with estimate 0.5 outranks both. */
static void test_ranking(void **state)
{
	const ga_ruleset *rs = *state;
	ga_profile p;
	ga_analysis a;

	new_profile(&p, SYN_ALL);
	add_launch(&p, 1, "small", 1, 32, 100.0, PLAIN, "syn__num", 3.0, "syn__den", 1.0,
	           "syn__est", 0.25, NULL);
	add_launch(&p, 1, "small", 1, 32, 100.0, PLAIN, "syn__num", 3.0, "syn__den", 1.0,
	           "syn__est", 0.25, NULL);
	add_launch(&p, 1, "big", 2, 32, 800.0, PLAIN, "syn__num", 9.0, "syn__den", 1.0,
	           "syn__est", 0.5, NULL);
	analyze(&p, rs, 0, &a);
	assert_int_equal(a.n_findings, 3);
	assert_string_equal(a.groups[a.findings[0].group].name, "big");
	assert_string_equal(a.findings[0].rule->id, "syn-ratio");
	assert_close(a.findings[0].saving, 0.8 * 0.5, 1e-12);
	assert_string_equal(a.groups[a.findings[1].group].name, "small");
	assert_string_equal(a.findings[1].rule->id, "syn-ratio");
	assert_string_equal(a.groups[a.findings[2].group].name, "small");
	assert_string_equal(a.findings[2].rule->id, "syn-repeated");
	assert_close(a.findings[1].saving, 0.2 * 0.25, 1e-12);
	assert_close(a.findings[2].saving, 0.2 * 0.25, 1e-12);
	/* The group's own list follows the same order. */
	const ga_group *small = group_named(&a, "small");
	assert_int_equal(small->n_findings, 2);
	assert_int_equal(small->findings[0], 1);
	assert_int_equal(small->findings[1], 2);
	ga_analysis_free(&a);
	ga_profile_free(&p);
}

/* SYNTHETIC: the runner-up class is shown when another class's score is
 * within close_margin (10) of the chosen one, not otherwise.  Scores in the
 * synthetic classifier: compute = sm, memory = mem, divergence = 100 - eff,
 * latency = syn__lat. */
static void test_runner_up(void **state)
{
	const ga_ruleset *rs = *state;
	ga_profile p;
	ga_analysis a;

	new_profile(&p, SYN_ALL);
	/* compute 70 vs memory 65: 5 apart -> runner-up memory. */
	add_launch(&p, 1, "close", 1, 32, 100.0, "syn__sm", 70.0, "syn__mem", 65.0,
	           "syn__warp_eff", 95.0, "syn__latency_flag", 0.0, "syn__lat", 5.0, NULL);
	/* compute 90 vs memory 20, latency 10, divergence 5: clear. */
	add_launch(&p, 1, "clear", 1, 64, 100.0, "syn__sm", 90.0, "syn__mem", 20.0,
	           "syn__warp_eff", 95.0, "syn__latency_flag", 0.0, "syn__lat", 10.0, NULL);
	/* compute 70 vs memory 60: exactly the margin -> still shown. */
	add_launch(&p, 1, "edge", 1, 96, 100.0, "syn__sm", 70.0, "syn__mem", 60.0,
	           "syn__warp_eff", 95.0, "syn__latency_flag", 0.0, "syn__lat", 5.0, NULL);
	/* compute 70.5 vs memory 60: just outside. */
	add_launch(&p, 1, "past_edge", 1, 128, 100.0, "syn__sm", 70.5, "syn__mem", 60.0,
	           "syn__warp_eff", 95.0, "syn__latency_flag", 0.0, "syn__lat", 5.0, NULL);
	/* Divergence chosen by its `when` (eff 40 -> score 60) while compute
	 * scores 65: the runner-up is compute even though it scores higher. */
	add_launch(&p, 1, "div", 1, 160, 100.0, "syn__sm", 65.0, "syn__mem", 10.0,
	           "syn__warp_eff", 40.0, "syn__latency_flag", 0.0, "syn__lat", 5.0, NULL);
	analyze(&p, rs, 0, &a);

	const ga_group *g = group_named(&a, "close");
	assert_int_equal(g->klass, GA_CLASS_COMPUTE);
	assert_int_equal(g->runner_up, GA_CLASS_MEMORY);
	assert_close(g->scores[GA_CLASS_COMPUTE], 70.0, 0);
	assert_close(g->scores[GA_CLASS_MEMORY], 65.0, 0);
	assert_close(g->scores[GA_CLASS_DIVERGENCE], 5.0, 1e-12);
	assert_close(g->scores[GA_CLASS_LATENCY], 5.0, 0);
	assert_non_null(strstr(g->class_note, "because"));

	g = group_named(&a, "clear");
	assert_int_equal(g->klass, GA_CLASS_COMPUTE);
	assert_int_equal(g->runner_up, GA_CLASS_NONE);

	g = group_named(&a, "edge");
	assert_int_equal(g->klass, GA_CLASS_COMPUTE);
	assert_int_equal(g->runner_up, GA_CLASS_MEMORY);

	g = group_named(&a, "past_edge");
	assert_int_equal(g->klass, GA_CLASS_COMPUTE);
	assert_int_equal(g->runner_up, GA_CLASS_NONE);

	g = group_named(&a, "div");
	assert_int_equal(g->klass, GA_CLASS_DIVERGENCE);
	assert_int_equal(g->runner_up, GA_CLASS_COMPUTE);

	/* Class evidence: the classifier's named expressions. */
	g = group_named(&a, "clear");
	assert_int_equal(g->n_class_evidence, 3);
	assert_string_equal(g->class_evidence[0].name, "sm");
	assert_close(g->class_evidence[0].value, 90.0, 0);
	assert_string_equal(g->class_evidence[1].name, "mem");
	assert_close(g->class_evidence[1].value, 20.0, 0);
	ga_analysis_free(&a);
	ga_profile_free(&p);
}

/* SYNTHETIC: when no `when` holds, the class with the highest score wins;
 * when nothing can be evaluated the group has no class. */
static void test_fallback_to_highest_score(void **state)
{
	const ga_ruleset *rs = *state;
	static const char *const nothing[] = {"syn__num", NULL};
	ga_profile p;
	ga_analysis a;

	new_profile(&p, SYN_ALL);
	/* sm 50, mem 55 (both below 60), eff 90, latency flag off, lat 20: no
	 * entry holds.  Scores: memory 55, compute 50, latency 20, divergence 10
	 * -> memory, with compute as runner-up (5 apart). */
	add_launch(&p, 1, "nowhen_mem", 1, 32, 100.0, "syn__sm", 50.0, "syn__mem", 55.0,
	           "syn__warp_eff", 90.0, "syn__latency_flag", 0.0, "syn__lat", 20.0, NULL);
	/* sm 30, mem 20, lat 45: latency by score although its `when` is false;
	 * compute 30 is 15 behind -> no runner-up. */
	add_launch(&p, 1, "nowhen_lat", 1, 64, 100.0, "syn__sm", 30.0, "syn__mem", 20.0,
	           "syn__warp_eff", 90.0, "syn__latency_flag", 0.0, "syn__lat", 45.0, NULL);
	/* The same with the flag on: latency because its `when` holds. */
	add_launch(&p, 1, "when_lat", 1, 96, 100.0, "syn__sm", 30.0, "syn__mem", 20.0,
	           "syn__warp_eff", 90.0, "syn__latency_flag", 1.0, "syn__lat", 45.0, NULL);
	analyze(&p, rs, 0, &a);

	const ga_group *g = group_named(&a, "nowhen_mem");
	assert_int_equal(g->klass, GA_CLASS_MEMORY);
	assert_int_equal(g->runner_up, GA_CLASS_COMPUTE);
	assert_non_null(strstr(g->class_note, "highest score"));

	g = group_named(&a, "nowhen_lat");
	assert_int_equal(g->klass, GA_CLASS_LATENCY);
	assert_int_equal(g->runner_up, GA_CLASS_NONE);
	assert_non_null(strstr(g->class_note, "highest score"));

	g = group_named(&a, "when_lat");
	assert_int_equal(g->klass, GA_CLASS_LATENCY);
	assert_null(strstr(g->class_note, "highest score"));
	assert_non_null(strstr(g->class_note, "syn__latency_flag"));
	ga_analysis_free(&a);
	ga_profile_free(&p);

	/* None of the classifier's metrics: no class, no scores, and a note. */
	new_profile(&p, nothing);
	add_launch(&p, 1, "blind", 1, 32, 100.0, "syn__num", 1.0, NULL);
	analyze(&p, rs, 1, &a);
	assert_int_equal(a.n_groups, 1);
	assert_int_equal(a.groups[0].klass, GA_CLASS_NONE);
	assert_int_equal(a.groups[0].runner_up, GA_CLASS_NONE);
	for (int k = 0; k < GA_CLASS__COUNT; k++)
		assert_true(isnan(a.groups[0].scores[k]));
	assert_non_null(strstr(a.groups[0].class_note, "not classified"));
	assert_true(note_with(&a, "blind: class", "not evaluable", NULL) >= 0);
	ga_analysis_free(&a);
	ga_profile_free(&p);
}

/* SYNTHETIC: durations unknown (NAN).  Values are plain means, each group
 * gets an equal share, launch__duration_ns is not evaluable. */
static void test_nan_durations(void **state)
{
	const ga_ruleset *rs = *state;
	ga_profile p;
	ga_analysis a;
	long sm;

	new_profile(&p, SYN_ALL);
	sm = ga_profile_metric_index(&p, "syn__sm");
	add_launch(&p, 1, "twice", 1, 32, NAN, "syn__sm", 10.0, "syn__mem", 5.0,
	           "syn__warp_eff", 100.0, "syn__latency_flag", 0.0, "syn__lat", 1.0, NULL);
	add_launch(&p, 1, "twice", 1, 32, NAN, "syn__sm", 50.0, "syn__mem", 5.0,
	           "syn__warp_eff", 100.0, "syn__latency_flag", 0.0, "syn__lat", 1.0, NULL);
	add_launch(&p, 1, "third", 1, 64, NAN, PLAIN, NULL);
	add_launch(&p, 1, "fourth", 1, 96, NAN, PLAIN, NULL);
	analyze(&p, rs, 0, &a);
	assert_int_equal(a.n_groups, 3);
	assert_close(a.total_ns, 0.0, 0);
	for (size_t i = 0; i < a.n_groups; i++) {
		assert_close(a.groups[i].share, 1.0 / 3.0, 1e-12);
		assert_close(a.groups[i].total_ns, 0.0, 0);
		assert_true(isnan(a.groups[i].mean_ns));
		assert_int_equal(a.groups[i].klass, GA_CLASS_COMPUTE);
	}
	/* Equal totals: ordered by name. */
	assert_string_equal(a.groups[0].name, "fourth");
	assert_string_equal(a.groups[1].name, "third");
	assert_string_equal(a.groups[2].name, "twice");
	const ga_group *g = &a.groups[2];
	assert_close(g->values[sm], 30.0, 1e-12);
	const ga_finding *f = finding_for(&a, g, "syn-repeated");
	assert_non_null(f);
	assert_close(f->saving, 0.25 / 3.0, 1e-12);
	assert_close(evidence_value(f, "launch__count"), 2.0, 0);
	assert_true(isnan(evidence_value(f, "launch__duration_ns")));
	ga_analysis_free(&a);

	/* One timed group and one untimed: all of the time is the timed one's. */
	p.launches[2].duration_ns = 500.0;
	analyze(&p, rs, 0, &a);
	assert_close(a.total_ns, 500.0, 0);
	assert_string_equal(a.groups[0].name, "third");
	assert_close(a.groups[0].share, 1.0, 0);
	assert_close(a.groups[0].mean_ns, 500.0, 0);
	assert_close(group_named(&a, "twice")->share, 0.0, 0);
	assert_close(group_named(&a, "fourth")->share, 0.0, 0);
	for (size_t i = 0; i < a.n_findings; i++)
		assert_true(isfinite(a.findings[i].saving));
	ga_analysis_free(&a);

	/* Inside one group, unknown durations do not count towards the total
	 * or the mean. */
	p.launches[0].duration_ns = 80.0;
	analyze(&p, rs, 0, &a);
	g = group_named(&a, "twice");
	assert_close(g->total_ns, 80.0, 0);
	assert_close(g->mean_ns, 80.0, 0);
	ga_analysis_free(&a);
	ga_profile_free(&p);
}

/* SYNTHETIC: program__kernels_same_launch counts the distinct kernels of one
 * process launched with the same grid and block, and
 * program__kernels_back_to_back those of them launched right after one
 * another.  Process 1: a, b, c at 10x256 (a launched twice), d at 10x128;
 * process 2: e at 10x256. */
static void test_kernels_same_launch(void **state)
{
	const ga_ruleset *rs = *state;
	ga_profile p;
	ga_analysis a;

	new_profile(&p, SYN_ALL);
	add_launch(&p, 1, "a", 10, 256, 100.0, PLAIN, NULL);
	add_launch(&p, 1, "a", 10, 256, 100.0, PLAIN, NULL);
	add_launch(&p, 1, "b", 10, 256, 100.0, PLAIN, NULL);
	add_launch(&p, 1, "c", 10, 256, 100.0, PLAIN, NULL);
	add_launch(&p, 1, "d", 10, 128, 100.0, PLAIN, NULL);
	size_t e = add_launch(&p, 2, "e", 10, 256, 100.0, PLAIN, NULL);
	size_t f = add_launch(&p, 1, "f", 10, 256, 100.0, PLAIN, NULL);
	p.launches[f].block[2] = 2;   /* 10 x (256,1,2): another shape */
	(void)e;
	analyze(&p, rs, 0, &a);
	assert_int_equal(a.n_groups, 6);

	static const struct { const char *name; int same; int fires; } want[] = {
		{"a", 3, 1}, {"b", 3, 1}, {"c", 3, 1}, {"d", 1, 0}, {"e", 1, 0}, {"f", 1, 0},
	};
	for (size_t i = 0; i < GA_ARRAY_LEN(want); i++) {
		const ga_group *g = group_named(&a, want[i].name);
		const ga_finding *fi = finding_for(&a, g, "syn-same-launch");
		if (g->same_launch != want[i].same)
			fail_msg("%s: same_launch %d, want %d", want[i].name, g->same_launch,
			         want[i].same);
		/* a, a, b, c run back to back: three kernels; the others alone */
		assert_int_equal(g->back_to_back, want[i].same);
		assert_int_equal(fi != NULL, want[i].fires);
		if (fi) {
			assert_close(evidence_value(fi, "program__kernels_same_launch"), 3.0, 0);
			assert_close(evidence_value(fi, "program__kernels_back_to_back"), 3.0, 0);
		}
	}
	ga_analysis_free(&a);
	ga_profile_free(&p);
}

/* SYNTHETIC: launch__loop_share is a kernel's share of the kernel launches
 * in one iteration of its process's loop, from the timeline: t launched
 * twice and u once an iteration (2/3 and 1/3), a copy not counted; v is not
 * in the iteration and process 2 has no timeline (no value). */
static void test_loop_share(void **state)
{
	const ga_ruleset *rs = *state;
	ga_profile p;
	ga_analysis a;

	new_profile(&p, SYN_ALL);
	add_launch(&p, 1, "t", 10, 256, 100.0, PLAIN, NULL);
	add_launch(&p, 1, "u", 10, 256, 100.0, PLAIN, NULL);
	add_launch(&p, 1, "v", 10, 256, 100.0, PLAIN, NULL);
	add_launch(&p, 2, "t", 10, 256, 100.0, PLAIN, NULL);
	ga_timeline t = {0};
	t.pid = 1;
	t.iterations = 10;
	t.period = 3;
	t.window_is_iteration = 1;
	t.n_kernels = 2;
	t.kernels = ga_xcalloc(2, sizeof(*t.kernels));
	const char *names[] = {"_Z1t", "_Z1u"};
	for (size_t i = 0; i < 2; i++) {
		t.kernels[i].mangled = ga_xstrdup(names[i]);
		t.kernels[i].grid[0] = 10;
		t.kernels[i].block[0] = 256;
		t.kernels[i].grid[1] = t.kernels[i].grid[2] = 1;
		t.kernels[i].block[1] = t.kernels[i].block[2] = 1;
		t.kernels[i].launches = 10;
	}
	static const struct { int device, kind; long kernel; } ev[] = {
		{-1, 0, -1}, {0, GA_GPU_KERNEL, 0}, {0, GA_GPU_COPY, -1},
		{0, GA_GPU_KERNEL, 1}, {0, GA_GPU_KERNEL, 0},
	};
	t.n_events = GA_ARRAY_LEN(ev);
	t.events = ga_xcalloc(t.n_events, sizeof(*t.events));
	for (size_t i = 0; i < t.n_events; i++) {
		t.events[i].start = (double)i;
		t.events[i].end = (double)i + 0.5;
		t.events[i].device = ev[i].device;
		t.events[i].kind = ev[i].kind;
		t.events[i].dir = -1;
		t.events[i].kernel = ev[i].kernel;
	}
	ga_profile_set_timeline(&p, &t);
	analyze(&p, rs, 0, &a);

	static const struct { int pid; const char *name; double share; } want[] = {
		{1, "t", 2.0 / 3.0}, {1, "u", 1.0 / 3.0}, {1, "v", NAN}, {2, "t", NAN},
	};
	for (size_t i = 0; i < GA_ARRAY_LEN(want); i++) {
		const ga_group *g = NULL;
		for (size_t k = 0; k < a.n_groups; k++)
			if (a.groups[k].pid == want[i].pid && strcmp(a.groups[k].name, want[i].name) == 0)
				g = &a.groups[k];
		assert_non_null(g);
		if (isnan(want[i].share)) {
			assert_int_equal(g->loop_launches, 0);
			continue;
		}
		assert_true(g->loop_launches > 0);
		assert_close((double)g->loop_launches / (double)g->loop_all_launches, want[i].share,
		             1e-12);
	}
	ga_analysis_free(&a);
	ga_profile_free(&p);
}

/* SYNTHETIC: a run of back-to-back launches ends where a launch is missing
 * from the profile (x, y, then z after an unprofiled launch), on another
 * stream (w) or at another shape; the kernel's longest run counts (v runs
 * alone first, then after x). */
static void test_kernels_back_to_back(void **state)
{
	const ga_ruleset *rs = *state;
	ga_profile p;
	ga_analysis a;

	new_profile(&p, SYN_ALL);
	add_launch(&p, 1, "v", 10, 256, 100.0, PLAIN, NULL);
	add_launch(&p, 1, "d", 10, 128, 100.0, PLAIN, NULL);
	add_launch(&p, 1, "x", 10, 256, 100.0, PLAIN, NULL);
	add_launch(&p, 1, "y", 10, 256, 100.0, PLAIN, NULL);
	size_t gap = add_launch(&p, 1, "z", 10, 256, 100.0, PLAIN, NULL);
	p.launches[gap].index += 1;   /* one launch between y and z was not profiled */
	size_t w = add_launch(&p, 1, "w", 10, 256, 100.0, PLAIN, NULL);
	p.launches[w].index += 1;
	p.launches[w].stream = 7;
	size_t v = add_launch(&p, 1, "v", 10, 256, 100.0, PLAIN, NULL);
	p.launches[v].index = 100;
	size_t x = add_launch(&p, 1, "x", 10, 256, 100.0, PLAIN, NULL);
	p.launches[x].index = 101;
	analyze(&p, rs, 0, &a);

	static const struct { const char *name; int run; } want[] = {
		{"v", 2}, {"d", 1}, {"x", 2}, {"y", 2}, {"z", 1}, {"w", 1},
	};
	for (size_t i = 0; i < GA_ARRAY_LEN(want); i++) {
		const ga_group *g = group_named(&a, want[i].name);
		if (g->back_to_back != want[i].run)
			fail_msg("%s: back_to_back %d, want %d", want[i].name, g->back_to_back,
			         want[i].run);
	}
	assert_int_equal(group_named(&a, "x")->same_launch, 5);
	ga_analysis_free(&a);
	ga_profile_free(&p);
}

/* SYNTHETIC: the highest severity among findings, -1 with none. */
static void test_max_severity(void **state)
{
	const ga_ruleset *rs = *state;
	ga_profile p;
	ga_analysis a;

	/* No findings at all. */
	new_profile(&p, SYN_ALL);
	add_launch(&p, 1, "quiet", 1, 32, 100.0, PLAIN, NULL);
	analyze(&p, rs, 0, &a);
	assert_int_equal(a.n_findings, 0);
	assert_int_equal(ga_analysis_max_severity(&a), -1);
	ga_analysis_free(&a);

	/* syn-repeated only: low. */
	add_launch(&p, 1, "quiet", 1, 32, 100.0, PLAIN, NULL);
	analyze(&p, rs, 0, &a);
	assert_int_equal(a.n_findings, 1);
	assert_int_equal(ga_analysis_max_severity(&a), GA_SEV_LOW);
	ga_analysis_free(&a);

	/* Plus syn-same-launch (medium) for three kernels of one shape. */
	add_launch(&p, 1, "other1", 1, 32, 100.0, PLAIN, NULL);
	add_launch(&p, 1, "other2", 1, 32, 100.0, PLAIN, NULL);
	analyze(&p, rs, 0, &a);
	assert_int_equal(ga_analysis_max_severity(&a), GA_SEV_MEDIUM);
	ga_analysis_free(&a);

	/* Plus syn-ratio (high), on a kernel with a tiny share: severity does
	 * not depend on the saving. */
	add_launch(&p, 1, "ratio", 2, 32, 1.0, PLAIN, "syn__num", 3.0, "syn__den", 1.0,
	           "syn__est", 0.0, NULL);
	analyze(&p, rs, 0, &a);
	assert_int_equal(ga_analysis_max_severity(&a), GA_SEV_HIGH);
	assert_string_equal(a.findings[a.n_findings - 1].rule->id, "syn-ratio");
	ga_analysis_free(&a);
	ga_profile_free(&p);

	/* An empty profile: no groups, no findings. */
	new_profile(&p, SYN_ALL);
	analyze(&p, rs, 1, &a);
	assert_int_equal(a.n_groups, 0);
	assert_int_equal(a.n_findings, 0);
	assert_int_equal(ga_analysis_max_severity(&a), -1);
	ga_analysis_free(&a);
	ga_profile_free(&p);
}

/* A rule set without a classifier is refused. */
static void test_no_classifier(void **state)
{
	ga_ruleset rs;
	ga_profile p;
	ga_analysis a;
	ga_error err = {0};
	ga_diags d = {0};

	(void)state;
	ga_ruleset_init(&rs);
	ga_rules_load_file(&rs, ENGINE_RULES "/repeated.yaml", &d);
	assert_int_equal(d.n, 0);
	new_profile(&p, SYN_ALL);
	add_launch(&p, 1, "k", 1, 32, 100.0, PLAIN, NULL);
	assert_int_equal(ga_analyze(&p, &rs, NULL, &a, &err), -1);
	assert_int_equal(err.code, GA_ERR_RULES);
	assert_non_null(strstr(err.msg, "classifier"));
	ga_analysis_free(&a);
	ga_profile_free(&p);
	ga_ruleset_free(&rs);
	ga_diags_free(&d);
}

/* ------------------------------------------------------------------------ */
/* The rest of the analysis value                                           */

/* The recorded divergence demo with source lines: the analysis ranks them
 * with the shipped classifier's cut-offs, places the kernels on the roofline
 * and sums up the process. */
static void test_recorded_value(void **state)
{
	const ga_ruleset *rs = *state;
	ga_profile p;
	ga_analysis a;
	size_t launches = 0, with_source = 0;

	load_profile(&p, RECORDED "demo-divergence-source.json");
	analyze(&p, rs, 0, &a);
	for (size_t i = 0; i < a.n_groups; i++) {
		const ga_group *g = &a.groups[i];
		launches += g->n_launches;
		if (!g->source)
			continue;
		with_source++;
		assert_string_equal(g->source->mangled, g->mangled);
		assert_true(g->source_sass);
		assert_false(g->source_sampled);
	}
	assert_int_equal(with_source, 2);
	/* As the recording's report shows them: the branch first, all of it,
	 * then the lines running 16 of 32 lanes, 36 % first. */
	const ga_group *g = group_named(&a, "divergence_evenodd(float const*, float*, "
	                                    "unsigned int, int)");
	assert_int_equal(g->n_lines, GA_SOURCE_TOP_LINES);
	assert_int_equal(g->lines[0].line, 41);
	assert_true(g->lines[0].issues & GA_SRC_BRANCH);
	assert_close(g->lines[0].score, 1, 1e-12);
	assert_close(g->lines[0].branch_after, 16, 1e-9);
	assert_int_equal(g->lines[1].line, 31);
	assert_true(g->lines[1].issues & GA_SRC_INACTIVE);
	assert_close(g->lines[1].active_threads, 16, 1e-9);
	assert_close(g->lines[1].score, 0.357, 1e-3);

	assert_int_equal(a.n_launches, launches);
	assert_int_equal(a.n_launches, p.n_launches);
	assert_int_equal(a.n_processes, 1);
	assert_int_equal(a.processes[0].pid, p.launches[0].pid);
	assert_int_equal(a.processes[0].n_kernels, a.n_groups);
	assert_close(a.processes[0].share, 1, 1e-12);
	size_t classed = 0;
	for (int c = 0; c < GA_CLASS__COUNT; c++)
		classed += a.n_class[c];
	assert_int_equal(classed, a.n_groups);
	assert_int_equal(a.roofline.n, a.n_groups);
	for (size_t i = 0; i < a.n_findings; i++) {
		const ga_finding *f = &a.findings[i];
		assert_close(f->speedup, 1 / (1 - f->estimate), 1e-12);
		if (!f->rule->low) {
			assert_true(f->speedup_min == f->rule->speedup_min);
			assert_true(f->speedup_max == f->rule->speedup_max);
			continue;
		}
		/* A rule with a model range prints 1/(1-low) .. 1/(1-high). */
		assert_true(f->low <= f->estimate && f->estimate <= f->high);
		assert_close(f->speedup_min, 1 / (1 - f->low), 1e-12);
		assert_close(f->speedup_max, 1 / (1 - f->high), 1e-12);
	}
	ga_analysis_free(&a);
	ga_profile_free(&p);
}

/* The classifier's named expression name, or fail. */
static ga_named_expr *classifier_const(ga_ruleset *rs, const char *name)
{
	for (size_t i = 0; i < rs->classifier.n_metrics; i++)
		if (strcmp(rs->classifier.metrics[i].name, name) == 0)
			return &rs->classifier.metrics[i];
	fail_msg("the classifier has no %s", name);
	return NULL;
}

/* The source ranking takes its cut-offs from the classifier: with the
 * least share of a waste at 40 % (an expression put in place of
 * source_min_waste_pct's) one kernel keeps only its branch (100 %), the
 * other its two uncoalesced lines (50 % each): 3 lines of 7. */
static void test_cuts_from_classifier(void **state)
{
	ga_ruleset rs;
	ga_profile p;
	ga_analysis a;
	char msg[128];
	size_t off = 0;
	(void)state;

	load_classified_rules(&rs, GA_TEST_RULES);
	ga_named_expr *waste = classifier_const(&rs, "source_min_waste_pct");
	ga_expr *kept = waste->expr, *forty = ga_expr_parse("40", &off, msg, sizeof(msg));
	assert_non_null(forty);
	waste->expr = forty;
	load_profile(&p, RECORDED "demo-divergence-source.json");
	analyze(&p, &rs, 0, &a);
	size_t lines = 0;
	for (size_t i = 0; i < a.n_groups; i++)
		lines += a.groups[i].n_lines;
	assert_int_equal(lines, 3);
	const ga_group *g = group_named(&a, "divergence_evenodd(float const*, float*, "
	                                    "unsigned int, int)");
	assert_int_equal(g->n_lines, 1);
	assert_int_equal(g->lines[0].line, 41);
	waste->expr = kept;
	ga_expr_free(forty);
	ga_analysis_free(&a);
	ga_profile_free(&p);
	ga_ruleset_free(&rs);
}

/* A classifier (a user's rules folder can replace it) without one of the
 * cut-offs is an error of the rule set, naming the file and the constant. */
static void test_missing_cut(void **state)
{
	ga_ruleset *rs = *state;
	ga_profile p;
	ga_analysis a;
	ga_error err = {0};
	size_t n = rs->classifier.n_metrics;
	(void)state;

	assert_string_equal(rs->classifier.metrics[n - 1].name, "source_branch_drop_lanes");
	rs->classifier.n_metrics = n - 1;      /* hide the last one */
	new_profile(&p, SYN_ALL);
	add_launch(&p, 1, "k", 1, 32, 100.0, PLAIN, NULL);
	assert_int_equal(ga_analyze(&p, rs, NULL, &a, &err), -1);
	assert_int_equal(err.code, GA_ERR_RULES);
	assert_non_null(strstr(err.msg, "engine-rules/classify.yaml"));
	assert_non_null(strstr(err.msg, "source_branch_drop_lanes"));
	ga_error err2 = {0};
	assert_int_equal(ga_analyze_check_rules(rs, &err2), -1);
	assert_string_equal(err2.msg, err.msg);
	rs->classifier.n_metrics = n;
	assert_int_equal(ga_analyze_check_rules(rs, &err2), 0);
	ga_analysis_free(&a);
	ga_profile_free(&p);
}

/* Warps are counted in the device's warp size; without one (a profile that
 * records none) the names that need it are not available. */
static void warps_for(int warp_size, double *warps, double *waves, int *unchecked)
{
	static const char rule[] =
		"id: warps\ntitle: Warps\nclass: latency\nchecklist: 1\nseverity: low\n"
		"speedup: [1, 2]\nmetrics:\n  w: device__max_warps_per_sm\n"
		"  waves: launch__waves_per_sm\nwhen: w > 0\nestimate: \"0.5\"\n"
		"evidence: [w, waves]\nfix: f\nexample: e\nexplain: x\n";
	char path[] = "/tmp/ga-test-engine-XXXXXX";
	int fd = mkstemp(path);
	ga_ruleset rs;
	ga_diags d = {0};
	ga_profile p;
	ga_analysis a;

	assert_true(fd >= 0);
	assert_int_equal(write(fd, rule, sizeof(rule) - 1), (ssize_t)(sizeof(rule) - 1));
	close(fd);
	load_classified_rules(&rs, ENGINE_RULES);
	assert_int_equal(ga_rules_load_file(&rs, path, &d), 0);
	unlink(path);
	new_profile(&p, SYN_ALL);
	p.device.warp_size = warp_size;
	add_launch(&p, 1, "k", 1, 32, 100.0, PLAIN, NULL);
	analyze(&p, &rs, 0, &a);
	const ga_finding *f = finding_for(&a, &a.groups[0], "warps");
	*warps = f ? evidence_value(f, "w") : NAN;
	*waves = f ? evidence_value(f, "waves") : NAN;
	*unchecked = 0;
	for (size_t i = 0; i < a.groups[0].n_unchecked; i++)
		*unchecked |= strcmp(a.groups[0].unchecked[i]->id, "warps") == 0;
	ga_analysis_free(&a);
	ga_profile_free(&p);
	ga_ruleset_free(&rs);
	ga_diags_free(&d);
}

static void test_warp_size(void **state)
{
	double warps, waves;
	int unchecked;
	(void)state;

	/* 2048 threads per SM; one 32-thread block on 4 SMs, 100 % occupancy. */
	warps_for(32, &warps, &waves, &unchecked);
	assert_close(warps, 64, 0);
	assert_close(waves, 1.0 / (64 * 4), 1e-12);
	assert_false(unchecked);
	warps_for(64, &warps, &waves, &unchecked);
	assert_close(warps, 32, 0);
	assert_close(waves, 1.0 / (32 * 4), 1e-12);
	warps_for(0, &warps, &waves, &unchecked);
	assert_true(isnan(warps));
	assert_true(unchecked);
}

/* ------------------------------------------------------------------------ */
/* Leaks                                                                    */

static void full_cycle(const char *rules_dir, const char *profile)
{
	ga_ruleset rs;
	ga_profile p;
	ga_analysis a;

	load_classified_rules(&rs, rules_dir);
	load_profile(&p, profile);
	analyze(&p, &rs, 1, &a);
	ga_analysis_free(&a);
	ga_profile_free(&p);
	ga_ruleset_free(&rs);
}

static void synthetic_cycle(const ga_ruleset *rs)
{
	ga_profile p;
	ga_analysis a;

	new_profile(&p, SYN_ALL);
	add_launch(&p, 1, "x", 1, 32, 100.0, PLAIN, "syn__num", 3.0, "syn__den", 0.0, NULL);
	add_launch(&p, 1, "x", 1, 32, NAN, PLAIN, "syn__num", 3.0, "syn__den", 1.0, NULL);
	add_launch(&p, 1, "y", 1, 32, NAN, "syn__sm", 1.0, NULL);
	analyze(&p, rs, 1, &a);
	assert_true(a.n_notes > 0);
	ga_analysis_free(&a);
	ga_profile_free(&p);
}

/* Live heap bytes as glibc counts them.  Exact only when freed chunks go
 * straight back to the bins (no tcache, no fastbins), which the probe below
 * arranges with GLIBC_TUNABLES. */
static long long heap_in_use(void)
{
	struct mallinfo2 m = mallinfo2();
	return (long long)(m.uordblks + m.hblkhd);
}

/* Child side of test_no_leaks: warm up, then print the heap growth of each
 * of several load-analyse-free cycles, one per line.  "leaky" also keeps 64
 * more bytes per cycle, to show that the measurement sees a leak. */
static int leak_probe(const char *mode)
{
	void *volatile held[4] = {0};   /* volatile: the stores must happen */
	ga_ruleset rs;
	int leaky = strcmp(mode, "leaky") == 0;

	load_classified_rules(&rs, ENGINE_RULES);
	for (int i = 0; i < 2; i++) {
		full_cycle(GA_TEST_RULES, RECORDED "testapp-all.json");
		full_cycle(GA_TEST_RULES, RECORDED "pytorch.json");
		synthetic_cycle(&rs);
	}
	for (int i = 0; i < 4; i++) {
		long long before = heap_in_use();
		full_cycle(GA_TEST_RULES, RECORDED "testapp-all.json");
		full_cycle(GA_TEST_RULES, RECORDED "pytorch.json");
		synthetic_cycle(&rs);
		if (leaky)
			held[i] = malloc(64);
		printf("%lld\n", heap_in_use() - before);
	}
	for (int i = 0; i < 4; i++)
		free(held[i]);
	ga_ruleset_free(&rs);
	return fflush(stdout) == 0 ? 0 : 1;
}

/* This program's path, for running the probe (not "/proc/self/exe" itself:
 * under valgrind that names valgrind's tool, while readlink of it gives the
 * client, as it should). */
static char self_path[4096];

/* Run the probe in a child (fresh heap, tcache and fastbins off) and collect
 * its numbers. */
static size_t run_probe(const char *mode, long long *delta, size_t max)
{
	int fd[2];
	size_t n = 0;
	int status;

	assert_int_equal(pipe(fd), 0);
	pid_t pid = fork();
	assert_true(pid >= 0);
	if (pid == 0) {
		dup2(fd[1], 1);
		close(fd[0]);
		close(fd[1]);
		setenv("GLIBC_TUNABLES", "glibc.malloc.tcache_count=0:glibc.malloc.mxfast=0", 1);
		execl(self_path, "test_engine", "--leak-probe", mode, (char *)NULL);
		_exit(127);
	}
	close(fd[1]);
	FILE *f = fdopen(fd[0], "r");
	assert_non_null(f);
	while (n < max && fscanf(f, "%lld", &delta[n]) == 1)
		n++;
	fclose(f);
	assert_int_equal(waitpid(pid, &status, 0), pid);
	if (!WIFEXITED(status) || WEXITSTATUS(status) != 0)
		fail_msg("leak probe (%s) failed, status %d", mode, status);
	return n;
}

/* Load, analyse verbosely and free, many times: after a warm-up the heap in
 * use must come back to exactly where each cycle started.  (The sanitized
 * CI build checks the same with valgrind and ASan; this catches a leak in a
 * plain build.)  A control run that leaks on purpose must be caught. */
static void test_no_leaks(void **state)
{
	long long d[8];
	size_t n;

	(void)state;
	n = run_probe("leaky", d, GA_ARRAY_LEN(d));
	assert_int_equal(n, 4);
	for (size_t i = 0; i < n; i++)
		if (d[i] <= 0) {
			/* mallinfo2 does not see the heap (a sanitizer replaced
			 * malloc): the sanitizer's own leak check covers this. */
			skip();
		}
	n = run_probe("clean", d, GA_ARRAY_LEN(d));
	assert_int_equal(n, 4);
	for (size_t i = 0; i < n; i++)
		if (d[i] != 0)
			fail_msg("cycle %zu: %lld bytes still in use after freeing everything", i,
			         d[i]);
}

int main(int argc, char **argv)
{
	if (argc == 3 && strcmp(argv[1], "--leak-probe") == 0)
		return leak_probe(argv[2]);
	ssize_t len = readlink("/proc/self/exe", self_path, sizeof(self_path) - 1);
	if (len > 0)
		self_path[len] = '\0';
	else
		snprintf(self_path, sizeof(self_path), "%s", argv[0]);

	const struct CMUnitTest recorded[] = {
		cmocka_unit_test(test_recorded_matmul_naive),
		cmocka_unit_test(test_recorded_copy_strided),
		cmocka_unit_test(test_recorded_branch_evenodd),
		cmocka_unit_test(test_recorded_chain_one_warp),
		cmocka_unit_test(test_recorded_fma_loop),
		cmocka_unit_test(test_recorded_all_invariants),
		cmocka_unit_test(test_recorded_value),
	};
	const struct CMUnitTest synthetic[] = {
		cmocka_unit_test(test_grouping_and_weighted_means),
		cmocka_unit_test(test_repeated_launches),
		cmocka_unit_test(test_missing_metric),
		cmocka_unit_test(test_division_by_zero),
		cmocka_unit_test(test_estimate_clamp_and_saving),
		cmocka_unit_test(test_model_range),
		cmocka_unit_test(test_ranking),
		cmocka_unit_test(test_runner_up),
		cmocka_unit_test(test_fallback_to_highest_score),
		cmocka_unit_test(test_nan_durations),
		cmocka_unit_test(test_kernels_same_launch),
		cmocka_unit_test(test_kernels_back_to_back),
		cmocka_unit_test(test_loop_share),
		cmocka_unit_test(test_max_severity),
		cmocka_unit_test(test_no_classifier),
		cmocka_unit_test(test_cuts_from_classifier),
		cmocka_unit_test(test_missing_cut),
		cmocka_unit_test(test_warp_size),
		cmocka_unit_test(test_no_leaks),
	};
	int failed = 0;

	failed += cmocka_run_group_tests_name("engine-recorded", recorded, setup_shipped,
	                                      teardown_rules);
	failed += cmocka_run_group_tests_name("engine-synthetic", synthetic, setup_synthetic,
	                                      teardown_rules);
	return failed;
}
