"""TailLines draws what a Static with the same text draws, cell for cell (the offsets a mouse
selection reads included), however the text came in, and at another width too."""

from __future__ import annotations

from typing import Any

import pytest
from rich.text import Text
from textual.app import App, ComposeResult
from textual.geometry import Offset
from textual.screen import Screen
from textual.selection import Selection
from textual.strip import Strip
from textual.widget import Widget
from textual.widgets import Static

from agent_tui.terminal_text import visible
from agent_tui.tui.widgets.tail_lines import TailLines

pytestmark = pytest.mark.timeout(60)

TEXTS = [
    "",
    "an unfinished line",
    "a finished line\n",
    "one\ntwo\n\n",
    "```python\n" + "x = 1  # " + "long " * 40 + "\nshort\n",  # an open fence wraps, as its block will
    "tab\there\r\nCRLF gone, a lone CR shown\r",
    "word " * 50 + "\nend",
    "\x1b[31mred\x07 [b]not markup[/b]\n日本語 wide\n" * 3,
]


class _Host(App[None]):
    def compose(self) -> ComposeResult:
        yield Static(id="static", markup=False)
        yield TailLines(id="tail")


def rows(widget: Widget) -> list[list[object]]:
    strips: list[Strip] = [widget.render_line(y) for y in range(widget.size.height)]
    return [list(strip) for strip in strips]


@pytest.mark.parametrize("step", [1, 7, 10_000])
async def test_the_tail_draws_what_a_static_draws(step: int) -> None:
    app = _Host()
    async with app.run_test(size=(60, 80)) as pilot:
        static, tail = app.query_one("#static", Static), app.query_one("#tail", TailLines)
        for text in TEXTS:
            source = "the blocks above\n\n" + text
            start = len("the blocks above\n\n")
            tail.show("", 0)
            await pilot.pause()
            for end in range(0, len(source) + 1, step):  # streamed, a frame now and then
                tail.show(source[:end], 0)
                if end % 3 == 0:
                    await pilot.pause()
            tail.show(source, 0)
            await pilot.pause()
            tail.show(source, start)  # the finished blocks went above
            static.update(Text(visible(text)))
            await pilot.pause()
            assert tail.text == text
            assert tail.size == static.size, text
            assert rows(tail) == rows(static), text
        await pilot.resize_terminal(41, 80)  # another width: rendered again, the same as the Static
        await pilot.pause()
        assert tail.size == static.size and rows(tail) == rows(static)


async def test_a_selection_is_drawn_and_copied_as_in_a_static() -> None:
    app = _Host()
    async with app.run_test(size=(60, 20)) as pilot:
        static, tail = app.query_one("#static", Static), app.query_one("#tail", TailLines)
        text = "first line\nsecond line\x07\nthird"
        tail.show(text, 0)
        static.update(Text(visible(text)))
        await pilot.pause()
        unselected = rows(tail)
        selection = Selection(Offset(2, 0), Offset(4, 1))
        app.screen.selections = {static: selection, tail: selection}
        await pilot.pause()
        assert rows(tail) == rows(static) != unselected
        assert tail.get_selection(selection) == static.get_selection(selection)
        assert tail.get_selection(selection) == ("rst line\nseco", "\n")


async def test_a_flush_that_adds_no_row_repaints_without_a_layout(monkeypatch: pytest.MonkeyPatch) -> None:
    app = _Host()
    layouts: list[int] = []
    original = Screen._refresh_layout

    def counting(self: Screen[Any], size: Any = None, scroll: bool = False) -> None:
        layouts.append(1)
        original(self, size, scroll)

    async with app.run_test(size=(60, 20)) as pilot:
        tail = app.query_one("#tail", TailLines)
        tail.show("one\nthe last line grows", 0)
        await pilot.pause()
        monkeypatch.setattr(Screen, "_refresh_layout", counting)
        tail.show("one\nthe last line grows, on the same row", 0)
        await pilot.pause()
        assert layouts == [] and tail.render_line(1).text == "the last line grows, on the same row"
        tail.show("one\nthe last line grows, on the same row\nand a new one", 0)
        await pilot.pause()
        assert layouts and tail.size.height == 3 and tail.render_line(2).text == "and a new one"
