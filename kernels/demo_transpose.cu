// gpuadvise-demo-transpose: out (COLS x ROWS) = transpose of in (ROWS x COLS).
//
//   naive   read along rows (coalesced), write down columns (one sector per
//           thread)
//   tiled   stage a 32x32 tile in shared memory so both the global read and
//           the global write are coalesced; reading the tile by column makes
//           every warp hit a single bank (32-way conflict)
//   padded  the same with a [32][33] tile: the extra column shifts each row by
//           one bank, so column reads are conflict-free
//
// All kernels use 32x8 threads; ROWS and COLS are multiples of 32.
#include "common.h"

static const int ROWS = 8192, COLS = 6144;
static const size_t NELEM = (size_t)ROWS * COLS; // 48M floats, 192 MB per array

#define TR_TILE 32
#define TR_ROWS 8 // blockDim.y: each thread moves TR_TILE / TR_ROWS elements

// One element per thread.
__global__ void transpose_naive(const float *__restrict__ in, float *__restrict__ out, int rows,
                                int cols)
{
    int x = blockIdx.x * blockDim.x + threadIdx.x; // column of in
    int y = blockIdx.y * blockDim.y + threadIdx.y; // row of in
    if (x < cols && y < rows) out[(size_t)x * rows + y] = in[(size_t)y * cols + x];
}

template <int PAD>
__device__ __forceinline__ void transpose_through_tile(const float *__restrict__ in,
                                                       float *__restrict__ out, int rows, int cols)
{
    __shared__ float tile[TR_TILE][TR_TILE + PAD];
    int x = blockIdx.x * TR_TILE + threadIdx.x;
    int y = blockIdx.y * TR_TILE + threadIdx.y;
#pragma unroll
    for (int j = 0; j < TR_TILE; j += TR_ROWS) tile[threadIdx.y + j][threadIdx.x] = in[(size_t)(y + j) * cols + x];
    __syncthreads();
    // Block (bx, by) of in becomes block (by, bx) of out.
    x = blockIdx.y * TR_TILE + threadIdx.x; // column of out
    y = blockIdx.x * TR_TILE + threadIdx.y; // row of out
#pragma unroll
    for (int j = 0; j < TR_TILE; j += TR_ROWS) out[(size_t)(y + j) * rows + x] = tile[threadIdx.x][threadIdx.y + j]; // gpuadvise-expect: bank-conflict
}

__global__ void transpose_tiled(const float *__restrict__ in, float *__restrict__ out, int rows, int cols)
{
    transpose_through_tile<0>(in, out, rows, cols);
}

__global__ void transpose_padded(const float *__restrict__ in, float *__restrict__ out, int rows, int cols)
{
    transpose_through_tile<1>(in, out, rows, cols);
}

static std::vector<float> h_in;
static float *d_in, *d_out;

static void setup()
{
    h_in.resize(NELEM);
    for (size_t i = 0; i < NELEM; i++) h_in[i] = (float)(ga_hash((uint32_t)i + 31u) & 0xFFFFFF);
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

static void launch_naive()
{
    transpose_naive<<<dim3(COLS / 32, ROWS / TR_ROWS), dim3(32, TR_ROWS)>>>(d_in, d_out, ROWS, COLS);
}
static void launch_tiled()
{
    transpose_tiled<<<dim3(COLS / TR_TILE, ROWS / TR_TILE), dim3(TR_TILE, TR_ROWS)>>>(d_in, d_out, ROWS, COLS);
}
static void launch_padded()
{
    transpose_padded<<<dim3(COLS / TR_TILE, ROWS / TR_TILE), dim3(TR_TILE, TR_ROWS)>>>(d_in, d_out, ROWS, COLS);
}

static bool check(char *detail, size_t len)
{
    std::vector<float> out = ga_from_dev(d_out, NELEM);
    GaChecker ck(0.0, 0.0); // pure data movement: bit-exact
    for (size_t y = 0; y < (size_t)ROWS; y++)
        for (size_t x = 0; x < (size_t)COLS; x++) ck.add(x * ROWS + y, out[x * ROWS + y], h_in[y * COLS + x]);
    return ck.result(detail, len, "out");
}

static const GaVariant variants[] = {
    {"naive", "coalesced reads, writes strided by a whole column (one sector per thread)", launch_naive, check, nullptr},
    {"tiled", "32x32 shared-memory tile: coalesced both ways, 32-way bank conflicts on the tile", launch_tiled, check, nullptr},
    {"padded", "32x33 shared-memory tile: coalesced both ways, no bank conflicts", launch_padded, check, nullptr},
};

int main(int argc, char **argv)
{
    GaDemo demo = {"transpose", setup, clear, teardown, variants, (int)(sizeof variants / sizeof variants[0])};
    return ga_demo_main(argc, argv, demo);
}
