/* demo.c: the bundled demos.  Each demo is a program (kernels/demo_*.cu)
 * with variants from slow to fixed; `--list-variants` names them and
 * `--variant V --reps N` runs one, checks its result and prints
 * "variant V time_ms X check ok".
 *
 * Live (GPU present): every variant is profiled once (one launch of each of
 * its kernels) and timed in a separate plain run.  Recorded (no GPU): the
 * same data comes from <recorded>/demo-NAME.json, written by
 * `gpuadvise --demo NAME -o FILE` on a GPU machine:
 *   {"format": "gpuadvise-demo", "schema": 1, "demo": NAME,
 *    "variants": [{"name", "description", "time_ms", "profile": {...}}]} */
#include "demos.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include <jansson.h>

#include "../collect/collect.h"
#include "ga_build.h"
#include "../profile/profile.h"
#include "../report/report.h"
#include "../analyze/analyze.h"
#include "../analyze/baseline.h"
#include "../util/util.h"

/* Which finding each fixed variant addresses: the demo checks that the slow
 * variant's top finding is one of them, and measures that variant. */
typedef struct {
	const char *variant;
	const char *rules;        /* space-separated rule ids */
} demo_fix;

typedef struct {
	const char *name;
	const char *summary;
	demo_fix fixes[3];
} demo_info;

static const demo_info demos[] = {
	{"matmul", "naive FP32 matrix multiply -> shared-memory tiles -> tensor cores (WMMA)",
	 {{"tiled", "shared-memory-tiling"}, {"wmma", "tensor-cores-unused"}}},
	{"coalescing", "strided global loads -> unit-stride, coalesced loads",
	 {{"coalesced", "uncoalesced-global-access"}}},
	{"transpose", "naive transpose -> shared-memory tile -> padded tile (no bank conflicts)",
	 {{"tiled", "uncoalesced-global-access"}, {"padded", "shared-bank-conflicts"}}},
	{"divergence", "even/odd branch on expensive work -> warp-uniform branch",
	 {{"warp_uniform", "thread-divergence"}}},
	{"reduction", "interleaved addressing -> sequential addressing -> warp shuffles",
	 {{"sequential", "shared-tree-reduction thread-divergence shared-bank-conflicts "
	                 "integer-division sfu-heavy-math"},
	  {"shuffle", "shared-tree-reduction warp-shuffle-reduction barrier-stalls"}}},
	{"latency", "one warp with a dependent chain -> many warps and independent chains",
	 {{"many_warps", "grid-too-small dependent-instruction-stalls low-occupancy "
	                 "memory-latency-stalls"}}},
	{"occupancy", "register-heavy kernel -> __launch_bounds__ and fewer live registers",
	 {{"bounded", "low-occupancy achieved-occupancy-gap"}}},
	{"fusion", "bias + GELU + residual as three kernels -> one fused kernel",
	 {{"fused", "kernel-fusion launch-overhead"}}},
	{"atomics", "one global atomicAdd per match -> block reduction, one atomic per block",
	 {{"block_reduce", "global-atomic-contention"}}},
	{"polynomial", "pow() with double literals -> Horner's scheme with float FMAs",
	 {{"horner_fma", "fp64-in-fp32-code sfu-heavy-math pipe-saturation"}}},
	{"transfers", "synchronous copies from pageable memory -> pinned -> pinned and async "
	 "on four streams",
	 /* the pageable-copies model is of both fixes together, pinned memory
	  * and copies overlapped on streams: pinned_sync does half of it */
	 {{"pinned_async", "pageable-copies copies-serialized"}}},
};

static int fix_addresses(const demo_fix *f, const char *rule)
{
	size_t n = strlen(rule);
	const char *p = f->rules;
	while (p && *p) {
		const char *sp = strchr(p, ' ');
		size_t len = sp ? (size_t)(sp - p) : strlen(p);
		if (len == n && strncmp(p, rule, n) == 0)
			return 1;
		p = sp ? sp + 1 : NULL;
	}
	return 0;
}

typedef struct {
	char *name;
	char *description;
	double time_ms;           /* NAN if unknown */
	ga_profile prof;
	int have_prof;
} variant;

typedef struct {
	char *demo;
	variant *v;
	size_t n, cap;
	int recorded;
	char *gpu;
	char *date;
} demo_run;

static void demo_run_free(demo_run *r)
{
	for (size_t i = 0; i < r->n; i++) {
		free(r->v[i].name);
		free(r->v[i].description);
		if (r->v[i].have_prof)
			ga_profile_free(&r->v[i].prof);
	}
	free(r->v);
	free(r->demo);
	free(r->gpu);
	free(r->date);
	memset(r, 0, sizeof(*r));
}

static const demo_info *find_demo(const char *name)
{
	for (size_t i = 0; i < GA_ARRAY_LEN(demos); i++)
		if (strcmp(demos[i].name, name) == 0)
			return &demos[i];
	return NULL;
}

/* Run argv, capture stdout (stderr passes through).  Returns exit status or
 * -1; *out gets the output. */
static int run_capture(char *const argv[], char **out)
{
	int fds[2];
	pid_t pid;
	ga_buf b = {0};
	char chunk[4096];
	int status = 0;

	*out = NULL;
	if (pipe(fds) != 0)
		return -1;
	fflush(NULL);
	pid = fork();
	if (pid < 0) {
		close(fds[0]);
		close(fds[1]);
		return -1;
	}
	if (pid == 0) {
		dup2(fds[1], STDOUT_FILENO);
		close(fds[0]);
		close(fds[1]);
		execv(argv[0], argv);
		_exit(127);
	}
	close(fds[1]);
	for (;;) {
		ssize_t n = read(fds[0], chunk, sizeof(chunk));
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			break;
		for (ssize_t i = 0; i < n; i++)
			ga_buf_putc(&b, chunk[i]);
	}
	close(fds[0]);
	while (waitpid(pid, &status, 0) < 0 && errno == EINTR)
		;
	*out = ga_buf_take(&b);
	if (WIFEXITED(status))
		return WEXITSTATUS(status);
	return 128 + (WIFSIGNALED(status) ? WTERMSIG(status) : 0);
}

static int list_variants(const char *prog, demo_run *r, ga_error *err)
{
	char *argv[] = {(char *)prog, "--list-variants", NULL};
	char *out = NULL;
	int st = run_capture(argv, &out);
	if (st != 0) {
		free(out);
		return ga_fail(err, GA_ERR_PROFILING, "%s --list-variants failed (status %d)", prog, st);
	}
	for (char *line = strtok(out, "\n"); line; line = strtok(NULL, "\n")) {
		char *tab = strchr(line, '\t');
		variant v = {0};
		if (tab)
			*tab = '\0';
		v.name = ga_xstrdup(line);
		v.description = ga_xstrdup(tab ? tab + 1 : "");
		v.time_ms = NAN;
		GA_PUSH(r->v, r->n, r->cap, v);
	}
	free(out);
	if (r->n == 0)
		return ga_fail(err, GA_ERR_PROFILING, "%s lists no variants", prog);
	return 0;
}

static double time_variant(const char *prog, const char *variant_name, ga_error *err)
{
	char *argv[] = {(char *)prog, "--variant", (char *)variant_name, "--reps", "20",
	                "--warmup", "3", NULL};
	char *out = NULL;
	double ms = NAN;
	int st = run_capture(argv, &out);
	const char *t = out ? strstr(out, "time_ms ") : NULL;
	if (st != 0 || !t) {
		ga_fail(err, GA_ERR_PROFILING, "%s --variant %s failed (status %d): %s", prog,
		        variant_name, st, out && *out ? out : "no output");
	} else {
		ms = strtod(t + 8, NULL);
	}
	if (out && strstr(out, "FAILED"))
		ga_fail(err, GA_ERR_PROFILING, "%s --variant %s computed a wrong result: %s", prog,
		        variant_name, out);
	free(out);
	return ms;
}

static int run_live_demo(const ga_demo_ctx *c, const char *name, const char *prog, demo_run *r,
                         ga_error *err)
{
	char *inject = ga_inject_path();
	int rc = -1;

	if (!inject) {
		ga_fail(err, GA_ERR_PROFILING, "the injection library was not found");
		goto out;
	}
	if (list_variants(prog, r, err) != 0)
		goto out;
	for (size_t i = 0; i < r->n; i++) {
		variant *v = &r->v[i];
		/* Two launches of each kernel by default: the first takes every
		 * metric, a flagged kernel's second gives its source lines.  Four
		 * with --max-passes N: on GH100 the metrics then come in three
		 * sets, one per launch in turn, and the fourth gives the lines. */
		char *argv[] = {(char *)prog, "--variant", v->name, "--reps",
		                c->cfg->max_passes ? "4" : "2", "--warmup", "0", NULL};
		ga_app_result res;
		ga_live_opts lo = {
			.argv = argv,
			.inject_path = inject,
			.metrics = c->metrics,
			.bundles = c->bundles,
			.n_metrics = c->n_metrics,
			.source_when = c->source_when,
			.source_skip = c->source_skip,
			.source_opcodes = c->source_opcodes,
			.no_replay = c->no_replay,
			.watchdog_s = c->cfg->watchdog,
			.timeline = 1,
			.max_passes = c->cfg->max_passes,
			.launch_count = -1,
			.quiet_stdout = 1,
			/* Four repetitions are too few for loop replay (two to
			 * see the loop, then three per metric set): replay. */
			.no_loop_replay = 1,
		};
		fprintf(stderr, "gpuadvise: demo %s: profiling variant %s\n", name, v->name);
		ga_profile_init(&v->prof);
		v->have_prof = 1;
		if (ga_collect_live(&lo, &v->prof, &res, err) != 0)
			goto out;
		if (!res.exited || res.exit_status != 0) {
			ga_fail(err, GA_ERR_PROFILING, "variant %s failed under profiling (status %d, "
			        "signal %d)", v->name, res.exit_status, res.signal);
			goto out;
		}
		if (v->prof.n_launches == 0) {
			ga_fail(err, GA_ERR_NO_KERNELS, "variant %s launched no kernel", v->name);
			goto out;
		}
		free(v->prof.collection.mode);
		v->prof.collection.mode = ga_xasprintf("demo %s/%s", name, v->name);
		/* Record the command without this machine's install path. */
		free(v->prof.collection.command);
		v->prof.collection.command = ga_xasprintf("gpuadvise-demo-%s --variant %s", name,
		                                          v->name);
		fprintf(stderr, "gpuadvise: demo %s: timing variant %s\n", name, v->name);
		v->time_ms = time_variant(prog, v->name, err);
		if (!isfinite(v->time_ms))
			goto out;
	}
	r->gpu = ga_xstrdup(r->v[0].prof.device.name);
	r->date = ga_xstrdup(r->v[0].prof.collection.date);
	rc = 0;
out:
	free(inject);
	return rc;
}

static int load_recorded(const char *name, demo_run *r, ga_error *err)
{
	char *dir = ga_recorded_dir();
	char *path = NULL;
	json_t *root = NULL, *vs, *jv;
	json_error_t jerr;
	size_t i;
	int rc = -1;

	if (!dir)
		return ga_fail(err, GA_ERR_NOT_FOUND, "no recorded demo profiles are installed");
	path = ga_xasprintf("%s/demo-%s.json", dir, name);
	root = json_load_file(path, 0, &jerr);
	if (!root) {
		ga_fail(err, GA_ERR_NOT_FOUND, "%s:%d:%d: %s", path, jerr.line, jerr.column, jerr.text);
		goto out;
	}
	vs = json_object_get(root, "variants");
	if (!json_is_array(vs) || json_array_size(vs) == 0) {
		ga_fail(err, GA_ERR_PROFILE, "%s: no variants", path);
		goto out;
	}
	json_array_foreach(vs, i, jv) {
		variant v = {0};
		json_t *jp = json_object_get(jv, "profile");
		char *text = jp ? json_dumps(jp, 0) : NULL;
		char *label = ga_xasprintf("%s: variants[%zu].profile", path, i);
		v.name = ga_xstrdup(json_string_value(json_object_get(jv, "name")));
		v.description = ga_xstrdup(json_string_value(json_object_get(jv, "description")));
		v.time_ms = json_is_number(json_object_get(jv, "time_ms"))
		                    ? json_number_value(json_object_get(jv, "time_ms")) : NAN;
		ga_profile_init(&v.prof);
		v.have_prof = 1;
		int lrc = text ? ga_profile_load_string(&v.prof, text, label, err)
		               : ga_fail(err, GA_ERR_PROFILE, "%s: missing", label);
		free(text);
		free(label);
		if (!v.name)
			v.name = ga_xstrdup("?");
		GA_PUSH(r->v, r->n, r->cap, v);
		if (lrc != 0)
			goto out;
	}
	r->recorded = 1;
	r->gpu = ga_xstrdup(r->v[0].prof.device.name ? r->v[0].prof.device.name : "unknown GPU");
	r->date = ga_xstrdup(r->v[0].prof.collection.date ? r->v[0].prof.collection.date : "?");
	rc = 0;
out:
	json_decref(root);
	free(path);
	free(dir);
	return rc;
}

static int save_recording(const demo_run *r, const char *path, ga_error *err)
{
	json_t *root = json_object(), *vs = json_array();
	json_object_set_new(root, "format", json_string(GA_DEMO_FORMAT));
	json_object_set_new(root, "schema", json_integer(1));
	json_object_set_new(root, "demo", json_string(r->demo));
	for (size_t i = 0; i < r->n; i++) {
		json_t *v = json_object();
		json_object_set_new(v, "name", json_string(r->v[i].name));
		json_object_set_new(v, "description", json_string(r->v[i].description));
		json_object_set_new(v, "time_ms", isfinite(r->v[i].time_ms)
		                                          ? json_real(r->v[i].time_ms) : json_null());
		json_object_set_new(v, "profile", (json_t *)ga_profile_to_json(&r->v[i].prof));
		json_array_append_new(vs, v);
	}
	json_object_set_new(root, "variants", vs);
	char *text = json_dumps(root, JSON_INDENT(1) | JSON_REAL_PRECISION(10));
	json_decref(root);
	ga_buf b = {0};
	ga_buf_puts(&b, text);
	ga_buf_putc(&b, '\n');
	free(text);
	int rc = ga_write_file_atomic(path, b.s, b.len, err);
	ga_buf_free(&b);
	return rc;
}

/* ---- comparison ---------------------------------------------------------- */

typedef struct {
	ga_analysis a;
	int ok;
	const ga_finding *top;
	ga_finding program_top;     /* a program finding first, as a finding: its rule, the
	                             * speedup of the part it changes and its range */
	ga_class klass;             /* class of the variant's biggest kernel */
} variant_result;

static int rule_fires(const ga_analysis *a, const ga_rule *r)
{
	for (size_t i = 0; i < a->n_findings; i++)
		if (a->findings[i].rule == r)
			return 1;
	for (size_t i = 0; i < a->n_pfindings; i++)
		if (a->pfindings[i].rule == r)
			return 1;
	return 0;
}

/* The variant's first action (ga_analysis.first): a kernel finding, or a
 * program finding in a finding's shape, whose estimate is then the share
 * of the part of the program it changes. */
static const ga_finding *top_of(variant_result *v)
{
	const ga_analysis *a = &v->a;

	if (a->n_first && a->first[0].kind == GA_DO_PROGRAM) {
		const ga_pfinding *pf = &a->pfindings[a->first[0].index];
		ga_finding *f = &v->program_top;
		memset(f, 0, sizeof(*f));
		f->rule = pf->rule;
		f->group = GA_NO_GROUP;   /* no kernel: a part of the program */
		f->estimate = isfinite(pf->speedup) && pf->speedup > 0 ? 1 - 1 / pf->speedup : NAN;
		f->saving = pf->estimate;
		f->speedup = pf->speedup;
		f->speedup_min = pf->speedup_min;
		f->speedup_max = pf->speedup_max;
		f->low = pf->low;
		f->high = pf->high;
		f->estimate_missing = pf->estimate_missing;
		return f;
	}
	if (a->n_first && a->first[0].kind == GA_DO_FINDING)
		return &a->findings[a->first[0].index];
	return a->n_findings ? &a->findings[0] : NULL;
}

static const char *verdict(double measured, double lo, double hi)
{
	if (!isfinite(measured))
		return "not measured";
	if (!isfinite(lo) || !isfinite(hi))
		return "with no estimate to compare";
	if (measured > hi)
		return "above the range";
	if (measured >= lo)
		return "inside the range";
	return "below the range";
}

typedef struct {
	char demo[16];
	char before[16], after[16];
	char top[64];
	char fixed_by[24];          /* variant that addresses the top finding, or "" */
	double lo, hi, estimate_x, measured;
	int gone;
	int ok;
} summary_row;

/* Print text wrapped at the report width (80), later lines indented. */
static void put_wrapped(FILE *out, const char *text, size_t indent)
{
	ga_buf b = { 0 };
	ga_wrap(&b, text, 0, indent, 80);
	fputs(b.s ? b.s : "\n", out);
	ga_buf_free(&b);
}

/* The verdict in a word, for the Summary table. */
/* A rule id in a column of cols columns, cut with an ellipsis (U+2026,
 * three bytes, one column) when longer: the Summary keeps to 80 columns,
 * and each demo's block above names the rule in full. */
static const char *id_column(const char *id, int cols, char *buf, size_t size)
{
	if ((int)strlen(id) <= cols)
		snprintf(buf, size, "%-*s", cols, id);
	else
		snprintf(buf, size, "%.*s\xe2\x80\xa6", cols - 1, id);
	return buf;
}

/* The advice's first sentence: the slow variant's top finding, its range
 * and estimate, or the input its estimate lacks. */
static void advice_head(ga_buf *advice, const char *variant, const ga_finding *top)
{
	char b1[32], b2[48];

	if (top->estimate_missing) {
		ga_buf_printf(advice, "The advice for %s put %s first; its estimate needs %s, "
		              "which the profile lacks.", variant, top->rule->id,
		              top->estimate_missing);
		return;
	}
	/* a program finding (top_of) acts on a part of the program, not a kernel */
	ga_buf_printf(advice, "The advice for %s put %s first: estimated %s %s (%s).", variant,
	              top->rule->id,
	              ga_fmt_speedup(top->speedup, b1, sizeof(b1)),
	              top->group == GA_NO_GROUP ? "on the part of the program it changes"
	                                       : "for its kernel",
	              ga_fmt_speedup_range(top->speedup_min, top->speedup_max, b2, sizeof(b2)));
}

static const char *verdict_word(double measured, double lo, double hi)
{
	if (!isfinite(measured) || !isfinite(lo) || !isfinite(hi))
		return "n/a";
	return measured > hi ? "above" : measured >= lo ? "inside" : "below";
}

/* The slow variant's first finding against the variants: the one that
 * applies its fix gives what the finding predicted and what the fix
 * measured (as a --baseline comparison says it, baseline.c), and each
 * variant before it says that it does not apply that fix. */
static void put_advice(FILE *out, const demo_run *r, const variant_result *res, size_t fixv)
{
	const ga_finding *top = res[0].top;
	char b1[32];
	ga_buf advice = { 0 };
	advice_head(&advice, r->v[0].name, top);
	for (size_t i = 1; i < r->n && (!fixv || i < fixv); i++)
		ga_buf_printf(&advice, " Variant %s does not apply that fix (measured %s).",
		              r->v[i].name,
		              ga_fmt_speedup(r->v[0].time_ms / r->v[i].time_ms, b1, sizeof(b1)));
	if (fixv) {
		double measured = r->v[0].time_ms / r->v[fixv].time_ms;
		ga_prediction p = ga_predict_check(top, r->v[0].time_ms, r->v[fixv].time_ms);
		char *said = ga_prediction_text(top->rule, &p);
		if (said)
			ga_buf_printf(&advice, " Variant %s applies that fix: %s, %s; the finding %s.",
			              r->v[fixv].name, said,
			              verdict(measured, top->speedup_min, top->speedup_max),
			              rule_fires(&res[fixv].a, top->rule) ? "still fires" : "is gone");
		else
			ga_buf_printf(&advice, " Variant %s applies that fix but is not faster "
			              "(measured %s).", r->v[fixv].name,
			              ga_fmt_speedup(measured, b1, sizeof(b1)));
		free(said);
	} else {
		ga_buf_printf(&advice, " No variant of this demo applies that fix.");
	}
	fputs("\n  ", out);
	ga_buf b = { 0 };
	ga_wrap(&b, advice.s, 2, 2, 80);
	fputs(b.s, out);
	ga_buf_free(&b);
	ga_buf_free(&advice);
}

static int show_demo(ga_demo_ctx *c, demo_run *r, FILE *out, summary_row *row)
{
	variant_result *res = ga_xcalloc(r->n, sizeof(*res));
	ga_analyze_opts ao = {.verbose = c->cfg->verbose};
	ga_error err = {0};
	int rc = 0;
	char label[512];
	char b1[32], b2[32];

	for (size_t i = 0; i < r->n; i++) {
		if (ga_analyze(&r->v[i].prof, c->rules, &ao, &res[i].a, &err) != 0) {
			fprintf(stderr, "gpuadvise: %s\n", err.msg);
			rc = 3;
			goto out;
		}
		res[i].ok = 1;
		res[i].top = top_of(&res[i]);
		res[i].klass = res[i].a.n_groups ? res[i].a.groups[0].klass : GA_CLASS_NONE;
	}
	/* --fail-on reads the findings of the program as given: the slow
	 * variant, whose report is step 1. */
	if (ga_analysis_max_severity(&res[0].a) > c->worst_severity)
		c->worst_severity = ga_analysis_max_severity(&res[0].a);
	if (c->reporter) {
		ga_report_opts fo = {.width = 80, .fail_on = c->fail_on};
		if (c->reporter->write(out, &res[0].a, c->rules, &fo) != 0)
			rc = 2;
		goto out;
	}

	fprintf(out, "Demo %s: ", r->demo);
	for (size_t i = 0; i < r->n; i++)
		fprintf(out, "%s%s", i ? " -> " : "", r->v[i].name);
	fprintf(out, "\n\n");
	if (r->recorded)
		snprintf(label, sizeof(label), "recorded on %s, %s (no GPU here: this is the "
		         "profile recorded on the GPU machine)", r->gpu, r->date);
	char *step1 = ga_xasprintf("Step 1: profile the slow variant, %s (%s)", r->v[0].name,
	                           r->v[0].description);
	put_wrapped(out, step1, 2);
	fputc('\n', out);
	free(step1);
	ga_report_opts ro = {.color = c->color, .verbose = c->cfg->verbose, .width = 80,
	                     .recorded_label = r->recorded ? label : NULL,
	                     .roofline = c->cfg->roofline > 0 ||
	                                 (c->cfg->roofline == 0 && isatty(fileno(out)))};
	ga_report_text(out, &res[0].a, c->rules, &ro);

	fprintf(out, "\nStep 2: apply the fixes and profile again\n\n");
	const ga_finding *top = res[0].top;
	/* 80 columns: "first" says whether the slow variant's first finding
	 * still fires in this variant; the longest rule id comes last. */
	fprintf(out, "  %-12s %8s %7s  %-10s  %-5s  %s\n", "variant", "time", "speedup", "class",
	        top ? "first" : "", "top finding");
	for (size_t i = 0; i < r->n; i++) {
		double sp = r->v[0].time_ms / r->v[i].time_ms;
		const ga_finding *t = res[i].top;
		fprintf(out, "  %-12s %8s %7s  %-10s  %-5s  %s\n", r->v[i].name,
		        ga_fmt_duration(r->v[i].time_ms * 1e6, b1, sizeof(b1)),
		        ga_fmt_speedup(sp, b2, sizeof(b2)),
		        res[i].klass == GA_CLASS_NONE ? "-" : ga_class_name(res[i].klass),
		        top ? (rule_fires(&res[i].a, top->rule) ? "fires" : "gone") : "",
		        t ? t->rule->id : "-");
	}
	/* The variant whose fix addresses the top finding, if any. */
	const demo_info *info = find_demo(r->demo);
	size_t fixv = 0;
	for (size_t i = 1; top && info && i < r->n && !fixv; i++)
		for (size_t k = 0; k < GA_ARRAY_LEN(info->fixes); k++)
			if (info->fixes[k].variant && strcmp(info->fixes[k].variant, r->v[i].name) == 0 &&
			    fix_addresses(&info->fixes[k], top->rule->id))
				fixv = i;
	size_t cmpv = fixv ? fixv : (r->n > 1 ? 1 : 0);
	double measured = cmpv ? r->v[0].time_ms / r->v[cmpv].time_ms : NAN;
	if (top && cmpv)
		put_advice(out, r, res, fixv);
	if (row) {
		snprintf(row->demo, sizeof(row->demo), "%s", r->demo);
		snprintf(row->before, sizeof(row->before), "%s",
		         res[0].klass == GA_CLASS_NONE ? "-" : ga_class_name(res[0].klass));
		snprintf(row->after, sizeof(row->after), "%s",
		         res[r->n - 1].klass == GA_CLASS_NONE ? "-" : ga_class_name(res[r->n - 1].klass));
		snprintf(row->top, sizeof(row->top), "%s", top ? top->rule->id : "-");
		snprintf(row->fixed_by, sizeof(row->fixed_by), "%s", fixv ? r->v[fixv].name : "");
		row->lo = top ? top->speedup_min : NAN;
		row->hi = top ? top->speedup_max : NAN;
		row->estimate_x = top ? ga_estimate_speedup(top->estimate) : NAN;
		row->measured = measured;
		row->gone = top && fixv ? !rule_fires(&res[fixv].a, top->rule) : 0;
		row->ok = 1;
	}
out:
	for (size_t i = 0; i < r->n; i++)
		if (res[i].ok)
			ga_analysis_free(&res[i].a);
	free(res);
	return rc;
}

static int gpu_available(void)
{
	ga_error err = {0};
	return GA_HAVE_CUPTI && ga_probe_gpu(&err) == 0;
}

static int one_demo(ga_demo_ctx *c, const char *name, FILE *out, summary_row *row,
                    const char *export_path)
{
	demo_run r = {0};
	ga_error err = {0};
	char *prog = ga_demo_program(name);
	int rc = 0;

	r.demo = ga_xstrdup(name);
	if (prog && gpu_available()) {
		if (run_live_demo(c, name, prog, &r, &err) != 0) {
			fprintf(stderr, "gpuadvise: demo %s: %s\n", name, err.msg);
			rc = 4;
			goto out;
		}
	} else {
		if (load_recorded(name, &r, &err) != 0) {
			fprintf(stderr, "gpuadvise: demo %s: no GPU here and no recording: %s\n", name,
			        err.msg);
			rc = 4;
			goto out;
		}
	}
	/* -o: the profiles shown, measured here or the recording read. */
	if (export_path && save_recording(&r, export_path, &err) != 0) {
		fprintf(stderr, "gpuadvise: %s\n", err.msg);
		rc = 2;
		goto out;
	}
	rc = show_demo(c, &r, out, row);
out:
	demo_run_free(&r);
	free(prog);
	return rc;
}

int ga_demo_main(ga_demo_ctx *c)
{
	const char *name = c->cfg->demo;
	FILE *out = c->out ? c->out : stdout;
	char b1[32], b2[32], b3[32], b4[64];

	if (strcmp(name, "list") == 0) {
		for (size_t i = 0; i < GA_ARRAY_LEN(demos); i++)
			fprintf(out, "%-12s %s\n", demos[i].name, demos[i].summary);
		return 0;
	}
	if (strcmp(name, "all") == 0) {
		summary_row rows[GA_ARRAY_LEN(demos)];
		int worst = 0;
		memset(rows, 0, sizeof(rows));
		for (size_t i = 0; i < GA_ARRAY_LEN(demos); i++) {
			char *exp = NULL;
			if (c->cfg->export_path)
				exp = ga_xasprintf("%s/demo-%s.json", c->cfg->export_path, demos[i].name);
			int rc = one_demo(c, demos[i].name, out, &rows[i], exp);
			free(exp);
			if (rc > worst)
				worst = rc;
			fprintf(out, "\n");
		}
		/* 80 columns: the classes before and after are in each demo's
		 * table above. */
		int remains = 0;
		fprintf(out, "Summary (top finding of the slow variant, and the variant that fixes it)\n"
		        "  %-10s %-25s %-12s %-8s %-5s %-6s %s\n", "demo", "top finding", "fixed by",
		        "expected", "est.", "actual", "range");
		for (size_t i = 0; i < GA_ARRAY_LEN(demos); i++) {
			summary_row *s = &rows[i];
			if (!s->ok) {
				fprintf(out, "  %-10s (failed)\n", demos[i].name);
				continue;
			}
			fprintf(out, "  %-10s %s %-12s %-8s %-5s %-6s %s%s\n", s->demo,
			        id_column(s->top, 25, b4, sizeof(b4)),
			        s->fixed_by[0] ? s->fixed_by : "(none)",
			        ga_fmt_speedup_range(s->lo, s->hi, b1, sizeof(b1)),
			        ga_fmt_speedup(s->estimate_x, b2, sizeof(b2)),
			        ga_fmt_speedup(s->measured, b3, sizeof(b3)),
			        s->fixed_by[0] ? verdict_word(s->measured, s->lo, s->hi) : "-",
			        s->fixed_by[0] && !s->gone ? " *" : "");
			remains |= s->fixed_by[0] && !s->gone;
		}
		if (remains)
			fprintf(out, "  * the finding still fires after the fix\n");
		return worst;
	}
	if (!find_demo(name)) {
		fprintf(stderr, "gpuadvise: no demo '%s' (gpuadvise --demo list shows them)\n", name);
		return 2;
	}
	return one_demo(c, name, out, NULL, c->cfg->export_path);
}
