/* sass.h: source-level collection inside the injection library (sass.c,
 * pcsamp.c, cubins.c).
 *
 * CUPTI SASS metrics on one later launch of a kernel whose profiled launch
 * made the rules' source trigger hold (or of every kernel with --source),
 * and in the stall run (--stalls: the program run again without the range
 * profiler) CUPTI PC sampling of those kernels' first launch; PCs mapped to
 * file:line through the cubins kept at module load.  inject.c calls:
 *   ga_sass_init          once, from InitializeInjection
 *   ga_sass_module_loaded from the MODULE_LOADED resource callback
 *   ga_sass_note          after a launch's metrics are evaluated
 *   ga_sass_wants         at a launch's ENTER: measure this one?
 *   ga_sass_begin/end     around that launch (ENTER / EXIT), instead of the
 *                         range profiler
 *   ga_sass_stall_run     is this the stall run? (then no range profiler)
 *   ga_sass_context_created / _destroyed  from the resource callbacks
 * All calls but ga_sass_module_loaded are made with inject.c's lock held;
 * that one may come inside a launch (lazy module loading) and takes the
 * cubin list's own lock. */
#ifndef GA_SASS_H
#define GA_SASS_H

#include <stddef.h>
#include <stdint.h>

#include <cuda.h>
#include <cupti.h>

/* Modes (GA_ENV_SOURCE): "auto" (default: the kernels that GA_ENV_SOURCE_WHEN
 * flags), "force" (--source), "off".  Records go out through writer.h. */
void ga_sass_init(int pid);
/* 1 in the stall run (GA_ENV_STALLS set): PC sampling only. */
int ga_sass_stall_run(void);
/* Stall run: enable PC sampling in a new context / disable it. */
void ga_sass_context_created(CUcontext ctx);
void ga_sass_context_destroyed(CUcontext ctx);
/* 0 when the mode is "off": inject.c need not subscribe to module loads. */
int ga_sass_enabled(void);
/* --source: every profiled kernel's lines, whatever its findings. */
int ga_sass_every_kernel(void);
/* cubins.c */
void ga_sass_module_loaded(const void *module_resource_data);
/* A profiled launch's metric values (NAN: not collected); flags the kernel
 * for source collection when the trigger holds over them (trigger.h),
 * unless GA_ENV_SOURCE_SKIP names it (a library's kernel; name is the
 * demangled name, or NULL). */
void ga_sass_note(const char *mangled, const char *name, uint32_t ctx_uid, char *const *names,
                  const double *values, size_t n);
/* 1 when some flagged kernel still waits for its measurement. */
int ga_sass_outstanding(void);
int ga_sass_wants(const char *mangled, uint32_t ctx_uid);
/* 0 when collection started (then call ga_sass_end at the launch's EXIT). */
int ga_sass_begin(CUcontext ctx, CUdevice dev, uint32_t ctx_uid, const char *mangled,
                  const unsigned grid[3], const unsigned block[3]);
void ga_sass_end(void);

/* sassreplay.c: a kernel's first launch measured again with SASS metrics
 * when its values flag it (device memory saved at its ENTER, restored
 * before the second run).  prepare at the ENTER of a launch the range
 * profiler measures with every metric set: 0 when a checkpoint was saved.
 * finish at its EXIT, after the values were noted (ga_sass_note): measures
 * again when flagged, drops the checkpoint either way. */
int ga_sass_replay_prepare(CUcontext ctx, uint32_t ctx_uid, const char *mangled, const char *name);
void ga_sass_replay_finish(CUcontext ctx, CUdevice dev, uint32_t ctx_uid, const char *mangled,
                           const unsigned grid[3], const unsigned block[3],
                           CUpti_CallbackId cbid, const void *params);
/* sass.c: could a launch of this kernel still be flagged?  (source lines
 * on, not the stall run, not flagged yet, not a library kernel) */
int ga_sass_could_flag(const char *mangled, const char *name, uint32_t ctx_uid);
/* sass.c: is a flagged kernel worth a second run?  With --source, when a
 * rule that flagged it reads opcodes (GA_ENV_SOURCE_OPCODES), or with
 * GA_ENV_SOURCE_REPLAY=all. */
int ga_sass_replay_worth(const char *mangled, uint32_t ctx_uid);
/* Could any kernel be worth one (else no checkpoint is taken)? */
int ga_sass_replay_possible(void);
/* ga_sass_end for the second launch: no unprofiled launch is counted. */
void ga_sass_end_replay(void);

#endif
