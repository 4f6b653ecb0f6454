/* protocol.h: what the launcher (launcher.c) and the injection library
 * (libgpuadvise-inject.so) share.  The launcher sets the environment
 * variables below in the program's environment; every process of the
 * program (children inherit CUDA_INJECTION64_PATH) appends one JSON object
 * a line to RUN_DIR/<pid>.rec, with a "type" from ga_record_type:
 *   start      {pid, ppid, tool_version, host, and where a job's launcher
 *               set them: rank, local_rank, world_size, rank_from (the
 *               variable the rank came from, src/profile/procinfo.h)}
 *   gpu        {pid, index, uuid}: a GPU the process made a context on
 *   device     {pid, context, device{...}, passes, metrics[...],
 *               sets[{passes, metrics}]}
 *   launch     {the launch object of the profile schema, with "nvtx": the
 *               NVTX ranges open on the launching thread (nvtx.c)}
 *   error      {pid, code, message[, metric]}
 *              (code "source": a note on source-level data)
 *   source     {an entry of the profile's "sources" array}
 *   unprofiled {an entry of the profile's "unprofiled" array; one per NVTX
 *               path the kernel's unprofiled launches were made in}
 *   end        {pid, launches, matched, profiled, setup_seconds,
 *               measure_seconds, loop_launches, graph_launches}
 *              (missing if the process died)
 * A last line without its newline was cut short by a kill (records.c skips
 * it). */
#ifndef GA_PROTOCOL_H
#define GA_PROTOCOL_H

/* Set by the launcher for every run. */
#define GA_ENV_RUN_DIR        "GPUADVISE_RUN_DIR"        /* where records go */
#define GA_ENV_METRICS        "GPUADVISE_METRICS"        /* metric names: ',' within a bundle, ';' between */
#define GA_ENV_MAX_PASSES     "GPUADVISE_MAX_PASSES"     /* replay passes per launch, 0: no limit */
#define GA_ENV_KERNEL         "GPUADVISE_KERNEL"         /* NAME or regex:RE */
#define GA_ENV_LAUNCH_SKIP    "GPUADVISE_LAUNCH_SKIP"
#define GA_ENV_LAUNCH_COUNT   "GPUADVISE_LAUNCH_COUNT"
#define GA_ENV_MAX_PER_KERNEL "GPUADVISE_MAX_PER_KERNEL" /* repeats of one (name, grid, block) */
#define GA_ENV_KEEP_IMAGE     "GPUADVISE_KEEP_IMAGE"     /* write the first raw counter-data image here */
#define GA_ENV_TOOL_VERSION   "GPUADVISE_TOOL_VERSION"
#define GA_ENV_SOURCE         "GPUADVISE_SOURCE"         /* auto (default), force, off */
/* Source lines, automatically: one line per rule with `source_lines`,
 *     RULE-ID <TAB> EXPRESSION <NEWLINE>
 * (ga_ruleset_source_trigger, src/rules/rules.h), EXPRESSION in the rule
 * language (src/rules/expr.h) over CUPTI metric names.  A kernel's source
 * lines are collected when one rule's expression holds over the values of
 * one of its profiled launches; the source record's "trigger" then names
 * the rules that held ("rule ID", "rules ID, ID").  Neither part holds a
 * tab or a newline.  Unset or empty: none (but "force"). */
#define GA_ENV_SOURCE_WHEN    "GPUADVISE_SOURCE_WHEN"
/* Kernels the default ("auto") source mode never measures: those of the
 * owners whose source the user cannot edit (rules/owners.yaml: cuBLAS,
 * cuDNN, PyTorch's ATen, ...).  The owners' name patterns in file order,
 * one a line, "glob<TAB>PATTERN" or "regex<TAB>PATTERN" ('!' before an
 * editable owner's), matched as ga_names_match matches (util.h); the
 * first match decides (ga_ruleset_source_skip). */
#define GA_ENV_SOURCE_SKIP    "GPUADVISE_SOURCE_SKIP"
/* The rules ("ID,ID") whose flagged kernels get each instruction's opcode
 * (nvdisasm); every kernel with "force". */
#define GA_ENV_SOURCE_OPCODES "GPUADVISE_SOURCE_OPCODES"
/* 0: a kernel launched once is not launched again for its source lines */
#define GA_ENV_SOURCE_REPLAY  "GPUADVISE_SOURCE_REPLAY"
#define GA_ENV_STALLS         "GPUADVISE_STALLS"         /* stall run: file of kernels to PC-sample */
#define GA_ENV_MIN_SHARE      "GPUADVISE_MIN_SHARE"      /* percent of GPU time for more profiled launches */
#define GA_ENV_LOOP_REPLAY    "GPUADVISE_LOOP_REPLAY"    /* 0: measure no loop across its iterations */
/* Kernels never replayed nor put in a loop's range: those that wait for
 * another process (communication kernels: NCCL's collectives, NVSHMEM),
 * whose replay would wait for ever.  The text of GA_ENV_SOURCE_SKIP's form,
 * '!' before every pattern that is not of kind "comm"
 * (ga_ruleset_no_replay); the launcher always sets it, to
 * GA_NO_REPLAY_DEFAULT when the rules' owners name no such kernel. */
#define GA_ENV_NO_REPLAY      "GPUADVISE_NO_REPLAY"
#define GA_NO_REPLAY_DEFAULT  "glob\tncclKernel*\nglob\tncclDevKernel*\n" \
                              "regex\t^(void )?nvshmemi?_\n"
/* The timeline (activity.c): unset or "1" on, "0" off, "only" without the
 * counters (--timeline-only). */
#define GA_ENV_TIMELINE       "GPUADVISE_TIMELINE"
#define GA_ENV_TIMELINE_KINDS "GPUADVISE_TIMELINE_KINDS" /* kernel,memcpy,memset: which GPU records */
/* Seconds a measured launch may take (ENTER to EXIT) before the injection
 * library stops its process, with a record naming the kernel; 0: never. */
#define GA_ENV_WATCHDOG       "GPUADVISE_WATCHDOG"

/* NVTX's (not ours): the library NVTX hands its calls to.  The launcher
 * names the injection library (nvtxcb.c), unless --nvtx=off. */
#define GA_ENV_NVTX_INJECTION "NVTX_INJECTION64_PATH"

/* Read by the injection library or cupti_host.c only; set by the user
 * (benchmarks, diagnosis), passed through by the launcher untouched. */
#define GA_ENV_CACHE_DIR      "GPUADVISE_CACHE_DIR"      /* metric-set cache; "" or off: none */
#define GA_ENV_NVPERF_PRELOAD "GPUADVISE_NVPERF_PRELOAD" /* 0: load CUPTI's metrics library late */
#define GA_ENV_COUNTER_AVAILABILITY "GPUADVISE_COUNTER_AVAILABILITY" /* 1: always read the image */
#define GA_ENV_LOCK_WAIT      "GPUADVISE_LOCK_WAIT"      /* seconds to wait for the run's counters */
#define GA_ENV_TIMING_LOG     "GPUADVISE_TIMING_LOG"     /* FILE: a line of phase times per process */
#define GA_ENV_SOURCE_LOG     "GPUADVISE_SOURCE_LOG"     /* FILE: every SASS/PC-sampling CUPTI call */
#define GA_ENV_LOOP_LOG       "GPUADVISE_LOOP_LOG"       /* FILE: a line per loop-replay event */
#define GA_ENV_PCSAMP_PERIOD  "GPUADVISE_PCSAMP_PERIOD"  /* 5..31: sample every 2^N cycles */

/* The records of a .rec file. */
typedef enum {
	GA_REC_NONE = -1,           /* no type, or one this version does not know */
	GA_REC_START,
	GA_REC_DEVICE,
	GA_REC_LAUNCH,
	GA_REC_ERROR,
	GA_REC_SOURCE,
	GA_REC_UNPROFILED,
	GA_REC_END,
	GA_REC_GPU,
	GA_REC_N
} ga_record_type;

/* The "type" of each record: ga_record_names[GA_REC_LAUNCH] is "launch". */
extern const char *const ga_record_names[GA_REC_N];

/* The record type named name (NULL: GA_REC_NONE). */
ga_record_type ga_record_type_of(const char *name);

#endif
