#!/usr/bin/env python3
"""The compute and divergence rules' models, computed here from the profile.

For each rule this module gives the rule's condition and its model's
estimate, low and high, written from the rule file's comment (not from its
expressions), over a kernel's metric values and the roofline's peaks.  The
checker runs gpuadvise on recorded profiles, and on the synthetic
instruction-count fixture in tests/fixtures/models, and requires every
finding of these rules to carry the values computed here, every rule to fire
exactly where its condition holds, and an estimate that reads a metric the
profile lacks to name one it lacks.

check_models.py (meson test models) runs check_all; on its own:
usage: compute_models.py GPUADVISE SRCDIR [PROFILE...]
With PROFILE files (profiles or demo recordings, such as a fresh recording
on the GPU machine), only those are checked, against SRCDIR's rules.
"""
import glob
import json
import lzma
import math
import os
import subprocess
import sys
import tempfile

from owners import Owners


class Missing(Exception):
    """A metric the kernel's profile lacks."""


class Kernel:
    """A kernel group's values: duration-weighted means, as the engine's."""

    def __init__(self, profile, kernel, report):
        launches = [profile["launches"][i] for i in kernel["launch_indices"]]
        self.values = {}
        for name in profile["metrics"]:
            num = den = 0.0
            for launch in launches:
                v = launch.get("values", {}).get(name)
                if v is None:
                    continue
                d = launch.get("duration_ns") or 0
                w = d if d > 0 else 1.0
                num += w * v
                den += w
            if den > 0:
                self.values[name] = num / den
        self.mean_ns = kernel["mean_ns"]
        self.launch0 = launches[0]     # the engine's launch__* come from the first
        self.device = profile["device"]
        self.peaks = report["roofline"]["flops_per_s"]
        self.bws = report["roofline"]["bytes_per_s"]
        self.roof = kernel["roofline"]
        self.xu_top = xu_top_share(profile, kernel)
        self.fchk = op_insts(profile, kernel, "FCHK")
        self.rsq = op_insts(profile, kernel, "MUFU.RSQ")
        self.slowpath = fdiv_slowpath_insts(profile, kernel)

    def __call__(self, name):
        if name not in self.values:
            raise Missing(name)
        return self.values[name]

    def has(self, name):
        return name in self.values

    # Pseudo metrics, from the device and the report's roofline.
    def max_warps_per_sm(self):
        return self.device["max_threads_per_sm"] / self.device["warp_size"]

    def duration(self):
        d = self.values.get("gpu__time_duration.sum")
        return d if d and d > 0 else self.mean_ns

    def headroom(self):
        """1 - the largest of each precision's FLOP rate over its peak and
        each level's byte rate over its bandwidth (roofline__headroom_share)."""
        rates = [(self.roof["flops_per_s"][p], self.peaks.get(p))
                 for p in self.roof["flops_per_s"]]
        rates += [(self.roof["bytes_per_s"][lv], self.bws.get(lv))
                  for lv in self.roof["bytes_per_s"]]
        parts = [r / peak for r, peak in rates if r is not None and peak]
        if not parts:
            raise Missing("roofline__headroom_share")
        return max(0.0, 1 - max(parts))

    def mean_duration(self):
        return self.mean_ns


XU_OPCODES = ("MUFU", "FRND", "F2I", "I2F", "F2F")


def kernel_source(profile, kernel):
    """The kernel's source view: the same pid and mangled name, the same
    launch shape preferred; None without one."""
    mine = [s for s in profile.get("sources", [])
            if s.get("pid") == kernel["pid"] and s.get("mangled") == kernel["mangled"]]
    same = [s for s in mine if s.get("grid") == kernel["grid"] and s.get("block") == kernel["block"]]
    return (same or mine)[0] if mine else None


def xu_top_share(profile, kernel):
    """source__xu_top_opcode_share: of the XU pipe's instructions at the
    kernel's source view, the most executed opcode's share; None without
    opcodes."""
    src = kernel_source(profile, kernel)
    if src is None:
        return None
    by_op, any_op = {}, False
    for pc in src["pcs"]:
        if pc.get("op") is None or pc.get("inst") is None:
            continue
        any_op = True
        if pc["op"].split(".")[0] in XU_OPCODES:
            by_op[pc["op"]] = by_op.get(pc["op"], 0.0) + pc["inst"]
    if not any_op or not sum(by_op.values()):
        return None
    return max(by_op.values()) / sum(by_op.values())


def op_insts(profile, kernel, op):
    """source__fchk_inst and the like: the warp instructions at the
    kernel's source view whose opcode is op, with or without modifiers;
    None without opcodes."""
    src = kernel_source(profile, kernel)
    if src is None:
        return None
    total, any_op = 0.0, False
    for pc in src["pcs"]:
        if pc.get("op") is None or pc.get("inst") is None:
            continue
        any_op = True
        if pc["op"] == op or pc["op"].startswith(op + "."):
            total += pc["inst"]
    return total if any_op else None


FP64_OPCODES = ("DFMA", "DADD", "DMUL", "DSETP", "DMNMX")


def fdiv_slowpath_insts(profile, kernel):
    """source__fdiv_slowpath_inst: the warp instructions of the subroutines
    after the kernel's last EXIT (each up to its RET) that take a
    reciprocal (MUFU.RCP), round in a fixed direction (FFMA.RZ/.RP/.RM) and
    issue no FP64 instruction; None without opcodes."""
    src = kernel_source(profile, kernel)
    if src is None:
        return None
    first = {}
    for pc in src["pcs"]:
        first.setdefault(pc["pc"], pc)
    pcs = [first[k] for k in sorted(first)]
    if not any(p.get("op") is not None and p.get("inst") is not None for p in pcs):
        return None

    def base(op):
        return op.split(".")[0]
    ops = [p.get("op") for p in pcs]
    rets = [i for i, op in enumerate(ops) if op and base(op) == "RET"]
    if not rets:
        return 0.0
    exits = [i for i, op in enumerate(ops[:rets[0]]) if op and base(op) == "EXIT"]
    total, part, rounding, rcp, fp64 = 0.0, 0.0, False, False, False
    for p in pcs[exits[-1] + 1 if exits else 0:]:
        op = p.get("op")
        if op is None:
            continue
        part += p.get("inst") or 0.0
        mods = op.split(".")[1:]
        rounding |= base(op) == "FFMA" and any(m in ("RZ", "RP", "RM") for m in mods)
        rcp |= base(op) == "MUFU" and "RCP" in mods
        fp64 |= base(op) in FP64_OPCODES or (base(op) == "MUFU" and "64H" in op)
        if base(op) == "RET":
            total += part if rounding and rcp and not fp64 else 0.0
            part, rounding, rcp, fp64 = 0.0, False, False, False
    return total


def clamp(x, lo, hi):
    return min(max(x, lo), hi)


def fit(k, x):
    """A fraction saved, no more than the roofline headroom."""
    return clamp(x, 0.0, k.headroom())


# The classifier's names the rules read.
def mem(k):
    return max(k("dram__throughput.avg.pct_of_peak_sustained_elapsed"),
               k("lts__t_sectors.avg.pct_of_peak_sustained_elapsed"),
               k("lts__t_tag_requests.avg.pct_of_peak_sustained_elapsed"),
               k("l1tex__t_sectors.avg.pct_of_peak_sustained_elapsed"),
               k("l1tex__data_pipe_lsu_wavefronts.avg.pct_of_peak_sustained_elapsed"))


ISSUE = "smsp__issue_active.avg.pct_of_peak_sustained_active"
FMA = "sm__pipe_fma_cycles_active.avg.pct_of_peak_sustained_active"
ALU = "sm__inst_executed_pipe_alu.avg.pct_of_peak_sustained_active"
FP64 = "sm__inst_executed_pipe_fp64.avg.pct_of_peak_sustained_active"
TENSOR = "sm__pipe_tensor_cycles_active.avg.pct_of_peak_sustained_active"
XU = "sm__inst_executed_pipe_xu.avg.pct_of_peak_sustained_active"
LSU = "sm__inst_executed_pipe_lsu.avg.pct_of_peak_sustained_active"
WARP_INST = "smsp__inst_executed.sum"
SASS = "sm__sass_thread_inst_executed_op_%s_pred_on.sum"


def sm_busy(k):
    return max(k(ISSUE), k(FMA), k(ALU), k(FP64), k(TENSOR), k(XU), k(LSU))


def cycles_per_issue(k):
    """Cycles between two issued instructions of a warp: measured, or
    resident warps per scheduler over the issue rate."""
    if k.has("smsp__average_warp_latency_per_inst_issued.ratio"):
        return k("smsp__average_warp_latency_per_inst_issued.ratio")
    occ = k("sm__warps_active.avg.pct_of_peak_sustained_active")
    return (occ / 100 * k.max_warps_per_sm() / 4) / max(k(ISSUE) / 100, 0.001)


def stall_share(k, reason):
    ratio = k("smsp__average_warps_issue_stalled_%s_per_issue_active.ratio" % reason)
    return clamp(ratio / max(cycles_per_issue(k), 0.001), 0, 1)


def smem_per_inst(k):
    return ((k("l1tex__data_pipe_lsu_wavefronts_mem_shared_op_ld.sum")
             + k("l1tex__data_pipe_lsu_wavefronts_mem_shared_op_st.sum"))
            / max(k(WARP_INST), 1))


def threads_per_inst(k):
    return k("smsp__thread_inst_executed_pred_on.sum") / max(k(WARP_INST), 1)


# The XU split: thread-level opcode counts as warp instructions.
def lanes(k):
    return k("smsp__thread_inst_executed.sum") / max(k(WARP_INST), 1)


def conversions(k):
    return k("smsp__sass_thread_inst_executed_op_conversion_pred_on.sum") / max(lanes(k), 1)


def fp64_insts(k):
    return (k(SASS % "dadd") + k(SASS % "dmul") + k(SASS % "dfma")) / max(lanes(k), 1)


def promotions(k):
    """F2F conversions of FP64 promotion: at most two per FP64 instruction."""
    return min(conversions(k), 2 * fp64_insts(k))


def divisions(k):
    """Two conversions per division, after the promotion's, but no more than
    three XU instructions, 16 integer instructions and four integer
    multiply-adds on the FMA pipe (its instructions that are not FP32
    arithmetic, where the profile counts them) per division allow."""
    p = promotions(k)
    ints = k(SASS % "integer") / max(lanes(k), 1)
    bounds = [(conversions(k) - p) / 2, (k("sm__inst_executed_pipe_xu.sum") - p) / 3, ints / 16]
    if k.has("sm__inst_executed_pipe_fmaheavy.sum") and k.has("sm__inst_executed_pipe_fmalite.sum"):
        fp32 = (k(SASS % "ffma") + k(SASS % "fmul") + k(SASS % "fadd")) / 32
        bounds.append(max(k("sm__inst_executed_pipe_fmaheavy.sum")
                          + k("sm__inst_executed_pipe_fmalite.sum") - fp32, 0) / 4)
    return max(min(bounds), 0)


def xu_rate(k):
    return (k("sm__inst_executed_pipe_xu.sum.peak_sustained")
            / max(k("sm__inst_executed_pipe_fma.sum.peak_sustained"), 1))


# ---------------------------------------------------------------- the rules
# Each returns (fires, (estimate, low, high)); the models are evaluated
# only when the rule fires, so a metric only the model reads is missing
# there, not in the condition.

def transc_share(k):
    """The XU's transcendental share: less promotions, integer divisions
    and, with opcodes, IEEE FP32 divisions (FCHK) and square roots
    (MUFU.RSQ)."""
    xu_inst = k("sm__inst_executed_pipe_xu.sum")
    divsqrt = (k.fchk or 0.0) + (k.rsq or 0.0)
    return clamp(max(xu_inst - promotions(k) - 3 * divisions(k) - divsqrt, 0) / max(xu_inst, 1), 0, 1)


def transc_insts(k):
    """MUFU warp instructions: the XU's less promotions and divisions."""
    return k("sm__inst_executed_pipe_xu.sum") * transc_share(k)


def fp32_insts(k):
    return (k(SASS % "ffma") + k(SASS % "fmul") + k(SASS % "fadd")) / max(lanes(k), 1)


def mem_headroom(k, x):
    """A fraction saved, no more than the memory part of the roofline."""
    return clamp(x, 0.0, clamp(1 - mem(k) / 100, 0, 1))


def sfu_heavy_math(k):
    """Issue slots: after the fix the kernel takes as long as the busiest of
    the issue of what is left, the XU work left and the units the fix leaves
    alone, over its busiest unit now."""
    fires = k(XU) > 40 and sm_busy(k) >= 60 and transc_share(k) >= 0.5

    def model():
        n = k(WARP_INST)
        xu_inst = k("sm__inst_executed_pipe_xu.sum")
        m = transc_insts(k)
        alone = max(k(LSU), mem(k), k(FP64), k(TENSOR))
        busy = max(sm_busy(k), 1)
        # avoided: one FP32 instruction per call, and the instruction that
        # uses its result; the XU keeps the rest.  A call issues each of
        # its XU opcodes once: with opcodes, the most executed one's share
        # of the XU instructions turns the routines' XU work into calls.
        per_call = k.xu_top if k.xu_top is not None else 1.0
        avoided = max(k(ISSUE) * min(2 * m * per_call / n, 1), k(XU) * (1 - transc_share(k)),
                      alone)
        # intrinsic: the FP32 beyond one per MUFU goes; XU and ALU keep theirs
        wrapper = max(fp32_insts(k) - m, 0)
        intrinsic = max(k(ISSUE) * (1 - min(wrapper / n, 1)), k(XU), k(ALU), alone)
        # rewrite: one instruction per call of up to two MUFU; every XU
        # instruction but the promotions' a transcendental
        calls = (xu_inst - promotions(k)) / 2
        rewrite = max(k(ISSUE) * min(calls / n, 1),
                      k(XU) * clamp(promotions(k) / max(xu_inst, 1), 0, 1), alone)
        return (mem_headroom(k, 1 - avoided / busy), mem_headroom(k, 1 - intrinsic / busy),
                mem_headroom(k, 1 - rewrite / busy))
    return fires, model


# Warp instructions of an IEEE FP32 division's and square root's fast
# paths on sm_90, and of their fast-math forms (MUFU and a multiply).
FP32_DIV_LEN, FP32_SQRT_LEN, FP32_FAST_LEN = 10, 10, 2


def fp32_accurate_math(k):
    """Issue slots: each IEEE division (one FCHK each) becomes MUFU.RCP and
    a multiply, and its slow path's instructions go; the estimate keeps the stalls (the issue share of the time
    shrinks), the high end lets the time follow the instructions, every
    MUFU.RSQ a square root too."""
    n = max(k(WARP_INST), 1)
    div = k.fchk or 0.0
    rsq = k.rsq or 0.0
    slow = k.slowpath or 0.0
    div_saved = clamp((div * (FP32_DIV_LEN - FP32_FAST_LEN) + slow) / n, 0, 1)
    all_saved = clamp((div * (FP32_DIV_LEN - FP32_FAST_LEN) + slow
                       + rsq * (FP32_SQRT_LEN - FP32_FAST_LEN)) / n, 0, 1)
    fires = div_saved >= 0.05

    def model():
        est = mem_headroom(k, k(ISSUE) / 100 * div_saved)
        return est, est, mem_headroom(k, all_saved)
    return fires, model


def integer_division(k):
    def xu_share():
        return clamp(3 * divisions(k) / max(k("sm__inst_executed_pipe_xu.sum"), 1), 0, 1)

    def issue_share():
        return clamp(16 * divisions(k) / max(k(WARP_INST), 1), 0, 1)
    fires = (sm_busy(k) >= 60 and divisions(k) > 0 and xu_share() >= 0.3
             and (k(XU) > 40 or issue_share() >= 0.1))

    def model():
        pipe = k(XU) / 100 * xu_share() * (1 - xu_rate(k))
        issue = k(ISSUE) / 100 * issue_share()
        left = k(ISSUE) * (1 - min(18 * divisions(k) / max(k(WARP_INST), 1), 1))
        return (fit(k, max(pipe, issue)), fit(k, min(pipe, issue)),
                fit(k, 1 - left / max(sm_busy(k), 1)))
    return fires, model


def fp64_in_fp32_code(k):
    """Where the promoted work's unit (FP64 pipe, or the XU's F2F
    conversions, at most two per FP64 instruction) is the kernel's busiest,
    the time scales with its work, which becomes the FP64 instructions at
    the FP32 rate; elsewhere the promoted work's stalls and the
    conversions' issue slots go.  A double routine is shortened either
    way."""
    xu_inst = k("sm__inst_executed_pipe_xu.sum")
    promo = min(conversions(k), 2 * fp64_insts(k))
    promo_xu = k(XU) * clamp(promo / max(xu_inst, 1), 0, 1)
    bind = max(k(FP64), promo_xu)
    fires = bind > 15 and k(FMA) < 60

    def model():
        fp32 = k(FP64) / 100 * k.peaks["FP64"] / k.peaks["FP32"]
        top = max(bind, k(FMA), mem(k), k(ALU), k(LSU), k(TENSOR), k(XU))
        other = max(k(ALU), k(LSU), k(TENSOR), mem(k))
        bound = min(1, bind / max(top, 1))
        cap = clamp(1 - mem(k) / 100, 0, 1)     # the memory roofline, not the FP64 FLOPs'

        def within(x):
            return clamp(x, 0, cap)
        # A double routine: n FP64 instructions per promoted value (two
        # conversions), at most 200; a float routine does its work in 24/53
        # of the instructions it does not share with FP32 arithmetic and
        # the LSU, issued without the FP64 pipe's throttle stalls.
        n = fp64_insts(k) / max(promo / 2, 1)
        routine = clamp(1 - 1 / max(n, 1), 0, 1) if 4 <= n <= 200 else 0.0
        fp32_ops = sum(k(SASS % op) for op in ("fadd", "fmul", "ffma", "hadd", "hmul", "hfma"))
        shortened = clamp(1 - fp32_ops / max(lanes(k), 1) / max(k(WARP_INST), 1)
                          - k(LSU) / max(4 * k(ISSUE), 0.001), 0, 1)
        try:
            throttle = clamp(k("smsp__average_warps_issue_stalled_math_pipe_throttle_per_issue_active.ratio")
                             / k("smsp__average_warp_latency_per_inst_issued.ratio"), 0, 1)
        except Missing:
            throttle = 0.0
        routine_time = (1 - routine * shortened * (1 - 24 / 53)) * max(k(ISSUE) / 100, 1 - throttle)
        pipe = (1 - fp32 / max(bind / 100, 0.01)) * bound
        sequential = bind / 100 - fp32
        if bind < max(top, k(ISSUE)):
            # The promoted unit does not bind: the stalls its work causes
            # (math-pipe throttle in its share of the busiest math pipe,
            # short-scoreboard waits in the conversions' share of the XU)
            # and the conversions' issue slots.
            math_top = max(bind, k(FP64), k(FMA), k(ALU), k(XU))
            try:
                short_sb = clamp(k("smsp__average_warps_issue_stalled_short_scoreboard_per_issue_active.ratio")
                                 / k("smsp__average_warp_latency_per_inst_issued.ratio"), 0, 1)
            except Missing:
                short_sb = 0.0
            pipe = (throttle * bind / max(math_top, 1)
                    + short_sb * clamp(promo / max(xu_inst, 1), 0, 1)
                    + k(ISSUE) / 100 * clamp(promo / max(k(WARP_INST), 1), 0, 1))
            sequential = min(sequential, pipe)
        return (within(max(pipe, 1 - routine_time)),
                within(sequential),
                within((1 - other / max(bind, 1)) * bound))
    return fires, model


def shared_tree_reduction(k):
    fires = (k(ISSUE) > 0 and stall_share(k, "barrier") > 0.1 and smem_per_inst(k) >= 0.05
             and 19.2 <= threads_per_inst(k) < 27.2 and divisions(k) > 0 and k(XU) >= 20
             and k(FMA) < 40 and mem(k) < 80)

    def model():
        tpi = threads_per_inst(k)
        barrier = stall_share(k, "barrier")
        idle = 1 - k(ISSUE) / 100
        d = clamp(19 * divisions(k) / max(k(WARP_INST), 1), 0, 1)
        removed = 1 - (1 - d) * (1 - clamp(1 - tpi / 32, 0, 1))
        est = 1 - (1 - k(ISSUE) / 100 * removed) * (1 - min(barrier, idle))
        return (fit(k, est), fit(k, k(ISSUE) / 100 * d),
                fit(k, 1 - (1 - removed) * (1 - barrier)))
    return fires, model


def thread_divergence(k):
    fires = k(WARP_INST) > 0 and threads_per_inst(k) < 24

    def model():
        """Lanes: the waves' full part shrinks by the share of lanes a branch
        left inactive (predicated-off lanes stay); the ramp and tail (warp
        slots the occupancy permits left empty) stay.  High: every idle
        lane."""
        idle = 1 - threads_per_inst(k) / 32
        diverged = clamp(1 - lanes(k) / 32, 0, idle)
        warps = k("sm__warps_active.avg.pct_of_peak_sustained_active")
        launch = k.launch0.get("occupancy") or {}
        permitted = launch.get("theoretical_pct") or 100.0
        fill = clamp(warps / permitted, 0, 1)
        return (fit(k, diverged * fill),
                fit(k, diverged * fill * clamp(sm_busy(k) / 100, 0, 1)), fit(k, idle))
    return fires, model


def gpa(k, b):
    """GPA latency hiding, A x B and sequential, A the idle issue share."""
    a = 1 - k(ISSUE) / 100
    return fit(k, min(a, b)), fit(k, a * b), fit(k, b)


def barrier_stalls(k):
    fires = (k(ISSUE) > 0 and stall_share(k, "barrier") > 0.2
             and not (smem_per_inst(k) >= 0.05 and k(FMA) < 40 and threads_per_inst(k) < 31)
             and sm_busy(k) < 60 and mem(k) < 60)

    def counted():
        """The share of issued instructions the counted classes explain."""
        ops = ("fadd", "fmul", "ffma", "hadd", "hmul", "hfma", "dadd", "dmul", "dfma", "integer")
        threads = sum(k(SASS % op) for op in ops) \
            + k("smsp__sass_thread_inst_executed_op_conversion_pred_on.sum")
        return (threads / max(threads_per_inst(k), 1) / max(k(WARP_INST), 1)
                + k(LSU) / max(4 * k(ISSUE), 0.001)
                + k("sm__inst_executed_pipe_xu.sum") / max(k(WARP_INST), 1))

    def other_insts():
        """The share of issued instructions no counted class explains: the
        most the barrier instructions can be (1/2 without the counts)."""
        try:
            return clamp(1 - counted(), 0, 1)
        except Missing:
            return 0.5

    def barrier_insts():
        """The barriers' share of the issued instructions: the unexplained
        ones less the branches (0 without the opcode counts)."""
        try:
            c = counted()
        except Missing:
            return 0.0
        try:
            branches = k("smsp__sass_inst_executed_op_branch.sum") / max(k(WARP_INST), 1)
        except Missing:
            branches = 0.0
        return clamp(1 - c - branches, 0, 1)

    def model():
        _, low, seq = gpa(k, stall_share(k, "barrier"))
        # estimate: GPA's latency hiding over the instructions left once the
        # barriers go, no faster than those at the full issue rate
        a = 1 - k(ISSUE) / 100
        b = barrier_insts()
        left = max((1 - min(a, stall_share(k, "barrier"))) * (1 - b), k(ISSUE) / 100 * (1 - b))
        # high: the barriers and their instructions gone, the rest issued
        # at the full rate; at least the sequential form
        return (fit(k, 1 - left), low,
                max(seq, fit(k, 1 - k(ISSUE) / 100 * (1 - other_insts()))))
    return fires, model


def warp_shuffle_reduction(k):
    """Global memory only in the condition: the L1 data pipe's wavefronts
    count the tree's own shared traffic, which the shuffles remove."""
    glob_mem = max(k("dram__throughput.avg.pct_of_peak_sustained_elapsed"),
                   k("lts__t_sectors.avg.pct_of_peak_sustained_elapsed"),
                   k("lts__t_tag_requests.avg.pct_of_peak_sustained_elapsed"),
                   k("l1tex__t_sectors.avg.pct_of_peak_sustained_elapsed"))
    fires = (k(ISSUE) > 0 and stall_share(k, "barrier") > 0.15 and smem_per_inst(k) >= 0.05
             and threads_per_inst(k) < 31 and k(FMA) < 40 and glob_mem < 80)

    def model():
        """Instruction count: each tree level is 10 warp instructions, 3 of
        them shared loads and stores on the LSU pipe (one warp instruction
        per SM cycle against four issue slots); the shuffle form issues 12
        per warp instead of 10 per level."""
        issue = k(ISSUE) / 100
        lsu_insts = k(LSU) / 100 / 4 / max(issue, 1e-5)
        global_insts = (k("l1tex__t_requests_pipe_lsu_mem_global_op_ld.sum")
                        + k("l1tex__t_requests_pipe_lsu_mem_global_op_st.sum")) / max(k(WARP_INST), 1)
        tree = clamp((lsu_insts - global_insts) * 10 / 3, 0, 1)
        block = k.launch0["block"][0] * k.launch0["block"][1] * k.launch0["block"][2]
        levels = 5
        while levels < 10 and 2 ** levels < block:
            levels += 1
        saved = tree * (1 - 12 / (10 * levels))
        # the tree's barrier stalls, all but the one barrier kept
        hide = min(1 - issue, stall_share(k, "barrier")) * tree * (1 - 1 / levels)
        return (fit(k, 1 - (1 - issue * saved) * (1 - hide)), fit(k, issue * saved),
                fit(k, 1 - issue * (1 - saved)))
    return fires, model


def reduction_work_per_thread(k):
    """A block tree paid once per element: per warp, its issued
    instructions I and global load instructions L (each bringing
    sectors / 4 elements a lane); a load and an add per element stay, the
    rest is issued once per k elements a thread."""
    launch = k.launch0
    threads = launch["block"][0] * launch["block"][1] * launch["block"][2]
    grid = launch["grid"][0] * launch["grid"][1] * launch["grid"][2]
    per_block = math.ceil(threads / k.device["warp_size"])
    warps = max(grid * per_block, 1)
    occ = (launch.get("occupancy") or {}).get("theoretical_pct", 0)
    blocks_per_sm = math.floor(occ / 100 * k.max_warps_per_sm() / per_block + 1e-9)
    waves = grid / (blocks_per_sm * k.device["sm_count"]) if blocks_per_sm > 0 else 0.0
    ld_req = k("l1tex__t_requests_pipe_lsu_mem_global_op_ld.sum")
    per_warp = k(WARP_INST) / warps
    loads = ld_req / warps
    stores = k("l1tex__t_requests_pipe_lsu_mem_global_op_st.sum") / warps
    elems = max(1.0, k("l1tex__t_sectors_pipe_lsu_mem_global_op_ld.sum") / max(ld_req, 1) / 4)
    stay = loads * (1 + elems)
    rest = max(per_warp - stay, 0.0)

    def keep(n):
        return clamp((stay + rest / n) / max(per_warp, 1), 0, 1)
    smem_per_warp = (k("l1tex__data_pipe_lsu_wavefronts_mem_shared_op_ld.sum")
                     + k("l1tex__data_pipe_lsu_wavefronts_mem_shared_op_st.sum")) / warps
    fires = (k(ISSUE) > 0 and 0 < loads <= 2 and stores <= 0.5 and smem_per_warp >= 1
             and k("smsp__average_warps_issue_stalled_barrier_per_issue_active.ratio") > 0
             and waves >= 4 and keep(2) <= 0.8)

    def model():
        return (fit(k, 1 - keep(2)), fit(k, k(ISSUE) / 100 * (1 - keep(2))),
                fit(k, 1 - keep(max(waves, 1))))
    return fires, model


def dependent_instruction_stalls(k):
    fires = (k(ISSUE) > 0 and stall_share(k, "wait") > 0.3
             and k("smsp__warps_eligible.avg.per_cycle_active") < 1
             and sm_busy(k) < 60 and mem(k) < 60)

    def model():
        est, low, _ = gpa(k, stall_share(k, "wait"))
        return est, low, fit(k, 1 - k(ISSUE) / 100)
    return fires, model


def pipe_saturation(k):
    busy = max(k(FMA), k(ALU))
    fires = busy > 80

    def model():
        b = stall_share(k, "math_pipe_throttle")
        nxt = max(min(k(FMA), k(ALU)), mem(k), k(FP64), k(XU), k(LSU))
        # a rewrite of the arithmetic leaves these alone: the high end's floor
        untouched = max(mem(k), k(FP64), k(XU), k(LSU), k(TENSOR))
        top = max(k(ISSUE), busy, 1)
        # the overhead: integer instructions and FMUL/FADD pairs an FFMA does
        overhead = (k(SASS % "integer") + min(k(SASS % "fmul"), k(SASS % "fadd"))) / max(lanes(k), 1)
        left = max(k(ISSUE) * (1 - clamp(overhead / max(k(WARP_INST), 1), 0, 1)), nxt)
        return (fit(k, 1 - left / top), fit(k, min(b, 1 - k(ISSUE) / 100)),
                fit(k, max(b, 1 - untouched / top)))
    return fires, model


def tensor_cores_unused(k):
    def l1_busy():
        return k("l1tex__data_pipe_lsu_wavefronts.avg.pct_of_peak_sustained_elapsed")
    def flops():
        return sum(k(SASS % op) for op in ("fadd", "fmul", "hadd", "hmul")) \
            + 2 * (k(SASS % "ffma") + k(SASS % "hfma"))
    fires = (k.device_cc() >= 7.0 and k(TENSOR) < 1 and k(FMA) >= 10
             and k(FMA) >= k(XU) * 4 and k(FP64) < 5
             and (k("l1tex__t_sector_hit_rate.pct") >= 60 or smem_per_inst(k) >= 0.1)
             and max(k(FMA), l1_busy()) >= 50
             # a FLOP per 10 thread instructions: IMADs busy the FMA pipe too
             and flops() / max(k("smsp__thread_inst_executed.sum"), 1) >= 0.1)

    def model():
        """The WMMA example's fragment loads at the L1 roof: 1 KiB (two
        16x16 half fragments) per 16x16x16 product of 8192 FLOP, 16 bytes
        per L1 wavefront, one wavefront per SM cycle; no faster than the
        DRAM bytes at the peak bandwidth."""
        flops = sum(k(SASS % op) for op in ("fadd", "fmul", "hadd", "hmul")) \
            + 2 * (k(SASS % "ffma") + k(SASS % "hfma"))
        wavefronts = flops / 8192 * 1024 / 16
        per_s = k.device["sm_count"] * k("l1tex__cycles_elapsed.avg.per_second")
        frag_ns = wavefronts / per_s * 1e9
        dram_ns = k("dram__bytes.sum") / (k.device["mem_bandwidth_gbs"] * 1e9) * 1e9
        t = max(k.mean_duration(), 1)

        def saved(ns):
            return clamp(1 - max(ns, dram_ns) / t, 0, 1)
        # low: the L1 at the classifier's throughput line (60 %); high: 2x2
        # tiles per warp, each fragment loaded for two products
        return saved(frag_ns), saved(frag_ns / 0.6), saved(frag_ns / 2)
    return fires, model


Kernel.device_cc = lambda self: float(self.device["compute_capability"])

RULES = {
    "sfu-heavy-math": sfu_heavy_math,
    "fp32-accurate-math": fp32_accurate_math,
    "integer-division": integer_division,
    "fp64-in-fp32-code": fp64_in_fp32_code,
    "shared-tree-reduction": shared_tree_reduction,
    "thread-divergence": thread_divergence,
    "barrier-stalls": barrier_stalls,
    "warp-shuffle-reduction": warp_shuffle_reduction,
    "reduction-work-per-thread": reduction_work_per_thread,
    "dependent-instruction-stalls": dependent_instruction_stalls,
    "pipe-saturation": pipe_saturation,
    "tensor-cores-unused": tensor_cores_unused,
}


def editable_owners(cache={}):
    """The owners rules/owners.yaml marks editable (its plain YAML read
    line by line: each "- name:" entry, then its "editable:" line)."""
    if not cache:
        path = os.path.join(os.path.dirname(os.path.abspath(__file__)), "../../rules/owners.yaml")
        name, cache["owners"] = None, set()
        with open(path) as fh:
            for line in fh:
                text = line.split("#")[0].strip()
                if text.startswith("- name:"):
                    name = text.split(":", 1)[1].strip()
                elif text.startswith("editable:") and name:
                    if text.split(":", 1)[1].strip() == "true":
                        cache["owners"].add(name)
    return cache["owners"]


def close(a, b):
    return abs(a - b) <= 1e-9 * max(1.0, abs(a), abs(b))


def check_kernel(profile, report, ki, where, owners):
    """Problems with the findings of one kernel, as strings."""
    kernel = report["kernels"][ki]
    got = {f["rule"]: f for f in report["findings"] if f["kernel"] == ki}
    if not kernel["launches"]:
        # timed on the timeline only: no counter, so no kernel rule
        return ["%s: %s: %s fired on a kernel with no profiled launch"
                % (where, kernel["name"][:50], r) for r in got]
    k = Kernel(profile, kernel, report)
    problems = []
    if kernel.get("owner", "user") not in editable_owners():
        # These rules have no owners: key, so they apply only to kernels
        # whose source the user can change (docs/RULE-FORMAT.md, owners).
        return ["%s: %s: %s fired on a %s kernel" % (where, kernel["name"][:50], r,
                                                     kernel["owner"]) for r in RULES if r in got]
    for rule, fn in RULES.items():
        what = "%s: %s: %s" % (where, kernel["name"][:50], rule)
        if not owners.applies(rule, kernel["owner"]):
            # kernel-source advice on a library's kernel: never evaluated
            if rule in got:
                problems.append("%s: fired on a %s kernel" % (what, kernel["owner"]))
            continue
        try:
            fires, model = fn(k)
        except Missing as m:
            if rule in got:
                problems.append("%s fired, but its condition needs %s" % (what, m))
            elif rule not in kernel["unchecked_rules"]:
                problems.append("%s: needs %s, not listed as unchecked" % (what, m))
            continue
        if fires != (rule in got):
            problems.append("%s: %s, expected %s" % (what, "fired" if rule in got else
                                                     "silent", "fired" if fires else "silent"))
            continue
        if not fires:
            continue
        f = got[rule]
        try:
            est, low, high = model()
        except Missing as m:
            if f["estimate_missing"] is None or f["estimate"] is not None:
                problems.append("%s: gave %s, the model needs %s" % (what, f["estimate"], m))
            elif f["estimate_missing"] in k.values:
                problems.append("%s: names %s, which the profile has" % (what, f["estimate_missing"]))
            continue
        if f["estimate_missing"] is not None:
            problems.append("%s: says it needs %s" % (what, f["estimate_missing"]))
            continue
        # The engine clamps to 0..1 and widens the range to hold the estimate.
        low, high = min(low, high, est), max(low, high, est)
        for name, want in (("estimate", est), ("low", low), ("high", high)):
            if not close(f[name], want):
                problems.append("%s: %s %.12g, the model gives %.12g" % (what, name, f[name], want))
    return problems


# Inputs no recording has yet, to reach the rules that fire on none: a
# recorded profile with some values changed (file, variant, {metric: value}).
# They test the formulas, not the rules' judgement.
DERIVED = [
    # Barrier waits in a kernel with neither shared memory nor a busy unit.
    ("recorded/demo-occupancy.json", "regs_heavy",
     {"smsp__average_warps_issue_stalled_barrier_per_issue_active.ratio": 5.0}),
    # The sequential tree with more barrier waits: warp shuffles apply.
    ("recorded/demo-reduction.json", "sequential",
     {"smsp__average_warps_issue_stalled_barrier_per_issue_active.ratio": 4.0}),
    # The interleaved tree's XU instructions as transcendentals (no
    # conversions): sfu-heavy-math instead of integer-division.
    ("models/reduction-interleaved-counts.json", None,
     {"smsp__sass_thread_inst_executed_op_conversion_pred_on.sum": 0.0}),
    # The division kernel with fewer non-FP32 instructions on the FMA pipe
    # (120 million, 30 million divisions' worth of IMAD where the XU allows
    # 67 million): the FMA bound decides the count and integer-division
    # still fires.
    ("../../bench/accuracy/recorded/intdiv-divide.json", None,
     {"sm__inst_executed_pipe_fmaheavy.sum": 120e6}),
]


def derived(srcdir):
    for path, variant, values in DERIVED:
        with open(os.path.join(srcdir, "tests/fixtures", path)) as fh:
            doc = json.load(fh)
        if variant:
            doc = next(v["profile"] for v in doc["variants"] if v["name"] == variant)
        elif doc.get("format") == "gpuadvise-report":
            doc = doc["profile"]
        for launch in doc["launches"]:
            launch["values"].update(values)
        yield "%s%s, changed %s" % (path, "/" + variant if variant else "",
                                    ", ".join(values)), doc


def file_profiles(path, variant_label="%s[%s]"):
    """(label, profile) for each profile in one recording (.json or
    .json.xz): a demo's variants (labelled by variant_label from the file
    and variant names), a profile, or a report that embeds its profile (the
    accuracy bench's slow sides)."""
    with (lzma.open(path, "rt") if path.endswith(".xz") else open(path)) as fh:
        doc = json.load(fh)
    name = os.path.basename(path)
    if doc.get("format") == "gpuadvise-demo":
        for v in doc["variants"]:
            yield variant_label % (name, v["name"]), v["profile"]
    elif doc.get("format") == "gpuadvise-profile":
        yield name, doc
    elif isinstance(doc.get("profile"), dict):
        yield name, doc["profile"]


def profiles(srcdir, files=None):
    """(label, profile) for each recorded profile, demo variant and fixture,
    or for each of files."""
    given = bool(files)
    if not given:
        files = sorted(glob.glob(os.path.join(srcdir, "tests/fixtures/recorded/*.json")))
        files += sorted(glob.glob(os.path.join(srcdir, "tests/fixtures/models/*.json")))
        # The accuracy bench's recorded run: each slow side's report embeds
        # its profile (the pairs where sfu-heavy-math and pipe-saturation
        # fire on real routines and loops).
        files += sorted(glob.glob(os.path.join(srcdir, "bench/accuracy/recorded/*.json")))
    for path in files:
        yield from file_profiles(path, "%s/%s")
    if not given:
        yield from derived(srcdir)


def analyse(gpuadvise, srcdir, profile):
    with tempfile.NamedTemporaryFile("w", suffix=".json") as tmp:
        json.dump(profile, tmp)
        tmp.flush()
        out = subprocess.run([gpuadvise, "--no-default-rules", "--rules",
                              os.path.join(srcdir, "rules"), "--import", tmp.name,
                              "--format", "json"], capture_output=True, text=True)
    if out.returncode not in (0, 1):
        raise RuntimeError("gpuadvise exited %d: %s" % (out.returncode, out.stderr))
    return json.loads(out.stdout)


def check_all(gpuadvise, srcdir, files=None):
    """Every profile through gpuadvise: (problems, a summary line)."""
    problems, findings, missing, seen = [], 0, 0, set()
    owners = Owners(os.path.join(srcdir, "rules"))
    for label, profile in profiles(srcdir, files):
        report = analyse(gpuadvise, srcdir, profile)
        for ki in range(len(report["kernels"])):
            problems += check_kernel(profile, report, ki, label, owners)
        for f in report["findings"]:
            if f["rule"] not in RULES:
                continue
            findings += 1
            if f["estimate_missing"] is None:
                seen.add(f["rule"])
            else:
                missing += 1
    if not files:
        problems += ["%s: no finding with an estimate to check" % rule
                     for rule in sorted(set(RULES) - seen)]
    return problems, ("%d findings of %d compute rules checked (%d with an input missing)"
                      % (findings, len(RULES), missing))


def main(argv):
    if len(argv) < 3:
        sys.stderr.write(__doc__)
        return 2
    problems, summary = check_all(argv[1], argv[2], argv[3:])
    for p in problems:
        print("not ok:", p)
    print("%s, %d problems" % (summary, len(problems)))
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
