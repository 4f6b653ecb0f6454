/* sassreplay.c: source lines of a kernel launched once (see sass.h).
 *
 * sass.c measures a flagged kernel's next launch with SASS metrics.  A
 * benchmark, a test or an inference run launches most kernels once, and
 * such a kernel got no source lines and no opcode counts.  So, under full
 * diagnosis, a kernel's first launch is preceded by a checkpoint of the
 * context's device memory (ckpt.c) when it could be flagged: source lines
 * on, not the stall run, not a library's kernel, not flagged yet.  At the
 * launch's EXIT, once its values have flagged it and a second run is worth
 * it (ga_sass_replay_worth: a rule that reads opcodes flagged it, or
 * --source, or GA_ENV_SOURCE_REPLAY=all), the memory is restored to what
 * the launch found and the launch is made again with SASS metrics: the
 * program goes on from the state the second run left, as after one run of
 * the kernel.  Other
 * kernels drop the checkpoint and wait for a later launch, as before: a
 * second run costs a patched launch (tens of ms), which the overhead
 * bounds cannot spare for every flagged kernel.  The copy is made only
 * while the memory in use fits twice on the GPU with 512 MiB to spare (a
 * device copy; the library would otherwise fall back to host memory): past
 * that a note says so once.  GA_ENV_SOURCE_REPLAY=0 turns this off.
 *
 * The second launch goes through the driver API like the first; this
 * thread's callbacks ignore it (ga_ckpt_replaying), as the first launch's
 * EXIT still holds inject.c's lock. */
#include <stddef.h>
#include <stdint.h>

#include <cuda.h>
#include <cupti.h>

#include "ckpt.h"
#include "collect.h"
#include "protocol.h"
#include "sass.h"
#include "sassint.h"

static int noted[GA_CKPT_FAILED + 1];

int ga_sass_replay_prepare(CUcontext ctx, uint32_t ctx_uid, const char *mangled, const char *name)
{
	const char *why = NULL;
	ga_ckpt_status st;

	if (!mangled || !ga_sass_replay_possible() || !ga_sass_could_flag(mangled, name, ctx_uid))
		return -1;
	st = ga_ckpt_save(ctx, &why);
	if (st == GA_CKPT_OK)
		return 0;
	if (!noted[st]++)
		sass_note("%s: kernels launched once get no source lines%s", why ? why : "?",
		          st == GA_CKPT_NO_ROOM ? " (a kernel launched again gets them at its next "
		                                  "launch)" : "");
	return -1;
}

void ga_sass_replay_finish(CUcontext ctx, CUdevice dev, uint32_t ctx_uid, const char *mangled,
                           const unsigned grid[3], const unsigned block[3],
                           CUpti_CallbackId cbid, const void *params)
{
	if (!ga_ckpt_held())
		return;
	/* SASS metrics on before the memory goes back: once restored, the
	 * launch must run again. */
	if (params && ga_sass_replay_worth(mangled, ctx_uid) &&
	    ga_sass_begin(ctx, dev, ctx_uid, mangled, grid, block) == 0) {
		if (ga_ckpt_restore() == 0) {
			CUresult cr = ga_ckpt_relaunch(cbid, params);
			sass_logf("replay of %s -> %d", mangled, (int)cr);
			if (cr != CUDA_SUCCESS)
				sass_note("launching %s again for its source lines failed (CUDA error %d): "
				          "its results are those of the memory before it ran", mangled,
				          (int)cr);
		}
		ga_sass_end_replay();
	}
	ga_ckpt_release();
}
