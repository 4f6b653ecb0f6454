/* pcsamp.c: stall reasons by PC sampling, in the stall run (--stalls):
 * see sass.c for why a second run, and sass.h for the calls. */
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <cupti_pcsampling.h>

#include "collect.h"
#include "protocol.h"
#include "sassint.h"
#include "writer.h"

#define PCS_TARGET 131072.0             /* samples aimed at per sampled launch */
#define PCS_BUF_PCS 1024                /* PC records per GetData call */
#define PCS_SCRATCH (4UL << 20)         /* CUPTI's buffer of decoded PCs */
#define PCS_HW_BUFFER (128UL << 20)     /* device buffer of raw samples */

/* ---- PC sampling: stall reasons (the stall run) ------------------------- */

/* 2^period cycles between samples: about PCS_TARGET samples (one per SM
 * per period) over the profiled launch's duration. */
static uint32_t pcs_period(const want *w, CUdevice dev)
{
	const char *e = getenv(GA_ENV_PCSAMP_PERIOD);
	int sms = 0, khz = 0;
	uint32_t p = 5;
	if (e && *e) {
		long v = strtol(e, NULL, 10);
		if (v >= 5 && v <= 31)
			return (uint32_t)v;
	}
	cuDeviceGetAttribute(&sms, CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT, dev);
	cuDeviceGetAttribute(&khz, CU_DEVICE_ATTRIBUTE_CLOCK_RATE, dev);
	if (!(w->duration_ns > 0) || sms <= 0 || khz <= 0)
		return PCS_DEFAULT_PERIOD;
	double per = w->duration_ns * 1e-9 * khz * 1e3 * sms / PCS_TARGET;
	while (p < 31 && (double)(1UL << p) < per)
		p++;
	return p;
}

/* The buffers are allocated once, for every reason CUPTI names, and kept
 * for the process: CUPTI holds the configured one until the context's
 * PC sampling is disabled. */
static void pcs_buf_alloc(CUpti_PCSamplingData *b, size_t reasons)
{
	memset(b, 0, sizeof(*b));
	b->size = sizeof(*b);
	b->collectNumPcs = PCS_BUF_PCS;
	b->pPcData = ga_xcalloc(PCS_BUF_PCS, sizeof(*b->pPcData));
	for (size_t i = 0; i < PCS_BUF_PCS; i++) {
		b->pPcData[i].size = sizeof(b->pPcData[i]);
		b->pPcData[i].stallReason = ga_xcalloc(reasons ? reasons : 1,
		                                       sizeof(*b->pPcData[i].stallReason));
	}
}

/* "smsp__pcsamp_warps_issue_stalled_long_scoreboard" -> "long_scoreboard" */
static const char *short_reason(const char *name)
{
	const char *pre = "smsp__pcsamp_warps_issue_stalled_";
	size_t n = strlen(pre);
	return strncmp(name, pre, n) == 0 ? name + n : name;
}

static const char *reason_of(uint32_t index)
{
	for (size_t i = 0; i < sass.n_reasons; i++)
		if (sass.reason_index[i] == index)
			return short_reason(sass.reason_name[i]);
	return NULL;
}

/* Names and indices of the stall reasons (PC sampling enabled in ctx),
 * read once per process; selects all but the "_not_issued" ones, which
 * count a subset of the same samples again. */
static CUptiResult pcs_reasons(CUcontext ctx)
{
	CUptiResult r;
	size_t n = 0;
	if (sass.n_reasons)
		return CUPTI_SUCCESS;
	{
		CUpti_PCSamplingGetNumStallReasonsParams p = {CUpti_PCSamplingGetNumStallReasonsParamsSize};
		p.ctx = ctx;
		p.numStallReasons = &n;
		r = sass_logged(cuptiPCSamplingGetNumStallReasons(&p), "cuptiPCSamplingGetNumStallReasons");
		if (r != CUPTI_SUCCESS)
			return r;
	}
	if (n == 0)
		return CUPTI_ERROR_NOT_SUPPORTED;
	uint32_t *index = ga_xcalloc(n, sizeof(*index));
	char **name = ga_xcalloc(n, sizeof(*name));
	for (size_t i = 0; i < n; i++)
		name[i] = ga_xcalloc(1, CUPTI_STALL_REASON_STRING_SIZE);
	{
		CUpti_PCSamplingGetStallReasonsParams p = {CUpti_PCSamplingGetStallReasonsParamsSize};
		p.ctx = ctx;
		p.numStallReasons = n;
		p.stallReasonIndex = index;
		p.stallReasons = name;
		r = sass_logged(cuptiPCSamplingGetStallReasons(&p), "cuptiPCSamplingGetStallReasons");
	}
	if (r != CUPTI_SUCCESS) {
		for (size_t i = 0; i < n; i++)
			free(name[i]);
		free(name);
		free(index);
		return r;
	}
	sass.n_reasons = n;
	sass.reason_index = index;
	sass.reason_name = name;
	sass.selected = ga_xcalloc(n, sizeof(*sass.selected));
	for (size_t i = 0; i < n; i++) {
		sass.reason_name[i][CUPTI_STALL_REASON_STRING_SIZE - 1] = '\0';
		size_t len = strlen(sass.reason_name[i]);
		/* also not the totals (smsp__pcsamp_sample_count, ..._dropped),
		 * which CUPTI collects anyway */
		int dup = (len >= 11 && strcmp(sass.reason_name[i] + len - 11, "_not_issued") == 0) ||
		          strncmp(sass.reason_name[i], "smsp__pcsamp_warps_issue_stalled_", 33) != 0;
		sass_logf("  stall reason %u: %s%s", sass.reason_index[i], sass.reason_name[i],
		          dup ? " (not collected)" : "");
		if (!dup)
			sass.selected[sass.n_selected++] = sass.reason_index[i];
	}
	pcs_buf_alloc(&sass.cfg_buf, n);
	pcs_buf_alloc(&sass.get_buf, n);
	return sass.n_selected ? CUPTI_SUCCESS : CUPTI_ERROR_NOT_SUPPORTED;
}

static CUptiResult pcs_set(CUcontext ctx, CUpti_PCSamplingConfigurationInfo *a, size_t n)
{
	CUpti_PCSamplingConfigurationInfoParams p = {CUpti_PCSamplingConfigurationInfoParamsSize};
	p.ctx = ctx;
	p.numAttributes = n;
	p.pPCSamplingConfigurationInfo = a;
	CUptiResult r = sass_logged(cuptiPCSamplingSetConfigurationAttribute(&p),
	                            "cuptiPCSamplingSetConfigurationAttribute");
	for (size_t i = 0; i < n; i++)
		if (a[i].attributeStatus != CUPTI_SUCCESS)
			sass_logf("  attribute %d -> %d (%s)", (int)a[i].attributeType,
			          (int)a[i].attributeStatus, ga_cupti_result_string(a[i].attributeStatus));
	return r;
}

static CUptiResult pcs_configure(CUcontext ctx, uint32_t period)
{
	CUpti_PCSamplingConfigurationInfo a[8];
	size_t n = 0;
	memset(a, 0, sizeof(a));
	a[n].attributeType = CUPTI_PC_SAMPLING_CONFIGURATION_ATTR_TYPE_COLLECTION_MODE;
	a[n++].attributeData.collectionModeData.collectionMode =
		CUPTI_PC_SAMPLING_COLLECTION_MODE_KERNEL_SERIALIZED;
	a[n].attributeType = CUPTI_PC_SAMPLING_CONFIGURATION_ATTR_TYPE_SAMPLING_PERIOD;
	a[n++].attributeData.samplingPeriodData.samplingPeriod = period;
	a[n].attributeType = CUPTI_PC_SAMPLING_CONFIGURATION_ATTR_TYPE_STALL_REASON;
	a[n].attributeData.stallReasonData.stallReasonCount = sass.n_selected;
	a[n++].attributeData.stallReasonData.pStallReasonIndex = sass.selected;
	a[n].attributeType = CUPTI_PC_SAMPLING_CONFIGURATION_ATTR_TYPE_SCRATCH_BUFFER_SIZE;
	a[n++].attributeData.scratchBufferSizeData.scratchBufferSize = PCS_SCRATCH;
	a[n].attributeType = CUPTI_PC_SAMPLING_CONFIGURATION_ATTR_TYPE_HARDWARE_BUFFER_SIZE;
	a[n++].attributeData.hardwareBufferSizeData.hardwareBufferSize = PCS_HW_BUFFER;
	a[n].attributeType = CUPTI_PC_SAMPLING_CONFIGURATION_ATTR_TYPE_SAMPLING_DATA_BUFFER;
	a[n++].attributeData.samplingDataBufferData.samplingDataBuffer = &sass.cfg_buf;
	a[n].attributeType = CUPTI_PC_SAMPLING_CONFIGURATION_ATTR_TYPE_ENABLE_START_STOP_CONTROL;
	a[n++].attributeData.enableStartStopControlData.enableStartStopControl = 1;
	a[n].attributeType = CUPTI_PC_SAMPLING_CONFIGURATION_ATTR_TYPE_OUTPUT_DATA_FORMAT;
	a[n++].attributeData.outputDataFormatData.outputDataFormat =
		CUPTI_PC_SAMPLING_OUTPUT_DATA_FORMAT_PARSED;
	return pcs_set(ctx, a, n);
}

static void pcs_disable(CUcontext ctx)
{
	CUpti_PCSamplingDisableParams p = {CUpti_PCSamplingDisableParamsSize};
	p.ctx = ctx;
	sass_logged(cuptiPCSamplingDisable(&p), "cuptiPCSamplingDisable");
}

static pcs_ctx *pcs_find(CUcontext ctx)
{
	for (pcs_ctx *c = sass.pcs_ctxs; c; c = c->next)
		if (c->ctx == ctx)
			return c;
	return NULL;
}

/* Stall run: PC sampling enabled in every new context, before its modules
 * load (samples of a module loaded earlier count as non-user code, with no
 * PC records: bench/probe/pcs_probe.c), configured, not started. */
void ga_sass_context_created(CUcontext ctx)
{
	CUptiResult r;
	if (!sass.stall_run || !ctx || sass.pcs_broken)
		return;
	{
		CUpti_PCSamplingEnableParams p = {CUpti_PCSamplingEnableParamsSize};
		p.ctx = ctx;
		r = sass_logged(cuptiPCSamplingEnable(&p), "cuptiPCSamplingEnable");
		if (r != CUPTI_SUCCESS)
			goto fail;
	}
	if ((r = pcs_reasons(ctx)) != CUPTI_SUCCESS ||
	    (r = pcs_configure(ctx, PCS_DEFAULT_PERIOD)) != CUPTI_SUCCESS) {
		pcs_disable(ctx);
		goto fail;
	}
	pcs_ctx *c = ga_xcalloc(1, sizeof(*c));
	c->ctx = ctx;
	c->period = PCS_DEFAULT_PERIOD;
	c->next = sass.pcs_ctxs;
	sass.pcs_ctxs = c;
	return;
fail:
	sass.pcs_broken = 1;
	sass_note("PC sampling could not be enabled (%s): no stall reasons%s", ga_cupti_result_string(r),
	          r == CUPTI_ERROR_INSUFFICIENT_PRIVILEGES ? " (no permission for GPU counters)" : "");
}

void pcs_context_destroyed(CUcontext ctx)
{
	pcs_ctx **pp = &sass.pcs_ctxs;
	for (; *pp; pp = &(*pp)->next) {
		if ((*pp)->ctx != ctx)
			continue;
		pcs_ctx *c = *pp;
		*pp = c->next;
		pcs_disable(ctx);
		free(c);
		return;
	}
}

int pcs_begin(want *w, CUcontext ctx, CUdevice dev, const unsigned grid[3],
              const unsigned block[3])
{
	pcs_ctx *c = pcs_find(ctx);
	CUptiResult r;

	w->pcs_done = 1;   /* one try, whatever happens */
	if (!c) {
		if (!sass.pcs_broken)
			sass_note("%s runs in a context created before gpuadvise could enable PC sampling "
			          "there: no stall reasons", w->mangled);
		return -1;
	}
	sass.t0 = ga_mono_seconds();
	sass.period = pcs_period(w, dev);
	sass_logf("pc sampling %s: period 2^%u cycles (profiled launch %.0f ns)", w->mangled,
	          sass.period, w->duration_ns);
	if (sass.period != c->period) {
		CUpti_PCSamplingConfigurationInfo a;
		memset(&a, 0, sizeof(a));
		a.attributeType = CUPTI_PC_SAMPLING_CONFIGURATION_ATTR_TYPE_SAMPLING_PERIOD;
		a.attributeData.samplingPeriodData.samplingPeriod = sass.period;
		if (pcs_set(ctx, &a, 1) == CUPTI_SUCCESS)
			c->period = sass.period;
		else
			sass.period = c->period;
	}
	{
		CUpti_PCSamplingStartParams p = {CUpti_PCSamplingStartParamsSize};
		p.ctx = ctx;
		r = sass_logged(cuptiPCSamplingStart(&p), "cuptiPCSamplingStart");
	}
	if (r != CUPTI_SUCCESS) {
		sass_note("PC sampling of %s failed (%s): no stall reasons for its source lines",
		          w->mangled, ga_cupti_result_string(r));
		return -1;
	}
	set_active(w, ACT_PCS, ctx, dev, grid, block);
	return 0;
}

typedef struct {
	ga_source *src;
	const cubin *cb;
	int searched;
	double pcs, other_pcs;
} pcs_acc;

/* Add the PC records of buffer b to the kernel's source record.  The
 * records' function names belong to CUPTI (CUPTI's samples free none of
 * them either). */
static void pcs_take(pcs_acc *acc, const CUpti_PCSamplingData *b, const char *mangled)
{
	ga_source *src = acc->src;
	for (size_t i = 0; i < b->totalNumPcs && i < b->collectNumPcs; i++) {
		const CUpti_PCSamplingPCData *d = &b->pPcData[i];
		if (!d->functionName || strcmp(d->functionName, mangled) != 0) {
			acc->other_pcs++;
			continue;
		}
		acc->pcs++;
		ga_source_pc *pc = NULL;
		for (size_t j = src->n_pcs; j-- > 0;)
			if (src->pcs[j].pc == (uint32_t)d->pcOffset) {
				pc = &src->pcs[j];
				break;
			}
		if (!pc) {
			pc = ga_source_add_pc(src);
			pc->pc = (uint32_t)d->pcOffset;
			if (!acc->searched) {
				acc->searched = 1;
				acc->cb = find_cubin(d->cubinCrc, mangled, pc->pc);
				sass_logf("pc sampling %s: cubin crc %llx -> %s", mangled,
				          (unsigned long long)d->cubinCrc, acc->cb ? "found" : "not found");
			}
			if (acc->cb && correlate(acc->cb, mangled, pc->pc, &pc->file, &pc->line) == 0 &&
			    pc->line > 0)
				src->lineinfo = 1;
		}
		for (size_t k = 0; k < d->stallReasonCount && k < sass.n_selected; k++) {
			const char *why = reason_of(d->stallReason[k].pcSamplingStallReasonIndex);
			if (why && d->stallReason[k].samples)
				ga_source_pc_add_stall(pc, why, (double)d->stallReason[k].samples);
		}
	}
}

void pcs_end(void)
{
	want *w = sass.active;
	CUcontext ctx = sass.ctx;
	ga_source src = {0};
	pcs_acc acc = {&src, NULL, 0, 0, 0};
	CUptiResult r;
	int calls = 0, full = 0;
	double nonuser = 0;

	sass.active = NULL;
	sass.active_kind = ACT_NONE;
	{
		CUresult cr = cuCtxSynchronize();
		sass_logf("cuCtxSynchronize -> %d", (int)cr);
	}
	{
		CUpti_PCSamplingStopParams p = {CUpti_PCSamplingStopParamsSize};
		p.ctx = ctx;
		sass_logged(cuptiPCSamplingStop(&p), "cuptiPCSamplingStop");
	}
	src.mangled = ga_xstrdup(w->mangled);
	src.pid = sass.pid;
	memcpy(src.grid, sass.grid, sizeof(src.grid));
	memcpy(src.block, sass.block, sizeof(src.block));
	src.sample_period = (double)(1UL << sass.period);
	src.trigger = ga_xstrdup(w->trigger);
	/* Everything CUPTI holds, a buffer at a time. */
	for (;;) {
		CUpti_PCSamplingGetDataParams p = {CUpti_PCSamplingGetDataParamsSize};
		p.ctx = ctx;
		p.pcSamplingData = &sass.get_buf;
		sass.get_buf.totalNumPcs = sass.get_buf.remainingNumPcs = 0;
		r = sass_logged(cuptiPCSamplingGetData(&p), "cuptiPCSamplingGetData");
		calls++;
		if (r == CUPTI_ERROR_OUT_OF_MEMORY || sass.get_buf.hardwareBufferFull)
			full = 1;
		if (r != CUPTI_SUCCESS && r != CUPTI_ERROR_OUT_OF_MEMORY)
			break;
		sass_logf("  %zu PCs, %zu remaining, %llu samples, %llu dropped, %llu non-user", sass.get_buf.totalNumPcs,
		          sass.get_buf.remainingNumPcs, (unsigned long long)sass.get_buf.totalSamples,
		          (unsigned long long)sass.get_buf.droppedSamples,
		          (unsigned long long)sass.get_buf.nonUsrKernelsTotalSamples);
		nonuser += (double)sass.get_buf.nonUsrKernelsTotalSamples;
		src.samples_total += (double)sass.get_buf.totalSamples;
		src.samples_dropped += (double)sass.get_buf.droppedSamples;
		pcs_take(&acc, &sass.get_buf, w->mangled);
		if (sass.get_buf.remainingNumPcs == 0 || calls > 100000)
			break;
	}
	sass_logf("pc sampling %s: %.0f PC records (%.0f of other functions), %zu PCs, %.0f samples, "
	          "%.0f dropped, %.1f ms from start to the last record", w->mangled, acc.pcs,
	          acc.other_pcs, src.n_pcs, src.samples_total, src.samples_dropped,
	          1e3 * (ga_mono_seconds() - sass.t0));
	if (full)
		sass_note("PC sampling of %s: the hardware buffer filled up, some samples are missing",
		          w->mangled);
	if (src.n_pcs) {
		ga_rec_source(&src);
	} else {
		sass_note("PC sampling of %s gave no samples of its code (%.0f samples, %.0f of them "
		     "counted by CUPTI as non-user code): no stall reasons", w->mangled,
		          src.samples_total, nonuser);
	}
	ga_source_free(&src);
}
