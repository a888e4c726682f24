"""Starting ``agent-tui serve`` on a free port in a subprocess, and reading the URL it prints."""

from __future__ import annotations

import os
import re
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path


@contextmanager
def served(cwd: Path, *extra: str) -> Iterator[tuple[int, str]]:
    """(port, the URL with its token) of a running ``agent-tui serve --host 127.0.0.1``."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    proc = subprocess.Popen(
        [sys.executable, "-m", "agent_tui", "serve", "--host", "127.0.0.1", "--port", str(port), *extra],
        cwd=cwd,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
    )
    try:
        assert proc.stdout is not None
        output = b""
        deadline = time.monotonic() + 30
        match = None
        while match is None and time.monotonic() < deadline:
            chunk = os.read(proc.stdout.fileno(), 4096)
            if not chunk:
                break
            output += chunk
            match = re.search(rb"open (http://\S+\?token=[\w-]+)", output)
        assert match is not None, f"no URL printed: {output!r}"
        url = match.group(1).decode()
        for _ in range(200):  # printed on startup: the socket may not accept yet
            try:
                with socket.create_connection(("127.0.0.1", port), timeout=1):
                    break
            except OSError:
                time.sleep(0.05)
        yield port, url
    finally:
        proc.terminate()
        proc.wait(timeout=10)
