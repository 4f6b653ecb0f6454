/* inject.c: libgpuadvise-inject.so, loaded into an unmodified CUDA program
 * through CUDA_INJECTION64_PATH.  The driver calls InitializeInjection(); we
 * subscribe to the driver's kernel-launch callbacks and profile each selected
 * launch with the CUPTI Range Profiler (rangeprof.c; auto range, kernel
 * replay): Start at the launch's ENTER, Stop + decode + evaluate at its EXIT.
 * Which launches, with which metric set, is policy.c's decision; a loop's
 * launches may be measured across its iterations instead (loopreplay.c).
 *
 * Every result is appended at once, as one JSON line, to RUN_DIR/<pid>.rec
 * (writer.c; the record types: protocol.h): whatever happens to the
 * application later (abort, kill -9, _exit), the launches profiled so far
 * are on disk for the launcher.  Memory held here does not grow with the
 * number of launches: only the (name, grid, block) repeat counters grow,
 * with the number of distinct kernels. */
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <time.h>
#include <unistd.h>

#include "ckpt.h"
#include "inject.h"
#include "nvtx.h"
#include "protocol.h"
#include "sass.h"
#include "writer.h"

#define GA_EXPORT __attribute__((visibility("default")))

inject_state inj = {.lock = PTHREAD_MUTEX_INITIALIZER, .lock_fd = -1};
ga_sched sched = {.last_slot = -1};

static double real_seconds(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_REALTIME, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

/* The phases of inject.h, as GA_ENV_TIMING_LOG names them. */
static const char *const phase_names[PH_N] = {
	"init", "pack", "meta", "enable", "cdata", "config", "start", "kernel",
	"stop", "decode", "eval", "record",
};

/* Charge the time since *t to phase ph and restart *t. */
void phase(int ph, double *t)
{
	double n = ga_mono_seconds();
	inj.phase_s[ph] += n - *t;
	inj.phase_n[ph]++;
	*t = n;
}

/* ---- loading CUPTI's metrics library early --------------------------------
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

static void preload_start(void)
{
	const char *slash;
	Dl_info di;
	sigset_t all, old;
	char *path;

	if (env_long(GA_ENV_NVPERF_PRELOAD, 1) == 0)
		return;
	if (!dladdr((void *)cuptiSubscribe, &di) || !di.dli_fname ||
	    !(slash = strrchr(di.dli_fname, '/')))
		return;
	path = ga_xasprintf("%.*s/libnvperf_host.so", (int)(slash - di.dli_fname), di.dli_fname);
	if (access(path, R_OK) != 0) {
		free(path);   /* CUPTI's own search will find it, or say why not */
		return;
	}
	/* The program's signals stay with the program's threads. */
	sigfillset(&all);
	pthread_sigmask(SIG_SETMASK, &all, &old);
	pthread_mutex_lock(&nvperf.lock);
	if (pthread_create(&nvperf.thread, NULL, preload_main, path) == 0) {
		nvperf.running = 1;
		pthread_atfork(preload_join, NULL, NULL);
	} else {
		free(path);
	}
	pthread_mutex_unlock(&nvperf.lock);
	pthread_sigmask(SIG_SETMASK, &old, NULL);
}

/* ---- the launch callbacks ------------------------------------------------ */

/* GPU counters are a device-wide resource: while one process has the range
 * profiler enabled, another gets CUPTI_ERROR_HARDWARE_BUSY, and disabling and
 * re-enabling it within a context crashed on an H200.  So the processes of
 * a run (children inherit the injection library) take turns a process at a
 * time: the first to profile holds the run's lock file until its contexts
 * are destroyed or it exits (the kernel drops the lock even on a crash).  A
 * process waits up to GA_ENV_LOCK_WAIT seconds (default 10) and then runs
 * unprofiled, with a note, rather than risk stalling processes that wait for
 * each other.  Returns 1 when this process may profile. */
int hold_counters(void)
{
	if (inj.lock_held || inj.lock_fd < 0)
		return inj.lock_fd < 0 || inj.lock_held;
	if (inj.lock_gave_up)
		return 0;
	long wait_ms = env_long(GA_ENV_LOCK_WAIT, 10) * 1000;
	for (long waited = 0;; waited += 10) {
		if (flock(inj.lock_fd, LOCK_EX | LOCK_NB) == 0) {
			inj.lock_held = 1;
			return 1;
		}
		if (errno != EWOULDBLOCK && errno != EINTR)
			return 1;       /* no locking here: try anyway */
		if (waited >= wait_ms)
			break;
		struct timespec ts = {0, 10 * 1000 * 1000};
		nanosleep(&ts, NULL);
	}
	inj.lock_gave_up = 1;
	ga_rec_error("busy", "another process of this run held the GPU counters for %ld s; this "
	             "process ran unprofiled (raise %s to wait longer)", wait_ms / 1000,
	             GA_ENV_LOCK_WAIT);
	return 0;
}

static void release_counters(void)
{
	int any = 0;
	for (ctx_state *cs = inj.ctxs; cs; cs = cs->next)
		any |= cs->rp != NULL;
	if (!any && inj.lock_held) {
		flock(inj.lock_fd, LOCK_UN);
		inj.lock_held = 0;
	}
}

void stop_profiling_everywhere(void)
{
	/* Launch count reached: stop listening, so the rest runs at full speed. */
	inj.enabled = 0;
	if (!ga_sass_outstanding())
		cuptiEnableDomain(0, inj.sub, CUPTI_CB_DOMAIN_DRIVER_API);
}

/* A measured launch: its metric set's values vals[] into the profile's
 * metric order, its duration into the kernel's mean, its record out. */
void launch_done(ga_launch *l, const chip_cfg *chip, const metric_set *ms, const double *vals,
                 ga_repeat_slot *rep)
{
	l->values = ga_xmalloc(inj.prof.n_metrics * sizeof(double));
	for (size_t i = 0; i < inj.prof.n_metrics; i++)
		l->values[i] = NAN;
	for (size_t i = 0; i < ms->n_names; i++) {
		l->values[ms->slot[i]] = vals[i];
		if (strcmp(ms->names[i], "gpu__time_duration.sum") == 0)
			l->duration_ns = vals[i];
	}
	/* Before the duration feeds the kernel's mean: a loop's range also
	 * timed the GPU waiting for the launch. */
	l->range_ns = ga_launch_range_correct((const char *const *)inj.prof.metrics,
	                                      inj.prof.n_metrics, l->values, &l->duration_ns,
	                                      chip->range_marker_cycles);
	ga_sched_note_duration(&sched, rep, l->duration_ns);
	ga_nvtx_profiled(ga_sched_slot(&sched, rep), l->nvtx);
	ga_sass_note(l->mangled, l->name, (uint32_t)l->context, inj.prof.metrics, l->values, inj.prof.n_metrics);
	ga_rec_launch(&inj.prof, l);
}

/* The stall run (--stalls): PC sampling of the listed kernels' first
 * launch, nothing else (sass.c). */
static void stall_run_launch(const CUpti_CallbackData *cb, const char *mangled,
                             const unsigned grid[3], const unsigned block[3])
{
	CUdevice dev;

	if (ga_sass_wants(mangled, cb->contextUid) && cuCtxGetDevice(&dev) == CUDA_SUCCESS &&
	    ga_sass_begin(cb->context, dev, cb->contextUid, mangled, grid, block) == 0) {
		inj.pending = PENDING_SASS;
		inj.pending_ctx = NULL;
	}
}

/* A later launch of a kernel flagged for source lines, once it has had
 * every metric set: SASS metrics instead of the range profiler (sass.c,
 * which counts the launch as unprofiled itself).  1 when it is measured
 * so. */
static int source_launch(const CUpti_CallbackData *cb, ga_repeat_slot *rep, const char *mangled,
                         const unsigned grid[3], const unsigned block[3])
{
	ctx_state *cs;

	if (!ga_sass_wants(mangled, cb->contextUid))
		return 0;
	cs = ctx_get(cb->context, cb->contextUid);
	if (!cs->ok || !ga_sched_source_turn(&sched, rep, cs->cfg->n_sets))
		return 0;
	/* A loop's object stays beside SASS patching (idle, not started): on
	 * the H200's transformer step ten SASS launches fell between loops, and
	 * the loops' values matched those of a run that dropped the object
	 * (median ratio 1.00 over 93 launches; loss lines identical). */
	if (cs->loop_set >= 0)
		inj.loop_sass_beside++;
	if (ga_sass_begin(cs->ctx, cs->cudev, cs->uid, mangled, grid, block) == 0) {
		ga_sched_uncount(&sched, rep);
		inj.pending = PENDING_SASS;
		inj.pending_ctx = cs;
		return 1;
	}
	return 0;
}

/* Measure the launch with the range profiler, if the policy says so.
 * Takes name (NULL: not demangled yet). */
static void range_launch(CUpti_CallbackId cbid, const CUpti_CallbackData *cb,
                         ga_repeat_slot *rep, int in_a_row, const launch_args *a, char *name)
{
	ga_launch *l = &inj.pending_launch;
	ctx_state *cs;
	size_t want = 0;
	long cur;

	if (!inj.enabled || !ga_sched_again(&sched, rep, 0) || !hold_counters()) {
		free(name);
		return;
	}
	cs = ctx_get(cb->context, cb->contextUid);
	if (!cs->ok) {
		free(name);
		return;
	}
	cur = cs->rp ? cs->cur_set : -1;
	if (ga_sched_decide(&sched, rep, cs->cfg->n_sets, cur, in_a_row, &want) != GA_SCHED_PROFILE) {
		free(name);
		return;
	}

	inj.ph_t = ga_mono_seconds();
	launch_meta(l, cs, a, cb->contextUid, name);
	ga_sched_begin(&sched, rep, want, cur);
	inj.pending_set = want;
	l->metric_set = (int)inj.pending_set;
	/* A first launch that takes every set may be flagged for source lines
	 * and never come again: its memory is saved for a second run
	 * (sassreplay.c). */
	inj.pending_cbid = cbid;
	inj.pending_params = cb->functionParams;
	if (sched.full && rep->profiled == 0)
		ga_sass_replay_prepare(cs->ctx, cb->contextUid, l->mangled, l->name);
	phase(PH_META, &inj.ph_t);
	if (measure_begin(cs, inj.pending_set) != 0) {
		ga_sass_replay_finish(cs->ctx, cs->cudev, cs->uid, l->mangled, l->grid, l->block,
		                      cbid, NULL);
		launch_free(l);
		return;
	}
	ga_sched_profiled(&sched, rep);
	inj.pending = PENDING_RANGE;
	inj.pending_ctx = cs;
	inj.pending_slot = (size_t)ga_sched_slot(&sched, rep);
}

static int capturing(CUstream stream)
{
	CUstreamCaptureStatus st = CU_STREAM_CAPTURE_STATUS_NONE;
	return cuStreamIsCapturing(stream, &st) == CUDA_SUCCESS &&
	       st != CU_STREAM_CAPTURE_STATUS_NONE;
}

static int graph_launch(CUpti_CallbackId cbid)
{
	return cbid == CUPTI_DRIVER_TRACE_CBID_cuGraphLaunch ||
	       cbid == CUPTI_DRIVER_TRACE_CBID_cuGraphLaunch_ptsz;
}

/* A CUDA graph's launch: its kernels pass no launch callback, so they are
 * not profiled (the report says how many graph launches there were).  In
 * the middle of a loop's pass its kernels would be ranges that the pass
 * cannot place: the pass is broken, as by any launch out of the pattern. */
static void on_graph_launch(const CUpti_CallbackData *cb)
{
	sched.graph_launches++;
	if (inj.enabled && !sched.loop.off)
		loop_graph_launch(cb);
}

static void on_enter(CUpti_CallbackId cbid, const CUpti_CallbackData *cb)
{
	CUfunction f = NULL;
	unsigned grid[3], block[3], smem = 0;
	CUstream stream = NULL;
	char *name;
	ga_repeat_slot *rep;
	int in_a_row;

	if (sched.total_launches++ == 0)
		inj.first_launch_at = real_seconds();
	if ((!inj.enabled && !ga_sass_outstanding()) ||
	    launch_params(cbid, cb->functionParams, &f, grid, block, &smem, &stream))
		return;
	/* Recorded into a CUDA graph being captured, not run: nothing to
	 * measure, and a replay or a range profiler call inside a capture
	 * would invalidate it.  The graph's launches are counted instead. */
	if (capturing(stream)) {
		sched.total_launches--;
		sched.captured++;
		return;
	}
	const char *mangled = cb->symbolName ? cb->symbolName : "?";
	launch_args a = {f, grid, block, smem, stream, mangled};
	/* Demangling costs an allocation on every launch: only for a name
	 * filter here, otherwise once the launch is to be profiled. */
	name = ga_sched_filtered(&sched) ? demangle(mangled) : NULL;
	if (!ga_sched_selected(&sched, mangled, name) || !ga_sched_past_skip(&sched)) {
		free(name);
		return;
	}
	rep = ga_sched_count(&sched, mangled, grid, block, &in_a_row);
	ga_nvtx_count(ga_sched_slot(&sched, rep));
	if (!sched.loop.off && inj.enabled && loop_launch(rep, cb, &a, in_a_row)) {
		free(name);
		return;
	}
	/* A launch the loop skipped: the range profiler holds the loop's
	 * configuration, so no replay and no source lines now. */
	if (sched.loop.active) {
		ga_sched_wait_loop(&sched, rep);
		free(name);
		return;
	}
	if (ga_sass_stall_run()) {
		stall_run_launch(cb, mangled, grid, block);
		free(name);
		return;
	}
	if (source_launch(cb, rep, mangled, grid, block)) {
		free(name);
		return;
	}
	range_launch(cbid, cb, rep, in_a_row, &a, name);
}

static void keep_image(const uint8_t *data, size_t size)
{
	int fd;

	if (!inj.keep_image || inj.image_kept)
		return;
	inj.image_kept = 1;
	fd = open(inj.keep_image, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
	if (fd < 0)
		return;
	ga_write_all(fd, data, size);
	close(fd);
}

static void on_exit_launch(void)
{
	ctx_state *cs = inj.pending_ctx;
	ga_launch *l = &inj.pending_launch;
	const metric_set *c = &cs->cfg->sets[inj.pending_set];
	uint8_t *cdata = cs->cdata[inj.pending_set];
	size_t cdata_size = cs->cdata_size[inj.pending_set];
	double *vals = NULL;
	size_t nranges = 0, dropped = 0;
	ga_error err = {0};

	inj.pending = PENDING_NONE;
	inj.pending_ctx = NULL;
	phase(PH_KERNEL, &inj.ph_t);
	CUPTI_TRY(range_stop(cs, NULL), "stopping the range profiler");
	phase(PH_STOP, &inj.ph_t);
	CUPTI_TRY(range_decode(cs, &dropped), "decoding the counter data");
	if (dropped)
		ga_rec_error("cupti", "%zu range(s) dropped for %s", dropped, l->name);
	phase(PH_DECODE, &inj.ph_t);
	if (ga_host_num_ranges(cdata, cdata_size, &nranges, &err) != 0) {
		ga_rec_error("cupti", "%s", err.msg);
		goto out;
	}
	if (nranges < 1) {
		ga_rec_error("cupti", "no counter data for launch %ld of %s", l->index, l->name);
		goto out;
	}
	keep_image(cdata, cdata_size);
	vals = ga_xcalloc(c->n_names, sizeof(*vals));
	ga_host_evaluate(c->host, cdata, cdata_size, nranges - 1, c->names, c->n_names, vals, &err);
	phase(PH_EVAL, &inj.ph_t);
	launch_done(l, cs->cfg, c, vals, &sched.repeats[inj.pending_slot]);
	phase(PH_RECORD, &inj.ph_t);
	ga_sass_replay_finish(cs->ctx, cs->cudev, cs->uid, l->mangled, l->grid, l->block,
	                      inj.pending_cbid, inj.pending_params);
	if (ga_sched_measured(&sched))
		stop_profiling_everywhere();
out:
	/* No values: the checkpoint, if any, goes unused. */
	ga_sass_replay_finish(cs->ctx, cs->cudev, cs->uid, l->mangled, l->grid, l->block,
	                      inj.pending_cbid, NULL);
	free(vals);
	launch_free(l);
}

static __thread int this_thread_pending;

static void CUPTIAPI callback(void *userdata, CUpti_CallbackDomain domain,
                              CUpti_CallbackId cbid, const void *data)
{
	(void)userdata;
	if (domain == CUPTI_CB_DOMAIN_NVTX) {
		ga_nvtx_callback(cbid, data);
		return;
	}
	if (domain == CUPTI_CB_DOMAIN_RESOURCE) {
		const CUpti_ResourceData *rd = data;
		if (cbid == CUPTI_CBID_RESOURCE_MODULE_LOADED) {
			/* Not under inj.lock: with lazy loading the driver loads a
			 * module inside cuLaunchKernel, between the ENTER and EXIT
			 * of a launch that holds inj.lock (sass.c locks its own). */
			ga_sass_module_loaded(rd->resourceDescriptor);
			return;
		}
		if (cbid == CUPTI_CBID_RESOURCE_CONTEXT_CREATED) {
			pthread_mutex_lock(&inj.lock);
			if (inj.ctx_created_at == 0)
				inj.ctx_created_at = real_seconds();
			ga_sass_context_created(rd->context);
			pthread_mutex_unlock(&inj.lock);
			return;
		}
		if (cbid != CUPTI_CBID_RESOURCE_CONTEXT_DESTROY_STARTING)
			return;
		pthread_mutex_lock(&inj.lock);
		ga_sass_context_destroyed(rd->context);
		for (ctx_state *cs = inj.ctxs; cs; cs = cs->next)
			if (cs->ctx == rd->context && cs->ok)
				ctx_release(cs);
		release_counters();
		pthread_mutex_unlock(&inj.lock);
		return;
	}
	/* The second run of a launch for its source lines (sassreplay.c),
	 * made by this thread inside that launch's EXIT, under inj.lock. */
	if (domain != CUPTI_CB_DOMAIN_DRIVER_API || ga_ckpt_replaying())
		return;
	const CUpti_CallbackData *cb = data;
	if (cb->callbackSite == CUPTI_API_ENTER && graph_launch(cbid)) {
		pthread_mutex_lock(&inj.lock);
		on_graph_launch(cb);
		pthread_mutex_unlock(&inj.lock);
	} else if (cb->callbackSite == CUPTI_API_ENTER) {
		pthread_mutex_lock(&inj.lock);
		on_enter(cbid, cb);
		/* While a launch is measured this thread keeps the lock until the
		 * launch's EXIT: the range profiler measures one launch at a time,
		 * so launches from other threads wait at their ENTER. */
		if (inj.pending != PENDING_NONE)
			this_thread_pending = 1;
		else
			pthread_mutex_unlock(&inj.lock);
	} else if (this_thread_pending) {
		this_thread_pending = 0;
		if (inj.pending == PENDING_SASS) {
			inj.pending = PENDING_NONE;
			ga_sass_end();
			if (!inj.enabled && !ga_sass_outstanding())
				stop_profiling_everywhere();
		} else if (inj.pending == PENDING_LOOP_PASS) {
			loop_exit_launch();
		} else if (inj.pending == PENDING_LOOP_RANGE) {
			loop_exit_range();
		} else {
			on_exit_launch();
		}
		pthread_mutex_unlock(&inj.lock);
	}
}

/* Also the wall-clock times of InitializeInjection and of the exit
 * handler, so that bench/phases.sh can split the process's time into
 * before, inside and after the injection library's life. */
static void timing_log(void)
{
	const char *path = getenv(GA_ENV_TIMING_LOG);
	FILE *f;

	if (!path || !*path || !(f = fopen(path, "a")))
		return;
	fprintf(f, "pid %ld init_at %.3f ctx_created_at %.3f first_launch_at %.3f exit_at %.3f "
	        "profiled %ld set_changes %ld profiler_init %.4f device_supported %.4f "
	        "availability %.4f availability_reads %ld loop_launches %ld loop_passes %ld "
	        "loop_aborted %ld loop_skips %ld loop_broken %ld loop_serialized %ld loop_over %d "
	        "graph_launches %ld captured %ld "
	        "nvperf_preload %d nvperf_load %.4f nvperf_wait %.4f objects %ld objects_kept %ld "
	        "loop_drops_broken %ld loop_drops_replay %ld loop_sass_beside %ld",
	        (long)inj.pid, inj.init_at, inj.ctx_created_at, inj.first_launch_at, real_seconds(),
	        sched.profiled, sched.set_changes, inj.init_profiler_s, inj.init_supported_s,
	        inj.init_avail_s, inj.avail_reads, sched.loop.launches, sched.loop.passes,
	        sched.loop.aborted, sched.loop.skips, sched.loop.broken_passes, sched.loop.serialized,
	        (int)sched.loop.over, sched.graph_launches,
	        sched.captured, nvperf.loaded, nvperf.load_s, nvperf.wait_s, inj.objects,
	        inj.objects_kept, inj.loop_drops_broken, inj.loop_drops_replay, inj.loop_sass_beside);
	for (int i = 0; i < PH_N; i++)
		if (inj.phase_n[i])
			fprintf(f, " %s %.4f/%ld", phase_names[i], inj.phase_s[i], inj.phase_n[i]);
	fputc('\n', f);
	fclose(f);
}

static void at_exit(void)
{
	preload_join();
	pthread_mutex_lock(&inj.lock);
	/* Launches left unprofiled by the per-kernel bound, so that the report
	 * can still charge their time to the kernel. */
	for (size_t i = 0; i < sched.n_repeats; i++) {
		const ga_repeat_slot *r = &sched.repeats[i];
		if (r->profiled == 0 || r->count <= r->profiled)
			continue;
		ga_unprofiled u = {r->mangled, (int)inj.pid, {r->grid[0], r->grid[1], r->grid[2]},
		                   {r->block[0], r->block[1], r->block[2]},
		                   r->count - r->profiled, r->below_share};
		ga_nvtx_rec_unprofiled((long)i, &u);
	}
	{
		char note[512];
		long never = 0, never_launches = 0;
		if (ga_loop_budget_note(&sched, note, sizeof(note)))
			ga_rec_error("loop_replay", "%s", note);
		/* Kernels that waited for a loop to measure them and were not
		 * launched again inside one (nor after the wait) */
		for (size_t i = 0; i < sched.n_repeats; i++)
			if (sched.repeats[i].profiled == 0 && sched.repeats[i].waiting) {
				never++;
				never_launches += sched.repeats[i].count;
			}
		if (never && inj.enabled)
			ga_rec_error("loop_replay", "%ld kernel(s) (%ld launch(es)) were not measured: "
			             "first launched once the program repeated, they waited for a "
			             "loop's iterations that did not hold them (--no-loop-replay "
			             "measures every kernel at its first launch)", never, never_launches);
	}
	double setup_s = inj.phase_s[PH_INIT] + inj.phase_s[PH_PACK], measure_s = 0;
	for (int i = PH_ENABLE; i <= PH_RECORD; i++)
		measure_s += inj.phase_s[i];
	ga_rec_end(sched.total_launches, sched.matched, sched.profiled, setup_s, measure_s,
	           sched.loop.launches, sched.graph_launches);
	ga_rec_close();
	timing_log();
	pthread_mutex_unlock(&inj.lock);
}

long env_long(const char *name, long dflt)
{
	const char *s = getenv(name);
	char *end;
	long v;
	if (!s || !*s)
		return dflt;
	v = strtol(s, &end, 10);
	return *end ? dflt : v;
}

static void init_filters(void)
{
	const char *k = getenv(GA_ENV_KERNEL);
	char buf[256];

	if (ga_sched_set_filter(&sched, k, buf, sizeof(buf)) != 0) {
		ga_rec_error("usage", "bad kernel regex '%s': %s", k + 6, buf);
		inj.enabled = 0;
	}
	sched.skip = env_long(GA_ENV_LAUNCH_SKIP, 0);
	sched.count = env_long(GA_ENV_LAUNCH_COUNT, -1);
	sched.max_per_kernel = env_long(GA_ENV_MAX_PER_KERNEL, 0);
	sched.full = inj.max_passes == 0;
	/* Loop replay needs every launch between two of an iteration's to be one
	 * of its ranges: no name filter, no launch count. */
	sched.loop.off = ga_sched_filtered(&sched) || sched.count >= 0 ||
	                 env_long(GA_ENV_LOOP_REPLAY, 1) == 0;
	{
		const char *s = getenv(GA_ENV_MIN_SHARE);
		char *end;
		double v = s && *s ? strtod(s, &end) : 0;
		sched.min_share = s && *s && !*end && v > 0 && v <= 100 ? v / 100 : 0;
	}

	const char *keep = getenv(GA_ENV_KEEP_IMAGE);
	inj.keep_image = keep && *keep ? ga_xstrdup(keep) : NULL;
}

static void init_metrics(void)
{
	const char *m = getenv(GA_ENV_METRICS);
	ga_profile_init(&inj.prof);
	if (!m || !*m)
		m = "gpu__time_duration.sum";
	char *copy = ga_xstrdup(m), *save = NULL, *bsave = NULL;
	size_t b = 0, nb = 0, cap = 0;
	/* ';' between bundles (packed into metric sets whole), ',' within. */
	for (char *bt = strtok_r(copy, ";", &bsave); bt; bt = strtok_r(NULL, ";", &bsave), b++) {
		for (char *t = strtok_r(bt, ",", &save); t; t = strtok_r(NULL, ",", &save)) {
			size_t before = inj.prof.n_metrics;
			if (!*t || ga_profile_add_metric(&inj.prof, t) < before)
				continue;
			GA_PUSH(inj.bundle, nb, cap, b);
		}
	}
	free(copy);
	if (ga_profile_metric_index(&inj.prof, "gpu__time_duration.sum") < 0) {
		ga_profile_add_metric(&inj.prof, "gpu__time_duration.sum");
		GA_PUSH(inj.bundle, nb, cap, b);
	}
	inj.max_passes = env_long(GA_ENV_MAX_PASSES, 0);
}

static const CUpti_CallbackId launch_cbids[] = {
	CUPTI_DRIVER_TRACE_CBID_cuLaunchKernel,
	CUPTI_DRIVER_TRACE_CBID_cuLaunchKernel_ptsz,
	CUPTI_DRIVER_TRACE_CBID_cuLaunchKernelEx,
	CUPTI_DRIVER_TRACE_CBID_cuLaunchKernelEx_ptsz,
	CUPTI_DRIVER_TRACE_CBID_cuLaunchCooperativeKernel,
	CUPTI_DRIVER_TRACE_CBID_cuLaunchCooperativeKernel_ptsz,
	CUPTI_DRIVER_TRACE_CBID_cuGraphLaunch,
	CUPTI_DRIVER_TRACE_CBID_cuGraphLaunch_ptsz,
};

GA_EXPORT int InitializeInjection(void)
{
	const char *dir;
	char *path = NULL;
	CUptiResult r;

	pthread_mutex_lock(&inj.lock);
	if (inj.initialized) {
		pthread_mutex_unlock(&inj.lock);
		return 1;
	}
	inj.initialized = 1;
	inj.init_at = real_seconds();
	inj.pid = getpid();
	dir = getenv(GA_ENV_RUN_DIR);
	if (!dir || !*dir) {
		fprintf(stderr, "gpuadvise-inject: %s is not set; run the program through gpuadvise\n",
		        GA_ENV_RUN_DIR);
		pthread_mutex_unlock(&inj.lock);
		return 1;
	}
	if (ga_rec_open(dir, (int)inj.pid) != 0) {
		fprintf(stderr, "gpuadvise-inject: cannot write records in %s: %s\n", dir,
		        strerror(errno));
		pthread_mutex_unlock(&inj.lock);
		return 1;
	}
	path = ga_xasprintf("%s/profiling.lock", dir);
	inj.lock_fd = open(path, O_RDWR | O_CREAT | O_CLOEXEC, 0600);
	free(path);
	inj.enabled = 1;
	init_metrics();
	init_filters();
	ga_sass_init((int)inj.pid);
	if (ga_sass_stall_run())
		inj.enabled = 0;   /* PC sampling only: no range profiler */
	ga_rec_start((int)getppid(), getenv(GA_ENV_TOOL_VERSION));
	r = cuptiSubscribe(&inj.sub, (CUpti_CallbackFunc)callback, NULL);
	if (r != CUPTI_SUCCESS) {
		if (r == CUPTI_ERROR_MULTIPLE_SUBSCRIBERS_NOT_SUPPORTED)
			ga_rec_error("another_profiler",
			             "another CUDA profiler or tool (ncu, nsys, cuda-gdb, a framework's "
			             "profiler) is already attached to this process");
		else
			ga_rec_error(cupti_code(r), "cuptiSubscribe failed: %s", ga_cupti_result_string(r));
		inj.enabled = 0;
		goto out;
	}
	for (size_t i = 0; i < GA_ARRAY_LEN(launch_cbids); i++)
		cuptiEnableCallback(1, inj.sub, CUPTI_CB_DOMAIN_DRIVER_API, launch_cbids[i]);
	cuptiEnableCallback(1, inj.sub, CUPTI_CB_DOMAIN_RESOURCE, CUPTI_CBID_RESOURCE_CONTEXT_DESTROY_STARTING);
	ga_nvtx_enable(inj.sub);
	if (ga_sass_enabled())
		cuptiEnableCallback(1, inj.sub, CUPTI_CB_DOMAIN_RESOURCE, CUPTI_CBID_RESOURCE_MODULE_LOADED);
	/* The stall run enables PC sampling there; the others only note the
	 * time (bench/phases.sh). */
	cuptiEnableCallback(1, inj.sub, CUPTI_CB_DOMAIN_RESOURCE, CUPTI_CBID_RESOURCE_CONTEXT_CREATED);
	if (sched.count == 0)
		stop_profiling_everywhere();
	else if (inj.enabled)
		preload_start();
out:
	atexit(at_exit);
	pthread_mutex_unlock(&inj.lock);
	return 1;
}
