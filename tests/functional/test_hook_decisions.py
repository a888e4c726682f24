"""PreToolUse's permission decisions as Claude Code documents them: ``deny`` blocks with the reason
for the model, ``ask`` puts our question even where nothing would ask, ``allow`` skips it only for
a hook the user trusts and never for what no hook may approve."""

from __future__ import annotations

import json
import shlex
from pathlib import Path
from typing import Any

import pytest

from agent_tui.agent.extensions import Extensions
from agent_tui.agent.hooks import HookCommand, Hooks
from agent_tui.agent.permissions import Decision, PermissionMode, PermissionRequest, Permissions
from agent_tui.agent.trust import TrustStore
from tests.support.agent_support import Harness
from tests.support.fake_model_server import FakeModelServer, anthropic_stream, text, tool_use

pytestmark = pytest.mark.slow  # each hook is a shell process


def decision(value: str, reason: str = "") -> str:
    """A hook command that prints Claude Code's PreToolUse JSON with ``permissionDecision: value``."""
    reply: dict[str, Any] = {"hookEventName": "PreToolUse", "permissionDecision": value}
    if reason:
        reply["permissionDecisionReason"] = reason
    return f"echo {shlex.quote(json.dumps({'hookSpecificOutput': reply}))}"


def hooks_table(command: str, matcher: str = "") -> dict[str, Any]:
    return {"PreToolUse": [{"matcher": matcher, "hooks": [{"type": "command", "command": command}]}]}


class Approver:
    """Answers every question with ``answer`` and keeps the requests."""

    def __init__(self, answer: Decision = Decision.DENY) -> None:
        self.answer = answer
        self.asked: list[PermissionRequest] = []

    async def __call__(self, request: PermissionRequest) -> Decision:
        self.asked.append(request)
        return self.answer


def setup(
    anthropic_harness: Harness,
    hooks: dict[str, Any] | None,
    mode: PermissionMode = PermissionMode.ASK,
    approver: Approver | None = None,
    **kw: Any,
) -> Extensions:
    ext = Extensions(
        str(anthropic_harness.workdir),
        {"hooks": hooks} if hooks is not None else {},
        home=anthropic_harness.tmp / "home",
        trust_store=TrustStore(anthropic_harness.tmp / "trust.json"),
        **kw,
    )
    anthropic_harness.loop.extensions = ext
    anthropic_harness.loop.permissions = Permissions(mode, approver)
    return ext


def records(anthropic_harness: Harness) -> list[dict[str, Any]]:
    return [e["data"] for e in anthropic_harness.entries() if e.get("customType") == "agent-tui.permission"]


async def test_ask_puts_the_question_for_a_write_that_would_not_ask(
    anthropic_harness: Harness, server: FakeModelServer
) -> None:
    approver = Approver(Decision.DENY)
    setup(
        anthropic_harness,
        hooks_table(decision("ask", "check the changelog first"), "Write"),
        approver=approver,
    )
    server.push(
        anthropic_stream(tool_use("toolu_w", "write", {"path": "notes.txt", "content": "hi"})),
        anthropic_stream(text("ok")),
    )
    await anthropic_harness.run("write it")
    assert [r.tool for r in approver.asked] == ["write"]  # inside the folder: asked only for the hook
    assert "a PreToolUse hook asks: check the changelog first" in approver.asked[0].reason
    assert not (anthropic_harness.workdir / "notes.txt").exists()
    result = anthropic_harness.messages("toolResult")[0]
    assert result["isError"] and "did not allow" in result["content"][0]["text"]
    assert (
        records(anthropic_harness)[0]["decision"] == "deny" and records(anthropic_harness)[0]["hook"] == "ask"
    )


async def test_ask_with_yes_writes_and_with_no_one_to_answer_refuses(
    anthropic_harness: Harness, server: FakeModelServer
) -> None:
    approver = Approver(Decision.ALLOW_ONCE)
    setup(anthropic_harness, hooks_table(decision("ask"), "Write"), approver=approver)
    server.push(
        anthropic_stream(tool_use("toolu_w", "write", {"path": "a.txt", "content": "a"})),
        anthropic_stream(text("ok")),
    )
    await anthropic_harness.run("write a")
    assert (anthropic_harness.workdir / "a.txt").read_text() == "a" and len(approver.asked) == 1

    # auto mode runs everything, but a hook's ask still wants a person: none here, so it is refused
    (
        anthropic_harness.tmp / "trust.json"
    ).unlink()  # (another hook: a first run's, else it waits to be accepted)
    setup(anthropic_harness, hooks_table(decision("ask"), "Bash"), mode=PermissionMode.AUTO, approver=None)
    server.push(
        anthropic_stream(tool_use("toolu_b", "bash", {"command": "touch ran.txt"})),
        anthropic_stream(text("ok")),
    )
    await anthropic_harness.run("run it")
    assert not (anthropic_harness.workdir / "ran.txt").exists()
    result = anthropic_harness.messages("toolResult")[-1]
    assert result["isError"] and "needs the user's confirmation" in result["content"][0]["text"]


async def test_a_trusted_hooks_allow_skips_the_question_except_where_no_hook_may(
    anthropic_harness: Harness, server: FakeModelServer
) -> None:
    approver = Approver(Decision.DENY)
    setup(anthropic_harness, hooks_table(decision("allow", "tests are fine"), "Bash"), approver=approver)
    server.push(
        anthropic_stream(tool_use("toolu_b", "bash", {"command": "echo allowed > out.txt"})),
        anthropic_stream(text("ok")),
    )
    await anthropic_harness.run("run it")
    assert approver.asked == []
    assert (anthropic_harness.workdir / "out.txt").read_text().strip() == "allowed"
    assert records(anthropic_harness) == [
        {
            "tool": "bash",
            "summary": "echo allowed > out.txt",
            "decision": "hook-allow",
            "scope": "bash:echo allowed > out.txt",
            "mode": "ask",
            "toolCallId": "toolu_b",
            "hook": "allow",
        }
    ]

    # but no hook approves a write to git's own files, nor lifts read-only mode
    (anthropic_harness.workdir / ".git" / "hooks").mkdir(parents=True)
    setup(anthropic_harness, hooks_table(decision("allow")), approver=approver)
    server.push(
        anthropic_stream(tool_use("toolu_g", "write", {"path": ".git/hooks/pre-commit", "content": "x"})),
        anthropic_stream(text("ok")),
    )
    await anthropic_harness.run("write a git hook")
    assert [r.tool for r in approver.asked] == ["write"]
    assert not (anthropic_harness.workdir / ".git" / "hooks" / "pre-commit").exists()

    setup(anthropic_harness, hooks_table(decision("allow")), mode=PermissionMode.READ_ONLY, approver=approver)
    server.push(
        anthropic_stream(tool_use("toolu_b", "bash", {"command": "touch ran.txt"})),
        anthropic_stream(text("ok")),
    )
    await anthropic_harness.run("run it")
    assert not (anthropic_harness.workdir / "ran.txt").exists()
    assert "read-only mode" in anthropic_harness.messages("toolResult")[-1]["content"][0]["text"]


async def test_an_untrusted_folders_allow_widens_nothing(
    anthropic_harness: Harness, server: FakeModelServer
) -> None:
    """A repository's own .claude/settings.json saying allow: not loaded in an untrusted folder, so
    the question stays; and a hook of an untrusted source that did run has its allow ignored."""
    (anthropic_harness.workdir / ".claude").mkdir()
    (anthropic_harness.workdir / ".claude" / "settings.json").write_text(
        json.dumps({"hooks": hooks_table(decision("allow"))})
    )
    approver = Approver(Decision.DENY)
    setup(anthropic_harness, None, approver=approver)
    server.push(
        anthropic_stream(tool_use("toolu_b", "bash", {"command": "touch ran.txt"})),
        anthropic_stream(text("ok")),
    )
    await anthropic_harness.run("run it")
    assert [r.tool for r in approver.asked] == ["bash"] and not (
        anthropic_harness.workdir / "ran.txt"
    ).exists()

    hooks = Hooks(
        [HookCommand("PreToolUse", "", decision("allow"), 5, "a repository", trusted=False)],
        str(anthropic_harness.workdir),
    )
    outcome = await hooks.run("PreToolUse", {"tool_name": "Bash"}, "bash")
    assert outcome.decision is None
    assert outcome.notices == [
        f"PreToolUse hook `{decision('allow')[:57]}...` from a repository said allow: ignored (not a source you trust)"
    ]


async def test_deny_wins_over_ask_and_allow_and_ask_over_allow(tmp_path: Path) -> None:
    def hooks(*commands: str) -> Hooks:
        return Hooks(
            [HookCommand("PreToolUse", "", c, 5, "config.toml", trusted=True) for c in commands],
            str(tmp_path),
        )

    outcome = await hooks(decision("allow"), decision("deny", "no"), decision("ask")).run(
        "PreToolUse", {}, "bash"
    )
    assert outcome.blocked and outcome.reason == "no"
    outcome = await hooks(decision("allow", "fine"), decision("ask", "look first")).run(
        "PreToolUse", {}, "bash"
    )
    assert not outcome.blocked and (outcome.decision, outcome.decision_reason) == ("ask", "look first")
