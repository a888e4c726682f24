"""Token estimates: characters / 3.5, as pi estimates, per message and for tools and system text."""

from __future__ import annotations

import math
from collections.abc import Iterable
from typing import Any

import msgspec

CHARS_PER_TOKEN = 3.5
IMAGE_CHARS = 4800  # an image counts as about 1,370 tokens, pi's figure

_encode = msgspec.json.Encoder().encode


def estimate_text(text: str) -> int:
    return math.ceil(len(text) / CHARS_PER_TOKEN)


def _content_chars(content: Any) -> int:
    if isinstance(content, str):
        return len(content)
    chars = 0
    if isinstance(content, list):
        for block in content:
            if not isinstance(block, dict):
                continue
            kind = block.get("type")
            if kind == "text":
                chars += len(str(block.get("text", "")))
            elif kind == "image":
                chars += IMAGE_CHARS
            elif kind == "thinking":
                chars += len(str(block.get("thinking", "")))
            elif kind == "toolCall":
                chars += len(str(block.get("name", ""))) + len(_json(block.get("arguments")))
            else:
                chars += len(_json(block))
    return chars


def estimate_message(message: dict[str, Any]) -> int:
    """Tokens one message costs: text, thinking, tool-call arguments, images; system text and tools."""
    chars = _content_chars(message.get("content"))
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
