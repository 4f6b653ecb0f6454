/* format.c: the number and text formatting that the report formats share:
 * durations, values, percentages, speedups and their ranges, display widths,
 * short kernel names, labels.  They compute nothing the analysis has not.
 * See report.h. */
#include "report.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

/* Three significant digits in the largest unit that keeps the value >= 1.
 * A value that rounds up to 1000 moves on to the next unit, so 999.96 us
 * reads "1.00 ms" and never "1000 us". */
const char *ga_fmt_duration(double ns, char *buf, size_t len)
{
	static const char *const units[] = { "ns", "us", "ms", "s" };
	if (!buf || len == 0)
		return buf;
	if (!isfinite(ns)) {
		snprintf(buf, len, "n/a");
		return buf;
	}
	const char *sign = ns < 0 ? "-" : "";
	double v = fabs(ns);
	size_t u = 0;
	while (u + 1 < GA_ARRAY_LEN(units) && v >= 1000.0) {
		v /= 1000.0;
		u++;
	}
	for (;;) {
		int decimals = u == 0 ? 0 : v < 10 ? 2 : v < 100 ? 1 : 0;
		double scale = pow(10, decimals);
		double r = floor(v * scale + 0.5) / scale;
		if (r >= 1000.0 && u + 1 < GA_ARRAY_LEN(units)) {
			v /= 1000.0;
			u++;
			continue;
		}
		/* Beyond a million seconds (a corrupt duration, not a kernel):
		 * an exponent, not hundreds of digits. */
		if (r >= 1e6)
			snprintf(buf, len, "%s%.3g %s", sign, r, units[u]);
		else
			snprintf(buf, len, "%s%.*f %s", sign, decimals, r, units[u]);
		return buf;
	}
}

const char *ga_fmt_value(double v, char *buf, size_t len)
{
	if (!buf || len == 0)
		return buf;
	double a = fabs(v);
	if (isnan(v))
		snprintf(buf, len, "n/a");
	else if (isinf(v))
		snprintf(buf, len, "%s", v < 0 ? "-inf" : "inf");
	else if (a == 0)
		snprintf(buf, len, "0");
	else if (a >= 1e9 || a < 1e-3)
		snprintf(buf, len, "%.3g", v);
	else if (a >= 100)
		snprintf(buf, len, "%.0f", v);  /* 1234, not 1.23e+03 */
	else
		snprintf(buf, len, "%.3g", v);
	return buf;
}

const char *ga_fmt_pct(double frac, int decimals, char *buf, size_t len)
{
	if (!buf || len == 0)
		return buf;
	if (!isfinite(frac)) {
		snprintf(buf, len, "n/a");
		return buf;
	}
	if (decimals < 0)
		decimals = 0;
	double scale = pow(10, decimals);
	/* Round half up; the small bias keeps 0.285 (28.4999... in binary)
	 * from reading 28 when the author meant 28.5. */
	double r = floor(frac * 100.0 * scale + 0.5 + 1e-9) / scale;
	if (frac > 0 && r == 0)
		snprintf(buf, len, "<%s", decimals == 0 ? "1" : decimals == 1 ? "0.1" : "0.01");
	else
		snprintf(buf, len, "%.*f", decimals, r == 0 ? 0.0 : r);
	return buf;
}

const char *ga_fmt_share(double frac, char *buf, size_t len)
{
	return ga_fmt_pct(isfinite(frac) ? frac : 0, 1, buf, len);
}

const char *ga_fmt_pct_cell(double frac, char *buf, size_t len)
{
	char p[32];
	if (!isfinite(frac))
		snprintf(buf, len, "-");
	else
		snprintf(buf, len, "%s%%", ga_fmt_pct(frac, 1, p, sizeof(p)));
	return buf;
}

const char *ga_plural(size_t n, const char *one, const char *many)
{
	return n == 1 ? one : many;
}

const char *ga_fmt_bytes(double v, char *buf, size_t len)
{
	if (v >= 1e9)
		snprintf(buf, len, "%.2f GB", v / 1e9);
	else if (v >= 1e6)
		snprintf(buf, len, "%.1f MB", v / 1e6);
	else if (v >= 1e3)
		snprintf(buf, len, "%.1f kB", v / 1e3);
	else
		snprintf(buf, len, "%.0f B", v);
	return buf;
}

const char *ga_fmt_speedup(double s, char *buf, size_t len)
{
	if (!buf || len == 0)
		return buf;
	if (isnan(s))
		snprintf(buf, len, "n/a");
	else if (s > 100)
		snprintf(buf, len, ">100x");
	else if (s < 9.95)
		snprintf(buf, len, "%.1fx", s);
	else
		snprintf(buf, len, "%.0fx", s);
	return buf;
}

/* One end of a range, at the precision of ga_fmt_speedup: "1.5", "2", "12". */
static void range_end(double s, char *buf, size_t len)
{
	if (s < 9.95)
		snprintf(buf, len, "%.1f", s);
	else
		snprintf(buf, len, "%.0f", s);
	size_t n = strlen(buf);
	if (n > 2 && strcmp(buf + n - 2, ".0") == 0)
		buf[n - 2] = '\0';
}

int ga_range_wide(double lo, double hi)
{
	return isfinite(lo) && isfinite(hi) && lo > 0 && hi > 10 * lo;
}

const char *ga_fmt_fix_range(double lo, double hi, char *buf, size_t len)
{
	char r[64];
	snprintf(buf, len, "%s%s", ga_fmt_speedup_range(lo, hi, r, sizeof(r)),
	         ga_range_wide_words(lo, hi));
	return buf;
}

const char *ga_range_wide_words(double lo, double hi)
{
	return ga_range_wide(lo, hi) ? " (a range over 10x wide: the counters cannot tell its cases "
	                               "apart)" : "";
}

const char *ga_fmt_speedup_range(double lo, double hi, char *buf, size_t len)
{
	char a[32], b[32];
	if (!buf || len == 0)
		return buf;
	if (isnan(lo) || isnan(hi))
		return snprintf(buf, len, "n/a"), buf;
	if (lo > 100)
		return snprintf(buf, len, ">100x"), buf;
	range_end(lo, a, sizeof(a));
	if (hi > 100)
		return snprintf(buf, len, "%sx to >100x", a), buf;
	range_end(hi, b, sizeof(b));
	if (strcmp(a, b) == 0)
		snprintf(buf, len, "%sx", a);
	else
		snprintf(buf, len, "%s-%sx", a, b);
	return buf;
}

size_t ga_text_width_n(const char *s, size_t n)
{
	const char *end = s + n;
	size_t w = 0;

	while (s < end) {
		unsigned char c = (unsigned char)*s;
		if (c == 0x1b) {
			s++;
			if (s < end && *s == '[') {
				/* CSI: parameters up to a final byte 0x40..0x7e */
				s++;
				while (s < end && !((unsigned char)*s >= 0x40 && (unsigned char)*s <= 0x7e))
					s++;
				if (s < end)
					s++;
			} else if (s < end) {
				s++;
			}
			continue;
		}
		if ((c & 0xc0) != 0x80)
			w++;
		s++;
	}
	return w;
}

size_t ga_text_width(const char *s)
{
	return s ? ga_text_width_n(s, strlen(s)) : 0;
}

/* Byte offset after the first n code points of s. */
static size_t utf8_prefix(const char *s, size_t n)
{
	size_t i = 0, cps = 0;
	while (s[i]) {
		if (((unsigned char)s[i] & 0xc0) != 0x80) {
			if (cps == n)
				break;
			cps++;
		}
		i++;
	}
	return i;
}

#define ELLIPSIS "\xe2\x80\xa6"  /* U+2026, one column */

/* Offset of the '(' opening the parameter list: the first one outside
 * template brackets, skipping "(anonymous namespace)".  -1 when none. */
long ga_report_params_start(const char *name)
{
	static const char anon[] = "(anonymous namespace)";
	int depth = 0;
	for (size_t i = 0; name[i]; i++) {
		char c = name[i];
		if (c == '<')
			depth++;
		else if (c == '>' && depth > 0)
			depth--;
		else if (c == '(' && depth == 0) {
			if (strncmp(name + i, anon, sizeof(anon) - 1) == 0) {
				i += sizeof(anon) - 2;
				continue;
			}
			return (long)i;
		}
	}
	return -1;
}

/* name[0..n) with the arguments of its first template collapsed:
 * "ns::K<a, b<c>>::run" -> "ns::K<…>::run".  NULL when it has none. */
static char *collapse_template(const char *name, size_t n)
{
	const char *lt = memchr(name, '<', n);
	if (!lt || lt == name)
		return NULL;
	int depth = 0;
	for (const char *p = lt; p < name + n; p++) {
		if (*p == '<')
			depth++;
		else if (*p == '>' && --depth == 0)
			return ga_xasprintf("%.*s<" ELLIPSIS ">%.*s", (int)(lt - name), name,
			                    (int)(name + n - p - 1), p + 1);
	}
	return NULL;
}

/* Shorter and shorter forms until one fits: the name; without a leading
 * "void " (the return type of templated kernels); without the parameter
 * list; with the template arguments collapsed too; cut with an ellipsis. */
static char *short_name(const char *name, size_t max_cols)
{
	if (ga_text_width(name) <= max_cols)
		return ga_xstrdup(name);
	if (max_cols < 2)
		return ga_xstrdup(ELLIPSIS);
	if (ga_str_has_prefix(name, "void ") && name[5])
		name += 5;
	if (ga_text_width(name) <= max_cols)
		return ga_xstrdup(name);
	long p = ga_report_params_start(name);
	if (p > 0) {
		char *base = ga_xasprintf("%.*s(" ELLIPSIS ")", (int)p, name);
		if (ga_text_width(base) <= max_cols)
			return base;
		free(base);
		char *c = collapse_template(name, (size_t)p);
		if (c) {
			base = ga_xasprintf("%s(" ELLIPSIS ")", c);
			free(c);
			if (ga_text_width(base) <= max_cols)
				return base;
			free(base);
		}
	}
	size_t cut = utf8_prefix(name, max_cols - 1);
	return ga_xasprintf("%.*s" ELLIPSIS, (int)cut, name);
}

/* A name from the profile: its control characters made visible first
 * (safe.c), so that even with colour none reaches the terminal. */
char *ga_short_name(const char *name, size_t max_cols)
{
	char *safe = ga_report_safe(name ? name : "?");
	char *s = short_name(safe, max_cols);

	free(safe);
	return s;
}

/* ---- helpers added with --baseline ------------------------------------ */

const char *ga_fmt_change(double frac, char *buf, size_t len)
{
	if (!buf || len == 0)
		return buf;
	if (!isfinite(frac)) {
		snprintf(buf, len, "n/a");
		return buf;
	}
	double pct = floor(fabs(frac) * 1000.0 + 0.5) / 10.0;
	if (pct == 0)
		snprintf(buf, len, "0.0%%");
	else
		snprintf(buf, len, "%c%.1f%%", frac < 0 ? '-' : '+', pct);
	return buf;
}

int ga_fail_severity(ga_fail_mode m)
{
	switch (m) {
	case GA_FAIL_LOW: return GA_SEV_LOW;
	case GA_FAIL_MEDIUM: return GA_SEV_MEDIUM;
	case GA_FAIL_HIGH:
	case GA_FAIL_REGRESSION:
	case GA_FAIL_DEFAULT:
	default: return GA_SEV_HIGH;
	}
}

size_t ga_report_process_files(const ga_analysis *a, const ga_report_opts *o, int pid,
                               const char ***out)
{
	const ga_profile *p = a->profile;
	const char **files = ga_xcalloc(o && o->n_inputs ? o->n_inputs : 1, sizeof(*files));
	size_t n = 0;

	*out = files;
	for (size_t f = 0; p && o && f < o->n_inputs; f++) {
		const ga_report_input *in = &o->inputs[f];
		for (size_t i = in->first_launch; i < p->n_launches &&
		                                  i - in->first_launch < in->n_launches; i++)
			if (p->launches[i].pid == pid) {
				files[n++] = in->path;
				break;
			}
	}
	return n;
}

int ga_report_several_processes(const ga_analysis *a, const ga_report_opts *o)
{
	return a->n_processes > 1 || (o && o->n_inputs > 1);
}

char *ga_device_label(const ga_device *d)
{
	const char *name = d && d->name && *d->name ? d->name : "an unknown device";
	if (d && d->chip && *d->chip)
		return ga_xasprintf("%s (%s)", name, d->chip);
	return ga_xstrdup(name);
}

char *ga_baseline_warning(const ga_comparison *c)
{
	if (!c || c->same_device)
		return NULL;
	char *b = ga_device_label(c->base && c->base->profile ? &c->base->profile->device : NULL);
	char *n = ga_device_label(c->cur && c->cur->profile ? &c->cur->profile->device : NULL);
	char *w = ga_xasprintf("The baseline was recorded on another GPU, %s; this profile on %s. "
	                       "Durations are not compared, only classes and findings.", b, n);
	free(b);
	free(n);
	return w;
}

char *ga_prediction_text(const ga_rule *r, const ga_prediction *p)
{
	char b1[32], b2[48], b3[32];
	if (!p || !p->checked)
		return NULL;
	const char *id = r && r->id ? r->id : "?";
	ga_fmt_speedup(p->measured, b3, sizeof(b3));
	if (!isfinite(p->predicted))
		return ga_xasprintf("finding %s: no estimate, measured %s", id, b3);
	ga_fmt_speedup(p->predicted, b1, sizeof(b1));
	if (isnan(p->low) || isnan(p->high))
		return ga_xasprintf("finding %s: predicted %s, measured %s", id, b1, b3);
	return ga_xasprintf("finding %s: predicted %s (%s), measured %s", id, b1,
	                    ga_fmt_speedup_range(p->low, p->high, b2, sizeof(b2)), b3);
}

const char *ga_report_class(ga_class c)
{
	if (c < 0 || c >= GA_CLASS__COUNT)
		return "unclassified";
	const char *n = ga_class_name(c);
	return n ? n : "unclassified";
}

const char *ga_report_severity(ga_severity s)
{
	const char *n = ga_severity_name(s);
	return n ? n : "?";
}

const char *ga_report_basename(const char *path)
{
	const char *s = path ? strrchr(path, '/') : NULL;
	return s ? s + 1 : path;
}

void *ga_report_json_string(const char *s)
{
	json_t *j = json_string(s);
	if (j)
		return j;
	char *copy = ga_xstrdup(s);
	for (char *p = copy; *p; p++)
		if ((unsigned char)*p >= 0x80)
			*p = '?';
	j = json_string(copy);
	free(copy);
	return j ? j : json_string("?");
}
