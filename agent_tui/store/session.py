"""A session: one file's index plus, unless read-only, its writer.

Every user action that changes what the model sees is one appended entry;
the methods here build it, validate it and append it. Nothing rewrites the
file. See docs/FORMAT.md for the entry types.
"""

from __future__ import annotations

import os
import uuid
from collections.abc import Iterable
from pathlib import Path

from agent_tui.store.errors import ReadOnlyError, StoreError
from agent_tui.store.index import SessionIndex
from agent_tui.store.kinds import BRANCH_MARKER
from agent_tui.store.paths import session_file_name
from agent_tui.store.reader import CURRENT_VERSION, LoadedFile
from agent_tui.store.record import Entry, JSONObject
from agent_tui.store.redact import redact_value, redaction_enabled
from agent_tui.store.sidecar import Sidecar, load_indexed
from agent_tui.store.sidecar import create as create_sidecar
from agent_tui.store.sidecar import enabled as sidecar_enabled
from agent_tui.store.writer import (
    FsyncPolicy,
    SessionWriter,
    discard_partial,
    encode_entry,
    encode_line,
    partial_name,
    publish_new_file,
)

#: ``custom`` entries with this customType move the leaf (see ``branch``).

EDITABLE_ROLES = frozenset({"user", "assistant", "toolResult"})

#: The id of an entry built by :meth:`Session.draft` (never written; not an id ``new_id`` makes).
DRAFT_ID = "(draft)"


class Session:
    def __init__(
        self,
        path: Path,
        loaded: LoadedFile,
        writer: SessionWriter | None,
        read_only_reason: str | None,
        sidecar: Sidecar | None = None,
    ) -> None:
        self.path = path
        #: Where each append is recorded in the offset index (see ``store.sidecar``); None: not kept.
        self.sidecar = sidecar if writer is not None else None
        self.index = SessionIndex(loaded, str(path))
        self.writer = writer
        self.read_only_reason = read_only_reason
        self._next_line = loaded.lines + 1
        #: Only the active branch's end is read (:meth:`open_tail`): what the rest of the file
        #: decides (the tree, pins and settings above, totals, the name) is not known yet.
        self.partial = False
        #: Secrets in what we append are replaced before writing (AGENT_TUI_REDACT=off disables).
        self.redact = redaction_enabled()

    # -- opening ------------------------------------------------------------------

    @classmethod
    def open(cls, path: str | Path, *, write: bool = True, fsync: FsyncPolicy | None = None) -> Session:
        """Open a session file. With ``write``, take the writer lock first, then load.

        Raises SessionLockedError when another process writes it; pass
        ``write=False`` for a read-only view instead.
        """
        path = Path(path)
        writer = SessionWriter.open(path, fsync) if write else None
        if writer is not None and writer.size == 0:
            # Created, then the process died before the header was written: starting the file
            # now is an append to an empty file, not a rewrite.
            try:
                header_json = _new_header(os.getcwd())
                writer.append(header_json)
            except BaseException:
                writer.close()
                raise
            return cls(
                path, LoadedFile(header=header_json, entries=[], size=writer.size, lines=1), writer, None
            )
        try:
            loaded, side = load_indexed(path)
            if writer is not None:
                writer.expect_size(loaded.size)
        except BaseException:
            if writer is not None:
                writer.close()
            raise
        reason = None
        if loaded.version < 2:
            reason = (
                f"{path}: pi v1 session (no entry ids); agent-tui never rewrites files, "
                "so run 'agent-tui fork FILE' to continue it as a v3 session"
            )
            if writer is not None:
                writer.close()
                writer = None
        elif loaded.version > CURRENT_VERSION:
            reason = (
                f"{path}: format version {loaded.version} is newer than this agent-tui knows "
                f"({CURRENT_VERSION}); opened read-only so nothing it does not understand is added to it"
            )
            if writer is not None:
                writer.close()
                writer = None
        elif writer is None:
            reason = f"{path}: opened read-only"
        return cls(path, loaded, writer, reason, side)

    @classmethod
    def open_tail(cls, path: str | Path) -> Session | None:
        """A read-only view of the active branch from the latest compaction's first kept entry to
        the leaf, read from the file's end (``store.tail``) while the whole file is indexed; None
        when the file is not one the tail reader reads, or its branch has no compaction (then the
        tail is the whole branch: open it as usual). :attr:`partial` is True."""
        from agent_tui.store.tail import TailReader, leaf_path

        path = Path(path)
        reader = TailReader.open(path)
        if reader is None:
            return None
        try:
            with reader:
                tail = leaf_path(reader)
        except (StoreError, OSError):
            return None
        if tail.complete or not any(e.type == "compaction" for e in tail.entries):
            return None
        loaded = LoadedFile(header=tail.header, entries=tail.entries, size=reader.size, lines=0)
        reason = f"{path.name}: indexing the whole file; read-only until it is done"
        session = cls(path, loaded, None, reason)
        session.partial = True
        return session

    @classmethod
    def create(
        cls,
        session_dir: str | Path,
        cwd: str | Path,
        *,
        parent_session: str | None = None,
        fsync: FsyncPolicy | None = None,
        path: str | Path | None = None,
    ) -> Session:
        """Create a new session file (exclusively) in ``session_dir``, or at ``path``."""
        header_json = _new_header(cwd, parent_session)
        target = (
            Path(path)
            if path is not None
            else Path(session_dir) / session_file_name(header_json["id"], header_json["timestamp"])
        )
        writer = SessionWriter.create(target, header_json, fsync)
        loaded = LoadedFile(header=header_json, entries=[], size=writer.size, lines=1)
        side = create_sidecar(target, encode_line(header_json)) if sidecar_enabled() else None
        return cls(target, loaded, writer, None, side)

    @classmethod
    def in_memory(cls, cwd: str | Path) -> Session:
        """A new session that is never written (``--no-session``): appends are validated and
        indexed as for a file, and kept in memory only; nothing is created on disk."""
        from agent_tui.store.memory import NO_SESSION_PATH, MemoryWriter

        header_json = _new_header(cwd)
        writer = MemoryWriter(header_json)
        loaded = LoadedFile(header=header_json, entries=[], size=writer.size, lines=1)
        return cls(NO_SESSION_PATH, loaded, writer, None)

    @property
    def ephemeral(self) -> bool:
        """Whether this session lives in memory only (nothing of it is on disk)."""
        from agent_tui.store.memory import is_ephemeral

        return is_ephemeral(self.writer)

    def close(self) -> None:
        if self.writer is not None:
            self.writer.close()
            self.writer = None

    def __enter__(self) -> Session:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    # -- reading ------------------------------------------------------------------

    @property
    def header(self) -> JSONObject:
        return self.index.header

    @property
    def id(self) -> str:
        return str(self.header.get("id"))

    @property
    def cwd(self) -> str:
        return str(self.header.get("cwd") or "")

    @property
    def leaf_id(self) -> str | None:
        return self.index.leaf_id

    @property
    def read_only(self) -> bool:
        return self.writer is None

    # -- appending ------------------------------------------------------------------

    def append(self, fields: JSONObject, *, parent_id: str | bool | None = False, sync: bool = True) -> Entry:
        """Append an entry built from ``fields`` (``type`` and payload) as a child of the leaf.

        ``id``, ``parentId`` and ``timestamp`` are filled in; ``parent_id`` overrides
        the parent (``None`` for a new root). The entry is validated against its
        model, written as one line, and only then indexed. With ``sync=False`` the
        fsync the policy asks for is left to :meth:`sync`, which may run in a thread.
        """
        from agent_tui.store.clock import new_id

        if self.writer is None:
            raise ReadOnlyError(self.read_only_reason or f"{self.path}: read-only")
        data, line = encode_entry(self._complete(fields, parent_id, new_id(self.index.by_id)))
        self.writer.append_bytes(line, sync=sync)
        if self.sidecar is not None:
            self.sidecar.append_entry(line, self._next_line, self.writer.size)
        entry = Entry.from_data(data, self._next_line)
        self._next_line += 1
        self.index.add(entry)
        return entry

    def sync(self) -> None:
        """Force appended entries to disk, when the fsync policy asks for it (thread-safe: one fsync)."""
        if self.writer is not None and self.writer.fsync is FsyncPolicy.ALWAYS:
            self.writer.sync()

    def draft(self, fields: JSONObject) -> Entry:
        """The entry ``append(fields)`` would write (validated, a child of the leaf), with the id
        :data:`DRAFT_ID`; nothing is written or indexed. For previews, which count its tokens: it is
        not redacted (nothing of it is stored or shown, and redacting the copy of a 20 MB message
        that a restore preview holds takes a second on every selection)."""
        return Entry.from_data(self._complete(fields, False, DRAFT_ID, redact=False))

    def _complete(
        self, fields: JSONObject, parent_id: str | bool | None, entry_id: str, *, redact: bool = True
    ) -> JSONObject:
        from agent_tui.store.entries import now_iso, validate_entry

        parent = self.index.leaf_id if parent_id is False else parent_id
        if self.redact and redact:
            fields = redact_value(fields)
        return validate_entry(
            {
                **fields,
                "id": entry_id,
                "parentId": parent,
                "timestamp": fields.get("timestamp") or now_iso(),
            }
        )

    def append_message(self, message: JSONObject) -> Entry:
        return self.append({"type": "message", "message": message})

    # -- actions (each one entry) ---------------------------------------------------

    def _editable_target(self, target_id: str) -> Entry:
        target = self.index.get(target_id)
        if target.id not in {e.id for e in self.index.active_path()}:
            raise StoreError(f"{self.path}: entry {target_id} is not on the active branch")
        if not is_editable(target):
            what = f"{target.type} ({target.role})" if target.role else target.type
            raise StoreError(
                f"{self.path}: entry {target_id} is a {what} entry, which has no editable model content"
            )
        return target

    def hide(self, target_id: str) -> Entry:
        return self.append(hide_fields(self._editable_target(target_id)))

    def replace(self, target_id: str, content: str | list[JSONObject]) -> Entry:
        return self.append(replace_fields(self._editable_target(target_id), content))

    def restore(self, target_id: str) -> Entry:
        """Undo hide/replace: an edit carrying the original content, marked ``restore``."""
        return self.append(restore_fields(self._editable_target(target_id)))

    def label(self, target_id: str, label: str | None) -> Entry:
        self.index.get(target_id)
        return self.append({"type": "label", "targetId": target_id, "label": label or None})

    def rename(self, name: str) -> Entry:
        return self.append({"type": "session_info", "name": " ".join(name.split())})

    def pin(self, target_id: str, pinned: bool = True) -> Entry:
        self.index.get(target_id)
        return self.append(pin_fields(target_id, pinned))

    def branch(self, target_id: str) -> Entry | None:
        """Make ``target_id`` the leaf, durably.

        The leaf is the last entry of the file (pi's rule), so moving it is an
        append: a ``custom`` entry (never in context, as pi defines it) whose
        parent is the target. pi and agent-tui both resume from there. Returns
        None when the target already is the leaf.
        """
        self.index.get(target_id)
        if target_id == self.index.leaf_id:
            return None
        return self.append(
            {"type": "custom", "customType": BRANCH_MARKER, "data": {"fromId": self.index.leaf_id}},
            parent_id=target_id,
        )

    # -- fork ---------------------------------------------------------------------

    def fork(self, entry_id: str | None, out: str | Path, *, fsync: FsyncPolicy | None = None) -> Path:
        """Write a new session file holding the path to ``entry_id`` (default: the leaf).

        The entries are :func:`fork_entries`; the header names this file as ``parentSession``.
        """
        kept = fork_entries(self.index, entry_id)
        return write_new_session(
            Path(out), self.cwd, kept, parent_session=str(self.path.resolve()), fsync=fsync
        )


# -- the fields of each edit (the actions above, and the app's previews of them) ------------


def is_editable(target: Entry) -> bool:
    """Whether ``target`` has model content a context_edit can hide, replace or restore."""
    return target.type == "custom_message" or (target.type == "message" and target.role in EDITABLE_ROLES)


def hide_fields(target: Entry) -> JSONObject:
    return {"type": "context_edit", "targetId": target.id, "replacement": None}


def replace_fields(target: Entry, content: str | list[JSONObject]) -> JSONObject:
    if isinstance(content, str) and target.role in ("assistant", "toolResult"):
        content = [{"type": "text", "text": content}]  # as pi stores it: those roles hold blocks
    return {"type": "context_edit", "targetId": target.id, "replacement": {"content": content}}


def restore_fields(target: Entry) -> JSONObject:
    original = (
        target.data.get("content")
        if target.type == "custom_message"
        else (target.message or {}).get("content")
    )
    if original is None:
        original = []
    return {
        "type": "context_edit",
        "targetId": target.id,
        "replacement": {"content": original},
        "restore": True,
    }


def pin_fields(target_id: str, pinned: bool = True) -> JSONObject:
    return {"type": "pin", "targetId": target_id, "pinned": pinned}


def _new_header(cwd: str | Path, parent_session: str | None = None) -> JSONObject:
    from agent_tui.store.entries import SessionHeader, now_iso

    header = SessionHeader(id=str(uuid.uuid4()), timestamp=now_iso(), cwd=str(Path(cwd).resolve()))
    if parent_session is not None:
        header.parentSession = parent_session
    return header.to_json()


def fork_entries(index: SessionIndex, entry_id: str | None = None) -> list[JSONObject]:
    """The path to ``entry_id`` (default: the leaf) as a standalone chain of entries.

    As pi's createBranchedSession: labels and branch markers on the path are
    left out and the rest re-chained; labels of kept entries are re-added at the
    end; compaction ``firstKeptEntryId`` is moved off removed entries. Unlike pi,
    when ``entry_id`` is on the active branch, the ``context_edit`` and ``pin``
    entries after it on that branch whose targets are kept come along (after the
    path, before the labels, in order): the fork's entries show as they do now.
    """
    leaf = entry_id if entry_id is not None else index.leaf_id
    path = index.path_to(leaf) if leaf is not None else []
    if leaf is not None:
        index.get(leaf)
    kept: list[JSONObject] = []
    moved: dict[str, str] = {}
    pending: list[str] = []
    parent: str | None = None
    for entry in path:
        if entry.type == "label" or _is_branch_marker(entry):
            pending.append(entry.id)
            continue
        for removed in pending:
            moved[removed] = entry.id
        pending.clear()
        data = dict(entry.data)
        data["parentId"] = parent
        if entry.type == "compaction":
            first = data.get("firstKeptEntryId")
            if isinstance(first, str) and first != entry.id:
                data["firstKeptEntryId"] = moved.get(first, first)
        kept.append(data)
        parent = entry.id
    kept_ids = {d["id"] for d in kept}
    for entry in _later_edits(index, leaf, kept_ids):
        kept.append({**entry.data, "parentId": parent})
        parent = entry.id
    from agent_tui.store.clock import new_id

    taken = set(kept_ids)
    for target, text in index.labels.items():
        if target in kept_ids:
            label_id = new_id(taken)
            taken.add(label_id)
            kept.append(
                {
                    "type": "label",
                    "id": label_id,
                    "parentId": parent,
                    "timestamp": _label_time(index, target),
                    "targetId": target,
                    "label": text,
                }
            )
            parent = label_id
    return kept


def _later_edits(index: SessionIndex, leaf: str | None, kept: set[str]) -> list[Entry]:
    """The edits and pins after ``leaf`` on the active branch whose targets are in ``kept``."""
    if leaf is None or index.leaf_id is None or leaf == index.leaf_id:
        return []
    active = index.active_path()
    at = next((i for i, e in enumerate(active) if e.id == leaf), None)
    if at is None:
        return []  # another branch: nothing after it was seen with it
    return [
        e for e in active[at + 1 :] if e.type in ("context_edit", "pin") and e.data.get("targetId") in kept
    ]


def _is_branch_marker(entry: Entry) -> bool:
    return entry.type == "custom" and entry.data.get("customType") == BRANCH_MARKER


def _label_time(index: SessionIndex, target: str) -> str:
    for entry in reversed(index.entries):
        if entry.type == "label" and entry.data.get("targetId") == target:
            return str(entry.data.get("timestamp"))
    from agent_tui.store.clock import now_iso

    return now_iso()


def write_new_session(
    out: Path,
    cwd: str,
    entries: Iterable[JSONObject],
    *,
    parent_session: str | None = None,
    fsync: FsyncPolicy | None = None,
) -> Path:
    """Create ``out`` exclusively with a fresh header and ``entries`` (already chained), fsync once.

    Entries are redacted as appends are: a fork of a file agent-tui did not write (pi's) must not
    carry its secrets into a file agent-tui creates.
    """
    from agent_tui.store.entries import SessionHeader, now_iso

    header = SessionHeader(
        id=str(uuid.uuid4()), timestamp=now_iso(), cwd=cwd or os.getcwd(), version=CURRENT_VERSION
    )
    if parent_session is not None:
        header.parentSession = parent_session
    policy = fsync or FsyncPolicy.from_env()
    if os.path.lexists(out):
        raise StoreError(f"{out}: already exists; session files are never overwritten")
    # Written under a temporary name and then linked into place: a disk that fills half way leaves
    # no truncated file behind to block the retry.
    partial = partial_name(out)
    try:
        with SessionWriter.create(partial, header.to_json(), FsyncPolicy.NEVER) as writer:
            redact = redaction_enabled()
            for data in entries:
                writer.append_bytes(encode_line(redact_value(data) if redact else data))
            if policy is FsyncPolicy.ALWAYS:
                writer.sync()
            publish_new_file(partial, out, "session files")
    except StoreError as e:
        raise StoreError(str(e).replace(str(partial), str(out))) from None
    finally:
        discard_partial(partial)
    return out


__all__ = ["BRANCH_MARKER", "Session", "fork_entries", "write_new_session"]
