"""Large profiles for tests/cli/limits.sh and bench/import.sh, made from
recorded ones (each launch a copy of a recorded launch with its metric
values):

  huge.json            about 50 MB: the nine launches of testapp-all over
                       and over (same kernels, new indices)
  kernels-10000.json   10,000 launches of 10,000 kernels
  launches-10000.json  10,000 launches of one kernel

Usage: python3 large_profiles.py OUTDIR RECORDED_DIR, or write() from
Python."""
import copy
import json
import os
import sys


def dump(path, obj):
    with open(path, "w") as f:
        json.dump(obj, f, separators=(",", ":"))


def write(t, rec):
    all9 = json.load(open(os.path.join(rec, "testapp-all.json")))
    one = json.load(open(os.path.join(rec, "testapp-fma_loop.json")))
    l0 = one["launches"][0]

    p = copy.deepcopy(all9)
    size = len(json.dumps(p["launches"][0], separators=(",", ":")))
    n = 50 * 1000 * 1000 // size + 1
    p["launches"] = []
    for i in range(n):
        l = copy.deepcopy(all9["launches"][i % 9])
        l["index"] = i
        p["launches"].append(l)
    dump(os.path.join(t, "huge.json"), p)

    p = copy.deepcopy(one)
    p["launches"] = []
    for i in range(10000):
        l = copy.deepcopy(l0)
        l["name"] = "kernel_%d(float*, int)" % i
        l["mangled"] = "_Z%dkernel_%dPfi" % (len("kernel_%d" % i), i)
        l["index"] = i
        l["duration_ns"] = 1000.0 + i
        p["launches"].append(l)
    dump(os.path.join(t, "kernels-10000.json"), p)
    for l in p["launches"]:
        l["name"], l["mangled"] = l0["name"], l0["mangled"]
    dump(os.path.join(t, "launches-10000.json"), p)


if __name__ == "__main__":
    write(sys.argv[1], sys.argv[2])
