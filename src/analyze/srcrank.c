/* srcrank.c: a kernel's per-PC counts (profile/source.h) -> the source
 * lines to change, ranked.  See srcrank.h.
 *
 * Ranking.  Every kind of waste is measured in its own unit and compared as
 * a share of the kernel's total of that kind:
 *   uncoalesced   excess global sectors (sectors - ideal sectors)
 *   bank conflict excess shared wavefronts (wavefronts - ideal)
 *   inactive      idle lanes (warp size * instructions - thread instructions)
 *   branch        idle lanes of the divergent region that starts after a
 *                 line: in PC order, the instructions right after a
 *                 full-width instruction that run with fewer active lanes
 *                 (more than cuts->branch_drop fewer on average), up to the first one back
 *                 at the branch's width.  The region's idle lanes are
 *                 charged to the line of the last full-width instruction,
 *                 which is the branch (or its condition) in the source.
 *   stalls        PC samples of warps stalled at the line ("selected"
 *                 samples, where the warp issued, and "not_selected",
 *                 where it could have and another did, are no stall)
 * A line's score is its largest share.  Lines under cuts->min_share of
 * every kind of waste the SASS metrics measure are dropped, unless they hold
 * at least cuts->min_stall_share of the kernel's stall samples (the cut-offs
 * are the rules' classifier's); lines with a SASS-measured problem
 * come first (they say what to change), stall hotspots after them.
 * "Per request" divides by the warp-level instructions of the PCs that
 * touched that memory (a warp's load instruction is one request).  The
 * dominant stall reason of a line is its most sampled reason other than
 * those two, given as a share of all the line's samples. */
#include "srcrank.h"

#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../util/util.h"

static double z(double v) { return isfinite(v) ? v : 0.0; }

static int pc_cmp(const void *x, const void *y)
{
	const ga_source_pc *a = *(const ga_source_pc *const *)x, *b = *(const ga_source_pc *const *)y;
	return (a->pc > b->pc) - (a->pc < b->pc);
}

typedef struct {
	ga_source_line l;
	double inst, threads;
	double sect, sect_ideal, sect_req;
	double wf, wf_ideal, wf_req;
	double branch_waste, branch_inst_before, branch_threads_before;
	double region_inst, region_threads;
	double samples, stall;       /* PC samples: all, and the stalled ones */
	ga_stall *st;                /* by reason; reason borrowed from the PC */
	size_t nst;
	ga_stall *xo;                /* XU instructions by opcode (reason: the opcode) */
	size_t nxo;
	double lone, lone_movable;   /* lone waits on the line's loads; x movable */
} acc;

/* Lines with a problem the SASS metrics measured first, then stall
 * hotspots; by share within each. */
static int tier(const ga_source_line *l)
{
	return (l->issues & ~(unsigned)GA_SRC_STALL) ? 0 : 1;
}

static int score_cmp(const void *x, const void *y)
{
	const ga_source_line *a = x, *b = y;
	if (tier(a) != tier(b))
		return tier(a) - tier(b);
	if (a->score != b->score)
		return a->score < b->score ? 1 : -1;
	return (a->pc > b->pc) - (a->pc < b->pc);
}

/* The line of p among lines[0..nl), nl when new. */
static size_t find_line(const acc *lines, size_t nl, const ga_source_pc *p)
{
	size_t k;
	for (k = 0; k < nl; k++) {
		const ga_source_line *q = &lines[k].l;
		if (p->line > 0 && p->file ? q->file && q->line == p->line &&
		                                 strcmp(q->file, p->file) == 0
		                           : !q->file && q->pc == p->pc)
			break;
	}
	return k;
}

static void new_line(acc *a, const ga_source_pc *p)
{
	a->l.file = p->line > 0 && p->file ? p->file : NULL;
	a->l.line = a->l.file ? p->line : 0;
	a->l.pc = p->pc;
}

/* Add v to the entry of key in a list of (name, count) pairs. */
static void add_count(ga_stall **list, size_t *n, const char *key, double v)
{
	for (size_t k = 0; k < *n; k++)
		if (strcmp((*list)[k].reason, key) == 0) {
			(*list)[k].samples += v;
			return;
		}
	*list = ga_xrealloc(*list, (*n + 1) * sizeof(**list));
	(*list)[*n].reason = (char *)key;
	(*list)[*n].samples = v;
	(*n)++;
}

/* The work of one ranking: the PCs with instructions in PC order, the lines
 * they make up, and the kernel's total of each kind of waste. */
typedef struct {
	const ga_source_cuts *cuts;
	ga_source_pc *merged;     /* one record per PC */
	const ga_source_pc **ord; /* the merged PCs that executed, in PC order */
	size_t n;
	acc *lines;
	size_t nl;
	size_t *line_of;          /* [n]: the line of ord[i] */
	double tot_sect, tot_wf, tot_idle, tot_stall;
	double tot_inst, tot_xu;  /* warp instructions, of them on the XU (with opcodes) */
	double tot_lone;          /* waits on a lone load in flight */
	int movable_known;
} ranking;


/* CUPTI hands one record per (PC, metric): merge records of one PC
 * (profiles recorded before the collector merged them have these), and
 * keep the PCs that executed, in PC order. */
static void merge_pcs(const ga_source *s, ranking *r)
{
	size_t nm = 0, n_sampled = 0;

	r->ord = ga_xcalloc(s->n_pcs, sizeof(*r->ord));
	for (size_t i = 0; i < s->n_pcs; i++)
		r->ord[i] = &s->pcs[i];
	qsort(r->ord, s->n_pcs, sizeof(*r->ord), pc_cmp);
	r->merged = ga_xcalloc(s->n_pcs, sizeof(*r->merged));
	for (size_t i = 0; i < s->n_pcs; i++) {
		const ga_source_pc *p = r->ord[i];
		if (nm && r->merged[nm - 1].pc == p->pc)
			ga_source_pc_add(&r->merged[nm - 1], p);
		else
			r->merged[nm++] = *p;
	}
	for (size_t i = 0; i < nm; i++)
		if (z(r->merged[i].inst) > 0)
			r->ord[r->n++] = &r->merged[i];
	for (size_t i = 0; i < s->n_pcs; i++)
		n_sampled += s->pcs[i].n_stalls > 0;
	r->lines = ga_xcalloc(r->n + n_sampled ? r->n + n_sampled : 1, sizeof(*r->lines));
	r->line_of = ga_xcalloc(r->n ? r->n : 1, sizeof(*r->line_of));
}

/* The SASS counts of each executed PC, added to its line. */
static void count_lines(ranking *r)
{
	double warp = r->cuts->warp_size;

	for (size_t i = 0; i < r->n; i++) {
		const ga_source_pc *p = r->ord[i];
		size_t k = find_line(r->lines, r->nl, p);
		if (k == r->nl)
			new_line(&r->lines[r->nl++], p);
		r->line_of[i] = k;
		acc *a = &r->lines[k];
		if (!a->l.text && p->text)
			a->l.text = p->text;
		a->inst += z(p->inst);
		a->threads += z(p->threads);
		if (z(p->sectors) > 0 || z(p->sectors_ideal) > 0) {
			a->sect += z(p->sectors);
			a->sect_ideal += z(p->sectors_ideal);
			a->sect_req += z(p->inst);
			if (z(p->sectors) > z(p->sectors_ideal))
				r->tot_sect += z(p->sectors) - z(p->sectors_ideal);
		}
		if (z(p->wavefronts) > 0 || z(p->wavefronts_ideal) > 0) {
			a->wf += z(p->wavefronts);
			a->wf_ideal += z(p->wavefronts_ideal);
			a->wf_req += z(p->inst);
			if (z(p->wavefronts) > z(p->wavefronts_ideal))
				r->tot_wf += z(p->wavefronts) - z(p->wavefronts_ideal);
		}
		if (isfinite(p->threads) && warp * p->inst > p->threads)
			r->tot_idle += warp * p->inst - p->threads;
		r->tot_inst += z(p->inst);
		if (p->op && ga_source_xu_opcode(p->op)) {
			add_count(&a->xo, &a->nxo, p->op, z(p->inst));
			r->tot_xu += z(p->inst);
		}
	}
}

/* PC samples, from every record (the merge above keeps counts, not
 * stalls); a sampled PC the SASS metrics did not see gets a line of its
 * own. */
static void count_samples(const ga_source *s, ranking *r)
{
	for (size_t i = 0; i < s->n_pcs; i++) {
		const ga_source_pc *p = &s->pcs[i];
		if (p->n_stalls == 0)
			continue;
		size_t k = find_line(r->lines, r->nl, p);
		if (k == r->nl)
			new_line(&r->lines[r->nl++], p);
		acc *a = &r->lines[k];
		if (!a->l.text && p->text)
			a->l.text = p->text;
		for (size_t j = 0; j < p->n_stalls; j++) {
			double v = p->stalls[j].samples;
			if (!isfinite(v) || v <= 0)
				continue;
			a->samples += v;
			add_count(&a->st, &a->nst, p->stalls[j].reason, v);
			if (ga_stall_is_stall(p->stalls[j].reason)) {
				a->stall += v;
				r->tot_stall += v;
			}
		}
	}
}

/* Divergent regions in PC order, each charged to the line before it. */
static void find_branches(ranking *r)
{
	double drop = r->cuts->branch_drop;

	for (size_t i = 0; i + 1 < r->n; i++) {
		const ga_source_pc *p = r->ord[i];
		if (!isfinite(p->threads))
			continue;
		double w = p->threads / p->inst;
		size_t j = i + 1;
		double waste = 0, rinst = 0, rthr = 0;
		while (j < r->n && isfinite(r->ord[j]->threads) &&
		       r->ord[j]->threads / r->ord[j]->inst < w - drop) {
			waste += w * r->ord[j]->inst - r->ord[j]->threads;
			rinst += r->ord[j]->inst;
			rthr += r->ord[j]->threads;
			j++;
		}
		if (j == i + 1)
			continue;
		acc *a = &r->lines[r->line_of[i]];
		if (waste > a->branch_waste) {
			a->branch_waste = waste;
			a->branch_inst_before = p->inst;
			a->branch_threads_before = p->threads;
			a->region_inst = rinst;
			a->region_threads = rthr;
		}
		i = j - 1;
	}
}

/* The waits on a lone load (scoreboards), charged to the load's line. */
static void count_lone_loads(const ga_source *s, ranking *r)
{
	double *lone = ga_xcalloc(s->n_pcs, sizeof(*lone));
	double *movable = ga_xcalloc(s->n_pcs, sizeof(*movable));
	ga_load_waits w;

	if (ga_source_load_waits_at(s, &w, lone, movable) == 0) {
		r->tot_lone = w.lone;
		r->movable_known = w.movable_known;
		for (size_t i = 0; i < s->n_pcs; i++) {
			size_t k = lone[i] > 0 ? find_line(r->lines, r->nl, &s->pcs[i]) : r->nl;
			if (k < r->nl) {
				r->lines[k].lone += lone[i];
				r->lines[k].lone_movable += movable[i];
			}
		}
	}
	free(lone);
	free(movable);
}

/* "; " and one more part of a line's description. */
static void describe(ga_source_line *l, size_t *len, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));
static void describe(ga_source_line *l, size_t *len, const char *fmt, ...)
{
	va_list ap;
	if (*len < sizeof(l->desc))
		*len += (size_t)snprintf(l->desc + *len, sizeof(l->desc) - *len, "%s",
		                         *len ? "; " : "");
	if (*len < sizeof(l->desc)) {
		va_start(ap, fmt);
		*len += (size_t)vsnprintf(l->desc + *len, sizeof(l->desc) - *len, fmt, ap);
		va_end(ap);
	}
}

/* Flag issue on l when share reaches cut. */
static int flag(ga_source_line *l, unsigned issue, double share, double cut)
{
	if (!(share >= cut))
		return 0;
	l->issues |= issue;
	if (share > l->score)
		l->score = share;
	return 1;
}

/* The stall side of a line: its share of the stall samples, its dominant
 * reason. */
static void judge_stalls(const ranking *r, acc *a, size_t *len)
{
	ga_source_line *l = &a->l;
	const ga_stall *dom = NULL;

	if (!(r->tot_stall > 0 && a->stall > 0))
		return;
	for (size_t j = 0; j < a->nst; j++)
		if (ga_stall_is_stall(a->st[j].reason) && (!dom || a->st[j].samples > dom->samples))
			dom = &a->st[j];
	l->stall_share = a->stall / r->tot_stall;
	l->stall_reason = dom->reason;
	l->stall_reason_samples = dom->samples;
	flag(l, GA_SRC_STALL, l->stall_share, r->cuts->min_stall_share);
	describe(l, len, "stalls: %s %.0f%% of the line's %.0f samples", dom->reason,
	         100 * dom->samples / a->samples, a->samples);
}

static int count_desc(const void *x, const void *y)
{
	const ga_stall *a = x, *b = y;
	if (a->samples != b->samples)
		return a->samples < b->samples ? 1 : -1;
	return strcmp(a->reason, b->reason);
}

/* The XU side of a line: its share of the kernel's XU instructions, in a
 * kernel where they matter, and its opcodes, most executed first. */
static void judge_xu(const ranking *r, acc *a, size_t *len)
{
	ga_source_line *l = &a->l;
	double xu = 0;

	for (size_t k = 0; k < a->nxo; k++)
		xu += a->xo[k].samples;
	l->xu_inst = xu;
	if (!(r->tot_xu > 0 && xu > 0 && r->tot_xu >= GA_SOURCE_XU_MIN_INST_SHARE * r->tot_inst) ||
	    !flag(l, GA_SRC_XU, xu / r->tot_xu, r->cuts->min_share))
		return;
	qsort(a->xo, a->nxo, sizeof(*a->xo), count_desc);
	describe(l, len, "%.3g million XU instructions:", xu / 1e6);
	for (size_t k = 0; k < a->nxo && k < 3 && *len < sizeof(l->desc); k++)
		*len += (size_t)snprintf(l->desc + *len, sizeof(l->desc) - *len, "%s %s %.0f%%",
		                         k ? "," : "", a->xo[k].reason, 100 * a->xo[k].samples / xu);
	if (a->nxo > 3 && *len < sizeof(l->desc))
		*len += (size_t)snprintf(l->desc + *len, sizeof(l->desc) - *len, ", ...");
}

/* The lone-load side of a line: its share of the waits on a lone load,
 * and how far its loads could move up. */
static void judge_lone(const ranking *r, acc *a, size_t *len)
{
	ga_source_line *l = &a->l;

	l->lone_waits = a->lone;
	l->lone_movable = a->lone > 0 && r->movable_known ? a->lone_movable / a->lone : NAN;
	if (!(r->tot_lone > 0 && a->lone > 0) ||
	    !flag(l, GA_SRC_LONE_LOAD, a->lone / r->tot_lone, r->cuts->min_share))
		return;
	describe(l, len, "load waited on alone (%.0f%% of the kernel's lone waits)",
	         100 * a->lone / r->tot_lone);
	if (isfinite(l->lone_movable))
		describe(l, len, "could issue %.1f instructions earlier in its block",
		         l->lone_movable);
}

/* What is wrong at one line, and how much of the kernel's waste it holds. */
static void judge(const ranking *r, acc *a)
{
	const ga_source_cuts *c = r->cuts;
	ga_source_line *l = &a->l;
	double warp = c->warp_size;
	size_t len = 0;

	l->sectors_per_req = a->sect_req > 0 ? a->sect / a->sect_req : NAN;
	l->sectors_ideal_per_req = a->sect_req > 0 ? a->sect_ideal / a->sect_req : NAN;
	l->wavefronts_per_req = a->wf_req > 0 ? a->wf / a->wf_req : NAN;
	l->wavefronts_ideal_per_req = a->wf_req > 0 ? a->wf_ideal / a->wf_req : NAN;
	l->active_threads = a->inst > 0 && a->threads > 0 ? a->threads / a->inst : NAN;
	l->branch_before = NAN;
	l->branch_after = NAN;
	l->desc[0] = '\0';
	l->samples = a->samples;
	l->stall_samples = a->stall;
	if (r->tot_sect > 0 && a->sect > a->sect_ideal &&
	    flag(l, GA_SRC_UNCOALESCED, (a->sect - a->sect_ideal) / r->tot_sect, c->min_share))
		describe(l, &len, "%.1f sectors/request (ideal %.1f)", l->sectors_per_req,
		         l->sectors_ideal_per_req);
	if (r->tot_wf > 0 && a->wf > a->wf_ideal &&
	    flag(l, GA_SRC_BANK_CONFLICT, (a->wf - a->wf_ideal) / r->tot_wf, c->min_share))
		describe(l, &len, "%.1f shared wavefronts/request (ideal %.1f): bank conflicts",
		         l->wavefronts_per_req, l->wavefronts_ideal_per_req);
	if (r->tot_idle > 0 && a->branch_waste > 0 &&
	    flag(l, GA_SRC_BRANCH, a->branch_waste / r->tot_idle, c->min_share)) {
		l->branch_before = a->branch_threads_before / a->branch_inst_before;
		l->branch_after = a->region_threads / a->region_inst;
		describe(l, &len, "divergent branch: %.1f threads arrive, %.1f of %g active after it",
		         l->branch_before, l->branch_after, warp);
	}
	if (r->tot_idle > 0 && isfinite(l->active_threads) && a->inst * warp > a->threads &&
	    l->active_threads < warp - c->branch_drop &&
	    flag(l, GA_SRC_INACTIVE, (a->inst * warp - a->threads) / r->tot_idle, c->min_share))
		describe(l, &len, "%.1f of %g threads active", l->active_threads, warp);
	judge_xu(r, a, &len);
	judge_lone(r, a, &len);
	judge_stalls(r, a, &len);
}

size_t ga_source_rank(const ga_source *s, const ga_source_cuts *cuts, ga_source_line *out,
                      size_t max)
{
	ranking r = { .cuts = cuts };
	size_t nout = 0;

	if (!s || s->n_pcs == 0 || max == 0)
		return 0;
	merge_pcs(s, &r);
	count_lines(&r);
	count_samples(s, &r);
	count_lone_loads(s, &r);
	find_branches(&r);
	for (size_t k = 0; k < r.nl; k++)
		judge(&r, &r.lines[k]);
	ga_source_line *tmp = ga_xcalloc(r.nl ? r.nl : 1, sizeof(*tmp));
	for (size_t k = 0; k < r.nl; k++)
		if (r.lines[k].l.issues)
			tmp[nout++] = r.lines[k].l;
	qsort(tmp, nout, sizeof(*tmp), score_cmp);
	if (nout > max)
		nout = max;
	memcpy(out, tmp, nout * sizeof(*out));
	free(tmp);
	for (size_t k = 0; k < r.nl; k++) {
		free(r.lines[k].st);
		free(r.lines[k].xo);
	}
	free(r.lines);
	free(r.line_of);
	free(r.ord);
	free(r.merged);
	return nout;
}
