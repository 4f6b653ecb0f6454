/* test_loop.c: finding a loop's period in the launch sequence (loop.c).
 * Every expectation is checked against the definition, value by value
 * (ga_period_repeats, or a brute-force scan here), not only against the
 * numbers the sequences were built with. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdlib.h>

#include "collect/loop.h"

/* The smallest p in [min_p, max_p] whose last 2p values are two copies, by
 * brute force: what ga_period_found must give once the candidate is seen. */
static size_t brute_period(const ga_period *d, size_t min_p, size_t max_p)
{
	for (size_t p = min_p; p <= max_p && 2 * p <= d->n; p++)
		if (ga_period_repeats(d, p))
			return p;
	return 0;
}

/* How many of the last values equal the value p before each. */
static size_t brute_run(const ga_period *d, size_t p)
{
	size_t k = 0;
	while (k + p < d->n && ga_period_back(d, k) == ga_period_back(d, k + p))
		k++;
	return k;
}

/* The period found: the brute-force one (its run reaches the hash window
 * as soon as two copies are there, for periods of the window or more). */
static size_t want_period(const ga_period *d, size_t min_p, size_t max_p)
{
	size_t p = brute_period(d, min_p, max_p);
	assert_true(!p || brute_run(d, p) >= p);
	return p;
}

/* A training step: 6 kernels, one of them twice (an elementwise kernel
 * before and after a GEMM). */
static const long step[] = {10, 11, 12, 11, 13, 14, 15};
#define STEP_LEN (sizeof(step) / sizeof(step[0]))

/* Found only once the last two iterations' worth of launches repeat (clear
 * of the warm-up's extra launch), and then at every launch, whichever
 * launch of the iteration is the last.  Periods under the hash window (7 <
 * 16) are followed one by one. */
static void test_found_after_two_iterations(void **state)
{
	ga_period d;
	(void)state;
	ga_period_init(&d, 2, 32);
	/* Warm-up: a first iteration with extra launches (optimizer state). */
	ga_period_push(&d, 1);
	ga_period_push(&d, 2);
	for (size_t i = 0; i < STEP_LEN; i++) {
		ga_period_push(&d, step[i]);
		if (i == 4)
			ga_period_push(&d, 3);
	}
	for (int it = 0; it < 40; it++)
		for (size_t i = 0; i < STEP_LEN; i++) {
			ga_period_push(&d, step[i]);
			assert_int_equal(ga_period_found(&d), want_period(&d, 2, 32));
		}
	assert_int_equal(ga_period_found(&d), STEP_LEN);
	/* A launch out of the pattern ends it. */
	ga_period_push(&d, 99);
	assert_int_equal(ga_period_found(&d), 0);
	assert_int_equal(ga_period_repeats(&d, STEP_LEN), 0);
	ga_period_free(&d);
}

/* Nothing repeats in a sequence of distinct kernels; one kernel in a row
 * repeats with every period (the smallest allowed is found). */
static void test_limits(void **state)
{
	ga_period d;
	(void)state;
	ga_period_init(&d, 2, 64);
	for (long k = 0; k < 500; k++) {
		ga_period_push(&d, k);
		assert_int_equal(ga_period_found(&d), 0);
	}
	assert_int_equal(ga_period_back(&d, 0), 499);
	assert_int_equal(ga_period_back(&d, 63), 436);
	for (int i = 0; i < 40; i++)
		ga_period_push(&d, 5);
	assert_int_equal(ga_period_found(&d), 2);
	ga_period_free(&d);

	/* A period above max_p is not found. */
	ga_period_init(&d, 2, 19);
	for (int it = 0; it < 6; it++)
		for (long k = 0; k < 20; k++)
			ga_period_push(&d, k);
	assert_int_equal(ga_period_found(&d), 0);
	assert_true(ga_period_repeats(&d, 20));
	ga_period_free(&d);
}

/* A pseudo-random step of `len` launches over `kernels` kernels, with a
 * block of `layer` launches repeated `layers` times inside it (a model's
 * layers): the period of the step is len, of the layers' run layer. */
static long *make_step(size_t len, long kernels, size_t layer, size_t layers, unsigned seed)
{
	long *s = calloc(len, sizeof(*s));
	size_t i = 0;
	assert_non_null(s);
	srand(seed);
	while (i < len / 4)
		s[i++] = rand() % kernels;
	for (size_t l = 0; l < layers && i + layer <= len; l++)
		for (size_t k = 0; k < layer; k++, i++)
			s[i] = 100000 + (long)k;   /* the same layer each time */
	while (i < len)
		s[i++] = rand() % kernels;
	return s;
}

/* Long steps with noise: warm-up iterations that differ (extra launches
 * and kernels of their own), then clean steps; period len is found
 * within one iteration after the second clean copy ends, the layers'
 * inner period first while only they repeat. */
static void long_period(size_t len)
{
	ga_period d;
	long *s = make_step(len, 300, 40, 6, (unsigned)len);
	size_t found_at = 0, last_extra = 0;
	ga_period_init(&d, 2, GA_PERIOD_MAX);
	/* Two warm-up steps: autotuning launches at 20 places each. */
	for (int it = 0; it < 2; it++)
		for (size_t i = 0; i < len; i++) {
			ga_period_push(&d, s[i]);
			if (i % (len / 20) == 7) {
				ga_period_push(&d, 500000 + it);
				last_extra = d.n;
			}
		}
	for (int it = 0; it < 3; it++)
		for (size_t i = 0; i < len; i++) {
			ga_period_push(&d, s[i]);
			if (!found_at && ga_period_found(&d) == len)
				found_at = d.n;
		}
	/* Found when two clean copies follow the last extra launch, not one
	 * launch later (nor earlier: the layers' inner period is found then,
	 * the smaller one). */
	assert_int_equal(found_at, last_extra + 2 * len);
	assert_true(ga_period_repeats(&d, len));
	/* Where the layers repeat, the inner period comes first (the smallest
	 * of two copies), and it is a true one. */
	ga_period d2;
	ga_period_init(&d2, 2, GA_PERIOD_MAX);
	for (size_t i = 0; i < len / 4 + 3 * 40; i++)
		ga_period_push(&d2, s[i]);
	assert_int_equal(ga_period_found(&d2), 40);
	assert_true(ga_period_repeats(&d2, 40));
	ga_period_free(&d2);

	/* Data-dependent extra launches end the candidate; the period is
	 * found again once two clean copies follow, and a rejected period
	 * never again. */
	ga_period_push(&d, 777777);
	assert_int_equal(ga_period_found(&d), 0);
	for (int it = 0; it < 2; it++)
		for (size_t i = 0; i < len; i++)
			ga_period_push(&d, s[i]);
	assert_int_equal(ga_period_found(&d), len);
	ga_period_reject(&d, len);
	for (size_t i = 0; i < 2 * len; i++) {
		ga_period_push(&d, s[i % len]);
		assert_true(ga_period_found(&d) != len);
	}
	free(s);
	ga_period_free(&d);
}

static void test_period_5000(void **state)
{
	(void)state;
	long_period(5000);
}

static void test_period_20000(void **state)
{
	(void)state;
	long_period(20000);
}

/* Gradient accumulation: 4 micro-batches of the same launches, then the
 * optimizer step; the whole cycle repeats with period 4m + o.  The
 * micro-batch repeats first (two copies inside a cycle); across cycles
 * the cycle's own period holds. */
static void test_accumulation(void **state)
{
	ga_period d;
	const size_t m = 300, o = 30;
	long *mb = make_step(m, 200, 0, 0, 7);
	(void)state;
	ga_period_init(&d, 2, GA_PERIOD_MAX);
	for (int cycle = 0; cycle < 4; cycle++) {
		for (int k = 0; k < 4; k++)
			for (size_t i = 0; i < m; i++) {
				ga_period_push(&d, mb[i]);
				if (ga_period_found(&d) != want_period(&d, 2, 4 * m + o))
					fail_msg("cycle %d batch %d launch %zu: found %zu, want %zu", cycle,
					         k, i, ga_period_found(&d), want_period(&d, 2, 4 * m + o));
			}
		for (size_t i = 0; i < o; i++)
			ga_period_push(&d, 900000 + (long)i);
		assert_int_equal(ga_period_repeats(&d, 4 * m + o), cycle >= 1);
		assert_int_equal(ga_period_found(&d), cycle >= 1 ? 4 * m + o : 0);
	}
	free(mb);
	ga_period_free(&d);
}

/* A loop inside a loop: three copies of 20 values, then 30 others, again
 * and again (a model's layers inside a training step).  Inside the third
 * step's layers the inner period is found first, and the step's (90) is
 * the longer one live, both checked against the definition. */
static void test_longer(void **state)
{
	ga_period d;
	(void)state;
	ga_period_init(&d, 2, GA_PERIOD_MAX);
	for (int step = 0; step < 3; step++) {
		for (int l = 0; l < 3; l++)
			for (int k = 0; k < 20; k++)
				ga_period_push(&d, 100 + k);
		if (step == 2)
			break;
		for (int k = 0; k < 30; k++)
			ga_period_push(&d, 200 + k);
	}
	assert_int_equal(ga_period_found(&d), 20);
	assert_int_equal(ga_period_found(&d), brute_period(&d, 2, GA_PERIOD_MAX));
	assert_int_equal(ga_period_longer(&d, 20), 90);
	assert_true(ga_period_repeats(&d, 90));
	for (size_t p = 21; p < 90; p++)
		assert_false(ga_period_repeats(&d, p));
	assert_int_equal(ga_period_longer(&d, 90), 0);
	/* the step's tail: the inner period ends, the outer lives on */
	for (int k = 0; k < 30; k++)
		ga_period_push(&d, 200 + k);
	assert_int_equal(ga_period_found(&d), 90);
	assert_int_equal(ga_period_longer(&d, 20), 90);
	ga_period_free(&d);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_found_after_two_iterations),
		cmocka_unit_test(test_limits),
		cmocka_unit_test(test_period_5000),
		cmocka_unit_test(test_period_20000),
		cmocka_unit_test(test_accumulation),
		cmocka_unit_test(test_longer),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
