/* markdown.h: what the parts of the Markdown report share.  markdown.c:
 * the report; markdown_timeline.c: its Timeline section (markdown.c ->
 * markdown_timeline.c).  Private to src/report. */
#ifndef GA_REPORT_MARKDOWN_H
#define GA_REPORT_MARKDOWN_H

#include "report.h"

/* "Timeline": per process, when the analysis has timelines (nothing
 * otherwise). */
void md_timeline(ga_buf *b, const ga_analysis *a);

#endif
