"""Run one command; print its wall time, CPU time, peak RSS and exit code as JSON (used when /usr/bin/time is missing).

Usage: python -I proc_stats.py OUT_FILE COMMAND [ARGS...]   (OUT_FILE receives the command's stdout)

This runs as its own small process on purpose. Linux keeps a process's peak
RSS across fork and exec (``ru_maxrss`` is a high-water mark that exec does
not reset), so a command spawned straight from the benchmark, which has held
a 50 MB session and generated it, would report the benchmark's peak instead
of its own. Spawned from here, the floor is this interpreter's ~10 MB.
"""

from __future__ import annotations

import json
import os
import sys
import time


def main() -> int:
    out_file, cmd = sys.argv[1], sys.argv[2:]
    fd = os.open(out_file, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o644)
    actions = [(os.POSIX_SPAWN_DUP2, fd, 1), (os.POSIX_SPAWN_CLOSE, fd)]
    t0 = time.perf_counter()
    pid = os.posix_spawnp(cmd[0], cmd, os.environ, file_actions=actions)
    _, status, usage = os.wait4(pid, 0)
    wall = time.perf_counter() - t0
    os.close(fd)
    result = {
        "wall": wall,
        "cpu": usage.ru_utime + usage.ru_stime,
        "maxrss_kb": usage.ru_maxrss,
        "returncode": os.waitstatus_to_exitcode(status),
    }
    sys.stdout.write(json.dumps(result) + "\n")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
