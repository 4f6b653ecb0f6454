/* import.c: `gpuadvise --import FILE...`: analyse saved profiles (or JSON
 * reports) on any machine, several files pooled into one profile; and
 * --baseline, the older profile a report is compared with, which the
 * profile command uses too. */
#include "cmd.h"

#include <float.h>
#include <stdlib.h>

enum {
	OPT_IMPORT = 'i',
	OPT_BASELINE = 1100,
	OPT_REGRESSION_THRESHOLD,
};

static const struct argp_option options[] = {
	{"import", OPT_IMPORT, "FILE", 0, "Analyse a saved profile (or JSON report) instead of "
	 "running a program", 0},
	{"baseline", OPT_BASELINE, "FILE", 0, "Compare with an older profile or JSON report, "
	 "kernel by kernel: time, class, findings", 0},
	{"regression-threshold", OPT_REGRESSION_THRESHOLD, "PCT", 0, "With --baseline: a kernel "
	 "more than PCT percent slower is a regression (default 10)", 0},
	{0},
};

static error_t parse_opt(int key, char *arg, struct argp_state *state)
{
	ga_cmd_parse *ps = state->input;
	ga_config *c = ps->cfg;

	switch (key) {
	case OPT_IMPORT:
		GA_PUSH(c->imports, c->n_imports, ps->cap_imports, arg);
		break;
	case OPT_BASELINE:
		c->baseline = arg;
		break;
	case OPT_REGRESSION_THRESHOLD:
		c->regression_threshold = ga_cmd_parse_pct(state, "--regression-threshold", arg,
		                                           DBL_MAX);
		break;
	default:
		return ARGP_ERR_UNKNOWN;
	}
	return 0;
}

const struct argp ga_cmd_import_argp = {options, parse_opt, NULL, NULL, NULL, NULL, NULL};

int ga_cmd_load_baseline(const ga_config *cfg, ga_profile *base)
{
	ga_error err = {0};

	ga_profile_init(base);
	/* ga_profile_load reads reports too, parsing the file once. */
	if (cfg->baseline && ga_profile_load(base, cfg->baseline, &err) != 0) {
		fprintf(stderr, "gpuadvise: --baseline: %s\n", err.msg);
		return GA_EXIT_USAGE;
	}
	return 0;
}

int ga_cmd_import(const ga_config *cfg, const ga_ruleset *rs, const ga_profile *baseline)
{
	ga_profile p;
	ga_error err = {0};
	ga_report_input *inputs = ga_xcalloc(cfg->n_imports ? cfg->n_imports : 1, sizeof(*inputs));
	int rc;

	ga_profile_init(&p);
	for (size_t i = 0; i < cfg->n_imports; i++) {
		ga_profile one;
		if (ga_profile_load(&one, cfg->imports[i], &err) != 0) {
			fprintf(stderr, "gpuadvise: %s\n", err.msg);
			ga_profile_free(&one);
			ga_profile_free(&p);
			free(inputs);
			return GA_EXIT_USAGE;
		}
		inputs[i].path = cfg->imports[i];
		inputs[i].first_launch = i == 0 ? 0 : p.n_launches;
		inputs[i].n_launches = one.n_launches;
		if (i == 0)
			p = one;
		else
			ga_profile_merge(&p, &one);
	}
	ga_cmd_report_extra x = {.baseline = baseline, .inputs = inputs, .n_inputs = cfg->n_imports};
	rc = ga_cmd_report(cfg, rs, &p, &x);
	ga_profile_free(&p);
	free(inputs);
	return rc;
}
