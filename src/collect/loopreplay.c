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
 * (sched.loop); the CUPTI side is here. */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>

#include "inject.h"

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
 * passes.  Opened at the first event; nothing when unset. */
static void loop_log(const char *event, const ga_repeat_slot *got, const char *fmt, ...)
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
	fprintf(f, "%ld %s n=%zu period=%zu pos=%zu set=%zu pass=%ld sel=%zu", (long)inj.pid, event,
	        sched.loop.det.n, sched.loop.period, sched.loop.pos, sched.loop.set,
	        sched.loop.pass, sched.loop.n_sel);
	va_start(ap, fmt);
	vfprintf(f, fmt, ap);
	va_end(ap);
	if (got && sched.loop.period)
		fprintf(f, " expected=%s got=%s",
		        sched.repeats[sched.loop.keys[sched.loop.pos]].mangled, got->mangled);
	fputc('\n', f);
}

/* After a launch: is the run repeating, with kernels that want a set? */
static void loop_detect(const CUpti_CallbackData *cb)
{
	ctx_state *cs = ctx_find(cb->context, cb->contextUid);

	if (!cs || !cs->ok)
		return;
	if (!ga_loop_detect(&sched, cs->cfg->n_sets))
		return;
	loop_log("found", NULL, "");
	loop_rp.cs = cs;
	loop_rp.configured = 0;
}

static void meta_clear(void)
{
	for (size_t i = 0; i < loop_rp.n_meta; i++)
		launch_free(&loop_rp.meta[i]);
}

static void loop_clear(int failed)
{
	meta_clear();
	if (sched.loop.active)
		ga_loop_stop(&sched, failed);
	loop_rp.configured = 0;
}

/* Drop the set's passes so far (a pass broken, the loop ended); in_pass:
 * inside a pass, whose first launch started the range profiler. */
static void passes_drop(int cupti_ok, int in_pass)
{
	if (cupti_ok && in_pass && loop_rp.cs->rp)
		range_stop(loop_rp.cs, NULL);
	if (cupti_ok && loop_rp.configured) {
		inj.loop_drops_broken++;
		measure_drop(loop_rp.cs);
	}
	loop_rp.configured = 0;
}

/* The loop broke (or its context went). */
static void loop_abort(int cupti_ok)
{
	loop_log("abort", NULL, "");
	passes_drop(cupti_ok, sched.loop.pos > 0);
	loop_clear(1);
}

/* Loop replay cannot go on in this process (a CUPTI call failed). */
static void loop_give_up(void)
{
	loop_abort(1);
	sched.loop.off = 1;
}

void loop_context_gone(const ctx_state *cs)
{
	if (sched.loop.active && loop_rp.cs == cs)
		loop_abort(0);
}

/* A fresh range-profiler object for the loop's set, user replay, a user
 * range per launch the set measures. */
static int loop_configure(void)
{
	ctx_state *cs = loop_rp.cs;
	const metric_set *ms = &cs->cfg->sets[sched.loop.set];
	double t = ga_mono_seconds();
	size_t size;

	if (!hold_counters())
		return -1;
	/* An object keeps its first configuration's counters: a kernel
	 * replay's object, or a loop's of another set, is replaced.  A loop's
	 * object of the same set takes the new ranges with a new SetConfig
	 * and starts again in about 20 ms instead of a fresh object's 180
	 * (bench/probe/rp_probe.c T17, H200). */
	if (cs->rp && cs->loop_set != (long)sched.loop.set)
		measure_drop(cs);
	else if (cs->rp)
		inj.objects_kept++;
	if (measure_enable(cs) != 0)
		return -1;
	phase(PH_ENABLE, &t);
	size = counter_data_size(cs, ms, sched.loop.n_sel);
	if (!size)
		return -1;
	if (sched.loop.period > loop_rp.n_meta) {
		meta_clear();
		free(loop_rp.meta);
		loop_rp.meta = ga_xcalloc(sched.loop.period, sizeof(*loop_rp.meta));
		loop_rp.n_meta = sched.loop.period;
	}
	if (size != loop_rp.cdata_size) {
		free(loop_rp.cdata);
		loop_rp.cdata = ga_xcalloc(1, size);
		loop_rp.cdata_size = size;
	}
	if (counter_data_init(cs, loop_rp.cdata, loop_rp.cdata_size) != 0)
		return -1;
	phase(PH_CDATA, &t);
	if (set_config(cs, ms, loop_rp.cdata, loop_rp.cdata_size, CUPTI_UserReplay,
	               CUPTI_UserRange, sched.loop.n_sel) != 0)
		return -1;
	phase(PH_CONFIG, &t);
	cs->cur_set = -1;         /* not a configuration measure_begin can use */
	cs->loop_set = (long)sched.loop.set;
	loop_rp.configured = 1;
	return 0;
}

/* A launch while iterations are measured: 1 when it is part of the loop
 * (its EXIT ends the pass when inj.pending is PENDING_LOOP_PASS, and its
 * range when the set measures it). */
static int loop_take(const ga_repeat_slot *rep, const CUpti_CallbackData *cb,
                     const launch_args *a)
{
	ctx_state *cs = loop_rp.cs;

	if (cb->context != cs->ctx || cb->contextUid != cs->uid) {
		loop_abort(1);
		return 0;
	}
	if (!ga_loop_expected(&sched, rep)) {
		/* Before ga_loop_mismatch moves the position. */
		int in_pass = sched.loop.pos > 0;
		ga_loop_miss m;
		if (in_pass || sched.loop.skipped == 0)
			loop_log(in_pass ? "miss" : "skip", rep, "");
		m = ga_loop_mismatch(&sched);
		if (m == GA_LOOP_ENDED)
			loop_log("ended", NULL, " broken_passes=%ld", sched.loop.broken_passes);
		if (m != GA_LOOP_SKIP)
			passes_drop(1, in_pass);
		if (m == GA_LOOP_BROKEN_PASS)
			meta_clear();
		else if (m == GA_LOOP_ENDED)
			loop_clear(0);
		return 0;
	}
	if (sched.loop.pos == 0) {
		CUptiResult r;
		double t;
		if (!loop_rp.configured && loop_configure() != 0) {
			loop_give_up();
			return 0;
		}
		t = ga_mono_seconds();
		if ((r = range_start(cs)) != CUPTI_SUCCESS) {
			cupti_failed(r, "starting the range profiler for a loop iteration");
			loop_give_up();
			return 0;
		}
		phase(PH_START, &t);
	}
	loop_rp.pushed = ga_loop_takes(&sched, sched.loop.pos);
	if (loop_rp.pushed) {
		CUptiResult r;
		if (sched.loop.pass == 0) {
			double t = ga_mono_seconds();
			launch_meta(&loop_rp.meta[sched.loop.pos], cs, a, cb->contextUid, NULL);
			loop_rp.meta[sched.loop.pos].metric_set = (int)sched.loop.set;
			phase(PH_META, &t);
		}
		if ((r = range_push(cs, sched.loop.pos)) != CUPTI_SUCCESS) {
			cupti_failed(r, "pushing a range for a loop iteration's launch");
			loop_rp.pushed = 0;
			loop_give_up();
			return 0;
		}
	}
	if (ga_loop_advance(&sched))
		inj.pending = PENDING_LOOP_PASS;
	else if (loop_rp.pushed)
		inj.pending = PENDING_LOOP_RANGE;
	return 1;
}

int loop_launch(const ga_repeat_slot *rep, const CUpti_CallbackData *cb, const launch_args *a,
                int in_a_row)
{
	ga_loop_push(&sched, rep);
	if (sched.loop.active && loop_take(rep, cb, a))
		return 1;
	/* A kernel run in a row is no loop worth measuring this way; a loop
	 * with such a pair in it is seen at its next launch. */
	if (!sched.loop.active && !in_a_row)
		loop_detect(cb);
	return 0;
}

/* After the set's last pass: every launch the set measured gets its
 * values from its range, the ranges in the order of the positions. */
static void loop_values(const metric_set *ms)
{
	double *vals = ga_xcalloc(ms->n_names, sizeof(*vals));
	ga_error err = {0};
	size_t range = 0;

	for (size_t i = 0; i < sched.loop.period; i++) {
		if (!ga_loop_takes(&sched, i))
			continue;
		ga_host_evaluate(ms->host, loop_rp.cdata, loop_rp.cdata_size, range++, ms->names,
		                 ms->n_names, vals, &err);
		launch_done(&loop_rp.meta[i], loop_rp.cs->cfg, ms, vals,
		            &sched.repeats[sched.loop.keys[i]]);
		ga_loop_measured(&sched, i);
	}
	free(vals);
}

/* EXIT of a launch in a range of its own: the range ends. */
static int range_end(void)
{
	CUptiResult r;

	if (!loop_rp.pushed)
		return 0;
	loop_rp.pushed = 0;
	if ((r = range_pop(loop_rp.cs)) != CUPTI_SUCCESS) {
		cupti_failed(r, "popping a loop iteration's range");
		loop_give_up();
		return -1;
	}
	return 0;
}

void loop_exit_range(void)
{
	inj.pending = PENDING_NONE;
	range_end();
}

void loop_exit_launch(void)
{
	ctx_state *cs = loop_rp.cs;
	const chip_cfg *c = cs->cfg;
	double t = ga_mono_seconds();
	size_t nranges = 0;
	ga_error err = {0};

	inj.pending = PENDING_NONE;
	if (range_end() != 0)
		return;
	{
		CUptiResult r;
		int all = 0;
		if ((r = range_stop(cs, &all)) != CUPTI_SUCCESS) {
			cupti_failed(r, "stopping the range profiler after a loop iteration");
			loop_give_up();
			return;
		}
		ga_loop_pass_done(&sched);
		phase(PH_STOP, &t);
		loop_log("pass", NULL, " all=%d", all);
		if (!all)
			return;
	}
	{
		size_t dropped = 0;
		if (range_decode(cs, &dropped) != CUPTI_SUCCESS || dropped ||
		    ga_host_num_ranges(loop_rp.cdata, loop_rp.cdata_size, &nranges, &err) != 0 ||
		    nranges != sched.loop.n_sel) {
			/* The passes did not push the same ranges: the values
			 * cannot be placed. */
			loop_abort(1);
			return;
		}
		phase(PH_DECODE, &t);
	}
	loop_values(&c->sets[sched.loop.set]);
	phase(PH_RECORD, &t);
	loop_log("measured", NULL, " launches=%ld", sched.loop.launches);
	loop_clear(0);            /* the object stays for the next loop of this set */
	if (ga_loop_next_set(&sched, c->n_sets))   /* the next set, from the next iteration */
		loop_log("next", NULL, "");
}

void loop_graph_launch(const CUpti_CallbackData *cb)
{
	ga_loop_miss m;

	if (!sched.loop.active || sched.loop.pos == 0)
		return;   /* between iterations: outside the passes */
	if (cb->context != loop_rp.cs->ctx || cb->contextUid != loop_rp.cs->uid) {
		loop_abort(1);
		return;
	}
	passes_drop(1, 1);
	m = ga_loop_mismatch(&sched);
	if (m == GA_LOOP_BROKEN_PASS)
		meta_clear();
	else
		loop_clear(0);
}
