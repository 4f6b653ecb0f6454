/* load.c: rule and classifier files (see rules.h and gpuadvise-rules(5)).
 *
 * A file is read into memory, handed to libyaml's document loader, and the
 * resulting node tree is checked field by field (parse.c).  Problems are
 * collected as diagnostics and checking carries on, so one run shows every
 * mistake in a file; a rule (or classifier) with any problem is not added to
 * the set.  Diagnostics and positions: yamlnode.c. */
#include "loader.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/* ---- files ---- */

static void yaml_error(struct loader *L, yaml_parser_t *p)
{
	size_t line, col;

	if (p->error == YAML_READER_ERROR) {
		byte_linecol(L, p->problem_offset, &line, &col);
		lerr(L, (int)line + 1, (int)col + 1, "invalid YAML input: %s",
		     p->problem ? p->problem : "unreadable");
		return;
	}
	if (p->error == YAML_MEMORY_ERROR) {
		lerr(L, 0, 0, "out of memory while parsing YAML");
		return;
	}
	if (p->context)
		lerr(L, (int)p->problem_mark.line + 1, (int)p->problem_mark.column + 1,
		     "YAML syntax error: %s (%s started at line %d, column %d)",
		     p->problem ? p->problem : "unknown problem", p->context,
		     (int)p->context_mark.line + 1, (int)p->context_mark.column + 1);
	else
		lerr(L, (int)p->problem_mark.line + 1, (int)p->problem_mark.column + 1,
		     "YAML syntax error: %s", p->problem ? p->problem : "unknown problem");
}

/* ---- limits ----
 *
 * Rule files are a few kilobytes and nest four levels deep.  Hostile ones
 * must not cost more than that much more: libyaml's scanner spends time in
 * proportion to the flow nesting depth on every token (100,000 '[' in a row
 * took half a minute), and aliases let a small file describe an enormous
 * tree ("billion laughs").  So, before libyaml builds a document:
 *   - a file larger than MAX_RULE_FILE is refused unread (a rule directory
 *     may hold a link to /dev/zero);
 *   - a rough scan of the raw text refuses flow collections ([ {) nested
 *     deeper than MAX_NESTING, which bounds the scanner's work;
 *   - a pass over libyaml's events refuses aliases (*name) and any nesting
 *     deeper than MAX_NESTING, each at its FILE:LINE:COL. */
#define MAX_RULE_FILE (1024 * 1024)
/* read_all's error for a file that is not a regular one (no errno value). */
#define EFTYPE_RULE (-2)
#define MAX_NESTING 64

/* Flow nesting of the raw text.  Inside a flow collection every bracket
 * outside quotes is structural, so the count is exact there; outside one,
 * a bracket opens a collection only where a token can start (a plain
 * scalar such as "x[i]" holds literal ones), and block scalars (| >) and
 * comments are skipped.  Where it is unsure the guess errs towards less
 * depth: it only has to bound what libyaml would do.  Returns the offset of
 * the first bracket past MAX_NESTING, or (size_t)-1. */
static size_t flow_too_deep(const char *t, size_t len)
{
	size_t i = 0, depth = 0, indent = 0, bol = 0;
	int tok = 1;     /* a token may start at t[i] */

	while (i < len) {
		char c;
		if (i == bol) {         /* the start of a line: its indentation */
			for (indent = 0; i < len && t[i] == ' '; i++)
				indent++;
			tok = 1;
			if (i >= len)
				break;
		}
		c = t[i];
		if (c == '\n')
			bol = i + 1;
		if (c == ' ' || c == '\t' || c == '\r' || c == '\n') {
			tok = 1;
			i++;
		} else if (c == '#' && tok) {
			while (i < len && t[i] != '\n')
				i++;
		} else if ((c == '"' || c == '\'') && tok) {
			for (i++; i < len && t[i] != c; i++) {
				if (c == '"' && t[i] == '\\' && i + 1 < len)
					i++;
			}
			i++;
			tok = 0;
		} else if ((c == '|' || c == '>') && tok && depth == 0) {
			/* A block scalar: its header line, then blank lines and
			 * lines indented deeper than the one that opened it. */
			while (i < len && t[i] != '\n')
				i++;
			while (i < len) {
				size_t j = i + 1, n = 0;
				while (j < len && t[j] == ' ') {
					j++;
					n++;
				}
				if (j < len && t[j] != '\n' && t[j] != '\r' && n <= indent)
					break;
				for (i = j; i < len && t[i] != '\n'; i++)
					;
			}
		} else if ((c == '[' || c == '{') && (tok || depth > 0)) {
			if (++depth > MAX_NESTING)
				return i;
			tok = 1;
			i++;
		} else if ((c == ']' || c == '}') && depth > 0) {
			depth--;
			tok = 0;
			i++;
		} else {
			tok = depth > 0 && (c == ',' || c == ':' || c == '?');
			i++;
		}
	}
	return (size_t)-1;
}

/* Aliases and nesting depth, from libyaml's events.  A syntax error ends
 * the pass quietly: the document loader reports it.  Returns the number of
 * problems. */
static int check_events(struct loader *L)
{
	yaml_parser_t p;
	yaml_event_t ev;
	int problems = 0, depth = 0, done = 0;

	if (!yaml_parser_initialize(&p))
		return 0;
	yaml_parser_set_input_string(&p, (const unsigned char *)L->text, L->len);
	while (!done && yaml_parser_parse(&p, &ev)) {
		int line = (int)ev.start_mark.line + 1, col = (int)ev.start_mark.column + 1;
		switch (ev.type) {
		case YAML_STREAM_END_EVENT:
			done = 1;
			break;
		case YAML_ALIAS_EVENT:
			lerr(L, line, col, "YAML alias '*%s' is not allowed in rule files; "
			     "write the value out", (const char *)ev.data.alias.anchor);
			problems++;
			break;
		case YAML_SEQUENCE_START_EVENT:
		case YAML_MAPPING_START_EVENT:
			if (++depth > MAX_NESTING) {
				lerr(L, line, col, "nested more than %d levels deep", MAX_NESTING);
				problems++;
				done = 1;
			}
			break;
		case YAML_SEQUENCE_END_EVENT:
		case YAML_MAPPING_END_EVENT:
			depth--;
			break;
		default:
			break;
		}
		yaml_event_delete(&ev);
	}
	yaml_parser_delete(&p);
	return problems;
}

/* What a file that is not a regular one is, for the message. */
static const char *file_kind(mode_t m)
{
	return S_ISFIFO(m) ? "a FIFO" : S_ISCHR(m) ? "a character device" :
	       S_ISBLK(m) ? "a block device" : S_ISSOCK(m) ? "a socket" :
	       S_ISDIR(m) ? "a directory" : "not a regular file";
}

/* Only a regular file is read: a FIFO named r.yaml would block the loader
 * for ever, a device never end.  Opened without blocking and checked on
 * the open descriptor, so that the file checked is the file read. */
static FILE *open_regular(const char *path, const char **kind, int *err)
{
	struct stat st;
	int fd = open(path, O_RDONLY | O_NONBLOCK | O_CLOEXEC);
	FILE *f;

	if (fd < 0) {
		*err = errno;
		return NULL;
	}
	if (fstat(fd, &st) != 0) {
		*err = errno;
		close(fd);
		return NULL;
	}
	if (!S_ISREG(st.st_mode)) {
		*kind = file_kind(st.st_mode);
		*err = EFTYPE_RULE;
		close(fd);
		return NULL;
	}
	if (!(f = fdopen(fd, "rb"))) {
		*err = errno;
		close(fd);
	}
	return f;
}

/* Returns -1 with *err = errno, with *err = EFBIG when the file is larger
 * than max bytes (nothing past max + 1 bytes is read), or with *err =
 * EFTYPE_RULE and *kind when it is not a regular file. */
static int read_all(const char *path, char **text, size_t *len, size_t max, int *err,
                    const char **kind)
{
	FILE *f;
	ga_buf b = {0};
	char chunk[8192];
	size_t n;

	*err = 0;
	if (!(f = open_regular(path, kind, err)))
		return -1;
	while ((n = fread(chunk, 1, sizeof(chunk), f)) > 0) {
		size_t i;
		/* ga_buf is a string builder; bytes go in one by one so
		 * that NULs survive (libyaml reports them). */
		for (i = 0; i < n; i++)
			ga_buf_putc(&b, chunk[i]);
		if (b.len > max) {
			*err = EFBIG;
			fclose(f);
			ga_buf_free(&b);
			return -1;
		}
	}
	if (ferror(f)) {
		*err = errno ? errno : EIO;
		fclose(f);
		ga_buf_free(&b);
		return -1;
	}
	fclose(f);
	*len = b.len;
	*text = ga_buf_take(&b);
	return 0;
}

/* The pair of the key that makes root a classifier (`classifier:`) or an
 * owners file (`owners:` in a mapping without `id:`, which a rule may
 * carry as one of its keys), or NULL for a rule. */
static yaml_node_pair_t *top_key(struct loader *L, yaml_node_t *root)
{
	yaml_node_pair_t *pair, *owners = NULL;

	for (pair = root->data.mapping.pairs.start; pair < root->data.mapping.pairs.top; pair++) {
		const char *key = scalar(node_at(L, pair->key));
		if (key && strcmp(key, "classifier") == 0)
			return pair;
		if (key && strcmp(key, "id") == 0)
			return NULL;
		if (key && strcmp(key, "owners") == 0 && !owners)
			owners = pair;
	}
	return owners;
}

static int load_file(ga_ruleset *rs, const char *path, ga_diags *d, char ***dir_ids,
                     size_t *n_dir_ids, size_t *cap_dir_ids)
{
	struct loader L = {
		.rs = rs, .d = d, .path = path,
		.dir_ids = dir_ids, .n_dir_ids = n_dir_ids, .cap_dir_ids = cap_dir_ids,
	};
	yaml_parser_t parser;
	yaml_document_t extra;
	int have_parser = 0, have_doc = 0, err;
	const char *kind = NULL;
	size_t n0 = d->n;
	yaml_node_t *root, *extra_root;
	yaml_node_pair_t *pair;

	if (read_all(path, &L.text, &L.len, MAX_RULE_FILE, &err, &kind) < 0) {
		if (err == EFTYPE_RULE)
			lerr(&L, 0, 0, "%s, not a regular file: skipped (rule files are read only "
			     "from regular files)", kind);
		else if (err == EFBIG)
			lerr(&L, 0, 0, "rule file is larger than %d KiB; is it a rule file?",
			     MAX_RULE_FILE / 1024);
		else
			lerr(&L, 0, 0, "cannot read rule file: %s", strerror(err));
		goto out;
	}
	index_lines(&L);
	{
		size_t deep = flow_too_deep(L.text, L.len), line, col;
		if (deep != (size_t)-1) {
			byte_linecol(&L, deep, &line, &col);
			lerr(&L, (int)line + 1, (int)col + 1, "nested more than %d levels deep",
			     MAX_NESTING);
			goto out;
		}
	}
	if (check_events(&L) != 0)
		goto out;
	if (!yaml_parser_initialize(&parser)) {
		lerr(&L, 0, 0, "cannot initialise the YAML parser");
		goto out;
	}
	have_parser = 1;
	yaml_parser_set_input_string(&parser, (const unsigned char *)L.text, L.len);
	if (!yaml_parser_load(&parser, &L.doc)) {
		yaml_error(&L, &parser);
		goto out;
	}
	have_doc = 1;
	root = yaml_document_get_root_node(&L.doc);
	if (!root) {
		lerr(&L, 1, 1, "file is empty; expected a rule or a classifier mapping");
		goto out;
	}
	/* One document per file: a second one would be silently ignored. */
	if (!yaml_parser_load(&parser, &extra)) {
		yaml_error(&L, &parser);
		goto out;
	}
	extra_root = yaml_document_get_root_node(&extra);
	if (extra_root)
		lerr(&L, (int)extra_root->start_mark.line + 1, (int)extra_root->start_mark.column + 1,
		     "only one YAML document is allowed in a rule file");
	yaml_document_delete(&extra);

	if (root->type != YAML_MAPPING_NODE) {
		node_err(&L, root, "expected a mapping (a rule or a classifier) at the top level");
		goto out;
	}
	pair = top_key(&L, root);
	if (pair) {
		/* A classifier or an owners file: that one key alone. */
		const char *key = scalar(node_at(&L, pair->key));
		const struct key_spec top_keys[] = { { key, 1 } };
		yaml_node_t *k[1], *v[1];
		collect_keys(&L, root, top_keys, 1, k, v);
		if (v[0] && strcmp(key, "owners") == 0)
			load_owners(&L, v[0]);
		else if (v[0])
			load_classifier(&L, v[0]);
	} else {
		load_rule(&L, root);
	}
out:
	if (have_doc)
		yaml_document_delete(&L.doc);
	if (have_parser)
		yaml_parser_delete(&parser);
	free(L.text);
	free(L.lines);
	ga_name_pos_free(L.unresolved, L.n_unresolved);
	diags_sort_from(d, n0);
	if (L.hidden)
		ga_diags_add(d, path, 0, 0, "%d more error%s not shown", L.hidden,
		             L.hidden == 1 ? "" : "s");
	return (int)(d->n - n0);
}

int ga_rules_load_file(ga_ruleset *rs, const char *path, ga_diags *d)
{
	return load_file(rs, path, d, NULL, NULL, NULL);
}

int cmp_str(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

/* The names of the rule files in dir (*.yaml, *.yml, not hidden), sorted;
 * -1 when dir cannot be opened. */
static int list_rule_files(const char *dir, struct strlist *files)
{
	DIR *dp = opendir(dir);
	struct dirent *de;

	if (!dp)
		return -1;
	while ((de = readdir(dp)) != NULL) {
		if (de->d_name[0] == '.')
			continue;
		if (!ga_str_has_suffix(de->d_name, ".yaml") && !ga_str_has_suffix(de->d_name, ".yml"))
			continue;
		GA_PUSH(files->v, files->n, files->cap, ga_xstrdup(de->d_name));
	}
	closedir(dp);
	if (files->n > 1)   /* qsort(NULL, 0) is undefined */
		qsort(files->v, files->n, sizeof(*files->v), cmp_str);
	return 0;
}

long ga_rules_dir_files(const char *dir)
{
	struct strlist files = {0};
	long n = list_rule_files(dir, &files) == 0 ? (long)files.n : -1;

	strv_free(files.v, files.n);
	return n;
}

int ga_rules_load_dir(ga_ruleset *rs, const char *dir, ga_diags *d)
{
	struct strlist files = {0}, ids = {0};
	size_t n0 = d->n, i, dl = strlen(dir);

	if (list_rule_files(dir, &files) != 0) {
		ga_diags_add(d, dir, 0, 0, "cannot open rules directory: %s", strerror(errno));
		goto out;
	}
	for (i = 0; i < files.n; i++) {
		char *path = ga_xasprintf("%s%s%s", dir, dl && dir[dl - 1] == '/' ? "" : "/",
		                          files.v[i]);
		load_file(rs, path, d, &ids.v, &ids.n, &ids.cap);
		free(path);
	}
out:
	strv_free(files.v, files.n);
	strv_free(ids.v, ids.n);
	return (int)(d->n - n0);
}
