"""A virtual list of one-line rows: renders only the lines on screen, so 20,000 rows cost nothing.

Textual's ``OptionList`` measures every option when its content changes (seconds
for 20,000 rows); this widget keeps a row count and a callback that renders one
row, through the Line API. It has a cursor (arrow keys, page keys, home/end,
mouse) and posts :class:`RowList.Highlighted` when the cursor moves.
"""

from __future__ import annotations

from collections.abc import Callable

from rich.segment import Segment
from rich.style import Style
from rich.text import Text
from textual import events
from textual.binding import Binding
from textual.geometry import Size
from textual.message import Message
from textual.reactive import reactive
from textual.scroll_view import ScrollView
from textual.strip import Strip

from agent_tui.tui.widgets import steady_scrollbars

RowRenderer = Callable[[int], Text]


class RowList(ScrollView, can_focus=True):
    DEFAULT_CSS = """
    RowList { height: 1fr; overflow-x: hidden; }
    RowList > .row-list--cursor { background: $block-cursor-blurred-background; }
    RowList:focus > .row-list--cursor { background: $block-cursor-background; color: $block-cursor-foreground; }
    """

    COMPONENT_CLASSES = {"row-list--cursor"}  # noqa: RUF012

    _size_updated = steady_scrollbars.size_updated  # no scrollbar redraw at every layout

    BINDINGS = [  # noqa: RUF012
        Binding("up", "cursor(-1)", "Up", show=False),
        Binding("down", "cursor(1)", "Down", show=False),
        Binding("pageup", "page(-1)", "Page up", show=False),
        Binding("pagedown", "page(1)", "Page down", show=False),
        Binding("home", "jump(0)", "First", show=False),
        Binding("end", "jump(-1)", "Last", show=False),
        Binding("enter", "select", "Open", show=False),
    ]

    cursor: reactive[int] = reactive(-1, always_update=True)

    class Highlighted(Message):
        def __init__(self, row_list: RowList, index: int) -> None:
            super().__init__()
            self.row_list = row_list
            self.index = index

        @property
        def control(self) -> RowList:
            return self.row_list

    class Selected(Message):
        """Enter (or a second click) on the row under the cursor."""

        def __init__(self, row_list: RowList, index: int) -> None:
            super().__init__()
            self.row_list = row_list
            self.index = index

        @property
        def control(self) -> RowList:
            return self.row_list

    def __init__(self, *, id: str | None = None) -> None:
        super().__init__(id=id)
        self.count = 0
        self._render_row: RowRenderer = lambda i: Text("")
        self._cache: dict[tuple[int, int], Strip] = {}

    def set_rows(self, count: int, render_row: RowRenderer) -> None:
        """Show ``count`` rows; ``render_row(i)`` draws row ``i`` when it comes into view."""
        self.count = count
        self._render_row = render_row
        self._cache.clear()
        self.virtual_size = Size(self.size.width, count)
        if self.cursor >= count:
            self.cursor = count - 1
        self.refresh()

    def redraw(self) -> None:
        """Render every row again (after a theme change)."""
        self._cache.clear()
        self.refresh()

    def render_line(self, y: int) -> Strip:
        index = self.scroll_offset.y + y
        width = self.size.width
        if index >= self.count:
            return Strip.blank(width, self.rich_style)
        is_cursor = index == self.cursor
        key = (index, width)
        strip = None if is_cursor else self._cache.get(key)
        if strip is None:
            text = self._render_row(index).copy()
            text.no_wrap = True
            text.overflow = "ellipsis"
            text.truncate(width, overflow="ellipsis", pad=True)
            base = self.rich_style
            if is_cursor:
                base = base + self.get_component_rich_style("row-list--cursor")
            segments = list(text.render(self.app.console))
            strip = Strip(Segment.apply_style(segments, base), width).crop(0, width)
            if not is_cursor:
                self._cache[key] = strip
        return strip

    def watch_cursor(self, old: int, new: int) -> None:
        if new >= 0:
            self.scroll_to_region_row(new)
            self.post_message(self.Highlighted(self, new))
        self.refresh()

    def scroll_to_region_row(self, row: int) -> None:
        top = self.scroll_offset.y
        height = self.size.height or 1
        if row < top:
            self.scroll_to(y=row, animate=False)
        elif row >= top + height:
            self.scroll_to(y=row - height + 1, animate=False)

    def action_cursor(self, step: int) -> None:
        if self.count:
            self.cursor = max(0, min(self.count - 1, (self.cursor if self.cursor >= 0 else -1) + step))

    def action_page(self, direction: int) -> None:
        self.action_cursor(direction * max(1, self.size.height - 1))

    def action_jump(self, where: int) -> None:
        if self.count:
            self.cursor = where if where >= 0 else self.count - 1

    def action_select(self) -> None:
        if 0 <= self.cursor < self.count:
            self.post_message(self.Selected(self, self.cursor))

    def on_click(self, event: events.Click) -> None:
        index = self.scroll_offset.y + event.y
        if 0 <= index < self.count:
            if event.chain >= 2 and index == self.cursor:
                self.post_message(self.Selected(self, index))
            self.cursor = index

    def on_resize(self, event: events.Resize) -> None:
        self._cache.clear()
        self.virtual_size = Size(event.size.width, self.count)

    def row_style(self) -> Style:
        return self.rich_style
