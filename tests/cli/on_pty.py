#!/usr/bin/env python3
"""on_pty.py OUT PROGRAM [ARG...]: run PROGRAM on a pseudo-terminal (its
stdin, stdout and stderr a terminal, as in an interactive shell), write
everything it printed to the file OUT, and exit with its status.  For the
checks of what gpuadvise draws only on a terminal (the progress line)."""
import os
import pty
import sys

pid, fd = pty.fork()
if pid == 0:
    os.execv(sys.argv[2], sys.argv[2:])
out = b""
while True:
    try:
        d = os.read(fd, 65536)
    except OSError:
        break
    if not d:
        break
    out += d
_, st = os.waitpid(pid, 0)
with open(sys.argv[1], "wb") as f:
    f.write(out)
sys.exit(os.waitstatus_to_exitcode(st))
