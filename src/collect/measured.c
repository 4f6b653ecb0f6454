/* measured.c: a measured launch's values into its record.  See
 * measured.h. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "measured.h"
#include "nvtx.h"
#include "sass.h"
#include "writer.h"

void launch_done(ga_inj *st, ga_launch *l, const chip_cfg *chip, const metric_set *ms,
                 const double *vals, ga_repeat_slot *rep)
{
	l->values = ga_xmalloc(st->prof.n_metrics * sizeof(double));
	for (size_t i = 0; i < st->prof.n_metrics; i++)
		l->values[i] = NAN;
	for (size_t i = 0; i < ms->n_names; i++) {
		l->values[ms->slot[i]] = vals[i];
		if (strcmp(ms->names[i], "gpu__time_duration.sum") == 0)
			l->duration_ns = vals[i];
	}
	/* Before the duration feeds the kernel's mean: a loop's range also
	 * timed the GPU waiting for the launch. */
	l->range_ns = ga_launch_range_correct((const char *const *)st->prof.metrics,
	                                      st->prof.n_metrics, l->values, &l->duration_ns,
	                                      chip->range_marker_cycles);
	ga_sched_note_duration(&st->sched, rep, l->duration_ns);
	ga_nvtx_profiled(ga_sched_slot(&st->sched, rep), l->nvtx);
	ga_sass_note(l->mangled, l->name, (uint32_t)l->context, st->prof.metrics, l->values,
	             st->prof.n_metrics);
	ga_rec_launch(&st->prof, l);
}
