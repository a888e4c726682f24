"""This test process's own children, found in /proc (Linux): e.g. an MCP server a test kills."""

from __future__ import annotations

import os
from pathlib import Path


def children(marker: str, parent: int | None = None) -> list[int]:
    """The pids of the live children of ``parent`` (None: this process) whose command line holds
    ``marker``."""
    me, found = os.getpid() if parent is None else parent, []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            stat = (entry / "stat").read_text()
            cmdline = (entry / "cmdline").read_bytes()
        except OSError:
            continue
        fields = stat.rsplit(")", 1)[1].split()  # after the command's name, which may hold spaces
        if int(fields[1]) == me and fields[0] != "Z" and marker.encode() in cmdline:
            found.append(int(entry.name))
    return found
