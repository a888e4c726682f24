"""What the session tree shows, as plain data: its nodes (:class:`TreeItem`), what their labels
need from the store and the projection (:class:`TreeState`) and what a row says of its entry
(:func:`describe`); the widget is ``widgets/session_tree``."""

from __future__ import annotations

from dataclasses import dataclass, field
from operator import attrgetter

from agent_tui.agent.checkpointing import CHECKPOINT_TYPE, RESTORE_TYPE, changed_count
from agent_tui.projection.context import Projection, Status
from agent_tui.projection.describe import first_line, is_permission, kind
from agent_tui.projection.surgery import surgery_authors
from agent_tui.store.index import SessionIndex
from agent_tui.store.kinds import entry_type, files_line, kind_info
from agent_tui.store.record import Entry
from agent_tui.store.session import BRANCH_MARKER


@dataclass(slots=True, eq=False)
class TreeItem:
    """What a node stands for: an entry, a folded range of a run, or another branch of a fork."""

    kind: str  # "entry" | "range" | "branch" | "cycle"
    entry_id: str | None = None
    next_id: str | None = None  # entry: the child that continues its run (shown below it, not nested)
    ids: tuple[str, ...] = ()  # range: the entries folded into it; cycle: where each cycle is cut
    loaded: bool = False

    @property
    def key(self) -> str:
        if self.kind in ("range", "cycle"):
            return f"{self.kind}:{self.ids[0] if self.ids else ''}"
        return f"{self.kind}:{self.entry_id}"


@dataclass(slots=True)
class TreeState:
    """What the labels need from the store and the projection."""

    index: SessionIndex
    active: set[str] = field(default_factory=set)
    status: dict[str, Status] = field(default_factory=dict)
    summarized: set[str] = field(default_factory=set)
    leaf_id: str | None = None
    path: list[Entry] = field(default_factory=list)  # the active path, root first
    #: context_edit id (and the entry the edit decides) -> who made it
    authors: dict[str, str] = field(default_factory=dict)

    @classmethod
    def build(cls, index: SessionIndex, projection: Projection) -> TreeState:
        status = {ce.entry.id: ce.status for ce in projection.entries}
        authors = surgery_authors(projection.path)
        if authors:  # an edited entry shows who made the edit that decides it
            for ce in projection.entries:
                if ce.edit_id is not None and ce.edit_id in authors:
                    authors[ce.entry.id] = authors[ce.edit_id]
        return cls(
            index,
            set(map(attrgetter("id"), projection.path)),
            status,
            set(projection.summarized_ids),
            projection.leaf_id,
            list(projection.path),
            authors,
        )


def other_roots(index: SessionIndex, main_root: str | None) -> list[Entry]:
    """Entries without a parent, or whose parent is missing, other than the active path's root.

    (``SessionIndex.roots`` also breaks parent cycles, but walks the whole tree after every
    append; the tree shows cycles under their own group, from ``SessionIndex.cycle_roots``.)"""
    by_id = index.by_id
    children = index.children
    roots = [e for e in children.get(None, ()) if e.id != main_root]
    missing = children.keys() - by_id.keys()  # parents that are no entry: a set difference, in C
    missing.discard(None)
    if missing:  # rare (a hand-edited file): found in file order
        roots.extend(
            e for e in index.entries if e.parent_id in missing and e.id != main_root and by_id.get(e.id) is e
        )
    return roots


#: The mark an entry's status in the model's view puts on its row, and its colour.
STATUS_BADGES = {
    Status.HIDDEN: ("hidden", "error"),
    Status.REPLACED: ("replaced", "warning"),
    Status.RESTORED: ("restored", "success"),
    Status.SUMMARY: ("summary", "accent"),
}


def is_branch_marker(entry: Entry) -> bool:
    """Whether ``entry`` is the marker a branch leaves ("continued here")."""
    return entry.type == "custom" and entry.data.get("customType") == BRANCH_MARKER


def files_badge(entry: Entry) -> str | None:
    """The mark of a file checkpoint or restore that changed files: ``[files N]``."""
    if entry.type != "custom" or entry.data.get("customType") not in (CHECKPOINT_TYPE, RESTORE_TYPE):
        return None
    count = changed_count(entry)
    return f"[files {count}]" if count else None


def describe(entry: Entry) -> str:
    """What the tree says of ``entry`` after its marks: its first line, with its kind's name."""
    if entry.type == "custom" and entry.data.get("customType") in (CHECKPOINT_TYPE, RESTORE_TYPE):
        return files_line(entry.data)
    k = kind(entry)
    line = first_line(entry, 60)
    if is_branch_marker(entry):
        return "continued here"
    if is_permission(entry):
        return line
    if entry.type == "message" and k in ("user", "assistant"):
        return line or f"({k})"
    if entry.type == "message" and k == "toolResult":
        return line or "tool result"
    if entry.type == "message" and k == "system":
        return f"system prompt: {line}" if line else "system prompt"
    known = entry_type(entry.type)
    prefix = kind_info(known).tree_name if known is not None and known != "custom" else k
    return f"{prefix}: {line}" if line else prefix
