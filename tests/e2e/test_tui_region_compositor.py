"""The main screen's partial updates render only the widgets a changed region touches, and draw
what Textual's own compositor draws."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from textual._compositor import Compositor
from textual.geometry import Region
from textual.widget import Widget

from agent_tui.tui.app import AgentTuiApp
from agent_tui.tui.region_compositor import RegionCompositor
from agent_tui.tui.widgets.session_tree import SessionTree
from tests.support.pilot import wait_for
from tests.support.tui_fixtures import ScriptedFactory, make_app, sample_session

pytestmark = [pytest.mark.timeout(60), pytest.mark.slow]  # a Textual app per test


def partial_update(app: AgentTuiApp, regions: list[Region], compositor: type[Compositor]) -> str:
    """What a frame writes to the terminal when ``regions`` changed, from ``compositor``'s code."""
    screen = app.main_screen
    ours = screen._compositor
    assert isinstance(ours, RegionCompositor)
    ours._dirty_regions.update(regions)
    update = compositor.render_partial_update(ours)
    assert update is not None
    return update.render_segments(app.console)


def tree_renders(monkeypatch: pytest.MonkeyPatch) -> list[int]:
    calls: list[int] = []
    original = SessionTree.render_lines

    def counting(self: SessionTree, crop: Region) -> Any:
        calls.append(crop.height)
        return original(self, crop)

    monkeypatch.setattr(SessionTree, "render_lines", counting)
    return calls


@pytest.mark.parametrize("size", [(160, 50), (120, 40)])
async def test_a_status_line_and_composer_update_leaves_the_tree_alone(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, size: tuple[int, int]
) -> None:
    app = make_app(tmp_path, sample_session(tmp_path), agent_factory=ScriptedFactory())
    async with app.run_test(size=size) as pilot:
        await wait_for(pilot, lambda: app.refreshed[0] == len(app.index), "the first view")
        await pilot.pause()
        changed = [app.main_screen.status_line.region, app.composer.region]
        renders = tree_renders(monkeypatch)
        textual = partial_update(app, changed, Compositor)
        by_textual = len(renders)
        renders.clear()
        ours = partial_update(app, changed, RegionCompositor)
        assert ours == textual  # the same bytes to the terminal
        assert by_textual > 0  # Textual's box around both took in the tree
        assert renders == []


async def test_overlapping_layers_draw_the_front_one(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """At 80x24 the tree is a drawer over the chat: a change under the drawer and one beside it."""
    app = make_app(tmp_path, sample_session(tmp_path), agent_factory=ScriptedFactory())
    async with app.run_test(size=(80, 24)) as pilot:
        await wait_for(pilot, lambda: app.refreshed[0] == len(app.index), "the first view")
        await pilot.press("f1")
        await wait_for(pilot, lambda: app.session_tree.region.width > 0, "the drawer")
        await pilot.pause()
        tree = app.session_tree.region
        chat = app.chat.region
        under = Region(tree.x + 2, chat.y + 1, 6, 3)  # the chat there is behind the drawer
        beside = Region(tree.right + 1, chat.y + 2, 5, 2)
        widgets: list[Widget] = [w for w in app.main_screen._compositor.visible_widgets]
        assert app.session_tree in widgets
        changed = [under, beside, app.main_screen.status_line.region]
        assert partial_update(app, changed, RegionCompositor) == partial_update(app, changed, Compositor)
