/* injstate.h: the injection library's one state, ga_inj, and the types in
 * it.  inject.c (the callbacks) owns the only instance and hands a pointer
 * to what it calls: the loop's driver (loopreplay.c), the mechanisms
 * (rangeprof.c: the CUPTI Range Profiler; launchinfo.c: what a launch is;
 * counterlock.c: the GPU counters' lock; measured.c: a measured launch's
 * record).  The calls run one way, callbacks -> driver -> mechanisms, and
 * the policy they follow is policy.c's plain functions over ga_sched, the
 * records they write writer.c's.  Everything here has hidden visibility
 * (-fvisibility=hidden): only InitializeInjection leaves the library. */
#ifndef GA_INJSTATE_H
#define GA_INJSTATE_H

#include <pthread.h>
#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include <cuda.h>
#include <cupti.h>
#include <cupti_profiler_target.h>
#include <cupti_range_profiler.h>

#include "collect.h"
#include "policy.h"
#include "trigger.h"

/* One metric set: what one profiled launch measures, in at most
 * --max-passes replay passes.  Repeated launches of a kernel take the sets
 * in turn. */
typedef struct {
	ga_host *host;            /* configured with exactly these metrics */
	uint8_t *config;
	size_t config_size;
	size_t passes;
	const char **names;       /* valid names; the duration is in every set */
	size_t n_names;
	size_t *slot;             /* names[i] is inj.prof.metrics[slot[i]] */
} metric_set;

typedef struct chip_cfg {
	char *chip;
	double range_marker_cycles;   /* ga_range_marker_cycles(chip), once */
	metric_set *sets;
	size_t n_sets;
	struct chip_cfg *next;
} chip_cfg;

/* The counters of one GPU (counterlock.c): processes of a run that share
 * the GPU take turns with them, a lock file per GPU. */
#define GA_MAX_LOCKS 64
typedef struct {
	char uuid[48];            /* "GPU-xxxxxxxx-...", as nvidia-smi -L shows it */
	int ordinal;              /* the device's number in this process */
	int fd;                   /* -1: no lock file: no locking */
	int held;
	int gave_up;              /* waited GA_ENV_LOCK_WAIT once: not again */
} ga_dev_lock;

typedef struct ctx_state {
	CUcontext ctx;
	uint32_t uid;
	int lock;                 /* its GPU's entry in ga_inj.locks, -1: none */
	int ok;                   /* range profiler usable in this context */
	CUpti_RangeProfiler_Object *rp;
	uint8_t **cdata;          /* counter data, one image per metric set */
	size_t *cdata_size;
	long cur_set;             /* set the range profiler is configured for, -1 none */
	long loop_set;            /* or the set a loop configured it for (user replay), -1 none:
	                           * the next loop of that set keeps the object */
	chip_cfg *cfg;
	ga_device dev;
	CUdevice cudev;
	struct ctx_state *next;
} ctx_state;

/* Where the injection library's own time goes, for bench/phases.sh:
 * GA_ENV_TIMING_LOG=FILE appends one line per process at exit.  Order
 * matters: the end record sums INIT..PACK and ENABLE..RECORD. */
enum { PH_INIT, PH_PACK, PH_META, PH_ENABLE, PH_CDATA, PH_CONFIG, PH_START, PH_KERNEL,
       PH_STOP, PH_DECODE, PH_EVAL, PH_RECORD, PH_N };

/* The launch in flight between its ENTER and EXIT callbacks (the lock is
 * held in between). */
typedef enum {
	PENDING_NONE,
	PENDING_RANGE,            /* measured by the range profiler (on_exit_launch) */
	PENDING_SASS,             /* SASS metrics or PC sampling (sass.c) */
	PENDING_LOOP_PASS,        /* the last launch of a loop iteration (loopreplay.c) */
	PENDING_LOOP_RANGE,       /* a launch of an iteration in a user range of its own */
} pending_kind;

typedef struct ga_inj {
	pthread_mutex_t lock;
	int initialized;
	int profiler_initialized;
	char *lock_dir;           /* where the counters' lock files are (the run's) */
	ga_dev_lock locks[GA_MAX_LOCKS];   /* one per GPU this process used */
	size_t n_locks;
	int enabled;              /* still profiling (launch count not reached) */
	int counters_busy;        /* CUPTI said another profiler holds the counters:
	                           * the callbacks stop profiling (cupti_failed) */
	ga_sched sched;           /* the policy's state (policy.h) */
	ga_name_filter *no_replay;/* kernels never replayed (GA_ENV_NO_REPLAY) */
	/* The watchdog (watchdog.c): when the launch being measured started
	 * (monotonic seconds, 0: none), its kernel's name (CUPTI's, valid
	 * while its callback runs), the limit. */
	_Atomic double watch_since;
	_Atomic(const char *) watch_name;
	long watch_limit_s;
	pid_t pid;
	ga_profile prof;          /* holds the metric list; no launches are kept */
	size_t *bundle;           /* bundle of each metric (GA_ENV_METRICS ';') */
	long max_passes;          /* per launch, 0: no limit */
	/* Time in each phase; the end record's setup_seconds (contexts, metric
	 * sets) and measure_seconds (range start to values written) are sums of
	 * these. */
	double phase_s[PH_N];
	long phase_n[PH_N];
	ctx_state *ctxs;
	chip_cfg *chips;
	CUpti_SubscriberHandle sub;
	char *keep_image;
	int image_kept;
	/* The launch in flight. */
	pending_kind pending;
	ctx_state *pending_ctx;
	size_t pending_set;
	size_t pending_slot;      /* repeat slot of the launch in flight */
	double ph_t;              /* phase clock of the launch in flight */
	ga_launch pending_launch;
	CUpti_CallbackId pending_cbid;   /* its driver API call, and the call's */
	const void *pending_params;      /* parameters (valid until its EXIT) */
	double init_at;           /* CLOCK_REALTIME at InitializeInjection */
	double started_mono;      /* the process's start on the monotonic clock */
	double replay_t0;         /* ... when the launch in flight began its replay */
	double init_profiler_s;   /* of PH_INIT: cuptiProfilerInitialize */
	double init_supported_s;  /* of PH_INIT: cuptiProfilerDeviceSupported */
	double init_avail_s;      /* of PH_INIT: the counter availability image */
	long avail_reads;         /* contexts whose availability image was read */
	double ctx_created_at;    /* CLOCK_REALTIME of the first context creation */
	double first_launch_at;   /* ... of the first launch seen */
	long objects;             /* range-profiler objects enabled (a first start each) */
	long objects_kept;        /* loops that kept the previous loop's object */
	long loop_drops_broken;   /* a loop's object dropped with a broken or ended set */
	long loop_drops_replay;   /* ... before a kernel replay */
	long loop_sass_beside;    /* SASS launches beside a loop's idle object */
} ga_inj;

/* Charge the time since *t to phase ph and restart *t. */
static inline void phase(ga_inj *st, int ph, double *t)
{
	double n = ga_mono_seconds();
	st->phase_s[ph] += n - *t;
	st->phase_n[ph]++;
	*t = n;
}

/* What a launch's callback tells of it (launchinfo.c reads the rest). */
typedef struct {
	CUfunction f;
	const unsigned *grid, *block;
	unsigned smem;
	CUstream stream;
	const char *mangled;
} launch_args;

#endif
