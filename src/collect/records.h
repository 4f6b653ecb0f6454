/* records.h: reading the records that the injection library leaves in a
 * run directory (the record types: protocol.h) into a profile, and what
 * they say about the run beside it.  No CUDA or CUPTI: the core library
 * holds it, and a unit test feeds it canned record files. */
#ifndef GA_RECORDS_H
#define GA_RECORDS_H

#include <stddef.h>

#include "../profile/profile.h"
#include "../util/util.h"

/* CUPTI_ERROR_HARDWARE_BUSY, said so that the user knows what to stop. */
#define GA_COUNTERS_BUSY                                                               \
	"the GPU's performance counters are in use by another profiler or monitor: "   \
	"DCGM's profiling module or dcgm-exporter, ncu, nsys, or another gpuadvise run"

/* What the records said beside the launches, devices and sources. */
typedef struct {
	int n_processes, n_ended;
	int permission, another_profiler, unsupported, cupti_errors, busy, counters_busy;
	char *busy_msg;
	char *first_error;          /* message of the first fatal-kind error */
	char **bad_metrics;
	size_t n_bad, cap_bad;
	int truncated_lines;
	int have_device;
	char *source_msg;           /* first note about source-level collection */
	int source_notes;
	char *loop_msg;             /* first process whose loop replay hit its budget */
	int loop_notes;
	char *no_replay_msg;        /* communication kernels left unmeasured (first process) */
	int no_replay_notes;
	char *watchdog_msg;         /* a process the watchdog stopped (the first) */
	int watchdog;
	char *timeline_msg;         /* the first note about the timeline */
	int timelines_cut;          /* timelines that are a snapshot: the process did not end normally */
	int stall_pass;             /* the stall run: only source records and notes */
	int stall_records;          /* source records it gave */
} ga_records;

void ga_records_free(ga_records *g);

/* Add the records of one .rec file to p and g.  -1 (err set) only when the
 * file cannot be read; a record that does not parse, and a last line
 * without its newline, count in g->truncated_lines. */
int ga_records_read_file(const char *path, ga_profile *p, ga_records *g, ga_error *err);

/* The same for every *.rec file in dir, and the processes' timelines
 * (*.timeline.json). */
void ga_records_read_dir(const char *dir, ga_profile *p, ga_records *g);

/* Sentences for the profile's collection note, each ending in ". ": what
 * happened to the processes (ended without the exit path, unprofiled,
 * CUPTI errors, source-line notes) ... */
void ga_records_note_run(const ga_records *g, ga_buf *note);
/* ... and to the records themselves (cut short, unknown metrics). */
void ga_records_note_data(const ga_records *g, ga_buf *note);

/* An error record that makes the whole run a failure (no permission,
 * another profiler attached, an unsupported setup; CUPTI errors or busy
 * counters with nothing profiled; no metric known): -1 with err set. */
int ga_records_failure(const ga_records *g, const ga_profile *p, ga_error *err);

#endif
