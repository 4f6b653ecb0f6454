/* loop.h: is the run's launch sequence repeating, and with what period?
 *
 * The injection library keeps the last launches' kernels (small integers,
 * one per (name, grid, block)) in a ring and asks, at every launch, whether
 * the last 2p of them are two copies of the same p: a loop iteration seen
 * twice in a row.  Its kernels can then be measured together across the
 * next iterations (loopreplay.c, with policy.c deciding). */
#ifndef GA_LOOP_H
#define GA_LOOP_H

#include <stddef.h>

/* ring[0..cap) holds the last min(n, cap) values pushed, value i at
 * ring[i % cap].  Back(k) is the value pushed k before the last one. */
long ga_loop_back(const long *ring, size_t cap, size_t n, size_t k);

/* Are the last 2p values two copies of the same p?  0 when fewer than 2p
 * were pushed or 2p > cap. */
int ga_loop_repeats(const long *ring, size_t cap, size_t n, size_t p);

/* The smallest p in [min_p, max_p] for which ga_loop_repeats holds, or 0. */
size_t ga_loop_period(const long *ring, size_t cap, size_t n, size_t min_p, size_t max_p);

#endif
