/* inject.c: libgpuadvise-inject.so, loaded into an unmodified CUDA program
 * through CUDA_INJECTION64_PATH.  The driver calls InitializeInjection(); we
 * subscribe to the driver's kernel-launch callbacks and profile each selected
 * launch with the CUPTI Range Profiler (auto range, kernel replay): Start at
 * the launch's ENTER, Stop + decode + evaluate at its EXIT.
 *
 * Every result is appended at once, as one JSON line, to RUN_DIR/<pid>.rec,
 * with a single write(2) on an O_APPEND descriptor: whatever happens to the
 * application later (abort, kill -9, _exit), the launches profiled so far are
 * on disk for the launcher.  Memory held here does not grow with the number of
 * launches: only the (name, grid, block) repeat counters grow, with the number
 * of distinct kernels.
 *
 * Record types: start, device, launch, error, end (see launcher.c). */
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <pthread.h>
#include <regex.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include <cuda.h>
#include <cupti.h>
#include <cupti_profiler_target.h>
#include <cupti_range_profiler.h>
#include <cupti_target.h>
#include <jansson.h>

#include "collect.h"
#include "../loop.h"
#include "sass.h"

#define GA_EXPORT __attribute__((visibility("default")))
#define GA_MAX_SETS 16            /* metric sets tracked per kernel */

/* The C++ ABI demangler lives in libstdc++, which every CUDA C++ program
 * loads; look it up at run time so a C program works too (a link-time
 * dependency that fails to resolve would make the driver skip us silently). */
typedef char *(*demangle_fn)(const char *mangled, char *buf, size_t *len, int *status);
static demangle_fn cxa_demangle;

/* One metric set: what one profiled launch measures, in at most
 * --max-passes replay passes.  Repeated launches of a kernel take the sets
 * in turn. */
typedef struct {
	ga_host *host;            /* configured with exactly these metrics */
	uint8_t *config;
	size_t config_size;
	size_t passes;
	const char **names;       /* valid names; the duration is in every set */
	size_t n_names;
	size_t *slot;             /* names[i] is G.prof.metrics[slot[i]] */
} metric_set;

typedef struct chip_cfg {
	char *chip;
	metric_set *sets;
	size_t n_sets;
	struct chip_cfg *next;
} chip_cfg;

typedef struct ctx_state {
	CUcontext ctx;
	uint32_t uid;
	int ok;                   /* range profiler usable in this context */
	CUpti_RangeProfiler_Object *rp;
	uint8_t **cdata;          /* counter data, one image per metric set */
	size_t *cdata_size;
	long cur_set;             /* set the range profiler is configured for, -1 none */
	chip_cfg *cfg;
	ga_device dev;
	CUdevice cudev;
	struct ctx_state *next;
} ctx_state;

typedef struct {
	char *key;
	char *mangled;
	unsigned grid[3], block[3];
	long count;               /* launches seen after --launch-skip */
	long profiled;            /* of those, measured by the range profiler */
	long per_set[GA_MAX_SETS];/* profiled launches per metric set */
	double dur_sum;           /* measured durations (ns), for its share of GPU time */
	long n_dur;
	int below_share;          /* its last launch went unprofiled under --min-share */
	long loop_mark;           /* counted for loop replay (loop_best_set) */
} repeat_slot;

static double now_seconds(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

static double real_seconds(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_REALTIME, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

/* Where the injection library's own time goes, for bench/phases.sh:
 * GPUADVISE_TIMING_LOG=FILE appends one line per process at exit.  Order
 * matters: the end record sums INIT..PACK and ENABLE..RECORD. */
enum { PH_INIT, PH_PACK, PH_META, PH_ENABLE, PH_CDATA, PH_CONFIG, PH_START, PH_KERNEL,
       PH_STOP, PH_DECODE, PH_EVAL, PH_RECORD, PH_N };
static const char *const phase_names[PH_N] = {
	"init", "pack", "meta", "enable", "cdata", "config", "start", "kernel",
	"stop", "decode", "eval", "record",
};

static struct {
	pthread_mutex_t lock;
	int initialized;
	int profiler_initialized;
	int lock_held;            /* this process holds the run's counter lock */
	int lock_gave_up;
	int fd;
	int lock_fd;              /* run-wide lock: one process measures at a time */
	int enabled;              /* still profiling (launch count not reached) */
	pid_t pid;
	ga_profile prof;          /* holds the metric list; no launches are kept */
	size_t *bundle;           /* bundle of each metric (GPUADVISE_METRICS ';') */
	long max_passes;          /* per launch, 0: no limit */
	/* Time in each phase; the end record's setup_seconds (contexts, metric
	 * sets) and measure_seconds (range start to values written) are sums of
	 * these. */
	double phase_s[PH_N];
	long phase_n[PH_N];
	regex_t re;
	int has_re;
	char *exact;
	long skip, count, max_per_kernel;
	double min_share;         /* fraction of gpu_ns for more than one profiled launch */
	double gpu_ns;            /* GPU time so far: launches x mean duration of their kernel */
	long total_launches;      /* every launch seen, selected or not */
	long matched;             /* launches passing the name filter */
	long profiled;
	ctx_state *ctxs;
	chip_cfg *chips;
	CUpti_SubscriberHandle sub;
	repeat_slot *repeats;
	size_t n_repeats, cap_repeats;
	ga_map repeat_index;      /* repeat_slot.key -> index into repeats */
	char *keep_image;
	int image_kept;
	/* The launch in flight between ENTER and EXIT (the lock is held). */
	int pending;              /* 1: range profiler, 2: SASS metrics (sass.c) */
	ctx_state *pending_ctx;
	size_t pending_set;
	size_t pending_slot;      /* repeat slot of the launch in flight */
	double ph_t;              /* phase clock of the launch in flight */
	/* Metric-set changes (switch_now). */
	long last_slot;           /* repeat slot of the previous selected launch, -1 */
	long last_new_kernel;     /* G.matched when a kernel was last seen first */
	long owed[GA_MAX_SETS];   /* launches left unprofiled wanting each set */
	long set_changes;
	double init_at;           /* CLOCK_REALTIME at InitializeInjection */
	double init_profiler_s;   /* of PH_INIT: cuptiProfilerInitialize */
	double init_supported_s;  /* of PH_INIT: cuptiProfilerDeviceSupported */
	double init_avail_s;      /* of PH_INIT: the counter availability image */
	long avail_reads;         /* contexts whose availability image was read */
	double ctx_created_at;    /* CLOCK_REALTIME of the first context creation */
	double first_launch_at;   /* ... of the first launch seen */
	ga_launch pending_launch;
} G = {.lock = PTHREAD_MUTEX_INITIALIZER, .fd = -1, .lock_fd = -1, .last_slot = -1};

static long env_long(const char *name, long dflt);

/* Charge the time since *t to phase ph and restart *t. */
static void phase(int ph, double *t)
{
	double n = now_seconds();
	G.phase_s[ph] += n - *t;
	G.phase_n[ph]++;
	*t = n;
}

/* ---- records ------------------------------------------------------------ */

static void write_record(json_t *obj)
{
	char *s;
	size_t len, off = 0;

	if (G.fd < 0) {
		json_decref(obj);
		return;
	}
	s = json_dumps(obj, JSON_COMPACT);
	json_decref(obj);
	if (!s)
		return;
	len = strlen(s);
	s[len] = '\n';            /* replace the NUL: write the line in one call */
	while (off < len + 1) {
		ssize_t w = write(G.fd, s + off, len + 1 - off);
		if (w < 0) {
			if (errno == EINTR)
				continue;
			break;
		}
		off += (size_t)w;
	}
	free(s);
}

static void write_error(const char *code, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void write_error(const char *code, const char *fmt, ...)
{
	char msg[1024];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	write_record(json_pack("{s:s, s:i, s:s, s:s}", "type", "error", "pid", (int)G.pid,
	                       "code", code, "message", msg));
}

static const char *cupti_code(CUptiResult r)
{
	switch (r) {
	case CUPTI_ERROR_INSUFFICIENT_PRIVILEGES: return "permission";
	case CUPTI_ERROR_MULTIPLE_SUBSCRIBERS_NOT_SUPPORTED: return "another_profiler";
	case CUPTI_ERROR_HARDWARE_BUSY: return "counters_busy";
	case CUPTI_ERROR_VIRTUALIZED_DEVICE_NOT_SUPPORTED:
	case CUPTI_ERROR_CONFIDENTIAL_COMPUTING_NOT_SUPPORTED:
	case CUPTI_ERROR_CMP_DEVICE_NOT_SUPPORTED:
	case CUPTI_ERROR_MIG_DEVICE_NOT_SUPPORTED:
	case CUPTI_ERROR_NOT_SUPPORTED: return "unsupported";
	default: return "cupti";
	}
}

static void stop_profiling_everywhere(void);

/* A failed CUPTI call's record.  CUPTI_ERROR_HARDWARE_BUSY (seen at the
 * first range start, H200): another profiler or monitor holds the
 * device's counters (DCGM's profiling module, ncu, nsys, a separate
 * gpuadvise run; the processes of one run take turns, hold_counters), so
 * the process runs on unprofiled rather than trying again at every launch. */
static void cupti_failed(CUptiResult r, const char *what)
{
	write_error(cupti_code(r), "%s failed: %s", what, ga_cupti_result_string(r));
	if (r == CUPTI_ERROR_HARDWARE_BUSY)
		stop_profiling_everywhere();
}

#define CUPTI_TRY(call, what)                                                        \
	do {                                                                          \
		CUptiResult r_ = (call);                                              \
		if (r_ != CUPTI_SUCCESS) {                                            \
			cupti_failed(r_, what);                                        \
			goto out;                                                      \
		}                                                                     \
	} while (0)

/* ---- names and filters ------------------------------------------------- */

static char *demangle(const char *mangled)
{
	int status = -1;
	char *d = NULL;
	if (!cxa_demangle) {
		cxa_demangle = (demangle_fn)dlsym(RTLD_DEFAULT, "__cxa_demangle");
		if (!cxa_demangle) {
			void *h = dlopen("libstdc++.so.6", RTLD_NOW | RTLD_LOCAL);
			if (h)
				cxa_demangle = (demangle_fn)dlsym(h, "__cxa_demangle");
		}
	}
	if (cxa_demangle && mangled && mangled[0] == '_' && mangled[1] == 'Z')
		d = cxa_demangle(mangled, NULL, NULL, &status);
	if (d && status == 0) {
		char *copy = ga_xstrdup(d);
		free(d);
		return copy;
	}
	free(d);
	return ga_xstrdup(mangled ? mangled : "?");
}

/* "void ns::kern<int>(float*, int)" -> "kern" */
static char *base_name(const char *demangled)
{
	const char *end = strchr(demangled, '(');
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

/* demangled is NULL when no name filter is set (nothing to match). */
static int name_selected(const char *mangled, const char *demangled)
{
	if (G.has_re)
		return regexec(&G.re, demangled, 0, NULL, 0) == 0 ||
		       regexec(&G.re, mangled, 0, NULL, 0) == 0;
	if (G.exact) {
		int ok = strcmp(G.exact, mangled) == 0 || strcmp(G.exact, demangled) == 0;
		if (!ok) {
			char *b = base_name(demangled);
			ok = strcmp(G.exact, b) == 0;
			free(b);
		}
		return ok;
	}
	return 1;
}

/* The kernel's mean measured duration (ns); 0 before any. */
static double mean_ns(const repeat_slot *r)
{
	return r->n_dur ? r->dur_sum / (double)r->n_dur : 0;
}

/* Count one more launch of (name, grid, block). */
static repeat_slot *repeat_count(const char *mangled, const unsigned grid[3],
                                 const unsigned block[3])
{
	char *key = ga_xasprintf("%s|%u,%u,%u|%u,%u,%u", mangled, grid[0], grid[1], grid[2],
	                         block[0], block[1], block[2]);
	long i = ga_strmap_get(&G.repeat_index, key);

	/* Every launch comes through here, profiled or not: a hash, not a scan
	 * over every kernel seen so far. */
	if (i >= 0) {
		repeat_slot *r = &G.repeats[i];
		free(key);
		r->count++;
		G.gpu_ns += mean_ns(r);
	} else {
		repeat_slot s = {key, ga_xstrdup(mangled), {grid[0], grid[1], grid[2]},
		                 {block[0], block[1], block[2]}, 1, 0, {0}, 0, 0, 0};
		GA_PUSH(G.repeats, G.n_repeats, G.cap_repeats, s);
		i = (long)ga_strmap_put(&G.repeat_index, key, G.n_repeats - 1);
	}
	return &G.repeats[i];
}

/* A measured duration of the kernel: its mean changes, and with it the
 * GPU time charged to all its launches so far. */
static void note_duration(repeat_slot *r, double ns)
{
	double old;

	if (!(ns > 0) || !isfinite(ns))
		return;
	old = mean_ns(r);
	r->dur_sum += ns;
	r->n_dur++;
	G.gpu_ns += (mean_ns(r) - old) * (double)r->count;
}

/* Under --min-share: the kernel's launches so far take less than that share
 * of the GPU time of every selected launch so far (each counted at its
 * kernel's mean measured duration).  Its first profiled launch classified
 * it; the other metric sets or repeats would cost a replay each for a
 * kernel whose fixes can save the program little.  A kernel decided here
 * may still grow past the share later (a loop's later phase) and get them
 * then. */
static int below_share(const repeat_slot *r)
{
	if (!(G.min_share > 0) || r->n_dur == 0 || !(G.gpu_ns > 0))
		return 0;
	return mean_ns(r) * (double)r->count < G.min_share * G.gpu_ns;
}

/* Has the kernel had every metric set of its chip (always, with one)? */
static int sets_done(const repeat_slot *r, const chip_cfg *c)
{
	size_t n = c ? c->n_sets : 1;
	if (n > GA_MAX_SETS)
		return r->profiled >= (long)n;
	for (size_t s = 0; s < n; s++)
		if (r->per_set[s] == 0)
			return 0;
	return 1;
}

/* Profile this launch of the kernel (c: its chip's sets, NULL not known
 * yet)?  At most --max-per-kernel launches; with several metric sets, only
 * until it has had each set once: more would repeat measurements at the
 * full cost of a replay. */
static int profile_again(const repeat_slot *r, const chip_cfg *c)
{
	if (G.max_per_kernel > 0 && r->profiled >= G.max_per_kernel)
		return 0;
	return !(c && c->n_sets > 1 && sets_done(r, c));
}

/* The metric set a kernel's next profiled launch wants.  The first takes
 * set 0, which holds the classifier's metrics, so a kernel launched once is
 * still classified.  Later ones take the set the range profiler holds when
 * the kernel has not had it yet, otherwise the set the kernel has had
 * least. */
static size_t choose_set(const repeat_slot *r, size_t n_sets, long cur)
{
	size_t best = 0;

	if (n_sets > GA_MAX_SETS)
		return (size_t)(r->count - 1) % n_sets;
	if (r->per_set[0] == 0 || n_sets <= 1)
		best = 0;
	else if (cur >= 0 && (size_t)cur < n_sets && r->per_set[cur] == 0)
		best = (size_t)cur;
	else
		for (size_t s = 1; s < n_sets; s++)
			if (r->per_set[s] < r->per_set[best])
				best = s;
	return best;
}

/* Change metric sets for this launch, or let it run unprofiled?  A change
 * needs a fresh range-profiler object, whose first start took about 135 ms
 * on an H200 (bench/phases.sh): more than measuring a launch at 3 passes.
 * So a kernel that has had the set the profiler holds changes it only when
 *   - it repeats the launch just before it (a kernel run in a row may not
 *     come back later), or
 *   - the run has settled: no kernel was seen for the first time in the last
 *     SETTLE_LAUNCHES launches (a loop: the others will come round too), or
 *   - SWITCH_OWED launches have wanted that set since it was last taken.
 * A kernel's first launch always gets set 0. */
#define SETTLE_LAUNCHES 8
#define SWITCH_OWED 8

static int switch_now(const repeat_slot *r, size_t want, long cur, int in_a_row)
{
	if (cur < 0 || (size_t)cur == want || r->profiled == 0 || want >= GA_MAX_SETS)
		return 1;
	if (in_a_row || G.matched - G.last_new_kernel > SETTLE_LAUNCHES ||
	    G.owed[want] + 1 >= SWITCH_OWED)
		return 1;
	G.owed[want]++;
	return 0;
}

/* ---- loading CUPTI's metrics library early --------------------------------
 *
 * cuptiProfilerInitialize, at the first launch, loads libnvperf_host.so
 * from libcupti's folder, and that library's constructors take 60 ms or
 * more of CPU on the program's thread (they touch much of its 120 MiB of
 * zero-initialised data; bench/probe/cpusample.c found it).
 * InitializeInjection loads it on a thread of its own instead, while the
 * program goes on to make its context.  Only the dynamic loader runs there,
 * no CUPTI call (CUPTI state set up beside a context being made crashed at
 * exit: docs/PERFORMANCE.md); CUPTI's own dlopen then finds the library by
 * its soname.  GPUADVISE_NVPERF_PRELOAD=0 turns it off (the benchmark). */
static struct {
	pthread_mutex_t lock;
	pthread_t thread;
	int running;              /* started, not joined yet */
	int loaded;               /* this process loaded it early */
	double load_s;            /* dlopen's time, on that thread */
	double wait_s;            /* time the program's thread waited for it */
} P = {.lock = PTHREAD_MUTEX_INITIALIZER};

static void *preload_main(void *arg)
{
	char *path = arg;
	double t = now_seconds();
	/* Never closed: CUPTI holds it from its first launch to the end. */
	P.loaded = dlopen(path, RTLD_NOW | RTLD_LOCAL) != NULL;
	P.load_s = now_seconds() - t;
	free(path);
	return NULL;
}

/* Wait for the load to end: before CUPTI loads the library itself, before
 * a fork (a child must not inherit the loader's lock held), and at exit. */
static void preload_join(void)
{
	pthread_mutex_lock(&P.lock);
	if (P.running) {
		double t = now_seconds();
		pthread_join(P.thread, NULL);
		P.running = 0;
		P.wait_s += now_seconds() - t;
	}
	pthread_mutex_unlock(&P.lock);
}

static void preload_start(void)
{
	const char *slash;
	Dl_info di;
	sigset_t all, old;
	char *path;

	if (env_long("GPUADVISE_NVPERF_PRELOAD", 1) == 0)
		return;
	if (!dladdr((void *)cuptiSubscribe, &di) || !di.dli_fname ||
	    !(slash = strrchr(di.dli_fname, '/')))
		return;
	path = ga_xasprintf("%.*s/libnvperf_host.so", (int)(slash - di.dli_fname), di.dli_fname);
	if (access(path, R_OK) != 0) {
		free(path);   /* CUPTI's own search will find it, or say why not */
		return;
	}
	/* The program's signals stay with the program's threads. */
	sigfillset(&all);
	pthread_sigmask(SIG_SETMASK, &all, &old);
	pthread_mutex_lock(&P.lock);
	if (pthread_create(&P.thread, NULL, preload_main, path) == 0) {
		P.running = 1;
		pthread_atfork(preload_join, NULL, NULL);
	} else {
		free(path);
	}
	pthread_mutex_unlock(&P.lock);
	pthread_sigmask(SIG_SETMASK, &old, NULL);
}

/* ---- per-chip configuration, per-context setup ------------------------- */

static void set_free(metric_set *m)
{
	ga_host_free(m->host);
	free(m->config);
	free(m->names);
	free(m->slot);
}

/* Configure set ms from the valid metrics v[0..nv) whose set_of is s, plus
 * the duration (every launch needs it, and it costs no pass). */
static int set_build(const char *chip, const uint8_t *avail, metric_set *ms, const size_t *v,
                     size_t nv, const size_t *set_of, size_t s, long duration)
{
	ga_error err = {0};

	ms->names = ga_xcalloc(nv + 1, sizeof(*ms->names));
	ms->slot = ga_xcalloc(nv + 1, sizeof(*ms->slot));
	for (size_t i = 0; i < nv; i++) {
		if (set_of[i] != s || (long)v[i] == duration)
			continue;
		ms->slot[ms->n_names] = v[i];
		ms->names[ms->n_names++] = G.prof.metrics[v[i]];
	}
	if (duration >= 0) {
		ms->slot[ms->n_names] = (size_t)duration;
		ms->names[ms->n_names++] = G.prof.metrics[duration];
	}
	ms->host = ga_host_new(chip, avail, &err);
	if (!ms->host || ga_host_config(ms->host, ms->names, ms->n_names, &ms->config,
	                                &ms->config_size, &ms->passes, &err) != 0) {
		write_error("cupti", "%s", err.msg);
		return -1;
	}
	return 0;
}

static chip_cfg *chip_find(const char *chip)
{
	chip_cfg *c = G.chips;
	while (c && strcmp(c->chip, chip) != 0)
		c = c->next;
	return c;
}

/* The chip's metric sets: the valid metrics, packed bundle by bundle into
 * sets of at most G.max_passes replay passes (ga_host_pack). */
static chip_cfg *chip_config(const char *chip, const uint8_t *avail, size_t avail_size)
{
	chip_cfg *c;
	ga_error err = {0};
	ga_host *h;
	size_t *v, nv = 0, *set_of, *bundle;
	const char **names;
	long duration = ga_profile_metric_index(&G.prof, "gpu__time_duration.sum");

	if ((c = chip_find(chip)))
		return c;
	h = ga_host_new(chip, avail, &err);
	if (!h) {
		write_error("unsupported", "%s", err.msg);
		return NULL;
	}
	v = ga_xcalloc(G.prof.n_metrics, sizeof(*v));
	names = ga_xcalloc(G.prof.n_metrics, sizeof(*names));
	bundle = ga_xcalloc(G.prof.n_metrics, sizeof(*bundle));
	set_of = ga_xcalloc(G.prof.n_metrics, sizeof(*set_of));
	for (size_t i = 0; i < G.prof.n_metrics; i++) {
		if (ga_host_metric_valid(h, G.prof.metrics[i])) {
			if ((long)i != duration) {
				names[nv] = G.prof.metrics[i];
				bundle[nv] = G.bundle[i];
				v[nv++] = i;
			}
		} else {
			write_record(json_pack("{s:s, s:i, s:s, s:s, s:s}", "type", "error",
			                       "pid", (int)G.pid, "code", "bad_metric",
			                       "metric", G.prof.metrics[i], "message",
			                       "metric name not known for this chip"));
		}
	}
	ga_host_free(h);
	c = ga_xcalloc(1, sizeof(*c));
	c->chip = ga_xstrdup(chip);
	c->n_sets = nv ? ga_host_pack(chip, avail, avail_size, names, bundle, nv,
	                             (size_t)G.max_passes, set_of)
	               : 1;
	c->sets = ga_xcalloc(c->n_sets, sizeof(*c->sets));
	int ok = nv > 0 || duration >= 0;
	for (size_t s = 0; ok && s < c->n_sets; s++)
		ok = set_build(chip, avail, &c->sets[s], v, nv, set_of, s, duration) == 0;
	if (!ok && nv == 0 && duration < 0)
		write_error("cupti", "no valid metric to collect");
	free(v);
	free(names);
	free(bundle);
	free(set_of);
	if (!ok) {
		for (size_t s = 0; s < c->n_sets; s++)
			set_free(&c->sets[s]);
		free(c->sets);
		free(c->chip);
		free(c);
		return NULL;
	}
	c->next = G.chips;
	G.chips = c;
	return c;
}

static int dev_attr(CUdevice d, CUdevice_attribute a)
{
	int v = 0;
	if (cuDeviceGetAttribute(&v, a, d) != CUDA_SUCCESS)
		return 0;
	return v;
}

static void fill_device(ctx_state *cs, const char *chip)
{
	char name[256] = "unknown";
	CUdevice d = cs->cudev;
	ga_device *dv = &cs->dev;
	int drv = 0;
	uint32_t cupti_ver = 0;

	cuDeviceGetName(name, sizeof(name), d);
	cuDriverGetVersion(&drv);
	cuptiGetVersion(&cupti_ver);
	dv->name = ga_xstrdup(name);
	dv->chip = ga_xstrdup(chip);
	dv->cc_major = dev_attr(d, CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR);
	dv->cc_minor = dev_attr(d, CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR);
	dv->sm_count = dev_attr(d, CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT);
	dv->sm_clock_mhz = dev_attr(d, CU_DEVICE_ATTRIBUTE_CLOCK_RATE) / 1000.0;
	dv->mem_clock_mhz = dev_attr(d, CU_DEVICE_ATTRIBUTE_MEMORY_CLOCK_RATE) / 1000.0;
	dv->bus_width_bits = dev_attr(d, CU_DEVICE_ATTRIBUTE_GLOBAL_MEMORY_BUS_WIDTH);
	/* Double data rate: two transfers per memory clock. */
	dv->mem_bandwidth_gbs = 2.0 * dv->mem_clock_mhz * 1e6 * (dv->bus_width_bits / 8.0) / 1e9;
	dv->l2_bytes = dev_attr(d, CU_DEVICE_ATTRIBUTE_L2_CACHE_SIZE);
	dv->max_threads_per_sm = dev_attr(d, CU_DEVICE_ATTRIBUTE_MAX_THREADS_PER_MULTIPROCESSOR);
	dv->max_blocks_per_sm = dev_attr(d, CU_DEVICE_ATTRIBUTE_MAX_BLOCKS_PER_MULTIPROCESSOR);
	dv->regs_per_sm = dev_attr(d, CU_DEVICE_ATTRIBUTE_MAX_REGISTERS_PER_MULTIPROCESSOR);
	dv->smem_per_sm = dev_attr(d, CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_MULTIPROCESSOR);
	dv->smem_per_block_optin = dev_attr(d, CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK_OPTIN);
	dv->warp_size = dev_attr(d, CU_DEVICE_ATTRIBUTE_WARP_SIZE);
	dv->driver_version = drv;
	dv->cupti_version = (int)cupti_ver;
}

static const char *support_problem(const CUpti_Profiler_DeviceSupported_Params *p)
{
	if (p->architecture != CUPTI_PROFILER_CONFIGURATION_SUPPORTED)
		return "the GPU architecture is not supported by the CUPTI Range Profiler (compute capability 7.0 or newer is needed)";
	if (p->vGpu == CUPTI_PROFILER_CONFIGURATION_DISABLED)
		return "profiling is disabled on this vGPU (ask the administrator to enable it)";
	if (p->vGpu != CUPTI_PROFILER_CONFIGURATION_SUPPORTED)
		return "this virtual GPU (vGPU) does not support profiling";
	if (p->confidentialCompute != CUPTI_PROFILER_CONFIGURATION_SUPPORTED)
		return "confidential computing mode is on, which does not allow profiling";
	if (p->cmp != CUPTI_PROFILER_CONFIGURATION_SUPPORTED)
		return "crypto-mining processors (CMP) do not support profiling";
	if (p->sli != CUPTI_PROFILER_CONFIGURATION_SUPPORTED)
		return "SLI configurations do not support profiling";
	if (p->wsl != CUPTI_PROFILER_CONFIGURATION_SUPPORTED)
		return "profiling is not supported under this WSL setup";
	return "the device does not support profiling";
}

/* Take the range profiler out of ctx (the lock is held). */
static void measure_disable(ctx_state *cs)
{
	if (cs->rp) {
		CUpti_RangeProfiler_Disable_Params p = {CUpti_RangeProfiler_Disable_Params_STRUCT_SIZE};
		p.pRangeProfilerObject = cs->rp;
		cuptiRangeProfilerDisable(&p);
		cs->rp = NULL;
	}
}

/* ... and its counter-data images with it: an image belongs to the object
 * that sized it (reusing one under a new object crashed the application).
 * measure_begin enables and sizes afresh at the next profiled launch. */
static void measure_drop(ctx_state *cs)
{
	measure_disable(cs);
	for (size_t s = 0; cs->cdata && s < cs->cfg->n_sets; s++) {
		free(cs->cdata[s]);
		cs->cdata[s] = NULL;
	}
}

/* Enable the range profiler in the context, once, and size the
 * counter-data image. */
static int measure_enable(ctx_state *cs)
{
	if (cs->rp)
		return 0;
	{
		CUpti_RangeProfiler_Enable_Params p = {CUpti_RangeProfiler_Enable_Params_STRUCT_SIZE};
		p.ctx = cs->ctx;
		CUPTI_TRY(cuptiRangeProfilerEnable(&p), "enabling the range profiler");
		cs->rp = p.pRangeProfilerObject;
		cs->cur_set = -1;
	}
	return 0;
out:
	return -1;
}

/* The size of a counter-data image for `ranges` ranges of set ms, on the
 * context's object; 0 on failure. */
static size_t counter_data_size(ctx_state *cs, const metric_set *ms, size_t ranges)
{
	CUpti_RangeProfiler_GetCounterDataSize_Params p =
		{CUpti_RangeProfiler_GetCounterDataSize_Params_STRUCT_SIZE};
	p.pRangeProfilerObject = cs->rp;
	p.pMetricNames = ms->names;
	p.numMetrics = ms->n_names;
	p.maxNumOfRanges = ranges;
	p.maxNumRangeTreeNodes = ranges;
	CUPTI_TRY(cuptiRangeProfilerGetCounterDataSize(&p), "sizing the counter data");
	return p.counterDataSize;
out:
	return 0;
}

static int counter_data_init(ctx_state *cs, uint8_t *data, size_t size)
{
	CUpti_RangeProfiler_CounterDataImage_Initialize_Params p =
		{CUpti_RangeProfiler_CounterDataImage_Initialize_Params_STRUCT_SIZE};
	p.pRangeProfilerObject = cs->rp;
	p.counterDataSize = size;
	p.pCounterData = data;
	CUPTI_TRY(cuptiRangeProfilerCounterDataImageInitialize(&p), "initialising the counter data");
	return 0;
out:
	return -1;
}

/* Configure the context's object for set ms: auto range, `ranges` ranges
 * a pass, into the image data. */
static int set_config(ctx_state *cs, const metric_set *ms, uint8_t *data, size_t size,
                      CUpti_ProfilerReplayMode mode, size_t ranges)
{
	CUpti_RangeProfiler_SetConfig_Params p = {CUpti_RangeProfiler_SetConfig_Params_STRUCT_SIZE};
	p.pRangeProfilerObject = cs->rp;
	p.configSize = ms->config_size;
	p.pConfig = ms->config;
	p.counterDataImageSize = size;
	p.pCounterDataImage = data;
	p.range = CUPTI_AutoRange;
	p.replayMode = mode;
	p.maxRangesPerPass = ranges;
	p.numNestingLevels = 1;
	p.minNestingLevel = 1;
	p.passIndex = 0;
	p.targetNestingLevel = 1;
	CUPTI_TRY(cuptiRangeProfilerSetConfig(&p), "configuring the range profiler");
	return 0;
out:
	return -1;
}

/* The context's object: start a pass, stop it (*all: the set's last pass
 * was submitted), decode the passes into the image (*dropped: ranges lost). */
static CUptiResult range_start(const ctx_state *cs)
{
	CUpti_RangeProfiler_Start_Params p = {CUpti_RangeProfiler_Start_Params_STRUCT_SIZE};
	p.pRangeProfilerObject = cs->rp;
	return cuptiRangeProfilerStart(&p);
}

static CUptiResult range_stop(const ctx_state *cs, int *all)
{
	CUpti_RangeProfiler_Stop_Params p = {CUpti_RangeProfiler_Stop_Params_STRUCT_SIZE};
	CUptiResult r;
	p.pRangeProfilerObject = cs->rp;
	r = cuptiRangeProfilerStop(&p);
	if (all)
		*all = p.isAllPassSubmitted;
	return r;
}

static CUptiResult range_decode(const ctx_state *cs, size_t *dropped)
{
	CUpti_RangeProfiler_DecodeData_Params p = {CUpti_RangeProfiler_DecodeData_Params_STRUCT_SIZE};
	CUptiResult r;
	p.pRangeProfilerObject = cs->rp;
	r = cuptiRangeProfilerDecodeData(&p);
	*dropped = p.numOfRangeDropped;
	return r;
}

/* Start measuring the next launch with metric set `set`.  The range
 * profiler is configured again only when the set changes. */
static int measure_begin(ctx_state *cs, size_t set)
{
	const metric_set *ms = &cs->cfg->sets[set];

	/* Another metric set: a second SetConfig on the same range-profiler
	 * object keeps measuring the first configuration's counters, with its
	 * pass count (bench/probe/rp_probe.c, H200, CUPTI 13.0, kernel and user
	 * replay alike), so disable and enable it again, with fresh
	 * counter-data images.  The new object's first start costs about
	 * 135 ms. */
	double *t = &G.ph_t;   /* phases of this launch, from on_enter */

	if (cs->rp && cs->cur_set >= 0 && cs->cur_set != (long)set)
		measure_drop(cs);
	if (measure_enable(cs) != 0)
		goto out;
	phase(PH_ENABLE, t);
	if (!cs->cdata[set]) {
		size_t size = counter_data_size(cs, ms, 1);
		if (!size)
			goto out;
		cs->cdata_size[set] = size;
		cs->cdata[set] = ga_xcalloc(1, size);
	}
	if (counter_data_init(cs, cs->cdata[set], cs->cdata_size[set]) != 0)
		goto out;
	phase(PH_CDATA, t);
	if (cs->cur_set != (long)set) {
		if (set_config(cs, ms, cs->cdata[set], cs->cdata_size[set], CUPTI_KernelReplay, 1) != 0)
			goto out;
		cs->cur_set = (long)set;
		phase(PH_CONFIG, t);
	}
	CUPTI_TRY(range_start(cs), "starting the range profiler");
	phase(PH_START, t);
	return 0;
out:
	measure_disable(cs);
	return -1;
}

/* device {pid, context, device, passes (the most of one launch), metrics
 * (every valid one), sets [{passes, metrics}]} */
static void write_device_record(const ctx_state *cs)
{
	json_t *rec = json_object(), *all = json_array(), *sets = json_array();
	size_t most = 0;

	for (size_t s = 0; s < cs->cfg->n_sets; s++) {
		const metric_set *ms = &cs->cfg->sets[s];
		json_t *names = json_array();
		for (size_t i = 0; i < ms->n_names; i++) {
			json_array_append_new(names, json_string(ms->names[i]));
			if (s == 0 || strcmp(ms->names[i], "gpu__time_duration.sum") != 0)
				json_array_append_new(all, json_string(ms->names[i]));
		}
		json_array_append_new(sets, json_pack("{s:I, s:o}", "passes", (json_int_t)ms->passes,
		                                      "metrics", names));
		if (ms->passes > most)
			most = ms->passes;
	}
	json_object_set_new(rec, "type", json_string("device"));
	json_object_set_new(rec, "pid", json_integer(G.pid));
	json_object_set_new(rec, "context", json_integer(cs->uid));
	json_object_set_new(rec, "device", (json_t *)ga_device_to_json(&cs->dev));
	json_object_set_new(rec, "passes", json_integer((json_int_t)most));
	json_object_set_new(rec, "metrics", all);
	json_object_set_new(rec, "sets", sets);
	write_record(rec);
}

static ctx_state *ctx_find(CUcontext ctx, uint32_t uid)
{
	ctx_state *cs = G.ctxs;
	while (cs && !(cs->ctx == ctx && cs->uid == uid))
		cs = cs->next;
	return cs;
}

static ctx_state *ctx_get(CUcontext ctx, uint32_t uid)
{
	ctx_state *cs;
	uint8_t *avail = NULL;
	size_t avail_size = 0;
	const char *chip;
	double t = now_seconds(), t1;

	if ((cs = ctx_find(ctx, uid)))
		return cs;
	cs = ga_xcalloc(1, sizeof(*cs));
	cs->ctx = ctx;
	cs->uid = uid;
	cs->next = G.ctxs;
	G.ctxs = cs;

	if (!G.profiler_initialized) {
		/* Not in InitializeInjection: during cuInit the profiler is not
		 * ready yet (CUPTI_ERROR_UNKNOWN there, seen on an H200). */
		CUpti_Profiler_Initialize_Params p = {CUpti_Profiler_Initialize_Params_STRUCT_SIZE};
		preload_join();
		CUPTI_TRY(cuptiProfilerInitialize(&p), "cuptiProfilerInitialize");
		G.profiler_initialized = 1;
		G.init_profiler_s = now_seconds() - t;
	}
	if (cuCtxGetDevice(&cs->cudev) != CUDA_SUCCESS) {
		write_error("cupti", "cannot find the device of context %u", uid);
		goto out;
	}
	t1 = now_seconds();
	{
		CUpti_Profiler_DeviceSupported_Params p = {CUpti_Profiler_DeviceSupported_Params_STRUCT_SIZE};
		p.cuDevice = cs->cudev;
		p.api = CUPTI_PROFILER_RANGE_PROFILING;
		CUPTI_TRY(cuptiProfilerDeviceSupported(&p), "cuptiProfilerDeviceSupported");
		if (p.isSupported != CUPTI_PROFILER_CONFIGURATION_SUPPORTED) {
			write_error("unsupported", "%s", support_problem(&p));
			goto out;
		}
	}
	G.init_supported_s += now_seconds() - t1;
	{
		CUpti_Device_GetChipName_Params p = {CUpti_Device_GetChipName_Params_STRUCT_SIZE};
		p.deviceIndex = (size_t)cs->cudev;
		CUPTI_TRY(cuptiDeviceGetChipName(&p), "cuptiDeviceGetChipName");
		chip = p.pChipName;
	}
	t1 = now_seconds();
	/* The counter availability image lets the host API leave out counters
	 * the device does not offer; CUPTI requires it only for chips newer
	 * than this release (its header: "required for future chip support").
	 * Reading it is 0.12 s of the 0.2 s start-up (bench/phases.sh), so it is
	 * read only for a chip not configured yet that the host API does not
	 * list, or with GPUADVISE_COUNTER_AVAILABILITY=1.  The device's own
	 * limits are checked above (cuptiProfilerDeviceSupported: MIG, vGPU,
	 * confidential computing), and counters in use by another profiler make
	 * the first range start fail with CUPTI_ERROR_HARDWARE_BUSY, which is
	 * reported as such (CUPTI_TRY). */
	if (!chip_find(chip) &&
	    (env_long("GPUADVISE_COUNTER_AVAILABILITY", 0) > 0 || !ga_host_chip_known(chip))) {
		CUpti_Profiler_GetCounterAvailability_Params p =
			{CUpti_Profiler_GetCounterAvailability_Params_STRUCT_SIZE};
		p.ctx = ctx;
		CUPTI_TRY(cuptiProfilerGetCounterAvailability(&p), "reading counter availability");
		avail = ga_xmalloc(p.counterAvailabilityImageSize);
		avail_size = p.counterAvailabilityImageSize;
		p.pCounterAvailabilityImage = avail;
		CUPTI_TRY(cuptiProfilerGetCounterAvailability(&p), "reading counter availability");
		G.avail_reads++;
	}
	G.init_avail_s += now_seconds() - t1;
	phase(PH_INIT, &t);
	cs->cfg = chip_config(chip, avail, avail_size);
	phase(PH_PACK, &t);
	if (!cs->cfg)
		goto out;
	cs->cdata = ga_xcalloc(cs->cfg->n_sets, sizeof(*cs->cdata));
	cs->cdata_size = ga_xcalloc(cs->cfg->n_sets, sizeof(*cs->cdata_size));
	cs->cur_set = -1;
	fill_device(cs, chip);
	write_device_record(cs);
	cs->ok = 1;
out:
	if (!cs->ok)
		measure_disable(cs);
	free(avail);
	return cs;
}

static void loop_context_gone(const ctx_state *cs);

static void ctx_release(ctx_state *cs)
{
	loop_context_gone(cs);
	measure_drop(cs);
	cs->ok = 0;
	free(cs->cdata);
	free(cs->cdata_size);
	cs->cdata = NULL;
	cs->cdata_size = NULL;
}

/* ---- launch metadata ---------------------------------------------------- */

static void occupancy(ctx_state *cs, CUfunction f, ga_launch *l)
{
	const ga_device *d = &cs->dev;
	int threads = (int)(l->block[0] * l->block[1] * l->block[2]);
	int warps = (threads + 31) / 32;
	int max_warps = d->max_threads_per_sm / 32;
	int blocks = 0;
	int reserved = dev_attr(cs->cudev, CU_DEVICE_ATTRIBUTE_RESERVED_SHARED_MEMORY_PER_BLOCK);

	if (warps <= 0 || max_warps <= 0)
		return;
	l->occ_limit_blocks = d->max_blocks_per_sm;
	l->occ_limit_warps = max_warps / warps;
	if (l->registers > 0) {
		/* Registers are allocated per warp in units of 256, from each of
		 * the four SM sub-partitions' quarter of the register file. */
		int per_warp = ((l->registers * 32 + 255) / 256) * 256;
		int warps_per_part = (d->regs_per_sm / 4) / per_warp;
		l->occ_limit_registers = (warps_per_part * 4) / warps;
	} else {
		l->occ_limit_registers = d->max_blocks_per_sm;
	}
	long smem = l->smem_static + l->smem_dynamic;
	if (smem > 0)
		l->occ_limit_smem = (int)(d->smem_per_sm / (smem + reserved));
	else
		l->occ_limit_smem = d->max_blocks_per_sm;

	if (cuOccupancyMaxActiveBlocksPerMultiprocessor(&blocks, f, threads, (size_t)l->smem_dynamic)
	    != CUDA_SUCCESS) {
		CUfunction fn;
		if (cuKernelGetFunction(&fn, (CUkernel)f) != CUDA_SUCCESS ||
		    cuOccupancyMaxActiveBlocksPerMultiprocessor(&blocks, fn, threads,
		                                                (size_t)l->smem_dynamic) != CUDA_SUCCESS) {
			int m = l->occ_limit_blocks;
			if (l->occ_limit_warps < m) m = l->occ_limit_warps;
			if (l->occ_limit_registers < m) m = l->occ_limit_registers;
			if (l->occ_limit_smem < m) m = l->occ_limit_smem;
			blocks = m;
		}
	}
	l->occ_theoretical_pct = 100.0 * blocks * warps / max_warps;
	if (l->occ_theoretical_pct > 100.0)
		l->occ_theoretical_pct = 100.0;
	l->occ_limiter = ga_xstrdup(ga_launch_limiter(l));
}

static int func_attr(CUfunction f, CUdevice dev, CUfunction_attribute a)
{
	int v = 0;
	if (cuFuncGetAttribute(&v, a, f) == CUDA_SUCCESS)
		return v;
	if (cuKernelGetAttribute(&v, a, (CUkernel)f, dev) == CUDA_SUCCESS)
		return v;
	return 0;
}

static int launch_params(CUpti_CallbackId cbid, const void *params, CUfunction *f,
                         unsigned grid[3], unsigned block[3], unsigned *smem, CUstream *stream)
{
	switch (cbid) {
	case CUPTI_DRIVER_TRACE_CBID_cuLaunchKernel:
	case CUPTI_DRIVER_TRACE_CBID_cuLaunchKernel_ptsz: {
		const cuLaunchKernel_params *p = params;
		*f = p->f;
		grid[0] = p->gridDimX; grid[1] = p->gridDimY; grid[2] = p->gridDimZ;
		block[0] = p->blockDimX; block[1] = p->blockDimY; block[2] = p->blockDimZ;
		*smem = p->sharedMemBytes;
		*stream = p->hStream;
		return 0;
	}
	case CUPTI_DRIVER_TRACE_CBID_cuLaunchCooperativeKernel:
	case CUPTI_DRIVER_TRACE_CBID_cuLaunchCooperativeKernel_ptsz: {
		const cuLaunchCooperativeKernel_params *p = params;
		*f = p->f;
		grid[0] = p->gridDimX; grid[1] = p->gridDimY; grid[2] = p->gridDimZ;
		block[0] = p->blockDimX; block[1] = p->blockDimY; block[2] = p->blockDimZ;
		*smem = p->sharedMemBytes;
		*stream = p->hStream;
		return 0;
	}
	case CUPTI_DRIVER_TRACE_CBID_cuLaunchKernelEx:
	case CUPTI_DRIVER_TRACE_CBID_cuLaunchKernelEx_ptsz: {
		const cuLaunchKernelEx_params *p = params;
		const CUlaunchConfig *c = p->config;
		if (!c)
			return -1;
		*f = p->f;
		grid[0] = c->gridDimX; grid[1] = c->gridDimY; grid[2] = c->gridDimZ;
		block[0] = c->blockDimX; block[1] = c->blockDimY; block[2] = c->blockDimZ;
		*smem = c->sharedMemBytes;
		*stream = c->hStream;
		return 0;
	}
	default:
		return -1;
	}
}

static void launch_free(ga_launch *l)
{
	free(l->mangled);
	free(l->name);
	free(l->occ_limiter);
	free(l->values);
	memset(l, 0, sizeof(*l));
}

/* What a launch's callback tells of it. */
typedef struct {
	CUfunction f;
	const unsigned *grid, *block;
	unsigned smem;
	CUstream stream;
	const char *mangled;
} launch_args;

/* Fill *l with the launch's metadata (name is taken, NULL: demangle). */
static void launch_meta(ga_launch *l, ctx_state *cs, const launch_args *a, uint32_t ctx_uid,
                        char *name)
{
	memset(l, 0, sizeof(*l));
	l->mangled = ga_xstrdup(a->mangled);
	l->name = name ? name : demangle(a->mangled);
	l->pid = (int)G.pid;
	l->index = G.total_launches - 1;
	memcpy(l->grid, a->grid, sizeof(l->grid));
	memcpy(l->block, a->block, sizeof(l->block));
	l->registers = func_attr(a->f, cs->cudev, CU_FUNC_ATTRIBUTE_NUM_REGS);
	l->smem_static = func_attr(a->f, cs->cudev, CU_FUNC_ATTRIBUTE_SHARED_SIZE_BYTES);
	l->smem_dynamic = a->smem;
	{
		unsigned long long sid = 0;
		if (cuStreamGetId(a->stream, &sid) == CUDA_SUCCESS)
			l->stream = sid;
	}
	l->context = (int)ctx_uid;
	l->duration_ns = NAN;
	occupancy(cs, a->f, l);
}

/* ---- the launch callbacks ------------------------------------------------ */

/* GPU counters are a device-wide resource: while one process has the range
 * profiler enabled, another gets CUPTI_ERROR_HARDWARE_BUSY, and disabling and
 * re-enabling it within a context crashed on an H200.  So the processes of
 * a run (children inherit the injection library) take turns a process at a
 * time: the first to profile holds the run's lock file until its contexts
 * are destroyed or it exits (the kernel drops the lock even on a crash).  A
 * process waits up to GPUADVISE_LOCK_WAIT seconds (default 10) and then runs
 * unprofiled, with a note, rather than risk stalling processes that wait for
 * each other.  Returns 1 when this process may profile. */
static int hold_counters(void)
{
	if (G.lock_held || G.lock_fd < 0)
		return G.lock_fd < 0 || G.lock_held;
	if (G.lock_gave_up)
		return 0;
	long wait_ms = env_long("GPUADVISE_LOCK_WAIT", 10) * 1000;
	for (long waited = 0;; waited += 10) {
		if (flock(G.lock_fd, LOCK_EX | LOCK_NB) == 0) {
			G.lock_held = 1;
			return 1;
		}
		if (errno != EWOULDBLOCK && errno != EINTR)
			return 1;       /* no locking here: try anyway */
		if (waited >= wait_ms)
			break;
		struct timespec ts = {0, 10 * 1000 * 1000};
		nanosleep(&ts, NULL);
	}
	G.lock_gave_up = 1;
	write_error("busy", "another process of this run held the GPU counters for %ld s; this "
	            "process ran unprofiled (raise GPUADVISE_LOCK_WAIT to wait longer)",
	            wait_ms / 1000);
	return 0;
}

static void release_counters(void)
{
	int any = 0;
	for (ctx_state *cs = G.ctxs; cs; cs = cs->next)
		any |= cs->rp != NULL;
	if (!any && G.lock_held) {
		flock(G.lock_fd, LOCK_UN);
		G.lock_held = 0;
	}
}

static void stop_profiling_everywhere(void)
{
	/* Launch count reached: stop listening, so the rest runs at full speed. */
	G.enabled = 0;
	if (!ga_sass_outstanding())
		cuptiEnableDomain(0, G.sub, CUPTI_CB_DOMAIN_DRIVER_API);
}

/* A measured launch: its metric set's values vals[] into the profile's
 * metric order, its duration into the kernel's mean, its record out. */
static void launch_done(ga_launch *l, const metric_set *ms, const double *vals, repeat_slot *rep)
{
	l->values = ga_xmalloc(G.prof.n_metrics * sizeof(double));
	for (size_t i = 0; i < G.prof.n_metrics; i++)
		l->values[i] = NAN;
	for (size_t i = 0; i < ms->n_names; i++) {
		l->values[ms->slot[i]] = vals[i];
		if (strcmp(ms->names[i], "gpu__time_duration.sum") == 0)
			l->duration_ns = vals[i];
	}
	note_duration(rep, l->duration_ns);
	ga_sass_note(l->mangled, (uint32_t)l->context, G.prof.metrics, l->values, G.prof.n_metrics);
	json_t *rec = (json_t *)ga_launch_to_json(&G.prof, l);
	json_object_set_new(rec, "type", json_string("launch"));
	write_record(rec);
}

/* ---- loop replay ---------------------------------------------------------
 *
 * A program that runs the same launches over and over (a training loop's
 * steps, a benchmark's repetitions) can have its kernels measured without
 * replaying any launch.  Once the last 2p launches are two copies of the
 * same p (loop.c), the range profiler is set up for user replay with a range
 * per launch (auto range), and each following iteration of the program is
 * one pass over all p launches.  A 3-pass metric set then costs three
 * iterations of the program's own work and one object's first start (about
 * 135 ms) instead of a save, restore and three replays of every launch (50
 * to 80 ms each in PyTorch, bench/phases.sh).  The values of a launch come
 * from the same position in consecutive iterations, as with ncu's
 * application replay, so a kernel whose work changes between iterations is
 * measured over several (--no-loop-replay measures each launch on its own).
 * A launch out of the pattern (another kernel, another context) or a range
 * count that does not match ends it, with that set's values dropped, and the
 * launches go on as before.
 *
 * While a loop may still show (LOOP_MIN_KERNELS kernels seen), a kernel's
 * other metric sets wait for its LOOP_DEFER-th launch rather than take a
 * replay each, unless it runs in a row: a loop of one kernel is cheaper
 * replayed. */
#define LOOP_MAX_PERIOD 128       /* launches per iteration */
#define LOOP_RING (2 * LOOP_MAX_PERIOD)
#define LOOP_MIN_KERNELS 3        /* kernels wanting a set, to start one */
#define LOOP_DEFER 4
#define LOOP_MAX_FAILS 2

static struct {
	long ring[LOOP_RING];     /* repeat slots of the last selected launches */
	size_t n;
	int off;                  /* no loop replay in this process */
	int active;               /* measuring iterations */
	size_t period;
	long keys[LOOP_MAX_PERIOD];   /* repeat slot at each position */
	size_t pos;               /* position of the next launch */
	size_t set;               /* metric set being measured */
	int configured;           /* the range profiler holds it */
	long pass;
	ctx_state *cs;
	uint8_t *cdata;
	size_t cdata_size;
	ga_launch meta[LOOP_MAX_PERIOD];  /* the launches of the set's first pass */
	long mark;
	long launches;            /* launch records from loop replay */
	long passes;              /* iterations measured */
	long aborted;             /* sets dropped: LOOP_MAX_FAILS end it */
} L;

/* Does the kernel still want set s (from a loop, where it costs nothing
 * extra)?  With one set: repeats up to --max-per-kernel. */
static int loop_wants(const repeat_slot *r, const chip_cfg *c, size_t s)
{
	if (G.max_per_kernel > 0 && r->profiled >= G.max_per_kernel)
		return 0;
	if (c->n_sets > 1)
		return s < GA_MAX_SETS && r->per_set[s] == 0;
	return G.max_per_kernel > 0;
}

/* The set that the most distinct kernels of the iteration want. */
static size_t loop_best_set(const chip_cfg *c, size_t *count)
{
	size_t best = 0, best_n = 0;

	for (size_t s = 0; s < c->n_sets && s < GA_MAX_SETS; s++) {
		size_t n = 0;
		L.mark++;
		for (size_t i = 0; i < L.period; i++) {
			repeat_slot *r = &G.repeats[L.keys[i]];
			if (r->loop_mark != L.mark && loop_wants(r, c, s)) {
				r->loop_mark = L.mark;
				n++;
			}
		}
		if (n > best_n) {
			best = s;
			best_n = n;
		}
	}
	*count = best_n;
	return best;
}

/* After a launch: is the run repeating, with kernels that want a set?
 * Only the smallest period is tried: a larger one is nearly always a
 * multiple, with the same kernels. */
static void loop_detect(const CUpti_CallbackData *cb)
{
	ctx_state *cs = ctx_find(cb->context, cb->contextUid);
	size_t p, n, set;

	if (!cs || !cs->ok)
		return;
	p = ga_loop_period(L.ring, LOOP_RING, L.n, 2, LOOP_MAX_PERIOD);
	if (!p)
		return;
	/* The next iteration starts with the launch p - 1 back. */
	for (size_t i = 0; i < p; i++)
		L.keys[i] = ga_loop_back(L.ring, LOOP_RING, L.n, p - 1 - i);
	L.period = p;
	set = loop_best_set(cs->cfg, &n);
	if (n < LOOP_MIN_KERNELS)
		return;
	L.active = 1;
	L.cs = cs;
	L.set = set;
	L.pos = 0;
	L.pass = 0;
	L.configured = 0;
}

static void loop_clear(void)
{
	for (size_t i = 0; i < LOOP_MAX_PERIOD; i++)
		launch_free(&L.meta[i]);
	L.active = 0;
	L.pos = 0;
	L.configured = 0;
}

/* The loop broke (or its context went): drop the set's passes so far. */
static void loop_abort(int cupti_ok)
{
	/* Inside a pass (its first launch started the range profiler). */
	if (cupti_ok && L.pos > 0 && L.cs->rp)
		range_stop(L.cs, NULL);
	if (cupti_ok && L.configured)
		measure_drop(L.cs);
	loop_clear();
	if (++L.aborted >= LOOP_MAX_FAILS)
		L.off = 1;
}

/* Loop replay cannot go on in this process (a CUPTI call failed). */
static void loop_give_up(void)
{
	loop_abort(1);
	L.off = 1;
}

static void loop_context_gone(const ctx_state *cs)
{
	if (L.active && L.cs == cs)
		loop_abort(0);
}

/* A fresh range-profiler object for L.set, user replay, a range per
 * launch of the iteration. */
static int loop_configure(void)
{
	ctx_state *cs = L.cs;
	const metric_set *ms = &cs->cfg->sets[L.set];
	double t = now_seconds();
	size_t size;

	if (!hold_counters())
		return -1;
	measure_drop(cs);         /* an object keeps its first configuration */
	if (measure_enable(cs) != 0)
		return -1;
	phase(PH_ENABLE, &t);
	size = counter_data_size(cs, ms, L.period);
	if (!size)
		return -1;
	if (size != L.cdata_size) {
		free(L.cdata);
		L.cdata = ga_xcalloc(1, size);
		L.cdata_size = size;
	}
	if (counter_data_init(cs, L.cdata, L.cdata_size) != 0)
		return -1;
	phase(PH_CDATA, &t);
	if (set_config(cs, ms, L.cdata, L.cdata_size, CUPTI_UserReplay, L.period) != 0)
		return -1;
	phase(PH_CONFIG, &t);
	cs->cur_set = -1;         /* not a configuration measure_begin can use */
	L.configured = 1;
	return 0;
}

/* A launch while iterations are measured: 1 when it is part of the loop
 * (its EXIT ends the pass when G.pending is 3). */
static int loop_take(const repeat_slot *rep, const CUpti_CallbackData *cb, const launch_args *a)
{
	ctx_state *cs = L.cs;

	if (cb->context != cs->ctx || cb->contextUid != cs->uid ||
	    rep - G.repeats != L.keys[L.pos]) {
		loop_abort(1);
		return 0;
	}
	if (L.pos == 0) {
		CUptiResult r;
		double t;
		if (!L.configured && loop_configure() != 0) {
			loop_give_up();
			return 0;
		}
		t = now_seconds();
		if ((r = range_start(cs)) != CUPTI_SUCCESS) {
			cupti_failed(r, "starting the range profiler for a loop iteration");
			loop_give_up();
			return 0;
		}
		phase(PH_START, &t);
	}
	if (L.pass == 0) {
		double t = now_seconds();
		launch_meta(&L.meta[L.pos], cs, a, cb->contextUid, NULL);
		L.meta[L.pos].metric_set = (int)L.set;
		phase(PH_META, &t);
	}
	if (++L.pos == L.period)
		G.pending = 3;
	return 1;
}

/* EXIT of an iteration's last launch: the pass ends; after the set's last,
 * every launch of the first pass gets its values. */
static void loop_exit_launch(void)
{
	ctx_state *cs = L.cs;
	const chip_cfg *c = cs->cfg;
	const metric_set *ms = &c->sets[L.set];
	double t = now_seconds(), *vals = NULL;
	size_t nranges = 0, n;
	ga_error err = {0};

	G.pending = 0;
	{
		CUptiResult r;
		int all = 0;
		if ((r = range_stop(cs, &all)) != CUPTI_SUCCESS) {
			cupti_failed(r, "stopping the range profiler after a loop iteration");
			loop_give_up();
			return;
		}
		L.pos = 0;
		L.pass++;
		L.passes++;
		phase(PH_STOP, &t);
		if (!all)
			return;
	}
	{
		size_t dropped = 0;
		if (range_decode(cs, &dropped) != CUPTI_SUCCESS || dropped ||
		    ga_host_num_ranges(L.cdata, L.cdata_size, &nranges, &err) != 0 ||
		    nranges != L.period) {
			/* Kernels launched outside the callbacks (a CUDA graph's)
			 * would be ranges too. */
			loop_abort(1);
			return;
		}
		phase(PH_DECODE, &t);
	}
	vals = ga_xcalloc(ms->n_names, sizeof(*vals));
	for (size_t r = 0; r < L.period; r++) {
		ga_launch *l = &L.meta[r];
		repeat_slot *rep = &G.repeats[L.keys[r]];
		if (G.max_per_kernel > 0 && rep->profiled >= G.max_per_kernel)
			continue;
		ga_host_evaluate(ms->host, L.cdata, L.cdata_size, r, ms->names, ms->n_names, vals, &err);
		launch_done(l, ms, vals, rep);
		if (L.set < GA_MAX_SETS)
			rep->per_set[L.set]++;
		rep->profiled++;
		rep->below_share = 0;
		G.profiled++;
		L.launches++;
	}
	free(vals);
	phase(PH_RECORD, &t);
	loop_clear();
	measure_drop(cs);
	L.set = loop_best_set(c, &n);
	if (n > 0) {              /* the next set, from the next iteration */
		L.active = 1;
		L.pass = 0;
	}
}

static void on_enter(CUpti_CallbackId cbid, const CUpti_CallbackData *cb)
{
	CUfunction f = NULL;
	unsigned grid[3], block[3], smem = 0;
	CUstream stream = NULL;
	ctx_state *cs;
	ga_launch *l = &G.pending_launch;
	char *name;
	repeat_slot *rep;
	int in_a_row;
	size_t want;

	if (G.total_launches++ == 0)
		G.first_launch_at = real_seconds();
	if ((!G.enabled && !ga_sass_outstanding()) ||
	    launch_params(cbid, cb->functionParams, &f, grid, block, &smem, &stream))
		return;
	const char *mangled = cb->symbolName ? cb->symbolName : "?";
	/* Demangling costs an allocation on every launch: only for a name
	 * filter here, otherwise once the launch is to be profiled. */
	name = G.has_re || G.exact ? demangle(mangled) : NULL;
	if (!name_selected(mangled, name)) {
		free(name);
		return;
	}
	G.matched++;
	if (G.matched <= G.skip) {
		free(name);
		return;
	}
	rep = repeat_count(mangled, grid, block);
	{
		long slot = (long)(rep - G.repeats);
		in_a_row = slot == G.last_slot;
		G.last_slot = slot;
		if (rep->count == 1)
			G.last_new_kernel = G.matched;
	}
	if (!L.off && G.enabled) {
		launch_args a = {f, grid, block, smem, stream, mangled};
		L.ring[L.n++ % LOOP_RING] = (long)(rep - G.repeats);
		if (L.active && loop_take(rep, cb, &a)) {
			free(name);
			return;
		}
		/* A kernel run in a row is no loop worth measuring this way; a
		 * loop with such a pair in it is seen at its next launch. */
		if (!L.active && !in_a_row)
			loop_detect(cb);
	}
	/* The stall run (--stalls): PC sampling of the listed kernels' first
	 * launch, nothing else (sass.c). */
	if (ga_sass_stall_run()) {
		CUdevice dev;
		if (ga_sass_wants(mangled, cb->contextUid) && cuCtxGetDevice(&dev) == CUDA_SUCCESS &&
		    ga_sass_begin(cb->context, dev, cb->contextUid, mangled, grid, block) == 0) {
			G.pending = 2;
			G.pending_ctx = NULL;
		}
		free(name);
		return;
	}
	/* A later launch of a kernel flagged for source lines, once it has had
	 * every metric set: SASS metrics instead of the range profiler
	 * (sass.c, which counts the launch as unprofiled itself). */
	if (ga_sass_wants(mangled, cb->contextUid)) {
		cs = ctx_get(cb->context, cb->contextUid);
		if (cs->ok && (sets_done(rep, cs->cfg) || (rep->profiled > 0 && below_share(rep))) &&
		    ga_sass_begin(cs->ctx, cs->cudev, cs->uid, mangled, grid, block) == 0) {
			rep->count--;
			G.gpu_ns -= mean_ns(rep);
			G.pending = 2;
			G.pending_ctx = cs;
			free(name);
			return;
		}
	}
	if (!G.enabled || !profile_again(rep, NULL)) {
		free(name);
		return;
	}
	if (!hold_counters()) {
		free(name);
		return;
	}
	cs = ctx_get(cb->context, cb->contextUid);
	if (!cs->ok || !profile_again(rep, cs->cfg)) {
		free(name);
		return;
	}
	if (rep->profiled > 0 && below_share(rep)) {
		rep->below_share = 1;
		free(name);
		return;
	}
	/* Its other sets may come from a loop's iterations at no replay. */
	if (rep->profiled > 0 && !in_a_row && !L.off && rep->count < LOOP_DEFER &&
	    G.n_repeats >= LOOP_MIN_KERNELS) {
		free(name);
		return;
	}
	want = choose_set(rep, cs->cfg->n_sets, cs->rp ? cs->cur_set : -1);
	if (!switch_now(rep, want, cs->rp ? cs->cur_set : -1, in_a_row)) {
		free(name);
		return;
	}

	G.ph_t = now_seconds();
	launch_meta(l, cs, &(launch_args){f, grid, block, smem, stream, mangled}, cb->contextUid,
	            name);

	if (cs->rp && cs->cur_set >= 0 && (size_t)cs->cur_set != want) {
		G.set_changes++;
		if (want < GA_MAX_SETS)
			G.owed[want] = 0;
	}
	if (want < GA_MAX_SETS)
		rep->per_set[want]++;
	G.pending_set = want;
	l->metric_set = (int)G.pending_set;
	phase(PH_META, &G.ph_t);
	if (measure_begin(cs, G.pending_set) != 0) {
		launch_free(l);
		return;
	}
	rep->profiled++;
	rep->below_share = 0;   /* grew past the share after all */
	G.pending = 1;
	G.pending_ctx = cs;
	G.pending_slot = (size_t)(rep - G.repeats);
}

static void keep_image(const uint8_t *data, size_t size)
{
	int fd;
	size_t off = 0;

	if (!G.keep_image || G.image_kept)
		return;
	G.image_kept = 1;
	fd = open(G.keep_image, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
	if (fd < 0)
		return;
	while (off < size) {
		ssize_t w = write(fd, data + off, size - off);
		if (w <= 0)
			break;
		off += (size_t)w;
	}
	close(fd);
}

static void on_exit_launch(void)
{
	ctx_state *cs = G.pending_ctx;
	ga_launch *l = &G.pending_launch;
	const metric_set *c = &cs->cfg->sets[G.pending_set];
	uint8_t *cdata = cs->cdata[G.pending_set];
	size_t cdata_size = cs->cdata_size[G.pending_set];
	double *vals = NULL;
	size_t nranges = 0, dropped = 0;
	ga_error err = {0};

	G.pending = 0;
	G.pending_ctx = NULL;
	phase(PH_KERNEL, &G.ph_t);
	CUPTI_TRY(range_stop(cs, NULL), "stopping the range profiler");
	phase(PH_STOP, &G.ph_t);
	CUPTI_TRY(range_decode(cs, &dropped), "decoding the counter data");
	if (dropped)
		write_error("cupti", "%zu range(s) dropped for %s", dropped, l->name);
	phase(PH_DECODE, &G.ph_t);
	if (ga_host_num_ranges(cdata, cdata_size, &nranges, &err) != 0) {
		write_error("cupti", "%s", err.msg);
		goto out;
	}
	if (nranges < 1) {
		write_error("cupti", "no counter data for launch %ld of %s", l->index, l->name);
		goto out;
	}
	keep_image(cdata, cdata_size);
	vals = ga_xcalloc(c->n_names, sizeof(*vals));
	ga_host_evaluate(c->host, cdata, cdata_size, nranges - 1, c->names, c->n_names, vals, &err);
	phase(PH_EVAL, &G.ph_t);
	launch_done(l, c, vals, &G.repeats[G.pending_slot]);
	phase(PH_RECORD, &G.ph_t);
	G.profiled++;
	if (G.count >= 0 && G.profiled >= G.count)
		stop_profiling_everywhere();
out:
	free(vals);
	launch_free(l);
}

static __thread int this_thread_pending;

static void CUPTIAPI callback(void *userdata, CUpti_CallbackDomain domain,
                              CUpti_CallbackId cbid, const void *data)
{
	(void)userdata;
	if (domain == CUPTI_CB_DOMAIN_RESOURCE) {
		const CUpti_ResourceData *rd = data;
		if (cbid == CUPTI_CBID_RESOURCE_MODULE_LOADED) {
			/* Not under G.lock: with lazy loading the driver loads a
			 * module inside cuLaunchKernel, between the ENTER and EXIT
			 * of a launch that holds G.lock (sass.c locks its own). */
			ga_sass_module_loaded(rd->resourceDescriptor);
			return;
		}
		if (cbid == CUPTI_CBID_RESOURCE_CONTEXT_CREATED) {
			pthread_mutex_lock(&G.lock);
			if (G.ctx_created_at == 0)
				G.ctx_created_at = real_seconds();
			ga_sass_context_created(rd->context);
			pthread_mutex_unlock(&G.lock);
			return;
		}
		if (cbid != CUPTI_CBID_RESOURCE_CONTEXT_DESTROY_STARTING)
			return;
		pthread_mutex_lock(&G.lock);
		ga_sass_context_destroyed(rd->context);
		for (ctx_state *cs = G.ctxs; cs; cs = cs->next)
			if (cs->ctx == rd->context && cs->ok)
				ctx_release(cs);
		release_counters();
		pthread_mutex_unlock(&G.lock);
		return;
	}
	if (domain != CUPTI_CB_DOMAIN_DRIVER_API)
		return;
	const CUpti_CallbackData *cb = data;
	if (cb->callbackSite == CUPTI_API_ENTER) {
		pthread_mutex_lock(&G.lock);
		on_enter(cbid, cb);
		/* While a launch is measured this thread keeps the lock until the
		 * launch's EXIT: the range profiler measures one launch at a time,
		 * so launches from other threads wait at their ENTER. */
		if (G.pending)
			this_thread_pending = 1;
		else
			pthread_mutex_unlock(&G.lock);
	} else if (this_thread_pending) {
		this_thread_pending = 0;
		if (G.pending == 2) {
			G.pending = 0;
			ga_sass_end();
			if (!G.enabled && !ga_sass_outstanding())
				stop_profiling_everywhere();
		} else if (G.pending == 3) {
			loop_exit_launch();
		} else {
			on_exit_launch();
		}
		pthread_mutex_unlock(&G.lock);
	}
}

/* Also the wall-clock times of InitializeInjection and of the exit
 * handler, so that bench/phases.sh can split the process's time into
 * before, inside and after the injection library's life. */
static void timing_log(void)
{
	const char *path = getenv("GPUADVISE_TIMING_LOG");
	FILE *f;

	if (!path || !*path || !(f = fopen(path, "a")))
		return;
	fprintf(f, "pid %ld init_at %.3f ctx_created_at %.3f first_launch_at %.3f exit_at %.3f "
	        "profiled %ld set_changes %ld profiler_init %.4f device_supported %.4f "
	        "availability %.4f availability_reads %ld loop_launches %ld loop_passes %ld "
	        "loop_aborted %ld nvperf_preload %d nvperf_load %.4f nvperf_wait %.4f",
	        (long)G.pid, G.init_at, G.ctx_created_at, G.first_launch_at, real_seconds(),
	        G.profiled, G.set_changes, G.init_profiler_s, G.init_supported_s, G.init_avail_s,
	        G.avail_reads, L.launches, L.passes, L.aborted, P.loaded, P.load_s, P.wait_s);
	for (int i = 0; i < PH_N; i++)
		if (G.phase_n[i])
			fprintf(f, " %s %.4f/%ld", phase_names[i], G.phase_s[i], G.phase_n[i]);
	fputc('\n', f);
	fclose(f);
}

static void at_exit(void)
{
	preload_join();
	pthread_mutex_lock(&G.lock);
	/* Launches left unprofiled by the per-kernel bound, so that the report
	 * can still charge their time to the kernel. */
	for (size_t i = 0; i < G.n_repeats; i++) {
		repeat_slot *r = &G.repeats[i];
		if (r->profiled == 0 || r->count <= r->profiled)
			continue;
		ga_unprofiled u = {r->mangled, (int)G.pid, {r->grid[0], r->grid[1], r->grid[2]},
		                   {r->block[0], r->block[1], r->block[2]},
		                   r->count - r->profiled, r->below_share};
		json_t *rec = (json_t *)ga_unprofiled_to_json(&u);
		json_object_set_new(rec, "type", json_string("unprofiled"));
		write_record(rec);
	}
	double setup_s = G.phase_s[PH_INIT] + G.phase_s[PH_PACK], measure_s = 0;
	for (int i = PH_ENABLE; i <= PH_RECORD; i++)
		measure_s += G.phase_s[i];
	write_record(json_pack("{s:s, s:i, s:I, s:I, s:I, s:f, s:f, s:I}", "type", "end",
	                       "pid", (int)G.pid, "launches", (json_int_t)G.total_launches,
	                       "matched", (json_int_t)G.matched,
	                       "profiled", (json_int_t)G.profiled, "setup_seconds", setup_s,
	                       "measure_seconds", measure_s,
	                       "loop_launches", (json_int_t)L.launches));
	if (G.fd >= 0)
		close(G.fd);
	G.fd = -1;
	timing_log();
	pthread_mutex_unlock(&G.lock);
}

static long env_long(const char *name, long dflt)
{
	const char *s = getenv(name);
	char *end;
	long v;
	if (!s || !*s)
		return dflt;
	v = strtol(s, &end, 10);
	return *end ? dflt : v;
}

static void init_filters(void)
{
	const char *k = getenv(GA_ENV_KERNEL);
	if (k && *k) {
		if (strncmp(k, "regex:", 6) == 0) {
			int rc = regcomp(&G.re, k + 6, REG_EXTENDED | REG_NOSUB);
			if (rc == 0) {
				G.has_re = 1;
			} else {
				char buf[256];
				regerror(rc, &G.re, buf, sizeof(buf));
				write_error("usage", "bad kernel regex '%s': %s", k + 6, buf);
				G.enabled = 0;
			}
		} else {
			G.exact = ga_xstrdup(k);
		}
	}
	G.skip = env_long(GA_ENV_LAUNCH_SKIP, 0);
	G.count = env_long(GA_ENV_LAUNCH_COUNT, -1);
	G.max_per_kernel = env_long(GA_ENV_MAX_PER_KERNEL, 0);
	/* Loop replay needs every launch between two of an iteration's to be one
	 * of its ranges: no name filter, no launch count. */
	L.off = G.has_re || G.exact || G.count >= 0 || env_long(GA_ENV_LOOP_REPLAY, 1) == 0;
	{
		const char *s = getenv(GA_ENV_MIN_SHARE);
		char *end;
		double v = s && *s ? strtod(s, &end) : 0;
		G.min_share = s && *s && !*end && v > 0 && v <= 100 ? v / 100 : 0;
	}

	const char *keep = getenv(GA_ENV_KEEP_IMAGE);
	G.keep_image = keep && *keep ? ga_xstrdup(keep) : NULL;
}

static void init_metrics(void)
{
	const char *m = getenv(GA_ENV_METRICS);
	ga_profile_init(&G.prof);
	if (!m || !*m)
		m = "gpu__time_duration.sum";
	char *copy = ga_xstrdup(m), *save = NULL, *bsave = NULL;
	size_t b = 0, nb = 0, cap = 0;
	/* ';' between bundles (packed into metric sets whole), ',' within. */
	for (char *bt = strtok_r(copy, ";", &bsave); bt; bt = strtok_r(NULL, ";", &bsave), b++) {
		for (char *t = strtok_r(bt, ",", &save); t; t = strtok_r(NULL, ",", &save)) {
			size_t before = G.prof.n_metrics;
			if (!*t || ga_profile_add_metric(&G.prof, t) < before)
				continue;
			GA_PUSH(G.bundle, nb, cap, b);
		}
	}
	free(copy);
	if (ga_profile_metric_index(&G.prof, "gpu__time_duration.sum") < 0) {
		ga_profile_add_metric(&G.prof, "gpu__time_duration.sum");
		GA_PUSH(G.bundle, nb, cap, b);
	}
	G.max_passes = env_long(GA_ENV_MAX_PASSES, 0);
}

static const CUpti_CallbackId launch_cbids[] = {
	CUPTI_DRIVER_TRACE_CBID_cuLaunchKernel,
	CUPTI_DRIVER_TRACE_CBID_cuLaunchKernel_ptsz,
	CUPTI_DRIVER_TRACE_CBID_cuLaunchKernelEx,
	CUPTI_DRIVER_TRACE_CBID_cuLaunchKernelEx_ptsz,
	CUPTI_DRIVER_TRACE_CBID_cuLaunchCooperativeKernel,
	CUPTI_DRIVER_TRACE_CBID_cuLaunchCooperativeKernel_ptsz,
};

GA_EXPORT int InitializeInjection(void)
{
	const char *dir;
	char *path = NULL;
	CUptiResult r;

	pthread_mutex_lock(&G.lock);
	if (G.initialized) {
		pthread_mutex_unlock(&G.lock);
		return 1;
	}
	G.initialized = 1;
	G.init_at = real_seconds();
	G.pid = getpid();
	dir = getenv(GA_ENV_RUN_DIR);
	if (!dir || !*dir) {
		fprintf(stderr, "gpuadvise-inject: %s is not set; run the program through gpuadvise\n",
		        GA_ENV_RUN_DIR);
		pthread_mutex_unlock(&G.lock);
		return 1;
	}
	path = ga_xasprintf("%s/%ld.rec", dir, (long)G.pid);
	G.fd = open(path, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0600);
	free(path);
	if (G.fd < 0) {
		fprintf(stderr, "gpuadvise-inject: cannot write records in %s: %s\n", dir,
		        strerror(errno));
		pthread_mutex_unlock(&G.lock);
		return 1;
	}
	path = ga_xasprintf("%s/profiling.lock", dir);
	G.lock_fd = open(path, O_RDWR | O_CREAT | O_CLOEXEC, 0600);
	free(path);
	G.enabled = 1;
	init_metrics();
	init_filters();
	ga_sass_init((int)G.pid, (ga_sass_writer)write_record);
	if (ga_sass_stall_run())
		G.enabled = 0;   /* PC sampling only: no range profiler */
	{
		const char *tv = getenv(GA_ENV_TOOL_VERSION);
		write_record(json_pack("{s:s, s:i, s:i, s:s}", "type", "start", "pid", (int)G.pid,
		                       "ppid", (int)getppid(), "tool_version", tv ? tv : "?"));
	}
	r = cuptiSubscribe(&G.sub, (CUpti_CallbackFunc)callback, NULL);
	if (r != CUPTI_SUCCESS) {
		if (r == CUPTI_ERROR_MULTIPLE_SUBSCRIBERS_NOT_SUPPORTED)
			write_error("another_profiler",
			            "another CUDA profiler or tool (ncu, nsys, cuda-gdb, a framework's "
			            "profiler) is already attached to this process");
		else
			write_error(cupti_code(r), "cuptiSubscribe failed: %s", ga_cupti_result_string(r));
		G.enabled = 0;
		goto out;
	}
	for (size_t i = 0; i < GA_ARRAY_LEN(launch_cbids); i++)
		cuptiEnableCallback(1, G.sub, CUPTI_CB_DOMAIN_DRIVER_API, launch_cbids[i]);
	cuptiEnableCallback(1, G.sub, CUPTI_CB_DOMAIN_RESOURCE, CUPTI_CBID_RESOURCE_CONTEXT_DESTROY_STARTING);
	if (ga_sass_enabled())
		cuptiEnableCallback(1, G.sub, CUPTI_CB_DOMAIN_RESOURCE, CUPTI_CBID_RESOURCE_MODULE_LOADED);
	/* The stall run enables PC sampling there; the others only note the
	 * time (bench/phases.sh). */
	cuptiEnableCallback(1, G.sub, CUPTI_CB_DOMAIN_RESOURCE, CUPTI_CBID_RESOURCE_CONTEXT_CREATED);
	if (G.count == 0)
		stop_profiling_everywhere();
	else if (G.enabled)
		preload_start();
out:
	atexit(at_exit);
	pthread_mutex_unlock(&G.lock);
	return 1;
}
