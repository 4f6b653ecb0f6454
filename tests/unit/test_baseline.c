/* test_baseline.c: the comparison with a baseline (src/analyze/baseline.c).
 *
 * The comparisons start from the RECORDED profile
 * GA_TEST_FIXTURES/recorded/testapp-all.json (nine kernels, one process,
 * measured on an H200) analysed with the shipped rules (GA_TEST_RULES).  The
 * baselines are that same recording changed in code, so every change below
 * is SYNTHETIC: durations scaled, metric values copied from another kernel,
 * a kernel renamed or dropped, the device renamed.  The launch-order test
 * builds a small SYNTHETIC profile from scratch. */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "analyze/baseline.h"
#include "profile/profile.h"
#include "analyze/analyze.h"
#include "rules/rules.h"
#include "util/util.h"

#ifndef GA_TEST_FIXTURES
#error "GA_TEST_FIXTURES must name the tests/fixtures directory"
#endif
#ifndef GA_TEST_RULES
#error "GA_TEST_RULES must name the shipped rules directory"
#endif

#define ALL GA_TEST_FIXTURES "/recorded/testapp-all.json"

static ga_ruleset rules;

static int load_rules(void **state)
{
	ga_diags d = { 0 };
	(void)state;
	ga_ruleset_init(&rules);
	ga_rules_load_dir(&rules, GA_TEST_RULES, &d);
	if (d.n)
		ga_diags_print(&d, stderr);
	assert_int_equal(d.n, 0);
	ga_diags_free(&d);
	return 0;
}

static int free_rules(void **state)
{
	(void)state;
	ga_ruleset_free(&rules);
	return 0;
}

/* ---- helpers ------------------------------------------------------------ */

static void load(ga_profile *p, const char *path)
{
	ga_error err = { 0 };
	ga_profile_init(p);
	if (ga_profile_load(p, path, &err) != 0)
		fprintf(stderr, "%s\n", err.msg);
	assert_int_equal(err.code, GA_OK);
}

static void analyze(const ga_profile *p, ga_analysis *a)
{
	ga_error err = { 0 };
	assert_int_equal(ga_analyze(p, &rules, NULL, a, &err), 0);
}

/* Is l a launch of the kernel named prefix(...)? */
static int named(const ga_launch *l, const char *prefix)
{
	size_t n = strlen(prefix);
	return strncmp(l->name, prefix, n) == 0 && l->name[n] == '(';
}

/* The launch of prefix(...) that measured metric set `set` (the recording
 * has one launch of each kernel per set). */
static ga_launch *launch_named(ga_profile *p, const char *prefix, int set)
{
	ga_launch *found = NULL;
	for (size_t i = 0; i < p->n_launches; i++) {
		if (named(&p->launches[i], prefix) && p->launches[i].metric_set == set) {
			assert_null(found);
			found = &p->launches[i];
		}
	}
	assert_non_null(found);
	return found;
}

/* How many metric sets the recording has: one launch of each kernel per
 * set (a recording with complete diagnosis by kernel replay measures every
 * metric in one launch, set 0; one collected over passes of the
 * application has a set per pass). */
static int n_sets(const ga_profile *p)
{
	int n = 0;
	for (size_t i = 0; i < p->n_launches; i++)
		if (p->launches[i].metric_set + 1 > n)
			n = p->launches[i].metric_set + 1;
	assert_true(n > 0);
	return n;
}

static long metric(const ga_profile *p, const char *name)
{
	long m = ga_profile_metric_index(p, name);
	assert_true(m >= 0);
	return m;
}

/* The change of the kernel named prefix(...) in the new analysis (or, with
 * cur_side 0, in the baseline). */
static const ga_kernel_change *change_of(const ga_comparison *c, const char *prefix, int cur_side)
{
	size_t n = strlen(prefix);
	for (size_t i = 0; i < c->n_kernels; i++) {
		const ga_kernel_change *k = &c->kernels[i];
		size_t gi = cur_side ? k->cur : k->base;
		if (gi == GA_NO_GROUP)
			continue;
		const ga_group *g = cur_side ? &c->cur->groups[gi] : &c->base->groups[gi];
		if (strncmp(g->name, prefix, n) == 0 && g->name[n] == '(')
			return k;
	}
	return NULL;
}

static int has_rule(const ga_finding_change *v, size_t n, const char *id, int *regression)
{
	for (size_t i = 0; i < n; i++)
		if (v[i].rule && strcmp(v[i].rule->id, id) == 0) {
			if (regression)
				*regression = v[i].regression;
			return 1;
		}
	return 0;
}

/* The recording (cur) against a baseline changed by edit (base). */
typedef struct {
	ga_profile cur_p, base_p;
	ga_analysis cur, base;
	ga_comparison c;
} fixture;

static void compare(fixture *f, void (*edit)(ga_profile *), double threshold, int severity)
{
	load(&f->cur_p, ALL);
	load(&f->base_p, ALL);
	if (edit)
		edit(&f->base_p);
	analyze(&f->cur_p, &f->cur);
	analyze(&f->base_p, &f->base);
	ga_compare_opts o = { .threshold = threshold, .severity = severity };
	ga_compare(&f->cur, &f->base, "baseline.json", &o, &f->c);
}

static void release(fixture *f)
{
	ga_comparison_free(&f->c);
	ga_analysis_free(&f->cur);
	ga_analysis_free(&f->base);
	ga_profile_free(&f->cur_p);
	ga_profile_free(&f->base_p);
}

/* ---- edits of the baseline ---------------------------------------------- */

static void matmul_faster(ga_profile *p)
{
	for (int s = 0; s < n_sets(p); s++)
		launch_named(p, "matmul_naive", s)->duration_ns *= 0.8;
}

static void all_slower(ga_profile *p)
{
	for (size_t i = 0; i < p->n_launches; i++)
		p->launches[i].duration_ns *= 1.25;
}

static void strided_was_coalesced(ga_profile *p)
{
	for (int k = 0; k < n_sets(p); k++) {
		ga_launch *s = launch_named(p, "copy_strided", k);
		ga_launch *c = launch_named(p, "copy_coalesced", k);
		memcpy(s->values, c->values, p->n_metrics * sizeof(double));
	}
}

static void divergence_was_uniform(ga_profile *p)
{
	/* The thread counts may come from another set's launch than the
	 * instruction count: set every measured one. */
	double full = 32 * launch_named(p, "branch_evenodd", 0)->values[metric(p,
	                                                      "smsp__inst_executed.sum")];
	assert_true(isfinite(full));
	for (int s = 0; s < n_sets(p); s++) {
		ga_launch *l = launch_named(p, "branch_evenodd", s);
		double *t = &l->values[metric(p, "smsp__thread_inst_executed.sum")];
		double *t_on = &l->values[metric(p, "smsp__thread_inst_executed_pred_on.sum")];
		if (isfinite(*t))
			*t = full;
		if (isfinite(*t_on))
			*t_on = full;
	}
}

static void renamed(ga_profile *p)
{
	for (int s = 0; s < n_sets(p); s++) {
		ga_launch *t = launch_named(p, "tiny_add", s);
		free(t->name);
		t->name = ga_xstrdup("tiny_add_v0(float const*, float const*, float*, int)");
		free(t->mangled);
		t->mangled = ga_xstrdup("_Z11tiny_add_v0PKfS0_Pfi");
		launch_named(p, "transpose_naive", s)->grid[0] = 64;
	}
	/* drop fma_loop */
	for (size_t i = p->n_launches; i-- > 0;) {
		ga_launch *f = &p->launches[i];
		if (!named(f, "fma_loop"))
			continue;
		free(f->name);
		free(f->mangled);
		free(f->occ_limiter);
		free(f->values);
		memmove(f, f + 1, (p->n_launches - i - 1) * sizeof(*f));
		p->n_launches--;
	}
}

static void other_gpu(ga_profile *p)
{
	free(p->device.name);
	p->device.name = ga_xstrdup("NVIDIA H100 80GB HBM3");
	for (size_t i = 0; i < p->n_launches; i++)
		p->launches[i].duration_ns *= 0.5;
}

/* The fix applied: copy_strided measured like copy_coalesced, durations
 * included (the testapp's two copies move the same bytes). */
static void strided_fixed(ga_profile *p)
{
	for (int k = 0; k < n_sets(p); k++) {
		ga_launch *s = launch_named(p, "copy_strided", k);
		ga_launch *c = launch_named(p, "copy_coalesced", k);
		memcpy(s->values, c->values, p->n_metrics * sizeof(double));
		s->duration_ns = c->duration_ns;
	}
}

/* The mean duration of prefix(...)'s launches, from the profile itself. */
static double mean_duration(const ga_profile *p, const char *prefix)
{
	double sum = 0;
	int n = 0;
	for (size_t i = 0; i < p->n_launches; i++)
		if (named(&p->launches[i], prefix) && isfinite(p->launches[i].duration_ns)) {
			sum += p->launches[i].duration_ns;
			n++;
		}
	assert_true(n > 0);
	return sum / n;
}

/* The recording as the baseline and, as the new run, the recording changed
 * by edit (the reverse of compare()). */
static void compare_fixed(fixture *f, void (*edit)(ga_profile *))
{
	load(&f->cur_p, ALL);
	load(&f->base_p, ALL);
	edit(&f->cur_p);
	analyze(&f->cur_p, &f->cur);
	analyze(&f->base_p, &f->base);
	ga_compare_opts o = { .threshold = 0.10, .severity = GA_SEV_HIGH };
	ga_compare(&f->cur, &f->base, "baseline.json", &o, &f->c);
}

static const ga_finding_change *gone_rule(const ga_kernel_change *k, const char *id)
{
	for (size_t i = 0; i < k->n_removed; i++)
		if (k->removed[i].rule && strcmp(k->removed[i].rule->id, id) == 0)
			return &k->removed[i];
	return NULL;
}

/* Predicted against measured: the baseline's uncoalesced-access finding is
 * gone from the fixed copy, which got faster; the prediction is that
 * finding's estimate and range, the measurement the ratio of the mean
 * durations read from the two profiles. */
static void test_prediction_checked(void **state)
{
	fixture f;
	(void)state;
	compare_fixed(&f, strided_fixed);
	const ga_kernel_change *k = change_of(&f.c, "copy_strided", 1);
	assert_non_null(k);
	const ga_finding_change *g = gone_rule(k, "uncoalesced-global-access");
	assert_non_null(g);
	assert_int_equal(g->check.checked, 1);
	double want = mean_duration(&f.base_p, "copy_strided") / mean_duration(&f.cur_p, "copy_strided");
	assert_true(want > 1.0);
	assert_true(fabs(g->check.measured - want) < 1e-9 * want);
	const ga_finding *bf = &f.base.findings[g->finding];
	assert_string_equal(bf->rule->id, "uncoalesced-global-access");
	assert_true(fabs(g->check.predicted - 1 / (1 - bf->estimate)) < 1e-9);
	assert_true(g->check.low == bf->speedup_min && g->check.high == bf->speedup_max);
	assert_int_equal(g->check.inside, want >= bf->speedup_min && want <= bf->speedup_max);
	assert_ptr_equal(ga_comparison_gone(&f.c, g->finding), g);
	release(&f);
}

/* No check when the kernel did not get faster, or on another GPU. */
static void strided_fixed_slower(ga_profile *p)
{
	strided_fixed(p);
	for (int k = 0; k < n_sets(p); k++)
		launch_named(p, "copy_strided", k)->duration_ns = 1e9;
}

static void strided_fixed_other_gpu(ga_profile *p)
{
	strided_fixed(p);
	free(p->device.name);
	p->device.name = ga_xstrdup("NVIDIA H100 80GB HBM3");
}

static void test_prediction_unchecked(void **state)
{
	void (*edits[])(ga_profile *) = { strided_fixed_slower, strided_fixed_other_gpu };
	(void)state;
	for (size_t e = 0; e < 2; e++) {
		fixture f;
		compare_fixed(&f, edits[e]);
		const ga_kernel_change *k = change_of(&f.c, "copy_strided", 1);
		assert_non_null(k);
		const ga_finding_change *g = gone_rule(k, "uncoalesced-global-access");
		assert_non_null(g);
		assert_int_equal(g->check.checked, 0);
		release(&f);
	}
	/* and the finding itself predicted nothing: "no estimate" */
	ga_finding nf = { .speedup = NAN, .speedup_min = 1.1, .speedup_max = 2 };
	ga_prediction p = ga_predict_check(&nf, 300, 100);
	assert_int_equal(p.checked, 1);
	assert_true(isnan(p.predicted));
	assert_true(fabs(p.measured - 3) < 1e-12);
	assert_int_equal(p.inside, 0);
}

/* ---- tests -------------------------------------------------------------- */

static void test_identical(void **state)
{
	fixture f;
	(void)state;
	compare(&f, NULL, 0.10, GA_SEV_HIGH);
	assert_true(f.c.same_device);
	assert_string_equal(f.c.label, "baseline.json");
	assert_int_equal(f.c.n_matched, 9);
	assert_int_equal(f.c.n_only_cur, 0);
	assert_int_equal(f.c.n_only_base, 0);
	assert_int_equal(f.c.n_kernels, 9);
	assert_int_equal(f.c.n_regressions, 0);
	assert_int_equal(f.c.n_slower, 0);
	assert_true(f.c.total_change == 0);
	for (size_t i = 0; i < f.c.n_kernels; i++) {
		const ga_kernel_change *k = &f.c.kernels[i];
		assert_int_equal(k->match, GA_MATCH_SHAPE);
		/* paired kernels come in the new analysis's order */
		assert_int_equal(k->cur, i);
		assert_string_equal(f.cur.groups[k->cur].name, f.base.groups[k->base].name);
		assert_true(k->change == 0);
		assert_false(k->class_changed);
		assert_int_equal(k->n_added, 0);
		assert_int_equal(k->n_removed, 0);
		assert_int_equal(k->n_metrics, f.cur.groups[k->cur].n_class_evidence);
		assert_false(ga_kernel_change_notable(&f.c, k));
		assert_ptr_equal(ga_comparison_for_group(&f.c, i), k);
	}
	release(&f);
}

static void test_slower_is_regression(void **state)
{
	fixture f;
	(void)state;
	compare(&f, matmul_faster, 0.10, GA_SEV_HIGH);
	assert_int_equal(f.c.n_regressions, 1);
	assert_int_equal(f.c.n_slower, 1);
	const ga_kernel_change *k = change_of(&f.c, "matmul_naive", 1);
	assert_non_null(k);
	assert_true(fabs(k->change - 0.25) < 1e-9);   /* 1 / 0.8 - 1 */
	assert_true(k->slower);
	assert_true(k->regression);
	assert_true(ga_kernel_change_notable(&f.c, k));
	assert_true(k->cur_ns > k->base_ns);
	for (size_t i = 0; i < f.c.n_kernels; i++)
		if (&f.c.kernels[i] != k)
			assert_false(f.c.kernels[i].regression);
	release(&f);

	/* The same 25% under a 30% threshold is no regression; exactly at the
	 * threshold is not either (more than the threshold regresses). */
	compare(&f, matmul_faster, 0.30, GA_SEV_HIGH);
	assert_int_equal(f.c.n_regressions, 0);
	release(&f);
	compare(&f, matmul_faster, 0.25 - 1e-12, GA_SEV_HIGH);
	assert_int_equal(f.c.n_regressions, 1);
	release(&f);
}

static void test_faster_is_no_regression(void **state)
{
	fixture f;
	(void)state;
	compare(&f, all_slower, 0.10, GA_SEV_HIGH);
	assert_int_equal(f.c.n_regressions, 0);
	assert_true(fabs(f.c.total_change + 0.2) < 1e-9);
	for (size_t i = 0; i < f.c.n_kernels; i++) {
		const ga_kernel_change *k = &f.c.kernels[i];
		assert_true(fabs(k->change + 0.2) < 1e-9);
		assert_false(k->slower);
		/* an improvement past the threshold is still worth showing */
		assert_true(ga_kernel_change_notable(&f.c, k));
	}
	release(&f);
}

static void test_new_finding(void **state)
{
	fixture f;
	int reg = -1;
	(void)state;
	compare(&f, strided_was_coalesced, 0.10, GA_SEV_HIGH);
	const ga_kernel_change *k = change_of(&f.c, "copy_strided", 1);
	assert_non_null(k);
	assert_true(has_rule(k->added, k->n_added, "uncoalesced-global-access", &reg));
	assert_int_equal(reg, 1);
	assert_false(k->slower);
	assert_true(k->regression);
	/* the coalesced copy's own finding is gone from the strided kernel */
	assert_true(has_rule(k->removed, k->n_removed, "kernel-fusion", NULL));
	assert_int_equal(f.c.n_regressions, 1);
	assert_int_equal(f.c.n_slower, 0);
	/* the finding index points at that finding of the new analysis */
	for (size_t i = 0; i < k->n_added; i++)
		assert_ptr_equal(f.cur.findings[k->added[i].finding].rule, k->added[i].rule);
	release(&f);
}

/* By fingerprint (SARIF's baselineState): the strided copy's new finding
 * is the one new finding, its vanished kernel-fusion finding the one absent,
 * every other finding unchanged; an analysis compared with itself has every
 * finding unchanged and none absent. */
static void test_fingerprints(void **state)
{
	fixture f;
	size_t n_new = 0;
	(void)state;
	compare(&f, strided_was_coalesced, 0.10, GA_SEV_HIGH);
	assert_non_null(f.c.unchanged);
	for (size_t i = 0; i < f.cur.n_findings; i++) {
		const ga_finding *fi = &f.cur.findings[i];
		assert_int_equal(strlen(fi->fingerprint), 16);
		if (!f.c.unchanged[i]) {
			n_new++;
			assert_string_equal(fi->rule->id, "uncoalesced-global-access");
			assert_true(named(&f.cur.profile->launches[f.cur.groups[fi->group].launches[0]],
			                  "copy_strided"));
		}
	}
	assert_int_equal(n_new, 1);
	/* 13: low-occupancy no longer fires on the one-warp chain, whose grid
	 * cannot use the warps the fix would add; uncoalesced-global-access
	 * fires on matmul_naive too since the recording measures every metric
	 * in one launch (its loads take 2 sectors a request where 1.12 would
	 * do, 44% of the sectors wasted). */
	assert_int_equal(f.cur.n_findings, 13);
	assert_int_equal(f.c.n_absent, 1);
	assert_string_equal(f.base.findings[f.c.absent[0]].rule->id, "kernel-fusion");
	release(&f);

	compare(&f, NULL, 0.10, GA_SEV_HIGH);
	for (size_t i = 0; i < f.cur.n_findings; i++)
		assert_int_equal(f.c.unchanged[i], 1);
	assert_int_equal(f.c.n_absent, 0);
	release(&f);
}

static void test_class_change_and_severity(void **state)
{
	fixture f;
	int reg = -1;
	(void)state;
	compare(&f, divergence_was_uniform, 0.10, GA_SEV_HIGH);
	const ga_kernel_change *k = change_of(&f.c, "branch_evenodd", 1);
	assert_non_null(k);
	assert_true(k->class_changed);
	assert_int_equal(f.cur.groups[k->cur].klass, GA_CLASS_DIVERGENCE);
	assert_int_not_equal(f.base.groups[k->base].klass, GA_CLASS_DIVERGENCE);
	assert_true(has_rule(k->added, k->n_added, "thread-divergence", &reg));
	/* a medium finding is no regression at severity high ... */
	assert_int_equal(reg, 0);
	assert_false(k->regression);
	assert_int_equal(f.c.n_regressions, 0);
	assert_true(ga_kernel_change_notable(&f.c, k));
	/* the class evidence shows why: warp efficiency fell from 100 to ~50 */
	int seen = 0;
	for (size_t i = 0; i < k->n_metrics; i++)
		if (strcmp(k->metrics[i].name, "warp_eff") == 0) {
			seen = 1;
			assert_true(k->metrics[i].base > 99.9);
			assert_true(k->metrics[i].cur < 60);
		}
	assert_true(seen);
	release(&f);

	/* ... and is one at severity medium. */
	compare(&f, divergence_was_uniform, 0.10, GA_SEV_MEDIUM);
	k = change_of(&f.c, "branch_evenodd", 1);
	assert_true(k->regression);
	assert_int_equal(f.c.n_regressions, 1);
	release(&f);
}

static void test_unmatched(void **state)
{
	fixture f;
	(void)state;
	compare(&f, renamed, 0.10, GA_SEV_HIGH);
	assert_int_equal(f.c.n_matched, 7);
	assert_int_equal(f.c.n_only_cur, 2);
	assert_int_equal(f.c.n_only_base, 1);
	assert_int_equal(f.c.n_kernels, 10);

	const ga_kernel_change *k = change_of(&f.c, "fma_loop", 1);
	assert_non_null(k);
	assert_int_equal(k->base, GA_NO_GROUP);
	assert_int_equal(k->match, GA_MATCH_NONE);
	assert_true(isnan(k->change));
	/* every finding of a kernel new in this run is new */
	assert_int_equal(k->n_added, f.cur.groups[k->cur].n_findings);
	k = change_of(&f.c, "tiny_add", 1);
	assert_non_null(k);
	assert_int_equal(k->base, GA_NO_GROUP);
	k = change_of(&f.c, "tiny_add_v0", 0);
	assert_non_null(k);
	assert_int_equal(k->cur, GA_NO_GROUP);
	assert_int_equal(k->n_removed, f.base.groups[k->base].n_findings);
	assert_false(k->regression);

	/* transpose_naive ran with another grid: paired by name alone */
	k = change_of(&f.c, "transpose_naive", 1);
	assert_non_null(k);
	assert_int_equal(k->match, GA_MATCH_NAME);
	assert_true(ga_kernel_change_notable(&f.c, k));
	assert_int_equal(f.base.groups[k->base].grid[0], 64);

	/* order: paired, then only new, then only in the baseline */
	for (size_t i = 0; i < f.c.n_kernels; i++) {
		ga_match want = i < 7 ? f.c.kernels[i].match : GA_MATCH_NONE;
		assert_int_equal(f.c.kernels[i].match, want);
		if (i >= 7 && i < 9)
			assert_int_not_equal(f.c.kernels[i].cur, GA_NO_GROUP);
		if (i == 9)
			assert_int_equal(f.c.kernels[i].cur, GA_NO_GROUP);
	}
	release(&f);
}

static void test_other_gpu(void **state)
{
	fixture f;
	(void)state;
	compare(&f, other_gpu, 0.10, GA_SEV_HIGH);
	assert_false(f.c.same_device);
	assert_true(isnan(f.c.total_change));
	assert_int_equal(f.c.n_matched, 9);
	assert_int_equal(f.c.n_slower, 0);
	assert_int_equal(f.c.n_regressions, 0);
	for (size_t i = 0; i < f.c.n_kernels; i++) {
		assert_true(isnan(f.c.kernels[i].change));
		assert_false(f.c.kernels[i].slower);
		/* the durations are still there, just not compared */
		assert_true(f.c.kernels[i].base_ns > 0);
	}
	release(&f);

	/* New findings still count on another GPU. */
	load(&f.cur_p, ALL);
	load(&f.base_p, ALL);
	other_gpu(&f.base_p);
	strided_was_coalesced(&f.base_p);
	analyze(&f.cur_p, &f.cur);
	analyze(&f.base_p, &f.base);
	ga_compare_opts o = { .threshold = 0.10, .severity = GA_SEV_HIGH };
	ga_compare(&f.cur, &f.base, NULL, &o, &f.c);
	assert_null(f.c.label);
	assert_int_equal(f.c.n_regressions, 1);
	assert_true(change_of(&f.c, "copy_strided", 1)->regression);
	release(&f);
}

static void test_same_device(void **state)
{
	(void)state;
	ga_device a = { .name = "NVIDIA H200", .chip = "GH100" };
	ga_device b = a;
	assert_true(ga_same_device(&a, &b));
	b.chip = "GB100";
	assert_false(ga_same_device(&a, &b));
	b.chip = NULL;            /* an older profile without the chip */
	assert_true(ga_same_device(&a, &b));
	b.chip = "";
	assert_true(ga_same_device(&a, &b));
	b.name = "NVIDIA H100 80GB HBM3";
	b.chip = "GH100";
	assert_false(ga_same_device(&a, &b));
	b.name = NULL;
	assert_false(ga_same_device(&a, &b));
}

/* SYNTHETIC: one kernel launched by two processes in each profile; the first
 * launched in one is paired with the first launched in the other, whatever
 * the pids and whatever order the analysis sorts its kernels in. */
static void add(ga_profile *p, int pid, long index, double ns)
{
	ga_launch *l = ga_profile_add_launch(p);
	l->name = ga_xstrdup("k(int)");
	l->mangled = ga_xstrdup("_Z1ki");
	l->pid = pid;
	l->index = index;
	l->grid[0] = l->grid[1] = l->grid[2] = 1;
	l->block[0] = 32;
	l->block[1] = l->block[2] = 1;
	l->duration_ns = ns;
}

static void test_launch_order(void **state)
{
	ga_profile cur, base;
	ga_analysis ca, ba;
	ga_comparison c;
	(void)state;

	ga_profile_init(&cur);
	ga_profile_init(&base);
	cur.device.name = ga_xstrdup("Synthetic GPU");
	base.device.name = ga_xstrdup("Synthetic GPU");
	ga_profile_add_metric(&cur, "gpu__time_duration.sum");
	ga_profile_add_metric(&base, "gpu__time_duration.sum");
	add(&base, 10, 0, 100);    /* first launched in the baseline */
	add(&base, 11, 0, 200);
	add(&cur, 21, 0, 100);     /* first launched now: pairs with pid 10 */
	add(&cur, 22, 0, 300);     /* the longer one, sorted first by the engine */
	analyze(&cur, &ca);
	analyze(&base, &ba);
	assert_int_equal(ca.groups[0].pid, 22);
	ga_compare_opts o = { .threshold = 0.10, .severity = GA_SEV_HIGH };
	ga_compare(&ca, &ba, "synthetic", &o, &c);
	assert_int_equal(c.n_matched, 2);
	for (size_t i = 0; i < c.n_kernels; i++) {
		const ga_kernel_change *k = &c.kernels[i];
		int cp = ca.groups[k->cur].pid, bp = ba.groups[k->base].pid;
		if (cp == 21) {
			assert_int_equal(bp, 10);
			assert_true(k->change == 0);
		} else {
			assert_int_equal(cp, 22);
			assert_int_equal(bp, 11);
			assert_true(fabs(k->change - 0.5) < 1e-12);
			assert_true(k->regression);
		}
	}
	assert_int_equal(c.n_regressions, 1);
	ga_comparison_free(&c);
	ga_analysis_free(&ca);
	ga_analysis_free(&ba);
	ga_profile_free(&cur);
	ga_profile_free(&base);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_identical),
		cmocka_unit_test(test_slower_is_regression),
		cmocka_unit_test(test_faster_is_no_regression),
		cmocka_unit_test(test_new_finding),
		cmocka_unit_test(test_fingerprints),
		cmocka_unit_test(test_class_change_and_severity),
		cmocka_unit_test(test_unmatched),
		cmocka_unit_test(test_other_gpu),
		cmocka_unit_test(test_same_device),
		cmocka_unit_test(test_launch_order),
		cmocka_unit_test(test_prediction_checked),
		cmocka_unit_test(test_prediction_unchecked),
	};
	return cmocka_run_group_tests(tests, load_rules, free_rules);
}
