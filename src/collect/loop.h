/* loop.h: is the run's launch sequence repeating, and with what period?
 *
 * The injection library pushes each launch's kernel (a small integer, one
 * per (name, grid, block)) into a ga_period and asks whether the last 2p
 * launches are two copies of the same p: a loop iteration seen twice in a
 * row.  Its kernels can then be measured together across the next
 * iterations (loopreplay.c, with policy.c deciding).
 *
 * A training step launches hundreds to thousands of kernels (20,000 and
 * more with gradient accumulation over a large model), so periods are not
 * tried one by one.  A rolling hash of the last GA_PERIOD_WINDOW launches
 * is looked up in a table of where each window hash last ended: the
 * distance is a candidate period, and a candidate lives while each new
 * launch equals the one a period before it (O(1) per launch, memory fixed
 * by GA_PERIOD_MAX).  Periods shorter than the window are followed one by
 * one (a benchmark's few kernels).  A period found is two clean copies; the first
 * iterations that differ (autotuning, the optimizer's state created at
 * step 1) are simply not two copies yet. */
#ifndef GA_LOOP_H
#define GA_LOOP_H

#include <stddef.h>
#include <stdint.h>

#define GA_PERIOD_MAX 32768       /* the longest iteration found */
#define GA_PERIOD_HIST (2 * GA_PERIOD_MAX)
#define GA_PERIOD_WINDOW 16       /* launches hashed together */
#define GA_PERIOD_TABLE (1u << 17)/* window hash -> last end (direct-mapped) */
#define GA_PERIOD_CANDIDATES 4
#define GA_PERIOD_REJECTED 8

typedef struct {
	size_t p;
	size_t run;               /* the last run launches equal those p before */
} ga_period_cand;

typedef struct {
	long *hist;               /* value i at hist[i % GA_PERIOD_HIST] */
	uint64_t *tab_hash;       /* [GA_PERIOD_TABLE] window hashes */
	size_t *tab_end;          /* ... and 1 + the index of the launch ending it */
	size_t n;                 /* values pushed */
	uint64_t win;             /* hash of the last GA_PERIOD_WINDOW values */
	size_t min_p, max_p;
	size_t small_run[GA_PERIOD_WINDOW];  /* runs of the periods under the window */
	ga_period_cand cand[GA_PERIOD_CANDIDATES];
	size_t n_cand;
	size_t rejected[GA_PERIOD_REJECTED];  /* periods that broke: not found again */
	size_t n_rejected;
} ga_period;

/* min_p..max_p (max_p at most GA_PERIOD_MAX). */
void ga_period_init(ga_period *d, size_t min_p, size_t max_p);
void ga_period_free(ga_period *d);
void ga_period_push(ga_period *d, long v);
/* The value pushed k before the last one (k < GA_PERIOD_HIST, k < n). */
long ga_period_back(const ga_period *d, size_t k);
/* The smallest live period whose last 2p launches are two copies, or 0. */
size_t ga_period_found(const ga_period *d);
/* The shortest live period longer than p whose last 2p launches are two
 * copies, or 0: the loop around an inner one. */
size_t ga_period_longer(const ga_period *d, size_t p);
/* Are the last 2p values two copies of the same p (checked value by
 * value; for tests and for a period found)? */
int ga_period_repeats(const ga_period *d, size_t p);
/* A period that broke while measured: never found again in this process. */
void ga_period_reject(ga_period *d, size_t p);

/* The hash of a window of values: what ga_period keeps of the last
 * GA_PERIOD_WINDOW pushed, computed here over vals[0..n) (oldest first). */
uint64_t ga_period_hash(const long *vals, size_t n);

#endif
