"""One-line descriptions of entries, for the tree (CLI and TUI alike)."""

from __future__ import annotations

from typing import Any

from agent_tui.store.content import content_text
from agent_tui.store.kinds import PERMISSION_TYPE, entry_type, kind_info
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
    kind = entry_type(entry.type)
    if kind is None:
        return ""
    if kind == "message":  # the message alone (decoded lazily), not the whole entry
        return _first_nonempty(kind_info(kind).line({"message": entry.message or {}}), width)
    return _first_nonempty(kind_info(kind).line(entry.data), width)


#: How far past what is shown a line is redacted: a secret that starts in view is found whole.
REDACT_REACH = 1024


def _first_nonempty(text: str, width: int) -> str:
    """The first non-empty line of ``text``, redacted (a file pi wrote, or one written with
    redaction off, holds secrets as they were typed), cut to ``width`` (never inside an escape
    sequence); reads only the start of a big text."""
    head = text[:65_536]
    line = next((ln.strip() for ln in head.splitlines() if ln.strip()), "")
    if not line and len(text) > len(head):
        line = next((ln.strip() for ln in text.splitlines() if ln.strip()), "")
    return cut(shown(line[: width + REDACT_REACH]), width)


def shown(text: str) -> str:
    """``text`` with its secrets replaced, unless redaction is off (``AGENT_TUI_REDACT=off``)."""
    from agent_tui.store.redact import redact_text, redaction_enabled

    return redact_text(text)[0] if redaction_enabled() else text


def is_permission(entry: Entry) -> bool:
    """Whether ``entry`` records a tool-permission decision (``agent-tui.permission``)."""
    return entry.type == "custom" and entry.data.get("customType") == PERMISSION_TYPE


def message_first_line(message: dict[str, Any], width: int = 80) -> str:
    """The first non-empty line of a message's text, cut to ``width`` characters."""
    text = content_text(message.get("content"), " ")
    return _first_nonempty(text, width)
