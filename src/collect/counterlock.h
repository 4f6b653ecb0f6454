/* counterlock.h: the GPU counters are a device-wide resource; the
 * processes of a run take turns with them (see counterlock.c).  A
 * mechanism: it calls nothing above it. */
#ifndef GA_COUNTERLOCK_H
#define GA_COUNTERLOCK_H

#include "injstate.h"

/* Open the run's lock file in dir; st->lock_fd -1 when it cannot be. */
void counters_lock_open(ga_inj *st, const char *dir);
/* 1 when this process may profile now (it holds the lock, or there is
 * none); waits up to GA_ENV_LOCK_WAIT seconds, then 0 for good, with a
 * note. */
int hold_counters(ga_inj *st);
/* Give the lock back when no context holds a range-profiler object. */
void release_counters(ga_inj *st, int objects_left);

#endif
