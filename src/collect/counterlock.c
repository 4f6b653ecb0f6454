/* counterlock.c: the processes of a run take turns with each GPU's
 * counters.  See counterlock.h.
 *
 * While one process measures on a GPU, another's range start gets
 * CUPTI_ERROR_HARDWARE_BUSY there (rangeprof.c retries it for 2 s), and
 * disabling and re-enabling the range profiler within a context crashed
 * on an H200.  So the processes of a run (children
 * inherit the injection library) that use the same GPU take turns: the
 * first to measure there holds the GPU's lock file, RUN_DIR/counters-UUID,
 * until its contexts on that GPU are destroyed or it exits (the kernel
 * drops the lock even on a crash).  The GPU is known by its UUID, so that
 * two processes that number their GPUs differently (CUDA_VISIBLE_DEVICES,
 * one GPU a rank under torchrun) still share the right lock, and processes
 * on different GPUs measure at the same time.  A process waits up to
 * GA_ENV_LOCK_WAIT seconds and then runs unprofiled on that GPU, with a
 * note, rather than risk stalling processes that wait for each other. */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <time.h>
#include <unistd.h>

#include "counterlock.h"
#include "protocol.h"
#include "writer.h"

void counters_lock_init(ga_inj *st, const char *dir)
{
	free(st->lock_dir);
	st->lock_dir = dir && *dir ? ga_xstrdup(dir) : NULL;
}

/* "GPU-" and the 16 bytes as nvidia-smi writes them: 8-4-4-4-12 hex. */
static void uuid_text(const CUuuid *u, char *out, size_t len)
{
	static const int dash[] = {4, 6, 8, 10};
	size_t n = (size_t)snprintf(out, len, "GPU-");
	for (int i = 0, d = 0; i < 16 && n + 3 < len; i++) {
		if (d < 4 && i == dash[d]) {
			out[n++] = '-';
			d++;
		}
		n += (size_t)snprintf(out + n, len - n, "%02x", (unsigned char)u->bytes[i]);
	}
	out[n < len ? n : len - 1] = '\0';
}

void counters_record_gpu(CUcontext ctx)
{
	CUdevice dev;
	CUcontext was = NULL;
	CUuuid u;
	char id[48];
	CUresult r;

	/* cuCtxGetDevice reads the current context's: make it ctx a moment */
	if (!ctx || cuCtxPushCurrent(ctx) != CUDA_SUCCESS)
		return;
	r = cuCtxGetDevice(&dev);
	cuCtxPopCurrent(&was);
	if (r != CUDA_SUCCESS)
		return;
	if (cuDeviceGetUuid(&u, dev) == CUDA_SUCCESS) {
		uuid_text(&u, id, sizeof(id));
		ga_rec_gpu((int)dev, id);
	} else {
		ga_rec_gpu((int)dev, NULL);
	}
}

int counters_lock_of(ga_inj *st, CUdevice dev)
{
	CUuuid u;
	char id[sizeof(st->locks[0].uuid)];

	if (!st->lock_dir)
		return -1;
	if (cuDeviceGetUuid(&u, dev) == CUDA_SUCCESS)
		uuid_text(&u, id, sizeof(id));
	else
		snprintf(id, sizeof(id), "device-%d", (int)dev);
	for (size_t i = 0; i < st->n_locks; i++)
		if (strcmp(st->locks[i].uuid, id) == 0)
			return (int)i;
	if (st->n_locks == GA_MAX_LOCKS)
		return -1;
	ga_dev_lock *l = &st->locks[st->n_locks];
	char *path = ga_xasprintf("%s/counters-%s.lock", st->lock_dir, id);
	memset(l, 0, sizeof(*l));
	snprintf(l->uuid, sizeof(l->uuid), "%s", id);
	l->ordinal = (int)dev;
	l->fd = open(path, O_RDWR | O_CREAT | O_CLOEXEC, 0600);
	free(path);
	return (int)st->n_locks++;
}

int hold_counters(ga_inj *st, const ctx_state *cs)
{
	ga_dev_lock *l = cs && cs->lock >= 0 ? &st->locks[cs->lock] : NULL;

	if (!l || l->fd < 0 || l->held)
		return 1;
	if (l->gave_up)
		return 0;
	long wait_ms = ga_env_long(GA_ENV_LOCK_WAIT, 10) * 1000;
	for (long waited = 0;; waited += 10) {
		if (flock(l->fd, LOCK_EX | LOCK_NB) == 0) {
			l->held = 1;
			return 1;
		}
		if (errno != EWOULDBLOCK && errno != EINTR)
			return 1;       /* no locking here: try anyway */
		if (waited >= wait_ms)
			break;
		struct timespec ts = {0, 10 * 1000 * 1000};
		nanosleep(&ts, NULL);
	}
	l->gave_up = 1;
	ga_rec_error("busy", "another process of this run held the counters of GPU %d (%s) for "
	             "%ld s; this process ran unprofiled there (raise %s to wait longer)",
	             l->ordinal, l->uuid, wait_ms / 1000, GA_ENV_LOCK_WAIT);
	return 0;
}

void release_counters(ga_inj *st)
{
	for (size_t i = 0; i < st->n_locks; i++) {
		ga_dev_lock *l = &st->locks[i];
		int in_use = 0;
		if (!l->held)
			continue;
		for (const ctx_state *cs = st->ctxs; cs; cs = cs->next)
			in_use |= cs->lock == (int)i && cs->rp != NULL;
		if (!in_use) {
			flock(l->fd, LOCK_UN);
			l->held = 0;
		}
	}
}
