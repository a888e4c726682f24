"""``--session PATH|ID`` and ``--fork PATH|ID``: a session named by file path, or by its id or a
unique prefix of it among the sessions of the working folder (pi's rule for telling them apart: a
path holds a ``/`` or ends in ``.jsonl``; anything else is an id).

Only each file's first line (its header) is read.
"""

from __future__ import annotations

import json
import os
from dataclasses import dataclass
from pathlib import Path

from agent_tui.store.errors import StoreError
from agent_tui.store.listing import session_files
from agent_tui.store.paths import session_dir_for, sessions_root


def looks_like_path(text: str) -> bool:
    """pi's test: a ``/`` (or ``\\``) or the ``.jsonl`` suffix makes a path; the rest is an id."""
    return "/" in text or "\\" in text or text.endswith(".jsonl") or text.startswith("~")


@dataclass(frozen=True)
class Found:
    path: Path
    #: the session's working folder when it was found among another folder's sessions (else None)
    elsewhere: str | None = None


def header_id(path: Path) -> tuple[str, str]:
    """(id, cwd) from a session file's header line; ("", "") when it has none."""
    try:
        with open(path, "rb") as f:
            line = f.readline(1 << 16)
        header = json.loads(line)
    except (OSError, ValueError):
        return "", ""
    if not isinstance(header, dict) or header.get("type") != "session":
        return "", ""
    return str(header.get("id") or ""), str(header.get("cwd") or "")


def _matches(folder: Path, prefix: str) -> list[tuple[Path, str, str]]:
    found: list[tuple[Path, str, str]] = []
    for path in session_files(folder):
        session_id, cwd = header_id(path)
        if session_id and session_id.startswith(prefix):
            found.append((path, session_id, cwd))
    exact = [m for m in found if m[1] == prefix]
    return exact or found


def _one(matches: list[tuple[Path, str, str]], flag: str, text: str, where: str) -> tuple[Path, str] | None:
    if not matches:
        return None
    if len({m[1] for m in matches}) > 1:
        ids = ", ".join(sorted({m[1] for m in matches})[:3])
        more = "..." if len(matches) > 3 else ""
        raise StoreError(
            f"{flag} {text}: {len(matches)} sessions {where} have an id starting so ({ids}{more}); "
            "give more of the id"
        )
    return matches[0][0], matches[0][2]


def find_session(
    text: str, cwd: str | Path, session_dir: str | Path | None = None, *, flag: str = "--session"
) -> Found:
    """The session ``text`` names: an existing file, else an id or unique id prefix among the sessions
    of ``cwd`` (``session_dir`` when given), else among every folder's (then ``elsewhere`` is set).
    A path that does not exist is returned as it is (print mode creates it). Raises StoreError with
    one line for an unknown or ambiguous id."""
    given = Path(text).expanduser()
    if looks_like_path(text) or given.is_file():
        return Found(given if given.is_absolute() else Path(os.path.abspath(given)))
    if not text:
        raise StoreError(f"{flag}: an empty session id")
    local = _one(_matches(session_dir_for(cwd, session_dir), text), flag, text, "of this folder")
    if local is not None:
        return Found(local[0])
    if session_dir is None:
        root = sessions_root()
        matches: list[tuple[Path, str, str]] = []
        try:
            folders = sorted(p for p in root.iterdir() if p.is_dir())
        except OSError:
            folders = []
        for folder in folders:
            matches.extend(_matches(folder, text))
        exact = [m for m in matches if m[1] == text]
        other = _one(exact or matches, flag, text, "in other folders")
        if other is not None:
            return Found(other[0], elsewhere=other[1] or "another folder")
    raise StoreError(
        f"{flag} {text}: no session of this folder has that id (a path needs a / or .jsonl: ./{text})"
    )


__all__ = ["Found", "find_session", "header_id", "looks_like_path"]
