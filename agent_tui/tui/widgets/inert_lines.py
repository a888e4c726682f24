"""Editable text (the composer, the replace editor, prompts) drawn without raw terminal controls.

``TextArea`` and ``Input`` draw their text as it is, so an entry's text put into
the composer or the replace editor would send its ``ESC]52;…`` to the terminal.
:class:`InertLines` maps every line drawn through ``terminal_text.pictured``
(``␛`` for ESC, one character for one, so the cursor still lines up); the text
being edited keeps its exact characters.
"""

from __future__ import annotations

from rich.segment import Segment
from textual.strip import Strip
from textual.widgets import Input, TextArea

from agent_tui.terminal_text import is_inert, pictured


def inert_strip(strip: Strip) -> Strip:
    """``strip`` with the terminal controls in its text shown as pictures (the same strip if none)."""
    if all(segment.control or is_inert(segment.text) for segment in strip):
        return strip
    return Strip(
        [Segment(pictured(s.text), s.style, s.control) if not s.control else s for s in strip],
        strip.cell_length,
    )


class InertLines:
    """A mixin for Line-API widgets: every line they draw is made inert."""

    def render_line(self, y: int) -> Strip:
        return inert_strip(super().render_line(y))  # type: ignore[misc]


class InertTextArea(InertLines, TextArea):
    """A ``TextArea`` whose text never reaches the terminal as controls."""


class InertInput(InertLines, Input):
    """An ``Input`` whose text never reaches the terminal as controls."""
