/* progress.c: counting a live run from its record files (progress.h). */
#include "progress.h"

#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include "../util/util.h"
#include "protocol.h"

static ga_progress_file *file_of(ga_progress *pr, const char *name)
{
	for (size_t i = 0; i < pr->n_files; i++)
		if (strcmp(pr->files[i].name, name) == 0)
			return &pr->files[i];
	if (pr->n_files == pr->cap_files) {
		pr->cap_files = pr->cap_files ? 2 * pr->cap_files : 8;
		pr->files = realloc(pr->files, pr->cap_files * sizeof(*pr->files));
		if (!pr->files)
			abort();
	}
	ga_progress_file *f = &pr->files[pr->n_files++];
	memset(f, 0, sizeof(*f));
	f->name = ga_xstrdup(name);
	return f;
}

/* One record: a launch (its "index" counts every launch of its process,
 * profiled or not), a device (passes of each metric set) or an end (the
 * process's own count of launches). */
static void count_record(ga_progress *pr, ga_progress_file *f, const char *line, size_t len)
{
	json_t *rec = json_loadb(line, len, 0, NULL);
	const char *type;

	if (!json_is_object(rec))
		goto out;
	type = json_string_value(json_object_get(rec, "type"));
	switch (ga_record_type_of(type)) {
	case GA_REC_LAUNCH: {
		json_int_t idx = json_integer_value(json_object_get(rec, "index"));
		json_int_t set = json_integer_value(json_object_get(rec, "metric_set"));
		pr->profiled++;
		if (idx + 1 > f->seen)
			f->seen = (long)idx + 1;
		if (set >= 0 && set < (json_int_t)GA_ARRAY_LEN(pr->set_passes))
			pr->passes += pr->set_passes[set] > 0 ? pr->set_passes[set] : 1;
		break;
	}
	case GA_REC_DEVICE: {
		json_t *sets = json_object_get(rec, "sets"), *s;
		size_t i;
		json_array_foreach(sets, i, s)
			if (i < GA_ARRAY_LEN(pr->set_passes))
				pr->set_passes[i] = (long)json_integer_value(json_object_get(s, "passes"));
		break;
	}
	case GA_REC_END: {
		json_int_t n = json_integer_value(json_object_get(rec, "launches"));
		if (n > f->seen)
			f->seen = (long)n;
		break;
	}
	default:
		break;
	}
out:
	json_decref(rec);
}

/* The whole lines of one file after its offset. */
static void read_file(ga_progress *pr, ga_progress_file *f)
{
	char *path = ga_xasprintf("%s/%s", pr->dir, f->name);
	FILE *in = fopen(path, "re");
	char *line = NULL;
	size_t cap = 0;
	ssize_t n;

	free(path);
	if (!in)
		return;
	if (fseek(in, f->offset, SEEK_SET) == 0) {
		/* A line without its newline is still being written. */
		while ((n = getline(&line, &cap, in)) > 0 && line[n - 1] == '\n') {
			f->offset += n;
			count_record(pr, f, line, (size_t)n);
		}
	}
	free(line);
	fclose(in);
}

void ga_progress_update(ga_progress *pr)
{
	DIR *d = opendir(pr->dir);
	struct dirent *e;

	if (!d)
		return;
	while ((e = readdir(d)) != NULL) {
		size_t len = strlen(e->d_name);
		if (len > 4 && strcmp(e->d_name + len - 4, ".rec") == 0)
			read_file(pr, file_of(pr, e->d_name));
	}
	closedir(d);
}

void ga_progress_format(const ga_progress *pr, double seconds, char *buf, size_t len)
{
	long seen = 0;

	for (size_t i = 0; i < pr->n_files; i++)
		seen += pr->files[i].seen;
	snprintf(buf, len, "gpuadvise: %ld launch%s seen, %ld profiled, %ld pass%s, %.1f s",
	         seen, seen == 1 ? "" : "es", pr->profiled, pr->passes,
	         pr->passes == 1 ? "" : "es", seconds);
}

void ga_progress_free(ga_progress *pr)
{
	for (size_t i = 0; i < pr->n_files; i++)
		free(pr->files[i].name);
	free(pr->files);
	pr->files = NULL;
	pr->n_files = pr->cap_files = 0;
}
