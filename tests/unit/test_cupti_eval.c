/* test_cupti_eval.c: offline evaluation of a RECORDED raw counter-data image
 * with the CUPTI profiler host API (src/collect/cupti_host.c).  No GPU is
 * needed: the host API evaluates metrics for a chip by name.
 *
 * Fixtures (GA_TEST_FIXTURES/recorded), both written by gpuadvise's own
 * collector on an H200 in one run (`--save-counter-data`):
 *   counter-image.bin.xz        the first raw counter-data image, xz-compressed
 *   counter-image-profile.json  the profile of that run: its single launch's
 *                               "values" are what the collector evaluated
 *                               from that image on the GPU machine.
 * Evaluating the image here must give the same values (relative tolerance
 * 1e-9; null in the profile means NAN). */
#include <errno.h>
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>

#include <cmocka.h>
#include <jansson.h>

#include "collect/collect.h"
#include "util/util.h"

#ifndef GA_TEST_FIXTURES
#error "GA_TEST_FIXTURES must name the tests/fixtures directory"
#endif

#define IMAGE_XZ GA_TEST_FIXTURES "/recorded/counter-image.bin.xz"
#define IMAGE_PROFILE GA_TEST_FIXTURES "/recorded/counter-image-profile.json"
#define REL_TOL 1e-9

typedef struct {
	uint8_t *image;
	size_t size;
	char *chip;
	char **names;         /* the profile's "metrics" */
	double *want;         /* the launch's recorded "values", NAN for null */
	size_t n;
	ga_host *host;
} fixture;

/* `xz -dc FILE` into a malloc'd buffer. */
static uint8_t *xz_decompress(const char *path, size_t *size)
{
	char *cmd = ga_xasprintf("xz -dc '%s'", path);
	FILE *f = popen(cmd, "r");
	uint8_t *buf = NULL;
	size_t len = 0, cap = 0, got;
	int status;

	free(cmd);
	if (!f)
		return NULL;
	do {
		if (len == cap) {
			cap = cap ? cap * 2 : 1 << 20;
			buf = ga_xrealloc(buf, cap);
		}
		got = fread(buf + len, 1, cap - len, f);
		len += got;
	} while (got > 0);
	status = pclose(f);
	if (status == -1 || !WIFEXITED(status) || WEXITSTATUS(status) != 0 || len == 0) {
		fprintf(stderr, "xz -dc %s failed (status %d, %zu bytes)\n", path, status, len);
		free(buf);
		return NULL;
	}
	*size = len;
	return buf;
}

static int setup(void **state)
{
	fixture *fx = ga_xcalloc(1, sizeof(*fx));
	json_error_t jerr;
	json_t *root, *metrics, *launches, *values;
	ga_error err = {0};

	*state = fx;
	fx->image = xz_decompress(IMAGE_XZ, &fx->size);
	if (!fx->image)
		return -1;

	root = json_load_file(IMAGE_PROFILE, 0, &jerr);
	if (!root) {
		fprintf(stderr, "%s:%d:%d: %s\n", IMAGE_PROFILE, jerr.line, jerr.column, jerr.text);
		return -1;
	}
	fx->chip = ga_xstrdup(json_string_value(json_object_get(json_object_get(root, "device"),
	                                                        "chip")));
	metrics = json_object_get(root, "metrics");
	launches = json_object_get(root, "launches");
	if (!fx->chip || !json_is_array(metrics) || json_array_size(launches) != 1) {
		fprintf(stderr, "%s: expected device.chip, metrics and exactly one launch\n",
		        IMAGE_PROFILE);
		json_decref(root);
		return -1;
	}
	values = json_object_get(json_array_get(launches, 0), "values");
	fx->n = json_array_size(metrics);
	fx->names = ga_xcalloc(fx->n, sizeof(char *));
	fx->want = ga_xcalloc(fx->n, sizeof(double));
	for (size_t i = 0; i < fx->n; i++) {
		const char *name = json_string_value(json_array_get(metrics, i));
		json_t *v = json_object_get(values, name ? name : "");
		if (!name || !v || !(json_is_number(v) || json_is_null(v))) {
			fprintf(stderr, "%s: metric %zu (%s) has no recorded value\n", IMAGE_PROFILE,
			        i, name ? name : "?");
			json_decref(root);
			return -1;
		}
		fx->names[i] = ga_xstrdup(name);
		fx->want[i] = json_is_null(v) ? NAN : json_number_value(v);
	}
	json_decref(root);

	fx->host = ga_host_new(fx->chip, NULL, &err);
	if (!fx->host) {
		fprintf(stderr, "ga_host_new(%s): %s\n", fx->chip, err.msg);
		return -1;
	}
	return 0;
}

static int teardown(void **state)
{
	fixture *fx = *state;

	if (!fx)
		return 0;
	ga_host_free(fx->host);
	for (size_t i = 0; i < fx->n; i++)
		free(fx->names[i]);
	free(fx->names);
	free(fx->want);
	free(fx->chip);
	free(fx->image);
	free(fx);
	return 0;
}

static int same_value(double got, double want)
{
	if (isnan(want))
		return isnan(got);
	if (!isfinite(got))
		return 0;
	if (got == want)
		return 1;
	return fabs(got - want) <= REL_TOL * fmax(fabs(got), fabs(want));
}

/* Compare every metric; report all mismatches, then fail. */
static void expect_recorded(const fixture *fx, const double *got, const char *how)
{
	size_t bad = 0;

	for (size_t i = 0; i < fx->n; i++)
		if (!same_value(got[i], fx->want[i])) {
			print_error("%s: %s = %.17g, recorded %.17g\n", how, fx->names[i], got[i],
			            fx->want[i]);
			bad++;
		}
	if (bad)
		fail_msg("%zu of %zu metrics differ from the recorded profile", bad, fx->n);
}

static void test_fixture_shape(void **state)
{
	const fixture *fx = *state;

	assert_string_equal(fx->chip, "GH100");
	assert_true(fx->n > 10);
	/* The comparison below must have real numbers to compare: most recorded
	 * values are finite and some are non-zero. */
	size_t finite = 0, nonzero = 0;
	for (size_t i = 0; i < fx->n; i++) {
		finite += isfinite(fx->want[i]);
		nonzero += isfinite(fx->want[i]) && fx->want[i] != 0;
	}
	assert_true(finite * 2 > fx->n);
	assert_true(nonzero > 5);
}

static void test_num_ranges(void **state)
{
	const fixture *fx = *state;
	ga_error err = {0};
	size_t n = 99;

	if (ga_host_num_ranges(fx->image, fx->size, &n, &err) != 0)
		fail_msg("ga_host_num_ranges: %s", err.msg);
	assert_int_equal(n, 1);
}

static void test_metrics_valid(void **state)
{
	const fixture *fx = *state;

	for (size_t i = 0; i < fx->n; i++)
		if (!ga_host_metric_valid(fx->host, fx->names[i]))
			fail_msg("%s: not a metric of %s", fx->names[i], fx->chip);
	assert_false(ga_host_metric_valid(fx->host, "gpuadvise__no_such_metric.sum"));
}

/* All metrics in one call, as the collector does. */
static void test_evaluate_all(void **state)
{
	const fixture *fx = *state;
	ga_error err = {0};
	double *got = ga_xcalloc(fx->n, sizeof(double));

	for (size_t i = 0; i < fx->n; i++)
		got[i] = -12345.0;
	if (ga_host_evaluate(fx->host, fx->image, fx->size, 0, (const char *const *)fx->names,
	                     fx->n, got, &err) != 0)
		fail_msg("ga_host_evaluate: %s", err.msg);
	expect_recorded(fx, got, "all at once");
	free(got);
}

/* One metric per call: the same numbers. */
static void test_evaluate_one_by_one(void **state)
{
	const fixture *fx = *state;
	ga_error err = {0};
	double *got = ga_xcalloc(fx->n, sizeof(double));

	for (size_t i = 0; i < fx->n; i++) {
		got[i] = -12345.0;
		if (ga_host_evaluate(fx->host, fx->image, fx->size, 0,
		                     (const char *const *)&fx->names[i], 1, &got[i], &err) != 0)
			fail_msg("ga_host_evaluate(%s): %s", fx->names[i], err.msg);
	}
	expect_recorded(fx, got, "one by one");
	free(got);
}

/* The comparison can fail: a value that is off by more than the tolerance
 * is caught (guards against a comparison that accepts anything). */
static void test_comparison_detects_difference(void **state)
{
	(void)state;
	assert_true(same_value(1.0, 1.0));
	assert_true(same_value(1.0 + 1e-12, 1.0));
	assert_false(same_value(1.0 + 1e-6, 1.0));
	assert_false(same_value(0.0, 1e-3));
	assert_false(same_value(NAN, 1.0));
	assert_false(same_value(1.0, NAN));
	assert_true(same_value(NAN, NAN));
}

/* A chip the host API does not know is an error naming it. */
static void test_unknown_chip(void **state)
{
	ga_error err = {0};

	(void)state;
	ga_host *h = ga_host_new("NOSUCHCHIP", NULL, &err);
	assert_null(h);
	assert_int_equal(err.code, GA_ERR_PROFILING);
	assert_non_null(strstr(err.msg, "NOSUCHCHIP"));
}

/* The chip of the recorded image (GH100) is one this CUPTI lists, so a live
 * run on it skips the counter availability image; a made-up chip and a
 * near miss of the name are not listed. */
static void test_chip_known(void **state)
{
	(void)state;
	assert_true(ga_host_chip_known("GH100"));
	assert_false(ga_host_chip_known("NOSUCHCHIP"));
	assert_false(ga_host_chip_known("GH10"));
	assert_false(ga_host_chip_known(""));
}

/* A damaged image is not a valid counter-data image. */
static void test_bad_image(void **state)
{
	const fixture *fx = *state;
	ga_error err = {0};
	size_t n = 0;
	uint8_t *junk = ga_xcalloc(fx->size, 1);

	assert_int_equal(ga_host_num_ranges(junk, fx->size, &n, &err), -1);
	assert_int_equal(err.code, GA_ERR_PROFILING);
	assert_non_null(strstr(err.msg, "counter-data"));
	free(junk);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_fixture_shape),
		cmocka_unit_test(test_num_ranges),
		cmocka_unit_test(test_metrics_valid),
		cmocka_unit_test(test_evaluate_all),
		cmocka_unit_test(test_evaluate_one_by_one),
		cmocka_unit_test(test_comparison_detects_difference),
		cmocka_unit_test(test_unknown_chip),
		cmocka_unit_test(test_chip_known),
		cmocka_unit_test(test_bad_image),
	};
	return cmocka_run_group_tests_name("cupti-eval", tests, setup, teardown);
}
