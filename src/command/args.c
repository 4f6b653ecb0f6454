/* args.c: what the command files share: option values that several commands
 * read (counts and percentages, refused with a message that names the
 * option), and the one mapping of errors to exit statuses. */
#include "cmd.h"

#include <errno.h>
#include <stdlib.h>

long ga_cmd_parse_count(struct argp_state *state, const char *opt, const char *arg)
{
	char *end;
	errno = 0;
	long v = strtol(arg, &end, 10);
	if (errno || *end || v < 0 || end == arg)
		argp_error(state, "%s expects a non-negative integer, not '%s'", opt, arg);
	return v;
}

double ga_cmd_parse_pct(struct argp_state *state, const char *opt, const char *arg, double max)
{
	char *end;
	errno = 0;
	double v = strtod(arg, &end);
	if (end != arg && *end == '%')
		end++;
	if (errno || end == arg || *end || !(v >= 0) || !(v <= max))
		argp_error(state, "%s expects a percentage such as 10 or 2.5, not '%s'", opt, arg);
	return v;
}

int ga_cmd_exit_for_error(const ga_error *err)
{
	switch (err->code) {
	case GA_ERR_USAGE:
	case GA_ERR_NOT_FOUND:
		return GA_EXIT_USAGE;
	case GA_ERR_RULES:
		return GA_EXIT_RULES;
	case GA_ERR_PROFILING:
	case GA_ERR_NO_GPU:
	case GA_ERR_PERMISSION:
	case GA_ERR_NO_KERNELS:
		return GA_EXIT_PROFILING;
	case GA_ERR_PROFILE:
	case GA_ERR_IO:
	default:
		return GA_EXIT_USAGE;
	}
}
