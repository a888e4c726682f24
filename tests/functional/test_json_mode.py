"""``agent-tui -p PROMPT --mode json``: the real command in a subprocess against the fake model server;
its stdout must be a pi 1.6 JSON event stream a pi tool can read."""

from __future__ import annotations

import json
import signal
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from tests.support.fake_model_server import (
    FakeModelServer,
    anthropic_error,
    anthropic_stream,
    text,
    thinking,
    tool_use,
)
from tests.support.pi_stream import check_stream, of_type, text_of
from tests.support.print_env import KEY, Env

pytestmark = [pytest.mark.timeout(180), pytest.mark.slow]


@pytest.fixture
def env(tmp_path: Path, server: FakeModelServer) -> Env:
    return Env(tmp_path, server)


def parse(stdout: str) -> list[dict[str, Any]]:
    """Every line of stdout as JSON (split on LF only, as pi's framing says)."""
    assert stdout.endswith("\n")
    return [json.loads(line) for line in stdout.split("\n")[:-1]]


def test_a_tool_turn_is_a_valid_pi_event_stream_matching_the_session(
    env: Env, server: FakeModelServer
) -> None:
    (env.work / "notes.txt").write_text("the word is banana\n")
    server.push(
        anthropic_stream(
            thinking("Look at the file first.", chunks=3),
            text("Reading it.\n", chunks=2),
            tool_use("toolu_r", "read", {"path": "notes.txt"}),
        ),
        anthropic_stream(text("It says banana.")),
    )
    result = env.run("-p", "what does notes.txt say?", "--mode", "json")
    assert result.returncode == 0, result.stderr
    records = parse(result.stdout)
    (session,) = env.sessions()
    header = json.loads(session.read_text().splitlines()[0])
    assert records[0] == header and header["type"] == "session" and header["version"] == 3
    events = records[1:]
    check_stream(events)
    kinds = [r["type"] for r in events]
    assert kinds[:2] == ["agent_start", "turn_start"] and kinds[-2:] == ["agent_end", "agent_settled"]
    assert kinds.count("turn_start") == 2 == kinds.count("turn_end")
    assert events[-1] == {"type": "agent_settled", "aborted": False}

    # message_end carries exactly the messages the session file holds, in its order
    entries = env.entries(session)
    ended = [r["message"] for r in of_type(events, "message_end")]
    assert ended == [e["message"] for e in entries if e["type"] == "message"]
    assert [m["role"] for m in ended] == ["system", "user", "assistant", "toolResult", "assistant"]
    assert of_type(events, "agent_end")[0]["messages"] == ended

    # the nested assistant events: thinking, text and the tool call, each by its contentIndex
    updates = [r["assistantMessageEvent"] for r in of_type(events, "message_update")]
    starts = [(u["type"], u["contentIndex"]) for u in updates if u["type"].endswith("_start")]
    assert starts[:3] == [("thinking_start", 0), ("text_start", 1), ("toolcall_start", 2)]
    call_start = next(u for u in updates if u["type"] == "toolcall_start")
    assert call_start["id"] == "toolu_r" and call_start["toolName"] == "read"
    deltas = "".join(u["delta"] for u in updates if u["type"] == "toolcall_delta" and u["contentIndex"] == 2)
    assert json.loads(deltas) == {"path": "notes.txt"}
    call_end = next(u for u in updates if u["type"] == "toolcall_end")
    assert call_end["toolCall"] == {
        "type": "toolCall",
        "id": "toolu_r",
        "name": "read",
        "arguments": {"path": "notes.txt"},
    }

    (start,) = of_type(events, "tool_execution_start")
    (end,) = of_type(events, "tool_execution_end")
    assert start == {
        "type": "tool_execution_start",
        "toolCallId": "toolu_r",
        "toolName": "read",
        "args": {"path": "notes.txt"},
    }
    assert end["result"]["content"] == [{"type": "text", "text": "the word is banana\n"}]
    assert end["isError"] is False and isinstance(end["durationMs"], int)
    first_turn_end = of_type(events, "turn_end")[0]
    assert first_turn_end["message"] == ended[2] and first_turn_end["toolResults"] == [ended[3]]
    # stdout is protocol only; the session path goes to stderr
    assert result.stderr.strip().splitlines()[-1] == f"agent-tui: session {session}"


def test_an_aborted_turn_settles_aborted_and_exits_130(env: Env, server: FakeModelServer) -> None:
    lines = "".join(f"line {i}\n" for i in range(400))
    server.push(anthropic_stream(text(lines)).slow(40))
    proc = subprocess.Popen(
        [sys.executable, "-m", "agent_tui", "-p", "talk", "--mode", "json"],
        cwd=env.work,
        env=env.env,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
    )
    assert proc.stdout is not None
    seen: list[dict[str, Any]] = []
    streamed = ""
    for raw in proc.stdout:  # wait until the reply's first line has streamed
        seen.append(json.loads(raw))
        if seen[-1]["type"] == "message_update" and seen[-1]["assistantMessageEvent"]["type"] == "text_delta":
            streamed += seen[-1]["assistantMessageEvent"]["delta"]
            if "\n" in streamed:
                break
    proc.send_signal(signal.SIGINT)
    out, err = proc.communicate(timeout=30)
    assert proc.returncode == 130, err
    assert "agent-tui: aborted" in err.decode()
    records = seen + parse(out.decode())
    check_stream(records[1:])
    assert records[-1] == {"type": "agent_settled", "aborted": True}
    reply = [r["message"] for r in of_type(records, "message_end") if r["message"]["role"] == "assistant"]
    assert reply[-1]["stopReason"] == "aborted"
    partial = text_of(reply[-1])
    assert partial.startswith("line 0\n") and len(partial) < len(lines)
    (session,) = env.sessions()
    written = [e["message"] for e in env.entries(session) if e.get("message", {}).get("role") == "assistant"]
    assert written[-1] == reply[-1]


def test_a_retry_and_a_final_error_in_the_stream_exit_1_with_one_line(
    env: Env, server: FakeModelServer
) -> None:
    server.push(
        anthropic_error(529, "overloaded_error", "Overloaded"),
        anthropic_stream(text("Back.")),
    )
    ok = env.run("-p", "hi", "--mode", "json")
    assert ok.returncode == 0, ok.stderr
    events = parse(ok.stdout)[1:]
    check_stream(events)
    kinds = [r["type"] for r in events]
    retry = of_type(events, "auto_retry_start")[0]
    assert retry["attempt"] == 1 and retry["maxAttempts"] == 3 and "Overloaded" in retry["errorMessage"]
    assert of_type(events, "auto_retry_end") == [{"type": "auto_retry_end", "success": True, "attempt": 1}]
    # pi's order: the failed run ends willing to retry, the retry is announced, a new run starts
    at = kinds.index("auto_retry_start")
    assert kinds[at - 1] == "agent_end" and events[at - 1]["willRetry"] is True
    assert kinds[at + 1] == "agent_start"
    assert kinds.index("auto_retry_end") == kinds.index("message_end", at) + 1

    server.push(anthropic_error(401, "authentication_error", "invalid x-api-key"))
    bad = env.run("-p", "hi again", "--mode", "json", "-c")
    assert bad.returncode == 1
    events = parse(bad.stdout)[1:]
    check_stream(events)
    assert events[-1] == {"type": "agent_settled", "aborted": False}
    failed = [r["message"] for r in of_type(events, "message_end") if r["message"]["role"] == "assistant"]
    assert failed[-1]["stopReason"] == "error" and "invalid x-api-key" in failed[-1]["errorMessage"]
    errors = [line for line in bad.stderr.splitlines() if "invalid x-api-key" in line]
    assert len(errors) == 1 and errors[0].startswith("agent-tui: ")


def test_secrets_are_redacted_from_every_record(env: Env, server: FakeModelServer) -> None:
    leaked = f"the key is {KEY}\n"
    server.push(
        anthropic_stream(text(leaked), tool_use("toolu_b", "bash", {"command": f"echo {KEY}"})),
        anthropic_stream(text(f"done {KEY}")),
    )
    result = env.run("-p", "show me the key", "--mode", "json")
    assert result.returncode == 0, result.stderr
    assert KEY not in result.stdout and KEY not in result.stderr
    events = parse(result.stdout)[1:]
    check_stream(events)
    (start,) = of_type(events, "tool_execution_start")
    assert start["args"]["command"].startswith("echo ") and KEY not in start["args"]["command"]


def test_json_mode_needs_a_prompt(env: Env) -> None:
    result = env.run("--mode", "json")
    assert result.returncode == 2 and "--mode json needs -p PROMPT" in result.stderr
    assert result.stdout == ""


def test_a_reply_cut_off_by_the_output_limit_says_so_on_stderr(env: Env, server: FakeModelServer) -> None:
    server.push(anthropic_stream(text("A long answer that stops"), stop_reason="max_tokens"))
    result = env.run("-p", "write a lot", "--mode", "json")
    assert result.returncode == 0, result.stderr
    events = parse(result.stdout)[1:]
    check_stream(events)
    (reply,) = [r["message"] for r in of_type(events, "message_end") if r["message"]["role"] == "assistant"]
    assert reply["stopReason"] == "length"
    assert "agent-tui: the reply was cut off by the output limit" in result.stderr
