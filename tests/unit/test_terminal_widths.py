"""Characters whose width Rich and a terminal disagree on cannot hide the rest of a command.

``echo building docs`` + 45 × U+3164 (HANGUL FILLER) + ``; rm -f victim``: Rich measures U+3164
as 0 cells, terminals draw 2, so the permission question showed ``echo building docs`` and blank
cells, and ``y`` deleted ``victim``. :func:`visible_strict` keeps only the characters whose width
Rich, ``wcwidth`` (a terminal's table) and ``unicodedata`` agree on (and tmux, in
tests/e2e/test_safety_widths.py) and escapes every other one;
:func:`visible` escapes the zero-width, tag and fill characters everywhere. Class by class here;
in a real terminal in tests/e2e/test_safety_widths.py.
"""

from __future__ import annotations

import unicodedata

import pytest
import wcwidth
from hypothesis import given
from hypothesis import strategies as st
from rich.cells import cell_len

from agent_tui.terminal_text import (
    INVISIBLE,
    clip,
    is_inert,
    pictured,
    plain_width,
    visible,
    visible_line,
    visible_strict,
)

ATTACK = "echo building docs" + "\u3164" * 45 + "; rm -f victim"

#: Each class of character a model can put in a command, with samples.
ESCAPED_CLASSES: dict[str, list[str]] = {
    "Hangul fillers (Rich 0, terminals 1-2)": ["\u3164", "\uffa0", "\u115f", "\u1160"],
    "zero-width": ["\u200b", "\u200c", "\u200d", "\u2060", "\u2061", "\u2064", "\ufeff", "\u180e"],
    "bidi marks": ["\u200e", "\u200f", "\u061c"],
    "tags": ["\U000e0001", "\U000e0041", "\U000e007f"],
    "variation selectors": ["\ufe0f", "\ufe0e", "\ufe00", "\U000e0100"],
    "emoji": ["\U0001f44d", "\U0001f600", "\u231a", "\u2764", "\U0001f1fa"],
    "combining marks": ["\u0301", "\u0300", "\u034f", "\u20dd", "\u0e33"],
    "right-to-left letters": ["\u05d0", "\u0627", "\u0710"],
    "other scripts' letters": ["\u0915", "\u0e01", "\u1780"],
    "conjoining jamo": ["\u1100", "\u1161", "\u11a8"],
    "blanks": ["\u00a0", "\u2002", "\u2007", "\u202f", "\u3000", "\u303f", "\u2800"],
    "soft hyphen and format characters": ["\u00ad", "\u2028", "\u2029", "\ufff9"],
    "private use and unassigned": ["\ue000", "\U000f0000", "\u0378", "\U0001fffe"],
}
KEPT_CLASSES: dict[str, list[tuple[str, int]]] = {
    "ASCII": [("a", 1), ("~", 1), (" ", 1)],
    "Latin": [("é", 1), ("ß", 1), ("Ł", 1), ("ẞ", 1)],
    "Greek and Cyrillic": [("λ", 1), ("Ж", 1), ("ё", 1)],
    "punctuation and symbols": [("—", 1), ("…", 1), ("€", 1), ("→", 1), ("│", 1), ("⟨", 1), ("⏎", 1)],
    "CJK": [("中", 2), ("ア", 2), ("あ", 2), ("한", 2), ("Ａ", 2), ("。", 2), ("ㄱ", 2)],
    "half-width katakana": [("ｱ", 1)],
}


@pytest.mark.parametrize("name", ESCAPED_CLASSES)
def test_strict_escapes_every_character_of_a_class_terminals_may_draw_otherwise(name: str) -> None:
    for character in ESCAPED_CLASSES[name]:
        shown = visible_strict(f"a{character}b")
        code = ord(character)
        assert shown == (f"a\\x{code:02x}b" if code < 0x100 else f"a⟨U+{code:04X}⟩b"), (name, shown)
        assert plain_width(code) is None


@pytest.mark.parametrize("name", KEPT_CLASSES)
def test_strict_keeps_the_characters_all_agree_on(name: str) -> None:
    for character, width in KEPT_CLASSES[name]:
        assert visible_strict(f"a{character}b") == f"a{character}b", name
        assert plain_width(ord(character)) == width == cell_len(character) == wcwidth.wcwidth(character)


def test_the_attack_command_shows_its_tail_and_its_fillers() -> None:
    shown = visible_strict(ATTACK, exact=True)
    assert shown == "echo building docs" + "⟨U+3164⟩" * 45 + "; rm -f victim"
    assert visible(ATTACK) == shown  # the filler is escaped everywhere, not only in the question
    assert cell_len(ATTACK) == cell_len("echo building docs; rm -f victim")  # what Rich lays out
    # (tmux draws it 90 cells wider: tests/e2e/test_safety_widths.py; wcwidth 0.9 measures U+3164
    # as Rich does, so the tables alone cannot tell: the terminal is asked)


def test_strict_keeps_controls_escaped_as_visible_does() -> None:
    raw = "ls\r\n\x1b]52;c;eA==\x07\u202eend\x9b2J\ttab"
    assert visible_strict(raw) == visible(raw)
    assert visible_strict(raw, exact=True) == visible(raw, exact=True)
    assert visible_line("a\u3164\nb", strict=True) == "a⟨U+3164⟩⏎b"


def test_zwj_sequences_and_vs16_emoji_are_escaped_in_strict_and_kept_elsewhere() -> None:
    family = "\U0001f468\u200d\U0001f469\u200d\U0001f467"
    heart = "\u2764\ufe0f"
    assert visible_strict(family) == "⟨U+1F468⟩⟨U+200D⟩⟨U+1F469⟩⟨U+200D⟩⟨U+1F467⟩"
    assert visible_strict(heart) == "⟨U+2764⟩⟨U+FE0F⟩"
    assert visible(f"{family} {heart}") == f"{family} {heart}"  # a reply's emoji stay emoji


@pytest.mark.parametrize("code", sorted(INVISIBLE))
def test_visible_escapes_every_zero_width_tag_and_fill_character(code: int) -> None:
    character = chr(code)
    assert visible(f"a{character}b") == f"a⟨U+{code:04X}⟩b"
    assert visible(f"a{character}b", exact=True) == f"a⟨U+{code:04X}⟩b"
    assert not is_inert(character)
    assert pictured(f"a{character}b") == "a\ufffdb"  # the composer: one character for one


def test_clip_strict_never_cuts_an_escape() -> None:
    for limit in range(1, 60):
        shown = clip(ATTACK, limit, strict=True)
        assert len(shown) <= limit
        body = shown.removesuffix("…")
        assert body.count("⟨") == body.count("⟩"), shown
        assert (visible_strict(ATTACK)).startswith(body)
    assert clip(ATTACK, 400, strict=True) == visible_strict(ATTACK)


def test_every_kept_character_has_the_width_rich_and_wcwidth_give_it() -> None:
    """The whole of Unicode: a character the strict mode keeps is drawn as wide as Rich lays it out
    (and as ``wcwidth``, a terminal's table, says), 1 cell or 2, nothing else."""
    kept = 0
    disagree: list[str] = []
    for code in range(0x110000):
        width = plain_width(code)
        if width is None:
            continue
        kept += 1
        character = chr(code)
        if not (cell_len(character) == width == wcwidth.wcwidth(character)):
            disagree.append(
                f"U+{code:04X} {width} rich {cell_len(character)} wcwidth {wcwidth.wcwidth(character)}"
            )
    assert not disagree, disagree[:20]
    assert kept > 100_000  # the CJK ideographs, the scripts of width 1: not an empty set


def test_every_character_rich_and_wcwidth_disagree_on_is_escaped() -> None:
    """And the other way: every single character whose width Rich and ``wcwidth`` disagree on is
    shown as an escape by the strict mode (and the known ones by :func:`visible` too)."""
    disagree = []
    for code in range(0x110000):
        if 0xD800 <= code < 0xE000:
            continue
        character = chr(code)
        if unicodedata.category(character) in ("Cn", "Co"):
            continue
        if cell_len(character) != max(0, wcwidth.wcwidth(character)):
            disagree.append(code)
            assert visible_strict(character) != character, f"U+{code:04X}"
    assert disagree  # the regional indicators, at least: the check is not empty


@given(st.text(max_size=60))
def test_strict_output_is_made_of_kept_characters_only(raw: str) -> None:
    shown = visible_strict(raw)
    assert all(c in "\n\t" or plain_width(ord(c)) is not None for c in shown)
    assert visible_strict(shown) == shown  # shown twice, escaped once
    assert visible(shown) == shown
