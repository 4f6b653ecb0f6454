/* pass_map.c: which replay pass of a metric set each metric's own raw
 * counters land in, on a chip, offline (CPU machine; CUPTI's host API and
 * nvperf host library, no GPU).  A bench probe, not part of gpuadvise:
 * built by bench/probe/build.sh.  Usage:
 *   pass_map CHIP METRIC...
 *   gpuadvise --list-metrics --chip GH100 | awk '/^# set 1:/{f=1;next} /^#/{f=0} f' |
 *       xargs pass_map GH100
 * Raw counter names come back hashed; a metric's "own" counters are those
 * not shared with gpu__time_duration.sum or a constant peak metric (each
 * pass carries those).  On GH100, set 1 of `--max-passes 3`: every DRAM
 * and L2 counter lands in pass 0 (with the clock rates and the L1
 * throughputs); passes 1 and 2 hold SM counters only (pipes, issue, warps,
 * global request counts).  The default 7-pass set likewise holds every
 * DRAM, L2 and L1 counter in its first pass.  See docs/PERFORMANCE.md,
 * "What a replay pass costs".
 *
 *   pass_map --drop CHIP METRIC...
 * instead lists every metric, and every pair of metrics, whose removal
 * takes a pass off the set (on GH100, for the default 70 metrics: none;
 * the five stall ratios together take one). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <nvperf_host.h>

#include "collect.h"

#define MAX_RAW 512
#define MAX_PASSES 16

typedef struct {
	const char *name[MAX_RAW];
	size_t n;
} raw_set;

static int has(const raw_set *s, const char *name)
{
	for (size_t i = 0; i < s->n; i++)
		if (strcmp(s->name[i], name) == 0)
			return 1;
	return 0;
}

/* The raw counters of each pass of a configuration for names[0..n), from a
 * fresh host object (one only ever adds metrics to its configuration). */
static size_t raw_passes(const char *chip, const char *const *names, size_t n, raw_set *out)
{
	uint8_t *img = NULL;
	size_t size = 0, passes = 0;
	ga_error err = {0};
	ga_host *h = ga_host_new(chip, NULL, &err);

	if (!h || ga_host_config(h, names, n, &img, &size, &passes, &err) != 0) {
		fprintf(stderr, "pass_map: %s\n", err.msg);
		exit(1);
	}
	if (passes > MAX_PASSES)
		passes = MAX_PASSES;
	for (size_t p = 0; p < passes; p++) {
		NVPW_Config_GetRawCounters_Params q = {NVPW_Config_GetRawCounters_Params_STRUCT_SIZE};
		q.pConfig = img;
		q.configSize = size;
		q.passIndex = p;
		q.ppRawCounterNames = out[p].name;
		q.numRawCounters = MAX_RAW;
		if (NVPW_Config_GetRawCounters(&q) != NVPA_STATUS_SUCCESS) {
			fprintf(stderr, "pass_map: cannot list the raw counters of pass %zu\n", p);
			exit(1);
		}
		out[p].n = q.numRawCounters;
		for (size_t i = 0; i < out[p].n; i++)   /* owned by the image */
			out[p].name[i] = strdup(out[p].name[i]);
	}
	free(img);
	ga_host_free(h);
	return passes;
}

static void add_all(raw_set *to, const raw_set *from, size_t np)
{
	for (size_t p = 0; p < np; p++)
		for (size_t i = 0; i < from[p].n; i++)
			if (!has(to, from[p].name[i]) && to->n < MAX_RAW)
				to->name[to->n++] = from[p].name[i];
}

/* Which one or two of names[0..n) take a pass off when left out? */
static int drop(const char *chip, const char *const *names, size_t n)
{
	const char **sub = calloc(n ? n : 1, sizeof(*sub));
	long all = ga_host_passes(chip, NULL, names, n), found = 0;

	if (!sub || all < 0) {
		fprintf(stderr, "pass_map: CUPTI refused the metrics\n");
		free(sub);
		return 1;
	}
	printf("%zu metrics: %ld passes\n", n, all);
	for (size_t a = 0; a < n; a++)
		for (size_t b = a; b < n; b++) {
			size_t k = 0;
			long p;
			for (size_t i = 0; i < n; i++)
				if (i != a && i != b)
					sub[k++] = names[i];
			p = ga_host_passes(chip, NULL, sub, k);
			if (p >= 0 && p < all) {
				found++;
				printf("without %s%s%s: %ld passes\n", names[a], a == b ? "" : " and ",
				       a == b ? "" : names[b], p);
			}
		}
	if (!found)
		printf("no metric or pair of metrics takes a pass off\n");
	free(sub);
	return 0;
}

int main(int argc, char **argv)
{
	static raw_set set[MAX_PASSES], one[MAX_PASSES], shared;
	const char *const base[] = {"gpu__time_duration.sum", "dram__bytes.sum.peak_sustained"};
	size_t np;

	if (argc > 1 && strcmp(argv[1], "--drop") == 0) {
		if (argc < 4) {
			fprintf(stderr, "usage: pass_map --drop CHIP METRIC...\n");
			return 2;
		}
		return drop(argv[2], (const char *const *)argv + 3, (size_t)argc - 3);
	}
	if (argc < 3) {
		fprintf(stderr, "usage: pass_map [--drop] CHIP METRIC...\n");
		return 2;
	}
	NVPW_InitializeHost_Params ip = {NVPW_InitializeHost_Params_STRUCT_SIZE};
	if (NVPW_InitializeHost(&ip) != NVPA_STATUS_SUCCESS) {
		fprintf(stderr, "pass_map: nvperf host init failed\n");
		return 1;
	}
	for (size_t b = 0; b < 2; b++) {
		size_t k = raw_passes(argv[1], &base[b], 1, one);
		add_all(&shared, one, k);
	}
	np = raw_passes(argv[1], (const char *const *)argv + 2, (size_t)argc - 2, set);
	printf("%zu passes:", np);
	for (size_t p = 0; p < np; p++)
		printf(" pass %zu %zu raw counters;", p, set[p].n);
	printf("\n");
	for (int m = 2; m < argc; m++) {
		raw_set own = {0};
		size_t k = raw_passes(argv[1], (const char *const *)&argv[m], 1, one), n_own = 0;
		add_all(&own, one, k);
		printf("%-70s passes:", argv[m]);
		for (size_t p = 0; p < np; p++) {
			int in = 0;
			for (size_t i = 0; i < own.n; i++)
				if (!has(&shared, own.name[i]) && has(&set[p], own.name[i]))
					in = 1;
			if (in)
				printf(" %zu", p);
		}
		for (size_t i = 0; i < own.n; i++)
			n_own += !has(&shared, own.name[i]);
		printf("  (%zu own raw counters)\n", n_own);
	}
	return 0;
}
