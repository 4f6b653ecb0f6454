/* rules.h: rule sets loaded from YAML (see man/gpuadvise-rules.5.scd).
 *
 * A rules directory holds classify.yaml (the classifier) and one file per
 * rule (*.yaml).  Loading several directories in order lets later ones add
 * rules or override rules with the same id, and replace the classifier.
 * Only the loader (src/rules/load.c, parse.c) includes libyaml. */
#ifndef GA_RULES_H
#define GA_RULES_H

#include <stddef.h>
#include <stdio.h>

#include "expr.h"

typedef enum {
	GA_CLASS_COMPUTE = 0,
	GA_CLASS_MEMORY,
	GA_CLASS_LATENCY,
	GA_CLASS_DIVERGENCE,
	GA_CLASS__COUNT,
	GA_CLASS_NONE = -1,
} ga_class;

typedef enum {
	GA_SEV_LOW = 0,
	GA_SEV_MEDIUM,
	GA_SEV_HIGH,
	GA_SEV__COUNT,
} ga_severity;

const char *ga_class_name(ga_class c);            /* "compute", ... */
ga_class ga_class_from_name(const char *s);        /* GA_CLASS_NONE if unknown */
const char *ga_severity_name(ga_severity s);       /* "low", "medium", "high" */
int ga_severity_from_name(const char *s);          /* -1 if unknown */

/* A named expression: `name: expression` under a `metrics:` mapping.  Later
 * entries may refer to earlier names. */
typedef struct {
	char *name;
	char *src;
	ga_expr *expr;
} ga_named_expr;

/* A name in a rule's expression that the loader could not resolve (it may
 * be the final classifier's): where it stands, for ga_ruleset_validate. */
typedef struct {
	char *what;               /* "when", "estimate", "metrics.NAME" ... */
	char *name;
	int line, col;
} ga_name_pos;

typedef struct {
	char *id;                 /* unique, [a-z0-9-]+ */
	char *title;
	ga_class klass;           /* the class this rule explains */
	int checklist;            /* position in the optimisation checklist, 1.. */
	ga_severity severity;
	double speedup_min, speedup_max;  /* expected speedup range of the fix, e.g. 2 .. 10 */
	ga_named_expr *metrics;
	size_t n_metrics;
	char *when_src;           /* fires when this is true */
	ga_expr *when;
	char *estimate_src;       /* fraction of the kernel's time the fix saves, 0..1 */
	ga_expr *estimate;
	char *model;              /* one line naming the estimate's model, or NULL */
	char *low_src, *high_src; /* the model's uncertainty, same unit as estimate; both
	                           * or neither (NULL: the stock `speedup` range) */
	ga_expr *low, *high;
	char *source_lines_src;   /* when the collector should measure source lines, or NULL */
	ga_expr *source_lines;
	char **evidence;          /* names (metrics or named exprs) to show as evidence */
	size_t n_evidence;
	char *fix;                /* what to do, one paragraph */
	char *example;            /* short code example */
	char *explain;            /* longer explanation for --explain */
	char *path;               /* file it came from */
	int line;                 /* line of its first key */
	ga_name_pos *unresolved;  /* the first few names left to the classifier */
	size_t n_unresolved;
	/* `owners:` the kernel owners (owners.yaml) the rule applies to, or
	 * "editable" for every editable one; none: editable owners only.
	 * Each with its place, checked against the owners by
	 * ga_ruleset_validate. */
	ga_name_pos *owners;
	size_t n_owners;
	/* `scope: program`: fired once per process on its timeline (timeline__*
	 * values), not per kernel; its estimate is a share of the process's
	 * wall time. */
	int program;
	/* `keeps_work: true`: the fix moves the same bytes and does the same
	 * FLOPs, so the kernel's roofline bound (its bytes and FLOPs at the
	 * GPU's peaks) is a floor no estimate of it goes past. */
	int keeps_work;
	/* `keeps_instructions: true`: the fix issues the same instructions
	 * (padding, another access order, other launch dimensions), so the
	 * time the kernel's SM sub-partitions spend issuing them is a floor. */
	int keeps_instructions;
	/* A program rule's share of the wall time its fix acts on (0..1; NULL:
	 * all of it): its estimate over this is the speedup of that part. */
	char *affects_src;
	ga_expr *affects;
} ga_rule;

typedef struct {
	ga_class klass;
	char *when_src;           /* first entry whose `when` holds gives the class */
	ga_expr *when;
	char *score_src;          /* 0..100: how strongly the kernel shows this class */
	ga_expr *score;
} ga_class_entry;

typedef struct {
	ga_named_expr *metrics;
	size_t n_metrics;
	ga_class_entry *order;    /* evaluated in order */
	size_t n_order;
	double close_margin;      /* runner-up shown when its score is within this many points */
	char **evidence;          /* names shown as evidence for the class */
	size_t n_evidence;
	char *path;
} ga_classifier;

/* Whose kernel it is (owners.yaml, a file with the top-level key
 * `owners:`): a library the user calls (cuBLAS, cuDNN, NCCL, ATen...) or
 * the user's own code.  A kernel belongs to the first owner, in file
 * order, with a pattern that matches it; to GA_OWNER_DEFAULT when none
 * does. */
#define GA_OWNER_DEFAULT "user"
#define GA_OWNERS_EDITABLE "editable"  /* in a rule's owners: every editable owner */

typedef enum {
	GA_OWNER_GLOB,            /* fnmatch(3) on the kernel's names */
	GA_OWNER_REGEX,           /* POSIX extended regex, anywhere in the names */
	GA_OWNER_MODULE,          /* fnmatch(3) on the module it was loaded from */
} ga_owner_how;

typedef struct {
	ga_owner_how how;
	char *pattern;
	void *regex;              /* regex_t, compiled at load (GA_OWNER_REGEX) */
	char *kind;               /* what such a kernel does ("gemm"...), or NULL */
} ga_owner_pattern;

typedef struct {
	char *name;               /* [a-z0-9-]+: "cublas", "aten", "user" */
	char *display;            /* "cuBLAS" */
	int editable;             /* the user can change its source */
	ga_owner_pattern *patterns;
	size_t n_patterns;
} ga_owner;

typedef struct {
	ga_rule *rules;
	size_t n_rules, cap_rules;
	ga_classifier classifier;
	int has_classifier;
	ga_owner *owners;         /* from the last owners file loaded; none: all "user" */
	size_t n_owners;
	char *owners_path;
} ga_ruleset;

/* One problem found in a rule file. */
typedef struct {
	char *file;
	int line, col;            /* 1-based; 0 when unknown */
	char *msg;
} ga_diag;

typedef struct {
	ga_diag *v;
	size_t n, cap;
} ga_diags;

void ga_diags_add(ga_diags *d, const char *file, int line, int col, const char *fmt, ...)
	__attribute__((format(printf, 5, 6)));
void ga_diags_free(ga_diags *d);
/* Print as "file:line:col: error: msg", one per line. */
void ga_diags_print(const ga_diags *d, FILE *out);

void ga_ruleset_init(ga_ruleset *rs);
void ga_ruleset_free(ga_ruleset *rs);

/* Load one file (a rule, or the classifier when the top-level key
 * `classifier:` is present).  Every problem is added to d, the loader keeps
 * going to report them all; returns the number of new diagnostics (0 = ok).
 * A rule with errors is not added. */
int ga_rules_load_file(ga_ruleset *rs, const char *path, ga_diags *d);
/* Load every *.yaml / *.yml in dir, sorted by name.  A missing dir is a
 * diagnostic.  Returns the number of new diagnostics. */
int ga_rules_load_dir(ga_ruleset *rs, const char *dir, ga_diags *d);
/* How many rule files (*.yaml, *.yml) dir holds; -1 (errno) if it cannot
 * be opened. */
long ga_rules_dir_files(const char *dir);

/* Cross-file checks after loading: classifier present, ids unique (override
 * is fine), evidence names defined.  Returns number of new diagnostics. */
int ga_ruleset_validate(const ga_ruleset *rs, ga_diags *d);

const ga_rule *ga_ruleset_find(const ga_ruleset *rs, const char *id);
/* The owner called name, or NULL. */
const ga_owner *ga_ruleset_owner(const ga_ruleset *rs, const char *name);
/* Whether rule r applies to kernels of owner o (see ga_rule.owners). */
int ga_rule_applies_to(const ga_rule *r, const ga_owner *o);

/* The value of a classifier constant: a named expression of the
 * classifier's `metrics:` that reads no metric, such as a cut-off that the
 * roofline or the source ranking shares with the classifier.  NAN when the
 * name is not defined or reads a metric. */
double ga_classifier_value(const ga_ruleset *rs, const char *name);

/* Every metric name the rule set reads from a profile: identifiers that are
 * not named expressions of the same rule/classifier and not pseudo metrics
 * (launch__*, device__*, program__*, roofline__*, which the engine
 * supplies).  Sorted, unique; the caller frees the array and the strings. */
size_t ga_ruleset_metric_names(const ga_ruleset *rs, char ***out);
/* The metrics the classifier cannot do without: those outside the first
 * argument of avail().  What --quick collects.  Same ownership. */
size_t ga_classifier_required_metric_names(const ga_ruleset *rs, char ***out);
/* The metrics of ga_ruleset_metric_names grouped for collection: the
 * classifier's first (bundle 0), then each rule's not yet listed, rules in
 * checklist order (then severity, then id).  bundle[i] is the bundle of
 * (*out)[i]; bundles are numbered from 0 without gaps and appear in order.
 * A collector fills replay passes bundle by bundle, so a rule's inputs are
 * measured together. */
size_t ga_ruleset_metric_bundles(const ga_ruleset *rs, char ***out, size_t **bundle);

/* When the collector should measure a kernel's source lines: for each rule
 * with `source_lines`, in rule order, one line
 *     RULE-ID <TAB> EXPRESSION <NEWLINE>
 * where EXPRESSION is the rule's `source_lines` over CUPTI metric names
 * only, every named expression (the rule's, the classifier's) inlined in
 * parentheses.  Neither part holds a tab or a newline (ids are
 * [a-z0-9-]+; the expression printer writes neither).  The collector
 * parses each EXPRESSION with ga_expr_parse and evaluates it over the
 * metrics it measured; a rule whose metrics a launch did not measure does
 * not hold there, and the others are not affected.  This is the text of
 * GA_ENV_SOURCE_WHEN (collect/protocol.h).  malloc'd; NULL when no rule
 * has `source_lines`.  A rule whose expression is over 64 KiB written out,
 * or nested beyond the parser's limits, is left out (ga_ruleset_validate
 * reports it). */
char *ga_ruleset_source_trigger(const ga_ruleset *rs);
/* The owners' kernel-name patterns (glob and regex) in the owners file's
 * order, one a line "glob<TAB>PATTERN" or "regex<TAB>PATTERN", with a
 * leading '!' for an editable owner's: the text of GA_ENV_SOURCE_SKIP.
 * The first line that matches a kernel decides, as the first owner does;
 * without '!' the kernel is a library's, whose source lines point at code
 * nobody in the program can change (and libraries carry no line tables),
 * so the default source mode leaves it out.  Module patterns are not in
 * it (the collector does not know a kernel's module).  malloc'd; NULL
 * when no owner that is not editable has a name pattern. */
char *ga_ruleset_source_skip(const ga_ruleset *rs);
/* A kernel pattern's kind for communication (NCCL's collectives, NVSHMEM):
 * such a kernel waits for its peers in other processes. */
#define GA_KIND_COMM "comm"
/* The same lines, with '!' before every pattern whose kind is not
 * GA_KIND_COMM: the text of GA_ENV_NO_REPLAY, the kernels the collector
 * never replays nor puts in a loop's range, since a replay of a kernel
 * that waits for another process waits for ever.  malloc'd; NULL when no
 * pattern has that kind. */
char *ga_ruleset_no_replay(const ga_ruleset *rs);
/* The rules with `source_lines` whose expressions read the source view's
 * opcodes (a source__* name), "ID,ID", malloc'd; NULL: none.  The
 * collector disassembles only the kernels those rules flag (and every
 * kernel under --source). */
char *ga_ruleset_source_opcodes(const ga_ruleset *rs);

#endif
