"""The sandbox's network allow-list for real (agent.sandbox_proxy, agent.sandbox_forward): bwrap,
the proxy in this process, the forwarder inside, curl and Python's urllib.

A web server listens on 127.0.0.2 (this machine's loopback, as all of 127/8): a rule allows that
host, and ``refused.example`` (which no rule allows, refused before any lookup) stands for every
other name. The proxy connects from outside the sandbox, so the allowed host is reached as an
allowed host on the internet would be. ``localhost``, ``127.0.0.1`` and ``::1`` are the sandbox's
own loopback (``no_proxy``, as Claude Code's): a command's own test server stays reachable.
"""

from __future__ import annotations

import asyncio
import gc
import json
import os
import subprocess
import sys
import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from types import SimpleNamespace

import pytest

from agent_tui.agent import sandbox as sandbox_module
from agent_tui.agent.child_env import child_environment
from agent_tui.agent.hooks import HookCommand, Hooks
from agent_tui.agent.permission_rules import PermissionRules
from agent_tui.agent.permissions import Permissions
from agent_tui.agent.sandbox import Sandbox
from agent_tui.agent.sandbox_proxy import FORWARDER, SERVER, for_commands
from agent_tui.agent.tools.base import ToolContext, ToolResult
from agent_tui.agent.tools.bash import BashTool
from agent_tui.agent.user_bash import UserCommand, run_user_command
from agent_tui.tui import sandbox_state
from agent_tui.tui.agent_bridge import BuiltInThread, agent_permissions
from tests.support.fake_model_server import FakeModelServer, anthropic_stream, text, tool_use
from tests.support.rpc_client import RpcClient
from tests.support.web_pages import page_server

pytestmark = pytest.mark.slow  # each test starts several bwrap sandboxes
BWRAP = sandbox_module.bwrap_program()
PAGE = "the page at "
HOST = "127.0.0.2"  # where the web server listens: the rules allow it
ALLOW = f"WebFetch(domain:{HOST})"
REFUSED = "refused.example"  # no rule allows it


@pytest.fixture
def web() -> Iterator[int]:
    with page_server(HOST, PAGE) as port:
        yield port


@dataclass
class World:
    work: Path
    home: Path
    tmp: Path
    env: dict[str, str]
    kept: list[Permissions] = field(default_factory=list)

    def rules(self, allow: list[str] = (), deny: list[str] = (), trusted: bool = False) -> PermissionRules:  # type: ignore[assignment]
        data = {"permissions": {"allow": list(allow), "deny": list(deny)}}
        return PermissionRules.load(str(self.work), config_data=data, home=self.home, trusted=lambda: trusted)

    def sandbox(
        self, rules: PermissionRules | None, mode: str = "workspace-write", network: bool = False
    ) -> Sandbox:
        problem = sandbox_module.probe(BWRAP)
        assert BWRAP is not None and problem is None, f"{problem} (make setup installs bubblewrap)"
        permissions = Permissions(rules=rules)
        bound = for_commands(permissions, Sandbox(mode, network, BWRAP, None, str(self.tmp)))
        assert bound is not None
        self.kept.append(permissions)  # the gate reads the rules of a policy that lives
        return bound


@pytest.fixture
def world(tmp_path: Path) -> World:
    work, home, tmp = (tmp_path / n for n in ("work", "home", "tmp"))
    for folder in (work, home, tmp):
        folder.mkdir()
    env = child_environment()
    env["HOME"] = str(home)
    for name in ("http_proxy", "https_proxy", "all_proxy", "no_proxy"):  # the machine's own: not here
        env.pop(name, None)
        env.pop(name.upper(), None)
    return World(work, home, tmp, env)


def bash(world: World, command: str, sandbox: Sandbox) -> ToolResult:
    ctx = ToolContext(str(world.work), sandbox=sandbox)
    return asyncio.run(BashTool(env=world.env).execute({"command": command}, ctx))


def output(result: ToolResult) -> str:
    return "".join(str(b.get("text", "")) for b in result.content)


def test_an_allowed_name_gets_the_page_and_another_name_a_403_naming_the_rule(world: World, web: int) -> None:
    sandbox = world.sandbox(world.rules(allow=[ALLOW]))
    got = bash(world, f"curl -sS http://{HOST}:{web}/plain", sandbox)
    assert not got.is_error and output(got).strip() == f"{PAGE}/plain"
    tunnel = bash(world, f"curl -sS --proxytunnel http://{HOST}:{web}/tunnel", sandbox)  # CONNECT
    assert not tunnel.is_error and output(tunnel).strip() == f"{PAGE}/tunnel"
    python = f"python3 -c \"import urllib.request as u; print(u.urlopen('http://{HOST}:{web}/py').read().decode())\""
    assert output(bash(world, python, sandbox)).strip() == f"{PAGE}/py"

    refused = output(bash(world, f"curl -sS http://{REFUSED}:{web}/", sandbox))
    assert PAGE not in refused
    assert f"agent-tui's sandbox refused {REFUSED}:{web}: no permission rule allows it" in refused
    assert f"add the permission rule WebFetch(domain:{REFUSED})" in refused  # the 403's body
    # an HTTPS-style tunnel shows no body: the forwarder's line tells the model why
    secure = bash(world, f"curl -sS --proxytunnel http://{REFUSED}:{web}/", sandbox)
    said = output(secure)
    assert secure.is_error and "CONNECT tunnel failed, response 403" in said
    assert f"refused a connection to {REFUSED}:{web}" in said and f"WebFetch(domain:{REFUSED})" in said


def test_the_proxy_is_the_only_way_out(world: World, web: int) -> None:
    sandbox = world.sandbox(world.rules(allow=[ALLOW]))
    # raw TCP and a client told not to use the proxy do not reach the allowed host
    raw = bash(world, f"exec 3<>/dev/tcp/{HOST}/{web} && echo connected", sandbox)
    assert raw.is_error and "connected" not in output(raw)
    direct = bash(world, f"curl -sS --noproxy '*' http://{HOST}:{web}/", sandbox)
    assert direct.is_error and PAGE not in output(direct)
    env = bash(world, "echo $http_proxy $HTTPS_PROXY $all_proxy [$no_proxy] [$NO_PROXY]", sandbox)
    proxy = output(env).split()[0]
    loopback = "[localhost,127.0.0.1,::1]"
    assert proxy.startswith("http://127.0.0.1:") and output(env).split()[1:] == [
        proxy,
        proxy,
        loopback,
        loopback,
    ]
    # the sandbox's own loopback is reached directly: a command's test server works with a rule on
    serve = (
        'python3 -c "import http.server as h, threading, urllib.request as u; '
        "s = h.HTTPServer(('127.0.0.1', 0), h.SimpleHTTPRequestHandler); "
        "threading.Thread(target=s.serve_forever, daemon=True).start(); "
        "print('own', u.urlopen(f'http://localhost:{s.server_port}/').status)\""
    )
    own = bash(world, serve, sandbox)
    assert not own.is_error and "own 200" in output(own), output(own)


def test_with_no_rule_nothing_gets_through_and_deny_beats_allow(world: World, web: int) -> None:
    none = world.sandbox(world.rules())
    assert FORWARDER not in none.wrap(["true"], str(world.work))  # no rule: no proxy at all
    blocked = bash(world, f"curl -sS http://{HOST}:{web}/", none)
    assert blocked.is_error and PAGE not in output(blocked)
    assert "WebFetch(domain:HOST)" in output(blocked)  # how the user can allow a host
    denied = world.sandbox(world.rules(allow=["WebFetch(domain:*.example)", ALLOW], deny=[ALLOW]))
    said = output(bash(world, f"curl -sS http://{HOST}:{web}/", denied))
    assert PAGE not in said and f"denied by {ALLOW}" in said


def test_a_projects_rule_opens_nothing_until_the_folder_is_trusted(world: World, web: int) -> None:
    (world.work / ".claude").mkdir()
    settings = {"sandbox": {"network": {"allowedDomains": [HOST]}}}
    (world.work / ".claude" / "settings.json").write_text(json.dumps(settings))
    untrusted = world.sandbox(world.rules(allow=["WebFetch(domain:example.invalid)"]))
    said = output(bash(world, f"curl -sS http://{HOST}:{web}/", untrusted))
    assert PAGE not in said and "this folder is not trusted" in said
    trusted = world.sandbox(world.rules(trusted=True))
    assert output(bash(world, f"curl -sS http://{HOST}:{web}/ok", trusted)).strip() == f"{PAGE}/ok"


def test_read_only_mode_and_sandbox_network(world: World, web: int) -> None:
    rules = world.rules(allow=[ALLOW])
    read_only = world.sandbox(rules, mode="read-only")
    assert output(bash(world, f"curl -sS http://{HOST}:{web}/ro", read_only)).strip() == f"{PAGE}/ro"
    # --sandbox-network opens everything, without the proxy
    open_ = world.sandbox(rules, network=True)
    argv = open_.wrap(["true"], str(world.work))
    assert FORWARDER not in argv and "--unshare-net" not in argv
    assert output(bash(world, f"curl -sS http://{HOST}:{web}/all", open_)).strip() == f"{PAGE}/all"
    raw = bash(world, f"exec 3<>/dev/tcp/{HOST}/{web} && echo connected", open_)  # not only HTTP
    assert "connected" in output(raw)


def test_the_users_command_and_hooks_use_the_same_allow_list(world: World, web: int) -> None:
    sandbox = world.sandbox(world.rules(allow=[ALLOW]))
    command = UserCommand(f"curl -sS http://{HOST}:{web}/user; curl -sS http://{REFUSED}:{web}/", False)
    message = asyncio.run(run_user_command(command, str(world.work), asyncio.Event(), sandbox=sandbox))
    assert f"{PAGE}/user" in message["output"] and f"refused {REFUSED}:{web}" in message["output"]
    hook = HookCommand(
        "UserPromptSubmit", "", f"curl -sS http://{HOST}:{web}/hook", 10, "config.toml", trusted=True
    )
    hooks = Hooks([hook], str(world.work))
    hooks.sandbox = sandbox
    outcome = asyncio.run(hooks.run("UserPromptSubmit", {"prompt": "hi"}))
    assert any(f"{PAGE}/hook" in c for c in outcome.context)


def _face_env(tmp_path: Path, server: FakeModelServer) -> dict[str, str]:
    """A face's environment: its own data dir and config (the user's rule allows HOST)."""
    config = tmp_path / "config.toml"
    config.write_text(f'[retry]\nbase_delay = 0.01\n[permissions]\nallow = ["{ALLOW}"]\n')
    env = {k: v for k, v in os.environ.items() if not k.startswith(("ANTHROPIC_", "OPENAI_", "AGENT_TUI_"))}
    env = {k: v for k, v in env.items() if k.lower() not in ("http_proxy", "https_proxy", "all_proxy")}
    env.update(
        AGENT_TUI_HOME=str(tmp_path / "data"),
        AGENT_TUI_CONFIG=str(config),
        ANTHROPIC_API_KEY="test-key-0123456789",
        ANTHROPIC_BASE_URL=server.anthropic_base_url,
        TMPDIR=str(tmp_path / "tmp"),
    )
    for folder in (tmp_path / "work", tmp_path / "tmp"):
        folder.mkdir(exist_ok=True)
    return env


def test_print_mode_allows_the_hosts_of_the_users_rules(
    server: FakeModelServer, tmp_path: Path, web: int
) -> None:
    env = _face_env(tmp_path, server)
    command = f"curl -sS http://{HOST}:{web}/printed; curl -sS http://{REFUSED}:{web}/"
    server.push(
        anthropic_stream(tool_use("toolu_1", "bash", {"command": command})), anthropic_stream(text("ok"))
    )
    done = subprocess.run(
        [sys.executable, "-m", "agent_tui", "-p", "go"],
        cwd=tmp_path / "work",
        env=env,
        capture_output=True,
        text=True,
        timeout=60,
        stdin=subprocess.DEVNULL,
    )
    assert done.returncode == 0, done.stderr
    (session,) = (tmp_path / "data").glob("sessions/*/*.jsonl")
    entries = [json.loads(line) for line in session.read_text().splitlines()[1:]]
    (result,) = [e["message"] for e in entries if e.get("message", {}).get("role") == "toolResult"]
    said = result["content"][0]["text"]
    assert f"{PAGE}/printed" in said and f"refused {REFUSED}:{web}" in said


def test_rpc_bash_uses_the_same_allow_list(server: FakeModelServer, tmp_path: Path, web: int) -> None:
    client = RpcClient(["--no-session"], tmp_path / "work", _face_env(tmp_path, server))
    try:
        command = f"curl -sS http://{HOST}:{web}/rpc; curl -sS http://{REFUSED}:{web}/"
        response = client.call({"type": "bash", "command": command}, 60)
        assert response["success"], response
        said = response["data"]["output"]
        assert f"{PAGE}/rpc" in said and f"refused {REFUSED}:{web}" in said
    finally:
        client.kill()


def test_a_gone_agents_socket_is_closed_and_refusals_are_shown(world: World, web: int) -> None:
    permissions = Permissions(rules=world.rules(allow=[ALLOW]))
    sandbox = for_commands(permissions, world.sandbox(None))
    assert sandbox is not None and sandbox.gate is not None
    argv = sandbox.wrap(["curl", "-sS", f"http://{REFUSED}:{web}/"], str(world.work))
    path = argv[argv.index(FORWARDER) + 1]
    assert os.path.exists(path) and SERVER.open_sockets() >= 1
    subprocess.run(argv, capture_output=True, env=world.env, check=True)  # refused
    shown = sandbox_state.describe(sandbox, str(world.work))
    assert f"hosts open through the proxy: {HOST}" in shown
    assert f"refused lately (the rule that allows it): {REFUSED}:{web} (WebFetch(domain:{REFUSED}))" in shown
    before = SERVER.open_sockets()
    del permissions, sandbox
    gc.collect()
    assert not os.path.exists(path) and SERVER.open_sockets() == before - 1


def test_the_apps_command_sandbox_is_the_agents(world: World) -> None:
    """The app's ``!cmd`` (tui.sandbox_state.command_sandbox): the app's sandbox, the agent's rules."""
    permissions = Permissions(rules=world.rules(allow=[ALLOW]))
    agent = SimpleNamespace(loop=SimpleNamespace(permissions=permissions))
    turns = BuiltInThread(lambda: agent)  # the app's own wrapper: ``built`` is a property
    turns._started().result(10)
    assert agent_permissions(turns) is permissions
    sandbox = sandbox_state.command_sandbox(agent_permissions(turns))
    assert sandbox is not None and sandbox.gate is not None
    if sandbox.active:
        assert FORWARDER in sandbox.wrap(["true"], str(world.work))
    nobody = sandbox_state.command_sandbox(agent_permissions(None))  # no agent yet: no rules
    assert nobody.gate is None
    # /sandbox MODE reaches the built agent's policy (it never did through BuiltInThread)
    saved = list(sandbox_state._current)
    try:
        switched = sandbox_state.switch(agent_permissions(turns), "off")
    finally:
        sandbox_state._current[:] = saved
    assert permissions.sandbox is switched


def test_overhead_figures(world: World, web: int, capsys: pytest.CaptureFixture[str]) -> None:
    """Not a speed limit: the figures the docs quote (printed with -s), and that both paths work."""
    rules = world.rules(allow=[ALLOW])
    loop = f"for i in $(seq 20); do curl -s http://{HOST}:{web}/ >/dev/null || exit 1; done"
    timings: dict[str, float] = {}
    for name, sandbox in (("proxy", world.sandbox(rules)), ("open", world.sandbox(rules, network=True))):
        argv = sandbox.wrap(["bash", "-c", "true"], str(world.work))
        started = time.perf_counter()
        for _ in range(5):
            subprocess.run(argv, check=True, env=world.env)
        timings[f"{name} start"] = (time.perf_counter() - started) / 5
        argv = sandbox.wrap(["bash", "-c", loop], str(world.work))
        started = time.perf_counter()
        subprocess.run(argv, check=True, env=world.env)
        timings[f"{name} 20 requests"] = time.perf_counter() - started
    with capsys.disabled():
        print(" ".join(f"{k}={v * 1000:.0f}ms" for k, v in timings.items()))
