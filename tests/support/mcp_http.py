"""Our HTTP MCP server (``tests/fixtures/mcp/http_server.py``) as a process on a free port of
127.0.0.1, over streamable HTTP or the legacy SSE transport, wanting a bearer token: its tool
``whoami`` answers ``authorized`` only with it."""

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
def http_mcp_server(token: str, transport: str = "streamable-http", port: int | None = None) -> Iterator[str]:
    """The server running (until it listens, at most 60 s); yields its URL; terminated after.
    ``transport="sse"``: the legacy SSE transport (the URL is its event stream's, ``/sse``);
    ``port``: that port rather than a free one (a server started again at the same address)."""
    if port is None:
        with socket.socket() as probe:
            probe.bind(("127.0.0.1", 0))
            port = probe.getsockname()[1]
    process = subprocess.Popen(
        [sys.executable, str(SERVER), str(port), token, transport],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    try:
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline:  # until the server listens
            with socket.socket() as s:
                if s.connect_ex(("127.0.0.1", port)) == 0:
                    break
            time.sleep(0.1)
        yield f"http://127.0.0.1:{port}/{'sse' if transport == 'sse' else 'mcp'}"
    finally:
        if process.poll() is None:
            process.terminate()
        process.wait(10)


__all__ = ["http_mcp_server"]
