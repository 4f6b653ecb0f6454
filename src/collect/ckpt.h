/* ckpt.h: the context's device memory saved before a launch, put back, and
 * the launch made again (CUPTI's checkpoint API, libcheckpoint.so beside
 * libcupti, loaded with dlopen), for sassreplay.c: a flagged kernel
 * launched once runs again with SASS metrics for its source lines.  (Replay
 * passes taken the same way, by user replay, cost what kernel replay costs:
 * docs/PERFORMANCE.md, "Designs tried and not kept".)  One checkpoint at a
 * time, held between a launch's ENTER and EXIT under inject.c's lock. */
#ifndef GA_CKPT_H
#define GA_CKPT_H

#include <cuda.h>
#include <cupti.h>

/* Why a save was not made. */
typedef enum {
	GA_CKPT_OK = 0,
	GA_CKPT_NO_LIBRARY,       /* libcheckpoint.so missing or incomplete */
	GA_CKPT_NO_ROOM,          /* the memory in use does not fit twice */
	GA_CKPT_FAILED,           /* the context or the save failed */
} ga_ckpt_status;

/* Save ctx's device memory, once the context is idle (work on other streams
 * would write memory the copy has already taken, and a restore would undo
 * it).  Only while the memory in use fits twice with 512 MiB to spare: the
 * copy stays on the GPU.  GA_CKPT_OK when a checkpoint is held (also when
 * one already was).  *why_msg (may be NULL) gets a sentence for a note on
 * failure, static or valid until the next call. */
ga_ckpt_status ga_ckpt_save(CUcontext ctx, const char **why_msg);
int ga_ckpt_held(void);
/* Put the saved memory back (the checkpoint stays held): 0, or -1. */
int ga_ckpt_restore(void);
void ga_ckpt_release(void);

/* Make the launch of the callback's parameters again (valid until its
 * EXIT), with this thread's callbacks ignored (ga_ckpt_replaying);
 * CUDA_ERROR_NOT_SUPPORTED for a driver call other than cuLaunchKernel,
 * cuLaunchCooperativeKernel, cuLaunchKernelEx and their _ptsz forms. */
CUresult ga_ckpt_relaunch(CUpti_CallbackId cbid, const void *params);
/* 1 on the thread making such a launch. */
int ga_ckpt_replaying(void);

#endif
