"""PreToolUse's ``additionalContext`` reaches the model with the call's result, as Claude Code adds
it "alongside the tool result": after the output of a call that ran, after the refusal of one a
hook or the permission policy refused; not for a call a hook deferred."""

from __future__ import annotations

import json
import shlex
from typing import Any

import pytest

from agent_tui.agent.extensions import Extensions
from agent_tui.agent.permissions import PermissionMode, Permissions
from agent_tui.agent.trust import TrustStore
from tests.support.agent_support import Harness
from tests.support.fake_model_server import FakeModelServer, anthropic_stream, text, tool_use

pytestmark = [pytest.mark.slow, pytest.mark.timeout(60)]  # each hook is a shell process


def use(anthropic_harness: Harness, **specific: Any) -> None:
    reply = json.dumps({"hookSpecificOutput": {"hookEventName": "PreToolUse", **specific}})
    hook = {"type": "command", "command": f"echo {shlex.quote(reply)}"}
    anthropic_harness.loop.extensions = Extensions(
        str(anthropic_harness.workdir),
        {"hooks": {"PreToolUse": [{"matcher": "", "hooks": [hook]}]}},
        home=anthropic_harness.tmp / "home",
        trust_store=TrustStore(anthropic_harness.tmp / "trust.json"),
    )


def sent_results(server: FakeModelServer) -> list[str]:
    """The text of every tool_result block the last request sent."""
    blocks = [
        b
        for m in server.requests[-1].body["messages"]
        if isinstance(m["content"], list)
        for b in m["content"]
    ]
    return [
        "\n".join(part["text"] for part in b["content"] if part.get("type") == "text")
        for b in blocks
        if b.get("type") == "tool_result"
    ]


async def test_the_context_follows_the_output_of_a_call_that_ran(
    anthropic_harness: Harness, server: FakeModelServer
) -> None:
    use(anthropic_harness, additionalContext="the build is frozen until Friday")
    server.push(
        anthropic_stream(tool_use("toolu_1", "bash", {"command": "echo ran"})), anthropic_stream(text("ok"))
    )
    await anthropic_harness.run("run it")
    (result,) = anthropic_harness.messages("toolResult")
    texts = [b["text"] for b in result["content"] if b["type"] == "text"]
    assert "ran" in texts[0] and texts[-1] == "the build is frozen until Friday"
    (sent,) = sent_results(server)
    assert "the build is frozen until Friday" in sent


async def test_the_context_follows_a_refusal(anthropic_harness: Harness, server: FakeModelServer) -> None:
    use(
        anthropic_harness,
        permissionDecision="deny",
        permissionDecisionReason="not now",
        additionalContext="ask Dana",
    )
    server.push(
        anthropic_stream(tool_use("toolu_1", "bash", {"command": "echo ran"})), anthropic_stream(text("ok"))
    )
    await anthropic_harness.run("run it")
    (result,) = anthropic_harness.messages("toolResult")
    assert result["isError"]
    assert [b["text"] for b in result["content"]] == ["Blocked by a PreToolUse hook: not now", "ask Dana"]


async def test_the_context_follows_the_permission_policys_refusal(
    anthropic_harness: Harness, server: FakeModelServer
) -> None:
    use(anthropic_harness, additionalContext="writes are reviewed")
    anthropic_harness.loop.permissions = Permissions(PermissionMode.READ_ONLY)
    server.push(
        anthropic_stream(tool_use("toolu_1", "write", {"path": "a.txt", "content": "x"})),
        anthropic_stream(text("ok")),
    )
    await anthropic_harness.run("write it")
    (result,) = anthropic_harness.messages("toolResult")
    assert result["isError"] and result["content"][-1]["text"] == "writes are reviewed"
    assert not (anthropic_harness.workdir / "a.txt").exists()


async def test_a_deferred_calls_context_is_left_out(
    anthropic_harness: Harness, server: FakeModelServer
) -> None:
    use(anthropic_harness, permissionDecision="defer", additionalContext="never shown")
    server.push(
        anthropic_stream(tool_use("toolu_1", "bash", {"command": "echo ran"})), anthropic_stream(text("ok"))
    )
    await anthropic_harness.run("run it")  # the app: the deferral is ignored, the call runs
    (result,) = anthropic_harness.messages("toolResult")
    assert "never shown" not in json.dumps(result)
