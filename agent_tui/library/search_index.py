"""The search index's SQLite database: opening, repairing and refreshing it.

The index (``index/library-v5.sqlite3`` in the data dir) is a cache beside the
session files: a ``files`` table of each file's summary and fingerprints, and a
contentless FTS5 table ``text`` of entry text in chunks. The text is indexed
only for search (``refresh(text=True)``, the default): the listing refreshes
the summaries alone, and a file's ``text_size`` says how much of it the text
index holds. :class:`IndexDatabase`
opens it (one connection per thread, created 0600, rebuilt when damaged or
from another version; :func:`_repairs_damage` retries a method on a fresh
index), and :meth:`IndexDatabase.refresh` brings it up to date: a file that
grew has only its new lines indexed, one replaced is indexed again, one gone is
forgotten. :func:`index_error_reason` says in a few words why it cannot be used.
Part of :mod:`agent_tui.library.search`, which re-exports the public names.
"""

from __future__ import annotations

import hashlib
import json
import os
import signal
import sqlite3
import sys
import threading
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from functools import wraps
from pathlib import Path
from typing import Any, Self, TypeVar

from agent_tui.library.search_match import _Cache
from agent_tui.library.search_summary import _redacted, summarize
from agent_tui.library.search_text import _shown, entry_text
from agent_tui.projection.pricing import PRICES
from agent_tui.store.errors import StoreError
from agent_tui.store.index import SessionIndex
from agent_tui.store.paths import data_home, make_private_dirs, session_dir_for, sessions_root
from agent_tui.store.reader import parse_session
from agent_tui.store.record import Entry

INDEX_VERSION = 5  # 2: the ``phrases`` table (positions); 3: no positions, phrases checked on the files;
# 4: summaries carry usage and cost; 5: the text index may lag the summaries (``text_size``), and
# chunk ids are never reused (a forgotten file's FTS rows stay: a new chunk must not take their rowid)
#: One FTS row holds at most this much text (a long session is a few rows).
CHUNK_CHARS = 4_000_000


@dataclass(slots=True)
class RefreshStats:
    files: int = 0
    indexed: int = 0  # files indexed from the start
    extended: int = 0  # files that grew: only new lines indexed
    removed: int = 0
    unreadable: int = 0
    bytes_read: int = 0
    seconds: float = 0.0
    processes: int = 1  # processes that summarized files (``jobs``)


# -- the library ------------------------------------------------------------------------------


def default_db_path() -> Path:
    return data_home() / "index" / f"library-v{INDEX_VERSION}.sqlite3"


_SCHEMA = """
CREATE TABLE IF NOT EXISTS meta(key TEXT PRIMARY KEY, value TEXT);
CREATE TABLE IF NOT EXISTS files(
    id INTEGER PRIMARY KEY,
    path TEXT UNIQUE NOT NULL,
    size INTEGER NOT NULL,
    mtime_ns INTEGER NOT NULL,
    head BLOB NOT NULL,
    tail BLOB NOT NULL,
    text_size INTEGER NOT NULL,
    text_lines INTEGER NOT NULL,
    info TEXT NOT NULL
);
CREATE TABLE IF NOT EXISTS chunks(
    id INTEGER PRIMARY KEY AUTOINCREMENT,
    file_id INTEGER NOT NULL,
    first_line INTEGER NOT NULL,
    last_line INTEGER NOT NULL
);
CREATE INDEX IF NOT EXISTS chunks_by_file ON chunks(file_id);
CREATE VIRTUAL TABLE IF NOT EXISTS text USING fts5(
    body, content='', detail=none, prefix='2 3', tokenize='unicode61 remove_diacritics 2'
);
"""


_R = TypeVar("_R")
#: SQLite's result codes for a damaged file (SQLITE_CORRUPT, SQLITE_NOTADB), and for a disk that
#: cannot take a write (SQLITE_IOERR, SQLITE_FULL) or another process's lock (SQLITE_BUSY, _LOCKED).
_DAMAGED_CODES = (11, 26)
_DISK_CODES = (10, 13)
_LOCK_CODES = (5, 6)


def _is_full(error: sqlite3.Error) -> bool:
    """A write the disk refused (full, or failing): not the index's fault, nothing to rebuild."""
    return (getattr(error, "sqlite_errorcode", 0) & 0xFF) in _DISK_CODES


def index_error_reason(error: BaseException) -> str:
    """Why the index cannot be used, in a few words, for one line."""
    code = getattr(error, "sqlite_errorcode", 0) & 0xFF
    if code == 13:
        return "disk full"
    if code == 10:
        return "cannot write to the disk: disk full or failing"
    return str(error)


def _repairs_damage(method: Callable[..., _R]) -> Callable[..., _R]:
    """A Library method that, when the index turns out damaged (a SQLite error whose code says
    so, or which ``PRAGMA quick_check`` confirms), deletes it, notes it in ``notices`` and runs
    again on a fresh index, filled first. The index is a cache: the files are the truth."""

    @wraps(method)
    def wrapper(self: IndexDatabase, *args: Any, **kwargs: Any) -> _R:
        try:
            return method(self, *args, **kwargs)
        except sqlite3.DatabaseError as e:
            if self._repairing or not self._is_damaged(e):
                raise
        self._repairing = True
        try:
            self._reset()
            self._note(f"the search index {self.db_path} was damaged: rebuilt it")
            if method.__name__ != "refresh":
                self.refresh()
            return method(self, *args, **kwargs)
        finally:
            self._repairing = False

    return wrapper


class IndexDatabase:
    """The SQLite index of the sessions under ``roots``: opening, repairing and refreshing it.

    :class:`agent_tui.library.search.Library` adds reading and searching it.
    """

    def __init__(
        self, roots: Sequence[str | Path], *, nested: bool = False, db_path: str | Path | None = None
    ) -> None:
        self.roots = [Path(r).expanduser().resolve() for r in roots]
        self.nested = nested
        self.db_path = Path(db_path) if db_path is not None else default_db_path()
        self._local = threading.local()  # one SQLite connection per thread (a refresh can run in a worker)
        self._connections: list[sqlite3.Connection] = []
        self._connections_lock = threading.Lock()
        self._cache: _Cache | None = None  # replaced whole, so another thread never sees half of it
        self.notices: list[str] = []  # one line each, for the user: e.g. a damaged index was rebuilt
        self._repairing = False

    @classmethod
    def for_cwd(
        cls, cwd: str | Path, *, all_dirs: bool = False, session_dir: str | Path | None = None
    ) -> Self:
        """What ``agent-tui sessions`` lists: the cwd's sessions, every folder's, or ``session_dir``'s."""
        if session_dir is not None:
            return cls([Path(session_dir)])
        if all_dirs:
            return cls([sessions_root()], nested=True)
        return cls([session_dir_for(cwd)])

    # -- the database -------------------------------------------------------------------------

    @property
    def db(self) -> sqlite3.Connection:
        db: sqlite3.Connection | None = getattr(self._local, "db", None)
        if db is None:
            with self._connections_lock:
                db = self._open()
                self._connections.append(db)
            self._local.db = db
        return db

    def _open(self) -> sqlite3.Connection:
        make_private_dirs(self.db_path.parent)
        db: sqlite3.Connection | None = None
        for attempt in range(2):
            try:
                # created 0600 before SQLite opens it: its -wal and -shm files take the file's mode
                os.close(os.open(self.db_path, os.O_RDWR | os.O_CREAT | os.O_CLOEXEC, 0o600))
                db = sqlite3.connect(self.db_path, timeout=10, isolation_level=None, check_same_thread=False)
                db.execute("PRAGMA journal_mode=WAL")
                db.execute("PRAGMA synchronous=NORMAL")
                db.executescript(_SCHEMA)
                version = db.execute("SELECT value FROM meta WHERE key='version'").fetchone()
                if version is None:
                    db.execute("INSERT INTO meta VALUES('version', ?)", (str(INDEX_VERSION),))
                elif version[0] != str(INDEX_VERSION):
                    raise sqlite3.DatabaseError("index version mismatch")
                for suffix in ("", "-wal", "-shm"):
                    with _suppress_oserror():
                        os.chmod(f"{self.db_path}{suffix}", 0o600)
                self._remove_older_versions()
                return db
            except sqlite3.DatabaseError as e:
                # A cache: if it is damaged or from another version, start over.
                if attempt or _is_full(e):
                    raise
                if "version mismatch" not in str(e):
                    self._note(f"the search index {self.db_path} was damaged: rebuilt it")
                if db is not None:
                    with _suppress_oserror():
                        db.close()
                self._unlink_files()
        raise AssertionError("unreachable")

    def _note(self, notice: str) -> None:
        if notice not in self.notices:
            self.notices.append(notice)

    def _unlink_files(self) -> None:
        for suffix in ("", "-wal", "-shm"):
            with _suppress_oserror():
                os.unlink(f"{self.db_path}{suffix}")

    def _is_damaged(self, error: sqlite3.DatabaseError) -> bool:
        """Whether ``error`` means the index file is damaged: its code says so, or, for an error
        that is not about locking or a full disk, ``PRAGMA quick_check`` finds a problem."""
        code = getattr(error, "sqlite_errorcode", 0) & 0xFF
        if code in _DAMAGED_CODES:
            return True
        if code in _DISK_CODES or code in _LOCK_CODES:
            return False
        try:
            rows = self.db.execute("PRAGMA quick_check").fetchall()
        except sqlite3.DatabaseError:
            return True
        return rows != [("ok",)]

    def _reset(self) -> None:
        """Close every connection and delete the index files (the next use makes a fresh one)."""
        self.close()
        self._cache = None
        self._unlink_files()

    def _remove_older_versions(self) -> None:
        """Delete the caches earlier versions left beside the default one (nothing reads them now)."""
        if self.db_path.name != f"library-v{INDEX_VERSION}.sqlite3":
            return
        for version in range(1, INDEX_VERSION):
            for suffix in ("", "-wal", "-shm"):
                with _suppress_oserror():
                    os.unlink(self.db_path.parent / f"library-v{version}.sqlite3{suffix}")

    def close(self) -> None:
        """Close the connections (call it from the thread that opened the library, when done)."""
        with self._connections_lock:
            for db in self._connections:
                with _suppress_oserror():
                    db.close()
            self._connections.clear()
        self._local = threading.local()

    def __enter__(self) -> Self:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    # -- refreshing ------------------------------------------------------------------------------

    def files(self) -> list[Path]:
        found: list[Path] = []
        for root in self.roots:
            folders = [root]
            if self.nested:
                with _suppress_oserror():
                    folders.extend(sorted(p for p in root.iterdir() if p.is_dir()))
            for folder in folders:
                try:
                    with os.scandir(folder) as it:
                        found.extend(Path(e.path) for e in it if e.name.endswith(".jsonl") and e.is_file())
                except OSError:
                    continue
        return found

    @_repairs_damage
    def refresh(
        self, progress: Callable[[int, int], None] | None = None, *, text: bool = True, jobs: int = 1
    ) -> RefreshStats:
        """Bring the cache up to date with the files under the roots.

        ``text``: also the full-text index, which search needs; the listing needs only the
        summaries (``sessions()``, ``tree()``), a fraction of the work on an unindexed folder:
        a later refresh with ``text`` indexes the text of the files whose summaries are current.
        ``jobs`` > 1: read a large batch of changed files (summaries, and with ``text`` the
        redacted text to index) in that many forked processes; taken only on Linux, in a
        single-threaded program such as the CLI (a fork copies only the calling thread).
        ``progress(done, total)`` is called after each file. Safe to run in a
        worker thread while another thread searches (it sees the files indexed
        so far once this returns), and in several processes at once.
        """
        started = time.perf_counter()
        stats = RefreshStats()
        db = self.db
        prices = _prices_fingerprint()
        repriced = self._meta("prices") != prices  # the summaries' costs were worked out by other prices
        known: dict[str, _Row] = {
            row[1]: row
            for row in db.execute(
                "SELECT id, path, size, mtime_ns, head, tail, text_size, text_lines FROM files"
            )
            if self._under_roots(row[1])
        }
        paths = self.files()
        seen: set[str] = set()
        todo: list[_Todo] = []
        done = 0
        for path in paths:
            key = str(path)
            seen.add(key)
            stats.files += 1
            try:
                st = path.stat()
            except OSError:
                st = None
            row = known.get(key)
            if st is not None:
                stale = repriced or row is None or row[2] != st.st_size or row[3] != st.st_mtime_ns
                if stale or (text and row is not None and row[6] != st.st_size):
                    todo.append(_Todo(path, st, row, stale))
                    continue
            done += 1
            if progress is not None:
                progress(done, len(paths))
        # a fork copies only the calling thread; macOS's system libraries are not fork-safe
        parallel = jobs > 1 and threading.active_count() == 1 and sys.platform.startswith("linux")
        if parallel and len(todo) >= PARALLEL_FILES and sum(t.st.st_size for t in todo) >= PARALLEL_BYTES:
            todo = self._scan_in_processes(todo, stats, text, prices, jobs, progress, done, len(paths))
            done = len(paths) - len(todo)
        for item in todo:
            try:
                self._index_file(item.path, item.st, stats, text=text, prices=prices)
            except (StoreError, OSError):
                stats.unreadable += 1
            done += 1
            if progress is not None:
                progress(done, len(paths))
        for key, row in known.items():
            if key not in seen:
                self._forget(row[0])
                stats.removed += 1
        if repriced:
            db.execute("INSERT OR REPLACE INTO meta VALUES('prices', ?)", (prices,))
        self._cache = None
        stats.seconds = time.perf_counter() - started
        if self._orphans() > max(db.execute("SELECT count(*) FROM chunks").fetchone()[0], 1000):
            rebuilt = self.rebuild(text=text)
            stats.indexed, stats.bytes_read = rebuilt.indexed, stats.bytes_read + rebuilt.bytes_read
            stats.seconds = time.perf_counter() - started
        return stats

    def refresh_file(self, path: Path, *, text: bool = True) -> RefreshStats:
        """Bring one file's row up to date (its summary, and with ``text`` its text), as
        :meth:`refresh` would, without looking at any other file: what a face does for the
        session it wrote, when it closes it, so that the next listing or search reads nothing."""
        started = time.perf_counter()
        stats = RefreshStats(files=1)
        try:
            st = path.stat()
        except OSError:
            return stats
        row = self.db.execute(
            "SELECT size, mtime_ns, text_size FROM files WHERE path=?", (str(path),)
        ).fetchone()
        repriced = self._meta("prices") != _prices_fingerprint()
        if (
            repriced
            or row is None
            or tuple(row[:2]) != (st.st_size, st.st_mtime_ns)
            or (text and row[2] != st.st_size)
        ):
            try:
                self._index_file(path, st, stats, text=text, prices=_prices_fingerprint())
            except (StoreError, OSError):
                stats.unreadable += 1
            self._cache = None
        stats.seconds = time.perf_counter() - started
        return stats

    def text_pending(self) -> int:
        """How many files under the roots the full-text index does not hold whole yet (as the
        summaries know them): what the next ``refresh(text=True)`` reads for a search."""
        return sum(
            1
            for path, size, text_size in self.db.execute("SELECT path, size, text_size FROM files")
            if text_size != size and self._under_roots(path)
        )

    def _under_roots(self, path: str) -> bool:
        parent = Path(path).parent
        return any(parent == root or (self.nested and parent.parent == root) for root in self.roots)

    def _meta(self, key: str) -> str | None:
        row = self.db.execute("SELECT value FROM meta WHERE key=?", (key,)).fetchone()
        return None if row is None else str(row[0])

    def _scan_in_processes(
        self,
        todo: list[_Todo],
        stats: RefreshStats,
        text: bool,
        prices: str,
        jobs: int,
        progress: Callable[[int, int], None] | None,
        done: int,
        total: int,
    ) -> list[_Todo]:
        """Read the files of ``todo`` in ``jobs`` forked processes (they inherit the price table):
        each works out the summaries and, with ``text``, the redacted text to index, and this
        process stores each file as it comes back. Returns the files to do here after all (one
        whose row changed meanwhile, or all of them when the pool cannot start)."""
        import multiprocessing
        from collections import deque
        from concurrent.futures import Future, ProcessPoolExecutor
        from concurrent.futures.process import BrokenProcessPool

        todo = sorted(todo, key=lambda t: -t.st.st_size)  # the big ones first: the workers end together
        left: list[_Todo] = []
        try:
            pool = ProcessPoolExecutor(
                max_workers=jobs,
                mp_context=multiprocessing.get_context("fork"),
                initializer=_ignore_interrupt,
            )
        except (OSError, ValueError):
            return todo
        stats.processes = jobs
        # a few files ahead of the one being stored, not all: what comes back holds their text
        window: deque[tuple[_Todo, _RowState | None, Future[_Scanned | None]]] = deque()
        pending = iter(todo)
        with pool:
            while True:
                while len(window) < 2 * jobs and (item := next(pending, None)) is not None:
                    state = _row_state(item.row)
                    window.append(
                        (item, state, pool.submit(_scan_elsewhere, (str(item.path), state, item.stale, text)))
                    )
                if not window:
                    break
                item, state, future = window.popleft()
                try:
                    scanned = future.result()
                except BrokenProcessPool:  # a worker died (out of memory...): the rest are read here
                    left.append(item)
                    left.extend(queued for queued, _, _ in window)
                    left.extend(pending)
                    break
                if scanned is None:
                    stats.unreadable += 1
                else:
                    size, head, tail, last_line, info, before, chunks, chunks_from = scanned
                    stats.bytes_read += size
                    scan = _Scan(
                        size,
                        head,
                        tail,
                        last_line,
                        _given(info),
                        before=before,
                        row=state,
                        chunks=chunks,
                        chunks_from=chunks_from,
                    )
                    if not self._store(item.path, item.st, scan, stats, text=text, prices=prices):
                        left.append(item)
                        continue
                done += 1
                if progress is not None:
                    progress(done, total)
        return left

    def _index_file(
        self, path: Path, st: os.stat_result, stats: RefreshStats, *, text: bool, prices: str
    ) -> None:
        """Summarize ``path`` again if it changed (or the prices did), and with ``text`` index the
        text of its lines not in the full-text index yet."""
        data = path.read_bytes()
        stats.bytes_read += len(data)
        loaded = parse_session(data, str(path))
        index = SessionIndex(loaded, str(path))
        scan = _Scan(
            len(data),
            _head(data),
            _tail(data, len(data)),
            max((e.line for e in loaded.entries), default=0),
            lambda: _summary_json(path, data, index),
            data=data,
        )
        self._store(path, st, scan, stats, text=text, prices=prices, entries=loaded.entries)

    def _store(
        self,
        path: Path,
        st: os.stat_result,
        scan: _Scan,
        stats: RefreshStats,
        *,
        text: bool,
        prices: str,
        entries: list[Entry] | None = None,
    ) -> bool:
        """Write what ``scan`` read of ``path`` to its row; with ``text``, index the text of the
        lines not in the full-text index yet (``scan.chunks``, or those of ``entries``). False,
        with nothing written, when a scan made in another process does not fit the row any more
        (another process changed it meanwhile): the caller scans the file again here.

        The row's ``text_size`` and ``text_lines`` say how much of the file the text index holds
        (0: none); they stay valid while the file only grows, and are reset when it is replaced."""
        size = scan.size
        db = self.db
        db.execute("BEGIN IMMEDIATE")
        try:
            # read the row again under the write lock: another process may have indexed the file meanwhile
            row = db.execute(
                "SELECT id, path, size, mtime_ns, head, tail, text_size, text_lines FROM files WHERE path=?",
                (str(path),),
            ).fetchone()
            if scan.data is None and _row_state(row) != scan.row:
                db.execute("COMMIT")
                return False
            current = (
                row is not None
                and row[2] == size
                and row[3] == st.st_mtime_ns
                and self._meta("prices") == prices
            )
            if current and (not text or row[6] == size):
                db.execute("COMMIT")
                return True
            grew = (
                row is not None and row[4] == scan.head and size >= row[2] and row[5] == scan.tail_at(row[2])
            )
            info = None if current else scan.summary()
            if info is None and not current:  # a scan made elsewhere, for a summary then current
                db.execute("COMMIT")
                return False
            text_size, text_lines = 0, 0
            file_id: int | None = None
            if grew:
                file_id, text_size, text_lines = row[0], row[6], row[7]  # it grew: its text index holds
                if not current or text_size:
                    stats.extended += 1
                else:  # the summary is current: its text is indexed from the start
                    stats.indexed += 1
            else:
                if row is not None:  # replaced, or rewritten by another program: start over
                    self._forget(row[0], transaction=False)
                stats.indexed += 1
            if file_id is None:
                assert info is not None
                cur = db.execute(
                    "INSERT INTO files(path, size, mtime_ns, head, tail, text_size, text_lines, info)"
                    " VALUES(?,?,?,?,?,0,0,?)",
                    (str(path), size, st.st_mtime_ns, scan.head, scan.tail, info),
                )
                assert cur.lastrowid is not None
                file_id = cur.lastrowid
            if text and text_size != size:
                if scan.chunks is not None:
                    assert scan.chunks_from == text_lines  # the row is the one the scan was made for
                    for first, last, body in scan.chunks:
                        self._add_chunk(db, file_id, first, last, body)
                else:
                    assert entries is not None
                    for first, last, body in _text_chunks([e for e in entries if e.line > text_lines]):
                        self._add_chunk(db, file_id, first, last, body)
                text_size, text_lines = size, max(scan.last_line, text_lines)
            db.execute(
                "UPDATE files SET size=?, mtime_ns=?, tail=?, text_size=?, text_lines=?, info=coalesce(?, info)"
                " WHERE id=?",
                (size, st.st_mtime_ns, scan.tail, text_size, text_lines, info, file_id),
            )
            db.execute("COMMIT")
            return True
        except BaseException:
            db.execute("ROLLBACK")
            raise

    @staticmethod
    def _add_chunk(db: sqlite3.Connection, file_id: int, first: int, last: int, body: str) -> None:
        cur = db.execute(
            "INSERT INTO chunks(file_id, first_line, last_line) VALUES(?,?,?)", (file_id, first, last)
        )
        db.execute("INSERT INTO text(rowid, body) VALUES(?, ?)", (cur.lastrowid, body))

    def _forget(self, file_id: int, *, transaction: bool = True) -> None:
        """Drop a file from the cache. Its FTS rows stay (a contentless table cannot delete them)
        but map to nothing; when they outnumber the live ones, ``refresh`` rebuilds the table."""
        db = self.db
        if transaction:
            db.execute("BEGIN IMMEDIATE")
        n = db.execute("SELECT count(*) FROM chunks WHERE file_id=?", (file_id,)).fetchone()[0]
        db.execute("DELETE FROM chunks WHERE file_id=?", (file_id,))
        db.execute("DELETE FROM files WHERE id=?", (file_id,))
        db.execute("INSERT OR REPLACE INTO meta VALUES('orphans', ?)", (str(self._orphans() + n),))
        if transaction:
            db.execute("COMMIT")

    def _orphans(self) -> int:
        row = self.db.execute("SELECT value FROM meta WHERE key='orphans'").fetchone()
        return int(row[0]) if row else 0

    def rebuild(self, *, text: bool = True) -> RefreshStats:
        """Forget everything and index every file again (``text``: its full text too)."""
        db = self.db
        db.execute("BEGIN IMMEDIATE")
        db.execute("DELETE FROM files")
        db.execute("DELETE FROM chunks")
        db.execute("DROP TABLE text")
        db.execute("DROP TABLE IF EXISTS phrases")
        db.execute("DELETE FROM meta WHERE key='orphans'")
        db.execute("COMMIT")
        db.executescript(_SCHEMA)
        return self.refresh(text=text)


#: Summaries to work out from at least this many bytes of files go to other processes (``jobs``).
PARALLEL_BYTES = 64 << 20
PARALLEL_FILES = 4


#: A ``files`` row: id, path, size, mtime_ns, head, tail, text_size, text_lines.
_Row = tuple[int, str, int, int, bytes, bytes, int, int]
#: What a worker is told of a row (all but id and path), and compares with what it reads.
_RowState = tuple[int, int, bytes, bytes, int, int]


def _row_state(row: _Row | None) -> _RowState | None:
    return None if row is None else (row[2], row[3], row[4], row[5], row[6], row[7])


@dataclass(slots=True)
class _Todo:
    path: Path
    st: os.stat_result
    row: _Row | None  # the file's row when the refresh began
    stale: bool  # its summary must be worked out again (else only its text is missing)


@dataclass(slots=True)
class _Scan:
    """What the index keeps of one file's bytes, read before the write lock is taken."""

    size: int
    head: bytes  # fingerprint of the header line
    tail: bytes  # fingerprint of the last 4 KiB
    last_line: int
    summary: Callable[[], str | None]  # the summary's JSON, worked out when the row needs it
    data: bytes | None = None  # the bytes, when read in this process
    # a scan made in another process: what it knew of the row, the fingerprint at the row's
    # size, and the text to index (of the lines after ``chunks_from``; None: none was asked for)
    before: tuple[int, bytes] | None = None
    row: _RowState | None = None
    chunks: list[tuple[int, int, str]] | None = None
    chunks_from: int = 0

    def tail_at(self, size: int) -> bytes | None:
        """The fingerprint of the 4 KiB before ``size`` (None: not known to this scan)."""
        if self.data is not None:
            return _tail(self.data, size)
        if self.before is not None and self.before[0] == size:
            return self.before[1]
        return None


_Scanned = tuple[
    int, bytes, bytes, int, str | None, tuple[int, bytes] | None, list[tuple[int, int, str]] | None, int
]


def _ignore_interrupt() -> None:
    """In a worker process: Ctrl+C is the parent's to handle (it stops the refresh); the worker
    ends when the pool is shut down."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)


def _scan_elsewhere(job: tuple[str, _RowState | None, bool, bool]) -> _Scanned | None:
    """In a worker process: read one file; work out its summary (``summary``) and, with ``text``,
    the text of the lines its row's text index lacks (None: unreadable)."""
    name, row, summary, text = job
    try:
        data = Path(name).read_bytes()
        loaded = parse_session(data, name)
    except (StoreError, OSError):
        return None
    size, head = len(data), _head(data)
    before = (row[0], _tail(data, row[0])) if row is not None and row[0] <= size else None
    grew = row is not None and before is not None and row[2] == head and row[3] == before[1]
    text_size, from_line = (row[4], row[5]) if grew and row is not None else (0, 0)
    chunks = None
    if text and text_size != size:
        chunks = _text_chunks([e for e in loaded.entries if e.line > from_line])
    info = _summary_json(Path(name), data, SessionIndex(loaded, name)) if summary else None
    last_line = max((e.line for e in loaded.entries), default=0)
    return size, head, _tail(data, size), last_line, info, before, chunks, from_line


def _text_chunks(entries: list[Entry]) -> list[tuple[int, int, str]]:
    """The text of ``entries`` as the index keeps it: (first line, last line, redacted text) per
    chunk of about :data:`CHUNK_CHARS`."""
    chunks: list[tuple[int, int, str]] = []
    parts: list[str] = []
    size = 0
    first = entries[0].line if entries else 0
    last = first
    for entry in entries:
        text = entry_text(entry)
        if text:
            parts.append(text)
            size += len(text)
        last = entry.line
        if size >= CHUNK_CHARS:
            chunks.append((first, last, _shown("\n".join(parts))))
            parts, size, first = [], 0, last + 1
    if parts:
        # pi writes secrets as they are: the index never holds them (one pass over the chunk costs
        # a third of one per entry; a secret a pattern reads across two entries only hides words)
        chunks.append((first, last, _shown("\n".join(parts))))
    return chunks


def _given(info: str | None) -> Callable[[], str | None]:
    return lambda: info


def _summary_json(path: Path, data: bytes, index: SessionIndex) -> str:
    return json.dumps(_redacted(summarize(path, data, index)).to_json(), ensure_ascii=False)


def _head(data: bytes) -> bytes:
    """A fingerprint of the header line: a file replaced by another session has another."""
    first_end = data.find(b"\n")
    return hashlib.sha1(data[: first_end if first_end >= 0 else len(data)]).digest()


def _prices_fingerprint() -> str:
    """A digest of the price table (built-in and the config file's): the summaries' costs are
    worked out again when it changes."""
    return hashlib.sha1(repr(sorted(PRICES.items())).encode()).hexdigest()


def _tail(data: bytes, size: int) -> bytes:
    """A fingerprint of the 4 KiB before ``size``: a file that only grew still has them."""
    return hashlib.sha1(data[max(0, size - 4096) : size]).digest()


class _suppress_oserror:
    def __enter__(self) -> None:
        return None

    def __exit__(self, kind: type[BaseException] | None, *exc: object) -> bool:
        return kind is not None and issubclass(kind, (OSError, sqlite3.Error))
