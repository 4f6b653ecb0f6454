/*
 * cpusample: where a process spends its CPU time, for the overhead work
 * (issue 5).  The GPU machine has no perf; this is a small sampling
 * profiler to preload into any process:
 *
 *   CPUSAMPLE_OUT=/dir LD_PRELOAD=build-dev/probe/cpusample.so PROGRAM...
 *
 * Every millisecond of CPU time the process uses (ITIMER_PROF, all threads;
 * in practice every kernel tick, 4 ms at HZ=250) it records the interrupted
 * thread's stack.  In its destructor (the last
 * to run: a preloaded library is initialised first) it writes
 * /dir/cpusample.PID: one line per sample,
 *   SECONDS TID frame;frame;...     (leaf first, wall clock, CLOCK_REALTIME)
 * and a last line "# cpu_s S", the process's CPU time, to weigh them.
 * where a frame is LIBRARY:SYMBOL (the nearest exported symbol, "?" where
 * there is none) or LIBRARY+0xOFFSET.  bench/probe/cpusample.py folds them.
 *
 * A thread that blocks SIGPROF (the injection library's loader thread does)
 * is not sampled: its ticks land on another thread's stack.
 * The signal handler only calls backtrace() (libgcc is loaded beforehand)
 * and clock_gettime; names are resolved at exit.  A diagnostic, not part of
 * gpuadvise.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE   /* dladdr */
#endif
#include <dlfcn.h>
#include <errno.h>
#include <execinfo.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <sys/time.h>
#include <time.h>
#include <unistd.h>

enum { MAX_SAMPLES = 200000, MAX_DEPTH = 40 };

struct sample {
	double t;
	int tid;
	int depth;
	void *pc[MAX_DEPTH];
};

static struct sample *samples;
static atomic_int n_samples;
static atomic_int dropped;

static void on_prof(int sig, siginfo_t *si, void *uc)
{
	(void)sig;
	(void)si;
	(void)uc;
	int saved = errno;
	int i = atomic_fetch_add(&n_samples, 1);
	if (i >= MAX_SAMPLES) {
		atomic_fetch_add(&dropped, 1);
		errno = saved;
		return;
	}
	struct sample *s = &samples[i];
	struct timespec ts;
	clock_gettime(CLOCK_REALTIME, &ts);
	s->t = (double)ts.tv_sec + ts.tv_nsec / 1e9;
	s->tid = (int)syscall(SYS_gettid);
	s->depth = backtrace(s->pc, MAX_DEPTH);
	errno = saved;
}

static void frame_name(void *pc, char *buf, size_t len)
{
	Dl_info di;
	if (!dladdr(pc, &di) || !di.dli_fname) {
		snprintf(buf, len, "?+%p", pc);
		return;
	}
	const char *lib = strrchr(di.dli_fname, '/');
	lib = lib ? lib + 1 : di.dli_fname;
	if (di.dli_sname)
		snprintf(buf, len, "%s:%s", lib, di.dli_sname);
	else
		snprintf(buf, len, "%s+0x%lx", lib,
			 (unsigned long)((char *)pc - (char *)di.dli_fbase));
}

__attribute__((destructor)) static void write_samples(void)
{
	struct itimerval off = {0};
	setitimer(ITIMER_PROF, &off, NULL);
	const char *dir = getenv("CPUSAMPLE_OUT");
	if (!dir || !samples)
		return;
	char path[4096];
	snprintf(path, sizeof path, "%s/cpusample.%d", dir, (int)getpid());
	FILE *f = fopen(path, "w");
	if (!f)
		return;
	int n = atomic_load(&n_samples);
	if (n > MAX_SAMPLES)
		n = MAX_SAMPLES;
	char name[512];
	for (int i = 0; i < n; i++) {
		struct sample *s = &samples[i];
		fprintf(f, "%.6f %d ", s->t, s->tid);
		/* Frame 0 is the handler, frame 1 the signal trampoline. */
		for (int k = 2; k < s->depth; k++) {
			frame_name(s->pc[k], name, sizeof name);
			fprintf(f, "%s%s", k > 2 ? ";" : "", name);
		}
		fputc('\n', f);
	}
	struct timespec cpu;
	clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &cpu);
	fprintf(f, "# cpu_s %.6f\n", (double)cpu.tv_sec + cpu.tv_nsec / 1e9);
	if (atomic_load(&dropped))
		fprintf(f, "# dropped %d\n", atomic_load(&dropped));
	fclose(f);
}

__attribute__((constructor)) static void cpusample_init(void)
{
	if (!getenv("CPUSAMPLE_OUT"))
		return;
	samples = calloc(MAX_SAMPLES, sizeof *samples);
	if (!samples)
		return;
	void *warm[4];
	backtrace(warm, 4); /* loads libgcc_s outside the handler */
	struct sigaction sa = {0};
	sa.sa_sigaction = on_prof;
	sa.sa_flags = SA_SIGINFO | SA_RESTART;
	sigemptyset(&sa.sa_mask);
	sigaction(SIGPROF, &sa, NULL);
	struct itimerval it = {{0, 1000}, {0, 1000}};
	setitimer(ITIMER_PROF, &it, NULL);
}
