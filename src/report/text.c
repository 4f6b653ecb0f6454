/* text.c: the terminal report.
 *
 * Layout: the device and what was collected, then "What to do first" (the
 * top findings, ranked by the share of all GPU time they would save; when
 * library kernels hold most of the time, the framework-level actions, each
 * over all its kernels, instead), then
 * one block per kernel group with its class, evidence and findings, then the
 * notes when verbose.  Prose is wrapped at the terminal width; code examples
 * are printed verbatim.  Colour (ANSI) only when opts->color.  The output is
 * deterministic: golden tests compare it byte for byte. */
#include "text.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#define TOP_FINDINGS 5      /* shown in "What to do first" unless verbose */
#define MIN_WIDTH 40
#define C_WARN "\033[1;33m"

/* Which mechanism measured how many launches: one line, when anything
 * but replaying each profiled launch took part. */
static void measured_line(tctx *t, const ga_analysis *a)
{
	ga_buf s = { 0 };
	long kr = a->measured.kernel_replay, lr = a->measured.loop_replay;
	long am = a->measured.at_mean, gl = a->measured.graph_launches;
	long tl = a->measured.timeline;

	if (!lr && !am && !gl && !tl)
		return;
	ga_buf_printf(&s, "Measured: %ld %s by kernel replay", kr,
	              ga_plural((size_t)kr, "launch", "launches"));
	if (lr)
		ga_buf_printf(&s, ", %ld across a loop's iterations with no replay", lr);
	if (am)
		ga_buf_printf(&s, ", %ld %s not profiled and counted at their kernel's mean", am,
		              ga_plural((size_t)am, "repeat", "repeats"));
	if (tl)
		ga_buf_printf(&s, ", %ld not profiled and timed on the timeline", tl);
	if (gl)
		ga_buf_printf(&s, "; %ld CUDA graph %s: kernels inside CUDA graphs are not profiled",
		              gl, ga_plural((size_t)gl, "launch", "launches"));
	ga_buf_putc(&s, '.');
	tx_wrap_buf(t, &s, 0, 2);
}

/* text wrapped inside a frame of '+', '-' and '|', in bold. */
static void box(tctx *t, const char *text)
{
	ga_buf inner = { 0 };
	size_t iw = t->width > 4 ? t->width - 4 : 1;
	ga_wrap(&inner, text, 0, 0, iw);
	size_t maxw = 0;
	for (char *l = inner.s; l && *l;) {
		char *e = strchr(l, '\n');
		size_t w = ga_text_width_n(l, (size_t)(e - l));
		if (w > maxw)
			maxw = w;
		l = e + 1;
	}
	ga_buf_putc(&t->b, '+');
	for (size_t i = 0; i < maxw + 2; i++)
		ga_buf_putc(&t->b, '-');
	ga_buf_puts(&t->b, "+\n");
	for (char *l = inner.s; l && *l;) {
		char *e = strchr(l, '\n');
		*e = '\0';
		ga_buf_puts(&t->b, "| ");
		tx_paint(t, C_BOLD, l);
		ga_spaces(&t->b, maxw - ga_text_width(l));
		ga_buf_puts(&t->b, " |\n");
		l = e + 1;
	}
	ga_buf_putc(&t->b, '+');
	for (size_t i = 0; i < maxw + 2; i++)
		ga_buf_putc(&t->b, '-');
	ga_buf_puts(&t->b, "+\n");
	ga_buf_free(&inner);
}

static void header(tctx *t, const ga_analysis *a, const ga_report_opts *o)
{
	const ga_profile *p = a->profile;
	ga_buf s = { 0 };
	char d[32];

	if (p) {
		const ga_device *dv = &p->device;
		ga_buf_puts(&s, dv->name && *dv->name ? dv->name : "unknown device");
		if (dv->sm_count == 0 && dv->cc_major == 0) {
			/* --timeline-only reads no device property */
			ga_buf_puts(&s, " (not read: no launch was profiled)");
		} else {
			ga_buf_puts(&s, " (");
			if (dv->chip && *dv->chip)
				ga_buf_printf(&s, "%s, ", dv->chip);
			if (dv->sm_count > 0)
				ga_buf_printf(&s, "%d SMs, ", dv->sm_count);
			ga_buf_printf(&s, "CC %d.%d)", dv->cc_major, dv->cc_minor);
		}
		if (dv->driver_version > 0)
			ga_buf_printf(&s, ", driver %d.%d", dv->driver_version / 1000,
			              dv->driver_version % 1000 / 10);
		tx_wrap_buf(t, &s, 0, 2);
	}

	size_t nl = a->n_launches;
	ga_buf_printf(&s, "%zu %s, %zu %s profiled, %s GPU time", a->n_groups,
	              ga_plural(a->n_groups, "kernel", "kernels"), nl,
	              ga_plural(nl, "launch", "launches"), tx_dur_nb(a->total_ns, d, sizeof(d)));
	if (p) {
		ga_buf_printf(&s, "; %zu %s", p->n_metrics, ga_plural(p->n_metrics, "metric", "metrics"));
		if (p->collection.metric_sets > 1)
			ga_buf_printf(&s, " in %d sets of at most %d %s per launch, taken in turn by "
			              "a kernel's repeated launches", p->collection.metric_sets,
			              p->collection.passes,
			              ga_plural((size_t)p->collection.passes, "pass", "passes"));
		else if (p->collection.passes > 0)
			ga_buf_printf(&s, " in %d %s", p->collection.passes,
			              ga_plural((size_t)p->collection.passes, "pass", "passes"));
	}
	tx_wrap_buf(t, &s, 0, 2);
	measured_line(t, a);

	if (o->recorded_label) {
		/* A box, so nobody mistakes a recorded profile for a fresh run. */
		char *text = ga_xasprintf("RECORDED PROFILE: %s", o->recorded_label);
		ga_buf_putc(&t->b, '\n');
		box(t, text);
		free(text);
	}

	if (p && p->collection.incomplete) {
		ga_buf_putc(&t->b, '\n');
		if (t->color)
			ga_buf_puts(&s, C_WARN "warning:" C_RESET);
		else
			ga_buf_puts(&s, "warning:");
		ga_buf_puts(&s, " incomplete profile, results so far only");
		if (p->collection.app_signal > 0)
			ga_buf_printf(&s, " (the application was ended by signal %d)",
			              p->collection.app_signal);
		ga_buf_printf(&s, ": %s", p->collection.note && *p->collection.note
		              ? p->collection.note
		              : "the application ended before profiling finished.");
		tx_wrap_buf(t, &s, 0, 2);
	}
}

/* --verbose: a finding's saving, class and severity, then its speedups,
 * a line each. */
static void entry_numbers(tctx *t, const ga_analysis *a, const ga_finding *f, const ga_do *d)
{
	const ga_rule *r = f->rule;
	char b1[64], b3[64], fr[160];
	ga_buf s = { 0 };
	ga_figures x;

	ga_finding_figures(f, d, &x);
	ga_spaces(&t->b, 4);
	if (x.shapes > 1)
		ga_buf_printf(&s, "on %zu launch shapes of the kernel: ", x.shapes);
	ga_buf_printf(&s, "saves ~%s%% of total GPU time; ",
	              ga_fmt_pct(x.saving, 0, b1, sizeof(b1)));
	if (r) {
		/* The kernel's class, not the rule's: a memory-bound kernel can
		 * still have a compute fix (tensor cores for a naive matmul). */
		ga_class kc = a->groups[f->group].klass;
		if (t->color)
			ga_buf_printf(&s, "%s%s" C_RESET "-bound kernel, %s%s" C_RESET " severity",
			              tx_class_color(kc), ga_report_class(kc),
			              tx_severity_color(r->severity), ga_report_severity(r->severity));
		else
			ga_buf_printf(&s, "%s-bound kernel, %s severity", ga_report_class(kc),
			              ga_report_severity(r->severity));
	}
	tx_wrap_buf(t, &s, 4, 4);

	ga_spaces(&t->b, 4);
	if (f->estimate_missing)
		ga_buf_printf(&s, "estimate needs %s", f->estimate_missing);
	else if (r)
		ga_buf_printf(&s, "expected %s from the fix%s, ",
		              ga_fmt_speedup_range(x.speedup_min, x.speedup_max, fr, sizeof(fr)),
		              ga_range_wide_words(x.speedup_min, x.speedup_max));
	if (!f->estimate_missing)
		ga_buf_printf(&s, "estimated %s on %s", ga_fmt_speedup(x.speedup, b3, sizeof(b3)),
		              x.shapes > 1 ? "those launches" : "this kernel");
	tx_wrap_buf(t, &s, 4, 4);
	if (r && r->model) {
		ga_spaces(&t->b, 4);
		ga_buf_printf(&s, "model: %s", r->model);
		tx_wrap_buf(t, &s, 4, 6);
	}
}

/* The default: severity, saving, speedups and class in one line. */
static void entry_line(tctx *t, const ga_analysis *a, const ga_finding *f, const ga_do *d)
{
	const ga_rule *r = f->rule;
	char b1[64], b2[64], fr[160];
	ga_buf s = { 0 };
	ga_class kc = a->groups[f->group].klass;
	ga_figures x;

	ga_finding_figures(f, d, &x);
	ga_spaces(&t->b, 4);
	if (r)
		tx_severity_tag(t, &s, r->severity);
	if (x.shapes > 1)
		ga_buf_printf(&s, "on %zu launch shapes: ", x.shapes);
	ga_fmt_pct(x.saving, 0, b1, sizeof(b1));
	if (f->estimate_missing) {
		ga_buf_printf(&s, "estimate needs %s", f->estimate_missing);
	} else if (a->wall_currency && isfinite(x.wall_saving)) {
		char w[64];
		ga_fmt_pct(x.wall_saving, 0, w, sizeof(w));
		ga_buf_printf(&s, "saves %s%s%% of wall time (%s%s%% of GPU time), estimated %s",
		              w[0] == '<' ? "" : "~", w, b1[0] == '<' ? "" : "~", b1,
		              ga_fmt_speedup(x.speedup, b2, sizeof(b2)));
	} else {
		ga_buf_printf(&s, "saves %s%s%% of GPU time, estimated %s", b1[0] == '<' ? "" : "~",
		              b1, ga_fmt_speedup(x.speedup, b2, sizeof(b2)));
	}
	if (r && !f->estimate_missing)
		ga_buf_printf(&s, ", fix %s",
		              ga_fmt_fix_range(x.speedup_min, x.speedup_max, fr, sizeof(fr)));
	if (t->color)
		ga_buf_printf(&s, "; %s%s" C_RESET "-bound", tx_class_color(kc), ga_report_class(kc));
	else
		ga_buf_printf(&s, "; %s-bound", ga_report_class(kc));
	tx_wrap_buf(t, &s, 4, 6);
}

/* Entry i (0-based) of What to do first: "N. kernel: title", the saving
 * and the evidence. */
static void finding_entry(tctx *t, const ga_analysis *a, const ga_finding *f,
                          const ga_do *d, size_t i)
{
	const ga_rule *r = f->rule;
	const ga_group *g = f->group < a->n_groups ? &a->groups[f->group] : NULL;
	ga_buf s = { 0 };
	int all_shapes = d && d->on_shapes > 1;

	if (i && t->verbose)
		ga_buf_putc(&t->b, '\n');
	/* Keep "N. kernel:" short so the title starts on the same line. */
	char *name = !g ? ga_xstrdup("?") : all_shapes ? tx_kernel_name_all_shapes(g, t->width / 2)
	                                               : tx_kernel_name(g, t->width / 2);
	char *line = ga_xasprintf("%s: %s", name, tx_rule_title(r));
	char num[32];
	snprintf(num, sizeof(num), "%2zu. ", i + 1);
	ga_buf_puts(&t->b, num);
	size_t col = strlen(num);
	if (i == 0 && t->color) {
		/* The headline: the one thing to do first. */
		ga_buf_printf(&s, C_BOLD "%s" C_RESET, line);
	} else {
		ga_buf_puts(&s, line);
	}
	tx_wrap_buf(t, &s, col, 4);
	free(line);
	free(name);

	if (t->verbose)
		entry_numbers(t, a, f, d);
	else
		entry_line(t, a, f, d);
	if (f->n_evidence) {
		ga_spaces(&t->b, 4);
		ga_buf_puts(&s, "evidence: ");
		tx_evidence_list(&s, f->evidence, f->n_evidence);
		tx_wrap_buf(t, &s, 4, 6);
	}
}

#define ACTION_KERNELS 3   /* kernels named per action unless verbose */
#define ACTION_OPS 3       /* operations named per action unless verbose */

/* The operations an action's kernels ran in, by their time there. */
static void action_ops(tctx *t, const ga_analysis *a, const ga_action *ac)
{
	ga_buf s = { 0 };
	size_t named = ac->n_ops;

	if (!named)
		return;
	if (!t->verbose && named > ACTION_OPS)
		named = ACTION_OPS;
	ga_spaces(&t->b, 4);
	ga_buf_puts(&s, ac->n_ops == 1 ? "in operation" : "in operations");
	for (size_t k = 0; k < named; k++)
		ga_buf_printf(&s, "%s %s", k ? "," : "", a->ops[ac->ops[k].op].name);
	if (named < ac->n_ops)
		ga_buf_printf(&s, " and %zu more", ac->n_ops - named);
	tx_wrap_buf(t, &s, 4, 6);
}

/* One framework-level action: its title, then the GPU time it saves and
 * the kernels it covers, by saving. */
static void action_entry(tctx *t, const ga_analysis *a, const ga_action *ac, size_t i)
{
	ga_buf s = { 0 };
	char num[32], b1[64], b2[64];
	size_t named = ac->n_findings;

	snprintf(num, sizeof(num), "%2zu. ", i + 1);
	ga_buf_puts(&t->b, num);
	if (i == 0 && t->color)
		ga_buf_printf(&s, C_BOLD "%s" C_RESET, tx_rule_title(ac->rule));
	else
		ga_buf_puts(&s, tx_rule_title(ac->rule));
	tx_wrap_buf(t, &s, strlen(num), 4);
	ga_spaces(&t->b, 4);
	tx_severity_tag(t, &s, ac->rule->severity);
	ga_fmt_pct(ac->saving, 0, b1, sizeof(b1));
	ga_fmt_pct(ac->share, 0, b2, sizeof(b2));
	if (a->wall_currency) {
		char w[64];
		ga_fmt_pct(ac->wall_saving, 0, w, sizeof(w));
		ga_buf_printf(&s, "saves %s%s%% of wall time (%s%s%% of GPU time) ", w[0] == '<' ? "" : "~",
		              w, b1[0] == '<' ? "" : "~", b1);
	} else {
		ga_buf_printf(&s, "saves %s%s%% of GPU time ", b1[0] == '<' ? "" : "~", b1);
	}
	ga_buf_printf(&s, "(%s) in %zu %s holding %s%%:", ac->rule->id, ac->n_findings,
	              ga_plural(ac->n_findings, "kernel", "kernels"), b2);
	if (!t->verbose && named > ACTION_KERNELS)
		named = ACTION_KERNELS;
	for (size_t k = 0; k < named; k++) {
		const ga_finding *f = &a->findings[ac->findings[k]];
		char *name = tx_kernel_name(&a->groups[f->group], t->width / 2);
		ga_buf_printf(&s, "%s %s", k ? "," : "", name);
		free(name);
	}
	if (named < ac->n_findings)
		ga_buf_printf(&s, " and %zu more", ac->n_findings - named);
	tx_wrap_buf(t, &s, 4, 6);
	action_ops(t, a, ac);
}

/* Most GPU time in library kernels: the framework-level actions, each over
 * all its kernels, instead of findings one kernel at a time. */
static void framework_actions(tctx *t, const ga_analysis *a)
{
	ga_buf s = { 0 };
	char b1[64];
	size_t shown = a->n_actions, in_actions = 0;

	ga_buf_printf(&s, "%s%% of the GPU time is in library kernels (the report names "
	              "each one's owner): change how the framework runs them.",
	              ga_fmt_pct(a->library_share, 0, b1, sizeof(b1)));
	tx_wrap_buf(t, &s, 0, 0);
	if (!t->verbose && shown > TOP_FINDINGS)
		shown = TOP_FINDINGS;
	for (size_t i = 0; i < shown; i++) {
		if (i && t->verbose)
			ga_buf_putc(&t->b, '\n');
		action_entry(t, a, &a->actions[i], i);
	}
	for (size_t i = 0; i < shown; i++)
		in_actions += a->actions[i].n_findings;
	/* Then the findings on the user's own kernels (rules without owners:),
	 * best first, in the room left. */
	for (size_t fi = 0; fi < a->n_findings; fi++) {
		const ga_finding *f = &a->findings[fi];
		if (f->rule->n_owners || (!t->verbose && shown >= TOP_FINDINGS))
			continue;
		finding_entry(t, a, f, NULL, shown++);
		in_actions++;
	}
	if (in_actions < a->n_findings) {
		size_t more = a->n_findings - in_actions;
		ga_buf_putc(&t->b, '\n');
		ga_buf_printf(&s, "%zu more %s under Kernels below.", more,
		              ga_plural(more, "finding", "findings"));
		tx_wrap_buf(t, &s, 0, 0);
	}
}

/* With timelines: the one ranking by wall time (ga_analysis.first), the
 * program's findings, the framework's actions and the kernels' findings
 * mixed. */
static void first_by_wall(tctx *t, const ga_analysis *a)
{
	size_t shown = a->n_first;

	if (!a->n_first) {
		ga_wrap(&t->b, "No findings: neither the timeline nor any kernel crosses the rules' "
		        "thresholds.", 0, 0, t->width);
		return;
	}
	if (!t->verbose && shown > TOP_FINDINGS)
		shown = TOP_FINDINGS;
	for (size_t i = 0; i < shown; i++) {
		const ga_do *d = &a->first[i];
		if (d->kind == GA_DO_PROGRAM)
			tx_program_entry(t, a, &a->pfindings[d->index], i);
		else if (d->kind == GA_DO_ACTION)
			action_entry(t, a, &a->actions[d->index], i);
		else
			finding_entry(t, a, &a->findings[d->index], d, i);
		tx_on_ranks(t, a, d);
	}
	if (shown < a->n_first) {
		ga_buf s = { 0 };
		size_t more = a->n_first - shown;
		ga_buf_putc(&t->b, '\n');
		ga_buf_printf(&s, "%zu more below (--verbose lists all here).", more);
		tx_wrap_buf(t, &s, 0, 0);
	}
}

static void what_to_do_first(tctx *t, const ga_analysis *a)
{
	ga_buf_putc(&t->b, '\n');
	tx_heading(t, "What to do first");
	/* several ranks: one entry per advice, from the one ranking */
	if (a->wall_currency || a->ranks.multi) {
		first_by_wall(t, a);
		return;
	}
	if (a->framework_first) {
		framework_actions(t, a);
		return;
	}
	if (a->n_findings == 0) {
		ga_wrap(&t->b, "No findings: every kernel is below the rules' thresholds.", 0, 0,
		     t->width);
		return;
	}
	/* a->first: the findings by GPU time, a kernel's shapes summed */
	size_t shown = a->n_first;
	if (!t->verbose && shown > TOP_FINDINGS)
		shown = TOP_FINDINGS;
	for (size_t i = 0; i < shown; i++)
		finding_entry(t, a, &a->findings[a->first[i].index], &a->first[i], i);
	if (shown < a->n_first) {
		ga_buf s = { 0 };
		size_t more = a->n_first - shown;
		ga_buf_putc(&t->b, '\n');
		ga_buf_printf(&s, "%zu more %s under Kernels below (--verbose lists all here).",
		              more, ga_plural(more, "finding", "findings"));
		tx_wrap_buf(t, &s, 0, 0);
	}
}

/* ---- roofline ------------------------------------------------------------ */

/* "FP32 66.9 TFLOP/s (counters), ..." for the known peaks. */
static void roof_peaks(tctx *t, const ga_roofline *r)
{
	const ga_roof_peaks *pk = &r->peaks;
	ga_buf s = { 0 };
	char v[64];
	ga_buf_puts(&s, "peaks:");
	for (int f = 0; f < GA_ROOF__PREC; f++)
		if (isfinite(pk->flops[f]))
			ga_buf_printf(&s, " %s%c%s%c(%s),", ga_roof_prec_name((ga_roof_prec)f), NBSP,
			              tx_nb((char *)ga_fmt_rate(pk->flops[f], "FLOP/s", v, sizeof(v))),
			              NBSP, ga_peak_source_name(pk->flops_src[f]));
	for (int l = 0; l < GA_ROOF__LEVELS; l++)
		if (isfinite(pk->bw[l]))
			ga_buf_printf(&s, " %s%c%s%c(%s),", ga_roof_level_name((ga_roof_level)l), NBSP,
			              tx_nb((char *)ga_fmt_rate(pk->bw[l], "B/s", v, sizeof(v))), NBSP,
			              ga_peak_source_name(pk->bw_src[l]));
	s.s[--s.len] = '\0';
	ga_buf_puts(&s, "; counters: recorded in the profile, table: gpuadvise's figures for "
	            "this compute capability; tensor work is estimated from tensor-pipe "
	            "utilisation");
	tx_wrap_buf(t, &s, 0, 2);
	ga_buf_puts(&s, "\xe2\x97\x86 DRAM ridge:");
	for (int f = 0; f < GA_ROOF__PREC; f++)
		if (ga_roof_prec_drawn(r, (ga_roof_prec)f) &&
		    isfinite(pk->bw[GA_ROOF_DRAM]))
			ga_buf_printf(&s, " %s at %s FLOP/byte,", ga_roof_prec_name((ga_roof_prec)f),
			              ga_fmt_value(pk->ridge[f], v, sizeof(v)));
	s.s[--s.len] = '\0';
	tx_wrap_buf(t, &s, 0, 2);
}

static void roof_occupancy(tctx *t, const ga_roof_kernel *k)
{
	ga_buf s = { 0 };
	char b1[32], b2[32];
	ga_spaces(&t->b, 5);
	ga_buf_printf(&s, "occupancy %s%% achieved of %s%% theoretical",
	              ga_fmt_value(k->occ_achieved_pct, b1, sizeof(b1)),
	              ga_fmt_value(k->occ_theoretical_pct, b2, sizeof(b2)));
	if (k->occ_limiter)
		ga_buf_printf(&s, ", limited by %s", k->occ_limiter);
	tx_wrap_buf(t, &s, 5, 5);
}

static void roof_kernel(tctx *t, const ga_group *g, const ga_roof_kernel *k, char label)
{
	ga_buf s = { 0 };
	char b1[64], b2[64], b3[64];
	const char *cls = ga_report_class(g->klass);
	char *name = tx_kernel_name(g, t->width - 8 - strlen(cls));
	ga_buf_printf(&t->b, "%c  %s [", label ? label : '-', name);
	tx_paint(t, tx_class_color(g->klass), cls);
	ga_buf_puts(&t->b, "]\n");
	free(name);
	ga_spaces(&t->b, 5);
	if (k->verdict == GA_ROOF_NOT_PLACED) {
		ga_buf_printf(&s, "not placed: %s", k->reason);
	} else {
		ga_buf_printf(&s, "%s (mostly %s%s) at %s FLOP/byte at %s: %s side, %s%% of the "
		              "%s roof; %s",
		              tx_nb((char *)ga_fmt_rate(k->flops_total, "FLOP/s", b1, sizeof(b1))),
		              ga_roof_prec_name(k->prec),
		              k->prec == GA_ROOF_TENSOR ? ", estimated"
		              : k->flops_estimated ? ", estimated from pipe use" : "",
		              ga_fmt_value(k->x_intensity, b2, sizeof(b2)),
		              ga_roof_level_name(k->placed_by),
		              ga_roof_verdict_name(k->verdict), ga_fmt_pct(k->roof_frac, 0, b3,
		              sizeof(b3)), k->binding_is_compute ? ga_roof_prec_name(k->prec)
		                                                 : ga_roof_level_name(k->binding),
		              k->agrees == 1 ? "agrees with the class"
		              : k->agrees == 0 ? "DISAGREES with the class" : "not comparable");
		if (k->reason)
			ga_buf_printf(&s, ": %s", k->reason);
	}
	tx_wrap_buf(t, &s, 5, 5);
	roof_occupancy(t, k);
}

static void roofline(tctx *t, const ga_analysis *a)
{
	const ga_roofline *r = &a->roofline;
	ga_buf_putc(&t->b, '\n');
	tx_heading(t, "Roofline");
	if (r->n_placed) {
		ga_roof_plot(&t->b, r, t->width);
		roof_peaks(t, r);
	} else {
		ga_buf_puts(&t->b, "No kernel could be placed (the profile lacks FLOP counts, "
		            "bytes or peaks).\n");
	}
	for (size_t i = 0; i < r->n; i++)
		roof_kernel(t, &a->groups[i], &r->kernels[i],
		            r->kernels[i].verdict == GA_ROOF_NOT_PLACED ? 0 : ga_roof_label(i));
}

/* ---- processes and baseline (added with --baseline) -------------------- */

static void processes(tctx *t, const ga_analysis *a, const ga_report_opts *o)
{
	const ga_process *v = a->processes;
	size_t n = a->n_processes, kernels = 0, launches = 0;
	char b1[64], b2[64];

	ga_buf_putc(&t->b, '\n');
	tx_heading(t, "Processes");
	for (size_t i = 0; i < n; i++) {
		ga_buf s = { 0 };
		const char **files;
		size_t nf = ga_report_process_files(a, o, v[i].pid, &files);
		ga_buf_printf(&s, "pid %d: %zu %s, %zu %s, %s (%s%% of GPU time)", v[i].pid,
		              v[i].n_kernels, ga_plural(v[i].n_kernels, "kernel", "kernels"),
		              v[i].n_launches, ga_plural(v[i].n_launches, "launch", "launches"),
		              tx_dur_nb(v[i].total_ns, b1, sizeof(b1)),
		              ga_fmt_pct(v[i].share, 1, b2, sizeof(b2)));
		for (size_t f = 0; f < nf; f++)
			ga_buf_printf(&s, "%s%s", f ? ", " : "; from ", files[f]);
		free(files);
		tx_wrap_buf(t, &s, 0, 2);
		kernels += v[i].n_kernels;
		launches += v[i].n_launches;
	}
	ga_buf s = { 0 };
	ga_buf_printf(&s, "total: %zu %s, %zu %s, %zu %s, %s", n, ga_plural(n, "process", "processes"),
	              kernels, ga_plural(kernels, "kernel", "kernels"), launches,
	              ga_plural(launches, "launch", "launches"), tx_dur_nb(a->total_ns, b1, sizeof(b1)));
	if (o->n_inputs > 1)
		ga_buf_printf(&s, " from %zu files", o->n_inputs);
	tx_wrap_buf(t, &s, 0, 2);
}

static void dims_change(ga_buf *s, const char *what, const unsigned a[3], const unsigned b[3])
{
	char da[48], db[48];
	tx_dims(da, sizeof(da), a);
	tx_dims(db, sizeof(db), b);
	if (strcmp(da, db) != 0)
		ga_buf_printf(s, ", %s%c%s%c->%c%s", what, NBSP, da, NBSP, NBSP, db);
}

static void finding_change(tctx *t, size_t ind, const char *what, const ga_finding_change *f)
{
	ga_buf s = { 0 };
	const ga_rule *r = f->rule;
	ga_spaces(&t->b, ind);
	ga_buf_printf(&s, "%s: [", what);
	if (t->color && r)
		ga_buf_printf(&s, "%s%s" C_RESET, tx_severity_color(r->severity),
		              ga_report_severity(r->severity));
	else
		ga_buf_puts(&s, r ? ga_report_severity(r->severity) : "?");
	ga_buf_printf(&s, "] %s (%s)%s", tx_rule_title(r), r && r->id ? r->id : "?",
	              f->regression ? ", a regression" : "");
	tx_wrap_buf(t, &s, ind, ind + 2);
}

/* One kernel of the comparison, its first line indented by ind. */
static void kernel_change(tctx *t, size_t ind, const ga_comparison *c,
                          const ga_kernel_change *k)
{
	const ga_group *g = k->cur != GA_NO_GROUP ? &c->cur->groups[k->cur] : NULL;
	const ga_group *b = k->base != GA_NO_GROUP ? &c->base->groups[k->base] : NULL;
	char b1[64], b2[64], b3[64];
	ga_buf s = { 0 };

	ga_spaces(&t->b, ind);
	if (k->regression)
		tx_paint(t, "\033[1;31m", "REGRESSION ");
	char *name = tx_kernel_name(g ? g : b, t->width / 2);
	ga_buf_printf(&s, "%s:", name);
	free(name);
	if (g && b) {
		if (isfinite(k->change))
			ga_buf_printf(&s, " %s -> %s per launch (%s)", tx_dur_nb(k->base_ns, b1, sizeof(b1)),
			              tx_dur_nb(k->cur_ns, b2, sizeof(b2)),
			              ga_fmt_change(k->change, b3, sizeof(b3)));
		else if (!c->same_device)
			ga_buf_puts(&s, " durations not compared (another GPU)");
		else
			ga_buf_puts(&s, " duration unknown");
		if (k->slower)
			ga_buf_printf(&s, ", slower than the %s%% threshold",
			              ga_fmt_value(c->threshold * 100, b1, sizeof(b1)));
	} else {
		ga_buf_printf(&s, " mean %s per launch", tx_dur_nb(g ? k->cur_ns : k->base_ns, b1,
		                                                 sizeof(b1)));
	}
	tx_wrap_buf(t, &s, ind + (k->regression ? 11 : 0), ind + 2);

	ind += 2;
	if (g && b && k->match == GA_MATCH_NAME) {
		ga_spaces(&t->b, ind);
		ga_buf_puts(&s, "matched by name only");
		dims_change(&s, "grid", b->grid, g->grid);
		dims_change(&s, "block", b->block, g->block);
		tx_wrap_buf(t, &s, ind, ind + 2);
	}
	ga_spaces(&t->b, ind);
	if (g && b && k->class_changed)
		ga_buf_printf(&s, "class %s -> %s", ga_report_class(b->klass), ga_report_class(g->klass));
	else
		ga_buf_printf(&s, "class %s%s", ga_report_class((g ? g : b)->klass),
		              g && b ? " (unchanged)" : "");
	tx_wrap_buf(t, &s, ind, ind + 2);
	if (g && b && k->n_metrics) {
		ga_spaces(&t->b, ind);
		ga_buf_puts(&s, "evidence:");
		for (size_t i = 0; i < k->n_metrics; i++)
			ga_buf_printf(&s, "%s %s%c%s%c->%c%s", i ? "," : "", k->metrics[i].name, NBSP,
			              ga_fmt_value(k->metrics[i].base, b1, sizeof(b1)), NBSP, NBSP,
			              ga_fmt_value(k->metrics[i].cur, b2, sizeof(b2)));
		tx_wrap_buf(t, &s, ind, ind + 2);
	}
	for (size_t i = 0; i < k->n_added; i++)
		finding_change(t, ind, "new finding", &k->added[i]);
	for (size_t i = 0; i < k->n_removed; i++) {
		finding_change(t, ind, g ? "gone" : "finding", &k->removed[i]);
		char *pred = ga_prediction_text(k->removed[i].rule, &k->removed[i].check);
		if (pred) {
			ga_spaces(&t->b, ind + 2);
			ga_buf_puts(&s, pred);
			tx_wrap_buf(t, &s, ind + 2, ind + 4);
			free(pred);
		}
	}
}

static void baseline(tctx *t, const ga_comparison *c)
{
	const ga_profile *bp = c->base->profile;
	char b1[64], b2[64], b3[64];
	ga_buf s = { 0 };

	char *title = ga_xasprintf("Compared with baseline %s", c->label ? c->label : "");
	ga_buf_putc(&t->b, '\n');
	tx_heading(t, title);
	free(title);

	char *warning = ga_baseline_warning(c);
	if (warning) {
		char *text = ga_xasprintf("DIFFERENT GPU: %s", warning);
		box(t, text);
		free(text);
		free(warning);
	}

	size_t nl = c->base->n_launches;
	char *dev = ga_device_label(bp ? &bp->device : NULL);
	ga_buf_printf(&s, "baseline: %s, %zu %s, %zu %s, %s GPU time", dev, c->base->n_groups,
	              ga_plural(c->base->n_groups, "kernel", "kernels"), nl,
	              ga_plural(nl, "launch", "launches"), tx_dur_nb(c->base_total_ns, b1, sizeof(b1)));
	free(dev);
	if (bp && bp->collection.date && *bp->collection.date)
		ga_buf_printf(&s, ", recorded %s", bp->collection.date);
	tx_wrap_buf(t, &s, 0, 2);
	if (isfinite(c->total_change)) {
		ga_buf_printf(&s, "GPU time %s -> %s (%s)", tx_dur_nb(c->base_total_ns, b1, sizeof(b1)),
		              tx_dur_nb(c->cur_total_ns, b2, sizeof(b2)),
		              ga_fmt_change(c->total_change, b3, sizeof(b3)));
		tx_wrap_buf(t, &s, 0, 2);
	}
	if (c->scaling.shown) {
		ga_buf_printf(&s, "communication: %s%% of GPU time at world size %ld -> %s%% at %ld",
		              ga_fmt_pct(c->scaling.base_share, 1, b1, sizeof(b1)),
		              c->scaling.base_world, ga_fmt_pct(c->scaling.cur_share, 1, b2, sizeof(b2)),
		              c->scaling.cur_world);
		if (isfinite(c->scaling.change) && c->scaling.change != 0)
			ga_buf_printf(&s, " (%+.1f points): it %s with the world size", 100 * c->scaling.change,
			              (c->scaling.change > 0) == (c->scaling.cur_world > c->scaling.base_world)
			              ? "grows" : "shrinks");
		tx_wrap_buf(t, &s, 0, 2);
	}
	ga_buf_printf(&s, "%zu matched, %zu only in this profile, %zu only in the baseline; ",
	              c->n_matched, c->n_only_cur, c->n_only_base);
	if (c->n_regressions)
		ga_buf_printf(&s, "%zu %s", c->n_regressions,
		              ga_plural(c->n_regressions, "regression", "regressions"));
	else
		ga_buf_puts(&s, "no regression");
	if (c->same_device)
		ga_buf_printf(&s, " (a kernel more than %s%% slower, or a new finding of %s "
		              "severity or above)", ga_fmt_value(c->threshold * 100, b1, sizeof(b1)),
		              ga_severity_name((ga_severity)c->severity));
	else
		ga_buf_printf(&s, " (a new finding of %s severity or above; durations are not "
		              "compared)", ga_severity_name((ga_severity)c->severity));
	tx_wrap_buf(t, &s, 0, 2);

	size_t quiet = 0;
	for (size_t i = 0; i < c->n_kernels; i++) {
		const ga_kernel_change *k = &c->kernels[i];
		if (k->match == GA_MATCH_NONE)
			continue;
		if (!t->verbose && !ga_kernel_change_notable(c, k)) {
			quiet++;
			continue;
		}
		ga_buf_putc(&t->b, '\n');
		kernel_change(t, 0, c, k);
	}
	if (quiet) {
		ga_buf_putc(&t->b, '\n');
		ga_buf_printf(&s, "%zu matched %s unchanged: ", quiet,
		              ga_plural(quiet, "kernel", "kernels"));
		if (c->same_device)
			ga_buf_printf(&s, "within %s%%, ",
			              ga_fmt_value(c->threshold * 100, b1, sizeof(b1)));
		ga_buf_printf(&s, "same class and findings (--verbose lists %s).",
		              ga_plural(quiet, "it", "them"));
		tx_wrap_buf(t, &s, 0, 2);
	}
	for (int side = 0; side < 2; side++) {
		size_t n = side == 0 ? c->n_only_cur : c->n_only_base;
		if (!n)
			continue;
		ga_buf_putc(&t->b, '\n');
		tx_paint(t, C_BOLD, side == 0 ? "Only in this profile:" : "Only in the baseline:");
		ga_buf_putc(&t->b, '\n');
		for (size_t i = 0; i < c->n_kernels; i++) {
			const ga_kernel_change *k = &c->kernels[i];
			if (k->match != GA_MATCH_NONE || (side == 0) != (k->cur != GA_NO_GROUP))
				continue;
			kernel_change(t, 2, c, k);
		}
	}
}

/* Why rules went unchecked, and what to do about it, once. */
static void unchecked_hint(tctx *t, const ga_analysis *a)
{
	const ga_profile *p = a->profile;
	size_t n = 0, small = 0;
	ga_buf s = { 0 };

	for (size_t gi = 0; gi < a->n_groups; gi++) {
		const ga_group *g = &a->groups[gi];
		if (g->n_unchecked > 0 && g->below_min_share)
			small++;
		else if (g->n_unchecked > 0)
			n++;
	}
	if (!n && !small)
		return;
	ga_buf_putc(&t->b, '\n');
	if (small) {
		char pct[32] = "a small share";
		if (p && p->collection.min_share_pct > 0)
			snprintf(pct, sizeof(pct), "%g %%", p->collection.min_share_pct);
		ga_buf_printf(&s, "%zu %s had rules not checked: %s less than %s of the GPU time "
		              "while running, so %s later launches were not measured (--min-share). "
		              "Profile with --min-share 0 to measure every kernel in full.", small,
		              ga_plural(small, "kernel", "kernels"), small == 1 ? "it took" : "they took",
		              pct, small == 1 ? "its" : "their");
		if (!t->verbose)
			ga_buf_puts(&s, " --verbose names the rules of each kernel.");
		tx_wrap_buf(t, &s, 0, 0);
	}
	if (!n)
		return;
	if (p && p->collection.metric_sets > 1)
		ga_buf_printf(&s, "%zu %s had rules not checked: the metrics were measured in %d "
		              "sets, one per launch in turn (--max-passes), and %s launched too "
		              "few times to take them all. Launch %s more often, or profile without "
		              "--max-passes to measure every metric on a kernel's first launch (in "
		              "a loop of a few iterations, --no-loop-replay takes the other sets "
		              "from the second).",
		              n, ga_plural(n, "kernel", "kernels"), p->collection.metric_sets,
		              n == 1 ? "it was" : "they were", n == 1 ? "it" : "them");
	else if (p && p->collection.quick)
		ga_buf_printf(&s, "%zu %s had rules not checked: --quick collected only the "
		              "classifier's metrics. Profile without --quick to check every rule.",
		              n, ga_plural(n, "kernel", "kernels"));
	else
		ga_buf_printf(&s, "%zu %s had rules not checked: the profile lacks their metrics "
		              "(a --quick run, or one with other rules).", n,
		              ga_plural(n, "kernel", "kernels"));
	if (!t->verbose)
		ga_buf_puts(&s, " --verbose names the rules of each kernel.");
	tx_wrap_buf(t, &s, 0, 0);
}

static void notes(tctx *t, const ga_analysis *a)
{
	if (!a->n_notes)
		return;
	ga_buf_putc(&t->b, '\n');
	tx_heading(t, "Notes");
	for (size_t i = 0; i < a->n_notes; i++) {
		ga_buf_puts(&t->b, "- ");
		ga_wrap(&t->b, a->notes[i], 2, 2, t->width);
	}
}

int ga_report_text(FILE *out, const ga_analysis *a, const ga_ruleset *rs, const ga_report_opts *o)
{
	static const ga_report_opts defaults = { 0 };
	if (!o)
		o = &defaults;
	tctx t = { { 0 }, o->color, o->width > 0 ? (size_t)o->width : 80, o->verbose,
	           o->per_launch };
	if (t.width < MIN_WIDTH)
		t.width = MIN_WIDTH;

	header(&t, a, o);
	t.several = ga_report_several_processes(a, o);
	if (a->ranks.multi)
		tx_ranks(&t, a);
	else if (t.several)
		processes(&t, a, o);
	if (o->baseline)
		baseline(&t, o->baseline);
	tx_timeline(&t, a);
	what_to_do_first(&t, a);
	tx_operations(&t, a);
	if (o->roofline && a->profile)
		roofline(&t, a);
	tx_kernels(&t, a);
	if (!t.verbose)
		tx_how_to_fix(&t, a);
	unchecked_hint(&t, a);
	if (t.verbose)
		notes(&t, a);

	int rc = 0;
	/* Strings from the profile can hold terminal controls (safe.c). */
	if (ga_report_put_safe(out, t.b.s ? t.b.s : "", t.b.len, o->color) != 0)
		rc = -1;
	if (fflush(out) != 0 || ferror(out))
		rc = -1;
	ga_buf_free(&t.b);
	return rc;
}
