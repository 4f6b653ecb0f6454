/* policy.c: which launches to measure, with which metric set (policy.h). */
#include "policy.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "loop.h"

void ga_sched_init(ga_sched *s)
{
	memset(s, 0, sizeof(*s));
	s->last_slot = -1;
	s->count = -1;
}

void ga_sched_free(ga_sched *s)
{
	for (size_t i = 0; i < s->n_repeats; i++) {
		free(s->repeats[i].key);
		free(s->repeats[i].mangled);
	}
	free(s->repeats);
	ga_map_free(&s->repeat_index);
	ga_period_free(&s->loop.det);
	free(s->loop.keys);
	free(s->loop.sel);
	if (s->has_re)
		regfree(&s->re);
	free(s->exact);
	memset(s, 0, sizeof(*s));
}

/* ---- names and filters ------------------------------------------------- */

int ga_sched_set_filter(ga_sched *s, const char *k, char *msg, size_t msglen)
{
	if (!k || !*k)
		return 0;
	if (strncmp(k, "regex:", 6) == 0) {
		int rc = regcomp(&s->re, k + 6, REG_EXTENDED | REG_NOSUB);
		if (rc != 0) {
			regerror(rc, &s->re, msg, msglen);
			return -1;
		}
		s->has_re = 1;
	} else {
		s->exact = ga_xstrdup(k);
	}
	return 0;
}

int ga_sched_filtered(const ga_sched *s)
{
	return s->has_re || s->exact;
}

char *ga_base_name(const char *demangled)
{
	static const char anon[] = "(anonymous namespace)";
	/* the parameters' '(': outside template arguments, and not the one of
	 * an anonymous namespace in the name */
	const char *end = NULL;
	int depth = 0;
	for (const char *q = demangled; *q && !end; q++) {
		if (*q == '<')
			depth++;
		else if (*q == '>' && depth > 0)
			depth--;
		else if (*q == '(' && depth == 0) {
			if (strncmp(q, anon, sizeof(anon) - 1) == 0)
				q += sizeof(anon) - 2;
			else
				end = q;
		}
	}
	size_t n = end ? (size_t)(end - demangled) : strlen(demangled);
	char *s = ga_xstrndup(demangled, n);
	/* drop template arguments at the end */
	size_t len = strlen(s);
	if (len && s[len - 1] == '>') {
		int depth = 0;
		for (size_t i = len; i-- > 0;) {
			if (s[i] == '>')
				depth++;
			else if (s[i] == '<' && --depth == 0) {
				s[i] = '\0';
				break;
			}
		}
	}
	const char *start = s;
	for (const char *q = s; *q; q++)
		if (*q == ' ' || *q == ':')
			start = q + 1;
	char *b = ga_xstrdup(start);
	free(s);
	return b;
}

int ga_sched_selected(const ga_sched *s, const char *mangled, const char *demangled)
{
	if (s->has_re) {
		if (regexec(&s->re, demangled, 0, NULL, 0) == 0 ||
		    regexec(&s->re, mangled, 0, NULL, 0) == 0)
			return 1;
		/* and the function name alone, which Nsight Compute's -k regex:
		 * matches by default (--kernel-name-base function): ^srad$ */
		char *b = ga_base_name(demangled);
		int ok = regexec(&s->re, b, 0, NULL, 0) == 0;
		free(b);
		return ok;
	}
	if (s->exact) {
		int ok = strcmp(s->exact, mangled) == 0 || strcmp(s->exact, demangled) == 0;
		if (!ok) {
			char *b = ga_base_name(demangled);
			ok = strcmp(s->exact, b) == 0;
			free(b);
		}
		return ok;
	}
	return 1;
}

/* ---- counting ------------------------------------------------------------ */

int ga_sched_past_skip(ga_sched *s)
{
	s->matched++;
	return s->matched > s->skip;
}

double ga_sched_mean_ns(const ga_repeat_slot *r)
{
	return r->n_dur ? r->dur_sum / (double)r->n_dur : 0;
}

long ga_sched_slot(const ga_sched *s, const ga_repeat_slot *r)
{
	return (long)(r - s->repeats);
}

ga_repeat_slot *ga_sched_count(ga_sched *s, const char *mangled, const unsigned grid[3],
                               const unsigned block[3], int *in_a_row)
{
	char *key = ga_xasprintf("%s|%u,%u,%u|%u,%u,%u", mangled, grid[0], grid[1], grid[2],
	                         block[0], block[1], block[2]);
	long i = ga_strmap_get(&s->repeat_index, key);
	ga_repeat_slot *r;

	/* Every launch comes through here, profiled or not: a hash, not a scan
	 * over every kernel seen so far. */
	if (i >= 0) {
		r = &s->repeats[i];
		free(key);
		r->count++;
		s->gpu_ns += ga_sched_mean_ns(r);
	} else {
		ga_repeat_slot n = {key, ga_xstrdup(mangled), {grid[0], grid[1], grid[2]},
		                    {block[0], block[1], block[2]}, 1, 0, 0, {0}, 0, 0, 0, 0};
		GA_PUSH(s->repeats, s->n_repeats, s->cap_repeats, n);
		i = (long)ga_strmap_put(&s->repeat_index, key, s->n_repeats - 1);
	}
	r = &s->repeats[i];
	*in_a_row = i == s->last_slot;
	s->last_slot = i;
	if (r->count == 1) {
		s->last_new_kernel = s->matched;
		r->first_matched = s->matched;
	}
	return r;
}

void ga_sched_uncount(ga_sched *s, ga_repeat_slot *r)
{
	r->count--;
	s->gpu_ns -= ga_sched_mean_ns(r);
}

void ga_sched_note_duration(ga_sched *s, ga_repeat_slot *r, double ns)
{
	double old;

	if (!(ns > 0) || !isfinite(ns))
		return;
	old = ga_sched_mean_ns(r);
	r->dur_sum += ns;
	r->n_dur++;
	s->gpu_ns += (ga_sched_mean_ns(r) - old) * (double)r->count;
}

/* ---- the metric set of a launch -------------------------------------------- */

/* Under --min-share: the kernel's launches so far take less than that share
 * of the GPU time of every selected launch so far (each counted at its
 * kernel's mean measured duration).  Its first profiled launch classified
 * it; the other metric sets or repeats would cost a replay each for a
 * kernel whose fixes can save the program little.  A kernel decided here
 * may still grow past the share later (a loop's later phase) and get them
 * then. */
int ga_sched_below_share(const ga_sched *s, const ga_repeat_slot *r)
{
	if (!(s->min_share > 0) || r->n_dur == 0 || !(s->gpu_ns > 0))
		return 0;
	return ga_sched_mean_ns(r) * (double)r->count < s->min_share * s->gpu_ns;
}

int ga_sched_sets_done(const ga_repeat_slot *r, size_t n_sets)
{
	size_t n = n_sets ? n_sets : 1;
	if (n > GA_MAX_SETS)
		return r->profiled >= (long)n;
	for (size_t k = 0; k < n; k++)
		if (r->per_set[k] == 0)
			return 0;
	return 1;
}

/* At most --max-per-kernel launches; with several metric sets, only until
 * it has had each set once: more would repeat measurements at the full
 * cost of a replay. */
int ga_sched_again(const ga_sched *s, const ga_repeat_slot *r, size_t n_sets)
{
	if (s->max_per_kernel > 0 && r->profiled >= s->max_per_kernel)
		return 0;
	return !(n_sets > 1 && ga_sched_sets_done(r, n_sets));
}

int ga_sched_source_turn(const ga_sched *s, const ga_repeat_slot *r, size_t n_sets)
{
	return ga_sched_sets_done(r, n_sets) || (r->profiled > 0 && ga_sched_below_share(s, r));
}

/* A second run costs about 0.24 s on an H200 (SASS patching and the
 * launch, docs/PERFORMANCE.md), the price of several replays, for source
 * lines of a kernel whose fixes can save the program less than the share
 * (the test app's tiny_add: 1.9 us after 8 ms of other kernels).  A
 * kernel launched again still gets them at a later launch
 * (ga_sched_source_turn), which costs far less. */
int ga_sched_second_run(const ga_sched *s, const ga_repeat_slot *r, int every_kernel)
{
	return every_kernel || !ga_sched_below_share(s, r);
}

/* The metric set a kernel's next profiled launch wants.  The first takes
 * set 0, which holds the classifier's metrics, so a kernel launched once is
 * still classified.  Later ones take the set the range profiler holds when
 * the kernel has not had it yet, otherwise the set the kernel has had
 * least. */
static size_t choose_set(const ga_repeat_slot *r, size_t n_sets, long cur)
{
	size_t best = 0;

	if (n_sets > GA_MAX_SETS)
		return (size_t)(r->count - 1) % n_sets;
	if (r->per_set[0] == 0 || n_sets <= 1)
		best = 0;
	else if (cur >= 0 && (size_t)cur < n_sets && r->per_set[cur] == 0)
		best = (size_t)cur;
	else
		for (size_t k = 1; k < n_sets; k++)
			if (r->per_set[k] < r->per_set[best])
				best = k;
	return best;
}

/* Change metric sets for this launch, or let it run unprofiled?  A change
 * needs a fresh range-profiler object, whose first start took about 135 ms
 * on an H200 (bench/phases.sh): more than measuring a launch at 3 passes.
 * So a kernel that has had the set the profiler holds changes it only when
 *   - it repeats the launch just before it (a kernel run in a row may not
 *     come back later), or
 *   - the run has settled: no kernel was seen for the first time in the last
 *     GA_SETTLE_LAUNCHES launches (a loop: the others will come round too), or
 *   - GA_SWITCH_OWED launches have wanted that set since it was last taken.
 * A kernel's first launch always gets set 0. */
static int switch_now(ga_sched *s, const ga_repeat_slot *r, size_t want, long cur, int in_a_row)
{
	if (cur < 0 || (size_t)cur == want || r->profiled == 0 || want >= GA_MAX_SETS)
		return 1;
	if (in_a_row || s->matched - s->last_new_kernel > GA_SETTLE_LAUNCHES ||
	    s->owed[want] + 1 >= GA_SWITCH_OWED)
		return 1;
	s->owed[want]++;
	return 0;
}

void ga_sched_wait_loop(ga_sched *s, ga_repeat_slot *r)
{
	if (r->profiled == 0 && !r->waiting) {
		if (s->waiting++ == 0)
			s->waiting_since = s->matched;
		r->waiting = 1;
	}
}

/* GA_FIRST_REPLAY_SHARE: one more such replay, at the mean cost of those
 * so far, keeps them within the share of the process's time. */
static int first_replay_affordable(const ga_sched *s)
{
	double mean = s->replays ? s->replay_s / (double)s->replays : 0;
	return s->run_s > 0 && s->unwaited_s + mean <= GA_FIRST_REPLAY_SHARE * s->run_s;
}

ga_sched_action ga_sched_decide(ga_sched *s, ga_repeat_slot *r, size_t n_sets, long cur,
                                int in_a_row, size_t *want)
{
	/* A replay runs the kernel again alone: one that waits for a peer in
	 * another process (a collective) would wait for ever. */
	if (r->no_replay)
		return GA_SCHED_NO_REPLAY;
	if (!ga_sched_again(s, r, n_sets))
		return GA_SCHED_ENOUGH;
	/* Full diagnosis: its first launch took every metric.  A pass costs
	 * about the same CUPTI time whatever it reads, so one launch of all
	 * the passes costs what three sets did, and repeats would only replay
	 * the same metrics again (a loop's iterations may still measure them,
	 * at no replay). */
	if (s->full && r->profiled > 0)
		return GA_SCHED_ENOUGH;
	if (r->profiled > 0 && ga_sched_below_share(s, r)) {
		r->below_share = 1;
		return GA_SCHED_BELOW_SHARE;
	}
	/* While a loop's iterations are measured the range profiler holds
	 * their configuration: any kernel, even a new one, waits for the loop
	 * (a replay would need a configuration of its own). */
	if (s->loop.active) {
		ga_sched_wait_loop(s, r);
		return GA_SCHED_WAIT_LOOP;
	}
	/* Full diagnosis in a program that has shown a repeating iteration: a
	 * kernel's first measurement waits for a loop to take it (a range in
	 * each of 7 iterations, about 1.2 ms each on the H200) rather than
	 * replay its first launch 7 times with device memory saved and
	 * restored each time (110 to 150 ms a launch in a PyTorch process).
	 * A first launch is still replayed within GA_FIRST_REPLAY_SHARE, so
	 * that a kernel launched once after the program repeated (a data
	 * set-up's) is measured too; one left waiting and launched in no
	 * loop's iteration is not, and the report names it. */
	if (s->full && r->profiled == 0 && !in_a_row && !s->loop.off && s->loop.seen_at &&
	    s->matched - r->first_matched < (long)GA_LOOP_MAX_PERIOD) {
		if (r->count == 1 && first_replay_affordable(s)) {
			r->unwaited = 1;
		} else {
			ga_sched_wait_loop(s, r);
			return GA_SCHED_WAIT_LOOP;
		}
	}
	/* Its other sets may come from a loop's iterations at no replay; a
	 * kernel run in a row is cheaper replayed. */
	if (r->profiled > 0 && !in_a_row && !s->loop.off && r->count < GA_LOOP_DEFER &&
	    s->n_repeats >= GA_LOOP_MIN_KERNELS)
		return GA_SCHED_WAIT_LOOP;
	*want = choose_set(r, n_sets, cur);
	if (!switch_now(s, r, *want, cur, in_a_row))
		return GA_SCHED_WAIT_SWITCH;
	return GA_SCHED_PROFILE;
}

void ga_sched_begin(ga_sched *s, ga_repeat_slot *r, size_t want, long cur)
{
	if (cur >= 0 && (size_t)cur != want) {
		s->set_changes++;
		if (want < GA_MAX_SETS)
			s->owed[want] = 0;
	}
	if (want < GA_MAX_SETS)
		r->per_set[want]++;
}

static void waited_done(ga_sched *s, ga_repeat_slot *r)
{
	if (r->waiting) {
		r->waiting = 0;
		if (s->waiting > 0)
			s->waiting--;
	}
}

/* Kernels waiting for their first measurement hold loop replay back: a
 * loop's further sets (repeats, with full diagnosis) would keep a training
 * step's other kernels waiting for many steps, and then replay them in the
 * middle of the run.  Not for ever: one never launched again would. */
static int first_measurements_wait(ga_sched *s, size_t period)
{
	/* Under full diagnosis the loop itself takes first measurements. */
	if (s->full)
		return 0;
	if (s->waiting > 0 && s->matched - s->waiting_since > (long)(GA_LOOP_MAX_PERIOD + 2 * period)) {
		for (size_t i = 0; i < s->n_repeats; i++)
			s->repeats[i].waiting = 0;
		s->waiting = 0;
	}
	return s->waiting > 0;
}

void ga_sched_profiled(ga_sched *s, ga_repeat_slot *r)
{
	waited_done(s, r);
	r->profiled++;
	r->below_share = 0;   /* grew past the share after all */
}

void ga_sched_replayed(ga_sched *s, ga_repeat_slot *r, double seconds)
{
	if (!(seconds >= 0) || !isfinite(seconds))
		return;
	s->replay_s += seconds;
	s->replays++;
	if (r->unwaited) {
		r->unwaited = 0;
		s->unwaited_s += seconds;
		s->unwaited++;
	}
}

int ga_sched_measured(ga_sched *s)
{
	s->profiled++;
	return s->count >= 0 && s->profiled >= s->count;
}

/* ---- loop replay ------------------------------------------------------------ */

void ga_loop_push(ga_sched *s, const ga_repeat_slot *r)
{
	if (!s->loop.det.min_p)
		ga_period_init(&s->loop.det, 2, GA_LOOP_MAX_PERIOD);
	ga_period_push(&s->loop.det, ga_sched_slot(s, r));
}

/* Only a kernel that still lacks set k: a pass of the loop serializes
 * every launch of the iteration (about 1.3 ms a launch of a transformer's
 * step on the H200, against 26 us plain), so repeats of kernels that
 * already have every metric are not worth it.  Under full diagnosis (one
 * set) that leaves the kernels first seen while a loop was measured. */
int ga_loop_wants(const ga_sched *s, const ga_repeat_slot *r, size_t n_sets, size_t k)
{
	(void)n_sets;
	/* A range serializes the launch too: never around a collective. */
	if (r->no_replay)
		return 0;
	if (s->max_per_kernel > 0 && r->profiled >= s->max_per_kernel)
		return 0;
	return k < GA_MAX_SETS && r->per_set[k] == 0;
}

size_t ga_loop_best_set(ga_sched *s, size_t n_sets, size_t *count)
{
	ga_loop_plan *lp = &s->loop;
	size_t best = 0, best_n = 0;

	for (size_t k = 0; k < n_sets && k < GA_MAX_SETS; k++) {
		size_t n = 0;
		lp->mark++;
		for (size_t i = 0; i < lp->period; i++) {
			ga_repeat_slot *r = &s->repeats[lp->keys[i]];
			if (r->loop_mark != lp->mark && ga_loop_wants(s, r, n_sets, k)) {
				r->loop_mark = lp->mark;
				n++;
			}
		}
		if (n > best_n) {
			best = k;
			best_n = n;
		}
	}
	*count = best_n;
	return best;
}

/* May a set of the loop of period p, `ranges` ranges a pass, start
 * (GA_LOOP_BUDGET_SERIAL)?  Its passes are taken to be as many as the last
 * set's. */
static int within_budget(ga_sched *s, size_t p, size_t ranges)
{
	ga_loop_plan *lp = &s->loop;
	long passes = lp->set_passes > 0 ? lp->set_passes : 1;
	long budget = GA_LOOP_BUDGET_PERIODS * (long)p;

	if (budget < GA_LOOP_BUDGET_SERIAL)
		budget = GA_LOOP_BUDGET_SERIAL;
	if (lp->serialized + passes * (long)ranges <= budget)
		return 1;
	lp->over = GA_LOOP_OVER_SERIAL;
	lp->off = 1;
	return 0;
}

const char *ga_loop_budget_note(const ga_sched *s, char *buf, size_t len)
{
	const ga_loop_plan *lp = &s->loop;

	if (lp->over == GA_LOOP_OVER_SERIAL)
		snprintf(buf, len, "loop replay ended after %ld launches serialized in %ld passes "
		         "(budget %d, or %d iterations): a further metric set of the %zu-launch "
		         "iteration would take %ld more; later launches were counted at the mean",
		         lp->serialized, lp->passes + lp->broken_passes, GA_LOOP_BUDGET_SERIAL,
		         GA_LOOP_BUDGET_PERIODS, lp->period,
		         (lp->set_passes > 0 ? lp->set_passes : 1) * (long)lp->period);
	else if (lp->over == GA_LOOP_OVER_BROKEN)
		snprintf(buf, len, "loop replay ended after %ld broken passes (budget %d; %ld launches "
		         "serialized): the program's iterations did not repeat as detected; later "
		         "launches were counted at the mean", lp->broken_passes, GA_LOOP_BUDGET_BROKEN,
		         lp->serialized);
	else
		return NULL;
	return buf;
}

/* The positions the set measures: the first launch in the iteration of
 * each kernel that wants it (one range each; the kernel's other launches
 * in the iteration, and the kernels that want nothing, run outside the
 * ranges at full speed). */
static size_t loop_select(ga_sched *s)
{
	ga_loop_plan *lp = &s->loop;

	lp->n_sel = 0;
	lp->mark++;
	for (size_t i = 0; i < lp->period; i++) {
		ga_repeat_slot *r = &s->repeats[lp->keys[i]];
		lp->sel[i] = r->loop_mark != lp->mark && ga_loop_wants(s, r, 0, lp->set);
		if (lp->sel[i]) {
			r->loop_mark = lp->mark;
			lp->n_sel++;
		}
	}
	return lp->n_sel;
}

/* Only the smallest period is tried: a larger one is nearly always a
 * multiple, with the same kernels (an inner loop, a model's layers, is
 * found first; the launches between its runs are skipped, ga_loop_mismatch).
 * A period whose kernels want too little is looked at again a period
 * later, not at every launch: it costs O(p). */
int ga_loop_detect(ga_sched *s, size_t n_sets)
{
	ga_loop_plan *lp = &s->loop;
	size_t p, n, set;

	p = ga_period_found(&lp->det);
	if (p) {
		lp->live_at = s->matched;
		if (!lp->seen_at)
			lp->seen_at = s->matched;
	}
	if (!p || lp->det.n < lp->next_check || first_measurements_wait(s, p))
		return 0;
	if (p > lp->cap_keys) {
		lp->keys = ga_xrealloc(lp->keys, p * sizeof(*lp->keys));
		lp->sel = ga_xrealloc(lp->sel, p);
		lp->cap_keys = p;
	}
	/* The next iteration starts with the launch p - 1 back. */
	for (size_t i = 0; i < p; i++)
		lp->keys[i] = ga_period_back(&lp->det, p - 1 - i);
	lp->period = p;
	set = ga_loop_best_set(s, n_sets, &n);
	if (n < GA_LOOP_MIN_KERNELS) {
		lp->next_check = lp->det.n + p;
		return 0;
	}
	if (!within_budget(s, p, n))
		return 0;
	lp->active = 1;
	lp->set = set;
	loop_select(s);
	lp->pos = 0;
	lp->pass = 0;
	lp->skipped = 0;
	lp->broken = 0;
	return 1;
}

/* Between iterations (position 0) a launch out of the pattern is one the
 * program adds now and then (an evaluation pass, the optimizer step after
 * a gradient accumulation's micro-batches, a data-dependent launch): it
 * runs outside the range profiler's passes and is skipped, unless they go
 * on for GA_LOOP_MAX_PERIOD launches and two iterations (the loop is over;
 * an inner loop, a model's layers, sees the rest of the step skipped).  Inside a pass it
 * is a range too, which the pass's values cannot place: the pass is
 * broken, and the iteration is turned so that the expected launch comes
 * first (an extra launch at that place next time falls between iterations). */
ga_loop_miss ga_loop_mismatch(ga_sched *s)
{
	ga_loop_plan *lp = &s->loop;

	if (lp->pos == 0) {
		lp->skips++;
		if (++lp->skipped <= (long)(GA_LOOP_MAX_PERIOD + 2 * lp->period))
			return GA_LOOP_SKIP;
		ga_loop_stop(s, 0);
		return GA_LOOP_ENDED;
	}
	lp->broken_passes++;
	if (lp->broken_passes >= GA_LOOP_BUDGET_BROKEN) {
		lp->over = GA_LOOP_OVER_BROKEN;
		ga_loop_stop(s, 1);
		lp->off = 1;
		return GA_LOOP_ENDED;
	}
	/* An inner loop (a model's layers) whose run ended inside a pass: the
	 * loop around it has shown two copies too, and its iteration holds
	 * the inner one's kernels. */
	if (ga_period_longer(&lp->det, lp->period)) {
		ga_period_reject(&lp->det, lp->period);
		ga_loop_stop(s, 0);
		return GA_LOOP_ENDED;
	}
	if (++lp->broken >= GA_LOOP_MAX_BROKEN) {
		ga_period_reject(&lp->det, lp->period);
		ga_loop_stop(s, 1);
		return GA_LOOP_ENDED;
	}
	{
		size_t j = lp->pos, p = lp->period;
		long *turned = ga_xmalloc(p * sizeof(*turned));
		for (size_t i = 0; i < p; i++)
			turned[i] = lp->keys[(i + j) % p];
		memcpy(lp->keys, turned, p * sizeof(*turned));
		free(turned);
		loop_select(s);
	}
	lp->pos = 0;
	lp->pass = 0;
	lp->skipped = 1;
	return GA_LOOP_BROKEN_PASS;
}

int ga_loop_expected(const ga_sched *s, const ga_repeat_slot *r)
{
	return ga_sched_slot(s, r) == s->loop.keys[s->loop.pos];
}

int ga_loop_advance(ga_sched *s)
{
	s->loop.skipped = 0;
	s->loop.serialized += s->loop.sel[s->loop.pos];
	return ++s->loop.pos == s->loop.period;
}

void ga_loop_pass_done(ga_sched *s)
{
	s->loop.broken = 0;       /* a clean iteration: the period holds */
	s->loop.pos = 0;
	s->loop.pass++;
	s->loop.passes++;
}

int ga_loop_takes(const ga_sched *s, size_t i)
{
	return s->loop.sel[i];
}

void ga_loop_measured(ga_sched *s, size_t i)
{
	ga_repeat_slot *r = &s->repeats[s->loop.keys[i]];
	if (s->loop.set < GA_MAX_SETS)
		r->per_set[s->loop.set]++;
	waited_done(s, r);
	r->profiled++;
	r->below_share = 0;
	s->profiled++;
	s->loop.launches++;
}

void ga_loop_stop(ga_sched *s, int failed)
{
	s->loop.active = 0;
	s->loop.pos = 0;
	s->loop.broken = 0;
	if (failed && ++s->loop.aborted >= GA_LOOP_MAX_FAILS)
		s->loop.off = 1;
}

int ga_loop_next_set(ga_sched *s, size_t n_sets)
{
	size_t n;

	if (s->loop.pass > 0)
		s->loop.set_passes = s->loop.pass;
	if (first_measurements_wait(s, s->loop.period))
		return 0;
	s->loop.set = ga_loop_best_set(s, n_sets, &n);
	if (n == 0 || !within_budget(s, s->loop.period, n))
		return 0;
	loop_select(s);
	s->loop.active = 1;
	s->loop.pass = 0;
	s->loop.pos = 0;
	s->loop.broken = 0;
	return 1;
}
