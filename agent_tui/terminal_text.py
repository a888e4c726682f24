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
- lone surrogates (text cut inside an emoji), which no terminal encoding can carry;
- the characters that draw nothing or hide what follows: zero-width spaces and joiners
  that join nothing (U+200B, U+2060-U+2064, U+FEFF, U+180E), the bidi marks U+200E,
  U+200F and U+061C, the deprecated format characters U+206A-U+206F, the interlinear
  annotation marks, the tag characters U+E0000-U+E007F, and the Hangul fillers U+115F,
  U+1160, U+3164 and U+FFA0 (Rich measures U+3164 as 0 cells, terminals draw 2: 45 of
  them pushed ``; rm -f victim`` past the edge of the permission question).

``strict`` (:func:`visible_strict`) is for what a person decides on: the command of a
permission question, a decision line, a command shown. It keeps only the characters whose
width Rich and the terminals agree on (printable ASCII; the letters, digits, punctuation
and symbols of the Latin, Greek, Cyrillic, Armenian and Georgian scripts and the common
symbol blocks, all one cell; the CJK ideographs, kana, Hangul syllables and full-width
forms, two cells) and shows every other one as ``⟨U+XXXX⟩``: emoji (their joiners and
variation selectors make one glyph of several, 1 cell or 2 depending on the terminal),
combining marks, right-to-left scripts, blanks other than the space, anything unassigned.

The mapping is one character at a time, so text arriving in pieces (a
streamed reply) can be sanitized piece by piece. :func:`clip` truncates on the
sanitized text and never cuts an escape or a whole escape sequence in two.
Text that leaves as JSON is never passed through here: JSON escapes it exactly.

This module imports nothing of agent-tui (and nothing but the standard
library: widths come from ``unicodedata``; the tests check them against Rich, ``wcwidth``
and a real terminal), so every layer may use it.
"""

from __future__ import annotations

import re
import unicodedata
from functools import lru_cache
from typing import TextIO

BIDI_CONTROLS = frozenset(range(0x202A, 0x202F)) | frozenset(range(0x2066, 0x206A))
#: Characters that draw nothing (or a blank Rich measures otherwise than terminals draw it),
#: escaped wherever untrusted text is shown.
INVISIBLE = (
    frozenset({0x061C, 0x115F, 0x1160, 0x180E, 0x200B, 0x200E, 0x200F, 0x3164, 0xFEFF, 0xFFA0})
    | frozenset(range(0x2060, 0x2065))
    | frozenset(range(0x206A, 0x2070))
    | frozenset(range(0xFFF9, 0xFFFC))
    | frozenset(range(0xE0000, 0xE0080))
)


def _escape(code: int) -> str:
    if code < 0x100:
        return f"\\x{code:02x}"
    return f"⟨U+{code:04X}⟩"


def _table(keep_cr: bool) -> dict[int, str]:
    codes = [c for c in range(0x20) if c not in (0x09, 0x0A)]
    codes += [0x7F, *range(0x80, 0xA0), *sorted(BIDI_CONTROLS | INVISIBLE), *range(0xD800, 0xE000)]
    table = {code: _escape(code) for code in codes}
    if keep_cr:
        del table[0x0D]
    return table


_TABLE = _table(keep_cr=False)
_UNSAFE_CLASS = (
    "\x00-\x08\x0b-\x1f\x7f-\x9f\u202a-\u202e\u2066-\u2069\ud800-\udfff"
    "\u061c\u115f\u1160\u180e\u200b\u200e\u200f\u2060-\u2064\u206a-\u206f\u3164\ufeff\ufff9-\ufffb"
    "\uffa0\U000e0000-\U000e007f"
)
_UNSAFE = re.compile(f"[{_UNSAFE_CLASS}]")
#: One escape sequence (7-bit or 8-bit introducer), or one unsafe character, or a run of safe ones.
_SEQUENCE = (
    r"(?:\x1b\[|\x9b)[0-?]*[ -/]*[@-~]?"  # CSI: parameters, intermediates, final byte
    r"|(?:\x1b[\]PX^_]|[\x90\x98\x9d\x9e\x9f])[^\x07\x1b\x9c]*(?:\x07|\x1b\\|\x9c)?"  # OSC DCS SOS PM APC
    r"|\x1b[ -/]*[0-~]?"  # two-character (and nF) escapes, or a lone ESC
)
_TOKEN = re.compile(f"{_SEQUENCE}|[{_UNSAFE_CLASS}]|[^{_UNSAFE_CLASS}]+")


#: Blocks of one-cell characters (letters, digits, punctuation, symbols) whose width Rich and
#: the terminals agree on; within them only the assigned letters, numbers, punctuation and
#: symbols of ``unicodedata`` are kept (no marks, no format characters, no blanks).
_NARROW_BLOCKS = (
    (0x00A1, 0x024F),  # Latin-1 and Latin Extended-A/B (the soft hyphen is a format character)
    (0x0250, 0x02FF),  # IPA, spacing modifier letters
    (0x0370, 0x052F),  # Greek, Cyrillic
    (0x0531, 0x058F),  # Armenian
    (0x10A0, 0x10FF),  # Georgian
    (0x1E00, 0x1FFF),  # Latin Extended Additional, Greek Extended
    (0x2010, 0x205E),  # general punctuation (its blanks and format characters are not kept)
    (0x2070, 0x20C0),  # super- and subscripts, currency
    (0x2100, 0x22FF),  # letterlike, number forms, arrows, mathematical operators
    (0x2300, 0x23FF),  # technical (its emoji are wide: not kept, see below)
    (0x2500, 0x25FF),  # box drawing, block elements, geometric shapes
    (0x27E6, 0x27EF),  # mathematical brackets (the escapes' own ⟨ ⟩)
    (0x2C60, 0x2C7F),  # Latin Extended-C
    (0xA720, 0xA7FF),  # Latin Extended-D
    (0xFB00, 0xFB06),  # Latin ligatures
    (0xFF61, 0xFF9F),  # half-width katakana
    (0xFFFD, 0xFFFD),  # the replacement character
)
#: Blocks of two-cell characters both agree on: CJK ideographs and symbols, kana, Hangul
#: syllables (not the conjoining jamo: a terminal may draw a syllable of them), full-width forms.
_WIDE_BLOCKS = (
    (0x2E80, 0x2FDF),  # CJK and Kangxi radicals
    (0x3001, 0x303E),  # CJK symbols and punctuation (not U+3000, a blank)
    (0x3041, 0x30FF),  # hiragana, katakana
    (0x3105, 0x318E),  # bopomofo, Hangul compatibility jamo (not U+3164, the filler)
    (0x3190, 0x4DBF),  # kanbun, CJK strokes, enclosed CJK, CJK compatibility, extension A
    (0x4E00, 0x9FFF),  # CJK unified ideographs
    (0xA000, 0xA4CF),  # Yi
    (0xAC00, 0xD7A3),  # Hangul syllables
    (0xF900, 0xFAFF),  # CJK compatibility ideographs
    (0xFE30, 0xFE6F),  # CJK compatibility forms, small form variants
    (0xFF01, 0xFF60),  # full-width forms
    (0xFFE0, 0xFFE6),
    (0x20000, 0x2FFFD),  # CJK extensions B-F, compatibility supplement
    (0x30000, 0x3FFFD),  # CJK extensions G-H
)


def _within(code: int, blocks: tuple[tuple[int, int], ...]) -> bool:
    return any(first <= code <= last for first, last in blocks)


@lru_cache(maxsize=4096)
def plain_width(code: int) -> int | None:
    """The cells character ``code`` takes, 1 or 2, when it is in the set whose width Rich and
    the terminals agree on (printable ASCII and the blocks above); None for every other one
    (:func:`visible_strict` shows it as an escape)."""
    if 0x20 <= code < 0x7F:
        return 1
    if code in INVISIBLE or code in BIDI_CONTROLS or 0xD800 <= code < 0xE000:
        return None
    character = chr(code)
    if unicodedata.category(character)[0] not in "LNPS":  # marks, controls, formats, blanks, unassigned
        return None
    if unicodedata.east_asian_width(character) in ("W", "F"):
        return 2 if _within(code, _WIDE_BLOCKS) else None  # emoji are wide: they are not kept
    return 1 if _within(code, _NARROW_BLOCKS) else None


def _strict_escape(match: re.Match[str]) -> str:
    character = match.group()
    code = ord(character)
    return character if plain_width(code) is not None else _escape(code)


#: Every character the strict mode looks at: all but printable ASCII, newline and tab.
_NOT_ASCII = re.compile("[^\t\n\x20-\x7e]")


def visible(text: str, *, exact: bool = False, strict: bool = False) -> str:
    """``text`` with every control a terminal would obey shown as a readable escape.

    Newlines and tabs stay. A carriage return before a newline is dropped (a
    CRLF file reads as lines), unless ``exact``: the permission dialog shows
    the command byte for byte. ``strict``: every character whose width Rich and a
    terminal may not agree on is an escape too (see :func:`visible_strict`)."""
    if strict:
        if not exact:
            text = text.replace("\r\n", "\n")
        return _NOT_ASCII.sub(_strict_escape, text)
    if _UNSAFE.search(text) is None:
        return text
    if not exact:
        text = text.replace("\r\n", "\n")
    return text.translate(_TABLE)


def visible_strict(text: str, *, exact: bool = False) -> str:
    """:func:`visible` for what a person decides on (a permission question, a decision line, a
    command shown): only printable ASCII and the characters :func:`plain_width` knows are
    shown as they are, each drawn at the width Rich lays it out at; every other one is
    ``⟨U+XXXX⟩`` (``\\xNN`` below U+0100), so no character can hide the ones after it."""
    return visible(text, exact=exact, strict=True)


def visible_line(text: str, *, strict: bool = False) -> str:
    """:func:`visible` for a one-line place (a tree row, a title): newlines and tabs become
    ``⏎`` and a space, so a second line can never pass for part of the first unseen."""
    return visible(text, strict=strict).replace("\n", "⏎").replace("\t", " ")


def clip(text: str, limit: int, marker: str = "…", *, one_line: bool = False, strict: bool = False) -> str:
    """:func:`visible` ``text`` (:func:`visible_line` with ``one_line``; strict with ``strict``) cut
    to at most ``limit`` characters, the ``marker`` included, never inside an escape or an escape
    sequence: those go whole or not at all."""

    def show(part: str) -> str:
        return visible_line(part, strict=strict) if one_line else visible(part, strict=strict)

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
            if safe and strict:  # escapes among its characters: cut between whole characters
                for character in token:
                    shown_character = show(character)
                    if used + len(shown_character) > budget:
                        break
                    parts.append(shown_character)
                    used += len(shown_character)
            elif safe:
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
    for code in (*range(0x80, 0xA0), *BIDI_CONTROLS, *INVISIBLE, *range(0xD800, 0xE000)):
        table[code] = "\ufffd"  # �
    return table


_PICTURES = _pictures()


def pictured(text: str) -> str:
    """:func:`visible` for text being edited: one character for one (``␛`` for ESC, ``�`` for a
    C1 control, a bidi override or an invisible character), so what is shown lines up with the text the cursor moves in."""
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
    "INVISIBLE",
    "VisibleWriter",
    "clip",
    "cut",
    "for_terminal",
    "is_inert",
    "plain_width",
    "visible",
    "visible_line",
    "visible_strict",
]
