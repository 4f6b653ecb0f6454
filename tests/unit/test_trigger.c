/* test_trigger.c: the rules' source-line trigger as the injection library
 * evaluates it after a profiled launch (collect/trigger.c). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "collect/trigger.h"

#define SECT_LD "l1tex__t_sectors_pipe_lsu_mem_global_op_ld.sum"
#define REQ_LD "l1tex__t_requests_pipe_lsu_mem_global_op_ld.sum"
#define THREADS "smsp__thread_inst_executed_pred_on.sum"
#define INST "smsp__inst_executed.sum"
#define DUR "gpu__time_duration.sum"

/* A trigger as the rules write it: uncoalesced loads, or divergence. */
static const char *const when =
	"(" REQ_LD " > 0 and " SECT_LD " / " REQ_LD " > 8) or "
	"(" INST " > 0 and " THREADS " / " INST " < 24)";

/* The launch's metrics in the profile's order; NAN: not in its set. */
static char *names[] = {DUR, SECT_LD, REQ_LD, THREADS, INST};
#define N (sizeof(names) / sizeof(names[0]))

static ga_trigger *parse(const char *text)
{
	char msg[256] = "";
	ga_trigger *t = ga_trigger_parse(text, msg, sizeof(msg));
	if (!t)
		fail_msg("'%s' does not parse: %s", text, msg);
	return t;
}

/* A strided kernel: 32 sectors a request. */
static void test_uncoalesced(void **state)
{
	ga_trigger *t = parse(when);
	double v[N] = {1046176.0, 50331648.0, 1572864.0, 1.6e9, 5.0e7};
	char *why = NULL;
	(void)state;

	assert_int_equal(ga_trigger_holds(t, names, v, N, &why), 1);
	assert_string_equal(why, "rule trigger: " REQ_LD "=1.573e+06, " SECT_LD "=5.033e+07");
	free(why);
	ga_trigger_free(t);
}

/* A launch of another metric set: the loads were not measured, the
 * divergence was, and holds on its own. */
static void test_other_set(void **state)
{
	ga_trigger *t = parse(when);
	double v[N] = {1046176.0, NAN, NAN, 16.1 * 5.0e7, 5.0e7};
	char *why = NULL;
	(void)state;

	assert_int_equal(ga_trigger_holds(t, names, v, N, &why), 1);
	assert_string_equal(why, "rule trigger: " INST "=5e+07, " THREADS "=8.05e+08");
	free(why);

	/* 31 threads an instruction, 4 sectors a request: nothing to show */
	double fine[N] = {1e6, 4 * 1572864.0, 1572864.0, 31 * 5.0e7, 5.0e7};
	why = NULL;
	assert_int_equal(ga_trigger_holds(t, names, fine, N, &why), 0);
	assert_null(why);
	ga_trigger_free(t);
}

/* Not measured, not evaluable: not triggered, silently. */
static void test_not_measured(void **state)
{
	ga_trigger *t = parse(when);
	double none[N] = {1e6, NAN, NAN, NAN, NAN};
	double zero[N] = {1e6, 0, 0, 0, 0};   /* guarded divisions */
	char *why = NULL;
	(void)state;

	assert_int_equal(ga_trigger_holds(t, names, none, N, &why), 0);
	assert_int_equal(ga_trigger_holds(t, names, zero, N, &why), 0);
	assert_int_equal(ga_trigger_holds(t, names, none, 1, &why), 0);
	assert_null(why);
	ga_trigger_free(t);

	/* an unguarded division by zero does not hold either */
	t = parse(SECT_LD " / " REQ_LD " > 8");
	assert_int_equal(ga_trigger_holds(t, names, zero, N, &why), 0);
	ga_trigger_free(t);
	/* no trigger: nothing holds */
	assert_int_equal(ga_trigger_holds(NULL, names, zero, N, &why), 0);
}

/* "or" splits only at the top: inside parentheses, inside a name, inside
 * a number's exponent it does not. */
static void test_operands(void **state)
{
	char *nm[] = {"a.sum", "order.sum", "c.sum"};
	double v[] = {2, 1e-6, NAN};
	char *why = NULL;
	(void)state;

	ga_trigger *t = parse("(a.sum > 1 or order.sum > 1) and c.sum > 1");
	assert_int_equal(ga_trigger_holds(t, nm, v, 3, &why), 0);   /* c.sum not measured */
	ga_trigger_free(t);

	t = parse("order.sum < 1e-5 or c.sum > 1");
	assert_int_equal(ga_trigger_holds(t, nm, v, 3, &why), 1);
	assert_string_equal(why, "rule trigger: order.sum=1e-06");
	free(why);
	ga_trigger_free(t);

	t = parse("c.sum>1 or(a.sum>1)");
	why = NULL;
	assert_int_equal(ga_trigger_holds(t, nm, v, 3, &why), 1);
	assert_string_equal(why, "rule trigger: a.sum=2");
	free(why);
	ga_trigger_free(t);

	/* avail(): the fallback when the first argument was not measured */
	t = parse("avail(c.sum, a.sum) > 1");
	why = NULL;
	assert_int_equal(ga_trigger_holds(t, nm, v, 3, &why), 1);
	assert_string_equal(why, "rule trigger: a.sum=2");
	free(why);
	ga_trigger_free(t);
}

static void test_parse_error(void **state)
{
	char msg[256] = "";
	(void)state;

	assert_null(ga_trigger_parse("a.sum > ", msg, sizeof(msg)));
	assert_non_null(strstr(msg, "offset 8"));
	assert_null(ga_trigger_parse("(a.sum > 1 or b.sum", msg, sizeof(msg)));
	assert_null(ga_trigger_parse("", msg, sizeof(msg)));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_uncoalesced),
		cmocka_unit_test(test_other_set),
		cmocka_unit_test(test_not_measured),
		cmocka_unit_test(test_operands),
		cmocka_unit_test(test_parse_error),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
