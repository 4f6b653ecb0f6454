/* progress.h: the one stderr line of a live run on a terminal (launches
 * seen, launches profiled, replay passes, elapsed time), counted from the
 * run directory's record files while the program runs, so that the
 * injection library writes nothing for it. */
#ifndef GA_PROGRESS_H
#define GA_PROGRESS_H

#include <stddef.h>

#define PROGRESS_SECONDS 0.2

typedef struct {
	char *name;                 /* the .rec file's name in the run directory */
	long offset;                /* bytes read: whole lines only */
	long seen;                  /* launches of the process seen so far */
} ga_progress_file;

typedef struct {
	const char *dir;
	ga_progress_file *files;
	size_t n_files, cap_files;
	long profiled, passes;
	long set_passes[64];        /* passes of each metric set (device record) */
	double t0, next;            /* the start; when the line is drawn next */
	int shown;                  /* a line is on the terminal */
} ga_progress;

/* Read what the record files added since the last call. */
void ga_progress_update(ga_progress *pr);
/* The line for the counts now and seconds since the start. */
void ga_progress_format(const ga_progress *pr, double seconds, char *buf, size_t len);
void ga_progress_free(ga_progress *pr);

#endif
