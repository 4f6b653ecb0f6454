/* markdown.c: a short report for a pull-request comment (GitHub-flavoured
 * Markdown): a heading, a one-line summary, the top findings and the
 * kernels as tables, and the fixes of the top three findings in a collapsed
 * <details> block.  Table cells escape '|' (also inside code spans, where
 * GitHub's table parser needs it) and have no line breaks.
 *
 * With timelines (ga_analysis.wall_currency) the summary, "What to do
 * first" and the fixes follow ga_analysis.first, the ranking by wall time
 * that every report shows, as a numbered list worded as the text report's
 * entries, after a Timeline section (markdown_timeline.c).  Without, the
 * report is what it was before timelines, byte for byte. */
#include "markdown.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#define MD_TOP_FINDINGS 5   /* rows in the findings table unless verbose */
#define MD_TOP_KERNELS 10   /* rows in the kernels table unless verbose */
#define MD_FIXES 3          /* fixes shown in the <details> block */
#define MD_NAME_COLS 60     /* kernel names longer than this are shortened */

/* Prose: Markdown punctuation and HTML brackets are escaped so that a title
 * cannot change the layout and "__syncthreads" does not turn bold, except
 * inside `code spans` written by the rule author, which are kept as they
 * are.  In a table cell (cell != 0) line breaks become spaces and '|' is
 * escaped even inside code spans, as GitHub's table parser needs. */
/* Whether s holds a run of exactly n backticks (closing a code span). */
static int closing_run(const char *s, size_t n)
{
	while ((s = strchr(s, '`'))) {
		size_t run = 0;
		while (s[run] == '`')
			run++;
		if (run == n)
			return 1;
		s += run;
	}
	return 0;
}

static void put_prose(ga_buf *b, const char *s, int cell)
{
	size_t open = 0;  /* length of the backtick run that opened a code span */
	while (s && *s) {
		if (*s == '`') {
			size_t run = 0;
			while (s[run] == '`')
				run++;
			if (open) {
				if (run == open)
					open = 0;
			} else if (closing_run(s + run, run)) {
				open = run;
			} else {
				/* no closing run: literal backticks */
				for (size_t i = 0; i < run; i++)
					ga_buf_puts(b, "\\`");
				s += run;
				continue;
			}
			for (size_t i = 0; i < run; i++)
				ga_buf_putc(b, '`');
			s += run;
			continue;
		}
		char c = *s++;
		if (c == '\n' || c == '\r' || c == '\t') {
			ga_buf_putc(b, cell || c == '\t' ? ' ' : c);
		} else if (c == '|' && (cell || !open)) {
			ga_buf_puts(b, "\\|");
		} else if (open) {
			ga_buf_putc(b, c);
		} else if (c == '<') {
			ga_buf_puts(b, "&lt;");
		} else if (c == '>') {
			ga_buf_puts(b, "&gt;");
		} else if (strchr("\\*_[]", c)) {
			ga_buf_putc(b, '\\');
			ga_buf_putc(b, c);
		} else {
			ga_buf_putc(b, c);
		}
	}
}

static void put_text(ga_buf *b, const char *s)
{
	put_prose(b, s, 1);
}

/* A kernel name as a code span, shortened to MD_NAME_COLS. */
static void put_code(ga_buf *b, const char *name)
{
	char *s = ga_short_name(name ? name : "?", MD_NAME_COLS);
	int tick = strchr(s, '`') != NULL;
	ga_buf_puts(b, tick ? "`` " : "`");
	for (const char *p = s; *p; p++) {
		if (*p == '|')
			ga_buf_puts(b, "\\|");
		else if (*p == '\n' || *p == '\r' || *p == '\t')
			ga_buf_putc(b, ' ');
		else
			ga_buf_putc(b, *p);
	}
	ga_buf_puts(b, tick ? " ``" : "`");
	free(s);
}

static const char *rule_title(const ga_rule *r)
{
	if (!r)
		return "?";
	return r->title ? r->title : r->id ? r->id : "?";
}

static const char *group_name(const ga_analysis *a, size_t gi)
{
	if (gi >= a->n_groups)
		return "?";
	const ga_group *g = &a->groups[gi];
	return g->name ? g->name : g->mangled ? g->mangled : "?";
}

/* The longest run of backticks in s, so a fence can be longer. */
static size_t longest_tick_run(const char *s)
{
	size_t best = 0, run = 0;
	for (; s && *s; s++) {
		run = *s == '`' ? run + 1 : 0;
		if (run > best)
			best = run;
	}
	return best;
}

static void summary(ga_buf *b, const ga_analysis *a)
{
	char d[32], p[32];
	size_t launches = a->n_launches;

	if (a->n_findings == 0) {
		ga_buf_puts(b, "No findings: every kernel is below the rules' thresholds. ");
		ga_buf_printf(b, "%zu %s, %zu %s, %s of GPU time.\n", a->n_groups,
		              ga_plural(a->n_groups, "kernel", "kernels"), launches,
		              ga_plural(launches, "launch", "launches"),
		              ga_fmt_duration(a->total_ns, d, sizeof(d)));
		return;
	}
	/* the first entry of "What to do first", a kernel's shapes summed */
	const ga_do *d0 = !a->framework_first && a->n_first ? &a->first[0] : NULL;
	const ga_finding *f = d0 ? &a->findings[d0->index] : &a->findings[0];
	ga_figures x;
	ga_finding_figures(f, d0, &x);
	ga_buf_printf(b, "**%zu %s** in %zu %s (%zu %s, %s of GPU time). Do first: **",
	              a->n_findings, ga_plural(a->n_findings, "finding", "findings"), a->n_groups,
	              ga_plural(a->n_groups, "kernel", "kernels"), launches,
	              ga_plural(launches, "launch", "launches"),
	              ga_fmt_duration(a->total_ns, d, sizeof(d)));
	put_text(b, rule_title(f->rule));
	ga_buf_puts(b, "** in ");
	put_code(b, group_name(a, f->group));
	if (x.shapes > 1)
		ga_buf_printf(b, " (%zu launch shapes)", x.shapes);
	ga_buf_printf(b, ", saving ~%s%% of GPU time.\n", ga_fmt_pct(x.saving, 0, p, sizeof(p)));
}

/* The findings by GPU time, each kernel's launch shapes summed (a->first;
 * a->findings where library kernels hold most of the time, a->first then
 * holding the framework's actions). */
static size_t table_entries(const ga_analysis *a)
{
	return a->framework_first ? a->n_findings : a->n_first;
}

static void findings_table(ga_buf *b, const ga_analysis *a, size_t shown)
{
	char p[32], r1[64];
	size_t n = table_entries(a);
	ga_buf_puts(b, "\n#### What to do first\n\n");
	ga_buf_puts(b, "| # | Kernel | Class | Finding | Saves (of total GPU time) | Expected speedup |\n");
	ga_buf_puts(b, "|--:|--------|-------|---------|--------------------------:|-----------------:|\n");
	for (size_t i = 0; i < shown; i++) {
		const ga_do *d = a->framework_first ? NULL : &a->first[i];
		const ga_finding *f = d ? &a->findings[d->index] : &a->findings[i];
		const ga_rule *r = f->rule;
		ga_figures x;
		ga_finding_figures(f, d, &x);
		ga_buf_printf(b, "| %zu | ", i + 1);
		put_code(b, group_name(a, f->group));
		if (x.shapes > 1)
			ga_buf_printf(b, " (%zu launch shapes)", x.shapes);
		ga_buf_printf(b, " | %s | ", ga_report_class(a->groups[f->group].klass));
		put_text(b, rule_title(r));
		if (r)
			ga_buf_printf(b, " (%s)", ga_report_severity(r->severity));
		if (f->estimate_missing) {
			ga_buf_puts(b, " | estimate needs ");
			put_code(b, f->estimate_missing);
			ga_buf_puts(b, " | n/a |\n");
			continue;
		}
		ga_buf_printf(b, " | %s%% | %s |\n", ga_fmt_pct(x.saving, 0, p, sizeof(p)),
		              r ? ga_fmt_speedup_range(x.speedup_min, x.speedup_max, r1, sizeof(r1))
		                : "n/a");
	}
	if (shown < n)
		ga_buf_printf(b, "\n%zu more %s in the full report.\n", n - shown,
		              ga_plural(n - shown, "finding", "findings"));
}

/* Operations from NVTX ranges: the first `shown` of them. */
static void operations_table(ga_buf *b, const ga_analysis *a, size_t shown)
{
	char p[32], s[32];
	ga_buf_puts(b, "\n#### Operations\n\n");
	if (a->n_ops == 0) {
		ga_buf_puts(b, "No launch was in an NVTX range.\n");
		return;
	}
	ga_buf_puts(b, "| Operation | % time | Kernels | Launches | Top finding | Saves |\n");
	ga_buf_puts(b, "|-----------|-------:|--------:|---------:|-------------|------:|\n");
	for (size_t i = 0; i < shown; i++) {
		const ga_op *op = &a->ops[i];
		ga_buf_puts(b, "| ");
		put_code(b, op->name);
		ga_buf_printf(b, " | %s%% | %zu | %ld | ", ga_fmt_pct(op->share, 1, p, sizeof(p)),
		              op->n_kernels, op->launches);
		if (op->top_finding >= 0 && (size_t)op->top_finding < a->n_findings) {
			const ga_finding *f = &a->findings[op->top_finding];
			put_text(b, rule_title(f->rule));
			ga_buf_puts(b, " on ");
			put_code(b, group_name(a, f->group));
			ga_buf_printf(b, " | %s%% |\n", ga_fmt_pct(op->top_saving, 1, s, sizeof(s)));
		} else {
			ga_buf_puts(b, "none | |\n");
		}
	}
	if (shown < a->n_ops)
		ga_buf_printf(b, "\n%zu more %s in the full report.\n", a->n_ops - shown,
		              ga_plural(a->n_ops - shown, "operation", "operations"));
}

/* A kernel of many launch shapes is one row unless verbose, its shapes
 * summed. */
static int folded(const ga_group *g, int verbose)
{
	return !verbose && ga_report_folded(g);
}

static void kernel_row(ga_buf *b, const ga_analysis *a, size_t gi, int fold)
{
	const ga_group *g = &a->groups[gi];
	ga_kernel_sums k = {g->share, g->total_ns, g->n_launches, g->timeline_launches,
	                    g->unprofiled};
	if (fold)
		ga_kernel_sum_shapes(a, gi, &k);
	char p[32], d[32];
	double all = (double)k.launches + (double)(k.timed > 0 ? k.timed : 0) +
	             (double)(k.unprofiled > 0 ? k.unprofiled : 0);
	double mean = fold ? (all > 0 ? k.total_ns / all : NAN) : g->mean_ns;
	ga_buf_puts(b, "| ");
	put_code(b, group_name(a, gi));
	if (fold)
		ga_buf_printf(b, " (%zu launch shapes)", g->kernel_shapes);
	ga_buf_printf(b, " | %s | %s%% | %s | %zu", ga_report_class(g->klass),
	              ga_fmt_pct(k.share, 1, p, sizeof(p)), ga_fmt_duration(mean, d, sizeof(d)),
	              k.launches);
	if (k.timed)
		ga_buf_printf(b, " (+%ld timed)", k.timed);
	ga_buf_puts(b, " | ");
	if (g->n_findings && g->findings[0] < a->n_findings)
		put_text(b, rule_title(a->findings[g->findings[0]].rule));
	else
		ga_buf_puts(b, "none");
	ga_buf_puts(b, " |\n");
}

/* The groups of the kernels and source tables, up to rows of them (in
 * *out, malloc'd), by share: a folded kernel's row stands where its
 * largest shape would.  *covered: the groups they stand for. */
static size_t table_groups(const ga_analysis *a, size_t rows, int verbose, size_t **out,
                           size_t *covered)
{
	size_t n = 0;
	*out = ga_xcalloc(rows + 1, sizeof(**out));
	*covered = 0;
	for (size_t i = 0; i < a->n_groups && n < rows; i++) {
		const ga_group *g = &a->groups[i];
		int fold = folded(g, verbose);
		if (fold && g->kernel_first != i)
			continue;                /* on its kernel's row already */
		(*out)[n++] = i;
		*covered += fold ? g->kernel_shapes : 1;
	}
	return n;
}

static void kernels_table(ga_buf *b, const ga_analysis *a, const size_t *rows, size_t n,
                          size_t covered, int verbose)
{
	ga_buf_puts(b, "\n#### Kernels\n\n");
	ga_buf_puts(b, "| Kernel | Class | % time | Mean time | Launches | Top finding |\n");
	ga_buf_puts(b, "|--------|-------|-------:|----------:|---------:|-------------|\n");
	for (size_t i = 0; i < n; i++)
		kernel_row(b, a, rows[i], folded(&a->groups[rows[i]], verbose));
	if (covered < a->n_groups)
		ga_buf_printf(b, "\n%zu more %s in the full report.\n", a->n_groups - covered,
		              ga_plural(a->n_groups - covered, "kernel", "kernels"));
}

/* A rule's fix, its estimate's model and its example. */
static void fix_body(ga_buf *b, const ga_rule *r)
{
	if (r && r->fix && *r->fix) {
		ga_buf_putc(b, '\n');
		put_prose(b, r->fix, 0);
		ga_buf_putc(b, '\n');
	}
	if (r && r->model) {
		ga_buf_puts(b, "\nEstimate's model: ");
		put_text(b, r->model);
		ga_buf_putc(b, '\n');
	}
	if (r && r->example && *r->example) {
		size_t ticks = longest_tick_run(r->example) + 1;
		if (ticks < 3)
			ticks = 3;
		size_t len = strlen(r->example);
		while (len && r->example[len - 1] == '\n')
			len--;
		ga_buf_putc(b, '\n');
		for (size_t k = 0; k < ticks; k++)
			ga_buf_putc(b, '`');
		ga_buf_printf(b, "cuda\n%.*s\n", (int)len, r->example);
		for (size_t k = 0; k < ticks; k++)
			ga_buf_putc(b, '`');
		ga_buf_putc(b, '\n');
	}
}

/* "How to fix" opened for the first of `entries`, at most MD_FIXES: how
 * many it shows (0: none, nothing written). */
static size_t fixes_open(ga_buf *b, size_t entries)
{
	size_t n = entries < MD_FIXES ? entries : MD_FIXES;
	if (n)
		ga_buf_printf(b, "\n<details>\n<summary>How to fix the top %s</summary>\n",
		              n == 1 ? "finding" : n == 2 ? "2 findings" : "3 findings");
	return n;
}

static void fixes(ga_buf *b, const ga_analysis *a)
{
	size_t n = fixes_open(b, a->n_findings);
	if (n == 0)
		return;
	for (size_t i = 0; i < n; i++) {
		const ga_finding *f = &a->findings[i];
		const ga_rule *r = f->rule;
		ga_buf_printf(b, "\n**%zu. ", i + 1);
		put_text(b, rule_title(r));
		ga_buf_puts(b, "** in ");
		put_code(b, group_name(a, f->group));
		ga_buf_puts(b, "\n");
		fix_body(b, r);
	}
	ga_buf_puts(b, "\n</details>\n");
}

/* Where to change the shown kernels: the top source lines of the kernels
 * table's groups (a folded kernel's: its largest shape's). */
static void source_table(ga_buf *b, const ga_analysis *a, const size_t *rows, size_t shown)
{
	int any = 0;
	for (size_t r = 0; r < shown; r++) {
		size_t i = rows[r];
		const ga_source *src = a->groups[i].source;
		const ga_source_line *top = a->groups[i].lines;
		size_t n = a->groups[i].n_lines;
		if (!src)
			continue;
		if (!any) {
			ga_buf_puts(b, "\n#### Source lines\n\n");
			ga_buf_puts(b, "| Kernel | Line | What is wrong there | Share | Code |\n");
			ga_buf_puts(b, "|--------|------|---------------------|------:|------|\n");
			any = 1;
		}
		if (n == 0 || !src->lineinfo) {
			ga_buf_puts(b, "| ");
			put_code(b, group_name(a, i));
			ga_buf_puts(b, src->lineinfo ? " | | no line stands out | | |\n"
			                             : " | | no line information: compile with -lineinfo | | |\n");
		}
		for (size_t k = 0; k < n; k++) {
			char loc[300];
			if (top[k].file)
				snprintf(loc, sizeof(loc), "%s:%d", ga_report_basename(top[k].file),
				         top[k].line);
			else
				snprintf(loc, sizeof(loc), "+0x%x", top[k].pc);
			ga_buf_puts(b, "| ");
			put_code(b, group_name(a, i));
			ga_buf_puts(b, " | ");
			put_code(b, loc);
			ga_buf_puts(b, " | ");
			put_text(b, top[k].desc);
			ga_buf_printf(b, " | %.0f%% | ", 100 * top[k].score);
			if (top[k].text)
				put_code(b, top[k].text);
			ga_buf_puts(b, " |\n");
		}
	}
}

/* ---- with timelines: "What to do first" by wall time ---------------------- *
 *
 * ga_analysis.first, the one ranking every report follows: the program
 * findings, the framework actions and the kernel findings by the share of
 * wall time each saves, worded as the text report words them. */

#define MD_ACTION_KERNELS 3  /* kernels named per action unless verbose */

/* "~27%" or "<1%". */
static void saving(ga_buf *b, double frac)
{
	char p[32];
	ga_fmt_pct(frac, 0, p, sizeof(p));
	ga_buf_printf(b, "%s%s%%", p[0] == '<' ? "" : "~", p);
}

/* A kernel in a list: its name, " #n" when others read the same, and its
 * owner when not the user. */
static void kernel_ref(ga_buf *b, const ga_analysis *a, size_t gi)
{
	const ga_group *g = &a->groups[gi];
	put_code(b, group_name(a, gi));
	if (g->name_peers > 1)
		ga_buf_printf(b, " #%zu", g->name_index);
	if (g->owner && strcmp(g->owner->name, GA_OWNER_DEFAULT) != 0 && g->owner->display) {
		ga_buf_puts(b, " (");
		put_text(b, g->owner->display);
		ga_buf_putc(b, ')');
	}
}

static void pfinding_item(ga_buf *b, const ga_analysis *a, const ga_pfinding *f)
{
	char b1[64], b2[64];
	ga_buf_puts(b, "**");
	put_text(b, rule_title(f->rule));
	ga_buf_puts(b, "**");
	if (a->n_tl > 1 && !a->ranks.multi)
		ga_buf_printf(b, " (pid %d)", f->pid);
	ga_buf_printf(b, " (%s) \xe2\x80\x94 ", ga_report_severity(f->rule->severity));
	if (f->estimate_missing) {
		ga_buf_puts(b, "estimate needs ");
		put_code(b, f->estimate_missing);
		return;
	}
	ga_buf_puts(b, "saves ");
	saving(b, f->estimate);
	ga_buf_printf(b, " of wall time, estimated %s%s, fix %s",
	              ga_fmt_speedup(f->speedup, b1, sizeof(b1)),
	              f->affects < 1 ? " on the part it changes" : "",
	              ga_fmt_speedup_range(f->speedup_min, f->speedup_max, b2, sizeof(b2)));
}

static void finding_item(ga_buf *b, const ga_analysis *a, const ga_finding *f, const ga_do *d)
{
	const ga_rule *r = f->rule;
	char b1[64], fr[160];
	ga_figures x;

	ga_finding_figures(f, d, &x);
	ga_buf_puts(b, "**");
	put_text(b, rule_title(r));
	ga_buf_puts(b, "** in ");
	if (x.shapes > 1)
		put_code(b, group_name(a, f->group));
	else
		kernel_ref(b, a, f->group);
	if (r)
		ga_buf_printf(b, " (%s)", ga_report_severity(r->severity));
	ga_buf_puts(b, " \xe2\x80\x94 ");
	if (x.shapes > 1)
		ga_buf_printf(b, "on %zu launch shapes: ", x.shapes);
	if (f->estimate_missing) {
		ga_buf_puts(b, "estimate needs ");
		put_code(b, f->estimate_missing);
	} else {
		ga_buf_puts(b, "saves ");
		if (isfinite(x.wall_saving)) {
			saving(b, x.wall_saving);
			ga_buf_puts(b, " of wall time (");
			saving(b, x.saving);
			ga_buf_puts(b, " of GPU time)");
		} else {
			saving(b, x.saving);
			ga_buf_puts(b, " of GPU time");
		}
		ga_buf_printf(b, ", estimated %s", ga_fmt_speedup(x.speedup, b1, sizeof(b1)));
		if (r)
			ga_buf_printf(b, ", fix %s", ga_fmt_fix_range(x.speedup_min, x.speedup_max,
			                                               fr, sizeof(fr)));
	}
	ga_buf_printf(b, "; %s-bound", ga_report_class(a->groups[f->group].klass));
}

static void action_item(ga_buf *b, const ga_analysis *a, const ga_action *ac, int verbose)
{
	char p[32];
	size_t named = ac->n_findings;
	if (!verbose && named > MD_ACTION_KERNELS)
		named = MD_ACTION_KERNELS;
	ga_buf_puts(b, "**");
	put_text(b, rule_title(ac->rule));
	ga_buf_printf(b, "** (%s) \xe2\x80\x94 saves ", ga_report_severity(ac->rule->severity));
	saving(b, ac->wall_saving);
	ga_buf_puts(b, " of wall time (");
	saving(b, ac->saving);
	ga_buf_puts(b, " of GPU time) (");
	put_code(b, ac->rule->id);
	ga_buf_printf(b, ") in %zu %s holding %s%%:", ac->n_findings,
	              ga_plural(ac->n_findings, "kernel", "kernels"),
	              ga_fmt_pct(ac->share, 0, p, sizeof(p)));
	for (size_t k = 0; k < named; k++) {
		ga_buf_puts(b, k ? ", " : " ");
		kernel_ref(b, a, a->findings[ac->findings[k]].group);
	}
	if (named < ac->n_findings)
		ga_buf_printf(b, " and %zu more", ac->n_findings - named);
}

static void first_list(ga_buf *b, const ga_analysis *a, int verbose)
{
	size_t shown = a->n_first;
	if (!verbose && shown > MD_TOP_FINDINGS)
		shown = MD_TOP_FINDINGS;
	ga_buf_puts(b, "\n#### What to do first\n\n");
	for (size_t i = 0; i < shown; i++) {
		const ga_do *d = &a->first[i];
		ga_buf_printf(b, "%zu. ", i + 1);
		if (d->kind == GA_DO_PROGRAM)
			pfinding_item(b, a, &a->pfindings[d->index]);
		else if (d->kind == GA_DO_ACTION)
			action_item(b, a, &a->actions[d->index], verbose);
		else
			finding_item(b, a, &a->findings[d->index], d);
		md_on_ranks(b, a, d);
		ga_buf_putc(b, '\n');
	}
	if (shown < a->n_first)
		ga_buf_printf(b, "\n%zu more in the full report.\n", a->n_first - shown);
}

/* The summary line: the findings, and the first of a->first. */
static void summary_wall(ga_buf *b, const ga_analysis *a)
{
	char d[32];
	size_t n = a->n_findings + a->n_pfindings, launches = a->n_launches;

	if (a->n_first == 0) {
		ga_buf_printf(b, "No findings: neither the timeline nor any kernel crosses the rules' "
		              "thresholds. %zu %s, %zu %s, %s of GPU time.\n", a->n_groups,
		              ga_plural(a->n_groups, "kernel", "kernels"), launches,
		              ga_plural(launches, "launch", "launches"),
		              ga_fmt_duration(a->total_ns, d, sizeof(d)));
		return;
	}
	ga_buf_printf(b, "**%zu %s**", n, ga_plural(n, "finding", "findings"));
	if (a->n_pfindings)
		ga_buf_printf(b, ": %zu on the timeline, %zu", a->n_pfindings, a->n_findings);
	ga_buf_printf(b, " in %zu %s (%zu %s, %s of GPU time). Do first: **",
	              a->n_groups, ga_plural(a->n_groups, "kernel", "kernels"), launches,
	              ga_plural(launches, "launch", "launches"),
	              ga_fmt_duration(a->total_ns, d, sizeof(d)));
	const ga_do *f = &a->first[0];
	if (f->kind == GA_DO_PROGRAM) {
		const ga_pfinding *p = &a->pfindings[f->index];
		put_text(b, rule_title(p->rule));
		ga_buf_puts(b, "**");
		if (f->on_ranks)
			ga_buf_printf(b, " (on %zu of %zu ranks)", f->on_ranks, a->ranks.n);
		else if (a->n_tl > 1)
			ga_buf_printf(b, " (pid %d)", p->pid);
	} else if (f->kind == GA_DO_ACTION) {
		put_text(b, rule_title(a->actions[f->index].rule));
		ga_buf_puts(b, "** (");
		put_code(b, a->actions[f->index].rule->id);
		ga_buf_putc(b, ')');
	} else {
		const ga_finding *k = &a->findings[f->index];
		put_text(b, rule_title(k->rule));
		ga_buf_puts(b, "** in ");
		put_code(b, group_name(a, k->group));
	}
	if (isfinite(f->saving)) {
		ga_buf_puts(b, ", saving ");
		saving(b, f->saving);
		ga_buf_puts(b, " of wall time");
	}
	ga_buf_puts(b, ".\n");
}

/* "How to fix" for the first MD_FIXES entries of a->first. */
static void fixes_wall(ga_buf *b, const ga_analysis *a)
{
	size_t n = fixes_open(b, a->n_first);
	if (n == 0)
		return;
	for (size_t i = 0; i < n; i++) {
		const ga_do *d = &a->first[i];
		const ga_rule *r;
		ga_buf_printf(b, "\n**%zu. ", i + 1);
		if (d->kind == GA_DO_PROGRAM) {
			r = a->pfindings[d->index].rule;
			put_text(b, rule_title(r));
			ga_buf_puts(b, "**");
			if (a->n_tl > 1 && !a->ranks.multi)
				ga_buf_printf(b, " (pid %d)", a->pfindings[d->index].pid);
		} else if (d->kind == GA_DO_ACTION) {
			const ga_action *ac = &a->actions[d->index];
			r = ac->rule;
			put_text(b, rule_title(r));
			ga_buf_printf(b, "** in %zu %s", ac->n_findings,
			              ga_plural(ac->n_findings, "kernel", "kernels"));
		} else {
			r = a->findings[d->index].rule;
			put_text(b, rule_title(r));
			ga_buf_puts(b, "** in ");
			put_code(b, group_name(a, a->findings[d->index].group));
		}
		ga_buf_puts(b, "\n");
		fix_body(b, r);
	}
	ga_buf_puts(b, "\n</details>\n");
}

/* ---- processes and baseline (added with --baseline) -------------------- */

static void processes_table(ga_buf *b, const ga_analysis *a, const ga_report_opts *o)
{
	const ga_process *v = a->processes;
	size_t n = a->n_processes, kernels = 0, launches = 0;
	char d[32], p[32];

	ga_buf_puts(b, "\n#### Processes\n\n");
	ga_buf_puts(b, "| Process | Kernels | Launches | GPU time | % time | File |\n");
	ga_buf_puts(b, "|--------:|--------:|---------:|---------:|-------:|------|\n");
	for (size_t i = 0; i < n; i++) {
		ga_buf_printf(b, "| %d | %zu | %zu | %s | %s%% | ", v[i].pid, v[i].n_kernels,
		              v[i].n_launches, ga_fmt_duration(v[i].total_ns, d, sizeof(d)),
		              ga_fmt_pct(v[i].share, 1, p, sizeof(p)));
		const char **files;
		size_t nf = ga_report_process_files(a, o, v[i].pid, &files);
		for (size_t f = 0; f < nf; f++) {
			if (f)
				ga_buf_puts(b, ", ");
			put_code(b, files[f]);
		}
		free(files);
		ga_buf_puts(b, " |\n");
		kernels += v[i].n_kernels;
		launches += v[i].n_launches;
	}
	ga_buf_printf(b, "| **total** | %zu | %zu | %s | 100%% | |\n", kernels, launches,
	              ga_fmt_duration(a->total_ns, d, sizeof(d)));
}

static void finding_ids(ga_buf *b, const ga_finding_change *v, size_t n)
{
	if (n == 0) {
		ga_buf_puts(b, "none");
		return;
	}
	for (size_t i = 0; i < n; i++) {
		const ga_rule *r = v[i].rule;
		ga_buf_printf(b, "%s%s`%s` (%s)%s", i ? ", " : "", v[i].regression ? "**" : "",
		              r && r->id ? r->id : "?", r ? ga_report_severity(r->severity) : "?",
		              v[i].regression ? "**" : "");
	}
}

/* Kernel names of one side only, as a sentence. */
static void only_list(ga_buf *b, const ga_comparison *c, int cur_side, const char *lead)
{
	size_t n = cur_side ? c->n_only_cur : c->n_only_base, shown = 0;
	if (!n)
		return;
	ga_buf_printf(b, "\n%s ", lead);
	for (size_t i = 0; i < c->n_kernels; i++) {
		const ga_kernel_change *k = &c->kernels[i];
		if (k->match != GA_MATCH_NONE || (k->cur != GA_NO_GROUP) != cur_side)
			continue;
		if (shown == MD_TOP_KERNELS) {
			ga_buf_printf(b, " and %zu more", n - shown);
			break;
		}
		const ga_group *g = cur_side ? &c->cur->groups[k->cur] : &c->base->groups[k->base];
		ga_buf_puts(b, shown ? ", " : "");
		put_code(b, g->name ? g->name : g->mangled);
		if (k->regression)
			ga_buf_puts(b, " (**regression**: new findings)");
		shown++;
	}
	ga_buf_puts(b, ".\n");
}

/* The gone findings of kernels that got faster: what each predicted for its
 * fix against what the kernel measured. */
static void prediction_list(ga_buf *b, const ga_comparison *c)
{
	size_t shown = 0;
	for (size_t i = 0; i < c->n_kernels; i++) {
		const ga_kernel_change *k = &c->kernels[i];
		for (size_t j = 0; k->cur != GA_NO_GROUP && j < k->n_removed; j++) {
			char *pred = ga_prediction_text(k->removed[j].rule, &k->removed[j].check);
			if (!pred)
				continue;
			if (shown++ == 0)
				ga_buf_puts(b, "\n**Predicted against measured** (findings gone from kernels "
				               "that got faster):\n\n");
			const ga_group *g = &c->cur->groups[k->cur];
			ga_buf_puts(b, "- ");
			put_code(b, g->name ? g->name : g->mangled);
			ga_buf_puts(b, ": ");
			put_text(b, pred);
			ga_buf_putc(b, '\n');
			free(pred);
		}
	}
}

static void baseline_table(ga_buf *b, const ga_comparison *c, int verbose)
{
	char b1[32], b2[32], b3[32];
	size_t rows = 0, quiet = 0, more = 0;

	ga_buf_puts(b, "\n#### Compared with baseline ");
	put_code(b, c->label ? c->label : "?");
	ga_buf_puts(b, "\n\n");
	char *warning = ga_baseline_warning(c);
	if (warning) {
		ga_buf_puts(b, "> **Warning: different GPU.** ");
		put_text(b, warning);
		ga_buf_puts(b, "\n\n");
		free(warning);
	}
	if (c->n_regressions)
		ga_buf_printf(b, "**%zu %s**", c->n_regressions,
		              ga_plural(c->n_regressions, "regression", "regressions"));
	else
		ga_buf_puts(b, "**No regression**");
	if (c->same_device)
		ga_buf_printf(b, " (a kernel more than %s%% slower, or a new finding of %s severity "
		              "or above).", ga_fmt_value(c->threshold * 100, b1, sizeof(b1)),
		              ga_severity_name((ga_severity)c->severity));
	else
		ga_buf_printf(b, " (a new finding of %s severity or above; durations are not "
		              "compared).", ga_severity_name((ga_severity)c->severity));
	if (isfinite(c->total_change))
		ga_buf_printf(b, " GPU time %s \xe2\x86\x92 %s (%s).",
		              ga_fmt_duration(c->base_total_ns, b1, sizeof(b1)),
		              ga_fmt_duration(c->cur_total_ns, b2, sizeof(b2)),
		              ga_fmt_change(c->total_change, b3, sizeof(b3)));
	if (c->scaling.shown)
		ga_buf_printf(b, " Communication %s%% of GPU time at world size %ld \xe2\x86\x92 %s%% "
		              "at %ld.", ga_fmt_pct(c->scaling.base_share, 1, b1, sizeof(b1)),
		              c->scaling.base_world, ga_fmt_pct(c->scaling.cur_share, 1, b2, sizeof(b2)),
		              c->scaling.cur_world);
	ga_buf_putc(b, '\n');

	for (size_t i = 0; i < c->n_kernels; i++) {
		const ga_kernel_change *k = &c->kernels[i];
		if (k->match == GA_MATCH_NONE)
			continue;
		if (!ga_kernel_change_notable(c, k) && !verbose) {
			quiet++;
			continue;
		}
		if (rows == MD_TOP_KERNELS && !verbose) {
			more++;
			continue;
		}
		if (rows++ == 0) {
			ga_buf_puts(b, "\n| Kernel | Baseline | Now | Change | Class | New findings | "
			               "Gone findings |\n");
			ga_buf_puts(b, "|--------|---------:|----:|-------:|-------|--------------|"
			               "---------------|\n");
		}
		const ga_group *g = &c->cur->groups[k->cur], *o = &c->base->groups[k->base];
		ga_buf_puts(b, "| ");
		if (k->regression)
			ga_buf_puts(b, "**regression** ");
		put_code(b, g->name ? g->name : g->mangled);
		if (k->match == GA_MATCH_NAME)
			ga_buf_puts(b, " (matched by name: launch shape changed)");
		ga_buf_printf(b, " | %s | %s | %s | ", ga_fmt_duration(k->base_ns, b1, sizeof(b1)),
		              ga_fmt_duration(k->cur_ns, b2, sizeof(b2)),
		              isfinite(k->change) ? ga_fmt_change(k->change, b3, sizeof(b3))
		                                  : "not compared");
		if (k->class_changed)
			ga_buf_printf(b, "%s \xe2\x86\x92 %s", ga_report_class(o->klass), ga_report_class(g->klass));
		else
			ga_buf_puts(b, ga_report_class(g->klass));
		ga_buf_puts(b, " | ");
		finding_ids(b, k->added, k->n_added);
		ga_buf_puts(b, " | ");
		finding_ids(b, k->removed, k->n_removed);
		ga_buf_puts(b, " |\n");
	}
	if (more)
		ga_buf_printf(b, "\n%zu more changed %s in the full report.\n", more,
		              ga_plural(more, "kernel", "kernels"));
	if (quiet)
		ga_buf_printf(b, "\n%zu matched %s unchanged.\n", quiet,
		              ga_plural(quiet, "kernel", "kernels"));
	prediction_list(b, c);
	only_list(b, c, 1, "Only in this run:");
	only_list(b, c, 0, "Only in the baseline:");
}

int ga_report_markdown(FILE *out, const ga_analysis *a, const ga_ruleset *rs,
                       const ga_report_opts *o)
{
	static const ga_report_opts defaults = { 0 };
	ga_buf b = { 0 };
	const ga_profile *p = a->profile;
	if (!o)
		o = &defaults;

	ga_buf_puts(&b, "### gpuadvise: ");
	put_text(&b, p && p->device.name && *p->device.name ? p->device.name : "unknown device");
	ga_buf_puts(&b, "\n\n");
	if (o->recorded_label) {
		ga_buf_puts(&b, "> **Recorded profile:** ");
		put_text(&b, o->recorded_label);
		ga_buf_puts(&b, "\n\n");
	}
	if (p && p->collection.incomplete) {
		ga_buf_puts(&b, "> **Warning:** incomplete profile, results so far only");
		if (p->collection.note && *p->collection.note) {
			ga_buf_puts(&b, ": ");
			put_text(&b, p->collection.note);
		}
		ga_buf_puts(&b, "\n\n");
	}
	/* several ranks: one entry per advice, from the one ranking */
	int by_first = a->wall_currency || a->ranks.multi;
	if (by_first)
		summary_wall(&b, a);
	else
		summary(&b, a);
	if (o->baseline)
		baseline_table(&b, o->baseline, o->verbose);
	if (a->ranks.multi)
		md_ranks(&b, a);
	else if (ga_report_several_processes(a, o))
		processes_table(&b, a, o);
	md_timeline(&b, a);

	if (by_first) {
		if (a->n_first)
			first_list(&b, a, o->verbose);
	} else if (a->n_findings) {
		size_t n = table_entries(a);
		if (!o->verbose && n > MD_TOP_FINDINGS)
			n = MD_TOP_FINDINGS;
		findings_table(&b, a, n);
	}
	if (a->ops_shown)
		operations_table(&b, a, o->verbose || a->n_ops < MD_TOP_KERNELS ? a->n_ops
		                                                                : MD_TOP_KERNELS);
	if (a->n_groups) {
		size_t n = a->n_groups, covered, *rows;
		if (!o->verbose && n > MD_TOP_KERNELS)
			n = MD_TOP_KERNELS;
		n = table_groups(a, n, o->verbose, &rows, &covered);
		kernels_table(&b, a, rows, n, covered, o->verbose);
		source_table(&b, a, rows, n);
		free(rows);
	}
	if (by_first)
		fixes_wall(&b, a);
	else
		fixes(&b, a);

	int rc = 0;
	/* Strings from the profile can hold terminal controls (safe.c). */
	if (ga_report_put_safe(out, b.s ? b.s : "", b.len, 0) != 0)
		rc = -1;
	if (fflush(out) != 0 || ferror(out))
		rc = -1;
	ga_buf_free(&b);
	return rc;
}
