// Validation pairs from the steps of a parallel sum reduction, as published
// in Mark Harris, "Optimizing Parallel Reduction in CUDA" (NVIDIA, 2007),
// the whitepaper of the reduction sample of NVIDIA's cuda-samples
// (Samples/2_Concepts_and_Techniques/reduction). The whitepaper takes one
// kernel through seven versions, each fixing the problem it names in the
// one before; the sample's reduce0 ... reduce6 are those seven. Each
// pair below is one step: the slow side is version k, the fast side version
// k + 1, and the label is the rule whose fix text is that step's change (or
// none). The kernels are written here from the whitepaper's description,
// in the sample's setting: a sum of 32-bit ints (the sample's default type),
// 256 threads per block (its default), loops bounded by blockDim.x, and each
// block writing one partial sum (the sample then reduces the partial sums
// again; the pairs time the first, large pass only). Where the whitepaper
// and the sample differ, the sample is followed and the comment says so.
//
// Input: 64M ints in [0, 16), 256 MB, so that the fastest version streams
// for about 60 us on an H200 and the slowest takes a few hundred. The check
// adds the partial sums on the host (exact: integer sums) and compares the
// total with the input's.
#include "../accuracy/pairs.h"

namespace reduction {
const unsigned N = 1u << 26, BLOCK = 256;
int *d_in, *d_part;
unsigned parts_written; // partial sums the last launch wrote
long long ref_total;

// Version 1 (whitepaper kernel 1, sample reduce0): interleaved addressing,
// the working threads picked with tid % (2s), so every warp stays active on
// every level with most of its lanes idle, and the modulo by a run-time
// value is a division sequence per thread per level.
__global__ void v1_interleaved_modulo(const int *__restrict__ in, int *__restrict__ part, unsigned n)
{
    extern __shared__ int acc[];
    unsigned tid = threadIdx.x, idx = blockIdx.x * blockDim.x + tid;
    acc[tid] = idx < n ? in[idx] : 0;
    __syncthreads();
    for (unsigned step = 1; step < blockDim.x; step <<= 1) {
        if (tid % (2 * step) == 0) acc[tid] += acc[tid + step];
        __syncthreads();
    }
    if (tid == 0) part[blockIdx.x] = acc[0];
}

// Version 2 (kernel 2, reduce1): the same pairs of elements added by the
// first blockDim / (2s) threads, through a strided index: the branch is
// uniform across whole warps but the stride-2s accesses conflict in the
// shared-memory banks.
__global__ void v2_strided_index(const int *__restrict__ in, int *__restrict__ part, unsigned n)
{
    extern __shared__ int acc[];
    unsigned tid = threadIdx.x, idx = blockIdx.x * blockDim.x + tid;
    acc[tid] = idx < n ? in[idx] : 0;
    __syncthreads();
    for (unsigned step = 1; step < blockDim.x; step <<= 1) {
        unsigned at = 2 * step * tid;
        if (at < blockDim.x) acc[at] += acc[at + step];
        __syncthreads();
    }
    if (tid == 0) part[blockIdx.x] = acc[0];
}

// Version 3 (kernel 3, reduce2): sequential addressing, the stride halving
// from blockDim / 2: thread t adds element t + s to element t, contiguous
// threads on contiguous words, no conflicts.
__global__ void v3_sequential(const int *__restrict__ in, int *__restrict__ part, unsigned n)
{
    extern __shared__ int acc[];
    unsigned tid = threadIdx.x, idx = blockIdx.x * blockDim.x + tid;
    acc[tid] = idx < n ? in[idx] : 0;
    __syncthreads();
    for (unsigned half = blockDim.x / 2; half > 0; half >>= 1) {
        if (tid < half) acc[tid] += acc[tid + half];
        __syncthreads();
    }
    if (tid == 0) part[blockIdx.x] = acc[0];
}

// Version 4 (kernel 4, reduce3): half as many blocks, each thread loading
// two elements a block apart and adding them before the tree ("first add
// during global load"): in version 3 half the threads did nothing after
// their load.
__global__ void v4_first_add(const int *__restrict__ in, int *__restrict__ part, unsigned n)
{
    extern __shared__ int acc[];
    unsigned tid = threadIdx.x, idx = blockIdx.x * 2 * blockDim.x + tid;
    int sum = idx < n ? in[idx] : 0;
    if (idx + blockDim.x < n) sum += in[idx + blockDim.x];
    acc[tid] = sum;
    __syncthreads();
    for (unsigned half = blockDim.x / 2; half > 0; half >>= 1) {
        if (tid < half) acc[tid] = sum = sum + acc[tid + half];
        __syncthreads();
    }
    if (tid == 0) part[blockIdx.x] = sum;
}

// The last 32 partial sums of a block, in warp 0's registers.
__device__ __forceinline__ int last_warp(int sum)
{
#pragma unroll
    for (int lane_gap = 16; lane_gap > 0; lane_gap >>= 1) sum += __shfl_down_sync(0xFFFFFFFFu, sum, lane_gap);
    return sum;
}

// Version 5 (kernel 5, reduce4): the tree stops at 64 values and warp 0
// finishes without block barriers. The whitepaper unrolls the last warp
// with warp-synchronous volatile shared memory, which is not safe since
// Volta's independent thread scheduling; the sample's reduce4 uses warp
// shuffles instead, and so does this one.
__global__ void v5_last_warp(const int *__restrict__ in, int *__restrict__ part, unsigned n)
{
    extern __shared__ int acc[];
    unsigned tid = threadIdx.x, idx = blockIdx.x * 2 * blockDim.x + tid;
    int sum = idx < n ? in[idx] : 0;
    if (idx + blockDim.x < n) sum += in[idx + blockDim.x];
    acc[tid] = sum;
    __syncthreads();
    for (unsigned half = blockDim.x / 2; half > 32; half >>= 1) {
        if (tid < half) acc[tid] = sum = sum + acc[tid + half];
        __syncthreads();
    }
    if (tid < 32) {
        sum = last_warp(sum + acc[tid + 32]);
        if (tid == 0) part[blockIdx.x] = sum;
    }
}

// The tree of versions 6 and 7 for a block size known at compile time:
// every level is an if on a constant, unrolled by the compiler.
template <unsigned B>
__device__ __forceinline__ void unrolled_tree(int *acc, int sum, int *__restrict__ part)
{
    unsigned tid = threadIdx.x;
    acc[tid] = sum;
    __syncthreads();
    if (B >= 1024 && tid < 512) acc[tid] = sum = sum + acc[tid + 512];
    if (B >= 1024) __syncthreads();
    if (B >= 512 && tid < 256) acc[tid] = sum = sum + acc[tid + 256];
    if (B >= 512) __syncthreads();
    if (B >= 256 && tid < 128) acc[tid] = sum = sum + acc[tid + 128];
    if (B >= 256) __syncthreads();
    if (B >= 128 && tid < 64) acc[tid] = sum = sum + acc[tid + 64];
    if (B >= 128) __syncthreads();
    if (tid < 32) {
        sum = last_warp(sum + acc[tid + 32]);
        if (tid == 0) part[blockIdx.x] = sum;
    }
}

// Version 6 (kernel 6, reduce5): complete unrolling, the block size a
// template parameter, so no loop, no loop counter and no run-time bounds.
template <unsigned B>
__global__ void v6_unrolled(const int *__restrict__ in, int *__restrict__ part, unsigned n)
{
    extern __shared__ int acc[];
    unsigned idx = blockIdx.x * 2 * B + threadIdx.x;
    int sum = idx < n ? in[idx] : 0;
    if (idx + B < n) sum += in[idx + B];
    unrolled_tree<B>(acc, sum, part);
}

// Version 7 (kernel 7, reduce6): several elements per thread ("algorithm
// cascading", Brent's theorem): a fixed grid walks the input with a
// grid-stride loop, two elements an iteration as the sample does, and the
// tree runs once per block instead of once per 2 x 256 elements. The
// whitepaper and the sample cap the grid at 64 blocks, sized for GPUs of 16
// SMs; here the grid is one full wave of the GPU (8 blocks of 256 threads
// per SM), the same rule for today's SM count.
template <unsigned B>
__global__ void v7_many_per_thread(const int *__restrict__ in, int *__restrict__ part, unsigned n)
{
    extern __shared__ int acc[];
    unsigned stride = 2 * B * gridDim.x;
    int sum = 0;
    for (unsigned idx = blockIdx.x * 2 * B + threadIdx.x; idx < n; idx += stride) {
        sum += in[idx];
        if (idx + B < n) sum += in[idx + B];
    }
    unrolled_tree<B>(acc, sum, part);
}

void setup()
{
    if (!d_in) {
        std::vector<int> h(N);
        ref_total = 0;
        for (unsigned i = 0; i < N; i++) {
            h[i] = (int)(ga_hash(i ^ 0x5bd1e995u) & 15u);
            ref_total += h[i];
        }
        d_in = pairs_upload(h);
        d_part = ga_dev_alloc<int>(N / BLOCK);
    }
    ga_poison(d_part, N / BLOCK);
}

// Version v, launched as the whitepaper does: one block per 256 elements
// (versions 1-3), per 512 (4-6), or one wave (7).
void launch_version(int v)
{
    const size_t smem = BLOCK * sizeof(int);
    unsigned one = N / BLOCK, two = N / (2 * BLOCK), wave = (unsigned)pairs_sm_count() * 8;
    switch (v) {
    case 1: v1_interleaved_modulo<<<one, BLOCK, smem>>>(d_in, d_part, N); parts_written = one; break;
    case 2: v2_strided_index<<<one, BLOCK, smem>>>(d_in, d_part, N); parts_written = one; break;
    case 3: v3_sequential<<<one, BLOCK, smem>>>(d_in, d_part, N); parts_written = one; break;
    case 4: v4_first_add<<<two, BLOCK, smem>>>(d_in, d_part, N); parts_written = two; break;
    case 5: v5_last_warp<<<two, BLOCK, smem>>>(d_in, d_part, N); parts_written = two; break;
    case 6: v6_unrolled<BLOCK><<<two, BLOCK, smem>>>(d_in, d_part, N); parts_written = two; break;
    default: v7_many_per_thread<BLOCK><<<wave, BLOCK, smem>>>(d_in, d_part, N); parts_written = wave; break;
    }
}

void launch_1_2(bool fast) { launch_version(fast ? 2 : 1); }
void launch_2_3(bool fast) { launch_version(fast ? 3 : 2); }
void launch_3_4(bool fast) { launch_version(fast ? 4 : 3); }
void launch_4_5(bool fast) { launch_version(fast ? 5 : 4); }
void launch_5_6(bool fast) { launch_version(fast ? 6 : 5); }
void launch_6_7(bool fast) { launch_version(fast ? 7 : 6); }

// The partial sums of the last launch add up to the input's total (a
// partial sum left poisoned is -1 and breaks the total).
bool check(char *d, size_t n)
{
    std::vector<int> got = ga_from_dev(d_part, parts_written);
    long long total = 0;
    for (int v : got) total += v;
    if (total == ref_total) return true;
    snprintf(d, n, "total of %u partial sums %lld, expected %lld", parts_written, total, ref_total);
    return false;
}

// Labels: the rule whose fix text is the step's change; two where two
// rules' fix texts both describe it (the better ranked counts), none where
// no rule's does. docs/ACCURACY.md ("Validation set") gives the reasons.
GA_PAIR("reduce-strided", "thread-divergence,shared-tree-reduction", false,
        "reduction whitepaper 1->2: tid % (2s) divergent branch -> strided index", setup, launch_1_2, check);
GA_PAIR("reduce-sequential", "shared-bank-conflicts,shared-tree-reduction", false,
        "reduction whitepaper 2->3: strided index (bank conflicts) -> sequential addressing", setup, launch_2_3,
        check);
GA_PAIR("reduce-firstadd", "memory-latency-stalls,reduction-work-per-thread", false,
        "reduction whitepaper 3->4: one load per thread -> first add during load, half the blocks", setup,
        launch_3_4, check);
GA_PAIR("reduce-lastwarp", "warp-shuffle-reduction,barrier-stalls", false,
        "reduction whitepaper 4->5: tree to 1 with barriers -> last warp by shuffles", setup, launch_4_5, check);
GA_PAIR("reduce-unroll", "pipe-saturation", false,
        "reduction whitepaper 5->6: loop over levels -> completely unrolled (template block size)", setup,
        launch_5_6, check);
GA_PAIR("reduce-multiple", "memory-latency-stalls,reduction-work-per-thread", false,
        "reduction whitepaper 6->7: 2 elements per thread -> grid-stride loop over one wave", setup, launch_6_7,
        check);
} // namespace reduction
