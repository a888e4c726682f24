"""``/reload`` in the app reads the user's files again, as pi's does: a template, an
APPEND_SYSTEM.md and an MCP server (the real mcp-server-time) added after the start are there at
the next turn, with no restart. The agent is the real loop, against the fake model server."""

from __future__ import annotations

import argparse
import json
import sys
from dataclasses import replace
from pathlib import Path

import pytest
from textual.pilot import Pilot

from agent_tui.agent import extensions
from agent_tui.agent.build import make_provider
from agent_tui.agent.loop import AgentLoop
from agent_tui.store.session import Session
from agent_tui.tui.agent_bridge import ModelChoice, make_extensions
from agent_tui.tui.launch import start_loading
from tests.support.agent_support import make_config
from tests.support.fake_model_server import FakeModelServer, anthropic_stream, text
from tests.support.files import write
from tests.support.pilot import notices, wait_for
from tests.support.tui_fixtures import SIZE, make_app

pytestmark = [pytest.mark.timeout(120), pytest.mark.slow]  # an MCP server starts


async def send(pilot: Pilot[None], value: str) -> None:
    await pilot.press(*[{" ": "space", "/": "slash", ":": "colon"}.get(c, c) for c in value], "enter")


async def test_reload_picks_up_new_templates_prompt_files_and_mcp_servers(
    server: FakeModelServer, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(extensions, "_shared", {})  # the app's shared servers: this test's own
    work = tmp_path / "project"
    work.mkdir()
    config_path = write(tmp_path / "config" / "config.toml", "[mcp]\nwait = 60\n")
    config = replace(make_config(server), config_path=config_path)
    args = argparse.Namespace(trust_project=True)  # the folder's own templates and prompt files load

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
        # --trust-project: the server added below loads at /reload unasked (without it the app asks
        # first: test_safety_trust)
        model=ModelChoice(resources=loading, trust_project=True),
        reload=lambda: start_loading(args, work, config_path),
    )
    server.push(anthropic_stream(text("hi")), anthropic_stream(text("shipped")))
    async with app.run_test(size=SIZE) as pilot:
        await send(pilot, "hello")
        await wait_for(pilot, lambda: len(server.requests) == 1 and not app.busy, "the first turn", 30)
        first = server.requests[0].body
        assert "be brief" not in json.dumps(first["system"])
        assert not any(t["name"].startswith("mcp__") for t in first.get("tools", []))

        write(work / ".agent-tui/prompts/ship.md", "---\ndescription: Ship it\n---\nShip $1 now.")
        write(work / ".agent-tui/APPEND_SYSTEM.md", "House rule: be brief.")
        with config_path.open("a") as f:
            f.write(
                f'[mcp.servers.time]\ncommand = {json.dumps(sys.executable)}\nargs = ["-m", "mcp_server_time"]\n'
            )
        await send(pilot, "/reload")
        await wait_for(pilot, lambda: any(n.startswith("Reloaded:") for n in notices(app)), "the reload", 30)
        (said,) = [n for n in notices(app) if n.startswith("Reloaded:")]
        assert said == "Reloaded: +APPEND_SYSTEM.md · 1 template; 1 MCP server, 0 hooks"

        await send(pilot, "/ship v2")
        await wait_for(pilot, lambda: len(server.requests) == 2 and not app.busy, "the second turn", 90)
    second = server.requests[1].body
    assert "House rule: be brief." in json.dumps(second["system"])
    assert "mcp__time__get_current_time" in {t["name"] for t in second["tools"]}
    assert second["messages"][-1]["content"][0]["text"] == "Ship v2 now."
    manager = extensions._shared.get("app")
    if manager is not None:
        await manager.close()
