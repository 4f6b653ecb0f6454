/* parse.c: the keys of a rule or classifier file, from libyaml's node tree
 * to a ga_rule or ga_classifier (see gpuadvise-rules(5)).  Every problem is
 * reported at its position (lerr, scalar_pos in yamlnode.c) and checking
 * carries on. */
#include "loader.h"

#include <limits.h>
#include <locale.h>
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

/* A plain decimal number: [+-] digits [. digits] [e [+-] digits]. */
static int parse_number(const yaml_node_t *n, double *out)
{
	const char *s = scalar(n), *p, *dp;
	ga_buf b = {0};
	int digits = 0;

	if (!s || n->data.scalar.style != YAML_PLAIN_SCALAR_STYLE)
		return -1;
	p = s;
	if (*p == '+' || *p == '-')
		p++;
	while (*p >= '0' && *p <= '9') {
		p++;
		digits++;
	}
	if (*p == '.') {
		p++;
		while (*p >= '0' && *p <= '9') {
			p++;
			digits++;
		}
	}
	if (!digits)
		return -1;
	if (*p == 'e' || *p == 'E') {
		p++;
		if (*p == '+' || *p == '-')
			p++;
		if (!(*p >= '0' && *p <= '9'))
			return -1;
		while (*p >= '0' && *p <= '9')
			p++;
	}
	if (*p)
		return -1;
	/* Convert independently of LC_NUMERIC. */
	dp = localeconv()->decimal_point;
	for (p = s; *p; p++) {
		if (*p == '.' && dp && *dp)
			ga_buf_puts(&b, dp);
		else
			ga_buf_putc(&b, *p);
	}
	*out = strtod(b.s, NULL);
	ga_buf_free(&b);
	return isfinite(*out) ? 0 : -1;
}

/* The NAME production of expr.h, keywords excluded. */
static int valid_name(const char *s)
{
	const char *p;

	if (!((*s >= 'a' && *s <= 'z') || (*s >= 'A' && *s <= 'Z') || *s == '_'))
		return 0;
	for (p = s; *p; p++) {
		if (!((*p >= 'a' && *p <= 'z') || (*p >= 'A' && *p <= 'Z') || *p == '_' ||
		      (*p >= '0' && *p <= '9') || *p == '.'))
			return 0;
		if (p[0] == '.' && p[1] == '.')
			return 0;
	}
	if (p[-1] == '.')
		return 0;
	return strcmp(s, "and") != 0 && strcmp(s, "or") != 0 && strcmp(s, "not") != 0;
}

int is_metric_name(const char *s)
{
	return strstr(s, "__") != NULL;
}

/* Parse the expression in scalar n.  `what` names it in messages. */
static int get_expr(struct loader *L, yaml_node_t *n, const char *what, char **src, ga_expr **out)
{
	char msg[256];
	size_t off;
	int line, col;

	*src = NULL;
	*out = NULL;
	if (!scalar(n)) {
		node_err(L, n, "'%s' must be an expression (a string)", what);
		return -1;
	}
	if (has_nul(n)) {
		node_err(L, n, "'%s' must not contain a NUL character", what);
		return -1;
	}
	*out = ga_expr_parse(scalar(n), &off, msg, sizeof(msg));
	if (!*out) {
		scalar_pos(L, n, off, &line, &col);
		lerr(L, line, col, "in '%s': %s", what, msg);
		return -1;
	}
	*src = ga_xstrdup(scalar(n));
	return 0;
}

/* Offset of the first whole-word occurrence of name in src (0 if none). */
static size_t find_word(const char *src, const char *name)
{
	size_t len = strlen(name);
	const char *p = src;

	while ((p = strstr(p, name)) != NULL) {
		int before = p > src && (p[-1] == '_' || p[-1] == '.' ||
		                         (p[-1] >= '0' && p[-1] <= '9') ||
		                         (p[-1] >= 'a' && p[-1] <= 'z') ||
		                         (p[-1] >= 'A' && p[-1] <= 'Z'));
		char c = p[len];
		int after = c == '_' || c == '.' || (c >= '0' && c <= '9') ||
		            (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z');
		if (!before && !after)
			return (size_t)(p - src);
		p++;
	}
	return 0;
}

static void collect_name(void *ctx, const char *name)
{
	struct strlist *l = ctx;
	GA_PUSH(l->v, l->n, l->cap, ga_xstrdup(name));
}

ssize_t named_index(const ga_named_expr *m, size_t n, const char *name)
{
	size_t i;

	for (i = 0; i < n; i++) {
		if (strcmp(m[i].name, name) == 0)
			return (ssize_t)i;
	}
	return -1;
}

/* A name the classifier may define: its place is kept for the check of
 * the whole set (check.c), for the first MAX_FILE_DIAGS of them (finding a
 * place reads the scalar; a hostile rule can hold thousands of names). */
static void keep_unresolved(struct loader *L, yaml_node_t *n, const char *what,
                            const char *name)
{
	ga_name_pos np;

	if (L->n_unresolved >= MAX_FILE_DIAGS)
		return;
	scalar_pos(L, n, find_word(scalar(n), name), &np.line, &np.col);
	np.what = ga_xstrdup(what);
	np.name = ga_xstrdup(name);
	GA_PUSH(L->unresolved, L->n_unresolved, L->cap_unresolved, np);
}

/* Every identifier in expression e (from scalar n) must be a metric name
 * (it contains "__") or one of the named expressions m[0..n_usable); a name
 * defined at or after that point is reported as such.  Other names are
 * reported only when `strict`: rules may also use the classifier's named
 * expressions, which are checked by ga_ruleset_validate once the final
 * classifier is known. */
static void check_refs(struct loader *L, yaml_node_t *n, const ga_expr *e, const char *what,
                       const ga_named_expr *m, size_t n_usable, size_t n_all, int strict)
{
	struct strlist names = {0};
	size_t i;

	ga_expr_foreach_name(e, collect_name, &names);
	for (i = 0; i < names.n; i++) {
		const char *name = names.v[i];
		ssize_t k = named_index(m, n_all, name);
		int line, col;

		if (k < 0 && !strict && !is_metric_name(name)) {
			keep_unresolved(L, n, what, name);
			continue;
		}
		if (is_metric_name(name) || (k >= 0 && (size_t)k < n_usable) || (k < 0 && !strict))
			continue;
		if (!lerr_room(L))
			continue;
		scalar_pos(L, n, find_word(scalar(n), name), &line, &col);
		if (k >= 0 && (size_t)k == n_usable)
			lerr(L, line, col, "in '%s': '%s' refers to itself", what, name);
		else if (k >= 0)
			lerr(L, line, col, "in '%s': '%s' is defined later; a named expression "
			     "may only use the ones before it", what, name);
		else
			lerr(L, line, col, "in '%s': unknown name '%s' (not a named expression; "
			     "metric names contain '__')", what, name);
	}
	strv_free(names.v, names.n);
}

/* Named expressions are looked up by a linear search, once per name per
 * kernel; rules need a dozen. */
#define MAX_NAMED 256
/* Evidence is evaluated for every finding; rules show a handful. */
#define MAX_EVIDENCE 64

/* `metrics:` mapping of name -> expression. */
static void load_named(struct loader *L, yaml_node_t *map, int strict, ga_named_expr **out,
                       size_t *n_out)
{
	yaml_node_pair_t *pair;
	ga_named_expr *m = NULL;
	yaml_node_t **vnodes = NULL;
	size_t n = 0, cap = 0, vn = 0, vcap = 0, i;

	*out = NULL;
	*n_out = 0;
	if (map->type != YAML_MAPPING_NODE) {
		node_err(L, map, "'metrics' must be a mapping of name: expression");
		return;
	}
	/* First the names, so references to later ones can be told apart
	 * from unknown names. */
	for (pair = map->data.mapping.pairs.start; pair < map->data.mapping.pairs.top; pair++) {
		yaml_node_t *k = node_at(L, pair->key), *v = node_at(L, pair->value);
		const char *name = scalar(k);
		ga_named_expr e = {0};

		if (!k || !v)
			continue;
		if (!name || has_nul(k) || !valid_name(name)) {
			node_err(L, k, "invalid name '%s' for a named expression (letters, digits, "
			         "'_' and inner '.', not starting with a digit)", name ? name : "?");
			continue;
		}
		if (named_index(m, n, name) >= 0) {
			node_err(L, k, "duplicate named expression '%s'", name);
			continue;
		}
		if (n == MAX_NAMED) {
			node_err(L, k, "more than %d named expressions", MAX_NAMED);
			break;
		}
		e.name = ga_xstrdup(name);
		GA_PUSH(m, n, cap, e);
		GA_PUSH(vnodes, vn, vcap, v);
	}
	for (i = 0; i < n; i++) {
		char *what = ga_xasprintf("metrics.%s", m[i].name);
		if (get_expr(L, vnodes[i], what, &m[i].src, &m[i].expr) == 0)
			check_refs(L, vnodes[i], m[i].expr, what, m, i, n, strict);
		free(what);
	}
	free(vnodes);
	*out = m;
	*n_out = n;
}

/* `evidence:` list of names, each a named expression or a metric (checked
 * here when `strict`, otherwise by ga_ruleset_validate). */
static void load_evidence(struct loader *L, yaml_node_t *seq, const ga_named_expr *m,
                          size_t n_m, int strict, char ***out, size_t *n_out)
{
	yaml_node_item_t *it;
	char **v = NULL;
	size_t n = 0, cap = 0;

	*out = NULL;
	*n_out = 0;
	if (seq->type != YAML_SEQUENCE_NODE) {
		node_err(L, seq, "'evidence' must be a list of names");
		return;
	}
	for (it = seq->data.sequence.items.start; it < seq->data.sequence.items.top; it++) {
		yaml_node_t *x = node_at(L, *it);
		const char *name = scalar(x);

		if (!x)
			continue;
		if (!name || has_nul(x) || !valid_name(name)) {
			node_err(L, x, "'evidence' entries must be names of metrics or named "
			         "expressions");
			continue;
		}
		if (n == MAX_EVIDENCE) {
			node_err(L, x, "more than %d 'evidence' entries", MAX_EVIDENCE);
			break;
		}
		if (strict && !is_metric_name(name) && named_index(m, n_m, name) < 0) {
			node_err(L, x, "evidence '%s' is neither a named expression nor a metric "
			         "name (metric names contain '__')", name);
			continue;
		}
		GA_PUSH(v, n, cap, ga_xstrdup(name));
	}
	*out = v;
	*n_out = n;
}

static void check_expr_refs(struct loader *L, yaml_node_t *n, const ga_expr *e, const char *what,
                            const ga_named_expr *m, size_t n_m, int strict)
{
	if (e)
		check_refs(L, n, e, what, m, n_m, n_m, strict);
}

int is_pseudo_metric(const char *name)
{
	return ga_str_has_prefix(name, "launch__") || ga_str_has_prefix(name, "device__") ||
	       ga_str_has_prefix(name, "program__") || ga_str_has_prefix(name, "roofline__") ||
	       ga_str_has_prefix(name, "owner__") || ga_str_has_prefix(name, "nvtx__") ||
	       ga_str_has_prefix(name, "source__") || ga_str_has_prefix(name, "timeline__") ||
	       ga_str_has_prefix(name, "rank__");
}

struct pseudo_walk {
	const ga_named_expr *m;
	size_t n_m;
	const char *const *reached;
	const char *hit;
};

static void pseudo_visit(void *ctx, const char *name)
{
	struct pseudo_walk *w = ctx;
	ssize_t k = named_index(w->m, w->n_m, name);

	if (w->hit)
		return;
	if (k >= 0)
		w->hit = w->reached[k];
	else if (is_pseudo_metric(name))
		w->hit = name;
}

const char *pseudo_reached(const ga_expr *e, const ga_named_expr *m, size_t n_m,
                           const char *const *reached)
{
	struct pseudo_walk w = { m, n_m, reached, NULL };

	ga_expr_foreach_name(e, pseudo_visit, &w);
	return w.hit;
}

const char **pseudo_table(const ga_named_expr *m, size_t n_m)
{
	const char **reached = ga_xcalloc(n_m ? n_m : 1, sizeof(*reached));
	size_t k;

	/* A named expression uses only the ones before it. */
	for (k = 0; k < n_m; k++)
		reached[k] = pseudo_reached(m[k].expr, m, k, (const char *const *)reached);
	return reached;
}

struct collected_walk {
	struct loader *L;
	yaml_node_t *n;
	const ga_named_expr *m;
	size_t n_m;
	const char **reached;
};

static void collected_visit(void *ctx, const char *name)
{
	struct collected_walk *w = ctx;
	ssize_t k = named_index(w->m, w->n_m, name);
	int line, col;

	if (!(k < 0 ? is_pseudo_metric(name) : w->reached[k] != NULL) || !lerr_room(w->L))
		return;
	scalar_pos(w->L, w->n, find_word(scalar(w->n), name), &line, &col);
	if (k < 0)
		lerr(w->L, line, col, "in 'source_lines': '%s' is computed by gpuadvise, not "
		     "measured by the collector; use CUPTI metrics only", name);
	else
		lerr(w->L, line, col, "in 'source_lines': '%s' reads '%s', which the collector "
		     "does not measure; use CUPTI metrics only", name, w->reached[k]);
}

/* The collector evaluates `source_lines` over the metrics it measured:
 * pseudo metrics (launch__*, device__*, program__*), which the engine
 * computes afterwards, are not there, neither directly nor through the
 * rule's named expressions.  The classifier's are checked by
 * ga_ruleset_validate. */
static void check_collected(struct loader *L, yaml_node_t *n, const ga_expr *e,
                            const ga_named_expr *m, size_t n_m)
{
	struct collected_walk w = { L, n, m, n_m, pseudo_table(m, n_m) };

	ga_expr_foreach_name(e, collected_visit, &w);
	free(w.reached);
}

static const char *class_list(void)
{
	return "compute, memory, latency, divergence";
}

/* ---- rules ---- */

enum {
	RK_ID, RK_TITLE, RK_CLASS, RK_CHECKLIST, RK_SEVERITY, RK_SPEEDUP, RK_METRICS,
	RK_WHEN, RK_ESTIMATE, RK_EVIDENCE, RK_FIX, RK_EXAMPLE, RK_EXPLAIN, RK_SOURCE_LINES,
	RK_MODEL, RK_LOW, RK_HIGH, RK_OWNERS, RK_SCOPE, RK_AFFECTS, RK_KEEPS_WORK,
	RK_KEEPS_INSTRUCTIONS, RK__COUNT
};

static const struct key_spec rule_keys[RK__COUNT] = {
	[RK_ID] = { "id", 1 },
	[RK_TITLE] = { "title", 1 },
	[RK_CLASS] = { "class", 1 },
	[RK_CHECKLIST] = { "checklist", 1 },
	[RK_SEVERITY] = { "severity", 1 },
	[RK_SPEEDUP] = { "speedup", 1 },
	[RK_METRICS] = { "metrics", 0 },
	[RK_WHEN] = { "when", 1 },
	[RK_ESTIMATE] = { "estimate", 1 },
	[RK_EVIDENCE] = { "evidence", 0 },
	[RK_FIX] = { "fix", 1 },
	[RK_EXAMPLE] = { "example", 1 },
	[RK_EXPLAIN] = { "explain", 1 },
	[RK_SOURCE_LINES] = { "source_lines", 0 },
	[RK_MODEL] = { "model", 0 },
	[RK_LOW] = { "low", 0 },
	[RK_HIGH] = { "high", 0 },
	[RK_OWNERS] = { "owners", 0 },
	[RK_SCOPE] = { "scope", 0 },
	[RK_AFFECTS] = { "affects", 0 },
	[RK_KEEPS_WORK] = { "keeps_work", 0 },
	[RK_KEEPS_INSTRUCTIONS] = { "keeps_instructions", 0 },
};

static void load_speedup(struct loader *L, yaml_node_t *n, ga_rule *r)
{
	yaml_node_t *lo, *hi;
	int lo_ok, hi_ok;

	if (n->type != YAML_SEQUENCE_NODE ||
	    n->data.sequence.items.top - n->data.sequence.items.start != 2) {
		node_err(L, n, "'speedup' must be a list of two numbers [min, max]");
		return;
	}
	lo = node_at(L, n->data.sequence.items.start[0]);
	hi = node_at(L, n->data.sequence.items.start[1]);
	lo_ok = parse_number(lo, &r->speedup_min) == 0;
	hi_ok = parse_number(hi, &r->speedup_max) == 0;
	if (!lo_ok)
		node_err(L, lo, "'speedup' minimum must be a number");
	else if (r->speedup_min < 1)
		node_err(L, lo, "'speedup' minimum must be >= 1 (a fix does not slow down)");
	if (!hi_ok)
		node_err(L, hi, "'speedup' maximum must be a number");
	if (!lo_ok || !hi_ok || r->speedup_min < 1)
		return;
	if (r->speedup_min > r->speedup_max)
		node_err(L, hi, "'speedup' maximum %g is less than the minimum %g",
		         r->speedup_max, r->speedup_min);
}

/* `low:` and `high:`, the estimate model's uncertainty: expressions in the
 * estimate's unit, given together (one alone would leave half a range). */
static void load_range(struct loader *L, yaml_node_t *lo, yaml_node_t *hi, ga_rule *r)
{
	if (lo && get_expr(L, lo, "low", &r->low_src, &r->low) == 0)
		check_expr_refs(L, lo, r->low, "low", r->metrics, r->n_metrics, 0);
	if (hi && get_expr(L, hi, "high", &r->high_src, &r->high) == 0)
		check_expr_refs(L, hi, r->high, "high", r->metrics, r->n_metrics, 0);
	if (lo && !hi)
		node_err(L, lo, "'low' needs 'high' too: together they give the estimate's range");
	else if (hi && !lo)
		node_err(L, hi, "'high' needs 'low' too: together they give the estimate's range");
}

static int id_seen(struct loader *L, const char *id)
{
	size_t i;

	if (!L->dir_ids)
		return 0;
	for (i = 0; i < *L->n_dir_ids; i++) {
		if (strcmp((*L->dir_ids)[i], id) == 0)
			return 1;
	}
	return 0;
}

/* A name a program rule may read: the timeline's, the program's, the
 * device's, the rank's, or one of its own named expressions. */
struct scope_walk {
	struct loader *L;
	yaml_node_t *n;
	const char *what;
	const ga_named_expr *m;
	size_t n_m;
};

static void scope_visit(void *ctx, const char *name)
{
	struct scope_walk *w = ctx;
	if (named_index(w->m, w->n_m, name) >= 0 || ga_str_has_prefix(name, "timeline__") ||
	    ga_str_has_prefix(name, "program__") || ga_str_has_prefix(name, "device__") ||
	    ga_str_has_prefix(name, "rank__"))
		return;
	node_err(w->L, w->n, "scope: program: '%s' reads '%s', which is a kernel's; a program "
	         "rule reads timeline__*, program__*, device__* and rank__* values", w->what, name);
}

/* `keeps_work: true` or `false` (the default): a kernel rule's fix keeps
 * the kernel's bytes and FLOPs (ga_rule.keeps_work); `keeps_instructions`
 * likewise its instructions (ga_rule.keeps_instructions). */
static void load_keeps(struct loader *L, yaml_node_t *n, const char *key, int *out,
                       const char *floor, const ga_rule *r)
{
	if (get_bool(L, n, key, out) == 0 && *out && r->program)
		node_err(L, n, "'%s' is for a kernel rule: a program rule has no %s", key, floor);
}

/* `scope: kernel` (the default) or `program`: fired once per process on
 * its timeline, its estimate a share of the process's wall time. */
static void load_scope(struct loader *L, yaml_node_t **v, ga_rule *r)
{
	const char *s = scalar(v[RK_SCOPE]);
	if (s && strcmp(s, "kernel") == 0)
		return;
	if (!s || strcmp(s, "program") != 0) {
		node_err(L, v[RK_SCOPE], "unknown scope '%s'; expected kernel or program",
		         s ? s : "?");
		return;
	}
	r->program = 1;
	if (v[RK_AFFECTS] &&
	    get_expr(L, v[RK_AFFECTS], "affects", &r->affects_src, &r->affects) == 0)
		check_expr_refs(L, v[RK_AFFECTS], r->affects, "affects", r->metrics, r->n_metrics, 0);
	if (v[RK_SOURCE_LINES])
		node_err(L, v[RK_SOURCE_LINES], "a program rule has no source lines");
	if (v[RK_OWNERS])
		node_err(L, v[RK_OWNERS], "a program rule applies to a process, not to owners' "
		         "kernels");
	const ga_expr *x[] = {r->when, r->estimate, r->low, r->high, r->affects};
	const char *what[] = {"when", "estimate", "low", "high", "affects"};
	yaml_node_t *at[] = {v[RK_WHEN], v[RK_ESTIMATE], v[RK_LOW], v[RK_HIGH], v[RK_AFFECTS]};
	for (size_t i = 0; i < 5; i++) {
		struct scope_walk w = {L, at[i], what[i], r->metrics, r->n_metrics};
		if (x[i] && at[i])
			ga_expr_foreach_name(x[i], scope_visit, &w);
	}
	for (size_t i = 0; i < r->n_metrics; i++) {
		struct scope_walk w = {L, v[RK_METRICS], r->metrics[i].name, r->metrics, i};
		ga_expr_foreach_name(r->metrics[i].expr, scope_visit, &w);
	}
}

void load_rule(struct loader *L, yaml_node_t *map)
{
	yaml_node_t *k[RK__COUNT], *v[RK__COUNT];
	ga_rule r = {0};
	int errors = L->errors;
	const char *s;
	size_t i;

	r.klass = GA_CLASS_NONE;
	r.severity = GA_SEV_LOW;
	if (map->data.mapping.pairs.start < map->data.mapping.pairs.top) {
		yaml_node_t *first = node_at(L, map->data.mapping.pairs.start->key);
		r.line = first ? (int)first->start_mark.line + 1 : 0;
	}
	collect_keys(L, map, rule_keys, RK__COUNT, k, v);

	if (v[RK_ID] && (r.id = get_string(L, v[RK_ID], "id", 1)) != NULL) {
		if (!valid_id(r.id)) {
			node_err(L, v[RK_ID], "'id' must use only lower-case letters, digits and "
			         "'-' (got '%s')", r.id);
		} else if (id_seen(L, r.id)) {
			node_err(L, v[RK_ID], "rule id '%s' is used by another file in this "
			         "directory", r.id);
		}
	}
	if (v[RK_TITLE])
		r.title = get_string(L, v[RK_TITLE], "title", 1);
	if (v[RK_CLASS]) {
		s = scalar(v[RK_CLASS]);
		r.klass = ga_class_from_name(s);
		if (r.klass == GA_CLASS_NONE)
			node_err(L, v[RK_CLASS], "unknown class '%s'; expected one of: %s",
			         s ? s : "?", class_list());
	}
	if (v[RK_CHECKLIST]) {
		double x;
		if (parse_number(v[RK_CHECKLIST], &x) < 0 || x != floor(x) || x < 1 ||
		    x > INT_MAX || strpbrk(scalar(v[RK_CHECKLIST]), ".eE"))
			node_err(L, v[RK_CHECKLIST], "'checklist' must be an integer >= 1");
		else
			r.checklist = (int)x;
	}
	if (v[RK_SEVERITY]) {
		int sev;
		s = scalar(v[RK_SEVERITY]);
		sev = ga_severity_from_name(s);
		if (sev < 0)
			node_err(L, v[RK_SEVERITY], "unknown severity '%s'; expected one of: "
			         "low, medium, high", s ? s : "?");
		else
			r.severity = (ga_severity)sev;
	}
	if (v[RK_SPEEDUP])
		load_speedup(L, v[RK_SPEEDUP], &r);
	if (v[RK_METRICS])
		load_named(L, v[RK_METRICS], 0, &r.metrics, &r.n_metrics);
	if (v[RK_WHEN] && get_expr(L, v[RK_WHEN], "when", &r.when_src, &r.when) == 0)
		check_expr_refs(L, v[RK_WHEN], r.when, "when", r.metrics, r.n_metrics, 0);
	if (v[RK_ESTIMATE] &&
	    get_expr(L, v[RK_ESTIMATE], "estimate", &r.estimate_src, &r.estimate) == 0)
		check_expr_refs(L, v[RK_ESTIMATE], r.estimate, "estimate", r.metrics, r.n_metrics,
		                0);
	load_range(L, v[RK_LOW], v[RK_HIGH], &r);
	if (v[RK_MODEL])
		r.model = get_string(L, v[RK_MODEL], "model", 1);
	if (v[RK_SOURCE_LINES] && get_expr(L, v[RK_SOURCE_LINES], "source_lines",
	                                   &r.source_lines_src, &r.source_lines) == 0) {
		check_expr_refs(L, v[RK_SOURCE_LINES], r.source_lines, "source_lines", r.metrics,
		                r.n_metrics, 0);
		check_collected(L, v[RK_SOURCE_LINES], r.source_lines, r.metrics, r.n_metrics);
	}
	if (v[RK_EVIDENCE])
		load_evidence(L, v[RK_EVIDENCE], r.metrics, r.n_metrics, 0, &r.evidence,
		              &r.n_evidence);
	if (v[RK_FIX])
		r.fix = get_string(L, v[RK_FIX], "fix", 0);
	if (v[RK_EXAMPLE])
		r.example = get_string(L, v[RK_EXAMPLE], "example", 0);
	if (v[RK_EXPLAIN])
		r.explain = get_string(L, v[RK_EXPLAIN], "explain", 0);
	if (v[RK_OWNERS])
		load_rule_owners(L, v[RK_OWNERS], &r);
	if (v[RK_SCOPE])
		load_scope(L, v, &r);
	if (v[RK_AFFECTS] && !r.program)
		node_err(L, v[RK_AFFECTS], "'affects' is for a rule of scope program");
	if (v[RK_KEEPS_WORK])
		load_keeps(L, v[RK_KEEPS_WORK], "keeps_work", &r.keeps_work, "roofline", &r);
	if (v[RK_KEEPS_INSTRUCTIONS])
		load_keeps(L, v[RK_KEEPS_INSTRUCTIONS], "keeps_instructions", &r.keeps_instructions,
		           "issue time", &r);

	if (L->errors != errors)
		goto out;
	r.path = ga_xstrdup(L->path);
	r.unresolved = L->unresolved;
	r.n_unresolved = L->n_unresolved;
	L->unresolved = NULL;
	L->n_unresolved = L->cap_unresolved = 0;
	if (L->dir_ids)
		GA_PUSH(*L->dir_ids, *L->n_dir_ids, *L->cap_dir_ids, ga_xstrdup(r.id));
	for (i = 0; i < L->rs->n_rules; i++) {
		if (strcmp(L->rs->rules[i].id, r.id) == 0) {
			/* A later directory overrides the rule with this id. */
			rule_free(&L->rs->rules[i]);
			L->rs->rules[i] = r;
			return;
		}
	}
	GA_PUSH(L->rs->rules, L->rs->n_rules, L->rs->cap_rules, r);
	return;
out:
	rule_free(&r);
}

/* ---- classifier ---- */

enum { CK_CLOSE_MARGIN, CK_METRICS, CK_EVIDENCE, CK_ORDER, CK__COUNT };

static const struct key_spec classifier_keys[CK__COUNT] = {
	[CK_CLOSE_MARGIN] = { "close_margin", 0 },
	[CK_METRICS] = { "metrics", 0 },
	[CK_EVIDENCE] = { "evidence", 0 },
	[CK_ORDER] = { "order", 1 },
};

enum { OK_CLASS, OK_WHEN, OK_SCORE, OK__COUNT };

static const struct key_spec order_keys[OK__COUNT] = {
	[OK_CLASS] = { "class", 1 },
	[OK_WHEN] = { "when", 1 },
	[OK_SCORE] = { "score", 1 },
};

#define DEFAULT_CLOSE_MARGIN 10.0

static void load_order(struct loader *L, yaml_node_t *seq, ga_classifier *c)
{
	yaml_node_item_t *it;
	yaml_node_t *seen[GA_CLASS__COUNT] = {0};
	ga_buf missing = {0};
	size_t cap = 0, idx = 0;
	int i;

	if (seq->type != YAML_SEQUENCE_NODE) {
		node_err(L, seq, "'order' must be a list of {class, when, score} entries");
		return;
	}
	for (it = seq->data.sequence.items.start; it < seq->data.sequence.items.top; it++, idx++) {
		yaml_node_t *x = node_at(L, *it), *k[OK__COUNT], *v[OK__COUNT];
		ga_class_entry e = { .klass = GA_CLASS_NONE };
		char *what;

		if (!x)
			continue;
		if (x->type != YAML_MAPPING_NODE) {
			node_err(L, x, "'order' entries must be mappings with keys class, when "
			         "and score");
			continue;
		}
		collect_keys(L, x, order_keys, OK__COUNT, k, v);
		if (v[OK_CLASS]) {
			const char *s = scalar(v[OK_CLASS]);
			e.klass = ga_class_from_name(s);
			if (e.klass == GA_CLASS_NONE) {
				node_err(L, v[OK_CLASS], "unknown class '%s'; expected one of: %s",
				         s ? s : "?", class_list());
			} else if (seen[e.klass]) {
				node_err(L, v[OK_CLASS], "class '%s' appears more than once in "
				         "'order' (first on line %d)", s,
				         (int)seen[e.klass]->start_mark.line + 1);
			} else {
				seen[e.klass] = v[OK_CLASS];
			}
		}
		what = ga_xasprintf("order[%zu].when", idx);
		if (v[OK_WHEN] && get_expr(L, v[OK_WHEN], what, &e.when_src, &e.when) == 0)
			check_expr_refs(L, v[OK_WHEN], e.when, what, c->metrics, c->n_metrics, 1);
		free(what);
		what = ga_xasprintf("order[%zu].score", idx);
		if (v[OK_SCORE] && get_expr(L, v[OK_SCORE], what, &e.score_src, &e.score) == 0)
			check_expr_refs(L, v[OK_SCORE], e.score, what, c->metrics, c->n_metrics, 1);
		free(what);
		/* Kept even when incomplete: a classifier with errors is
		 * dropped as a whole, and freeing stays in one place. */
		GA_PUSH(c->order, c->n_order, cap, e);
	}
	for (i = 0; i < GA_CLASS__COUNT; i++) {
		if (!seen[i])
			ga_buf_printf(&missing, "%s%s", missing.len ? ", " : "",
			              ga_class_name((ga_class)i));
	}
	if (missing.len)
		node_err(L, seq, "'order' must list each of %s exactly once; missing: %s",
		         class_list(), missing.s);
	ga_buf_free(&missing);
}

void load_classifier(struct loader *L, yaml_node_t *map)
{
	yaml_node_t *k[CK__COUNT], *v[CK__COUNT];
	ga_classifier c = {0};
	int errors = L->errors;

	c.close_margin = DEFAULT_CLOSE_MARGIN;
	if (map->type != YAML_MAPPING_NODE) {
		node_err(L, map, "'classifier' must be a mapping");
		return;
	}
	collect_keys(L, map, classifier_keys, CK__COUNT, k, v);
	if (v[CK_CLOSE_MARGIN] && (parse_number(v[CK_CLOSE_MARGIN], &c.close_margin) < 0 ||
	                           c.close_margin < 0))
		node_err(L, v[CK_CLOSE_MARGIN], "'close_margin' must be a number >= 0");
	if (v[CK_METRICS])
		load_named(L, v[CK_METRICS], 1, &c.metrics, &c.n_metrics);
	if (v[CK_EVIDENCE])
		load_evidence(L, v[CK_EVIDENCE], c.metrics, c.n_metrics, 1, &c.evidence,
		              &c.n_evidence);
	if (v[CK_ORDER])
		load_order(L, v[CK_ORDER], &c);

	if (L->errors != errors) {
		classifier_free(&c);
		return;
	}
	c.path = ga_xstrdup(L->path);
	if (L->rs->has_classifier)
		classifier_free(&L->rs->classifier);
	L->rs->classifier = c;
	L->rs->has_classifier = 1;
}
