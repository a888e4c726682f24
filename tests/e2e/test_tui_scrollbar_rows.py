"""The chat's scrollbar makes its rows directly (``one_layout_pass.OneLayoutScrollBar``): cell for
cell, colours, attributes and mouse actions, they are what Textual's own path draws, at every
position of the thumb, hovered and grabbed, cropped, and after the chat grew."""

from __future__ import annotations

from typing import Any

import pytest
from rich.segment import Segment
from textual.app import App, ComposeResult
from textual.geometry import Offset, Region
from textual.strip import Strip
from textual.widget import Widget
from textual.widgets import Static

from agent_tui.tui.widgets.chat_view import ChatView
from agent_tui.tui.widgets.one_layout_pass import OneLayoutScrollBar

pytestmark = pytest.mark.timeout(60)


class _Host(App[None]):
    def compose(self) -> ComposeResult:
        with ChatView(id="chat"):
            for i in range(40):
                yield Static(f"line {i}\n" * 3)


def _cells(strips: list[Strip]) -> list[list[tuple[Any, ...]]]:
    rows = []
    for strip in strips:
        row = []
        for segment in strip:
            text, style, _ = segment
            assert style is not None
            for character in Segment(text).text:
                row.append(
                    (
                        character,
                        style.color,
                        style.bgcolor,
                        bool(style.reverse),
                        bool(style.bold),
                        bool(style.dim),
                        tuple(sorted(style.meta.items())),
                    )
                )
        rows.append(row)
    return rows


def _textuals(bar: OneLayoutScrollBar, crop: Region) -> list[Strip]:
    bar.refresh()  # as drawn from nothing
    bar._styles_cache.clear()
    return Widget.render_lines(bar, crop)


@pytest.mark.slow  # every third scroll row at two sizes: 1.5 s of CPU, 4.5 s wall
@pytest.mark.parametrize("size", [(80, 24), (160, 50)])
async def test_the_rows_are_textual_s_everywhere_the_thumb_goes(size: tuple[int, int]) -> None:
    app = _Host()
    async with app.run_test(size=size) as pilot:
        chat = app.query_one(ChatView)
        await pilot.pause()
        bar = chat.vertical_scrollbar
        assert isinstance(bar, OneLayoutScrollBar) and bar.size.height > 0
        assert bar._plain() and bar._rows() is not None  # the direct path, not Textual's
        whole = Region(0, 0, bar.size.width, bar.size.height)
        checked = 0
        for y in range(0, int(chat.max_scroll_y) + 1, 3):
            chat.scroll_to(y=y, animate=False)
            await pilot.pause()
            ours = bar.render_lines(whole)
            assert _cells(ours) == _cells(_textuals(bar, whole)), f"scrolled to {y}"
            checked += 1
        assert checked > 10
        # a part of it (the compositor crops to what is visible)
        part = Region(1, 3, 1, 7)
        assert _cells(bar.render_lines(part)) == _cells(_textuals(bar, part))
        # hovered, then grabbed: other colours
        plain = _cells(bar.render_lines(whole))
        bar.mouse_over = True
        await pilot.pause()
        hovered = _cells(bar.render_lines(whole))
        assert hovered == _cells(_textuals(bar, whole))
        bar.grabbed = Offset(0, 0)
        await pilot.pause()
        assert _cells(bar.render_lines(whole)) == _cells(_textuals(bar, whole))
        bar.grabbed = None
        bar.mouse_over = False
        await pilot.pause()
        assert hovered != plain and _cells(bar.render_lines(whole)) == plain
        # the chat grows (the thumb shrinks) while at the end, as a streaming reply does
        chat.scroll_end(animate=False)
        for n in range(5):
            await chat.mount(Static(f"more {n}\n" * 7))
            chat.scroll_end(animate=False)
            await pilot.pause()
            assert _cells(bar.render_lines(whole)) == _cells(_textuals(bar, whole)), f"grown {n}"
