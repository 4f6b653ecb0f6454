/* markdown.h: what the parts of the Markdown report share.  markdown.c:
 * the report; markdown_timeline.c: its Timeline section; markdown_ranks.c:
 * its Ranks section (markdown.c -> markdown_timeline.c, markdown_ranks.c).
 * Private to src/report. */
#ifndef GA_REPORT_MARKDOWN_H
#define GA_REPORT_MARKDOWN_H

#include "report.h"

/* "Timeline": per process, when the analysis has timelines (nothing
 * otherwise). */
void md_timeline(ga_buf *b, const ga_analysis *a);

/* "Ranks", in a report of several ranks; and the end of an entry of
 * "What to do first": "; on N of M ranks (...)" (nothing in others). */
void md_ranks(ga_buf *b, const ga_analysis *a);
void md_on_ranks(ga_buf *b, const ga_analysis *a, const ga_do *d);

#endif
