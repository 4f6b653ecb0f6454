/* roofline.c: the roofline model of an analysis.  See roofline.h. */
#include "analyze.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#define M_DURATION "gpu__time_duration.sum"
#define M_TENSOR "sm__pipe_tensor_cycles_active.avg.pct_of_peak_sustained_active"
#define M_WARPS "sm__warps_active.avg.pct_of_peak_sustained_active"
#define M_SM_CLOCK "sm__cycles_elapsed.avg.per_second"
#define M_PIPE_FMA "sm__pipe_fma_cycles_active.avg.pct_of_peak_sustained_active"
#define M_PIPE_FP64 "sm__inst_executed_pipe_fp64.avg.pct_of_peak_sustained_active"
#define SASS(op) "sm__sass_thread_inst_executed_op_" op "_pred_on.sum"

/* What the roofline reads and the bundle a live run collects each in: the
 * FLOP counts, thread-level SASS instruction counts, take a replay pass of
 * their own (bundle 1); everything else fits beside the classifier's. */
static const char *const metric_names[] = {
	SASS("fadd"), SASS("fmul"), SASS("ffma"),
	SASS("dadd"), SASS("dmul"), SASS("dfma"),
	SASS("hadd"), SASS("hmul"), SASS("hfma"),
	M_TENSOR, M_WARPS, M_DURATION, M_PIPE_FMA, M_PIPE_FP64,
	"dram__bytes.sum", "lts__t_bytes.sum", "l1tex__t_bytes.sum",
	"dram__bytes.sum.peak_sustained", "dram__cycles_elapsed.avg.per_second",
	"lts__t_bytes.sum.peak_sustained", "lts__cycles_elapsed.avg.per_second",
	"l1tex__t_bytes.sum.peak_sustained", "l1tex__cycles_elapsed.avg.per_second",
	SASS("ffma") ".peak_sustained", SASS("dfma") ".peak_sustained",
	SASS("hfma") ".peak_sustained", M_SM_CLOCK,
};
static const size_t metric_bundle[GA_ARRAY_LEN(metric_names)] = {
	1, 1, 1,
	1, 1, 1,
	1, 1, 1,
	/* the rest 0 */
};

size_t ga_roofline_metrics(const char *const **names, const size_t **bundle)
{
	*names = metric_names;
	if (bundle)
		*bundle = metric_bundle;
	return GA_ARRAY_LEN(metric_names);
}

size_t ga_roofline_metric_names(const char ***out)
{
	*out = (const char **)metric_names;
	return GA_ARRAY_LEN(metric_names);
}

/* Per precision: the instruction counts (add, mul, fma) and the fma peak. */
static const char *const prec_ops[GA_ROOF_TENSOR][3] = {
	{ SASS("fadd"), SASS("fmul"), SASS("ffma") },
	{ SASS("dadd"), SASS("dmul"), SASS("dfma") },
	{ SASS("hadd"), SASS("hmul"), SASS("hfma") },
};
static const char *const prec_peak[GA_ROOF_TENSOR] = {
	SASS("ffma") ".peak_sustained", SASS("dfma") ".peak_sustained",
	SASS("hfma") ".peak_sustained",
};
/* Per level: bytes moved, bytes per cycle at peak, cycles per second. */
static const char *const level_metrics[GA_ROOF__LEVELS][3] = {
	{ "dram__bytes.sum", "dram__bytes.sum.peak_sustained", "dram__cycles_elapsed.avg.per_second" },
	{ "lts__t_bytes.sum", "lts__t_bytes.sum.peak_sustained", "lts__cycles_elapsed.avg.per_second" },
	{ "l1tex__t_bytes.sum", "l1tex__t_bytes.sum.peak_sustained",
	  "l1tex__cycles_elapsed.avg.per_second" },
};

/* FLOP per clock per SM, dense, from NVIDIA's whitepapers (V100, T4, A100,
 * GA102, AD102, H100): FP32 and FP64 FMA lanes x 2, FP16 (HFMA2) and the
 * FP16 tensor cores.  Checked against the published peaks, e.g. H100 SXM:
 * 132 SMs x 256 x 1.98 GHz = 66.9 TFLOP/s FP32, 132 x 4096 x 1.83 GHz =
 * 989 TFLOP/s dense FP16 tensor; A100: 108 x 2048 x 1.41 GHz = 312. */
static const struct {
	int major, minor;      /* minor -1: any */
	double per_clk[GA_ROOF__PREC];
} cc_table[] = {
	{ 7, 0, { 128, 64, 256, 1024 } },    /* Volta V100 */
	{ 7, 5, { 128, 4, 256, 1024 } },     /* Turing */
	{ 8, 0, { 128, 64, 512, 2048 } },    /* Ampere A100 */
	{ 8, -1, { 256, 4, 256, 1024 } },    /* Ampere GA10x, Ada */
	{ 9, 0, { 256, 128, 512, 4096 } },   /* Hopper H100/H200 */
};

static const double *cc_per_clk(const ga_device *d)
{
	for (size_t i = 0; i < GA_ARRAY_LEN(cc_table); i++)
		if (cc_table[i].major == d->cc_major && cc_table[i].minor == d->cc_minor)
			return cc_table[i].per_clk;
	for (size_t i = 0; i < GA_ARRAY_LEN(cc_table); i++)
		if (cc_table[i].major == d->cc_major && cc_table[i].minor < 0)
			return cc_table[i].per_clk;
	return NULL;
}

/* A group's value of metric name; NAN when not collected. */
static double gval(const ga_analysis *a, const ga_group *g, const char *name)
{
	long i = ga_profile_metric_index(a->profile, name);
	return i < 0 || !g->values ? NAN : g->values[i];
}

/* The highest finite positive product over all groups, or NAN. */
static double max_product(const ga_analysis *a, const char *x, const char *y, double k)
{
	double best = NAN;
	for (size_t i = 0; i < a->n_groups; i++) {
		double v = gval(a, &a->groups[i], x) * gval(a, &a->groups[i], y) * k;
		if (isfinite(v) && v > 0 && !(v <= best))
			best = v;
	}
	return best;
}

static void set_peak(double *slot, ga_peak_source *src, double v, ga_peak_source s)
{
	if (isfinite(*slot) || !isfinite(v) || v <= 0)
		return;
	*slot = v;
	*src = s;
}

static void compute_peaks(const ga_analysis *a, ga_roof_peaks *pk)
{
	const ga_device *d = &a->profile->device;
	const double *per_clk = cc_per_clk(d);
	double sms_hz = d->sm_count * d->sm_clock_mhz * 1e6;

	for (int p = 0; p < GA_ROOF__PREC; p++) {
		pk->flops[p] = NAN;
		pk->flops_src[p] = GA_PEAK_MISSING;
		if (p < GA_ROOF_TENSOR)
			set_peak(&pk->flops[p], &pk->flops_src[p],
			         max_product(a, prec_peak[p], M_SM_CLOCK, 2.0), GA_PEAK_COUNTERS);
		if (per_clk)
			set_peak(&pk->flops[p], &pk->flops_src[p], per_clk[p] * sms_hz, GA_PEAK_TABLE);
	}
	for (int l = 0; l < GA_ROOF__LEVELS; l++) {
		pk->bw[l] = NAN;
		pk->bw_src[l] = GA_PEAK_MISSING;
		set_peak(&pk->bw[l], &pk->bw_src[l],
		         max_product(a, level_metrics[l][1], level_metrics[l][2], 1.0),
		         GA_PEAK_COUNTERS);
	}
	set_peak(&pk->bw[GA_ROOF_DRAM], &pk->bw_src[GA_ROOF_DRAM], d->mem_bandwidth_gbs * 1e9,
	         GA_PEAK_TABLE);
	for (int p = 0; p < GA_ROOF__PREC; p++)
		pk->ridge[p] = pk->flops[p] / pk->bw[GA_ROOF_DRAM];
}

/* add + mul + 2 fma per second, NAN when any count is missing. */
static double prec_rate(const ga_analysis *a, const ga_group *g, int p, double secs)
{
	return (gval(a, g, prec_ops[p][0]) + gval(a, g, prec_ops[p][1]) +
	        2.0 * gval(a, g, prec_ops[p][2])) / secs;
}

/* Tensor FLOP/s, estimated from tensor-pipe utilisation, only where the
 * pipe is clearly busy (cuts->tensor_min_pct): the counter is not zero for
 * kernels that run no tensor instruction at all. */
static double tensor_rate(const ga_analysis *a, const ga_group *g, const ga_roof_peaks *pk,
                          const ga_roof_cuts *cuts)
{
	double pct = gval(a, g, M_TENSOR);

	if (!isfinite(pct))
		return NAN;
	if (pct < cuts->tensor_min_pct)
		return 0;
	return pct / 100.0 * pk->flops[GA_ROOF_TENSOR];
}

/* Without FLOP counts: FP32 and FP64 FLOP/s as the FMA and FP64 pipes'
 * utilisation x their peaks, an upper bound (the FMA pipe also runs integer
 * multiply-adds, and an FMA is counted as two FLOP); k->flops_estimated. */
static void estimate_from_pipes(const ga_analysis *a, const ga_group *g,
                                const ga_roof_peaks *pk, ga_roof_kernel *k)
{
	double fma = gval(a, g, M_PIPE_FMA), fp64 = gval(a, g, M_PIPE_FP64);
	if (!isfinite(fma) || !isfinite(fp64) || !isfinite(pk->flops[GA_ROOF_FP32]) ||
	    !isfinite(pk->flops[GA_ROOF_FP64]))
		return;
	k->flops[GA_ROOF_FP32] = fma / 100.0 * pk->flops[GA_ROOF_FP32];
	k->flops[GA_ROOF_FP64] = fp64 / 100.0 * pk->flops[GA_ROOF_FP64];
	k->flops_estimated = 1;
}

static void measure(const ga_analysis *a, const ga_group *g, const ga_roof_peaks *pk,
                    const ga_roof_cuts *cuts, ga_roof_kernel *k)
{
	double dur = gval(a, g, M_DURATION);
	double secs = (isfinite(dur) && dur > 0 ? dur : g->mean_ns) * 1e-9;
	int counted = 0;

	k->flops_total = NAN;
	k->prec = GA_ROOF_FP32;
	for (int p = 0; p < GA_ROOF__PREC; p++)
		k->flops[p] = p == GA_ROOF_TENSOR ? tensor_rate(a, g, pk, cuts) : prec_rate(a, g, p, secs);
	if (!isfinite(k->flops[GA_ROOF_FP32]) && !isfinite(k->flops[GA_ROOF_FP64]) &&
	    !isfinite(k->flops[GA_ROOF_FP16]))
		estimate_from_pipes(a, g, pk, k);
	for (int p = 0; p < GA_ROOF__PREC; p++) {
		if (!isfinite(k->flops[p]))
			continue;
		counted |= p != GA_ROOF_TENSOR;
		k->flops_total = isfinite(k->flops_total) ? k->flops_total + k->flops[p]
		                                          : k->flops[p];
		if (!(k->flops[k->prec] >= k->flops[p]))
			k->prec = (ga_roof_prec)p;
	}
	if (!counted)
		k->flops_total = NAN;
	for (int l = 0; l < GA_ROOF__LEVELS; l++) {
		k->bytes[l] = gval(a, g, level_metrics[l][0]) / secs;
		k->intensity[l] = k->bytes[l] > 0 ? k->flops_total / k->bytes[l] : NAN;
	}
}

/* The level that places the kernel: DRAM, unless its DRAM traffic is under
 * the cut-off (or unknown), then L2 or L1, the one nearer its peak
 * bandwidth; GA_ROOF__LEVELS when none moved a byte. */
static ga_roof_level placing_level(const ga_roof_kernel *k, const ga_roof_peaks *pk,
                                   const ga_roof_cuts *cuts)
{
	double dram = k->bytes[GA_ROOF_DRAM] / pk->bw[GA_ROOF_DRAM];
	if (k->bytes[GA_ROOF_DRAM] > 0 && !(dram < cuts->dram_min_frac))
		return GA_ROOF_DRAM;
	ga_roof_level best = GA_ROOF__LEVELS;
	double best_frac = 0;
	for (int l = GA_ROOF_L2; l < GA_ROOF__LEVELS; l++) {
		double f = k->bytes[l] / pk->bw[l];
		if (isfinite(f) && f > best_frac) {
			best_frac = f;
			best = (ga_roof_level)l;
		}
	}
	if (best == GA_ROOF__LEVELS && k->bytes[GA_ROOF_DRAM] > 0)
		return GA_ROOF_DRAM;
	return best;
}

/* Why a kernel cannot be placed, or NULL when it can. */
static const char *unplaceable(const ga_roof_kernel *k, const ga_roof_peaks *pk)
{
	if (!isfinite(k->flops_total))
		return "no FLOP counts in the profile";
	if (k->flops_total <= 0)
		return k->flops_estimated
		       ? "no FLOP counts, and idle FMA and FP64 pipes: left of every ridge, memory "
		         "side by definition"
		       : "no floating-point work counted (0 FLOP): left of every ridge, memory side "
		         "by definition";
	if (k->placed_by == GA_ROOF__LEVELS)
		return "no memory traffic counted at DRAM, L2 or L1";
	if (!isfinite(pk->bw[k->placed_by]) || !isfinite(pk->flops[k->prec]))
		return "no peak known for this GPU";
	return NULL;
}

/* The tightest roof at the kernel's intensities. */
static void place(ga_roof_kernel *k, const ga_roof_peaks *pk)
{
	k->x_intensity = k->intensity[k->placed_by];
	k->ridge = pk->flops[k->prec] / pk->bw[k->placed_by];
	k->verdict = k->x_intensity < k->ridge ? GA_ROOF_MEMORY : GA_ROOF_COMPUTE;
	k->attainable = pk->flops[k->prec];
	k->binding = GA_ROOF_DRAM;
	k->binding_is_compute = 1;
	for (int l = 0; l < GA_ROOF__LEVELS; l++) {
		double roof = k->intensity[l] * pk->bw[l];
		if (isfinite(roof) && roof < k->attainable) {
			k->attainable = roof;
			k->binding = (ga_roof_level)l;
			k->binding_is_compute = 0;
		}
	}
	k->roof_frac = k->flops_total / k->attainable;
}

static void agree(ga_roof_kernel *k, ga_class klass, const ga_roof_cuts *cuts)
{
	const char *lv = ga_roof_level_name(k->binding);
	const char *at = ga_roof_level_name(k->placed_by);
	double pct = k->roof_frac * 100.0;

	k->agrees = 1;
	switch (klass) {
	case GA_CLASS_COMPUTE:
		if (k->verdict == GA_ROOF_MEMORY) {
			k->agrees = 0;
			k->reason = ga_xasprintf("class compute, but left of the %s ridge (%.3g < "
			        "%.3g FLOP/byte): the busy pipe is not the floating-point work counted "
			        "here (integer, special functions, load/store), or tensor work is "
			        "underestimated", at, k->x_intensity, k->ridge);
		}
		break;
	case GA_CLASS_MEMORY:
		if (k->verdict == GA_ROOF_MEMORY)
			break;
		if (!k->binding_is_compute && k->binding != k->placed_by) {
			k->reason = ga_xasprintf("right of the %s ridge, but the %s bandwidth roof "
			        "binds (%.3g FLOP/byte at %s): memory bound at %s, not %s", at, lv,
			        k->intensity[k->binding], lv, lv, at);
		} else {
			k->agrees = 0;
			k->reason = ga_xasprintf("class memory, but right of the %s ridge and "
			        "under no bandwidth roof: the busy memory unit is not moving bytes "
			        "(bank conflicts, uncoalesced wavefronts, atomics)", at);
		}
		break;
	case GA_CLASS_LATENCY:
		if (k->roof_frac < cuts->latency_frac) {
			k->reason = ga_xasprintf("below both roofs (%.2g%% of attainable): neither "
			        "limit is reached, as expected of a latency-bound kernel", pct);
		} else {
			k->agrees = 0;
			k->reason = ga_xasprintf("class latency, but at %.2g%% of the %s roof", pct,
			        k->binding_is_compute ? ga_roof_prec_name(k->prec) : lv);
		}
		break;
	case GA_CLASS_DIVERGENCE:
		k->agrees = -1;
		k->reason = ga_xasprintf("the class comes from warp efficiency (masked lanes), "
		        "which a roofline does not show; it sits on the %s side",
		        ga_roof_verdict_name(k->verdict));
		break;
	default:
		k->agrees = -1;
		k->reason = ga_xstrdup("the kernel has no class to compare with");
	}
}

static void occupancy(const ga_analysis *a, const ga_group *g, ga_roof_kernel *k)
{
	const ga_launch *l = g->n_launches && g->launches[0] < a->profile->n_launches
	                     ? &a->profile->launches[g->launches[0]] : NULL;
	k->occ_achieved_pct = gval(a, g, M_WARPS);
	k->occ_theoretical_pct = l && l->occ_theoretical_pct > 0 ? l->occ_theoretical_pct : NAN;
	k->occ_limiter = l && (l->occ_limit_blocks | l->occ_limit_warps | l->occ_limit_registers |
	                       l->occ_limit_smem) ? ga_launch_limiter(l) : NULL;
}

void ga_roofline_peaks(const ga_analysis *a, ga_roof_peaks *pk)
{
	memset(pk, 0, sizeof(*pk));
	if (a->profile)
		compute_peaks(a, pk);
}

double ga_roofline_bound_ns(const ga_analysis *a, const ga_group *g, const ga_roof_peaks *pk,
                            const ga_roof_cuts *cuts, double *dur_ns)
{
	ga_roof_kernel k = {0};
	double dur = gval(a, g, M_DURATION);
	double secs = (isfinite(dur) && dur > 0 ? dur : g->mean_ns) * 1e-9;
	double bound = NAN;

	*dur_ns = secs * 1e9;
	if (!(secs > 0))
		return NAN;
	/* Rates over the measured time, times that time: the amounts. */
	measure(a, g, pk, cuts, &k);
	for (int p = 0; p < GA_ROOF__PREC; p++) {
		double t = k.flops[p] * secs / pk->flops[p];
		if (isfinite(t) && !(t <= bound))
			bound = t;
	}
	for (int l = 0; l < GA_ROOF__LEVELS; l++) {
		double t = k.bytes[l] * secs / pk->bw[l];
		if (isfinite(t) && !(t <= bound))
			bound = t;
	}
	return bound * 1e9;
}

void ga_roofline_compute(const ga_analysis *a, const ga_roof_cuts *cuts, ga_roofline *r)
{
	memset(r, 0, sizeof(*r));
	if (!a->profile)
		return;
	compute_peaks(a, &r->peaks);
	r->n = a->n_groups;
	r->kernels = ga_xcalloc(r->n ? r->n : 1, sizeof(*r->kernels));
	for (size_t i = 0; i < r->n; i++) {
		const ga_group *g = &a->groups[i];
		ga_roof_kernel *k = &r->kernels[i];
		measure(a, g, &r->peaks, cuts, k);
		occupancy(a, g, k);
		k->ridge = k->attainable = k->roof_frac = k->x_intensity = NAN;
		k->placed_by = placing_level(k, &r->peaks, cuts);
		const char *why = unplaceable(k, &r->peaks);
		if (why) {
			k->verdict = GA_ROOF_NOT_PLACED;
			k->agrees = -1;
			k->reason = ga_xstrdup(why);
			continue;
		}
		place(k, &r->peaks);
		agree(k, g->klass, cuts);
		r->n_placed++;
	}
}

void ga_roofline_free(ga_roofline *r)
{
	for (size_t i = 0; i < r->n; i++)
		free(r->kernels[i].reason);
	free(r->kernels);
	memset(r, 0, sizeof(*r));
}

const char *ga_roof_prec_name(ga_roof_prec p)
{
	static const char *const n[] = { "FP32", "FP64", "FP16", "tensor" };
	return p >= 0 && p < GA_ROOF__PREC ? n[p] : "?";
}

const char *ga_roof_level_name(ga_roof_level l)
{
	static const char *const n[] = { "DRAM", "L2", "L1" };
	return l >= 0 && l < GA_ROOF__LEVELS ? n[l] : "?";
}

const char *ga_peak_source_name(ga_peak_source s)
{
	return s == GA_PEAK_COUNTERS ? "counters" : s == GA_PEAK_TABLE ? "table" : "missing";
}

const char *ga_roof_verdict_name(ga_roof_verdict v)
{
	return v == GA_ROOF_MEMORY ? "memory" : v == GA_ROOF_COMPUTE ? "compute" : "not placed";
}
