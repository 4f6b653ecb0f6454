/* fuzz_rules.c: libFuzzer harness for rule and classifier files
 * (src/rules/load.c), and for what a hostile rule can do to the engine and
 * the reporters.
 *
 * The input is written to a temporary file and loaded with
 * ga_rules_load_file, as gpuadvise does.  Every diagnostic must name the
 * file and say something.  A file that loads cleanly is validated and its
 * metric names listed (sorted, unique).  A rule is then run against a
 * recorded profile with the shipped classifier lent to it, and a
 * classifier is run as it is; every report format is written.  Any
 * violation aborts. */
#include <fcntl.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

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

#define FUZZ_NAME "fuzz_rules"
#include "check.h"

static ga_ruleset shipped;      /* the shipped rules, for their classifier */
static ga_profile profile;      /* a recorded profile to run rules on */
static char path[4096];         /* the temporary rule file */
static int fd = -1;
static FILE *devnull;

static void cleanup(void)
{
	if (fd >= 0)
		unlink(path);
}

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
	ga_error err = {0};
	const char *tmp = getenv("TMPDIR");

	(void)argc;
	(void)argv;
	load_shipped_rules(&shipped);
	if (ga_profile_load(&profile, GA_FUZZ_PROFILE, &err) != 0) {
		fprintf(stderr, "fuzz_rules: %s\n", err.msg);
		abort();
	}
	snprintf(path, sizeof(path), "%s/gpuadvise-fuzz-rules-XXXXXX",
	         tmp && *tmp ? tmp : "/tmp");
	fd = mkstemp(path);
	CHECK(fd >= 0);
	atexit(cleanup);
	devnull = fopen("/dev/null", "w");
	CHECK(devnull);
	return 0;
}

static void write_input(const uint8_t *data, size_t size)
{
	size_t off = 0;

	CHECK(ftruncate(fd, 0) == 0);
	while (off < size) {
		ssize_t w = pwrite(fd, data + off, size - off, (off_t)off);
		CHECK(w > 0);
		off += (size_t)w;
	}
}

static void check_diags(const ga_diags *d, size_t from)
{
	for (size_t i = from; i < d->n; i++) {
		CHECK(d->v[i].msg && d->v[i].msg[0]);
		CHECK(d->v[i].line >= 0 && d->v[i].col >= 0);
	}
	ga_diags_print(d, devnull);
}

static void check_metric_names(const ga_ruleset *rs)
{
	char **names = NULL;
	size_t n = ga_ruleset_metric_names(rs, &names);

	for (size_t i = 0; i < n; i++) {
		CHECK(names[i] && names[i][0]);
		if (i)
			CHECK(strcmp(names[i - 1], names[i]) < 0);
	}
	for (size_t i = 0; i < n; i++)
		free(names[i]);
	free(names);
}

static void run_engine(const ga_ruleset *rs)
{
	ga_analysis a;
	ga_error err = {0};
	ga_report_opts o = {.width = 80, .verbose = 1};

	if (ga_analyze(&profile, rs, &(ga_analyze_opts){.verbose = 1}, &a, &err) != 0)
		return;
	for (size_t i = 0; i < a.n_findings; i++) {
		/* An estimate whose input is missing is NAN, and says which. */
		CHECK(isfinite(a.findings[i].estimate) || a.findings[i].estimate_missing);
		CHECK(isfinite(a.findings[i].saving));
	}
	CHECK(ga_report_text(devnull, &a, rs, &o) == 0);
	CHECK(ga_report_markdown(devnull, &a, rs, &o) == 0);
	CHECK(ga_report_json(devnull, &a, rs, &o) == 0);
	CHECK(ga_report_junit(devnull, &a, rs, &o) == 0);
	ga_analysis_free(&a);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	ga_ruleset rs;
	ga_diags d = {0};
	int n;

	write_input(data, size);
	ga_ruleset_init(&rs);
	n = ga_rules_load_file(&rs, path, &d);
	CHECK(n >= 0 && (size_t)n == d.n);
	for (size_t i = 0; i < d.n; i++)
		CHECK(d.v[i].file && strcmp(d.v[i].file, path) == 0);
	check_diags(&d, 0);
	if (n == 0) {
		CHECK(rs.n_rules + (size_t)rs.has_classifier == 1);
		ga_ruleset_validate(&rs, &d);
		check_diags(&d, (size_t)n);
		check_metric_names(&rs);
		if (rs.has_classifier) {
			run_engine(&rs);
		} else {
			/* Lend the shipped classifier; take it back before
			 * freeing. */
			size_t before = d.n;
			rs.classifier = shipped.classifier;
			rs.has_classifier = 1;
			if (ga_ruleset_validate(&rs, &d) == 0) {
				check_metric_names(&rs);
				run_engine(&rs);
			}
			check_diags(&d, before);
			rs.has_classifier = 0;
			memset(&rs.classifier, 0, sizeof(rs.classifier));
		}
	}
	ga_diags_free(&d);
	ga_ruleset_free(&rs);
	return 0;
}
