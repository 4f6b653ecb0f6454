/* test_loop.c: finding a loop's period in the launch sequence (loop.c). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "loop.h"

#define CAP 64

typedef struct {
	long ring[CAP];
	size_t n;
} seq;

static void push(seq *s, long v)
{
	s->ring[s->n % CAP] = v;
	s->n++;
}

/* A training step: 6 kernels, one of them twice (an elementwise kernel
 * before and after a GEMM). */
static const long step[] = {10, 11, 12, 11, 13, 14, 15};
#define STEP_LEN (sizeof(step) / sizeof(step[0]))

/* Found only once the last two iterations' worth of launches repeat (clear
 * of the warm-up's extra launch), and then at every launch, whichever
 * launch of the iteration is the last. */
static void test_found_after_two_iterations(void **state)
{
	seq s = {{0}, 0};
	(void)state;
	/* Warm-up: a first iteration with extra launches (optimizer state). */
	push(&s, 1);
	push(&s, 2);
	for (size_t i = 0; i < STEP_LEN; i++) {
		push(&s, step[i]);
		if (i == 4)
			push(&s, 3);
	}
	for (size_t i = 0; i < STEP_LEN; i++) {
		push(&s, step[i]);
		assert_int_equal(ga_loop_period(s.ring, CAP, s.n, 2, 32), 0);
	}
	for (size_t i = 0; i < STEP_LEN; i++) {
		push(&s, step[i]);
		/* The last 14 launches reach back into the first iteration's
		 * last 6 - i, which hold its extra launch while i < 4. */
		size_t want = i >= 4 ? STEP_LEN : 0;
		assert_int_equal(ga_loop_period(s.ring, CAP, s.n, 2, 32), want);
	}
	for (int it = 0; it < 20; it++)   /* past the ring's wrap */
		for (size_t i = 0; i < STEP_LEN; i++) {
			push(&s, step[i]);
			assert_int_equal(ga_loop_period(s.ring, CAP, s.n, 2, 32), STEP_LEN);
		}
	/* A launch out of the pattern ends it. */
	push(&s, 99);
	assert_int_equal(ga_loop_period(s.ring, CAP, s.n, 2, 32), 0);
	assert_int_equal(ga_loop_repeats(s.ring, CAP, s.n, STEP_LEN), 0);
}

/* One kernel in a row repeats with every period: the smallest allowed. */
static void test_in_a_row(void **state)
{
	seq s = {{0}, 0};
	(void)state;
	push(&s, 5);
	assert_int_equal(ga_loop_period(s.ring, CAP, s.n, 1, 32), 0);
	push(&s, 5);
	assert_int_equal(ga_loop_period(s.ring, CAP, s.n, 1, 32), 1);
	assert_int_equal(ga_loop_period(s.ring, CAP, s.n, 2, 32), 0);
	push(&s, 5);
	push(&s, 5);
	assert_int_equal(ga_loop_period(s.ring, CAP, s.n, 2, 32), 2);
	assert_int_equal(ga_loop_back(s.ring, CAP, s.n, 0), 5);
}

/* Periods beyond max_p, or needing more than the ring holds, are not
 * found; nothing repeats in a sequence of distinct kernels. */
static void test_limits(void **state)
{
	seq s = {{0}, 0};
	(void)state;
	for (int it = 0; it < 4; it++)
		for (long k = 0; k < 20; k++)
			push(&s, k);
	assert_int_equal(ga_loop_period(s.ring, CAP, s.n, 2, 32), 20);
	assert_int_equal(ga_loop_period(s.ring, CAP, s.n, 2, 19), 0);
	assert_int_equal(ga_loop_repeats(s.ring, CAP, s.n, 20), 1);
	assert_int_equal(ga_loop_repeats(s.ring, CAP, s.n, 21), 0);
	assert_int_equal(ga_loop_repeats(s.ring, CAP, s.n, 33), 0);   /* 2p > CAP */
	assert_int_equal(ga_loop_repeats(s.ring, CAP, s.n, 0), 0);

	seq d = {{0}, 0};
	for (long k = 0; k < 200; k++) {
		push(&d, k);
		assert_int_equal(ga_loop_period(d.ring, CAP, d.n, 1, 32), 0);
	}
	assert_int_equal(ga_loop_back(d.ring, CAP, d.n, 0), 199);
	assert_int_equal(ga_loop_back(d.ring, CAP, d.n, 63), 136);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_found_after_two_iterations),
		cmocka_unit_test(test_in_a_row),
		cmocka_unit_test(test_limits),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
