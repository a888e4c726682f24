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

from agent_tui.store.kinds import SUBAGENT_TYPE as LINK_TYPE  # the parent's record of a subagent
from agent_tui.store.kinds import TASK_TYPE  # the subagent's first entry: what it was started as

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


def call_ids_of(entry: Any) -> list[str]:
    """The task call ids an entry is about: an assistant message's ``task`` calls, a ``task``
    result's call, a link record's call."""
    if entry is None:
        return []
    if entry.type == "custom":
        data = entry.data.get("data")
        if entry.data.get("customType") == LINK_TYPE and isinstance(data, dict):
            return [str(data.get("toolCallId"))]
        return []
    if entry.type != "message":
        return []
    message = entry.message or {}
    if message.get("role") == "toolResult":
        return [str(message.get("toolCallId"))] if message.get("toolName") == "task" else []
    if message.get("role") == "assistant":
        return [
            str(b.get("id"))
            for b in message.get("content") or []
            if isinstance(b, dict) and b.get("type") == "toolCall" and b.get("name") == "task"
        ]
    return []


def linked_file(entries: Iterable[Any], parent: Path, entry: Any) -> Path | None:
    """The subagent file ``entry`` (of the session at ``parent``) leads to, when it is there."""
    found = links(entries)
    for call_id in call_ids_of(entry):
        file = found.get(call_id, {}).get("file")
        if isinstance(file, str):
            path = resolve_link(parent, file)
            if path.is_file():
                return path
    return None


def task_record(entries: Iterable[Any]) -> dict[str, Any] | None:
    """A subagent transcript's ``agent-tui.task`` record (its first such entry), or None: not one."""
    for entry in entries:
        if getattr(entry, "type", None) == "custom" and entry.data.get("customType") == TASK_TYPE:
            data = entry.data.get("data")
            return data if isinstance(data, dict) else {}
    return None


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
    "call_ids_of",
    "linked_file",
    "links",
    "resolve_link",
    "subagent_file",
    "subagent_folder",
    "subagent_rows",
    "task_record",
]
