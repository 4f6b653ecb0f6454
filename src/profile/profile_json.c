/* profile_json.c: the JSON form of a profile (profile.h), saved and loaded.
 * See docs/profile.schema.json for the documented layout.
 *
 * Saving builds jansson objects key by key in a fixed order (jansson keeps
 * insertion order), so the same profile always serialises to the same text.
 * Doubles are written with 17 significant digits so they read back exactly;
 * values that JSON cannot hold (NAN, infinities) are written as null.
 *
 * Loading validates the structure and names the offending field with a JSON
 * path ("FILE: launches[3].grid: expected an array of 3 integers").  Unknown
 * keys are ignored so that older builds can read newer files of the same
 * schema.  A profile that fails to load is left empty (as after
 * ga_profile_init), never half-filled.
 *
 * The json_t values returned by the *_to_json functions are new references
 * owned by the caller; the *_from_json functions only borrow their json
 * argument. */
#include "profile.h"
#include "json_fast.h"

#include <jansson.h>
#include <limits.h>
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

/* Metric names are found through a ga_map (string keys borrowed from
 * profile->metrics) built once per load, so that looking up a value's metric
 * costs O(1), not O(metrics). */

static void index_build(ga_map *ix, const ga_profile *p)
{
	size_t i;

	for (i = 0; i < p->n_metrics; i++)
		ga_strmap_put(ix, p->metrics[i], i);
}

/* ------------------------------------------------------------------------ */
/* Saving                                                                   */

static void json_oom(void)
{
	fprintf(stderr, "gpuadvise: out of memory while building JSON\n");
	abort();
}

/* Length of the valid UTF-8 sequence at s, or 0 if s does not start one. */
static size_t utf8_seq_len(const unsigned char *s)
{
	unsigned char c = s[0], lo = 0x80, hi = 0xBF;
	size_t n, i;

	if (c < 0x80)
		return 1;
	if (c >= 0xC2 && c <= 0xDF)
		n = 2;
	else if (c >= 0xE0 && c <= 0xEF)
		n = 3;
	else if (c >= 0xF0 && c <= 0xF4)
		n = 4;
	else
		return 0;
	if (c == 0xE0)
		lo = 0xA0;      /* overlong */
	else if (c == 0xED)
		hi = 0x9F;      /* surrogates */
	else if (c == 0xF0)
		lo = 0x90;      /* overlong */
	else if (c == 0xF4)
		hi = 0x8F;      /* above U+10FFFF */
	if (s[1] < lo || s[1] > hi)
		return 0;
	for (i = 2; i < n; i++)
		if (s[i] < 0x80 || s[i] > 0xBF)
			return 0;
	return n;
}

static int utf8_valid(const char *s)
{
	const unsigned char *u = (const unsigned char *)s;

	while (*u) {
		size_t n = utf8_seq_len(u);
		if (n == 0)
			return 0;
		u += n;
	}
	return 1;
}

/* Copy of s with each byte that is not part of valid UTF-8 replaced by
 * U+FFFD, so that command lines and names in other encodings still make a
 * valid document.  Caller frees. */
static char *utf8_sanitize(const char *s)
{
	const unsigned char *u = (const unsigned char *)s;
	ga_buf b = {0};

	while (*u) {
		size_t n = utf8_seq_len(u);
		if (n == 0) {
			ga_buf_puts(&b, "\xEF\xBF\xBD");
			u++;
		} else {
			ga_buf_printf(&b, "%.*s", (int)n, (const char *)u);
			u += n;
		}
	}
	return ga_buf_take(&b);
}

static json_t *jstring(const char *s)
{
	json_t *v;

	if (utf8_valid(s)) {
		v = json_string(s);
	} else {
		char *clean = utf8_sanitize(s);
		v = json_string(clean);
		free(clean);
	}
	if (!v)
		json_oom();
	return v;
}

static json_t *jcheck(json_t *v)
{
	if (!v)
		json_oom();
	return v;
}

/* Finite doubles as reals; NAN and infinities as null. */
static json_t *jnumber(double v)
{
	return jcheck(isfinite(v) ? json_real(v) : json_null());
}

/* Set obj[key] = v (stealing v).  Keys that are not valid UTF-8 are
 * sanitised rather than dropped. */
static void put(json_t *obj, const char *key, json_t *v)
{
	int rc;

	if (utf8_valid(key)) {
		rc = json_object_set_new(obj, key, v);
	} else {
		char *clean = utf8_sanitize(key);
		rc = json_object_set_new(obj, clean, v);
		free(clean);
	}
	if (rc != 0)
		json_oom();
}

static void put_str(json_t *obj, const char *key, const char *s)
{
	if (s)
		put(obj, key, jstring(s));
}

static void put_int(json_t *obj, const char *key, long long v)
{
	put(obj, key, jcheck(json_integer((json_int_t)v)));
}

static json_t *jdim3(const unsigned d[3])
{
	json_t *a = jcheck(json_array());
	int i;

	for (i = 0; i < 3; i++)
		if (json_array_append_new(a, jcheck(json_integer(d[i]))) != 0)
			json_oom();
	return a;
}

void *ga_device_to_json(const ga_device *d)
{
	json_t *o = jcheck(json_object());
	char cc[32];

	put_str(o, "name", d->name ? d->name : "");
	put_str(o, "chip", d->chip);
	snprintf(cc, sizeof(cc), "%d.%d", d->cc_major, d->cc_minor);
	put_str(o, "compute_capability", cc);
	put_int(o, "sm_count", d->sm_count);
	put(o, "sm_clock_mhz", jnumber(d->sm_clock_mhz));
	put(o, "mem_clock_mhz", jnumber(d->mem_clock_mhz));
	put_int(o, "bus_width_bits", d->bus_width_bits);
	put(o, "mem_bandwidth_gbs", jnumber(d->mem_bandwidth_gbs));
	put_int(o, "l2_bytes", d->l2_bytes);
	put_int(o, "max_threads_per_sm", d->max_threads_per_sm);
	put_int(o, "max_blocks_per_sm", d->max_blocks_per_sm);
	put_int(o, "regs_per_sm", d->regs_per_sm);
	put_int(o, "smem_per_sm", d->smem_per_sm);
	put_int(o, "smem_per_block_optin", d->smem_per_block_optin);
	put_int(o, "warp_size", d->warp_size);
	put_int(o, "driver_version", d->driver_version);
	put_int(o, "cupti_version", d->cupti_version);
	return o;
}

static json_t *collection_to_json(const ga_collection *c)
{
	json_t *o = jcheck(json_object());

	put_str(o, "tool_version", c->tool_version);
	put_str(o, "date", c->date);
	put_str(o, "mode", c->mode);
	put_str(o, "command", c->command);
	put_str(o, "host", c->host);
	put_int(o, "passes", c->passes);
	if (c->metric_sets > 1)
		put_int(o, "metric_sets", c->metric_sets);
	if (c->quick)
		put(o, "quick", json_true());
	if (c->min_share_pct > 0)
		put(o, "min_share_pct", jnumber(c->min_share_pct));
	if (c->profiler_setup_seconds > 0)
		put(o, "profiler_setup_seconds", jnumber(c->profiler_setup_seconds));
	if (c->profiler_measure_seconds > 0)
		put(o, "profiler_measure_seconds", jnumber(c->profiler_measure_seconds));
	if (c->loop_replay_launches > 0)
		put_int(o, "loop_replay_launches", c->loop_replay_launches);
	if (c->graph_launches > 0)
		put_int(o, "graph_launches", c->graph_launches);
	put(o, "wall_seconds", jnumber(c->wall_seconds));
	put_int(o, "app_status", c->app_status);
	put_int(o, "app_signal", c->app_signal);
	put_int(o, "app_peak_rss_kb", c->app_peak_rss_kb);
	put(o, "incomplete", jcheck(json_boolean(c->incomplete)));
	put_str(o, "note", c->note);
	return o;
}

void *ga_launch_to_json(const ga_profile *p, const ga_launch *l)
{
	json_t *o = jcheck(json_object());
	json_t *occ = jcheck(json_object());
	json_t *vals = jcheck(json_object());
	const char *name = l->name ? l->name : l->mangled ? l->mangled : "";
	size_t i;

	put_str(o, "name", name);
	put_str(o, "mangled", l->mangled);
	put_int(o, "pid", l->pid);
	put_int(o, "index", l->index);
	put(o, "grid", jdim3(l->grid));
	put(o, "block", jdim3(l->block));
	put_int(o, "registers", l->registers);
	put_int(o, "smem_static", l->smem_static);
	put_int(o, "smem_dynamic", l->smem_dynamic);
	/* JSON integers here are signed 64-bit; real stream ids are small. */
	put_int(o, "stream", l->stream > (uint64_t)INT64_MAX ? INT64_MAX : (long long)l->stream);
	put_int(o, "context", l->context);
	put(o, "duration_ns", jnumber(l->duration_ns));
	if (isfinite(l->range_ns))
		put(o, "range_ns", jnumber(l->range_ns));
	if (l->metric_set >= 0)
		put_int(o, "metric_set", l->metric_set);
	if (l->nvtx)
		put_str(o, "nvtx", l->nvtx);
	if (l->module)
		put_str(o, "module", l->module);

	put(occ, "theoretical_pct", jnumber(l->occ_theoretical_pct));
	put_int(occ, "limit_blocks", l->occ_limit_blocks);
	put_int(occ, "limit_registers", l->occ_limit_registers);
	put_int(occ, "limit_shared_mem", l->occ_limit_smem);
	put_int(occ, "limit_warps", l->occ_limit_warps);
	put_str(occ, "limiter", l->occ_limiter);
	put(o, "occupancy", occ);

	for (i = 0; i < p->n_metrics; i++)
		put(vals, p->metrics[i], jnumber(l->values ? l->values[i] : NAN));
	put(o, "values", vals);
	return o;
}

/* The file always carries the current schema: this writer knows no other. */
void *ga_profile_to_json(const ga_profile *p)
{
	json_t *root = jcheck(json_object());
	json_t *metrics = jcheck(json_array());
	json_t *launches = jcheck(json_array());
	size_t i;

	put_str(root, "format", GA_PROFILE_FORMAT);
	put_int(root, "schema", GA_PROFILE_SCHEMA);
	put(root, "device", ga_device_to_json(&p->device));
	put(root, "collection", collection_to_json(&p->collection));
	for (i = 0; i < p->n_metrics; i++)
		if (json_array_append_new(metrics, jstring(p->metrics[i])) != 0)
			json_oom();
	put(root, "metrics", metrics);
	for (i = 0; i < p->n_launches; i++)
		if (json_array_append_new(launches, ga_launch_to_json(p, &p->launches[i])) != 0)
			json_oom();
	put(root, "launches", launches);
	if (p->n_unprofiled) {
		json_t *un = jcheck(json_array());
		for (i = 0; i < p->n_unprofiled; i++)
			if (json_array_append_new(un, ga_unprofiled_to_json(&p->unprofiled[i])) != 0)
				json_oom();
		put(root, "unprofiled", un);
	}
	if (p->n_sources) {
		json_t *src = jcheck(json_array());
		for (i = 0; i < p->n_sources; i++)
			if (json_array_append_new(src, ga_source_to_json(&p->sources[i])) != 0)
				json_oom();
		put(root, "sources", src);
	}
	if (p->n_timelines)
		put(root, "timelines", ga_timelines_to_json(p->timelines, p->n_timelines));
	if (p->n_procs)
		put(root, "processes", ga_proc_infos_to_json(p->procs, p->n_procs));
	return root;
}

void *ga_unprofiled_to_json(const ga_unprofiled *u)
{
	json_t *o = jcheck(json_object());
	put_str(o, "mangled", u->mangled);
	put_int(o, "pid", u->pid);
	put(o, "grid", jdim3(u->grid));
	put(o, "block", jdim3(u->block));
	put_int(o, "launches", u->launches);
	if (u->below_min_share)
		put(o, "below_min_share", jcheck(json_true()));
	if (u->nvtx)
		put_str(o, "nvtx", u->nvtx);
	return o;
}

/* jansson hands over many small pieces: append them with memcpy, keeping
 * ga_buf's invariant (NUL-terminated, cap counts the terminator). */
static int dump_to_buf(const char *chunk, size_t size, void *data)
{
	ga_buf *b = data;

	if (b->len + size + 1 > b->cap) {
		size_t ncap = b->cap ? b->cap : 4096;
		while (ncap < b->len + size + 1)
			ncap *= 2;
		b->s = ga_xrealloc(b->s, ncap);
		b->cap = ncap;
	}
	memcpy(b->s + b->len, chunk, size);
	b->len += size;
	b->s[b->len] = '\0';
	return 0;
}

/* The text ends with a newline, ready to be written to a file. */
char *ga_profile_to_string(const ga_profile *p, int indent)
{
	json_t *root = ga_profile_to_json(p);
	size_t flags = JSON_REAL_PRECISION(17);
	ga_buf b = {0};

	if (indent > 0)
		flags |= JSON_INDENT(indent > 31 ? 31 : indent);
	else
		flags |= JSON_COMPACT;
	if (json_dump_callback(root, dump_to_buf, &b, flags) != 0)
		json_oom();
	ga_buf_putc(&b, '\n');
	json_decref(root);
	return ga_buf_take(&b);
}

/* ------------------------------------------------------------------------ */
/* Loading                                                                  */

/* Where we are, for error messages: "LABEL: PATH.FIELD: message". */
typedef struct {
	const char *label;  /* file name, or the caller's `where` */
	const char *path;   /* JSON path of the object being read; "" at the top */
	ga_error *err;
} jctx;

/* field may be "" (the object at path itself) or start with '[' (an index). */
static int field_fail(const jctx *c, const char *field, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));
static int field_fail(const jctx *c, const char *field, const char *fmt, ...)
{
	ga_buf b = {0};
	va_list ap;
	const char *sep = (*c->path && *field && field[0] != '[') ? "." : "";

	ga_buf_printf(&b, "%s: ", c->label);
	if (*c->path || *field)
		ga_buf_printf(&b, "%s%s%s: ", c->path, sep, field);
	va_start(ap, fmt);
	ga_buf_vprintf(&b, fmt, ap);
	va_end(ap);
	ga_fail(c->err, GA_ERR_PROFILE, "%s", b.s);
	ga_buf_free(&b);
	return -1;
}

/* obj[key], or NULL when absent or null (optional fields may be null). */
static json_t *member(json_t *obj, const char *key)
{
	json_t *v = json_object_get(obj, key);

	return json_is_null(v) ? NULL : v;
}

/* *out receives a new copy, or stays untouched when the field is absent. */
static int get_string(const jctx *c, json_t *obj, const char *key, int required, char **out)
{
	json_t *v = member(obj, key);

	if (!v)
		return required ? field_fail(c, key, "missing") : 0;
	if (!json_is_string(v))
		return field_fail(c, key, "expected a string");
	free(*out);
	*out = ga_xstrndup(json_string_value(v), json_string_length(v));
	return 0;
}

static int get_integer(const jctx *c, json_t *obj, const char *key, int required,
                       long long min, long long max, long long *out)
{
	json_t *v = member(obj, key);
	long long x;

	if (!v)
		return required ? field_fail(c, key, "missing") : 0;
	if (!json_is_integer(v))
		return field_fail(c, key, "expected an integer");
	x = json_integer_value(v);
	if (x < min || x > max)
		return field_fail(c, key, "%lld is out of range (%lld to %lld)", x, min, max);
	*out = x;
	return 0;
}

static int get_int(const jctx *c, json_t *obj, const char *key, int required, int min, int *out)
{
	long long x = *out;

	if (get_integer(c, obj, key, required, min, INT_MAX, &x) != 0)
		return -1;
	*out = (int)x;
	return 0;
}

static int get_long(const jctx *c, json_t *obj, const char *key, long min, long *out)
{
	long long x = *out;

	if (get_integer(c, obj, key, 0, min, LONG_MAX, &x) != 0)
		return -1;
	*out = (long)x;
	return 0;
}

/* Every number of a profile read this way is a magnitude (a duration, a
 * clock, a bandwidth, a share): a negative one is no measurement, and
 * would print as "-1.00 ms". */
static int get_double(const jctx *c, json_t *obj, const char *key, double *out)
{
	json_t *v = member(obj, key);

	if (!v)
		return 0;
	if (!json_is_number(v))
		return field_fail(c, key, "expected a number");
	if (json_number_value(v) < 0)
		return field_fail(c, key, "%g is negative; expected a number >= 0",
		                  json_number_value(v));
	*out = json_number_value(v);
	return 0;
}

/* A metric value that counts something: by the Nsight Compute naming
 * convention, a ".sum" of counter values (bytes, instructions, cycles,
 * nanoseconds); other values (ratios, per-second rates) are left as
 * measured. */
static int negative_count(const char *name, json_t *v)
{
	return json_is_number(v) && json_number_value(v) < 0 &&
	       (ga_str_has_suffix(name, ".sum") || strstr(name, ".sum.") != NULL);
}

/* An optional true/false; absent or null: false. */
static int get_bool(const jctx *c, json_t *obj, const char *key, int *out)
{
	json_t *v = member(obj, key);

	if (v && !json_is_boolean(v))
		return field_fail(c, key, "expected true or false");
	*out = v ? json_is_true(v) : 0;
	return 0;
}

static int get_dim3(const jctx *c, json_t *obj, const char *key, unsigned out[3])
{
	json_t *v = member(obj, key);
	size_t i;

	if (!v)
		return field_fail(c, key, "missing");
	if (!json_is_array(v) || json_array_size(v) != 3)
		return field_fail(c, key, "expected an array of 3 integers");
	for (i = 0; i < 3; i++)
		if (!json_is_integer(json_array_get(v, i)))
			return field_fail(c, key, "expected an array of 3 integers");
	for (i = 0; i < 3; i++) {
		long long x = json_integer_value(json_array_get(v, i));
		if (x < 0 || x > (long long)UINT_MAX)
			return field_fail(c, key, "element %zu: %lld is out of range (0 to %u)",
			                  i, x, UINT_MAX);
		out[i] = (unsigned)x;
	}
	return 0;
}

static int parse_cc(const jctx *c, json_t *obj, int *major, int *minor)
{
	json_t *v = member(obj, "compute_capability");
	int n = 0, a, b;

	if (!v)
		return 0;
	if (!json_is_string(v) ||
	    sscanf(json_string_value(v), "%d.%d%n", &a, &b, &n) != 2 ||
	    n == 0 || json_string_value(v)[n] != '\0' || a < 0 || b < 0)
		return field_fail(c, "compute_capability",
		                  "expected a string \"MAJOR.MINOR\" such as \"9.0\"");
	*major = a;
	*minor = b;
	return 0;
}

/* Fill *out from o.  On failure *out holds whatever was read so far and
 * must still be freed by the caller. */
static int device_parse(const jctx *c, json_t *o, ga_device *d)
{
	if (!json_is_object(o))
		return field_fail(c, "", "expected an object");
	if (get_string(c, o, "name", 1, &d->name) ||
	    get_string(c, o, "chip", 0, &d->chip) ||
	    parse_cc(c, o, &d->cc_major, &d->cc_minor) ||
	    get_int(c, o, "sm_count", 1, 0, &d->sm_count) ||
	    get_double(c, o, "sm_clock_mhz", &d->sm_clock_mhz) ||
	    get_double(c, o, "mem_clock_mhz", &d->mem_clock_mhz) ||
	    get_int(c, o, "bus_width_bits", 0, 0, &d->bus_width_bits) ||
	    get_double(c, o, "mem_bandwidth_gbs", &d->mem_bandwidth_gbs) ||
	    get_long(c, o, "l2_bytes", 0, &d->l2_bytes) ||
	    get_int(c, o, "max_threads_per_sm", 0, 0, &d->max_threads_per_sm) ||
	    get_int(c, o, "max_blocks_per_sm", 0, 0, &d->max_blocks_per_sm) ||
	    get_int(c, o, "regs_per_sm", 0, 0, &d->regs_per_sm) ||
	    get_long(c, o, "smem_per_sm", 0, &d->smem_per_sm) ||
	    get_long(c, o, "smem_per_block_optin", 0, &d->smem_per_block_optin) ||
	    get_int(c, o, "warp_size", 0, 0, &d->warp_size) ||
	    get_int(c, o, "driver_version", 0, 0, &d->driver_version) ||
	    get_int(c, o, "cupti_version", 0, 0, &d->cupti_version))
		return -1;
	return 0;
}

/* Replaces *d on success (its old strings are freed); leaves it untouched
 * on failure.  *d must be zeroed or hold a device from an earlier call. */
static int device_from_json(ga_device *d, json_t *o, const jctx *c)
{
	ga_device tmp = {0};

	if (device_parse(c, o, &tmp) != 0) {
		ga_device_free(&tmp);
		return -1;
	}
	ga_device_free(d);
	*d = tmp;
	return 0;
}

int ga_device_from_json(ga_device *d, void *json, const char *where, ga_error *err)
{
	jctx c = {where ? where : "device", "", err};

	return device_from_json(d, json, &c);
}

static int collection_parse(const jctx *c, json_t *o, ga_collection *col)
{
	if (!json_is_object(o))
		return field_fail(c, "", "expected an object");
	if (get_string(c, o, "tool_version", 0, &col->tool_version) ||
	    get_string(c, o, "date", 0, &col->date) ||
	    get_string(c, o, "mode", 0, &col->mode) ||
	    get_string(c, o, "command", 0, &col->command) ||
	    get_string(c, o, "host", 0, &col->host) ||
	    get_int(c, o, "passes", 0, 0, &col->passes) ||
	    get_int(c, o, "metric_sets", 0, 0, &col->metric_sets) ||
	    get_bool(c, o, "quick", &col->quick) ||
	    get_double(c, o, "min_share_pct", &col->min_share_pct) ||
	    get_double(c, o, "profiler_setup_seconds", &col->profiler_setup_seconds) ||
	    get_double(c, o, "profiler_measure_seconds", &col->profiler_measure_seconds) ||
	    get_long(c, o, "loop_replay_launches", 0, &col->loop_replay_launches) ||
	    get_long(c, o, "graph_launches", 0, &col->graph_launches) ||
	    get_double(c, o, "wall_seconds", &col->wall_seconds) ||
	    get_int(c, o, "app_status", 0, INT_MIN, &col->app_status) ||
	    get_int(c, o, "app_signal", 0, 0, &col->app_signal) ||
	    get_long(c, o, "app_peak_rss_kb", 0, &col->app_peak_rss_kb) ||
	    get_string(c, o, "note", 0, &col->note) ||
	    get_bool(c, o, "incomplete", &col->incomplete))
		return -1;
	if (!(col->min_share_pct >= 0 && col->min_share_pct <= 100))
		return field_fail(c, "min_share_pct", "expected a percentage from 0 to 100");
	return 0;
}

static int occupancy_parse(const jctx *parent, json_t *o, ga_launch *l)
{
	char *path = ga_xasprintf("%s%soccupancy", parent->path, *parent->path ? "." : "");
	jctx c = {parent->label, path, parent->err};
	int rc = -1;

	if (!json_is_object(o)) {
		field_fail(&c, "", "expected an object");
		goto out;
	}
	if (get_double(&c, o, "theoretical_pct", &l->occ_theoretical_pct) ||
	    get_int(&c, o, "limit_blocks", 0, INT_MIN, &l->occ_limit_blocks) ||
	    get_int(&c, o, "limit_registers", 0, INT_MIN, &l->occ_limit_registers) ||
	    get_int(&c, o, "limit_shared_mem", 0, INT_MIN, &l->occ_limit_smem) ||
	    get_int(&c, o, "limit_warps", 0, INT_MIN, &l->occ_limit_warps) ||
	    get_string(&c, o, "limiter", 0, &l->occ_limiter))
		goto out;
	rc = 0;
out:
	free(path);
	return rc;
}

/* Read one launch object and append it to p, adding the metrics its values
 * name that p does not have yet (ix must index p->metrics and is kept in
 * step).  All checking happens before p is touched, so on failure p is
 * unchanged. */
static int launch_from_json(ga_profile *p, json_t *o, const jctx *c, ga_map *ix)
{
	ga_launch tmp, *l;
	json_t *vals, *occ, *v;
	const char *key;
	long long stream = 0;
	double *slots;
	size_t n;
	int rc = -1;

	memset(&tmp, 0, sizeof(tmp));
	tmp.duration_ns = NAN;
	tmp.range_ns = NAN;
	tmp.metric_set = -1;
	if (!json_is_object(o)) {
		field_fail(c, "", "expected an object");
		goto out;
	}
	if (get_string(c, o, "name", 1, &tmp.name) ||
	    get_string(c, o, "mangled", 0, &tmp.mangled) ||
	    get_int(c, o, "pid", 0, INT_MIN, &tmp.pid) ||
	    get_long(c, o, "index", LONG_MIN, &tmp.index) ||
	    get_dim3(c, o, "grid", tmp.grid) ||
	    get_dim3(c, o, "block", tmp.block) ||
	    get_int(c, o, "registers", 0, 0, &tmp.registers) ||
	    get_long(c, o, "smem_static", 0, &tmp.smem_static) ||
	    get_long(c, o, "smem_dynamic", 0, &tmp.smem_dynamic) ||
	    get_integer(c, o, "stream", 0, 0, LLONG_MAX, &stream) ||
	    get_int(c, o, "context", 0, INT_MIN, &tmp.context) ||
	    get_double(c, o, "duration_ns", &tmp.duration_ns) ||
	    get_double(c, o, "range_ns", &tmp.range_ns) ||
	    get_int(c, o, "metric_set", 0, 0, &tmp.metric_set) ||
	    get_string(c, o, "nvtx", 0, &tmp.nvtx) ||
	    get_string(c, o, "module", 0, &tmp.module))
		goto out;
	tmp.stream = (uint64_t)stream;
	occ = member(o, "occupancy");
	if (occ && occupancy_parse(c, occ, &tmp) != 0)
		goto out;
	/* C kernels have no separate mangled name; keep the field usable. */
	if (!tmp.mangled)
		tmp.mangled = ga_xstrdup(tmp.name);

	vals = json_object_get(o, "values");
	if (!vals) {
		field_fail(c, "values", "missing");
		goto out;
	}
	if (!json_is_object(vals)) {
		field_fail(c, "values", "expected an object");
		goto out;
	}
	json_object_foreach(vals, key, v) {
		if (!json_is_number(v) && !json_is_null(v)) {
			char *field = ga_xasprintf("values[\"%s\"]", key);
			field_fail(c, field, "expected a number or null");
			free(field);
			goto out;
		}
		if (negative_count(key, v)) {
			char *field = ga_xasprintf("values[\"%s\"]", key);
			field_fail(c, field, "%g is negative; a count is >= 0", json_number_value(v));
			free(field);
			goto out;
		}
	}

	/* Commit: nothing below can fail. */
	l = ga_profile_add_launch(p);
	slots = l->values;
	*l = tmp;
	l->values = slots;
	memset(&tmp, 0, sizeof(tmp));
	n = 0;
	json_object_foreach(vals, key, v) {
		/* Launches list their values in the same order, mostly that of
		 * p->metrics (names there are unique): try that place first. */
		long idx = n < p->n_metrics && strcmp(p->metrics[n], key) == 0
		           ? (long)n : ga_strmap_get(ix, key);
		n++;
		if (idx < 0) {
			idx = (long)ga_profile_append_metric(p, key);
			ga_strmap_put(ix, p->metrics[idx], (size_t)idx);
		}
		l->values[idx] = json_is_null(v) ? NAN : json_number_value(v);
	}
	rc = 0;
out:
	ga_launch_free(&tmp);
	return rc;
}

int ga_launch_from_json(ga_profile *p, void *json, const char *where, ga_error *err)
{
	jctx c = {where ? where : "launch", "", err};
	ga_map ix = {0};
	int rc;

	index_build(&ix, p);
	rc = launch_from_json(p, json, &c, &ix);
	ga_map_free(&ix);
	return rc;
}

/* The "format" and "schema" keys: is this a profile we can read? */
static int format_parse(ga_profile *p, json_t *root, const jctx *top)
{
	const char *label = top->label;
	ga_error *err = top->err;
	json_t *fmt, *v;

	if (!json_is_object(root))
		return ga_fail(err, GA_ERR_PROFILE,
		               "%s: not a gpuadvise profile (the top level is not an object)", label);
	fmt = json_object_get(root, "format");
	if (!fmt)
		return ga_fail(err, GA_ERR_PROFILE, "%s: not a gpuadvise profile (no \"format\" key)",
		               label);
	if (!json_is_string(fmt))
		return ga_fail(err, GA_ERR_PROFILE,
		               "%s: not a gpuadvise profile (format is not a string)", label);
	if (strcmp(json_string_value(fmt), GA_PROFILE_FORMAT) != 0)
		return ga_fail(err, GA_ERR_PROFILE, "%s: not a gpuadvise profile (format is '%s')",
		               label, json_string_value(fmt));
	v = json_object_get(root, "schema");
	if (!v)
		return field_fail(top, "schema", "missing");
	if (!json_is_integer(v) || json_integer_value(v) < 1)
		return field_fail(top, "schema", "expected a positive integer");
	if (json_integer_value(v) > GA_PROFILE_SCHEMA)
		return ga_fail(err, GA_ERR_PROFILE,
		               "%s: profile schema %lld is newer than this gpuadvise supports (%d)",
		               label, (long long)json_integer_value(v), GA_PROFILE_SCHEMA);
	p->schema = (int)json_integer_value(v);
	return 0;
}

/* "metrics": the names, each kept once, indexed in ix. */
static int metrics_parse(ga_profile *p, json_t *root, const jctx *top, ga_map *ix)
{
	json_t *arr = json_object_get(root, "metrics"), *v;
	char path[64];
	size_t i;

	if (!arr)
		return field_fail(top, "metrics", "missing");
	if (!json_is_array(arr))
		return field_fail(top, "metrics", "expected an array of strings");
	json_array_foreach(arr, i, v) {
		const char *name;
		if (!json_is_string(v)) {
			snprintf(path, sizeof(path), "metrics[%zu]", i);
			return field_fail(top, path, "expected a string");
		}
		name = json_string_value(v);
		if (ga_strmap_get(ix, name) < 0) {  /* a repeated name is kept once */
			size_t idx = ga_profile_append_metric(p, name);
			ga_strmap_put(ix, p->metrics[idx], idx);
		}
	}
	return 0;
}

static int launches_parse(ga_profile *p, json_t *root, const jctx *top, ga_map *ix)
{
	json_t *arr = json_object_get(root, "launches"), *v;
	char path[64];
	size_t i;

	if (!arr)
		return field_fail(top, "launches", "missing");
	if (!json_is_array(arr))
		return field_fail(top, "launches", "expected an array");
	ga_grow((void **)&p->launches, &p->cap_launches, json_array_size(arr),
	        sizeof(*p->launches));
	json_array_foreach(arr, i, v) {
		jctx c = {top->label, path, top->err};
		snprintf(path, sizeof(path), "launches[%zu]", i);
		if (launch_from_json(p, v, &c, ix) != 0)
			return -1;
	}
	return 0;
}

/* The optional "unprofiled", "sources", "timelines" and "processes" arrays. */
static int extras_parse(ga_profile *p, json_t *root, const jctx *top)
{
	const char *label = top->label;
	json_t *arr, *v;
	size_t i;

	arr = json_object_get(root, "unprofiled");
	if (arr && !json_is_array(arr))
		return field_fail(top, "unprofiled", "expected an array");
	json_array_foreach(arr, i, v) {
		char *where = ga_xasprintf("%s: unprofiled[%zu]", label, i);
		int bad = ga_unprofiled_from_json(p, v, where, top->err);
		free(where);
		if (bad)
			return -1;
	}
	arr = json_object_get(root, "sources");
	if (arr && !json_is_array(arr))
		return field_fail(top, "sources", "expected an array");
	json_array_foreach(arr, i, v) {
		char *where = ga_xasprintf("%s: sources[%zu]", label, i);
		int bad = ga_source_from_json(&p->sources, &p->n_sources, &p->cap_sources, v,
		                              where, top->err);
		free(where);
		if (bad)
			return -1;
	}
	arr = json_object_get(root, "timelines");
	if (arr && !json_is_array(arr))
		return field_fail(top, "timelines", "expected an array");
	if (ga_timelines_from_json(&p->timelines, &p->n_timelines, &p->cap_timelines, arr, label,
	                           top->err))
		return -1;
	arr = json_object_get(root, "processes");
	if (arr && !json_is_array(arr))
		return field_fail(top, "processes", "expected an array");
	return ga_proc_infos_from_json(&p->procs, &p->n_procs, &p->cap_procs, arr, label, top->err);
}

static int profile_from_root(ga_profile *p, json_t *root, const char *label, ga_error *err)
{
	jctx top = {label, "", err};
	jctx dev = {label, "device", err}, col = {label, "collection", err};
	json_t *v;
	ga_map ix = {0};
	int rc = -1;

	if (format_parse(p, root, &top) != 0)
		goto out;
	v = json_object_get(root, "device");
	if (!v) {
		field_fail(&top, "device", "missing");
		goto out;
	}
	if (device_from_json(&p->device, v, &dev) != 0)
		goto out;
	v = member(root, "collection");
	if (v && collection_parse(&col, v, &p->collection) != 0)
		goto out;
	if (metrics_parse(p, root, &top, &ix) != 0 || launches_parse(p, root, &top, &ix) != 0 ||
	    extras_parse(p, root, &top) != 0)
		goto out;
	if (p->n_launches > 0 && p->device.sm_count < 1)   /* 0 SMs: --timeline-only */
		field_fail(&dev, "sm_count", "0 is out of range (1 to 2147483647): launches were "
		           "measured on this device");
	else
		rc = 0;
out:
	ga_map_free(&ix);
	return rc;
}

int ga_unprofiled_from_json(ga_profile *p, void *json, const char *where, ga_error *err)
{
	json_t *o = json;
	char path[64] = "";
	jctx c = {where, path, err};
	ga_unprofiled u = {0};

	if (!json_is_object(o))
		return field_fail(&c, "", "expected an object");
	if (get_string(&c, o, "mangled", 1, &u.mangled) ||
	    get_int(&c, o, "pid", 0, INT_MIN, &u.pid) ||
	    get_dim3(&c, o, "grid", u.grid) || get_dim3(&c, o, "block", u.block) ||
	    get_long(&c, o, "launches", 0, &u.launches) ||
	    get_bool(&c, o, "below_min_share", &u.below_min_share) ||
	    get_string(&c, o, "nvtx", 0, &u.nvtx)) {
		free(u.mangled);
		free(u.nvtx);
		return -1;
	}
	GA_PUSH(p->unprofiled, p->n_unprofiled, p->cap_unprofiled, u);
	return 0;
}

/* The "format" of a JSON report (src/report/json.c). */
#define GA_REPORT_FORMAT_NAME "gpuadvise-report"

/* Parse text (len bytes) into *p, which is (re)initialised first: pass a
 * fresh or already freed profile.  On failure *p is left empty. */
static int load_text(ga_profile *p, const char *text, size_t len, const char *label,
                     ga_error *err)
{
	json_error_t jerr;
	json_t *root;
	const char *fmt;
	int rc;

	ga_profile_init(p);
	if (!label)
		label = "<profile>";
	/* The fast reader builds the same tree as jansson or declines; then
	 * jansson parses (and reports any error with its line and column). */
	root = ga_json_fast_load(text, len);
	if (!root)
		root = json_loadb(text, len, JSON_REJECT_DUPLICATES, &jerr);
	if (!root) {
		if (jerr.line > 0)
			return ga_fail(err, GA_ERR_PROFILE, "%s:%d:%d: invalid JSON: %s",
			               label, jerr.line, jerr.column, jerr.text);
		return ga_fail(err, GA_ERR_PROFILE, "%s: invalid JSON: %s", label, jerr.text);
	}
	/* A gpuadvise JSON report (-f json) embeds the profile it was made
	 * from: read that one, so a saved report can be imported again. */
	fmt = json_string_value(json_object_get(root, "format"));
	if (fmt && strcmp(fmt, GA_REPORT_FORMAT_NAME) == 0) {
		json_t *inner = json_object_get(root, "profile");
		if (!json_is_object(inner)) {
			json_decref(root);
			return ga_fail(err, GA_ERR_PROFILE, "%s: report has no 'profile'", label);
		}
		rc = profile_from_root(p, inner, label, err);
	} else {
		rc = profile_from_root(p, root, label, err);
	}
	json_decref(root);
	if (rc != 0)
		ga_profile_free(p);
	return rc;
}

int ga_profile_load_string(ga_profile *p, const char *text, const char *label, ga_error *err)
{
	return load_text(p, text, strlen(text), label, err);
}

int ga_profile_load(ga_profile *p, const char *path, ga_error *err)
{
	size_t len = 0;
	char *text;
	int rc;

	ga_profile_init(p);
	text = ga_read_file(path, &len, err);
	if (!text)
		return -1;
	rc = load_text(p, text, len, path, err);
	free(text);
	if (rc == 0)
		p->source_path = ga_xstrdup(path);
	return rc;
}
