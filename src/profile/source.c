/* source.c: the per-PC counts of a kernel's source view: building and
 * merging them, their JSON form, the opcodes from nvdisasm's listing and the
 * source text of their lines.  See source.h; the analysis ranks the lines
 * (analyze/srcrank.c). */
#include "source.h"

#include <jansson.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int ga_stall_is_stall(const char *reason)
{
	return strcmp(reason, GA_STALL_SELECTED) != 0 && strcmp(reason, GA_STALL_NOT_SELECTED) != 0;
}

void ga_source_free(ga_source *s)
{
	if (!s)
		return;
	for (size_t i = 0; i < s->n_pcs; i++) {
		free(s->pcs[i].file);
		free(s->pcs[i].text);
		free(s->pcs[i].op);
		free(s->pcs[i].args);
		for (size_t k = 0; k < s->pcs[i].n_stalls; k++)
			free(s->pcs[i].stalls[k].reason);
		free(s->pcs[i].stalls);
	}
	free(s->pcs);
	free(s->mangled);
	free(s->trigger);
	memset(s, 0, sizeof(*s));
}

ga_source_pc *ga_source_add_pc(ga_source *s)
{
	ga_source_pc pc = {0};
	pc.inst = pc.threads = pc.sectors = pc.sectors_ideal = NAN;
	pc.wavefronts = pc.wavefronts_ideal = NAN;
	pc.sb_write = -1;
	GA_PUSH(s->pcs, s->n_pcs, s->cap_pcs, pc);
	return &s->pcs[s->n_pcs - 1];
}

static double z(double v) { return isfinite(v) ? v : 0.0; }

static void add1(double *to, double v)
{
	if (isfinite(v))
		*to = isfinite(*to) ? *to + v : v;
}

/* The per-instruction counts of from, added into to. */
static void add_counts(ga_source_pc *to, const ga_source_pc *from)
{
	add1(&to->inst, from->inst);
	add1(&to->threads, from->threads);
	add1(&to->sectors, from->sectors);
	add1(&to->sectors_ideal, from->sectors_ideal);
	add1(&to->wavefronts, from->wavefronts);
	add1(&to->wavefronts_ideal, from->wavefronts_ideal);
}

void ga_source_pc_add(ga_source_pc *to, const ga_source_pc *from)
{
	add_counts(to, from);
	if (!to->file && from->file) {
		to->file = from->file;
		to->line = from->line;
	}
	if (!to->text && from->text)
		to->text = from->text;
	if (!to->op && from->op)
		to->op = from->op;
}

void ga_source_pc_add_stall(ga_source_pc *p, const char *reason, double samples)
{
	if (!reason || !isfinite(samples))
		return;
	for (size_t k = 0; k < p->n_stalls; k++)
		if (strcmp(p->stalls[k].reason, reason) == 0) {
			p->stalls[k].samples += samples;
			return;
		}
	/* The number of reasons is small (about 20): grow one at a time. */
	p->stalls = ga_xrealloc(p->stalls, (p->n_stalls + 1) * sizeof(*p->stalls));
	p->stalls[p->n_stalls].reason = ga_xstrdup(reason);
	p->stalls[p->n_stalls].samples = samples;
	p->n_stalls++;
}

double ga_source_pc_stall(const ga_source_pc *p, const char *reason)
{
	for (size_t k = 0; p && k < p->n_stalls; k++)
		if (strcmp(p->stalls[k].reason, reason) == 0)
			return p->stalls[k].samples;
	return 0;
}

void ga_source_merge(ga_source *to, const ga_source *from)
{
	if (!to || !from || to == from)
		return;
	for (size_t i = 0; i < from->n_pcs; i++) {
		const ga_source_pc *f = &from->pcs[i];
		ga_source_pc *t = NULL;
		for (size_t j = 0; j < to->n_pcs && !t; j++)
			if (to->pcs[j].pc == f->pc)
				t = &to->pcs[j];
		if (!t) {
			t = ga_source_add_pc(to);
			t->pc = f->pc;
		}
		add_counts(t, f);
		if ((!t->file || t->line <= 0) && f->file && f->line > 0) {
			free(t->file);
			t->file = ga_xstrdup(f->file);
			t->line = f->line;
		}
		if (!t->text && f->text)
			t->text = ga_xstrdup(f->text);
		if (!t->op && f->op)
			t->op = ga_xstrdup(f->op);
		if (!t->args && f->args) {
			t->args = ga_xstrdup(f->args);
			t->target = f->target;
		}
		if (from->scoreboards && !to->scoreboards) {
			t->sb_write = f->sb_write;
			t->sb_wait = f->sb_wait;
		}
		for (size_t k = 0; k < f->n_stalls; k++)
			ga_source_pc_add_stall(t, f->stalls[k].reason, f->stalls[k].samples);
	}
	if (from->lineinfo)
		to->lineinfo = 1;
	if (from->scoreboards)
		to->scoreboards = 1;
	if (!to->trigger && from->trigger)
		to->trigger = ga_xstrdup(from->trigger);
	if (from->sample_period > 0 && !(to->sample_period > 0))
		to->sample_period = from->sample_period;
	to->samples_total += from->samples_total;
	to->samples_dropped += from->samples_dropped;
}

/* ---- JSON ---------------------------------------------------------------- */

static void put_num(json_t *o, const char *k, double v)
{
	if (isfinite(v))
		json_object_set_new(o, k, json_real(v));
}

/* A count as an integer when it is one (samples are), else a real. */
static json_t *count_json(double v)
{
	if (v >= 0 && v < 9e15 && v == floor(v))
		return json_integer((json_int_t)v);
	return json_real(v);
}

static json_t *dims(const unsigned d[3])
{
	return json_pack("[iii]", (int)d[0], (int)d[1], (int)d[2]);
}

void *ga_source_to_json(const ga_source *s)
{
	json_t *o = json_object(), *pcs = json_array();
	json_object_set_new(o, "mangled", json_string(s->mangled ? s->mangled : "?"));
	json_object_set_new(o, "pid", json_integer(s->pid));
	json_object_set_new(o, "grid", dims(s->grid));
	json_object_set_new(o, "block", dims(s->block));
	if (s->trigger)
		json_object_set_new(o, "trigger", json_string(s->trigger));
	json_object_set_new(o, "lineinfo", json_boolean(s->lineinfo));
	if (s->scoreboards)
		json_object_set_new(o, "scoreboards", json_true());
	if (s->sample_period > 0 || s->samples_total > 0) {
		json_t *ps = json_object();
		if (s->sample_period > 0)
			json_object_set_new(ps, "period_cycles", count_json(s->sample_period));
		json_object_set_new(ps, "samples", count_json(s->samples_total));
		json_object_set_new(ps, "dropped", count_json(s->samples_dropped));
		json_object_set_new(o, "pc_sampling", ps);
	}
	for (size_t i = 0; i < s->n_pcs; i++) {
		const ga_source_pc *p = &s->pcs[i];
		json_t *j = json_object();
		json_object_set_new(j, "pc", json_integer(p->pc));
		if (p->file && p->line > 0) {
			json_object_set_new(j, "file", json_string(p->file));
			json_object_set_new(j, "line", json_integer(p->line));
		}
		put_num(j, "inst", p->inst);
		put_num(j, "threads", p->threads);
		put_num(j, "sectors", p->sectors);
		put_num(j, "sectors_ideal", p->sectors_ideal);
		put_num(j, "wavefronts", p->wavefronts);
		put_num(j, "wavefronts_ideal", p->wavefronts_ideal);
		if (p->n_stalls) {
			json_t *st = json_object();
			for (size_t k = 0; k < p->n_stalls; k++)
				if (isfinite(p->stalls[k].samples))
					json_object_set_new(st, p->stalls[k].reason,
					                    count_json(p->stalls[k].samples));
			json_object_set_new(j, "stalls", st);
		}
		if (p->text)
			json_object_set_new(j, "text", json_string(p->text));
		if (p->op)
			json_object_set_new(j, "op", json_string(p->op));
		if (p->args)
			json_object_set_new(j, "args", json_string(p->args));
		if (p->target)
			json_object_set_new(j, "target", json_true());
		if (s->scoreboards && p->sb_write >= 0)
			json_object_set_new(j, "sb_write", json_integer(p->sb_write));
		if (s->scoreboards && p->sb_wait)
			json_object_set_new(j, "sb_wait", json_integer(p->sb_wait));
		json_array_append_new(pcs, j);
	}
	json_object_set_new(o, "pcs", pcs);
	return o;
}

static int get_num(json_t *o, const char *k, double *v, const char *where, size_t i,
                   ga_error *err)
{
	json_t *x = json_object_get(o, k);
	if (!x || json_is_null(x))
		return 0;
	if (!json_is_number(x))
		return ga_fail(err, GA_ERR_PROFILE, "%s.pcs[%zu].%s: expected a number", where, i, k);
	*v = json_number_value(x);
	return 0;
}

static int get_dims(json_t *o, const char *k, unsigned d[3], const char *where, ga_error *err)
{
	json_t *a = json_object_get(o, k);
	if (!a)
		return 0;
	if (!json_is_array(a) || json_array_size(a) != 3)
		return ga_fail(err, GA_ERR_PROFILE, "%s.%s: expected an array of 3 integers", where, k);
	for (size_t i = 0; i < 3; i++) {
		json_t *v = json_array_get(a, i);
		if (!json_is_integer(v) || json_integer_value(v) < 0 ||
		    json_integer_value(v) > 0xffffffffLL)
			return ga_fail(err, GA_ERR_PROFILE, "%s.%s: expected an array of 3 integers",
			               where, k);
		d[i] = (unsigned)json_integer_value(v);
	}
	return 0;
}

static int get_stalls(json_t *o, ga_source_pc *p, const char *where, size_t i, ga_error *err)
{
	json_t *st = json_object_get(o, "stalls"), *v;
	const char *reason;
	if (!st || json_is_null(st))
		return 0;
	if (!json_is_object(st))
		return ga_fail(err, GA_ERR_PROFILE, "%s.pcs[%zu].stalls: expected an object of "
		               "{reason: samples}", where, i);
	json_object_foreach(st, reason, v) {
		if (!json_is_number(v) || !(json_number_value(v) >= 0) ||
		    !isfinite(json_number_value(v)))
			return ga_fail(err, GA_ERR_PROFILE, "%s.pcs[%zu].stalls.%.80s: expected a "
			               "number of samples (0 or more)", where, i, reason);
		ga_source_pc_add_stall(p, reason, json_number_value(v));
	}
	return 0;
}

static int get_sampling(json_t *o, ga_source *s, const char *where, ga_error *err)
{
	json_t *ps = json_object_get(o, "pc_sampling");
	static const char *const keys[] = {"period_cycles", "samples", "dropped"};
	double *slot[] = {&s->sample_period, &s->samples_total, &s->samples_dropped};
	if (!ps || json_is_null(ps))
		return 0;
	if (!json_is_object(ps))
		return ga_fail(err, GA_ERR_PROFILE, "%s.pc_sampling: expected an object", where);
	for (size_t k = 0; k < 3; k++) {
		json_t *v = json_object_get(ps, keys[k]);
		if (!v)
			continue;
		if (!json_is_number(v) || !(json_number_value(v) >= 0) ||
		    !isfinite(json_number_value(v)))
			return ga_fail(err, GA_ERR_PROFILE, "%s.pc_sampling.%s: expected a number "
			               "(0 or more)", where, keys[k]);
		*slot[k] = json_number_value(v);
	}
	return 0;
}

int ga_source_from_json(ga_source **arr, size_t *n, size_t *cap, void *json, const char *where,
                        ga_error *err)
{
	json_t *o = json, *v, *pcs;
	ga_source s = {0};
	size_t i;

	if (!json_is_object(o))
		return ga_fail(err, GA_ERR_PROFILE, "%s: expected an object", where);
	v = json_object_get(o, "mangled");
	if (!json_is_string(v))
		return ga_fail(err, GA_ERR_PROFILE, "%s.mangled: missing or not a string", where);
	s.mangled = ga_xstrdup(json_string_value(v));
	v = json_object_get(o, "pid");
	if (v && !json_is_integer(v)) {
		ga_fail(err, GA_ERR_PROFILE, "%s.pid: expected an integer", where);
		goto bad;
	}
	s.pid = v ? (int)json_integer_value(v) : 0;
	if (get_dims(o, "grid", s.grid, where, err) || get_dims(o, "block", s.block, where, err))
		goto bad;
	v = json_object_get(o, "trigger");
	if (json_is_string(v))
		s.trigger = ga_xstrdup(json_string_value(v));
	s.lineinfo = json_is_true(json_object_get(o, "lineinfo"));
	s.scoreboards = json_is_true(json_object_get(o, "scoreboards"));
	if (get_sampling(o, &s, where, err))
		goto bad;
	pcs = json_object_get(o, "pcs");
	if (!json_is_array(pcs)) {
		ga_fail(err, GA_ERR_PROFILE, "%s.pcs: missing or not an array", where);
		goto bad;
	}
	json_array_foreach(pcs, i, v) {
		json_t *x;
		if (!json_is_object(v)) {
			ga_fail(err, GA_ERR_PROFILE, "%s.pcs[%zu]: expected an object", where, i);
			goto bad;
		}
		ga_source_pc *p = ga_source_add_pc(&s);
		x = json_object_get(v, "pc");
		if (!json_is_integer(x) || json_integer_value(x) < 0 ||
		    json_integer_value(x) > 0xffffffffLL) {
			ga_fail(err, GA_ERR_PROFILE, "%s.pcs[%zu].pc: expected an offset", where, i);
			goto bad;
		}
		p->pc = (uint32_t)json_integer_value(x);
		x = json_object_get(v, "file");
		if (json_is_string(x))
			p->file = ga_xstrdup(json_string_value(x));
		x = json_object_get(v, "line");
		if (x && (!json_is_integer(x) || json_integer_value(x) < 0 ||
		          json_integer_value(x) > 100000000)) {
			ga_fail(err, GA_ERR_PROFILE, "%s.pcs[%zu].line: expected a line number", where, i);
			goto bad;
		}
		p->line = x ? (int)json_integer_value(x) : 0;
		x = json_object_get(v, "text");
		if (json_is_string(x))
			p->text = ga_xstrdup(json_string_value(x));
		x = json_object_get(v, "op");
		if (json_is_string(x))
			p->op = ga_xstrdup(json_string_value(x));
		x = json_object_get(v, "args");
		if (json_is_string(x))
			p->args = ga_xstrdup(json_string_value(x));
		p->target = json_is_true(json_object_get(v, "target"));
		x = json_object_get(v, "sb_write");
		if (x && (!json_is_integer(x) || json_integer_value(x) < 0 ||
		          json_integer_value(x) >= GA_SCOREBOARDS)) {
			ga_fail(err, GA_ERR_PROFILE, "%s.pcs[%zu].sb_write: expected a scoreboard, "
			        "0 to %d", where, i, GA_SCOREBOARDS - 1);
			goto bad;
		}
		if (x)
			p->sb_write = (int)json_integer_value(x);
		x = json_object_get(v, "sb_wait");
		if (x && (!json_is_integer(x) || json_integer_value(x) < 0 ||
		          json_integer_value(x) >= 1 << GA_SCOREBOARDS)) {
			ga_fail(err, GA_ERR_PROFILE, "%s.pcs[%zu].sb_wait: expected a mask of "
			        "scoreboards, 0 to %d", where, i, (1 << GA_SCOREBOARDS) - 1);
			goto bad;
		}
		if (x)
			p->sb_wait = (unsigned)json_integer_value(x);
		if (get_num(v, "inst", &p->inst, where, i, err) ||
		    get_num(v, "threads", &p->threads, where, i, err) ||
		    get_num(v, "sectors", &p->sectors, where, i, err) ||
		    get_num(v, "sectors_ideal", &p->sectors_ideal, where, i, err) ||
		    get_num(v, "wavefronts", &p->wavefronts, where, i, err) ||
		    get_num(v, "wavefronts_ideal", &p->wavefronts_ideal, where, i, err) ||
		    get_stalls(v, p, where, i, err))
			goto bad;
	}
	GA_PUSH(*arr, *n, *cap, s);
	return 0;
bad:
	ga_source_free(&s);
	return -1;
}

static int file_line_cmp(const void *x, const void *y)
{
	const ga_source_pc *a = *(const ga_source_pc *const *)x, *b = *(const ga_source_pc *const *)y;
	int c = strcmp(a->file, b->file);
	if (c)
		return c;
	if (a->line != b->line)
		return a->line < b->line ? -1 : 1;
	return (a->pc > b->pc) - (a->pc < b->pc);
}

/* The PCs with line information sorted by file, line and PC; each line's
 * text goes to its lowest PC that the ranking reads (one that executed or
 * was sampled), where ga_source_rank finds it. */
/* Lines of one file read in order: a file is opened once however many of
 * its lines are asked for, as long as they come in ascending order. */
typedef struct {
	FILE *f;
	const char *file;         /* borrowed: the open file's name */
	int no;                   /* lines read so far */
} line_reader;

static void reader_close(line_reader *r)
{
	if (r->f)
		fclose(r->f);
	memset(r, 0, sizeof(*r));
}

/* Line `line` (1-based) of file, without its newline and leading blanks,
 * malloc'd; NULL when the file cannot be read or is shorter. */
static char *reader_line(line_reader *r, const char *file, int line)
{
	char buf[4096];

	if (!file || line <= 0)
		return NULL;
	if (!r->file || strcmp(r->file, file) != 0 || line <= r->no) {
		reader_close(r);
		r->file = file;
		r->f = fopen(file, "r");
	}
	if (!r->f)
		return NULL;
	while (fgets(buf, sizeof(buf), r->f)) {
		size_t len = strlen(buf);
		int whole = len && buf[len - 1] == '\n';
		if (++r->no == line) {
			char *t = buf;
			while (*t == ' ' || *t == '\t')
				t++;
			len = strlen(t);
			while (len && (t[len - 1] == '\n' || t[len - 1] == '\r'))
				t[--len] = '\0';
			/* The rest of a line longer than the buffer. */
			while (!whole && fgets(buf, sizeof(buf), r->f)) {
				size_t l = strlen(buf);
				whole = l && buf[l - 1] == '\n';
			}
			return ga_xstrdup(t);
		}
		/* A line longer than the buffer: skip the rest of it. */
		while (!whole && fgets(buf, sizeof(buf), r->f)) {
			len = strlen(buf);
			whole = len && buf[len - 1] == '\n';
		}
	}
	return NULL;
}

void ga_source_fill_text(ga_source *s)
{
	ga_source_pc **v = ga_xcalloc(s->n_pcs ? s->n_pcs : 1, sizeof(*v));
	line_reader r = { 0 };
	size_t n = 0;

	for (size_t i = 0; i < s->n_pcs; i++)
		if (s->pcs[i].file && s->pcs[i].line > 0)
			v[n++] = &s->pcs[i];
	/* By file, then line: each file is read once, front to back. */
	qsort(v, n, sizeof(*v), file_line_cmp);
	for (size_t i = 0, j; i < n; i = j) {
		ga_source_pc *at = NULL;
		int has_text = 0;
		for (j = i; j < n && v[j]->line == v[i]->line && strcmp(v[j]->file, v[i]->file) == 0;
		     j++) {
			has_text |= v[j]->text != NULL;
			if (!at && (z(v[j]->inst) > 0 || v[j]->n_stalls > 0))
				at = v[j];
		}
		if (at && !has_text)
			at->text = reader_line(&r, at->file, at->line);
	}
	reader_close(&r);
	free(v);
}

char *ga_source_read_line(const char *file, int line)
{
	line_reader r = { 0 };
	char *text = reader_line(&r, file, line);

	reader_close(&r);
	return text;
}

/* ---- opcodes ---------------------------------------------------------------- */

/* By offset, and records of one offset in their order in the source. */
static int pc_order_cmp(const void *x, const void *y)
{
	const ga_source_pc *a = *(const ga_source_pc *const *)x, *b = *(const ga_source_pc *const *)y;
	if (a->pc != b->pc)
		return a->pc < b->pc ? -1 : 1;
	return (a > b) - (a < b);
}

/* s's records in offset order (pc_order_cmp): a malloc'd array of n_pcs. */
static ga_source_pc **pcs_by_offset(const ga_source *s)
{
	ga_source_pc **by_pc = ga_xcalloc(s->n_pcs ? s->n_pcs : 1, sizeof(*by_pc));
	for (size_t i = 0; i < s->n_pcs; i++)
		by_pc[i] = &s->pcs[i];
	qsort(by_pc, s->n_pcs, sizeof(*by_pc), pc_order_cmp);
	return by_pc;
}

ga_source_pc **ga_source_by_offset(const ga_source *s, size_t *n)
{
	ga_source_pc **by_pc = pcs_by_offset(s);
	*n = 0;
	for (size_t i = 0; i < s->n_pcs; i++)
		if (*n == 0 || by_pc[*n - 1]->pc != by_pc[i]->pc)
			by_pc[(*n)++] = by_pc[i];
	return by_pc;
}

/* The first record at offset pc in by_pc[0..n) (sorted by pc_order_cmp),
 * or NULL. */
static ga_source_pc *first_at(ga_source_pc *const *by_pc, size_t n, uint32_t pc)
{
	size_t lo = 0, hi = n;
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		if (by_pc[mid]->pc < pc)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo < n && by_pc[lo]->pc == pc ? by_pc[lo] : NULL;
}

/* An instruction's line, the offset in a C comment, then an optional
 * predicate, the opcode and its operands ("@!P0 MUFU.EX2 R5, R4 ;"): the
 * offset, the opcode (into op, at most len - 1 characters) and the
 * operands (*args, *nargs long: up to the ';'); 0 when the line is no
 * instruction. */
static int listing_insn(const char *l, uint32_t *off, char *op, size_t len, const char **args,
                        size_t *nargs)
{
	char *end;
	size_t n;

	l += strspn(l, " \t");
	if (strncmp(l, "/*", 2) != 0)
		return 0;
	unsigned long v = strtoul(l + 2, &end, 16);
	if (end == l + 2 || strncmp(end, "*/", 2) != 0 || v > 0xffffffffUL)
		return 0;
	l = end + 2;
	l += strspn(l, " \t{");
	if (*l == '@')                     /* a predicate guards it */
		l += strcspn(l, " \t");
	l += strspn(l, " \t");
	n = strcspn(l, " \t;}");
	if (n == 0 || n >= len || !((*l >= 'A' && *l <= 'Z')))
		return 0;
	memcpy(op, l, n);
	op[n] = '\0';
	*off = (uint32_t)v;
	l += n;
	l += strspn(l, " \t");
	*args = l;
	*nargs = strcspn(l, ";}");
	while (*nargs > 0 && (l[*nargs - 1] == ' ' || l[*nargs - 1] == '\t'))
		(*nargs)--;
	return 1;
}

/* The 64-bit words of an encoding in the line's C comments ("/\* 0x...
 * *\/"), at most two, into w; returns how many. */
static int listing_words(const char *l, uint64_t w[2])
{
	int n = 0;
	for (const char *c = strstr(l, "/* 0x"); c && n < 2; c = strstr(c + 5, "/* 0x")) {
		char *end;
		unsigned long long v = strtoull(c + 3, &end, 16);
		if (end - (c + 5) == 16)
			w[n++] = v;
	}
	return n;
}

/* The control bits of an instruction's high word (bits 41 to 61). */
static void set_control(ga_source_pc *p, uint64_t hi)
{
	unsigned c = (unsigned)(hi >> 41) & 0x1fffff;
	unsigned wr = (c >> 5) & 7;
	p->sb_write = wr < GA_SCOREBOARDS ? (int)wr : -1;
	p->sb_wait = (c >> 11) & ((1u << GA_SCOREBOARDS) - 1);
}

size_t ga_source_set_ops(ga_source *s, const char *text)
{
	size_t set = 0, mlen;
	int inside = 0;
	/* The PC whose encoding is being read and the words seen of it. */
	ga_source_pc *at = NULL;
	int words = 0, controls = 0, label = 0;

	if (!s || !s->mangled || !text)
		return 0;
	mlen = strlen(s->mangled);
	/* The listing is long and the PCs many: look them up by offset. */
	ga_source_pc **by_pc = pcs_by_offset(s);
	for (const char *l = text; *l;) {
		size_t len = strcspn(l, "\n");
		const char *sec = memmem(l, len, ".section", 8);
		if (sec) {
			/* ".section .text.NAME,"ax",@progbits": ours or another's */
			const char *t = sec + 8;
			t += strspn(t, " \t");
			inside = strncmp(t, ".text.", 6) == 0 && strncmp(t + 6, s->mangled, mlen) == 0 &&
			         (t[6 + mlen] == ',' || t[6 + mlen] == ' ' || t[6 + mlen] == '\t' ||
			          t[6 + mlen] == '\n' || t[6 + mlen] == '\0');
			at = NULL;
			label = 0;
		} else if (inside) {
			char op[64], line[512];
			uint32_t off;
			size_t n = len < sizeof(line) - 1 ? len : sizeof(line) - 1;
			memcpy(line, l, n);
			line[n] = '\0';
			ga_source_pc *p;
			uint64_t w[2];
			int nw;
			const char *args;
			size_t nargs;
			if (listing_insn(line, &off, op, sizeof(op), &args, &nargs)) {
				at = p = first_at(by_pc, s->n_pcs, off);
				words = 0;
				if (p) {
					free(p->op);
					p->op = ga_xstrdup(op);
					free(p->args);
					p->args = ga_xstrndup(args, nargs);
					p->target = label;
					set++;
				}
				label = 0;
			} else {
				/* ".L_x_53:" labels the next instruction: a branch target */
				const char *t = line + strspn(line, " \t");
				size_t tl = strcspn(t, " \t");
				if (tl > 3 && t[0] == '.' && t[1] == 'L' && t[tl - 1] == ':')
					label = 1;
			}
			/* The low word, then the high one: on this line or the next. */
			nw = at ? listing_words(line, w) : 0;
			for (int k = 0; k < nw; k++)
				if (++words == 2) {
					set_control(at, w[k]);
					controls++;
				}
		}
		l += len + (l[len] == '\n');
	}
	free(by_pc);
	if (controls)
		s->scoreboards = 1;
	return set;
}

/* Is op the opcode name, with or without modifiers ("MUFU" is "MUFU.EX2")? */
static int op_is(const char *op, const char *name)
{
	size_t n = strlen(name);
	return op && strncmp(op, name, n) == 0 && (op[n] == '\0' || op[n] == '.');
}

int ga_source_op_in(const char *op, const char *const *list, size_t n)
{
	for (size_t i = 0; i < n; i++)
		if (op_is(op, list[i]))
			return 1;
	return 0;
}

int ga_source_xu_opcode(const char *op)
{
	static const char *const xu[] = {"MUFU", "FRND", "F2I", "I2F", "F2F"};
	return ga_source_op_in(op, xu, sizeof(xu) / sizeof(xu[0]));
}

int ga_source_op_inst(const ga_source *s, const char *op, double *inst)
{
	int any = 0;

	*inst = 0;
	for (size_t i = 0; s && i < s->n_pcs; i++) {
		const ga_source_pc *p = &s->pcs[i];
		if (p->op && isfinite(p->inst)) {
			any = 1;
			*inst += op_is(p->op, op) ? p->inst : 0;
		}
	}
	return any ? 0 : -1;
}

/* 1 when op has the modifier mod ("FFMA.FTZ.RZ" has "RZ", not "R"). */
static int has_modifier(const char *op, const char *mod)
{
	for (const char *m = strchr(op, '.'); m; m = strchr(m + 1, '.'))
		if (op_is(m + 1, mod))
			return 1;
	return 0;
}

/* The FP64 opcodes: a subroutine with one is no FP32 division's. */
static int fp64_opcode(const char *op)
{
	static const char *const d[] = {"DFMA", "DADD", "DMUL", "DSETP", "DMNMX"};
	return ga_source_op_in(op, d, sizeof(d) / sizeof(d[0])) ||
	       (op_is(op, "MUFU") && strstr(op, "64H") != NULL);
}

int ga_source_fdiv_slowpath_inst(const ga_source *s, double *inst)
{
	size_t n = s ? s->n_pcs : 0, start = 0;
	int any = 0;

	*inst = 0;
	if (n == 0)
		return -1;
	/* Each offset's first record, in offset order: the one with the opcode. */
	size_t m;
	ga_source_pc **by_pc = ga_source_by_offset(s, &m);
	/* The subroutines follow the kernel's last EXIT, each up to its RET. */
	size_t first_ret = m;
	for (size_t i = 0; i < m; i++) {
		const char *op = by_pc[i]->op;
		any |= op && isfinite(by_pc[i]->inst);
		if (op && first_ret == m && op_is(op, "EXIT"))
			start = i + 1;
		else if (op && first_ret == m && op_is(op, "RET"))
			first_ret = i;
	}
	double part = 0;
	int rounding = 0, rcp = 0, fp64 = 0;
	for (size_t i = start; first_ret < m && i < m; i++) {
		const char *op = by_pc[i]->op;
		if (!op)
			continue;
		part += isfinite(by_pc[i]->inst) ? by_pc[i]->inst : 0;
		rounding |= op_is(op, "FFMA") && (has_modifier(op, "RZ") || has_modifier(op, "RP") ||
		                                  has_modifier(op, "RM"));
		rcp |= op_is(op, "MUFU") && has_modifier(op, "RCP");
		fp64 |= fp64_opcode(op);
		if (op_is(op, "RET")) {
			*inst += rounding && rcp && !fp64 ? part : 0;
			part = 0;
			rounding = rcp = fp64 = 0;
		}
	}
	free(by_pc);
	return any ? 0 : -1;
}

int ga_source_xu_ops(const ga_source *s, double *total, double *top)
{
	ga_map seen = {0};           /* opcode -> its slot in sum */
	double *sum = ga_xcalloc(s && s->n_pcs ? s->n_pcs : 1, sizeof(*sum));
	int any = 0;

	*total = *top = 0;
	for (size_t i = 0; s && i < s->n_pcs; i++) {
		const ga_source_pc *p = &s->pcs[i];
		if (!p->op || !isfinite(p->inst))
			continue;
		any = 1;
		if (!ga_source_xu_opcode(p->op))
			continue;
		/* An opcode's instructions, summed over its PCs. */
		size_t k = ga_strmap_put(&seen, p->op, seen.n);
		sum[k] += p->inst;
		*total += p->inst;
		if (sum[k] > *top)
			*top = sum[k];
	}
	ga_map_free(&seen);
	free(sum);
	return any ? 0 : -1;
}
