/* writer.h: the injection library's records (protocol.h), appended to
 * RUN_DIR/<pid>.rec.
 *
 * Each record is one JSON line written by a single write(2) on an O_APPEND
 * descriptor: whatever happens to the application later (abort, kill -9,
 * _exit), the records written so far are whole on disk for the launcher.
 * No CUDA or CUPTI here. */
#ifndef GA_WRITER_H
#define GA_WRITER_H

#include <stddef.h>
#include <stdint.h>

#include "../profile/profile.h"
#include "../profile/source.h"

/* Open dir/<pid>.rec for appending: 0, or -1 with errno set. */
int ga_rec_open(const char *dir, int pid);
void ga_rec_close(void);

/* Write a record (a json_t *, taken over; "type" already set); nothing
 * when the file is not open. */
void ga_rec_write(void *json);

/* The start record, with the process's rank, world size and local rank
 * (the first launcher's variables set, ga_rank_env) and its host. */
void ga_rec_start(int ppid, const char *tool_version);
/* A GPU the process uses: its ordinal here and its UUID (NULL: unknown). */
void ga_rec_gpu(int index, const char *uuid);
/* One metric set of a device record. */
typedef struct {
	size_t passes;
	const char *const *names;
	size_t n_names;
} ga_rec_set;
/* sets[0] holds the duration too; the others' copy is not listed again. */
void ga_rec_device(uint32_t context, const ga_device *dev, const ga_rec_set *sets,
                   size_t n_sets);
void ga_rec_launch(const ga_profile *p, const ga_launch *l);
void ga_rec_unprofiled(const ga_unprofiled *u);
void ga_rec_source(const ga_source *src);
void ga_rec_error(const char *code, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
void ga_rec_bad_metric(const char *metric);
void ga_rec_end(long launches, long matched, long profiled, double setup_seconds,
                double measure_seconds, long loop_launches,
                long graph_launches);

#endif
