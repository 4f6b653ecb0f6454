/* loopreplay.c: measuring a loop's launches across its iterations.
 *
 * A program that runs the same launches over and over (a training loop's
 * steps, a benchmark's repetitions) can have its kernels measured without
 * replaying any launch.  Once the last 2p launches are two copies of the
 * same p (loop.c: p up to GA_PERIOD_MAX, found by a rolling hash;
 * ga_loop_detect), the range profiler is set up for user replay with user
 * ranges: each following iteration of the program is one pass, in which
 * the first launch of each kernel that wants the set is in a range of its
 * own (range_push at its ENTER, range_pop at its EXIT) and every other
 * launch runs outside the ranges at full speed (a range costs about 1.2 ms
 * on an H200, a launch outside them nothing: bench/probe/rp_probe.c T16).
 * A 7-pass metric set then costs seven iterations and one object's first
 * start (about 135 ms) instead of a save, restore and seven replays of
 * every launch (about 170 ms a kernel in PyTorch, bench/phases.sh).  The values
 * of a launch come from the same position in consecutive iterations, as
 * with ncu's application replay, so a kernel whose work changes between
 * iterations is measured over several (--no-loop-replay measures each
 * launch on its own).  A launch out of the pattern between iterations is
 * skipped (it runs outside the passes); inside a pass it breaks the pass,
 * whose set's values so far are dropped, and the set starts again at the
 * next iteration (ga_loop_mismatch).  Another context, a range count that
 * does not match, or passes broken again and again end the loop, and the
 * launches go on as before.
 *
 * While a loop may still show (GA_LOOP_MIN_KERNELS kernels seen), a
 * kernel's other metric sets wait for its GA_LOOP_DEFER-th launch rather
 * than take a replay each, unless it runs in a row: a loop of one kernel is
 * cheaper replayed (ga_sched_decide).  What to measure is policy.c's
 * (ga_sched's loop); the CUPTI side is here.  The callbacks call in with
 * the library's state (injstate.h); this file calls only the mechanisms
 * below it (rangeprof.c, launchinfo.c, counterlock.c, measured.c). */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>

#include "counterlock.h"
#include "launchinfo.h"
#include "loopreplay.h"
#include "measured.h"
#include "rangeprof.h"

/* The range profiler's side of the loop being measured. */
static struct {
	int configured;           /* the range profiler holds the set */
	ctx_state *cs;
	uint8_t *cdata;
	size_t cdata_size;
	ga_launch *meta;          /* the launches of the set's first pass, by position */
	size_t n_meta;
	int pushed;               /* the launch in flight is in a range */
} loop_rp;

/* GA_ENV_LOOP_LOG=FILE: a line per loop event (found, pass, broken, first
 * skip of a run, measured, ended), with the selected launch's count and
 * the kernels expected and seen, for finding what breaks a program's
 * passes; and one per kernel's first launch (loop_log_first).  Opened at
 * the first event; nothing when unset. */
static void loop_log(ga_inj *st, const char *event, const ga_repeat_slot *got,
                     const char *fmt, ...)
{
	static FILE *f;
	static int tried;
	va_list ap;

	if (!tried) {
		const char *path = getenv(GA_ENV_LOOP_LOG);
		tried = 1;
		if (path && *path && (f = fopen(path, "a")))
			setvbuf(f, NULL, _IOLBF, 0);
	}
	if (!f)
		return;
	fprintf(f, "%ld %s n=%zu period=%zu pos=%zu set=%zu pass=%ld sel=%zu", (long)st->pid, event,
	        st->sched.loop.det.n, st->sched.loop.period, st->sched.loop.pos, st->sched.loop.set,
	        st->sched.loop.pass, st->sched.loop.n_sel);
	va_start(ap, fmt);
	vfprintf(f, fmt, ap);
	va_end(ap);
	if (got && st->sched.loop.period)
		fprintf(f, " expected=%s got=%s",
		        st->sched.repeats[st->sched.loop.keys[st->sched.loop.pos]].mangled,
		        got->mangled);
	fputc('\n', f);
}

void loop_log_first(ga_inj *st, const ga_repeat_slot *rep)
{
	loop_log(st, "first", NULL, " launch=%ld seen_at=%ld live_at=%ld profiled=%ld waiting=%d "
	         "kernel=%s", rep->first_matched, st->sched.loop.seen_at, st->sched.loop.live_at,
	         rep->profiled, rep->waiting, rep->mangled);
}

/* After a launch: is the run repeating, with kernels that want a set? */
static void loop_detect(ga_inj *st, const CUpti_CallbackData *cb)
{
	ctx_state *cs = ctx_find(st, cb->context, cb->contextUid);

	if (!cs || !cs->ok)
		return;
	if (!ga_loop_detect(&st->sched, cs->cfg->n_sets))
		return;
	loop_log(st, "found", NULL, "");
	loop_rp.cs = cs;
	loop_rp.configured = 0;
}

static void meta_clear(void)
{
	for (size_t i = 0; i < loop_rp.n_meta; i++)
		launch_free(&loop_rp.meta[i]);
}

static void loop_clear(ga_inj *st, int failed)
{
	meta_clear();
	if (st->sched.loop.active)
		ga_loop_stop(&st->sched, failed);
	loop_rp.configured = 0;
}

/* Drop the set's passes so far (a pass broken, the loop ended); in_pass:
 * inside a pass, whose first launch started the range profiler. */
static void passes_drop(ga_inj *st, int cupti_ok, int in_pass)
{
	if (cupti_ok && in_pass && loop_rp.cs->rp)
		range_stop(loop_rp.cs, NULL);
	if (cupti_ok && loop_rp.configured) {
		st->loop_drops_broken++;
		measure_drop(loop_rp.cs);
	}
	loop_rp.configured = 0;
}

/* The loop broke (or its context went). */
static void loop_abort(ga_inj *st, int cupti_ok)
{
	loop_log(st, "abort", NULL, "");
	passes_drop(st, cupti_ok, st->sched.loop.pos > 0);
	loop_clear(st, 1);
}

/* Loop replay cannot go on in this process (a CUPTI call failed). */
static void loop_give_up(ga_inj *st)
{
	loop_abort(st, 1);
	st->sched.loop.off = 1;
}

void loop_context_gone(ga_inj *st, const ctx_state *cs)
{
	if (st->sched.loop.active && loop_rp.cs == cs)
		loop_abort(st, 0);
}

/* A fresh range-profiler object for the loop's set, user replay, a user
 * range per launch the set measures. */
static int loop_configure(ga_inj *st)
{
	ctx_state *cs = loop_rp.cs;
	const metric_set *ms = &cs->cfg->sets[st->sched.loop.set];
	double t = ga_mono_seconds();
	size_t size;

	if (!hold_counters(st, cs))
		return -1;
	/* An object keeps its first configuration's counters: a kernel
	 * replay's object, or a loop's of another set, is replaced.  A loop's
	 * object of the same set takes the new ranges with a new SetConfig
	 * and starts again in about 20 ms instead of a fresh object's 180
	 * (bench/probe/rp_probe.c T17, H200). */
	if (cs->rp && cs->loop_set != (long)st->sched.loop.set)
		measure_drop(cs);
	else if (cs->rp)
		st->objects_kept++;
	if (measure_enable(st, cs) != 0)
		return -1;
	phase(st, PH_ENABLE, &t);
	size = counter_data_size(st, cs, ms, st->sched.loop.n_sel);
	if (!size)
		return -1;
	if (st->sched.loop.period > loop_rp.n_meta) {
		meta_clear();
		free(loop_rp.meta);
		loop_rp.meta = ga_xcalloc(st->sched.loop.period, sizeof(*loop_rp.meta));
		loop_rp.n_meta = st->sched.loop.period;
	}
	if (size != loop_rp.cdata_size) {
		free(loop_rp.cdata);
		loop_rp.cdata = ga_xcalloc(1, size);
		loop_rp.cdata_size = size;
	}
	if (counter_data_init(st, cs, loop_rp.cdata, loop_rp.cdata_size) != 0)
		return -1;
	phase(st, PH_CDATA, &t);
	if (set_config(st, cs, ms, loop_rp.cdata, loop_rp.cdata_size, CUPTI_UserReplay,
	               CUPTI_UserRange, st->sched.loop.n_sel) != 0)
		return -1;
	phase(st, PH_CONFIG, &t);
	cs->cur_set = -1;         /* not a configuration measure_begin can use */
	cs->loop_set = (long)st->sched.loop.set;
	loop_rp.configured = 1;
	return 0;
}

/* A launch while iterations are measured: 1 when it is part of the loop
 * (its EXIT ends the pass when st->pending is PENDING_LOOP_PASS, and its
 * range when the set measures it). */
static int loop_take(ga_inj *st, const ga_repeat_slot *rep, const CUpti_CallbackData *cb,
                     const launch_args *a)
{
	ctx_state *cs = loop_rp.cs;

	if (cb->context != cs->ctx || cb->contextUid != cs->uid) {
		loop_abort(st, 1);
		return 0;
	}
	if (!ga_loop_expected(&st->sched, rep)) {
		/* Before ga_loop_mismatch moves the position. */
		int in_pass = st->sched.loop.pos > 0;
		ga_loop_miss m;
		if (in_pass || st->sched.loop.skipped == 0)
			loop_log(st, in_pass ? "miss" : "skip", rep, "");
		m = ga_loop_mismatch(&st->sched);
		if (m == GA_LOOP_ENDED)
			loop_log(st, "ended", NULL, " broken_passes=%ld", st->sched.loop.broken_passes);
		if (m != GA_LOOP_SKIP)
			passes_drop(st, 1, in_pass);
		if (m == GA_LOOP_BROKEN_PASS)
			meta_clear();
		else if (m == GA_LOOP_ENDED)
			loop_clear(st, 0);
		return 0;
	}
	if (st->sched.loop.pos == 0) {
		CUptiResult r;
		double t;
		if (!loop_rp.configured && loop_configure(st) != 0) {
			loop_give_up(st);
			return 0;
		}
		t = ga_mono_seconds();
		if ((r = range_start(cs)) != CUPTI_SUCCESS) {
			cupti_failed(st, r, "starting the range profiler for a loop iteration");
			loop_give_up(st);
			return 0;
		}
		phase(st, PH_START, &t);
	}
	loop_rp.pushed = ga_loop_takes(&st->sched, st->sched.loop.pos);
	if (loop_rp.pushed) {
		CUptiResult r;
		if (st->sched.loop.pass == 0) {
			double t = ga_mono_seconds();
			launch_meta(&loop_rp.meta[st->sched.loop.pos], cs, a, cb->contextUid, NULL,
			            (int)st->pid, st->sched.total_launches - 1);
			loop_rp.meta[st->sched.loop.pos].metric_set = (int)st->sched.loop.set;
			phase(st, PH_META, &t);
		}
		if ((r = range_push(cs, st->sched.loop.pos)) != CUPTI_SUCCESS) {
			cupti_failed(st, r, "pushing a range for a loop iteration's launch");
			loop_rp.pushed = 0;
			loop_give_up(st);
			return 0;
		}
	}
	if (ga_loop_advance(&st->sched))
		st->pending = PENDING_LOOP_PASS;
	else if (loop_rp.pushed)
		st->pending = PENDING_LOOP_RANGE;
	return 1;
}

int loop_launch(ga_inj *st, const ga_repeat_slot *rep, const CUpti_CallbackData *cb,
                const launch_args *a, int in_a_row)
{
	ga_loop_push(&st->sched, rep);
	if (st->sched.loop.active && loop_take(st, rep, cb, a))
		return 1;
	/* A kernel run in a row is no loop worth measuring this way; a loop
	 * with such a pair in it is seen at its next launch. */
	if (!st->sched.loop.active && !in_a_row)
		loop_detect(st, cb);
	return 0;
}

/* After the set's last pass: every launch the set measured gets its
 * values from its range, the ranges in the order of the positions. */
static void loop_values(ga_inj *st, const metric_set *ms)
{
	double *vals = ga_xcalloc(ms->n_names, sizeof(*vals));
	ga_error err = {0};
	size_t range = 0;

	for (size_t i = 0; i < st->sched.loop.period; i++) {
		if (!ga_loop_takes(&st->sched, i))
			continue;
		ga_host_evaluate(ms->host, loop_rp.cdata, loop_rp.cdata_size, range++, ms->names,
		                 ms->n_names, vals, &err);
		launch_done(st, &loop_rp.meta[i], loop_rp.cs->cfg, ms, vals,
		            &st->sched.repeats[st->sched.loop.keys[i]]);
		ga_loop_measured(&st->sched, i);
	}
	free(vals);
}

/* EXIT of a launch in a range of its own: the range ends. */
static int range_end(ga_inj *st)
{
	CUptiResult r;

	if (!loop_rp.pushed)
		return 0;
	loop_rp.pushed = 0;
	if ((r = range_pop(loop_rp.cs)) != CUPTI_SUCCESS) {
		cupti_failed(st, r, "popping a loop iteration's range");
		loop_give_up(st);
		return -1;
	}
	return 0;
}

void loop_exit_range(ga_inj *st)
{
	st->pending = PENDING_NONE;
	range_end(st);
}

void loop_exit_launch(ga_inj *st)
{
	ctx_state *cs = loop_rp.cs;
	const chip_cfg *c = cs->cfg;
	double t = ga_mono_seconds();
	size_t nranges = 0;
	ga_error err = {0};

	st->pending = PENDING_NONE;
	if (range_end(st) != 0)
		return;
	{
		CUptiResult r;
		int all = 0;
		if ((r = range_stop(cs, &all)) != CUPTI_SUCCESS) {
			cupti_failed(st, r, "stopping the range profiler after a loop iteration");
			loop_give_up(st);
			return;
		}
		ga_loop_pass_done(&st->sched);
		phase(st, PH_STOP, &t);
		loop_log(st, "pass", NULL, " all=%d", all);
		if (!all)
			return;
	}
	{
		size_t dropped = 0;
		if (range_decode(cs, &dropped) != CUPTI_SUCCESS || dropped ||
		    ga_host_num_ranges(loop_rp.cdata, loop_rp.cdata_size, &nranges, &err) != 0 ||
		    nranges != st->sched.loop.n_sel) {
			/* The passes did not push the same ranges: the values
			 * cannot be placed. */
			loop_abort(st, 1);
			return;
		}
		phase(st, PH_DECODE, &t);
	}
	loop_values(st, &c->sets[st->sched.loop.set]);
	phase(st, PH_RECORD, &t);
	loop_log(st, "measured", NULL, " launches=%ld", st->sched.loop.launches);
	loop_clear(st, 0);        /* the object stays for the next loop of this set */
	if (ga_loop_next_set(&st->sched, c->n_sets))   /* the next set, from the next iteration */
		loop_log(st, "next", NULL, "");
}

void loop_graph_launch(ga_inj *st, const CUpti_CallbackData *cb)
{
	ga_loop_miss m;

	if (!st->sched.loop.active || st->sched.loop.pos == 0)
		return;   /* between iterations: outside the passes */
	if (cb->context != loop_rp.cs->ctx || cb->contextUid != loop_rp.cs->uid) {
		loop_abort(st, 1);
		return;
	}
	passes_drop(st, 1, 1);
	m = ga_loop_mismatch(&st->sched);
	if (m == GA_LOOP_BROKEN_PASS)
		meta_clear();
	else
		loop_clear(st, 0);
}
