/* source.c: per-PC SASS counts of a kernel -> the source lines to change.
 * See source.h.
 *
 * Ranking.  Every kind of waste is measured in its own unit and compared as
 * a share of the kernel's total of that kind:
 *   uncoalesced   excess global sectors (sectors - ideal sectors)
 *   bank conflict excess shared wavefronts (wavefronts - ideal)
 *   inactive      idle lanes (32 * instructions - thread instructions)
 *   branch        idle lanes of the divergent region that starts after a
 *                 line: in PC order, the instructions right after a
 *                 full-width instruction that run with fewer active lanes
 *                 (more than 2 fewer on average), up to the first one back
 *                 at the branch's width.  The region's idle lanes are
 *                 charged to the line of the last full-width instruction,
 *                 which is the branch (or its condition) in the source.
 *   stalls        PC samples of warps stalled at the line ("selected"
 *                 samples, where the warp issued, and "not_selected",
 *                 where it could have and another did, are no stall)
 * A line's score is its largest share.  Lines under 2 % of every kind of
 * waste the SASS metrics measure are dropped, unless they hold at least
 * 10 % of the kernel's stall samples; lines with a SASS-measured problem
 * come first (they say what to change), stall hotspots after them.
 * "Per request" divides by the warp-level instructions of the PCs that
 * touched that memory (a warp's load instruction is one request).  The
 * dominant stall reason of a line is its most sampled reason other than
 * those two, given as a share of all the line's samples. */
#include "source.h"

#include <jansson.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define WARP 32.0
#define MIN_SHARE 0.02
#define MIN_STALL_SHARE 0.10
#define BRANCH_DROP 2.0   /* lanes: smaller drops are noise (exits, tails) */

int ga_stall_is_stall(const char *reason)
{
	return strcmp(reason, GA_STALL_SELECTED) != 0 && strcmp(reason, GA_STALL_NOT_SELECTED) != 0;
}

void ga_source_free(ga_source *s)
{
	if (!s)
		return;
	for (size_t i = 0; i < s->n_pcs; i++) {
		free(s->pcs[i].file);
		free(s->pcs[i].text);
		for (size_t k = 0; k < s->pcs[i].n_stalls; k++)
			free(s->pcs[i].stalls[k].reason);
		free(s->pcs[i].stalls);
	}
	free(s->pcs);
	free(s->mangled);
	free(s->trigger);
	memset(s, 0, sizeof(*s));
}

ga_source_pc *ga_source_add_pc(ga_source *s)
{
	ga_source_pc pc = {0};
	pc.inst = pc.threads = pc.sectors = pc.sectors_ideal = NAN;
	pc.wavefronts = pc.wavefronts_ideal = NAN;
	GA_PUSH(s->pcs, s->n_pcs, s->cap_pcs, pc);
	return &s->pcs[s->n_pcs - 1];
}

static double z(double v) { return isfinite(v) ? v : 0.0; }

static void add1(double *to, double v)
{
	if (isfinite(v))
		*to = isfinite(*to) ? *to + v : v;
}

/* The per-instruction counts of from, added into to. */
static void add_counts(ga_source_pc *to, const ga_source_pc *from)
{
	add1(&to->inst, from->inst);
	add1(&to->threads, from->threads);
	add1(&to->sectors, from->sectors);
	add1(&to->sectors_ideal, from->sectors_ideal);
	add1(&to->wavefronts, from->wavefronts);
	add1(&to->wavefronts_ideal, from->wavefronts_ideal);
}

void ga_source_pc_add(ga_source_pc *to, const ga_source_pc *from)
{
	add_counts(to, from);
	if (!to->file && from->file) {
		to->file = from->file;
		to->line = from->line;
	}
	if (!to->text && from->text)
		to->text = from->text;
}

void ga_source_pc_add_stall(ga_source_pc *p, const char *reason, double samples)
{
	if (!reason || !isfinite(samples))
		return;
	for (size_t k = 0; k < p->n_stalls; k++)
		if (strcmp(p->stalls[k].reason, reason) == 0) {
			p->stalls[k].samples += samples;
			return;
		}
	/* The number of reasons is small (about 20): grow one at a time. */
	p->stalls = ga_xrealloc(p->stalls, (p->n_stalls + 1) * sizeof(*p->stalls));
	p->stalls[p->n_stalls].reason = ga_xstrdup(reason);
	p->stalls[p->n_stalls].samples = samples;
	p->n_stalls++;
}

double ga_source_pc_stall(const ga_source_pc *p, const char *reason)
{
	for (size_t k = 0; p && k < p->n_stalls; k++)
		if (strcmp(p->stalls[k].reason, reason) == 0)
			return p->stalls[k].samples;
	return 0;
}

void ga_source_merge(ga_source *to, const ga_source *from)
{
	if (!to || !from || to == from)
		return;
	for (size_t i = 0; i < from->n_pcs; i++) {
		const ga_source_pc *f = &from->pcs[i];
		ga_source_pc *t = NULL;
		for (size_t j = 0; j < to->n_pcs && !t; j++)
			if (to->pcs[j].pc == f->pc)
				t = &to->pcs[j];
		if (!t) {
			t = ga_source_add_pc(to);
			t->pc = f->pc;
		}
		add_counts(t, f);
		if ((!t->file || t->line <= 0) && f->file && f->line > 0) {
			free(t->file);
			t->file = ga_xstrdup(f->file);
			t->line = f->line;
		}
		if (!t->text && f->text)
			t->text = ga_xstrdup(f->text);
		for (size_t k = 0; k < f->n_stalls; k++)
			ga_source_pc_add_stall(t, f->stalls[k].reason, f->stalls[k].samples);
	}
	if (from->lineinfo)
		to->lineinfo = 1;
	if (!to->trigger && from->trigger)
		to->trigger = ga_xstrdup(from->trigger);
	if (from->sample_period > 0 && !(to->sample_period > 0))
		to->sample_period = from->sample_period;
	to->samples_total += from->samples_total;
	to->samples_dropped += from->samples_dropped;
}

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

static void add_stall(acc *a, const char *reason, double v)
{
	for (size_t k = 0; k < a->nst; k++)
		if (strcmp(a->st[k].reason, reason) == 0) {
			a->st[k].samples += v;
			return;
		}
	a->st = ga_xrealloc(a->st, (a->nst + 1) * sizeof(*a->st));
	a->st[a->nst].reason = (char *)reason;
	a->st[a->nst].samples = v;
	a->nst++;
}

size_t ga_source_rank(const ga_source *s, ga_source_line *out, size_t max)
{
	size_t n = 0, nout = 0;
	const ga_source_pc **ord;
	ga_source_pc *merged;
	acc *lines;
	size_t *line_of;
	double tot_sect = 0, tot_wf = 0, tot_idle = 0, tot_stall = 0;
	size_t n_sampled = 0;

	if (!s || s->n_pcs == 0 || max == 0)
		return 0;
	/* CUPTI hands one record per (PC, metric): merge records of one PC
	 * (profiles recorded before the collector merged them have these). */
	ord = ga_xcalloc(s->n_pcs, sizeof(*ord));
	for (size_t i = 0; i < s->n_pcs; i++)
		ord[i] = &s->pcs[i];
	qsort(ord, s->n_pcs, sizeof(*ord), pc_cmp);
	merged = ga_xcalloc(s->n_pcs, sizeof(*merged));
	size_t nm = 0;
	for (size_t i = 0; i < s->n_pcs; i++) {
		const ga_source_pc *p = ord[i];
		if (nm && merged[nm - 1].pc == p->pc) {
			ga_source_pc *q = &merged[nm - 1];
			ga_source_pc_add(q, p);
		} else {
			merged[nm++] = *p;
		}
	}
	for (size_t i = 0; i < nm; i++)
		if (z(merged[i].inst) > 0)
			ord[n++] = &merged[i];
	for (size_t i = 0; i < s->n_pcs; i++)
		n_sampled += s->pcs[i].n_stalls > 0;
	lines = ga_xcalloc(n + n_sampled ? n + n_sampled : 1, sizeof(*lines));
	line_of = ga_xcalloc(n ? n : 1, sizeof(*line_of));

	size_t nl = 0;
	for (size_t i = 0; i < n; i++) {
		const ga_source_pc *p = ord[i];
		size_t k = find_line(lines, nl, p);
		if (k == nl)
			new_line(&lines[nl++], p);
		line_of[i] = k;
		acc *a = &lines[k];
		if (!a->l.text && p->text)
			a->l.text = p->text;
		a->inst += z(p->inst);
		a->threads += z(p->threads);
		if (z(p->sectors) > 0 || z(p->sectors_ideal) > 0) {
			a->sect += z(p->sectors);
			a->sect_ideal += z(p->sectors_ideal);
			a->sect_req += z(p->inst);
			if (z(p->sectors) > z(p->sectors_ideal))
				tot_sect += z(p->sectors) - z(p->sectors_ideal);
		}
		if (z(p->wavefronts) > 0 || z(p->wavefronts_ideal) > 0) {
			a->wf += z(p->wavefronts);
			a->wf_ideal += z(p->wavefronts_ideal);
			a->wf_req += z(p->inst);
			if (z(p->wavefronts) > z(p->wavefronts_ideal))
				tot_wf += z(p->wavefronts) - z(p->wavefronts_ideal);
		}
		if (isfinite(p->threads) && WARP * p->inst > p->threads)
			tot_idle += WARP * p->inst - p->threads;
	}

	/* PC samples, from every record (the ranking's merge above keeps
	 * counts, not stalls); a sampled PC the SASS metrics did not see gets
	 * a line of its own. */
	for (size_t i = 0; i < s->n_pcs; i++) {
		const ga_source_pc *p = &s->pcs[i];
		if (p->n_stalls == 0)
			continue;
		size_t k = find_line(lines, nl, p);
		if (k == nl)
			new_line(&lines[nl++], p);
		acc *a = &lines[k];
		if (!a->l.text && p->text)
			a->l.text = p->text;
		for (size_t r = 0; r < p->n_stalls; r++) {
			double v = p->stalls[r].samples;
			if (!isfinite(v) || v <= 0)
				continue;
			a->samples += v;
			add_stall(a, p->stalls[r].reason, v);
			if (ga_stall_is_stall(p->stalls[r].reason)) {
				a->stall += v;
				tot_stall += v;
			}
		}
	}

	/* Divergent regions in PC order. */
	for (size_t i = 0; i + 1 < n; i++) {
		const ga_source_pc *p = ord[i];
		if (!isfinite(p->threads))
			continue;
		double w = p->threads / p->inst;
		size_t j = i + 1;
		double waste = 0, rinst = 0, rthr = 0;
		while (j < n && isfinite(ord[j]->threads) &&
		       ord[j]->threads / ord[j]->inst < w - BRANCH_DROP) {
			waste += w * ord[j]->inst - ord[j]->threads;
			rinst += ord[j]->inst;
			rthr += ord[j]->threads;
			j++;
		}
		if (j == i + 1)
			continue;
		acc *a = &lines[line_of[i]];
		if (waste > a->branch_waste) {
			a->branch_waste = waste;
			a->branch_inst_before = p->inst;
			a->branch_threads_before = p->threads;
			a->region_inst = rinst;
			a->region_threads = rthr;
		}
		i = j - 1;
	}

	for (size_t k = 0; k < nl; k++) {
		acc *a = &lines[k];
		ga_source_line *l = &a->l;
		double sh;
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
#define ADD(...) \
	do { \
		if (len < sizeof(l->desc)) \
			len += (size_t)snprintf(l->desc + len, sizeof(l->desc) - len, \
			                        "%s", len ? "; " : ""); \
		if (len < sizeof(l->desc)) \
			len += (size_t)snprintf(l->desc + len, sizeof(l->desc) - len, __VA_ARGS__); \
	} while (0)
		if (tot_sect > 0 && a->sect > a->sect_ideal &&
		    (sh = (a->sect - a->sect_ideal) / tot_sect) >= MIN_SHARE) {
			l->issues |= GA_SRC_UNCOALESCED;
			if (sh > l->score) l->score = sh;
			ADD("%.1f sectors/request (ideal %.1f)", l->sectors_per_req,
			    l->sectors_ideal_per_req);
		}
		if (tot_wf > 0 && a->wf > a->wf_ideal &&
		    (sh = (a->wf - a->wf_ideal) / tot_wf) >= MIN_SHARE) {
			l->issues |= GA_SRC_BANK_CONFLICT;
			if (sh > l->score) l->score = sh;
			ADD("%.1f shared wavefronts/request (ideal %.1f): bank conflicts",
			    l->wavefronts_per_req, l->wavefronts_ideal_per_req);
		}
		if (tot_idle > 0 && a->branch_waste > 0 &&
		    (sh = a->branch_waste / tot_idle) >= MIN_SHARE) {
			l->issues |= GA_SRC_BRANCH;
			if (sh > l->score) l->score = sh;
			l->branch_before = a->branch_threads_before / a->branch_inst_before;
			l->branch_after = a->region_threads / a->region_inst;
			ADD("divergent branch: %.1f threads arrive, %.1f of 32 active after it",
			    l->branch_before, l->branch_after);
		}
		if (tot_idle > 0 && isfinite(l->active_threads) && a->inst * WARP > a->threads &&
		    (sh = (a->inst * WARP - a->threads) / tot_idle) >= MIN_SHARE &&
		    l->active_threads < WARP - BRANCH_DROP) {
			l->issues |= GA_SRC_INACTIVE;
			if (sh > l->score) l->score = sh;
			ADD("%.1f of 32 threads active", l->active_threads);
		}
		if (tot_stall > 0 && a->stall > 0) {
			const ga_stall *dom = NULL;
			for (size_t r = 0; r < a->nst; r++)
				if (ga_stall_is_stall(a->st[r].reason) &&
				    (!dom || a->st[r].samples > dom->samples))
					dom = &a->st[r];
			l->stall_share = a->stall / tot_stall;
			l->stall_reason = dom->reason;
			l->stall_reason_samples = dom->samples;
			if ((sh = l->stall_share) >= MIN_STALL_SHARE) {
				l->issues |= GA_SRC_STALL;
				if (sh > l->score) l->score = sh;
			}
			ADD("stalls: %s %.0f%% of the line's %.0f samples", dom->reason,
			    100 * dom->samples / a->samples, a->samples);
		}
#undef ADD
	}
	ga_source_line *tmp = ga_xcalloc(nl ? nl : 1, sizeof(*tmp));
	for (size_t k = 0; k < nl; k++)
		if (lines[k].l.issues)
			tmp[nout++] = lines[k].l;
	qsort(tmp, nout, sizeof(*tmp), score_cmp);
	if (nout > max)
		nout = max;
	memcpy(out, tmp, nout * sizeof(*out));
	free(tmp);
	for (size_t k = 0; k < nl; k++)
		free(lines[k].st);
	free(lines);
	free(line_of);
	free(ord);
	free(merged);
	return nout;
}

/* ---- JSON ---------------------------------------------------------------- */

static void put_num(json_t *o, const char *k, double v)
{
	if (isfinite(v))
		json_object_set_new(o, k, json_real(v));
}

/* A count as an integer when it is one (samples are), else a real. */
static json_t *count_json(double v)
{
	if (v >= 0 && v < 9e15 && v == floor(v))
		return json_integer((json_int_t)v);
	return json_real(v);
}

static json_t *dims(const unsigned d[3])
{
	return json_pack("[iii]", (int)d[0], (int)d[1], (int)d[2]);
}

void *ga_source_to_json(const ga_source *s)
{
	json_t *o = json_object(), *pcs = json_array();
	json_object_set_new(o, "mangled", json_string(s->mangled ? s->mangled : "?"));
	json_object_set_new(o, "pid", json_integer(s->pid));
	json_object_set_new(o, "grid", dims(s->grid));
	json_object_set_new(o, "block", dims(s->block));
	if (s->trigger)
		json_object_set_new(o, "trigger", json_string(s->trigger));
	json_object_set_new(o, "lineinfo", json_boolean(s->lineinfo));
	if (s->sample_period > 0 || s->samples_total > 0) {
		json_t *ps = json_object();
		if (s->sample_period > 0)
			json_object_set_new(ps, "period_cycles", count_json(s->sample_period));
		json_object_set_new(ps, "samples", count_json(s->samples_total));
		json_object_set_new(ps, "dropped", count_json(s->samples_dropped));
		json_object_set_new(o, "pc_sampling", ps);
	}
	for (size_t i = 0; i < s->n_pcs; i++) {
		const ga_source_pc *p = &s->pcs[i];
		json_t *j = json_object();
		json_object_set_new(j, "pc", json_integer(p->pc));
		if (p->file && p->line > 0) {
			json_object_set_new(j, "file", json_string(p->file));
			json_object_set_new(j, "line", json_integer(p->line));
		}
		put_num(j, "inst", p->inst);
		put_num(j, "threads", p->threads);
		put_num(j, "sectors", p->sectors);
		put_num(j, "sectors_ideal", p->sectors_ideal);
		put_num(j, "wavefronts", p->wavefronts);
		put_num(j, "wavefronts_ideal", p->wavefronts_ideal);
		if (p->n_stalls) {
			json_t *st = json_object();
			for (size_t k = 0; k < p->n_stalls; k++)
				if (isfinite(p->stalls[k].samples))
					json_object_set_new(st, p->stalls[k].reason,
					                    count_json(p->stalls[k].samples));
			json_object_set_new(j, "stalls", st);
		}
		if (p->text)
			json_object_set_new(j, "text", json_string(p->text));
		json_array_append_new(pcs, j);
	}
	json_object_set_new(o, "pcs", pcs);
	return o;
}

static int get_num(json_t *o, const char *k, double *v, const char *where, size_t i,
                   ga_error *err)
{
	json_t *x = json_object_get(o, k);
	if (!x || json_is_null(x))
		return 0;
	if (!json_is_number(x))
		return ga_fail(err, GA_ERR_PROFILE, "%s.pcs[%zu].%s: expected a number", where, i, k);
	*v = json_number_value(x);
	return 0;
}

static int get_dims(json_t *o, const char *k, unsigned d[3], const char *where, ga_error *err)
{
	json_t *a = json_object_get(o, k);
	if (!a)
		return 0;
	if (!json_is_array(a) || json_array_size(a) != 3)
		return ga_fail(err, GA_ERR_PROFILE, "%s.%s: expected an array of 3 integers", where, k);
	for (size_t i = 0; i < 3; i++) {
		json_t *v = json_array_get(a, i);
		if (!json_is_integer(v) || json_integer_value(v) < 0 ||
		    json_integer_value(v) > 0xffffffffLL)
			return ga_fail(err, GA_ERR_PROFILE, "%s.%s: expected an array of 3 integers",
			               where, k);
		d[i] = (unsigned)json_integer_value(v);
	}
	return 0;
}

static int get_stalls(json_t *o, ga_source_pc *p, const char *where, size_t i, ga_error *err)
{
	json_t *st = json_object_get(o, "stalls"), *v;
	const char *reason;
	if (!st || json_is_null(st))
		return 0;
	if (!json_is_object(st))
		return ga_fail(err, GA_ERR_PROFILE, "%s.pcs[%zu].stalls: expected an object of "
		               "{reason: samples}", where, i);
	json_object_foreach(st, reason, v) {
		if (!json_is_number(v) || !(json_number_value(v) >= 0) ||
		    !isfinite(json_number_value(v)))
			return ga_fail(err, GA_ERR_PROFILE, "%s.pcs[%zu].stalls.%.80s: expected a "
			               "number of samples (0 or more)", where, i, reason);
		ga_source_pc_add_stall(p, reason, json_number_value(v));
	}
	return 0;
}

static int get_sampling(json_t *o, ga_source *s, const char *where, ga_error *err)
{
	json_t *ps = json_object_get(o, "pc_sampling");
	static const char *const keys[] = {"period_cycles", "samples", "dropped"};
	double *slot[] = {&s->sample_period, &s->samples_total, &s->samples_dropped};
	if (!ps || json_is_null(ps))
		return 0;
	if (!json_is_object(ps))
		return ga_fail(err, GA_ERR_PROFILE, "%s.pc_sampling: expected an object", where);
	for (size_t k = 0; k < 3; k++) {
		json_t *v = json_object_get(ps, keys[k]);
		if (!v)
			continue;
		if (!json_is_number(v) || !(json_number_value(v) >= 0) ||
		    !isfinite(json_number_value(v)))
			return ga_fail(err, GA_ERR_PROFILE, "%s.pc_sampling.%s: expected a number "
			               "(0 or more)", where, keys[k]);
		*slot[k] = json_number_value(v);
	}
	return 0;
}

int ga_source_from_json(ga_source **arr, size_t *n, size_t *cap, void *json, const char *where,
                        ga_error *err)
{
	json_t *o = json, *v, *pcs;
	ga_source s = {0};
	size_t i;

	if (!json_is_object(o))
		return ga_fail(err, GA_ERR_PROFILE, "%s: expected an object", where);
	v = json_object_get(o, "mangled");
	if (!json_is_string(v))
		return ga_fail(err, GA_ERR_PROFILE, "%s.mangled: missing or not a string", where);
	s.mangled = ga_xstrdup(json_string_value(v));
	v = json_object_get(o, "pid");
	if (v && !json_is_integer(v)) {
		ga_fail(err, GA_ERR_PROFILE, "%s.pid: expected an integer", where);
		goto bad;
	}
	s.pid = v ? (int)json_integer_value(v) : 0;
	if (get_dims(o, "grid", s.grid, where, err) || get_dims(o, "block", s.block, where, err))
		goto bad;
	v = json_object_get(o, "trigger");
	if (json_is_string(v))
		s.trigger = ga_xstrdup(json_string_value(v));
	s.lineinfo = json_is_true(json_object_get(o, "lineinfo"));
	if (get_sampling(o, &s, where, err))
		goto bad;
	pcs = json_object_get(o, "pcs");
	if (!json_is_array(pcs)) {
		ga_fail(err, GA_ERR_PROFILE, "%s.pcs: missing or not an array", where);
		goto bad;
	}
	json_array_foreach(pcs, i, v) {
		json_t *x;
		if (!json_is_object(v)) {
			ga_fail(err, GA_ERR_PROFILE, "%s.pcs[%zu]: expected an object", where, i);
			goto bad;
		}
		ga_source_pc *p = ga_source_add_pc(&s);
		x = json_object_get(v, "pc");
		if (!json_is_integer(x) || json_integer_value(x) < 0 ||
		    json_integer_value(x) > 0xffffffffLL) {
			ga_fail(err, GA_ERR_PROFILE, "%s.pcs[%zu].pc: expected an offset", where, i);
			goto bad;
		}
		p->pc = (uint32_t)json_integer_value(x);
		x = json_object_get(v, "file");
		if (json_is_string(x))
			p->file = ga_xstrdup(json_string_value(x));
		x = json_object_get(v, "line");
		if (x && (!json_is_integer(x) || json_integer_value(x) < 0 ||
		          json_integer_value(x) > 100000000)) {
			ga_fail(err, GA_ERR_PROFILE, "%s.pcs[%zu].line: expected a line number", where, i);
			goto bad;
		}
		p->line = x ? (int)json_integer_value(x) : 0;
		x = json_object_get(v, "text");
		if (json_is_string(x))
			p->text = ga_xstrdup(json_string_value(x));
		if (get_num(v, "inst", &p->inst, where, i, err) ||
		    get_num(v, "threads", &p->threads, where, i, err) ||
		    get_num(v, "sectors", &p->sectors, where, i, err) ||
		    get_num(v, "sectors_ideal", &p->sectors_ideal, where, i, err) ||
		    get_num(v, "wavefronts", &p->wavefronts, where, i, err) ||
		    get_num(v, "wavefronts_ideal", &p->wavefronts_ideal, where, i, err) ||
		    get_stalls(v, p, where, i, err))
			goto bad;
	}
	GA_PUSH(*arr, *n, *cap, s);
	return 0;
bad:
	ga_source_free(&s);
	return -1;
}

void ga_source_fill_text(ga_source *s, size_t max)
{
	ga_source_line *top = ga_xcalloc(max ? max : 1, sizeof(*top));
	size_t n = ga_source_rank(s, top, max);
	for (size_t k = 0; k < n; k++) {
		if (!top[k].file || top[k].text)
			continue;
		char *text = ga_source_read_line(top[k].file, top[k].line);
		if (!text)
			continue;
		for (size_t i = 0; i < s->n_pcs; i++) {
			ga_source_pc *p = &s->pcs[i];
			if (p->pc == top[k].pc && p->line == top[k].line) {
				free(p->text);
				p->text = text;
				text = NULL;
				break;
			}
		}
		free(text);
	}
	free(top);
}

char *ga_source_read_line(const char *file, int line)
{
	FILE *f;
	char buf[4096];
	int no = 0;
	char *res = NULL;

	if (!file || line <= 0 || !(f = fopen(file, "r")))
		return NULL;
	while (fgets(buf, sizeof(buf), f)) {
		size_t len = strlen(buf);
		int whole = len && buf[len - 1] == '\n';
		if (++no == line) {
			char *s = buf;
			while (*s == ' ' || *s == '\t')
				s++;
			len = strlen(s);
			while (len && (s[len - 1] == '\n' || s[len - 1] == '\r'))
				s[--len] = '\0';
			res = ga_xstrdup(s);
			break;
		}
		/* A line longer than the buffer: skip the rest of it. */
		while (!whole && fgets(buf, sizeof(buf), f)) {
			len = strlen(buf);
			whole = len && buf[len - 1] == '\n';
		}
	}
	fclose(f);
	return res;
}
