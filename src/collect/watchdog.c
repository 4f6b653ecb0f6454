/* watchdog.c: ends a process whose measured launch makes no progress.
 * See watchdog.h. */
#include <pthread.h>
#include <signal.h>
#include <time.h>
#include <unistd.h>

#include "watchdog.h"
#include "writer.h"

static void fire(ga_inj *st, double waited)
{
	/* The thread that set it is still inside that launch's callback. */
	const char *name = atomic_load_explicit(&st->watch_name, memory_order_acquire);

	ga_rec_error("watchdog", "the watchdog stopped process %ld: a measured launch of %s had "
	             "not finished after %.0f s.  A kernel that waits for another stream or "
	             "process (a spin-wait on a flag, a collective) cannot finish while the "
	             "profiler runs it alone; leave it out with -k, or raise --watchdog if it is "
	             "only slow", (long)st->pid, name ? name : "?", waited);
	ga_rec_close();
	_exit(GA_WATCHDOG_STATUS);
}

static void *watch_main(void *arg)
{
	ga_inj *st = arg;
	struct timespec half = {0, 500 * 1000 * 1000};

	for (;;) {
		nanosleep(&half, NULL);
		double since = atomic_load_explicit(&st->watch_since, memory_order_acquire);
		if (since > 0 && ga_mono_seconds() - since > (double)st->watch_limit_s)
			fire(st, ga_mono_seconds() - since);
	}
	return NULL;
}

void watchdog_start(ga_inj *st, long limit_s)
{
	pthread_t t;
	pthread_attr_t attr;

	st->watch_limit_s = limit_s;
	if (limit_s <= 0)
		return;
	pthread_attr_init(&attr);
	pthread_attr_setdetachstate(&attr, PTHREAD_CREATE_DETACHED);
	if (ga_thread_start(&t, &attr, watch_main, st) != 0)
		st->watch_limit_s = 0;
	pthread_attr_destroy(&attr);
}

void watch_begin(ga_inj *st, const char *mangled)
{
	if (st->watch_limit_s <= 0)
		return;
	atomic_store_explicit(&st->watch_name, mangled, memory_order_relaxed);
	atomic_store_explicit(&st->watch_since, ga_mono_seconds(), memory_order_release);
}

void watch_end(ga_inj *st)
{
	if (st->watch_limit_s > 0)
		atomic_store_explicit(&st->watch_since, 0.0, memory_order_release);
}
