"""The session library: a listing of every session and full-text search over them.

The session files stay the source of truth. Beside them, in the data dir, a
small SQLite database (``index/library-v2.sqlite3``) caches what the picker
needs per file (name, cwd, first message, last activity, size, entry and
branch counts, labels, ``parentSession``) and an FTS5 index of the text of
every entry (message text, thinking, tool calls and their output, summaries).
It can be deleted at any time and is rebuilt on the next refresh.

Refreshing stats every file and compares size, mtime and the header line with
what the cache saw. Session files only grow, so a file that grew has only its
new lines indexed; a file that was replaced or shrank is indexed again, and a
file that vanished is forgotten. The text goes into one contentless FTS table,
``text``, that keeps no positions (``detail=none``) and has prefix indexes: it
answers "which sessions contain a word starting with ..." from a few thousand
rows, which is what makes a search on every keystroke cheap. A phrase (two
words or more) is asked of it as its words, all present; the sessions that
hold them all are then read back, best first and only as many as the results
need, and kept if an entry's text holds the words adjacent and in order
(:meth:`Library._verify`: a regex on the raw bytes picks the lines worth
decoding). Positions are not stored: they made the index ten times larger.
Where in a session a hit is (the entry and a snippet) is found afterwards by
reading that one file (:meth:`Library.locate`).

Query syntax (:mod:`agent_tui.library.search_query`): words, all of which must
occur in the session (in its name, a label, the first message, the cwd, the
file name or the text of any entry); each word matches the start of a word
there (a one-letter word, a whole word). Words are runs of letters and digits:
``snake_case`` is two words. Case and accents are ignored. ``"two words"`` is
a phrase (whole words, adjacent, in order; an open quote runs to the end and
its last word is a prefix), ``-word`` or ``-"two words"`` leaves sessions out.
"""

from __future__ import annotations

import hashlib
import json
import os
import re
import sqlite3
import threading
import time
from bisect import bisect_right
from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import asdict, dataclass, field
from functools import lru_cache, wraps
from pathlib import Path
from typing import Any, TypeVar

import msgspec

from agent_tui.library.search_query import Term, fold, parse_query, query_words, words_of
from agent_tui.store.errors import StoreError
from agent_tui.store.index import SessionIndex
from agent_tui.store.paths import data_home, make_private_dirs, session_dir_for, sessions_root
from agent_tui.store.reader import parse_session
from agent_tui.store.record import Entry, JSONObject, LineSource
from agent_tui.store.redact import redact_text, redaction_enabled

INDEX_VERSION = 3  # 2: the ``phrases`` table (positions); 3: no positions, phrases checked on the files
#: One FTS row holds at most this much text (a long session is a few rows).
CHUNK_CHARS = 4_000_000
#: Weights of where a query word matched, for ranking.
WEIGHTS = {"name": 8.0, "label": 6.0, "first message": 4.0, "cwd": 2.0, "file": 2.0, "text": 1.0}
#: Verifications remembered (file, term -> found) until the next refresh, for typing.
VERIFIED_MAX = 100_000


# -- what the picker shows ------------------------------------------------------------------


@dataclass(slots=True)
class SessionSummary:
    path: str
    id: str
    cwd: str
    name: str | None
    first_message: str
    created: str
    modified: str  # the last entry's timestamp: last activity
    size: int
    entries: int
    branches: int  # leaves of the tree
    labels: list[tuple[str, str]] = field(default_factory=list)  # (entry id, label)
    parent_session: str | None = None
    warnings: int = 0

    @property
    def title(self) -> str:
        return self.name or self.first_message or "(no messages)"

    def to_json(self) -> dict[str, Any]:
        data = asdict(self)
        data["labels"] = [list(pair) for pair in self.labels]
        return data

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> SessionSummary:
        data = dict(data)
        data["labels"] = [(str(a), str(b)) for a, b in data.get("labels") or []]
        return cls(**data)


@dataclass(slots=True)
class SessionNode:
    """A session and the forks made from it (``parentSession``), most recent first."""

    summary: SessionSummary
    forks: list[SessionNode] = field(default_factory=list)

    def walk(self, depth: int = 0) -> Iterator[tuple[int, SessionSummary]]:
        stack = [(depth, self)]
        while stack:
            level, node = stack.pop()
            yield level, node.summary
            stack.extend((level + 1, f) for f in reversed(node.forks))


@dataclass(slots=True)
class SearchHit:
    session: SessionSummary
    score: float
    matched: dict[
        str, str
    ]  # query word or "phrase" -> where it matched best (name, label, first message, cwd, file, text)
    entry_id: str | None = None  # the entry the hit points at (filled by locate, or a label's entry)
    snippet: str | None = None

    def to_json(self) -> dict[str, Any]:
        return {
            "path": self.session.path,
            "title": self.session.title,
            "score": self.score,
            "matched": self.matched,
            "entryId": self.entry_id,
            "snippet": self.snippet,
            "session": self.session.to_json(),
        }


@dataclass(slots=True)
class RefreshStats:
    files: int = 0
    indexed: int = 0  # files indexed from the start
    extended: int = 0  # files that grew: only new lines indexed
    removed: int = 0
    unreadable: int = 0
    bytes_read: int = 0
    seconds: float = 0.0


def summarize(path: Path, data: bytes, index: SessionIndex) -> SessionSummary:
    first = ""
    for entry in index.entries:
        if entry.type == "message" and entry.role == "user":
            first = " ".join(_shown(_message_text(entry)).split())[:200]  # redacted before the cut
            if first:
                break
    modified = str(index.header.get("timestamp") or "")
    if index.entries:
        stamp = index.entries[-1].data.get("timestamp")
        if isinstance(stamp, str):
            modified = stamp
    children = index.children
    branches = sum(1 for e in index.entries if index.by_id.get(e.id) is e and not children.get(e.id))
    parent = index.header.get("parentSession")
    return SessionSummary(
        path=str(path),
        id=str(index.header.get("id")),
        cwd=str(index.header.get("cwd") or ""),
        name=index.name,
        first_message=first,
        created=str(index.header.get("timestamp") or ""),
        modified=modified,
        size=len(data),
        entries=len(index.entries),
        branches=branches,
        labels=sorted(
            index.labels.items(), key=lambda kv: index.by_id[kv[0]].line if kv[0] in index.by_id else 0
        ),
        parent_session=parent if isinstance(parent, str) else None,
        warnings=len(index.warnings),
    )


def group_forks(summaries: Iterable[SessionSummary]) -> list[SessionNode]:
    """Sessions as trees: each fork (``parentSession``) under the session it came from."""
    nodes = {_norm(s.path): SessionNode(s) for s in summaries}
    roots: list[SessionNode] = []
    for key, node in nodes.items():
        parent_path = node.summary.parent_session
        parent = nodes.get(_norm(parent_path)) if parent_path else None
        # guard against a parentSession cycle: only attach when the parent is not our own descendant
        if parent is not None and parent is not node and not _descends(parent, node, nodes):
            parent.forks.append(node)
        else:
            roots.append(node)
        del key
    for node in nodes.values():
        node.forks.sort(key=lambda n: n.summary.modified, reverse=True)
    roots.sort(key=lambda n: n.summary.modified, reverse=True)
    return roots


def _descends(candidate: SessionNode, ancestor: SessionNode, nodes: dict[str, SessionNode]) -> bool:
    seen: set[str] = set()
    current: SessionNode | None = candidate
    while current is not None:
        key = _norm(current.summary.path)
        if key in seen:
            return True
        seen.add(key)
        if current is ancestor:
            return True
        parent = current.summary.parent_session
        current = nodes.get(_norm(parent)) if parent else None
    return False


def _norm(path: str) -> str:
    return os.path.normpath(os.path.abspath(path))


# -- the text of an entry ----------------------------------------------------------------------


class _Block(msgspec.Struct):
    type: Any = None
    text: Any = None
    thinking: Any = None
    name: Any = None
    arguments: msgspec.Raw = msgspec.Raw(b"")


class _Message(msgspec.Struct):
    role: Any = None
    content: str | list[_Block] | None = None
    command: Any = None
    output: Any = None
    toolName: Any = None
    customType: Any = None


_decode_message = msgspec.json.Decoder(_Message).decode
_decode_any = msgspec.json.Decoder().decode


def entry_text(entry: Entry) -> str:
    """Everything searchable in an entry (system prompts and settings are left out)."""
    etype = entry.type
    if etype == "message":
        raw = entry.message_raw
        if raw is not None:
            try:
                return _struct_text(_decode_message(raw))
            except msgspec.ValidationError:
                pass
        return _dict_text(entry.message or {})
    data = entry.data
    if etype in ("compaction", "branch_summary"):
        return str(data.get("summary") or "")
    if etype == "custom_message":
        return _content_text(data.get("content"))
    if etype == "context_edit" and isinstance(data.get("replacement"), dict):
        return _content_text(data["replacement"].get("content"))
    return ""


def _struct_text(message: _Message) -> str:
    if message.role == "system":
        return ""
    parts: list[str] = []
    if isinstance(message.toolName, str):
        parts.append(message.toolName)
    content = message.content
    if isinstance(content, str):
        parts.append(content)
    elif content is not None:
        for block in content:
            if isinstance(block.text, str):
                parts.append(block.text)
            elif isinstance(block.thinking, str):
                parts.append(block.thinking)
            elif block.type == "toolCall":
                if isinstance(block.name, str):
                    parts.append(block.name)
                if len(block.arguments):
                    parts.extend(_strings(_decode_any(block.arguments)))
    for value in (message.command, message.output):
        if isinstance(value, str):
            parts.append(value)
    return "\n".join(parts)


def _dict_text(message: JSONObject) -> str:
    if message.get("role") == "system":
        return ""
    parts = [str(message[k]) for k in ("toolName", "command", "output") if isinstance(message.get(k), str)]
    parts.append(_content_text(message.get("content")))
    return "\n".join(parts)


def _content_text(content: Any) -> str:
    if isinstance(content, str):
        return content
    parts: list[str] = []
    for block in content if isinstance(content, list) else []:
        if not isinstance(block, dict):
            continue
        for key in ("text", "thinking", "name"):
            if isinstance(block.get(key), str):
                parts.append(block[key])
        if block.get("type") == "toolCall":
            parts.extend(_strings(block.get("arguments")))
    return "\n".join(parts)


def _strings(value: Any) -> list[str]:
    out: list[str] = []
    stack = [value]
    while stack:
        item = stack.pop()
        if isinstance(item, str):
            out.append(item)
        elif isinstance(item, dict):
            stack.extend(item.values())
        elif isinstance(item, list):
            stack.extend(item)
    return out


def _message_text(entry: Entry) -> str:
    content = (entry.message or {}).get("content")
    if isinstance(content, str):
        return content
    return " ".join(
        str(b.get("text") or "") for b in content or [] if isinstance(b, dict) and b.get("type") == "text"
    )


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
    indexed_lines INTEGER NOT NULL,
    info TEXT NOT NULL
);
CREATE TABLE IF NOT EXISTS chunks(
    id INTEGER PRIMARY KEY,
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
    def wrapper(self: Library, *args: Any, **kwargs: Any) -> _R:
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


class Library:
    """The sessions under ``roots`` (folders of session files), with a search index.

    ``nested``: also look one level down (the data dir keeps a folder per cwd).
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
    ) -> Library:
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

    def __enter__(self) -> Library:
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
    def refresh(self, progress: Callable[[int, int], None] | None = None) -> RefreshStats:
        """Bring the cache up to date with the files under the roots.

        ``progress(done, total)`` is called after each file. Safe to run in a
        worker thread while another thread searches (it sees the files indexed
        so far once this returns), and in several processes at once.
        """
        started = time.perf_counter()
        stats = RefreshStats()
        db = self.db
        known = {
            row[1]: row
            for row in db.execute("SELECT id, path, size, mtime_ns FROM files")
            if self._under_roots(row[1])
        }
        paths = self.files()
        seen: set[str] = set()
        for done, path in enumerate(paths, 1):
            key = str(path)
            seen.add(key)
            stats.files += 1
            try:
                st = path.stat()
            except OSError:
                continue
            row = known.get(key)
            if row is None or row[2] != st.st_size or row[3] != st.st_mtime_ns:
                try:
                    self._index_file(path, st, stats)
                except (StoreError, OSError):
                    stats.unreadable += 1
            if progress is not None:
                progress(done, len(paths))
        for key, row in known.items():
            if key not in seen:
                self._forget(row[0])
                stats.removed += 1
        self._cache = None
        stats.seconds = time.perf_counter() - started
        if self._orphans() > max(db.execute("SELECT count(*) FROM chunks").fetchone()[0], 1000):
            rebuilt = self.rebuild()
            stats.indexed, stats.bytes_read = rebuilt.indexed, stats.bytes_read + rebuilt.bytes_read
            stats.seconds = time.perf_counter() - started
        return stats

    def _under_roots(self, path: str) -> bool:
        parent = Path(path).parent
        return any(parent == root or (self.nested and parent.parent == root) for root in self.roots)

    def _index_file(self, path: Path, st: os.stat_result, stats: RefreshStats) -> None:
        data = path.read_bytes()
        stats.bytes_read += len(data)
        loaded = parse_session(data, str(path))
        index = SessionIndex(loaded, str(path))
        first_end = data.find(b"\n")
        head = hashlib.sha1(data[: first_end if first_end >= 0 else len(data)]).digest()
        summary = _redacted(summarize(path, data, index))
        info = json.dumps(summary.to_json(), ensure_ascii=False)
        last_line = max((e.line for e in loaded.entries), default=0)
        db = self.db
        db.execute("BEGIN IMMEDIATE")
        try:
            # read the row again under the write lock: another process may have indexed the file meanwhile
            row = db.execute(
                "SELECT id, size, mtime_ns, head, tail, indexed_lines FROM files WHERE path=?", (str(path),)
            ).fetchone()
            if row is not None and row[1] == len(data) and row[2] == st.st_mtime_ns:
                db.execute("COMMIT")
                return
            from_line = 0
            file_id: int | None = None
            if row is not None and row[3] == head and len(data) >= row[1] and row[4] == _tail(data, row[1]):
                file_id, from_line = row[0], row[5]  # it grew: index only the new lines
                stats.extended += 1
            else:
                if row is not None:  # replaced, or rewritten by another program: start over
                    self._forget(row[0], transaction=False)
                stats.indexed += 1
            if file_id is None:
                cur = db.execute(
                    "INSERT INTO files(path, size, mtime_ns, head, tail, indexed_lines, info) VALUES(?,?,?,?,?,?,?)",
                    (str(path), len(data), st.st_mtime_ns, head, _tail(data, len(data)), last_line, info),
                )
                assert cur.lastrowid is not None
                file_id = cur.lastrowid
            else:
                db.execute(
                    "UPDATE files SET size=?, mtime_ns=?, tail=?, indexed_lines=?, info=? WHERE id=?",
                    (
                        len(data),
                        st.st_mtime_ns,
                        _tail(data, len(data)),
                        max(last_line, from_line),
                        info,
                        file_id,
                    ),
                )
            self._index_text(file_id, [e for e in loaded.entries if e.line > from_line])
            db.execute("COMMIT")
        except BaseException:
            db.execute("ROLLBACK")
            raise

    def _index_text(self, file_id: int, entries: list[Entry]) -> None:
        db = self.db
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
                self._add_chunk(db, file_id, first, last, parts)
                parts, size, first = [], 0, last + 1
        if parts:
            self._add_chunk(db, file_id, first, last, parts)

    @staticmethod
    def _add_chunk(db: sqlite3.Connection, file_id: int, first: int, last: int, parts: list[str]) -> None:
        cur = db.execute(
            "INSERT INTO chunks(file_id, first_line, last_line) VALUES(?,?,?)", (file_id, first, last)
        )
        # pi writes secrets as they are: the index never holds them (one pass over the chunk costs
        # a third of one per entry; a secret a pattern reads across two entries only hides words)
        db.execute("INSERT INTO text(rowid, body) VALUES(?, ?)", (cur.lastrowid, _shown("\n".join(parts))))

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

    def rebuild(self) -> RefreshStats:
        """Forget everything and index every file again."""
        db = self.db
        db.execute("BEGIN IMMEDIATE")
        db.execute("DELETE FROM files")
        db.execute("DELETE FROM chunks")
        db.execute("DROP TABLE text")
        db.execute("DROP TABLE IF EXISTS phrases")
        db.execute("DELETE FROM meta WHERE key='orphans'")
        db.execute("COMMIT")
        db.executescript(_SCHEMA)
        return self.refresh()

    # -- reading ---------------------------------------------------------------------------------

    @_repairs_damage
    def _load(self) -> _Cache:
        cache = self._cache
        if cache is None:
            summaries: dict[int, SessionSummary] = {}
            for file_id, path, info in self.db.execute("SELECT id, path, info FROM files"):
                if self._under_roots(path):
                    summaries[file_id] = SessionSummary.from_json(json.loads(info))
            chunk_files = {
                chunk: file_id
                for chunk, file_id in self.db.execute("SELECT id, file_id FROM chunks")
                if file_id in summaries
            }
            folded = {file_id: _folded_fields(s) for file_id, s in summaries.items()}
            cache = self._cache = _Cache(summaries, chunk_files, folded, {}, {})
        return cache

    def sessions(self) -> list[SessionSummary]:
        """Every session under the roots (as of the last refresh), most recent activity first."""
        return sorted(self._load().summaries.values(), key=lambda s: s.modified, reverse=True)

    def tree(self) -> list[SessionNode]:
        """The sessions with their forks grouped under them."""
        return group_forks(self._load().summaries.values())

    @_repairs_damage
    def search(self, query: str, limit: int = 50, *, locate: int = 0) -> list[SearchHit]:
        """Sessions holding every word and phrase of ``query`` and none it excludes, best first
        (then most recent). Any text is a query (see :mod:`agent_tui.library.search_query`): this
        returns hits or an empty list, it does not raise on what the text holds.

        ``locate``: find the entry and a snippet for the first that many hits
        (reads those files; the picker can call :meth:`locate` for rows it shows).
        """
        cache = self._load()
        summaries = cache.summaries
        parsed = parse_query(query)
        if not parsed:
            hits = [
                SearchHit(s, 0.0, {})
                for s in sorted(summaries.values(), key=lambda s: s.modified, reverse=True)
            ]
            return hits[:limit]
        chunk_files = cache.chunk_files
        wanted = parsed.wanted
        matched: dict[int, dict[str, str]] | None = None  # None: every session so far
        # terms the index only narrows down (phrases): file -> (term, wanted), checked on the file
        unsure: dict[int, list[tuple[_Check, bool]]] = {}
        for term in wanted:
            in_text, check = self._text_matches(term, chunk_files)
            probe, key = term.probe, term.key
            holding: dict[int, dict[str, str]] = {}
            for file_id in summaries if matched is None else matched:
                where = next((f for f, value in cache.folded[file_id] if probe in value), None)
                if where is None and file_id in in_text:
                    where = "text"
                    if check is not None:
                        unsure.setdefault(file_id, []).append((check, True))
                if where is not None:
                    fields = holding[file_id] = {} if matched is None else matched[file_id]
                    fields[key] = where
            if not holding:
                return []
            matched = holding
        if matched is None:  # only exclusions
            matched = {file_id: {} for file_id in summaries}
        for term in parsed.excluded:
            in_text, check = self._text_matches(term, chunk_files)
            probe = term.probe
            kept: dict[int, dict[str, str]] = {}
            for file_id, fields in matched.items():
                if any(probe in value for _, value in cache.folded[file_id]):
                    continue
                if file_id in in_text:
                    if check is None:
                        continue
                    unsure.setdefault(file_id, []).append((check, False))
                kept[file_id] = fields
            matched = kept
        ranked: list[tuple[SearchHit, int]] = []
        for file_id, fields in matched.items():
            summary = summaries[file_id]
            score = sum(WEIGHTS[w] for w in fields.values())
            hit = SearchHit(summary, score, fields)
            if "label" in fields.values():
                label_term = next(t for t in wanted if fields.get(t.key) == "label")
                for entry_id, label in summary.labels:
                    if label_term.probe in " " + " ".join(words_of(label)) + " ":
                        hit.entry_id, hit.snippet = entry_id, label
                        break
            ranked.append((hit, file_id))
        ranked.sort(key=lambda h: (h[0].score, h[0].session.modified), reverse=True)
        found: list[SearchHit] = []
        for hit, file_id in ranked:  # best first: read only the files the results need
            if len(found) >= limit:
                break
            checks = unsure.get(file_id)
            if checks and not self._verify(cache, file_id, checks):
                continue
            found.append(hit)
        for hit in found[:locate]:
            self.locate(hit, query)
        return found

    def _text_matches(self, term: Term, chunk_files: dict[int, int]) -> tuple[set[int], _Check | None]:
        """The files whose text may hold ``term``, and what to check on them (None: they do).

        ``text`` keeps no positions: for a phrase it gives the files holding all its words,
        to be read back (:meth:`_verify`); for a word, the answer.
        """
        words, check = term.words, _Check(term.words, term.prefix) if len(term.words) > 1 else None
        for _ in range(2):
            pattern = " ".join(f'"{w}"' for w in words) + ("*" if term.prefix else "")  # no quote in words
            try:
                rows = self.db.execute("SELECT rowid FROM text WHERE text MATCH ?", (pattern,))
                return {f for (rowid,) in rows if (f := chunk_files.get(rowid)) is not None}, check
            except sqlite3.OperationalError:
                # a word the tokenizer splits in two (a character unicode61 does not know) is a
                # phrase to FTS5: ask for its tokens, and check them as a phrase on the files
                words, gap = _tokenize(term.words)
                check = _Check(words, term.prefix, gap)
                if not words:
                    break
        return set(), None

    def _verify(self, cache: _Cache, file_id: int, checks: list[tuple[_Check, bool]]) -> bool:
        """Read the file: does an entry's text hold each wanted phrase, and none of the others?"""
        verified, missing = cache.verified, cache.missing.setdefault(file_id, [])
        todo = []
        for check, _ in checks:
            if (file_id, check) not in verified:
                if any(check.implies(shorter) for shorter in missing):  # typing on: still not there
                    verified[file_id, check] = False
                else:
                    todo.append(check)
        if todo:
            if len(verified) > VERIFIED_MAX:
                verified.clear()
                cache.missing.clear()
                missing = cache.missing[file_id] = []
            for check, holds in zip(todo, _file_holds(cache.summaries[file_id].path, todo), strict=True):
                verified[file_id, check] = holds
                if not holds:
                    missing.append(check)
        return all(verified[file_id, check] == want for check, want in checks)

    def locate(self, hit: SearchHit, query: str) -> SearchHit:
        """Find the entry of ``hit``'s session that best matches ``query`` (latest first) and a snippet."""
        parsed = parse_query(query)
        terms = parsed.wanted
        if not terms or (hit.entry_id is not None and hit.snippet):
            return hit
        try:
            data = Path(hit.session.path).read_bytes()
            loaded = parse_session(data, hit.session.path)
        except (OSError, StoreError):
            return hit
        patterns = [t.pattern() for t in terms]
        raw = [re.compile(re.escape(w.encode()), re.IGNORECASE) for w in parsed.words() if w.isascii()]
        best: tuple[int, Entry, str] | None = None
        for entry in reversed(loaded.entries):
            if raw and entry.message_raw is not None:
                message = bytes(entry.message_raw)
                if message.isascii() and not any(p.search(message) for p in raw):
                    continue  # cheap test on the raw JSON first
            text = entry_text(entry)
            if not text:
                continue
            folded = fold(text)
            found = sum(1 for p in patterns if p.search(folded))
            if found and (best is None or found > best[0]):
                best = (found, entry, text)
                if found == len(patterns):
                    break
        if best is not None:
            hit.entry_id = best[1].id
            hit.snippet = _snippet(_shown(_around(best[2], patterns)), patterns)
        return hit


@dataclass(frozen=True, slots=True)
class _Cache:
    summaries: dict[int, SessionSummary]
    chunk_files: dict[int, int]  # FTS row -> file
    folded: dict[int, list[tuple[str, str]]]  # file -> its fields, folded, for matching query words
    verified: dict[tuple[int, _Check], bool]  # (file, phrase) -> the file holds it
    missing: dict[int, list[_Check]]  # file -> the phrases it does not hold


@dataclass(frozen=True, slots=True)
class _Check:
    """A phrase to look for in a file's entries: folded words, adjacent, in order."""

    words: tuple[str, ...]
    prefix: bool  # the last word may be the start of a longer word
    gap: str = ""  # letters the FTS tokenizer takes for separators (a query word it split)

    def implies(self, other: _Check) -> bool:
        """Does text holding this phrase hold ``other`` (``other`` typed on: a longer last word, more words)?"""
        n = len(other.words)
        if self.gap != other.gap or len(self.words) < n or self.words[: n - 1] != other.words[:-1]:
            return False
        word, last = self.words[n - 1], other.words[-1]
        if other.prefix:
            return word.startswith(last)
        return word == last and (len(self.words) > n or not self.prefix)

    def pattern(self) -> re.Pattern[str]:
        """As :meth:`Term.pattern`, the ``gap`` letters separating words too."""
        extra = re.escape(self.gap)
        body = rf"[\W_{extra}]+".join(re.escape(w) for w in self.words)
        return re.compile(rf"(?<![^\W_{extra}])" + body + ("" if self.prefix else rf"(?![^\W_{extra}])"))


def _tokenize(words: tuple[str, ...]) -> tuple[tuple[str, ...], str]:
    """The FTS tokenizer's tokens for ``words``, and the letters of them it drops as separators."""
    db = sqlite3.connect(":memory:")
    try:
        db.execute("CREATE VIRTUAL TABLE t USING fts5(b, tokenize='unicode61 remove_diacritics 2')")
        db.execute("CREATE VIRTUAL TABLE v USING fts5vocab(t, 'instance')")
        letters = sorted(set("".join(words)))
        db.executemany("INSERT INTO t(rowid, b) VALUES(?, ?)", enumerate([" ".join(words), *letters]))
        tokens = tuple(t for (t,) in db.execute("SELECT term FROM v WHERE doc=0 ORDER BY offset"))
        kept = {doc for (doc,) in db.execute("SELECT DISTINCT doc FROM v WHERE doc>0")}
        return tokens, "".join(c for i, c in enumerate(letters, 1) if i not in kept)
    finally:
        db.close()


#: In a line of JSON with no ``\\u`` escape and no byte past ASCII, what may stand between two
#: words of the decoded text: anything but a letter, a digit or a newline, or an escape.
_RAW_GAP = rb"(?:[^a-z0-9\n]|\\[nrtbf])+"
_UNSURE_LINE = re.compile(rb"^.*(?:[\x80-\xff]|\\u).*$", re.MULTILINE)


@lru_cache(maxsize=256)
def _raw_pattern(words: tuple[str, ...]) -> re.Pattern[bytes]:
    return re.compile(_RAW_GAP.join(re.escape(w.encode()) for w in words))


def _file_holds(path: str, terms: list[_Check]) -> list[bool]:
    """For each term: does an entry of the session file at ``path`` hold it (in :func:`entry_text`)?

    Decoding every entry is slow, so the lines worth decoding are found first on the raw
    bytes: a line of plain ASCII without ``\\u`` escapes decodes to the same letters and digits,
    lower-cased by ``bytes.lower``, so the term's words there are its words in the raw line,
    with only non-letters and escapes between them. Other lines are always decoded.
    """
    try:
        data = Path(path).read_bytes()
    except OSError:
        return [False] * len(terms)
    lower = data.lower()
    starts = LineSource(data).starts
    unsure: set[int] = set()
    if not data.isascii() or b"\\u" in data:
        unsure = {bisect_right(starts, m.start()) for m in _UNSURE_LINE.finditer(data)}
    lines = [
        unsure | {bisect_right(starts, m.start()) for m in _raw_pattern(term.words).finditer(lower)}
        for term in terms
    ]
    if not any(lines):
        return [False] * len(terms)
    try:
        entries = parse_session(data, path).entries
    except StoreError:
        return [False] * len(terms)
    out = []
    for term, numbers in zip(terms, lines, strict=True):
        pattern = term.pattern()
        out.append(any(pattern.search(fold(entry_text(e))) for e in entries if e.line in numbers))
    return out


def _folded_fields(summary: SessionSummary) -> list[tuple[str, str]]:
    """(field, its words folded, each after a space) in the order a query word is looked for.

    ``" " + word`` in it is then "a word of the field starts with ``word``", as in the text index.
    """
    fields = [("name", summary.name or "")]
    fields.extend(("label", label) for _, label in summary.labels)
    fields.append(("first message", summary.first_message))
    fields.append(("cwd", summary.cwd))
    fields.append(("file", Path(summary.path).name))
    out = []
    for name, value in fields:
        words = words_of(value)
        if words:
            out.append((name, " " + " ".join(words) + " "))
    return out


def _shown(text: str) -> str:
    """``text`` as the index keeps it and search prints it: without secrets (a pi file holds them as
    typed), unless ``AGENT_TUI_REDACT=off``."""
    return redact_text(text)[0] if text and redaction_enabled() else text


def _around(text: str, patterns: list[re.Pattern[str]], margin: int = 2048) -> str:
    """The whole lines of ``text`` within ``margin`` characters of the first match of ``patterns``:
    what a snippet is cut from, redacted without redacting a 50 KB tool output for it (whole
    lines, and a margin far wider than the snippet, so no secret around it is cut in two)."""
    if len(text) <= 4 * margin:
        return text
    folded = fold(text)
    if len(folded) != len(text):
        folded = text.lower()
    position = min((m.start() for p in patterns if (m := p.search(folded))), default=0)
    start = text.rfind("\n", 0, max(0, position - margin)) + 1
    end = text.find("\n", position + margin)
    return text[start : end if end >= 0 else len(text)]


def _redacted(summary: SessionSummary) -> SessionSummary:
    """The summary the index keeps: secrets out of its name and labels (the first message is
    redacted by :func:`summarize`, before it is cut)."""
    summary.name = _shown(summary.name) if summary.name else summary.name
    summary.labels = [(entry_id, _shown(label)) for entry_id, label in summary.labels]
    return summary


def _tail(data: bytes, size: int) -> bytes:
    """A fingerprint of the 4 KiB before ``size``: a file that only grew still has them."""
    return hashlib.sha1(data[max(0, size - 4096) : size]).digest()


def _snippet(text: str, patterns: list[re.Pattern[str]], width: int = 160) -> str:
    """About ``width`` characters of ``text`` around the first match of ``patterns`` (on folded text)."""
    flat = " ".join(text.split())
    folded = fold(flat)
    if len(folded) != len(flat):  # folding changed the length (a ligature, ß): find the match in lower case
        folded = flat.lower()
    position = min((m.start() for p in patterns if (m := p.search(folded))), default=0)
    start = max(0, position - width // 3)
    piece = flat[start : start + width]
    return ("…" if start else "") + piece + ("…" if start + width < len(flat) else "")


class _suppress_oserror:
    def __enter__(self) -> None:
        return None

    def __exit__(self, kind: type[BaseException] | None, *exc: object) -> bool:
        return kind is not None and issubclass(kind, (OSError, sqlite3.Error))


__all__ = [
    "Library",
    "RefreshStats",
    "SearchHit",
    "SessionNode",
    "SessionSummary",
    "default_db_path",
    "entry_text",
    "fold",
    "group_forks",
    "query_words",
    "summarize",
]
