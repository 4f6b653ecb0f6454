/* rules.c: the rule commands, `--check-rules DIR`, `--list-rules` and
 * `--explain ID`, and loading the rules every other command uses (the
 * installed ones, the user's, then each --rules DIR). */
#include "cmd.h"

#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "../analyze/analyze.h"

enum {
	OPT_LIST_RULES = 1300,
	OPT_EXPLAIN,
	OPT_CHECK_RULES,
	OPT_NO_DEFAULT_RULES,
};

static const struct argp_option options[] = {
	{"rules", 'r', "DIR", 0, "Also load rules from DIR; rules with the same id replace "
	 "earlier ones (repeatable)", 0},
	{"no-default-rules", OPT_NO_DEFAULT_RULES, 0, 0, "Do not load the installed rules", 0},
	{"list-rules", OPT_LIST_RULES, 0, 0, "List the loaded rules", 0},
	{"explain", OPT_EXPLAIN, "ID", 0, "Explain a rule: what it measures, why it matters, the "
	 "fix", 0},
	{"check-rules", OPT_CHECK_RULES, "DIR", 0, "Check the rule files in DIR and report every "
	 "error as FILE:LINE:COL", 0},
	{0},
};

static error_t parse_opt(int key, char *arg, struct argp_state *state)
{
	ga_cmd_parse *ps = state->input;
	ga_config *c = ps->cfg;

	switch (key) {
	case 'r':
		GA_PUSH(c->rule_dirs, c->n_rule_dirs, ps->cap_rule_dirs, arg);
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
	default:
		return ARGP_ERR_UNKNOWN;
	}
	return 0;
}

const struct argp ga_cmd_rules_argp = {options, parse_opt, NULL, NULL, NULL, NULL, NULL};

int ga_cmd_load_rules(const ga_config *cfg, ga_ruleset *rs)
{
	ga_diags d = {0};
	char *def = NULL, *user = NULL;
	int rc = 0;

	if (!cfg->no_default_rules) {
		def = ga_default_rules_dir();
		if (!def) {
			fprintf(stderr, "gpuadvise: the installed rules were not found (set "
			        "GPUADVISE_RULES_DIR or use --rules DIR)\n");
			return GA_EXIT_RULES;
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
		rc = GA_EXIT_RULES;
	}
	ga_diags_free(&d);
	free(def);
	free(user);
	return rc;
}

int ga_cmd_check_rules(const char *dir)
{
	ga_ruleset rs;
	ga_diags d = {0};
	ga_error err = {0};
	int rc = 0;
	char *cls = ga_xasprintf("%s/classify.yaml", dir);
	char *base = NULL;

	ga_ruleset_init(&rs);
	/* Nothing to check is no success: a mistyped or empty directory. */
	if (ga_rules_dir_files(dir) == 0) {
		fprintf(stderr, "%s: error: no rule files (*.yaml) in this directory: --check-rules "
		        "DIR checks a classifier (classify.yaml) and rules, or rules that add to or "
		        "override the installed ones\n", dir);
		free(cls);
		ga_ruleset_free(&rs);
		return GA_EXIT_RULES;
	}
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
		rc = GA_EXIT_RULES;
	} else if (ga_analyze_check_rules(&rs, &err) != 0) {
		/* Valid YAML, but a classifier the analysis cannot use: say so
		 * here rather than at the first report. */
		fprintf(stderr, "gpuadvise: %s\n", err.msg);
		rc = GA_EXIT_RULES;
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

int ga_cmd_list_rules(const ga_ruleset *rs)
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

/* The classifier's named expressions that a rule reads, directly or
 * through its own named expressions or other classifier names, so that
 * --explain defines every name it shows.  Marked in used[], printed in the
 * classifier's order. */
typedef struct {
	const ga_classifier *c;
	const ga_rule *rule;
	char *used;
} borrowed;

static int rule_defines(const ga_rule *r, const char *name)
{
	for (size_t i = 0; i < r->n_metrics; i++)
		if (strcmp(r->metrics[i].name, name) == 0)
			return 1;
	return 0;
}

static void mark_borrowed(void *ctx, const char *name)
{
	borrowed *b = ctx;

	if (b->rule && rule_defines(b->rule, name))
		return;
	for (size_t i = 0; i < b->c->n_metrics; i++)
		if (strcmp(b->c->metrics[i].name, name) == 0)
			b->used[i] = 1;
}

static void print_borrowed(const ga_ruleset *rs, const ga_rule *r)
{
	const ga_classifier *c = &rs->classifier;
	borrowed b = { .c = c, .rule = r, .used = ga_xcalloc(c->n_metrics + 1, 1) };

	for (size_t i = 0; i < r->n_metrics; i++)
		ga_expr_foreach_name(r->metrics[i].expr, mark_borrowed, &b);
	ga_expr_foreach_name(r->when, mark_borrowed, &b);
	ga_expr_foreach_name(r->estimate, mark_borrowed, &b);
	ga_expr_foreach_name(r->low, mark_borrowed, &b);
	ga_expr_foreach_name(r->high, mark_borrowed, &b);
	if (r->source_lines)
		ga_expr_foreach_name(r->source_lines, mark_borrowed, &b);
	/* A classifier name refers only to names defined before it. */
	b.rule = NULL;
	for (size_t i = c->n_metrics; i-- > 0;)
		if (b.used[i])
			ga_expr_foreach_name(c->metrics[i].expr, mark_borrowed, &b);
	for (size_t i = 0; i < c->n_metrics; i++)
		if (b.used[i])
			printf("  %s = %s   (classifier)\n", c->metrics[i].name, c->metrics[i].src);
	free(b.used);
}

int ga_cmd_explain_rule(const ga_ruleset *rs, const char *id)
{
	const ga_rule *r = ga_ruleset_find(rs, id);
	if (!r) {
		fprintf(stderr, "gpuadvise: no rule '%s' (gpuadvise --list-rules shows them)\n", id);
		return GA_EXIT_USAGE;
	}
	printf("%s: %s\n", r->id, r->title);
	printf("class %s, order %d (lower is fixed first), severity %s, typical speedup %g-%gx "
	       "(each finding's range comes from the model below)\n",
	       ga_class_name(r->klass), r->checklist, ga_severity_name(r->severity),
	       r->speedup_min, r->speedup_max);
	printf("file: %s\n", r->path ? r->path : "?");
	/* Whose kernels it advises on: without owners:, the editable ones. */
	printf("applies to: ");
	for (size_t i = 0; i < r->n_owners; i++)
		printf("%s%s", i ? ", " : "", r->owners[i].name);
	printf("%s\n\n", r->program ? "each process, on its timeline (scope: program)"
	                 : r->n_owners ? "" : "kernels the user can edit (no owners:)");
	print_block("Why it matters:", r->explain, 2);
	print_block("Fix:", r->fix, 2);
	print_block("Example:", r->example, 4);
	printf("Fires when: %s\n", r->when_src);
	if (r->model)
		printf("Model: %s\n", r->model);
	printf("Estimated saving (fraction of the %s): %s\n",
	       r->program ? "process's wall time" : "kernel's time", r->estimate_src);
	if (r->affects_src)
		printf("Part of the wall time the fix acts on: %s\n", r->affects_src);
	if (r->low_src && r->high_src)
		printf("Range of the saving: low %s, high %s\n", r->low_src, r->high_src);
	if (!r->program)
		printf("Floors: %s%s%s\n", r->checklist == 10 ? "the model's own launch cost"
		                                               : "one launch (launch_floor_ns)",
		       r->keeps_work ? "; the roofline bound, since the fix keeps the bytes and "
		                       "FLOPs (keeps_work)" : "",
		       r->keeps_instructions ? "; the issue time, since the fix keeps the "
		                               "instructions (keeps_instructions)" : "");
	if (r->source_lines_src)
		printf("Source lines measured when: %s\n", r->source_lines_src);
	for (size_t i = 0; i < r->n_metrics; i++)
		printf("  %s = %s\n", r->metrics[i].name, r->metrics[i].src);
	print_borrowed(rs, r);
	return 0;
}
