// Validation pairs from the steps of a matrix transpose, as published in
// NVIDIA's cuda-samples "transpose" sample (Samples/6_Performance/transpose)
// and its whitepaper (the sample's doc/MatrixTranspose.pdf), Greg Ruetsch
// and Paulius Micikevicius, "Optimizing Matrix Transpose in CUDA" (also
// Mark Harris's post "An Efficient Matrix Transpose in CUDA C/C++"):
// transposeNaive -> transposeCoalesced -> transposeNoBankConflicts. The
// kernels are written here from that description, in the sample's
// geometry: 32 x 32 tiles, 32 x 16 threads per block (each thread moves two
// elements of a tile), a float matrix. The sample's next step, diagonal
// block order (transposeDiagonal), fixes partition camping, a problem of
// the memory partitions of GPUs of 2009 that no rule covers and today's
// address hashing removes; it is left out.
//
// Matrix: 4096 rows x 8192 columns in, 8192 x 4096 out (128 MB each), so a
// coalesced transpose streams for about 70 us on an H200. The check
// compares every 7th output row with the input's column.
#include "../accuracy/pairs.h"

namespace vtranspose {
const int ROWS = 4096, COLS = 8192, TILE = 32, BY = 16;
float *d_in, *d_out;
std::vector<float> h_in;

// transposeNaive: thread (x, y) reads in[y][x] along a row (coalesced) and
// writes out[x][y], so a warp's 32 stores land 16 KB apart, one sector each.
__global__ void naive(const float *__restrict__ in, float *__restrict__ out)
{
    int col = blockIdx.x * TILE + threadIdx.x, row = blockIdx.y * TILE + threadIdx.y;
    for (int k = 0; k < TILE; k += BY) out[(size_t)col * ROWS + row + k] = in[(size_t)(row + k) * COLS + col];
}

// transposeCoalesced (PAD 0) and transposeNoBankConflicts (PAD 1): a tile
// is read along rows into shared memory and written out along rows of the
// output from the tile's columns. Without padding a column of the tile is
// one bank (32-way conflicts on the reads of the second phase); a tile of
// 33 floats a row spreads a column over all banks.
template <int PAD>
__global__ void tiled(const float *__restrict__ in, float *__restrict__ out)
{
    __shared__ float tile[TILE][TILE + PAD];
    int col = blockIdx.x * TILE + threadIdx.x, row = blockIdx.y * TILE + threadIdx.y;
    for (int k = 0; k < TILE; k += BY) tile[threadIdx.y + k][threadIdx.x] = in[(size_t)(row + k) * COLS + col];
    __syncthreads();
    // The output's row is the input's column: block (bx, by) writes tile
    // (by, bx) of the output.
    int out_col = blockIdx.y * TILE + threadIdx.x, out_row = blockIdx.x * TILE + threadIdx.y;
    for (int k = 0; k < TILE; k += BY)
        out[(size_t)(out_row + k) * ROWS + out_col] = tile[threadIdx.x][threadIdx.y + k];
}

void setup()
{
    if (!d_in) {
        h_in = pairs_fill((size_t)ROWS * COLS, 21, -1, 1);
        d_in = pairs_upload(h_in);
        d_out = ga_dev_alloc<float>((size_t)ROWS * COLS);
    }
    ga_poison(d_out, (size_t)ROWS * COLS);
}

const dim3 grid(COLS / TILE, ROWS / TILE), block(TILE, BY);

void launch_tile(bool fast)
{
    if (fast)
        tiled<0><<<grid, block>>>(d_in, d_out);
    else
        naive<<<grid, block>>>(d_in, d_out);
}

void launch_pad(bool fast)
{
    if (fast)
        tiled<1><<<grid, block>>>(d_in, d_out);
    else
        tiled<0><<<grid, block>>>(d_in, d_out);
}

// Output row r (r < COLS) is input column r.
bool check(char *d, size_t n)
{
    std::vector<float> got = ga_from_dev(d_out, (size_t)ROWS * COLS);
    GaChecker ck(0, 0);
    for (size_t r = 0; r < (size_t)COLS; r += 7)
        for (size_t c = 0; c < (size_t)ROWS; c++) ck.add(r * ROWS + c, got[r * ROWS + c], h_in[c * COLS + r]);
    return ck.result(d, n, "transpose");
}

GA_PAIR("transpose-tile", "uncoalesced-global-access", false,
        "transpose sample: transposeNaive (strided stores) -> transposeCoalesced (shared tile)", setup, launch_tile,
        check);
GA_PAIR("transpose-pad", "shared-bank-conflicts", false,
        "transpose sample: transposeCoalesced [32][32] tile -> transposeNoBankConflicts [32][33]", setup,
        launch_pad, check);
} // namespace vtranspose
