"""What text of a session entry is searchable, and how the index keeps it redacted.

:func:`entry_text` is everything searchable in an entry: message text,
thinking, tool calls (name and every string of their arguments) and their
output, ``!`` command and output, compaction and branch summaries, custom
messages and context edits; system prompts and settings are left out. Message
entries are decoded with msgspec structs from their raw JSON (falling back to
the parsed dict). :func:`_shown` is text as the index keeps it and search
prints it: without secrets, unless ``AGENT_TUI_REDACT=off``. Part of
:mod:`agent_tui.library.search`, which re-exports the public names.
"""

from __future__ import annotations

from typing import Any

import msgspec

from agent_tui.store.kinds import entry_type
from agent_tui.store.record import Entry, JSONObject
from agent_tui.store.redact import redact_text, redaction_enabled

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
    match entry_type(entry.type):
        case "message":
            raw = entry.message_raw
            if raw is not None:
                try:
                    return _struct_text(_decode_message(raw))
                except msgspec.ValidationError:
                    pass
            return _dict_text(entry.message or {})
        case "compaction" | "branch_summary":
            return str(entry.data.get("summary") or "")
        case "custom_message":
            return _content_text(entry.data.get("content"))
        case "context_edit":
            replacement = entry.data.get("replacement")
            return _content_text(replacement.get("content")) if isinstance(replacement, dict) else ""
        case _:  # settings, marks, extension state, types we do not know: nothing to search
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


def _shown(text: str) -> str:
    """``text`` as the index keeps it and search prints it: without secrets (a pi file holds them as
    typed), unless ``AGENT_TUI_REDACT=off``."""
    return redact_text(text)[0] if text and redaction_enabled() else text
