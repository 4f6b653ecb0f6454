/* launchinfo.c: what a launch is, from its driver callback: the kernel's
 * name, grid, block, registers, shared memory, theoretical occupancy and
 * the shared object that launched it. */
#include <dlfcn.h>
#include <execinfo.h>
#include <math.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "launchinfo.h"
#include "nvtx.h"
#include "rangeprof.h"

/* The C++ ABI demangler lives in libstdc++, which every CUDA C++ program
 * loads; look it up at run time so a C program works too (a link-time
 * dependency that fails to resolve would make the driver skip us silently). */
typedef char *(*demangle_fn)(const char *mangled, char *buf, size_t *len, int *status);
static demangle_fn cxa_demangle;

char *demangle(const char *mangled)
{
	int status = -1;
	char *d = NULL;
	if (!cxa_demangle) {
		cxa_demangle = (demangle_fn)dlsym(RTLD_DEFAULT, "__cxa_demangle");
		if (!cxa_demangle) {
			void *h = dlopen("libstdc++.so.6", RTLD_NOW | RTLD_LOCAL);
			if (h)
				cxa_demangle = (demangle_fn)dlsym(h, "__cxa_demangle");
		}
	}
	if (cxa_demangle && mangled && mangled[0] == '_' && mangled[1] == 'Z')
		d = cxa_demangle(mangled, NULL, NULL, &status);
	if (d && status == 0) {
		char *copy = ga_xstrdup(d);
		free(d);
		return copy;
	}
	free(d);
	return ga_xstrdup(mangled ? mangled : "?");
}


static void occupancy(ctx_state *cs, CUfunction f, ga_launch *l)
{
	const ga_device *d = &cs->dev;
	int threads = (int)(l->block[0] * l->block[1] * l->block[2]);
	int warps = (threads + 31) / 32;
	int max_warps = d->max_threads_per_sm / 32;
	int blocks = 0;
	int reserved = dev_attr(cs->cudev, CU_DEVICE_ATTRIBUTE_RESERVED_SHARED_MEMORY_PER_BLOCK);

	if (warps <= 0 || max_warps <= 0)
		return;
	l->occ_limit_blocks = d->max_blocks_per_sm;
	l->occ_limit_warps = max_warps / warps;
	if (l->registers > 0) {
		/* Registers are allocated per warp in units of 256, from each of
		 * the four SM sub-partitions' quarter of the register file. */
		int per_warp = ((l->registers * 32 + 255) / 256) * 256;
		int warps_per_part = (d->regs_per_sm / 4) / per_warp;
		l->occ_limit_registers = (warps_per_part * 4) / warps;
	} else {
		l->occ_limit_registers = d->max_blocks_per_sm;
	}
	long smem = l->smem_static + l->smem_dynamic;
	if (smem > 0)
		l->occ_limit_smem = (int)(d->smem_per_sm / (smem + reserved));
	else
		l->occ_limit_smem = d->max_blocks_per_sm;

	if (cuOccupancyMaxActiveBlocksPerMultiprocessor(&blocks, f, threads, (size_t)l->smem_dynamic)
	    != CUDA_SUCCESS) {
		CUfunction fn;
		if (cuKernelGetFunction(&fn, (CUkernel)f) != CUDA_SUCCESS ||
		    cuOccupancyMaxActiveBlocksPerMultiprocessor(&blocks, fn, threads,
		                                                (size_t)l->smem_dynamic) != CUDA_SUCCESS) {
			int m = l->occ_limit_blocks;
			if (l->occ_limit_warps < m) m = l->occ_limit_warps;
			if (l->occ_limit_registers < m) m = l->occ_limit_registers;
			if (l->occ_limit_smem < m) m = l->occ_limit_smem;
			blocks = m;
		}
	}
	l->occ_theoretical_pct = 100.0 * blocks * warps / max_warps;
	if (l->occ_theoretical_pct > 100.0)
		l->occ_theoretical_pct = 100.0;
	l->occ_limiter = ga_xstrdup(ga_launch_limiter(l));
}

static int func_attr(CUfunction f, CUdevice dev, CUfunction_attribute a)
{
	int v = 0;
	if (cuFuncGetAttribute(&v, a, f) == CUDA_SUCCESS)
		return v;
	if (cuKernelGetAttribute(&v, a, (CUkernel)f, dev) == CUDA_SUCCESS)
		return v;
	return 0;
}

int launch_params(CUpti_CallbackId cbid, const void *params, CUfunction *f,
                  unsigned grid[3], unsigned block[3], unsigned *smem, CUstream *stream)
{
	switch (cbid) {
	case CUPTI_DRIVER_TRACE_CBID_cuLaunchKernel:
	case CUPTI_DRIVER_TRACE_CBID_cuLaunchKernel_ptsz: {
		const cuLaunchKernel_params *p = params;
		*f = p->f;
		grid[0] = p->gridDimX; grid[1] = p->gridDimY; grid[2] = p->gridDimZ;
		block[0] = p->blockDimX; block[1] = p->blockDimY; block[2] = p->blockDimZ;
		*smem = p->sharedMemBytes;
		*stream = p->hStream;
		return 0;
	}
	case CUPTI_DRIVER_TRACE_CBID_cuLaunchCooperativeKernel:
	case CUPTI_DRIVER_TRACE_CBID_cuLaunchCooperativeKernel_ptsz: {
		const cuLaunchCooperativeKernel_params *p = params;
		*f = p->f;
		grid[0] = p->gridDimX; grid[1] = p->gridDimY; grid[2] = p->gridDimZ;
		block[0] = p->blockDimX; block[1] = p->blockDimY; block[2] = p->blockDimZ;
		*smem = p->sharedMemBytes;
		*stream = p->hStream;
		return 0;
	}
	case CUPTI_DRIVER_TRACE_CBID_cuLaunchKernelEx:
	case CUPTI_DRIVER_TRACE_CBID_cuLaunchKernelEx_ptsz: {
		const cuLaunchKernelEx_params *p = params;
		const CUlaunchConfig *c = p->config;
		if (!c)
			return -1;
		*f = p->f;
		grid[0] = c->gridDimX; grid[1] = c->gridDimY; grid[2] = c->gridDimZ;
		block[0] = c->blockDimX; block[1] = c->blockDimY; block[2] = c->blockDimZ;
		*smem = c->sharedMemBytes;
		*stream = c->hStream;
		return 0;
	}
	default:
		return -1;
	}
}

/* The object file whose code made the launch: the first frame of the
 * launching thread's stack that is not in this library, the driver, the
 * runtime or CUPTI.  That is the library a kernel comes from
 * (libtorch_cuda.so, libcublasLt.so.13, a Triton launcher) or the program
 * itself, whichever names it best for its owner (rules/owners.yaml
 * `modules:`).  A basename; NULL when the stack cannot be walked.  Cached
 * per function: the walk costs tens of microseconds. */
#define ORIGIN_SLOTS 4096   /* distinct functions; a PyTorch run measures hundreds */
static struct {
	CUfunction f;
	char *origin;
} origins[ORIGIN_SLOTS];
static pthread_mutex_t origin_lock = PTHREAD_MUTEX_INITIALIZER;

static int runtime_object(const char *base)
{
	static const char *const skip[] = {"libcuda.so", "libcupti.so", "libcudart.so",
	                                   "libcudadebugger.so", "libgpuadvise"};
	for (size_t i = 0; i < GA_ARRAY_LEN(skip); i++)
		if (strncmp(base, skip[i], strlen(skip[i])) == 0)
			return 1;
	return 0;
}

static char *walk_origin(void)
{
	void *pc[64];
	int n = backtrace(pc, (int)GA_ARRAY_LEN(pc));
	Dl_info self;
	const char *self_name = dladdr((void *)walk_origin, &self) ? self.dli_fname : NULL;
	for (int i = 1; i < n; i++) {
		Dl_info di;
		if (!dladdr(pc[i], &di) || !di.dli_fname)
			continue;
		if (self_name && strcmp(di.dli_fname, self_name) == 0)
			continue;
		const char *base = strrchr(di.dli_fname, '/');
		base = base ? base + 1 : di.dli_fname;
		if (runtime_object(base))
			continue;
		if (!*base) {
			/* the main program: dladdr names it by argv[0] or not at all */
			char exe[4096];
			ssize_t k = readlink("/proc/self/exe", exe, sizeof(exe) - 1);
			if (k <= 0)
				return NULL;
			exe[k] = '\0';
			base = strrchr(exe, '/');
			return ga_xstrdup(base ? base + 1 : exe);
		}
		return ga_xstrdup(base);
	}
	return NULL;
}

static char *launch_origin(CUfunction f)
{
	size_t h = ((uintptr_t)f >> 4) % ORIGIN_SLOTS;
	char *out = NULL;
	pthread_mutex_lock(&origin_lock);
	for (size_t k = 0; k < ORIGIN_SLOTS; k++) {
		size_t i = (h + k) % ORIGIN_SLOTS;
		if (origins[i].f == f) {
			out = origins[i].origin ? ga_xstrdup(origins[i].origin) : NULL;
			break;
		}
		if (!origins[i].f) {
			origins[i].f = f;
			origins[i].origin = walk_origin();
			out = origins[i].origin ? ga_xstrdup(origins[i].origin) : NULL;
			break;
		}
	}
	pthread_mutex_unlock(&origin_lock);
	return out;
}

void launch_free(ga_launch *l)
{
	free(l->mangled);
	free(l->module);
	free(l->name);
	free(l->occ_limiter);
	free(l->values);
	free(l->nvtx);
	memset(l, 0, sizeof(*l));
}

void launch_meta(ga_launch *l, ctx_state *cs, const launch_args *a, uint32_t ctx_uid,
                 char *name, int pid, long index)
{
	memset(l, 0, sizeof(*l));
	l->mangled = ga_xstrdup(a->mangled);
	l->name = name ? name : demangle(a->mangled);
	l->pid = pid;
	l->index = index;
	memcpy(l->grid, a->grid, sizeof(l->grid));
	memcpy(l->block, a->block, sizeof(l->block));
	l->registers = func_attr(a->f, cs->cudev, CU_FUNC_ATTRIBUTE_NUM_REGS);
	l->smem_static = func_attr(a->f, cs->cudev, CU_FUNC_ATTRIBUTE_SHARED_SIZE_BYTES);
	l->smem_dynamic = a->smem;
	{
		unsigned long long sid = 0;
		if (cuStreamGetId(a->stream, &sid) == CUDA_SUCCESS)
			l->stream = sid;
	}
	l->context = (int)ctx_uid;
	l->duration_ns = NAN;
	l->range_ns = NAN;
	l->nvtx = ga_nvtx_path();
	l->module = launch_origin(a->f);
	occupancy(cs, a->f, l);
}

