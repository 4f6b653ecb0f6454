/* source.h: source-line attribution of a kernel's problems.
 *
 * The collector measures one launch of a flagged kernel with CUPTI's SASS
 * metrics (per-instruction counts), and the launch after it with CUPTI's PC
 * sampling (warp stall reasons per instruction), and maps each instruction's
 * PC offset to file:line (cubin line information, from nvcc -lineinfo).  A
 * ga_source holds those per-PC counts for one kernel; ga_source_rank() turns
 * them into the few source lines worth changing, each with what is wrong
 * there.
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
	/* PC sampling of the launch that gave the stalls; 0 when not sampled */
	double sample_period;    /* cycles between samples */
	double samples_total;    /* samples CUPTI counted in the launch */
	double samples_dropped;  /* of those, dropped by the hardware */
	ga_source_pc *pcs;
	size_t n_pcs, cap_pcs;
} ga_source;

/* What is wrong at a line. */
enum {
	GA_SRC_UNCOALESCED = 1 << 0,  /* more global sectors per request than ideal */
	GA_SRC_BANK_CONFLICT = 1 << 1,/* more shared wavefronts per request than ideal */
	GA_SRC_INACTIVE = 1 << 2,     /* instructions run with few active lanes */
	GA_SRC_BRANCH = 1 << 3,       /* the last full-width instructions before lanes drop */
	GA_SRC_STALL = 1 << 4,        /* a large share of the kernel's stall samples */
	GA_SRC_XU = 1 << 5,           /* a large share of the XU pipe's instructions (opcodes) */
};

/* The XU kind ranks only in a kernel whose XU instructions are at least
 * this share of its warp instructions: on Hopper an XU instruction holds
 * its pipe for 8 issue cycles (16 lanes a cycle per SM against 128 for
 * FP32), so at 1/32 the pipe is a quarter busy when issue is saturated.
 * Fewer, and the XU's lines are work that costs nothing. */
#define GA_SOURCE_XU_MIN_INST_SHARE (1.0 / 32)

/* The warp states that are no stall: the sampled warp issued, or was
 * ready to and the scheduler picked another (a sign of enough warps). */
#define GA_STALL_SELECTED "selected"
#define GA_STALL_NOT_SELECTED "not_selected"
/* 1 unless reason is one of those two. */
int ga_stall_is_stall(const char *reason);


typedef struct {
	const char *file;        /* borrowed from the ga_source; NULL: no line info */
	int line;                /* 0 without line info: then pc identifies it */
	uint32_t pc;             /* first (lowest) PC of the line */
	const char *text;        /* borrowed; NULL when unknown */
	unsigned issues;         /* GA_SRC_* bits */
	double score;            /* largest share (0..1) of the kernel's waste of a kind */
	double sectors_per_req, sectors_ideal_per_req;
	double wavefronts_per_req, wavefronts_ideal_per_req;
	double active_threads;   /* mean active lanes per instruction of the line */
	double branch_before, branch_after; /* lanes at the branch and in the region after */
	/* PC sampling; samples 0 (and reason NULL) when the line was not sampled */
	double samples;          /* every sample at the line, "selected" included */
	double stall_samples;    /* the stalled ones */
	double stall_share;      /* of the kernel's stall samples (0..1) */
	const char *stall_reason;/* the line's most sampled stall reason; borrowed */
	double stall_reason_samples;
	double xu_inst;          /* XU warp instructions at the line (PCs with opcodes) */
	char desc[320];          /* "32.0 sectors/request (ideal 4.0); ..." */
} ga_source_line;

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

/* The cut-offs of the ranking.  The analysis takes them from the rules'
 * classifier (source_min_waste_pct, ...) and the warp size from the device. */
typedef struct {
	double warp_size;        /* lanes per warp; NAN: unknown (no idle-lane kinds) */
	double min_share;        /* fraction of a kind of waste for a line to rank */
	double min_stall_share;  /* fraction of the stall samples for a stall hotspot */
	double branch_drop;      /* lanes: a smaller drop in active lanes is noise */
} ga_source_cuts;

/* Rank the lines of s: at most max lines, largest share first.  A line
 * ranks with a share of at least cuts->min_share of some kind of waste
 * measured by the SASS metrics (uncoalesced, bank conflicts, divergence),
 * or of the XU pipe's instructions where the PCs have opcodes (see
 * GA_SOURCE_XU_MIN_INST_SHARE; the description names the opcodes),
 * or, only when it has none of those, with at least cuts->min_stall_share
 * of the kernel's stall samples; lines of the first kind come first.
 * Returns the number written. */
size_t ga_source_rank(const ga_source *s, const ga_source_cuts *cuts, ga_source_line *out,
                      size_t max);

/* JSON form of one "sources" entry (json_t *, new reference), and back.
 * from_json appends to *arr. */
void *ga_source_to_json(const ga_source *s);
int ga_source_from_json(ga_source **arr, size_t *n, size_t *cap, void *json, const char *where,
                        ga_error *err);

/* Opcodes from nvdisasm's listing of the kernel's cubin (text): each
 * instruction of the section .text.<s->mangled> (its offset in a C comment,
 * an optional predicate, the opcode, its operands) names the opcode of the
 * PC at that offset.  PCs the listing does not hold keep theirs.
 * Returns the number of PCs given an opcode. */
size_t ga_source_set_ops(ga_source *s, const char *text);

/* The XU pipe's instructions of s by opcode, on Hopper-class GPUs: MUFU
 * (transcendentals, reciprocals), FRND (rounding), F2I, I2F, F2F
 * (conversions; I2FP runs on the ALU).  *total: their warp instructions;
 * *top: those of the most executed one (opcode and modifiers).  Returns 0,
 * or -1 when no PC has both an opcode and a count. */
int ga_source_xu_ops(const ga_source *s, double *total, double *top);

/* Lines the analysis ranks per kernel. */
#define GA_SOURCE_TOP_LINES 5

/* Read the source text of every line of s (when its file is readable) into
 * the line's first PC: whatever cut-offs the rules set when the profile is
 * analysed, here or on another machine, the lines they rank have their
 * text. */
void ga_source_fill_text(ga_source *s);

/* Read line `line` (1-based) of file into a malloc'd string without the
 * newline, leading blanks removed; NULL when unreadable. */
char *ga_source_read_line(const char *file, int line);

#endif
