/* profile.h: the profile model.  A profile is what the collector measured:
 * the device, how the data was collected, and one record per profiled kernel
 * launch.  It is a plain value: stages after the collector only read it.
 *
 * Metric values of a launch are stored in the order of profile->metrics;
 * a value that was not collected (or not evaluable) is NAN. */
#ifndef GA_PROFILE_H
#define GA_PROFILE_H

#include <stddef.h>
#include <stdint.h>

#include "procinfo.h"
#include "source.h"
#include "timeline.h"
#include "../util/util.h"

#define GA_PROFILE_SCHEMA 1
#define GA_PROFILE_FORMAT "gpuadvise-profile"

typedef struct {
	char *name;              /* "NVIDIA H100 80GB HBM3" */
	char *chip;              /* CUPTI chip name, "GH100" */
	int cc_major, cc_minor;  /* compute capability */
	int sm_count;
	double sm_clock_mhz;     /* maximum SM clock */
	double mem_clock_mhz;    /* maximum memory clock */
	int bus_width_bits;
	double mem_bandwidth_gbs;/* peak DRAM bandwidth, 2 * clock * bus width */
	long l2_bytes;
	int max_threads_per_sm;
	int max_blocks_per_sm;
	int regs_per_sm;
	long smem_per_sm;        /* bytes of shared memory per SM */
	long smem_per_block_optin;
	int warp_size;
	int driver_version;      /* cuDriverGetVersion, e.g. 13000 */
	int cupti_version;
} ga_device;

typedef struct {
	char *tool_version;      /* gpuadvise version that collected it */
	char *date;              /* ISO 8601, UTC */
	char *mode;              /* "live", "demo", "synthetic" ... free text */
	char *command;           /* the profiled command line, if any */
	char *host;
	int passes;              /* replay passes per profiled launch (the most of any set) */
	int metric_sets;         /* metric sets taken in turn by repeats of a kernel; 0, 1: one */
	int quick;               /* --quick: the classifier's metrics only */
	double min_share_pct;    /* --min-share: the share of GPU time for more than one
	                          * profiled launch of a kernel; 0: none or unknown */
	double profiler_setup_seconds;   /* in the app: profiler and metric-set set-up, 0 unknown */
	double profiler_measure_seconds; /* in the app: measuring launches (replays included) */
	long loop_replay_launches;       /* of the launches, measured across loop iterations */
	long graph_launches;     /* cuGraphLaunch calls: their kernels are not profiled */
	double wall_seconds;     /* whole run under profiling, 0 if unknown */
	int app_status;          /* exit status of the app (-1 unknown) */
	int app_signal;          /* signal that ended the app, 0 none */
	long app_peak_rss_kb;    /* peak resident memory of the app process under profiling, 0 unknown */
	int incomplete;          /* 1 when the app ended before profiling finished */
	char *note;              /* free text: why incomplete, etc. */
} ga_collection;

typedef struct {
	char *mangled;           /* symbol name as launched */
	char *name;              /* demangled (equals mangled for C kernels) */
	int pid;
	long index;              /* launch index within its process (all launches counted) */
	unsigned grid[3], block[3];
	int registers;           /* per thread */
	long smem_static;        /* bytes per block */
	long smem_dynamic;       /* bytes per block */
	uint64_t stream;         /* stream id, 0 = default */
	int context;             /* context id */
	double duration_ns;      /* gpu__time_duration.sum, NAN if unknown */
	/* A launch measured in a range of its own inside a loop's iteration
	 * (loop replay): the range's duration, GPU idle time included, before
	 * ga_launch_range_correct took the kernel's own time; NAN when not
	 * corrected. */
	double range_ns;
	int metric_set;          /* which metric set measured it (0-based), -1 unknown */
	/* Theoretical occupancy, computed from launch configuration and device
	 * limits (not a CUPTI metric). */
	double occ_theoretical_pct;
	int occ_limit_blocks;    /* blocks/SM allowed by each resource */
	int occ_limit_registers;
	int occ_limit_smem;
	int occ_limit_warps;
	char *occ_limiter;       /* "registers", "shared_memory", "warps", "blocks" */
	double *values;          /* [profile->n_metrics]; NAN = missing */
	/* The NVTX ranges open on the launching thread, outermost first,
	 * joined by '/' ("train_step/aten::linear"); the last one is the
	 * launch's operation.  NULL: none (or not collected). */
	char *nvtx;
	/* The shared object (basename) whose code launched it:
	 * "libtorch_cuda.so", "libcublasLt.so.13", or the program's own file.
	 * NULL: not recorded. */
	char *module;
} ga_launch;

/* Launches of one kernel left unprofiled by the per-kernel bound
 * (--max-per-kernel): counted so their GPU time is not lost from the ranking.
 * The engine charges them the mean duration of the profiled launches. */
typedef struct {
	char *mangled;
	int pid;
	unsigned grid[3], block[3];
	long launches;
	/* Left unprofiled because the kernel took less than --min-share of the
	 * GPU time: it has fewer metric sets (or repeats) than it was launched
	 * for. */
	int below_min_share;
	char *nvtx;              /* NVTX range path of these launches (ga_launch.nvtx) */
} ga_unprofiled;

typedef struct {
	int schema;
	ga_device device;
	ga_collection collection;
	char **metrics;          /* metric names, collected set */
	size_t n_metrics;
	ga_launch *launches;
	size_t n_launches, cap_launches;
	ga_unprofiled *unprofiled;  /* optional "unprofiled" array */
	size_t n_unprofiled, cap_unprofiled;
	ga_source *sources;         /* optional "sources": per-PC counts of flagged kernels */
	size_t n_sources, cap_sources;
	ga_timeline *timelines;     /* optional "timelines": one per process (timeline.h) */
	size_t n_timelines, cap_timelines;
	ga_proc_info *procs;        /* optional "processes": rank, host, GPUs (procinfo.h) */
	size_t n_procs, cap_procs;
	char *source_path;       /* file it was imported from, if any */
} ga_profile;

void ga_profile_init(ga_profile *p);
void ga_profile_free(ga_profile *p);
/* Free a launch's strings and values (not the launch itself). */
void ga_launch_free(ga_launch *l);
/* Index of a metric name, or -1. */
long ga_profile_metric_index(const ga_profile *p, const char *name);
/* Add a metric name (if new) and return its index; grows every launch's values. */
size_t ga_profile_add_metric(ga_profile *p, const char *name);
/* The same for a name known not to be there yet (no lookup; the loader
 * keeps an index of its own). */
size_t ga_profile_append_metric(ga_profile *p, const char *name);
/* Append a zeroed launch with values all NAN; returns it (valid until next append). */
ga_launch *ga_profile_add_launch(ga_profile *p);
double ga_launch_total_threads(const ga_launch *l);
/* A range around one launch, pushed on the CPU (loop replay), also holds
 * the GPU's idle time until the launch arrives: its gpu__time_duration is
 * that of the range (up to 29 times a small kernel's own on an H200), and
 * every metric normalised by elapsed cycles is diluted by the same ratio.
 * The graphics engine's cycles tell the two apart: gr__cycles_active.max
 * counts those it had work, gr__cycles_elapsed.max all of the range's (in
 * kernel replay they are equal).  The engine also works on the range's own
 * markers: marker_cycles of its active cycles are not the kernel's
 * (ga_range_marker_cycles; 0: unknown).  The kernel's share of the range
 * is then (active - marker_cycles) / elapsed, or active / 2 / elapsed when
 * the markers would take more than half the active cycles.  With both
 * counters measured and the engine idle for more than 2 % of the range
 * (never in kernel replay, whose ranges hold the kernel alone), the
 * duration is scaled by
 * the share and the elapsed-normalised values (names holding
 * "pct_of_peak_sustained_elapsed" or "per_cycle_elapsed", and per-second
 * rates other than clocks) by its inverse, percentages capped at 100.
 * values[] is indexed like names[].  Returns the range's duration when it
 * corrected, NAN otherwise; *duration_ns gets the corrected one. */
double ga_launch_range_correct(const char *const *names, size_t n, double *values,
                               double *duration_ns, double marker_cycles);
/* The graphics engine's active cycles a loop's range markers take on this
 * chip (CUPTI's chip name), measured; 0 where not measured. */
double ga_range_marker_cycles(const char *chip);
/* The resource allowing the fewest blocks per SM, from the occ_limit_* values:
 * "blocks", "warps", "registers" or "shared_memory".  Ties go to the launch
 * shape first (blocks, then warps): a 32-thread block with no shared memory
 * is limited by the block count, not by shared memory it does not use. */
const char *ga_launch_limiter(const ga_launch *l);

/* The timeline of process pid, or NULL. */
const ga_timeline *ga_profile_timeline(const ga_profile *p, int pid);
/* Add (or replace) a process's timeline: *t moves into p. */
void ga_profile_set_timeline(ga_profile *p, ga_timeline *t);

/* The record of process pid, or NULL. */
const ga_proc_info *ga_profile_proc(const ga_profile *p, int pid);
/* The same, added (with nothing known) when the profile has none. */
ga_proc_info *ga_profile_proc_add(ga_profile *p, int pid);

/* Pool the launches of *from into *into, as --import of several files does
 * (processes stay apart by pid).  Metrics are matched by name: a metric only
 * one side has is NAN in the other side's launches.  The launches, the
 * unprofiled launches, the sources, the timelines and the processes'
 * records move (all keyed by pid); a process of from whose pid into
 * already has (ranks on several hosts) gets a new pid, above all of both,
 * everywhere, and keeps its own as os_pid.  into keeps its own device and
 * collection, and *from is freed (left as after ga_profile_init). */
void ga_profile_merge(ga_profile *into, ga_profile *from);

/* JSON (profile_json.c).  Load reports malformed input with line:column and
 * names missing or ill-typed fields.  Both return 0 on success, -1 with err
 * set.  A JSON report of gpuadvise (format "gpuadvise-report") is read as the
 * profile it embeds. */
int ga_profile_load(ga_profile *p, const char *path, ga_error *err);
int ga_profile_load_string(ga_profile *p, const char *text, const char *label, ga_error *err);
/* Serialise to a malloc'd string (pretty when indent > 0). */
char *ga_profile_to_string(const ga_profile *p, int indent);

/* The jansson representation, for reporters that embed the profile and for
 * the injection library's per-launch records (opaque here to keep jansson
 * out of most headers). */
void *ga_profile_to_json(const ga_profile *p);          /* json_t *, new reference */
void *ga_launch_to_json(const ga_profile *p, const ga_launch *l);
void *ga_device_to_json(const ga_device *d);
int ga_launch_from_json(ga_profile *p, void *json, const char *where, ga_error *err);
int ga_device_from_json(ga_device *d, void *json, const char *where, ga_error *err);

/* Added with profile.c: free a device's strings (a standalone ga_device
 * filled by ga_device_from_json; ga_profile_free covers p->device). */
void ga_device_free(ga_device *d);

/* The "unprofiled" entries: one JSON object each (also a collector record). */
void *ga_unprofiled_to_json(const ga_unprofiled *u);
int ga_unprofiled_from_json(ga_profile *p, void *json, const char *where, ga_error *err);

#endif
