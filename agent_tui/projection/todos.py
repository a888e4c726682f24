"""The model's plan: the latest ``todo_write`` list on a branch (pure, from the entries).

The ``todo_write`` tool records nothing of its own: its call (the list as the model wrote it) and
its ``toolResult`` (``details.todos``, the list as accepted) are the record, so the plan shown is
the latest successful result on the path to the leaf, and moving the leaf shows that branch's.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import Any

TODO_TOOL = "todo_write"
STATUSES = ("pending", "in_progress", "completed")

Todo = dict[str, str]
_NAME = TODO_TOOL.encode()


def clean_todos(raw: object) -> list[Todo] | str:
    """The list as accepted (``content``, ``status``, ``activeForm`` when given), or what is wrong."""
    if not isinstance(raw, list):
        return "todos must be a list"
    out: list[Todo] = []
    for i, item in enumerate(raw):
        if not isinstance(item, dict):
            return f"todos[{i}] must be an object"
        content = item.get("content")
        status = item.get("status")
        if not isinstance(content, str) or not content.strip():
            return f"todos[{i}].content must be a non-empty string"
        if status not in STATUSES:
            return f"todos[{i}].status must be one of {', '.join(STATUSES)}"
        todo: Todo = {"content": content.strip(), "status": str(status)}
        active = item.get("activeForm")
        if isinstance(active, str) and active.strip():
            todo["activeForm"] = active.strip()
        out.append(todo)
    return out


def latest_todos(entries: Iterable[Any]) -> list[Todo] | None:
    """The latest successful ``todo_write`` result's list among ``entries`` (a path, in order);
    None when there is none. Read from the end; a result of another tool (``Entry.tool_name``, which
    the sidecar records) is not read, nor one whose undecoded line does not name the tool."""
    listed = entries if isinstance(entries, Sequence) else list(entries)
    for entry in reversed(listed):
        if getattr(entry, "type", None) != "message" or getattr(entry, "role", None) != "toolResult":
            continue
        name = getattr(entry, "tool_name", False)  # an Entry knows it without reading the line
        if name is not False and name != TODO_TOOL:
            continue
        raw = getattr(entry, "message_raw", None) if name is False else None
        if raw is not None and _NAME not in bytes(raw):
            continue
        message = entry.message or {}
        if message.get("toolName") != TODO_TOOL or message.get("isError"):
            continue
        details = message.get("details")
        todos = clean_todos(details.get("todos")) if isinstance(details, dict) else None
        if isinstance(todos, list):
            return todos
    return None


def todo_lines(todos: Sequence[Todo]) -> list[str]:
    """One line per item: ``[x]`` done, ``[>]`` in progress (its activeForm), ``[ ]`` pending."""
    marks = {"completed": "[x]", "in_progress": "[>]", "pending": "[ ]"}
    lines = []
    for todo in todos:
        text = todo.get("activeForm") if todo["status"] == "in_progress" else None
        lines.append(f"{marks.get(todo['status'], '[ ]')} {text or todo['content']}")
    return lines


__all__ = ["STATUSES", "TODO_TOOL", "Todo", "clean_todos", "latest_todos", "todo_lines"]
