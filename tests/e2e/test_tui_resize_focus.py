"""A pane that a resize hides (the tree beside the chat at 200 columns, none at 80) hands the focus
back to the composer: Enter then sends, keys never go to a pane that is not on screen."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.support.pilot import wait_for
from tests.support.tui_fixtures import make_app, sample_session

pytestmark = [pytest.mark.timeout(60), pytest.mark.slow]  # a Textual app per test


@pytest.mark.parametrize("key", ["f1", "f3"])
async def test_narrowing_past_a_focused_pane_focuses_the_composer(tmp_path: Path, key: str) -> None:
    app = make_app(tmp_path, sample_session(tmp_path))
    async with app.run_test(size=(200, 50)) as pilot:
        await pilot.pause()
        await pilot.press(key)
        pane = app.focused
        assert pane is not None and pane is not app.composer
        await pilot.resize_terminal(80, 24)
        await wait_for(pilot, lambda: app.main_screen.size.width == 80, "the resize")
        for _ in range(3):
            await pilot.pause()
        assert app.focused is app.composer, app.focused
        await pilot.resize_terminal(200, 50)  # wide again: the pane is back beside, the focus stays
        await wait_for(pilot, lambda: app.main_screen.size.width == 200, "the resize back")
        await pilot.pause()
        assert app.focused is app.composer
