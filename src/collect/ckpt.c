/* ckpt.c: device memory saved, put back, and a launch made again (see
 * ckpt.h). */
#include <dlfcn.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ckpt.h"
#include "collect.h"
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
	int tried, broken;
	const char *broken_msg;
	ckpt_fn save, restore, release;
	ckpt_handle h;
	int held;
	char msg[256];
} ck;

static __thread int replaying;

int ga_ckpt_replaying(void)
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
		ck.broken_msg = "CUPTI's checkpoint library (libcheckpoint.so) was not found "
		                "beside libcupti";
		return -1;
	}
	ck.save = (ckpt_fn)dlsym(lib, "cuptiCheckpointSave");
	ck.restore = (ckpt_fn)dlsym(lib, "cuptiCheckpointRestore");
	ck.release = (ckpt_fn)dlsym(lib, "cuptiCheckpointFree");
	if (!ck.save || !ck.restore || !ck.release) {
		ck.broken_msg = "libcheckpoint.so lacks cuptiCheckpointSave/Restore/Free";
		return -1;
	}
	ck.broken = 0;
	return 0;
}

ga_ckpt_status ga_ckpt_save(CUcontext ctx, const char **why_msg)
{
	size_t free_b = 0, total_b = 0;

	if (why_msg)
		*why_msg = NULL;
	if (ck.held)
		return GA_CKPT_OK;
	if (load() != 0) {
		if (why_msg)
			*why_msg = ck.broken_msg;
		return GA_CKPT_NO_LIBRARY;
	}
	/* The copy goes to device memory while it fits there (reserves of 0:
	 * the checkpoint library falls back to host memory, then files, which
	 * is slow): here it must fit beside what is in use, with 512 MiB left.
	 * (Asking for no host memory, reserveHostMB = -1, with 512 MiB of
	 * device memory reserved, was refused as an invalid parameter by CUDA
	 * 13.0's library on the H200; all reserves at 0 work.) */
	if (cuMemGetInfo(&free_b, &total_b) != CUDA_SUCCESS ||
	    total_b - free_b + (512UL << 20) > free_b) {
		snprintf(ck.msg, sizeof(ck.msg),
		         "%.1f GiB of the GPU's %.1f GiB are in use, too much to copy aside",
		         (double)(total_b - free_b) / (1 << 30), (double)total_b / (1 << 30));
		if (why_msg)
			*why_msg = ck.msg;
		return GA_CKPT_NO_ROOM;
	}
	if (cuCtxSynchronize() != CUDA_SUCCESS) {
		if (why_msg)
			*why_msg = "the context could not be synchronized before saving its memory";
		return GA_CKPT_FAILED;
	}
	memset(&ck.h, 0, sizeof(ck.h));
	ck.h.structSize = offsetof(ckpt_handle, pPriv) + sizeof(ck.h.pPriv);
	ck.h.ctx = ctx;
	double t0 = ga_mono_seconds();
	CUptiResult r = ck.save(&ck.h);
	sass_logf("cuptiCheckpointSave -> %d (%.6f s, %.1f GiB in use)", (int)r, ga_mono_seconds() - t0,
	          (double)(total_b - free_b) / (1 << 30));
	if (r != CUPTI_SUCCESS) {
		snprintf(ck.msg, sizeof(ck.msg), "saving device memory failed (%s)",
		         ga_cupti_result_string(r));
		if (why_msg)
			*why_msg = ck.msg;
		ck.release(&ck.h);   /* whatever the failed save kept */
		return GA_CKPT_FAILED;
	}
	ck.held = 1;
	return GA_CKPT_OK;
}

int ga_ckpt_held(void)
{
	return ck.held;
}

int ga_ckpt_restore(void)
{
	if (!ck.held)
		return -1;
	double t0 = ga_mono_seconds();
	CUptiResult r = ck.restore(&ck.h);
	sass_logf("cuptiCheckpointRestore -> %d (%.6f s)", (int)r, ga_mono_seconds() - t0);
	return r == CUPTI_SUCCESS ? 0 : -1;
}

void ga_ckpt_release(void)
{
	if (!ck.held)
		return;
	ck.held = 0;
	ck.release(&ck.h);
}

static CUresult launch_again(CUpti_CallbackId cbid, const void *params)
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

CUresult ga_ckpt_relaunch(CUpti_CallbackId cbid, const void *params)
{
	CUresult r;

	if (!params)
		return CUDA_ERROR_INVALID_VALUE;
	replaying = 1;
	r = launch_again(cbid, params);
	replaying = 0;
	return r;
}
