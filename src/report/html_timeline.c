/* html_timeline.c: the HTML report's Timeline section and the pieces of a
 * "What to do first" entry (html.h).
 *
 * Per process, the text report's figures (text_timeline.c, same wording):
 * wall time, GPU busy and idle by what the host was doing, copies per
 * direction, host calls, the loop's iteration; a bar of where the wall time
 * went; and a strip chart of the representative iteration as inline SVG:
 * one row for the host's CUDA calls (and the profiler's own spans, left
 * out of every figure), one per device and stream for the GPU's kernels,
 * copies and sets, coloured by kind, with a time axis in ms and a legend.
 * Each interval has a <title> (the kernel's name, the duration) that a
 * browser shows on hover, so the page needs no script.  At most
 * STRIP_MAX_DRAWN intervals are drawn, the longest, and STRIP_MAX_ROWS GPU
 * rows; the chart says what it left out.  Formatting only: the figures are
 * ga_tl_proc's (program.c). */
#include "html.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#define STRIP_MAX_DRAWN 4000  /* intervals drawn per chart */
#define STRIP_MAX_ROWS 24     /* device and stream rows per chart */
#define STRIP_W 1000          /* the SVG's width */
#define LABEL_W 130           /* the row labels' column */
#define PLOT_W (STRIP_W - LABEL_W - 20)
#define ROW_H 16
#define ROW_GAP 4
#define AXIS_H 34
#define BAR_H 22

const char ht_timeline_css[] =
	".tl{margin:.3em 0 .6em}.tl li{margin:0 0 2px}"
	".sev-high{color:#c0392b;font-weight:bold}.sev-medium{color:#b8860b}"
	".sev-low{color:#27ae60}"
	"svg.strip{border:1px solid #ccc;background:#fff}svg.strip text{font-size:11px;fill:#333}"
	".strip .row{fill:#f4f4f4}.strip .tick{stroke:#ddd}.strip .axis{stroke:#999}"
	".key{font-size:12px;margin:.3em 0 1em}.key span.k{margin-right:1em;white-space:nowrap}"
	".key i{display:inline-block;width:1em;height:.8em;margin-right:.3em;"
	"vertical-align:baseline;border:1px solid #999}"
	/* one colour per kind: kernels, copies by direction, sets; host calls */
	".ev-kernel{fill:#2c6fbb;background:#2c6fbb}.ev-htod{fill:#e67e22;background:#e67e22}"
	".ev-dtoh{fill:#27ae60;background:#27ae60}.ev-dtod{fill:#8e44ad;background:#8e44ad}"
	".ev-htoh{fill:#a0522d;background:#a0522d}.ev-ptop{fill:#c71585;background:#c71585}"
	".ev-copy{fill:#00a3a3;background:#00a3a3}.ev-set{fill:#7f8c8d;background:#7f8c8d}"
	".ev-launch{fill:#f1c40f;background:#f1c40f}.ev-sync{fill:#c0392b;background:#c0392b}"
	".ev-hcopy{fill:#f1948a;background:#f1948a}.ev-alloc{fill:#34495e;background:#34495e}"
	".ev-excluded{fill:#ccc;background:#ccc}.ev-own{fill:#e0e0e0;background:#e0e0e0}";

void ht_esc(ga_buf *b, const char *s)
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

void ht_severity_tag(ga_buf *b, ga_severity sev)
{
	const char *name = ga_report_severity(sev);
	ga_buf_printf(b, "<span class=\"sev-%s\">[%s]</span> ",
	              strcmp(name, "?") == 0 ? "unknown" : name, name);
}

void ht_evidence(ga_buf *b, const ga_evidence *ev, size_t n)
{
	char v[64];
	if (!n)
		return;
	ga_buf_puts(b, "<br>evidence: ");
	for (size_t i = 0; i < n; i++) {
		ga_buf_puts(b, i ? ", " : "");
		ht_esc(b, ev[i].name ? ev[i].name : "?");
		ga_buf_printf(b, " = %s", ga_fmt_value(ev[i].value, v, sizeof(v)));
	}
}

void ht_rule_notes(ga_buf *b, const ga_rule *r)
{
	if (r && r->model) {
		ga_buf_puts(b, "<br>model: ");
		ht_esc(b, r->model);
	}
	if (r && r->fix) {
		ga_buf_puts(b, "<p>");
		ht_esc(b, r->fix);
		ga_buf_puts(b, "</p>");
	}
}

static const char *title_of(const ga_rule *r)
{
	return !r ? "?" : r->title ? r->title : r->id ? r->id : "?";
}

void ht_program_entry(ga_buf *b, const ga_analysis *a, const ga_pfinding *f, const ga_do *d)
{
	char b1[64], b2[64], b3[64];

	ga_buf_puts(b, "<li><b>");
	ht_esc(b, title_of(f->rule));
	ga_buf_puts(b, "</b>");
	if (a->n_tl > 1 && !(d && d->on_ranks))
		ga_buf_printf(b, " (pid %d)", f->pid);
	ga_buf_puts(b, "<br>");
	ht_severity_tag(b, f->rule->severity);
	if (f->estimate_missing) {
		ga_buf_puts(b, "estimate needs <code>");
		ht_esc(b, f->estimate_missing);
		ga_buf_puts(b, "</code>");
	} else {
		ga_fmt_pct(f->estimate, 0, b1, sizeof(b1));
		ga_buf_puts(b, "saves ");
		ht_esc(b, b1[0] == '<' ? "" : "~");
		ht_esc(b, b1);
		ga_buf_printf(b, "%% of wall time, estimated %s%s, fix %s",
		              ga_fmt_speedup(f->speedup, b2, sizeof(b2)),
		              f->affects < 1 ? " on the part it changes" : "",
		              ga_fmt_speedup_range(f->speedup_min, f->speedup_max, b3, sizeof(b3)));
	}
	ht_evidence(b, f->evidence, f->n_evidence);
	ht_on_ranks(b, a, d);
	ht_rule_notes(b, f->rule);
	ga_buf_puts(b, "</li>\n");
}

/* ---- the figures, as the text report words them ------------------------ */

/* One line of the figures: the shared sentence in *w, escaped, as an
 * item; *w is emptied. */
static void words_item(ga_buf *b, ga_buf *w)
{
	ga_buf_puts(b, "<li>");
	ht_esc(b, w->s ? w->s : "");
	ga_buf_puts(b, "</li>\n");
	ga_buf_free(w);
}

/* ---- where the wall time went: one stacked bar ------------------------- */

static void bar_part(ga_buf *b, double *x, double share, const char *cls, const char *what)
{
	char p[32];
	if (!isfinite(share) || share <= 0)
		return;
	double w = share * PLOT_W;
	ga_buf_printf(b, "<rect class=\"ev-%s\" x=\"%.2f\" y=\"0\" width=\"%.2f\" height=\"%d\">"
	              "<title>%s: %s%% of the wall time</title></rect>\n", cls, *x, w, BAR_H,
	              what, ga_fmt_share(share, p, sizeof(p)));
	*x += w;
}

static void key_item(ga_buf *b, const char *cls, const char *what)
{
	ga_buf_printf(b, "<span class=\"k\"><i class=\"ev-%s\"></i>%s</span>", cls, what);
}

static void wall_bar(ga_buf *b, const ga_tl_proc *pr)
{
	double x = 0, alone = pr->busy_share - pr->kernel_share;

	ga_buf_printf(b, "<svg class=\"strip\" width=\"%d\" height=\"%d\" viewBox=\"0 0 %d %d\" "
	              "role=\"img\" aria-label=\"where the wall time went\">\n", PLOT_W, BAR_H,
	              PLOT_W, BAR_H);
	bar_part(b, &x, pr->kernel_share, "kernel", "GPU busy with kernels");
	bar_part(b, &x, alone, "copy", "GPU busy with copies or sets and no kernel");
	bar_part(b, &x, pr->idle_share[GA_IDLE_LAUNCHING], "launch", "GPU idle, the host launching");
	bar_part(b, &x, pr->idle_share[GA_IDLE_OTHER], "own", "GPU idle, the host in its own code");
	bar_part(b, &x, pr->idle_share[GA_IDLE_BLOCKING], "sync",
	         "GPU idle, the host waiting in CUDA calls");
	ga_buf_puts(b, "</svg>\n<p class=\"key\">");
	key_item(b, "kernel", "kernels");
	key_item(b, "copy", "copies or sets, no kernel");
	key_item(b, "launch", "idle: the host launching");
	key_item(b, "own", "idle: in its own code");
	key_item(b, "sync", "idle: waiting in CUDA calls");
	ga_buf_puts(b, "</p>\n");
}

/* ---- the strip chart ------------------------------------------------------ */

typedef struct {
	int device;               /* -1: the host */
	uint32_t stream;
	double ns;                /* the time of its intervals, summed */
} strip_row;

typedef struct {
	strip_row rows[STRIP_MAX_ROWS + 1];
	size_t n_rows;
	int *row_of;              /* per event: its row, or -1 (no room) */
	size_t n_drawn, off_rows, off_short, rows_left;
	double cut;               /* events shorter than this are not drawn */
	size_t cut_ties;          /* ... and of those exactly as long, these many more are */
	unsigned kinds;           /* the legend's: bits of ev_class's index */
} strip;

static int row_cmp(const void *x, const void *y)
{
	const strip_row *p = x, *q = y;
	if (p->device != q->device)
		return p->device < q->device ? -1 : 1;
	return p->stream < q->stream ? -1 : p->stream > q->stream;
}

/* The host's row first, then by time, descending. */
static int row_time_cmp(const void *x, const void *y)
{
	const strip_row *p = x, *q = y;
	if ((p->device < 0) != (q->device < 0))
		return p->device < 0 ? -1 : 1;
	if (p->ns != q->ns)
		return p->ns > q->ns ? -1 : 1;
	return row_cmp(x, y);
}

static int dur_cmp(const void *x, const void *y)
{
	double a = *(const double *)x, b = *(const double *)y;
	return a > b ? -1 : a < b;
}

static strip_row row_key(const ga_tl_event *e)
{
	int dev = e->device < 0 ? -1 : e->device;
	return (strip_row){dev, dev < 0 ? 0 : e->stream, e->end - e->start};
}

/* The rows: the host's (when it has intervals), then the devices' streams
 * in order; when there are more than STRIP_MAX_ROWS of those, the ones
 * with the most time. */
static void strip_rows(strip *s, const ga_timeline *tl)
{
	size_t n = 0;
	strip_row *all = ga_xcalloc(tl->n_events ? tl->n_events : 1, sizeof(*all));

	for (size_t i = 0; i < tl->n_events; i++)
		all[i] = row_key(&tl->events[i]);
	qsort(all, tl->n_events, sizeof(*all), row_cmp);
	for (size_t i = 0; i < tl->n_events; i++) {
		if (n && row_cmp(&all[n - 1], &all[i]) == 0)
			all[n - 1].ns += all[i].ns;
		else
			all[n++] = all[i];
	}
	qsort(all, n, sizeof(*all), row_time_cmp);
	size_t room = STRIP_MAX_ROWS + (size_t)(n && all[0].device < 0);
	s->n_rows = n < room ? n : room;
	s->rows_left = n - s->n_rows;
	memcpy(s->rows, all, s->n_rows * sizeof(*all));
	free(all);
	qsort(s->rows, s->n_rows, sizeof(*s->rows), row_cmp);
	s->row_of = ga_xcalloc(tl->n_events ? tl->n_events : 1, sizeof(*s->row_of));
	for (size_t i = 0; i < tl->n_events; i++) {
		strip_row k = row_key(&tl->events[i]);
		const strip_row *r = bsearch(&k, s->rows, s->n_rows, sizeof(*s->rows), row_cmp);
		s->row_of[i] = r ? (int)(r - s->rows) : -1;
		if (!r)
			s->off_rows++;
	}
}

/* Which intervals are drawn: all, or the STRIP_MAX_DRAWN longest. */
static void strip_cut(strip *s, const ga_timeline *tl)
{
	size_t n = 0;
	double *d = ga_xcalloc(tl->n_events ? tl->n_events : 1, sizeof(*d));

	for (size_t i = 0; i < tl->n_events; i++)
		if (s->row_of[i] >= 0)
			d[n++] = tl->events[i].end - tl->events[i].start;
	s->cut = -1;
	if (n > STRIP_MAX_DRAWN) {
		size_t longer = 0;
		qsort(d, n, sizeof(*d), dur_cmp);
		s->cut = d[STRIP_MAX_DRAWN - 1];
		while (longer < n && d[longer] > s->cut)
			longer++;
		s->cut_ties = STRIP_MAX_DRAWN - longer;
		s->off_short = n - STRIP_MAX_DRAWN;
	}
	free(d);
}

static const char *const ev_classes[] = {
	"kernel", "htod", "dtoh", "dtod", "htoh", "ptop", "copy", "set",
	"launch", "sync", "hcopy", "alloc", "excluded",
};
static const char *const ev_names[] = {
	"kernels", "host to device", "device to host", "device to device", "host to host",
	"peer to peer", "copies", "memory sets", "launch calls", "synchronisations",
	"copy calls", "allocation calls", "the profiler's own work (left out)",
};

/* The index into ev_classes of an interval's kind. */
static int ev_class(const ga_tl_event *e)
{
	if (e->device < 0)
		return e->kind >= 0 && e->kind < GA_HOST__N ? 8 + e->kind : 8;
	if (e->kind == GA_GPU_KERNEL)
		return 0;
	if (e->kind == GA_GPU_SET)
		return 7;
	return e->dir >= 0 && e->dir < GA_DIR__N ? 1 + e->dir : 6;
}

static double sx(const ga_timeline *tl, double t)
{
	double f = tl->window_ns > 0 ? t / tl->window_ns : 0;
	return LABEL_W + fmin(1, fmax(0, f)) * PLOT_W;
}

static void ev_title(ga_buf *b, const ga_timeline *tl, const ga_tl_event *e, int cls)
{
	char d[32];
	ga_buf_puts(b, "<title>");
	if (cls == 0 && e->kernel >= 0 && (size_t)e->kernel < tl->n_kernels) {
		const ga_tl_kernel *k = &tl->kernels[e->kernel];
		ht_esc(b, k->name ? k->name : k->mangled ? k->mangled : "kernel");
	} else if (cls == 0) {
		ga_buf_puts(b, "a kernel");
	} else if (cls >= 1 && cls <= 6) {
		ga_buf_printf(b, "copy, %s", ev_names[cls]);
	} else {
		ga_buf_puts(b, ev_names[cls]);
	}
	ga_buf_printf(b, ": %s from %.3f ms</title>", ga_fmt_duration(e->end - e->start, d,
	              sizeof(d)), e->start / 1e6);
}

static void strip_events(ga_buf *b, strip *s, const ga_timeline *tl)
{
	size_t ties = s->cut_ties;

	for (size_t i = 0; i < tl->n_events; i++) {
		const ga_tl_event *e = &tl->events[i];
		double dur = e->end - e->start;
		if (s->row_of[i] < 0 || dur < s->cut)
			continue;
		if (dur == s->cut) {
			if (!ties)
				continue;
			ties--;
		}
		int cls = ev_class(e);
		double x0 = sx(tl, e->start), x1 = sx(tl, e->end);
		double y = 4 + s->row_of[i] * (ROW_H + ROW_GAP);
		s->kinds |= 1u << cls;
		s->n_drawn++;
		ga_buf_printf(b, "<rect class=\"ev-%s\" x=\"%.2f\" y=\"%.0f\" width=\"%.2f\" "
		              "height=\"%d\">", ev_classes[cls], x0, y, fmax(x1 - x0, 0.6), ROW_H);
		ev_title(b, tl, e, cls);
		ga_buf_puts(b, "</rect>\n");
	}
}

/* Ticks every 1, 2 or 5 x 10^k ms, about eight across. */
static void strip_axis(ga_buf *b, const ga_timeline *tl, double y)
{
	double ms = tl->window_ns / 1e6, raw = ms / 8, step = pow(10, floor(log10(raw)));
	if (raw / step >= 5)
		step *= 5;
	else if (raw / step >= 2)
		step *= 2;
	int dec = step >= 1 ? 0 : (int)ceil(-log10(step) - 1e-9);
	ga_buf_printf(b, "<line class=\"axis\" x1=\"%d\" y1=\"%.0f\" x2=\"%d\" y2=\"%.0f\"/>\n",
	              LABEL_W, y, LABEL_W + PLOT_W, y);
	for (int i = 0; i * step <= ms * (1 + 1e-9) && i < 100; i++) {
		double x = sx(tl, i * step * 1e6);
		ga_buf_printf(b, "<line class=\"tick\" x1=\"%.1f\" y1=\"4\" x2=\"%.1f\" y2=\"%.0f\"/>"
		              "<text x=\"%.1f\" y=\"%.0f\" text-anchor=\"middle\">%.*f</text>\n", x, x,
		              y + 4, x, y + 16, dec, i * step);
	}
	ga_buf_printf(b, "<text x=\"%d\" y=\"%.0f\" text-anchor=\"middle\">ms from the start of "
	              "the %s</text>\n", LABEL_W + PLOT_W / 2, y + 30,
	              tl->window_is_iteration ? "iteration" : "window");
}

static void strip_key(ga_buf *b, const strip *s)
{
	ga_buf_puts(b, "<p class=\"key\">");
	for (size_t c = 0; c < GA_ARRAY_LEN(ev_classes); c++)
		if (s->kinds & (1u << c))
			key_item(b, ev_classes[c], ev_names[c]);
	if (s->off_short)
		ga_buf_printf(b, " %zu shorter %s not drawn (at most %d are).", s->off_short,
		              ga_plural((long)s->off_short, "interval", "intervals"), STRIP_MAX_DRAWN);
	if (s->off_rows)
		ga_buf_printf(b, " %zu %s on %zu further %s not drawn (the %d with the most time "
		              "are).", s->off_rows, ga_plural((long)s->off_rows, "interval", "intervals"),
		              s->rows_left, ga_plural((long)s->rows_left, "stream", "streams"),
		              STRIP_MAX_ROWS);
	ga_buf_puts(b, "</p>\n");
}

static void strip_chart(ga_buf *b, const ga_tl_proc *pr)
{
	const ga_timeline *tl = pr->tl;
	strip s = {0};
	char d[32];

	if (!tl->n_events || !(tl->window_ns > 0)) {
		ga_buf_puts(b, "<p>No intervals of an iteration were recorded.</p>\n");
		return;
	}
	if (tl->window_is_iteration)
		ga_buf_printf(b, "<p>One iteration (%ld %s), %s:</p>\n", tl->period,
		              ga_plural(tl->period, "launch", "launches"),
		              ga_fmt_duration(tl->window_ns, d, sizeof(d)));
	else
		ga_buf_printf(b, "<p>The last %s of the run (no repeating iteration was found):</p>\n",
		              ga_fmt_duration(tl->window_ns, d, sizeof(d)));
	strip_rows(&s, tl);
	strip_cut(&s, tl);
	double axis_y = 4 + (double)s.n_rows * (ROW_H + ROW_GAP) + 2;
	int h = (int)axis_y + AXIS_H;
	ga_buf_printf(b, "<svg class=\"strip\" width=\"%d\" height=\"%d\" viewBox=\"0 0 %d %d\" "
	              "role=\"img\" aria-label=\"one iteration's intervals\">\n", STRIP_W, h,
	              STRIP_W, h);
	for (size_t r = 0; r < s.n_rows; r++) {
		double y = 4 + (double)r * (ROW_H + ROW_GAP);
		ga_buf_printf(b, "<rect class=\"row\" x=\"%d\" y=\"%.0f\" width=\"%d\" height=\"%d\"/>"
		              "<text x=\"4\" y=\"%.0f\">", LABEL_W, y, PLOT_W, ROW_H, y + 12);
		if (s.rows[r].device < 0)
			ga_buf_puts(b, "host (CUDA calls)");
		else
			ga_buf_printf(b, "GPU %d, stream %u", s.rows[r].device, s.rows[r].stream);
		ga_buf_puts(b, "</text>\n");
	}
	strip_axis(b, tl, axis_y);
	strip_events(b, &s, tl);
	ga_buf_puts(b, "</svg>\n");
	strip_key(b, &s);
	free(s.row_of);
}

/* ---- the section ------------------------------------------------------------ */

static void proc_block(ga_buf *b, const ga_tl_proc *pr)
{
	const ga_timeline *tl = pr->tl;
	/* one buffer per value printed by one call */
	char b1[64], b2[64], b3[64], b4[64], b5[64], b6[64], b7[64];
	double idle = 0;
	ga_buf w = {0};

	for (int k = 0; k < GA_IDLE__N; k++)
		idle += pr->idle_share[k];
	ga_buf_printf(b, "<h3>pid %d</h3>\n<p>%s of wall time", pr->pid,
	              ga_fmt_duration(pr->wall_ns, b1, sizeof(b1)));
	if (tl->excluded_ns > 0)
		ga_buf_printf(b, " (and %s of the profiler's own, left out)",
		              ga_fmt_duration(tl->excluded_ns, b2, sizeof(b2)));
	ga_buf_printf(b, ", %zu %s%s</p>\n", pr->n_devices, ga_plural(pr->n_devices, "GPU", "GPUs"),
	              tl->complete ? "" : "; cut short: the process did not end normally");
	wall_bar(b, pr);
	ga_buf_printf(b, "<ul class=\"tl\">\n<li>GPU busy %s%% (kernels %s%%, copies %s%%); idle "
	              "%s%%: the host launching %s%%, in its own code %s%%, waiting in CUDA calls "
	              "%s%%</li>\n",
	              ga_fmt_share(pr->busy_share, b1, sizeof(b1)), ga_fmt_share(pr->kernel_share, b2, sizeof(b2)),
	              ga_fmt_share(pr->copy_share, b3, sizeof(b3)), ga_fmt_share(idle, b4, sizeof(b4)),
	              ga_fmt_share(pr->idle_share[GA_IDLE_LAUNCHING], b5, sizeof(b5)),
	              ga_fmt_share(pr->idle_share[GA_IDLE_OTHER], b6, sizeof(b6)),
	              ga_fmt_share(pr->idle_share[GA_IDLE_BLOCKING], b7, sizeof(b7)));
	for (int dir = 0; dir < GA_DIR__N; dir++)
		if (ga_tl_copies_words(&w, &pr->sum, dir, ga_fmt_duration))
			words_item(b, &w);
	ga_tl_host_words(&w, tl, ga_fmt_duration);
	words_item(b, &w);
	if (ga_tl_loop_words(&w, pr, ga_fmt_duration))
		words_item(b, &w);
	ga_buf_puts(b, "</ul>\n");
	strip_chart(b, pr);
}

void ht_timeline(ga_buf *b, const ga_analysis *a)
{
	if (!a->n_tl)
		return;
	size_t hidden = 0;
	ga_buf_puts(b, "<h2>Timeline</h2>\n");
	for (size_t j = 0; j < a->n_tl; j++) {
		/* of many ranks, the first and the stragglers, in rank order */
		const ga_tl_proc *pr = ga_rank_tl(a, j);
		const ga_rank *k = a->ranks.multi ? ga_rank_of(a, pr->pid) : NULL;
		if (k && !k->shown)
			hidden++;
		else
			proc_block(b, pr);
	}
	if (hidden)
		ga_buf_printf(b, "<p>%zu more %s: their busy shares are in the Ranks table.</p>\n",
		              hidden, ga_plural(hidden, "rank", "ranks"));
}
