/* outputs.c: the files a command line names, checked before anything runs.
 * Two outputs that are one file (-o same.json --log-file same.json, also
 * through ./, .. or a symbolic link) would each replace the other's
 * content, and an output that is an input would replace the profile being
 * read: both are refused with status 2, as is an empty output name, which
 * could only fail after the whole run.  An -o file that exists is kept
 * unless -f (--force-overwrite) says otherwise, as in Nsight Compute. */
#include "cmd.h"

#include <errno.h>
#include <libgen.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

/* What a name refers to: the file's device and inode when it exists, else
 * its directory resolved (realpath) and its last component. */
typedef struct {
	const char *option, *name;
	int exists, comparable;
	dev_t dev;
	ino_t ino;
	char *canon;
} named_file;

static void resolve(named_file *f, const char *option, const char *name)
{
	struct stat st;

	memset(f, 0, sizeof(*f));
	f->option = option;
	f->name = name;
	/* Standard output, and devices and pipes (/dev/null twice is fine). */
	if (strcmp(name, "-") == 0)
		return;
	if (stat(name, &st) == 0) {
		f->exists = 1;
		f->comparable = S_ISREG(st.st_mode);
		f->dev = st.st_dev;
		f->ino = st.st_ino;
		return;
	}
	char *d = ga_xstrdup(name), *b = ga_xstrdup(name);
	char *dir = realpath(dirname(d), NULL);
	if (dir) {
		f->canon = ga_xasprintf("%s/%s", dir, basename(b));
		f->comparable = 1;
	}
	free(dir);
	free(d);
	free(b);
}

static int same(const named_file *a, const named_file *b)
{
	if (!a->comparable || !b->comparable || a->exists != b->exists)
		return 0;
	if (a->exists)
		return a->dev == b->dev && a->ino == b->ino;
	return strcmp(a->canon, b->canon) == 0;
}

static int empty_name(const char *option, const char *name)
{
	if (name && !*name) {
		fprintf(stderr, "gpuadvise: %s: the output file name is empty\n", option);
		return 1;
	}
	return 0;
}

int ga_cmd_check_outputs(const ga_config *cfg)
{
	named_file *f = ga_xcalloc(cfg->n_imports + 3, sizeof(*f));
	size_t n = 0, n_out;
	int rc = 0;

	if (empty_name("-o", cfg->export_path) || empty_name("--log-file", cfg->log_file)) {
		free(f);
		return GA_EXIT_USAGE;
	}
	/* Outputs first: each is compared with the names after it. */
	if (cfg->export_path)
		resolve(&f[n++], "-o", cfg->export_path);
	if (cfg->log_file)
		resolve(&f[n++], "--log-file", cfg->log_file);
	n_out = n;
	for (size_t i = 0; i < cfg->n_imports; i++)
		resolve(&f[n++], "--import", cfg->imports[i]);
	if (cfg->baseline)
		resolve(&f[n++], "--baseline", cfg->baseline);
	for (size_t i = 0; i < n_out && !rc; i++) {
		for (size_t j = i + 1; j < n && !rc; j++) {
			if (!same(&f[i], &f[j]))
				continue;
			fprintf(stderr, "gpuadvise: %s %s and %s %s are the same file: %s\n",
			        f[i].option, f[i].name, f[j].option, f[j].name,
			        j < n_out ? "one output would replace the other"
			                  : "the output would replace the input");
			rc = GA_EXIT_USAGE;
		}
	}
	/* As Nsight Compute's -o: an existing report is kept unless -f. */
	if (!rc && cfg->export_path && f[0].exists && f[0].comparable && !cfg->force_overwrite) {
		fprintf(stderr, "gpuadvise: -o %s: the file exists; -f (--force-overwrite) "
		        "replaces it\n", cfg->export_path);
		rc = GA_EXIT_USAGE;
	}
	for (size_t i = 0; i < n; i++)
		free(f[i].canon);
	free(f);
	return rc;
}
