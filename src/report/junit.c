/* junit.c: the report as JUnit XML, for the test-report views of CI systems.
 *
 * <testsuites> holds one <testsuite> named after the GPU, and that one
 * <testcase> per kernel: classname "gpuadvise.kernel", name the demangled
 * kernel name (with its launch shape, then its process's number, added when
 * two kernels share a name), time its GPU time in seconds.  Neither holds
 * the kernel's class or a pid: CI systems (Jenkins) keep a test's history by
 * classname and name, and those change between runs.  A test case fails
 * exactly when gpuadvise exits 1 because of that kernel:
 *   --fail-on low|medium|high: the kernel has a finding of that severity or
 *     higher; the failure's type is the highest such severity;
 *   --fail-on regression: the kernel regressed against the baseline (slower
 *     than the threshold, or a new finding at or above high severity);
 *   no --fail-on: never; the findings are in each test case's <system-out>.
 * The failure names the findings (titles, rule ids) and gives their fixes.
 * Each finding on a process's timeline (a program rule) is a test case of
 * its own, classname "gpuadvise.program", name "RULE (process N)": it
 * fails under --fail-on low|medium|high as a kernel's would, never under
 * regression (the baseline compares kernels).
 * Suite properties name the GPU, the --fail-on mode and the baseline; a
 * baseline from another GPU is also stated in the suite's <system-err>.
 *
 * Every string from the data is escaped; characters XML 1.0 cannot hold
 * (control characters: \x1b as text; bytes that are not UTF-8: '?'). */
#include "report.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

/* Length of the valid UTF-8 sequence at s (1..4), or 0 if it is not one. */
static size_t utf8_len(const unsigned char *s)
{
	size_t n;
	unsigned c = s[0];
	if (c < 0x80)
		return 1;
	if (c >= 0xc2 && c <= 0xdf)
		n = 2;
	else if (c >= 0xe0 && c <= 0xef)
		n = 3;
	else if (c >= 0xf0 && c <= 0xf4)
		n = 4;
	else
		return 0;
	for (size_t i = 1; i < n; i++)
		if ((s[i] & 0xc0) != 0x80)
			return 0;
	/* overlong forms, surrogates and values past U+10FFFF */
	if (c == 0xe0 && s[1] < 0xa0)
		return 0;
	if (c == 0xed && s[1] >= 0xa0)
		return 0;
	if (c == 0xf0 && s[1] < 0x90)
		return 0;
	if (c == 0xf4 && s[1] >= 0x90)
		return 0;
	/* U+FFFE and U+FFFF are not XML characters either */
	if (c == 0xef && s[1] == 0xbf && (s[2] == 0xbe || s[2] == 0xbf))
		return 0;
	return n;
}

/* Escaped for element content (attr = 0) or an attribute value (attr = 1,
 * where line breaks and tabs are kept as character references). */
static void put_xml(ga_buf *b, const char *text, int attr)
{
	const unsigned char *s = (const unsigned char *)(text ? text : "");
	while (*s) {
		unsigned char c = *s;
		size_t n = utf8_len(s);
		if (n == 0) {
			ga_buf_putc(b, '?');
			s++;
			continue;
		}
		if (n > 1) {
			for (size_t i = 0; i < n; i++)
				ga_buf_putc(b, (char)s[i]);
			s += n;
			continue;
		}
		switch (c) {
		case '&': ga_buf_puts(b, "&amp;"); break;
		case '<': ga_buf_puts(b, "&lt;"); break;
		case '>': ga_buf_puts(b, "&gt;"); break;
		case '"': ga_buf_puts(b, "&quot;"); break;
		case '\'': ga_buf_puts(b, "&apos;"); break;
		case '\n': ga_buf_puts(b, attr ? "&#10;" : "\n"); break;
		case '\t': ga_buf_puts(b, attr ? "&#9;" : "\t"); break;
		case '\r': ga_buf_puts(b, "&#13;"); break;
		default:
			/* XML 1.0 cannot hold these even as references: shown
			 * as text, as in the other reports (safe.c). */
			if (c < 0x20 || c == 0x7f)
				ga_buf_printf(b, "\\x%02x", c);
			else
				ga_buf_putc(b, (char)c);
		}
		s++;
	}
}

static void attr(ga_buf *b, const char *name, const char *value)
{
	ga_buf_printf(b, " %s=\"", name);
	put_xml(b, value, 1);
	ga_buf_putc(b, '"');
}

static void property(ga_buf *b, const char *name, const char *value)
{
	ga_buf_puts(b, "      <property");
	attr(b, "name", name);
	attr(b, "value", value ? value : "");
	ga_buf_puts(b, "/>\n");
}

static const char *group_name(const ga_group *g)
{
	return g->name ? g->name : g->mangled ? g->mangled : "?";
}

static double seconds(double ns)
{
	return isfinite(ns) && ns > 0 ? ns / 1e9 : 0;
}

static int fails_by_severity(const ga_analysis *a, const ga_group *g, int sev)
{
	for (size_t i = 0; i < g->n_findings; i++) {
		const ga_finding *f = &a->findings[g->findings[i]];
		if (f->rule && (int)f->rule->severity >= sev)
			return 1;
	}
	return 0;
}

static int kernel_fails(const ga_analysis *a, size_t gi, const ga_report_opts *o)
{
	/* Without --fail-on the exit status is 0: no test case fails either. */
	if (o->fail_on == GA_FAIL_DEFAULT)
		return 0;
	if (o->fail_on == GA_FAIL_REGRESSION) {
		const ga_kernel_change *k = ga_comparison_for_group(o->baseline, gi);
		return k && k->regression;
	}
	return fails_by_severity(a, &a->groups[gi], ga_fail_severity(o->fail_on));
}

/* One finding, with its fix, in a failure's text. */
static void finding_text(ga_buf *t, const ga_rule *r, double estimate, const char *missing,
                         const char *of)
{
	char b[32];
	ga_buf_printf(t, "[%s] %s (%s)", r ? ga_severity_name(r->severity) : "?",
	              r && r->title ? r->title : "?", r && r->id ? r->id : "?");
	if (missing)
		ga_buf_printf(t, ": estimate needs %s", missing);
	else if (isfinite(estimate))
		ga_buf_printf(t, ": saves ~%s%% of %s", ga_fmt_pct(estimate, 0, b, sizeof(b)), of);
	ga_buf_putc(t, '\n');
	if (r && r->fix && *r->fix)
		ga_buf_printf(t, "Fix: %s\n", r->fix);
	ga_buf_putc(t, '\n');
}

/* The failure of kernel gi: message (one line) and text. */
static void failure(ga_buf *b, const ga_analysis *a, size_t gi, const ga_report_opts *o)
{
	const ga_group *g = &a->groups[gi];
	ga_buf msg = { 0 }, text = { 0 };
	char b1[32], b2[32], b3[32], b4[32];
	const char *type;

	if (o->fail_on == GA_FAIL_REGRESSION) {
		const ga_comparison *c = o->baseline;
		const ga_kernel_change *k = ga_comparison_for_group(c, gi);
		type = "regression";
		if (k->slower) {
			ga_buf_printf(&msg, "%s%% slower than the baseline",
			              ga_fmt_pct(k->change, 1, b4, sizeof(b4)));
			ga_fmt_change(k->change, b1, sizeof(b1));
			ga_buf_printf(&text, "Slower: %s -> %s per launch (%s), over the %s%% "
			              "threshold.\n\n", ga_fmt_duration(k->base_ns, b2, sizeof(b2)),
			              ga_fmt_duration(k->cur_ns, b3, sizeof(b3)), b1,
			              ga_fmt_value(c->threshold * 100, b4, sizeof(b4)));
		}
		for (size_t i = 0; i < k->n_added; i++) {
			const ga_finding_change *f = &k->added[i];
			if (!f->regression)
				continue;
			ga_buf_printf(&msg, "%snew finding: %s", msg.len ? "; " : "",
			              f->rule && f->rule->title ? f->rule->title : "?");
			ga_buf_puts(&text, "New finding ");
			finding_text(&text, f->rule, a->findings[f->finding].estimate,
			             a->findings[f->finding].estimate_missing, "this kernel");
		}
	} else {
		int sev = ga_fail_severity(o->fail_on), worst = sev;
		for (size_t i = 0; i < g->n_findings; i++) {
			const ga_finding *f = &a->findings[g->findings[i]];
			if (!f->rule || (int)f->rule->severity < sev)
				continue;
			if ((int)f->rule->severity > worst)
				worst = (int)f->rule->severity;
			ga_buf_printf(&msg, "%s%s", msg.len ? "; " : "",
			              f->rule->title ? f->rule->title : f->rule->id);
			finding_text(&text, f->rule, f->estimate, f->estimate_missing, "this kernel");
		}
		type = ga_severity_name((ga_severity)worst);
	}
	ga_buf_puts(b, "      <failure");
	attr(b, "message", msg.s ? msg.s : "");
	attr(b, "type", type);
	ga_buf_puts(b, ">");
	/* no trailing blank line inside the element */
	while (text.len && text.s[text.len - 1] == '\n')
		text.s[--text.len] = '\0';
	put_xml(b, text.s, 0);
	ga_buf_puts(b, "</failure>\n");
	ga_buf_free(&msg);
	ga_buf_free(&text);
}

/* Class, time and findings of every kernel, failing or not. */
static void system_out(ga_buf *b, const ga_analysis *a, size_t gi, const ga_report_opts *o)
{
	const ga_group *g = &a->groups[gi];
	ga_buf t = { 0 };
	char b1[32], b2[32], b3[32];

	ga_buf_printf(&t, "class %s; %s%% of GPU time; %zu %s, mean %s", ga_report_class(g->klass),
	              ga_fmt_pct(g->share, 1, b1, sizeof(b1)), g->n_launches,
	              g->n_launches == 1 ? "launch" : "launches",
	              ga_fmt_duration(g->mean_ns, b2, sizeof(b2)));
	const ga_kernel_change *k = ga_comparison_for_group(o->baseline, gi);
	if (k && k->base != GA_NO_GROUP)
		ga_buf_printf(&t, "; baseline %s, %s", ga_fmt_duration(k->base_ns, b3, sizeof(b3)),
		              isfinite(k->change) ? ga_fmt_change(k->change, b1, sizeof(b1))
		                                  : "not compared");
	else if (k)
		ga_buf_puts(&t, "; not in the baseline");
	ga_buf_putc(&t, '\n');
	for (size_t i = 0; k && i < k->n_removed; i++) {
		char *pred = ga_prediction_text(k->removed[i].rule, &k->removed[i].check);
		if (pred)
			ga_buf_printf(&t, "gone: %s\n", pred);
		free(pred);
	}
	for (size_t i = 0; i < g->n_findings; i++) {
		const ga_rule *r = a->findings[g->findings[i]].rule;
		ga_buf_printf(&t, "finding: [%s] %s (%s)\n", r ? ga_severity_name(r->severity) : "?",
		              r && r->title ? r->title : "?", r && r->id ? r->id : "?");
	}
	if (t.len)
		t.s[--t.len] = '\0';
	ga_buf_puts(b, "      <system-out>");
	put_xml(b, t.s, 0);
	ga_buf_puts(b, "</system-out>\n");
	ga_buf_free(&t);
}

static int same_shape(const ga_group *x, const ga_group *y)
{
	return memcmp(x->grid, y->grid, sizeof(x->grid)) == 0 &&
	       memcmp(x->block, y->block, sizeof(x->block)) == 0;
}

/* 1-based number of the process of pid: in the order of first launch, then
 * the processes only the timeline saw (ga_analysis.processes). */
static size_t process_number(const ga_analysis *a, int pid)
{
	for (size_t i = 0; i < a->n_processes; i++)
		if (a->processes[i].pid == pid)
			return i + 1;
	return 0;
}

/* The kernel's name, with its launch shape when another kernel has the
 * same name, and its process's number when that does not tell them apart
 * either: stable across runs, unlike a pid. */
static char *testcase_name(const ga_analysis *a, size_t gi)
{
	const ga_group *g = &a->groups[gi];
	int dup = 0, dup_shape = 0;
	for (size_t j = 0; j < a->n_groups; j++) {
		if (j == gi || strcmp(group_name(&a->groups[j]), group_name(g)) != 0)
			continue;
		dup = 1;
		dup_shape |= same_shape(&a->groups[j], g);
	}
	if (!dup)
		return ga_xstrdup(group_name(g));
	char *shape = ga_xasprintf("grid %ux%ux%u, block %ux%ux%u", g->grid[0], g->grid[1],
	                           g->grid[2], g->block[0], g->block[1], g->block[2]);
	char *name = dup_shape ? ga_xasprintf("%s [%s, process %zu]", group_name(g), shape,
	                                      process_number(a, g->pid))
	                       : ga_xasprintf("%s [%s]", group_name(g), shape);
	free(shape);
	return name;
}

static const char *fail_on_name(ga_fail_mode m)
{
	switch (m) {
	case GA_FAIL_LOW: return "low";
	case GA_FAIL_MEDIUM: return "medium";
	case GA_FAIL_HIGH: return "high";
	case GA_FAIL_REGRESSION: return "regression";
	default: return "none";
	}
}

static int program_fails(const ga_pfinding *f, const ga_report_opts *o)
{
	if (o->fail_on == GA_FAIL_DEFAULT || o->fail_on == GA_FAIL_REGRESSION || !f->rule)
		return 0;
	return (int)f->rule->severity >= ga_fail_severity(o->fail_on);
}

/* A program finding's test case: its saving of the wall time, its fix. */
static void program_case(ga_buf *b, const ga_analysis *a, const ga_pfinding *f,
                         const ga_report_opts *o)
{
	const ga_rule *r = f->rule;
	char *name = ga_xasprintf("%s (process %zu)", r->id, process_number(a, f->pid));
	ga_buf t = { 0 };

	ga_buf_puts(b, "    <testcase");
	attr(b, "classname", "gpuadvise.program");
	attr(b, "name", name);
	ga_buf_puts(b, " time=\"0\">\n");
	finding_text(&t, r, f->estimate, f->estimate_missing, "the wall time");
	if (program_fails(f, o)) {
		char *msg = ga_xasprintf("%s (%s)", r->title, r->id);
		ga_buf_puts(b, "      <failure");
		attr(b, "message", msg);
		attr(b, "type", ga_severity_name(r->severity));
		ga_buf_puts(b, ">");
		put_xml(b, t.s ? t.s : "", 0);
		ga_buf_puts(b, "</failure>\n");
		free(msg);
	} else {
		ga_buf_puts(b, "      <system-out>");
		put_xml(b, t.s ? t.s : "", 0);
		ga_buf_puts(b, "</system-out>\n");
	}
	ga_buf_puts(b, "    </testcase>\n");
	ga_buf_free(&t);
	free(name);
}

int ga_report_junit(FILE *out, const ga_analysis *a, const ga_ruleset *rs,
                    const ga_report_opts *o)
{
	static const ga_report_opts defaults = { 0 };
	const ga_profile *p = a->profile;
	ga_buf b = { 0 };
	size_t failures = 0;
	char num[64];
	(void)rs;
	if (!o)
		o = &defaults;

	int *fails = ga_xcalloc(a->n_groups ? a->n_groups : 1, sizeof(*fails));
	for (size_t i = 0; i < a->n_groups; i++) {
		fails[i] = kernel_fails(a, i, o);
		failures += fails[i] != 0;
	}
	for (size_t i = 0; i < a->n_pfindings; i++)
		failures += program_fails(&a->pfindings[i], o);
	size_t tests = a->n_groups + a->n_pfindings;
	char *dev = ga_device_label(p ? &p->device : NULL);
	char *suite = ga_xasprintf("gpuadvise: %s", dev);

	ga_buf_puts(&b, "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n");
	ga_buf_puts(&b, "<testsuites");
	attr(&b, "name", "gpuadvise");
	ga_buf_printf(&b, " tests=\"%zu\" failures=\"%zu\" errors=\"0\" time=\"%.6f\">\n",
	              tests, failures, seconds(a->total_ns));
	ga_buf_puts(&b, "  <testsuite");
	attr(&b, "name", suite);
	ga_buf_printf(&b, " tests=\"%zu\" failures=\"%zu\" errors=\"0\" skipped=\"0\" "
	              "time=\"%.6f\">\n", tests, failures, seconds(a->total_ns));

	ga_buf_puts(&b, "    <properties>\n");
	property(&b, "device", dev);
	property(&b, "fail_on", fail_on_name(o->fail_on));
	char *warning = ga_baseline_warning(o->baseline);
	if (o->baseline) {
		const ga_comparison *c = o->baseline;
		property(&b, "baseline", c->label);
		property(&b, "baseline_same_gpu", c->same_device ? "true" : "false");
		snprintf(num, sizeof(num), "%zu", c->n_regressions);
		property(&b, "regressions", num);
		if (warning)
			property(&b, "baseline_warning", warning);
	}
	ga_buf_puts(&b, "    </properties>\n");

	for (size_t gi = 0; gi < a->n_groups; gi++) {
		const ga_group *g = &a->groups[gi];
		char *name = testcase_name(a, gi);
		ga_buf_puts(&b, "    <testcase");
		attr(&b, "classname", "gpuadvise.kernel");
		attr(&b, "name", name);
		ga_buf_printf(&b, " time=\"%.6f\">\n", seconds(g->total_ns));
		if (fails[gi])
			failure(&b, a, gi, o);
		system_out(&b, a, gi, o);
		ga_buf_puts(&b, "    </testcase>\n");
		free(name);
	}
	for (size_t i = 0; i < a->n_pfindings; i++)
		program_case(&b, a, &a->pfindings[i], o);
	if (warning) {
		ga_buf_puts(&b, "    <system-err>DIFFERENT GPU: ");
		put_xml(&b, warning, 0);
		ga_buf_puts(&b, "</system-err>\n");
	}
	ga_buf_puts(&b, "  </testsuite>\n</testsuites>\n");

	int rc = 0;
	/* Bidirectional controls are valid XML, but not on a terminal. */
	if (ga_report_put_safe(out, b.s, b.len, 0) != 0 || fflush(out) != 0 || ferror(out))
		rc = -1;
	free(warning);
	free(dev);
	free(suite);
	free(fails);
	ga_buf_free(&b);
	return rc;
}

int ga_report_junit_error(FILE *out, const char *what, const char *message)
{
	ga_buf b = { 0 };
	ga_buf_puts(&b, "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n");
	ga_buf_puts(&b, "<testsuites name=\"gpuadvise\" tests=\"1\" failures=\"0\" "
	            "errors=\"1\" time=\"0\">\n");
	ga_buf_puts(&b, "  <testsuite name=\"gpuadvise\" tests=\"1\" failures=\"0\" errors=\"1\" "
	            "skipped=\"0\" time=\"0\">\n");
	ga_buf_puts(&b, "    <testcase classname=\"gpuadvise.input\"");
	attr(&b, "name", what);
	ga_buf_puts(&b, " time=\"0\">\n      <error");
	attr(&b, "message", message);
	ga_buf_puts(&b, " type=\"input\"/>\n    </testcase>\n  </testsuite>\n</testsuites>\n");
	int rc = fwrite(b.s, 1, b.len, out) == b.len && fflush(out) == 0 ? 0 : -1;
	ga_buf_free(&b);
	return rc;
}
