"""The latest session of a folder, for ``-c``, by reading its files' last entries.

Every listing (``agent-tui sessions`` with or without ``--search``, the ``-r``
picker) goes through :class:`agent_tui.library.search.Library` and its one summary
type, ``SessionSummary``. ``-c`` needs one path only:
:func:`agent_tui.library.latest.latest_session` takes each file's last activity from
those summaries where they are current, and from :func:`last_activity` (the file
read) elsewhere; :func:`latest_session` here reads every file.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from agent_tui.store.errors import StoreError
from agent_tui.store.paths import session_dir_for
from agent_tui.store.reader import read_file
from agent_tui.store.tail import last_entry


def session_files(folder: Path) -> list[Path]:
    try:
        return sorted((p for p in folder.iterdir() if p.suffix == ".jsonl" and p.is_file()), reverse=True)
    except (FileNotFoundError, NotADirectoryError):
        return []


def last_activity(path: Path) -> str | None:
    """The timestamp of the file's last entry (its header's when it has none); None: unreadable.
    A v3 file is read from its end (``store.tail``): its last lines only, whatever its size."""
    try:
        found = last_entry(path)
        if found is not None:
            header, last = found
        else:
            loaded = read_file(path)
            header, last = loaded.header, loaded.entries[-1] if loaded.entries else None
    except StoreError:
        return None
    if last is not None:
        stamp = last.data.get("timestamp")
        if isinstance(stamp, str):
            return stamp
    return str(header.get("timestamp") or "")


def latest_session(
    cwd: str | Path,
    *,
    session_dir: str | Path | None = None,
    stamp_of: Callable[[Path], str | None] = last_activity,
) -> Path | None:
    """The session of ``cwd`` (or in ``session_dir``) with the most recent activity; None: none readable.

    The order is ``SessionSummary.modified``'s (the last entry's timestamp), ties to the later file name.
    ``stamp_of(path)``: a file's last activity (None: unreadable); by default the file is read.
    """
    best: tuple[str, Path] | None = None
    for path in session_files(session_dir_for(cwd, session_dir)):
        stamp = stamp_of(path)
        if stamp is not None and (best is None or stamp > best[0]):
            best = (stamp, path)
    return best[1] if best is not None else None
