/* procinfo.c: who each process was (procinfo.h). */
#include "procinfo.h"

#include <limits.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

/* torchrun and torch.distributed; Open MPI's mpirun; MPICH's and Intel
 * MPI's Hydra (PMI); Slurm's srun.  torchrun's variables come first: a
 * torchrun started by srun sets RANK for its workers, each of which also
 * inherits SLURM_PROCID of the one srun task. */
const ga_rank_vars ga_rank_env[] = {
	{"RANK", "WORLD_SIZE", "LOCAL_RANK"},
	{"OMPI_COMM_WORLD_RANK", "OMPI_COMM_WORLD_SIZE", "OMPI_COMM_WORLD_LOCAL_RANK"},
	{"PMI_RANK", "PMI_SIZE", "MPI_LOCALRANKID"},
	{"SLURM_PROCID", "SLURM_NTASKS", "SLURM_LOCALID"},
};
const size_t ga_n_rank_env = sizeof(ga_rank_env) / sizeof(ga_rank_env[0]);

void ga_proc_info_init(ga_proc_info *pi, int pid)
{
	memset(pi, 0, sizeof(*pi));
	pi->pid = pi->os_pid = pid;
	pi->rank = pi->local_rank = pi->world_size = -1;
}

void ga_proc_info_free(ga_proc_info *pi)
{
	free(pi->host);
	free(pi->rank_from);
	for (size_t i = 0; i < pi->n_gpus; i++)
		free(pi->gpus[i].uuid);
	free(pi->gpus);
	ga_proc_info_init(pi, pi->pid);
}

/* A whole number >= 0 (and below INT_MAX: ranks and sizes are ints in
 * every launcher), else -1. */
static long env_count(const char *(*get)(const char *, void *), void *ctx, const char *name)
{
	const char *s = name ? get(name, ctx) : NULL;
	char *end;
	long v;

	if (!s || !*s)
		return -1;
	v = strtol(s, &end, 10);
	return *end == '\0' && v >= 0 && v < INT_MAX ? v : -1;
}

void ga_proc_info_from_env(ga_proc_info *pi, const char *(*get)(const char *name, void *ctx),
                           void *ctx)
{
	for (size_t i = 0; i < ga_n_rank_env; i++) {
		const ga_rank_vars *f = &ga_rank_env[i];
		long rank = env_count(get, ctx, f->rank);
		if (rank < 0)
			continue;
		pi->rank = rank;
		pi->world_size = env_count(get, ctx, f->world_size);
		pi->local_rank = env_count(get, ctx, f->local_rank);
		free(pi->rank_from);
		pi->rank_from = ga_xstrdup(f->rank);
		return;
	}
}

void ga_proc_info_add_gpu(ga_proc_info *pi, int index, const char *uuid)
{
	for (size_t i = 0; i < pi->n_gpus; i++)
		if (pi->gpus[i].index == index) {
			if (!pi->gpus[i].uuid && uuid)
				pi->gpus[i].uuid = ga_xstrdup(uuid);
			return;
		}
	pi->gpus = ga_xrealloc(pi->gpus, (pi->n_gpus + 1) * sizeof(*pi->gpus));
	pi->gpus[pi->n_gpus].index = index;
	pi->gpus[pi->n_gpus].uuid = uuid ? ga_xstrdup(uuid) : NULL;
	pi->n_gpus++;
}

void ga_proc_info_fill(ga_proc_info *into, const ga_proc_info *from)
{
	if (into->os_pid == into->pid)
		into->os_pid = from->os_pid;
	if (!into->host && from->host)
		into->host = ga_xstrdup(from->host);
	if (into->rank < 0 && from->rank >= 0) {
		into->rank = from->rank;
		free(into->rank_from);
		into->rank_from = from->rank_from ? ga_xstrdup(from->rank_from) : NULL;
	}
	if (into->world_size < 0)
		into->world_size = from->world_size;
	if (into->local_rank < 0)
		into->local_rank = from->local_rank;
	for (size_t i = 0; i < from->n_gpus; i++)
		ga_proc_info_add_gpu(into, from->gpus[i].index, from->gpus[i].uuid);
}

/* ---- JSON ------------------------------------------------------------------ */

static void put_count(json_t *o, const char *key, long v)
{
	if (v >= 0)
		json_object_set_new(o, key, json_integer(v));
}

static void put_string(json_t *o, const char *key, const char *s)
{
	if (s && json_object_set_new(o, key, json_string(s)) != 0)
		json_object_set_new(o, key, json_string("?"));   /* not UTF-8 */
}

void *ga_proc_info_to_json(const ga_proc_info *pi)
{
	json_t *o = json_object(), *gpus = json_array();

	json_object_set_new(o, "pid", json_integer(pi->pid));
	if (pi->os_pid != pi->pid)
		json_object_set_new(o, "os_pid", json_integer(pi->os_pid));
	put_string(o, "host", pi->host);
	put_count(o, "rank", pi->rank);
	put_count(o, "local_rank", pi->local_rank);
	put_count(o, "world_size", pi->world_size);
	put_string(o, "rank_from", pi->rank_from);
	for (size_t i = 0; i < pi->n_gpus; i++) {
		json_t *g = json_object();
		json_object_set_new(g, "index", json_integer(pi->gpus[i].index));
		put_string(g, "uuid", pi->gpus[i].uuid);
		json_array_append_new(gpus, g);
	}
	if (pi->n_gpus)
		json_object_set_new(o, "gpus", gpus);
	else
		json_decref(gpus);
	return o;
}

static int bad(ga_error *err, const char *where, const char *field, const char *what)
{
	return ga_fail(err, GA_ERR_PROFILE, "%s: processes: '%s' %s", where, field, what);
}

/* An optional whole number in lo..INT_MAX-1 (absent or null: *v stays). */
static int get_num(json_t *o, const char *key, long lo, long *v, const char *where,
                   ga_error *err)
{
	json_t *x = json_object_get(o, key);
	if (!x || json_is_null(x))
		return 0;
	if (!json_is_integer(x) || json_integer_value(x) < lo || json_integer_value(x) >= INT_MAX)
		return bad(err, where, key, lo < 0 ? "must be an integer" : "must be an integer >= 0");
	*v = (long)json_integer_value(x);
	return 0;
}

static int get_str(json_t *o, const char *key, char **v, const char *where, ga_error *err)
{
	json_t *x = json_object_get(o, key);
	if (!x || json_is_null(x))
		return 0;
	if (!json_is_string(x))
		return bad(err, where, key, "must be a string");
	*v = ga_xstrdup(json_string_value(x));
	return 0;
}

int ga_proc_info_from_json(ga_proc_info *pi, void *json, const char *where, ga_error *err)
{
	json_t *o = json, *gpus, *g;
	long pid = 0, os_pid = 0;
	size_t i;

	ga_proc_info_init(pi, 0);
	if (!json_is_object(o))
		return ga_fail(err, GA_ERR_PROFILE, "%s: processes: an entry must be an object", where);
	if (!json_object_get(o, "pid")) {
		bad(err, where, "pid", "is missing");
		goto fail;
	}
	if (get_num(o, "pid", INT_MIN, &pid, where, err))
		goto fail;
	os_pid = pid;
	if (get_num(o, "os_pid", INT_MIN, &os_pid, where, err) ||
	    get_str(o, "host", &pi->host, where, err) ||
	    get_num(o, "rank", 0, &pi->rank, where, err) ||
	    get_num(o, "local_rank", 0, &pi->local_rank, where, err) ||
	    get_num(o, "world_size", 0, &pi->world_size, where, err) ||
	    get_str(o, "rank_from", &pi->rank_from, where, err))
		goto fail;
	pi->pid = (int)pid;
	pi->os_pid = (int)os_pid;
	gpus = json_object_get(o, "gpus");
	if (gpus && !json_is_null(gpus) && !json_is_array(gpus)) {
		bad(err, where, "gpus", "must be an array");
		goto fail;
	}
	json_array_foreach(gpus, i, g) {
		long index = -1;
		char *uuid = NULL;
		if (!json_is_object(g) || !json_object_get(g, "index")) {
			bad(err, where, "gpus", "entries must be objects with an 'index'");
			goto fail;
		}
		if (get_num(g, "index", 0, &index, where, err) ||
		    get_str(g, "uuid", &uuid, where, err))
			goto fail;
		ga_proc_info_add_gpu(pi, (int)index, uuid);
		free(uuid);
	}
	return 0;
fail:
	ga_proc_info_free(pi);
	return -1;
}

void *ga_proc_infos_to_json(const ga_proc_info *v, size_t n)
{
	json_t *a = json_array();
	for (size_t i = 0; i < n; i++)
		json_array_append_new(a, ga_proc_info_to_json(&v[i]));
	return a;
}

int ga_proc_infos_from_json(ga_proc_info **v, size_t *n, size_t *cap, void *json,
                            const char *label, ga_error *err)
{
	json_t *x;
	size_t i;

	json_array_foreach((json_t *)json, i, x) {
		char *where = ga_xasprintf("%s: processes[%zu]", label, i);
		ga_proc_info pi;
		int bad = ga_proc_info_from_json(&pi, x, where, err);
		size_t k = 0;
		free(where);
		if (bad)
			return -1;
		while (k < *n && (*v)[k].pid != pi.pid)
			k++;
		if (k < *n) {   /* the same pid twice: one record */
			ga_proc_info_fill(&(*v)[k], &pi);
			ga_proc_info_free(&pi);
		} else {
			GA_PUSH(*v, *n, *cap, pi);
		}
	}
	return 0;
}
