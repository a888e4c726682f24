"""The per-file session summary the library keeps and the picker shows.

:func:`summarize` reads one parsed session (its :class:`SessionIndex`) into a
:class:`SessionSummary`: name, cwd, first user message (redacted before it is
cut), timestamps, size, entry and branch counts, labels, ``parentSession``, and the tokens and
cost of the file's model calls and of its active branch.
:func:`group_forks` arranges summaries as trees, each fork under the session it
came from (guarding against ``parentSession`` cycles); :class:`SearchHit` is one
search result pointing at a summary. :func:`_redacted` is the summary as the
index stores it, without secrets in its name and labels. Part of
:mod:`agent_tui.library.search`, which re-exports the public names.
"""

from __future__ import annotations

import os
import re
from collections.abc import Iterable, Iterator
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from agent_tui.library.search_text import _message_text, _shown
from agent_tui.projection.pricing import UsageTotals, call_of, priced_call
from agent_tui.store.index import SessionIndex

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
    #: tokens and dollars of every model call in the file (pricing.UsageTotals.to_json), and of the
    #: active branch alone (the path to the leaf)
    usage: dict[str, Any] = field(default_factory=dict)
    branch_usage: dict[str, Any] = field(default_factory=dict)

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
    usage, branch_usage = _usage(index)
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
        usage=usage.to_json(),
        branch_usage=branch_usage.to_json(),
    )


#: The key of a message's usage, as a JSON file spells it: a message whose bytes lack it cost nothing.
_USAGE_KEY = re.compile(rb'"usage"')


def _usage(index: SessionIndex) -> tuple[UsageTotals, UsageTotals]:
    """The usage totals of the file and of its active branch, each entry decoded once and only
    if it may have reported usage (most of a file's bytes are messages that carry none: user
    prompts and tool results)."""
    search = _USAGE_KEY.search
    on_path = {id(e) for e in index.active_path()}
    whole, branch = UsageTotals(), UsageTotals()
    for entry in index.entries:
        if entry.type == "message" and (raw := entry.message_raw) is not None and search(raw) is None:
            continue
        found = call_of(entry)
        call = priced_call(*found) if found is not None else None
        if call is not None:
            whole.add(call)
            if id(entry) in on_path:
                branch.add(call)
    return whole, branch


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


def _redacted(summary: SessionSummary) -> SessionSummary:
    """The summary the index keeps: secrets out of its name and labels (the first message is
    redacted by :func:`summarize`, before it is cut)."""
    summary.name = _shown(summary.name) if summary.name else summary.name
    summary.labels = [(entry_id, _shown(label)) for entry_id, label in summary.labels]
    return summary
