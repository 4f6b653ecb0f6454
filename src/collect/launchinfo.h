/* launchinfo.h: what a launch is, from its driver callback: the kernel's
 * name, grid, block, registers, shared memory and theoretical occupancy.
 * A mechanism: it calls nothing above it. */
#ifndef GA_LAUNCHINFO_H
#define GA_LAUNCHINFO_H

#include "injstate.h"

char *demangle(const char *mangled);
int launch_params(CUpti_CallbackId cbid, const void *params, CUfunction *f, unsigned grid[3],
                  unsigned block[3], unsigned *smem, CUstream *stream);
/* Fill *l with the launch's metadata (name is taken, NULL: demangle);
 * pid and index: the process and the launch's number in it. */
void launch_meta(ga_launch *l, ctx_state *cs, const launch_args *a, uint32_t ctx_uid,
                 char *name, int pid, long index);
void launch_free(ga_launch *l);

#endif
