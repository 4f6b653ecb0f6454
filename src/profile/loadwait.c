/* loadwait.c: the waits on loads in a kernel's SASS (source.h,
 * ga_source_load_waits).
 *
 * Every instruction of Volta and later carries control bits: the
 * scoreboard its result raises (loads, texture fetches, shared memory and
 * other variable-latency work) and the scoreboards it waits on before it
 * issues (source.c reads them from nvdisasm -hex).  Walking the listing
 * in address order, the long loads raised on each scoreboard are known at
 * every instruction, so at each wait on a load so are the loads the warp
 * has in flight: one alone, or several the compiler issued back to back.
 *
 * For a wait on a lone load, the operands tell how far up its block the
 * load could be issued: past every instruction above it that its address
 * does not depend on, back to the block's first instruction (a branch
 * target, which nvdisasm labels, or the one after a branch, exit, barrier,
 * fence or scoreboard wait), and, for a load that may see stores, not past
 * a store.  That is how much work a reordering can put between the load
 * and its first use. */
#include <math.h>
#include <ctype.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "source.h"
#include "../util/util.h"

/* Registers an instruction names, as bits: R0..R255, then P0..P7, UR0..
 * UR63 and UP0..UP7 (RZ, PT, URZ and UPT are constants, not registers). */
enum { REG_R = 0, REG_P = 256, REG_UR = 264, REG_UP = 328, REG_N = 336 };
typedef struct {
	uint64_t w[(REG_N + 63) / 64];
} regset;

static void reg_add(regset *s, int r)
{
	if (r >= 0 && r < REG_N)
		s->w[r / 64] |= 1ULL << (r % 64);
}

static int regs_meet(const regset *a, const regset *b)
{
	for (size_t i = 0; i < sizeof(a->w) / sizeof(a->w[0]); i++)
		if (a->w[i] & b->w[i])
			return 1;
	return 0;
}

static void regs_or(regset *into, const regset *from)
{
	for (size_t i = 0; i < sizeof(into->w) / sizeof(into->w[0]); i++)
		into->w[i] |= from->w[i];
}

/* The registers named in text[0..len) into s: "R6.64" is R6 and R7,
 * ".128" four registers; a name must not follow a letter, digit or '_'
 * (c[0x0][0x28] names none, desc[UR4] names UR4). */
static void regs_of(const char *text, size_t len, regset *s)
{
	for (size_t i = 0; i < len; i++) {
		const char *t = text + i;
		int base, max, n = 1;
		size_t k;
		if (i > 0 && (isalnum((unsigned char)text[i - 1]) || text[i - 1] == '_' || text[i - 1] == '.'))
			continue;
		if (strncmp(t, "UR", 2) == 0)
			base = REG_UR, max = 63, k = 2;
		else if (strncmp(t, "UP", 2) == 0)
			base = REG_UP, max = 7, k = 2;
		else if (*t == 'R')
			base = REG_R, max = 255, k = 1;
		else if (*t == 'P')
			base = REG_P, max = 7, k = 1;
		else
			continue;
		if (i + k >= len || !isdigit((unsigned char)t[k]))
			continue;
		int v = 0;
		while (i + k < len && isdigit((unsigned char)t[k])) {
			if (v <= max)         /* no overflow on a long number */
				v = v * 10 + (t[k] - '0');
			k++;
		}
		if (v > max)
			continue;
		if (strncmp(t + k, ".64", 3) == 0)
			n = 2;
		else if (strncmp(t + k, ".128", 4) == 0)
			n = 4;
		for (int j = 0; j < n && v + j <= max; j++)
			reg_add(s, base + v + j);
		i += k - 1;
	}
}

/* A result from the memory system through the long scoreboard: global,
 * generic, local, texture and surface loads, and atomics that return a
 * value. */
static int long_load(const char *op)
{
	static const char *const ld[] = {"LDG", "LD", "LDL", "TEX", "TLD", "TLD4", "TXD",
	                                 "SULD", "ATOM", "ATOMG"};
	return ga_source_op_in(op, ld, sizeof(ld) / sizeof(ld[0]));
}

/* After these the next instruction starts a block a load cannot be moved
 * above: control flow, block barriers, fences, and the explicit waits on
 * scoreboards (DEPBAR, cp.async's LDGDEPBAR), which a load issued above
 * would join. */
static int ends_block(const char *op)
{
	static const char *const end[] = {"BRA", "BRX", "JMP", "JMX", "CALL", "RET", "EXIT",
	                                  "BAR", "BSYNC", "BSSY", "WARPSYNC", "MEMBAR",
	                                  "FENCE", "ERRBAR", "CCTL", "YIELD", "DEPBAR",
	                                  "LDGDEPBAR"};
	return ga_source_op_in(op, end, sizeof(end) / sizeof(end[0]));
}

/* Stores and atomics to global or generic memory: a load that may see
 * them stays below them (not one of read-only data: .CONSTANT, or a
 * texture fetch). */
static int global_write(const char *op)
{
	static const char *const st[] = {"STG", "ST", "RED", "ATOM", "ATOMG", "SUST", "SURED"};
	return ga_source_op_in(op, st, sizeof(st) / sizeof(st[0]));
}

/* What an instruction writes and reads, from its operands ("R6, P1, R6,
 * 0x40000, RZ"): the first operand unless it is an address, and a
 * predicate right after it (a carry or a second compare result); the
 * rest are read. */
static void operands(const ga_source_pc *p, regset *writes, regset *reads)
{
	const char *a = p->args;
	memset(writes, 0, sizeof(*writes));
	memset(reads, 0, sizeof(*reads));
	if (!a)
		return;
	size_t first = strcspn(a, ",");
	const char *rest = a + first + (a[first] == ',');
	if (memchr(a, '[', first)) {
		regs_of(a, strlen(a), reads);
		return;
	}
	regs_of(a, first, writes);
	/* a wide result takes the next registers too: IMAD.WIDE R4 writes R4
	 * and R5, LDG.E.128 R8 writes R8 to R11 */
	const char *op = p->op ? p->op : "";
	int width = strstr(op, ".128") ? 4 : strstr(op, ".64") || strstr(op, ".WIDE") ? 2 : 1;
	for (int r = REG_R; width > 1 && r < REG_P; r++)
		if (writes->w[r / 64] & (1ULL << (r % 64))) {
			for (int j = 1; j < width && r + j < REG_P; j++)
				reg_add(writes, r + j);
			break;
		}
	rest += strspn(rest, " ");
	size_t second = strcspn(rest, ",");
	if (second >= 2 && rest[0] == 'P' && isdigit((unsigned char)rest[1])) {
		regs_of(rest, second, writes);
		rest += second + (rest[second] == ',');
	}
	regs_of(rest, strlen(rest), reads);
}

/* Instructions above by_pc[ld] in its block that it could be issued
 * before: all but those its address depends on. */
static long movable_above(ga_source_pc *const *by_pc, size_t ld)
{
	regset slice, w, r;
	long k = 0;
	static const char *const tex[] = {"TEX", "TLD", "TLD4", "TXD"};
	int sees_stores = !strstr(by_pc[ld]->op, ".CONSTANT") &&
	                  !ga_source_op_in(by_pc[ld]->op, tex, sizeof(tex) / sizeof(tex[0]));

	operands(by_pc[ld], &w, &slice);
	for (size_t j = ld; j-- > 0;) {
		const ga_source_pc *x = by_pc[j];
		if (by_pc[j + 1]->target || ends_block(x->op) ||
		    (sees_stores && global_write(x->op)))
			break;
		operands(x, &w, &r);
		if (regs_meet(&w, &slice))
			regs_or(&slice, &r);
		else
			k++;
	}
	return k;
}

int ga_source_load_waits(const ga_source *s, ga_load_waits *lw)
{
	return ga_source_load_waits_at(s, lw, NULL, NULL);
}

int ga_source_load_waits_at(const ga_source *s, ga_load_waits *lw, double *lone_at,
                            double *movable_at)
{
	long out[GA_SCOREBOARDS] = {0};
	size_t last[GA_SCOREBOARDS] = {0}, n;
	int args = 1;

	memset(lw, 0, sizeof(*lw));
	if (s && lone_at)
		memset(lone_at, 0, s->n_pcs * sizeof(*lone_at));
	if (s && movable_at)
		memset(movable_at, 0, s->n_pcs * sizeof(*movable_at));
	if (!s || !s->scoreboards || !s->n_pcs)
		return -1;
	ga_source_pc **by_pc = ga_source_by_offset(s, &n);
	for (size_t i = 0; i < n; i++)
		args &= by_pc[i]->op == NULL || by_pc[i]->args != NULL;
	for (size_t i = 0; i < n; i++) {
		const ga_source_pc *p = by_pc[i];
		long waited = 0, in_flight = 0;
		size_t lone_ld = 0;
		for (int b = 0; b < GA_SCOREBOARDS; b++) {
			in_flight += out[b];
			if (out[b])
				lone_ld = last[b];
			if (p->sb_wait & (1u << b))
				waited += out[b];
		}
		if (waited > 0) {
			double c = isfinite(p->inst) ? p->inst : 0;
			lw->waits += c;
			if (in_flight == 1) {
				size_t at = (size_t)(by_pc[lone_ld] - s->pcs);
				double k = args ? (double)movable_above(by_pc, lone_ld) : 0;
				lw->lone += c;
				lw->lone_movable += c * k;
				if (lone_at)
					lone_at[at] += c;
				if (movable_at)
					movable_at[at] += c * k;
			}
			for (int b = 0; b < GA_SCOREBOARDS; b++)
				if (p->sb_wait & (1u << b))
					out[b] = 0;
		}
		if (p->sb_write >= 0 && p->sb_write < GA_SCOREBOARDS && long_load(p->op)) {
			out[p->sb_write]++;
			last[p->sb_write] = i;
		}
	}
	lw->movable_known = args;
	free(by_pc);
	return lw->waits > 0 ? 0 : -1;
}
