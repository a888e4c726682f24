"""PreToolUse's ``permissionDecision: "defer"`` as Claude Code documents it: in print mode a lone
call is handed back (not run, no result, the turn ends) and run when the session is continued
without a prompt, its hooks asked again; in the app, and for a reply with several calls, the
deferral is ignored with a warning and the call goes through the permission check. Precedence:
deny over defer over ask over allow."""

from __future__ import annotations

import json
import shlex
import sys
from pathlib import Path
from typing import Any

import pytest

from agent_tui.agent.deferred_calls import CUSTOM_TYPE
from agent_tui.agent.events import AgentEvent, Notice, TurnDone
from agent_tui.agent.extensions import Extensions
from agent_tui.agent.hooks import HookCommand, Hooks
from agent_tui.agent.trust import TrustStore
from tests.support.agent_support import Harness
from tests.support.fake_model_server import FakeModelServer, anthropic_stream, text, tool_use
from tests.support.print_env import Env

pytestmark = [pytest.mark.slow, pytest.mark.timeout(60)]  # each hook is a shell process


def reply(value: str, **extra: Any) -> str:
    """Claude Code's PreToolUse JSON with ``permissionDecision: value``."""
    return json.dumps(
        {"hookSpecificOutput": {"hookEventName": "PreToolUse", "permissionDecision": value, **extra}}
    )


def answering_hook(tmp: Path) -> tuple[str, Path, Path]:
    """A PreToolUse hook that logs each event and prints what ``answer`` holds (the test changes
    it between runs). Returns (command, the answer file, the log)."""
    answer, log, script = tmp / "answer.json", tmp / "pretool.jsonl", tmp / "pretool.py"
    script.write_text(
        "import json, sys\nevent = json.load(sys.stdin)\n"
        f"open({str(log)!r}, 'a').write(json.dumps(event) + '\\n')\n"
        f"print(open({str(answer)!r}).read())\n"
    )
    return f"{shlex.quote(sys.executable)} {shlex.quote(str(script))}", answer, log


def use(anthropic_harness: Harness, command: str) -> None:
    hooks = {"PreToolUse": [{"matcher": "", "hooks": [{"type": "command", "command": command}]}]}
    anthropic_harness.loop.extensions = Extensions(
        str(anthropic_harness.workdir),
        {"hooks": hooks},
        home=anthropic_harness.tmp / "home",
        trust_store=TrustStore(anthropic_harness.tmp / "trust.json"),
    )


def notices(events: list[AgentEvent]) -> list[str]:
    return [e.text for e in events if isinstance(e, Notice)]


def logged(log: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in log.read_text().splitlines()]


async def test_print_mode_hands_a_deferred_call_back_and_runs_it_when_continued(
    anthropic_harness: Harness, server: FakeModelServer
) -> None:
    command, answer, log = answering_hook(anthropic_harness.tmp)
    use(anthropic_harness, command)
    anthropic_harness.loop.defer_tool_calls = True  # what print mode sets
    answer.write_text(reply("defer", permissionDecisionReason="ask the reviewer"))
    server.push(anthropic_stream(tool_use("toolu_d", "bash", {"command": "echo first"})))
    events = await anthropic_harness.run("deploy it")
    assert [e.stop_reason for e in events if isinstance(e, TurnDone)] == ["stop"]
    assert anthropic_harness.messages("toolResult") == []  # not run, no result written
    marker = anthropic_harness.entries()[-1]
    assert (marker["type"], marker["customType"]) == ("custom", CUSTOM_TYPE)
    assert marker["data"] == {
        "toolCallId": "toolu_d",
        "toolName": "bash",
        "arguments": {"command": "echo first"},
    }
    assert any("deferred bash (call toolu_d): it was not run" in n for n in notices(events))
    assert len(server.requests) == 1

    answer.write_text(reply("allow", updatedInput={"command": "echo second"}))
    server.push(anthropic_stream(text("deployed")))
    events = await anthropic_harness.run(None)  # continued without a prompt
    assert [e.stop_reason for e in events if isinstance(e, TurnDone)] == ["stop"]
    (result,) = anthropic_harness.messages("toolResult")
    assert result["toolCallId"] == "toolu_d" and not result["isError"]
    assert "second" in result["content"][0]["text"]  # the hook's updatedInput ran
    assert [e["tool_use_id"] for e in logged(log)] == ["toolu_d", "toolu_d"]  # its hooks asked again
    sent = server.requests[1].body["messages"]
    assert (
        sent[-1]["content"][0]["type"] == "tool_result" and sent[-1]["content"][0]["tool_use_id"] == "toolu_d"
    )
    assert anthropic_harness.messages("assistant")[-1]["content"][0]["text"] == "deployed"


async def test_a_call_deferred_again_stays_handed_back(
    anthropic_harness: Harness, server: FakeModelServer
) -> None:
    command, answer, _ = answering_hook(anthropic_harness.tmp)
    use(anthropic_harness, command)
    anthropic_harness.loop.defer_tool_calls = True
    answer.write_text(reply("defer"))
    server.push(anthropic_stream(tool_use("toolu_d", "bash", {"command": "echo hi"})))
    await anthropic_harness.run("deploy it")
    events = await anthropic_harness.run(None)
    assert [e.stop_reason for e in events if isinstance(e, TurnDone)] == ["stop"]
    assert anthropic_harness.messages("toolResult") == [] and len(server.requests) == 1
    assert [e["customType"] for e in anthropic_harness.entries() if e["type"] == "custom"][-2:] == [
        CUSTOM_TYPE,
        CUSTOM_TYPE,
    ]


async def test_in_the_app_a_deferral_is_ignored_with_a_warning(
    anthropic_harness: Harness, server: FakeModelServer
) -> None:
    command, answer, _ = answering_hook(anthropic_harness.tmp)
    use(anthropic_harness, command)
    answer.write_text(reply("defer"))
    server.push(
        anthropic_stream(tool_use("toolu_d", "bash", {"command": "echo ran"})), anthropic_stream(text("ok"))
    )
    events = await anthropic_harness.run("run it")
    assert any(
        "deferred bash: ignored (only print mode (-p) hands a tool call back)" in n for n in notices(events)
    )
    (result,) = anthropic_harness.messages("toolResult")
    assert "ran" in result["content"][0]["text"]
    assert not any(e.get("customType") == CUSTOM_TYPE for e in anthropic_harness.entries())


async def test_a_deferral_among_several_calls_is_ignored_with_a_warning(
    anthropic_harness: Harness, server: FakeModelServer
) -> None:
    command, answer, _ = answering_hook(anthropic_harness.tmp)
    use(anthropic_harness, command)
    anthropic_harness.loop.defer_tool_calls = True
    answer.write_text(reply("defer"))
    server.push(
        anthropic_stream(
            tool_use("toolu_a", "bash", {"command": "echo one"}),
            tool_use("toolu_b", "bash", {"command": "echo two"}),
        ),
        anthropic_stream(text("ok")),
    )
    events = await anthropic_harness.run("run both")
    assert sum("several tool calls; only a lone call can be deferred" in n for n in notices(events)) == 2
    assert [r["toolCallId"] for r in anthropic_harness.messages("toolResult")] == ["toolu_a", "toolu_b"]
    assert not any(e.get("customType") == CUSTOM_TYPE for e in anthropic_harness.entries())


async def test_deny_wins_over_defer_and_defer_over_ask_and_allow(tmp_path: Path) -> None:
    def hooks(*replies: str) -> Hooks:
        commands = [f"echo {shlex.quote(r)}" for r in replies]
        return Hooks(
            [HookCommand("PreToolUse", "", c, 5, "config.toml", trusted=True) for c in commands],
            str(tmp_path),
        )

    outcome = await hooks(reply("defer"), reply("deny", permissionDecisionReason="no")).run(
        "PreToolUse", {}, "bash"
    )
    assert outcome.blocked and outcome.reason == "no"
    outcome = await hooks(reply("allow"), reply("defer"), reply("ask", permissionDecisionReason="look")).run(
        "PreToolUse", {}, "bash"
    )
    assert not outcome.blocked and outcome.decision == "defer"
    outcome = await hooks(reply("ask", permissionDecisionReason="look"), reply("defer")).run(
        "PreToolUse", {}, "bash"
    )
    assert outcome.decision == "defer"
    outcome = await hooks(reply("defer", updatedInput={"command": "x"})).run("PreToolUse", {}, "bash")
    assert outcome.updated_input is None  # a deferral's updatedInput is ignored


def test_agent_tui_p_continues_a_deferred_call_without_a_prompt(
    server: FakeModelServer, tmp_path: Path
) -> None:
    env = Env(tmp_path, server)
    command, answer, log = answering_hook(tmp_path)
    settings = env.user_home / ".claude"
    settings.mkdir()
    hooks = {"PreToolUse": [{"matcher": "Bash", "hooks": [{"type": "command", "command": command}]}]}
    (settings / "settings.json").write_text(json.dumps({"hooks": hooks}))
    answer.write_text(reply("defer"))
    server.push(anthropic_stream(tool_use("toolu_d", "bash", {"command": "echo from-the-call"})))
    first = env.run("-p", "deploy it")
    assert first.returncode == 0, first.stderr
    assert "a PreToolUse hook deferred bash (call toolu_d): it was not run" in first.stderr
    (path,) = env.sessions()
    assert [e for e in env.entries(path) if e.get("type") == "message"][-1]["message"]["role"] == "assistant"

    answer.write_text(reply("allow"))
    server.push(anthropic_stream(text("deployed")))
    second = env.run("-p", "", "--continue")
    assert second.returncode == 0, second.stderr
    assert "deployed" in second.stdout
    results = [
        e["message"]
        for e in env.entries(path)
        if e.get("type") == "message" and e["message"]["role"] == "toolResult"
    ]
    assert [r["toolCallId"] for r in results] == ["toolu_d"] and "from-the-call" in results[0]["content"][0][
        "text"
    ]
    assert len(logged(log)) == 2

    again = env.run("-p", "", "--continue")  # nothing deferred any more: an empty prompt is refused
    assert again.returncode == 1 and "empty prompt" in again.stderr
    assert len(server.requests) == 2


def test_json_mode_says_a_deferral_on_stderr_and_keeps_stdout_protocol(
    server: FakeModelServer, tmp_path: Path
) -> None:
    env = Env(tmp_path, server)
    command, answer, _ = answering_hook(tmp_path)
    (env.user_home / ".claude").mkdir()
    hooks = {"PreToolUse": [{"matcher": "", "hooks": [{"type": "command", "command": command}]}]}
    (env.user_home / ".claude" / "settings.json").write_text(json.dumps({"hooks": hooks}))
    answer.write_text(reply("defer"))
    server.push(anthropic_stream(tool_use("toolu_d", "bash", {"command": "echo hi"})))
    result = env.run("-p", "deploy it", "--mode", "json")
    assert result.returncode == 0, result.stderr
    assert "agent-tui: a PreToolUse hook deferred bash (call toolu_d): it was not run" in result.stderr
    records = [json.loads(line) for line in result.stdout.splitlines()]  # every line is a record
    assert not any(r.get("type") == "tool_execution_end" for r in records)
    (path,) = env.sessions()
    assert env.entries(path)[-1]["customType"] == CUSTOM_TYPE
