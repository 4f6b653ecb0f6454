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
 * with the number of distinct kernels.
 *
 * This file holds the callbacks and owns the library's one state (ga_inj,
 * injstate.h), which it hands to what it calls.  The calls run one way:
 * the callbacks ask the policy (policy.c) and drive the loop's passes
 * (loopreplay.c) and the mechanisms (rangeprof.c, launchinfo.c,
 * counterlock.c, measured.c, preload.c, the source view's sass.c); none of
 * those calls back.  A mechanism that finds the counters busy says so in
 * the state (counters_busy) and the callback stops profiling. */
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "activity.h"
#include "ckpt.h"
#include "counterlock.h"
#include "injstate.h"
#include "launchinfo.h"
#include "loopreplay.h"
#include "measured.h"
#include "nvtx.h"
#include "nvtxcb.h"
#include "preload.h"
#include "protocol.h"
#include "rangeprof.h"
#include "sass.h"
#include "watchdog.h"
#include "writer.h"

#define GA_EXPORT __attribute__((visibility("default")))

/* The library's one state: every function below that needs it is handed
 * &inj. */
static ga_inj inj = {.lock = PTHREAD_MUTEX_INITIALIZER,
                     .sched = {.last_slot = -1}};

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

/* ---- the launch callbacks ------------------------------------------------ */


static void stop_profiling_everywhere(void)
{
	/* Launch count reached: stop listening, so the rest runs at full speed. */
	inj.enabled = 0;
	/* the timeline still wants the launches and calls */
	if (!ga_sass_outstanding() && !activity_on())
		cuptiEnableDomain(0, inj.sub, CUPTI_CB_DOMAIN_DRIVER_API);
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
	cs = ctx_get(&inj, cb->context, cb->contextUid);
	if (!cs->ok || !ga_sched_source_turn(&inj.sched, rep, cs->cfg->n_sets))
		return 0;
	/* A loop's object stays beside SASS patching (idle, not started): on
	 * the H200's transformer step ten SASS launches fell between loops, and
	 * the loops' values matched those of a run that dropped the object
	 * (median ratio 1.00 over 93 launches; loss lines identical). */
	if (cs->loop_set >= 0)
		inj.loop_sass_beside++;
	if (ga_sass_begin(cs->ctx, cs->cudev, cs->uid, mangled, grid, block) == 0) {
		ga_sched_uncount(&inj.sched, rep);
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

	if (!inj.enabled || rep->no_replay || !ga_sched_again(&inj.sched, rep, 0)) {
		free(name);
		return;
	}
	cs = ctx_get(&inj, cb->context, cb->contextUid);
	if (!cs->ok || !hold_counters(&inj, cs)) {
		free(name);
		return;
	}
	cur = cs->rp ? cs->cur_set : -1;
	if (rep->count == 1)      /* the policy reads it at a kernel's first launch only */
		inj.sched.run_s = ga_mono_seconds() - inj.started_mono;
	if (ga_sched_decide(&inj.sched, rep, cs->cfg->n_sets, cur, in_a_row, &want) != GA_SCHED_PROFILE) {
		free(name);
		return;
	}

	inj.ph_t = inj.replay_t0 = ga_mono_seconds();
	launch_meta(l, cs, a, cb->contextUid, name, (int)inj.pid, inj.sched.total_launches - 1);
	ga_sched_begin(&inj.sched, rep, want, cur);
	inj.pending_set = want;
	l->metric_set = (int)inj.pending_set;
	/* A first launch that takes every set may be flagged for source lines
	 * and never come again: its memory is saved for a second run
	 * (sassreplay.c). */
	inj.pending_cbid = cbid;
	inj.pending_params = cb->functionParams;
	if (inj.sched.full && rep->profiled == 0)
		ga_sass_replay_prepare(cs->ctx, cb->contextUid, l->mangled, l->name);
	phase(&inj, PH_META, &inj.ph_t);
	if (measure_begin(&inj, cs, inj.pending_set) != 0) {
		ga_sass_replay_finish(cs->ctx, cs->cudev, cs->uid, l->mangled, l->grid, l->block,
		                      cbid, NULL);
		launch_free(l);
		return;
	}
	ga_sched_profiled(&inj.sched, rep);
	inj.pending = PENDING_RANGE;
	inj.pending_ctx = cs;
	inj.pending_slot = (size_t)ga_sched_slot(&inj.sched, rep);
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
	inj.sched.graph_launches++;
	if (inj.enabled && !inj.sched.loop.off)
		loop_graph_launch(&inj, cb);
}

/* A kernel seen for the first time: does it wait for another process (a
 * communication kernel, GA_ENV_NO_REPLAY)?  Then it is never replayed. */
static void mark_no_replay(ga_repeat_slot *rep, const char *mangled, const char *name)
{
	char *demangled;

	if (!inj.no_replay)
		return;
	demangled = name ? NULL : demangle(mangled);
	rep->no_replay = ga_name_filter_matches(inj.no_replay, name ? name : demangled, mangled);
	free(demangled);
}

/* This thread's launch in progress goes into a graph being captured (as
 * far as on_enter looked: only while profiling): the timeline expects no
 * GPU record of it. */
static __thread int launch_captured;

/* A launch that passed the filter and was counted: loop replay, the
 * source-line run or the range profiler takes it, or nothing does. */
static void selected_launch(CUpti_CallbackId cbid, const CUpti_CallbackData *cb,
                            ga_repeat_slot *rep, int in_a_row, const launch_args *a, char *name)
{
	ga_nvtx_count(ga_sched_slot(&inj.sched, rep));
	if (!inj.sched.loop.off && inj.enabled && loop_launch(&inj, rep, cb, a, in_a_row)) {
		free(name);
		return;
	}
	/* A launch the loop skipped: the range profiler holds the loop's
	 * configuration, so no replay and no source lines now. */
	if (inj.sched.loop.active) {
		ga_sched_wait_loop(&inj.sched, rep);
		free(name);
		return;
	}
	if (ga_sass_stall_run()) {
		stall_run_launch(cb, a->mangled, a->grid, a->block);
		free(name);
		return;
	}
	if (source_launch(cb, rep, a->mangled, a->grid, a->block)) {
		free(name);
		return;
	}
	range_launch(cbid, cb, rep, in_a_row, a, name);
}

static void on_enter(CUpti_CallbackId cbid, const CUpti_CallbackData *cb)
{
	CUfunction f = NULL;
	unsigned grid[3], block[3], smem = 0;
	CUstream stream = NULL;
	char *name;
	ga_repeat_slot *rep;
	int in_a_row;

	launch_captured = 0;
	if (inj.sched.total_launches++ == 0)
		inj.first_launch_at = real_seconds();
	if ((!inj.enabled && !ga_sass_outstanding()) ||
	    launch_params(cbid, cb->functionParams, &f, grid, block, &smem, &stream))
		return;
	/* Recorded into a CUDA graph being captured, not run: nothing to
	 * measure, and a replay or a range profiler call inside a capture
	 * would invalidate it.  The graph's launches are counted instead. */
	if (capturing(stream)) {
		launch_captured = 1;
		inj.sched.total_launches--;
		inj.sched.captured++;
		return;
	}
	const char *mangled = cb->symbolName ? cb->symbolName : "?";
	launch_args a = {f, grid, block, smem, stream, mangled};
	/* Demangling costs an allocation on every launch: only for a name
	 * filter here, otherwise once the launch is to be profiled. */
	name = ga_sched_filtered(&inj.sched) ? demangle(mangled) : NULL;
	if (!ga_sched_selected(&inj.sched, mangled, name) || !ga_sched_past_skip(&inj.sched)) {
		free(name);
		return;
	}
	rep = ga_sched_count(&inj.sched, mangled, grid, block, &in_a_row);
	if (rep->count == 1)
		mark_no_replay(rep, mangled, name);
	selected_launch(cbid, cb, rep, in_a_row, &a, name);
	if (rep->count == 1)
		loop_log_first(&inj, rep);
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
	ga_inj *st = &inj;        /* for CUPTI_TRY */
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
	phase(&inj, PH_KERNEL, &inj.ph_t);
	CUPTI_TRY(range_stop(cs, NULL), "stopping the range profiler");
	phase(&inj, PH_STOP, &inj.ph_t);
	CUPTI_TRY(range_decode(cs, &dropped), "decoding the counter data");
	if (dropped)
		ga_rec_error("cupti", "%zu range(s) dropped for %s", dropped, l->name);
	phase(&inj, PH_DECODE, &inj.ph_t);
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
	phase(&inj, PH_EVAL, &inj.ph_t);
	launch_done(&inj, l, cs->cfg, c, vals, &inj.sched.repeats[inj.pending_slot]);
	phase(&inj, PH_RECORD, &inj.ph_t);
	/* (its duration now counts in the share) */
	ga_sass_replay_finish(cs->ctx, cs->cudev, cs->uid, l->mangled, l->grid, l->block,
	                      inj.pending_cbid,
	                      ga_sched_second_run(&inj.sched, &inj.sched.repeats[inj.pending_slot],
	                                          ga_sass_every_kernel())
	                          ? inj.pending_params : NULL);
	ga_sched_replayed(&inj.sched, &inj.sched.repeats[inj.pending_slot],
	                  ga_mono_seconds() - inj.replay_t0);
	if (ga_sched_measured(&inj.sched))
		stop_profiling_everywhere();
out:
	/* No values: the checkpoint, if any, goes unused. */
	ga_sass_replay_finish(cs->ctx, cs->cudev, cs->uid, l->mangled, l->grid, l->block,
	                      inj.pending_cbid, NULL);
	free(vals);
	launch_free(l);
}

static int launch_cbid(CUpti_CallbackId cbid);

/* ---- the timeline's side of a launch (activity.c) ---- */

static __thread double pending_t0;   /* ENTER of the measured launch in flight */
static double pass_t0;               /* start of the loop's pass in progress */
static int pass_open;

static int in_pass(void)
{
	return inj.sched.loop.active && inj.sched.loop.pos > 0;
}

/* A launch's ENTER, after the policy's call, which began at t: a measured
 * launch and a loop's pass are the profiler's spans from t; any other
 * launch's host time starts now, once the callbacks' own work is done, so
 * that the launch cost the launch rules read is the driver's and not the
 * profiler's (on the H200, 8.6 us a launch call from t against 4.1 us a
 * launch in the plain program, the accuracy bench's launch-tiny). */
static void timeline_enter(CUpti_CallbackId cbid, const CUpti_CallbackData *cb, double t)
{
	CUfunction f = NULL;
	unsigned grid[3] = {0}, block[3] = {0}, smem = 0;
	CUstream stream = NULL;
	static CUcontext legacy_ctx;

	if (!activity_on())
		return;
	launch_params(cbid, cb->functionParams, &f, grid, block, &smem, &stream);
	/* the legacy default stream: NULL through an API that is not per-thread */
	if ((stream == NULL || stream == CU_STREAM_LEGACY) && cb->context != legacy_ctx &&
	    cbid != CUPTI_DRIVER_TRACE_CBID_cuLaunchKernel_ptsz &&
	    cbid != CUPTI_DRIVER_TRACE_CBID_cuLaunchKernelEx_ptsz &&
	    cbid != CUPTI_DRIVER_TRACE_CBID_cuLaunchCooperativeKernel_ptsz) {
		unsigned long long id = 0;
		if (cuStreamGetId(CU_STREAM_LEGACY, &id) == CUDA_SUCCESS) {
			activity_legacy_stream((uint32_t)id);
			legacy_ctx = cb->context;
		}
	}
	uint64_t key = ga_hash_bytes(ga_hash_ptr((const void *)f), grid, sizeof(grid));
	key = ga_hash_bytes(key, block, sizeof(block));
	int measured = inj.pending != PENDING_NONE;
	activity_launch_enter(cb, measured ? t : activity_now(), measured, launch_captured,
	                      (long)key);
	if (!pass_open && in_pass()) {
		pass_open = 1;
		pass_t0 = t;
	} else if (pass_open && !in_pass()) {
		/* a pass broken at this launch */
		pass_open = 0;
		activity_excluded(pass_t0, t);
	}
}

/* The EXIT of a measured launch: its span, and the pass's if it ended. */
static void timeline_exit_measured(const CUpti_CallbackData *cb)
{
	if (!activity_on())
		return;
	activity_launch_exit(cb, 1);
	double now = activity_now();
	activity_excluded(pending_t0, now);
	if (pass_open && !in_pass()) {
		pass_open = 0;
		activity_excluded(pass_t0, now);
	}
}

/* A mechanism found the GPU's counters held by another profiler
 * (cupti_failed): the process runs on unprofiled. */
static void stop_if_busy(void)
{
	if (inj.counters_busy && inj.enabled)
		stop_profiling_everywhere();
}

static __thread int this_thread_pending;

static void on_driver(CUpti_CallbackId cbid, const CUpti_CallbackData *cb);

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
			counters_record_gpu(rd->context);
			return;
		}
		if (cbid != CUPTI_CBID_RESOURCE_CONTEXT_DESTROY_STARTING)
			return;
		pthread_mutex_lock(&inj.lock);
		ga_sass_context_destroyed(rd->context);
		for (ctx_state *cs = inj.ctxs; cs; cs = cs->next)
			if (cs->ctx == rd->context && cs->ok) {
				loop_context_gone(&inj, cs);
				ctx_release(cs);
			}
		release_counters(&inj);
		pthread_mutex_unlock(&inj.lock);
		return;
	}
	/* The second run of a launch for its source lines (sassreplay.c),
	 * made by this thread inside that launch's EXIT, under inj.lock. */
	if (domain != CUPTI_CB_DOMAIN_DRIVER_API || ga_ckpt_replaying())
		return;
	on_driver(cbid, data);
}

/* A driver-API callback: a launch (ENTER and EXIT), or a call the
 * timeline times. */
static void on_driver(CUpti_CallbackId cbid, const CUpti_CallbackData *cb)
{
	if (!launch_cbid(cbid)) {
		activity_call(cbid, cb);
		return;
	}
	if (cb->callbackSite == CUPTI_API_ENTER && graph_launch(cbid)) {
		pthread_mutex_lock(&inj.lock);
		on_graph_launch(cb);
		stop_if_busy();
		pthread_mutex_unlock(&inj.lock);
		/* its host time from here: see timeline_enter */
		activity_launch_enter(cb, activity_on() ? activity_now() : 0, 0, 0,
		                      (long)ga_hash_ptr(cb->functionParams));
	} else if (cb->callbackSite == CUPTI_API_ENTER) {
		double t = activity_on() ? activity_now() : 0;
		pthread_mutex_lock(&inj.lock);
		/* What the callbacks do before the launch runs (a checkpoint, a
		 * configuration, a lock) and, when it is measured, the launch
		 * itself, are watched: see watchdog.h.  Once nothing is left to
		 * measure (the timeline's launches) there is nothing to watch. */
		if (inj.enabled || ga_sass_outstanding())
			watch_begin(&inj, cb->symbolName);
		on_enter(cbid, cb);
		stop_if_busy();
		timeline_enter(cbid, cb, t);
		/* While a launch is measured this thread keeps the lock until the
		 * launch's EXIT: the range profiler measures one launch at a time,
		 * so launches from other threads wait at their ENTER. */
		if (inj.pending != PENDING_NONE) {
			this_thread_pending = 1;
			pending_t0 = t;
		} else {
			watch_end(&inj);
			pthread_mutex_unlock(&inj.lock);
		}
	} else if (!this_thread_pending) {
		activity_launch_exit(cb, 0);
	} else {
		this_thread_pending = 0;
		if (inj.pending == PENDING_SASS) {
			inj.pending = PENDING_NONE;
			ga_sass_end();
			if (!inj.enabled && !ga_sass_outstanding())
				stop_profiling_everywhere();
		} else if (inj.pending == PENDING_LOOP_PASS) {
			loop_exit_launch(&inj);
		} else if (inj.pending == PENDING_LOOP_RANGE) {
			loop_exit_range(&inj);
		} else {
			on_exit_launch();
		}
		stop_if_busy();
		watch_end(&inj);
		timeline_exit_measured(cb);
		pthread_mutex_unlock(&inj.lock);
	}
}

/* Also the wall-clock times of InitializeInjection and of the exit
 * handler, so that bench/phases.sh can split the process's time into
 * before, inside and after the injection library's life. */
static void timing_log(void)
{
	const char *path = getenv(GA_ENV_TIMING_LOG);
	int nv_loaded;
	double nv_load_s, nv_wait_s;
	FILE *f;

	if (!path || !*path || !(f = fopen(path, "a")))
		return;
	preload_stats(&nv_loaded, &nv_load_s, &nv_wait_s);
	fprintf(f, "pid %ld init_at %.3f ctx_created_at %.3f first_launch_at %.3f exit_at %.3f "
	        "profiled %ld set_changes %ld profiler_init %.4f device_supported %.4f "
	        "availability %.4f availability_reads %ld loop_launches %ld loop_passes %ld "
	        "loop_aborted %ld loop_skips %ld loop_broken %ld loop_serialized %ld loop_over %d "
	        "graph_launches %ld captured %ld "
	        "nvperf_preload %d nvperf_load %.4f nvperf_wait %.4f objects %ld objects_kept %ld "
	        "loop_drops_broken %ld loop_drops_replay %ld loop_sass_beside %ld "
	        "replays %ld replay_s %.4f unwaited %ld unwaited_s %.4f",
	        (long)inj.pid, inj.init_at, inj.ctx_created_at, inj.first_launch_at, real_seconds(),
	        inj.sched.profiled, inj.sched.set_changes, inj.init_profiler_s, inj.init_supported_s,
	        inj.init_avail_s, inj.avail_reads, inj.sched.loop.launches, inj.sched.loop.passes,
	        inj.sched.loop.aborted, inj.sched.loop.skips, inj.sched.loop.broken_passes, inj.sched.loop.serialized,
	        (int)inj.sched.loop.over, inj.sched.graph_launches,
	        inj.sched.captured, nv_loaded, nv_load_s, nv_wait_s, inj.objects,
	        inj.objects_kept, inj.loop_drops_broken, inj.loop_drops_replay, inj.loop_sass_beside,
	        inj.sched.replays, inj.sched.replay_s, inj.sched.unwaited, inj.sched.unwaited_s);
	for (int i = 0; i < PH_N; i++)
		if (inj.phase_n[i])
			fprintf(f, " %s %.4f/%ld", phase_names[i], inj.phase_s[i], inj.phase_n[i]);
	fputc('\n', f);
	fclose(f);
}

/* The n-th (from 0) kernel of a note's list: its base name, after a
 * comma; the first three only (the note says ", ..." past them). */
static void note_name(ga_buf *names, long n, const char *mangled)
{
	if (n >= 3)
		return;
	char *d = demangle(mangled), *base = ga_base_name(d);
	ga_buf_printf(names, "%s%s", n ? ", " : "", base);
	free(base);
	free(d);
}

/* The communication kernels left unmeasured, named in one note. */
static void no_replay_note(void)
{
	ga_buf names = {0};
	long kernels = 0, launches = 0;

	for (size_t i = 0; i < inj.sched.n_repeats; i++) {
		const ga_repeat_slot *r = &inj.sched.repeats[i];
		if (!r->no_replay)
			continue;
		/* a kernel of several grids is one kernel */
		int seen = 0;
		for (size_t k = 0; k < i && !seen; k++)
			seen = inj.sched.repeats[k].no_replay &&
			       strcmp(inj.sched.repeats[k].mangled, r->mangled) == 0;
		launches += r->count;
		if (seen)
			continue;
		note_name(&names, kernels++, r->mangled);
	}
	if (kernels)
		ga_rec_error("no_replay", "%ld launch(es) of %ld communication kernel(s) (%s%s) were "
		             "not measured: such a kernel waits for its peers in other processes, and "
		             "a replay of it would wait for ever", launches, kernels, names.s,
		             kernels > 3 ? ", ..." : "");
	ga_buf_free(&names);
}

static void at_exit(void)
{
	preload_join();
	activity_finish();
	pthread_mutex_lock(&inj.lock);
	/* Launches left unprofiled by the per-kernel bound, so that the report
	 * can still charge their time to the kernel. */
	for (size_t i = 0; i < inj.sched.n_repeats; i++) {
		const ga_repeat_slot *r = &inj.sched.repeats[i];
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
		ga_buf names = {0};
		if (ga_loop_budget_note(&inj.sched, note, sizeof(note)))
			ga_rec_error("loop_replay", "%s", note);
		/* Kernels that waited for a loop to measure them and were not
		 * launched again inside one (nor after the wait), named */
		for (size_t i = 0; i < inj.sched.n_repeats; i++) {
			const ga_repeat_slot *r = &inj.sched.repeats[i];
			if (r->profiled != 0 || !r->waiting)
				continue;
			note_name(&names, never, r->mangled);
			if (never++ < 3)
				ga_buf_printf(&names, " (launch %ld of the run)", r->first_matched);
			never_launches += r->count;
		}
		if (never && inj.enabled)
			ga_rec_error("loop_replay", "%ld kernel(s) (%ld launch(es)) were not measured: "
			             "first launched once the program repeated (from launch %ld), they "
			             "waited for a loop's iterations that did not hold them: %s%s "
			             "(--no-loop-replay measures every kernel at its first launch)",
			             never, never_launches, inj.sched.loop.seen_at, names.s,
			             never > 3 ? ", ..." : "");
		ga_buf_free(&names);
	}
	no_replay_note();
	double setup_s = inj.phase_s[PH_INIT] + inj.phase_s[PH_PACK], measure_s = 0;
	for (int i = PH_ENABLE; i <= PH_RECORD; i++)
		measure_s += inj.phase_s[i];
	ga_rec_end(inj.sched.total_launches, inj.sched.matched, inj.sched.profiled, setup_s, measure_s,
	           inj.sched.loop.launches, inj.sched.graph_launches);
	ga_rec_close();
	timing_log();
	pthread_mutex_unlock(&inj.lock);
}


static void bad_no_replay(void *ctx, const char *msg)
{
	(void)ctx;
	ga_rec_error("no_replay", "%s: %s; that line leaves no kernel out of replay",
	             GA_ENV_NO_REPLAY, msg);
}

static void init_filters(void)
{
	const char *k = getenv(GA_ENV_KERNEL);
	char buf[256];

	if (ga_sched_set_filter(&inj.sched, k, buf, sizeof(buf)) != 0) {
		ga_rec_error("usage", "bad kernel regex '%s': %s", k + 6, buf);
		inj.enabled = 0;
	}
	inj.sched.skip = ga_env_long(GA_ENV_LAUNCH_SKIP, 0);
	inj.sched.count = ga_env_long(GA_ENV_LAUNCH_COUNT, -1);
	inj.sched.max_per_kernel = ga_env_long(GA_ENV_MAX_PER_KERNEL, 0);
	inj.sched.full = inj.max_passes == 0;
	/* Loop replay needs every launch between two of an iteration's to be one
	 * of its ranges: no name filter, no launch count. */
	inj.sched.loop.off = ga_sched_filtered(&inj.sched) || inj.sched.count >= 0 ||
	                 ga_env_long(GA_ENV_LOOP_REPLAY, 1) == 0;
	{
		const char *s = getenv(GA_ENV_MIN_SHARE);
		char *end;
		double v = s && *s ? strtod(s, &end) : 0;
		inj.sched.min_share = s && *s && !*end && v > 0 && v <= 100 ? v / 100 : 0;
	}

	const char *keep = getenv(GA_ENV_KEEP_IMAGE);
	inj.keep_image = keep && *keep ? ga_xstrdup(keep) : NULL;

	/* Unset (a program started by hand with CUDA_INJECTION64_PATH): the
	 * default; set, even empty, the launcher's. */
	const char *nr = getenv(GA_ENV_NO_REPLAY);
	inj.no_replay = ga_name_filter_parse(nr ? nr : GA_NO_REPLAY_DEFAULT, bad_no_replay, NULL);
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
	inj.max_passes = ga_env_long(GA_ENV_MAX_PASSES, 0);
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

static int launch_cbid(CUpti_CallbackId cbid)
{
	for (size_t i = 0; i < GA_ARRAY_LEN(launch_cbids); i++)
		if (launch_cbids[i] == cbid)
			return 1;
	return 0;
}

GA_EXPORT int InitializeInjection(void)
{
	const char *dir;
	CUptiResult r;

	pthread_mutex_lock(&inj.lock);
	if (inj.initialized) {
		pthread_mutex_unlock(&inj.lock);
		return 1;
	}
	inj.initialized = 1;
	inj.init_at = real_seconds();
	{
		/* the program's time before CUDA (a PyTorch import) counts too */
		double age = ga_process_age();
		inj.started_mono = ga_mono_seconds() - (age > 0 ? age : 0);
	}
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
	counters_lock_init(&inj, dir);
	inj.enabled = 1;
	init_metrics();
	init_filters();
	watchdog_start(&inj, ga_env_long(GA_ENV_WATCHDOG, 120));
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
	/* The timeline (activity.c): not in the stall run, which only samples
	 * PCs; with GA_ENV_TIMELINE=only it is all there is. */
	if (!ga_sass_stall_run())
		activity_start(inj.sub, dir, (int)inj.pid);
	{
		const char *tm = getenv(GA_ENV_TIMELINE);
		if (tm && strcmp(tm, "only") == 0)
			inj.enabled = 0;
	}
	if (inj.sched.count == 0)
		stop_profiling_everywhere();
	else if (inj.enabled)
		preload_start();
out:
	atexit(at_exit);
	pthread_mutex_unlock(&inj.lock);
	return 1;
}
