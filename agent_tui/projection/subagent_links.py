"""Where a session's subagents are: the ``agent-tui.subagent`` records and their files (pure).

A ``task`` call's subagent runs on a session file of its own, ``<parent stem>/subagents/task-<call
id>.jsonl``; the parent holds ``custom`` records naming it (docs/FORMAT.md, Subagents). The tree
(``agent-tui tree --json``), the exports and the app read them here; ``agent.subagents`` writes them.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from pathlib import Path
from typing import Any

#: The parent's record of a subagent (state, never in context).
LINK_TYPE = "agent-tui.subagent"
#: The subagent's first entry: what it was started as.
TASK_TYPE = "agent-tui.task"

_UNSAFE = re.compile(r"[^A-Za-z0-9_-]")


def subagent_folder(parent: Path) -> Path:
    """Where a session's subagent transcripts go: ``<stem>/subagents`` beside it (a folder no
    session listing reads as sessions of the parent's folder)."""
    return parent.with_suffix("") / "subagents"


def subagent_file(parent: Path, call_id: str) -> Path:
    safe = _UNSAFE.sub("_", call_id)[:64] or "call"
    return subagent_folder(parent) / f"task-{safe}.jsonl"


def resolve_link(parent: Path, file: str) -> Path:
    """A link record's ``file`` (relative to the parent's folder) as a path."""
    return parent.parent / file


def links(entries: Iterable[Any]) -> dict[str, dict[str, Any]]:
    """The latest ``agent-tui.subagent`` record per task call id among ``entries`` (index entries,
    in file order), its ``data`` plus ``entryId``: the record's id."""
    found: dict[str, dict[str, Any]] = {}
    for entry in entries:
        if getattr(entry, "type", None) != "custom":
            continue
        fields = entry.data
        if fields.get("customType") != LINK_TYPE:
            continue
        payload = fields.get("data")
        if isinstance(payload, dict) and isinstance(payload.get("toolCallId"), str):
            found[payload["toolCallId"]] = dict(payload, entryId=entry.id)
    return found


def subagent_rows(entries: Iterable[Any], parent: Path) -> list[dict[str, Any]]:
    """Each subagent of a session as ``tree --json`` lists it: its call, its file (absolute, and
    whether it is there), description, type, status, usage, cost, its records' and result's ids."""
    listed = list(entries)
    results = {
        str((e.message or {}).get("toolCallId")): e.id
        for e in listed
        if getattr(e, "type", None) == "message" and e.role == "toolResult"
    }
    rows = []
    for call_id, data in links(listed).items():
        file = data.get("file")
        path = resolve_link(parent, file) if isinstance(file, str) else None
        rows.append(
            {
                "toolCallId": call_id,
                "file": str(path) if path is not None else None,
                "exists": path is not None and path.is_file(),
                "description": data.get("description"),
                "type": data.get("type"),
                "status": data.get("status"),
                "usage": data.get("usage"),
                "cost": data.get("cost"),
                "recordId": data.get("entryId"),
                "resultId": results.get(call_id),
            }
        )
    return rows


__all__ = [
    "LINK_TYPE",
    "TASK_TYPE",
    "links",
    "resolve_link",
    "subagent_file",
    "subagent_folder",
    "subagent_rows",
]
