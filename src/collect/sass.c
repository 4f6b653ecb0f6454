/* sass.c: source-level data for flagged kernels (see sass.h).
 *
 * Which kernels.  "auto" (the default) measures a kernel when one of its
 * range-profiled launches makes one rule's line of the source trigger hold
 * (GA_ENV_SOURCE_WHEN, evaluated by trigger.c over that launch's values);
 * a rule whose line does not parse flags none (an error record says so),
 * and without a trigger no kernel is measured.  "force" (--source) measures every profiled kernel, "off"
 * none and keeps no cubins.
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
 * (kernel, context).  A kernel flagged by a rule that reads opcodes (or any
 * with --source) is measured instead by a second run of its first launch
 * (sassreplay.c), and each of its PCs gets its opcode from nvdisasm's
 * listing of the cubin (disassemble).
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
 * the first run's record of that kernel.  GA_ENV_PCSAMP_PERIOD=N
 * (5..31) samples every 2^N cycles.
 *
 * GA_ENV_SOURCE_LOG=FILE appends a line per CUPTI call with its result,
 * and the chip's SASS metric list once: for diagnosing a new GPU or driver. */
#include "sass.h"

#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <spawn.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <cupti.h>
#include <cupti_pcsampling.h>
#include <cupti_profiler_target.h>
#include <cupti_sass_metrics.h>
#include <cupti_target.h>
#include <jansson.h>

#include "activity.h"
#include "collect.h"
#include "nvtx.h"
#include "protocol.h"
#include "sassint.h"
#include "trigger.h"
#include "writer.h"

static const char *const metric_names[M_N] = {
	"smsp__sass_inst_executed",
	"smsp__sass_thread_inst_executed",
	"smsp__sass_sectors_mem_global",
	"smsp__sass_sectors_mem_global_ideal",
	"smsp__sass_l1tex_pipe_lsu_wavefronts_mem_shared",
	"smsp__sass_l1tex_pipe_lsu_wavefronts_mem_shared_ideal",
};

/* The stall run's kernels: "DURATION_NS<TAB>MANGLED" lines.  A name
 * matches in any context, once per process. */
static void read_stall_list(const char *path)
{
	FILE *f;
	char *line = NULL;
	size_t cap = 0;

	if (!path || !*path)
		return;
	sass.stall_run = 1;
	if (!(f = fopen(path, "r"))) {
		sass_note("cannot read the list of kernels to sample (%s): %s", path, strerror(errno));
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
		w->next = sass.wants;
		sass.wants = w;
	}
	free(line);
	fclose(f);
}

/* A rule's line of the trigger that does not parse: said once, in an
 * error record naming the rule; the other rules still flag kernels. */
static void bad_trigger_line(void *ctx, const char *msg)
{
	(void)ctx;
	sass_note("%s: %s; that rule flags no kernel for source lines", GA_ENV_SOURCE_WHEN, msg);
}

static void bad_skip_line(void *ctx, const char *msg)
{
	(void)ctx;
	sass_note("%s: %s; that pattern leaves no kernel out of source lines", GA_ENV_SOURCE_SKIP,
	          msg);
}

/* The rules' trigger and the library kernels it leaves alone, parsed once. */
static void read_trigger(void)
{
	const char *when = getenv(GA_ENV_SOURCE_WHEN), *skip = getenv(GA_ENV_SOURCE_SKIP);

	if (!when || !*when)
		return;
	sass.trigger = ga_trigger_parse(when, bad_trigger_line, NULL);
	if (skip && *skip)
		sass.skip = ga_name_filter_parse(skip, bad_skip_line, NULL);
}

void ga_sass_init(int pid)
{
	const char *m = getenv(GA_ENV_SOURCE);
	const char *log = getenv(GA_ENV_SOURCE_LOG);
	sass.pid = pid;
	sass.mode = MODE_AUTO;
	if (m && strcmp(m, "force") == 0)
		sass.mode = MODE_FORCE;
	else if (m && strcmp(m, "off") == 0)
		sass.mode = MODE_OFF;
	if (log && *log)
		sass.log = fopen(log, "a");
	{
		const char *replay = getenv(GA_ENV_SOURCE_REPLAY), *ops = getenv(GA_ENV_SOURCE_OPCODES);
		sass.replay_mode = !replay ? REPLAY_OPCODES
		                 : strcmp(replay, "0") == 0 ? REPLAY_OFF
		                 : strcmp(replay, "all") == 0 ? REPLAY_ALL : REPLAY_OPCODES;
		if (ops && *ops)
			sass.opcode_rules = ga_xstrdup(ops);
	}
	read_stall_list(getenv(GA_ENV_STALLS));
	if (sass.mode == MODE_AUTO && !sass.stall_run)   /* the stall run flags none */
		read_trigger();
	/* Automatic without a trigger: nothing to flag, no cubins to keep. */
	if (sass.mode == MODE_AUTO && !sass.trigger && !sass.stall_run)
		sass.mode = MODE_OFF;
	if (sass.stall_run && sass.mode == MODE_OFF)
		sass.mode = MODE_AUTO;   /* the cubins map PCs to lines */
	sass_logf("pid %d: source mode %d%s", pid, (int)sass.mode, sass.stall_run ? ", stall run" : "");
}

int ga_sass_stall_run(void)
{
	return sass.stall_run;
}

int ga_sass_enabled(void)
{
	return sass.mode != MODE_OFF;
}

int ga_sass_every_kernel(void)
{
	return sass.mode == MODE_FORCE;
}

/* ---- which kernels ------------------------------------------------------- */

static want *find_want(const char *mangled, uint32_t ctx)
{
	for (want *w = sass.wants; w; w = w->next)
		if ((w->ctx == ctx || sass.stall_run) && strcmp(w->mangled, mangled) == 0)
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

void ga_sass_note(const char *mangled, const char *name, uint32_t ctx, char *const *names,
                  const double *v, size_t n)
{
	char *trig = NULL;

	if (!ga_sass_could_flag(mangled, name, ctx))
		return;
	if (sass.mode == MODE_FORCE)
		trig = ga_xstrdup("--source");
	else if (!ga_trigger_holds(sass.trigger, names, v, n, &trig))
		return;
	want *w = ga_xcalloc(1, sizeof(*w));
	w->mangled = ga_xstrdup(mangled);
	w->ctx = ctx;
	w->trigger = trig;
	w->duration_ns = val(names, v, n, "gpu__time_duration.sum");
	w->pcs_done = 1;   /* stall reasons come from the stall run */
	w->next = sass.wants;
	sass.wants = w;
	sass_logf("flagged %s (context %u): %s", mangled, ctx, trig);
}

int ga_sass_could_flag(const char *mangled, const char *name, uint32_t ctx)
{
	if (sass.mode == MODE_OFF || sass.stall_run || !mangled || find_want(mangled, ctx))
		return 0;
	if (sass.mode == MODE_FORCE)
		return 1;
	/* A library's kernel: its lines are nobody's to edit, and a launch
	 * with SASS patching costs as much as a replay (on the H200's
	 * transformer step, 11 such launches, none with a line table, added
	 * 0.7 to 1.2 s to 95 steps of 2.4 s). */
	return sass.trigger && !ga_name_filter_matches(sass.skip, name, mangled);
}

int ga_sass_outstanding(void)
{
	for (want *w = sass.wants; w; w = w->next)
		if (!w->done || !w->pcs_done)
			return 1;
	return 0;
}

int ga_sass_wants(const char *mangled, uint32_t ctx)
{
	want *w;
	if ((sass.mode == MODE_OFF && !sass.stall_run) || !sass.wants)
		return 0;
	w = find_want(mangled, ctx);
	return w && (!w->done || !w->pcs_done);
}

/* ---- measuring ----------------------------------------------------------- */

static void list_metrics(const char *chip)
{
	CUpti_SassMetrics_GetNumOfMetrics_Params n = {CUpti_SassMetrics_GetNumOfMetrics_Params_STRUCT_SIZE};
	if (!sass.log || sass.listed)
		return;
	sass.listed = 1;
	n.pChipName = chip;
	if (sass_logged(cuptiSassMetricsGetNumOfMetrics(&n), "cuptiSassMetricsGetNumOfMetrics") != CUPTI_SUCCESS)
		return;
	CUpti_SassMetrics_GetMetrics_Params g = {CUpti_SassMetrics_GetMetrics_Params_STRUCT_SIZE};
	g.pChipName = chip;
	g.numOfMetrics = n.numOfMetrics;
	g.pMetricsList = ga_xcalloc(n.numOfMetrics ? n.numOfMetrics : 1, sizeof(*g.pMetricsList));
	if (sass_logged(cuptiSassMetricsGetMetrics(&g), "cuptiSassMetricsGetMetrics") == CUPTI_SUCCESS)
		for (size_t i = 0; i < n.numOfMetrics; i++)
			sass_logf("  sass metric %s: %s", g.pMetricsList[i].pMetricName,
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
	if (sass.dev_state[dev])
		return sass.dev_state[dev] > 0 ? 0 : -1;
	sass.dev_state[dev] = -1;
	{
		CUpti_Profiler_DeviceSupported_Params p = {CUpti_Profiler_DeviceSupported_Params_STRUCT_SIZE};
		p.cuDevice = dev;
		p.api = CUPTI_PROFILER_SASS_METRICS;
		if (sass_logged(cuptiProfilerDeviceSupported(&p), "cuptiProfilerDeviceSupported(SASS)") != CUPTI_SUCCESS ||
		    p.isSupported != CUPTI_PROFILER_CONFIGURATION_SUPPORTED) {
			sass_note("SASS metrics are not supported on device %d: no source-line results", dev);
			return -1;
		}
	}
	{
		CUpti_Device_GetChipName_Params p = {CUpti_Device_GetChipName_Params_STRUCT_SIZE};
		p.deviceIndex = (size_t)dev;
		if (sass_logged(cuptiDeviceGetChipName(&p), "cuptiDeviceGetChipName") != CUPTI_SUCCESS)
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
		if (sass_logged(cuptiSassMetricsGetProperties(&p), what) != CUPTI_SUCCESS)
			continue;
		sass.ids[dev][m] = p.metric.metricId;
		sass.have[dev][m] = 1;
		cfg[ncfg].metricId = p.metric.metricId;
		cfg[ncfg].outputGranularity = CUPTI_SASS_METRICS_OUTPUT_GRANULARITY_GPU;
		ncfg++;
	}
	if (!sass.have[dev][M_INST]) {
		sass_note("the SASS metric %s is unknown on %s: no source-line results",
		          metric_names[M_INST], chip);
		return -1;
	}
	CUpti_SassMetricsSetConfig_Params p = {CUpti_SassMetricsSetConfig_Params_STRUCT_SIZE};
	p.pConfigs = cfg;
	p.numOfMetricConfig = ncfg;
	p.deviceIndex = (uint32_t)dev;
	CUptiResult r = sass_logged(cuptiSassMetricsSetConfig(&p), "cuptiSassMetricsSetConfig");
	if (r != CUPTI_SUCCESS) {
		sass_note("configuring SASS metrics failed: %s", ga_cupti_result_string(r));
		return -1;
	}
	sass.dev_state[dev] = 1;
	return 0;
}

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
	CUptiResult r = sass_logged(cuptiSassMetricsEnable(&p), "cuptiSassMetricsEnable");
	if (r != CUPTI_SUCCESS) {
		sass_note("enabling SASS metrics for %s failed: %s", mangled, ga_cupti_result_string(r));
		return -1;
	}
	sass.cfg_ctx[dev] = ctx;
	set_active(w, ACT_SASS, ctx, dev, grid, block);
	activity_kernels_pause();
	sass_logf("measuring %s", mangled);
	return 0;
}

/* A device's configuration holds on to the context its launches were
 * patched in: left set when the program destroys that context
 * (cudaDeviceReset before it exits), CUPTI's own teardown at exit reaches
 * into the dead context and the program dies of SIGSEGV after its last
 * line.  So it is unset while the context still exists, and a context
 * made later configures the device again. */
void ga_sass_context_destroyed(CUcontext ctx)
{
	for (int dev = 0; dev < MAX_DEVICES; dev++) {
		if (sass.dev_state[dev] != 1 || sass.cfg_ctx[dev] != ctx)
			continue;
		CUpti_SassMetricsUnsetConfig_Params p = {CUpti_SassMetricsUnsetConfig_Params_STRUCT_SIZE};
		p.deviceIndex = (uint32_t)dev;
		sass_logged(cuptiSassMetricsUnsetConfig(&p), "cuptiSassMetricsUnsetConfig");
		sass.dev_state[dev] = 0;
		sass.cfg_ctx[dev] = NULL;
	}
	pcs_context_destroyed(ctx);
}

/* Does a kernel flagged for trigger ("rule ID", "rules ID, ID" or
 * "--source") get opcodes?  With --source, or when one of those rules is in
 * GA_ENV_SOURCE_OPCODES ("ID,ID": the rules whose models read them). */
static int needs_opcodes(const char *trigger)
{
	const char *list = sass.opcode_rules;

	if (sass.mode == MODE_FORCE)
		return 1;
	if (!trigger || !list || !*list)
		return 0;
	for (const char *id = list; *id;) {
		size_t n = strcspn(id, ",");
		for (const char *t = strstr(trigger, " "); n && t; t = strstr(t + 1, " ")) {
			const char *c = t + 1;
			if (strncmp(c, id, n) == 0 && (c[n] == ',' || c[n] == '\0'))
				return 1;
		}
		id += n + (id[n] == ',');
	}
	return 0;
}

int ga_sass_replay_possible(void)
{
	if (sass.replay_mode == REPLAY_OFF)
		return 0;
	return sass.mode == MODE_FORCE || sass.replay_mode == REPLAY_ALL || sass.opcode_rules;
}

int ga_sass_replay_worth(const char *mangled, uint32_t ctx)
{
	want *w = find_want(mangled, ctx);

	if (!w || w->done || sass.replay_mode == REPLAY_OFF)
		return 0;
	return sass.replay_mode == REPLAY_ALL || needs_opcodes(w->trigger);
}

/* The measured launch is not a profiled one: count it like those past
 * --max-per-kernel so its GPU time still counts. */
static void write_unprofiled(const char *mangled)
{
	ga_unprofiled u = {(char *)mangled, sass.pid, {sass.grid[0], sass.grid[1], sass.grid[2]},
	                   {sass.block[0], sass.block[1], sass.block[2]}, 1, 0, ga_nvtx_path()};
	ga_rec_unprofiled(&u);
	free(u.nvtx);
}

void ga_sass_end_replay(void)
{
	sass.replay = 1;
	ga_sass_end();
}

void ga_sass_end(void)
{
	want *w = sass.active;
	CUcontext ctx = sass.ctx;
	CUpti_SassMetrics_Data *data = NULL;
	size_t nrec = 0, ninst = 0;
	ga_source src = {0};
	CUptiResult r;

	if (!w)
		return;
	if (sass.active_kind == ACT_PCS) {
		pcs_end();
		return;
	}
	sass.active = NULL;
	{
		CUresult cr = cuCtxSynchronize();
		sass_logf("cuCtxSynchronize -> %d", (int)cr);
	}
	{
		CUpti_SassMetricsGetDataProperties_Params p = {CUpti_SassMetricsGetDataProperties_Params_STRUCT_SIZE};
		p.ctx = ctx;
		r = sass_logged(cuptiSassMetricsGetDataProperties(&p), "cuptiSassMetricsGetDataProperties");
		if (r != CUPTI_SUCCESS) {
			sass_note("reading SASS metrics of %s failed: %s", w->mangled, ga_cupti_result_string(r));
			goto disable;
		}
		nrec = p.numOfPatchedInstructionRecords;
		ninst = p.numOfInstances;
		sass_logf("%zu records, %zu instances", nrec, ninst);
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
		r = sass_logged(cuptiSassMetricsFlushData(&p), "cuptiSassMetricsFlushData");
		if (r != CUPTI_SUCCESS) {
			sass_note("flushing SASS metrics of %s failed: %s", w->mangled, ga_cupti_result_string(r));
			goto disable;
		}
	}
disable:
	{
		CUpti_SassMetricsDisable_Params p = {CUpti_SassMetricsDisable_Params_STRUCT_SIZE};
		p.ctx = ctx;
		sass_logged(cuptiSassMetricsDisable(&p), "cuptiSassMetricsDisable");
	}
	activity_kernels_resume();
	if (!sass.replay)
		write_unprofiled(w->mangled);
	sass.replay = 0;
	if (!data)
		goto out;

	src.mangled = ga_xstrdup(w->mangled);
	src.pid = sass.pid;
	memcpy(src.grid, sass.grid, sizeof(src.grid));
	memcpy(src.block, sass.block, sizeof(src.block));
	src.trigger = ga_xstrdup(w->trigger);
	cubin *cb = NULL;
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
				if (!sass.have[sass.dev][m] || d->pInstanceValues[k].metricId != sass.ids[sass.dev][m])
					continue;
				double *slot[M_N] = {&pc->inst, &pc->threads, &pc->sectors, &pc->sectors_ideal,
				                     &pc->wavefronts, &pc->wavefronts_ideal};
				*slot[m] = (isfinite(*slot[m]) ? *slot[m] : 0) +
				           (double)d->pInstanceValues[k].value;
			}
		if (!searched) {
			searched = 1;
			cb = find_cubin(d->cubinCrc, fn, d->pcOffset);
			sass_logf("function %s: cubin crc %x -> %s", fn, d->cubinCrc, cb ? "found" : "not found");
		}
		if (fresh && cb && correlate(cb, fn, d->pcOffset, &pc->file, &pc->line) == 0 &&
		    pc->line > 0)
			src.lineinfo = 1;
	}
	if (!cb)
		sass_note("%s: its cubin was not captured at module load, so only SASS offsets are shown",
		          w->mangled);
	if (cb && needs_opcodes(w->trigger))
		cubin_disassemble(cb, &src);
	sass_logf("%s: %zu PCs, lineinfo %d", w->mangled, src.n_pcs, src.lineinfo);
	ga_rec_source(&src);
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

