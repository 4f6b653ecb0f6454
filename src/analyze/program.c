/* program.c: the timeline's part of the analysis.  Per process with a
 * timeline: its busy and idle shares, copies and the representative
 * iteration (ga_tl_proc); the program rules fired on them (ga_pfinding);
 * every kernel finding's saving also as a share of its process's wall
 * time; and "What to do first", one ranking for every report.  See
 * analyze.h.
 *
 * Wall time is the currency once a process has a timeline.  A program
 * finding's estimate already is one.  A kernel finding saves GPU time,
 * which is wall time only while the GPU held the program up: not while it
 * sat idle waiting for the host to launch or to finish its own work.  So
 *     wall saving = estimate x the kernel's GPU time x critical share
 *                   / the process's wall time,
 *     critical share = 1 - (idle launching + idle other) / wall time,
 * the critical-path share: a host-bound step gains little from faster
 * kernels, a GPU-bound or copy-bound one all of it. */
#include "internal.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

double ga_estimate_speedup(double estimate)
{
	if (isnan(estimate) || estimate < 0)
		return NAN;
	if (estimate >= 1)
		return INFINITY;
	return 1.0 / (1.0 - estimate);
}

double ga_speedup_saved(double speedup)
{
	return isfinite(speedup) && speedup > 0 ? 1 - 1 / speedup : NAN;
}

static double clamp01(double x)
{
	return x < 0 ? 0 : x > 1 ? 1 : x;
}

void ga_model_estimate(const ga_rule *r, double est, int ranged, double lo, double hi,
                       double span, ga_model_est *out)
{
	out->estimate = clamp01(est);
	out->low = out->high = NAN;
	out->speedup = ga_estimate_speedup(clamp01(out->estimate / span));
	out->speedup_min = r->speedup_min;
	out->speedup_max = r->speedup_max;
	if (ranged) {
		/* The range holds the estimate whatever the expressions give. */
		out->low = fmin(out->estimate, clamp01(fmin(lo, hi)));
		out->high = fmax(out->estimate, clamp01(fmax(lo, hi)));
		out->speedup_min = ga_estimate_speedup(clamp01(out->low / span));
		out->speedup_max = ga_estimate_speedup(clamp01(out->high / span));
	}
}

static double div0(double a, double b)
{
	return b > 0 && isfinite(a) ? a / b : 0;
}

/* ---- a process's figures ---------------------------------------------------- */

static double copy_sum(const ga_tl_device *d, int dir, int mem, int what)
{
	double v = 0;
	for (int a = 0; a < GA_DIR__N; a++)
		for (int m = 0; m < GA_MEM__N; m++) {
			if ((dir >= 0 && a != dir) || (mem >= 0 && m != mem))
				continue;
			const ga_copy_stat *c = &d->copy[a][m];
			v += what == 0 ? (double)c->count : what == 1 ? c->bytes : what == 2 ? c->ns
			   : what == 3 ? (double)c->small : c->small_ns;
		}
	return v;
}

/* Host-side copies (to or from the host): direction dir (-1: both), memory
 * mem (-1: any). */
static double host_copy(const ga_tl_device *d, int mem, int what)
{
	return copy_sum(d, GA_DIR_HTOD, mem, what) + copy_sum(d, GA_DIR_DTOH, mem, what);
}

/* One timeline__* value: its name (static), the value, whether it has one. */
typedef struct ga_tl_value {
	const char *name;
	double v;
	int ok;
} ga_tl_value;

/* The timeline__* values of a process (its figures are set), once. */
static void proc_values(ga_tl_proc *pr)
{
	const ga_tl_device *d = &pr->sum;
	const ga_timeline *t = pr->tl;
	double iters = (double)t->iterations;
	/* Per iteration: the host calls inside the representative iteration
	 * (a setup's allocations and synchronisations are not the loop's). */
	double in_iter[GA_HOST__N] = {0}, in_iter_ns[GA_HOST__N] = {0};
	int have_iter = t->window_is_iteration && iters > 0;
	/* The loop: its share of the wall time (iterations times their mean
	 * length) and, in its representative iteration, the share of the
	 * devices' time idle while the host launched or ran its own code.
	 * Without a loop, the whole run stands for it. */
	int have_loop = have_iter && isfinite(t->iteration_ns) && t->window_ns > 0 &&
	                pr->iteration_devices > 0;
	double loop_share = 1, loop_idle_host = pr->idle_share[GA_IDLE_LAUNCHING] +
	                                        pr->idle_share[GA_IDLE_OTHER];
	double loop_idle_launching = pr->idle_share[GA_IDLE_LAUNCHING];
	if (have_loop) {
		const ga_tl_device *it = &pr->iteration_sum;
		double w = t->window_ns * (double)pr->iteration_devices;
		loop_share = fmin(1, div0(iters * t->iteration_ns, pr->wall_ns));
		loop_idle_host = div0(it->idle_ns[GA_IDLE_LAUNCHING] + it->idle_ns[GA_IDLE_OTHER], w);
		loop_idle_launching = div0(it->idle_ns[GA_IDLE_LAUNCHING], w);
	}
	for (size_t i = 0; have_iter && i < t->n_events; i++) {
		const ga_tl_event *ev = &t->events[i];
		if (ev->device == -1 && ev->kind >= 0 && ev->kind < GA_HOST__N) {
			in_iter[ev->kind]++;
			in_iter_ns[ev->kind] += ev->end - ev->start;
		}
	}
	double ops = (double)d->kernels + host_copy(d, -1, 0) + copy_sum(d, GA_DIR_DTOD, -1, 0) +
	             (double)d->set.count;
	const ga_tl_comm *c = &pr->comm;
	double w = pr->wall_ns * (double)(pr->n_devices ? pr->n_devices : 1);
	const ga_tl_value v[] = {
		{"wall_ns", pr->wall_ns, 1},
		{"busy_share", pr->busy_share, 1},
		{"kernel_share", pr->kernel_share, 1},
		{"copy_share", pr->copy_share, 1},
		{"copy_exposed_share", pr->copy_exposed_share, 1},
		{"idle_blocking_share", pr->idle_share[GA_IDLE_BLOCKING], 1},
		{"idle_launching_share", pr->idle_share[GA_IDLE_LAUNCHING], 1},
		{"idle_other_share", pr->idle_share[GA_IDLE_OTHER], 1},
		{"idle_host_share", pr->idle_share[GA_IDLE_LAUNCHING] + pr->idle_share[GA_IDLE_OTHER], 1},
		{"idle_after_sync_share", div0(d->idle_after_sync_ns, pr->wall_ns), 1},
		{"critical_share", pr->critical_share, 1},
		{"kernel_ns", d->kernel_ns, 1},
		{"copy_ns", d->copy_ns, 1},
		{"copy_exposed_ns", d->copy_exposed_ns, 1},
		{"htod_ns", d->dir_ns[GA_DIR_HTOD], 1},
		{"dtoh_ns", d->dir_ns[GA_DIR_DTOH], 1},
		{"htod_bytes", copy_sum(d, GA_DIR_HTOD, -1, 1), 1},
		{"dtoh_bytes", copy_sum(d, GA_DIR_DTOH, -1, 1), 1},
		{"copy_count", host_copy(d, -1, 0), 1},
		{"copy_bytes", host_copy(d, -1, 1), 1},
		{"pageable_count", host_copy(d, GA_MEM_PAGEABLE, 0), 1},
		{"pageable_bytes", host_copy(d, GA_MEM_PAGEABLE, 1), 1},
		{"pageable_ns", host_copy(d, GA_MEM_PAGEABLE, 2), 1},
		{"pinned_bytes", host_copy(d, GA_MEM_PINNED, 1), 1},
		{"pinned_ns", host_copy(d, GA_MEM_PINNED, 2), 1},
		/* measured pinned bandwidth, GB/s (= bytes/ns) */
		{"pinned_gbs", div0(host_copy(d, GA_MEM_PINNED, 1), host_copy(d, GA_MEM_PINNED, 2)),
		 host_copy(d, GA_MEM_PINNED, 2) > 0},
		{"small_copy_count", host_copy(d, -1, 3), 1},
		{"small_copy_ns", host_copy(d, -1, 4), 1},
		{"kernels", (double)d->kernels, 1},
		{"kernel_sum_ns", d->kernel_sum_ns, 1},
		{"launch_count", (double)t->host_calls[GA_HOST_LAUNCH], 1},
		{"launch_ns", t->host_ns[GA_HOST_LAUNCH], 1},
		{"sync_count", (double)t->host_calls[GA_HOST_SYNC], 1},
		{"sync_ns", t->host_ns[GA_HOST_SYNC], 1},
		{"copy_call_count", (double)t->host_calls[GA_HOST_COPY], 1},
		{"copy_call_ns", t->host_ns[GA_HOST_COPY], 1},
		/* the host copies' rate, GB/s, whatever their memory */
		{"copy_gbs", div0(host_copy(d, -1, 1), host_copy(d, -1, 2)), host_copy(d, -1, 2) > 0},
		{"alloc_count", (double)t->host_calls[GA_HOST_ALLOC], 1},
		{"alloc_ns", t->host_ns[GA_HOST_ALLOC], 1},
		{"iterations", iters, 1},
		{"iteration_ns", t->iteration_ns, isfinite(t->iteration_ns)},
		{"loop_share", loop_share, 1},
		{"loop_idle_host_share", loop_idle_host, 1},
		{"loop_idle_launching_share", loop_idle_launching, 1},
		{"syncs_per_iteration", in_iter[GA_HOST_SYNC], have_iter},
		{"allocs_per_iteration", in_iter[GA_HOST_ALLOC], have_iter},
		/* the loop's time inside those calls: one iteration's, times the iterations */
		{"loop_sync_ns", in_iter_ns[GA_HOST_SYNC] * iters, have_iter},
		{"loop_alloc_ns", in_iter_ns[GA_HOST_ALLOC] * iters, have_iter},
		{"default_stream_share", div0((double)d->default_stream_ops, ops), ops > 0},
		{"streams", (double)d->streams, 1},
		{"devices", (double)pr->n_devices, 1},
		{"gpu_ns", pr->gpu_ns, 1},
		/* communication (comm.c): the comm kernels' time, and from the
		 * window's intervals, scaled to the run, what ran beside what */
		{"comm_kernels", (double)c->kernels, 1},
		{"comm_ns", c->ns, 1},
		{"comm_share", div0(c->ns, w), 1},
		{"comm_exposed_ns", c->exposed_ns, c->measured},
		{"comm_exposed_share", div0(c->exposed_ns, w), c->measured},
		{"compute_free_share", div0(c->free_ns, w), c->measured},
		{"comm_hideable_share", div0(fmin(c->exposed_ns, c->free_ns), w), c->measured},
		{"comm_tail_share", div0(c->tail_ns, w), c->measured},
	};
	pr->n_values = GA_ARRAY_LEN(v);
	pr->values = ga_xmalloc(sizeof(v));
	memcpy(pr->values, v, sizeof(v));
}

static void proc_figures(const ga_analysis *a, const ga_timeline *t, const ga_map *comm,
                         ga_tl_proc *pr)
{
	memset(pr, 0, sizeof(*pr));
	pr->pid = t->pid;
	pr->tl = t;
	pr->wall_ns = ga_timeline_observed_ns(t);
	pr->n_devices = t->n_devices;
	ga_timeline_devices_sum(t, &pr->sum);
	double w = pr->wall_ns * (double)(t->n_devices ? t->n_devices : 1);
	pr->busy_share = div0(pr->sum.busy_ns, w);
	pr->kernel_share = div0(pr->sum.kernel_ns, w);
	pr->copy_share = div0(pr->sum.copy_ns, w);
	pr->copy_exposed_share = div0(pr->sum.copy_exposed_ns, w);
	for (int k = 0; k < GA_IDLE__N; k++)
		pr->idle_share[k] = div0(pr->sum.idle_ns[k], w);
	for (size_t i = 0; i < a->n_groups; i++)
		if (a->groups[i].pid == t->pid && isfinite(a->groups[i].total_ns))
			pr->gpu_ns += a->groups[i].total_ns;
	pr->critical_share = 1 - pr->idle_share[GA_IDLE_LAUNCHING] - pr->idle_share[GA_IDLE_OTHER];
	if (pr->critical_share < 0)
		pr->critical_share = 0;
	if (t->n_events && t->window_ns > 0) {
		ga_timeline it;
		ga_timeline_sweep_events(t->events, t->n_events, t->window_ns, &it);
		ga_timeline_devices_sum(&it, &pr->iteration_sum);
		pr->iteration_devices = it.n_devices;
		ga_timeline_free(&it);
		pr->iteration_busy_share =
			div0(pr->iteration_sum.busy_ns,
			     t->window_ns * (double)(pr->iteration_devices ? pr->iteration_devices : 1));
	}
	ga_comm_figures(t, comm, &pr->comm);
	proc_values(pr);
}

/* ---- the values program rules read ------------------------------------------- */

typedef struct {
	const ga_analysis *a;
	const ga_tl_proc *pr;
	const ga_named_expr *named;   /* the rule's named expressions evaluated so far */
	const double *named_v;
	const int *named_ok;
	size_t n_named;
	const char *missing;
} penv;

static int owner_share(const penv *e, const char *owner, double *out)
{
	double t = 0;
	for (size_t i = 0; i < e->a->n_groups; i++) {
		const ga_group *g = &e->a->groups[i];
		if (g->pid == e->pr->pid && g->owner && strcmp(g->owner->name, owner) == 0 &&
		    isfinite(g->total_ns))
			t += g->total_ns;
	}
	*out = div0(t, e->pr->gpu_ns);
	return 0;
}

/* A timeline__* value of the process: -1 when it has none. */
static int timeline_value(const penv *e, const char *n, double *out)
{
	for (size_t i = 0; i < e->pr->n_values; i++)
		if (strcmp(n, e->pr->values[i].name) == 0) {
			if (!e->pr->values[i].ok || !isfinite(e->pr->values[i].v))
				return -1;
			*out = e->pr->values[i].v;
			return 0;
		}
	return -1;
}

static int plookup(void *ctx, const char *name, double *out)
{
	penv *e = ctx;
	const ga_device *dv = &e->a->profile->device;

	for (size_t i = e->n_named; i-- > 0;)
		if (strcmp(e->named[i].name, name) == 0) {
			if (!e->named_ok[i]) {
				e->missing = name;
				return -1;
			}
			*out = e->named_v[i];
			return 0;
		}
	if (ga_str_has_prefix(name, "timeline__") &&
	    timeline_value(e, name + strlen("timeline__"), out) == 0)
		return 0;
	if (ga_str_has_prefix(name, "program__owner_share_"))
		return owner_share(e, name + strlen("program__owner_share_"), out);
	if (ga_str_has_prefix(name, "rank__") &&
	    ga_rank_value(e->a, e->pr->pid, name + strlen("rank__"), out) == 0)
		return 0;
	if (strcmp(name, "device__mem_bandwidth_gbs") == 0 && dv->mem_bandwidth_gbs > 0) {
		*out = dv->mem_bandwidth_gbs;
		return 0;
	}
	if (strcmp(name, "device__sm_count") == 0 && dv->sm_count > 0) {
		*out = dv->sm_count;
		return 0;
	}
	e->missing = name;
	return -1;
}

static int peval(penv *e, const ga_expr *x, double *out)
{
	char why[256];
	e->missing = NULL;
	return ga_expr_eval(x, plookup, e, out, why, sizeof(why)) == GA_EVAL_OK ? 0 : -1;
}

/* One program rule on one process: a finding when it fires. */
static int fire(const ga_analysis *a, const ga_tl_proc *pr, const ga_rule *r, ga_pfinding *f)
{
	size_t n = r->n_metrics;
	double *v = ga_xcalloc(n + 1, sizeof(*v)), w = 0, est[3] = {0, NAN, NAN};
	int *ok = ga_xcalloc(n + 1, sizeof(*ok)), fired = 0;
	penv e = {.a = a, .pr = pr, .named = r->metrics, .named_v = v, .named_ok = ok};

	for (size_t i = 0; i < n; i++) {
		ok[i] = peval(&e, r->metrics[i].expr, &v[i]) == 0;
		e.n_named = i + 1;
	}
	if (peval(&e, r->when, &w) != 0 || w == 0)
		goto out;
	fired = 1;
	memset(f, 0, sizeof(*f));
	f->rule = r;
	f->pid = pr->pid;
	f->low = f->high = NAN;
	if (peval(&e, r->estimate, &est[0]) != 0) {
		f->estimate_missing = ga_xstrdup(e.missing ? e.missing : "?");
		f->estimate = f->speedup = f->speedup_min = f->speedup_max = NAN;
	} else {
		/* The speedup is of the part of the wall time the fix acts on. */
		double span = 1;
		if (r->affects && (peval(&e, r->affects, &span) != 0 || !(span > 0)))
			span = 1;
		span = fmin(1, span);
		f->affects = span;
		int ranged = r->low && r->high && peval(&e, r->low, &est[1]) == 0 &&
		             peval(&e, r->high, &est[2]) == 0;
		ga_model_est m;
		ga_model_estimate(r, est[0], ranged, est[1], est[2], span, &m);
		f->estimate = m.estimate;
		f->speedup = m.speedup;
		f->speedup_min = m.speedup_min;
		f->speedup_max = m.speedup_max;
		f->low = m.low;
		f->high = m.high;
	}
	f->evidence = ga_xcalloc(r->n_evidence + 1, sizeof(*f->evidence));
	for (size_t i = 0; i < r->n_evidence; i++) {
		double x = NAN;
		/* an evidence name: a named expression or a value */
		if (plookup(&e, r->evidence[i], &x) != 0)
			x = NAN;
		f->evidence[f->n_evidence].name = ga_xstrdup(r->evidence[i]);
		f->evidence[f->n_evidence++].value = x;
	}
	{
		char *key = ga_xasprintf("program\t%s", r->id);
		uint64_t h = ga_hash_str(key);
		snprintf(f->fingerprint, sizeof(f->fingerprint), "%016llx", (unsigned long long)h);
		free(key);
	}
out:
	free(v);
	free(ok);
	return fired;
}

/* ---- the one ranking ---------------------------------------------------------- */

static const ga_tl_proc *proc_of(const ga_analysis *a, int pid)
{
	for (size_t i = 0; i < a->n_tl; i++)
		if (a->tl[i].pid == pid)
			return &a->tl[i];
	return NULL;
}

static void kernel_wall_savings(ga_analysis *a)
{
	for (size_t i = 0; i < a->n_findings; i++) {
		ga_finding *f = &a->findings[i];
		const ga_group *g = &a->groups[f->group];
		const ga_tl_proc *pr = proc_of(a, g->pid);
		f->wall_saving = NAN;
		if (pr && pr->wall_ns > 0 && isfinite(f->estimate) && isfinite(g->total_ns))
			f->wall_saving = fmin(1, f->estimate * g->total_ns * pr->critical_share /
			                         pr->wall_ns);
	}
}

static double action_wall(const ga_analysis *a, const ga_action *ac)
{
	double s = 0;
	for (size_t k = 0; k < ac->n_findings; k++) {
		double w = a->findings[ac->findings[k]].wall_saving;
		if (isfinite(w))
			s += w;
	}
	return fmin(1, s);
}

static int do_cmp(const void *x, const void *y)
{
	const ga_do *p = x, *q = y;
	double a = isfinite(p->saving) ? p->saving : -1, b = isfinite(q->saving) ? q->saving : -1;
	if (a != b)
		return a > b ? -1 : 1;
	if (p->kind != q->kind)
		return (int)q->kind - (int)p->kind;   /* a program finding first on a tie */
	return p->index < q->index ? -1 : p->index > q->index;
}

/* Sums for the entries folded into one: GPU time of the shapes, and
 * what the estimate and its range save of it. */
typedef struct {
	double ns, saved, saved_min, saved_max, saving, wall_saving;
	int wall_known;
} shape_sums;

/* The speedup of time t once `saved` of it is gone; NAN when unknown. */
static double speedup_of(double t, double saved)
{
	return isfinite(saved) && t > 0 && saved < t ? t / (t - saved) : NAN;
}

/* One entry per process, kernel and rule: the first (it saves most of
 * GPU time: findings are ranked so), with the sums of its shapes. */
static void fold_shapes(ga_analysis *a)
{
	ga_map keys = {0};
	char **names = ga_xcalloc(a->n_first + 1, sizeof(*names));
	shape_sums *sum = ga_xcalloc(a->n_first + 1, sizeof(*sum));
	size_t kept = 0, n = a->n_first;

	for (size_t i = 0; i < n; i++) {
		ga_do d = a->first[i];
		long at = -1;
		if (d.kind == GA_DO_FINDING) {
			const ga_finding *f = &a->findings[d.index];
			const ga_group *g = &a->groups[f->group];
			names[i] = ga_xasprintf("%zu\t%s", g->kernel_first, f->rule->id);
			at = ga_strmap_get(&keys, names[i]);
			double ns = g->share, est = ga_speedup_saved(f->speedup);
			double lo = ga_speedup_saved(f->speedup_min), hi = ga_speedup_saved(f->speedup_max);
			shape_sums *u = &sum[at < 0 ? kept : (size_t)at];
			u->ns += ns;
			u->saved += isfinite(est) ? est * ns : 0;
			u->saved_min += isfinite(lo) ? lo * ns : 0;
			u->saved_max += isfinite(hi) ? hi * ns : 0;
			u->saving += isfinite(f->saving) ? f->saving : 0;
			if (isfinite(f->wall_saving)) {
				u->wall_saving += f->wall_saving;
				u->wall_known = 1;
			}
			if (at >= 0) {
				a->first[at].on_shapes++;
				a->findings[d.index].shape_folded = 1;
				continue;
			}
			ga_strmap_put(&keys, names[i], kept);
			d.on_shapes = 1;
		}
		a->first[kept++] = d;
	}
	for (size_t k = 0; k < kept; k++) {
		ga_do *d = &a->first[k];
		if (d->on_shapes < 2)
			continue;
		const ga_finding *f = &a->findings[d->index];
		d->shapes_saving = fmin(1, sum[k].saving);
		d->shapes_wall_saving = sum[k].wall_known ? fmin(1, sum[k].wall_saving) : NAN;
		d->saving = a->wall_currency ? d->shapes_wall_saving : d->shapes_saving;
		int none = f->estimate_missing != NULL;   /* no estimate: no range either */
		d->shapes_speedup = none ? NAN : speedup_of(sum[k].ns, sum[k].saved);
		d->shapes_min = none ? NAN : speedup_of(sum[k].ns, sum[k].saved_min);
		d->shapes_max = none ? NAN : speedup_of(sum[k].ns, sum[k].saved_max);
	}
	a->n_first = kept;
	ga_map_free(&keys);
	for (size_t i = 0; i < n; i++)
		free(names[i]);
	free(names);
	free(sum);
}

void ga_finding_figures(const ga_finding *f, const ga_do *d, ga_figures *out)
{
	if (d && d->kind == GA_DO_FINDING && d->on_shapes > 1) {
		*out = (ga_figures){d->shapes_saving, d->shapes_wall_saving, d->shapes_speedup,
		                    d->shapes_min, d->shapes_max, d->on_shapes};
		return;
	}
	*out = (ga_figures){f->saving, f->wall_saving, f->speedup, f->speedup_min,
	                    f->speedup_max, 1};
}

static void rank_first(ga_analysis *a)
{
	size_t cap = 0;

	for (size_t i = 0; i < a->n_actions; i++)
		a->actions[i].wall_saving = a->wall_currency ? action_wall(a, &a->actions[i]) : NAN;
	if (a->framework_first)
		for (size_t i = 0; i < a->n_actions; i++) {
			ga_do d = {GA_DO_ACTION, i, a->wall_currency ? a->actions[i].wall_saving
			                                             : a->actions[i].saving};
			GA_PUSH(a->first, a->n_first, cap, d);
		}
	else
		for (size_t i = 0; i < a->n_findings; i++) {
			const ga_finding *f = &a->findings[i];
			ga_do d = {GA_DO_FINDING, i, a->wall_currency ? f->wall_saving : f->saving};
			GA_PUSH(a->first, a->n_first, cap, d);
		}
	for (size_t i = 0; i < a->n_pfindings; i++) {
		ga_do d = {GA_DO_PROGRAM, i, a->pfindings[i].estimate};
		GA_PUSH(a->first, a->n_first, cap, d);
	}
	fold_shapes(a);
	/* Without a timeline the order is the GPU-time one, as it always was,
	 * each kernel's shapes summed. */
	if (a->n_first > 1)
		qsort(a->first, a->n_first, sizeof(*a->first), do_cmp);
}

static int pfinding_cmp(const void *x, const void *y)
{
	const ga_pfinding *p = x, *q = y;
	double a = isfinite(p->estimate) ? p->estimate : -1;
	double b = isfinite(q->estimate) ? q->estimate : -1;
	if (a != b)
		return a > b ? -1 : 1;
	if (p->pid != q->pid)
		return p->pid < q->pid ? -1 : 1;
	return strcmp(p->rule->id, q->rule->id);
}

void ga_program(ga_analysis *a, const ga_ruleset *rs)
{
	const ga_profile *p = a->profile;
	size_t cap = 0;

	if (p && p->n_timelines) {
		ga_map comm = {0};
		ga_comm_names(a, &comm);
		a->tl = ga_xcalloc(p->n_timelines, sizeof(*a->tl));
		for (size_t i = 0; i < p->n_timelines; i++)
			proc_figures(a, &p->timelines[i], &comm, &a->tl[a->n_tl++]);
		ga_map_free(&comm);
		a->wall_currency = 1;
	}
	ga_ranks_figures(a);
	for (size_t i = 0; i < a->n_tl; i++)
		for (size_t r = 0; r < rs->n_rules; r++) {
			ga_pfinding f;
			if (rs->rules[r].program && fire(a, &a->tl[i], &rs->rules[r], &f))
				GA_PUSH(a->pfindings, a->n_pfindings, cap, f);
		}
	if (a->n_pfindings > 1)
		qsort(a->pfindings, a->n_pfindings, sizeof(*a->pfindings), pfinding_cmp);
	kernel_wall_savings(a);
	rank_first(a);
	ga_ranks_finish(a);
}

void ga_program_free(ga_analysis *a)
{
	for (size_t i = 0; i < a->n_tl; i++)
		free(a->tl[i].values);
	free(a->tl);
	for (size_t i = 0; i < a->n_pfindings; i++) {
		ga_pfinding *f = &a->pfindings[i];
		for (size_t k = 0; k < f->n_evidence; k++)
			free(f->evidence[k].name);
		free(f->evidence);
		free(f->estimate_missing);
	}
	free(a->pfindings);
	free(a->first);
	ga_ranks_free(a);
}

