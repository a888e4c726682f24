"""The composer growing a line as the user types: one layout, no scrollbar shown and hidden again
on the way; a scrollbar once the text is taller than the composer can be."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.support.layouts import count_layouts
from tests.support.pilot import wait_for
from tests.support.tui_fixtures import ScriptedFactory, make_app, sample_session

pytestmark = [pytest.mark.timeout(60), pytest.mark.slow]  # a Textual app per test


@pytest.mark.parametrize("size", [(80, 24), (160, 50)])
async def test_a_line_more_in_the_composer_costs_one_layout(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, size: tuple[int, int]
) -> None:
    app = make_app(tmp_path, sample_session(tmp_path), agent_factory=ScriptedFactory())
    async with app.run_test(size=size) as pilot:
        await wait_for(pilot, lambda: app.refreshed[0] == len(app.index), "the first view")
        composer = app.composer
        width = composer.content_region.width
        composer.insert("x" * (width - 1))  # one character short of a second line
        await wait_for(pilot, lambda: app._preview_timer is None, "the opening's edit preview shown")
        for _ in range(4):
            await pilot.pause()
        one_line = composer.size.height
        scrollbar: list[bool] = []
        layouts = count_layouts(monkeypatch, after=lambda: scrollbar.append(composer.show_vertical_scrollbar))
        composer.insert("yz")  # wraps: a second line
        await wait_for(pilot, lambda: composer.size.height == one_line + 1, "the composer a line taller")
        for _ in range(4):
            await pilot.pause()
        assert len(layouts) == 1, layouts  # Textual's scrollbar, shown then hidden, asked for a second
        assert not any(scrollbar)


async def test_a_text_taller_than_the_composer_can_be_scrolls(tmp_path: Path) -> None:
    app = make_app(tmp_path, sample_session(tmp_path), agent_factory=ScriptedFactory())
    async with app.run_test(size=(80, 24)) as pilot:
        await wait_for(pilot, lambda: app.refreshed[0] == len(app.index), "the first view")
        composer = app.composer
        one_line = composer.size.height
        composer.insert("\n".join(f"line {i}" for i in range(5)))
        await wait_for(pilot, lambda: composer.size.height == one_line + 4, "five lines shown")
        assert not composer.show_vertical_scrollbar
        composer.insert("".join(f"\nline {i}" for i in range(5, 30)))
        await wait_for(pilot, lambda: composer.show_vertical_scrollbar, "a scrollbar")
        tallest = composer.size.height
        assert tallest < 30 and composer.scroll_y > 0  # at its tallest, scrolled to the cursor
        composer.clear()
        await wait_for(pilot, lambda: composer.size.height == one_line, "back to one line")
        assert not composer.show_vertical_scrollbar
