/* engine.c: group launches into kernels, classify each kernel, fire rules and
 * rank findings by estimated whole-program time saved; then the rest of the
 * analysis value (summary.c).  See analyze.h. */
#include "analyze.h"
#include "internal.h"

#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

/* ---- grouping ------------------------------------------------------------ */

/* The grouping key: (pid, mangled name, grid, block). */
static char *kernel_key(int pid, const char *mangled, const unsigned grid[3],
                        const unsigned block[3])
{
	return ga_xasprintf("%d|%s|%u,%u,%u|%u,%u,%u", pid, mangled, grid[0], grid[1], grid[2],
	                    block[0], block[1], block[2]);
}

static char *group_key(const ga_launch *l)
{
	return kernel_key(l->pid, l->mangled ? l->mangled : l->name, l->grid, l->block);
}

/* The kernels the timeline timed (timeline.h): each group gets the launches
 * the profiler did not measure and their GPU time from the GPU's own
 * records, in place of the mean of its measured ones; a kernel that was
 * never measured (a collective, which is never replayed; every kernel
 * with --timeline-only) becomes a group of its own, with its time and no
 * metric. */
/* A group of its own for a kernel and launch shape of a process: no
 * launch, no class yet. */
static void new_group(ga_analysis *a, size_t *cap, int pid, const char *name,
                      const char *mangled, const unsigned grid[3], const unsigned block[3])
{
	ga_group ng = {0};
	ng.name = ga_xstrdup(name);
	ng.mangled = ga_xstrdup(mangled);
	ng.pid = pid;
	memcpy(ng.grid, grid, sizeof(ng.grid));
	memcpy(ng.block, block, sizeof(ng.block));
	ng.klass = GA_CLASS_NONE;
	ng.runner_up = GA_CLASS_NONE;
	GA_PUSH(a->groups, a->n_groups, *cap, ng);
}

static void timeline_groups(const ga_profile *p, ga_analysis *a, ga_map *table,
                            size_t *cap_groups)
{
	char **keys = NULL;       /* the new groups' keys, which table borrows */
	size_t n_keys = 0, cap_keys = 0;

	for (size_t ti = 0; ti < p->n_timelines; ti++) {
		const ga_timeline *t = &p->timelines[ti];
		size_t *group_of = ga_xcalloc(t->n_kernels + 1, sizeof(*group_of));
		for (size_t k = 0; k < t->n_kernels; k++) {
			const ga_tl_kernel *tk = &t->kernels[k];
			char *key = kernel_key(t->pid, tk->mangled, tk->grid, tk->block);
			long gi = ga_strmap_get(table, key);
			if (gi < 0) {
				gi = (long)a->n_groups;
				new_group(a, cap_groups, t->pid, tk->name ? tk->name : tk->mangled,
				          tk->mangled, tk->grid, tk->block);
				GA_PUSH(keys, n_keys, cap_keys, key);
				ga_strmap_put(table, key, (size_t)gi);
			} else {
				free(key);
			}
			ga_group *g = &a->groups[gi];
			group_of[k] = (size_t)gi;
			g->timeline_launches += tk->launches;
			g->timeline_ns += tk->total_ns;
			/* timed, not charged at the mean: only those the timeline
			 * did not time (inside the profiler's own spans) are */
			g->unprofiled = g->unprofiled > tk->launches ? g->unprofiled - tk->launches : 0;
		}
		ga_count_loop_launches(t, group_of, a);
		free(group_of);
	}
	/* table is only freed after this */
	for (size_t i = 0; i < n_keys; i++)
		free(keys[i]);
	free(keys);
}

static void build_groups(const ga_profile *p, ga_analysis *a)
{
	size_t cap_groups = 0;
	ga_map table = {0};       /* key -> group; keys[group] owns the key */
	char **keys = ga_xcalloc(p->n_launches ? p->n_launches : 1, sizeof(*keys));
	/* Each launch's group, so that every group's list of launches is
	 * allocated once at its final size (growing them one launch at a time
	 * was a realloc per launch). */
	size_t *group_of = ga_xcalloc(p->n_launches ? p->n_launches : 1, sizeof(*group_of));

	for (size_t i = 0; i < p->n_launches; i++) {
		const ga_launch *l = &p->launches[i];
		char *key = group_key(l);
		long gi = ga_strmap_get(&table, key);
		if (gi < 0) {
			gi = (long)a->n_groups;
			keys[gi] = key;
			ga_strmap_put(&table, key, (size_t)gi);
			new_group(a, &cap_groups, l->pid, l->name ? l->name : l->mangled,
			          l->mangled ? l->mangled : l->name, l->grid, l->block);
		} else {
			free(key);
		}
		a->groups[gi].n_launches++;
		group_of[i] = (size_t)gi;
	}
	for (size_t gi = 0; gi < a->n_groups; gi++) {
		a->groups[gi].launches = ga_xmalloc(a->groups[gi].n_launches * sizeof(size_t));
		a->groups[gi].n_launches = 0;
	}
	for (size_t i = 0; i < p->n_launches; i++) {
		ga_group *g = &a->groups[group_of[i]];
		g->launches[g->n_launches++] = i;
	}
	free(group_of);
	/* Launches the collector counted but did not profile. */
	for (size_t i = 0; i < p->n_unprofiled; i++) {
		const ga_unprofiled *u = &p->unprofiled[i];
		char *key = kernel_key(u->pid, u->mangled, u->grid, u->block);
		long gi = ga_strmap_get(&table, key);
		if (gi >= 0) {
			a->groups[gi].unprofiled += u->launches;
			a->groups[gi].below_min_share |= u->below_min_share;
		}
		free(key);
	}
	size_t n_keys = a->n_groups;   /* the launches' groups own keys[] */
	timeline_groups(p, a, &table, &cap_groups);
	for (size_t gi = 0; gi < n_keys; gi++)
		free(keys[gi]);
	free(keys);
	ga_map_free(&table);
}

/* Sums of durations and of weighted values can overflow a double although
 * every input is finite (a corrupt or hostile profile: durations near
 * 1e308).  A weighted mean of finite values is itself finite, so when a sum
 * overflows it is computed again on scaled numbers: weights divided by the
 * largest weight and values by the largest magnitude, so that no term
 * exceeds 1 and no sum the number of launches.  (Not in long double: that
 * is no wider than double on some platforms, nor under valgrind.)  The
 * normal path is left as it was, so results on sane profiles do not change
 * by a bit.  Metric m >= 0: its duration-weighted mean; m < 0: the mean
 * duration. */
static double scaled_mean(const ga_profile *p, const ga_group *g, long m)
{
	double wmax = 0, vmax = 0, sum = 0, wsum = 0, r;

	for (int pass = 0; pass < 2; pass++) {
		for (size_t k = 0; k < g->n_launches; k++) {
			const ga_launch *l = &p->launches[g->launches[k]];
			double d = l->duration_ns;
			int timed = isfinite(d) && d > 0;
			double v = m < 0 ? d : l->values ? l->values[m] : NAN;
			double w = m < 0 || !timed ? 1.0 : d;
			if (m < 0 ? !timed : !isfinite(v))
				continue;
			if (pass == 0) {
				wmax = fmax(wmax, w);
				vmax = fmax(vmax, fabs(v));
			} else {
				sum += w / wmax * (v / vmax);
				wsum += w / wmax;
			}
		}
		if (vmax == 0)
			return wmax > 0 ? 0.0 : NAN;
	}
	if (!(wsum > 0))
		return NAN;
	r = sum / wsum;         /* in -1..1 but for rounding */
	return fmin(1.0, fmax(-1.0, r)) * vmax;
}

/* Shares of GPU time on durations scaled by the longest one, for when the
 * total of all GPU time overflowed (see scaled_mean). */
static void shares_scaled(const ga_profile *p, ga_analysis *a)
{
	double *t = ga_xcalloc(a->n_groups ? a->n_groups : 1, sizeof(*t));
	double dmax = 0, all = 0;

	for (size_t i = 0; i < a->n_groups; i++) {
		const ga_group *g = &a->groups[i];
		for (size_t k = 0; k < g->n_launches; k++) {
			double d = p->launches[g->launches[k]].duration_ns;
			if (isfinite(d) && d > 0)
				dmax = fmax(dmax, d);
		}
	}
	for (size_t i = 0; i < a->n_groups && dmax > 0; i++) {
		const ga_group *g = &a->groups[i];
		size_t timed = 0;
		for (size_t k = 0; k < g->n_launches; k++) {
			double d = p->launches[g->launches[k]].duration_ns;
			if (isfinite(d) && d > 0) {
				t[i] += d / dmax;
				timed++;
			}
		}
		if (timed && g->unprofiled > 0)
			t[i] += t[i] / (double)timed * (double)g->unprofiled;
		if (g->timeline_launches > 0 && isfinite(g->timeline_ns))
			t[i] += g->timeline_ns / dmax;
		all += t[i];
	}
	for (size_t i = 0; i < a->n_groups; i++)
		a->groups[i].share = all > 0 && isfinite(all) ? t[i] / all
		                                             : 1.0 / (double)a->n_groups;
	free(t);
}

static void aggregate(const ga_profile *p, ga_group *g)
{
	size_t nm = p->n_metrics;
	double *sum = ga_xcalloc(nm ? nm : 1, sizeof(double));
	double *wsum = ga_xcalloc(nm ? nm : 1, sizeof(double));
	size_t timed = 0;

	g->values = ga_xmalloc((nm ? nm : 1) * sizeof(double));
	for (size_t k = 0; k < g->n_launches; k++) {
		const ga_launch *l = &p->launches[g->launches[k]];
		double d = l->duration_ns;
		double w = (isfinite(d) && d > 0) ? d : 1.0;
		if (isfinite(d) && d > 0) {
			g->total_ns += d;
			timed++;
		}
		for (size_t m = 0; m < nm; m++) {
			double v = l->values ? l->values[m] : NAN;
			if (!isfinite(v))
				continue;
			sum[m] += w * v;
			wsum[m] += w;
		}
	}
	for (size_t m = 0; m < nm; m++) {
		g->values[m] = wsum[m] > 0 ? sum[m] / wsum[m] : NAN;
		if (wsum[m] > 0 && !(isfinite(sum[m]) && isfinite(wsum[m])))
			g->values[m] = scaled_mean(p, g, (long)m);
	}
	g->mean_ns = timed ? g->total_ns / (double)timed : NAN;
	if (timed && !isfinite(g->total_ns))
		g->mean_ns = scaled_mean(p, g, -1);
	/* The launches the timeline timed: their own GPU time, and their mean
	 * is the kernel's duration, every model's: the GPU's own records of
	 * launches nobody replayed, where a measured launch's time can be a
	 * replay's (heartwall's kernel measured 6 us once and ran 2 ms a
	 * launch) or one odd launch's. */
	if (g->timeline_launches > 0 && isfinite(g->timeline_ns) && g->timeline_ns > 0)
		g->mean_ns = g->timeline_ns / (double)g->timeline_launches;
	if (timed && g->unprofiled > 0)
		g->total_ns += g->mean_ns * (double)g->unprofiled;
	if (g->timeline_launches > 0)
		g->total_ns += g->timeline_ns;
	free(sum);
	free(wsum);
}

static int group_cmp(const void *x, const void *y)
{
	const ga_group *a = x, *b = y;
	if (a->total_ns != b->total_ns)
		return a->total_ns > b->total_ns ? -1 : 1;
	return strcmp(a->name, b->name);
}

/* ---- expression environment --------------------------------------------- */

typedef struct {
	const char *name;         /* name_ref.named of its name */
	double value;
	int ok;
	const char *missing;      /* when not ok for a missing input: its name */
	char why[512];
} named_val;

/* What a name in an expression stands for.  Expressions look names up
 * millions of times in a profile of thousands of kernels (about 200 per
 * kernel); searching the named values, hashing the name into the profile's
 * metrics and comparing it with each pseudo-metric every time was the
 * largest cost of the analysis.  What does not depend on the kernel is
 * found once per analysis and kept under the name's address (names live in
 * the rule set, which does not change during an analysis). */
typedef struct {
	long metric;              /* index into profile->metrics, or -1 */
	const char *named;        /* the first named expression of the rule set with
	                           * this name (its name), or NULL: one address for
	                           * every copy of the name */
	int pseudo;               /* 1 a pseudo-metric, 0 not one, -1 not known yet */
} name_ref;

typedef struct {
	const ga_profile *p;
	const ga_ruleset *rs;
	ga_map metrics;           /* metric name -> index into p->metrics */
	ga_map by_addr;           /* name's address -> index into refs */
	name_ref *refs;
	size_t n_refs, cap_refs;
} resolver;

static void resolver_init(resolver *r, const ga_profile *p, const ga_ruleset *rs)
{
	memset(r, 0, sizeof(*r));
	r->p = p;
	r->rs = rs;
	for (size_t i = 0; i < p->n_metrics; i++)
		ga_strmap_put(&r->metrics, p->metrics[i], i);  /* the first of repeated names wins */
}

static void resolver_free(resolver *r)
{
	ga_map_free(&r->metrics);
	ga_map_free(&r->by_addr);
	free(r->refs);
}

static const char *defines(const ga_named_expr *defs, size_t n, const char *name)
{
	for (size_t i = 0; i < n; i++)
		if (strcmp(defs[i].name, name) == 0)
			return defs[i].name;
	return NULL;
}

static name_ref *resolve(resolver *r, const char *name)
{
	uint64_t h = ga_hash_ptr(name);
	long k = ga_map_get(&r->by_addr, h, name, NULL);

	if (k < 0) {
		name_ref ref = {.metric = ga_strmap_get(&r->metrics, name), .pseudo = -1};
		ref.named = defines(r->rs->classifier.metrics, r->rs->classifier.n_metrics, name);
		for (size_t i = 0; i < r->rs->n_rules && !ref.named; i++)
			ref.named = defines(r->rs->rules[i].metrics, r->rs->rules[i].n_metrics, name);
		k = (long)r->n_refs;
		GA_PUSH(r->refs, r->n_refs, r->cap_refs, ref);
		ga_map_put(&r->by_addr, h, name, (size_t)k, NULL);
	}
	return &r->refs[k];
}

/* What the estimates read of the roofline: the device's peaks (found once
 * per analysis) and, per kernel, its bound (found on first use). */
typedef struct {
	const ga_analysis *a;
	ga_roof_peaks peaks;
	const ga_roof_cuts *cuts;
} roof_inputs;

typedef struct {
	const ga_profile *p;
	resolver *names;          /* what each name stands for */
	const ga_group *g;
	const ga_launch *first;   /* a representative launch, for its configuration */
	const roof_inputs *roof;
	int bound_done;           /* bound_ns and bound_dur_ns are set */
	double bound_ns, bound_dur_ns;
	int waits_done, waits_rc; /* waits (the source view's, on loads) is set */
	ga_load_waits waits;
	named_val *named;         /* expressions evaluated so far */
	size_t n_named, cap_named;
	char last_missing[512];   /* why a named value was not available */
	const char *missing;      /* the input the last failed lookup lacked */
	double floor_ns;          /* the classifier's launch_floor_ns; NAN: no floor */
} env;

/* Recomputed from the recorded limits, so that profiles recorded before the
 * tie-break rule read the same. */
static const char *limiter_of(const ga_launch *l)
{
	return l->occ_limiter ? ga_launch_limiter(l) : "";
}

/* The roofline's pseudo metrics: the device's peaks and the kernel's bound.
 * -1: not available for this kernel; -2: no pseudo-metric of that name. */
static int lookup_roofline(env *e, const char *name, double *out)
{
	const ga_roof_peaks *pk = &e->roof->peaks;
	static const struct {
		const char *name;
		ga_roof_prec prec;
	} peaks[] = {
		{ "device__peak_fp32_flops", GA_ROOF_FP32 },
		{ "device__peak_fp64_flops", GA_ROOF_FP64 },
		{ "device__peak_tensor_flops", GA_ROOF_TENSOR },
	};

	for (size_t i = 0; i < GA_ARRAY_LEN(peaks); i++) {
		if (strcmp(name, peaks[i].name) != 0)
			continue;
		*out = pk->flops[peaks[i].prec];
		return isfinite(*out) && *out > 0 ? 0 : -1;
	}
	if (strcmp(name, "roofline__bound_ns") != 0 &&
	    strcmp(name, "roofline__headroom_share") != 0)
		return -2;
	if (!e->bound_done) {
		e->bound_ns = ga_roofline_bound_ns(e->roof->a, e->g, pk, e->roof->cuts,
		                                   &e->bound_dur_ns);
		e->bound_done = 1;
	}
	if (!(e->bound_ns > 0) || !(e->bound_dur_ns > 0))
		return -1;
	if (strcmp(name, "roofline__bound_ns") == 0)
		*out = e->bound_ns;
	else
		*out = fmax(0.0, 1.0 - e->bound_ns / e->bound_dur_ns);
	return 0;
}

/* -1: not available for this kernel; -2: no pseudo-metric of that name. */
static int lookup_pseudo(env *e, const char *name, double *out)
{
	const ga_launch *l = e->first;
	const ga_device *d = &e->p->device;
	const ga_group *g = e->g;
	double threads = (double)l->block[0] * l->block[1] * l->block[2];
	double grid = (double)l->grid[0] * l->grid[1] * l->grid[2];
	double warp = d->warp_size > 0 ? (double)d->warp_size : NAN;
	double max_warps = d->max_threads_per_sm / warp;
	const char *lim = limiter_of(l);

#define PSEUDO(n, expr, valid)                       \
	if (strcmp(name, n) == 0) {                   \
		if (!(valid))                         \
			return -1;                    \
		*out = (expr);                        \
		return 0;                             \
	}
	PSEUDO("launch__grid_size", grid, 1);
	PSEUDO("launch__block_size", threads, 1);
	PSEUDO("launch__registers_per_thread", (double)l->registers, 1);
	PSEUDO("launch__shared_mem_per_block", (double)l->smem_static + (double)l->smem_dynamic, 1);
	PSEUDO("launch__occupancy_theoretical_pct", l->occ_theoretical_pct, l->occ_theoretical_pct > 0);
	PSEUDO("launch__occupancy_limit_blocks", (double)l->occ_limit_blocks, l->occ_limiter);
	PSEUDO("launch__occupancy_limit_registers", (double)l->occ_limit_registers, l->occ_limiter);
	PSEUDO("launch__occupancy_limit_shared_mem", (double)l->occ_limit_smem, l->occ_limiter);
	PSEUDO("launch__occupancy_limit_warps", (double)l->occ_limit_warps, l->occ_limiter);
	PSEUDO("launch__occupancy_limiter_is_registers", strcmp(lim, "registers") == 0, l->occ_limiter);
	PSEUDO("launch__occupancy_limiter_is_shared_mem", strcmp(lim, "shared_memory") == 0,
	       l->occ_limiter);
	PSEUDO("launch__occupancy_limiter_is_warps", strcmp(lim, "warps") == 0, l->occ_limiter);
	PSEUDO("launch__occupancy_limiter_is_blocks", strcmp(lim, "blocks") == 0, l->occ_limiter);
	if (strcmp(name, "launch__waves_per_sm") == 0) {
		double warps_per_block = ceil(threads / warp);
		double blocks_per_sm = l->occ_theoretical_pct / 100.0 * max_warps / warps_per_block;
		if (!(blocks_per_sm > 0) || d->sm_count <= 0)
			return -1;
		*out = grid / (floor(blocks_per_sm + 1e-9) * d->sm_count);
		return isfinite(*out) ? 0 : -1;
	}
	PSEUDO("launch__count",
	       (double)g->n_launches + (double)g->unprofiled + (double)g->timeline_launches, 1);
	PSEUDO("launch__duration_ns", g->mean_ns, isfinite(g->mean_ns));
	if (strcmp(name, "launch__launch_cost_ns") == 0) {
		/* The host's own time inside a launch call, from the process's
		 * timeline: what one launch costs this program.  Over 100 calls
		 * at least: a kernel's first launch loads its module (lazy
		 * loading), milliseconds that a mean of a few calls would take
		 * for the launch cost. */
		const ga_timeline *t = ga_profile_timeline(e->p, g->pid);
		if (!t || t->host_calls[GA_HOST_LAUNCH] < 100 || !(t->host_ns[GA_HOST_LAUNCH] > 0))
			return -1;
		*out = t->host_ns[GA_HOST_LAUNCH] / (double)t->host_calls[GA_HOST_LAUNCH];
		return 0;
	}
	PSEUDO("launch__time_share", g->share, isfinite(g->share));
	PSEUDO("launch__loop_share", (double)g->loop_launches / (double)g->loop_all_launches,
	       g->loop_launches > 0);
	PSEUDO("program__kernels_same_launch", (double)g->same_launch, g->same_launch > 0);
	PSEUDO("program__kernels_back_to_back", (double)g->back_to_back, g->back_to_back > 0);
	PSEUDO("owner__editable", (double)g->owner->editable, g->owner);
	if (ga_str_has_prefix(name, "owner__kind_") && g->owner) {
		*out = g->owner_kind && strcmp(name + strlen("owner__kind_"), g->owner_kind) == 0;
		return 0;
	}
	PSEUDO("nvtx__sdpa_math_share", ga_sdpa_math_share(e->p, g), 1);
	PSEUDO("device__sm_count", (double)d->sm_count, d->sm_count > 0);
	PSEUDO("device__max_warps_per_sm", max_warps, max_warps > 0);
	PSEUDO("device__max_threads_per_sm", (double)d->max_threads_per_sm, d->max_threads_per_sm > 0);
	PSEUDO("device__mem_bandwidth_gbs", d->mem_bandwidth_gbs, d->mem_bandwidth_gbs > 0);
	PSEUDO("device__cc", d->cc_major + d->cc_minor / 10.0, d->cc_major > 0);
	PSEUDO("launch__warps", grid * ceil(threads / warp), warp > 0);
	/* Opcodes, where the source view measured the kernel and nvdisasm named
	 * each PC's: FCHK (an FP32 division), its slow path, MUFU.RSQ, the XU's;
	 * and the waits on loads that the control bits show. */
	if (ga_str_has_prefix(name, "source__")) {
		const ga_source *src = ga_group_source(e->p, g);
		double total, top, n;
		if (!src)
			return -1;
		PSEUDO("source__fchk_inst", n, ga_source_op_inst(src, "FCHK", &n) == 0);
		PSEUDO("source__fdiv_slowpath_inst", n, ga_source_fdiv_slowpath_inst(src, &n) == 0);
		PSEUDO("source__mufu_rsq_inst", n, ga_source_op_inst(src, "MUFU.RSQ", &n) == 0);
		if (ga_str_has_prefix(name, "source__load_wait") ||
		    ga_str_has_prefix(name, "source__lone_load")) {
			/* one walk of the listing for the three values */
			if (!e->waits_done) {
				e->waits_rc = ga_source_load_waits(src, &e->waits);
				e->waits_done = 1;
			}
			const ga_load_waits w = e->waits;
			if (e->waits_rc != 0)
				return -1;
			PSEUDO("source__load_wait_inst", w.waits, 1);
			PSEUDO("source__lone_load_wait_share", w.lone / w.waits, 1);
			PSEUDO("source__lone_load_movable_inst", w.lone_movable / w.lone,
			       w.movable_known && w.lone > 0);
			return -2;
		}
		if (ga_source_xu_ops(src, &total, &top) != 0)
			return -1;
		PSEUDO("source__xu_inst", total, 1);
		PSEUDO("source__xu_top_opcode_share", top / total, total > 0);
		return -2;
	}
#undef PSEUDO
	return lookup_roofline(e, name, out);
}

static int lookup(void *ctx, const char *name, double *out)
{
	env *e = ctx;
	name_ref *ref = resolve(e->names, name);
	for (size_t i = ref->named ? e->n_named : 0; i-- > 0;) {
		if (e->named[i].name == ref->named) {
			if (!e->named[i].ok) {
				snprintf(e->last_missing, sizeof(e->last_missing), "%s",
				         e->named[i].why);
				e->missing = e->named[i].missing;
				return -1;
			}
			*out = e->named[i].value;
			return 0;
		}
	}
	if (ref->metric >= 0) {
		double v = e->g->values[ref->metric];
		if (!isfinite(v)) {
			e->missing = name;
			return -1;
		}
		*out = v;
		return 0;
	}
	int rc = ref->pseudo == 0 ? -2 : lookup_pseudo(e, name, out);
	if (ref->pseudo < 0)
		ref->pseudo = rc != -2;
	if (rc == 0)
		return 0;
	e->missing = name;
	return -1;
}

/* Evaluate an expression; on failure fill why and return the status
 * (GA_EVAL_MISSING: a metric it needs was not measured). */
static int eval(env *e, const ga_expr *x, double *out, char *why, size_t whylen)
{
	e->last_missing[0] = '\0';
	e->missing = NULL;
	ga_eval_status st = ga_expr_eval(x, lookup, e, out, why, whylen);
	if (st == GA_EVAL_OK)
		return 0;
	if (st == GA_EVAL_MISSING && e->last_missing[0])
		/* A named expression failed: say why it failed, not that a
		 * "metric" of that name is missing. */
		snprintf(why, whylen, "%s", e->last_missing);
	return (int)st;
}

static void eval_named(env *e, const ga_named_expr *defs, size_t n)
{
	/* Only ever grows: every rule of every kernel comes through here, and
	 * resizing each time cost more than the evaluation (minutes for
	 * 10,000 kernels with glibc's MALLOC_PERTURB_, which meson sets). */
	ga_grow((void **)&e->named, &e->cap_named, e->n_named + n + 1, sizeof(*e->named));
	for (size_t i = 0; i < n; i++) {
		named_val *nv = &e->named[e->n_named];
		/* Not a memset: why is 512 bytes, read only when ok is 0 (and
		 * then eval has written it). */
		nv->name = resolve(e->names, defs[i].name)->named;
		nv->value = 0;
		nv->ok = 0;
		nv->why[0] = '\0';
		int st = eval(e, defs[i].expr, &nv->value, nv->why, sizeof(nv->why));
		nv->ok = st == 0;
		nv->missing = st == GA_EVAL_MISSING ? e->missing : NULL;
		if (!nv->ok) {
			char *tmp = ga_xasprintf("%s: %s", defs[i].name, nv->why);
			size_t n = strlen(tmp);
			if (n >= sizeof(nv->why))
				n = sizeof(nv->why) - 1;
			memcpy(nv->why, tmp, n);
			nv->why[n] = '\0';
			free(tmp);
		}
		e->n_named++;
	}
}

/* A kernel's name in a note: at most this many bytes of it (--verbose
 * prints the notes as they are, and a template's name can run to 100 KB). */
#define NOTE_NAME_MAX 1000

/* How many bytes of name a note shows: all of it, or NOTE_NAME_MAX cut back
 * to the start of a UTF-8 character. */
static int note_name_len(const char *name)
{
	size_t n = strlen(name);
	if (n <= NOTE_NAME_MAX)
		return (int)n;
	n = NOTE_NAME_MAX;
	while (n > 0 && ((unsigned char)name[n] & 0xC0) == 0x80)
		n--;
	return (int)n;
}

static void add_note(ga_analysis *a, size_t *cap, char *note)
{
	GA_PUSH(a->notes, a->n_notes, *cap, note);
}

static void evidence_for(env *e, char *const *names, size_t n, ga_evidence **out, size_t *nout)
{
	*out = ga_xcalloc(n ? n : 1, sizeof(**out));
	*nout = n;
	for (size_t i = 0; i < n; i++) {
		double v;
		(*out)[i].name = ga_xstrdup(names[i]);
		(*out)[i].value = lookup(e, names[i], &v) == 0 ? v : NAN;
	}
}

/* ---- classification ------------------------------------------------------ */

static void classify(ga_analysis *a, size_t *note_cap, const ga_classifier *c, env *e,
                     ga_group *g, int verbose)
{
	ga_class chosen = GA_CLASS_NONE;
	char why[512];

	for (int k = 0; k < GA_CLASS__COUNT; k++)
		g->scores[k] = NAN;
	eval_named(e, c->metrics, c->n_metrics);
	for (size_t i = 0; i < c->n_order; i++) {
		const ga_class_entry *ce = &c->order[i];
		double s, w;
		if (ce->score && eval(e, ce->score, &s, why, sizeof(why)) == 0)
			g->scores[ce->klass] = s;
		if (chosen != GA_CLASS_NONE)
			continue;
		if (eval(e, ce->when, &w, why, sizeof(why)) != 0) {
			if (verbose)
				add_note(a, note_cap, ga_xasprintf("%.*s: class %s not evaluable: %s",
				                                   note_name_len(g->name), g->name,
				                                   ga_class_name(ce->klass), why));
			continue;
		}
		if (w != 0) {
			chosen = ce->klass;
			free(g->class_note);
			g->class_note = ga_xasprintf("%s because %s", ga_class_name(ce->klass),
			                             ce->when_src);
		}
	}
	if (chosen == GA_CLASS_NONE) {
		/* No rule held: fall back to the strongest score. */
		double best = -INFINITY;
		for (int k = 0; k < GA_CLASS__COUNT; k++)
			if (isfinite(g->scores[k]) && g->scores[k] > best) {
				best = g->scores[k];
				chosen = (ga_class)k;
			}
		if (chosen != GA_CLASS_NONE)
			g->class_note = ga_xasprintf("%s by highest score (no class condition held)",
			                             ga_class_name(chosen));
		else
			g->class_note = ga_xstrdup("not classified: the classifier's metrics are "
			                           "missing from the profile");
	}
	g->klass = chosen;
	g->runner_up = GA_CLASS_NONE;
	if (chosen != GA_CLASS_NONE && isfinite(g->scores[chosen])) {
		double best = -INFINITY;
		for (int k = 0; k < GA_CLASS__COUNT; k++) {
			if (k == (int)chosen || !isfinite(g->scores[k]))
				continue;
			if (g->scores[k] > best) {
				best = g->scores[k];
				g->runner_up = (ga_class)k;
			}
		}
		if (g->runner_up != GA_CLASS_NONE && g->scores[chosen] - best > c->close_margin)
			g->runner_up = GA_CLASS_NONE;
	}
	evidence_for(e, c->evidence, c->n_evidence, &g->class_evidence, &g->n_class_evidence);
}

/* ---- rules ------------------------------------------------------------ */

static int finding_cmp(const void *x, const void *y)
{
	const ga_finding *a = x, *b = y;
	if (a->saving != b->saving)
		return a->saving > b->saving ? -1 : 1;
	if (a->rule->severity != b->rule->severity)
		return a->rule->severity > b->rule->severity ? -1 : 1;
	if (a->rule->checklist != b->rule->checklist)
		return a->rule->checklist < b->rule->checklist ? -1 : 1;
	if (a->group != b->group)
		return a->group < b->group ? -1 : 1;
	return strcmp(a->rule->id, b->rule->id);
}

/* Group the launches, aggregate their values, share out the GPU time. */
static void group_launches(const ga_profile *p, ga_analysis *a)
{
	build_groups(p, a);
	for (size_t i = 0; i < a->n_groups; i++) {
		aggregate(p, &a->groups[i]);
		a->total_ns += a->groups[i].total_ns;
	}
	for (size_t i = 0; i < a->n_groups; i++)
		a->groups[i].share = a->total_ns > 0 ? a->groups[i].total_ns / a->total_ns
		                                     : 1.0 / (double)a->n_groups;
	if (!isfinite(a->total_ns))
		shares_scaled(p, a);
	if (a->n_groups)
		qsort(a->groups, a->n_groups, sizeof(*a->groups), group_cmp);
	ga_count_launch_shapes(p, a);
}

/* A fired rule's finding for group gi: its estimate (clamped to 0..1) and,
 * for a rule with a model range, low and high around it; the range printed
 * is the model's when there is one, else the rule's stock one.  missing:
 * the input the estimate or its range lacked, or NULL. */
static ga_finding make_finding(env *e, const ga_rule *r, size_t gi, double est, double lo,
                               double hi, const char *missing)
{
	ga_finding f = {0};
	f.rule = r;
	f.group = gi;
	f.low = f.high = NAN;
	evidence_for(e, r->evidence, r->n_evidence, &f.evidence, &f.n_evidence);
	if (missing) {
		f.estimate_missing = ga_xstrdup(missing);
		f.estimate = f.speedup = f.speedup_min = f.speedup_max = NAN;
		return f;
	}
	/* The floors.  One launch (the classifier's launch_floor_ns): a saving
	 * past 1 - floor / duration would make the kernel shorter than any
	 * kernel runs; not for the launch rules (checklist 10), whose models
	 * count a launch's cost, max(launch cost, duration), and may merge
	 * many launches into one.  A fix that keeps the bytes and FLOPs
	 * (keeps_work): the roofline bound.  One that keeps the instructions
	 * (keeps_instructions): the issue time, one a cycle per SM
	 * sub-partition (issue share of active cycles x SMs' active share).
	 * The lowest binds: named when the estimate or the range's top
	 * reaches it (the launch floor: when it cuts them). */
	double d = e->g->mean_ns, head, ia, sa;
	double cap_launch = r->checklist != 10 && isfinite(d) && d > 0 && e->floor_ns > 0
	                    ? fmax(0.0, 1.0 - e->floor_ns / d) : INFINITY;
	double cap_roof = r->keeps_work && lookup_roofline(e, "roofline__headroom_share", &head) == 0
	                  ? head : INFINITY;
	double cap_issue = INFINITY;
	const char *was_missing = e->missing;
	if (r->keeps_instructions &&
	    lookup(e, "smsp__issue_active.avg.pct_of_peak_sustained_active", &ia) == 0 &&
	    lookup(e, "sm__cycles_active.avg.pct_of_peak_sustained_elapsed", &sa) == 0)
		cap_issue = 1.0 - fmin(fmax(ia / 100, 0), 1) * fmin(fmax(sa / 100, 0), 1);
	e->missing = was_missing;    /* a floor without its inputs is no floor */
	double cap = fmin(cap_launch, fmin(cap_roof, cap_issue));
	if (isfinite(cap)) {
		double top = r->low && r->high ? fmax(est, fmax(lo, hi)) : est;
		int launch = cap != cap_roof && cap != cap_issue;
		if (launch ? top > cap : top >= cap - 1e-9)
			f.floor = cap == cap_roof ? "roofline" : launch ? "launch" : "issue";
		est = fmin(est, cap);
		lo = fmin(lo, cap);
		hi = fmin(hi, cap);
	}
	ga_model_est m;
	ga_model_estimate(r, est, r->low && r->high, lo, hi, 1, &m);
	f.estimate = m.estimate;
	f.saving = e->g->share * m.estimate;
	f.speedup = m.speedup;
	f.speedup_min = m.speedup_min;
	f.speedup_max = m.speedup_max;
	f.low = m.low;
	f.high = m.high;
	return f;
}

/* Evaluate a fired rule's estimate and its range.  Returns the name of the
 * input one of them lacks (borrowed from the rule set), or NULL; an
 * estimate that fails otherwise (a division by zero) counts as no saving,
 * and its range as the estimate. */
static const char *estimate_of(env *e, ga_analysis *a, size_t *note_cap, int verbose,
                               const ga_rule *r, double v[3])
{
	const ga_expr *x[3] = { r->estimate, r->low, r->high };
	char why[512];

	for (int i = 0; i < 3; i++) {
		if (!x[i]) {
			v[i] = v[0];
			continue;
		}
		int st = eval(e, x[i], &v[i], why, sizeof(why));
		if (st == 0)
			continue;
		if (verbose)
			add_note(a, note_cap, ga_xasprintf("%.*s: rule %s fired but its %s is not "
			         "evaluable (%s); ranked with no saving", note_name_len(e->g->name), e->g->name, r->id,
			         i == 0 ? "estimate" : i == 1 ? "low" : "high", why));
		if (st == GA_EVAL_MISSING && e->missing)
			return e->missing;
		v[i] = i == 0 ? 0 : v[0];
	}
	return NULL;
}

/* Classify every group and fire every rule on it. */
static void evaluate(const ga_profile *p, const ga_ruleset *rs, int verbose, ga_analysis *a,
                     const roof_inputs *roof)
{
	size_t note_cap = 0, find_cap = 0;
	resolver names;
	resolver_init(&names, p, rs);
	named_val *named = NULL;      /* one array for every kernel's names */
	size_t cap_named = 0;
	for (size_t gi = 0; gi < a->n_groups; gi++) {
		ga_group *g = &a->groups[gi];
		const char *module = NULL;
		for (size_t k = 0; k < g->n_launches && !module; k++)
			module = p->launches[g->launches[k]].module;
		g->owner = ga_owner_of(rs, g->name, g->mangled, module, &g->owner_kind);
		/* Timed by the timeline alone: no metric to classify it by, and no
		 * rule it could be checked against. */
		if (g->n_launches == 0)
			continue;
		env e = {.p = p, .names = &names, .g = g, .first = &p->launches[g->launches[0]],
		         .floor_ns = ga_classifier_value(rs, "launch_floor_ns"),
		         .roof = roof, .named = named, .cap_named = cap_named};

		classify(a, &note_cap, &rs->classifier, &e, g, verbose);
		size_t class_named = e.n_named;

		for (size_t ri = 0; ri < rs->n_rules; ri++) {
			const ga_rule *r = &rs->rules[ri];
			char why[512];
			double w, est[3];

			if (r->program || !ga_rule_applies_to(r, g->owner))
				continue;

			e.n_named = class_named;   /* rules see the classifier's names too */
			eval_named(&e, r->metrics, r->n_metrics);
			int st = eval(&e, r->when, &w, why, sizeof(why));
			if (st != 0) {
				/* Not measured (a metric set this kernel's launches
				 * never took): the report lists the rule as unchecked. */
				if (st == GA_EVAL_MISSING)
					GA_PUSH(g->unchecked, g->n_unchecked, g->cap_unchecked, r);
				if (verbose)
					add_note(a, &note_cap, ga_xasprintf("%.*s: rule %s not evaluated: %s",
					                                    note_name_len(g->name), g->name, r->id, why));
				continue;
			}
			if (w == 0)
				continue;
			const char *missing = estimate_of(&e, a, &note_cap, verbose, r, est);
			ga_finding f = make_finding(&e, r, gi, est[0], est[1], est[2], missing);
			GA_PUSH(a->findings, a->n_findings, find_cap, f);
		}
		named = e.named;
		cap_named = e.cap_named;
	}
	free(named);
	resolver_free(&names);
}

/* Rank the findings, and list each group's in rank order. */
static void rank_findings(ga_analysis *a)
{
	if (a->n_findings)
		qsort(a->findings, a->n_findings, sizeof(*a->findings), finding_cmp);
	for (size_t fi = 0; fi < a->n_findings; fi++)
		a->groups[a->findings[fi].group].n_findings++;
	for (size_t gi = 0; gi < a->n_groups; gi++) {
		ga_group *g = &a->groups[gi];
		g->findings = g->n_findings ? ga_xmalloc(g->n_findings * sizeof(size_t)) : NULL;
		g->n_findings = 0;
	}
	for (size_t fi = 0; fi < a->n_findings; fi++) {
		ga_group *g = &a->groups[a->findings[fi].group];
		g->findings[g->n_findings++] = fi;
	}
}

static int check_rules(const ga_ruleset *rs, ga_cuts *cuts, ga_error *err)
{
	if (!rs->has_classifier)
		return ga_fail(err, GA_ERR_RULES, "no classifier: the rules directory has no "
		               "classify.yaml");
	return ga_cuts_read(rs, cuts, err);
}

int ga_analyze_check_rules(const ga_ruleset *rs, ga_error *err)
{
	ga_cuts cuts;
	return check_rules(rs, &cuts, err);
}

int ga_analyze(const ga_profile *p, const ga_ruleset *rs, const ga_analyze_opts *opts,
               ga_analysis *a, ga_error *err)
{
	ga_cuts cuts;

	memset(a, 0, sizeof(*a));
	a->profile = p;
	if (check_rules(rs, &cuts, err) != 0)
		return -1;
	group_launches(p, a);
	roof_inputs roof = { .a = a, .cuts = &cuts.roof };
	ga_roofline_peaks(a, &roof.peaks);
	evaluate(p, rs, opts && opts->verbose, a, &roof);
	rank_findings(a);
	ga_summarize(a, &cuts);
	ga_group_ops(a, opts ? opts->nvtx : 0);
	ga_action_ops(a);
	ga_program(a, rs);
	return 0;
}

static void free_evidence(ga_evidence *ev, size_t n)
{
	for (size_t i = 0; i < n; i++)
		free(ev[i].name);
	free(ev);
}

void ga_analysis_free(ga_analysis *a)
{
	for (size_t i = 0; i < a->n_groups; i++) {
		ga_group *g = &a->groups[i];
		free(g->name);
		free(g->mangled);
		free(g->launches);
		free(g->values);
		free(g->class_note);
		free(g->findings);
		free(g->unchecked);
		free(g->lines);
		free_evidence(g->class_evidence, g->n_class_evidence);
	}
	free(a->groups);
	for (size_t i = 0; i < a->n_findings; i++) {
		free_evidence(a->findings[i].evidence, a->findings[i].n_evidence);
		free(a->findings[i].lines);
		free(a->findings[i].estimate_missing);
	}
	free(a->findings);
	for (size_t i = 0; i < a->n_notes; i++)
		free(a->notes[i]);
	free(a->notes);
	free(a->processes);
	ga_ops_free(a);
	for (size_t i = 0; i < a->n_actions; i++)
	{
		free(a->actions[i].findings);
		free(a->actions[i].ops);
	}
	free(a->actions);
	ga_program_free(a);
	ga_roofline_free(&a->roofline);
	memset(a, 0, sizeof(*a));
}

int ga_analysis_max_severity(const ga_analysis *a)
{
	int max = -1;
	for (size_t i = 0; i < a->n_findings; i++)
		if (a->findings[i].rule && (int)a->findings[i].rule->severity > max)
			max = (int)a->findings[i].rule->severity;
	/* the timeline's findings gate a build like the kernels' */
	for (size_t i = 0; i < a->n_pfindings; i++)
		if (a->pfindings[i].rule && (int)a->pfindings[i].rule->severity > max)
			max = (int)a->pfindings[i].rule->severity;
	return max;
}
