/* analyze.h: the analysis stage.  From a profile and a rule set to one
 * value, ga_analysis, that every reporter only formats: per kernel its
 * class, scores, findings with estimates, roofline placement, occupancy and
 * source-line ranking; per program the ranked findings, the processes and
 * the roofline's peaks.  Pure computation: no I/O but optional verbose
 * notes.
 *
 * Launches are grouped by (pid, mangled name, grid, block).  A group's metric
 * values are the duration-weighted means of its launches' values (plain mean
 * when durations are unknown).  Launches left unprofiled by the per-kernel
 * bound are charged the mean duration of the profiled ones.  Each group gets
 * one class; each rule whose `when` holds for the group gives a finding,
 * ranked by the fraction of the whole program's GPU time it is estimated to
 * save:
 *     saving = group share of total GPU time x rule estimate (clamped 0..1).
 *
 * The cut-offs of the roofline and of the source ranking are constants of
 * the classifier (its `metrics:`, read with ga_classifier_value); a
 * classifier without one of them is an error of the rule set.
 *
 * Names available to expressions, besides the profile's metrics:
 *   launch__grid_size, launch__block_size, launch__registers_per_thread,
 *   launch__shared_mem_per_block (static + dynamic), launch__waves_per_sm,
 *   launch__occupancy_theoretical_pct, launch__occupancy_limit_{blocks,
 *   registers,shared_mem,warps}, launch__occupancy_limiter_is_{registers,
 *   shared_mem,warps,blocks} (1/0), launch__count (launches in the group),
 *   launch__duration_ns (mean), launch__time_share (0..1),
 *   launch__warps (grid x warps per block),
 *   launch__loop_share (the kernel's share of the kernel launches in one
 *   iteration of its process's loop, from the timeline; missing without a
 *   loop or a launch of it there),
 *   device__sm_count, device__max_warps_per_sm, device__max_threads_per_sm,
 *   device__mem_bandwidth_gbs, device__cc (e.g. 9.0),
 *   device__peak_{fp32,fp64,tensor}_flops (FLOP/s, the roofline's peaks),
 *   roofline__bound_ns (ga_roofline_bound_ns: no fix makes a launch
 *   shorter), roofline__headroom_share (max(0, 1 - bound / duration)),
 *   program__kernels_same_launch (kernels of the same process launched with
 *   the same grid and block, this one included),
 *   program__kernels_back_to_back (the distinct kernels in the longest run
 *   of launches right after one another, on one stream with this grid and
 *   block, that holds one of this kernel's launches, this one included),
 *   owner__editable (1 when the kernel's owner is editable),
 *   owner__kind_KIND (1 when the owners pattern that matched the kernel
 *   gives it kind KIND, else 0),
 *   nvtx__sdpa_math_share (share of the kernel's launch time whose NVTX
 *   path is scaled_dot_product_attention's math fallback; 0 without
 *   paths), plus any named
 *   expression defined earlier in the same rule or in the classifier.
 * Program rules (scope: program) read, per process with a timeline, the
 * timeline__* values program.c lists, program__* and device__* values,
 * and rank__* values, the process's place among the ranks (ranks.c). 
 * Warps are counted in the device's warp size (device.warp_size); a profile
 * that records none leaves device__max_warps_per_sm and
 * launch__waves_per_sm unavailable. */
#ifndef GA_ANALYZE_H
#define GA_ANALYZE_H

#include <stddef.h>

#include "../profile/profile.h"
#include "../rules/rules.h"
#include "srcrank.h"
#include "roofline.h"

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
	/* ... and of its process's wall time, where the profile has the
	 * process's timeline (ga_tl_proc.critical_share says how); NAN
	 * without one. */
	double wall_saving;
	double speedup;           /* of the kernel: ga_estimate_speedup(estimate) */
	double speedup_min, speedup_max;  /* the range printed: 1/(1-low) .. 1/(1-high) from
	                           * the rule's model, else its stock `speedup` range */
	double low, high;         /* the model's range as fractions saved (low <= estimate
	                           * <= high, 0..1); NAN when the rule has no low/high */
	/* The physical floor that cut the model's estimate or range, or NULL:
	 * "launch" (no kernel runs in less than the classifier's
	 * launch_floor_ns). */
	const char *floor;
	/* The input the estimate (or its range) needs and the kernel's
	 * profile lacks (malloc'd), or NULL: the finding ranks with no saving
	 * and estimate, speedup and the range are NAN. */
	char *estimate_missing;
	ga_evidence *evidence;
	size_t n_evidence;
	/* Where in the source: indices into groups[group].lines, best first,
	 * of the lines whose issue the rule measures (ga_rule_source_issues),
	 * or every ranked line for a rule without one; only lines with a file
	 * and a line number.  None without line information. */
	size_t *lines;
	size_t n_lines;
	/* No such line, but the kernel has line information: the finding
	 * points at the kernel's first line (groups[group].entry). */
	int at_entry;
	/* Identity across runs and commits (16 hex digits): a hash of the rule
	 * id, the mangled kernel name and the whitespace-normalised text of
	 * lines[0] (or of the entry line, at_entry) when the profile recorded it,
 * never the line number.
	 * Computed as GA_FINGERPRINT_VERSION says; a change of the recipe
	 * changes the version. */
	char fingerprint[17];
	/* The same rule on another launch shape of the kernel holds this one's
	 * entry of "What to do first" (ga_do.on_shapes): reports that list
	 * findings once per fingerprint leave it out. */
	int shape_folded;
} ga_finding;

#define GA_FINGERPRINT_VERSION 1

struct ga_group {
	char *name;               /* demangled */
	char *mangled;
	/* Whose kernel it is (ga_owner_of; borrowed from the rule set, or a
	 * built-in "user"), and what the matching pattern says it does
	 * ("gemm", "elementwise"...; NULL when it says nothing). */
	const ga_owner *owner;
	const char *owner_kind;
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
	/* Distinct kernels in the longest run of back-to-back launches
	 * (consecutive launch indices of the process, one stream, this grid
	 * and block) that holds one of this kernel's launches, it included. */
	int back_to_back;
	/* Its kernel launches in one iteration of its process's loop (the
	 * timeline's representative one), and all kernel launches of that
	 * iteration: launch__loop_share; 0 without a loop or a launch there. */
	long loop_launches, loop_all_launches;
	/* Kernels whose names read the same once shortened to the name alone
	 * (no "void ", template arguments or parameters): name_peers of them,
	 * this one the name_index-th by GPU time (1-based).  name_peers is 1 for
	 * a name of its own; reports tell the others apart as "name #2". */
	size_t name_index, name_peers;
	/* The groups of this kernel in its process (same pid and mangled
	 * name), one per launch shape: kernel_shapes of them, the first (the
	 * largest share) groups[kernel_first]. */
	size_t kernel_first, kernel_shapes;
	long unprofiled;          /* further launches not profiled (--max-per-kernel), charged
	                           * their mean duration */
	/* Launches not profiled that the timeline timed (0 without a
	 * timeline), and their GPU time: unprofiled keeps only those it did
	 * not time (inside the profiler's own spans).  A group
	 * with no profiled launch (n_launches 0) has only these: no class, no
	 * rule checked. */
	long timeline_launches;
	double timeline_ns;
	int below_min_share;      /* some of them for its small share of GPU time (--min-share) */
	const ga_rule **unchecked;/* rules whose metrics were not measured for it */
	size_t n_unchecked, cap_unchecked;
	/* Source-level data: the profile's entry for this kernel (same
	 * mangled name and pid, the same grid and block preferred; borrowed),
	 * or NULL, and its ranked lines (at most GA_SOURCE_TOP_LINES). */
	const ga_source *source;
	int source_sass;          /* some PC has SASS counts */
	int source_sampled;       /* the entry has PC sampling totals */
	ga_source_line *lines;
	size_t n_lines;
	/* The kernel's first line: that of its lowest PC with line
	 * information (file NULL without any), where a finding with no line of
	 * its kind points (ga_finding.at_entry).  Only file, line, pc and text
	 * are set; all borrowed from the source entry. */
	ga_source_line entry;
};

/* A kernel's part in an operation. */
typedef struct {
	size_t group;             /* index into analysis->groups */
	double time_ns;           /* of the kernel's GPU time, spent in this operation */
	double fraction;          /* time_ns / the kernel's total_ns, 0..1 */
} ga_op_kernel;

/* An operation: the launches whose innermost NVTX range has this name
 * (PyTorch's emit_nvtx: "aten::addmm"; the user's own: "train_step").
 * Unprofiled launches count at their kernel's mean duration, in the
 * ranges the collector saw them in. */
typedef struct {
	char *name;
	char *path;               /* the range path with most of its time */
	double time_ns;
	double share;             /* of all GPU time, 0..1 */
	long launches;            /* profiled and unprofiled */
	ga_op_kernel *kernels;    /* by time_ns, descending */
	size_t n_kernels;
	/* The finding that saves most of this operation's time: a finding of
	 * one of its kernels, its saving scaled by that kernel's fraction
	 * here.  -1: none. */
	long top_finding;
	double top_saving;        /* fraction of all GPU time */
} ga_op;

/* One process of the analysed profile. */
typedef struct {
	int pid;
	size_t n_kernels, n_launches;
	double total_ns;          /* GPU time of its kernels */
	double share;             /* of all profiled GPU time, 0..1 (NAN when none is known) */
} ga_process;

/* An operation an action covers: the GPU time of the action's kernels
 * spent in it. */
typedef struct {
	size_t op;                /* index into analysis->ops */
	double time_ns;
} ga_action_op;

/* A framework-level action: one rule that names its owners (the
 * framework-* rules: TF32, torch.compile...) over every kernel it fired
 * on.  What a user of a framework does is change a setting once for all
 * those kernels, so the action's saving is the sum of its findings'. */
typedef struct {
	const ga_rule *rule;      /* borrowed from the rule set */
	double saving;            /* fraction of all GPU time, sum over its findings */
	double wall_saving;       /* of the wall time: its findings' wall savings summed
	                           * (at most 1); NAN without timelines */
	double share;             /* of all GPU time, held by its kernels */
	size_t *findings;         /* indices into analysis->findings, ranked */
	size_t n_findings;
	/* The operations (NVTX ranges) its kernels ran in, by that time,
	 * descending; none unless the operations are shown. */
	ga_action_op *ops;
	size_t n_ops;
} ga_action;

/* A program rule's finding (ga_rule.program) for one process: its
 * estimate is a fraction of the process's wall time. */
typedef struct {
	const ga_rule *rule;      /* borrowed from the rule set */
	int pid;
	double estimate;          /* fraction of the process's wall time saved, 0..1 */
	double low, high;         /* the model's range (NAN: the rule's stock range) */
	double affects;           /* share of the wall time the fix acts on (rule's affects) */
	double speedup, speedup_min, speedup_max;   /* of that part: 1 / (1 - estimate / affects) */
	char *estimate_missing;   /* as ga_finding's */
	ga_evidence *evidence;
	size_t n_evidence;
	char fingerprint[17];     /* "program", the rule id, hashed: the same across runs */
} ga_pfinding;

/* Communication on a process's timeline (comm.c): the kernels whose
 * owner's kind is "comm" (NCCL's collectives, NVSHMEM's) against the
 * others, the compute.  Times are ns, summed over its devices. */
typedef struct {
	long kernels;             /* communication kernels run (the GPU's records) */
	double ns;                /* their GPU time: the sum of their durations */
	double compute_ns;        /* the other kernels' */
	/* From the representative window's intervals (measured: it has
	 * some), per device, then scaled to the run by `scale`: the loop's
	 * iterations when the window is one, else the run's communication
	 * time over the window's. */
	int measured;
	double scale;
	double exposed_ns;        /* communication running and no compute kernel */
	double free_ns;           /* compute running and no communication */
	double tail_ns;           /* the longest stretch of exposed communication */
} ga_tl_comm;

/* One process's timeline, analysed (program.c).  Shares are of its
 * observed wall time (the profiler's spans left out) times its devices. */
typedef struct {
	int pid;
	const ga_timeline *tl;    /* borrowed from the profile */
	double wall_ns;           /* observed wall time */
	size_t n_devices;
	ga_tl_device sum;         /* its devices summed */
	double busy_share, kernel_share, copy_share, copy_exposed_share;
	double idle_share[GA_IDLE__N];
	double gpu_ns;            /* its kernel groups' time */
	/* The share of its wall time in which the GPU, not the host, held the
	 * program up: 1 - idle while the host launched or ran its own code.
	 * A kernel's GPU time saved is wall time saved only there. */
	double critical_share;
	/* The representative iteration, swept again (timeline.h): its
	 * devices summed, and how many (0 when the timeline has none). */
	ga_tl_device iteration_sum;
	size_t iteration_devices;
	double iteration_busy_share;
	ga_tl_comm comm;
	/* The timeline__* values its program rules read, computed once. */
	struct ga_tl_value *values;
	size_t n_values;
} ga_tl_proc;

/* "What to do first": the kernel findings (or, when library kernels hold
 * most of the time, the framework actions) and the program findings in one
 * ranking.  With timelines the savings are shares of wall time; without,
 * shares of GPU time, as before there were timelines. */
typedef enum { GA_DO_FINDING, GA_DO_ACTION, GA_DO_PROGRAM } ga_do_kind;
typedef struct {
	ga_do_kind kind;
	size_t index;             /* into findings, actions or pfindings */
	double saving;            /* what it is ranked by */
	/* In a report of several ranks, the same advice on several ranks is
	 * one entry, the one that saves most (ranks.c): the ranks it is on;
	 * 0 in any other report. */
	size_t on_ranks;
	/* A kernel launched with several shapes (grid, block) is a group per
	 * shape, each with its own findings; the same rule's findings on one
	 * process's kernel are one entry, the one that saves most (program.c):
	 * the shapes it is on, and over them the share of all GPU time saved,
	 * of wall time (NAN without a timeline), and the speedup of those
	 * launches with its range.  on_shapes 0 or 1: the finding's own. */
	size_t on_shapes;
	double shapes_saving, shapes_wall_saving;
	double shapes_speedup, shapes_min, shapes_max;
} ga_do;

/* One rank of a data-parallel job (ranks.c): a process of the profile
 * with a rank in its record (procinfo.h). */
typedef struct {
	int pid;
	const ga_proc_info *info;   /* borrowed from the profile */
	double gpu_ns;            /* its kernels' GPU time in the analysis */
	double comm_ns;           /* of it, kernels whose owner's kind is "comm" */
	double compute_ns;        /* the rest */
	double comm_share;        /* comm_ns / gpu_ns; NAN without GPU time */
	double vs_median;         /* compute_ns / the ranks' median - 1; NAN: median 0 */
	double wall_ns;           /* its timeline's observed wall time; NAN without one */
	double busy_share;        /* its GPU busy share of that; NAN without a timeline */
	/* The straggler finding (GA_RULE_STRAGGLER) fired on it: index into
	 * pfindings, or -1. */
	long straggler;
	/* Its first entry in "What to do first" (kind and index, saving of
	 * this rank), or has_top 0. */
	ga_do top;
	int has_top;
	/* Reports show its timeline and its kernels when not verbose: the
	 * first rank and the stragglers. */
	int shown;
} ga_rank;

/* The ranks: shown as such when there are two or more (multi). */
typedef struct {
	ga_rank *v;               /* by rank, then pid */
	size_t n;
	int multi;
	long world_size;          /* the largest any records; -1: none */
	size_t n_hosts;           /* distinct host names recorded */
	double median_compute_ns, median_comm_ns;
	size_t *stragglers;       /* indices into v, by the finding's saving */
	size_t n_stragglers;
	int kernels_pid;          /* the rank whose kernels reports list (not verbose) */
	size_t *by_pid;           /* indices into v, by pid (ga_rank_of) */
	size_t *tl_order;         /* indices into a->tl, ranks' by rank first */
} ga_ranks;

/* The rank of process pid, or NULL (not a rank, or no ranks). */
const ga_rank *ga_rank_of(const ga_analysis *a, int pid);
/* The j-th of the processes' timelines (a->tl) in the order reports list
 * them: with several ranks, the ranks' by rank, then the others'; else
 * a->tl's own. */
const ga_tl_proc *ga_rank_tl(const ga_analysis *a, size_t j);
/* An entry of "What to do first": its rule, and the process its figures
 * are of (an action's: its best finding's). */
const ga_rule *ga_do_rule(const ga_analysis *a, const ga_do *d);
int ga_do_pid(const ga_analysis *a, const ga_do *d);

/* The figures an entry of "What to do first" gives for finding f: its
 * own, or where entry d (may be NULL) holds the same rule on several of
 * the kernel's launch shapes, those summed over them (program.c). */
typedef struct {
	double saving, wall_saving;     /* shares of all GPU time, of wall time */
	double speedup, speedup_min, speedup_max;
	size_t shapes;                  /* launch shapes summed; 1: f's own */
} ga_figures;
void ga_finding_figures(const ga_finding *f, const ga_do *d, ga_figures *out);

/* The launch shapes of the kernel whose first group is groups[first]
 * (the groups whose kernel_first it is), summed (shapes.c). */
typedef struct {
	double share, total_ns;
	size_t launches;          /* profiled */
	long timed, unprofiled;   /* timed by the timeline; not profiled */
} ga_kernel_sums;
void ga_kernel_sum_shapes(const ga_analysis *a, size_t first, ga_kernel_sums *out);

/* The rule whose finding names a rank a straggler. */
#define GA_RULE_STRAGGLER "rank-imbalance"

struct ga_analysis {
	const ga_profile *profile;  /* borrowed */
	ga_group *groups;           /* ordered by total time, descending */
	size_t n_groups;
	ga_finding *findings;       /* ranked by saving, descending */
	size_t n_findings;
	double total_ns;
	char **notes;               /* --verbose: why rules did not fire, etc. */
	size_t n_notes;
	size_t n_launches;          /* profiled launches of all groups */
	/* How the launches were measured: replayed one by one (kernel replay),
	 * across a loop's iterations (loop replay), not at all and counted at
	 * their kernel's mean duration; and CUDA graph launches, whose
	 * kernels were not seen. */
	struct {
		long kernel_replay, loop_replay, at_mean, graph_launches;
		long timeline;        /* not profiled, timed by the timeline */
	} measured;
	size_t n_class[GA_CLASS__COUNT];  /* groups of each class */
	ga_process *processes;      /* in the order of their first launch */
	size_t n_processes;
	ga_roofline roofline;       /* kernels[i] is groups[i]'s placement and occupancy */
	/* Operations from NVTX ranges, by time, descending; ops_shown when
	 * reports list them (--nvtx on, or auto and some launch has a range). */
	ga_op *ops;
	size_t n_ops;
	int ops_shown;
	ga_action *actions;         /* by saving, descending */
	size_t n_actions;
	double library_share;       /* of GPU time on kernels of owners not editable, 0..1 */
	/* Most of the GPU time (library_share > 1/2) is on kernels the user
	 * does not own, and some action applies: "What to do first" ranks the
	 * actions rather than single findings. */
	int framework_first;
	/* The timeline (program.c): per process, the program findings, and
	 * the one ranking every report's first actions come from. */
	ga_tl_proc *tl;
	size_t n_tl;
	ga_pfinding *pfindings;     /* by estimate of wall time, descending */
	size_t n_pfindings;
	ga_do *first;               /* every finding, action and program finding ranked */
	size_t n_first;
	int wall_currency;          /* savings in first[] are shares of wall time */
	ga_ranks ranks;             /* the processes with a rank (ranks.c) */
};

typedef struct {
	int verbose;                /* collect notes on rules that could not be evaluated */
	int nvtx;                   /* operations: 1 always, -1 never, 0 when there are ranges */
} ga_analyze_opts;

int ga_analyze(const ga_profile *p, const ga_ruleset *rs, const ga_analyze_opts *opts,
               ga_analysis *out, ga_error *err);
/* Whether ga_analyze accepts rs: a classifier that defines every constant
 * the analysis reads.  0, or -1 with err set as ga_analyze sets it (for
 * --check-rules, which loads rules without analysing). */
int ga_analyze_check_rules(const ga_ruleset *rs, ga_error *err);
void ga_analysis_free(ga_analysis *a);

/* The kinds of source line (GA_SRC_* bits) a rule is about: uncoalesced
 * access, bank conflicts, divergence (idle lanes and the branch before
 * them), stall hotspots for the stall rules; 0 for a rule the source view
 * has no kind of line for. */
unsigned ga_rule_source_issues(const ga_rule *r);

/* The owner of a kernel by its demangled and mangled names and the module
 * it was loaded from (NULL: not known), as owner.c says; *kind (if kind is
 * not NULL) gets the matching pattern's kind or NULL.  Never NULL: a
 * kernel no pattern matches is GA_OWNER_DEFAULT's, editable when the rule
 * set defines no owners. */
const ga_owner *ga_owner_of(const ga_ruleset *rs, const char *name, const char *mangled,
                            const char *module, const char **kind);


/* Highest severity among findings, or -1 when there are none. */
int ga_analysis_max_severity(const ga_analysis *a);

/* Speedup of a kernel whose time shrinks by the fraction estimate:
 * 1 / (1 - estimate); INFINITY when estimate >= 1, NAN when it is NAN or
 * negative. */
double ga_estimate_speedup(double estimate);
/* Its inverse: the fraction of the time a speedup saves, 1 - 1 / speedup;
 * NAN when the speedup is not finite and positive. */
double ga_speedup_saved(double speedup);

/* The classifier constants the analysis reads: the roofline's and the
 * source ranking's cut-offs.  Each one's unit is in its name. */
#define GA_CUT_LATENCY_LINE "latency_line_pct"
#define GA_CUT_TENSOR_MIN "roofline_tensor_min_pct"
#define GA_CUT_DRAM_MIN "roofline_dram_min_pct"
#define GA_CUT_SOURCE_WASTE "source_min_waste_pct"
#define GA_CUT_SOURCE_STALL "source_min_stall_pct"
#define GA_CUT_BRANCH_DROP "source_branch_drop_lanes"

#endif
