// gpuadvise-pairs: before/after kernel pairs for measuring how well
// gpuadvise's estimates predict the speedup of the fix it ranks first.
//
//   --list                       NAME RULE pair|control WHAT, one line each
//   --pair NAME --side slow|fast [--launches N]
//                                run one side N times (default 1), then check
//                                the result against a CPU reference: exit 1
//                                on mismatch
//   --time NAME [--reps R]       time both sides with cudaEvents after one
//                                warm-up run each; prints
//                                "NAME slow_us fast_us speedup" (medians of R)
// Usage errors exit 2.
#include "pairs.h"

static void usage(FILE *f)
{
    fprintf(f, "usage: gpuadvise-pairs --list\n"
               "       gpuadvise-pairs --pair NAME --side slow|fast [--launches N]\n"
               "       gpuadvise-pairs --time NAME [--reps R]\n");
}

static const PairDef *find_pair(const char *name)
{
    for (const PairDef &d : pairs_registry())
        if (strcmp(d.name, name) == 0) return &d;
    return nullptr;
}

static int run_side(const PairDef &d, bool fast, long launches)
{
    d.setup();
    GA_CHECK(cudaDeviceSynchronize());
    for (long i = 0; i < launches; i++) {
        d.launch(fast);
        GA_CHECK_LAUNCH();
    }
    GA_CHECK(cudaDeviceSynchronize());
    char detail[512] = "";
    if (!d.check(detail, sizeof detail)) {
        printf("%s %s check FAILED (%s)\n", d.name, fast ? "fast" : "slow", detail[0] ? detail : "no detail");
        return 1;
    }
    printf("%s %s check ok\n", d.name, fast ? "fast" : "slow");
    return 0;
}

// Median time of one side in microseconds; checks the result afterwards.
static double time_side(const PairDef &d, bool fast, long reps, bool *ok)
{
    GaTimer timer;
    std::vector<float> ms;
    d.launch(fast); // warm-up
    GA_CHECK_LAUNCH();
    GA_CHECK(cudaDeviceSynchronize());
    for (long r = 0; r < reps; r++) {
        timer.start();
        d.launch(fast);
        GA_CHECK_LAUNCH();
        ms.push_back(timer.stop());
    }
    char detail[512] = "";
    if (!d.check(detail, sizeof detail)) {
        fprintf(stderr, "gpuadvise-pairs: %s %s check FAILED (%s)\n", d.name, fast ? "fast" : "slow", detail);
        *ok = false;
    }
    return 1000.0 * ga_median(ms);
}

static int time_pair(const PairDef &d, long reps)
{
    bool ok = true;
    d.setup();
    double slow = time_side(d, false, reps, &ok);
    d.setup(); // fresh, poisoned outputs for the fast side's check
    double fast = time_side(d, true, reps, &ok);
    printf("%s %.3f %.3f %.4f\n", d.name, slow, fast, fast > 0 ? slow / fast : 0.0);
    return ok ? 0 : 1;
}

int main(int argc, char **argv)
{
    setvbuf(stdout, nullptr, _IOLBF, 0);
    const char *pair = nullptr, *side = nullptr, *timed = nullptr;
    long launches = 1, reps = 7;
    bool list = false;
    for (int i = 1; i < argc; i++) {
        const char *val = nullptr;
        int m = 0;
        if (strcmp(argv[i], "--list") == 0) {
            list = true;
        } else if (strcmp(argv[i], "--help") == 0 || strcmp(argv[i], "-h") == 0) {
            usage(stdout);
            return 0;
        } else if ((m = ga_flag_value(argc, argv, &i, "--pair", &val)) > 0) {
            pair = val;
        } else if (m == 0 && (m = ga_flag_value(argc, argv, &i, "--side", &val)) > 0) {
            side = val;
        } else if (m == 0 && (m = ga_flag_value(argc, argv, &i, "--time", &val)) > 0) {
            timed = val;
        } else if (m == 0 && (m = ga_flag_value(argc, argv, &i, "--launches", &val)) > 0) {
            if (!ga_parse_long(val, 1, 100000, &launches)) m = -1;
        } else if (m == 0 && (m = ga_flag_value(argc, argv, &i, "--reps", &val)) > 0) {
            if (!ga_parse_long(val, 1, 100000, &reps)) m = -1;
        } else if (m == 0) {
            m = -1;
        }
        if (m < 0) {
            fprintf(stderr, "gpuadvise-pairs: bad argument '%s'\n", argv[i]);
            usage(stderr);
            return 2;
        }
    }
    std::vector<PairDef> &all = pairs_registry();
    std::sort(all.begin(), all.end(), [](const PairDef &a, const PairDef &b) { return strcmp(a.name, b.name) < 0; });
    if (list) {
        for (const PairDef &d : all) printf("%s %s %s %s\n", d.name, d.rule, d.control ? "control" : "pair", d.what);
        return 0;
    }
    const char *name = timed ? timed : pair;
    if (!name || (pair && timed) || (pair && !side)) {
        usage(stderr);
        return 2;
    }
    const PairDef *d = find_pair(name);
    if (!d) {
        fprintf(stderr, "gpuadvise-pairs: unknown pair '%s' (see --list)\n", name);
        return 2;
    }
    if (timed) return time_pair(*d, reps);
    if (strcmp(side, "slow") != 0 && strcmp(side, "fast") != 0) {
        fprintf(stderr, "gpuadvise-pairs: --side is slow or fast, not '%s'\n", side);
        return 2;
    }
    return run_side(*d, strcmp(side, "fast") == 0, launches);
}
