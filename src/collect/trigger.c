/* trigger.c: the rules' source-line trigger (trigger.h). */
#include "trigger.h"

#include <math.h>
#include <regex.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../rules/expr.h"
#include "../util/util.h"

typedef struct {
	char *id;                 /* the rule's */
	ga_expr *when;
} rule_trigger;

struct ga_trigger {
	rule_trigger *rules;
	size_t n_rules, cap_rules;
};

static void say_bad(ga_trigger_bad_fn bad, void *ctx, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

static void say_bad(ga_trigger_bad_fn bad, void *ctx, const char *fmt, ...)
{
	char msg[512];
	va_list ap;

	if (!bad)
		return;
	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	bad(ctx, msg);
}

typedef void (*line_fn)(void *into, const char *line, size_t lineno, ga_trigger_bad_fn bad,
                        void *ctx);

/* fn over each non-empty line of text, without its newline. */
static void each_line(const char *text, line_fn fn, void *into, ga_trigger_bad_fn bad, void *ctx)
{
	size_t lineno = 0;

	for (const char *s = text; s && *s;) {
		size_t len = strcspn(s, "\n");
		lineno++;
		if (len) {
			char *line = ga_xstrndup(s, len);
			fn(into, line, lineno, bad, ctx);
			free(line);
		}
		s += len + (s[len] == '\n');
	}
}

/* One line, "RULE-ID<TAB>EXPRESSION" without its newline: added to t, or
 * passed to bad. */
static void parse_line(void *into, const char *line, size_t lineno, ga_trigger_bad_fn bad,
                       void *ctx)
{
	ga_trigger *t = into;
	const char *tab = strchr(line, '\t');
	char why[256];
	size_t off = 0;
	ga_expr *e;
	char *id;

	if (!tab || tab == line) {
		say_bad(bad, ctx, "line %zu is not RULE-ID<TAB>EXPRESSION", lineno);
		return;
	}
	id = ga_xstrndup(line, (size_t)(tab - line));
	if (!(e = ga_expr_parse(tab + 1, &off, why, sizeof(why)))) {
		say_bad(bad, ctx, "rule %s: its expression does not parse at offset %zu: %s", id,
		        off, why);
		free(id);
		return;
	}
	GA_PUSH(t->rules, t->n_rules, t->cap_rules, ((rule_trigger){ id, e }));
}

ga_trigger *ga_trigger_parse(const char *text, ga_trigger_bad_fn bad, void *ctx)
{
	ga_trigger *t = ga_xcalloc(1, sizeof(*t));

	each_line(text, parse_line, t, bad, ctx);
	if (!t->n_rules) {
		ga_trigger_free(t);
		return NULL;
	}
	return t;
}

void ga_trigger_free(ga_trigger *t)
{
	if (!t)
		return;
	for (size_t i = 0; i < t->n_rules; i++) {
		free(t->rules[i].id);
		ga_expr_free(t->rules[i].when);
	}
	free(t->rules);
	free(t);
}

typedef struct {
	char *const *names;
	const double *values;
	size_t n;
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

int ga_trigger_holds(const ga_trigger *t, char *const *names, const double *values, size_t n,
                     char **why)
{
	launch_values lv = {names, values, n};
	ga_buf ids = {0};
	size_t held = 0;

	for (size_t i = 0; t && i < t->n_rules; i++) {
		double v = 0;
		if (ga_expr_eval(t->rules[i].when, lookup, &lv, &v, NULL, 0) != GA_EVAL_OK ||
		    v == 0.0)
			continue;
		ga_buf_printf(&ids, "%s%s", held++ ? ", " : "", t->rules[i].id);
	}
	if (!held)
		return 0;
	*why = ga_xasprintf("rule%s %s", held > 1 ? "s" : "", ids.s);
	ga_buf_free(&ids);
	return 1;
}

/* ---- kernels left out (GA_ENV_SOURCE_SKIP) ---- */

typedef struct {
	char *glob;               /* or */
	regex_t *regex;
	int keep;                 /* '!': an editable owner's: a match is not left out */
} name_pattern;

struct ga_name_filter {
	name_pattern *pats;
	size_t n, cap;
};

/* "glob<TAB>PATTERN" or "regex<TAB>PATTERN", after a '!' for keep. */
static void filter_line(void *into, const char *line, size_t lineno, ga_trigger_bad_fn bad,
                        void *ctx)
{
	ga_name_filter *f = into;
	name_pattern np = {.keep = line[0] == '!'};
	const char *tab;

	line += np.keep;
	tab = strchr(line, '\t');
	if (tab && (size_t)(tab - line) == 4 && strncmp(line, "glob", 4) == 0) {
		np.glob = ga_xstrdup(tab + 1);
	} else if (tab && (size_t)(tab - line) == 5 && strncmp(line, "regex", 5) == 0) {
		np.regex = ga_xmalloc(sizeof(*np.regex));
		if (regcomp(np.regex, tab + 1, REG_EXTENDED | REG_NOSUB) != 0) {
			free(np.regex);
			say_bad(bad, ctx, "line %zu: the regex does not compile", lineno);
			return;
		}
	} else {
		say_bad(bad, ctx, "line %zu is not glob<TAB>PATTERN or regex<TAB>PATTERN", lineno);
		return;
	}
	GA_PUSH(f->pats, f->n, f->cap, np);
}

ga_name_filter *ga_name_filter_parse(const char *text, ga_trigger_bad_fn bad, void *ctx)
{
	ga_name_filter *f = ga_xcalloc(1, sizeof(*f));

	each_line(text, filter_line, f, bad, ctx);
	if (!f->n) {
		ga_name_filter_free(f);
		return NULL;
	}
	return f;
}

int ga_name_filter_matches(const ga_name_filter *f, const char *name, const char *mangled)
{
	for (size_t i = 0; f && i < f->n; i++)
		if (ga_names_match(f->pats[i].glob, f->pats[i].regex, name, mangled))
			return !f->pats[i].keep;
	return 0;
}

void ga_name_filter_free(ga_name_filter *f)
{
	if (!f)
		return;
	for (size_t i = 0; i < f->n; i++) {
		free(f->pats[i].glob);
		if (f->pats[i].regex) {
			regfree(f->pats[i].regex);
			free(f->pats[i].regex);
		}
	}
	free(f->pats);
	free(f);
}
