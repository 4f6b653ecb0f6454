#!/bin/sh
# tests/cli/ranks.sh: the ranks of a data-parallel job, without a GPU, from
# SYNTHETIC per-rank profiles (tests/cli/make_ranks.py: what
# `srun gpuadvise -o prof-%q{SLURM_PROCID}.json ./app` leaves, 8 ranks a
# host, the same pids on every host):
#   - 256 ranks from 32 hosts in one --import prof-*.json: exit 0, a Ranks
#     table of 256 rows, the planted straggler named with the saving its
#     model gives (computed here from the generator's step), the finding
#     planted on 37 ranks said "on 37 of 256 ranks", the same report
#     whatever the order of the files, every format;
#   - a file that is not a profile among them: status 2, named;
#   - 2 ranks whose step ends in two all-reduces that run alone: the
#     exposed-communication finding's estimate and range, computed here by
#     sampling the step's intervals every microsecond;
#   - a job of 8 ranks against a baseline of 2 (--baseline): both
#     communication shares, computed here from the files.
# Environment (tests/meson.build sets them): GPUADVISE, SRCDIR.
set -u
here=$(cd "$(dirname "$0")" && pwd)
. "$here/tap.sh"
cli_setup ranks
MAKE=$here/make_ranks.py
# the patterns below (r256/prof-*.json) are expanded here, as a shell would
cd "$T" || exit 1

run() {
	TMPDIR=$T/tmp timeout 120 "$GPUADVISE" "$@" >"$T/out" 2>"$T/err" </dev/null
	rc=$?
}

# 1. 256 ranks, rank 77 a straggler, ranks 1..37 with an uncoalesced kernel.
python3 "$MAKE" "$T/r256" 256 --straggler 77 --planted 37 >"$T/meta256.json" ||
	not_ok "make_ranks.py 256 ranks"
run --import r256/prof-*.json
expect "256 ranks: --import prof-*.json (the shell's expansion) -> 0" [ "$rc" = 0 ]
cp "$T/out" "$T/r256.txt"
expect "... a Ranks table of 256 rows, one per rank 0..255" python3 - "$T/r256.txt" <<'PY'
import re, sys
lines = open(sys.argv[1]).read().split("\n")
start = lines.index("Ranks")
rows = []
for l in lines[start + 3:]:
    if not l.strip():
        break
    m = re.match(r"^ +(\d+)  (node\d{3}) +(\d+) +(\d+) ", l)
    if m:
        rows.append(int(m.group(1)))
print("#   rows:", len(rows))
assert rows == list(range(256)), rows[:10]
PY
expect "... the straggler named: rank 77 on node009, pid 4005 (its own pid on its host)" \
	grep -q '^straggler: rank 77 (node009, pid 4005): compute' "$T/r256.txt"
expect "... only rank 77 marked a straggler in the table" sh -c \
	"[ \$(grep -c '(straggler)\$' '$T/r256.txt') = 1 ] &&
	 grep -q '^ *77  node009  4005 .*rank-imbalance (straggler)\$' '$T/r256.txt'"
expect "... the uncoalesced kernel said to be on 37 of 256 ranks, once" sh -c \
	"grep -A8 'copy_strided(…): Uncoalesced global memory access' '$T/r256.txt' |
	 grep -q '^    on 37 of 256 ranks; the figures are rank 1.s\$' &&
	 [ \$(grep -c '): Uncoalesced global memory access\$' '$T/r256.txt') = 1 ]"
expect "... exposed communication said once, on 256 of 256 ranks" sh -c \
	"[ \$(grep -c 'Communication the step waits for' '$T/r256.txt') = 1 ] &&
	 grep -q '^    on 256 of 256 ranks; the figures are rank 0.s\$' '$T/r256.txt'"
expect "... the timelines of the first rank and the straggler only, the others counted" sh -c \
	"grep -q '^rank 0 (pid 4000, node000): ' '$T/r256.txt' &&
	 grep -q '^rank 77 (pid 4005, node009): ' '$T/r256.txt' &&
	 [ \$(grep -c '^rank [0-9]* (pid' '$T/r256.txt') = 2 ] &&
	 grep -q '^254 more ranks: ' '$T/r256.txt'"

# The same report whatever the order of the files (the shell sorts them
# as text: prof-10 before prof-2).
ls r256/prof-*.json | sort -t- -k2 -n -r >files.rev
TMPDIR=$T/tmp timeout 120 xargs "$GPUADVISE" --import <files.rev >"$T/out" 2>"$T/err"
expect "... the files in reverse order: the same report" cmp -s "$T/out" "$T/r256.txt"

# JSON: the ranks, the straggler's saving as its model gives it.
run --format json --import r256/prof-*.json
expect "256 ranks: --format json -> 0" [ "$rc" = 0 ]
cp "$T/out" "$T/r256.json"
expect "... valid against docs/report.schema.json" \
	python3 "$here/check-schema.py" "$SRCDIR/docs/report.schema.json" "$T/r256.json"
expect "... ranks, stragglers, on N of M, the straggler's estimate from its step" \
	python3 - "$T/r256.json" "$T/meta256.json" "$SRCDIR" <<'PY'
import json, sys
r = json.load(open(sys.argv[1]))
meta = json.load(open(sys.argv[2]))
rec = sys.argv[3] + "/tests/fixtures/recorded/"
rk = r["ranks"]
assert rk["count"] == 256 and rk["world_size"] == 256 and rk["hosts"] == 32, rk["count"]
assert rk["stragglers"] == [77], rk["stragglers"]
rows = rk["ranks"]
assert [x["rank"] for x in rows] == list(range(256))
assert len({x["pid"] for x in rows}) == 256, "pids must be told apart"
assert {x["os_pid"] for x in rows} == set(range(4000, 4008))
assert [x["rank"] for x in rows if x["straggler"]] == [77]
on = {}
for e in r["first"]:
    f = (r["program_findings"] if e["kind"] == "program_finding" else r["findings"])[e["index"]]
    on[f["rule"]] = e.get("ranks")
assert on["uncoalesced-global-access"] == 37, on
assert on["exposed-communication"] == 256 and on["rank-imbalance"] == 1, on
# The straggler's model: its compute time beyond the slowest other rank's,
# over its wall time.  From the generator's steps: the compute kernels
# (not the NCCL all-reduce, kernel 2) times the iterations, and the
# recorded fma_loop (every rank) and copy_strided (ranks 1..37) launches.
fma = json.load(open(rec + "testapp-fma_loop.json"))["launches"][0]["duration_ns"]
strided = json.load(open(rec + "testapp-copy_strided.json"))["launches"][0]["duration_ns"]
it, ms = meta["iterations"], 1e6
def compute(step):
    return sum(e - s for s, e, k in step if k != 2) * ms * it
c = compute(meta["straggler"]) + fma
others = compute(meta["steady"]) + fma + strided      # the slowest other: a planted rank
median = compute(meta["steady"]) + fma                 # 218 of 255 others are not planted
wall = (meta["setup_ms"] + it * 100.0) * ms
want = (c - max(median, others)) / wall
f = [f for f in r["program_findings"] if f["rule"] == "rank-imbalance"]
assert len(f) == 1, f
got = f[0]["estimate"]
print("#   straggler's saving: %.6f, its model %.6f" % (got, want))
assert abs(got - want) < 1e-9, (got, want)
assert abs(f[0]["high"] - (c - median) / wall) < 1e-9, f[0]["high"]
PY

run --format markdown --import r256/prof-*.json
expect "256 ranks: --format markdown -> 0, the table and the straggler" sh -c \
	"[ $rc = 0 ] && [ \$(grep -c '^| [0-9]* | \`node' '$T/out') = 256 ] &&
	 grep -q '^- \*\*Straggler: rank 77\*\*' '$T/out' && grep -q 'on 37 of 256 ranks' '$T/out'"
run --format html --import r256/prof-*.json
expect "256 ranks: --format html -> 0, the table and the straggler" sh -c \
	"[ $rc = 0 ] && [ \$(grep -c '^<tr[^>]*><td>[0-9]*</td><td>node' '$T/out') = 256 ] &&
	 grep -q '<b>Straggler: rank 77</b>' '$T/out' && grep -q 'on 37 of 256 ranks' '$T/out'"
run --format junit --import r256/prof-*.json
expect "256 ranks: --format junit -> 0" [ "$rc" = 0 ]
run --fail-on high --import r256/prof-*.json
expect "256 ranks: --fail-on high -> 1 (the straggler, exposed communication)" [ "$rc" = 1 ]

# -o pools them: the pooled profile gives the same report.
run -o pooled.json --import r256/prof-*.json
expect "256 ranks: -o pooled.json -> 0" [ "$rc" = 0 ]
run --import pooled.json
expect "... the pooled profile: the same report" cmp -s "$T/out" "$T/r256.txt"

# 2. A file that is not a profile among the ranks: named, status 2.
python3 "$MAKE" "$T/bad" 8 --bad 5 >/dev/null
run --import bad/prof-*.json
expect "a rank's file that is not a profile -> 2, its name in the message" sh -c \
	"[ $rc = 2 ] && grep -q 'bad/prof-5.json' '$T/err' && [ ! -s '$T/out' ]"

# 3. Two ranks whose step ends in two all-reduces alone, the second after
# a gap: the exposed-communication finding, computed here.
python3 "$MAKE" "$T/r2" 2 >"$T/meta2.json"
python3 - "$T/r2" "$T/meta2.json" <<'PY'
import json, sys
d, meta = sys.argv[1], json.load(open(sys.argv[2]))
extra = [90.0, 94.0, 2]             # ms: one more collective, alone, after a gap
for r in (0, 1):
    path = "%s/prof-%d.json" % (d, r)
    p = json.load(open(path))
    t = p["timelines"][0]
    t["events"].append([extra[0] * 1e6, extra[1] * 1e6, 0, 13, 0, -1, extra[2]])
    t["window_ns"] = t["iteration_ns"] = 95e6
    json.dump(p, open(path, "w"))
meta["steady"].append(extra)
meta["wall_ns"] = p["timelines"][0]["wall_ns"]
json.dump(meta, open(sys.argv[2], "w"))
PY
run --format json --import r2/prof-0.json --import r2/prof-1.json
expect "2 ranks: --format json -> 0" [ "$rc" = 0 ]
expect "... exposed communication: the hideable exposed time, sampled every microsecond" \
	python3 - "$T/out" "$T/meta2.json" <<'PY'
import json, sys
r = json.load(open(sys.argv[1]))
meta = json.load(open(sys.argv[2]))
step, it = meta["steady"], meta["iterations"]
exposed = free = tail = run = 0
for us in range(95000):             # the step's window, 95 ms
    t = us / 1000.0 + 0.0005        # ms, the middle of the microsecond
    comm = any(s <= t < e for s, e, k in step if k == 2)
    comp = any(s <= t < e for s, e, k in step if k != 2)
    if comm and not comp:
        exposed += 1
        run += 1
        tail = max(tail, run)
    else:
        run = 0
        free += comp and not comm
wall_us = meta["wall_ns"] / 1000
hide = min(exposed, free) * it / wall_us
low = max(0.0, hide - tail * it / wall_us)
got = [f for f in r["program_findings"] if f["rule"] == "exposed-communication"]
assert len(got) == 2, [f["rule"] for f in r["program_findings"]]
assert low > 0, "the second stretch leaves a low end above 0"
for f in got:
    print("#   pid %d: estimate %.6f low %.6f; sampled %.6f, %.6f" %
          (f["pid"], f["estimate"], f["low"], hide, low))
    assert abs(f["estimate"] - hide) < 1e-4 and abs(f["high"] - hide) < 1e-4, f
    assert abs(f["low"] - low) < 1e-4, f
ev = {e["name"]: e["value"] for e in got[0]["evidence"]}
assert abs(ev["exposed_pct"] - 100 * exposed * it / wall_us) < 1e-2, ev
assert abs(ev["tail_pct"] - 100 * tail * it / wall_us) < 1e-2, ev
on = [e.get("ranks") for e in r["first"] if e["kind"] == "program_finding"]
assert on == [2], on
assert r["ranks"]["stragglers"] == [], r["ranks"]["stragglers"]
PY

# 4. Communication against world size: a job of 8 ranks compared with a
# baseline of 2 whose all-reduces took half as long.
python3 "$MAKE" "$T/w8" 8 >/dev/null
python3 "$MAKE" "$T/w2" 2 >/dev/null
python3 - "$T/w2" <<'PY'
import json, sys
for r in (0, 1):
    path = "%s/prof-%d.json" % (sys.argv[1], r)
    p = json.load(open(path))
    for k in p["timelines"][0]["kernels"]:
        if k["name"].startswith("ncclDevKernel"):
            k["total_ns"] /= 2
    json.dump(p, open(path, "w"))
PY
run -o w2.json --import w2/prof-*.json
run --format json --baseline w2.json --import w8/prof-*.json
expect "8 ranks against a baseline of 2: --format json -> 0" [ "$rc" = 0 ]
expect "... the communication shares of both world sizes, from the files" \
	python3 - "$T/out" "$T/w2" "$T/w8" <<'PY'
import glob, json, sys
r = json.load(open(sys.argv[1]))
def share(d):
    comm = total = 0.0
    for f in glob.glob(d + "/prof-*.json"):
        p = json.load(open(f))
        total += sum(l["duration_ns"] for l in p["launches"])
        for k in p["timelines"][0]["kernels"]:
            total += k["total_ns"]
            comm += k["total_ns"] if k["name"].startswith("ncclDevKernel") else 0
    return comm / total
sc = r["baseline"]["scaling"]
want = {"baseline_world_size": 2, "world_size": 8,
        "baseline_comm_share": share(sys.argv[2]), "comm_share": share(sys.argv[3])}
print("#   scaling:", sc)
for k, v in want.items():
    assert abs(sc[k] - v) < 1e-9, (k, sc[k], v)
assert sc["comm_share"] > sc["baseline_comm_share"]
PY
run --baseline w2.json --import w8/prof-*.json
expect "... text: the share grows with the world size" sh -c \
	"tr '\\n' ' ' <'$T/out' | tr -s ' ' |
	 grep -q 'communication: [0-9.]*% of GPU time at world size 2 -> [0-9.]*% at 8 (+[0-9.]* points): it grows with the world size'"
run --baseline w2.json --import w2.json
expect "... against a baseline of the same world size: no such line" sh -c \
	"[ $rc = 0 ] && ! grep -q '^communication: ' '$T/out'"


# 6. The recorded H200 x2 DDP run: torchrun started one gpuadvise per rank
# (-o prof-%q{RANK}.json); one --import of both files.
run --format json --import "$SRCDIR/tests/fixtures/recorded/ddp-2rank-rank0.json" \
	"$SRCDIR/tests/fixtures/recorded/ddp-2rank-rank1.json"
expect "recorded DDP, 2 ranks on 2 GPUs: --import of the two files -> 0" [ "$rc" = 0 ]
expect "... two ranks of world size 2 on distinct GPUs, NCCL time on both, from the files" \
	python3 - "$T/out" "$SRCDIR/tests/fixtures/recorded" <<'PY'
import json, sys
r = json.load(open(sys.argv[1]))
want = {}
for i in (0, 1):
    p = json.load(open("%s/ddp-2rank-rank%d.json" % (sys.argv[2], i)))
    proc = p["processes"][0]
    comm = sum(k["total_ns"] for t in p["timelines"] for k in t["kernels"]
               if k["name"].startswith("ncclDevKernel"))
    want[proc["rank"]] = (proc["world_size"], comm)
assert sorted(want) == [0, 1], want
assert all(w == 2 and c > 0 for w, c in want.values()), want
ranks = r["ranks"]
rows = ranks["ranks"]
print("#   ranks:", ranks["count"], [(x["rank"], [g["uuid"][:12] for g in x["gpus"]],
                                     round(x["comm_share"], 3)) for x in rows])
assert ranks["count"] == 2 and ranks["world_size"] == 2
assert len({g["uuid"] for x in rows for g in x["gpus"]}) == 2
for x in rows:
    # the report's communication time is the file's NCCL time, to 1 ns
    assert abs(x["comm_ns"] - want[x["rank"]][1]) <= 1, (x["comm_ns"], want[x["rank"]])
PY

tap_end
