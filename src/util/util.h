/* util.h: allocation, strings, growable buffers and the error type shared by
 * every stage.  Allocation failure aborts with a message: gpuadvise has no
 * meaningful way to continue without memory, and it keeps call sites honest. */
#ifndef GA_UTIL_H
#define GA_UTIL_H

#include <pthread.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
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

/* msg holds two paths of PATH_MAX and their reason; a longer message
 * loses its middle, not its end (ga_fail), where the reason is. */
typedef struct {
	ga_errcode code;
	char msg[8192];
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
void ga_buf_putn(ga_buf *b, const char *s, size_t n);  /* n bytes, no NUL among them */
void ga_buf_printf(ga_buf *b, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
void ga_buf_vprintf(ga_buf *b, const char *fmt, va_list ap);
void ga_buf_free(ga_buf *b);
/* Take ownership of the string (never NULL), leaving b empty. */
char *ga_buf_take(ga_buf *b);

/* Read a whole file.  Returns a NUL-terminated malloc'd buffer or NULL with err set.
 * ga_read_file reads input files (profiles, baselines) and stops at the
 * input limit (ga_max_input): a larger file, or an endless one such as
 * /dev/zero, is an error (GA_ERR_PROFILE) that names the limit and how to
 * raise it.  A FIFO with no writer reads as empty instead of blocking. */
char *ga_read_file(const char *path, size_t *len, ga_error *err);
/* The same with a limit of max bytes (SIZE_MAX: none). */
char *ga_read_file_max(const char *path, size_t max, size_t *len, ga_error *err);
/* The input limit: GA_MAX_INPUT_DEFAULT, or the size in the environment
 * variable GPUADVISE_MAX_INPUT (bytes, or with a K, M or G suffix: KiB, MiB,
 * GiB).  0, or -1 with err (GA_ERR_USAGE) for a value that is not a size. */
#define GA_MAX_INPUT_DEFAULT ((size_t)256 << 20)
int ga_max_input(size_t *max, ga_error *err);
/* Write data atomically: a new file PATH.tmp.PID (O_EXCL; another suffix if
 * that name is taken), fsync, rename over PATH, so PATH is either the old or
 * the whole new content, and on failure the temporary file is removed.
 * "-" writes to stdout; a PATH that is a device or a pipe (/dev/stdout) is
 * written in place; a symbolic link is kept and the file it names replaced;
 * a directory is an error.  Messages name PATH. */
int ga_write_file_atomic(const char *path, const char *data, size_t len, ga_error *err);

/* Hash map from borrowed keys to size_t values: open addressing, linear
 * probing, grown at half full.  Keys are compared by eq (NULL: the same
 * pointer) after their hashes, so one table serves strings (ga_strmap_*),
 * pointers and composite keys alike.  Zero-initialise; free with
 * ga_map_free (keys are not freed). */
typedef int (*ga_map_eq)(const void *stored, const void *probe);
typedef struct {
	const void **keys;  /* NULL: empty slot */
	uint64_t *hashes;
	size_t *vals;
	size_t cap, n;      /* cap: 0 or a power of two */
} ga_map;
/* The value under key (whose hash is h), or -1. */
long ga_map_get(const ga_map *m, uint64_t h, const void *key, ga_map_eq eq);
/* Store val under key unless the key is there; returns the value stored. */
size_t ga_map_put(ga_map *m, uint64_t h, const void *key, size_t val, ga_map_eq eq);
void ga_map_free(ga_map *m);
/* FNV-1a over a string, and over n more bytes (continuing from h). */
uint64_t ga_hash_str(const char *s);
uint64_t ga_hash_bytes(uint64_t h, const void *p, size_t n);
uint64_t ga_hash_ptr(const void *p);
/* String keys (compared with strcmp). */
long ga_strmap_get(const ga_map *m, const char *key);
size_t ga_strmap_put(ga_map *m, const char *key, size_t val);

int ga_str_has_prefix(const char *s, const char *prefix);
int ga_str_has_suffix(const char *s, const char *suffix);

/* Does a kernel-name pattern of rules/owners.yaml match?  A glob
 * (fnmatch(3), no flags) matches the whole demangled name, without its
 * leading "void ", or the whole mangled name; a regex (regex_t, POSIX
 * extended) matches anywhere in either.  Either name may be NULL.  The
 * analysis (owner.c) and the collector (trigger.c) share it. */
int ga_names_match(const char *glob, const void *regex, const char *name, const char *mangled);

/* write(2) all of buf to fd, again after EINTR and short writes: 0, or -1
 * with errno set. */
int ga_write_all(int fd, const void *buf, size_t len);
/* CLOCK_MONOTONIC in seconds: for timing phases. */
double ga_mono_seconds(void);
/* The start time in /proc/PID/stat's text (field 22, clock ticks after
 * boot; the name in parentheses may hold spaces and parentheses): -1 when
 * it is not there. */
long long ga_stat_starttime(const char *stat);
/* Seconds since this process started (CLOCK_BOOTTIME against
 * /proc/self/stat), -1 when they cannot be read. */
double ga_process_age(void);
/* pthread_create with every signal blocked in the new thread, so that a
 * profiled program's signals stay with its own threads. */
int ga_thread_start(pthread_t *t, const pthread_attr_t *attr, void *(*fn)(void *), void *arg);
/* The environment variable `name` as a decimal integer; dflt when it is
 * unset, empty or not all digits. */
long ga_env_long(const char *name, long dflt);

/* For bench/phases.sh: append "mark WHAT SECONDS" (CLOCK_REALTIME) to the
 * file named by GPUADVISE_TIMING_LOG, if set. */
void ga_timing_mark(const char *what);

#endif
