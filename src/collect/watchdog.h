/* watchdog.h: no run of gpuadvise hangs because of gpuadvise.  While the
 * callbacks measure a launch (ENTER to EXIT, or the work before they let
 * it run), the watchdog's thread checks every half second how long that
 * has taken; past the limit (GA_ENV_WATCHDOG seconds) it writes a record
 * naming the kernel and ends the process.  A kernel that waits for another
 * stream or process (a spin-wait on a flag, a collective) cannot finish
 * while the profiler runs it alone, and the driver call that runs it
 * cannot be interrupted from another thread: ending the process is the one
 * way out, and the launcher reports what the run measured until then.  A
 * mechanism: it calls nothing above it. */
#ifndef GA_WATCHDOG_H
#define GA_WATCHDOG_H

#include "injstate.h"

/* The status a process stopped by the watchdog exits with. */
#define GA_WATCHDOG_STATUS 86

/* Start the thread (limit_s > 0). */
void watchdog_start(ga_inj *st, long limit_s);
/* A measurement of a launch of `mangled` starts; ends. */
void watch_begin(ga_inj *st, const char *mangled);
void watch_end(ga_inj *st);

#endif
