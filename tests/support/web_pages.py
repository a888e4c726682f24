"""A plain HTTP server for the sandbox network tests: every GET answers ``{prefix}{path}``."""

from __future__ import annotations

import http.server
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any


@contextmanager
def page_server(host: str, prefix: str) -> Iterator[int]:
    """Serve on ``host`` (a free port, yielded) until the block ends."""

    class Page(http.server.BaseHTTPRequestHandler):
        def do_GET(self) -> None:
            body = f"{prefix}{self.path}\n".encode()
            self.send_response(200)
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        def log_message(self, *args: Any) -> None:
            pass

    server = http.server.ThreadingHTTPServer((host, 0), Page)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    try:
        yield server.server_address[1]
    finally:
        server.shutdown()
        server.server_close()
