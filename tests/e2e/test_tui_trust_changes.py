"""A hook written to the config file after the start is not loaded at ``/reload`` unasked: the app
puts its own question (not the folder-trust one), showing the command; Escape leaves it out and it
never runs. With 30 changed hooks at 80x24 the list scrolls in a bounded box and the choices and
the hint stay on screen. (Issue 24, finding 2.)"""

from __future__ import annotations

import argparse
import os
import subprocess
import time
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest
from textual.pilot import Pilot

from agent_tui.agent import extensions
from agent_tui.agent.build import make_provider
from agent_tui.agent.loop import AgentLoop
from agent_tui.store.session import Session
from agent_tui.tui.agent_bridge import ModelChoice, make_extensions
from agent_tui.tui.launch import start_loading
from agent_tui.tui.screens.trust_changes import TrustChangesScreen
from tests.e2e.test_tui_e2e import app_command
from tests.support.agent_support import make_config
from tests.support.fake_model_server import FakeModelServer, anthropic_stream, openai_stream, text
from tests.support.files import write
from tests.support.pilot import notices, wait_for
from tests.support.screen_text import screen_lines
from tests.support.tmux import Tmux
from tests.support.tui_fixtures import SIZE, make_app

pytestmark = [pytest.mark.timeout(120), pytest.mark.slow]


async def send(pilot: Pilot[None], value: str) -> None:
    await pilot.press(*[{" ": "space", "/": "slash", ":": "colon"}.get(c, c) for c in value], "enter")


def app_with_hooks(server: FakeModelServer, tmp_path: Path) -> tuple[Any, Path]:
    """An app whose sessions' agents read their hooks from a config file (returned) at each reload."""
    work = tmp_path / "project"
    work.mkdir()
    config_path = write(tmp_path / "config" / "config.toml", "")
    config = replace(make_config(server), config_path=config_path)
    args = argparse.Namespace()

    def factory(session: Session, choice: ModelChoice) -> AgentLoop:
        assert choice.resources is not None
        return AgentLoop(
            session,
            make_provider(config),
            [],
            config=config,
            cwd=str(work),
            resources=choice.resources.get(),
            extensions=make_extensions(config, choice, str(work)),
        )

    loading = start_loading(args, work, config_path)
    app = make_app(
        tmp_path,
        None,
        agent_factory=factory,
        resources=loading,
        model=ModelChoice(resources=loading),
        reload=lambda: start_loading(args, work, config_path),
    )
    return app, config_path


async def test_a_hook_added_to_the_config_asks_at_reload_and_escape_leaves_it_out(
    server: FakeModelServer, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(extensions, "_shared", {})
    marker = tmp_path / "HOOKED"
    app, config_path = app_with_hooks(server, tmp_path)
    server.push(anthropic_stream(text("hi")), anthropic_stream(text("again")))
    async with app.run_test(size=SIZE) as pilot:
        await send(pilot, "hello")
        await wait_for(pilot, lambda: len(server.requests) == 1 and not app.busy, "the first turn", 30)
        with config_path.open("a") as f:  # the model (or anyone) adds a hook
            f.write(f'[[hooks.Stop]]\n[[hooks.Stop.hooks]]\ncommand = "touch {marker}"\n')
        await send(pilot, "/reload")
        await wait_for(pilot, lambda: isinstance(app.screen, TrustChangesScreen), "the question", 30)
        question = app.screen
        assert isinstance(question, TrustChangesScreen)
        assert f"hook Stop runs `touch {marker}`" in question.body_text
        assert "Trust this folder" not in question.title_text and "changed" in question.title_text
        await pilot.press("escape")
        await wait_for(pilot, lambda: any(n.startswith("Reloaded:") for n in notices(app)), "the reload", 30)
        (said,) = [n for n in notices(app) if n.startswith("Reloaded:")]
        assert said.endswith("0 MCP servers, 0 hooks"), said
        assert any("not loaded" in n and "--trust-project" in n for n in notices(app))
        await send(pilot, "and now")
        await wait_for(pilot, lambda: len(server.requests) == 2 and not app.busy, "the second turn", 30)
    assert not marker.exists()


async def test_thirty_changed_hooks_scroll_and_the_choices_stay_on_screen_at_80x24(
    server: FakeModelServer, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(extensions, "_shared", {})
    app, config_path = app_with_hooks(server, tmp_path)
    server.push(anthropic_stream(text("hi")))
    async with app.run_test(size=(80, 24)) as pilot:
        await send(pilot, "hello")
        await wait_for(pilot, lambda: len(server.requests) == 1 and not app.busy, "the first turn", 30)
        with config_path.open("a") as f:  # 30 hooks, each command long enough to wrap at 80 columns
            for i in range(30):
                command = f"echo hook-number-{i:02d} " + "x" * 60
                f.write(f'[[hooks.Stop]]\n[[hooks.Stop.hooks]]\ncommand = "{command}"\n')
        await send(pilot, "/reload")
        await wait_for(pilot, lambda: isinstance(app.screen, TrustChangesScreen), "the question", 30)
        await pilot.pause(0.3)
        lines = screen_lines(app)
        shown = "\n".join(lines)
        assert len(lines) == 24
        assert "30 hooks, MCP servers or permission rules" in shown, shown
        assert "Yes: load them" in shown and "No: leave them out" in shown, shown
        assert "Enter to choose" in shown, shown
        assert "hook-number-00" in shown and "hook-number-29" not in shown, shown
        body = app.screen.query_one("#trust-changes-body")
        assert body.size.height <= 8 and body.max_scroll_y > 0
        await pilot.pause(1.2)  # past the question's guard (its grace, the typing gap)
        await pilot.press("tab")  # the list of changes, then scroll it to its end
        assert app.screen.focused is body
        await pilot.press("end")
        await pilot.pause(0.3)
        shown = "\n".join(screen_lines(app))
        assert "hook-number-29" in shown and "Yes: load them" in shown and "Enter to choose" in shown, shown
        await pilot.press("escape")
        await wait_for(pilot, lambda: not isinstance(app.screen, TrustChangesScreen), "the question gone", 10)
        await wait_for(pilot, lambda: any(n.startswith("Reloaded:") for n in notices(app)), "the reload", 30)
        assert next(n for n in notices(app) if n.startswith("Reloaded:")).endswith("0 hooks")


def test_in_tmux_thirty_changed_hooks_keep_the_choices_and_tab_scrolls_to_the_last(
    tmp_path: Path, server: FakeModelServer
) -> None:
    """The real program at 80x24, real bytes: a first run accepts the config's hooks as they are
    (none); 30 written since wait, and the question about them keeps its choices on screen; Tab
    then End (sent as the terminal sends them) show the last; Escape leaves them out unrun."""
    command, work, _sessions = app_command(tmp_path, server)
    first = command.replace("; sleep 30", " -p hi")
    server.push(openai_stream("ok"))
    done = subprocess.run(["sh", "-c", first], cwd=work, capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr
    marker = tmp_path / "RAN"
    with (tmp_path / "config.toml").open("a") as f:  # by the model, a script, anyone
        for i in range(30):
            f.write(
                f'[[hooks.UserPromptSubmit]]\n[[hooks.UserPromptSubmit.hooks]]\ncommand = "touch {marker} # hook-number-{i:02d}"\n'
            )
    server.push(openai_stream("Hello."))
    tmux = Tmux(f"agent-tui-trust-changes-{os.getpid()}", 80, 24)
    tmux.start(command, work)
    try:
        tmux.wait(lambda s: "new session" in s and "Send" in s, "the app, ready to type")
        tmux.type("hello")
        tmux.wait_text("hello")
        tmux.keys("Enter")
        screen = tmux.wait_text("30 hooks, MCP servers or permission rules")
        time.sleep(1.5)  # past the question's guard
        screen = tmux.screen()
        for text in ("Yes: load them", "No: leave them out", "Enter to choose", "hook-number-00"):
            assert text in screen, screen
        assert "hook-number-29" not in screen
        tmux.keys("Tab")
        tmux.keys("End")
        screen = tmux.wait_text("hook-number-29")
        assert "Yes: load them" in screen and "Enter to choose" in screen, screen
        tmux.keys("Escape")
        tmux.wait_text("Hello.")
    finally:
        tmux.stop()
    assert not marker.exists()


async def test_twelve_changed_hooks_show_what_each_replaces_and_fit_80x24(
    server: FakeModelServer, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """12 hooks accepted at the first start, all changed since: the question is its own (not the
    folder's), each line says what would run now and what it replaces (the diff), the list
    scrolls and the choices and the hint stay on an 80x24 screen."""
    monkeypatch.setattr(extensions, "_shared", {})
    app, config_path = app_with_hooks(server, tmp_path)

    def hooks(word: str) -> str:
        return "".join(
            f'[[hooks.Stop]]\n[[hooks.Stop.hooks]]\ncommand = "echo {word}-{i:02d}"\n' for i in range(12)
        )

    config_path.write_text(hooks("lint"))  # the user's, accepted as they are at the first start
    server.push(anthropic_stream(text("hi")))
    async with app.run_test(size=(80, 24)) as pilot:
        await send(pilot, "hello")
        await wait_for(pilot, lambda: len(server.requests) == 1 and not app.busy, "the first turn", 30)
        config_path.write_text(hooks("pwned"))  # then every one of them changed
        await send(pilot, "/reload")
        await wait_for(pilot, lambda: isinstance(app.screen, TrustChangesScreen), "the question", 30)
        await pilot.pause(0.3)
        question = app.screen
        assert isinstance(question, TrustChangesScreen)
        assert "Trust this folder" not in question.title_text
        for i in range(12):
            assert (
                f"runs `echo pwned-{i:02d}` (from {config_path}) — was: runs `echo lint-{i:02d}`"
                in question.body_text
            )
        lines = screen_lines(app)
        shown = "\n".join(lines)
        assert len(lines) == 24
        assert "12 hooks, MCP servers or permission rules" in shown, shown
        assert "was: runs" in shown and "echo lint-00" in shown, shown
        assert "Yes: load them" in shown and "No: leave them out" in shown and "Enter to choose" in shown, (
            shown
        )
        await pilot.pause(1.2)  # past the question's guard
        await pilot.press("tab", "end")
        await pilot.pause(0.3)
        shown = "\n".join(screen_lines(app))
        assert "echo lint-11" in shown and "Yes: load them" in shown and "Enter to choose" in shown, shown
        await pilot.press("escape")
        await wait_for(pilot, lambda: any(n.startswith("Reloaded:") for n in notices(app)), "the reload", 30)
        assert next(n for n in notices(app) if n.startswith("Reloaded:")).endswith("0 hooks")
