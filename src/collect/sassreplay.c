/* sassreplay.c: source lines of a kernel launched once (see sass.h).
 *
 * sass.c measures a flagged kernel's next launch with SASS metrics.  A
 * benchmark, a test or an inference run launches most kernels once, and
 * such a kernel got no source lines and no opcode counts.  So, under full
 * diagnosis, a kernel's first launch is preceded by a checkpoint of the
 * context's device memory (CUPTI's checkpoint API, libcheckpoint.so beside
 * libcupti) when it could be flagged: source lines on, not the stall run,
 * not a library's kernel, not flagged yet.  At the launch's EXIT, once its
 * values have flagged it and a second run is worth it (ga_sass_replay_worth:
 * a rule that reads opcodes flagged it, or --source, or
 * GA_ENV_SOURCE_REPLAY=all), the memory is restored to what the launch found
 * and the launch is made again with SASS metrics: the program goes on from
 * the state the second run left, as after one run of the kernel.  Other
 * kernels drop the checkpoint and wait for a later launch, as before: a
 * second run costs a patched launch (tens of ms), which the overhead
 * bounds cannot spare for every flagged kernel.  The copy is made only
 * while the memory in use fits twice on the GPU with 512 MiB to spare (a
 * device copy; the library would otherwise fall back to host memory): past
 * that a note says so once.  GA_ENV_SOURCE_REPLAY=0 turns this off.
 *
 * The second launch goes through the driver API like the first; this
 * thread's callbacks ignore it (ga_sass_replaying), as the first launch's
 * EXIT still holds inject.c's lock. */
#include <dlfcn.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cuda.h>
#include <cupti.h>

#include "collect.h"
#include "protocol.h"
#include "sass.h"
#include "sassint.h"

/* cupti_checkpoint.h declares these inside a C++ namespace, with C
 * linkage: the same layout, for C. */
typedef struct {
	size_t structSize;
	CUcontext ctx;
	size_t reserveDeviceMB;
	size_t reserveHostMB;
	uint8_t allowOverwrite;
	uint8_t optimizations;
	void *pPriv;
} ckpt_handle;
typedef CUptiResult (*ckpt_fn)(ckpt_handle *);

static struct {
	int tried, broken, noted_fail, noted_fit;
	ckpt_fn save, restore, release;
	ckpt_handle h;
	int held;                 /* h holds a saved checkpoint */
} ck;

static __thread int replaying;

int ga_sass_replaying(void)
{
	return replaying;
}

/* libcheckpoint.so: beside libcupti first, then wherever the loader finds it. */
static int load(void)
{
	Dl_info info;
	void *lib = NULL;

	if (ck.tried)
		return ck.broken ? -1 : 0;
	ck.tried = 1;
	ck.broken = 1;
	if (dladdr((void *)cuptiGetVersion, &info) && info.dli_fname) {
		const char *slash = strrchr(info.dli_fname, '/');
		if (slash) {
			char *path = ga_xasprintf("%.*s/libcheckpoint.so",
			                          (int)(slash - info.dli_fname), info.dli_fname);
			lib = dlopen(path, RTLD_NOW | RTLD_LOCAL);
			free(path);
		}
	}
	if (!lib)
		lib = dlopen("libcheckpoint.so", RTLD_NOW | RTLD_LOCAL);
	if (!lib) {
		sass_note("CUPTI's checkpoint library (libcheckpoint.so) was not found beside "
		          "libcupti: kernels launched once get no source lines");
		return -1;
	}
	ck.save = (ckpt_fn)dlsym(lib, "cuptiCheckpointSave");
	ck.restore = (ckpt_fn)dlsym(lib, "cuptiCheckpointRestore");
	ck.release = (ckpt_fn)dlsym(lib, "cuptiCheckpointFree");
	if (!ck.save || !ck.restore || !ck.release) {
		sass_note("libcheckpoint.so lacks cuptiCheckpointSave/Restore/Free: kernels "
		          "launched once get no source lines");
		return -1;
	}
	ck.broken = 0;
	return 0;
}

int ga_sass_replay_prepare(CUcontext ctx, uint32_t ctx_uid, const char *mangled, const char *name)
{
	if (ck.held || !mangled || !ga_sass_replay_possible() ||
	    !ga_sass_could_flag(mangled, name, ctx_uid) || load() != 0)
		return -1;
	/* The copy goes to device memory while it fits there (reserves of 0:
	 * the checkpoint library falls back to host memory, then files, which
	 * is slow): here it must fit beside what is in use, with 512 MiB left.
	 * (Asking for no host memory, reserveHostMB = -1, with 512 MiB of
	 * device memory reserved, was refused as an invalid parameter by CUDA
	 * 13.0's library on the H200; all reserves at 0 work.) */
	size_t free_b = 0, total_b = 0;
	if (cuMemGetInfo(&free_b, &total_b) != CUDA_SUCCESS || total_b - free_b + (512UL << 20) > free_b) {
		if (!ck.noted_fit++)
			sass_note("%.1f GiB of the GPU's %.1f GiB are in use, too much to copy aside: "
			          "kernels launched once get no source lines (a kernel launched again "
			          "gets them at its next launch)",
			          (double)(total_b - free_b) / (1 << 30), (double)total_b / (1 << 30));
		return -1;
	}
	/* Work still running on other streams would write memory the copy has
	 * already taken, and the restore would undo it: the copy starts once
	 * the context is idle (the range profiler's replay waits for that too). */
	if (cuCtxSynchronize() != CUDA_SUCCESS)
		return -1;
	memset(&ck.h, 0, sizeof(ck.h));
	ck.h.structSize = offsetof(ckpt_handle, pPriv) + sizeof(ck.h.pPriv);
	ck.h.ctx = ctx;
	double t0 = ga_mono_seconds();
	CUptiResult r = ck.save(&ck.h);
	sass_logf("cuptiCheckpointSave -> %d (%.6f s, %.1f GiB in use)", (int)r, ga_mono_seconds() - t0,
	          (double)(total_b - free_b) / (1 << 30));
	if (r != CUPTI_SUCCESS) {
		if (!ck.noted_fail++)
			sass_note("saving device memory before %s failed (%s): kernels launched once "
			          "get no source lines", mangled, ga_cupti_result_string(r));
		ck.release(&ck.h);   /* whatever the failed save kept */
		return -1;
	}
	ck.held = 1;
	return 0;
}

/* The launch of the callback's parameters, made again. */
static CUresult relaunch(CUpti_CallbackId cbid, const void *params)
{
	switch (cbid) {
	case CUPTI_DRIVER_TRACE_CBID_cuLaunchKernel:
	case CUPTI_DRIVER_TRACE_CBID_cuLaunchKernel_ptsz: {
		const cuLaunchKernel_params *p = params;
		CUstream st = p->hStream;
		if (!st && cbid == CUPTI_DRIVER_TRACE_CBID_cuLaunchKernel_ptsz)
			st = CU_STREAM_PER_THREAD;
		return cuLaunchKernel(p->f, p->gridDimX, p->gridDimY, p->gridDimZ, p->blockDimX,
		                      p->blockDimY, p->blockDimZ, p->sharedMemBytes, st,
		                      p->kernelParams, p->extra);
	}
	case CUPTI_DRIVER_TRACE_CBID_cuLaunchCooperativeKernel:
	case CUPTI_DRIVER_TRACE_CBID_cuLaunchCooperativeKernel_ptsz: {
		const cuLaunchCooperativeKernel_params *p = params;
		CUstream st = p->hStream;
		if (!st && cbid == CUPTI_DRIVER_TRACE_CBID_cuLaunchCooperativeKernel_ptsz)
			st = CU_STREAM_PER_THREAD;
		return cuLaunchCooperativeKernel(p->f, p->gridDimX, p->gridDimY, p->gridDimZ,
		                                 p->blockDimX, p->blockDimY, p->blockDimZ,
		                                 p->sharedMemBytes, st, p->kernelParams);
	}
	case CUPTI_DRIVER_TRACE_CBID_cuLaunchKernelEx:
	case CUPTI_DRIVER_TRACE_CBID_cuLaunchKernelEx_ptsz: {
		const cuLaunchKernelEx_params *p = params;
		return cuLaunchKernelEx(p->config, p->f, p->kernelParams, p->extra);
	}
	default:
		return CUDA_ERROR_NOT_SUPPORTED;
	}
}

void ga_sass_replay_finish(CUcontext ctx, CUdevice dev, uint32_t ctx_uid, const char *mangled,
                           const unsigned grid[3], const unsigned block[3],
                           CUpti_CallbackId cbid, const void *params)
{
	if (!ck.held)
		return;
	ck.held = 0;
	/* SASS metrics on before the memory goes back: once restored, the
	 * launch must run again. */
	if (params && ga_sass_replay_worth(mangled, ctx_uid) &&
	    ga_sass_begin(ctx, dev, ctx_uid, mangled, grid, block) == 0) {
		CUresult cr = CUDA_ERROR_NOT_SUPPORTED;
		double t0 = ga_mono_seconds();
		CUptiResult rr = ck.restore(&ck.h);
		sass_logf("cuptiCheckpointRestore -> %d (%.6f s)", (int)rr, ga_mono_seconds() - t0);
		if (rr == CUPTI_SUCCESS) {
			replaying = 1;
			cr = relaunch(cbid, params);
			replaying = 0;
			sass_logf("replay of %s -> %d", mangled, (int)cr);
			if (cr != CUDA_SUCCESS)
				sass_note("launching %s again for its source lines failed (CUDA error %d): "
				          "its results are those of the memory before it ran", mangled,
				          (int)cr);
		}
		ga_sass_end_replay();
	}
	ck.release(&ck.h);
}
