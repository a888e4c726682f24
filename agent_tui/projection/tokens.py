"""Token figures: estimates per message, tools and system text (characters / 3.5, where pi divides
by 4: ``make bench`` measures 3.5 against a real tokenizer), and :func:`context_tokens`, the one
figure for the size of the next request: the panel and the status line show it and automatic
compaction decides on it."""

from __future__ import annotations

import math
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import msgspec

from agent_tui.projection import registry
from agent_tui.projection.context import ProjectedMessage, Projection
from agent_tui.projection.image_tokens import RULES, ImageRule, anthropic_tokens, image_tokens
from agent_tui.projection.request import system_prompt

CHARS_PER_TOKEN = 3.5

_encode = msgspec.json.Encoder().encode


def estimate_text(text: str) -> int:
    return math.ceil(len(text) / CHARS_PER_TOKEN)


def image_rule(model: Mapping[str, Any] | None) -> ImageRule:
    """How the API of ``model`` (a projection's model setting: provider, modelId) prices an image:
    a gateway's "vendor/model" id takes the vendor's rule; Anthropic's when nothing is known."""
    if not model:
        return anthropic_tokens
    provider, model_id = model.get("provider"), model.get("modelId")
    spec = registry.find(provider) if isinstance(provider, str) else None
    if isinstance(model_id, str):
        vendor, slash, _ = model_id.partition("/")
        if slash and (named := registry.find(vendor)) is not None:
            spec = named
        elif spec is None:
            spec = registry.provider_of_model_id(model_id)
    return RULES.get(spec.images, anthropic_tokens) if spec is not None else anthropic_tokens


def _content_chars(content: Any, images: ImageRule) -> float:
    """Characters of text, or their equivalent (an image counts its tokens' worth)."""
    if isinstance(content, str):
        return len(content)
    chars: float = 0
    if isinstance(content, list):
        for block in content:
            if not isinstance(block, dict):
                continue
            kind = block.get("type")
            if kind == "text":
                chars += len(str(block.get("text", "")))
            elif kind == "image":  # by the provider's rule on the image's size (image_tokens)
                chars += image_tokens(block, images) * CHARS_PER_TOKEN
            elif kind == "thinking":
                chars += len(str(block.get("thinking", "")))
            elif kind == "toolCall":
                chars += len(str(block.get("name", ""))) + len(_json(block.get("arguments")))
            else:
                chars += len(_json(block))
    return chars


def estimate_message(message: dict[str, Any], images: ImageRule = anthropic_tokens) -> int:
    """Tokens one message costs: text, thinking, tool-call arguments, images (by ``images``, the
    rule of the API it goes to: :func:`image_rule`); system text and tools."""
    chars = _content_chars(message.get("content"), images)
    if message.get("role") == "system":
        for section in (message.get("sections") or {}).values():
            if isinstance(section, str):
                chars += len(section)
        for key in ("toolsAdded", "toolsRemoved"):
            tools = message.get(key)
            if tools:
                chars += len(_json(tools))
    return math.ceil(chars / CHARS_PER_TOKEN)


def estimate_tools(tools: Iterable[dict[str, Any]]) -> int:
    tools = list(tools)
    return math.ceil(len(_json(tools)) / CHARS_PER_TOKEN) if tools else 0


def _json(value: Any) -> str:
    try:
        return _encode(value).decode()
    except (TypeError, msgspec.EncodeError):
        return "[unserializable]"


# -- the size of the next request ---------------------------------------------------------

#: Tokens of one projected message (the panel passes its cache; the default estimates afresh).
MessageCount = Callable[[ProjectedMessage], int]


def _estimate_projected(m: ProjectedMessage) -> int:
    return estimate_message(m.message)


def counter(images: ImageRule) -> MessageCount:
    """A :data:`MessageCount` pricing images by ``images``."""
    if images is anthropic_tokens:
        return _estimate_projected
    return lambda m: estimate_message(m.message, images)


@dataclass(frozen=True, slots=True)
class ContextTokens:
    """Tokens of the next request: the last valid reported usage plus an estimate of what came after."""

    tokens: int
    usage_tokens: int  # from the provider's report (0 when none applies)
    trailing_tokens: int  # estimated
    usage_entry_id: str | None  # the assistant entry whose usage was used

    @property
    def estimated_only(self) -> bool:
        return self.usage_entry_id is None

    def how(self) -> str:
        """How the figure is made, in words (the panel shows it under the figure)."""
        if self.usage_entry_id is None:
            return "estimated (no reply since the last edit or compaction reported usage)"
        return (
            f"{self.usage_tokens:,} reported by reply {self.usage_entry_id} "
            f"+ {self.trailing_tokens:,} estimated after it"
        )


def usage_total(usage: Any) -> int:
    if not isinstance(usage, dict):
        return 0
    total = usage.get("totalTokens")
    if isinstance(total, int) and total > 0:
        return total
    return sum(
        v for k in ("input", "output", "cacheRead", "cacheWrite") if isinstance(v := usage.get(k), int)
    )


def context_tokens(projection: Projection, count: MessageCount | None = None) -> ContextTokens:
    """pi's estimateProjectedContextTokens.

    The latest assistant message in view that reports usage (not aborted, not an
    error, not zero) counts as reported, plus an estimate of every message after it,
    unless a compaction or context edit on the path came after that message: then
    the reported figure describes a context that no longer exists and everything is
    estimated (:func:`estimate_request`). ``count`` estimates one message (a cache).
    """
    count = count or counter(image_rule(projection.model))
    messages = projection.messages
    usage_index = -1
    for i in range(len(messages) - 1, -1, -1):
        m = messages[i]
        if m.role != "assistant":
            continue
        msg = m.message
        if msg.get("stopReason") in ("aborted", "error") or usage_total(msg.get("usage")) <= 0:
            continue
        usage_index = i
        break
    if usage_index >= 0:
        source = messages[usage_index].source_id
        position = {e.id: i for i, e in enumerate(projection.path)}
        latest_invalidating = max(
            (i for i, e in enumerate(projection.path) if e.type in ("context_edit", "compaction")), default=-1
        )
        if position.get(source, -1) > latest_invalidating:
            reported = usage_total(messages[usage_index].message.get("usage"))
            trailing = sum(count(m) for m in messages[usage_index + 1 :])
            return ContextTokens(reported + trailing, reported, trailing, source)
    estimated = estimate_request(messages, count)
    return ContextTokens(estimated, 0, estimated, None)


def context_line(projection: Projection, window: int) -> str:
    """The figure in one line, with how it is made (``agent-tui context --format text`` prints it)."""
    tokens = context_tokens(projection)
    percent = 100 * tokens.tokens / window if window else 0
    return f"context ≈ {tokens.tokens:,} tokens ({percent:.1f}%) = {tokens.how()}"


def estimate_request(
    messages: Sequence[ProjectedMessage],
    count: MessageCount | None = None,
    images: ImageRule = anthropic_tokens,
) -> int:
    """Everything estimated: the replayed system prompt and tools once, then each message (images
    by ``images`` unless ``count`` says how)."""
    count = count or counter(images)
    system, tools = system_prompt([m.message for m in messages if m.role == "system"])
    total = estimate_text(system) + estimate_tools(tools)
    return total + sum(count(m) for m in messages if m.role != "system")
