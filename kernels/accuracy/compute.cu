// Compute pairs: FP64 promotion, XU-pipe math, integer division,
// divergence, reductions, barriers, dependency chains, pipe pressure and
// tensor cores.
#include "pairs.h"

#include <mma.h>

static const int CT = 1 << 22; // threads of the elementwise compute kernels
static const int CB = 256;

// ---------------------------------------------------------------------------
// fp64-literal (fp64-in-fp32-code): 1024 steps of v = v * 0.999 + 0.001 on a
// float v. Slow: the literals are doubles, so every step converts v to
// double, runs a DFMA and converts back. Fast: float literals (0.999f).
// The label is right though the rule did not fire on the H200 (13.8x
// measured): the fix is the float literals, and the slow side's time is
// theirs. On the H200 the FP64 pipe runs at half the FP32 rate, so the one
// DFMA per step loads it only 12 %; the two F2F conversions per step load
// the XU pipe to 94 %, which binds the kernel. fp64-in-fp32-code's
// condition (FP64 pipe above 15 %) misses conversion-bound promotion.
// ---------------------------------------------------------------------------
namespace fp64lit {
const int STEPS = 1024;
float *d_out;
std::vector<double> ref;

__global__ void decay_double(float *__restrict__ out)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    float v = (float)(i & 1023) * 0.001f;
    for (int k = 0; k < STEPS; k++) v = v * 0.999 + 0.001;
    out[i] = v;
}

__global__ void decay_float(float *__restrict__ out)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    float v = (float)(i & 1023) * 0.001f;
    for (int k = 0; k < STEPS; k++) v = v * 0.999f + 0.001f;
    out[i] = v;
}

void setup()
{
    if (!d_out) {
        d_out = ga_dev_alloc<float>(CT);
        ref.resize(1024);
        for (int j = 0; j < 1024; j++) {
            double v = (float)j * 0.001f;
            for (int k = 0; k < STEPS; k++) v = v * 0.999 + 0.001;
            ref[j] = v;
        }
    }
    ga_poison(d_out, CT);
}

void launch(bool fast)
{
    if (fast)
        decay_float<<<CT / CB, CB>>>(d_out);
    else
        decay_double<<<CT / CB, CB>>>(d_out);
}

bool check(char *d, size_t n)
{
    std::vector<float> got = ga_from_dev(d_out, CT);
    GaChecker ck(1e-5, 1e-3); // float rounding of a contracting recurrence
    for (int i = 0; i < CT; i++) ck.add(i, got[i], ref[i & 1023]);
    return ck.result(d, n, "decay");
}
GA_PAIR("fp64-literal", "fp64-in-fp32-code", false,
        "float update with double literals (0.999) -> float literals (0.999f)", setup, launch, check);
} // namespace fp64lit

// ---------------------------------------------------------------------------
// fp64-pow (fp64-in-fp32-code): sum of 32 powers x_k^2.5 per thread. Slow:
// pow(x, 2.5) on a float promotes to the double-precision pow. Fast: powf.
// ---------------------------------------------------------------------------
namespace fp64pow {
const int TERMS = 32;
float *d_out;
std::vector<double> ref;

__device__ __host__ inline float pow_base(int i, int k) { return 0.5f + (float)((i + k) & 255) * (1.0f / 256.0f); }

__global__ void pows_double(float *__restrict__ out)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    float acc = 0.0f;
    for (int k = 0; k < TERMS; k++) acc += pow(pow_base(i, k), 2.5);
    out[i] = acc;
}

__global__ void pows_float(float *__restrict__ out)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    float acc = 0.0f;
    for (int k = 0; k < TERMS; k++) acc += powf(pow_base(i, k), 2.5f);
    out[i] = acc;
}

void setup()
{
    if (!d_out) {
        d_out = ga_dev_alloc<float>(CT);
        ref.resize(256);
        for (int j = 0; j < 256; j++) {
            double acc = 0;
            for (int k = 0; k < TERMS; k++) acc += pow((double)pow_base(j, k), 2.5);
            ref[j] = acc;
        }
    }
    ga_poison(d_out, CT);
}

void launch(bool fast)
{
    if (fast)
        pows_float<<<CT / CB, CB>>>(d_out);
    else
        pows_double<<<CT / CB, CB>>>(d_out);
}

bool check(char *d, size_t n)
{
    std::vector<float> got = ga_from_dev(d_out, CT);
    GaChecker ck(0, 1e-5);
    for (int i = 0; i < CT; i++) ck.add(i, got[i], ref[i & 255]);
    return ck.result(d, n, "pows");
}
GA_PAIR("fp64-pow", "fp64-in-fp32-code", false,
        "pow(float, 2.5) runs the double pow -> powf(x, 2.5f)", setup, launch, check);
} // namespace fp64pow

// ---------------------------------------------------------------------------
// fastmath-div (fp32-accurate-math): a softened inverse-cube force from 256
// point sources on a line, one division and one square root a term, as
// physics code writes them (IEEE-rounded: nvcc's default -prec-div=true,
// -prec-sqrt=true).  Fast: what -use_fast_math makes of the same source:
// __fdividef and an approximate square root (x * rsqrtf(x)).  The control
// is the fast side: no IEEE division left to shorten.
// ---------------------------------------------------------------------------
namespace fastdiv {
const int SRC = 256;
float *d_out;
std::vector<double> ref;

__device__ __host__ inline float fd_x(int i) { return 4.5f + (float)(i & 255) * (1.0f / 256.0f); }
__device__ __host__ inline float fd_pos(int k) { return (float)(k & 15) * 0.25f; }
__device__ __host__ inline float fd_mass(int k) { return 1.0f + (float)(k & 7) * 0.125f; }

__global__ void force_ieee(float *__restrict__ out)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    float x = fd_x(i), acc = 0.0f;
    for (int k = 0; k < SRC; k++) {
        float d = x - fd_pos(k);
        float r2 = d * d + 0.01f;
        float r = sqrtf(r2);
        acc += fd_mass(k) * d / (r2 * r);
    }
    out[i] = acc;
}

__global__ void force_fast(float *__restrict__ out)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    float x = fd_x(i), acc = 0.0f;
    for (int k = 0; k < SRC; k++) {
        float d = x - fd_pos(k);
        float r2 = d * d + 0.01f;
        float r = r2 * rsqrtf(r2);
        acc += __fdividef(fd_mass(k) * d, r2 * r);
    }
    out[i] = acc;
}

void setup()
{
    if (!d_out) {
        d_out = ga_dev_alloc<float>(CT);
        ref.resize(256);
        for (int j = 0; j < 256; j++) {
            double x = fd_x(j), acc = 0;
            for (int k = 0; k < SRC; k++) {
                double d = x - fd_pos(k), r2 = d * d + 0.01;
                acc += fd_mass(k) * d / (r2 * sqrt(r2));
            }
            ref[j] = acc;
        }
    }
    ga_poison(d_out, CT);
}

void launch(bool fast)
{
    if (fast)
        force_fast<<<CT / CB, CB>>>(d_out);
    else
        force_ieee<<<CT / CB, CB>>>(d_out);
}

void launch_control(bool) { force_fast<<<CT / CB, CB>>>(d_out); }

bool check(char *d, size_t n)
{
    std::vector<float> got = ga_from_dev(d_out, CT);
    GaChecker ck(1e-4, 1e-4);
    for (int i = 0; i < CT; i++) ck.add(i, got[i], ref[i & 255]);
    return ck.result(d, n, "forces");
}
GA_PAIR("fastmath-div", "fp32-accurate-math", false,
        "force sum: IEEE division and sqrtf per term -> __fdividef and x * rsqrtf(x)", setup,
        launch, check);
GA_PAIR("control-fastmath", "fp32-accurate-math", true,
        "force sum with __fdividef and rsqrtf already", setup, launch_control, check);
} // namespace fastdiv

// ---------------------------------------------------------------------------
// sfu-exp (sfu-heavy-math): sum over k = 1..256 of exp(-k x). Slow: one expf
// per term. Fast: algebra, exp(-k x) = exp(-x)^k, one expf and a multiply
// per term.
// ---------------------------------------------------------------------------
namespace sfuexp {
const int TERMS = 256;
float *d_out;
std::vector<double> ref;

__device__ __host__ inline float exp_x(int i) { return 0.01f + (float)(i & 255) * (1.0f / 512.0f); }

__global__ void exps_each(float *__restrict__ out)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    float x = exp_x(i), acc = 0.0f;
    for (int k = 1; k <= TERMS; k++) acc += expf(-(float)k * x);
    out[i] = acc;
}

__global__ void exps_power(float *__restrict__ out)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    float x = exp_x(i), r = expf(-x), p = 1.0f, acc = 0.0f;
    for (int k = 1; k <= TERMS; k++) {
        p *= r;
        acc += p;
    }
    out[i] = acc;
}

void setup()
{
    if (!d_out) {
        d_out = ga_dev_alloc<float>(CT);
        ref.resize(256);
        for (int j = 0; j < 256; j++) {
            double acc = 0;
            for (int k = 1; k <= TERMS; k++) acc += exp(-(double)k * exp_x(j));
            ref[j] = acc;
        }
    }
    ga_poison(d_out, CT);
}

void launch(bool fast)
{
    if (fast)
        exps_power<<<CT / CB, CB>>>(d_out);
    else
        exps_each<<<CT / CB, CB>>>(d_out);
}

bool check(char *d, size_t n)
{
    std::vector<float> got = ga_from_dev(d_out, CT);
    GaChecker ck(1e-5, 1e-4);
    for (int i = 0; i < CT; i++) ck.add(i, got[i], ref[i & 255]);
    return ck.result(d, n, "exps");
}
GA_PAIR("sfu-exp", "sfu-heavy-math", false,
        "sum of exp(-k x): expf per term -> exp(-x)^k by multiplication", setup, launch, check);
} // namespace sfuexp

// ---------------------------------------------------------------------------
// Polynomials of degree 12 evaluated at 64 points per thread.
// poly-pow (sfu-heavy-math): each term c_k * powf(x, k). Fast: Horner's
// rule, one FMA per degree. The Horner kernel is also a control.
// poly-expanded (pipe-saturation): each power rebuilt by a loop of
// multiplications (degree squared multiplies per point). Fast: Horner's
// rule with the same run-time degree and coefficients (poly_horner_loop).
// Its fast side is not poly_horner, whose degree is a compile-time
// constant: unrolled, with its coefficients 1/(k+1) folded to constants, it
// also removes 12 float divisions and their conversions per point, so the
// pair would measure two fixes at once (28x on the H200).
//
// poly-pow keeps sfu-heavy-math (25x measured): the rule's fix names this
// case (Horner's rule instead of pow), and the slow side's time is powf's
// full-precision sequence (XU 41 %, ALU 66 %, issue 96 %, about 18 issued
// instructions per MUFU), whose logarithm and exponential run on the XU.
// The conversions powf makes for its integer-exponent test run off the XU
// on Hopper; counted as divisions they would keep the rule silent, so the
// division count is bounded by the XU and integer instructions too.
// ---------------------------------------------------------------------------
namespace poly {
const int DEG = 12, POINTS = 64;
float *d_out;
int *d_deg;
std::vector<double> ref;

__device__ __host__ inline float coef(int k) { return 1.0f / (float)(k + 1); }
__device__ __host__ inline float point(int i, int p) { return (float)((i + p) & 255) * (1.0f / 256.0f); }

__global__ void poly_powf(float *__restrict__ out)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    float acc = 0.0f;
    for (int p = 0; p < POINTS; p++) {
        float x = point(i, p), y = coef(0);
#pragma unroll
        for (int k = 1; k <= DEG; k++) y += coef(k) * powf(x, (float)k);
        acc += y;
    }
    out[i] = acc;
}

// The degree comes from memory so the power loops stay loops.
__global__ void poly_loops(float *__restrict__ out, const int *__restrict__ deg_ptr)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x, deg = *deg_ptr;
    float acc = 0.0f;
    for (int p = 0; p < POINTS; p++) {
        float x = point(i, p), y = coef(0);
        for (int k = 1; k <= deg; k++) {
            float xk = x;
            for (int j = 1; j < k; j++) xk *= x;
            y += coef(k) * xk;
        }
        acc += y;
    }
    out[i] = acc;
}

// poly_loops fixed and nothing else: the degree still comes from memory and
// each coefficient is still computed where it is used.
__global__ void poly_horner_loop(float *__restrict__ out, const int *__restrict__ deg_ptr)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x, deg = *deg_ptr;
    float acc = 0.0f;
    for (int p = 0; p < POINTS; p++) {
        float x = point(i, p), y = coef(deg);
        for (int k = deg - 1; k >= 0; k--) y = fmaf(y, x, coef(k));
        acc += y;
    }
    out[i] = acc;
}

__global__ void poly_horner(float *__restrict__ out)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    float acc = 0.0f;
    for (int p = 0; p < POINTS; p++) {
        float x = point(i, p), y = coef(DEG);
#pragma unroll
        for (int k = DEG - 1; k >= 0; k--) y = fmaf(y, x, coef(k));
        acc += y;
    }
    out[i] = acc;
}

void setup()
{
    if (!d_out) {
        d_out = ga_dev_alloc<float>(CT);
        d_deg = ga_dev_alloc<int>(1);
        int deg = DEG;
        GA_CHECK(cudaMemcpy(d_deg, &deg, sizeof deg, cudaMemcpyHostToDevice));
        ref.resize(256);
        for (int j = 0; j < 256; j++) {
            double acc = 0;
            for (int p = 0; p < POINTS; p++) {
                double x = point(j, p), y = 0;
                for (int k = DEG; k >= 0; k--) y = y * x + coef(k);
                acc += y;
            }
            ref[j] = acc;
        }
    }
    ga_poison(d_out, CT);
}

void launch_pow(bool fast)
{
    if (fast)
        poly_horner<<<CT / CB, CB>>>(d_out);
    else
        poly_powf<<<CT / CB, CB>>>(d_out);
}

void launch_loops(bool fast)
{
    if (fast)
        poly_horner_loop<<<CT / CB, CB>>>(d_out, d_deg);
    else
        poly_loops<<<CT / CB, CB>>>(d_out, d_deg);
}

void launch_control(bool) { poly_horner<<<CT / CB, CB>>>(d_out); }

bool check(char *d, size_t n)
{
    std::vector<float> got = ga_from_dev(d_out, CT);
    GaChecker ck(1e-4, 1e-4);
    for (int i = 0; i < CT; i++) ck.add(i, got[i], ref[i & 255]);
    return ck.result(d, n, "poly");
}
GA_PAIR("poly-pow", "sfu-heavy-math", false,
        "degree-12 polynomial: c_k * powf(x, k) -> Horner's rule", setup, launch_pow, check);
GA_PAIR("poly-expanded", "pipe-saturation", false,
        "degree-12 polynomial: powers rebuilt by multiply loops -> Horner's rule", setup, launch_loops, check);
GA_PAIR("control-horner", "sfu-heavy-math", true,
        "degree-12 polynomial by Horner's rule with float FMAs", setup, launch_control, check);
} // namespace poly

// ---------------------------------------------------------------------------
// Integer division and modulo by divisors that change from step to step, so
// the compiler cannot hoist the reciprocal out of the loop (the divisors come
// from a table; the warp reads them uniformly). Sums are unsigned integers,
// so no conversions either.
// intdiv-modulo (integer-division): (i + k) % d_k with d_k a power of two
// (1..32768), the shape of `tid % (2*s)`. Fast: (i + k) & (d_k - 1).
// intdiv-divide (integer-division): (i + k * 977) / d_k with d_k in
// 3..1000. Fast: a multiply by the precomputed reciprocal,
// (x * ceil(2^42 / d)) >> 42, exact for x < 2^22 and d < 2^10.
// ---------------------------------------------------------------------------
namespace intdiv {
const int STEPS = 512, TAB = 64;
const int SAMPLE = 37; // threads checked: every 37th
__constant__ unsigned c_pow2[TAB], c_div[TAB];
__constant__ unsigned long long c_recip[TAB];
unsigned *d_out;
unsigned h_pow2[TAB], h_div[TAB];
bool mode_div;

__device__ __host__ inline unsigned div_x(unsigned i, unsigned k) { return (i + k * 977u) & 0x3FFFFFu; }

__global__ void mod_divide(unsigned *__restrict__ out)
{
    unsigned i = blockIdx.x * blockDim.x + threadIdx.x, acc = 0;
#pragma unroll 1
    for (unsigned k = 0; k < STEPS; k++) acc += (i + k) % c_pow2[k % TAB];
    out[i] = acc;
}

__global__ void mod_mask(unsigned *__restrict__ out)
{
    unsigned i = blockIdx.x * blockDim.x + threadIdx.x, acc = 0;
#pragma unroll 1
    for (unsigned k = 0; k < STEPS; k++) acc += (i + k) & (c_pow2[k % TAB] - 1u);
    out[i] = acc;
}

__global__ void div_divide(unsigned *__restrict__ out)
{
    unsigned i = blockIdx.x * blockDim.x + threadIdx.x, acc = 0;
#pragma unroll 1
    for (unsigned k = 0; k < STEPS; k++) acc += div_x(i, k) / c_div[k % TAB];
    out[i] = acc;
}

__global__ void div_recip(unsigned *__restrict__ out)
{
    unsigned i = blockIdx.x * blockDim.x + threadIdx.x, acc = 0;
#pragma unroll 1
    for (unsigned k = 0; k < STEPS; k++) acc += (unsigned)(((unsigned long long)div_x(i, k) * c_recip[k % TAB]) >> 42);
    out[i] = acc;
}

void setup_common()
{
    if (!d_out) {
        unsigned long long recip[TAB];
        for (int k = 0; k < TAB; k++) {
            h_pow2[k] = 1u << (ga_hash(k) % 16u);
            h_div[k] = 3u + ga_hash(k + 100u) % 998u;
            recip[k] = ((1ull << 42) + h_div[k] - 1) / h_div[k];
        }
        GA_CHECK(cudaMemcpyToSymbol(c_pow2, h_pow2, sizeof h_pow2));
        GA_CHECK(cudaMemcpyToSymbol(c_div, h_div, sizeof h_div));
        GA_CHECK(cudaMemcpyToSymbol(c_recip, recip, sizeof recip));
        d_out = ga_dev_alloc<unsigned>(CT);
    }
    ga_poison(d_out, CT);
}
void setup_mod() { setup_common(); mode_div = false; }
void setup_div() { setup_common(); mode_div = true; }

void launch_mod(bool fast)
{
    if (fast)
        mod_mask<<<CT / CB, CB>>>(d_out);
    else
        mod_divide<<<CT / CB, CB>>>(d_out);
}

void launch_div(bool fast)
{
    if (fast)
        div_recip<<<CT / CB, CB>>>(d_out);
    else
        div_divide<<<CT / CB, CB>>>(d_out);
}

// Every 37th thread against the sums computed here with the % and / of C.
bool check(char *d, size_t n)
{
    std::vector<unsigned> got = ga_from_dev(d_out, CT);
    for (unsigned i = 0; i < (unsigned)CT; i += SAMPLE) {
        unsigned want = 0;
        for (unsigned k = 0; k < STEPS; k++)
            want += mode_div ? div_x(i, k) / h_div[k % TAB] : (i + k) % h_pow2[k % TAB];
        if (got[i] != want) {
            snprintf(d, n, "sum[%u]=%u, expected %u", i, got[i], want);
            return false;
        }
    }
    return true;
}
GA_PAIR("intdiv-modulo", "integer-division", false,
        "(i + k) % d for power-of-two d from a table -> & (d - 1)", setup_mod, launch_mod, check);
GA_PAIR("intdiv-divide", "integer-division", false,
        "x / d for d from a table -> multiply by a precomputed reciprocal", setup_div, launch_div, check);
} // namespace intdiv

// ---------------------------------------------------------------------------
// divergence-evenodd (thread-divergence): even elements take one 128-step
// recurrence, odd elements another. Slow: thread i takes element i, so each
// warp runs both paths one after the other with half its lanes idle. Fast:
// even and odd elements are dealt to alternate warps, so each warp takes one
// path. The fast kernel is also the control.
//
// The two paths must differ in their instructions, not only in constants:
// when both were `v = fmaf(v, a, b)` with different a and b, the compiler
// made one loop of them with the constants picked per lane, so the H200 run
// measured 100 % warp efficiency and 0.99x. Here the even path is two FMAs
// per step and the odd path a multiply and an FMA (a bounded quadratic map),
// same cost, no common loop. Each path keeps four independent chains, so a
// warp is issue bound rather than waiting on one FMA chain (the scheduler
// of an SM sub-partition could otherwise hide one path's latency behind the
// other's, Volta's independent thread scheduling): the slow side issues
// twice the warp instructions, and on an issue-bound kernel that is about
// 2x (model: 32 / 16 active lanes).
// ---------------------------------------------------------------------------
namespace diverge {
const int STEPS = 128;
float *d_out;
std::vector<float> ref;

__device__ __host__ inline float path_even(float v)
{
    float a0 = v, a1 = v + 1.0f, a2 = v + 2.0f, a3 = v + 3.0f;
    for (int k = 0; k < STEPS; k++) {
        a0 = fmaf(fmaf(a0, 0.998f, 0.01f), 0.999f, -0.005f);
        a1 = fmaf(fmaf(a1, 0.998f, 0.01f), 0.999f, -0.005f);
        a2 = fmaf(fmaf(a2, 0.998f, 0.01f), 0.999f, -0.005f);
        a3 = fmaf(fmaf(a3, 0.998f, 0.01f), 0.999f, -0.005f);
    }
    return a0 + a1 + a2 + a3;
}
// x -> 0.5 - x^2 / 4 maps [-2, 2] into [-0.5, 0.5]: the starts below 1.4 stay bounded.
__device__ __host__ inline float path_odd(float v)
{
    float b0 = v * 0.0078125f, b1 = b0 + 0.1f, b2 = b0 + 0.2f, b3 = b0 + 0.3f;
    for (int k = 0; k < STEPS; k++) {
        b0 = fmaf(b0 * b0, -0.25f, 0.5f);
        b1 = fmaf(b1 * b1, -0.25f, 0.5f);
        b2 = fmaf(b2 * b2, -0.25f, 0.5f);
        b3 = fmaf(b3 * b3, -0.25f, 0.5f);
    }
    return b0 + b1 + b2 + b3;
}
__device__ __host__ inline float element(int e) { return e & 1 ? path_odd((float)(e & 127)) : path_even((float)(e & 127)); }

__global__ void evenodd_lanes(float *__restrict__ out)
{
    int e = blockIdx.x * blockDim.x + threadIdx.x;
    out[e] = element(e);
}

// Warp w of a pair of warps (2p, 2p+1) takes the even (w = 2p) or odd
// elements of the 64 elements the pair covers.
__global__ void evenodd_warps(float *__restrict__ out)
{
    int t = blockIdx.x * blockDim.x + threadIdx.x, warp = t / 32, lane = t % 32;
    int e = (warp / 2) * 64 + 2 * lane + (warp & 1);
    out[e] = element(e);
}

void setup()
{
    if (!d_out) {
        d_out = ga_dev_alloc<float>(CT);
        ref.resize(256);
        for (int e = 0; e < 256; e++) ref[e] = element(e);
    }
    ga_poison(d_out, CT);
}

void launch(bool fast)
{
    if (fast)
        evenodd_warps<<<CT / CB, CB>>>(d_out);
    else
        evenodd_lanes<<<CT / CB, CB>>>(d_out);
}
void launch_control(bool) { launch(true); }

bool check(char *d, size_t n)
{
    std::vector<float> got = ga_from_dev(d_out, CT);
    GaChecker ck(0, 0);
    for (int e = 0; e < CT; e++) ck.add(e, got[e], ref[e & 255]);
    return ck.result(d, n, "path");
}
GA_PAIR("divergence-evenodd", "thread-divergence", false,
        "even/odd elements on alternate lanes -> on alternate warps", setup, launch, check);
GA_PAIR("control-warp-uniform", "thread-divergence", true,
        "even/odd work dealt to whole warps (a warp-uniform branch)", setup, launch_control, check);
} // namespace diverge

// ---------------------------------------------------------------------------
// Block reductions of computed values: each 256-thread block sums 64
// segments of 256 values (multiples of 1/8 below 2, so every order gives the
// same exact float), so the reduction itself dominates the kernel.
// reduce-tree (shared-tree-reduction): interleaved addressing, tid % (2s),
// against sequential addressing. reduce-shuffle (warp-shuffle-reduction):
// sequential addressing against __shfl_down_sync per warp.
// control-reduce-shuffle (shared-tree-reduction): sequential addressing
// down to one warp, then shuffles.
//
// reduce-tree measured 1.02x on the H200 while its tree loops ran to the
// constant BLOCK: unrolled, tid % (2 st) became an AND with a constant (XU
// 0 %, no conversions beyond value()'s), both sides issued the same
// predicated shared loads and stores (2.69e8 against 2.61e8 warp
// instructions) and both sat on the LSU pipe (82 %). With the loops bounded
// by blockDim.x the interleaved side computes a real unsigned modulo per
// thread per level (about 20 instructions, XU reciprocal included) and keeps
// every warp stepping through the first five levels, so the model is the
// reduction demo's: about 2x (the demo measured 2.1x).
// reduce-shuffle (3.16x, labelled rule not fired): its slow side is the
// sequential tree, whose first fix is the shuffles (barrier stalls 8.8 of
// 30.8 cycles per issue, LSU pipe 84 % from the tree's shared traffic), so
// warp-shuffle-reduction is the right label; the rule's condition missed it
// (its memory test counts the tree's own shared wavefronts, 90 % of peak).
// ---------------------------------------------------------------------------
namespace reduce {
const int BLOCK = 256, BLOCKS = 8192, SEGS = 64;
float *d_out;
std::vector<float> ref;

// A small integer mixer usable on both sides (ga_hash is host-only).
__device__ __host__ inline unsigned mix(unsigned x)
{
    x ^= x >> 16;
    x *= 0x7feb352dU;
    x ^= x >> 15;
    return x;
}

__device__ __host__ inline float value(unsigned b, unsigned s, unsigned t)
{
    return (float)(mix((b * SEGS + s) * BLOCK + t) & 15u) * 0.125f;
}

__device__ __forceinline__ float warp_sum(float v)
{
#pragma unroll
    for (int o = 16; o > 0; o >>= 1) v += __shfl_down_sync(0xFFFFFFFFu, v, o);
    return v;
}

// MODE 0: interleaved, 1: sequential, 2: sequential then one warp's shuffles,
// 3: per-warp shuffles.
template <int MODE>
__global__ void reduce_segments(float *__restrict__ out)
{
    __shared__ float s[BLOCK];
    unsigned tid = threadIdx.x;
    float total = 0.0f;
    for (unsigned seg = 0; seg < SEGS; seg++) {
        float v = value(blockIdx.x, seg, tid);
        if (MODE == 3) {
            v = warp_sum(v);
            if (tid % 32 == 0) s[tid / 32] = v;
            __syncthreads();
            if (tid < 32) {
                v = warp_sum(tid < BLOCK / 32 ? s[tid] : 0.0f);
                if (tid == 0) total += v;
            }
            __syncthreads();
            continue;
        }
        s[tid] = v;
        __syncthreads();
        // The loops run to blockDim.x, as the demo and most user code do:
        // bounded by the constant BLOCK, they were unrolled and every
        // tid % (2 st) became an AND, so the interleaved form cost little
        // more than the sequential one (0.98x of its time on the H200).
        if (MODE == 0) {
            for (unsigned st = 1; st < blockDim.x; st *= 2) {
                if (tid % (2 * st) == 0) s[tid] += s[tid + st];
                __syncthreads();
            }
        } else {
            unsigned stop = MODE == 2 ? 32 : 0;
            for (unsigned st = blockDim.x / 2; st > stop; st >>= 1) {
                if (tid < st) s[tid] += s[tid + st];
                __syncthreads();
            }
            if (MODE == 2 && tid < 32) {
                v = warp_sum(s[tid] + s[tid + 32]);
                if (tid == 0) s[0] = v;
            }
        }
        if (tid == 0) total += s[0];
        __syncthreads();
    }
    if (tid == 0) out[blockIdx.x] = total;
}

void setup()
{
    if (!d_out) {
        d_out = ga_dev_alloc<float>(BLOCKS);
        ref.assign(BLOCKS, 0.0f);
        for (unsigned b = 0; b < (unsigned)BLOCKS; b += 13)
            for (unsigned s = 0; s < SEGS; s++)
                for (unsigned t = 0; t < BLOCK; t++) ref[b] += value(b, s, t);
    }
    ga_poison(d_out, BLOCKS);
}

void launch_tree(bool fast)
{
    if (fast)
        reduce_segments<1><<<BLOCKS, BLOCK>>>(d_out);
    else
        reduce_segments<0><<<BLOCKS, BLOCK>>>(d_out);
}
void launch_shuffle(bool fast)
{
    if (fast)
        reduce_segments<3><<<BLOCKS, BLOCK>>>(d_out);
    else
        reduce_segments<1><<<BLOCKS, BLOCK>>>(d_out);
}
void launch_control(bool) { reduce_segments<2><<<BLOCKS, BLOCK>>>(d_out); }

// Checks every 13th block (the reference is the exact sum).
bool check(char *d, size_t n)
{
    std::vector<float> got = ga_from_dev(d_out, BLOCKS);
    GaChecker ck(0, 0);
    for (int b = 0; b < BLOCKS; b += 13) ck.add(b, got[b], ref[b]);
    return ck.result(d, n, "block sum");
}
GA_PAIR("reduce-tree", "shared-tree-reduction", false,
        "block reductions: interleaved tid % (2s) -> sequential addressing", setup, launch_tree, check);
GA_PAIR("reduce-shuffle", "warp-shuffle-reduction", false,
        "block reductions: shared-memory tree -> warp shuffles", setup, launch_shuffle, check);
GA_PAIR("control-reduce-shuffle", "shared-tree-reduction", true,
        "block reductions: sequential addressing, last warp by shuffles", setup, launch_control, check);
} // namespace reduce

// ---------------------------------------------------------------------------
// barrier-extra (barrier-stalls): 1024-thread blocks step through a shared
// table that was filled once; the slow side has two __syncthreads() in the
// loop that protect nothing (the table is only read). Fast: no barrier in
// the loop.
// The label is right (3.64x measured, the rule did not fire): barrier
// stalls were 24.6 of the 43.3 cycles between a warp's instructions (57 %),
// every other stall under 5, memory idle; removing the barriers is the fix.
// barrier-stalls set it aside as reduction-like (0.16 shared wavefronts per
// instruction, FMA pipe 9 %): the table reads look like a tree's traffic.
// ---------------------------------------------------------------------------
namespace barrier {
const int BLOCK = 1024, STEPS = 256, TAB = 256;
const int THREADS = 1 << 22;
float *d_out;
std::vector<float> ref;

__device__ __host__ inline float tab_value(int j) { return (float)(j & 15) * 0.0625f; }

template <bool SYNC>
__global__ void walk_table(float *__restrict__ out)
{
    __shared__ float tab[TAB];
    if (threadIdx.x < TAB) tab[threadIdx.x] = tab_value(threadIdx.x);
    __syncthreads();
    int t = blockIdx.x * blockDim.x + threadIdx.x;
    float acc = 0.0f;
    for (int k = 0; k < STEPS; k++) {
        if (SYNC) __syncthreads();
        acc = fmaf(tab[(k + threadIdx.x) % TAB], 0.5f, acc);
        if (SYNC) __syncthreads();
    }
    out[t] = acc;
}

void setup()
{
    if (!d_out) {
        d_out = ga_dev_alloc<float>(THREADS);
        ref.resize(TAB);
        for (int x = 0; x < TAB; x++) {
            float acc = 0.0f;
            for (int k = 0; k < STEPS; k++) acc = fmaf(tab_value((k + x) % TAB), 0.5f, acc);
            ref[x] = acc;
        }
    }
    ga_poison(d_out, THREADS);
}

void launch(bool fast)
{
    if (fast)
        walk_table<false><<<THREADS / BLOCK, BLOCK>>>(d_out);
    else
        walk_table<true><<<THREADS / BLOCK, BLOCK>>>(d_out);
}

bool check(char *d, size_t n)
{
    std::vector<float> got = ga_from_dev(d_out, THREADS);
    GaChecker ck(0, 0);
    for (int t = 0; t < THREADS; t++) ck.add(t, got[t], ref[(t % BLOCK) % TAB]);
    return ck.result(d, n, "walk");
}
GA_PAIR("barrier-extra", "barrier-stalls", false,
        "table walk with two needless __syncthreads per step -> none", setup, launch, check);
} // namespace barrier

// ---------------------------------------------------------------------------
// depchain-fma (dependent-instruction-stalls): acc += v * w_k over 65536
// steps with 2 blocks of 128 threads per SM (4 warps per SM sub-partition).
// Slow: one accumulator, each FMA waits for the previous one. Fast: four
// accumulators added at the end. Values are multiples of 1/128 below 2^16,
// so both orders give the same exact sums.
// ---------------------------------------------------------------------------
namespace depchain {
const int STEPS = 65536;
float *d_out;
int threads;
std::vector<float> ref;

__device__ __host__ inline float wgt(int k) { return (float)(k & 15) * 0.0625f; }
__device__ __host__ inline float start(int t) { return (float)(t & 7) * 0.125f; }

__global__ void chain_one(float *__restrict__ out)
{
    int t = blockIdx.x * blockDim.x + threadIdx.x;
    float v = start(t), acc = 0.0f;
#pragma unroll 16
    for (int k = 0; k < STEPS; k++) acc = fmaf(v, wgt(k), acc);
    out[t] = acc;
}

__global__ void chain_four(float *__restrict__ out)
{
    int t = blockIdx.x * blockDim.x + threadIdx.x;
    float v = start(t), a0 = 0.0f, a1 = 0.0f, a2 = 0.0f, a3 = 0.0f;
#pragma unroll 4
    for (int k = 0; k < STEPS; k += 4) {
        a0 = fmaf(v, wgt(k), a0);
        a1 = fmaf(v, wgt(k + 1), a1);
        a2 = fmaf(v, wgt(k + 2), a2);
        a3 = fmaf(v, wgt(k + 3), a3);
    }
    out[t] = (a0 + a1) + (a2 + a3);
}

void setup()
{
    if (!d_out) {
        threads = pairs_sm_count() * 2 * 128;
        d_out = ga_dev_alloc<float>(threads);
        ref.resize(8);
        for (int j = 0; j < 8; j++) {
            double acc = 0;
            for (int k = 0; k < STEPS; k++) acc += (double)start(j) * wgt(k);
            ref[j] = (float)acc;
        }
    }
    ga_poison(d_out, threads);
}

void launch(bool fast)
{
    if (fast)
        chain_four<<<threads / 128, 128>>>(d_out);
    else
        chain_one<<<threads / 128, 128>>>(d_out);
}

bool check(char *d, size_t n)
{
    std::vector<float> got = ga_from_dev(d_out, threads);
    GaChecker ck(0, 0);
    for (int t = 0; t < threads; t++) ck.add(t, got[t], ref[t & 7]);
    return ck.result(d, n, "chain");
}
GA_PAIR("depchain-fma", "dependent-instruction-stalls", false,
        "one FMA chain per thread -> four independent accumulators", setup, launch, check);
} // namespace depchain

// ---------------------------------------------------------------------------
// tensor-gemm (tensor-cores-unused): C = A B with FP16 inputs and FP32
// accumulation, 2048 x 2048. Slow: 16 x 16 shared tiles, one FP32 FMA per
// product. Fast: WMMA 16x16x16 fragments, one warp per 16 x 16 tile of C,
// loaded straight from global memory. Inputs are multiples of 1/8 in
// [-1, 1], so every sum is exact. The WMMA kernel is also the control.
// ---------------------------------------------------------------------------
namespace tgemm {
const int N = 2048, T = 16;
__half *d_a, *d_b;
float *d_c;
std::vector<float> ha, hb;

__global__ void gemm_fma(const __half *__restrict__ a, const __half *__restrict__ b, float *__restrict__ c)
{
    __shared__ float ta[T][T], tb[T][T];
    int row = blockIdx.y * T + threadIdx.y, col = blockIdx.x * T + threadIdx.x;
    float acc = 0.0f;
    for (int k0 = 0; k0 < N; k0 += T) {
        ta[threadIdx.y][threadIdx.x] = __half2float(a[row * N + k0 + threadIdx.x]);
        tb[threadIdx.y][threadIdx.x] = __half2float(b[(k0 + threadIdx.y) * N + col]);
        __syncthreads();
#pragma unroll
        for (int k = 0; k < T; k++) acc = fmaf(ta[threadIdx.y][k], tb[k][threadIdx.x], acc);
        __syncthreads();
    }
    c[row * N + col] = acc;
}

// 128 threads = 4 warps per block; warp w computes tile (by, bx*4 + w).
__global__ void gemm_wmma(const __half *__restrict__ a, const __half *__restrict__ b, float *__restrict__ c)
{
    using namespace nvcuda;
    int warp = threadIdx.x / 32;
    int tr = blockIdx.y * 16, tc = (blockIdx.x * 4 + warp) * 16;
    wmma::fragment<wmma::matrix_a, 16, 16, 16, __half, wmma::row_major> fa;
    wmma::fragment<wmma::matrix_b, 16, 16, 16, __half, wmma::row_major> fb;
    wmma::fragment<wmma::accumulator, 16, 16, 16, float> fc;
    wmma::fill_fragment(fc, 0.0f);
    for (int k = 0; k < N; k += 16) {
        wmma::load_matrix_sync(fa, a + (size_t)tr * N + k, N);
        wmma::load_matrix_sync(fb, b + (size_t)k * N + tc, N);
        wmma::mma_sync(fc, fa, fb, fc);
    }
    wmma::store_matrix_sync(c + (size_t)tr * N + tc, fc, N, wmma::mem_row_major);
}

void setup()
{
    if (!d_a) {
        ha.resize((size_t)N * N);
        hb.resize((size_t)N * N);
        std::vector<__half> xa(ha.size()), xb(hb.size());
        for (size_t i = 0; i < ha.size(); i++) {
            ha[i] = (float)((int)(ga_hash((uint32_t)i + 5u) % 17u) - 8) * 0.125f;
            hb[i] = (float)((int)(ga_hash((uint32_t)i + 9u) % 17u) - 8) * 0.125f;
            xa[i] = __float2half(ha[i]);
            xb[i] = __float2half(hb[i]);
        }
        d_a = pairs_upload(xa);
        d_b = pairs_upload(xb);
        d_c = ga_dev_alloc<float>((size_t)N * N);
    }
    ga_poison(d_c, (size_t)N * N);
}

void launch(bool fast)
{
    if (fast)
        gemm_wmma<<<dim3(N / 64, N / 16), 128>>>(d_a, d_b, d_c);
    else
        gemm_fma<<<dim3(N / T, N / T), dim3(T, T)>>>(d_a, d_b, d_c);
}
void launch_control(bool) { launch(true); }

bool check(char *d, size_t n)
{
    std::vector<float> c = ga_from_dev(d_c, (size_t)N * N);
    GaChecker ck(0, 0);
    std::vector<double> row(N);
    for (int r = 0; r < N; r += 127) {
        std::fill(row.begin(), row.end(), 0.0);
        for (int k = 0; k < N; k++) // k outer: B is read row by row
            for (int col = 0; col < N; col++) row[col] += (double)ha[(size_t)r * N + k] * hb[(size_t)k * N + col];
        for (int col = 0; col < N; col++) ck.add((size_t)r * N + col, c[(size_t)r * N + col], row[col]);
    }
    return ck.result(d, n, "C");
}
GA_PAIR("tensor-gemm", "tensor-cores-unused", false,
        "FP16 matrix product: FP32 FMAs on shared tiles -> WMMA tensor cores", setup, launch, check);
GA_PAIR("control-tensor-gemm", "tensor-cores-unused", true,
        "FP16 matrix product on tensor cores (WMMA)", setup, launch_control, check);
} // namespace tgemm
