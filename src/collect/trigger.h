/* trigger.h: the rules' source-line trigger (GA_ENV_SOURCE_WHEN), evaluated
 * in the injection library over the metric values of one profiled launch.
 *
 * The trigger is one line per rule, "RULE-ID<TAB>EXPRESSION" (see
 * protocol.h), each expression of the rule language (src/rules/expr.h)
 * written in CUPTI metric names.  Each rule's expression is evaluated on
 * its own over the launch's values: with several metric sets a launch
 * measures only some of the metrics, and one rule's metrics may all be
 * there while another's are not.  An expression that reads a metric the
 * launch did not measure (NAN), or that cannot be evaluated, does not
 * hold.  No CUDA or CUPTI here. */
#ifndef GA_TRIGGER_H
#define GA_TRIGGER_H

#include <stddef.h>

typedef struct ga_trigger ga_trigger;

/* Told about a line of the trigger that is left out: msg names the rule
 * (or the line, where it has no rule id) and says where and what. */
typedef void (*ga_trigger_bad_fn)(void *ctx, const char *msg);

/* Parse text.  A line that is not "RULE-ID<TAB>EXPRESSION", or whose
 * expression does not parse, is left out and passed to bad (may be NULL);
 * the other lines still work.  Empty lines are skipped.  NULL when no line
 * is left. */
ga_trigger *ga_trigger_parse(const char *text, ga_trigger_bad_fn bad, void *ctx);
void ga_trigger_free(ga_trigger *t);

/* Which rules hold over values[i] of names[i] (NAN: not measured)?  1 with
 * *why set (malloc'd: "rule ID", or "rules ID, ID, ..." in the trigger's
 * order), else 0.  The metric values stay out of it: a report shows the
 * lines' own numbers. */
int ga_trigger_holds(const ga_trigger *t, char *const *names, const double *values, size_t n,
                     char **why);

/* Kernels left out of the default source lines (GA_ENV_SOURCE_SKIP,
 * protocol.h): lines "glob<TAB>PATTERN" or "regex<TAB>PATTERN", the first
 * that matches deciding: out, unless the line starts with '!' (an editable
 * owner's).  A line that is neither, or whose regex does not compile, is
 * left out and passed to bad.  NULL when no line is left. */
typedef struct ga_name_filter ga_name_filter;
ga_name_filter *ga_name_filter_parse(const char *text, ga_trigger_bad_fn bad, void *ctx);
/* Is the kernel left out: does a pattern match it (ga_names_match; either
 * name may be NULL), the first that does without '!'?  0 for a NULL
 * filter. */
int ga_name_filter_matches(const ga_name_filter *f, const char *name, const char *mangled);
void ga_name_filter_free(ga_name_filter *f);

#endif
