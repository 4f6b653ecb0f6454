/* trigger.c: the rules' source-line trigger (trigger.h). */
#include "trigger.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../rules/expr.h"
#include "../util.h"

struct ga_trigger {
	ga_expr **ops;            /* the top-level "or" operands */
	size_t n_ops, cap_ops;
};

static int name_char(char c)
{
	return (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') ||
	       c == '_' || c == '.';
}

/* The end of the next top-level "or" operand of s: the offset of the "or"
 * keyword that ends it (outside parentheses, a word of its own), or the
 * length of s.  Numbers and names are skipped whole, so that neither
 * "order" nor "1e5" is taken apart. */
static size_t operand_end(const char *s)
{
	int depth = 0;
	size_t i = 0;

	while (s[i]) {
		if (s[i] == '(') {
			depth++;
		} else if (s[i] == ')') {
			depth--;
		} else if (name_char(s[i])) {
			size_t start = i;
			while (name_char(s[i]) ||
			       ((s[i] == '+' || s[i] == '-') && (s[i - 1] == 'e' || s[i - 1] == 'E') &&
			        s[start] >= '0' && s[start] <= '9'))
				i++;
			if (depth == 0 && i - start == 2 && strncmp(s + start, "or", 2) == 0)
				return start;
			continue;
		}
		i++;
	}
	return i;
}

ga_trigger *ga_trigger_parse(const char *text, char *msg, size_t msglen)
{
	size_t off = 0;
	char why[256];
	ga_expr *whole = ga_expr_parse(text, &off, why, sizeof(why));
	ga_trigger *t;

	if (!whole) {
		snprintf(msg, msglen, "at offset %zu: %s", off, why);
		return NULL;
	}
	ga_expr_free(whole);
	t = ga_xcalloc(1, sizeof(*t));
	/* "or" is the loosest operator, so each operand parses on its own. */
	for (const char *s = text;;) {
		size_t end = operand_end(s);
		char *part = ga_xstrndup(s, end);
		ga_expr *e = ga_expr_parse(part, &off, why, sizeof(why));
		free(part);
		if (!e) {
			snprintf(msg, msglen, "near offset %zu: %s", (size_t)(s - text) + off, why);
			ga_trigger_free(t);
			return NULL;
		}
		GA_PUSH(t->ops, t->n_ops, t->cap_ops, e);
		if (!s[end])
			break;
		s += end + 2;
	}
	return t;
}

void ga_trigger_free(ga_trigger *t)
{
	if (!t)
		return;
	for (size_t i = 0; i < t->n_ops; i++)
		ga_expr_free(t->ops[i]);
	free(t->ops);
	free(t);
}

typedef struct {
	char *const *names;
	const double *values;
	size_t n;
	ga_buf *why;              /* listing the names read, or NULL */
	int listed;               /* names in why so far */
} launch_values;

/* A measured value of the launch; not measured (NAN) is unknown. */
static int lookup(void *ctx, const char *name, double *out)
{
	const launch_values *lv = ctx;
	for (size_t i = 0; i < lv->n; i++)
		if (strcmp(lv->names[i], name) == 0) {
			if (isnan(lv->values[i]))
				return -1;
			*out = lv->values[i];
			return 0;
		}
	return -1;
}

static void list_value(void *ctx, const char *name)
{
	launch_values *lv = ctx;
	double v;
	if (lookup(lv, name, &v) != 0)
		return;
	ga_buf_printf(lv->why, "%s%s=%.4g", lv->listed++ ? ", " : "", name, v);
}

int ga_trigger_holds(const ga_trigger *t, char *const *names, const double *values, size_t n,
                     char **why)
{
	launch_values lv = {names, values, n, NULL, 0};
	ga_buf b = {0};

	for (size_t i = 0; t && i < t->n_ops; i++) {
		double v = 0;
		if (ga_expr_eval(t->ops[i], lookup, &lv, &v, NULL, 0) != GA_EVAL_OK || v == 0.0)
			continue;
		ga_buf_puts(&b, "rule trigger: ");
		lv.why = &b;
		ga_expr_foreach_name(t->ops[i], list_value, &lv);
		*why = ga_buf_take(&b);
		return 1;
	}
	return 0;
}
