// Validation pair from the step from global to shared-memory atomics in a
// 256-bin byte histogram, as published in NVIDIA's cuda-samples
// "histogram" sample (Samples/2_Concepts_and_Techniques/histogram,
// histogram256.cu: per-warp sub-histograms in shared memory, merged per
// block) against the first GPU histogram of Sanders and Kandrot, "CUDA by
// Example" (chapter 9, atomics: every byte an atomicAdd on the one global
// histogram), the step that book takes next and that Nikolay Sakharnykh's
// post "GPU Pro Tip: Fast Histograms Using Shared Atomics on Maxwell"
// measures. The kernels are written here from those descriptions, with the
// sample's input (32-bit words of four uniformly random bytes) and block
// (6 warps, one 256-bin sub-histogram each); both sides walk the input with
// the same grid-stride loop over one wave of blocks, so only where the
// atomics go differs.
//
// Input: 16M words (64M bytes). The check compares the 256 bins with the
// host's counts.
#include "../accuracy/pairs.h"

namespace vhisto {
const unsigned WORDS = 1u << 24, BINS = 256, WARPS = 6, BLOCK = WARPS * 32;
unsigned *d_words, *d_hist;
std::vector<unsigned> ref;

// CUDA by Example's global-atomics histogram: each byte one atomicAdd on
// the global bins, 64M updates on 256 addresses.
__global__ void global_atomics(const unsigned *__restrict__ words, unsigned *hist, unsigned n)
{
    for (unsigned w = blockIdx.x * blockDim.x + threadIdx.x; w < n; w += gridDim.x * blockDim.x) {
        unsigned v = words[w];
        for (int b = 0; b < 4; b++) atomicAdd(&hist[(v >> (8 * b)) & 0xFFu], 1u);
    }
}

// histogram256's scheme: each warp counts into its own sub-histogram in
// shared memory (shared atomics, contention only within the warp); the
// block then adds its warps' counts per bin and merges them into the global
// bins with one atomicAdd per bin (CUDA by Example's merge; the sample
// writes per-block histograms and merges them in a second kernel).
__global__ void shared_atomics(const unsigned *__restrict__ words, unsigned *hist, unsigned n)
{
    __shared__ unsigned sub[WARPS][BINS];
    for (unsigned i = threadIdx.x; i < WARPS * BINS; i += BLOCK) (&sub[0][0])[i] = 0;
    __syncthreads();
    unsigned *mine = sub[threadIdx.x / 32];
    for (unsigned w = blockIdx.x * blockDim.x + threadIdx.x; w < n; w += gridDim.x * blockDim.x) {
        unsigned v = words[w];
        for (int b = 0; b < 4; b++) atomicAdd(&mine[(v >> (8 * b)) & 0xFFu], 1u);
    }
    __syncthreads();
    for (unsigned bin = threadIdx.x; bin < BINS; bin += BLOCK) {
        unsigned total = 0;
        for (unsigned k = 0; k < WARPS; k++) total += sub[k][bin];
        if (total) atomicAdd(&hist[bin], total);
    }
}

void setup()
{
    if (!d_words) {
        std::vector<unsigned> h(WORDS);
        ref.assign(BINS, 0);
        for (unsigned i = 0; i < WORDS; i++) {
            h[i] = ga_hash2(i, 31);
            for (int b = 0; b < 4; b++) ref[(h[i] >> (8 * b)) & 0xFFu]++;
        }
        d_words = pairs_upload(h);
        d_hist = ga_dev_alloc<unsigned>(BINS);
    }
    ga_poison(d_hist, BINS);
}

void launch(bool fast)
{
    // 8 blocks of 6 warps per SM: 48 of 64 warp slots, both sides.
    unsigned blocks = (unsigned)pairs_sm_count() * 8;
    GA_CHECK(cudaMemsetAsync(d_hist, 0, BINS * sizeof(unsigned)));
    if (fast)
        shared_atomics<<<blocks, BLOCK>>>(d_words, d_hist, WORDS);
    else
        global_atomics<<<blocks, BLOCK>>>(d_words, d_hist, WORDS);
}

bool check(char *d, size_t n)
{
    std::vector<unsigned> got = ga_from_dev(d_hist, BINS);
    for (unsigned b = 0; b < BINS; b++)
        if (got[b] != ref[b]) {
            snprintf(d, n, "bin %u: %u, expected %u", b, got[b], ref[b]);
            return false;
        }
    return true;
}

GA_PAIR("histogram-shared", "global-atomic-contention", false,
        "256-bin byte histogram: global atomicAdd per byte -> per-warp shared sub-histograms", setup, launch, check);
} // namespace vhisto
