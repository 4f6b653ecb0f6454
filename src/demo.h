/* demo.h: `gpuadvise --demo NAME`: profile a bundled sample's slow variant,
 * show its class and ranked fixes, then profile and time the fixed variants
 * and compare the measured speedup with the one the advice predicted.  With
 * no GPU, the same is shown from a recording made on a GPU machine. */
#ifndef GA_DEMO_H
#define GA_DEMO_H

#include <stddef.h>

#include "config.h"
#include "rules/rules.h"

typedef struct {
	const ga_config *cfg;
	const ga_ruleset *rules;
	char **metrics;         /* what to collect */
	const size_t *bundles;  /* metric bundles, see ga_live_opts */
	size_t n_metrics;
	const char *source_when; /* the rules' trigger for source lines, see ga_plan */
	int color;
} ga_demo_ctx;

/* Returns the exit status. */
int ga_demo_main(const ga_demo_ctx *c);

#define GA_DEMO_FORMAT "gpuadvise-demo"

#endif
