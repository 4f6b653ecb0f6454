/* nvtxapp.c: what NVTX (v3, the header-only NVTX that PyTorch builds in)
 * does with the library named by NVTX_INJECTION64_PATH, for
 * tests/cli/nvtx.sh: load it, find InitializeInjectionNvtx2 and call it
 * with NVTX's export table; NVTX sends its calls to the library only when
 * that returns non-zero.  Needs no GPU (CUPTI takes NVTX's table at once
 * and fills in its functions when a subscriber enables NVTX callbacks).
 * Prints "InitializeInjectionNvtx2: N", or why there is none; exits 0. */
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>

#include <nvtx3/nvToolsExt.h>

typedef int (*init_fn)(NvtxGetExportTableFunc_t);

int main(void)
{
	const char *path = getenv("NVTX_INJECTION64_PATH");
	void *lib;
	init_fn init;

	if (!path || !*path) {
		puts("no NVTX_INJECTION64_PATH");
		return 0;
	}
	if (!(lib = dlopen(path, RTLD_LAZY))) {
		printf("cannot load: %s\n", dlerror());
		return 0;
	}
	if (!(init = (init_fn)dlsym(lib, "InitializeInjectionNvtx2"))) {
		puts("no InitializeInjectionNvtx2");
		return 0;
	}
	printf("InitializeInjectionNvtx2: %d\n", init(NVTX_VERSIONED_IDENTIFIER(nvtxGetExportTable)));
	return 0;
}
