/* measured.h: a measured launch's values into its record, the same
 * whether kernel replay (inject.c) or a loop's passes (loopreplay.c)
 * measured it.  A mechanism: it calls nothing above it. */
#ifndef GA_MEASURED_H
#define GA_MEASURED_H

#include "injstate.h"

/* Its metric set's values vals[] into the profile's metric order, its
 * duration into the kernel's mean, the source view told, its record out. */
void launch_done(ga_inj *st, ga_launch *l, const chip_cfg *chip, const metric_set *ms,
                 const double *vals, ga_repeat_slot *rep);

#endif
