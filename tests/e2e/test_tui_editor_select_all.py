"""The replace editor selects all on Ctrl+A (Alt+A with pi's keys, where Ctrl+A is the line start),
and its keys line says so on one line at 80 columns."""

from __future__ import annotations

from pathlib import Path

import pytest
from textual.widgets import Label, TextArea

from agent_tui.tui.screens.editor import EditorScreen
from tests.support.pilot import wait_for
from tests.support.tui_fixtures import ScriptedFactory, make_app, sample_session

pytestmark = [pytest.mark.timeout(60), pytest.mark.slow]  # a Textual app per test

TEXT = "first line\nsecond line"


@pytest.mark.parametrize(
    ("config", "select", "expected_hint"),
    [
        ("", "ctrl+a", "Ctrl+A selects all · Ctrl+S to save · Escape to cancel"),
        ('keymap = "pi"\n', "alt+a", "Alt+A selects all · Ctrl+S to save · Escape to cancel"),
    ],
)
async def test_select_all_then_typing_replaces_the_text(
    tmp_path: Path, config: str, select: str, expected_hint: str
) -> None:
    (tmp_path / "config.toml").write_text(config)
    app = make_app(tmp_path, sample_session(tmp_path), agent_factory=ScriptedFactory())
    async with app.run_test(size=(80, 24)) as pilot:
        screen = EditorScreen("Replace", TEXT)
        app.push_screen(screen)
        await wait_for(pilot, lambda: app.screen is screen and bool(screen.query(TextArea)), "the editor")
        await pilot.pause()
        area = screen.query_one(TextArea)
        labels = [str(label.content) for label in screen.query(".dialog-hint").results(Label)]
        assert labels[-1] == expected_hint
        assert screen.query(".dialog-hint").last().size.height == 1, "one line at 80 columns"
        if select == "alt+a":  # pi's Ctrl+A: the line start, nothing selected
            await pilot.press("ctrl+a")
            assert area.selected_text == "" and area.cursor_location[1] == 0
        await pilot.press(select)
        assert area.selected_text == TEXT
        await pilot.press("x")
        assert area.text == "x"


async def test_the_review_editors_keys_fit_at_80_columns(tmp_path: Path) -> None:
    app = make_app(tmp_path, sample_session(tmp_path), agent_factory=ScriptedFactory())
    async with app.run_test(size=(80, 24)) as pilot:
        screen = EditorScreen("Review", TEXT, addition=("adds what it leaves out", lambda t: t + "!"))
        app.push_screen(screen)
        await wait_for(pilot, lambda: app.screen is screen and bool(screen.query(TextArea)), "the editor")
        await pilot.pause()
        keys = list(screen.query(".dialog-hint").results(Label))[-1]
        assert str(keys.content) == "Ctrl+L adds what it leaves out · Ctrl+A all · Ctrl+S save · Esc cancel"
        assert keys.size.height == 1, "one line at 80 columns"
        await pilot.press("ctrl+a")
        assert screen.query_one(TextArea).selected_text == TEXT


@pytest.mark.parametrize("config", ["", 'keymap = "pi"\n'])
async def test_the_second_action_ctrl_n_fits_and_waits_for_the_guard(tmp_path: Path, config: str) -> None:
    """The review's Ctrl+N (pin what the summary leaves out): on the keys line at 80 columns, run
    on the text once the editor is armed, and nothing while the question's guard holds."""
    (tmp_path / "config.toml").write_text(config)
    app = make_app(tmp_path, sample_session(tmp_path), agent_factory=ScriptedFactory())
    ran: list[str] = []

    async def second(text: str) -> None:
        ran.append(text)

    async with app.run_test(size=(80, 24)) as pilot:
        now = [0.0]
        screen = EditorScreen(
            "Review",
            TEXT,
            addition=("add lost", lambda t: t),
            second=("pin lost", second),
            guarded=True,
            clock=lambda: now[0],
        )
        app.push_screen(screen)
        await wait_for(pilot, lambda: app.screen is screen and bool(screen.query(TextArea)), "the editor")
        await pilot.pause()
        keys = list(screen.query(".dialog-hint").results(Label))[-1]
        select = "Alt+A" if config else "Ctrl+A"
        assert str(keys.content) == f"Ctrl+L add lost · Ctrl+N pin lost · {select} all · Ctrl+S save · Esc"
        assert keys.size.height == 1, "one line at 80 columns"
        await pilot.press("ctrl+n")  # the question just appeared (its clock stands still): nothing
        await pilot.pause()
        assert ran == [] and not screen.armed
        now[0] = 100.0
        await wait_for(pilot, lambda: screen.armed, "the guard to pass")
        await pilot.press("ctrl+n")
        await wait_for(pilot, lambda: ran == [TEXT], "the second action")


async def test_keys_remaps_the_editors_select_all(tmp_path: Path) -> None:
    (tmp_path / "config.toml").write_text('[keys]\n"editor.select_all" = "ctrl+e"\n')
    app = make_app(tmp_path, sample_session(tmp_path), agent_factory=ScriptedFactory())
    async with app.run_test(size=(80, 24)) as pilot:
        await pilot.pause()
        assert not [n for n in app._notifications if "editor.select_all" in str(n.message)]
        screen = EditorScreen("Replace", TEXT)
        app.push_screen(screen)
        await wait_for(pilot, lambda: app.screen is screen and bool(screen.query(TextArea)), "the editor")
        await pilot.pause()
        labels = [str(label.content) for label in screen.query(".dialog-hint").results(Label)]
        assert labels[-1].startswith("Ctrl+E selects all")
        await pilot.press("ctrl+e")
        assert screen.query_one(TextArea).selected_text == TEXT
