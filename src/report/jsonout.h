/* jsonout.h: how the JSON reports (json.c, json_ranks.c, json_timeline.c)
 * write a value that may be missing: null for a number that is not
 * finite or a string that is not there. */
#ifndef GA_REPORT_JSONOUT_H
#define GA_REPORT_JSONOUT_H

#include <math.h>

#include <jansson.h>

#include "report.h"

static inline json_t *num(double v)
{
	return isfinite(v) ? json_real(v) : json_null();
}

/* A string as JSON (ga_report_json_string), null for none. */
static inline json_t *str_or_null(const char *s)
{
	return s ? ga_report_json_string(s) : json_null();
}

#endif
