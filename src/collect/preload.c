/* preload.c: loading CUPTI's metrics library early (see preload.h).
 *
 * cuptiProfilerInitialize, at the first launch, loads libnvperf_host.so
 * from libcupti's folder, and that library's constructors take 60 ms or
 * more of CPU on the program's thread (they touch much of its 120 MiB of
 * zero-initialised data; bench/probe/cpusample.c found it).
 * InitializeInjection loads it on a thread of its own instead, while the
 * program goes on to make its context.  Only the dynamic loader runs there,
 * no CUPTI call (CUPTI state set up beside a context being made crashed at
 * exit: docs/PERFORMANCE.md); CUPTI's own dlopen then finds the library by
 * its soname.  GA_ENV_NVPERF_PRELOAD=0 turns it off (the benchmark). */
#include <dlfcn.h>
#include <pthread.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cupti.h>

#include "collect.h"
#include "preload.h"
#include "protocol.h"

static struct {
	pthread_mutex_t lock;
	pthread_t thread;
	int running;              /* started, not joined yet */
	int loaded;               /* this process loaded it early */
	double load_s;            /* dlopen's time, on that thread */
	double wait_s;            /* time the program's thread waited for it */
} nvperf = {.lock = PTHREAD_MUTEX_INITIALIZER};

static void *preload_main(void *arg)
{
	char *path = arg;
	double t = ga_mono_seconds();
	/* Never closed: CUPTI holds it from its first launch to the end. */
	nvperf.loaded = dlopen(path, RTLD_NOW | RTLD_LOCAL) != NULL;
	nvperf.load_s = ga_mono_seconds() - t;
	free(path);
	return NULL;
}

/* Wait for the load to end: before CUPTI loads the library itself, before
 * a fork (a child must not inherit the loader's lock held), and at exit. */
void preload_join(void)
{
	pthread_mutex_lock(&nvperf.lock);
	if (nvperf.running) {
		double t = ga_mono_seconds();
		pthread_join(nvperf.thread, NULL);
		nvperf.running = 0;
		nvperf.wait_s += ga_mono_seconds() - t;
	}
	pthread_mutex_unlock(&nvperf.lock);
}

void preload_start(void)
{
	const char *slash;
	Dl_info di;
	char *path;

	if (ga_env_long(GA_ENV_NVPERF_PRELOAD, 1) == 0)
		return;
	if (!dladdr((void *)cuptiSubscribe, &di) || !di.dli_fname ||
	    !(slash = strrchr(di.dli_fname, '/')))
		return;
	path = ga_xasprintf("%.*s/libnvperf_host.so", (int)(slash - di.dli_fname), di.dli_fname);
	if (access(path, R_OK) != 0) {
		free(path);   /* CUPTI's own search will find it, or say why not */
		return;
	}
	pthread_mutex_lock(&nvperf.lock);
	if (ga_thread_start(&nvperf.thread, NULL, preload_main, path) == 0) {
		nvperf.running = 1;
		pthread_atfork(preload_join, NULL, NULL);
	} else {
		free(path);
	}
	pthread_mutex_unlock(&nvperf.lock);
}

void preload_stats(int *loaded, double *load_s, double *wait_s)
{
	*loaded = nvperf.loaded;
	*load_s = nvperf.load_s;
	*wait_s = nvperf.wait_s;
}
