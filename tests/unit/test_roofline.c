/* test_roofline.c: the roofline model on a synthetic profile with known
 * FLOP, bytes, durations and peaks; NaN handling; fallback peaks. */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "analyze/analyze.h"
#include "report/report.h"

#define SASS(op) "sm__sass_thread_inst_executed_op_" op "_pred_on.sum"
#define REL(a, b) assert_true(fabs((double)(a) - (double)(b)) <= 1e-9 * fabs((double)(b)))

enum { K_MEM, K_CMP, K_LAT, K_NAN, K_CMEM, N_K };

static ga_profile prof;
static ga_group groups[N_K];
static size_t launch_idx[N_K];
static ga_analysis an;
/* The shipped classifier's cut-offs: 40 % and 10 %. */
static const ga_roof_cuts cuts = { .latency_frac = 0.4, .tensor_min_pct = 10 };

static void set(size_t launch, const char *metric, double v)
{
	size_t m = ga_profile_add_metric(&prof, metric);
	prof.launches[launch].values[m] = v;
}

/* One launch per kernel: 1 ms, the given FP32 FMA and FP64 add counts and
 * DRAM bytes; all other FLOP counts zero. */
static void kernel(size_t i, ga_class klass, double ffma, double dadd, double dram, int peaks)
{
	static const char *const zero[] = { SASS("fadd"), SASS("fmul"), SASS("dmul"), SASS("dfma"),
	                                    SASS("hadd"), SASS("hmul"), SASS("hfma") };
	ga_launch *l = ga_profile_add_launch(&prof);
	l->duration_ns = 1e6;
	l->occ_theoretical_pct = 75;
	l->occ_limit_blocks = 16;
	l->occ_limit_warps = 12;
	l->occ_limit_registers = 6;
	l->occ_limit_smem = 8;
	set(i, "gpu__time_duration.sum", 1e6);
	set(i, SASS("ffma"), ffma);
	set(i, SASS("dadd"), dadd);
	for (size_t z = 0; z < GA_ARRAY_LEN(zero); z++)
		set(i, zero[z], isnan(ffma) ? NAN : 0);
	set(i, "dram__bytes.sum", dram);
	set(i, "sm__pipe_tensor_cycles_active.avg.pct_of_peak_sustained_active", 0);
	set(i, "sm__warps_active.avg.pct_of_peak_sustained_active", 50);
	if (peaks) {
		set(i, "dram__bytes.sum.peak_sustained", 2000);          /* x 1 GHz = 2 TB/s */
		set(i, "dram__cycles_elapsed.avg.per_second", 1e9);
		set(i, SASS("ffma") ".peak_sustained", 12800);           /* 25.6 TFLOP/s */
		set(i, SASS("dfma") ".peak_sustained", 6400);            /* 12.8 TFLOP/s */
		set(i, "sm__cycles_elapsed.avg.per_second", 1e9);
	}
	launch_idx[i] = i;
	groups[i] = (ga_group){ .name = "k", .n_launches = 1, .launches = &launch_idx[i],
	                        .mean_ns = 1e6, .total_ns = 1e6, .klass = klass };
}

static void build(int peaks)
{
	ga_profile_init(&prof);
	prof.device.cc_major = 9;
	prof.device.cc_minor = 0;
	prof.device.sm_count = 100;
	prof.device.sm_clock_mhz = 1000;
	prof.device.mem_bandwidth_gbs = 1000;
	kernel(K_MEM, GA_CLASS_MEMORY, 1e9, 0, 1e9, peaks);   /* 2 TFLOP/s, 1 TB/s: I = 2 */
	kernel(K_CMP, GA_CLASS_COMPUTE, 1e10, 0, 1e8, peaks); /* 20 TFLOP/s, I = 200 */
	kernel(K_LAT, GA_CLASS_LATENCY, 0, 1e6, 1e3, peaks);  /* 1 GFLOP/s FP64 */
	kernel(K_NAN, GA_CLASS_MEMORY, NAN, NAN, 1e9, peaks);
	kernel(K_CMEM, GA_CLASS_COMPUTE, 1e9, 0, 1e9, peaks); /* like K_MEM, class compute */
	for (size_t i = 0; i < N_K; i++)
		groups[i].values = prof.launches[i].values;  /* after the last metric */
	an = (ga_analysis){ .profile = &prof, .groups = groups, .n_groups = N_K };
}

static int teardown(void **state)
{
	(void)state;
	ga_profile_free(&prof);
	return 0;
}

static void test_placed(void **state)
{
	ga_roofline r;
	(void)state;
	build(1);
	ga_roofline_compute(&an, &cuts, &r);
	REL(r.peaks.flops[GA_ROOF_FP32], 25.6e12);
	assert_int_equal(r.peaks.flops_src[GA_ROOF_FP32], GA_PEAK_COUNTERS);
	REL(r.peaks.flops[GA_ROOF_FP64], 12.8e12);
	REL(r.peaks.bw[GA_ROOF_DRAM], 2e12);
	assert_int_equal(r.peaks.bw_src[GA_ROOF_DRAM], GA_PEAK_COUNTERS);
	/* No FP16 peak counter: the table (512 FLOP/clk/SM on CC 9.0). */
	REL(r.peaks.flops[GA_ROOF_FP16], 512 * 100 * 1e9);
	assert_int_equal(r.peaks.flops_src[GA_ROOF_FP16], GA_PEAK_TABLE);
	REL(r.peaks.flops[GA_ROOF_TENSOR], 4096 * 100 * 1e9);
	assert_int_equal(r.peaks.flops_src[GA_ROOF_TENSOR], GA_PEAK_TABLE);
	/* No L2/L1 peak counters and no table for them. */
	assert_true(isnan(r.peaks.bw[GA_ROOF_L2]));
	assert_int_equal(r.peaks.bw_src[GA_ROOF_L1], GA_PEAK_MISSING);
	assert_int_equal(r.n_placed, 4);

	const ga_roof_kernel *k = &r.kernels[K_MEM];
	REL(k->flops[GA_ROOF_FP32], 2e12);
	REL(k->flops_total, 2e12);
	REL(k->bytes[GA_ROOF_DRAM], 1e12);
	REL(k->intensity[GA_ROOF_DRAM], 2);
	REL(k->ridge, 12.8);
	assert_int_equal(k->verdict, GA_ROOF_MEMORY);
	REL(k->attainable, 4e12);
	REL(k->roof_frac, 0.5);
	assert_int_equal(k->binding, GA_ROOF_DRAM);
	assert_false(k->binding_is_compute);
	assert_int_equal(k->agrees, 1);
	assert_null(k->reason);
	REL(k->occ_achieved_pct, 50);
	REL(k->occ_theoretical_pct, 75);
	assert_string_equal(k->occ_limiter, "registers");

	k = &r.kernels[K_CMP];
	REL(k->intensity[GA_ROOF_DRAM], 200);
	assert_int_equal(k->verdict, GA_ROOF_COMPUTE);
	assert_true(k->binding_is_compute);
	REL(k->roof_frac, 20e12 / 25.6e12);
	assert_int_equal(k->agrees, 1);

	k = &r.kernels[K_LAT];
	assert_int_equal(k->prec, GA_ROOF_FP64);
	REL(k->ridge, 6.4);
	assert_int_equal(k->verdict, GA_ROOF_COMPUTE);
	assert_int_equal(k->agrees, 1);
	assert_non_null(strstr(k->reason, "below both roofs"));

	k = &r.kernels[K_NAN];
	assert_int_equal(k->verdict, GA_ROOF_NOT_PLACED);
	assert_true(isnan(k->flops_total));
	assert_int_equal(k->agrees, -1);
	assert_string_equal(k->reason, "no FLOP counts in the profile");

	k = &r.kernels[K_CMEM];
	assert_int_equal(k->verdict, GA_ROOF_MEMORY);
	assert_int_equal(k->agrees, 0);
	assert_non_null(strstr(k->reason, "left of the DRAM ridge"));

	double x0, x1, y0, y1;
	assert_int_equal(ga_roof_axes(&r, &x0, &x1, &y0, &y1), 0);
	assert_true(x0 <= log10(2) && x1 >= 3 && y0 <= 9 && y1 >= log10(25.6e12));
	ga_roofline_free(&r);
}

/* An old profile without the peak counters: the table and the device. */
static void test_fallback_peaks(void **state)
{
	ga_roofline r;
	(void)state;
	build(0);
	ga_roofline_compute(&an, &cuts, &r);
	REL(r.peaks.flops[GA_ROOF_FP32], 256 * 100 * 1e9);
	assert_int_equal(r.peaks.flops_src[GA_ROOF_FP32], GA_PEAK_TABLE);
	REL(r.peaks.flops[GA_ROOF_FP64], 128 * 100 * 1e9);
	REL(r.peaks.bw[GA_ROOF_DRAM], 1e12);
	assert_int_equal(r.peaks.bw_src[GA_ROOF_DRAM], GA_PEAK_TABLE);
	REL(r.kernels[K_MEM].ridge, 25.6);
	assert_int_equal(r.kernels[K_MEM].verdict, GA_ROOF_MEMORY);
	ga_roofline_free(&r);

	/* An unknown compute capability and no bandwidth: nothing is placed. */
	prof.device.cc_major = 3;
	prof.device.mem_bandwidth_gbs = 0;
	ga_roofline_compute(&an, &cuts, &r);
	assert_true(isnan(r.peaks.flops[GA_ROOF_FP32]));
	assert_int_equal(r.n_placed, 0);
	assert_string_equal(r.kernels[K_MEM].reason, "no peak known for this GPU");
	double x0, x1, y0, y1;
	assert_int_equal(ga_roof_axes(&r, &x0, &x1, &y0, &y1), -1);
	ga_roofline_free(&r);
}

/* The cut-offs come from the caller (the classifier's constants). */
static void test_cuts(void **state)
{
	ga_roofline r;
	(void)state;
	build(1);
	/* No line for latency kernels: K_LAT (far below its roofs) disagrees. */
	ga_roof_cuts none = { .latency_frac = 0, .tensor_min_pct = 10 };
	ga_roofline_compute(&an, &none, &r);
	assert_int_equal(r.kernels[K_LAT].agrees, 0);
	assert_non_null(strstr(r.kernels[K_LAT].reason, "class latency, but at"));
	REL(r.kernels[K_MEM].flops[GA_ROOF_TENSOR], 0);
	ga_roofline_free(&r);
	/* Tensor utilisation 5 %: no tensor work under a 10 % cut, some under 1 %. */
	set(K_MEM, "sm__pipe_tensor_cycles_active.avg.pct_of_peak_sustained_active", 5);
	ga_roofline_compute(&an, &cuts, &r);
	REL(r.kernels[K_MEM].flops[GA_ROOF_TENSOR], 0);
	ga_roofline_free(&r);
	ga_roof_cuts low = { .latency_frac = 0.4, .tensor_min_pct = 1 };
	ga_roofline_compute(&an, &low, &r);
	REL(r.kernels[K_MEM].flops[GA_ROOF_TENSOR], 0.05 * 4096 * 100 * 1e9);
	ga_roofline_free(&r);
}

/* A kernel that moves almost nothing through DRAM is placed by its L2 (or
 * L1) intensity, the verdict following that level's ridge; a kernel without
 * FLOP counts gets FP32/FP64 estimated from its pipes' utilisation. */
static void test_placed_off_dram(void **state)
{
	ga_roofline r;
	ga_roof_cuts c = cuts;
	(void)state;
	build(1);
	c.dram_min_frac = 0.01;
	for (size_t i = 0; i < N_K; i++) {
		set(i, "lts__t_bytes.sum.peak_sustained", 8000);      /* x 1 GHz = 8 TB/s */
		set(i, "lts__cycles_elapsed.avg.per_second", 1e9);
	}
	set(K_LAT, "lts__t_bytes.sum", 1e9);                      /* 1 TB/s at L2 */
	set(K_NAN, "sm__pipe_fma_cycles_active.avg.pct_of_peak_sustained_active", 25);
	set(K_NAN, "sm__inst_executed_pipe_fp64.avg.pct_of_peak_sustained_active", 0);
	for (size_t i = 0; i < N_K; i++)
		groups[i].values = prof.launches[i].values;
	ga_roofline_compute(&an, &c, &r);

	/* K_LAT: 1 GFLOP/s FP64, DRAM 1 MB/s (far under 1 % of 2 TB/s) */
	const ga_roof_kernel *k = &r.kernels[K_LAT];
	assert_int_equal(k->placed_by, GA_ROOF_L2);
	REL(k->x_intensity, 1e9 / 1e12);
	REL(k->ridge, 12.8e12 / 8e12);
	assert_int_equal(k->verdict, GA_ROOF_MEMORY);
	assert_false(k->flops_estimated);
	/* K_MEM moves 1 TB/s through DRAM: placed there, as before. */
	assert_int_equal(r.kernels[K_MEM].placed_by, GA_ROOF_DRAM);
	REL(r.kernels[K_MEM].x_intensity, 2);
	REL(r.kernels[K_MEM].ridge, 12.8);

	/* K_NAN: no FLOP counts, FMA pipe at 25 %: 6.4 TFLOP/s FP32, estimated */
	k = &r.kernels[K_NAN];
	assert_int_equal(k->verdict, GA_ROOF_MEMORY);
	assert_true(k->flops_estimated);
	REL(k->flops[GA_ROOF_FP32], 0.25 * 25.6e12);
	REL(k->flops[GA_ROOF_FP64], 0);
	REL(k->x_intensity, 6.4);
	assert_int_equal(r.n_placed, 5);
	assert_true(ga_roof_placed_off_dram(&r));
	ga_roofline_free(&r);

	/* No cut-off: every kernel with DRAM bytes is placed by DRAM. */
	ga_roofline_compute(&an, &cuts, &r);
	assert_int_equal(r.kernels[K_LAT].placed_by, GA_ROOF_DRAM);
	assert_false(ga_roof_placed_off_dram(&r));
	ga_roofline_free(&r);
}

/* The FLOP counters, and only they, take a bundle of their own. */
static void test_metric_bundles(void **state)
{
	const char *const *names;
	const size_t *bundle;
	size_t n = ga_roofline_metrics(&names, &bundle), flop = 0;
	(void)state;
	for (size_t i = 0; i < n; i++) {
		int is_flop = strcmp(names[i], SASS("ffma")) == 0 ||
		              strcmp(names[i], SASS("dadd")) == 0 || strcmp(names[i], SASS("hmul")) == 0;
		if (is_flop)
			assert_int_equal(bundle[i], 1);
		if (strcmp(names[i], SASS("ffma") ".peak_sustained") == 0 ||
		    strcmp(names[i], "dram__bytes.sum") == 0 ||
		    strcmp(names[i], "gpu__time_duration.sum") == 0)
			assert_int_equal(bundle[i], 0);
		flop += bundle[i] == 1;
		assert_true(bundle[i] <= 1);
	}
	assert_int_equal(flop, 9);  /* add, mul, fma of FP32, FP64, FP16 */
}

static void test_metric_names_and_format(void **state)
{
	const char **names = NULL;
	char buf[64];
	(void)state;
	size_t n = ga_roofline_metric_names(&names);
	assert_true(n > 20);
	for (size_t i = 0; i < n; i++)
		for (size_t j = i + 1; j < n; j++)
			assert_string_not_equal(names[i], names[j]);
	assert_string_equal(ga_fmt_rate(66.9e12, "FLOP/s", buf, sizeof(buf)), "66.9 TFLOP/s");
	assert_string_equal(ga_fmt_rate(4.81e12, "B/s", buf, sizeof(buf)), "4.81 TB/s");
	assert_string_equal(ga_fmt_rate(NAN, "B/s", buf, sizeof(buf)), "n/a");
	assert_int_equal(ga_roof_label(0), 'A');
	assert_int_equal(ga_roof_label(26), 'a');
	assert_int_equal(ga_roof_label(52), 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_teardown(test_placed, teardown),
		cmocka_unit_test_teardown(test_fallback_peaks, teardown),
		cmocka_unit_test_teardown(test_cuts, teardown),
		cmocka_unit_test_teardown(test_placed_off_dram, teardown),
		cmocka_unit_test(test_metric_bundles),
		cmocka_unit_test(test_metric_names_and_format),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
