/* check.h: what the harnesses share.  CHECK(cond) aborts with the
 * condition and where it failed, so that libFuzzer keeps the input as a
 * crash; FUZZ_NAME names the harness in the message.  Include after the
 * project headers. */
#ifndef GA_FUZZ_CHECK_H
#define GA_FUZZ_CHECK_H

#include <stdio.h>
#include <stdlib.h>

#define CHECK(cond)                                                            \
	do {                                                                   \
		if (!(cond)) {                                                 \
			fprintf(stderr, "%s: check failed: %s (%s:%d)\n", FUZZ_NAME, \
			        #cond, __FILE__, __LINE__);                     \
			abort();                                               \
		}                                                              \
	} while (0)

#if defined(GA_FUZZ_RULES) && defined(GA_RULES_H)
/* The shipped rules, loaded and validated, or abort with the diagnostics. */
static void load_shipped_rules(ga_ruleset *rs)
{
	ga_diags d = {0};

	ga_ruleset_init(rs);
	if (ga_rules_load_dir(rs, GA_FUZZ_RULES, &d) != 0 || ga_ruleset_validate(rs, &d) != 0) {
		ga_diags_print(&d, stderr);
		abort();
	}
	ga_diags_free(&d);
}
#endif

#endif
