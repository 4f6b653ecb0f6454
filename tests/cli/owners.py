#!/usr/bin/env python3
"""tests/cli/owners.py: kernel owners and framework-level actions on the
PyTorch workloads recorded on the H200 (issue 26), with no GPU.

  - every kernel of pytorch.json (inference, emit_nvtx), pytorch-nvtx.json (a
    small training step under emit_nvtx) and pytorch-transformer.json (bf16
    autocast, SDPA, AdamW; no NVTX) gets the owner listed here by hand, from
    what each library's kernels are called (a name no row matches fails: a
    new recording must be labelled);
  - a framework-level action comes first among the actions on the
    inference and transformer recordings (the transformer's text leads with
    host-bound launching, in wall time, from its timeline), and no rule
    without `owners:` (source-level advice) fires on a kernel the user does
    not own;
  - the operations appear on pytorch.json, and each action names the
    operations its kernels ran in (computed here from the profile's paths);
  - framework-sdpa-math fires on launches under SDPA's math path, not under
    a fused backend's, and says nothing without NVTX ranges.

Usage: owners.py GPUADVISE SRCDIR
"""
import json
import os
import re
import subprocess
import sys
import tempfile

GPUADVISE, SRC = sys.argv[1], sys.argv[2]
REC = os.path.join(SRC, "tests", "fixtures", "recorded")
failures = 0
count = 0


def check(ok, what):
    global failures, count
    count += 1
    print(("ok %d - " if ok else "not ok %d - ") % count + what)
    if not ok:
        failures += 1


# (regex on the demangled name, expected owner): first match wins.
EXPECTED = [
    (r"^nvjet_sm90_", "cublas"),                       # cuBLAS Hopper GEMMs
    (r"^sm[0-9]+_xmma_gemm_.*_cublas$", "cublas"),      # cuBLAS xmma GEMMs
    (r"^void cutlass::Kernel2<cutlass_80_simt_sgemm", "cublas"),
    (r"^void sgemm_largek_lds64<", "cublas"),          # cuBLAS legacy SIMT GEMM
    (r"^void scal_kernel<", "cublas"),
    (r"^void cublasLt::epilogue::", "cublas"),
    (r"^cudnn_generated_fort_native_sdpa_", "cudnn"),  # cuDNN SDPA engines
    (r"^void cudnn::fusion::", "cudnn"),               # its backward helpers
    (r"^void pytorch_flash::flash_fwd_kernel", "flash-attention"),
    (r"^fmha_cutlassF_", "aten"),                      # PyTorch's mem-efficient SDPA
    (r"^void (\(anonymous namespace\)::)?softmax_warp_forward", "aten"),
    (r"^void at::native::", "aten"),
    (r"^void \(anonymous namespace\)::elementwise_kernel_with_index<", "aten"),
]

# Expected kinds where a framework rule depends on them.
KINDS = [
    (r"^nvjet_sm90_", "gemm"),
    (r"xmma_gemm", "gemm"),
    (r"sgemm", "gemm"),
    (r"^cudnn_generated_fort_native_sdpa_", "attention"),
    (r"^void cudnn::fusion::", None),
    (r"multi_tensor_apply_kernel", "optimizer"),
    (r"softmax_warp_forward", "softmax"),
    (r"flash_fwd_kernel", "attention"),
    (r"^fmha_cutlassF_", "attention"),
]


def expected(table, name):
    for rx, who in table:
        if re.search(rx, name):
            return (who,)
    return None


def report(path, fmt="json"):
    r = subprocess.run([GPUADVISE, "--import", path, "--format", fmt, "--quiet"],
                       capture_output=True, text=True, timeout=120)
    return r.returncode, r.stdout, r.stderr


def owners_of(profile_path):
    rc, out, err = report(profile_path)
    check(rc in (0, 1), "%s: report made (rc %d) %s" % (os.path.basename(profile_path),
                                                        rc, err.strip()[:200]))
    return json.loads(out) if out else {"kernels": [], "findings": [], "summary": {}}


reports = {}
for base in ("pytorch", "pytorch-nvtx", "pytorch-transformer"):
    path = os.path.join(REC, base + ".json")
    r = owners_of(path)
    reports[base] = (path, r)
    bad = []
    for k in r["kernels"]:
        want = expected(EXPECTED, k["name"])
        if want is None or want[0] != k["owner"]:
            bad.append("%s: %s, expected %s" % (k["name"][:90], k["owner"],
                                                 want[0] if want else "no row"))
    check(r["kernels"] and not bad,
          "%s: every kernel's owner as labelled%s" % (base, "".join("\n# " + b for b in bad)))

# Kinds: a rule directory with the owners file and one rule per kind that
# fires on every kernel of that kind, so the findings say which kind each
# kernel got.
with tempfile.TemporaryDirectory() as tmp:
    rules = os.path.join(tmp, "rules")
    os.mkdir(rules)
    for f in ("owners.yaml", "classify.yaml"):
        with open(os.path.join(SRC, "rules", f)) as i, open(os.path.join(rules, f), "w") as o:
            o.write(i.read())
    kinds = ("gemm", "attention", "optimizer", "softmax", "conv")
    for kind in kinds:
        with open(os.path.join(rules, "kind-%s.yaml" % kind), "w") as o:
            o.write("id: kind-%s\ntitle: kind %s\nclass: latency\nseverity: low\n"
                    "checklist: 1\nspeedup: [1, 1]\nowners: [editable, aten, cublas, cudnn, cutlass, "
                    "flash-attention, nccl]\nwhen: owner__kind_%s\nestimate: 0\n"
                    "fix: none\nexample: none\nexplain: none\n" % (kind, kind, kind))
    names = {}
    for base in ("pytorch-nvtx", "pytorch-transformer"):
        r = subprocess.run([GPUADVISE, "--import", os.path.join(REC, base + ".json"),
                            "--format", "json", "--quiet", "--no-default-rules", "--rules", rules],
                           capture_output=True, text=True, timeout=120)
        check(r.returncode in (0, 1) and r.stdout,
              "%s: report with the kind rules (rc %d) %s" % (base, r.returncode,
                                                             r.stderr.strip()[:300]))
        if not r.stdout:
            continue
        rep = json.loads(r.stdout)
        for k in rep["kernels"]:
            names.setdefault(k["name"], set())
        for f in rep["findings"]:
            names[rep["kernels"][f["kernel"]]["name"]].add(f["rule"][len("kind-"):])
    bad = []
    for name, got in names.items():
        want = expected(KINDS, name)
        if want is None:
            continue
        if got != ({want[0]} if want[0] else set()):
            bad.append("%s: %s, expected %s" % (name[:90], sorted(got), want[0]))
    check(names and not bad, "kinds of the recorded kernels%s" %
          "".join("\n# " + b for b in bad))

# Framework action first; no source-level advice on library kernels.
rule_owners = {}
for f in os.listdir(os.path.join(SRC, "rules")):
    if f.endswith(".yaml") and f not in ("owners.yaml", "classify.yaml"):
        text = open(os.path.join(SRC, "rules", f)).read()
        rid = re.search(r"^id: *(\S+)", text, re.M).group(1)
        rule_owners[rid] = re.search(r"^owners:", text, re.M) is not None
for base in ("pytorch", "pytorch-transformer", "pytorch-nvtx"):
    path, r = reports[base]
    s = r["summary"]
    if base != "pytorch-nvtx":
        check(s.get("framework_first") is True and s.get("actions")
              and s["actions"][0]["rule"].startswith("framework-"),
              "%s: a framework-level action is first" % base)
        rc, text, _ = report(path, "text")
        first = text.split("What to do first", 1)[-1].split("\n 1. ", 1)[-1].split("\n")[0]
        titles = {a["rule"] for a in s.get("actions", [])}
        entry1 = text.split("What to do first", 1)[-1].split("\n 2. ")[0]
        # One currency: with a timeline, a program finding that saves more
        # of the wall time (host-bound launching) comes before the actions,
        # and the text follows the report's `first` list.
        lead = (r.get("first") or [{}])[0]
        if lead.get("kind") == "program_finding":
            pf = r["program_findings"][lead["index"]]
            check(pf["title"] in first and "of wall time" in entry1 and
                  pf["rule"] == "host-bound-launching",
                  "%s: the text's first entry is the host-bound finding, in wall time" % base)
        else:
            check(s.get("actions") and "saves" in text and first.strip() != "" and
                  any(("(%s)" % t) in entry1 for t in titles),
                  "%s: the text's first entry is that action" % base)
    lib = [f for f in r["findings"]
           if r["kernels"][f["kernel"]]["owner"] not in ("user", "triton")
           and not rule_owners.get(f["rule"], False)]
    check(not lib, "%s: no source-level finding on a library kernel%s" % (
        base, "".join("\n# %s on %s" % (f["rule"], r["kernels"][f["kernel"]]["name"][:80])
                      for f in lib)))

# Operations on pytorch.json, and each action's operations from the paths.
path, r = reports["pytorch"]
prof = json.load(open(path))
ops = r.get("operations") or []
check(len(ops) > 0, "pytorch: operations in the JSON report")
rc, text, _ = report(path, "text")
check("\nOperations\n" in text, "pytorch: an Operations section in the text report")
for ac in r["summary"].get("actions", []):
    want = set()
    for ki in ac["kernels"]:
        k = r["kernels"][ki]
        for li in k["launch_indices"]:
            p = prof["launches"][li].get("nvtx")
            if p:
                want.add(p.rsplit("/", 1)[-1])
    got = [o["name"] for o in ac.get("operations", [])]
    check(set(got) == want and len(got) == len(want),
          "pytorch: %s names its operations %s (got %s)" % (ac["rule"], sorted(want), got))
    check(all(ops[o["operation"]]["name"] == o["name"] for o in ac.get("operations", [])),
          "pytorch: %s's operation indices point at those operations" % ac["rule"])
    times = [o["time_ns"] for o in ac.get("operations", [])]
    check(times == sorted(times, reverse=True), "pytorch: %s's operations by time" % ac["rule"])
    if ac.get("operations"):
        check(("in operation" + ("s " if len(got) > 1 else " ") + got[0]) in text,
              "pytorch: the text names %s's operations" % ac["rule"])

# SDPA's math path: the small training step's GEMMs and layer norm moved
# under the math operation, its GELU under the flash backend's.
MATH = ("model/aten::scaled_dot_product_attention/"
        "aten::_scaled_dot_product_attention_math/aten::bmm")
BARE = "model/aten::scaled_dot_product_attention/aten::softmax"
FLASH = ("model/aten::scaled_dot_product_attention/"
         "aten::_scaled_dot_product_flash_attention/aten::fill_")
src = json.load(open(os.path.join(REC, "pytorch-nvtx.json")))


def variant(paths):
    p = json.loads(json.dumps(src))
    for l in p["launches"]:
        l.pop("nvtx", None)
        for rx, path in paths:
            if re.search(rx, l["name"]):
                l["nvtx"] = path
    for u in p.get("unprofiled", []):
        u.pop("nvtx", None)
    return p


with tempfile.TemporaryDirectory() as tmp:
    def sdpa_kernels(paths):
        f = os.path.join(tmp, "p.json")
        json.dump(variant(paths), open(f, "w"))
        rc, out, _ = report(f)
        rep = json.loads(out)
        return {rep["kernels"][x["kernel"]]["name"] for x in rep["findings"]
                if x["rule"] == "framework-sdpa-math"}, rep

    got, rep = sdpa_kernels([("xmma_gemm", MATH), ("layer_norm_kernel", BARE),
                             ("GeluCUDA", FLASH)])
    want = {k["name"] for k in rep["kernels"]
            if re.search("xmma_gemm|layer_norm_kernel", k["name"])}
    check(want and got == want,
          "sdpa-math: fires on the kernels under the math path and right under SDPA "
          "(%d of %d)" % (len(got & want), len(want)))
    acts = [a for a in rep["summary"]["actions"] if a["rule"] == "framework-sdpa-math"]
    check(acts and {o["name"] for o in acts[0].get("operations", [])} ==
          {"aten::bmm", "aten::softmax"},
          "sdpa-math: the action names aten::bmm and aten::softmax")
    f = [x for x in rep["findings"] if x["rule"] == "framework-sdpa-math"]
    check(f and all(x.get("low") is not None and x.get("model") for x in f) and
          all(x["estimated_speedup"] is None or x["estimated_speedup"] >= 1 for x in f),
          "sdpa-math: findings carry the named model and a range")
    got, _ = sdpa_kernels([])
    check(got == set(), "sdpa-math: nothing without NVTX ranges")
    got, _ = sdpa_kernels([(".", FLASH)])
    check(got == set(), "sdpa-math: nothing under the flash backend")

print("1..%d" % count)
sys.exit(1 if failures else 0)
