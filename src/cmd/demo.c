/* demo.c: `gpuadvise --demo NAME|list|all`: the bundled samples, before and
 * after their fix (the demos themselves are in src/demo.c). */
#include "cmd.h"

#include "../collect/collect.h"
#include "../demo.h"

enum {
	OPT_DEMO = 1500,
};

static const struct argp_option options[] = {
	{"demo", OPT_DEMO, "NAME", 0, "Run a bundled sample before and after its fix: a demo "
	 "name, 'list' or 'all'.  With no GPU, show its recorded profile", 0},
	{0},
};

static error_t parse_opt(int key, char *arg, struct argp_state *state)
{
	ga_cmd_parse *ps = state->input;

	switch (key) {
	case OPT_DEMO:
		ps->cfg->demo = arg;
		break;
	default:
		return ARGP_ERR_UNKNOWN;
	}
	return 0;
}

const struct argp ga_cmd_demo_argp = {options, parse_opt, NULL, NULL, NULL, NULL, NULL};

int ga_cmd_demo(const ga_config *cfg, const ga_ruleset *rs)
{
	ga_plan mp;
	int rc;

	ga_cmd_plan(cfg, rs, &mp);
	ga_demo_ctx dc = {
		.cfg = cfg,
		.rules = rs,
		.metrics = mp.names,
		.bundles = mp.bundle,
		.n_metrics = mp.n,
		.source_when = mp.source_when,
		.color = ga_cmd_use_color(cfg, stdout),
	};
	rc = ga_demo_main(&dc);
	ga_plan_free(&mp);
	/* Interrupted while a variant ran (collect.h): as for PROGRAM. */
	if (ga_signals_received())
		rc = 128 + ga_signals_received();
	return rc;
}
