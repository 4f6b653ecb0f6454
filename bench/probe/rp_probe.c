/* rp_probe.c: what the CUPTI range profiler's calls cost on this GPU, and
 * which ways of changing metric sets keep every pass's values.  A bench
 * probe, not part of gpuadvise: build with bench/probe/build.sh, run on the
 * GPU machine as  rp_probe CUBIN [MiB]  (the environment picks the tests:
 * PROBE_LOOP, PROBE_BATCH, PROBE_FIRST, PROBE_OLD, PROBE_COST).  Prints one
 * line per step: the call's milliseconds and, after a decode, how many of
 * the set's metrics came back finite.
 *
 * What it shows on an H200 (driver 580, CUDA 13.0; docs/PERFORMANCE.md):
 * the first range start on a newly enabled object takes 130-150 ms, a later
 * start 0 ms; disable takes 11 ms; a launch under kernel replay 51 ms at 4
 * passes with 2 MiB of device memory, 61 ms with 128 MiB, 91 ms with 2 GiB.
 * A counter-data image holds the metrics of the object's last
 * GetCounterDataSize call, whatever it was sized for (without PROBE_RESIZE
 * only 2 of A's 11 metrics came back, those it shares with Q2, sized last).
 * With PROBE_RESIZE=1 (size and initialise for the set in use before each
 * SetConfig): a second SetConfig on the same object still measures the
 * first configuration's counters with its pass count (B after A: 1 of 6,
 * in A's 4 passes; A after Q1: 4 of 11 in 1 pass), with kernel and user
 * replay alike; so changing sets needs a new object.  User replay: about
 * 3 ms a pass after the first start, a pass per launch.
 * T9 (PROBE_LOOP=1 runs T9 and T10 alone): user replay with
 * auto range and three launches between Start and Stop, as loop replay
 * does: three ranges with every value finite, each launch's own (DRAM
 * bytes 2.05e8, 5.05e7, 5.07e7 for n = N, N/4, N/2), the 4 passes' Stop
 * 1 to 7 ms.  T10: a pass with one launch fewer is not refused; the image
 * decodes to three ranges, one with a metric missing, so the caller must
 * check that every pass ran the same launches.
 * T11 (PROBE_BATCH=1 runs it alone): a launch under kernel
 * replay cost the same with six launches in one Start/Stop (six ranges,
 * all values finite) as with a Start/Stop each: 61 to 63 ms at 4 passes,
 * 15 to 16 ms at 1 pass (a 60 us kernel, 128 MiB allocated); a one-pass
 * set under user replay 16 ms a launch too (start 8, launch 1, stop 7).
 *
 * On the same H200 (docs/PERFORMANCE.md):
 * T12 (PROBE_FIRST=1, with T13): an object's first range start is host CPU
 * work on the calling thread: 148 ms of wall time and 148 ms of that
 * thread's CPU time, no GPU wait.  It is no shorter after 300 ms idle, nor
 * with 200 launches queued (136 ms, and the sync after it 0 ms).  A Start
 * and Stop with no launch between them takes it: the next launch's start
 * is 0 ms.
 * T13, T14 (PROBE_OLD=1; PROBE_ORDER, PROBE_END, PROBE_SHORT, PROBE_COPY,
 * PROBE_USER_AFTER, PROBE_NO_RP vary it): the profiler API the range
 * profiler replaces, deprecated in CUDA 13.0, with a counter-data image
 * for the union of the sets (prefix from nvperf's counter-data builder):
 * BeginSession 62 to 70 ms (CPU as well), UnsetConfig and SetConfig of
 * another set 0.1 ms, every launch's values right (A, B, A, Q1, B, B, A:
 * all finite, FFMA count exact), the one-range image initialised again
 * before each launch in 0.03 ms.  But EndSession crashed (SIGSEGV in
 * libcupti) after a third SetConfig in a session (orders 010, 012, 0101;
 * 00, 01, 011 ended cleanly), and the range profiler crashed when used on
 * the same context after a session; a user-replay session after a session
 * worked (4 passes of a 2-launch "loop": 29, 5, 5, 24 ms).
 * T15 (PROBE_COST=1; PROBE_COST=2 for T15b): what a launch costs under
 * kernel replay depends on its counters, not on its pass count (2 MiB
 * buffers): gpu__time_duration alone 0.2 ms; one SM counter (instructions,
 * warps, a stall ratio, L1 sectors) 3 ms; sm__cycles_elapsed 9 ms; DRAM
 * bytes 11 to 12 ms; L2 sectors 17 ms; both in one pass 22 ms; the four
 * clock rates 18 ms; the default sets on GH100 about 47, 23 and 6 ms (56,
 * 30 and 6 ms with 128 MiB).  Of default set 1, its DRAM, L2 and L1
 * metrics cost 46 ms, its SM metrics 9 ms in the same three passes; without
 * the clock rates and peaks it still costs 46 ms. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <cuda.h>
#include <cupti.h>
#include <cupti_profiler_target.h>
#include <cupti_range_profiler.h>
#include <cupti_target.h>
#include <nvperf_cuda_host.h>
#include <nvperf_host.h>
#include <signal.h>
#include <unistd.h>

#include "collect.h"

/* Milliseconds on a clock: CLOCK_MONOTONIC, or a thread's or the
 * process's CPU time. */
static double clock_ms(clockid_t id)
{
	struct timespec ts;
	clock_gettime(id, &ts);
	return ts.tv_sec * 1e3 + ts.tv_nsec * 1e-6;
}

static double now_ms(void)
{
	return clock_ms(CLOCK_MONOTONIC);
}

#define CK(x) do { CUresult r_ = (x); if (r_) { printf("  %s: CUDA error %d\n", #x, r_); exit(1); } } while (0)
static int cp(CUptiResult r, const char *what)
{
	if (r != CUPTI_SUCCESS)
		printf("  %s: %s\n", what, ga_cupti_result_string(r));
	return r == CUPTI_SUCCESS ? 0 : -1;
}

typedef struct {
	const char *label;
	const char **names;
	size_t n;
	uint8_t *cfg;
	size_t cfg_size, passes;
	ga_host *h;
} mset;

static CUpti_RangeProfiler_Object *rp;
static CUcontext ctx;
static CUfunction fn;
static CUdeviceptr dx, dy;
static int N = 16 << 20;

static void enable(void)
{
	CUpti_RangeProfiler_Enable_Params p = {CUpti_RangeProfiler_Enable_Params_STRUCT_SIZE};
	double t = now_ms();
	p.ctx = ctx;
	cp(cuptiRangeProfilerEnable(&p), "enable");
	rp = p.pRangeProfilerObject;
	printf("  enable %.1f ms (object %p)\n", now_ms() - t, (void *)rp);
}

static void disable(void)
{
	CUpti_RangeProfiler_Disable_Params p = {CUpti_RangeProfiler_Disable_Params_STRUCT_SIZE};
	double t = now_ms();
	p.pRangeProfilerObject = rp;
	cp(cuptiRangeProfilerDisable(&p), "disable");
	printf("  disable %.1f ms\n", now_ms() - t);
}

typedef struct { uint8_t *d; size_t size; int fresh; } cdata;

static cdata cd_new_ranges(mset *m, size_t ranges);
static cdata cd_new(mset *m)
{
	return cd_new_ranges(m, 1);
}

static cdata cd_new_ranges(mset *m, size_t ranges)
{
	cdata c = {0};
	CUpti_RangeProfiler_GetCounterDataSize_Params p = {CUpti_RangeProfiler_GetCounterDataSize_Params_STRUCT_SIZE};
	p.pRangeProfilerObject = rp;
	p.pMetricNames = m->names;
	p.numMetrics = m->n;
	p.maxNumOfRanges = ranges;
	p.maxNumRangeTreeNodes = ranges;
	printf("  sizing %s: %zu metrics, %zu ranges\n", m->label, m->n, ranges);
	cp(cuptiRangeProfilerGetCounterDataSize(&p), "size");
	c.size = p.counterDataSize;
	printf("  sized %zu\n", c.size);
	c.d = calloc(1, c.size);
	return c;
}

static void cd_init(cdata *c)
{
	CUpti_RangeProfiler_CounterDataImage_Initialize_Params p =
		{CUpti_RangeProfiler_CounterDataImage_Initialize_Params_STRUCT_SIZE};
	p.pRangeProfilerObject = rp;
	p.counterDataSize = c->size;
	p.pCounterData = c->d;
	cp(cuptiRangeProfilerCounterDataImageInitialize(&p), "cdata init");
}

static void cd_init(cdata *c);
static size_t ranges_per_pass = 1;
static void setconfig(mset *m, cdata *c, CUpti_ProfilerReplayMode mode, size_t pass)
{
	CUpti_RangeProfiler_SetConfig_Params p = {CUpti_RangeProfiler_SetConfig_Params_STRUCT_SIZE};
	double t;

	if (getenv("PROBE_RESIZE")) {
		/* the object collects the metrics it was last sized for? */
		cdata n = cd_new(m);
		if (n.size == c->size) {
			free(n.d);
		} else {
			printf("  resized %zu -> %zu\n", c->size, n.size);
			*c = n;
		}
	}
	if (pass == 0 && (mode == CUPTI_KernelReplay || getenv("PROBE_RESIZE"))) {
		cd_init(c);   /* SetConfig on an uninitialised image crashes */
		c->fresh = 1; /* the first launch does not initialise it again */
	}
	t = now_ms();
	p.pRangeProfilerObject = rp;
	p.configSize = m->cfg_size;
	p.pConfig = m->cfg;
	p.counterDataImageSize = c->size;
	p.pCounterDataImage = c->d;
	p.range = CUPTI_AutoRange;
	p.replayMode = mode;
	p.maxRangesPerPass = ranges_per_pass;
	p.numNestingLevels = 1;
	p.minNestingLevel = 1;
	p.passIndex = pass;
	p.targetNestingLevel = 1;
	cp(cuptiRangeProfilerSetConfig(&p), "setconfig");
	printf("  setconfig %s (%zu passes) %s pass %zu: %.1f ms\n", m->label, m->passes,
	       mode == CUPTI_KernelReplay ? "kernel" : "user", pass, now_ms() - t);
}

/* One launch inside Start/Stop; returns isAllPassSubmitted. */
static int launch(const char *label)
{
	float a = 1.0001f;
	void *args[] = {&dy, &dx, &a, &N};
	double t0 = now_ms(), t1, t2, t3;
	CUpti_RangeProfiler_Start_Params s = {CUpti_RangeProfiler_Start_Params_STRUCT_SIZE};
	CUpti_RangeProfiler_Stop_Params e = {CUpti_RangeProfiler_Stop_Params_STRUCT_SIZE};
	s.pRangeProfilerObject = rp;
	cp(cuptiRangeProfilerStart(&s), "start");
	t1 = now_ms();
	CK(cuLaunchKernel(fn, N / 256, 1, 1, 256, 1, 1, 0, NULL, args, NULL));
	t2 = now_ms();
	e.pRangeProfilerObject = rp;
	cp(cuptiRangeProfilerStop(&e), "stop");
	t3 = now_ms();
	printf("    %-24s start %6.1f  launch %6.1f  stop %6.1f ms  pass %zu all %d\n", label,
	       t1 - t0, t2 - t1, t3 - t2, e.passIndex, e.isAllPassSubmitted);
	return e.isAllPassSubmitted;
}

static void decode(mset *m, cdata *c, const char *label)
{
	CUpti_RangeProfiler_DecodeData_Params p = {CUpti_RangeProfiler_DecodeData_Params_STRUCT_SIZE};
	ga_error err = {0};
	size_t nr = 0, ok = 0;
	double vals[128], t = now_ms();
	p.pRangeProfilerObject = rp;
	cp(cuptiRangeProfilerDecodeData(&p), "decode");
	double td = now_ms() - t;
	if (ga_host_num_ranges(c->d, c->size, &nr, &err) != 0 || nr < 1) {
		printf("    %-24s decode %.1f ms: %zu ranges %s\n", label, td, nr, err.msg);
		return;
	}
	t = now_ms();
	ga_host_evaluate(m->h, c->d, c->size, nr - 1, m->names, m->n, vals, &err);
	char missing[512] = "";
	for (size_t i = 0; i < m->n; i++) {
		if (isfinite(vals[i]))
			ok++;
		else if (strlen(missing) < 400)
			snprintf(missing + strlen(missing), sizeof missing - strlen(missing), " %.30s", m->names[i]);
	}
	printf("    %-24s decode %.1f ms, eval %.1f ms: %zu ranges, %zu of %zu finite; missing:%s\n",
	       label, td, now_ms() - t, nr, ok, m->n, missing);
}

/* Decode and print every range: how many of the set's values are finite,
 * and the values. */
static void decode_ranges(mset *m, cdata *c)
{
	CUpti_RangeProfiler_DecodeData_Params p = {CUpti_RangeProfiler_DecodeData_Params_STRUCT_SIZE};
	ga_error err = {0};
	size_t nr = 0;
	double vals[64];
	p.pRangeProfilerObject = rp;
	cp(cuptiRangeProfilerDecodeData(&p), "decode");
	ga_host_num_ranges(c->d, c->size, &nr, &err);
	printf("    decoded: %zu ranges, %zu dropped, image %zu bytes\n", nr, p.numOfRangeDropped,
	       c->size);
	for (size_t r = 0; r < nr; r++) {
		size_t fin = 0;
		ga_host_evaluate(m->h, c->d, c->size, r, m->names, m->n, vals, &err);
		for (size_t i = 0; i < m->n; i++)
			fin += isfinite(vals[i]) != 0;
		printf("    range %zu, %zu of %zu finite:", r, fin, m->n);
		for (size_t i = 0; i < m->n; i++)
			printf(" %.4g", vals[i]);
		printf("\n");
	}
}

/* Kernel replay: init cdata (not again right after SetConfig, the order the
 * injection library uses), launch, decode. */
static void kr(mset *m, cdata *c, const char *label)
{
	if (!c->fresh)
		cd_init(c);
	c->fresh = 0;
	launch(label);
	decode(m, c, label);
}

static void mset_make(mset *m, const char *chip, const uint8_t *avail)
{
	ga_error err = {0};
	m->h = ga_host_new(chip, avail, &err);
	if (!m->h || ga_host_config(m->h, m->names, m->n, &m->cfg, &m->cfg_size, &m->passes, &err)) {
		printf("config %s: %s\n", m->label, err.msg);
		exit(1);
	}
}

static const char *A_names[] = {
	"dram__throughput.avg.pct_of_peak_sustained_elapsed",
	"l1tex__data_pipe_lsu_wavefronts.avg.pct_of_peak_sustained_elapsed",
	"lts__t_sectors.avg.pct_of_peak_sustained_elapsed",
	"smsp__inst_executed.sum",
	"sm__warps_active.avg.pct_of_peak_sustained_active",
	"l1tex__t_requests_pipe_lsu_mem_global_op_ld.sum",
	"l1tex__t_sectors_pipe_lsu_mem_global_op_ld.sum",
	"l1tex__t_requests_pipe_lsu_mem_global_op_st.sum",
	"l1tex__data_pipe_lsu_wavefronts_mem_shared_op_ld.sum",
	"dram__bytes.sum",
	"gpu__time_duration.sum",
};
static const char *B_names[] = {
	"smsp__average_warps_issue_stalled_long_scoreboard_per_issue_active.ratio",
	"smsp__average_warps_issue_stalled_wait_per_issue_active.ratio",
	"smsp__average_warps_issue_stalled_barrier_per_issue_active.ratio",
	"smsp__average_warps_issue_stalled_short_scoreboard_per_issue_active.ratio",
	"sm__sass_thread_inst_executed_op_ffma_pred_on.sum",
	"gpu__time_duration.sum",
};
static const char *Q1_names[] = {
	"dram__throughput.avg.pct_of_peak_sustained_elapsed",
	"smsp__inst_executed.sum",
	"gpu__time_duration.sum",
};
static const char *Q2_names[] = {
	"lts__t_sectors.avg.pct_of_peak_sustained_elapsed",
	"smsp__thread_inst_executed.sum",
	"gpu__time_duration.sum",
};
/* T15: what a launch costs under kernel replay, set by set: gpuadvise's
 * three metric sets of `--max-passes 3` on GH100 (copied from `gpuadvise
 * --max-passes 3 --list-metrics --chip GH100`; the current lists may
 * differ) and single counters of each unit. */
static const char *S1_names[] = {
	"dram__throughput.avg.pct_of_peak_sustained_elapsed",
	"l1tex__data_pipe_lsu_wavefronts.avg.pct_of_peak_sustained_elapsed",
	"l1tex__t_sectors.avg.pct_of_peak_sustained_elapsed",
	"lts__t_sectors.avg.pct_of_peak_sustained_elapsed",
	"lts__t_tag_requests.avg.pct_of_peak_sustained_elapsed",
	"sm__inst_executed_pipe_alu.avg.pct_of_peak_sustained_active",
	"sm__inst_executed_pipe_fp64.avg.pct_of_peak_sustained_active",
	"sm__inst_executed_pipe_lsu.avg.pct_of_peak_sustained_active",
	"sm__inst_executed_pipe_xu.avg.pct_of_peak_sustained_active",
	"sm__pipe_fma_cycles_active.avg.pct_of_peak_sustained_active",
	"sm__pipe_tensor_cycles_active.avg.pct_of_peak_sustained_active",
	"smsp__inst_executed.sum",
	"smsp__issue_active.avg.pct_of_peak_sustained_active",
	"smsp__thread_inst_executed_pred_on.sum",
	"sm__warps_active.avg.pct_of_peak_sustained_active",
	"dram__bytes.sum",
	"lts__t_bytes.sum",
	"l1tex__t_bytes.sum",
	"dram__bytes.sum.peak_sustained",
	"dram__cycles_elapsed.avg.per_second",
	"lts__t_bytes.sum.peak_sustained",
	"lts__cycles_elapsed.avg.per_second",
	"l1tex__t_bytes.sum.peak_sustained",
	"l1tex__cycles_elapsed.avg.per_second",
	"sm__sass_thread_inst_executed_op_ffma_pred_on.sum.peak_sustained",
	"sm__sass_thread_inst_executed_op_dfma_pred_on.sum.peak_sustained",
	"sm__sass_thread_inst_executed_op_hfma_pred_on.sum.peak_sustained",
	"sm__cycles_elapsed.avg.per_second",
	"l1tex__t_requests_pipe_lsu_mem_global_op_ld.sum",
	"l1tex__t_requests_pipe_lsu_mem_global_op_st.sum",
	"l1tex__t_sectors_pipe_lsu_mem_global_op_ld.sum",
	"l1tex__t_sectors_pipe_lsu_mem_global_op_st.sum",
	"gpu__time_duration.sum",
};
static const char *S2_names[] = {
	"sm__sass_thread_inst_executed_op_fadd_pred_on.sum",
	"sm__sass_thread_inst_executed_op_fmul_pred_on.sum",
	"sm__sass_thread_inst_executed_op_ffma_pred_on.sum",
	"sm__sass_thread_inst_executed_op_dadd_pred_on.sum",
	"sm__sass_thread_inst_executed_op_dmul_pred_on.sum",
	"sm__sass_thread_inst_executed_op_dfma_pred_on.sum",
	"sm__sass_thread_inst_executed_op_hadd_pred_on.sum",
	"sm__sass_thread_inst_executed_op_hmul_pred_on.sum",
	"sm__sass_thread_inst_executed_op_hfma_pred_on.sum",
	"l1tex__data_pipe_lsu_wavefronts_mem_shared_op_ld.sum",
	"l1tex__data_pipe_lsu_wavefronts_mem_shared_op_st.sum",
	"l1tex__t_sector_hit_rate.pct",
	"smsp__thread_inst_executed.sum",
	"l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_ld.sum",
	"l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_st.sum",
	"smsp__average_warps_issue_stalled_short_scoreboard_per_issue_active.ratio",
	"lts__t_requests_op_red.sum",
	"smsp__inst_executed_op_global_red.sum",
	"smsp__average_warps_issue_stalled_barrier_per_issue_active.ratio",
	"smsp__warps_eligible.avg.per_cycle_active",
	"gpu__time_duration.sum",
};
static const char *S3_names[] = {
	"smsp__average_warps_issue_stalled_wait_per_issue_active.ratio",
	"smsp__average_warps_issue_stalled_long_scoreboard_per_issue_active.ratio",
	"smsp__average_warps_issue_stalled_math_pipe_throttle_per_issue_active.ratio",
	"gpu__time_duration.sum",
};
static const char *one_names[][2] = {
	{"dram__bytes.sum", "gpu__time_duration.sum"},
	{"lts__t_sectors.sum", "gpu__time_duration.sum"},
	{"l1tex__t_sectors.sum", "gpu__time_duration.sum"},
	{"smsp__inst_executed.sum", "gpu__time_duration.sum"},
	{"sm__warps_active.avg.pct_of_peak_sustained_active", "gpu__time_duration.sum"},
	{"smsp__average_warps_issue_stalled_wait_per_issue_active.ratio", "gpu__time_duration.sum"},
	{"sm__cycles_elapsed.avg.per_second", "gpu__time_duration.sum"},
	{"dram__throughput.avg.pct_of_peak_sustained_elapsed", "gpu__time_duration.sum"},
};

/* Each set on a fresh object, kernel replay: the first start, then the
 * launches' cost. */
static void cost_rows(mset *sets, size_t n, const char *chip, int launches)
{
	for (size_t k = 0; k < n; k++) {
		mset *m = &sets[k];
		cdata c;
		mset_make(m, chip, NULL);
		printf("  %s: %zu metrics, %zu passes\n", m->label, m->n, m->passes);
		enable();
		c = cd_new(m);
		setconfig(m, &c, CUPTI_KernelReplay, 0);
		for (int i = 0; i < launches; i++)
			kr(m, &c, i ? "again" : "first");
		disable();
	}
}

static void launch_cost(const char *chip)
{
	mset sets[3 + 8 + 1] = {
		{"default set 1", S1_names, sizeof S1_names / sizeof *S1_names},
		{"default set 2", S2_names, sizeof S2_names / sizeof *S2_names},
		{"default set 3", S3_names, sizeof S3_names / sizeof *S3_names},
	};
	size_t n = 3;
	for (size_t i = 0; i < sizeof one_names / sizeof *one_names; i++, n++) {
		sets[n].label = one_names[i][0];
		sets[n].names = one_names[i];
		sets[n].n = 2;
	}
	sets[n].label = "gpu__time_duration.sum alone";
	sets[n].names = &one_names[0][1];
	sets[n++].n = 1;
	printf("T15 a launch's cost under kernel replay, set by set\n");
	cost_rows(sets, n, chip, 4);
}

/* The metric's unit is one of units (prefixes such as "sm__"). */
static int unit_in(const char *m, const char *const *units)
{
	for (; *units; units++)
		if (ga_str_has_prefix(m, *units))
			return 1;
	return 0;
}

/* Parts of default set 1, by what a metric is: a clock rate (per_second),
 * a constant peak (peak_sustained), and its unit. */
enum { NO_RATE, NO_RATE_PEAK, MEM, SM, RATES, PEAKS };

static int part_has(int part, const char *m)
{
	static const char *const mem[] = {"dram__", "lts__", "l1tex__", NULL};
	static const char *const sm[] = {"sm__", "smsp__", "gpu__", NULL};
	int rate = ga_str_has_suffix(m, "per_second"), peak = ga_str_has_suffix(m, "peak_sustained");
	int dur = strcmp(m, "gpu__time_duration.sum") == 0;
	switch (part) {
	case NO_RATE: return !rate;
	case NO_RATE_PEAK: return !rate && !peak;
	case MEM: return dur || (!rate && !peak && unit_in(m, mem));
	case SM: return !rate && !peak && unit_in(m, sm);
	case RATES: return rate || dur;
	default: return peak || dur;
	}
}

static const char *dram_lts_names[] = {"dram__bytes.sum", "lts__t_sectors.sum",
                                       "gpu__time_duration.sum"};
static const char *cycles_names[] = {"sm__cycles_elapsed.avg", "gpu__time_duration.sum"};

static void launch_cost_split(const char *chip)
{
	static const char *part_names[PEAKS + 1][sizeof S1_names / sizeof *S1_names];
	static const char *const labels[PEAKS + 1] = {
		"set 1 without the 4 clock rates", "set 1 without clock rates and peaks",
		"set 1's dram, lts, l1tex metrics", "set 1's sm, smsp metrics",
		"set 1's 4 clock rates", "set 1's peaks",
	};
	mset sets[PEAKS + 3] = {{0}};
	size_t n = 0;

	for (int part = 0; part <= PEAKS; part++, n++) {
		sets[n].label = labels[part];
		sets[n].names = part_names[part];
		for (size_t i = 0; i < sizeof S1_names / sizeof *S1_names; i++)
			if (part_has(part, S1_names[i]))
				part_names[part][sets[n].n++] = S1_names[i];
	}
	sets[n++] = (mset){"dram__bytes + lts__t_sectors", dram_lts_names, 3};
	sets[n++] = (mset){"sm__cycles_elapsed.avg", cycles_names, 2};
	printf("T15b parts of default set 1\n");
	cost_rows(sets, n, chip, 3);
}

static void nothing(void *u, CUpti_CallbackDomain d, CUpti_CallbackId id, const void *data)
{
	(void)u; (void)d; (void)id; (void)data;
}

static void plain_launches(int n)
{
	float a = 1.0f;
	void *args[] = {&dy, &dx, &a, &N};
	for (int i = 0; i < n; i++)
		CK(cuLaunchKernel(fn, N / 256, 1, 1, 256, 1, 1, 0, NULL, args, NULL));
}

/* A range start timed by the wall clock, this thread's CPU time and the
 * process's (CUPTI's own threads included). */
static void timed_start(const char *label)
{
	CUpti_RangeProfiler_Start_Params s = {CUpti_RangeProfiler_Start_Params_STRUCT_SIZE};
	double w = now_ms(), th = clock_ms(CLOCK_THREAD_CPUTIME_ID), pr = clock_ms(CLOCK_PROCESS_CPUTIME_ID);
	s.pRangeProfilerObject = rp;
	cp(cuptiRangeProfilerStart(&s), "start");
	printf("    %-34s start: wall %6.1f, thread cpu %6.1f, process cpu %6.1f ms\n", label,
	       now_ms() - w, clock_ms(CLOCK_THREAD_CPUTIME_ID) - th,
	       clock_ms(CLOCK_PROCESS_CPUTIME_ID) - pr);
}

static void stop_only(void)
{
	CUpti_RangeProfiler_Stop_Params e = {CUpti_RangeProfiler_Stop_Params_STRUCT_SIZE};
	double t = now_ms();
	e.pRangeProfilerObject = rp;
	cp(cuptiRangeProfilerStop(&e), "stop");
	printf("    stop with no launch %.1f ms\n", now_ms() - t);
}

/* T12: what the object's first start is made of: CPU or
 * waiting; whether it shrinks when the object has waited idle before it;
 * whether a start and stop with no launch in between takes it, leaving the
 * next (measured) launch the later starts' price; whether it waits for the
 * GPU's work queued before it. */
static void first_start(mset *m)
{
	cdata c;
	printf("T12 the first range start of an object\n");
	enable();
	c = cd_new(m);
	setconfig(m, &c, CUPTI_KernelReplay, 0);
	timed_start("fresh object");
	stop_only();
	kr(m, &c, "after an empty start/stop");
	kr(m, &c, "again");
	disable();

	enable();
	c = cd_new(m);
	setconfig(m, &c, CUPTI_KernelReplay, 0);
	usleep(300000);
	timed_start("after 300 ms idle");
	stop_only();
	disable();

	enable();
	c = cd_new(m);
	setconfig(m, &c, CUPTI_KernelReplay, 0);
	{
		double t = now_ms();
		plain_launches(200);
		printf("    200 plain launches queued in %.1f ms\n", now_ms() - t);
		timed_start("with the GPU busy");
		t = now_ms();
		CK(cuCtxSynchronize());
		printf("    then sync %.1f ms\n", now_ms() - t);
	}
	stop_only();
	disable();
}

#define NV(x, what) do { NVPA_Status s_ = (x); if (s_) { printf("  %s: NVPA status %d\n", what, (int)s_); return; } } while (0)

/* The counter-data prefix covering every raw counter of the given configs
 * (nvperf host: raw counters of each pass of each config image, into a
 * counter-data builder). */
static uint8_t *union_prefix(mset **ms, int n, const char *chip, size_t *size)
{
	const char *names[1024];
	size_t nn = 0;
	*size = 0;
	for (int k = 0; k < n; k++) {
		for (size_t pass = 0; pass < ms[k]->passes; pass++) {
			const char *got[512];
			NVPW_Config_GetRawCounters_Params p = {NVPW_Config_GetRawCounters_Params_STRUCT_SIZE};
			p.pConfig = ms[k]->cfg;
			p.configSize = ms[k]->cfg_size;
			p.passIndex = pass;
			p.ppRawCounterNames = got;
			p.numRawCounters = 512;
			NVPA_Status st = NVPW_Config_GetRawCounters(&p);
			if (st) {
				printf("  raw counters of %s pass %zu: NVPA status %d\n", ms[k]->label, pass, (int)st);
				return NULL;
			}
			for (size_t i = 0; i < p.numRawCounters && nn < 1024; i++) {
				size_t j = 0;
				while (j < nn && strcmp(names[j], got[i]) != 0)
					j++;
				if (j == nn)
					names[nn++] = strdup(got[i]);
			}
		}
	}
	printf("  %zu raw counters in the union\n", nn);
	NVPW_CUDA_CounterDataBuilder_Create_Params b = {NVPW_CUDA_CounterDataBuilder_Create_Params_STRUCT_SIZE};
	b.pChipName = chip;
	if (NVPW_CUDA_CounterDataBuilder_Create(&b)) {
		printf("  counter data builder: failed\n");
		return NULL;
	}
	NVPW_RawCounterRequest *req = calloc(nn, sizeof(*req));
	for (size_t i = 0; i < nn; i++) {
		req[i].pRawCounterName = names[i];
		req[i].domain = NVPW_RAW_COUNTER_DOMAIN_INVALID;
		req[i].keepInstances = 1;
	}
	NVPW_CounterDataBuilder_AddRawCounters_Params a = {NVPW_CounterDataBuilder_AddRawCounters_Params_STRUCT_SIZE};
	a.pCounterDataBuilder = b.pCounterDataBuilder;
	a.rawCounterRequestStructSize = NVPW_RAW_COUNTER_REQUEST_STRUCT_SIZE;
	a.numRawCounterRequests = nn;
	a.pRawCounterRequests = req;
	if (NVPW_CounterDataBuilder_AddRawCounters(&a)) {
		printf("  add raw counters: failed\n");
		return NULL;
	}
	NVPW_CounterDataBuilder_GetCounterDataPrefix_Params g =
		{NVPW_CounterDataBuilder_GetCounterDataPrefix_Params_STRUCT_SIZE};
	g.pCounterDataBuilder = b.pCounterDataBuilder;
	if (NVPW_CounterDataBuilder_GetCounterDataPrefix(&g)) {
		printf("  prefix size: failed\n");
		return NULL;
	}
	uint8_t *prefix = malloc(g.bytesCopied);
	g.bytesAllocated = g.bytesCopied;
	g.pBuffer = prefix;
	if (NVPW_CounterDataBuilder_GetCounterDataPrefix(&g)) {
		printf("  prefix: failed\n");
		return NULL;
	}
	*size = g.bytesCopied;
	free(req);
	return prefix;
}

static double t_op;
static const char *volatile in_call = "?";
#define OLD(call, P, label) do { t_op = now_ms(); in_call = label; cp(call(&P), label); in_call = "?"; \
	printf("    %-22s %6.1f ms\n", label, now_ms() - t_op); } while (0)

static void old_launch(mset *m)
{
	CUpti_Profiler_EnableProfiling_Params en = {CUpti_Profiler_EnableProfiling_Params_STRUCT_SIZE};
	CUpti_Profiler_DisableProfiling_Params di = {CUpti_Profiler_DisableProfiling_Params_STRUCT_SIZE};
	float a = 1.0001f;
	void *args[] = {&dy, &dx, &a, &N};
	double t;
	printf("   launch with %s\n", m->label);
	OLD(cuptiProfilerEnableProfiling, en, "enable profiling");
	t = now_ms();
	CK(cuLaunchKernel(fn, N / 256, 1, 1, 256, 1, 1, 0, NULL, args, NULL));
	printf("    %-22s %6.1f ms\n", "launch", now_ms() - t);
	OLD(cuptiProfilerDisableProfiling, di, "disable profiling");
}

static void old_config(mset *m)
{
	CUpti_Profiler_SetConfig_Params sc = {CUpti_Profiler_SetConfig_Params_STRUCT_SIZE};
	sc.pConfig = m->cfg;
	if (getenv("PROBE_COPY")) {   /* a fresh copy of the image each time (never freed) */
		uint8_t *c = aligned_alloc(8, (m->cfg_size + 7) / 8 * 8);
		memcpy(c, m->cfg, m->cfg_size);
		sc.pConfig = c;
	}
	sc.configSize = m->cfg_size;
	sc.minNestingLevel = 1;
	sc.numNestingLevels = 1;
	sc.passIndex = 0;
	sc.targetNestingLevel = 1;
	OLD(cuptiProfilerSetConfig, sc, "set config");
}

static void old_unset(void)
{
	CUpti_Profiler_UnsetConfig_Params u = {CUpti_Profiler_UnsetConfig_Params_STRUCT_SIZE};
	OLD(cuptiProfilerUnsetConfig, u, "unset config");
}

static void old_eval(mset **order, int n, uint8_t *img, size_t size)
{
	ga_error err = {0};
	size_t nr = 0;
	double vals[64];
	if (ga_host_num_ranges(img, size, &nr, &err) != 0)
		printf("    ranges: %s\n", err.msg);
	printf("    %zu ranges in the image\n", nr);
	for (size_t r = 0; r < nr && (int)r < n; r++) {
		mset *m = order[r];
		size_t fin = 0;
		ga_host_evaluate(m->h, img, size, r, m->names, m->n, vals, &err);
		for (size_t i = 0; i < m->n; i++)
			fin += isfinite(vals[i]) != 0;
		printf("    range %zu (%s), %zu of %zu finite:", r, m->label, fin, m->n);
		for (size_t i = 0; i < m->n; i++)
			printf(" %.4g", vals[i]);
		printf("\n");
	}
}

typedef struct {
	CUpti_Profiler_CounterDataImageOptions o;
	uint8_t *img, *scratch;
	size_t isize, ssize;
} old_image;

/* The image (its size known), then its scratch buffer (sized from the
 * initialised image). */
static int old_image_fill(old_image *im)
{
	CUpti_Profiler_CounterDataImage_Initialize_Params ci =
		{CUpti_Profiler_CounterDataImage_Initialize_Params_STRUCT_SIZE};
	ci.sizeofCounterDataImageOptions = CUpti_Profiler_CounterDataImageOptions_STRUCT_SIZE;
	ci.pOptions = &im->o;
	ci.counterDataImageSize = im->isize;
	ci.pCounterDataImage = im->img;
	return cp(cuptiProfilerCounterDataImageInitialize(&ci), "image init");
}

static int old_scratch_fill(old_image *im)
{
	CUpti_Profiler_CounterDataImage_InitializeScratchBuffer_Params si =
		{CUpti_Profiler_CounterDataImage_InitializeScratchBuffer_Params_STRUCT_SIZE};
	si.counterDataImageSize = im->isize;
	si.pCounterDataImage = im->img;
	si.counterDataScratchBufferSize = im->ssize;
	si.pCounterDataScratchBuffer = im->scratch;
	return cp(cuptiProfilerCounterDataImageInitializeScratchBuffer(&si), "scratch init");
}

static int old_image_init(old_image *im)
{
	return old_image_fill(im) != 0 || old_scratch_fill(im) != 0 ? -1 : 0;
}

static int old_image_new(old_image *im, uint8_t *prefix, size_t psize, uint32_t ranges)
{
	memset(im, 0, sizeof(*im));
	im->o.structSize = CUpti_Profiler_CounterDataImageOptions_STRUCT_SIZE;
	im->o.pCounterDataPrefix = prefix;
	im->o.counterDataPrefixSize = psize;
	im->o.maxNumRanges = ranges;
	im->o.maxNumRangeTreeNodes = ranges;
	im->o.maxRangeNameLength = 64;
	CUpti_Profiler_CounterDataImage_CalculateSize_Params cs =
		{CUpti_Profiler_CounterDataImage_CalculateSize_Params_STRUCT_SIZE};
	cs.sizeofCounterDataImageOptions = CUpti_Profiler_CounterDataImageOptions_STRUCT_SIZE;
	cs.pOptions = &im->o;
	if (cp(cuptiProfilerCounterDataImageCalculateSize(&cs), "image size"))
		return -1;
	im->isize = cs.counterDataImageSize;
	im->img = calloc(1, im->isize);
	if (old_image_fill(im) != 0)
		return -1;
	CUpti_Profiler_CounterDataImage_CalculateScratchBufferSize_Params ss =
		{CUpti_Profiler_CounterDataImage_CalculateScratchBufferSize_Params_STRUCT_SIZE};
	ss.counterDataImageSize = im->isize;
	ss.pCounterDataImage = im->img;
	if (cp(cuptiProfilerCounterDataImageCalculateScratchBufferSize(&ss), "scratch size"))
		return -1;
	im->ssize = ss.counterDataScratchBufferSize;
	im->scratch = calloc(1, im->ssize);
	return old_scratch_fill(im);
}

static void old_begin(old_image *im, const char *label, CUpti_ProfilerReplayMode mode,
                      size_t ranges)
{
	CUpti_Profiler_BeginSession_Params bs = {CUpti_Profiler_BeginSession_Params_STRUCT_SIZE};
	bs.ctx = ctx;
	bs.counterDataImageSize = im->isize;
	bs.pCounterDataImage = im->img;
	bs.counterDataScratchBufferSize = im->ssize;
	bs.pCounterDataScratchBuffer = im->scratch;
	bs.range = CUPTI_AutoRange;
	bs.replayMode = mode;
	bs.maxRangesPerPass = ranges;
	bs.maxLaunchesPerPass = ranges;
	double w = now_ms(), th = clock_ms(CLOCK_THREAD_CPUTIME_ID);
	cp(cuptiProfilerBeginSession(&bs), "begin session");
	printf("  %s: begin session wall %.1f ms, thread cpu %.1f ms\n", label, now_ms() - w,
	       clock_ms(CLOCK_THREAD_CPUTIME_ID) - th);
}

static void old_end(void)
{
	CUpti_Profiler_EndSession_Params es = {CUpti_Profiler_EndSession_Params_STRUCT_SIZE};
	es.ctx = ctx;
	OLD(cuptiProfilerEndSession, es, "end session");
}

/* T13: the profiler API that the range profiler replaces
 * (deprecated in CUDA 13.0): one session, one counter-data image for the
 * union of two configurations, and UnsetConfig/SetConfig between launches.
 * What do the session's first pass and a configuration change cost, and do
 * the values of each launch's configuration come back? */
static void old_api(mset *A, mset *B, const char *chip)
{
	mset *both[2] = {A, B};
	old_image im;
	size_t psize;
	uint8_t *prefix;
	printf("T13 the deprecated profiler API: one session, configurations switched\n");
	{
		NVPW_InitializeHost_Params p = {NVPW_InitializeHost_Params_STRUCT_SIZE};
		NV(NVPW_InitializeHost(&p), "nvperf host init");
	}
	double t = now_ms();
	prefix = union_prefix(both, 2, chip, &psize);
	if (!prefix || old_image_new(&im, prefix, psize, 8) != 0)
		return;
	printf("  prefix %zu bytes, image %zu, scratch %zu: %.1f ms\n", psize, im.isize, im.ssize,
	       now_ms() - t);
	old_begin(&im, "one session, an 8-range image", CUPTI_KernelReplay, 8);
	mset *order[5] = {A, A, B, A, B};
	old_config(A);
	old_launch(A);
	old_launch(A);
	old_unset();
	old_config(B);
	old_launch(B);
	old_unset();
	old_config(A);
	old_launch(A);
	old_unset();
	old_config(B);
	old_launch(B);
	CUpti_Profiler_FlushCounterData_Params fl = {CUpti_Profiler_FlushCounterData_Params_STRUCT_SIZE};
	OLD(cuptiProfilerFlushCounterData, fl, "flush");
	printf("    dropped ranges %zu, trace bytes %zu\n", fl.numRangesDropped, fl.numTraceBytesDropped);
	printf("  evaluated inside the session:\n");
	old_eval(order, 5, im.img, im.isize);
	old_unset();
	old_end();   /* crashed here: the fourth SetConfig of the session (T14) */
	printf("  evaluated after the session:\n");
	old_eval(order, 5, im.img, im.isize);
}

/* T14: the deprecated API as the injection library would
 * use it: a one-range image for the union of every set, initialised again
 * before each launch inside one session, the configuration switched at
 * will; each launch evaluated at once.  Then a second profiler session. */
static void old_api_one_range(mset **sets, const char *chip)
{
	old_image im;
	size_t psize;
	uint8_t *prefix;
	printf("T14 the deprecated profiler API, a one-range image per launch\n");
	{
		NVPW_InitializeHost_Params p = {NVPW_InitializeHost_Params_STRUCT_SIZE};
		double t = now_ms();
		NV(NVPW_InitializeHost(&p), "nvperf host init");
		printf("  nvperf host init %.1f ms\n", now_ms() - t);
	}
	double t = now_ms();
	prefix = union_prefix(sets, 3, chip, &psize);
	if (!prefix || old_image_new(&im, prefix, psize, 1) != 0)
		return;
	printf("  prefix %zu bytes, image %zu, scratch %zu: %.1f ms\n", psize, im.isize, im.ssize,
	       now_ms() - t);
	old_begin(&im, "first profiler session", CUPTI_KernelReplay, 1);
	int order[16] = {0, 1, 0, 2, 1, 1, 0};
	const char *end = getenv("PROBE_END") ? getenv("PROBE_END") : "";
	size_t n_launch = getenv("PROBE_SHORT") ? 1 : 7;
	if (getenv("PROBE_ORDER")) {   /* e.g. "0,0,1": set indices, one per launch */
		const char *o = getenv("PROBE_ORDER");
		n_launch = 0;
		for (; *o && n_launch < 16; o++)
			if (*o >= '0' && *o <= '2')
				order[n_launch++] = *o - '0';
	}
	long cur = -1;
	printf("  end mode '%s', %zu launches\n", end, n_launch);
	for (size_t k = 0; k < n_launch; k++) {
		mset *m = sets[order[k]];
		double vals[64];
		ga_error err = {0};
		size_t fin = 0, nr = 0;
		if (cur != order[k]) {
			if (cur >= 0)
				old_unset();
			old_config(m);
			cur = order[k];
		}
		t = now_ms();
		if (k > 0 && old_image_init(&im) != 0)
			return;
		printf("    image init %.2f ms\n", now_ms() - t);
		old_launch(m);
		t = now_ms();
		ga_host_num_ranges(im.img, im.isize, &nr, &err);
		ga_host_evaluate(m->h, im.img, im.isize, 0, m->names, m->n, vals, &err);
		for (size_t i = 0; i < m->n; i++)
			fin += isfinite(vals[i]) != 0;
		printf("    %s: %zu ranges, %zu of %zu finite (eval %.1f ms):", m->label, nr, fin, m->n,
		       now_ms() - t);
		for (size_t i = 0; i < m->n; i++)
			printf(" %.4g", vals[i]);
		printf("\n");
	}
	if (strcmp(end, "none") == 0) {
		old_unset();
		printf("  no end session; leaving\n");
		return;
	}
	if (strcmp(end, "flush") == 0) {
		CUpti_Profiler_FlushCounterData_Params fl = {CUpti_Profiler_FlushCounterData_Params_STRUCT_SIZE};
		OLD(cuptiProfilerFlushCounterData, fl, "flush");
	}
	if (strcmp(end, "nounset") != 0)
		old_unset();
	old_end();
	printf("  ended\n");
	if (getenv("PROBE_USER_AFTER")) {
		/* a user-replay session for a "loop" of two launches, A's passes
		 * one iteration each, as loop replay would need */
		old_image u;
		mset *m = sets[0];
		if (old_image_new(&u, prefix, psize, 2) != 0)
			return;
		old_begin(&u, "user-replay session", CUPTI_UserReplay, 2);
		old_config(m);
		for (int it = 0; it < 8; it++) {
			CUpti_Profiler_BeginPass_Params bp = {CUpti_Profiler_BeginPass_Params_STRUCT_SIZE};
			CUpti_Profiler_EndPass_Params ep = {CUpti_Profiler_EndPass_Params_STRUCT_SIZE};
			CUpti_Profiler_EnableProfiling_Params en = {CUpti_Profiler_EnableProfiling_Params_STRUCT_SIZE};
			CUpti_Profiler_DisableProfiling_Params di = {CUpti_Profiler_DisableProfiling_Params_STRUCT_SIZE};
			float a = 1.0001f;
			int n2 = N / 2;
			void *args[] = {&dy, &dx, &a, &N};
			void *args2[] = {&dy, &dx, &a, &n2};
			double t0 = now_ms();
			in_call = "begin pass";
			cp(cuptiProfilerBeginPass(&bp), "begin pass");
			in_call = "enable";
			cp(cuptiProfilerEnableProfiling(&en), "enable profiling");
			CK(cuLaunchKernel(fn, N / 256, 1, 1, 256, 1, 1, 0, NULL, args, NULL));
			CK(cuLaunchKernel(fn, n2 / 256, 1, 1, 256, 1, 1, 0, NULL, args2, NULL));
			in_call = "disable";
			cp(cuptiProfilerDisableProfiling(&di), "disable profiling");
			in_call = "end pass";
			cp(cuptiProfilerEndPass(&ep), "end pass");
			in_call = "?";
			printf("    iteration %d: %.1f ms, next pass %zu, all submitted %d\n", it,
			       now_ms() - t0, ep.passIndex, ep.allPassesSubmitted);
			if (ep.allPassesSubmitted)
				break;
		}
		CUpti_Profiler_FlushCounterData_Params fl = {CUpti_Profiler_FlushCounterData_Params_STRUCT_SIZE};
		OLD(cuptiProfilerFlushCounterData, fl, "flush");
		{
			double vals[64];
			ga_error err = {0};
			size_t nr = 0;
			ga_host_num_ranges(u.img, u.isize, &nr, &err);
			for (size_t r = 0; r < nr; r++) {
				size_t fin = 0;
				ga_host_evaluate(m->h, u.img, u.isize, r, m->names, m->n, vals, &err);
				for (size_t i = 0; i < m->n; i++)
					fin += isfinite(vals[i]) != 0;
				printf("    user range %zu: %zu of %zu finite, dram bytes %.4g\n", r, fin, m->n,
				       vals[9]);
			}
		}
		old_unset();
		old_end();
		printf("  user session ended\n");
	}
	if (getenv("PROBE_NO_RP"))
		return;
	old_image_init(&im);
	old_begin(&im, "second profiler session", CUPTI_KernelReplay, 1);
	old_config(sets[0]);
	old_launch(sets[0]);
	old_unset();
	old_end();
	/* The range profiler on the same context after the sessions (loop
	 * replay would need it). */
	{
		cdata c;
		enable();
		c = cd_new(sets[2]);
		setconfig(sets[2], &c, CUPTI_UserReplay, 0);
		cd_init(&c);
		launch("range profiler after");
		decode(sets[2], &c, "range profiler after");
		disable();
	}
	/* and a session after the range profiler */
	old_image_init(&im);
	old_begin(&im, "session after the range profiler", CUPTI_KernelReplay, 1);
	old_config(sets[2]);
	old_launch(sets[2]);
	old_unset();
	old_end();
}

static void on_segv(int sig)
{
	(void)sig;
	printf("SEGV in %s\n", in_call);
	_exit(139);
}

/* T16 (PROBE_URANGE=1): a "step" of L launches of which every (L/S)-th is
 * selected.  Plain: the step's wall time with a sync at its end.  Auto:
 * user replay with auto range, every launch a range (what loop replay
 * does).  User: user replay with user ranges, a PushRange/PopRange around
 * each selected launch only; the others run outside any range.  Prints each
 * pass's wall time and, after the decode, each range's instructions and
 * DRAM bytes, which must be those of its own launch (selected launches
 * have n = N/16 * (1 + j % 4), the others n = N: a range that took in a
 * neighbour shows it). */
static int urange_n(int i, int L, int S, int *sel)
{
	int step = L / S;
	*sel = i % step == step / 2;
	return *sel ? N / 16 * (1 + (i / step) % 4) : N;
}

static void urange_step(int L, int S, int ranges, int push)
{
	for (int i = 0; i < L; i++) {
		int sel, n = urange_n(i, L, S, &sel);
		float a = 1.0001f;
		void *args[] = {&dy, &dx, &a, &n};
		if (sel && push) {
			CUpti_RangeProfiler_PushRange_Params pr = {CUpti_RangeProfiler_PushRange_Params_STRUCT_SIZE};
			char name[32];
			snprintf(name, sizeof name, "r%d", i);
			pr.pRangeProfilerObject = rp;
			pr.pRangeName = name;
			cp(cuptiRangeProfilerPushRange(&pr), "push");
		}
		CK(cuLaunchKernel(fn, (n + 255) / 256, 1, 1, 256, 1, 1, 0, NULL, args, NULL));
		if (sel && push) {
			CUpti_RangeProfiler_PopRange_Params po = {CUpti_RangeProfiler_PopRange_Params_STRUCT_SIZE};
			po.pRangeProfilerObject = rp;
			cp(cuptiRangeProfilerPopRange(&po), "pop");
		}
	}
	(void)ranges;
}

/* SetConfig for user replay on the current object: range mode, `ranges`
 * ranges a pass, pass 0, into image c. */
static void setconfig_user(mset *m, cdata *c, CUpti_ProfilerRange range, size_t ranges)
{
	CUpti_RangeProfiler_SetConfig_Params p = {CUpti_RangeProfiler_SetConfig_Params_STRUCT_SIZE};
	p.pRangeProfilerObject = rp;
	p.configSize = m->cfg_size;
	p.pConfig = m->cfg;
	p.counterDataImageSize = c->size;
	p.pCounterDataImage = c->d;
	p.range = range;
	p.replayMode = CUPTI_UserReplay;
	p.maxRangesPerPass = ranges;
	p.numNestingLevels = 1;
	p.minNestingLevel = 1;
	p.passIndex = 0;
	p.targetNestingLevel = 1;
	cp(cuptiRangeProfilerSetConfig(&p), "setconfig");
}

/* Passes of a step (urange_step) until all are submitted or max_passes;
 * each pass's times printed.  Returns isAllPassSubmitted. */
static int user_passes(int L, int S, int push, int max_passes)
{
	int all = 0;
	for (int pass = 0; pass < max_passes && !all; pass++) {
		CUpti_RangeProfiler_Start_Params st = {CUpti_RangeProfiler_Start_Params_STRUCT_SIZE};
		CUpti_RangeProfiler_Stop_Params sp = {CUpti_RangeProfiler_Stop_Params_STRUCT_SIZE};
		double a = now_ms(), b, d;
		st.pRangeProfilerObject = rp;
		cp(cuptiRangeProfilerStart(&st), "start");
		b = now_ms();
		urange_step(L, S, S, push);
		d = now_ms();
		sp.pRangeProfilerObject = rp;
		cp(cuptiRangeProfilerStop(&sp), "stop");
		CK(cuCtxSynchronize());
		all = sp.isAllPassSubmitted;
		printf("    pass %d: start %.1f, launches %.1f, stop+sync %.1f, total %.1f ms; all %d\n",
		       pass, b - a, d - b, now_ms() - d, now_ms() - a, all);
	}
	return all;
}

static void urange_run(mset *m, int L, int S, CUpti_ProfilerRange range)
{
	size_t ranges = range == CUPTI_UserRange ? (size_t)S : (size_t)L;
	cdata c;
	double t0 = now_ms();

	enable();
	c = cd_new_ranges(m, ranges);
	cd_init(&c);
	setconfig_user(m, &c, range, ranges);
	printf("  %s range, %zu ranges a pass, set %s (%zu passes), setup %.1f ms\n",
	       range == CUPTI_UserRange ? "user" : "auto", ranges, m->label, m->passes, now_ms() - t0);
	user_passes(L, S, range == CUPTI_UserRange, 12);
	decode_ranges(m, &c);
	disable();
	free(c.d);
}

static void urange(mset *m)
{
	int L = getenv("PROBE_L") ? atoi(getenv("PROBE_L")) : 200;
	int S = getenv("PROBE_S") ? atoi(getenv("PROBE_S")) : 10;

	for (int r = 0; r < 3; r++) {
		double t = now_ms();
		urange_step(L, S, 0, 0);
		CK(cuCtxSynchronize());
		printf("T16 plain step of %d launches (%d selected): %.2f ms\n", L, S, now_ms() - t);
	}
	printf("T16 expected per selected launch: n = N/16 * (1..4) = %d..%d, DRAM bytes about 12 n\n",
	       N / 16, N / 4);
	printf("T16a user replay, user ranges around the selected launches only\n");
	urange_run(m, L, S, CUPTI_UserRange);
	printf("T16b user replay, auto range (every launch a range, as loop replay does)\n");
	urange_run(m, L, S, CUPTI_AutoRange);
	printf("T16c user ranges again (after a fresh object)\n");
	urange_run(m, L, S, CUPTI_UserRange);
}

/* T17 (PROBE_REUSE=1): can one range-profiler object serve several loops?
 * The injection library creates a fresh object for each loop it measures
 * (170 to 210 ms at its first start).  Here one object, enabled once, is
 * configured again with the same metric set for rounds of user replay with
 * user ranges: a new counter-data image sized for S ranges, SetConfig
 * (passIndex 0), passes until all are submitted, decode.  The rounds use
 * different S (different launches selected, different range counts), and
 * one is abandoned after two passes (a loop's pass broken).  Each round prints
 * the first start's time and every range's values: instructions and DRAM
 * bytes must be those of the round's own selected launches (n = N/16 *
 * (1..4)). */
static void reuse_round_n(mset *m, int L, int S, const char *label, int max_passes);
static void reuse_round(mset *m, int L, int S, const char *label)
{
	reuse_round_n(m, L, S, label, 12);
}

static void reuse_round_n(mset *m, int L, int S, const char *label, int max_passes)
{
	cdata c = cd_new_ranges(m, (size_t)S);
	double t0 = now_ms();

	cd_init(&c);
	setconfig_user(m, &c, CUPTI_UserRange, (size_t)S);
	printf("T17 %s: user ranges, %d of %d launches, setup %.1f ms\n", label, S, L, now_ms() - t0);
	if (user_passes(L, S, 1, max_passes))
		decode_ranges(m, &c);
	else
		printf("    abandoned after %d passes (no decode)\n", max_passes);
	free(c.d);
}

static void reuse(mset *m)
{
	int L = getenv("PROBE_L") ? atoi(getenv("PROBE_L")) : 200;
	double t = now_ms();

	enable();
	printf("T17 enable %.1f ms\n", now_ms() - t);
	reuse_round(m, L, 10, "round 1 (10 ranges)");
	reuse_round_n(m, L, 8, "round 1b (8 ranges, abandoned after 2 passes)", 2);
	reuse_round(m, L, 5, "round 2 (5 ranges, other launches)");
	/* Kernel replay on this object after user replay: SIGSEGV inside
	 * CUPTI (H200, CUPTI 13.0, 2026-11-25), so the injection library
	 * still takes a fresh object for kernel replay. */
	reuse_round(m, L, 20, "round 3 (20 ranges)");
	disable();
}

int main(int argc, char **argv)
{
	CUdevice dev;
	CUmodule mod;
	char chip[64];
	uint8_t *avail;
	mset A = {"A", A_names, sizeof A_names / sizeof *A_names},
	     B = {"B", B_names, sizeof B_names / sizeof *B_names},
	     Q1 = {"Q1", Q1_names, 3}, Q2 = {"Q2", Q2_names, 3};

	if (argc < 2) {
		fprintf(stderr, "usage: rp_probe CUBIN [MiB]\n");
		return 2;
	}
	if (argc > 2)
		N = atoi(argv[2]) << 18;
	setvbuf(stdout, NULL, _IONBF, 0);
	signal(SIGSEGV, on_segv);
	CK(cuInit(0));
	if (getenv("PROBE_EARLY")) {
		/* CUPTI attached before the context and its allocations exist, as
		 * the injection library is (it subscribes inside cuInit). */
		CUpti_SubscriberHandle sub;
		cp(cuptiSubscribe(&sub, (CUpti_CallbackFunc)nothing, NULL), "subscribe");
		CUpti_Profiler_Initialize_Params p = {CUpti_Profiler_Initialize_Params_STRUCT_SIZE};
		cp(cuptiProfilerInitialize(&p), "early profiler init");
		printf("CUPTI attached before the context\n");
	}
	CK(cuDeviceGet(&dev, 0));
	CK(cuDevicePrimaryCtxRetain(&ctx, dev));
	CK(cuCtxSetCurrent(ctx));
	CK(cuModuleLoad(&mod, argv[1]));
	CK(cuModuleGetFunction(&fn, mod, "axpy"));
	CK(cuMemAlloc(&dx, (size_t)N * 4));
	CK(cuMemAlloc(&dy, (size_t)N * 4));
	CK(cuMemsetD32(dx, 0x3f800000, N));
	CK(cuMemsetD32(dy, 0, N));
	{
		CUpti_Profiler_Initialize_Params p = {CUpti_Profiler_Initialize_Params_STRUCT_SIZE};
		cp(cuptiProfilerInitialize(&p), "profiler init");
	}
	{
		CUpti_Device_GetChipName_Params p = {CUpti_Device_GetChipName_Params_STRUCT_SIZE};
		p.deviceIndex = 0;
		cp(cuptiDeviceGetChipName(&p), "chip");
		snprintf(chip, sizeof chip, "%s", p.pChipName);
	}
	{
		CUpti_Profiler_GetCounterAvailability_Params p =
			{CUpti_Profiler_GetCounterAvailability_Params_STRUCT_SIZE};
		p.ctx = ctx;
		cp(cuptiProfilerGetCounterAvailability(&p), "avail");
		avail = malloc(p.counterAvailabilityImageSize);
		p.pCounterAvailabilityImage = avail;
		cp(cuptiProfilerGetCounterAvailability(&p), "avail");
	}
	mset_make(&A, chip, avail);
	mset_make(&B, chip, avail);
	mset_make(&Q1, chip, avail);
	mset_make(&Q2, chip, avail);
	printf("chip %s, %d MiB per buffer; A %zu passes, B %zu, Q1 %zu, Q2 %zu\n", chip,
	       N >> 18, A.passes, B.passes, Q1.passes, Q2.passes);
	{
		float a = 1.0f;
		void *args[] = {&dy, &dx, &a, &N};
		double t = now_ms();
		CK(cuLaunchKernel(fn, N / 256, 1, 1, 256, 1, 1, 0, NULL, args, NULL));
		CK(cuCtxSynchronize());
		printf("plain launch + sync %.2f ms\n", now_ms() - t);
	}

	if (getenv("PROBE_REUSE")) {
		reuse(&A);   /* T17 */
		printf("done\n");
		return 0;
	}
	if (getenv("PROBE_URANGE")) {
		urange(&A);   /* T16 */
		printf("done\n");
		return 0;
	}
	if (getenv("PROBE_LOOP"))
		goto loop;   /* T9 and T10 only */
	if (getenv("PROBE_BATCH"))
		goto batch;  /* T11 only */
	if (getenv("PROBE_COST")) {
		if (getenv("PROBE_COST")[0] == '2')
			launch_cost_split(chip);   /* T15b */
		else
			launch_cost(chip);   /* T15 */
		printf("done\n");
		return 0;
	}
	if (getenv("PROBE_OLD")) {
		mset *sets[3] = {&A, &B, &Q1};
		old_api_one_range(sets, chip);   /* T14 */
		printf("done\n");
		return 0;
	}
	if (getenv("PROBE_FIRST")) {
		first_start(&A);   /* T12 */
		old_api(&A, &B, chip);   /* T13 */
		printf("done\n");
		return 0;
	}
	printf("T1 kernel replay, set A, 4 launches\n");
	enable();
	cdata ca = cd_new(&A), cb = cd_new(&B), cq1 = cd_new(&Q1), cq2 = cd_new(&Q2);
	setconfig(&A, &ca, CUPTI_KernelReplay, 0);
	for (int i = 0; i < 4; i++)
		kr(&A, &ca, "A");

	printf("T2 SetConfig A again, same object\n");
	setconfig(&A, &ca, CUPTI_KernelReplay, 0);
	kr(&A, &ca, "A again");
	kr(&A, &ca, "A again");

	printf("T3 SetConfig B, same object\n");
	setconfig(&B, &cb, CUPTI_KernelReplay, 0);
	kr(&B, &cb, "B");
	kr(&B, &cb, "B");

	printf("T3b SetConfig A again after B, same object\n");
	setconfig(&A, &ca, CUPTI_KernelReplay, 0);
	kr(&A, &ca, "A after B");
	kr(&A, &ca, "A after B");

	printf("T4 disable, enable, SetConfig A\n");
	disable();
	enable();
	ca = cd_new(&A); cb = cd_new(&B); cq1 = cd_new(&Q1); cq2 = cd_new(&Q2);
	setconfig(&A, &ca, CUPTI_KernelReplay, 0);
	kr(&A, &ca, "A after re-enable");
	kr(&A, &ca, "A after re-enable");

	printf("T5 one-pass sets, switched by SetConfig alone\n");
	disable();
	enable();
	ca = cd_new(&A); cb = cd_new(&B); cq1 = cd_new(&Q1); cq2 = cd_new(&Q2);
	setconfig(&Q1, &cq1, CUPTI_KernelReplay, 0);
	kr(&Q1, &cq1, "Q1");
	kr(&Q1, &cq1, "Q1");
	setconfig(&Q2, &cq2, CUPTI_KernelReplay, 0);
	kr(&Q2, &cq2, "Q2");
	kr(&Q2, &cq2, "Q2");
	setconfig(&Q1, &cq1, CUPTI_KernelReplay, 0);
	kr(&Q1, &cq1, "Q1 back");
	setconfig(&A, &ca, CUPTI_KernelReplay, 0);
	kr(&A, &ca, "A after Q");

	printf("T6 user replay of set A across launches (one pass each)\n");
	disable();
	enable();
	ca = cd_new(&A); cb = cd_new(&B);
	cd_init(&ca);
	setconfig(&A, &ca, CUPTI_UserReplay, 0);
	for (int i = 0; i < 6; i++)
		if (launch("A user pass"))
			break;
	decode(&A, &ca, "A user");
	printf("T6b again, same object: SetConfig A user pass 0\n");
	cd_init(&ca);
	setconfig(&A, &ca, CUPTI_UserReplay, 0);
	for (int i = 0; i < 6; i++)
		if (launch("A user pass"))
			break;
	decode(&A, &ca, "A user again");
	printf("T6c then B by user replay, same object\n");
	cd_init(&cb);
	setconfig(&B, &cb, CUPTI_UserReplay, 0);
	for (int i = 0; i < 6; i++)
		if (launch("B user pass"))
			break;
	decode(&B, &cb, "B user");

	printf("T7 user replay: two counter-data images taking turns\n");
	{
		cdata c1 = cd_new(&A), c2 = cd_new(&A);
		int d1 = 0, d2 = 0;
		cd_init(&c1);
		cd_init(&c2);
		for (size_t pass = 0; pass < 6 && !(d1 && d2); pass++) {
			if (!d1) {
				setconfig(&A, &c1, CUPTI_UserReplay, pass);
				d1 = launch("image 1");
				if (d1)
					decode(&A, &c1, "image 1");
			}
			if (!d2) {
				setconfig(&A, &c2, CUPTI_UserReplay, pass);
				d2 = launch("image 2");
				if (d2)
					decode(&A, &c2, "image 2");
			}
		}
	}
	printf("T8 kernel replay after user replay, same object\n");
	cd_init(&ca);
	setconfig(&A, &ca, CUPTI_KernelReplay, 0);
	kr(&A, &ca, "A kernel");
	disable();

loop:
	printf("T9 user replay, auto range, a 'loop step' of 3 launches per pass (sizes N, N/4, N/2)\n");
	ranges_per_pass = 3;
	enable();
	{
		cdata c = cd_new_ranges(&A, 3);
		int sizes[3] = {N, N / 4, N / 2}, all = 0;
		cd_init(&c);
		setconfig(&A, &c, CUPTI_UserReplay, 0);
		for (int pass = 0; pass < 8 && !all; pass++) {
			CUpti_RangeProfiler_Start_Params st = {CUpti_RangeProfiler_Start_Params_STRUCT_SIZE};
			CUpti_RangeProfiler_Stop_Params sp = {CUpti_RangeProfiler_Stop_Params_STRUCT_SIZE};
			double t0 = now_ms(), t1, t2;
			st.pRangeProfilerObject = rp;
			cp(cuptiRangeProfilerStart(&st), "start");
			t1 = now_ms();
			for (int k = 0; k < 3; k++) {
				float a = 1.0001f;
				int n = sizes[k];
				void *args[] = {&dy, &dx, &a, &n};
				CK(cuLaunchKernel(fn, n / 256, 1, 1, 256, 1, 1, 0, NULL, args, NULL));
			}
			t2 = now_ms();
			sp.pRangeProfilerObject = rp;
			cp(cuptiRangeProfilerStop(&sp), "stop");
			all = sp.isAllPassSubmitted;
			printf("    step pass %d: start %.1f launches %.1f stop %.1f ms, passIndex %zu all %d\n",
			       pass, t1 - t0, t2 - t1, now_ms() - t2, sp.passIndex, all);
		}
		decode_ranges(&A, &c);
		printf("T10 same object, a pass with 2 launches instead of 3 (a broken loop)\n");
		cd_init(&c);
		setconfig(&A, &c, CUPTI_UserReplay, 0);
		all = 0;
		for (int pass = 0; pass < 8 && !all; pass++) {
			CUpti_RangeProfiler_Start_Params st = {CUpti_RangeProfiler_Start_Params_STRUCT_SIZE};
			CUpti_RangeProfiler_Stop_Params sp = {CUpti_RangeProfiler_Stop_Params_STRUCT_SIZE};
			st.pRangeProfilerObject = rp;
			cp(cuptiRangeProfilerStart(&st), "start");
			for (int k = 0; k < (pass == 1 ? 2 : 3); k++) {
				float a = 1.0001f;
				int n = sizes[k];
				void *args[] = {&dy, &dx, &a, &n};
				CK(cuLaunchKernel(fn, n / 256, 1, 1, 256, 1, 1, 0, NULL, args, NULL));
			}
			sp.pRangeProfilerObject = rp;
			cp(cuptiRangeProfilerStop(&sp), "stop");
			all = sp.isAllPassSubmitted;
			printf("    pass %d: passIndex %zu all %d\n", pass, sp.passIndex, all);
		}
		decode_ranges(&A, &c);
	}
	disable();
	printf("done\n");
	return 0;

batch:
	/* T11: does a launch under kernel replay cost less when
	 * several launches share one Start/Stop (a range each), and what does a
	 * one-pass set cost under user replay, where nothing is replayed? */
	printf("T11 per-launch cost: one range per Start/Stop against six\n");
	{
		mset *sets[2] = {&A, &Q1};
		for (int k = 0; k < 2; k++) {
			mset *m = sets[k];
			cdata c;
			ranges_per_pass = 1;
			enable();
			c = cd_new(m);
			setconfig(m, &c, CUPTI_KernelReplay, 0);
			printf("  %s kernel replay, a Start/Stop per launch\n", m->label);
			for (int i = 0; i < 6; i++)
				kr(m, &c, "single");
			disable();
			ranges_per_pass = 6;
			enable();
			c = cd_new_ranges(m, 6);
			setconfig(m, &c, CUPTI_KernelReplay, 0);
			printf("  %s kernel replay, six launches in one Start/Stop\n", m->label);
			for (int round = 0; round < 2; round++) {
				CUpti_RangeProfiler_Start_Params st = {CUpti_RangeProfiler_Start_Params_STRUCT_SIZE};
				CUpti_RangeProfiler_Stop_Params sp = {CUpti_RangeProfiler_Stop_Params_STRUCT_SIZE};
				float a = 1.0001f;
				void *args[] = {&dy, &dx, &a, &N};
				double t0 = now_ms(), t1, t2;
				if (round > 0)
					cd_init(&c);
				st.pRangeProfilerObject = rp;
				cp(cuptiRangeProfilerStart(&st), "start");
				t1 = now_ms();
				printf("    round %d start %.1f ms, launches:", round, t1 - t0);
				for (int i = 0; i < 6; i++) {
					t2 = now_ms();
					CK(cuLaunchKernel(fn, N / 256, 1, 1, 256, 1, 1, 0, NULL, args, NULL));
					printf(" %.1f", now_ms() - t2);
				}
				t2 = now_ms();
				sp.pRangeProfilerObject = rp;
				cp(cuptiRangeProfilerStop(&sp), "stop");
				printf("; stop %.1f ms, all %d\n", now_ms() - t2, sp.isAllPassSubmitted);
				decode_ranges(m, &c);
			}
			disable();
		}
		/* A one-pass set needs no replay: user replay, a Start/Stop per
		 * launch, the image decoded and initialised again each time. */
		ranges_per_pass = 1;
		enable();
		cdata c = cd_new(&Q1);
		cd_init(&c);
		setconfig(&Q1, &c, CUPTI_UserReplay, 0);
		printf("  Q1 user replay, a Start/Stop per launch\n");
		for (int i = 0; i < 6; i++) {
			if (i > 0)
				cd_init(&c);
			launch("user single");
			decode(&Q1, &c, "user single");
		}
		disable();
	}
	printf("done\n");
	return 0;
}
