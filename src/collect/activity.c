/* activity.c: the timeline's collection.  See activity.h.
 *
 * The GPU's side comes from CUPTI's activity records: concurrent kernel
 * records (which do not serialise the kernels), memory copies and sets,
 * each with its device, stream, correlation and start and end on CUPTI's
 * clock.  CUPTI hands them over in buffers (buffer_done), on its own
 * thread or on ours: a thread of this file asks for them every half second
 * (cuptiActivityFlushAll) and then sweeps what can no longer change
 * (tlagg.h) and, on a schedule that thins out (1, 2, 4 ... 30 s, then
 * every 30 s), writes the timeline so far.
 *
 * The host's side comes from the driver API's callbacks: the launches
 * (inject.c's, which hand their ENTER and EXIT here) and the calls that
 * wait or may: cuCtxSynchronize, cuStreamSynchronize, cuEventSynchronize,
 * every cuMemcpy* and cuMemset* (a copy from pageable memory blocks even
 * when asynchronous), and the allocations (cuMemAlloc*, cuMemFree*,
 * cuMemHostAlloc, cuMemAllocHost, cuMemHostRegister: they may synchronise
 * the device).  Which callback ids those are comes from CUPTI's own names
 * for them (cuptiGetCallbackName), so a new variant of a call is not
 * missed.
 *
 * Loop iterations: each launch's kernel and shape go into a period
 * detector of their own (loop.h), apart from the policy's, which stops
 * looking once profiling ends; once a period shows, every period-th launch
 * whose kernel is the first one's starts an iteration. */
#include "activity.h"

#include <errno.h>
#include <math.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <cupti_activity.h>
#include <jansson.h>

#include "collect.h"
#include "launchinfo.h"
#include "loop.h"
#include "protocol.h"
#include "tlagg.h"
#include "writer.h"

#define BUFFER_BYTES (4u << 20)
#define FLUSH_MS 500
#define LAG_NS 300e6              /* records later than this are rare */
#define SNAPSHOT_MAX_S 30.0

/* What a program's thread hands over: it appends to the stage (a short
 * lock, no work), and the flush thread applies it to the aggregate. */
enum { ST_LAUNCH, ST_LAUNCH_END, ST_CALL, ST_CALL_END };
typedef struct {
	uint8_t op;
	uint8_t kind;             /* a call: its GA_HOST_*; ST_LAUNCH: 1 when no GPU
	                           * record will come for it */
	uint32_t corr;
	uint64_t thread;
	double t;
	long key;
} stage_ev;

static struct {
	pthread_mutex_t lock;     /* the aggregate: the flush thread and CUPTI's buffers */
	pthread_mutex_t stage_lock;
	pthread_mutex_t drain_lock;   /* one drain at a time: it swaps stage and spare */
	stage_ev *stage, *spare;
	size_t n_stage, cap_stage, cap_spare;
	double clock_offset;      /* CUPTI's clock less CLOCK_MONOTONIC, ns */
	int on;
	int kernels_on, kernels_paused;   /* kernel records enabled; off for a SASS launch */
	int stopping;
	pthread_t thread;
	pthread_cond_t wake;
	char *path;               /* RUN_DIR/<pid>.timeline.json */
	int pid;
	ga_tlagg agg;
	unsigned char *call_kind; /* per driver callback id: GA_HOST_* + 1, 0: not timed */
	size_t n_cbids;
	uint32_t legacy[64];      /* legacy default streams' ids */
	size_t n_legacy;
	long dropped;             /* records CUPTI dropped */
	/* the loop's iterations */
	ga_period per;
	size_t period, phase;
	long first_key;
	double start_t;           /* when the timeline started, for the schedule */
	double next_snapshot_s;
} act = {.lock = PTHREAD_MUTEX_INITIALIZER, .stage_lock = PTHREAD_MUTEX_INITIALIZER,
         .drain_lock = PTHREAD_MUTEX_INITIALIZER, .wake = PTHREAD_COND_INITIALIZER};

/* The open call of this thread. */
static __thread int call_kind_open = -1;

static double mono_ns(void)
{
	return ga_mono_seconds() * 1e9;
}

/* CUPTI's clock, which its records use, from the monotonic clock and an
 * offset the flush thread keeps up to date: a vDSO read on the program's
 * threads instead of a call into CUPTI at every launch. */
double activity_now(void)
{
	return mono_ns() + act.clock_offset;
}

static void calibrate(void)
{
	uint64_t ts = 0;
	double before = mono_ns();
	cuptiGetTimestamp(&ts);
	double after = mono_ns();
	if (ts)
		act.clock_offset = (double)ts - (before + after) / 2;
}

static uint64_t thread_key(void)
{
	return (uint64_t)(uintptr_t)pthread_self();
}

static void stage(uint8_t op, uint8_t kind, uint32_t corr, double t, long key)
{
	stage_ev e = {op, kind, corr, thread_key(), t, key};
	pthread_mutex_lock(&act.stage_lock);
	if (act.n_stage == act.cap_stage) {
		act.cap_stage = act.cap_stage ? 2 * act.cap_stage : 4096;
		act.stage = ga_xrealloc(act.stage, act.cap_stage * sizeof(*act.stage));
	}
	act.stage[act.n_stage++] = e;
	pthread_mutex_unlock(&act.stage_lock);
}

int activity_on(void)
{
	return act.on && !act.stopping;
}


/* ---- which calls --------------------------------------------------------- */

static int kind_of_call(const char *n)
{
	static const char *const sync[] = {"cuCtxSynchronize", "cuStreamSynchronize",
	                                   "cuEventSynchronize"};
	static const char *const alloc[] = {"cuMemAlloc", "cuMemFree", "cuMemHostAlloc",
	                                    "cuMemAllocHost", "cuMemHostRegister",
	                                    "cuMemHostUnregister"};
	if (!n)
		return -1;
	for (size_t i = 0; i < GA_ARRAY_LEN(sync); i++)
		if (ga_str_has_prefix(n, sync[i]))
			return GA_HOST_SYNC;
	if (ga_str_has_prefix(n, "cuMemcpy") || ga_str_has_prefix(n, "cuMemset"))
		return GA_HOST_COPY;
	/* stream-ordered allocation does not wait */
	if (strstr(n, "Async"))
		return -1;
	for (size_t i = 0; i < GA_ARRAY_LEN(alloc); i++)
		if (ga_str_has_prefix(n, alloc[i]))
			return GA_HOST_ALLOC;
	return -1;
}

static void enable_calls(CUpti_SubscriberHandle sub)
{
	act.n_cbids = CUPTI_DRIVER_TRACE_CBID_SIZE;
	act.call_kind = ga_xcalloc(act.n_cbids, 1);
	for (size_t id = 1; id < act.n_cbids; id++) {
		const char *name = NULL;
		if (cuptiGetCallbackName(CUPTI_CB_DOMAIN_DRIVER_API, (uint32_t)id, &name) !=
		    CUPTI_SUCCESS)
			continue;
		int k = kind_of_call(name);
		if (k < 0)
			continue;
		act.call_kind[id] = (unsigned char)(k + 1);
		cuptiEnableCallback(1, sub, CUPTI_CB_DOMAIN_DRIVER_API, (CUpti_CallbackId)id);
	}
}

int activity_call(CUpti_CallbackId cbid, const CUpti_CallbackData *cb)
{
	int kind;

	if (!act.on || cbid >= act.n_cbids || !act.call_kind[cbid])
		return 0;
	kind = act.call_kind[cbid] - 1;
	if (cb->callbackSite == CUPTI_API_ENTER) {
		call_kind_open = kind;
		stage(ST_CALL, (uint8_t)kind, cb->correlationId, activity_now(), 0);
	} else if (call_kind_open == kind) {
		call_kind_open = -1;
		stage(ST_CALL_END, (uint8_t)kind, cb->correlationId, activity_now(), 0);
	}
	return 1;
}

/* ---- launches and iterations --------------------------------------------- */

static void iteration_mark(long key, double t)
{
	ga_period_push(&act.per, key);
	if (!act.period) {
		size_t p = ga_period_found(&act.per);
		if (!p)
			return;
		act.period = p;
		act.phase = act.per.n;
		act.first_key = key;
		ga_tlagg_loop_start(&act.agg, t, (long)p);
		return;
	}
	if ((act.per.n - act.phase) % act.period != 0)
		return;
	if (key != act.first_key) {
		/* the pattern changed: look again */
		act.period = 0;
		return;
	}
	ga_tlagg_iteration(&act.agg, t);
}

void activity_launch_enter(const CUpti_CallbackData *cb, double t, int measured, int captured,
                           long key)
{
	if (!act.on)
		return;
	/* No GPU record will come for a launch into a graph being captured,
	 * nor while kernel records are off: it is not waited for. */
	uint8_t no_record = captured || !act.kernels_on || act.kernels_paused;
	/* A measured launch's replays report while it runs: told at once
	 * (rare), so that their records are not taken for the kernel's. */
	if (measured) {
		pthread_mutex_lock(&act.lock);
		ga_tlagg_launched(&act.agg, cb->correlationId, t, 1);
		pthread_mutex_unlock(&act.lock);
	}
	stage(ST_LAUNCH, no_record, cb->correlationId, t, key);
}

void activity_launch_exit(const CUpti_CallbackData *cb, int measured)
{
	if (!act.on)
		return;
	stage(ST_LAUNCH_END, measured ? 1 : 0, cb->correlationId, activity_now(), 0);
}

/* The stage's events into the aggregate, in the order they came (the
 * aggregate's lock is held). */
static void apply(const stage_ev *e, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		double s;
		switch (e[i].op) {
		case ST_LAUNCH:
			ga_tlagg_ours(&act.agg, e[i].corr);
			ga_tlagg_open(&act.agg, e[i].thread, e[i].t);
			if (!e[i].kind)   /* its GPU record is to come */
				ga_tlagg_launched(&act.agg, e[i].corr, e[i].t, 0);
			iteration_mark(e[i].key, e[i].t);
			break;
		case ST_CALL:
			ga_tlagg_open(&act.agg, e[i].thread, e[i].t);
			/* a copy or set is GPU work too: held back until reported */
			if (e[i].kind == GA_HOST_COPY)
				ga_tlagg_launched(&act.agg, e[i].corr, e[i].t, 0);
			break;
		case ST_LAUNCH_END:
		case ST_CALL_END:
			s = ga_tlagg_open_start(&act.agg, e[i].thread);
			/* A measured launch's call held the replays: the
			 * profiler's time (excluded), not a launch's cost. */
			if (!isnan(s) && !(e[i].op == ST_LAUNCH_END && e[i].kind))
				ga_tlagg_host(&act.agg, e[i].op == ST_LAUNCH_END ? GA_HOST_LAUNCH
				                                                : e[i].kind, s, e[i].t);
			ga_tlagg_close(&act.agg, e[i].thread);
			break;
		}
	}
}

/* Take the stage (a swap under its lock) and apply it. */
static void drain(void)
{
	pthread_mutex_lock(&act.drain_lock);
	pthread_mutex_lock(&act.stage_lock);
	stage_ev *ev = act.stage;
	size_t n = act.n_stage, cap = act.cap_stage;
	act.stage = act.spare;
	act.cap_stage = act.cap_spare;
	act.n_stage = 0;
	pthread_mutex_unlock(&act.stage_lock);
	pthread_mutex_lock(&act.lock);
	apply(ev, n);
	pthread_mutex_unlock(&act.lock);
	act.spare = ev;
	act.cap_spare = cap;
	pthread_mutex_unlock(&act.drain_lock);
}

static int on_legacy(uint32_t stream)
{
	for (size_t i = 0; i < act.n_legacy; i++)
		if (act.legacy[i] == stream)
			return 1;
	return 0;
}

void activity_legacy_stream(uint32_t id)
{
	if (!act.on)
		return;
	pthread_mutex_lock(&act.lock);
	if (!on_legacy(id) && act.n_legacy < GA_ARRAY_LEN(act.legacy))
		act.legacy[act.n_legacy++] = id;
	pthread_mutex_unlock(&act.lock);
}

void activity_excluded(double start, double end)
{
	if (!act.on)
		return;
	pthread_mutex_lock(&act.lock);
	ga_tlagg_host(&act.agg, GA_HOST_EXCLUDED, start, end);
	pthread_mutex_unlock(&act.lock);
}

/* ---- records ------------------------------------------------------------- */

static int dir_of(uint8_t copy_kind)
{
	switch (copy_kind) {
	case CUPTI_ACTIVITY_MEMCPY_KIND_HTOD:
	case CUPTI_ACTIVITY_MEMCPY_KIND_HTOA: return GA_DIR_HTOD;
	case CUPTI_ACTIVITY_MEMCPY_KIND_DTOH:
	case CUPTI_ACTIVITY_MEMCPY_KIND_ATOH: return GA_DIR_DTOH;
	case CUPTI_ACTIVITY_MEMCPY_KIND_HTOH: return GA_DIR_HTOH;
	case CUPTI_ACTIVITY_MEMCPY_KIND_PTOP: return GA_DIR_PTOP;
	default: return GA_DIR_DTOD;
	}
}

static int mem_of(uint8_t kind)
{
	switch (kind) {
	case CUPTI_ACTIVITY_MEMORY_KIND_PAGEABLE: return GA_MEM_PAGEABLE;
	case CUPTI_ACTIVITY_MEMORY_KIND_PINNED: return GA_MEM_PINNED;
	case CUPTI_ACTIVITY_MEMORY_KIND_DEVICE:
	case CUPTI_ACTIVITY_MEMORY_KIND_DEVICE_STATIC:
	case CUPTI_ACTIVITY_MEMORY_KIND_ARRAY: return GA_MEM_DEVICE;
	case CUPTI_ACTIVITY_MEMORY_KIND_MANAGED:
	case CUPTI_ACTIVITY_MEMORY_KIND_MANAGED_STATIC: return GA_MEM_MANAGED;
	default: return GA_MEM_OTHER;
	}
}

/* One record into the aggregate (the lock is held). */
static void take(const CUpti_Activity *r)
{
	ga_tl_gpu g;

	switch (r->kind) {
	case CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL:
	case CUPTI_ACTIVITY_KIND_KERNEL: {
		const CUpti_ActivityKernel10 *k = (const CUpti_ActivityKernel10 *)r;
		g = (ga_tl_gpu){(double)k->start, (double)k->end, (int)k->deviceId, GA_GPU_KERNEL,
		                -1, -1, 0, k->streamId, 0, k->correlationId, k->name,
		                {(unsigned)k->gridX, (unsigned)k->gridY, (unsigned)k->gridZ},
		                {(unsigned)k->blockX, (unsigned)k->blockY, (unsigned)k->blockZ}};
		break;
	}
	case CUPTI_ACTIVITY_KIND_MEMCPY: {
		const CUpti_ActivityMemcpy6 *m = (const CUpti_ActivityMemcpy6 *)r;
		int dir = dir_of(m->copyKind);
		/* the host side: the source of a copy from the host, else the destination */
		int mem = mem_of(dir == GA_DIR_HTOD || dir == GA_DIR_HTOH ? m->srcKind : m->dstKind);
		g = (ga_tl_gpu){(double)m->start, (double)m->end, (int)m->deviceId, GA_GPU_COPY,
		                dir, mem, (double)m->bytes, m->streamId, 0, m->correlationId,
		                NULL, {0}, {0}};
		break;
	}
	case CUPTI_ACTIVITY_KIND_MEMSET: {
		const CUpti_ActivityMemset4 *m = (const CUpti_ActivityMemset4 *)r;
		g = (ga_tl_gpu){(double)m->start, (double)m->end, (int)m->deviceId, GA_GPU_SET,
		                -1, mem_of((uint8_t)m->memoryKind), (double)m->bytes, m->streamId, 0,
		                m->correlationId, NULL, {0}, {0}};
		break;
	}
	default:
		return;
	}
	g.default_stream = on_legacy(g.stream);
	ga_tlagg_gpu(&act.agg, &g);
}

static void CUPTIAPI buffer_requested(uint8_t **buffer, size_t *size, size_t *max_records)
{
	*buffer = aligned_alloc(8, BUFFER_BYTES);
	*size = *buffer ? BUFFER_BYTES : 0;
	*max_records = 0;
}

static void CUPTIAPI buffer_done(CUcontext ctx, uint32_t stream, uint8_t *buffer, size_t size,
                                 size_t valid)
{
	CUpti_Activity *r = NULL;
	size_t dropped = 0;

	(void)size;
	/* The launches staged so far first: a record's own launch call came
	 * before it, and tells the program's kernels from the profiler's. */
	drain();
	pthread_mutex_lock(&act.lock);
	while (buffer && cuptiActivityGetNextRecord(buffer, valid, &r) == CUPTI_SUCCESS)
		take(r);
	if (cuptiActivityGetNumDroppedRecords(ctx, stream, &dropped) == CUPTI_SUCCESS)
		act.dropped += (long)dropped;
	pthread_mutex_unlock(&act.lock);
	free(buffer);
}

/* ---- the timeline written -------------------------------------------------- */

/* The timeline so far into the file (the lock is held). */
/* The timeline so far into *t, under the aggregate's lock; 0 when there is
 * nowhere to write it. */
static int take_timeline(int final, ga_timeline *t)
{
	if (!act.path)
		return 0;
	/* each kernel's demangled name, once */
	for (size_t i = 0; i < act.agg.n_kernels; i++) {
		ga_tl_kernel *k = &act.agg.kernels[i];
		if (k->name)
			continue;
		char *m = ga_xstrdup(k->mangled), *tab = strchr(m, '\t');
		if (tab)
			*tab = '\0';
		k->name = demangle(m);
		free(m);
	}
	ga_tlagg_result(&act.agg, act.pid, final, t);
	return 1;
}

/* *t (freed) to RUN_DIR/<pid>.timeline.json, without the lock: the
 * program's launches do not wait on the file system. */
static void put_timeline(ga_timeline *t, long dropped)
{
	ga_error err = {0};
	json_t *j = ga_timeline_to_json(t);
	if (dropped)
		json_object_set_new(j, "dropped_records", json_integer(dropped));
	char *s = json_dumps(j, JSON_COMPACT);
	if (s && ga_write_file_atomic(act.path, s, strlen(s), &err) != 0)
		ga_rec_error("timeline", "%s", err.msg);
	free(s);
	json_decref(j);
	ga_timeline_free(t);
}

static void *flush_main(void *arg)
{
	(void)arg;
	for (;;) {
		struct timespec ts;
		clock_gettime(CLOCK_REALTIME, &ts);
		ts.tv_nsec += FLUSH_MS * 1000000L;
		ts.tv_sec += ts.tv_nsec / 1000000000L;
		ts.tv_nsec %= 1000000000L;
		pthread_mutex_lock(&act.lock);
		while (!act.stopping) {
			if (pthread_cond_timedwait(&act.wake, &act.lock, &ts) == ETIMEDOUT)
				break;
		}
		int stop = act.stopping;
		pthread_mutex_unlock(&act.lock);
		if (stop)
			return NULL;
		/* Without the lock: the buffers' callback takes it.  Before a
		 * snapshot, the buffers not yet full too: while the range
		 * profiler is on a context, CUPTI completes none of its kernel
		 * buffers before the end, and a program killed then would keep
		 * no kernel of its timeline. */
		int due = (activity_now() - act.start_t) * 1e-9 >= act.next_snapshot_s;
		cuptiActivityFlushAll(due ? CUPTI_ACTIVITY_FLAG_FLUSH_FORCED : 0);
		calibrate();
		drain();
		double now = activity_now();
		pthread_mutex_lock(&act.lock);
		ga_tlagg_advance(&act.agg, ga_tlagg_safe_time(&act.agg, now, LAG_NS));
		double since = (now - act.start_t) * 1e-9;
		ga_timeline t;
		int snap = since >= act.next_snapshot_s && take_timeline(0, &t);
		long dropped = act.dropped;
		if (since >= act.next_snapshot_s)
			act.next_snapshot_s = since < SNAPSHOT_MAX_S ? 2 * act.next_snapshot_s
			                                             : since + SNAPSHOT_MAX_S;
		pthread_mutex_unlock(&act.lock);
		if (snap)
			put_timeline(&t, dropped);
	}
}

void activity_kernels_pause(void)
{
	if (act.on && act.kernels_on && !act.kernels_paused)
		act.kernels_paused = cuptiActivityDisable(CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL) ==
		                     CUPTI_SUCCESS;
}

void activity_kernels_resume(void)
{
	if (!act.kernels_paused)
		return;
	act.kernels_paused = 0;
	if (cuptiActivityEnable(CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL) != CUPTI_SUCCESS) {
		act.kernels_on = 0;
		ga_rec_error("timeline", "kernel records stopped: CUPTI refused them again after "
		             "a launch measured for source lines");
	}
}

/* name is an item of the comma list */
static int in_list(const char *list, const char *name)
{
	size_t n = strlen(name);
	for (const char *p = list; *p;) {
		size_t len = strcspn(p, ",");
		if (len == n && strncmp(p, name, n) == 0)
			return 1;
		p += len + (p[len] == ',');
	}
	return 0;
}

int activity_start(CUpti_SubscriberHandle sub, const char *run_dir, int pid)
{
	const char *mode = getenv(GA_ENV_TIMELINE);
	static const CUpti_ActivityKind all_kinds[] = {
		CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL, CUPTI_ACTIVITY_KIND_MEMCPY,
		CUPTI_ACTIVITY_KIND_MEMSET,
	};
	static const char *const kind_names[] = {"kernel", "memcpy", "memset"};
	CUpti_ActivityKind kinds[GA_ARRAY_LEN(all_kinds)];
	size_t n_kinds = 0;
	/* Which GPU records: all by default; GA_ENV_TIMELINE_KINDS (a comma
	 * list of kernel, memcpy, memset, or empty for none) takes the
	 * timeline's cost apart (tests/gpu/run-on-device.sh, step timeline). */
	const char *want = getenv(GA_ENV_TIMELINE_KINDS);

	for (size_t i = 0; i < GA_ARRAY_LEN(all_kinds); i++)
		if (!want || in_list(want, kind_names[i]))
			kinds[n_kinds++] = all_kinds[i];

	if (mode && strcmp(mode, "0") == 0)
		return 0;
	ga_tlagg_init(&act.agg);
	ga_period_init(&act.per, 2, GA_PERIOD_MAX);
	if (cuptiActivityRegisterCallbacks(buffer_requested, buffer_done) != CUPTI_SUCCESS) {
		ga_rec_error("timeline", "the timeline is off: CUPTI's activity buffers could not be "
		             "registered");
		return 0;
	}
	for (size_t i = 0; i < n_kinds; i++) {
		CUptiResult r = cuptiActivityEnable(kinds[i]);
		if (r != CUPTI_SUCCESS) {
			ga_rec_error("timeline", "the timeline is off: CUPTI refused activity kind %d: "
			             "%s", (int)kinds[i], ga_cupti_result_string(r));
			for (size_t k = 0; k < i; k++)
				cuptiActivityDisable(kinds[k]);
			return 0;
		}
	}
	for (size_t i = 0; i < n_kinds; i++)
		if (kinds[i] == CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL)
			act.kernels_on = 1;
	enable_calls(sub);
	act.pid = pid;
	act.path = run_dir ? ga_xasprintf("%s/%d.timeline.json", run_dir, pid) : NULL;
	calibrate();
	act.start_t = activity_now();
	act.next_snapshot_s = 1;
	act.on = 1;
	if (ga_thread_start(&act.thread, NULL, flush_main, NULL) != 0)
		act.thread = 0;
	return 1;
}

void activity_finish(void)
{
	if (!act.on)
		return;
	pthread_mutex_lock(&act.lock);
	act.stopping = 1;
	pthread_cond_signal(&act.wake);
	pthread_mutex_unlock(&act.lock);
	if (act.thread)
		pthread_join(act.thread, NULL);
	cuptiActivityFlushAll(CUPTI_ACTIVITY_FLAG_FLUSH_FORCED);
	drain();
	ga_timeline t;
	pthread_mutex_lock(&act.lock);
	int have = take_timeline(1, &t);
	long dropped = act.dropped;
	pthread_mutex_unlock(&act.lock);
	if (have)
		put_timeline(&t, dropped);
}
