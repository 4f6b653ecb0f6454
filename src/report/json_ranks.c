/* json_ranks.c: the JSON report's "ranks", in a report of two ranks or
 * more (ga_ranks, analyze.h): each rank's record and figures, the
 * stragglers.  See docs/report.schema.json. */
#include "report.h"

#include <jansson.h>

#include "jsonout.h"

static json_t *count_or_null(long v)
{
	return v >= 0 ? json_integer(v) : json_null();
}

static json_t *rank_json(const ga_analysis *a, const ga_rank *k)
{
	static const char *const kinds[] = {"finding", "action", "program_finding"};
	const ga_proc_info *pi = k->info;
	json_t *o = json_object(), *gpus = json_array(), *top = json_null();

	for (size_t g = 0; g < pi->n_gpus; g++)
		json_array_append_new(gpus, json_pack("{s:i, s:o}", "index", pi->gpus[g].index, "uuid",
		                                      str_or_null(pi->gpus[g].uuid)));
	if (k->has_top) {
		const ga_rule *r = ga_do_rule(a, &k->top);
		top = json_pack("{s:s, s:I, s:o, s:o}", "kind", kinds[k->top.kind], "index",
		                (json_int_t)k->top.index, "rule", ga_report_json_string(r->id),
		                "saving", num(k->top.saving));
	}
	json_object_set_new(o, "rank", json_integer(pi->rank));
	json_object_set_new(o, "local_rank", count_or_null(pi->local_rank));
	json_object_set_new(o, "world_size", count_or_null(pi->world_size));
	json_object_set_new(o, "rank_from", str_or_null(pi->rank_from));
	json_object_set_new(o, "pid", json_integer(k->pid));
	json_object_set_new(o, "os_pid", json_integer(pi->os_pid));
	json_object_set_new(o, "host", str_or_null(pi->host));
	json_object_set_new(o, "gpus", gpus);
	json_object_set_new(o, "gpu_ns", num(k->gpu_ns));
	json_object_set_new(o, "compute_ns", num(k->compute_ns));
	json_object_set_new(o, "comm_ns", num(k->comm_ns));
	json_object_set_new(o, "comm_share", num(k->comm_share));
	json_object_set_new(o, "vs_median", num(k->vs_median));
	json_object_set_new(o, "wall_ns", num(k->wall_ns));
	json_object_set_new(o, "busy_share", num(k->busy_share));
	json_object_set_new(o, "straggler", json_boolean(k->straggler >= 0));
	json_object_set_new(o, "straggler_finding",
	                    k->straggler >= 0 ? json_integer(k->straggler) : json_null());
	json_object_set_new(o, "top", top);
	return o;
}

void *ga_report_json_ranks(const ga_analysis *a)
{
	const ga_ranks *r = &a->ranks;
	json_t *v = json_array(), *st = json_array();

	for (size_t i = 0; i < r->n; i++)
		json_array_append_new(v, rank_json(a, &r->v[i]));
	for (size_t i = 0; i < r->n_stragglers; i++)
		json_array_append_new(st, json_integer(r->v[r->stragglers[i]].info->rank));
	return json_pack("{s:I, s:o, s:I, s:o, s:o, s:o, s:i, s:o}",
	                 "count", (json_int_t)r->n, "world_size", count_or_null(r->world_size),
	                 "hosts", (json_int_t)r->n_hosts, "median_compute_ns",
	                 num(r->median_compute_ns), "median_comm_ns", num(r->median_comm_ns),
	                 "stragglers", st, "kernels_pid", r->kernels_pid, "ranks", v);
}
