/* plan.c: the metrics a live run collects, in bundles.  See plan.h. */
#include "plan.h"

#include <stdlib.h>
#include <string.h>

#include "../util/util.h"
#include "roofline.h"

#define M_DURATION "gpu__time_duration.sum"
/* The graphics engine's active and elapsed cycles: the kernel's own share
 * of a loop's range (ga_launch_range_correct); they cost no pass. */
#define M_GR_ACTIVE "gr__cycles_active.max"
#define M_GR_ELAPSED "gr__cycles_elapsed.max"

/* Add name to bundle unless it is planned already (the first bundle holds). */
static void add(ga_plan *p, const char *name, size_t bundle)
{
	size_t cap = p->cap;
	for (size_t j = 0; j < p->n; j++)
		if (strcmp(p->names[j], name) == 0)
			return;
	GA_PUSH(p->names, p->n, p->cap, ga_xstrdup(name));
	if (p->cap != cap || !p->bundle)
		p->bundle = ga_xrealloc(p->bundle, p->cap * sizeof(*p->bundle));
	p->bundle[p->n - 1] = bundle;
}

/* The roofline's bundles from bundle first on; returns how many it took. */
static size_t add_roofline(ga_plan *p, size_t first)
{
	const char *const *names;
	const size_t *bundle;
	size_t n = ga_roofline_metrics(&names, &bundle), most = 0;

	for (size_t i = 0; i < n; i++)
		if (bundle[i] > most)
			most = bundle[i];
	for (size_t b = 0; n && b <= most; b++)
		for (size_t i = 0; i < n; i++)
			if (bundle[i] == b)
				add(p, names[i], first + b);
	return n ? most + 1 : 0;
}

void ga_plan_metrics(const ga_ruleset *rs, const ga_plan_opts *o, ga_plan *out)
{
	static const ga_plan_opts none = {0};
	char **names = NULL;
	size_t *bundle = NULL, n, next = 1;

	if (!o)
		o = &none;
	memset(out, 0, sizeof(*out));
	if (o->quick) {
		n = ga_classifier_required_metric_names(rs, &names);
		bundle = ga_xcalloc(n ? n : 1, sizeof(*bundle));
	} else {
		n = ga_ruleset_metric_bundles(rs, &names, &bundle);
	}
	for (size_t i = 0; i < n; i++)
		if (bundle[i] == 0)
			add(out, names[i], 0);
	add(out, M_DURATION, 0);
	add(out, M_GR_ACTIVE, 0);
	add(out, M_GR_ELAPSED, 0);
	if (!o->quick)
		next += add_roofline(out, next);
	for (size_t i = 0; i < n; i++)
		if (bundle[i] > 0)
			add(out, names[i], next + bundle[i] - 1);
	if (n && bundle[n - 1] > 0)
		next += bundle[n - 1];
	for (size_t i = 0; i < o->n_extra; i++)
		add(out, o->extra[i], next);
	if (!o->quick) {
		out->source_when = ga_ruleset_source_trigger(rs);
		out->source_skip = ga_ruleset_source_skip(rs);
		out->source_opcodes = ga_ruleset_source_opcodes(rs);
	}
	/* Even with --quick: a replayed communication kernel never ends. */
	out->no_replay = ga_ruleset_no_replay(rs);
	for (size_t i = 0; i < n; i++)
		free(names[i]);
	free(names);
	free(bundle);
}

void ga_plan_free(ga_plan *p)
{
	for (size_t i = 0; i < p->n; i++)
		free(p->names[i]);
	free(p->names);
	free(p->bundle);
	free(p->source_when);
	free(p->source_skip);
	free(p->source_opcodes);
	free(p->no_replay);
	memset(p, 0, sizeof(*p));
}
