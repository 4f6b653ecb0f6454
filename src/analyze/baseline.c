/* baseline.c: kernel-by-kernel comparison of two analyses.  See baseline.h. */
#include "baseline.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

static const char *or_empty(const char *s)
{
	return s ? s : "";
}

int ga_same_device(const ga_device *a, const ga_device *b)
{
	if (strcmp(or_empty(a->name), or_empty(b->name)) != 0)
		return 0;
	if (a->chip && *a->chip && b->chip && *b->chip && strcmp(a->chip, b->chip) != 0)
		return 0;
	return 1;
}

/* Position of the group's first launch in its profile: the launch order used
 * to pair kernels that share a name. */
static size_t first_launch(const ga_group *g)
{
	size_t first = GA_NO_GROUP;
	for (size_t i = 0; i < g->n_launches; i++)
		if (g->launches[i] < first)
			first = g->launches[i];
	return first;
}

static const char *group_name(const ga_group *g)
{
	return g->name ? g->name : or_empty(g->mangled);
}

static int same_key(const ga_group *a, const ga_group *b, ga_match how)
{
	if (strcmp(group_name(a), group_name(b)) != 0)
		return 0;
	if (how == GA_MATCH_NAME)
		return 1;
	return memcmp(a->grid, b->grid, sizeof(a->grid)) == 0 &&
	       memcmp(a->block, b->block, sizeof(a->block)) == 0;
}

/* Indices 0..n-1 ordered by first launch. */
typedef struct {
	size_t idx, first;
} ordered;

static int ordered_cmp(const void *x, const void *y)
{
	const ordered *a = x, *b = y;
	if (a->first != b->first)
		return a->first < b->first ? -1 : 1;
	return a->idx < b->idx ? -1 : a->idx > b->idx;
}

static ordered *launch_order(const ga_analysis *a)
{
	ordered *v = ga_xcalloc(a->n_groups ? a->n_groups : 1, sizeof(*v));
	for (size_t i = 0; i < a->n_groups; i++) {
		v[i].idx = i;
		v[i].first = first_launch(&a->groups[i]);
	}
	if (a->n_groups)
		qsort(v, a->n_groups, sizeof(*v), ordered_cmp);
	return v;
}

static uint64_t key_hash(const ga_group *g, ga_match how)
{
	uint64_t h = ga_hash_str(group_name(g));
	if (how == GA_MATCH_SHAPE) {
		h = ga_hash_bytes(h, g->grid, sizeof(g->grid));
		h = ga_hash_bytes(h, g->block, sizeof(g->block));
	}
	return h;
}

static int same_shape_key(const void *a, const void *b)
{
	return same_key(a, b, GA_MATCH_SHAPE);
}

static int same_name_key(const void *a, const void *b)
{
	return same_key(a, b, GA_MATCH_NAME);
}

/* One pass: each unpaired new kernel, in launch order, takes the first
 * unpaired baseline kernel (in launch order) with the same key.  The
 * baseline kernels of each key are chained in launch order under a hash of
 * the key, so a pass is linear, not a scan of every pair (minutes for
 * 10,000 kernels on each side). */
static void pair(const ga_analysis *cur, const ga_analysis *base, const ordered *co,
                 const ordered *bo, size_t *partner, int *base_taken, ga_match *how_v,
                 ga_match how)
{
	size_t nb = base->n_groups, n_keys = 0;
	ga_map_eq eq = how == GA_MATCH_SHAPE ? same_shape_key : same_name_key;
	ga_map keys = {0};
	/* next[j]: the next position in bo with the key of bo[j] (nb: none);
	 * head[k], tail[k]: the first and last such position of key k. */
	size_t *next = ga_xmalloc((nb ? nb : 1) * sizeof(*next));
	size_t *head = ga_xmalloc((nb ? nb : 1) * sizeof(*head));
	size_t *tail = ga_xmalloc((nb ? nb : 1) * sizeof(*tail));

	for (size_t j = 0; j < nb; j++) {
		const ga_group *b = &base->groups[bo[j].idx];
		size_t k = ga_map_put(&keys, key_hash(b, how), b, n_keys, eq);
		next[j] = nb;
		if (k == n_keys) {
			head[k] = j;
			n_keys++;
		} else {
			next[tail[k]] = j;
		}
		tail[k] = j;
	}
	for (size_t i = 0; i < cur->n_groups; i++) {
		size_t ci = co[i].idx;
		if (partner[ci] != GA_NO_GROUP)
			continue;
		const ga_group *c = &cur->groups[ci];
		long k = ga_map_get(&keys, key_hash(c, how), c, eq);
		if (k < 0)
			continue;
		/* Kernels taken stay taken: skip them for good. */
		while (head[k] < nb && base_taken[bo[head[k]].idx])
			head[k] = next[head[k]];
		if (head[k] == nb)
			continue;
		size_t bi = bo[head[k]].idx;
		partner[ci] = bi;
		base_taken[bi] = 1;
		how_v[ci] = how;
		head[k] = next[head[k]];
	}
	ga_map_free(&keys);
	free(next);
	free(head);
	free(tail);
}

static int group_has_rule(const ga_analysis *a, const ga_group *g, const ga_rule *r)
{
	for (size_t i = 0; i < g->n_findings; i++) {
		if (g->findings[i] >= a->n_findings)
			continue;
		const ga_rule *o = a->findings[g->findings[i]].rule;
		if (o == r || (o && r && o->id && r->id && strcmp(o->id, r->id) == 0))
			return 1;
	}
	return 0;
}

/* Findings of group g (in analysis a) whose rule did not fire for the
 * other group (NULL: none, every finding counts). */
static void findings_only_in(const ga_analysis *a, const ga_group *g, const ga_analysis *oa,
                             const ga_group *og, int severity, int mark_regressions,
                             ga_finding_change **out, size_t *n)
{
	size_t cap = 0;
	*out = NULL;
	*n = 0;
	for (size_t i = 0; i < g->n_findings; i++) {
		if (g->findings[i] >= a->n_findings)
			continue;
		const ga_finding *f = &a->findings[g->findings[i]];
		if (og && group_has_rule(oa, og, f->rule))
			continue;
		ga_finding_change fc = {
			.rule = f->rule,
			.finding = g->findings[i],
			.regression = mark_regressions && f->rule &&
			              (int)f->rule->severity >= severity,
		};
		GA_PUSH(*out, *n, cap, fc);
	}
}

ga_prediction ga_predict_check(const ga_finding *f, double base_ns, double cur_ns)
{
	ga_prediction p = { .predicted = NAN, .low = NAN, .high = NAN, .measured = NAN };
	if (!f || !isfinite(base_ns) || !isfinite(cur_ns) || cur_ns <= 0 || cur_ns >= base_ns)
		return p;
	p.checked = 1;
	p.predicted = f->speedup;
	p.low = f->speedup_min;
	p.high = f->speedup_max;
	p.measured = base_ns / cur_ns;
	p.inside = p.measured >= p.low && p.measured <= p.high;
	return p;
}

/* Gone findings of a paired kernel: what each predicted, when the kernel
 * got faster on the same GPU. */
static void check_predictions(const ga_comparison *c, ga_kernel_change *k)
{
	if (!c->same_device)
		return;
	for (size_t i = 0; i < k->n_removed; i++)
		k->removed[i].check = ga_predict_check(&c->base->findings[k->removed[i].finding],
		                                       k->base_ns, k->cur_ns);
}

const ga_finding_change *ga_comparison_gone(const ga_comparison *c, size_t bi)
{
	for (size_t i = 0; i < c->n_kernels; i++) {
		const ga_kernel_change *k = &c->kernels[i];
		if (k->cur == GA_NO_GROUP)
			continue;
		for (size_t j = 0; j < k->n_removed; j++)
			if (k->removed[j].finding == bi)
				return &k->removed[j];
	}
	return NULL;
}

static const ga_evidence *find_evidence(const ga_group *g, const char *name)
{
	for (size_t i = 0; i < g->n_class_evidence; i++)
		if (g->class_evidence[i].name && strcmp(g->class_evidence[i].name, name) == 0)
			return &g->class_evidence[i];
	return NULL;
}

/* The class evidence of the new kernel, then names only the baseline has. */
static void metric_changes(const ga_group *c, const ga_group *b, ga_kernel_change *k)
{
	size_t cap = 0;
	for (size_t i = 0; i < c->n_class_evidence; i++) {
		const ga_evidence *e = &c->class_evidence[i];
		if (!e->name)
			continue;
		const ga_evidence *o = find_evidence(b, e->name);
		ga_metric_change m = { e->name, o ? o->value : NAN, e->value };
		GA_PUSH(k->metrics, k->n_metrics, cap, m);
	}
	for (size_t i = 0; i < b->n_class_evidence; i++) {
		const ga_evidence *e = &b->class_evidence[i];
		if (!e->name || find_evidence(c, e->name))
			continue;
		ga_metric_change m = { e->name, e->value, NAN };
		GA_PUSH(k->metrics, k->n_metrics, cap, m);
	}
}

static int any_regression(const ga_finding_change *v, size_t n)
{
	for (size_t i = 0; i < n; i++)
		if (v[i].regression)
			return 1;
	return 0;
}

static int has_fingerprint(const ga_analysis *a, const char *fp)
{
	for (size_t i = 0; i < a->n_findings; i++)
		if (strcmp(a->findings[i].fingerprint, fp) == 0)
			return 1;
	return 0;
}

/* New, unchanged and absent findings by fingerprint (quadratic: a few
 * hundred findings at most). */
static void compare_fingerprints(ga_comparison *c)
{
	const ga_analysis *cur = c->cur, *base = c->base;

	c->unchanged = ga_xcalloc(cur->n_findings ? cur->n_findings : 1, 1);
	for (size_t i = 0; i < cur->n_findings; i++)
		c->unchanged[i] = (unsigned char)has_fingerprint(base, cur->findings[i].fingerprint);
	c->absent = ga_xcalloc(base->n_findings ? base->n_findings : 1, sizeof(*c->absent));
	for (size_t i = 0; i < base->n_findings; i++)
		if (!has_fingerprint(cur, base->findings[i].fingerprint))
			c->absent[c->n_absent++] = i;
}

/* A job's world size: the largest its ranks recorded, else their count;
 * a profile without ranks is one process. */
static long world_of(const ga_analysis *a)
{
	if (a->ranks.world_size > 0)
		return a->ranks.world_size;
	return a->ranks.n ? (long)a->ranks.n : 1;
}

/* Of the GPU time, the share in communication kernels. */
static double comm_share(const ga_analysis *a)
{
	double comm = 0, all = 0;
	for (size_t i = 0; i < a->n_groups; i++) {
		const ga_group *g = &a->groups[i];
		if (!isfinite(g->total_ns))
			continue;
		all += g->total_ns;
		if (g->owner_kind && strcmp(g->owner_kind, "comm") == 0)
			comm += g->total_ns;
	}
	return all > 0 ? comm / all : NAN;
}

static void scaling(ga_comparison *c)
{
	c->scaling.cur_world = world_of(c->cur);
	c->scaling.base_world = world_of(c->base);
	c->scaling.shown = c->scaling.cur_world != c->scaling.base_world;
	c->scaling.cur_share = comm_share(c->cur);
	c->scaling.base_share = comm_share(c->base);
	c->scaling.change = c->scaling.cur_share - c->scaling.base_share;
}

void ga_compare(const ga_analysis *cur, const ga_analysis *base, const char *label,
                const ga_compare_opts *opts, ga_comparison *c)
{
	size_t nc = cur->n_groups, nb = base->n_groups, cap = 0;
	size_t *partner = ga_xmalloc((nc ? nc : 1) * sizeof(*partner));
	int *base_taken = ga_xcalloc(nb ? nb : 1, sizeof(*base_taken));
	ga_match *how = ga_xcalloc(nc ? nc : 1, sizeof(*how));
	ordered *co = launch_order(cur), *bo = launch_order(base);

	memset(c, 0, sizeof(*c));
	c->cur = cur;
	c->base = base;
	c->label = ga_xstrdup(label);
	c->threshold = opts ? opts->threshold : 0.10;
	c->severity = opts ? opts->severity : GA_SEV_HIGH;
	c->same_device = cur->profile && base->profile
	                 ? ga_same_device(&cur->profile->device, &base->profile->device) : 0;
	c->cur_total_ns = cur->total_ns;
	c->base_total_ns = base->total_ns;
	c->total_change = c->same_device && base->total_ns > 0 && isfinite(cur->total_ns)
	                  ? cur->total_ns / base->total_ns - 1 : NAN;
	scaling(c);

	for (size_t i = 0; i < nc; i++)
		partner[i] = GA_NO_GROUP;
	pair(cur, base, co, bo, partner, base_taken, how, GA_MATCH_SHAPE);
	pair(cur, base, co, bo, partner, base_taken, how, GA_MATCH_NAME);

	/* Paired kernels, in the new analysis's order. */
	for (size_t ci = 0; ci < nc; ci++) {
		if (partner[ci] == GA_NO_GROUP)
			continue;
		const ga_group *g = &cur->groups[ci], *b = &base->groups[partner[ci]];
		ga_kernel_change k = { .cur = ci, .base = partner[ci], .match = how[ci] };
		k.cur_ns = g->mean_ns;
		k.base_ns = b->mean_ns;
		k.change = NAN;
		if (c->same_device && isfinite(k.cur_ns) && isfinite(k.base_ns) && k.base_ns > 0)
			k.change = k.cur_ns / k.base_ns - 1;
		k.slower = isfinite(k.change) && k.change > c->threshold;
		k.class_changed = g->klass != GA_CLASS_NONE && b->klass != GA_CLASS_NONE &&
		                  g->klass != b->klass;
		findings_only_in(cur, g, base, b, c->severity, 1, &k.added, &k.n_added);
		findings_only_in(base, b, cur, g, c->severity, 0, &k.removed, &k.n_removed);
		check_predictions(c, &k);
		metric_changes(g, b, &k);
		k.regression = k.slower || any_regression(k.added, k.n_added);
		GA_PUSH(c->kernels, c->n_kernels, cap, k);
		c->n_matched++;
	}
	/* Only in the new profile: all of its findings are new. */
	for (size_t ci = 0; ci < nc; ci++) {
		if (partner[ci] != GA_NO_GROUP)
			continue;
		const ga_group *g = &cur->groups[ci];
		ga_kernel_change k = { .cur = ci, .base = GA_NO_GROUP, .match = GA_MATCH_NONE };
		k.cur_ns = g->mean_ns;
		k.base_ns = NAN;
		k.change = NAN;
		findings_only_in(cur, g, NULL, NULL, c->severity, 1, &k.added, &k.n_added);
		k.regression = any_regression(k.added, k.n_added);
		GA_PUSH(c->kernels, c->n_kernels, cap, k);
		c->n_only_cur++;
	}
	/* Only in the baseline. */
	for (size_t bi = 0; bi < nb; bi++) {
		if (base_taken[bi])
			continue;
		const ga_group *b = &base->groups[bi];
		ga_kernel_change k = { .cur = GA_NO_GROUP, .base = bi, .match = GA_MATCH_NONE };
		k.cur_ns = NAN;
		k.base_ns = b->mean_ns;
		k.change = NAN;
		findings_only_in(base, b, NULL, NULL, c->severity, 0, &k.removed, &k.n_removed);
		GA_PUSH(c->kernels, c->n_kernels, cap, k);
		c->n_only_base++;
	}
	for (size_t i = 0; i < c->n_kernels; i++) {
		c->n_regressions += c->kernels[i].regression != 0;
		c->n_slower += c->kernels[i].slower != 0;
	}
	compare_fingerprints(c);
	free(partner);
	free(base_taken);
	free(how);
	free(co);
	free(bo);
}

void ga_comparison_free(ga_comparison *c)
{
	for (size_t i = 0; i < c->n_kernels; i++) {
		free(c->kernels[i].added);
		free(c->kernels[i].removed);
		free(c->kernels[i].metrics);
	}
	free(c->kernels);
	free(c->label);
	free(c->unchanged);
	free(c->absent);
	memset(c, 0, sizeof(*c));
}

const ga_kernel_change *ga_comparison_for_group(const ga_comparison *c, size_t gi)
{
	if (!c)
		return NULL;
	for (size_t i = 0; i < c->n_kernels; i++)
		if (c->kernels[i].cur == gi)
			return &c->kernels[i];
	return NULL;
}

int ga_kernel_change_notable(const ga_comparison *c, const ga_kernel_change *k)
{
	if (k->match != GA_MATCH_SHAPE || k->regression || k->class_changed || k->n_added ||
	    k->n_removed)
		return 1;
	return isfinite(k->change) && fabs(k->change) > c->threshold;
}
