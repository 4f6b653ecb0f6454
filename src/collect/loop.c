/* loop.c: the period of a repeating launch sequence (see loop.h). */
#include "loop.h"

#include <stdlib.h>

#include "../util/util.h"

#define HASH_BASE 0x100000001b3ULL   /* odd: invertible modulo 2^64 */

/* Kernel numbers are small and close together: spread their bits before
 * they enter the polynomial (splitmix64's finaliser). */
static uint64_t mix(long v)
{
	uint64_t x = (uint64_t)v + 0x9e3779b97f4a7c15ULL;
	x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ULL;
	x = (x ^ (x >> 27)) * 0x94d049bb133111ebULL;
	return x ^ (x >> 31);
}

static uint64_t base_pow(size_t k)
{
	uint64_t r = 1;
	while (k--)
		r *= HASH_BASE;
	return r;
}

uint64_t ga_period_hash(const long *vals, size_t n)
{
	uint64_t h = 0;
	for (size_t i = 0; i < n; i++)
		h = h * HASH_BASE + mix(vals[i]);
	return h;
}

void ga_period_init(ga_period *d, size_t min_p, size_t max_p)
{
	*d = (ga_period){0};
	d->min_p = min_p ? min_p : 1;
	d->max_p = max_p < GA_PERIOD_MAX ? max_p : GA_PERIOD_MAX;
}

void ga_period_free(ga_period *d)
{
	free(d->hist);
	free(d->tab_hash);
	free(d->tab_end);
	*d = (ga_period){0};
}

long ga_period_back(const ga_period *d, size_t k)
{
	return d->hist[(d->n - 1 - k) % GA_PERIOD_HIST];
}

int ga_period_repeats(const ga_period *d, size_t p)
{
	if (p == 0 || 2 * p > d->n || 2 * p > GA_PERIOD_HIST)
		return 0;
	/* Newest first: in a sequence that does not repeat with this period
	 * the first comparison nearly always fails. */
	for (size_t k = 0; k < p; k++)
		if (ga_period_back(d, k) != ga_period_back(d, k + p))
			return 0;
	return 1;
}

void ga_period_reject(ga_period *d, size_t p)
{
	if (d->n_rejected < GA_PERIOD_REJECTED)
		d->rejected[d->n_rejected++] = p;
	for (size_t i = 0; i < d->n_cand; i++)
		if (d->cand[i].p == p)
			d->cand[i] = d->cand[--d->n_cand];
}

static int rejected(const ga_period *d, size_t p)
{
	for (size_t i = 0; i < d->n_rejected; i++)
		if (d->rejected[i] == p)
			return 1;
	return 0;
}

/* The candidates that the new value keeps alive. */
static void candidates_step(ga_period *d, long v)
{
	for (size_t i = 0; i < d->n_cand;) {
		ga_period_cand *c = &d->cand[i];
		if (d->n > c->p && ga_period_back(d, c->p) == v) {
			c->run++;
			i++;
		} else {
			*c = d->cand[--d->n_cand];
		}
	}
}

/* The last window ended one period ago too: a candidate.  Checked value by
 * value (a hash can collide), and back from there to the last value that
 * differs, so that a period is found as soon as its second copy ends (the
 * scan stops at p: enough).  A full list gives up its shortest run. */
static void candidate_add(ga_period *d, size_t p)
{
	size_t worst = 0, run = GA_PERIOD_WINDOW;

	/* Shorter ones are followed one by one (small_run). */
	if (p < GA_PERIOD_WINDOW || p < d->min_p || p > d->max_p || rejected(d, p))
		return;
	for (size_t i = 0; i < d->n_cand; i++)
		if (d->cand[i].p == p)
			return;
	for (size_t k = 0; k < GA_PERIOD_WINDOW; k++)
		if (ga_period_back(d, k) != ga_period_back(d, k + p))
			return;
	while (run < p && run + p < d->n && run + p < GA_PERIOD_HIST &&
	       ga_period_back(d, run) == ga_period_back(d, run + p))
		run++;
	if (d->n_cand < GA_PERIOD_CANDIDATES) {
		d->cand[d->n_cand++] = (ga_period_cand){p, run};
		return;
	}
	for (size_t i = 1; i < d->n_cand; i++)
		if (d->cand[i].run < d->cand[worst].run)
			worst = i;
	d->cand[worst] = (ga_period_cand){p, run};
}

void ga_period_push(ga_period *d, long v)
{
	static uint64_t top;      /* HASH_BASE^(window - 1) */
	size_t slot;

	if (!d->hist) {
		d->hist = ga_xcalloc(GA_PERIOD_HIST, sizeof(*d->hist));
		d->tab_hash = ga_xcalloc(GA_PERIOD_TABLE, sizeof(*d->tab_hash));
		d->tab_end = ga_xcalloc(GA_PERIOD_TABLE, sizeof(*d->tab_end));
		top = base_pow(GA_PERIOD_WINDOW - 1);
	}
	if (d->n >= GA_PERIOD_WINDOW)
		d->win -= mix(ga_period_back(d, GA_PERIOD_WINDOW - 1)) * top;
	d->win = d->win * HASH_BASE + mix(v);
	d->hist[d->n % GA_PERIOD_HIST] = v;
	d->n++;
	for (size_t p = 1; p < GA_PERIOD_WINDOW; p++)
		d->small_run[p] = d->n > p && ga_period_back(d, p) == v ? d->small_run[p] + 1 : 0;
	candidates_step(d, v);
	if (d->n < GA_PERIOD_WINDOW)
		return;
	slot = (size_t)(d->win & (GA_PERIOD_TABLE - 1));
	if (d->tab_end[slot] && d->tab_hash[slot] == d->win) {
		size_t p = d->n - d->tab_end[slot];
		/* Both windows still in the history. */
		if (p + GA_PERIOD_WINDOW <= GA_PERIOD_HIST)
			candidate_add(d, p);
	}
	d->tab_hash[slot] = d->win;
	d->tab_end[slot] = d->n;
}

size_t ga_period_found(const ga_period *d)
{
	size_t best = 0;
	for (size_t p = d->min_p; p < GA_PERIOD_WINDOW && p <= d->max_p; p++)
		if (d->small_run[p] >= p && !rejected(d, p))
			return p;
	for (size_t i = 0; i < d->n_cand; i++) {
		const ga_period_cand *c = &d->cand[i];
		if (c->run >= c->p && (!best || c->p < best))
			best = c->p;
	}
	return best;
}

size_t ga_period_longer(const ga_period *d, size_t p)
{
	size_t best = 0;
	for (size_t i = 0; i < d->n_cand; i++) {
		const ga_period_cand *c = &d->cand[i];
		if (c->p > p && c->run >= c->p && (!best || c->p < best))
			best = c->p;
	}
	return best;
}
