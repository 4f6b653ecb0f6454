/* test_report.c: the text, JSON and Markdown reporters on a hand-built
 * analysis (no rule expressions, no engine): two kernel groups, three
 * findings, one group with a runner-up class and one evidence value NAN.
 * Everything here is SYNTHETIC: device figures, kernel names and values are
 * made up to exercise the reporters, not measured on a GPU. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <jansson.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "report/report.h"

/* ---- the synthetic analysis ----------------------------------------- */

static char *metric_names[] = { "sm__throughput.avg.pct_of_peak_sustained_elapsed" };
static double launch_values[5][1] = { { 40 }, { 41 }, { 42 }, { 90 }, { 91 } };
static ga_launch launches[5];
static ga_profile profile;

static ga_rule rules[3];
static ga_ruleset ruleset;

static ga_evidence ev_f0[2], ev_f1[1], ev_f2[1], ev_g0[2], ev_g1[1];
static ga_finding findings[3];
/* "What to do first": the findings in their order, one shape each. */
static ga_do first_do[3];
static size_t g0_launches[] = { 0, 1, 2 }, g1_launches[] = { 3, 4 };
static size_t g0_findings[] = { 0, 2 }, g1_findings[] = { 1 };
static ga_group groups[2];
static char *notes[] = { "rule fp64-in-fp32: metric smsp__sass_thread_inst_executed_op_dadd_pred_on.sum was not collected" };
static ga_analysis analysis;
static ga_process process;

static void set3(unsigned d[3], unsigned x, unsigned y, unsigned z)
{
	d[0] = x;
	d[1] = y;
	d[2] = z;
}

static void build(void)
{
	memset(&profile, 0, sizeof(profile));
	profile.schema = 1;
	profile.device.name = "NVIDIA H100 80GB HBM3";
	profile.device.chip = "GH100";
	profile.device.cc_major = 9;
	profile.device.cc_minor = 0;
	profile.device.sm_count = 132;
	profile.device.driver_version = 13000;
	profile.collection.mode = "synthetic";
	profile.collection.passes = 3;
	profile.collection.app_status = 0;
	profile.metrics = metric_names;
	profile.n_metrics = 1;
	for (int i = 0; i < 5; i++) {
		ga_launch *l = &launches[i];
		memset(l, 0, sizeof(*l));
		int first = i < 3;
		l->mangled = first ? "_Z12matmul_naivePKfS0_Pfi" : "_Z10reduce_sumPfi";
		l->name = first ? "matmul_naive(float const*, float const*, float*, int)"
		                : "reduce_sum(float*, int)";
		l->pid = 4242;
		l->index = first ? i : 10 + i;
		if (first) {
			set3(l->grid, 256, 1, 1);
			set3(l->block, 256, 1, 1);
			l->duration_ns = 1000000;
		} else {
			set3(l->grid, 1024, 1, 1);
			set3(l->block, 128, 1, 1);
			l->duration_ns = 500000;
		}
		l->values = launch_values[i];
	}
	profile.launches = launches;
	profile.n_launches = profile.cap_launches = 5;

	memset(rules, 0, sizeof(rules));
	rules[0] = (ga_rule){ .id = "uncoalesced-global-access",
		.title = "Uncoalesced global memory access", .klass = GA_CLASS_MEMORY,
		.checklist = 1, .severity = GA_SEV_HIGH, .speedup_min = 2, .speedup_max = 10,
		.fix = "Make consecutive threads of a warp read consecutive addresses, so that "
		       "each warp-wide load touches as few 32-byte sectors as possible. Swap the "
		       "roles of the row and column indices, or stage a tile through shared "
		       "memory and read it back transposed.",
		.example = "// before: thread x walks a column\n"
		           "float v = a[threadIdx.x * n + k];\n"
		           "// after: thread x walks a row\n"
		           "float v = a[k * n + threadIdx.x];\n" };
	rules[1] = (ga_rule){ .id = "warp-divergence", .title = "Divergent branches | masked lanes",
		.klass = GA_CLASS_DIVERGENCE, .checklist = 3, .severity = GA_SEV_MEDIUM,
		.speedup_min = 1.5, .speedup_max = 3,
		.fix = "Move the condition so whole warps take the same side of the branch.",
		.example = "if ((threadIdx.x / 32) % 2) { ... }\n" };
	rules[2] = (ga_rule){ .id = "low-occupancy-registers",
		.title = "Occupancy limited by registers", .klass = GA_CLASS_LATENCY,
		.checklist = 6, .severity = GA_SEV_LOW, .speedup_min = 1.1, .speedup_max = 1.5,
		.fix = "Cap registers with `__launch_bounds__(256, 4)` or __launch_bounds__ "
		       "without backticks, or -maxrregcount.",
		.example = "__global__ void __launch_bounds__(256, 4) k(...)\n" };
	memset(&ruleset, 0, sizeof(ruleset));
	ruleset.rules = rules;
	ruleset.n_rules = ruleset.cap_rules = 3;

	ev_f0[0] = (ga_evidence){ "sectors_per_request", 16 };
	ev_f0[1] = (ga_evidence){ "l1_hit_rate", NAN };
	ev_f1[0] = (ga_evidence){ "warp_efficiency", 12.5 };
	ev_f2[0] = (ga_evidence){ "registers", 128 };
	ev_g0[0] = (ga_evidence){ "sm", 41 };
	ev_g0[1] = (ga_evidence){ "mem", 88.123 };
	ev_g1[0] = (ga_evidence){ "warp_eff", 12.5 };

	/* What the analysis computes: speedup 1 / (1 - estimate), the rule's
	 * range. */
	findings[0] = (ga_finding){ .rule = &rules[0], .group = 0, .estimate = 0.5,
		.saving = 0.375, .speedup = 2, .speedup_min = 2, .speedup_max = 10,
		.evidence = ev_f0, .n_evidence = 2 };
	findings[1] = (ga_finding){ .rule = &rules[1], .group = 1, .estimate = 0.75,
		.saving = 0.1875, .speedup = 4, .speedup_min = 1.5, .speedup_max = 3,
		.evidence = ev_f1, .n_evidence = 1 };
	findings[2] = (ga_finding){ .rule = &rules[2], .group = 0, .estimate = 0.2,
		.saving = 0.15, .speedup = 1.25, .speedup_min = 1.1, .speedup_max = 1.5,
		.evidence = ev_f2, .n_evidence = 1 };

	memset(groups, 0, sizeof(groups));
	ga_group *g = &groups[0];
	g->name = launches[0].name;
	g->mangled = launches[0].mangled;
	g->pid = 4242;
	set3(g->grid, 256, 1, 1);
	set3(g->block, 256, 1, 1);
	g->launches = g0_launches;
	g->n_launches = 3;
	g->total_ns = 3000000;
	g->mean_ns = 1000000;
	g->share = 0.75;
	g->klass = GA_CLASS_MEMORY;
	g->runner_up = GA_CLASS_LATENCY;
	g->scores[GA_CLASS_COMPUTE] = 41;
	g->scores[GA_CLASS_MEMORY] = 88.123;
	g->scores[GA_CLASS_LATENCY] = 80;
	g->scores[GA_CLASS_DIVERGENCE] = NAN;
	g->class_evidence = ev_g0;
	g->n_class_evidence = 2;
	g->class_note = "memory: mem > 60 and sm < 40 held";
	g->findings = g0_findings;
	g->n_findings = 2;

	g = &groups[1];
	g->name = launches[3].name;
	g->mangled = launches[3].mangled;
	g->pid = 4242;
	set3(g->grid, 1024, 1, 1);
	set3(g->block, 128, 1, 1);
	g->launches = g1_launches;
	g->n_launches = 2;
	g->total_ns = 1000000;
	g->mean_ns = 500000;
	g->share = 0.25;
	g->klass = GA_CLASS_DIVERGENCE;
	g->runner_up = GA_CLASS_NONE;
	g->scores[GA_CLASS_COMPUTE] = 90;
	g->scores[GA_CLASS_MEMORY] = 10;
	g->scores[GA_CLASS_LATENCY] = 5;
	g->scores[GA_CLASS_DIVERGENCE] = 87.5;
	g->class_evidence = ev_g1;
	g->n_class_evidence = 1;
	g->class_note = "divergence: warp_eff < 70 held";
	g->findings = g1_findings;
	g->n_findings = 1;

	memset(&analysis, 0, sizeof(analysis));
	analysis.profile = &profile;
	analysis.groups = groups;
	analysis.n_groups = 2;
	analysis.findings = findings;
	analysis.n_findings = 3;
	for (size_t i = 0; i < 3; i++)
		first_do[i] = (ga_do){ .kind = GA_DO_FINDING, .index = i, .saving = findings[i].saving,
		                       .on_shapes = 1 };
	analysis.first = first_do;
	analysis.n_first = 3;
	analysis.total_ns = 4000000;
	analysis.notes = notes;
	analysis.n_notes = 1;
	analysis.n_launches = 5;
	analysis.n_class[GA_CLASS_MEMORY] = 1;
	analysis.n_class[GA_CLASS_DIVERGENCE] = 1;
	process = (ga_process){ .pid = 4242, .n_kernels = 2, .n_launches = 5,
	                        .total_ns = 4000000, .share = 1 };
	analysis.processes = &process;
	analysis.n_processes = 1;
}

static int setup(void **state)
{
	(void)state;
	build();
	return 0;
}

/* ---- helpers ----------------------------------------------------------- */

typedef int (*writer)(FILE *, const ga_analysis *, const ga_ruleset *, const ga_report_opts *);

static char *render(writer w, const ga_analysis *a, const ga_report_opts *o)
{
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);
	assert_non_null(f);
	assert_int_equal(w(f, a, &ruleset, o), 0);
	assert_int_equal(fclose(f), 0);
	assert_non_null(buf);
	return buf;
}

/* Display columns of one line (UTF-8 code points). */
static size_t columns(const char *s, size_t n)
{
	size_t w = 0;
	for (size_t i = 0; i < n; i++)
		if (((unsigned char)s[i] & 0xc0) != 0x80)
			w++;
	return w;
}

/* Every line fits in width, unless it holds a single unbreakable token. */
static void assert_fits(const char *text, size_t width)
{
	const char *p = text;
	while (*p) {
		const char *e = strchr(p, '\n');
		size_t n = e ? (size_t)(e - p) : strlen(p);
		if (columns(p, n) > width) {
			const char *t = p;
			while (*t == ' ')
				t++;
			if (memchr(t, ' ', n - (size_t)(t - p))) {
				fprintf(stderr, "line over %zu columns: %.*s\n", width, (int)n, p);
				fail();
			}
		}
		if (!e)
			break;
		p = e + 1;
	}
}

/* ---- formatting helpers ----------------------------------------------- */

static void test_fmt_duration(void **state)
{
	(void)state;
	char b[32];
	assert_string_equal(ga_fmt_duration(850, b, sizeof(b)), "850 ns");
	assert_string_equal(ga_fmt_duration(12345, b, sizeof(b)), "12.3 us");
	assert_string_equal(ga_fmt_duration(4.56e6, b, sizeof(b)), "4.56 ms");
	assert_string_equal(ga_fmt_duration(1.234e9, b, sizeof(b)), "1.23 s");
	assert_string_equal(ga_fmt_duration(0, b, sizeof(b)), "0 ns");
	assert_string_equal(ga_fmt_duration(999.7, b, sizeof(b)), "1.00 us");
	assert_string_equal(ga_fmt_duration(999960, b, sizeof(b)), "1.00 ms");
	assert_string_equal(ga_fmt_duration(3600e9, b, sizeof(b)), "3600 s");
	assert_string_equal(ga_fmt_duration(NAN, b, sizeof(b)), "n/a");
}

static void test_fmt_numbers(void **state)
{
	(void)state;
	char b[32];
	assert_string_equal(ga_fmt_value(16, b, sizeof(b)), "16");
	assert_string_equal(ga_fmt_value(0.375, b, sizeof(b)), "0.375");
	assert_string_equal(ga_fmt_value(88.123, b, sizeof(b)), "88.1");
	assert_string_equal(ga_fmt_value(1234.4, b, sizeof(b)), "1234");
	assert_string_equal(ga_fmt_value(0, b, sizeof(b)), "0");
	assert_string_equal(ga_fmt_value(2.5e10, b, sizeof(b)), "2.5e+10");
	assert_string_equal(ga_fmt_value(NAN, b, sizeof(b)), "n/a");
	assert_string_equal(ga_fmt_pct(0.375, 0, b, sizeof(b)), "38");
	assert_string_equal(ga_fmt_pct(0.1875, 0, b, sizeof(b)), "19");
	assert_string_equal(ga_fmt_pct(0.75, 1, b, sizeof(b)), "75.0");
	assert_string_equal(ga_fmt_pct(0.001, 0, b, sizeof(b)), "<1");
	assert_string_equal(ga_fmt_pct(0, 0, b, sizeof(b)), "0");
	assert_string_equal(ga_fmt_speedup(ga_estimate_speedup(0.75), b, sizeof(b)), "4.0x");
	assert_string_equal(ga_fmt_speedup(ga_estimate_speedup(0.95), b, sizeof(b)), "20x");
	assert_string_equal(ga_fmt_speedup(ga_estimate_speedup(1), b, sizeof(b)), ">100x");
	assert_string_equal(ga_fmt_speedup(ga_estimate_speedup(NAN), b, sizeof(b)), "n/a");
	assert_string_equal(ga_fmt_speedup_range(2, 10, b, sizeof(b)), "2-10x");
	assert_string_equal(ga_fmt_speedup_range(1.5, 1.5, b, sizeof(b)), "1.5x");
}

static void test_short_name(void **state)
{
	(void)state;
	char *s = ga_short_name("k(int)", 20);
	assert_string_equal(s, "k(int)");
	free(s);
	static const char gemm[] = "void gemm<float, 128>(float const*, float const*, float*, int, int)";
	s = ga_short_name(gemm, 70);
	assert_string_equal(s, gemm);
	free(s);
	s = ga_short_name(gemm, 64);
	assert_string_equal(s, gemm + 5);
	free(s);
	s = ga_short_name(gemm, 30);
	assert_string_equal(s, "gemm<float, 128>(\xe2\x80\xa6)");
	assert_int_equal(ga_text_width(s), 19);
	free(s);
	s = ga_short_name(gemm, 12);
	assert_string_equal(s, "gemm<\xe2\x80\xa6>(\xe2\x80\xa6)");
	free(s);
	s = ga_short_name(gemm, 8);
	assert_string_equal(s, "gemm<fl\xe2\x80\xa6");
	free(s);
	s = ga_short_name("abcdefghijklmnopqrstuvwxyz", 10);
	assert_string_equal(s, "abcdefghi\xe2\x80\xa6");
	free(s);
	s = ga_short_name("(anonymous namespace)::kern(int, int)", 30);
	assert_string_equal(s, "(anonymous namespace)::kern(\xe2\x80\xa6)");
	free(s);
	assert_int_equal(ga_text_width("\033[1;31mhigh\033[0m"), 4);
}

static void test_reporter_table(void **state)
{
	(void)state;
	assert_int_equal(ga_n_reporters, 6);
	assert_ptr_equal(ga_reporter_find("text")->write, ga_report_text);
	assert_ptr_equal(ga_reporter_find("json")->write, ga_report_json);
	assert_ptr_equal(ga_reporter_find("markdown")->write, ga_report_markdown);
	assert_ptr_equal(ga_reporter_find("junit")->write, ga_report_junit);
	assert_ptr_equal(ga_reporter_find("html")->write, ga_report_html);
	assert_ptr_equal(ga_reporter_find("sarif")->write, ga_report_sarif);
	assert_ptr_equal(ga_reporter_find("md"), ga_reporter_find("markdown"));
	assert_null(ga_reporter_find("csv"));
	assert_null(ga_reporter_find(NULL));
}

/* ---- text -------------------------------------------------------------- */

static void test_text_plain(void **state)
{
	(void)state;
	ga_report_opts o = { .width = 80 };
	char *out = render(ga_report_text, &analysis, &o);

	/* Header */
	assert_true(ga_str_has_prefix(out,
		"NVIDIA H100 80GB HBM3 (GH100, 132 SMs, CC 9.0), driver 13.0\n"
		"2 kernels, 5 launches profiled, 4.00 ms GPU time; 1 metric in 3 passes\n"));

	/* Ranked: first before second before third, all in "What to do first",
	 * which comes before "Kernels". */
	const char *top = strstr(out, "What to do first\n");
	const char *kern = strstr(out, "\nKernels\n");
	assert_non_null(top);
	assert_non_null(kern);
	const char *t1 = strstr(top, " 1. matmul_naive(\xe2\x80\xa6): Uncoalesced global memory access");
	const char *t2 = strstr(top, " 2. reduce_sum(float*, int): Divergent branches | masked lanes");
	const char *t3 = strstr(top, " 3. matmul_naive(\xe2\x80\xa6): Occupancy limited by registers");
	assert_non_null(t1);
	assert_non_null(t2);
	assert_non_null(t3);
	assert_true(t1 < t2 && t2 < t3 && t3 < kern);

	/* Savings, speedups, evidence with NAN */
	assert_non_null(strstr(t1, "    [high] saves ~38% of GPU time, estimated 2.0x, fix 2-10x; "
	                           "memory-bound\n"));
	assert_non_null(strstr(t1, "evidence: sectors_per_request = 16, l1_hit_rate = n/a"));
	assert_non_null(strstr(t2, "    [medium] saves ~19% of GPU time, estimated 4.0x, fix 1.5-3x;\n"
	                           "      divergence-bound\n"));

	/* Kernel blocks: short, one line per finding by rule id */
	const char *k1 = strstr(kern, "matmul_naive(float const*, float const*, float*, int) [memory]\n");
	const char *k2 = strstr(kern, "reduce_sum(float*, int) [divergence]\n");
	const char *fix = strstr(out, "\nHow to fix\n----------\n");
	assert_non_null(k1);
	assert_non_null(k2);
	assert_non_null(fix);
	assert_true(k1 < k2 && k2 < fix);
	assert_non_null(strstr(k1, "  75.0% of GPU time, 3 launches, mean 1.00 ms, grid 256x1x1, "
	                           "block 256x1x1\n"
	                           "  evidence: sm = 41, mem = 88.1; runner-up latency\n"));
	assert_null(strstr(k2, "runner-up"));
	assert_non_null(strstr(k1, "  [high] uncoalesced-global-access: saves ~38%, estimated 2.0x, fix 2-10x\n"));
	/* group 0 lists its findings in rank order */
	assert_true(strstr(k1, "[high]") < strstr(k1, "[low]"));
	/* Each rule's fix and example once, under How to fix */
	assert_true(strstr(out, "Make consecutive threads") > fix);
	assert_null(strstr(strstr(out, "Make consecutive threads") + 1, "Make consecutive threads"));
	assert_non_null(strstr(fix, "\nuncoalesced-global-access: Uncoalesced global memory access\n"
	                            "  Make consecutive threads"));
	assert_non_null(strstr(fix, "\n        float v = a[threadIdx.x * n + k];\n"));

	/* Not verbose: no notes, no class note, no per-launch list */
	assert_null(strstr(out, "Notes\n"));
	assert_null(strstr(out, "why:"));
	assert_null(strstr(out, "launches:\n"));
	assert_null(strstr(out, "\033["));
	assert_fits(out, 80);
	free(out);
}

/* --verbose: the full kernel blocks, each finding with its fix and example,
 * and no How to fix. */
static void test_text_verbose_blocks(void **state)
{
	(void)state;
	ga_report_opts o = { .width = 80, .verbose = 1 };
	char *out = render(ga_report_text, &analysis, &o);
	const char *kern = strstr(out, "\nKernels\n");
	const char *t1 = strstr(out, " 1. matmul_naive(\xe2\x80\xa6): Uncoalesced global memory access");
	assert_non_null(t1);
	assert_non_null(strstr(t1, "saves ~38% of total GPU time; memory-bound kernel, high severity"));
	assert_non_null(strstr(t1, "expected 2-10x from the fix, estimated 2.0x on this kernel"));
	const char *k1 = strstr(kern, "matmul_naive(float const*, float const*, float*, int) [memory]\n");
	const char *k2 = strstr(kern, "reduce_sum(float*, int) [divergence]\n");
	assert_non_null(k1);
	assert_non_null(k2);
	assert_non_null(strstr(k1, "  75.0% of GPU time, 3 launches, mean 1.00 ms, total 3.00 ms\n"
	                           "  grid 256x1x1, block 256x1x1\n"));
	assert_non_null(strstr(k1, "  runner-up: latency (close call)\n"));
	assert_non_null(strstr(k1, "  [high] Uncoalesced global memory access \xe2\x80\x94 saves ~50% of this kernel\n"));
	assert_non_null(strstr(k2, "  [medium] Divergent branches | masked lanes \xe2\x80\x94 saves ~75% of this kernel\n"));
	/* Fix wrapped at 4, example verbatim at 8 */
	assert_non_null(strstr(k1, "\n    Make consecutive threads"));
	assert_non_null(strstr(k1, "\n        float v = a[threadIdx.x * n + k];\n"));
	assert_null(strstr(out, "\nHow to fix\n"));
	free(out);
}

/* Kernels whose names read the same once shortened: "#n" from the
 * analysis (ga_group.name_index) in the top list and the kernel blocks. */
static void test_text_same_short_name(void **state)
{
	(void)state;
	ga_group g[2];
	memcpy(g, groups, sizeof(g));
	ga_analysis a = analysis;
	a.groups = g;
	g[1].name = g[0].name;
	g[0].name_index = 1;
	g[1].name_index = 2;
	g[0].name_peers = g[1].name_peers = 2;
	ga_report_opts o = { .width = 80 };
	char *out = render(ga_report_text, &a, &o);
	assert_non_null(strstr(out, " 1. matmul_naive(\xe2\x80\xa6) #1: Uncoalesced"));
	assert_non_null(strstr(out, " 2. matmul_naive(\xe2\x80\xa6) #2: Divergent"));
	assert_non_null(strstr(out, "\nmatmul_naive(float const*, float const*, float*, int) #1 [memory]\n"));
	assert_non_null(strstr(out, "\nmatmul_naive(float const*, float const*, float*, int) #2 [divergence]\n"));
	assert_fits(out, 80);
	free(out);
}

static void test_text_narrow_and_long_names(void **state)
{
	(void)state;
	char *longname = "void cutlass::Kernel<cutlass::gemm::kernel::GemmUniversal<float, 128, 256, "
	                 "64>>(cutlass::gemm::kernel::GemmUniversal<float, 128, 256, 64>::Params)";
	groups[0].name = longname;
	for (int w = 40; w <= 100; w += 20) {
		ga_report_opts o = { .width = w, .verbose = 1, .per_launch = 1 };
		if (w == 40) {
			/* Code examples are never wrapped; these are wider than 40. */
			for (size_t i = 0; i < ruleset.n_rules; i++)
				rules[i].example = NULL;
		}
		char *out = render(ga_report_text, &analysis, &o);
		assert_fits(out, (size_t)w);
		/* Shortened with an ellipsis in the top list and in the kernel's
		 * heading, which is followed by the full name. */
		const char *kern = strstr(out, "\nKernels\n");
		const char *ell = strstr(out, "\xe2\x80\xa6");
		assert_true(ell && ell < kern);
		assert_non_null(strstr(kern, "\ncutlass::Kernel<"));
		assert_non_null(strstr(kern, "(\xe2\x80\xa6) [memory]\n  full name: void"));
		assert_non_null(strstr(kern, "\nreduce_sum(float*, int) [divergence]\n  25.0%"));
		free(out);
	}
}

static void test_text_color(void **state)
{
	(void)state;
	ga_report_opts o = { .width = 80, .color = 1 };
	char *out = render(ga_report_text, &analysis, &o);
	assert_non_null(strstr(out, "\033["));
	assert_non_null(strstr(out, "[\033[1;31mhigh\033[0m]"));
	assert_non_null(strstr(out, " [\033[33mmemory\033[0m]"));
	free(out);
}

static void test_text_verbose(void **state)
{
	(void)state;
	ga_report_opts o = { .width = 80, .verbose = 1, .per_launch = 1 };
	char *out = render(ga_report_text, &analysis, &o);
	const char *n = strstr(out, "\nNotes\n-----\n- rule fp64-in-fp32: metric");
	assert_non_null(n);
	assert_null(strstr(n + 1, "Kernels\n"));
	assert_non_null(strstr(out, "  why: memory: mem > 60 and sm < 40 held\n"));
	assert_non_null(strstr(out, "  launches:\n"
	                            "    #0  pid 4242  1.00 ms  grid 256x1x1  block 256x1x1\n"
	                            "    #1  pid 4242  1.00 ms  grid 256x1x1  block 256x1x1\n"));
	assert_non_null(strstr(out, "    #14  pid 4242  500 us  grid 1024x1x1  block 128x1x1\n"));
	assert_fits(out, 80);
	free(out);
}

static void test_text_top_five(void **state)
{
	(void)state;
	/* Seven findings: five in the top list unless verbose. */
	ga_finding many[7];
	size_t idx[7];
	ga_do many_first[7];
	for (int i = 0; i < 7; i++) {
		many[i] = findings[i % 3];
		many[i].group = 0;
		many[i].saving = 0.3 - 0.01 * i;
		idx[i] = (size_t)i;
		many_first[i] = (ga_do){ .kind = GA_DO_FINDING, .index = (size_t)i,
		                         .saving = many[i].saving, .on_shapes = 1 };
	}
	ga_analysis a = analysis;
	ga_group g[2];
	memcpy(g, groups, sizeof(g));
	g[0].findings = idx;
	g[0].n_findings = 7;
	g[1].findings = NULL;
	g[1].n_findings = 0;
	a.groups = g;
	a.findings = many;
	a.n_findings = 7;
	a.first = many_first;
	a.n_first = 7;

	ga_report_opts o = { .width = 80 };
	char *out = render(ga_report_text, &a, &o);
	const char *kern = strstr(out, "\nKernels\n");
	const char *five = strstr(out, "\n 5. ");
	assert_non_null(five);
	assert_true(five < kern);
	const char *six = strstr(out, "\n 6. ");
	assert_true(six == NULL || six > kern);
	assert_non_null(strstr(out, "2 more findings under Kernels below"));
	assert_non_null(strstr(kern, "reduce_sum(float*, int) [divergence]\n"));
	assert_non_null(strstr(kern, "  no findings\n"));
	free(out);

	o.verbose = 1;
	out = render(ga_report_text, &a, &o);
	kern = strstr(out, "\nKernels\n");
	assert_true(strstr(out, "\n 7. ") < kern);
	assert_null(strstr(out, "more findings"));
	free(out);
}

static void test_text_no_findings_recorded_incomplete(void **state)
{
	(void)state;
	ga_analysis a = analysis;
	ga_group g[2];
	memcpy(g, groups, sizeof(g));
	g[0].n_findings = g[1].n_findings = 0;
	a.groups = g;
	a.n_findings = 0;
	a.n_first = 0;
	profile.collection.incomplete = 1;
	profile.collection.note = "the application was killed by SIGKILL after 3 of 5 kernels";

	ga_report_opts o = { .width = 80,
		.recorded_label = "recorded on NVIDIA H200 (GH100), 2025-06-01; committed test data" };
	char *out = render(ga_report_text, &a, &o);
	assert_non_null(strstr(out, "What to do first\n----------------\n"
	                            "No findings: every kernel is below the rules' thresholds.\n"));
	assert_non_null(strstr(out,
		"\n+--------------------------------------------------------------------------+\n"
		"| RECORDED PROFILE: recorded on NVIDIA H200 (GH100), 2025-06-01; committed |\n"
		"| test data                                                                |\n"
		"+--------------------------------------------------------------------------+\n"));
	assert_non_null(strstr(out, "warning: incomplete profile, results so far only: the application"));
	assert_non_null(strstr(out, "SIGKILL after 3 of 5 kernels\n"));
	assert_fits(out, 80);
	free(out);

	/* The JSON and Markdown reports say so too. */
	out = render(ga_report_markdown, &a, &o);
	assert_non_null(strstr(out, "No findings: every kernel is below the rules' thresholds."));
	assert_non_null(strstr(out, "> **Recorded profile:** "));
	assert_non_null(strstr(out, "> **Warning:** incomplete profile"));
	assert_null(strstr(out, "<details>"));
	free(out);
	out = render(ga_report_json, &a, &o);
	json_error_t je;
	json_t *root = json_loads(out, 0, &je);
	assert_non_null(root);
	json_t *s = json_object_get(root, "summary");
	assert_true(json_is_null(json_object_get(s, "max_severity")));
	assert_true(json_is_null(json_object_get(s, "top_finding")));
	assert_int_equal(json_array_size(json_object_get(root, "findings")), 0);
	json_decref(root);
	free(out);

	profile.collection.incomplete = 0;
	profile.collection.note = NULL;
}

static void test_text_deterministic(void **state)
{
	(void)state;
	ga_report_opts o = { .width = 80, .verbose = 1, .per_launch = 1 };
	char *a = render(ga_report_text, &analysis, &o);
	char *b = render(ga_report_text, &analysis, &o);
	assert_string_equal(a, b);
	free(a);
	free(b);
}

/* ---- JSON -------------------------------------------------------------- */

static double real(json_t *o, const char *key)
{
	json_t *v = json_object_get(o, key);
	assert_true(json_is_number(v));
	return json_number_value(v);
}

static void test_json(void **state)
{
	(void)state;
	ga_report_opts o = { 0 };
	char *out = render(ga_report_json, &analysis, &o);
	size_t len = strlen(out);
	assert_true(len > 2 && out[len - 1] == '\n' && out[len - 2] == '}');
	/* Keys in a fixed order */
	const char *kf = strstr(out, "\"format\""), *ks = strstr(out, "\"schema\""),
	           *kp = strstr(out, "\"profile\""), *kk = strstr(out, "\"kernels\""),
	           *kfi = strstr(out, "\n  \"findings\""), *ksu = strstr(out, "\"summary\""),
	           *kn = strstr(out, "\"notes\"");
	assert_true(kf && ks && kp && kk && kfi && ksu && kn);
	assert_true(kf < ks && ks < kp && kp < kk && kk < kfi && kfi < ksu && ksu < kn);

	json_error_t je;
	json_t *root = json_loads(out, 0, &je);
	if (!root)
		fprintf(stderr, "%d:%d: %s\n", je.line, je.column, je.text);
	assert_non_null(root);
	assert_string_equal(json_string_value(json_object_get(root, "format")), "gpuadvise-report");
	assert_int_equal(json_integer_value(json_object_get(root, "schema")), 1);
	assert_true(json_is_object(json_object_get(root, "profile")));

	json_t *fs = json_object_get(root, "findings");
	assert_int_equal(json_array_size(fs), 3);
	static const char *ids[] = { "uncoalesced-global-access", "warp-divergence",
	                             "low-occupancy-registers" };
	for (size_t i = 0; i < 3; i++) {
		json_t *f = json_array_get(fs, i);
		assert_int_equal(json_integer_value(json_object_get(f, "rank")), (json_int_t)i + 1);
		assert_string_equal(json_string_value(json_object_get(f, "rule")), ids[i]);
	}
	json_t *f0 = json_array_get(fs, 0), *f1 = json_array_get(fs, 1);
	assert_string_equal(json_string_value(json_object_get(f0, "title")),
	                    "Uncoalesced global memory access");
	assert_string_equal(json_string_value(json_object_get(f0, "class")), "memory");
	assert_string_equal(json_string_value(json_object_get(f0, "severity")), "high");
	assert_int_equal(json_integer_value(json_object_get(f0, "checklist")), 1);
	assert_int_equal(json_integer_value(json_object_get(f0, "kernel")), 0);
	assert_string_equal(json_string_value(json_object_get(f0, "kernel_name")),
	                    "matmul_naive(float const*, float const*, float*, int)");
	assert_true(real(f0, "estimate") == 0.5);
	assert_true(real(f0, "saving") == 0.375);
	assert_true(real(f0, "estimated_speedup") == 2.0);
	json_t *range = json_object_get(f0, "expected_speedup");
	assert_int_equal(json_array_size(range), 2);
	assert_true(json_number_value(json_array_get(range, 0)) == 2);
	assert_true(json_number_value(json_array_get(range, 1)) == 10);
	json_t *ev = json_object_get(f0, "evidence");
	assert_true(json_number_value(json_object_get(ev, "sectors_per_request")) == 16);
	assert_true(json_is_null(json_object_get(ev, "l1_hit_rate")));
	assert_true(ga_str_has_prefix(json_string_value(json_object_get(f0, "fix")),
	                              "Make consecutive threads"));
	assert_true(real(f1, "estimated_speedup") == 4.0);
	assert_int_equal(json_integer_value(json_object_get(f1, "kernel")), 1);

	json_t *kern = json_object_get(root, "kernels");
	assert_int_equal(json_array_size(kern), 2);
	json_t *k0 = json_array_get(kern, 0), *k1 = json_array_get(kern, 1);
	assert_string_equal(json_string_value(json_object_get(k0, "mangled")),
	                    "_Z12matmul_naivePKfS0_Pfi");
	assert_int_equal(json_integer_value(json_object_get(k0, "pid")), 4242);
	assert_int_equal(json_integer_value(json_array_get(json_object_get(k0, "grid"), 0)), 256);
	assert_int_equal(json_integer_value(json_array_get(json_object_get(k1, "block"), 0)), 128);
	assert_int_equal(json_integer_value(json_object_get(k0, "launches")), 3);
	json_t *li = json_object_get(k1, "launch_indices");
	assert_int_equal(json_array_size(li), 2);
	assert_int_equal(json_integer_value(json_array_get(li, 0)), 3);
	assert_true(real(k0, "total_ns") == 3e6);
	assert_true(real(k0, "mean_ns") == 1e6);
	assert_true(real(k0, "share") == 0.75);
	assert_string_equal(json_string_value(json_object_get(k0, "class")), "memory");
	assert_string_equal(json_string_value(json_object_get(k0, "runner_up")), "latency");
	assert_true(json_is_null(json_object_get(k1, "runner_up")));
	json_t *sc = json_object_get(k0, "scores");
	assert_true(json_number_value(json_object_get(sc, "memory")) == 88.123);
	assert_true(json_is_null(json_object_get(sc, "divergence")));
	assert_true(json_number_value(json_object_get(json_object_get(k0, "evidence"), "sm")) == 41);
	json_t *kf0 = json_object_get(k0, "findings");
	assert_int_equal(json_array_size(kf0), 2);
	assert_int_equal(json_integer_value(json_array_get(kf0, 0)), 0);
	assert_int_equal(json_integer_value(json_array_get(kf0, 1)), 2);

	json_t *s = json_object_get(root, "summary");
	assert_int_equal(json_integer_value(json_object_get(s, "kernels")), 2);
	assert_int_equal(json_integer_value(json_object_get(s, "launches")), 5);
	assert_true(real(s, "total_gpu_ns") == 4e6);
	json_t *cl = json_object_get(s, "classes");
	assert_int_equal(json_object_size(cl), 4);
	assert_int_equal(json_integer_value(json_object_get(cl, "memory")), 1);
	assert_int_equal(json_integer_value(json_object_get(cl, "divergence")), 1);
	assert_int_equal(json_integer_value(json_object_get(cl, "compute")), 0);
	assert_string_equal(json_string_value(json_object_get(s, "max_severity")), "high");
	assert_string_equal(json_string_value(json_object_get(s, "top_finding")),
	                    "uncoalesced-global-access");
	json_t *notes_j = json_object_get(root, "notes");
	assert_int_equal(json_array_size(notes_j), 1);

	/* No NaN anywhere (JSON has none). */
	assert_null(strstr(out, "nan"));
	assert_null(strstr(out, "NaN"));
	json_decref(root);
	free(out);
}

/* ---- Markdown ---------------------------------------------------------- */

static void test_markdown(void **state)
{
	(void)state;
	ga_report_opts o = { 0 };
	char *out = render(ga_report_markdown, &analysis, &o);

	assert_true(ga_str_has_prefix(out, "### gpuadvise: NVIDIA H100 80GB HBM3\n\n"));
	assert_non_null(strstr(out, "**3 findings** in 2 kernels (5 launches, 4.00 ms of GPU time). "
	                            "Do first: **Uncoalesced global memory access** in "
	                            "`matmul_naive(float const*, float const*, float*, int)`, "
	                            "saving ~38% of GPU time.\n"));
	const char *ft = strstr(out, "| # | Kernel | Class | Finding | Saves (of total GPU time) | Expected speedup |\n|--:|");
	const char *kt = strstr(out, "| Kernel | Class | % time | Mean time | Launches | Top finding |\n|---");
	assert_non_null(ft);
	assert_non_null(kt);
	assert_true(ft < kt);
	const char *r1 = strstr(ft, "| 1 | `matmul_naive(float const*, float const*, float*, int)` | memory | "
	                            "Uncoalesced global memory access (high) | 38% | 2-10x |\n");
	const char *r2 = strstr(ft, "| 2 | `reduce_sum(float*, int)` | divergence | "
	                            "Divergent branches \\| masked lanes (medium) | 19% | 1.5-3x |\n");
	assert_non_null(r1);
	assert_non_null(r2);
	assert_true(r1 < r2 && r2 < kt);
	assert_non_null(strstr(kt, "| `reduce_sum(float*, int)` | divergence | 25.0% | 500 us | 2 | "
	                           "Divergent branches \\| masked lanes |\n"));
	/* No unescaped '|' inside a cell: every table row has the column count. */
	for (const char *l = ft; l && *l == '|'; l = strchr(l, '\n') ? strchr(l, '\n') + 1 : NULL) {
		int bars = 0;
		for (const char *c = l; *c && *c != '\n'; c++)
			if (*c == '|' && (c == l || c[-1] != '\\'))
				bars++;
		assert_int_equal(bars, 7);
	}

	const char *d = strstr(out, "<details>\n<summary>How to fix the top 3 findings</summary>\n");
	assert_non_null(d);
	assert_non_null(strstr(d, "**1. Uncoalesced global memory access** in `matmul_naive"));
	assert_non_null(strstr(d, "\n```cuda\n// before: thread x walks a column\n"));
	assert_non_null(strstr(d, "**3. Occupancy limited by registers**"));
	/* Code spans kept, other underscores escaped so they do not turn bold */
	assert_non_null(strstr(d, "Cap registers with `__launch_bounds__(256, 4)` or "
	                          "\\_\\_launch\\_bounds\\_\\_ without backticks"));
	assert_non_null(strstr(d, "</details>\n"));
	assert_null(strstr(out, "\033["));
	free(out);

	/* A kernel name with '|' is escaped inside its code span; a title keeps
	 * its code spans, escapes '|' in and out of them and a lone backtick. */
	groups[1].name = "apply<op_or|op_and>(int*)";
	rules[2].title = "Loads of `a|b` | `int*` and a stray ` tick";
	out = render(ga_report_markdown, &analysis, &o);
	assert_non_null(strstr(out, "| `apply<op_or\\|op_and>(int*)` | divergence |"));
	assert_non_null(strstr(out, "| Loads of `a\\|b` \\| `int*` and a stray \\` tick (low) |"));
	free(out);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_fmt_duration),
		cmocka_unit_test(test_fmt_numbers),
		cmocka_unit_test(test_short_name),
		cmocka_unit_test(test_reporter_table),
		cmocka_unit_test_setup(test_text_plain, setup),
		cmocka_unit_test_setup(test_text_verbose_blocks, setup),
		cmocka_unit_test_setup(test_text_same_short_name, setup),
		cmocka_unit_test_setup(test_text_narrow_and_long_names, setup),
		cmocka_unit_test_setup(test_text_color, setup),
		cmocka_unit_test_setup(test_text_verbose, setup),
		cmocka_unit_test_setup(test_text_top_five, setup),
		cmocka_unit_test_setup(test_text_no_findings_recorded_incomplete, setup),
		cmocka_unit_test_setup(test_text_deterministic, setup),
		cmocka_unit_test_setup(test_json, setup),
		cmocka_unit_test_setup(test_markdown, setup),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
