// gpuadvise-demo-latency: CHAINS independent sums, each adding its own
// constant STEPS times in FP64 (out[g] = STEPS * c_g).
//
//   one_warp    132 blocks of 32 threads (one warp per SM on an H100, a
//               single warp per scheduler at best); each thread runs one
//               chain of STEPS dependent adds. Every add waits for the
//               previous one: the SMs are idle most of the time.
//   many_warps  the same adds spread over 32x more threads: each chain is
//               split across the 32 lanes of one warp, each lane keeps four
//               independent accumulators (ILP), and a shuffle reduction
//               combines them. 528 blocks of 256 threads fill the GPU.
//
// c_g is a multiple of 1/64 and every partial sum stays below 2^22, so all
// additions are exact in FP64 and both variants give identical results.
#include "common.h"

static const int CHAINS = 132 * 32;  // 4224
static const int STEPS = 1 << 20;    // adds per chain (multiple of 32 * 4)

__host__ __device__ inline double chain_step(int g) { return 1.0 + (double)(g % 64) / 64.0; }

__global__ void latency_one_warp(double *__restrict__ out, int steps)
{
    int g = blockIdx.x * blockDim.x + threadIdx.x;
    double c = chain_step(g);
    double acc = 0.0;
    for (int k = 0; k < steps; k++) acc += c;
    out[g] = acc;
}

// blockDim.x = 256: warp w of block b owns chain b * 8 + w.
__global__ void latency_many_warps(double *__restrict__ out, int steps)
{
    int lane = threadIdx.x % 32;
    int g = blockIdx.x * (blockDim.x / 32) + threadIdx.x / 32;
    double c = chain_step(g);
    double a0 = 0.0, a1 = 0.0, a2 = 0.0, a3 = 0.0;
    int per_lane = steps / 32; // this lane's share of the chain
    for (int k = 0; k < per_lane; k += 4) {
        a0 += c;
        a1 += c;
        a2 += c;
        a3 += c;
    }
    double v = (a0 + a1) + (a2 + a3);
#pragma unroll
    for (int offset = 16; offset > 0; offset >>= 1) v += __shfl_down_sync(0xFFFFFFFFu, v, offset);
    if (lane == 0) out[g] = v;
}

static double *d_out;

static void setup() { d_out = ga_dev_alloc<double>(CHAINS); }
static void clear() { ga_poison(d_out, CHAINS); }
static void teardown() { ga_dev_free(d_out); }

static void launch_one_warp() { latency_one_warp<<<CHAINS / 32, 32>>>(d_out, STEPS); }
static void launch_many_warps() { latency_many_warps<<<CHAINS / 8, 256>>>(d_out, STEPS); }

static bool check(char *detail, size_t len)
{
    std::vector<double> out = ga_from_dev(d_out, CHAINS);
    GaChecker ck(0.0, 0.0);
    for (int g = 0; g < CHAINS; g++) ck.add(g, out[g], (double)STEPS * chain_step(g));
    return ck.result(detail, len, "out");
}

static const GaVariant variants[] = {
    {"one_warp", "one warp per SM, each thread a single chain of dependent FP64 adds", launch_one_warp, check, nullptr},
    {"many_warps", "same adds over 32x more warps, 4 independent accumulators per thread", launch_many_warps, check, nullptr},
};

int main(int argc, char **argv)
{
    GaDemo demo = {"latency", setup, clear, teardown, variants, (int)(sizeof variants / sizeof variants[0])};
    return ga_demo_main(argc, argv, demo);
}
