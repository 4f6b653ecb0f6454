/* comm.c: communication on a process's timeline (ga_tl_comm, analyze.h).
 *
 * A communication kernel (an NCCL collective) runs on the GPU beside the
 * compute kernels when the framework overlaps them (DistributedDataParallel
 * all-reduces a bucket of gradients while the backward pass goes on), or
 * alone when it does not.  Alone it is exposed: the step waits for it.
 * The representative window's intervals say which, device by device:
 *   exposed   communication runs and no compute kernel does,
 *   free      compute runs and no communication does: the most that more
 *             overlap could hide communication under,
 *   tail      the longest stretch of exposed communication: the last
 *             collective of a step, after the last gradient, has nothing
 *             left to hide under.
 * A stretch is broken only by a stretch of time of some length that is not
 * exposed (two collectives back to back are one).  The window's figures
 * stand for the run: times the loop's iterations when the window is one,
 * else times the run's communication time over the window's.  Which
 * kernels communicate is the owners' kind "comm" (rules/owners.yaml), as
 * the analysis gave each group. */
#include "internal.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

void ga_comm_names(const ga_analysis *a, ga_map *out)
{
	memset(out, 0, sizeof(*out));
	for (size_t i = 0; i < a->n_groups; i++) {
		const ga_group *g = &a->groups[i];
		if (g->mangled)
			ga_strmap_put(out, g->mangled, g->owner_kind && strcmp(g->owner_kind, "comm") == 0);
	}
}

/* An edge of one device's kernels: +1/-1 of communication or compute. */
typedef struct {
	double t;
	int comm;
	int delta;
} cedge;

static int cedge_cmp(const void *x, const void *y)
{
	const cedge *p = x, *q = y;
	if (p->t != q->t)
		return p->t < q->t ? -1 : 1;
	return p->delta - q->delta;   /* ends first */
}

/* One device's window: exposed, free and the longest exposed stretch. */
static void sweep_device(cedge *e, size_t n, double *exposed, double *free_ns, double *tail)
{
	int comm = 0, compute = 0;
	double t = 0, run = 0, best = 0;

	qsort(e, n, sizeof(*e), cedge_cmp);
	for (size_t i = 0; i < n; i++) {
		double d = e[i].t - t;
		if (d > 0 && i > 0) {
			if (comm > 0 && compute == 0) {
				*exposed += d;
				run += d;
				if (run > best)
					best = run;
			} else {
				run = 0;
				if (compute > 0 && comm == 0)
					*free_ns += d;
			}
		}
		t = e[i].t;
		if (e[i].comm)
			comm += e[i].delta;
		else
			compute += e[i].delta;
	}
	*tail += best;
}

void ga_comm_figures(const ga_timeline *t, const ga_map *comm_names, ga_tl_comm *c)
{
	double window_comm = 0;
	char *is_comm = ga_xcalloc(t->n_kernels + 1, 1);

	memset(c, 0, sizeof(*c));
	for (size_t k = 0; k < t->n_kernels; k++) {
		const ga_tl_kernel *kr = &t->kernels[k];
		is_comm[k] = (char)(ga_strmap_get(comm_names, kr->mangled) == 1);
		if (!isfinite(kr->total_ns))
			continue;
		if (is_comm[k]) {
			c->kernels += kr->launches;
			c->ns += kr->total_ns;
		} else {
			c->compute_ns += kr->total_ns;
		}
	}
	if (t->n_events && t->window_ns > 0) {
		cedge *e = ga_xmalloc(2 * t->n_events * sizeof(*e));
		c->measured = 1;
		for (int dev = 0; dev < GA_TL_MAX_DEVICES; dev++) {
			size_t n = 0;
			for (size_t i = 0; i < t->n_events; i++) {
				const ga_tl_event *ev = &t->events[i];
				if (ev->device != dev || ev->kind != GA_GPU_KERNEL)
					continue;
				int cm = ev->kernel >= 0 && is_comm[ev->kernel];
				e[n++] = (cedge){ev->start, cm, +1};
				e[n++] = (cedge){ev->end, cm, -1};
				if (cm)
					window_comm += ev->end - ev->start;
			}
			if (n)
				sweep_device(e, n, &c->exposed_ns, &c->free_ns, &c->tail_ns);
		}
		free(e);
		if (t->window_is_iteration && t->iterations > 0)
			c->scale = (double)t->iterations;
		else
			c->scale = window_comm > 0 ? c->ns / window_comm : 0;
		c->exposed_ns *= c->scale;
		c->free_ns *= c->scale;
		c->tail_ns *= c->scale;
	}
	free(is_comm);
}
