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
 * Stall reasons: the stall run.  CUPTI PC sampling attributes samples to
 * a kernel's code only if its module was loaded while PC sampling was
 * enabled in the context, and the range profiler cannot start while it is
 * enabled (bench/probe/pcs_probe.c, H200, driver 580, CUPTI 13.0: samples
 * of a module loaded earlier all count as non-user code, with no PC
 * records).  So with --stalls the launcher runs the program a second time,
 * without the range profiler, with GA_ENV_STALLS naming a file of the
 * kernels to sample ("DURATION_NS<TAB>MANGLED" lines: the kernels that got
 * source lines in the first run).  There PC sampling is enabled at each
 * context's creation, kernel-serialized with start/stop control, and the
 * first launch of each listed kernel is sampled: Start at ENTER (the
 * sampling period sized from the first run's duration for about
 * PCS_TARGET samples), at EXIT synchronise, Stop, GetData until CUPTI has
 * no more PCs.  Samples of the kernel's PCs (by function name) go to a
 * "source" record with only "stalls" per PC; the launcher merges it into
 * the first run's record of that kernel.  GPUADVISE_PCSAMP_PERIOD=N
 * (5..31) samples every 2^N cycles.
 *
 * GPUADVISE_SOURCE_LOG=FILE appends a line per CUPTI call with its result,
 * and the chip's SASS metric list once: for diagnosing a new GPU or driver. */
#include "sass.h"

#include <errno.h>
#include <math.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <cupti.h>
#include <cupti_pcsampling.h>
#include <cupti_profiler_target.h>
#include <cupti_sass_metrics.h>
#include <cupti_target.h>
#include <jansson.h>

#include "collect.h"

#define MAX_CUBIN_BYTES (512UL << 20)   /* keep at most this much cubin text */
#define PCS_TARGET 131072.0             /* samples aimed at per sampled launch */
#define PCS_BUF_PCS 1024                /* PC records per GetData call */
#define PCS_SCRATCH (4UL << 20)         /* CUPTI's buffer of decoded PCs */
#define PCS_HW_BUFFER (128UL << 20)     /* device buffer of raw samples */
#define PCS_DEFAULT_PERIOD 12           /* 2^12 cycles, until a launch says otherwise */

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
	int done;                 /* SASS metrics tried */
	int pcs_done;             /* PC sampling tried */
	double duration_ns;       /* of the profiled launch that flagged it */
	struct want *next;
} want;

enum { ACT_SASS = 1, ACT_PCS = 2 };

typedef struct pcs_ctx {      /* a context with PC sampling enabled */
	CUcontext ctx;
	uint32_t period;          /* the sampling period configured there */
	struct pcs_ctx *next;
} pcs_ctx;

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
	int active_kind;          /* ACT_* */
	CUcontext ctx;
	int dev;
	unsigned grid[3], block[3];
	/* PC sampling (the stall run) */
	int stall_run;
	int pcs_broken;           /* enabling failed once: not again */
	pcs_ctx *pcs_ctxs;
	size_t n_reasons;         /* every reason CUPTI names */
	uint32_t *reason_index;
	char **reason_name;       /* CUPTI's names, CUPTI_STALL_REASON_STRING_SIZE each */
	uint32_t *selected;       /* the indices collected */
	size_t n_selected;
	CUpti_PCSamplingData cfg_buf, get_buf;
	uint32_t period;
	double t0;
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

/* The stall run's kernels: "DURATION_NS<TAB>MANGLED" lines.  A name
 * matches in any context, once per process. */
static void read_stall_list(const char *path)
{
	FILE *f;
	char *line = NULL;
	size_t cap = 0;

	if (!path || !*path)
		return;
	S.stall_run = 1;
	if (!(f = fopen(path, "r"))) {
		note("cannot read the list of kernels to sample (%s): %s", path, strerror(errno));
		return;
	}
	while (getline(&line, &cap, f) > 0) {
		char *tab = strchr(line, '\t'), *nl = strchr(line, '\n');
		if (!tab || !nl || tab[1] == '\n')
			continue;
		*nl = *tab = '\0';
		want *w = ga_xcalloc(1, sizeof(*w));
		w->mangled = ga_xstrdup(tab + 1);
		w->trigger = ga_xstrdup("--stalls");
		w->duration_ns = strtod(line, NULL);
		w->done = 1;   /* no SASS metrics in this run */
		w->next = S.wants;
		S.wants = w;
	}
	free(line);
	fclose(f);
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
	read_stall_list(getenv(GA_ENV_STALLS));
	if (S.stall_run && S.mode == MODE_OFF)
		S.mode = MODE_AUTO;   /* the cubins map PCs to lines */
	logf_("pid %d: source mode %d%s", pid, S.mode, S.stall_run ? ", stall run" : "");
}

int ga_sass_stall_run(void)
{
	return S.stall_run;
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
		if ((w->ctx == ctx || S.stall_run) && strcmp(w->mangled, mangled) == 0)
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

	if (S.mode == MODE_OFF || S.stall_run || !mangled || find_want(mangled, ctx))
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
	w->duration_ns = val(names, v, n, "gpu__time_duration.sum");
	w->pcs_done = 1;   /* stall reasons come from the stall run */
	w->next = S.wants;
	S.wants = w;
	logf_("flagged %s (context %u): %s", mangled, ctx, trig);
}

int ga_sass_outstanding(void)
{
	for (want *w = S.wants; w; w = w->next)
		if (!w->done || !w->pcs_done)
			return 1;
	return 0;
}

int ga_sass_wants(const char *mangled, uint32_t ctx)
{
	want *w;
	if ((S.mode == MODE_OFF && !S.stall_run) || !S.wants)
		return 0;
	w = find_want(mangled, ctx);
	return w && (!w->done || !w->pcs_done);
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

/* The launch being measured, until ga_sass_end. */
static void set_active(want *w, int kind, CUcontext ctx, CUdevice dev, const unsigned grid[3],
                       const unsigned block[3])
{
	S.active = w;
	S.active_kind = kind;
	S.ctx = ctx;
	S.dev = (int)dev;
	memcpy(S.grid, grid, sizeof(S.grid));
	memcpy(S.block, block, sizeof(S.block));
}

static int pcs_begin(want *w, CUcontext ctx, CUdevice dev, const unsigned grid[3],
                     const unsigned block[3]);

int ga_sass_begin(CUcontext ctx, CUdevice dev, uint32_t ctx_uid, const char *mangled,
                  const unsigned grid[3], const unsigned block[3])
{
	want *w = find_want(mangled, ctx_uid);
	if (!w)
		return -1;
	if (w->done)   /* SASS metrics first, then PC sampling */
		return w->pcs_done ? -1 : pcs_begin(w, ctx, dev, grid, block);
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
	set_active(w, ACT_SASS, ctx, dev, grid, block);
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

/* The cubin holding fn: by CRC first (SASS records give 32 bits of it, PC
 * sampling 64), else any cubin that can correlate it. */
static const cubin *find_cubin(uint64_t crc, const char *fn, uint32_t pc)
{
	char *file;
	int line;
	pthread_mutex_lock(&cubin_lock);
	const cubin *head = S.cubins;
	pthread_mutex_unlock(&cubin_lock);
	for (const cubin *c = head; c; c = c->next)
		if (c->crc == crc || (uint32_t)c->crc == (uint32_t)crc)
			return c;
	for (const cubin *c = head; c; c = c->next)
		if (correlate(c, fn, pc, &file, &line) == 0) {
			free(file);
			return c;
		}
	return NULL;
}

static void pcs_end(void);

/* The measured launch is not a profiled one: count it like those past
 * --max-per-kernel so its GPU time still counts. */
static void write_unprofiled(const char *mangled)
{
	ga_unprofiled u = {(char *)mangled, S.pid, {S.grid[0], S.grid[1], S.grid[2]},
	                   {S.block[0], S.block[1], S.block[2]}, 1};
	json_t *rec = ga_unprofiled_to_json(&u);
	json_object_set_new(rec, "type", json_string("unprofiled"));
	S.write(rec);
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
	if (S.active_kind == ACT_PCS) {
		pcs_end();
		return;
	}
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
	write_unprofiled(w->mangled);
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

/* ---- PC sampling: stall reasons (the stall run) ------------------------- */

static double now_s(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

/* 2^period cycles between samples: about PCS_TARGET samples (one per SM
 * per period) over the profiled launch's duration. */
static uint32_t pcs_period(const want *w, CUdevice dev)
{
	const char *e = getenv("GPUADVISE_PCSAMP_PERIOD");
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
	for (size_t i = 0; i < S.n_reasons; i++)
		if (S.reason_index[i] == index)
			return short_reason(S.reason_name[i]);
	return NULL;
}

/* Names and indices of the stall reasons (PC sampling enabled in ctx),
 * read once per process; selects all but the "_not_issued" ones, which
 * count a subset of the same samples again. */
static CUptiResult pcs_reasons(CUcontext ctx)
{
	CUptiResult r;
	size_t n = 0;
	if (S.n_reasons)
		return CUPTI_SUCCESS;
	{
		CUpti_PCSamplingGetNumStallReasonsParams p = {CUpti_PCSamplingGetNumStallReasonsParamsSize};
		p.ctx = ctx;
		p.numStallReasons = &n;
		r = logged(cuptiPCSamplingGetNumStallReasons(&p), "cuptiPCSamplingGetNumStallReasons");
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
		r = logged(cuptiPCSamplingGetStallReasons(&p), "cuptiPCSamplingGetStallReasons");
	}
	if (r != CUPTI_SUCCESS) {
		for (size_t i = 0; i < n; i++)
			free(name[i]);
		free(name);
		free(index);
		return r;
	}
	S.n_reasons = n;
	S.reason_index = index;
	S.reason_name = name;
	S.selected = ga_xcalloc(n, sizeof(*S.selected));
	for (size_t i = 0; i < n; i++) {
		S.reason_name[i][CUPTI_STALL_REASON_STRING_SIZE - 1] = '\0';
		size_t len = strlen(S.reason_name[i]);
		/* also not the totals (smsp__pcsamp_sample_count, ..._dropped),
		 * which CUPTI collects anyway */
		int dup = (len >= 11 && strcmp(S.reason_name[i] + len - 11, "_not_issued") == 0) ||
		          strncmp(S.reason_name[i], "smsp__pcsamp_warps_issue_stalled_", 33) != 0;
		logf_("  stall reason %u: %s%s", S.reason_index[i], S.reason_name[i],
		      dup ? " (not collected)" : "");
		if (!dup)
			S.selected[S.n_selected++] = S.reason_index[i];
	}
	pcs_buf_alloc(&S.cfg_buf, n);
	pcs_buf_alloc(&S.get_buf, n);
	return S.n_selected ? CUPTI_SUCCESS : CUPTI_ERROR_NOT_SUPPORTED;
}

static CUptiResult pcs_set(CUcontext ctx, CUpti_PCSamplingConfigurationInfo *a, size_t n)
{
	CUpti_PCSamplingConfigurationInfoParams p = {CUpti_PCSamplingConfigurationInfoParamsSize};
	p.ctx = ctx;
	p.numAttributes = n;
	p.pPCSamplingConfigurationInfo = a;
	CUptiResult r = logged(cuptiPCSamplingSetConfigurationAttribute(&p),
	                       "cuptiPCSamplingSetConfigurationAttribute");
	for (size_t i = 0; i < n; i++)
		if (a[i].attributeStatus != CUPTI_SUCCESS)
			logf_("  attribute %d -> %d (%s)", (int)a[i].attributeType,
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
	a[n].attributeData.stallReasonData.stallReasonCount = S.n_selected;
	a[n++].attributeData.stallReasonData.pStallReasonIndex = S.selected;
	a[n].attributeType = CUPTI_PC_SAMPLING_CONFIGURATION_ATTR_TYPE_SCRATCH_BUFFER_SIZE;
	a[n++].attributeData.scratchBufferSizeData.scratchBufferSize = PCS_SCRATCH;
	a[n].attributeType = CUPTI_PC_SAMPLING_CONFIGURATION_ATTR_TYPE_HARDWARE_BUFFER_SIZE;
	a[n++].attributeData.hardwareBufferSizeData.hardwareBufferSize = PCS_HW_BUFFER;
	a[n].attributeType = CUPTI_PC_SAMPLING_CONFIGURATION_ATTR_TYPE_SAMPLING_DATA_BUFFER;
	a[n++].attributeData.samplingDataBufferData.samplingDataBuffer = &S.cfg_buf;
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
	logged(cuptiPCSamplingDisable(&p), "cuptiPCSamplingDisable");
}

static pcs_ctx *pcs_find(CUcontext ctx)
{
	for (pcs_ctx *c = S.pcs_ctxs; c; c = c->next)
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
	if (!S.stall_run || !ctx || S.pcs_broken)
		return;
	{
		CUpti_PCSamplingEnableParams p = {CUpti_PCSamplingEnableParamsSize};
		p.ctx = ctx;
		r = logged(cuptiPCSamplingEnable(&p), "cuptiPCSamplingEnable");
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
	c->next = S.pcs_ctxs;
	S.pcs_ctxs = c;
	return;
fail:
	S.pcs_broken = 1;
	note("PC sampling could not be enabled (%s): no stall reasons%s", ga_cupti_result_string(r),
	     r == CUPTI_ERROR_INSUFFICIENT_PRIVILEGES ? " (no permission for GPU counters)" : "");
}

void ga_sass_context_destroyed(CUcontext ctx)
{
	pcs_ctx **pp = &S.pcs_ctxs;
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

static int pcs_begin(want *w, CUcontext ctx, CUdevice dev, const unsigned grid[3],
                     const unsigned block[3])
{
	pcs_ctx *c = pcs_find(ctx);
	CUptiResult r;

	w->pcs_done = 1;   /* one try, whatever happens */
	if (!c) {
		if (!S.pcs_broken)
			note("%s runs in a context created before gpuadvise could enable PC sampling "
			     "there: no stall reasons", w->mangled);
		return -1;
	}
	S.t0 = now_s();
	S.period = pcs_period(w, dev);
	logf_("pc sampling %s: period 2^%u cycles (profiled launch %.0f ns)", w->mangled,
	      S.period, w->duration_ns);
	if (S.period != c->period) {
		CUpti_PCSamplingConfigurationInfo a;
		memset(&a, 0, sizeof(a));
		a.attributeType = CUPTI_PC_SAMPLING_CONFIGURATION_ATTR_TYPE_SAMPLING_PERIOD;
		a.attributeData.samplingPeriodData.samplingPeriod = S.period;
		if (pcs_set(ctx, &a, 1) == CUPTI_SUCCESS)
			c->period = S.period;
		else
			S.period = c->period;
	}
	{
		CUpti_PCSamplingStartParams p = {CUpti_PCSamplingStartParamsSize};
		p.ctx = ctx;
		r = logged(cuptiPCSamplingStart(&p), "cuptiPCSamplingStart");
	}
	if (r != CUPTI_SUCCESS) {
		note("PC sampling of %s failed (%s): no stall reasons for its source lines",
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
				logf_("pc sampling %s: cubin crc %llx -> %s", mangled,
				      (unsigned long long)d->cubinCrc, acc->cb ? "found" : "not found");
			}
			if (acc->cb && correlate(acc->cb, mangled, pc->pc, &pc->file, &pc->line) == 0 &&
			    pc->line > 0)
				src->lineinfo = 1;
		}
		for (size_t k = 0; k < d->stallReasonCount && k < S.n_selected; k++) {
			const char *why = reason_of(d->stallReason[k].pcSamplingStallReasonIndex);
			if (why && d->stallReason[k].samples)
				ga_source_pc_add_stall(pc, why, (double)d->stallReason[k].samples);
		}
	}
}

static void pcs_end(void)
{
	want *w = S.active;
	CUcontext ctx = S.ctx;
	ga_source src = {0};
	pcs_acc acc = {&src, NULL, 0, 0, 0};
	CUptiResult r;
	int calls = 0, full = 0;
	double nonuser = 0;

	S.active = NULL;
	S.active_kind = 0;
	{
		CUresult cr = cuCtxSynchronize();
		logf_("cuCtxSynchronize -> %d", (int)cr);
	}
	{
		CUpti_PCSamplingStopParams p = {CUpti_PCSamplingStopParamsSize};
		p.ctx = ctx;
		logged(cuptiPCSamplingStop(&p), "cuptiPCSamplingStop");
	}
	src.mangled = ga_xstrdup(w->mangled);
	src.pid = S.pid;
	memcpy(src.grid, S.grid, sizeof(src.grid));
	memcpy(src.block, S.block, sizeof(src.block));
	src.sample_period = (double)(1UL << S.period);
	src.trigger = ga_xstrdup(w->trigger);
	/* Everything CUPTI holds, a buffer at a time. */
	for (;;) {
		CUpti_PCSamplingGetDataParams p = {CUpti_PCSamplingGetDataParamsSize};
		p.ctx = ctx;
		p.pcSamplingData = &S.get_buf;
		S.get_buf.totalNumPcs = S.get_buf.remainingNumPcs = 0;
		r = logged(cuptiPCSamplingGetData(&p), "cuptiPCSamplingGetData");
		calls++;
		if (r == CUPTI_ERROR_OUT_OF_MEMORY || S.get_buf.hardwareBufferFull)
			full = 1;
		if (r != CUPTI_SUCCESS && r != CUPTI_ERROR_OUT_OF_MEMORY)
			break;
		logf_("  %zu PCs, %zu remaining, %llu samples, %llu dropped, %llu non-user", S.get_buf.totalNumPcs,
		      S.get_buf.remainingNumPcs, (unsigned long long)S.get_buf.totalSamples,
		      (unsigned long long)S.get_buf.droppedSamples,
		      (unsigned long long)S.get_buf.nonUsrKernelsTotalSamples);
		nonuser += (double)S.get_buf.nonUsrKernelsTotalSamples;
		src.samples_total += (double)S.get_buf.totalSamples;
		src.samples_dropped += (double)S.get_buf.droppedSamples;
		pcs_take(&acc, &S.get_buf, w->mangled);
		if (S.get_buf.remainingNumPcs == 0 || calls > 100000)
			break;
	}
	logf_("pc sampling %s: %.0f PC records (%.0f of other functions), %zu PCs, %.0f samples, "
	      "%.0f dropped, %.1f ms from start to the last record", w->mangled, acc.pcs,
	      acc.other_pcs, src.n_pcs, src.samples_total, src.samples_dropped,
	      1e3 * (now_s() - S.t0));
	if (full)
		note("PC sampling of %s: the hardware buffer filled up, some samples are missing",
		     w->mangled);
	if (src.n_pcs) {
		json_t *rec = ga_source_to_json(&src);
		json_object_set_new(rec, "type", json_string("source"));
		S.write(rec);
	} else {
		note("PC sampling of %s gave no samples of its code (%.0f samples, %.0f of them "
		     "counted by CUPTI as non-user code): no stall reasons", w->mangled,
		     src.samples_total, nonuser);
	}
	ga_source_free(&src);
}
