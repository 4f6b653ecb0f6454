/* counterlock.h: a GPU's counters are a device-wide resource; the
 * processes of a run that share a GPU take turns with them, a lock file per
 * GPU, while processes on different GPUs measure at the same time (see
 * counterlock.c).  A mechanism: it calls nothing above it. */
#ifndef GA_COUNTERLOCK_H
#define GA_COUNTERLOCK_H

#include "injstate.h"

/* Lock files go in dir (the run directory, shared by the run's processes). */
void counters_lock_init(ga_inj *st, const char *dir);
/* The lock entry of device dev (made at its first use): an index into
 * st->locks, or -1 when there can be none (no directory, too many GPUs). */
int counters_lock_of(ga_inj *st, CUdevice dev);
/* 1 when this process may measure on the context's GPU now: it holds the
 * GPU's lock, or there is none.  Waits up to GA_ENV_LOCK_WAIT seconds
 * (default 10), then 0 for good on that GPU, with a note. */
int hold_counters(ga_inj *st, const ctx_state *cs);
/* Record the GPU of a new context (a gpu record: its ordinal and UUID,
 * the same UUID the lock files are named by), for the report's ranks. */
void counters_record_gpu(CUcontext ctx);
/* Give back the lock of each GPU where no context holds a range-profiler
 * object any more. */
void release_counters(ga_inj *st);

#endif
