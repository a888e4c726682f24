"""MCP over the legacy SSE transport (Claude Code's ``"type": "sse"``), and HTTP servers (SSE and
streamable HTTP) that die while idle: our server of ``tests/fixtures/mcp/http_server.py`` as a real
process on 127.0.0.1, its tools called by the model through the fake model server."""

from __future__ import annotations

import json
import os
import signal
import socket
import urllib.request
from typing import Any

import pytest

from agent_tui.agent.extensions import Extensions
from agent_tui.agent.trust import TrustStore
from agent_tui.library.export import export_jsonl, export_markdown
from agent_tui.store.index import SessionIndex
from agent_tui.store.reader import read_file
from tests.support.agent_support import Harness, until
from tests.support.fake_model_server import FakeModelServer, anthropic_stream, text, tool_use
from tests.support.mcp_http import http_mcp_server
from tests.support.processes import children

pytestmark = [pytest.mark.slow, pytest.mark.timeout(180)]  # MCP servers as processes

TOKEN = "sse-tok-5e6f7a8b9c0d1e2f"


def extensions(
    anthropic_harness: Harness, servers: dict[str, Any], said: list[str] | None = None
) -> Extensions:
    """The harness's loop with ``servers`` as Claude Code's ``~/.claude.json`` names them; a turn
    waits up to 60 s for them (a loaded machine starts Python servers slowly)."""
    home = anthropic_harness.tmp / "home"
    home.mkdir(exist_ok=True)
    (home / ".claude.json").write_text(json.dumps({"mcpServers": servers}))
    ext = Extensions(
        str(anthropic_harness.workdir),
        {"mcp": {"wait": 60}},
        home=home,
        trust_store=TrustStore(anthropic_harness.tmp / "trust.json"),
        env={"WEB_TOKEN": TOKEN},
        notify=None if said is None else said.append,
    )
    anthropic_harness.loop.extensions = ext
    return ext


def web(url: str, transport: str) -> dict[str, Any]:
    kind = {"sse": "sse", "streamable-http": "http"}[transport]
    return {"type": kind, "url": url, "headers": {"Authorization": "Bearer ${WEB_TOKEN}"}}


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


async def test_an_sse_server_from_claude_codes_config_is_called_with_its_headers_kept_secret(
    anthropic_harness: Harness, server: FakeModelServer
) -> None:
    with http_mcp_server(TOKEN, "sse") as url:
        ext = extensions(anthropic_harness, {"web": web(url, "sse")})
        server.push(
            anthropic_stream(tool_use("toolu_w", "mcp__web__whoami", {})),
            anthropic_stream(tool_use("toolu_e", "mcp__web__echo_authorization", {})),
            anthropic_stream(text("ok")),
        )
        try:
            await anthropic_harness.run("who am I?")
            assert ext.mcp is not None
            (status,) = ext.mcp.status()
        finally:
            await ext.close()
    assert status.transport == "sse" and status.state == "ready" and status.target == url
    whoami, echoed = anthropic_harness.messages("toolResult")
    # The server got the header (it answers "authorized" only with the right bearer token).
    assert not whoami["isError"] and whoami["content"][0]["text"] == "authorized"
    # A server that sends the secret back: redacted before the session, the model, the exports.
    assert not echoed["isError"] and echoed["content"][0]["text"] == "[REDACTED mcp-secret]"
    assert TOKEN not in anthropic_harness.session.path.read_text()
    assert TOKEN not in json.dumps([r.body for r in server.requests])
    index = SessionIndex(read_file(anthropic_harness.session.path), str(anthropic_harness.session.path))
    assert TOKEN not in export_markdown(index) and TOKEN.encode() not in export_jsonl(index)


@pytest.mark.parametrize("transport", ["sse", "streamable-http"])
async def test_an_http_server_that_dies_while_idle_is_said_when_it_happens_and_the_next_call_reconnects(
    anthropic_harness: Harness, server: FakeModelServer, transport: str
) -> None:
    said: list[str] = []
    port = free_port()
    with http_mcp_server(TOKEN, transport, port=port) as url:
        ext = extensions(anthropic_harness, {"web": web(url, transport)}, said)
        server.push(
            anthropic_stream(tool_use("toolu_1", "mcp__web__whoami", {})), anthropic_stream(text("a"))
        )
        try:
            await anthropic_harness.run("who am I?")
            assert anthropic_harness.messages("toolResult")[0]["content"][0]["text"] == "authorized"
            (pid,) = children("http_server.py")
            os.kill(pid, signal.SIGKILL)
            # No call, no turn: the line comes when the server goes.
            await until(lambda: said, "the line about the dead server")
            assert said == [
                'MCP server "web" failed: the server went away while idle (its next call starts it again)'
            ]
            assert ext.mcp is not None and ext.mcp.servers["web"].state == "failed"
        except BaseException:
            await ext.close()
            raise
    try:
        with http_mcp_server(TOKEN, transport, port=port):  # back at the same address
            server.push(
                anthropic_stream(tool_use("toolu_2", "mcp__web__whoami", {})), anthropic_stream(text("b"))
            )
            await anthropic_harness.run("and now?")
            again = anthropic_harness.messages("toolResult")[-1]
            assert not again["isError"] and again["content"][0]["text"] == "authorized"
            assert "mcp__web__whoami" in {t["name"] for t in server.requests[2].body["tools"]}
            assert ext.mcp.servers["web"].state == "ready" and ext.mcp.servers["web"].restarts == 1
            assert len(said) == 1
    finally:
        await ext.close()


async def test_a_streamable_http_session_the_server_ended_is_said_and_the_next_call_starts_another(
    anthropic_harness: Harness, server: FakeModelServer
) -> None:
    """The server ends our session while we are idle (as a server started again at the same address
    knows none of the old ones): every request naming it gets 404. That is one line when it happens,
    and the next call starts a new session, where before every later call failed."""
    said: list[str] = []
    with http_mcp_server(TOKEN) as url:
        ext = extensions(anthropic_harness, {"web": web(url, "streamable-http")}, said)
        server.push(
            anthropic_stream(tool_use("toolu_1", "mcp__web__session_id", {})), anthropic_stream(text("a"))
        )
        try:
            await anthropic_harness.run("which session?")
            first = anthropic_harness.messages("toolResult")[0]["content"][0]["text"]
            assert first.strip() and "(" not in first
            ended = urllib.request.Request(url, method="DELETE", headers={"mcp-session-id": first})
            with urllib.request.urlopen(ended, timeout=30) as response:
                assert response.status in (200, 204)
            await until(lambda: said, "the line about the ended session")
            assert said == [
                'MCP server "web" failed: the server went away while idle (its next call starts it again)'
            ]
            server.push(
                anthropic_stream(tool_use("toolu_2", "mcp__web__session_id", {})), anthropic_stream(text("b"))
            )
            await anthropic_harness.run("and now?")
            again = anthropic_harness.messages("toolResult")[-1]
            assert not again["isError"] and again["content"][0]["text"] not in ("", first)
            assert ext.mcp is not None and ext.mcp.servers["web"].state == "ready"
        finally:
            await ext.close()
