/* test_timeline.c: the timeline's sweep (profile/timeline.c), its JSON
 * form, and the collector's aggregation as records arrive
 * (collect/tlagg.c).  Every interval here is SYNTHETIC, shaped like the
 * programs the timeline is for: a host-bound step, a copy pipeline. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <jansson.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "collect/tlagg.h"
#include "profile/profile.h"
#include "profile/timeline.h"

#define US 1000.0
/* CUPTI's clock never reads 0 (a 0 is "no timestamp"): every time here
 * is counted from T0. */
#define T0 1e6

static void host(ga_tlagg *a, int kind, double s, double e)
{
	ga_tlagg_host(a, kind, T0 + s, T0 + e);
}

/* A loop's boundary at t: its start (first) or its next iteration's. */
static void bound(ga_tlagg *a, double t, long period, int first)
{
	if (first)
		ga_tlagg_loop_start(a, t, period);
	else
		ga_tlagg_iteration(a, t);
}

static ga_tl_gpu kernel(double s, double e, uint32_t corr)
{
	ga_tl_gpu g = {T0 + s, T0 + e, 0, GA_GPU_KERNEL, -1, -1, 0, 7, 0, corr, "_Z4stepv", {64, 1, 1},
	               {256, 1, 1}};
	return g;
}

/* A GPU record whose launch call was the program's (ga_tlagg_ours): every
 * record here but the profiler's own in test_tool_kernels. */
static void gpu(ga_tlagg *a, const ga_tl_gpu *g)
{
	ga_tlagg_ours(a, g->correlation);
	ga_tlagg_gpu(a, g);
}

static ga_tl_gpu copy(double s, double e, int dir, int mem, double bytes, uint32_t stream)
{
	ga_tl_gpu g = {T0 + s, T0 + e, 0, GA_GPU_COPY, dir, mem, bytes, stream, stream == 0, 0, NULL,
	               {0}, {0}};
	return g;
}

/* A host-bound step, ten times: each 100 us the host spends 30 us inside a
 * launch and 50 us in its own code; the kernel runs 20 us right after the
 * launch returns.  Busy 20 %, idle launching 30 %, other 50 %. */
static void test_host_bound(void **state)
{
	ga_tlagg a;
	ga_timeline t;
	(void)state;
	ga_tlagg_init(&a);
	for (int i = 0; i < 10; i++) {
		double t0 = i * 100 * US;
		host(&a, GA_HOST_LAUNCH, t0, t0 + 30 * US);
		ga_tl_gpu k = kernel(t0 + 30 * US, t0 + 50 * US, (uint32_t)i + 1);
		gpu(&a, &k);
	}
	/* the run's last 50 us of host code: an end mark */
	host(&a, GA_HOST_LAUNCH, 1000 * US, 1000 * US);
	ga_tlagg_result(&a, 42, 1, &t);
	assert_int_equal(t.pid, 42);
	assert_int_equal(t.n_devices, 1);
	assert_true(fabs(t.wall_ns - 1000 * US) < 1);
	assert_true(fabs(t.devices[0].busy_ns - 200 * US) < 1);
	assert_true(fabs(t.devices[0].kernel_ns - 200 * US) < 1);
	assert_true(fabs(t.devices[0].idle_ns[GA_IDLE_LAUNCHING] - 300 * US) < 1);
	assert_true(fabs(t.devices[0].idle_ns[GA_IDLE_OTHER] - 500 * US) < 1);
	assert_true(fabs(t.devices[0].idle_ns[GA_IDLE_BLOCKING]) < 1);
	assert_int_equal(t.devices[0].kernels, 10);
	assert_int_equal(t.host_calls[GA_HOST_LAUNCH], 11);
	assert_true(fabs(t.host_ns[GA_HOST_LAUNCH] - 300 * US) < 1);
	/* the kernels' table: one kernel, ten launches, 200 us */
	assert_int_equal(t.n_kernels, 1);
	assert_string_equal(t.kernels[0].mangled, "_Z4stepv");
	assert_int_equal(t.kernels[0].launches, 10);
	assert_int_equal(t.kernels[0].grid[0], 64);
	assert_true(fabs(t.kernels[0].total_ns - 200 * US) < 1);
	ga_timeline_free(&t);
	ga_tlagg_free(&a);
}

/* A synchronous pageable pipeline: the host inside each copy call for the
 * copy's whole time, the kernel between two copies, all on the default
 * stream.  The GPU is busy copying (exposed: no kernel beside it), idle
 * only while the host launches; nothing overlaps. */
static void test_sync_copies(void **state)
{
	ga_tlagg a;
	ga_timeline t;
	(void)state;
	ga_tlagg_init(&a);
	for (int i = 0; i < 4; i++) {
		double t0 = i * 1000 * US;
		host(&a, GA_HOST_COPY, t0, t0 + 450 * US);
		ga_tl_gpu c1 = copy(t0 + 10 * US, t0 + 450 * US, GA_DIR_HTOD, GA_MEM_PAGEABLE,
		                    32 << 20, 0);
		gpu(&a, &c1);
		host(&a, GA_HOST_LAUNCH, t0 + 450 * US, t0 + 455 * US);
		ga_tl_gpu k = kernel(t0 + 460 * US, t0 + 480 * US, (uint32_t)i + 1);
		gpu(&a, &k);
		host(&a, GA_HOST_COPY, t0 + 455 * US, t0 + 1000 * US);
		ga_tl_gpu c2 = copy(t0 + 480 * US, t0 + 1000 * US, GA_DIR_DTOH, GA_MEM_PAGEABLE,
		                    32 << 20, 0);
		gpu(&a, &c2);
	}
	ga_tlagg_result(&a, 1, 1, &t);
	const ga_tl_device *d = &t.devices[0];
	const ga_copy_stat *h = &d->copy[GA_DIR_HTOD][GA_MEM_PAGEABLE];
	assert_int_equal(h->count, 4);
	assert_true(fabs(h->bytes - 4.0 * (32 << 20)) < 1);
	assert_true(fabs(h->ns - 4 * 440 * US) < 1);
	assert_int_equal(d->copy[GA_DIR_DTOH][GA_MEM_PAGEABLE].count, 4);
	/* copies: 440 + 520 us each round, none beside a kernel */
	assert_true(fabs(d->copy_ns - 4 * 960 * US) < 1);
	assert_true(fabs(d->copy_exposed_ns - d->copy_ns) < 1);
	assert_true(fabs(d->overlap_ns[GA_DIR_HTOD]) < 1);
	assert_true(fabs(d->dir_ns[GA_DIR_DTOH] - 4 * 520 * US) < 1);
	/* idle each round: 10 us inside the first copy call before its copy
	 * ran, 5 us inside the launch, 5 us inside the second copy call before
	 * the kernel ran */
	assert_true(fabs(d->idle_ns[GA_IDLE_BLOCKING] - 4 * 15 * US) < 1);
	assert_true(fabs(d->idle_ns[GA_IDLE_LAUNCHING] - 4 * 5 * US) < 1);
	assert_int_equal(d->default_stream_ops, 8);
	assert_int_equal(d->streams, 2);   /* the kernel's 7 and the copies' 0 */
	ga_timeline_free(&t);
	ga_tlagg_free(&a);
}

/* An async copy on one stream beside a kernel on another: the overlap is
 * the intersection; the profiler's span is neither busy nor idle, and the
 * measured launch's own records do not count as the kernel's times. */
static void test_overlap_and_excluded(void **state)
{
	ga_tlagg a;
	ga_timeline t;
	(void)state;
	ga_tlagg_init(&a);
	ga_tlagg_launched(&a, 5, 0, 1);          /* measured: replayed */
	ga_tl_gpu k = kernel(0, 100 * US, 5);
	gpu(&a, &k);
	host(&a, GA_HOST_EXCLUDED, 0, 100 * US);
	ga_tl_gpu k2 = kernel(200 * US, 300 * US, 6);
	gpu(&a, &k2);
	ga_tl_gpu c = copy(250 * US, 400 * US, GA_DIR_HTOD, GA_MEM_PINNED, 1 << 20, 3);
	gpu(&a, &c);
	ga_tlagg_result(&a, 1, 1, &t);
	const ga_tl_device *d = &t.devices[0];
	assert_true(fabs(t.excluded_ns - 100 * US) < 1);
	assert_true(fabs(ga_timeline_observed_ns(&t) - 300 * US) < 1);
	assert_true(fabs(d->busy_ns - 200 * US) < 1);     /* 200..400 */
	assert_true(fabs(d->overlap_ns[GA_DIR_HTOD] - 50 * US) < 1);
	assert_true(fabs(d->copy_exposed_ns - 100 * US) < 1);
	assert_true(fabs(d->idle_ns[GA_IDLE_OTHER] - 100 * US) < 1);   /* 100..200 */
	/* the replayed launch is not in the kernels' table */
	assert_int_equal(t.n_kernels, 1);
	assert_int_equal(t.kernels[0].launches, 1);
	assert_true(fabs(t.kernels[0].total_ns - 100 * US) < 1);
	assert_int_equal(d->kernels, 2);
	ga_timeline_free(&t);
	ga_tlagg_free(&a);
}

/* Records in batches, out of order, swept up to a safe time after each:
 * the same totals as one sweep of them all.  An open call and an
 * unreported launch hold the safe time back; an interval that arrives
 * after its span was swept counts from then on, the rest in late_ns. */
static void test_streaming(void **state)
{
	ga_tlagg a, b;
	ga_timeline ta, tb;
	(void)state;
	ga_tlagg_init(&a);
	ga_tlagg_init(&b);
	/* 200 kernels of 10 us every 25 us, launches of 5 us before each;
	 * fed to a in batches of 20, each batch reversed, swept with a lag */
	for (int batch = 0; batch < 10; batch++) {
		for (int j = 19; j >= 0; j--) {
			int i = batch * 20 + j;
			double t0 = i * 25 * US;
			ga_tl_gpu k = kernel(t0 + 10 * US, t0 + 20 * US, (uint32_t)i + 1);
			host(&a, GA_HOST_LAUNCH, t0, t0 + 5 * US);
			gpu(&a, &k);
			host(&b, GA_HOST_LAUNCH, t0, t0 + 5 * US);
			gpu(&b, &k);
		}
		double now = (batch + 1) * 20 * 25 * US;
		ga_tlagg_advance(&a, ga_tlagg_safe_time(&a, now, 30 * US));
	}
	ga_tlagg_result(&a, 1, 1, &ta);
	ga_tlagg_result(&b, 1, 1, &tb);
	assert_true(fabs(ta.devices[0].busy_ns - tb.devices[0].busy_ns) < 1);
	assert_true(fabs(ta.devices[0].busy_ns - 2000 * US) < 1);
	for (int k = 0; k < GA_IDLE__N; k++)
		assert_true(fabs(ta.devices[0].idle_ns[k] - tb.devices[0].idle_ns[k]) < 1);
	assert_true(fabs(ta.late_ns) < 1);
	/* bounded: nothing waits in the heap after the end */
	assert_int_equal(a.n_heap, 0);
	ga_timeline_free(&ta);
	ga_timeline_free(&tb);
	ga_tlagg_free(&a);
	ga_tlagg_free(&b);

	/* The safe time: the lag, an open call, an unreported launch. */
	ga_tlagg_init(&a);
	assert_true(fabs(ga_tlagg_safe_time(&a, 1e9, 1e6) - (1e9 - 1e6)) < 1);
	ga_tlagg_open(&a, 77, 5e8);
	assert_true(fabs(ga_tlagg_safe_time(&a, 1e9, 1e6) - 5e8) < 1);
	ga_tlagg_launched(&a, 8, 2e8, 1);        /* measured: never waited for */
	assert_true(fabs(ga_tlagg_safe_time(&a, 1e9, 1e6) - 5e8) < 1);
	ga_tlagg_launched(&a, 9, 3e8, 0);
	assert_true(fabs(ga_tlagg_safe_time(&a, 1e9, 1e6) - 3e8) < 1);
	ga_tl_gpu k = kernel(4e8, 4.1e8, 9);     /* its record resolves it */
	gpu(&a, &k);
	ga_tlagg_close(&a, 77);
	assert_true(fabs(ga_tlagg_safe_time(&a, 1e9, 1e6) - (1e9 - 1e6)) < 1);
	/* an unreported launch is given up after GA_TLAGG_PENDING_MAX_NS */
	ga_tlagg_launched(&a, 10, 1e9, 0);
	assert_true(fabs(ga_tlagg_safe_time(&a, 1e9 + GA_TLAGG_PENDING_MAX_NS + 1, 0) -
	                 (1e9 + GA_TLAGG_PENDING_MAX_NS + 1)) < 1);
	/* late: swept to 2e9, then a kernel 1.9e9..2.1e9 arrives */
	ga_tlagg_advance(&a, T0 + 2e9);
	ga_tl_gpu late = kernel(1.9e9, 2.1e9, 11);
	gpu(&a, &late);
	ga_tlagg_result(&a, 1, 1, &ta);
	assert_true(fabs(ta.late_ns - 1e8) < 1);
	assert_true(ta.devices[0].busy_ns >= 1e8 - 1);
	ga_timeline_free(&ta);
	ga_tlagg_free(&a);

	/* A record that comes before its launch is told (the launch's event
	 * waits on the program's thread): no launch is left pending; and a
	 * record without timestamps (0) is no interval at all. */
	ga_tlagg_init(&a);
	ga_tl_gpu first = kernel(5e8, 5.1e8, 21);
	gpu(&a, &first);
	ga_tlagg_launched(&a, 21, 4e8, 0);
	assert_true(fabs(ga_tlagg_safe_time(&a, 1e9, 1e6) - (1e9 - 1e6)) < 1);
	ga_tl_gpu zero = {0, 0, 0, GA_GPU_KERNEL, -1, -1, 0, 7, 0, 22, "_Z4stepv", {1, 1, 1},
	                  {1, 1, 1}};
	gpu(&a, &zero);
	ga_tlagg_result(&a, 1, 1, &ta);
	assert_int_equal(ta.devices[0].kernels, 1);
	assert_true(fabs(ta.wall_ns - 1e7) < 1);
	ga_timeline_free(&ta);
	ga_tlagg_free(&a);
}

/* A snapshot (a result before the end) changes nothing of the end's: the
 * idle time before a device's first work, still waiting to be swept when
 * the snapshot was taken, is charged to it all the same. */
static void test_snapshot_changes_nothing(void **state)
{
	ga_timeline t[2];
	(void)state;
	for (int snap = 0; snap < 2; snap++) {
		ga_tlagg a;
		ga_tlagg_init(&a);
		host(&a, GA_HOST_LAUNCH, 0, 50 * US);
		ga_tl_gpu k = kernel(100 * US, 200 * US, 1);
		gpu(&a, &k);
		ga_tlagg_advance(&a, T0 + 60 * US);   /* the host's call swept, the kernel not */
		if (snap) {
			ga_timeline mid;
			ga_tlagg_result(&a, 5, 0, &mid);
			ga_timeline_free(&mid);
		}
		ga_tlagg_result(&a, 5, 1, &t[snap]);
		ga_tlagg_free(&a);
	}
	assert_int_equal(t[0].n_devices, 1);
	assert_int_equal(t[1].n_devices, 1);
	for (int k = 0; k < GA_IDLE__N; k++)
		assert_true(fabs(t[0].devices[0].idle_ns[k] - t[1].devices[0].idle_ns[k]) < 1e-6);
	assert_true(t[0].devices[0].idle_ns[GA_IDLE_LAUNCHING] > 0);
	ga_timeline_free(&t[0]);
	ga_timeline_free(&t[1]);
}

/* Loops as found: a short false one (a run of like launches), the real
 * one, and another false one after it.  Iterations are counted inside one
 * loop, never across a break, and the loop that covered the most time is
 * the one reported, with its last iteration as the window. */
static void test_loops(void **state)
{
	ga_tlagg a;
	ga_timeline t;
	(void)state;
	ga_tlagg_init(&a);
	host(&a, GA_HOST_LAUNCH, 0, 5 * US);
	for (int i = 0; i < 3; i++)
		bound(&a, T0 + i * 10 * US, 2, i == 0);
	for (int i = 0; i < 5; i++) {
		double t0 = 100 * US + i * 1000 * US;
		bound(&a, T0 + t0, 3, i == 0);
		host(&a, GA_HOST_ALLOC, t0 + 10 * US, t0 + 60 * US);
	}
	for (int i = 0; i < 3; i++)
		bound(&a, T0 + 5000 * US + i * 10 * US, 2, i == 0);
	ga_tlagg_result(&a, 4, 1, &t);
	assert_int_equal(t.iterations, 4);
	assert_int_equal(t.period, 3);
	assert_true(fabs(t.iteration_ns - 1000 * US) < 1);
	assert_true(t.window_is_iteration);
	assert_true(fabs(t.window_ns - 1000 * US) < 1);
	/* the window is the real loop's last iteration: one allocation */
	assert_int_equal(t.n_events, 1);
	assert_int_equal(t.events[0].kind, GA_HOST_ALLOC);
	assert_true(fabs(t.events[0].start - 10 * US) < 1);
	ga_timeline_free(&t);
	ga_tlagg_free(&a);
}

/* Iterations: the mean of those with nothing of the profiler's in them,
 * and the last such one's intervals, relative to its start. */
static void test_iterations(void **state)
{
	ga_tlagg a;
	ga_timeline t;
	(void)state;
	ga_tlagg_init(&a);
	for (int i = 0; i < 6; i++) {
		double t0 = i * 1000 * US;
		bound(&a, T0 + t0, 2, i == 0);
		if (i == 1)      /* the profiler measured in iteration 1 */
			host(&a, GA_HOST_EXCLUDED, t0 + 100 * US, t0 + 200 * US);
		host(&a, GA_HOST_LAUNCH, t0, t0 + 10 * US);
		ga_tl_gpu k1 = kernel(t0 + 20 * US, t0 + 300 * US, (uint32_t)(2 * i + 1));
		gpu(&a, &k1);
		host(&a, GA_HOST_LAUNCH, t0 + 10 * US, t0 + 20 * US);
		ga_tl_gpu k2 = kernel(t0 + 300 * US, t0 + 500 * US, (uint32_t)(2 * i + 2));
		gpu(&a, &k2);
	}
	ga_tlagg_iteration(&a, T0 + 6000 * US);
	ga_tlagg_result(&a, 3, 1, &t);
	assert_int_equal(t.iterations, 6);
	assert_int_equal(t.period, 2);
	assert_true(fabs(t.iteration_ns - 1000 * US) < 1);
	assert_true(t.window_is_iteration);
	assert_true(fabs(t.window_ns - 1000 * US) < 1);
	/* the last iteration: two launches and two kernels */
	assert_int_equal(t.n_events, 4);
	ga_timeline w;
	ga_timeline_sweep_events(t.events, t.n_events, t.window_ns, &w);
	assert_true(fabs(w.devices[0].busy_ns - 480 * US) < 1);
	assert_true(fabs(w.devices[0].idle_ns[GA_IDLE_LAUNCHING] - 20 * US) < 1);
	assert_true(fabs(w.devices[0].idle_ns[GA_IDLE_OTHER] - 500 * US) < 1);
	assert_int_equal(w.devices[0].kernels, 2);
	ga_timeline_free(&w);

	/* JSON: what is written reads back the same. */
	json_t *j = ga_timeline_to_json(&t);
	ga_timeline r;
	ga_error err = {0};
	assert_int_equal(ga_timeline_from_json(&r, j, "t", &err), 0);
	assert_int_equal(r.pid, 3);
	assert_int_equal(r.n_events, t.n_events);
	assert_int_equal(r.n_kernels, t.n_kernels);
	assert_true(fabs(r.devices[0].busy_ns - t.devices[0].busy_ns) < 1e-6);
	assert_true(fabs(r.iteration_ns - t.iteration_ns) < 1e-6);
	assert_true(r.window_is_iteration && r.complete);
	json_t *j2 = ga_timeline_to_json(&r);
	char *s1 = json_dumps(j, JSON_SORT_KEYS), *s2 = json_dumps(j2, JSON_SORT_KEYS);
	assert_string_equal(s1, s2);
	free(s1);
	free(s2);
	json_decref(j2);
	/* a bad event is refused, naming the field */
	json_array_append_new(json_object_get(j, "events"), json_pack("[ffiiiiI]", 5.0, 1.0, 0, 0,
	                                                                0, -1, (json_int_t)-1));
	ga_timeline bad;
	assert_int_equal(ga_timeline_from_json(&bad, j, "t", &err), -1);
	assert_non_null(strstr(err.msg, "an event must be"));
	json_decref(j);
	ga_timeline_free(&r);
	ga_timeline_free(&t);
	ga_tlagg_free(&a);
}

/* A host-bound loop whose iterations vary: 1000, 1000, 1600, 1000, 1000
 * and a last one of 400 us (mean 1000).  The window is the newest of the
 * iterations nearest the mean (the fifth, whose allocation marks it), not
 * the last one: its busy share is the loop's typical one. */
static void test_typical_iteration(void **state)
{
	ga_tlagg a;
	ga_timeline t;
	(void)state;
	static const double len[] = {1000, 1000, 1600, 1000, 1000, 400};
	ga_tlagg_init(&a);
	double t0 = 0;
	for (int i = 0; i < 6; i++) {
		bound(&a, T0 + t0, 1, i == 0);
		host(&a, GA_HOST_LAUNCH, t0, t0 + 10 * US);
		ga_tl_gpu k = kernel(t0 + 20 * US, t0 + 220 * US, (uint32_t)(i + 1));
		gpu(&a, &k);
		if (i == 4)
			host(&a, GA_HOST_ALLOC, t0 + 300 * US, t0 + 310 * US);
		t0 += len[i] * US;
	}
	ga_tlagg_iteration(&a, T0 + t0);
	ga_tlagg_result(&a, 5, 1, &t);
	assert_int_equal(t.iterations, 6);
	assert_true(fabs(t.iteration_ns - 1000 * US) < 1);
	assert_true(t.window_is_iteration);
	assert_true(fabs(t.window_ns - 1000 * US) < 1);
	int alloc = 0;
	for (size_t i = 0; i < t.n_events; i++)
		alloc += t.events[i].kind == GA_HOST_ALLOC && t.events[i].device < 0;
	assert_int_equal(alloc, 1);
	ga_timeline w;
	ga_timeline_sweep_events(t.events, t.n_events, t.window_ns, &w);
	assert_true(fabs(w.devices[0].busy_ns - 200 * US) < 1);
	ga_timeline_free(&w);
	ga_timeline_free(&t);
	ga_tlagg_free(&a);
}

/* Kernels no launch call of the program started (the range profiler's
 * WaitNs, a replay made inside a measured launch) stay out of the
 * timeline's sums and kernel table, counted apart; the correlations
 * remembered slide with the launches. */
static void test_tool_kernels(void **state)
{
	ga_tlagg a;
	ga_timeline t;
	(void)state;
	ga_tlagg_init(&a);
	host(&a, GA_HOST_LAUNCH, 0, 10 * US);
	ga_tl_gpu k = kernel(10 * US, 30 * US, 100);
	gpu(&a, &k);
	/* the profiler's: 80 us, correlations near the program's */
	ga_tl_gpu w = kernel(40 * US, 120 * US, 101);
	w.mangled = "WaitNs";
	ga_tlagg_gpu(&a, &w);
	ga_tl_gpu w2 = kernel(130 * US, 210 * US, 102);
	w2.mangled = "WaitNs";
	ga_tlagg_gpu(&a, &w2);
	host(&a, GA_HOST_LAUNCH, 300 * US, 300 * US);
	ga_tlagg_result(&a, 1, 1, &t);
	assert_int_equal(t.tool_kernels, 2);
	assert_true(fabs(t.tool_ns - 160 * US) < 1);
	assert_int_equal(t.n_kernels, 1);
	assert_string_equal(t.kernels[0].mangled, "_Z4stepv");
	assert_true(fabs(t.devices[0].busy_ns - 20 * US) < 1);
	assert_int_equal(t.devices[0].kernels, 1);
	/* in the profile's JSON and back */
	json_t *j = ga_timeline_to_json(&t);
	ga_timeline r;
	ga_error err = {0};
	if (ga_timeline_from_json(&r, j, "t", &err) != 0)
		fail_msg("%s", err.msg);
	assert_int_equal(r.tool_kernels, 2);
	assert_true(fabs(r.tool_ns - 160 * US) < 1);
	json_decref(j);
	ga_timeline_free(&r);
	ga_timeline_free(&t);
	/* the window: a correlation that left it counts as the program's, one
	 * inside it only when marked, one past the newest mark as none */
	uint32_t far = 100 + GA_TLAGG_OURS_BITS + 5;
	ga_tlagg_ours(&a, far);
	assert_true(ga_tlagg_is_ours(&a, 100));
	assert_true(ga_tlagg_is_ours(&a, far));
	assert_false(ga_tlagg_is_ours(&a, far - 1));
	assert_false(ga_tlagg_is_ours(&a, far + 1));
	ga_tlagg_ours(&a, far + 2);
	assert_true(ga_tlagg_is_ours(&a, far + 2));
	/* a jump past the whole window clears it */
	uint32_t jump = far + 3 * GA_TLAGG_OURS_BITS;
	ga_tlagg_ours(&a, jump);
	assert_true(ga_tlagg_is_ours(&a, jump));
	assert_false(ga_tlagg_is_ours(&a, jump - GA_TLAGG_OURS_BITS / 4));
	ga_tlagg_free(&a);
}

/* A profile with a timeline: saved, loaded, merged by pid. */
static void test_profile_round_trip(void **state)
{
	ga_profile p, q;
	ga_tlagg a;
	ga_timeline t;
	ga_error err = {0};
	(void)state;
	ga_profile_init(&p);
	if (ga_profile_load(&p, GA_TEST_FIXTURES "/recorded/testapp-all.json", &err) != 0)
		fail_msg("%s", err.msg);
	ga_tlagg_init(&a);
	host(&a, GA_HOST_LAUNCH, 0, 10 * US);
	ga_tl_gpu k = kernel(10 * US, 30 * US, 1);
	gpu(&a, &k);
	ga_tlagg_result(&a, 99, 1, &t);
	ga_tlagg_free(&a);
	ga_profile_set_timeline(&p, &t);
	char *s = ga_profile_to_string(&p, 0);
	ga_profile_init(&q);
	if (ga_profile_load_string(&q, s, "s", &err) != 0)
		fail_msg("%s", err.msg);
	assert_int_equal(q.n_timelines, 1);
	const ga_timeline *g = ga_profile_timeline(&q, 99);
	assert_non_null(g);
	assert_true(fabs(g->devices[0].busy_ns - 20 * US) < 1e-6);
	assert_null(ga_profile_timeline(&q, 98));
	free(s);
	ga_profile_free(&p);
	ga_profile_free(&q);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_host_bound),
		cmocka_unit_test(test_sync_copies),
		cmocka_unit_test(test_overlap_and_excluded),
		cmocka_unit_test(test_streaming),
		cmocka_unit_test(test_iterations),
		cmocka_unit_test(test_loops),
		cmocka_unit_test(test_typical_iteration),
		cmocka_unit_test(test_snapshot_changes_nothing),
		cmocka_unit_test(test_tool_kernels),
		cmocka_unit_test(test_profile_round_trip),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
