/* rangeprof.h: the CUPTI Range Profiler in the injection library: the
 * metric sets of each chip, each context's range-profiler object and
 * counter-data images, and the calls that measure with them.  A mechanism:
 * it calls nothing above it. */
#ifndef GA_RANGEPROF_H
#define GA_RANGEPROF_H

#include "injstate.h"

/* A failed CUPTI call's record; on CUPTI_ERROR_HARDWARE_BUSY also
 * st->counters_busy, on which the callbacks stop profiling. */
void cupti_failed(ga_inj *st, CUptiResult r, const char *what);
const char *cupti_code(CUptiResult r);
/* In a function with a ga_inj *st and an `out:` label. */
#define CUPTI_TRY(call, what)                                                        \
	do {                                                                          \
		CUptiResult r_ = (call);                                              \
		if (r_ != CUPTI_SUCCESS) {                                            \
			cupti_failed(st, r_, what);                                    \
			goto out;                                                      \
		}                                                                     \
	} while (0)
int dev_attr(CUdevice d, CUdevice_attribute a);
ctx_state *ctx_find(ga_inj *st, CUcontext ctx, uint32_t uid);
/* The context's state, made (device record written, metric sets packed)
 * at its first profiled launch; cs->ok 0 when it cannot be profiled. */
ctx_state *ctx_get(ga_inj *st, CUcontext ctx, uint32_t uid);
/* The context is being destroyed: its object and images go. */
void ctx_release(ctx_state *cs);
void measure_disable(ctx_state *cs);
void measure_drop(ctx_state *cs);
int measure_enable(ga_inj *st, ctx_state *cs);
/* Start measuring the next launch with metric set `set` (kernel replay,
 * auto range). */
int measure_begin(ga_inj *st, ctx_state *cs, size_t set);
size_t counter_data_size(ga_inj *st, ctx_state *cs, const metric_set *ms, size_t ranges);
int counter_data_init(ga_inj *st, ctx_state *cs, uint8_t *data, size_t size);
int set_config(ga_inj *st, ctx_state *cs, const metric_set *ms, uint8_t *data, size_t size,
               CUpti_ProfilerReplayMode mode, CUpti_ProfilerRange range, size_t ranges);
CUptiResult range_start(const ctx_state *cs);
CUptiResult range_push(const ctx_state *cs, size_t pos);
CUptiResult range_pop(const ctx_state *cs);
CUptiResult range_stop(const ctx_state *cs, int *all);
CUptiResult range_decode(const ctx_state *cs, size_t *dropped);

#endif
