/* main.c: command line and dispatch.  The commands are in src/command/, one
 * file each (cmd.h); their options are argp children of the one argp here.
 * Errors become exit statuses in one place, ga_cmd_exit_for_error
 * (command/args.c).  Statuses:
 *   0  success
 *   1  findings at or above --fail-on
 *   2  usage error, PROGRAM or input file not found
 *   3  rule file errors
 *   4  profiling error: no GPU, no counter permission, CUPTI failure, no kernel
 *   the application's own status when it fails (128 + N when killed by signal N)
 *   128 + N when gpuadvise itself got signal N while profiling (command/profile.c) */
#include <argp.h>
#include <stdlib.h>

#include "command/cmd.h"
#include "ga_build.h"

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
	"  gpuadvise --import run.json --format markdown\n"
	"                                      summary for a pull-request comment\n"
	"  gpuadvise --import run.json --roofline    roofline and occupancy of each kernel\n"
	"  gpuadvise --import run.json --format html --log-file report.html\n"
	"                                      one page: roofline chart, findings, kernels\n"
	"  gpuadvise --import new.json --baseline old.json --fail-on regression\n"
	"                                      CI gate against an older profile\n"
	"  mpirun -n 4 gpuadvise -o rank%q{OMPI_COMM_WORLD_RANK}.json ./app\n"
	"                                      one profile per MPI rank (also %p, %h)\n"
	"  gpuadvise --import rank*.json       the ranks' files as one job: a table of\n"
	"                                      ranks, stragglers, advice on N of M\n"
	"  gpuadvise torchrun --nproc_per_node 8 train.py\n"
	"                                      every rank of a one-node job, one report\n"
	"  gpuadvise --demo matmul             a bundled sample, before and after its fix\n"
	"  gpuadvise --demo list               the bundled samples\n"
	"  gpuadvise --explain uncoalesced-global-access\n"
	"\n"
	"Exit status: 0 ok; 1 findings at or above --fail-on (or a regression, with --fail-on "
	"regression); 2 usage error, missing file or invalid profile or baseline; "
	"3 rule file errors; 4 profiling failed (no GPU, no counter permission, no kernel "
	"launched); otherwise the application's own failing status; 128 + N when gpuadvise "
	"was interrupted by signal N (it stops the program and reports first).\n"
	"See gpuadvise(1) and gpuadvise-rules(5).";

static const char args_doc[] = "PROGRAM [ARGS...]\n--import FILE [FILE.json...]\n--demo NAME|list|all";

enum {
	OPT_PRINT_PATHS = 1900,
};

/* A diagnostic, not in --help: the files this gpuadvise would use, as found
 * from its own location (a moved install, a packaging check). */
static const struct argp_option options[] = {
	{"print-paths", OPT_PRINT_PATHS, 0, OPTION_HIDDEN, "Print the rules, injection "
	 "library and recordings this gpuadvise finds, and exit", 0},
	/* Nsight Compute's -v; argp's own -V and --version stay. */
	{NULL, 'v', 0, 0, "Print the program version (as --version)", -1},
	{0},
};

/* Each command's options, under its own heading in --help. */
static const struct argp_child children[] = {
	{&ga_cmd_profile_argp, 0, "Profiling a program (names as in Nsight Compute):", 1},
	{&ga_cmd_import_argp, 0, "Saved profiles and baselines:", 2},
	{&ga_cmd_report_argp, 0, "Reports (of a program or of saved profiles):", 3},
	{&ga_cmd_rules_argp, 0, "Rules:", 4},
	{&ga_cmd_metrics_argp, 0, "Metrics:", 5},
	{&ga_cmd_demo_argp, 0, "Demos:", 6},
	{0},
};

/* --import prof-*.json: the shell hands the pattern's other matches over
 * as arguments after the first, where PROGRAM would be.  After --import,
 * arguments that all end in ".json" are more files to import. */
static void more_imports(ga_cmd_parse *ps)
{
	ga_config *c = ps->cfg;

	if (!c->n_imports || !c->app_argv)
		return;
	for (char *const *a = c->app_argv; *a; a++)
		if (!ga_str_has_suffix(*a, ".json"))
			return;
	for (char *const *a = c->app_argv; *a; a++)
		GA_PUSH(c->imports, c->n_imports, ps->cap_imports, *a);
	c->app_argv = NULL;
}

/* How the commands combine: exactly one command, and options that need
 * another one given with it. */
static void check_combination(struct argp_state *state, const ga_config *c)
{
	int modes = (c->app_argv != NULL) + (c->n_imports > 0) + (c->demo != NULL) +
	            (c->check_rules != NULL);
	int info = c->list_rules || c->explain || c->list_metrics || c->print_paths;

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
	if (c->baseline_any_gpu && !c->baseline)
		argp_error(state, "--baseline-any-gpu needs --baseline FILE");
	if (c->regression_threshold >= 0 && !c->baseline)
		argp_error(state, "--regression-threshold needs --baseline FILE");
}

static error_t parse_opt(int key, char *arg, struct argp_state *state)
{
	switch (key) {
	case ARGP_KEY_INIT:
		/* Every command's parser fills the same config. */
		for (size_t i = 0; i < GA_ARRAY_LEN(children) - 1; i++)
			state->child_inputs[i] = state->input;
		break;
	case 'v':
		fprintf(state->out_stream, "%s\n", argp_program_version);
		exit(0);
	case OPT_PRINT_PATHS:
		((ga_cmd_parse *)state->input)->cfg->print_paths = 1;
		break;
	case ARGP_KEY_END:
		more_imports(state->input);
		check_combination(state, ((ga_cmd_parse *)state->input)->cfg);
		break;
	default:
		return ARGP_ERR_UNKNOWN;
	}
	return 0;
}

static const struct argp argp = {options, parse_opt, args_doc, doc, children, NULL, NULL};

static void free_names(char **v, size_t n)
{
	for (size_t i = 0; i < n; i++)
		free(v[i]);
	free(v);
}

static void print_path(const char *what, char *path)
{
	printf("%-9s %s\n", what, path ? path : "(not found)");
	free(path);
}

/* --print-paths: what a live run, the rules and --demo would use. */
static int print_paths(void)
{
	print_path("rules", ga_default_rules_dir());
	print_path("inject", GA_HAVE_CUPTI ? ga_inject_path() : ga_xstrdup("(built without CUPTI)"));
	print_path("recorded", ga_recorded_dir());
	print_path("demo", ga_demo_program("matmul"));
	return 0;
}

/* The command the options name, with the rules loaded; the status. */
static int dispatch(const ga_config *cfg, ga_ruleset *rs)
{
	ga_profile base;
	int rc;

	if (cfg->print_paths)
		return print_paths();
	if (cfg->check_rules)
		return ga_cmd_check_rules(cfg->check_rules);
	rc = ga_cmd_load_rules(cfg, rs);
	if (rc)
		return rc;
	if (cfg->list_rules)
		return ga_cmd_list_rules(rs);
	if (cfg->explain)
		return ga_cmd_explain_rule(rs, cfg->explain);
	if (cfg->list_metrics)
		return ga_cmd_list_metrics(cfg, rs);
	if (cfg->demo)
		return ga_cmd_demo(cfg, rs);
	/* The baseline first: a bad one should not cost a profiling run. */
	rc = ga_cmd_load_baseline(cfg, &base);
	if (rc == 0 && cfg->n_imports) {
		rc = ga_cmd_import(cfg, rs, cfg->baseline ? &base : NULL);
	} else if (rc == 0) {
		rc = ga_cmd_profile(cfg, rs, cfg->baseline ? &base : NULL);
		ga_timing_mark("report_done");
	}
	ga_profile_free(&base);
	return rc;
}

int main(int argc, char **argv)
{
	ga_config cfg = {.launch_count = -1, .fail_on = -1, .max_per_kernel = 5, .max_passes = 0,
	                 .min_share = 1, .watchdog = 120,
	                 .regression_threshold = -1};
	ga_cmd_parse ps = {.cfg = &cfg};
	ga_ruleset rs;
	char *export_path = NULL, *log_file = NULL;
	int rc;

	/* argp's usage errors: our status 2 (its default is 64), and name the
	 * program plainly rather than by the path it was started with. */
	argp_err_exit_status = GA_EXIT_USAGE;
	if (argc > 0)
		argv[0] = "gpuadvise";
	if (argp_parse(&argp, argc, argv, ARGP_IN_ORDER, NULL, &ps) != 0)
		return GA_EXIT_USAGE;
	/* From here on every path frees what the options allocated. */
	ga_ruleset_init(&rs);
	/* %p, %h, %q{ENV} in output names (one file per process under mpirun). */
	if (ga_cmd_expand_output_names(&cfg, &export_path, &log_file) != 0)
		rc = GA_EXIT_USAGE;
	else if ((rc = ga_cmd_check_outputs(&cfg)) != 0)
		;
	else
		rc = dispatch(&cfg, &rs);
	free(export_path);
	free(log_file);
	ga_ruleset_free(&rs);
	free(cfg.imports);
	free(cfg.rule_dirs);
	free_names(cfg.extra_metrics, cfg.n_extra_metrics);
	return rc;
}
