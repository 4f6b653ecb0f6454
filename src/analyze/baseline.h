/* baseline.h: compare the analysis of a profile with the analysis of an
 * older one (the baseline), kernel by kernel.  Pure computation: no I/O.
 *
 * Matching.  A kernel of one analysis (a group: process, name, grid, block)
 * is paired with a kernel of the other in two passes:
 *   1. same demangled name, grid and block;
 *   2. among those left, same demangled name alone (the launch shape changed).
 * Within a pass, kernels that share the key are paired in launch order: the
 * first such kernel launched in one profile with the first in the other, and
 * so on.  Kernels left over are listed as only in the new profile or only in
 * the baseline.
 *
 * Regressions.  A paired kernel regresses when its mean duration per launch
 * grew by more than the threshold (only when both profiles were recorded on
 * the same GPU), or when a finding appears (its rule did not fire for the
 * baseline kernel) whose severity is at or above the given severity.  A
 * kernel only in the new profile regresses when it has such a finding.
 *
 * Fingerprints.  Apart from the kernel pairing, each finding is also
 * matched by its fingerprint alone (same rule, mangled name and line text),
 * which is what code scanning's baselineState says.
 *
 * Scaling.  When the two are jobs of different world sizes (ranks, see
 * ranks.c), the comparison also holds each side's communication share:
 * one that grows with the world size is communication the job does not
 * hide as it scales.
 *
 * Different GPUs.  When the device name differs, or both profiles name a
 * chip and the chips differ, durations are not compared at all (change is
 * NAN and nothing is slower); classes and findings still are. */
#ifndef GA_BASELINE_H
#define GA_BASELINE_H

#include <stddef.h>

#include "analyze.h"

#define GA_NO_GROUP ((size_t)-1)

typedef struct {
	double threshold;    /* fraction: 0.10 = more than 10 % slower regresses */
	int severity;        /* a new finding at or above this ga_severity regresses */
} ga_compare_opts;

typedef enum {
	GA_MATCH_NONE = 0,   /* only on one side */
	GA_MATCH_SHAPE,      /* same name, grid and block */
	GA_MATCH_NAME,       /* same name, another grid or block */
} ga_match;

/* A class evidence value (sm, mem, warp_eff...) on both sides. */
typedef struct {
	const char *name;    /* borrowed from the new analysis (or the baseline's) */
	double base, cur;    /* NAN where the side lacks it */
} ga_metric_change;

/* What a finding predicted for its fix against what the change measured:
 * set for a baseline finding that is gone from a paired kernel which got
 * faster on the same GPU, so a user sees on their own code whether the
 * estimates deserve trust. */
typedef struct {
	int checked;         /* 1: the fields below are set */
	double predicted;    /* the finding's speedup estimate; NAN when it had none */
	double low, high;    /* the range it printed for the fix; NAN when none */
	double measured;     /* baseline / current mean duration of the kernel */
	int inside;          /* low <= measured <= high */
} ga_prediction;

/* A finding present on one side only. */
typedef struct {
	const ga_rule *rule; /* borrowed from the rule set */
	size_t finding;      /* index into that side's analysis->findings */
	int regression;      /* new, and at or above the severity */
	ga_prediction check; /* gone findings only: predicted against measured */
} ga_finding_change;

typedef struct {
	size_t cur;          /* index into the new analysis's groups, or GA_NO_GROUP */
	size_t base;         /* index into the baseline's groups, or GA_NO_GROUP */
	ga_match match;
	double cur_ns, base_ns;  /* mean duration per launch, NAN if unknown */
	double change;       /* cur_ns / base_ns - 1; NAN when not compared */
	int slower;          /* change > threshold */
	int class_changed;   /* both sides classified, differently */
	ga_finding_change *added;    /* findings of cur whose rule did not fire for base */
	size_t n_added;
	ga_finding_change *removed;  /* findings of base whose rule no longer fires */
	size_t n_removed;
	ga_metric_change *metrics;   /* the class evidence of both sides */
	size_t n_metrics;
	int regression;      /* slower, or an added finding with regression set */
} ga_kernel_change;

typedef struct {
	const ga_analysis *cur, *base;   /* borrowed; must outlive the comparison */
	char *label;                     /* the baseline's name (its file), owned */
	int same_device;                 /* device name and chip agree */
	double threshold;
	int severity;
	/* Paired kernels in the new analysis's order, then kernels only in the
	 * new profile (its order), then kernels only in the baseline (its
	 * order). */
	ga_kernel_change *kernels;
	size_t n_kernels;
	size_t n_matched, n_only_cur, n_only_base;
	size_t n_regressions;            /* kernels with regression set */
	size_t n_slower;                 /* of them, by duration */
	double cur_total_ns, base_total_ns;
	double total_change;             /* NAN when not compared */
	/* Findings by fingerprint (ga_finding.fingerprint), as code scanning
	 * tracks them: unchanged[i] is 1 when some baseline finding has the
	 * fingerprint of the new analysis's finding i (0: new); absent lists
	 * the baseline's findings (indices into base->findings, in its rank
	 * order) whose fingerprint no new finding has. */
	unsigned char *unchanged;        /* [cur->n_findings] */
	size_t *absent;
	size_t n_absent;
	/* Communication against world size: a job run at another world size
	 * than its baseline (shown: the sizes differ), and each side's share
	 * of its GPU time in communication kernels (owner kind "comm").  A
	 * profile without ranks is a world of 1. */
	struct {
		int shown;
		long cur_world, base_world;
		double cur_share, base_share;   /* NAN without GPU time */
		double change;                  /* cur_share - base_share (NAN: one lacks it) */
	} scaling;
} ga_comparison;

/* Compare cur with base.  label (may be NULL) is copied.  Never fails;
 * release with ga_comparison_free. */
void ga_compare(const ga_analysis *cur, const ga_analysis *base, const char *label,
                const ga_compare_opts *opts, ga_comparison *out);
void ga_comparison_free(ga_comparison *c);

/* Whether the two devices count as the same GPU (see above). */
int ga_same_device(const ga_device *a, const ga_device *b);

/* The change of the kernel that is group gi of the new analysis, or NULL. */
const ga_kernel_change *ga_comparison_for_group(const ga_comparison *c, size_t gi);

/* Predicted against measured for finding f when its kernel went from
 * base_ns to cur_ns per launch: checked only when both durations are known
 * and the kernel got faster.  The demos use it for their variants too. */
ga_prediction ga_predict_check(const ga_finding *f, double base_ns, double cur_ns);

/* The gone finding of the comparison that is baseline finding bi (an index
 * into base->findings), or NULL when that finding is not gone from a
 * paired kernel. */
const ga_finding_change *ga_comparison_gone(const ga_comparison *c, size_t bi);

/* Whether a kernel change says anything: regression, duration past the
 * threshold either way, class or findings changed, launch shape changed, or
 * on one side only. */
int ga_kernel_change_notable(const ga_comparison *c, const ga_kernel_change *k);

#endif
