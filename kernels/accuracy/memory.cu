// Memory-access pairs: coalescing, bank conflicts, shared-memory tiling,
// memory latency and global atomics (one counter, a sum, scattered bins).
#include "pairs.h"

// ---------------------------------------------------------------------------
// coalesce-column (uncoalesced-global-access): row sums of a 1M x 64
// matrix. Slow: one thread per row walks along its row, so the 32 lanes of a
// warp read 32 addresses 256 bytes apart (32 sectors per request). Fast: one warp
// per row, the lanes read consecutive elements and a shuffle adds the lanes.
// ---------------------------------------------------------------------------
namespace colsum {
const int ROWS = 1 << 20, COLS = 64;
float *d_in, *d_out;
std::vector<float> ref;

__global__ void rows_thread(const float *__restrict__ in, float *__restrict__ out)
{
    int r = blockIdx.x * blockDim.x + threadIdx.x;
    if (r >= ROWS) return;
    float s = 0.0f;
    for (int c = 0; c < COLS; c++) s += in[(size_t)r * COLS + c];
    out[r] = s;
}

__global__ void rows_warp(const float *__restrict__ in, float *__restrict__ out)
{
    int r = (blockIdx.x * blockDim.x + threadIdx.x) / 32, lane = threadIdx.x % 32;
    if (r >= ROWS) return;
    float s = 0.0f;
    for (int c = lane; c < COLS; c += 32) s += in[(size_t)r * COLS + c];
    for (int o = 16; o > 0; o >>= 1) s += __shfl_down_sync(0xFFFFFFFFu, s, o);
    if (lane == 0) out[r] = s;
}

void setup()
{
    if (!d_in) {
        // Multiples of 1/16 below 1: every sum is exact in any order.
        std::vector<float> h((size_t)ROWS * COLS);
        for (size_t i = 0; i < h.size(); i++) h[i] = (float)(ga_hash((uint32_t)i) & 15u) / 16.0f;
        ref.assign(ROWS, 0.0f);
        for (int r = 0; r < ROWS; r++)
            for (int c = 0; c < COLS; c++) ref[r] += h[(size_t)r * COLS + c];
        d_in = pairs_upload(h);
        d_out = ga_dev_alloc<float>(ROWS);
    }
    ga_poison(d_out, ROWS);
}

void launch(bool fast)
{
    if (fast)
        rows_warp<<<ROWS * 32 / 256, 256>>>(d_in, d_out);
    else
        rows_thread<<<ROWS / 128, 128>>>(d_in, d_out);
}

bool check(char *d, size_t n) { return pairs_compare(d_out, ref, 0, 0, "rowsum", d, n); }
GA_PAIR("coalesce-column", "uncoalesced-global-access", false,
        "row sums: thread per row (256-byte stride) -> warp per row", setup, launch, check);
} // namespace colsum

// ---------------------------------------------------------------------------
// coalesce-aos (uncoalesced-global-access): new positions x + v * dt for 32M
// particles. Slow: an array of 32-byte structs, of which the kernel reads 8
// bytes (a warp touches 32 sectors per request to use 4 sectors' worth).
// Fast: the same fields as separate arrays (structure of arrays).
// ---------------------------------------------------------------------------
namespace aos {
const int N = 32 << 20;
const float DT = 0.5f;
struct Particle {
    float x, y, z, vx, vy, vz, mass, charge;
};
Particle *d_p;
float *d_x, *d_vx, *d_out;
std::vector<float> ref;

__global__ void step_aos(const Particle *__restrict__ p, float *__restrict__ out)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < N) out[i] = fmaf(p[i].vx, DT, p[i].x);
}

__global__ void step_soa(const float *__restrict__ x, const float *__restrict__ vx, float *__restrict__ out)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < N) out[i] = fmaf(vx[i], DT, x[i]);
}

void setup()
{
    if (!d_p) {
        std::vector<Particle> hp(N);
        std::vector<float> hx(N), hvx(N);
        ref.resize(N);
        for (int i = 0; i < N; i++) {
            float x = ga_sym(i, 1), v = ga_sym(i, 2);
            hp[i] = Particle{x, 0, 0, v, 0, 0, 1, 1};
            hx[i] = x;
            hvx[i] = v;
            ref[i] = fmaf(v, DT, x);
        }
        d_p = pairs_upload(hp);
        d_x = pairs_upload(hx);
        d_vx = pairs_upload(hvx);
        d_out = ga_dev_alloc<float>(N);
    }
    ga_poison(d_out, N);
}

void launch(bool fast)
{
    if (fast)
        step_soa<<<pairs_blocks(N, 256), 256>>>(d_x, d_vx, d_out);
    else
        step_aos<<<pairs_blocks(N, 256), 256>>>(d_p, d_out);
}

bool check(char *d, size_t n) { return pairs_compare(d_out, ref, 0, 0, "x", d, n); }
GA_PAIR("coalesce-aos", "uncoalesced-global-access", false,
        "particle step: array of 32-byte structs -> structure of arrays", setup, launch, check);
} // namespace aos

// ---------------------------------------------------------------------------
// Float4 copy (control for uncoalesced-global-access): 16 sectors per
// request is a float4 load's ideal, not waste.
// ---------------------------------------------------------------------------
namespace copy4 {
const int N = 32 << 20;
float4 *d_in, *d_out;
std::vector<float> ref;

__global__ void copy_vec4(const float4 *__restrict__ in, float4 *__restrict__ out, int n4)
{
    for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n4; i += gridDim.x * blockDim.x) out[i] = in[i];
}

void setup()
{
    if (!d_in) {
        ref = pairs_fill(N, 3, -1, 1);
        d_in = (float4 *)pairs_upload(ref);
        d_out = ga_dev_alloc<float4>(N / 4);
    }
    ga_poison(d_out, N / 4);
}

void launch(bool) { copy_vec4<<<pairs_sm_count() * 8, 256>>>(d_in, d_out, N / 4); }
bool check(char *d, size_t n) { return pairs_compare((const float *)d_out, ref, 0, 0, "copy", d, n); }
GA_PAIR("control-float4-copy", "uncoalesced-global-access", true,
        "float4 grid-stride copy (16 sectors per request is its ideal)", setup, launch, check);
} // namespace copy4

// ---------------------------------------------------------------------------
// Transposes of an 8192 x 8192 matrix through a 32 x 32 shared tile, 32 x 8
// threads per block. bank-transpose (shared-bank-conflicts): the tile is
// [32][32], so reading a tile column hits one bank 32 times; the fix pads
// the tile to [32][33]. The padded kernel is also the control.
// ---------------------------------------------------------------------------
namespace transpose {
const int DIM = 8192, TILE = 32, ROWS = 8;
float *d_in, *d_out;
std::vector<float> h_in;

template <int PAD>
__global__ void transpose_tile(const float *__restrict__ in, float *__restrict__ out)
{
    __shared__ float tile[TILE][TILE + PAD];
    int x = blockIdx.x * TILE + threadIdx.x, y = blockIdx.y * TILE + threadIdx.y;
    for (int j = 0; j < TILE; j += ROWS) tile[threadIdx.y + j][threadIdx.x] = in[(size_t)(y + j) * DIM + x];
    __syncthreads();
    x = blockIdx.y * TILE + threadIdx.x;
    y = blockIdx.x * TILE + threadIdx.y;
    for (int j = 0; j < TILE; j += ROWS) out[(size_t)(y + j) * DIM + x] = tile[threadIdx.x][threadIdx.y + j];
}

void setup()
{
    if (!d_in) {
        h_in = pairs_fill((size_t)DIM * DIM, 4, -1, 1);
        d_in = pairs_upload(h_in);
        d_out = ga_dev_alloc<float>((size_t)DIM * DIM);
    }
    ga_poison(d_out, (size_t)DIM * DIM);
}

void launch(bool fast)
{
    dim3 grid(DIM / TILE, DIM / TILE), block(TILE, ROWS);
    if (fast)
        transpose_tile<1><<<grid, block>>>(d_in, d_out);
    else
        transpose_tile<0><<<grid, block>>>(d_in, d_out);
}

void launch_control(bool) { launch(true); }

bool check(char *d, size_t n)
{
    std::vector<float> got = ga_from_dev(d_out, (size_t)DIM * DIM);
    GaChecker ck(0, 0);
    for (size_t r = 0; r < (size_t)DIM; r += 7)
        for (size_t c = 0; c < (size_t)DIM; c++) ck.add(r * DIM + c, got[r * DIM + c], h_in[c * DIM + r]);
    return ck.result(d, n, "transpose");
}
GA_PAIR("bank-transpose", "shared-bank-conflicts", false,
        "tiled transpose: [32][32] tile -> [32][33] padded tile", setup, launch, check);
GA_PAIR("control-padded-transpose", "shared-bank-conflicts", true,
        "tiled transpose with a [32][33] padded tile", setup, launch_control, check);
} // namespace transpose

// ---------------------------------------------------------------------------
// bank-rows (shared-bank-conflicts): each block stages 128 rows of 32
// floats in shared memory; in pass p thread t takes a weighted sum of row
// (t + p) mod 128. With rows laid out at a stride of 32 floats, the 32
// lanes of a warp hit the same bank every step; padding the rows to 33
// floats spreads them over all 32 banks.
//
// The first version had each thread sum its own row 16 times: the compiler
// kept the row in registers after one pass (39 registers), so the conflicts
// were paid once, the kernel was bound by reading its 128 MB from DRAM (49 %
// of peak, long scoreboard the largest stall) and padding measured 1.27x.
// Reading another thread's row in each pass makes every pass a shared load
// the compiler cannot keep: at stride 32 the rows are 16-byte aligned and
// load 4 floats at a time (the first version's 8.4M load wavefronts for 32K
// warps are 8 such loads of 32 wavefronts each: the 8 lanes of a
// quarter-warp on the same 4 banks), 256 wavefronts per row per warp, or
// 1024 if the loads stay scalar; at stride 33, 32 single-float loads of one
// wavefront. Model: the shared-memory pipe at one wavefront per SM cycle,
// 256 against 32 per warp and pass (about 260 us against 32 us for 32K warps
// and 8 passes), the fast side also reading its 128 MB from DRAM (about
// 27 us): about 5x, more with scalar loads.
// ---------------------------------------------------------------------------
namespace bankrows {
const int N = 1 << 20, K = 32, BLOCK = 128, PASSES = 8, SAMPLE = 61;
float *d_in, *d_out;
std::vector<float> ref;

template <int STRIDE>
__global__ void row_dot(const float *__restrict__ in, float *__restrict__ out)
{
    __shared__ float rows[BLOCK * STRIDE];
    const float *src = in + (size_t)blockIdx.x * BLOCK * K;
    for (int e = threadIdx.x; e < BLOCK * K; e += BLOCK) rows[(e / K) * STRIDE + e % K] = src[e];
    __syncthreads();
    float acc = 0.0f;
    for (int p = 0; p < PASSES; p++) {
        const float *row = rows + ((threadIdx.x + p) % BLOCK) * STRIDE;
#pragma unroll
        for (int k = 0; k < K; k++) acc = fmaf(row[k], (float)(k + p) * 0.0625f, acc);
    }
    out[blockIdx.x * BLOCK + threadIdx.x] = acc;
}

void setup()
{
    if (!d_in) {
        std::vector<float> h((size_t)N * K);
        for (size_t i = 0; i < h.size(); i++) h[i] = (float)(ga_hash((uint32_t)i) & 7u) * 0.125f;
        ref.assign(N, 0.0f);
        for (int i = 0; i < N; i += SAMPLE) {
            float acc = 0.0f;
            size_t first = (size_t)(i / BLOCK) * BLOCK;
            for (int p = 0; p < PASSES; p++) {
                size_t row = first + (i % BLOCK + p) % BLOCK;
                for (int k = 0; k < K; k++) acc = fmaf(h[row * K + k], (float)(k + p) * 0.0625f, acc);
            }
            ref[i] = acc;
        }
        d_in = pairs_upload(h);
        d_out = ga_dev_alloc<float>(N);
    }
    ga_poison(d_out, N);
}

void launch(bool fast)
{
    if (fast)
        row_dot<K + 1><<<N / BLOCK, BLOCK>>>(d_in, d_out);
    else
        row_dot<K><<<N / BLOCK, BLOCK>>>(d_in, d_out);
}

// Every 61st output (the host's fmaf is slow): same FMAs in the same order.
bool check(char *d, size_t n)
{
    std::vector<float> got = ga_from_dev(d_out, N);
    GaChecker ck(0, 0);
    for (int i = 0; i < N; i += SAMPLE) ck.add(i, got[i], ref[i]);
    return ck.result(d, n, "rowdot");
}
GA_PAIR("bank-rows", "shared-bank-conflicts", false,
        "rows of other threads in shared memory: stride 32 -> padded stride 33", setup, launch, check);
} // namespace bankrows

// ---------------------------------------------------------------------------
// tiling-matmul (shared-memory-tiling): C = A B, 1536 x 1536 FP32. Slow: each
// thread reads its row of A and column of B from global memory (served by
// L1/L2 many times over). Fast: 16 x 16 shared-memory tiles, each element
// read from global memory once per block.
// ---------------------------------------------------------------------------
namespace matmul {
const int N = 1536, T = 16;
float *d_a, *d_b, *d_c;
std::vector<float> ha, hb;

__global__ void mm_naive(const float *__restrict__ a, const float *__restrict__ b, float *__restrict__ c)
{
    int row = blockIdx.y * T + threadIdx.y, col = blockIdx.x * T + threadIdx.x;
    float acc = 0.0f;
    for (int k = 0; k < N; k++) acc = fmaf(a[row * N + k], b[k * N + col], acc);
    c[row * N + col] = acc;
}

__global__ void mm_tiled(const float *__restrict__ a, const float *__restrict__ b, float *__restrict__ c)
{
    __shared__ float ta[T][T], tb[T][T];
    int row = blockIdx.y * T + threadIdx.y, col = blockIdx.x * T + threadIdx.x;
    float acc = 0.0f;
    for (int k0 = 0; k0 < N; k0 += T) {
        ta[threadIdx.y][threadIdx.x] = a[row * N + k0 + threadIdx.x];
        tb[threadIdx.y][threadIdx.x] = b[(k0 + threadIdx.y) * N + col];
        __syncthreads();
#pragma unroll
        for (int k = 0; k < T; k++) acc = fmaf(ta[threadIdx.y][k], tb[k][threadIdx.x], acc);
        __syncthreads();
    }
    c[row * N + col] = acc;
}

void setup()
{
    if (!d_a) {
        // Multiples of 1/8 in [-1, 1]: products and sums stay exact in FP32.
        ha.resize((size_t)N * N);
        hb.resize((size_t)N * N);
        for (size_t i = 0; i < ha.size(); i++) {
            ha[i] = (float)((int)(ga_hash((uint32_t)i) % 17u) - 8) * 0.125f;
            hb[i] = (float)((int)(ga_hash((uint32_t)i + 77u) % 17u) - 8) * 0.125f;
        }
        d_a = pairs_upload(ha);
        d_b = pairs_upload(hb);
        d_c = ga_dev_alloc<float>((size_t)N * N);
    }
    ga_poison(d_c, (size_t)N * N);
}

void launch(bool fast)
{
    dim3 grid(N / T, N / T), block(T, T);
    if (fast)
        mm_tiled<<<grid, block>>>(d_a, d_b, d_c);
    else
        mm_naive<<<grid, block>>>(d_a, d_b, d_c);
}

// Checks every 61st row against a double-precision reference (exact here).
bool check(char *d, size_t n)
{
    std::vector<float> c = ga_from_dev(d_c, (size_t)N * N);
    GaChecker ck(0, 0);
    std::vector<double> row(N);
    for (int r = 0; r < N; r += 61) {
        std::fill(row.begin(), row.end(), 0.0);
        for (int k = 0; k < N; k++) // k outer: B is read row by row
            for (int col = 0; col < N; col++) row[col] += (double)ha[(size_t)r * N + k] * hb[(size_t)k * N + col];
        for (int col = 0; col < N; col++) ck.add((size_t)r * N + col, c[(size_t)r * N + col], row[col]);
    }
    return ck.result(d, n, "C");
}
GA_PAIR("tiling-matmul", "shared-memory-tiling", false,
        "FP32 matrix product: global loads per FMA -> 16x16 shared tiles", setup, launch, check);

// ---------------------------------------------------------------------------
// regblock-matmul (register-blocking): the same product. Slow: the 16 x 16
// shared tiles above, two shared loads per FMA. Fast: each thread computes
// a column of 4 outputs (a 64 x 16 tile a block), loading B's value once
// and reusing it from a register for the 4 FMAs.
// ---------------------------------------------------------------------------
const int TM = 4;

__global__ void mm_column4(const float *__restrict__ a, const float *__restrict__ b, float *__restrict__ c)
{
    __shared__ float ta[T * TM][T], tb[T][T];
    int row0 = blockIdx.y * T * TM + threadIdx.y * TM, col = blockIdx.x * T + threadIdx.x;
    float acc[TM] = {0.0f, 0.0f, 0.0f, 0.0f};
    for (int k0 = 0; k0 < N; k0 += T) {
#pragma unroll
        for (int i = 0; i < TM; i++)
            ta[threadIdx.y * TM + i][threadIdx.x] = a[(size_t)(row0 + i) * N + k0 + threadIdx.x];
        tb[threadIdx.y][threadIdx.x] = b[(k0 + threadIdx.y) * N + col];
        __syncthreads();
#pragma unroll
        for (int k = 0; k < T; k++) {
            float bk = tb[k][threadIdx.x];
#pragma unroll
            for (int i = 0; i < TM; i++) acc[i] = fmaf(ta[threadIdx.y * TM + i][k], bk, acc[i]);
        }
        __syncthreads();
    }
#pragma unroll
    for (int i = 0; i < TM; i++) c[(size_t)(row0 + i) * N + col] = acc[i];
}

void launch_regblock(bool fast)
{
    dim3 block(T, T);
    if (fast)
        mm_column4<<<dim3(N / T, N / (T * TM)), block>>>(d_a, d_b, d_c);
    else
        mm_tiled<<<dim3(N / T, N / T), block>>>(d_a, d_b, d_c);
}
GA_PAIR("regblock-matmul", "register-blocking", false,
        "FP32 matrix product on 16x16 shared tiles: one output per thread -> a column of 4",
        setup, launch_regblock, check);
} // namespace matmul

// ---------------------------------------------------------------------------
// tiling-stencil (shared-memory-tiling): vertical convolution with a radius
// of 16 down the columns of a 8192 x 4096 float image (zero outside).
// Slow: one thread per output, 256-thread blocks along a row, each output
// reads its 33 inputs from global memory. Fast: 32 x 8-thread blocks stage a
// 96 x 32 tile (64 output rows plus the halo) in shared memory once and read
// the 33 taps from there.
//
// The first version ran along a row (1-D, radius 16) and measured 1.06x on
// the H200: its neighbours were the block's own loads, L1 served them (hit
// rate 95 %), so shared memory only replaced L1 wavefronts with shared ones
// at the same 128 bytes per cycle (issue 77 %, L1 wavefronts 76 %, the same
// on both sides). Down the columns the 33 rows an output needs were loaded
// by 33 different blocks, 16 block indices apart, which run on different
// SMs: no L1 reuse, each input crosses L2 33 times (4.4 GB for 128 MB). The
// tile reads each input about 1.5 times from L2 and then the 33 taps from
// shared memory, so the model is the L2 bound of the slow side (4.4 GB at
// the L2's bandwidth) against the shared-memory bound of the fast side (the
// same 4.4 GB at 128 bytes per SM cycle, 33.5 TB/s): about 3x to 4x.
// ---------------------------------------------------------------------------
namespace stencil {
const int W = 4096, H = 8192, R = 16, BLOCK = 256, TY = 64, TX = 32, TROWS = BLOCK / TX;
const size_t N = (size_t)W * H;
float *d_in, *d_out;
std::vector<float> h_in;

__host__ __device__ inline float weight(int k) { return (float)(R + 1 - (k < 0 ? -k : k)) * 0.0078125f; }

__global__ void conv_global(const float *__restrict__ in, float *__restrict__ out)
{
    int x = blockIdx.x * BLOCK + threadIdx.x, y = blockIdx.y;
    float acc = 0.0f;
#pragma unroll
    for (int k = -R; k <= R; k++) {
        int j = y + k;
        acc = fmaf(weight(k), (j >= 0 && j < H) ? in[(size_t)j * W + x] : 0.0f, acc);
    }
    out[(size_t)y * W + x] = acc;
}

// Block (bx, by): columns bx*32.., output rows by*64..; thread (tx, ty) of
// 32 x 8 computes rows ty, ty + 8, ..., ty + 56 of its column.
__global__ void conv_shared(const float *__restrict__ in, float *__restrict__ out)
{
    __shared__ float s[TY + 2 * R][TX];
    int tx = threadIdx.x % TX, ty = threadIdx.x / TX;
    int x = blockIdx.x * TX + tx, y0 = blockIdx.y * TY;
    for (int r = ty; r < TY + 2 * R; r += TROWS) {
        int j = y0 - R + r;
        s[r][tx] = (j >= 0 && j < H) ? in[(size_t)j * W + x] : 0.0f;
    }
    __syncthreads();
    for (int r = ty; r < TY; r += TROWS) {
        float acc = 0.0f;
#pragma unroll
        for (int k = -R; k <= R; k++) acc = fmaf(weight(k), s[r + R + k][tx], acc);
        out[(size_t)(y0 + r) * W + x] = acc;
    }
}

void setup()
{
    if (!d_in) {
        h_in = pairs_fill(N, 5, -1, 1);
        d_in = pairs_upload(h_in);
        d_out = ga_dev_alloc<float>(N);
    }
    ga_poison(d_out, N);
}

void launch(bool fast)
{
    if (fast)
        conv_shared<<<dim3(W / TX, H / TY), BLOCK>>>(d_in, d_out);
    else
        conv_global<<<dim3(W / BLOCK, H), BLOCK>>>(d_in, d_out);
}

bool check(char *d, size_t n)
{
    std::vector<float> got = ga_from_dev(d_out, N);
    GaChecker ck(0, 0);
    for (size_t i = 0; i < N; i += 97) {
        int x = (int)(i % W), y = (int)(i / W);
        float acc = 0.0f;
        for (int k = -R; k <= R; k++) {
            int j = y + k;
            acc = fmaf(weight(k), (j >= 0 && j < H) ? h_in[(size_t)j * W + x] : 0.0f, acc);
        }
        ck.add(i, got[i], acc);
    }
    return ck.result(d, n, "conv");
}
GA_PAIR("tiling-stencil", "shared-memory-tiling", false,
        "vertical convolution radius 16: 33 global loads per output -> shared tile", setup, launch, check);
} // namespace stencil

// ---------------------------------------------------------------------------
// latency-gather (memory-latency-stalls): each warp sums 64 rows of an
// L2-resident table (4M floats, rows of 32) picked by a list of row numbers;
// lane l takes element l of each row, so every table load is coalesced but
// its address comes from the load before it. Slow: `#pragma unroll 1`, one
// row number and then one row in flight per warp. Fast: eight row numbers,
// then eight rows, in flight together.
// The first version (one random element per lane, 1.02x on the H200) was
// not latency bound: 18 sectors per request, a separate line per lane, kept
// the L2's tag lookups at 96 % of their peak on both sides, so more loads
// in flight had nothing to overlap. A coalesced row is one tag lookup for
// 4 sectors, and the slow side's 64 warps per SM with one row each in
// flight (two dependent L2 hits per step) use about a tenth of L2's
// bandwidth: eight in flight is about 3x before the L2 bounds it.
// ---------------------------------------------------------------------------
namespace gather {
const int THREADS = 1 << 21, WARPS = THREADS / 32, K = 64, ROWS = 1 << 17;
int *d_rows;
float *d_table, *d_out;
std::vector<float> ref;

__global__ void gather_serial(const int *__restrict__ rows, const float *__restrict__ table, float *__restrict__ out)
{
    int t = blockIdx.x * blockDim.x + threadIdx.x, warp = t / 32, lane = t % 32;
    float acc = 0.0f;
#pragma unroll 1
    for (int k = 0; k < K; k++) acc += table[rows[k * WARPS + warp] * 32 + lane];
    out[t] = acc;
}

__global__ void gather_batched(const int *__restrict__ rows, const float *__restrict__ table, float *__restrict__ out)
{
    int t = blockIdx.x * blockDim.x + threadIdx.x, warp = t / 32, lane = t % 32;
    float acc = 0.0f;
#pragma unroll 1
    for (int k0 = 0; k0 < K; k0 += 8) {
        int j[8];
        float v[8];
#pragma unroll
        for (int u = 0; u < 8; u++) j[u] = rows[(k0 + u) * WARPS + warp];
#pragma unroll
        for (int u = 0; u < 8; u++) v[u] = table[j[u] * 32 + lane];
#pragma unroll
        for (int u = 0; u < 8; u++) acc += v[u]; // same order as the slow side
    }
    out[t] = acc;
}

void setup()
{
    if (!d_rows) {
        std::vector<int> hr((size_t)WARPS * K);
        std::vector<float> ht((size_t)ROWS * 32);
        for (size_t i = 0; i < ht.size(); i++) ht[i] = (float)(ga_hash((uint32_t)i + 99u) & 255u) * 0.25f;
        for (size_t i = 0; i < hr.size(); i++) hr[i] = (int)(ga_hash2((uint32_t)i, 7) % ROWS);
        ref.assign(THREADS, 0.0f);
        for (int t = 0; t < THREADS; t++)
            for (int k = 0; k < K; k++) ref[t] += ht[(size_t)hr[(size_t)k * WARPS + t / 32] * 32 + t % 32];
        d_rows = pairs_upload(hr);
        d_table = pairs_upload(ht);
        d_out = ga_dev_alloc<float>(THREADS);
    }
    ga_poison(d_out, THREADS);
}

void launch(bool fast)
{
    if (fast)
        gather_batched<<<THREADS / 256, 256>>>(d_rows, d_table, d_out);
    else
        gather_serial<<<THREADS / 256, 256>>>(d_rows, d_table, d_out);
}

bool check(char *d, size_t n) { return pairs_compare(d_out, ref, 0, 0, "gather", d, n); }
GA_PAIR("latency-gather", "memory-latency-stalls", false,
        "dependent row gathers: one row in flight per warp -> eight", setup, launch, check);
} // namespace gather

// ---------------------------------------------------------------------------
// Global atomics: count (atomics-count) and sum (atomics-sum) over 16M
// values. Slow: every matching thread does atomicAdd on one global counter.
// Fast: warp and block reduction first, then one atomicAdd per block.
// ---------------------------------------------------------------------------
namespace atomics {
const int N = 16 << 20, BLOCK = 256;
int *d_val;
unsigned long long *d_res;
unsigned long long ref_count, ref_sum;

__device__ __forceinline__ unsigned block_total(unsigned v)
{
    __shared__ unsigned warp_tot[BLOCK / 32];
    for (int o = 16; o > 0; o >>= 1) v += __shfl_down_sync(0xFFFFFFFFu, v, o);
    if (threadIdx.x % 32 == 0) warp_tot[threadIdx.x / 32] = v;
    __syncthreads();
    unsigned t = 0;
    if (threadIdx.x < 32) {
        t = threadIdx.x < BLOCK / 32 ? warp_tot[threadIdx.x] : 0u;
        for (int o = 16; o > 0; o >>= 1) t += __shfl_down_sync(0xFFFFFFFFu, t, o);
    }
    return t; // valid in thread 0
}

__global__ void count_atomic(const int *__restrict__ v, unsigned long long *res)
{
    int i = blockIdx.x * BLOCK + threadIdx.x;
    if (v[i] > 64) atomicAdd(res, 1ull);
}

__global__ void count_block(const int *__restrict__ v, unsigned long long *res)
{
    int i = blockIdx.x * BLOCK + threadIdx.x;
    unsigned t = block_total(v[i] > 64 ? 1u : 0u);
    if (threadIdx.x == 0) atomicAdd(res, (unsigned long long)t);
}

__global__ void sum_atomic(const int *__restrict__ v, unsigned long long *res)
{
    int i = blockIdx.x * BLOCK + threadIdx.x;
    atomicAdd(res + 1, (unsigned long long)v[i]);
}

__global__ void sum_block(const int *__restrict__ v, unsigned long long *res)
{
    int i = blockIdx.x * BLOCK + threadIdx.x;
    unsigned t = block_total((unsigned)v[i]);
    if (threadIdx.x == 0) atomicAdd(res + 1, (unsigned long long)t);
}

void setup()
{
    if (!d_val) {
        std::vector<int> h(N);
        ref_count = ref_sum = 0;
        for (int i = 0; i < N; i++) {
            h[i] = (int)(ga_hash(i + 5u) & 127u);
            ref_count += h[i] > 64;
            ref_sum += h[i];
        }
        d_val = pairs_upload(h);
        d_res = ga_dev_alloc<unsigned long long>(2);
    }
    ga_poison(d_res, 2);
}

void launch_count(bool fast)
{
    GA_CHECK(cudaMemsetAsync(d_res, 0, sizeof(unsigned long long)));
    if (fast)
        count_block<<<N / BLOCK, BLOCK>>>(d_val, d_res);
    else
        count_atomic<<<N / BLOCK, BLOCK>>>(d_val, d_res);
}

void launch_sum(bool fast)
{
    GA_CHECK(cudaMemsetAsync(d_res + 1, 0, sizeof(unsigned long long)));
    if (fast)
        sum_block<<<N / BLOCK, BLOCK>>>(d_val, d_res);
    else
        sum_atomic<<<N / BLOCK, BLOCK>>>(d_val, d_res);
}

bool check_one(int k, unsigned long long want, char *d, size_t n)
{
    std::vector<unsigned long long> got = ga_from_dev(d_res, 2);
    if (got[k] == want) return true;
    snprintf(d, n, "got %llu, expected %llu", got[k], want);
    return false;
}
bool check_count(char *d, size_t n) { return check_one(0, ref_count, d, n); }
bool check_sum(char *d, size_t n) { return check_one(1, ref_sum, d, n); }
GA_PAIR("atomics-count", "global-atomic-contention", false,
        "count matches: atomicAdd per match -> one per block", setup, launch_count, check_count);
GA_PAIR("atomics-sum", "global-atomic-contention", false,
        "integer sum: atomicAdd per element -> one per block", setup, launch_sum, check_sum);
} // namespace atomics

// ---------------------------------------------------------------------------
// Global atomics on scattered addresses: a 1024-bin histogram of 16M words,
// three 10-bit keys a word. Slow: every key does atomicAdd on its global
// bin. Fast: a one-wave grid-stride loop; each block counts into its own
// bins in shared memory (one shared atomic a key) and adds its non-zero
// bins to the global ones at the end.
// ---------------------------------------------------------------------------
namespace bins {
const int N = 16 << 20, BLOCK = 256, BINS = 1024, KEYS = 3;
unsigned *d_words, *d_bins;
std::vector<unsigned> ref;

__device__ __forceinline__ unsigned key(unsigned w, int k) { return (w >> (10 * k)) & (BINS - 1); }

__global__ void global_bins(const unsigned *__restrict__ w, unsigned *bins)
{
    unsigned v = w[blockIdx.x * BLOCK + threadIdx.x];
    for (int k = 0; k < KEYS; k++) atomicAdd(&bins[key(v, k)], 1u);
}

__global__ void shared_bins(const unsigned *__restrict__ w, unsigned *bins)
{
    __shared__ unsigned s[BINS];
    for (int b = threadIdx.x; b < BINS; b += BLOCK) s[b] = 0;
    __syncthreads();
    for (int i = blockIdx.x * BLOCK + threadIdx.x; i < N; i += gridDim.x * BLOCK) {
        unsigned v = w[i];
        for (int k = 0; k < KEYS; k++) atomicAdd(&s[key(v, k)], 1u);
    }
    __syncthreads();
    for (int b = threadIdx.x; b < BINS; b += BLOCK)
        if (s[b]) atomicAdd(&bins[b], s[b]);
}

void setup()
{
    if (!d_words) {
        std::vector<unsigned> h(N);
        ref.assign(BINS, 0);
        for (int i = 0; i < N; i++) {
            h[i] = ga_hash(i + 11u);
            for (int k = 0; k < KEYS; k++) ref[(h[i] >> (10 * k)) & (BINS - 1)]++;
        }
        d_words = pairs_upload(h);
        d_bins = ga_dev_alloc<unsigned>(BINS);
    }
    ga_poison(d_bins, BINS);
}

void launch(bool fast)
{
    GA_CHECK(cudaMemsetAsync(d_bins, 0, BINS * sizeof(unsigned)));
    if (fast) {
        int per_sm = 0;
        GA_CHECK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per_sm, shared_bins, BLOCK, 0));
        shared_bins<<<per_sm * pairs_sm_count(), BLOCK>>>(d_words, d_bins);
    } else {
        global_bins<<<N / BLOCK, BLOCK>>>(d_words, d_bins);
    }
}

bool check(char *d, size_t n)
{
    std::vector<unsigned> got = ga_from_dev(d_bins, BINS);
    for (int b = 0; b < BINS; b++)
        if (got[b] != ref[b]) {
            snprintf(d, n, "bin %d: got %u, expected %u", b, got[b], ref[b]);
            return false;
        }
    return true;
}
GA_PAIR("atomics-bins", "global-atomic-contention", false,
        "1024-bin histogram: atomicAdd per key on global bins -> shared-memory bins per block",
        setup, launch, check);
} // namespace bins
