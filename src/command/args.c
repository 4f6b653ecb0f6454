/* args.c: option values that several commands read: counts and
 * percentages, refused with a message that names the option. */
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
