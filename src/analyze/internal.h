/* internal.h: what the files of the analysis stage share and nobody else
 * sees. */
#ifndef GA_ANALYZE_INTERNAL_H
#define GA_ANALYZE_INTERNAL_H

#include "analyze.h"

/* The cut-offs the analysis reads from the classifier's constants. */
typedef struct {
	ga_roof_cuts roof;
	ga_source_cuts source;    /* warp_size: set per profile, from its device */
} ga_cuts;

/* Read every cut-off; a classifier that lacks one fails with
 * GA_ERR_RULES, naming its file and the constant. */
int ga_cuts_read(const ga_ruleset *rs, ga_cuts *cuts, ga_error *err);

/* Each group's same_launch and back_to_back counts (shapes.c). */
void ga_count_launch_shapes(const ga_profile *p, ga_analysis *a);
/* Each group's launches in one iteration of t's loop, and all of the
 * iteration's kernel launches; group_of: each timeline kernel's group
 * (shapes.c). */
void ga_count_loop_launches(const ga_timeline *t, const size_t *group_of, ga_analysis *a);

/* The parts of the analysis computed from the ranked groups and findings:
 * counts, processes, the roofline and the source lines (summary.c). */
void ga_summarize(ga_analysis *a, const ga_cuts *cuts);
/* The source-level data measured for a group (same mangled name and pid;
 * the same grid and block preferred), or NULL (summary.c). */
const ga_source *ga_group_source(const ga_profile *p, const ga_group *g);

/* Each finding's source lines and fingerprint, once the groups' lines are
 * ranked (locate.c). */
void ga_locate_findings(ga_analysis *a);

/* The operations (ops.c), from the ranked groups and findings; nvtx as
 * ga_analyze_opts.nvtx. */
void ga_group_ops(ga_analysis *a, int nvtx);
/* Each action's operations (ga_action.ops), once the operations and the
 * actions are known. */
void ga_action_ops(ga_analysis *a);
/* Share of a group's launch time (0..1) whose NVTX path is in
 * scaled_dot_product_attention's math fallback (ops.c); 0 without paths:
 * no range, no guess. */
double ga_sdpa_math_share(const ga_profile *p, const ga_group *g);
void ga_ops_free(ga_analysis *a);

/* A fired rule's estimate and range (program.c), kernel or program: the
 * estimate clamped to 0..1; with a model range (ranged), low and high
 * clamped around it, else NAN; the speedups those give on the part of the
 * time the fix acts on (span, 0..1; 1: all of it), the rule's stock
 * range without a model range. */
typedef struct {
	double estimate, low, high, speedup, speedup_min, speedup_max;
} ga_model_est;
void ga_model_estimate(const ga_rule *r, double est, int ranged, double lo, double hi,
                       double span, ga_model_est *out);

/* The timeline's part (program.c): per process its figures, the program
 * rules' findings, the kernel findings' wall savings, "What to do first";
 * once everything else is known. */
void ga_program(ga_analysis *a, const ga_ruleset *rs);
void ga_program_free(ga_analysis *a);

/* Communication on a timeline (comm.c): the kernels that communicate, by
 * mangled name (1) or not (0), from the groups' owners, into *out (keys
 * borrowed from the groups); and a process's figures. */
void ga_comm_names(const ga_analysis *a, ga_map *out);
void ga_comm_figures(const ga_timeline *t, const ga_map *comm_names, ga_tl_comm *c);

/* The ranks (ranks.c): their figures, once the groups and the timelines'
 * figures are known (before the program rules, which read them); a
 * rank__* value of process pid (name without the prefix): 0, or -1 when
 * it has none; after the ranking, the stragglers, each rank's first
 * entry, and "What to do first" with one entry per advice. */
void ga_ranks_figures(ga_analysis *a);
int ga_rank_value(const ga_analysis *a, int pid, const char *name, double *out);
void ga_ranks_finish(ga_analysis *a);
void ga_ranks_free(ga_analysis *a);

#endif
