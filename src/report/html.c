/* html.c: one self-contained HTML page: the roofline as inline SVG, the
 * ranked findings and the kernel table.  Inline CSS, no scripts, no
 * external references of any kind, so the page reads the same offline and
 * as a CI artifact.  Every string from the profile or the rules is escaped. */
#include "report.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#define SVG_W 900
#define SVG_H 540
#define PAD_L 80
#define PAD_R 80
#define PAD_T 20
#define PAD_B 60

static void esc(ga_buf *b, const char *s)
{
	for (; s && *s; s++) {
		switch (*s) {
		case '&': ga_buf_puts(b, "&amp;"); break;
		case '<': ga_buf_puts(b, "&lt;"); break;
		case '>': ga_buf_puts(b, "&gt;"); break;
		case '"': ga_buf_puts(b, "&quot;"); break;
		case '\'': ga_buf_puts(b, "&#39;"); break;
		default: ga_buf_putc(b, *s);
		}
	}
}

static const char *kname(const ga_group *g)
{
	return g->name ? g->name : g->mangled ? g->mangled : "?";
}

/* ---- the SVG chart --------------------------------------------------------- */

typedef struct {
	double x0, x1, y0, y1;   /* decades */
} axes;

static double sx(const axes *a, double v)
{
	return PAD_L + (log10(v) - a->x0) / (a->x1 - a->x0) * (SVG_W - PAD_L - PAD_R);
}

static double sy(const axes *a, double v)
{
	return PAD_T + (a->y1 - log10(v)) / (a->y1 - a->y0) * (SVG_H - PAD_T - PAD_B);
}

static void grid(ga_buf *b, const axes *a)
{
	char v[64];
	for (int d = (int)a->x0; d <= (int)a->x1; d++) {
		double x = sx(a, pow(10, d));
		ga_buf_printf(b, "<line class=\"grid\" x1=\"%.1f\" y1=\"%d\" x2=\"%.1f\" y2=\"%d\"/>"
		              "<text x=\"%.1f\" y=\"%d\" text-anchor=\"middle\">%g</text>\n", x, PAD_T,
		              x, SVG_H - PAD_B, x, SVG_H - PAD_B + 18, pow(10, d));
	}
	for (int d = (int)a->y0; d <= (int)a->y1; d++) {
		double y = sy(a, pow(10, d));
		ga_buf_printf(b, "<line class=\"grid\" x1=\"%d\" y1=\"%.1f\" x2=\"%d\" y2=\"%.1f\"/>"
		              "<text x=\"%d\" y=\"%.1f\" text-anchor=\"end\">%s</text>\n", PAD_L, y,
		              SVG_W - PAD_R, y, PAD_L - 6, y + 4,
		              ga_fmt_rate(pow(10, d), "FLOP/s", v, sizeof(v)));
	}
	ga_buf_printf(b, "<text x=\"%d\" y=\"%d\" text-anchor=\"middle\">arithmetic intensity, "
	              "FLOP/byte at DRAM</text>\n", (SVG_W + PAD_L - PAD_R) / 2, SVG_H - 12);
}

static void roofs(ga_buf *b, const ga_roofline *r, const axes *a)
{
	const ga_roof_peaks *pk = &r->peaks;
	double top = 0, xmax = pow(10, a->x1), xmin = pow(10, a->x0);
	char v[64];
	for (int p = 0; p < GA_ROOF__PREC; p++) {
		if (!ga_roof_prec_drawn(r, (ga_roof_prec)p))
			continue;
		double ridge = pk->ridge[p];
		top = fmax(top, pk->flops[p]);
		ga_buf_printf(b, "<line class=\"roof\" x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" "
		              "y2=\"%.1f\"/><text x=\"%d\" y=\"%.1f\">%s</text>\n", sx(a, ridge),
		              sy(a, pk->flops[p]), sx(a, xmax), sy(a, pk->flops[p]), SVG_W - PAD_R + 4,
		              sy(a, pk->flops[p]) + 4, ga_roof_prec_name((ga_roof_prec)p));
		ga_buf_printf(b, "<circle class=\"ridge\" cx=\"%.1f\" cy=\"%.1f\" r=\"4\"><title>%s "
		              "ridge at DRAM: %s FLOP/byte</title></circle>\n", sx(a, ridge),
		              sy(a, pk->flops[p]), ga_roof_prec_name((ga_roof_prec)p),
		              ga_fmt_value(ridge, v, sizeof(v)));
	}
	for (int l = 0; l < GA_ROOF__LEVELS; l++) {
		if (!isfinite(pk->bw[l]))
			continue;
		/* from the left edge (or the bottom) up to the highest flat roof,
		 * named at its lower end, where the slopes are furthest apart */
		double xa = fmax(xmin, pow(10, a->y0) / pk->bw[l]), xb = fmin(xmax, top / pk->bw[l]);
		ga_buf_printf(b, "<line class=\"slope\" x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" "
		              "y2=\"%.1f\"/><text class=\"slopelabel\" x=\"%.1f\" y=\"%.1f\">%s "
		              "%s</text>\n", sx(a, xa), sy(a, xa * pk->bw[l]), sx(a, xb),
		              sy(a, xb * pk->bw[l]), sx(a, xa) + 4, sy(a, xa * pk->bw[l]) - 6,
		              ga_roof_level_name((ga_roof_level)l),
		              ga_fmt_rate(pk->bw[l], "B/s", v, sizeof(v)));
	}
}

static void dots(ga_buf *b, const ga_analysis *an, const ga_roofline *r, const axes *a)
{
	char v1[64], v2[64];
	for (size_t i = 0; i < r->n; i++) {
		const ga_roof_kernel *k = &r->kernels[i];
		char label = ga_roof_label(i);
		if (k->verdict == GA_ROOF_NOT_PLACED || !label)
			continue;
		double x = sx(a, k->intensity[GA_ROOF_DRAM]), y = sy(a, k->flops_total);
		ga_buf_printf(b, "<g class=\"k %s\"><circle cx=\"%.1f\" cy=\"%.1f\" r=\"6\"/>"
		              "<text x=\"%.1f\" y=\"%.1f\">%c</text><title>%c ",
		              ga_roof_verdict_name(k->verdict), x, y, x + 8, y - 8, label, label);
		esc(b, kname(&an->groups[i]));
		ga_buf_printf(b, ": %s at %s FLOP/byte, %s side</title></g>\n",
		              ga_fmt_rate(k->flops_total, "FLOP/s", v1, sizeof(v1)),
		              ga_fmt_value(k->intensity[GA_ROOF_DRAM], v2, sizeof(v2)),
		              ga_roof_verdict_name(k->verdict));
	}
}

static void chart(ga_buf *b, const ga_analysis *an, const ga_roofline *r)
{
	axes a;
	char v[64];
	ga_buf_puts(b, "<h2>Roofline</h2>\n");
	if (ga_roof_axes(r, &a.x0, &a.x1, &a.y0, &a.y1) != 0) {
		ga_buf_puts(b, "<p>No kernel could be placed: the profile lacks FLOP counts, bytes "
		            "or peaks.</p>\n");
		return;
	}
	ga_buf_printf(b, "<svg width=\"%d\" height=\"%d\" "
	              "viewBox=\"0 0 %d %d\" role=\"img\" aria-label=\"roofline\">\n", SVG_W,
	              SVG_H, SVG_W, SVG_H);
	grid(b, &a);
	roofs(b, r, &a);
	dots(b, an, r, &a);
	ga_buf_puts(b, "</svg>\n<p class=\"peaks\">Peaks:");
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
	            "utilisation.</p>\n");
}

/* ---- findings and kernels -------------------------------------------------- */

static void findings(ga_buf *b, const ga_analysis *a)
{
	char p[32];
	ga_buf_puts(b, "<h2>What to do first</h2>\n");
	if (a->n_findings == 0) {
		ga_buf_puts(b, "<p>No findings.</p>\n");
		return;
	}
	ga_buf_puts(b, "<ol class=\"findings\">\n");
	for (size_t i = 0; i < a->n_findings; i++) {
		const ga_finding *f = &a->findings[i];
		const ga_group *g = f->group < a->n_groups ? &a->groups[f->group] : NULL;
		ga_buf_puts(b, "<li><b>");
		esc(b, f->rule ? f->rule->title : "?");
		ga_buf_puts(b, "</b> in <code>");
		esc(b, g ? kname(g) : "?");
		ga_buf_printf(b, "</code><br>saves ~%s%% of total GPU time; %s, %s severity",
		              ga_fmt_pct(f->saving, 0, p, sizeof(p)),
		              ga_report_class(f->rule ? f->rule->klass : GA_CLASS_NONE),
		              ga_report_severity(f->rule ? f->rule->severity : (ga_severity)-1));
		if (f->rule && f->rule->fix) {
			ga_buf_puts(b, "<p>");
			esc(b, f->rule->fix);
			ga_buf_puts(b, "</p>");
		}
		ga_buf_puts(b, "</li>\n");
	}
	ga_buf_puts(b, "</ol>\n");
}

static void kernel_row(ga_buf *b, const ga_group *g, const ga_roof_kernel *k, size_t i)
{
	char v1[64], v2[64], v3[64];
	char label = k->verdict != GA_ROOF_NOT_PLACED ? ga_roof_label(i) : 0;
	ga_buf_printf(b, "<tr><td>%c</td><td><code>", label ? label : '-');
	esc(b, kname(g));
	ga_buf_printf(b, "</code></td><td class=\"%s\">%s</td><td>%s%%</td><td>%s</td>"
	              "<td>%s%% of %s%%", ga_report_class(g->klass), ga_report_class(g->klass),
	              ga_fmt_pct(g->share, 1, v1, sizeof(v1)),
	              ga_fmt_duration(g->total_ns, v2, sizeof(v2)),
	              ga_fmt_value(k->occ_achieved_pct, v3, sizeof(v3)),
	              ga_fmt_value(k->occ_theoretical_pct, v1, sizeof(v1)));
	if (k->occ_limiter)
		ga_buf_printf(b, " (%s)", k->occ_limiter);
	ga_buf_printf(b, "</td><td>%s</td><td>%s</td><td>", ga_roof_verdict_name(k->verdict),
	              ga_fmt_rate(k->flops_total, "FLOP/s", v2, sizeof(v2)));
	if (k->agrees == 0)
		ga_buf_puts(b, "<b>disagrees:</b> ");
	esc(b, k->reason ? k->reason : k->agrees == 1 ? "agrees" : "");
	ga_buf_puts(b, "</td></tr>\n");
}

static void kernel_table(ga_buf *b, const ga_analysis *a, const ga_roofline *r)
{
	ga_buf_puts(b, "<h2>Kernels</h2>\n<table>\n<tr><th></th><th>kernel</th><th>class</th>"
	            "<th>share</th><th>GPU time</th><th>occupancy (achieved of theoretical, "
	            "limiter)</th><th>roofline</th><th>FLOP/s</th><th>roofline vs class</th>"
	            "</tr>\n");
	for (size_t i = 0; i < a->n_groups && i < r->n; i++)
		kernel_row(b, &a->groups[i], &r->kernels[i], i);
	ga_buf_puts(b, "</table>\n");
}

static const char css[] =
	"body{font-family:sans-serif;margin:2em;color:#222;max-width:1100px}"
	"code{font-size:90%}table{border-collapse:collapse}"
	"td,th{border:1px solid #ccc;padding:4px 8px;text-align:left;vertical-align:top}"
	"svg{background:#fff;border:1px solid #ccc}svg text{font-size:12px;fill:#333}"
	".grid{stroke:#eee}.roof{stroke:#c0392b;stroke-width:2}"
	".slope{stroke:#2c6fbb;stroke-width:2}.slopelabel{fill:#2c6fbb}"
	".ridge{fill:#c0392b}.k circle{stroke:#000}.k.memory circle{fill:#2c6fbb}"
	".k.compute circle{fill:#c0392b}.k text{font-weight:bold;font-size:14px}"
	".banner{border:2px solid #b8860b;padding:.5em;background:#fff8e1}"
	"td.compute{color:#c0392b}td.memory{color:#2c6fbb}";

int ga_report_html(FILE *out, const ga_analysis *a, const ga_ruleset *rs, const ga_report_opts *o)
{
	ga_buf b = { 0 };
	const ga_roofline *r = &a->roofline;
	char d[32];
	(void)rs;
	ga_buf_printf(&b, "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n"
	              "<title>gpuadvise report</title>\n<style>%s</style>\n</head>\n<body>\n"
	              "<h1>gpuadvise report</h1>\n<p>", css);
	if (a->profile) {
		char *dev = ga_device_label(&a->profile->device);
		esc(&b, dev);
		free(dev);
		ga_buf_puts(&b, ": ");
	}
	ga_buf_printf(&b, "%zu kernels, %s GPU time.</p>\n", a->n_groups,
	              ga_fmt_duration(a->total_ns, d, sizeof(d)));
	if (o && o->recorded_label) {
		ga_buf_puts(&b, "<p class=\"banner\">RECORDED PROFILE: ");
		esc(&b, o->recorded_label);
		ga_buf_puts(&b, "</p>\n");
	}
	if (a->profile && a->profile->collection.note) {
		ga_buf_puts(&b, "<p class=\"banner\">");
		esc(&b, a->profile->collection.note);
		ga_buf_puts(&b, "</p>\n");
	}
	chart(&b, a, r);
	findings(&b, a);
	kernel_table(&b, a, r);
	ga_buf_puts(&b, "</body>\n</html>\n");
	/* Controls and bidirectional overrides from the profile: visible (safe.c). */
	int rc = ga_report_put_safe(out, b.s, b.len, 0) == 0 && fflush(out) == 0 &&
	         !ferror(out) ? 0 : -1;
	ga_buf_free(&b);
	return rc;
}
