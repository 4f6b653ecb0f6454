/* locate.c: where each finding is in the source, and its fingerprint.
 *
 * A finding points at the ranked lines of its kernel (ga_group.lines) whose
 * issue is the one its rule measures: uncoalesced access at the lines with
 * too many sectors per request, bank conflicts at the lines with too many
 * wavefronts, divergence at the lines run with few lanes and the branches
 * before them, the stall rules at the stall hotspots, the XU rules at the
 * lines holding the XU pipe's instructions (where opcodes were read).  A
 * rule the source view has no kind of line for (occupancy, launch
 * shape...) points at the kernel's top lines.  A finding with no line of
 * its kind, in a kernel with line information, points at the kernel's
 * first line (GitHub code scanning refuses a whole upload with a result
 * that names no file).
 * Lines without a file and line number (a program built without
 * -lineinfo) are no location.
 *
 * The fingerprint identifies a finding across runs and commits, for code
 * scanning and for --baseline: the rule, the mangled kernel name and the
 * text of the finding's first line (not its number, which moves when code
 * is added above it). */
#include "internal.h"

#include <ctype.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

/* The kinds of line each shipped rule is about (GA_SRC_* bits); a rule not
 * listed has none. */
static const struct {
	const char *rule;
	unsigned issues;
} rule_issues[] = {
	{ "uncoalesced-global-access", GA_SRC_UNCOALESCED },
	{ "shared-bank-conflicts", GA_SRC_BANK_CONFLICT },
	{ "thread-divergence", GA_SRC_INACTIVE | GA_SRC_BRANCH },
	{ "barrier-stalls", GA_SRC_STALL },
	{ "dependent-instruction-stalls", GA_SRC_STALL },
	{ "memory-latency-stalls", GA_SRC_STALL | GA_SRC_LONE_LOAD },
	{ "sfu-heavy-math", GA_SRC_XU },
	{ "integer-division", GA_SRC_XU },
	{ "fp32-accurate-math", GA_SRC_XU },
};

unsigned ga_rule_source_issues(const ga_rule *r)
{
	for (size_t i = 0; r && r->id && i < GA_ARRAY_LEN(rule_issues); i++)
		if (strcmp(rule_issues[i].rule, r->id) == 0)
			return rule_issues[i].issues;
	return 0;
}

/* The kernel's first line: the lowest PC with a file and line, and the
 * text recorded at some PC of that line. */
static void entry_line(ga_group *g)
{
	const ga_source *s = g->source;
	const ga_source_pc *first = NULL;

	memset(&g->entry, 0, sizeof(g->entry));
	for (size_t i = 0; s && i < s->n_pcs; i++) {
		const ga_source_pc *pc = &s->pcs[i];
		if (pc->file && pc->line > 0 && (!first || pc->pc < first->pc))
			first = pc;
	}
	if (!first)
		return;
	g->entry.file = first->file;
	g->entry.line = first->line;
	g->entry.pc = first->pc;
	for (size_t i = 0; i < s->n_pcs && !g->entry.text; i++) {
		const ga_source_pc *pc = &s->pcs[i];
		if (pc->text && pc->line == first->line && strcmp(pc->file, first->file) == 0)
			g->entry.text = pc->text;
	}
}

static void finding_lines(const ga_group *g, ga_finding *f)
{
	unsigned want = ga_rule_source_issues(f->rule);

	f->n_lines = 0;
	f->at_entry = g->entry.file != NULL;
	if (!g->n_lines)
		return;
	f->lines = ga_xcalloc(g->n_lines, sizeof(*f->lines));
	for (size_t i = 0; i < g->n_lines; i++) {
		const ga_source_line *l = &g->lines[i];
		if (!l->file || l->line <= 0)
			continue;
		if (want && !(l->issues & want))
			continue;
		f->lines[f->n_lines++] = i;
	}
	f->at_entry = f->n_lines == 0 && g->entry.file != NULL;
}

/* FNV-1a, 64 bits: a fixed, documented hash, so that a fingerprint is the
 * same on every machine and in every version that keeps its
 * GA_FINGERPRINT_VERSION. */
static uint64_t fnv1a(uint64_t h, const void *data, size_t n)
{
	const unsigned char *p = data;
	for (size_t i = 0; i < n; i++) {
		h ^= p[i];
		h *= 0x100000001b3ULL;
	}
	return h;
}

/* The line's text with every run of white space as one blank and none at
 * either end: re-indenting the line keeps its fingerprint. */
static uint64_t hash_text(uint64_t h, const char *text)
{
	int blank = 0, any = 0;
	for (const char *s = text; *s; s++) {
		if (isspace((unsigned char)*s)) {
			blank = any;
			continue;
		}
		if (blank)
			h = fnv1a(h, " ", 1);
		h = fnv1a(h, s, 1);
		blank = 0;
		any = 1;
	}
	return h;
}

static void fingerprint(const ga_group *g, ga_finding *f)
{
	uint64_t h = 0xcbf29ce484222325ULL;
	const char *id = f->rule && f->rule->id ? f->rule->id : "";
	const char *kernel = g->mangled ? g->mangled : g->name ? g->name : "";

	h = fnv1a(h, id, strlen(id) + 1);
	h = fnv1a(h, kernel, strlen(kernel) + 1);
	const char *text = f->n_lines ? g->lines[f->lines[0]].text
	                   : f->at_entry ? g->entry.text : NULL;
	if (text)
		h = hash_text(h, text);
	snprintf(f->fingerprint, sizeof(f->fingerprint), "%016llx", (unsigned long long)h);
}

void ga_locate_findings(ga_analysis *a)
{
	for (size_t gi = 0; gi < a->n_groups; gi++)
		entry_line(&a->groups[gi]);
	for (size_t fi = 0; fi < a->n_findings; fi++) {
		ga_finding *f = &a->findings[fi];
		const ga_group *g = &a->groups[f->group];
		finding_lines(g, f);
		fingerprint(g, f);
	}
}
