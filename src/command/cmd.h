/* cmd.h: the commands of gpuadvise, one file each, as git's builtin/ and
 * perf's builtin-*.c: profile.c (PROGRAM), import.c (--import, --baseline),
 * demo.c (--demo), rules.c (--check-rules, --list-rules, --explain) and
 * metrics.c (--list-metrics); report.c holds the output options the
 * profiling commands share; analyze/plan.h decides what a run collects.
 *
 * Each command file owns its options: an argp that main.c composes as a
 * child (struct argp_child), so --help lists them under the command's
 * heading.  Every parser fills the one ga_config (config.h); main.c checks
 * how the commands combine, dispatches, and maps errors to exit statuses. */
#ifndef GA_CMD_H
#define GA_CMD_H

#include <argp.h>
#include <stdio.h>

#include "config.h"
#include "../analyze/plan.h"
#include "../profile/profile.h"
#include "../report/report.h"
#include "../rules/rules.h"
#include "../util/util.h"

/* Exit statuses (main.c's header comment and gpuadvise(1) list them). */
enum {
	GA_EXIT_FINDINGS = 1,
	GA_EXIT_USAGE = 2,
	GA_EXIT_RULES = 3,
	GA_EXIT_PROFILING = 4,
};

/* The input of every option parser (state->input, and each child's). */
typedef struct {
	ga_config *cfg;
	size_t cap_imports, cap_rule_dirs, cap_extra;
} ga_cmd_parse;

/* The options of each command. */
extern const struct argp ga_cmd_profile_argp;   /* profile.c */
extern const struct argp ga_cmd_import_argp;    /* import.c */
extern const struct argp ga_cmd_report_argp;    /* report.c */
extern const struct argp ga_cmd_rules_argp;     /* rules.c */
extern const struct argp ga_cmd_metrics_argp;   /* metrics.c */
extern const struct argp ga_cmd_demo_argp;      /* demo.c */

/* Option values (args.c): they call argp_error, which exits with status 2. */
long ga_cmd_parse_count(struct argp_state *state, const char *opt, const char *arg);
/* A percentage such as 10, 2.5 or 1%, at most max. */
double ga_cmd_parse_pct(struct argp_state *state, const char *opt, const char *arg, double max);

/* args.c: the exit status for an error. */
int ga_cmd_exit_for_error(const ga_error *err);

/* ---- the commands: each returns the exit status ---------------------- */

/* profile.c: run PROGRAM under the collector, report (and -o) its profile. */
int ga_cmd_profile(const ga_config *cfg, const ga_ruleset *rs, const ga_profile *baseline);
/* import.c: analyse the --import files, pooled into one profile. */
int ga_cmd_import(const ga_config *cfg, const ga_ruleset *rs, const ga_profile *baseline);
/* import.c: load --baseline into *base (initialised here); 0 or the status. */
int ga_cmd_load_baseline(const ga_config *cfg, ga_profile *base);
/* demo.c: --demo NAME|list|all. */
int ga_cmd_demo(const ga_config *cfg, const ga_ruleset *rs);
/* rules.c */
int ga_cmd_load_rules(const ga_config *cfg, ga_ruleset *rs);
int ga_cmd_check_rules(const char *dir);
int ga_cmd_list_rules(const ga_ruleset *rs);
int ga_cmd_explain_rule(const ga_ruleset *rs, const char *id);
/* metrics.c: --list-metrics [--chip CHIP]. */
int ga_cmd_list_metrics(const ga_config *cfg, const ga_ruleset *rs);

/* ---- report.c: what the profiling commands share --------------------- */

/* Expand %p, %h, %q{ENV} in -o and --log-file (outname.h); the expanded
 * names are malloc'd into *export_path and *log_file, which replace the
 * config's.  0, or -1 after saying why. */
int ga_cmd_expand_output_names(ga_config *cfg, char **export_path, char **log_file);
/* outputs.c: an empty output name, or two names (outputs, or an output and
 * an input) for one file: 0, or status 2 after saying which. */
int ga_cmd_check_outputs(const ga_config *cfg);
int ga_cmd_use_color(const ga_config *cfg, FILE *out);

/* What a report needs besides the profile: the baseline to compare with
 * and the files the profile was pooled from (both optional). */
typedef struct {
	const ga_profile *baseline;
	const ga_report_input *inputs;
	size_t n_inputs;
} ga_cmd_report_extra;

/* Analyse and report one profile, then write it (-o); the exit status. */
int ga_cmd_report(const ga_config *cfg, const ga_ruleset *rs, const ga_profile *p,
                  const ga_cmd_report_extra *x);

/* ---- what to collect ------------------------------------------------ */

/* The metrics a run collects (analyze/plan.h) for this command line's
 * --quick and --metrics: the profile, demo and --list-metrics commands all
 * ask it. */
static inline void ga_cmd_plan(const ga_config *cfg, const ga_ruleset *rs, ga_plan *mp)
{
	ga_plan_opts o = {
		.quick = cfg->quick,
		.extra = (const char *const *)cfg->extra_metrics,
		.n_extra = cfg->n_extra_metrics,
	};
	ga_plan_metrics(rs, &o, mp);
}

#endif
