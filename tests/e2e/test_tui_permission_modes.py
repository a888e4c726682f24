"""The permission modes in the app: Shift+Tab (the bytes ESC [ Z) cycles ask -> accept-edits ->
plan -> auto -> read-only and the status line names the mode, whatever holds the focus; in plan
mode a write the model asks for is refused, the plan it presents is put to the user, and approving
it switches the mode and starts the work. Pilot, and the real program in tmux at 80x24."""

from __future__ import annotations

import functools
import json
import os
import time
from pathlib import Path

import pytest

from tests.e2e.test_tui_e2e import app_command
from tests.support.fake_model_server import FakeModelServer, call, openai_stream
from tests.support.pilot import wait_for
from tests.support.tmux import Tmux
from tests.support.tui_fixtures import ScriptedFactory, make_app, sample_session

pytestmark = [pytest.mark.timeout(180), pytest.mark.slow]

CYCLE = ["accept edits", "plan", "auto", "read-only", "ask"]


def _named(line: str, label: str) -> bool:
    """Whether the status line names ``label`` (ask: names no mode)."""
    return "mode:" not in line if label == "ask" else line.startswith(f"mode: {label} ·")


def status_line(screen: str) -> str:
    return screen.rstrip("\n").splitlines()[-2].strip()  # above the footer


async def test_shift_tab_cycles_the_modes_and_the_status_line_names_each(tmp_path: Path) -> None:
    app = make_app(tmp_path, sample_session(tmp_path), agent_factory=ScriptedFactory())
    async with app.run_test(size=(80, 24)) as pilot:
        await pilot.pause()
        await pilot.press(*"half a message")
        composer = app.composer
        assert app.focused is composer
        line = app.main_screen.status_line
        assert "mode:" not in line.text, line.text  # ask, the default, is not named
        for label in CYCLE:
            await pilot.press("shift+tab")
            await wait_for(pilot, functools.partial(lambda want: _named(line.text, want), label), label)
            assert app.focused is composer and composer.text == "half a message"
        assert app.config.model.switched_mode == "ask"


def _entries(sessions: Path) -> list[dict[str, object]]:
    files = list(sessions.rglob("*.jsonl"))
    if not files:
        return []
    return [json.loads(line) for line in files[0].read_text().splitlines()[1:]]


def test_in_tmux_shift_tab_then_plan_approval_starts_the_work(
    tmp_path: Path, server: FakeModelServer
) -> None:
    command, work, sessions = app_command(tmp_path, server)
    server.push(
        openai_stream(None, tool_calls=[call("w1", "write", {"path": "notes.txt", "content": "hi\n"})])
    )
    server.push(openai_stream("Plan: 1. write notes.txt with hi. 2. read it back."))
    server.push(
        openai_stream(None, tool_calls=[call("w2", "write", {"path": "notes.txt", "content": "hi\n"})])
    )
    server.push(openai_stream("Done: notes.txt written."))
    tmux = Tmux(f"agent-tui-modes-{os.getpid()}", 80, 24)
    tmux.start(command, work)
    try:
        tmux.wait(lambda s: "new session" in s and "Send" in s, "the app, ready to type")
        assert "mode:" not in status_line(tmux.screen()), tmux.screen()
        tmux.type("add notes")
        tmux.wait_text("add notes")
        for label in CYCLE:  # the bytes a terminal sends for Shift+Tab
            tmux.keys("-H", "1b", "5b", "5a")
            tmux.wait(functools.partial(lambda want, s: _named(status_line(s), want), label), label)
        assert "add notes" in tmux.screen()  # the composer kept its text (and the focus)
        tmux.keys("-H", "1b", "5b", "5a")
        tmux.keys("-H", "1b", "5b", "5a")
        tmux.wait(lambda s: status_line(s).startswith("mode: plan"), "plan mode")
        tmux.keys("Enter")
        screen = tmux.wait_text("Approve the plan above")
        assert not (work / "notes.txt").exists(), "plan mode wrote a file"
        refused = json.dumps(server.requests[1].body)
        assert "agent-tui is in plan mode" in refused and "Plan mode is on" in json.dumps(
            server.requests[0].body
        )
        assert "Yes, in accept-edits" in screen
        for _ in range(3):  # from "keep planning" up to accept-edits, each key after a pause
            time.sleep(1.2)
            tmux.keys("Up")
        time.sleep(1.2)
        tmux.keys("Enter")
        tmux.wait_text("notes.txt written.")
        tmux.wait(lambda s: status_line(s).startswith("mode: accept edits"), "accept-edits")
        assert (work / "notes.txt").read_text() == "hi\n"
        assert "I approve the plan" in json.dumps(server.requests[2].body)
        modes = [e["data"] for e in _entries(sessions) if e.get("customType") == "agent-tui.permission-mode"]
        assert modes[-1] == {"mode": "accept-edits", "previous": "plan"}, modes
        assert {"mode": "plan", "previous": "ask"} in modes
    finally:
        tmux.stop()
