"""Help, keymaps and copying."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from textual.binding import Binding
from textual.selection import Selection
from textual.widgets import Static

from agent_tui.tui.app import AgentTuiApp
from agent_tui.tui.commands import COMMANDS
from agent_tui.tui.screens.choice import ChoiceScreen
from agent_tui.tui.screens.help import HelpScreen
from agent_tui.tui.screens.main import MainScreen
from agent_tui.tui.screens.model_picker import ModelPickerScreen
from agent_tui.tui.screens.prompt import PromptScreen
from agent_tui.tui.widgets.chat_entry import CodeHeader, markdown_parts
from agent_tui.tui.widgets.session_tree import SessionTree
from tests.support.pilot import wait_for
from tests.support.session_builder import assistant
from tests.support.tui_fixtures import (
    SIZE,
    ScriptedFactory,
    make_app,
    sample_lines,
    sample_session,
    write_lines,
)

pytestmark = [pytest.mark.timeout(60), pytest.mark.slow]  # a Textual app per test


def focus(app: AgentTuiApp) -> object:
    """What has the focus (a call, so that mypy does not narrow it from one assert to the next)."""
    return app.focused


def notices(app: AgentTuiApp) -> list[str]:
    return [str(n.message) for n in app._notifications]


def entries(path: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in path.read_text().splitlines()[1:] if line.strip()]


# -- help -------------------------------------------------------------------------------------------


async def test_question_mark_on_an_empty_composer_opens_help_listing_every_key_and_command(
    tmp_path: Path,
) -> None:
    app = make_app(tmp_path, sample_session(tmp_path))
    async with app.run_test(size=SIZE) as pilot:
        await pilot.pause()
        await pilot.press("question_mark")
        await wait_for(pilot, lambda: isinstance(app.screen, HelpScreen), "the help screen")
        screen = app.screen
        assert isinstance(screen, HelpScreen)
        described = {row.what for row in screen.rows}
        for cls in (AgentTuiApp, MainScreen, SessionTree):
            for binding in cls.BINDINGS:
                assert isinstance(binding, Binding) and binding.id, f"{binding} has no id"
                if binding.description:
                    assert (binding.tooltip or binding.description) in described, binding
        usages = {row.keys for row in screen.rows if row.section == "Slash commands"}
        assert usages == {c.usage for c in COMMANDS}
        await pilot.press("escape")
        await wait_for(pilot, lambda: not isinstance(app.screen, HelpScreen), "closed")
        assert app.composer.text == ""
        # with text in the composer, ? is text
        await pilot.press("w", "h", "y", "question_mark")
        assert app.composer.text == "why?"
        assert not isinstance(app.screen, HelpScreen)


async def test_slash_help_opens_the_help_screen(tmp_path: Path) -> None:
    app = make_app(tmp_path, sample_session(tmp_path))
    async with app.run_test(size=SIZE) as pilot:
        await pilot.pause()
        await pilot.press(*"/help")
        await pilot.press("enter")
        await wait_for(pilot, lambda: isinstance(app.screen, HelpScreen), "the help screen")


# -- keymaps --------------------------------------------------------------------------------------


async def test_the_pi_keymap_uses_pis_keys(tmp_path: Path) -> None:
    (tmp_path / "config.toml").write_text('keymap = "pi"\n')
    path = sample_session(tmp_path)
    app = make_app(tmp_path, path, agent_factory=ScriptedFactory())
    async with app.run_test(size=SIZE) as pilot:
        await pilot.pause()
        await pilot.press("ctrl+l")  # pi: the model selector (here: label, by default)
        await wait_for(pilot, lambda: isinstance(app.screen, ModelPickerScreen), "the model picker")
        await pilot.press("escape")
        await wait_for(pilot, lambda: len(app.screen_stack) == 1, "closed")
        before = len(entries(path))
        await pilot.press("shift+tab")  # pi: the next thinking level, at once
        await wait_for(pilot, lambda: len(entries(path)) == before + 1, "a thinking_level_change")
        assert entries(path)[-1]["type"] == "thinking_level_change"
        await pilot.press("ctrl+t")  # the chooser
        await wait_for(pilot, lambda: isinstance(app.screen, ChoiceScreen), "the thinking choice")
        assert "thinking" in str(app.screen.title_text).lower()  # type: ignore[attr-defined]
        await pilot.press("escape")
        await wait_for(pilot, lambda: len(app.screen_stack) == 1, "closed")
        before = len(entries(path))
        await pilot.press("ctrl+p")  # pi: the next model
        await wait_for(pilot, lambda: len(entries(path)) == before + 1, "a model_change")
        assert entries(path)[-1]["type"] == "model_change"
        assert entries(path)[-1]["modelId"] != "claude-sonnet-4-5"
        await pilot.press("f8")  # compact moved off Ctrl+G (pi's external editor)
        await wait_for(pilot, lambda: isinstance(app.screen, PromptScreen), "the compact prompt")


async def test_the_keys_table_remaps_a_binding_by_id(tmp_path: Path) -> None:
    (tmp_path / "config.toml").write_text('[keys]\ncompact = "f9"\n"tree.hide" = "x"\nnope = "f12"\n')
    path = sample_session(tmp_path)
    app = make_app(tmp_path, path, agent_factory=ScriptedFactory())
    async with app.run_test(size=SIZE) as pilot:
        await pilot.pause()
        assert any("nope: no such binding" in n for n in notices(app))
        await pilot.press("ctrl+g")  # no longer compact
        await pilot.pause()
        assert len(app.screen_stack) == 1
        await pilot.press("f9")
        await wait_for(pilot, lambda: isinstance(app.screen, PromptScreen), "the compact prompt")
        await pilot.press("escape")
        await wait_for(pilot, lambda: len(app.screen_stack) == 1, "closed")
        await pilot.press("f1")
        app.session_tree.reveal("a5")
        await wait_for(pilot, lambda: app.selected_id == "a5", "a5 selected")
        before = len(entries(path))
        await pilot.press("x")
        await wait_for(pilot, lambda: len(entries(path)) == before + 1, "the hide on x")
        assert entries(path)[-1]["type"] == "context_edit"
        await pilot.press("f1")  # hide the tree... and focus the composer
        await pilot.press("h")
        assert app.composer.text == "h"


# -- copying --------------------------------------------------------------------------------------


def replies_session(tmp_path: Path) -> Path:
    lines = sample_lines()
    code = "Run this:\n\n```python\nprint('hi')\nprint('there')\n```\n\nThen check."
    lines.append(
        {
            "type": "message",
            "id": "a9",
            "parentId": "x1",
            "timestamp": lines[-1]["timestamp"],
            "message": assistant(code),
        }
    )
    return write_lines(tmp_path / "sessions" / "replies.jsonl", lines)


async def test_slash_copy_copies_the_last_reply_or_the_nth_last(tmp_path: Path) -> None:
    app = make_app(tmp_path, replies_session(tmp_path))
    async with app.run_test(size=SIZE) as pilot:
        await pilot.pause()
        await app.run_slash("copy", "")
        assert app.clipboard.startswith("Run this:") and "print('there')" in app.clipboard
        await app.run_slash("copy", "2")
        assert app.clipboard == "The input had a trailing newline."
        await app.run_slash("copy", "40")
        await pilot.pause()
        assert app.clipboard == "The input had a trailing newline."
        assert any("nothing to copy" in n for n in notices(app)), notices(app)


async def test_ctrl_c_copies_the_selected_chat_text_and_never_talks_of_quitting(tmp_path: Path) -> None:
    app = make_app(tmp_path, replies_session(tmp_path))
    async with app.run_test(size=SIZE) as pilot:
        await pilot.pause()
        user = next(w for w in app.chat.query(Static) if "explain the fix instead" in str(w.render()))
        app.screen.selections = {user: Selection(None, None)}
        await pilot.press("ctrl+c")
        await pilot.pause()
        assert app.clipboard == "Actually, explain the fix instead"
        assert any("Copied" in n for n in notices(app))
        assert not any("quit" in n.lower() for n in notices(app))
        assert app.is_running


async def test_a_code_block_is_copied_from_its_header(tmp_path: Path) -> None:
    app = make_app(tmp_path, replies_session(tmp_path))
    async with app.run_test(size=SIZE) as pilot:
        await pilot.pause()
        header = app.chat.query_one(CodeHeader)
        assert "copy python (2 lines)" in str(header.render())
        await pilot.click(header)
        assert app.clipboard == "print('hi')\nprint('there')\n"


def test_markdown_parts_cut_only_at_top_level_fences() -> None:
    text = "intro\n\n```sh\nls\n```\n\n- a list\n\n  ```\n  nested\n  ```\n\nend\n"
    parts = markdown_parts(text)
    assert [kind for kind, _, _ in parts] == ["md", "code", "content", "md"]
    assert parts[1][1] == "sh" and parts[2][2] == "ls\n"
    assert "nested" in parts[3][2], "a fence inside a list stays in the markdown"
    assert "".join(src for kind, _, src in parts if kind != "content") == text


async def test_f5_expands_and_collapses_every_tool_output(tmp_path: Path) -> None:
    from textual.widgets import Collapsible

    app = make_app(tmp_path, sample_session(tmp_path))
    async with app.run_test(size=SIZE) as pilot:
        await pilot.pause()
        tools = list(app.chat.query(Collapsible).filter(".tool-output"))
        assert len(tools) >= 3 and any(t.collapsed for t in tools)
        await pilot.press("f5")
        assert all(not t.collapsed for t in tools)
        await pilot.press("f5")
        assert all(t.collapsed for t in tools)


async def test_a_code_block_of_a_reply_just_streamed_can_be_copied(tmp_path: Path) -> None:
    reply = "Try:\n\n```sh\nmake test\n```\n\nDone."
    factory = ScriptedFactory(reply=reply, chunks=3)
    app = make_app(tmp_path, None, agent_factory=factory)
    async with app.run_test(size=SIZE) as pilot:
        await pilot.press(*"hi")
        await pilot.press("enter")
        await wait_for(pilot, lambda: not app.busy and len(app.index) == 2, "the turn")
        await wait_for(pilot, lambda: bool(app.chat.query(CodeHeader)), "a copy header")
        header = app.chat.query(CodeHeader).last()
        await pilot.click(header)
        assert app.clipboard == "make test\n"
