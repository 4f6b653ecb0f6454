/* text_parts.c: the pieces that the sections of the text report share:
 * colours, names, wrapping, headings, evidence lists.  See text.h. */
#include "text.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

const char *tx_class_color(ga_class c)
{
	switch (c) {
	case GA_CLASS_COMPUTE: return "\033[36m";     /* cyan */
	case GA_CLASS_MEMORY: return "\033[33m";      /* yellow */
	case GA_CLASS_LATENCY: return "\033[35m";     /* magenta */
	case GA_CLASS_DIVERGENCE: return "\033[94m";  /* bright blue */
	default: return "";
	}
}

const char *tx_severity_color(ga_severity s)
{
	switch (s) {
	case GA_SEV_HIGH: return "\033[1;31m";        /* bold red */
	case GA_SEV_MEDIUM: return "\033[33m";        /* yellow */
	case GA_SEV_LOW: return "\033[32m";           /* green */
	default: return "";
	}
}

void tx_severity_tag(const tctx *t, ga_buf *s, ga_severity sev)
{
	if (t->color)
		ga_buf_printf(s, "[%s%s" C_RESET "] ", tx_severity_color(sev), ga_report_severity(sev));
	else
		ga_buf_printf(s, "[%s] ", ga_report_severity(sev));
}

/* Append text, wrapped in colour when colour is on. */
void tx_paint(tctx *t, const char *code, const char *text)
{
	if (t->color && code && *code)
		ga_buf_printf(&t->b, "%s%s" C_RESET, code, text);
	else
		ga_buf_puts(&t->b, text);
}

const char *tx_group_name(const ga_group *g)
{
	return g->name ? g->name : g->mangled ? g->mangled : "?";
}

/* The owner's display name follows a kernel the user did not write, so
 * that library kernels read as such: "nvjet_tst_… (cuBLAS)". */
static char *kernel_name(const ga_group *g, size_t max_cols, int shape_number)
{
	char tag[96] = "";
	int n = 0;
	if (g->name_peers > 1 && shape_number)
		n = snprintf(tag, sizeof(tag), " #%zu", g->name_index);
	if (g->owner && strcmp(g->owner->name, GA_OWNER_DEFAULT) != 0 && g->owner->display)
		snprintf(tag + n, sizeof(tag) - (size_t)n, " (%.40s)", g->owner->display);
	size_t tw = ga_text_width(tag);
	char *name = ga_short_name(tx_group_name(g), max_cols > tw + 8 ? max_cols - tw : 8);
	if (!*tag)
		return name;
	char *tagged = ga_xasprintf("%s%s", name, tag);
	free(name);
	return tagged;
}

char *tx_kernel_name(const ga_group *g, size_t max_cols)
{
	return kernel_name(g, max_cols, 1);
}

char *tx_kernel_name_all_shapes(const ga_group *g, size_t max_cols)
{
	return kernel_name(g, max_cols, 0);
}

const char *tx_rule_title(const ga_rule *r)
{
	if (!r)
		return "?";
	return r->title ? r->title : r->id ? r->id : "?";
}

/* Join a formatted value to its unit ("1.00 ms") so wrapping keeps them on
 * one line; works in place and returns s. */
char *tx_nb(char *s)
{
	for (char *c = s; *c; c++)
		if (*c == ' ')
			*c = NBSP;
	return s;
}

/* A duration whose number and unit stay together. */
const char *tx_dur_nb(double ns, char *buf, size_t len)
{
	ga_fmt_duration(ns, buf, len);
	return tx_nb(buf);
}

/* Wrap the contents of a scratch buffer (which may hold colour codes), then
 * free it. */
void tx_wrap_buf(tctx *t, ga_buf *s, size_t col, size_t indent)
{
	ga_wrap(&t->b, s->s ? s->s : "", col, indent, t->width);
	ga_buf_free(s);
}

/* ---- pieces ------------------------------------------------------------ */

void tx_heading(tctx *t, const char *title)
{
	tx_paint(t, C_BOLD, title);
	ga_buf_putc(&t->b, '\n');
	for (size_t i = ga_text_width(title); i > 0; i--)
		ga_buf_putc(&t->b, '-');
	ga_buf_putc(&t->b, '\n');
}

/* "name = value, name = value" with each pair kept on one line. */
void tx_evidence_list(ga_buf *s, const ga_evidence *ev, size_t n)
{
	char v[64];
	for (size_t i = 0; i < n; i++)
		ga_buf_printf(s, "%s%s%c=%c%s", i ? ", " : "", ev[i].name ? ev[i].name : "?",
		              NBSP, NBSP, ga_fmt_value(ev[i].value, v, sizeof(v)));
}

void tx_dims(char *buf, size_t len, const unsigned d[3])
{
	snprintf(buf, len, "%ux%ux%u", d[0], d[1], d[2]);
}

