#!/usr/bin/env python3
"""Classes agreeing, for bench/overhead.sh: do gpuadvise's classes in this
run agree with the Speed-of-Light class of ncu's own SpeedOfLight section
on the same program in the same run?

Usage: bench/sol_agree.py GPUADVISE PROFILE NCU_CSV|SOL_PROFILE [MIN_SHARE_PCT]
  PROFILE  gpuadvise's profile of the program (-o)
  MIN_SHARE_PCT  only kernels holding at least this share of the GPU time
           in gpuadvise's report (default 0: every kernel)
  NCU_CSV  ncu --section SpeedOfLight --csv output (metric labels or, with
           --print-metric-name name, metric names), best with
           --print-kernel-base mangled: ncu and gpuadvise demangle C++
           names differently ("at::<unnamed>::" against
           "at::native::(anonymous namespace)::")
  SOL_PROFILE  instead of ncu's CSV, a gpuadvise profile (.json) of the
           same program run with --no-loop-replay --metrics
           sm__throughput.avg.pct_of_peak_sustained_elapsed,
           gpu__compute_memory_throughput.avg.pct_of_peak_sustained_elapsed:
           the two metrics of ncu's SpeedOfLight verdict, measured by
           kernel replay as ncu measures them, at a fraction of ncu's time
           (it does not lock the clocks; percentages of peak barely move)
The verdict is the one ncu printed (its SOLBottleneck rule's message in the
CSV: "grid too small" and "latency issues" are latency, "more heavily
utilized" names the unit, "well-balanced" matches compute and memory);
without that message (a SOL profile, or a high-throughput message) it is
rebuilt from the two composites with the rule's thresholds
(classes_vs_sol.sol_class: both under 60 % latency, 10 points balanced).
Prints "AGREE/KERNELS" (a kernel gpuadvise calls divergent counts as
agreeing, as in bench/classes_vs_sol.py: divergence is not a SOL class),
or "?" when the inputs cannot be read; the kernels that differ go to
stderr.  Kernels are matched by name (mangled when ncu printed those, else
without the parameter list), grid and block, each side's first launch of
them."""
import csv, json, os, subprocess, sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from classes_vs_sol import MEM, SM, agrees, sol_class  # noqa: E402

# The same metrics under the labels ncu prints without --print-metric-name.
LABELS = {"Compute (SM) Throughput": SM, "Memory Throughput": MEM}
# ncu's verdict: the SOLBottleneck rule's message, by its opening words.
VERDICT = "verdict"
VERDICTS = (("This kernel grid is too small", "latency"),
            ("This workload exhibits low compute throughput", "latency"),
            ("Memory is more heavily utilized", "memory"),
            ("Compute is more heavily utilized", "compute"),
            ("Compute and Memory are well-balanced", "balanced"))


def verdict(rule, text):
    """The class ncu's SpeedOfLight section printed for a kernel, or None
    (another rule, or a message this table does not know, such as the
    high-throughput one: the composites decide those)."""
    if rule != "SOLBottleneck":
        return None
    for start, cls in VERDICTS:
        if (text or "").startswith(start):
            return cls
    return None


def base(name):
    """The name without its parameter list: the parenthesised group that
    ends it (C++ names hold other parentheses: "(anonymous namespace)",
    "{lambda(float, float)#1}", "operator()")."""
    name = name.strip()
    if not name.endswith(")"):
        return name
    depth = 0
    for i in range(len(name) - 1, -1, -1):
        if name[i] == ")":
            depth += 1
        elif name[i] == "(":
            depth -= 1
            if depth == 0:
                return name[:i].strip()
    return name


def key(name):
    """What two tools' spellings of one kernel share: its base name
    without spaces ("> >" and ">>" alike)."""
    return "".join(base(name).split())


def number(text):
    try:
        return float(text.replace(",", ""))
    except ValueError:
        return None


def dims(text):
    """ncu's "(4, 1, 1)" as (4, 1, 1); None when absent."""
    try:
        return tuple(int(x) for x in (text or "").strip("() ").split(","))
    except ValueError:
        return None


def is_mangled(name):
    return name.startswith("_Z")


def ncu_values(path):
    """{(kernel, grid, block): {metric: value}} from the first launch of
    each, and whether ncu printed mangled names (--print-kernel-base
    mangled): then the kernel is its mangled name, else key(name)."""
    with open(path, newline="") as f:
        lines = [l for l in f if l.startswith('"')]   # the CSV, not ncu's ==PROF== notes
    rows = list(csv.DictReader(lines))
    mangled = any(is_mangled(r.get("Kernel Name") or "") for r in rows)
    out, first_id = {}, {}
    for row in rows:
        name, metric = row.get("Kernel Name"), row.get("Metric Name")
        metric = LABELS.get(metric, metric)
        if not name:
            continue
        k = (name if mangled else key(name), dims(row.get("Grid Size")),
             dims(row.get("Block Size")))
        first_id.setdefault(k, row.get("ID"))
        if row.get("ID") != first_id[k]:
            continue
        v = verdict(row.get("Rule Name"), row.get("Rule Description"))
        if v is not None:
            out.setdefault(k, {})[VERDICT] = v
        if metric not in (SM, MEM):
            continue
        v = number(row.get("Metric Value", ""))
        if v is not None:
            out.setdefault(k, {})[metric] = v
    return out, mangled


def profile_values(path):
    """The same, from a gpuadvise profile holding the two composites:
    each kernel's first launch, keyed by mangled name, grid and block."""
    with open(path) as f:
        prof = json.load(f)
    out = {}
    for l in prof.get("launches", []):
        k = (l.get("mangled") or l["name"], tuple(l["grid"]), tuple(l["block"]))
        v = l.get("values", {})
        if k not in out and v.get(SM) is not None and v.get(MEM) is not None:
            out[k] = {SM: v[SM], MEM: v[MEM]}
    return out, True


def main():
    ga, profile, sol_csv = sys.argv[1:4]
    min_share = float(sys.argv[4]) / 100 if len(sys.argv) > 4 else 0.0
    try:
        rep = json.loads(subprocess.run([ga, "--import", profile, "--format", "json"],
                                        capture_output=True, text=True, check=True).stdout)
        sol, mangled = (profile_values(sol_csv) if sol_csv.endswith(".json")
                        else ncu_values(sol_csv))
    except (OSError, ValueError, subprocess.CalledProcessError) as e:
        print(f"sol_agree: {e}", file=sys.stderr)
        print("?")
        return 0
    # gpuadvise's kernels are (name, grid, block), as ncu's rows are.
    ours = {}
    for k in rep["kernels"]:
        if k.get("share", 0) < min_share:
            continue
        name = k.get("mangled") or k["name"] if mangled else key(k["name"])
        ours[(name, tuple(k["grid"]), tuple(k["block"]))] = (base(k["name"]), k["class"])
    agree = total = 0
    for k, (name, cls) in sorted(ours.items()):
        v = sol.get(k, {})
        if SM not in v or MEM not in v:
            print(f"sol_agree: {name} {k[1]}x{k[2]}: not in ncu's output", file=sys.stderr)
            continue
        want = v.get(VERDICT) or sol_class(v[SM], v[MEM])
        total += 1
        if agrees(cls, want):
            agree += 1
        else:
            print(f"sol_agree: {name} {k[1]}x{k[2]}: gpuadvise {cls}, SOL {want} "
                  f"(SM {v[SM]:.1f} %, memory {v[MEM]:.1f} %)", file=sys.stderr)
    print(f"{agree}/{total}" if total else "?")
    return 0


if __name__ == "__main__":
    sys.exit(main())
