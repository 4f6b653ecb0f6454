// gpuadvise-demo-atomics: count the elements of an int array equal to KEY
// (about a quarter of them match).
//
//   global_atomic  one thread per element; every match does atomicAdd on the
//                  single global counter, so millions of updates queue on
//                  one address
//   block_reduce   a grid-stride loop counts in a register per thread; the
//                  block sums its counts with warp shuffles and shared memory
//                  and issues one atomicAdd per block
//
// The counter is zeroed (cudaMemsetAsync, untimed) before every launch.
#include "common.h"

static const unsigned NELEM = 64u << 20; // 64M ints, 256 MB
static const int KEY = 2;                // inputs are 0..3
static const unsigned AT_BLOCK = 256;
static const unsigned REDUCE_GRID = 132 * 8;

__global__ void atomics_global(const int *__restrict__ in, unsigned n, int key, unsigned *__restrict__ count)
{
    unsigned i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n && in[i] == key) atomicAdd(count, 1u);
}

__global__ void atomics_block_reduce(const int *__restrict__ in, unsigned n, int key, unsigned *__restrict__ count)
{
    __shared__ unsigned warp_counts[AT_BLOCK / 32];
    unsigned mine = 0;
    unsigned stride = gridDim.x * blockDim.x;
    for (unsigned i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += stride) mine += (in[i] == key);

#pragma unroll
    for (int offset = 16; offset > 0; offset >>= 1) mine += __shfl_down_sync(0xFFFFFFFFu, mine, offset);
    unsigned lane = threadIdx.x % 32, warp = threadIdx.x / 32;
    if (lane == 0) warp_counts[warp] = mine;
    __syncthreads();
    if (warp == 0) {
        mine = lane < blockDim.x / 32 ? warp_counts[lane] : 0;
#pragma unroll
        for (int offset = 16; offset > 0; offset >>= 1) mine += __shfl_down_sync(0xFFFFFFFFu, mine, offset);
        if (lane == 0) atomicAdd(count, mine);
    }
}

static unsigned h_expected;
static int *d_in;
static unsigned *d_count;

static void setup()
{
    std::vector<int> h(NELEM);
    h_expected = 0;
    for (unsigned i = 0; i < NELEM; i++) {
        h[i] = (int)(ga_hash(i + 2024u) & 3u);
        h_expected += (h[i] == KEY);
    }
    d_in = ga_dev_alloc<int>(NELEM);
    d_count = ga_dev_alloc<unsigned>(1);
    ga_to_dev(d_in, h);
}

static void clear() { ga_poison(d_count, 1); }

static void teardown()
{
    ga_dev_free(d_in);
    ga_dev_free(d_count);
}

static void prepare() { GA_CHECK(cudaMemsetAsync(d_count, 0, sizeof(unsigned))); }

static void launch_global() { atomics_global<<<(NELEM + AT_BLOCK - 1) / AT_BLOCK, AT_BLOCK>>>(d_in, NELEM, KEY, d_count); }
static void launch_block() { atomics_block_reduce<<<REDUCE_GRID, AT_BLOCK>>>(d_in, NELEM, KEY, d_count); }

static bool check(char *detail, size_t len)
{
    unsigned got = 0;
    GA_CHECK(cudaMemcpy(&got, d_count, sizeof got, cudaMemcpyDeviceToHost));
    if (got == h_expected) return true;
    snprintf(detail, len, "count %u, expected %u", got, h_expected);
    return false;
}

static const GaVariant variants[] = {
    {"global_atomic", "one atomicAdd on a single global counter per matching element", launch_global, check, prepare},
    {"block_reduce", "per-thread counts, block reduction with shuffles, one atomicAdd per block", launch_block, check, prepare},
};

int main(int argc, char **argv)
{
    GaDemo demo = {"atomics", setup, clear, teardown, variants, (int)(sizeof variants / sizeof variants[0])};
    return ga_demo_main(argc, argv, demo);
}
