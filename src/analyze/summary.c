/* summary.c: the parts of the analysis computed once the groups are
 * classified and the findings ranked: counts, the processes, the roofline,
 * each kernel's source lines; and the cut-offs they use, read from the
 * classifier.  See analyze.h. */
#include "internal.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

/* One classifier constant into *out, as a fraction when scale is 100. */
static int read_cut(const ga_ruleset *rs, const char *name, const char *what, double scale,
                    double *out, ga_error *err)
{
	double v = ga_classifier_value(rs, name);
	if (isnan(v))
		return ga_fail(err, GA_ERR_RULES, "%s: the classifier does not define %s as a "
		               "constant under metrics: (%s)",
		               rs->classifier.path ? rs->classifier.path : "classify.yaml", name, what);
	*out = v / scale;
	return 0;
}

int ga_cuts_read(const ga_ruleset *rs, ga_cuts *cuts, ga_error *err)
{
	memset(cuts, 0, sizeof(*cuts));
	cuts->source.warp_size = NAN;
	if (read_cut(rs, GA_CUT_LATENCY_LINE, "the roofline's line for latency-bound kernels",
	             100.0, &cuts->roof.latency_frac, err) ||
	    read_cut(rs, GA_CUT_TENSOR_MIN, "the roofline's least tensor-pipe utilisation",
	             1.0, &cuts->roof.tensor_min_pct, err) ||
	    read_cut(rs, GA_CUT_DRAM_MIN, "the roofline's least DRAM traffic to place a kernel "
	             "by its DRAM intensity", 100.0, &cuts->roof.dram_min_frac, err) ||
	    read_cut(rs, GA_CUT_SOURCE_WASTE, "the source ranking's least share of a waste",
	             100.0, &cuts->source.min_share, err) ||
	    read_cut(rs, GA_CUT_SOURCE_STALL, "the source ranking's least share of stalls",
	             100.0, &cuts->source.min_stall_share, err) ||
	    read_cut(rs, GA_CUT_BRANCH_DROP, "the source ranking's least drop of active lanes",
	             1.0, &cuts->source.branch_drop, err))
		return -1;
	return 0;
}

static void count(ga_analysis *a)
{
	const ga_profile *p = a->profile;
	long loop = p ? p->collection.loop_replay_launches : 0;

	for (size_t i = 0; i < a->n_groups; i++) {
		const ga_group *g = &a->groups[i];
		a->n_launches += g->n_launches;
		a->measured.at_mean += (long)g->unprofiled;
		a->measured.timeline += g->timeline_launches;
		if (g->klass >= 0 && g->klass < GA_CLASS__COUNT)
			a->n_class[g->klass]++;
	}
	/* Every profiled launch is one or the other (a profile cut to some
	 * kernels keeps the process's loop count: no more than it has). */
	a->measured.loop_replay = loop < (long)a->n_launches ? loop : (long)a->n_launches;
	a->measured.kernel_replay = (long)a->n_launches - a->measured.loop_replay;
	a->measured.graph_launches = p ? p->collection.graph_launches : 0;
}

/* The processes in the order of their first launch, with their kernels'
 * GPU time. */
static void processes(ga_analysis *a)
{
	const ga_profile *p = a->profile;
	size_t cap = 0;

	for (size_t i = 0; p && i < p->n_launches; i++) {
		int pid = p->launches[i].pid;
		size_t k = 0;
		while (k < a->n_processes && a->processes[k].pid != pid)
			k++;
		if (k == a->n_processes) {
			ga_process np = { .pid = pid };
			GA_PUSH(a->processes, a->n_processes, cap, np);
		}
		a->processes[k].n_launches++;
	}
	/* processes the timeline saw and the counters did not, after those */
	for (size_t i = 0; p && i < p->n_timelines; i++) {
		size_t k = 0;
		while (k < a->n_processes && a->processes[k].pid != p->timelines[i].pid)
			k++;
		if (k == a->n_processes) {
			ga_process np = { .pid = p->timelines[i].pid };
			GA_PUSH(a->processes, a->n_processes, cap, np);
		}
	}
	for (size_t gi = 0; gi < a->n_groups; gi++) {
		const ga_group *g = &a->groups[gi];
		for (size_t k = 0; k < a->n_processes; k++) {
			if (a->processes[k].pid != g->pid)
				continue;
			a->processes[k].n_kernels++;
			if (isfinite(g->total_ns))
				a->processes[k].total_ns += g->total_ns;
			break;
		}
	}
	for (size_t k = 0; k < a->n_processes; k++)
		a->processes[k].share = a->total_ns > 0 ? a->processes[k].total_ns / a->total_ns
		                                        : NAN;
}

/* The source-level data measured for a group (same mangled name and pid;
 * the same grid and block preferred), or NULL. */
const ga_source *ga_group_source(const ga_profile *p, const ga_group *g)
{
	const ga_source *loose = NULL;
	if (!p || !g->mangled)
		return NULL;
	for (size_t i = 0; i < p->n_sources; i++) {
		const ga_source *s = &p->sources[i];
		if (s->pid != g->pid || !s->mangled || strcmp(s->mangled, g->mangled) != 0)
			continue;
		if (memcmp(s->grid, g->grid, sizeof(s->grid)) == 0 &&
		    memcmp(s->block, g->block, sizeof(s->block)) == 0)
			return s;
		if (!loose)
			loose = s;
	}
	return loose;
}

/* Each group's source lines, ranked.  None for a library's kernel (an
 * owner that is not editable) unless --source asked for them: its lines
 * are not the user's to change, even where a profile holds them (one
 * recorded before the collector stopped measuring them, or whose module
 * was not known, and a rule's trigger named the kernel by its name). */
static void source_lines(ga_analysis *a, const ga_source_cuts *cuts)
{
	for (size_t gi = 0; gi < a->n_groups; gi++) {
		ga_group *g = &a->groups[gi];
		const ga_source *src = ga_group_source(a->profile, g);
		if (!src || (g->owner && !g->owner->editable &&
		             !(src->trigger && strcmp(src->trigger, "--source") == 0)))
			continue;
		g->source = src;
		for (size_t i = 0; i < src->n_pcs && !g->source_sass; i++)
			g->source_sass = isfinite(src->pcs[i].inst);
		g->source_sampled = src->samples_total > 0 || src->sample_period > 0;
		g->lines = ga_xcalloc(GA_SOURCE_TOP_LINES, sizeof(*g->lines));
		g->n_lines = ga_source_rank(src, cuts, g->lines, GA_SOURCE_TOP_LINES);
	}
}

/* A demangled name without a leading "void ", its template arguments and
 * its parameter list ("(anonymous namespace)" kept): what the shortest
 * form of the name shows.  malloc'd. */
static char *bare_name(const char *name)
{
	static const char anon[] = "(anonymous namespace)";
	size_t n = strlen(name), o = 0;
	char *s = ga_xmalloc(n + 1);
	int depth = 0;

	if (strncmp(name, "void ", 5) == 0)
		name += 5;
	for (const char *c = name; *c; c++) {
		if (*c == '(' && depth == 0 && strncmp(c, anon, sizeof(anon) - 1) != 0)
			break;
		if (*c == '<')
			depth++;
		else if (*c == '>' && depth > 0)
			depth--;
		else if (depth == 0)
			s[o++] = *c;
	}
	s[o] = '\0';
	return s;
}

typedef struct {
	char *bare;
	int pid;                  /* 0 unless kernels are told apart per rank */
	size_t group;
} bare_ref;

static int bare_cmp(const void *x, const void *y)
{
	const bare_ref *a = x, *b = y;
	int c = strcmp(a->bare, b->bare);
	if (c)
		return c;
	if (a->pid != b->pid)
		return a->pid < b->pid ? -1 : 1;
	return (a->group > b->group) - (a->group < b->group);
}

/* Whether the profile holds two ranks or more (procinfo.h): every rank
 * runs the same kernels, so a kernel is told apart from the others of its
 * own rank, not from its copies on the other ranks. */
static int per_rank(const ga_profile *p)
{
	size_t n = 0;
	for (size_t i = 0; p && i < p->n_procs; i++)
		n += p->procs[i].rank >= 0;
	return n >= 2;
}

/* name_index and name_peers: sorted by bare name (and process, of ranks),
 * then by group index (the groups are in time order already). */
static void name_peers(ga_analysis *a)
{
	size_t n = a->n_groups;
	bare_ref *v = ga_xcalloc(n ? n : 1, sizeof(*v));
	int by_pid = per_rank(a->profile);

	for (size_t i = 0; i < n; i++) {
		const ga_group *g = &a->groups[i];
		v[i].bare = bare_name(g->name ? g->name : g->mangled ? g->mangled : "?");
		v[i].pid = by_pid ? g->pid : 0;
		v[i].group = i;
	}
	qsort(v, n, sizeof(*v), bare_cmp);
	for (size_t i = 0, run; i < n; i += run) {
		for (run = 1; i + run < n && strcmp(v[i].bare, v[i + run].bare) == 0 &&
		              v[i].pid == v[i + run].pid; run++)
			;
		for (size_t k = 0; k < run; k++) {
			a->groups[v[i + k].group].name_index = k + 1;
			a->groups[v[i + k].group].name_peers = run;
		}
	}
	for (size_t i = 0; i < n; i++)
		free(v[i].bare);
	free(v);
}

static int action_cmp(const void *x, const void *y)
{
	const ga_action *a = x, *b = y;
	if (a->saving != b->saving)
		return a->saving > b->saving ? -1 : 1;
	return strcmp(a->rule->id, b->rule->id);
}

/* The findings of rules with owners: gathered per rule (they come ranked,
 * so each action's are too), and the share of GPU time the user's own
 * kernels do not hold. */
static void actions(ga_analysis *a)
{
	size_t cap = 0;

	for (size_t fi = 0; fi < a->n_findings; fi++) {
		const ga_finding *f = &a->findings[fi];
		size_t k = 0;
		if (!f->rule || !f->rule->n_owners)
			continue;
		while (k < a->n_actions && a->actions[k].rule != f->rule)
			k++;
		if (k == a->n_actions) {
			ga_action na = { .rule = f->rule };
			GA_PUSH(a->actions, a->n_actions, cap, na);
		}
		ga_action *ac = &a->actions[k];
		ac->findings = ga_xrealloc(ac->findings, (ac->n_findings + 1) * sizeof(size_t));
		ac->findings[ac->n_findings++] = fi;
		ac->saving += f->saving;
		/* A rule fires once per kernel: its kernels are distinct. */
		if (isfinite(a->groups[f->group].share))
			ac->share += a->groups[f->group].share;
	}
	if (a->n_actions)
		qsort(a->actions, a->n_actions, sizeof(*a->actions), action_cmp);
	for (size_t gi = 0; gi < a->n_groups; gi++) {
		const ga_group *g = &a->groups[gi];
		if (g->owner && !g->owner->editable && isfinite(g->share))
			a->library_share += g->share;
	}
	a->framework_first = a->n_actions > 0 && a->library_share > 0.5;
}

void ga_summarize(ga_analysis *a, const ga_cuts *cuts)
{
	ga_source_cuts sc = cuts->source;

	count(a);
	name_peers(a);
	processes(a);
	ga_roofline_compute(a, &cuts->roof, &a->roofline);
	if (a->profile && a->profile->device.warp_size > 0)
		sc.warp_size = a->profile->device.warp_size;
	source_lines(a, &sc);
	ga_locate_findings(a);
	actions(a);
}
