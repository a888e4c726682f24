"""Plain text out of message content, shared by the exports."""

from __future__ import annotations

import json
import re
from typing import Any

from agent_tui.store.content import blocks
from agent_tui.store.index import SessionIndex
from agent_tui.store.record import JSONObject


def args_json(arguments: Any) -> str:
    """Tool call arguments as readable JSON."""
    try:
        return json.dumps(arguments, indent=2, ensure_ascii=False)
    except (TypeError, ValueError):
        return str(arguments)


def tool_calls_by_id(index: SessionIndex) -> dict[str, JSONObject]:
    """Every tool call block of the file, by its call id (results name their call)."""
    calls: dict[str, JSONObject] = {}
    for entry in index.entries:
        if entry.type != "message" or entry.role != "assistant":
            continue
        for block in blocks((entry.message or {}).get("content")):
            if block.get("type") == "toolCall" and isinstance(block.get("id"), str):
                calls[block["id"]] = block
    return calls


def longest_run(text: str, char: str) -> int:
    """The longest run of ``char`` in ``text`` (to pick a fence that cannot be closed early)."""
    if char not in text:
        return 0
    return max(len(m) for m in re.findall(re.escape(char) + "+", text))


def fence(text: str, lang: str = "") -> str:
    """``text`` in a Markdown code fence longer than any backtick run inside it."""
    ticks = "`" * max(3, longest_run(text, "`") + 1)
    return f"{ticks}{lang}\n{text.rstrip(chr(10))}\n{ticks}"
