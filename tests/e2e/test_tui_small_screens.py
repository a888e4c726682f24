"""At 80x24 and 60x15 every dialog and notice shows its text whole: read off the composed
screen, as a terminal shows it, every title, hint and count is there word for word, and every
list and box is inside its dialog (the choices of a long permission question too)."""

from __future__ import annotations

from functools import partial
from pathlib import Path

import pytest
from textual.containers import VerticalScroll
from textual.widgets import Input, Label, OptionList

from agent_tui.config import no_provider_message
from agent_tui.tui.agent_bridge import ModelChoice
from agent_tui.tui.screens.history_search import HistorySearch
from agent_tui.tui.screens.model_picker import ModelPickerScreen
from agent_tui.tui.screens.permission import PermissionScreen
from tests.support.dialogs import LONG_COMMAND, OPENERS, dialog_app, is_dialog, settle
from tests.support.model_env import without_provider_env
from tests.support.pilot import wait_for
from tests.support.screen_text import assert_on_screen, assert_whole, shown_in, visible_region
from tests.support.tui_fixtures import make_app

pytestmark = [pytest.mark.timeout(60), pytest.mark.slow]  # a Textual app per test

DIALOGS = [name for name in OPENERS if name != "queue"]


def _first_is(picker: ModelPickerScreen, prefix: str) -> bool:
    return bool(picker.shown) and picker.shown[0].spec.startswith(prefix)


def _text(label: Label) -> str:
    return str(label.render())


@pytest.mark.parametrize("size", [(80, 24), (60, 15)], ids=lambda s: f"{s[0]}x{s[1]}")
@pytest.mark.parametrize("dialog", DIALOGS)
async def test_every_dialog_shows_its_title_body_and_hint_whole_on_a_small_terminal(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, dialog: str, size: tuple[int, int]
) -> None:
    app = dialog_app(tmp_path, monkeypatch, dialog)
    async with app.run_test(size=size) as pilot:
        await OPENERS[dialog](pilot)
        screen = app.screen
        assert is_dialog(screen), screen
        labels = list(screen.query(Label))
        assert labels
        for label in labels:
            if label.display:
                assert_on_screen(app, label)
                assert_whole(app, label, _text(label))
        for widget in [*screen.query(OptionList), *screen.query(Input), *screen.query(VerticalScroll)]:
            if widget.display:
                assert_on_screen(app, widget)


async def test_the_first_run_notice_is_whole_and_short_at_80x24(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    without_provider_env(monkeypatch)
    config = Path("/home/someone/.config/agent-tui/config.toml")
    app = make_app(tmp_path, None, model=ModelChoice(config_path=config))
    async with app.run_test(size=(80, 24)) as pilot:
        await settle(pilot)
        notice = app.main_screen.notice
        assert notice.display
        message = no_provider_message(config).removeprefix("agent-tui: ")
        assert_whole(app, notice, message)
        for example in ("http://localhost:11434/v1", "llama.cpp :8080", "vLLM :8000", "LM Studio :1234"):
            assert example in shown_in(app, notice)
        assert "agent-tui --list-models" in shown_in(app, notice)
        assert notice.outer_size.height <= 6, "the notice leaves the chat most of the screen"
        assert notice.virtual_size.height <= notice.size.height, "nothing of it scrolled out of view"


async def test_the_model_pickers_rows_keep_the_id_whole_at_80_and_60_columns(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    app = dialog_app(tmp_path, monkeypatch, "model_picker")
    async with app.run_test(size=(80, 24)) as pilot:
        await OPENERS["model_picker"](pilot)
        picker = app.screen
        assert isinstance(picker, ModelPickerScreen)
        options = picker.query_one(OptionList)
        for size in ((80, 24), (60, 20)):
            await pilot.resize_terminal(*size)
            await pilot.pause(0.1)
            for query, first in (
                ("sonnet", "anthropic/claude-sonnet"),
                ("bedrock global", "amazon-bedrock/global."),
            ):
                picker.query_one(Input).value = query
                await wait_for(pilot, partial(_first_is, picker, first), f"the {query} models")
                await pilot.pause(0.1)
                listed = shown_in(app, visible_region(app, options))
                for model in picker.shown[: options.size.height // 2]:
                    assert model.spec in listed, (size, model.spec, listed)
                assert "…" not in listed


async def test_a_long_command_keeps_the_choices_on_screen_and_scrolls_to_its_last_line(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    app = dialog_app(tmp_path, monkeypatch, "permission_long_command")
    async with app.run_test(size=(80, 24)) as pilot:
        await OPENERS["permission_long_command"](pilot)
        for size in ((80, 24), (60, 15), (200, 50)):
            await pilot.resize_terminal(*size)
            await pilot.pause(0.2)
            screen = app.screen
            assert isinstance(screen, PermissionScreen)
            choices = screen.query_one(OptionList)
            assert_on_screen(app, choices)
            for choice in ("1 Yes", "2 Yes, for this session", "3 No (the model is told)"):
                assert choice in shown_in(app, choices), size
            assert choices.highlighted == 2, "Deny stays the default"
            box = screen.query_one("#permission-call", VerticalScroll)
            assert_on_screen(app, box)
            if size[1] < 50:  # (at 200x50 the box holds all 31 lines)
                assert box.max_scroll_y > 0 and LONG_COMMAND.splitlines()[-1] not in shown_in(app, box)
            for _ in range(40):
                if LONG_COMMAND.splitlines()[-1] in shown_in(app, box):
                    break
                await pilot.press("pagedown")
                await pilot.pause()
            assert LONG_COMMAND.splitlines()[-1] in shown_in(app, box), f"the last line, by PgDn, at {size}"
            await pilot.press("pageup")
            box.scroll_home(animate=False)
            await pilot.pause()


async def test_the_help_cuts_no_key_or_command_at_80_columns(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    app = dialog_app(tmp_path, monkeypatch, "help")
    async with app.run_test(size=(80, 24)) as pilot:
        await OPENERS["help"](pilot)
        body = app.screen.query_one("#help-body", VerticalScroll)
        seen = ""
        while True:
            seen += " " + shown_in(app, body)
            if body.scroll_y >= body.max_scroll_y:
                break
            body.scroll_to(y=body.scroll_y + body.size.height, animate=False)
            await pilot.pause()
        assert "…" not in seen
        for usage in (
            "/prune [preview] [KEEP_LAST [MIN_TOKENS]]",
            "/model [PROVIDER/MODEL]",
            "mouse drag, Ctrl+C",
        ):
            assert (
                usage in seen or usage.replace(" [", "  [") in seen or all(w in seen for w in usage.split())
            ), usage


async def test_the_history_search_counts_one_more_line_as_a_line(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    app = dialog_app(tmp_path, monkeypatch, "history_search")
    async with app.run_test(size=(80, 24)) as pilot:
        await settle(pilot)
        app.push_screen(HistorySearch(["two\nlines", "three\nlines\nhere"]))
        await wait_for(pilot, lambda: isinstance(app.screen, HistorySearch), "the search")
        await pilot.pause()
        options = app.screen.query_one(OptionList)
        rows = [str(options.get_option_at_index(i).prompt) for i in range(options.option_count)]
        assert rows == ["three  (+2 lines)", "two  (+1 line)"]
