"""The schema of every entry type, for validating what we append.

Each known type is a msgspec ``Struct`` of its fields, checked by ``msgspec.convert`` with lax
coercion (``"5"`` to 5, ``5.0`` to 5, ``"true"`` to True, as before with pydantic's lax mode);
unknown types are checked as :class:`UnknownEntry` (an id, a parent, a timestamp and a type), and
unknown fields are kept and written back unchanged. Loading does not go through these (it keeps
the JSON as read, see ``record``), so opening a session never pays for validation.

msgspec, not pydantic: the print, JSON and RPC modes validate their first append before the first
request, and pydantic's import and the building of its validators cost 0.15-0.25 s of a start.
"""

from __future__ import annotations

from typing import Any, Literal

import msgspec

from agent_tui.store.clock import new_id, now_iso, now_ms

JSONObject = dict[str, Any]


class _Fields(msgspec.Struct, kw_only=True):
    """A schema: its fields, in the order they are written."""


def _checked(data: Any, schema: type[_Fields]) -> JSONObject:
    """``data`` validated against ``schema``, as the JSON object to write: its fields in the
    schema's order (defaults included, an optional field left unset (None) left out, an explicit
    null kept), then the unknown fields in their order. Raises ``msgspec.ValidationError``."""
    if not isinstance(data, dict):
        raise msgspec.ValidationError(f"Expected `object`, got `{type(data).__name__}`")
    converted = msgspec.convert(data, schema, strict=False)
    known = schema.__struct_fields__
    nested = _NESTED.get(schema, {})
    out: JSONObject = {}
    for name in known:
        value = getattr(converted, name)
        if name in nested and isinstance(data.get(name), dict):
            out[name] = _checked(data[name], nested[name])
        elif value is not None or name in data:
            out[name] = msgspec.to_builtins(value)
    for name, value in data.items():
        if name not in out and name not in known:
            out[name] = msgspec.to_builtins(value)
    return out


# -- entries ------------------------------------------------------------------------


class SessionHeader(_Fields, kw_only=True):
    type: Literal["session"] = "session"
    version: int = 3
    id: str
    timestamp: str
    cwd: str
    parentSession: str | None = None

    def to_json(self) -> JSONObject:
        """The header line's object (``parentSession`` only when set)."""
        return {k: v for k, v in msgspec.to_builtins(self).items() if v is not None}


class _Entry(_Fields, kw_only=True):
    id: str
    parentId: str | None
    timestamp: str


class MessageEntry(_Entry, kw_only=True):
    type: Literal["message"] = "message"
    message: dict[str, Any]


class CompactionEntry(_Entry, kw_only=True):
    type: Literal["compaction"] = "compaction"
    summary: str
    firstKeptEntryId: str
    tokensBefore: int
    details: dict[str, Any] | None = None
    usage: dict[str, Any] | None = None
    systemMessage: dict[str, Any] | None = None


class ContentReplacement(_Fields, kw_only=True):
    content: str | list[dict[str, Any]]


class ContextEditEntry(_Entry, kw_only=True):
    """``replacement: null`` hides the target; ``{"content": ...}`` replaces its content.

    agent-tui adds ``restore: true`` to an edit whose replacement is the target's
    original content: pi projects it like any replacement (the original shows),
    and agent-tui reports the entry as restored rather than replaced.
    """

    type: Literal["context_edit"] = "context_edit"
    targetId: str
    replacement: ContentReplacement | None
    restore: bool | None = None


class BranchSummaryEntry(_Entry, kw_only=True):
    type: Literal["branch_summary"] = "branch_summary"
    fromId: str
    summary: str
    details: dict[str, Any] | None = None


class ModelChangeEntry(_Entry, kw_only=True):
    type: Literal["model_change"] = "model_change"
    provider: str
    modelId: str


class ThinkingLevelChangeEntry(_Entry, kw_only=True):
    type: Literal["thinking_level_change"] = "thinking_level_change"
    thinkingLevel: str


class LabelEntry(_Entry, kw_only=True):
    type: Literal["label"] = "label"
    targetId: str
    label: str | None


class SessionInfoEntry(_Entry, kw_only=True):
    type: Literal["session_info"] = "session_info"
    name: str


class CustomEntry(_Entry, kw_only=True):
    type: Literal["custom"] = "custom"
    customType: str
    data: Any = None


class CustomMessageEntry(_Entry, kw_only=True):
    type: Literal["custom_message"] = "custom_message"
    customType: str
    content: str | list[dict[str, Any]]
    display: bool = True
    details: Any = None


class UsageEntry(_Entry, kw_only=True):
    type: Literal["usage"] = "usage"
    kind: str
    provider: str | None = None
    model: str | None = None
    usage: dict[str, Any] | None = None


class PinEntry(_Entry, kw_only=True):
    """agent-tui: keep ``targetId`` verbatim through compaction (``pinned: false`` unpins)."""

    type: Literal["pin"] = "pin"
    targetId: str
    pinned: bool = True


class UnknownEntry(_Entry, kw_only=True):
    """A type this version does not know: kept whole, never projected."""

    type: str


#: Fields holding a nested schema whose unknown fields are kept too.
_NESTED: dict[type[_Fields], dict[str, type[_Fields]]] = {
    ContextEditEntry: {"replacement": ContentReplacement}
}

#: Each known type's schema, by its ``type``.
SCHEMAS: dict[str, type[_Entry]] = {
    "message": MessageEntry,
    "compaction": CompactionEntry,
    "context_edit": ContextEditEntry,
    "branch_summary": BranchSummaryEntry,
    "model_change": ModelChangeEntry,
    "thinking_level_change": ThinkingLevelChangeEntry,
    "label": LabelEntry,
    "session_info": SessionInfoEntry,
    "custom": CustomEntry,
    "custom_message": CustomMessageEntry,
    "usage": UsageEntry,
    "pin": PinEntry,
}


def validate_entry(data: JSONObject) -> JSONObject:
    """Check an entry we are about to append and return its JSON form: ``type`` first (as pi
    writes it), then the type's fields in order, then unknown fields unchanged. Raises
    ``msgspec.ValidationError`` (a ``ValueError``) naming the field that is wrong."""
    entry_type = data.get("type") if isinstance(data, dict) else None
    schema = SCHEMAS.get(entry_type, UnknownEntry) if isinstance(entry_type, str) else UnknownEntry
    out = _checked(data, schema)
    return {"type": out.pop("type"), **out}


__all__ = [
    "SCHEMAS",
    "BranchSummaryEntry",
    "CompactionEntry",
    "ContentReplacement",
    "ContextEditEntry",
    "CustomEntry",
    "CustomMessageEntry",
    "LabelEntry",
    "MessageEntry",
    "ModelChangeEntry",
    "PinEntry",
    "SessionHeader",
    "SessionInfoEntry",
    "ThinkingLevelChangeEntry",
    "UnknownEntry",
    "UsageEntry",
    "new_id",
    "now_iso",
    "now_ms",
    "validate_entry",
]
