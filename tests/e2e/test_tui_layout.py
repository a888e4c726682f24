"""The layout at any size, and what clicks, focus and keys do."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from textual.pilot import Pilot
from textual.widget import Widget

from agent_tui.tui.app import AgentTuiApp
from tests.support.pilot import answer_branch_summary, wait_for
from tests.support.tui_fixtures import (
    ScriptedFactory,
    make_app,
    reopen,
    sample_lines,
    sample_session,
    write_lines,
)

pytestmark = [pytest.mark.timeout(60), pytest.mark.slow]  # a Textual app per test


def width(widget: Widget) -> int:
    return widget.region.width if widget.display else 0


def center(app: AgentTuiApp) -> Widget:
    return app.main_screen.query_one("#center")


def focus(app: AgentTuiApp) -> object:
    """What has the focus (a call, so that mypy does not narrow it from one assert to the next)."""
    return app.focused


def notices(app: AgentTuiApp) -> list[str]:
    return [str(n.message) for n in app._notifications]


def entries(path: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in path.read_text().splitlines()[1:] if line.strip()]


# -- the layout ---------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("size", "tree", "panel"),
    [((60, 15), False, False), ((80, 24), False, False), ((120, 40), True, False), ((200, 50), True, True)],
)
async def test_the_chat_and_composer_get_the_width_and_the_panes_sit_beside_only_where_they_fit(
    tmp_path: Path, size: tuple[int, int], tree: bool, panel: bool
) -> None:
    app = make_app(tmp_path, sample_session(tmp_path))
    async with app.run_test(size=size) as pilot:
        await pilot.pause()
        screen = app.main_screen
        assert screen.placement("tree") == ("beside" if tree else "hidden")
        assert screen.placement("panel") == ("beside" if panel else "hidden")
        chat_width = width(center(app))
        assert chat_width >= min(60, size[0]), f"the chat is {chat_width} columns at {size}"
        assert width(app.composer) >= min(56, size[0] - 4)
        assert width(app.main_screen.query_one("#sidebar")) == (
            0 if not tree else width(app.session_tree) + 1
        )


async def test_at_80x24_f1_opens_the_tree_over_the_chat_and_esc_closes_it_back_to_the_composer(
    tmp_path: Path,
) -> None:
    app = make_app(tmp_path, sample_session(tmp_path))
    async with app.run_test(size=(80, 24)) as pilot:
        await pilot.pause()
        await pilot.press("f1")
        await wait_for(pilot, lambda: app.session_tree.region.width > 0, "the drawer")
        assert app.main_screen.placement("tree") == "drawer"
        assert focus(app) is app.session_tree
        assert width(center(app)) == 80, "a drawer covers the chat; it does not squeeze it"
        await pilot.press("escape")
        await wait_for(pilot, lambda: app.main_screen.placement("tree") == "hidden", "closed")
        assert focus(app) is app.composer
        await pilot.press("f3")
        await wait_for(pilot, lambda: app.panel.region.width > 0, "the panel drawer")
        assert focus(app) is app.panel.rows_list
        await pilot.press("f3")  # pressed again where it has the focus: closed
        await wait_for(pilot, lambda: app.main_screen.placement("panel") == "hidden", "closed by F3")
        assert focus(app) is app.composer


async def test_resizing_reflows_the_panes_live(tmp_path: Path) -> None:
    app = make_app(tmp_path, sample_session(tmp_path))
    async with app.run_test(size=(80, 24)) as pilot:
        await pilot.pause()
        await pilot.resize_terminal(200, 50)
        await wait_for(pilot, lambda: app.panel.region.width > 0, "the panel beside the chat")
        assert app.main_screen.placement("tree") == "beside"
        assert width(center(app)) >= 60
        await pilot.resize_terminal(120, 40)
        await wait_for(pilot, lambda: app.panel.region.width == 0, "the panel gone at 120")
        assert app.main_screen.placement("tree") == "beside"
        await pilot.resize_terminal(70, 20)
        await wait_for(pilot, lambda: app.session_tree.region.width == 0, "the tree gone at 70")
        assert width(center(app)) == 70


async def test_hiding_a_pane_on_a_wide_screen_is_remembered_in_the_config(tmp_path: Path) -> None:
    (tmp_path / "config.toml").write_text('provider = "openai"\n\n[openai]\nbase_url = "http://x"\n')
    app = make_app(tmp_path, sample_session(tmp_path))
    async with app.run_test(size=(200, 50)) as pilot:
        await pilot.pause()
        await pilot.press("f3")  # focuses the panel
        assert focus(app) is app.panel.rows_list
        await pilot.press("f3")  # hides it
        await wait_for(pilot, lambda: app.panel.region.width == 0, "the panel hidden")
        assert focus(app) is app.composer
    text = (tmp_path / "config.toml").read_text()
    assert "panel_pane = false" in text.split("[openai]")[0]
    assert 'base_url = "http://x"' in text
    again = make_app(tmp_path, sample_session(tmp_path, "again.jsonl"))
    async with again.run_test(size=(200, 50)) as pilot:
        await pilot.pause()
        assert again.main_screen.placement("panel") == "hidden"
        assert again.main_screen.placement("tree") == "beside"
        await pilot.press("f3")  # shown again, and remembered
        await wait_for(pilot, lambda: again.panel.region.width > 0, "the panel back")
    assert "panel_pane = true" in (tmp_path / "config.toml").read_text()


# -- clicks and focus in the tree -----------------------------------------------------------------


def tree_line(app: AgentTuiApp, entry_id: str) -> int:
    node = app.session_tree.node_for(entry_id)
    assert node is not None
    return node.line


async def click_tree(pilot: Pilot[None], app: AgentTuiApp, entry_id: str, times: int = 1) -> None:
    tree = app.session_tree
    line = tree_line(app, entry_id) - tree.scroll_offset.y
    await pilot.click(tree, offset=(6, line), times=times)


async def test_a_click_on_a_tree_row_selects_it_and_never_branches(tmp_path: Path) -> None:
    path = sample_session(tmp_path)
    app = make_app(tmp_path, path)
    async with app.run_test(size=(160, 45)) as pilot:
        await pilot.pause()
        before = len(entries(path))
        await click_tree(pilot, app, "a2")
        await wait_for(pilot, lambda: app.selected_id == "a2", "a2 selected")
        await pilot.pause(0.3)  # the preview and the chat follow the selection after a rest
        assert len(entries(path)) == before, "a single click must not branch"
        assert any("a2" in line for line in app.panel.edit_preview), app.panel.edit_preview
        assert app.index.leaf_id == "x1"


async def test_a_double_click_branches_says_what_happened_and_focuses_the_composer(tmp_path: Path) -> None:
    path = sample_session(tmp_path)
    app = make_app(tmp_path, path)
    async with app.run_test(size=(160, 45)) as pilot:
        await pilot.pause()
        await click_tree(pilot, app, "a2", times=2)
        await wait_for(pilot, lambda: app.index.leaf_id not in (None, "x1"), "the branch")
        await wait_for(pilot, lambda: any("continuing from a2" in n for n in notices(app)), "the notice")
        notice = next(n for n in notices(app) if "continuing from a2" in n)
        # the old branch after a2: r2 a3 u3 a5 l1 x1
        assert notice == "continuing from a2; 6 later entries are now a side branch ⑂"
        assert focus(app) is app.composer


async def test_branching_keeps_the_model_and_thinking_level_in_use(tmp_path: Path) -> None:
    lines = sample_lines()
    lines.append(
        {
            "type": "model_change",
            "id": "mc",
            "parentId": "x1",
            "timestamp": lines[-1]["timestamp"],
            "provider": "openai",
            "modelId": "gpt-4o",
        }
    )
    lines.append(
        {
            "type": "thinking_level_change",
            "id": "tc",
            "parentId": "mc",
            "timestamp": lines[-1]["timestamp"],
            "thinkingLevel": "high",
        }
    )
    path = write_lines(tmp_path / "sessions" / "models.jsonl", lines)
    app = make_app(tmp_path, path)
    async with app.run_test(size=(160, 45)) as pilot:
        await pilot.pause()
        await app.branch_to("a3")
        await wait_for(pilot, lambda: app.index.leaf_id not in ("tc",), "the branch")
        added = entries(path)[len(lines) - 1 :]
        assert [e["type"] for e in added] == ["custom", "model_change", "thinking_level_change"]
        assert (added[1]["provider"], added[1]["modelId"]) == ("openai", "gpt-4o")
        assert added[2]["thinkingLevel"] == "high"
        assert app.projection.model is not None and app.projection.model["modelId"] == "gpt-4o"
        assert app.projection.thinking_level == "high"
    with reopen(path) as session:
        assert session.index.leaf_id == added[-1]["id"]


async def test_branching_where_the_path_agrees_appends_no_settings(tmp_path: Path) -> None:
    path = sample_session(tmp_path)
    app = make_app(tmp_path, path)
    async with app.run_test(size=(160, 45)) as pilot:
        await pilot.pause()
        before = len(entries(path))
        await app.branch_to("a3")
        assert [e["type"] for e in entries(path)[before:]] == ["custom"]


async def test_letters_typed_in_the_tree_without_a_binding_go_to_the_composer(tmp_path: Path) -> None:
    path = sample_session(tmp_path)
    app = make_app(tmp_path, path)
    async with app.run_test(size=(160, 45)) as pilot:
        await pilot.pause()
        await pilot.press("f1")
        assert focus(app) is app.session_tree
        before = len(entries(path))
        await pilot.press("w", "o", "r", "d")  # no tree key: they are text
        assert app.composer.text == "word"
        assert focus(app) is app.composer
        await pilot.press("f1")
        app.session_tree.reveal("a5")
        await wait_for(pilot, lambda: app.selected_id == "a5", "a5 selected")
        await pilot.press("h")  # a tree key: hides the selected entry, only while the tree has focus
        await wait_for(pilot, lambda: len(entries(path)) == before + 1, "the hide")
        app.set_focus(app.composer)
        await pilot.press("h")
        assert app.composer.text == "wordh"
        assert len(entries(path)) == before + 1


async def test_enter_on_a_past_user_message_keeps_a_draft(tmp_path: Path) -> None:
    path = sample_session(tmp_path)
    app = make_app(tmp_path, path, agent_factory=ScriptedFactory())
    async with app.run_test(size=(160, 45)) as pilot:
        await pilot.pause()
        app.composer.set_text("my unsent draft")
        await app.branch_to("u3")
        await answer_branch_summary(pilot, app)  # pi's "Summarize branch?": No summary
        await wait_for(pilot, lambda: app.index.leaf_id not in (None, "x1"), "the move")
        assert app.composer.text == "my unsent draft"
        assert app.composer.input_history[-1] == "Actually, explain the fix instead"
        assert focus(app) is app.composer
        app.composer.set_text("")
        await app.branch_to("u2")
        assert app.composer.text == "Now add a test", "an empty composer takes the message's text"


async def test_the_chat_scrolls_from_the_composer(tmp_path: Path) -> None:
    from tests.support.tui_fixtures import linear_session

    app = make_app(tmp_path, linear_session(tmp_path / "big.jsonl", 60))
    async with app.run_test(size=(80, 24)) as pilot:
        await pilot.pause(0.3)
        chat = app.chat
        assert focus(app) is app.composer
        await wait_for(
            pilot, lambda: chat.max_scroll_y > 0 and chat.scroll_y == chat.max_scroll_y, "at the end"
        )
        await pilot.press("pageup")
        await wait_for(pilot, lambda: chat.scroll_y < chat.max_scroll_y, "scrolled up")
        await pilot.press("ctrl+home")
        await wait_for(pilot, lambda: chat.scroll_y == 0, "at the top")
        await pilot.press("ctrl+end")
        await wait_for(pilot, lambda: chat.scroll_y == chat.max_scroll_y, "at the end again")
        assert focus(app) is app.composer
        assert app.composer.text == ""


async def test_typing_after_clicking_a_collapsible_reaches_the_composer(tmp_path: Path) -> None:
    from textual.widgets._collapsible import CollapsibleTitle

    app = make_app(tmp_path, sample_session(tmp_path))
    async with app.run_test(size=(120, 40)) as pilot:
        await pilot.pause()
        title = app.chat.query(CollapsibleTitle).first()
        await pilot.click(title)
        await pilot.pause()
        await pilot.press("o", "k")
        assert app.composer.text == "ok"
        assert focus(app) is app.composer


async def test_a_drawer_closes_when_the_focus_goes_elsewhere(tmp_path: Path) -> None:
    app = make_app(tmp_path, sample_session(tmp_path))
    async with app.run_test(size=(80, 24)) as pilot:
        await pilot.pause()
        await pilot.press("f3")
        await wait_for(pilot, lambda: app.main_screen.placement("panel") == "drawer", "the drawer")
        await pilot.press("tab")  # the focus leaves the panel
        await wait_for(pilot, lambda: app.main_screen.placement("panel") == "hidden", "closed")


async def test_selecting_an_early_entry_in_the_tree_scrolls_the_chat_to_it(tmp_path: Path) -> None:
    from tests.support.tui_fixtures import linear_session

    app = make_app(tmp_path, linear_session(tmp_path / "long.jsonl", 60))
    async with app.run_test(size=(120, 40)) as pilot:
        await pilot.pause(0.3)
        assert "m000004" not in app.chat.shown_ids, "only the last entries are mounted at first"
        await pilot.press("f1")
        app.session_tree.reveal("m000004")
        await wait_for(pilot, lambda: app.selected_id == "m000004", "selected")
        await wait_for(pilot, lambda: "m000004" in app.chat.shown_ids, "mounted in the chat")
        widget = next(
            w for w in app.chat.children if getattr(getattr(w, "entry", None), "id", None) == "m000004"
        )
        chat = app.chat
        await wait_for(
            pilot,
            lambda: chat.scroll_y <= widget.virtual_region.y < chat.scroll_y + chat.size.height,
            "scrolled into view",
        )
        assert app.index.leaf_id == "m000059", "selecting never branches"
