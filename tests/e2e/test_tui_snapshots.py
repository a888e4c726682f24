"""Snapshots of the main screen states (pytest-textual-snapshot).

Fixed terminal size, fixed session contents (ids and timestamps), no cursor
blink, no clock on screen. Update with ``pytest tests/e2e/test_tui_snapshots.py --snapshot-update``
after a deliberate change, and look at the SVGs in the report.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from textual.pilot import Pilot

from agent_tui.tui.agent_bridge import ModelChoice
from agent_tui.tui.app import AgentTuiApp
from tests.support.tui_fixtures import SIZE, ScriptedFactory, make_app, sample_session, write_lines

pytestmark = [pytest.mark.timeout(60), pytest.mark.slow]  # a Textual app per test


async def settle(pilot: Pilot[None]) -> None:
    """Let every pending refresh land, and clear the toasts."""
    await pilot.pause()
    pilot.app.clear_notifications()
    await pilot.pause()


async def until(pilot: Pilot[None], condition: Any, steps: int = 200) -> None:
    for _ in range(steps):
        if condition():
            return
        await pilot.pause(0.02)
    raise AssertionError("condition not reached")


def agent() -> ScriptedFactory:
    """A scripted agent: the screens do not depend on the keys or config of the machine."""
    return ScriptedFactory()


def test_main_screen(snap_compare: Any, tmp_path: Path) -> None:
    app = make_app(tmp_path, sample_session(tmp_path), agent_factory=agent())
    assert snap_compare(app, terminal_size=SIZE, run_before=settle)


def test_main_screen_light_theme(snap_compare: Any, tmp_path: Path) -> None:
    app = make_app(tmp_path, sample_session(tmp_path), theme="agent-light", agent_factory=agent())
    assert snap_compare(app, terminal_size=SIZE, run_before=settle)


def test_tree_with_the_fork_open(snap_compare: Any, tmp_path: Path) -> None:
    app = make_app(tmp_path, sample_session(tmp_path), agent_factory=agent())

    async def run_before(pilot: Pilot[None]) -> None:
        assert isinstance(pilot.app, AgentTuiApp)
        tree = pilot.app.session_tree
        await pilot.press("f1")
        tree.reveal("a3")
        await until(pilot, lambda: tree.cursor_entry_id == "a3")
        await pilot.press("space")
        await until(pilot, lambda: any("Now add a test" in x for x in tree.visible_labels()))
        await settle(pilot)

    assert snap_compare(app, terminal_size=SIZE, run_before=run_before)


def test_replace_editor(snap_compare: Any, tmp_path: Path) -> None:
    app = make_app(tmp_path, sample_session(tmp_path), agent_factory=agent())

    async def run_before(pilot: Pilot[None]) -> None:
        assert isinstance(pilot.app, AgentTuiApp)
        await settle(pilot)
        pilot.app.action_replace("a2")
        await until(pilot, lambda: len(pilot.app.screen_stack) == 2)
        await pilot.pause()

    assert snap_compare(app, terminal_size=SIZE, run_before=run_before)


def test_session_picker(snap_compare: Any, tmp_path: Path) -> None:
    sample_session(tmp_path, "2026-01-01_first.jsonl")
    write_lines(
        tmp_path / "sessions" / "2026-01-02_second.jsonl",
        [
            {
                "type": "session",
                "version": 3,
                "id": "s2",
                "timestamp": "2026-01-02T00:00:00.000Z",
                "cwd": "/tmp/project",
            },
            {
                "type": "message",
                "id": "q1",
                "parentId": None,
                "timestamp": "2026-01-02T10:00:00.000Z",
                "message": {"role": "user", "content": "Write the release notes", "timestamp": 1},
            },
            {
                "type": "session_info",
                "id": "n1",
                "parentId": "q1",
                "timestamp": "2026-01-02T10:00:01.000Z",
                "name": "release",
            },
        ],
    )
    app = make_app(tmp_path, None, pick=True, agent_factory=agent())

    async def run_before(pilot: Pilot[None]) -> None:
        from agent_tui.tui.screens.session_picker import SessionPicker

        await until(pilot, lambda: len(pilot.app.screen_stack) == 2)
        picker = pilot.app.screen
        assert isinstance(picker, SessionPicker)
        await until(pilot, lambda: picker.searched == "" and len(picker.shown) == 2)
        await pilot.pause()

    assert snap_compare(app, terminal_size=SIZE, run_before=run_before)


def test_streaming_reply(snap_compare: Any, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    counter = iter(range(1, 1000))
    monkeypatch.setattr("agent_tui.store.clock.new_id", lambda taken=None: f"new{next(counter):05d}")
    factory = ScriptedFactory(
        reply="Let me **check** the parser.\n\nIt strips the input first.", chunks=2, hold=True
    )
    app = make_app(tmp_path, sample_session(tmp_path), agent_factory=factory)

    async def run_before(pilot: Pilot[None]) -> None:
        assert isinstance(pilot.app, AgentTuiApp)
        app = pilot.app
        app.main_screen.status_line.clock = lambda: 100.0  # the spinner and the elapsed time stand still
        await pilot.press(*"why?")
        await pilot.press("enter")
        await until(pilot, lambda: bool(factory.turns) and factory.turns[0].holding.is_set())
        await until(
            pilot, lambda: app.chat.streaming is not None and app.chat.streaming._shown_tail is not None
        )
        await pilot.pause(0.2)  # one more flush of the reply's buffers
        await settle(pilot)

    assert snap_compare(app, terminal_size=SIZE, run_before=run_before)
    factory.turns[0].abort()


def test_new_session_without_a_model(
    snap_compare: Any, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    for name in ("ANTHROPIC_API_KEY", "OPENAI_API_KEY", "ANTHROPIC_BASE_URL", "OPENAI_BASE_URL"):
        monkeypatch.delenv(name, raising=False)
    app = make_app(tmp_path, None, model=ModelChoice(config_path=Path("/nonexistent/agent-tui/config.toml")))
    assert snap_compare(app, terminal_size=SIZE, run_before=settle)


# -- the layout at three sizes: the chat and composer always usable --------------------

SIZES = [(80, 24), (120, 40), (200, 50)]


@pytest.mark.parametrize("size", SIZES, ids=lambda s: f"{s[0]}x{s[1]}")
def test_layout_first_screen(snap_compare: Any, tmp_path: Path, size: tuple[int, int]) -> None:
    app = make_app(tmp_path, None, agent_factory=agent())
    assert snap_compare(app, terminal_size=size, run_before=settle)


@pytest.mark.parametrize("size", SIZES, ids=lambda s: f"{s[0]}x{s[1]}")
def test_layout_conversation_with_tool_calls(
    snap_compare: Any, tmp_path: Path, size: tuple[int, int]
) -> None:
    app = make_app(tmp_path, sample_session(tmp_path), agent_factory=agent())
    assert snap_compare(app, terminal_size=size, run_before=settle)


def _open(key: str) -> Any:
    async def run_before(pilot: Pilot[None]) -> None:
        await settle(pilot)
        await pilot.press(key)
        await pilot.pause(0.2)
        await settle(pilot)

    return run_before


@pytest.mark.parametrize("size", SIZES, ids=lambda s: f"{s[0]}x{s[1]}")
def test_layout_tree_open(snap_compare: Any, tmp_path: Path, size: tuple[int, int]) -> None:
    app = make_app(tmp_path, sample_session(tmp_path), agent_factory=agent())
    assert snap_compare(app, terminal_size=size, run_before=_open("f1"))


@pytest.mark.parametrize("size", SIZES, ids=lambda s: f"{s[0]}x{s[1]}")
def test_layout_panel_open(snap_compare: Any, tmp_path: Path, size: tuple[int, int]) -> None:
    app = make_app(tmp_path, sample_session(tmp_path), agent_factory=agent())
    assert snap_compare(app, terminal_size=size, run_before=_open("f3"))
