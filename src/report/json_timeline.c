/* json_timeline.c: the JSON report's timeline parts: each process's
 * figures ("timeline"), the program findings ("program_findings") and the
 * one ranking of "What to do first" ("first").  See docs/report.schema.json. */
#include "report.h"

#include <math.h>

#include <jansson.h>

#include "jsonout.h"

static json_t *share_obj(const double *v, int n, const char *(*name)(int))
{
	json_t *o = json_object();
	for (int k = 0; k < n; k++)
		json_object_set_new(o, name(k), num(v[k]));
	return o;
}

static json_t *copies_json(const ga_tl_device *d)
{
	json_t *a = json_array();
	for (int dir = 0; dir < GA_DIR__N; dir++)
		for (int m = 0; m < GA_MEM__N; m++) {
			const ga_copy_stat *c = &d->copy[dir][m];
			if (!c->count)
				continue;
			json_array_append_new(a, json_pack("{s:s, s:s, s:I, s:o, s:o, s:o}",
			        "direction", ga_dir_name(dir), "memory", ga_mem_name(m),
			        "count", (json_int_t)c->count, "bytes", num(c->bytes), "ns", num(c->ns),
			        "overlap_share", num(d->dir_ns[dir] > 0 ? d->overlap_ns[dir] / d->dir_ns[dir]
			                                                 : NAN)));
		}
	return a;
}

void *ga_report_json_timeline(const ga_analysis *a)
{
	json_t *arr = json_array();

	for (size_t i = 0; i < a->n_tl; i++) {
		const ga_tl_proc *pr = &a->tl[i];
		const ga_timeline *t = pr->tl;
		json_t *o = json_object(), *host = json_object();
		json_object_set_new(o, "pid", json_integer(pr->pid));
		json_object_set_new(o, "wall_ns", num(pr->wall_ns));
		json_object_set_new(o, "excluded_ns", num(t->excluded_ns));
		json_object_set_new(o, "devices", json_integer((json_int_t)pr->n_devices));
		json_object_set_new(o, "busy_share", num(pr->busy_share));
		json_object_set_new(o, "kernel_share", num(pr->kernel_share));
		json_object_set_new(o, "copy_share", num(pr->copy_share));
		json_object_set_new(o, "copy_exposed_share", num(pr->copy_exposed_share));
		json_object_set_new(o, "idle_share", share_obj(pr->idle_share, GA_IDLE__N, ga_idle_name));
		json_object_set_new(o, "critical_share", num(pr->critical_share));
		json_object_set_new(o, "gpu_ns", num(pr->gpu_ns));
		json_object_set_new(o, "copies", copies_json(&pr->sum));
		for (int k = 0; k < GA_HOST__N; k++)
			if (k != GA_HOST_EXCLUDED)
				json_object_set_new(host, ga_host_name(k),
				                    json_pack("{s:I, s:o}", "calls",
				                              (json_int_t)t->host_calls[k], "ns",
				                              num(t->host_ns[k])));
		json_object_set_new(o, "host", host);
		json_object_set_new(o, "iterations", json_integer((json_int_t)t->iterations));
		json_object_set_new(o, "period", json_integer((json_int_t)t->period));
		json_object_set_new(o, "iteration_ns", num(t->iteration_ns));
		json_object_set_new(o, "iteration_busy_share",
		                    pr->iteration_devices ? num(pr->iteration_busy_share)
		                                            : json_null());
		json_object_set_new(o, "complete", json_boolean(t->complete));
		json_array_append_new(arr, o);
	}
	return arr;
}

void *ga_report_json_pfindings(const ga_analysis *a)
{
	json_t *arr = json_array();

	for (size_t i = 0; i < a->n_pfindings; i++) {
		const ga_pfinding *f = &a->pfindings[i];
		const ga_rule *r = f->rule;
		json_t *o = json_object(), *ev = json_array();
		json_object_set_new(o, "rank", json_integer((json_int_t)i + 1));
		json_object_set_new(o, "rule", json_string(r->id));
		json_object_set_new(o, "title", json_string(r->title ? r->title : r->id));
		json_object_set_new(o, "severity", json_string(ga_severity_name(r->severity)));
		json_object_set_new(o, "pid", json_integer(f->pid));
		json_object_set_new(o, "estimate", num(f->estimate));
		json_object_set_new(o, "low", num(f->low));
		json_object_set_new(o, "high", num(f->high));
		json_object_set_new(o, "affects", num(f->affects));
		json_object_set_new(o, "estimated_speedup", num(f->speedup));
		json_object_set_new(o, "expected_speedup",
		                    json_pack("[oo]", num(f->speedup_min), num(f->speedup_max)));
		json_object_set_new(o, "model", r->model ? json_string(r->model) : json_null());
		json_object_set_new(o, "estimate_missing", f->estimate_missing
		                    ? json_string(f->estimate_missing) : json_null());
		for (size_t k = 0; k < f->n_evidence; k++)
			json_array_append_new(ev, json_pack("{s:s, s:o}", "name", f->evidence[k].name,
			                                    "value", num(f->evidence[k].value)));
		json_object_set_new(o, "evidence", ev);
		json_object_set_new(o, "fix", r->fix ? json_string(r->fix) : json_null());
		json_object_set_new(o, "fingerprint", json_string(f->fingerprint));
		json_array_append_new(arr, o);
	}
	return arr;
}

void *ga_report_json_first(const ga_analysis *a)
{
	static const char *const kinds[] = {"finding", "action", "program_finding"};
	json_t *arr = json_array();

	for (size_t i = 0; i < a->n_first; i++) {
		json_t *o = json_pack("{s:s, s:I, s:o}", "kind", kinds[a->first[i].kind], "index",
		                      (json_int_t)a->first[i].index, "saving", num(a->first[i].saving));
		/* one entry for the same advice on several ranks */
		if (a->first[i].on_ranks)
			json_object_set_new(o, "ranks", json_integer((json_int_t)a->first[i].on_ranks));
		/* one entry for the same rule on several shapes of a kernel */
		if (a->first[i].on_shapes > 1) {
			const ga_do *d = &a->first[i];
			json_object_set_new(o, "shapes",
			                    json_pack("{s:I, s:o, s:o, s:o, s:o, s:o}", "count",
			                              (json_int_t)d->on_shapes, "saving",
			                              num(d->shapes_saving), "wall_saving",
			                              num(d->shapes_wall_saving), "speedup",
			                              num(d->shapes_speedup), "speedup_min",
			                              num(d->shapes_min), "speedup_max",
			                              num(d->shapes_max)));
		}
		json_array_append_new(arr, o);
	}
	return arr;
}
