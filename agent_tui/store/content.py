"""What a message's content says, as text: the one home of the helpers every view shares (the tree
line, the chat, the exports, the request's system text). Content is pi's: a string, or a list of
blocks (``text``, ``thinking``, ``toolCall``, ``image``); anything else in a session file is read
as nothing rather than an error."""

from __future__ import annotations

import difflib
import json
import re
from typing import Any

from agent_tui.store.record import JSONObject
from agent_tui.terminal_text import clip


def blocks(content: Any) -> list[JSONObject]:
    """Content as a list of blocks: a string is one text block, anything odd is dropped."""
    if isinstance(content, str):
        return [{"type": "text", "text": content}] if content else []
    if isinstance(content, list):
        return [b for b in content if isinstance(b, dict)]
    return []


def content_text(content: Any, sep: str = "\n\n", *, image: str | None = None, calls: bool = False) -> str:
    """The text blocks of ``content`` joined by ``sep``; with ``image``, each image block as that
    text; with ``calls``, each tool call as ``→ name(args)``. A plain string is returned whole."""
    if isinstance(content, str):
        return content
    parts: list[str] = []
    for block in blocks(content):
        kind = block.get("type")
        if kind == "text":
            parts.append(str(block.get("text") or ""))
        elif kind == "image" and image is not None:
            parts.append(image)
        elif kind == "toolCall" and calls:
            parts.append(f"→ {block.get('name')}({args_summary(block.get('arguments'))})")
    return sep.join(parts)


#: The whitespace a shell splits words on: runs of it read as one space in a one-line summary.
_ASCII_SPACES = re.compile(r"[ \t\n\r\f\v]+")


def squeeze_spaces(text: str) -> str:
    """Runs of ASCII whitespace as one space, stripped. Other blanks (U+00A0, U+3000, U+2028...)
    stay, for the strict view to show as escapes: to a shell they are part of a word, not a
    space, so showing them as one would misstate the command (``str.split`` folded them)."""
    return _ASCII_SPACES.sub(" ", text).strip()


def args_summary(args: Any, width: int = 60) -> str:
    """A tool call's arguments on one line: ``path="src/a.py", limit=20``, each value cut to 40
    characters, the whole to ``width`` (strict: controls and every character a terminal may draw
    wider or narrower than Rich measures made visible, so nothing hides the rest of a command)."""
    if isinstance(args, dict):
        text = ", ".join(f"{k}={_cut(json.dumps(v, ensure_ascii=False), 40)}" for k, v in args.items())
    else:
        text = str(args)
    return clip(squeeze_spaces(text), width, strict=True)


def _cut(text: str, limit: int) -> str:
    """``text`` cut to ``limit`` characters, the cut said (``…``) so a cut value never reads whole."""
    return text if len(text) <= limit else text[: limit - 1] + "…"


def edit_diff(args: Any) -> str | None:
    """An edit call's replacements as one unified diff: pi's ``edits`` list or one ``oldText`` /
    ``newText`` pair, or Claude Code's ``old_string`` / ``new_string`` (and MultiEdit's list).
    None when the arguments hold no replacement."""
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
    path = args.get("path", args.get("file_path"))
    name = path if isinstance(path, str) and path else "file"
    lines = [f"--- a/{name}", f"+++ b/{name}"]
    for old_text, new_text in pairs:
        diff = difflib.unified_diff(old_text.splitlines(), new_text.splitlines(), lineterm="", n=2)
        lines.extend(list(diff)[2:])  # one header for all the replacements, above
    return "\n".join(lines)
