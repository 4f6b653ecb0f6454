#!/usr/bin/env python3
"""Sum a kernel's GPU time over its launches in Nsight Compute CSV output.

usage: ncu_sum.py [--by-grid] FILE.csv [KERNEL]

FILE is what `ncu --csv --print-units base --metrics gpu__time_duration.sum
--log-file FILE` writes: one row per launch and metric, with the columns
"ID", "Kernel Name", "Metric Name", "Metric Unit", "Metric Value" among
others. Prints "LAUNCHES TOTAL_US" for the rows of gpu__time_duration.sum
(of KERNEL only when given: the bare function name, as `-k` selects it);
with --by-grid, "GRID LAUNCHES TOTAL_US" for each grid ("(8192,1,1)", from
the "Grid Size" column), largest total first.
Exit status 1 when no launch was found or a value cannot be read.
"""
import csv
import io
import sys

METRIC = "gpu__time_duration.sum"
# Units to microseconds (--print-units base gives nsecond; the others in case
# ncu scales them anyway).
UNITS = {"nsecond": 1e-3, "ns": 1e-3, "usecond": 1.0, "us": 1.0, "msecond": 1e3, "ms": 1e3,
         "second": 1e6, "s": 1e6}


def bare_name(name):
    """The function name without parameters, template arguments or namespaces."""
    base = name.split("(")[0].strip()
    if "<" in base:
        base = base.split("<")[0]
    return base.split("::")[-1].split()[-1] if base else base


def number(text):
    return float(text.replace(",", "").strip())


def launches(text, kernel=None, with_grid=False):
    """[(launch id, microseconds)] of the metric's rows, in file order
    (with_grid: (launch id, microseconds, grid))."""
    # ncu writes "==PROF==" lines and the application's own lines are not in
    # the log file, but skip anything before the CSV header all the same.
    lines = text.splitlines()
    for i, line in enumerate(lines):
        if line.startswith('"ID"'):
            break
    else:
        return []
    rows = csv.DictReader(io.StringIO("\n".join(lines[i:])))
    out = []
    for row in rows:
        if row.get("Metric Name") != METRIC:
            continue
        if kernel and bare_name(row.get("Kernel Name", "")) != kernel:
            continue
        unit = UNITS.get((row.get("Metric Unit") or "nsecond").strip())
        if unit is None:
            raise ValueError("unknown unit %r" % row.get("Metric Unit"))
        out.append((row.get("ID"), number(row["Metric Value"]) * unit,
                    (row.get("Grid Size") or "?").replace(" ", "")))
    return [(i, us) for i, us, _ in out] if not with_grid else out


def by_grid(text, kernel=None):
    """[(grid, launches, microseconds)] by grid, largest total first."""
    sums = {}
    for _, us, grid in launches(text, kernel, with_grid=True):
        n, t = sums.get(grid, (0, 0.0))
        sums[grid] = (n + 1, t + us)
    return sorted(((g, n, t) for g, (n, t) in sums.items()), key=lambda x: -x[2])


def main(argv):
    grids = argv[:1] == ["--by-grid"]
    argv = argv[1:] if grids else argv
    if len(argv) not in (1, 2):
        print(__doc__.split("\n")[2], file=sys.stderr)
        return 2
    kernel = argv[1] if len(argv) == 2 else None
    try:
        with open(argv[0]) as f:
            text = f.read()
        got = by_grid(text, kernel) if grids else launches(text, kernel)
    except (OSError, ValueError, KeyError) as e:
        print("ncu_sum.py: %s: %s" % (argv[0], e), file=sys.stderr)
        return 1
    if not got:
        print("ncu_sum.py: %s: no %s rows" % (argv[0], METRIC), file=sys.stderr)
        return 1
    if grids:
        for grid, n, us in got:
            print("%s %d %.3f" % (grid, n, us))
    else:
        print("%d %.3f" % (len(got), sum(us for _, us in got)))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
