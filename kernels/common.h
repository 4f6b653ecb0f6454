// Shared helpers for the gpuadvise sample programs (test app and demos).
//
// Everything here is header-only and marked `inline` so that a program may
// use any subset without "declared but never referenced" warnings.
//
// Contents:
//   GA_CHECK / GA_CHECK_LAUNCH   CUDA error checks (print file:line, exit 2)
//   ga_hash / ga_unit / ga_sym   deterministic host-side input generators
//   GaTimer, ga_median           cudaEvent timing and the median of repetitions
//   ga_parse_long, ga_flag_value command-line helpers
//   GaChecker                    result comparison with abs/rel tolerance
//   GaVariant, GaDemo, ga_demo_main
//                                the command line shared by all demo programs
#pragma once

#include <cuda_runtime.h>

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <vector>

// ---------------------------------------------------------------------------
// Error checking
// ---------------------------------------------------------------------------

#define GA_CHECK(call)                                                        \
    do {                                                                      \
        cudaError_t ga_err_ = (call);                                         \
        if (ga_err_ != cudaSuccess) {                                         \
            fprintf(stderr, "%s:%d: CUDA error %s: %s (from %s)\n", __FILE__, \
                    __LINE__, cudaGetErrorName(ga_err_),                      \
                    cudaGetErrorString(ga_err_), #call);                      \
            fflush(stdout);                                                   \
            exit(2);                                                          \
        }                                                                     \
    } while (0)

// Use right after a <<<...>>> launch: catches bad configurations at once.
#define GA_CHECK_LAUNCH() GA_CHECK(cudaGetLastError())

// ---------------------------------------------------------------------------
// Deterministic inputs (host side; no RNG state, so any element can be
// regenerated independently when checking)
// ---------------------------------------------------------------------------

// A 32-bit integer mixer (xor-shift / multiply rounds).
inline uint32_t ga_hash(uint32_t x)
{
    x ^= x >> 16;
    x *= 0x7feb352dU;
    x ^= x >> 15;
    x *= 0x846ca68bU;
    x ^= x >> 16;
    return x;
}

inline uint32_t ga_hash2(uint32_t i, uint32_t seed)
{
    return ga_hash(i ^ ga_hash(seed + 0x9e3779b9U));
}

// Uniform in [0, 1), 24 bits of resolution (exactly representable as float).
inline float ga_unit(uint32_t i, uint32_t seed)
{
    return (float)(ga_hash2(i, seed) >> 8) * (1.0f / 16777216.0f);
}

// Uniform in [-1, 1).
inline float ga_sym(uint32_t i, uint32_t seed)
{
    return 2.0f * ga_unit(i, seed) - 1.0f;
}

// ---------------------------------------------------------------------------
// Small device-buffer helpers
// ---------------------------------------------------------------------------

template <typename T>
inline T *ga_dev_alloc(size_t n)
{
    T *p = nullptr;
    GA_CHECK(cudaMalloc((void **)&p, n * sizeof(T)));
    return p;
}

template <typename T>
inline void ga_to_dev(T *dst, const std::vector<T> &src)
{
    GA_CHECK(cudaMemcpy(dst, src.data(), src.size() * sizeof(T), cudaMemcpyHostToDevice));
}

template <typename T>
inline std::vector<T> ga_from_dev(const T *src, size_t n)
{
    std::vector<T> v(n);
    GA_CHECK(cudaMemcpy(v.data(), src, n * sizeof(T), cudaMemcpyDeviceToHost));
    return v;
}

template <typename T>
inline void ga_dev_free(T *&p)
{
    if (p) GA_CHECK(cudaFree(p));
    p = nullptr;
}

// Fill a device buffer with 0xFF bytes (NaN for floats, -1 for ints), so a
// variant that forgets to write its output cannot pass its check.
template <typename T>
inline void ga_poison(T *p, size_t n)
{
    if (p) GA_CHECK(cudaMemset(p, 0xFF, n * sizeof(T)));
}

// ---------------------------------------------------------------------------
// Timing
// ---------------------------------------------------------------------------

struct GaTimer {
    cudaEvent_t begin_ev = nullptr, end_ev = nullptr;
    GaTimer()
    {
        GA_CHECK(cudaEventCreate(&begin_ev));
        GA_CHECK(cudaEventCreate(&end_ev));
    }
    ~GaTimer()
    {
        cudaEventDestroy(begin_ev);
        cudaEventDestroy(end_ev);
    }
    GaTimer(const GaTimer &) = delete;
    GaTimer &operator=(const GaTimer &) = delete;

    void start(cudaStream_t s = 0) { GA_CHECK(cudaEventRecord(begin_ev, s)); }
    // Records the end event, waits for it and returns elapsed milliseconds.
    float stop(cudaStream_t s = 0)
    {
        GA_CHECK(cudaEventRecord(end_ev, s));
        GA_CHECK(cudaEventSynchronize(end_ev));
        float ms = 0.0f;
        GA_CHECK(cudaEventElapsedTime(&ms, begin_ev, end_ev));
        return ms;
    }
};

inline double ga_median(std::vector<float> v)
{
    if (v.empty()) return 0.0;
    std::sort(v.begin(), v.end());
    size_t n = v.size();
    if (n % 2) return v[n / 2];
    return 0.5 * ((double)v[n / 2 - 1] + (double)v[n / 2]);
}

// ---------------------------------------------------------------------------
// Command-line helpers
// ---------------------------------------------------------------------------

// Parses a whole decimal integer in [lo, hi]. Returns false on junk/overflow.
inline bool ga_parse_long(const char *s, long lo, long hi, long *out)
{
    if (!s || !*s) return false;
    errno = 0;
    char *end = nullptr;
    long v = strtol(s, &end, 10);
    if (errno || *end != '\0' || v < lo || v > hi) return false;
    *out = v;
    return true;
}

// Matches "--name VALUE" and "--name=VALUE" at argv[*i].
// Returns 1 and sets *value (advancing *i past a separate value) on a match,
// -1 when the flag matches but its value is missing, 0 when it does not match.
inline int ga_flag_value(int argc, char **argv, int *i, const char *name, const char **value)
{
    const char *arg = argv[*i];
    size_t len = strlen(name);
    if (strncmp(arg, name, len) != 0) return 0;
    if (arg[len] == '=') {
        *value = arg + len + 1;
        return 1;
    }
    if (arg[len] != '\0') return 0;
    if (*i + 1 >= argc) return -1;
    *i += 1;
    *value = argv[*i];
    return 1;
}

// ---------------------------------------------------------------------------
// Result checking
// ---------------------------------------------------------------------------

// Accumulates comparisons |got - ref| <= atol + rtol * |ref| (NaN fails) and
// describes the first mismatch.
struct GaChecker {
    double atol, rtol;
    size_t checked = 0, bad = 0;
    size_t first_index = 0;
    double first_got = 0.0, first_ref = 0.0;
    double max_abs_err = 0.0;

    GaChecker(double atol_, double rtol_) : atol(atol_), rtol(rtol_) {}

    bool add(size_t index, double got, double ref)
    {
        checked++;
        double err = fabs(got - ref);
        bool ok = err <= atol + rtol * fabs(ref); // false for NaN
        if (ok) {
            if (err > max_abs_err) max_abs_err = err;
            return true;
        }
        if (bad == 0) {
            first_index = index;
            first_got = got;
            first_ref = ref;
        }
        bad++;
        return false;
    }

    bool ok() const { return bad == 0 && checked > 0; }

    // Writes a one-line description ("what[i]=got, expected ref; k of n bad").
    void describe(char *buf, size_t len, const char *what) const
    {
        if (checked == 0)
            snprintf(buf, len, "%s: nothing was checked", what);
        else if (bad == 0)
            snprintf(buf, len, "%s: %zu values ok, max abs error %.3g", what, checked, max_abs_err);
        else
            snprintf(buf, len, "%s[%zu]=%.9g, expected %.9g; %zu of %zu values out of tolerance",
                     what, first_index, first_got, first_ref, bad, checked);
    }

    // Convenience: returns ok(), filling buf with a description when not ok.
    bool result(char *buf, size_t len, const char *what) const
    {
        if (!ok()) describe(buf, len, what);
        return ok();
    }
};

// ---------------------------------------------------------------------------
// Demo command line
//
//   --list-variants    "NAME<TAB>description" per variant, slow to fast
//   --variant NAME     run only NAME (may be repeated; default: all)
//   --reps N           timed repetitions (default 10)
//   --warmup W         untimed launches first (default 1)
//
// Per variant run, stdout gets exactly one line:
//   variant NAME time_ms X.XXXX check ok
//   variant NAME check FAILED (detail)          -> exit 1
// Usage errors go to stderr with exit status 2.
// ---------------------------------------------------------------------------

struct GaVariant {
    const char *name;
    const char *desc;
    void (*launch)();                   // the timed kernel launch(es), asynchronous
    bool (*check)(char *detail, size_t len); // compares device results to a reference
    void (*prepare)();                  // optional, untimed, before every launch
};

struct GaDemo {
    const char *name;
    void (*setup)();    // allocate and fill inputs (called once, after parsing)
    void (*clear)();    // optional: poison outputs before each variant
    void (*teardown)(); // optional: free everything
    const GaVariant *variants;
    int count;
};

inline void ga_demo_usage(FILE *f, const GaDemo &d)
{
    fprintf(f,
            "usage: gpuadvise-demo-%s [--list-variants] [--variant NAME] [--reps N] [--warmup W]\n"
            "variants (slow to fast):",
            d.name);
    for (int i = 0; i < d.count; i++) fprintf(f, " %s", d.variants[i].name);
    fprintf(f, "\n");
}

inline int ga_demo_main(int argc, char **argv, const GaDemo &d)
{
    setvbuf(stdout, nullptr, _IOLBF, 0);
    long reps = 10, warmup = 1;
    bool list = false;
    std::vector<int> selected;

    for (int i = 1; i < argc; i++) {
        const char *val = nullptr;
        int m;
        if (strcmp(argv[i], "--list-variants") == 0) {
            list = true;
        } else if (strcmp(argv[i], "--help") == 0 || strcmp(argv[i], "-h") == 0) {
            ga_demo_usage(stdout, d);
            return 0;
        } else if ((m = ga_flag_value(argc, argv, &i, "--variant", &val)) != 0) {
            if (m < 0) {
                fprintf(stderr, "gpuadvise-demo-%s: --variant needs a name\n", d.name);
                return 2;
            }
            int found = -1;
            for (int k = 0; k < d.count; k++)
                if (strcmp(d.variants[k].name, val) == 0) found = k;
            if (found < 0) {
                fprintf(stderr, "gpuadvise-demo-%s: unknown variant '%s'\n", d.name, val);
                ga_demo_usage(stderr, d);
                return 2;
            }
            selected.push_back(found);
        } else if ((m = ga_flag_value(argc, argv, &i, "--reps", &val)) != 0) {
            if (m < 0 || !ga_parse_long(val, 1, 100000, &reps)) {
                fprintf(stderr, "gpuadvise-demo-%s: --reps needs an integer in 1..100000\n", d.name);
                return 2;
            }
        } else if ((m = ga_flag_value(argc, argv, &i, "--warmup", &val)) != 0) {
            if (m < 0 || !ga_parse_long(val, 0, 100000, &warmup)) {
                fprintf(stderr, "gpuadvise-demo-%s: --warmup needs an integer in 0..100000\n", d.name);
                return 2;
            }
        } else {
            fprintf(stderr, "gpuadvise-demo-%s: unknown argument '%s'\n", d.name, argv[i]);
            ga_demo_usage(stderr, d);
            return 2;
        }
    }

    if (list) {
        for (int k = 0; k < d.count; k++) printf("%s\t%s\n", d.variants[k].name, d.variants[k].desc);
        return 0;
    }
    if (selected.empty())
        for (int k = 0; k < d.count; k++) selected.push_back(k);

    d.setup();
    GaTimer timer;
    int status = 0;
    for (int idx : selected) {
        const GaVariant &v = d.variants[idx];
        if (d.clear) d.clear();
        GA_CHECK(cudaDeviceSynchronize());

        for (long w = 0; w < warmup; w++) {
            if (v.prepare) v.prepare();
            v.launch();
            GA_CHECK_LAUNCH();
        }
        GA_CHECK(cudaDeviceSynchronize());

        std::vector<float> times;
        times.reserve((size_t)reps);
        for (long r = 0; r < reps; r++) {
            if (v.prepare) v.prepare();
            timer.start();
            v.launch();
            GA_CHECK_LAUNCH();
            times.push_back(timer.stop());
        }
        GA_CHECK(cudaDeviceSynchronize());

        char detail[512] = "";
        if (!v.check(detail, sizeof detail)) {
            printf("variant %s check FAILED (%s)\n", v.name, detail[0] ? detail : "no detail");
            status = 1;
            break;
        }
        printf("variant %s time_ms %.4f check ok\n", v.name, ga_median(times));
    }
    if (d.teardown) d.teardown();
    return status;
}
