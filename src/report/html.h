/* html.h: what the parts of the HTML report share.  html.c: the page, the
 * roofline, "What to do first", the kernel table; html_timeline.c: the
 * Timeline section (each process's figures, where its wall time went, a
 * strip chart of the representative iteration) and the pieces of a "What
 * to do first" entry, the program findings' among them; html_ranks.c: the
 * Ranks section of a report of several ranks (html.c -> html_timeline.c ->
 * html_ranks.c).  Private to src/report. */
#ifndef GA_REPORT_HTML_H
#define GA_REPORT_HTML_H

#include "report.h"

/* The Timeline section's styles, for the page's <style>. */
extern const char ht_timeline_css[];

/* s with & < > " ' as entities. */
void ht_esc(ga_buf *b, const char *s);
/* "[high] " as a span of its severity's colour. */
void ht_severity_tag(ga_buf *b, ga_severity sev);
/* "<br>evidence: a = 1, b = 2" (nothing when n is 0). */
void ht_evidence(ga_buf *b, const ga_evidence *ev, size_t n);
/* The rule's model ("<br>model: ...") and fix ("<p>...</p>"). */
void ht_rule_notes(ga_buf *b, const ga_rule *r);

/* "Timeline": per process, when the analysis has timelines. */
void ht_timeline(ga_buf *b, const ga_analysis *a);
/* A program finding as one <li> of "What to do first"; d: its entry
 * (NULL: none). */
void ht_program_entry(ga_buf *b, const ga_analysis *a, const ga_pfinding *f, const ga_do *d);

/* "Ranks", in a report of several ranks (nothing otherwise); and an
 * entry's "<br>on N of M ranks" (nothing when d is NULL or is on none). */
void ht_ranks(ga_buf *b, const ga_analysis *a);
void ht_on_ranks(ga_buf *b, const ga_analysis *a, const ga_do *d);

#endif
