/* util.h: allocation, strings, growable buffers and the error type shared by
 * every stage.  Allocation failure aborts with a message: gpuadvise has no
 * meaningful way to continue without memory, and it keeps call sites honest. */
#ifndef GA_UTIL_H
#define GA_UTIL_H

#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>

#define GA_ARRAY_LEN(a) (sizeof(a) / sizeof((a)[0]))

/* Error categories.  Only main() turns them into exit statuses. */
typedef enum {
	GA_OK = 0,
	GA_ERR_USAGE,       /* bad flag or argument (exit 2) */
	GA_ERR_NOT_FOUND,   /* PROGRAM or input file missing (exit 2) */
	GA_ERR_IO,          /* reading or writing a file failed */
	GA_ERR_PROFILE,     /* a profile/baseline JSON is malformed */
	GA_ERR_RULES,       /* a rule file is malformed (exit 3) */
	GA_ERR_PROFILING,   /* CUPTI or driver failure while profiling (exit 4) */
	GA_ERR_NO_GPU,      /* no CUDA driver or device (exit 4) */
	GA_ERR_PERMISSION,  /* no permission to read GPU counters (exit 4) */
	GA_ERR_NO_KERNELS,  /* the application launched no kernel (exit 4) */
	GA_ERR__COUNT
} ga_errcode;

typedef struct {
	ga_errcode code;
	char msg[2048];
} ga_error;

const char *ga_errcode_name(ga_errcode code);
/* Set err (if non-NULL) and return -1, so callers can `return ga_fail(...)`. */
int ga_fail(ga_error *err, ga_errcode code, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

void *ga_xmalloc(size_t n);
void *ga_xcalloc(size_t n, size_t size);
void *ga_xrealloc(void *p, size_t n);
char *ga_xstrdup(const char *s);         /* NULL in, NULL out */
char *ga_xstrndup(const char *s, size_t n);
char *ga_xasprintf(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

/* Grow *v (element size esz) so that it holds at least need elements. */
void ga_grow(void **v, size_t *cap, size_t need, size_t esz);
#define GA_PUSH(vec, n, cap, val)                                            \
	do {                                                                  \
		ga_grow((void **)&(vec), &(cap), (n) + 1, sizeof(*(vec)));    \
		(vec)[(n)++] = (val);                                         \
	} while (0)

/* Growable string.  Owned by the caller; free with ga_buf_free. */
typedef struct {
	char *s;
	size_t len, cap;
} ga_buf;
void ga_buf_putc(ga_buf *b, char c);
void ga_buf_puts(ga_buf *b, const char *s);
void ga_buf_printf(ga_buf *b, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
void ga_buf_vprintf(ga_buf *b, const char *fmt, va_list ap);
void ga_buf_free(ga_buf *b);
/* Take ownership of the string (never NULL), leaving b empty. */
char *ga_buf_take(ga_buf *b);

/* Read a whole file.  Returns a NUL-terminated malloc'd buffer or NULL with err set. */
char *ga_read_file(const char *path, size_t *len, ga_error *err);
/* Write data atomically: a new file PATH.tmp.PID (O_EXCL; another suffix if
 * that name is taken), fsync, rename over PATH, so PATH is either the old or
 * the whole new content, and on failure the temporary file is removed.
 * "-" writes to stdout; a PATH that is a device or a pipe (/dev/stdout) is
 * written in place; a symbolic link is kept and the file it names replaced;
 * a directory is an error.  Messages name PATH. */
int ga_write_file_atomic(const char *path, const char *data, size_t len, ga_error *err);

int ga_str_has_prefix(const char *s, const char *prefix);
int ga_str_has_suffix(const char *s, const char *suffix);

#endif
