#!/usr/bin/env python3
"""structure.py: the layout rules of src/ (docs/ARCHITECTURE.md), checked.

  - no file in src/ is over 1,000 lines, no function over 120;
  - a module includes only modules of its own layer or lower ones;
  - no "GPUADVISE_ string literal in src/collect/*.c: the launcher and the
    injection library share their variables through src/collect/protocol.h;
  - no private references (numbered source documents, docs that are not in
    the repository) in src, rules, man, docs or README.md.

Usage: structure.py [SRCDIR]   (default: the checkout holding this file)
Prints one line per problem and exits 1 when there is any."""
import os
import re
import sys

MAX_FILE_LINES = 1000
MAX_FUNC_LINES = 120

# Layers, lowest first: a file may include files of its own layer or below.
# The collector sits beside the analysis: both read profiles, neither
# includes the other.
LAYERS = [
    ("base", ["util/"]),
    ("profile", ["profile/"]),
    ("rules", ["rules/"]),
    ("collect", ["collect/"]),
    ("analyze", ["analyze/"]),
    ("report", ["report/"]),
    ("command", ["main", "command/", "ga_build"]),
]
# Pairs of layers that must not see each other although one is below the
# other in the list above.
APART = {("analyze", "collect")}


def layer_of(rel):
    """rel: a path under src/ without extension."""
    for i, (name, prefixes) in enumerate(LAYERS):
        for p in prefixes:
            if p.endswith("/") and rel.startswith(p):
                return i
            if rel == p:
                return i
    return None


def functions(lines):
    """(name, first line, length) of each function body: a '{' and its '}'
    both at the start of a line, the signature above the '{'."""
    out = []
    start = None
    for i, line in enumerate(lines):
        if line.startswith("{") and start is None:
            start = i
        elif line.startswith("}") and start is not None:
            sig = ""
            for j in range(start - 1, max(start - 6, -1), -1):
                m = re.search(r"(\w+)\s*\(", lines[j])
                if m:
                    sig = m.group(1)
                    break
            # struct/enum/array initialisers also open at column 0
            if sig and not re.match(r"^\s*(static\s+)?(const\s+)?(struct|enum|union)\b.*=",
                                    lines[start - 1] if start else ""):
                out.append((sig, start + 1, i - start + 1))
            start = None
    return out


def main():
    root = sys.argv[1] if len(sys.argv) > 1 else os.path.join(os.path.dirname(__file__), "..", "..")
    root = os.path.abspath(root)
    src = os.path.join(root, "src")
    problems = []
    for dirpath, _, files in os.walk(src):
        for f in sorted(files):
            if not f.endswith((".c", ".h")):
                continue
            path = os.path.join(dirpath, f)
            rel = os.path.relpath(path, src)
            with open(path, encoding="utf-8") as fh:
                lines = fh.read().split("\n")
            n = len(lines) - (1 if lines and lines[-1] == "" else 0)
            if n > MAX_FILE_LINES:
                problems.append(f"src/{rel}: {n} lines (at most {MAX_FILE_LINES})")
            for name, first, length in functions(lines):
                if length > MAX_FUNC_LINES:
                    problems.append(f"src/{rel}:{first}: {name}() is {length} lines "
                                    f"(at most {MAX_FUNC_LINES})")
            me = layer_of(os.path.splitext(rel)[0])
            if me is None:
                problems.append(f"src/{rel}: in no layer of tests/lint/structure.py")
                continue
            for k, line in enumerate(lines, 1):
                m = re.match(r'\s*#\s*include\s+"([^"]+)"', line)
                if not m:
                    continue
                target = os.path.normpath(os.path.join(os.path.dirname(rel), m.group(1)))
                if target == "ga_build.h":
                    continue
                other = layer_of(os.path.splitext(target)[0])
                if other is None:
                    continue
                pair = (LAYERS[me][0], LAYERS[other][0])
                if other > me or pair in APART or pair[::-1] in APART:
                    problems.append(f"src/{rel}:{k}: includes {target} "
                                    f"({LAYERS[me][0]} may not include {LAYERS[other][0]})")
            if rel.startswith("collect/") and f.endswith(".c"):
                for k, line in enumerate(lines, 1):
                    if '"GPUADVISE_' in line:
                        problems.append(f"src/{rel}:{k}: a GPUADVISE_ variable named outside "
                                        "collect/protocol.h")
    private = re.compile(r"seed ?[0-9]|docs/(ANCHORS|CUPTI)", re.I)
    for top in ["src", "rules", "man", "docs", "README.md"]:
        base = os.path.join(root, top)
        paths = [base] if os.path.isfile(base) else [
            os.path.join(d, f) for d, _, fs in os.walk(base) for f in sorted(fs)]
        for path in paths:
            try:
                with open(path, encoding="utf-8") as fh:
                    for k, line in enumerate(fh, 1):
                        if private.search(line):
                            problems.append(f"{os.path.relpath(path, root)}:{k}: a private "
                                            "reference: cite a public source by name")
            except (UnicodeDecodeError, IsADirectoryError):
                pass
    for p in problems:
        print(p)
    print(f"{len(problems)} structure problems")
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
