#!/usr/bin/env python3
"""shapes.py: one kernel launched with several grids is a group per launch
shape, each with its own findings; "What to do first" lists each rule on
it once, with what it saves over all the shapes.

  shapes.py make RECORDING OUT   write a profile of the recording's kernel
                                 at three grids (half, same, twice its
                                 duration), and a second kernel once
  shapes.py many RECORDING OUT   the recording's kernel at 20 grids, each
                                 under 1 % of the GPU time, beside a
                                 second kernel 500 times as long
  shapes.py check REPORT.json    the JSON report's "first" against its
                                 findings and kernels (exit 1 on a mismatch)
"""
import copy
import json
import math
import sys


def make(src, out):
    p = json.load(open(src))
    base = p["launches"][0]
    p["launches"] = []
    for i, scale in enumerate((0.5, 1.0, 2.0)):
        l = copy.deepcopy(base)
        l["index"] = i
        l["grid"] = [max(1, int(base["grid"][0] * scale)), 1, 1]
        l["duration_ns"] = base["duration_ns"] * scale
        if "gpu__time_duration.sum" in l["values"]:
            l["values"]["gpu__time_duration.sum"] = l["duration_ns"]
        p["launches"].append(l)
    other = copy.deepcopy(base)
    other["index"] = 3
    other["name"], other["mangled"] = "other_kernel(float*)", "_Z12other_kernelPf"
    p["launches"].append(other)
    p.pop("unprofiled", None)
    json.dump(p, open(out, "w"))


def many(src, out):
    p = json.load(open(src))
    base = p["launches"][0]
    p["launches"] = []
    for i in range(20):
        l = copy.deepcopy(base)
        l["index"] = i
        l["grid"] = [base["grid"][0] + i, 1, 1]
        p["launches"].append(l)
    other = copy.deepcopy(base)
    other["index"] = 20
    other["name"], other["mangled"] = "other_kernel(float*)", "_Z12other_kernelPf"
    other["duration_ns"] = base["duration_ns"] * 500
    if "gpu__time_duration.sum" in other["values"]:
        other["values"]["gpu__time_duration.sum"] = other["duration_ns"]
    p["launches"].append(other)
    p.pop("unprofiled", None)
    json.dump(p, open(out, "w"))


def check(path):
    r = json.load(open(path))
    bad = []
    seen = {}
    for d in r["first"]:
        if d["kind"] != "finding":
            continue
        f = r["findings"][d["index"]]
        k = r["kernels"][f["kernel"]]
        key = (k["pid"], k["mangled"], f["rule"])
        if key in seen:
            bad.append("%s on %s listed twice in first" % (f["rule"], k["name"]))
        seen[key] = d
    for key, d in seen.items():
        pid, mangled, rule = key
        group = [f for f in r["findings"] if f["rule"] == rule
                 and r["kernels"][f["kernel"]]["mangled"] == mangled
                 and r["kernels"][f["kernel"]]["pid"] == pid]
        if len(group) == 1:
            if "shapes" in d:
                bad.append("%s: one shape but a shapes entry" % rule)
            continue
        s = d.get("shapes")
        if not s or s["count"] != len(group):
            bad.append("%s on %s: %d shapes, first says %s" % (rule, mangled, len(group), s))
            continue
        best = max(group, key=lambda f: f["saving"])
        if r["findings"][d["index"]] is not best and r["findings"][d["index"]]["saving"] != best["saving"]:
            bad.append("%s: the entry is not the shape that saves most" % rule)
        total = sum(f["saving"] for f in group)
        t = sum(r["kernels"][f["kernel"]]["share"] for f in group)
        saved = sum((1 - 1 / f["estimated_speedup"]) * r["kernels"][f["kernel"]]["share"]
                    for f in group)
        want = {"saving": total, "speedup": t / (t - saved)}
        for name, v in want.items():
            if not math.isclose(s[name], v, rel_tol=1e-9):
                bad.append("%s: shapes.%s %r, the findings give %r" % (rule, name, s[name], v))
        if not math.isclose(d["saving"], total, rel_tol=1e-9):
            bad.append("%s: ranks by %r, not the shapes' sum %r" % (rule, d["saving"], total))
        if not s["speedup_min"] <= s["speedup"] <= s["speedup_max"]:
            bad.append("%s: %r outside its range %r-%r" % (rule, s["speedup"], s["speedup_min"],
                                                          s["speedup_max"]))
    savings = [d["saving"] for d in r["first"]]
    if savings != sorted(savings, reverse=True):
        bad.append("first is not by saving: %r" % savings)
    if not any("shapes" in d for d in r["first"]):
        bad.append("no entry over several shapes")
    for b in bad:
        print(b)
    return 1 if bad else 0


if __name__ == "__main__":
    if len(sys.argv) == 4 and sys.argv[1] == "make":
        make(sys.argv[2], sys.argv[3])
        sys.exit(0)
    if len(sys.argv) == 4 and sys.argv[1] == "many":
        many(sys.argv[2], sys.argv[3])
        sys.exit(0)
    if len(sys.argv) == 3 and sys.argv[1] == "check":
        sys.exit(check(sys.argv[2]))
    sys.exit(__doc__)
