/* timeline.c: the timeline's model, its sweep and its JSON form.  See
 * timeline.h. */
#include "timeline.h"

#include <jansson.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

static const char *const dir_names[GA_DIR__N] = {"htod", "dtoh", "dtod", "htoh", "ptop"};
static const char *const mem_names[GA_MEM__N] = {"pageable", "pinned", "device", "managed",
                                                 "other"};
static const char *const host_names[GA_HOST__N] = {"launch", "sync", "copy", "alloc",
                                                   "excluded"};
static const char *const idle_names[GA_IDLE__N] = {"blocking", "launching", "other"};

const char *ga_dir_name(int dir) { return dir >= 0 && dir < GA_DIR__N ? dir_names[dir] : "?"; }
const char *ga_mem_name(int mem) { return mem >= 0 && mem < GA_MEM__N ? mem_names[mem] : "?"; }

const char *ga_dir_words(int dir)
{
	static const char *const words[GA_DIR__N] = {"host to device", "device to host",
	                                              "device to device", "host to host",
	                                              "peer to peer"};
	return dir >= 0 && dir < GA_DIR__N ? words[dir] : "copy";
}
const char *ga_host_name(int k) { return k >= 0 && k < GA_HOST__N ? host_names[k] : "?"; }
const char *ga_idle_name(int k) { return k >= 0 && k < GA_IDLE__N ? idle_names[k] : "?"; }

void ga_timeline_free(ga_timeline *t)
{
	if (!t)
		return;
	for (size_t i = 0; i < t->n_kernels; i++) {
		free(t->kernels[i].mangled);
		free(t->kernels[i].name);
	}
	free(t->kernels);
	free(t->devices);
	free(t->events);
	memset(t, 0, sizeof(*t));
}

double ga_timeline_observed_ns(const ga_timeline *t)
{
	double v = t->wall_ns - t->excluded_ns;
	return v > 0 ? v : 0;
}

void ga_copy_stat_add(ga_copy_stat *to, const ga_copy_stat *from)
{
	to->count += from->count;
	to->bytes += from->bytes;
	to->ns += from->ns;
	to->small += from->small;
	to->small_ns += from->small_ns;
}

void ga_timeline_devices_sum(const ga_timeline *t, ga_tl_device *sum)
{
	memset(sum, 0, sizeof(*sum));
	sum->device = -1;
	for (size_t i = 0; i < t->n_devices; i++) {
		const ga_tl_device *d = &t->devices[i];
		sum->busy_ns += d->busy_ns;
		sum->kernel_ns += d->kernel_ns;
		sum->copy_ns += d->copy_ns;
		sum->copy_exposed_ns += d->copy_exposed_ns;
		for (int a = 0; a < GA_DIR__N; a++) {
			sum->dir_ns[a] += d->dir_ns[a];
			sum->overlap_ns[a] += d->overlap_ns[a];
		}
		for (int k = 0; k < GA_IDLE__N; k++)
			sum->idle_ns[k] += d->idle_ns[k];
		sum->idle_after_sync_ns += d->idle_after_sync_ns;
		for (int a = 0; a < GA_DIR__N; a++)
			for (int m = 0; m < GA_MEM__N; m++)
				ga_copy_stat_add(&sum->copy[a][m], &d->copy[a][m]);
		ga_copy_stat_add(&sum->set, &d->set);
		sum->kernels += d->kernels;
		sum->kernel_sum_ns += d->kernel_sum_ns;
		sum->default_stream_ops += d->default_stream_ops;
		sum->streams += d->streams;
	}
}

/* ---- the sweep ---------------------------------------------------------- */

void ga_sweep_init(ga_sweep *s)
{
	memset(s, 0, sizeof(*s));
	for (int d = 0; d < GA_TL_MAX_DEVICES; d++)
		s->dev[d].device = d;
}

/* What the host was doing: a blocking call wins over a launch. */
static int idle_cause(const ga_sweep *s)
{
	if (s->host[GA_HOST_SYNC] > 0 || s->host[GA_HOST_COPY] > 0 || s->host[GA_HOST_ALLOC] > 0)
		return GA_IDLE_BLOCKING;
	if (s->host[GA_HOST_LAUNCH] > 0)
		return GA_IDLE_LAUNCHING;
	return GA_IDLE_OTHER;
}

/* Charge the span [s->t, t) to what is open. */
static void charge(ga_sweep *s, double t)
{
	double dt = t - s->t;

	if (!(dt > 0))
		return;
	for (int k = 0; k < GA_HOST__N; k++)
		if (s->host[k] > 0)
			s->host_ns[k] += dt;
	if (s->host[GA_HOST_EXCLUDED] > 0)   /* the profiler's: host_ns[GA_HOST_EXCLUDED] */
		return;
	s->all_ns[idle_cause(s)] += dt;
	for (int d = 0; d < GA_TL_MAX_DEVICES; d++) {
		ga_tl_device *dv = &s->dev[d];
		int copies = 0;
		if (!s->used[d])
			continue;
		for (int a = 0; a < GA_DIR__N; a++) {
			if (s->copy[d][a] <= 0)
				continue;
			copies++;
			dv->dir_ns[a] += dt;
			if (s->kernel[d] > 0)
				dv->overlap_ns[a] += dt;
		}
		if (s->kernel[d] > 0 || copies > 0 || s->set[d] > 0) {
			dv->busy_ns += dt;
			if (s->kernel[d] > 0)
				dv->kernel_ns += dt;
			if (copies > 0) {
				dv->copy_ns += dt;
				if (s->kernel[d] == 0)
					dv->copy_exposed_ns += dt;
			}
		} else {
			dv->idle_ns[idle_cause(s)] += dt;
			if (s->after_sync[d])
				dv->idle_after_sync_ns += dt;
		}
	}
}

void ga_sweep_edge(ga_sweep *s, const ga_edge *e)
{
	double t = e->t;
	int d = e->device;

	if (!s->started) {
		s->started = 1;
		s->t = t;
	}
	if (t < s->t)
		t = s->t;         /* late: counted from now on */
	charge(s, t);
	s->t = t;
	if (d < 0) {
		if (e->kind < 0 || e->kind >= GA_HOST__N)
			return;
		s->host[e->kind] += e->delta;
		if (s->host[e->kind] < 0)
			s->host[e->kind] = 0;
		/* The end of a synchronisation: what the GPU waits for next is
		 * the host's next work. */
		if (e->kind == GA_HOST_SYNC && e->delta < 0)
			for (int k = 0; k < GA_TL_MAX_DEVICES; k++)
				s->after_sync[k] = 1;
		return;
	}
	if (d >= GA_TL_MAX_DEVICES)
		return;
	if (!s->used[d])
		for (int k = 0; k < GA_IDLE__N; k++)
			s->pre_idle_ns[d][k] = s->all_ns[k];
	s->used[d] = 1;
	int *c = e->kind == GA_GPU_KERNEL ? &s->kernel[d]
	       : e->kind == GA_GPU_SET ? &s->set[d]
	       : e->dir >= 0 && e->dir < GA_DIR__N ? &s->copy[d][e->dir] : NULL;
	if (!c)
		return;
	*c += e->delta;
	if (*c < 0)
		*c = 0;
	if (e->delta > 0)
		s->after_sync[d] = 0;
}

int ga_edge_cmp(const void *a, const void *b)
{
	const ga_edge *x = a, *y = b;
	if (x->t != y->t)
		return x->t < y->t ? -1 : 1;
	return x->delta - y->delta;   /* -1 (end) before +1 (start) */
}

void ga_sweep_result(const ga_sweep *s, ga_timeline *t)
{
	size_t n = 0;

	for (int d = 0; d < GA_TL_MAX_DEVICES; d++)
		n += s->used[d] != 0;
	t->devices = ga_xcalloc(n ? n : 1, sizeof(*t->devices));
	t->n_devices = 0;
	for (int d = 0; d < GA_TL_MAX_DEVICES; d++) {
		if (!s->used[d])
			continue;
		ga_tl_device *o = &t->devices[t->n_devices++];
		*o = s->dev[d];
		o->device = d;
		for (int k = 0; k < GA_IDLE__N; k++)
			o->idle_ns[k] += s->pre_idle_ns[d][k];
	}
	for (int k = 0; k < GA_HOST__N; k++)
		t->host_ns[k] = s->host_ns[k];
	t->excluded_ns = s->host_ns[GA_HOST_EXCLUDED];
}

void ga_timeline_sweep_events(const ga_tl_event *ev, size_t n, double span_ns, ga_timeline *out)
{
	ga_edge *e = ga_xcalloc(2 * n + 2, sizeof(*e));
	size_t ne = 0;
	ga_sweep s;
	long kernels[GA_TL_MAX_DEVICES] = {0};
	double ksum[GA_TL_MAX_DEVICES] = {0};

	memset(out, 0, sizeof(*out));
	for (size_t i = 0; i < n; i++) {
		const ga_tl_event *v = &ev[i];
		double a = v->start < 0 ? 0 : v->start, b = v->end > span_ns ? span_ns : v->end;
		if (!(b > a))
			continue;
		if (v->device >= 0 && v->device < GA_TL_MAX_DEVICES && v->kind == GA_GPU_KERNEL) {
			kernels[v->device]++;
			ksum[v->device] += b - a;
		}
		e[ne++] = (ga_edge){a, v->device, v->kind, v->dir, +1};
		e[ne++] = (ga_edge){b, v->device, v->kind, v->dir, -1};
	}
	qsort(e, ne, sizeof(*e), ga_edge_cmp);
	ga_sweep_init(&s);
	ga_sweep_edge(&s, &(ga_edge){0, -1, GA_HOST_LAUNCH, -1, 0});
	for (size_t i = 0; i < ne; i++)
		ga_sweep_edge(&s, &e[i]);
	/* the idle tail of the window */
	ga_sweep_edge(&s, &(ga_edge){span_ns, -1, GA_HOST_LAUNCH, -1, 0});
	ga_sweep_result(&s, out);
	for (size_t i = 0; i < out->n_devices; i++) {
		int d = out->devices[i].device;
		out->devices[i].kernels = kernels[d];
		out->devices[i].kernel_sum_ns = ksum[d];
	}
	out->wall_ns = span_ns;
	out->iteration_ns = NAN;
	free(e);
}

/* ---- JSON ----------------------------------------------------------------- */

static void put_num(json_t *o, const char *k, double v)
{
	json_object_set_new(o, k, isfinite(v) ? json_real(v) : json_null());
}

static json_t *copy_json(const ga_copy_stat *c)
{
	json_t *o = json_object();
	json_object_set_new(o, "count", json_integer(c->count));
	put_num(o, "bytes", c->bytes);
	put_num(o, "ns", c->ns);
	json_object_set_new(o, "small", json_integer(c->small));
	put_num(o, "small_ns", c->small_ns);
	return o;
}

static json_t *device_json(const ga_tl_device *d)
{
	json_t *o = json_object(), *idle = json_object(), *copies = json_array();
	json_t *dir = json_object(), *ov = json_object();

	json_object_set_new(o, "device", json_integer(d->device));
	put_num(o, "busy_ns", d->busy_ns);
	put_num(o, "kernel_ns", d->kernel_ns);
	put_num(o, "copy_ns", d->copy_ns);
	put_num(o, "copy_exposed_ns", d->copy_exposed_ns);
	for (int k = 0; k < GA_IDLE__N; k++)
		put_num(idle, idle_names[k], d->idle_ns[k]);
	json_object_set_new(o, "idle_ns", idle);
	put_num(o, "idle_after_sync_ns", d->idle_after_sync_ns);
	for (int a = 0; a < GA_DIR__N; a++) {
		put_num(dir, dir_names[a], d->dir_ns[a]);
		put_num(ov, dir_names[a], d->overlap_ns[a]);
	}
	json_object_set_new(o, "direction_ns", dir);
	json_object_set_new(o, "overlap_ns", ov);
	for (int a = 0; a < GA_DIR__N; a++)
		for (int m = 0; m < GA_MEM__N; m++) {
			const ga_copy_stat *c = &d->copy[a][m];
			if (!c->count)
				continue;
			json_t *x = copy_json(c);
			json_object_set_new(x, "direction", json_string(dir_names[a]));
			json_object_set_new(x, "memory", json_string(mem_names[m]));
			json_array_append_new(copies, x);
		}
	json_object_set_new(o, "copies", copies);
	json_object_set_new(o, "sets", copy_json(&d->set));
	json_object_set_new(o, "kernels", json_integer(d->kernels));
	put_num(o, "kernel_sum_ns", d->kernel_sum_ns);
	json_object_set_new(o, "default_stream_ops", json_integer(d->default_stream_ops));
	json_object_set_new(o, "streams", json_integer(d->streams));
	return o;
}

static json_t *dims_json(const unsigned d[3])
{
	return json_pack("[iii]", (int)d[0], (int)d[1], (int)d[2]);
}

void *ga_timeline_to_json(const ga_timeline *t)
{
	json_t *o = json_object(), *host = json_object(), *calls = json_object();
	json_t *devs = json_array(), *ks = json_array(), *evs = json_array();

	json_object_set_new(o, "pid", json_integer(t->pid));
	put_num(o, "wall_ns", t->wall_ns);
	put_num(o, "excluded_ns", t->excluded_ns);
	put_num(o, "late_ns", t->late_ns);
	if (t->tool_kernels) {
		json_object_set_new(o, "tool_kernels", json_integer(t->tool_kernels));
		put_num(o, "tool_ns", t->tool_ns);
	}
	for (int k = 0; k < GA_HOST__N; k++) {
		put_num(host, host_names[k], t->host_ns[k]);
		json_object_set_new(calls, host_names[k], json_integer(t->host_calls[k]));
	}
	json_object_set_new(o, "host_ns", host);
	json_object_set_new(o, "host_calls", calls);
	for (size_t i = 0; i < t->n_devices; i++)
		json_array_append_new(devs, device_json(&t->devices[i]));
	json_object_set_new(o, "devices", devs);
	for (size_t i = 0; i < t->n_kernels; i++) {
		const ga_tl_kernel *k = &t->kernels[i];
		json_t *x = json_object();
		json_object_set_new(x, "mangled", json_string(k->mangled ? k->mangled : "?"));
		if (k->name)
			json_object_set_new(x, "name", json_string(k->name));
		json_object_set_new(x, "grid", dims_json(k->grid));
		json_object_set_new(x, "block", dims_json(k->block));
		json_object_set_new(x, "launches", json_integer(k->launches));
		put_num(x, "total_ns", k->total_ns);
		json_array_append_new(ks, x);
	}
	json_object_set_new(o, "kernels", ks);
	json_object_set_new(o, "iterations", json_integer(t->iterations));
	json_object_set_new(o, "period", json_integer(t->period));
	put_num(o, "iteration_ns", t->iteration_ns);
	put_num(o, "window_ns", t->window_ns);
	json_object_set_new(o, "window_is_iteration", json_boolean(t->window_is_iteration));
	for (size_t i = 0; i < t->n_events; i++) {
		const ga_tl_event *e = &t->events[i];
		/* [start, end, device, stream, kind, dir, kernel]: compact */
		json_array_append_new(evs, json_pack("[ffiiiiI]", e->start, e->end, e->device,
		                                     (int)e->stream, e->kind, e->dir,
		                                     (json_int_t)e->kernel));
	}
	json_object_set_new(o, "events", evs);
	json_object_set_new(o, "complete", json_boolean(t->complete));
	return o;
}

/* ---- reading ---- */

static int bad(ga_error *err, const char *where, const char *what)
{
	return ga_fail(err, GA_ERR_PROFILE, "%s: timeline: %s", where, what);
}

/* A number field: absent or null leaves *v as it is (NAN for doubles
 * the caller set); present, it must be a number, not negative. */
static int num(json_t *o, const char *k, double *v, const char *where, ga_error *err)
{
	json_t *x = json_object_get(o, k);
	if (!x || json_is_null(x))
		return 0;
	if (!json_is_number(x) || !(json_number_value(x) >= 0) || !isfinite(json_number_value(x)))
		return ga_fail(err, GA_ERR_PROFILE, "%s: timeline: '%s' must be a number >= 0",
		               where, k);
	*v = json_number_value(x);
	return 0;
}

static int count(json_t *o, const char *k, long *v, const char *where, ga_error *err)
{
	json_t *x = json_object_get(o, k);
	if (!x || json_is_null(x))
		return 0;
	if (!json_is_integer(x) || json_integer_value(x) < 0)
		return ga_fail(err, GA_ERR_PROFILE, "%s: timeline: '%s' must be an integer >= 0",
		               where, k);
	*v = (long)json_integer_value(x);
	return 0;
}

static int copy_from(json_t *o, ga_copy_stat *c, const char *where, ga_error *err)
{
	if (!json_is_object(o))
		return bad(err, where, "a copy entry must be an object");
	return count(o, "count", &c->count, where, err) || num(o, "bytes", &c->bytes, where, err) ||
	       num(o, "ns", &c->ns, where, err) ||
	       count(o, "small", &c->small, where, err) ||
	       num(o, "small_ns", &c->small_ns, where, err);
}

static int name_index(const char *const *names, int n, const char *s)
{
	for (int i = 0; s && i < n; i++)
		if (strcmp(names[i], s) == 0)
			return i;
	return -1;
}

static int device_from(json_t *o, ga_tl_device *d, const char *where, ga_error *err)
{
	long dev = 0;
	json_t *idle, *copies, *x;
	size_t i;

	if (!json_is_object(o))
		return bad(err, where, "a device entry must be an object");
	if (count(o, "device", &dev, where, err) || num(o, "busy_ns", &d->busy_ns, where, err) ||
	    num(o, "kernel_ns", &d->kernel_ns, where, err) ||
	    num(o, "copy_ns", &d->copy_ns, where, err) ||
	    num(o, "copy_exposed_ns", &d->copy_exposed_ns, where, err) ||
	    num(o, "idle_after_sync_ns", &d->idle_after_sync_ns, where, err) ||
	    count(o, "kernels", &d->kernels, where, err) ||
	    num(o, "kernel_sum_ns", &d->kernel_sum_ns, where, err) ||
	    count(o, "default_stream_ops", &d->default_stream_ops, where, err) ||
	    count(o, "streams", &d->streams, where, err))
		return -1;
	d->device = (int)dev;
	if ((idle = json_object_get(o, "idle_ns")) && json_is_object(idle))
		for (int k = 0; k < GA_IDLE__N; k++)
			if (num(idle, idle_names[k], &d->idle_ns[k], where, err))
				return -1;
	if ((x = json_object_get(o, "direction_ns")) && json_is_object(x))
		for (int a = 0; a < GA_DIR__N; a++)
			if (num(x, dir_names[a], &d->dir_ns[a], where, err))
				return -1;
	if ((x = json_object_get(o, "overlap_ns")) && json_is_object(x))
		for (int a = 0; a < GA_DIR__N; a++)
			if (num(x, dir_names[a], &d->overlap_ns[a], where, err))
				return -1;
	if ((x = json_object_get(o, "sets")) && copy_from(x, &d->set, where, err))
		return -1;
	copies = json_object_get(o, "copies");
	if (copies && !json_is_array(copies))
		return bad(err, where, "'copies' must be an array");
	json_array_foreach(copies, i, x) {
		int a, m;
		if (!json_is_object(x))
			return bad(err, where, "a copy entry must be an object");
		a = name_index(dir_names, GA_DIR__N, json_string_value(json_object_get(x, "direction")));
		m = name_index(mem_names, GA_MEM__N, json_string_value(json_object_get(x, "memory")));
		if (a < 0 || m < 0)
			return bad(err, where, "a copy's direction or memory is not one of the known");
		if (copy_from(x, &d->copy[a][m], where, err))
			return -1;
	}
	return 0;
}

static int dims_from(json_t *a, unsigned d[3])
{
	if (!json_is_array(a) || json_array_size(a) != 3)
		return -1;
	for (size_t i = 0; i < 3; i++) {
		json_t *v = json_array_get(a, i);
		if (!json_is_integer(v) || json_integer_value(v) < 0 ||
		    json_integer_value(v) > 0x7fffffff)
			return -1;
		d[i] = (unsigned)json_integer_value(v);
	}
	return 0;
}

static int kernels_from(json_t *ks, ga_timeline *t, const char *where, ga_error *err)
{
	size_t i;
	json_t *x;

	if (!ks)
		return 0;
	if (!json_is_array(ks))
		return bad(err, where, "'kernels' must be an array");
	t->kernels = ga_xcalloc(json_array_size(ks) + 1, sizeof(*t->kernels));
	json_array_foreach(ks, i, x) {
		ga_tl_kernel *k = &t->kernels[t->n_kernels];
		const char *m = json_string_value(json_object_get(x, "mangled"));
		if (!json_is_object(x) || !m || dims_from(json_object_get(x, "grid"), k->grid) ||
		    dims_from(json_object_get(x, "block"), k->block))
			return bad(err, where, "a kernel needs 'mangled', 'grid' and 'block'");
		if (count(x, "launches", &k->launches, where, err) ||
		    num(x, "total_ns", &k->total_ns, where, err))
			return -1;
		k->mangled = ga_xstrdup(m);
		const char *nm = json_string_value(json_object_get(x, "name"));
		k->name = nm ? ga_xstrdup(nm) : NULL;
		t->n_kernels++;
	}
	return 0;
}

static int events_from(json_t *evs, ga_timeline *t, const char *where, ga_error *err)
{
	size_t i;
	json_t *x;

	if (!evs)
		return 0;
	if (!json_is_array(evs))
		return bad(err, where, "'events' must be an array");
	t->events = ga_xcalloc(json_array_size(evs) + 1, sizeof(*t->events));
	json_array_foreach(evs, i, x) {
		ga_tl_event *e = &t->events[t->n_events];
		double s, en;
		int dev, stream, kind, dir;
		json_int_t k;
		if (json_unpack(x, "[FFiiiiI]", &s, &en, &dev, &stream, &kind, &dir, &k) != 0 ||
		    !(en >= s) || !isfinite(s) || !isfinite(en) || dev < -1 ||
		    dev >= GA_TL_MAX_DEVICES || kind < 0 ||
		    kind >= (dev < 0 ? GA_HOST__N : GA_GPU__N) || dir < -1 || dir >= GA_DIR__N ||
		    k < -1 || k >= (json_int_t)t->n_kernels)
			return bad(err, where, "an event must be [start, end >= start, device, stream, "
			           "kind, direction, kernel] within the known values");
		*e = (ga_tl_event){s, en, dev, (uint32_t)stream, kind, dir, (long)k};
		t->n_events++;
	}
	return 0;
}

int ga_timeline_from_json(ga_timeline *t, void *json, const char *where, ga_error *err)
{
	json_t *o = json, *x, *devs;
	long pid = 0;
	size_t i;

	memset(t, 0, sizeof(*t));
	t->iteration_ns = NAN;
	if (!json_is_object(o))
		return bad(err, where, "an entry must be an object");
	if (count(o, "pid", &pid, where, err) || num(o, "wall_ns", &t->wall_ns, where, err) ||
	    num(o, "excluded_ns", &t->excluded_ns, where, err) ||
	    num(o, "late_ns", &t->late_ns, where, err) ||
	    count(o, "tool_kernels", &t->tool_kernels, where, err) ||
	    num(o, "tool_ns", &t->tool_ns, where, err) ||
	    count(o, "iterations", &t->iterations, where, err) ||
	    count(o, "period", &t->period, where, err) ||
	    num(o, "iteration_ns", &t->iteration_ns, where, err) ||
	    num(o, "window_ns", &t->window_ns, where, err))
		goto fail;
	t->pid = (int)pid;
	t->window_is_iteration = json_is_true(json_object_get(o, "window_is_iteration"));
	t->complete = json_is_true(json_object_get(o, "complete"));
	if ((x = json_object_get(o, "host_ns")) && json_is_object(x))
		for (int k = 0; k < GA_HOST__N; k++)
			if (num(x, host_names[k], &t->host_ns[k], where, err))
				goto fail;
	if ((x = json_object_get(o, "host_calls")) && json_is_object(x))
		for (int k = 0; k < GA_HOST__N; k++)
			if (count(x, host_names[k], &t->host_calls[k], where, err))
				goto fail;
	devs = json_object_get(o, "devices");
	if (devs && !json_is_array(devs)) {
		bad(err, where, "'devices' must be an array");
		goto fail;
	}
	t->devices = ga_xcalloc(json_array_size(devs) + 1, sizeof(*t->devices));
	json_array_foreach(devs, i, x) {
		if (t->n_devices >= GA_TL_MAX_DEVICES) {
			bad(err, where, "more devices than a process can have here");
			goto fail;
		}
		if (device_from(x, &t->devices[t->n_devices], where, err))
			goto fail;
		t->n_devices++;
	}
	if (kernels_from(json_object_get(o, "kernels"), t, where, err) ||
	    events_from(json_object_get(o, "events"), t, where, err))
		goto fail;
	return 0;
fail:
	ga_timeline_free(t);
	return -1;
}

void *ga_timelines_to_json(const ga_timeline *v, size_t n)
{
	json_t *a = json_array();
	for (size_t i = 0; i < n; i++)
		json_array_append_new(a, ga_timeline_to_json(&v[i]));
	return a;
}

int ga_timelines_from_json(ga_timeline **v, size_t *n, size_t *cap, void *json,
                           const char *label, ga_error *err)
{
	json_t *x;
	size_t i;

	json_array_foreach((json_t *)json, i, x) {
		char *where = ga_xasprintf("%s: timelines[%zu]", label, i);
		ga_timeline t;
		int bad = ga_timeline_from_json(&t, x, where, err);
		size_t k = 0;
		free(where);
		if (bad)
			return -1;
		while (k < *n && (*v)[k].pid != t.pid)
			k++;
		if (k < *n) {   /* a later timeline of a process replaces its earlier one */
			ga_timeline_free(&(*v)[k]);
			(*v)[k] = t;
		} else {
			GA_PUSH(*v, *n, *cap, t);
		}
	}
	return 0;
}
