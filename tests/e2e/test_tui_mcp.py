"""In the app: /mcp lists the servers (state, reason, tools, inert), restarts and disables one;
the trust question for a folder's own .mcp.json."""

from __future__ import annotations

import json
import sys
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pytest
from textual.widgets import OptionList, Static

from agent_tui.agent import extensions
from agent_tui.agent.mcp.config import ServerSpec
from agent_tui.agent.mcp.manager import McpManager
from agent_tui.tui.agent_bridge import make_extensions
from agent_tui.tui.screens.choice import ChoiceScreen
from agent_tui.tui.screens.dialog import SETTLE
from agent_tui.tui.screens.mcp import McpScreen
from agent_tui.tui.screens.trust import ask_trust
from tests.support.fake_model_server import FakeModelServer
from tests.support.model_env import fake_anthropic_env
from tests.support.pilot import notices, wait_for
from tests.support.tui_fixtures import SIZE, ScriptedFactory, make_app

pytestmark = pytest.mark.slow

FIXTURES = Path(__file__).parents[1] / "fixtures" / "mcp"


async def test_mcp_shows_each_server_and_restarts_and_disables_one(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    broken = "[red]markup[/red] \x1b[2J"
    manager = McpManager(
        [
            ServerSpec(
                "edge", "config.toml", command=sys.executable, args=(str(FIXTURES / "edge_server.py"),)
            ),
            ServerSpec("broken", ".mcp.json", command=str(tmp_path / "no-such-program"), args=(broken,)),
        ]
    )
    monkeypatch.setitem(extensions._shared, "app", manager)
    app = make_app(tmp_path, None, agent_factory=ScriptedFactory(reply="hi"))
    async with app.run_test(size=SIZE) as pilot:
        manager.start()
        await wait_for(
            pilot, lambda: all(s.state != "starting" for s in manager.servers.values()), "started", 60
        )
        await pilot.press(*"/mcp", "enter")
        await wait_for(pilot, lambda: isinstance(app.screen, McpScreen), "the /mcp screen")
        options = app.screen.query_one(OptionList)
        lines = [str(options.get_option_at_index(i).prompt) for i in range(options.option_count)]
        assert lines == ["edge  ready  6 tools\n  config.toml", "broken  failed\n  .mcp.json"]
        details = str(app.screen.query_one("#mcp-details", Static).render())
        assert "tools: picture, fail, long, crash, token" in details
        await pilot.press("down")
        details = str(app.screen.query_one("#mcp-details", Static).render())
        assert "why: cannot start the command" in details and "[red]markup[/red] \\x1b[2J" in details
        assert "\x1b" not in details
        await pilot.press("up", "d")
        await wait_for(pilot, lambda: manager.servers["edge"].state == "disabled", "disabled")
        await wait_for(pilot, lambda: "edge  disabled" in str(options.get_option_at_index(0).prompt), "shown")
        await pilot.press("d")
        await wait_for(pilot, lambda: manager.servers["edge"].state == "ready", "enabled again", 60)
        await pilot.press("r")
        await wait_for(pilot, lambda: manager.servers["edge"].state == "starting", "restarting")
        await wait_for(pilot, lambda: manager.servers["edge"].state == "ready", "ready again", 60)
        await pilot.press("escape")
        await manager.close()


async def test_the_trust_question_answers_yes_no_or_not_now(tmp_path: Path) -> None:
    app = make_app(tmp_path, None, agent_factory=ScriptedFactory(reply="hi"))
    async with app.run_test(size=SIZE) as pilot:
        answers: list[bool | None] = []
        for keys in (["enter"], ["up", "enter"], ["escape"]):
            worker = app.run_worker(ask_trust(app, "/some/folder", [".mcp.json: MCP servers"]))
            await wait_for(pilot, lambda: isinstance(app.screen, ChoiceScreen), "the question")
            screen = app.screen
            assert isinstance(screen, ChoiceScreen)
            title = screen.title_text
            assert ".mcp.json: MCP servers" in title and "Trust this folder?\n  /some/folder" in title
            question: ChoiceScreen = screen
            await wait_for(pilot, lambda: question.answerable, "the question on screen long enough")  # noqa: B023
            for key in keys:
                await pilot.press(key)
                await pilot.pause(SETTLE + 0.1)  # "yes" starts programs: a highlight settled on it
            await worker.wait()
            answers.append(worker.result)
        assert answers == [False, True, None]


async def test_mcp_lists_the_configured_servers_before_the_first_turn(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, server: FakeModelServer
) -> None:
    monkeypatch.setattr(extensions, "_shared", {})  # the app's shared servers: this test's own
    config_path = tmp_path / "config.toml"
    config_path.write_text(
        f"[mcp.servers.edge]\ncommand = {json.dumps(sys.executable)}\n"
        f"args = [{json.dumps(str(FIXTURES / 'edge_server.py'))}]\n"
    )
    fake_anthropic_env(monkeypatch, server, config_path)
    app = make_app(tmp_path, None, agent_factory=ScriptedFactory(reply="hi"))
    async with app.run_test(size=SIZE) as pilot:
        await pilot.press(*"/mcp", "enter")
        await wait_for(pilot, lambda: isinstance(app.screen, McpScreen), "the /mcp screen")
        options = app.screen.query_one(OptionList)
        lines = [str(options.get_option_at_index(i).prompt) for i in range(options.option_count)]
        assert lines == [f"edge  not started\n  {config_path}"]
        details = str(app.screen.query_one("#mcp-details", Static).render())
        assert f"stdio: {sys.executable} {FIXTURES / 'edge_server.py'}" in details
        manager = extensions.shared_manager()
        assert manager is not None and manager.servers["edge"].state == "stopped"  # listed, not run
        assert not server.requests  # no turn was needed
        await pilot.press("escape")


async def test_a_slow_server_is_one_notice_in_the_app(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(extensions, "_shared", {})  # the app's shared servers: this test's own
    config_path = tmp_path / "config.toml"
    config_path.write_text(
        f"[mcp]\nwait = 1\n\n[mcp.servers.slow]\ncommand = {json.dumps(sys.executable)}\n"
        f'args = [{json.dumps(str(FIXTURES / "slow_server.py"))}, "15"]\n'
    )
    app = make_app(tmp_path, None, agent_factory=ScriptedFactory(reply="hi"))
    async with app.run_test(size=SIZE) as pilot:
        # the servers as the real agent factory builds them, with the app's notice; a turn's wait
        config: Any = SimpleNamespace(config_path=config_path)  # make_extensions reads only its file
        ext: Any = make_extensions(config, app.config.model, str(tmp_path))
        await ext.prepare()
        await ext.prepare()  # the next turn: said once per start, not at every turn
        line = 'MCP server "slow" is still starting after 1 s: this turn runs without its tools'
        await wait_for(pilot, lambda: any(n.startswith(line) for n in notices(app)), "the notice")
        assert len([n for n in notices(app) if "slow" in n]) == 1
        await ext.mcp.close()
