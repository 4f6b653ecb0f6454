/* html.c: one self-contained HTML page: the roofline as inline SVG, the
 * Timeline (html_timeline.c) when the profile has one, "What to do first"
 * in the order every report follows (ga_analysis.first, worded as the text
 * report words it) and the kernel table.  Inline CSS, no scripts, no
 * external references of any kind, so the page reads the same offline and
 * as a CI artifact.  Every string from the profile or the rules is escaped. */
#include "html.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#define SVG_W 760
#define SVG_H 540
#define PAD_L 80
#define PAD_R 80
#define PAD_T 20
#define PAD_B 60

static const char *kname(const ga_group *g)
{
	return g->name ? g->name : g->mangled ? g->mangled : "?";
}

/* ---- the SVG chart ---------------------------------------------------------
 *
 * Every text of the chart is placed so that none overlaps another: the
 * reporter keeps the boxes it has used (from the font size, with a margin:
 * it cannot measure), and moves a kernel's letter around its dot, further
 * out with a leader line when the near places are taken.  Precisions with
 * the same peak share one roof, named together.  tests/html/run.sh checks
 * the layout in Chromium. */

#define CHAR_W 0.62      /* em: a generous average glyph width */
#define MAX_BOXES 512

typedef struct {
	double x0, x1, y0, y1;   /* decades */
} axes;

typedef struct {
	double l, t, r, b;
} box;

typedef struct {
	box v[MAX_BOXES];
	size_t n;
} boxes;

static double sx(const axes *a, double v)
{
	return PAD_L + (log10(v) - a->x0) / (a->x1 - a->x0) * (SVG_W - PAD_L - PAD_R);
}

static double sy(const axes *a, double v)
{
	return PAD_T + (a->y1 - log10(v)) / (a->y1 - a->y0) * (SVG_H - PAD_T - PAD_B);
}

/* The box of a text of n characters at font size px, anchored at x
 * (start, middle or end: 0, 1, 2) on baseline y. */
static box text_box(double x, double y, size_t n, double px, int anchor)
{
	double w = (double)n * px * CHAR_W;
	double l = anchor == 0 ? x : anchor == 1 ? x - w / 2 : x - w;
	return (box){ l - 1, y - px, l + w + 1, y + px * 0.3 };
}

static int overlaps(const box *p, const box *q)
{
	return p->l < q->r && q->l < p->r && p->t < q->b && q->t < p->b;
}

static int is_free(const boxes *bs, const box *c)
{
	if (c->l < 0 || c->t < 0 || c->r > SVG_W || c->b > SVG_H)
		return 0;
	for (size_t i = 0; i < bs->n; i++)
		if (overlaps(&bs->v[i], c))
			return 0;
	return 1;
}

static void take(boxes *bs, box c)
{
	if (bs->n < MAX_BOXES)
		bs->v[bs->n++] = c;
}

static void grid(ga_buf *b, const axes *a, boxes *bs, int off_dram)
{
	char v[64];
	for (int d = (int)ceil(a->x0); d <= (int)floor(a->x1); d++) {
		double x = sx(a, pow(10, d));
		snprintf(v, sizeof(v), "%g", pow(10, d));
		ga_buf_printf(b, "<line class=\"grid\" x1=\"%.1f\" y1=\"%d\" x2=\"%.1f\" y2=\"%d\"/>"
		              "<text x=\"%.1f\" y=\"%d\" text-anchor=\"middle\">%s</text>\n", x, PAD_T,
		              x, SVG_H - PAD_B, x, SVG_H - PAD_B + 18, v);
		take(bs, text_box(x, SVG_H - PAD_B + 18, strlen(v), 12, 1));
	}
	for (int d = (int)ceil(a->y0); d <= (int)floor(a->y1); d++) {
		double y = sy(a, pow(10, d));
		ga_fmt_rate(pow(10, d), "FLOP/s", v, sizeof(v));
		ga_buf_printf(b, "<line class=\"grid\" x1=\"%d\" y1=\"%.1f\" x2=\"%d\" y2=\"%.1f\"/>"
		              "<text x=\"%d\" y=\"%.1f\" text-anchor=\"end\">%s</text>\n", PAD_L, y,
		              SVG_W - PAD_R, y, PAD_L - 6, y + 4, v);
		take(bs, text_box(PAD_L - 6, y + 4, strlen(v), 12, 2));
	}
	const char *title = off_dram ? "arithmetic intensity, FLOP/byte (at DRAM, or at the level "
	                               "that placed the kernel)"
	                             : "arithmetic intensity, FLOP/byte at DRAM";
	ga_buf_printf(b, "<text x=\"%d\" y=\"%d\" text-anchor=\"middle\">%s</text>\n",
	              (SVG_W + PAD_L - PAD_R) / 2, SVG_H - 12, title);
	take(bs, text_box((SVG_W + PAD_L - PAD_R) / 2.0, SVG_H - 12, strlen(title), 12, 1));
}

/* The precisions drawn with the same peak as p before it: its roof is
 * theirs.  Returns 1 when p is the first of its peak. */
static int first_of_peak(const ga_roofline *r, int p)
{
	for (int q = 0; q < p; q++)
		if (ga_roof_prec_drawn(r, (ga_roof_prec)q) &&
		    fabs(r->peaks.flops[q] - r->peaks.flops[p]) <= 1e-6 * r->peaks.flops[p])
			return 0;
	return 1;
}

/* "FP32/FP16": the drawn precisions with the peak of p. */
static void roof_name(const ga_roofline *r, int p, char *buf, size_t len)
{
	buf[0] = '\0';
	for (int q = p; q < GA_ROOF__PREC; q++)
		if (ga_roof_prec_drawn(r, (ga_roof_prec)q) &&
		    fabs(r->peaks.flops[q] - r->peaks.flops[p]) <= 1e-6 * r->peaks.flops[p])
			snprintf(buf + strlen(buf), len - strlen(buf), "%s%s", buf[0] ? "/" : "",
			         ga_roof_prec_name((ga_roof_prec)q));
}

/* A text at (x, y), moved down in steps of a line until it is free. */
static void free_text(ga_buf *b, boxes *bs, double x, double y, const char *cls,
                      const char *text)
{
	box c = text_box(x, y, strlen(text), 12, 0);
	for (int i = 0; i < 12 && !is_free(bs, &c); i++) {
		y += 14;
		c = text_box(x, y, strlen(text), 12, 0);
	}
	take(bs, c);
	ga_buf_printf(b, "<text%s%s%s x=\"%.1f\" y=\"%.1f\">%s</text>\n", cls ? " class=\"" : "",
	              cls ? cls : "", cls ? "\"" : "", x, y, text);
}

static void flat_roofs(ga_buf *b, const ga_roofline *r, const axes *a, boxes *bs)
{
	const ga_roof_peaks *pk = &r->peaks;
	double xmax = pow(10, a->x1);
	char v[64], name[64];
	for (int p = 0; p < GA_ROOF__PREC; p++) {
		if (!ga_roof_prec_drawn(r, (ga_roof_prec)p) || !first_of_peak(r, p))
			continue;
		double ridge = pk->ridge[p], y = sy(a, pk->flops[p]);
		roof_name(r, p, name, sizeof(name));
		ga_buf_printf(b, "<line class=\"roof\" x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" "
		              "y2=\"%.1f\"/>\n", sx(a, ridge), y, sx(a, xmax), y);
		free_text(b, bs, SVG_W - PAD_R + 4, y + 4, NULL, name);
		ga_buf_printf(b, "<circle class=\"ridge\" cx=\"%.1f\" cy=\"%.1f\" r=\"4\"><title>%s "
		              "ridge at DRAM: %s FLOP/byte</title></circle>\n", sx(a, ridge), y, name,
		              ga_fmt_value(ridge, v, sizeof(v)));
	}
}

static void slopes(ga_buf *b, const ga_roofline *r, const axes *a, boxes *bs)
{
	const ga_roof_peaks *pk = &r->peaks;
	double top = 0, xmax = pow(10, a->x1), xmin = pow(10, a->x0);
	char v[64], text[96];
	for (int p = 0; p < GA_ROOF__PREC; p++)
		if (ga_roof_prec_drawn(r, (ga_roof_prec)p))
			top = fmax(top, pk->flops[p]);
	for (int l = 0; l < GA_ROOF__LEVELS; l++) {
		if (!isfinite(pk->bw[l]))
			continue;
		/* from the left edge (or the bottom) up to the highest flat roof,
		 * named at its lower end, where the slopes are furthest apart */
		double xa = fmax(xmin, pow(10, a->y0) / pk->bw[l]), xb = fmin(xmax, top / pk->bw[l]);
		if (xa >= xb)
			continue;
		ga_buf_printf(b, "<line class=\"slope\" x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" "
		              "y2=\"%.1f\"/>\n", sx(a, xa), sy(a, xa * pk->bw[l]), sx(a, xb),
		              sy(a, xb * pk->bw[l]));
		snprintf(text, sizeof(text), "%s %s", ga_roof_level_name((ga_roof_level)l),
		         ga_fmt_rate(pk->bw[l], "B/s", v, sizeof(v)));
		free_text(b, bs, sx(a, xa) + 4, sy(a, xa * pk->bw[l]) - 6, "slopelabel", text);
	}
}

/* Where kernel i's letter goes: beside its dot at (x, y), or further out
 * (*lead set: draw a line to it). */
static box place_label(const boxes *bs, double x, double y, double *lx, double *ly, int *lead)
{
	static const double dir[8][2] = { { 1, -1 }, { 1, 1 }, { -1, -1 }, { -1, 1 },
	                                  { 0, -1.4 }, { 0, 1.4 }, { 1.4, 0 }, { -1.4, 0 } };
	for (int ring = 1; ring <= 8; ring++)
		for (int d = 0; d < 8; d++) {
			double cx = x + dir[d][0] * 9 * ring, cy = y + dir[d][1] * 9 * ring;
			/* the letter's box centred on (cx, cy) */
			box c = text_box(cx - 4.5, cy + 5, 1, 14, 0);
			if (is_free(bs, &c)) {
				*lx = cx - 4.5;
				*ly = cy + 5;
				*lead = ring > 1;
				return c;
			}
		}
	*lx = x + 8;
	*ly = y - 8;
	*lead = 0;
	return text_box(*lx, *ly, 1, 14, 0);
}

static void dot_title(ga_buf *b, const ga_analysis *an, const ga_roof_kernel *k, size_t i,
                      char label)
{
	char v1[64], v2[64], v3[64];
	ga_buf_printf(b, "<title>%c ", label);
	ht_esc(b, kname(&an->groups[i]));
	ga_buf_printf(b, ": %s%s (mostly %s), %s FLOP/byte at %s, %s%% of the attainable, "
	              "%s%% of GPU time; %s side", ga_fmt_rate(k->flops_total, "FLOP/s", v1,
	              sizeof(v1)), k->flops_estimated ? ", estimated from pipe use" : "",
	              ga_roof_prec_name(k->prec), ga_fmt_value(k->x_intensity, v2, sizeof(v2)),
	              ga_roof_level_name(k->placed_by), ga_fmt_pct(k->roof_frac, 0, v3, sizeof(v3)),
	              ga_fmt_pct(an->groups[i].share, 1, v1, sizeof(v1)),
	              ga_roof_verdict_name(k->verdict));
	ga_buf_puts(b, "</title>");
}

static void dots(ga_buf *b, const ga_analysis *an, const ga_roofline *r, const axes *a,
                 boxes *bs)
{
	/* the dots first, so that no letter covers one */
	for (size_t i = 0; i < r->n; i++) {
		const ga_roof_kernel *k = &r->kernels[i];
		if (k->verdict == GA_ROOF_NOT_PLACED || !ga_roof_label(i))
			continue;
		double x = sx(a, k->x_intensity), y = sy(a, k->flops_total);
		take(bs, (box){ x - 6, y - 6, x + 6, y + 6 });
	}
	for (size_t i = 0; i < r->n; i++) {
		const ga_roof_kernel *k = &r->kernels[i];
		char label = ga_roof_label(i);
		double lx, ly;
		int lead;
		if (k->verdict == GA_ROOF_NOT_PLACED || !label)
			continue;
		double x = sx(a, k->x_intensity), y = sy(a, k->flops_total);
		take(bs, place_label(bs, x, y, &lx, &ly, &lead));
		ga_buf_printf(b, "<g class=\"k %s\" data-k=\"%c\">", ga_report_class(an->groups[i].klass),
		              label);
		if (lead)
			ga_buf_printf(b, "<line class=\"lead\" x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" "
			              "y2=\"%.1f\"/>", x, y, lx + 4.5, ly - 5);
		ga_buf_printf(b, "<circle%s cx=\"%.1f\" cy=\"%.1f\" r=\"6\">",
		              k->flops_estimated ? " class=\"est\"" : "", x, y);
		dot_title(b, an, k, i, label);
		ga_buf_printf(b, "</circle><text x=\"%.1f\" y=\"%.1f\">%c</text></g>\n", lx, ly, label);
	}
}

/* Beside the chart: each letter in its class's colour, the kernel, its
 * class and the level that placed it when not DRAM. */
static void legend(ga_buf *b, const ga_analysis *an, const ga_roofline *r)
{
	ga_buf_puts(b, "<ol class=\"legend\">\n");
	for (size_t i = 0; i < r->n; i++) {
		const ga_roof_kernel *k = &r->kernels[i];
		char label = ga_roof_label(i);
		if (k->verdict == GA_ROOF_NOT_PLACED || !label)
			continue;
		char *name = ga_short_name(kname(&an->groups[i]), 48);
		ga_buf_printf(b, "<li><span class=\"sw %s\">%c</span> <code>",
		              ga_report_class(an->groups[i].klass), label);
		ht_esc(b, name);
		ga_buf_printf(b, "</code> %s%s</li>\n", ga_report_class(an->groups[i].klass),
		              k->placed_by != GA_ROOF_DRAM ? k->placed_by == GA_ROOF_L2 ? ", at L2"
		                                                                        : ", at L1"
		                                           : "");
		free(name);
	}
	ga_buf_puts(b, "</ol>\n");
}

/* The chart's extent in decades: the placed kernels and the drawn roofs'
 * peaks and ridges, with a small margin, not rounded out to whole decades
 * as the terminal chart's (ga_roof_axes) are.  -1 when nothing is placed. */
static int html_axes(const ga_roofline *r, axes *a)
{
	double xl = INFINITY, xh = -INFINITY, yl = INFINITY, yh = -INFINITY;
	for (size_t i = 0; i < r->n; i++) {
		const ga_roof_kernel *k = &r->kernels[i];
		if (k->verdict == GA_ROOF_NOT_PLACED || !(k->x_intensity > 0) ||
		    !(k->flops_total > 0))
			continue;
		xl = fmin(xl, log10(k->x_intensity));
		xh = fmax(xh, log10(k->x_intensity));
		yl = fmin(yl, log10(k->flops_total));
		yh = fmax(yh, log10(k->flops_total));
	}
	if (!isfinite(xl))
		return -1;
	for (int p = 0; p < GA_ROOF__PREC; p++)
		if (ga_roof_prec_drawn(r, (ga_roof_prec)p)) {
			xh = fmax(xh, log10(r->peaks.ridge[p]));
			yh = fmax(yh, log10(r->peaks.flops[p]));
		}
	a->x0 = xl - 0.3;
	a->x1 = xh + 0.3;
	a->y0 = yl - 0.3;
	a->y1 = yh + 0.15;
	return 0;
}

static void chart(ga_buf *b, const ga_analysis *an, const ga_roofline *r)
{
	axes a;
	boxes *bs = ga_xcalloc(1, sizeof(*bs));
	char v[64];
	ga_buf_puts(b, "<h2>Roofline</h2>\n");
	if (html_axes(r, &a) != 0) {
		ga_buf_puts(b, "<p>No kernel could be placed: the profile lacks FLOP counts, bytes "
		            "or peaks.</p>\n");
		free(bs);
		return;
	}
	ga_buf_printf(b, "<div class=\"chart\"><svg width=\"%d\" height=\"%d\" "
	              "viewBox=\"0 0 %d %d\" role=\"img\" aria-label=\"roofline\">\n", SVG_W,
	              SVG_H, SVG_W, SVG_H);
	grid(b, &a, bs, ga_roof_placed_off_dram(r));
	flat_roofs(b, r, &a, bs);
	slopes(b, r, &a, bs);
	dots(b, an, r, &a, bs);
	free(bs);
	ga_buf_puts(b, "</svg>\n");
	legend(b, an, r);
	ga_buf_puts(b, "</div>\n<p class=\"peaks\">Peaks:");
	for (int p = 0; p < GA_ROOF__PREC; p++)
		if (isfinite(r->peaks.flops[p]))
			ga_buf_printf(b, " %s %s (%s);", ga_roof_prec_name((ga_roof_prec)p),
			              ga_fmt_rate(r->peaks.flops[p], "FLOP/s", v, sizeof(v)),
			              ga_peak_source_name(r->peaks.flops_src[p]));
	for (int l = 0; l < GA_ROOF__LEVELS; l++)
		if (isfinite(r->peaks.bw[l]))
			ga_buf_printf(b, " %s %s (%s);", ga_roof_level_name((ga_roof_level)l),
			              ga_fmt_rate(r->peaks.bw[l], "B/s", v, sizeof(v)),
			              ga_peak_source_name(r->peaks.bw_src[l]));
	ga_buf_puts(b, " counters: recorded in the profile; table: gpuadvise's figures for this "
	            "compute capability. Tensor work is estimated from tensor-pipe "
	            "utilisation; a hollow dot's FP32 and FP64 work from FMA- and FP64-pipe "
	            "utilisation (no FLOP counts in the profile: an upper bound). A kernel with "
	            "almost no DRAM traffic is placed by its intensity at L2 or L1.</p>\n");
}

/* ---- "What to do first" ------------------------------------------------------
 *
 * The analysis's one ranking (ga_analysis.first), as the text report shows
 * it: with timelines the program findings, the framework actions and the
 * kernel findings by the wall time they save; without, the kernel findings
 * by GPU time or, when library kernels hold most of it, the framework
 * actions and then the findings on the user's own kernels.  Every entry
 * carries its rule's model and fix. */

#define ACTION_KERNELS 3   /* kernels named in an action's line; the rest folded */
#define ACTION_OPS 3       /* operations named in an action's line */

/* "~27" or "<1" (escaped) and the percent sign. */
static void saving_pct(ga_buf *b, double frac)
{
	char p[32];
	ga_fmt_pct(frac, 0, p, sizeof(p));
	ht_esc(b, p[0] == '<' ? "" : "~");
	ht_esc(b, p);
	ga_buf_putc(b, '%');
}

/* A kernel in an action's list: its short name (the full one on hover),
 * " #n" when others read the same, and its owner when not the user. */
static void kernel_ref(ga_buf *b, const ga_group *g)
{
	char *name = ga_short_name(kname(g), 48);
	ga_buf_puts(b, "<code title=\"");
	ht_esc(b, kname(g));
	ga_buf_puts(b, "\">");
	ht_esc(b, name);
	ga_buf_puts(b, "</code>");
	free(name);
	if (g->name_peers > 1)
		ga_buf_printf(b, " #%zu", g->name_index);
	if (g->owner && strcmp(g->owner->name, GA_OWNER_DEFAULT) != 0 && g->owner->display) {
		ga_buf_puts(b, " (");
		ht_esc(b, g->owner->display);
		ga_buf_puts(b, ")");
	}
}

static void finding_entry(ga_buf *b, const ga_analysis *a, const ga_finding *f, const ga_do *d)
{
	const ga_rule *r = f->rule;
	const ga_group *g = f->group < a->n_groups ? &a->groups[f->group] : NULL;
	char b1[64], fr[160];
	ga_figures x;

	ga_finding_figures(f, d, &x);
	ga_buf_puts(b, "<li><b>");
	ht_esc(b, r && r->title ? r->title : r && r->id ? r->id : "?");
	ga_buf_puts(b, "</b> in <code>");
	ht_esc(b, g ? kname(g) : "?");
	ga_buf_puts(b, "</code>");
	if (g && g->owner && strcmp(g->owner->name, GA_OWNER_DEFAULT) != 0 && g->owner->display) {
		ga_buf_puts(b, " (");
		ht_esc(b, g->owner->display);
		ga_buf_puts(b, ")");
	}
	ga_buf_puts(b, "<br>");
	if (r)
		ht_severity_tag(b, r->severity);
	if (x.shapes > 1)
		ga_buf_printf(b, "on %zu launch shapes: ", x.shapes);
	if (f->estimate_missing) {
		ga_buf_puts(b, "estimate needs <code>");
		ht_esc(b, f->estimate_missing);
		ga_buf_puts(b, "</code>");
	} else {
		ga_buf_puts(b, "saves ");
		if (a->wall_currency && isfinite(x.wall_saving)) {
			saving_pct(b, x.wall_saving);
			ga_buf_puts(b, " of wall time (");
			saving_pct(b, x.saving);
			ga_buf_puts(b, " of GPU time)");
		} else {
			saving_pct(b, x.saving);
			ga_buf_puts(b, " of GPU time");
		}
		ga_buf_printf(b, ", estimated %s", ga_fmt_speedup(x.speedup, b1, sizeof(b1)));
		if (r)
			ga_buf_printf(b, ", fix %s", ga_fmt_fix_range(x.speedup_min, x.speedup_max,
			                                               fr, sizeof(fr)));
	}
	ga_buf_printf(b, "; %s-bound", ga_report_class(g ? g->klass : GA_CLASS_NONE));
	ht_evidence(b, f->evidence, f->n_evidence);
	ht_on_ranks(b, a, d);
	ht_rule_notes(b, r);
	ga_buf_puts(b, "</li>\n");
}

/* The operations an action's kernels ran in, by their time there. */
static void action_ops(ga_buf *b, const ga_analysis *a, const ga_action *ac)
{
	size_t named = ac->n_ops < ACTION_OPS ? ac->n_ops : ACTION_OPS;

	if (!ac->n_ops)
		return;
	ga_buf_puts(b, ac->n_ops == 1 ? "<br>in operation" : "<br>in operations");
	for (size_t k = 0; k < named; k++) {
		ga_buf_puts(b, k ? ", <code>" : " <code>");
		ht_esc(b, a->ops[ac->ops[k].op].name);
		ga_buf_puts(b, "</code>");
	}
	if (named < ac->n_ops)
		ga_buf_printf(b, " and %zu more", ac->n_ops - named);
}

/* A framework-level action: its title, the time it saves and the kernels
 * it covers, by saving (all of them folded below the first few). */
static void action_entry(ga_buf *b, const ga_analysis *a, const ga_action *ac, const ga_do *d)
{
	const ga_rule *r = ac->rule;
	char p[32];
	size_t named = ac->n_findings < ACTION_KERNELS ? ac->n_findings : ACTION_KERNELS;

	ga_buf_puts(b, "<li><b>");
	ht_esc(b, r->title ? r->title : r->id);
	ga_buf_puts(b, "</b><br>");
	ht_severity_tag(b, r->severity);
	ga_buf_puts(b, "saves ");
	if (a->wall_currency) {
		saving_pct(b, ac->wall_saving);
		ga_buf_puts(b, " of wall time (");
		saving_pct(b, ac->saving);
		ga_buf_puts(b, " of GPU time)");
	} else {
		saving_pct(b, ac->saving);
		ga_buf_puts(b, " of GPU time");
	}
	ga_buf_puts(b, " (");
	ht_esc(b, r->id);
	ga_buf_puts(b, ") in ");
	ga_buf_printf(b, "%zu %s holding ", ac->n_findings, ga_plural(ac->n_findings, "kernel", "kernels"));
	ht_esc(b, ga_fmt_pct(ac->share, 0, p, sizeof(p)));
	ga_buf_puts(b, "%:");
	for (size_t k = 0; k < named; k++) {
		ga_buf_puts(b, k ? ", " : " ");
		kernel_ref(b, &a->groups[a->findings[ac->findings[k]].group]);
	}
	if (named < ac->n_findings)
		ga_buf_printf(b, " and %zu more", ac->n_findings - named);
	action_ops(b, a, ac);
	if (named < ac->n_findings) {
		ga_buf_printf(b, "<details><summary>all %zu kernels</summary><ol>", ac->n_findings);
		for (size_t k = 0; k < ac->n_findings; k++) {
			const ga_finding *f = &a->findings[ac->findings[k]];
			ga_buf_puts(b, "<li>");
			kernel_ref(b, &a->groups[f->group]);
			ga_buf_puts(b, ": saves ");
			saving_pct(b, f->saving);
			ga_buf_puts(b, " of GPU time</li>");
		}
		ga_buf_puts(b, "</ol></details>");
	}
	ht_on_ranks(b, a, d);
	ht_rule_notes(b, r);
	ga_buf_puts(b, "</li>\n");
}

static void what_to_do_first(ga_buf *b, const ga_analysis *a)
{
	/* without timelines, library kernels holding most of the GPU time: the
	 * user's own kernels' findings follow the actions, as in text */
	int own_after = !a->wall_currency && a->framework_first;
	size_t own = 0;
	char p[32];

	ga_buf_puts(b, "<h2>What to do first</h2>\n");
	for (size_t i = 0; own_after && i < a->n_findings; i++)
		own += !a->findings[i].rule->n_owners;
	if (own_after)
		ga_buf_printf(b, "<p>%s%% of the GPU time is in library kernels (the report names "
		              "each one's owner): change how the framework runs them.</p>\n",
		              ga_fmt_pct(a->library_share, 0, p, sizeof(p)));
	if (!a->n_first && !own) {
		ga_buf_puts(b, a->wall_currency ? "<p>No findings: neither the timeline nor any "
		                                  "kernel crosses the rules' thresholds.</p>\n"
		                                : "<p>No findings: every kernel is below the rules' "
		                                  "thresholds.</p>\n");
		return;
	}
	ga_buf_puts(b, "<ol class=\"findings\">\n");
	for (size_t i = 0; i < a->n_first; i++) {
		const ga_do *d = &a->first[i];
		if (d->kind == GA_DO_PROGRAM)
			ht_program_entry(b, a, &a->pfindings[d->index], d);
		else if (d->kind == GA_DO_ACTION)
			action_entry(b, a, &a->actions[d->index], d);
		else
			finding_entry(b, a, &a->findings[d->index], d);
	}
	for (size_t i = 0; own && i < a->n_findings; i++)
		if (!a->findings[i].rule->n_owners)
			finding_entry(b, a, &a->findings[i], NULL);
	ga_buf_puts(b, "</ol>\n");
}

/* ---- kernels ------------------------------------------------------------------ */

/* A kernel of many launch shapes is one row: its largest shape's, with
 * the sums of all of them. */
static void kernel_row(ga_buf *b, const ga_analysis *a, size_t i, const ga_roof_kernel *k)
{
	const ga_group *g = &a->groups[i];
	/* one buffer per value printed by one call: the share and the
	 * theoretical occupancy once shared one, which printed the share as
	 * both ("98.4 % of 38.7 %") */
	char share[64], time[64], achieved[64], theoretical[64], rate[64];
	char label = k->verdict != GA_ROOF_NOT_PLACED ? ga_roof_label(i) : 0;
	ga_buf_printf(b, "<tr><td>%c</td><td><code>", label ? label : '-');
	ht_esc(b, kname(g));
	ga_buf_puts(b, "</code>");
	if (ga_report_folded(g)) {
		ga_kernel_sums all;
		char s1[64], s2[64];
		ga_kernel_sum_shapes(a, i, &all);
		ga_buf_printf(b, "<br>the largest of %zu launch shapes; all of them: %s%% of GPU "
		              "time, %s", g->kernel_shapes, ga_fmt_pct(all.share, 1, s1, sizeof(s1)),
		              ga_fmt_duration(all.total_ns, s2, sizeof(s2)));
	}
	ga_buf_printf(b, "</td><td class=\"%s\">%s</td><td>%s%%</td><td>%s</td>"
	              "<td class=\"occ\">%s%% of %s%%", ga_report_class(g->klass),
	              ga_report_class(g->klass), ga_fmt_pct(g->share, 1, share, sizeof(share)),
	              ga_fmt_duration(g->total_ns, time, sizeof(time)),
	              ga_fmt_value(k->occ_achieved_pct, achieved, sizeof(achieved)),
	              ga_fmt_value(k->occ_theoretical_pct, theoretical, sizeof(theoretical)));
	if (k->occ_limiter)
		ga_buf_printf(b, " (%s)", k->occ_limiter);
	ga_buf_printf(b, "</td><td>%s</td><td>%s</td><td>%s%s</td><td>",
	              ga_roof_verdict_name(k->verdict),
	              label ? ga_roof_level_name(k->placed_by) : "-",
	              ga_fmt_rate(k->flops_total, "FLOP/s", rate, sizeof(rate)),
	              k->flops_estimated && label ? " (estimated)" : "");
	if (k->agrees == 0)
		ga_buf_puts(b, "<b>disagrees:</b> ");
	ht_esc(b, k->reason ? k->reason : k->agrees == 1 ? "agrees" : "");
	ga_buf_puts(b, "</td></tr>\n");
}

static void kernel_table(ga_buf *b, const ga_analysis *a, const ga_roofline *r)
{
	ga_buf_puts(b, "<h2>Kernels</h2>\n<table>\n<tr><th></th><th>kernel</th><th>class</th>"
	            "<th>share</th><th>GPU time</th><th>occupancy (achieved of theoretical, "
	            "limiter)</th><th>roofline</th><th>placed by</th><th>FLOP/s</th>"
	            "<th>roofline vs class</th>"
	            "</tr>\n");
	for (size_t i = 0; i < a->n_groups && i < r->n; i++)
		if (!ga_report_folded(&a->groups[i]) || a->groups[i].kernel_first == i)
			kernel_row(b, a, i, &r->kernels[i]);
	ga_buf_puts(b, "</table>\n");
}

/* With --baseline: the findings gone from kernels that got faster, each
 * with what it predicted and what the fix measured (baseline.c). */
static void predictions(ga_buf *b, const ga_comparison *c)
{
	size_t shown = 0;
	for (size_t i = 0; c && i < c->n_kernels; i++) {
		const ga_kernel_change *k = &c->kernels[i];
		for (size_t j = 0; k->cur != GA_NO_GROUP && j < k->n_removed; j++) {
			char *pred = ga_prediction_text(k->removed[j].rule, &k->removed[j].check);
			if (!pred)
				continue;
			if (shown++ == 0)
				ga_buf_puts(b, "<h2>Predicted against measured</h2>\n<p>Findings of the "
				               "baseline gone from kernels that got faster:</p>\n<ul>\n");
			ga_buf_puts(b, "<li><code>");
			const ga_group *g = &c->cur->groups[k->cur];
			ht_esc(b, g->name ? g->name : g->mangled);
			ga_buf_puts(b, "</code>: ");
			ht_esc(b, pred);
			ga_buf_puts(b, "</li>\n");
			free(pred);
		}
	}
	if (shown)
		ga_buf_puts(b, "</ul>\n");
}

static const char css[] =
	"body{font-family:sans-serif;margin:2em;color:#222;max-width:1400px}"
	"code{font-size:90%}table{border-collapse:collapse}"
	"td,th{border:1px solid #ccc;padding:4px 8px;text-align:left;vertical-align:top}"
	".chart{display:flex;gap:1em;align-items:flex-start}"
	"svg{background:#fff;border:1px solid #ccc;flex:none}svg text{font-size:12px;fill:#333}"
	".legend{list-style:none;padding:0;margin:0;font-size:12px;max-height:540px;"
	"overflow-y:auto}.legend li{margin:0 0 2px}"
	".sw{display:inline-block;width:1.4em;text-align:center;color:#fff;font-weight:bold;"
	"background:#777}.sw.memory{background:#2c6fbb}.sw.compute{background:#c0392b}"
	".sw.latency{background:#8e44ad}.sw.divergence{background:#d35400}"
	".grid{stroke:#eee}.roof{stroke:#c0392b;stroke-width:2}"
	".slope{stroke:#2c6fbb;stroke-width:2}.slopelabel{fill:#2c6fbb}"
	".ridge{fill:#c0392b}.k circle{stroke:#000}.k.memory circle{fill:#2c6fbb}"
	".k.compute circle{fill:#c0392b}.k.latency circle{fill:#8e44ad}"
	".k.divergence circle{fill:#d35400}.k circle{fill:#777}"
	".k text{font-weight:bold;font-size:14px}"
	".banner{border:2px solid #b8860b;padding:.5em;background:#fff8e1}"
	"td.compute{color:#c0392b}td.memory{color:#2c6fbb}td.latency{color:#8e44ad}"
	"td.divergence{color:#d35400}"
	/* after the class colours: an estimated dot is hollow, ringed in its
	 * class's colour */
	".lead{stroke:#999}.k circle.est{fill:#fff;stroke-width:2}"
	".k.memory circle.est{stroke:#2c6fbb}.k.compute circle.est{stroke:#c0392b}"
	".k.latency circle.est{stroke:#8e44ad}.k.divergence circle.est{stroke:#d35400}";

int ga_report_html(FILE *out, const ga_analysis *a, const ga_ruleset *rs, const ga_report_opts *o)
{
	ga_buf b = { 0 };
	const ga_roofline *r = &a->roofline;
	char d[32];
	(void)rs;
	ga_buf_printf(&b, "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n"
	              "<title>gpuadvise report</title>\n<style>%s%s</style>\n</head>\n<body>\n"
	              "<h1>gpuadvise report</h1>\n<p>", css, ht_timeline_css);
	if (a->profile) {
		char *dev = ga_device_label(&a->profile->device);
		ht_esc(&b, dev);
		free(dev);
		ga_buf_puts(&b, ": ");
	}
	ga_buf_printf(&b, "%zu kernels, %s GPU time.</p>\n", a->n_groups,
	              ga_fmt_duration(a->total_ns, d, sizeof(d)));
	if (o && o->recorded_label) {
		ga_buf_puts(&b, "<p class=\"banner\">RECORDED PROFILE: ");
		ht_esc(&b, o->recorded_label);
		ga_buf_puts(&b, "</p>\n");
	}
	if (a->profile && a->profile->collection.note) {
		ga_buf_puts(&b, "<p class=\"banner\">");
		ht_esc(&b, a->profile->collection.note);
		ga_buf_puts(&b, "</p>\n");
	}
	chart(&b, a, r);
	ht_ranks(&b, a);
	ht_timeline(&b, a);
	what_to_do_first(&b, a);
	predictions(&b, o ? o->baseline : NULL);
	kernel_table(&b, a, r);
	ga_buf_puts(&b, "</body>\n</html>\n");
	/* Controls and bidirectional overrides from the profile: visible (safe.c). */
	int rc = ga_report_put_safe(out, b.s, b.len, 0) == 0 && fflush(out) == 0 &&
	         !ferror(out) ? 0 : -1;
	ga_buf_free(&b);
	return rc;
}
