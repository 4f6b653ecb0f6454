/* expr_text.c: what is read off a parsed expression's tree without
 * evaluating it: the names it uses, and the expression written back out as
 * text with names replaced (see expr.h). */
#include "expr.h"

#include <string.h>

#include "../util/util.h"
#include "expr_tree.h"

/* ---- names ---- */

/* Names already reported, as a hash set: an expression such as
 * min(a1, a2, ...) may hold tens of thousands of names, and a list searched
 * for each one made a large rule file take minutes. */
struct name_walk {
	ga_map seen;                 /* names borrowed from the tree */
	void (*fn)(void *ctx, const char *name);
	void *ctx;
	int required_only;           /* skip the first argument of avail() */
};

/* Add name; returns 0 when it was there already. */
static int seen_add(struct name_walk *w, const char *name)
{
	size_t n = w->seen.n;

	ga_strmap_put(&w->seen, name, 0);
	return w->seen.n != n;
}

static void walk_names(struct name_walk *w, const struct node *n)
{
	size_t i;

	if (!n)
		return;
	if (n->kind == N_NAME) {
		if (seen_add(w, n->name))
			w->fn(w->ctx, n->name);
		return;
	}
	walk_names(w, n->lhs);
	walk_names(w, n->rhs);
	for (i = 0; i < n->n_args; i++)
		if (!(w->required_only && n->kind == N_CALL && n->fn == FN_AVAIL && i == 0))
			walk_names(w, n->args[i]);
}

void ga_expr_foreach_required_name(const ga_expr *e, void (*fn)(void *ctx, const char *name),
                                   void *ctx)
{
	struct name_walk w = { .fn = fn, .ctx = ctx, .required_only = 1 };

	if (!e)
		return;
	walk_names(&w, e->root);
	ga_map_free(&w.seen);
}

void ga_expr_foreach_name(const ga_expr *e, void (*fn)(void *ctx, const char *name), void *ctx)
{
	struct name_walk w = { .fn = fn, .ctx = ctx };

	if (!e)
		return;
	walk_names(&w, e->root);
	ga_map_free(&w.seen);
}

/* ---- printing ---- */

/* How tightly each form binds, as in the grammar of expr.h: a child that
 * binds less tightly than its place needs gets parentheses, no other. */
enum {
	PREC_OR = 1, PREC_AND, PREC_NOT, PREC_CMP, PREC_SUM, PREC_PRODUCT, PREC_UNARY,
	PREC_PRIMARY,
};

static const char *const op_text[] = {
	[OP_ADD] = "+", [OP_SUB] = "-", [OP_MUL] = "*", [OP_DIV] = "/",
	[OP_LT] = "<", [OP_LE] = "<=", [OP_GT] = ">", [OP_GE] = ">=",
	[OP_EQ] = "==", [OP_NE] = "!=", [OP_AND] = "and", [OP_OR] = "or",
};

static int op_prec(enum op op)
{
	switch (op) {
	case OP_OR: return PREC_OR;
	case OP_AND: return PREC_AND;
	case OP_ADD: case OP_SUB: return PREC_SUM;
	case OP_MUL: case OP_DIV: return PREC_PRODUCT;
	default: return PREC_CMP;
	}
}

static int node_prec(const struct node *n)
{
	switch (n->kind) {
	case N_BINARY: return op_prec(n->op);
	case N_NOT: return PREC_NOT;
	case N_NEG: return PREC_UNARY;
	default: return PREC_PRIMARY;
	}
}

struct printer {
	const ga_expr *e;
	ga_expr_subst_fn subst;
	void *ctx;
	ga_buf *out;
};

/* The literal as written (printing the double could round it), without the
 * parentheses that a span such as "(1)" takes in. */
static void print_number(struct printer *pr, const struct node *n)
{
	const char *s = pr->e->src + n->off;
	size_t len = n->len;

	while (len && (*s == '(' || *s == ' ' || *s == '\t' || *s == '\n' || *s == '\r')) {
		s++;
		len--;
	}
	while (len && (s[len - 1] == ')' || s[len - 1] == ' ' || s[len - 1] == '\t' ||
	               s[len - 1] == '\n' || s[len - 1] == '\r'))
		len--;
	ga_buf_putn(pr->out, s, len);
}

static void print_node(struct printer *pr, const struct node *n, int min_prec)
{
	int prec = node_prec(n), paren = prec < min_prec;
	size_t i;

	if (paren)
		ga_buf_putc(pr->out, '(');
	switch (n->kind) {
	case N_NUM:
		print_number(pr, n);
		break;
	case N_NAME:
		if (!pr->subst || !pr->subst(pr->ctx, n->name, pr->out))
			ga_buf_puts(pr->out, n->name);
		break;
	case N_NEG:
		ga_buf_puts(pr->out, n->lhs->kind == N_NEG ? "- " : "-");
		print_node(pr, n->lhs, PREC_UNARY);
		break;
	case N_NOT:
		ga_buf_puts(pr->out, "not ");
		print_node(pr, n->lhs, PREC_NOT);
		break;
	case N_CALL:
		ga_buf_printf(pr->out, "%s(", expr_funcs[n->fn].name);
		for (i = 0; i < n->n_args; i++) {
			if (i)
				ga_buf_puts(pr->out, ", ");
			print_node(pr, n->args[i], PREC_OR);
		}
		ga_buf_putc(pr->out, ')');
		break;
	case N_BINARY:
		/* and, or, + - and * / associate to the left; comparisons
		 * do not chain, so both sides must bind more tightly. */
		print_node(pr, n->lhs, prec == PREC_CMP ? prec + 1 : prec);
		ga_buf_printf(pr->out, " %s ", op_text[n->op]);
		print_node(pr, n->rhs, prec + 1);
		break;
	}
	if (paren)
		ga_buf_putc(pr->out, ')');
}

void ga_expr_print(const ga_expr *e, ga_expr_subst_fn subst, void *ctx, ga_buf *out)
{
	struct printer pr = { e, subst, ctx, out };

	if (e)
		print_node(&pr, e->root, PREC_OR);
}
