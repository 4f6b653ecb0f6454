/* plan.c: what a run collects.  The profile and demo commands collect this
 * plan, --list-metrics prints it.
 *
 * Metrics to collect: what the rules read, the roofline's, the duration and
 * --metrics, in bundles that the collector keeps together in one metric set
 * (see ga_ruleset_metric_bundles).  In order of importance: the classifier
 * (so set 0 classifies), the roofline's byte and peak counters, its FLOP
 * counters (a replay pass of their own), each rule's, then --metrics. */
#include "cmd.h"

#include <stdlib.h>
#include <string.h>

#include "../report/roofline.h"
#include "../rules/engine.h"

static void plan_add(metric_plan *mp, const char *name, size_t bundle)
{
	size_t cap = mp->cap;
	for (size_t j = 0; j < mp->n; j++)
		if (strcmp(mp->names[j], name) == 0)
			return;
	GA_PUSH(mp->names, mp->n, mp->cap, ga_xstrdup(name));
	if (mp->cap != cap || !mp->bundle)
		mp->bundle = ga_xrealloc(mp->bundle, mp->cap * sizeof(*mp->bundle));
	mp->bundle[mp->n - 1] = bundle;
}

void plan_metrics(const ga_config *cfg, const ga_ruleset *rs, metric_plan *mp)
{
	char **names = NULL;
	size_t *bundle = NULL, n, next = 0;

	memset(mp, 0, sizeof(*mp));
	if (cfg->quick) {
		n = ga_classifier_required_metric_names(rs, &names);
		bundle = ga_xcalloc(n ? n : 1, sizeof(*bundle));
	} else {
		n = ga_ruleset_metric_bundles(rs, &names, &bundle);
	}
	for (size_t i = 0; i < n; i++)
		if (bundle[i] == 0)
			plan_add(mp, names[i], 0);
	/* The duration weighs every launch: the collector puts it in every set. */
	plan_add(mp, "gpu__time_duration.sum", 0);
	next = 1;
	if (!cfg->quick) {
		const char **roof = NULL;
		size_t n_roof = ga_roofline_metric_names(&roof);
		for (int flops = 0; flops < 2; flops++, next++)
			for (size_t i = 0; i < n_roof; i++)
				if ((strstr(roof[i], "__sass_") && !strstr(roof[i], ".peak_")) == flops)
					plan_add(mp, roof[i], next);
	}
	for (size_t i = 0; i < n; i++)
		if (bundle[i] > 0)
			plan_add(mp, names[i], next + bundle[i] - 1);
	if (n && bundle[n - 1] > 0)
		next += bundle[n - 1];
	for (size_t i = 0; i < cfg->n_extra_metrics; i++)
		plan_add(mp, cfg->extra_metrics[i], next);
	for (size_t i = 0; i < n; i++)
		free(names[i]);
	free(names);
	free(bundle);
}

void plan_free(metric_plan *mp)
{
	for (size_t i = 0; i < mp->n; i++)
		free(mp->names[i]);
	free(mp->names);
	free(mp->bundle);
	memset(mp, 0, sizeof(*mp));
}
