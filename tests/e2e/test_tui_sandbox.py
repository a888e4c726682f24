"""The sandbox in the app: the user's ``!cmd`` runs in it as the model's commands do, ``/sandbox``
shows it at 80x24 and switches it."""

from __future__ import annotations

import tempfile
from collections.abc import Iterator
from pathlib import Path

import pytest

from agent_tui.store.session import Session
from agent_tui.tui import sandbox_state
from agent_tui.tui.screens.text_view import TextViewScreen
from tests.support.pilot import notices, wait_for
from tests.support.tui_fixtures import ScriptedFactory, make_app

pytestmark = pytest.mark.timeout(60)


@pytest.fixture
def world(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Path]:
    """A temp dir of the test's own (what the sandbox leaves writable) and a fresh app sandbox."""
    (tmp_path / "tmp").mkdir()
    (tmp_path / "outside").mkdir()
    monkeypatch.setattr(tempfile, "tempdir", str(tmp_path / "tmp"))
    monkeypatch.setattr(sandbox_state, "_current", [])
    yield tmp_path


def bash_messages(app: object) -> list[dict[str, object]]:
    session = getattr(app, "session", None)
    if session is None:
        return []
    with Session.open(session.path, write=False) as s:
        return [
            e.message
            for e in s.index.entries
            if e.type == "message" and e.message and e.message.get("role") == "bashExecution"
        ]


@pytest.mark.slow  # bubblewrap, twice, under an app
async def test_bang_commands_run_in_the_sandbox_and_slash_sandbox_switches_it(world: Path) -> None:
    outside = world / "outside"
    app = make_app(world, None, agent_factory=ScriptedFactory())
    async with app.run_test(size=(80, 24)) as pilot:
        app.composer.set_text(f"!echo in > inside.txt; echo out > {outside}/escape.txt")
        await pilot.press("enter")
        await wait_for(pilot, lambda: len(bash_messages(app)) == 1, "the first command")
        (first,) = bash_messages(app)
        assert (world / "project" / "inside.txt").exists() and not (outside / "escape.txt").exists()
        assert "Read-only file system" in str(first["output"]) and "stopped a write" in str(first["output"])

        app.composer.set_text("/sandbox")
        await pilot.press("enter")
        await wait_for(pilot, lambda: isinstance(app.screen, TextViewScreen), "the sandbox view")
        assert isinstance(app.screen, TextViewScreen)
        shown = app.screen.text
        assert shown.startswith("sandbox: workspace-write") and "~/.ssh" in shown and "no network" in shown
        await pilot.press("escape")

        app.composer.set_text("/sandbox sideways")
        await pilot.press("enter")
        await wait_for(pilot, lambda: any("usage: /sandbox" in n for n in notices(app)), "the usage line")

        app.composer.set_text("/sandbox off")
        await pilot.press("enter")
        await wait_for(pilot, lambda: any("sandbox: off" in n for n in notices(app)), "the switch")
        app.composer.set_text(f"!echo out > {outside}/escape.txt")
        await pilot.press("enter")
        await wait_for(pilot, lambda: len(bash_messages(app)) == 2, "the second command")
        assert (outside / "escape.txt").read_text() == "out\n"


async def test_the_app_says_at_start_when_the_sandbox_cannot_run(
    world: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("AGENT_TUI_BWRAP", str(world / "no-such-bwrap"))
    monkeypatch.setattr(sandbox_state, "_said", [])
    app = make_app(world, None)  # the real agent's path (no model configured: the sandbox is still said)
    async with app.run_test(size=(80, 24)) as pilot:
        await wait_for(pilot, lambda: any("sandbox is unavailable" in n for n in notices(app)), "the line")
        lines = [n for n in notices(app) if "sandbox" in n]
        assert len(lines) == 1 and "every command will be asked" in lines[0]
        assert not sandbox_state.app_sandbox().active
