"""The question about a host a sandboxed command wants, in each face that can ask: the RPC client
(pi's ``extension_ui_request``), the ACP editor (``session/request_permission``) and an SDK
agent's approver; each the whole program (bwrap, the proxy, the forwarder, curl) against the fake
model server. A ``WebFetch(domain:HOST)`` allow rule of the user's config opens that host without
a question. (The core's question: test_sandbox_network_ask.py; the app's:
tests/e2e/test_tui_sandbox_network_question.py.)"""

from __future__ import annotations

import json
import os
import pty
import select
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from acp import text_block

from agent_tui.agent import sandbox as sandbox_module
from agent_tui.agent.permissions import Decision, PermissionRequest
from tests.support.acp_editor import AcpEnv, EditorClient
from tests.support.fake_model_server import FakeModelServer, anthropic_stream, text, tool_use
from tests.support.rpc_client import RpcClient
from tests.support.web_pages import page_server

pytestmark = [pytest.mark.slow, pytest.mark.timeout(180)]
HOST = "127.0.0.2"  # no rule allows it (a page server listens there)
PAGE = "page "


@pytest.fixture
def web() -> Iterator[int]:
    problem = sandbox_module.probe(sandbox_module.bwrap_program())
    assert problem is None, f"{problem} (make setup installs bubblewrap)"
    with page_server(HOST, PAGE) as port:
        yield port


def _env(env: dict[str, str], tmp: Path) -> dict[str, str]:
    clean = {k: v for k, v in env.items() if k.lower() not in ("http_proxy", "https_proxy", "all_proxy")}
    (tmp / "tmp").mkdir(exist_ok=True)
    return {**clean, "TMPDIR": str(tmp / "tmp"), "AGENT_TUI_SANDBOX": "workspace-write"}


def _push(server: FakeModelServer, command: str) -> None:
    server.push(
        anthropic_stream(tool_use("toolu_net", "bash", {"command": command})), anthropic_stream(text("done"))
    )


def _result(entries: list[dict[str, Any]]) -> str:
    (result,) = [e["message"] for e in entries if e.get("message", {}).get("role") == "toolResult"]
    return str(result["content"][0]["text"])


def test_rpc_asks_the_client_about_the_host_and_an_allow_rule_needs_no_question(
    server: FakeModelServer, tmp_path: Path, web: int
) -> None:
    env = AcpEnv(tmp_path, server)  # print mode's project, home and config
    command = f"curl -sS http://{HOST}:{web}/rpc"
    _push(server, command)
    client = RpcClient(["--permissions", "ask"], env.work, _env(env.env, tmp_path))
    try:
        assert client.call({"type": "prompt", "message": "go"}, 60)["success"]
        asked = client.wait_for(lambda r: r["type"] == "extension_ui_request", 60)
        assert asked["toolCallId"] == "toolu_net"  # the call itself first
        client.send({"type": "extension_ui_response", "id": asked["id"], "value": "Allow once"})
        host = client.wait_for(lambda r: r["type"] == "extension_ui_request" and r["id"] != asked["id"], 60)
        assert f"{HOST}:{web}" in host["title"] and "from the sandbox" in host["title"]
        assert host["message"] == command and host["toolName"] == "bash"
        client.send({"type": "extension_ui_response", "id": host["id"], "value": "Allow once"})
        client.wait_for(lambda r: r["type"] == "agent_settled", 60)
    finally:
        client.kill()
    (path,) = env.sessions()
    assert f"{PAGE}/rpc" in _result(env.entries(path))

    # The user's WebFetch(domain:HOST) rule opens the host: only the call is asked about.
    config = Path(env.env["AGENT_TUI_CONFIG"])
    config.write_text(config.read_text() + f'[permissions]\nallow = ["WebFetch(domain:{HOST})"]\n')
    _push(server, f"curl -sS http://{HOST}:{web}/ruled")
    client = RpcClient(["--permissions", "ask", "--no-session"], env.work, _env(env.env, tmp_path))
    try:
        assert client.call({"type": "prompt", "message": "go"}, 60)["success"]
        asked = client.wait_for(lambda r: r["type"] == "extension_ui_request", 60)
        client.send({"type": "extension_ui_response", "id": asked["id"], "value": "Allow once"})
        client.wait_for(lambda r: r["type"] == "agent_settled", 60)
        questions = [r for r in client.records if r["type"] == "extension_ui_request"]
        assert len(questions) == 1
        said = [r for r in client.records if r["type"] == "tool_execution_end"]
        assert f"{PAGE}/ruled" in str(said[-1])
    finally:
        client.kill()


async def test_acp_asks_the_editor_about_the_host(server: FakeModelServer, tmp_path: Path, web: int) -> None:
    env = AcpEnv(tmp_path, server)
    env.env = _env(env.env, tmp_path)
    command = f"curl -sS http://{HOST}:{web}/acp"
    _push(server, command)
    editor = EditorClient(answers=["allow-once", "allow-once"])
    async with env.agent(editor, args=("--permissions", "ask")) as conn:
        session = await conn.new_session(cwd=str(env.work), mcp_servers=[])
        response = await conn.prompt(session_id=session.session_id, prompt=[text_block("go")])
        assert response.stop_reason == "end_turn"
    (call, _), (network, options) = editor.permission_requests
    assert call.tool_call_id == "toolu_net"
    assert f"{HOST}:{web}" in (network.title or "") and "from the sandbox" in str(network.content)
    assert [o.option_id for o in options] == ["allow-once", "allow-always", "allow-session", "deny"]
    assert options[1].name == f"Always allow WebFetch(domain:{HOST})"
    (path,) = env.sessions()
    assert f"{PAGE}/acp" in _result(env.entries(path))


async def test_an_sdk_agents_approver_is_asked_about_the_host(
    server: FakeModelServer, tmp_path: Path, web: int, monkeypatch: pytest.MonkeyPatch
) -> None:
    from agent_tui.sdk import create_agent, open_session

    env = AcpEnv(tmp_path, server)
    for name, value in _env(env.env, tmp_path).items():
        monkeypatch.setenv(name, value)
    for name in [n for n in os.environ if n.lower() in ("http_proxy", "https_proxy", "all_proxy")]:
        monkeypatch.delenv(name)
    monkeypatch.chdir(env.work)
    asked: list[PermissionRequest] = []

    async def approver(request: PermissionRequest) -> Decision:
        asked.append(request)
        return Decision.ALLOW_ONCE

    command = f"curl -sS http://{HOST}:{web}/sdk"
    _push(server, command)
    session = open_session(cwd=str(env.work))
    with session:
        async with create_agent(session, permissions="ask", approver=approver, cwd=str(env.work)) as agent:
            async for _ in agent.prompt("go"):
                pass
    assert len(asked) == 2 and asked[0].call_id == "toolu_net"
    assert asked[1].summary == f"{HOST}:{web}" and asked[1].details() == command
    (path,) = env.sessions()
    assert f"{PAGE}/sdk" in _result(env.entries(path))


def test_print_mode_asks_on_the_terminal_and_keeps_always_in_the_local_settings(
    server: FakeModelServer, tmp_path: Path, web: int
) -> None:
    env = AcpEnv(tmp_path, server)
    command = f"curl -sS http://{HOST}:{web}/printed"
    _push(server, command)
    master, slave = pty.openpty()
    proc = subprocess.Popen(
        [sys.executable, "-m", "agent_tui", "-p", "go", "--permissions", "ask"],
        cwd=env.work,
        env=_env(env.env, tmp_path),
        stdin=slave,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
    )
    os.close(slave)
    assert proc.stderr is not None
    stderr, seen = proc.stderr, b""

    def wait_for(needle: bytes) -> None:
        nonlocal seen
        deadline = time.monotonic() + 60
        while needle not in seen:
            assert time.monotonic() < deadline and proc.poll() is None, seen
            if select.select([stderr], [], [], 1.0)[0]:
                seen += os.read(stderr.fileno(), 4096)

    try:
        wait_for(b"(runs a shell command)? [1] yes")
        os.write(master, b"1\n")
        question = f"allow bash {command} (connects to {HOST}:{web} from the sandbox".encode()
        wait_for(question)
        wait_for(f"[2] don't ask again for WebFetch(domain:{HOST})".encode())
        os.write(master, b"2\n")
        out, err = proc.communicate(timeout=60)
        assert out == b"done\n"
    finally:
        os.close(master)
        if proc.poll() is None:
            proc.kill()
    assert proc.returncode == 0, seen + err
    (path,) = env.sessions()
    assert f"{PAGE}/printed" in _result(env.entries(path))
    kept = json.loads((env.work / ".claude" / "settings.local.json").read_text())
    assert kept["permissions"]["allow"] == [f"WebFetch(domain:{HOST})"]
