#!/usr/bin/env python3
"""meson test accuracy-validation: the validation set of the accuracy bench
(kernels/validation/, gpuadvise-validation), checked without a GPU:

  - every pair registered in kernels/validation/*.cu has a unique name that
    is not a calibration pair's, and a label of rule ids that exist in
    rules/ (several separated by commas) or `none`;
  - kernels/meson.build builds every file of kernels/validation/ into
    gpuadvise-validation, and docs/ACCURACY.md's "Validation set" table
    names every pair with its label;
  - `gpuadvise-validation --list` (when the build has it: nvcc found) lists
    exactly those pairs, labels and kinds;
  - score.py on a validation list: of two rules the best ranked counts,
    `none` is a miss, --set validation labels the rows, and merging keeps
    the other sets' rows;
  - bench/accuracy/run.sh --set validation and rescore.sh end to end, with
    stand-ins for gpuadvise and the pairs program (copies of the scripts in
    a temporary folder, so that bench/accuracy/results.json is not written).

usage: validation_test.py SRCDIR [GPUADVISE_VALIDATION]
"""
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile

root = os.path.abspath(sys.argv[1] if len(sys.argv) > 1 else os.path.join(os.path.dirname(__file__), "..", ".."))
program = sys.argv[2] if len(sys.argv) > 2 else None
bench = os.path.join(root, "bench", "accuracy")
failures = []


def check(cond, what):
    if not cond:
        failures.append(what)
        print("not ok - " + what)


PAIR_RE = re.compile(r'GA_PAIR\(\s*"([^"]*)"\s*,\s*"([^"]*)"\s*,\s*(true|false)\s*,')


def registered(folder):
    """(name, label, kind, file) of each GA_PAIR in folder's .cu files."""
    out = []
    for f in sorted(os.listdir(folder)):
        if f.endswith(".cu"):
            text = open(os.path.join(folder, f)).read()
            for m in PAIR_RE.finditer(text):
                out.append((m.group(1), m.group(2), "control" if m.group(3) == "true" else "pair", f))
    return out


# --- the pairs in the sources ------------------------------------------------
vdir = os.path.join(root, "kernels", "validation")
pairs = registered(vdir)
calibration = {p[0] for p in registered(os.path.join(root, "kernels", "accuracy"))}
rules = {f[:-5] for f in os.listdir(os.path.join(root, "rules")) if f.endswith(".yaml")}
names = [p[0] for p in pairs]
check(len(pairs) >= 8, "kernels/validation registers at least 8 pairs (%d)" % len(pairs))
check(len(set(names)) == len(names), "validation pair names are unique: %s" % names)
for name, label, kind, f in pairs:
    check(re.match(r"^[a-z0-9-]+$", name) is not None, "%s (%s): name is [a-z0-9-]" % (name, f))
    check(name not in calibration, "%s (%s): not also a calibration pair" % (name, f))
    check(kind == "pair", "%s (%s): a pair, not a control" % (name, f))
    parts = label.split(",")
    check(len(set(parts)) == len(parts) and all(parts), "%s: label %r names each rule once" % (name, label))
    check(label == "none" or "none" not in parts, "%s: none stands alone (%r)" % (name, label))
    for r in parts:
        check(r == "none" or r in rules, "%s: label %r: %r is not a rule id of rules/" % (name, label, r))

# Every file of the folder is built into gpuadvise-validation.
build_text = open(os.path.join(root, "kernels", "meson.build")).read()
m = re.search(r"validation_sources\s*=\s*files\(([^)]*)\)", build_text)
listed = set(re.findall(r"'([^']+)'", m.group(1))) if m else set()
check(m is not None, "kernels/meson.build defines validation_sources")
check("accuracy/main.cu" in listed, "gpuadvise-validation has gpuadvise-pairs' main (accuracy/main.cu)")
for f in sorted(os.listdir(vdir)):
    if f.endswith(".cu"):
        check("validation/" + f in listed, "kernels/meson.build builds validation/%s" % f)
for f in listed:
    check(os.path.exists(os.path.join(root, "kernels", f)), "kernels/%s exists" % f)

# docs/ACCURACY.md: a row per pair with its label.
doc = open(os.path.join(root, "docs", "ACCURACY.md")).read()
sec = doc.split("\n## Validation set", 1)
check(len(sec) == 2, "docs/ACCURACY.md has a 'Validation set' section")
section = sec[1].split("\n## ", 1)[0] if len(sec) == 2 else ""
for name, label, _, _ in pairs:
    row = [ln for ln in section.splitlines() if ln.startswith("| %s |" % name)]
    check(len(row) == 1, "docs/ACCURACY.md: one table row for %s" % name)
    if row:
        cells = [c.strip() for c in row[0].strip("|").split("|")]
        want = label.replace(",", ", ")
        check(want in cells, "docs/ACCURACY.md: %s labelled %s (row: %s)" % (name, want, row[0]))

# --- the program's list ------------------------------------------------------
if program:
    p = subprocess.run([program, "--list"], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    check(p.returncode == 0, "gpuadvise-validation --list exits 0 (%d: %s)" % (p.returncode, p.stderr[-300:]))
    got = sorted(tuple(ln.split(None, 3)[:3]) for ln in p.stdout.splitlines() if ln.strip())
    want = sorted((n, lab, kind) for n, lab, kind, _ in pairs)
    check(got == want, "gpuadvise-validation --list lists the registered pairs: %s, want %s" % (got, want))
    check(all(len(ln.split(None, 3)) == 4 for ln in p.stdout.splitlines()), "each listed pair has a description")
else:
    print("# gpuadvise-validation not built here (no nvcc): its --list is not checked")


# --- score.py on a validation list ----------------------------------------------
def finding(rule, speedup, low, high):
    return {"rule": rule, "speedup": speedup, "speedup_low": low, "speedup_high": high}


def report(findings):
    return {"kernels": [{"name": "k(int*)", "total_ns": 1000.0, "findings": list(range(len(findings)))}],
            "findings": findings}


LIST = ("two-rules rule-a,rule-b pair the second rule ranks first\n"
        "no-rule none pair no rule covers it\n"
        "one-rule rule-a pair the rule does not fire\n")
REPORTS = {
    "two-rules": report([finding("rule-b", 2.0, 1.5, 3.0), finding("rule-a", 9.0, 8.0, 10.0)]),
    "no-rule": report([finding("rule-a", 2.0, 1.5, 3.0)]),
    "one-rule": report([finding("rule-c", 2.0, 1.5, 3.0)]),
}
TIMES = "two-rules 200.0 100.0 2.0000\nno-rule 300.0 100.0 3.0000\none-rule 100.0 100.0 1.0000\n"
OLD = [{"pair": "cal", "set": "calibration", "rule": "rule-a", "rank": 1, "predicted": 2.0, "low": 1.0,
        "high": 3.0, "measured": 2.0, "control": False},
       {"pair": "gone", "set": "validation", "rule": "rule-a", "rank": 1, "predicted": 2.0, "low": 1.0,
        "high": 3.0, "measured": 2.0, "control": False},
       {"pair": "ext", "set": "external", "rule": "rule-a", "rank": 1, "predicted": 2.0, "low": 1.0,
        "high": 3.0, "measured": 2.0, "control": False, "kernel": "k", "label": "x"}]


def write(path, text):
    with open(path, "w") as f:
        f.write(text)


def check_rows(rows, what):
    by = {r["pair"]: r for r in rows}
    check(set(by) == {"two-rules", "no-rule", "one-rule"}, "%s: the three pairs (%s)" % (what, sorted(by)))
    check(all(r["set"] == "validation" for r in rows), "%s: every row in the validation set" % what)
    two = by.get("two-rules", {})
    check(two.get("rule") == "rule-b" and two.get("rank") == 1 and two.get("predicted") == 2.0
          and two.get("low") == 1.5 and two.get("high") == 3.0,
          "%s: of two rules the best ranked counts: %s" % (what, two))
    none = by.get("no-rule", {})
    check(none.get("rule") == "none" and none.get("rank") is None and none.get("predicted") is None,
          "%s: none is a miss, whatever fired: %s" % (what, none))
    one = by.get("one-rule", {})
    check(one.get("rule") == "rule-a" and one.get("rank") is None and one.get("measured") == 1.0,
          "%s: a rule that did not fire: %s" % (what, one))


work = tempfile.mkdtemp(prefix="accuracy-validation-")
try:
    rep = os.path.join(work, "reports")
    os.makedirs(rep)
    for n, r in REPORTS.items():
        json.dump(r, open(os.path.join(rep, n + ".json"), "w"))
    write(os.path.join(work, "list.txt"), LIST)
    write(os.path.join(work, "times.txt"), TIMES)
    merged = os.path.join(work, "merged.json")
    json.dump(OLD, open(merged, "w"))
    p = subprocess.run([sys.executable, os.path.join(bench, "score.py"), "--list", os.path.join(work, "list.txt"),
                        "--set", "validation", "--times", os.path.join(work, "times.txt"), "--reports", rep,
                        "--results", os.path.join(work, "results.json"), "--merge-into", merged,
                        "--table", os.path.join(work, "table.md")],
                       stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    check(p.returncode == 0, "score.py --set validation exits 0 (%d: %s)" % (p.returncode, p.stderr[-300:]))
    if p.returncode == 0:
        check_rows(json.load(open(os.path.join(work, "results.json"))), "score.py")
        rows = json.load(open(merged))
        check([(r["pair"], r["set"]) for r in rows] ==
              [("cal", "calibration"), ("two-rules", "validation"), ("no-rule", "validation"),
               ("one-rule", "validation"), ("ext", "external")],
              "merge: the validation rows replaced, the other sets kept, in set order: %s" %
              [(r["pair"], r["set"]) for r in rows])
        table = open(os.path.join(work, "table.md")).read()
        check("### validation set" in table and "| no-rule | none | (no rule) |" in table,
              "the table has a validation section and the none row")
        check("| labelled rule 1st or 2nd | 33 % of 3 pairs |" in table,
              "the validation section's share: 1 of 3 pairs")

    # --- run.sh --set validation and rescore.sh with stand-ins ------------------
    copy = os.path.join(work, "bench", "accuracy")
    os.makedirs(copy)
    for f in ("run.sh", "rescore.sh", "score.py"):
        shutil.copy(os.path.join(bench, f), copy)
    json.dump(OLD, open(os.path.join(copy, "results.json"), "w"))
    build = os.path.join(work, "build")
    os.makedirs(os.path.join(build, "kernels"))
    fake_reports = os.path.join(work, "fake-reports")
    shutil.copytree(rep, fake_reports)
    write(os.path.join(build, "gpuadvise"), """#!/bin/sh
# A stand-in: the report of the pair named after --pair, or the --import'ed one.
log=""; imp=""; pair=""
while [ $# -gt 0 ]; do
  case $1 in
  --log-file) log=$2; shift ;;
  --import) imp=$2; shift ;;
  --pair) pair=$2; shift ;;
  esac
  shift
done
if [ -n "$imp" ]; then cp "$imp" "$log"; else cp "$FAKE_REPORTS/$pair.json" "$log"; fi
""")
    write(os.path.join(build, "kernels", "gpuadvise-validation"), """#!/bin/sh
case $1 in
--list) cat "$FAKE_LIST" ;;
--time) grep "^$2 " "$FAKE_TIMES" ;;
--pair) echo "$2 slow check ok" ;;
*) exit 2 ;;
esac
""")
    for f in (os.path.join(build, "gpuadvise"), os.path.join(build, "kernels", "gpuadvise-validation")):
        os.chmod(f, 0o755)
    env = dict(os.environ, FAKE_REPORTS=fake_reports, FAKE_LIST=os.path.join(work, "list.txt"),
               FAKE_TIMES=os.path.join(work, "times.txt"), BENCH_STEP_LIMIT="60")
    runsh = os.path.join(copy, "run.sh")
    p = subprocess.run(["sh", runsh, "--set", "bogus", build], env=env, stdout=subprocess.PIPE,
                       stderr=subprocess.PIPE, text=True)
    check(p.returncode == 2, "run.sh --set bogus: usage error 2 (%d)" % p.returncode)
    p = subprocess.run(["sh", runsh, "--set", "validation", build], env=env, stdout=subprocess.PIPE,
                       stderr=subprocess.PIPE, text=True)
    check(p.returncode == 0, "run.sh --set validation with stand-ins exits 0 (%d: %s)" %
          (p.returncode, p.stderr[-500:]))
    out = os.path.join(copy, "out", "validation")
    check(os.path.exists(os.path.join(out, "set.txt")) and open(os.path.join(out, "set.txt")).read() == "validation\n",
          "run.sh: the default OUT_DIR is out/validation, and set.txt names the set")
    check(os.path.exists(os.path.join(out, "times.txt")) and open(os.path.join(out, "times.txt")).read() == TIMES,
          "run.sh: times.txt from --time of each listed pair")
    if os.path.exists(os.path.join(out, "results.json")):
        check_rows(json.load(open(os.path.join(out, "results.json"))), "run.sh")
    rows = json.load(open(os.path.join(copy, "results.json")))
    check([r["pair"] for r in rows] == ["cal", "two-rules", "no-rule", "one-rule", "ext"],
          "run.sh: the validation rows merged into results.json, the others kept: %s" % [r["pair"] for r in rows])
    p = subprocess.run(["sh", os.path.join(copy, "rescore.sh"), build, out, os.path.join(work, "rescored")],
                       env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    check(p.returncode == 0, "rescore.sh on the validation run exits 0 (%d: %s)" % (p.returncode, p.stderr[-500:]))
    if os.path.exists(os.path.join(work, "rescored", "results.json")):
        check_rows(json.load(open(os.path.join(work, "rescored", "results.json"))), "rescore.sh")
    check("0 of 3 validation rows differ" in p.stderr,
          "rescore.sh compares with results.json's validation rows: %s" % p.stderr[-300:])
finally:
    shutil.rmtree(work, ignore_errors=True)

print("%d failures" % len(failures) if failures else "ok - validation set: %d pairs" % len(pairs))
sys.exit(1 if failures else 0)
