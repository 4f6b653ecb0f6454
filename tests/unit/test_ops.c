/* test_ops.c: operations from NVTX ranges (src/analyze/ops.c): time per
 * operation with unprofiled launches at their kernel's mean, a kernel
 * split between operations, the main path, the top finding, --nvtx. */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "profile/profile.h"
#include "analyze/analyze.h"
#include "rules/rules.h"
#include "util/util.h"

#include "helpers.h"

#define DERIVED GA_TEST_FIXTURES "/cli/pytorch-nvtx.json"

static ga_ruleset rules;

static int setup(void **state)
{
	(void)state;
	load_rules(&rules, GA_TEST_RULES);
	return 0;
}

static int teardown(void **state)
{
	(void)state;
	ga_ruleset_free(&rules);
	return 0;
}

static void analyze(const ga_profile *p, int nvtx, ga_analysis *a)
{
	ga_error err = {0};
	ga_analyze_opts o = {.nvtx = nvtx};

	if (ga_analyze(p, &rules, &o, a, &err) != 0)
		fail_msg("ga_analyze failed: %s", err.msg);
}

static const ga_op *op_named(const ga_analysis *a, const char *name)
{
	for (size_t i = 0; i < a->n_ops; i++)
		if (strcmp(a->ops[i].name, name) == 0)
			return &a->ops[i];
	fail_msg("no operation %s", name);
	return NULL;
}

static const ga_op_kernel *kernel_in(const ga_analysis *a, const ga_op *op, const char *name)
{
	for (size_t k = 0; k < op->n_kernels; k++)
		if (strcmp(a->groups[op->kernels[k].group].name, name) == 0)
			return &op->kernels[k];
	fail_msg("no kernel %s in %s", name, op->name);
	return NULL;
}

/* The op's top finding is the largest saving among its kernels' findings,
 * each scaled by the kernel's fraction in the op. */
static void check_top(const ga_analysis *a, const ga_op *op)
{
	double best = -1;
	long which = -1;

	for (size_t k = 0; k < op->n_kernels; k++) {
		const ga_group *g = &a->groups[op->kernels[k].group];
		for (size_t f = 0; f < g->n_findings; f++) {
			double s = a->findings[g->findings[f]].saving * op->kernels[k].fraction;
			if (s > best) {
				best = s;
				which = (long)g->findings[f];
			}
		}
	}
	assert_int_equal(op->top_finding, which);
	if (which >= 0)
		assert_true(fabs(op->top_saving - best) < 1e-12);
}

#define LAUNCH(name, dur, path) \
	"{\"name\": \"" name "\", \"grid\": [1, 1, 1], \"block\": [32, 1, 1], \"duration_ns\": " \
	#dur ", \"values\": {}" path "}"

/* Kernel k: 100 and 100 ns in step/opA, 200 ns and 2 unprofiled launches
 * in step/opB; kernel m: 300 ns in opA, 50 ns outside any range. */
static const char *const SPLIT =
	"{\"format\": \"gpuadvise-profile\", \"schema\": 1, \"device\": {\"name\": \"S\","
	" \"sm_count\": 2}, \"metrics\": [], \"launches\": ["
	LAUNCH("k", 100, ", \"nvtx\": \"step/opA\"") ","
	LAUNCH("k", 200, ", \"nvtx\": \"step/opB\"") ","
	LAUNCH("k", 100, ", \"nvtx\": \"step/opA\"") ","
	LAUNCH("m", 300, ", \"nvtx\": \"opA\"") ","
	LAUNCH("m", 50, "") "],"
	"\"unprofiled\": [{\"mangled\": \"k\", \"grid\": [1, 1, 1], \"block\": [32, 1, 1],"
	" \"launches\": 2, \"nvtx\": \"step/opB\"}]}";

static void test_split(void **state)
{
	ga_profile p;
	ga_analysis a;
	ga_error err = {0};
	const ga_op *op_a, *op_b;
	double k_mean = (100.0 + 200.0 + 100.0) / 3, k_total = 400 + 2 * k_mean;
	double total = k_total + 300 + 50;

	(void)state;
	assert_int_equal(ga_profile_load_string(&p, SPLIT, "split.json", &err), 0);
	analyze(&p, 0, &a);
	assert_true(a.ops_shown);
	assert_int_equal(a.n_ops, 2);
	op_a = op_named(&a, "opA");
	op_b = op_named(&a, "opB");
	/* By time: opA's 500 ns before opB's 200 + 2 x k's mean. */
	assert_ptr_equal(op_a, &a.ops[0]);
	assert_true(fabs(op_a->time_ns - 500) < 1e-9);
	assert_true(fabs(op_b->time_ns - (200 + 2 * k_mean)) < 1e-9);
	assert_true(fabs(op_a->share - 500 / total) < 1e-12);
	assert_true(fabs(op_b->share - (200 + 2 * k_mean) / total) < 1e-12);
	assert_int_equal(op_a->launches, 3);
	assert_int_equal(op_b->launches, 3);
	/* k's time split between the two: 200 of its total here, the rest there. */
	assert_true(fabs(kernel_in(&a, op_a, "k")->fraction - 200 / k_total) < 1e-12);
	assert_true(fabs(kernel_in(&a, op_b, "k")->fraction - (200 + 2 * k_mean) / k_total) < 1e-12);
	assert_true(fabs(kernel_in(&a, op_a, "m")->fraction - 300.0 / 350) < 1e-12);
	/* Kernels by their time in the operation: m (300) before k (200). */
	assert_string_equal(a.groups[op_a->kernels[0].group].name, "m");
	/* The path with most of opA's time is m's "opA", not k's "step/opA". */
	assert_string_equal(op_a->path, "opA");
	assert_string_equal(op_b->path, "step/opB");
	check_top(&a, op_a);
	check_top(&a, op_b);
	ga_analysis_free(&a);

	analyze(&p, -1, &a);
	assert_false(a.ops_shown);
	assert_int_equal(a.n_ops, 0);
	ga_analysis_free(&a);
	ga_profile_free(&p);
}

/* --nvtx=auto shows nothing for a profile without ranges; on shows an
 * empty list. */
static void test_modes(void **state)
{
	ga_profile p;
	ga_analysis a;
	ga_error err = {0};

	(void)state;
	assert_int_equal(ga_profile_load_string(&p,
		"{\"format\": \"gpuadvise-profile\", \"schema\": 1, \"device\": {\"name\": \"S\","
		" \"sm_count\": 2}, \"metrics\": [], \"launches\": [" LAUNCH("k", 10, "") "]}",
		"plain.json", &err), 0);
	analyze(&p, 0, &a);
	assert_false(a.ops_shown);
	ga_analysis_free(&a);
	analyze(&p, 1, &a);
	assert_true(a.ops_shown);
	assert_int_equal(a.n_ops, 0);
	ga_analysis_free(&a);
	ga_profile_free(&p);
}

/* The recorded PyTorch workload with paths: every kernel's time is shared
 * out whole, the operations' times add up to the GPU time, and each top
 * finding is the largest saving of its kernels scaled by their part. */
static void test_pytorch(void **state)
{
	ga_profile p;
	ga_analysis a;
	ga_error err = {0};
	double sum = 0, *parts;

	(void)state;
	ga_profile_init(&p);
	if (ga_profile_load(&p, DERIVED, &err) != 0)
		fail_msg("%s", err.msg);
	analyze(&p, 0, &a);
	parts = ga_xcalloc(a.n_groups, sizeof(*parts));
	for (size_t i = 0; i < a.n_ops; i++) {
		const ga_op *op = &a.ops[i];
		sum += op->time_ns;
		for (size_t k = 0; k < op->n_kernels; k++)
			parts[op->kernels[k].group] += op->kernels[k].fraction;
		check_top(&a, op);
		if (i)
			assert_true(op->time_ns <= a.ops[i - 1].time_ns);
	}
	for (size_t g = 0; g < a.n_groups; g++)
		assert_true(fabs(parts[g] - 1) < 1e-9);
	assert_true(fabs(sum - a.total_ns) < 1e-6 * a.total_ns);
	/* Both GEMMs (FP32 and FP64) in aten::mm, under aten::matmul. */
	assert_int_equal(op_named(&a, "aten::mm")->n_kernels, 2);
	assert_string_equal(op_named(&a, "aten::mm")->path, "aten::matmul/aten::mm");
	assert_int_equal(op_named(&a, "aten::native_layer_norm")->n_kernels, 1);
	free(parts);
	ga_analysis_free(&a);
	ga_profile_free(&p);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_split),
		cmocka_unit_test(test_modes),
		cmocka_unit_test(test_pytorch),
	};
	return cmocka_run_group_tests(tests, setup, teardown);
}
