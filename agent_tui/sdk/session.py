"""A session file opened through the SDK: read it, project it, edit it, branch it, fork it.

:class:`SessionHandle` is a thin, documented face over :class:`agent_tui.store.session.Session`
(the one writer of the file) and :func:`agent_tui.projection.context.project` (what the model
sees). Every method that changes what the model sees appends one entry, as the app and the
session commands do; nothing is rewritten. No model is involved here: see
:func:`agent_tui.sdk.agent.create_agent` to run turns on a handle.
"""

from __future__ import annotations

import os
import uuid
from pathlib import Path

from agent_tui.library.latest import close_and_record, latest_session
from agent_tui.projection.context import Projection, project
from agent_tui.store.clock import now_iso
from agent_tui.store.paths import session_dir_for, session_file_name
from agent_tui.store.record import Entry, JSONObject
from agent_tui.store.session import Session, write_new_session


class SessionHandle:
    """One open session file. Close it (or use ``with``) to release its write lock.

    ``store`` is the underlying :class:`~agent_tui.store.session.Session` for what this face
    does not cover; ``note`` says something worth telling the user about how it was opened
    (e.g. ``-c`` found nothing to continue and started a new session), or is None.
    """

    def __init__(self, store: Session, note: str | None = None) -> None:
        self.store = store
        self.note = note

    # -- what it is ---------------------------------------------------------------------------

    @property
    def path(self) -> Path:
        return self.store.path

    @property
    def id(self) -> str:
        """The session id (its header's)."""
        return self.store.id

    @property
    def cwd(self) -> str:
        """The working directory its header names (informative: tools run in the process's)."""
        return self.store.cwd

    @property
    def header(self) -> JSONObject:
        return self.store.header

    @property
    def name(self) -> str | None:
        return self.store.index.name

    @property
    def leaf_id(self) -> str | None:
        """The entry the next message continues from (None for an empty session)."""
        return self.store.leaf_id

    @property
    def read_only(self) -> bool:
        return self.store.read_only

    @property
    def read_only_reason(self) -> str | None:
        return self.store.read_only_reason

    # -- reading ------------------------------------------------------------------------------

    def entries(self) -> list[JSONObject]:
        """Every entry, in file order, as its JSON object (the header left out)."""
        return [e.data for e in self.store.index.entries]

    def entry(self, entry_id: str) -> JSONObject:
        """One entry's JSON object; raises StoreError for an unknown id."""
        return self.store.index.get(entry_id).data

    def projection(self, leaf_id: str | None = None) -> Projection:
        """What the model sees of the branch ending at ``leaf_id`` (default: the leaf)."""
        index = self.store.index
        if leaf_id is not None:
            index.get(leaf_id)
        return project(index, leaf_id)

    def messages(self, leaf_id: str | None = None) -> list[JSONObject]:
        """The projected messages, as ``agent-tui context FILE --format json`` prints them."""
        return [m.message for m in self.projection(leaf_id).messages]

    def context(self, leaf_id: str | None = None) -> JSONObject:
        """The projection with its provenance: ``messages`` (as :meth:`messages`) and, at the same
        positions, ``sources`` (``entryId``: the entry each came from, ``status``, ``kind``: its role
        before conversion), with the branch's ``leafId``, ``model``, ``thinkingLevel`` and the
        ``compactionId`` in force."""
        projection = self.projection(leaf_id)
        return {
            "leafId": projection.leaf_id,
            "model": projection.model,
            "thinkingLevel": projection.thinking_level,
            "compactionId": projection.compaction_id,
            "messages": [m.message for m in projection.messages],
            "sources": [
                {"entryId": m.source_id, "status": m.status, "kind": m.kind} for m in projection.messages
            ],
        }

    def tree(self) -> JSONObject:
        """The whole tree as ``agent-tui tree FILE --json`` prints it: ``leafId``, ``name`` and a flat
        pre-order list of ``nodes`` (id, parentId, type, role, one line of text, label, whether on the
        active path, whether the leaf). Flat, not nested: a 20,000-entry branch stays a list."""
        from agent_tui.projection.describe import first_line

        index = self.store.index
        active = {e.id for e in index.active_path()}
        nodes: list[JSONObject] = [
            {
                "id": e.id,
                "parentId": e.parent_id,
                "type": e.type,
                "role": e.role,
                "text": first_line(e, 200),
                "label": index.labels.get(e.id),
                "active": e.id in active,
                "leaf": e.id == index.leaf_id,
            }
            for root in index.roots()
            for e in index.walk(root)
        ]
        return {"leafId": index.leaf_id, "name": index.name, "nodes": nodes}

    def pi_tree(self) -> list[JSONObject]:
        """The tree as pi's ``getTree()`` returns it: the roots, each node ``{entry, children,
        label?, labelTimestamp?}`` (``entry`` as in the file, ``children`` oldest first), built
        without recursion. A well-formed file has one root; entries whose parent is missing (or
        that close a parent cycle) are roots too. Deeply nested: :func:`json.dumps` cannot encode a
        20,000-entry branch (see ``agent_tui.cli.rpc_session_commands.encode_tree``)."""
        index = self.store.index
        labelled: dict[str, str] = {}
        for e in index.entries:
            target = e.data.get("targetId")
            if e.type == "label" and isinstance(target, str):
                labelled[target] = str(e.data.get("timestamp", ""))
        kept = [e for e in index.entries if index.by_id.get(e.id) is e]  # a duplicate id: the index's
        nodes: dict[str, JSONObject] = {}
        for e in kept:
            node: JSONObject = {"entry": e.data, "children": []}
            label = index.labels.get(e.id)
            if label is not None:
                node["label"] = label
                if e.id in labelled:
                    node["labelTimestamp"] = labelled[e.id]
            nodes[e.id] = node
        roots = index.roots()
        root_ids = {r.id for r in roots}
        for e in kept:
            parent = nodes.get(e.parent_id) if e.parent_id is not None else None
            if e.id not in root_ids and parent is not None:
                parent["children"].append(nodes[e.id])
        for node in nodes.values():
            node["children"].sort(key=lambda n: str(n["entry"].get("timestamp", "")))
        return [nodes[r.id] for r in roots]

    # -- changing what the model sees (one appended entry each) -------------------------------

    def hide(self, entry_id: str) -> str:
        """Leave an entry of the active branch out of the model's view; returns the edit's id."""
        return self.store.hide(entry_id).id

    def replace(self, entry_id: str, content: str | list[JSONObject]) -> str:
        """Show the model ``content`` instead of the entry's; returns the edit's id."""
        return self.store.replace(entry_id, content).id

    def restore(self, entry_id: str) -> str:
        """Undo a hide or replace; returns the edit's id."""
        return self.store.restore(entry_id).id

    def label(self, entry_id: str, label: str | None) -> str:
        """Label an entry (None clears it); returns the label entry's id."""
        return self.store.label(entry_id, label).id

    def rename(self, name: str) -> str:
        """Name the session; returns the session_info entry's id."""
        return self.store.rename(name).id

    def pin(self, entry_id: str, pinned: bool = True) -> str:
        """Keep an entry verbatim through compaction (or stop); returns the entry's id."""
        return self.store.pin(entry_id, pinned).id

    def branch(self, entry_id: str) -> str | None:
        """Make ``entry_id`` the leaf: the next message continues from it (a new branch). Returns the
        marker entry's id, or None when it already is the leaf."""
        entry = self.store.branch(entry_id)
        return entry.id if entry is not None else None

    def fork(
        self, entry_id: str | None = None, out: str | Path | None = None, *, before: bool = False
    ) -> Path:
        """A new session file holding the path to ``entry_id`` (default: the leaf), beside this one
        unless ``out`` says where; its header names this file as ``parentSession``. ``before``: the
        path to the entry's parent instead (pi's fork from a user message: the new session stops
        just before it; empty when the entry is a root)."""
        if out is None:
            out = self.path.resolve().parent / session_file_name(str(uuid.uuid4()), now_iso())
        if before:
            if entry_id is None:
                raise ValueError("fork before an entry needs the entry's id")
            parent = self.store.index.get(entry_id).parent_id
            if parent is None or parent not in self.store.index.by_id:
                return write_new_session(Path(out), self.cwd, [], parent_session=str(self.path.resolve()))
            entry_id = parent
        return self.store.fork(entry_id, out)

    def append(self, fields: JSONObject) -> Entry:
        """Append one entry (validated and redacted like every other; a child of the leaf)."""
        return self.store.append(fields)

    # -- closing ------------------------------------------------------------------------------

    def close(self) -> None:
        """Release the write lock; what was written is summarized in the session library's index
        (when there is one), so the next listing or search reads nothing again."""
        close_and_record(self.store)

    def __enter__(self) -> SessionHandle:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def __repr__(self) -> str:
        return f"SessionHandle({str(self.path)!r})"


def open_session(
    path: str | Path | None = None,
    *,
    cwd: str | None = None,
    session_dir: str | Path | None = None,
    continue_last: bool = False,
    leaf_id: str | None = None,
    write: bool = True,
    parent_session: str | Path | None = None,
    in_memory: bool = False,
) -> SessionHandle:
    """Open a session file, as the command line does (``in_memory``: pi's ``--no-session``, a new
    session of ``cwd`` that is never written; the other arguments are then unused).

    ``path``: that file, created (with ``cwd`` in its header) when missing. Without it:
    ``continue_last`` continues the latest session of ``cwd`` (a new one when there is none, said
    in ``note``), else a new session is created under ``session_dir`` (default: the user data
    dir's sessions folder for ``cwd``). ``leaf_id`` moves the leaf there first (a new branch).
    ``write=False`` opens without the write lock (read-only; nothing can be appended).
    ``parent_session`` is written in a new file's header as ``parentSession`` (pi's).
    Raises :class:`agent_tui.store.errors.StoreError` (e.g. SessionLockedError) when it cannot.
    """
    cwd = cwd if cwd is not None else os.getcwd()
    if in_memory:
        return SessionHandle(Session.in_memory(cwd))
    parent = str(parent_session) if parent_session is not None else None
    directory = str(session_dir) if session_dir is not None else None
    note: str | None = None
    if path is not None:
        target = Path(path).expanduser()
        if target.exists():
            store = Session.open(target, write=write)
        else:
            store = Session.create(target.parent, cwd, path=target, parent_session=parent)
    elif continue_last:
        latest = latest_session(cwd, session_dir=directory)
        if latest is not None:
            store = Session.open(latest, write=write)
        else:
            note = "no earlier session in this directory: starting a new one"
            store = Session.create(session_dir_for(cwd, directory), cwd, parent_session=parent)
    else:
        store = Session.create(session_dir_for(cwd, directory), cwd, parent_session=parent)
    handle = SessionHandle(store, note)
    if leaf_id is not None:
        try:
            handle.branch(leaf_id)
        except BaseException:
            handle.close()
            raise
    return handle


__all__ = ["SessionHandle", "open_session"]
