"""The composer's prompt history: this session's user messages, then a global history file.

The file is ``history.jsonl`` in the data dir (``$AGENT_TUI_HOME`` or the platform's), one JSON
object per prompt (``{"text", "cwd", "timestamp"}``), created 0600 in a 0700 folder, redacted
like a session (``store.redact``) before it is written, and capped at :data:`MAX_ENTRIES`
(trimmed by rewriting a temp file that replaces it). A prompt is recalled whole, multi-line
prompts included. A damaged line is skipped; a file that cannot be read or written leaves the
history in memory and says so once.
"""

from __future__ import annotations

import contextlib
import json
import os
import time
from collections.abc import Iterable
from pathlib import Path

from agent_tui.store.paths import make_private_dirs
from agent_tui.store.redact import redact_text, redaction_enabled

MAX_ENTRIES = 1000
FILE_NAME = "history.jsonl"
#: Trim only when the file is this much over the cap (one rewrite per this many prompts).
_SLACK = 100


class PromptHistory:
    """Prompts from oldest to newest. ``path`` None keeps the history in memory only (tests)."""

    def __init__(self, path: Path | None, max_entries: int = MAX_ENTRIES) -> None:
        self.path = path
        self.max_entries = max_entries
        self.problem: str | None = None
        self._lines = 0
        self.entries: list[str] = self._load()

    def _load(self) -> list[str]:
        if self.path is None:
            return []
        try:
            raw = self.path.read_bytes()
        except FileNotFoundError:
            return []
        except OSError as e:
            self.problem = f"history {self.path}: {e.strerror or e}"
            return []
        out: list[str] = []
        for line in raw.splitlines():
            self._lines += 1
            try:
                item = json.loads(line)
            except ValueError:
                continue
            text = item.get("text") if isinstance(item, dict) else None
            if isinstance(text, str) and text.strip():
                out.append(text)
        return _dedupe(out)[-self.max_entries :]

    def add(self, text: str, cwd: str = "") -> None:
        """Remember a sent prompt (redacted), newest last; an immediate repeat is not added twice."""
        if not text.strip():
            return
        if redaction_enabled():
            text, _ = redact_text(text)
        if self.entries and self.entries[-1] == text:
            return
        with contextlib.suppress(ValueError):
            self.entries.remove(text)
        self.entries.append(text)
        del self.entries[: -self.max_entries]
        if self.path is not None and self.problem is None:
            self._write(text, cwd)

    def _write(self, text: str, cwd: str) -> None:
        assert self.path is not None
        line = json.dumps({"text": text, "cwd": cwd, "timestamp": int(time.time() * 1000)}) + "\n"
        try:
            make_private_dirs(self.path.parent)
            fd = os.open(self.path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o600)
            try:
                os.write(fd, line.encode())
            finally:
                os.close(fd)
            self._lines += 1
            if self._lines > self.max_entries + _SLACK:
                self._trim()
        except OSError as e:
            self.problem = f"history {self.path}: {e.strerror or e}"

    def _trim(self) -> None:
        assert self.path is not None
        keep = self.entries[-self.max_entries :]
        tmp = self.path.with_name(self.path.name + ".tmp")
        fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
        with os.fdopen(fd, "w") as f:
            for text in keep:
                f.write(json.dumps({"text": text}) + "\n")
        os.replace(tmp, self.path)
        self._lines = len(keep)

    def recall_list(self, session_prompts: Iterable[str]) -> list[str]:
        """What Up walks, oldest first: the global history, then this session's prompts (so Up
        offers the session's own messages first); each prompt once, at its newest place."""
        return _dedupe([*self.entries, *session_prompts])

    def search(self, query: str, items: list[str]) -> list[str]:
        """Ctrl+R: the prompts holding every word of ``query`` (any case), newest first."""
        words = query.lower().split()
        return [t for t in reversed(items) if all(w in t.lower() for w in words)]


def _dedupe(items: list[str]) -> list[str]:
    """Each text once, at its last position."""
    seen: set[str] = set()
    out: list[str] = []
    for text in reversed(items):
        if text not in seen:
            seen.add(text)
            out.append(text)
    out.reverse()
    return out


def default_history_path() -> Path:
    from agent_tui.store.paths import data_home

    return data_home() / FILE_NAME


__all__ = ["FILE_NAME", "MAX_ENTRIES", "PromptHistory", "default_history_path"]
