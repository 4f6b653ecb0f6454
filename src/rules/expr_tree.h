/* expr_tree.h: the syntax tree of a parsed expression; private to
 * src/rules/expr.c (parsing, evaluation) and expr_text.c (names, printing). */
#ifndef GA_RULES_EXPR_TREE_H
#define GA_RULES_EXPR_TREE_H

#include <stddef.h>

enum node_kind {
	N_NUM,
	N_NAME,
	N_NEG,
	N_NOT,
	N_BINARY,
	N_CALL,
};

enum op {
	OP_ADD, OP_SUB, OP_MUL, OP_DIV,
	OP_LT, OP_LE, OP_GT, OP_GE, OP_EQ, OP_NE,
	OP_AND, OP_OR,
};

enum func {
	FN_MIN,
	FN_MAX,
	FN_ABS,
	FN_CLAMP,
	FN_AVAIL,
};

struct expr_func {
	const char *name;
	size_t min_args, max_args;   /* max 0: no upper limit */
};

/* Indexed by enum func; defined in expr.c. */
extern const struct expr_func expr_funcs[];

struct node {
	enum node_kind kind;
	size_t off, len;             /* source span */
	size_t height;
	double num;                  /* N_NUM */
	char *name;                  /* N_NAME */
	enum op op;                  /* N_BINARY */
	enum func fn;                /* N_CALL */
	struct node *lhs, *rhs;      /* N_BINARY; N_NEG/N_NOT use lhs */
	struct node **args;          /* N_CALL */
	size_t n_args;
};

struct ga_expr {
	char *src;
	struct node *root;
};

#endif
