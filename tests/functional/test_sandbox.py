"""The OS sandbox (agent.sandbox, bubblewrap) around bash, the user's !cmd and hooks.

Each test lays out its own world under ``tmp_path``: ``work`` (the cwd), ``home`` (HOME, with a
fake ``~/.ssh/id_rsa``), ``outside`` (a folder a command must not write) and ``tmp`` (the system
temp dir the sandbox leaves writable), so nothing of the machine's is read or written.
"""

from __future__ import annotations

import asyncio
import json
import os
import socket
import subprocess
import sys
import threading
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from agent_tui.agent import sandbox as sandbox_module
from agent_tui.agent.child_env import child_environment
from agent_tui.agent.hooks import HookCommand, Hooks
from agent_tui.agent.permissions import Decision, PermissionMode, PermissionRequest, Permissions
from agent_tui.agent.sandbox import Sandbox
from agent_tui.agent.tools.base import ToolContext, ToolResult
from agent_tui.agent.tools.bash import BashTool
from agent_tui.agent.user_bash import UserCommand, run_user_command
from tests.support.fake_model_server import FakeModelServer, anthropic_stream, text, tool_use

BWRAP = sandbox_module.bwrap_program()


@dataclass
class World:
    work: Path
    home: Path
    outside: Path
    tmp: Path
    env: dict[str, str]

    def sandbox(self, mode: str = "workspace-write", network: bool = False) -> Sandbox:
        problem = sandbox_module.probe(BWRAP)
        assert BWRAP is not None and problem is None, f"{problem} (make setup installs bubblewrap)"
        return Sandbox(mode, network, BWRAP, None, str(self.tmp))


@pytest.fixture
def world(tmp_path: Path) -> World:
    work, home, outside, tmp = (tmp_path / n for n in ("work", "home", "outside", "tmp"))
    for folder in (work, home / ".ssh", outside, tmp, home / ".cache"):
        folder.mkdir(parents=True)
    (home / ".ssh" / "id_rsa").write_text("-----BEGIN OPENSSH PRIVATE KEY----- fake\n")
    (home / ".netrc").write_text("machine example.com login me password hunter2\n")
    env = child_environment()
    env["HOME"] = str(home)
    return World(work, home, outside, tmp, env)


def bash(world: World, command: str, sandbox: Sandbox | None) -> ToolResult:
    ctx = ToolContext(str(world.work), sandbox=sandbox)
    return asyncio.run(BashTool(env=world.env).execute({"command": command}, ctx))


def output(result: ToolResult) -> str:
    return "".join(str(b.get("text", "")) for b in result.content)


def test_a_command_writes_in_the_cwd_and_temp_dir_but_nowhere_else(world: World) -> None:
    sandbox = world.sandbox()
    result = bash(
        world,
        f"mkdir -p build && printf 'print(6 * 7)' > build/main.py && python3 build/main.py > build/out.txt"
        f" && echo t > {world.tmp}/scratch && echo c > {world.home}/.cache/pip-like"
        f" && cat build/out.txt; echo x > {world.outside}/escape; echo y > {world.home}/.bashrc",
        sandbox,
    )
    assert (world.work / "build" / "out.txt").read_text() == "42\n"  # a build in the cwd
    assert (world.tmp / "scratch").exists() and (world.home / ".cache" / "pip-like").exists()
    assert not (world.outside / "escape").exists() and not (world.home / ".bashrc").exists()
    said = output(result)
    assert result.is_error and "Read-only file system" in said
    # the model is told the sandbox stopped it, and how the user can allow it
    assert "agent-tui's sandbox (workspace-write) stopped a write" in said and "--sandbox off" in said
    # the same command unsandboxed writes there (the test's folders are writable)
    bash(world, f"echo x > {world.outside}/escape", None)
    assert (world.outside / "escape").exists()


def test_secrets_under_home_cannot_be_read(world: World) -> None:
    result = bash(
        world,
        f"cat {world.home}/.ssh/id_rsa; ls -A {world.home}/.ssh; cat {world.home}/.netrc;"
        f" echo netrc=$(wc -c < {world.home}/.netrc); echo end",
        world.sandbox(),
    )
    said = output(result)
    assert "PRIVATE KEY" not in said and "id_rsa\n" not in said and "hunter2" not in said
    assert said.rstrip().endswith("netrc=0\nend")  # an empty file: tools that read it still work
    unsandboxed = output(bash(world, f"cat {world.home}/.ssh/id_rsa", None))
    assert "PRIVATE KEY" in unsandboxed  # it is there: the sandbox hid it


@pytest.fixture
def listener() -> Iterator[int]:
    """A TCP server on 127.0.0.1 that answers every connection with ``hello``."""
    server = socket.create_server(("127.0.0.1", 0))
    server.settimeout(0.2)
    stop = threading.Event()

    def serve() -> None:
        while not stop.is_set():
            try:
                conn, _ = server.accept()
            except OSError:
                continue
            with conn:
                conn.sendall(b"hello\n")

    thread = threading.Thread(target=serve, daemon=True)
    thread.start()
    yield server.getsockname()[1]
    stop.set()
    thread.join(2)
    server.close()


def test_no_network_unless_allowed(world: World, listener: int) -> None:
    command = f"exec 3<>/dev/tcp/127.0.0.1/{listener} && head -n1 <&3"
    blocked = bash(world, command, world.sandbox())
    assert blocked.is_error and "hello" not in output(blocked)
    assert "without network access" in output(blocked) and "--sandbox-network" in output(blocked)
    allowed = bash(world, command, world.sandbox(network=True))
    assert not allowed.is_error and output(allowed).strip() == "hello"


def test_read_only_mode_writes_nothing_but_a_private_tmp(world: World) -> None:
    result = bash(
        world,
        f"echo a > {world.tmp}/private && cat {world.tmp}/private && echo b > here.txt",
        world.sandbox("read-only"),
    )
    said = output(result)
    assert said.startswith("a\n") and "Read-only file system" in said and "private /tmp" in said
    assert not (world.work / "here.txt").exists() and not (world.tmp / "private").exists()


def test_a_hostile_repository_config_runs_its_programs_inside_the_sandbox(world: World) -> None:
    """fsmonitor and core.pager name programs git runs: inside the sandbox they cannot write
    outside, and the command cannot rewrite .git/config or add a hook to escape later."""
    run = {"cwd": world.work, "check": True, "capture_output": True, "env": world.env}
    subprocess.run(["git", "init", "-q"], **run)  # type: ignore[call-overload]
    evil = world.work / "evil.sh"
    evil.write_text(
        f"#!/bin/sh\necho pwned > {world.outside}/pwned\ncat {world.home}/.ssh/id_rsa > leak.txt\n"
    )
    evil.chmod(0o755)
    with open(world.work / ".git" / "config", "a") as f:
        f.write(f"[core]\n\tfsmonitor = {evil}\n\tpager = {evil}\n")
    result = bash(
        world,
        "git status --short >/dev/null 2>&1; git -p log >/dev/null 2>&1;"
        " git config core.hooksPath /tmp/x; echo '#!/bin/sh' > .git/hooks/post-checkout",
        world.sandbox(),
    )
    assert not (world.outside / "pwned").exists()
    leak = world.work / "leak.txt"
    assert leak.exists() and "PRIVATE KEY" not in leak.read_text()  # it ran, inside, and saw nothing
    assert "hooksPath" not in (world.work / ".git" / "config").read_text()
    assert not (world.work / ".git" / "hooks" / "post-checkout").exists()
    assert "stopped a write" in output(result)  # the model is told why, and how to allow it
    again = bash(world, "git config user.name someone", world.sandbox())  # git renames over .git/config
    assert "Device or resource busy" in output(again) and "stopped a write" in output(again)
    commit = bash(
        world, "git -c user.name=a -c user.email=a@b commit -q --allow-empty -m one", world.sandbox()
    )
    assert not commit.is_error, output(commit)  # commits still work: objects, refs, the index


def test_the_users_command_and_hooks_are_sandboxed_too(world: World) -> None:
    sandbox = world.sandbox()
    command = UserCommand(f"echo in > inside.txt; echo x > {world.outside}/user-escape", False)
    message = asyncio.run(run_user_command(command, str(world.work), asyncio.Event(), sandbox=sandbox))
    assert (world.work / "inside.txt").exists() and not (world.outside / "user-escape").exists()
    assert "Read-only file system" in message["output"] and "stopped a write" in message["output"]

    hook = HookCommand(
        "UserPromptSubmit",
        "",
        f"echo hooked > hook.txt; echo x > {world.outside}/hook-escape; cat {world.home}/.ssh/id_rsa",
        10,
        "config.toml",
        trusted=True,
    )
    hooks = Hooks([hook], str(world.work))
    hooks.sandbox = sandbox
    old_home = os.environ.get("HOME")
    os.environ["HOME"] = str(world.home)  # the hook's environment is this process's
    try:
        outcome = asyncio.run(hooks.run("UserPromptSubmit", {"prompt": "hi"}))
    finally:
        if old_home is not None:
            os.environ["HOME"] = old_home
    assert (world.work / "hook.txt").exists() and not (world.outside / "hook-escape").exists()
    assert not any("PRIVATE KEY" in c for c in outcome.context)


async def _approve(request: PermissionRequest) -> Decision:
    asked.append(request)
    return Decision.ALLOW_ONCE


asked: list[PermissionRequest] = []


def test_without_bwrap_every_command_asks_unless_the_sandbox_is_off(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv(sandbox_module.BWRAP_ENV, str(tmp_path / "no-such-bwrap"))
    missing = sandbox_module.resolve()
    assert missing.mode == "workspace-write" and not missing.active
    assert "every command will be asked" in (missing.notice() or "")
    assert "unavailable" in missing.describe()
    asked.clear()
    auto = Permissions(PermissionMode.AUTO, _approve, sandbox=missing)
    verdict = asyncio.run(auto.check("bash", {"command": "ls"}, str(tmp_path)))
    assert verdict.allowed and verdict.decision == "allow-once" and len(asked) == 1
    assert "no sandbox" in asked[0].reason
    # reads are not commands: they still pass without a question
    assert asyncio.run(auto.check("read", {"path": "x"}, str(tmp_path))).decision is None
    nobody = Permissions(PermissionMode.AUTO, sandbox=missing)
    assert not asyncio.run(nobody.check("bash", {"command": "ls"}, str(tmp_path))).allowed
    off = Permissions(PermissionMode.AUTO, _approve, sandbox=sandbox_module.resolve("off"))
    verdict = asyncio.run(off.check("bash", {"command": "ls"}, str(tmp_path)))
    assert verdict.decision == "auto" and len(asked) == 1  # explicit off: nothing asked
    # the argv is left as it is when there is no sandbox to run in
    assert missing.wrap(["bash", "-c", "ls"], str(tmp_path)) == ["bash", "-c", "ls"]


def _env(tmp_path: Path, server: FakeModelServer, **extra: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("ANTHROPIC_", "OPENAI_", "AGENT_TUI_"))}
    config = tmp_path / "config.toml"
    if not config.exists():
        config.write_text("[retry]\nbase_delay = 0.01\n")
    env.update(
        AGENT_TUI_HOME=str(tmp_path / "data"),
        AGENT_TUI_CONFIG=str(config),
        ANTHROPIC_API_KEY="test-key-0123456789",
        ANTHROPIC_BASE_URL=server.anthropic_base_url,
        TMPDIR=str(tmp_path / "tmp"),
        **extra,
    )
    return env


def _results(tmp_path: Path) -> list[dict[str, Any]]:
    (session,) = (tmp_path / "data").glob("sessions/*/*.jsonl")
    lines = [json.loads(line) for line in session.read_text().splitlines()[1:]]
    return [
        e["message"] for e in lines if e.get("type") == "message" and e["message"]["role"] == "toolResult"
    ]


@pytest.mark.slow
def test_print_mode_sandboxes_by_default_and_obeys_the_flags(server: FakeModelServer, tmp_path: Path) -> None:
    work, outside = tmp_path / "work", tmp_path / "outside"
    for folder in (work, outside, tmp_path / "tmp"):
        folder.mkdir()
    command = f"echo a > inside.txt; echo b > {outside}/escape.txt"
    for _ in range(2):
        server.push(
            anthropic_stream(tool_use("toolu_1", "bash", {"command": command})), anthropic_stream(text("ok"))
        )
    args = [sys.executable, "-m", "agent_tui", "-p", "go"]
    run = {"cwd": work, "capture_output": True, "text": True, "timeout": 60}
    first = subprocess.run(args, env=_env(tmp_path, server), **run)  # type: ignore[call-overload]
    assert first.returncode == 0, first.stderr
    assert (work / "inside.txt").exists() and not (outside / "escape.txt").exists()
    assert "stopped a write" in _results(tmp_path)[-1]["content"][0]["text"]
    second = subprocess.run([*args, "-c", "--sandbox", "off"], env=_env(tmp_path, server), **run)  # type: ignore[call-overload]
    assert second.returncode == 0 and (outside / "escape.txt").exists()


@pytest.mark.slow
def test_print_mode_without_bwrap_says_so_and_asks(server: FakeModelServer, tmp_path: Path) -> None:
    (tmp_path / "work").mkdir()
    (tmp_path / "tmp").mkdir()
    server.push(
        anthropic_stream(tool_use("toolu_1", "bash", {"command": "echo ran > ran.txt"})),
        anthropic_stream(text("ok")),
    )
    env = _env(tmp_path, server, AGENT_TUI_BWRAP=str(tmp_path / "missing-bwrap"))
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
    lines = [line for line in done.stderr.splitlines() if "sandbox is unavailable" in line]
    assert len(lines) == 1 and "every command will be asked" in lines[0]
    assert not (tmp_path / "work" / "ran.txt").exists()  # asked, and nobody can answer here
    assert "Permission denied" in _results(tmp_path)[-1]["content"][0]["text"]


def test_switching_modes_and_the_network() -> None:
    off = sandbox_module.resolve("off")
    assert not off.active and off.unsandboxed is None and off.describe().startswith("sandbox: off")
    on = off.with_mode("workspace-write")
    assert on.active and on.bwrap == BWRAP and "no network" in on.describe()
    networked = on.with_mode(network=True)
    assert networked.network and "--unshare-net" not in networked.wrap(["true"], ".")
    assert "--unshare-net" in on.wrap(["true"], ".")
    assert on.with_mode("read-only").describe().startswith("sandbox: read-only")
    with pytest.raises(sandbox_module.SandboxError, match="unknown sandbox mode 'sideways'"):
        on.with_mode("sideways")
