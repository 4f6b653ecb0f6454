/* demo.h: `gpuadvise --demo NAME`: profile a bundled sample's slow variant,
 * show its class and ranked fixes, then profile and time the fixed variants
 * and compare the measured speedup with the one the advice predicted.  With
 * no GPU, the same is shown from a recording made on a GPU machine. */
#ifndef GA_DEMO_H
#define GA_DEMO_H

#include <stddef.h>

#include <stdio.h>

#include "config.h"
#include "../report/report.h"
#include "../rules/rules.h"

typedef struct {
	const ga_config *cfg;
	const ga_ruleset *rules;
	char **metrics;         /* what to collect */
	const size_t *bundles;  /* metric bundles, see ga_live_opts */
	size_t n_metrics;
	const char *source_when; /* the rules' trigger for source lines, see ga_plan */
	const char *source_skip; /* library kernels left out of them, see ga_plan */
	const char *source_opcodes; /* rules whose kernels are disassembled, see ga_plan */
	const char *no_replay;  /* kernels never replayed, see ga_plan */
	int color;
	/* The output options (src/command/demo.c checks how they combine): */
	FILE *out;              /* stdout, or the --log-file buffer */
	const ga_reporter *reporter; /* -f other than text: the slow variant's
	                         * report in that format instead of the demo's
	                         * text; NULL for the text */
	ga_fail_mode fail_on;   /* for the JUnit report */
	int worst_severity;     /* out: the highest severity among the slow
	                         * variants' findings (-1: none), for --fail-on */
} ga_demo_ctx;

/* Returns the exit status (before --fail-on, which the caller applies). */
int ga_demo_main(ga_demo_ctx *c);

#define GA_DEMO_FORMAT "gpuadvise-demo"

#endif
