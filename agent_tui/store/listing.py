"""Listing the sessions of a folder: header, name, first message, last activity, size."""

from __future__ import annotations

import os
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

from agent_tui.store.errors import StoreError
from agent_tui.store.paths import session_dir_for, sessions_root
from agent_tui.store.reader import read_file
from agent_tui.store.redact import redact_text, redaction_enabled


@dataclass(slots=True)
class SessionInfo:
    path: str
    id: str
    cwd: str
    name: str | None
    first_message: str
    modified: str
    entries: int
    size: int
    parent_session: str | None

    def to_json(self) -> dict[str, Any]:
        return asdict(self)


def session_files(folder: Path) -> list[Path]:
    try:
        return sorted((p for p in folder.iterdir() if p.suffix == ".jsonl" and p.is_file()), reverse=True)
    except (FileNotFoundError, NotADirectoryError):
        return []


def read_info(path: Path) -> SessionInfo | None:
    try:
        loaded = read_file(path)
    except StoreError:
        return None
    name: str | None = None
    first = ""
    last = str(loaded.header.get("timestamp") or "")
    for entry in loaded.entries:
        if entry.type == "session_info":
            value = entry.data.get("name")
            name = value.strip() or None if isinstance(value, str) else None
        elif entry.type == "message" and not first and entry.role == "user":
            content = (entry.message or {}).get("content")
            if isinstance(content, str):
                first = content
            elif isinstance(content, list):
                first = " ".join(
                    str(b.get("text", "")) for b in content if isinstance(b, dict) and b.get("type") == "text"
                )
    if loaded.entries:
        stamp = loaded.entries[-1].data.get("timestamp")
        if isinstance(stamp, str):
            last = stamp
    return SessionInfo(
        path=str(path),
        id=str(loaded.header.get("id")),
        cwd=str(loaded.header.get("cwd") or ""),
        name=_shown(name) if name else name,
        first_message=" ".join(_shown(first).split())[:200],
        modified=last,
        entries=len(loaded.entries),
        size=os.stat(path).st_size,
        parent_session=loaded.header.get("parentSession"),
    )


def _shown(text: str) -> str:
    """What a listing prints: without secrets (a pi file holds them as typed)."""
    return redact_text(text)[0] if text and redaction_enabled() else text


def list_sessions(cwd: str, *, all_dirs: bool = False, session_dir: str | None = None) -> list[SessionInfo]:
    """Sessions of ``cwd`` (or of every folder), most recent activity first."""
    if all_dirs and session_dir is None:
        root = sessions_root()
        folders = [p for p in root.iterdir() if p.is_dir()] if root.is_dir() else []
    else:
        folders = [session_dir_for(cwd, session_dir)]
    infos = [info for folder in folders for f in session_files(folder) if (info := read_info(f)) is not None]
    return sorted(infos, key=lambda i: i.modified, reverse=True)
