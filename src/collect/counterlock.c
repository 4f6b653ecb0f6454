/* counterlock.c: the processes of a run take turns with the GPU counters.
 * See counterlock.h. */
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <sys/file.h>
#include <time.h>
#include <unistd.h>

#include "counterlock.h"
#include "protocol.h"
#include "writer.h"

void counters_lock_open(ga_inj *st, const char *dir)
{
	char *path = ga_xasprintf("%s/profiling.lock", dir);
	st->lock_fd = open(path, O_RDWR | O_CREAT | O_CLOEXEC, 0600);
	free(path);
}

/* GPU counters are a device-wide resource: while one process has the range
 * profiler enabled, another gets CUPTI_ERROR_HARDWARE_BUSY, and disabling and
 * re-enabling it within a context crashed on an H200.  So the processes of
 * a run (children inherit the injection library) take turns a process at a
 * time: the first to profile holds the run's lock file until its contexts
 * are destroyed or it exits (the kernel drops the lock even on a crash).  A
 * process waits up to GA_ENV_LOCK_WAIT seconds (default 10) and then runs
 * unprofiled, with a note, rather than risk stalling processes that wait for
 * each other.  Returns 1 when this process may profile. */
int hold_counters(ga_inj *st)
{
	if (st->lock_held || st->lock_fd < 0)
		return st->lock_fd < 0 || st->lock_held;
	if (st->lock_gave_up)
		return 0;
	long wait_ms = ga_env_long(GA_ENV_LOCK_WAIT, 10) * 1000;
	for (long waited = 0;; waited += 10) {
		if (flock(st->lock_fd, LOCK_EX | LOCK_NB) == 0) {
			st->lock_held = 1;
			return 1;
		}
		if (errno != EWOULDBLOCK && errno != EINTR)
			return 1;       /* no locking here: try anyway */
		if (waited >= wait_ms)
			break;
		struct timespec ts = {0, 10 * 1000 * 1000};
		nanosleep(&ts, NULL);
	}
	st->lock_gave_up = 1;
	ga_rec_error("busy", "another process of this run held the GPU counters for %ld s; this "
	             "process ran unprofiled (raise %s to wait longer)", wait_ms / 1000,
	             GA_ENV_LOCK_WAIT);
	return 0;
}

void release_counters(ga_inj *st, int objects_left)
{
	if (!objects_left && st->lock_held) {
		flock(st->lock_fd, LOCK_UN);
		st->lock_held = 0;
	}
}
