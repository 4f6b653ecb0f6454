/* trigger.h: the rules' source-line trigger (GA_ENV_SOURCE_WHEN), evaluated
 * in the injection library over the metric values of one profiled launch.
 *
 * The trigger is an expression of the rule language (src/rules/expr.h)
 * written in CUPTI metric names.  Its top-level "or" operands are evaluated
 * one by one, each over the launch's values: with several metric sets a
 * launch measures only some of the metrics, and one operand's metrics may
 * all be there while another's are not.  An operand that reads a metric
 * the launch did not measure (NAN), or that cannot be evaluated, does not
 * hold; the trigger holds when one operand does.  No CUDA or CUPTI here. */
#ifndef GA_TRIGGER_H
#define GA_TRIGGER_H

#include <stddef.h>

typedef struct ga_trigger ga_trigger;

/* Parse text.  NULL on a parse error, with msg saying where and what. */
ga_trigger *ga_trigger_parse(const char *text, char *msg, size_t msglen);
void ga_trigger_free(ga_trigger *t);

/* Does the trigger hold over values[i] of names[i] (NAN: not measured)?
 * 1 with *why set (malloc'd: "rule trigger: NAME=VALUE, ..." for the
 * metrics of the operand that held), else 0. */
int ga_trigger_holds(const ga_trigger *t, char *const *names, const double *values, size_t n,
                     char **why);

#endif
