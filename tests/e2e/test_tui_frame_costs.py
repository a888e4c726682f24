"""What a frame redraws: moving the tree's cursor repaints no whole screen, and a layout of the
screen that changes no size leaves the tree's and the panel's scrollbars alone."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from textual._compositor import Compositor
from textual.geometry import Region
from textual.scrollbar import ScrollBar
from textual.widgets import Collapsible

from tests.support.pilot import wait_for
from tests.support.tui_fixtures import ScriptedFactory, linear_session, make_app, sample_session

pytestmark = [pytest.mark.timeout(90), pytest.mark.slow]  # a Textual app per test


async def test_moving_the_tree_cursor_repaints_no_whole_screen(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The selected entry was a reactive of the App's: each change repainted every widget."""
    path = linear_session(tmp_path / "sessions" / "s.jsonl", 60)
    app = make_app(tmp_path, path, agent_factory=ScriptedFactory())
    full: list[int] = []
    original = Compositor.render_full_update

    def counting(self: Compositor, *args: Any, **kwargs: Any) -> Any:
        full.append(1)
        return original(self, *args, **kwargs)

    async with app.run_test(size=(160, 50)) as pilot:
        await wait_for(pilot, lambda: app.refreshed[0] == len(app.index), "the first view")
        app.session_tree.focus()
        await pilot.pause()
        monkeypatch.setattr(Compositor, "render_full_update", counting)
        before = app.selected_id
        for _ in range(3):
            await pilot.press("up")
        await wait_for(pilot, lambda: app.selected_id != before, "the selection")
        await pilot.pause()
        assert full == []


async def test_a_layout_that_changes_no_size_leaves_the_scrollbars_alone(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    path = linear_session(tmp_path / "sessions" / "s.jsonl", 400)  # the tree and panel scroll
    app = make_app(tmp_path, path, agent_factory=ScriptedFactory())
    async with app.run_test(size=(160, 50)) as pilot:
        await wait_for(pilot, lambda: app.refreshed[0] == len(app.index), "the first view")
        await wait_for(pilot, lambda: not app.workers, "the panel's count")
        await wait_for(pilot, lambda: app._preview_timer is None, "the edit preview")
        tree = app.session_tree
        assert tree.show_vertical_scrollbar
        await pilot.pause()
        drawn: list[str] = []
        original = ScrollBar.render_lines

        def recording(self: ScrollBar, crop: Region) -> Any:
            drawn.append(type(self.parent).__name__)
            return original(self, crop)

        monkeypatch.setattr(ScrollBar, "render_lines", recording)
        for _ in range(3):  # what each flush of a streaming reply does: the chat's height changes
            app.chat.refresh(layout=True)
            await pilot.pause()
        assert "SessionTree" not in drawn
        assert "RowList" not in drawn
        # and a size that does change still reaches the scrollbar
        bar = tree.vertical_scrollbar
        assert bar.window_virtual_size == tree.virtual_size.height
        await pilot.resize_terminal(160, 40)
        await wait_for(pilot, lambda: bar.window_size == tree.scrollable_content_region.height, "the resize")
        assert "SessionTree" in drawn


async def test_the_chat_entries_are_not_rearranged_when_the_chat_gets_shorter(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Typing a second line grows the composer and shortens the chat: the entries' heights do not
    depend on it, and were all worked out again (Textual arranges a container of auto-height
    children at its container's height)."""
    import textual._arrange
    import textual.widget

    from agent_tui.tui.widgets.chat_entry import ChatEntry

    app = make_app(tmp_path, sample_session(tmp_path), agent_factory=ScriptedFactory())
    arranged: list[str] = []
    original = textual._arrange.arrange  # what Widget.arrange calls when its cache misses

    def counting(widget: Any, *args: Any, **kwargs: Any) -> Any:
        if isinstance(widget, ChatEntry):
            arranged.append(widget.entry.id)
        return original(widget, *args, **kwargs)

    async with app.run_test(size=(160, 50)) as pilot:
        await wait_for(pilot, lambda: app.refreshed[0] == len(app.index), "the first view")
        await pilot.pause()
        entries = list(app.chat.query(ChatEntry))
        assert entries
        height = app.chat.size.height
        monkeypatch.setattr(textual.widget, "arrange", counting)
        app.composer.load_text("one\ntwo\nthree")
        await wait_for(pilot, lambda: app.chat.size.height < height, "a shorter chat")
        await pilot.pause()
        assert arranged == []
        # a change inside an entry still changes its height
        thinking = next(e for e in entries if e.query(Collapsible))
        box = thinking.query_one(Collapsible)
        before = thinking.size.height
        box.collapsed = not box.collapsed
        await wait_for(pilot, lambda: thinking.size.height != before, "the entry's new height")
        assert thinking.entry.id in arranged
