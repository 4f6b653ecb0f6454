/* ruleset.c: rule sets as values: the names of classes and severities,
 * diagnostics, freeing, and look-ups by id or by classifier name (see
 * rules.h).  Reading files is load.c's, checking their keys parse.c's. */
#include "loader.h"

#include <regex.h>
#include <math.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

/* ---- names of classes and severities ---- */

static const char *const class_names[GA_CLASS__COUNT] = {
	[GA_CLASS_COMPUTE] = "compute",
	[GA_CLASS_MEMORY] = "memory",
	[GA_CLASS_LATENCY] = "latency",
	[GA_CLASS_DIVERGENCE] = "divergence",
};

static const char *const severity_names[GA_SEV__COUNT] = {
	[GA_SEV_LOW] = "low",
	[GA_SEV_MEDIUM] = "medium",
	[GA_SEV_HIGH] = "high",
};

const char *ga_class_name(ga_class c)
{
	if ((int)c < 0 || c >= GA_CLASS__COUNT)
		return "none";
	return class_names[c];
}

ga_class ga_class_from_name(const char *s)
{
	int i;

	for (i = 0; s && i < GA_CLASS__COUNT; i++) {
		if (strcmp(s, class_names[i]) == 0)
			return (ga_class)i;
	}
	return GA_CLASS_NONE;
}

const char *ga_severity_name(ga_severity s)
{
	if ((int)s < 0 || s >= GA_SEV__COUNT)
		return "unknown";
	return severity_names[s];
}

int ga_severity_from_name(const char *s)
{
	int i;

	for (i = 0; s && i < GA_SEV__COUNT; i++) {
		if (strcmp(s, severity_names[i]) == 0)
			return i;
	}
	return -1;
}

/* ---- diagnostics ---- */

void diags_vadd(ga_diags *d, const char *file, int line, int col,
                       const char *fmt, va_list ap)
{
	ga_buf b = {0};
	ga_diag g;

	ga_buf_vprintf(&b, fmt, ap);
	g.file = ga_xstrdup(file);
	g.line = line;
	g.col = col;
	g.msg = ga_buf_take(&b);
	GA_PUSH(d->v, d->n, d->cap, g);
}

void ga_diags_add(ga_diags *d, const char *file, int line, int col, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	diags_vadd(d, file, line, col, fmt, ap);
	va_end(ap);
}

void ga_diags_free(ga_diags *d)
{
	size_t i;

	for (i = 0; i < d->n; i++) {
		free(d->v[i].file);
		free(d->v[i].msg);
	}
	free(d->v);
	d->v = NULL;
	d->n = d->cap = 0;
}

void ga_diags_print(const ga_diags *d, FILE *out)
{
	size_t i;

	for (i = 0; i < d->n; i++) {
		const ga_diag *g = &d->v[i];
		if (!g->file)
			fprintf(out, "error: %s\n", g->msg);
		else if (g->line <= 0)
			fprintf(out, "%s: error: %s\n", g->file, g->msg);
		else if (g->col <= 0)
			fprintf(out, "%s:%d: error: %s\n", g->file, g->line, g->msg);
		else
			fprintf(out, "%s:%d:%d: error: %s\n", g->file, g->line, g->col, g->msg);
	}
}

/* Stable sort of d->v[from..] by position, so a file's problems come out in
 * the order they appear in it whatever order the checks ran in. */
void diags_sort_from(ga_diags *d, size_t from)
{
	size_t i, j;

	for (i = from + 1; i < d->n; i++) {
		ga_diag g = d->v[i];
		for (j = i; j > from; j--) {
			const ga_diag *p = &d->v[j - 1];
			if (p->line < g.line || (p->line == g.line && p->col <= g.col))
				break;
			d->v[j] = d->v[j - 1];
		}
		d->v[j] = g;
	}
}

/* ---- ruleset lifetime ---- */

void named_free(ga_named_expr *m, size_t n)
{
	size_t i;

	for (i = 0; i < n; i++) {
		free(m[i].name);
		free(m[i].src);
		ga_expr_free(m[i].expr);
	}
	free(m);
}

void strv_free(char **v, size_t n)
{
	size_t i;

	for (i = 0; i < n; i++)
		free(v[i]);
	free(v);
}

void ga_name_pos_free(ga_name_pos *v, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		free(v[i].what);
		free(v[i].name);
	}
	free(v);
}

void rule_free(ga_rule *r)
{
	free(r->id);
	free(r->title);
	named_free(r->metrics, r->n_metrics);
	free(r->when_src);
	ga_expr_free(r->when);
	free(r->estimate_src);
	ga_expr_free(r->estimate);
	free(r->model);
	free(r->low_src);
	ga_expr_free(r->low);
	free(r->high_src);
	ga_expr_free(r->high);
	free(r->source_lines_src);
	ga_expr_free(r->source_lines);
	free(r->affects_src);
	ga_expr_free(r->affects);
	strv_free(r->evidence, r->n_evidence);
	free(r->fix);
	free(r->example);
	free(r->explain);
	free(r->path);
	ga_name_pos_free(r->unresolved, r->n_unresolved);
	ga_name_pos_free(r->owners, r->n_owners);
	memset(r, 0, sizeof(*r));
}

void classifier_free(ga_classifier *c)
{
	size_t i;

	named_free(c->metrics, c->n_metrics);
	for (i = 0; i < c->n_order; i++) {
		free(c->order[i].when_src);
		ga_expr_free(c->order[i].when);
		free(c->order[i].score_src);
		ga_expr_free(c->order[i].score);
	}
	free(c->order);
	strv_free(c->evidence, c->n_evidence);
	free(c->path);
	memset(c, 0, sizeof(*c));
}

void owner_pattern_free(ga_owner_pattern *pt)
{
	if (pt->regex)
		regfree(pt->regex);
	free(pt->regex);
	free(pt->pattern);
	free(pt->kind);
}

void owners_free(ga_owner *v, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		for (size_t k = 0; k < v[i].n_patterns; k++)
			owner_pattern_free(&v[i].patterns[k]);
		free(v[i].patterns);
		free(v[i].name);
		free(v[i].display);
	}
	free(v);
}

void ga_ruleset_init(ga_ruleset *rs)
{
	memset(rs, 0, sizeof(*rs));
}

void ga_ruleset_free(ga_ruleset *rs)
{
	size_t i;

	for (i = 0; i < rs->n_rules; i++)
		rule_free(&rs->rules[i]);
	free(rs->rules);
	if (rs->has_classifier)
		classifier_free(&rs->classifier);
	owners_free(rs->owners, rs->n_owners);
	free(rs->owners_path);
	ga_ruleset_init(rs);
}

const ga_owner *ga_ruleset_owner(const ga_ruleset *rs, const char *name)
{
	for (size_t i = 0; i < rs->n_owners; i++) {
		if (strcmp(rs->owners[i].name, name) == 0)
			return &rs->owners[i];
	}
	return NULL;
}

/* Kernel-source advice (launch bounds, tiles, coalescing) is no use on a
 * kernel whose source the user cannot change, so a rule that names no
 * owners applies to editable ones only. */
int ga_rule_applies_to(const ga_rule *r, const ga_owner *o)
{
	if (!r->n_owners)
		return o->editable;
	for (size_t i = 0; i < r->n_owners; i++) {
		if (strcmp(r->owners[i].name, o->name) == 0 ||
		    (o->editable && strcmp(r->owners[i].name, GA_OWNERS_EDITABLE) == 0))
			return 1;
	}
	return 0;
}

const ga_rule *ga_ruleset_find(const ga_ruleset *rs, const char *id)
{
	size_t i;

	for (i = 0; i < rs->n_rules; i++) {
		if (strcmp(rs->rules[i].id, id) == 0)
			return &rs->rules[i];
	}
	return NULL;
}

/* A constant of the classifier: a named expression of its `metrics:` that
 * reads no metric (a cut-off such as the busy line), possibly through other
 * constants.  The depth guard stops a cycle, which the loader rejects anyway. */
typedef struct {
	const ga_classifier *c;
	int depth;
} const_ctx;

static int const_lookup(void *ctx, const char *name, double *out)
{
	const_ctx *k = ctx;
	size_t i;

	if (k->depth > 16)
		return -1;
	for (i = 0; i < k->c->n_metrics; i++) {
		if (strcmp(k->c->metrics[i].name, name) == 0) {
			const_ctx inner = { k->c, k->depth + 1 };
			return ga_expr_eval(k->c->metrics[i].expr, const_lookup, &inner, out, NULL, 0) ==
			       GA_EVAL_OK ? 0 : -1;
		}
	}
	return -1;
}

double ga_classifier_value(const ga_ruleset *rs, const char *name)
{
	const_ctx k = { &rs->classifier, 0 };
	double v;

	if (!rs->has_classifier || const_lookup(&k, name, &v) != 0)
		return NAN;
	return v;
}
