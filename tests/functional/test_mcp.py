"""MCP servers: real servers from PyPI (mcp-server-time, mcp-server-git) and small ones of our own,
started as subprocesses, their tools called by the model through the fake model server."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from agent_tui.agent.events import AgentEvent, Notice, ToolFinished, TurnDone
from agent_tui.agent.extensions import Extensions
from agent_tui.agent.mcp.config import ServerSpec, read_servers
from agent_tui.agent.mcp.manager import McpManager
from agent_tui.agent.permissions import Decision, PermissionMode, PermissionRequest, Permissions
from agent_tui.agent.tools.base import ToolContext
from agent_tui.agent.trust import TrustStore
from tests.support.agent_support import Harness
from tests.support.fake_model_server import FakeModelServer, anthropic_stream, text, tool_use
from tests.support.mcp_http import http_mcp_server

pytestmark = pytest.mark.slow  # each test starts MCP servers as processes

FIXTURES = Path(__file__).parents[1] / "fixtures" / "mcp"
PY = sys.executable


def edge(**fields: Any) -> dict[str, Any]:
    return {"command": PY, "args": [str(FIXTURES / "edge_server.py")], **fields}


def extensions(anthropic_harness: Harness, data: dict[str, Any], **kw: Any) -> Extensions:
    """The harness's loop with these MCP servers; a turn waits up to 60 s for them (a loaded
    machine starts Python servers slowly: the test needs them ready, not fast)."""
    data = {**data, "mcp": {"wait": 60, **data.get("mcp", {})}}
    ext = Extensions(
        str(anthropic_harness.workdir),
        data,
        home=anthropic_harness.tmp / "home",
        trust_store=TrustStore(anthropic_harness.tmp / "trust.json"),
        **kw,
    )
    anthropic_harness.loop.extensions = ext
    return ext


def of(events: list[AgentEvent], kind: type) -> list[Any]:
    return [e for e in events if isinstance(e, kind)]


async def test_the_model_calls_the_time_server_and_the_result_is_in_the_session_and_next_request(
    anthropic_harness: Harness, server: FakeModelServer
) -> None:
    ext = extensions(
        anthropic_harness, {"mcp": {"servers": {"time": {"command": PY, "args": ["-m", "mcp_server_time"]}}}}
    )
    server.push(
        anthropic_stream(tool_use("toolu_t1", "mcp__time__get_current_time", {"timezone": "UTC"})),
        anthropic_stream(text("It is late.")),
    )
    try:
        events = await anthropic_harness.run("what time is it in UTC?")
    finally:
        await ext.close()
    assert events[-1] == TurnDone("stop")
    first = server.requests[0].body
    declared = {t["name"]: t for t in first["tools"]}
    assert "mcp__time__get_current_time" in declared and "mcp__time__convert_time" in declared
    assert (
        declared["mcp__time__get_current_time"]["input_schema"]["properties"]["timezone"]["type"] == "string"
    )
    result = anthropic_harness.messages("toolResult")[0]
    assert result["toolName"] == "mcp__time__get_current_time" and result["isError"] is False
    payload = json.loads(result["content"][0]["text"])
    assert payload["timezone"] == "UTC" and payload["datetime"].endswith("+00:00")
    sent = server.requests[1].body["messages"][-1]["content"][0]
    assert sent["tool_use_id"] == "toolu_t1" and sent["content"][0]["text"] == result["content"][0]["text"]
    anthropic_harness.assert_requests_match_context()


async def test_git_server_reads_a_real_repository(tmp_path: Path) -> None:
    repo = tmp_path / "repo"
    repo.mkdir()
    subprocess.run(["git", "init", "-q", str(repo)], check=True)
    (repo / "new.txt").write_text("hello\n")
    manager = McpManager([ServerSpec("git", "test", command=PY, args=("-m", "mcp_server_git"))])
    manager.start()
    await manager.wait_started(60)
    try:
        tools = {t.name: t for t in manager.tools()}
        assert "mcp__git__git_status" in tools, manager.status()
        result = await tools["mcp__git__git_status"].execute(
            {"repo_path": str(repo)}, ToolContext(str(tmp_path))
        )
    finally:
        await manager.close()
    assert not result.is_error and "new.txt" in result.content[0]["text"]


async def test_a_server_that_crashes_mid_call_is_one_tool_error_and_one_line_and_the_turn_goes_on(
    anthropic_harness: Harness, server: FakeModelServer
) -> None:
    ext = extensions(anthropic_harness, {"mcp": {"servers": {"edge": edge()}}})
    server.push(
        anthropic_stream(tool_use("toolu_c", "mcp__edge__crash", {})),
        anthropic_stream(text("The tool crashed; carrying on.")),
    )
    try:
        events = await anthropic_harness.run("crash it")
        assert ext.mcp is not None and ext.mcp.servers["edge"].state == "failed"
    finally:
        await ext.close()
    assert events[-1] == TurnDone("stop")
    assert [f.is_error for f in of(events, ToolFinished)] == [True]
    error = anthropic_harness.messages("toolResult")[0]["content"][0]["text"]
    assert error.startswith('MCP server "edge" stopped during the call')
    notices = [n.text for n in of(events, Notice)]
    assert len(notices) == 1 and notices[0].startswith('MCP server "edge" failed') and "\n" not in notices[0]
    assert (
        anthropic_harness.messages("assistant")[-1]["content"][0]["text"] == "The tool crashed; carrying on."
    )


async def test_a_server_that_never_answers_initialize_times_out_in_one_line(
    anthropic_harness: Harness, server: FakeModelServer
) -> None:
    silent = {"command": PY, "args": [str(FIXTURES / "silent_server.py")], "startup_timeout": 1}
    ext = extensions(anthropic_harness, {"mcp": {"servers": {"silent": silent}}})
    server.push(anthropic_stream(text("No tools needed.")))
    try:
        events = await anthropic_harness.run("hello")
    finally:
        await ext.close()
    assert events[-1] == TurnDone("stop")
    notices = [n.text for n in of(events, Notice)]
    assert notices == [
        'MCP server "silent" failed: did not answer initialize within 1 s; '
        "stderr: silent server: started, not answering"
    ]
    assert not [t for t in server.requests[0].body["tools"] if t["name"].startswith("mcp__")]


async def test_images_errors_and_long_output_go_through_the_tools_rules(tmp_path: Path) -> None:
    manager = McpManager([ServerSpec("edge", "test", command=PY, args=(str(FIXTURES / "edge_server.py"),))])
    manager.start()
    await manager.wait_started(60)
    ctx = ToolContext(str(tmp_path))
    try:
        tools = {t.name: t for t in manager.tools()}
        picture = await tools["mcp__edge__picture"].execute({}, ctx)
        failed = await tools["mcp__edge__fail"].execute({"why": "testing"}, ctx)
        long = await tools["mcp__edge__long"].execute({"lines": 3000}, ctx)
    finally:
        await manager.close()
    assert picture.content[0]["type"] == "image" and picture.content[0]["mimeType"] == "image/png"
    assert failed.is_error and "failed on purpose: testing" in failed.content[0]["text"]
    body = long.content[0]["text"]
    assert body.startswith("line 1\n") and "line 2000\n" in body and "line 2001" not in body
    assert body.endswith("[Output truncated: 2000 of 3000 lines (18.4KB of 28.2KB) shown.]")


async def test_ask_mode_asks_for_every_mcp_tool_unless_read_only_hints_are_trusted(
    anthropic_harness: Harness, server: FakeModelServer
) -> None:
    asked: list[PermissionRequest] = []

    async def approver(request: PermissionRequest) -> Decision:
        asked.append(request)
        return Decision.ALLOW_ONCE

    anthropic_harness.loop.permissions = Permissions(PermissionMode.ASK, approver)
    ext = extensions(anthropic_harness, {"mcp": {"servers": {"edge": edge()}}})
    server.push(
        anthropic_stream(tool_use("toolu_p", "mcp__edge__picture", {})),
        anthropic_stream(text("ok")),
    )
    try:
        await anthropic_harness.run("a picture")
    finally:
        await ext.close()
    assert [r.tool for r in asked] == ["mcp__edge__picture"] and asked[
        0
    ].reason == "calls an MCP server's tool"
    records = [
        e["data"] for e in anthropic_harness.entries() if e.get("customType") == "agent-tui.permission"
    ]
    assert [(r["tool"], r["decision"]) for r in records] == [("mcp__edge__picture", "allow-once")]

    asked.clear()
    ext = extensions(anthropic_harness, {"mcp": {"servers": {"edge": edge()}, "trust_read_only_hints": True}})
    server.push(
        anthropic_stream(tool_use("toolu_p2", "mcp__edge__picture", {})),
        anthropic_stream(tool_use("toolu_l", "mcp__edge__long", {"lines": 2})),
        anthropic_stream(text("ok")),
    )
    try:
        await anthropic_harness.run("again")
    finally:
        await ext.close()
    assert [r.tool for r in asked] == ["mcp__edge__long"]  # the picture tool is marked readOnlyHint


async def test_secrets_in_env_never_reach_the_session(
    anthropic_harness: Harness, server: FakeModelServer
) -> None:
    secret = "mcp-tok-9f8e7d6c5b4a3210"
    ext = extensions(
        anthropic_harness,
        {"mcp": {"servers": {"edge": edge(env={"MCP_TEST_TOKEN": "${EDGE_TOKEN}"})}}},
        env={"EDGE_TOKEN": secret},
    )
    server.push(anthropic_stream(tool_use("toolu_s", "mcp__edge__token", {})), anthropic_stream(text("ok")))
    try:
        await anthropic_harness.run("echo the token")
    finally:
        await ext.close()
    assert "token is " in anthropic_harness.messages("toolResult")[0]["content"][0]["text"]
    assert secret not in anthropic_harness.session.path.read_text()
    assert secret not in json.dumps([r.body for r in server.requests])


async def test_a_server_gets_no_model_key_but_what_its_env_passes(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The SDK starts a stdio server with a few safe variables and its ``env`` table: a model key
    set in agent-tui's environment reaches it only when the config names it."""
    monkeypatch.setenv("GEMINI_API_KEY", "plainvalue1")
    monkeypatch.setenv("OPENROUTER_API_KEY", "plainvalue2")
    spec = ServerSpec(
        "edge",
        "test",
        command=PY,
        args=(str(FIXTURES / "edge_server.py"),),
        env={"PASSED_KEY": "plainvalue1"},
    )
    manager = McpManager([spec])
    manager.start()
    await manager.wait_started(60)
    try:
        tools = {t.name: t for t in manager.tools()}
        result = await tools["mcp__edge__environment"].execute({}, ToolContext(str(tmp_path)))
    finally:
        await manager.close()
    names = result.content[0]["text"].split("\n")
    assert "PASSED_KEY" in names and "PATH" in names
    assert "GEMINI_API_KEY" not in names and "OPENROUTER_API_KEY" not in names


def test_servers_are_read_from_the_config_and_claude_code_and_pi_files(tmp_path: Path) -> None:
    home, project = tmp_path / "home", tmp_path / "project"
    (home / ".pi" / "agent").mkdir(parents=True)
    project.mkdir()
    (home / ".claude.json").write_text(
        json.dumps(
            {
                "mcpServers": {"claude-user": {"command": "a"}, "shared": {"command": "from-claude"}},
                "projects": {str(project.resolve()): {"mcpServers": {"claude-local": {"command": "b"}}}},
            }
        )
    )
    (home / ".pi" / "agent" / "mcp.json").write_text(
        json.dumps({"mcpServers": {"pi-user": {"url": "http://x/mcp"}}})
    )
    (project / ".mcp.json").write_text(json.dumps({"mcpServers": {"project": {"command": "c"}}}))
    data = {"mcp": {"servers": {"shared": {"command": "from-config", "args": ["${NOPE:-fallback}"]}}}}
    untrusted = read_servers(data, project, home=home, env={})
    assert [s.name for s in untrusted.servers] == ["shared", "claude-local", "claude-user", "pi-user"]
    assert untrusted.servers[0].command == "from-config" and untrusted.servers[0].args == ("fallback",)
    assert untrusted.servers[3].transport == "http"
    trusted = read_servers(data, project, home=home, trusted=True, env={})
    assert [s.name for s in trusted.servers][:2] == ["shared", "project"] and trusted.servers[1].project
    bad_data = {"mcp": {"servers": {"x": {"command": "${UNSET_VAR}"}, "y y": {"command": "z"}}}}
    bad = read_servers(bad_data, project, home=tmp_path / "nobody", env={})
    assert bad.servers == [] and len(bad.warnings) == 2
    assert "UNSET_VAR is not set" in bad.warnings[0]


async def test_a_projects_mcp_json_needs_trust_asked_once_and_remembered(
    anthropic_harness: Harness, server: FakeModelServer
) -> None:
    (anthropic_harness.workdir / ".mcp.json").write_text(json.dumps({"mcpServers": {"edge": edge()}}))
    questions: list[tuple[str, list[str]]] = []

    async def asker(folder: str, what: list[str]) -> bool:
        questions.append((folder, what))
        return False

    ext = extensions(anthropic_harness, {}, asker=asker)
    server.push(anthropic_stream(text("hi")))
    await anthropic_harness.run("hello")
    await ext.close()
    assert questions == [(str(anthropic_harness.workdir), [".mcp.json: MCP servers"])]
    assert not [t for t in server.requests[0].body["tools"] if t["name"].startswith("mcp__")]
    assert TrustStore(anthropic_harness.tmp / "trust.json").decision(anthropic_harness.workdir) is False

    ext = extensions(
        anthropic_harness, {}, asker=asker
    )  # a new start: the answer is remembered, not asked again
    server.push(anthropic_stream(text("hi")))
    events = await anthropic_harness.run("hello again")
    await ext.close()
    assert len(questions) == 1
    assert any("not trusted" in n.text and "--trust-project" in n.text for n in of(events, Notice))

    ext = extensions(anthropic_harness, {}, trust_project=True)  # --trust-project
    server.push(anthropic_stream(text("hi")))
    await anthropic_harness.run("trusted now")
    await ext.close()
    assert any(t["name"] == "mcp__edge__picture" for t in server.requests[-1].body["tools"])


def test_print_mode_loads_a_projects_mcp_json_only_with_trust_project(
    tmp_path: Path, server: FakeModelServer
) -> None:
    from tests.support.print_env import Env

    env = Env(tmp_path, server)
    config = tmp_path / "config.toml"
    config.write_text(config.read_text() + "\n[mcp]\nwait = 60\n")  # a loaded machine starts servers slowly
    home = {**env.env, "HOME": str(tmp_path / "home")}
    (env.work / ".mcp.json").write_text(json.dumps({"mcpServers": {"edge": edge()}}))
    server.push(anthropic_stream(text("no tools")))
    untrusted = env.run("-p", "hello", env=home)
    assert untrusted.returncode == 0, untrusted.stderr
    lines = [line for line in untrusted.stderr.splitlines() if "not loaded" in line]
    assert lines == [
        "agent-tui: not loaded: .mcp.json: MCP servers (they start programs); "
        "start with --trust-project to trust this folder"
    ]
    assert not [t for t in server.requests[0].body["tools"] if t["name"].startswith("mcp__")]

    server.push(
        anthropic_stream(tool_use("toolu_l", "mcp__edge__long", {"lines": 2})), anthropic_stream(text("ok"))
    )
    trusted = env.run("--trust-project", "-p", "list two lines", env=home)
    assert trusted.returncode == 0, trusted.stderr
    assert "> mcp__edge__long" in trusted.stderr
    sent = server.requests[-1].body["messages"][-1]["content"][0]["content"][0]["text"]
    assert sent == "line 1\nline 2"


async def test_a_streamable_http_server_gets_the_headers_which_never_reach_the_session(
    anthropic_harness: Harness, server: FakeModelServer
) -> None:
    token = "web-tok-0a1b2c3d4e5f6789"
    with http_mcp_server(token) as url:
        web = {"url": url, "headers": {"Authorization": "Bearer ${WEB_TOKEN}"}}
        ext = extensions(anthropic_harness, {"mcp": {"servers": {"web": web}}}, env={"WEB_TOKEN": token})
        server.push(
            anthropic_stream(tool_use("toolu_w", "mcp__web__whoami", {})), anthropic_stream(text("ok"))
        )
        try:
            await anthropic_harness.run("who am I?")
        finally:
            await ext.close()
    result = anthropic_harness.messages("toolResult")[0]
    assert not result["isError"] and result["content"][0]["text"] == "authorized"
    assert token not in anthropic_harness.session.path.read_text()
    assert token not in json.dumps([r.body for r in server.requests])
