"""The learned context windows: a small cache in the data dir, so a new session starts knowing them.

A server's overflow error says its real window (``providers.overflow``); the agent records it in
the session (``projection.window``'s ``agent-tui.window`` entry) and here, keyed by provider,
server (the base URL without credentials or query) and model::

    {"version": 1, "windows": {"openai http://127.0.0.1:8080/v1 qwen": {"contextWindow": 4096, ...}}}

Written whole under a temporary name then renamed, private (0600). A damaged or unreadable file is
treated as empty (it is only a cache: the next overflow teaches the window again).
"""

from __future__ import annotations

import contextlib
import json
import os
import tempfile
from collections.abc import Iterable
from pathlib import Path
from urllib.parse import urlsplit

from agent_tui.projection.window import learned_window
from agent_tui.store.paths import data_home, make_private_dirs
from agent_tui.store.record import Entry

CACHE_NAME = "windows.json"


def server_key(provider: str, base_url: str | None, model: str) -> str:
    """The cache key: provider, the server (scheme, host, port, path; never credentials), model."""
    server = "default"
    if base_url:
        parts = urlsplit(base_url)
        host = parts.hostname or ""
        port = f":{parts.port}" if parts.port else ""
        server = f"{parts.scheme}://{host}{port}{parts.path.rstrip('/')}"
    return f"{provider} {server} {model}"


class WindowCache:
    """Learned windows in ``path`` (``$AGENT_TUI_HOME/windows.json`` by default)."""

    def __init__(self, path: str | os.PathLike[str]) -> None:
        self.path = Path(path)

    @classmethod
    def default(cls) -> WindowCache:
        return cls(data_home() / CACHE_NAME)

    def _read(self) -> dict[str, dict[str, int]]:
        try:
            data = json.loads(self.path.read_text(encoding="utf-8"))
        except (OSError, ValueError):
            return {}
        windows = data.get("windows") if isinstance(data, dict) else None
        return {k: v for k, v in windows.items() if isinstance(v, dict)} if isinstance(windows, dict) else {}

    def get(self, provider: str, base_url: str | None, model: str) -> int | None:
        value = self._read().get(server_key(provider, base_url, model), {}).get("contextWindow")
        return value if isinstance(value, int) and not isinstance(value, bool) and value > 0 else None

    def put(self, provider: str, base_url: str | None, model: str, window: int) -> None:
        """Remember ``window``; a failure to write is ignored (the session entry still records it)."""
        windows = self._read()
        windows[server_key(provider, base_url, model)] = {"contextWindow": int(window)}
        text = json.dumps({"version": 1, "windows": windows}, indent=1, sort_keys=True) + "\n"
        with contextlib.suppress(OSError):
            make_private_dirs(self.path.parent)
            fd, temp = tempfile.mkstemp(prefix=".windows-", dir=self.path.parent)
            try:
                with os.fdopen(fd, "w", encoding="utf-8") as f:
                    f.write(text)
                os.replace(temp, self.path)
            except OSError:
                with contextlib.suppress(OSError):
                    os.unlink(temp)
                raise


def known_window(
    path: Iterable[Entry], provider: str, base_url: str | None, model: str, cache: WindowCache | None
) -> int | None:
    """The server's real window when an overflow taught it: the session's latest ``agent-tui.window``
    entry on ``path``, else the cache's for this server; None when neither knows."""
    window = learned_window(path, provider, model)
    if window is None and cache is not None:
        window = cache.get(provider, base_url, model)
    return window


__all__ = ["CACHE_NAME", "WindowCache", "known_window", "server_key"]
