/* roofline.h: where each kernel sits against the GPU's peaks.
 *
 * From an analysis (kernel groups with their aggregated metric values) to a
 * plain model the reporters draw: per kernel the achieved FLOP/s by
 * precision, an estimate of tensor work, bytes per second at DRAM, L2 and
 * L1, arithmetic intensity (FLOP per byte) per level; for the device the
 * peaks and the ridge points.  Pure computation, no I/O.
 *
 * FLOP are counted from thread-level SASS instruction counts: add + mul +
 * 2 x fma per precision (FP32 f*, FP64 d*, FP16 h*).  Tensor work is not
 * counted: it is estimated as tensor-pipe utilisation x the tensor peak.
 *
 * Peaks come from counters recorded in the profile (peak_sustained x the
 * measured clock), so an imported profile draws the same picture anywhere;
 * where a profile lacks them (older profiles) FLOP peaks come from a small
 * per-compute-capability table x SM count x SM clock, and the DRAM peak
 * from the device's bandwidth.  The tensor peak always comes from the table.
 * Each peak says where it came from.  Device peaks are the highest value
 * any kernel's counters show (clocks vary from kernel to kernel).
 *
 * Where the SASS FLOP counts were not collected (a kernel measured with one
 * metric set, --min-share), FP32 and FP64 FLOP/s are estimated as FMA-pipe
 * and FP64-pipe utilisation x their peaks, as tensor work always is: an
 * upper bound (the FMA pipe also runs integer multiply-adds), flagged.
 *
 * A kernel is placed by its DRAM intensity, unless it moves almost nothing
 * through DRAM (under cuts->dram_min_frac of the DRAM peak bandwidth): then
 * by its intensity at L2 or L1, whichever runs nearer its peak bandwidth, as
 * in the hierarchical roofline (each level's intensity against that level's
 * bandwidth roof, on the same axes).  The verdict follows that level's
 * roofline: left of its ridge (peak FLOP/s / the level's bandwidth) is
 * memory, right is compute.  It is set against the kernel's class; where
 * they differ the model says why.
 *
 * The analysis computes it (analyze.h: ga_analysis.roofline); reporters
 * draw it (report.h: ga_roof_plot, the HTML chart). */
#ifndef GA_ANALYZE_ROOFLINE_H
#define GA_ANALYZE_ROOFLINE_H

#include <stddef.h>

typedef struct ga_analysis ga_analysis;
typedef struct ga_group ga_group;

typedef enum { GA_ROOF_FP32, GA_ROOF_FP64, GA_ROOF_FP16, GA_ROOF_TENSOR, GA_ROOF__PREC } ga_roof_prec;
typedef enum { GA_ROOF_DRAM, GA_ROOF_L2, GA_ROOF_L1, GA_ROOF__LEVELS } ga_roof_level;

typedef enum {
	GA_PEAK_MISSING = 0,   /* unknown: not drawn */
	GA_PEAK_COUNTERS,      /* measured: the profile's peak counters and clocks */
	GA_PEAK_TABLE,         /* from gpuadvise's table and the device fields */
} ga_peak_source;

typedef enum { GA_ROOF_NOT_PLACED = 0, GA_ROOF_MEMORY, GA_ROOF_COMPUTE } ga_roof_verdict;

typedef struct {
	double flops[GA_ROOF__PREC];          /* FLOP/s; NAN when missing */
	ga_peak_source flops_src[GA_ROOF__PREC];
	double bw[GA_ROOF__LEVELS];           /* bytes/s; NAN when missing */
	ga_peak_source bw_src[GA_ROOF__LEVELS];
	double ridge[GA_ROOF__PREC];          /* flops / DRAM bw, FLOP/byte; NAN unknown */
} ga_roof_peaks;

typedef struct {
	double flops[GA_ROOF__PREC];    /* achieved FLOP/s; tensor is an estimate; NAN: missing */
	double flops_total;             /* sum of the known ones; NAN when none is known */
	ga_roof_prec prec;              /* the precision doing most of the work */
	double bytes[GA_ROOF__LEVELS];  /* bytes/s moved at each level; NAN: missing */
	double intensity[GA_ROOF__LEVELS];  /* FLOP/byte; NAN when not computable */
	int flops_estimated;            /* FP32/FP64 from pipe utilisation (no counts) */
	ga_roof_level placed_by;        /* the level whose intensity places the kernel */
	double x_intensity;             /* intensity[placed_by]: where it is drawn */
	double ridge;                   /* peak FLOP/s of prec / placed_by's bandwidth */
	double attainable;              /* the tightest roof at this kernel's intensities */
	ga_roof_level binding;          /* the level whose roof is tightest */
	int binding_is_compute;         /* 1: the flat roof binds, not a bandwidth */
	double roof_frac;               /* flops_total / attainable, 0..1 (NAN if unknown) */
	ga_roof_verdict verdict;        /* per the DRAM roofline */
	int agrees;                     /* with the class: 1 yes, 0 no, -1 not comparable */
	char *reason;                   /* malloc'd: why (dis)agreement, or why not placed */
	double occ_achieved_pct;        /* sm__warps_active; NAN when missing */
	double occ_theoretical_pct;     /* of the group's first launch; NAN when unknown */
	const char *occ_limiter;        /* static string, or NULL */
} ga_roof_kernel;

typedef struct {
	ga_roof_peaks peaks;
	ga_roof_kernel *kernels;        /* [n], in the order of analysis->groups */
	size_t n;
	size_t n_placed;                /* kernels with a verdict */
} ga_roofline;

/* The roofline's cut-offs, from the classifier's constants. */
typedef struct {
	double latency_frac;      /* a latency-class kernel is far below the roofs under
	                           * this fraction of its attainable FLOP/s */
	double tensor_min_pct;    /* tensor-pipe utilisation below this is no tensor work */
	double dram_min_frac;     /* DRAM traffic under this fraction of its peak: placed
	                           * at L2 or L1 */
} ga_roof_cuts;

/* Fill r from a's groups (their values and classes; a must have a
 * profile).  Free with ga_roofline_free. */
void ga_roofline_compute(const ga_analysis *a, const ga_roof_cuts *cuts, ga_roofline *r);
/* The device's peaks alone, as ga_roofline_compute finds them (a's groups
 * must be aggregated): what the rules' estimates read before the roofline
 * itself is drawn. */
void ga_roofline_peaks(const ga_analysis *a, ga_roof_peaks *pk);
/* The roofline's lower bound of one launch of group g, in ns: the largest
 * of the bytes it moves at each level / that level's peak bandwidth and its
 * FLOP of each precision / that precision's peak (tensor work, estimated
 * from the tensor pipe's utilisation, at the tensor peak).  Terms whose
 * metrics or peaks are missing are left out; NAN when none is known.  No
 * fix makes the kernel faster than this (the pseudo metric
 * roofline__bound_ns).  *dur_ns gets the duration the amounts were taken
 * over (gpu__time_duration.sum, else the mean launch time), the one to set
 * the bound against. */
double ga_roofline_bound_ns(const ga_analysis *a, const ga_group *g, const ga_roof_peaks *pk,
                            const ga_roof_cuts *cuts, double *dur_ns);
void ga_roofline_free(ga_roofline *r);

/* The metrics the roofline reads, a static list (borrowed), and in *bundle
 * (when not NULL) the bundle of each, numbered from 0: the bytes, peaks,
 * clocks, tensor utilisation, occupancy and duration in bundle 0, the FLOP
 * counts (SASS instruction counts, a replay pass of their own) in bundle 1.
 * What a live run collects besides the rules' metrics (plan.h). */
size_t ga_roofline_metrics(const char *const **names, const size_t **bundle);
/* The same names without their bundles. */
size_t ga_roofline_metric_names(const char ***out);

/* Display names: "FP32", "FP64", "FP16", "tensor"; "DRAM", "L2", "L1";
 * "counters", "table", "missing"; "memory", "compute", "not placed". */
const char *ga_roof_prec_name(ga_roof_prec p);
const char *ga_roof_level_name(ga_roof_level l);
const char *ga_peak_source_name(ga_peak_source s);
const char *ga_roof_verdict_name(ga_roof_verdict v);

#endif
