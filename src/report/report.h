/* report.h: output formats.  Each format is a table entry with one write
 * callback; main picks one by name.  Only reporters format text, colour,
 * JSON or Markdown. */
#ifndef GA_REPORT_H
#define GA_REPORT_H

#include <stdio.h>

#include "../rules/engine.h"

typedef struct {
	int color;          /* ANSI colour (text only); main decides: tty and no NO_COLOR */
	int verbose;        /* include notes */
	int per_launch;     /* list every launch of each group */
	int width;          /* terminal width for wrapping, default 80 */
	const char *recorded_label;  /* non-NULL: "recorded on <GPU>, <date>" banner */
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

/* Individual formats, also used by ga_reporters[]. */
int ga_report_text(FILE *out, const ga_analysis *a, const ga_ruleset *rs, const ga_report_opts *o);
int ga_report_json(FILE *out, const ga_analysis *a, const ga_ruleset *rs, const ga_report_opts *o);
int ga_report_markdown(FILE *out, const ga_analysis *a, const ga_ruleset *rs, const ga_report_opts *o);

/* The JSON report as a jansson json_t* (new reference), for callers that
 * combine several. */
void *ga_report_json_value(const ga_analysis *a, const ga_ruleset *rs);

/* Helpers shared by formats. */
const char *ga_fmt_duration(double ns, char *buf, size_t len);  /* "1.23 ms" */

#endif
