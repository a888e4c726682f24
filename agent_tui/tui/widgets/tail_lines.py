"""The plain tail of a streamed reply, rendered a line at a time.

A ``Static`` holding the tail renders all of its text again whenever it changes, and again when
its size does: with a long open code fence in the tail (300 lines and more), every flush of the
reply cost a frame of 7-18 ms for the tail alone, while keys typed meanwhile waited
(``bench/tui_bench.py``). :class:`TailLines` keeps each finished line of the tail rendered once
(per width and style): while the tail grows at its end, a flush renders the lines that came since
the last one and the unfinished last line, and a frame replays the rows it shows. When the tail
starts elsewhere (finished blocks went to Markdown above it) it is rendered anew, as a ``Static``
is; that happens when a block ends, and the tail is short then.

It draws what a ``Static`` with the same text draws, row for row and cell for cell: each line
goes through Textual's own ``Content`` layout with the widget's style and rules (so it wraps as
the Static did, and as the highlighted block of a fence will), each row carries the offset a
mouse selection reads, an empty tail or one that ends with a newline takes a row for the line to
come, and a selection is drawn and copied as in a ``Static``. The text is untrusted (the
model's): it is shown through ``terminal_text.visible``, never as markup.
"""

from __future__ import annotations

from typing import cast

from textual.content import Content
from textual.css.types import TextAlign, TextOverflow
from textual.geometry import Size
from textual.selection import Selection
from textual.strip import Strip
from textual.style import Style
from textual.visual import Visual
from textual.widget import Widget

from agent_tui.terminal_text import visible
from agent_tui.tui.widgets import one_layout_pass


def finished_line(line: str) -> str:
    """A finished line (its newline taken off) as shown: a carriage return before the newline
    goes, as :func:`visible` drops it in the whole text."""
    return visible(line + "\n")[:-1]


class TailLines(Widget):
    """Plain text that grows at its end, rendered line by line."""

    DEFAULT_CSS = "TailLines { height: auto; }"

    _size_updated = one_layout_pass.size_updated  # growing costs one layout, not two

    def __init__(self, *, id: str | None = None, classes: str | None = None) -> None:
        super().__init__(id=id, classes=classes)
        self._source = ""  # the text the tail was taken from (the reply's, so far)
        self._start = 0  # where in it the tail begins
        self._lines: list[str] = []  # the tail's finished lines as shown, without their newlines
        self._last = ""  # and its unfinished last line (after the last newline), as it came
        self._key: tuple[int, Style] | None = None  # the width and style the rows are for
        self._rows: list[Strip] = []  # the finished lines' rows, in order
        self._last_rows: list[Strip] = []
        self._selected: tuple[object, list[Strip]] | None = None  # rows drawn with a selection
        self.rendered = 0  # lines rendered so far (the unfinished one each time): what flushes cost

    @property
    def text(self) -> str:
        """The text shown (as it came: before :func:`visible`)."""
        return self._source[self._start :]

    def show(self, source: str, start: int) -> None:
        """Show ``source[start:]``. When ``source`` is the last one grown at its end and ``start``
        is the same, only the new lines are rendered; otherwise all of it."""
        if source is self._source and start == self._start:
            return
        height = self._height()
        if start == self._start and source.startswith(self._source):
            self._extend(source[len(self._source) :], source)
        else:
            self._source, self._start = source[:start], start
            self._lines, self._last = [], ""
            self._key, self._rows, self._last_rows = None, [], []  # rendered at the next layout
            self._extend(source[start:], source)
        self._selected = None
        # A tail whose number of rows stays is repainted without a layout of the screen.
        self.refresh(layout=height is None or height != self._height())

    def _height(self) -> int | None:
        """The rows at the width they were rendered at (None: not rendered yet)."""
        if self._key is None:
            return None
        return len(self._rows) + len(self._last_rows)

    def _extend(self, added: str, source: str) -> None:
        self._source = source
        if not added:
            return
        parts = (self._last + added).split("\n")
        self._last = parts[-1]
        if self._key is None:
            self._lines.extend(finished_line(line) for line in parts[:-1])
            return
        width, style = self._key
        for line in parts[:-1]:
            shown = finished_line(line)
            self._rows.extend(self._line_rows(shown, len(self._lines), width, style))
            self._lines.append(shown)
        self._last_rows = self._line_rows(visible(self._last), len(self._lines), width, style)

    def _line_rows(self, line: str, y: int, width: int, style: Style) -> list[Strip]:
        """Line ``y`` of the tail (no newline in it) as the rows a ``Static`` with the whole tail
        draws for it at ``width``: ``Content.render_strips`` for one line, its rows told which line
        they are (a selection reads it)."""
        self.rendered += 1
        get_rule = self.styles.get  # the rules as ``Content.render_strips`` reads them
        formatted = Content(line)._wrap_and_format(
            width,
            align=cast(TextAlign, get_rule("text_align", "left")),
            overflow=cast(TextOverflow, get_rule("text_overflow", "fold")),
            no_wrap=get_rule("text_wrap", "wrap") == "nowrap",
            line_pad=cast(int, get_rule("line_pad", 0)),
            tab_size=8,
            get_style=self._get_style,
        )
        for row in formatted:
            row.y = y
        return [Strip(*row.to_strip(style)) for row in formatted]

    def _layout(self, width: int) -> int:
        """The number of rows at ``width`` (rendered first if they were not yet)."""
        key = (max(1, width), self.visual_style)
        if key != self._key:
            self._key = key
            self._rows = [row for y, line in enumerate(self._lines) for row in self._line_rows(line, y, *key)]
            self._last_rows = self._line_rows(visible(self._last), len(self._lines), *key)
        return len(self._rows) + len(self._last_rows)

    def get_content_height(self, container: Size, viewport: Size, width: int) -> int:
        return self._layout(width) if width else 0

    def get_selection(self, selection: Selection) -> tuple[str, str] | None:
        """The selected text, as a ``Static`` gives it."""
        return selection.extract(visible(self.text)), "\n"

    def _selection_rows(self, width: int) -> list[Strip]:
        """The rows drawn whole, the selection in them, as a ``Static`` draws them (only while
        there is a selection)."""
        key = (width, self.visual_style, self.text_selection)
        if self._selected is None or self._selected[0] != key:
            rows = Visual.to_strips(self, Content(visible(self.text)), width, None, self.visual_style)
            self._selected = (key, rows)
        return self._selected[1]

    def render_line(self, y: int) -> Strip:
        width = self.size.width
        if self.text_selection is not None:
            rows = self._selection_rows(width)
        else:
            self._layout(width)
            rows = self._rows
            if y >= len(rows):
                rows, y = self._last_rows, y - len(rows)
        if 0 <= y < len(rows):
            return rows[y]
        return Strip.blank(width, self.visual_style.rich_style)
