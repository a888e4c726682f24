"""Which folders the user trusts to start programs: a project's ``.mcp.json`` and hooks.

A folder's own files (``.mcp.json``, ``.pi/mcp.json``, ``.claude/settings.json`` hooks) start
programs, so they are read only with ``--trust-project`` or after the user said yes once; the
answer (yes or no) is remembered per folder (its real path) in ``trust.json`` in the data dir.
A session file never grants trust: only this store and the flag do.
"""

from __future__ import annotations

import contextlib
import json
import os
import tempfile
from collections.abc import Awaitable, Callable
from pathlib import Path

#: Asks the user whether to trust a folder: (folder, what it would load) -> yes / no (remembered),
#: or None (not now: asked again at the next start).
TrustAsker = Callable[[str, list[str]], Awaitable[bool | None]]


def default_path() -> Path:
    from agent_tui.store.paths import data_home

    return data_home() / "trust.json"


class TrustStore:
    def __init__(self, path: Path | None = None) -> None:
        self.path = path if path is not None else default_path()

    def _read(self) -> dict[str, bool]:
        try:
            data = json.loads(self.path.read_text(encoding="utf-8"))
        except (OSError, ValueError):
            return {}
        folders = data.get("folders") if isinstance(data, dict) else None
        if not isinstance(folders, dict):
            return {}
        return {str(k): v for k, v in folders.items() if isinstance(v, bool)}

    def decision(self, folder: str | Path) -> bool | None:
        """True or False as remembered for ``folder``; None when the user was never asked."""
        return self._read().get(os.path.realpath(folder))

    def remember(self, folder: str | Path, trusted: bool) -> None:
        folders = self._read()
        folders[os.path.realpath(folder)] = trusted
        self.path.parent.mkdir(parents=True, exist_ok=True)
        fd, tmp = tempfile.mkstemp(dir=self.path.parent, prefix=".trust-")
        try:
            with os.fdopen(fd, "w", encoding="utf-8") as f:
                json.dump({"folders": folders}, f, indent=1, sort_keys=True)
            os.replace(tmp, self.path)
        except OSError:
            with contextlib.suppress(OSError):
                os.unlink(tmp)
            raise


__all__ = ["TrustAsker", "TrustStore", "default_path"]
