/* timeline.h: where a process's time went outside the kernels' insides.
 *
 * The collector records, besides the counters of measured launches, every
 * kernel, memory copy and memory set the GPU ran (their start and end on
 * the GPU), and the host's time inside CUDA calls that launch work, wait
 * for it (synchronisations and copies that block) or allocate memory.  A
 * sweep over those intervals in time order tells, per device:
 *   busy    some kernel, copy or set runs (the union of their intervals);
 *   idle    nothing runs, split by what the host was doing meanwhile:
 *           inside a blocking CUDA call, inside a launch, or neither (its
 *           own computation: Python, data loading);
 *   copies  by direction and host memory kind, and how much of their time
 *           overlapped a kernel.
 * The profiler's own work (a measured launch's replays, a loop's measured
 * passes) is left out: those spans are `excluded`, neither busy nor idle.
 *
 * ga_sweep is that sweep: edges (an interval's start or end) are fed in
 * time order and it accumulates the totals, so the collector can run it
 * as the records arrive, with bounded memory, and the analysis can run it
 * again over one iteration's events.  Pure computation, no CUDA.
 *
 * A ga_timeline is one process's result: the totals, the kernels' launch
 * counts and times from the GPU's own records, the loop's iterations, and
 * one representative iteration's intervals for the reports' strip chart.
 * JSON: the profile's optional "timelines" array (docs/profile.schema.json). */
#ifndef GA_TIMELINE_H
#define GA_TIMELINE_H

#include <stddef.h>
#include <stdint.h>

#include "../util/util.h"

/* What the host was doing while a device sat idle. */
enum {
	GA_IDLE_BLOCKING,         /* inside a blocking CUDA call (sync, copy, alloc) */
	GA_IDLE_LAUNCHING,        /* inside a launch */
	GA_IDLE_OTHER,            /* neither: the program's own host work */
	GA_IDLE__N,
};

/* Host intervals: kinds of CUDA calls, and the profiler's own spans. */
enum {
	GA_HOST_LAUNCH,           /* cuLaunchKernel and its kind */
	GA_HOST_SYNC,             /* cuCtxSynchronize, cuStreamSynchronize, cuEventSynchronize */
	GA_HOST_COPY,             /* cuMemcpy*, cuMemset*: blocking when the memory is pageable */
	GA_HOST_ALLOC,            /* cuMemAlloc*, cuMemFree*, cuMemHostAlloc: may synchronise */
	GA_HOST_EXCLUDED,         /* the profiler measuring: not counted */
	GA_HOST__N,
};

/* Copy directions, and the memory kind of a copy's host side. */
enum { GA_DIR_HTOD, GA_DIR_DTOH, GA_DIR_DTOD, GA_DIR_HTOH, GA_DIR_PTOP, GA_DIR__N };
enum { GA_MEM_PAGEABLE, GA_MEM_PINNED, GA_MEM_DEVICE, GA_MEM_MANAGED, GA_MEM_OTHER, GA_MEM__N };

/* GPU intervals. */
enum { GA_GPU_KERNEL, GA_GPU_COPY, GA_GPU_SET, GA_GPU__N };

/* A copy smaller than this is "small": its fixed cost dominates. */
#define GA_SMALL_COPY_BYTES (64 * 1024)
/* Devices a process may use that the sweep keeps apart. */
#define GA_TL_MAX_DEVICES 16

typedef struct {
	long count;
	double bytes;
	double ns;                /* sum of their durations */
	long small;               /* of them, under GA_SMALL_COPY_BYTES */
	double small_ns;
} ga_copy_stat;

typedef struct {
	int device;               /* ordinal in the process */
	double busy_ns;           /* some kernel, copy or set ran */
	double kernel_ns;         /* some kernel ran */
	double copy_ns;           /* some copy ran (union) */
	double copy_exposed_ns;   /* some copy ran and no kernel */
	double dir_ns[GA_DIR__N]; /* some copy of that direction ran (union) */
	double overlap_ns[GA_DIR__N];  /* ... while a kernel ran */
	double idle_ns[GA_IDLE__N];
	double idle_after_sync_ns;/* idle from a synchronisation's end to the next work */
	ga_copy_stat copy[GA_DIR__N][GA_MEM__N];
	ga_copy_stat set;         /* memory sets */
	long kernels;             /* kernel executions */
	double kernel_sum_ns;     /* the sum of their durations */
	long default_stream_ops;  /* kernels, copies and sets on the legacy default stream */
	long streams;             /* distinct streams */
} ga_tl_device;

/* A kernel's executions from the GPU's records, outside the profiler's
 * own spans. */
typedef struct {
	char *mangled;
	char *name;               /* demangled; NULL: not known */
	unsigned grid[3], block[3];
	long launches;
	double total_ns;
} ga_tl_kernel;

/* One interval of the representative iteration, in ns from its start. */
typedef struct {
	double start, end;
	int device;               /* GPU intervals; -1 for a host interval */
	uint32_t stream;
	int kind;                 /* GA_GPU_* for the GPU, GA_HOST_* for the host */
	int dir;                  /* copies: GA_DIR_*; else -1 */
	long kernel;              /* kernels: index into ga_timeline.kernels, else -1 */
} ga_tl_event;

typedef struct {
	int pid;
	double wall_ns;           /* first CUDA call or GPU work to the last */
	double excluded_ns;       /* of it, the profiler's own spans */
	double late_ns;           /* GPU time that arrived after its span was summed (lost) */
	/* Kernels the program did not launch (no launch call of its own has
	 * their correlation: the profiler's own, such as the range
	 * profiler's WaitNs), left out of every sum above and below. */
	long tool_kernels;
	double tool_ns;
	double host_ns[GA_HOST__N];   /* time inside each kind of call (union over threads) */
	long host_calls[GA_HOST__N];
	ga_tl_device *devices;
	size_t n_devices;
	ga_tl_kernel *kernels;
	size_t n_kernels;
	long iterations;          /* loop iterations seen; 0: no loop found */
	long period;              /* launches in one */
	double iteration_ns;      /* mean wall time of the iterations outside the
	                           * profiler's spans; NAN when none */
	/* The representative iteration (or, with no loop, the last window of
	 * the run): its span and its intervals. */
	double window_ns;
	int window_is_iteration;
	ga_tl_event *events;
	size_t n_events;
	int complete;             /* 1 at the process's exit; 0 a snapshot (crash) */
} ga_timeline;

void ga_timeline_free(ga_timeline *t);
/* Of the time observed (wall less the profiler's), 0 when nothing. */
double ga_timeline_observed_ns(const ga_timeline *t);
/* Totals over a process's devices into *sum (device -1). */
void ga_timeline_devices_sum(const ga_timeline *t, ga_tl_device *sum);
void ga_copy_stat_add(ga_copy_stat *to, const ga_copy_stat *from);

/* ---- the sweep ---------------------------------------------------------- */

typedef struct {
	double t;                 /* time of the last edge */
	int started;
	int host[GA_HOST__N];     /* intervals open, by kind */
	int kernel[GA_TL_MAX_DEVICES], copy[GA_TL_MAX_DEVICES][GA_DIR__N],
	    set[GA_TL_MAX_DEVICES];
	int after_sync[GA_TL_MAX_DEVICES];
	int used[GA_TL_MAX_DEVICES];
	ga_tl_device dev[GA_TL_MAX_DEVICES];
	double host_ns[GA_HOST__N];   /* [GA_HOST_EXCLUDED]: the profiler's own spans */
	/* All the time counted, by what the host did: a device first used at
	 * t was idle before t in the proportions these had then. */
	double all_ns[GA_IDLE__N];
	double pre_idle_ns[GA_TL_MAX_DEVICES][GA_IDLE__N];
} ga_sweep;

/* An edge: an interval's start (delta +1) or end (-1) at time t.  device
 * is the GPU's ordinal for GPU edges (kind GA_GPU_*; copies with their
 * direction), -1 for host edges (kind GA_HOST_*). */
typedef struct {
	double t;
	int device;
	int kind;
	int dir;
	int delta;
} ga_edge;

void ga_sweep_init(ga_sweep *s);
/* Feed one edge; edges come in nondecreasing t (an earlier one counts from
 * the last time on).  Ends sort before starts at equal times. */
void ga_sweep_edge(ga_sweep *s, const ga_edge *e);
/* qsort order of edges: time, then ends before starts. */
int ga_edge_cmp(const void *a, const void *b);
/* The sweep's totals into t's devices (device ordinals in use, ascending)
 * and host times; the per-interval sums (counts, bytes, kernel and copy
 * sums) are the caller's. */
void ga_sweep_result(const ga_sweep *s, ga_timeline *t);

/* Sweep the events of a window (ga_tl_event, any order) from 0 to span_ns:
 * the busy and idle times of that window, as one process's timeline with
 * its devices (copy and kernel sums included).  For the analysis's
 * per-iteration figures. */
void ga_timeline_sweep_events(const ga_tl_event *ev, size_t n, double span_ns,
                              ga_timeline *out);

/* ---- JSON ----------------------------------------------------------------- */

const char *ga_dir_name(int dir);    /* "htod", ... */
const char *ga_mem_name(int mem);    /* "pageable", ... */
const char *ga_dir_words(int dir);   /* "host to device", ... */
const char *ga_host_name(int kind);  /* "launch", ... */
const char *ga_idle_name(int idle);  /* "blocking", "launching", "other" */
void *ga_timeline_to_json(const ga_timeline *t);   /* json_t *, new reference */
/* Parse one "timelines" entry into *t (zeroed first); -1 with err naming
 * the field. */
int ga_timeline_from_json(ga_timeline *t, void *json, const char *where, ga_error *err);
/* The profile's "timelines" array, and back into a vector (*v, *n, *cap,
 * appended to; a later entry of a pid replaces the earlier); label names
 * the file. */
void *ga_timelines_to_json(const ga_timeline *v, size_t n);
int ga_timelines_from_json(ga_timeline **v, size_t *n, size_t *cap, void *json,
                           const char *label, ga_error *err);

#endif
