"""The program rules' models (rules of scope program: host-bound-launching,
pageable-copies, copies-serialized, sync-every-iteration, alloc-in-loop,
small-copies, exposed-communication, rank-imbalance), written from each
rule file's comment over a process's timeline as the profile records it
(docs/profile.schema.json, timelines; and for the ranks, its launches,
timelines and processes): the timeline__* and rank__* values are computed
here from the raw JSON, not taken from the report.  Each model returns
(fires, estimate, low, high, affects), the fractions of the process's wall
time before the engine clamps them."""
import fnmatch
import os
import re
import statistics

import yaml


class Missing(Exception):
    pass


def div0(a, b):
    return a / b if b > 0 else 0.0


class Timeline:
    """timeline__* of one process, as program.c defines them; profile: the
    whole profile it is in (the ranks' models compare its processes)."""

    def __init__(self, t, profile=None):
        self.t = t
        self.profile = profile or {}
        self.wall = t.get("wall_ns", 0) - t.get("excluded_ns", 0)
        self.ndev = max(len(t.get("devices", [])), 1)
        d = {"busy_ns": 0.0, "kernel_ns": 0.0, "copy_ns": 0.0, "copy_exposed_ns": 0.0,
             "idle_after_sync_ns": 0.0, "kernels": 0, "kernel_sum_ns": 0.0,
             "default_stream_ops": 0, "streams": 0}
        idle = {"blocking": 0.0, "launching": 0.0, "other": 0.0}
        dir_ns = {}
        self.copies = []
        sets = 0
        for dev in t.get("devices", []):
            for k in d:
                d[k] += dev.get(k, 0) or 0
            for k in idle:
                idle[k] += (dev.get("idle_ns") or {}).get(k, 0) or 0
            for k, v in (dev.get("direction_ns") or {}).items():
                dir_ns[k] = dir_ns.get(k, 0) + (v or 0)
            self.copies += dev.get("copies", [])
            sets += (dev.get("sets") or {}).get("count", 0)
        self.d, self.idle, self.dir_ns, self.sets = d, idle, dir_ns, sets
        self.host_ns = t.get("host_ns", {})
        self.calls = t.get("host_calls", {})

    def share(self, ns):
        return div0(ns, self.wall * self.ndev)

    def copy_sum(self, direction=None, memory=None, what="count"):
        return sum(c.get(what, 0) for c in self.copies
                   if (direction is None or c["direction"] == direction) and
                   (memory is None or c["memory"] == memory))

    def host_copy(self, memory=None, what="count"):
        return (self.copy_sum("htod", memory, what) + self.copy_sum("dtoh", memory, what))

    def v(self, name):
        t, d = self.t, self.d
        iters = t.get("iterations", 0)
        ops = d["kernels"] + self.host_copy() + self.copy_sum("dtod") + self.sets
        vals = {
            "wall_ns": self.wall,
            "busy_share": self.share(d["busy_ns"]),
            "kernel_share": self.share(d["kernel_ns"]),
            "copy_exposed_share": self.share(d["copy_exposed_ns"]),
            "idle_launching_share": self.share(self.idle["launching"]),
            "idle_host_share": self.share(self.idle["launching"] + self.idle["other"]),
            "idle_after_sync_share": div0(d["idle_after_sync_ns"], self.wall),
            "kernel_ns": d["kernel_ns"],
            "copy_exposed_ns": d["copy_exposed_ns"],
            "htod_bytes": self.copy_sum("htod", what="bytes"),
            "dtoh_bytes": self.copy_sum("dtoh", what="bytes"),
            "pageable_bytes": self.host_copy("pageable", "bytes"),
            "pageable_ns": self.host_copy("pageable", "ns"),
            "small_copy_count": self.host_copy(what="small"),
            "launch_count": self.calls.get("launch", 0),
            "launch_ns": self.host_ns.get("launch", 0),
            "sync_ns": self.host_ns.get("sync", 0),
            "copy_call_ns": self.host_ns.get("copy", 0),
            "alloc_ns": self.host_ns.get("alloc", 0),
            "iterations": iters,
            "default_stream_share": div0(d["default_stream_ops"], ops),
            "streams": d["streams"],
        }
        if name == "copy_gbs":
            ns = self.host_copy(what="ns")
            if ns <= 0:
                raise Missing("timeline__copy_gbs")
            return self.host_copy(what="bytes") / ns
        # Per iteration: the host calls inside the representative iteration
        # (events [start, end, device, stream, kind, dir, kernel]; host
        # events have device -1, kind 1 a synchronisation, 3 an allocation).
        per = {"syncs_per_iteration": (1, False), "allocs_per_iteration": (3, False),
               "loop_sync_ns": (1, True), "loop_alloc_ns": (3, True)}
        if name in per:
            if iters <= 0 or not t.get("window_is_iteration"):
                raise Missing("timeline__" + name)
            kind, ns = per[name]
            ev = [e for e in t.get("events", []) if e[2] == -1 and e[4] == kind]
            return sum(e[1] - e[0] for e in ev) * iters if ns else len(ev)
        return vals[name]


def window_idle(t):
    """The representative iteration's idle time by what the host was doing
    (a blocking call wins over a launch), summed over the devices with GPU
    work in it, and their count: a sweep of its events, written apart from
    timeline.c's."""
    ev = t.t.get("events", [])
    span = t.t.get("window_ns", 0)
    devs = sorted({e[2] for e in ev if e[2] >= 0})
    cuts = sorted({0.0, span} | {min(max(x, 0.0), span) for e in ev for x in e[:2]})
    idle = {"blocking": 0.0, "launching": 0.0, "other": 0.0}
    for a, b in zip(cuts, cuts[1:]):
        if b <= a:
            continue
        on = [e for e in ev if e[0] <= a and e[1] >= b]
        host = {e[4] for e in on if e[2] == -1}
        if 4 in host:                     # the profiler's own span
            continue
        cause = ("blocking" if host & {1, 2, 3} else "launching" if 0 in host else "other")
        for d in devs:
            if not any(e[2] == d for e in on):
                idle[cause] += b - a
    return idle, len(devs)


def host_bound(t):
    tl = t.t
    iters = tl.get("iterations", 0)
    if (tl.get("window_is_iteration") and iters > 0 and tl.get("iteration_ns") is not None
            and tl.get("window_ns", 0) > 0):
        idle, n = window_idle(t)
    else:
        n = 0
    if n:
        loop = min(1.0, div0(iters * tl["iteration_ns"], t.v("wall_ns")))
        w = tl["window_ns"] * n
        host, launching = (idle["launching"] + idle["other"]) / w, idle["launching"] / w
    else:
        loop, host, launching = 1.0, t.v("idle_host_share"), t.v("idle_launching_share")
    fires = host >= 0.2 and t.v("launch_count") >= 100 and loop * host >= 0.02
    return fires, loop * host, loop * launching, loop * host, loop


def _pipeline(t, after, after_lo, after_hi):
    before = t.v("copy_exposed_ns") + t.v("kernel_ns")
    w = t.v("wall_ns")
    return (max(before - after, 0) / w, max(before - after_lo, 0) / w,
            max(before - after_hi, 0) / w, before / w)


def pageable(t):
    fires = t.v("pageable_bytes") > 0 and t.v("pageable_ns") >= 0.05 * t.v("wall_ns")
    h, d, k = t.v("htod_bytes"), t.v("dtoh_bytes"), t.v("kernel_ns")
    e, lo, hi, aff = _pipeline(t, max(h / 50, d / 50, k), max(h / 25, d / 25, k),
                               max(h / 64, d / 64, k))
    return fires, e, lo, hi, aff


def serialized(t):
    fires = (t.v("copy_exposed_share") >= 0.05 and
             t.v("pageable_ns") < 0.05 * t.v("wall_ns"))
    if not fires:
        return False, 0, 0, 0, 1
    b = t.v("copy_gbs")
    h, d, k = t.v("htod_bytes") / b, t.v("dtoh_bytes") / b, t.v("kernel_ns")
    after = max(h, d, k)
    e, lo, hi, aff = _pipeline(t, after, max(max(h, d) + min(h, d) / 2, k), after)
    return fires, e, lo, hi, aff


def sync_loop(t):
    try:
        fires = (t.v("iterations") >= 2 and t.v("syncs_per_iteration") >= 1 and
                 t.v("idle_after_sync_share") >= 0.03)
    except Missing:
        return False, 0, 0, 0, 1
    e = t.v("idle_after_sync_share")
    return fires, e, e / 2, e, 1.0


def alloc_loop(t):
    try:
        fires = (t.v("iterations") >= 2 and t.v("allocs_per_iteration") >= 1 and
                 t.v("loop_alloc_ns") >= 0.02 * t.v("wall_ns"))
    except Missing:
        return False, 0, 0, 0, 1
    e = t.v("loop_alloc_ns") / t.v("wall_ns")
    return fires, e, e / 2, e, 1.0


def small_copies(t):
    n, call, w = t.v("small_copy_count"), t.v("copy_call_ns"), t.v("wall_ns")
    fires = n >= 100
    return (fires, min(n * 10000, call) / w, min(n * 5000, call) / w,
            min(n * 20000, call) / w, 1.0)


# ---- communication and ranks -------------------------------------------------

OWNERS = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "rules",
                      "owners.yaml")
_owners = None


def is_comm(name, mangled):
    """Whether rules/owners.yaml gives the kernel the kind comm: the first
    owner with a name pattern that matches decides, and the pattern's kind
    (a glob matches the whole demangled name, "void " dropped, or the
    mangled one; a regex anywhere in either)."""
    global _owners
    if _owners is None:
        with open(OWNERS) as fh:
            _owners = yaml.safe_load(fh)["owners"]
    name = name or mangled
    bare = name[5:] if name.startswith("void ") else name
    for o in _owners:
        for k in o.get("kernels") or []:
            if "glob" in k:
                hit = (fnmatch.fnmatchcase(bare, k["glob"]) or
                       fnmatch.fnmatchcase(mangled, k["glob"]))
            else:
                hit = bool(re.search(k["regex"], name) or re.search(k["regex"], mangled))
            if hit:
                return k.get("kind") == "comm"
    return False


def comm_window(t):
    """The representative window's communication against compute, per GPU
    (comm.c): exposed, free and the longest exposed stretch, summed over
    the GPUs, and the window's communication time (the sum of durations)."""
    tl = t.t
    ks = tl.get("kernels", [])
    comm = [is_comm(k.get("name"), k["mangled"]) for k in ks]
    ev = [e for e in tl.get("events", []) if e[2] >= 0 and e[4] == 0]
    exposed = free = tail = window_comm = 0.0
    for dev in sorted({e[2] for e in ev}):
        iv = [(e[0], e[1], e[6] >= 0 and comm[e[6]]) for e in ev if e[2] == dev]
        cuts = sorted({x for a, b, _ in iv for x in (a, b)})
        run = best = 0.0
        for a, b in zip(cuts, cuts[1:]):
            on = [c for s, e, c in iv if s <= a and e >= b]
            c, k = any(on), not all(on)
            if c and not k:
                exposed += b - a
                run += b - a
                best = max(best, run)
            else:
                run = 0.0
                if k and not c:
                    free += b - a
        tail += best
        window_comm += sum(e - s for s, e, c in iv if c)
    return exposed, free, tail, window_comm


def comm_run(t):
    """(exposed, free, tail) of the run, ns: the window's, scaled."""
    tl = t.t
    if not tl.get("events") or not tl.get("window_ns"):
        raise Missing("timeline__comm_exposed_share")
    ks = tl.get("kernels", [])
    comm_ns = sum(k.get("total_ns") or 0 for k in ks if is_comm(k.get("name"), k["mangled"]))
    exposed, free, tail, window_comm = comm_window(t)
    iters = tl.get("iterations", 0)
    if tl.get("window_is_iteration") and iters > 0:
        scale = iters
    else:
        scale = comm_ns / window_comm if window_comm > 0 else 0.0
    return exposed * scale, free * scale, tail * scale


def loop_share(t):
    tl = t.t
    iters = tl.get("iterations", 0)
    if (tl.get("window_is_iteration") and iters > 0 and tl.get("iteration_ns") is not None
            and tl.get("window_ns", 0) > 0 and window_idle(t)[1]):
        return min(1.0, div0(iters * tl["iteration_ns"], t.v("wall_ns")))
    return 1.0


def exposed_comm(t):
    exposed, free, tail = comm_run(t)
    w = t.v("wall_ns") * t.ndev
    hide = div0(min(exposed, free), w)
    fires = div0(exposed, w) >= 0.05 and hide >= 0.02
    return fires, hide, max(0.0, hide - div0(tail, w)), hide, loop_share(t)


def rank_times(profile):
    """GPU time and communication time per pid of the processes with a
    rank: the profiled launches' durations, the timeline's kernels and the
    unprofiled launches at their kernel's mean (exact where the timeline and
    the unprofiled entries do not describe the same launches)."""
    ranks = {p["pid"]: [0.0, 0.0] for p in profile.get("processes", [])
             if isinstance(p.get("rank"), int) and p["rank"] >= 0}
    mean = {}
    for l in profile.get("launches", []):
        d = l.get("duration_ns")
        if l["pid"] not in ranks or not isinstance(d, (int, float)):
            continue
        c = is_comm(l.get("name"), l["mangled"])
        ranks[l["pid"]][0] += d
        ranks[l["pid"]][1] += d if c else 0
        key = (l["pid"], l["mangled"], tuple(l["grid"]), tuple(l["block"]))
        mean.setdefault(key, []).append(d)
    for u in profile.get("unprofiled", []):
        key = (u.get("pid"), u["mangled"], tuple(u["grid"]), tuple(u["block"]))
        if u.get("pid") in ranks and key in mean:
            d = u["launches"] * statistics.mean(mean[key])
            ranks[u["pid"]][0] += d
            ranks[u["pid"]][1] += d if is_comm(None, u["mangled"]) else 0
    for tl in profile.get("timelines", []):
        for k in tl.get("kernels", []) if tl["pid"] in ranks else []:
            d = k.get("total_ns") or 0
            ranks[tl["pid"]][0] += d
            ranks[tl["pid"]][1] += d if is_comm(k.get("name"), k["mangled"]) else 0
    return ranks


def rank_imbalance(t):
    ranks = rank_times(t.profile)
    pid = t.t["pid"]
    if len(ranks) < 2 or pid not in ranks:
        raise Missing("rank__ranks")
    compute = {p: g - c for p, (g, c) in ranks.items()}
    c, comm = compute[pid], ranks[pid][1]
    m = statistics.median(compute.values())
    mc = statistics.median(v[1] for v in ranks.values())
    o = max(v for p, v in compute.items() if p != pid)
    w = t.v("wall_ns") * t.ndev
    fires = c > 1.1 * m and c - m >= 0.02 * w
    return fires, (c - max(m, o)) / w, max(0.0, mc - comm) / w, (c - m) / w, 1.0


MODELS = {
    "host-bound-launching": host_bound,
    "pageable-copies": pageable,
    "copies-serialized": serialized,
    "sync-every-iteration": sync_loop,
    "alloc-in-loop": alloc_loop,
    "small-copies": small_copies,
    "exposed-communication": exposed_comm,
    "rank-imbalance": rank_imbalance,
}
