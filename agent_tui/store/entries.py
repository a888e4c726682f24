"""Typed models of every entry type, for building and validating what we append.

Discriminated on ``type``; unknown types parse as :class:`UnknownEntry`, and
unknown fields are kept (``extra="allow"``) and dumped back unchanged. Loading
does not go through these models (it keeps the JSON as read, see ``record``),
so opening a session never pays for validation; use :func:`parse_entry` for a
typed view of a loaded entry.
"""

from __future__ import annotations

from typing import Annotated, Any, Literal

from pydantic import BaseModel, ConfigDict, Discriminator, Field, Tag, TypeAdapter

from agent_tui.store.clock import new_id, now_iso, now_ms


class _Model(BaseModel):
    model_config = ConfigDict(extra="allow", populate_by_name=True)

    def to_json(self) -> dict[str, Any]:
        """The JSON object to write: defaults included, unset optional fields (None) left out,
        explicit nulls (``replacement: null``) and unknown fields kept."""
        full = self.model_dump(mode="json", by_alias=True)
        explicit = self.model_fields_set | set(self.model_extra or ())
        data = {k: v for k, v in full.items() if v is not None or k in explicit}
        if "type" in data:  # pi writes the type first; so do we, for readable files
            data = {"type": data.pop("type"), **data}
        return data


# -- message payloads ---------------------------------------------------------------


class TextContent(_Model):
    type: Literal["text"] = "text"
    text: str


class ImageContent(_Model):
    type: Literal["image"] = "image"
    data: str
    mimeType: str


class ThinkingContent(_Model):
    type: Literal["thinking"] = "thinking"
    thinking: str
    thinkingSignature: str | None = None


class ToolCall(_Model):
    type: Literal["toolCall"] = "toolCall"
    id: str
    name: str
    arguments: dict[str, Any]


class Usage(_Model):
    input: int = 0
    output: int = 0
    cacheRead: int = 0
    cacheWrite: int = 0
    totalTokens: int = 0


class UserMessage(_Model):
    role: Literal["user"] = "user"
    content: str | list[dict[str, Any]]
    timestamp: int


class AssistantMessage(_Model):
    role: Literal["assistant"] = "assistant"
    content: list[dict[str, Any]]
    provider: str | None = None
    model: str | None = None
    usage: Usage | None = None
    stopReason: str | None = None
    errorMessage: str | None = None
    timestamp: int


class ToolResultMessage(_Model):
    role: Literal["toolResult"] = "toolResult"
    toolCallId: str
    toolName: str
    content: list[dict[str, Any]]
    isError: bool = False
    timestamp: int


class SystemMessage(_Model):
    role: Literal["system"] = "system"
    content: str | list[dict[str, Any]]
    timestamp: int


# -- entries ------------------------------------------------------------------------


class SessionHeader(_Model):
    type: Literal["session"] = "session"
    version: int = 3
    id: str
    timestamp: str
    cwd: str
    parentSession: str | None = None


class _Entry(_Model):
    id: str
    parentId: str | None
    timestamp: str


class MessageEntry(_Entry):
    type: Literal["message"] = "message"
    message: dict[str, Any]


class CompactionEntry(_Entry):
    type: Literal["compaction"] = "compaction"
    summary: str
    firstKeptEntryId: str
    tokensBefore: int
    details: dict[str, Any] | None = None
    usage: dict[str, Any] | None = None
    systemMessage: dict[str, Any] | None = None


class ContentReplacement(_Model):
    content: str | list[dict[str, Any]]


class ContextEditEntry(_Entry):
    """``replacement: null`` hides the target; ``{"content": ...}`` replaces its content.

    agent-tui adds ``restore: true`` to an edit whose replacement is the target's
    original content: pi projects it like any replacement (the original shows),
    and agent-tui reports the entry as restored rather than replaced.
    """

    type: Literal["context_edit"] = "context_edit"
    targetId: str
    replacement: ContentReplacement | None
    restore: bool | None = None


class BranchSummaryEntry(_Entry):
    type: Literal["branch_summary"] = "branch_summary"
    fromId: str
    summary: str
    details: dict[str, Any] | None = None


class ModelChangeEntry(_Entry):
    type: Literal["model_change"] = "model_change"
    provider: str
    modelId: str


class ThinkingLevelChangeEntry(_Entry):
    type: Literal["thinking_level_change"] = "thinking_level_change"
    thinkingLevel: str


class LabelEntry(_Entry):
    type: Literal["label"] = "label"
    targetId: str
    label: str | None


class SessionInfoEntry(_Entry):
    type: Literal["session_info"] = "session_info"
    name: str


class CustomEntry(_Entry):
    type: Literal["custom"] = "custom"
    customType: str
    data: Any = None


class CustomMessageEntry(_Entry):
    type: Literal["custom_message"] = "custom_message"
    customType: str
    content: str | list[dict[str, Any]]
    display: bool = True
    details: Any = None


class UsageEntry(_Entry):
    type: Literal["usage"] = "usage"
    kind: str
    provider: str | None = None
    model: str | None = None
    usage: dict[str, Any] | None = None


class PinEntry(_Entry):
    """agent-tui: keep ``targetId`` verbatim through compaction (``pinned: false`` unpins)."""

    type: Literal["pin"] = "pin"
    targetId: str
    pinned: bool = True


class UnknownEntry(_Entry):
    """A type this version does not know: kept whole, never projected."""

    type: str


_MODELS: dict[str, type[_Entry]] = {
    m.model_fields["type"].default: m
    for m in (
        MessageEntry,
        CompactionEntry,
        ContextEditEntry,
        BranchSummaryEntry,
        ModelChangeEntry,
        ThinkingLevelChangeEntry,
        LabelEntry,
        SessionInfoEntry,
        CustomEntry,
        CustomMessageEntry,
        UsageEntry,
        PinEntry,
    )
}


def _discriminate(value: Any) -> str:
    entry_type = value.get("type") if isinstance(value, dict) else getattr(value, "type", None)
    return entry_type if entry_type in _MODELS else "unknown"


AnyEntry = Annotated[
    Annotated[MessageEntry, Tag("message")]
    | Annotated[CompactionEntry, Tag("compaction")]
    | Annotated[ContextEditEntry, Tag("context_edit")]
    | Annotated[BranchSummaryEntry, Tag("branch_summary")]
    | Annotated[ModelChangeEntry, Tag("model_change")]
    | Annotated[ThinkingLevelChangeEntry, Tag("thinking_level_change")]
    | Annotated[LabelEntry, Tag("label")]
    | Annotated[SessionInfoEntry, Tag("session_info")]
    | Annotated[CustomEntry, Tag("custom")]
    | Annotated[CustomMessageEntry, Tag("custom_message")]
    | Annotated[UsageEntry, Tag("usage")]
    | Annotated[PinEntry, Tag("pin")]
    | Annotated[UnknownEntry, Tag("unknown")],
    Discriminator(_discriminate),
]

_adapter: TypeAdapter[Any] = TypeAdapter(AnyEntry)


def parse_entry(data: dict[str, Any]) -> _Entry:
    """Validate a JSON entry into its typed model (unknown types become UnknownEntry)."""
    result: _Entry = _adapter.validate_python(data)
    return result


def validate_entry(data: dict[str, Any]) -> dict[str, Any]:
    """Check an entry we are about to append and return its JSON form (unknown fields kept)."""
    return parse_entry(data).to_json()


__all__ = [
    "AnyEntry",
    "AssistantMessage",
    "BranchSummaryEntry",
    "CompactionEntry",
    "ContentReplacement",
    "ContextEditEntry",
    "CustomEntry",
    "CustomMessageEntry",
    "Field",
    "ImageContent",
    "LabelEntry",
    "MessageEntry",
    "ModelChangeEntry",
    "PinEntry",
    "SessionHeader",
    "SessionInfoEntry",
    "SystemMessage",
    "TextContent",
    "ThinkingContent",
    "ThinkingLevelChangeEntry",
    "ToolCall",
    "ToolResultMessage",
    "UnknownEntry",
    "UsageEntry",
    "UserMessage",
    "new_id",
    "now_iso",
    "now_ms",
    "parse_entry",
    "validate_entry",
]
