// gpuadvise-demo-matmul: C = A * B for square row-major matrices.
//
//   naive  one output per thread straight from global memory (16x16 blocks)
//   tiled  32x32 tiles staged in shared memory, each loaded value reused 32x
//   wmma   tensor cores through nvcuda::wmma: FP16 inputs, FP32 accumulation
//
// The FP16 copies of A and B are made once on the host during setup, so the
// timed wmma launch contains only the multiplication.
#include "common.h"

#include <cuda_fp16.h>
#include <mma.h>

static const int N = 2048; // multiple of 64 (wmma block tile) and 32
static const size_t NN = (size_t)N * N;

// ---------------------------------------------------------------------------
// Kernels
// ---------------------------------------------------------------------------

__global__ void matmul_naive(const float *__restrict__ a, const float *__restrict__ b,
                             float *__restrict__ c, int n)
{
    int col = blockIdx.x * blockDim.x + threadIdx.x;
    int row = blockIdx.y * blockDim.y + threadIdx.y;
    if (row >= n || col >= n) return;
    float sum = 0.0f;
    for (int k = 0; k < n; k++) sum += a[(size_t)row * n + k] * b[(size_t)k * n + col];
    c[(size_t)row * n + col] = sum;
}

#define MM_TILE 32

// Launched with 32x32 threads; n must be a multiple of 32.
__global__ void matmul_tiled(const float *__restrict__ a, const float *__restrict__ b,
                             float *__restrict__ c, int n)
{
    __shared__ float as[MM_TILE][MM_TILE];
    __shared__ float bs[MM_TILE][MM_TILE];
    int tx = threadIdx.x, ty = threadIdx.y;
    int row = blockIdx.y * MM_TILE + ty;
    int col = blockIdx.x * MM_TILE + tx;
    float sum = 0.0f;
    for (int t = 0; t < n; t += MM_TILE) {
        as[ty][tx] = a[(size_t)row * n + t + tx];
        bs[ty][tx] = b[(size_t)(t + ty) * n + col];
        __syncthreads();
#pragma unroll
        for (int k = 0; k < MM_TILE; k++) sum += as[ty][k] * bs[k][tx];
        __syncthreads();
    }
    c[(size_t)row * n + col] = sum;
}

// Each warp computes a 32x32 block of C as 2x2 WMMA 16x16 accumulators; a
// block of 4 warps (blockDim 32x4) covers 64x64. n must be a multiple of 64.
__global__ void matmul_wmma(const __half *__restrict__ a, const __half *__restrict__ b,
                            float *__restrict__ c, int n)
{
    using namespace nvcuda;
    int warp = threadIdx.y; // 0..3
    int row0 = blockIdx.y * 64 + (warp / 2) * 32;
    int col0 = blockIdx.x * 64 + (warp % 2) * 32;

    wmma::fragment<wmma::accumulator, 16, 16, 16, float> acc[2][2];
#pragma unroll
    for (int i = 0; i < 2; i++)
#pragma unroll
        for (int j = 0; j < 2; j++) wmma::fill_fragment(acc[i][j], 0.0f);

    wmma::fragment<wmma::matrix_a, 16, 16, 16, __half, wmma::row_major> fa[2];
    wmma::fragment<wmma::matrix_b, 16, 16, 16, __half, wmma::row_major> fb[2];
    for (int k = 0; k < n; k += 16) {
#pragma unroll
        for (int i = 0; i < 2; i++) wmma::load_matrix_sync(fa[i], a + (size_t)(row0 + 16 * i) * n + k, n);
#pragma unroll
        for (int j = 0; j < 2; j++) wmma::load_matrix_sync(fb[j], b + (size_t)k * n + col0 + 16 * j, n);
#pragma unroll
        for (int i = 0; i < 2; i++)
#pragma unroll
            for (int j = 0; j < 2; j++) wmma::mma_sync(acc[i][j], fa[i], fb[j], acc[i][j]);
    }
#pragma unroll
    for (int i = 0; i < 2; i++)
#pragma unroll
        for (int j = 0; j < 2; j++)
            wmma::store_matrix_sync(c + (size_t)(row0 + 16 * i) * n + col0 + 16 * j, acc[i][j], n,
                                    wmma::mem_row_major);
}

// ---------------------------------------------------------------------------
// Host side
// ---------------------------------------------------------------------------

static std::vector<float> h_a, h_b;   // FP32 inputs
static std::vector<float> h_a16, h_b16; // the same values rounded to FP16
static float *d_a, *d_b, *d_c;
static __half *d_a16, *d_b16;

static void setup()
{
    h_a.resize(NN);
    h_b.resize(NN);
    h_a16.resize(NN);
    h_b16.resize(NN);
    std::vector<__half> ha(NN), hb(NN);
    for (size_t i = 0; i < NN; i++) {
        h_a[i] = ga_sym((uint32_t)i, 101);
        h_b[i] = ga_sym((uint32_t)i, 202);
        ha[i] = __float2half_rn(h_a[i]);
        hb[i] = __float2half_rn(h_b[i]);
        h_a16[i] = __half2float(ha[i]);
        h_b16[i] = __half2float(hb[i]);
    }
    d_a = ga_dev_alloc<float>(NN);
    d_b = ga_dev_alloc<float>(NN);
    d_c = ga_dev_alloc<float>(NN);
    d_a16 = ga_dev_alloc<__half>(NN);
    d_b16 = ga_dev_alloc<__half>(NN);
    ga_to_dev(d_a, h_a);
    ga_to_dev(d_b, h_b);
    ga_to_dev(d_a16, ha);
    ga_to_dev(d_b16, hb);
}

static void clear() { ga_poison(d_c, NN); }

static void teardown()
{
    ga_dev_free(d_a);
    ga_dev_free(d_b);
    ga_dev_free(d_c);
    ga_dev_free(d_a16);
    ga_dev_free(d_b16);
}

static void launch_naive() { matmul_naive<<<dim3(N / 16, N / 16), dim3(16, 16)>>>(d_a, d_b, d_c, N); }
static void launch_tiled() { matmul_tiled<<<dim3(N / 32, N / 32), dim3(32, 32)>>>(d_a, d_b, d_c, N); }
static void launch_wmma() { matmul_wmma<<<dim3(N / 64, N / 64), dim3(32, 4)>>>(d_a16, d_b16, d_c, N); }

// Compares a sample of C (the four corners, two full rows, two full columns
// and 4096 scattered entries) against a double-precision dot product.
static bool check_against(const std::vector<float> &a, const std::vector<float> &b, double atol,
                          double rtol, char *detail, size_t len)
{
    std::vector<float> c = ga_from_dev(d_c, NN);
    std::vector<float> bt(NN); // B transposed, so the host dot products stream
    for (size_t k = 0; k < (size_t)N; k++)
        for (size_t j = 0; j < (size_t)N; j++) bt[j * N + k] = b[k * N + j];
    GaChecker ck(atol, rtol);
    auto one = [&](int row, int col) {
        const float *ar = &a[(size_t)row * N], *bc = &bt[(size_t)col * N];
        double ref = 0.0;
        for (int k = 0; k < N; k++) ref += (double)ar[k] * bc[k];
        ck.add((size_t)row * N + col, c[(size_t)row * N + col], ref);
    };
    for (int s = 0; s < 4; s++) one((s & 1) * (N - 1), (s >> 1) * (N - 1));
    for (int j = 0; j < N; j++) {
        one(0, j);
        one(N - 1 - 17, j);
        one(j, 5);
        one(j, N - 1);
    }
    for (int s = 0; s < 4096; s++) one((int)(ga_hash(2 * s) % N), (int)(ga_hash(2 * s + 1) % N));
    return ck.result(detail, len, "c");
}

// FP32 accumulation over 2048 products of values in [-1, 1): errors ~1e-5.
static bool check_fp32(char *detail, size_t len) { return check_against(h_a, h_b, 2e-3, 1e-4, detail, len); }
// Reference from the FP16-rounded inputs, so only accumulation order differs.
static bool check_fp16(char *detail, size_t len) { return check_against(h_a16, h_b16, 5e-3, 1e-3, detail, len); }

static const GaVariant variants[] = {
    {"naive", "one output per thread, every operand read from global memory (FP32)", launch_naive, check_fp32, nullptr},
    {"tiled", "32x32 shared-memory tiles reuse each loaded value 32 times (FP32)", launch_tiled, check_fp32, nullptr},
    {"wmma", "tensor cores via nvcuda::wmma, FP16 inputs with FP32 accumulation", launch_wmma, check_fp16, nullptr},
};

int main(int argc, char **argv)
{
    GaDemo demo = {"matmul", setup, clear, teardown, variants, (int)(sizeof variants / sizeof variants[0])};
    return ga_demo_main(argc, argv, demo);
}
