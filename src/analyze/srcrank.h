/* srcrank.h: the source lines worth changing in a kernel, ranked from its
 * per-PC counts (profile/source.h) by the share of each kind of waste they
 * hold.  The analysis ranks them per kernel group (summary.c) and places
 * findings on them (locate.c). */
#ifndef GA_SRCRANK_H
#define GA_SRCRANK_H

#include <stddef.h>
#include <stdint.h>

#include "../profile/source.h"

/* What is wrong at a line. */
enum {
	GA_SRC_UNCOALESCED = 1 << 0,  /* more global sectors per request than ideal */
	GA_SRC_BANK_CONFLICT = 1 << 1,/* more shared wavefronts per request than ideal */
	GA_SRC_INACTIVE = 1 << 2,     /* instructions run with few active lanes */
	GA_SRC_BRANCH = 1 << 3,       /* the last full-width instructions before lanes drop */
	GA_SRC_STALL = 1 << 4,        /* a large share of the kernel's stall samples */
	GA_SRC_XU = 1 << 5,           /* a large share of the XU pipe's instructions (opcodes) */
	GA_SRC_LONE_LOAD = 1 << 6,    /* a load the warp waits on with no other in flight */
};

/* The XU kind ranks only in a kernel whose XU instructions are at least
 * this share of its warp instructions: on Hopper an XU instruction holds
 * its pipe for 8 issue cycles (16 lanes a cycle per SM against 128 for
 * FP32), so at 1/32 the pipe is a quarter busy when issue is saturated.
 * Fewer, and the XU's lines are work that costs nothing. */
#define GA_SOURCE_XU_MIN_INST_SHARE (1.0 / 32)

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
	/* Waits on a load of the line with no other load in flight (the
	 * scoreboards), executed, and on average the instructions above it in
	 * its block that it could be issued before; 0 and NAN without. */
	double lone_waits, lone_movable;
	char desc[320];          /* "32.0 sectors/request (ideal 4.0); ..." */
} ga_source_line;

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
 * or of the waits on a lone load in flight where they have scoreboards
 * (ga_source_load_waits: the load's line),
 * or, only when it has none of those, with at least cuts->min_stall_share
 * of the kernel's stall samples; lines of the first kind come first.
 * Returns the number written. */
size_t ga_source_rank(const ga_source *s, const ga_source_cuts *cuts, ga_source_line *out,
                      size_t max);

/* Lines the analysis ranks per kernel. */
#define GA_SOURCE_TOP_LINES 5

#endif
