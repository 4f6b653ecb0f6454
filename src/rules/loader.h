/* loader.h: what the files of the rule loader share; private to src/rules.
 *
 *   ruleset.c  class and severity names, diagnostics, freeing, look-ups
 *   yamlnode.c diagnostics at positions, node helpers (below the next three)
 *   load.c     reading a file or a directory, YAML limits
 *   parse.c    the keys of a rule or classifier, from libyaml's node tree
 *   check.c    whole-set checks, the metric lists, the source-line trigger
 *   owners.c   the owners file (whose kernel it is) and a rule's owners:
 *
 * Only yamlnode.c, load.c, parse.c and owners.c include libyaml.  The calls
 * run one way: load.c -> parse.c -> owners.c, each -> yamlnode.c. */
#ifndef GA_RULES_LOADER_H
#define GA_RULES_LOADER_H

#include <stdarg.h>
#include <sys/types.h>

#include <yaml.h>

#include "rules.h"
#include "../util/util.h"

/* One file being loaded. */
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
	ga_name_pos *unresolved; /* names left to the classifier, with places */
	size_t n_unresolved, cap_unresolved;
};

/* A hostile file can hold a problem on every line, or tens of thousands of
 * unknown names in one expression: past this many, problems are counted
 * (the rule is still rejected) but neither located nor reported, which
 * keeps both the work and the output bounded. */
#define MAX_FILE_DIAGS 50

struct key_spec {
	const char *name;
	int required;
};

struct strlist {
	char **v;
	size_t n, cap;
};

/* ruleset.c */
void diags_vadd(ga_diags *d, const char *file, int line, int col, const char *fmt, va_list ap);
void diags_sort_from(ga_diags *d, size_t from);
void named_free(ga_named_expr *m, size_t n);
void strv_free(char **v, size_t n);
void rule_free(ga_rule *r);
void ga_name_pos_free(ga_name_pos *v, size_t n);
void classifier_free(ga_classifier *c);
void owner_pattern_free(ga_owner_pattern *pt);
void owners_free(ga_owner *v, size_t n);

/* yamlnode.c: diagnostics and positions */
void index_lines(struct loader *L);
int lerr_room(struct loader *L);
void lerr(struct loader *L, int line, int col, const char *fmt, ...)
	__attribute__((format(printf, 4, 5)));
#define node_err(L, n, ...) \
	lerr((L), (int)(n)->start_mark.line + 1, (int)(n)->start_mark.column + 1, __VA_ARGS__)
void byte_linecol(const struct loader *L, size_t off, size_t *line, size_t *col);
void scalar_pos(const struct loader *L, const yaml_node_t *n, size_t off, int *out_line,
                int *out_col);
int is_ws(char c);
/* yamlnode.c: node helpers */
yaml_node_t *node_at(struct loader *L, int index);
const char *scalar(const yaml_node_t *n);
int has_nul(const yaml_node_t *n);   /* a scalar with a NUL inside */
void collect_keys(struct loader *L, yaml_node_t *map, const struct key_spec *spec,
                  size_t n_spec, yaml_node_t **keys, yaml_node_t **vals);
char *get_string(struct loader *L, yaml_node_t *n, const char *key, int one_line);
/* A plain scalar true or false into *out: 0, or -1 after a diagnostic. */
int get_bool(struct loader *L, yaml_node_t *n, const char *key, int *out);
int valid_id(const char *s);

/* load.c */
int cmp_str(const void *a, const void *b);

/* parse.c */
ssize_t named_index(const ga_named_expr *m, size_t n, const char *name);
int is_metric_name(const char *s);
int is_pseudo_metric(const char *name);     /* launch__*, device__*, program__*, roofline__* */
/* The first pseudo metric that e reads, directly or through the named
 * expressions m[0..n_m), of which m[k] reads reached[k] (NULL: none).  NULL
 * when it reads none; the string belongs to e or m. */
const char *pseudo_reached(const ga_expr *e, const ga_named_expr *m, size_t n_m,
                           const char *const *reached);
/* reached[] for m, for pseudo_reached; the caller frees the array. */
const char **pseudo_table(const ga_named_expr *m, size_t n_m);
void load_rule(struct loader *L, yaml_node_t *map);
void load_classifier(struct loader *L, yaml_node_t *map);

/* owners.c */
void load_owners(struct loader *L, yaml_node_t *seq);
void load_rule_owners(struct loader *L, yaml_node_t *seq, ga_rule *r);

#endif
