#!/usr/bin/env python3
"""meson test accuracy-score: bench/accuracy/score.py on a fixture of report
JSONs (tests/fixtures/accuracy), no GPU. Every expected value is computed
here from the fixture files themselves, by a plain walk written for this
test, and then compared with score.py's results.json and table."""
import json
import os
import shutil
import subprocess
import sys
import tempfile

root = sys.argv[1] if len(sys.argv) > 1 else os.path.join(os.path.dirname(__file__), "..", "..")
fixture = os.path.join(root, "tests", "fixtures", "accuracy")
score = os.path.join(root, "bench", "accuracy", "score.py")
failures = []


def check(cond, what):
    if not cond:
        failures.append(what)
        print("not ok - " + what)


def expected_row(name, rule, control, times, reports):
    """The row as the issue defines it, from the fixture report."""
    row = {"pair": name, "set": "calibration", "rule": rule, "control": control, "rank": None, "predicted": None,
           "low": None, "high": None, "measured": times.get(name)}
    path = os.path.join(reports, name + ".json")
    if not os.path.exists(path):
        return row
    rep = json.load(open(path))
    candidates = []
    for kern in rep["kernels"]:
        for pos, idx in enumerate(kern["findings"]):
            if rep["findings"][idx]["rule"] == rule:
                candidates.append((pos + 1, -kern["total_ns"], idx))
                break
    if not candidates:
        return row
    rank, _, idx = sorted(candidates)[0]
    fd = rep["findings"][idx]
    row["rank"] = rank
    row["predicted"] = fd["speedup"] if "speedup" in fd else fd.get("estimated_speedup")
    rng = fd.get("speedup_range", fd.get("expected_speedup"))
    row["low"], row["high"] = (rng[0], rng[1]) if rng else (None, None)
    return row


def run(list_lines, tag):
    work = tempfile.mkdtemp(prefix="accuracy-score-")
    try:
        reports = os.path.join(work, "reports")
        shutil.copytree(fixture, reports)
        lst = os.path.join(work, "list.txt")
        with open(lst, "w") as f:
            f.writelines(list_lines)
        results, table = os.path.join(work, "results.json"), os.path.join(work, "table.md")
        p = subprocess.run([sys.executable, score, "--list", lst, "--times",
                            os.path.join(fixture, "times.txt"), "--reports", reports,
                            "--results", results, "--table", table],
                           stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        check(p.returncode == 0, "%s: score.py exits 0 (got %d: %s)" % (tag, p.returncode, p.stderr))
        got = json.load(open(results))
        text = open(table).read()
        check(p.stdout == text, "%s: the printed table is the written table" % tag)
    finally:
        shutil.rmtree(work)

    times = {}
    for line in open(os.path.join(fixture, "times.txt")):
        n, _, _, sp = line.split()
        times[n] = float(sp)
    want = []
    for line in list_lines:
        name, rule, kind = line.split()[:3]
        want.append(expected_row(name, rule, kind == "control", times, fixture))
    check(len(got) == len(want), "%s: one result per listed pair (%d, want %d)" % (tag, len(got), len(want)))
    keys = {"pair", "set", "rule", "rank", "predicted", "low", "high", "measured", "control"}
    for g, w in zip(got, want):
        check(set(g) == keys, "%s: %s has exactly the keys %s" % (tag, w["pair"], sorted(keys)))
        for key in keys:
            gv, wv = g.get(key), w[key]
            same = gv == wv if not isinstance(wv, float) else gv is not None and abs(gv - wv) < 1e-12
            check(same, "%s: %s %s = %r, want %r" % (tag, w["pair"], key, gv, wv))

    # The four targets, from the expected rows.
    pairs = [w for w in want if not w["control"]]
    n = len(pairs)
    top2 = sum(1 for w in pairs if w["rank"] in (1, 2)) / n
    fired = sum(1 for w in want if w["control"] and w["rank"] is not None)
    errs = [abs(w["predicted"] - w["measured"]) / w["measured"] for w in pairs if w["predicted"] is not None]
    inside = sum(1 for w in pairs if w["low"] is not None and w["low"] <= w["measured"] <= w["high"]) / n
    verdict = {True: "| met |", False: "| not met |"}
    lines = text.splitlines()

    def target_line(prefix):
        hits = [l for l in lines if l.startswith("| " + prefix)]
        check(len(hits) == 1, "%s: one target line '%s'" % (tag, prefix))
        return hits[0] if hits else ""

    l1 = target_line("labelled rule 1st or 2nd")
    check("%.0f %% of %d pairs" % (100 * top2, n) in l1 and l1.endswith(verdict[top2 >= 0.9]),
          "%s: top-2 target line %r" % (tag, l1))
    l2 = target_line("controls where the rule fired")
    check(("| %d of " % fired) in l2 and l2.endswith(verdict[fired == 0]), "%s: control line %r" % (tag, l2))
    l3 = target_line("mean / max")
    ok3 = bool(errs) and len(errs) == n and sum(errs) / len(errs) <= 0.15 and max(errs) <= 0.5
    if errs:
        check("%.0f %% / %.0f %%" % (100 * sum(errs) / len(errs), 100 * max(errs)) in l3,
              "%s: error line values %r" % (tag, l3))
    check(("(%d of %d pairs estimated)" % (len(errs), n)) in l3 and l3.endswith(verdict[ok3]),
          "%s: error line %r" % (tag, l3))
    l4 = target_line("measured inside the printed range")
    check("%.0f %% of %d pairs" % (100 * inside, n) in l4 and l4.endswith(verdict[inside >= 0.9]),
          "%s: inside line %r" % (tag, l4))
    return want


full = open(os.path.join(fixture, "list.txt")).readlines()
rows = run(full, "all")
# Facts of the fixture, read off its files: if the walk above went wrong,
# these catch it.
by = {r["pair"]: r for r in rows}
check(by["p-first"]["rank"] == 1 and by["p-second"]["rank"] == 2, "fixture: ranks 1 and 2")
check(by["p-twokernels"]["rank"] == 1 and by["p-twokernels"]["predicted"] is None,
      "fixture: the second kernel's rank, with no estimate")
check(by["p-absent"]["rank"] is None and by["p-missing"]["rank"] is None, "fixture: not fired, no report")
check(by["p-tie"]["predicted"] == 1.6, "fixture: a tie goes to the kernel with more GPU time")
check(by["c-fired"]["rank"] == 1 and by["c-clean"]["rank"] is None, "fixture: controls")
# A subset that meets every target.
run([l for l in full if l.split()[0] in ("p-first", "c-clean")], "subset")

if failures:
    print("%d check(s) failed" % len(failures))
    sys.exit(1)
print("ok - accuracy score: all checks passed")
