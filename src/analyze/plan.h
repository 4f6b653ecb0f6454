/* plan.h: what a live run collects, from the rule set and the roofline.
 *
 * The metrics come in bundles that the collector keeps together in one
 * metric set (see ga_ruleset_metric_bundles), numbered from 0 in order of
 * importance (a bundle whose metrics were all planned earlier leaves its
 * number unused):
 *   0      the classifier's metrics (so that set 0 classifies) and the
 *          duration, which weighs every launch;
 *   1, 2   the roofline's bundles (ga_roofline_metrics): its byte, peak
 *          and clock counters, then its FLOP counters;
 *   3 ...  each rule's further metrics, rules in checklist order;
 *   last   the user's --metrics.
 * --quick takes only the classifier's required metrics (bundle 0), no
 * roofline and no rule's, then --metrics (bundle 1).  A metric already
 * planned keeps its first bundle. */
#ifndef GA_PLAN_H
#define GA_PLAN_H

#include <stddef.h>

#include "../rules/rules.h"

typedef struct {
	int quick;                       /* --quick */
	const char *const *extra;        /* --metrics, collected last */
	size_t n_extra;
} ga_plan_opts;

typedef struct {
	char **names;                    /* metric names, in plan order */
	size_t *bundle;                  /* bundle[i] of names[i], ascending */
	size_t n, cap;
	/* When the collector measures a kernel's source lines on its own: the
	 * rules' source_lines triggers, one line "RULE-ID<TAB>EXPRESSION" per
	 * rule, over metric names (ga_ruleset_source_trigger), malloc'd; NULL when no rule has one,
	 * and with --quick, which collects none of their metrics. */
	char *source_when;
	/* ... and the kernels it never measures them for, library kernels
	 * (ga_ruleset_source_skip), malloc'd; NULL: none. */
	char *source_skip;
	/* The rules whose findings need opcodes at the source view
	 * (ga_ruleset_source_opcodes), malloc'd; NULL: none. */
	char *source_opcodes;
	/* The kernels never replayed, communication kernels
	 * (ga_ruleset_no_replay), malloc'd; NULL: the owners name none. */
	char *no_replay;
} ga_plan;

/* Fill *out (freed with ga_plan_free) for rule set rs; o may be NULL (no
 * --quick, no --metrics). */
void ga_plan_metrics(const ga_ruleset *rs, const ga_plan_opts *o, ga_plan *out);
void ga_plan_free(ga_plan *p);

#endif
