"""Widgets whose growth costs one layout of the screen, not two.

In a layout, Textual sets each widget's virtual size from the arrangement it has just made; the
virtual size is a reactive that asks for a layout when it changes, so every frame in which the
streaming reply grew (the tail, the reply, the chat) was followed by a second layout that found
nothing to move: 6-8 ms of CPU at 160x50, right after the 15-20 ms of the first, while keys waited.
The arrangement the compositor has just made already holds what the new virtual size would give,
and the scrollbars are updated from it in the same call.

A scrollbar is a widget too: when the chat got a line shorter (the composer grew one), its
scrollbar's new virtual size asked for the same second layout (5 ms at 80x24).
:class:`OneLayoutScrollBar` is the chat's.
"""

from __future__ import annotations

from math import ceil
from typing import cast

from rich.color import Color as RichColor
from rich.segment import Segment
from textual.geometry import Region, Size
from textual.scrollbar import ScrollBar, ScrollBarRender
from textual.strip import Strip
from textual.widget import Widget


def size_updated(
    widget: Widget, size: Size, virtual_size: Size, container_size: Size, layout: bool = True
) -> bool:
    """``Widget._size_updated`` that stores a new virtual size without asking for another layout.
    Assign it as ``_size_updated`` in a subclass of a widget that does not override that method."""
    return Widget._size_updated(widget, size, virtual_size, container_size, layout=False)


class OneLayoutScrollBar(ScrollBar):
    """A scrollbar whose change of size costs no second layout, and whose rows are made directly.

    Each flush of a streaming reply grows the chat and scrolls it to the end, so the thumb moves
    and the scrollbar is drawn again: through Textual's generic path (a Rich renderable, then each
    row through the styles cache: three strips, style lookups and filters a row) that cost 2.5 ms
    of CPU for 50 rows, the costliest widget of a flush's frame (1.5-1.8 ms of a 21 ms frame at
    160x50, 0.7-0.9 of 11-13 at 80x24). A scrollbar row is one segment: :meth:`render_lines` makes
    the rows from Textual's own ``ScrollBarRender.render_bar`` segments on the widget's base style
    (as Textual's render puts them), once per :meth:`drawn` (the thumb's eighths, the size, the
    colours, hover and grab), one strip per kind of row, then applies the app's line filters and
    the crop as the styles cache does: 0.23 ms for 50 rows. It draws the bar as its values are
    now (Textual's cache could keep rows of an earlier position: the queue snapshot's thumb, half a
    cell short of the end of the track at the end of the chat). A scrollbar whose own styles
    ask for more (a tint, opacity, padding, a border) is drawn by Textual's path.
    ``tests/e2e/test_tui_scrollbar_rows.py`` compares the two, cell for cell."""

    _size_updated = size_updated

    def drawn(self) -> tuple[object, ...]:
        """What :meth:`render` draws depends on: the thumb's ends in eighths of a cell (Textual's
        ``ScrollBarRender.render_bar``, whose arithmetic this follows), the size and the styles."""
        size = self.size
        length = size.height if self.vertical else size.width
        virtual = ceil(self.window_virtual_size)
        window = ceil(self.window_size if self.window_size < self.window_virtual_size else 0)
        thumb: tuple[int, int] | None = None
        if window and length and virtual and length != virtual:
            eighths = len(self.renderer.VERTICAL_BARS if self.vertical else self.renderer.HORIZONTAL_BARS)
            thumb_size = max(1, window / (virtual / length))
            offset = (length - thumb_size) * (self.position / (virtual - window))
            start = int(offset * eighths)
            thumb = (start, start + ceil(thumb_size * eighths))
        parent = self.parent
        colours = (
            None
            if parent is None
            else (
                parent.styles.scrollbar_background,
                parent.styles.scrollbar_color,
                parent.styles.scrollbar_background_hover,
                parent.styles.scrollbar_color_hover,
                parent.styles.scrollbar_background_active,
                parent.styles.scrollbar_color_active,
                parent.background_colors,
                self.screen.styles.scrollbar_color,
            )
        )
        return (size, thumb, self.mouse_over, self.grabbed is not None, colours, self.visual_style.rich_style)

    def _plain(self) -> bool:
        """Whether the scrollbar's own styles add nothing to its segments (the direct path)."""
        styles = self.styles
        return (
            not styles.tint.a
            and self.opacity == 1.0
            and styles.text_opacity == 1.0
            and not styles.gutter
            and not (styles.has_rule("hatch") and styles.hatch != "none")
            and not self.auto_links
        )

    def _rows(self) -> list[Strip] | None:
        """The scrollbar's rows, whole (None: not a bar this path draws)."""
        key = self.drawn()
        cached = self.__dict__.get("_rows_drawn")
        if cached is not None and cached[0] == key:
            return cast("list[Strip]", cached[1])
        renderable = self.render()
        if not isinstance(renderable, ScrollBarRender):
            return None
        style = self.app.console.get_style(renderable.style)
        width, height = self.size
        bar = renderable.render_bar(
            size=height if self.vertical else width,
            window_size=renderable.window_size,
            virtual_size=renderable.virtual_size,
            position=renderable.position,
            thickness=width if self.vertical else height,
            vertical=self.vertical,
            back_color=style.bgcolor or RichColor.parse("#555555"),
            bar_color=style.color or RichColor.parse("bright_magenta"),
        )
        base = self.visual_style.rich_style  # under every segment, as Textual's render has it
        segments = [Segment(text, base + style if style else base) for text, style, _ in bar.segments]
        if self.vertical:  # a few kinds of row (track, thumb, its ends): one Strip each, filtered once
            made: dict[Segment, Strip] = {}
            rows = [
                made.get(segment) or made.setdefault(segment, Strip([segment], width)) for segment in segments
            ]
        else:
            rows = [Strip([s for s in segments if s.text != "\n"], width)] * height
        self.__dict__["_rows_drawn"] = (key, rows)
        return rows

    def render_lines(self, crop: Region) -> list[Strip]:
        rows = self._rows() if self._plain() else None
        if rows is None or len(rows) != self.size.height:
            return super().render_lines(crop)
        background = self.background_colors[1]
        strips = rows[crop.y : crop.bottom]
        for line_filter in self.get_line_filters():
            strips = [strip.apply_filter(line_filter, background) for strip in strips]
        if crop.column_span != (0, self.size.width):
            strips = [strip.crop(crop.x, crop.right) for strip in strips]
        return strips


def vertical_scrollbar(widget: Widget) -> ScrollBar:
    """``widget``'s vertical scrollbar, made as ``Widget.vertical_scrollbar`` makes one but a
    :class:`OneLayoutScrollBar`. For a ``vertical_scrollbar`` property of a widget's own."""
    if widget._vertical_scrollbar is None:
        bar = OneLayoutScrollBar(vertical=True, name="vertical", thickness=widget.scrollbar_size_vertical)
        bar.display = False
        widget._vertical_scrollbar = bar
        widget.app._start_widget(widget, bar)
    return widget._vertical_scrollbar
