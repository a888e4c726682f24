"""A slow MCP server (it answers ``initialize`` 15 s after it starts, the turn waits 1 s) is one
line in print, JSON and RPC mode, on stderr as their other notices, and the turn runs without it.
(ACP's line: tests/functional/test_acp_mcp.py; the app's /mcp before the first turn:
tests/e2e/test_tui_mcp.py.)"""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest

from tests.support.fake_model_server import FakeModelServer, anthropic_stream, text
from tests.support.print_env import Env
from tests.support.rpc_client import RpcClient

pytestmark = [pytest.mark.timeout(120), pytest.mark.slow]  # agent-tui and an MCP server as processes

SLOW = Path(__file__).parents[1] / "fixtures" / "mcp" / "slow_server.py"
LINE = 'agent-tui: MCP server "slow" is still starting after 1 s: this turn runs without its tools'


def slow_config() -> str:
    return (
        "[retry]\nbase_delay = 0.01\n\n[mcp]\nwait = 1\n\n[mcp.servers.slow]\n"
        f'command = {json.dumps(sys.executable)}\nargs = [{json.dumps(str(SLOW))}, "15"]\n'
    )


@pytest.fixture
def env(tmp_path: Path, server: FakeModelServer) -> Env:
    env = Env(tmp_path, server)
    (tmp_path / "config.toml").write_text(slow_config())
    return env


def said(stderr: str) -> list[str]:
    return [line for line in stderr.splitlines() if "slow" in line]


def without_mcp_tools(server: FakeModelServer) -> bool:
    return not [t for t in server.requests[0].body.get("tools", []) if t["name"].startswith("mcp__")]


@pytest.mark.parametrize("mode", [(), ("--mode", "json")], ids=["print", "json"])
def test_print_and_json_mode_say_it_in_one_stderr_line(
    env: Env, server: FakeModelServer, mode: tuple[str, ...]
) -> None:
    server.push(anthropic_stream(text("Hello without it.")))
    result = env.run("-p", "hi", *mode)
    assert result.returncode == 0, result.stderr
    (line,) = said(result.stderr)
    assert line.startswith(LINE)
    assert "slow" not in result.stdout  # stdout is the reply (or JSON mode's protocol): untouched
    assert "Hello without it." in result.stdout and without_mcp_tools(server)


def test_rpc_mode_says_it_in_one_stderr_line(env: Env, server: FakeModelServer) -> None:
    server.push(anthropic_stream(text("Hello without it.")))
    rpc = RpcClient(["--session", str(env.tmp / "rpc.jsonl")], env.work, env.env)
    try:
        rpc.call({"type": "prompt", "message": "hi"})
        rpc.wait_for(lambda r: r["type"] == "agent_settled", 60)
        code, err = rpc.finish()
    finally:
        rpc.kill()
    assert code == 0, err
    (line,) = said(err)
    assert line.startswith(LINE)
    assert not [r for r in rpc.records if "slow" in json.dumps(r)]  # stdout stays pi's records
    assert without_mcp_tools(server)
