/* writer.c: the injection library's records (writer.h). */
#include "writer.h"

#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <jansson.h>

#include "protocol.h"

static struct {
	int fd;
	int pid;
} rec_out = {.fd = -1};

int ga_rec_open(const char *dir, int pid)
{
	char *path = ga_xasprintf("%s/%ld.rec", dir, (long)pid);
	int saved;

	rec_out.pid = pid;
	rec_out.fd = open(path, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0600);
	saved = errno;
	free(path);
	errno = saved;
	return rec_out.fd < 0 ? -1 : 0;
}

void ga_rec_close(void)
{
	if (rec_out.fd >= 0)
		close(rec_out.fd);
	rec_out.fd = -1;
}

void ga_rec_write(void *json)
{
	json_t *obj = json;
	char *s;
	size_t len, off = 0;

	if (rec_out.fd < 0) {
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
		ssize_t w = write(rec_out.fd, s + off, len + 1 - off);
		if (w < 0) {
			if (errno == EINTR)
				continue;
			break;
		}
		off += (size_t)w;
	}
	free(s);
}

/* obj with its "type" set, written. */
static void write_typed(json_t *obj, ga_record_type type)
{
	json_object_set_new(obj, "type", json_string(ga_record_names[type]));
	ga_rec_write(obj);
}

static const char *env_get(const char *name, void *ctx)
{
	(void)ctx;
	return getenv(name);
}

/* start {pid, ppid, tool_version, host, rank, local_rank, world_size,
 * rank_from}: who the process is, in a job of several (procinfo.h). */
void ga_rec_start(int ppid, const char *tool_version)
{
	ga_proc_info who;
	char host[256];
	json_t *rec;

	ga_proc_info_init(&who, rec_out.pid);
	ga_proc_info_from_env(&who, env_get, NULL);
	if (gethostname(host, sizeof(host)) == 0) {
		host[sizeof(host) - 1] = '\0';
		who.host = ga_xstrdup(host);
	}
	rec = ga_proc_info_to_json(&who);
	ga_proc_info_free(&who);
	json_object_set_new(rec, "type", json_string(ga_record_names[GA_REC_START]));
	json_object_set_new(rec, "ppid", json_integer(ppid));
	json_object_set_new(rec, "tool_version", json_string(tool_version ? tool_version : "?"));
	ga_rec_write(rec);
}

void ga_rec_gpu(int index, const char *uuid)
{
	json_t *rec = json_pack("{s:s, s:i, s:i}", "type", ga_record_names[GA_REC_GPU],
	                        "pid", rec_out.pid, "index", index);
	if (rec && uuid)
		json_object_set_new(rec, "uuid", json_string(uuid));
	ga_rec_write(rec);
}

/* device {pid, context, device, passes (the most of one launch), metrics
 * (every valid one), sets [{passes, metrics}]} */
void ga_rec_device(uint32_t context, const ga_device *dev, const ga_rec_set *sets,
                   size_t n_sets)
{
	json_t *rec = json_object(), *all = json_array(), *jsets = json_array();
	size_t most = 0;

	for (size_t s = 0; s < n_sets; s++) {
		const ga_rec_set *ms = &sets[s];
		json_t *names = json_array();
		for (size_t i = 0; i < ms->n_names; i++) {
			json_array_append_new(names, json_string(ms->names[i]));
			if (s == 0 || strcmp(ms->names[i], "gpu__time_duration.sum") != 0)
				json_array_append_new(all, json_string(ms->names[i]));
		}
		json_array_append_new(jsets, json_pack("{s:I, s:o}", "passes", (json_int_t)ms->passes,
		                                       "metrics", names));
		if (ms->passes > most)
			most = ms->passes;
	}
	json_object_set_new(rec, "type", json_string(ga_record_names[GA_REC_DEVICE]));
	json_object_set_new(rec, "pid", json_integer(rec_out.pid));
	json_object_set_new(rec, "context", json_integer(context));
	json_object_set_new(rec, "device", (json_t *)ga_device_to_json(dev));
	json_object_set_new(rec, "passes", json_integer((json_int_t)most));
	json_object_set_new(rec, "metrics", all);
	json_object_set_new(rec, "sets", jsets);
	ga_rec_write(rec);
}

void ga_rec_launch(const ga_profile *p, const ga_launch *l)
{
	write_typed((json_t *)ga_launch_to_json(p, l), GA_REC_LAUNCH);
}

void ga_rec_unprofiled(const ga_unprofiled *u)
{
	write_typed((json_t *)ga_unprofiled_to_json(u), GA_REC_UNPROFILED);
}

void ga_rec_source(const ga_source *src)
{
	write_typed((json_t *)ga_source_to_json(src), GA_REC_SOURCE);
}

void ga_rec_error(const char *code, const char *fmt, ...)
{
	char msg[1024];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	ga_rec_write(json_pack("{s:s, s:i, s:s, s:s}", "type", ga_record_names[GA_REC_ERROR],
	                       "pid", rec_out.pid, "code", code, "message", msg));
}

void ga_rec_bad_metric(const char *metric)
{
	ga_rec_write(json_pack("{s:s, s:i, s:s, s:s, s:s}", "type", ga_record_names[GA_REC_ERROR],
	                       "pid", rec_out.pid, "code", "bad_metric", "metric", metric,
	                       "message", "metric name not known for this chip"));
}

void ga_rec_end(long launches, long matched, long profiled, double setup_seconds,
                double measure_seconds, long loop_launches, long graph_launches)
{
	ga_rec_write(json_pack("{s:s, s:i, s:I, s:I, s:I, s:f, s:f, s:I, s:I}", "type",
	                       ga_record_names[GA_REC_END], "pid", rec_out.pid,
	                       "launches", (json_int_t)launches, "matched", (json_int_t)matched,
	                       "profiled", (json_int_t)profiled, "setup_seconds", setup_seconds,
	                       "measure_seconds", measure_seconds,
	                       "loop_launches", (json_int_t)loop_launches,
	                       "graph_launches", (json_int_t)graph_launches));
}
