/* cupti_host.c: the CUPTI profiler host API (cupti_profiler_host.h).  It
 * builds configuration images and evaluates counter data for a chip by name,
 * so it runs in the injection library and, on recorded data, on machines with
 * no GPU at all. */
#include "collect.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

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

size_t ga_host_pack(const char *chip, const uint8_t *avail, const char *const *names,
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
