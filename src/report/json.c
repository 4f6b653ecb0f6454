/* json.c: the machine-readable report.
 *
 * {"format": "gpuadvise-report", "schema": 1, "profile": {...},
 *  "kernels": [...], "findings": [...], "summary": {...}, "notes": [...],
 *  "processes": [...], "baseline": {...} or null, "roofline": {peaks} or null}
 * and each kernel has a "roofline" object (see analyze/roofline.h).
 *
 * docs/report.schema.json describes it (checked against real output by
 * tests/cli/run.sh).
 *
 * Keys are written in a fixed order (jansson keeps insertion order), every
 * key is always present, and numbers that are not finite (NAN: not
 * evaluable or not measured) are written as null, since JSON has no NaN.
 * "kernels[].launch_indices" index the embedded profile's "launches" array;
 * "kernels[].findings" and "findings[].kernel" index the report's own arrays. */
#include "report.h"

#include <jansson.h>

#include "jsonout.h"
#include <math.h>
#include <stdlib.h>

#define GA_REPORT_FORMAT "gpuadvise-report"
#define GA_REPORT_SCHEMA 1

static json_t *class_json(ga_class c)
{
	if (c < 0 || c >= GA_CLASS__COUNT)
		return json_null();
	return str_or_null(ga_class_name(c));
}

static json_t *dims_json(const unsigned d[3])
{
	json_t *a = json_array();
	for (int i = 0; i < 3; i++)
		json_array_append_new(a, json_integer((json_int_t)d[i]));
	return a;
}

static json_t *evidence_json(const ga_evidence *ev, size_t n)
{
	json_t *o = json_object();
	for (size_t i = 0; i < n; i++)
		if (ev[i].name)
			json_object_set_new(o, ev[i].name, num(ev[i].value));
	return o;
}

/* {"DRAM": v, "L2": v, "L1": v} or the same over precisions. */
static json_t *per_level(const double *v)
{
	json_t *o = json_object();
	for (int l = 0; l < GA_ROOF__LEVELS; l++)
		json_object_set_new(o, ga_roof_level_name((ga_roof_level)l), num(v[l]));
	return o;
}

static json_t *per_prec(const double *v)
{
	json_t *o = json_object();
	for (int p = 0; p < GA_ROOF__PREC; p++)
		json_object_set_new(o, ga_roof_prec_name((ga_roof_prec)p), num(v[p]));
	return o;
}

static json_t *roof_kernel_json(const ga_roof_kernel *k)
{
	json_t *o = json_object();
	int placed = k->verdict != GA_ROOF_NOT_PLACED;
	json_object_set_new(o, "verdict", placed ? json_string(ga_roof_verdict_name(k->verdict))
	                                         : json_null());
	json_object_set_new(o, "agrees_with_class", k->agrees < 0 ? json_null()
	                                                          : json_boolean(k->agrees));
	json_object_set_new(o, "reason", str_or_null(k->reason));
	json_object_set_new(o, "flops_per_s", per_prec(k->flops));
	json_object_set_new(o, "flops_total_per_s", num(k->flops_total));
	json_object_set_new(o, "precision", placed ? json_string(ga_roof_prec_name(k->prec))
	                                           : json_null());
	json_object_set_new(o, "bytes_per_s", per_level(k->bytes));
	json_object_set_new(o, "intensity", per_level(k->intensity));
	json_object_set_new(o, "placed_by", placed ? json_string(ga_roof_level_name(k->placed_by))
	                                           : json_null());
	json_object_set_new(o, "flops_estimated", json_boolean(k->flops_estimated));
	json_object_set_new(o, "ridge", num(k->ridge));
	json_object_set_new(o, "attainable_flops_per_s", num(k->attainable));
	json_object_set_new(o, "binding_roof", !placed ? json_null()
	        : json_string(k->binding_is_compute ? ga_roof_prec_name(k->prec)
	                                            : ga_roof_level_name(k->binding)));
	json_object_set_new(o, "roof_fraction", num(k->roof_frac));
	json_t *occ = json_object();
	json_object_set_new(occ, "achieved_pct", num(k->occ_achieved_pct));
	json_object_set_new(occ, "theoretical_pct", num(k->occ_theoretical_pct));
	json_object_set_new(occ, "limiter", str_or_null(k->occ_limiter));
	json_object_set_new(o, "occupancy", occ);
	return o;
}

/* The device peaks: {"flops_per_s": {...}, "flops_source": {...},
 * "bytes_per_s": {...}, "bytes_source": {...}}. */
static json_t *roof_peaks_json(const ga_roof_peaks *pk)
{
	json_t *o = json_object(), *fs = json_object(), *bs = json_object();
	json_object_set_new(o, "flops_per_s", per_prec(pk->flops));
	for (int p = 0; p < GA_ROOF__PREC; p++)
		json_object_set_new(fs, ga_roof_prec_name((ga_roof_prec)p),
		                    json_string(ga_peak_source_name(pk->flops_src[p])));
	json_object_set_new(o, "flops_source", fs);
	json_object_set_new(o, "bytes_per_s", per_level(pk->bw));
	for (int l = 0; l < GA_ROOF__LEVELS; l++)
		json_object_set_new(bs, ga_roof_level_name((ga_roof_level)l),
		                    json_string(ga_peak_source_name(pk->bw_src[l])));
	json_object_set_new(o, "bytes_source", bs);
	return o;
}


/* "source": the kernel's top source lines, when source-level data exists. */
static json_t *source_json(const ga_group *g)
{
	const ga_source *src = g->source;
	const ga_source_line *top = g->lines;
	size_t n = g->n_lines;
	if (!src)
		return NULL;
	json_t *o = json_object(), *lines = json_array();
	json_object_set_new(o, "trigger", str_or_null(src->trigger));
	json_object_set_new(o, "lineinfo", json_boolean(src->lineinfo));
	if (g->source_sampled)
		json_object_set_new(o, "pc_sampling",
		                    json_pack("{s:f, s:f, s:f}", "period_cycles", src->sample_period,
		                              "samples", src->samples_total, "dropped",
		                              src->samples_dropped));
	for (size_t i = 0; i < n; i++) {
		const ga_source_line *l = &top[i];
		json_t *j = json_object(), *is = json_array();
		json_object_set_new(j, "file", str_or_null(l->file));
		json_object_set_new(j, "line", l->line > 0 ? json_integer(l->line) : json_null());
		json_object_set_new(j, "pc", json_integer(l->pc));
		json_object_set_new(j, "text", str_or_null(l->text));
		if (l->issues & GA_SRC_UNCOALESCED) json_array_append_new(is, json_string("uncoalesced"));
		if (l->issues & GA_SRC_BANK_CONFLICT) json_array_append_new(is, json_string("bank_conflict"));
		if (l->issues & GA_SRC_BRANCH) json_array_append_new(is, json_string("divergent_branch"));
		if (l->issues & GA_SRC_INACTIVE) json_array_append_new(is, json_string("inactive_threads"));
		if (l->issues & GA_SRC_STALL) json_array_append_new(is, json_string("stall_hotspot"));
		if (l->issues & GA_SRC_XU) json_array_append_new(is, json_string("xu_instructions"));
		if (l->issues & GA_SRC_LONE_LOAD) json_array_append_new(is, json_string("lone_load"));
		json_object_set_new(j, "issues", is);
		json_object_set_new(j, "share", num(l->score));
		json_object_set_new(j, "sectors_per_request", num(l->sectors_per_req));
		json_object_set_new(j, "ideal_sectors_per_request", num(l->sectors_ideal_per_req));
		json_object_set_new(j, "wavefronts_per_request", num(l->wavefronts_per_req));
		json_object_set_new(j, "ideal_wavefronts_per_request", num(l->wavefronts_ideal_per_req));
		json_object_set_new(j, "active_threads", num(l->active_threads));
		json_object_set_new(j, "branch_threads_before", num(l->branch_before));
		json_object_set_new(j, "branch_threads_after", num(l->branch_after));
		if (l->samples > 0) {
			json_object_set_new(j, "samples", json_real(l->samples));
			json_object_set_new(j, "stall_samples", json_real(l->stall_samples));
			json_object_set_new(j, "stall_share", json_real(l->stall_share));
			if (l->stall_reason) {
				json_object_set_new(j, "stall_reason", json_string(l->stall_reason));
				json_object_set_new(j, "stall_reason_samples",
				                    json_real(l->stall_reason_samples));
			}
		}
		if (l->lone_waits > 0) {
			json_object_set_new(j, "lone_load_waits", json_real(l->lone_waits));
			json_object_set_new(j, "lone_load_movable", num(l->lone_movable));
		}
		json_object_set_new(j, "summary", json_string(l->desc));
		json_array_append_new(lines, j);
	}
	json_object_set_new(o, "lines", lines);
	return o;
}

static json_t *kernel_json(const ga_group *g, const ga_roof_kernel *rk)
{
	json_t *k = json_object();
	json_object_set_new(k, "name", str_or_null(g->name));
	json_object_set_new(k, "mangled", str_or_null(g->mangled));
	json_object_set_new(k, "owner", str_or_null(g->owner ? g->owner->name : NULL));
	json_object_set_new(k, "pid", json_integer(g->pid));
	json_object_set_new(k, "grid", dims_json(g->grid));
	json_object_set_new(k, "block", dims_json(g->block));
	json_object_set_new(k, "launches", json_integer((json_int_t)g->n_launches));
	json_t *li = json_array();
	for (size_t i = 0; i < g->n_launches; i++)
		json_array_append_new(li, json_integer((json_int_t)g->launches[i]));
	json_object_set_new(k, "launch_indices", li);
	json_object_set_new(k, "unprofiled_launches", json_integer((json_int_t)g->unprofiled));
	json_object_set_new(k, "timeline_launches", json_integer((json_int_t)g->timeline_launches));
	json_object_set_new(k, "timeline_ns", num(g->timeline_ns));
	json_object_set_new(k, "below_min_share", json_boolean(g->below_min_share));
	json_object_set_new(k, "total_ns", num(g->total_ns));
	json_object_set_new(k, "mean_ns", num(g->mean_ns));
	json_object_set_new(k, "share", num(g->share));
	json_object_set_new(k, "class", class_json(g->klass));
	json_object_set_new(k, "runner_up", class_json(g->runner_up));
	json_t *sc = json_object();
	for (int c = 0; c < GA_CLASS__COUNT; c++) {
		const char *n = ga_class_name((ga_class)c);
		if (n)
			json_object_set_new(sc, n, num(g->scores[c]));
	}
	json_object_set_new(k, "scores", sc);
	json_object_set_new(k, "evidence", evidence_json(g->class_evidence, g->n_class_evidence));
	json_t *fi = json_array();
	for (size_t i = 0; i < g->n_findings; i++)
		json_array_append_new(fi, json_integer((json_int_t)g->findings[i]));
	json_object_set_new(k, "findings", fi);
	json_t *un = json_array();
	for (size_t i = 0; i < g->n_unchecked; i++)
		json_array_append_new(un, json_string(g->unchecked[i]->id));
	json_object_set_new(k, "unchecked_rules", un);
	json_object_set_new(k, "roofline", rk ? roof_kernel_json(rk) : json_null());
	json_t *src = source_json(g);
	if (src)
		json_object_set_new(k, "source", src);
	return k;
}

static json_t *finding_json(const ga_analysis *a, size_t idx)
{
	const ga_finding *f = &a->findings[idx];
	const ga_rule *r = f->rule;
	const ga_group *g = f->group < a->n_groups ? &a->groups[f->group] : NULL;
	json_t *o = json_object();

	json_object_set_new(o, "rank", json_integer((json_int_t)idx + 1));
	json_object_set_new(o, "rule", str_or_null(r ? r->id : NULL));
	json_object_set_new(o, "title", str_or_null(r ? r->title : NULL));
	json_object_set_new(o, "class", r ? class_json(r->klass) : json_null());
	json_object_set_new(o, "kernel_class", g ? class_json(g->klass) : json_null());
	json_object_set_new(o, "severity", r ? str_or_null(ga_severity_name(r->severity))
	                                     : json_null());
	json_object_set_new(o, "checklist", r ? json_integer(r->checklist) : json_null());
	json_object_set_new(o, "kernel", g ? json_integer((json_int_t)f->group) : json_null());
	json_object_set_new(o, "kernel_name", str_or_null(g ? g->name : NULL));
	json_object_set_new(o, "estimate", num(f->estimate));
	json_object_set_new(o, "saving", num(f->saving));
	json_object_set_new(o, "wall_saving", num(f->wall_saving));
	json_t *range = json_array();
	json_array_append_new(range, num(r ? f->speedup_min : NAN));
	json_array_append_new(range, num(r ? f->speedup_max : NAN));
	json_object_set_new(o, "expected_speedup", range);
	json_object_set_new(o, "floor", str_or_null(f->floor));
	json_object_set_new(o, "range_wide",
	                    json_boolean(r && ga_range_wide(f->speedup_min, f->speedup_max)));
	json_object_set_new(o, "estimated_speedup", num(f->speedup));
	json_object_set_new(o, "low", num(f->low));
	json_object_set_new(o, "high", num(f->high));
	json_object_set_new(o, "model", str_or_null(r ? r->model : NULL));
	json_object_set_new(o, "estimate_missing", str_or_null(f->estimate_missing));
	json_object_set_new(o, "evidence", evidence_json(f->evidence, f->n_evidence));
	json_object_set_new(o, "fix", str_or_null(r ? r->fix : NULL));
	return o;
}

static json_t *summary_json(const ga_analysis *a)
{
	json_t *s = json_object();
	json_object_set_new(s, "kernels", json_integer((json_int_t)a->n_groups));
	json_object_set_new(s, "launches", json_integer((json_int_t)a->n_launches));
	json_object_set_new(s, "total_gpu_ns", num(a->total_ns));
	json_t *cl = json_object();
	for (int c = 0; c < GA_CLASS__COUNT; c++) {
		const char *n = ga_class_name((ga_class)c);
		if (n)
			json_object_set_new(cl, n, json_integer((json_int_t)a->n_class[c]));
	}
	json_object_set_new(s, "classes", cl);
	json_object_set_new(s, "measured", json_pack("{s:I, s:I, s:I, s:I, s:I}",
	                    "kernel_replay", (json_int_t)a->measured.kernel_replay,
	                    "loop_replay", (json_int_t)a->measured.loop_replay,
	                    "unprofiled_at_mean", (json_int_t)a->measured.at_mean,
	                    "graph_launches", (json_int_t)a->measured.graph_launches,
	                    "timeline", (json_int_t)a->measured.timeline));
	json_object_set_new(s, "wall_currency", json_boolean(a->wall_currency));

	int max = ga_analysis_max_severity(a);
	json_object_set_new(s, "max_severity",
	                    max >= 0 ? str_or_null(ga_severity_name((ga_severity)max))
	                             : json_null());
	const ga_rule *top = a->n_findings ? a->findings[0].rule : NULL;
	json_object_set_new(s, "top_finding", str_or_null(top ? top->id : NULL));
	json_object_set_new(s, "library_share", num(a->library_share));
	json_object_set_new(s, "framework_first", json_boolean(a->framework_first));
	json_t *acts = json_array();
	for (size_t i = 0; i < a->n_actions; i++) {
		const ga_action *ac = &a->actions[i];
		json_t *o = json_object(), *fi = json_array(), *ki = json_array();
		json_object_set_new(o, "rule", str_or_null(ac->rule->id));
		json_object_set_new(o, "saving", num(ac->saving));
		json_object_set_new(o, "share", num(ac->share));
		for (size_t k = 0; k < ac->n_findings; k++) {
			json_array_append_new(fi, json_integer((json_int_t)ac->findings[k]));
			json_array_append_new(ki, json_integer(
				(json_int_t)a->findings[ac->findings[k]].group));
		}
		json_object_set_new(o, "findings", fi);
		json_object_set_new(o, "kernels", ki);
		if (a->ops_shown) {
			json_t *ops = json_array();
			for (size_t k = 0; k < ac->n_ops; k++) {
				json_t *row = json_object();
				json_object_set_new(row, "operation", json_integer(
					(json_int_t)ac->ops[k].op));
				json_object_set_new(row, "name", str_or_null(a->ops[ac->ops[k].op].name));
				json_object_set_new(row, "time_ns", num(ac->ops[k].time_ns));
				json_array_append_new(ops, row);
			}
			json_object_set_new(o, "operations", ops);
		}
		json_array_append_new(acts, o);
	}
	json_object_set_new(s, "actions", acts);
	return s;
}

/* The operations from NVTX ranges (ga_analysis.ops): "kernel" indexes
 * "kernels", "top_finding" "findings" (from 0). */
static json_t *operations_json(const ga_analysis *a)
{
	json_t *arr = json_array();
	for (size_t i = 0; i < a->n_ops; i++) {
		const ga_op *op = &a->ops[i];
		json_t *o = json_object(), *ks = json_array();
		json_object_set_new(o, "name", str_or_null(op->name));
		json_object_set_new(o, "path", str_or_null(op->path));
		json_object_set_new(o, "time_ns", num(op->time_ns));
		json_object_set_new(o, "share", num(op->share));
		json_object_set_new(o, "launches", json_integer((json_int_t)op->launches));
		for (size_t k = 0; k < op->n_kernels; k++) {
			json_t *row = json_object();
			json_object_set_new(row, "kernel", json_integer((json_int_t)op->kernels[k].group));
			json_object_set_new(row, "name", str_or_null(a->groups[op->kernels[k].group].name));
			json_object_set_new(row, "time_ns", num(op->kernels[k].time_ns));
			json_object_set_new(row, "fraction", num(op->kernels[k].fraction));
			json_array_append_new(ks, row);
		}
		json_object_set_new(o, "kernels", ks);
		json_object_set_new(o, "top_finding", op->top_finding >= 0
		                    ? json_integer((json_int_t)op->top_finding) : json_null());
		json_object_set_new(o, "top_saving", op->top_finding >= 0 ? num(op->top_saving)
		                                                          : json_null());
		json_array_append_new(arr, o);
	}
	return arr;
}

/* ---- processes and baseline (added with --baseline) -------------------- */

static json_t *processes_json(const ga_analysis *a, const ga_report_opts *o)
{
	const ga_process *v = a->processes;
	json_t *arr = json_array();
	for (size_t i = 0; i < a->n_processes; i++) {
		json_t *p = json_object(), *files = json_array();
		const char **names;
		size_t nf = ga_report_process_files(a, o, v[i].pid, &names);
		json_object_set_new(p, "pid", json_integer(v[i].pid));
		for (size_t f = 0; f < nf; f++)
			json_array_append_new(files, str_or_null(names[f]));
		free(names);
		json_object_set_new(p, "files", files);
		json_object_set_new(p, "kernels", json_integer((json_int_t)v[i].n_kernels));
		json_object_set_new(p, "launches", json_integer((json_int_t)v[i].n_launches));
		json_object_set_new(p, "total_ns", num(v[i].total_ns));
		json_object_set_new(p, "share", num(v[i].share));
		json_array_append_new(arr, p);
	}
	return arr;
}

static json_t *severity_json(const ga_rule *r)
{
	return r ? str_or_null(ga_severity_name(r->severity)) : json_null();
}

static json_t *finding_changes_json(const ga_finding_change *v, size_t n, int with_regression)
{
	json_t *arr = json_array();
	for (size_t i = 0; i < n; i++) {
		json_t *f = json_object();
		json_object_set_new(f, "rule", str_or_null(v[i].rule ? v[i].rule->id : NULL));
		json_object_set_new(f, "title", str_or_null(v[i].rule ? v[i].rule->title : NULL));
		json_object_set_new(f, "severity", severity_json(v[i].rule));
		if (with_regression)
			json_object_set_new(f, "regression", json_boolean(v[i].regression));
		if (v[i].check.checked) {
			const ga_prediction *p = &v[i].check;
			json_t *range = json_array();
			json_array_append_new(range, num(p->low));
			json_array_append_new(range, num(p->high));
			json_object_set_new(f, "predicted", num(p->predicted));
			json_object_set_new(f, "predicted_range", range);
			json_object_set_new(f, "measured", num(p->measured));
			json_object_set_new(f, "measured_inside", json_boolean(p->inside));
		}
		json_array_append_new(arr, f);
	}
	return arr;
}

static json_t *pct_or_null(double frac)
{
	return isfinite(frac) ? json_real(frac * 100.0) : json_null();
}

/* What both kinds of entries share: name, launch shape, process, time, class. */
static void side_json(json_t *o, const char *prefix, const ga_group *g, double mean_ns)
{
	char key[64];
	snprintf(key, sizeof(key), "%sgrid", prefix);
	json_object_set_new(o, key, dims_json(g->grid));
	snprintf(key, sizeof(key), "%sblock", prefix);
	json_object_set_new(o, key, dims_json(g->block));
	snprintf(key, sizeof(key), "%spid", prefix);
	json_object_set_new(o, key, json_integer(g->pid));
	snprintf(key, sizeof(key), "%smean_ns", prefix);
	json_object_set_new(o, key, num(mean_ns));
	snprintf(key, sizeof(key), "%sclass", prefix);
	json_object_set_new(o, key, class_json(g->klass));
}

static json_t *change_json(const ga_comparison *c, const ga_kernel_change *k)
{
	const ga_group *g = k->cur != GA_NO_GROUP ? &c->cur->groups[k->cur] : NULL;
	const ga_group *b = k->base != GA_NO_GROUP ? &c->base->groups[k->base] : NULL;
	json_t *o = json_object();

	json_object_set_new(o, "name", str_or_null(g ? g->name : b->name));
	if (g)
		json_object_set_new(o, "kernel", json_integer((json_int_t)k->cur));
	if (g && b)
		json_object_set_new(o, "match", json_string(k->match == GA_MATCH_SHAPE ? "shape"
		                                                                      : "name"));
	if (g)
		side_json(o, "", g, k->cur_ns);
	if (b)
		side_json(o, "baseline_", b, k->base_ns);
	if (g && b) {
		json_object_set_new(o, "change_pct", pct_or_null(k->change));
		json_object_set_new(o, "slower", json_boolean(k->slower));
		json_object_set_new(o, "class_changed", json_boolean(k->class_changed));
	}
	if (g)
		json_object_set_new(o, "new_findings", finding_changes_json(k->added, k->n_added, 1));
	json_object_set_new(o, g ? "gone_findings" : "findings",
	                    finding_changes_json(k->removed, k->n_removed, 0));
	if (g && b) {
		json_t *m = json_object();
		for (size_t i = 0; i < k->n_metrics; i++) {
			json_t *pair = json_object();
			json_object_set_new(pair, "baseline", num(k->metrics[i].base));
			json_object_set_new(pair, "current", num(k->metrics[i].cur));
			json_object_set_new(m, k->metrics[i].name, pair);
		}
		json_object_set_new(o, "metrics", m);
	}
	if (g)
		json_object_set_new(o, "regression", json_boolean(k->regression));
	return o;
}

static json_t *baseline_json(const ga_comparison *c)
{
	json_t *o = json_object();
	const ga_profile *bp = c->base ? c->base->profile : NULL;
	char *warning = ga_baseline_warning(c);

	json_object_set_new(o, "file", str_or_null(c->label));
	json_t *dev = json_object();
	json_object_set_new(dev, "name", str_or_null(bp ? bp->device.name : NULL));
	json_object_set_new(dev, "chip", str_or_null(bp ? bp->device.chip : NULL));
	json_object_set_new(o, "device", dev);
	json_object_set_new(o, "date", str_or_null(bp ? bp->collection.date : NULL));
	json_object_set_new(o, "same_gpu", json_boolean(c->same_device));
	json_object_set_new(o, "durations_compared", json_boolean(c->same_device));
	json_object_set_new(o, "warning", str_or_null(warning));
	free(warning);
	json_object_set_new(o, "threshold_pct", json_real(c->threshold * 100.0));
	json_object_set_new(o, "severity", str_or_null(ga_severity_name((ga_severity)c->severity)));
	json_object_set_new(o, "regressions", json_integer((json_int_t)c->n_regressions));
	json_object_set_new(o, "slower", json_integer((json_int_t)c->n_slower));
	json_object_set_new(o, "baseline_total_ns", num(c->base_total_ns));
	json_object_set_new(o, "total_ns", num(c->cur_total_ns));
	json_object_set_new(o, "total_change_pct", pct_or_null(c->total_change));
	if (c->scaling.shown)
		json_object_set_new(o, "scaling", json_pack("{s:I, s:I, s:o, s:o}",
		        "baseline_world_size", (json_int_t)c->scaling.base_world,
		        "world_size", (json_int_t)c->scaling.cur_world,
		        "baseline_comm_share", num(c->scaling.base_share),
		        "comm_share", num(c->scaling.cur_share)));

	json_t *matched = json_array(), *only_new = json_array(), *only_base = json_array();
	for (size_t i = 0; i < c->n_kernels; i++) {
		const ga_kernel_change *k = &c->kernels[i];
		json_t *dst = k->cur == GA_NO_GROUP ? only_base
		              : k->base == GA_NO_GROUP ? only_new : matched;
		json_array_append_new(dst, change_json(c, k));
	}
	json_object_set_new(o, "kernels", matched);
	json_object_set_new(o, "only_new", only_new);
	json_object_set_new(o, "only_baseline", only_base);
	return o;
}

void *ga_report_json_value(const ga_analysis *a, const ga_ruleset *rs)
{
	return ga_report_json_value_opts(a, rs, NULL);
}

void *ga_report_json_value_opts(const ga_analysis *a, const ga_ruleset *rs,
                                const ga_report_opts *o)
{
	json_t *root = json_object();
	(void)rs;
	json_object_set_new(root, "format", json_string(GA_REPORT_FORMAT));
	json_object_set_new(root, "schema", json_integer(GA_REPORT_SCHEMA));
	json_t *prof = a->profile ? (json_t *)ga_profile_to_json(a->profile) : NULL;
	json_object_set_new(root, "profile", prof ? prof : json_null());

	const ga_roofline *roof = &a->roofline;
	json_t *ks = json_array();
	for (size_t i = 0; i < a->n_groups; i++)
		json_array_append_new(ks, kernel_json(&a->groups[i],
		                                      i < roof->n ? &roof->kernels[i] : NULL));
	json_object_set_new(root, "kernels", ks);

	json_t *fs = json_array();
	for (size_t i = 0; i < a->n_findings; i++)
		json_array_append_new(fs, finding_json(a, i));
	json_object_set_new(root, "findings", fs);

	json_object_set_new(root, "summary", summary_json(a));
	json_object_set_new(root, "timeline", ga_report_json_timeline(a));
	json_object_set_new(root, "program_findings", ga_report_json_pfindings(a));
	json_object_set_new(root, "first", ga_report_json_first(a));

	json_t *ns = json_array();
	for (size_t i = 0; i < a->n_notes; i++)
		if (a->notes[i])
			json_array_append_new(ns, str_or_null(a->notes[i]));
	json_object_set_new(root, "notes", ns);

	json_object_set_new(root, "processes", processes_json(a, o));
	json_object_set_new(root, "baseline", o && o->baseline ? baseline_json(o->baseline)
	                                                       : json_null());
	json_object_set_new(root, "roofline", a->profile ? roof_peaks_json(&roof->peaks)
	                                                 : json_null());
	if (a->ops_shown)
		json_object_set_new(root, "operations", operations_json(a));
	if (a->ranks.multi)
		json_object_set_new(root, "ranks", ga_report_json_ranks(a));
	return root;
}

int ga_report_json(FILE *out, const ga_analysis *a, const ga_ruleset *rs, const ga_report_opts *o)
{
	json_t *root = ga_report_json_value_opts(a, rs, o);
	int rc = json_dumpf(root, out, JSON_INDENT(2) | JSON_PRESERVE_ORDER);
	json_decref(root);
	if (rc != 0 || fputc('\n', out) == EOF || fflush(out) != 0 || ferror(out))
		return -1;
	return 0;
}
