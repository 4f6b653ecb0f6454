/* report.c: what the profiling commands (profile, import) share: the output
 * options, output file names, and one profile analysed, reported in the
 * chosen format and saved with -o. */
#include "cmd.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "../analyze/baseline.h"
#include "outname.h"
#include "../analyze/analyze.h"

enum {
	OPT_LOG_FILE = 1200,
	OPT_FAIL_ON,
	OPT_PER_LAUNCH,
	OPT_COLOR,
	OPT_ROOFLINE,
	OPT_NO_ROOFLINE,
	OPT_SOURCE_ROOT,
	OPT_FORMAT,
	OPT_VERBOSE,
	OPT_NVTX,
};

static const struct argp_option options[] = {
	{"export", 'o', "FILE", 0, "Write the profile as JSON to FILE (%p: pid, %h: host name, "
	 "%q{ENV}: environment variable ENV, %%: a %); an existing FILE only with -f", 0},
	{"force-overwrite", 'f', 0, 0, "Let -o replace an existing file (as in Nsight Compute; "
	 "before 0.2, -f was --format)", 0},
	{"format", OPT_FORMAT, "FMT", 0, "Report format: text (default), json, markdown, junit, html "
	 "(one self-contained page with the roofline), sarif (SARIF 2.1.0 for code scanning)", 0},
	{"source-root", OPT_SOURCE_ROOT, "DIR", 0, "SARIF: source file locations relative to DIR "
	 "(default: the current directory), the repository's root in CI", 0},
	{"log-file", OPT_LOG_FILE, "FILE", 0, "Write the report to FILE instead of standard "
	 "output (%p, %h, %q{ENV} as for -o)", 0},
	{"fail-on", OPT_FAIL_ON, "SEVERITY", 0, "Exit with status 1 when a finding of SEVERITY "
	 "(low, medium, high) or above is reported; 'regression': when a kernel regressed "
	 "against --baseline", 0},
	{"verbose", OPT_VERBOSE, 0, 0, "Show every finding, the class reasoning, and rules that could "
	 "not be evaluated (missing metrics)", 0},
	{"per-launch", OPT_PER_LAUNCH, 0, 0, "List every launch of each kernel", 0},
	{"nvtx", OPT_NVTX, "WHEN", 0, "Group the findings by operation, the program's innermost "
	 "NVTX range (PyTorch: torch.autograd.profiler.emit_nvtx()): auto (default: when the "
	 "profile has ranges), on, off (the program's ranges are not even read)", 0},
	{"roofline", OPT_ROOFLINE, 0, 0, "Draw the roofline and occupancy of every kernel in the "
	 "text report (default: only when it goes to a terminal)", 0},
	{"no-roofline", OPT_NO_ROOFLINE, 0, 0, "Never draw the roofline in the text report", 0},
	{"color", OPT_COLOR, "WHEN", 0, "Colour: auto (default: only on a terminal, never when "
	 "NO_COLOR is set), always, never", 0},
	{0},
};

static void parse_color(struct argp_state *state, ga_config *c, const char *arg)
{
	if (strcmp(arg, "auto") == 0)
		c->color = GA_COLOR_AUTO;
	else if (strcmp(arg, "always") == 0)
		c->color = GA_COLOR_ALWAYS;
	else if (strcmp(arg, "never") == 0)
		c->color = GA_COLOR_NEVER;
	else
		argp_error(state, "--color expects auto, always or never, not '%s'", arg);
}

static error_t parse_opt(int key, char *arg, struct argp_state *state)
{
	ga_cmd_parse *ps = state->input;
	ga_config *c = ps->cfg;

	switch (key) {
	case 'o':
		c->export_path = arg;
		break;
	case 'f':
		c->force_overwrite = 1;
		break;
	case OPT_FORMAT:
		if (!ga_reporter_find(arg))
			argp_error(state, "unknown format '%s' (text, json, markdown, junit, html, sarif)",
			           arg);
		c->format = arg;
		break;
	case OPT_LOG_FILE:
		c->log_file = arg;
		break;
	case OPT_FAIL_ON:
		c->fail_on_regression = strcmp(arg, "regression") == 0;
		c->fail_on = c->fail_on_regression ? -1 : ga_severity_from_name(arg);
		if (c->fail_on < 0 && !c->fail_on_regression)
			argp_error(state, "--fail-on expects low, medium, high or regression, not '%s'",
			           arg);
		break;
	case OPT_VERBOSE:
		c->verbose = 1;
		break;
	case OPT_PER_LAUNCH:
		c->per_launch = 1;
		break;
	case OPT_ROOFLINE:
		c->roofline = 1;
		break;
	case OPT_NO_ROOFLINE:
		c->roofline = -1;
		break;
	case OPT_COLOR:
		parse_color(state, c, arg);
		break;
	case OPT_SOURCE_ROOT:
		c->source_root = arg;
		break;
	case OPT_NVTX:
		if (strcmp(arg, "auto") == 0 || strcmp(arg, "on") == 0 || strcmp(arg, "off") == 0)
			c->nvtx = arg[1] == 'n' ? 1 : arg[1] == 'f' ? -1 : 0;
		else
			argp_error(state, "--nvtx expects auto, on or off, not '%s'", arg);
		break;
	default:
		return ARGP_ERR_UNKNOWN;
	}
	return 0;
}

const struct argp ga_cmd_report_argp = {options, parse_opt, NULL, NULL, NULL, NULL, NULL};

static const char *env_lookup(const char *name)
{
	return getenv(name);
}

/* Expand *path (see outname.h) into *owned, which then replaces it. */
static int expand_output_name(const char *option, const char **path, char **owned)
{
	ga_error err = {0};
	char host[256] = "";

	if (!*path)
		return 0;
	if (gethostname(host, sizeof(host)) != 0)
		snprintf(host, sizeof(host), "localhost");
	host[sizeof(host) - 1] = '\0';
	*owned = ga_expand_output_name(option, *path, (long)getpid(), host, env_lookup, &err);
	if (!*owned) {
		fprintf(stderr, "gpuadvise: %s\n", err.msg);
		return -1;
	}
	*path = *owned;
	return 0;
}

int ga_cmd_use_color(const ga_config *cfg, FILE *out)
{
	if (cfg->color == GA_COLOR_ALWAYS)
		return 1;
	if (cfg->color == GA_COLOR_NEVER)
		return 0;
	const char *nc = getenv("NO_COLOR");
	if (nc && *nc)
		return 0;
	return isatty(fileno(out));
}

/* --fail-on regression against a baseline of another GPU: a CI gate that
 * cannot compare durations would pass whatever happened, so it is an error
 * unless --baseline-any-gpu accepts it. */
static int other_gpu_error(const ga_config *cfg, const ga_comparison *cmp)
{
	char *b = ga_device_label(&cmp->base->profile->device);
	char *n = ga_device_label(&cmp->cur->profile->device);
	fprintf(stderr, "gpuadvise: --fail-on regression: the baseline %s was recorded on %s, "
	        "this profile on %s; durations cannot be compared (--baseline-any-gpu compares "
	        "classes and findings only)\n", cfg->baseline, b, n);
	free(b);
	free(n);
	return GA_EXIT_USAGE;
}

/* Analyse and report one profile; returns the exit status for findings. */
static int analyse_and_report(const ga_config *cfg, const ga_ruleset *rs, const ga_profile *p,
                              const ga_cmd_report_extra *x)
{
	ga_analysis a, ba;
	ga_comparison cmp;
	ga_error err = {0};
	ga_analyze_opts ao = {.verbose = cfg->verbose, .nvtx = cfg->nvtx}, bao = {.nvtx = -1};
	FILE *out = stdout;
	char *log_text = NULL;      /* --log-file: the report, built in memory */
	size_t log_len = 0;
	int rc = 0, have_base = 0;
	int sarif = cfg->format && strcmp(cfg->format, "sarif") == 0;
	char *root = NULL;

	/* Only SARIF reads it; a --source-root that is no directory is an
	 * error whatever the format. */
	if ((sarif || cfg->source_root) &&
	    !(root = realpath(cfg->source_root ? cfg->source_root : ".", NULL))) {
		fprintf(stderr, "gpuadvise: --source-root %s: %s\n",
		        cfg->source_root ? cfg->source_root : ".", strerror(errno));
		return GA_EXIT_USAGE;
	}
	if (ga_analyze(p, rs, &ao, &a, &err) != 0) {
		free(root);
		fprintf(stderr, "gpuadvise: %s\n", err.msg);
		return ga_cmd_exit_for_error(&err);
	}
	if (x && x->baseline) {
		if (ga_analyze(x->baseline, rs, &bao, &ba, &err) != 0) {
			fprintf(stderr, "gpuadvise: --baseline %s: %s\n", cfg->baseline, err.msg);
			ga_analysis_free(&a);
			free(root);
			return ga_cmd_exit_for_error(&err);
		}
		ga_compare_opts co = {
			.threshold = (cfg->regression_threshold >= 0 ? cfg->regression_threshold
			                                             : 10.0) / 100.0,
			.severity = cfg->fail_on >= 0 ? cfg->fail_on : GA_SEV_HIGH,
		};
		ga_compare(&a, &ba, cfg->baseline, &co, &cmp);
		have_base = 1;
		if (cfg->fail_on_regression && !cmp.same_device && !cfg->baseline_any_gpu) {
			rc = other_gpu_error(cfg, &cmp);
			goto out;
		}
		/* Also on the terminal, whatever the report's format and file. */
		char *warning = ga_baseline_warning(&cmp);
		if (warning)
			fprintf(stderr, "gpuadvise: warning: %s\n", warning);
		free(warning);
	}
	/* --log-file: the report is built in memory and then written
	 * atomically, so the file never holds half a report. */
	if (cfg->log_file) {
		out = open_memstream(&log_text, &log_len);
		if (!out) {
			fprintf(stderr, "gpuadvise: cannot write %s: %s\n", cfg->log_file,
			        strerror(errno));
			rc = GA_EXIT_USAGE;
			goto out;
		}
	}
	ga_report_opts ro = {
		.color = ga_cmd_use_color(cfg, out),
		.verbose = cfg->verbose,
		.per_launch = cfg->per_launch,
		.width = 80,
		.baseline = have_base ? &cmp : NULL,
		/* ga_fail_mode lists the severities in their order, after DEFAULT */
		.fail_on = cfg->fail_on_regression ? GA_FAIL_REGRESSION
		           : cfg->fail_on >= 0 ? (ga_fail_mode)(GA_FAIL_LOW + cfg->fail_on)
		                               : GA_FAIL_DEFAULT,
		.inputs = x ? x->inputs : NULL,
		.n_inputs = x ? x->n_inputs : 0,
		.roofline = cfg->roofline > 0 || (cfg->roofline == 0 && isatty(fileno(out))),
		.source_root = root && strcmp(root, "/") == 0 ? "" : root,
	};
	const ga_reporter *rep = ga_reporter_find(cfg->format ? cfg->format : "text");
	if (rep->write(out, &a, rs, &ro) != 0 || fflush(out) != 0) {
		fprintf(stderr, "gpuadvise: writing the report failed: %s\n", strerror(errno));
		rc = GA_EXIT_USAGE;
	}
	if (out != stdout) {
		if (fclose(out) != 0 && rc == 0) {
			fprintf(stderr, "gpuadvise: writing the report failed: %s\n",
			        strerror(errno));
			rc = GA_EXIT_USAGE;
		}
		if (rc == 0 && ga_write_file_atomic(cfg->log_file, log_text, log_len, &err) != 0) {
			fprintf(stderr, "gpuadvise: %s\n", err.msg);
			rc = GA_EXIT_USAGE;
		}
		free(log_text);
	}
	if (rc == 0 && cfg->fail_on >= 0 && ga_analysis_max_severity(&a) >= cfg->fail_on)
		rc = GA_EXIT_FINDINGS;
	if (rc == 0 && cfg->fail_on_regression && have_base && cmp.n_regressions > 0)
		rc = GA_EXIT_FINDINGS;
out:
	if (have_base) {
		ga_comparison_free(&cmp);
		ga_analysis_free(&ba);
	}
	ga_analysis_free(&a);
	free(root);
	return rc;
}

static int export_profile(const ga_config *cfg, const ga_profile *p)
{
	ga_error err = {0};
	if (!cfg->export_path)
		return 0;
	char *text = ga_profile_to_string(p, 2);
	size_t len = strlen(text);
	int rc = ga_write_file_atomic(cfg->export_path, text, len, &err);
	free(text);
	if (rc != 0) {
		fprintf(stderr, "gpuadvise: %s\n", err.msg);
		return GA_EXIT_USAGE;
	}
	return 0;
}

int ga_cmd_expand_output_names(ga_config *cfg, char **export_path, char **log_file)
{
	if (expand_output_name("-o", &cfg->export_path, export_path) != 0 ||
	    expand_output_name("--log-file", &cfg->log_file, log_file) != 0)
		return -1;
	return 0;
}

int ga_cmd_report(const ga_config *cfg, const ga_ruleset *rs, const ga_profile *p,
                  const ga_cmd_report_extra *x)
{
	int rc = analyse_and_report(cfg, rs, p, x);
	if (rc == 0 || rc == GA_EXIT_FINDINGS) {
		int e = export_profile(cfg, p);
		if (e)
			rc = e;
	}
	return rc;
}
