"""Resource limits for disk-full tests (run in a child process, before exec)."""

from __future__ import annotations

import resource
import signal


def limit_file_size(room: int) -> None:
    signal.signal(signal.SIGXFSZ, signal.SIG_IGN)
    resource.setrlimit(resource.RLIMIT_FSIZE, (room, resource.RLIM_INFINITY))
