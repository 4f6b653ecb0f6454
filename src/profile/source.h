/* source.h: source-line attribution of a kernel's problems.
 *
 * The collector measures one launch of a flagged kernel with CUPTI's SASS
 * metrics (per-instruction counts), and the launch after it with CUPTI's PC
 * sampling (warp stall reasons per instruction), and maps each instruction's
 * PC offset to file:line (cubin line information, from nvcc -lineinfo).  A
 * ga_source holds those per-PC counts for one kernel; the analysis ranks
 * the lines they make up (analyze/srcrank.h).
 *
 * JSON: the profile's optional "sources" array (docs/profile.schema.json). */
#ifndef GA_SOURCE_H
#define GA_SOURCE_H

#include <stddef.h>
#include <stdint.h>

#include "../util/util.h"

/* PC samples of one warp state at one instruction.  Reasons are CUPTI's
 * names without "smsp__pcsamp_warps_issue_stalled_": "long_scoreboard",
 * "barrier", ...; "selected" (the warp issued) and "not_selected" (it was
 * ready to, another warp issued) are samples but no stall. */
typedef struct {
	char *reason;
	double samples;
} ga_stall;

/* Dependency scoreboards of an SM sub-partition's warp (Volta and later). */
#define GA_SCOREBOARDS 6

typedef struct {
	uint32_t pc;             /* offset of the instruction in its function */
	char *file;              /* NULL: no line information */
	int line;                /* 0: no line information */
	/* Counts over the measured launch; NAN where not collected. */
	double inst;             /* warp-level instructions executed */
	double threads;          /* thread-level instructions executed (active lanes) */
	double sectors;          /* global memory sectors accessed */
	double sectors_ideal;    /* the same if the access were fully coalesced */
	double wavefronts;       /* shared memory wavefronts */
	double wavefronts_ideal; /* the same without bank conflicts */
	char *text;              /* source text of the line, read at collection; NULL */
	char *op;                /* SASS opcode with its modifiers ("MUFU.EX2"), from
	                          * the cubin's disassembly; NULL: not known */
	char *args;              /* its operands ("R5, desc[UR4][R6.64]"); NULL: not
	                          * known (profiles recorded before they were kept) */
	int target;              /* 1: a label precedes it in the listing (a branch
	                          * target) */
	/* Dependency barriers from the instruction's control bits (where the
	 * source's `scoreboards` is set): the scoreboard (0..5) whose count the
	 * instruction raises until its result is written, -1 for none; the
	 * mask of scoreboards it waits on to reach zero before it issues. */
	int sb_write;
	unsigned sb_wait;
	ga_stall *stalls;        /* PC samples by warp state; none: not sampled */
	size_t n_stalls;
} ga_source_pc;

typedef struct ga_source {
	char *mangled;
	int pid;
	unsigned grid[3], block[3];
	char *trigger;           /* why it was measured: "--source", "--stalls", or
	                          * the rules whose source_lines held, "rule ID" or
	                          * "rules ID, ID" (profiles recorded before that
	                          * say "rule trigger: NAME=VALUE, ...") */
	int lineinfo;            /* 1 when at least one PC mapped to a line */
	int scoreboards;         /* 1 when the PCs' sb_write and sb_wait are known */
	/* PC sampling of the launch that gave the stalls; 0 when not sampled */
	double sample_period;    /* cycles between samples */
	double samples_total;    /* samples CUPTI counted in the launch */
	double samples_dropped;  /* of those, dropped by the hardware */
	ga_source_pc *pcs;
	size_t n_pcs, cap_pcs;
} ga_source;

/* The warp states that are no stall: the sampled warp issued, or was
 * ready to and the scheduler picked another (a sign of enough warps). */
#define GA_STALL_SELECTED "selected"
#define GA_STALL_NOT_SELECTED "not_selected"
/* 1 unless reason is one of those two. */
int ga_stall_is_stall(const char *reason);

void ga_source_free(ga_source *s);
/* Append a PC with every count NAN; valid until the next append. */
ga_source_pc *ga_source_add_pc(ga_source *s);

/* Add from's counts to to's (NAN + x = x); file, text and opcode are
 * borrowed from `from` when to has none (ranking's temporary merge only;
 * stalls are not merged). */
void ga_source_pc_add(ga_source_pc *to, const ga_source_pc *from);

/* Add samples of reason to a PC (a new reason is appended). */
void ga_source_pc_add_stall(ga_source_pc *p, const char *reason, double samples);
/* Samples of one reason at a PC (0 when none). */
double ga_source_pc_stall(const ga_source_pc *p, const char *reason);

/* Merge the measurements of `from` (the same kernel, another launch) into
 * `to`: counts and stalls of a PC both have are added, PCs only `from` has
 * are copied, and so are its sampling totals when `to` has none. */
void ga_source_merge(ga_source *to, const ga_source *from);

/* JSON form of one "sources" entry (json_t *, new reference), and back.
 * from_json appends to *arr. */
void *ga_source_to_json(const ga_source *s);
int ga_source_from_json(ga_source **arr, size_t *n, size_t *cap, void *json, const char *where,
                        ga_error *err);

/* Opcodes from nvdisasm's listing of the kernel's cubin (text): each
 * instruction of the section .text.<s->mangled> (its offset in a C comment,
 * an optional predicate, the opcode, its operands) names the opcode and
 * the operands of the PC at that offset.  PCs the listing does not hold keep theirs.  Where the
 * listing has the encodings (nvdisasm -hex: each 128-bit instruction as
 * two 64-bit words in C comments, the low one first), the control bits of
 * the high word's top (bits 41 to 61: stall cycles, yield, the scoreboard
 * written, the one read, the mask waited on, operand reuse; the layout of
 * Volta and later, as the Jia et al. microbenchmark reports describe it)
 * give each PC's sb_write and sb_wait, and s->scoreboards is set.
 * Returns the number of PCs given an opcode. */
size_t ga_source_set_ops(ga_source *s, const char *text);

/* The XU pipe's instructions of s by opcode, on Hopper-class GPUs: MUFU
 * (transcendentals, reciprocals), FRND (rounding), F2I, I2F, F2F
 * (conversions; I2FP runs on the ALU).  *total: their warp instructions;
 * *top: those of the most executed one (opcode and modifiers).  Returns 0,
 * or -1 when no PC has both an opcode and a count. */
int ga_source_xu_ops(const ga_source *s, double *total, double *top);
/* The warp instructions of s at PCs whose opcode is op, with or without
 * modifiers ("FCHK" counts "FCHK" and "FCHK.DIVIDE"), into *inst.  Returns
 * 0, or -1 when no PC has both an opcode and a count. */
int ga_source_op_inst(const ga_source *s, const char *op, double *inst);
/* The warp instructions of s in IEEE FP32 divisions' slow paths, into
 * *inst: the subroutines after the kernel's last EXIT (each up to its RET)
 * that take a reciprocal (MUFU.RCP), round in a fixed direction (FFMA.RZ,
 * .RP, .RM: the division's rounding check) and issue no FP64 instruction.
 * The fast path calls one where FCHK flags the operands; fast math has
 * none.  Returns 0, or -1 when no PC has both an opcode and a count. */
int ga_source_fdiv_slowpath_inst(const ga_source *s, double *inst);
/* Waits on long-latency loads, from the scoreboards (see set_ops;
 * loadwait.c): walk the PCs in address order, counting for each
 * scoreboard the global, local and texture loads (LDG, LD, LDL, TEX, TLD,
 * TLD4, TXD, SULD, ATOM, ATOMG) that raised it; an instruction whose wait
 * mask covers a scoreboard holding such a load is a wait on loads, and the
 * loads then outstanding on all scoreboards are those the warp has in
 * flight there.  The walk follows the listing, not the branches, so a load
 * issued before a loop's back edge and first used at its top is not
 * counted. */
typedef struct {
	double waits;        /* warp instructions executed at waits on loads */
	double lone;         /* those where the warp had a single load in flight */
	/* Over those lone waits, executions x the instructions above the load
	 * in its block that it could be issued before (its address does not
	 * depend on them; the block starts at a branch target or after a
	 * branch, exit, barrier, fence or scoreboard wait; a load that may see
	 * stores stays below a global store): how much a reordering can put
	 * between the load and its use.  Known only where every PC with an opcode has its
	 * operands (movable_known). */
	double lone_movable;
	int movable_known;
} ga_load_waits;
/* Returns 0, or -1 without scoreboards or without any executed wait on a
 * load. */
int ga_source_load_waits(const ga_source *s, ga_load_waits *w);
/* The same, and per load: lone_at[i] and movable_at[i] (arrays of
 * s->n_pcs, indexed like s->pcs, zeroed here) get the lone waits on the
 * load at s->pcs[i] and their executions x its movable instructions. */
int ga_source_load_waits_at(const ga_source *s, ga_load_waits *w, double *lone_at,
                            double *movable_at);
/* s's PCs in offset order, one record per offset (the first): a malloc'd
 * array, *n long. */
ga_source_pc **ga_source_by_offset(const ga_source *s, size_t *n);
/* 1 when op ("LDG.E.CONSTANT") is one of the n opcode names of list, with
 * or without modifiers ("LDG" names it); 0 for NULL. */
int ga_source_op_in(const char *op, const char *const *list, size_t n);
/* 1 when a SASS opcode ("MUFU.EX2") runs on the XU pipe, by that list. */
int ga_source_xu_opcode(const char *op);

/* Read the source text of every line of s (when its file is readable) into
 * the line's first PC: whatever cut-offs the rules set when the profile is
 * analysed, here or on another machine, the lines they rank have their
 * text. */
void ga_source_fill_text(ga_source *s);

/* Read line `line` (1-based) of file into a malloc'd string without the
 * newline, leading blanks removed; NULL when unreadable. */
char *ga_source_read_line(const char *file, int line);

#endif
