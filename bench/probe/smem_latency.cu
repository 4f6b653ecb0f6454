// Shared-memory load latency against the bank-conflict degree, for the
// latency term of rules/shared-bank-conflicts.yaml.
//
// One warp chases pointers through shared memory: each lane's word holds
// its own byte offset, so every load depends on the one before it and the
// loop's time per step is one LDS's latency.  Lane l reads word l * S; a
// stride of S words puts gcd(S, 32) lanes in each bank used, so the load
// takes that many wavefronts.  The slope of cycles per step against the
// wavefronts is what each extra wavefront adds to a load's latency; the
// intercept is the conflict-free latency.
//
//   nvcc -O3 -arch=sm_90 -o smem_latency bench/probe/smem_latency.cu
//   ./smem_latency
#include <cstdio>
#include <cuda_runtime.h>

#define STEPS 4096

__global__ void chase(int stride, long long *cycles, int *sink)
{
    __shared__ int s[32 * 32];
    int lane = threadIdx.x;
    for (int i = lane; i < 32 * 32; i += 32)
        s[i] = 0;
    __syncwarp();
    int word = (lane * stride) % (32 * 32);
    s[word] = word * 4;
    __syncwarp();
    int off = word * 4;
    const volatile char *base = (const volatile char *)s;
    long long t0 = clock64();
    for (int k = 0; k < STEPS; k++)
        off = *(const volatile int *)(base + off);
    long long t1 = clock64();
    if (lane == 0)
        *cycles = t1 - t0;
    sink[lane] = off;
}

int main(void)
{
    long long *d_cycles, h_cycles;
    int *d_sink;
    cudaMalloc(&d_cycles, sizeof(*d_cycles));
    cudaMalloc(&d_sink, 32 * sizeof(int));
    printf("stride ways cycles_per_load\n");
    for (int stride = 1; stride <= 32; stride *= 2) {
        double best = 1e30;
        for (int rep = 0; rep < 5; rep++) {
            chase<<<1, 32>>>(stride, d_cycles, d_sink);
            cudaMemcpy(&h_cycles, d_cycles, sizeof(h_cycles), cudaMemcpyDeviceToHost);
            double c = (double)h_cycles / STEPS;
            if (c < best)
                best = c;
        }
        printf("%d %d %.2f\n", stride, stride, best);
    }
    cudaError_t e = cudaGetLastError();
    if (e != cudaSuccess) {
        fprintf(stderr, "smem_latency: %s\n", cudaGetErrorString(e));
        return 1;
    }
    return 0;
}
