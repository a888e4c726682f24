"""One-line descriptions of entries, for the tree (CLI and TUI alike)."""

from __future__ import annotations

from typing import Any

from agent_tui.store.record import Entry
from agent_tui.terminal_text import cut


def plural(n: int, noun: str, many: str | None = None) -> str:
    """``1 token``, ``2 tokens``, ``1,234 entries`` (``many`` for irregular plurals)."""
    return f"{n:,} {noun if abs(n) == 1 else (many or noun + 's')}"


def tokens_before(value: object) -> str:
    """A compaction's ``tokensBefore`` as ``1 token before`` / ``1,234 tokens before``.

    The value comes from a session file, so anything that is not a count is shown as is.
    """
    if isinstance(value, int) and not isinstance(value, bool):
        return plural(value, "token") + " before"
    return f"{value} tokens before"


def kind(entry: Entry) -> str:
    """``user``, ``assistant``, ``toolResult``... for messages; the entry type otherwise."""
    if entry.type == "message":
        return entry.role or "message"
    if entry.type == "custom":
        return f"custom:{entry.data.get('customType')}"
    return entry.type


def first_line(entry: Entry, width: int = 80) -> str:
    """The first non-empty line of what the entry says, cut to ``width`` characters."""
    data = entry.data
    text = ""
    if entry.type == "message":
        message = entry.message or {}
        text = _content_text(message.get("content"))
        if not text and message.get("role") == "bashExecution":
            text = f"$ {message.get('command', '')}"
        if message.get("role") == "toolResult":
            text = f"{message.get('toolName', '')}: {text}"
    elif entry.type in ("compaction", "branch_summary"):
        text = str(data.get("summary") or "")
    elif entry.type == "custom_message":
        text = _content_text(data.get("content"))
    elif entry.type == "context_edit":
        replacement = data.get("replacement")
        action = "hide" if replacement is None else ("restore" if data.get("restore") else "replace")
        text = f"{action} {data.get('targetId')}"
        if isinstance(replacement, dict) and action == "replace":
            text += ": " + _content_text(replacement.get("content"))
    elif entry.type == "label":
        text = (
            f"{data.get('targetId')} = {data.get('label')!r}"
            if data.get("label")
            else f"clear label of {data.get('targetId')}"
        )
    elif entry.type == "session_info":
        text = f"name: {data.get('name')}"
    elif entry.type == "model_change":
        text = f"{data.get('provider')}/{data.get('modelId')}"
    elif entry.type == "thinking_level_change":
        text = str(data.get("thinkingLevel"))
    elif entry.type == "pin":
        text = f"{'pin' if data.get('pinned', True) else 'unpin'} {data.get('targetId')}"
    elif is_permission(entry):
        text = permission_line(data.get("data"))
    elif entry.type == "custom" and isinstance(data.get("data"), dict) and "fromId" in data["data"]:
        text = f"moved here from {data['data'].get('fromId')}"
    return _first_nonempty(text, width)


def _first_nonempty(text: str, width: int) -> str:
    """The first non-empty line of ``text``, cut to ``width`` (never inside an escape sequence);
    reads only the start of a big text."""
    head = text[:65_536]
    line = next((ln.strip() for ln in head.splitlines() if ln.strip()), "")
    if not line and len(text) > len(head):
        line = next((ln.strip() for ln in text.splitlines() if ln.strip()), "")
    return cut(line, width)


PERMISSION_TYPE = "agent-tui.permission"
_DECISION_WORDS = {
    "allow-once": "allowed once",
    "allow-session": "allowed for this session",
    "deny": "denied",
    "auto": "ran (auto mode)",
    "read-only-refused": "refused (read-only mode)",
}


def is_permission(entry: Entry) -> bool:
    """Whether ``entry`` records a tool-permission decision (``agent-tui.permission``)."""
    return entry.type == "custom" and entry.data.get("customType") == PERMISSION_TYPE


def permission_line(data: Any) -> str:
    """A permission decision as one readable line: ``allowed once: bash ls -la``."""
    if not isinstance(data, dict):
        return "permission"
    decision = str(data.get("decision", ""))
    words = _DECISION_WORDS.get(decision, decision or "decided")
    if decision == "allow-session" and data.get("remembered"):
        words = "allowed (for this session, asked before)"
    call = " ".join(f"{data.get('tool', '')} {data.get('summary', '')}".split())
    return f"{words}: {call}" if call else words


def message_first_line(message: dict[str, Any], width: int = 80) -> str:
    """The first non-empty line of a message's text, cut to ``width`` characters."""
    content = message.get("content")
    if isinstance(content, str):
        text = content
    elif isinstance(content, list):
        text = " ".join(
            str(b.get("text", "")) for b in content if isinstance(b, dict) and b.get("type") == "text"
        )
    else:
        text = ""
    return _first_nonempty(text, width)


def _content_text(content: Any) -> str:
    if isinstance(content, str):
        return content
    parts: list[str] = []
    for block in content if isinstance(content, list) else []:
        if not isinstance(block, dict):
            continue
        if block.get("type") == "text":
            parts.append(str(block.get("text", "")))
        elif block.get("type") == "toolCall":
            parts.append(f"→ {block.get('name')}({_args_preview(block.get('arguments'))})")
        elif block.get("type") == "image":
            parts.append("[image]")
    return "\n".join(parts)


def _args_preview(args: Any) -> str:
    if isinstance(args, dict):
        return ", ".join(f"{k}={str(v)[:40]!s}" for k, v in list(args.items())[:3])
    return str(args)[:60]
