// gpuadvise-demo-reduction: each block of 256 threads sums its 256 input
// elements into one partial sum (the host adds the partial sums up).
//
//   interleaved  tree in shared memory with `tid % (2*s) == 0`: active threads
//                are scattered over every warp (divergence), the modulo is
//                slow, and the strided shared accesses conflict on banks
//   sequential   `tid < s` with halving s: active threads are contiguous, so
//                whole warps retire and accesses are conflict-free
//   shuffle      __shfl_down_sync sums within each warp in registers; shared
//                memory only carries the 8 per-warp sums
//
// The inputs are multiples of 1/8 below 2, so every partial sum is exact in
// FP32 whatever the order of additions: the check compares bit for bit.
#include "common.h"

#define RED_BLOCK 256
static const unsigned NELEM = 64u << 20; // 64M floats (256 MB), multiple of RED_BLOCK
static const unsigned NBLOCKS = NELEM / RED_BLOCK;

__global__ void reduction_interleaved(const float *__restrict__ in, float *__restrict__ partial, unsigned n)
{
    __shared__ float s[RED_BLOCK];
    unsigned tid = threadIdx.x;
    unsigned i = blockIdx.x * RED_BLOCK + tid;
    s[tid] = i < n ? in[i] : 0.0f;
    __syncthreads();
    for (unsigned stride = 1; stride < blockDim.x; stride *= 2) {
        if (tid % (2 * stride) == 0) s[tid] += s[tid + stride];
        __syncthreads();
    }
    if (tid == 0) partial[blockIdx.x] = s[0];
}

__global__ void reduction_sequential(const float *__restrict__ in, float *__restrict__ partial, unsigned n)
{
    __shared__ float s[RED_BLOCK];
    unsigned tid = threadIdx.x;
    unsigned i = blockIdx.x * RED_BLOCK + tid;
    s[tid] = i < n ? in[i] : 0.0f;
    __syncthreads();
    for (unsigned stride = blockDim.x / 2; stride > 0; stride >>= 1) {
        if (tid < stride) s[tid] += s[tid + stride];
        __syncthreads();
    }
    if (tid == 0) partial[blockIdx.x] = s[0];
}

__device__ __forceinline__ float warp_sum(float v)
{
#pragma unroll
    for (int offset = 16; offset > 0; offset >>= 1) v += __shfl_down_sync(0xFFFFFFFFu, v, offset);
    return v;
}

__global__ void reduction_shuffle(const float *__restrict__ in, float *__restrict__ partial, unsigned n)
{
    __shared__ float warp_sums[RED_BLOCK / 32];
    unsigned tid = threadIdx.x, lane = tid % 32, warp = tid / 32;
    unsigned i = blockIdx.x * RED_BLOCK + tid;
    float v = warp_sum(i < n ? in[i] : 0.0f);
    if (lane == 0) warp_sums[warp] = v;
    __syncthreads();
    if (warp == 0) {
        v = warp_sum(lane < RED_BLOCK / 32 ? warp_sums[lane] : 0.0f);
        if (lane == 0) partial[blockIdx.x] = v;
    }
}

static std::vector<float> h_in;
static std::vector<double> h_block_sums;
static float *d_in, *d_partial;

static void setup()
{
    h_in.resize(NELEM);
    for (unsigned i = 0; i < NELEM; i++) h_in[i] = (float)(ga_hash(i + 4242u) & 15u) * 0.125f;
    h_block_sums.assign(NBLOCKS, 0.0);
    for (unsigned i = 0; i < NELEM; i++) h_block_sums[i / RED_BLOCK] += h_in[i];
    d_in = ga_dev_alloc<float>(NELEM);
    d_partial = ga_dev_alloc<float>(NBLOCKS);
    ga_to_dev(d_in, h_in);
}

static void clear() { ga_poison(d_partial, NBLOCKS); }

static void teardown()
{
    ga_dev_free(d_in);
    ga_dev_free(d_partial);
}

static void launch_interleaved() { reduction_interleaved<<<NBLOCKS, RED_BLOCK>>>(d_in, d_partial, NELEM); }
static void launch_sequential() { reduction_sequential<<<NBLOCKS, RED_BLOCK>>>(d_in, d_partial, NELEM); }
static void launch_shuffle() { reduction_shuffle<<<NBLOCKS, RED_BLOCK>>>(d_in, d_partial, NELEM); }

static bool check(char *detail, size_t len)
{
    std::vector<float> p = ga_from_dev(d_partial, NBLOCKS);
    GaChecker ck(0.0, 0.0);
    double total = 0.0, ref_total = 0.0;
    for (unsigned b = 0; b < NBLOCKS; b++) {
        ck.add(b, p[b], h_block_sums[b]);
        total += p[b];
        ref_total += h_block_sums[b];
    }
    if (!ck.ok()) return ck.result(detail, len, "partial");
    if (total != ref_total) {
        snprintf(detail, len, "total %.17g, expected %.17g", total, ref_total);
        return false;
    }
    return true;
}

static const GaVariant variants[] = {
    {"interleaved", "shared-memory tree with tid % (2*s): divergent warps, bank conflicts, slow modulo", launch_interleaved, check, nullptr},
    {"sequential", "shared-memory tree with tid < s: contiguous active threads, no conflicts", launch_sequential, check, nullptr},
    {"shuffle", "warp sums with __shfl_down_sync, shared memory only for 8 per-warp sums", launch_shuffle, check, nullptr},
};

int main(int argc, char **argv)
{
    GaDemo demo = {"reduction", setup, clear, teardown, variants, (int)(sizeof variants / sizeof variants[0])};
    return ga_demo_main(argc, argv, demo);
}
