"""Starting ``agent-tui serve`` on a free port in a subprocess, and reading what it prints."""

from __future__ import annotations

import os
import re
import select
import socket
import subprocess
import sys
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path


@dataclass
class Served:
    port: int
    url: str  # the address it printed, with its token
    proc: subprocess.Popen[bytes]
    output: bytes = field(default=b"")

    @property
    def token(self) -> str:
        return self.url.split("token=")[1]

    def wait_for(self, pattern: bytes, timeout: float = 30) -> re.Match[bytes] | None:
        """Read what the server prints until ``pattern`` (a regex) matches it, or ``timeout``."""
        assert self.proc.stdout is not None
        deadline = time.monotonic() + timeout
        while (match := re.search(pattern, self.output)) is None and time.monotonic() < deadline:
            ready, _, _ = select.select([self.proc.stdout], [], [], 0.1)
            if ready:
                chunk = os.read(self.proc.stdout.fileno(), 65536)
                if not chunk:
                    break
                self.output += chunk
        return match


@contextmanager
def served(cwd: Path, *extra: str) -> Iterator[Served]:
    """A running ``agent-tui serve --host 127.0.0.1`` on a free port."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    env = {**os.environ, "COLUMNS": "400"}  # its request log on one line per request
    proc = subprocess.Popen(
        [sys.executable, "-m", "agent_tui", "serve", "--host", "127.0.0.1", "--port", str(port), *extra],
        cwd=cwd,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        env=env,
    )
    try:
        server = Served(port, "", proc)
        match = server.wait_for(rb"open (http://\S+\?token=[\w-]+)")
        assert match is not None, f"no URL printed: {server.output!r}"
        server.url = match.group(1).decode()
        for _ in range(200):  # printed on startup: the socket may not accept yet
            try:
                with socket.create_connection(("127.0.0.1", port), timeout=1):
                    break
            except OSError:
                time.sleep(0.05)
        yield server
    finally:
        proc.terminate()
        proc.wait(timeout=10)


@contextmanager
def held_image(until: Callable[[], object]) -> Iterator[str]:
    """The URL of an image on 127.0.0.1 whose answer waits for ``until()`` to return: a page
    that shows it does not finish loading (nor a headless browser dump its DOM) before then."""

    class Held(BaseHTTPRequestHandler):
        def do_GET(self) -> None:
            until()
            self.send_response(204)
            self.end_headers()

        def log_message(self, format: str, *args: object) -> None:
            pass

    http = ThreadingHTTPServer(("127.0.0.1", 0), Held)
    thread = threading.Thread(target=http.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{http.server_address[1]}/held.png"
    finally:
        http.shutdown()
        http.server_close()
