"""Hooks in Claude Code's format: the event JSON on stdin, exit 2 blocks, JSON replies, timeouts."""

from __future__ import annotations

import json
import shlex
import sys
from pathlib import Path
from typing import Any

import pytest

from agent_tui.agent.events import AgentEvent, Notice, TurnDone, TurnError
from agent_tui.agent.extensions import Extensions
from agent_tui.agent.hooks import HookCommand, Hooks, parse_hooks, read_hooks
from agent_tui.agent.trust import TrustStore
from tests.support.agent_support import Harness
from tests.support.fake_model_server import FakeModelServer, anthropic_stream, text, tool_use

pytestmark = pytest.mark.slow  # each hook is a shell process


def hook(event: str, command: str, matcher: str = "", timeout: float = 10) -> dict[str, Any]:
    return {
        event: [{"matcher": matcher, "hooks": [{"type": "command", "command": command, "timeout": timeout}]}]
    }


def script(tmp: Path, name: str, body: str) -> str:
    """A Python hook script; returns the command that runs it."""
    path = tmp / f"{name}.py"
    path.write_text("import json, sys\nevent = json.load(sys.stdin)\n" + body)
    return f"{shlex.quote(sys.executable)} {shlex.quote(str(path))}"


def use(anthropic_harness: Harness, hooks: dict[str, Any], **kw: Any) -> Extensions:
    ext = Extensions(
        str(anthropic_harness.workdir),
        {"hooks": hooks},
        home=anthropic_harness.tmp / "home",
        trust_store=TrustStore(anthropic_harness.tmp / "trust.json"),
        **kw,
    )
    anthropic_harness.loop.extensions = ext
    return ext


def of(events: list[AgentEvent], kind: type) -> list[Any]:
    return [e for e in events if isinstance(e, kind)]


async def test_pre_tool_use_gets_claude_codes_fields_and_exit_2_blocks_with_stderr(
    anthropic_harness: Harness, server: FakeModelServer
) -> None:
    seen = anthropic_harness.tmp / "seen.json"
    command = script(
        anthropic_harness.tmp,
        "guard",
        f"open({str(seen)!r}, 'w').write(json.dumps(event))\n"
        "if 'rm ' in event['tool_input']['command']:\n"
        "    print('no rm here', file=sys.stderr); sys.exit(2)\n",
    )
    use(anthropic_harness, hook("PreToolUse", command, matcher="Bash"))
    (anthropic_harness.workdir / "keep.txt").write_text("x")
    server.push(
        anthropic_stream(tool_use("toolu_rm", "bash", {"command": "rm keep.txt"})),
        anthropic_stream(text("Blocked, fine.")),
    )
    events = await anthropic_harness.run("remove it")
    assert events[-1] == TurnDone("stop")
    assert (anthropic_harness.workdir / "keep.txt").exists()
    result = anthropic_harness.messages("toolResult")[0]
    assert result["isError"] and result["content"][0]["text"] == "Blocked by a PreToolUse hook: no rm here"
    event = json.loads(seen.read_text())
    assert event["hook_event_name"] == "PreToolUse" and event["tool_name"] == "Bash"
    assert event["tool_input"] == {"command": "rm keep.txt"} and event["tool_use_id"] == "toolu_rm"
    assert event["session_id"] == anthropic_harness.session.id and event["transcript_path"] == str(
        anthropic_harness.session.path
    )
    assert event["cwd"] == str(anthropic_harness.workdir)


async def test_pre_tool_use_json_deny_and_matcher_misses(
    anthropic_harness: Harness, server: FakeModelServer
) -> None:
    deny = json.dumps(
        {
            "hookSpecificOutput": {
                "hookEventName": "PreToolUse",
                "permissionDecision": "deny",
                "permissionDecisionReason": "not today",
            }
        }
    )
    use(anthropic_harness, hook("PreToolUse", f"echo {shlex.quote(deny)}", matcher="Write|Edit"))
    (anthropic_harness.workdir / "a.txt").write_text("a")
    server.push(
        anthropic_stream(
            tool_use("toolu_w", "write", {"path": "b.txt", "content": "b"}),
            tool_use("toolu_r", "read", {"path": "a.txt"}),
        ),
        anthropic_stream(text("ok")),
    )
    await anthropic_harness.run("write and read")
    write, read = anthropic_harness.messages("toolResult")
    assert write["isError"] and write["content"][0]["text"] == "Blocked by a PreToolUse hook: not today"
    assert not (anthropic_harness.workdir / "b.txt").exists()
    assert not read["isError"] and read["content"][0]["text"] == "a"


async def test_user_prompt_submit_blocks_or_adds_context(
    anthropic_harness: Harness, server: FakeModelServer
) -> None:
    command = script(
        anthropic_harness.tmp,
        "prompt",
        "if 'password' in event['prompt']:\n"
        "    print('prompts must not hold passwords', file=sys.stderr); sys.exit(2)\n"
        "print('The user prefers British spelling.')\n",
    )
    use(anthropic_harness, hook("UserPromptSubmit", command))
    events = await anthropic_harness.run("my password is hunter2")
    assert server.requests == []  # never sent
    assert of(events, TurnError)[0].message.endswith("prompts must not hold passwords")
    assert not anthropic_harness.messages("user")

    server.push(anthropic_stream(text("Colour it is.")))
    await anthropic_harness.run("which colour?")
    added = [e for e in anthropic_harness.entries() if e["type"] == "custom_message"]
    assert [e["content"] for e in added] == ["The user prefers British spelling."]
    sent = server.requests[0].body["messages"]
    assert "The user prefers British spelling." in json.dumps(sent[-1])


async def test_a_hook_that_hangs_is_killed_at_its_timeout_in_one_line(
    anthropic_harness: Harness, server: FakeModelServer
) -> None:
    use(anthropic_harness, hook("PreToolUse", "sleep 30", timeout=0.5))
    server.push(
        anthropic_stream(tool_use("toolu_e", "bash", {"command": "echo ran"})), anthropic_stream(text("ok"))
    )
    events = await anthropic_harness.run("go")
    notices = [n.text for n in of(events, Notice)]
    assert notices == ["PreToolUse hook `sleep 30` timed out after 0.5 s (killed)"]
    assert (
        anthropic_harness.messages("toolResult")[0]["content"][0]["text"].strip() == "ran"
    )  # a failure blocks nothing


async def test_post_tool_use_and_stop_hooks_talk_to_the_model(
    anthropic_harness: Harness, server: FakeModelServer
) -> None:
    post = json.dumps({"decision": "block", "reason": "run the tests after editing"})
    stop = script(
        anthropic_harness.tmp,
        "stop",
        "if not event['stop_hook_active']:\n    print('say goodbye first', file=sys.stderr); sys.exit(2)\n",
    )
    hooks = {**hook("PostToolUse", f"echo {shlex.quote(post)}", matcher="bash"), **hook("Stop", stop)}
    use(anthropic_harness, hooks)
    server.push(
        anthropic_stream(tool_use("toolu_b", "bash", {"command": "echo hi"})),
        anthropic_stream(text("Done.")),
        anthropic_stream(text("Goodbye.")),
    )
    events = await anthropic_harness.run("go")
    assert events[-1] == TurnDone("stop")
    result = anthropic_harness.messages("toolResult")[0]["content"]
    assert result[-1] == {"type": "text", "text": "PostToolUse hook: run the tests after editing"}
    assert len(server.requests) == 3
    assert "Stop hook: say goodbye first" in json.dumps(server.requests[2].body["messages"][-1])
    assert anthropic_harness.messages("assistant")[-1]["content"][0]["text"] == "Goodbye."


async def test_session_start_context_once_per_loop(
    anthropic_harness: Harness, server: FakeModelServer
) -> None:
    command = script(anthropic_harness.tmp, "start", "print('source=' + event['source'])\n")
    use(anthropic_harness, hook("SessionStart", command))
    server.push(anthropic_stream(text("one")), anthropic_stream(text("two")))
    await anthropic_harness.run("first")
    await anthropic_harness.run("second")
    added = [e["content"] for e in anthropic_harness.entries() if e["type"] == "custom_message"]
    assert added == ["source=startup"]


def test_parse_toml_and_claude_code_settings(tmp_path: Path) -> None:
    import tomllib

    data = tomllib.loads(
        """
[[hooks.PreToolUse]]
matcher = "bash"
[[hooks.PreToolUse.hooks]]
type = "command"
command = "check"
timeout = 5

[[hooks.Notification]]
[[hooks.Notification.hooks]]
command = "x"
"""
    )
    commands, warnings = parse_hooks(data["hooks"], "config.toml")
    assert commands == [HookCommand("PreToolUse", "bash", "check", 5.0, "config.toml")]
    assert len(warnings) == 1 and "Notification" in warnings[0]
    home, project = tmp_path / "home", tmp_path / "project"
    (home / ".claude").mkdir(parents=True)
    (project / ".claude").mkdir(parents=True)
    (home / ".claude" / "settings.json").write_text(json.dumps({"hooks": hook("Stop", "user-stop")}))
    (project / ".claude" / "settings.json").write_text(json.dumps({"hooks": hook("Stop", "project-stop")}))
    untrusted, _ = read_hooks({}, project, home=home)
    assert [c.command for c in untrusted] == ["user-stop"]
    trusted, _ = read_hooks({}, project, home=home, trusted=True)
    assert [c.command for c in trusted] == ["user-stop", "project-stop"]


def test_matchers() -> None:
    def m(matcher: str, name: str) -> bool:
        return HookCommand("PreToolUse", matcher, "x", 1, "t").matches(
            name, ["Bash"] if name == "bash" else []
        )

    assert m("", "anything") and m("*", "read") and m("Bash", "bash") and m("bash", "bash")
    assert m("Write|bash", "bash") and not m("Write|Edit", "bash")
    assert m("mcp__time__.*", "mcp__time__get_current_time") and not m("Bas", "bash")


async def test_exit_codes_other_than_2_are_one_line_and_block_nothing(tmp_path: Path) -> None:
    hooks = Hooks([HookCommand("UserPromptSubmit", "", "echo oops >&2; exit 1", 5, "t")], str(tmp_path))
    outcome = await hooks.run("UserPromptSubmit", {"prompt": "x"})
    assert not outcome.blocked and outcome.notices == [
        "UserPromptSubmit hook `echo oops >&2; exit 1` failed (exit 1): oops"
    ]
