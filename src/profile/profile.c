/* profile.c: the profile model: building a profile, looking up its metrics,
 * pooling the launches of several profiles, freeing it.  Its JSON form is
 * in profile_json.c.  See profile.h.
 *
 * Ownership: every string and array reachable from a ga_profile belongs to
 * it and is released by ga_profile_free. */
#include "profile.h"

#include <limits.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

/* ------------------------------------------------------------------------ */
/* The model                                                                */

void ga_profile_init(ga_profile *p)
{
	memset(p, 0, sizeof(*p));
	p->schema = GA_PROFILE_SCHEMA;
	p->collection.app_status = -1;
}

void ga_device_free(ga_device *d)
{
	free(d->name);
	free(d->chip);
	d->name = NULL;
	d->chip = NULL;
}

static void collection_free(ga_collection *c)
{
	free(c->tool_version);
	free(c->date);
	free(c->mode);
	free(c->command);
	free(c->host);
	free(c->note);
}

void ga_launch_free(ga_launch *l)
{
	free(l->mangled);
	free(l->name);
	free(l->occ_limiter);
	free(l->values);
	free(l->nvtx);
	free(l->module);
}

void ga_profile_free(ga_profile *p)
{
	size_t i;

	ga_device_free(&p->device);
	collection_free(&p->collection);
	for (i = 0; i < p->n_metrics; i++)
		free(p->metrics[i]);
	free(p->metrics);
	for (i = 0; i < p->n_launches; i++)
		ga_launch_free(&p->launches[i]);
	free(p->launches);
	for (i = 0; i < p->n_unprofiled; i++) {
		free(p->unprofiled[i].mangled);
		free(p->unprofiled[i].nvtx);
	}
	free(p->unprofiled);
	for (i = 0; i < p->n_sources; i++)
		ga_source_free(&p->sources[i]);
	free(p->sources);
	for (i = 0; i < p->n_timelines; i++)
		ga_timeline_free(&p->timelines[i]);
	free(p->timelines);
	for (i = 0; i < p->n_procs; i++)
		ga_proc_info_free(&p->procs[i]);
	free(p->procs);
	free(p->source_path);
	ga_profile_init(p);
}

const char *ga_launch_limiter(const ga_launch *l)
{
	struct { const char *name; int v; } lim[] = {
		{"blocks", l->occ_limit_blocks}, {"warps", l->occ_limit_warps},
		{"registers", l->occ_limit_registers}, {"shared_memory", l->occ_limit_smem},
	};
	size_t best = 0;
	for (size_t i = 1; i < GA_ARRAY_LEN(lim); i++)
		if (lim[i].v < lim[best].v)
			best = i;
	return lim[best].name;
}

long ga_profile_metric_index(const ga_profile *p, const char *name)
{
	size_t i;

	for (i = 0; i < p->n_metrics; i++)
		if (strcmp(p->metrics[i], name) == 0)
			return (long)i;
	return -1;
}

/* Every launch's values array grows by one NAN slot: O(launches) per new
 * metric, which is cheap because a profile has few metrics. */
size_t ga_profile_append_metric(ga_profile *p, const char *name)
{
	size_t idx = p->n_metrics, i;

	p->metrics = ga_xrealloc(p->metrics, (idx + 1) * sizeof(*p->metrics));
	p->metrics[idx] = ga_xstrdup(name);
	for (i = 0; i < p->n_launches; i++) {
		ga_launch *l = &p->launches[i];
		l->values = ga_xrealloc(l->values, (idx + 1) * sizeof(*l->values));
		l->values[idx] = NAN;
	}
	p->n_metrics = idx + 1;
	return idx;
}

size_t ga_profile_add_metric(ga_profile *p, const char *name)
{
	long idx = ga_profile_metric_index(p, name);

	if (idx >= 0)
		return (size_t)idx;
	return ga_profile_append_metric(p, name);
}

/* The new launch is zeroed except duration_ns, which is NAN (unknown) like
 * every metric value, as the field's comment in profile.h says. */
ga_launch *ga_profile_add_launch(ga_profile *p)
{
	ga_launch *l;
	size_t i;

	ga_grow((void **)&p->launches, &p->cap_launches, p->n_launches + 1,
	        sizeof(*p->launches));
	l = &p->launches[p->n_launches++];
	memset(l, 0, sizeof(*l));
	l->duration_ns = NAN;
	l->range_ns = NAN;
	l->metric_set = -1;
	l->values = ga_xmalloc(p->n_metrics * sizeof(*l->values));
	for (i = 0; i < p->n_metrics; i++)
		l->values[i] = NAN;
	return l;
}

/* GH100 (H100, H200): the engine's active cycles in a loop's range less
 * those of the same kernel by kernel replay, the median over 18 kernels of
 * a transformer training step (H200, 2026-11-25; 1,500 to 6,300 cycles;
 * 2,834 and 2,777 on two later runs).  With it, the later run's 56
 * loop-measured kernels of at least 5 us took 0.93 of kernel replay's
 * durations (median; 0.58 to 1.07), against 1.09 without
 * (docs/PERFORMANCE.md, "Loop ranges: the kernel's time inside a range"). */
static const struct { const char *chip; double cycles; } range_markers[] = {
	{"GH100", 3570},
};

double ga_range_marker_cycles(const char *chip)
{
	for (size_t i = 0; chip && i < sizeof(range_markers) / sizeof(*range_markers); i++)
		if (strcmp(range_markers[i].chip, chip) == 0)
			return range_markers[i].cycles;
	return 0;
}

double ga_launch_range_correct(const char *const *names, size_t n, double *values,
                               double *duration_ns, double marker_cycles)
{
	long dur = -1, act = -1, ela = -1;
	double range, kernel, f;

	for (size_t i = 0; i < n; i++) {
		if (strcmp(names[i], "gpu__time_duration.sum") == 0)
			dur = (long)i;
		else if (strcmp(names[i], "gr__cycles_active.max") == 0)
			act = (long)i;
		else if (strcmp(names[i], "gr__cycles_elapsed.max") == 0)
			ela = (long)i;
	}
	/* An engine busy the whole range (kernel replay's ranges hold the
	 * kernel alone) needs nothing. */
	if (dur < 0 || act < 0 || ela < 0 || !(values[dur] > 0) || !(values[act] > 0) ||
	    !(values[ela] > values[act] * 1.02))
		return NAN;
	kernel = values[act] - (marker_cycles > 0 ? marker_cycles : 0);
	if (kernel < values[act] / 2)
		kernel = values[act] / 2;
	range = values[dur];
	f = values[ela] / kernel;
	for (size_t i = 0; i < n; i++) {
		const char *m = names[i];
		if (!isfinite(values[i]) || (long)i == dur)
			continue;
		if (strstr(m, "pct_of_peak_sustained_elapsed"))
			values[i] = fmin(values[i] * f, 100);
		else if (strstr(m, "per_cycle_elapsed") ||
		         (strstr(m, ".per_second") && !strstr(m, "cycles_elapsed")))
			values[i] *= f;
	}
	values[dur] = range / f;
	if (duration_ns)
		*duration_ns = values[dur];
	return range;
}

double ga_launch_total_threads(const ga_launch *l)
{
	return (double)l->grid[0] * l->grid[1] * l->grid[2] *
	       (double)l->block[0] * l->block[1] * l->block[2];
}

/* ---- pooling --------------------------------------------------------------- */

/* Every pid field of p, in order: launches, unprofiled launches, sources,
 * timelines, processes' records. */
static void each_pid(ga_profile *p, void (*fn)(int *pid, void *ctx), void *ctx)
{
	size_t i;

	for (i = 0; i < p->n_launches; i++)
		fn(&p->launches[i].pid, ctx);
	for (i = 0; i < p->n_unprofiled; i++)
		fn(&p->unprofiled[i].pid, ctx);
	for (i = 0; i < p->n_sources; i++)
		fn(&p->sources[i].pid, ctx);
	for (i = 0; i < p->n_timelines; i++)
		fn(&p->timelines[i].pid, ctx);
	for (i = 0; i < p->n_procs; i++)
		fn(&p->procs[i].pid, ctx);
}

/* The pids a profile uses, each once, in the order met, and the largest
 * (one file's few, checked one by one against the pool's many). */
typedef struct {
	int *v;
	size_t n, cap;
	int max;
	int any;
} pid_set;

static void pid_note(int *pid, void *ctx)
{
	pid_set *s = ctx;
	if (!s->any || *pid > s->max)
		s->max = *pid;
	s->any = 1;
	/* launches come in runs of one pid: the last one noted first */
	if (s->n && s->v[s->n - 1] == *pid)
		return;
	for (size_t i = 0; i < s->n; i++)
		if (s->v[i] == *pid)
			return;
	GA_PUSH(s->v, s->n, s->cap, *pid);
}

/* Whether a profile uses pid, and the largest pid it uses into *max. */
typedef struct {
	int pid;
	int found;
	int *max;
} pid_use;

static void pid_seen(int *pid, void *ctx)
{
	pid_use *u = ctx;
	if (*pid == u->pid)
		u->found = 1;
	if (*pid > *u->max)
		*u->max = *pid;
}

/* from's pids (its pid_set) to their new numbers. */
typedef struct {
	const pid_set *mine;
	const int *to;
} pid_map;

static void pid_renumber(int *pid, void *ctx)
{
	const pid_map *m = ctx;
	for (size_t k = 0; k < m->mine->n; k++)
		if (*pid == m->mine->v[k]) {
			*pid = m->to[k];
			return;
		}
}

/* Give from's processes that into already has new pids, above every pid
 * of both, in from's launches, unprofiled launches, sources, timelines and
 * records; a renumbered process keeps its own pid as its record's
 * os_pid. */
static void renumber(ga_profile *into, ga_profile *from)
{
	pid_set mine = {0};
	int top = 0;
	size_t i;

	if (!into->n_launches && !into->n_unprofiled && !into->n_sources && !into->n_timelines &&
	    !into->n_procs)
		return;
	each_pid(from, pid_note, &mine);
	int *to = ga_xcalloc(mine.n + 1, sizeof(*to));
	char *taken = ga_xcalloc(mine.n + 1, 1);
	int clash = 0;
	top = mine.max;
	for (i = 0; i < mine.n; i++) {
		pid_use u = {mine.v[i], 0, &top};
		to[i] = mine.v[i];
		each_pid(into, pid_seen, &u);
		taken[i] = (char)u.found;
		clash |= taken[i];
	}
	if (!clash)
		goto out;
	for (i = 0; i < mine.n; i++)
		if (taken[i]) {
			to[i] = top < INT_MAX ? ++top : top;
			/* its record, new or not, keeps the host's pid as os_pid */
			ga_profile_proc_add(from, mine.v[i]);
		}
	pid_map m = {&mine, to};
	each_pid(from, pid_renumber, &m);
out:
	free(taken);
	free(to);
	free(mine.v);
}

/* Launches are moved, not copied: their strings change owner, and only the
 * values are remapped, since the two profiles may list their metrics in a
 * different order or not list the same ones.  Each of from's metrics is
 * looked up once (a pool of hundreds of ranks' files would otherwise look
 * every metric up for every launch). */
void ga_profile_merge(ga_profile *into, ga_profile *from)
{
	size_t *slot = NULL;

	renumber(into, from);
	if (from->n_launches) {
		slot = ga_xcalloc(from->n_metrics + 1, sizeof(*slot));
		for (size_t m = 0; m < from->n_metrics; m++)
			slot[m] = ga_profile_add_metric(into, from->metrics[m]);
	}
	for (size_t k = 0; k < from->n_launches; k++) {
		ga_launch *src = &from->launches[k];
		ga_launch *dst = ga_profile_add_launch(into);
		double *vals = dst->values;
		*dst = *src;
		dst->values = vals;
		for (size_t m = 0; m < from->n_metrics; m++)
			dst->values[slot[m]] = src->values[m];
		free(src->values);
		memset(src, 0, sizeof(*src));
	}
	free(slot);
	/* The unprofiled launches and source lines of from's processes go
	 * with them: both are keyed by pid, which keeps the files apart, and
	 * without them a later file's kernels lose their uncounted launches
	 * and their lines. */
	for (size_t k = 0; k < from->n_unprofiled; k++)
		GA_PUSH(into->unprofiled, into->n_unprofiled, into->cap_unprofiled,
		        from->unprofiled[k]);
	from->n_unprofiled = 0;
	for (size_t k = 0; k < from->n_sources; k++)
		GA_PUSH(into->sources, into->n_sources, into->cap_sources, from->sources[k]);
	from->n_sources = 0;
	for (size_t k = 0; k < from->n_timelines; k++)
		ga_profile_set_timeline(into, &from->timelines[k]);
	from->n_timelines = 0;
	for (size_t k = 0; k < from->n_procs; k++)
		GA_PUSH(into->procs, into->n_procs, into->cap_procs, from->procs[k]);
	from->n_procs = 0;
	ga_profile_free(from);
}

const ga_proc_info *ga_profile_proc(const ga_profile *p, int pid)
{
	for (size_t i = 0; i < p->n_procs; i++)
		if (p->procs[i].pid == pid)
			return &p->procs[i];
	return NULL;
}

ga_proc_info *ga_profile_proc_add(ga_profile *p, int pid)
{
	for (size_t i = 0; i < p->n_procs; i++)
		if (p->procs[i].pid == pid)
			return &p->procs[i];
	ga_proc_info pi;
	ga_proc_info_init(&pi, pid);
	GA_PUSH(p->procs, p->n_procs, p->cap_procs, pi);
	return &p->procs[p->n_procs - 1];
}

const ga_timeline *ga_profile_timeline(const ga_profile *p, int pid)
{
	for (size_t i = 0; i < p->n_timelines; i++)
		if (p->timelines[i].pid == pid)
			return &p->timelines[i];
	return NULL;
}

void ga_profile_set_timeline(ga_profile *p, ga_timeline *t)
{
	for (size_t i = 0; i < p->n_timelines; i++)
		if (p->timelines[i].pid == t->pid) {
			ga_timeline_free(&p->timelines[i]);
			p->timelines[i] = *t;
			memset(t, 0, sizeof(*t));
			return;
		}
	GA_PUSH(p->timelines, p->n_timelines, p->cap_timelines, *t);
	memset(t, 0, sizeof(*t));
}
