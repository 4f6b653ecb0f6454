#!/usr/bin/env python3
"""Fold the stacks cpusample.so wrote (one process's file).

  bench/probe/cpusample.py FILE [--from T0] [--to T1] [--lib DIR] [--top N]

Prints milliseconds of CPU: each sample weighs the process's CPU time
(the file's "# cpu_s" line) over the number of samples:
  - by thread and by leaf library;
  - by entry: the outermost frame inside CUDA's own libraries (libcupti,
    libcuda, libnvperf*, libnvidia-*), i.e. which API call the time was
    spent under, with the frame that called it;
  - by call: the innermost call from outside those libraries into them
    (the injection library's CUPTI calls, inside a launch's callback);
  - the top leaf symbols;
  - a timeline, 50 ms of wall time a row, of samples by leaf library.
--lib DIR resolves LIBRARY+0xOFFSET frames of libraries found in DIR
(the build folder the device ran) with addr2line, so the injection
library's static functions get names.  T0/T1 are seconds since the epoch
(the timing log's marks) or offsets from the first sample when small.
"""
import argparse
import collections
import os
import re
import subprocess

CUDA_LIBS = re.compile(r'^(libcupti|libcuda|libnvperf|libnvidia-|libnvrtc|libnvJitLink|libcudart)')


def parse(path):
    out = []
    cpu = None
    for line in open(path):
        if line.startswith('# cpu_s '):
            cpu = float(line.split()[2])
        if line.startswith('#'):
            continue
        parts = line.rstrip('\n').split(' ', 2)
        if len(parts) < 3:
            parts.append('')
        out.append((float(parts[0]), int(parts[1]), parts[2].split(';') if parts[2] else []))
    return out, cpu


def resolver(libdir):
    cache = {}
    pending = collections.defaultdict(set)

    def want(frame):
        m = re.match(r'^(.*)\+0x([0-9a-f]+)$', frame)
        if m and libdir and os.path.exists(os.path.join(libdir, m.group(1))):
            pending[m.group(1)].add(m.group(2))

    def run():
        for lib, offs in pending.items():
            offs = sorted(offs)
            # A return address: the call is the byte before it.
            r = subprocess.run(['addr2line', '-f', '-C', '-e', os.path.join(libdir, lib)] +
                               ['0x%x' % (int(o, 16) - 1) for o in offs], capture_output=True, text=True)
            lines = r.stdout.splitlines()
            for i, o in enumerate(offs):
                name = lines[2 * i] if 2 * i < len(lines) else '??'
                where = os.path.basename(lines[2 * i + 1]) if 2 * i + 1 < len(lines) else '?'
                cache['%s+0x%s' % (lib, o)] = ('%s:%s (%s)' % (lib, name, where) if name != '??'
                                               else '%s+0x%s' % (lib, o))

    def name(frame):
        return cache.get(frame, frame)
    return want, run, name


def lib_of(frame):
    return re.split(r'[:+]', frame, 1)[0]


def entry(stack):
    """Outermost frame in CUDA's libraries, and its caller."""
    for i in range(len(stack) - 1, -1, -1):
        if CUDA_LIBS.match(lib_of(stack[i])):
            caller = stack[i + 1] if i + 1 < len(stack) else '-'
            return '%s  <-  %s' % (stack[i], caller)
    return '(not in CUDA) ' + (stack[-1] if stack else '-')


def call(stack):
    """Innermost call from outside CUDA's libraries into them: the API
    function (or the library offset) and its caller."""
    for i in range(len(stack) - 1):
        if CUDA_LIBS.match(lib_of(stack[i])) and not CUDA_LIBS.match(lib_of(stack[i + 1])):
            return '%s  <-  %s' % (stack[i], stack[i + 1])
    return '(no call into CUDA)'


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument('file')
    ap.add_argument('--from', dest='t0', type=float)
    ap.add_argument('--to', dest='t1', type=float)
    ap.add_argument('--lib')
    ap.add_argument('--top', type=int, default=15)
    a = ap.parse_args()
    s, cpu = parse(a.file)
    if not s:
        print('no samples')
        return
    ms = 1000.0 * cpu / len(s) if cpu else 1.0
    print('%d samples, process CPU %.3f s: %.2f ms a sample' % (len(s), cpu or 0, ms))
    base = s[0][0]
    t0 = a.t0 if a.t0 is None or a.t0 > 1e6 else base + a.t0
    t1 = a.t1 if a.t1 is None or a.t1 > 1e6 else base + a.t1
    s = [x for x in s if (t0 is None or x[0] >= t0) and (t1 is None or x[0] < t1)]
    want, run, name = resolver(a.lib)
    for _, _, st in s:
        for f in st:
            want(f)
    run()
    s = [(t, tid, [name(f) for f in st]) for t, tid, st in s]
    print('%d samples in the window (%.0f ms of CPU), wall %.3f to %.3f s after the first sample' %
          (len(s), len(s) * ms, s[0][0] - base, s[-1][0] - base) if s else 'none in the window')

    def show(title, counter, n=a.top):
        print('\n' + title)
        for k, v in counter.most_common(n):
            print('  %7.0f  %s' % (v * ms, k))
    show('by thread', collections.Counter(tid for _, tid, _ in s))
    show('by leaf library', collections.Counter(lib_of(st[0]) if st else '-' for _, _, st in s))
    show('by entry into CUDA libraries (outermost frame, its caller)',
         collections.Counter(entry(st) for _, _, st in s), 25)
    show('by innermost call into CUDA libraries (its caller)',
         collections.Counter(call(st) for _, _, st in s), 25)
    show('by leaf symbol', collections.Counter(st[0] if st else '-' for _, _, st in s))
    print('\ntimeline (50 ms of wall time a row: ms of CPU by leaf library)')
    rows = collections.OrderedDict()
    for t, _, st in s:
        b = int((t - base) / 0.05)
        rows.setdefault(b, collections.Counter())[lib_of(st[0]) if st else '-'] += 1
    for b, c in rows.items():
        print('  %6.2f  %s' % (b * 0.05, ', '.join('%s %.0f' % (k, v * ms) for k, v in c.most_common(4))))


if __name__ == '__main__':
    main()
