#!/usr/bin/env python3
"""structure.py: the layout rules of src/ (docs/ARCHITECTURE.md), checked.

  - every source file is in a stage's folder (util, profile, rules, collect,
    analyze, report, command); src/ itself holds main.c alone;
  - no file in src/ is over 1,000 lines, no function over 120;
  - a module includes only modules of its own layer or lower ones;
  - no circles between files: no header includes itself through others, and
    the calls run one way: file A uses file B when A names a function or
    variable that B.c defines for others, and no .c file uses itself through
    others, so that each file can be read knowing only those below it;
  - no "GPUADVISE_ string literal in src/collect/*.c: the launcher and the
    injection library share their variables through src/collect/protocol.h;
  - no private references (numbered source documents, docs that are not in
    the repository) in src, rules, man, docs or README.md, and nothing in the
    tree that tells of the work that made it (which session wrote what, in
    what order): the checks are the ordinal-and-session phrases of DIARY.

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
# The one file allowed directly in src/.
TOP_FILES = {"main.c"}

ORDINALS = ("first|second|third|fourth|fifth|sixth|seventh|eighth|ninth|tenth|eleventh|"
            "twelfth|thirteenth|fourteenth|fifteenth|sixteenth|seventeenth|eighteenth|"
            "nineteenth|twentieth|\\d+(st|nd|rd|th)")
DIARY = re.compile(r"\b(" + ORDINALS + r"|this|last|next|previous|earlier|later|same|"
                   r"a later|an earlier) (work )?session\b", re.I)


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


# ---- the graphs of files -----------------------------------------------------

def strip_code(text):
    """C text without comments, string and character literals."""
    text = re.sub(r"/\*.*?\*/", lambda m: "\n" * m.group(0).count("\n"), text, flags=re.S)
    text = re.sub(r"//[^\n]*", "", text)
    text = re.sub(r'"(\\.|[^"\\\n])*"', '""', text)
    text = re.sub(r"'(\\.|[^'\\\n])*'", "''", text)
    return text


def definitions(code):
    """(exported, local): the names a .c file defines for others (functions
    and variables at file scope, not static) and those it keeps (static)."""
    exported, local = set(), set()
    depth = 0
    stmt = ""
    for line in code.split("\n"):
        if depth == 0:
            stmt += " " + line
            # a definition: a function's signature before its '{', or a
            # variable before '=' / ';' / '['
            head = stmt.split("{", 1)[0] if "{" in stmt else stmt
            if ("{" in line or ";" in line) and not head.lstrip().startswith(
                    ("#", "typedef", "extern", "struct", "enum", "union")):
                m = re.search(r"\b([A-Za-z_]\w*)\s*\(", head)
                if m and "=" not in head.split("(", 1)[0]:
                    name = m.group(1)
                else:
                    m = re.search(r"\b([A-Za-z_]\w*)\s*(\[[^\]]*\])*\s*(=|;)", head)
                    name = m.group(1) if m else None
                if name and not re.match(r"\s*(return|if|while|for|sizeof)\b", head):
                    (local if re.match(r"\s*(static|inline|static\s+inline)\b", head)
                     else exported).add(name)
            if "{" in line or ";" in line or line.startswith("#"):
                stmt = ""
        depth += line.count("{") - line.count("}")
        if depth < 0:
            depth = 0
    return exported, local


def file_graphs(src, files):
    """files: paths under src/.  Returns (includes, uses): {file: {file:
    [why, ...]}}, the first over every file, the second over the .c files."""
    texts = {}
    for rel in files:
        with open(os.path.join(src, rel), encoding="utf-8") as fh:
            texts[rel] = fh.read()
    owner = {}           # exported name -> the .c file that defines it
    local = {}           # .c file -> names it defines itself
    codes = {}
    for rel, text in texts.items():
        if rel.endswith(".c"):
            codes[rel] = strip_code(text)
            exp, loc = definitions(codes[rel])
            local[rel] = exp | loc
            for name in exp:
                owner.setdefault(name, rel)
    includes, uses = {}, {}
    for rel, text in texts.items():
        out = includes.setdefault(rel, {})
        for m in re.finditer(r'^\s*#\s*include\s+"([^"]+)"', text, re.M):
            target = os.path.normpath(os.path.join(os.path.dirname(rel), m.group(1)))
            if target in texts:
                out.setdefault(target, []).append("includes it")
    for rel, code in codes.items():
        out = uses.setdefault(rel, {})
        seen = set()
        for m in re.finditer(r"(?<![\w.>])([A-Za-z_]\w*)\b", code):
            name = m.group(1)
            if name in seen or name in local[rel] or name not in owner:
                continue
            seen.add(name)
            if owner[name] != rel:
                out.setdefault(owner[name], []).append(name)
    return includes, uses


def cycles(edges):
    """The strongly connected components of more than one file (Tarjan)."""
    index, low, stack, on, out = {}, {}, [], set(), []
    counter = [0]
    sys.setrecursionlimit(10000)

    def visit(v):
        index[v] = low[v] = counter[0]
        counter[0] += 1
        stack.append(v)
        on.add(v)
        for w in sorted(edges.get(v, {})):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            comp = []
            while True:
                w = stack.pop()
                on.discard(w)
                comp.append(w)
                if w == v:
                    break
            if len(comp) > 1:
                out.append(sorted(comp))

    for v in sorted(edges):
        if v not in index:
            visit(v)
    return out


def describe_cycle(comp, edges):
    inside = set(comp)
    parts = []
    for a in comp:
        for b in sorted(edges.get(a, {})):
            if b in inside:
                why = edges[a][b]
                more = ", ..." if len(why) > 3 else ""
                parts.append(f"{a} -> {b} ({', '.join(why[:3])}{more})")
    return "; ".join(parts)


# ---- the checks --------------------------------------------------------------

def main():
    root = sys.argv[1] if len(sys.argv) > 1 else os.path.join(os.path.dirname(__file__), "..", "..")
    root = os.path.abspath(root)
    src = os.path.join(root, "src")
    problems = []
    sources = []
    for dirpath, _, files in os.walk(src):
        for f in sorted(files):
            if not f.endswith((".c", ".h")):
                continue
            path = os.path.join(dirpath, f)
            rel = os.path.relpath(path, src)
            sources.append(rel)
            if "/" not in rel and rel not in TOP_FILES:
                problems.append(f"src/{rel}: outside a stage's folder (src/ holds "
                                f"{', '.join(sorted(TOP_FILES))} alone)")
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
    includes, uses = file_graphs(src, sorted(sources))
    for comp in cycles(includes):
        problems.append(f"src: an include cycle between {', '.join(comp)}: "
                        f"{describe_cycle(comp, includes)}")
    for comp in cycles(uses):
        problems.append(f"src: a circle of calls between {', '.join(comp)}: "
                        f"{describe_cycle(comp, uses)}")
    private = re.compile(r"seed ?[0-9]|docs/(ANCHORS|CUPTI)", re.I)
    for top in ["src", "rules", "man", "docs", "README.md", "bench", "tests", "kernels"]:
        base = os.path.join(root, top)
        if not os.path.exists(base):
            continue
        paths = [base] if os.path.isfile(base) else [
            os.path.join(d, f) for d, _, fs in os.walk(base) for f in sorted(fs)]
        for path in paths:
            rel = os.path.relpath(path, root)
            # recordings and fuzzing corpora are data, not prose
            if rel.startswith(("tests/fuzz/corpus", "tests/fixtures", "bench/accuracy/recorded")):
                continue
            try:
                with open(path, encoding="utf-8") as fh:
                    for k, line in enumerate(fh, 1):
                        if top in ("src", "rules", "man", "docs", "README.md") and \
                                private.search(line):
                            problems.append(f"{rel}:{k}: a private reference: cite a public "
                                            "source by name")
                        if DIARY.search(line) and path != os.path.abspath(__file__):
                            problems.append(f"{rel}:{k}: tells of a work session: say what "
                                            "is true of the project now")
            except (UnicodeDecodeError, IsADirectoryError):
                pass
    for p in problems:
        print(p)
    print(f"{len(problems)} structure problems")
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
