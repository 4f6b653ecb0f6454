#!/usr/bin/env python3
"""Classes agreeing, for bench/overhead.sh: do gpuadvise's classes in this
run agree with the Speed-of-Light class of ncu's own SpeedOfLight section
on the same program in the same session?

Usage: bench/sol_agree.py GPUADVISE PROFILE NCU_CSV
  PROFILE  gpuadvise's profile of the program (-o)
  NCU_CSV  ncu --section SpeedOfLight --csv output (metric labels or, with
           --print-metric-name name, metric names)
Prints "AGREE/KERNELS" (a kernel gpuadvise calls divergent counts as
agreeing, as in bench/classes_vs_sol.py: divergence is not a SOL class),
or "?" when the inputs cannot be read; the kernels that differ go to
stderr.  Kernels are matched by name without the parameter list, each
side's first launch of it."""
import csv, json, os, subprocess, sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from classes_vs_sol import MEM, SM, sol_class  # noqa: E402

# The same metrics under the labels ncu prints without --print-metric-name.
LABELS = {"Compute (SM) Throughput": SM, "Memory Throughput": MEM}


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


def ncu_values(path):
    """{kernel base name: {metric: value}} from the first launch of each."""
    with open(path, newline="") as f:
        lines = [l for l in f if l.startswith('"')]   # the CSV, not ncu's ==PROF== notes
    out, first_id = {}, {}
    for row in csv.DictReader(lines):
        name, metric = row.get("Kernel Name"), row.get("Metric Name")
        metric = LABELS.get(metric, metric)
        if not name or metric not in (SM, MEM):
            continue
        k = key(name)
        first_id.setdefault(k, row.get("ID"))
        if row.get("ID") != first_id[k]:
            continue
        v = number(row.get("Metric Value", ""))
        if v is not None:
            out.setdefault(k, {})[metric] = v
    return out


def main():
    ga, profile, sol_csv = sys.argv[1:4]
    try:
        rep = json.loads(subprocess.run([ga, "--import", profile, "-f", "json"],
                                        capture_output=True, text=True, check=True).stdout)
        sol = ncu_values(sol_csv)
    except (OSError, ValueError, subprocess.CalledProcessError) as e:
        print(f"sol_agree: {e}", file=sys.stderr)
        print("?")
        return 0
    ours = {}
    for k in rep["kernels"]:
        ours.setdefault(key(k["name"]), (base(k["name"]), k["class"]))
    agree = total = 0
    for k, (name, cls) in sorted(ours.items()):
        v = sol.get(k, {})
        if SM not in v or MEM not in v:
            print(f"sol_agree: {name}: not in ncu's output", file=sys.stderr)
            continue
        want = sol_class(v[SM], v[MEM])
        total += 1
        if cls == want or cls == "divergence":
            agree += 1
        else:
            print(f"sol_agree: {name}: gpuadvise {cls}, SOL {want} "
                  f"(SM {v[SM]:.1f} %, memory {v[MEM]:.1f} %)", file=sys.stderr)
    print(f"{agree}/{total}" if total else "?")
    return 0


if __name__ == "__main__":
    sys.exit(main())
