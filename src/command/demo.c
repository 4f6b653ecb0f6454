/* demo.c: `gpuadvise --demo NAME|list|all`: the bundled samples, before and
 * after their fix (the demos themselves are in demos.c). */
#include "cmd.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "../collect/collect.h"
#include "demos.h"

enum {
	OPT_DEMO = 1500,
};

static const struct argp_option options[] = {
	{"demo", OPT_DEMO, "NAME", 0, "Run a bundled sample before and after its fix: a demo "
	 "name, 'list' or 'all'.  With no GPU, show its recorded profile.  --log-file, "
	 "--fail-on (the slow variant's findings) and -o (the profiles shown) apply; -f FMT "
	 "gives the slow variant's report in FMT (one demo only)", 0},
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

/* The output options that cannot apply to the demo asked for: a message,
 * or NULL. */
static const char *demo_refusal(const ga_config *cfg, int other_format)
{
	int list = strcmp(cfg->demo, "list") == 0;
	int all = strcmp(cfg->demo, "all") == 0;

	if (list && (other_format || cfg->fail_on >= 0 || cfg->export_path))
		return "--demo list names the demos: -f, --fail-on and -o apply to a demo "
		       "(--demo NAME)";
	if (all && other_format)
		return "--demo all -f FMT: ten reports do not make one document; give one demo "
		       "(--demo NAME -f FMT) or the text";
	return NULL;
}

int ga_cmd_demo(const ga_config *cfg, const ga_ruleset *rs)
{
	ga_error err = {0};
	ga_plan mp;
	char *text = NULL;
	size_t len = 0;
	int rc;
	int other_format = cfg->format && strcmp(cfg->format, "text") != 0;
	const char *refusal = demo_refusal(cfg, other_format);

	if (refusal) {
		fprintf(stderr, "gpuadvise: %s\n", refusal);
		return GA_EXIT_USAGE;
	}
	/* --log-file: built in memory and written at once, as for reports. */
	FILE *out = cfg->log_file ? open_memstream(&text, &len) : stdout;
	if (!out) {
		fprintf(stderr, "gpuadvise: cannot write %s: %s\n", cfg->log_file, strerror(errno));
		return GA_EXIT_USAGE;
	}
	ga_cmd_plan(cfg, rs, &mp);
	ga_demo_ctx dc = {
		.cfg = cfg,
		.rules = rs,
		.metrics = mp.names,
		.bundles = mp.bundle,
		.n_metrics = mp.n,
		.source_when = mp.source_when,
		.source_skip = mp.source_skip,
		.source_opcodes = mp.source_opcodes,
		.no_replay = mp.no_replay,
		.color = ga_cmd_use_color(cfg, out),
		.out = out,
		.reporter = other_format ? ga_reporter_find(cfg->format) : NULL,
		.fail_on = cfg->fail_on >= 0 ? (ga_fail_mode)(GA_FAIL_LOW + cfg->fail_on)
		                             : GA_FAIL_DEFAULT,
		.worst_severity = -1,
	};
	rc = ga_demo_main(&dc);
	ga_plan_free(&mp);
	if (out != stdout) {
		if (fclose(out) != 0 && rc == 0)
			rc = GA_EXIT_USAGE;
		/* A demo that failed still leaves what it showed. */
		if (len && ga_write_file_atomic(cfg->log_file, text, len, &err) != 0) {
			fprintf(stderr, "gpuadvise: %s\n", err.msg);
			rc = GA_EXIT_USAGE;
		}
		free(text);
	}
	if (rc == 0 && cfg->fail_on >= 0 && dc.worst_severity >= cfg->fail_on)
		rc = GA_EXIT_FINDINGS;
	/* Interrupted while a variant ran (collect.h): as for PROGRAM. */
	if (ga_signals_received())
		rc = 128 + ga_signals_received();
	return rc;
}
