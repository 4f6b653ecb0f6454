/* outname.c: %p, %h, %q{ENV} and %% in output file names.  See outname.h. */
#include "outname.h"

#include <stdlib.h>
#include <string.h>

char *ga_expand_output_name(const char *option, const char *pattern, long pid, const char *host,
                            ga_env_lookup env, ga_error *err)
{
	ga_buf b = { 0 };
	const char *p = pattern;

	if (!pattern)
		return NULL;
	while (*p) {
		if (*p != '%') {
			ga_buf_putc(&b, *p++);
			continue;
		}
		switch (p[1]) {
		case '%':
			ga_buf_putc(&b, '%');
			p += 2;
			break;
		case 'p':
			ga_buf_printf(&b, "%ld", pid);
			p += 2;
			break;
		case 'h':
			ga_buf_puts(&b, host ? host : "");
			p += 2;
			break;
		case 'q': {
			const char *open = p + 2, *close = *open == '{' ? strchr(open, '}') : NULL;
			if (!close || close == open + 1) {
				ga_fail(err, GA_ERR_USAGE, "%s '%s': %%q needs a variable name in braces, "
				        "as in %%q{OMPI_COMM_WORLD_RANK}", option, pattern);
				goto fail;
			}
			char *name = ga_xstrndup(open + 1, (size_t)(close - open - 1));
			const char *val = env ? env(name) : NULL;
			if (!val) {
				ga_fail(err, GA_ERR_USAGE, "%s '%s': environment variable %s is not set",
				        option, pattern, name);
				free(name);
				goto fail;
			}
			free(name);
			ga_buf_puts(&b, val);
			p = close + 1;
			break;
		}
		case '\0':
			ga_fail(err, GA_ERR_USAGE, "%s '%s': '%%' at the end (write %%%% for a "
			        "literal %%)", option, pattern);
			goto fail;
		default:
			ga_fail(err, GA_ERR_USAGE, "%s '%s': unknown '%%%c' (known: %%p, %%h, "
			        "%%q{ENV}, %%%%)", option, pattern, p[1]);
			goto fail;
		}
	}
	return ga_buf_take(&b);
fail:
	ga_buf_free(&b);
	return NULL;
}
