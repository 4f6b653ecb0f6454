/* check.c: what needs the whole rule set: cross-file checks (ids, names a
 * rule borrows from the classifier), the lists of metrics to collect and
 * the collector's trigger for source lines. */
#include "loader.h"

#include <stdlib.h>
#include <string.h>

/* ---- whole-set checks ---- */

static const ga_classifier *classifier_of(const ga_ruleset *rs)
{
	return rs->has_classifier ? &rs->classifier : NULL;
}

/* Can a rule (named expressions m) or the classifier (m is its own, cls
 * NULL) refer to this name? */
static int name_known(const char *name, const ga_named_expr *m, size_t n_m,
                      const ga_classifier *cls)
{
	return is_metric_name(name) || named_index(m, n_m, name) >= 0 ||
	       (cls && named_index(cls->metrics, cls->n_metrics, name) >= 0);
}

struct unknown_walk {
	ga_diags *d;
	const ga_rule *r;
	const ga_classifier *cls;
	const char *what;
};

static void report_unknown(void *ctx, const char *name)
{
	struct unknown_walk *w = ctx;

	int line = w->r->line, col = 0;

	if (name_known(name, w->r->metrics, w->r->n_metrics, w->cls))
		return;
	/* Where the loader saw it, when it kept the place. */
	for (size_t i = 0; i < w->r->n_unresolved; i++) {
		const ga_name_pos *np = &w->r->unresolved[i];
		if (strcmp(np->what, w->what) == 0 && strcmp(np->name, name) == 0) {
			line = np->line;
			col = np->col;
			break;
		}
	}
	ga_diags_add(w->d, w->r->path, line, col, "rule '%s': unknown name '%s' in '%s' "
	             "(not a named expression of the rule or the classifier; metric names "
	             "contain '__')", w->r->id, name, w->what);
}

static void validate_rule_names(ga_diags *d, const ga_rule *r, const ga_classifier *cls)
{
	struct unknown_walk w = { d, r, cls, NULL };
	char *what;
	size_t i;

	for (i = 0; i < r->n_metrics; i++) {
		what = ga_xasprintf("metrics.%s", r->metrics[i].name);
		w.what = what;
		ga_expr_foreach_name(r->metrics[i].expr, report_unknown, &w);
		free(what);
	}
	w.what = "when";
	ga_expr_foreach_name(r->when, report_unknown, &w);
	w.what = "estimate";
	ga_expr_foreach_name(r->estimate, report_unknown, &w);
	w.what = "low";
	ga_expr_foreach_name(r->low, report_unknown, &w);
	w.what = "high";
	ga_expr_foreach_name(r->high, report_unknown, &w);
	w.what = "source_lines";
	ga_expr_foreach_name(r->source_lines, report_unknown, &w);
	for (i = 0; i < r->n_evidence; i++) {
		if (!name_known(r->evidence[i], r->metrics, r->n_metrics, cls))
			ga_diags_add(d, r->path, r->line, 0, "rule '%s': evidence '%s' is neither a "
			             "named expression of the rule or the classifier nor a metric "
			             "name (metric names contain '__')", r->id, r->evidence[i]);
	}
}

/* ---- the source-line trigger ---- */

/* One rule's inlined `source_lines` may be this long.  Inlining copies a
 * named expression at every use, so a hostile file could double the text
 * with each of its 256 names; the shipped rules need about 2 KB. */
#define MAX_SOURCE_TRIGGER (64 * 1024)

/* Which named expressions a name may refer to where it is printed: the
 * rule's first n_rule (none inside the classifier's), then the
 * classifier's first n_cls, as the engine resolves them. */
struct inliner {
	const ga_rule *r;
	const ga_classifier *cls;
	size_t n_rule, n_cls;
	size_t start;             /* where the rule's text starts in out */
	int *too_long;
};

static int inline_name(void *ctx, const char *name, ga_buf *out)
{
	const struct inliner *in = ctx;
	struct inliner inner = *in;
	const ga_named_expr *def = NULL;
	ssize_t k = in->r ? named_index(in->r->metrics, in->n_rule, name) : -1;

	if (*in->too_long || out->len - in->start > MAX_SOURCE_TRIGGER) {
		*in->too_long = 1;
		return 1;
	}
	if (k >= 0) {
		def = &in->r->metrics[k];
		inner.n_rule = (size_t)k;
	} else if (in->cls && (k = named_index(in->cls->metrics, in->n_cls, name)) >= 0) {
		def = &in->cls->metrics[k];
		inner.r = NULL;
		inner.n_cls = (size_t)k;
	}
	if (!def)
		return 0;
	ga_buf_putc(out, '(');
	ga_expr_print(def->expr, inline_name, &inner, out);
	ga_buf_putc(out, ')');
	return 1;
}

/* r's `source_lines` with every named expression inlined in parentheses,
 * appended to out, and parsed back as the collector will, or NULL with why
 * set: longer than MAX_SOURCE_TRIGGER, beyond the parser's nesting limits,
 * or holding a tab or a newline, which separate the lines of the trigger
 * (the printer writes neither; this keeps it so). */
static ga_expr *rule_trigger(const ga_rule *r, const ga_classifier *cls, ga_buf *out,
                             char *why, size_t len)
{
	int too_long = 0;
	size_t start = out->len, off;
	struct inliner in = { r, cls, r->n_metrics, cls ? cls->n_metrics : 0, start, &too_long };
	ga_expr *e = NULL;
	char msg[256];

	ga_expr_print(r->source_lines, inline_name, &in, out);
	if (too_long || out->len - start > MAX_SOURCE_TRIGGER)
		snprintf(why, len, "is longer than %d KiB once its named expressions are "
		         "written out", MAX_SOURCE_TRIGGER / 1024);
	else if (strpbrk(out->s + start, "\t\n"))
		snprintf(why, len, "holds a tab or a newline once its named expressions are "
		         "written out");
	else if (!(e = ga_expr_parse(out->s + start, &off, msg, sizeof(msg))))
		snprintf(why, len, "with its named expressions written out does not parse: %s",
		         msg);
	return e;
}

struct pseudo_find {
	const char *hit;
};

static void find_pseudo(void *ctx, const char *name)
{
	struct pseudo_find *f = ctx;

	if (!f->hit && is_pseudo_metric(name))
		f->hit = name;
}

/* What the loader could not check in a rule's `source_lines`: the
 * classifier's names it uses must not read pseudo metrics either, and the
 * text written out must be short enough and parse. */
static void validate_trigger(ga_diags *d, const ga_rule *r, const ga_classifier *cls)
{
	char why[320];
	ga_buf b = {0};
	ga_expr *e = rule_trigger(r, cls, &b, why, sizeof(why));
	struct pseudo_find f = { NULL };

	ga_buf_free(&b);
	if (!e) {
		ga_diags_add(d, r->path, r->line, 0, "rule '%s': 'source_lines' %s", r->id, why);
		return;
	}
	ga_expr_foreach_name(e, find_pseudo, &f);
	if (f.hit)
		ga_diags_add(d, r->path, r->line, 0, "rule '%s': 'source_lines' reads '%s' "
		             "through a classifier name; the collector does not measure it",
		             r->id, f.hit);
	ga_expr_free(e);
}

char *ga_ruleset_source_trigger(const ga_ruleset *rs)
{
	ga_buf b = {0};
	char why[320];
	size_t i;

	for (i = 0; i < rs->n_rules; i++) {
		const ga_rule *r = &rs->rules[i];
		size_t before;
		ga_expr *e;
		if (!r->source_lines)
			continue;
		before = b.len;
		ga_buf_printf(&b, "%s\t", r->id);
		e = rule_trigger(r, classifier_of(rs), &b, why, sizeof(why));
		if (!e) {
			/* Left out; ga_ruleset_validate reports it. */
			b.len = before;
			b.s[before] = '\0';
			continue;
		}
		ga_buf_putc(&b, '\n');
		ga_expr_free(e);
	}
	if (!b.len) {
		ga_buf_free(&b);
		return NULL;
	}
	return ga_buf_take(&b);
}

static void find_source_name(void *ctx, const char *name)
{
	*(int *)ctx |= ga_str_has_prefix(name, "source__");
}

char *ga_ruleset_source_opcodes(const ga_ruleset *rs)
{
	ga_buf b = {0};

	for (size_t i = 0; i < rs->n_rules; i++) {
		const ga_rule *r = &rs->rules[i];
		int reads = 0;
		if (!r->source_lines)
			continue;
		for (size_t k = 0; k < r->n_metrics; k++)
			ga_expr_foreach_name(r->metrics[k].expr, find_source_name, &reads);
		const ga_expr *parts[] = {r->when, r->estimate, r->low, r->high};
		for (size_t k = 0; k < GA_ARRAY_LEN(parts); k++)
			if (parts[k])
				ga_expr_foreach_name(parts[k], find_source_name, &reads);
		if (reads)
			ga_buf_printf(&b, "%s%s", b.len ? "," : "", r->id);
	}
	return b.len ? ga_buf_take(&b) : (ga_buf_free(&b), NULL);
}

char *ga_ruleset_source_skip(const ga_ruleset *rs)
{
	ga_buf b = {0};
	int any = 0;

	for (size_t i = 0; i < rs->n_owners; i++) {
		const ga_owner *o = &rs->owners[i];
		for (size_t k = 0; k < o->n_patterns; k++) {
			const ga_owner_pattern *pt = &o->patterns[k];
			if (pt->how == GA_OWNER_MODULE || strpbrk(pt->pattern, "\t\n"))
				continue;
			ga_buf_printf(&b, "%s%s\t%s\n", o->editable ? "!" : "",
			              pt->how == GA_OWNER_GLOB ? "glob" : "regex", pt->pattern);
			any |= !o->editable;
		}
	}
	if (!any) {
		ga_buf_free(&b);
		return NULL;
	}
	return ga_buf_take(&b);
}

char *ga_ruleset_no_replay(const ga_ruleset *rs)
{
	ga_buf b = {0};
	int any = 0;

	for (size_t i = 0; i < rs->n_owners; i++) {
		const ga_owner *o = &rs->owners[i];
		for (size_t k = 0; k < o->n_patterns; k++) {
			const ga_owner_pattern *pt = &o->patterns[k];
			int comm = pt->kind && strcmp(pt->kind, GA_KIND_COMM) == 0;
			if (pt->how == GA_OWNER_MODULE || strpbrk(pt->pattern, "\t\n"))
				continue;
			ga_buf_printf(&b, "%s%s\t%s\n", comm ? "" : "!",
			              pt->how == GA_OWNER_GLOB ? "glob" : "regex", pt->pattern);
			any |= comm;
		}
	}
	if (!any) {
		ga_buf_free(&b);
		return NULL;
	}
	return ga_buf_take(&b);
}

/* A rule's owners must be defined by the owners file; without one every
 * kernel is the user's and the names are not checked. */
static void validate_rule_owners(ga_diags *d, const ga_ruleset *rs, const ga_rule *r)
{
	for (size_t i = 0; rs->n_owners && i < r->n_owners; i++) {
		const ga_name_pos *np = &r->owners[i];
		if (strcmp(np->name, GA_OWNERS_EDITABLE) != 0 && !ga_ruleset_owner(rs, np->name))
			ga_diags_add(d, r->path, np->line, np->col, "rule %s: unknown owner '%s' "
			             "(not defined in %s)", r->id, np->name, rs->owners_path);
	}
}

int ga_ruleset_validate(const ga_ruleset *rs, ga_diags *d)
{
	const ga_classifier *cls = classifier_of(rs);
	size_t n0 = d->n, i, j;

	if (!cls) {
		ga_diags_add(d, NULL, 0, 0, "no classifier loaded: a rules directory must hold "
		             "classify.yaml with a top-level 'classifier' key");
	} else {
		for (i = 0; i < cls->n_evidence; i++) {
			if (!name_known(cls->evidence[i], cls->metrics, cls->n_metrics, NULL))
				ga_diags_add(d, cls->path, 0, 0, "classifier: evidence '%s' is neither "
				             "a named expression nor a metric name", cls->evidence[i]);
		}
	}
	for (i = 0; i < rs->n_rules; i++) {
		const ga_rule *r = &rs->rules[i];
		for (j = 0; j < i; j++) {
			if (strcmp(rs->rules[j].id, r->id) == 0)
				ga_diags_add(d, r->path, r->line, 0, "rule id '%s' is also used by %s",
				             r->id, rs->rules[j].path);
		}
		validate_rule_names(d, r, cls);
		validate_rule_owners(d, rs, r);
		if (r->source_lines)
			validate_trigger(d, r, cls);
	}
	return (int)(d->n - n0);
}

/* ---- metric names ---- */

struct metric_walk {
	struct strlist *out;
	const ga_named_expr *m;
	size_t n_m;
	const ga_classifier *cls;   /* for rules: its names are visible too */
};

static void add_metric(void *ctx, const char *name)
{
	struct metric_walk *w = ctx;

	if (is_pseudo_metric(name))
		return;
	if (named_index(w->m, w->n_m, name) >= 0 ||
	    (w->cls && named_index(w->cls->metrics, w->cls->n_metrics, name) >= 0))
		return;
	GA_PUSH(w->out->v, w->out->n, w->out->cap, ga_xstrdup(name));
}

static void walk_scope(struct strlist *out, const ga_named_expr *m, size_t n_m,
                       const ga_classifier *cls, const ga_expr *const *exprs, size_t n_exprs,
                       char *const *evidence, size_t n_evidence, int required_only)
{
	struct metric_walk w = { out, m, n_m, cls };
	void (*each)(const ga_expr *, void (*)(void *, const char *), void *) =
		required_only ? ga_expr_foreach_required_name : ga_expr_foreach_name;
	size_t i;

	for (i = 0; i < n_m; i++)
		each(m[i].expr, add_metric, &w);
	for (i = 0; i < n_exprs; i++)
		each(exprs[i], add_metric, &w);
	/* Evidence shows metrics too, so they must be collected as well (but
	 * not in a required-only walk: evidence is shown when it is there). */
	for (i = 0; !required_only && i < n_evidence; i++)
		add_metric(&w, evidence[i]);
}

static void walk_classifier(struct strlist *l, const ga_classifier *c, int required_only)
{
	const ga_expr **e = ga_xcalloc(2 * c->n_order + 1, sizeof(*e));
	for (size_t i = 0; i < c->n_order; i++) {
		e[2 * i] = c->order[i].when;
		e[2 * i + 1] = c->order[i].score;
	}
	walk_scope(l, c->metrics, c->n_metrics, NULL, e, 2 * c->n_order, c->evidence,
	           c->n_evidence, required_only);
	free(e);
}

/* Sort, drop repeats, hand the array over. */
static size_t finish_names(struct strlist *l, char ***out)
{
	size_t n = 0;
	if (l->n) {
		qsort(l->v, l->n, sizeof(*l->v), cmp_str);
		for (size_t i = 0; i < l->n; i++) {
			if (n && strcmp(l->v[n - 1], l->v[i]) == 0)
				free(l->v[i]);
			else
				l->v[n++] = l->v[i];
		}
	}
	*out = l->v;
	return n;
}

size_t ga_ruleset_metric_names(const ga_ruleset *rs, char ***out)
{
	struct strlist l = {0};

	for (size_t i = 0; i < rs->n_rules; i++) {
		const ga_rule *r = &rs->rules[i];
		const ga_expr *e[5] = { r->when, r->estimate, r->low, r->high, r->source_lines };
		walk_scope(&l, r->metrics, r->n_metrics, classifier_of(rs), e, 5, r->evidence,
		           r->n_evidence, 0);
	}
	if (rs->has_classifier)
		walk_classifier(&l, &rs->classifier, 0);
	return finish_names(&l, out);
}

/* Rules in the order their metrics are worth collecting first: checklist
 * item, then severity (high first), then id. */
static int rule_priority_cmp(const void *x, const void *y)
{
	const ga_rule *a = *(const ga_rule *const *)x, *b = *(const ga_rule *const *)y;
	if (a->checklist != b->checklist)
		return a->checklist < b->checklist ? -1 : 1;
	if (a->severity != b->severity)
		return a->severity > b->severity ? -1 : 1;
	return strcmp(a->id, b->id);
}

/* Append l's names (sorted, deduplicated) that are not in out yet, as bundle b. */
static void add_bundle(struct strlist *out, size_t **bundle, size_t *cap_b, struct strlist *l,
                       size_t b)
{
	char **v = NULL;
	size_t n = finish_names(l, &v);
	for (size_t i = 0; i < n; i++) {
		int seen = 0;
		for (size_t j = 0; j < out->n && !seen; j++)
			seen = strcmp(out->v[j], v[i]) == 0;
		if (seen) {
			free(v[i]);
			continue;
		}
		GA_PUSH(out->v, out->n, out->cap, v[i]);
		if (*cap_b < out->cap) {
			*bundle = ga_xrealloc(*bundle, out->cap * sizeof(**bundle));
			*cap_b = out->cap;
		}
		(*bundle)[out->n - 1] = b;
	}
	free(v);
	memset(l, 0, sizeof(*l));
}

size_t ga_ruleset_metric_bundles(const ga_ruleset *rs, char ***out, size_t **bundle)
{
	struct strlist all = {0}, l = {0};
	size_t cap_b = 0, nb = 0;
	const ga_rule **order = ga_xcalloc(rs->n_rules ? rs->n_rules : 1, sizeof(*order));

	*bundle = NULL;
	if (rs->has_classifier) {
		walk_classifier(&l, &rs->classifier, 0);
		add_bundle(&all, bundle, &cap_b, &l, nb++);
	}
	for (size_t i = 0; i < rs->n_rules; i++)
		order[i] = &rs->rules[i];
	if (rs->n_rules)
		qsort(order, rs->n_rules, sizeof(*order), rule_priority_cmp);
	for (size_t i = 0; i < rs->n_rules; i++) {
		const ga_rule *r = order[i];
		const ga_expr *e[5] = { r->when, r->estimate, r->low, r->high, r->source_lines };
		size_t before = all.n;
		walk_scope(&l, r->metrics, r->n_metrics, classifier_of(rs), e, 5, r->evidence,
		           r->n_evidence, 0);
		add_bundle(&all, bundle, &cap_b, &l, nb);
		if (all.n > before)
			nb++;
	}
	free(order);
	*out = all.v;
	return all.n;
}

size_t ga_classifier_required_metric_names(const ga_ruleset *rs, char ***out)
{
	struct strlist l = {0};
	if (rs->has_classifier)
		walk_classifier(&l, &rs->classifier, 1);
	return finish_names(&l, out);
}
