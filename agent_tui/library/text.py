"""Plain text out of message content, shared by the exports."""

from __future__ import annotations

import difflib
import json
import re
from typing import Any

from agent_tui.store.index import SessionIndex
from agent_tui.store.record import JSONObject


def blocks(content: Any) -> list[JSONObject]:
    """Content as a list of blocks: a string is one text block, anything odd is dropped."""
    if isinstance(content, str):
        return [{"type": "text", "text": content}] if content else []
    if isinstance(content, list):
        return [b for b in content if isinstance(b, dict)]
    return []


def content_text(content: Any) -> str:
    """The text blocks of ``content``, joined by blank lines."""
    return "\n\n".join(str(b.get("text") or "") for b in blocks(content) if b.get("type") == "text")


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


def edit_diff(args: Any) -> str | None:
    """An edit tool call's replacements as a unified diff (pi's ``edits`` list, or one old/new pair)."""
    if not isinstance(args, dict):
        return None
    pairs: list[tuple[str, str]] = []
    edits = args.get("edits")
    for e in edits if isinstance(edits, list) else []:
        if isinstance(e, dict):
            pairs.append(
                (
                    str(e.get("oldText", e.get("old_string", ""))),
                    str(e.get("newText", e.get("new_string", ""))),
                )
            )
    old = args.get("oldText", args.get("old_string"))
    new = args.get("newText", args.get("new_string"))
    if isinstance(old, str) and isinstance(new, str):
        pairs.append((old, new))
    if not pairs:
        return None
    lines: list[str] = []
    for old_text, new_text in pairs:
        diff = difflib.unified_diff(
            old_text.splitlines(), new_text.splitlines(), "before", "after", lineterm="", n=2
        )
        lines.extend(list(diff)[2:])
    return "\n".join(lines)
