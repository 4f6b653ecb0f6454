// gpuadvise-demo-divergence: every element gets one of two expensive
// functions, chosen by the parity of its index: even elements run a float FMA
// chain, odd elements an integer hash chain.
//
//   evenodd       thread i handles element i and branches on threadIdx.x % 2:
//                 each warp runs both paths with half its lanes masked off
//   warp_uniform  the same elements and functions, but the work is handed out
//                 so that all 32 lanes of a warp take the same path (even
//                 warps take even elements, odd warps odd ones)
//
// Both variants produce bit-identical results.
#include "common.h"

static const unsigned NELEM = 8u << 20; // 8M elements, multiple of the block size
static const int ITERS = 1024;
static const unsigned BLOCK = 256;

__host__ __device__ inline float div_float_path(float x, int iters)
{
    for (int k = 0; k < iters; k++) {
        x = fmaf(x, 0.9990f, 0.0100f);
        x = fmaf(x, 1.0005f, -0.0050f);
    }
    return x;
}

__host__ __device__ inline float div_int_path(unsigned u, int iters)
{
    for (int k = 0; k < iters; k++) {
        u = u * 1664525u + 1013904223u;
        u ^= u >> 15;
    }
    return (float)(u >> 8) * (1.0f / 16777216.0f);
}

__global__ void divergence_evenodd(const float *__restrict__ in, float *__restrict__ out, unsigned n, int iters)
{
    unsigned e = blockIdx.x * blockDim.x + threadIdx.x;
    if (e >= n) return;
    float r;
    if (threadIdx.x % 2 == 0) // gpuadvise-expect: divergent-branch
        r = div_float_path(in[e], iters);
    else
        r = div_int_path(__float_as_uint(in[e]), iters);
    out[e] = r;
}

// Within a block's 256 elements, warps 0, 2, 4, 6 take the 128 even elements
// and warps 1, 3, 5, 7 the 128 odd ones. blockDim.x must be a multiple of 64.
__global__ void divergence_warp_uniform(const float *__restrict__ in, float *__restrict__ out, unsigned n,
                                        int iters)
{
    unsigned warp = threadIdx.x / 32, lane = threadIdx.x % 32;
    unsigned parity = warp % 2;                      // the same for all lanes of the warp
    unsigned slot = (warp / 2) * 32 + lane;          // 0 .. blockDim.x / 2 - 1
    unsigned e = blockIdx.x * blockDim.x + 2 * slot + parity;
    if (e >= n) return;
    float r;
    if (parity == 0)
        r = div_float_path(in[e], iters);
    else
        r = div_int_path(__float_as_uint(in[e]), iters);
    out[e] = r;
}

static std::vector<float> h_in;
static float *d_in, *d_out;

static void setup()
{
    h_in.resize(NELEM);
    for (unsigned i = 0; i < NELEM; i++) h_in[i] = ga_unit(i, 3);
    d_in = ga_dev_alloc<float>(NELEM);
    d_out = ga_dev_alloc<float>(NELEM);
    ga_to_dev(d_in, h_in);
}

static void clear() { ga_poison(d_out, NELEM); }

static void teardown()
{
    ga_dev_free(d_in);
    ga_dev_free(d_out);
}

static void launch_evenodd() { divergence_evenodd<<<NELEM / BLOCK, BLOCK>>>(d_in, d_out, NELEM, ITERS); }
static void launch_uniform() { divergence_warp_uniform<<<NELEM / BLOCK, BLOCK>>>(d_in, d_out, NELEM, ITERS); }

// Host recomputation of every element is ~10^10 operations, so the check
// covers the first 64K elements and every 61st one after that (both parities).
static bool check(char *detail, size_t len)
{
    std::vector<float> out = ga_from_dev(d_out, NELEM);
    GaChecker ck(1e-6, 1e-5);
    for (unsigned i = 0; i < NELEM; i += (i < 65536 ? 1 : 61)) {
        float ref;
        if (i % 2 == 0) {
            ref = div_float_path(h_in[i], ITERS);
        } else {
            unsigned u;
            memcpy(&u, &h_in[i], sizeof u);
            ref = div_int_path(u, ITERS);
        }
        ck.add(i, out[i], ref);
    }
    // A variant that skipped elements would leave the 0xFF poison (NaN) there.
    for (unsigned i = 0; i < NELEM; i++)
        if (out[i] != out[i]) ck.add(i, out[i], 0.0);
    return ck.result(detail, len, "out");
}

static const GaVariant variants[] = {
    {"evenodd", "branch on threadIdx.x % 2: every warp runs both paths at half width", launch_evenodd, check, nullptr},
    {"warp_uniform", "same work regrouped so each warp takes a single path", launch_uniform, check, nullptr},
};

int main(int argc, char **argv)
{
    GaDemo demo = {"divergence", setup, clear, teardown, variants, (int)(sizeof variants / sizeof variants[0])};
    return ga_demo_main(argc, argv, demo);
}
