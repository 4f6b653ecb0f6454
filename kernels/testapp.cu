// gpuadvise-testapp: kernels with known performance behaviour, for the GPU
// test suite of gpuadvise. Each kernel is launched on its own (no helper
// kernels), so a profile of this program holds exactly the kernels named
// here. Every result is checked on the host.
//
//   gpuadvise-testapp [--list] [--only a,b] [--repeat N] [--rounds N] [--crash-after K]
//                     [--fork N] [--no-kernels] [--exit-code X] [--underscore-exit]
//   --underscore-exit ends with _exit(), skipping atexit handlers (and so the
//   profiler's own end-of-process record).
//   --spin-wait runs only a pair of kernels on two streams: one spins until
//   the other sets a flag.  Plain, they run side by side and end at once;
//   under a profiler that runs a measured kernel alone, the spinning one
//   cannot end (it gives up after 60 s and the program fails): the case a
//   profiler's watchdog is for.  Not in --list.
#include "common.h"

#include <string>
#include <sys/types.h>
#include <sys/wait.h>
#include <unistd.h>

// ---------------------------------------------------------------------------
// Kernels
// ---------------------------------------------------------------------------

// Plain float copy: each warp reads and writes 128 contiguous bytes.
__global__ void copy_coalesced(const float *__restrict__ in, float *__restrict__ out, unsigned n)
{
    unsigned i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) out[i] = in[i];
}

// Gathering copy: thread i reads element (i % m) * 32 + i / m with m = n / 32,
// so neighbouring threads read addresses 32 floats (128 bytes) apart: every
// thread of a warp needs its own sector. Each input element is still read
// exactly once; the writes are coalesced.
__global__ void copy_strided(const float *__restrict__ in, float *__restrict__ out, unsigned n)
{
    unsigned i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n) return;
    unsigned m = n / 32;
    unsigned src = (i % m) * 32 + i / m;
    out[i] = in[src];
}

// The two halves of branch_evenodd's work: equally long dependent chains of
// different kinds, so the compiler cannot merge the two paths into one.
__host__ __device__ inline float evenodd_float_path(float x, int iters)
{
    for (int k = 0; k < iters; k++) {
        x = fmaf(x, 0.9990f, 0.0100f);
        x = fmaf(x, 1.0005f, -0.0050f);
    }
    return x;
}

__host__ __device__ inline float evenodd_int_path(unsigned u, int iters)
{
    for (int k = 0; k < iters; k++) {
        u = u * 1664525u + 1013904223u;
        u ^= u >> 15;
    }
    return (float)(u >> 8) * (1.0f / 16777216.0f);
}

// Even lanes run the float chain, odd lanes the integer chain: each warp
// executes both paths with half of its threads masked off.
__global__ void branch_evenodd(const float *__restrict__ in, float *__restrict__ out, unsigned n,
                               int iters)
{
    unsigned i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n) return;
    float v = in[i];
    float r;
    if (threadIdx.x % 2 == 0)
        r = evenodd_float_path(v, iters);
    else
        r = evenodd_int_path(__float_as_uint(v), iters);
    out[i] = r;
}

// One warp, one long chain of dependent FP64 adds per thread: latency bound.
__global__ void chain_one_warp(double *out, double step, int count)
{
    double acc = 0.0;
    for (int k = 0; k < count; k++) acc += step;
    out[blockIdx.x * blockDim.x + threadIdx.x] = acc;
}

// Eight independent FP32 FMA chains per thread, all in registers; only the
// final sum is stored. Bound by the FMA pipe.
#define FMA_CHAINS 8

// Host reference for one thread of fma_loop (same operations, same order).
static float fma_chains_host(unsigned tid, float mul, int iters)
{
    float a[FMA_CHAINS];
    for (int j = 0; j < FMA_CHAINS; j++) a[j] = (float)((tid + 7u * j) % 1024u) * (1.0f / 1024.0f);
    for (int k = 0; k < iters; k++)
        for (int j = 0; j < FMA_CHAINS; j++) a[j] = fmaf(a[j], mul, 0.0001f * (float)(j + 1));
    float s = 0.0f;
    for (int j = 0; j < FMA_CHAINS; j++) s += a[j];
    return s;
}

__global__ void fma_loop(float *out, float mul, int iters)
{
    unsigned tid = blockIdx.x * blockDim.x + threadIdx.x;
    float a[FMA_CHAINS];
#pragma unroll
    for (int j = 0; j < FMA_CHAINS; j++) a[j] = (float)((tid + 7u * j) % 1024u) * (1.0f / 1024.0f);
    for (int k = 0; k < iters; k++) {
#pragma unroll
        for (int j = 0; j < FMA_CHAINS; j++) a[j] = fmaf(a[j], mul, 0.0001f * (float)(j + 1));
    }
    float s = 0.0f;
#pragma unroll
    for (int j = 0; j < FMA_CHAINS; j++) s += a[j];
    out[tid] = s;
}

// C = A * B, row-major N x N floats, one output per thread, no reuse.
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

// out (cols x rows) = transpose of in (rows x cols): reads along rows
// (coalesced), writes down columns (one sector per thread).
__global__ void transpose_naive(const float *__restrict__ in, float *__restrict__ out, int rows,
                                int cols)
{
    int x = blockIdx.x * blockDim.x + threadIdx.x; // column of in
    int y = blockIdx.y * blockDim.y + threadIdx.y; // row of in
    if (x < cols && y < rows) out[(size_t)x * rows + y] = in[(size_t)y * cols + x];
}

// Each block stages a 32x32 tile in shared memory, then every warp reads it
// down a column: all 32 lanes hit the same bank (32-way conflict).
// Launched with 32 x 8 threads; out[i] = reps * (sum of tile row threadIdx.x).
__global__ void smem_conflict(const float *__restrict__ in, float *__restrict__ out, int reps)
{
    __shared__ float tile[32][32];
    const float *src = in + (size_t)blockIdx.x * 1024;
    for (int r = threadIdx.y; r < 32; r += blockDim.y) tile[r][threadIdx.x] = src[r * 32 + threadIdx.x];
    __syncthreads();

    float sum = 0.0f;
    for (int r = 0; r < reps; r++) {
#pragma unroll
        for (int k = 0; k < 32; k++) sum += tile[threadIdx.x][(k + r + threadIdx.y) & 31];
    }
    out[(size_t)blockIdx.x * 256 + threadIdx.y * 32 + threadIdx.x] = sum;
}

// 256 additions in one block: the launch costs more than the work.
__global__ void tiny_add(const float *__restrict__ a, const float *__restrict__ b,
                         float *__restrict__ c, int n)
{
    int i = threadIdx.x;
    if (i < n) c[i] = a[i] + b[i];
}

// The --spin-wait pair: spin_wait waits for spin_release's flag, at most
// about 60 s of its own clock (then it writes 0: failed).
__global__ void spin_wait(volatile int *flag, int *done, long long max_cycles)
{
    long long t0 = clock64();
    while (*flag == 0)
        if (clock64() - t0 > max_cycles) {
            *done = 0;
            return;
        }
    *done = 1;
}

__global__ void spin_release(volatile int *flag)
{
    __threadfence_system();
    *flag = 1;
}

// ---------------------------------------------------------------------------
// Launch bookkeeping (--repeat, --crash-after)
// ---------------------------------------------------------------------------

static long g_repeat = 1;
static long g_crash_after = 0; // 0: never
static long g_launches = 0;

// Called after every kernel launch: waits for it, counts it and aborts when
// --crash-after says so.
static void launched(const char *name)
{
    GA_CHECK_LAUNCH();
    GA_CHECK(cudaDeviceSynchronize());
    g_launches++;
    if (g_crash_after > 0 && g_launches == g_crash_after) {
        fprintf(stderr, "gpuadvise-testapp: aborting after launch %ld (%s) as asked\n", g_launches,
                name);
        fflush(stdout);
        fflush(stderr);
        abort();
    }
}

static bool fail(char *detail, size_t len, const GaChecker &ck, const char *what)
{
    ck.describe(detail, len, what);
    return false;
}

// ---------------------------------------------------------------------------
// Runners: allocate, launch g_repeat times, check, free.
// ---------------------------------------------------------------------------

static bool run_copy_coalesced(char *detail, size_t len)
{
    const unsigned n = 32u << 20;
    std::vector<float> h(n);
    for (unsigned i = 0; i < n; i++) h[i] = (float)(ga_hash(i) & 0xFFFFFF);
    float *in = ga_dev_alloc<float>(n), *out = ga_dev_alloc<float>(n);
    ga_to_dev(in, h);
    ga_poison(out, n);
    for (long r = 0; r < g_repeat; r++) {
        copy_coalesced<<<n / 256, 256>>>(in, out, n);
        launched("copy_coalesced");
    }
    std::vector<float> got = ga_from_dev(out, n);
    ga_dev_free(in);
    ga_dev_free(out);
    GaChecker ck(0.0, 0.0);
    for (unsigned i = 0; i < n; i++) ck.add(i, got[i], h[i]);
    return ck.ok() || fail(detail, len, ck, "out");
}

static bool run_copy_strided(char *detail, size_t len)
{
    const unsigned n = 32u << 20, m = n / 32;
    std::vector<float> h(n);
    for (unsigned i = 0; i < n; i++) h[i] = (float)(ga_hash(i + 12345u) & 0xFFFFFF);
    float *in = ga_dev_alloc<float>(n), *out = ga_dev_alloc<float>(n);
    ga_to_dev(in, h);
    ga_poison(out, n);
    for (long r = 0; r < g_repeat; r++) {
        copy_strided<<<n / 256, 256>>>(in, out, n);
        launched("copy_strided");
    }
    std::vector<float> got = ga_from_dev(out, n);
    ga_dev_free(in);
    ga_dev_free(out);
    GaChecker ck(0.0, 0.0);
    for (unsigned i = 0; i < n; i++) ck.add(i, got[i], h[(i % m) * 32 + i / m]);
    return ck.ok() || fail(detail, len, ck, "out");
}

static bool run_branch_evenodd(char *detail, size_t len)
{
    const unsigned n = 4u << 20;
    const int iters = 1024;
    std::vector<float> h(n);
    for (unsigned i = 0; i < n; i++) h[i] = ga_unit(i, 1);
    float *in = ga_dev_alloc<float>(n), *out = ga_dev_alloc<float>(n);
    ga_to_dev(in, h);
    ga_poison(out, n);
    for (long r = 0; r < g_repeat; r++) {
        branch_evenodd<<<n / 256, 256>>>(in, out, n, iters);
        launched("branch_evenodd");
    }
    std::vector<float> got = ga_from_dev(out, n);
    ga_dev_free(in);
    ga_dev_free(out);
    GaChecker ck(1e-6, 1e-5);
    for (unsigned i = 0; i < n; i += (i < 4096 ? 1 : 17)) {
        float ref;
        if (i % 2 == 0) {
            ref = evenodd_float_path(h[i], iters);
        } else {
            unsigned u;
            memcpy(&u, &h[i], sizeof u);
            ref = evenodd_int_path(u, iters);
        }
        ck.add(i, got[i], ref);
    }
    return ck.ok() || fail(detail, len, ck, "out");
}

static bool run_chain_one_warp(char *detail, size_t len)
{
    const int count = 300000;
    const double step = 3.14;
    double *out = ga_dev_alloc<double>(32);
    ga_poison(out, 32);
    for (long r = 0; r < g_repeat; r++) {
        chain_one_warp<<<1, 32>>>(out, step, count);
        launched("chain_one_warp");
    }
    std::vector<double> got = ga_from_dev(out, 32);
    ga_dev_free(out);
    double ref = 0.0;
    for (int k = 0; k < count; k++) ref += step;
    GaChecker ck(0.0, 1e-12);
    for (int i = 0; i < 32; i++) ck.add(i, got[i], ref);
    return ck.ok() || fail(detail, len, ck, "out");
}

static bool run_fma_loop(char *detail, size_t len)
{
    const unsigned blocks = 132 * 8, threads = 256, n = blocks * threads;
    const int iters = 8192;
    const float mul = 0.9999f;
    float *out = ga_dev_alloc<float>(n);
    ga_poison(out, n);
    for (long r = 0; r < g_repeat; r++) {
        fma_loop<<<blocks, threads>>>(out, mul, iters);
        launched("fma_loop");
    }
    std::vector<float> got = ga_from_dev(out, n);
    ga_dev_free(out);
    GaChecker ck(1e-5, 1e-5);
    for (unsigned i = 0; i < n; i += (i < 256 ? 1 : 101)) ck.add(i, got[i], fma_chains_host(i, mul, iters));
    return ck.ok() || fail(detail, len, ck, "out");
}

static bool run_matmul_naive(char *detail, size_t len)
{
    const int n = 2048;
    const size_t nn = (size_t)n * n;
    std::vector<float> ha(nn), hb(nn);
    for (size_t i = 0; i < nn; i++) {
        ha[i] = ga_sym((uint32_t)i, 11);
        hb[i] = ga_sym((uint32_t)i, 12);
    }
    float *a = ga_dev_alloc<float>(nn), *b = ga_dev_alloc<float>(nn), *c = ga_dev_alloc<float>(nn);
    ga_to_dev(a, ha);
    ga_to_dev(b, hb);
    ga_poison(c, nn);
    dim3 block(16, 16), grid(n / 16, n / 16);
    for (long r = 0; r < g_repeat; r++) {
        matmul_naive<<<grid, block>>>(a, b, c, n);
        launched("matmul_naive");
    }
    std::vector<float> got = ga_from_dev(c, nn);
    ga_dev_free(a);
    ga_dev_free(b);
    ga_dev_free(c);
    std::vector<float> bt(nn); // B transposed, so the host dot products stream
    for (size_t k = 0; k < (size_t)n; k++)
        for (size_t j = 0; j < (size_t)n; j++) bt[j * n + k] = hb[k * n + j];
    GaChecker ck(2e-3, 1e-4);
    for (int s = 0; s < 4096; s++) {
        // Corners plus pseudo-random entries.
        int row = s < 4 ? (s & 1) * (n - 1) : (int)(ga_hash(2 * s) % n);
        int col = s < 4 ? (s >> 1) * (n - 1) : (int)(ga_hash(2 * s + 1) % n);
        double ref = 0.0;
        for (int k = 0; k < n; k++) ref += (double)ha[(size_t)row * n + k] * bt[(size_t)col * n + k];
        ck.add((size_t)row * n + col, got[(size_t)row * n + col], ref);
    }
    return ck.ok() || fail(detail, len, ck, "c");
}

static bool run_transpose_naive(char *detail, size_t len)
{
    const int rows = 8192, cols = 4096;
    const size_t nn = (size_t)rows * cols;
    std::vector<float> h(nn);
    for (size_t i = 0; i < nn; i++) h[i] = (float)(ga_hash((uint32_t)i + 777u) & 0xFFFFFF);
    float *in = ga_dev_alloc<float>(nn), *out = ga_dev_alloc<float>(nn);
    ga_to_dev(in, h);
    ga_poison(out, nn);
    dim3 block(32, 8), grid(cols / 32, rows / 8);
    for (long r = 0; r < g_repeat; r++) {
        transpose_naive<<<grid, block>>>(in, out, rows, cols);
        launched("transpose_naive");
    }
    std::vector<float> got = ga_from_dev(out, nn);
    ga_dev_free(in);
    ga_dev_free(out);
    GaChecker ck(0.0, 0.0);
    for (size_t y = 0; y < (size_t)rows; y++)
        for (size_t x = 0; x < (size_t)cols; x++) ck.add(x * rows + y, got[x * rows + y], h[y * cols + x]);
    return ck.ok() || fail(detail, len, ck, "out");
}

static bool run_smem_conflict(char *detail, size_t len)
{
    const int blocks = 132 * 4, reps = 64;
    const size_t nin = (size_t)blocks * 1024, nout = (size_t)blocks * 256;
    std::vector<float> h(nin);
    for (size_t i = 0; i < nin; i++) h[i] = (float)(ga_hash((uint32_t)i + 99u) & 7u);
    float *in = ga_dev_alloc<float>(nin), *out = ga_dev_alloc<float>(nout);
    ga_to_dev(in, h);
    ga_poison(out, nout);
    for (long r = 0; r < g_repeat; r++) {
        smem_conflict<<<blocks, dim3(32, 8)>>>(in, out, reps);
        launched("smem_conflict");
    }
    std::vector<float> got = ga_from_dev(out, nout);
    ga_dev_free(in);
    ga_dev_free(out);
    GaChecker ck(0.0, 0.0); // small integers: exact
    for (size_t b = 0; b < (size_t)blocks; b++)
        for (int ty = 0; ty < 8; ty++)
            for (int tx = 0; tx < 32; tx++) {
                double row = 0.0;
                for (int k = 0; k < 32; k++) row += h[b * 1024 + tx * 32 + k];
                size_t o = b * 256 + ty * 32 + tx;
                ck.add(o, got[o], row * reps);
            }
    return ck.ok() || fail(detail, len, ck, "out");
}

static bool run_tiny_add(char *detail, size_t len)
{
    const int n = 256;
    std::vector<float> ha(n), hb(n);
    for (int i = 0; i < n; i++) {
        ha[i] = (float)i;
        hb[i] = 0.5f * (float)(n - i);
    }
    float *a = ga_dev_alloc<float>(n), *b = ga_dev_alloc<float>(n), *c = ga_dev_alloc<float>(n);
    ga_to_dev(a, ha);
    ga_to_dev(b, hb);
    ga_poison(c, n);
    for (long r = 0; r < g_repeat; r++) {
        tiny_add<<<1, 256>>>(a, b, c, n);
        launched("tiny_add");
    }
    std::vector<float> got = ga_from_dev(c, n);
    ga_dev_free(a);
    ga_dev_free(b);
    ga_dev_free(c);
    GaChecker ck(0.0, 0.0);
    for (int i = 0; i < n; i++) ck.add(i, got[i], ha[i] + hb[i]);
    return ck.ok() || fail(detail, len, ck, "c");
}

// One spin_wait on a stream of its own, then spin_release on another: 0
// when the waiter saw the flag.
static int run_spin_wait()
{
    int *flag = ga_dev_alloc<int>(1), *done = ga_dev_alloc<int>(1);
    cudaStream_t a, b;
    int clock_khz = 0, got = -1;
    GA_CHECK(cudaDeviceGetAttribute(&clock_khz, cudaDevAttrClockRate, 0));
    GA_CHECK(cudaMemset(flag, 0, sizeof(int)));
    GA_CHECK(cudaMemset(done, 0xff, sizeof(int)));
    GA_CHECK(cudaStreamCreateWithFlags(&a, cudaStreamNonBlocking));
    GA_CHECK(cudaStreamCreateWithFlags(&b, cudaStreamNonBlocking));
    // Both loaded now: with lazy loading (the default) the release kernel
    // would be loaded at its launch, which waits for the spinning one.
    cudaFuncAttributes attr;
    GA_CHECK(cudaFuncGetAttributes(&attr, spin_wait));
    GA_CHECK(cudaFuncGetAttributes(&attr, spin_release));
    GA_CHECK(cudaDeviceSynchronize());
    spin_wait<<<1, 1, 0, a>>>(flag, done, 60LL * clock_khz * 1000);
    GA_CHECK_LAUNCH();
    spin_release<<<1, 1, 0, b>>>(flag);
    GA_CHECK_LAUNCH();
    GA_CHECK(cudaDeviceSynchronize());
    GA_CHECK(cudaMemcpy(&got, done, sizeof(int), cudaMemcpyDeviceToHost));
    GA_CHECK(cudaStreamDestroy(a));
    GA_CHECK(cudaStreamDestroy(b));
    ga_dev_free(flag);
    ga_dev_free(done);
    printf("spin_wait %s\n", got == 1 ? "ok" : "gave up");
    return got == 1 ? 0 : 1;
}

// ---------------------------------------------------------------------------
// Command line
// ---------------------------------------------------------------------------

struct TestKernel {
    const char *name;
    bool (*run)(char *detail, size_t len);
};

static const TestKernel kKernels[] = {
    {"copy_coalesced", run_copy_coalesced},   {"copy_strided", run_copy_strided},
    {"branch_evenodd", run_branch_evenodd},   {"chain_one_warp", run_chain_one_warp},
    {"fma_loop", run_fma_loop},               {"matmul_naive", run_matmul_naive},
    {"transpose_naive", run_transpose_naive}, {"smem_conflict", run_smem_conflict},
    {"tiny_add", run_tiny_add},
};
static const int kNumKernels = (int)(sizeof kKernels / sizeof kKernels[0]);

static void usage(FILE *f)
{
    fprintf(f, "usage: gpuadvise-testapp [--list] [--only a,b] [--repeat N] [--rounds N]\n"
               "                         [--crash-after K]\n"
               "                         [--fork N] [--no-kernels] [--exit-code X]\n"
               "                         [--underscore-exit] [--spin-wait] [--reset]\n");
}

// Runs the selected kernels in this process. Returns 0 or 1 (a wrong result).
static int run_selected(const std::vector<int> &sel, bool no_kernels)
{
    if (no_kernels) {
        GA_CHECK(cudaFree(0));
        return 0;
    }
    for (int k : sel) {
        char detail[512] = "";
        if (!kKernels[k].run(detail, sizeof detail)) {
            printf("kernel %s FAILED (%s)\n", kKernels[k].name, detail);
            fprintf(stderr, "gpuadvise-testapp: kernel %s gave a wrong result: %s\n", kKernels[k].name,
                    detail);
            return 1;
        }
        printf("kernel %s ok\n", kKernels[k].name);
    }
    return 0;
}

int main(int argc, char **argv)
{
    setvbuf(stdout, nullptr, _IOLBF, 0);
    std::vector<int> sel;
    bool list = false, no_kernels = false, have_only = false, underscore_exit = false;
    bool spin = false, reset = false;
    long forks = 0, exit_code = 0, rounds = 1;

    for (int i = 1; i < argc; i++) {
        const char *val = nullptr;
        int m;
        if (strcmp(argv[i], "--list") == 0) {
            list = true;
        } else if (strcmp(argv[i], "--no-kernels") == 0) {
            no_kernels = true;
        } else if (strcmp(argv[i], "--underscore-exit") == 0) {
            underscore_exit = true;
        } else if (strcmp(argv[i], "--spin-wait") == 0) {
            spin = true;
        } else if (strcmp(argv[i], "--reset") == 0) {
            // cudaDeviceReset after each round, as some programs do before
            // they exit: the context goes while the profiler holds it, and
            // a next round creates another.
            reset = true;
        } else if (strcmp(argv[i], "--help") == 0 || strcmp(argv[i], "-h") == 0) {
            usage(stdout);
            return 0;
        } else if ((m = ga_flag_value(argc, argv, &i, "--only", &val)) != 0) {
            if (m < 0) {
                fprintf(stderr, "gpuadvise-testapp: --only needs a list of kernel names\n");
                return 2;
            }
            have_only = true;
            std::string s(val);
            size_t pos = 0;
            while (pos <= s.size()) {
                size_t comma = s.find(',', pos);
                if (comma == std::string::npos) comma = s.size();
                std::string name = s.substr(pos, comma - pos);
                pos = comma + 1;
                if (name.empty()) continue;
                int found = -1;
                for (int k = 0; k < kNumKernels; k++)
                    if (name == kKernels[k].name) found = k;
                if (found < 0) {
                    fprintf(stderr, "gpuadvise-testapp: unknown kernel '%s' (see --list)\n", name.c_str());
                    return 2;
                }
                sel.push_back(found);
            }
        } else if ((m = ga_flag_value(argc, argv, &i, "--repeat", &val)) != 0) {
            if (m < 0 || !ga_parse_long(val, 1, 1000000, &g_repeat)) {
                fprintf(stderr, "gpuadvise-testapp: --repeat needs a positive integer\n");
                return 2;
            }
        } else if ((m = ga_flag_value(argc, argv, &i, "--rounds", &val)) != 0) {
            // The selected kernels, in order, N times: a loop whose
            // iteration is several kernels (loop replay).
            if (m < 0 || !ga_parse_long(val, 1, 100000, &rounds)) {
                fprintf(stderr, "gpuadvise-testapp: --rounds needs a positive integer\n");
                return 2;
            }
        } else if ((m = ga_flag_value(argc, argv, &i, "--crash-after", &val)) != 0) {
            if (m < 0 || !ga_parse_long(val, 1, 1000000000L, &g_crash_after)) {
                fprintf(stderr, "gpuadvise-testapp: --crash-after needs a positive integer\n");
                return 2;
            }
        } else if ((m = ga_flag_value(argc, argv, &i, "--fork", &val)) != 0) {
            if (m < 0 || !ga_parse_long(val, 0, 64, &forks)) {
                fprintf(stderr, "gpuadvise-testapp: --fork needs an integer in 0..64\n");
                return 2;
            }
        } else if ((m = ga_flag_value(argc, argv, &i, "--exit-code", &val)) != 0) {
            if (m < 0 || !ga_parse_long(val, 0, 255, &exit_code)) {
                fprintf(stderr, "gpuadvise-testapp: --exit-code needs an integer in 0..255\n");
                return 2;
            }
        } else {
            fprintf(stderr, "gpuadvise-testapp: unknown argument '%s'\n", argv[i]);
            usage(stderr);
            return 2;
        }
    }

    if (list) {
        for (int k = 0; k < kNumKernels; k++) printf("%s\n", kKernels[k].name);
        return 0;
    }
    if (spin)
        return run_spin_wait();
    if (have_only && sel.empty()) {
        fprintf(stderr, "gpuadvise-testapp: --only selected no kernels\n");
        return 2;
    }
    if (!have_only)
        for (int k = 0; k < kNumKernels; k++) sel.push_back(k);

    if (forks > 0) {
        // No CUDA call has been made yet: each child initialises its own context.
        fflush(stdout);
        fflush(stderr);
        std::vector<pid_t> kids;
        for (long c = 0; c < forks; c++) {
            pid_t pid = fork();
            if (pid < 0) {
                perror("gpuadvise-testapp: fork");
                break;
            }
            if (pid == 0) {
                int rc = run_selected(sel, no_kernels);
                fflush(stdout);
                exit(rc != 0 ? rc : (int)exit_code);
            }
            kids.push_back(pid);
        }
        bool all_ok = (long)kids.size() == forks;
        for (pid_t pid : kids) {
            int st = 0;
            if (waitpid(pid, &st, 0) < 0) {
                perror("gpuadvise-testapp: waitpid");
                all_ok = false;
                continue;
            }
            if (WIFEXITED(st) && WEXITSTATUS(st) == exit_code) continue;
            all_ok = false;
            if (WIFSIGNALED(st))
                fprintf(stderr, "gpuadvise-testapp: child %d killed by signal %d\n", (int)pid, WTERMSIG(st));
            else
                fprintf(stderr, "gpuadvise-testapp: child %d exited with status %d\n", (int)pid,
                        WIFEXITED(st) ? WEXITSTATUS(st) : -1);
        }
        if (!all_ok) return 1;
        return (int)exit_code;
    }

    int rc = 0;
    for (long r = 0; r < rounds && rc == 0; r++) {
        rc = run_selected(sel, no_kernels);
        if (reset) GA_CHECK(cudaDeviceReset());
    }
    if (rc != 0) return rc;
    if (underscore_exit) {
        fflush(stdout);
        _exit((int)exit_code);
    }
    return (int)exit_code;
}
