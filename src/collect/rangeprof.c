/* rangeprof.c: the CUPTI Range Profiler in the injection library.
 *
 * Each selected launch is profiled with the range profiler (auto range,
 * kernel replay): Start at the launch's ENTER, Stop + decode + evaluate at
 * its EXIT (inject.c).  Per chip, the metrics are packed into metric sets
 * (ga_host_pack); per context, the range-profiler object and the
 * counter-data images.  Which set a launch takes is policy.c's decision. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <cupti_target.h>

#include "counterlock.h"
#include "preload.h"
#include "rangeprof.h"
#include "writer.h"

const char *cupti_code(CUptiResult r)
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

/* A failed CUPTI call's record.  CUPTI_ERROR_HARDWARE_BUSY (seen at the
 * first range start, H200): another profiler or monitor holds the
 * device's counters (DCGM's profiling module, ncu, nsys, a separate
 * gpuadvise run; the processes of one run on one GPU take turns,
 * hold_counters), so the process runs on unprofiled rather than trying
 * again at every launch: the callbacks stop profiling when they see
 * st->counters_busy. */
void cupti_failed(ga_inj *st, CUptiResult r, const char *what)
{
	ga_rec_error(cupti_code(r), "%s failed: %s", what, ga_cupti_result_string(r));
	if (r == CUPTI_ERROR_HARDWARE_BUSY)
		st->counters_busy = 1;
}

/* ---- per-chip configuration, per-context setup ------------------------- */

static void set_free(metric_set *m)
{
	ga_host_free(m->host);
	free(m->config);
	free(m->names);
	free(m->slot);
}

/* The metrics every set takes (profile indices, -1: not collected): the
 * duration, which every launch needs, and the graphics engine's active and
 * elapsed cycles, which correct a loop's ranges (ga_launch_range_correct);
 * none costs a pass. */
enum { N_EVERY = 3 };

static int every_set(const long *every, size_t i)
{
	for (size_t k = 0; k < N_EVERY; k++)
		if (every[k] >= 0 && (size_t)every[k] == i)
			return 1;
	return 0;
}

/* Configure set ms from the valid metrics v[0..nv) whose set_of is s, plus
 * those of every[]. */
static int set_build(ga_inj *st, const char *chip, const uint8_t *avail, metric_set *ms,
                     const size_t *v, size_t nv, const size_t *set_of, size_t s,
                     const long *every)
{
	ga_error err = {0};

	ms->names = ga_xcalloc(nv + N_EVERY, sizeof(*ms->names));
	ms->slot = ga_xcalloc(nv + N_EVERY, sizeof(*ms->slot));
	for (size_t i = 0; i < nv; i++) {
		if (set_of[i] != s || every_set(every, v[i]))
			continue;
		ms->slot[ms->n_names] = v[i];
		ms->names[ms->n_names++] = st->prof.metrics[v[i]];
	}
	for (size_t k = 0; k < N_EVERY; k++) {
		if (every[k] < 0)
			continue;
		ms->slot[ms->n_names] = (size_t)every[k];
		ms->names[ms->n_names++] = st->prof.metrics[every[k]];
	}
	ms->host = ga_host_new(chip, avail, &err);
	if (!ms->host || ga_host_config(ms->host, ms->names, ms->n_names, &ms->config,
	                                &ms->config_size, &ms->passes, &err) != 0) {
		ga_rec_error("cupti", "%s", err.msg);
		return -1;
	}
	return 0;
}

static chip_cfg *chip_find(ga_inj *st, const char *chip)
{
	chip_cfg *c = st->chips;
	while (c && strcmp(c->chip, chip) != 0)
		c = c->next;
	return c;
}

/* The chip's metric sets: the valid metrics, packed bundle by bundle into
 * sets of at most st->max_passes replay passes (ga_host_pack). */
static chip_cfg *chip_config(ga_inj *st, const char *chip, const uint8_t *avail,
                             size_t avail_size)
{
	chip_cfg *c;
	ga_error err = {0};
	ga_host *h;
	size_t *v, nv = 0, *set_of, *bundle;
	const char **names;
	long duration = ga_profile_metric_index(&st->prof, "gpu__time_duration.sum");
	long every[N_EVERY] = {duration, ga_profile_metric_index(&st->prof, "gr__cycles_active.max"),
	                       ga_profile_metric_index(&st->prof, "gr__cycles_elapsed.max")};

	if ((c = chip_find(st, chip)))
		return c;
	h = ga_host_new(chip, avail, &err);
	if (!h) {
		ga_rec_error("unsupported", "%s", err.msg);
		return NULL;
	}
	v = ga_xcalloc(st->prof.n_metrics, sizeof(*v));
	names = ga_xcalloc(st->prof.n_metrics, sizeof(*names));
	bundle = ga_xcalloc(st->prof.n_metrics, sizeof(*bundle));
	set_of = ga_xcalloc(st->prof.n_metrics, sizeof(*set_of));
	for (size_t i = 0; i < st->prof.n_metrics; i++) {
		if (ga_host_metric_valid(h, st->prof.metrics[i])) {
			if (!every_set(every, i)) {
				names[nv] = st->prof.metrics[i];
				bundle[nv] = st->bundle[i];
				v[nv++] = i;
			}
		} else if ((long)i == every[1]) {
			every[1] = -1;   /* a chip without it: no correction, no error */
		} else if ((long)i == every[2]) {
			every[2] = -1;
		} else {
			ga_rec_bad_metric(st->prof.metrics[i]);
		}
	}
	ga_host_free(h);
	c = ga_xcalloc(1, sizeof(*c));
	c->chip = ga_xstrdup(chip);
	c->range_marker_cycles = ga_range_marker_cycles(chip);
	c->n_sets = nv ? ga_host_pack(chip, avail, avail_size, names, bundle, nv,
	                             (size_t)st->max_passes, set_of)
	               : 1;
	c->sets = ga_xcalloc(c->n_sets, sizeof(*c->sets));
	int ok = nv > 0 || duration >= 0;
	for (size_t s = 0; ok && s < c->n_sets; s++)
		ok = set_build(st, chip, avail, &c->sets[s], v, nv, set_of, s, every) == 0;
	if (!ok && nv == 0 && duration < 0)
		ga_rec_error("cupti", "no valid metric to collect");
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
	c->next = st->chips;
	st->chips = c;
	return c;
}

int dev_attr(CUdevice d, CUdevice_attribute a)
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
void measure_disable(ctx_state *cs)
{
	if (cs->rp) {
		CUpti_RangeProfiler_Disable_Params p = {CUpti_RangeProfiler_Disable_Params_STRUCT_SIZE};
		p.pRangeProfilerObject = cs->rp;
		cuptiRangeProfilerDisable(&p);
		cs->rp = NULL;
	}
	cs->loop_set = -1;
}

/* ... and its counter-data images with it: an image belongs to the object
 * that sized it (reusing one under a new object crashed the application).
 * measure_begin enables and sizes afresh at the next profiled launch. */
void measure_drop(ctx_state *cs)
{
	measure_disable(cs);
	for (size_t s = 0; cs->cdata && s < cs->cfg->n_sets; s++) {
		free(cs->cdata[s]);
		cs->cdata[s] = NULL;
	}
}

/* Enable the range profiler in the context, once, and size the
 * counter-data image. */
int measure_enable(ga_inj *st, ctx_state *cs)
{
	if (cs->rp)
		return 0;
	{
		CUpti_RangeProfiler_Enable_Params p = {CUpti_RangeProfiler_Enable_Params_STRUCT_SIZE};
		p.ctx = cs->ctx;
		CUPTI_TRY(cuptiRangeProfilerEnable(&p), "enabling the range profiler");
		st->objects++;
		cs->rp = p.pRangeProfilerObject;
		cs->cur_set = -1;
		cs->loop_set = -1;
	}
	return 0;
out:
	return -1;
}

/* The size of a counter-data image for `ranges` ranges of set ms, on the
 * context's object; 0 on failure. */
size_t counter_data_size(ga_inj *st, ctx_state *cs, const metric_set *ms, size_t ranges)
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

int counter_data_init(ga_inj *st, ctx_state *cs, uint8_t *data, size_t size)
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

/* Configure the context's object for set ms: auto range (a range per
 * launch) or user range (range_push/range_pop), `ranges` ranges a pass,
 * into the image data. */
int set_config(ga_inj *st, ctx_state *cs, const metric_set *ms, uint8_t *data, size_t size,
               CUpti_ProfilerReplayMode mode, CUpti_ProfilerRange range, size_t ranges)
{
	CUpti_RangeProfiler_SetConfig_Params p = {CUpti_RangeProfiler_SetConfig_Params_STRUCT_SIZE};
	p.pRangeProfilerObject = cs->rp;
	p.configSize = ms->config_size;
	p.pConfig = ms->config;
	p.counterDataImageSize = size;
	p.pCounterDataImage = data;
	p.range = range;
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
CUptiResult range_start(const ctx_state *cs)
{
	CUpti_RangeProfiler_Start_Params p = {CUpti_RangeProfiler_Start_Params_STRUCT_SIZE};
	p.pRangeProfilerObject = cs->rp;
	return cuptiRangeProfilerStart(&p);
}

/* A user range around one launch; its name is the launch's position in
 * the loop's iteration (the values are read back by range index). */
CUptiResult range_push(const ctx_state *cs, size_t pos)
{
	CUpti_RangeProfiler_PushRange_Params p = {CUpti_RangeProfiler_PushRange_Params_STRUCT_SIZE};
	char name[32];
	snprintf(name, sizeof(name), "%zu", pos);
	p.pRangeProfilerObject = cs->rp;
	p.pRangeName = name;
	return cuptiRangeProfilerPushRange(&p);
}

CUptiResult range_pop(const ctx_state *cs)
{
	CUpti_RangeProfiler_PopRange_Params p = {CUpti_RangeProfiler_PopRange_Params_STRUCT_SIZE};
	p.pRangeProfilerObject = cs->rp;
	return cuptiRangeProfilerPopRange(&p);
}

CUptiResult range_stop(const ctx_state *cs, int *all)
{
	CUpti_RangeProfiler_Stop_Params p = {CUpti_RangeProfiler_Stop_Params_STRUCT_SIZE};
	CUptiResult r;
	p.pRangeProfilerObject = cs->rp;
	r = cuptiRangeProfilerStop(&p);
	if (all)
		*all = p.isAllPassSubmitted;
	return r;
}

CUptiResult range_decode(const ctx_state *cs, size_t *dropped)
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
int measure_begin(ga_inj *st, ctx_state *cs, size_t set)
{
	const metric_set *ms = &cs->cfg->sets[set];

	/* Another metric set: a second SetConfig on the same range-profiler
	 * object keeps measuring the first configuration's counters, with its
	 * pass count (bench/probe/rp_probe.c, H200, CUPTI 13.0, kernel and user
	 * replay alike), so disable and enable it again, with fresh
	 * counter-data images.  The new object's first start costs about
	 * 135 ms. */
	double *t = &st->ph_t;    /* phases of this launch, from on_enter */

	if (cs->rp && cs->cur_set >= 0 && cs->cur_set != (long)set)
		measure_drop(cs);
	/* An object a loop configured for user replay cannot take kernel
	 * replay: SetConfig succeeds and the launch crashes in CUPTI
	 * (bench/probe/rp_probe.c T17, H200). */
	if (cs->rp && cs->loop_set >= 0) {
		st->loop_drops_replay++;
		measure_drop(cs);
	}
	if (measure_enable(st, cs) != 0)
		goto out;
	phase(st, PH_ENABLE, t);
	if (!cs->cdata[set]) {
		size_t size = counter_data_size(st, cs, ms, 1);
		if (!size)
			goto out;
		cs->cdata_size[set] = size;
		cs->cdata[set] = ga_xcalloc(1, size);
	}
	if (counter_data_init(st, cs, cs->cdata[set], cs->cdata_size[set]) != 0)
		goto out;
	phase(st, PH_CDATA, t);
	if (cs->cur_set != (long)set) {
		if (set_config(st, cs, ms, cs->cdata[set], cs->cdata_size[set], CUPTI_KernelReplay,
		               CUPTI_AutoRange, 1) != 0)
			goto out;
		cs->cur_set = (long)set;
		phase(st, PH_CONFIG, t);
	}
	{
		/* A process of this run that held the GPU's counter lock can
		 * still hold the counters a moment after it let the lock go (its
		 * teardown at exit): CUPTI then says HARDWARE_BUSY here.  Three
		 * of four child-process runs on the H200 lost their second
		 * process so.  Try again for up to 2 s before calling the
		 * counters taken by another profiler. */
		CUptiResult r = range_start(cs);
		for (int i = 0; r == CUPTI_ERROR_HARDWARE_BUSY && i < 40; i++) {
			struct timespec ts = {0, 50 * 1000000L};
			nanosleep(&ts, NULL);
			r = range_start(cs);
		}
		CUPTI_TRY(r, "starting the range profiler");
	}
	phase(st, PH_START, t);
	return 0;
out:
	measure_disable(cs);
	return -1;
}

/* The device record: the context's device and its chip's metric sets. */
static void write_device_record(const ctx_state *cs)
{
	ga_rec_set *sets = ga_xcalloc(cs->cfg->n_sets, sizeof(*sets));

	for (size_t s = 0; s < cs->cfg->n_sets; s++) {
		const metric_set *ms = &cs->cfg->sets[s];
		sets[s] = (ga_rec_set){ms->passes, ms->names, ms->n_names};
	}
	ga_rec_device(cs->uid, &cs->dev, sets, cs->cfg->n_sets);
	free(sets);
}

ctx_state *ctx_find(ga_inj *st, CUcontext ctx, uint32_t uid)
{
	ctx_state *cs = st->ctxs;
	while (cs && !(cs->ctx == ctx && cs->uid == uid))
		cs = cs->next;
	return cs;
}

ctx_state *ctx_get(ga_inj *st, CUcontext ctx, uint32_t uid)
{
	ctx_state *cs;
	uint8_t *avail = NULL;
	size_t avail_size = 0;
	const char *chip;
	double t = ga_mono_seconds(), t1;

	if ((cs = ctx_find(st, ctx, uid)))
		return cs;
	cs = ga_xcalloc(1, sizeof(*cs));
	cs->ctx = ctx;
	cs->uid = uid;
	cs->cur_set = -1;
	cs->loop_set = -1;
	cs->lock = -1;
	cs->next = st->ctxs;
	st->ctxs = cs;

	if (!st->profiler_initialized) {
		/* Not in InitializeInjection: during cuInit the profiler is not
		 * ready yet (CUPTI_ERROR_UNKNOWN there, seen on an H200). */
		CUpti_Profiler_Initialize_Params p = {CUpti_Profiler_Initialize_Params_STRUCT_SIZE};
		preload_join();
		CUPTI_TRY(cuptiProfilerInitialize(&p), "cuptiProfilerInitialize");
		st->profiler_initialized = 1;
		st->init_profiler_s = ga_mono_seconds() - t;
	}
	if (cuCtxGetDevice(&cs->cudev) != CUDA_SUCCESS) {
		ga_rec_error("cupti", "cannot find the device of context %u", uid);
		goto out;
	}
	cs->lock = counters_lock_of(st, cs->cudev);
	t1 = ga_mono_seconds();
	{
		CUpti_Profiler_DeviceSupported_Params p = {CUpti_Profiler_DeviceSupported_Params_STRUCT_SIZE};
		p.cuDevice = cs->cudev;
		p.api = CUPTI_PROFILER_RANGE_PROFILING;
		CUPTI_TRY(cuptiProfilerDeviceSupported(&p), "cuptiProfilerDeviceSupported");
		if (p.isSupported != CUPTI_PROFILER_CONFIGURATION_SUPPORTED) {
			ga_rec_error("unsupported", "%s", support_problem(&p));
			goto out;
		}
	}
	st->init_supported_s += ga_mono_seconds() - t1;
	{
		CUpti_Device_GetChipName_Params p = {CUpti_Device_GetChipName_Params_STRUCT_SIZE};
		p.deviceIndex = (size_t)cs->cudev;
		CUPTI_TRY(cuptiDeviceGetChipName(&p), "cuptiDeviceGetChipName");
		chip = p.pChipName;
	}
	t1 = ga_mono_seconds();
	/* The counter availability image lets the host API leave out counters
	 * the device does not offer; CUPTI requires it only for chips newer
	 * than this release (its header: "required for future chip support").
	 * Reading it is 0.12 s of the 0.2 s start-up (bench/phases.sh), so it is
	 * read only for a chip not configured yet that the host API does not
	 * list, or with GA_ENV_COUNTER_AVAILABILITY=1.  The device's own
	 * limits are checked above (cuptiProfilerDeviceSupported: MIG, vGPU,
	 * confidential computing), and counters in use by another profiler make
	 * the first range start fail with CUPTI_ERROR_HARDWARE_BUSY, which is
	 * reported as such (CUPTI_TRY). */
	if (!chip_find(st, chip) &&
	    (ga_env_long(GA_ENV_COUNTER_AVAILABILITY, 0) > 0 || !ga_host_chip_known(chip))) {
		CUpti_Profiler_GetCounterAvailability_Params p =
			{CUpti_Profiler_GetCounterAvailability_Params_STRUCT_SIZE};
		p.ctx = ctx;
		CUPTI_TRY(cuptiProfilerGetCounterAvailability(&p), "reading counter availability");
		avail = ga_xmalloc(p.counterAvailabilityImageSize);
		avail_size = p.counterAvailabilityImageSize;
		p.pCounterAvailabilityImage = avail;
		CUPTI_TRY(cuptiProfilerGetCounterAvailability(&p), "reading counter availability");
		st->avail_reads++;
	}
	st->init_avail_s += ga_mono_seconds() - t1;
	phase(st, PH_INIT, &t);
	cs->cfg = chip_config(st, chip, avail, avail_size);
	phase(st, PH_PACK, &t);
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

void ctx_release(ctx_state *cs)
{
	measure_drop(cs);
	cs->ok = 0;
	free(cs->cdata);
	free(cs->cdata_size);
	cs->cdata = NULL;
	cs->cdata_size = NULL;
}
