/* load.c: rule and classifier files (see rules.h and gpuadvise-rules(5)).
 *
 * A file is read into memory, handed to libyaml's document loader, and the
 * resulting node tree is checked field by field.  Problems are collected as
 * diagnostics and checking carries on, so one run shows every mistake in a
 * file; a rule (or classifier) with any problem is not added to the set.
 *
 * Positions: libyaml marks are 0-based line/column (columns in characters);
 * diagnostics are 1-based.  An error inside an expression is placed on the
 * offending character by walking the raw text of the scalar alongside its
 * parsed value (scalar_pos), which copes with quotes, escapes, folded lines
 * and block scalars; when the two cannot be matched up the scalar's own
 * position is used. */
#include "rules.h"

#include <dirent.h>
#include <errno.h>
#include <limits.h>
#include <locale.h>
#include <math.h>
#include <stdarg.h>
#include <stdlib.h>
#include <stdint.h>
#include <string.h>
#include <sys/types.h>

#include <yaml.h>

#include "../util.h"

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

static void diags_vadd(ga_diags *d, const char *file, int line, int col,
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
static void diags_sort_from(ga_diags *d, size_t from)
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

static void named_free(ga_named_expr *m, size_t n)
{
	size_t i;

	for (i = 0; i < n; i++) {
		free(m[i].name);
		free(m[i].src);
		ga_expr_free(m[i].expr);
	}
	free(m);
}

static void strv_free(char **v, size_t n)
{
	size_t i;

	for (i = 0; i < n; i++)
		free(v[i]);
	free(v);
}

static void rule_free(ga_rule *r)
{
	free(r->id);
	free(r->title);
	named_free(r->metrics, r->n_metrics);
	free(r->when_src);
	ga_expr_free(r->when);
	free(r->estimate_src);
	ga_expr_free(r->estimate);
	strv_free(r->evidence, r->n_evidence);
	free(r->fix);
	free(r->example);
	free(r->explain);
	free(r->path);
	memset(r, 0, sizeof(*r));
}

static void classifier_free(ga_classifier *c)
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
	ga_ruleset_init(rs);
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

/* ---- loader state and positions ---- */

struct loader {
	ga_ruleset *rs;
	ga_diags *d;
	const char *path;
	char *text;              /* raw file contents */
	size_t len;
	size_t *lines;           /* byte offset of each line start */
	size_t n_lines, cap_lines;
	yaml_document_t doc;
	int errors;              /* problems found in this file */
	int hidden;              /* of them, not reported (MAX_FILE_DIAGS) */
	char ***dir_ids;         /* ids loaded from the same directory, or NULL */
	size_t *n_dir_ids, *cap_dir_ids;
};

static void lerr(struct loader *L, int line, int col, const char *fmt, ...)
	__attribute__((format(printf, 4, 5)));

/* A hostile file can hold a problem on every line, or tens of thousands of
 * unknown names in one expression: past this many, problems are counted
 * (the rule is still rejected) but neither located nor reported, which
 * keeps both the work and the output bounded. */
#define MAX_FILE_DIAGS 50

/* Whether another problem will be reported; if not, it is counted here. */
static int lerr_room(struct loader *L)
{
	if (L->errors < MAX_FILE_DIAGS)
		return 1;
	L->errors++;
	L->hidden++;
	return 0;
}

static void lerr(struct loader *L, int line, int col, const char *fmt, ...)
{
	va_list ap;

	if (!lerr_room(L))
		return;
	va_start(ap, fmt);
	diags_vadd(L->d, L->path, line, col, fmt, ap);
	va_end(ap);
	L->errors++;
}

#define node_err(L, n, ...) \
	lerr((L), (int)(n)->start_mark.line + 1, (int)(n)->start_mark.column + 1, __VA_ARGS__)

static void index_lines(struct loader *L)
{
	size_t i, start = 0;

	/* libyaml does not count a UTF-8 byte order mark as a column. */
	if (L->len >= 3 && memcmp(L->text, "\xef\xbb\xbf", 3) == 0)
		start = 3;
	GA_PUSH(L->lines, L->n_lines, L->cap_lines, start);
	for (i = start; i < L->len; i++) {
		if (L->text[i] == '\n')
			GA_PUSH(L->lines, L->n_lines, L->cap_lines, i + 1);
	}
}

static size_t line_end(const struct loader *L, size_t line)
{
	size_t e = line + 1 < L->n_lines ? L->lines[line + 1] - 1 : L->len;

	if (e > L->lines[line] && L->text[e - 1] == '\r')
		e--;
	return e;
}

static int is_cont_byte(char c)
{
	return ((unsigned char)c & 0xc0) == 0x80;
}

/* Byte offset of a libyaml mark (line, column in characters). */
static size_t mark_byte(const struct loader *L, size_t line, size_t col)
{
	size_t p, e;

	if (line >= L->n_lines)
		return L->len;
	p = L->lines[line];
	e = line_end(L, line);
	while (col > 0 && p < e) {
		p++;
		while (p < e && is_cont_byte(L->text[p]))
			p++;
		col--;
	}
	return p;
}

/* Line (0-based) and column (0-based, characters) of a byte offset. */
static void byte_linecol(const struct loader *L, size_t off, size_t *line, size_t *col)
{
	size_t lo = 0, hi = L->n_lines, p;

	while (hi - lo > 1) {
		size_t mid = (lo + hi) / 2;
		if (L->lines[mid] <= off)
			lo = mid;
		else
			hi = mid;
	}
	*line = lo;
	*col = 0;
	for (p = L->lines[lo]; p < off && p < L->len; p++) {
		if (!is_cont_byte(L->text[p]))
			(*col)++;
	}
}

static int hexval(char c)
{
	if (c >= '0' && c <= '9')
		return c - '0';
	if (c >= 'a' && c <= 'f')
		return c - 'a' + 10;
	if (c >= 'A' && c <= 'F')
		return c - 'A' + 10;
	return -1;
}

/* In a double-quoted scalar, how many raw bytes (*rl) an escape at s
 * (s[0] == '\\', n bytes available) takes and how many value bytes (*vl) it
 * produces.  Returns -1 for something unrecognised. */
static int escape_len(const char *s, size_t n, size_t *rl, size_t *vl)
{
	size_t digits = 0, i;
	unsigned long cp = 0;

	if (n < 2) {            /* escaped line break */
		*rl = n;
		*vl = 0;
		return 0;
	}
	switch (s[1]) {
	case 'x': digits = 2; break;
	case 'u': digits = 4; break;
	case 'U': digits = 8; break;
	case 'N': case '_': *rl = 2; *vl = 2; return 0;
	case 'L': case 'P': *rl = 2; *vl = 3; return 0;
	default: *rl = 2; *vl = 1; return 0;
	}
	if (n < 2 + digits)
		return -1;
	for (i = 0; i < digits; i++) {
		int h = hexval(s[2 + i]);
		if (h < 0)
			return -1;
		cp = cp * 16 + (unsigned long)h;
	}
	*rl = 2 + digits;
	*vl = cp < 0x80 ? 1 : cp < 0x800 ? 2 : cp < 0x10000 ? 3 : 4;
	return 0;
}

static int is_blank(char c)
{
	return c == ' ' || c == '\t';
}

static int is_ws(char c)
{
	return c == ' ' || c == '\t' || c == '\n' || c == '\r';
}

/* 1-based line and column of byte `off` of scalar n's value. */
static void scalar_pos(const struct loader *L, const yaml_node_t *n, size_t off,
                       int *out_line, int *out_col)
{
	const char *val = (const char *)n->data.scalar.value;
	size_t vlen = n->data.scalar.length;
	yaml_scalar_style_t style = n->data.scalar.style;
	int block = style == YAML_LITERAL_SCALAR_STYLE || style == YAML_FOLDED_SCALAR_STYLE;
	size_t region, region_end, line, col = 0, dummy, v = 0;
	size_t last_line = 0, last_col = 0;
	int have_last = 0;

	*out_line = (int)n->start_mark.line + 1;
	*out_col = (int)n->start_mark.column + 1;
	if (!L->n_lines)
		return;
	region = mark_byte(L, n->start_mark.line, n->start_mark.column);
	region_end = mark_byte(L, n->end_mark.line, n->end_mark.column);
	line = n->start_mark.line;
	if (style == YAML_SINGLE_QUOTED_SCALAR_STYLE || style == YAML_DOUBLE_QUOTED_SCALAR_STYLE) {
		region++;
		if (region_end > region)
			region_end--;
	} else if (block) {
		/* Content starts on the line after the | or > header. */
		line++;
		region = line < L->n_lines ? L->lines[line] : L->len;
	}

	for (; line < L->n_lines && L->lines[line] <= region_end; line++) {
		size_t p = L->lines[line] > region ? L->lines[line] : region;
		size_t e = line_end(L, line);

		if (e > region_end)
			e = region_end;
		if (p > e)
			continue;
		/* Leading and trailing blanks of a line are indentation or
		 * folding; what remains is a run of the value, which in turn
		 * is separated from the previous run by blanks or newlines. */
		while (p < e && is_blank(L->text[p]))
			p++;
		while (e > p && is_blank(L->text[e - 1]))
			e--;
		if (p == e)
			continue;
		byte_linecol(L, p, &dummy, &col);
		while (v < vlen && is_ws(val[v]))
			v++;
		if (off < v)
			goto hit;
		while (p < e) {
			size_t rl = 1, vl = 1;
			if (style == YAML_DOUBLE_QUOTED_SCALAR_STYLE && L->text[p] == '\\') {
				if (escape_len(L->text + p, e - p, &rl, &vl) < 0)
					return;
			} else if (style == YAML_SINGLE_QUOTED_SCALAR_STYLE && L->text[p] == '\'' &&
			           p + 1 < e && L->text[p + 1] == '\'') {
				rl = 2;
			} else if (v >= vlen || L->text[p] != val[v]) {
				return;         /* lost track: keep the scalar's position */
			}
			if (off < v + vl)
				goto hit;
			for (; rl > 0; rl--, p++) {
				if (!is_cont_byte(L->text[p]))
					col++;
			}
			v += vl;
		}
		last_line = line;
		last_col = col;
		have_last = 1;
	}
	if (have_last && off >= v) {
		/* Past the end (e.g. "unexpected end of expression"): just
		 * after the last character. */
		*out_line = (int)last_line + 1;
		*out_col = (int)last_col + 1;
	}
	return;
hit:
	*out_line = (int)line + 1;
	*out_col = (int)col + 1;
}

/* ---- node helpers ---- */

static yaml_node_t *node_at(struct loader *L, int index)
{
	return yaml_document_get_node(&L->doc, index);
}

static const char *scalar(const yaml_node_t *n)
{
	return n && n->type == YAML_SCALAR_NODE ? (const char *)n->data.scalar.value : NULL;
}

static int has_nul(const yaml_node_t *n)
{
	return strlen((const char *)n->data.scalar.value) != n->data.scalar.length;
}

static size_t edit_distance(const char *a, const char *b)
{
	size_t la = strlen(a), lb = strlen(b), i, j, *row, r;

	if (la > 64 || lb > 64)
		return SIZE_MAX;
	row = ga_xcalloc(lb + 1, sizeof(*row));
	for (j = 0; j <= lb; j++)
		row[j] = j;
	for (i = 1; i <= la; i++) {
		size_t diag = row[0];
		row[0] = i;
		for (j = 1; j <= lb; j++) {
			size_t up = row[j], best = diag + (a[i - 1] != b[j - 1]);
			if (up + 1 < best)
				best = up + 1;
			if (row[j - 1] + 1 < best)
				best = row[j - 1] + 1;
			diag = up;
			row[j] = best;
		}
	}
	r = row[lb];
	free(row);
	return r;
}

struct key_spec {
	const char *name;
	int required;
};

/* Sort the pairs of mapping `map` into vals[] by key name (keys[] gets the
 * key nodes).  Unknown, duplicate and non-scalar keys are reported; missing
 * required keys are reported at the mapping. */
static void collect_keys(struct loader *L, yaml_node_t *map, const struct key_spec *spec,
                         size_t n_spec, yaml_node_t **keys, yaml_node_t **vals)
{
	yaml_node_pair_t *pair;
	size_t i;

	for (i = 0; i < n_spec; i++)
		keys[i] = vals[i] = NULL;
	for (pair = map->data.mapping.pairs.start; pair < map->data.mapping.pairs.top; pair++) {
		yaml_node_t *k = node_at(L, pair->key), *v = node_at(L, pair->value);
		const char *name = scalar(k);
		size_t best = SIZE_MAX, best_i = 0;

		if (!k || !v)
			continue;
		if (!name) {
			node_err(L, k, "keys must be plain strings");
			continue;
		}
		for (i = 0; i < n_spec; i++) {
			size_t dist;
			if (strcmp(name, spec[i].name) == 0)
				break;
			dist = edit_distance(name, spec[i].name);
			if (dist < best) {
				best = dist;
				best_i = i;
			}
		}
		if (i == n_spec) {
			if (best <= 2 && best < strlen(name))
				node_err(L, k, "unknown key '%s'; did you mean '%s'?", name,
				         spec[best_i].name);
			else
				node_err(L, k, "unknown key '%s'", name);
			continue;
		}
		if (keys[i]) {
			node_err(L, k, "duplicate key '%s' (first given on line %d)", name,
			         (int)keys[i]->start_mark.line + 1);
			continue;
		}
		keys[i] = k;
		vals[i] = v;
	}
	for (i = 0; i < n_spec; i++) {
		if (spec[i].required && !vals[i])
			node_err(L, map, "missing required key '%s'", spec[i].name);
	}
}

/* A non-empty string.  Returns a copy, or NULL after reporting. */
static char *get_string(struct loader *L, yaml_node_t *n, const char *key, int one_line)
{
	const char *s = scalar(n), *p;

	if (!s) {
		node_err(L, n, "'%s' must be a string", key);
		return NULL;
	}
	if (has_nul(n)) {
		node_err(L, n, "'%s' must not contain a NUL character", key);
		return NULL;
	}
	for (p = s; is_ws(*p); p++)
		;
	if (!*p) {
		node_err(L, n, "'%s' must not be empty", key);
		return NULL;
	}
	if (one_line && strchr(s, '\n')) {
		node_err(L, n, "'%s' must be a single line", key);
		return NULL;
	}
	return ga_xstrdup(s);
}

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

static int valid_id(const char *s)
{
	if (!*s)
		return 0;
	for (; *s; s++) {
		if (!((*s >= 'a' && *s <= 'z') || (*s >= '0' && *s <= '9') || *s == '-'))
			return 0;
	}
	return 1;
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

static int is_metric_name(const char *s)
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

struct strlist {
	char **v;
	size_t n, cap;
};

static void collect_name(void *ctx, const char *name)
{
	struct strlist *l = ctx;
	GA_PUSH(l->v, l->n, l->cap, ga_xstrdup(name));
}

static ssize_t named_index(const ga_named_expr *m, size_t n, const char *name)
{
	size_t i;

	for (i = 0; i < n; i++) {
		if (strcmp(m[i].name, name) == 0)
			return (ssize_t)i;
	}
	return -1;
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

static const char *class_list(void)
{
	return "compute, memory, latency, divergence";
}

/* ---- rules ---- */

enum {
	RK_ID, RK_TITLE, RK_CLASS, RK_CHECKLIST, RK_SEVERITY, RK_SPEEDUP, RK_METRICS,
	RK_WHEN, RK_ESTIMATE, RK_EVIDENCE, RK_FIX, RK_EXAMPLE, RK_EXPLAIN, RK__COUNT
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

static void load_rule(struct loader *L, yaml_node_t *map)
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
	if (v[RK_EVIDENCE])
		load_evidence(L, v[RK_EVIDENCE], r.metrics, r.n_metrics, 0, &r.evidence,
		              &r.n_evidence);
	if (v[RK_FIX])
		r.fix = get_string(L, v[RK_FIX], "fix", 0);
	if (v[RK_EXAMPLE])
		r.example = get_string(L, v[RK_EXAMPLE], "example", 0);
	if (v[RK_EXPLAIN])
		r.explain = get_string(L, v[RK_EXPLAIN], "explain", 0);

	if (L->errors != errors)
		goto out;
	r.path = ga_xstrdup(L->path);
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
			ga_buf_printf(&missing, "%s%s", missing.len ? ", " : "", class_names[i]);
	}
	if (missing.len)
		node_err(L, seq, "'order' must list each of %s exactly once; missing: %s",
		         class_list(), missing.s);
	ga_buf_free(&missing);
}

static void load_classifier(struct loader *L, yaml_node_t *map)
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

/* ---- files ---- */

static void yaml_error(struct loader *L, yaml_parser_t *p)
{
	size_t line, col;

	if (p->error == YAML_READER_ERROR) {
		byte_linecol(L, p->problem_offset, &line, &col);
		lerr(L, (int)line + 1, (int)col + 1, "invalid YAML input: %s",
		     p->problem ? p->problem : "unreadable");
		return;
	}
	if (p->error == YAML_MEMORY_ERROR) {
		lerr(L, 0, 0, "out of memory while parsing YAML");
		return;
	}
	if (p->context)
		lerr(L, (int)p->problem_mark.line + 1, (int)p->problem_mark.column + 1,
		     "YAML syntax error: %s (%s started at line %d, column %d)",
		     p->problem ? p->problem : "unknown problem", p->context,
		     (int)p->context_mark.line + 1, (int)p->context_mark.column + 1);
	else
		lerr(L, (int)p->problem_mark.line + 1, (int)p->problem_mark.column + 1,
		     "YAML syntax error: %s", p->problem ? p->problem : "unknown problem");
}

/* ---- limits ----
 *
 * Rule files are a few kilobytes and nest four levels deep.  Hostile ones
 * must not cost more than that much more: libyaml's scanner spends time in
 * proportion to the flow nesting depth on every token (100,000 '[' in a row
 * took half a minute), and aliases let a small file describe an enormous
 * tree ("billion laughs").  So, before libyaml builds a document:
 *   - a file larger than MAX_RULE_FILE is refused unread (a rule directory
 *     may hold a link to /dev/zero);
 *   - a rough scan of the raw text refuses flow collections ([ {) nested
 *     deeper than MAX_NESTING, which bounds the scanner's work;
 *   - a pass over libyaml's events refuses aliases (*name) and any nesting
 *     deeper than MAX_NESTING, each at its FILE:LINE:COL. */
#define MAX_RULE_FILE (1024 * 1024)
#define MAX_NESTING 64

/* Flow nesting of the raw text.  Inside a flow collection every bracket
 * outside quotes is structural, so the count is exact there; outside one,
 * a bracket opens a collection only where a token can start (a plain
 * scalar such as "x[i]" holds literal ones), and block scalars (| >) and
 * comments are skipped.  Where it is unsure the guess errs towards less
 * depth: it only has to bound what libyaml would do.  Returns the offset of
 * the first bracket past MAX_NESTING, or (size_t)-1. */
static size_t flow_too_deep(const char *t, size_t len)
{
	size_t i = 0, depth = 0, indent = 0, bol = 0;
	int tok = 1;     /* a token may start at t[i] */

	while (i < len) {
		char c;
		if (i == bol) {         /* the start of a line: its indentation */
			for (indent = 0; i < len && t[i] == ' '; i++)
				indent++;
			tok = 1;
			if (i >= len)
				break;
		}
		c = t[i];
		if (c == '\n')
			bol = i + 1;
		if (c == ' ' || c == '\t' || c == '\r' || c == '\n') {
			tok = 1;
			i++;
		} else if (c == '#' && tok) {
			while (i < len && t[i] != '\n')
				i++;
		} else if ((c == '"' || c == '\'') && tok) {
			for (i++; i < len && t[i] != c; i++) {
				if (c == '"' && t[i] == '\\' && i + 1 < len)
					i++;
			}
			i++;
			tok = 0;
		} else if ((c == '|' || c == '>') && tok && depth == 0) {
			/* A block scalar: its header line, then blank lines and
			 * lines indented deeper than the one that opened it. */
			while (i < len && t[i] != '\n')
				i++;
			while (i < len) {
				size_t j = i + 1, n = 0;
				while (j < len && t[j] == ' ') {
					j++;
					n++;
				}
				if (j < len && t[j] != '\n' && t[j] != '\r' && n <= indent)
					break;
				for (i = j; i < len && t[i] != '\n'; i++)
					;
			}
		} else if ((c == '[' || c == '{') && (tok || depth > 0)) {
			if (++depth > MAX_NESTING)
				return i;
			tok = 1;
			i++;
		} else if ((c == ']' || c == '}') && depth > 0) {
			depth--;
			tok = 0;
			i++;
		} else {
			tok = depth > 0 && (c == ',' || c == ':' || c == '?');
			i++;
		}
	}
	return (size_t)-1;
}

/* Aliases and nesting depth, from libyaml's events.  A syntax error ends
 * the pass quietly: the document loader reports it.  Returns the number of
 * problems. */
static int check_events(struct loader *L)
{
	yaml_parser_t p;
	yaml_event_t ev;
	int problems = 0, depth = 0, done = 0;

	if (!yaml_parser_initialize(&p))
		return 0;
	yaml_parser_set_input_string(&p, (const unsigned char *)L->text, L->len);
	while (!done && yaml_parser_parse(&p, &ev)) {
		int line = (int)ev.start_mark.line + 1, col = (int)ev.start_mark.column + 1;
		switch (ev.type) {
		case YAML_STREAM_END_EVENT:
			done = 1;
			break;
		case YAML_ALIAS_EVENT:
			lerr(L, line, col, "YAML alias '*%s' is not allowed in rule files; "
			     "write the value out", (const char *)ev.data.alias.anchor);
			problems++;
			break;
		case YAML_SEQUENCE_START_EVENT:
		case YAML_MAPPING_START_EVENT:
			if (++depth > MAX_NESTING) {
				lerr(L, line, col, "nested more than %d levels deep", MAX_NESTING);
				problems++;
				done = 1;
			}
			break;
		case YAML_SEQUENCE_END_EVENT:
		case YAML_MAPPING_END_EVENT:
			depth--;
			break;
		default:
			break;
		}
		yaml_event_delete(&ev);
	}
	yaml_parser_delete(&p);
	return problems;
}

/* Returns -1 with *err = errno, or with *err = EFBIG when the file is larger
 * than max bytes (nothing past max + 1 bytes is read). */
static int read_all(const char *path, char **text, size_t *len, size_t max, int *err)
{
	FILE *f = fopen(path, "rb");
	ga_buf b = {0};
	char chunk[8192];
	size_t n;

	*err = 0;
	if (!f) {
		*err = errno;
		return -1;
	}
	while ((n = fread(chunk, 1, sizeof(chunk), f)) > 0) {
		size_t i;
		/* ga_buf is a string builder; bytes go in one by one so
		 * that NULs survive (libyaml reports them). */
		for (i = 0; i < n; i++)
			ga_buf_putc(&b, chunk[i]);
		if (b.len > max) {
			*err = EFBIG;
			fclose(f);
			ga_buf_free(&b);
			return -1;
		}
	}
	if (ferror(f)) {
		*err = errno ? errno : EIO;
		fclose(f);
		ga_buf_free(&b);
		return -1;
	}
	fclose(f);
	*len = b.len;
	*text = ga_buf_take(&b);
	return 0;
}

static int load_file(ga_ruleset *rs, const char *path, ga_diags *d, char ***dir_ids,
                     size_t *n_dir_ids, size_t *cap_dir_ids)
{
	struct loader L = {
		.rs = rs, .d = d, .path = path,
		.dir_ids = dir_ids, .n_dir_ids = n_dir_ids, .cap_dir_ids = cap_dir_ids,
	};
	yaml_parser_t parser;
	yaml_document_t extra;
	int have_parser = 0, have_doc = 0, err;
	size_t n0 = d->n;
	yaml_node_t *root, *extra_root;
	yaml_node_pair_t *pair;

	if (read_all(path, &L.text, &L.len, MAX_RULE_FILE, &err) < 0) {
		if (err == EFBIG)
			lerr(&L, 0, 0, "rule file is larger than %d KiB; is it a rule file?",
			     MAX_RULE_FILE / 1024);
		else
			lerr(&L, 0, 0, "cannot read rule file: %s", strerror(err));
		goto out;
	}
	index_lines(&L);
	{
		size_t deep = flow_too_deep(L.text, L.len), line, col;
		if (deep != (size_t)-1) {
			byte_linecol(&L, deep, &line, &col);
			lerr(&L, (int)line + 1, (int)col + 1, "nested more than %d levels deep",
			     MAX_NESTING);
			goto out;
		}
	}
	if (check_events(&L) != 0)
		goto out;
	if (!yaml_parser_initialize(&parser)) {
		lerr(&L, 0, 0, "cannot initialise the YAML parser");
		goto out;
	}
	have_parser = 1;
	yaml_parser_set_input_string(&parser, (const unsigned char *)L.text, L.len);
	if (!yaml_parser_load(&parser, &L.doc)) {
		yaml_error(&L, &parser);
		goto out;
	}
	have_doc = 1;
	root = yaml_document_get_root_node(&L.doc);
	if (!root) {
		lerr(&L, 1, 1, "file is empty; expected a rule or a classifier mapping");
		goto out;
	}
	/* One document per file: a second one would be silently ignored. */
	if (!yaml_parser_load(&parser, &extra)) {
		yaml_error(&L, &parser);
		goto out;
	}
	extra_root = yaml_document_get_root_node(&extra);
	if (extra_root)
		lerr(&L, (int)extra_root->start_mark.line + 1, (int)extra_root->start_mark.column + 1,
		     "only one YAML document is allowed in a rule file");
	yaml_document_delete(&extra);

	if (root->type != YAML_MAPPING_NODE) {
		node_err(&L, root, "expected a mapping (a rule or a classifier) at the top level");
		goto out;
	}
	for (pair = root->data.mapping.pairs.start; pair < root->data.mapping.pairs.top; pair++) {
		const char *key = scalar(node_at(&L, pair->key));
		if (key && strcmp(key, "classifier") == 0)
			break;
	}
	if (pair < root->data.mapping.pairs.top) {
		static const struct key_spec top_keys[] = { { "classifier", 1 } };
		yaml_node_t *k[1], *v[1];
		collect_keys(&L, root, top_keys, 1, k, v);
		if (v[0])
			load_classifier(&L, v[0]);
	} else {
		load_rule(&L, root);
	}
out:
	if (have_doc)
		yaml_document_delete(&L.doc);
	if (have_parser)
		yaml_parser_delete(&parser);
	free(L.text);
	free(L.lines);
	diags_sort_from(d, n0);
	if (L.hidden)
		ga_diags_add(d, path, 0, 0, "%d more error%s not shown", L.hidden,
		             L.hidden == 1 ? "" : "s");
	return (int)(d->n - n0);
}

int ga_rules_load_file(ga_ruleset *rs, const char *path, ga_diags *d)
{
	return load_file(rs, path, d, NULL, NULL, NULL);
}

static int cmp_str(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

int ga_rules_load_dir(ga_ruleset *rs, const char *dir, ga_diags *d)
{
	DIR *dp;
	struct dirent *de;
	struct strlist files = {0}, ids = {0};
	size_t n0 = d->n, i, dl = strlen(dir);

	dp = opendir(dir);
	if (!dp) {
		ga_diags_add(d, dir, 0, 0, "cannot open rules directory: %s", strerror(errno));
		goto out;
	}
	while ((de = readdir(dp)) != NULL) {
		if (de->d_name[0] == '.')
			continue;
		if (!ga_str_has_suffix(de->d_name, ".yaml") && !ga_str_has_suffix(de->d_name, ".yml"))
			continue;
		GA_PUSH(files.v, files.n, files.cap, ga_xstrdup(de->d_name));
	}
	closedir(dp);
	qsort(files.v, files.n, sizeof(*files.v), cmp_str);
	for (i = 0; i < files.n; i++) {
		char *path = ga_xasprintf("%s%s%s", dir, dl && dir[dl - 1] == '/' ? "" : "/",
		                          files.v[i]);
		load_file(rs, path, d, &ids.v, &ids.n, &ids.cap);
		free(path);
	}
out:
	strv_free(files.v, files.n);
	strv_free(ids.v, ids.n);
	return (int)(d->n - n0);
}

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

	if (name_known(name, w->r->metrics, w->r->n_metrics, w->cls))
		return;
	ga_diags_add(w->d, w->r->path, w->r->line, 0, "rule '%s': unknown name '%s' in '%s' "
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
	for (i = 0; i < r->n_evidence; i++) {
		if (!name_known(r->evidence[i], r->metrics, r->n_metrics, cls))
			ga_diags_add(d, r->path, r->line, 0, "rule '%s': evidence '%s' is neither a "
			             "named expression of the rule or the classifier nor a metric "
			             "name (metric names contain '__')", r->id, r->evidence[i]);
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

	if (ga_str_has_prefix(name, "launch__") || ga_str_has_prefix(name, "device__") ||
	    ga_str_has_prefix(name, "program__"))
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
		const ga_expr *e[2] = { r->when, r->estimate };
		walk_scope(&l, r->metrics, r->n_metrics, classifier_of(rs), e, 2, r->evidence,
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
		const ga_expr *e[2] = { r->when, r->estimate };
		size_t before = all.n;
		walk_scope(&l, r->metrics, r->n_metrics, classifier_of(rs), e, 2, r->evidence,
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
