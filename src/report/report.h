/* report.h: output formats.  Each format is a table entry with one write
 * callback; main picks one by name.  Only reporters format text, colour,
 * JSON or Markdown, and they only format: every number they print is in the
 * analysis value (analyze.h) or the baseline comparison (baseline.h). */
#ifndef GA_REPORT_H
#define GA_REPORT_H

#include <stdio.h>

#include "../analyze/analyze.h"
#include "../analyze/baseline.h"

/* A kernel launched with more launch shapes than this (a wavefront walking
 * its diagonals, a batch of every size) is one row of the Markdown and
 * HTML kernel tables (ga_group.kernel_shapes), as the text report's tail
 * folds one of more shapes than it has kernel blocks. */
#define GA_REPORT_FOLD_SHAPES 8
/* Is g's kernel one row of those tables (a row per shape with --verbose
 * in Markdown)?  Its row is its first group's, ga_group.kernel_first. */
static inline int ga_report_folded(const ga_group *g)
{
	return g->kernel_shapes > GA_REPORT_FOLD_SHAPES;
}

/* --fail-on as the reporters see it (JUnit marks failing kernels with it).
 * Zero, the default, means not given: JUnit then fails kernels with a
 * finding of high severity. */
typedef enum {
	GA_FAIL_DEFAULT = 0,
	GA_FAIL_LOW,
	GA_FAIL_MEDIUM,
	GA_FAIL_HIGH,
	GA_FAIL_REGRESSION,     /* a regression against the baseline */
} ga_fail_mode;

/* One input file of the analysed profile: its launches are
 * profile->launches[first_launch .. first_launch + n_launches). */
typedef struct {
	const char *path;
	size_t first_launch, n_launches;
} ga_report_input;

typedef struct {
	int color;          /* ANSI colour (text only); main decides: tty and no NO_COLOR */
	int verbose;        /* include notes */
	int per_launch;     /* list every launch of each group */
	int width;          /* terminal width for wrapping, default 80 */
	const char *recorded_label;  /* non-NULL: "recorded on <GPU>, <date>" banner */
	/* Added with --baseline; zero for callers that predate them. */
	const ga_comparison *baseline;  /* non-NULL: also report the comparison */
	ga_fail_mode fail_on;
	const ga_report_input *inputs;  /* the files the profile came from, or NULL */
	size_t n_inputs;
	/* Added with the roofline: draw it in the text report (main sets it on
	 * a terminal or with --roofline). */
	int roofline;
	/* Added with SARIF: the source root (--source-root) as an absolute
	 * path without a trailing '/', or NULL; source file URIs are relative
	 * to it. */
	const char *source_root;
} ga_report_opts;

typedef struct {
	const char *name;   /* "text", "json", "markdown" */
	const char *desc;
	int (*write)(FILE *out, const ga_analysis *a, const ga_ruleset *rs,
	             const ga_report_opts *o);
} ga_reporter;

const ga_reporter *ga_reporter_find(const char *name);
extern const ga_reporter ga_reporters[];
extern const size_t ga_n_reporters;

/* The JSON report's timeline, program findings and "What to do first"
 * (json_timeline.c): json_t * arrays, new references. */
void *ga_report_json_timeline(const ga_analysis *a);
void *ga_report_json_pfindings(const ga_analysis *a);
void *ga_report_json_first(const ga_analysis *a);
/* The JSON report's "ranks" (json_ranks.c), in a report of several ranks:
 * a json_t * object, new reference. */
void *ga_report_json_ranks(const ga_analysis *a);

/* Individual formats, also used by ga_reporters[]. */
int ga_report_text(FILE *out, const ga_analysis *a, const ga_ruleset *rs, const ga_report_opts *o);
int ga_report_json(FILE *out, const ga_analysis *a, const ga_ruleset *rs, const ga_report_opts *o);
int ga_report_markdown(FILE *out, const ga_analysis *a, const ga_ruleset *rs, const ga_report_opts *o);
int ga_report_junit(FILE *out, const ga_analysis *a, const ga_ruleset *rs, const ga_report_opts *o);
int ga_report_html(FILE *out, const ga_analysis *a, const ga_ruleset *rs, const ga_report_opts *o);
int ga_report_sarif(FILE *out, const ga_analysis *a, const ga_ruleset *rs, const ga_report_opts *o);
/* The SARIF log as a jansson json_t* (new reference). */
void *ga_report_sarif_value(const ga_analysis *a, const ga_report_opts *o);
/* A JUnit document with one test case in error: what (a file name) could
 * not be read, and why.  CI keeps a report even when the input was bad,
 * instead of an empty file from a shell redirection.  0 or -1. */
int ga_report_junit_error(FILE *out, const char *what, const char *message);

/* The JSON report as a jansson json_t* (new reference), for callers that
 * combine several. */
void *ga_report_json_value(const ga_analysis *a, const ga_ruleset *rs);
/* The same with the report options: "processes" names the input files and
 * "baseline" holds the comparison when o->baseline is set (o may be NULL). */
void *ga_report_json_value_opts(const ga_analysis *a, const ga_ruleset *rs,
                                const ga_report_opts *o);

/* Helpers shared by formats. */
/* Class and severity names for display: "unclassified" / "?" when unset. */
const char *ga_report_class(ga_class c);
const char *ga_report_severity(ga_severity s);
const char *ga_fmt_duration(double ns, char *buf, size_t len);  /* "1.23 ms" */

/* Helpers added with the reporters (shared by text, JSON and Markdown).
 * Those taking buf write into it (always NUL-terminated) and return it. */
/* A metric or evidence value with sensible precision: "16", "0.375", "45.2",
 * "1234", "1.2e+10"; NAN -> "n/a". */
const char *ga_fmt_value(double v, char *buf, size_t len);
/* A fraction as a rounded percentage without the sign: 0.375 -> "38"
 * (decimals = 0) or "37.5" (decimals = 1); a positive value that rounds to
 * zero gives "<1" / "<0.1"; NAN -> "n/a". */
const char *ga_fmt_pct(double frac, int decimals, char *buf, size_t len);
/* A byte count in decimal units: "512 B", "65.5 kB", "67.8 MB", "1.07 GB". */
const char *ga_fmt_bytes(double v, char *buf, size_t len);
/* A share (0..1) as a percentage with one decimal, ga_fmt_pct's way; one
 * that is not a number reads as 0. */
const char *ga_fmt_share(double frac, char *buf, size_t len);
/* one when n is 1, else many. */
/* A share as a table cell: "82.5%", or "-" when there is none. */
const char *ga_fmt_pct_cell(double frac, char *buf, size_t len);
const char *ga_plural(size_t n, const char *one, const char *many);
/* A speedup factor: "3.9x", "12x", ">100x" (infinity too); NAN -> "n/a". */
const char *ga_fmt_speedup(double s, char *buf, size_t len);
/* A fix's range, each end at ga_fmt_speedup's precision: "2-10x",
 * "1.5-4.5x", "2x" when both ends read the same, "11x to >100x", ">100x";
 * NAN -> "n/a". */
const char *ga_fmt_speedup_range(double lo, double hi, char *buf, size_t len);
/* A range whose ends are more than 10x apart: its model could not tell
 * two cases apart.  ga_range_wide_words: the words that say so, " (a
 * range over 10x wide: ...)", or "" for any other range;
 * ga_fmt_fix_range writes the range as ga_fmt_speedup_range does, those
 * words after it. */
int ga_range_wide(double lo, double hi);
const char *ga_range_wide_words(double lo, double hi);

/* The timeline's sentences every format shares (timeline_words.c), plain
 * text appended to s, durations written by dur: a direction's copies (0,
 * nothing written, when there are none), the host's calls, the loop (0
 * when none was found). */
typedef const char *(*ga_dur_fmt)(double ns, char *buf, size_t len);
int ga_tl_copies_words(ga_buf *s, const ga_tl_device *d, int dir, ga_dur_fmt dur);
void ga_tl_host_words(ga_buf *s, const ga_timeline *tl, ga_dur_fmt dur);
int ga_tl_loop_words(ga_buf *s, const ga_tl_proc *pr, ga_dur_fmt dur);
/* A straggler's sentence after "rank R (HOST": its pid, its compute time
 * against the median, and, where its finding has an estimate, the saving. */
void ga_straggler_words(ga_buf *s, const ga_analysis *a, const ga_rank *k, ga_dur_fmt dur);
const char *ga_fmt_fix_range(double lo, double hi, char *buf, size_t len);
/* Columns a UTF-8 string takes on a terminal: code points, not counting
 * ANSI escape sequences (wide characters count as one). */
size_t ga_text_width(const char *s);
/* The same for the n bytes at s (no NUL among them). */
size_t ga_text_width_n(const char *s, size_t n);
/* A kernel name made to fit in max_cols columns, trying in turn: without a
 * leading "void ", without its parameter list ("f(…)"), with its template
 * arguments collapsed ("K<…>(…)"), cut with an ellipsis.  Returns a
 * malloc'd string; the caller frees it. */
char *ga_short_name(const char *name, size_t max_cols);

/* Terminal safety (safe.c): control characters, bidirectional controls and
 * bytes that are not UTF-8 shown as \x1b or \u202e.  ga_report_safe: one
 * string from the profile (newline and tab escaped too), malloc'd.
 * ga_report_put_safe: a whole report to out, keeping its newlines and tabs
 * and, with keep_sgr, its colour sequences; 0 or -1 on a write error. */
char *ga_report_safe(const char *s);
int ga_report_put_safe(FILE *out, const char *s, size_t n, int keep_sgr);

/* Helpers added with --baseline and the per-process summary. */
/* A change as a signed percentage with one decimal: 0.25 -> "+25.0%",
 * -0.031 -> "-3.1%", a change that rounds to zero -> "0.0%"; NAN -> "n/a". */
const char *ga_fmt_change(double frac, char *buf, size_t len);
/* --fail-on as a ga_severity, for finding-based failures: GA_FAIL_DEFAULT
 * and GA_FAIL_REGRESSION give the severity of new findings that count as
 * regressions (high). */
int ga_fail_severity(ga_fail_mode m);

/* The input files holding launches of process pid (from o->inputs), in
 * *out: a malloc'd array of borrowed strings, which the caller frees.
 * Returns the count. */
size_t ga_report_process_files(const ga_analysis *a, const ga_report_opts *o, int pid,
                               const char ***out);
/* Whether the report should have a per-process section: launches from
 * more than one process, or more than one input file. */
int ga_report_several_processes(const ga_analysis *a, const ga_report_opts *o);
/* The warning for a baseline recorded on another GPU ("The baseline was
 * recorded on X, this profile on Y: ..."), malloc'd; NULL when the GPUs
 * agree. */
char *ga_baseline_warning(const ga_comparison *c);
/* A gone finding's prediction against the measured change, as every
 * format words it: "finding ID: predicted 2.3x (1.8-3x), measured 2.1x"
 * ("no estimate" in place of the prediction when it had none), malloc'd;
 * NULL when the prediction was not checked (see ga_prediction). */
char *ga_prediction_text(const ga_rule *r, const ga_prediction *p);
/* A device as "NAME (CHIP)", malloc'd. */
char *ga_device_label(const ga_device *d);

/* Offset of the '(' that opens a demangled name's parameter list (the
 * first outside template brackets, "(anonymous namespace)" skipped), or -1
 * when it has none. */
long ga_report_params_start(const char *name);

/* The tail of a path after its last '/'. */
const char *ga_report_basename(const char *path);
/* s as a JSON string (json_t *, new reference): bytes that are not valid
 * UTF-8 (a mangled name from an odd toolchain, say) become '?' rather than
 * losing the whole value. */
void *ga_report_json_string(const char *s);

/* ---- wrapping (wrap.c) --------------------------------------------------- */

/* Joins words that wrapping keeps together; written as a blank. */
#define GA_NBSP '\x1f'
/* Append n blanks. */
void ga_spaces(ga_buf *b, size_t n);
/* Append text wrapped at width.  The first line continues at column col
 * (the caller has written that much already); later lines start with
 * indent blanks.  A '\n' in text is a hard break and blank lines are kept.
 * Always ends with a newline. */
void ga_wrap(ga_buf *b, const char *text, size_t col, size_t indent, size_t width);

/* ---- drawing the roofline (roofplot.c) ---------------------------------- */

/* Whether a precision's flat roof is drawn: its peak is known, and it is
 * FP32 or FP64, or some placed kernel does work in it. */
int ga_roof_prec_drawn(const ga_roofline *r, ga_roof_prec p);
/* The plot's extent in decades (log10): intensity x0..x1 (FLOP/byte) and
 * FLOP/s y0..y1, covering the placed kernels, the drawn roofs and their
 * DRAM ridges with some margin.  Returns 0, or -1 when nothing is placed. */
int ga_roof_axes(const ga_roofline *r, double *x0, double *x1, double *y0, double *y1);
/* The terminal chart: a log-log plot in Unicode braille and box drawing, at
 * most width columns (>= 60), appended to b.  Kernel i is drawn as the
 * character ga_roof_label(i). */
void ga_roof_plot(ga_buf *b, const ga_roofline *r, size_t width);
/* Whether some placed kernel is placed by its L2 or L1 intensity. */
int ga_roof_placed_off_dram(const ga_roofline *r);
/* The one-character label of kernel i: 'A'..'Z', 'a'..'z', or 0 beyond. */
char ga_roof_label(size_t i);
/* FLOP/s or bytes/s with an SI prefix and unit, three significant digits:
 * "66.9 TFLOP/s", "4.81 TB/s"; NAN -> "n/a". */
const char *ga_fmt_rate(double v, const char *unit, char *buf, size_t len);

#endif
