/* test_expr.c: the rule expression language (src/rules/expr.c). */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "rules/expr.h"
#include "util/util.h"

/* ---- a small variable table for the lookup callback ---- */

struct var {
	const char *name;
	double value;
};

struct vars {
	const struct var *v;
	size_t n;
	int lookups;            /* how many times lookup was called */
};

static int lookup(void *ctx, const char *name, double *out)
{
	struct vars *vs = ctx;
	size_t i;

	vs->lookups++;
	for (i = 0; i < vs->n; i++) {
		if (strcmp(vs->v[i].name, name) == 0) {
			*out = vs->v[i].value;
			return 0;
		}
	}
	return -1;
}

static const struct var default_vars[] = {
	{ "x", 4 },
	{ "y", 2 },
	{ "zero", 0 },
	{ "dram__throughput.avg.pct_of_peak_sustained_elapsed", 80 },
	{ "l1tex__t_sectors_pipe_lsu_mem_global_op_ld.sum", 3200 },
	{ "l1tex__t_requests_pipe_lsu_mem_global_op_ld.sum", 0 },
	{ "launch__time_share", 0.5 },
};

/* Parse and evaluate src against default_vars; the parse must succeed. */
static ga_eval_status eval_str(const char *src, double *out, char *why, size_t whylen,
                               int *lookups)
{
	struct vars vs = { default_vars, GA_ARRAY_LEN(default_vars), 0 };
	char msg[256];
	size_t off = 99;
	ga_expr *e = ga_expr_parse(src, &off, msg, sizeof(msg));
	ga_eval_status st;

	if (!e)
		fail_msg("parse of \"%s\" failed at %zu: %s", src, off, msg);
	st = ga_expr_eval(e, lookup, &vs, out, why, whylen);
	ga_expr_free(e);
	if (lookups)
		*lookups = vs.lookups;
	return st;
}

static double value_of(const char *src)
{
	char why[256];
	double v = -12345;
	ga_eval_status st = eval_str(src, &v, why, sizeof(why), NULL);

	if (st != GA_EVAL_OK)
		fail_msg("eval of \"%s\" failed (%d): %s", src, (int)st, why);
	return v;
}

#define assert_value(src, expect) assert_float_equal(value_of(src), (expect), 1e-12)

static void test_arithmetic_precedence(void **state)
{
	(void)state;
	assert_value("1 + 2 * 3", 7);
	assert_value("(1 + 2) * 3", 9);
	assert_value("2 * 3 - 4 / 2", 4);
	assert_value("10 - 2 - 3", 5);          /* left associative */
	assert_value("8 / 2 / 2", 2);
	assert_value("x * y + 1", 9);
	assert_value("x + y * 3", 10);
	assert_value("((((x))))", 4);
	assert_value("1+2*3-4", 3);             /* no spaces needed */
}

static void test_unary_minus(void **state)
{
	(void)state;
	assert_value("-2 * 3", -6);
	assert_value("- -2", 2);
	assert_value("--2", 2);
	assert_value("-(1 + 2)", -3);
	assert_value("2 - -1", 3);
	assert_value("-x + y", -2);
	assert_value("3 - 1 * -2", 5);
}

static void test_comparisons(void **state)
{
	(void)state;
	assert_value("1 < 2", 1);
	assert_value("2 < 1", 0);
	assert_value("2 <= 2", 1);
	assert_value("3 <= 2", 0);
	assert_value("3 > 2", 1);
	assert_value("2 > 2", 0);
	assert_value("2 >= 2", 1);
	assert_value("1 >= 2", 0);
	assert_value("2 == 2", 1);
	assert_value("2 == 3", 0);
	assert_value("2 != 3", 1);
	assert_value("2 != 2", 0);
	assert_value("1 + 2 < 4", 1);           /* sums bind tighter */
	assert_value("x * 2 == y * 4", 1);
}

static void test_logic(void **state)
{
	(void)state;
	assert_value("1 and 2", 1);
	assert_value("1 and 0", 0);
	assert_value("0 or 0", 0);
	assert_value("0 or 3", 1);
	assert_value("not 0", 1);
	assert_value("not 5", 0);
	assert_value("not not 5", 1);
	assert_value("1 or 0 and 0", 1);        /* and binds tighter than or */
	assert_value("(1 or 0) and 0", 0);
	assert_value("not 1 + 1 == 3", 1);      /* not (2 == 3) */
	assert_value("not x > 3 or y == 2", 1);
	assert_value("x > 3 and y < 3", 1);
	assert_value("x > 3 and not (y < 3)", 0);
}

static void test_short_circuit(void **state)
{
	double v = -1;
	char why[128];
	int lookups = -1;

	(void)state;
	/* The right operand would fail; it must not be evaluated. */
	assert_value("0 and 1 / 0", 0);
	assert_value("1 or 1 / 0", 1);
	assert_value("zero > 0 and 5 / zero > 2", 0);
	assert_value("zero == 0 or x / zero", 1);

	assert_int_equal(eval_str("0 and nothing__here", &v, why, sizeof(why), &lookups),
	                 GA_EVAL_OK);
	assert_float_equal(v, 0, 0);
	assert_int_equal(lookups, 0);
	assert_int_equal(eval_str("x or nothing__here", &v, why, sizeof(why), &lookups),
	                 GA_EVAL_OK);
	assert_float_equal(v, 1, 0);
	assert_int_equal(lookups, 1);

	/* ...but it is evaluated when it matters. */
	assert_int_equal(eval_str("1 and 1 / zero", &v, why, sizeof(why), NULL),
	                 GA_EVAL_DIVZERO);
	assert_int_equal(eval_str("0 or nothing__here", &v, why, sizeof(why), NULL),
	                 GA_EVAL_MISSING);
}

static void test_functions(void **state)
{
	(void)state;
	assert_value("min(3, 1, 2)", 1);
	assert_value("max(3, 1, 2)", 3);
	assert_value("min(7)", 7);
	assert_value("max(-7)", -7);
	assert_value("abs(-4)", 4);
	assert_value("abs(4)", 4);
	assert_value("clamp(5, 0, 1)", 1);
	assert_value("clamp(-1, 0, 1)", 0);
	assert_value("clamp(0.5, 0, 1)", 0.5);
	assert_value("clamp(1 - 4 / x, 0, 1)", 0);
	assert_value("max(x, y) * min(x, y)", 8);
	assert_value("abs(min(-x, y))", 4);
	assert_value("min ( 2 , 1 )", 1);
}

static void test_names_with_dots(void **state)
{
	(void)state;
	assert_value("dram__throughput.avg.pct_of_peak_sustained_elapsed * 2", 160);
	assert_value("dram__throughput.avg.pct_of_peak_sustained_elapsed>=80", 1);
	assert_value("launch__time_share", 0.5);
	/* Keywords are whole, lower-case words only. */
	{
		struct var v[] = { { "AND", 3 }, { "android", 5 }, { "order", 1 }, { "not_x", 2 } };
		struct vars vs = { v, GA_ARRAY_LEN(v), 0 };
		char msg[128];
		size_t off;
		double out = 0;
		ga_expr *e = ga_expr_parse("AND + android + order + not_x", &off, msg, sizeof(msg));
		assert_non_null(e);
		assert_int_equal(ga_expr_eval(e, lookup, &vs, &out, NULL, 0), GA_EVAL_OK);
		assert_float_equal(out, 11, 0);
		ga_expr_free(e);
	}
}

static void test_numbers(void **state)
{
	(void)state;
	assert_value("1e3", 1000);
	assert_value("1E3", 1000);
	assert_value("2.5e-1", 0.25);
	assert_value("1e+2", 100);
	assert_value(".5", 0.5);
	assert_value("5.", 5);
	assert_value("0.125", 0.125);
	assert_value("007", 7);
	assert_value("1e-400", 0);              /* underflow is harmless */
	assert_value("1.7976931348623157e308", 1.7976931348623157e308);
}

struct parse_error_case {
	const char *src;
	size_t off;
	const char *msg;
};

static const struct parse_error_case parse_errors[] = {
	{ "", 0, "empty expression" },
	{ "   \t\n", 0, "empty expression" },
	{ "a )", 2, "unexpected ')'" },
	{ ")", 0, "unexpected ')'" },
	{ "x + y)", 5, "unexpected ')'" },
	{ "(x + y", 6, "expected ')' to close '(' at offset 0" },
	{ "1 + (2 * (3 - 4)", 16, "expected ')' to close '(' at offset 4" },
	{ "(", 1, "unexpected end of expression" },
	{ "foo(1)", 0, "unknown function 'foo'" },
	{ "x + sqrt(y)", 4, "unknown function 'sqrt'" },
	{ "x + clamp(1, 2)", 4, "wrong number of arguments to clamp: expected 3, got 2" },
	{ "clamp(1, 2, 3, 4)", 0, "wrong number of arguments to clamp: expected 3, got 4" },
	{ "abs(1, 2)", 0, "wrong number of arguments to abs: expected 1, got 2" },
	{ "abs()", 0, "wrong number of arguments to abs: expected 1, got 0" },
	{ "1 + min()", 4, "wrong number of arguments to min: expected at least 1, got 0" },
	{ "min(1 2)", 6, "expected ',' or ')' in call to min" },
	{ "max(1,", 6, "unexpected end of expression" },
	{ "max(1, 2", 8, "expected ')' to close '(' at offset 3" },
	{ "a b", 2, "trailing input" },
	{ "1 2", 2, "trailing input" },
	{ "x AND y", 2, "trailing input" },
	{ "1e999", 0, "number out of range" },
	{ "2 * 1e999", 4, "number out of range" },
	{ "1e", 1, "malformed number: exponent without digits" },
	{ "1e+x", 3, "malformed number: exponent without digits" },
	{ "3x", 1, "malformed number: unexpected 'x'" },
	{ "1.5.2", 3, "malformed number: unexpected '.'" },
	{ "a +", 3, "unexpected end of expression" },
	{ "-", 1, "unexpected end of expression" },
	{ "not", 3, "unexpected end of expression" },
	{ "a + * b", 4, "unexpected '*'" },
	{ "a and or b", 6, "unexpected 'or'" },
	{ "and", 0, "unexpected 'and'" },
	{ ", a", 0, "unexpected ','" },
	{ "x < y < 3", 6, "comparisons cannot be chained; use 'and'" },
	{ "x = y", 2, "unexpected character '='; use '==' to compare" },
	{ "!x", 0, "unexpected character '!'; use 'not' for negation" },
	{ "x && y", 2, "unexpected character '&'; use 'and'" },
	{ "x || y", 2, "unexpected character '|'; use 'or'" },
	{ "x @ y", 2, "unexpected character '@'" },
	{ "'x'", 0, "unexpected character \"'\"" },
	{ "x\x01", 1, "unexpected control character 0x01" },
	{ "x > \xc3\xa9", 4, "unexpected non-ASCII byte 0xc3" },
	{ "dram__x. + 1", 7, "a name must not end with '.'" },
	{ "x.", 1, "a name must not end with '.'" },
	{ "a..b", 2, "empty component in name (two dots in a row)" },
	{ ".x", 0, "unexpected character '.'" },
};

static void test_parse_errors(void **state)
{
	size_t i;

	(void)state;
	for (i = 0; i < GA_ARRAY_LEN(parse_errors); i++) {
		const struct parse_error_case *c = &parse_errors[i];
		char msg[256];
		size_t off = 12345;
		ga_expr *e = ga_expr_parse(c->src, &off, msg, sizeof(msg));

		if (e) {
			ga_expr_free(e);
			fail_msg("\"%s\" parsed but should not have", c->src);
		}
		if (off != c->off || strcmp(msg, c->msg) != 0)
			fail_msg("\"%s\": got offset %zu \"%s\", expected %zu \"%s\"", c->src, off,
			         msg, c->off, c->msg);
	}
}

static void test_parse_error_small_buffer(void **state)
{
	char msg[8];
	size_t off = 0;

	(void)state;
	assert_null(ga_expr_parse("foo(1)", &off, msg, sizeof(msg)));
	assert_string_equal(msg, "unknown");    /* truncated, still terminated */
	assert_null(ga_expr_parse("a b", NULL, NULL, 0));
	assert_null(ga_expr_parse(NULL, &off, msg, sizeof(msg)));
	assert_int_equal(off, 0);
}

static void test_division_by_zero(void **state)
{
	double v = 0;
	char why[256];

	(void)state;
	assert_int_equal(eval_str("l1tex__t_sectors_pipe_lsu_mem_global_op_ld.sum / "
	                          "l1tex__t_requests_pipe_lsu_mem_global_op_ld.sum",
	                          &v, why, sizeof(why), NULL),
	                 GA_EVAL_DIVZERO);
	assert_string_equal(why, "division by zero: "
	                    "'l1tex__t_requests_pipe_lsu_mem_global_op_ld.sum' is 0");
	assert_true(isnan(v));
	assert_int_equal(eval_str("x / (y - 2)", &v, why, sizeof(why), NULL), GA_EVAL_DIVZERO);
	assert_string_equal(why, "division by zero: '(y - 2)' is 0");
	assert_int_equal(eval_str("1 + x / min(zero, 1) * 2", &v, why, sizeof(why), NULL),
	                 GA_EVAL_DIVZERO);
	assert_string_equal(why, "division by zero: 'min(zero, 1)' is 0");
	/* Multiplying by zero is fine. */
	assert_value("x * zero", 0);
}

/* avail(x, y): the fallback only for a missing name, never for a division
 * by zero; and only required names are reported for collection. */
static void count_name(void *ctx, const char *name)
{
	(void)name;
	(*(int *)ctx)++;
}

static void test_avail(void **state)
{
	double v = 0;
	char why[256];
	size_t off;
	char msg[64];
	int n = 0;

	(void)state;
	assert_value("avail(x, 7)", 4);
	assert_value("avail(no_such__metric, 7)", 7);
	assert_value("max(y, avail(no_such__metric, 0))", 2);
	assert_int_equal(eval_str("avail(x / zero, 7)", &v, why, sizeof(why), NULL),
	                 GA_EVAL_DIVZERO);
	assert_int_equal(eval_str("avail(no_such__metric, other__missing)", &v, why, sizeof(why),
	                          NULL), GA_EVAL_MISSING);
	ga_expr *e = ga_expr_parse("max(a__m, avail(b__m + c__m, d__m))", &off, msg, sizeof(msg));
	assert_non_null(e);
	ga_expr_foreach_name(e, count_name, &n);
	assert_int_equal(n, 4);
	n = 0;
	ga_expr_foreach_required_name(e, count_name, &n);
	assert_int_equal(n, 2);  /* a__m and the fallback d__m */
	ga_expr_free(e);
	assert_null(ga_expr_parse("avail(x)", &off, msg, sizeof(msg)));
}

static void test_missing_name(void **state)
{
	double v = 0;
	char why[256];
	char msg[64];
	size_t off;
	ga_expr *e;

	(void)state;
	assert_int_equal(eval_str("x + sm__cycles_elapsed.avg > 3", &v, why, sizeof(why), NULL),
	                 GA_EVAL_MISSING);
	assert_string_equal(why, "metric 'sm__cycles_elapsed.avg' not in profile");
	assert_true(isnan(v));

	/* No lookup function at all: every name is missing. */
	e = ga_expr_parse("1 + q", &off, msg, sizeof(msg));
	assert_non_null(e);
	assert_int_equal(ga_expr_eval(e, NULL, NULL, &v, why, sizeof(why)), GA_EVAL_MISSING);
	assert_string_equal(why, "metric 'q' not in profile");
	/* why may be NULL */
	assert_int_equal(ga_expr_eval(e, NULL, NULL, &v, NULL, 0), GA_EVAL_MISSING);
	ga_expr_free(e);
}

static void test_nan_and_inf(void **state)
{
	struct var v[] = { { "bad__nan", NAN }, { "bad__inf", INFINITY }, { "ok", 1 } };
	struct vars vs = { v, GA_ARRAY_LEN(v), 0 };
	char why[256], msg[64];
	size_t off;
	double out = 0;
	ga_expr *e;

	(void)state;
	e = ga_expr_parse("ok + bad__nan", &off, msg, sizeof(msg));
	assert_non_null(e);
	assert_int_equal(ga_expr_eval(e, lookup, &vs, &out, why, sizeof(why)), GA_EVAL_NAN);
	assert_string_equal(why, "'bad__nan' is NaN");
	assert_true(isnan(out));
	ga_expr_free(e);

	/* Even where the value would not matter (0 * NaN), NaN is refused. */
	e = ga_expr_parse("0 * bad__inf", &off, msg, sizeof(msg));
	assert_non_null(e);
	assert_int_equal(ga_expr_eval(e, lookup, &vs, &out, why, sizeof(why)), GA_EVAL_NAN);
	assert_string_equal(why, "'bad__inf' is infinite");
	ga_expr_free(e);

	/* An overflowing result. */
	assert_int_equal(eval_str("1 + 1e308 * 10", &out, why, sizeof(why), NULL), GA_EVAL_NAN);
	assert_string_equal(why, "'1e308 * 10' is infinite");
	assert_int_equal(eval_str("-1e308 - 1e308", &out, why, sizeof(why), NULL), GA_EVAL_NAN);
	assert_string_equal(why, "'-1e308 - 1e308' is infinite");
}

static char *repeat(const char *unit, size_t n, const char *middle, const char *tail_unit)
{
	ga_buf b = {0};
	size_t i;

	for (i = 0; i < n; i++)
		ga_buf_puts(&b, unit);
	ga_buf_puts(&b, middle);
	for (i = 0; tail_unit && i < n; i++)
		ga_buf_puts(&b, tail_unit);
	return ga_buf_take(&b);
}

static void check_depth(const char *unit, const char *middle, const char *tail, size_t ok_n,
                        double ok_value, size_t bad_n, size_t bad_off)
{
	char msg[128];
	size_t off = 0;
	char *src;
	ga_expr *e;
	double v = 0;

	src = repeat(unit, ok_n, middle, tail);
	e = ga_expr_parse(src, &off, msg, sizeof(msg));
	if (!e)
		fail_msg("%zu x '%s' should parse: %s at %zu", ok_n, unit, msg, off);
	assert_int_equal(ga_expr_eval(e, NULL, NULL, &v, NULL, 0), GA_EVAL_OK);
	assert_float_equal(v, ok_value, 0);
	ga_expr_free(e);
	free(src);

	src = repeat(unit, bad_n, middle, tail);
	assert_null(ga_expr_parse(src, &off, msg, sizeof(msg)));
	assert_string_equal(msg, "expression nested too deeply");
	assert_int_equal(off, bad_off);
	free(src);
}

static void test_deep_nesting(void **state)
{
	char msg[128];
	size_t off = 0;
	char *src;
	ga_expr *e;
	double v = 0;

	(void)state;
	check_depth("(", "1", ")", 200, 1, 201, 200);
	check_depth("-", "1", NULL, 200, 1, 201, 200);
	check_depth("not ", "1", NULL, 200, 1, 201, 800);
	check_depth("abs(", "1", ")", 200, 1, 201, 803);
	/* Hostile input far past the limit fails cleanly too. */
	check_depth("(", "1", ")", 10, 1, 100000, 200);

	/* A long flat chain is fine up to the tree height limit... */
	src = repeat("1+", 900, "1", NULL);
	e = ga_expr_parse(src, &off, msg, sizeof(msg));
	assert_non_null(e);
	assert_int_equal(ga_expr_eval(e, NULL, NULL, &v, NULL, 0), GA_EVAL_OK);
	assert_float_equal(v, 901, 0);
	ga_expr_free(e);
	free(src);
	/* ...and refused beyond it. */
	src = repeat("1+", 5000, "1", NULL);
	assert_null(ga_expr_parse(src, &off, msg, sizeof(msg)));
	assert_string_equal(msg, "expression too complex (more than 1000 levels)");
	assert_int_equal(off, 0);
	free(src);
}

struct name_list {
	char names[16][64];
	size_t n;
};

static void collect(void *ctx, const char *name)
{
	struct name_list *l = ctx;

	assert_true(l->n < 16);
	snprintf(l->names[l->n++], sizeof(l->names[0]), "%s", name);
}

static void test_foreach_name(void **state)
{
	struct name_list l = {0};
	char msg[64];
	size_t off;
	ga_expr *e;

	(void)state;
	e = ga_expr_parse("a__b + min(c__d, a__b) * e.f > g and not (h or a__b / clamp(g, 0, e.f))",
	                  &off, msg, sizeof(msg));
	assert_non_null(e);
	ga_expr_foreach_name(e, collect, &l);
	assert_int_equal(l.n, 5);
	assert_string_equal(l.names[0], "a__b");
	assert_string_equal(l.names[1], "c__d");
	assert_string_equal(l.names[2], "e.f");
	assert_string_equal(l.names[3], "g");
	assert_string_equal(l.names[4], "h");
	ga_expr_free(e);

	/* No names at all. */
	memset(&l, 0, sizeof(l));
	e = ga_expr_parse("max(1, 2) + 3", &off, msg, sizeof(msg));
	assert_non_null(e);
	ga_expr_foreach_name(e, collect, &l);
	assert_int_equal(l.n, 0);
	ga_expr_free(e);

	ga_expr_free(NULL);
}

/* ---- printing ---- */

static char *print_str(const char *src, ga_expr_subst_fn subst, void *ctx)
{
	char msg[256];
	size_t off;
	ga_expr *e = ga_expr_parse(src, &off, msg, sizeof(msg));
	ga_buf b = {0};

	if (!e)
		fail_msg("'%s' does not parse: %s", src, msg);
	ga_expr_print(e, subst, ctx, &b);
	ga_expr_free(e);
	return ga_buf_take(&b);
}

/* Parentheses only where the grammar needs them, numbers as written. */
static void test_print(void **state)
{
	static const struct {
		const char *src, *printed;
	} cases[] = {
		{ "a*b+c", "a * b + c" },
		{ "a - (b - c)", "a - (b - c)" },
		{ "(a - b) - c", "a - b - c" },
		{ "a / (b * c)", "a / (b * c)" },
		{ "(a / b) * c", "a / b * c" },
		{ "not (a < b)", "not a < b" },
		{ "(not a) < b", "(not a) < b" },
		{ "not not a", "not not a" },
		{ "-(a + b) * 2", "-(a + b) * 2" },
		{ "- -a", "- -a" },
		{ "-(-a)", "- -a" },
		{ "(a or b) and not c", "(a or b) and not c" },
		{ "a or (b and c)", "a or b and c" },
		{ "a or (b or c)", "a or (b or c)" },
		{ "(a < b) == (c < d)", "(a < b) == (c < d)" },
		{ "max(a, (b), 1e6, .5)", "max(a, b, 1e6, .5)" },
		{ "avail(x__y.sum / 2, 0)", "avail(x__y.sum / 2, 0)" },
		{ "clamp((x), 0, (1))", "clamp(x, 0, 1)" },
		{ "2.50", "2.50" },
		{ "(((x)))", "x" },
	};
	size_t i;

	(void)state;
	for (i = 0; i < GA_ARRAY_LEN(cases); i++) {
		char *got = print_str(cases[i].src, NULL, NULL);
		char *again = print_str(got, NULL, NULL);
		if (strcmp(got, cases[i].printed) != 0)
			fail_msg("'%s' printed as '%s', expected '%s'", cases[i].src, got,
			         cases[i].printed);
		assert_string_equal(again, got);        /* a fixed point */
		free(got);
		free(again);
	}
}

/* What is printed evaluates as the original, whatever the values. */
static void test_print_evaluates_the_same(void **state)
{
	static const char *const srcs[] = {
		"x - y - zero * x / y",
		"x - (y - (x - y))",
		"x / y / (x / y) + -x * -(y - x)",
		"not x < y and (zero or y) == 1 or not (x != y)",
		"(x > y) + (x >= y) * 2 - (x < y) / 4",
		"clamp(x - y * 2, -(y), max(x, y, zero)) + abs(y - x) + min(x)",
	};
	static const double values[][3] = {
		{ 4, 2, 0 }, { -3, 7.5, 1 }, { 0.1, 0.3, 0 }, { 1e300, -1e-300, 2 }, { 5, 5, 5 },
	};
	size_t i, k;

	(void)state;
	for (i = 0; i < GA_ARRAY_LEN(srcs); i++) {
		char *printed = print_str(srcs[i], NULL, NULL);
		ga_expr *a = ga_expr_parse(srcs[i], NULL, NULL, 0);
		ga_expr *b = ga_expr_parse(printed, NULL, NULL, 0);
		assert_non_null(b);
		for (k = 0; k < GA_ARRAY_LEN(values); k++) {
			const struct var v[] = {
				{ "x", values[k][0] }, { "y", values[k][1] }, { "zero", values[k][2] },
			};
			struct vars vs = { v, GA_ARRAY_LEN(v), 0 };
			double ra, rb;
			ga_eval_status sa = ga_expr_eval(a, lookup, &vs, &ra, NULL, 0);
			ga_eval_status sb = ga_expr_eval(b, lookup, &vs, &rb, NULL, 0);
			assert_int_equal(sa, sb);
			if (sa == GA_EVAL_OK && memcmp(&ra, &rb, sizeof(ra)) != 0)
				fail_msg("'%s' gave %.17g, printed '%s' %.17g", srcs[i], ra, printed, rb);
		}
		ga_expr_free(a);
		ga_expr_free(b);
		free(printed);
	}
}

/* subst replaces x and keeps every other name. */
static int subst_x(void *ctx, const char *name, ga_buf *out)
{
	int *calls = ctx;

	(*calls)++;
	if (strcmp(name, "x") != 0)
		return 0;
	ga_buf_puts(out, "(a__b + 1)");
	return 1;
}

static void test_print_subst(void **state)
{
	int calls = 0;
	char *got = print_str("x * x - y / max(x, 2)", subst_x, &calls);

	(void)state;
	assert_string_equal(got, "(a__b + 1) * (a__b + 1) - y / max((a__b + 1), 2)");
	assert_int_equal(calls, 4);
	free(got);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_arithmetic_precedence),
		cmocka_unit_test(test_avail),
		cmocka_unit_test(test_unary_minus),
		cmocka_unit_test(test_comparisons),
		cmocka_unit_test(test_logic),
		cmocka_unit_test(test_short_circuit),
		cmocka_unit_test(test_functions),
		cmocka_unit_test(test_names_with_dots),
		cmocka_unit_test(test_numbers),
		cmocka_unit_test(test_parse_errors),
		cmocka_unit_test(test_parse_error_small_buffer),
		cmocka_unit_test(test_division_by_zero),
		cmocka_unit_test(test_missing_name),
		cmocka_unit_test(test_nan_and_inf),
		cmocka_unit_test(test_deep_nesting),
		cmocka_unit_test(test_foreach_name),
		cmocka_unit_test(test_print),
		cmocka_unit_test(test_print_evaluates_the_same),
		cmocka_unit_test(test_print_subst),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
