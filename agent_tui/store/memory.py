"""Sessions that are never written (``--no-session``, pi's in-memory session).

A :class:`MemoryWriter` stands where a :class:`SessionWriter` would: every append is encoded and
validated as for a file, then kept only in memory. Nothing is created on disk, not even a folder.
"""

from __future__ import annotations

from pathlib import Path

from agent_tui.store.record import JSONObject
from agent_tui.store.writer import FsyncPolicy, SessionWriter, encode_line

#: The path an ephemeral session reports (it never exists: nothing is written there).
NO_SESSION_PATH = Path("(no session)")


class MemoryWriter(SessionWriter):
    """A writer that keeps the lines it is given in memory (``lines``) and touches no file."""

    def __init__(self, header: JSONObject) -> None:
        super().__init__(NO_SESSION_PATH, -1, 0, True, FsyncPolicy.NEVER)
        self._fd = None
        self.lines: list[bytes] = []
        self.append(header)

    def expect_size(self, size: int) -> None:
        return None

    def append(self, obj: JSONObject, *, sync: bool = True) -> None:
        self.append_bytes(encode_line(obj), sync=sync)

    def append_bytes(self, line: bytes, *, sync: bool = True) -> None:
        self.lines.append(line)
        self._size += len(line)

    def sync(self) -> None:
        return None

    def close(self) -> None:
        return None

    def _stat_size(self) -> int:
        return self._size


def is_ephemeral(writer: object) -> bool:
    """Whether a session's writer keeps its entries in memory only."""
    return isinstance(writer, MemoryWriter)


__all__ = ["NO_SESSION_PATH", "MemoryWriter", "is_ephemeral"]
