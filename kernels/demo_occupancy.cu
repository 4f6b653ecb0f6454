// gpuadvise-demo-occupancy: evaluate a degree-(NCOEF-1) polynomial at every
// input element with Horner's scheme (a chain of dependent FMAs), in a
// grid-stride loop.
//
//   regs_heavy  every thread first copies all NCOEF coefficients into a
//               private array, which the compiler keeps in registers for the
//               whole loop: ~200 registers per thread, so only one 256-thread
//               block (8 warps) fits on an SM. With so few warps the FMA
//               latency and the load of each element are barely hidden.
//   bounded     the coefficients live in __constant__ memory and feed the FMAs
//               directly as constant-bank operands; __launch_bounds__(256, 4)
//               caps the registers so at least 4 blocks (32 warps) fit per SM.
//
// Both variants execute the same FMAs in the same order: identical results.
#include "common.h"

#define NCOEF 192
#define OCC_BLOCK 256
static const unsigned NELEM = 32u << 20;  // 32M floats, 128 MB per array
static const unsigned OCC_GRID = 132 * 8; // grid-stride loop: ~124 elements per thread

__constant__ float occ_coef_const[NCOEF];

__global__ void occupancy_regs_heavy(const float *__restrict__ in, float *__restrict__ out,
                                     const float *__restrict__ coef, unsigned n)
{
    float c[NCOEF];
#pragma unroll
    for (int k = 0; k < NCOEF; k++) c[k] = coef[k];
    unsigned stride = gridDim.x * blockDim.x;
    for (unsigned i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += stride) {
        float x = in[i];
        float y = c[NCOEF - 1];
#pragma unroll
        for (int k = NCOEF - 2; k >= 0; k--) y = fmaf(y, x, c[k]);
        out[i] = y;
    }
}

__global__ void __launch_bounds__(OCC_BLOCK, 4)
    occupancy_bounded(const float *__restrict__ in, float *__restrict__ out, unsigned n)
{
    unsigned stride = gridDim.x * blockDim.x;
    for (unsigned i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += stride) {
        float x = in[i];
        float y = occ_coef_const[NCOEF - 1];
#pragma unroll
        for (int k = NCOEF - 2; k >= 0; k--) y = fmaf(y, x, occ_coef_const[k]);
        out[i] = y;
    }
}

static std::vector<float> h_in, h_coef;
static float *d_in, *d_out, *d_coef;

static float horner_host(float x)
{
    float y = h_coef[NCOEF - 1];
    for (int k = NCOEF - 2; k >= 0; k--) y = fmaf(y, x, h_coef[k]);
    return y;
}

static void setup()
{
    h_coef.resize(NCOEF);
    for (int k = 0; k < NCOEF; k++) h_coef[k] = ga_sym((uint32_t)k, 55) / (float)(k + 1);
    h_in.resize(NELEM);
    for (unsigned i = 0; i < NELEM; i++) h_in[i] = 0.9f * ga_sym(i, 56);
    d_in = ga_dev_alloc<float>(NELEM);
    d_out = ga_dev_alloc<float>(NELEM);
    d_coef = ga_dev_alloc<float>(NCOEF);
    ga_to_dev(d_in, h_in);
    ga_to_dev(d_coef, h_coef);
    GA_CHECK(cudaMemcpyToSymbol(occ_coef_const, h_coef.data(), NCOEF * sizeof(float)));
}

static void clear() { ga_poison(d_out, NELEM); }

static void teardown()
{
    ga_dev_free(d_in);
    ga_dev_free(d_out);
    ga_dev_free(d_coef);
}

static void launch_heavy() { occupancy_regs_heavy<<<OCC_GRID, OCC_BLOCK>>>(d_in, d_out, d_coef, NELEM); }
static void launch_bounded() { occupancy_bounded<<<OCC_GRID, OCC_BLOCK>>>(d_in, d_out, NELEM); }

static bool check(char *detail, size_t len)
{
    std::vector<float> out = ga_from_dev(d_out, NELEM);
    GaChecker ck(1e-6, 1e-5);
    for (unsigned i = 0; i < NELEM; i += (i < 65536 ? 1 : 37)) ck.add(i, out[i], horner_host(h_in[i]));
    for (unsigned i = 0; i < NELEM; i++) // unwritten elements still hold the NaN poison
        if (out[i] != out[i]) ck.add(i, out[i], 0.0);
    return ck.result(detail, len, "out");
}

static const GaVariant variants[] = {
    {"regs_heavy", "192 coefficients copied into per-thread registers: ~200 regs/thread, 8 warps/SM", launch_heavy, check, nullptr},
    {"bounded", "coefficients in __constant__ memory, __launch_bounds__(256,4): few registers, >= 32 warps/SM", launch_bounded, check, nullptr},
};

int main(int argc, char **argv)
{
    GaDemo demo = {"occupancy", setup, clear, teardown, variants, (int)(sizeof variants / sizeof variants[0])};
    return ga_demo_main(argc, argv, demo);
}
