/* activity.h: the timeline's collection in the injection library: CUPTI's
 * Activity API for what the GPU ran (kernels, copies, sets, with their
 * start and end), driver-API callbacks for the host's time inside CUDA
 * calls, aggregated as it comes (tlagg.h) and written to
 * RUN_DIR/<pid>.timeline.json, again every few seconds and at exit, by an
 * atomic rename: a crash keeps the last.  GA_ENV_TIMELINE: "0" off, "only"
 * without the counters, anything else on.  A mechanism: the callbacks call
 * it, it calls nothing above it. */
#ifndef GA_ACTIVITY_H
#define GA_ACTIVITY_H

#include <stdint.h>

#include <cupti.h>

/* Set up (from InitializeInjection, after cuptiSubscribe): the calls'
 * callbacks on sub, the activity buffers, the flush thread.  0: the
 * timeline is off (GA_ENV_TIMELINE=0, or CUPTI refused). */
int activity_start(CUpti_SubscriberHandle sub, const char *run_dir, int pid);
/* On, and not stopped. */
int activity_on(void);
/* The CUPTI clock, ns. */
double activity_now(void);

/* A driver-API callback that is not a launch: a CUDA call the timeline
 * times (a synchronisation, a copy, an allocation); 1 when it was one. */
int activity_call(CUpti_CallbackId cbid, const CUpti_CallbackData *cb);
/* A launch's ENTER (t: its time) and EXIT; measured: the profiler measures
 * this launch (its GPU records are the profiler's, not the kernel's
 * times); captured: it goes into a CUDA graph being captured, and does
 * not run.  key: the kernel and its launch shape, for the loop's
 * iterations. */
void activity_launch_enter(const CUpti_CallbackData *cb, double t, int measured, int captured,
                           long key);
/* measured: the launch was measured (replayed) inside the call, so its
 * host time is the profiler's, not a launch's cost. */
void activity_launch_exit(const CUpti_CallbackData *cb, int measured);
/* The legacy default stream's id in a context (launches on it count as
 * serialized work). */
void activity_legacy_stream(uint32_t stream_id);
/* The profiler's own span [start, end]: neither busy nor idle. */
void activity_excluded(double start, double end);

/* At exit: everything flushed, the final timeline written. */
/* Kernel records off while SASS metrics patch and measure a launch
 * (sass.c), and on again after: CUPTI's kernel timestamps instrument the
 * same launch. */
void activity_kernels_pause(void);
void activity_kernels_resume(void);
void activity_finish(void);

#endif
