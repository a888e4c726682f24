"""The empty composer's placeholder is whole at any width: the longest that fits is shown."""

from __future__ import annotations

from pathlib import Path

import pytest

from agent_tui.tui.screens.main import PLACEHOLDERS
from tests.support.pilot import wait_for
from tests.support.tui_fixtures import make_app

pytestmark = [pytest.mark.timeout(60), pytest.mark.slow]  # a Textual app per test


async def test_the_placeholder_fits_the_composer_as_the_terminal_is_resized(tmp_path: Path) -> None:
    app = make_app(tmp_path)
    async with app.run_test(size=(80, 24)) as pilot:
        await pilot.pause()
        composer = app.composer
        assert str(composer.placeholder) == PLACEHOLDERS[0]
        await pilot.resize_terminal(60, 15)
        await wait_for(pilot, lambda: composer.content_size.width < 60, "the narrower composer")
        await pilot.pause()
        shown = str(composer.placeholder)
        assert len(shown) <= composer.content_size.width, (shown, composer.content_size.width)
        assert shown.startswith("Type a message · Enter sends · ? help")
        await pilot.resize_terminal(120, 40)
        await wait_for(pilot, lambda: str(composer.placeholder) == PLACEHOLDERS[0], "the whole one again")
