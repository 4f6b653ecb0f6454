/* owners.c: the owners file (rules/owners.yaml: whose kernel it is) and a
 * rule's `owners:` key (see gpuadvise-rules(5), OWNERS).
 *
 *   owners:
 *     - name: cublas            # [a-z0-9-]+, unique
 *       display: cuBLAS         # one line
 *       editable: false         # can the user change the kernel's source?
 *       kernels:                # glob or regex on the kernel's names, with a kind
 *         - glob: "nvjet_*"
 *           kind: gemm
 *       modules: ["*libcublas*"]  # globs on the module it was loaded from
 *
 * Regexes are compiled here, so a bad one is reported at its place. */
#include "loader.h"

#include <regex.h>
#include <stdlib.h>
#include <string.h>

enum { OW_NAME, OW_DISPLAY, OW_EDITABLE, OW_KERNELS, OW_MODULES, OW__COUNT };

static const struct key_spec owner_keys[OW__COUNT] = {
	[OW_NAME] = { "name", 1 },
	[OW_DISPLAY] = { "display", 1 },
	[OW_EDITABLE] = { "editable", 1 },
	[OW_KERNELS] = { "kernels", 0 },
	[OW_MODULES] = { "modules", 0 },
};

enum { PK_GLOB, PK_REGEX, PK_KIND, PK__COUNT };

static const struct key_spec pattern_keys[PK__COUNT] = {
	[PK_GLOB] = { "glob", 0 },
	[PK_REGEX] = { "regex", 0 },
	[PK_KIND] = { "kind", 0 },
};

/* Patterns are tried for every kernel group; a few hundred is plenty. */
#define MAX_PATTERNS 512

static int add_regex(struct loader *L, yaml_node_t *n, ga_owner_pattern *pt)
{
	regex_t *re = ga_xmalloc(sizeof(*re));
	int rc = regcomp(re, pt->pattern, REG_EXTENDED | REG_NOSUB);

	if (rc != 0) {
		char msg[200];
		regerror(rc, re, msg, sizeof(msg));
		node_err(L, n, "'regex' is not a POSIX extended regular expression: %s", msg);
		free(re);
		return -1;
	}
	pt->regex = re;
	return 0;
}

/* One entry of `kernels:` ({glob|regex, kind}) into o. */
static void load_kernel_pattern(struct loader *L, yaml_node_t *x, ga_owner *o, size_t *cap)
{
	yaml_node_t *k[PK__COUNT], *v[PK__COUNT];
	ga_owner_pattern pt = {0};
	int errors = L->errors;

	if (x->type != YAML_MAPPING_NODE) {
		node_err(L, x, "'kernels' entries must be mappings with a glob or a regex "
		         "(and a kind)");
		return;
	}
	collect_keys(L, x, pattern_keys, PK__COUNT, k, v);
	if (!v[PK_GLOB] == !v[PK_REGEX]) {
		node_err(L, x, "a 'kernels' entry needs exactly one of 'glob' and 'regex'");
		return;
	}
	pt.how = v[PK_GLOB] ? GA_OWNER_GLOB : GA_OWNER_REGEX;
	pt.pattern = get_string(L, v[PK_GLOB] ? v[PK_GLOB] : v[PK_REGEX],
	                        v[PK_GLOB] ? "glob" : "regex", 1);
	if (pt.pattern && pt.how == GA_OWNER_REGEX)
		add_regex(L, v[PK_REGEX], &pt);
	if (v[PK_KIND] && (pt.kind = get_string(L, v[PK_KIND], "kind", 1)) != NULL &&
	    !valid_id(pt.kind))
		node_err(L, v[PK_KIND], "'kind' must use only lower-case letters, digits and "
		         "'-' (got '%s')", pt.kind);
	if (L->errors != errors) {
		owner_pattern_free(&pt);
		return;
	}
	GA_PUSH(o->patterns, o->n_patterns, *cap, pt);
}

static void load_patterns(struct loader *L, yaml_node_t *seq, int modules, ga_owner *o,
                          size_t *cap)
{
	const char *what = modules ? "modules" : "kernels";

	if (seq->type != YAML_SEQUENCE_NODE) {
		node_err(L, seq, "'%s' must be a list", what);
		return;
	}
	for (yaml_node_item_t *it = seq->data.sequence.items.start;
	     it < seq->data.sequence.items.top; it++) {
		yaml_node_t *x = node_at(L, *it);
		ga_owner_pattern pt = { .how = GA_OWNER_MODULE };

		if (!x)
			continue;
		if (o->n_patterns == MAX_PATTERNS) {
			node_err(L, x, "more than %d patterns for one owner", MAX_PATTERNS);
			return;
		}
		if (!modules) {
			load_kernel_pattern(L, x, o, cap);
			continue;
		}
		if ((pt.pattern = get_string(L, x, "modules", 1)) != NULL)
			GA_PUSH(o->patterns, o->n_patterns, *cap, pt);
	}
}

static void load_owner(struct loader *L, yaml_node_t *map, ga_owner **v, size_t *n,
                       size_t *cap)
{
	yaml_node_t *k[OW__COUNT], *val[OW__COUNT];
	ga_owner o = {0};
	size_t pcap = 0;

	if (map->type != YAML_MAPPING_NODE) {
		node_err(L, map, "'owners' entries must be mappings with keys name, display "
		         "and editable");
		return;
	}
	collect_keys(L, map, owner_keys, OW__COUNT, k, val);
	if (val[OW_NAME] && (o.name = get_string(L, val[OW_NAME], "name", 1)) != NULL) {
		if (!valid_id(o.name) || strcmp(o.name, GA_OWNERS_EDITABLE) == 0)
			node_err(L, val[OW_NAME], "owner 'name' must use only lower-case letters, "
			         "digits and '-', and not be '%s' (got '%s')", GA_OWNERS_EDITABLE,
			         o.name);
		for (size_t i = 0; i < *n; i++) {
			if (strcmp((*v)[i].name, o.name) == 0)
				node_err(L, val[OW_NAME], "owner '%s' is defined twice", o.name);
		}
	}
	if (val[OW_DISPLAY])
		o.display = get_string(L, val[OW_DISPLAY], "display", 1);
	if (val[OW_EDITABLE])
		get_bool(L, val[OW_EDITABLE], "editable", &o.editable);
	if (val[OW_KERNELS])
		load_patterns(L, val[OW_KERNELS], 0, &o, &pcap);
	if (val[OW_MODULES])
		load_patterns(L, val[OW_MODULES], 1, &o, &pcap);
	/* Kept even when incomplete: the file is dropped as a whole. */
	GA_PUSH(*v, *n, *cap, o);
}

void load_owners(struct loader *L, yaml_node_t *seq)
{
	ga_owner *v = NULL;
	size_t n = 0, cap = 0;
	int errors = L->errors, has_default = 0;

	if (seq->type != YAML_SEQUENCE_NODE) {
		node_err(L, seq, "'owners' must be a list of owners");
		return;
	}
	for (yaml_node_item_t *it = seq->data.sequence.items.start;
	     it < seq->data.sequence.items.top; it++) {
		yaml_node_t *x = node_at(L, *it);
		if (x)
			load_owner(L, x, &v, &n, &cap);
	}
	for (size_t i = 0; i < n; i++)
		has_default |= v[i].name && strcmp(v[i].name, GA_OWNER_DEFAULT) == 0;
	if (!has_default)
		node_err(L, seq, "'owners' must define the owner '%s', whose kernels no "
		         "pattern matches", GA_OWNER_DEFAULT);
	if (L->errors != errors) {
		owners_free(v, n);
		return;
	}
	/* A later directory's owners file replaces the earlier one. */
	owners_free(L->rs->owners, L->rs->n_owners);
	free(L->rs->owners_path);
	L->rs->owners = v;
	L->rs->n_owners = n;
	L->rs->owners_path = ga_xstrdup(L->path);
}

/* A rule's `owners:` list of names, checked against the owners once the
 * whole set is loaded (ga_ruleset_validate). */
void load_rule_owners(struct loader *L, yaml_node_t *seq, ga_rule *r)
{
	size_t cap = 0;

	if (seq->type != YAML_SEQUENCE_NODE || !seq->data.sequence.items.top ||
	    seq->data.sequence.items.top == seq->data.sequence.items.start) {
		node_err(L, seq, "'owners' must be a non-empty list of owner names (or '%s')",
		         GA_OWNERS_EDITABLE);
		return;
	}
	for (yaml_node_item_t *it = seq->data.sequence.items.start;
	     it < seq->data.sequence.items.top; it++) {
		yaml_node_t *x = node_at(L, *it);
		const char *s = scalar(x);
		ga_name_pos np;

		if (!x)
			continue;
		if (!s || !valid_id(s)) {
			node_err(L, x, "'owners' entries must be owner names ([a-z0-9-]+)");
			continue;
		}
		if (r->n_owners == MAX_PATTERNS) {
			node_err(L, x, "more than %d 'owners' entries", MAX_PATTERNS);
			return;
		}
		np.what = ga_xstrdup("owners");
		np.name = ga_xstrdup(s);
		np.line = (int)x->start_mark.line + 1;
		np.col = (int)x->start_mark.column + 1;
		GA_PUSH(r->owners, r->n_owners, cap, np);
	}
}
