/* cubins.c: what the source view keeps of the program's code, shared by
 * sass.c (SASS metrics) and pcsamp.c (PC sampling): the cubins that CUPTI's
 * MODULE_LOADED callback hands over, the line of a PC in one
 * (cuptiGetSassToSourceCorrelation), each instruction's opcode from
 * nvdisasm's listing, the launch being measured, and the source log.  The
 * source view's state (sass_state, sassint.h) lives here, below both. */
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <spawn.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cupti.h>

#include "collect.h"
#include "sassint.h"
#include "writer.h"

extern char **environ;        /* the program's, for nvdisasm */

#define MAX_CUBIN_BYTES (512UL << 20)   /* keep at most this much cubin text */

/* Cubins are only ever prepended and never freed: readers take the head
 * under cubin_lock and walk the list without it. */
static pthread_mutex_t cubin_lock = PTHREAD_MUTEX_INITIALIZER;

sass_state sass;

void sass_logf(const char *fmt, ...)
{
	va_list ap;
	if (!sass.log)
		return;
	va_start(ap, fmt);
	vfprintf(sass.log, fmt, ap);
	va_end(ap);
	fputc('\n', sass.log);
	fflush(sass.log);
}

CUptiResult sass_logged(CUptiResult r, const char *what)
{
	sass_logf("%s -> %d (%s)", what, (int)r, ga_cupti_result_string(r));
	return r;
}

void sass_note(const char *fmt, ...)
{
	char msg[1024];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	sass_logf("note: %s", msg);
	ga_rec_error("source", "%s", msg);
}

void ga_sass_module_loaded(const void *data)
{
	const CUpti_ModuleResourceData *m = data;
	if (sass.mode == MODE_OFF || !m || !m->pCubin || m->cubinSize == 0)
		return;
	pthread_mutex_lock(&cubin_lock);
	if (sass.cubin_bytes + m->cubinSize > MAX_CUBIN_BYTES) {
		sass.cubins_dropped++;
		pthread_mutex_unlock(&cubin_lock);
		return;
	}
	cubin *c = ga_xcalloc(1, sizeof(*c));
	CUpti_GetCubinCrcParams p = {CUpti_GetCubinCrcParamsSize};
	p.cubin = m->pCubin;
	p.cubinSize = m->cubinSize;
	if (sass_logged(cuptiGetCubinCrc(&p), "cuptiGetCubinCrc") == CUPTI_SUCCESS)
		c->crc = p.cubinCrc;
	c->data = ga_xmalloc(m->cubinSize);
	memcpy(c->data, m->pCubin, m->cubinSize);
	c->size = m->cubinSize;
	c->next = sass.cubins;
	sass.cubins = c;
	sass.cubin_bytes += c->size;
	pthread_mutex_unlock(&cubin_lock);
	sass_logf("module %u: cubin %zu bytes, crc %llx", m->moduleId, c->size,
	          (unsigned long long)c->crc);
}

void set_active(want *w, sass_activity kind, CUcontext ctx, CUdevice dev,
                const unsigned grid[3], const unsigned block[3])
{
	sass.active = w;
	sass.active_kind = kind;
	sass.ctx = ctx;
	sass.dev = (int)dev;
	memcpy(sass.grid, grid, sizeof(sass.grid));
	memcpy(sass.block, block, sizeof(sass.block));
}

int correlate(const cubin *c, const char *fn, uint32_t pc, char **file, int *line)
{
	CUpti_GetSassToSourceCorrelationParams p = {CUpti_GetSassToSourceCorrelationParamsSize};
	p.cubin = c->data;
	p.cubinSize = c->size;
	p.functionName = fn;
	p.pcOffset = pc;
	CUptiResult r = cuptiGetSassToSourceCorrelation(&p);
	*file = NULL;
	*line = 0;
	if (r != CUPTI_SUCCESS) {
		free(p.fileName);
		free(p.dirName);
		return -1;
	}
	if (p.fileName && *p.fileName && p.lineNumber > 0) {
		if (p.fileName[0] != '/' && p.dirName && *p.dirName)
			*file = ga_xasprintf("%s/%s", p.dirName, p.fileName);
		else
			*file = ga_xstrdup(p.fileName);
		*line = (int)p.lineNumber;
	}
	free(p.fileName);
	free(p.dirName);
	return 0;
}

/* The cubin holding fn: by CRC first (SASS records give 32 bits of it, PC
 * sampling 64), else any cubin that can correlate it. */
cubin *find_cubin(uint64_t crc, const char *fn, uint32_t pc)
{
	char *file;
	int line;
	pthread_mutex_lock(&cubin_lock);
	cubin *head = sass.cubins;
	pthread_mutex_unlock(&cubin_lock);
	for (cubin *c = head; c; c = c->next)
		if (c->crc == crc || (uint32_t)c->crc == (uint32_t)crc)
			return c;
	for (cubin *c = head; c; c = c->next)
		if (correlate(c, fn, pc, &file, &line) == 0) {
			free(file);
			return c;
		}
	return NULL;
}

/* nvdisasm -c -hex CUBIN (code only, each instruction's encoding beside
 * it: its control bits name the scoreboards) with stdout into fd: the toolkit's,
 * found on PATH, then under $CUDA_HOME, $CUDA_PATH and /usr/local/cuda.
 * 0 when it ran and exited 0. */
static int run_nvdisasm(const char *cubin_path, int fd)
{
	const char *homes[] = {getenv("CUDA_HOME"), getenv("CUDA_PATH"), "/usr/local/cuda"};
	char *argv[] = {"nvdisasm", "-c", "-hex", (char *)cubin_path, NULL};
	posix_spawn_file_actions_t fa;
	pid_t pid = -1;
	int rc = -1, status;

	posix_spawn_file_actions_init(&fa);
	posix_spawn_file_actions_adddup2(&fa, fd, 1);
	posix_spawn_file_actions_addopen(&fa, 2, "/dev/null", O_WRONLY, 0);
	if (posix_spawnp(&pid, "nvdisasm", &fa, NULL, argv, environ) != 0) {
		pid = -1;
		for (size_t i = 0; i < sizeof(homes) / sizeof(homes[0]) && pid < 0; i++) {
			char *path;
			if (!homes[i] || !*homes[i])
				continue;
			path = ga_xasprintf("%s/bin/nvdisasm", homes[i]);
			if (access(path, X_OK) != 0 ||
			    posix_spawn(&pid, path, &fa, NULL, argv, environ) != 0)
				pid = -1;
			free(path);
		}
	}
	posix_spawn_file_actions_destroy(&fa);
	if (pid < 0)
		return -2;
	while (waitpid(pid, &status, 0) < 0)
		if (errno != EINTR)
			return -1;
	if (WIFEXITED(status) && WEXITSTATUS(status) == 0)
		rc = 0;
	return rc;
}

/* The cubin's listing by nvdisasm, made once (under inject.c's lock, like
 * every reader); NULL when it cannot be made (*rc: run_nvdisasm's). */
static const char *listing(cubin *cb, int *rc)
{
	const char *tmp = getenv("TMPDIR");
	char *cpath, *lpath;
	int cfd, lfd;

	*rc = 0;
	if (cb->listing_tried)
		return cb->listing;
	cb->listing_tried = 1;
	*rc = -1;
	cpath = ga_xasprintf("%s/gpuadvise-XXXXXX.cubin", tmp && *tmp ? tmp : "/tmp");
	lpath = ga_xasprintf("%s/gpuadvise-XXXXXX.sass", tmp && *tmp ? tmp : "/tmp");
	cfd = mkstemps(cpath, 6);
	lfd = mkstemps(lpath, 5);
	if (cfd >= 0 && lfd >= 0 && ga_write_all(cfd, cb->data, cb->size) == 0) {
		double t0 = ga_mono_seconds();
		*rc = run_nvdisasm(cpath, lfd);
		if (*rc == 0)
			cb->listing = ga_read_file_max(lpath, 256UL << 20, NULL, NULL);
		sass_logf("nvdisasm of a %zu-byte cubin -> %d (%.3f s)", cb->size, *rc,
		          ga_mono_seconds() - t0);
	}
	if (cfd >= 0) {
		close(cfd);
		unlink(cpath);
	}
	if (lfd >= 0) {
		close(lfd);
		unlink(lpath);
	}
	free(cpath);
	free(lpath);
	return cb->listing;
}

/* Each PC's opcode, from nvdisasm's listing of the kernel's cubin (the
 * toolkit's disassembler: CUPTI has none).  One listing per cubin, however
 * many of its kernels are measured.  Without nvdisasm the source lines
 * stay, without opcodes; a note says so once. */
void cubin_disassemble(cubin *cb, ga_source *src)
{
	static int noted;
	int rc;
	const char *text = listing(cb, &rc);

	if (text) {
		size_t n = ga_source_set_ops(src, text);
		sass_logf("%s: %zu opcodes", src->mangled, n);
	} else if (rc != 0 && !noted++) {
		if (rc == -2)
			sass_note("nvdisasm (CUDA toolkit) was not found on PATH or in $CUDA_HOME/bin: "
			          "source lines come without opcodes");
		else
			sass_note("nvdisasm could not list %s's cubin: source lines come without "
			          "opcodes", src->mangled);
	}
}
