/* util.c: see util.h. */
#include "util.h"

#include <signal.h>
#include <errno.h>
#include <fcntl.h>
#include <fnmatch.h>
#include <regex.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

static const char *errcode_names[GA_ERR__COUNT] = {
	[GA_OK] = "ok",
	[GA_ERR_USAGE] = "usage error",
	[GA_ERR_NOT_FOUND] = "not found",
	[GA_ERR_IO] = "I/O error",
	[GA_ERR_PROFILE] = "bad profile",
	[GA_ERR_RULES] = "bad rule file",
	[GA_ERR_PROFILING] = "profiling failed",
	[GA_ERR_NO_GPU] = "no GPU",
	[GA_ERR_PERMISSION] = "no permission to read GPU counters",
	[GA_ERR_NO_KERNELS] = "no kernels profiled",
};

const char *ga_errcode_name(ga_errcode code)
{
	if ((unsigned)code >= GA_ERR__COUNT)
		return "unknown error";
	return errcode_names[code];
}

/* s (n bytes) into buf; too long, its middle gives way to " ... ": a
 * message names its subject first and ends with the reason. */
static void keep_ends(char *buf, size_t size, const char *s, size_t n)
{
	static const char gap[] = " ... ";
	size_t head = size / 4, tail = size - head - sizeof(gap);

	if (n < size) {
		memcpy(buf, s, n + 1);
		return;
	}
	memcpy(buf, s, head);
	memcpy(buf + head, gap, sizeof(gap) - 1);
	memcpy(buf + head + sizeof(gap) - 1, s + n - tail, tail);
	buf[size - 1] = '\0';
}

int ga_fail(ga_error *err, ga_errcode code, const char *fmt, ...)
{
	if (err) {
		va_list ap;
		char *full = NULL;
		int n;

		err->code = code;
		va_start(ap, fmt);
		n = vasprintf(&full, fmt, ap);
		va_end(ap);
		if (n < 0)
			snprintf(err->msg, sizeof(err->msg), "%s", fmt);
		else
			keep_ends(err->msg, sizeof(err->msg), full, (size_t)n);
		free(full);
	}
	return -1;
}

static void oom(size_t n)
{
	fprintf(stderr, "gpuadvise: out of memory (asked for %zu bytes)\n", n);
	abort();
}

void *ga_xmalloc(size_t n)
{
	void *p = malloc(n ? n : 1);
	if (!p)
		oom(n);
	return p;
}

void *ga_xcalloc(size_t n, size_t size)
{
	void *p = calloc(n ? n : 1, size ? size : 1);
	if (!p)
		oom(n * size);
	return p;
}

void *ga_xrealloc(void *p, size_t n)
{
	p = realloc(p, n ? n : 1);
	if (!p)
		oom(n);
	return p;
}

char *ga_xstrdup(const char *s)
{
	if (!s)
		return NULL;
	return ga_xstrndup(s, strlen(s));
}

char *ga_xstrndup(const char *s, size_t n)
{
	char *d = ga_xmalloc(n + 1);
	memcpy(d, s, n);
	d[n] = '\0';
	return d;
}

char *ga_xasprintf(const char *fmt, ...)
{
	ga_buf b = {0};
	va_list ap;
	va_start(ap, fmt);
	ga_buf_vprintf(&b, fmt, ap);
	va_end(ap);
	return ga_buf_take(&b);
}

void ga_grow(void **v, size_t *cap, size_t need, size_t esz)
{
	if (need <= *cap)
		return;
	size_t ncap = *cap ? *cap * 2 : 8;
	while (ncap < need)
		ncap *= 2;
	*v = ga_xrealloc(*v, ncap * esz);
	*cap = ncap;
}

static void buf_reserve(ga_buf *b, size_t extra)
{
	if (b->len + extra + 1 > b->cap) {
		size_t ncap = b->cap ? b->cap * 2 : 64;
		while (ncap < b->len + extra + 1)
			ncap *= 2;
		b->s = ga_xrealloc(b->s, ncap);
		b->cap = ncap;
	}
}

void ga_buf_putc(ga_buf *b, char c)
{
	buf_reserve(b, 1);
	b->s[b->len++] = c;
	b->s[b->len] = '\0';
}

void ga_buf_putn(ga_buf *b, const char *s, size_t n)
{
	buf_reserve(b, n);
	memcpy(b->s + b->len, s, n);
	b->len += n;
	b->s[b->len] = '\0';
}

void ga_buf_puts(ga_buf *b, const char *s)
{
	ga_buf_putn(b, s, strlen(s));
}

void ga_buf_vprintf(ga_buf *b, const char *fmt, va_list ap)
{
	va_list ap2;
	/* Never true; said so for gcc, which under -fsanitize=undefined
	 * otherwise warns of a null format string below. */
	if (!fmt)
		return;
	/* Straight into the room left when it fits (most calls: a report
	 * is thousands of small pieces), formatting a second time only when
	 * it does not. */
	size_t room = b->cap > b->len ? b->cap - b->len : 0;
	va_copy(ap2, ap);
	int n = vsnprintf(room ? b->s + b->len : NULL, room, fmt, ap2);
	va_end(ap2);
	if (n < 0) {
		if (room)
			b->s[b->len] = '\0';
		return;
	}
	if ((size_t)n >= room) {
		buf_reserve(b, (size_t)n);
		vsnprintf(b->s + b->len, (size_t)n + 1, fmt, ap);
	}
	b->len += (size_t)n;
}

void ga_buf_printf(ga_buf *b, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	ga_buf_vprintf(b, fmt, ap);
	va_end(ap);
}

void ga_buf_free(ga_buf *b)
{
	free(b->s);
	b->s = NULL;
	b->len = b->cap = 0;
}

char *ga_buf_take(ga_buf *b)
{
	char *s = b->s ? b->s : ga_xstrdup("");
	b->s = NULL;
	b->len = b->cap = 0;
	return s;
}

int ga_max_input(size_t *max, ga_error *err)
{
	const char *v = getenv("GPUADVISE_MAX_INPUT");
	unsigned long long n;
	char *end;
	int shift = 0;

	*max = GA_MAX_INPUT_DEFAULT;
	if (!v || !*v)
		return 0;
	errno = 0;
	n = strtoull(v, &end, 10);
	switch (*end) {
	case 'k': case 'K': shift = 10; end++; break;
	case 'm': case 'M': shift = 20; end++; break;
	case 'g': case 'G': shift = 30; end++; break;
	}
	if (*end == 'i' && shift)   /* "1GiB", "512MiB" */
		end++;
	if (*end == 'B' && shift)
		end++;
	if (errno || end == v || *end || v[0] == '-' || n == 0 || n > (SIZE_MAX >> shift))
		return ga_fail(err, GA_ERR_USAGE, "GPUADVISE_MAX_INPUT: expected a size in bytes "
		               "such as 512M or 2G, not '%s'", v);
	*max = (size_t)n << shift;
	return 0;
}

/* "256 MiB" */
static void fmt_size(size_t n, char *buf, size_t len)
{
	if (n % (1u << 30) == 0)
		snprintf(buf, len, "%zu GiB", n >> 30);
	else if (n % (1u << 20) == 0)
		snprintf(buf, len, "%zu MiB", n >> 20);
	else if (n % 1024 == 0)
		snprintf(buf, len, "%zu KiB", n >> 10);
	else
		snprintf(buf, len, "%zu bytes", n);
}

static void *too_large(const char *path, size_t max, ga_error *err)
{
	char lim[64];

	fmt_size(max, lim, sizeof(lim));
	ga_fail(err, GA_ERR_PROFILE, "%s: larger than the input limit of %s (set "
	        "GPUADVISE_MAX_INPUT, such as GPUADVISE_MAX_INPUT=2G, to read larger files)",
	        path, lim);
	return NULL;
}

/* Open for reading without blocking on a FIFO that has no writer (which
 * then reads as empty), then block as usual. */
static FILE *open_input(const char *path, struct stat *st, ga_error *err)
{
	int fd = open(path, O_RDONLY | O_NONBLOCK | O_CLOEXEC);
	FILE *f;

	if (fd < 0) {
		ga_fail(err, errno == ENOENT ? GA_ERR_NOT_FOUND : GA_ERR_IO,
		        "cannot open %s: %s", path, strerror(errno));
		return NULL;
	}
	if (fstat(fd, st) != 0 || S_ISDIR(st->st_mode) ||
	    fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) & ~O_NONBLOCK) != 0 || !(f = fdopen(fd, "rb"))) {
		ga_fail(err, GA_ERR_IO, "cannot read %s: %s", path,
		        S_ISDIR(st->st_mode) ? "it is a directory" : strerror(errno));
		close(fd);
		return NULL;
	}
	return f;
}

char *ga_read_file_max(const char *path, size_t max, size_t *len, ga_error *err)
{
	FILE *f = NULL;
	ga_buf b = {0};
	char chunk[65536];
	struct stat st = {0};
	size_t n;

	if (!(f = open_input(path, &st, err)))
		return NULL;
	/* A regular file too large is refused before it is read. */
	if (S_ISREG(st.st_mode) && (unsigned long long)st.st_size > max) {
		fclose(f);
		return too_large(path, max, err);
	}
	buf_reserve(&b, 0);
	while ((n = fread(chunk, 1, sizeof(chunk), f)) > 0) {
		if (n > max - b.len) {
			fclose(f);
			ga_buf_free(&b);
			return too_large(path, max, err);
		}
		buf_reserve(&b, n);
		memcpy(b.s + b.len, chunk, n);
		b.len += n;
		b.s[b.len] = '\0';
	}
	if (ferror(f)) {
		ga_fail(err, GA_ERR_IO, "cannot read %s: %s", path, strerror(errno));
		fclose(f);
		ga_buf_free(&b);
		return NULL;
	}
	fclose(f);
	if (len)
		*len = b.len;
	return ga_buf_take(&b);
}

char *ga_read_file(const char *path, size_t *len, ga_error *err)
{
	size_t max;

	if (ga_max_input(&max, err) != 0)
		return NULL;
	return ga_read_file_max(path, max, len, err);
}

int ga_write_all(int fd, const void *buf, size_t len)
{
	const char *data = buf;
	size_t off = 0;

	while (off < len) {
		ssize_t w = write(fd, data + off, len - off);
		if (w < 0) {
			if (errno == EINTR)
				continue;
			return -1;
		}
		off += (size_t)w;
	}
	return 0;
}

/* A device or a pipe (/dev/stdout, a FIFO): written where it is, since
 * it cannot be replaced by a rename. */
static int write_in_place(const char *path, const char *data, size_t len, ga_error *err)
{
	int fd = open(path, O_WRONLY | O_CLOEXEC);

	if (fd < 0)
		return ga_fail(err, GA_ERR_IO, "cannot write %s: %s", path, strerror(errno));
	if (ga_write_all(fd, data, len) != 0) {
		ga_fail(err, GA_ERR_IO, "cannot write %s: %s", path, strerror(errno));
		close(fd);
		return -1;
	}
	if (close(fd) != 0)
		return ga_fail(err, GA_ERR_IO, "cannot write %s: %s", path, strerror(errno));
	return 0;
}

int ga_write_file_atomic(const char *path, const char *data, size_t len, ga_error *err)
{
	char *tmp = NULL, *real = NULL;
	const char *target = path;
	struct stat st;
	int fd = -1, rc = -1;

	if (strcmp(path, "-") == 0) {
		if (fwrite(data, 1, len, stdout) != len || fflush(stdout) != 0)
			return ga_fail(err, GA_ERR_IO, "cannot write to standard output: %s",
			               strerror(errno));
		return 0;
	}
	if (stat(path, &st) == 0) {
		if (S_ISDIR(st.st_mode))
			return ga_fail(err, GA_ERR_IO, "cannot write %s: it is a directory", path);
		if (!S_ISREG(st.st_mode))
			return write_in_place(path, data, len, err);
		/* Through a symbolic link: replace the file it names, keeping
		 * the link. */
		if (lstat(path, &st) == 0 && S_ISLNK(st.st_mode) &&
		    (real = realpath(path, NULL)) != NULL)
			target = real;
	}
	/* O_EXCL: never follow a link planted under the temporary name, and
	 * never take over a file that is not ours (a stale one of a crashed
	 * run with the same pid: try another name). */
	for (int n = 0; n < 100; n++) {
		free(tmp);
		tmp = n ? ga_xasprintf("%s.tmp.%ld.%d", target, (long)getpid(), n)
		        : ga_xasprintf("%s.tmp.%ld", target, (long)getpid());
		fd = open(tmp, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0644);
		if (fd >= 0 || errno != EEXIST)
			break;
	}
	if (fd < 0) {
		ga_fail(err, GA_ERR_IO, "cannot write %s: %s (creating %s)", path, strerror(errno),
		        tmp);
		free(tmp);
		tmp = NULL;     /* not ours: leave it */
		goto out;
	}
	if (ga_write_all(fd, data, len) != 0) {
		ga_fail(err, GA_ERR_IO, "cannot write %s: %s", path, strerror(errno));
		goto out;
	}
	if (fsync(fd) != 0 && errno != EINVAL) {
		ga_fail(err, GA_ERR_IO, "cannot write %s: fsync: %s", path, strerror(errno));
		goto out;
	}
	if (close(fd) != 0) {
		fd = -1;
		ga_fail(err, GA_ERR_IO, "cannot write %s: %s", path, strerror(errno));
		goto out;
	}
	fd = -1;
	if (rename(tmp, target) != 0) {
		ga_fail(err, GA_ERR_IO, "cannot write %s: %s (renaming %s into place)", path,
		        strerror(errno), tmp);
		goto out;
	}
	rc = 0;
out:
	if (fd >= 0)
		close(fd);
	if (rc != 0 && tmp)
		unlink(tmp);
	free(tmp);
	free(real);
	return rc;
}

int ga_str_has_prefix(const char *s, const char *prefix)
{
	return strncmp(s, prefix, strlen(prefix)) == 0;
}

int ga_str_has_suffix(const char *s, const char *suffix)
{
	size_t a = strlen(s), b = strlen(suffix);
	return a >= b && strcmp(s + a - b, suffix) == 0;
}

/* ---- hash map ---- */

uint64_t ga_hash_bytes(uint64_t h, const void *p, size_t n)
{
	const unsigned char *b = p;

	for (size_t i = 0; i < n; i++)
		h = (h ^ b[i]) * 1099511628211ULL;
	return h;
}

uint64_t ga_hash_str(const char *s)
{
	uint64_t h = 14695981039346656037ULL;  /* FNV-1a */

	for (; *s; s++)
		h = (h ^ (unsigned char)*s) * 1099511628211ULL;
	return h;
}

uint64_t ga_hash_ptr(const void *p)
{
	uint64_t h = (uint64_t)(uintptr_t)p * 0x9E3779B97F4A7C15ULL;

	return h ^ (h >> 29);
}

/* The slot holding key, or the empty slot where it would go. */
static size_t map_slot(const ga_map *m, uint64_t h, const void *key, ga_map_eq eq)
{
	size_t mask = m->cap - 1, i;

	for (i = (size_t)h & mask; m->keys[i]; i = (i + 1) & mask)
		if (m->hashes[i] == h && (eq ? eq(m->keys[i], key) : m->keys[i] == key))
			break;
	return i;
}

long ga_map_get(const ga_map *m, uint64_t h, const void *key, ga_map_eq eq)
{
	size_t i;

	if (m->cap == 0)
		return -1;
	i = map_slot(m, h, key, eq);
	return m->keys[i] ? (long)m->vals[i] : -1;
}

size_t ga_map_put(ga_map *m, uint64_t h, const void *key, size_t val, ga_map_eq eq)
{
	size_t i;

	if ((m->n + 1) * 2 > m->cap) {
		ga_map big = {0};

		big.cap = m->cap ? m->cap * 2 : 64;
		big.keys = ga_xcalloc(big.cap, sizeof(*big.keys));
		big.hashes = ga_xcalloc(big.cap, sizeof(*big.hashes));
		big.vals = ga_xcalloc(big.cap, sizeof(*big.vals));
		for (i = 0; i < m->cap; i++) {
			if (!m->keys[i])
				continue;
			size_t j = (size_t)m->hashes[i] & (big.cap - 1);
			while (big.keys[j])
				j = (j + 1) & (big.cap - 1);
			big.keys[j] = m->keys[i];
			big.hashes[j] = m->hashes[i];
			big.vals[j] = m->vals[i];
		}
		big.n = m->n;
		ga_map_free(m);
		*m = big;
	}
	i = map_slot(m, h, key, eq);
	if (!m->keys[i]) {
		m->keys[i] = key;
		m->hashes[i] = h;
		m->vals[i] = val;
		m->n++;
	}
	return m->vals[i];
}

void ga_map_free(ga_map *m)
{
	free(m->keys);
	free(m->hashes);
	free(m->vals);
	memset(m, 0, sizeof(*m));
}

static int str_eq(const void *a, const void *b)
{
	return strcmp(a, b) == 0;
}

long ga_strmap_get(const ga_map *m, const char *key)
{
	return ga_map_get(m, ga_hash_str(key), key, str_eq);
}

size_t ga_strmap_put(ga_map *m, const char *key, size_t val)
{
	return ga_map_put(m, ga_hash_str(key), key, val, str_eq);
}

void ga_timing_mark(const char *what)
{
	const char *path = getenv("GPUADVISE_TIMING_LOG");
	struct timespec ts;
	FILE *f;

	if (!path || !*path || !(f = fopen(path, "a")))
		return;
	clock_gettime(CLOCK_REALTIME, &ts);
	fprintf(f, "mark %s %.3f\n", what, (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9);
	fclose(f);
}

int ga_thread_start(pthread_t *t, const pthread_attr_t *attr, void *(*fn)(void *), void *arg)
{
	sigset_t all, old;
	sigfillset(&all);
	pthread_sigmask(SIG_SETMASK, &all, &old);
	int rc = pthread_create(t, attr, fn, arg);
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	return rc;
}

double ga_mono_seconds(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

long long ga_stat_starttime(const char *stat)
{
	const char *q = strrchr(stat, ')');
	char *end;
	long long v;

	if (!q)
		return -1;
	/* after the name: " state ppid ..." (field 3 on) to field 22 */
	for (int field = 3; field <= 22; field++) {
		q = strchr(q + 1, ' ');
		if (!q)
			return -1;
	}
	errno = 0;
	v = strtoll(q + 1, &end, 10);
	if (errno || end == q + 1 || v < 0)
		return -1;
	return v;
}

double ga_process_age(void)
{
	char buf[1024];
	struct timespec now;
	long tck = sysconf(_SC_CLK_TCK);
	long long start;
	ssize_t n;
	int fd = open("/proc/self/stat", O_RDONLY | O_CLOEXEC);

	if (fd < 0)
		return -1;
	n = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	if (n <= 0 || tck <= 0 || clock_gettime(CLOCK_BOOTTIME, &now) != 0)
		return -1;
	buf[n] = '\0';
	if ((start = ga_stat_starttime(buf)) < 0)
		return -1;
	double age = (double)now.tv_sec + (double)now.tv_nsec * 1e-9 - (double)start / (double)tck;
	return age >= 0 ? age : -1;
}

long ga_env_long(const char *name, long dflt)
{
	const char *s = getenv(name);
	char *end;
	long v;
	if (!s || !*s)
		return dflt;
	v = strtol(s, &end, 10);
	return *end ? dflt : v;
}

int ga_names_match(const char *glob, const void *regex, const char *name, const char *mangled)
{
	const char *names[2] = {name, mangled};

	if (name && ga_str_has_prefix(name, "void "))
		names[0] = name + strlen("void ");
	for (int i = 0; i < 2; i++) {
		if (!names[i])
			continue;
		if (glob && fnmatch(glob, names[i], 0) == 0)
			return 1;
		if (regex && regexec(regex, names[i], 0, NULL, 0) == 0)
			return 1;
	}
	return 0;
}
