/* main.c: command line, dispatch, and the one place where errors become exit
 * statuses:
 *   0  success
 *   1  findings at or above --fail-on
 *   2  usage error, PROGRAM or input file not found
 *   3  rule file errors
 *   4  profiling error: no GPU, no counter permission, CUPTI failure, no kernel
 *   the application's own status when it fails (128 + N when killed by signal N) */
#include <argp.h>
#include <errno.h>
#include <float.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <jansson.h>

#include "baseline.h"
#include "collect/collect.h"
#include "config.h"
#include "demo.h"
#include "ga_build.h"
#include "outname.h"
#include "profile.h"
#include "report/report.h"
#include "analyze/roofline.h"
#include "analyze/analyze.h"
#include "rules/rules.h"
#include "util.h"

enum {
	EXIT_FINDINGS = 1,
	EXIT_USAGE = 2,
	EXIT_RULES = 3,
	EXIT_PROFILING = 4,
};

enum {
	OPT_IMPORT = 'i',
	OPT_LIST_RULES = 1000,
	OPT_EXPLAIN,
	OPT_CHECK_RULES,
	OPT_LIST_METRICS,
	OPT_CHIP,
	OPT_MAX_PER_KERNEL,
	OPT_MIN_SHARE,
	OPT_NO_LOOP_REPLAY,
	OPT_METRICS,
	OPT_SAVE_COUNTER_DATA,
	OPT_LOG_FILE,
	OPT_FAIL_ON,
	OPT_PER_LAUNCH,
	OPT_COLOR,
	OPT_DEMO,
	OPT_NO_DEFAULT_RULES,
	OPT_QUICK,
	OPT_MAX_PASSES,
	OPT_SOURCE,
	OPT_NO_SOURCE,
	OPT_STALLS,
	OPT_BASELINE,
	OPT_REGRESSION_THRESHOLD,
	OPT_ROOFLINE,
	OPT_NO_ROOFLINE,
};

const char *argp_program_version = "gpuadvise " GA_VERSION;
const char *argp_program_bug_address = NULL;

static const char doc[] =
	"Profile the CUDA kernels of PROGRAM, classify each one as compute, memory, latency or "
	"divergence bound, and print the fixes that will save the most time first."
	"\v"
	"Examples:\n"
	"  gpuadvise ./app --size 4096         profile every kernel of an unmodified program\n"
	"  gpuadvise -k regex:gemm -c 5 ./app  only kernels matching 'gemm', at most 5 launches\n"
	"  gpuadvise -o run.json ./app         also keep the profile as JSON\n"
	"  gpuadvise --import run.json         analyse a saved profile (no GPU needed)\n"
	"  gpuadvise --import run.json -f markdown   summary for a pull-request comment\n"
	"  gpuadvise --import run.json --roofline    roofline and occupancy of each kernel\n"
	"  gpuadvise --import run.json -f html --log-file report.html\n"
	"                                      one page: roofline chart, findings, kernels\n"
	"  gpuadvise --import new.json --baseline old.json --fail-on regression\n"
	"                                      CI gate against an older profile\n"
	"  mpirun -n 4 gpuadvise -o rank%q{OMPI_COMM_WORLD_RANK}.json ./app\n"
	"                                      one profile per MPI rank (also %p, %h)\n"
	"  gpuadvise --demo matmul             a bundled sample, before and after its fix\n"
	"  gpuadvise --demo list               the bundled samples\n"
	"  gpuadvise --explain uncoalesced-global-access\n"
	"\n"
	"Exit status: 0 ok; 1 findings at or above --fail-on (or a regression, with --fail-on "
	"regression); 2 usage error, missing file or invalid profile or baseline; "
	"3 rule file errors; 4 profiling failed (no GPU, no counter permission, no kernel "
	"launched); otherwise the application's own failing status.\n"
	"See gpuadvise(1) and gpuadvise-rules(5).";

static const char args_doc[] = "PROGRAM [ARGS...]\n--import FILE\n--demo NAME|list|all";

static struct argp_option options[] = {
	{0, 0, 0, 0, "Profiling (names as in Nsight Compute):", 1},
	{"kernel-name", 'k', "NAME", 0, "Profile only kernels named NAME (function name, "
	 "demangled or mangled), or matching regex:RE (POSIX extended)", 1},
	{"launch-skip", 's', "N", 0, "Skip the first N matching launches", 1},
	{"launch-count", 'c', "N", 0, "Profile at most N launches, then let the program run at "
	 "full speed", 1},
	{"max-per-kernel", OPT_MAX_PER_KERNEL, "N", 0, "Profile each (kernel, grid, block) at most "
	 "N times, and with several metric sets (--max-passes) once per set; later repeats run "
	 "unprofiled and are counted at the mean duration (default 5; 0: no bound)", 1},
	{"min-share", OPT_MIN_SHARE, "PCT", 0, "Profile a kernel more than once (the other "
	 "metric sets, more repeats) only while it takes at least PCT % of the GPU time measured "
	 "so far; the rest are classified from one launch (default 1; 0: every kernel in full)",
	 1},
	{"no-loop-replay", OPT_NO_LOOP_REPLAY, 0, 0, "Measure every launch by replaying it, "
	 "even in a loop (by default, once the same launches repeat, a kernel's metric sets "
	 "are measured across the loop's next iterations, with no replay)", 1},
	{"quick", OPT_QUICK, 0, 0, "Classify in one replay pass: collect only what the "
	 "classifier needs (most rules then cannot fire)", 1},
	{"max-passes", OPT_MAX_PASSES, "N", 0, "Replay each profiled launch at most N times "
	 "(default 3): metrics that do not fit are measured on later launches of the same "
	 "kernel, in turn; 0: every metric on every launch", 1},
	{"source", OPT_SOURCE, 0, 0, "Attribute every profiled kernel's problems to source "
	 "lines (SASS metrics on one later launch of it; needs nvcc -lineinfo for file:line). "
	 "By default only kernels with uncoalesced access, divergence or bank conflicts get this",
	 1},
	{"no-source", OPT_NO_SOURCE, 0, 0, "No source-line attribution (and no cubins kept)", 1},
	{"stalls", OPT_STALLS, 0, 0, "Also give the dominant stall reason at each source line: "
	 "runs the program a second time, with CUPTI PC sampling on the first launch of each "
	 "kernel that got source lines, or with --source of every profiled kernel (its output "
	 "is not shown again)", 1},
	{"metrics", OPT_METRICS, "LIST", 0, "Also collect these CUPTI metrics, comma-separated",
	 1},
	{"save-counter-data", OPT_SAVE_COUNTER_DATA, "FILE", OPTION_HIDDEN,
	 "Write the first raw counter-data image to FILE (test fixtures)", 1},
	{0, 0, 0, 0, "Input and output:", 2},
	{"import", OPT_IMPORT, "FILE", 0, "Analyse a saved profile (or JSON report) instead of "
	 "running a program", 2},
	{"export", 'o', "FILE", 0, "Write the profile as JSON to FILE (%p: pid, %h: host name, "
	 "%q{ENV}: environment variable ENV, %%: a %)", 2},
	{"format", 'f', "FMT", 0, "Report format: text (default), json, markdown, junit, html "
	 "(one self-contained page with the roofline)", 2},
	{"log-file", OPT_LOG_FILE, "FILE", 0, "Write the report to FILE instead of standard "
	 "output (%p, %h, %q{ENV} as for -o)", 2},
	{"fail-on", OPT_FAIL_ON, "SEVERITY", 0, "Exit with status 1 when a finding of SEVERITY "
	 "(low, medium, high) or above is reported; 'regression': when a kernel regressed "
	 "against --baseline", 2},
	{"baseline", OPT_BASELINE, "FILE", 0, "Compare with an older profile or JSON report, "
	 "kernel by kernel: time, class, findings", 2},
	{"regression-threshold", OPT_REGRESSION_THRESHOLD, "PCT", 0, "With --baseline: a kernel "
	 "more than PCT percent slower is a regression (default 10)", 2},
	{"verbose", 'v', 0, 0, "Show every finding, the class reasoning, and rules that could "
	 "not be evaluated (missing metrics)", 2},
	{"per-launch", OPT_PER_LAUNCH, 0, 0, "List every launch of each kernel", 2},
	{"roofline", OPT_ROOFLINE, 0, 0, "Draw the roofline and occupancy of every kernel in the "
	 "text report (default: only when it goes to a terminal)", 2},
	{"no-roofline", OPT_NO_ROOFLINE, 0, 0, "Never draw the roofline in the text report", 2},
	{"color", OPT_COLOR, "WHEN", 0, "Colour: auto (default: only on a terminal, never when "
	 "NO_COLOR is set), always, never", 2},
	{0, 0, 0, 0, "Rules:", 3},
	{"rules", 'r', "DIR", 0, "Also load rules from DIR; rules with the same id replace "
	 "earlier ones (repeatable)", 3},
	{"no-default-rules", OPT_NO_DEFAULT_RULES, 0, 0, "Do not load the installed rules", 3},
	{"list-rules", OPT_LIST_RULES, 0, 0, "List the loaded rules", 3},
	{"explain", OPT_EXPLAIN, "ID", 0, "Explain a rule: what it measures, why it matters, the "
	 "fix", 3},
	{"check-rules", OPT_CHECK_RULES, "DIR", 0, "Check the rule files in DIR and report every "
	 "error as FILE:LINE:COL", 3},
	{"list-metrics", OPT_LIST_METRICS, 0, 0, "List the CUPTI metrics the rules read (with "
	 "--chip, also the replay passes they cost)", 3},
	{"chip", OPT_CHIP, "CHIP", 0, "Chip for --list-metrics, e.g. GH100 (no GPU needed)", 3},
	{0, 0, 0, 0, "Demos:", 4},
	{"demo", OPT_DEMO, "NAME", 0, "Run a bundled sample before and after its fix: a demo "
	 "name, 'list' or 'all'.  With no GPU, show its recorded profile", 4},
	{0},
};

typedef struct {
	ga_config *cfg;
	size_t cap_imports, cap_rule_dirs, cap_extra;
} parse_state;

static long parse_count(struct argp_state *state, const char *opt, const char *arg)
{
	char *end;
	errno = 0;
	long v = strtol(arg, &end, 10);
	if (errno || *end || v < 0 || end == arg)
		argp_error(state, "%s expects a non-negative integer, not '%s'", opt, arg);
	return v;
}

/* A percentage such as 10, 2.5 or 1%, at most max. */
static double parse_pct(struct argp_state *state, const char *opt, const char *arg, double max)
{
	char *end;
	errno = 0;
	double v = strtod(arg, &end);
	if (end != arg && *end == '%')
		end++;
	if (errno || end == arg || *end || !(v >= 0) || !(v <= max))
		argp_error(state, "%s expects a percentage such as 10 or 2.5, not '%s'", opt, arg);
	return v;
}

static error_t parse_opt(int key, char *arg, struct argp_state *state)
{
	parse_state *ps = state->input;
	ga_config *c = ps->cfg;

	switch (key) {
	case 'k':
		c->kernel_filter = arg;
		break;
	case 's':
		c->launch_skip = parse_count(state, "--launch-skip", arg);
		break;
	case 'c':
		c->launch_count = parse_count(state, "--launch-count", arg);
		break;
	case OPT_MAX_PER_KERNEL:
		c->max_per_kernel = parse_count(state, "--max-per-kernel", arg);
		break;
	case OPT_MIN_SHARE:
		c->min_share = parse_pct(state, "--min-share", arg, 100);
		break;
	case OPT_NO_LOOP_REPLAY:
		c->no_loop_replay = 1;
		break;
	case OPT_MAX_PASSES:
		c->max_passes = parse_count(state, "--max-passes", arg);
		break;
	case OPT_METRICS: {
		char *copy = ga_xstrdup(arg), *save = NULL;
		for (char *t = strtok_r(copy, ",", &save); t; t = strtok_r(NULL, ",", &save))
			GA_PUSH(c->extra_metrics, c->n_extra_metrics, ps->cap_extra, ga_xstrdup(t));
		free(copy);
		break;
	}
	case OPT_SAVE_COUNTER_DATA:
		c->save_counter_data = arg;
		break;
	case OPT_IMPORT:
		GA_PUSH(c->imports, c->n_imports, ps->cap_imports, arg);
		break;
	case 'o':
		c->export_path = arg;
		break;
	case 'f':
		if (!ga_reporter_find(arg))
			argp_error(state, "unknown format '%s' (text, json, markdown, junit, html)", arg);
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
	case OPT_BASELINE:
		c->baseline = arg;
		break;
	case OPT_REGRESSION_THRESHOLD:
		c->regression_threshold = parse_pct(state, "--regression-threshold", arg, DBL_MAX);
		break;
	case 'v':
		c->verbose = 1;
		break;
	case OPT_PER_LAUNCH:
		c->per_launch = 1;
		break;
	case OPT_COLOR:
		if (strcmp(arg, "auto") == 0)
			c->color = GA_COLOR_AUTO;
		else if (strcmp(arg, "always") == 0)
			c->color = GA_COLOR_ALWAYS;
		else if (strcmp(arg, "never") == 0)
			c->color = GA_COLOR_NEVER;
		else
			argp_error(state, "--color expects auto, always or never, not '%s'", arg);
		break;
	case 'r':
		GA_PUSH(c->rule_dirs, c->n_rule_dirs, ps->cap_rule_dirs, arg);
		break;
	case OPT_ROOFLINE:
		c->roofline = 1;
		break;
	case OPT_NO_ROOFLINE:
		c->roofline = -1;
		break;
	case OPT_QUICK:
		c->quick = 1;
		break;
	case OPT_SOURCE:
		c->source = 1;
		break;
	case OPT_NO_SOURCE:
		c->source = -1;
		break;
	case OPT_STALLS:
		c->stalls = 1;
		break;
	case OPT_NO_DEFAULT_RULES:
		c->no_default_rules = 1;
		break;
	case OPT_LIST_RULES:
		c->list_rules = 1;
		break;
	case OPT_EXPLAIN:
		c->explain = arg;
		break;
	case OPT_CHECK_RULES:
		c->check_rules = arg;
		break;
	case OPT_LIST_METRICS:
		c->list_metrics = 1;
		break;
	case OPT_CHIP:
		c->chip = arg;
		break;
	case OPT_DEMO:
		c->demo = arg;
		break;
	case ARGP_KEY_ARG:
		/* PROGRAM: everything from here on belongs to the application. */
		c->app_argv = &state->argv[state->next - 1];
		state->next = state->argc;
		break;
	case ARGP_KEY_END: {
		int modes = (c->app_argv != NULL) + (c->n_imports > 0) + (c->demo != NULL) +
		            (c->check_rules != NULL);
		int info = c->list_rules || c->explain || c->list_metrics;
		if (modes > 1)
			argp_error(state, "give only one of PROGRAM, --import, --demo, --check-rules");
		if (modes == 0 && !info)
			argp_error(state, "no PROGRAM to profile (or --import FILE, --demo NAME)");
		if (c->baseline && !c->app_argv && c->n_imports == 0)
			argp_error(state, "--baseline compares a profile: give PROGRAM or --import");
		if (c->stalls && !c->app_argv && modes)
			argp_error(state, "--stalls runs the program again: give PROGRAM");
		if (c->stalls && c->source < 0)
			argp_error(state, "--stalls samples the kernels that have source lines: drop "
			           "--no-source");
		if (c->fail_on_regression && !c->baseline)
			argp_error(state, "--fail-on regression needs --baseline FILE");
		if (c->regression_threshold >= 0 && !c->baseline)
			argp_error(state, "--regression-threshold needs --baseline FILE");
		break;
	}
	default:
		return ARGP_ERR_UNKNOWN;
	}
	return 0;
}

static struct argp argp = {options, parse_opt, args_doc, doc, NULL, NULL, NULL};

/* ---- rules --------------------------------------------------------------- */

static int load_rules(const ga_config *cfg, ga_ruleset *rs)
{
	ga_diags d = {0};
	char *def = NULL, *user = NULL;
	int rc = 0;

	if (!cfg->no_default_rules) {
		def = ga_default_rules_dir();
		if (!def) {
			fprintf(stderr, "gpuadvise: the installed rules were not found (set "
			        "GPUADVISE_RULES_DIR or use --rules DIR)\n");
			return EXIT_RULES;
		}
		ga_rules_load_dir(rs, def, &d);
		user = ga_user_rules_dir();
		if (user)
			ga_rules_load_dir(rs, user, &d);
	}
	for (size_t i = 0; i < cfg->n_rule_dirs; i++)
		ga_rules_load_dir(rs, cfg->rule_dirs[i], &d);
	if (d.n == 0)
		ga_ruleset_validate(rs, &d);
	if (d.n) {
		ga_diags_print(&d, stderr);
		fprintf(stderr, "gpuadvise: %zu error%s in rule files\n", d.n, d.n == 1 ? "" : "s");
		rc = EXIT_RULES;
	}
	ga_diags_free(&d);
	free(def);
	free(user);
	return rc;
}

static int check_rules(const char *dir)
{
	ga_ruleset rs;
	ga_diags d = {0};
	int rc = 0;
	char *cls = ga_xasprintf("%s/classify.yaml", dir);
	char *base = NULL;

	ga_ruleset_init(&rs);
	/* A directory of additions or overrides has no classifier of its own:
	 * check it on top of the installed rules, the way gpuadvise uses it. */
	if (access(cls, F_OK) != 0 && (base = ga_default_rules_dir()) != NULL)
		ga_rules_load_dir(&rs, base, &d);
	free(cls);
	ga_rules_load_dir(&rs, dir, &d);
	if (d.n == 0)
		ga_ruleset_validate(&rs, &d);
	if (d.n) {
		ga_diags_print(&d, stderr);
		fprintf(stderr, "gpuadvise: %zu error%s in %s\n", d.n, d.n == 1 ? "" : "s", dir);
		rc = EXIT_RULES;
	} else {
		printf("%s: %zu rules and the classifier are valid%s%s%s\n", dir, rs.n_rules,
		       base ? " (checked on top of the installed rules in " : "",
		       base ? base : "", base ? ")" : "");
	}
	ga_diags_free(&d);
	ga_ruleset_free(&rs);
	free(base);
	return rc;
}

static int list_rules(const ga_ruleset *rs)
{
	printf("%-30s %-10s %-6s %-9s %s\n", "ID", "CLASS", "ORDER", "SEVERITY", "TITLE");
	for (size_t i = 0; i < rs->n_rules; i++) {
		const ga_rule *r = &rs->rules[i];
		printf("%-30s %-10s %-6d %-9s %s\n", r->id, ga_class_name(r->klass), r->checklist,
		       ga_severity_name(r->severity), r->title);
	}
	return 0;
}

static void print_block(const char *title, const char *text, int indent)
{
	if (!text || !*text)
		return;
	printf("%s\n", title);
	const char *p = text;
	while (*p) {
		const char *nl = strchr(p, '\n');
		size_t n = nl ? (size_t)(nl - p) : strlen(p);
		printf("%*s%.*s\n", n ? indent : 0, "", (int)n, p);
		if (!nl)
			break;
		p = nl + 1;
	}
	printf("\n");
}

static int explain_rule(const ga_ruleset *rs, const char *id)
{
	const ga_rule *r = ga_ruleset_find(rs, id);
	if (!r) {
		fprintf(stderr, "gpuadvise: no rule '%s' (gpuadvise --list-rules shows them)\n", id);
		return EXIT_USAGE;
	}
	printf("%s: %s\n", r->id, r->title);
	printf("class %s, checklist item %d, severity %s, expected speedup %g-%gx\n",
	       ga_class_name(r->klass), r->checklist, ga_severity_name(r->severity),
	       r->speedup_min, r->speedup_max);
	printf("file: %s\n\n", r->path ? r->path : "?");
	print_block("Why it matters:", r->explain, 2);
	print_block("Fix:", r->fix, 2);
	print_block("Example:", r->example, 4);
	printf("Fires when: %s\n", r->when_src);
	printf("Estimated saving (fraction of the kernel's time): %s\n", r->estimate_src);
	for (size_t i = 0; i < r->n_metrics; i++)
		printf("  %s = %s\n", r->metrics[i].name, r->metrics[i].src);
	return 0;
}

/* Metrics to collect: what the rules read, the roofline's, the duration and
 * --metrics, in bundles that the collector keeps together in one metric set
 * (see ga_ruleset_metric_bundles).  In order of importance: the classifier
 * (so set 0 classifies), the roofline's byte and peak counters, its FLOP
 * counters (a replay pass of their own), each rule's, then --metrics. */
typedef struct {
	char **names;
	size_t *bundle;
	size_t n, cap;
} metric_plan;

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

static void plan_metrics(const ga_config *cfg, const ga_ruleset *rs, metric_plan *mp)
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

static void plan_free(metric_plan *mp)
{
	for (size_t i = 0; i < mp->n; i++)
		free(mp->names[i]);
	free(mp->names);
	free(mp->bundle);
	memset(mp, 0, sizeof(*mp));
}

static void free_names(char **v, size_t n)
{
	for (size_t i = 0; i < n; i++)
		free(v[i]);
	free(v);
}

#if GA_HAVE_CUPTI
/* The metric sets a live run would use on cfg->chip (--max-passes), with
 * their passes; the duration goes into every set, as the collector does. */
static int list_metric_sets(const ga_config *cfg, const metric_plan *mp)
{
	ga_error err = {0};
	ga_host *h = ga_host_new(cfg->chip, NULL, &err);
	size_t bad = 0, n_sets, *set_of;
	const char **v;

	if (!h) {
		fprintf(stderr, "gpuadvise: %s\n", err.msg);
		return EXIT_PROFILING;
	}
	for (size_t i = 0; i < mp->n; i++)
		if (!ga_host_metric_valid(h, mp->names[i])) {
			fprintf(stderr, "gpuadvise: %s: unknown metric on %s\n", mp->names[i], cfg->chip);
			bad++;
		}
	ga_host_free(h);
	if (bad)
		return EXIT_RULES;
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

static int list_metrics(const ga_config *cfg, const ga_ruleset *rs)
{
	metric_plan mp;
	int rc = 0;

	plan_metrics(cfg, rs, &mp);
	if (!cfg->chip) {
		for (size_t i = 0; i < mp.n; i++)
			printf("%s\n", mp.names[i]);
	} else {
#if GA_HAVE_CUPTI
		rc = list_metric_sets(cfg, &mp);
#else
		fprintf(stderr, "gpuadvise: built without CUPTI: --chip is not available\n");
		rc = EXIT_PROFILING;
#endif
	}
	plan_free(&mp);
	return rc;
}

/* ---- profiles ------------------------------------------------------------ */

/* Load a profile, or the profile embedded in a gpuadvise JSON report. */
static int load_profile(const char *path, ga_profile *p, ga_error *err)
{
	/* ga_profile_load reads reports too, parsing the file once. */
	return ga_profile_load(p, path, err);
}

static int exit_for_error(const ga_error *err)
{
	switch (err->code) {
	case GA_ERR_USAGE:
	case GA_ERR_NOT_FOUND:
		return EXIT_USAGE;
	case GA_ERR_RULES:
		return EXIT_RULES;
	case GA_ERR_PROFILING:
	case GA_ERR_NO_GPU:
	case GA_ERR_PERMISSION:
	case GA_ERR_NO_KERNELS:
		return EXIT_PROFILING;
	case GA_ERR_PROFILE:
	case GA_ERR_IO:
	default:
		return EXIT_USAGE;
	}
}

static int use_color(const ga_config *cfg, FILE *out)
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

/* What a report needs besides the profile: the baseline to compare with
 * and the files the profile was pooled from (both optional). */
typedef struct {
	const ga_profile *baseline;
	const ga_report_input *inputs;
	size_t n_inputs;
} report_extra;

/* Analyse and report one profile; returns the exit status for findings. */
static int analyse_and_report(const ga_config *cfg, const ga_ruleset *rs, const ga_profile *p,
                              const char *recorded_label, const report_extra *x)
{
	ga_analysis a, ba;
	ga_comparison cmp;
	ga_error err = {0};
	ga_analyze_opts ao = {.verbose = cfg->verbose}, bao = {0};
	FILE *out = stdout;
	char *log_text = NULL;      /* --log-file: the report, built in memory */
	size_t log_len = 0;
	int rc = 0, have_base = 0;

	if (ga_analyze(p, rs, &ao, &a, &err) != 0) {
		fprintf(stderr, "gpuadvise: %s\n", err.msg);
		return exit_for_error(&err);
	}
	if (x && x->baseline) {
		if (ga_analyze(x->baseline, rs, &bao, &ba, &err) != 0) {
			fprintf(stderr, "gpuadvise: --baseline %s: %s\n", cfg->baseline, err.msg);
			ga_analysis_free(&a);
			return exit_for_error(&err);
		}
		ga_compare_opts co = {
			.threshold = (cfg->regression_threshold >= 0 ? cfg->regression_threshold
			                                             : 10.0) / 100.0,
			.severity = cfg->fail_on >= 0 ? cfg->fail_on : GA_SEV_HIGH,
		};
		ga_compare(&a, &ba, cfg->baseline, &co, &cmp);
		have_base = 1;
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
			rc = EXIT_USAGE;
			goto out;
		}
	}
	ga_report_opts ro = {
		.color = use_color(cfg, out),
		.verbose = cfg->verbose,
		.per_launch = cfg->per_launch,
		.width = 80,
		.recorded_label = recorded_label,
		.baseline = have_base ? &cmp : NULL,
		/* ga_fail_mode lists the severities in their order, after DEFAULT */
		.fail_on = cfg->fail_on_regression ? GA_FAIL_REGRESSION
		           : cfg->fail_on >= 0 ? (ga_fail_mode)(GA_FAIL_LOW + cfg->fail_on)
		                               : GA_FAIL_DEFAULT,
		.inputs = x ? x->inputs : NULL,
		.n_inputs = x ? x->n_inputs : 0,
		.roofline = cfg->roofline > 0 || (cfg->roofline == 0 && isatty(fileno(out))),
	};
	const ga_reporter *rep = ga_reporter_find(cfg->format ? cfg->format : "text");
	if (rep->write(out, &a, rs, &ro) != 0 || fflush(out) != 0) {
		fprintf(stderr, "gpuadvise: writing the report failed: %s\n", strerror(errno));
		rc = EXIT_USAGE;
	}
	if (out != stdout) {
		if (fclose(out) != 0 && rc == 0) {
			fprintf(stderr, "gpuadvise: writing the report failed: %s\n",
			        strerror(errno));
			rc = EXIT_USAGE;
		}
		if (rc == 0 && ga_write_file_atomic(cfg->log_file, log_text, log_len, &err) != 0) {
			fprintf(stderr, "gpuadvise: %s\n", err.msg);
			rc = EXIT_USAGE;
		}
		free(log_text);
	}
	if (rc == 0 && cfg->fail_on >= 0 && ga_analysis_max_severity(&a) >= cfg->fail_on)
		rc = EXIT_FINDINGS;
	if (rc == 0 && cfg->fail_on_regression && have_base && cmp.n_regressions > 0)
		rc = EXIT_FINDINGS;
out:
	if (have_base) {
		ga_comparison_free(&cmp);
		ga_analysis_free(&ba);
	}
	ga_analysis_free(&a);
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
		return EXIT_USAGE;
	}
	return 0;
}

static int run_import(const ga_config *cfg, const ga_ruleset *rs, const ga_profile *baseline)
{
	ga_profile p;
	ga_error err = {0};
	ga_report_input *inputs = ga_xcalloc(cfg->n_imports ? cfg->n_imports : 1, sizeof(*inputs));
	int rc;

	ga_profile_init(&p);
	for (size_t i = 0; i < cfg->n_imports; i++) {
		ga_profile one;
		ga_profile_init(&one);
		if (load_profile(cfg->imports[i], &one, &err) != 0) {
			fprintf(stderr, "gpuadvise: %s\n", err.msg);
			ga_profile_free(&one);
			ga_profile_free(&p);
			free(inputs);
			return err.code == GA_ERR_NOT_FOUND ? EXIT_USAGE : EXIT_USAGE;
		}
		inputs[i].path = cfg->imports[i];
		inputs[i].first_launch = i == 0 ? 0 : p.n_launches;
		inputs[i].n_launches = one.n_launches;
		if (i == 0) {
			p = one;
			continue;
		}
		/* Several files: pool their launches (processes stay apart by pid). */
		for (size_t k = 0; k < one.n_launches; k++) {
			ga_launch *src = &one.launches[k];
			ga_launch *dst = ga_profile_add_launch(&p);
			double *vals = dst->values;
			*dst = *src;
			dst->values = vals;
			for (size_t m = 0; m < one.n_metrics; m++) {
				size_t slot = ga_profile_add_metric(&p, one.metrics[m]);
				dst = &p.launches[p.n_launches - 1];
				dst->values[slot] = src->values[m];
			}
			free(src->values);
			memset(src, 0, sizeof(*src));
		}
		ga_profile_free(&one);
	}
	report_extra x = {.baseline = baseline, .inputs = inputs, .n_inputs = cfg->n_imports};
	rc = analyse_and_report(cfg, rs, &p, NULL, &x);
	if (rc == 0 || rc == EXIT_FINDINGS) {
		int e = export_profile(cfg, &p);
		if (e)
			rc = e;
	}
	ga_profile_free(&p);
	free(inputs);
	return rc;
}

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

static int app_failure_status(const ga_app_result *r)
{
	if (r->signal)
		return 128 + r->signal;
	if (r->exited && r->exit_status != 0)
		return r->exit_status;
	return 0;
}

static int run_live(const ga_config *cfg, const ga_ruleset *rs, const ga_profile *baseline)
{
	ga_profile p;
	ga_error err = {0};
	ga_app_result res;
	metric_plan mp;
	char *inject = ga_inject_path();
	int rc = 0, app_rc;

	plan_metrics(cfg, rs, &mp);
	ga_profile_init(&p);
	if (!GA_HAVE_CUPTI || !inject) {
		/* Still say "not found" for a missing program first. */
		char *prog = ga_find_program(cfg->app_argv[0], &err);
		if (!prog) {
			fprintf(stderr, "gpuadvise: %s\n", err.msg);
			rc = EXIT_USAGE;
			goto out;
		}
		free(prog);
		fprintf(stderr, "gpuadvise: this gpuadvise was built without CUPTI (live profiling "
		        "is unavailable); use --import FILE to analyse a saved profile\n");
		rc = EXIT_PROFILING;
		goto out;
	}
	ga_live_opts lo = {
		.argv = cfg->app_argv,
		.inject_path = inject,
		.metrics = mp.names,
		.bundles = mp.bundle,
		.n_metrics = mp.n,
		.max_passes = cfg->max_passes,
		.kernel_filter = cfg->kernel_filter,
		.launch_skip = cfg->launch_skip,
		.launch_count = cfg->launch_count,
		.max_per_kernel = cfg->max_per_kernel,
		.min_share = cfg->min_share,
		.no_loop_replay = cfg->no_loop_replay,
		.keep_image = cfg->save_counter_data,
		.source_mode = cfg->source > 0 ? "force" : cfg->source < 0 ? "off" : "auto",
		.stalls = cfg->stalls,
	};
	if (ga_collect_live(&lo, &p, &res, &err) != 0) {
		fprintf(stderr, "gpuadvise: %s\n", err.msg);
		/* Without a GPU the program's own failure is a consequence:
		 * the status says why (4). */
		app_rc = err.code == GA_ERR_NO_GPU ? 0 : app_failure_status(&res);
		rc = app_rc ? app_rc : exit_for_error(&err);
		goto out;
	}
	app_rc = app_failure_status(&res);
	if (p.collection.note)
		fprintf(stderr, "gpuadvise: note: %s\n", p.collection.note);
	if (p.n_launches == 0) {
		if (res.cuda_processes == 0)
			fprintf(stderr, "gpuadvise: %s did not initialise CUDA, so no kernel was "
			        "profiled (if it does use CUDA, the driver may have failed to load %s: "
			        "LD_DEBUG=libs shows why)\n", cfg->app_argv[0], inject);
		else if (cfg->kernel_filter || cfg->launch_skip)
			fprintf(stderr, "gpuadvise: no kernel launch matched the filters "
			        "(-k/--launch-skip)\n");
		else
			fprintf(stderr, "gpuadvise: %s launched no CUDA kernel (kernels in CUDA "
			        "graphs are not seen by launch callbacks)\n", cfg->app_argv[0]);
		rc = app_rc ? app_rc : EXIT_PROFILING;
		goto out;
	}
	report_extra x = {.baseline = baseline};
	rc = analyse_and_report(cfg, rs, &p, NULL, &x);
	if (rc == 0 || rc == EXIT_FINDINGS) {
		int e = export_profile(cfg, &p);
		if (e)
			rc = e;
	}
	if (app_rc)
		rc = app_rc;
out:
	plan_free(&mp);
	free(inject);
	ga_profile_free(&p);
	return rc;
}

int main(int argc, char **argv)
{
	ga_config cfg = {.launch_count = -1, .fail_on = -1, .max_per_kernel = 5, .max_passes = 3,
	                 .min_share = 1,
	                 .regression_threshold = -1};
	parse_state ps = {.cfg = &cfg};
	ga_ruleset rs;
	ga_profile base;
	char *export_path = NULL, *log_file = NULL;
	int rc;

	/* argp's usage errors: our status 2 (its default is 64), and name the
	 * program plainly rather than by the path it was started with. */
	argp_err_exit_status = EXIT_USAGE;
	if (argc > 0)
		argv[0] = "gpuadvise";
	if (argp_parse(&argp, argc, argv, ARGP_IN_ORDER, NULL, &ps) != 0)
		return EXIT_USAGE;
	/* From here on every path leaves through `out`, which frees what the
	 * options allocated. */
	ga_ruleset_init(&rs);
	/* %p, %h, %q{ENV} in output names (one file per process under mpirun). */
	if (expand_output_name("-o", &cfg.export_path, &export_path) != 0 ||
	    expand_output_name("--log-file", &cfg.log_file, &log_file) != 0) {
		rc = EXIT_USAGE;
		goto out;
	}
	if (cfg.check_rules) {
		rc = check_rules(cfg.check_rules);
		goto out;
	}

	rc = load_rules(&cfg, &rs);
	if (rc)
		goto out;
	if (cfg.list_rules) {
		rc = list_rules(&rs);
	} else if (cfg.explain) {
		rc = explain_rule(&rs, cfg.explain);
	} else if (cfg.list_metrics) {
		rc = list_metrics(&cfg, &rs);
	} else if (cfg.demo) {
		metric_plan mp;
		plan_metrics(&cfg, &rs, &mp);
		ga_demo_ctx dc = {
			.cfg = &cfg,
			.rules = &rs,
			.metrics = mp.names,
			.bundles = mp.bundle,
			.n_metrics = mp.n,
			.color = use_color(&cfg, stdout),
		};
		rc = ga_demo_main(&dc);
		plan_free(&mp);
	} else {
		/* The baseline first: a bad one should not cost a profiling run. */
		ga_error err = {0};
		ga_profile_init(&base);
		if (cfg.baseline && load_profile(cfg.baseline, &base, &err) != 0) {
			fprintf(stderr, "gpuadvise: --baseline: %s\n", err.msg);
			rc = EXIT_USAGE;
		} else if (cfg.n_imports) {
			rc = run_import(&cfg, &rs, cfg.baseline ? &base : NULL);
		} else {
			rc = run_live(&cfg, &rs, cfg.baseline ? &base : NULL);
			ga_timing_mark("report_done");
		}
		ga_profile_free(&base);
	}
out:
	free(export_path);
	free(log_file);
	ga_ruleset_free(&rs);
	free(cfg.imports);
	free(cfg.rule_dirs);
	free_names(cfg.extra_metrics, cfg.n_extra_metrics);
	return rc;
}
