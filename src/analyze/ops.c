/* ops.c: operations from NVTX ranges.  Each launch's innermost range names
 * its operation (ga_launch.nvtx, "train_step/aten::linear/aten::addmm" is
 * in aten::addmm); an operation's time is that of its launches, the
 * unprofiled ones at the mean of their kernel's unprofiled launches (as the
 * timeline timed them, else the profiled ones' mean).  A kernel used by
 * several operations (an elementwise kernel under aten::add and aten::mul)
 * is split by the time it spent in each, and so are its findings' savings:
 * an operation's top finding is the one that saves most of its own time. */
#include "internal.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

typedef struct {
	char *path;
	double time_ns;
} path_time;

typedef struct {
	ga_op op;
	size_t cap_kernels;
	path_time *paths;
	size_t n_paths, cap_paths;
} op_acc;

typedef struct {
	op_acc *v;
	size_t n, cap;
	ga_map by_name;           /* op name -> index into v; keys are v[i].op.name */
} op_table;

/* The operation of a path: its last range. */
static const char *op_name(const char *path)
{
	const char *slash = strrchr(path, '/');
	return slash ? slash + 1 : path;
}

static void add(op_table *t, const char *path, size_t group, double ns, long launches)
{
	const char *name = op_name(path);
	long i = ga_strmap_get(&t->by_name, name);
	op_acc *o;
	size_t k;

	if (i < 0) {
		op_acc fresh = {.op = {.name = ga_xstrdup(name), .top_finding = -1}};
		GA_PUSH(t->v, t->n, t->cap, fresh);
		i = (long)t->n - 1;
		/* v may have moved: the map keys on the names, which did not. */
		ga_strmap_put(&t->by_name, t->v[i].op.name, (size_t)i);
	}
	o = &t->v[i];
	o->op.time_ns += ns;
	o->op.launches += launches;
	for (k = 0; k < o->op.n_kernels && o->op.kernels[k].group != group; k++)
		;
	if (k == o->op.n_kernels) {
		ga_op_kernel row = {group, 0, 0};
		GA_PUSH(o->op.kernels, o->op.n_kernels, o->cap_kernels, row);
	}
	o->op.kernels[k].time_ns += ns;
	for (k = 0; k < o->n_paths && strcmp(o->paths[k].path, path) != 0; k++)
		;
	if (k == o->n_paths) {
		path_time row = {ga_xstrdup(path), 0};
		GA_PUSH(o->paths, o->n_paths, o->cap_paths, row);
	}
	o->paths[k].time_ns += ns;
}

static char *kernel_key(int pid, const char *mangled, const unsigned g[3], const unsigned b[3])
{
	return ga_xasprintf("%d|%s|%u,%u,%u|%u,%u,%u", pid, mangled, g[0], g[1], g[2], b[0], b[1],
	                    b[2]);
}

/* Every launch with a path into t: the profiled ones by their group, the
 * unprofiled ones by their kernel's key. */
static void gather(const ga_analysis *a, op_table *t)
{
	const ga_profile *p = a->profile;
	ga_map groups = {0};
	char **keys = ga_xcalloc(a->n_groups ? a->n_groups : 1, sizeof(*keys));

	for (size_t gi = 0; gi < a->n_groups; gi++) {
		const ga_group *g = &a->groups[gi];
		for (size_t k = 0; k < g->n_launches; k++) {
			const ga_launch *l = &p->launches[g->launches[k]];
			double d = l->duration_ns;
			if (l->nvtx)
				add(t, l->nvtx, gi, isfinite(d) && d > 0 ? d : 0, 1);
		}
		keys[gi] = kernel_key(g->pid, g->mangled, g->grid, g->block);
		ga_strmap_put(&groups, keys[gi], gi);
	}
	for (size_t i = 0; i < p->n_unprofiled; i++) {
		const ga_unprofiled *u = &p->unprofiled[i];
		char *key;
		long gi;
		if (!u->nvtx)
			continue;
		key = kernel_key(u->pid, u->mangled, u->grid, u->block);
		gi = ga_strmap_get(&groups, key);
		free(key);
		if (gi >= 0) {
			/* a launch not profiled costs the kernel's duration */
			double mean = a->groups[gi].mean_ns;
			add(t, u->nvtx, (size_t)gi, isfinite(mean) ? mean * (double)u->launches : 0,
			    u->launches);
		}
	}
	for (size_t gi = 0; gi < a->n_groups; gi++)
		free(keys[gi]);
	free(keys);
	ga_map_free(&groups);
}

static int kernel_cmp(const void *x, const void *y)
{
	const ga_op_kernel *a = x, *b = y;
	if (a->time_ns != b->time_ns)
		return a->time_ns > b->time_ns ? -1 : 1;
	return a->group < b->group ? -1 : a->group > b->group;
}

static int op_cmp(const void *x, const void *y)
{
	const ga_op *a = x, *b = y;
	if (a->time_ns != b->time_ns)
		return a->time_ns > b->time_ns ? -1 : 1;
	return strcmp(a->name, b->name);
}

/* Shares, fractions, the main path and the top finding of one operation;
 * its paths are freed. */
static void finish(const ga_analysis *a, op_acc *o)
{
	ga_op *op = &o->op;
	size_t best = 0;

	op->share = a->total_ns > 0 && isfinite(a->total_ns) ? op->time_ns / a->total_ns : NAN;
	if (op->n_kernels)
		qsort(op->kernels, op->n_kernels, sizeof(*op->kernels), kernel_cmp);
	for (size_t k = 0; k < op->n_kernels; k++) {
		ga_op_kernel *row = &op->kernels[k];
		const ga_group *g = &a->groups[row->group];
		row->fraction = g->total_ns > 0 ? fmin(1.0, row->time_ns / g->total_ns) : 0;
		for (size_t f = 0; f < g->n_findings; f++) {
			double s = a->findings[g->findings[f]].saving * row->fraction;
			if (isfinite(s) && (op->top_finding < 0 || s > op->top_saving)) {
				op->top_finding = (long)g->findings[f];
				op->top_saving = s;
			}
		}
	}
	for (size_t k = 1; k < o->n_paths; k++)
		if (o->paths[k].time_ns > o->paths[best].time_ns)
			best = k;
	op->path = o->n_paths ? ga_xstrdup(o->paths[best].path) : NULL;
	for (size_t k = 0; k < o->n_paths; k++)
		free(o->paths[k].path);
	free(o->paths);
}

/* Whether an NVTX path runs scaled_dot_product_attention's math fallback
 * (PyTorch docs, torch.nn.functional.scaled_dot_product_attention): a
 * range of the math operation, or a launch right under the SDPA operation
 * that none of its fused backends (flash, memory-efficient, cuDNN) took.
 * PyTorch's operator names, as emit_nvtx() writes them. */
static int sdpa_math_path(const char *path)
{
	static const char sdpa[] = "aten::scaled_dot_product_attention/";
	static const char *const fused[] = {
		"aten::_scaled_dot_product_flash_attention",
		"aten::_scaled_dot_product_efficient_attention",
		"aten::_scaled_dot_product_cudnn_attention",
		"aten::_scaled_dot_product_fused_attention_overrideable",
	};
	const char *in;

	if (strstr(path, "aten::_scaled_dot_product_attention_math"))
		return 1;
	if (!(in = strstr(path, sdpa)))
		return 0;
	in += sizeof(sdpa) - 1;
	for (size_t i = 0; i < GA_ARRAY_LEN(fused); i++)
		if (ga_str_has_prefix(in, fused[i]))
			return 0;
	return 1;
}

double ga_sdpa_math_share(const ga_profile *p, const ga_group *g)
{
	double in = 0, all = 0;

	for (size_t k = 0; k < g->n_launches; k++) {
		const ga_launch *l = &p->launches[g->launches[k]];
		double d = isfinite(l->duration_ns) && l->duration_ns > 0 ? l->duration_ns : 1;
		all += d;
		if (l->nvtx && sdpa_math_path(l->nvtx))
			in += d;
	}
	return all > 0 ? in / all : 0;
}

void ga_group_ops(ga_analysis *a, int nvtx)
{
	const ga_profile *p = a->profile;
	op_table t = {0};
	int any = 0;

	if (nvtx < 0 || !p)
		return;
	for (size_t i = 0; i < p->n_launches && !any; i++)
		any = p->launches[i].nvtx != NULL;
	for (size_t i = 0; i < p->n_unprofiled && !any; i++)
		any = p->unprofiled[i].nvtx != NULL;
	if (!any && nvtx == 0)
		return;
	a->ops_shown = 1;
	gather(a, &t);
	a->ops = t.n ? ga_xmalloc(t.n * sizeof(*a->ops)) : NULL;
	for (size_t i = 0; i < t.n; i++) {
		finish(a, &t.v[i]);
		a->ops[i] = t.v[i].op;
	}
	a->n_ops = t.n;
	if (a->n_ops)   /* qsort's array must not be NULL, even for 0 items */
		qsort(a->ops, a->n_ops, sizeof(*a->ops), op_cmp);
	ga_map_free(&t.by_name);
	free(t.v);
}

static int action_op_cmp(const void *x, const void *y)
{
	const ga_action_op *a = x, *b = y;
	if (a->time_ns != b->time_ns)
		return a->time_ns > b->time_ns ? -1 : 1;
	return (a->op > b->op) - (a->op < b->op);
}

/* An action's time in operation op: that of the kernels it fired on. */
static double action_time_in(const ga_analysis *a, const ga_action *ac, const ga_op *op)
{
	double t = 0;

	for (size_t k = 0; k < op->n_kernels; k++)
		for (size_t f = 0; f < ac->n_findings; f++)
			if (a->findings[ac->findings[f]].group == op->kernels[k].group)
				t += op->kernels[k].time_ns;
	return t;
}

void ga_action_ops(ga_analysis *a)
{
	for (size_t i = 0; i < a->n_actions; i++) {
		ga_action *ac = &a->actions[i];
		size_t cap = 0;
		for (size_t o = 0; o < a->n_ops; o++) {
			ga_action_op row = { o, action_time_in(a, ac, &a->ops[o]) };
			if (row.time_ns > 0)
				GA_PUSH(ac->ops, ac->n_ops, cap, row);
		}
		if (ac->n_ops)
			qsort(ac->ops, ac->n_ops, sizeof(*ac->ops), action_op_cmp);
	}
}

void ga_ops_free(ga_analysis *a)
{
	for (size_t i = 0; i < a->n_ops; i++) {
		free(a->ops[i].name);
		free(a->ops[i].path);
		free(a->ops[i].kernels);
	}
	free(a->ops);
	a->ops = NULL;
	a->n_ops = 0;
}
