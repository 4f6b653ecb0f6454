/* collect.h: the collector stage.  Live profiling runs the application with
 * the injection library (inject.c) and assembles the records it writes into
 * a profile.  Only files under src/collect include CUDA or CUPTI headers.
 * The launcher<->injection library protocol: protocol.h. */
#ifndef GA_COLLECT_H
#define GA_COLLECT_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "../profile/profile.h"
#include "../util/util.h"
#include "protocol.h"

typedef struct {
	char *const *argv;          /* PROGRAM ARGS..., NULL-terminated */
	const char *inject_path;    /* absolute path of libgpuadvise-inject.so */
	char **metrics;
	const size_t *bundles;      /* bundle of each metric (ga_ruleset_metric_bundles); NULL: one */
	size_t n_metrics;
	long max_passes;            /* replay passes per launch; 0: no limit */
	const char *kernel_filter;  /* NULL: all */
	long launch_skip;
	long launch_count;          /* <0: no limit */
	long max_per_kernel;        /* <=0: no limit */
	double min_share;           /* percent; a kernel below it gets one profiled launch; 0: off */
	int no_loop_replay;         /* measure no loop across its iterations */
	int nvtx_off;               /* leave the program's NVTX ranges unread (--nvtx=off) */
	int quick;                  /* --quick (recorded in the profile) */
	const char *keep_image;     /* NULL: none */
	int quiet_stdout;           /* send the application's stdout to /dev/null */
	const char *source_mode;    /* GA_ENV_SOURCE value; NULL: auto */
	/* Source lines, automatically, for a kernel whose profiled launch makes
	 * one rule's expression hold: the rules' lines "RULE-ID<TAB>EXPRESSION"
	 * (ga_ruleset_source_trigger), passed as GA_ENV_SOURCE_WHEN.
	 * NULL or "": no kernel gets them automatically ("force" still gives
	 * every profiled kernel its source lines). */
	const char *source_when;
	/* The library kernels "auto" leaves out (ga_ruleset_source_skip),
	 * passed as GA_ENV_SOURCE_SKIP; NULL or "": none. */
	const char *source_skip;
	/* The rules whose flagged kernels are disassembled for their opcodes
	 * (ga_ruleset_source_opcodes), or NULL. */
	const char *source_opcodes;
	/* The kernels never replayed nor put in a loop's range (communication
	 * kernels, ga_ruleset_no_replay), passed as GA_ENV_NO_REPLAY; NULL or
	 * "": GA_NO_REPLAY_DEFAULT (protocol.h). */
	const char *no_replay;
	/* Seconds a measured launch may take before the injection library
	 * stops its process (GA_ENV_WATCHDOG); 0: no watchdog. */
	long watchdog_s;
	int timeline;               /* 1 on, 0 off (--no-timeline), 2 alone (--timeline-only) */
	int stalls;                 /* run again with PC sampling on the kernels with sources */
	int progress;               /* one updating stderr line while the program runs */
} ga_live_opts;

/* Result of running the application. */
typedef struct {
	int exited;                 /* 1 if it exited normally */
	int exit_status;            /* when exited */
	int signal;                 /* when killed by a signal */
	int launched;               /* 1 if exec succeeded */
	long peak_rss_kb;           /* ru_maxrss of the application process */
	int cuda_processes;         /* processes in which CUDA loaded the injection library */
	double wall_seconds;
	int interrupted;            /* SIGINT, SIGTERM or SIGHUP that gpuadvise received */
	int watchdog;               /* processes the watchdog stopped (GA_ENV_WATCHDOG) */
} ga_app_result;

/* Signals (signals.c): from the first run on, SIGINT, SIGTERM and SIGHUP
 * are recorded, not fatal: the launcher passes them to the program's
 * process group and ends the run; the command exits 128 + the signal. */
int ga_signals_install(void);           /* 0, or -1 (no pipe: errno) */
int ga_signals_fd(void);                /* readable after each signal */
void ga_signals_drain(void);
void ga_signals_set_group(pid_t pgid);  /* the group a second SIGINT kills; 0: none */
int ga_signals_received(void);          /* the first signal received, or 0 */
int ga_signals_hurry(void);             /* a second SIGINT came: no grace */

/* Run argv under profiling and fill p.  Returns 0 when a profile (maybe with
 * zero launches) was assembled; -1 with err set when profiling could not be
 * done at all (program missing, no GPU, no permission, CUPTI failure).  Even
 * on a profiling error, *res describes the application's run if it ran. */
int ga_collect_live(const ga_live_opts *o, ga_profile *p, ga_app_result *res, ga_error *err);

/* Check for a usable CUDA driver and device (cuInit, no context: about
 * 0.1 s).  Returns 0 when present, -1 with err (GA_ERR_NO_GPU) otherwise.
 * ga_collect_live only checks that the driver library loads before it runs
 * the program, and calls this when no launch was profiled. */
int ga_probe_gpu(ga_error *err);

/* Find PROGRAM like execvp would.  Returns a malloc'd path or NULL with err
 * (GA_ERR_NOT_FOUND: missing or not executable, naming the path). */
char *ga_find_program(const char *prog, ga_error *err);

/* --- CUPTI host side (cupti_host.c): works with no GPU. --- */
typedef struct ga_host ga_host;

/* counter_availability may be NULL (offline). */
ga_host *ga_host_new(const char *chip, const uint8_t *counter_availability, ga_error *err);
void ga_host_free(ga_host *h);
/* 1 if this CUPTI's host API lists the chip: it then needs no counter
 * availability image (CUPTI requires one only for chips newer than itself). */
int ga_host_chip_known(const char *chip);
/* 1 if the chip knows this metric name. */
int ga_host_metric_valid(ga_host *h, const char *name);
/* Build a configuration image for the metrics; *passes gets the replay
 * passes.  Names must be valid. */
int ga_host_config(ga_host *h, const char *const *names, size_t n, uint8_t **image,
                   size_t *image_size, size_t *passes, ga_error *err);
/* Ranges in a counter-data image. */
int ga_host_num_ranges(const uint8_t *data, size_t size, size_t *n, ga_error *err);
/* Evaluate metrics of one range; values get NAN on failure of one metric. */
int ga_host_evaluate(ga_host *h, const uint8_t *data, size_t size, size_t range,
                     const char *const *names, size_t n, double *values, ga_error *err);
const char *ga_cupti_result_string(int result);
/* Replay passes that names[0..k) take on chip, from a fresh host object
 * (the host API only ever adds metrics to a configuration); -1 when CUPTI
 * refuses them (an unknown name, say). */
long ga_host_passes(const char *chip, const uint8_t *avail, const char *const *names, size_t k);

/* Split names into metric sets of at most max_passes replay passes each on
 * chip, filling set_of[i] for each name; returns the number of sets (1 when
 * everything fits, or when max_passes is 0: no limit).  First fit, bundle
 * by bundle (bundle[i] as from ga_ruleset_metric_bundles; NULL: every
 * metric on its own): a bundle goes whole into the first set with room; one
 * that fits no set alone is placed metric by metric.  A metric that takes
 * more passes than max_passes by itself gets a set of its own.  All names
 * must be valid on chip.  The result is cached on disk (GPUADVISE_CACHE_DIR,
 * else $XDG_CACHE_HOME/gpuadvise or ~/.cache/gpuadvise), keyed by everything
 * it depends on; avail_size is the availability image's size (0 with NULL). */
size_t ga_host_pack(const char *chip, const uint8_t *avail, size_t avail_size,
                    const char *const *names, const size_t *bundle, size_t n,
                    size_t max_passes, size_t *set_of);

#endif
