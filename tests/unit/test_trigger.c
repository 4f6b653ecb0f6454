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
#include "util/util.h"

#define SECT_LD "l1tex__t_sectors_pipe_lsu_mem_global_op_ld.sum"
#define REQ_LD "l1tex__t_requests_pipe_lsu_mem_global_op_ld.sum"
#define THREADS "smsp__thread_inst_executed_pred_on.sum"
#define INST "smsp__inst_executed.sum"
#define DUR "gpu__time_duration.sum"

/* A trigger as the rules write it, a line per rule: uncoalesced loads,
 * divergence. */
#define UNCOALESCED "(" REQ_LD " > 0 and " SECT_LD " / " REQ_LD " > 8)"
#define DIVERGENT "(" INST " > 0 and " THREADS " / " INST " < 24)"
static const char *const when =
	"uncoalesced-global-access\t" UNCOALESCED "\n"
	"thread-divergence\t" DIVERGENT "\n";

/* The launch's metrics in the profile's order; NAN: not in its set. */
static char *names[] = {DUR, SECT_LD, REQ_LD, THREADS, INST};
#define N (sizeof(names) / sizeof(names[0]))

/* What ga_trigger_parse said about its bad lines, one per line. */
static void collect_bad(void *ctx, const char *msg)
{
	ga_buf *b = ctx;
	ga_buf_printf(b, "%s\n", msg);
}

static ga_trigger *parse(const char *text)
{
	ga_buf bad = {0};
	ga_trigger *t = ga_trigger_parse(text, collect_bad, &bad);
	if (!t || bad.len)
		fail_msg("'%s' does not parse: %s", text, bad.s ? bad.s : "");
	return t;
}

/* A strided kernel: 32 sectors a request, and 31 threads an instruction. */
static void test_uncoalesced(void **state)
{
	ga_trigger *t = parse(when);
	double v[N] = {1046176.0, 50331648.0, 1572864.0, 31 * 5.0e7, 5.0e7};
	char *why = NULL;
	(void)state;

	assert_int_equal(ga_trigger_holds(t, names, v, N, &why), 1);
	assert_string_equal(why, "rule uncoalesced-global-access");
	free(why);
	ga_trigger_free(t);
}

/* Both rules hold: both named, in the trigger's order. */
static void test_several(void **state)
{
	ga_trigger *t = parse(when);
	double v[N] = {1046176.0, 50331648.0, 1572864.0, 16.1 * 5.0e7, 5.0e7};
	char *why = NULL;
	(void)state;

	assert_int_equal(ga_trigger_holds(t, names, v, N, &why), 1);
	assert_string_equal(why, "rules uncoalesced-global-access, thread-divergence");
	free(why);
	ga_trigger_free(t);

	/* a last line without its newline is read too */
	t = parse("a\t" SECT_LD " > 1\nb\t" INST " > 1\nc\t" THREADS " > 1");
	why = NULL;
	assert_int_equal(ga_trigger_holds(t, names, v, N, &why), 1);
	assert_string_equal(why, "rules a, b, c");
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
	assert_string_equal(why, "rule thread-divergence");
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
	t = parse("r\t" SECT_LD " / " REQ_LD " > 8\n");
	assert_int_equal(ga_trigger_holds(t, names, zero, N, &why), 0);
	ga_trigger_free(t);
	/* no trigger: nothing holds */
	assert_int_equal(ga_trigger_holds(NULL, names, zero, N, &why), 0);
}

/* A rule's expression is one expression, "or" and all: the line's text is
 * never taken apart. */
static void test_one_expression(void **state)
{
	char *nm[] = {"a.sum", "order.sum", "c.sum"};
	double v[] = {2, 1e-6, NAN};
	char *why = NULL;
	(void)state;

	ga_trigger *t = parse("r\t(a.sum > 1 or order.sum > 1) and c.sum > 1\n");
	assert_int_equal(ga_trigger_holds(t, nm, v, 3, &why), 0);   /* c.sum not measured */
	ga_trigger_free(t);

	/* "or" short-cuts past what was not measured */
	t = parse("r\torder.sum < 1e-5 or c.sum > 1\n");
	assert_int_equal(ga_trigger_holds(t, nm, v, 3, &why), 1);
	assert_string_equal(why, "rule r");
	free(why);
	ga_trigger_free(t);

	/* avail(): the fallback when the first argument was not measured */
	t = parse("r\tavail(c.sum, a.sum) > 1\n");
	why = NULL;
	assert_int_equal(ga_trigger_holds(t, nm, v, 3, &why), 1);
	assert_string_equal(why, "rule r");
	free(why);
	ga_trigger_free(t);
}

/* A bad line is said once, naming its rule and where; the others work. */
static void test_parse_error(void **state)
{
	ga_buf bad = {0};
	double v[N] = {1046176.0, 50331648.0, 1572864.0, 16.1 * 5.0e7, 5.0e7};
	char *why = NULL;
	ga_trigger *t;
	(void)state;

	t = ga_trigger_parse("uncoalesced-global-access\t" UNCOALESCED "\n"
	                     "broken\t" INST " > \n"
	                     "no tab here\n"
	                     "\n"
	                     "thread-divergence\t" DIVERGENT "\n",
	                     collect_bad, &bad);
	assert_non_null(t);
	assert_non_null(bad.s);
	assert_non_null(strstr(bad.s, "rule broken: "));   /* offset: the end of its expression */
	if (!strstr(bad.s, "at offset 26: "))
		fail_msg("%s", bad.s);
	assert_non_null(strstr(bad.s, "\nline 3 is not RULE-ID<TAB>EXPRESSION\n"));
	assert_int_equal(strchr(strchr(bad.s, '\n') + 1, '\n')[1], '\0');   /* two messages */
	assert_int_equal(ga_trigger_holds(t, names, v, N, &why), 1);
	assert_string_equal(why, "rules uncoalesced-global-access, thread-divergence");
	free(why);
	ga_trigger_free(t);
	ga_buf_free(&bad);

	/* nothing left: no trigger */
	assert_null(ga_trigger_parse("r\t(a.sum > 1 or b.sum\n", collect_bad, &bad));
	assert_non_null(strstr(bad.s, "rule r: "));
	ga_buf_free(&bad);
	assert_null(ga_trigger_parse("\tr > 1\n", NULL, NULL));   /* no rule id */
	assert_null(ga_trigger_parse("", collect_bad, &bad));
	assert_null(ga_trigger_parse("\n\n", collect_bad, &bad));
	assert_int_equal(bad.len, 0);   /* empty lines are not errors */
}

/* The library kernels the default source mode leaves out: the first line
 * that matches decides, '!' keeps; globs whole, regexes anywhere, either
 * name, "void " dropped; bad lines said and left out. */
static void test_name_filter(void **state)
{
	ga_buf bad = {0};
	ga_name_filter *f;
	(void)state;

	f = ga_name_filter_parse("regex\t^(void )?cutlass::\n"
	                         "!glob\ttriton_*\n"
	                         "glob\t*_cublas\n"
	                         "glob\t_ZN2at*\n"
	                         "regex\t(unclosed\n"
	                         "pattern without a kind\n"
	                         "\n"
	                         "regex\tgemm\n",
	                         collect_bad, &bad);
	assert_non_null(f);
	assert_non_null(bad.s);
	assert_non_null(strstr(bad.s, "line 5: the regex does not compile\n"));
	assert_non_null(strstr(bad.s, "line 6 is not glob<TAB>PATTERN or regex<TAB>PATTERN\n"));
	assert_int_equal(strchr(strchr(bad.s, '\n') + 1, '\n')[1], '\0');   /* two messages */
	ga_buf_free(&bad);
	/* regex anywhere, demangled with or without "void " */
	assert_int_equal(ga_name_filter_matches(f, "void cutlass::Kernel2<X>(X::Params)", NULL), 1);
	assert_int_equal(ga_name_filter_matches(f, "cutlass::Kernel2<X>(X::Params)", NULL), 1);
	/* the editable owner's line comes first: kept, though "gemm" matches too */
	assert_int_equal(ga_name_filter_matches(f, "triton_tem_fused_mm_gemm_0", NULL), 0);
	/* globs match whole names only; the mangled one alone is enough */
	assert_int_equal(ga_name_filter_matches(f, "sm90_xmma_gemm_x__5x_cublas", NULL), 1);
	assert_int_equal(ga_name_filter_matches(f, NULL, "_ZN2at6native6kernelEv"), 1);
	assert_int_equal(ga_name_filter_matches(f, "my_at_kernel(float*)", "_Z12my_at_kernelPf"), 0);
	/* no line matches: the user's */
	assert_int_equal(ga_name_filter_matches(f, "copy_strided(float*)", "_Z12copy_stridedPf"), 0);
	assert_int_equal(ga_name_filter_matches(f, NULL, NULL), 0);
	ga_name_filter_free(f);

	assert_int_equal(ga_name_filter_matches(NULL, "cutlass::x", NULL), 0);
	assert_null(ga_name_filter_parse("glob\n\nregex(x)\n", collect_bad, &bad));
	assert_non_null(strstr(bad.s, "line 1 is not"));
	ga_buf_free(&bad);
	assert_null(ga_name_filter_parse("", NULL, NULL));
	ga_name_filter_free(NULL);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_uncoalesced),
		cmocka_unit_test(test_several),
		cmocka_unit_test(test_other_set),
		cmocka_unit_test(test_not_measured),
		cmocka_unit_test(test_one_expression),
		cmocka_unit_test(test_parse_error),
		cmocka_unit_test(test_name_filter),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
