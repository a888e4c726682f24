"""File checkpoints tied to the session tree: when snapshots are taken, their entries, restoring.

A snapshot (:mod:`agent_tui.agent.checkpoints`) is taken before the first tool of a turn that may
change files (``Tool.file_effect`` not ``none``), at the end of every turn that ran one, and around
the user's ``!cmd``. Each one that differs from the latest on the branch is an appended ``custom``
entry (state, never in context; pi 1.6 ignores it):

``{"type":"custom","customType":"agent-tui.checkpoint","data":{"snapshot","when","files":{"added","changed","deleted"},"first"?,"skipped"?,"outside"?}}``

Restoring entry E (any entry) writes the files as the latest checkpoint on E's path at or before E
left them: the disk is snapshotted first (an ``agent-tui.checkpoint`` with ``when: "restore"``,
the undo point), then the files are written, then ``agent-tui.restore`` says what was restored.
A restore entry is itself a checkpoint of the state it left, so restoring the entry before it
undoes it. A path the disk changed outside the agent since the session's latest checkpoint, or a
file on disk the snapshot does not hold (ignored, too big), is a *conflict*: it is not written
unless the caller confirms (``force``).
"""

from __future__ import annotations

import asyncio
import os
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field

from agent_tui.agent.checkpoints import (
    Changes,
    CheckpointError,
    CheckpointStore,
    FileChange,
    Snapshot,
)
from agent_tui.agent.events import Notice
from agent_tui.agent.tools.base import Tool, resolve_path
from agent_tui.agent.turn_io import TurnIO
from agent_tui.store.errors import StoreError
from agent_tui.store.index import SessionIndex
from agent_tui.store.kinds import CHECKPOINT_TYPE, RESTORE_TYPE
from agent_tui.store.record import Entry, JSONObject
from agent_tui.store.session import Session

#: Paths listed per kind in an entry at most (a count says how many more).
LIST_LIMIT = 500


@dataclass(frozen=True, slots=True)
class Mark:
    """A checkpoint (or restore) entry: the state of the files it records."""

    entry: Entry
    snapshot: str
    outside: dict[str, str | None]


def mark_of(entry: Entry) -> Mark | None:
    """The file state ``entry`` records, when it is a checkpoint or a restore."""
    if entry.type != "custom":
        return None
    data = entry.data
    if data.get("customType") not in (CHECKPOINT_TYPE, RESTORE_TYPE):
        return None
    payload = data.get("data")
    if not isinstance(payload, dict) or not isinstance(payload.get("snapshot"), str):
        return None
    raw = payload.get("outside")
    outside = (
        {str(k): (v if isinstance(v, str) else None) for k, v in raw.items()} if isinstance(raw, dict) else {}
    )
    return Mark(entry, str(payload["snapshot"]), outside)


def latest_mark(entries: Sequence[Entry]) -> Mark | None:
    """The last checkpoint or restore among ``entries``."""
    for entry in reversed(entries):
        found = mark_of(entry)
        if found is not None:
            return found
    return None


def mark_at(index: SessionIndex, entry_id: str) -> Mark | None:
    """The files as ``entry_id`` left them: the latest checkpoint or restore on its path at or
    before it, where an entry's own end-of-turn checkpoint (a ``when: "after"`` child, which a
    branch from the entry leaves off its path) counts as the entry's state."""
    children = index.children
    for entry in reversed(index.path_to(entry_id)):
        found = mark_of(entry)
        if found is not None:
            return found
        for child in children.get(entry.id, ()):
            found = mark_of(child)
            if found is not None and (child.data.get("data") or {}).get("when") == "after":
                return found
    return None


def checkpoint_fields(
    store: CheckpointStore, snap: Snapshot, previous: Mark | None, when: str
) -> JSONObject | None:
    """The entry for ``snap`` (None when it is the state ``previous`` already records)."""
    if previous is not None and previous.snapshot == snap.tree and previous.outside == snap.outside:
        return None
    data: JSONObject = {"snapshot": snap.tree, "when": when}
    if previous is None:
        data["files"] = Changes().to_json()
        data["first"] = True
    else:
        changes = store.changes(previous.snapshot, snap.tree)
        data["files"] = changes.to_json(LIST_LIMIT)
        if changes.count > 3 * LIST_LIMIT:
            data["more"] = changes.count
        moved = [p for p in snap.outside if previous.outside.get(p, "missing") != snap.outside[p]]
        if moved:
            data["files"]["outside"] = moved
    if snap.skipped:
        data["skipped"] = [{"path": p, "why": w} for p, w in snap.skipped[:LIST_LIMIT]]
    if snap.outside:
        data["outside"] = dict(snap.outside)
    return {"type": "custom", "customType": CHECKPOINT_TYPE, "data": data}


def take_checkpoint(
    store: CheckpointStore, session: Session, cwd: str, when: str, outside: Iterable[str] = ()
) -> JSONObject | None:
    """Snapshot ``cwd`` now: the entry to append (None: nothing changed since the branch's latest)."""
    previous = latest_mark(session.index.active_path())
    paths = {*(previous.outside if previous is not None else {}), *outside}
    return checkpoint_fields(store, store.snapshot(cwd, paths), previous, when)


def checkpoint_now(store: CheckpointStore, session: Session, cwd: str, when: str) -> Entry | None:
    """:func:`take_checkpoint`, appended."""
    fields = take_checkpoint(store, session, cwd, when)
    return session.append(fields) if fields is not None else None


async def checkpoint_command(
    store: CheckpointStore,
    session: Session,
    cwd: str,
    when: str,
    may_append: Callable[[], bool] = lambda: True,
) -> str | None:
    """A checkpoint around the user's ``!cmd`` (``when``: ``before``/``after``), appended when it
    differs from the branch's latest and ``may_append()`` still holds once it is taken (the app: no
    turn started meanwhile). Every face's ``!cmd`` takes it (the session core's ``bash``, the
    app's). Returns why snapshots failed (the folder is refused, git is missing), None when fine."""
    try:
        fields = await asyncio.to_thread(take_checkpoint, store, session, cwd, when)
        if fields is not None and may_append():
            session.append(fields)
    except (CheckpointError, OSError, StoreError) as e:
        return str(e)
    return None


def touched_outside(calls: Sequence[JSONObject], tools: Sequence[Tool], cwd: str) -> set[str]:
    """The real paths outside ``cwd`` the ``write``/``edit``-like calls name."""
    by_name = {t.name: t for t in tools}
    top = os.path.realpath(cwd)
    found = set()
    for call in calls:
        tool = by_name.get(str(call.get("name")))
        args = call.get("arguments")
        if tool is None or tool.file_effect != "path" or not tool.path_argument or not isinstance(args, dict):
            continue
        value = args.get(tool.path_argument)
        if not isinstance(value, str) or not value:
            continue
        real = os.path.realpath(resolve_path(value, cwd))
        if real != top and not real.startswith(top.rstrip(os.sep) + os.sep):
            found.add(real)
    return found


class TurnCheckpoints:
    """The loop's side: a snapshot before the first file-changing tool of a turn and at its end."""

    def __init__(self, store: CheckpointStore, cwd: str) -> None:
        self.store = store
        self.cwd = cwd
        self._taken = False
        self._outside: set[str] = set()
        self.failed: str | None = None  # why snapshots stopped (said once)

    def start_turn(self) -> None:
        self._taken = False
        self._outside = set()

    async def before_tools(self, calls: Sequence[JSONObject], tools: Sequence[Tool], io: TurnIO) -> None:
        by_name = {t.name: t for t in tools}
        if not any(
            (t := by_name.get(str(c.get("name")))) is not None and t.file_effect != "none" for c in calls
        ):
            return
        new = touched_outside(calls, tools, self.cwd) - self._outside
        if self._taken and not new:
            return
        self._outside |= new
        self._taken = True
        await self._checkpoint("before", io)

    async def end_turn(self, io: TurnIO) -> None:
        if self._taken:
            self._taken = False
            await self._checkpoint("after", io)

    async def _checkpoint(self, when: str, io: TurnIO) -> None:
        if self.failed is not None:
            return
        try:
            fields = await asyncio.to_thread(
                take_checkpoint, self.store, io.session, self.cwd, when, self._outside
            )
        except (CheckpointError, OSError) as e:
            self.failed = str(e)
            io.emit(Notice(f"file checkpoints are off for this session: {e}"))
            return
        if fields is not None:
            await io.append(fields)


# -- restoring ---------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class RestorePlan:
    """What restoring ``entry_id`` would do, worked out against the disk now."""

    entry_id: str
    mark: Mark | None  # the checkpoint found (None: no checkpoint at or before the entry)
    current: Snapshot
    changes: tuple[FileChange, ...]
    conflicts: tuple[tuple[str, str], ...]  # (path, why) of changes that need a second yes
    outside: dict[str, str | None] = field(default_factory=dict)  # files outside cwd that differ

    @property
    def empty(self) -> bool:
        return not self.changes and not self.outside

    def lines(self) -> list[str]:
        """One line per file: what happens to it."""
        conflicts = dict(self.conflicts)
        out = []
        for change in self.changes:
            verb = "delete" if change.action == "delete" else "write "
            note = f"  (conflict: {conflicts[change.path]})" if change.path in conflicts else ""
            out.append(f"{verb} {_shown(change.path)}{note}")
        for path, blob in self.outside.items():
            verb = "delete" if blob is None else "write "
            out.append(f"{verb} {_shown(path)}  (outside the project folder)")
        return out

    def to_json(self) -> JSONObject:
        conflicts = dict(self.conflicts)
        return {
            "entryId": self.entry_id,
            "checkpointId": self.mark.entry.id if self.mark is not None else None,
            "snapshot": self.mark.snapshot if self.mark is not None else None,
            "files": [
                {
                    "path": _shown(c.path),
                    "action": c.action,
                    **({"conflict": conflicts[c.path]} if c.path in conflicts else {}),
                }
                for c in self.changes
            ],
            "outside": [
                {"path": _shown(p), "action": "delete" if b is None else "write"}
                for p, b in self.outside.items()
            ],
        }


@dataclass(frozen=True, slots=True)
class RestoreResult:
    plan: RestorePlan
    written: tuple[str, ...]
    refused: tuple[tuple[str, str], ...]  # (path, why)
    undo_id: str | None  # the entry whose restore undoes this one
    entry: Entry | None  # the agent-tui.restore entry


class RestoreConflict(Exception):
    """A restore would overwrite changes made outside the agent (``force`` to write them anyway)."""


def plan_restore(store: CheckpointStore, session: Session, cwd: str, entry_id: str) -> RestorePlan:
    """What restoring the files as ``entry_id`` left them would write (nothing is written)."""
    index = session.index
    index.get(entry_id)  # KeyError for an unknown id
    mark = mark_at(index, entry_id)
    top = os.path.realpath(cwd)
    known = latest_mark(index.entries)  # the files as the agent last saw them
    outside_paths = {*(mark.outside if mark else {}), *(known.outside if known else {})}
    current = store.snapshot(top, outside_paths)
    if mark is None:
        return RestorePlan(entry_id, None, current, (), ())
    changes = tuple(store.plan(current.tree, mark.snapshot))
    touched = set(store.changes(known.snapshot, current.tree).paths()) if known is not None else set()
    conflicts: list[tuple[str, str]] = []
    for change in changes:
        if change.path in touched:
            conflicts.append((change.path, "changed outside the agent since its last checkpoint"))
        elif change.added and os.path.lexists(os.path.join(top, change.path)):
            conflicts.append((change.path, "on disk but not in any snapshot (ignored or too big)"))
    outside = {p: b for p, b in mark.outside.items() if current.outside.get(p) != b}
    return RestorePlan(entry_id, mark, current, changes, tuple(conflicts), outside)


def restore(
    store: CheckpointStore,
    session: Session,
    cwd: str,
    entry_id: str,
    *,
    force: bool = False,
    outside: bool = False,
    expected: RestorePlan | None = None,
) -> RestoreResult:
    """Restore the files as ``entry_id`` left them. Raises :class:`RestoreConflict` when a conflict
    is in the way and not ``force``; CheckpointError when the disk changed since ``expected`` (the
    plan shown to the user). Appends the undo point and the ``agent-tui.restore`` entry."""
    plan = plan_restore(store, session, cwd, entry_id)
    if expected is not None and (plan.changes, plan.outside) != (expected.changes, expected.outside):
        raise CheckpointError("the files changed since the list was shown; look at it again")
    if plan.mark is None:
        raise CheckpointError(f"no file checkpoint at or before entry {entry_id}")
    if plan.conflicts and not force:
        raise RestoreConflict(
            f"{len(plan.conflicts)} file(s) changed outside the agent would be overwritten: "
            + ", ".join(_shown(p) for p, _ in plan.conflicts[:5])
        )
    previous = latest_mark(session.index.active_path())
    undo_fields = checkpoint_fields(store, plan.current, previous, "restore")
    undo = session.append(undo_fields) if undo_fields is not None else None
    undo_id = undo.id if undo is not None else (previous.entry.id if previous is not None else None)
    refused = store.apply(cwd, plan.changes)
    if outside and plan.outside:
        refused += store.restore_outside(plan.outside)
    after = store.snapshot(cwd, plan.current.outside.keys())
    refused_paths = {p for p, _ in refused}
    written = tuple(c.path for c in plan.changes if c.path not in refused_paths)
    files: dict[str, list[str]] = {"added": [], "changed": [], "deleted": []}
    for c in plan.changes:
        if c.path in refused_paths:
            continue
        kind = "deleted" if c.action == "delete" else "added" if c.added else "changed"
        files[kind].append(_shown(c.path))
    data: JSONObject = {
        "entryId": entry_id,
        "checkpointId": plan.mark.entry.id,
        "target": plan.mark.snapshot,
        "snapshot": after.tree,
        "undo": undo_id,
        "files": {k: v[:LIST_LIMIT] for k, v in files.items()},
    }
    if plan.conflicts:
        data["conflicts"] = [_shown(p) for p, _ in plan.conflicts]
    if refused:
        data["refused"] = [{"path": _shown(p), "why": w} for p, w in refused]
    if plan.outside:
        data["outside"] = dict(after.outside)
        data["outsideRestored"] = outside
    entry = session.append({"type": "custom", "customType": RESTORE_TYPE, "data": data})
    return RestoreResult(plan, written, tuple(refused), undo_id, entry)


def list_checkpoints(session: Session, leaf: str | None = None) -> list[JSONObject]:
    """The checkpoints and restores on the branch to ``leaf`` (default the active one), oldest first."""
    path = session.index.path_to(leaf) if leaf is not None else session.index.active_path()
    out = []
    for entry in path:
        mark = mark_of(entry)
        if mark is None:
            continue
        payload = _payload(entry)
        files = _files(payload)
        out.append(
            {
                "entryId": entry.id,
                "parentId": entry.data.get("parentId"),
                "timestamp": entry.data.get("timestamp"),
                "kind": "restore" if entry.data.get("customType") == RESTORE_TYPE else "checkpoint",
                "when": payload.get("when", "restore"),
                "snapshot": mark.snapshot,
                "files": {k: list(files.get(k) or []) for k in ("added", "changed", "deleted")},
                **({"skipped": payload["skipped"]} if payload.get("skipped") else {}),
            }
        )
    return out


def skipped_line(skipped: object, shown: int = 5) -> str:
    """One terminal-safe line for a checkpoint's ``skipped`` list: ``left out: big.bin (over 10
    MB), pipe (a FIFO (named pipe))`` and how many more."""
    from agent_tui.terminal_text import visible_line

    items = [s for s in skipped if isinstance(s, dict)] if isinstance(skipped, list) else []
    parts = [f"{s.get('path')} ({s.get('why')})" for s in items[:shown]]
    more = f" and {len(items) - shown} more" if len(items) > shown else ""
    return visible_line("left out: " + ", ".join(parts) + more)


def changed_count(entry: Entry) -> int:
    """How many files a checkpoint or restore entry says changed (0 for any other entry)."""
    if mark_of(entry) is None:
        return 0
    payload = _payload(entry)
    files = _files(payload)
    if isinstance(payload.get("more"), int):
        return int(payload["more"])
    return sum(len(files.get(k) or []) for k in ("added", "changed", "deleted", "outside"))


def _payload(entry: Entry) -> JSONObject:
    payload = entry.data.get("data")
    return payload if isinstance(payload, dict) else {}


def _files(payload: JSONObject) -> dict[str, list[str]]:
    files = payload.get("files")
    if not isinstance(files, dict):
        return {}
    return {str(k): [str(p) for p in v] for k, v in files.items() if isinstance(v, list)}


def snapshot_at(session: Session, entry_id: str) -> str:
    """The tree the files had at ``entry_id`` (the latest checkpoint on its path at or before it)."""
    mark = mark_at(session.index, entry_id)
    if mark is None:
        raise CheckpointError(f"no file checkpoint at or before entry {entry_id}")
    return mark.snapshot


def _shown(path: str) -> str:
    return path.encode("utf-8", "surrogateescape").decode("utf-8", "replace")


__all__ = [
    "CHECKPOINT_TYPE",
    "RESTORE_TYPE",
    "Mark",
    "RestoreConflict",
    "RestorePlan",
    "RestoreResult",
    "TurnCheckpoints",
    "changed_count",
    "checkpoint_command",
    "checkpoint_now",
    "latest_mark",
    "list_checkpoints",
    "mark_at",
    "mark_of",
    "plan_restore",
    "restore",
    "skipped_line",
    "snapshot_at",
    "take_checkpoint",
    "touched_outside",
]
