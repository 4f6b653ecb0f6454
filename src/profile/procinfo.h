/* procinfo.h: who each process of a profile was.  A data-parallel job
 * (torchrun, srun, mpirun) runs one process per rank; the launcher of the
 * job tells each its rank and the job's size in environment variables, and
 * the injection library records them with the host's name and the GPUs the
 * process used.  The analysis (analyze/ranks.c) reads them to compare the
 * ranks; a profile without them is a single program, as before.
 *
 * JSON: the profile's optional "processes" array
 * (docs/profile.schema.json), one object per process:
 *   {"pid", "os_pid" (when it differs), "host", "rank", "local_rank",
 *    "world_size", "rank_from", "gpus": [{"index", "uuid"}]}
 * Plain data: no CUDA here. */
#ifndef GA_PROCINFO_H
#define GA_PROCINFO_H

#include <stddef.h>

#include "../util/util.h"

/* A GPU a process used: its CUDA ordinal in the process (after
 * CUDA_VISIBLE_DEVICES) and its UUID as nvidia-smi -L shows it
 * ("GPU-xxxxxxxx-..."), NULL when not read. */
typedef struct {
	int index;
	char *uuid;
} ga_gpu_ref;

typedef struct {
	/* The process's key in the profile, as in launches and timelines:
	 * unique within the profile (--import renumbers a process whose pid
	 * another file already has). */
	int pid;
	int os_pid;               /* its process id on its host */
	char *host;               /* NULL: not known */
	long rank, local_rank, world_size;   /* -1: not known */
	/* The environment variable the rank came from ("RANK",
	 * "OMPI_COMM_WORLD_RANK", ...); NULL without a rank. */
	char *rank_from;
	ga_gpu_ref *gpus;
	size_t n_gpus;
} ga_proc_info;

/* The variables looked up, a launcher's family a row, in this order; the
 * first rank variable set with a number decides the family, and the world
 * size and local rank come from that family (-1 where it has none). */
typedef struct {
	const char *rank, *world_size, *local_rank;   /* local_rank may be NULL */
} ga_rank_vars;
extern const ga_rank_vars ga_rank_env[];
extern const size_t ga_n_rank_env;

/* An empty record for pid: every number -1, no strings. */
void ga_proc_info_init(ga_proc_info *pi, int pid);
void ga_proc_info_free(ga_proc_info *pi);
/* The rank, world size and local rank from variables read by get(name,
 * ctx) (getenv's contract: NULL when unset).  A value that is not a
 * whole number >= 0 counts as unset.  Sets rank_from when a rank was
 * found. */
void ga_proc_info_from_env(ga_proc_info *pi, const char *(*get)(const char *name, void *ctx),
                           void *ctx);
/* Add a GPU unless one of that index is listed; uuid may be NULL. */
void ga_proc_info_add_gpu(ga_proc_info *pi, int index, const char *uuid);
/* Fill the empty fields of into from from (a GPU or a host another record
 * gave); the pid stays. */
void ga_proc_info_fill(ga_proc_info *into, const ga_proc_info *from);

/* JSON (json_t *, new reference), and back: 0, or -1 with err naming where
 * and the field. */
void *ga_proc_info_to_json(const ga_proc_info *pi);
int ga_proc_info_from_json(ga_proc_info *pi, void *json, const char *where, ga_error *err);
/* The "processes" array, and back into a vector of records (*v, *n,
 * *cap, appended to; one record per pid); label names the file. */
void *ga_proc_infos_to_json(const ga_proc_info *v, size_t n);
int ga_proc_infos_from_json(ga_proc_info **v, size_t *n, size_t *cap, void *json,
                            const char *label, ga_error *err);

#endif
