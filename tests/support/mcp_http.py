"""Our streamable-HTTP MCP server (``tests/fixtures/mcp/http_server.py``) as a process on a free
port of 127.0.0.1, wanting a bearer token: its tool ``whoami`` answers ``authorized`` only with it."""

from __future__ import annotations

import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

SERVER = Path(__file__).parents[1] / "fixtures" / "mcp" / "http_server.py"


@contextmanager
def http_mcp_server(token: str) -> Iterator[str]:
    """The server running (until it listens, at most 60 s); yields its URL; terminated after."""
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    process = subprocess.Popen(
        [sys.executable, str(SERVER), str(port), token], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL
    )
    try:
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline:  # until the server listens
            with socket.socket() as s:
                if s.connect_ex(("127.0.0.1", port)) == 0:
                    break
            time.sleep(0.1)
        yield f"http://127.0.0.1:{port}/mcp"
    finally:
        process.terminate()
        process.wait(10)


__all__ = ["http_mcp_server"]
