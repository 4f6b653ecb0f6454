/* loop.c: the period of a repeating launch sequence (see loop.h). */
#include "loop.h"

long ga_loop_back(const long *ring, size_t cap, size_t n, size_t k)
{
	return ring[(n - 1 - k) % cap];
}

int ga_loop_repeats(const long *ring, size_t cap, size_t n, size_t p)
{
	if (p == 0 || 2 * p > n || 2 * p > cap)
		return 0;
	/* Newest first: in a sequence that does not repeat with this period
	 * the first comparison nearly always fails. */
	for (size_t k = 0; k < p; k++)
		if (ga_loop_back(ring, cap, n, k) != ga_loop_back(ring, cap, n, k + p))
			return 0;
	return 1;
}

size_t ga_loop_period(const long *ring, size_t cap, size_t n, size_t min_p, size_t max_p)
{
	for (size_t p = min_p ? min_p : 1; p <= max_p && 2 * p <= n; p++)
		if (ga_loop_repeats(ring, cap, n, p))
			return p;
	return 0;
}
