"""The footer shows whole keys only: one that does not fit beside the palette's key is left out
(Textual's footer cut it at the edge, "^o R", at 80 columns with the tree focused), and comes
back when the terminal is made wider."""

from __future__ import annotations

from pathlib import Path

import pytest
from textual.pilot import Pilot

from agent_tui.tui.app import AgentTuiApp
from tests.support.pilot import wait_for
from tests.support.screen_text import screen_lines
from tests.support.tui_fixtures import make_app, sample_session

pytestmark = [pytest.mark.timeout(60), pytest.mark.slow]


def footer_chunks(app: AgentTuiApp) -> list[str]:
    """The footer's keys as shown, left of the palette's key: "⏎ Continue here", "h Hide"..."""
    left = screen_lines(app)[-1].split("▏")[0]
    return [chunk.strip() for chunk in left.split("  ") if chunk.strip()]


def whole_labels(app: AgentTuiApp) -> set[str]:
    return {
        f"{app.get_key_display(binding)} {binding.description}"
        for _, binding, _, _ in app.screen.active_bindings.values()
        if binding.show
    }


async def whole(pilot: Pilot[None], app: AgentTuiApp) -> list[str]:
    await pilot.pause()
    await wait_for(
        pilot, lambda: set(footer_chunks(app)) <= whole_labels(app), "only whole keys in the footer"
    )
    return footer_chunks(app)


@pytest.mark.parametrize("size", [(80, 24), (60, 15)], ids=lambda s: f"{s[0]}x{s[1]}")
async def test_the_footer_never_cuts_a_key(tmp_path: Path, size: tuple[int, int]) -> None:
    app = make_app(tmp_path, sample_session(tmp_path))
    async with app.run_test(size=size) as pilot:
        composer_keys = await whole(pilot, app)
        assert composer_keys[0] == "⏎ Send", composer_keys
        await pilot.press("f1")
        await wait_for(pilot, lambda: "Continue here" in screen_lines(app)[-1], "the tree's keys")
        tree_keys = await whole(pilot, app)
        assert "h Hide" in tree_keys
        await pilot.resize_terminal(200, 50)
        await wait_for(pilot, lambda: len(footer_chunks(app)) > len(tree_keys), "more keys when wider")
        assert set(footer_chunks(app)) <= whole_labels(app)
        await pilot.resize_terminal(*size)  # (the tree beside the chat at 200 columns is hidden again)
        await wait_for(pilot, lambda: len(footer_chunks(app)) <= len(composer_keys), "fewer again")
        await whole(pilot, app)
