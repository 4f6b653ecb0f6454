/* outname.h: output file names for runs of many processes, as Nsight
 * Compute writes them.  In a name given to -o or --log-file:
 *   %p       the process id of gpuadvise
 *   %h       the host name
 *   %q{ENV}  the value of the environment variable ENV (an error when unset)
 *   %%       a literal %
 * Any other character after '%' is an error, so that a typo does not quietly
 * become part of a file name.  Pure: the caller supplies the pid, the host
 * name and the environment lookup. */
#ifndef GA_OUTNAME_H
#define GA_OUTNAME_H

#include "../util/util.h"

/* Returns the value of an environment variable, or NULL when it is unset
 * (getenv fits). */
typedef const char *(*ga_env_lookup)(const char *name);

/* The expanded name, malloc'd (the caller frees it), or NULL with err set
 * (GA_ERR_USAGE) naming the option, the pattern and the problem. */
char *ga_expand_output_name(const char *option, const char *pattern, long pid, const char *host,
                            ga_env_lookup env, ga_error *err);

#endif
