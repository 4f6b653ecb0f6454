/* text_kernel.c: the text report's kernel blocks and "How to fix".
 *
 * By default each kernel gets a short block: name and class, share of GPU
 * time, grid and block, the class's evidence, its source lines when the
 * profile has them, and its findings one line each (severity, title, rule
 * id, saving, estimate, the rule's expected range).  Each rule's fix text
 * and example then come once, under "How to fix", by rule id.  --verbose
 * prints the full name, the why of the class and each finding's fix text
 * and example under every kernel, and no "How to fix".  See text.c. */
#include "text.h"

#include <stdlib.h>
#include <string.h>

#define MAX_FULL_NAME 1000  /* columns of a kernel's "full name" line */
/* Unless verbose, only the TOP_KERNELS kernels of most GPU time get a
 * block, and only those with SMALL_SHARE of it or more: the others get a
 * line each, so that a long tail of small kernels does not bury the rest. */
#define SMALL_SHARE 0.01
#define TOP_KERNELS 8

/* Verbatim, each line indented; trailing blank lines dropped.  Code is never
 * wrapped: the indent shrinks from 8 to 4 when the longest line
 * would otherwise pass the width (and a line longer still runs past it). */
static void example(tctx *t, const char *ex)
{
	size_t len = strlen(ex), longest = 0;
	while (len && (ex[len - 1] == '\n' || ex[len - 1] == ' ' || ex[len - 1] == '\t'))
		len--;
	const char *p = ex, *end = ex + len;
	while (p < end) {
		const char *e = memchr(p, '\n', (size_t)(end - p));
		if (!e)
			e = end;
		size_t w = ga_text_width_n(p, (size_t)(e - p));
		if (w > longest)
			longest = w;
		p = e + 1;
	}
	size_t indent = longest + 8 <= t->width ? 8 : 4;
	p = ex;
	while (p < end) {
		const char *e = memchr(p, '\n', (size_t)(end - p));
		if (!e)
			e = end;
		size_t n = (size_t)(e - p);
		while (n && (p[n - 1] == ' ' || p[n - 1] == '\t' || p[n - 1] == '\r'))
			n--;
		if (n) {
			ga_spaces(&t->b, indent);
			ga_buf_printf(&t->b, "%.*s", (int)n, p);
		}
		ga_buf_putc(&t->b, '\n');
		p = e + 1;
	}
}

static void group_finding(tctx *t, const ga_analysis *a, const ga_finding *f)
{
	const ga_rule *r = f->rule;
	ga_buf s = { 0 };
	char b[64];

	ga_buf_putc(&t->b, '\n');
	ga_spaces(&t->b, 2);
	if (r)
		tx_severity_tag(t, &s, r->severity);
	if (f->estimate_missing)
		ga_buf_printf(&s, "%s \xe2\x80\x94 estimate needs %s", tx_rule_title(r),
		              f->estimate_missing);
	else
		ga_buf_printf(&s, "%s \xe2\x80\x94 saves ~%s%% of this kernel", tx_rule_title(r),
		              ga_fmt_pct(f->estimate, 0, b, sizeof(b)));
	tx_wrap_buf(t, &s, 2, 4);

	if (r && r->fix && *r->fix) {
		ga_spaces(&t->b, 4);
		ga_wrap(&t->b, r->fix, 4, 4, t->width);
	}
	if (r && r->example && *r->example) {
		ga_buf_putc(&t->b, '\n');
		example(t, r->example);
	}
}

/* One row per launch of the group, columns aligned when they fit in the
 * width; otherwise each launch becomes a wrapped line of its own. */
static void launch_list(tctx *t, const ga_profile *p, const ga_group *g)
{
	char dur[64], gd[48], bd[48], idx[32], pid[32];
	int wi = 0, wp = 0, wd = 0, wg = 0, wb = 0;

	for (size_t i = 0; i < g->n_launches; i++) {
		if (g->launches[i] >= p->n_launches)
			continue;
		const ga_launch *l = &p->launches[g->launches[i]];
		int n;
		if ((n = snprintf(idx, sizeof(idx), "#%ld", l->index)) > wi)
			wi = n;
		if ((n = snprintf(pid, sizeof(pid), "%d", l->pid)) > wp)
			wp = n;
		if ((n = (int)strlen(ga_fmt_duration(l->duration_ns, dur, sizeof(dur)))) > wd)
			wd = n;
		tx_dims(gd, sizeof(gd), l->grid);
		tx_dims(bd, sizeof(bd), l->block);
		if ((n = (int)strlen(gd)) > wg)
			wg = n;
		if ((n = (int)strlen(bd)) > wb)
			wb = n;
	}
	/* "    #I  pid P  D  grid G  block B" */
	size_t row = 4 + (size_t)wi + 6 + (size_t)wp + 2 + (size_t)wd + 7 + (size_t)wg + 8 + (size_t)wb;
	int aligned = row <= t->width;

	ga_buf_puts(&t->b, "  launches:\n");
	for (size_t i = 0; i < g->n_launches; i++) {
		if (g->launches[i] >= p->n_launches)
			continue;
		const ga_launch *l = &p->launches[g->launches[i]];
		snprintf(idx, sizeof(idx), "#%ld", l->index);
		ga_fmt_duration(l->duration_ns, dur, sizeof(dur));
		tx_dims(gd, sizeof(gd), l->grid);
		tx_dims(bd, sizeof(bd), l->block);
		if (aligned) {
			ga_buf_printf(&t->b, "    %-*s  pid %*d  %*s  grid %-*s  block %s\n", wi, idx,
			              wp, l->pid, wd, dur, wg, gd, bd);
		} else {
			ga_buf s = { 0 };
			ga_spaces(&t->b, 4);
			ga_buf_printf(&s, "%s: pid%c%d, %s, grid%c%s, block%c%s", idx, NBSP, l->pid,
			              tx_nb(dur), NBSP, gd, NBSP, bd);
			tx_wrap_buf(t, &s, 4, 6);
		}
	}
}

/* Where to change the kernel: its top source lines (the analysis ranks
 * them). */
static void source_lines(tctx *t, const ga_group *g)
{
	const ga_source *src = g->source;
	const ga_source_line *top = g->lines;
	size_t n = g->n_lines;
	int sass = g->source_sass, stalls = g->source_sampled;
	ga_buf s = {0};

	if (!src)
		return;
	ga_spaces(&t->b, 2);
	ga_buf_printf(&s, "source lines (%s; %s):",
	              sass && stalls ? "SASS metrics of one launch, stall samples of a second run"
	              : stalls       ? "stall samples of a second run"
	                             : "SASS metrics of one launch, --stalls adds stall reasons",
	              src->trigger ? src->trigger : "measured");
	tx_wrap_buf(t, &s, 2, 4);
	if (!src->lineinfo) {
		ga_spaces(&t->b, 4);
		ga_buf_puts(&s, "no line information in the kernel's code: compile with -lineinfo "
		            "for file:line; by SASS offset instead");
		tx_wrap_buf(t, &s, 4, 6);
	}
	if (n == 0) {
		ga_spaces(&t->b, 4);
		ga_buf_puts(&s, "no line stands out");
		tx_wrap_buf(t, &s, 4, 6);
	}
	for (size_t i = 0; i < n; i++) {
		const ga_source_line *l = &top[i];
		ga_spaces(&t->b, 4);
		if (l->file)
			ga_buf_printf(&s, "%s:%d", ga_report_basename(l->file), l->line);
		else
			ga_buf_printf(&s, "%s+0x%x", src->mangled, l->pc);
		ga_buf_printf(&s, "  %s (%.0f%%)", l->desc, 100 * l->score);
		tx_wrap_buf(t, &s, 4, 8);
		if (l->text) {
			/* The whole line of code (--verbose), wrapped to the
			 * width: the default cuts it. */
			ga_spaces(&t->b, 8);
			ga_buf_printf(&s, "%.200s", l->text);
			tx_wrap_buf(t, &s, 8, 12);
		}
	}
	ga_buf_free(&s);
}

/* A line of code, cut with an ellipsis after cols columns. */
static void cut_line(tctx *t, const char *text, size_t cols)
{
	size_t cut = 0, cps = 0;

	if (ga_text_width(text) <= cols) {
		ga_buf_printf(&t->b, "%s\n", text);
		return;
	}
	for (; text[cut]; cut++) {
		if (((unsigned char)text[cut] & 0xc0) == 0x80)
			continue;
		if (cps == cols - 1)
			break;
		cps++;
	}
	ga_buf_printf(&t->b, "%.*s\xe2\x80\xa6\n", (int)cut, text);
}

/* The default's source lines: only those that stand out, each on one
 * line with its text cut to the width; no SASS offsets under a mangled
 * name (--verbose has them). */
static void source_lines_brief(tctx *t, const ga_group *g)
{
	ga_buf s = { 0 };

	if (!g->source || !g->n_lines)
		return;
	ga_buf_puts(&t->b, "  source lines:\n");
	for (size_t i = 0; i < g->n_lines; i++) {
		const ga_source_line *l = &g->lines[i];
		ga_spaces(&t->b, 4);
		if (l->file)
			ga_buf_printf(&s, "%s:%d", ga_report_basename(l->file), l->line);
		else
			ga_buf_printf(&s, "+0x%x", l->pc);
		ga_buf_printf(&s, "  %s (%.0f%%)", l->desc, 100 * l->score);
		tx_wrap_buf(t, &s, 4, 8);
		if (l->text) {
			ga_spaces(&t->b, 8);
			cut_line(t, l->text, t->width - 8);
		}
	}
}

/* The name on one line with its class, "#n" added when other kernels'
 * names read the same; with full, a name too long for that line is given
 * in full on the next lines. */
static void kernel_name(tctx *t, const ga_group *g, int full_name)
{
	const char *cls = ga_report_class(g->klass);
	size_t room = t->width - ga_text_width(cls) - 3;
	char *name = tx_kernel_name(g, room);
	char *full = ga_report_safe(tx_group_name(g));
	ga_buf s = { 0 };

	ga_buf_printf(&t->b, "%s [", name);
	tx_paint(t, tx_class_color(g->klass), cls);
	ga_buf_puts(&t->b, "]\n");
	if (full_name && strcmp(name, full) != 0) {
		/* Even in full, a name stops after MAX_FULL_NAME columns
		 * (generated code has names of megabytes); the JSON
		 * report keeps all of it. */
		size_t cols = ga_text_width(full), cut, cps = 0;
		ga_spaces(&t->b, 2);
		if (cols <= MAX_FULL_NAME) {
			ga_buf_printf(&s, "full name: %s", full);
		} else {
			/* MAX_FULL_NAME - 1 code points, then the ellipsis */
			for (cut = 0; full[cut]; cut++) {
				if (((unsigned char)full[cut] & 0xc0) == 0x80)
					continue;
				if (cps == MAX_FULL_NAME - 1)
					break;
				cps++;
			}
			ga_buf_printf(&s, "full name (%zu characters, cut; --format json has "
			              "all): %.*s\xe2\x80\xa6", cols, (int)cut, full);
		}
		tx_wrap_buf(t, &s, 2, 4);
	}
	free(name);
	free(full);
}

/* Evidence and runner-up; verbose, the unchecked rules and the why of the
 * class. */
static void kernel_class(tctx *t, const ga_analysis *a, const ga_group *g)
{
	ga_buf s = { 0 };

	if (g->n_class_evidence) {
		ga_spaces(&t->b, 2);
		ga_buf_puts(&s, "evidence: ");
		tx_evidence_list(&s, g->class_evidence, g->n_class_evidence);
		if (t->verbose)
			tx_wrap_buf(t, &s, 2, 4);
	}
	if (g->runner_up != GA_CLASS_NONE) {
		/* Its own line when verbose, else after the evidence. */
		if (t->verbose || !g->n_class_evidence) {
			ga_spaces(&t->b, 2);
			ga_buf_puts(&s, "runner-up: ");
		} else {
			ga_buf_puts(&s, "; runner-up ");
		}
		if (t->color)
			ga_buf_printf(&s, "%s%s" C_RESET, tx_class_color(g->runner_up),
			              ga_report_class(g->runner_up));
		else
			ga_buf_puts(&s, ga_report_class(g->runner_up));
		if (t->verbose)
			ga_buf_puts(&s, " (close call)");
		if (t->verbose)
			tx_wrap_buf(t, &s, 2, 4);
	}
	if (!t->verbose && s.len)
		tx_wrap_buf(t, &s, 2, 4);
	if (t->verbose && g->n_unchecked) {
		ga_spaces(&t->b, 2);
		ga_buf_puts(&s, g->below_min_share ? "not checked, under --min-share:" :
		            a->profile && a->profile->collection.quick ? "not checked, --quick:" : "not checked, metrics not measured:");
		for (size_t i = 0; i < g->n_unchecked; i++)
			ga_buf_printf(&s, "%s %s", i ? "," : "", g->unchecked[i]->id);
		tx_wrap_buf(t, &s, 2, 4);
	}
	if (t->verbose && g->class_note && *g->class_note) {
		ga_spaces(&t->b, 2);
		ga_buf_printf(&s, "why: %s", g->class_note);
		tx_wrap_buf(t, &s, 2, 4);
	}
}

/* What follows a kernel's heading in both blocks: its class, launches
 * (--per-launch), source lines and findings, in full or one line each. */
static void finding_line(tctx *t, const ga_finding *f);

static void kernel_rest(tctx *t, const ga_analysis *a, const ga_group *g, int brief)
{
	kernel_class(t, a, g);
	if (t->per_launch && a->profile && g->n_launches)
		launch_list(t, a->profile, g);
	if (brief)
		source_lines_brief(t, g);
	else
		source_lines(t, g);
	if (g->n_findings == 0) {
		ga_buf_puts(&t->b, "  no findings\n");
		return;
	}
	for (size_t i = 0; i < g->n_findings; i++) {
		if (g->findings[i] >= a->n_findings)
			continue;
		if (brief)
			finding_line(t, &a->findings[g->findings[i]]);
		else
			group_finding(t, a, &a->findings[g->findings[i]]);
	}
}

/* --verbose: the whole block, each finding with its fix text and example. */
static void kernel_full(tctx *t, const ga_analysis *a, const ga_group *g)
{
	char b1[64], b2[64], b3[64], gd[48], bd[48];
	ga_buf s = { 0 };

	kernel_name(t, g, 1);
	ga_spaces(&t->b, 2);
	ga_buf_printf(&s, "%s%% of GPU time, %zu %s", ga_fmt_pct(g->share, 1, b1, sizeof(b1)),
	              g->n_launches, ga_plural(g->n_launches, "launch", "launches"));
	if (g->unprofiled > 0)
		ga_buf_printf(&s, " (+%ld not profiled, counted at the mean)", g->unprofiled);
	if (g->timeline_launches > 0)
		ga_buf_printf(&s, " (+%ld not profiled, timed on the timeline)", g->timeline_launches);
	ga_buf_printf(&s, ", mean %s, total %s", tx_dur_nb(g->mean_ns, b2, sizeof(b2)),
	              tx_dur_nb(g->total_ns, b3, sizeof(b3)));
	tx_wrap_buf(t, &s, 2, 4);
	tx_dims(gd, sizeof(gd), g->grid);
	tx_dims(bd, sizeof(bd), g->block);
	ga_spaces(&t->b, 2);
	ga_buf_printf(&s, "grid %s, block %s", gd, bd);
	if (a->ranks.multi && ga_rank_of(a, g->pid))
		ga_buf_printf(&s, ", rank %ld", ga_rank_of(a, g->pid)->info->rank);
	else if (t->several)
		ga_buf_printf(&s, ", pid %d", g->pid);
	tx_wrap_buf(t, &s, 2, 4);
	kernel_rest(t, a, g, 0);
}

/* One finding in a line: severity, rule id (its title and fix are under
 * "How to fix"), share of all GPU time saved, the estimate for this kernel
 * and the rule's expected range. */
static void finding_line(tctx *t, const ga_finding *f)
{
	const ga_rule *r = f->rule;
	char b1[64], b2[64], b3[64];
	ga_buf s = { 0 };

	ga_spaces(&t->b, 2);
	if (r)
		tx_severity_tag(t, &s, r->severity);
	ga_fmt_pct(f->saving, 0, b1, sizeof(b1));
	if (f->estimate_missing)
		ga_buf_printf(&s, "%s: estimate%cneeds %s", r && r->id ? r->id : "?", NBSP,
		              f->estimate_missing);
	else
		ga_buf_printf(&s, "%s: saves%c%s%s%%, estimated%c%s", r && r->id ? r->id : "?",
		              NBSP, b1[0] == '<' ? "" : "~", b1, NBSP,
		              ga_fmt_speedup(f->speedup, b2, sizeof(b2)));
	if (r && !f->estimate_missing)
		ga_buf_printf(&s, ", fix%c%s", NBSP,
		              ga_fmt_speedup_range(f->speedup_min, f->speedup_max, b3, sizeof(b3)));
	tx_wrap_buf(t, &s, 2, 4);
}

/* The default block: a few lines, the fixes left to "How to fix". */
static void kernel_brief(tctx *t, const ga_analysis *a, const ga_group *g)
{
	char b1[64], b2[64], gd[48], bd[48];
	ga_buf s = { 0 };

	kernel_name(t, g, 0);
	tx_dims(gd, sizeof(gd), g->grid);
	tx_dims(bd, sizeof(bd), g->block);
	ga_spaces(&t->b, 2);
	ga_buf_printf(&s, "%s%% of GPU time, %zu %s", ga_fmt_pct(g->share, 1, b1, sizeof(b1)),
	              g->n_launches, ga_plural(g->n_launches, "launch", "launches"));
	if (g->unprofiled > 0)
		ga_buf_printf(&s, " (+%ld not profiled)", g->unprofiled);
	if (g->timeline_launches > 0)
		ga_buf_printf(&s, " (+%ld timed)", g->timeline_launches);
	ga_buf_printf(&s, ", mean %s, grid%c%s, block%c%s", tx_dur_nb(g->mean_ns, b2, sizeof(b2)),
	              NBSP, gd, NBSP, bd);
	if (a->ranks.multi && ga_rank_of(a, g->pid))
		ga_buf_printf(&s, ", rank%c%ld", NBSP, ga_rank_of(a, g->pid)->info->rank);
	else if (t->several)
		ga_buf_printf(&s, ", pid%c%d", NBSP, g->pid);
	tx_wrap_buf(t, &s, 2, 4);
	kernel_rest(t, a, g, 1);
}

/* The tail's lines: one per kernel and process, its launch shapes (the
 * groups of the same mangled name) on it, by their summed share. */
typedef struct {
	size_t group;             /* the first (largest) of its shapes */
	size_t shapes;
	double share;
	size_t rules;             /* distinct rules with a finding on its shapes */
} tail_line;

static int tail_cmp(const void *x, const void *y)
{
	const tail_line *p = x, *q = y;
	if (p->share != q->share)
		return p->share > q->share ? -1 : 1;
	return p->group < q->group ? -1 : p->group > q->group;
}

/* A kernel under SMALL_SHARE of the GPU time, in one line: share, name
 * (shortened to fit), class, its top finding's rule id and how many more;
 * of several launch shapes, their summed share, the name without the
 * shape number and "N shapes", and the other rules that fired on them. */
static void kernel_line(tctx *t, const ga_analysis *a, const tail_line *l)
{
	const ga_group *g = &a->groups[l->group];
	size_t more = l->shapes > 1 ? (l->rules ? l->rules - 1 : 0)
	                            : (g->n_findings ? g->n_findings - 1 : 0);
	char b1[64], shapes[64] = "";
	ga_buf tail = { 0 };

	ga_buf_printf(&tail, " [%s]", ga_report_class(g->klass));
	if (g->n_findings && g->findings[0] < a->n_findings) {
		const ga_rule *r = a->findings[g->findings[0]].rule;
		ga_buf_printf(&tail, ": %s", r && r->id ? r->id : "?");
		if (more)
			ga_buf_printf(&tail, " +%zu", more);
	}
	if (l->shapes > 1)
		snprintf(shapes, sizeof(shapes), " %zu shapes", l->shapes);
	ga_fmt_pct(l->share, 1, b1, sizeof(b1));
	size_t used = 9 + ga_text_width(tail.s) + strlen(shapes);   /* "  12.3%  " */
	size_t min = l->shapes > 1 ? 16 : 24;
	size_t cols = t->width > used + min ? t->width - used : min;
	char *name = l->shapes > 1 ? tx_kernel_name_all_shapes(g, cols) : tx_kernel_name(g, cols);
	ga_buf_printf(&t->b, "  %4s%%  %s%s [", b1, name, shapes);
	tx_paint(t, tx_class_color(g->klass), ga_report_class(g->klass));
	ga_buf_printf(&t->b, "%s\n", tail.s + 2 + strlen(ga_report_class(g->klass)));
	free(name);
	ga_buf_free(&tail);
}

/* The long tail, groups[idx[0..n)]: a line per kernel and process, its
 * shapes folded, by summed share; *m lines (malloc'd).  Only a kernel
 * launched with more shapes than the report has kernel blocks (a wavefront
 * walking its diagonals, a batch of every size) is folded: the others keep
 * a line per shape, told apart by #n. */
static tail_line *tail_lines(const ga_analysis *a, const size_t *idx, size_t n, size_t *m)
{
	tail_line *v = ga_xcalloc(n + 1, sizeof(*v));
	/* by a kernel's first group (ga_group.kernel_first): its shapes in
	 * the tail, and its line + 1 */
	size_t *shapes = ga_xcalloc(a->n_groups + 1, sizeof(*shapes));
	size_t *line_at = ga_xcalloc(a->n_groups + 1, sizeof(*line_at));
	const ga_rule ***rules = ga_xcalloc(n + 1, sizeof(*rules));  /* line -> its rules */
	size_t *cap = ga_xcalloc(n + 1, sizeof(*cap));

	for (size_t i = 0; i < n; i++)
		shapes[a->groups[idx[i]].kernel_first]++;
	*m = 0;
	for (size_t i = 0; i < n; i++) {
		const ga_group *g = &a->groups[idx[i]];
		size_t k = g->kernel_first;
		if (shapes[k] <= TOP_KERNELS) {
			v[(*m)++] = (tail_line){idx[i], 1, g->share, 0};
			continue;
		}
		if (!line_at[k]) {
			v[*m] = (tail_line){idx[i], shapes[k], 0, 0};
			line_at[k] = ++*m;
		}
		size_t l = line_at[k] - 1;
		v[l].share += g->share;
		/* the distinct rules over the kernel's shapes */
		for (size_t j = 0; j < g->n_findings; j++) {
			const ga_rule *r = a->findings[g->findings[j]].rule;
			size_t q = 0;
			while (q < v[l].rules && rules[l][q] != r)
				q++;
			if (q == v[l].rules)
				GA_PUSH(rules[l], v[l].rules, cap[l], r);
		}
	}
	for (size_t i = 0; i < n; i++)
		free(rules[i]);
	free(rules);
	free(cap);
	free(line_at);
	free(shapes);
	qsort(v, *m, sizeof(*v), tail_cmp);
	return v;
}

void tx_kernels(tctx *t, const ga_analysis *a)
{

	ga_buf_putc(&t->b, '\n');
	tx_heading(t, "Kernels");
	if (a->n_groups == 0) {
		ga_buf_puts(&t->b, "No kernels were profiled.\n");
		return;
	}
	if (!t->verbose && a->n_findings) {
		ga_buf s = { 0 };
		ga_buf_puts(&s, "Findings: share of all GPU time saved, speedup estimated for the "
		            "kernel, range of the estimate's model (gpuadvise --explain ID).");
		tx_wrap_buf(t, &s, 0, 0);
		ga_buf_putc(&t->b, '\n');
	}
	/* Of several ranks, one rank's kernels (the straggler's, else the
	 * first rank's): every rank runs its own copy of the same ones. */
	size_t *shown = ga_xmalloc((a->n_groups + 1) * sizeof(*shown)), n = 0;
	int one = a->ranks.multi && !t->verbose;
	for (size_t gi = 0; gi < a->n_groups; gi++)
		if (!one || a->groups[gi].pid == a->ranks.kernels_pid)
			shown[n++] = gi;
	if (one) {
		const ga_rank *k = ga_rank_of(a, a->ranks.kernels_pid);
		ga_buf s = { 0 };
		ga_buf_printf(&s, "Rank %ld's kernels (pid %d%s): each rank runs its own; "
		              "--verbose lists every rank's.", k ? k->info->rank : -1L,
		              k ? k->info->os_pid : a->ranks.kernels_pid,
		              k && k->straggler >= 0 ? ", the straggler" : "");
		tx_wrap_buf(t, &s, 0, 0);
		ga_buf_putc(&t->b, '\n');
	}
	size_t blocks = 0;
	for (size_t i = 0; i < n; i++) {
		const ga_group *g = &a->groups[shown[i]];
		if (t->verbose) {
			if (i)
				ga_buf_putc(&t->b, '\n');
			kernel_full(t, a, g);
		} else if (blocks < TOP_KERNELS && (one || !(g->share < SMALL_SHARE))) {
			/* (of several ranks, a share of all the ranks' time is small) */
			if (blocks)
				ga_buf_putc(&t->b, '\n');
			kernel_brief(t, a, g);
			blocks++;
		}
	}
	if (!t->verbose && blocks < n) {
		/* The long tail, a line each; --verbose gives them blocks too.
		 * The groups are in time order, so the tail is the groups
		 * after the blocks. */
		size_t small = n - blocks;
		ga_buf_putc(&t->b, '\n');
		size_t m;
		tail_line *v = tail_lines(a, shown + blocks, small, &m);
		ga_buf_printf(&t->b, "%zu more %s (--verbose details %s%s):\n", small,
		              ga_plural(small, "kernel", "kernels"), ga_plural(small, "it", "them"),
		              m < small ? "; a kernel's launch shapes share a line" : "");
		for (size_t k = 0; k < m; k++)
			kernel_line(t, a, &v[k]);
		free(v);
	}
	free(shown);
}

/* Each rule with a finding, once, in the order of its best finding: its
 * id and title, fix text and example. */
void tx_how_to_fix(tctx *t, const ga_analysis *a)
{
	const ga_rule **seen = ga_xcalloc(a->n_findings ? a->n_findings : 1, sizeof(*seen));
	size_t n_seen = 0;

	for (size_t i = 0; i < a->n_findings; i++) {
		const ga_rule *r = a->findings[i].rule;
		size_t k = 0;
		while (k < n_seen && seen[k] != r)
			k++;
		if (!r || k < n_seen)
			continue;
		seen[n_seen++] = r;
		ga_buf_putc(&t->b, '\n');
		if (n_seen == 1)
			tx_heading(t, "How to fix");
		ga_buf s = { 0 };
		ga_buf_printf(&s, "%s: ", r->id ? r->id : "?");
		if (t->color)
			ga_buf_printf(&s, C_BOLD "%s" C_RESET, tx_rule_title(r));
		else
			ga_buf_puts(&s, tx_rule_title(r));
		tx_wrap_buf(t, &s, 0, 2);
		if (r->fix && *r->fix) {
			ga_spaces(&t->b, 2);
			ga_wrap(&t->b, r->fix, 2, 2, t->width);
		}
		if (r->example && *r->example) {
			ga_buf_putc(&t->b, '\n');
			example(t, r->example);
		}
	}
	free(seen);
}
