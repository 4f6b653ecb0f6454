/* test_source.c: source-line ranking (analyze/srcrank.c) and the "sources"
 * JSON (profile/source.c).
 *
 * Every per-PC count here is SYNTHETIC, shaped like what SASS metrics give
 * for the patterns (one warp-wide 4-byte load = 4 ideal sectors, etc.). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <jansson.h>

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "profile/profile.h"
#include "profile/source.h"
#include "analyze/srcrank.h"

/* The shipped classifier's cut-offs (rules/classify.yaml) on a 32-lane warp. */
static const ga_source_cuts cuts = { .warp_size = 32, .min_share = 0.02,
                                     .min_stall_share = 0.10, .branch_drop = 2 };

static ga_source_pc *pc_at(ga_source *s, uint32_t pc, const char *file, int line, double inst,
                           double threads)
{
	ga_source_pc *p = ga_source_add_pc(s);
	p->pc = pc;
	p->file = file ? strdup(file) : NULL;
	p->line = line;
	p->inst = inst;
	p->threads = threads;
	return p;
}

/* A strided kernel: the load/store line has 32 sectors per request, the
 * index arithmetic none. */
static void make_strided(ga_source *s)
{
	memset(s, 0, sizeof(*s));
	s->mangled = strdup("_Z7stridedPKfPfj");
	s->lineinfo = 1;
	pc_at(s, 0x00, "k.cu", 18, 1000, 32000);
	pc_at(s, 0x10, "k.cu", 21, 1000, 32000);
	ga_source_pc *ld = pc_at(s, 0x20, "k.cu", 22, 1000, 32000);
	ld->sectors = 32000;
	ld->sectors_ideal = 4000;
	pc_at(s, 0x30, "k.cu", 22, 1000, 32000);   /* the FMA: no memory */
	ga_source_pc *st = pc_at(s, 0x40, "k.cu", 22, 1000, 32000);
	st->sectors = 32000;
	st->sectors_ideal = 4000;
	/* a coalesced load elsewhere: no excess */
	ga_source_pc *ok = pc_at(s, 0x50, "k.cu", 30, 1000, 32000);
	ok->sectors = 4000;
	ok->sectors_ideal = 4000;
}

static void test_rank_uncoalesced(void **state)
{
	ga_source s;
	ga_source_line top[5];
	(void)state;
	make_strided(&s);
	size_t n = ga_source_rank(&s, &cuts, top, 5);
	assert_int_equal(n, 1);
	assert_string_equal(top[0].file, "k.cu");
	assert_int_equal(top[0].line, 22);
	assert_int_equal(top[0].pc, 0x20);
	assert_true(top[0].issues & GA_SRC_UNCOALESCED);
	/* per request: only the two memory PCs count as requests */
	assert_true(fabs(top[0].sectors_per_req - 32.0) < 1e-9);
	assert_true(fabs(top[0].sectors_ideal_per_req - 4.0) < 1e-9);
	assert_true(fabs(top[0].score - 1.0) < 1e-9);
	assert_non_null(strstr(top[0].desc, "32.0 sectors/request (ideal 4.0)"));
	ga_source_free(&s);
}

/* if (threadIdx.x % 2 == 0) { float loop } else { int loop }: the branch
 * line runs at 32 lanes, both paths at 16; the store after them at 32. */
static void make_divergent(ga_source *s)
{
	memset(s, 0, sizeof(*s));
	s->mangled = strdup("_Z7evenoddPKfPfji");
	s->lineinfo = 1;
	pc_at(s, 0x00, "d.cu", 39, 100, 3200);
	pc_at(s, 0x10, "d.cu", 41, 100, 3200);   /* ISETP */
	pc_at(s, 0x20, "d.cu", 41, 100, 3200);   /* BRA */
	pc_at(s, 0x30, "d.cu", 22, 50000, 800000);  /* float path, inlined */
	pc_at(s, 0x40, "d.cu", 23, 50000, 800000);
	pc_at(s, 0x50, "d.cu", 30, 50000, 800000);  /* int path */
	pc_at(s, 0x60, "d.cu", 31, 50000, 800000);
	ga_source_pc *st = pc_at(s, 0x70, "d.cu", 45, 100, 3200);
	st->sectors = 400;
	st->sectors_ideal = 400;
}

static void test_rank_divergent_branch(void **state)
{
	ga_source s;
	ga_source_line top[5];
	(void)state;
	make_divergent(&s);
	size_t n = ga_source_rank(&s, &cuts, top, 5);
	assert_int_equal(n, 5);
	/* The branch gets the whole region's idle lanes, so it ranks first. */
	assert_int_equal(top[0].line, 41);
	assert_true(top[0].issues & GA_SRC_BRANCH);
	assert_true(fabs(top[0].branch_before - 32.0) < 1e-9);
	assert_true(fabs(top[0].branch_after - 16.0) < 1e-9);
	assert_non_null(strstr(top[0].desc, "divergent branch: 32.0 threads arrive, 16.0"));
	/* then the lines inside the paths, each with a quarter of the waste */
	for (size_t i = 1; i < n; i++) {
		assert_true(top[i].issues & GA_SRC_INACTIVE);
		assert_true(fabs(top[i].active_threads - 16.0) < 1e-9);
		assert_true(fabs(top[i].score - 0.25) < 1e-9);
		assert_non_null(strstr(top[i].desc, "16.0 of 32 threads active"));
	}
	/* the full-width store is not listed */
	for (size_t i = 0; i < n; i++)
		assert_int_not_equal(top[i].line, 45);
	/* max is honoured, best first */
	assert_int_equal(ga_source_rank(&s, &cuts, top, 1), 1);
	assert_int_equal(top[0].line, 41);
	ga_source_free(&s);
}

static void test_rank_bank_conflicts_and_no_lineinfo(void **state)
{
	ga_source s = {0};
	ga_source_line top[5];
	(void)state;
	s.mangled = strdup("_Z4tilev");
	ga_source_pc *a = pc_at(&s, 0x80, NULL, 0, 1000, 32000);
	a->wavefronts = 32000;
	a->wavefronts_ideal = 1000;
	ga_source_pc *b = pc_at(&s, 0x90, NULL, 0, 1000, 32000);
	b->wavefronts = 1000;
	b->wavefronts_ideal = 1000;
	pc_at(&s, 0xa0, NULL, 0, 0, 0);   /* never executed: ignored */
	size_t n = ga_source_rank(&s, &cuts, top, 5);
	assert_int_equal(n, 1);
	assert_null(top[0].file);
	assert_int_equal(top[0].line, 0);
	assert_int_equal(top[0].pc, 0x80);
	assert_true(top[0].issues & GA_SRC_BANK_CONFLICT);
	assert_non_null(strstr(top[0].desc, "32.0 shared wavefronts/request (ideal 1.0)"));
	ga_source_free(&s);
}

static void test_rank_nothing_wrong(void **state)
{
	ga_source s = {0};
	ga_source_line top[5];
	(void)state;
	s.mangled = strdup("k");
	pc_at(&s, 0, "a.cu", 1, 10, 320);
	pc_at(&s, 16, "a.cu", 2, 10, 320);
	assert_int_equal(ga_source_rank(&s, &cuts, top, 5), 0);
	assert_int_equal(ga_source_rank(NULL, &cuts, top, 5), 0);
	ga_source_free(&s);
}

/* A profile of a synthetic GPU holding make_strided's source record. */
static void strided_profile(ga_profile *p)
{
	ga_profile_init(p);
	p->device.name = strdup("Synthetic GPU");
	p->device.sm_count = 4;
	GA_PUSH(p->sources, p->n_sources, p->cap_sources, ((ga_source){0}));
	make_strided(&p->sources[0]);
}

static void test_round_trip(void **state)
{
	ga_profile p, q;
	ga_error err = {0};
	(void)state;
	strided_profile(&p);
	p.sources[0].pid = 42;
	p.sources[0].grid[0] = 32;
	p.sources[0].grid[1] = 6144;
	p.sources[0].grid[2] = 1;
	p.sources[0].block[0] = 256;
	p.sources[0].block[1] = p.sources[0].block[2] = 1;
	p.sources[0].trigger = strdup("32.0 global load sectors/request > 4");
	p.sources[0].pcs[2].text = strdup("out[i] = 2.0f * in[i] + 1.0f;");
	p.sources[0].pcs[2].op = strdup("LDG.E");
	char *text = ga_profile_to_string(&p, 2);
	assert_int_equal(ga_profile_load_string(&q, text, "t.json", &err), 0);
	assert_int_equal(q.n_sources, 1);
	const ga_source *s = &q.sources[0];
	assert_string_equal(s->mangled, "_Z7stridedPKfPfj");
	assert_int_equal(s->pid, 42);
	assert_int_equal(s->grid[1], 6144);
	assert_int_equal(s->block[0], 256);
	assert_int_equal(s->lineinfo, 1);
	assert_string_equal(s->trigger, "32.0 global load sectors/request > 4");
	assert_int_equal(s->n_pcs, 6);
	assert_int_equal(s->pcs[2].pc, 0x20);
	assert_string_equal(s->pcs[2].file, "k.cu");
	assert_int_equal(s->pcs[2].line, 22);
	assert_true(s->pcs[2].sectors == 32000);
	assert_true(isnan(s->pcs[0].sectors));    /* not collected stays NAN */
	assert_string_equal(s->pcs[2].text, "out[i] = 2.0f * in[i] + 1.0f;");
	assert_string_equal(s->pcs[2].op, "LDG.E");
	assert_null(s->pcs[1].op);
	/* the same text again: saving is deterministic */
	char *again = ga_profile_to_string(&q, 2);
	assert_string_equal(text, again);
	/* the ranking sees the text */
	ga_source_line top[5];
	assert_int_equal(ga_source_rank(s, &cuts, top, 5), 1);
	assert_string_equal(top[0].text, "out[i] = 2.0f * in[i] + 1.0f;");
	free(text);
	free(again);
	ga_profile_free(&p);
	ga_profile_free(&q);
}

static void expect_load_error(const char *sources, const char *msg)
{
	ga_profile p;
	ga_error err = {0};
	char *text;
	if (asprintf(&text, "{\"format\": \"gpuadvise-profile\", \"schema\": 1, \"device\": "
	             "{\"name\": \"G\", \"sm_count\": 4}, \"metrics\": [], \"launches\": [], \"sources\": %s}",
	             sources) < 0)
		fail();
	int rc = ga_profile_load_string(&p, text, "t.json", &err);
	if (rc == 0 || strcmp(err.msg, msg) != 0)
		print_error("got: %s (rc %d)\n", err.msg, rc);
	assert_int_equal(rc, -1);
	assert_string_equal(err.msg, msg);
	assert_int_equal(p.n_sources, 0);
	free(text);
}

static void test_load_errors(void **state)
{
	(void)state;
	expect_load_error("{}", "t.json: sources: expected an array");
	expect_load_error("[{\"pcs\": []}]", "t.json: sources[0].mangled: missing or not a string");
	expect_load_error("[{\"mangled\": \"k\"}]", "t.json: sources[0].pcs: missing or not an array");
	expect_load_error("[{\"mangled\": \"k\", \"pcs\": [{\"pc\": -1}]}]",
	                  "t.json: sources[0].pcs[0].pc: expected an offset");
	expect_load_error("[{\"mangled\": \"k\", \"pcs\": [{\"pc\": 0, \"inst\": \"x\"}]}]",
	                  "t.json: sources[0].pcs[0].inst: expected a number");
	expect_load_error("[{\"mangled\": \"k\", \"grid\": [1, 2], \"pcs\": []}]",
	                  "t.json: sources[0].grid: expected an array of 3 integers");
}

static void test_read_line_and_fill(void **state)
{
	char path[] = "/tmp/ga-src-XXXXXX";
	(void)state;
	int fd = mkstemp(path);
	assert_true(fd >= 0);
	const char *body = "line one\n\t  second line  \r\nthird\n";
	assert_int_equal(write(fd, body, strlen(body)), (ssize_t)strlen(body));
	close(fd);
	char *l = ga_source_read_line(path, 2);
	assert_string_equal(l, "second line  ");
	free(l);
	assert_null(ga_source_read_line(path, 9));
	assert_null(ga_source_read_line("/nonexistent/x.cu", 1));

	ga_source s = {0};
	s.mangled = strdup("k");
	pc_at(&s, 0, path, 1, 10, 320);
	ga_source_pc *m = pc_at(&s, 16, path, 3, 10, 320);
	m->sectors = 320;
	m->sectors_ideal = 40;
	pc_at(&s, 32, path, 3, 10, 320);              /* the same line, a later PC */
	pc_at(&s, 48, path, 2, NAN, NAN);             /* neither executed nor sampled */
	ga_source_fill_text(&s);
	/* Every line that executed, whatever a ranking shows, on its lowest PC. */
	assert_string_equal(s.pcs[0].text, "line one");
	assert_string_equal(s.pcs[1].text, "third");
	assert_null(s.pcs[2].text);
	assert_null(s.pcs[3].text);
	ga_source_line top[5];
	assert_int_equal(ga_source_rank(&s, &cuts, top, 5), 1);
	assert_string_equal(top[0].text, "third");
	ga_source_free(&s);
	unlink(path);
}

/* PC samples (SYNTHETIC, shaped like a strided kernel's): the load line
 * waits on memory, the index line issues. */
static void add_stalls(ga_source *s)
{
	ga_source_pc *ld = &s->pcs[2], *fma = &s->pcs[3], *idx = &s->pcs[1];
	ga_source_pc_add_stall(ld, "lg_throttle", 100);
	ga_source_pc_add_stall(fma, "long_scoreboard", 250);
	ga_source_pc_add_stall(fma, "selected", 10);
	ga_source_pc_add_stall(idx, "selected", 30);
	ga_source_pc_add_stall(idx, "wait", 20);
	/* a sampled PC the SASS metrics did not see, on a line of its own */
	ga_source_pc *tail = pc_at(s, 0x60, "k.cu", 40, NAN, NAN);
	ga_source_pc_add_stall(tail, "barrier", 100);
	ga_source_pc_add_stall(tail, "barrier", 20);  /* the same reason adds up */
}

static void test_rank_stalls(void **state)
{
	ga_source s;
	ga_source_line top[5];
	(void)state;
	make_strided(&s);
	add_stalls(&s);
	assert_true(ga_source_pc_stall(&s.pcs[6], "barrier") == 120);
	assert_true(ga_source_pc_stall(&s.pcs[6], "long_scoreboard") == 0);
	size_t n = ga_source_rank(&s, &cuts, top, 5);
	/* the uncoalesced line first (a SASS-measured problem), then the
	 * barrier line as a stall hotspot; the index line has 20 of the 490
	 * stall samples, under 10 %: not listed */
	assert_int_equal(n, 2);
	assert_int_equal(top[0].line, 22);
	assert_true(top[0].issues & GA_SRC_UNCOALESCED);
	assert_true(top[0].issues & GA_SRC_STALL);
	assert_true(fabs(top[0].samples - 360) < 1e-9);
	assert_true(fabs(top[0].stall_samples - 350) < 1e-9);
	assert_true(fabs(top[0].stall_share - 350.0 / 490) < 1e-9);
	assert_string_equal(top[0].stall_reason, "long_scoreboard");
	assert_true(fabs(top[0].stall_reason_samples - 250) < 1e-9);
	assert_true(fabs(top[0].score - 1.0) < 1e-9);   /* the larger share */
	assert_non_null(strstr(top[0].desc, "32.0 sectors/request (ideal 4.0); stalls: "
	                                    "long_scoreboard 69% of the line's 360 samples"));
	assert_int_equal(top[1].line, 40);
	assert_int_equal(top[1].issues, GA_SRC_STALL);
	assert_true(fabs(top[1].score - 120.0 / 490) < 1e-9);
	assert_string_equal(top[1].desc, "stalls: barrier 100% of the line's 120 samples");
	ga_source_free(&s);
}

/* A hotspot of stalls with far more samples still ranks after a line with
 * a small SASS-measured problem: the latter says what to change. */
static void test_rank_stall_tiers(void **state)
{
	ga_source s = {0};
	ga_source_line top[5];
	(void)state;
	s.mangled = strdup("k");
	ga_source_pc *a = pc_at(&s, 0x10, "a.cu", 5, 100, 3200);
	a->sectors = 500;
	a->sectors_ideal = 400;
	ga_source_pc_add_stall(a, "long_scoreboard", 5);
	ga_source_pc *b = pc_at(&s, 0x20, "a.cu", 9, 100, 3200);
	ga_source_pc_add_stall(b, "math_pipe_throttle", 900);
	ga_source_pc_add_stall(b, "selected", 600);
	ga_source_pc_add_stall(b, "not_selected", 300);   /* more than any stall on a, yet none */
	ga_source_pc *c = pc_at(&s, 0x30, "a.cu", 12, 100, 3200);
	c->sectors = 1300;
	c->sectors_ideal = 400;   /* 900 of the 1000 excess sectors */
	size_t n = ga_source_rank(&s, &cuts, top, 5);
	assert_int_equal(n, 3);
	assert_int_equal(top[0].line, 12);
	assert_true(fabs(top[0].score - 0.9) < 1e-9);
	assert_int_equal(top[1].line, 5);
	assert_true(fabs(top[1].score - 0.1) < 1e-9);
	assert_int_equal(top[2].line, 9);
	assert_true(fabs(top[2].score - 900.0 / 905) < 1e-9);   /* larger, yet after */
	assert_non_null(strstr(top[2].desc, "stalls: math_pipe_throttle 50% of the line's 1800 samples"));
	/* only "selected" and "not_selected" samples: issuing or ready to, no
	 * stall to report, however many */
	ga_source t = {0};
	t.mangled = strdup("k");
	ga_source_pc *d = pc_at(&t, 0, "a.cu", 1, 10, 320);
	ga_source_pc_add_stall(d, "selected", 50);
	ga_source_pc_add_stall(d, "not_selected", 5000);
	assert_int_equal(ga_source_rank(&t, &cuts, top, 5), 0);
	ga_source_free(&s);
	ga_source_free(&t);
}

/* The launcher's merge: the SASS record and the PC-sampling record of one
 * kernel become one. */
static void test_merge(void **state)
{
	ga_source a, b = {0};
	(void)state;
	make_strided(&a);
	b.mangled = strdup(a.mangled);
	b.sample_period = 4096;
	b.samples_total = 1000;
	b.samples_dropped = 3;
	ga_source_pc *p = ga_source_add_pc(&b);
	p->pc = 0x20;
	p->file = strdup("k.cu");
	p->line = 22;
	ga_source_pc_add_stall(p, "long_scoreboard", 40);
	p = ga_source_add_pc(&b);
	p->pc = 0x70;
	p->file = strdup("k.cu");
	p->line = 41;
	ga_source_pc_add_stall(p, "barrier", 7);
	ga_source_merge(&a, &b);
	ga_source_merge(&a, &b);   /* a second sampled launch adds up */
	ga_source_free(&b);
	assert_int_equal(a.n_pcs, 7);
	assert_true(a.pcs[2].sectors == 32000);
	assert_true(ga_source_pc_stall(&a.pcs[2], "long_scoreboard") == 80);
	assert_int_equal(a.pcs[6].pc, 0x70);
	assert_string_equal(a.pcs[6].file, "k.cu");
	assert_true(isnan(a.pcs[6].inst));
	assert_true(a.sample_period == 4096);
	assert_true(a.samples_total == 2000 && a.samples_dropped == 6);
	ga_source_free(&a);
}

static void test_stalls_json(void **state)
{
	ga_profile p, q;
	ga_error err = {0};
	(void)state;
	strided_profile(&p);
	add_stalls(&p.sources[0]);
	p.sources[0].sample_period = 8192;
	p.sources[0].samples_total = 66252;
	char *text = ga_profile_to_string(&p, 2);
	assert_non_null(strstr(text, "\"stalls\""));
	assert_non_null(strstr(text, "\"long_scoreboard\": 250"));
	assert_non_null(strstr(text, "\"period_cycles\": 8192"));
	assert_int_equal(ga_profile_load_string(&q, text, "t.json", &err), 0);
	const ga_source *s = &q.sources[0];
	assert_true(s->sample_period == 8192 && s->samples_total == 66252);
	assert_int_equal(s->pcs[3].n_stalls, 2);
	assert_true(ga_source_pc_stall(&s->pcs[3], "long_scoreboard") == 250);
	assert_true(ga_source_pc_stall(&s->pcs[6], "barrier") == 120);
	assert_int_equal(s->pcs[0].n_stalls, 0);
	/* the same ranking after the round trip */
	ga_source_line t1[5], t2[5];
	size_t n1 = ga_source_rank(&p.sources[0], &cuts, t1, 5), n2 = ga_source_rank(s, &cuts, t2, 5);
	assert_int_equal(n1, n2);
	for (size_t i = 0; i < n1; i++)
		assert_string_equal(t1[i].desc, t2[i].desc);
	char *again = ga_profile_to_string(&q, 2);
	assert_string_equal(text, again);
	free(text);
	free(again);
	ga_profile_free(&p);
	ga_profile_free(&q);
}

static void test_stalls_load_errors(void **state)
{
	(void)state;
	expect_load_error("[{\"mangled\": \"k\", \"pcs\": [{\"pc\": 0, \"stalls\": [1]}]}]",
	                  "t.json: sources[0].pcs[0].stalls: expected an object of {reason: samples}");
	expect_load_error("[{\"mangled\": \"k\", \"pcs\": [{\"pc\": 0, \"stalls\": {\"barrier\": \"9\"}}]}]",
	                  "t.json: sources[0].pcs[0].stalls.barrier: expected a number of samples (0 or more)");
	expect_load_error("[{\"mangled\": \"k\", \"pcs\": [{\"pc\": 0, \"stalls\": {\"wait\": -1}}]}]",
	                  "t.json: sources[0].pcs[0].stalls.wait: expected a number of samples (0 or more)");
	expect_load_error("[{\"mangled\": \"k\", \"pc_sampling\": 5, \"pcs\": []}]",
	                  "t.json: sources[0].pc_sampling: expected an object");
	expect_load_error("[{\"mangled\": \"k\", \"pc_sampling\": {\"samples\": true}, \"pcs\": []}]",
	                  "t.json: sources[0].pc_sampling.samples: expected a number (0 or more)");
}

/* nvdisasm -c of the accuracy bench's intdiv kernels (CUDA 13.0, sm_90):
 * four sections whose offsets overlap; only mod_divide's may count. */
static char *read_fixture(const char *name)
{
	char path[512];
	snprintf(path, sizeof(path), "%s/%s", GA_TEST_FIXTURES, name);
	FILE *f = fopen(path, "r");
	assert_non_null(f);
	char *buf = calloc(1, 1 << 20);
	size_t n = fread(buf, 1, (1 << 20) - 1, f);
	fclose(f);
	assert_true(n > 0);
	return buf;
}

/* The scoreboards of nvdisasm -hex's listing (the H200's SASS of the
 * accuracy bench's gathers): one row in flight per warp (each load's
 * result used before the next load issues), or eight. */
static void load_waits_of(const char *text, const char *mangled, double loop_weight,
                          ga_load_waits *w, int *rc)
{
	ga_source s = {0};
	s.mangled = strdup(mangled);
	for (uint32_t pc = 0; pc <= 0x400; pc += 16)
		pc_at(&s, pc, NULL, 0, pc >= 0x120 && pc <= 0x1b0 ? loop_weight : 1, 32);
	assert_true(ga_source_set_ops(&s, text) > 0);
	assert_int_equal(s.scoreboards, 1);
	*rc = ga_source_load_waits(&s, w);
	/* and the same after a trip through the profile's JSON */
	json_t *j = ga_source_to_json(&s);
	ga_source *back = NULL;
	size_t n = 0, cap = 0;
	ga_error err = {0};
	ga_load_waits w2;
	assert_int_equal(ga_source_from_json(&back, &n, &cap, j, "sources[0]", &err), 0);
	assert_int_equal(back[0].scoreboards, 1);
	assert_int_equal(ga_source_load_waits(&back[0], &w2), *rc);
	assert_true(w2.lone == w->lone && w2.waits == w->waits &&
	            w2.lone_movable == w->lone_movable && w2.movable_known == w->movable_known);
	json_decref(j);
	ga_source_free(&back[0]);
	free(back);
	ga_source_free(&s);
}

/* A hand-made block: op, operands, scoreboard written, mask waited on. */
static void hand_pc(ga_source *s, uint32_t pc, const char *op, const char *args, int wr,
                    unsigned wait)
{
	ga_source_pc *p = pc_at(s, pc, NULL, 0, 10, 320);
	p->op = strdup(op);
	p->args = strdup(args);
	p->sb_write = wr;
	p->sb_wait = wait;
}

static void test_load_waits(void **state)
{
	char *text = read_fixture("sass-hex-gather.sass");
	ga_load_waits w;
	int rc;
	(void)state;
	/* serial: its loop's two loads are each waited on alone; the first is
	 * the loop's first instruction, the second can move above the loop
	 * counter's increment and compare (2), not above its address */
	load_waits_of(text, "_ZN6gather13gather_serialEPKiPKfPf", 64, &w, &rc);
	assert_int_equal(rc, 0);
	assert_true(w.waits == 128 && w.lone == 128);
	assert_int_equal(w.movable_known, 1);
	assert_true(w.lone_movable == 64 * 0 + 64 * 2);
	/* batched: eight loads go out before the first wait */
	load_waits_of(text, "_ZN6gather14gather_batchedEPKiPKfPf", 1, &w, &rc);
	assert_int_equal(rc, 0);
	assert_true(w.waits > 0 && w.lone == 0);
	free(text);

	/* by hand: two loads on two scoreboards, then a wait on each */
	ga_source s = {0};
	s.scoreboards = 1;
	hand_pc(&s, 0x00, "S2R", "R0, SR_TID.X", -1, 0);
	hand_pc(&s, 0x10, "IMAD.WIDE", "R2, R0, 0x4, R4", -1, 0);
	hand_pc(&s, 0x20, "FADD", "R8, R9, R10", -1, 0);
	hand_pc(&s, 0x30, "LDG.E.64", "R6, desc[UR4][R2.64]", 2, 0);
	hand_pc(&s, 0x40, "LDS", "R12, [R0]", 2, 0);
	hand_pc(&s, 0x50, "STG.E", "desc[UR4][R2.64], R8", -1, 0);
	hand_pc(&s, 0x60, "IADD3", "R14, P1, R2, 0x40, RZ", -1, 0);
	hand_pc(&s, 0x70, "LDG.E", "R13, desc[UR4][R14.64]", 3, 0);
	hand_pc(&s, 0x80, "FADD", "R7, R6, R8", -1, 0x4);
	hand_pc(&s, 0x90, "FADD", "R7, R7, R13", -1, 0x8);
	hand_pc(&s, 0xa0, "FADD", "R7, R7, R13", -1, 0x8);
	/* the first wait has both loads in flight, the second one: the third
	 * waits on a scoreboard already cleared.  The lone load (0x70) stays
	 * below the store (it may alias) and its address (0x60): 0 movable */
	assert_int_equal(ga_source_load_waits(&s, &w), 0);
	assert_true(w.waits == 20 && w.lone == 10 && w.lone_movable == 0);
	/* read-only data: past the store, the LDS and the other load, not
	 * its address (0x60, 0x10 and 0x00) */
	free(s.pcs[7].op);
	s.pcs[7].op = strdup("LDG.E.CONSTANT");
	assert_int_equal(ga_source_load_waits(&s, &w), 0);
	assert_true(w.lone == 10 && w.lone_movable == 10 * 4);
	/* a branch target (a label in the listing) at the store starts the
	 * block there */
	s.pcs[5].target = 1;
	assert_int_equal(ga_source_load_waits(&s, &w), 0);
	assert_true(w.lone == 10 && w.lone_movable == 10 * 1);
	/* operands unknown: the lone waits, not how far the load moves */
	free(s.pcs[2].args);
	s.pcs[2].args = NULL;
	assert_int_equal(ga_source_load_waits(&s, &w), 0);
	assert_true(w.lone == 10 && w.movable_known == 0);
	s.scoreboards = 0;
	assert_int_equal(ga_source_load_waits(&s, &w), -1);
	ga_source_free(&s);

	/* a listing without encodings gives opcodes and no scoreboards */
	ga_source t = {0};
	text = read_fixture("nvdisasm-intdiv.sass");
	t.mangled = strdup("_ZN6intdiv10mod_divideEPj");
	pc_at(&t, 0x00f0, NULL, 0, 10, 320);
	assert_int_equal(ga_source_set_ops(&t, text), 1);
	assert_int_equal(t.scoreboards, 0);
	assert_string_equal(t.pcs[0].args, "R4, R4");
	assert_int_equal(ga_source_load_waits(&t, &w), -1);
	free(text);
	ga_source_free(&t);
}

/* The serial gather's two loads, each waited on alone, are its lone-load
 * lines: half the lone waits each, 0 and 2 instructions to move above. */
static void test_rank_lone_loads(void **state)
{
	char *text = read_fixture("sass-hex-gather.sass");
	ga_source s = {0};
	ga_source_line top[5];
	(void)state;
	s.mangled = strdup("_ZN6gather13gather_serialEPKiPKfPf");
	for (uint32_t pc = 0; pc <= 0x1f0; pc += 16)
		pc_at(&s, pc, NULL, 0, pc >= 0x120 && pc <= 0x1b0 ? 64 : 1, 32 * 64);
	assert_true(ga_source_set_ops(&s, text) > 0);
	size_t n = ga_source_rank(&s, &cuts, top, 5);
	size_t lone = 0;
	for (size_t i = 0; i < n; i++) {
		if (!(top[i].issues & GA_SRC_LONE_LOAD))
			continue;
		lone++;
		assert_true(top[i].pc == 0x120 || top[i].pc == 0x170);
		assert_true(top[i].lone_waits == 64);
		assert_true(top[i].lone_movable == (top[i].pc == 0x120 ? 0 : 2));
		assert_true(fabs(top[i].score - 0.5) < 1e-9);
		assert_non_null(strstr(top[i].desc, "waited on alone (50% of the kernel's lone waits)"));
	}
	assert_int_equal(lone, 2);
	free(text);
	ga_source_free(&s);
}

static void test_set_ops(void **state)
{
	ga_source s = {0};
	(void)state;
	char *text = read_fixture("nvdisasm-intdiv.sass");
	s.mangled = strdup("_ZN6intdiv10mod_divideEPj");
	pc_at(&s, 0x00d0, NULL, 0, 10, 320);    /* div_recip's 00d0 is a LOP3.LUT */
	pc_at(&s, 0x00f0, NULL, 0, 10, 320);
	pc_at(&s, 0x0210, NULL, 0, 10, 320);    /* predicated: "@P1 BRA" */
	pc_at(&s, 0x9990, NULL, 0, 10, 320);    /* past the kernel's end */
	assert_int_equal(ga_source_set_ops(&s, text), 3);
	assert_string_equal(s.pcs[0].op, "I2F.U32.RP");
	assert_string_equal(s.pcs[1].op, "MUFU.RCP");
	assert_string_equal(s.pcs[2].op, "BRA");
	assert_null(s.pcs[3].op);
	/* a name that is a prefix of another section's is not that section */
	free(s.mangled);
	s.mangled = strdup("_ZN6intdiv10mod_divide");
	assert_int_equal(ga_source_set_ops(&s, text), 0);
	assert_int_equal(ga_source_set_ops(&s, "no listing at all\n"), 0);
	free(text);
	ga_source_free(&s);
}

/* An opcode and its warp instructions; NULL: a PC without an opcode. */
typedef struct {
	const char *op;
	double inst;
} op_pc;

/* Adds pcs[0..n) to s at offsets 0, 16, 32...: no line information. */
static void ops_in_order(ga_source *s, const op_pc *pcs, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		ga_source_pc *p = pc_at(s, (uint32_t)(16 * i), NULL, 0, pcs[i].inst, 32 * pcs[i].inst);
		p->op = pcs[i].op ? strdup(pcs[i].op) : NULL;
	}
}

static void test_xu_ops(void **state)
{
	ga_source s = {0};
	double total = -1, top = -1;
	(void)state;
	s.mangled = strdup("k");
	assert_int_equal(ga_source_xu_ops(&s, &total, &top), -1);   /* no opcodes */
	const op_pc pcs[] = {
		{"FRND", 60}, {"F2I.NTZ", 100}, {"MUFU.RCP", 8}, {"FRND", 50},
		{"FFMA", 900}, {"I2FP.F32.S32", 16}, {"F2FP.BF16.F32.PACK_AB", 5}, {NULL, 50},
	};
	ops_in_order(&s, pcs, sizeof(pcs) / sizeof(pcs[0]));
	assert_int_equal(ga_source_xu_ops(&s, &total, &top), 0);
	/* FRND 60 + 50 (one opcode, two PCs), F2I 100, MUFU 8; I2FP and F2FP
	 * run off the XU */
	assert_true(total == 218);
	assert_true(top == 110);
	ga_source_free(&s);
}

/* One opcode's instructions, with or without modifiers: FCHK counts the
 * IEEE divisions, MUFU.RSQ the square roots; a longer name is another
 * opcode. */
static void test_op_inst(void **state)
{
	ga_source s = {0};
	double n = -1;
	(void)state;
	s.mangled = strdup("k");
	assert_int_equal(ga_source_op_inst(&s, "FCHK", &n), -1);   /* no opcodes */
	const op_pc pcs[] = {
		{"MUFU.RCP", 40}, {"FCHK", 30}, {"FCHK", 10}, {"MUFU.RSQ", 7},
		{"FCHKX", 100}, {"FFMA", 900}, {NULL, 50},
	};
	ops_in_order(&s, pcs, sizeof(pcs) / sizeof(pcs[0]));
	assert_int_equal(ga_source_op_inst(&s, "FCHK", &n), 0);
	assert_true(n == 40);
	assert_int_equal(ga_source_op_inst(&s, "MUFU.RSQ", &n), 0);
	assert_true(n == 7);
	assert_int_equal(ga_source_op_inst(&s, "MUFU", &n), 0);
	assert_true(n == 47);
	assert_int_equal(ga_source_op_inst(&s, "DMUL", &n), 0);
	assert_true(n == 0);
	ga_source_free(&s);
}

/* The IEEE FP32 division's slow path: the subroutines after the last EXIT
 * with MUFU.RCP, a directed-rounding FFMA and no FP64 instruction, each up
 * to its RET; the body's instructions, a square root's subroutine, an FP64
 * division's and a function rounding without a reciprocal are not counted. */
static void test_fdiv_slowpath(void **state)
{
	ga_source s = {0};
	double n = -1;
	(void)state;
	s.mangled = strdup("k");
	assert_int_equal(ga_source_fdiv_slowpath_inst(&s, &n), -1);   /* no PCs */
	const op_pc pcs[] = {
		{"FCHK", 30}, {"CALL.REL.NOINC", 5}, {"EXIT", 100}, {"FFMA.RZ", 1000}, /* body */
		{"EXIT", 100}, {"BRA", 0},
		{"MUFU.RSQ", 3}, {"FMUL.FTZ", 3}, {"RET.REL.NODEC", 3},           /* sqrt */
		{"MUFU.RCP", 5}, {"FFMA", 5}, {"FFMA.RP", 5}, {NULL, 77}, {"RET.REL.NODEC", 5},
		{"MUFU.RCP64H", 2}, {"DFMA.RM", 2}, {"FFMA.RZ", 2}, {"RET.REL.NODEC", 2}, /* FP64 */
		{"MUFU.RCP", 4}, {"FFMA.RMX", 4}, {"RET.REL.NODEC", 4}, /* another modifier */
		{"FFMA.RZ", 6}, {"FADD", 6}, {"RET.REL.NODEC", 6},      /* no reciprocal */
		{"BRA", 0}, {"NOP", 0},
	};
	ops_in_order(&s, pcs, sizeof(pcs) / sizeof(pcs[0]));
	assert_int_equal(ga_source_fdiv_slowpath_inst(&s, &n), 0);
	assert_true(n == 20);
	ga_source_free(&s);

	/* No subroutine: nothing counted. */
	ga_source t = {0};
	t.mangled = strdup("k");
	ga_source_pc *p = pc_at(&t, 0, NULL, 0, 9, 288);
	p->op = strdup("FFMA.RZ");
	assert_int_equal(ga_source_fdiv_slowpath_inst(&t, &n), 0);
	assert_true(n == 0);
	ga_source_free(&t);
}

/* XU lines: a line's share of the kernel's XU instructions, its opcodes
 * most executed first, only in a kernel where the XU instructions are at
 * least 1/32 of all; an opcode on another record of the same PC counts. */
static ga_source_pc *op_at(ga_source *s, uint32_t pc, int line, double inst, const char *op)
{
	ga_source_pc *p = pc_at(s, pc, "k.cu", line, inst, 32 * inst);
	p->op = op ? strdup(op) : NULL;
	return p;
}

static void test_rank_xu(void **state)
{
	ga_source s = {0};
	ga_source_line out[GA_SOURCE_TOP_LINES];
	(void)state;
	s.mangled = strdup("k");
	s.lineinfo = 1;
	op_at(&s, 0x00, 10, 20e6, "FFMA");
	op_at(&s, 0x10, 12, 9e6, "MUFU.EX2");
	op_at(&s, 0x20, 12, 3e6, "FRND");
	op_at(&s, 0x30, 12, 1e6, "I2FP.F32.S32");   /* off the XU */
	/* Line 14's F2I: the opcode on the PC's second record only. */
	op_at(&s, 0x40, 14, 1e6, NULL);
	op_at(&s, 0x40, 14, 0, "F2I.NTZ");
	size_t n = ga_source_rank(&s, &cuts, out, GA_SOURCE_TOP_LINES);
	assert_int_equal(n, 2);
	assert_int_equal(out[0].line, 12);
	assert_true(out[0].issues == GA_SRC_XU);
	assert_true(fabs(out[0].score - 12.0 / 13) < 1e-12);
	assert_true(out[0].xu_inst == 12e6);
	assert_string_equal(out[0].desc, "12 million XU instructions: MUFU.EX2 75%, FRND 25%");
	assert_int_equal(out[1].line, 14);
	assert_true(fabs(out[1].score - 1.0 / 13) < 1e-12);
	assert_string_equal(out[1].desc, "1 million XU instructions: F2I.NTZ 100%");
	ga_source_free(&s);

	/* The same XU work beside 500 million other instructions: 13 of 513
	 * million (2.5 %) is under 1/32, so no line ranks; beside 400 million,
	 * 13 of 413 (3.1 %) is just over. */
	memset(&s, 0, sizeof(s));
	s.mangled = strdup("k");
	s.lineinfo = 1;
	op_at(&s, 0x00, 10, 500e6, "FFMA");
	op_at(&s, 0x10, 12, 12e6, "MUFU.EX2");
	op_at(&s, 0x40, 14, 1e6, "F2I.NTZ");
	assert_int_equal(ga_source_rank(&s, &cuts, out, GA_SOURCE_TOP_LINES), 0);
	s.pcs[0].inst = 400e6;
	assert_int_equal(ga_source_rank(&s, &cuts, out, GA_SOURCE_TOP_LINES), 2);
	ga_source_free(&s);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_rank_uncoalesced),
		cmocka_unit_test(test_rank_divergent_branch),
		cmocka_unit_test(test_rank_bank_conflicts_and_no_lineinfo),
		cmocka_unit_test(test_rank_nothing_wrong),
		cmocka_unit_test(test_round_trip),
		cmocka_unit_test(test_load_errors),
		cmocka_unit_test(test_read_line_and_fill),
		cmocka_unit_test(test_rank_stalls),
		cmocka_unit_test(test_rank_stall_tiers),
		cmocka_unit_test(test_merge),
		cmocka_unit_test(test_stalls_json),
		cmocka_unit_test(test_stalls_load_errors),
		cmocka_unit_test(test_set_ops),
		cmocka_unit_test(test_load_waits),
		cmocka_unit_test(test_rank_lone_loads),
		cmocka_unit_test(test_xu_ops),
		cmocka_unit_test(test_op_inst),
		cmocka_unit_test(test_fdiv_slowpath),
		cmocka_unit_test(test_rank_xu),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
