/* fakecuda.c: a stand-in libcuda.so.1 for the command-line tests on
 * machines without an NVIDIA driver, so that gpuadvise runs a program (a
 * shell script) as it would on a GPU machine.  gpuadvise asks the driver
 * only two things before and after the run: cuInit and cuDeviceGetCount.
 * FAKECUDA_DEVICES=0 plays a driver that sees no GPU (CUDA_ERROR_NO_DEVICE,
 * 100, as the CUDA Driver API documents it). */
#include <stdlib.h>

int cuInit(unsigned flags);
int cuDeviceGetCount(int *count);

static int devices(void)
{
	const char *n = getenv("FAKECUDA_DEVICES");
	return n && *n ? atoi(n) : 1;
}

int cuInit(unsigned flags)
{
	(void)flags;
	return devices() > 0 ? 0 : 100;
}

int cuDeviceGetCount(int *count)
{
	*count = devices();
	return 0;
}
