"""In the app: an MCP server (the real mcp-server-time) that dies while nothing runs is one notice
line when it happens, never markup."""

from __future__ import annotations

import json
import os
import signal
import sys
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pytest

from agent_tui.agent import extensions
from agent_tui.tui.agent_bridge import make_extensions
from tests.support.pilot import notices, wait_for
from tests.support.processes import children
from tests.support.tui_fixtures import SIZE, ScriptedFactory, make_app

pytestmark = [pytest.mark.slow, pytest.mark.timeout(120)]


async def test_a_server_that_dies_between_turns_is_one_notice_when_it_happens(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(extensions, "_shared", {})  # the app's shared servers: this test's own
    launcher = tmp_path / "time_server.py"
    launcher.write_text(
        "import runpy, sys\nprint('[red]boom[/red]', file=sys.stderr, flush=True)\n"
        "runpy.run_module('mcp_server_time', run_name='__main__')\n"
    )
    config_path = tmp_path / "config.toml"
    config_path.write_text(
        f"[mcp.servers.time]\ncommand = {json.dumps(sys.executable)}\nargs = [{json.dumps(str(launcher))}]\n"
        "startup_timeout = 60\n"
    )
    app = make_app(tmp_path, None, agent_factory=ScriptedFactory(reply="hi"))
    async with app.run_test(size=SIZE) as pilot:
        # the servers as the real agent factory builds them, with the app's notice
        config: Any = SimpleNamespace(config_path=config_path)  # make_extensions reads only its file
        ext: Any = make_extensions(config, app.config.model, str(tmp_path))
        await ext.prepare()
        await wait_for(pilot, lambda: ext.mcp.servers["time"].state != "starting", "the server", 60)
        assert ext.mcp.servers["time"].state == "ready", ext.mcp.status()
        (pid,) = children("time_server.py")
        os.kill(pid, signal.SIGKILL)
        line = 'MCP server "time" failed: the server exited while idle; stderr: [red]boom[/red]'
        await wait_for(pilot, lambda: any(n.startswith(line) for n in notices(app)), "the notice", 30)
        shown = [n for n in app._notifications if str(n.message).startswith(line)]
        assert len(shown) == 1 and shown[0].markup is False and "\n" not in str(shown[0].message)
        await ext.close()
        await ext.mcp.close()
