/* sassint.h: shared by sass.c (SASS metrics, which kernels), pcsamp.c (PC
 * sampling in the stall run) and cubins.c below them (the cubins, the
 * state, the log); see sass.h.  Hidden in the
 * injection library like the rest. */
#ifndef GA_SASSINT_H
#define GA_SASSINT_H

#include <stdint.h>
#include <stdio.h>

#include <cuda.h>
#include <cupti.h>
#include <cupti_pcsampling.h>

#include "../profile/source.h"
#include "trigger.h"

#define PCS_DEFAULT_PERIOD 12           /* 2^12 cycles, until a launch says otherwise */

enum { M_INST, M_THREADS, M_SECT, M_SECT_IDEAL, M_WF, M_WF_IDEAL, M_N };

typedef struct cubin {
	uint64_t crc;
	uint8_t *data;
	size_t size;
	char *listing;            /* nvdisasm's, once a kernel of it was measured */
	int listing_tried;
	struct cubin *next;
} cubin;

typedef struct want {
	char *mangled;
	uint32_t ctx;
	char *trigger;
	int done;                 /* SASS metrics tried */
	int pcs_done;             /* PC sampling tried */
	double duration_ns;       /* of the profiled launch that flagged it */
	struct want *next;
} want;

/* What the launch being measured is measured with. */
typedef enum { ACT_NONE, ACT_SASS, ACT_PCS } sass_activity;

typedef struct pcs_ctx {      /* a context with PC sampling enabled */
	CUcontext ctx;
	uint32_t period;          /* the sampling period configured there */
	struct pcs_ctx *next;
} pcs_ctx;

/* GA_ENV_SOURCE: off, auto (the trigger's kernels), force (every kernel). */
typedef enum { MODE_OFF, MODE_AUTO, MODE_FORCE } sass_mode;

#define MAX_DEVICES 64

/* GA_ENV_SOURCE_REPLAY: second runs (sassreplay.c) for the kernels of the
 * rules that read opcodes (unset), for none ("0"), for every flagged one
 * ("all"). */
typedef enum { REPLAY_OPCODES, REPLAY_OFF, REPLAY_ALL } sass_replay_mode;

typedef struct {
	sass_mode mode;
	sass_replay_mode replay_mode;
	char *opcode_rules;       /* GA_ENV_SOURCE_OPCODES ("ID,ID"); NULL: none */
	int pid;
	ga_trigger *trigger;      /* the rules' source trigger; NULL: none */
	ga_name_filter *skip;     /* library kernels the trigger leaves alone; NULL: none */
	cubin *cubins;
	size_t cubin_bytes;
	int cubins_dropped;
	want *wants;
	FILE *log;
	int listed;
	/* per device: 0 unknown, 1 configured, -1 unusable */
	int dev_state[MAX_DEVICES];
	/* per configured device, the context its last measured launch ran in */
	CUcontext cfg_ctx[MAX_DEVICES];
	uint64_t ids[MAX_DEVICES][M_N];
	int have[MAX_DEVICES][M_N];
	/* the launch being measured */
	want *active;
	sass_activity active_kind;
	CUcontext ctx;
	int dev;
	unsigned grid[3], block[3];
	int replay;               /* the launch is sassreplay.c's second run */
	/* PC sampling (the stall run) */
	int stall_run;
	int pcs_broken;           /* enabling failed once: not again */
	pcs_ctx *pcs_ctxs;
	size_t n_reasons;         /* every reason CUPTI names */
	uint32_t *reason_index;
	char **reason_name;       /* CUPTI's names, CUPTI_STALL_REASON_STRING_SIZE each */
	uint32_t *selected;       /* the indices collected */
	size_t n_selected;
	CUpti_PCSamplingData cfg_buf, get_buf;
	uint32_t period;
	double t0;
} sass_state;

extern sass_state sass;       /* cubins.c */

/* cubins.c: GA_ENV_SOURCE_LOG lines, a CUPTI call's result logged, a note
 * (an error record of code "source", shown with the source lines). */
void sass_logf(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
CUptiResult sass_logged(CUptiResult r, const char *what);
void sass_note(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
/* The launch being measured, until ga_sass_end. */
void set_active(want *w, sass_activity kind, CUcontext ctx, CUdevice dev,
                const unsigned grid[3], const unsigned block[3]);
/* The cubin holding fn, and a PC's file and line in it. */
cubin *find_cubin(uint64_t crc, const char *fn, uint32_t pc);
int correlate(const cubin *c, const char *fn, uint32_t pc, char **file, int *line);
/* Each PC of src its opcode, from nvdisasm's listing of cb (made once). */
void cubin_disassemble(cubin *cb, ga_source *src);

/* pcsamp.c: PC sampling of the kernel's launch (ENTER / EXIT). */
int pcs_begin(want *w, CUcontext ctx, CUdevice dev, const unsigned grid[3],
              const unsigned block[3]);
void pcs_end(void);
/* A context goes: PC sampling off in it. */
void pcs_context_destroyed(CUcontext ctx);

#endif
