/* sarif.c: SARIF 2.1.0 (OASIS Static Analysis Results Interchange Format),
 * the format GitHub and GitLab code scanning read, so that each finding
 * shows as an annotation on the source line in a pull request.
 *
 * One run.  tool.driver names gpuadvise and lists every rule with a result
 * (ruleIndex points into that list).  One result per finding, in rank
 * order (a rule's findings on several launch shapes of one kernel, which
 * share a fingerprint: one, with the figures of its "What to do first"
 * entry, ga_finding_figures): level from the rule's severity (high:
 * error, medium: warning, low: note); the message names the kernel, the
 * share of all GPU time the fix would save, the estimate and the rule's
 * range, and the evidence; locations[0] is the finding's first source
 * line (ga_finding.lines) relative to the source root through uriBaseId
 * SRCROOT, with the kernel as its logical location, and the finding's
 * further lines are
 * relatedLocations; with no line of its kind, the kernel's first line.  A
 * finding in a kernel without line information has the logical location
 * only, and the run's properties say why and what adds them (GitHub code
 * scanning refuses such a log: see gpuadvise(1)).
 * partialFingerprints carry ga_finding.fingerprint under
 * "gpuadvise/v<GA_FINGERPRINT_VERSION>"; with --baseline each result has a
 * baselineState, and every baseline finding that is gone is a result of
 * level none with baselineState "absent".
 *
 * Like every reporter this only formats: which lines, the fingerprints
 * and the comparison are the analysis's (analyze/locate.c, baseline.c). */
#include "report.h"

#include "ga_build.h"

#include <ctype.h>
#include <jansson.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#define SARIF_SCHEMA "https://json.schemastore.org/sarif-2.1.0.json"
#define SRCROOT "SRCROOT"

/* A string as JSON, "" for none. */
static json_t *jstr(const char *s)
{
	return ga_report_json_string(s ? s : "");
}

static json_t *jtext(const char *s)
{
	return json_pack("{s:o}", "text", jstr(s));
}

static void set_num(json_t *obj, const char *key, double v)
{
	if (isfinite(v))
		json_object_set_new(obj, key, json_real(v));
}

static const char *level(ga_severity s)
{
	switch (s) {
	case GA_SEV_HIGH: return "error";
	case GA_SEV_MEDIUM: return "warning";
	case GA_SEV_LOW:
	default: return "note";
	}
}

/* "uncoalesced-global-access" -> "UncoalescedGlobalAccess": SARIF's
 * reportingDescriptor.name is an identifier-like name. */
static char *pascal_name(const char *id)
{
	ga_buf b = {0};
	int up = 1;
	for (const char *s = id; s && *s; s++) {
		if (!isalnum((unsigned char)*s)) {
			up = 1;
			continue;
		}
		ga_buf_putc(&b, up ? (char)toupper((unsigned char)*s) : *s);
		up = 0;
	}
	return b.s ? ga_buf_take(&b) : ga_xstrdup("Rule");
}

/* ---- rules --------------------------------------------------------------- */

typedef struct {
	const ga_rule **v;
	size_t n, cap;
} rule_list;

static size_t rule_index(rule_list *rl, const ga_rule *r)
{
	for (size_t i = 0; i < rl->n; i++)
		if (rl->v[i] == r)
			return i;
	GA_PUSH(rl->v, rl->n, rl->cap, r);
	return rl->n - 1;
}

static json_t *rule_help(const ga_rule *r)
{
	ga_buf text = {0}, md = {0};
	ga_buf_puts(&text, r->fix ? r->fix : "");
	ga_buf_puts(&md, r->fix ? r->fix : "");
	if (r->example && *r->example) {
		size_t n = strlen(r->example);
		const char *nl = r->example[n - 1] == '\n' ? "" : "\n";
		ga_buf_printf(&text, "\n\n%s%s", r->example, nl);
		ga_buf_printf(&md, "\n\n```cuda\n%s%s```\n", r->example, nl);
	}
	json_t *j = json_pack("{s:o, s:o}", "text", jstr(text.s), "markdown", jstr(md.s));
	ga_buf_free(&text);
	ga_buf_free(&md);
	return j;
}

static json_t *rule_json(const ga_rule *r)
{
	char *name = pascal_name(r->id);
	const char *full = r->explain && *r->explain ? r->explain : r->fix;
	const char *klass = r->klass >= 0 && r->klass < GA_CLASS__COUNT
	                    ? ga_class_name(r->klass) : NULL;
	json_t *tags = json_pack("[s, s]", "performance", "cuda");
	if (klass)
		json_array_append_new(tags, jstr(klass));
	json_t *props = json_pack("{s:o, s:i, s:s, s:o}",
		"class", klass ? jstr(klass) : json_null(),
		"checklist", r->checklist,
		"severity", ga_report_severity(r->severity),
		"tags", tags);
	set_num(props, "speedupMin", r->speedup_min);
	set_num(props, "speedupMax", r->speedup_max);
	if (r->model)
		json_object_set_new(props, "model", jstr(r->model));
	json_t *j = json_pack("{s:o, s:o, s:o, s:o, s:o, s:{s:s}, s:o}",
		"id", jstr(r->id),
		"name", jstr(name),
		"shortDescription", jtext(r->title),
		"fullDescription", jtext(full),
		"help", rule_help(r),
		"defaultConfiguration", "level", level(r->severity),
		"properties", props);
	free(name);
	return j;
}

/* ---- locations ----------------------------------------------------------- */

/* s percent-encoded as a URI path: unreserved characters and '/' stay. */
static void put_uri_path(ga_buf *b, const char *s)
{
	for (; *s; s++) {
		unsigned char c = (unsigned char)*s;
		if (isalnum(c) || strchr("-._~/", c))
			ga_buf_putc(b, (char)c);
		else
			ga_buf_printf(b, "%%%02X", c);
	}
}

/* path with "." and "name/.." segments removed and '/' runs collapsed,
 * lexically (no file is read): the collector records a build-relative
 * file as the compile directory joined with it, "/src/build/../k.cu".
 * ".." that climbs past the start of a relative path stays. */
static char *normal_path(const char *path)
{
	size_t n = strlen(path), len = 0, keep = 0;
	char *out = ga_xmalloc(n + 2);
	int abs = path[0] == '/';

	if (abs)
		out[len++] = '/';
	keep = len;   /* out[0..keep) cannot be popped: "/" or leading ".." */
	for (const char *s = path; *s;) {
		while (*s == '/')
			s++;
		const char *e = strchr(s, '/');
		size_t k = e ? (size_t)(e - s) : strlen(s);
		if (k == 0 || (k == 1 && s[0] == '.')) {
			/* nothing */
		} else if (k == 2 && s[0] == '.' && s[1] == '.' && len > keep) {
			while (len > keep && out[len - 1] != '/')
				len--;
			if (len > keep)
				len--;   /* the '/' before the dropped segment */
		} else if (!(k == 2 && s[0] == '.' && s[1] == '.' && abs)) {
			if (len > 0 && out[len - 1] != '/')
				out[len++] = '/';
			memcpy(out + len, s, k);
			len += k;
			if (k == 2 && s[0] == '.' && s[1] == '.')
				keep = len;
		}
		s += k;
	}
	out[len] = '\0';
	return out;
}

/* The artifactLocation of a source file: relative to the source root
 * (uriBaseId SRCROOT) when the profile's path is relative (the program ran
 * from the root, or the collector's paths were rewritten so) or lies under
 * the root; an absolute file URI otherwise. */
static json_t *artifact_json(const char *path, const ga_report_opts *o)
{
	const char *root = o ? o->source_root : NULL;
	char *norm = normal_path(path);
	const char *file = norm;
	ga_buf b = {0};
	json_t *j;

	if (file[0] == '/') {
		size_t n = root ? strlen(root) : 0;
		if (n && strncmp(file, root, n) == 0 && file[n] == '/') {
			file += n + 1;
		} else {
			ga_buf_puts(&b, "file://");
			put_uri_path(&b, file);
			j = json_pack("{s:s}", "uri", b.s);
			ga_buf_free(&b);
			free(norm);
			return j;
		}
	}
	put_uri_path(&b, file);
	j = json_pack("{s:s, s:s}", "uri", b.s ? b.s : "", "uriBaseId", SRCROOT);
	ga_buf_free(&b);
	free(norm);
	return j;
}

/* The kernel's name without its return type and parameter list. */
static char *function_name(const char *name)
{
	if (ga_str_has_prefix(name, "void ") && name[5])
		name += 5;
	long p = ga_report_params_start(name);
	return p > 0 ? ga_xstrndup(name, (size_t)p) : ga_xstrdup(name);
}

static json_t *logical_json(const ga_group *g)
{
	const char *full = g->name ? g->name : g->mangled ? g->mangled : "?";
	char *name = function_name(full);
	json_t *j = json_pack("[{s:o, s:o, s:s}]", "name", jstr(name),
	                      "fullyQualifiedName", jstr(full), "kind", "function");
	if (g->mangled)
		json_object_set_new(json_array_get(j, 0), "decoratedName", jstr(g->mangled));
	free(name);
	return j;
}

static json_t *physical_json(const ga_source_line *l, const ga_report_opts *o)
{
	json_t *region = json_pack("{s:i}", "startLine", l->line);
	if (l->text && *l->text)
		json_object_set_new(region, "snippet", jtext(l->text));
	return json_pack("{s:o, s:o}", "artifactLocation", artifact_json(l->file, o),
	                 "region", region);
}

/* locations (the first line, or the kernel alone) and relatedLocations
 * (the further lines) of a finding of group g. */
static void set_locations(json_t *res, const ga_finding *f, const ga_group *g,
                          const ga_report_opts *o)
{
	json_t *loc = json_pack("{s:o}", "logicalLocations", logical_json(g));
	if (f->n_lines) {
		const ga_source_line *l = &g->lines[f->lines[0]];
		json_object_set_new(loc, "physicalLocation", physical_json(l, o));
		if (l->desc[0])
			json_object_set_new(loc, "message", jtext(l->desc));
	} else if (f->at_entry) {
		json_object_set_new(loc, "physicalLocation", physical_json(&g->entry, o));
		json_object_set_new(loc, "message", jtext("The kernel's first line: the source "
		                    "view ranked no line of this finding's kind."));
	}
	json_object_set_new(res, "locations", json_pack("[o]", loc));
	if (f->n_lines < 2)
		return;
	json_t *rel = json_array();
	for (size_t i = 1; i < f->n_lines; i++) {
		const ga_source_line *l = &g->lines[f->lines[i]];
		json_t *r = json_pack("{s:i, s:o}", "id", (int)i,
		                      "physicalLocation", physical_json(l, o));
		if (l->desc[0])
			json_object_set_new(r, "message", jtext(l->desc));
		json_array_append_new(rel, r);
	}
	json_object_set_new(res, "relatedLocations", rel);
}

/* ---- results ------------------------------------------------------------- */

static const char *kernel_name(const ga_group *g)
{
	return g->name ? g->name : g->mangled ? g->mangled : "?";
}

static char *message(const ga_finding *f, const ga_group *g, const ga_figures *x)
{
	char save[32], est[32], sp[32], range[48], val[32];
	ga_buf b = {0};

	if (f->estimate_missing)
		ga_buf_printf(&b, "%s in %s: the estimate needs %s, which the profile lacks.",
		              f->rule->title, kernel_name(g), f->estimate_missing);
	else if (x->shapes > 1)
		ga_buf_printf(&b, "%s in %s, on %zu launch shapes: the fix would save ~%s%% of "
		              "all GPU time (estimated %s on those launches, the %s %s).",
		              f->rule->title, kernel_name(g), x->shapes,
		              ga_fmt_pct(x->saving, 0, save, sizeof(save)),
		              ga_fmt_speedup(x->speedup, sp, sizeof(sp)),
		              isnan(f->low) ? "rule expects" : "model's range is",
		              ga_fmt_speedup_range(x->speedup_min, x->speedup_max, range,
		                                   sizeof(range)));
	else
		ga_buf_printf(&b, "%s in %s: the fix would save ~%s%% of all GPU time (~%s%% of "
		              "this kernel's; estimated %s on this kernel, the %s %s).",
		              f->rule->title, kernel_name(g),
		              ga_fmt_pct(f->saving, 0, save, sizeof(save)),
		              ga_fmt_pct(f->estimate, 0, est, sizeof(est)),
		              ga_fmt_speedup(f->speedup, sp, sizeof(sp)),
		              isnan(f->low) ? "rule expects" : "model's range is",
		              ga_fmt_speedup_range(f->speedup_min, f->speedup_max, range,
		                                   sizeof(range)));
	for (size_t i = 0; i < f->n_evidence; i++)
		ga_buf_printf(&b, "%s%s = %s", i ? ", " : " Evidence: ", f->evidence[i].name,
		              ga_fmt_value(f->evidence[i].value, val, sizeof(val)));
	if (f->n_evidence)
		ga_buf_puts(&b, ".");
	if (f->n_lines) {
		const ga_source_line *l = &g->lines[f->lines[0]];
		if (l->desc[0])
			ga_buf_printf(&b, " Line %d: %s.", l->line, l->desc);
	}
	return ga_buf_take(&b);
}

/* The figures of a result: the finding's own, or of its kernel's launch
 * shapes (x->shapes > 1), its estimate, low and high then the shares of
 * those launches' time. */
static json_t *result_props(const ga_finding *f, const ga_group *g, const ga_figures *x)
{
	json_t *p = json_pack("{s:o, s:i}", "kernel", jstr(kernel_name(g)), "pid", g->pid);
	int shapes = x->shapes > 1;
	set_num(p, "saving", x->saving);
	set_num(p, "estimate", shapes ? ga_speedup_saved(x->speedup) : f->estimate);
	set_num(p, "speedup", x->speedup);
	set_num(p, "low", shapes && !isnan(f->low) ? ga_speedup_saved(x->speedup_min) : f->low);
	set_num(p, "high", shapes && !isnan(f->high) ? ga_speedup_saved(x->speedup_max) : f->high);
	if (shapes)
		json_object_set_new(p, "shapes", json_integer((json_int_t)x->shapes));
	if (f->estimate_missing)
		json_object_set_new(p, "estimateMissing", jstr(f->estimate_missing));
	json_t *ev = json_object();
	for (size_t i = 0; i < f->n_evidence; i++)
		json_object_set_new(ev, f->evidence[i].name, isfinite(f->evidence[i].value)
		                    ? json_real(f->evidence[i].value) : json_null());
	json_object_set_new(p, "evidence", ev);
	return p;
}

static json_t *result_json(const ga_finding *f, const ga_group *g, const ga_figures *x,
                           size_t ri, const char *lvl, const ga_report_opts *o)
{
	char *msg = message(f, g, x);
	char key[32];
	snprintf(key, sizeof(key), "gpuadvise/v%d", GA_FINGERPRINT_VERSION);
	json_t *res = json_pack("{s:o, s:i, s:s, s:o}", "ruleId", jstr(f->rule->id),
	                        "ruleIndex", (int)ri, "level", lvl, "message", jtext(msg));
	free(msg);
	set_locations(res, f, g, o);
	json_object_set_new(res, "partialFingerprints", json_pack("{s:s}", key, f->fingerprint));
	if (isfinite(x->saving))
		json_object_set_new(res, "rank", json_real(floor(x->saving * 1000 + 0.5) / 10));
	json_object_set_new(res, "properties", result_props(f, g, x));
	return res;
}

/* A baseline finding gone from this profile: level none, "absent". */
static json_t *absent_json(const ga_comparison *cmp, size_t bi, size_t ri,
                           const ga_report_opts *o)
{
	const ga_finding *f = &cmp->base->findings[bi];
	const ga_group *g = &cmp->base->groups[f->group];
	ga_figures x;
	ga_finding_figures(f, NULL, &x);
	json_t *res = result_json(f, g, &x, ri, "none", o);
	const ga_finding_change *gone = ga_comparison_gone(cmp, bi);
	char *pred = gone ? ga_prediction_text(gone->rule, &gone->check) : NULL;
	char *msg = ga_xasprintf("No longer found (was in the baseline): %s in %s%s%s.",
	                         f->rule->title, kernel_name(g), pred ? "; " : "", pred ? pred : "");
	if (pred) {
		json_t *props = json_object_get(res, "properties");
		set_num(props, "predictedSpeedup", gone->check.predicted);
		set_num(props, "measuredSpeedup", gone->check.measured);
	}
	free(pred);
	json_object_set_new(res, "message", jtext(msg));
	json_object_set_new(res, "baselineState", json_string("absent"));
	free(msg);
	return res;
}

static json_t *results_json(const ga_analysis *a, const ga_report_opts *o, rule_list *rl)
{
	const ga_comparison *cmp = o ? o->baseline : NULL;
	json_t *results = json_array();

	/* A rule's findings on several launch shapes of one kernel are one
	 * entry of "What to do first" (ga_do.on_shapes), and have one
	 * fingerprint: one result, at the entry's finding, with the shapes'
	 * figures.  by_entry: finding -> its entry + 1 (0: none). */
	size_t *by_entry = ga_xcalloc(a->n_findings + 1, sizeof(*by_entry));
	for (size_t k = 0; k < a->n_first; k++)
		if (a->first[k].kind == GA_DO_FINDING && a->first[k].on_shapes > 1 &&
		    a->first[k].index < a->n_findings)
			by_entry[a->first[k].index] = k + 1;
	for (size_t fi = 0; fi < a->n_findings; fi++) {
		const ga_finding *f = &a->findings[fi];
		const ga_do *d = by_entry[fi] ? &a->first[by_entry[fi] - 1] : NULL;
		if (f->shape_folded)
			continue;                /* in its entry's result */
		ga_figures x;
		ga_finding_figures(f, d, &x);
		size_t ri = rule_index(rl, f->rule);
		json_t *res = result_json(f, &a->groups[f->group], &x, ri,
		                          level(f->rule->severity), o);
		if (cmp)
			json_object_set_new(res, "baselineState",
			                    json_string(cmp->unchanged[fi] ? "unchanged" : "new"));
		json_array_append_new(results, res);
	}
	free(by_entry);
	for (size_t i = 0; cmp && i < cmp->n_absent; i++) {
		const ga_finding *f = &cmp->base->findings[cmp->absent[i]];
		json_array_append_new(results, absent_json(cmp, cmp->absent[i], rule_index(rl, f->rule), o));
	}
	return results;
}

/* ---- the run ------------------------------------------------------------- */

/* Kernels with findings but no line for them, by cause: the program has no
 * line table (-lineinfo), or no source lines were measured.  A library's
 * kernels have no lines to give: not listed. */
static json_t *line_notes(const ga_analysis *a)
{
	json_t *no_info = json_array(), *no_lines = json_array(), *notes = json_object();

	for (size_t gi = 0; gi < a->n_groups; gi++) {
		const ga_group *g = &a->groups[gi];
		int unlocated = 0;
		for (size_t k = 0; k < g->n_findings; k++)
			unlocated |= a->findings[g->findings[k]].n_lines == 0 &&
			             !a->findings[g->findings[k]].at_entry;
		if (!unlocated || (g->owner && !g->owner->editable))
			continue;
		if (g->source && !g->source->lineinfo)
			json_array_append_new(no_info, jstr(g->name));
		else if (!g->source)
			json_array_append_new(no_lines, jstr(g->name));
	}
	if (json_array_size(no_info))
		json_object_set_new(notes, "withoutLineInfo", json_pack("{s:o, s:s}",
			"kernels", no_info, "text",
			"The program was built without line information, so these kernels' "
			"results have the kernel's logical location only. Compile with "
			"nvcc -lineinfo (it adds line tables to the binary, not code) and "
			"profile again."));
	else
		json_decref(no_info);
	if (json_array_size(no_lines))
		json_object_set_new(notes, "withoutSourceLines", json_pack("{s:o, s:s}",
			"kernels", no_lines, "text",
			"No source lines were measured for these kernels: by default gpuadvise "
			"measures them only for kernels where a rule with source_lines fires "
			"(uncoalesced access, bank conflicts, divergence). gpuadvise --source "
			"measures every profiled kernel's lines (one extra launch each, about "
			"30 to 50 ms: 0.3 s for nine kernels in docs/PERFORMANCE.md); --stalls "
			"adds the stall reason at each line, which the stall rules point at, "
			"for a second run of the program (4.6 s more on a test app whose plain "
			"run takes 3.5 s)."));
	else
		json_decref(no_lines);
	return notes;
}

static json_t *run_props(const ga_analysis *a, const ga_report_opts *o)
{
	json_t *p = line_notes(a);
	if (o && o->n_inputs) {
		json_t *in = json_array();
		for (size_t i = 0; i < o->n_inputs; i++)
			json_array_append_new(in, jstr(o->inputs[i].path));
		json_object_set_new(p, "profiles", in);
	}
	if (o && o->baseline && o->baseline->label)
		json_object_set_new(p, "baseline", jstr(o->baseline->label));
	return p;
}

static json_t *base_ids(const ga_report_opts *o)
{
	json_t *root = json_pack("{s:{s:s}}", "description", "text",
	                         "The source root (gpuadvise --source-root).");
	if (o && o->source_root) {
		ga_buf b = {0};
		ga_buf_puts(&b, "file://");
		put_uri_path(&b, o->source_root);
		if (!b.len || b.s[b.len - 1] != '/')
			ga_buf_putc(&b, '/');
		json_object_set_new(root, "uri", json_string(b.s));
		ga_buf_free(&b);
	}
	return json_pack("{s:o}", SRCROOT, root);
}

void *ga_report_sarif_value(const ga_analysis *a, const ga_report_opts *o)
{
	rule_list rl = {0};
	json_t *results = results_json(a, o, &rl);
	json_t *rules = json_array();
	for (size_t i = 0; i < rl.n; i++)
		json_array_append_new(rules, rule_json(rl.v[i]));
	free(rl.v);

	json_t *run = json_pack("{s:{s:{s:s, s:s, s:o}}, s:o, s:o, s:o}",
		"tool", "driver", "name", "gpuadvise", "version", GA_VERSION, "rules", rules,
		"originalUriBaseIds", base_ids(o),
		"results", results,
		"properties", run_props(a, o));
	return json_pack("{s:s, s:s, s:[o]}", "$schema", SARIF_SCHEMA, "version", "2.1.0",
	                 "runs", run);
}

int ga_report_sarif(FILE *out, const ga_analysis *a, const ga_ruleset *rs,
                    const ga_report_opts *o)
{
	(void)rs;
	json_t *root = ga_report_sarif_value(a, o);
	/* Six significant digits: the measurements have fewer. */
	int rc = json_dumpf(root, out, JSON_INDENT(2) | JSON_PRESERVE_ORDER |
	                    JSON_REAL_PRECISION(6));
	json_decref(root);
	if (rc != 0 || fputc('\n', out) == EOF || fflush(out) != 0 || ferror(out))
		return -1;
	return 0;
}
