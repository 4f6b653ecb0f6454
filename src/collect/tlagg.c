/* tlagg.c: the timeline aggregated as it is recorded.  See tlagg.h. */
#include "tlagg.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define PENDING_SLOTS 65536       /* direct-mapped by correlation */
#define MAX_STREAMS 256           /* distinct streams counted per device */

void ga_tlagg_init(ga_tlagg *a)
{
	memset(a, 0, sizeof(*a));
	ga_sweep_init(&a->sw);
	a->swept = -INFINITY;
	a->pending_t = ga_xcalloc(PENDING_SLOTS, sizeof(*a->pending_t));
	a->pending_corr = ga_xcalloc(PENDING_SLOTS, sizeof(*a->pending_corr));
	a->resolved = ga_xcalloc(PENDING_SLOTS, sizeof(*a->resolved));
	a->ours.bits = ga_xcalloc(GA_TLAGG_OURS_BITS / 64, sizeof(uint64_t));
	a->measured.bits = ga_xcalloc(GA_TLAGG_OURS_BITS / 64, sizeof(uint64_t));
}

void ga_tlagg_free(ga_tlagg *a)
{
	free(a->heap);
	for (int d = 0; d < GA_TL_MAX_DEVICES; d++)
		free(a->streams[d]);
	for (size_t i = 0; i < a->n_kernels; i++) {
		free(a->kernels[i].mangled);
		free(a->kernels[i].name);
	}
	free(a->kernels);
	/* the map's keys are the kernels' own strings */
	ga_map_free(&a->kindex);
	free(a->pending_t);
	free(a->pending_corr);
	free(a->resolved);
	free(a->ours.bits);
	free(a->measured.bits);
	memset(a, 0, sizeof(*a));
}

/* ---- the heap of edges ---------------------------------------------------- */

static int before(const ga_edge *x, const ga_edge *y)
{
	return ga_edge_cmp(x, y) < 0;
}

static void heap_push(ga_tlagg *a, ga_edge e)
{
	size_t i;

	if (a->n_heap == a->cap_heap) {
		a->cap_heap = a->cap_heap ? 2 * a->cap_heap : 1024;
		a->heap = ga_xrealloc(a->heap, a->cap_heap * sizeof(*a->heap));
	}
	i = a->n_heap++;
	a->heap[i] = e;
	while (i > 0) {
		size_t p = (i - 1) / 2;
		if (!before(&a->heap[i], &a->heap[p]))
			break;
		ga_edge t = a->heap[p];
		a->heap[p] = a->heap[i];
		a->heap[i] = t;
		i = p;
	}
}

static ga_edge heap_pop(ga_tlagg *a)
{
	ga_edge top = a->heap[0];
	size_t i = 0, n = --a->n_heap;

	a->heap[0] = a->heap[n];
	for (;;) {
		size_t l = 2 * i + 1, r = l + 1, m = i;
		if (l < n && before(&a->heap[l], &a->heap[m]))
			m = l;
		if (r < n && before(&a->heap[r], &a->heap[m]))
			m = r;
		if (m == i)
			break;
		ga_edge t = a->heap[m];
		a->heap[m] = a->heap[i];
		a->heap[i] = t;
		i = m;
	}
	return top;
}

/* ---- intervals in -------------------------------------------------------- */

static void seen(ga_tlagg *a, double s, double e)
{
	if (!a->any || s < a->first_t)
		a->first_t = s;
	if (!a->any || e > a->last_t)
		a->last_t = e;
	a->any = 1;
}

static void ring_add(ga_tlagg *a, const ga_tl_event *e)
{
	/* full: the oldest (at the head) gives way */
	size_t i = (a->ring_head + a->ring_n) % GA_TLAGG_RING;
	if (a->ring_n == GA_TLAGG_RING)
		a->ring_head = (a->ring_head + 1) % GA_TLAGG_RING;
	else
		a->ring_n++;
	a->ring[i] = *e;
}

/* Both edges of [s, e]; a start before the swept time counts from there. */
static void add_edges(ga_tlagg *a, double s, double e, int device, int kind, int dir)
{
	if (s < a->swept) {
		if (device >= 0)
			a->late_ns += (e < a->swept ? e : a->swept) - s;
		if (e <= a->swept)
			return;
		s = a->swept;
	}
	heap_push(a, (ga_edge){s, device, kind, dir, +1});
	heap_push(a, (ga_edge){e, device, kind, dir, -1});
}

static long kernel_slot(ga_tlagg *a, const ga_tl_gpu *g)
{
	char *key = ga_xasprintf("%s\t%u,%u,%u\t%u,%u,%u", g->mangled, g->grid[0], g->grid[1],
	                         g->grid[2], g->block[0], g->block[1], g->block[2]);
	long k = ga_strmap_get(&a->kindex, key);

	if (k >= 0) {
		free(key);
		return k;
	}
	if (a->n_kernels == a->cap_kernels) {
		a->cap_kernels = a->cap_kernels ? 2 * a->cap_kernels : 64;
		a->kernels = ga_xrealloc(a->kernels, a->cap_kernels * sizeof(*a->kernels));
	}
	ga_tl_kernel *t = &a->kernels[a->n_kernels];
	memset(t, 0, sizeof(*t));
	/* the key doubles as the stored name: the name is its first field */
	t->mangled = key;
	memcpy(t->grid, g->grid, sizeof(t->grid));
	memcpy(t->block, g->block, sizeof(t->block));
	ga_strmap_put(&a->kindex, key, a->n_kernels);
	return (long)a->n_kernels++;
}

static void corr_add(ga_corrset *c, uint32_t corr)
{
	const uint64_t n = GA_TLAGG_OURS_BITS;
	if (!c->any) {
		c->any = 1;
		c->lo = corr;
	}
	if (corr < c->lo)
		return;
	if ((uint64_t)corr >= (uint64_t)c->lo + n) {
		/* slide: the bits of the correlations that leave are cleared */
		uint64_t lo = (uint64_t)corr - n / 2;
		if (lo - c->lo >= n)
			memset(c->bits, 0, n / 8);
		else
			for (uint64_t k = c->lo; k < lo; k++)
				c->bits[(k % n) / 64] &= ~(1ull << (k % 64));
		c->lo = (uint32_t)lo;
	}
	c->bits[(corr % n) / 64] |= 1ull << (corr % 64);
}

/* older: the answer for a correlation that left the window */
static int corr_has(const ga_corrset *c, uint32_t corr, int older)
{
	const uint64_t n = GA_TLAGG_OURS_BITS;
	if (!c->any || (uint64_t)corr >= (uint64_t)c->lo + n)
		return 0;
	if (corr < c->lo)
		return older;
	return (c->bits[(corr % n) / 64] >> (corr % 64)) & 1;
}

static int was_measured(const ga_tlagg *a, uint32_t corr)
{
	return corr_has(&a->measured, corr, 0);
}

static void stream_seen(ga_tlagg *a, int d, uint32_t stream)
{
	for (size_t i = 0; i < a->n_streams[d]; i++)
		if (a->streams[d][i] == stream)
			return;
	if (a->n_streams[d] == MAX_STREAMS)
		return;
	if (!a->streams[d])
		a->streams[d] = ga_xcalloc(MAX_STREAMS, sizeof(*a->streams[d]));
	a->streams[d][a->n_streams[d]++] = stream;
}

void ga_tlagg_ours(ga_tlagg *a, uint32_t corr)
{
	corr_add(&a->ours, corr);
}

/* One older than the window is taken for the program's. */
int ga_tlagg_is_ours(const ga_tlagg *a, uint32_t corr)
{
	return corr_has(&a->ours, corr, 1);
}

void ga_tlagg_gpu(ga_tlagg *a, const ga_tl_gpu *g)
{
	int d = g->device;
	double dur = g->end - g->start;
	long kernel = -1;

	/* CUPTI leaves a timestamp 0 where it has none */
	if (d < 0 || d >= GA_TL_MAX_DEVICES || !(dur >= 0) || !isfinite(g->start) ||
	    !(g->start > 0))
		return;
	/* A kernel none of the program's launch calls started: the
	 * profiler's (counted, nowhere else) */
	if (g->kind == GA_GPU_KERNEL && !ga_tlagg_is_ours(a, g->correlation)) {
		a->tool_kernels++;
		a->tool_ns += dur;
		return;
	}
	{
		size_t slot = g->correlation % PENDING_SLOTS;
		if (a->pending_corr[slot] == g->correlation)
			a->pending_t[slot] = 0;
		a->resolved[slot] = g->correlation;
	}
	seen(a, g->start, g->end);
	a->dev_used[d] = 1;
	ga_tl_device *s = &a->sums[d];
	stream_seen(a, d, g->stream);
	s->default_stream_ops += g->default_stream != 0;
	if (g->kind == GA_GPU_KERNEL) {
		s->kernels++;
		s->kernel_sum_ns += dur;
		if (g->mangled && !was_measured(a, g->correlation)) {
			kernel = kernel_slot(a, g);
			a->kernels[kernel].launches++;
			a->kernels[kernel].total_ns += dur;
		}
	} else {
		ga_copy_stat *c = g->kind == GA_GPU_SET ? &s->set
		                : &s->copy[g->dir >= 0 && g->dir < GA_DIR__N ? g->dir : GA_DIR_DTOD]
		                          [g->mem >= 0 && g->mem < GA_MEM__N ? g->mem : GA_MEM_OTHER];
		c->count++;
		c->bytes += g->bytes;
		c->ns += dur;
		if (g->bytes < GA_SMALL_COPY_BYTES) {
			c->small++;
			c->small_ns += dur;
		}
	}
	add_edges(a, g->start, g->end, d, g->kind, g->kind == GA_GPU_COPY ? g->dir : -1);
	ga_tl_event ev = {g->start, g->end, d, g->stream, g->kind,
	                  g->kind == GA_GPU_COPY ? g->dir : -1, kernel};
	ring_add(a, &ev);
}

void ga_tlagg_host(ga_tlagg *a, int kind, double start, double end)
{
	if (kind < 0 || kind >= GA_HOST__N || !(end >= start) || !(start > 0))
		return;
	seen(a, start, end);
	if (kind == GA_HOST_EXCLUDED)
		a->excluded_spans++;
	else
		a->host_calls[kind]++;
	add_edges(a, start, end, -1, kind, -1);
	ga_tl_event ev = {start, end, -1, 0, kind, -1, -1};
	ring_add(a, &ev);
}

void ga_tlagg_open(ga_tlagg *a, uint64_t key, double start)
{
	for (size_t i = 0; i < a->n_open; i++)
		if (a->open[i].key == key) {
			a->open[i].start = start;
			return;
		}
	if (a->n_open < GA_TLAGG_MAX_OPEN) {
		a->open[a->n_open].key = key;
		a->open[a->n_open].start = start;
		a->n_open++;
	}
}

void ga_tlagg_close(ga_tlagg *a, uint64_t key)
{
	for (size_t i = 0; i < a->n_open; i++)
		if (a->open[i].key == key) {
			a->open[i] = a->open[--a->n_open];
			return;
		}
}

void ga_tlagg_launched(ga_tlagg *a, uint32_t corr, double t, int measured)
{
	size_t slot = corr % PENDING_SLOTS;
	/* A measured launch is not waited for: its records are the profiler's
	 * (excluded), and while one is late every later interval would stay
	 * out of the snapshots with it, for up to GA_TLAGG_PENDING_MAX_NS. */
	if (measured) {
		corr_add(&a->measured, corr);
		return;
	}
	if (a->resolved[slot] == corr && corr)
		return;           /* its record is in already */
	a->pending_corr[slot] = corr;
	a->pending_t[slot] = t > 0 ? t : 1;
}

double ga_tlagg_open_start(const ga_tlagg *a, uint64_t key)
{
	for (size_t i = 0; i < a->n_open; i++)
		if (a->open[i].key == key)
			return a->open[i].start;
	return NAN;
}

double ga_tlagg_safe_time(ga_tlagg *a, double now, double lag)
{
	double w = now - lag;

	for (size_t i = 0; i < a->n_open; i++)
		if (a->open[i].start < w)
			w = a->open[i].start;
	for (size_t i = 0; i < PENDING_SLOTS; i++) {
		double t = a->pending_t[i];
		if (!(t > 0))
			continue;
		if (t < now - GA_TLAGG_PENDING_MAX_NS)
			a->pending_t[i] = 0;      /* never reported: given up */
		else if (t < w)
			w = t;
	}
	return w;
}

void ga_tlagg_advance(ga_tlagg *a, double t)
{
	while (a->n_heap && a->heap[0].t < t) {
		ga_edge e = heap_pop(a);
		ga_sweep_edge(&a->sw, &e);
	}
	if (t > a->swept)
		a->swept = t;
}

static void add_bound(ga_tlagg *a, double t)
{
	a->bounds[a->n_bounds % GA_TLAGG_BOUNDS] = t;
	a->bound_excl[a->n_bounds % GA_TLAGG_BOUNDS] = a->excluded_spans;
	a->bound_epoch[a->n_bounds % GA_TLAGG_BOUNDS] = a->cur.epoch;
	a->n_bounds++;
}

void ga_tlagg_loop_start(ga_tlagg *a, double t, long period)
{
	ga_tlagg_loop *c = &a->cur;

	if (c->epoch && c->last_t - c->first_t > a->best.last_t - a->best.first_t)
		a->best = *c;
	memset(c, 0, sizeof(*c));
	c->epoch = ++a->epoch;
	c->period = period;
	c->first_t = c->last_t = t;
	add_bound(a, t);
}

void ga_tlagg_iteration(ga_tlagg *a, double t)
{
	ga_tlagg_loop *c = &a->cur;

	if (!c->epoch || !(t > c->last_t))
		return;
	c->iterations++;
	/* only iterations with nothing of the profiler's in them */
	if (a->bound_excl[(a->n_bounds - 1) % GA_TLAGG_BOUNDS] == a->excluded_spans) {
		c->clean_iter_ns += t - c->last_t;
		c->clean_iters++;
	}
	c->last_t = t;
	add_bound(a, t);
}

/* The loop reported: the one that covered the most time. */
static const ga_tlagg_loop *main_loop(const ga_tlagg *a)
{
	const ga_tlagg_loop *c = &a->cur, *b = &a->best;
	if (!c->epoch)
		return b;
	return c->last_t - c->first_t >= b->last_t - b->first_t ? c : b;
}

/* A loop's mean iteration outside the profiler's spans; NAN when none. */
static double loop_mean_ns(const ga_tlagg_loop *lp)
{
	return lp->clean_iters ? lp->clean_iter_ns / (double)lp->clean_iters : NAN;
}

/* ---- the result ------------------------------------------------------------ */

static const ga_tl_event *ring_at(const ga_tlagg *a, size_t i)
{
	return &a->ring[(a->ring_head + i) % GA_TLAGG_RING];
}

/* Of the iterations whose span the ring covers whole and that hold no span
 * of the profiler's, the one whose length is nearest the loop's mean
 * (the newest of equals; the newest when there is no mean): [*s, *e).  A
 * host-bound loop's iterations vary with the host (16 to 25 ms a
 * transformer step on an H200), and the last one alone can be far from
 * typical.  0 when none. */
static int pick_iteration(const ga_tlagg *a, double *s, double *e)
{
	size_t kept = a->n_bounds < GA_TLAGG_BOUNDS ? a->n_bounds : GA_TLAGG_BOUNDS;
	double oldest = a->ring_n ? ring_at(a, 0)->start : INFINITY;
	const ga_tlagg_loop *lp = main_loop(a);
	double mean = loop_mean_ns(lp), best = INFINITY;
	int found = 0;

	for (size_t k = kept; k >= 2; k--) {
		size_t i1 = (a->n_bounds - kept + k - 1) % GA_TLAGG_BOUNDS;
		size_t i0 = (a->n_bounds - kept + k - 2) % GA_TLAGG_BOUNDS;
		if (a->bounds[i0] < oldest)
			break;
		if (a->bound_epoch[i0] != lp->epoch || a->bound_epoch[i1] != lp->epoch ||
		    a->bound_excl[i1] != a->bound_excl[i0])
			continue;
		/* the sweep must have got past it, or its GPU work may be
		 * missing from the ring */
		if (a->bounds[i1] > a->swept && a->n_heap)
			continue;
		/* without a mean every distance is 0: the newest stays */
		double off = isfinite(mean) ? fabs(a->bounds[i1] - a->bounds[i0] - mean) : 0;
		if (found && !(off < best))
			continue;
		*s = a->bounds[i0];
		*e = a->bounds[i1];
		best = off;
		found = 1;
	}
	return found;
}

static void window_events(const ga_tlagg *a, double s, double e, ga_timeline *out)
{
	out->events = ga_xcalloc(a->ring_n + 1, sizeof(*out->events));
	out->n_events = 0;
	for (size_t i = 0; i < a->ring_n; i++) {
		const ga_tl_event *v = ring_at(a, i);
		if (v->end <= s || v->start >= e)
			continue;
		ga_tl_event *o = &out->events[out->n_events++];
		*o = *v;
		o->start = (v->start < s ? s : v->start) - s;
		o->end = (v->end > e ? e : v->end) - s;
	}
	out->window_ns = e - s;
}

static void copy_sums(ga_tl_device *o, const ga_tl_device *sum, long streams)
{
	for (int k = 0; k < GA_DIR__N; k++)
		for (int m = 0; m < GA_MEM__N; m++)
			o->copy[k][m] = sum->copy[k][m];
	o->set = sum->set;
	o->kernels = sum->kernels;
	o->kernel_sum_ns = sum->kernel_sum_ns;
	o->default_stream_ops = sum->default_stream_ops;
	o->streams = streams;
}

void ga_tlagg_result(ga_tlagg *a, int pid, int final, ga_timeline *out)
{
	double s = 0, e = 0;

	if (final)
		ga_tlagg_advance(a, INFINITY);
	memset(out, 0, sizeof(*out));
	out->pid = pid;
	/* Devices that ran nothing swept yet still get their sums: marked on a
	 * copy, so that a snapshot leaves the sweep as it was (a device's
	 * first swept edge charges it the idle time before it). */
	ga_sweep *sw = ga_xmalloc(sizeof(*sw));   /* large for a stack */
	*sw = a->sw;
	for (int d = 0; d < GA_TL_MAX_DEVICES; d++)
		if (a->dev_used[d])
			sw->used[d] = 1;
	ga_sweep_result(sw, out);
	free(sw);
	for (size_t i = 0; i < out->n_devices; i++) {
		int d = out->devices[i].device;
		copy_sums(&out->devices[i], &a->sums[d], (long)a->n_streams[d]);
	}
	out->wall_ns = a->any ? a->last_t - a->first_t : 0;
	out->late_ns = a->late_ns;
	out->tool_kernels = a->tool_kernels;
	out->tool_ns = a->tool_ns;
	for (int k = 0; k < GA_HOST__N; k++)
		out->host_calls[k] = a->host_calls[k];
	out->kernels = ga_xcalloc(a->n_kernels + 1, sizeof(*out->kernels));
	for (size_t i = 0; i < a->n_kernels; i++) {
		out->kernels[i] = a->kernels[i];
		/* the stored key is "name<TAB>grid<TAB>block": the name alone */
		out->kernels[i].mangled = ga_xstrdup(a->kernels[i].mangled);
		out->kernels[i].name = a->kernels[i].name ? ga_xstrdup(a->kernels[i].name) : NULL;
		char *tab = strchr(out->kernels[i].mangled, '\t');
		if (tab)
			*tab = '\0';
	}
	out->n_kernels = a->n_kernels;
	const ga_tlagg_loop *lp = main_loop(a);
	out->iterations = lp->iterations;
	out->period = lp->iterations ? lp->period : 0;
	out->iteration_ns = loop_mean_ns(lp);
	if (pick_iteration(a, &s, &e)) {
		out->window_is_iteration = 1;
		window_events(a, s, e, out);
	} else if (a->ring_n) {
		/* no loop: the ring's last span (at most 2048 intervals) */
		size_t from = a->ring_n > 2048 ? a->ring_n - 2048 : 0;
		s = ring_at(a, from)->start;
		e = s;
		for (size_t i = from; i < a->ring_n; i++)
			if (ring_at(a, i)->end > e)
				e = ring_at(a, i)->end;
		window_events(a, s, e, out);
	}
	out->complete = final;
}
