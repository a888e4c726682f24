"""The latest session of a folder, for ``-c``: from the listing's summaries where they are current.

The session library's index (:mod:`agent_tui.library.search_index`) keeps, per file, its
size, mtime and summary, whose ``modified`` is the last entry's timestamp. A file whose
size and mtime are still the ones its summary was made from counts by that summary; any
other (no index, a file new or changed since its summary, an index that cannot be read)
is read for its last entry, as :func:`agent_tui.store.listing.latest_session` reads them
all. The index is only read here (opened read-only, never created or written): the next
listing brings it up to date.
"""

from __future__ import annotations

import os
import sqlite3
from pathlib import Path
from urllib.parse import quote

from agent_tui.library.search_index import INDEX_VERSION, default_db_path
from agent_tui.store import listing
from agent_tui.store.listing import last_activity
from agent_tui.store.paths import session_dir_for

#: What the index says of a file: size, mtime_ns, last activity.
_Known = tuple[int, int, str]


def latest_session(
    cwd: str | Path, *, session_dir: str | Path | None = None, db_path: str | Path | None = None
) -> Path | None:
    """The session of ``cwd`` (or in ``session_dir``) with the most recent activity; None: none readable.

    The order is ``SessionSummary.modified``'s (the last entry's timestamp), ties to the later
    file name. ``db_path``: the index to read the summaries from (default: the data dir's).
    """
    folder = session_dir_for(cwd, session_dir)
    known = _summarized(Path(db_path) if db_path is not None else default_db_path(), folder)

    def stamp_of(path: Path) -> str | None:
        return _current_stamp(path, known.get(path.name)) or last_activity(path)

    return listing.latest_session(cwd, session_dir=session_dir, stamp_of=stamp_of)


def _current_stamp(path: Path, known: _Known | None) -> str | None:
    """The summary's last activity, if the file is still the one it was made from."""
    if known is None:
        return None
    try:
        st = path.stat()
    except OSError:
        return None
    size, mtime_ns, stamp = known
    return stamp if st.st_size == size and st.st_mtime_ns == mtime_ns else None


def _summarized(db_path: Path, folder: Path) -> dict[str, _Known]:
    """The index's size, mtime and last activity of each file directly in ``folder``, by file
    name ({} when there is no index, or it cannot be read, or is of another version)."""
    if not db_path.is_file():
        return {}
    try:
        root = str(folder.resolve())
    except OSError:
        return {}
    prefix = root.rstrip(os.sep) + os.sep
    upper = prefix[:-1] + chr(ord(os.sep) + 1)  # every path that starts with ``prefix`` sorts below it
    try:
        db = sqlite3.connect(f"file:{quote(str(db_path))}?mode=ro", uri=True, timeout=2)
    except sqlite3.Error:
        return {}
    try:
        version = db.execute("SELECT value FROM meta WHERE key='version'").fetchone()
        if version is None or version[0] != str(INDEX_VERSION):
            return {}
        rows = db.execute(
            "SELECT path, size, mtime_ns, json_extract(info, '$.modified') FROM files WHERE path >= ? AND path < ?",
            (prefix, upper),
        ).fetchall()
    except sqlite3.Error:
        return {}
    finally:
        db.close()
    found: dict[str, _Known] = {}
    for path, size, mtime_ns, modified in rows:
        name = path[len(prefix) :]
        if os.sep not in name and isinstance(modified, str):
            found[name] = (int(size), int(mtime_ns), modified)
    return found
