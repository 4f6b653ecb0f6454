/* roofplot.c: the roofline as a terminal chart.
 *
 *  FLOP/s
 *   100T┤                 ◆⠒⠒⠒⠒⠒⠒⠒⠒⠒⠒ FP32
 *    10T┤            ⠔⠊ A
 *       └──────┬──────┬──────┬──
 *             0.1     1     10      FLOP/byte
 *
 * Log-log.  Roofs are braille lines (2 x 4 dots per character): the DRAM,
 * L2 and L1 bandwidth slopes up to the highest flat roof, and each drawn
 * precision's flat roof from its DRAM ridge, marked ◆, to the right edge,
 * named in the right margin.  Kernels are their label letters; two that
 * fall on one character are set side by side.  Also the helpers the HTML
 * chart shares: which roofs are drawn, the axes, kernel labels, rates.
 * See report.h. */
#include "report.h"

#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#define ROWS 16
#define MARGIN 6        /* "100T" + axis */
#define RIGHT 8         /* " tensor" */
#define MAX_COLS 120
#define RIDGE_MARK 0x25C6u

typedef struct {
	size_t w;                         /* plot columns */
	double x0, x1, y0, y1;            /* decades */
	uint8_t dots[ROWS][MAX_COLS];     /* braille bits */
	uint32_t over[ROWS][MAX_COLS];    /* a character drawn over the dots, 0 none */
	char right[ROWS][32];             /* roof names in the right margin */
} plot;

static void put_cp(ga_buf *b, uint32_t c)
{
	if (c < 0x80) {
		ga_buf_putc(b, (char)c);
	} else if (c < 0x800) {
		ga_buf_putc(b, (char)(0xc0 | c >> 6));
		ga_buf_putc(b, (char)(0x80 | (c & 0x3f)));
	} else {
		ga_buf_putc(b, (char)(0xe0 | c >> 12));
		ga_buf_putc(b, (char)(0x80 | (c >> 6 & 0x3f)));
		ga_buf_putc(b, (char)(0x80 | (c & 0x3f)));
	}
}

/* Pixel coordinates (2 per column, 4 per row) of a point in decades;
 * -1 when outside. */
static long px_x(const plot *p, double lx)
{
	double f = (lx - p->x0) / (p->x1 - p->x0);
	return f < 0 || f >= 1 ? -1 : (long)(f * 2.0 * (double)p->w);
}

static long px_y(const plot *p, double ly)
{
	double f = (p->y1 - ly) / (p->y1 - p->y0);
	return f < 0 || f > 1 ? -1 : f == 1 ? 4 * ROWS - 1 : (long)(f * 4.0 * ROWS);
}

static void dot(plot *p, long x, long y)
{
	static const uint8_t bit[4][2] = { { 0x01, 0x08 }, { 0x02, 0x10 }, { 0x04, 0x20 },
	                                   { 0x40, 0x80 } };
	if (x < 0 || y < 0)
		return;
	p->dots[y / 4][x / 2] |= bit[y % 4][x % 2];
}

/* y = min(cap, max(floor_, 10^lx * slope)) over the columns where lx >= from,
 * in decades; slope NAN: a flat line at cap. */
static void curve(plot *p, double from, double slope, double cap)
{
	for (long x = 0; x < (long)(2 * p->w); x++) {
		double lx = p->x0 + ((double)x + 0.5) / (2.0 * (double)p->w) * (p->x1 - p->x0);
		if (lx < from)
			continue;
		double y = isfinite(slope) ? pow(10, lx) * slope : cap;
		if (y <= cap)
			dot(p, x, px_y(p, log10(y)));
	}
}

static void roofs(plot *p, const ga_roofline *r)
{
	const ga_roof_peaks *pk = &r->peaks;
	double top = 0;
	for (int f = 0; f < GA_ROOF__PREC; f++) {
		if (!ga_roof_prec_drawn(r, (ga_roof_prec)f))
			continue;
		double ridge = log10(pk->ridge[f]);
		long x = px_x(p, ridge), y = px_y(p, log10(pk->flops[f]));
		if (pk->flops[f] > top)
			top = pk->flops[f];
		curve(p, ridge, NAN, pk->flops[f]);
		if (x >= 0 && y >= 0)
			p->over[y / 4][x / 2] = RIDGE_MARK;
		if (y >= 0) {
			char *m = p->right[y / 4];
			size_t used = strlen(m);
			snprintf(m + used, sizeof(p->right[0]) - used, "%s%s", used ? "/" : " ",
			         ga_roof_prec_name((ga_roof_prec)f));
		}
	}
	for (int l = 0; l < GA_ROOF__LEVELS; l++)
		if (isfinite(pk->bw[l]))
			curve(p, -INFINITY, pk->bw[l], top);
}

static void kernels(plot *p, const ga_roofline *r)
{
	for (size_t i = 0; i < r->n; i++) {
		const ga_roof_kernel *k = &r->kernels[i];
		char label = ga_roof_label(i);
		if (k->verdict == GA_ROOF_NOT_PLACED || !label)
			continue;
		long x = px_x(p, log10(k->x_intensity));
		long y = px_y(p, log10(k->flops_total));
		if (x < 0 || y < 0)
			continue;
		size_t row = (size_t)y / 4, col = (size_t)x / 2;
		while (col + 1 < p->w && p->over[row][col] > 0x20 && p->over[row][col] < 0x7f)
			col++;
		p->over[row][col] = (uint32_t)label;
	}
}

/* "1G", "10T", "100P"; 10^d outside that range as "1e-3". */
static void si_decade(char *buf, size_t len, int d)
{
	static const char pre[] = "KMGTPE";
	if (d >= 3 && d < 21)
		snprintf(buf, len, "%d%c", d % 3 == 0 ? 1 : d % 3 == 1 ? 10 : 100, pre[d / 3 - 1]);
	else if (d >= 0 && d < 3)
		snprintf(buf, len, "%d", d == 0 ? 1 : d == 1 ? 10 : 100);
	else
		snprintf(buf, len, "1e%d", d);
}

/* "0.01", "1", "1000"; further out "1e-4". */
static void plain_decade(char *buf, size_t len, int d)
{
	if (d >= -3 && d <= 4)
		snprintf(buf, len, "%g", pow(10, d));
	else
		snprintf(buf, len, "1e%d", d);
}

static long tick_row(const plot *p, int d)
{
	long y = px_y(p, d);
	return y < 0 ? -1 : y / 4;
}

static void emit_rows(ga_buf *b, const plot *p)
{
	char lab[16];
	for (long row = 0; row < ROWS; row++) {
		int tick = 0;
		lab[0] = '\0';
		for (int d = (int)p->y0; d <= (int)p->y1; d++)
			if (tick_row(p, d) == row) {
				si_decade(lab, sizeof(lab), d);
				tick = 1;
			}
		ga_buf_printf(b, "%*s", MARGIN - 1, lab);
		put_cp(b, tick ? 0x2524u : 0x2502u);   /* ┤ │ */
		size_t start = b->len, keep = b->len;
		for (size_t c = 0; c < p->w; c++) {
			uint32_t ch = p->over[row][c] ? p->over[row][c]
			              : p->dots[row][c] ? 0x2800u + p->dots[row][c] : ' ';
			put_cp(b, ch);
			if (ch != ' ')
				keep = b->len;
		}
		if (p->right[row][0]) {
			ga_buf_printf(b, "%.*s", RIGHT, p->right[row]);
			keep = b->len;
		}
		b->len = keep > start ? keep : start;
		b->s[b->len] = '\0';
		ga_buf_putc(b, '\n');
	}
}

static void emit_x_axis(ga_buf *b, const plot *p, const ga_roofline *r)
{
	char ticks[MAX_COLS + 1], line[MAX_COLS + MARGIN + 16], lab[16];
	memset(ticks, 0, sizeof(ticks));
	memset(line, ' ', sizeof(line));
	size_t end = 0;
	for (int d = (int)p->x0; d <= (int)p->x1; d++) {
		long x = px_x(p, d);
		if (x < 0)
			continue;
		size_t col = (size_t)x / 2, pos = MARGIN + col;
		ticks[col] = 1;
		plain_decade(lab, sizeof(lab), d);
		size_t n = strlen(lab), at = pos >= n / 2 ? pos - n / 2 : 0;
		if ((end && at <= end) || at + n >= sizeof(line))
			continue;
		memcpy(line + at, lab, n);
		end = at + n;
	}
	ga_buf_printf(b, "%*s", MARGIN - 1, "");
	put_cp(b, 0x2514u);                          /* └ */
	for (size_t c = 0; c < p->w; c++)
		put_cp(b, ticks[c] ? 0x252cu : 0x2500u); /* ┬ ─ */
	ga_buf_putc(b, '\n');
	ga_buf_printf(b, "%.*s\n%*sarithmetic intensity, FLOP/byte at DRAM%s\n", (int)end, line,
	              MARGIN, "", ga_roof_placed_off_dram(r) ? " (or as placed)" : "");
}

void ga_roof_plot(ga_buf *b, const ga_roofline *r, size_t width)
{
	plot *p = ga_xcalloc(1, sizeof(*p));
	if (ga_roof_axes(r, &p->x0, &p->x1, &p->y0, &p->y1) != 0) {
		free(p);
		return;
	}
	p->w = width > MARGIN + RIGHT ? width - MARGIN - RIGHT : 1;
	if (p->w > MAX_COLS)
		p->w = MAX_COLS;
	roofs(p, r);
	kernels(p, r);
	ga_buf_puts(b, "FLOP/s\n");
	emit_rows(b, p);
	emit_x_axis(b, p, r);
	free(p);
}

/* ---- shared with the HTML chart ------------------------------------------ */

const char *ga_fmt_rate(double v, const char *unit, char *buf, size_t len)
{
	static const char *const pre[] = { "", "K", "M", "G", "T", "P", "E" };
	size_t i = 0;
	if (!isfinite(v)) {
		snprintf(buf, len, "n/a");
		return buf;
	}
	while (i + 1 < GA_ARRAY_LEN(pre) && fabs(v) >= 999.5) {
		v /= 1000.0;
		i++;
	}
	snprintf(buf, len, "%.3g %s%s", v, pre[i], unit);
	return buf;
}

int ga_roof_prec_drawn(const ga_roofline *r, ga_roof_prec p)
{
	if (!isfinite(r->peaks.flops[p]))
		return 0;
	if (p == GA_ROOF_FP32 || p == GA_ROOF_FP64)
		return 1;
	for (size_t i = 0; i < r->n; i++)
		if (r->kernels[i].verdict != GA_ROOF_NOT_PLACED && r->kernels[i].flops[p] > 0)
			return 1;
	return 0;
}

static void widen(double *lo, double *hi, double v)
{
	if (!isfinite(v) || v <= 0)
		return;
	v = log10(v);
	if (!(*lo <= v))
		*lo = v;
	if (!(*hi >= v))
		*hi = v;
}

int ga_roof_axes(const ga_roofline *r, double *x0, double *x1, double *y0, double *y1)
{
	double xl = NAN, xh = NAN, yl = NAN, yh = NAN;
	if (r->n_placed == 0)
		return -1;
	for (size_t i = 0; i < r->n; i++) {
		const ga_roof_kernel *k = &r->kernels[i];
		if (k->verdict == GA_ROOF_NOT_PLACED)
			continue;
		widen(&xl, &xh, k->x_intensity);
		widen(&yl, &yh, k->flops_total);
	}
	for (int p = 0; p < GA_ROOF__PREC; p++)
		if (ga_roof_prec_drawn(r, (ga_roof_prec)p)) {
			widen(&xl, &xh, r->peaks.ridge[p]);
			widen(&yl, &yh, r->peaks.flops[p]);
		}
	*x0 = floor(xl - 0.5);
	*x1 = ceil(xh + 0.5);
	*y0 = floor(yl - 0.5);
	*y1 = ceil(yh + 0.2);
	return 0;
}

int ga_roof_placed_off_dram(const ga_roofline *r)
{
	for (size_t i = 0; i < r->n; i++)
		if (r->kernels[i].verdict != GA_ROOF_NOT_PLACED &&
		    r->kernels[i].placed_by != GA_ROOF_DRAM)
			return 1;
	return 0;
}

char ga_roof_label(size_t i)
{
	return i < 26 ? (char)('A' + i) : i < 52 ? (char)('a' + i - 26) : 0;
}
