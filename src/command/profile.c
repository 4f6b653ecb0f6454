/* profile.c: `gpuadvise [OPTIONS] PROGRAM [ARGS...]`: run an unmodified
 * program under the collector (collect/launcher.c), then report the profile
 * it measured.  Its options choose the kernels and launches to profile and
 * what to measure on them; they are named as in Nsight Compute. */
#include "cmd.h"

#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "../collect/collect.h"
#include "ga_build.h"

enum {
	OPT_MAX_PER_KERNEL = 1000,
	OPT_MIN_SHARE,
	OPT_NO_LOOP_REPLAY,
	OPT_METRICS,
	OPT_SAVE_COUNTER_DATA,
	OPT_QUICK,
	OPT_MAX_PASSES,
	OPT_SOURCE,
	OPT_NO_SOURCE,
	OPT_STALLS,
	OPT_QUIET,
	OPT_WATCHDOG,
	OPT_TIMELINE_ONLY,
	OPT_NO_TIMELINE,
};

static const struct argp_option options[] = {
	{"kernel-name", 'k', "NAME", 0, "Profile only kernels named NAME (function name, "
	 "demangled or mangled), or matching regex:RE (POSIX extended) in any of those names",
	 0},
	{"launch-skip", 's', "N", 0, "Skip the first N matching launches", 0},
	{"launch-count", 'c', "N", 0, "Profile at most N launches, then let the program run at "
	 "full speed", 0},
	{"max-per-kernel", OPT_MAX_PER_KERNEL, "N", 0, "Profile each (kernel, grid, block) at most "
	 "N times: its first launch by replay, repeats only across a loop's iterations (with "
	 "--max-passes N, once per metric set); later repeats run unprofiled and are counted at "
	 "the mean duration (default 5; 0: no bound)", 0},
	{"min-share", OPT_MIN_SHARE, "PCT", 0, "With --max-passes N: profile a kernel more than "
	 "once (its other metric sets) only while it takes at least PCT % of the GPU time "
	 "measured so far; the rest are classified from one launch. In any mode, a kernel "
	 "launched once under the share gets no second run for its source lines (default 1; "
	 "0: every kernel in full)", 0},
	{"no-loop-replay", OPT_NO_LOOP_REPLAY, 0, 0, "Measure every launch by replaying it, "
	 "even in a loop (by default, once the same launches repeat, a kernel's metric sets "
	 "are measured across the loop's next iterations, with no replay)", 0},
	{"quick", OPT_QUICK, 0, 0, "Classify in one replay pass: collect only what the "
	 "classifier needs (most rules then cannot fire)", 0},
	{"max-passes", OPT_MAX_PASSES, "N", 0, "Replay each profiled launch at most N times: "
	 "metrics that do not fit are measured on later launches of the same kernel, in turn. "
	 "By default (0) a kernel's first launch is replayed as often as every metric needs (7 "
	 "passes on an H100/H200) and later launches are not replayed", 0},
	{"source", OPT_SOURCE, 0, 0, "Attribute every profiled kernel's problems to source "
	 "lines (SASS metrics on one later launch of it; needs nvcc -lineinfo for file:line). "
	 "By default only kernels with uncoalesced access, divergence or bank conflicts get this",
	 0},
	{"no-source", OPT_NO_SOURCE, 0, 0, "No source-line attribution (and no cubins kept)", 0},
	{"stalls", OPT_STALLS, 0, 0, "Also give the dominant stall reason at each source line: "
	 "runs the program a second time, with CUPTI PC sampling on the first launch of each "
	 "kernel that got source lines, or with --source of every profiled kernel (its output "
	 "is not shown again)", 0},
	{"metrics", OPT_METRICS, "LIST", 0, "Also collect these CUPTI metrics, comma-separated",
	 0},
	{"timeline-only", OPT_TIMELINE_ONLY, 0, 0, "Record only the timeline (what the GPU "
	 "ran, when, and what the host did meanwhile): no counters and no replay, so much "
	 "cheaper than a default run (a fifth more time on a PyTorch training loop on an H200, "
	 "most of it CUPTI's kernel records); the kernels get no class", 0},
	{"no-timeline", OPT_NO_TIMELINE, 0, 0, "Do not record the timeline: the kernels' counters "
	 "only (no advice on copies, synchronisations or launching)", 0},
	{"watchdog", OPT_WATCHDOG, "SEC", 0, "Stop a process whose measured launch has not "
	 "finished after SEC seconds: a kernel that waits for another stream or process (a "
	 "spin-wait, a collective) cannot finish while the profiler serializes it; the report "
	 "names the kernel (default 120; 0: no watchdog)", 0},
	{"quiet", OPT_QUIET, 0, 0, "No progress line and no notes on standard error (errors and "
	 "warnings stay); the progress line is only drawn on a terminal anyway", 0},
	{"save-counter-data", OPT_SAVE_COUNTER_DATA, "FILE", OPTION_HIDDEN,
	 "Write the first raw counter-data image to FILE (test fixtures)", 0},
	{0},
};

static void add_metrics(ga_cmd_parse *ps, const char *arg)
{
	ga_config *c = ps->cfg;
	char *copy = ga_xstrdup(arg), *save = NULL;

	for (char *t = strtok_r(copy, ",", &save); t; t = strtok_r(NULL, ",", &save))
		GA_PUSH(c->extra_metrics, c->n_extra_metrics, ps->cap_extra, ga_xstrdup(t));
	free(copy);
}

static error_t parse_opt(int key, char *arg, struct argp_state *state)
{
	ga_cmd_parse *ps = state->input;
	ga_config *c = ps->cfg;

	switch (key) {
	case 'k':
		c->kernel_filter = arg;
		break;
	case 's':
		c->launch_skip = ga_cmd_parse_count(state, "--launch-skip", arg);
		break;
	case 'c':
		c->launch_count = ga_cmd_parse_count(state, "--launch-count", arg);
		break;
	case OPT_MAX_PER_KERNEL:
		c->max_per_kernel = ga_cmd_parse_count(state, "--max-per-kernel", arg);
		break;
	case OPT_MIN_SHARE:
		c->min_share = ga_cmd_parse_pct(state, "--min-share", arg, 100);
		break;
	case OPT_NO_LOOP_REPLAY:
		c->no_loop_replay = 1;
		break;
	case OPT_MAX_PASSES:
		c->max_passes = ga_cmd_parse_count(state, "--max-passes", arg);
		break;
	case OPT_METRICS:
		add_metrics(ps, arg);
		break;
	case OPT_SAVE_COUNTER_DATA:
		c->save_counter_data = arg;
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
	case OPT_QUIET:
		c->quiet = 1;
		break;
	case OPT_WATCHDOG:
		c->watchdog = ga_cmd_parse_count(state, "--watchdog", arg);
		break;
	case OPT_TIMELINE_ONLY:
		if (c->timeline < 0)
			argp_error(state, "--timeline-only and --no-timeline exclude each other");
		c->timeline = 1;
		break;
	case OPT_NO_TIMELINE:
		if (c->timeline > 0)
			argp_error(state, "--timeline-only and --no-timeline exclude each other");
		c->timeline = -1;
		break;
	case ARGP_KEY_ARG:
		/* PROGRAM: everything from here on belongs to the application. */
		c->app_argv = &state->argv[state->next - 1];
		state->next = state->argc;
		break;
	default:
		return ARGP_ERR_UNKNOWN;
	}
	return 0;
}

const struct argp ga_cmd_profile_argp = {options, parse_opt, NULL, NULL, NULL, NULL, NULL};

/* Some timeline holds a kernel, a copy or a memory set. */
static int timelines_have_work(const ga_profile *p)
{
	for (size_t i = 0; i < p->n_timelines; i++)
		for (size_t d = 0; d < p->timelines[i].n_devices; d++)
			if (p->timelines[i].devices[d].busy_ns > 0)
				return 1;
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

/* What the filters are, for a run they selected nothing in. */
#define NO_MATCH "no kernel launch matched the filters (-k/--launch-skip; -k compares the " \
	"function name, the demangled and the mangled name)"

/* Why a run has nothing to report: which of the usual causes. */
static void say_nothing_profiled(const ga_config *cfg, const ga_app_result *res,
                                 const char *inject)
{
	if (res->interrupted)
		fprintf(stderr, "gpuadvise: no kernel was profiled before the interruption\n");
	else if (res->watchdog)
		fprintf(stderr, "gpuadvise: no kernel was profiled before the watchdog "
		        "stopped the program\n");
	else if (res->cuda_processes == 0)
		fprintf(stderr, "gpuadvise: %s did not initialise CUDA, so no kernel was "
		        "profiled (if it does use CUDA, the driver may have failed to load %s: "
		        "LD_DEBUG=libs shows why)\n", cfg->app_argv[0], inject);
	else if (cfg->kernel_filter || cfg->launch_skip)
		fprintf(stderr, "gpuadvise: " NO_MATCH "\n");
	else
		fprintf(stderr, "gpuadvise: %s launched no CUDA kernel (kernels in CUDA "
		        "graphs are not seen by launch callbacks)\n", cfg->app_argv[0]);
}

int ga_cmd_profile(const ga_config *cfg, const ga_ruleset *rs, const ga_profile *baseline)
{
	ga_profile p;
	ga_error err = {0};
	ga_app_result res = {0};
	ga_plan mp;
	char *inject = ga_inject_path();
	int rc = 0, app_rc;

	ga_cmd_plan(cfg, rs, &mp);
	ga_profile_init(&p);
	if (!GA_HAVE_CUPTI || !inject) {
		/* Still say "not found" for a missing program first. */
		char *prog = ga_find_program(cfg->app_argv[0], &err);
		if (!prog) {
			fprintf(stderr, "gpuadvise: %s\n", err.msg);
			rc = GA_EXIT_USAGE;
			goto out;
		}
		free(prog);
		if (!GA_HAVE_CUPTI)
			fprintf(stderr, "gpuadvise: this gpuadvise was built without CUPTI (live "
			        "profiling is unavailable); use --import FILE to analyse a saved "
			        "profile\n");
		else
			fprintf(stderr, "gpuadvise: the injection library libgpuadvise-inject.so "
			        "was not found beside gpuadvise, in its install prefix (%s) or in "
			        "%s; reinstall gpuadvise or set GPUADVISE_INJECT\n",
			        GA_LIBDIR_REL "/gpuadvise", GA_PKGLIBDIR);
		rc = GA_EXIT_PROFILING;
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
		.nvtx_off = cfg->nvtx < 0,
		.quick = cfg->quick,
		.keep_image = cfg->save_counter_data,
		.source_mode = cfg->source > 0 ? "force" : cfg->source < 0 ? "off" : "auto",
		.stalls = cfg->stalls,
		/* Only a person watching a terminal wants it: not a CI log. */
		.progress = !cfg->quiet && isatty(STDERR_FILENO),
		/* Which kernels get source lines in "auto" mode is the rules'
		 * call, as text the collector evaluates. */
		.source_when = mp.source_when,
		.source_skip = mp.source_skip,
		.source_opcodes = mp.source_opcodes,
		.no_replay = mp.no_replay,
		.watchdog_s = cfg->watchdog,
		.timeline = cfg->timeline < 0 ? 0 : cfg->timeline > 0 ? 2 : 1,
	};
	if (ga_collect_live(&lo, &p, &res, &err) != 0) {
		fprintf(stderr, "gpuadvise: %s\n", err.msg);
		/* "-f json" from before 0.2: json became the program. */
		if (err.code == GA_ERR_NOT_FOUND && cfg->force_overwrite &&
		    ga_reporter_find(cfg->app_argv[0]))
			fprintf(stderr, "gpuadvise: -f is --force-overwrite (as in Nsight Compute); "
			        "the report format is --format %s\n", cfg->app_argv[0]);
		/* Without a GPU the program's own failure is a consequence:
		 * the status says why (4). */
		app_rc = err.code == GA_ERR_NO_GPU ? 0 : app_failure_status(&res);
		rc = app_rc ? app_rc : ga_cmd_exit_for_error(&err);
		goto out;
	}
	app_rc = app_failure_status(&res);
	if (p.collection.note && !cfg->quiet)
		fprintf(stderr, "gpuadvise: note: %s\n", p.collection.note);
	/* With --timeline-only nothing is profiled, and the timeline is the
	 * report, when it holds some GPU work. */
	if (p.n_launches == 0 && !timelines_have_work(&p)) {
		say_nothing_profiled(cfg, &res, inject);
		rc = app_rc ? app_rc : GA_EXIT_PROFILING;
		/* A run cut short (a signal, the watchdog, the program's own
		 * failure or death) still leaves its report: what each process
		 * recorded, the notes that say why it ends there. */
		if (!(res.interrupted || res.watchdog || res.signal || app_rc))
			goto out;
	} else if (p.n_launches == 0 && cfg->timeline != 1 && (cfg->kernel_filter || cfg->launch_skip) &&
	           !res.interrupted && !res.watchdog) {
		/* The program's kernels ran (the timeline timed them), but the
		 * filters selected none: the report is the timeline alone. */
		fprintf(stderr, "gpuadvise: warning: " NO_MATCH ": the report has the timeline "
		        "only\n");
	}
	ga_cmd_report_extra x = {.baseline = baseline};
	rc = ga_cmd_report(cfg, rs, &p, &x);
	if (app_rc)
		rc = app_rc;
out:
	/* The watchdog ended a process: the program did not run to its end
	 * because of the profiler, a profiling failure whatever the program's
	 * status then (the note names the kernel). */
	if (res.watchdog && !ga_signals_received()) {
		fprintf(stderr, "gpuadvise: the watchdog stopped %d process(es) whose measured "
		        "launch made no progress (see the note)\n", res.watchdog);
		rc = GA_EXIT_PROFILING;
	}
	/* SIGINT, SIGTERM or SIGHUP: the program was stopped, what it had
	 * measured reported; the status says gpuadvise was interrupted. */
	if (ga_signals_received())
		rc = 128 + ga_signals_received();
	ga_plan_free(&mp);
	free(inject);
	ga_profile_free(&p);
	return rc;
}
