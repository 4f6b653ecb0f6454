/* import.c: `gpuadvise --import FILE...`: analyse saved profiles (or JSON
 * reports) on any machine, several files pooled into one profile; and
 * --baseline, the older profile a report is compared with, which the
 * profile command uses too. */
#include "cmd.h"

#include <float.h>
#include <stdlib.h>
#include <string.h>

enum {
	OPT_IMPORT = 'i',
	OPT_BASELINE = 1100,
	OPT_REGRESSION_THRESHOLD,
	OPT_BASELINE_ANY_GPU,
};

static const struct argp_option options[] = {
	{"import", OPT_IMPORT, "FILE", 0, "Analyse a saved profile (or JSON report) instead of "
	 "running a program; repeat it, or give more FILE.json after it (--import rank*.json), "
	 "to analyse several as one job", 0},
	{"baseline", OPT_BASELINE, "FILE", 0, "Compare with an older profile or JSON report, "
	 "kernel by kernel: time, class, findings", 0},
	{"regression-threshold", OPT_REGRESSION_THRESHOLD, "PCT", 0, "With --baseline: a kernel "
	 "more than PCT percent slower is a regression (default 10)", 0},
	{"baseline-any-gpu", OPT_BASELINE_ANY_GPU, 0, 0, "With --fail-on regression: accept a "
	 "baseline recorded on another GPU, comparing classes and findings only (durations are "
	 "not comparable); without it that is an error", 0},
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
	case OPT_BASELINE_ANY_GPU:
		c->baseline_any_gpu = 1;
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

/* With -f junit, a file that cannot be read is still a JUnit document (one
 * test case in error), on standard output or in --log-file: a CI job that
 * redirects the report gets the reason, not an empty file. */
static void junit_input_error(const ga_config *cfg, const char *what, const char *msg)
{
	ga_error err = {0};
	char *text = NULL;
	size_t len = 0;

	if (!cfg->format || strcmp(cfg->format, "junit") != 0)
		return;
	if (!cfg->log_file) {
		ga_report_junit_error(stdout, what, msg);
		return;
	}
	FILE *mem = open_memstream(&text, &len);
	if (!mem)
		return;
	int rc = ga_report_junit_error(mem, what, msg);
	if (fclose(mem) == 0 && rc == 0 &&
	    ga_write_file_atomic(cfg->log_file, text, len, &err) != 0)
		fprintf(stderr, "gpuadvise: %s\n", err.msg);
	free(text);
}

int ga_cmd_load_baseline(const ga_config *cfg, ga_profile *base)
{
	ga_error err = {0};

	ga_profile_init(base);
	/* ga_profile_load reads reports too, parsing the file once. */
	if (cfg->baseline && ga_profile_load(base, cfg->baseline, &err) != 0) {
		fprintf(stderr, "gpuadvise: --baseline: %s\n", err.msg);
		junit_input_error(cfg, cfg->baseline, err.msg);
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
			junit_input_error(cfg, cfg->imports[i], err.msg);
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
