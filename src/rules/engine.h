/* engine.h: from a profile and a rule set to classified kernels and ranked
 * findings.  Pure computation: no I/O but optional verbose notes.
 *
 * Launches are grouped by (pid, mangled name, grid, block).  A group's metric
 * values are the duration-weighted means of its launches' values (plain mean
 * when durations are unknown).  Launches left unprofiled by the per-kernel
 * bound are charged the mean duration of the profiled ones.  Each group gets one class; each rule whose
 * `when` holds for the group gives a finding, ranked by the fraction of the
 * whole program's GPU time it is estimated to save:
 *     saving = group share of total GPU time x rule estimate (clamped 0..1).
 *
 * Names available to expressions, besides the profile's metrics:
 *   launch__grid_size, launch__block_size, launch__registers_per_thread,
 *   launch__shared_mem_per_block (static + dynamic), launch__waves_per_sm,
 *   launch__occupancy_theoretical_pct, launch__occupancy_limit_{blocks,
 *   registers,shared_mem,warps}, launch__occupancy_limiter_is_{registers,
 *   shared_mem,warps,blocks} (1/0), launch__count (launches in the group),
 *   launch__duration_ns (mean), launch__time_share (0..1),
 *   device__sm_count, device__max_warps_per_sm, device__max_threads_per_sm,
 *   device__mem_bandwidth_gbs, device__cc (e.g. 9.0),
 *   program__kernels_same_launch (kernels of the same process launched with
 *   the same grid and block, this one included), plus any named
 *   expression defined earlier in the same rule or in the classifier. */
#ifndef GA_ENGINE_H
#define GA_ENGINE_H

#include <stddef.h>

#include "../profile.h"
#include "rules.h"

typedef struct {
	char *name;               /* metric or named expression */
	double value;             /* NAN if not evaluable */
} ga_evidence;

typedef struct ga_group ga_group;

typedef struct {
	const ga_rule *rule;      /* borrowed from the rule set */
	size_t group;             /* index into analysis->groups */
	double estimate;          /* fraction of the kernel's time saved, 0..1 */
	double saving;            /* fraction of all GPU time saved, 0..1 */
	ga_evidence *evidence;
	size_t n_evidence;
} ga_finding;

struct ga_group {
	char *name;               /* demangled */
	char *mangled;
	int pid;
	unsigned grid[3], block[3];
	size_t *launches;         /* indices into profile->launches */
	size_t n_launches;
	double total_ns;          /* sum of launch durations */
	double mean_ns;
	double share;             /* of all profiled GPU time, 0..1 */
	double *values;           /* [profile->n_metrics], aggregated */
	ga_class klass;           /* GA_CLASS_NONE only when nothing was evaluable */
	ga_class runner_up;       /* GA_CLASS_NONE unless the call was close */
	double scores[GA_CLASS__COUNT];  /* NAN where not evaluable */
	ga_evidence *class_evidence;
	size_t n_class_evidence;
	char *class_note;         /* why the class was chosen (which `when` held) */
	size_t *findings;         /* indices into analysis->findings, ranked */
	size_t n_findings;
	int same_launch;          /* kernels of this process with this grid and block */
	long unprofiled;          /* further launches not profiled (--max-per-kernel) */
	int below_min_share;      /* some of them for its small share of GPU time (--min-share) */
	const ga_rule **unchecked;/* rules whose metrics were not measured for it */
	size_t n_unchecked, cap_unchecked;
};

typedef struct {
	const ga_profile *profile;  /* borrowed */
	ga_group *groups;           /* ordered by total time, descending */
	size_t n_groups;
	ga_finding *findings;       /* ranked by saving, descending */
	size_t n_findings;
	double total_ns;
	char **notes;               /* --verbose: why rules did not fire, etc. */
	size_t n_notes;
} ga_analysis;

typedef struct {
	int verbose;                /* collect notes on rules that could not be evaluated */
} ga_analyze_opts;

int ga_analyze(const ga_profile *p, const ga_ruleset *rs, const ga_analyze_opts *opts,
               ga_analysis *out, ga_error *err);
void ga_analysis_free(ga_analysis *a);

/* Highest severity among findings, or -1 when there are none. */
int ga_analysis_max_severity(const ga_analysis *a);

#endif
