/* ranks.c: the ranks of a data-parallel job (ga_ranks, analyze.h).
 *
 * A process is a rank when its record in the profile has one (the
 * launcher's RANK, OMPI_COMM_WORLD_RANK, PMI_RANK or SLURM_PROCID,
 * procinfo.h).  Per rank: its kernels' GPU time, the part of it in
 * communication kernels (owner kind "comm") and the rest, its compute;
 * from its timeline, its wall time and the GPU's busy share.
 *
 * The ranks of a synchronous job meet at every collective, so a rank that
 * computes longer than the others holds them all up: they wait inside the
 * next collective for it, and their communication time grows by what it
 * computes in excess.  Program rules read each rank's place among the
 * others as rank__* values (the median compute time, the slowest other
 * rank's), and the rule GA_RULE_STRAGGLER decides which rank is a
 * straggler; its threshold is the rule's, in rules/.
 *
 * In the report of two ranks or more, the same advice on several ranks
 * is one entry of "What to do first", the one that saves most, with the
 * number of ranks it is on: a finding is the same when its rule and its
 * kernel (mangled name; its launch shapes are one entry already) are, a
 * program finding when its rule is. */
#include "internal.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

static int rank_cmp(const void *x, const void *y)
{
	const ga_rank *p = x, *q = y;
	if (p->info->rank != q->info->rank)
		return p->info->rank < q->info->rank ? -1 : 1;
	return p->pid < q->pid ? -1 : p->pid > q->pid;
}

static const ga_ranks *sort_ctx;

static int pid_cmp(const void *x, const void *y)
{
	int p = sort_ctx->v[*(const size_t *)x].pid, q = sort_ctx->v[*(const size_t *)y].pid;
	return p < q ? -1 : p > q;
}

static ga_rank *rank_by_pid(const ga_ranks *r, int pid)
{
	size_t lo = 0, hi = r->n;
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		int p = r->v[r->by_pid[mid]].pid;
		if (p == pid)
			return &r->v[r->by_pid[mid]];
		if (p < pid)
			lo = mid + 1;
		else
			hi = mid;
	}
	return NULL;
}

const ga_rank *ga_rank_of(const ga_analysis *a, int pid)
{
	return a->ranks.n ? rank_by_pid(&a->ranks, pid) : NULL;
}

const ga_rule *ga_do_rule(const ga_analysis *a, const ga_do *d)
{
	if (d->kind == GA_DO_PROGRAM)
		return a->pfindings[d->index].rule;
	if (d->kind == GA_DO_ACTION)
		return a->actions[d->index].rule;
	return a->findings[d->index].rule;
}

int ga_do_pid(const ga_analysis *a, const ga_do *d)
{
	if (d->kind == GA_DO_PROGRAM)
		return a->pfindings[d->index].pid;
	if (d->kind == GA_DO_ACTION)
		return a->actions[d->index].n_findings
		       ? a->groups[a->findings[a->actions[d->index].findings[0]].group].pid : -1;
	return a->groups[a->findings[d->index].group].pid;
}

static int dbl_cmp(const void *x, const void *y)
{
	double p = *(const double *)x, q = *(const double *)y;
	return p < q ? -1 : p > q;
}

static double median(const ga_ranks *r, int comm)
{
	double *v = ga_xmalloc((r->n + 1) * sizeof(*v)), m;
	for (size_t i = 0; i < r->n; i++)
		v[i] = comm ? r->v[i].comm_ns : r->v[i].compute_ns;
	qsort(v, r->n, sizeof(*v), dbl_cmp);
	m = r->n % 2 ? v[r->n / 2] : (v[r->n / 2 - 1] + v[r->n / 2]) / 2;
	free(v);
	return m;
}

void ga_ranks_figures(ga_analysis *a)
{
	const ga_profile *p = a->profile;
	ga_ranks *r = &a->ranks;
	ga_map hosts = {0};
	size_t cap = 0;

	r->world_size = -1;
	r->kernels_pid = -1;
	for (size_t i = 0; p && i < p->n_procs; i++) {
		const ga_proc_info *pi = &p->procs[i];
		if (pi->rank < 0)
			continue;
		ga_rank k = {.pid = pi->pid, .info = pi, .comm_share = NAN, .vs_median = NAN,
		             .wall_ns = NAN, .busy_share = NAN, .straggler = -1};
		GA_PUSH(r->v, r->n, cap, k);
		if (pi->world_size > r->world_size)
			r->world_size = pi->world_size;
		if (pi->host)
			ga_strmap_put(&hosts, pi->host, 0);
	}
	r->n_hosts = hosts.n;
	ga_map_free(&hosts);
	if (!r->n)
		return;
	qsort(r->v, r->n, sizeof(*r->v), rank_cmp);
	r->by_pid = ga_xmalloc(r->n * sizeof(*r->by_pid));
	for (size_t i = 0; i < r->n; i++)
		r->by_pid[i] = i;
	sort_ctx = r;
	qsort(r->by_pid, r->n, sizeof(*r->by_pid), pid_cmp);
	for (size_t i = 0; i < a->n_groups; i++) {
		const ga_group *g = &a->groups[i];
		ga_rank *k = rank_by_pid(r, g->pid);
		if (!k || !isfinite(g->total_ns))
			continue;
		k->gpu_ns += g->total_ns;
		if (g->owner_kind && strcmp(g->owner_kind, "comm") == 0)
			k->comm_ns += g->total_ns;
	}
	for (size_t i = 0; i < a->n_tl; i++) {
		ga_rank *k = rank_by_pid(r, a->tl[i].pid);
		if (k) {
			k->wall_ns = a->tl[i].wall_ns;
			k->busy_share = a->tl[i].busy_share;
		}
	}
	for (size_t i = 0; i < r->n; i++) {
		ga_rank *k = &r->v[i];
		k->compute_ns = k->gpu_ns - k->comm_ns;
		if (k->gpu_ns > 0)
			k->comm_share = k->comm_ns / k->gpu_ns;
	}
	r->multi = r->n >= 2;
	r->median_compute_ns = median(r, 0);
	r->median_comm_ns = median(r, 1);
	for (size_t i = 0; i < r->n; i++)
		r->v[i].vs_median = r->median_compute_ns > 0
		                    ? r->v[i].compute_ns / r->median_compute_ns - 1 : NAN;
}

int ga_rank_value(const ga_analysis *a, int pid, const char *name, double *out)
{
	const ga_ranks *r = &a->ranks;
	const ga_rank *k = r->multi ? rank_by_pid(r, pid) : NULL;
	double others_max = 0;

	if (!k)
		return -1;
	for (size_t i = 0; i < r->n; i++)
		if (&r->v[i] != k && r->v[i].compute_ns > others_max)
			others_max = r->v[i].compute_ns;
	const struct { const char *name; double v; int ok; } v[] = {
		{"ranks", (double)r->n, 1},
		{"world_size", (double)r->world_size, r->world_size >= 0},
		{"hosts", (double)r->n_hosts, 1},
		{"gpu_ns", k->gpu_ns, 1},
		{"compute_ns", k->compute_ns, 1},
		{"comm_ns", k->comm_ns, 1},
		{"median_compute_ns", r->median_compute_ns, 1},
		{"median_comm_ns", r->median_comm_ns, 1},
		{"others_max_compute_ns", others_max, 1},
	};
	for (size_t i = 0; i < GA_ARRAY_LEN(v); i++)
		if (strcmp(name, v[i].name) == 0) {
			if (!v[i].ok)
				return -1;
			*out = v[i].v;
			return 0;
		}
	return -1;
}

/* ---- after the rules ----------------------------------------------------------- */

/* The advice of entry d, the same on every rank: malloc'd. */
static char *do_key(const ga_analysis *a, const ga_do *d)
{
	if (d->kind == GA_DO_PROGRAM)
		return ga_xasprintf("p\t%s", a->pfindings[d->index].rule->id);
	if (d->kind == GA_DO_ACTION)
		return ga_xasprintf("a\t%s", a->actions[d->index].rule->id);
	/* a kernel's launch shapes are one entry already (program.c) */
	const ga_finding *f = &a->findings[d->index];
	const ga_group *g = &a->groups[f->group];
	return ga_xasprintf("f\t%s\t%s", f->rule->id, g->mangled ? g->mangled : "");
}

/* The pids of the ranks entry d is on, in *out (malloc'd); the count. */
static size_t do_ranks(const ga_analysis *a, const ga_do *d, int **out)
{
	size_t n = 0, cap = 0;
	*out = NULL;
	if (d->kind == GA_DO_ACTION) {
		const ga_action *ac = &a->actions[d->index];
		for (size_t k = 0; k < ac->n_findings; k++) {
			int pid = a->groups[a->findings[ac->findings[k]].group].pid;
			size_t j = 0;
			while (j < n && (*out)[j] != pid)
				j++;
			if (j == n && ga_rank_of(a, pid))
				GA_PUSH(*out, n, cap, pid);
		}
		return n;
	}
	int pid = d->kind == GA_DO_PROGRAM ? a->pfindings[d->index].pid
	                                   : a->groups[a->findings[d->index].group].pid;
	if (ga_rank_of(a, pid))
		GA_PUSH(*out, n, cap, pid);
	return n;
}

/* Whether x's figures are of a lower rank than y's. */
static int lower_rank(const ga_analysis *a, const ga_do *x, const ga_do *y)
{
	const ga_rank *p = ga_rank_of(a, ga_do_pid(a, x)), *q = ga_rank_of(a, ga_do_pid(a, y));
	return p && (!q || p->info->rank < q->info->rank);
}

/* One entry per advice, the first (it saves most; of equal savings, the
 * lowest rank's), with its ranks. */
static void merge_first(ga_analysis *a)
{
	ga_map keys = {0}, pairs = {0};
	char **names = ga_xcalloc(a->n_first + 1, sizeof(*names));
	char **pair_keys = NULL;
	size_t n_pair_keys = 0, cap_pair_keys = 0, kept = 0;
	size_t *count = ga_xcalloc(a->n_first + 1, sizeof(*count));
	ga_do *out = ga_xmalloc((a->n_first + 1) * sizeof(*out));

	for (size_t i = 0; i < a->n_first; i++) {
		int *pids;
		names[i] = do_key(a, &a->first[i]);
		long at = ga_strmap_get(&keys, names[i]);
		if (at < 0) {
			at = (long)kept;
			ga_strmap_put(&keys, names[i], kept);
			out[kept++] = a->first[i];
		} else if (a->first[i].saving == out[at].saving &&
		           lower_rank(a, &a->first[i], &out[at])) {
			/* as much saved: the lower rank's figures, whatever the
			 * order of the files */
			out[at] = a->first[i];
		}
		size_t n = do_ranks(a, &a->first[i], &pids);
		for (size_t j = 0; j < n; j++) {
			char *pk = ga_xasprintf("%ld\t%d", at, pids[j]);
			if (ga_strmap_get(&pairs, pk) >= 0) {
				free(pk);
				continue;
			}
			ga_strmap_put(&pairs, pk, 0);
			GA_PUSH(pair_keys, n_pair_keys, cap_pair_keys, pk);
			count[at]++;
		}
		free(pids);
	}
	for (size_t k = 0; k < kept; k++) {
		out[k].on_ranks = count[k];
		a->first[k] = out[k];
	}
	a->n_first = kept;
	ga_map_free(&pairs);
	ga_map_free(&keys);
	for (size_t i = 0; i < n_pair_keys; i++)
		free(pair_keys[i]);
	free(pair_keys);
	for (size_t i = 0; names[i]; i++)
		free(names[i]);
	free(names);
	free(count);
	free(out);
}

static const size_t *tl_keys;

static int tl_cmp(const void *x, const void *y)
{
	size_t p = tl_keys[*(const size_t *)x], q = tl_keys[*(const size_t *)y];
	return p < q ? -1 : p > q;
}

void ga_ranks_finish(ga_analysis *a)
{
	ga_ranks *r = &a->ranks;
	size_t cap = 0;

	if (!r->multi)
		return;
	for (size_t i = 0; i < a->n_pfindings; i++) {
		const ga_pfinding *f = &a->pfindings[i];
		ga_rank *k = rank_by_pid(r, f->pid);
		if (!k || strcmp(f->rule->id, GA_RULE_STRAGGLER) != 0 || k->straggler >= 0)
			continue;
		k->straggler = (long)i;
		/* pfindings are by saving: so are the stragglers */
		GA_PUSH(r->stragglers, r->n_stragglers, cap, (size_t)(k - r->v));
	}
	for (size_t i = 0; i < a->n_first; i++) {
		int *pids;
		size_t n = do_ranks(a, &a->first[i], &pids);
		for (size_t j = 0; j < n; j++) {
			ga_rank *k = rank_by_pid(r, pids[j]);
			if (!k->has_top) {
				k->top = a->first[i];
				k->has_top = 1;
			}
		}
		free(pids);
	}
	r->v[0].shown = 1;
	for (size_t i = 0; i < r->n_stragglers; i++)
		r->v[r->stragglers[i]].shown = 1;
	r->kernels_pid = r->n_stragglers ? r->v[r->stragglers[0]].pid : r->v[0].pid;
	merge_first(a);
	/* the timelines in rank order, the others' after, in their order */
	size_t *key = ga_xmalloc((a->n_tl + 1) * sizeof(*key));
	r->tl_order = ga_xmalloc((a->n_tl + 1) * sizeof(*r->tl_order));
	for (size_t j = 0; j < a->n_tl; j++) {
		const ga_rank *k = rank_by_pid(r, a->tl[j].pid);
		key[j] = k ? (size_t)(k - r->v) : r->n + j;
		r->tl_order[j] = j;
	}
	tl_keys = key;
	qsort(r->tl_order, a->n_tl, sizeof(*r->tl_order), tl_cmp);
	free(key);
}

const ga_tl_proc *ga_rank_tl(const ga_analysis *a, size_t j)
{
	return a->ranks.tl_order ? &a->tl[a->ranks.tl_order[j]] : &a->tl[j];
}

void ga_ranks_free(ga_analysis *a)
{
	free(a->ranks.v);
	free(a->ranks.stragglers);
	free(a->ranks.by_pid);
	free(a->ranks.tl_order);
	memset(&a->ranks, 0, sizeof(a->ranks));
}
