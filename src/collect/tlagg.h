/* tlagg.h: the timeline, aggregated as it is recorded (activity.c feeds
 * it).  Plain C over an explicit state, no CUDA: tests/unit/test_tlagg.c
 * plays interval sequences through it.
 *
 * The GPU's intervals (kernels, copies, sets) arrive in batches, late and
 * out of order; the host's (CUDA calls, the profiler's own spans) when
 * they end.  Their edges wait in a heap and are swept (timeline.h's
 * ga_sweep) only up to a time before which nothing can still arrive: the
 * caller's clock less a lag, the start of any host call still open, and
 * the launch of any GPU work not yet reported (ga_tlagg_safe_time).  So
 * memory holds only the intervals of the last moments, the kernels'
 * table and a bounded ring of recent intervals, from which the
 * representative loop iteration is cut when the result is taken.  An
 * interval that still arrives before the swept time (a GPU record later
 * than the lag) is counted from that time on, and the part before it in
 * late_ns. */
#ifndef GA_TLAGG_H
#define GA_TLAGG_H

#include <stddef.h>
#include <stdint.h>

#include "../profile/timeline.h"

#define GA_TLAGG_RING 32768       /* recent intervals kept for the iteration */
#define GA_TLAGG_BOUNDS 16        /* recent iteration boundaries kept */
#define GA_TLAGG_MAX_OPEN 256     /* host threads inside a CUDA call at once */
#define GA_TLAGG_PENDING_MAX_NS 10e9  /* GPU work unreported this long is given up */

/* A set of correlation ids, a bit each over a window that slides with the
 * newest (GA_TLAGG_OURS_BITS of them): correlations rise with every API
 * call, and a GPU record comes within seconds of its call, a few hundred
 * thousand calls at most. */
#define GA_TLAGG_OURS_BITS (1u << 22)
typedef struct {
	uint64_t *bits;
	uint32_t lo;
	int any;
} ga_corrset;

/* A GPU interval as a record gives it. */
typedef struct {
	double start, end;        /* ns, the host's CUPTI clock */
	int device;
	int kind;                 /* GA_GPU_* */
	int dir;                  /* copies: GA_DIR_*, else -1 */
	int mem;                  /* copies: the host side's GA_MEM_*, else -1 */
	double bytes;
	uint32_t stream;
	int default_stream;       /* on the legacy default stream */
	uint32_t correlation;
	/* kernels: which (mangled name, grid, block); NULL mangled for others */
	const char *mangled;
	unsigned grid[3], block[3];
} ga_tl_gpu;

/* One loop's iterations. */
typedef struct {
	long epoch;               /* 0: none */
	long period;              /* launches in an iteration */
	long iterations;
	double first_t, last_t;   /* its first and last boundary */
	double clean_iter_ns;     /* summed iterations with no profiler span */
	long clean_iters;
} ga_tlagg_loop;

typedef struct {
	ga_sweep sw;
	ga_edge *heap;            /* edges not swept yet: a min-heap by time */
	size_t n_heap, cap_heap;
	double swept;             /* time the sweep has reached; -inf before any */
	int any;
	double first_t, last_t;   /* the process's first and last activity */
	ga_tl_device sums[GA_TL_MAX_DEVICES];   /* per-interval sums: counts, bytes */
	int dev_used[GA_TL_MAX_DEVICES];
	uint32_t *streams[GA_TL_MAX_DEVICES];   /* distinct stream ids seen */
	size_t n_streams[GA_TL_MAX_DEVICES];
	long host_calls[GA_HOST__N];
	double late_ns;
	/* The kernels' table. */
	ga_map kindex;            /* key -> index */
	ga_tl_kernel *kernels;
	size_t n_kernels, cap_kernels;
	/* Host calls open: key (a thread) and start. */
	struct { uint64_t key; double start; } open[GA_TLAGG_MAX_OPEN];
	size_t n_open;
	/* GPU work launched and not reported yet: correlation -> launch time. */
	ga_map pending;
	double *pending_t;
	uint32_t *pending_corr;
	uint32_t *resolved;       /* correlations whose GPU record came (direct-mapped) */
	size_t n_pending_slots, cap_pending_slots;
	/* Correlations of the profiler's own measured launches: their GPU
	 * records (replays, the range profiler's kernels) are not the
	 * kernel's times. */
	ga_corrset measured;
	/* Correlations of the program's own launch calls: a kernel record
	 * with none of them was launched by the profiler, not the program. */
	ga_corrset ours;
	long tool_kernels;
	double tool_ns;
	/* The ring of recent intervals (absolute times) and the iterations. */
	ga_tl_event ring[GA_TLAGG_RING];
	size_t ring_head, ring_n;
	long excluded_spans;      /* profiler spans seen so far */
	double bounds[GA_TLAGG_BOUNDS];
	long bound_excl[GA_TLAGG_BOUNDS];   /* excluded_spans at each boundary */
	long bound_epoch[GA_TLAGG_BOUNDS];  /* the loop (epoch) each belongs to */
	size_t n_bounds;          /* kept (the last GA_TLAGG_BOUNDS) */
	/* A loop as found: it starts when a period shows and ends when the
	 * pattern breaks; an iteration is between two boundaries of one loop.
	 * The loop reported is the one that covered the most time. */
	long epoch;
	ga_tlagg_loop cur, best;
} ga_tlagg;

void ga_tlagg_init(ga_tlagg *a);
void ga_tlagg_free(ga_tlagg *a);

void ga_tlagg_gpu(ga_tlagg *a, const ga_tl_gpu *g);
/* A launch call of the program's own, by its correlation (before its GPU
 * record is given to ga_tlagg_gpu). */
void ga_tlagg_ours(ga_tlagg *a, uint32_t corr);
int ga_tlagg_is_ours(const ga_tlagg *a, uint32_t corr);
/* A host interval of kind GA_HOST_* from start to end. */
void ga_tlagg_host(ga_tlagg *a, int kind, double start, double end);

/* A host call opens and closes (key: its thread). */
void ga_tlagg_open(ga_tlagg *a, uint64_t key, double start);
void ga_tlagg_close(ga_tlagg *a, uint64_t key);
/* When the call open on key started; NAN when none is. */
double ga_tlagg_open_start(const ga_tlagg *a, uint64_t key);
/* GPU work was launched (its correlation) at t; measured: the profiler
 * replays it (its records are not the kernel's, and it is not waited
 * for).  Its first GPU record resolves it (also when the record came
 * first). */
void ga_tlagg_launched(ga_tlagg *a, uint32_t correlation, double t, int measured);

/* The time before which every interval has arrived: now less lag, and no
 * later than an open call's start or an unreported launch (those older
 * than GA_TLAGG_PENDING_MAX_NS are given up). */
double ga_tlagg_safe_time(ga_tlagg *a, double now, double lag);
/* Sweep every edge before t. */
void ga_tlagg_advance(ga_tlagg *a, double t);

/* A loop of period launches was found; its first iteration starts at t
 * (the loop before it, if any, ends). */
void ga_tlagg_loop_start(ga_tlagg *a, double t, long period);
/* The loop's next iteration starts at t (and the one before it ends). */
void ga_tlagg_iteration(ga_tlagg *a, double t);

/* The process's timeline so far into *out (freed by the caller).  final:
 * everything has arrived (the process's end): sweep all first. */
void ga_tlagg_result(ga_tlagg *a, int pid, int final, ga_timeline *out);

#endif
