/* records.c: the run directory's records into a profile (records.h).
 *
 * Each process of the program appends to its own RUN_DIR/<pid>.rec, one
 * JSON object a line, written whole by one write(2) (protocol.h lists the
 * types).  A line without its newline was cut short by a kill and is
 * skipped, as is one that does not parse. */
#include "records.h"

#include <dirent.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include "protocol.h"

static void note_error(ga_records *g, json_t *rec)
{
	const char *code = json_string_value(json_object_get(rec, "code"));
	const char *msg = json_string_value(json_object_get(rec, "message"));
	if (!code)
		code = "cupti";
	if (!msg)
		msg = "";
	if (strcmp(code, "bad_metric") == 0) {
		const char *m = json_string_value(json_object_get(rec, "metric"));
		for (size_t i = 0; m && i < g->n_bad; i++)
			if (strcmp(g->bad_metrics[i], m) == 0)
				return;
		if (m)
			GA_PUSH(g->bad_metrics, g->n_bad, g->cap_bad, ga_xstrdup(m));
		return;
	}
	if (strcmp(code, "source") == 0) {
		if (!g->source_msg)
			g->source_msg = ga_xstrdup(msg);
		g->source_notes++;
		return;
	}
	if (strcmp(code, "no_replay") == 0) {
		if (!g->no_replay_msg)
			g->no_replay_msg = ga_xstrdup(msg);
		g->no_replay_notes++;
		return;
	}
	if (strcmp(code, "timeline") == 0) {
		if (!g->timeline_msg)
			g->timeline_msg = ga_xstrdup(msg);
		return;
	}
	if (strcmp(code, "watchdog") == 0) {
		if (!g->watchdog_msg)
			g->watchdog_msg = ga_xstrdup(msg);
		g->watchdog++;
		return;
	}
	if (strcmp(code, "loop_replay") == 0) {
		if (!g->loop_msg)
			g->loop_msg = ga_xstrdup(msg);
		g->loop_notes++;
		return;
	}
	if (strcmp(code, "busy") == 0) {
		if (!g->busy_msg)
			g->busy_msg = ga_xstrdup(msg);
		g->busy++;
		return;
	}
	if (strcmp(code, "permission") == 0)
		g->permission++;
	else if (strcmp(code, "another_profiler") == 0)
		g->another_profiler++;
	else if (strcmp(code, "counters_busy") == 0)
		g->counters_busy++;
	else if (strcmp(code, "unsupported") == 0)
		g->unsupported++;
	else
		g->cupti_errors++;
	if (!g->first_error)
		g->first_error = ga_xstrdup(msg);
}

void ga_records_free(ga_records *g)
{
	free(g->first_error);
	free(g->busy_msg);
	free(g->source_msg);
	free(g->no_replay_msg);
	free(g->watchdog_msg);
	free(g->timeline_msg);
	free(g->loop_msg);
	for (size_t i = 0; i < g->n_bad; i++)
		free(g->bad_metrics[i]);
	free(g->bad_metrics);
}

/* A kernel's source-level records (SASS metrics of one launch, PC samples
 * of the stall run) become one "sources" entry: merged by process (any
 * process for the stall run's, whose pids are new) and kernel, preferring
 * the entry of the same grid and block.  Takes s over; a stall-run record
 * of a kernel without one joins it under the pid of the kernel's first
 * launch, and one of a kernel the first run did not profile is dropped. */
static void add_source(ga_profile *p, ga_source *s, int any_pid)
{
	ga_source *to = NULL;
	for (size_t i = 0; i < p->n_sources; i++) {
		ga_source *t = &p->sources[i];
		if ((!any_pid && t->pid != s->pid) || !t->mangled || !s->mangled ||
		    strcmp(t->mangled, s->mangled))
			continue;
		if (!to || (memcmp(t->grid, s->grid, sizeof(t->grid)) == 0 &&
		            memcmp(t->block, s->block, sizeof(t->block)) == 0))
			to = t;
	}
	if (to) {
		s->pid = to->pid;
		ga_source_merge(to, s);
		ga_source_free(s);
		return;
	}
	if (any_pid) {   /* a kernel with stall samples only: under its first-run pid */
		size_t i = 0;
		while (i < p->n_launches &&
		       (!p->launches[i].mangled || strcmp(p->launches[i].mangled, s->mangled)))
			i++;
		if (i == p->n_launches) {
			ga_source_free(s);
			return;
		}
		s->pid = p->launches[i].pid;
	}
	GA_PUSH(p->sources, p->n_sources, p->cap_sources, *s);
}

static void read_end(ga_profile *p, ga_records *g, json_t *rec)
{
	g->n_ended++;
	p->collection.profiler_setup_seconds +=
		json_number_value(json_object_get(rec, "setup_seconds"));
	p->collection.profiler_measure_seconds +=
		json_number_value(json_object_get(rec, "measure_seconds"));
	p->collection.loop_replay_launches +=
		(long)json_integer_value(json_object_get(rec, "loop_launches"));
	p->collection.graph_launches +=
		(long)json_integer_value(json_object_get(rec, "graph_launches"));
}

/* The first device record gives the profile its device, pass count, metric
 * sets and metric list. */
static void read_device(ga_profile *p, ga_records *g, json_t *rec, const char *where,
                        ga_error *err)
{
	if (g->have_device)
		return;
	if (ga_device_from_json(&p->device, json_object_get(rec, "device"), where, err) == 0)
		g->have_device = 1;
	json_t *passes = json_object_get(rec, "passes");
	if (json_is_integer(passes))
		p->collection.passes = (int)json_integer_value(passes);
	p->collection.metric_sets = (int)json_array_size(json_object_get(rec, "sets"));
	json_t *ms = json_object_get(rec, "metrics");
	size_t i;
	json_t *m;
	json_array_foreach(ms, i, m)
		if (json_is_string(m))
			ga_profile_add_metric(p, json_string_value(m));
}

static void read_source(ga_profile *p, ga_records *g, json_t *rec, const char *where)
{
	ga_error serr = {0};
	ga_source *one = NULL;
	size_t n1 = 0, cap1 = 0;

	if (ga_source_from_json(&one, &n1, &cap1, rec, where, &serr) != 0) {
		g->truncated_lines++;
	} else {
		g->stall_records += g->stall_pass;
		add_source(p, &one[0], g->stall_pass);
	}
	free(one);
}

/* Who the process was (start) and a GPU it used (gpu): its record in the
 * profile's "processes".  A record that does not parse is skipped. */
static void read_who(ga_profile *p, ga_records *g, json_t *rec, const char *where,
                     ga_record_type type)
{
	ga_error e = {0};
	json_t *pid = json_object_get(rec, "pid");

	if (!json_is_integer(pid)) {
		g->truncated_lines++;
		return;
	}
	ga_proc_info *pi = ga_profile_proc_add(p, (int)json_integer_value(pid));
	if (type == GA_REC_GPU) {
		json_t *ix = json_object_get(rec, "index");
		if (json_is_integer(ix) && json_integer_value(ix) >= 0 &&
		    json_integer_value(ix) <= INT_MAX)
			ga_proc_info_add_gpu(pi, (int)json_integer_value(ix),
			                     json_string_value(json_object_get(rec, "uuid")));
		return;
	}
	ga_proc_info who;
	if (ga_proc_info_from_json(&who, rec, where, &e) != 0) {
		g->truncated_lines++;
		return;
	}
	ga_proc_info_fill(pi, &who);
	ga_proc_info_free(&who);
}

/* One parsed record; where: "FILE:LINE". */
static void read_record(ga_profile *p, ga_records *g, json_t *rec, const char *path,
                        long lineno, ga_error *err)
{
	ga_record_type type = ga_record_type_of(json_string_value(json_object_get(rec, "type")));
	char *where;
	ga_error lerr = {0};

	if (g->stall_pass && type != GA_REC_SOURCE && type != GA_REC_ERROR)
		return;
	where = ga_xasprintf("%s:%ld", path, lineno);
	switch (type) {
	case GA_REC_START:
		g->n_processes++;
		read_who(p, g, rec, where, type);
		break;
	case GA_REC_GPU:
		read_who(p, g, rec, where, type);
		break;
	case GA_REC_END:
		read_end(p, g, rec);
		break;
	case GA_REC_DEVICE:
		read_device(p, g, rec, where, err);
		break;
	case GA_REC_LAUNCH:
		if (ga_launch_from_json(p, rec, where, &lerr) != 0)
			g->truncated_lines++;
		break;
	case GA_REC_UNPROFILED:
		if (ga_unprofiled_from_json(p, rec, path, &lerr) != 0)
			g->truncated_lines++;
		break;
	case GA_REC_SOURCE:
		read_source(p, g, rec, where);
		break;
	case GA_REC_ERROR:
		note_error(g, rec);
		break;
	case GA_REC_NONE:
	case GA_REC_N:
		break;
	}
	free(where);
}

int ga_records_read_file(const char *path, ga_profile *p, ga_records *g, ga_error *err)
{
	size_t len = 0;
	/* the program's own records: as large as its run made them */
	char *text = ga_read_file_max(path, SIZE_MAX, &len, err);
	char *line, *next;
	long lineno = 0;

	if (!text)
		return -1;
	for (line = text; line && *line; line = next) {
		char *nl = strchr(line, '\n');
		lineno++;
		if (!nl) {
			g->truncated_lines++;   /* cut short by a kill */
			break;
		}
		*nl = '\0';
		next = nl + 1;
		json_error_t jerr;
		json_t *rec = json_loads(line, 0, &jerr);
		if (!rec) {
			g->truncated_lines++;
			continue;
		}
		read_record(p, g, rec, path, lineno, err);
		json_decref(rec);
	}
	free(text);
	return 0;
}

/* A process's timeline, RUN_DIR/<pid>.timeline.json (activity.c): the
 * last one it wrote, whole (it is renamed into place); one that does not
 * parse counts as a truncated line. */
static void read_timeline(const char *path, ga_profile *p, ga_records *g)
{
	json_error_t jerr;
	json_t *j = json_load_file(path, 0, &jerr);
	ga_timeline t;
	ga_error err = {0};
	int ok = j && ga_timeline_from_json(&t, j, path, &err) == 0;

	json_decref(j);
	if (!ok) {
		g->truncated_lines++;
		return;
	}
	g->timelines_cut += !t.complete;
	ga_profile_set_timeline(p, &t);
}

void ga_records_read_dir(const char *dir, ga_profile *p, ga_records *g)
{
	DIR *d = opendir(dir);
	struct dirent *e;
	if (!d)
		return;
	while ((e = readdir(d))) {
		if (ga_str_has_suffix(e->d_name, ".timeline.json")) {
			char *f = ga_xasprintf("%s/%s", dir, e->d_name);
			read_timeline(f, p, g);
			free(f);
			continue;
		}
		if (!ga_str_has_suffix(e->d_name, ".rec"))
			continue;
		char *f = ga_xasprintf("%s/%s", dir, e->d_name);
		ga_error ferr = {0};
		ga_records_read_file(f, p, g, &ferr);
		free(f);
	}
	closedir(d);
}

void ga_records_note_run(const ga_records *g, ga_buf *note)
{
	if (g->n_ended < g->n_processes)
		ga_buf_printf(note, "%d of %d processes ended without the normal exit path "
		              "(crash, signal or _exit). ", g->n_processes - g->n_ended,
		              g->n_processes);
	if (g->busy)
		ga_buf_printf(note, "%d process(es) ran unprofiled: %s. ", g->busy, g->busy_msg);
	if (g->counters_busy)
		ga_buf_printf(note, "%d process(es) found the counters taken and ran on "
		              "unprofiled: %s. ", g->counters_busy, GA_COUNTERS_BUSY);
	if (g->cupti_errors)
		ga_buf_printf(note, "%d CUPTI error(s) while profiling, the first: %s. ",
		              g->cupti_errors, g->first_error ? g->first_error : "?");
	if (g->timeline_msg)
		ga_buf_printf(note, "timeline: %s. ", g->timeline_msg);
	if (g->timelines_cut)
		ga_buf_printf(note, "the timeline of %d process(es) ends at its last snapshot, "
		              "taken a few seconds before the process ended. ", g->timelines_cut);
	if (g->watchdog)
		ga_buf_printf(note, "%s%s. ", g->watchdog_msg,
		              g->watchdog > 1 ? " (and in more processes)" : "");
	if (g->no_replay_notes)
		ga_buf_printf(note, "%s%s. ", g->no_replay_msg,
		              g->no_replay_notes > 1 ? " (in more processes too)" : "");
	if (g->loop_notes)
		ga_buf_printf(note, "%s%s. ", g->loop_msg,
		              g->loop_notes > 1 ? " (in more processes too)" : "");
	if (g->source_notes)
		ga_buf_printf(note, "source lines: %s%s. ", g->source_msg,
		              g->source_notes > 1 ? " (and more notes like it)" : "");
}

void ga_records_note_data(const ga_records *g, ga_buf *note)
{
	if (g->truncated_lines)
		ga_buf_printf(note, "%d record(s) were cut short and skipped. ", g->truncated_lines);
	if (g->n_bad) {
		ga_buf_puts(note, "metrics unknown to this GPU, not collected:");
		for (size_t i = 0; i < g->n_bad; i++)
			ga_buf_printf(note, " %s", g->bad_metrics[i]);
		ga_buf_puts(note, ". ");
	}
}

int ga_records_failure(const ga_records *g, const ga_profile *p, ga_error *err)
{
	if (g->permission)
		return ga_fail(err, GA_ERR_PERMISSION,
		        "no permission to read GPU performance counters "
		        "(CUPTI_ERROR_INSUFFICIENT_PRIVILEGES, ncu calls it ERR_NVGPUCTRPERM).\n"
		        "  Fix one of:\n"
		        "  - run as root: sudo gpuadvise ...\n"
		        "  - grant the capability: sudo setcap cap_sys_admin+ep (or cap_perfmon+ep on "
		        "newer drivers) on the program\n"
		        "  - allow every user: put 'options nvidia NVreg_RestrictProfilingToAdminUsers=0' "
		        "in /etc/modprobe.d/nvidia-profiling.conf, then reload the driver or reboot\n"
		        "  /proc/driver/nvidia/params shows RmProfilingAdminOnly: 1 while restricted.");
	if (g->another_profiler)
		return ga_fail(err, GA_ERR_PROFILING, "%s. Only one CUPTI-based tool can attach to a "
		        "process: run the program without ncu, nsys, cuda-gdb or framework profilers, "
		        "or unset CUDA_INJECTION64_PATH.", g->first_error);
	if (g->counters_busy && p->n_launches == 0)
		return ga_fail(err, GA_ERR_PROFILING, "%s (%s).\n  Fix: stop the other tool, or pause "
		        "DCGM's profiling with 'dcgmi profile --pause' (and '--resume' after), then "
		        "run again.", GA_COUNTERS_BUSY, g->first_error);
	if (g->unsupported)
		return ga_fail(err, GA_ERR_PROFILING, "this GPU setup cannot be profiled: %s. (MPS, "
		        "vGPU without profiling, confidential computing and MIG slices restrict "
		        "counter access.)", g->first_error);
	if (g->cupti_errors && p->n_launches == 0)
		return ga_fail(err, GA_ERR_PROFILING, "CUPTI failed: %s", g->first_error);
	if (g->n_bad && p->n_launches == 0 && g->have_device == 0)
		return ga_fail(err, GA_ERR_PROFILING, "none of the requested metrics is known to this GPU");
	return 0;
}
