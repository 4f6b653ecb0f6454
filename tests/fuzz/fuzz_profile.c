/* fuzz_profile.c: libFuzzer harness for profile JSON (src/profile/profile.c), and
 * for what a hostile profile can do to the engine and the reporters.
 *
 * The input is loaded with ga_profile_load_string.  A failed load must say
 * why and leave the profile empty.  A loaded profile must serialise, load
 * again and serialise to the same text (the -o round trip).  It is then
 * analysed with the shipped rules (loaded once, from GA_FUZZ_RULES) and
 * every report format is written; the engine's numbers must stay in range
 * (shares and savings finite, 0..1, ranked) and the JSON report must be
 * valid JSON.  The analysis is also compared with that of a recorded
 * profile, both ways round (--baseline), and the reports written with the
 * comparison.  Any violation aborts. */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include "analyze/baseline.h"
#include "profile/profile.h"
#include "report/report.h"
#include "analyze/analyze.h"
#include "rules/rules.h"

#ifndef GA_FUZZ_RULES
#error "GA_FUZZ_RULES must name the shipped rules directory"
#endif
#ifndef GA_FUZZ_PROFILE
#error "GA_FUZZ_PROFILE must name a recorded profile"
#endif

#define FUZZ_NAME "fuzz_profile"
#include "check.h"

static ga_ruleset rules;
static ga_profile recorded;     /* the other side of --baseline comparisons */
static ga_analysis recorded_a;
static FILE *devnull;

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
	(void)argc;
	(void)argv;
	load_shipped_rules(&rules);
	{
		ga_error err = {0};
		if (ga_profile_load(&recorded, GA_FUZZ_PROFILE, &err) != 0 ||
		    ga_analyze(&recorded, &rules, NULL, &recorded_a, &err) != 0) {
			fprintf(stderr, "fuzz_profile: %s\n", err.msg);
			abort();
		}
	}
	devnull = fopen("/dev/null", "w");
	CHECK(devnull);
	return 0;
}

static void check_analysis(const ga_analysis *a)
{
	for (size_t i = 0; i < a->n_groups; i++) {
		const ga_group *g = &a->groups[i];
		CHECK(isfinite(g->share) && g->share >= 0 && g->share <= 1);
		CHECK(g->n_launches > 0);
	}
	for (size_t i = 0; i < a->n_findings; i++) {
		const ga_finding *f = &a->findings[i];
		/* A missing input leaves the estimate and its range NAN, with
		 * no saving. */
		if (f->estimate_missing)
			CHECK(isnan(f->estimate) && f->saving == 0);
		else
			CHECK(isfinite(f->estimate) && f->estimate >= 0 && f->estimate <= 1);
		if (!isnan(f->low))
			CHECK(f->low <= f->estimate && f->estimate <= f->high && f->high <= 1);
		CHECK(isfinite(f->saving) && f->saving >= 0 && f->saving <= 1);
		CHECK(f->group < a->n_groups);
		if (i)
			CHECK(a->findings[i - 1].saving >= f->saving);
	}
}

static void check_comparison(const ga_comparison *c)
{
	CHECK(c->n_kernels == c->n_matched + c->n_only_cur + c->n_only_base);
	CHECK(c->n_regressions <= c->n_kernels && c->n_slower <= c->n_regressions);
	for (size_t i = 0; i < c->n_kernels; i++) {
		const ga_kernel_change *k = &c->kernels[i];
		CHECK(k->cur == GA_NO_GROUP || k->cur < c->cur->n_groups);
		CHECK(k->base == GA_NO_GROUP || k->base < c->base->n_groups);
		CHECK(k->cur != GA_NO_GROUP || k->base != GA_NO_GROUP);
	}
}

/* A human-readable report (no colour) holds no control character but
 * newline and tab, and no bidirectional control: whatever the profile's
 * strings, they cannot drive the terminal it is printed on (safe.c). */
static void check_terminal_safe(const char *s, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		unsigned char c = (unsigned char)s[i];
		CHECK(c >= 0x20 || c == '\n' || c == '\t');
		CHECK(c != 0x7f);
		/* U+202A..U+202E and U+2066..U+2069; C1 controls U+0080..U+009F */
		if (c == 0xe2 && i + 2 < n) {
			unsigned char c1 = (unsigned char)s[i + 1], c2 = (unsigned char)s[i + 2];
			CHECK(!(c1 == 0x80 && c2 >= 0xaa && c2 <= 0xae));
			CHECK(!(c1 == 0x81 && c2 >= 0xa6 && c2 <= 0xa9));
		}
		if (c == 0xc2 && i + 1 < n)
			CHECK(!((unsigned char)s[i + 1] >= 0x80 && (unsigned char)s[i + 1] <= 0x9f));
	}
}

static void human_reports(const ga_analysis *a, ga_report_opts o)
{
	int (*const fmts[])(FILE *, const ga_analysis *, const ga_ruleset *,
	                    const ga_report_opts *) = {
		ga_report_text, ga_report_markdown, ga_report_junit, ga_report_html,
	};
	o.color = 0;
	for (size_t i = 0; i < sizeof(fmts) / sizeof(fmts[0]); i++) {
		char *text = NULL;
		size_t len = 0;
		FILE *mem = open_memstream(&text, &len);
		CHECK(mem);
		CHECK(fmts[i](mem, a, &rules, &o) == 0);
		CHECK(fclose(mem) == 0);
		check_terminal_safe(text, len);
		free(text);
	}
}

static void reports(const ga_analysis *a, const ga_comparison *cmp)
{
	ga_report_opts o = {.width = 80, .verbose = 1, .per_launch = 1, .baseline = cmp};
	char *text = NULL;
	size_t len = 0;
	FILE *mem;
	json_t *back;
	json_error_t jerr;

	human_reports(a, o);
	o.color = 1;
	o.width = 40;
	o.recorded_label = "fuzz, recorded";
	CHECK(ga_report_text(devnull, a, &rules, &o) == 0);
	CHECK(ga_report_markdown(devnull, a, &rules, &o) == 0);
	CHECK(ga_report_junit(devnull, a, &rules, &o) == 0);

	mem = open_memstream(&text, &len);
	CHECK(mem);
	CHECK(ga_report_json(mem, a, &rules, &o) == 0);
	CHECK(fclose(mem) == 0);
	back = json_loadb(text, len, 0, &jerr);
	if (!back)
		fprintf(stderr, "fuzz_profile: JSON report does not parse: %s\n", jerr.text);
	CHECK(back);
	json_decref(back);
	free(text);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char *src = malloc(size + 1);
	ga_profile p, q;
	ga_error err = {0};
	ga_analysis a;
	char *s1, *s2;

	if (!src)
		return 0;
	memcpy(src, data, size);
	src[size] = '\0';

	if (ga_profile_load_string(&p, src, "fuzz", &err) != 0) {
		CHECK(err.msg[0] != '\0');
		CHECK(p.n_launches == 0 && p.n_metrics == 0 && p.launches == NULL);
		free(src);
		return 0;
	}
	free(src);

	/* The round trip: what -o writes reads back the same. */
	s1 = ga_profile_to_string(&p, 0);
	if (ga_profile_load_string(&q, s1, "round trip", &err) != 0) {
		fprintf(stderr, "fuzz_profile: reload failed: %s\n", err.msg);
		abort();
	}
	s2 = ga_profile_to_string(&q, 0);
	if (strcmp(s1, s2) != 0) {
		fprintf(stderr, "fuzz_profile: round trip changed the text:\n%s\n%s\n", s1, s2);
		abort();
	}
	CHECK(q.n_launches == p.n_launches && q.n_metrics == p.n_metrics);
	free(s1);
	free(s2);
	ga_profile_free(&q);

	if (ga_analyze(&p, &rules, &(ga_analyze_opts){.verbose = 1}, &a, &err) == 0) {
		ga_compare_opts co = {.threshold = 0.1, .severity = GA_SEV_HIGH};
		ga_comparison cmp;
		check_analysis(&a);
		reports(&a, NULL);
		/* --baseline, both ways round, against a recording */
		ga_compare(&a, &recorded_a, "recorded", &co, &cmp);
		check_comparison(&cmp);
		reports(&a, &cmp);
		ga_comparison_free(&cmp);
		ga_compare(&recorded_a, &a, "fuzz", &co, &cmp);
		check_comparison(&cmp);
		ga_comparison_free(&cmp);
		ga_analysis_free(&a);
	}
	ga_profile_free(&p);
	return 0;
}
