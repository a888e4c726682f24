"""Where ``agent-tui --mode rpc`` must agree with pi 1.6's RPC types and rules, over the real
process and its stdio against the fake model server: the thinking level clamped to the model's
levels (the session core's rule), numbers for every cost (0 for a model without a price) and
``model.cost`` always present, an assistant ``message_start`` stamped with its message's
timestamp, ``tool_execution_start`` showing the arguments a PreToolUse hook rewrote, and a
permission question put to the client as pi's ``extension_ui_request`` (answered, cancelled, or
not answered in time: refused, recorded, the turn goes on)."""

from __future__ import annotations

import json
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.support.fake_model_server import FakeModelServer, anthropic_stream, text, tool_use
from tests.support.pi_stream import check_stream, of_type, text_of
from tests.support.print_env import Env
from tests.support.rpc_client import Record, RpcClient

pytestmark = [pytest.mark.timeout(180), pytest.mark.slow]

ZERO_COST = {"input": 0.0, "output": 0.0, "cacheRead": 0.0, "cacheWrite": 0.0}


@pytest.fixture
def env(tmp_path: Path, server: FakeModelServer) -> Env:
    return Env(tmp_path, server)


@pytest.fixture
def session_file(env: Env) -> Path:
    return env.tmp / "rpc.jsonl"


def start(env: Env, session_file: Path, *args: str, extra: dict[str, str] | None = None) -> RpcClient:
    return RpcClient(["--session", str(session_file), *args], env.work, {**env.env, **(extra or {})})


@pytest.fixture
def clients() -> Iterator[list[RpcClient]]:
    started: list[RpcClient] = []
    yield started
    for client in started:
        client.kill()


def ok(response: Record) -> Any:
    assert response["success"], response
    return response.get("data")


def settle(rpc: RpcClient) -> Record:
    return rpc.wait_for(lambda r: r["type"] == "agent_settled")


def entries(path: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in path.read_text().splitlines()[1:]]


def permission_records(path: Path) -> list[dict[str, Any]]:
    return [e["data"] for e in entries(path) if e.get("customType") == "agent-tui.permission"]


def events(records: list[Record]) -> list[Record]:
    skip = {"response", "queue_update", "thinking_level_changed", "extension_ui_request"}
    return [r for r in records if r["type"] not in skip]


def is_cost(value: Any) -> bool:
    return (
        isinstance(value, dict)
        and set(value) == {"input", "output", "cacheRead", "cacheWrite"}
        and all(isinstance(v, int | float) and not isinstance(v, bool) for v in value.values())
    )


def test_thinking_is_clamped_to_the_models_levels_as_pi_clamps_it(
    env: Env, session_file: Path, clients: list[RpcClient]
) -> None:
    rpc = start(env, session_file, "--model", "anthropic/local-model")  # no reasoning: only "off"
    clients.append(rpc)
    assert ok(rpc.call({"type": "get_available_thinking_levels"})) == {"levels": ["off"]}
    assert ok(rpc.call({"type": "set_thinking_level", "level": "high"})) is None
    assert ok(rpc.call({"type": "get_state"}))["thinkingLevel"] == "off"
    assert of_type(rpc.records, "thinking_level_changed") == []  # off to off: no change, as pi
    cycled = rpc.call({"type": "cycle_thinking_level"})
    assert cycled["success"] and "data" in cycled and cycled["data"] is None  # pi's null

    # a model with levels: xhigh is not one of sonnet 4.5's, pi's clamp takes the next one down
    switched = ok(rpc.call({"type": "set_model", "provider": "anthropic", "modelId": "claude-sonnet-4-5"}))
    assert switched["id"] == "claude-sonnet-4-5" and switched["reasoning"] is True
    levels = ok(rpc.call({"type": "get_available_thinking_levels"}))["levels"]
    assert levels[0] == "off" and "high" in levels and "xhigh" not in levels
    assert ok(rpc.call({"type": "set_thinking_level", "level": "xhigh"})) is None
    assert of_type(rpc.records, "thinking_level_changed") == [
        {"type": "thinking_level_changed", "level": "high"}
    ]
    assert ok(rpc.call({"type": "get_state"}))["thinkingLevel"] == "high"
    stepped = ok(rpc.call({"type": "cycle_thinking_level"}))
    assert stepped == {"level": levels[(levels.index("high") + 1) % len(levels)]}

    # back to the model without levels: set_model re-clamps, and says so
    ok(rpc.call({"type": "set_thinking_level", "level": "high"}))
    ok(rpc.call({"type": "set_model", "provider": "anthropic", "modelId": "local-model"}))
    assert of_type(rpc.records, "thinking_level_changed")[-1] == {
        "type": "thinking_level_changed",
        "level": "off",
    }
    assert ok(rpc.call({"type": "get_state"}))["thinkingLevel"] == "off"
    bad = rpc.call({"type": "set_thinking_level", "level": "enormous"})
    assert bad["success"] is False and "enormous" in bad["error"]
    code, err = rpc.finish()
    assert code == 0, err


def test_costs_are_numbers_and_model_cost_is_always_there(
    env: Env, session_file: Path, server: FakeModelServer, clients: list[RpcClient]
) -> None:
    rpc = start(env, session_file, "--model", "anthropic/local-model")
    clients.append(rpc)
    state = ok(rpc.call({"type": "get_state"}))
    assert state["model"]["id"] == "local-model" and state["model"]["cost"] == ZERO_COST
    models = ok(rpc.call({"type": "get_available_models"}))["models"]
    assert models[0]["id"] == "local-model" and all(is_cost(m["cost"]) for m in models)
    stats = ok(rpc.call({"type": "get_session_stats"}))
    assert stats["cost"] == 0 and stats["tokens"]["total"] == 0

    server.push(anthropic_stream(text("Local."), input_tokens=1000, output_tokens=50))
    ok(rpc.call({"type": "prompt", "message": "hi"}))
    settle(rpc)
    stats = ok(rpc.call({"type": "get_session_stats"}))
    assert stats["cost"] == 0 and isinstance(stats["cost"], float)  # unpriced: 0, never null
    assert stats["tokens"] == {"input": 1000, "output": 50, "cacheRead": 0, "cacheWrite": 0, "total": 1050}
    assert stats["userMessages"] == 1 and stats["assistantMessages"] == 1
    assert stats["totalMessages"] == len([e for e in entries(session_file) if e["type"] == "message"])
    usage = stats["contextUsage"]
    assert all(isinstance(usage[k], int | float) for k in ("tokens", "contextWindow", "percent"))

    # a priced model's call adds its dollars: $3 / $15 per million tokens for sonnet 4.5
    cycled = ok(rpc.call({"type": "set_model", "provider": "anthropic", "modelId": "claude-sonnet-4-5"}))
    assert cycled["cost"] == {"input": 3.0, "output": 15.0, "cacheRead": 0.3, "cacheWrite": 3.75}
    server.push(anthropic_stream(text("Priced."), input_tokens=1000, output_tokens=100))
    ok(rpc.call({"type": "prompt", "message": "again"}))
    settle(rpc)
    stats = ok(rpc.call({"type": "get_session_stats"}))
    assert stats["cost"] == pytest.approx(1000 * 3 / 1e6 + 100 * 15 / 1e6)
    assert stats["tokens"]["total"] == 2150
    code, err = rpc.finish()
    assert code == 0, err


def test_an_assistant_message_start_carries_the_messages_timestamp(
    env: Env, session_file: Path, server: FakeModelServer, clients: list[RpcClient]
) -> None:
    rpc = start(env, session_file)
    clients.append(rpc)
    slow = anthropic_stream(text("One moment, please.", chunks=4))
    slow.delay = 0.25  # the first delta comes about 0.75 s after the request is sent
    server.push(slow)
    ok(rpc.call({"type": "prompt", "message": "take your time"}))
    settle(rpc)
    stream = events(rpc.records)
    check_stream(stream)  # message_start's timestamp is the message's (pi_stream checks it)
    (start_record,) = [r for r in of_type(stream, "message_start") if r["message"]["role"] == "assistant"]
    (end_record,) = [r for r in of_type(stream, "message_end") if r["message"]["role"] == "assistant"]
    assert start_record["message"]["timestamp"] == end_record["message"]["timestamp"]
    user_end = next(r for r in of_type(stream, "message_end") if r["message"]["role"] == "user")
    assert user_end["message"]["timestamp"] <= end_record["message"]["timestamp"]
    saved = [e["message"] for e in entries(session_file) if e.get("message", {}).get("role") == "assistant"]
    assert saved[0]["timestamp"] == start_record["message"]["timestamp"]
    code, err = rpc.finish()
    assert code == 0, err


def rewriting_hook(env: Env, decision: str | None = "allow") -> None:
    """A PreToolUse hook (in the user's config: trusted) that replaces every bash command with
    ``echo rewritten``, as Claude Code's ``updatedInput``, with ``decision`` as its
    ``permissionDecision`` (None: none, so the permission policy still asks)."""
    script = env.tmp / "rewrite.py"
    specific: dict[str, Any] = {"hookEventName": "PreToolUse", "updatedInput": {"command": "echo rewritten"}}
    if decision is not None:
        specific["permissionDecision"] = decision
    reply = {"hookSpecificOutput": specific}
    script.write_text(f"import json, sys\njson.load(sys.stdin)\nprint(json.dumps({reply!r}))\n")
    config = Path(env.env["AGENT_TUI_CONFIG"])
    command = json.dumps(f"{sys.executable} {script}")
    config.write_text(
        config.read_text()
        + f'\n[[hooks.PreToolUse]]\nmatcher = "Bash"\n[[hooks.PreToolUse.hooks]]\ntype = "command"\ncommand = {command}\n'
    )


def test_tool_execution_start_shows_the_command_a_hook_rewrote(
    env: Env, session_file: Path, server: FakeModelServer, clients: list[RpcClient]
) -> None:
    rewriting_hook(env)
    rpc = start(env, session_file)
    clients.append(rpc)
    server.push(
        anthropic_stream(tool_use("toolu_1", "bash", {"command": "echo original"})),
        anthropic_stream(text("Done.")),
    )
    ok(rpc.call({"type": "prompt", "message": "run it"}))
    settle(rpc)
    stream = events(rpc.records)
    check_stream(stream)
    (started,) = of_type(stream, "tool_execution_start")
    assert started["args"] == {"command": "echo rewritten"}
    (ended,) = of_type(stream, "tool_execution_end")
    assert ended["result"]["content"] == [{"type": "text", "text": "rewritten\n"}]
    # what the model asked for stays in its message; what ran is what the faces show
    call = next(
        b
        for e in entries(session_file)
        if e.get("message", {}).get("role") == "assistant"
        for b in e["message"]["content"]
        if b["type"] == "toolCall"
    )
    assert call["arguments"] == {"command": "echo original"}
    code, err = rpc.finish()
    assert code == 0, err


def question(rpc: RpcClient) -> Record:
    return rpc.wait_for(lambda r: r["type"] == "extension_ui_request")


def test_a_permission_question_is_put_to_the_client_as_pi_puts_one(
    env: Env, session_file: Path, server: FakeModelServer, clients: list[RpcClient]
) -> None:
    rpc = start(env, session_file, "--permissions", "ask", extra={"AGENT_TUI_RPC_ASK_TIMEOUT": "2"})
    clients.append(rpc)

    # answered: "Allow once" runs the command
    server.push(
        anthropic_stream(tool_use("toolu_a", "bash", {"command": "echo allowed"})),
        anthropic_stream(text("Ran it.")),
    )
    ok(rpc.call({"type": "prompt", "message": "run it"}))
    asked = question(rpc)
    assert asked["method"] == "select" and asked["timeout"] == 2000
    assert asked["options"] == ["Allow once", "Always allow Bash(echo:*)", "Allow for this session", "Deny"]
    assert "echo allowed" in asked["title"] and asked["message"] == "echo allowed"
    assert asked["toolName"] == "bash" and asked["toolCallId"] == "toolu_a"
    responses = len(of_type(rpc.records, "response"))
    rpc.send({"type": "extension_ui_response", "id": asked["id"], "value": "Allow once"})
    settle(rpc)
    assert len(of_type(rpc.records, "response")) == responses  # an answer gets no response, as in pi
    ended = of_type(rpc.records, "tool_execution_end")[-1]
    assert ended["isError"] is False and ended["result"]["content"][0]["text"] == "allowed\n"

    # cancelled: refused, recorded, and the turn goes on to the model's next reply
    server.push(
        anthropic_stream(tool_use("toolu_c", "bash", {"command": "echo cancelled"})),
        anthropic_stream(text("Not run.")),
    )
    ok(rpc.call({"type": "prompt", "message": "again"}))
    asked = question(rpc)
    rpc.send({"type": "extension_ui_response", "id": asked["id"], "cancelled": True})
    settle(rpc)
    ended = of_type(rpc.records, "tool_execution_end")[-1]
    assert ended["isError"] is True and "did not allow" in ended["result"]["content"][0]["text"]
    assert text_of(of_type(rpc.records, "message_end")[-1]["message"]) == "Not run."

    # always: the rule shown is kept in .claude/settings.local.json, and the next echo is not asked
    server.push(
        anthropic_stream(tool_use("toolu_k", "bash", {"command": "echo kept"})),
        anthropic_stream(tool_use("toolu_n", "bash", {"command": "echo again"})),
        anthropic_stream(text("Both ran.")),
    )
    ok(rpc.call({"type": "prompt", "message": "keep it"}))
    asked = question(rpc)
    rpc.send({"type": "extension_ui_response", "id": asked["id"], "value": "Always allow Bash(echo:*)"})
    settle(rpc)
    local = json.loads((env.work / ".claude" / "settings.local.json").read_text())
    assert local["permissions"]["allow"] == ["Bash(echo:*)"]
    assert [r["id"] for r in of_type(rpc.records, "extension_ui_request")][-1] == asked["id"]
    assert of_type(rpc.records, "tool_execution_end")[-1]["result"]["content"][0]["text"] == "again\n"

    # no answer within the timeout (2 s): refused with the reason, the turn goes on
    server.push(
        anthropic_stream(tool_use("toolu_t", "bash", {"command": "touch late"})),
        anthropic_stream(text("Gave up.")),
    )
    ok(rpc.call({"type": "prompt", "message": "once more"}))
    asked = question(rpc)
    settle(rpc)
    ended = of_type(rpc.records, "tool_execution_end")[-1]
    refusal = ended["result"]["content"][0]["text"]
    assert ended["isError"] is True and "did not answer within 2 s" in refusal
    assert "-p" not in refusal and "terminal" not in refusal
    rpc.send({"type": "extension_ui_response", "id": asked["id"], "value": "Allow once"})  # too late
    assert ok(rpc.call({"type": "get_state"}))["isStreaming"] is False
    assert not (env.work / "late").exists()

    decisions = [(r["toolCallId"], r["decision"]) for r in permission_records(session_file)]
    assert decisions == [
        ("toolu_a", "allow-once"),
        ("toolu_c", "deny"),
        ("toolu_k", "allow-always"),
        ("toolu_n", "rule-allow"),
        ("toolu_t", "deny"),
    ]
    results = [
        e["message"] for e in entries(session_file) if e.get("message", {}).get("role") == "toolResult"
    ]
    assert [r["isError"] for r in results] == [False, True, False, False, True]
    check_stream(events(rpc.records))
    code, err = rpc.finish()
    assert code == 0, err
    assert "stdin is not a terminal" not in err
