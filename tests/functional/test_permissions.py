"""Tool permissions: ask / auto / read-only, recorded decisions, paths that cannot escape."""

from __future__ import annotations

import asyncio
import json
import os
import pty
import select
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest

from agent_tui.agent.build import make_provider
from agent_tui.agent.events import ToolFinished, TurnDone
from agent_tui.agent.loop import AgentLoop
from agent_tui.agent.permissions import (
    RECORD_TYPE,
    Decision,
    PermissionMode,
    PermissionModeError,
    PermissionRequest,
    Permissions,
    cwd_notice,
    inside,
    real_target,
    resolve_mode,
    scope_covers,
)
from agent_tui.agent.tools.builtin import default_tools
from agent_tui.projection.context import project
from agent_tui.store.session import Session
from tests.support.agent_support import Harness, make_config
from tests.support.fake_model_server import FakeModelServer, anthropic_stream, text, tool_use

pytestmark = pytest.mark.timeout(60)


# -- paths ---------------------------------------------------------------------------------------


@pytest.fixture
def tree(tmp_path: Path) -> dict[str, Path]:
    """A project with symlinks pointing out of it, an outside folder, and a symlink to the project."""
    project_dir = tmp_path / "project"
    outside = tmp_path / "outside"
    (project_dir / "src").mkdir(parents=True)
    outside.mkdir()
    (outside / "secret.txt").write_text("x")
    (project_dir / "link-out").symlink_to(outside)
    (project_dir / "file-out").symlink_to(outside / "secret.txt")
    (project_dir / "dangling-out").symlink_to(outside / "missing.txt")
    (project_dir / "link-in").symlink_to(project_dir / "src")
    (tmp_path / "project-link").symlink_to(project_dir)
    return {"project": project_dir, "outside": outside, "alias": tmp_path / "project-link"}


@pytest.mark.parametrize(
    ("path", "expected"),
    [
        ("a.txt", True),
        ("src/new/deep.txt", True),
        ("link-in/x.py", True),
        ("./src/../b.txt", True),
        ("../outside/secret.txt", False),
        ("src/../../outside/x", False),
        ("link-out/x.txt", False),
        ("file-out", False),
        ("dangling-out", False),
        ("/etc/passwd", False),
        ("~/x", False),
        ("@../outside/x", False),
    ],
)
def test_paths_are_resolved_before_the_cwd_check(tree: dict[str, Path], path: str, expected: bool) -> None:
    for cwd in (tree["project"], tree["alias"]):  # the same answers from a symlinked cwd
        assert inside(real_target(path, str(cwd)), str(cwd)) is expected, (path, cwd)


def test_absolute_paths_into_the_project_are_inside(tree: dict[str, Path]) -> None:
    for cwd in (tree["project"], tree["alias"]):
        assert inside(real_target(str(tree["alias"] / "src" / "x"), str(cwd)), str(cwd))
        assert inside(real_target(str(tree["project"] / "y"), str(cwd)), str(cwd))
    assert not inside(
        real_target(str(tree["project"]) + "-sibling/x", str(tree["project"])), str(tree["project"])
    )


# -- the policy ----------------------------------------------------------------------------------


def test_mode_precedence_and_errors() -> None:
    env = {"AGENT_TUI_PERMISSIONS": "read-only"}
    data = {"permissions": "ask"}
    assert resolve_mode("auto", default=PermissionMode.ASK, config_data=data, env=env) is PermissionMode.AUTO
    assert (
        resolve_mode(None, default=PermissionMode.ASK, config_data=data, env=env) is PermissionMode.READ_ONLY
    )
    assert resolve_mode(None, default=PermissionMode.AUTO, config_data=data, env={}) is PermissionMode.ASK
    assert resolve_mode(None, default=PermissionMode.AUTO, config_data={}, env={}) is PermissionMode.AUTO
    with pytest.raises(PermissionModeError, match="use one of ask, accept-edits, plan, auto, read-only"):
        resolve_mode("sometimes", default=PermissionMode.ASK, env={})


class Answers:
    """A scripted approver that records what it was asked."""

    def __init__(self, *answers: Decision) -> None:
        self.answers = list(answers)
        self.asked: list[PermissionRequest] = []

    async def __call__(self, request: PermissionRequest) -> Decision:
        self.asked.append(request)
        return self.answers.pop(0)


async def test_each_mode_decides(tree: dict[str, Path]) -> None:
    cwd = str(tree["project"])
    inside_write = {"path": "src/a.py", "content": "x"}
    outside_write = {"path": "link-out/a.py", "content": "x"}
    bash = {"command": "make test"}

    auto = Permissions(PermissionMode.AUTO)
    assert (await auto.check("read", {"path": "/etc/passwd"}, cwd)).decision is None
    assert (await auto.check("write", inside_write, cwd)).decision is None
    for tool, args in (("write", outside_write), ("bash", bash)):
        verdict = await auto.check(tool, args, cwd)
        assert verdict.allowed and verdict.decision == "auto"

    read_only = Permissions(PermissionMode.READ_ONLY)
    assert (await read_only.check("grep", {"pattern": "x"}, cwd)).allowed
    for tool, args in (("write", inside_write), ("edit", outside_write), ("bash", bash), ("custom", {})):
        verdict = await read_only.check(tool, args, cwd)
        assert not verdict.allowed and verdict.decision == "read-only-refused"
        assert verdict.message is not None and "read-only mode" in verdict.message

    answers = Answers(Decision.ALLOW_ONCE, Decision.ALLOW_SESSION, Decision.DENY, Decision.ALLOW_ONCE)
    ask = Permissions(PermissionMode.ASK, answers)
    inside = await ask.check("write", inside_write, cwd)  # inside the cwd too: ask mode asks
    assert inside.allowed and inside.decision == "allow-once" and inside.request is not None
    assert inside.request.rule == "Edit(src/a.py)"
    first = await ask.check("bash", bash, cwd, "c1")
    again = await ask.check("bash", bash, cwd, "c2")
    assert first.allowed and first.decision == "allow-session" and not first.remembered
    assert again.allowed and again.decision == "allow-session" and again.remembered
    denied = await ask.check("write", outside_write, cwd, "c3")
    assert not denied.allowed and denied.decision == "deny" and "did not allow" in (denied.message or "")
    once = await ask.check("bash", {"command": "make test && rm -rf /"}, cwd, "c4")
    assert once.decision == "allow-once"
    assert [r.tool for r in answers.asked] == ["write", "bash", "write", "bash"]
    write_request = answers.asked[2]
    assert write_request.path == str((tree["outside"] / "a.py").resolve())
    assert write_request.scope == f"file:{write_request.path}" and "->" in write_request.summary

    nobody = Permissions(PermissionMode.ASK, None, no_approver_reason="stdin is not a terminal")
    verdict = await nobody.check("bash", bash, cwd)
    assert not verdict.allowed and "stdin is not a terminal" in (verdict.message or "")


def test_scopes_and_their_entries(tmp_path: Path) -> None:
    assert scope_covers("bash:npm test", "bash:npm test")
    assert not scope_covers("bash:npm test", "bash:npm test --watch")
    for other in ("git status", "git status; rm -rf ~", "git log | sh", "git *x"):
        assert not scope_covers("bash:git *", f"bash:{other}"), other  # a "*" is a character
    assert not scope_covers("bash:*", "bash:ls") and not scope_covers("file:/p/out/*", "file:/p/out/x")

    # Recorded decisions are never a grant: nothing reads allow-session scopes back from a file.
    import agent_tui.agent.permissions as permissions_module

    assert not hasattr(Permissions, "restore") and not hasattr(permissions_module, "session_scopes")


def test_summaries_are_redacted_and_one_line(tree: dict[str, Path]) -> None:
    key = "sk-ant-api03-" + "K" * 40
    request = Permissions(PermissionMode.ASK).request_for(
        "bash", {"command": f"curl -H 'x: {key}'\n  https://x"}, str(tree["project"])
    )
    assert request is not None and key not in request.summary and "\n" not in request.summary
    assert key not in request.scope


# -- exact scopes, git's files ---------------------------------------------------------


async def test_allow_for_this_session_covers_only_the_same_command(tree: dict[str, Path]) -> None:
    cwd = str(tree["project"])
    key_one, key_two = "sk-ant-api03-" + "A" * 40, "sk-ant-api03-" + "B" * 40
    answers = Answers(
        Decision.ALLOW_SESSION, Decision.DENY, Decision.DENY, Decision.ALLOW_SESSION, Decision.DENY
    )
    ask = Permissions(PermissionMode.ASK, answers)
    assert (await ask.check("bash", {"command": "rm -f dist/*"}, cwd)).allowed
    widened = await ask.check("bash", {"command": "rm -f dist/ -r OUTSIDE"}, cwd)
    assert not widened.allowed and widened.decision == "deny"  # asked, not covered by "dist/*"
    assert not (await ask.check("bash", {"command": "rm -f dist/* "}, cwd)).allowed  # not byte for byte
    assert (await ask.check("bash", {"command": "rm -f dist/*"}, cwd)).remembered
    # Two commands whose recorded (redacted) scopes are the same are still two commands.
    first = await ask.check("bash", {"command": f"curl -H 'x: {key_one}' x"}, cwd)
    assert first.allowed and key_one not in (first.request.scope if first.request else key_one)
    other_key = await ask.check("bash", {"command": f"curl -H 'x: {key_two}' x"}, cwd)
    assert not other_key.allowed
    assert [r.summary.split()[0] for r in answers.asked] == ["rm", "rm", "rm", "curl", "curl"]


async def test_allow_for_this_session_covers_only_the_same_file(tree: dict[str, Path]) -> None:
    cwd = str(tree["project"])
    outside = tree["outside"]
    answers = Answers(Decision.ALLOW_SESSION, Decision.DENY, Decision.DENY)
    ask = Permissions(PermissionMode.ASK, answers)
    star = {"path": str(outside / "*"), "content": "x"}  # a file literally named "*"
    assert (await ask.check("write", star, cwd)).decision == "allow-session"
    again = await ask.check("write", {"path": "../outside/./sub/../*", "content": "y"}, cwd)
    assert again.allowed and again.remembered  # the same resolved path, however it is spelled
    for escape in (str(outside / "*" / ".." / ".." / "escape.txt"), str(outside / "x.txt")):
        verdict = await ask.check("write", {"path": escape, "content": "z"}, cwd)
        assert not verdict.allowed and not verdict.remembered, escape
    assert len(answers.asked) == 3


@pytest.mark.parametrize(
    "path",
    [
        ".git/config",
        ".git/hooks/pre-commit",
        "x/.git/HEAD",
        "x/.git",
        "src/.GIT/config",
        ".gitmodules",
        "src/.gitconfig",
        "gitdir-link/config",
    ],
)
async def test_writes_to_git_files_inside_the_project_ask(tree: dict[str, Path], path: str) -> None:
    cwd = str(tree["project"])
    (tree["project"] / ".git").mkdir()
    (tree["project"] / "gitdir-link").symlink_to(tree["project"] / ".git")
    for tool, args in (("write", {"path": path, "content": "x"}), ("edit", {"path": path, "edits": []})):
        nobody = Permissions(PermissionMode.ASK, None)
        verdict = await nobody.check(tool, args, cwd)
        assert not verdict.allowed and verdict.request is not None, (tool, path)
        assert "git" in verdict.request.reason
        assert (await Permissions(PermissionMode.AUTO).check(tool, args, cwd)).allowed


async def test_other_dot_files_inside_the_project_do_not_ask(tree: dict[str, Path]) -> None:
    cwd = str(tree["project"])
    nobody = Permissions(PermissionMode.ACCEPT_EDITS, None)  # (ask mode asks about every edit)
    # (.gitattributes decides what git runs, its filters: it asks, see test_safety_config_files)
    for path in (".gitignore", ".github/workflows/ci.yml", "src/git/config", "my.git/x", "husky.md"):
        assert (
            await nobody.check("write", {"path": path, "content": "x"}, cwd)
        ).decision == "accept-edits", path


async def test_a_project_inside_a_folder_named_git_still_works(tmp_path: Path) -> None:
    project_dir = tmp_path / ".git" / "work"
    project_dir.mkdir(parents=True)
    nobody = Permissions(PermissionMode.ACCEPT_EDITS, None)
    verdict = await nobody.check("write", {"path": "a.py", "content": "x"}, str(project_dir))
    assert verdict.decision == "accept-edits"


# -- in the agent loop -----------------------------------------------------------------------------


def permission_entries(anthropic_harness: Harness) -> list[dict[str, Any]]:
    return [
        e["data"]
        for e in anthropic_harness.entries()
        if e["type"] == "custom" and e.get("customType") == RECORD_TYPE
    ]


async def test_ask_mode_in_the_loop(
    anthropic_harness: Harness, server: FakeModelServer, tmp_path: Path
) -> None:
    outside = tmp_path / "outside"
    outside.mkdir()
    (anthropic_harness.workdir / "out").symlink_to(outside)
    answers = Answers(Decision.ALLOW_SESSION, Decision.DENY, Decision.ALLOW_ONCE)
    anthropic_harness.loop.permissions = Permissions(PermissionMode.ASK, answers)
    server.push(
        anthropic_stream(
            tool_use("toolu_1", "bash", {"command": "echo one > made.txt"}),
            tool_use("toolu_2", "write", {"path": "out/evil.txt", "content": "x"}),
            tool_use("toolu_3", "write", {"path": "inside.txt", "content": "fine"}),
        ),
        anthropic_stream(tool_use("toolu_4", "bash", {"command": "echo one > made.txt"})),
        anthropic_stream(text("Done.")),
    )
    events = await anthropic_harness.run("go")
    assert events[-1] == TurnDone("stop")
    # the write inside is asked too (ask mode, as Claude Code's default); the second bash is remembered
    assert [r.tool for r in answers.asked] == ["bash", "write", "write"]
    assert (anthropic_harness.workdir / "made.txt").read_text() == "one\n" and (
        anthropic_harness.workdir / "inside.txt"
    ).exists()
    assert not (outside / "evil.txt").exists()
    errors = {e.call_id: e.is_error for e in events if isinstance(e, ToolFinished)}
    assert errors == {"toolu_1": False, "toolu_2": True, "toolu_3": False, "toolu_4": False}
    recorded = permission_entries(anthropic_harness)
    assert [(d["tool"], d["decision"], d.get("remembered", False)) for d in recorded] == [
        ("bash", "allow-session", False),
        ("write", "deny", False),
        ("write", "allow-once", False),
        ("bash", "allow-session", True),
    ]
    assert recorded[1]["scope"] == f"file:{(outside / 'evil.txt').resolve()}"
    assert all(d["mode"] == "ask" for d in recorded)
    # The model read the refusal; the permission entries never reach it.
    results = server.requests[1].body["messages"][-1]["content"]
    refused = next(b for b in results if b["tool_use_id"] == "toolu_2")
    assert refused["is_error"] and "did not allow" in refused["content"][0]["text"]
    assert all(
        m.source_id not in {e["id"] for e in anthropic_harness.entries() if e["type"] == "custom"}
        for m in project(anthropic_harness.session.index).messages
    )
    anthropic_harness.assert_requests_match_context()


async def test_read_only_mode_refuses_with_a_tool_error(
    anthropic_harness: Harness, server: FakeModelServer
) -> None:
    anthropic_harness.loop.permissions = Permissions(PermissionMode.READ_ONLY)
    (anthropic_harness.workdir / "a.txt").write_text("keep\n")
    server.push(
        anthropic_stream(
            tool_use("toolu_1", "edit", {"path": "a.txt", "edits": [{"oldText": "keep", "newText": "lost"}]}),
            tool_use("toolu_2", "read", {"path": "a.txt"}),
        ),
        anthropic_stream(text("I cannot edit.")),
    )
    events = await anthropic_harness.run("change a.txt")
    assert events[-1] == TurnDone("stop") and (anthropic_harness.workdir / "a.txt").read_text() == "keep\n"
    results = server.requests[1].body["messages"][-1]["content"]
    assert results[0]["is_error"] and "read-only mode" in results[0]["content"][0]["text"]
    assert not results[1].get("is_error") and results[1]["content"][0]["text"] == "keep\n"
    assert [d["decision"] for d in permission_entries(anthropic_harness)] == ["read-only-refused"]
    anthropic_harness.assert_requests_match_context()


async def test_abort_while_asking(anthropic_harness: Harness, server: FakeModelServer) -> None:
    asked = asyncio.Event()

    async def never(request: PermissionRequest) -> Decision:
        asked.set()
        await asyncio.Event().wait()
        raise AssertionError("unreachable")

    anthropic_harness.loop.permissions = Permissions(PermissionMode.ASK, never)
    server.push(anthropic_stream(tool_use("toolu_1", "bash", {"command": "touch never.txt"})))
    run = asyncio.ensure_future(anthropic_harness.run("go"))
    await asked.wait()
    anthropic_harness.loop.abort()
    events = await run
    assert events[-1] == TurnDone("aborted") and not (anthropic_harness.workdir / "never.txt").exists()
    assert permission_entries(anthropic_harness) == []
    assert anthropic_harness.messages("toolResult")[0]["isError"] is True
    anthropic_harness.assert_requests_match_context()


# -- print mode --------------------------------------------------------------------------------------


def _env(tmp_path: Path, server: FakeModelServer, **extra: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("ANTHROPIC_", "OPENAI_", "AGENT_TUI_"))}
    config = tmp_path / "config.toml"
    if not config.exists():
        config.write_text("[retry]\nbase_delay = 0.01\n")
    env.update(
        AGENT_TUI_HOME=str(tmp_path / "home"),
        AGENT_TUI_CONFIG=str(config),
        ANTHROPIC_API_KEY="test-key-0123456789",
        ANTHROPIC_BASE_URL=server.anthropic_base_url,
        **extra,
    )
    return env


def _recorded(tmp_path: Path) -> list[dict[str, Any]]:
    (session,) = (tmp_path / "home").glob("sessions/*/*.jsonl")
    lines = [json.loads(line) for line in session.read_text().splitlines()[1:]]
    return [e["data"] for e in lines if e.get("customType") == RECORD_TYPE]


def test_print_mode_asks_on_the_terminal(server: FakeModelServer, tmp_path: Path) -> None:
    work = tmp_path / "work"
    work.mkdir()
    server.push(
        anthropic_stream(tool_use("toolu_1", "bash", {"command": "echo hi > a.txt"})),
        anthropic_stream(tool_use("toolu_2", "bash", {"command": "echo hi > a.txt"})),
        anthropic_stream(tool_use("toolu_3", "write", {"path": "../escape.txt", "content": "x"})),
        anthropic_stream(text("Done.")),
    )
    master, slave = pty.openpty()
    proc = subprocess.Popen(
        [sys.executable, "-m", "agent_tui", "-p", "go", "--permissions", "ask"],
        cwd=work,
        env=_env(tmp_path, server),
        stdin=slave,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
    )
    os.close(slave)
    assert proc.stderr is not None
    stderr = proc.stderr
    seen = b""

    def wait_for(needle: bytes) -> None:
        nonlocal seen
        deadline = time.monotonic() + 30
        while needle not in seen:
            assert time.monotonic() < deadline and proc.poll() is None, seen
            ready, _, _ = select.select([stderr], [], [], 1.0)
            if ready:
                seen += os.read(stderr.fileno(), 4096)

    try:
        wait_for(
            b"allow bash echo hi > a.txt (runs a shell command)? [1] yes, [2] for this session, [3] no: "
        )
        os.write(master, b"2\n")  # (a bare "a" no longer answers: tests/unit/test_permission_modes.py)
        wait_for(b"allow write ../escape.txt")  # the repeated command was not asked about
        os.write(master, b"n\n")
        out, err = proc.communicate(timeout=30)
    finally:
        os.close(master)
        if proc.poll() is None:
            proc.kill()
    assert proc.returncode == 0, seen + err
    assert out == b"Done.\n" and (work / "a.txt").read_text() == "hi\n"
    assert not (tmp_path / "escape.txt").exists()
    assert [(d["tool"], d["decision"]) for d in _recorded(tmp_path)] == [
        ("bash", "allow-session"),
        ("bash", "allow-session"),
        ("write", "deny"),
    ]


def test_print_mode_without_a_terminal_refuses_clearly(server: FakeModelServer, tmp_path: Path) -> None:
    work = tmp_path / "work"
    work.mkdir()
    server.push(
        anthropic_stream(tool_use("toolu_1", "bash", {"command": "touch x"})),
        anthropic_stream(text("Could not.")),
    )
    result = subprocess.run(
        [sys.executable, "-m", "agent_tui", "-p", "go"],
        cwd=work,
        env=_env(tmp_path, server, AGENT_TUI_PERMISSIONS="ask"),
        stdin=subprocess.DEVNULL,
        capture_output=True,
        text=True,
        timeout=30,
    )
    assert result.returncode == 0 and result.stdout == "Could not.\n"
    assert result.stderr.splitlines()[0] == (
        "agent-tui: --permissions ask: stdin is not a terminal, so commands, file edits and web "
        "fetches that would ask are refused (a permission rule may allow them)"
    )
    assert not (work / "x").exists()
    refusal = server.requests[1].body["messages"][-1]["content"][0]
    assert refusal["is_error"] and "stdin is not a terminal" in refusal["content"][0]["text"]
    assert [d["decision"] for d in _recorded(tmp_path)] == ["deny"]


@pytest.mark.slow  # another process
def test_the_write_check_uses_the_process_cwd_not_the_session_header(
    server: FakeModelServer, tmp_path: Path
) -> None:
    """A session whose header says it was started in a parent folder (as "/" or $HOME would) must not
    widen "inside": tools run in, and writes are checked against, the folder agent-tui started in."""
    work = tmp_path / "work"
    work.mkdir()
    with Session.create(tmp_path / "handed", tmp_path) as s:
        handed = s.path
    server.push(
        anthropic_stream(
            tool_use("toolu_1", "write", {"path": str(tmp_path / "escape.txt"), "content": "x"}),
            tool_use("toolu_2", "write", {"path": "here.txt", "content": "y"}),
        ),
        anthropic_stream(text("Done.")),
    )
    result = subprocess.run(
        [
            sys.executable,
            "-m",
            "agent_tui",
            "-p",
            "go",
            "--session",
            str(handed),
            "--permissions",
            "accept-edits",
        ],
        cwd=work,
        env=_env(tmp_path, server),
        stdin=subprocess.DEVNULL,
        capture_output=True,
        text=True,
        timeout=30,
    )
    assert result.returncode == 0, result.stderr
    assert not (tmp_path / "escape.txt").exists()
    assert (work / "here.txt").read_text() == "y"  # relative paths: the process cwd too
    notices = [line for line in result.stderr.splitlines() if "this session was started in" in line]
    assert notices == [
        f"agent-tui: this session was started in {tmp_path}; tools run in {work} (where agent-tui was "
        "started), and writes outside it ask first"
    ]
    system = server.requests[0].body["system"]
    assert str(work) in json.dumps(system)  # the model is told where it really is


async def test_a_header_cwd_of_root_does_not_disable_the_check(
    server: FakeModelServer, tmp_path: Path
) -> None:
    work = tmp_path / "work"
    work.mkdir()
    session = Session.create(tmp_path / "sessions", "/")
    config = make_config(server)
    loop = AgentLoop(session, make_provider(config), default_tools(), config=config, cwd=str(work))
    loop.permissions = Permissions(PermissionMode.ASK, None)
    target = tmp_path / "outside.txt"
    server.push(
        anthropic_stream(tool_use("toolu_1", "write", {"path": str(target), "content": "x"})),
        anthropic_stream(text("No.")),
    )
    events = [e async for e in loop.run("go")]
    await loop.provider.aclose()
    session.close()
    assert events[-1] == TurnDone("stop") and not target.exists()
    assert cwd_notice("/", str(work)) is not None and cwd_notice(str(work), str(work)) is None
    assert cwd_notice("/x\x1b]0;evil\x07\u202e", str(work)) == (
        f"this session was started in /x\\u001b]0;evil\\u0007\\u202e; tools run in {work} (where agent-tui "
        "was started), and writes outside it ask first"
    )


def test_print_mode_modes_from_config_file_and_default_auto(server: FakeModelServer, tmp_path: Path) -> None:
    work = tmp_path / "work"
    work.mkdir()
    (tmp_path / "config.toml").write_text('permissions = "read-only"\n[retry]\nbase_delay = 0.01\n')
    server.push(
        anthropic_stream(tool_use("toolu_1", "write", {"path": "a.txt", "content": "x"})),
        anthropic_stream(text("Refused.")),
        anthropic_stream(tool_use("toolu_2", "write", {"path": "a.txt", "content": "x"})),
        anthropic_stream(text("Written.")),
    )
    args = [sys.executable, "-m", "agent_tui", "-p", "go", "-c"]
    first = subprocess.run(
        args, cwd=work, env=_env(tmp_path, server), capture_output=True, text=True, timeout=30
    )
    assert first.returncode == 0 and not (work / "a.txt").exists()
    second = subprocess.run(
        [*args, "--permissions", "auto"],
        cwd=work,
        env=_env(tmp_path, server),
        capture_output=True,
        text=True,
        timeout=30,
    )
    assert second.returncode == 0 and (work / "a.txt").read_text() == "x"
    assert [d["decision"] for d in _recorded(tmp_path)] == ["read-only-refused"]  # inside the cwd: no entry
    bad = subprocess.run(
        [*args, "--permissions", "maybe"],
        cwd=work,
        env=_env(tmp_path, server),
        capture_output=True,
        text=True,
        timeout=30,
    )
    assert bad.returncode == 2 and "invalid choice" in bad.stderr


async def test_the_app_says_when_a_session_was_started_elsewhere(tmp_path: Path) -> None:
    from tests.support.tui_fixtures import make_app

    with Session.create(tmp_path / "handed", "/") as s:
        s.append({"type": "message", "message": {"role": "user", "content": "hi", "timestamp": 1}})
    app = make_app(tmp_path, s.path)
    async with app.run_test() as pilot:
        await pilot.pause()
        notes = [str(n.message) for n in app._notifications]
    assert [n for n in notes if "started in" in n] == [
        f"this session was started in /; tools run in {tmp_path / 'project'} (where agent-tui was "
        "started), and writes outside it ask first"
    ]
