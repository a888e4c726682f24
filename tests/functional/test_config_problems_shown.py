"""Each face says an unknown or mistyped config key as one line and starts as before: print mode on
stderr, the app as a notice; the app's eager MCP start reads the typed ``[mcp.servers.*]``."""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import Any

import pytest

from agent_tui.cli import print_mode
from agent_tui.tui import agent_bridge

TYPO = 'tehme = "agent-light"\n[openai]\nbase_url = "http://127.0.0.1:9/v1"\nmodle = "m"\n'


def test_print_mode_says_each_problem_on_stderr_and_goes_on(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    path = tmp_path / "config.toml"
    path.write_text(TYPO)
    monkeypatch.setenv("AGENT_TUI_CONFIG", str(path))
    for name in ("OPENAI_API_KEY", "OPENAI_BASE_URL", "ANTHROPIC_API_KEY", "AGENT_TUI_PERMISSIONS"):
        monkeypatch.delenv(name, raising=False)
    args = argparse.Namespace(provider="openai", model="m", base_url=None, permissions="auto")
    config, _ = print_mode.load_settings(args, True)
    assert config.base_url == "http://127.0.0.1:9/v1"  # the rest of the file applies
    assert capsys.readouterr().err.splitlines() == [
        f'agent-tui: {path}: unknown key "tehme"',
        f'agent-tui: {path}: unknown key "modle" in [openai]',
    ]


async def test_the_app_shows_each_problem_as_a_notice(tmp_path: Path) -> None:
    from tests.support.pilot import notices
    from tests.support.tui_fixtures import SIZE, ScriptedFactory, make_app

    path = tmp_path / "config.toml"
    path.write_text('tree_pane = "no"\n' + TYPO + '[keys]\ncompact = "f9"\nnope = "f12"\n')
    app = make_app(tmp_path, None, agent_factory=ScriptedFactory())
    async with app.run_test(size=SIZE) as pilot:
        await pilot.pause()
        shown = notices(app)
        assert f'{path}: tree_pane must be true or false, not "no"' in shown
        assert f'{path}: unknown key "tehme"' in shown and f'{path}: unknown key "modle" in [openai]' in shown
        assert any("nope: no such binding" in n for n in shown)  # the keymap's own line, as before
        assert app.keymap["compact"] == "f9"  # what is right still applies


@pytest.mark.parametrize(("startup", "started"), [("eager", True), ("lazy", False)])
def test_eager_servers_start_from_the_typed_table(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, startup: str, started: bool
) -> None:
    path = tmp_path / "config.toml"
    path.write_text(
        '[openai]\nbase_url = "http://127.0.0.1:9/v1"\n'
        f'[mcp.servers.time]\ncommand = "true"\nstartup = "{startup}"\n[mcp.servers.other]\ncommand = "x"\n'
    )
    for name in ("OPENAI_API_KEY", "OPENAI_BASE_URL", "ANTHROPIC_API_KEY"):
        monkeypatch.delenv(name, raising=False)
    calls: list[str] = []

    class Recorder:
        def start_eager(self) -> None:
            calls.append("start_eager")

    def extensions(config: Any, choice: Any, cwd: str | None = None) -> Recorder:
        return Recorder()

    monkeypatch.setattr(agent_bridge, "make_extensions", extensions)
    agent_bridge.start_eager_servers(agent_bridge.ModelChoice(provider="openai", model="m", config_path=path))
    assert calls == (["start_eager"] if started else [])
