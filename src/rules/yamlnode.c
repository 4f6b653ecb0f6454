/* yamlnode.c: what the three files that read YAML share (load.c, parse.c,
 * owners.c): diagnostics at a position, the position of a character inside
 * a scalar, and libyaml node helpers.
 *
 * Positions: libyaml marks are 0-based line/column (columns in characters);
 * diagnostics are 1-based.  An error inside an expression is placed on the
 * offending character by walking the raw text of the scalar alongside its
 * parsed value (scalar_pos), which copes with quotes, escapes, folded lines
 * and block scalars; when the two cannot be matched up the scalar's own
 * position is used. */
#include "loader.h"

#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

/* ---- diagnostics at positions ---- */

/* Whether another problem will be reported; if not, it is counted here. */
int lerr_room(struct loader *L)
{
	if (L->errors < MAX_FILE_DIAGS)
		return 1;
	L->errors++;
	L->hidden++;
	return 0;
}

void lerr(struct loader *L, int line, int col, const char *fmt, ...)
{
	va_list ap;

	if (!lerr_room(L))
		return;
	va_start(ap, fmt);
	diags_vadd(L->d, L->path, line, col, fmt, ap);
	va_end(ap);
	L->errors++;
}

void index_lines(struct loader *L)
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
void byte_linecol(const struct loader *L, size_t off, size_t *line, size_t *col)
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

int is_ws(char c)
{
	return c == ' ' || c == '\t' || c == '\n' || c == '\r';
}

/* 1-based line and column of byte `off` of scalar n's value. */
void scalar_pos(const struct loader *L, const yaml_node_t *n, size_t off,
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

yaml_node_t *node_at(struct loader *L, int index)
{
	return yaml_document_get_node(&L->doc, index);
}

const char *scalar(const yaml_node_t *n)
{
	return n && n->type == YAML_SCALAR_NODE ? (const char *)n->data.scalar.value : NULL;
}

int has_nul(const yaml_node_t *n)
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

/* Sort the pairs of mapping `map` into vals[] by key name (keys[] gets the
 * key nodes).  Unknown, duplicate and non-scalar keys are reported; missing
 * required keys are reported at the mapping. */
void collect_keys(struct loader *L, yaml_node_t *map, const struct key_spec *spec,
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

/* A plain scalar true or false into *out: 0, or -1 after reporting. */
int get_bool(struct loader *L, yaml_node_t *n, const char *key, int *out)
{
	const char *s = scalar(n);

	if (s && n->data.scalar.style == YAML_PLAIN_SCALAR_STYLE &&
	    (strcmp(s, "true") == 0 || strcmp(s, "false") == 0)) {
		*out = strcmp(s, "true") == 0;
		return 0;
	}
	if (s)
		node_err(L, n, "'%s' must be true or false, not '%s'", key, s);
	else
		node_err(L, n, "'%s' must be true or false", key);
	return -1;
}

/* A non-empty string.  Returns a copy, or NULL after reporting. */
char *get_string(struct loader *L, yaml_node_t *n, const char *key, int one_line)
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

int valid_id(const char *s)
{
	if (!*s)
		return 0;
	for (; *s; s++) {
		if (!((*s >= 'a' && *s <= 'z') || (*s >= '0' && *s <= '9') || *s == '-'))
			return 0;
	}
	return 1;
}
