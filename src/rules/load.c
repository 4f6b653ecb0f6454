/* load.c: rule and classifier files (see rules.h and gpuadvise-rules(5)).
 *
 * A file is read into memory, handed to libyaml's document loader, and the
 * resulting node tree is checked field by field (parse.c).  Problems are
 * collected as diagnostics and checking carries on, so one run shows every
 * mistake in a file; a rule (or classifier) with any problem is not added to
 * the set.
 *
 * Positions: libyaml marks are 0-based line/column (columns in characters);
 * diagnostics are 1-based.  An error inside an expression is placed on the
 * offending character by walking the raw text of the scalar alongside its
 * parsed value (scalar_pos), which copes with quotes, escapes, folded lines
 * and block scalars; when the two cannot be matched up the scalar's own
 * position is used. */
#include "loader.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/* ---- diagnostics at positions ---- */

/* Whether another problem will be reported; if not, it is counted here. */
int lerr_room(struct loader *L)
{
	if (L->errors < MAX_FILE_DIAGS)
		return 1;
	L->errors++;
	L->hidden++;
	return 0;
}

void lerr(struct loader *L, int line, int col, const char *fmt, ...)
{
	va_list ap;

	if (!lerr_room(L))
		return;
	va_start(ap, fmt);
	diags_vadd(L->d, L->path, line, col, fmt, ap);
	va_end(ap);
	L->errors++;
}

static void index_lines(struct loader *L)
{
	size_t i, start = 0;

	/* libyaml does not count a UTF-8 byte order mark as a column. */
	if (L->len >= 3 && memcmp(L->text, "\xef\xbb\xbf", 3) == 0)
		start = 3;
	GA_PUSH(L->lines, L->n_lines, L->cap_lines, start);
	for (i = start; i < L->len; i++) {
		if (L->text[i] == '\n')
			GA_PUSH(L->lines, L->n_lines, L->cap_lines, i + 1);
	}
}

static size_t line_end(const struct loader *L, size_t line)
{
	size_t e = line + 1 < L->n_lines ? L->lines[line + 1] - 1 : L->len;

	if (e > L->lines[line] && L->text[e - 1] == '\r')
		e--;
	return e;
}

static int is_cont_byte(char c)
{
	return ((unsigned char)c & 0xc0) == 0x80;
}

/* Byte offset of a libyaml mark (line, column in characters). */
static size_t mark_byte(const struct loader *L, size_t line, size_t col)
{
	size_t p, e;

	if (line >= L->n_lines)
		return L->len;
	p = L->lines[line];
	e = line_end(L, line);
	while (col > 0 && p < e) {
		p++;
		while (p < e && is_cont_byte(L->text[p]))
			p++;
		col--;
	}
	return p;
}

/* Line (0-based) and column (0-based, characters) of a byte offset. */
void byte_linecol(const struct loader *L, size_t off, size_t *line, size_t *col)
{
	size_t lo = 0, hi = L->n_lines, p;

	while (hi - lo > 1) {
		size_t mid = (lo + hi) / 2;
		if (L->lines[mid] <= off)
			lo = mid;
		else
			hi = mid;
	}
	*line = lo;
	*col = 0;
	for (p = L->lines[lo]; p < off && p < L->len; p++) {
		if (!is_cont_byte(L->text[p]))
			(*col)++;
	}
}

static int hexval(char c)
{
	if (c >= '0' && c <= '9')
		return c - '0';
	if (c >= 'a' && c <= 'f')
		return c - 'a' + 10;
	if (c >= 'A' && c <= 'F')
		return c - 'A' + 10;
	return -1;
}

/* In a double-quoted scalar, how many raw bytes (*rl) an escape at s
 * (s[0] == '\\', n bytes available) takes and how many value bytes (*vl) it
 * produces.  Returns -1 for something unrecognised. */
static int escape_len(const char *s, size_t n, size_t *rl, size_t *vl)
{
	size_t digits = 0, i;
	unsigned long cp = 0;

	if (n < 2) {            /* escaped line break */
		*rl = n;
		*vl = 0;
		return 0;
	}
	switch (s[1]) {
	case 'x': digits = 2; break;
	case 'u': digits = 4; break;
	case 'U': digits = 8; break;
	case 'N': case '_': *rl = 2; *vl = 2; return 0;
	case 'L': case 'P': *rl = 2; *vl = 3; return 0;
	default: *rl = 2; *vl = 1; return 0;
	}
	if (n < 2 + digits)
		return -1;
	for (i = 0; i < digits; i++) {
		int h = hexval(s[2 + i]);
		if (h < 0)
			return -1;
		cp = cp * 16 + (unsigned long)h;
	}
	*rl = 2 + digits;
	*vl = cp < 0x80 ? 1 : cp < 0x800 ? 2 : cp < 0x10000 ? 3 : 4;
	return 0;
}

static int is_blank(char c)
{
	return c == ' ' || c == '\t';
}

int is_ws(char c)
{
	return c == ' ' || c == '\t' || c == '\n' || c == '\r';
}

/* 1-based line and column of byte `off` of scalar n's value. */
void scalar_pos(const struct loader *L, const yaml_node_t *n, size_t off,
                       int *out_line, int *out_col)
{
	const char *val = (const char *)n->data.scalar.value;
	size_t vlen = n->data.scalar.length;
	yaml_scalar_style_t style = n->data.scalar.style;
	int block = style == YAML_LITERAL_SCALAR_STYLE || style == YAML_FOLDED_SCALAR_STYLE;
	size_t region, region_end, line, col = 0, dummy, v = 0;
	size_t last_line = 0, last_col = 0;
	int have_last = 0;

	*out_line = (int)n->start_mark.line + 1;
	*out_col = (int)n->start_mark.column + 1;
	if (!L->n_lines)
		return;
	region = mark_byte(L, n->start_mark.line, n->start_mark.column);
	region_end = mark_byte(L, n->end_mark.line, n->end_mark.column);
	line = n->start_mark.line;
	if (style == YAML_SINGLE_QUOTED_SCALAR_STYLE || style == YAML_DOUBLE_QUOTED_SCALAR_STYLE) {
		region++;
		if (region_end > region)
			region_end--;
	} else if (block) {
		/* Content starts on the line after the | or > header. */
		line++;
		region = line < L->n_lines ? L->lines[line] : L->len;
	}

	for (; line < L->n_lines && L->lines[line] <= region_end; line++) {
		size_t p = L->lines[line] > region ? L->lines[line] : region;
		size_t e = line_end(L, line);

		if (e > region_end)
			e = region_end;
		if (p > e)
			continue;
		/* Leading and trailing blanks of a line are indentation or
		 * folding; what remains is a run of the value, which in turn
		 * is separated from the previous run by blanks or newlines. */
		while (p < e && is_blank(L->text[p]))
			p++;
		while (e > p && is_blank(L->text[e - 1]))
			e--;
		if (p == e)
			continue;
		byte_linecol(L, p, &dummy, &col);
		while (v < vlen && is_ws(val[v]))
			v++;
		if (off < v)
			goto hit;
		while (p < e) {
			size_t rl = 1, vl = 1;
			if (style == YAML_DOUBLE_QUOTED_SCALAR_STYLE && L->text[p] == '\\') {
				if (escape_len(L->text + p, e - p, &rl, &vl) < 0)
					return;
			} else if (style == YAML_SINGLE_QUOTED_SCALAR_STYLE && L->text[p] == '\'' &&
			           p + 1 < e && L->text[p + 1] == '\'') {
				rl = 2;
			} else if (v >= vlen || L->text[p] != val[v]) {
				return;         /* lost track: keep the scalar's position */
			}
			if (off < v + vl)
				goto hit;
			for (; rl > 0; rl--, p++) {
				if (!is_cont_byte(L->text[p]))
					col++;
			}
			v += vl;
		}
		last_line = line;
		last_col = col;
		have_last = 1;
	}
	if (have_last && off >= v) {
		/* Past the end (e.g. "unexpected end of expression"): just
		 * after the last character. */
		*out_line = (int)last_line + 1;
		*out_col = (int)last_col + 1;
	}
	return;
hit:
	*out_line = (int)line + 1;
	*out_col = (int)col + 1;
}

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
