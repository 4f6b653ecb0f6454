/* protocol.c: the record types' names (see protocol.h). */
#include "protocol.h"

#include <string.h>

const char *const ga_record_names[GA_REC_N] = {
	[GA_REC_START] = "start",
	[GA_REC_DEVICE] = "device",
	[GA_REC_LAUNCH] = "launch",
	[GA_REC_ERROR] = "error",
	[GA_REC_SOURCE] = "source",
	[GA_REC_UNPROFILED] = "unprofiled",
	[GA_REC_END] = "end",
	[GA_REC_GPU] = "gpu",
};

ga_record_type ga_record_type_of(const char *name)
{
	if (!name)
		return GA_REC_NONE;
	for (int t = 0; t < GA_REC_N; t++)
		if (strcmp(ga_record_names[t], name) == 0)
			return (ga_record_type)t;
	return GA_REC_NONE;
}
