/* rp_probe.c: what the CUPTI range profiler's calls cost on this GPU, and
 * which ways of changing metric sets keep every pass's values.  A bench
 * probe, not part of gpuadvise: build with bench/probe/build.sh, run on the
 * GPU machine as  rp_probe CUBIN [MiB].  Prints one line per step: the
 * call's milliseconds and, after a decode, how many of the set's metrics came
 * back finite.
 *
 * What it showed on an H200 (2026-11-21; docs/PERFORMANCE.md): the first
 * range start on a newly enabled object takes 130-150 ms, a later start 0 ms;
 * disable takes 11 ms; a launch under kernel replay 51 ms at 4 passes with
 * 2 MiB of device memory, 61 ms with 128 MiB, 91 ms with 2 GiB.
 * A counter-data image holds the metrics of the object's last
 * GetCounterDataSize call, whatever it was sized for (without PROBE_RESIZE
 * only 2 of A's 11 metrics came back, those it shares with Q2, sized last).
 * With PROBE_RESIZE=1 (size and initialise for the set in use before each
 * SetConfig): a second SetConfig on the same object still measures the
 * first configuration's counters with its pass count (B after A: 1 of 6,
 * in A's 4 passes; A after Q1: 4 of 11 in 1 pass), with kernel and user
 * replay alike; so changing sets needs a new object.  User replay: about
 * 3 ms a pass after the first start, a pass per launch.
 * T9 (PROBE_LOOP=1 runs T9 and T10 alone; fifth session): user replay with
 * auto range and three launches between Start and Stop, as loop replay
 * does: three ranges with every value finite, each launch's own (DRAM
 * bytes 2.05e8, 5.05e7, 5.07e7 for n = N, N/4, N/2), the 4 passes' Stop
 * 1 to 7 ms.  T10: a pass with one launch fewer is not refused; the image
 * decodes to three ranges, one with a metric missing, so the caller must
 * check that every pass ran the same launches.
 * T11 (PROBE_BATCH=1 runs it alone; sixth session): a launch under kernel
 * replay cost the same with six launches in one Start/Stop (six ranges,
 * all values finite) as with a Start/Stop each: 61 to 63 ms at 4 passes,
 * 15 to 16 ms at 1 pass (a 60 us kernel, 128 MiB allocated); a one-pass
 * set under user replay 16 ms a launch too (start 8, launch 1, stop 7). */
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

#include "collect.h"

static double now_ms(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1e3 + ts.tv_nsec * 1e-6;
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

static void nothing(void *u, CUpti_CallbackDomain d, CUpti_CallbackId id, const void *data)
{
	(void)u; (void)d; (void)id; (void)data;
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

	if (getenv("PROBE_LOOP"))
		goto loop;   /* T9 and T10 only */
	if (getenv("PROBE_BATCH"))
		goto batch;  /* T11 only */
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
	/* T11 (sixth session): does a launch under kernel replay cost less when
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
