// gpuadvise-demo-coalescing: out = 2 * in + 1 over a ROWS x COLS row-major
// matrix, visiting the elements in two different orders.
//
//   strided    a block walks down one column: neighbouring threads touch
//              addresses COLS floats apart, one 32-byte sector each
//   coalesced  a block walks along one row: a warp touches 128 contiguous bytes
//
// Both variants compute exactly the same values.
#include "common.h"

static const unsigned ROWS = 8192, COLS = 6144;
static const size_t NELEM = (size_t)ROWS * COLS; // 48M floats, 192 MB per array

// Launched on a (ROWS / 256) x COLS grid: a block walks 256 rows of one column.
__global__ void coalescing_strided(const float *__restrict__ in, float *__restrict__ out,
                                   unsigned rows, unsigned cols)
{
    unsigned row = blockIdx.x * blockDim.x + threadIdx.x;
    unsigned col = blockIdx.y;
    if (row >= rows || col >= cols) return;
    size_t i = (size_t)row * cols + col;
    out[i] = 2.0f * in[i] + 1.0f; // gpuadvise-expect: uncoalesced
}

// Launched on a (COLS / 256) x ROWS grid: a block covers 256 columns of one row.
__global__ void coalescing_coalesced(const float *__restrict__ in, float *__restrict__ out,
                                     unsigned rows, unsigned cols)
{
    unsigned col = blockIdx.x * blockDim.x + threadIdx.x;
    unsigned row = blockIdx.y;
    if (row >= rows || col >= cols) return;
    size_t i = (size_t)row * cols + col;
    out[i] = 2.0f * in[i] + 1.0f;
}

static std::vector<float> h_in;
static float *d_in, *d_out;

static void setup()
{
    h_in.resize(NELEM);
    for (size_t i = 0; i < NELEM; i++) h_in[i] = ga_sym((uint32_t)i, 7);
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

static const unsigned BLOCK = 256; // ROWS and COLS are multiples of it

static void launch_strided() { coalescing_strided<<<dim3(ROWS / BLOCK, COLS), BLOCK>>>(d_in, d_out, ROWS, COLS); }
static void launch_coalesced() { coalescing_coalesced<<<dim3(COLS / BLOCK, ROWS), BLOCK>>>(d_in, d_out, ROWS, COLS); }

static bool check(char *detail, size_t len)
{
    std::vector<float> out = ga_from_dev(d_out, NELEM);
    GaChecker ck(1e-6, 1e-6); // one rounding step (or one FMA) apart at most
    for (size_t i = 0; i < NELEM; i++) ck.add(i, out[i], 2.0 * h_in[i] + 1.0);
    return ck.result(detail, len, "out");
}

static const GaVariant variants[] = {
    {"strided", "neighbouring threads access elements a whole row (6144 floats) apart", launch_strided, check, nullptr},
    {"coalesced", "neighbouring threads access neighbouring elements (stride 1)", launch_coalesced, check, nullptr},
};

int main(int argc, char **argv)
{
    GaDemo demo = {"coalescing", setup, clear, teardown, variants, (int)(sizeof variants / sizeof variants[0])};
    return ga_demo_main(argc, argv, demo);
}
