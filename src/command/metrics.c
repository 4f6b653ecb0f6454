/* metrics.c: `gpuadvise --list-metrics [--chip CHIP]`: the CUPTI metrics a
 * run collects (plan.c), and with --chip the metric sets they make on that
 * chip and the replay passes each costs, worked out offline with CUPTI's
 * host API (no GPU needed). */
#include "cmd.h"

#include <stdlib.h>
#include <string.h>

#include "../collect/collect.h"
#include "ga_build.h"

enum {
	OPT_LIST_METRICS = 1400,
	OPT_CHIP,
};

static const struct argp_option options[] = {
	{"list-metrics", OPT_LIST_METRICS, 0, 0, "List the CUPTI metrics the rules read (with "
	 "--chip, also the replay passes they cost)", 0},
	{"chip", OPT_CHIP, "CHIP", 0, "Chip for --list-metrics, e.g. GH100 (no GPU needed)", 0},
	{0},
};

static error_t parse_opt(int key, char *arg, struct argp_state *state)
{
	ga_cmd_parse *ps = state->input;

	switch (key) {
	case OPT_LIST_METRICS:
		ps->cfg->list_metrics = 1;
		break;
	case OPT_CHIP:
		ps->cfg->chip = arg;
		break;
	default:
		return ARGP_ERR_UNKNOWN;
	}
	return 0;
}

const struct argp ga_cmd_metrics_argp = {options, parse_opt, NULL, NULL, NULL, NULL, NULL};

#if GA_HAVE_CUPTI
/* The metric sets a live run would use on cfg->chip (--max-passes), with
 * their passes; the duration goes into every set, as the collector does. */
static int list_metric_sets(const ga_config *cfg, const ga_plan *mp)
{
	ga_error err = {0};
	ga_host *h = ga_host_new(cfg->chip, NULL, &err);
	size_t bad = 0, n_sets, *set_of;
	const char **v;

	if (!h) {
		fprintf(stderr, "gpuadvise: %s\n", err.msg);
		return GA_EXIT_PROFILING;
	}
	for (size_t i = 0; i < mp->n; i++)
		if (!ga_host_metric_valid(h, mp->names[i])) {
			fprintf(stderr, "gpuadvise: %s: unknown metric on %s\n", mp->names[i], cfg->chip);
			bad++;
		}
	ga_host_free(h);
	if (bad)
		return GA_EXIT_RULES;
	set_of = ga_xcalloc(mp->n, sizeof(*set_of));
	v = ga_xcalloc(mp->n + 1, sizeof(*v));
	n_sets = ga_host_pack(cfg->chip, NULL, 0, (const char *const *)mp->names, mp->bundle, mp->n,
	                     (size_t)cfg->max_passes, set_of);
	long most = 0;
	for (size_t s = 0; s < n_sets; s++) {
		size_t k = 0;
		for (size_t i = 0; i < mp->n; i++)
			if (set_of[i] == s && strcmp(mp->names[i], "gpu__time_duration.sum") != 0)
				v[k++] = mp->names[i];
		v[k++] = "gpu__time_duration.sum";
		long p = ga_host_passes(cfg->chip, NULL, v, k);
		if (p > most)
			most = p;
		printf("# set %zu: %zu metrics, %ld replay passes\n", s + 1, k, p);
		for (size_t i = 0; i < k; i++)
			printf("%s\n", v[i]);
	}
	long all = ga_host_passes(cfg->chip, NULL, (const char *const *)mp->names, mp->n);
	printf("# %zu metrics on %s: %zu set%s of at most %ld replay pass%s per launch", mp->n,
	       cfg->chip, n_sets, n_sets == 1 ? "" : "s", most, most == 1 ? "" : "es");
	if (n_sets > 1)
		printf(", taken in turn by repeated launches of a kernel (all at once: %ld pass%s)",
		       all, all == 1 ? "" : "es");
	printf("\n");
	free(v);
	free(set_of);
	return 0;
}
#endif

int ga_cmd_list_metrics(const ga_config *cfg, const ga_ruleset *rs)
{
	ga_plan mp;
	int rc = 0;

	ga_cmd_plan(cfg, rs, &mp);
	if (!cfg->chip) {
		for (size_t i = 0; i < mp.n; i++)
			printf("%s\n", mp.names[i]);
	} else {
#if GA_HAVE_CUPTI
		rc = list_metric_sets(cfg, &mp);
#else
		fprintf(stderr, "gpuadvise: built without CUPTI: --chip is not available\n");
		rc = GA_EXIT_PROFILING;
#endif
	}
	ga_plan_free(&mp);
	return rc;
}
