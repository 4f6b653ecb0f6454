/* sass.h: source-level collection inside the injection library (sass.c).
 *
 * CUPTI SASS metrics on one later launch of a kernel whose profiled launch
 * showed trouble (or of every kernel with --source), CUPTI PC sampling (stall
 * reasons) on the launch after that, PCs mapped to file:line through the
 * cubins kept at module load.  inject.c calls:
 *   ga_sass_init          once, from InitializeInjection
 *   ga_sass_module_loaded from the MODULE_LOADED resource callback
 *   ga_sass_note          after a launch's metrics are evaluated
 *   ga_sass_wants         at a launch's ENTER: measure this one?
 *   ga_sass_begin/end     around that launch (ENTER / EXIT), instead of the
 *                         range profiler
 *   ga_sass_set_release   once: how to take the range profiler out of a
 *                         context before PC sampling there
 * All calls but ga_sass_module_loaded are made with inject.c's lock held;
 * that one may come inside a launch (lazy module loading) and takes the
 * cubin list's own lock. */
#ifndef GA_SASS_H
#define GA_SASS_H

#include <stddef.h>
#include <stdint.h>

#include <cuda.h>

/* Modes (GA_ENV_SOURCE): "auto" (default), "force" (--source), "off". */
typedef void (*ga_sass_writer)(void *json);   /* takes a json_t * record */

void ga_sass_init(int pid, ga_sass_writer write);
/* PC sampling may need the range profiler out of the context: fn takes it
 * out (inject.c enables it again at the context's next profiled launch). */
typedef void (*ga_sass_release_fn)(CUcontext ctx);
void ga_sass_set_release(ga_sass_release_fn fn);
/* 0 when the mode is "off": inject.c need not subscribe to module loads. */
int ga_sass_enabled(void);
void ga_sass_module_loaded(const void *module_resource_data);
/* A profiled launch's metric values (NAN: not collected); flags the kernel
 * for source collection when thresholds are crossed. */
void ga_sass_note(const char *mangled, uint32_t ctx_uid, char *const *names,
                  const double *values, size_t n);
/* 1 when some flagged kernel still waits for its measurement. */
int ga_sass_outstanding(void);
int ga_sass_wants(const char *mangled, uint32_t ctx_uid);
/* 0 when collection started (then call ga_sass_end at the launch's EXIT). */
int ga_sass_begin(CUcontext ctx, CUdevice dev, uint32_t ctx_uid, const char *mangled,
                  const unsigned grid[3], const unsigned block[3]);
void ga_sass_end(void);

#endif
