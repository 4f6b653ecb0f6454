#!/usr/bin/env python3
"""Assertions of the GPU suite on profiles and reports written by gpuadvise.

    check_profile.py testapp PROFILE        names, launch configuration, metric sanity
    check_profile.py classes REPORT         classes of the known kernels
    check_profile.py names PROFILE a,b      exactly these kernels were profiled
    check_profile.py launches PROFILE N I   N launches, the first with index I
    check_profile.py crashed PROFILE N      N launches and the profile marked incomplete
    check_profile.py unprofiled PROFILE N   N launches counted but left unprofiled
    check_profile.py classes_only REPORT    classes of the known kernels (no findings)
    check_profile.py passes PROFILE N       collected in N replay passes
    check_profile.py same_sets PROFILE_A PROFILE_B
                                            the same passes, metric sets and metrics
                                            in each set
    check_profile.py pids PROFILE N         launches from N distinct processes
    check_profile.py min_share REPORT PCT SETS
                                            --min-share PCT: kernels marked below it end
                                            under it, at least one is, and kernels of
                                            twice that share got all SETS metric sets
    check_profile.py loop LOOP_REPORT REPLAY_REPORT MIN
                                            loop replay measured at least MIN launches,
                                            every kernel got every metric set, with the
                                            classes and instruction counts of replaying
    check_profile.py source_line REPORT KERNEL SRC MARKER
                                            KERNEL's top source line is the line of SRC
                                            marked "// gpuadvise-expect: MARKER"
Exit status 0 when every assertion holds; each failure is printed."""
import json
import sys

failures = []


def expect(cond, msg):
    if not cond:
        failures.append(msg)


def load(path):
    with open(path) as f:
        return json.load(f)


def base(name):
    return name.split("(")[0]


def by_name(prof):
    out = {}
    for l in prof["launches"]:
        out.setdefault(base(l["name"]), []).append(l)
    return out


def val(l, metric):
    """A metric of a launch, or of the first launch of a list that has it
    (repeats of a kernel measure different metric sets)."""
    for one in (l if isinstance(l, list) else [l]):
        v = one["values"].get(metric)
        if v is not None:
            return v
    return float("nan")


def testapp(path):
    prof = load(path)
    k = by_name(prof)
    want = ["copy_coalesced", "copy_strided", "branch_evenodd", "chain_one_warp", "fma_loop",
            "matmul_naive", "transpose_naive", "smem_conflict", "tiny_add"]
    for w in want:
        expect(w in k, f"kernel {w} missing (have {sorted(k)})")
    if failures:
        return
    expect(prof["device"]["sm_count"] > 0, "device sm_count")
    expect(prof["collection"]["passes"] >= 1, "passes recorded")
    one = k["chain_one_warp"][0]
    expect(one["grid"] == [1, 1, 1] and one["block"] == [32, 1, 1],
           f"chain_one_warp config {one['grid']} {one['block']}")
    expect(k["copy_coalesced"][0]["block"][0] == 256, "copy_coalesced block 256")
    for w in want:
        l = k[w][0]
        expect(l["duration_ns"] and l["duration_ns"] > 0, f"{w}: duration")
        expect(l["registers"] > 0, f"{w}: registers")
    dram = val(k["copy_coalesced"], "dram__throughput.avg.pct_of_peak_sustained_elapsed")
    expect(dram > 50, f"copy_coalesced DRAM throughput {dram:.1f}% (expected > 50%)")
    s = k["copy_strided"]
    spr = val(s, "l1tex__t_sectors_pipe_lsu_mem_global_op_ld.sum") / \
        max(val(s, "l1tex__t_requests_pipe_lsu_mem_global_op_ld.sum"), 1)
    expect(spr > 16, f"copy_strided sectors per load request {spr:.1f} (expected > 16)")
    b = k["branch_evenodd"]
    tpi = val(b, "smsp__thread_inst_executed.sum") / max(val(b, "smsp__inst_executed.sum"), 1)
    expect(10 < tpi < 22, f"branch_evenodd threads per instruction {tpi:.1f} (expected ~16)")
    occ = val(k["chain_one_warp"], "sm__warps_active.avg.pct_of_peak_sustained_active")
    expect(occ < 10, f"chain_one_warp achieved occupancy {occ:.1f}% (expected very low)")
    smc = k["smem_conflict"]
    conf = val(smc, "l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_ld.sum")
    expect(conf > 0, f"smem_conflict bank conflicts {conf}")


def classes(path):
    classes_only(path)
    rep = load(path)
    tops = {}
    for f in rep["findings"]:
        tops.setdefault(base(f["kernel_name"]), f["rule"])
    expect(tops.get("copy_strided") == "uncoalesced-global-access",
           f"copy_strided top finding {tops.get('copy_strided')}")


def classes_only(path):
    rep = load(path)
    got = {base(k["name"]): k["class"] for k in rep["kernels"]}
    want = {"matmul_naive": "memory", "copy_strided": "memory", "branch_evenodd": "divergence",
            "chain_one_warp": "latency", "fma_loop": "compute"}
    for name, cls in want.items():
        expect(got.get(name) == cls, f"{name}: class {got.get(name)} (expected {cls})")


def sets(path, most):
    """Metric sets: no launch over `most` passes, at least two sets; each
    kernel's first launch takes set 0 (the classifier's), and its repeats
    cover every set evenly (counts within one of each other)."""
    prof = load(path)
    col = prof["collection"]
    expect(1 <= col["passes"] <= int(most), f"{col['passes']} passes per launch (at most {most})")
    nsets = col.get("metric_sets", 1)
    expect(nsets >= 2, f"{nsets} metric sets (expected 2 or more)")
    for name, ls in by_name(prof).items():
        got = [l.get("metric_set") for l in sorted(ls, key=lambda l: l["index"])]
        counts = [got.count(s) for s in range(nsets)]
        expect(got[0] == 0, f"{name}: first launch took set {got[0]} (expected 0)")
        if len(got) >= nsets:
            expect(max(counts) - min(counts) <= 1, f"{name}: uneven metric sets {got}")
    t = col.get("profiler_setup_seconds", 0), col.get("profiler_measure_seconds", 0)
    expect(t[0] > 0 and t[1] > 0, f"profiler set-up and measure times recorded {t}")


def passes(path, n):
    got = load(path)["collection"]["passes"]
    expect(got == int(n), f"{got} passes (expected {n})")


def same_sets(path_a, path_b):
    """Two runs of one program measured the same metrics in each metric set,
    with the same passes (what the counter availability image may change)."""
    def per_set(prof):
        out = {}
        for l in prof["launches"]:
            got = {m for m, v in l["values"].items() if v is not None}
            out.setdefault(l.get("metric_set", 0), set()).update(got)
        return out
    a, b = load(path_a), load(path_b)
    for key in ("passes", "metric_sets"):
        expect(a["collection"].get(key) == b["collection"].get(key),
               f"{key}: {a['collection'].get(key)} against {b['collection'].get(key)}")
    sa, sb = per_set(a), per_set(b)
    expect(len(sa) >= 1 and sorted(sa) == sorted(sb), f"sets {sorted(sa)} against {sorted(sb)}")
    for s in sorted(set(sa) & set(sb)):
        expect(len(sa[s]) > 1 and sa[s] == sb[s],
               f"set {s}: {len(sa[s])} metrics against {len(sb[s])}, differing "
               f"{sorted(sa[s] ^ sb[s])[:5]}")


def names(path, want):
    got = sorted({base(l["name"]) for l in load(path)["launches"]})
    expect(got == sorted(want.split(",")), f"kernels {got} (expected {want})")


def launches(path, n, first):
    ls = load(path)["launches"]
    expect(len(ls) == int(n), f"{len(ls)} launches (expected {n})")
    if ls:
        expect(ls[0]["index"] == int(first), f"first launch index {ls[0]['index']} (expected {first})")


def unprofiled(path, n):
    u = load(path).get("unprofiled", [])
    got = sum(e["launches"] for e in u)
    expect(got == int(n), f"{got} unprofiled launches recorded (expected {n})")


def crashed(path, n):
    p = load(path)
    expect(len(p["launches"]) == int(n), f"{len(p['launches'])} launches (expected {n})")
    expect(p["collection"].get("incomplete") is True, "profile not marked incomplete")
    expect(p["collection"].get("app_signal") == 6, f"app_signal {p['collection'].get('app_signal')}")


def pids(path, n):
    got = {l["pid"] for l in load(path)["launches"]}
    expect(len(got) == int(n), f"{len(got)} processes (expected {n})")


def source_line(path, kernel, src, marker):
    tag = "gpuadvise-expect: " + marker
    with open(src) as f:
        want = [i + 1 for i, text in enumerate(f) if tag in text]
    expect(len(want) == 1, f"{src}: {len(want)} lines marked '{tag}' (expected 1)")
    ks = [k for k in load(path)["kernels"] if base(k["name"]).split(" ")[-1] == kernel]
    expect(len(ks) >= 1, f"kernel {kernel} not in the report")
    if not ks or not want:
        return
    srcs = [k["source"] for k in ks if "source" in k]
    expect(srcs, f"{kernel}: no source section")
    if not srcs:
        return
    lines = srcs[0]["lines"]
    expect(srcs[0]["lineinfo"] is True, f"{kernel}: no line information")
    expect(lines, f"{kernel}: no source line ranked")
    if lines:
        top = lines[0]
        name = (top.get("file") or "").split("/")[-1]
        expect(name == src.split("/")[-1] and top.get("line") == want[0],
               f"{kernel}: top line {name}:{top.get('line')} ({top.get('summary')}), "
               f"expected {src.split('/')[-1]}:{want[0]}; all: "
               + "; ".join(f"{l.get('line')}: {l.get('summary')}" for l in lines))


def sarif_line(path, rule, src, marker):
    tag = "gpuadvise-expect: " + marker
    with open(src) as f:
        want = [i + 1 for i, text in enumerate(f) if tag in text]
    res = [r for r in load(path)["runs"][0]["results"] if r["ruleId"] == rule]
    expect(len(res) >= 1, f"{path}: no {rule} result")
    if not res or len(want) != 1:
        return
    loc = res[0]["locations"][0].get("physicalLocation")
    expect(loc is not None, f"{rule}: no physical location: {res[0]['locations']}")
    if loc:
        uri = loc["artifactLocation"].get("uri")
        expect(uri == "kernels/" + src.split("/")[-1] and loc["region"]["startLine"] == want[0]
               and loc["artifactLocation"].get("uriBaseId") == "SRCROOT",
               f"{rule}: at {uri}:{loc['region']['startLine']}, expected "
               f"kernels/{src.split('/')[-1]}:{want[0]}")


# Warp states that say the line waits on global memory (CUPTI PC sampling
# reasons without the smsp__pcsamp_warps_issue_stalled_ prefix).
MEMORY_STALLS = {"long_scoreboard", "lg_throttle", "drain", "mio_throttle", "tex_throttle",
                 "membar"}


def min_share(path, pct, nsets):
    """A kernel left short of metric sets by --min-share PCT took less than
    PCT % of the GPU time when it was last launched, so it ends under it too;
    one with twice that share at the end was measured in full."""
    rep = load(path)
    frac, nsets = float(pct) / 100, int(nsets)
    below = [k for k in rep["kernels"] if k["below_min_share"]]
    expect(below, "no kernel below --min-share (expected at least tiny_add)")
    for k in below:
        expect(k["share"] < frac, f"{base(k['name'])}: below --min-share {pct} % but ends "
               f"with {100 * k['share']:.2f} % of the GPU time")
        # its further launches: timed by the timeline, or charged at the mean
        rest = k["unprofiled_launches"] + k.get("timeline_launches", 0)
        expect(rest > 0, f"{base(k['name'])}: below --min-share, none unprofiled")
    sets_of = {}
    for l in rep["profile"]["launches"]:
        sets_of.setdefault((l["name"], tuple(l["grid"])), set()).add(l["metric_set"])
    for k in rep["kernels"]:
        if k["share"] >= 2 * frac and (k["launches"] + k["unprofiled_launches"] +
                                        k.get("timeline_launches", 0)) >= nsets:
            got = sets_of.get((k["name"], tuple(k["grid"])), set())
            expect(len(got) == nsets and not k["below_min_share"],
                   f"{base(k['name'])}: {100 * k['share']:.1f} % of the GPU time, sets {sorted(got)}")
    print("below --min-share:", ", ".join(f"{base(k['name'])} {100 * k['share']:.3f} %" for k in below))


# Counts that do not depend on timing or on what the caches hold: the same
# whether a launch is replayed or measured across a loop's iterations.
EXACT_COUNTS = ("smsp__inst_executed.sum", "smsp__thread_inst_executed.sum",
                "l1tex__t_requests_pipe_lsu_mem_global_op_ld.sum",
                "l1tex__t_sectors_pipe_lsu_mem_global_op_ld.sum",
                "l1tex__t_requests_pipe_lsu_mem_global_op_st.sum")


def loop(loop_path, replay_path, least):
    """Loop replay (default) against replaying every launch
    (--no-loop-replay) on the same program: the loop report measured at
    least `least` launches across iterations, every kernel took every metric
    set, and each kernel has the class and the instruction and request
    counts it has when replayed (within 1 %)."""
    lrep, rrep = load(loop_path), load(replay_path)
    lp = lrep["profile"]
    n = lp["collection"].get("loop_replay_launches", 0)
    expect(n >= int(least), f"{n} launches measured across loop iterations (expected >= {least})")
    expect(rrep["profile"]["collection"].get("loop_replay_launches", 0) == 0,
           "--no-loop-replay still measured launches across iterations")
    nsets = lp["collection"].get("metric_sets", 1)

    def per_kernel(prof):
        out = {}
        for l in prof["launches"]:
            k = out.setdefault((base(l["name"]), tuple(l["grid"]), tuple(l["block"])), {})
            for m, v in l["values"].items():
                if v is not None:
                    k.setdefault(m, v)
            k.setdefault("__sets", set()).add(l["metric_set"])
        return out
    lk, rk = per_kernel(lp), per_kernel(rrep["profile"])
    lcls = {(base(k["name"]), tuple(k["grid"])): k["class"] for k in lrep["kernels"]}
    rcls = {(base(k["name"]), tuple(k["grid"])): k["class"] for k in rrep["kernels"]}
    compared = 0
    for key, vals in sorted(lk.items()):
        name = f"{key[0]} {list(key[1])}"
        expect(len(vals["__sets"]) == nsets, f"{name}: sets {sorted(vals['__sets'])} of {nsets}")
        expect(lcls.get(key[:2]) == rcls.get(key[:2]),
               f"{name}: class {lcls.get(key[:2])} with loop replay, {rcls.get(key[:2])} replayed")
        other = rk.get(key, {})
        for m in EXACT_COUNTS:
            a, b = vals.get(m), other.get(m)
            if a is None or b is None:
                continue
            compared += 1
            expect(abs(a - b) <= 0.01 * max(abs(b), 1),
                   f"{name}: {m} {a:.6g} with loop replay, {b:.6g} replayed")
    expect(compared > 0, "no instruction count to compare")
    print(f"{len(lk)} kernels, {n} launches by loop replay, {compared} counts compared")


def stall_reason(path, kernel, allowed=None):
    """The kernel's top source line carries PC samples and its dominant
    stall reason is one of `allowed` (comma-separated; default: the memory
    ones)."""
    want = set(allowed.split(",")) if allowed else MEMORY_STALLS
    ks = [k for k in load(path)["kernels"] if base(k["name"]).split(" ")[-1] == kernel]
    srcs = [k["source"] for k in ks if "source" in k]
    expect(srcs, f"{kernel}: no source section")
    if not srcs:
        return
    expect(srcs[0].get("pc_sampling"), f"{kernel}: not PC-sampled")
    lines = srcs[0]["lines"]
    expect(lines, f"{kernel}: no source line ranked")
    if not lines:
        return
    top = lines[0]
    expect(top.get("samples", 0) > 0 and top.get("stall_reason"),
           f"{kernel}: top line {top.get('line')} has no stall samples: {top.get('summary')}")
    expect(top.get("stall_reason") in want,
           f"{kernel}: top line {top.get('line')} stalls on {top.get('stall_reason')}, "
           f"expected one of {sorted(want)}: {top.get('summary')}")
    expect("stalls: " in top.get("summary", ""), f"{kernel}: summary without stalls")
    print(f"{kernel}: line {top.get('line')}: {top.get('summary')}")


def main():
    cmd, args = sys.argv[1], sys.argv[2:]
    {"testapp": testapp, "classes": classes, "names": names, "launches": launches,
     "crashed": crashed, "pids": pids, "unprofiled": unprofiled,
     "classes_only": classes_only, "passes": passes, "sets": sets,
     "source_line": source_line, "stall_reason": stall_reason, "sarif_line": sarif_line,
     "min_share": min_share, "loop": loop,
     "same_sets": same_sets}[cmd](*args)
    for f in failures:
        print("FAIL:", f)
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
