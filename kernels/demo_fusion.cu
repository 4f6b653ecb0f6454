// gpuadvise-demo-fusion: out = gelu(x + bias[column]) + residual over a
// ROWS x COLS row-major matrix (the tail of a transformer MLP block).
//
//   three_kernels  bias add, GELU and residual add as three launches; each
//                  one streams the whole matrix through HBM (out is written,
//                  read back, written, read back, written)
//   fused          one kernel reads x, bias and residual once and writes out
//                  once; the intermediates stay in registers
//
// The three_kernels variant is timed as a whole (all three launches).
#include "common.h"

static const unsigned ROWS = 4096, COLS = 8192;
static const unsigned NELEM = ROWS * COLS; // 32M floats, 128 MB per array
static const unsigned FU_BLOCK = 256;

// Exact (erf-based) GELU.
__device__ __forceinline__ float gelu_erf(float t)
{
    return 0.5f * t * (1.0f + erff(t * 0.70710678118654752f));
}

__global__ void fusion_bias_add(const float *__restrict__ x, const float *__restrict__ bias,
                                float *__restrict__ out, unsigned n, unsigned cols)
{
    unsigned i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) out[i] = x[i] + bias[i % cols];
}

__global__ void fusion_gelu(float *__restrict__ out, unsigned n)
{
    unsigned i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) out[i] = gelu_erf(out[i]);
}

__global__ void fusion_residual_add(float *__restrict__ out, const float *__restrict__ residual, unsigned n)
{
    unsigned i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) out[i] = out[i] + residual[i];
}

__global__ void fusion_bias_gelu_residual(const float *__restrict__ x, const float *__restrict__ bias,
                                          const float *__restrict__ residual, float *__restrict__ out,
                                          unsigned n, unsigned cols)
{
    unsigned i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) out[i] = gelu_erf(x[i] + bias[i % cols]) + residual[i];
}

static std::vector<float> h_x, h_bias, h_res;
static float *d_x, *d_bias, *d_res, *d_out;

static void setup()
{
    h_x.resize(NELEM);
    h_res.resize(NELEM);
    h_bias.resize(COLS);
    for (unsigned i = 0; i < NELEM; i++) {
        h_x[i] = 3.0f * ga_sym(i, 71);
        h_res[i] = ga_sym(i, 72);
    }
    for (unsigned j = 0; j < COLS; j++) h_bias[j] = 0.5f * ga_sym(j, 73);
    d_x = ga_dev_alloc<float>(NELEM);
    d_res = ga_dev_alloc<float>(NELEM);
    d_out = ga_dev_alloc<float>(NELEM);
    d_bias = ga_dev_alloc<float>(COLS);
    ga_to_dev(d_x, h_x);
    ga_to_dev(d_res, h_res);
    ga_to_dev(d_bias, h_bias);
}

static void clear() { ga_poison(d_out, NELEM); }

static void teardown()
{
    ga_dev_free(d_x);
    ga_dev_free(d_res);
    ga_dev_free(d_out);
    ga_dev_free(d_bias);
}

static const unsigned FU_GRID = (NELEM + FU_BLOCK - 1) / FU_BLOCK;

static void launch_three()
{
    fusion_bias_add<<<FU_GRID, FU_BLOCK>>>(d_x, d_bias, d_out, NELEM, COLS);
    GA_CHECK_LAUNCH();
    fusion_gelu<<<FU_GRID, FU_BLOCK>>>(d_out, NELEM);
    GA_CHECK_LAUNCH();
    fusion_residual_add<<<FU_GRID, FU_BLOCK>>>(d_out, d_res, NELEM);
}

static void launch_fused() { fusion_bias_gelu_residual<<<FU_GRID, FU_BLOCK>>>(d_x, d_bias, d_res, d_out, NELEM, COLS); }

// Reference in double after the FP32 bias add (which both variants round
// identically). erff is accurate to a few ulp; fusion may contract the final
// add into an FMA: errors stay around 1e-6.
static bool check(char *detail, size_t len)
{
    std::vector<float> out = ga_from_dev(d_out, NELEM);
    GaChecker ck(1e-5, 1e-5);
    for (unsigned i = 0; i < NELEM; i += (i < 65536 ? 1 : 3)) {
        float t = h_x[i] + h_bias[i % COLS];
        double ref = 0.5 * t * (1.0 + erf((double)t * 0.70710678118654752)) + h_res[i];
        ck.add(i, out[i], ref);
    }
    for (unsigned i = 0; i < NELEM; i++)
        if (out[i] != out[i]) ck.add(i, out[i], 0.0);
    return ck.result(detail, len, "out");
}

static const GaVariant variants[] = {
    {"three_kernels", "bias add, GELU and residual add as three launches, three HBM round trips", launch_three, check, nullptr},
    {"fused", "one kernel: read x, bias and residual once, write out once", launch_fused, check, nullptr},
};

int main(int argc, char **argv)
{
    GaDemo demo = {"fusion", setup, clear, teardown, variants, (int)(sizeof variants / sizeof variants[0])};
    return ga_demo_main(argc, argv, demo);
}
