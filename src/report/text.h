/* text.h: what the parts of the text report share.  text.c: header, "What
 * to do first", roofline, baseline, notes; text_kernel.c: the kernel blocks
 * and "How to fix"; text_ops.c: operations from NVTX ranges; text_ranks.c:
 * the ranks of a data-parallel job; text_parts.c:
 * the pieces they all use (below them: text.c -> text_kernel.c, text_ops.c
 * -> text_parts.c).  Private to src/report. */
#ifndef GA_REPORT_TEXT_H
#define GA_REPORT_TEXT_H

#include "report.h"

#define NBSP GA_NBSP
#define C_RESET "\033[0m"
#define C_BOLD "\033[1m"

typedef struct {
	ga_buf b;
	int color;
	size_t width;
	int verbose;
	int per_launch;
	int several;        /* launches from several processes or files */
} tctx;

/* text_parts.c */
const char *tx_class_color(ga_class c);
const char *tx_severity_color(ga_severity s);
/* "[high] " into s, the severity in its colour when colour is on. */
void tx_severity_tag(const tctx *t, ga_buf *s, ga_severity sev);
/* Append text, wrapped in colour when colour is on. */
void tx_paint(tctx *t, const char *code, const char *text);
const char *tx_group_name(const ga_group *g);
const char *tx_rule_title(const ga_rule *r);
/* A kernel's name shortened to max_cols columns, " #n" added when other
 * kernels' names read the same (ga_group.name_index); malloc'd. */
char *tx_kernel_name(const ga_group *g, size_t max_cols);
/* The same without the shape number: an entry over all its launch shapes. */
char *tx_kernel_name_all_shapes(const ga_group *g, size_t max_cols);
/* Join a formatted value to its unit ("1.00 ms") in place; returns s. */
char *tx_nb(char *s);
const char *tx_dur_nb(double ns, char *buf, size_t len);
/* Wrap a scratch buffer's contents into the report, then free it. */
void tx_wrap_buf(tctx *t, ga_buf *s, size_t col, size_t indent);
void tx_heading(tctx *t, const char *title);
/* "name = value, name = value" with each pair kept on one line. */
void tx_evidence_list(ga_buf *s, const ga_evidence *ev, size_t n);
void tx_dims(char *buf, size_t len, const unsigned d[3]);

/* The "Kernels" section, and "How to fix" (text_kernel.c). */
void tx_kernels(tctx *t, const ga_analysis *a);
void tx_how_to_fix(tctx *t, const ga_analysis *a);

/* "Operations", from NVTX ranges, when the analysis lists them (text_ops.c). */
void tx_operations(tctx *t, const ga_analysis *a);

/* "Timeline", where each process's time went, and a program finding's
 * entry in "What to do first" (text_timeline.c). */
void tx_timeline(tctx *t, const ga_analysis *a);
void tx_program_entry(tctx *t, const ga_analysis *a, const ga_pfinding *f, size_t i);

/* "Ranks", a row per rank and the stragglers, in a report of several
 * ranks; an entry's "on N of M ranks" line (text_ranks.c). */
void tx_ranks(tctx *t, const ga_analysis *a);
void tx_on_ranks(tctx *t, const ga_analysis *a, const ga_do *d);

#endif
