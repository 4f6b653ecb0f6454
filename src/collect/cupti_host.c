/* cupti_host.c: the CUPTI profiler host API (cupti_profiler_host.h).  It
 * builds configuration images and evaluates counter data for a chip by name,
 * so it runs in the injection library and, on recorded data, on machines with
 * no GPU at all. */
#include "collect.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cupti.h>
#include <cupti_profiler_host.h>
#include <cupti_range_profiler.h>

struct ga_host {
	CUpti_Profiler_Host_Object *obj;
	char *chip;
};

const char *ga_cupti_result_string(int result)
{
	const char *s = NULL;
	if (cuptiGetResultString((CUptiResult)result, &s) != CUPTI_SUCCESS || !s)
		return "unknown CUPTI error";
	return s;
}

ga_host *ga_host_new(const char *chip, const uint8_t *counter_availability, ga_error *err)
{
	CUpti_Profiler_Host_Initialize_Params p = {CUpti_Profiler_Host_Initialize_Params_STRUCT_SIZE};
	CUptiResult r;
	ga_host *h;

	p.profilerType = CUPTI_PROFILER_TYPE_RANGE_PROFILER;
	p.pChipName = chip;
	p.pCounterAvailabilityImage = counter_availability;
	r = cuptiProfilerHostInitialize(&p);
	if (r != CUPTI_SUCCESS) {
		ga_fail(err, GA_ERR_PROFILING, "CUPTI host API does not support chip '%s': %s",
		        chip, ga_cupti_result_string(r));
		return NULL;
	}
	h = ga_xcalloc(1, sizeof(*h));
	h->obj = p.pHostObject;
	h->chip = ga_xstrdup(chip);
	return h;
}

int ga_host_chip_known(const char *chip)
{
	CUpti_Profiler_Host_GetSupportedChips_Params p =
		{CUpti_Profiler_Host_GetSupportedChips_Params_STRUCT_SIZE};

	if (cuptiProfilerHostGetSupportedChips(&p) != CUPTI_SUCCESS || !p.ppChipNames)
		return 0;
	for (size_t i = 0; i < p.numChips; i++)
		if (p.ppChipNames[i] && strcmp(p.ppChipNames[i], chip) == 0)
			return 1;
	return 0;
}

void ga_host_free(ga_host *h)
{
	if (!h)
		return;
	CUpti_Profiler_Host_Deinitialize_Params p = {CUpti_Profiler_Host_Deinitialize_Params_STRUCT_SIZE};
	p.pHostObject = h->obj;
	cuptiProfilerHostDeinitialize(&p);
	free(h->chip);
	free(h);
}

int ga_host_metric_valid(ga_host *h, const char *name)
{
	CUpti_Profiler_Host_GetMetricProperties_Params p =
		{CUpti_Profiler_Host_GetMetricProperties_Params_STRUCT_SIZE};
	p.pHostObject = h->obj;
	p.pMetricName = name;
	return cuptiProfilerHostGetMetricProperties(&p) == CUPTI_SUCCESS;
}

int ga_host_config(ga_host *h, const char *const *names, size_t n, uint8_t **image,
                   size_t *image_size, size_t *passes, ga_error *err)
{
	CUpti_Profiler_Host_ConfigAddMetrics_Params ap = {CUpti_Profiler_Host_ConfigAddMetrics_Params_STRUCT_SIZE};
	CUpti_Profiler_Host_GetConfigImageSize_Params sp = {CUpti_Profiler_Host_GetConfigImageSize_Params_STRUCT_SIZE};
	CUpti_Profiler_Host_GetConfigImage_Params gp = {CUpti_Profiler_Host_GetConfigImage_Params_STRUCT_SIZE};
	CUpti_Profiler_Host_GetNumOfPasses_Params pp = {CUpti_Profiler_Host_GetNumOfPasses_Params_STRUCT_SIZE};
	CUptiResult r;
	uint8_t *img = NULL;

	ap.pHostObject = h->obj;
	ap.ppMetricNames = (const char **)names;
	ap.numMetrics = n;
	if ((r = cuptiProfilerHostConfigAddMetrics(&ap)) != CUPTI_SUCCESS)
		return ga_fail(err, GA_ERR_PROFILING, "cannot configure %zu metrics for %s: %s",
		               n, h->chip, ga_cupti_result_string(r));
	sp.pHostObject = h->obj;
	if ((r = cuptiProfilerHostGetConfigImageSize(&sp)) != CUPTI_SUCCESS)
		return ga_fail(err, GA_ERR_PROFILING, "cannot size the configuration image: %s",
		               ga_cupti_result_string(r));
	img = ga_xmalloc(sp.configImageSize);
	gp.pHostObject = h->obj;
	gp.configImageSize = sp.configImageSize;
	gp.pConfigImage = img;
	if ((r = cuptiProfilerHostGetConfigImage(&gp)) != CUPTI_SUCCESS) {
		free(img);
		return ga_fail(err, GA_ERR_PROFILING, "cannot build the configuration image: %s",
		               ga_cupti_result_string(r));
	}
	pp.configImageSize = sp.configImageSize;
	pp.pConfigImage = img;
	if ((r = cuptiProfilerHostGetNumOfPasses(&pp)) != CUPTI_SUCCESS) {
		free(img);
		return ga_fail(err, GA_ERR_PROFILING, "cannot count replay passes: %s",
		               ga_cupti_result_string(r));
	}
	*image = img;
	*image_size = sp.configImageSize;
	if (passes)
		*passes = pp.numOfPasses;
	return 0;
}

int ga_host_num_ranges(const uint8_t *data, size_t size, size_t *n, ga_error *err)
{
	CUpti_RangeProfiler_GetCounterDataInfo_Params p =
		{CUpti_RangeProfiler_GetCounterDataInfo_Params_STRUCT_SIZE};
	CUptiResult r;
	p.pCounterDataImage = data;
	p.counterDataImageSize = size;
	if ((r = cuptiRangeProfilerGetCounterDataInfo(&p)) != CUPTI_SUCCESS)
		return ga_fail(err, GA_ERR_PROFILING, "not a valid counter-data image: %s",
		               ga_cupti_result_string(r));
	*n = p.numTotalRanges;
	return 0;
}

int ga_host_evaluate(ga_host *h, const uint8_t *data, size_t size, size_t range,
                     const char *const *names, size_t n, double *values, ga_error *err)
{
	CUpti_Profiler_Host_EvaluateToGpuValues_Params p =
		{CUpti_Profiler_Host_EvaluateToGpuValues_Params_STRUCT_SIZE};
	CUptiResult r;
	size_t nranges = 0;

	if (ga_host_num_ranges(data, size, &nranges, err) != 0)
		return -1;
	if (range >= nranges)
		return ga_fail(err, GA_ERR_PROFILING, "range %zu requested, the image holds %zu",
		               range, nranges);

	p.pHostObject = h->obj;
	p.pCounterDataImage = data;
	p.counterDataImageSize = size;
	p.rangeIndex = range;
	p.ppMetricNames = (const char **)names;
	p.numMetrics = n;
	p.pMetricValues = values;
	r = cuptiProfilerHostEvaluateToGpuValues(&p);
	if (r == CUPTI_SUCCESS)
		return 0;
	/* Fall back to one metric at a time so one bad value costs only itself. */
	for (size_t i = 0; i < n; i++) {
		p.ppMetricNames = (const char **)&names[i];
		p.numMetrics = 1;
		p.pMetricValues = &values[i];
		if (cuptiProfilerHostEvaluateToGpuValues(&p) != CUPTI_SUCCESS)
			values[i] = NAN;
	}
	return 0;
}

long ga_host_passes(const char *chip, const uint8_t *avail, const char *const *names, size_t k)
{
	ga_error err = {0};
	ga_host *h = ga_host_new(chip, avail, &err);
	uint8_t *img = NULL;
	size_t size = 0, passes = 0;
	int rc;

	if (!h)
		return -1;
	rc = ga_host_config(h, names, k, &img, &size, &passes, &err);
	free(img);
	ga_host_free(h);
	return rc == 0 ? (long)passes : -1;
}

/* Does set s (the metrics before `upto` assigned to it) take metrics
 * first..last-1 within max_passes? */
static int fits(const char *chip, const uint8_t *avail, const char *const *names,
                const size_t *set_of, size_t upto, size_t s, size_t first, size_t last,
                size_t max_passes, const char **tmp)
{
	size_t k = 0;
	for (size_t i = 0; i < upto; i++)
		if (set_of[i] == s)
			tmp[k++] = names[i];
	for (size_t i = first; i < last; i++)
		tmp[k++] = names[i];
	long p = ga_host_passes(chip, avail, tmp, k);
	return p > 0 && (size_t)p <= max_passes;
}

/* First fit of metrics first..last-1 (one bundle or one metric) into the
 * sets so far, or a new set; 0 when even a new set cannot take them. */
static int place(const char *chip, const uint8_t *avail, const char *const *names,
                 size_t *set_of, size_t first, size_t last, size_t *n_sets,
                 size_t max_passes, const char **tmp, int force)
{
	for (size_t s = 0; s <= *n_sets; s++) {
		int last_try = s == *n_sets;
		if (fits(chip, avail, names, set_of, first, s, first, last, max_passes, tmp) ||
		    (last_try && force)) {
			for (size_t i = first; i < last; i++)
				set_of[i] = s;
			if (last_try)
				(*n_sets)++;
			return 1;
		}
	}
	return 0;
}

static size_t pack(const char *chip, const uint8_t *avail, const char *const *names,
                   const size_t *bundle, size_t n, size_t max_passes, size_t *set_of)
{
	const char **tmp;
	size_t n_sets = 0;

	for (size_t i = 0; i < n; i++)
		set_of[i] = 0;
	if (n == 0)
		return 0;
	tmp = ga_xcalloc(n, sizeof(*tmp));
	if (max_passes == 0 || fits(chip, avail, names, set_of, 0, 0, 0, n, max_passes, tmp)) {
		free(tmp);
		return 1;
	}
	for (size_t first = 0; first < n;) {
		size_t last = first + 1;
		while (bundle && last < n && bundle[last] == bundle[first])
			last++;
		if (!place(chip, avail, names, set_of, first, last, &n_sets, max_passes, tmp, 0))
			for (size_t i = first; i < last; i++)
				place(chip, avail, names, set_of, i, i + 1, &n_sets, max_passes, tmp, 1);
		first = last;
	}
	free(tmp);
	return n_sets;
}

/* ---- the packing cache ---------------------------------------------------
 * Packing asks the host API for the passes of every trial set: about 0.15 s
 * for the default rules, paid by every profiled process.  The result depends
 * on the chip, CUPTI's version, the metric names and bundles, the pass limit
 * and the counter availability, so it is kept in a small text file named by
 * a hash of the first five, checked name by name when read, and its sets
 * checked against the pass limit with this process's availability:
 *   gpuadvise metric sets 1
 *   SET BUNDLE NAME        (one line per metric, in order)
 * Anything unexpected in the file means "not cached". */
#define CACHE_MAGIC "gpuadvise metric sets 1"

static char *cache_dir(void)
{
	const char *d = getenv(GA_ENV_CACHE_DIR), *x, *home;

	if (d)
		return *d && strcmp(d, "off") != 0 ? ga_xstrdup(d) : NULL;
	if ((x = getenv("XDG_CACHE_HOME")) && *x == '/')
		return ga_xasprintf("%s/gpuadvise", x);
	if ((home = getenv("HOME")) && *home == '/')
		return ga_xasprintf("%s/.cache/gpuadvise", home);
	return NULL;
}

static char *cache_path(const char *chip, size_t avail_size,
                        const char *const *names, const size_t *bundle, size_t n,
                        size_t max_passes)
{
	char *dir = cache_dir(), *path;
	uint32_t version = 0;
	uint64_t h;

	if (!dir)
		return NULL;
	cuptiGetVersion(&version);
	h = ga_hash_str(CACHE_MAGIC);
	h = ga_hash_bytes(h, chip, strlen(chip) + 1);
	h = ga_hash_bytes(h, &version, sizeof(version));
	h = ga_hash_bytes(h, &max_passes, sizeof(max_passes));
	/* Not the availability image's bytes: they differ from one process to
	 * the next (no cache hit on the H200).  Its size tells a live run from
	 * an offline one; sets_fit() checks what is read against the image. */
	h = ga_hash_bytes(h, &avail_size, sizeof(avail_size));
	for (size_t i = 0; i < n; i++) {
		size_t b = bundle ? bundle[i] : i;
		h = ga_hash_bytes(h, names[i], strlen(names[i]) + 1);
		h = ga_hash_bytes(h, &b, sizeof(b));
	}
	path = ga_xasprintf("%s/sets-%s-%016llx", dir, chip, (unsigned long long)h);
	free(dir);
	return path;
}

static size_t cache_read(const char *path, const char *const *names, const size_t *bundle,
                         size_t n, size_t *set_of)
{
	FILE *f = fopen(path, "r");
	char line[1024];
	size_t n_sets = 0, i = 0;

	if (!f)
		return 0;
	if (!fgets(line, sizeof(line), f) || strcmp(line, CACHE_MAGIC "\n") != 0)
		goto bad;
	for (; i < n && fgets(line, sizeof(line), f); i++) {
		unsigned long s, b;
		int off = 0;
		if (sscanf(line, "%lu %lu %n", &s, &b, &off) != 2 || off == 0 || s >= n ||
		    b != (bundle ? bundle[i] : i))
			goto bad;
		line[strcspn(line, "\n")] = '\0';
		if (strcmp(line + off, names[i]) != 0)
			goto bad;
		set_of[i] = s;
		if (s + 1 > n_sets)
			n_sets = s + 1;
	}
	if (i != n || fgets(line, sizeof(line), f))
		goto bad;
	fclose(f);
	/* Every set from 0 to the last must hold a metric. */
	for (size_t s = 0; s < n_sets; s++) {
		size_t k = 0;
		while (k < n && set_of[k] != s)
			k++;
		if (k == n)
			return 0;
	}
	return n_sets;
bad:
	fclose(f);
	return 0;
}

static void mkdirs(const char *path)
{
	char *p = ga_xstrdup(path);
	for (char *q = p + 1; *q; q++) {
		if (*q != '/')
			continue;
		*q = '\0';
		mkdir(p, 0755);
		*q = '/';
	}
	free(p);
}

static void cache_write(const char *path, const char *const *names, const size_t *bundle,
                        size_t n, const size_t *set_of)
{
	char *tmp = ga_xasprintf("%s.%ld.tmp", path, (long)getpid());
	FILE *f;
	int ok;

	mkdirs(path);
	if (!(f = fopen(tmp, "w"))) {
		free(tmp);
		return;
	}
	ok = fprintf(f, "%s\n", CACHE_MAGIC) > 0;
	for (size_t i = 0; ok && i < n; i++)
		ok = fprintf(f, "%zu %zu %s\n", set_of[i], bundle ? bundle[i] : i, names[i]) > 0;
	ok = (fclose(f) == 0) && ok;
	/* rename: readers see the old file or the whole new one. */
	if (!ok || rename(tmp, path) != 0)
		unlink(tmp);
	free(tmp);
}

/* A cached packing is used only if every set of more than one metric still
 * fits the pass limit (a few host objects: milliseconds, not the packing's
 * tenths of a second). */
static int sets_fit(const char *chip, const uint8_t *avail, const char *const *names, size_t n,
                    size_t max_passes, const size_t *set_of, size_t n_sets)
{
	const char **tmp = ga_xcalloc(n, sizeof(*tmp));
	int ok = 1;

	for (size_t s = 0; ok && s < n_sets; s++) {
		size_t k = 0;
		for (size_t i = 0; i < n; i++)
			if (set_of[i] == s)
				tmp[k++] = names[i];
		long p = ga_host_passes(chip, avail, tmp, k);
		ok = p > 0 && (k == 1 || (size_t)p <= max_passes);
	}
	free(tmp);
	return ok;
}

size_t ga_host_pack(const char *chip, const uint8_t *avail, size_t avail_size,
                    const char *const *names, const size_t *bundle, size_t n,
                    size_t max_passes, size_t *set_of)
{
	char *path;
	size_t n_sets;

	if (n == 0 || max_passes == 0)
		return pack(chip, avail, names, bundle, n, max_passes, set_of);
	path = cache_path(chip, avail_size, names, bundle, n, max_passes);
	if (path && (n_sets = cache_read(path, names, bundle, n, set_of)) > 0 &&
	    sets_fit(chip, avail, names, n, max_passes, set_of, n_sets)) {
		free(path);
		return n_sets;
	}
	n_sets = pack(chip, avail, names, bundle, n, max_passes, set_of);
	if (path)
		cache_write(path, names, bundle, n, set_of);
	free(path);
	return n_sets;
}
