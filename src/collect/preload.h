/* preload.h: CUPTI's metrics library (libnvperf_host.so) loaded on a
 * thread of its own at start-up, so that its constructors do not run on
 * the program's thread at the first launch (see preload.c). */
#ifndef GA_PRELOAD_H
#define GA_PRELOAD_H

/* Start loading it (not with GA_ENV_NVPERF_PRELOAD=0). */
void preload_start(void);
/* Wait for the load to end: before CUPTI loads the library itself, before
 * a fork, and at exit. */
void preload_join(void);
/* For the timing log: loaded early (0/1), the load's and the wait's
 * seconds. */
void preload_stats(int *loaded, double *load_s, double *wait_s);

#endif
