// Shared declarations of gpuadvise-pairs, the accuracy bench program.
//
// A pair is one problem written twice: the slow side has one performance
// problem dominant, the fast side fixes that problem and nothing else, so
// the measured slow/fast time ratio is what the labelled rule's fix is worth.
// A control is a kernel already written the fast way: the labelled rule
// must not fire on it (both of its sides run the same kernel).
//
// Each source file registers its pairs with GA_PAIR at static-initialisation
// time; main.cu lists, runs, checks and times them.
#pragma once

#include "../common.h"

struct PairDef {
    const char *name;   // unique, [a-z0-9-]
    const char *rule;   // id of the rule whose fix the pair measures
    bool control;       // true: the rule must NOT fire on the slow side
    const char *what;   // one line for --list
    void (*setup)();    // allocate and fill inputs, poison outputs
    void (*launch)(bool fast); // one run of a side (asynchronous)
    bool (*check)(char *detail, size_t len); // compare the output with a CPU reference
};

// Function-local registry: safe whatever order the files initialise in.
inline std::vector<PairDef> &pairs_registry()
{
    static std::vector<PairDef> all;
    return all;
}

struct PairRegistrar {
    explicit PairRegistrar(const PairDef &d) { pairs_registry().push_back(d); }
};

#define GA_PAIR_CAT2(a, b) a##b
#define GA_PAIR_CAT(a, b) GA_PAIR_CAT2(a, b)
#define GA_PAIR(...) static PairRegistrar GA_PAIR_CAT(pair_reg_, __LINE__)(PairDef{__VA_ARGS__})

// Blocks for n items at `block` threads each.
inline unsigned pairs_blocks(size_t n, unsigned block) { return (unsigned)((n + block - 1) / block); }

// Host vector of n values in [lo, hi), deterministic in (i, seed).
inline std::vector<float> pairs_fill(size_t n, uint32_t seed, float lo, float hi)
{
    std::vector<float> v(n);
    for (size_t i = 0; i < n; i++) v[i] = lo + (hi - lo) * ga_unit((uint32_t)i, seed);
    return v;
}

// Uploads a host vector into a fresh device buffer.
template <typename T>
inline T *pairs_upload(const std::vector<T> &h)
{
    T *d = ga_dev_alloc<T>(h.size());
    ga_to_dev(d, h);
    return d;
}

// Compares a device float buffer with a host reference (abs/rel tolerance).
inline bool pairs_compare(const float *dev, const std::vector<float> &ref, double atol, double rtol,
                          const char *what, char *detail, size_t len)
{
    std::vector<float> got = ga_from_dev(dev, ref.size());
    GaChecker ck(atol, rtol);
    for (size_t i = 0; i < ref.size(); i++) ck.add(i, got[i], ref[i]);
    return ck.result(detail, len, what);
}

// The number of SMs of device 0 (grids sized "one wave" use it).
inline int pairs_sm_count()
{
    static int sms = 0;
    if (!sms) GA_CHECK(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, 0));
    return sms;
}
