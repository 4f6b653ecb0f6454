/* sass.c: source-level data for flagged kernels (see sass.h).
 *
 * Which kernels.  "auto" (the default) measures a kernel when one of its
 * range-profiled launches crossed one of these thresholds, computed from
 * metrics the default set already collects (a metric that is missing from
 * the launch, NAN, tests nothing):
 *   global load or store sectors per request > 4
 *     (l1tex__t_sectors_pipe_lsu_mem_global_op_{ld,st}.sum /
 *      l1tex__t_requests_pipe_lsu_mem_global_op_{ld,st}.sum; a warp's
 *      coalesced 4-byte access needs 4)
 *   active threads per warp instruction < 24
 *     (smsp__thread_inst_executed.sum / smsp__inst_executed.sum)
 *   shared bank conflicts > 25 % of shared wavefronts
 *     (l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_{ld,st}.sum /
 *      l1tex__data_pipe_lsu_wavefronts_mem_shared_op_{ld,st}.sum)
 * "force" (--source) measures every profiled kernel, "off" none and keeps
 * no cubins.
 *
 * How.  The kernel's next launch in the same context (after the profiled
 * one) runs with SASS metrics instead of the range profiler: SetConfig for
 * the device (once), Enable with lazy patching at ENTER (only what runs in
 * the window is patched), and at EXIT: synchronise, flush the per-PC counts,
 * Disable.  The PCs are mapped to file:line with
 * cuptiGetSassToSourceCorrelation on the cubin that MODULE_LOADED handed us
 * (matched by CRC, else the first cubin that knows the function).  The
 * result is one "source" record; the launch itself is reported as one
 * "unprofiled" launch so its time still counts.  One measurement per
 * (kernel, context).
 *
 * GPUADVISE_SOURCE_LOG=FILE appends a line per CUPTI call with its result,
 * and the chip's SASS metric list once: for diagnosing a new GPU or driver. */
#include "sass.h"

#include <math.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cupti.h>
#include <cupti_pcsampling.h>
#include <cupti_profiler_target.h>
#include <cupti_sass_metrics.h>
#include <cupti_target.h>
#include <jansson.h>

#include "collect.h"

#define MAX_CUBIN_BYTES (512UL << 20)   /* keep at most this much cubin text */

enum { M_INST, M_THREADS, M_SECT, M_SECT_IDEAL, M_WF, M_WF_IDEAL, M_N };
static const char *const metric_names[M_N] = {
	"smsp__sass_inst_executed",
	"smsp__sass_thread_inst_executed",
	"smsp__sass_sectors_mem_global",
	"smsp__sass_sectors_mem_global_ideal",
	"smsp__sass_l1tex_pipe_lsu_wavefronts_mem_shared",
	"smsp__sass_l1tex_pipe_lsu_wavefronts_mem_shared_ideal",
};

/* Cubins are only ever prepended and never freed: readers take the head
 * under cubin_lock and walk the list without it. */
static pthread_mutex_t cubin_lock = PTHREAD_MUTEX_INITIALIZER;

typedef struct cubin {
	uint64_t crc;
	uint8_t *data;
	size_t size;
	struct cubin *next;
} cubin;

typedef struct want {
	char *mangled;
	uint32_t ctx;
	char *trigger;
	int done;
	struct want *next;
} want;

enum { MODE_OFF, MODE_AUTO, MODE_FORCE };

#define MAX_DEVICES 64

static struct {
	int mode;
	int pid;
	ga_sass_writer write;
	cubin *cubins;
	size_t cubin_bytes;
	int cubins_dropped;
	want *wants;
	FILE *log;
	int listed;
	/* per device: 0 unknown, 1 configured, -1 unusable */
	int dev_state[MAX_DEVICES];
	uint64_t ids[MAX_DEVICES][M_N];
	int have[MAX_DEVICES][M_N];
	/* the launch being measured */
	want *active;
	CUcontext ctx;
	int dev;
	unsigned grid[3], block[3];
} S;

static void logf_(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static void logf_(const char *fmt, ...)
{
	va_list ap;
	if (!S.log)
		return;
	va_start(ap, fmt);
	vfprintf(S.log, fmt, ap);
	va_end(ap);
	fputc('\n', S.log);
	fflush(S.log);
}

static CUptiResult logged(CUptiResult r, const char *what)
{
	logf_("%s -> %d (%s)", what, (int)r, ga_cupti_result_string(r));
	return r;
}

static void note(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static void note(const char *fmt, ...)
{
	char msg[1024];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	logf_("note: %s", msg);
	S.write(json_pack("{s:s, s:i, s:s, s:s}", "type", "error", "pid", S.pid, "code", "source",
	                  "message", msg));
}

void ga_sass_init(int pid, ga_sass_writer write)
{
	const char *m = getenv(GA_ENV_SOURCE);
	const char *log = getenv("GPUADVISE_SOURCE_LOG");
	S.pid = pid;
	S.write = write;
	S.mode = MODE_AUTO;
	if (m && strcmp(m, "force") == 0)
		S.mode = MODE_FORCE;
	else if (m && strcmp(m, "off") == 0)
		S.mode = MODE_OFF;
	if (log && *log)
		S.log = fopen(log, "a");
	logf_("pid %d: source mode %d", pid, S.mode);
}

int ga_sass_enabled(void)
{
	return S.mode != MODE_OFF;
}

void ga_sass_module_loaded(const void *data)
{
	const CUpti_ModuleResourceData *m = data;
	if (S.mode == MODE_OFF || !m || !m->pCubin || m->cubinSize == 0)
		return;
	pthread_mutex_lock(&cubin_lock);
	if (S.cubin_bytes + m->cubinSize > MAX_CUBIN_BYTES) {
		S.cubins_dropped++;
		pthread_mutex_unlock(&cubin_lock);
		return;
	}
	cubin *c = ga_xcalloc(1, sizeof(*c));
	CUpti_GetCubinCrcParams p = {CUpti_GetCubinCrcParamsSize};
	p.cubin = m->pCubin;
	p.cubinSize = m->cubinSize;
	if (logged(cuptiGetCubinCrc(&p), "cuptiGetCubinCrc") == CUPTI_SUCCESS)
		c->crc = p.cubinCrc;
	c->data = ga_xmalloc(m->cubinSize);
	memcpy(c->data, m->pCubin, m->cubinSize);
	c->size = m->cubinSize;
	c->next = S.cubins;
	S.cubins = c;
	S.cubin_bytes += c->size;
	pthread_mutex_unlock(&cubin_lock);
	logf_("module %u: cubin %zu bytes, crc %llx", m->moduleId, c->size,
	      (unsigned long long)c->crc);
}

/* ---- which kernels ------------------------------------------------------- */

static want *find_want(const char *mangled, uint32_t ctx)
{
	for (want *w = S.wants; w; w = w->next)
		if (w->ctx == ctx && strcmp(w->mangled, mangled) == 0)
			return w;
	return NULL;
}

static double val(char *const *names, const double *v, size_t n, const char *name)
{
	for (size_t i = 0; i < n; i++)
		if (strcmp(names[i], name) == 0)
			return v[i];
	return NAN;
}

static double ratio(char *const *names, const double *v, size_t n, const char *a, const char *b)
{
	double x = val(names, v, n, a), y = val(names, v, n, b);
	return isfinite(x) && isfinite(y) && y > 0 ? x / y : NAN;
}

void ga_sass_note(const char *mangled, uint32_t ctx, char *const *names, const double *v,
                  size_t n)
{
	char trig[256] = "";
	double r;

	if (S.mode == MODE_OFF || !mangled || find_want(mangled, ctx))
		return;
	if (S.mode == MODE_FORCE) {
		snprintf(trig, sizeof(trig), "--source");
	} else if ((r = ratio(names, v, n, "l1tex__t_sectors_pipe_lsu_mem_global_op_ld.sum",
	                      "l1tex__t_requests_pipe_lsu_mem_global_op_ld.sum")) > 4) {
		snprintf(trig, sizeof(trig), "%.1f global load sectors/request > 4", r);
	} else if ((r = ratio(names, v, n, "l1tex__t_sectors_pipe_lsu_mem_global_op_st.sum",
	                      "l1tex__t_requests_pipe_lsu_mem_global_op_st.sum")) > 4) {
		snprintf(trig, sizeof(trig), "%.1f global store sectors/request > 4", r);
	} else if ((r = ratio(names, v, n, "smsp__thread_inst_executed_pred_on.sum",
	                      "smsp__inst_executed.sum")) < 24) {
		snprintf(trig, sizeof(trig), "%.1f active threads per instruction < 24", r);
	} else if ((r = ratio(names, v, n, "l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_ld.sum",
	                      "l1tex__data_pipe_lsu_wavefronts_mem_shared_op_ld.sum")) > 0.25 ||
	           (r = ratio(names, v, n, "l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_st.sum",
	                      "l1tex__data_pipe_lsu_wavefronts_mem_shared_op_st.sum")) > 0.25) {
		snprintf(trig, sizeof(trig), "shared bank conflicts in %.0f%% of wavefronts > 25%%",
		         100 * r);
	} else {
		return;
	}
	want *w = ga_xcalloc(1, sizeof(*w));
	w->mangled = ga_xstrdup(mangled);
	w->ctx = ctx;
	w->trigger = ga_xstrdup(trig);
	w->next = S.wants;
	S.wants = w;
	logf_("flagged %s (context %u): %s", mangled, ctx, trig);
}

int ga_sass_outstanding(void)
{
	for (want *w = S.wants; w; w = w->next)
		if (!w->done)
			return 1;
	return 0;
}

int ga_sass_wants(const char *mangled, uint32_t ctx)
{
	want *w;
	if (S.mode == MODE_OFF || !S.wants)
		return 0;
	w = find_want(mangled, ctx);
	return w && !w->done;
}

/* ---- measuring ----------------------------------------------------------- */

static void list_metrics(const char *chip)
{
	CUpti_SassMetrics_GetNumOfMetrics_Params n = {CUpti_SassMetrics_GetNumOfMetrics_Params_STRUCT_SIZE};
	if (!S.log || S.listed)
		return;
	S.listed = 1;
	n.pChipName = chip;
	if (logged(cuptiSassMetricsGetNumOfMetrics(&n), "cuptiSassMetricsGetNumOfMetrics") != CUPTI_SUCCESS)
		return;
	CUpti_SassMetrics_GetMetrics_Params g = {CUpti_SassMetrics_GetMetrics_Params_STRUCT_SIZE};
	g.pChipName = chip;
	g.numOfMetrics = n.numOfMetrics;
	g.pMetricsList = ga_xcalloc(n.numOfMetrics ? n.numOfMetrics : 1, sizeof(*g.pMetricsList));
	if (logged(cuptiSassMetricsGetMetrics(&g), "cuptiSassMetricsGetMetrics") == CUPTI_SUCCESS)
		for (size_t i = 0; i < n.numOfMetrics; i++)
			logf_("  sass metric %s: %s", g.pMetricsList[i].pMetricName,
			      g.pMetricsList[i].pMetricDescription);
	free(g.pMetricsList);
}

/* Configure SASS metrics on the device once; 0 when usable. */
static int configure(int dev)
{
	CUpti_SassMetrics_Config cfg[M_N];
	size_t ncfg = 0;
	const char *chip;

	if (dev < 0 || dev >= MAX_DEVICES)
		return -1;
	if (S.dev_state[dev])
		return S.dev_state[dev] > 0 ? 0 : -1;
	S.dev_state[dev] = -1;
	{
		CUpti_Profiler_DeviceSupported_Params p = {CUpti_Profiler_DeviceSupported_Params_STRUCT_SIZE};
		p.cuDevice = dev;
		p.api = CUPTI_PROFILER_SASS_METRICS;
		if (logged(cuptiProfilerDeviceSupported(&p), "cuptiProfilerDeviceSupported(SASS)") != CUPTI_SUCCESS ||
		    p.isSupported != CUPTI_PROFILER_CONFIGURATION_SUPPORTED) {
			note("SASS metrics are not supported on device %d: no source-line results", dev);
			return -1;
		}
	}
	{
		CUpti_Device_GetChipName_Params p = {CUpti_Device_GetChipName_Params_STRUCT_SIZE};
		p.deviceIndex = (size_t)dev;
		if (logged(cuptiDeviceGetChipName(&p), "cuptiDeviceGetChipName") != CUPTI_SUCCESS)
			return -1;
		chip = p.pChipName;
	}
	list_metrics(chip);
	for (int m = 0; m < M_N; m++) {
		CUpti_SassMetrics_GetProperties_Params p = {CUpti_SassMetrics_GetProperties_Params_STRUCT_SIZE};
		char what[160];
		p.pChipName = chip;
		p.pMetricName = metric_names[m];
		snprintf(what, sizeof(what), "cuptiSassMetricsGetProperties(%s)", metric_names[m]);
		if (logged(cuptiSassMetricsGetProperties(&p), what) != CUPTI_SUCCESS)
			continue;
		S.ids[dev][m] = p.metric.metricId;
		S.have[dev][m] = 1;
		cfg[ncfg].metricId = p.metric.metricId;
		cfg[ncfg].outputGranularity = CUPTI_SASS_METRICS_OUTPUT_GRANULARITY_GPU;
		ncfg++;
	}
	if (!S.have[dev][M_INST]) {
		note("the SASS metric %s is unknown on %s: no source-line results",
		     metric_names[M_INST], chip);
		return -1;
	}
	CUpti_SassMetricsSetConfig_Params p = {CUpti_SassMetricsSetConfig_Params_STRUCT_SIZE};
	p.pConfigs = cfg;
	p.numOfMetricConfig = ncfg;
	p.deviceIndex = (uint32_t)dev;
	CUptiResult r = logged(cuptiSassMetricsSetConfig(&p), "cuptiSassMetricsSetConfig");
	if (r != CUPTI_SUCCESS) {
		note("configuring SASS metrics failed: %s", ga_cupti_result_string(r));
		return -1;
	}
	S.dev_state[dev] = 1;
	return 0;
}

int ga_sass_begin(CUcontext ctx, CUdevice dev, uint32_t ctx_uid, const char *mangled,
                  const unsigned grid[3], const unsigned block[3])
{
	want *w = find_want(mangled, ctx_uid);
	if (!w || w->done)
		return -1;
	w->done = 1;   /* one try, whatever happens */
	if (configure((int)dev) != 0)
		return -1;
	CUpti_SassMetricsEnable_Params p = {CUpti_SassMetricsEnable_Params_STRUCT_SIZE};
	p.ctx = ctx;
	p.enableLazyPatching = 1;
	CUptiResult r = logged(cuptiSassMetricsEnable(&p), "cuptiSassMetricsEnable");
	if (r != CUPTI_SUCCESS) {
		note("enabling SASS metrics for %s failed: %s", mangled, ga_cupti_result_string(r));
		return -1;
	}
	S.active = w;
	S.ctx = ctx;
	S.dev = (int)dev;
	memcpy(S.grid, grid, sizeof(S.grid));
	memcpy(S.block, block, sizeof(S.block));
	logf_("measuring %s", mangled);
	return 0;
}

static int correlate(const cubin *c, const char *fn, uint32_t pc, char **file, int *line)
{
	CUpti_GetSassToSourceCorrelationParams p = {CUpti_GetSassToSourceCorrelationParamsSize};
	p.cubin = c->data;
	p.cubinSize = c->size;
	p.functionName = fn;
	p.pcOffset = pc;
	CUptiResult r = cuptiGetSassToSourceCorrelation(&p);
	*file = NULL;
	*line = 0;
	if (r != CUPTI_SUCCESS) {
		free(p.fileName);
		free(p.dirName);
		return -1;
	}
	if (p.fileName && *p.fileName && p.lineNumber > 0) {
		if (p.fileName[0] != '/' && p.dirName && *p.dirName)
			*file = ga_xasprintf("%s/%s", p.dirName, p.fileName);
		else
			*file = ga_xstrdup(p.fileName);
		*line = (int)p.lineNumber;
	}
	free(p.fileName);
	free(p.dirName);
	return 0;
}

/* The cubin holding fn: by CRC first, else any cubin that can correlate it. */
static const cubin *find_cubin(uint32_t crc, const char *fn, uint32_t pc)
{
	char *file;
	int line;
	pthread_mutex_lock(&cubin_lock);
	const cubin *head = S.cubins;
	pthread_mutex_unlock(&cubin_lock);
	for (const cubin *c = head; c; c = c->next)
		if ((uint32_t)c->crc == crc || c->crc == crc)
			return c;
	for (const cubin *c = head; c; c = c->next)
		if (correlate(c, fn, pc, &file, &line) == 0) {
			free(file);
			return c;
		}
	return NULL;
}

void ga_sass_end(void)
{
	want *w = S.active;
	CUcontext ctx = S.ctx;
	CUpti_SassMetrics_Data *data = NULL;
	size_t nrec = 0, ninst = 0;
	ga_source src = {0};
	CUptiResult r;

	if (!w)
		return;
	S.active = NULL;
	{
		CUresult cr = cuCtxSynchronize();
		logf_("cuCtxSynchronize -> %d", (int)cr);
	}
	{
		CUpti_SassMetricsGetDataProperties_Params p = {CUpti_SassMetricsGetDataProperties_Params_STRUCT_SIZE};
		p.ctx = ctx;
		r = logged(cuptiSassMetricsGetDataProperties(&p), "cuptiSassMetricsGetDataProperties");
		if (r != CUPTI_SUCCESS) {
			note("reading SASS metrics of %s failed: %s", w->mangled, ga_cupti_result_string(r));
			goto disable;
		}
		nrec = p.numOfPatchedInstructionRecords;
		ninst = p.numOfInstances;
		logf_("%zu records, %zu instances", nrec, ninst);
	}
	if (nrec && ninst) {
		CUpti_SassMetricsFlushData_Params p = {CUpti_SassMetricsFlushData_Params_STRUCT_SIZE};
		data = ga_xcalloc(nrec, sizeof(*data));
		for (size_t i = 0; i < nrec; i++) {
			data[i].pInstanceValues = ga_xcalloc(ninst, sizeof(*data[i].pInstanceValues));
		}
		p.ctx = ctx;
		p.numOfPatchedInstructionRecords = nrec;
		p.numOfInstances = ninst;
		p.pMetricsData = data;
		r = logged(cuptiSassMetricsFlushData(&p), "cuptiSassMetricsFlushData");
		if (r != CUPTI_SUCCESS) {
			note("flushing SASS metrics of %s failed: %s", w->mangled, ga_cupti_result_string(r));
			goto disable;
		}
	}
disable:
	{
		CUpti_SassMetricsDisable_Params p = {CUpti_SassMetricsDisable_Params_STRUCT_SIZE};
		p.ctx = ctx;
		logged(cuptiSassMetricsDisable(&p), "cuptiSassMetricsDisable");
	}
	/* The measured launch is not a profiled one: count it like those past
	 * --max-per-kernel so its GPU time still counts. */
	{
		ga_unprofiled u = {w->mangled, S.pid, {S.grid[0], S.grid[1], S.grid[2]},
		                   {S.block[0], S.block[1], S.block[2]}, 1};
		json_t *rec = ga_unprofiled_to_json(&u);
		json_object_set_new(rec, "type", json_string("unprofiled"));
		S.write(rec);
	}
	if (!data)
		goto out;

	src.mangled = ga_xstrdup(w->mangled);
	src.pid = S.pid;
	memcpy(src.grid, S.grid, sizeof(src.grid));
	memcpy(src.block, S.block, sizeof(src.block));
	src.trigger = ga_xstrdup(w->trigger);
	const cubin *cb = NULL;
	int searched = 0;
	for (size_t i = 0; i < nrec; i++) {
		CUpti_SassMetrics_Data *d = &data[i];
		const char *fn = d->functionName ? d->functionName : w->mangled;
		if (d->functionName && strcmp(d->functionName, w->mangled) != 0)
			continue;   /* patched in the window but not our kernel */
		/* One record per (PC, metric): find the PC's entry. */
		ga_source_pc *pc = NULL;
		for (size_t j = src.n_pcs; j-- > 0;)
			if (src.pcs[j].pc == d->pcOffset) {
				pc = &src.pcs[j];
				break;
			}
		int fresh = pc == NULL;
		if (fresh) {
			pc = ga_source_add_pc(&src);
			pc->pc = d->pcOffset;
		}
		for (size_t k = 0; k < ninst; k++)
			for (int m = 0; m < M_N; m++) {
				if (!S.have[S.dev][m] || d->pInstanceValues[k].metricId != S.ids[S.dev][m])
					continue;
				double *slot[M_N] = {&pc->inst, &pc->threads, &pc->sectors, &pc->sectors_ideal,
				                     &pc->wavefronts, &pc->wavefronts_ideal};
				*slot[m] = (isfinite(*slot[m]) ? *slot[m] : 0) +
				           (double)d->pInstanceValues[k].value;
			}
		if (!searched) {
			searched = 1;
			cb = find_cubin(d->cubinCrc, fn, d->pcOffset);
			logf_("function %s: cubin crc %x -> %s", fn, d->cubinCrc, cb ? "found" : "not found");
		}
		if (fresh && cb && correlate(cb, fn, d->pcOffset, &pc->file, &pc->line) == 0 &&
		    pc->line > 0)
			src.lineinfo = 1;
	}
	if (!cb)
		note("%s: its cubin was not captured at module load, so only SASS offsets are shown",
		     w->mangled);
	logf_("%s: %zu PCs, lineinfo %d", w->mangled, src.n_pcs, src.lineinfo);
	{
		json_t *rec = ga_source_to_json(&src);
		json_object_set_new(rec, "type", json_string("source"));
		S.write(rec);
	}
out:
	if (data) {
		for (size_t i = 0; i < nrec; i++) {
			free((void *)data[i].functionName);
			free(data[i].pInstanceValues);
		}
		free(data);
	}
	ga_source_free(&src);
}
