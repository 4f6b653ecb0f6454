#!/usr/bin/env python3
"""Do gpuadvise's classes (cheap proxy metrics) agree with the Speed-of-Light
composites (sm__throughput, gpu__compute_memory_throughput: 9 passes on
GH100)?  Reads recordings that were collected with both (tests/gpu/
run-on-device.sh adds the composites with --metrics) and runs gpuadvise on
each.  Usage: bench/classes_vs_sol.py GPUADVISE RECORDING...

The composite verdict is Nsight Compute's own (its SOLBottleneck rule): both
below 60 % -> latency ("latency issues", or "grid too small" for less than a
wave); otherwise the higher of the two ("more heavily utilized"), and, both
under 80 %, within 10 points of each other "well-balanced", which either
class matches.  Divergence is not a SOL class, so a kernel
gpuadvise calls divergent is compared on the SOL class it would otherwise get
and listed separately.  It also replays each recording as --quick would have
collected it (only the classifier's required metrics) and compares."""
import json, subprocess, sys, tempfile, os

SM = "sm__throughput.avg.pct_of_peak_sustained_elapsed"
MEM = "gpu__compute_memory_throughput.avg.pct_of_peak_sustained_elapsed"


# Nsight Compute's SOLBottleneck thresholds (sections/SpeedOfLight.py of
# Nsight Compute 2025.3): both units under LATENCY_LINE % of peak ->
# latency; under HIGH, two units within BALANCED points -> "well-balanced";
# otherwise the busier unit (compute on a tie).
LATENCY_LINE = 60.0
BALANCED = 10.0
HIGH = 80.0


def sol_class(sm, mem):
    """ncu's Speed-of-Light verdict from its two composites: "latency",
    "compute", "memory" or "balanced" (compute and memory both match)."""
    if sm < HIGH and mem < HIGH:
        if sm < LATENCY_LINE and mem < LATENCY_LINE:
            return "latency"
        if abs(sm - mem) < BALANCED:
            return "balanced"
    return "compute" if sm >= mem else "memory"


def agrees(ours, sol):
    """A class agrees with the verdict: the same, either unit of a balanced
    one, or divergence (not a SOL class)."""
    return (ours == sol or ours == "divergence"
            or (sol == "balanced" and ours in ("compute", "memory")))


def profiles(path):
    d = json.load(open(path))
    if d.get("format") == "gpuadvise-demo":
        for v in d["variants"]:
            yield f"{d['demo']}/{v['name']}", v["profile"]
    else:
        yield os.path.basename(path), d


def quick_metrics(ga):
    out = subprocess.run([ga, "--quick", "--list-metrics"], capture_output=True, text=True)
    return {l for l in out.stdout.split("\n") if l and not l.startswith("#")}


def strip(prof, keep):
    """The profile as a --quick collection would have recorded it."""
    p = json.loads(json.dumps(prof))
    p["metrics"] = [m for m in p["metrics"] if m in keep]
    for l in p["launches"]:
        l["values"] = {k: v for k, v in l["values"].items() if k in keep}
    return p


def classes(ga, prof):
    with tempfile.NamedTemporaryFile("w", suffix=".json", delete=False) as f:
        json.dump(prof, f)
    out = subprocess.run([ga, "--import", f.name, "--format", "json"], capture_output=True, text=True)
    os.unlink(f.name)
    return json.loads(out.stdout)


def main():
    ga, paths = sys.argv[1], sys.argv[2:]
    keep = quick_metrics(ga)
    rows, agree, total, quick_agree = [], 0, 0, 0
    for path in paths:
        for label, prof in profiles(path):
            rep = classes(ga, prof)
            quick = {(k["name"], tuple(k["grid"]), tuple(k["block"])): k["class"]
                     for k in classes(ga, strip(prof, keep))["kernels"]}
            for k in rep["kernels"]:
                l = rep["profile"]["launches"][k["launch_indices"][0]]
                sm, mem = l["values"].get(SM), l["values"].get(MEM)
                if sm is None or mem is None:
                    continue
                sol = sol_class(sm, mem)
                ours = k["class"]
                ok = agrees(ours, sol)
                q = quick.get((k["name"], tuple(k["grid"]), tuple(k["block"])), "?")
                total += 1
                agree += ok
                quick_agree += q == ours
                rows.append((label, k["name"].split("(")[0][:28], sm, mem, sol, ours, q,
                             ("" if ok else "DIFFERS") + ("" if q == ours else " QUICK-DIFFERS")))
    print(f"{'recording':26} {'kernel':28} {'SM%':>6} {'MEM%':>6} {'SOL class':10} "
          f"{'gpuadvise':10} {'--quick':10}")
    for r in rows:
        print(f"{r[0][:26]:26} {r[1]:28} {r[2]:6.1f} {r[3]:6.1f} {r[4]:10} {r[5]:10} {r[6]:10} {r[7]}")
    print(f"{agree} of {total} kernels agree with the composite Speed-of-Light class")
    print(f"{quick_agree} of {total} kernels get the same class with --quick "
          f"({len(keep)} metrics) as with the default metrics")
    return 0 if agree == total else 1


if __name__ == "__main__":
    sys.exit(main())
