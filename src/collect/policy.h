/* policy.h: which launches the injection library measures, and how.
 *
 * Plain functions over an explicit state (ga_sched), with no CUDA or CUPTI:
 * inject.c feeds it every launch and acts on its answers, and
 * tests/unit/test_policy.c plays launch sequences through it.
 *
 * A kernel is a (name, grid, block) triple, counted in a ga_repeat_slot.
 * By default (no --max-passes bound) its first profiled launch takes every
 * metric at once, in one set (full diagnosis), and later launches are not
 * replayed again.  With --max-passes N its metrics come in metric sets of at
 * most N replay passes each; repeated launches take the sets in turn, at
 * most --max-per-kernel of them, fewer under --min-share.  A program that runs
 * the same launches over and over (a training loop) can have them measured
 * across its iterations instead (loop replay, ga_loop_*). */
#ifndef GA_POLICY_H
#define GA_POLICY_H

#include <regex.h>
#include <stddef.h>

#include "loop.h"
#include "../util/util.h"

#define GA_MAX_SETS 16            /* metric sets tracked per kernel */

/* Changing metric sets costs a fresh range-profiler object (see
 * ga_sched_decide): wait for the run to settle, or for this many launches
 * wanting the set. */
#define GA_SETTLE_LAUNCHES 8
#define GA_SWITCH_OWED 8

/* Loop replay: an iteration of at most GA_LOOP_MAX_PERIOD launches (loop.h),
 * started when GA_LOOP_MIN_KERNELS kernels of it want a metric set; while
 * one may still show, a kernel's other sets wait for its GA_LOOP_DEFER-th
 * launch.  A launch out of the pattern between iterations is skipped; one
 * inside a pass breaks the pass (GA_LOOP_MAX_BROKEN in a row, with no pass
 * done in between, end that loop: its period was not the loop's);
 * GA_LOOP_MAX_FAILS ended loops end loop replay in the process. */
#define GA_LOOP_MAX_PERIOD GA_PERIOD_MAX
#define GA_LOOP_MIN_KERNELS 3
#define GA_LOOP_DEFER 4
#define GA_LOOP_MAX_BROKEN 3
#define GA_LOOP_MAX_FAILS 4

/* What loop replay may cost a process, whatever the detector finds.  A
 * pass measures one launch of each kernel that wants the set, in a range
 * of its own (about 1.2 ms a range on the H200, whatever else the
 * iteration launches: bench/probe/rp_probe.c T16); the other launches run
 * outside the ranges at full speed.  No set is started whose passes (as
 * many as the last set's) would take the ranges in the process past
 * GA_LOOP_BUDGET_SERIAL, or past GA_LOOP_BUDGET_PERIODS periods of the loop
 * when that is more (one set of any loop fits: 7 passes on GH100);
 * GA_LOOP_BUDGET_BROKEN broken passes end it too.  Then loop replay is off
 * in the process and the report says why. */
#define GA_LOOP_BUDGET_SERIAL 8192
#define GA_LOOP_BUDGET_PERIODS 8
#define GA_LOOP_BUDGET_BROKEN 8

/* Full diagnosis, once the program has repeated: a kernel's first launch
 * waits for a loop to take it, a bet that it comes back (step 0 of a
 * training loop: one replay of each of its kernels would cost more than
 * the step's loop passes).  A kernel launched only once loses the bet and
 * is never measured.  So a first launch is still replayed while the
 * replays made this way stay within GA_FIRST_REPLAY_SHARE of the
 * process's time so far (ga_sched.run_s), each counted at the mean cost
 * of a replay; past that it waits. */
#define GA_FIRST_REPLAY_SHARE 0.05

typedef enum {
	GA_LOOP_WITHIN_BUDGET,
	GA_LOOP_OVER_SERIAL,      /* GA_LOOP_BUDGET_SERIAL */
	GA_LOOP_OVER_BROKEN,      /* GA_LOOP_BUDGET_BROKEN */
} ga_loop_budget;

typedef struct {
	char *key;
	char *mangled;
	unsigned grid[3], block[3];
	long count;               /* launches seen after --launch-skip */
	long first_matched;       /* ga_sched.matched at its first launch */
	long profiled;            /* of those, measured by the range profiler */
	long per_set[GA_MAX_SETS];/* profiled launches per metric set */
	double dur_sum;           /* measured durations (ns), for its share of GPU time */
	long n_dur;
	int below_share;          /* its last launch went unprofiled under --min-share */
	long loop_mark;           /* counted for loop replay (ga_loop_best_set) */
	int waiting;              /* unprofiled, waited for a loop (ga_sched.waiting) */
	int no_replay;            /* it waits for another process (a communication
	                           * kernel): never replayed nor in a loop's range */
	int unwaited;             /* its first launch is replayed rather than wait for a
	                           * loop (GA_FIRST_REPLAY_SHARE) */
} ga_repeat_slot;

/* Loop replay's plan: the launches seen, the iteration found, where the
 * run is in it. */
typedef struct {
	ga_period det;            /* the selected launches' repeat slots */
	size_t next_check;        /* det.n before which a period found is not looked at again */
	int off;                  /* no loop replay in this process */
	int active;               /* measuring iterations */
	size_t period;
	long *keys;               /* repeat slot at each position */
	unsigned char *sel;       /* positions measured by the set: a user range each */
	size_t cap_keys;
	size_t n_sel;             /* of them, in the set being measured */
	long live_at;             /* ga_sched.matched when a period was last found */
	long seen_at;             /* ga_sched.matched when a period was first found (the
	                           * program repeats); 0: none yet */
	size_t pos;               /* position of the next launch */
	long skipped;             /* launches out of the pattern in a row at position 0 */
	long broken;              /* passes broken in a row, none done in between */
	long skips;               /* launches skipped between iterations */
	long broken_passes;       /* passes broken by a launch out of the pattern */
	size_t set;               /* metric set being measured */
	long pass;                /* iterations of this set measured */
	long mark;
	long launches;            /* launches measured by loop replay */
	long passes;              /* iterations measured */
	long aborted;             /* sets dropped: GA_LOOP_MAX_FAILS end it */
	long serialized;          /* launches taken into passes, done or broken */
	long set_passes;          /* passes of the last set done (1 before any) */
	ga_loop_budget over;      /* which budget turned loop replay off */
} ga_loop_plan;

typedef struct {
	/* Settings (GA_ENV_*). */
	regex_t re;
	int has_re;
	char *exact;
	long skip, count, max_per_kernel;
	double min_share;         /* fraction of gpu_ns for more than one profiled launch */
	int full;                 /* no --max-passes bound: a kernel's first profiled
	                           * launch takes every metric, later ones no replay */
	/* The run so far. */
	double gpu_ns;            /* GPU time: launches x mean duration of their kernel */
	long total_launches;      /* every launch seen, selected or not */
	long graph_launches;      /* cuGraphLaunch: its kernels pass no launch callback */
	long captured;            /* launches recorded into a graph being captured */
	long matched;             /* launches passing the name filter */
	long profiled;
	ga_repeat_slot *repeats;
	size_t n_repeats, cap_repeats;
	ga_map repeat_index;      /* ga_repeat_slot.key -> index into repeats */
	long last_slot;           /* repeat slot of the previous selected launch, -1 */
	long last_new_kernel;     /* matched when a kernel was last seen first */
	long owed[GA_MAX_SETS];   /* launches left unprofiled wanting each set */
	long set_changes;
	/* Kernels never profiled that waited while a loop was measured: the
	 * loop takes no further set, nor a new loop its first, until they had
	 * their first measurement (or two periods went by without them). */
	long waiting;
	long waiting_since;       /* matched at the first of them */
	/* The cost of replays (ga_sched_replayed), and of those made at a first
	 * launch that would have waited for a loop (GA_FIRST_REPLAY_SHARE). */
	double run_s;             /* the process's time so far, set before ga_sched_decide
	                           * of a kernel's first launch */
	double replay_s;
	long replays;
	double unwaited_s;
	long unwaited;
	ga_loop_plan loop;
} ga_sched;

/* What to do with a launch (ga_sched_decide). */
typedef enum {
	GA_SCHED_PROFILE,         /* measure it with the metric set *want */
	GA_SCHED_ENOUGH,          /* --max-per-kernel reached, or every set had */
	GA_SCHED_BELOW_SHARE,     /* under --min-share: its first launch will do */
	GA_SCHED_WAIT_LOOP,       /* its other sets may come from a loop's iterations */
	GA_SCHED_WAIT_SWITCH,     /* not worth changing the profiler's set for it yet */
	GA_SCHED_NO_REPLAY,       /* a kernel that waits for another process: never */
} ga_sched_action;

void ga_sched_init(ga_sched *s);
void ga_sched_free(ga_sched *s);

/* The kernel filter: NAME (mangled, demangled or base name) or regex:RE.
 * -1 with msg set for a bad regex. */
int ga_sched_set_filter(ga_sched *s, const char *kernel, char *msg, size_t msglen);
/* 1 when a filter is set: launches need their demangled name. */
int ga_sched_filtered(const ga_sched *s);
/* Does the launch pass the filter?  demangled is NULL without a filter. */
int ga_sched_selected(const ga_sched *s, const char *mangled, const char *demangled);
/* "void ns::kern<int>(float*, int)" -> "kern" (malloc'd). */
char *ga_base_name(const char *demangled);

/* A launch that passed the filter: 1 when it is past --launch-skip. */
int ga_sched_past_skip(ga_sched *s);
/* Count one more launch of (mangled, grid, block); *in_a_row: the previous
 * selected launch was of the same kernel. */
ga_repeat_slot *ga_sched_count(ga_sched *s, const char *mangled, const unsigned grid[3],
                               const unsigned block[3], int *in_a_row);
/* The launch was not one after all (measured for source lines instead). */
void ga_sched_uncount(ga_sched *s, ga_repeat_slot *r);
long ga_sched_slot(const ga_sched *s, const ga_repeat_slot *r);

/* The kernel's mean measured duration (ns); 0 before any. */
double ga_sched_mean_ns(const ga_repeat_slot *r);
/* A measured duration of the kernel: its mean changes, and with it the GPU
 * time charged to all its launches so far. */
void ga_sched_note_duration(ga_sched *s, ga_repeat_slot *r, double ns);
/* Under --min-share (see policy.c). */
int ga_sched_below_share(const ga_sched *s, const ga_repeat_slot *r);
/* Has the kernel had each of n_sets metric sets (0: not known yet, as 1)? */
int ga_sched_sets_done(const ga_repeat_slot *r, size_t n_sets);
/* May the kernel be profiled again (n_sets 0: its chip not known yet)? */
int ga_sched_again(const ga_sched *s, const ga_repeat_slot *r, size_t n_sets);
/* Measure this launch's source lines rather than its metrics: it has had
 * every set, or it was profiled and is under --min-share. */
int ga_sched_source_turn(const ga_sched *s, const ga_repeat_slot *r, size_t n_sets);
/* Run the launch just measured a second time for its source lines, from
 * its checkpoint?  Not for a kernel under --min-share, unless every
 * kernel's lines were asked for (--source). */
int ga_sched_second_run(const ga_sched *s, const ga_repeat_slot *r, int every_kernel);

/* The decision for a launch of r: cur is the set the range profiler holds
 * (-1: none), n_sets the chip's.  Marks r below_share under --min-share. */
ga_sched_action ga_sched_decide(ga_sched *s, ga_repeat_slot *r, size_t n_sets, long cur,
                                int in_a_row, size_t *want);
/* A launch not measured because a loop's iterations are (any kernel waits
 * for the loop then; one never profiled holds its further sets back). */
void ga_sched_wait_loop(ga_sched *s, ga_repeat_slot *r);
/* The launch is measured with set want (before the range profiler
 * starts), then: it was (the profiler started). */
void ga_sched_begin(ga_sched *s, ga_repeat_slot *r, size_t want, long cur);
void ga_sched_profiled(ga_sched *s, ga_repeat_slot *r);
/* ... and its replay took this long, values written. */
void ga_sched_replayed(ga_sched *s, ga_repeat_slot *r, double seconds);
/* A launch's values are written: 1 when --launch-count is reached. */
int ga_sched_measured(ga_sched *s);

/* ---- loop replay ---- */

/* A selected launch of slot r: into the ring. */
void ga_loop_push(ga_sched *s, const ga_repeat_slot *r);
/* Does the kernel still want set k from a loop's iterations? */
int ga_loop_wants(const ga_sched *s, const ga_repeat_slot *r, size_t n_sets, size_t k);
/* The set that the most distinct kernels of the iteration want (*count). */
size_t ga_loop_best_set(ga_sched *s, size_t n_sets, size_t *count);
/* After a launch: is the run repeating with kernels that want a set?  1:
 * the plan is active, from the next launch, position 0. */
int ga_loop_detect(ga_sched *s, size_t n_sets);
/* Is this launch the one the iteration has next? */
int ga_loop_expected(const ga_sched *s, const ga_repeat_slot *r);
/* A launch that is not (ga_loop_mismatch). */
typedef enum {
	GA_LOOP_SKIP,             /* between iterations: not measured, the loop goes on */
	GA_LOOP_BROKEN_PASS,      /* inside a pass: its set's passes so far are dropped and
	                           * the set starts again at the next iteration, whose
	                           * first launch is now the one that was expected */
	GA_LOOP_ENDED,            /* the loop is no more: stopped (failed when it broke) */
} ga_loop_miss;
ga_loop_miss ga_loop_mismatch(ga_sched *s);
/* Why loop replay was turned off by its budget, for the report; NULL when
 * it was not. */
const char *ga_loop_budget_note(const ga_sched *s, char *buf, size_t len);
/* Past it: 1 when it was the iteration's last (the pass ends at its EXIT). */
int ga_loop_advance(ga_sched *s);
/* The pass ended: position 0, one more pass. */
void ga_loop_pass_done(ga_sched *s);
/* Is position i of the iteration measured by the set (a range of its own:
 * the first launch in the iteration of each kernel wanting the set)? */
int ga_loop_takes(const ga_sched *s, size_t i);
/* ... it did. */
void ga_loop_measured(ga_sched *s, size_t i);
/* Stop measuring iterations; failed: the loop broke (GA_LOOP_MAX_FAILS
 * of those end loop replay). */
void ga_loop_stop(ga_sched *s, int failed);
/* After a set's last pass: the next set wanted, from the next iteration
 * (1), or none (0). */
int ga_loop_next_set(ga_sched *s, size_t n_sets);

#endif
