"""The latest session of a folder, for ``-c``, from the listing's summaries where they are current;
and :func:`record_session`, the summary of a session a face wrote, made when it closes it.

The session library's index (:mod:`agent_tui.library.search_index`) keeps, per file, its
size, mtime and summary, whose ``modified`` is the last entry's timestamp. A file whose
size and mtime are still the ones its summary was made from counts by that summary; any
other (no index, a file new or changed since its summary, an index that cannot be read)
is read for its last entry, as :func:`agent_tui.store.listing.latest_session` reads them
all. :func:`latest_session` only reads the index (opened read-only, never created or written).

Every face closing a session it may have written (the app, print, JSON and RPC modes; a new
session, ``-c``, ``--resume``, ``--session``) calls :func:`record_session`: that one file's summary
and text are brought up to date in the index, when there is one, so the next ``sessions``,
search or ``-c`` reads nothing again.
"""

from __future__ import annotations

import os
import sqlite3
import threading
from pathlib import Path
from urllib.parse import quote

from agent_tui.store import listing
from agent_tui.store.errors import StoreError
from agent_tui.store.listing import last_activity
from agent_tui.store.paths import session_dir_for
from agent_tui.store.session import Session

#: What the index says of a file: size, mtime_ns, last activity.
_Known = tuple[int, int, str]


def latest_session(
    cwd: str | Path, *, session_dir: str | Path | None = None, db_path: str | Path | None = None
) -> Path | None:
    """The session of ``cwd`` (or in ``session_dir``) with the most recent activity; None: none readable.

    The order is ``SessionSummary.modified``'s (the last entry's timestamp), ties to the later
    file name. ``db_path``: the index to read the summaries from (default: the data dir's).
    """
    from agent_tui.library.search_index import default_db_path

    folder = session_dir_for(cwd, session_dir)
    known = _summarized(Path(db_path) if db_path is not None else default_db_path(), folder)

    def stamp_of(path: Path) -> str | None:
        return _current_stamp(path, known.get(path.name)) or last_activity(path)

    return listing.latest_session(cwd, session_dir=session_dir, stamp_of=stamp_of)


def record_session(path: str | Path, *, db_path: str | Path | None = None) -> None:
    """Bring ``path``'s summary and text up to date in the index (``db_path``, default the data
    dir's), if that index exists (none is created here). The index is a cache: a failure (locked,
    damaged, a full disk) changes nothing and is said nowhere; the next listing does it."""
    from agent_tui.library.search_index import IndexDatabase, default_db_path

    db = Path(db_path) if db_path is not None else default_db_path()
    if not db.is_file():
        return
    try:
        file = Path(path).resolve()
        with IndexDatabase([file.parent], db_path=db) as index:
            index.refresh_file(file)
    except (sqlite3.Error, OSError, StoreError):
        return


def close_and_record(session: Session, *, db_path: str | Path | None = None) -> None:
    """Close ``session``; if it was open for writing, :func:`record_session` it."""
    wrote = session.writer is not None and not session.ephemeral  # --no-session: nothing to record
    session.close()
    if wrote:
        record_session(session.path, db_path=db_path)


def close_and_record_later(session: Session, *, db_path: str | Path | None = None) -> threading.Thread | None:
    """Close ``session`` now (its lock is free at once: it can be opened again), and record it in
    a thread of its own, which is returned (None: it was read-only, nothing to record). For a face
    that goes on with another session: recording re-reads the file (0.15 s for 20,000 entries)."""
    wrote = session.writer is not None and not session.ephemeral  # --no-session: nothing to record
    session.close()
    if not wrote:
        return None
    thread = threading.Thread(
        target=record_session, args=(session.path,), kwargs={"db_path": db_path}, name="agent-tui-record"
    )
    thread.start()
    return thread


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
    from agent_tui.library.search_index import INDEX_VERSION

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
