/* check.h: the harnesses' invariant check.  CHECK(cond) aborts with the
 * condition and where it failed, so that libFuzzer keeps the input as a
 * crash.  FUZZ_NAME names the harness in the message. */
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

#endif
