/* fuzz_expr.c: libFuzzer harness for the rule expression language
 * (src/rules/expr.c).
 *
 * The input is one expression.  It is parsed; a parse error must come with
 * a message and an offset inside the text.  A parsed expression is walked
 * for its names (all of them, and those outside avail()) and evaluated twice against a lookup that knows some names
 * (by their first letter, see lookup()), so the missing-metric, NaN,
 * infinity, overflow and division-by-zero paths all get exercised.  The
 * evaluator's contract is checked: success gives a finite value, failure
 * gives NAN and a reason.  Any violation aborts, which libFuzzer reports as
 * a crash. */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "rules/expr.h"

#define FUZZ_NAME "fuzz_expr"
#include "check.h"

/* Names resolve by their first letter, so the fuzzer can reach every kind
 * of value by choosing a name: m... missing, n... NaN, i... +inf, j... -inf,
 * h... huge (1e308), t... tiny (5e-324), z... zero, anything else a small
 * value that depends on the name. */
static int lookup(void *ctx, const char *name, double *out)
{
	unsigned *calls = ctx;

	(*calls)++;
	switch (name[0]) {
	case 'm': return -1;
	case 'n': *out = NAN; return 0;
	case 'i': *out = INFINITY; return 0;
	case 'j': *out = -INFINITY; return 0;
	case 'h': *out = 1e308; return 0;
	case 't': *out = 5e-324; return 0;
	case 'z': *out = 0.0; return 0;
	default: *out = (double)(strlen(name) % 7) - 3.0; return 0;
	}
}

static void count_name(void *ctx, const char *name)
{
	size_t *n = ctx;

	CHECK(name && *name);
	(*n)++;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char *src = malloc(size + 1);
	char msg[256], why[256];
	size_t off = (size_t)-1, names = 0;
	unsigned calls = 0;
	ga_expr *e;

	if (!src)
		return 0;
	memcpy(src, data, size);
	src[size] = '\0';

	e = ga_expr_parse(src, &off, msg, sizeof(msg));
	if (!e) {
		CHECK(msg[0] != '\0');
		CHECK(off <= strlen(src));
		free(src);
		return 0;
	}
	ga_expr_foreach_name(e, count_name, &names);
	{
		size_t required = 0;
		ga_expr_foreach_required_name(e, count_name, &required);
		CHECK(required <= names);
	}
	/* The first pass has no lookup at all: every name is missing. */
	for (int pass = 0; pass < 2; pass++) {
		double v = 0;
		ga_eval_status st = ga_expr_eval(e, pass ? lookup : NULL, &calls, &v, why,
		                                 sizeof(why));
		CHECK(st == GA_EVAL_OK || st == GA_EVAL_MISSING || st == GA_EVAL_DIVZERO ||
		      st == GA_EVAL_NAN);
		if (st == GA_EVAL_OK) {
			CHECK(isfinite(v));
		} else {
			CHECK(isnan(v));
			CHECK(why[0] != '\0');
		}
	}
	ga_expr_free(e);
	free(src);
	return 0;
}
