/* expr.h: the rule expression language.
 *
 *   expr    := or
 *   or      := and ("or" and)*
 *   and     := not ("and" not)*
 *   not     := "not" not | cmp
 *   cmp     := sum (("<" | "<=" | ">" | ">=" | "==" | "!=") sum)?
 *   sum     := product (("+" | "-") product)*
 *   product := unary (("*" | "/") unary)*
 *   unary   := "-" unary | primary
 *   primary := NUMBER | NAME | NAME "(" args ")" | "(" expr ")"
 *   NAME    := [A-Za-z_][A-Za-z0-9_.]*      (metric names contain dots)
 *   NUMBER  := C decimal floating literal, optional exponent
 *   functions: min(a, b, ...), max(a, b, ...), abs(x), clamp(x, lo, hi),
 *              avail(x, y): x, or y when a name in x is missing from the
 *              profile (metrics that a quick collection leaves out)
 *
 * Values are doubles; comparisons and logic give 1 or 0; non-zero is true.
 * "and"/"or" short-circuit, so `x > 0 and y / x > 2` is safe.
 * Evaluation never produces NaN silently: a division by zero, a missing
 * variable or a NaN/inf operand makes the whole expression not evaluable,
 * with the reason in `why`. */
#ifndef GA_EXPR_H
#define GA_EXPR_H

#include <stddef.h>

#include "../util/util.h"

typedef struct ga_expr ga_expr;

typedef enum {
	GA_EVAL_OK = 0,
	GA_EVAL_MISSING,   /* a name could not be resolved */
	GA_EVAL_DIVZERO,   /* division by zero */
	GA_EVAL_NAN,       /* an operand or result was NaN or infinite */
} ga_eval_status;

/* Resolve a name.  Return 0 and set *out when known, -1 when unknown. */
typedef int (*ga_lookup_fn)(void *ctx, const char *name, double *out);

/* Parse src.  On error returns NULL, sets *err_off to the 0-based byte offset
 * of the problem and writes a message (no position in it) to errmsg. */
ga_expr *ga_expr_parse(const char *src, size_t *err_off, char *errmsg, size_t errlen);
void ga_expr_free(ga_expr *e);

/* Evaluate.  On failure, why (if non-NULL) says what failed, naming the
 * missing variable or the zero divisor's source text. */
ga_eval_status ga_expr_eval(const ga_expr *e, ga_lookup_fn lookup, void *ctx,
                            double *out, char *why, size_t whylen);

/* Call fn once per distinct identifier referenced (not function names). */
void ga_expr_foreach_name(const ga_expr *e, void (*fn)(void *ctx, const char *name), void *ctx);
/* The same, leaving out names that only matter when present: those in the
 * first argument of avail(). */
void ga_expr_foreach_required_name(const ga_expr *e, void (*fn)(void *ctx, const char *name),
                                   void *ctx);

/* Write a name's replacement to out and return 1, or return 0 to keep the
 * name.  A replacement must be a primary: a name, a number, a call or a
 * parenthesised expression. */
typedef int (*ga_expr_subst_fn)(void *ctx, const char *name, ga_buf *out);

/* Append e to out as text that ga_expr_parse reads back into the same tree:
 * parentheses only where precedence needs them, numbers as written, every
 * name passed to subst (may be NULL) first.  With subst inlining named
 * expressions as "(" text ")", the result evaluates as the original did
 * with those names bound, operation for operation. */
void ga_expr_print(const ga_expr *e, ga_expr_subst_fn subst, void *ctx, ga_buf *out);

#endif
