"""The rows of the "what the model sees" panel: the next request, message by message (pure).

Rows follow what is sent, not only what is projected: the system prompt is one
row (the replayed system messages are marked as merged into it), the tool
definitions another, a message ``prepare`` leaves out (an aborted or empty
reply, an orphan result) is shown as left out with no tokens, the placeholder
results ``prepare`` adds are rows of their own, and a user message the
Anthropic request joins to the one before it (a summary followed by a pinned
message) says so. The header figure is :func:`~agent_tui.projection.tokens.context_tokens`,
the one automatic compaction decides on. Each row can give the full text it sends.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field, replace
from typing import Any

import msgspec

from agent_tui.projection import registry
from agent_tui.projection.call_history import latest_report, report_line
from agent_tui.projection.context import ProjectedMessage, Projection, Status
from agent_tui.projection.describe import first_line, message_first_line
from agent_tui.projection.image_tokens import ImageRule, anthropic_tokens
from agent_tui.projection.models import ModelInfo
from agent_tui.projection.request import Prepared, PreparedMessage, prepare, sent_content, system_prompt
from agent_tui.projection.surgery import surgery_authors
from agent_tui.projection.tokens import (
    ContextTokens,
    context_tokens,
    estimate_message,
    estimate_request,
    estimate_text,
    estimate_tools,
    image_rule,
)
from agent_tui.projection.window import learned_window
from agent_tui.store.record import Entry, JSONObject
from agent_tui.terminal_text import visible_line

_encode = msgspec.json.Encoder().encode


@dataclass(slots=True)
class PanelRow:
    """One line of the panel; ``source_id`` is None for the system prompt, the tools and notes.

    The preview text is worked out when the row is first drawn (``entry`` or
    ``message`` say where from), so 20,000 rows cost only their token counts.
    """

    role: str
    source_id: str | None
    status: str
    tokens: int
    note: str | None = None
    number: int | None = None
    entry: Entry | None = None
    message: dict[str, Any] | None = None
    sent: PreparedMessage | None = None  # what the request carries for this row (None: not sent)
    full: str | None = None  # the full text, when it is not worked out from ``sent`` / ``message``
    projected: ProjectedMessage | None = None  # what ``sent`` was made from (its content not kept)

    @property
    def text(self) -> str:
        if self.note is None:
            if self.entry is not None:
                self.note = visible_line(first_line(self.entry, 80))
            elif self.message is not None:
                self.note = visible_line(message_first_line(self.message, 80))
            else:
                self.note = ""
        return visible_line(self.note)

    def full_text(self) -> str:
        """Everything this row sends, as text (what opening the row shows)."""
        if self.full is not None:
            return self.full
        if self.sent is not None:
            if not self.sent.content and self.projected is not None:  # read again (see _slim)
                return blocks_text(sent_content(self.sent.role, self.projected.peek_message()))
            return blocks_text(self.sent.content)
        if self.message is not None:
            return blocks_text(self.message.get("content"))
        if self.entry is not None and self.entry.message is not None:
            return blocks_text(self.entry.message.get("content"))
        return self.text


def blocks_text(content: Any) -> str:
    """Message content as readable text: text, thinking, tool calls with their arguments, images."""
    if isinstance(content, str):
        return content
    parts: list[str] = []
    for block in content if isinstance(content, list) else []:
        if not isinstance(block, dict):
            continue
        kind = block.get("type")
        if kind == "text":
            parts.append(str(block.get("text", "")))
        elif kind == "thinking":
            parts.append("[thinking]\n" + str(block.get("thinking", "")))
        elif kind == "toolCall":
            parts.append(f"[tool call {block.get('name')}] {_json(block.get('arguments'))}")
        elif kind == "image":
            parts.append(f"[image {block.get('mimeType', '')}]")
        else:
            parts.append(_json(block))
    return "\n\n".join(parts)


def _json(value: Any) -> str:
    try:
        return _encode(value).decode()
    except (TypeError, msgspec.EncodeError):
        return "[unserializable]"


@dataclass(slots=True)
class PanelModel:
    rows: list[PanelRow]
    total: int  # the one context figure: ``figure.tokens``
    window: int
    model_name: str
    thinking: str
    repairs: list[str] = field(default_factory=list)
    prepared: Prepared | None = None  # its messages without their content (see _slim)
    context: str = ""  # how the figure is made
    projection: Projection | None = None  # what the rows were built from
    figure: ContextTokens | None = None
    estimated: int = 0  # everything estimated (what an edit's figure starts from: an edit voids usage)
    cache_line: str = ""  # what the latest call shared with the one before (``call_history``)

    @property
    def message_rows(self) -> list[PanelRow]:
        return [r for r in self.rows if r.number is not None]


class TokenCache:
    """Estimates by (entry, edit, position): an action changes few entries, so most are reused."""

    def __init__(self) -> None:
        self._cache: dict[tuple[str, str | None, int], int] = {}
        self._cache_line: tuple[str, str] | None = None  # (latest reply's id, its cache line)
        self.images: ImageRule = anthropic_tokens  # the rule the counts were made by

    def use(self, images: ImageRule) -> None:
        """Count images by ``images`` from now on (a model of another API: every count again)."""
        if images is not self.images:
            self._cache.clear()
            self.images = images

    def cache_line(self, path: Sequence[Entry]) -> str:
        """The latest call's cache line, worked out again only when a new reply came."""
        latest = next((e.id for e in reversed(path) if e.type == "message" and e.role == "assistant"), None)
        if latest is None:
            return ""
        if self._cache_line is None or self._cache_line[0] != latest:
            report = latest_report(path)
            self._cache_line = (latest, report_line(report) if report is not None else "")
        return self._cache_line[1]

    def get(self, key: tuple[str, str | None, int], message: ProjectedMessage) -> int:
        value = self._cache.get(key)
        if value is None:  # only now is the message decoded, for this count only
            value = estimate_message(message.peek_message(), self.images)
            self._cache[key] = value
        return value

    def count(self, key: tuple[str, str | None, int], message: JSONObject) -> None:
        """Count ``message`` (the one ``key`` names, read already) unless it is counted."""
        if key not in self._cache:
            self._cache[key] = estimate_message(message, self.images)

    def clear(self) -> None:
        self._cache.clear()

    def __len__(self) -> int:
        return len(self._cache)


_USERISH = frozenset({"user", "toolResult"})  # what the Anthropic request sends as role user


def build_panel_model(
    projection: Projection, info: ModelInfo, model_name: str, cache: TokenCache | None = None
) -> PanelModel:
    if cache is None:  # (not `cache or ...`: an empty cache is falsy, and the caller's must fill)
        cache = TokenCache()
    # images priced by the API the next request goes to (before any call: the chosen model's)
    images = image_rule(projection.model or {"provider": info.provider, "modelId": info.id})
    cache.use(images)
    keys = {
        id(m): (m.source_id, ce.edit_id, position)
        for ce in projection.entries
        for position, m in enumerate(ce.messages)
    }

    def read(m: ProjectedMessage) -> JSONObject:
        """Each message read once, counted as it is read, and kept by nothing but the request."""
        message = m.peek_message()
        key = keys.get(id(m))
        if key is not None:
            cache.count(key, message)
        return message

    prepared = _slim(prepare(projection.messages, read))
    entry = registry.find(info.provider)
    merges = entry is not None and entry.merges_roles
    counted: dict[int, int] = {}  # id(message) -> tokens, for the figure
    rows: list[PanelRow] = []
    system_tokens = estimate_text(prepared.system)
    if prepared.system:
        rows.append(
            PanelRow(
                "system",
                None,
                "sent",
                system_tokens,
                message_first_line({"content": prepared.system}, 80),
                full=prepared.system,
            )
        )
    tool_tokens = estimate_tools(prepared.tools)
    if tool_tokens:
        names = ", ".join(str(t.get("name")) for t in prepared.tools)
        rows.append(
            PanelRow(
                "tools",
                None,
                "sent",
                tool_tokens,
                f"{len(prepared.tools)} tool definitions: {names}",
                full="\n\n".join(_json(t) for t in prepared.tools),
            )
        )
    if projection.summarized_ids:
        rows.append(
            PanelRow(
                "-",
                projection.compaction_id,
                "summarized",
                0,
                f"{len(projection.summarized_ids)} earlier entries folded into the summary below",
            )
        )
    sent_by_source: dict[str, list[PreparedMessage]] = {}
    for pm in prepared.messages:
        if pm.source_id is not None:
            sent_by_source.setdefault(pm.source_id, []).append(pm)
    number = 0
    owner: str | None = None  # the last assistant message sent: its placeholders come before the next turn
    last_sent_role: str | None = None

    def flush_placeholders() -> None:
        nonlocal number, owner, last_sent_role
        for placeholder in prepared.added.get(owner or "", []) if owner is not None else []:
            number += 1
            tokens = estimate_message({"role": "toolResult", "content": placeholder.content}, images)
            name = placeholder.message.get("toolName")
            rows.append(
                PanelRow(
                    "toolResult",
                    None,
                    "added",
                    tokens,
                    f"(added for unanswered call {placeholder.message.get('toolCallId')} {name}) "
                    + blocks_text(placeholder.content),
                    number,
                    sent=placeholder,
                )
            )
            last_sent_role = "toolResult"
        owner = None

    authors = surgery_authors(projection.path)
    for ce in projection.entries:
        if not ce.messages:
            if ce.status is Status.HIDDEN:
                who = authors.get(ce.edit_id or "")
                by = f"{ce.edit_id}, {who}" if who else ce.edit_id
                rows.append(
                    PanelRow("-", ce.entry.id, "hidden", 0, f"(hidden by {by}) {first_line(ce.entry, 60)}")
                )
            continue
        sent_queue = list(sent_by_source.get(ce.entry.id, []))
        for position, m in enumerate(ce.messages):
            tokens = cache.get((m.source_id, ce.edit_id, position), m)
            counted[id(m)] = tokens
            kind = f" ({m.kind})" if m.kind != m.role else ""
            source_entry = (
                ce.entry if ce.entry.type == "message" and m.status is not Status.REPLACED else None
            )
            if m.role == "system":
                # a compaction carries the system prompt of what it folded on, whole: say so, rather
                # than credit the prompt to the compaction as if it had written it
                carried = ce.entry.type == "compaction"
                rows.append(
                    PanelRow(
                        "system",
                        m.source_id,
                        "→ system prompt",
                        0,
                        (
                            "(carried on by the compaction; merged into the system prompt above) "
                            if carried
                            else "(merged into the system prompt above) "
                        )
                        + _system_note(m.message),
                        message=m.message,
                        full=_system_full(m.message),
                    )
                )
                continue
            if m.role in ("user", "assistant"):
                flush_placeholders()
            reason = prepared.left_out.get(m.source_id) if not sent_queue else None
            if reason is not None:
                rows.append(
                    PanelRow(
                        m.role,
                        m.source_id,
                        "left out",
                        0,
                        f"(left out: {reason}) "
                        + (first_line(ce.entry, 60) if source_entry else message_first_line(m.message, 60)),
                        message=m.message,
                    )
                )
                continue
            sent = sent_queue.pop(0) if sent_queue else None
            number += 1
            status = m.status.value + kind
            if ce.edit_id is not None and (who := authors.get(ce.edit_id)):
                status += f" ({who})"  # a surgery's edit: who made it
            note: str | None = None
            if merges and sent is not None and m.role == "user" and last_sent_role in _USERISH:
                status += " +↑"
                note = "(sent in one message with the row above) " + (
                    first_line(ce.entry, 60) if source_entry else message_first_line(m.message, 60)
                )
            rows.append(
                PanelRow(
                    m.role,
                    m.source_id,
                    status,
                    tokens,
                    note,
                    number,
                    entry=source_entry,
                    message=None if source_entry else m.message,
                    sent=sent,
                    projected=m,
                )
            )
            if sent is not None:
                last_sent_role = sent.role
                if sent.role == "assistant":
                    owner = m.source_id
    flush_placeholders()

    def count(m: ProjectedMessage) -> int:
        value = counted.get(id(m))
        return value if value is not None else estimate_message(m.peek_message(), images)

    figure = context_tokens(projection, count)
    # the server's real window when an overflow taught it (the session's agent-tui.window entry)
    window = learned_window(projection.path, info.provider, info.id) or info.context_window
    return PanelModel(
        rows,
        figure.tokens,
        window,
        model_name,
        projection.thinking_level,
        prepared.repairs,
        prepared,
        figure.how(),
        projection,
        figure,
        estimate_request(projection.messages, count),
        cache.cache_line(projection.path),
    )


def _slim(prepared: Prepared) -> Prepared:
    """``prepared`` without its messages' content, which a row reads again when it is opened: a
    1 GB session's context (tool outputs, images) would otherwise stay in memory, decoded, for as
    long as the panel shows it. The placeholders ``prepare`` added keep theirs (a line each)."""
    kept = {id(pm) for added in prepared.added.values() for pm in added}
    return replace(
        prepared,
        messages=[
            pm
            if id(pm) in kept
            else PreparedMessage(
                pm.role, [], pm.source_id, {k: v for k, v in pm.message.items() if k != "content"}
            )
            for pm in prepared.messages
        ],
    )


def _system_note(message: dict[str, Any]) -> str:
    names = list((message.get("sections") or {}).keys()) if isinstance(message.get("sections"), dict) else []
    return ("sections: " + ", ".join(names)) if names else message_first_line(message, 60)


def _system_full(message: dict[str, Any]) -> str:
    text, tools = system_prompt([message])
    if tools:
        text += "\n\n" + "\n".join(f"[tool {t.get('name')}]" for t in tools)
    return text


__all__ = ["PanelModel", "PanelRow", "TokenCache", "blocks_text", "build_panel_model"]
