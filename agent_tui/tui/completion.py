"""What the composer completes at the cursor: ``/`` commands, ``@`` files, and paths after a space (Tab).

Pure functions over the text of the cursor's line, so they are tested without the app.
"""

from __future__ import annotations

import os
import re
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from agent_tui.tui.widgets.completion_menu import Candidate

_MENTION_AT_CURSOR = re.compile(r'(?:^|(?<=\s))@("?)([^\s"]*)$')
_WORD_AT_CURSOR = re.compile(r"(?:^|(?<=\s))(\S+)$")
MAX_PATHS = 50


@dataclass(frozen=True, slots=True)
class Context:
    kind: str  # "slash" or "file"
    start: int  # column where the completed word starts (the "/" or the "@")
    query: str


def context_at(line: str, column: int, *, first_line: bool) -> Context | None:
    """The completion the text before ``column`` asks for, if any."""
    before = line[:column]
    if first_line and before.startswith("/") and " " not in before and not before.startswith("//"):
        return Context("slash", 0, before[1:])
    m = _MENTION_AT_CURSOR.search(before)
    if m is not None:
        return Context("file", m.start(), m.group(2))
    return None


def slash_candidates(query: str, rows: Sequence[tuple[str, str, str]]) -> list[Candidate]:
    """The commands whose name starts with ``query``, then those holding it; with usage and help.
    ``rows``: (name, usage, help) of every command (the app's, then the user's templates and skills)."""
    q = query.lower()
    first = [r for r in rows if r[0].lower().startswith(q)]
    then = [r for r in rows if q in r[0].lower() and r not in first]
    return [Candidate(f"/{name} ", usage, help) for name, usage, help in first + then]


def file_insert(path: str) -> str:
    """How a picked path goes into the text: ``@path `` (quoted when it holds a space); a folder
    keeps the picker open on its contents, so no space after it."""
    quoted = f'@"{path}"' if " " in path else f"@{path}"
    return quoted if path.endswith("/") else quoted + " "


def word_at(line: str, column: int) -> tuple[int, str] | None:
    """The word before the cursor (Tab completes it as a path): its start column and text."""
    m = _WORD_AT_CURSOR.search(line[:column])
    return (m.start(), m.group(1)) if m else None


def path_candidates(word: str, root: Path) -> list[Candidate]:
    """Entries of ``word``'s folder (relative to ``root``, ``~`` expanded) whose name starts with its
    last part, folders with a trailing ``/``; hidden ones only when the part starts with a dot."""
    folder, _, prefix = word.rpartition("/")
    base = Path(os.path.expanduser(folder or ".")) if folder or not word.startswith("/") else Path("/")
    if word.startswith("/") and not folder:
        base = Path("/")
    if not base.is_absolute():
        base = root / base
    try:
        names = sorted(os.listdir(base))
    except OSError:
        return []
    head = word[: len(word) - len(prefix)]
    out: list[Candidate] = []
    for name in names:
        if not name.startswith(prefix) or (name.startswith(".") and not prefix.startswith(".")):
            continue
        is_dir = (base / name).is_dir()
        text = head + name + ("/" if is_dir else "")
        out.append(Candidate(text, text))
        if len(out) >= MAX_PATHS:
            break
    return out


def common_prefix(candidates: list[Candidate]) -> str:
    """The longest start all candidates share, character by character (a path being typed)."""
    return os.path.commonprefix([c.insert for c in candidates]) if candidates else ""  # noqa: RUF071


__all__ = [
    "Context",
    "common_prefix",
    "context_at",
    "file_insert",
    "path_candidates",
    "slash_candidates",
    "word_at",
]
