"""Truncation of tool output for the model, as pi's tools/truncate.js.

Two limits, whichever is hit first: 2,000 lines or 50 KB. ``truncate_head``
keeps the beginning (file reads, listings), ``truncate_tail`` the end (command
output). Neither returns a partial line, except a tail whose only line is too long.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import asdict, dataclass
from typing import Any

from agent_tui.store.record import JSONObject

DEFAULT_MAX_LINES = 2000
DEFAULT_MAX_BYTES = 50 * 1024
GREP_MAX_LINE_LENGTH = 500


@dataclass(slots=True)
class Truncation:
    content: str
    truncated: bool
    truncated_by: str | None  # "lines" | "bytes" | None
    total_lines: int
    total_bytes: int
    output_lines: int
    output_bytes: int
    last_line_partial: bool
    first_line_exceeds_limit: bool
    max_lines: int
    max_bytes: int

    def to_json(self) -> dict[str, Any]:
        """pi's field names, for a tool result's ``details``; the content itself is left out."""
        data = asdict(self)
        data.pop("content")
        return {_camel(k): v for k, v in data.items()}


def _camel(name: str) -> str:
    head, *rest = name.split("_")
    return head + "".join(p.title() for p in rest)


def byte_len(text: str) -> int:
    return len(text.encode("utf-8", "surrogatepass"))


def _lines(content: str) -> list[str]:
    if not content:
        return []
    lines = content.split("\n")
    if content.endswith("\n"):
        lines.pop()
    return lines


def format_size(size: int) -> str:
    if size < 1024:
        return f"{size}B"
    if size < 1024 * 1024:
        return f"{size / 1024:.1f}KB"
    return f"{size / (1024 * 1024):.1f}MB"


def _untouched(content: str, lines: int, size: int, max_lines: int, max_bytes: int) -> Truncation:
    """Content within both limits, returned as it is."""
    return Truncation(content, False, None, lines, size, lines, size, False, False, max_lines, max_bytes)


def _cut(
    kept: list[str],
    size: int,
    truncated_by: str,
    total_lines: int,
    total_bytes: int,
    partial: bool,
    max_lines: int,
    max_bytes: int,
) -> Truncation:
    """The result of a cut that kept ``kept`` (``size`` bytes with their newlines)."""
    if len(kept) >= max_lines and size <= max_bytes:
        truncated_by = "lines"
    out = "\n".join(kept)
    return Truncation(
        out,
        True,
        truncated_by,
        total_lines,
        total_bytes,
        len(kept),
        byte_len(out),
        partial,
        False,
        max_lines,
        max_bytes,
    )


def capped_listing(
    lines: Sequence[str],
    *,
    limit: tuple[str, str, int] | None = None,
    truncation_details: Callable[[Truncation], JSONObject] = Truncation.to_json,
    extra: Sequence[tuple[str, str, object]] = (),
) -> tuple[str, JSONObject | None]:
    """ls / find / grep output as pi's tools give it: the lines cut at 50 KB (no line cap), then
    ``[notice. notice]``, each notice with its ``details`` key. ``limit``: (notice, key, limit) when
    the tool stopped at its result limit; ``extra``: further (notice, key, value) after the cut's."""
    truncation = truncate_head("\n".join(lines), max_lines=2**53)
    text = truncation.content
    details: JSONObject = {}
    notices: list[str] = []
    if limit is not None:
        notices.append(limit[0])
        details[limit[1]] = limit[2]
    if truncation.truncated:
        notices.append(f"{format_size(DEFAULT_MAX_BYTES)} limit reached")
        details["truncation"] = truncation_details(truncation)
    for notice, key, value in extra:
        notices.append(notice)
        details[key] = value
    if notices:
        text += f"\n\n[{'. '.join(notices)}]"
    return text, details or None


def truncate_head(
    content: str, *, max_lines: int = DEFAULT_MAX_LINES, max_bytes: int = DEFAULT_MAX_BYTES
) -> Truncation:
    total_bytes = byte_len(content)
    lines = _lines(content)
    total_lines = len(lines)
    if total_lines <= max_lines and total_bytes <= max_bytes:
        return _untouched(content, total_lines, total_bytes, max_lines, max_bytes)
    if byte_len(lines[0]) > max_bytes:
        return Truncation(
            "", True, "bytes", total_lines, total_bytes, 0, 0, False, True, max_lines, max_bytes
        )
    kept: list[str] = []
    size = 0
    truncated_by = "lines"
    for i, line in enumerate(lines[:max_lines]):
        line_bytes = byte_len(line) + (1 if i > 0 else 0)
        if size + line_bytes > max_bytes:
            truncated_by = "bytes"
            break
        kept.append(line)
        size += line_bytes
    return _cut(kept, size, truncated_by, total_lines, total_bytes, False, max_lines, max_bytes)


def truncate_tail(
    content: str, *, max_lines: int = DEFAULT_MAX_LINES, max_bytes: int = DEFAULT_MAX_BYTES
) -> Truncation:
    total_bytes = byte_len(content)
    lines = _lines(content)
    total_lines = len(lines)
    if total_lines <= max_lines and total_bytes <= max_bytes:
        return _untouched(content, total_lines, total_bytes, max_lines, max_bytes)
    kept: list[str] = []
    size = 0
    truncated_by = "lines"
    partial = False
    for line in reversed(lines):
        if len(kept) >= max_lines:
            break
        line_bytes = byte_len(line) + (1 if kept else 0)
        if size + line_bytes > max_bytes:
            truncated_by = "bytes"
            if not kept:
                tail = tail_bytes(line, max_bytes)
                kept.insert(0, tail)
                size = byte_len(tail)
                partial = True
            break
        kept.insert(0, line)
        size += line_bytes
    return _cut(kept, size, truncated_by, total_lines, total_bytes, partial, max_lines, max_bytes)


def tail_bytes(text: str, max_bytes: int) -> str:
    """The last ``max_bytes`` bytes of ``text``, cut at a character boundary."""
    data = text.encode("utf-8", "surrogatepass")
    if len(data) <= max_bytes:
        return text
    start = len(data) - max_bytes
    while start < len(data) and (data[start] & 0xC0) == 0x80:
        start += 1
    return data[start:].decode("utf-8", "replace")


def truncate_line(line: str, max_chars: int = GREP_MAX_LINE_LENGTH) -> tuple[str, bool]:
    if len(line) <= max_chars:
        return line, False
    return f"{line[:max_chars]}... [truncated]", True
