/* expr.c: see expr.h.
 *
 * The parser is a plain recursive descent over the grammar in expr.h with a
 * one-token lookahead.  Every node remembers the span of source text it came
 * from, so evaluation errors can quote it ("division by zero: 'x.sum' is 0").
 * Two limits keep hostile input from exhausting the C stack: the syntactic
 * nesting depth (parentheses, unary operators, calls) and the height of the
 * tree (long left-associative chains such as a+b+c+...). */
#include "expr.h"

#include <locale.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../util/util.h"
#include "expr_tree.h"

#define MAX_NESTING 200      /* parentheses, unary minus, not, calls */
#define MAX_HEIGHT 1000      /* height of the syntax tree */

const struct expr_func expr_funcs[] = {
	[FN_MIN] = { "min", 1, 0 },
	[FN_MAX] = { "max", 1, 0 },
	[FN_ABS] = { "abs", 1, 1 },
	[FN_CLAMP] = { "clamp", 3, 3 },
	[FN_AVAIL] = { "avail", 2, 2 },
};

/* ---- lexer ---- */

enum tok_kind {
	T_EOF,
	T_NUM,
	T_NAME,
	T_AND,
	T_OR,
	T_NOT,
	T_LPAREN,
	T_RPAREN,
	T_COMMA,
	T_PLUS,
	T_MINUS,
	T_STAR,
	T_SLASH,
	T_LT,
	T_LE,
	T_GT,
	T_GE,
	T_EQ,
	T_NE,
};

struct token {
	enum tok_kind kind;
	size_t off, len;
	double num;
};

struct parser {
	const char *src;
	size_t pos;                  /* next byte to lex */
	struct token tok;            /* current lookahead */
	int depth;
	int failed;
	size_t err_off;
	char *errmsg;
	size_t errlen;
};

static void fail_at(struct parser *p, size_t off, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

static void fail_at(struct parser *p, size_t off, const char *fmt, ...)
{
	va_list ap;

	if (p->failed)
		return;
	p->failed = 1;
	p->err_off = off;
	if (p->errmsg && p->errlen) {
		va_start(ap, fmt);
		vsnprintf(p->errmsg, p->errlen, fmt, ap);
		va_end(ap);
	}
}

static int is_space(char c)
{
	return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\f' || c == '\v';
}

static int is_digit(char c)
{
	return c >= '0' && c <= '9';
}

static int is_name_start(char c)
{
	return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_';
}

static int is_name_char(char c)
{
	return is_name_start(c) || is_digit(c) || c == '.';
}

/* strtod on a validated decimal literal, independent of LC_NUMERIC: the
 * '.' is swapped for the locale's decimal point before converting. */
static double c_strtod(const char *s, size_t len)
{
	const char *dp = localeconv()->decimal_point;
	ga_buf b = {0};
	double v;
	size_t i;

	for (i = 0; i < len; i++) {
		if (s[i] == '.' && dp && *dp)
			ga_buf_puts(&b, dp);
		else
			ga_buf_putc(&b, s[i]);
	}
	v = strtod(b.s, NULL);
	ga_buf_free(&b);
	return v;
}

/* Lex a number starting at p->pos: digits [. digits] [e [+-] digits], or
 * . digits [exponent]. */
static void lex_number(struct parser *p, struct token *t)
{
	const char *s = p->src;
	size_t i = p->pos, start = p->pos;
	double v;

	while (is_digit(s[i]))
		i++;
	if (s[i] == '.') {
		i++;
		while (is_digit(s[i]))
			i++;
	}
	if (s[i] == 'e' || s[i] == 'E') {
		size_t e = i++;
		if (s[i] == '+' || s[i] == '-')
			i++;
		if (!is_digit(s[i])) {
			fail_at(p, is_space(s[i]) || !s[i] ? e : i,
			        "malformed number: exponent without digits");
			return;
		}
		while (is_digit(s[i]))
			i++;
	}
	if (is_name_char(s[i])) {
		fail_at(p, i, "malformed number: unexpected '%c'", s[i]);
		return;
	}
	v = c_strtod(s + start, i - start);
	if (isinf(v)) {	/* overflow; an underflow to 0 is harmless */
		fail_at(p, start, "number out of range");
		return;
	}
	t->kind = T_NUM;
	t->num = v;
	t->len = i - start;
	p->pos = i;
}

static void lex_name(struct parser *p, struct token *t)
{
	const char *s = p->src;
	size_t i = p->pos, start = p->pos;

	while (is_name_char(s[i])) {
		if (s[i] == '.' && s[i + 1] == '.') {
			fail_at(p, i + 1, "empty component in name (two dots in a row)");
			return;
		}
		i++;
	}
	if (s[i - 1] == '.') {
		fail_at(p, i - 1, "a name must not end with '.'");
		return;
	}
	t->kind = T_NAME;
	t->len = i - start;
	if (t->len == 3 && memcmp(s + start, "and", 3) == 0)
		t->kind = T_AND;
	else if (t->len == 2 && memcmp(s + start, "or", 2) == 0)
		t->kind = T_OR;
	else if (t->len == 3 && memcmp(s + start, "not", 3) == 0)
		t->kind = T_NOT;
	p->pos = i;
}

/* Read the next token into p->tok.  On a lexical error p->failed is set and
 * the token becomes T_EOF so the parser unwinds quickly. */
static void next(struct parser *p)
{
	const char *s = p->src;
	struct token *t = &p->tok;
	char c, c1;

	while (is_space(s[p->pos]))
		p->pos++;
	memset(t, 0, sizeof(*t));
	t->off = p->pos;
	t->kind = T_EOF;
	if (p->failed)
		return;
	c = s[p->pos];
	c1 = c ? s[p->pos + 1] : '\0';
	if (!c)
		return;
	if (is_digit(c) || (c == '.' && is_digit(c1))) {
		lex_number(p, t);
		goto check;
	}
	if (is_name_start(c)) {
		lex_name(p, t);
		goto check;
	}
	t->len = 1;
	switch (c) {
	case '(': t->kind = T_LPAREN; break;
	case ')': t->kind = T_RPAREN; break;
	case ',': t->kind = T_COMMA; break;
	case '+': t->kind = T_PLUS; break;
	case '-': t->kind = T_MINUS; break;
	case '*': t->kind = T_STAR; break;
	case '/': t->kind = T_SLASH; break;
	case '<':
		t->kind = T_LT;
		if (c1 == '=') {
			t->kind = T_LE;
			t->len = 2;
		}
		break;
	case '>':
		t->kind = T_GT;
		if (c1 == '=') {
			t->kind = T_GE;
			t->len = 2;
		}
		break;
	case '=':
		if (c1 != '=') {
			fail_at(p, p->pos, "unexpected character '='; use '==' to compare");
			goto check;
		}
		t->kind = T_EQ;
		t->len = 2;
		break;
	case '!':
		if (c1 != '=') {
			fail_at(p, p->pos, "unexpected character '!'; use 'not' for negation");
			goto check;
		}
		t->kind = T_NE;
		t->len = 2;
		break;
	case '&':
		fail_at(p, p->pos, "unexpected character '&'; use 'and'");
		goto check;
	case '|':
		fail_at(p, p->pos, "unexpected character '|'; use 'or'");
		goto check;
	case '\'':
		fail_at(p, p->pos, "unexpected character \"'\"");
		goto check;
	default:
		if ((unsigned char)c >= 0x20 && (unsigned char)c < 0x7f)
			fail_at(p, p->pos, "unexpected character '%c'", c);
		else
			fail_at(p, p->pos, "unexpected %s 0x%02x",
			        (unsigned char)c < 0x80 ? "control character" : "non-ASCII byte",
			        (unsigned char)c);
		goto check;
	}
	p->pos += t->len;
check:
	if (p->failed)
		t->kind = T_EOF;
}

/* How to name the current token in "unexpected ..." messages. */
static void describe_token(const struct parser *p, char *buf, size_t len)
{
	const struct token *t = &p->tok;

	switch (t->kind) {
	case T_EOF:
		snprintf(buf, len, "end of expression");
		break;
	case T_NUM:
		snprintf(buf, len, "number '%.*s'", (int)t->len, p->src + t->off);
		break;
	case T_NAME:
		snprintf(buf, len, "name '%.*s'", (int)t->len, p->src + t->off);
		break;
	default:
		snprintf(buf, len, "'%.*s'", (int)t->len, p->src + t->off);
		break;
	}
}

static void fail_unexpected(struct parser *p)
{
	char what[96];

	describe_token(p, what, sizeof(what));
	fail_at(p, p->tok.off, "unexpected %s", what);
}

/* ---- tree ---- */

static void node_free(struct node *n)
{
	size_t i;

	if (!n)
		return;
	free(n->name);
	node_free(n->lhs);
	node_free(n->rhs);
	for (i = 0; i < n->n_args; i++)
		node_free(n->args[i]);
	free(n->args);
	free(n);
}

static struct node *node_new(enum node_kind kind, size_t off)
{
	struct node *n = ga_xcalloc(1, sizeof(*n));

	n->kind = kind;
	n->off = off;
	n->height = 1;
	return n;
}

/* Account for a child: extend the span and the height.  Returns -1 (and
 * fails) when the tree grows too tall. */
static int adopt(struct parser *p, struct node *n, const struct node *child)
{
	size_t end = child->off + child->len;

	if (child->off < n->off) {
		n->len += n->off - child->off;
		n->off = child->off;
	}
	if (end > n->off + n->len)
		n->len = end - n->off;
	if (child->height + 1 > n->height)
		n->height = child->height + 1;
	if (n->height > MAX_HEIGHT) {
		fail_at(p, n->off, "expression too complex (more than %d levels)", MAX_HEIGHT);
		return -1;
	}
	return 0;
}

static int enter(struct parser *p)
{
	if (++p->depth > MAX_NESTING) {
		fail_at(p, p->tok.off, "expression nested too deeply");
		return -1;
	}
	return 0;
}

static void leave(struct parser *p)
{
	p->depth--;
}

static struct node *parse_or(struct parser *p);

static struct node *parse_call(struct parser *p, size_t name_off, size_t name_len)
{
	struct node *n = NULL;
	size_t open_off, fi, i, found = GA_ARRAY_LEN(expr_funcs), cap = 0;

	for (fi = 0; fi < GA_ARRAY_LEN(expr_funcs); fi++) {
		if (strlen(expr_funcs[fi].name) == name_len &&
		    memcmp(expr_funcs[fi].name, p->src + name_off, name_len) == 0)
			found = fi;
	}
	if (found == GA_ARRAY_LEN(expr_funcs)) {
		fail_at(p, name_off, "unknown function '%.*s'", (int)name_len, p->src + name_off);
		return NULL;
	}
	n = node_new(N_CALL, name_off);
	n->fn = (enum func)found;
	n->len = name_len;
	open_off = p->tok.off;
	if (enter(p) < 0)
		goto fail;
	next(p);      /* '(' */
	if (p->tok.kind != T_RPAREN) {
		for (;;) {
			struct node *a = parse_or(p);
			if (!a)
				goto fail;
			GA_PUSH(n->args, n->n_args, cap, a);
			if (adopt(p, n, a) < 0)
				goto fail;
			if (p->tok.kind != T_COMMA)
				break;
			next(p);
		}
	}
	if (p->tok.kind != T_RPAREN) {
		if (p->tok.kind == T_EOF && !p->failed)
			fail_at(p, p->tok.off, "expected ')' to close '(' at offset %zu", open_off);
		else if (!p->failed)
			fail_at(p, p->tok.off, "expected ',' or ')' in call to %s", expr_funcs[found].name);
		goto fail;
	}
	n->len = p->tok.off + 1 - n->off;
	i = n->n_args;
	if (i < expr_funcs[found].min_args || (expr_funcs[found].max_args && i > expr_funcs[found].max_args)) {
		if (expr_funcs[found].min_args == expr_funcs[found].max_args)
			fail_at(p, name_off, "wrong number of arguments to %s: expected %zu, got %zu",
			        expr_funcs[found].name, expr_funcs[found].min_args, i);
		else
			fail_at(p, name_off,
			        "wrong number of arguments to %s: expected at least %zu, got %zu",
			        expr_funcs[found].name, expr_funcs[found].min_args, i);
		goto fail;
	}
	leave(p);
	next(p);
	return n;
fail:
	node_free(n);
	return NULL;
}

static struct node *parse_primary(struct parser *p)
{
	struct node *n = NULL;
	struct token t = p->tok;

	switch (t.kind) {
	case T_NUM:
		n = node_new(N_NUM, t.off);
		n->len = t.len;
		n->num = t.num;
		next(p);
		return n;
	case T_NAME:
		next(p);
		if (p->tok.kind == T_LPAREN)
			return parse_call(p, t.off, t.len);
		n = node_new(N_NAME, t.off);
		n->len = t.len;
		n->name = ga_xstrndup(p->src + t.off, t.len);
		return n;
	case T_LPAREN:
		if (enter(p) < 0)
			return NULL;
		next(p);
		n = parse_or(p);
		if (!n)
			return NULL;
		if (p->tok.kind != T_RPAREN) {
			fail_at(p, p->tok.off, "expected ')' to close '(' at offset %zu", t.off);
			node_free(n);
			return NULL;
		}
		/* The parentheses belong to the span, so error messages quote
		 * "(a + b)" rather than "a + b". */
		n->len = p->tok.off + 1 - t.off;
		n->off = t.off;
		leave(p);
		next(p);
		return n;
	default:
		if (!p->failed)
			fail_unexpected(p);
		return NULL;
	}
}

static struct node *parse_unary(struct parser *p)
{
	struct node *n, *operand;
	size_t off = p->tok.off;

	if (p->tok.kind != T_MINUS)
		return parse_primary(p);
	if (enter(p) < 0)
		return NULL;
	next(p);
	operand = parse_unary(p);
	if (!operand)
		return NULL;
	leave(p);
	n = node_new(N_NEG, off);
	n->len = 1;
	n->lhs = operand;
	if (adopt(p, n, operand) < 0) {
		node_free(n);
		return NULL;
	}
	return n;
}

static struct node *binary(struct parser *p, enum op op, struct node *lhs, struct node *rhs)
{
	struct node *n = node_new(N_BINARY, lhs->off);

	n->op = op;
	n->lhs = lhs;
	n->rhs = rhs;
	if (adopt(p, n, lhs) < 0 || adopt(p, n, rhs) < 0) {
		node_free(n);
		return NULL;
	}
	return n;
}

static struct node *parse_product(struct parser *p)
{
	struct node *lhs = parse_unary(p), *rhs;
	enum op op;

	while (lhs && (p->tok.kind == T_STAR || p->tok.kind == T_SLASH)) {
		op = p->tok.kind == T_STAR ? OP_MUL : OP_DIV;
		next(p);
		rhs = parse_unary(p);
		if (!rhs) {
			node_free(lhs);
			return NULL;
		}
		lhs = binary(p, op, lhs, rhs);
	}
	return lhs;
}

static struct node *parse_sum(struct parser *p)
{
	struct node *lhs = parse_product(p), *rhs;
	enum op op;

	while (lhs && (p->tok.kind == T_PLUS || p->tok.kind == T_MINUS)) {
		op = p->tok.kind == T_PLUS ? OP_ADD : OP_SUB;
		next(p);
		rhs = parse_product(p);
		if (!rhs) {
			node_free(lhs);
			return NULL;
		}
		lhs = binary(p, op, lhs, rhs);
	}
	return lhs;
}

static int cmp_op(enum tok_kind k, enum op *op)
{
	switch (k) {
	case T_LT: *op = OP_LT; return 1;
	case T_LE: *op = OP_LE; return 1;
	case T_GT: *op = OP_GT; return 1;
	case T_GE: *op = OP_GE; return 1;
	case T_EQ: *op = OP_EQ; return 1;
	case T_NE: *op = OP_NE; return 1;
	default: return 0;
	}
}

static struct node *parse_cmp(struct parser *p)
{
	struct node *lhs = parse_sum(p), *rhs;
	enum op op;

	if (!lhs || !cmp_op(p->tok.kind, &op))
		return lhs;
	next(p);
	rhs = parse_sum(p);
	if (!rhs) {
		node_free(lhs);
		return NULL;
	}
	lhs = binary(p, op, lhs, rhs);
	if (lhs && cmp_op(p->tok.kind, &op)) {
		fail_at(p, p->tok.off, "comparisons cannot be chained; use 'and'");
		node_free(lhs);
		return NULL;
	}
	return lhs;
}

static struct node *parse_not(struct parser *p)
{
	struct node *n, *operand;
	size_t off = p->tok.off;

	if (p->tok.kind != T_NOT)
		return parse_cmp(p);
	if (enter(p) < 0)
		return NULL;
	next(p);
	operand = parse_not(p);
	if (!operand)
		return NULL;
	leave(p);
	n = node_new(N_NOT, off);
	n->len = 3;
	n->lhs = operand;
	if (adopt(p, n, operand) < 0) {
		node_free(n);
		return NULL;
	}
	return n;
}

static struct node *parse_and(struct parser *p)
{
	struct node *lhs = parse_not(p), *rhs;

	while (lhs && p->tok.kind == T_AND) {
		next(p);
		rhs = parse_not(p);
		if (!rhs) {
			node_free(lhs);
			return NULL;
		}
		lhs = binary(p, OP_AND, lhs, rhs);
	}
	return lhs;
}

static struct node *parse_or(struct parser *p)
{
	struct node *lhs = parse_and(p), *rhs;

	while (lhs && p->tok.kind == T_OR) {
		next(p);
		rhs = parse_and(p);
		if (!rhs) {
			node_free(lhs);
			return NULL;
		}
		lhs = binary(p, OP_OR, lhs, rhs);
	}
	return lhs;
}

ga_expr *ga_expr_parse(const char *src, size_t *err_off, char *errmsg, size_t errlen)
{
	struct parser p = {0};
	struct node *root = NULL;
	ga_expr *e = NULL;

	if (errmsg && errlen)
		errmsg[0] = '\0';
	if (err_off)
		*err_off = 0;
	if (!src)
		src = "";
	p.src = src;
	p.errmsg = errmsg;
	p.errlen = errlen;
	next(&p);
	if (p.tok.kind == T_EOF && !p.failed) {
		fail_at(&p, 0, "empty expression");
		goto out;
	}
	root = parse_or(&p);
	if (!root)
		goto out;
	if (p.tok.kind != T_EOF) {
		if (p.tok.kind == T_RPAREN)
			fail_at(&p, p.tok.off, "unexpected ')'");
		else
			fail_at(&p, p.tok.off, "trailing input");
		goto out;
	}
	if (p.failed)
		goto out;
	e = ga_xmalloc(sizeof(*e));
	e->src = ga_xstrdup(src);
	e->root = root;
	root = NULL;
out:
	node_free(root);
	if (!e && err_off)
		*err_off = p.err_off;
	return e;
}

void ga_expr_free(ga_expr *e)
{
	if (!e)
		return;
	node_free(e->root);
	free(e->src);
	free(e);
}

/* ---- evaluation ---- */

struct eval {
	const ga_expr *e;
	ga_lookup_fn lookup;
	void *ctx;
	char *why;
	size_t whylen;
};

static ga_eval_status eval_fail(struct eval *ev, ga_eval_status st, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

static ga_eval_status eval_fail(struct eval *ev, ga_eval_status st, const char *fmt, ...)
{
	va_list ap;

	if (ev->why && ev->whylen) {
		va_start(ap, fmt);
		vsnprintf(ev->why, ev->whylen, fmt, ap);
		va_end(ap);
	}
	return st;
}

static ga_eval_status check_finite(struct eval *ev, const struct node *n, double v)
{
	if (isfinite(v))
		return GA_EVAL_OK;
	return eval_fail(ev, GA_EVAL_NAN, "'%.*s' is %s", (int)n->len, ev->e->src + n->off,
	                 isnan(v) ? "NaN" : "infinite");
}

static ga_eval_status eval_node(struct eval *ev, const struct node *n, double *out)
{
	ga_eval_status st;
	double a, b, v = 0;
	size_t i;

	switch (n->kind) {
	case N_NUM:
		*out = n->num;
		return GA_EVAL_OK;
	case N_NAME:
		if (!ev->lookup || ev->lookup(ev->ctx, n->name, &v) != 0)
			return eval_fail(ev, GA_EVAL_MISSING, "metric '%s' not in profile", n->name);
		if (!isfinite(v))
			return eval_fail(ev, GA_EVAL_NAN, "'%s' is %s", n->name,
			                 isnan(v) ? "NaN" : "infinite");
		*out = v;
		return GA_EVAL_OK;
	case N_NEG:
		if ((st = eval_node(ev, n->lhs, &a)) != GA_EVAL_OK)
			return st;
		*out = -a;
		return GA_EVAL_OK;
	case N_NOT:
		if ((st = eval_node(ev, n->lhs, &a)) != GA_EVAL_OK)
			return st;
		*out = a == 0.0;
		return GA_EVAL_OK;
	case N_CALL:
		if (n->fn == FN_AVAIL) {
			/* avail(x, y): x when every name in it was collected, else y.
			 * Only a missing name falls back; a division by zero or a NaN
			 * is still a failure. */
			st = eval_node(ev, n->args[0], out);
			if (st == GA_EVAL_MISSING)
				st = eval_node(ev, n->args[1], out);
			return st;
		}
		if ((st = eval_node(ev, n->args[0], &v)) != GA_EVAL_OK)
			return st;
		if (n->fn == FN_ABS) {
			v = fabs(v);
		} else if (n->fn == FN_CLAMP) {
			/* clamp(x, lo, hi) = min(max(x, lo), hi) */
			if ((st = eval_node(ev, n->args[1], &a)) != GA_EVAL_OK ||
			    (st = eval_node(ev, n->args[2], &b)) != GA_EVAL_OK)
				return st;
			v = v < a ? a : v;
			v = v > b ? b : v;
		} else {
			for (i = 1; i < n->n_args; i++) {
				if ((st = eval_node(ev, n->args[i], &a)) != GA_EVAL_OK)
					return st;
				if (n->fn == FN_MIN ? a < v : a > v)
					v = a;
			}
		}
		*out = v;
		return GA_EVAL_OK;
	case N_BINARY:
		break;
	}

	if ((st = eval_node(ev, n->lhs, &a)) != GA_EVAL_OK)
		return st;
	if (n->op == OP_AND && a == 0.0) {
		*out = 0;
		return GA_EVAL_OK;
	}
	if (n->op == OP_OR && a != 0.0) {
		*out = 1;
		return GA_EVAL_OK;
	}
	if ((st = eval_node(ev, n->rhs, &b)) != GA_EVAL_OK)
		return st;
	switch (n->op) {
	case OP_ADD: v = a + b; break;
	case OP_SUB: v = a - b; break;
	case OP_MUL: v = a * b; break;
	case OP_DIV:
		if (b == 0.0)
			return eval_fail(ev, GA_EVAL_DIVZERO, "division by zero: '%.*s' is 0",
			                 (int)n->rhs->len, ev->e->src + n->rhs->off);
		v = a / b;
		break;
	case OP_LT: v = a < b; break;
	case OP_LE: v = a <= b; break;
	case OP_GT: v = a > b; break;
	case OP_GE: v = a >= b; break;
	case OP_EQ: v = a == b; break;
	case OP_NE: v = a != b; break;
	case OP_AND:
	case OP_OR: v = b != 0.0; break;
	}
	if ((st = check_finite(ev, n, v)) != GA_EVAL_OK)
		return st;
	*out = v;
	return GA_EVAL_OK;
}

ga_eval_status ga_expr_eval(const ga_expr *e, ga_lookup_fn lookup, void *ctx,
                            double *out, char *why, size_t whylen)
{
	struct eval ev = { e, lookup, ctx, why, whylen };
	ga_eval_status st;
	double v = 0;

	if (why && whylen)
		why[0] = '\0';
	st = eval_node(&ev, e->root, &v);
	if (st == GA_EVAL_OK)
		st = check_finite(&ev, e->root, v);
	if (out)
		*out = st == GA_EVAL_OK ? v : NAN;
	return st;
}
