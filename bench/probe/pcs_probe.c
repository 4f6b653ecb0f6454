/* pcs_probe.c: when does CUPTI PC sampling attribute samples to a kernel's
 * code on this GPU, and can it share a context with the range profiler?
 * A bench probe, not part of gpuadvise: build with bench/probe/build.sh,
 * run on the GPU machine as  pcs_probe CUBIN.
 *
 * The injection library got only "non-user" samples (no PC records) when it
 * enabled PC sampling after the kernel's module had loaded.  The steps:
 *   S1  module A loaded before PC sampling is enabled, module B after; one
 *       sampled launch of each (same cubin, two module handles).
 *   S2  PC sampling disabled; the range profiler enabled, one kernel-replay
 *       launch of B, disabled; PC sampling enabled again; module C loaded
 *       after; sampled launches of B and C.
 *   S3  PC sampling left enabled (stopped); range profiler enable + start.
 * Each sampled launch prints its total, non-user and per-function samples. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <cuda.h>
#include <cupti.h>
#include <cupti_pcsampling.h>
#include <cupti_profiler_target.h>
#include <cupti_range_profiler.h>
#include <cupti_target.h>

#include "collect.h"

#define CK(x) do { CUresult r_ = (x); if (r_) { printf("  %s: CUDA error %d\n", #x, r_); exit(1); } } while (0)
static int cp(CUptiResult r, const char *what)
{
	printf("  %s: %s\n", what, r == CUPTI_SUCCESS ? "ok" : ga_cupti_result_string(r));
	return r == CUPTI_SUCCESS ? 0 : -1;
}

static double now_ms(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1e3 + ts.tv_nsec * 1e-6;
}

static CUcontext ctx;
static CUdeviceptr dx, dy;
static int N = 4 << 20, ITERS = 64;
static uint32_t *sel;
static size_t nsel;
static CUpti_PCSamplingData cfgbuf, getbuf;

static void buf_alloc(CUpti_PCSamplingData *b, size_t reasons)
{
	memset(b, 0, sizeof(*b));
	b->size = sizeof(*b);
	b->collectNumPcs = 512;
	b->pPcData = calloc(512, sizeof(*b->pPcData));
	for (size_t i = 0; i < 512; i++) {
		b->pPcData[i].size = sizeof(b->pPcData[i]);
		b->pPcData[i].stallReason = calloc(reasons, sizeof(*b->pPcData[i].stallReason));
	}
}

static int pcs_enable(void)
{
	CUpti_PCSamplingEnableParams p = {CUpti_PCSamplingEnableParamsSize};
	p.ctx = ctx;
	if (cp(cuptiPCSamplingEnable(&p), "pcs enable"))
		return -1;
	size_t n = 0;
	CUpti_PCSamplingGetNumStallReasonsParams q = {CUpti_PCSamplingGetNumStallReasonsParamsSize};
	q.ctx = ctx;
	q.numStallReasons = &n;
	cp(cuptiPCSamplingGetNumStallReasons(&q), "num reasons");
	uint32_t *idx = calloc(n, sizeof(*idx));
	char **names = calloc(n, sizeof(*names));
	for (size_t i = 0; i < n; i++)
		names[i] = calloc(1, CUPTI_STALL_REASON_STRING_SIZE);
	CUpti_PCSamplingGetStallReasonsParams g = {CUpti_PCSamplingGetStallReasonsParamsSize};
	g.ctx = ctx;
	g.numStallReasons = n;
	g.stallReasonIndex = idx;
	g.stallReasons = names;
	cp(cuptiPCSamplingGetStallReasons(&g), "reasons");
	free(sel);
	sel = calloc(n, sizeof(*sel));
	nsel = 0;
	for (size_t i = 0; i < n; i++)
		if (strstr(names[i], "_not_issued") == NULL &&
		    strncmp(names[i], "smsp__pcsamp_warps_issue_stalled_", 33) == 0)
			sel[nsel++] = idx[i];
	buf_alloc(&cfgbuf, nsel);
	buf_alloc(&getbuf, nsel);
	CUpti_PCSamplingConfigurationInfo a[7];
	memset(a, 0, sizeof a);
	a[0].attributeType = CUPTI_PC_SAMPLING_CONFIGURATION_ATTR_TYPE_COLLECTION_MODE;
	a[0].attributeData.collectionModeData.collectionMode = CUPTI_PC_SAMPLING_COLLECTION_MODE_KERNEL_SERIALIZED;
	a[1].attributeType = CUPTI_PC_SAMPLING_CONFIGURATION_ATTR_TYPE_SAMPLING_PERIOD;
	a[1].attributeData.samplingPeriodData.samplingPeriod = 12;
	a[2].attributeType = CUPTI_PC_SAMPLING_CONFIGURATION_ATTR_TYPE_STALL_REASON;
	a[2].attributeData.stallReasonData.stallReasonCount = nsel;
	a[2].attributeData.stallReasonData.pStallReasonIndex = sel;
	a[3].attributeType = CUPTI_PC_SAMPLING_CONFIGURATION_ATTR_TYPE_SCRATCH_BUFFER_SIZE;
	a[3].attributeData.scratchBufferSizeData.scratchBufferSize = 4 << 20;
	a[4].attributeType = CUPTI_PC_SAMPLING_CONFIGURATION_ATTR_TYPE_SAMPLING_DATA_BUFFER;
	a[4].attributeData.samplingDataBufferData.samplingDataBuffer = &cfgbuf;
	a[5].attributeType = CUPTI_PC_SAMPLING_CONFIGURATION_ATTR_TYPE_ENABLE_START_STOP_CONTROL;
	a[5].attributeData.enableStartStopControlData.enableStartStopControl = 1;
	a[6].attributeType = CUPTI_PC_SAMPLING_CONFIGURATION_ATTR_TYPE_OUTPUT_DATA_FORMAT;
	a[6].attributeData.outputDataFormatData.outputDataFormat = CUPTI_PC_SAMPLING_OUTPUT_DATA_FORMAT_PARSED;
	CUpti_PCSamplingConfigurationInfoParams c = {CUpti_PCSamplingConfigurationInfoParamsSize};
	c.ctx = ctx;
	c.numAttributes = 7;
	c.pPCSamplingConfigurationInfo = a;
	return cp(cuptiPCSamplingSetConfigurationAttribute(&c), "pcs configure");
}

static void pcs_disable(void)
{
	CUpti_PCSamplingDisableParams p = {CUpti_PCSamplingDisableParamsSize};
	p.ctx = ctx;
	cp(cuptiPCSamplingDisable(&p), "pcs disable");
}

static void run(CUfunction f)
{
	void *args[] = {&dy, &dx, &N, &ITERS};
	CK(cuLaunchKernel(f, N / 256, 1, 1, 256, 1, 1, 0, NULL, args, NULL));
	CK(cuCtxSynchronize());
}

static void sampled(CUfunction f, const char *label)
{
	CUpti_PCSamplingStartParams s = {CUpti_PCSamplingStartParamsSize};
	CUpti_PCSamplingStopParams e = {CUpti_PCSamplingStopParamsSize};
	unsigned long long total = 0, nonusr = 0, pcs = 0, user = 0;
	double t = now_ms();
	s.ctx = e.ctx = ctx;
	if (cuptiPCSamplingStart(&s) != CUPTI_SUCCESS) {
		printf("  %s: start failed\n", label);
		return;
	}
	run(f);
	cuptiPCSamplingStop(&e);
	for (int calls = 0; calls < 1000; calls++) {
		CUpti_PCSamplingGetDataParams g = {CUpti_PCSamplingGetDataParamsSize};
		g.ctx = ctx;
		g.pcSamplingData = &getbuf;
		getbuf.totalNumPcs = getbuf.remainingNumPcs = 0;
		CUptiResult r = cuptiPCSamplingGetData(&g);
		if (r != CUPTI_SUCCESS && r != CUPTI_ERROR_OUT_OF_MEMORY) {
			if (calls == 0)
				printf("  getdata: %s\n", ga_cupti_result_string(r));
			break;
		}
		total += getbuf.totalSamples;
		nonusr += getbuf.nonUsrKernelsTotalSamples;
		pcs += getbuf.totalNumPcs;
		for (size_t i = 0; i < getbuf.totalNumPcs && i < getbuf.collectNumPcs; i++)
			for (size_t k = 0; k < getbuf.pPcData[i].stallReasonCount; k++)
				user += getbuf.pPcData[i].stallReason[k].samples;
		if (calls == 0 && getbuf.totalNumPcs)
			printf("    first PC: %s +0x%llx crc %llx\n", getbuf.pPcData[0].functionName,
			       (unsigned long long)getbuf.pPcData[0].pcOffset,
			       (unsigned long long)getbuf.pPcData[0].cubinCrc);
		if (getbuf.remainingNumPcs == 0)
			break;
	}
	printf("  %-28s total %llu, non-user %llu, PC records %llu, samples in records %llu (%.1f ms)\n",
	       label, total, nonusr, pcs, user, now_ms() - t);
}

static CUpti_RangeProfiler_Object *rp_enable(void)
{
	CUpti_RangeProfiler_Enable_Params p = {CUpti_RangeProfiler_Enable_Params_STRUCT_SIZE};
	p.ctx = ctx;
	if (cp(cuptiRangeProfilerEnable(&p), "rp enable"))
		return NULL;
	return p.pRangeProfilerObject;
}

/* One kernel-replay launch of f with a 2-metric set; prints what came back. */
static void rp_once(CUpti_RangeProfiler_Object *rp, CUfunction f, const char *chip,
                    const uint8_t *avail)
{
	static const char *names[] = {"smsp__inst_executed.sum", "gpu__time_duration.sum"};
	ga_error err = {0};
	ga_host *h = ga_host_new(chip, avail, &err);
	uint8_t *cfg = NULL;
	size_t cfg_size = 0, passes = 0;
	if (!h || ga_host_config(h, names, 2, &cfg, &cfg_size, &passes, &err)) {
		printf("  config: %s\n", err.msg);
		return;
	}
	CUpti_RangeProfiler_GetCounterDataSize_Params z = {CUpti_RangeProfiler_GetCounterDataSize_Params_STRUCT_SIZE};
	z.pRangeProfilerObject = rp;
	z.pMetricNames = names;
	z.numMetrics = 2;
	z.maxNumOfRanges = 1;
	z.maxNumRangeTreeNodes = 1;
	if (cp(cuptiRangeProfilerGetCounterDataSize(&z), "rp size"))
		return;
	uint8_t *cd = calloc(1, z.counterDataSize);
	CUpti_RangeProfiler_CounterDataImage_Initialize_Params ci =
		{CUpti_RangeProfiler_CounterDataImage_Initialize_Params_STRUCT_SIZE};
	ci.pRangeProfilerObject = rp;
	ci.counterDataSize = z.counterDataSize;
	ci.pCounterData = cd;
	cp(cuptiRangeProfilerCounterDataImageInitialize(&ci), "rp cdata init");
	CUpti_RangeProfiler_SetConfig_Params sc = {CUpti_RangeProfiler_SetConfig_Params_STRUCT_SIZE};
	sc.pRangeProfilerObject = rp;
	sc.configSize = cfg_size;
	sc.pConfig = cfg;
	sc.counterDataImageSize = z.counterDataSize;
	sc.pCounterDataImage = cd;
	sc.range = CUPTI_AutoRange;
	sc.replayMode = CUPTI_KernelReplay;
	sc.maxRangesPerPass = 1;
	sc.numNestingLevels = 1;
	sc.minNestingLevel = 1;
	sc.targetNestingLevel = 1;
	cp(cuptiRangeProfilerSetConfig(&sc), "rp setconfig");
	CUpti_RangeProfiler_Start_Params st = {CUpti_RangeProfiler_Start_Params_STRUCT_SIZE};
	st.pRangeProfilerObject = rp;
	if (cp(cuptiRangeProfilerStart(&st), "rp start"))
		return;
	run(f);
	CUpti_RangeProfiler_Stop_Params sp = {CUpti_RangeProfiler_Stop_Params_STRUCT_SIZE};
	sp.pRangeProfilerObject = rp;
	cp(cuptiRangeProfilerStop(&sp), "rp stop");
	CUpti_RangeProfiler_DecodeData_Params dd = {CUpti_RangeProfiler_DecodeData_Params_STRUCT_SIZE};
	dd.pRangeProfilerObject = rp;
	cp(cuptiRangeProfilerDecodeData(&dd), "rp decode");
	size_t nr = 0;
	double v[2] = {0, 0};
	if (ga_host_num_ranges(cd, z.counterDataSize, &nr, &err) == 0 && nr > 0)
		ga_host_evaluate(h, cd, z.counterDataSize, nr - 1, names, 2, v, &err);
	printf("  rp: %zu ranges, inst %.0f, duration %.0f ns\n", nr, v[0], v[1]);
}

static void rp_disable(CUpti_RangeProfiler_Object *rp)
{
	CUpti_RangeProfiler_Disable_Params p = {CUpti_RangeProfiler_Disable_Params_STRUCT_SIZE};
	p.pRangeProfilerObject = rp;
	cp(cuptiRangeProfilerDisable(&p), "rp disable");
}

int main(int argc, char **argv)
{
	CUdevice dev;
	CUmodule ma, mb, mc;
	CUfunction fa, fb, fc;
	char chip[64];
	uint8_t *avail;

	if (argc < 2) {
		fprintf(stderr, "usage: pcs_probe CUBIN\n");
		return 2;
	}
	setvbuf(stdout, NULL, _IONBF, 0);
	CK(cuInit(0));
	CK(cuDeviceGet(&dev, 0));
	CK(cuDevicePrimaryCtxRetain(&ctx, dev));
	CK(cuCtxSetCurrent(ctx));
	CK(cuMemAlloc(&dx, (size_t)N * 4));
	CK(cuMemAlloc(&dy, (size_t)N * 4));
	CK(cuMemsetD32(dx, 0x3f800000, N));
	{
		CUpti_Profiler_Initialize_Params p = {CUpti_Profiler_Initialize_Params_STRUCT_SIZE};
		cp(cuptiProfilerInitialize(&p), "profiler init");
		CUpti_Device_GetChipName_Params c = {CUpti_Device_GetChipName_Params_STRUCT_SIZE};
		cp(cuptiDeviceGetChipName(&c), "chip");
		snprintf(chip, sizeof chip, "%s", c.pChipName);
		CUpti_Profiler_GetCounterAvailability_Params a =
			{CUpti_Profiler_GetCounterAvailability_Params_STRUCT_SIZE};
		a.ctx = ctx;
		cuptiProfilerGetCounterAvailability(&a);
		avail = malloc(a.counterAvailabilityImageSize);
		a.pCounterAvailabilityImage = avail;
		cp(cuptiProfilerGetCounterAvailability(&a), "avail");
	}

	printf("S1 module A loaded before PC sampling, B after\n");
	CK(cuModuleLoad(&ma, argv[1]));
	CK(cuModuleGetFunction(&fa, ma, "spin"));
	run(fa);   /* A has run once, as a kernel profiled earlier would have */
	if (pcs_enable())
		return 1;
	CK(cuModuleLoad(&mb, argv[1]));
	CK(cuModuleGetFunction(&fb, mb, "spin"));
	sampled(fa, "A (loaded before enable)");
	sampled(fb, "B (loaded after enable)");
	sampled(fa, "A again");

	printf("S2 PC sampling off, range profiler on B, PC sampling on again\n");
	pcs_disable();
	CUpti_RangeProfiler_Object *rp = rp_enable();
	if (rp) {
		rp_once(rp, fb, chip, avail);
		rp_disable(rp);
	}
	if (pcs_enable() == 0) {
		CK(cuModuleLoad(&mc, argv[1]));
		CK(cuModuleGetFunction(&fc, mc, "spin"));
		sampled(fb, "B after the range profiler");
		sampled(fc, "C (loaded after re-enable)");
	}

	printf("S3 PC sampling enabled (stopped) while the range profiler runs\n");
	rp = rp_enable();
	if (rp) {
		rp_once(rp, fc, chip, avail);
		rp_disable(rp);
	}
	sampled(fc, "C after S3");
	pcs_disable();

	printf("S4 range profiler with PC sampling disabled, then PC sampling on C\n");
	rp = rp_enable();
	if (rp) {
		rp_once(rp, fc, chip, avail);
		rp_disable(rp);
	}
	if (pcs_enable() == 0)
		sampled(fc, "C after S4");
	pcs_disable();

	printf("S5 new context: the injection library's order.  PC sampling enabled\n"
	       "   at context creation, module E loads, PC sampling disabled at the first\n"
	       "   launch; range profiler enabled; module F loads (nothing done); module G\n"
	       "   loads with PC sampling enabled and disabled around it (range profiler\n"
	       "   still enabled); range profiler disabled; PC sampling of E, F, G\n");
	{
		CUcontext c2;
		CUmodule me, mf, mg;
		CUfunction fe, ff, fg;
		CK(cuCtxCreate(&c2, NULL, 0, dev));
		ctx = c2;
		CK(cuMemAlloc(&dx, (size_t)N * 4));
		CK(cuMemAlloc(&dy, (size_t)N * 4));
		CK(cuMemsetD32(dx, 0x3f800000, N));
		pcs_enable();
		CK(cuModuleLoad(&me, argv[1]));
		CK(cuModuleGetFunction(&fe, me, "spin"));
		pcs_disable();
		rp = rp_enable();
		rp_once(rp, fe, chip, avail);
		CK(cuModuleLoad(&mf, argv[1]));
		CK(cuModuleGetFunction(&ff, mf, "spin"));
		rp_once(rp, ff, chip, avail);
		printf("  touch at G's load:\n");
		pcs_enable();
		CK(cuModuleLoad(&mg, argv[1]));
		CK(cuModuleGetFunction(&fg, mg, "spin"));
		pcs_disable();
		rp_once(rp, fg, chip, avail);
		rp_disable(rp);
		pcs_enable();
		sampled(fe, "E (loaded while enabled)");
		sampled(ff, "F (loaded while disabled)");
		sampled(fg, "G (enable/disable around load)");
		pcs_disable();
	}

	/* S6-S8: is it the function's loading onto the device (with lazy
	 * loading, its first launch) that must happen while PC sampling is
	 * enabled?  cuFuncLoad loads it without a launch. */
	{
		static const char *lab[] = {
			"S6 range profiler enabled; PC sampling enabled around cuFuncLoad only",
			"S7 no range profiler; PC sampling enabled around cuFuncLoad only",
			"S8 PC sampling enabled around the module load and cuFuncLoad"};
		for (int v = 0; v < 3; v++) {
			CUcontext c;
			CUmodule m;
			CUfunction f;
			CUfunctionLoadingState st = 0;
			printf("%s\n", lab[v]);
			CK(cuCtxCreate(&c, NULL, 0, dev));
			ctx = c;
			CK(cuMemAlloc(&dx, (size_t)N * 4));
			CK(cuMemAlloc(&dy, (size_t)N * 4));
			CK(cuMemsetD32(dx, 0x3f800000, N));
			rp = v == 0 ? rp_enable() : NULL;
			if (v == 2)
				pcs_enable();
			CK(cuModuleLoad(&m, argv[1]));
			CK(cuModuleGetFunction(&f, m, "spin"));
			cuFuncIsLoaded(&st, f);
			printf("  loaded before cuFuncLoad: %d\n", (int)st);
			double t = now_ms();
			if (v != 2)
				pcs_enable();
			printf("  pcs enable + configure %.1f ms\n", now_ms() - t);
			t = now_ms();
			CK(cuFuncLoad(f));
			printf("  cuFuncLoad %.1f ms\n", now_ms() - t);
			t = now_ms();
			pcs_disable();
			printf("  pcs disable %.1f ms\n", now_ms() - t);
			if (!rp)
				rp = rp_enable();
			rp_once(rp, f, chip, avail);
			rp_once(rp, f, chip, avail);
			rp_disable(rp);
			pcs_enable();
			sampled(f, "the function");
			pcs_disable();
		}
	}
	printf("done\n");
	return 0;
}
