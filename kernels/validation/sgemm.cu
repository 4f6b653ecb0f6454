// Validation pairs from the first steps of Simon Boehm's "How to Optimize a
// CUDA Matmul Kernel for cuBLAS-like Performance: a Worklog" (2022; code in
// github.com/siboehm/SGEMM_CUDA, src/kernels/1_naive.cuh to
// 4_kernel_1D_blocktiling.cuh): kernel 1, naive -> kernel 2, global memory
// coalescing -> kernel 3, shared-memory cache blocking -> kernel 4, 1D
// block tiling (several results per thread). The kernels are written here
// from the worklog's description with its block shapes (32 x 32 outputs
// per block of 1024 threads for kernels 1 to 3; 64 x 64 per block of 512
// threads, 8 results each, for kernel 4) and FP32 throughout; C = A B
// without the worklog's alpha and beta (a poisoned C is not read).
//
// Square matrices: 1024 for the first step (the naive kernel takes a few
// ms there on an H200), 2048 for the next two. Inputs are multiples of 1/8
// in [-1, 1], so every sum is exact in FP32 in any order; the check
// compares every 61st row of C with a double-precision product.
#include "../accuracy/pairs.h"

namespace vsgemm {
const int SMALL = 1024, LARGE = 2048;

struct Problem {
    int n = 0;
    float *a = nullptr, *b = nullptr, *c = nullptr;
    std::vector<float> ha, hb;
};
Problem small_p, large_p;
Problem *now; // the problem the last setup prepared

// Kernel 1: thread (x, y) of a 32 x 32 block computes C[x][y], x the row.
// The 32 lanes of a warp differ in x, so each load of A and each store of
// C touches 32 rows.
__global__ void k1_naive(const float *__restrict__ a, const float *__restrict__ b, float *__restrict__ c, int n)
{
    int row = blockIdx.x * 32 + threadIdx.x, col = blockIdx.y * 32 + threadIdx.y;
    if (row >= n || col >= n) return;
    float acc = 0.0f;
    for (int k = 0; k < n; k++) acc += a[row * n + k] * b[k * n + col];
    c[row * n + col] = acc;
}

// Kernel 2: the same outputs per block, threads numbered so that a warp's
// lanes take consecutive columns: B and C are read and written along rows,
// and the warp's A element is one broadcast.
__global__ void k2_coalesced(const float *__restrict__ a, const float *__restrict__ b, float *__restrict__ c, int n)
{
    int row = blockIdx.x * 32 + threadIdx.x / 32, col = blockIdx.y * 32 + threadIdx.x % 32;
    if (row >= n || col >= n) return;
    float acc = 0.0f;
    for (int k = 0; k < n; k++) acc += a[row * n + k] * b[k * n + col];
    c[row * n + col] = acc;
}

// Kernel 3: a 32 x 32 tile of A and of B staged in shared memory per step
// of 32 along k, each loaded once by the block and read 32 times.
__global__ void k3_shared_tiles(const float *__restrict__ a, const float *__restrict__ b, float *__restrict__ c, int n)
{
    __shared__ float ta[32 * 32], tb[32 * 32];
    int tr = threadIdx.x / 32, tc = threadIdx.x % 32;
    const float *pa = a + (size_t)blockIdx.x * 32 * n, *pb = b + blockIdx.y * 32;
    float acc = 0.0f;
    for (int k0 = 0; k0 < n; k0 += 32) {
        ta[tr * 32 + tc] = pa[tr * n + tc];
        tb[tr * 32 + tc] = pb[tr * n + tc];
        __syncthreads();
        pa += 32;
        pb += 32 * n;
        for (int k = 0; k < 32; k++) acc += ta[tr * 32 + k] * tb[k * 32 + tc];
        __syncthreads();
    }
    c[((size_t)blockIdx.x * 32 + tr) * n + blockIdx.y * 32 + tc] = acc;
}

// Kernel 4: a 64 x 64 block of C from 64 x 8 tiles of A and 8 x 64 tiles of
// B, each thread computing a column of 8 results in registers, so each B
// value read from shared memory serves 8 multiply-adds.
const int BM = 64, BN = 64, BK = 8, TM = 8;
__global__ void k4_block_tiling(const float *__restrict__ a, const float *__restrict__ b, float *__restrict__ c, int n)
{
    __shared__ float ta[BM * BK], tb[BK * BN];
    int tc = threadIdx.x % BN, tr = threadIdx.x / BN;          // output column, group of TM rows
    int ar = threadIdx.x / BK, ac = threadIdx.x % BK;          // the A element this thread loads
    int br = threadIdx.x / BN, bc = threadIdx.x % BN;          // the B element
    const float *pa = a + (size_t)blockIdx.y * BM * n, *pb = b + blockIdx.x * BN;
    float acc[TM] = {};
    for (int k0 = 0; k0 < n; k0 += BK) {
        ta[ar * BK + ac] = pa[ar * n + ac];
        tb[br * BN + bc] = pb[br * n + bc];
        __syncthreads();
        pa += BK;
        pb += BK * n;
        for (int k = 0; k < BK; k++) {
            float bv = tb[k * BN + tc];
            for (int r = 0; r < TM; r++) acc[r] += ta[(tr * TM + r) * BK + k] * bv;
        }
        __syncthreads();
    }
    float *pc = c + ((size_t)blockIdx.y * BM + tr * TM) * n + blockIdx.x * BN + tc;
    for (int r = 0; r < TM; r++) pc[(size_t)r * n] = acc[r];
}

void prepare(Problem &p, int n)
{
    if (!p.a) {
        p.n = n;
        p.ha.resize((size_t)n * n);
        p.hb.resize((size_t)n * n);
        for (size_t i = 0; i < p.ha.size(); i++) {
            p.ha[i] = (float)((int)(ga_hash2((uint32_t)i, 41) % 17u) - 8) * 0.125f;
            p.hb[i] = (float)((int)(ga_hash2((uint32_t)i, 43) % 17u) - 8) * 0.125f;
        }
        p.a = pairs_upload(p.ha);
        p.b = pairs_upload(p.hb);
        p.c = ga_dev_alloc<float>((size_t)n * n);
    }
    ga_poison(p.c, (size_t)n * n);
    now = &p;
}
void setup_small() { prepare(small_p, SMALL); }
void setup_large() { prepare(large_p, LARGE); }

void run_kernel(int k, const Problem &p)
{
    int n = p.n;
    switch (k) {
    case 1: k1_naive<<<dim3(n / 32, n / 32), dim3(32, 32)>>>(p.a, p.b, p.c, n); break;
    case 2: k2_coalesced<<<dim3(n / 32, n / 32), 1024>>>(p.a, p.b, p.c, n); break;
    case 3: k3_shared_tiles<<<dim3(n / 32, n / 32), 1024>>>(p.a, p.b, p.c, n); break;
    default: k4_block_tiling<<<dim3(n / BN, n / BM), BM * BN / TM>>>(p.a, p.b, p.c, n); break;
    }
}

void launch_1_2(bool fast) { run_kernel(fast ? 2 : 1, small_p); }
void launch_2_3(bool fast) { run_kernel(fast ? 3 : 2, large_p); }
void launch_3_4(bool fast) { run_kernel(fast ? 4 : 3, large_p); }

bool check(char *d, size_t len)
{
    const Problem &p = *now;
    int n = p.n;
    std::vector<float> got = ga_from_dev(p.c, (size_t)n * n);
    GaChecker ck(0, 0);
    std::vector<double> row(n);
    for (int r = 0; r < n; r += 61) {
        std::fill(row.begin(), row.end(), 0.0);
        for (int k = 0; k < n; k++)
            for (int col = 0; col < n; col++) row[col] += (double)p.ha[(size_t)r * n + k] * p.hb[(size_t)k * n + col];
        for (int col = 0; col < n; col++) ck.add((size_t)r * n + col, got[(size_t)r * n + col], row[col]);
    }
    return ck.result(d, len, "C");
}

GA_PAIR("sgemm-coalesce", "uncoalesced-global-access", false,
        "SGEMM worklog 1->2: naive (lanes on rows) -> global memory coalescing, 1024^3", setup_small, launch_1_2,
        check);
GA_PAIR("sgemm-smem", "shared-memory-tiling", false,
        "SGEMM worklog 2->3: coalesced global loads -> 32x32 shared-memory tiles, 2048^3", setup_large, launch_2_3,
        check);
GA_PAIR("sgemm-blocktile", "register-blocking,shared-memory-tiling", false,
        "SGEMM worklog 3->4: shared tiles -> 1D block tiling, 8 results per thread, 2048^3", setup_large,
        launch_3_4, check);
} // namespace vsgemm
