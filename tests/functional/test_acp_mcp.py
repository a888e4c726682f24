"""The editor's MCP servers over ACP: ``session/new`` and ``session/load`` carry ``mcpServers``;
``agent-tui acp`` connects them (the real ``mcp-server-time`` from PyPI over stdio, a streamable
HTTP server of our own), and the model calls their tools, gated as any MCP tool, through a real
``agent-client-protocol`` client connection over stdio."""

from __future__ import annotations

import json
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from acp import text_block
from acp.schema import (
    AcpMcpServer,
    EnvVariable,
    HttpHeader,
    HttpMcpServer,
    McpServerStdio,
    SseMcpServer,
)

from tests.support.acp_editor import AcpEnv, EditorClient
from tests.support.fake_model_server import FakeModelServer, anthropic_stream, text, tool_use
from tests.support.mcp_http import http_mcp_server

pytestmark = [pytest.mark.timeout(180), pytest.mark.slow]  # an agent and MCP servers as processes

PY = sys.executable


@pytest.fixture
def env(tmp_path: Path, server: FakeModelServer) -> AcpEnv:
    env = AcpEnv(tmp_path, server)
    config = tmp_path / "config.toml"
    # A turn waits up to 60 s for servers still starting: a loaded machine starts Python slowly.
    config.write_text(config.read_text() + "\n[mcp]\nwait = 60\n")
    return env


def time_server(name: str = "time") -> McpServerStdio:
    return McpServerStdio(name=name, command=PY, args=["-m", "mcp_server_time"], env=[])


def tool_results(env: AcpEnv) -> list[dict[str, Any]]:
    (path,) = env.sessions()
    return [
        e["message"]
        for e in env.entries(path)
        if e["type"] == "message" and e["message"]["role"] == "toolResult"
    ]


async def test_the_editors_stdio_server_is_connected_and_its_tool_asks_the_editor_first(
    env: AcpEnv, server: FakeModelServer
) -> None:
    server.push(
        anthropic_stream(tool_use("toolu_t1", "mcp__time__get_current_time", {"timezone": "UTC"})),
        anthropic_stream(text("It is late.")),
    )
    client = EditorClient(answers=["allow-once"])
    async with env.agent(client) as conn:
        assert env.init is not None and env.init.agent_capabilities is not None
        mcp = env.init.agent_capabilities.mcp_capabilities
        assert mcp is not None and mcp.http is True and mcp.sse is True
        session = await conn.new_session(cwd=str(env.work), mcp_servers=[time_server()])
        response = await conn.prompt(session_id=session.session_id, prompt=[text_block("time in UTC?")])
        assert response.stop_reason == "end_turn"

    # The model was offered the server's tools with their schemas.
    declared = {t["name"]: t for t in server.requests[0].body["tools"]}
    assert "mcp__time__get_current_time" in declared and "mcp__time__convert_time" in declared
    assert (
        declared["mcp__time__get_current_time"]["input_schema"]["properties"]["timezone"]["type"] == "string"
    )
    # Ask mode: the editor's dialog was asked about the MCP call, as for any MCP tool.
    ((asked, _),) = client.permission_requests
    assert asked.tool_call_id == "toolu_t1" and "mcp__time__get_current_time" in (asked.title or "")
    # The server answered: the result is in the session and went to the model.
    (result,) = tool_results(env)
    assert result["toolName"] == "mcp__time__get_current_time" and result["isError"] is False
    payload = json.loads(result["content"][0]["text"])
    assert payload["timezone"] == "UTC" and payload["datetime"].endswith("+00:00")
    sent = server.requests[1].body["messages"][-1]["content"][0]
    assert sent["tool_use_id"] == "toolu_t1" and sent["content"][0]["text"] == result["content"][0]["text"]
    # The editor saw the call complete with the server's output.
    assert client.tool_updates("toolu_t1")[-1].status == "completed"


async def test_a_denied_mcp_call_is_not_run(env: AcpEnv, server: FakeModelServer) -> None:
    server.push(
        anthropic_stream(tool_use("toolu_t2", "mcp__time__get_current_time", {"timezone": "UTC"})),
        anthropic_stream(text("Fine.")),
    )
    client = EditorClient(answers=["deny"])
    async with env.agent(client) as conn:
        session = await conn.new_session(cwd=str(env.work), mcp_servers=[time_server()])
        await conn.prompt(session_id=session.session_id, prompt=[text_block("time?")])
    ((asked, _),) = client.permission_requests  # the call was the server's (a known, gated tool)
    assert asked.tool_call_id == "toolu_t2"
    (result,) = tool_results(env)
    assert result["isError"] is True and "datetime" not in result["content"][0]["text"]


@pytest.fixture(params=["streamable-http", "sse"])
def http_server(request: pytest.FixtureRequest) -> Iterator[tuple[str, str, str]]:
    """Our MCP server over streamable HTTP or the legacy SSE transport, wanting a bearer token:
    (url, token, transport)."""
    token = "web-tok-9f8e7d6c5b4a3210"
    with http_mcp_server(token, request.param) as url:
        yield url, token, request.param


async def test_the_editors_http_server_gets_its_headers_which_never_reach_the_session(
    env: AcpEnv, server: FakeModelServer, http_server: tuple[str, str, str]
) -> None:
    url, token, transport = http_server
    server.push(anthropic_stream(tool_use("toolu_w", "mcp__web__whoami", {})), anthropic_stream(text("ok")))
    headers = [HttpHeader(name="Authorization", value=f"Bearer {token}")]
    web: HttpMcpServer | SseMcpServer = (
        SseMcpServer(type="sse", name="web", url=url, headers=headers)
        if transport == "sse"
        else HttpMcpServer(type="http", name="web", url=url, headers=headers)
    )
    client = EditorClient()
    async with env.agent(client, args=("--permissions", "auto")) as conn:
        session = await conn.new_session(cwd=str(env.work), mcp_servers=[web])
        await conn.prompt(session_id=session.session_id, prompt=[text_block("who am I?")])
    (result,) = tool_results(env)
    assert not result["isError"] and result["content"][0]["text"] == "authorized"
    (path,) = env.sessions()
    assert token not in path.read_text()
    assert token not in json.dumps([r.body for r in server.requests])
    assert token not in json.dumps([repr(u) for _, u in client.updates])


async def test_load_session_connects_its_servers_and_says_which_it_skipped(
    env: AcpEnv, server: FakeModelServer
) -> None:
    server.push(
        anthropic_stream(text("Hello.")),
        anthropic_stream(tool_use("toolu_t3", "mcp__my_clock__get_current_time", {"timezone": "UTC"})),
        anthropic_stream(text("Done.")),
    )
    client = EditorClient()
    other = AcpMcpServer(type="acp", name="over-acp", server_id="s1")
    secret_env = EnvVariable(name="CLOCK_TOKEN", value="clock-secret-0a1b2c3d4e5f")
    clock = McpServerStdio(name="my clock", command=PY, args=["-m", "mcp_server_time"], env=[secret_env])
    async with env.agent(client, args=("--permissions", "auto")) as conn:
        session = await conn.new_session(cwd=str(env.work), mcp_servers=[])
        await conn.prompt(session_id=session.session_id, prompt=[text_block("hi")])
        # No servers in this session: the first request offered no MCP tool.
        assert not [t for t in server.requests[0].body["tools"] if t["name"].startswith("mcp__")]
        await conn.load_session(cwd=str(env.work), session_id=session.session_id, mcp_servers=[clock, other])
        await conn.prompt(session_id=session.session_id, prompt=[text_block("time?")])
    (result,) = tool_results(env)
    assert result["toolName"] == "mcp__my_clock__get_current_time" and not result["isError"]
    assert "mcp__my_clock__convert_time" in {t["name"] for t in server.requests[1].body["tools"]}
    # The server over ACP itself (a transport we do not advertise) was skipped, in one line the
    # editor saw.
    assert "'over-acp' from the editor skipped" in client.thought_text()
    (path,) = env.sessions()
    assert "clock-secret-0a1b2c3d4e5f" not in path.read_text()


async def test_a_slow_server_is_one_line_the_editor_sees_and_the_turn_runs_without_it(
    env: AcpEnv, server: FakeModelServer
) -> None:
    config = env.tmp / "config.toml"
    config.write_text(config.read_text().replace("wait = 60", "wait = 1"))
    slow = Path(__file__).parents[1] / "fixtures" / "mcp" / "slow_server.py"
    server.push(anthropic_stream(text("Hello without it.")))
    client = EditorClient()
    async with env.agent(client) as conn:
        slow_server = McpServerStdio(name="slow", command=PY, args=[str(slow), "15"], env=[])
        session = await conn.new_session(cwd=str(env.work), mcp_servers=[slow_server])
        response = await conn.prompt(session_id=session.session_id, prompt=[text_block("hi")])
        assert response.stop_reason == "end_turn"
    line = 'agent-tui: MCP server "slow" is still starting after 1 s: this turn runs without its tools'
    assert client.thought_text().startswith(line) and client.thought_text().count("slow") == 1
    assert client.message_text() == "Hello without it."
    (said,) = [x for x in env.stderr_path.read_text().splitlines() if "slow" in x]
    assert said.startswith(line)
    assert not [t for t in server.requests[0].body["tools"] if t["name"].startswith("mcp__")]
