"""Text bound for a terminal, made inert: the one sanitizer every face uses.

Whatever a model, a tool, a file or a session file says can hold bytes a
terminal obeys: ``ESC]52;c;…BEL`` writes the clipboard, ``ESC]0;…`` the window
title, ``ESC[2J`` wipes the screen, ``ESC[2K`` + ``ESC[1G`` or a carriage return
rewrite the line a question is on, and the bidi overrides make text read in
another order than it runs. :func:`visible` shows each of them as an escape a
person can read (``\\x1b``, ``\\x07``, ``⟨U+202E⟩``) and never emits one:

- C0 controls except newline and tab (carriage return too, except in ``\\r\\n``,
  which is a newline), DEL, and the C1 controls U+0080-U+009F;
- ESC, and with it the whole sequence it starts (CSI, OSC up to BEL or ST, DCS,
  SOS, PM, APC, two-character escapes): once its ESC is shown as ``\\x1b`` the
  rest of the sequence is ordinary text, printed as it is;
- the bidi embeddings, overrides and isolates U+202A-U+202E and U+2066-U+2069;
- lone surrogates (text cut inside an emoji), which no terminal encoding can carry.

The mapping is one character at a time, so text arriving in pieces (a
streamed reply) can be sanitized piece by piece. :func:`clip` truncates on the
sanitized text and never cuts an escape or a whole escape sequence in two.
Text that leaves as JSON is never passed through here: JSON escapes it exactly.

This module imports nothing of agent-tui (and nothing but the standard
library), so every layer may use it.
"""

from __future__ import annotations

import re
from typing import TextIO

BIDI_CONTROLS = frozenset(range(0x202A, 0x202F)) | frozenset(range(0x2066, 0x206A))


def _escape(code: int) -> str:
    if code < 0x100:
        return f"\\x{code:02x}"
    return f"⟨U+{code:04X}⟩"


def _table(keep_cr: bool) -> dict[int, str]:
    codes = [c for c in range(0x20) if c not in (0x09, 0x0A)]
    codes += [0x7F, *range(0x80, 0xA0), *sorted(BIDI_CONTROLS), *range(0xD800, 0xE000)]
    table = {code: _escape(code) for code in codes}
    if keep_cr:
        del table[0x0D]
    return table


_TABLE = _table(keep_cr=False)
_UNSAFE_CLASS = "\x00-\x08\x0b-\x1f\x7f-\x9f\u202a-\u202e\u2066-\u2069\ud800-\udfff"
_UNSAFE = re.compile(f"[{_UNSAFE_CLASS}]")
#: One escape sequence (7-bit or 8-bit introducer), or one unsafe character, or a run of safe ones.
_SEQUENCE = (
    r"(?:\x1b\[|\x9b)[0-?]*[ -/]*[@-~]?"  # CSI: parameters, intermediates, final byte
    r"|(?:\x1b[\]PX^_]|[\x90\x98\x9d\x9e\x9f])[^\x07\x1b\x9c]*(?:\x07|\x1b\\|\x9c)?"  # OSC DCS SOS PM APC
    r"|\x1b[ -/]*[0-~]?"  # two-character (and nF) escapes, or a lone ESC
)
_TOKEN = re.compile(f"{_SEQUENCE}|[{_UNSAFE_CLASS}]|[^{_UNSAFE_CLASS}]+")


def visible(text: str, *, exact: bool = False) -> str:
    """``text`` with every control a terminal would obey shown as a readable escape.

    Newlines and tabs stay. A carriage return before a newline is dropped (a
    CRLF file reads as lines), unless ``exact``: the permission dialog shows
    the command byte for byte."""
    if _UNSAFE.search(text) is None:
        return text
    if not exact:
        text = text.replace("\r\n", "\n")
    return text.translate(_TABLE)


def visible_line(text: str) -> str:
    """:func:`visible` for a one-line place (a tree row, a title): newlines and tabs become
    ``⏎`` and a space, so a second line can never pass for part of the first unseen."""
    return visible(text).replace("\n", "⏎").replace("\t", " ")


def clip(text: str, limit: int, marker: str = "…", *, one_line: bool = False) -> str:
    """:func:`visible` ``text`` (:func:`visible_line` with ``one_line``) cut to at most ``limit``
    characters, the ``marker`` included, never inside an escape or an escape sequence: those
    go whole or not at all."""
    show = visible_line if one_line else visible
    shown = show(text)
    if len(shown) <= limit:
        return shown
    budget = max(0, limit - len(marker))
    parts: list[str] = []
    used = 0
    for match in _TOKEN.finditer(text.replace("\r\n", "\n")):
        token = match.group()
        safe = _UNSAFE.search(token) is None
        piece = show(token)
        if used + len(piece) > budget:
            if safe:
                parts.append(piece[: budget - used])
            break
        parts.append(piece)
        used += len(piece)
    return "".join(parts) + marker


def cut(text: str, limit: int, marker: str = "…") -> str:
    """``text`` as it is (not sanitized) cut to at most ``limit`` characters, the ``marker``
    included, never inside an escape sequence: a sequence is kept whole or left out, so a
    cut can never leave an unterminated OSC to swallow what a terminal prints next."""
    if len(text) <= limit:
        return text
    budget = max(0, limit - len(marker))
    end = 0
    for match in _TOKEN.finditer(text):
        if match.end() > budget:
            if _UNSAFE.search(match.group()) is None:
                end = budget
            break
        end = match.end()
    return text[:end] + marker


def _pictures() -> dict[int, str]:
    table = {code: chr(0x2400 + code) for code in range(0x20) if code not in (0x09, 0x0A)}
    table[0x7F] = "\u2421"  # ␡
    for code in (*range(0x80, 0xA0), *BIDI_CONTROLS, *range(0xD800, 0xE000)):
        table[code] = "\ufffd"  # �
    return table


_PICTURES = _pictures()


def pictured(text: str) -> str:
    """:func:`visible` for text being edited: one character for one (``␛`` for ESC, ``�`` for a
    C1 control or a bidi override), so what is shown lines up with the text the cursor moves in."""
    if _UNSAFE.search(text) is None:
        return text
    return text.translate(_PICTURES)


def is_inert(text: str) -> bool:
    """Whether ``text`` holds nothing :func:`visible` would change (newline and tab allowed)."""
    return _UNSAFE.search(text) is None


class VisibleWriter:
    """A text stream that writes :func:`visible` text to the one it wraps (print mode's
    stdout and stderr when they are a terminal)."""

    def __init__(self, stream: TextIO) -> None:
        self.stream = stream

    def write(self, text: str) -> int:
        return self.stream.write(visible(text))

    def flush(self) -> None:
        self.stream.flush()

    def isatty(self) -> bool:
        return self.stream.isatty()

    def fileno(self) -> int:
        return self.stream.fileno()


def for_terminal(stream: TextIO) -> TextIO:
    """``stream`` wrapped in a :class:`VisibleWriter` when it is a terminal; as it is otherwise
    (a pipe or a file gets the exact text)."""
    try:
        tty = stream.isatty()
    except (AttributeError, ValueError):
        tty = False
    return VisibleWriter(stream) if tty else stream  # type: ignore[return-value]


__all__ = [
    "BIDI_CONTROLS",
    "VisibleWriter",
    "clip",
    "cut",
    "for_terminal",
    "is_inert",
    "visible",
    "visible_line",
]
