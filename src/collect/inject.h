/* inject.h: shared by the files of the injection library that use CUDA
 * and CUPTI: inject.c (the callbacks), rangeprof.c (the CUPTI Range
 * Profiler), launchinfo.c (what a launch is), loopreplay.c (measuring a
 * loop across its iterations).  The policy they follow is policy.c's, the
 * records they write writer.c's.  Everything here has hidden visibility
 * (-fvisibility=hidden): only InitializeInjection leaves the library. */
#ifndef GA_INJECT_H
#define GA_INJECT_H

#include <pthread.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include <cuda.h>
#include <cupti.h>
#include <cupti_profiler_target.h>
#include <cupti_range_profiler.h>

#include "collect.h"
#include "policy.h"

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

typedef struct ctx_state {
	CUcontext ctx;
	uint32_t uid;
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

typedef struct {
	pthread_mutex_t lock;
	int initialized;
	int profiler_initialized;
	int lock_held;            /* this process holds the run's counter lock */
	int lock_gave_up;
	int lock_fd;              /* run-wide lock: one process measures at a time */
	int enabled;              /* still profiling (launch count not reached) */
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
} inject_state;

extern inject_state inj;      /* inject.c */
extern ga_sched sched;        /* inject.c: the policy's state */

/* inject.c */
/* Charge the time since *t to phase ph and restart *t. */
void phase(int ph, double *t);
long env_long(const char *name, long dflt);
int hold_counters(void);
void stop_profiling_everywhere(void);
/* A measured launch: its metric set's values vals[] into the profile's
 * metric order, its duration into the kernel's mean, its record out. */
void launch_done(ga_launch *l, const chip_cfg *chip, const metric_set *ms, const double *vals,
                 ga_repeat_slot *rep);

/* rangeprof.c */
void cupti_failed(CUptiResult r, const char *what);
const char *cupti_code(CUptiResult r);
#define CUPTI_TRY(call, what)                                                        \
	do {                                                                          \
		CUptiResult r_ = (call);                                              \
		if (r_ != CUPTI_SUCCESS) {                                            \
			cupti_failed(r_, what);                                        \
			goto out;                                                      \
		}                                                                     \
	} while (0)
int dev_attr(CUdevice d, CUdevice_attribute a);
ctx_state *ctx_find(CUcontext ctx, uint32_t uid);
ctx_state *ctx_get(CUcontext ctx, uint32_t uid);
void ctx_release(ctx_state *cs);
void measure_disable(ctx_state *cs);
void measure_drop(ctx_state *cs);
int measure_enable(ctx_state *cs);
int measure_begin(ctx_state *cs, size_t set);
size_t counter_data_size(ctx_state *cs, const metric_set *ms, size_t ranges);
int counter_data_init(ctx_state *cs, uint8_t *data, size_t size);
int set_config(ctx_state *cs, const metric_set *ms, uint8_t *data, size_t size,
               CUpti_ProfilerReplayMode mode, CUpti_ProfilerRange range, size_t ranges);
CUptiResult range_start(const ctx_state *cs);
CUptiResult range_push(const ctx_state *cs, size_t pos);
CUptiResult range_pop(const ctx_state *cs);
CUptiResult range_stop(const ctx_state *cs, int *all);
CUptiResult range_decode(const ctx_state *cs, size_t *dropped);
/* inject.c: wait for CUPTI's metrics library, loaded early. */
void preload_join(void);

/* launchinfo.c: what a launch's callback tells of it. */
typedef struct {
	CUfunction f;
	const unsigned *grid, *block;
	unsigned smem;
	CUstream stream;
	const char *mangled;
} launch_args;
char *demangle(const char *mangled);
int launch_params(CUpti_CallbackId cbid, const void *params, CUfunction *f, unsigned grid[3],
                  unsigned block[3], unsigned *smem, CUstream *stream);
/* Fill *l with the launch's metadata (name is taken, NULL: demangle). */
void launch_meta(ga_launch *l, ctx_state *cs, const launch_args *a, uint32_t ctx_uid,
                 char *name);
void launch_free(ga_launch *l);

/* loopreplay.c */
/* A selected launch, profiling on: 1 when loop replay took it. */
int loop_launch(const ga_repeat_slot *rep, const CUpti_CallbackData *cb, const launch_args *a,
                int in_a_row);
/* EXIT of an iteration's last launch (PENDING_LOOP_PASS), or of one in a
 * user range (PENDING_LOOP_RANGE). */
void loop_exit_launch(void);
void loop_exit_range(void);
void loop_context_gone(const ctx_state *cs);
/* A CUDA graph launched: inside a pass, the pass is broken. */
void loop_graph_launch(const CUpti_CallbackData *cb);

/* nvtxcb.c: CUPTI's NVTX callbacks (nvtx.c keeps the ranges). */
void ga_nvtx_enable(CUpti_SubscriberHandle sub);
void ga_nvtx_callback(CUpti_CallbackId cbid, const void *data);
/* The launches of repeat slot `slot` left unprofiled, a record per
 * NVTX path. */
void ga_nvtx_rec_unprofiled(long slot, const ga_unprofiled *u);

#endif
