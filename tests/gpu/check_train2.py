#!/usr/bin/env python3
"""Checks one transformer training run under gpuadvise against its plain run
(tests/gpu/run-on-device.sh, step train2; tests/cli runs it on made-up
files).  Usage:
  check_train2.py PLAIN_OUT PROFILED_OUT REPORT_JSON PLAIN_WALL_S PROFILED_WALL_S
PLAIN_OUT and PROFILED_OUT are transformer_train.py's standard output,
REPORT_JSON the JSON report of the profiled run.  Checks that the `loss`
lines are identical, that every kernel of at least 1 % of the GPU time
had every rule checked, that no library kernel (an owner other than
the user's or Triton's) was measured for source lines, and, without CUDA
graphs, that every kernel was measured; prints the loop's and the process's time ratios
and how many launches each mechanism measured.  Exit 1 when a check
fails."""
import json
import sys

SHARE = 0.01
# The owners whose kernels the user edits (rules/owners.yaml's editable).
EDITABLE = ("user", "triton")


def lines(path, prefix):
    with open(path) as f:
        return [l.rstrip("\n") for l in f if l.startswith(prefix)]


def loop_s(path):
    got = lines(path, "loop_s ")
    return float(got[-1].split()[1]) if got else float("nan")


def main(argv):
    if len(argv) != 6:
        print(__doc__, file=sys.stderr)
        return 2
    plain, prof, report, wall_plain, wall_prof = argv[1:]
    ok = True
    lp, lq = lines(plain, "loss "), lines(prof, "loss ")
    if not lp or lp != lq:
        ok = False
        print(f"FAIL loss lines differ: plain {lp} profiled {lq}")
    else:
        print(f"ok   {len(lp)} loss lines identical (last: {lp[-1]})")
    with open(report) as f:
        r = json.load(f)
    big = [k for k in r["kernels"] if k.get("share", 0) >= SHARE]
    partial = [k for k in big if k.get("unchecked_rules")]
    for k in partial:
        print(f"FAIL {100 * k['share']:.1f} % {k['name'][:70]}: not checked: "
              f"{', '.join(k['unchecked_rules'])}")
    ok = ok and not partial and bool(big)
    print(f"{'ok  ' if not partial and big else 'FAIL'} {len(big) - len(partial)} of {len(big)} "
          f"kernels of >= {100 * SHARE:g} % share fully checked ({len(r['kernels'])} kernels)")
    libsrc = [k for k in r["kernels"] if "source" in k and k.get("owner", "user") not in EDITABLE]
    for k in libsrc:
        print(f"FAIL {k.get('owner')} kernel {k['name'][:70]} measured for source lines")
    ok = ok and not libsrc
    mech = r["summary"].get("measured", {})
    print("measured: " + ", ".join(f"{k} {v}" for k, v in mech.items()))
    # Without CUDA graphs every kernel passes a launch callback: none may
    # be left without counters (a kernel launched once after the program
    # repeated used to wait for a loop that never held it).
    if not mech.get("graph_launches"):
        bare = [k for k in r["kernels"] if k.get("class") is None]
        for k in bare:
            print(f"FAIL not measured: {k['name'][:70]} (launches timed: {k.get('timeline_launches', 0)})")
        print(f"{'ok  ' if not bare else 'FAIL'} {len(r['kernels']) - len(bare)} of "
              f"{len(r['kernels'])} kernels measured")
        ok = ok and not bare
    a, b = loop_s(plain), loop_s(prof)
    wp, wq = float(wall_plain), float(wall_prof)
    print(f"loop {a:.3f} s plain, {b:.3f} s profiled: x{b / a:.2f} (target 1.5); "
          f"process {wp:.2f} s, {wq:.2f} s: x{wq / wp:.2f} (target 1.3)")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main(sys.argv))
