/* shapes.c: which kernels of a process share a launch shape (grid and
 * block), which of them ran back to back (the candidates a fusion can
 * merge), and how much of its process's loop a kernel's launches are (the
 * launches a merge could join without moving them across other work). */
#include "internal.h"
#include <stdlib.h>
#include <string.h>

/* Kernels of one process sharing a launch shape: sort by shape, count runs. */
static int shape_cmp(const void *x, const void *y)
{
	const ga_group *a = *(ga_group *const *)x, *b = *(ga_group *const *)y;
	if (a->pid != b->pid)
		return a->pid < b->pid ? -1 : 1;
	int c = memcmp(a->grid, b->grid, sizeof(a->grid));
	return c ? c : memcmp(a->block, b->block, sizeof(a->block));
}

static void count_same_launch(ga_analysis *a)
{
	ga_group **v = ga_xcalloc(a->n_groups ? a->n_groups : 1, sizeof(*v));
	for (size_t i = 0; i < a->n_groups; i++)
		v[i] = &a->groups[i];
	if (a->n_groups)
		qsort(v, a->n_groups, sizeof(*v), shape_cmp);
	for (size_t i = 0; i < a->n_groups;) {
		size_t j = i;
		while (j < a->n_groups && shape_cmp(&v[i], &v[j]) == 0)
			j++;
		for (size_t k = i; k < j; k++)
			v[k]->same_launch = (int)(j - i);
		i = j;
	}
	free(v);
}

/* Each group's kernel in its process: the groups of the same pid and
 * mangled name, the first of them the largest (groups are in share order). */
static void count_kernel_shapes(ga_analysis *a)
{
	ga_map seen = {0};                   /* keeps its keys' pointers */
	char **keys = ga_xcalloc(a->n_groups + 1, sizeof(*keys));
	for (size_t i = 0; i < a->n_groups; i++) {
		ga_group *g = &a->groups[i];
		keys[i] = ga_xasprintf("%d\t%s", g->pid,
		                       g->mangled ? g->mangled : g->name ? g->name : "");
		long k = ga_strmap_get(&seen, keys[i]);
		if (k < 0) {
			ga_strmap_put(&seen, keys[i], i);
			k = (long)i;
		}
		g->kernel_first = (size_t)k;
		g->kernel_shapes = 0;
		a->groups[k].kernel_shapes++;
	}
	for (size_t i = 0; i < a->n_groups; i++)
		a->groups[i].kernel_shapes = a->groups[a->groups[i].kernel_first].kernel_shapes;
	ga_map_free(&seen);
	for (size_t i = 0; i < a->n_groups; i++)
		free(keys[i]);
	free(keys);
}

void ga_kernel_sum_shapes(const ga_analysis *a, size_t first, ga_kernel_sums *out)
{
	*out = (ga_kernel_sums){0};
	for (size_t j = first; j < a->n_groups; j++) {
		const ga_group *g = &a->groups[j];
		if (g->kernel_first != first)
			continue;
		out->share += g->share;
		out->total_ns += g->total_ns;
		out->launches += g->n_launches;
		out->timed += g->timeline_launches;
		out->unprofiled += g->unprofiled;
	}
}

/* A profiled launch and the group it belongs to, in launch order. */
typedef struct {
	const ga_launch *l;
	ga_group *g;
} launch_ref;

static int launch_order_cmp(const void *x, const void *y)
{
	const launch_ref *a = x, *b = y;
	if (a->l->pid != b->l->pid)
		return a->l->pid < b->l->pid ? -1 : 1;
	return a->l->index < b->l->index ? -1 : a->l->index > b->l->index;
}

/* Whether b was launched right after a (the next launch of the process,
 * nothing in between) on the same stream with the same grid and block. */
static int back_to_back(const ga_launch *a, const ga_launch *b)
{
	return a->pid == b->pid && b->index == a->index + 1 && a->stream == b->stream &&
	       memcmp(a->grid, b->grid, sizeof(a->grid)) == 0 &&
	       memcmp(a->block, b->block, sizeof(a->block)) == 0;
}

/* The distinct groups among refs[i..j), each once. */
static int distinct_groups(const launch_ref *refs, size_t i, size_t j)
{
	int n = 0;
	for (size_t k = i; k < j; k++) {
		size_t m = i;
		while (m < k && refs[m].g != refs[k].g)
			m++;
		n += m == k;
	}
	return n;
}

/* For each group, the distinct kernels in the longest run of back-to-back
 * launches (consecutive launch indices of its process, one stream, one
 * grid and block) that holds one of its profiled launches: 1 for a kernel
 * whose neighbours have other shapes.  Launches that were not profiled
 * leave gaps in the indices, which end a run. */
static void count_back_to_back(const ga_profile *p, ga_analysis *a)
{
	size_t n = 0;
	for (size_t i = 0; i < a->n_groups; i++)
		n += a->groups[i].n_launches;
	launch_ref *refs = ga_xcalloc(n ? n : 1, sizeof(*refs));
	n = 0;
	for (size_t i = 0; i < a->n_groups; i++) {
		ga_group *g = &a->groups[i];
		g->back_to_back = 0;
		for (size_t k = 0; k < g->n_launches; k++)
			refs[n++] = (launch_ref){&p->launches[g->launches[k]], g};
	}
	if (n)
		qsort(refs, n, sizeof(*refs), launch_order_cmp);
	for (size_t i = 0; i < n;) {
		size_t j = i + 1;
		while (j < n && back_to_back(refs[j - 1].l, refs[j].l))
			j++;
		int run = distinct_groups(refs, i, j);
		for (size_t k = i; k < j; k++)
			if (refs[k].g->back_to_back < run)
				refs[k].g->back_to_back = run;
		i = j;
	}
	free(refs);
}

void ga_count_launch_shapes(const ga_profile *p, ga_analysis *a)
{
	count_same_launch(a);
	count_kernel_shapes(a);
	count_back_to_back(p, a);
}

/* Each group's kernel launches in one iteration of its process's loop (the
 * timeline's representative iteration) and all of that iteration's:
 * loop_launches == loop_all_launches when the loop launches nothing else,
 * so its launches run back to back.  Nothing without a loop.  group_of:
 * each timeline kernel's group. */
void ga_count_loop_launches(const ga_timeline *t, const size_t *group_of, ga_analysis *a)
{
	if (!t->window_is_iteration || t->iterations < 1)
		return;
	long all = 0;
	for (size_t i = 0; i < t->n_events; i++) {
		const ga_tl_event *ev = &t->events[i];
		if (ev->device < 0 || ev->kind != GA_GPU_KERNEL || ev->kernel < 0 ||
		    (size_t)ev->kernel >= t->n_kernels)
			continue;
		all++;
		a->groups[group_of[ev->kernel]].loop_launches++;
	}
	for (size_t k = 0; k < t->n_kernels; k++)
		a->groups[group_of[k]].loop_all_launches = all;
}
