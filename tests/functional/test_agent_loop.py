"""The agent loop against the fake model server, through the real SDKs.

Every test checks the requests the server received against ``agent-tui
context --format`` of the session file as it was when each request arrived.
"""

from __future__ import annotations

import asyncio
import json
import os
import time
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest

from agent_tui.agent.events import (
    EntryAppended,
    Retrying,
    TextDelta,
    ThinkingDelta,
    ToolCallStreaming,
    ToolFinished,
    ToolStarted,
    TurnDone,
    TurnError,
)
from agent_tui.config import RetryPolicy, load_model_table
from agent_tui.projection.models import MODELS
from tests.support.agent_support import Harness
from tests.support.fake_model_server import (
    FakeModelServer,
    Hang,
    anthropic_error,
    anthropic_stream,
    call,
    openai_error,
    openai_stream,
    text,
    thinking,
    tool_use,
)

pytestmark = pytest.mark.timeout(30)


def of(events: list[Any], kind: type) -> list[Any]:
    return [e for e in events if isinstance(e, kind)]


# -- streamed text ------------------------------------------------------------------------------


async def test_streamed_text_turn(anthropic_harness: Harness, server: FakeModelServer) -> None:
    server.push(anthropic_stream(text("Hello there, how can I help?"), input_tokens=42, output_tokens=7))
    events = await anthropic_harness.run("hi")

    deltas = "".join(e.text for e in of(events, TextDelta))
    assert deltas == "Hello there, how can I help?"
    assert len(of(events, TextDelta)) > 1  # it streamed
    assert events[-1] == TurnDone("stop")
    assert not of(events, TurnError)

    entries = anthropic_harness.entries()
    assert [e["type"] for e in entries] == ["model_change", "message", "message", "message"]
    assert entries[0]["provider"] == "anthropic" and entries[0]["modelId"] == "claude-sonnet-5-5"
    roles = [e["message"]["role"] for e in entries[1:]]
    assert roles == ["system", "user", "assistant"]
    system = entries[1]["message"]
    assert [t["name"] for t in system["toolsAdded"]] == [
        "read",
        "bash",
        "edit",
        "write",
        "grep",
        "find",
        "ls",
        "web_fetch",
    ]
    assert str(anthropic_harness.workdir.resolve()) in system["sections"]["cwd"]
    user = entries[2]["message"]
    assert user["content"] == [{"type": "text", "text": "hi"}]
    assistant = entries[3]["message"]
    assert assistant["content"] == [{"type": "text", "text": "Hello there, how can I help?"}]
    assert assistant["stopReason"] == "stop"
    assert assistant["api"] == "anthropic-messages" and assistant["provider"] == "anthropic"
    assert assistant["model"] == "claude-sonnet-5-5"
    assert assistant["usage"]["input"] == 42 and assistant["usage"]["output"] == 7
    assert assistant["usage"]["totalTokens"] == 49
    assert isinstance(assistant["timestamp"], int)

    appended = of(events, EntryAppended)
    assert [(e.type, e.role) for e in appended] == [
        ("model_change", None),
        ("message", "system"),
        ("message", "user"),
        ("message", "assistant"),
    ]
    assert [e.entry_id for e in appended] == [e["id"] for e in entries]

    body = server.requests[0].body
    assert body["messages"] == [
        {"role": "user", "content": [{"type": "text", "text": "hi", "cache_control": {"type": "ephemeral"}}]}
    ]
    assert [t["name"] for t in body["tools"]] == [
        "read",
        "bash",
        "edit",
        "write",
        "grep",
        "find",
        "ls",
        "web_fetch",
    ]
    assert "agent-tui" in body["system"][0]["text"]
    headers = server.requests[0].headers
    assert "sk-test-key" in (headers.get("x-api-key", "") + headers.get("authorization", ""))
    anthropic_harness.assert_requests_match_context()


async def test_second_turn_reuses_system_prompt_and_sends_history(
    anthropic_harness: Harness, server: FakeModelServer
) -> None:
    server.push(anthropic_stream(text("One.")), anthropic_stream(text("Two.")))
    await anthropic_harness.run("first")
    await anthropic_harness.run("second")
    systems = anthropic_harness.messages("system")
    assert len(systems) == 1  # unchanged prompt and tools: nothing new appended
    assert [e["type"] for e in anthropic_harness.entries()].count("model_change") == 1
    second = server.requests[1].body["messages"]
    assert [m["role"] for m in second] == ["user", "assistant", "user"]
    assert second[1]["content"] == [{"type": "text", "text": "One."}]
    anthropic_harness.assert_requests_match_context()


async def test_agents_md_is_in_the_prompt_and_a_change_appends_a_patch(
    anthropic_harness: Harness, server: FakeModelServer
) -> None:
    (anthropic_harness.workdir / "AGENTS.md").write_text("Always answer in French.\n")
    server.push(anthropic_stream(text("Oui.")), anthropic_stream(text("D'accord.")))
    await anthropic_harness.run("hello")
    assert "Always answer in French." in server.requests[0].body["system"][0]["text"]
    (anthropic_harness.workdir / "AGENTS.md").write_text("Always answer in German.\n")
    await anthropic_harness.run("again")
    systems = anthropic_harness.messages("system")
    assert len(systems) == 2
    assert set(systems[1]["sections"]) == {"project_context"}  # only the changed section
    assert "toolsAdded" not in systems[1]
    prompt = server.requests[1].body["system"][0]["text"]
    assert "German" in prompt and "French" not in prompt
    anthropic_harness.assert_requests_match_context()


async def test_thinking_blocks_keep_their_signature_and_are_sent_back(
    anthropic_harness: Harness, server: FakeModelServer
) -> None:
    server.push(
        anthropic_stream(thinking("Let me think about it.", signature="sig-123"), text("Answer.")),
        anthropic_stream(text("Done.")),
    )
    events = await anthropic_harness.run("q1")
    assert "".join(e.text for e in of(events, ThinkingDelta)) == "Let me think about it."
    assistant = anthropic_harness.messages("assistant")[0]
    assert assistant["content"][0] == {
        "type": "thinking",
        "thinking": "Let me think about it.",
        "thinkingSignature": "sig-123",
    }
    await anthropic_harness.run("q2")
    sent = server.requests[1].body["messages"][1]["content"][0]
    assert sent == {"type": "thinking", "thinking": "Let me think about it.", "signature": "sig-123"}
    anthropic_harness.assert_requests_match_context()


# -- tool use -------------------------------------------------------------------------------------


async def test_tool_loop_reads_a_file_and_answers(
    anthropic_harness: Harness, server: FakeModelServer
) -> None:
    (anthropic_harness.workdir / "notes.txt").write_text("the secret word is banana\n")
    server.push(
        anthropic_stream(text("Reading."), tool_use("toolu_r1", "read", {"path": "notes.txt"})),
        anthropic_stream(text("It says banana.")),
    )
    events = await anthropic_harness.run("what does notes.txt say?")
    reading = anthropic_harness.messages("assistant")[0]
    # block 1, after the text, with the timestamp its message has (pi's message_start takes it)
    assert of(events, ToolCallStreaming) == [ToolCallStreaming("toolu_r1", "read", 1, reading["timestamp"])]
    assert {d.timestamp for d in of(events, TextDelta)} == {
        reading["timestamp"],
        anthropic_harness.messages("assistant")[1]["timestamp"],
    }
    assert of(events, ToolStarted) == [ToolStarted("toolu_r1", "read", {"path": "notes.txt"})]
    finished = of(events, ToolFinished)
    assert [(f.call_id, f.is_error) for f in finished] == [("toolu_r1", False)]
    assert events[-1] == TurnDone("stop")

    result = anthropic_harness.messages("toolResult")[0]
    assert result["toolCallId"] == "toolu_r1" and result["toolName"] == "read"
    assert result["content"] == [{"type": "text", "text": "the secret word is banana\n"}]
    assert result["isError"] is False
    assert finished[0].entry_id == anthropic_harness.entries()[-2]["id"]

    second = server.requests[1].body["messages"]
    assert second[-1]["content"][0]["type"] == "tool_result"
    assert second[-1]["content"][0]["tool_use_id"] == "toolu_r1"
    assert second[-1]["content"][0]["content"][0]["text"] == "the secret word is banana\n"
    anthropic_harness.assert_requests_match_context()


async def test_parallel_tool_calls_run_concurrently_and_append_in_call_order(
    anthropic_harness: Harness, server: FakeModelServer
) -> None:
    def job(name: str, seconds: float) -> str:  # records when it ran, prints its name
        return f"date +%s.%N > {name}.start; sleep {seconds}; date +%s.%N > {name}.end; echo {name}"

    server.push(
        anthropic_stream(
            tool_use("toolu_slow", "bash", {"command": job("slow", 0.6)}),
            tool_use("toolu_fast", "bash", {"command": job("fast", 0)}),
            tool_use("toolu_mid", "bash", {"command": job("mid", 0.3)}),
        ),
        anthropic_stream(text("All three done.")),
    )
    events = await anthropic_harness.run("run three commands")

    def at(name: str) -> float:
        return float((anthropic_harness.workdir / name).read_text())

    # Each later call started before the slow first one finished: they ran at the same time.
    assert at("fast.start") < at("slow.end") and at("mid.start") < at("slow.end")
    results = anthropic_harness.messages("toolResult")
    assert [r["toolCallId"] for r in results] == ["toolu_slow", "toolu_fast", "toolu_mid"]
    assert [r["content"][0]["text"].strip() for r in results] == ["slow", "fast", "mid"]
    assert [e.call_id for e in of(events, ToolFinished)] == ["toolu_slow", "toolu_fast", "toolu_mid"]
    anthropic_harness.assert_requests_match_context()


async def test_failing_tools_give_error_results_the_model_sees(
    anthropic_harness: Harness, server: FakeModelServer
) -> None:
    server.push(
        anthropic_stream(
            tool_use("toolu_a", "read", {"path": "missing.txt"}),
            tool_use("toolu_b", "bash", {"command": "echo oops >&2; exit 3"}),
            tool_use("toolu_c", "frobnicate", {"x": 1}),
            tool_use("toolu_d", "edit", {"path": "x.txt"}),  # edits missing
        ),
        anthropic_stream(text("Noted the failures.")),
    )
    events = await anthropic_harness.run("try things")
    results = {r["toolCallId"]: r for r in anthropic_harness.messages("toolResult")}
    assert all(r["isError"] for r in results.values())
    assert "missing.txt" in results["toolu_a"]["content"][0]["text"]
    assert results["toolu_b"]["content"][0]["text"] == "oops\n\n\nCommand exited with code 3"
    assert results["toolu_c"]["content"][0]["text"] == "Tool frobnicate not found"
    assert "edits: is required" in results["toolu_d"]["content"][0]["text"]
    assert [f.is_error for f in of(events, ToolFinished)] == [True, True, True, True]
    sent = server.requests[1].body["messages"][-1]["content"]
    assert [block.get("is_error") for block in sent] == [True, True, True, True]
    assert events[-1] == TurnDone("stop")
    anthropic_harness.assert_requests_match_context()


async def test_huge_tool_output_is_truncated_and_saved(
    anthropic_harness: Harness, server: FakeModelServer
) -> None:
    server.push(
        anthropic_stream(tool_use("toolu_big", "bash", {"command": "seq 1 100000"})),
        anthropic_stream(text("That was long.")),
    )
    await anthropic_harness.run("print a lot")
    result = anthropic_harness.messages("toolResult")[0]
    shown = result["content"][0]["text"]
    assert len(shown.encode()) < 60 * 1024
    assert shown.startswith("98001\n")  # the last 2,000 lines
    assert "100000\n\n[Showing lines 98001-100000 of 100000. Full output: " in shown
    full = Path(result["details"]["fullOutputPath"])
    assert full.read_text().splitlines() == [str(i) for i in range(1, 100001)]
    sent = server.requests[1].body["messages"][-1]["content"][0]["content"][0]["text"]
    assert sent == shown  # the session keeps what the model was shown
    full.unlink()
    anthropic_harness.assert_requests_match_context()


async def test_tool_calls_cut_by_the_token_limit_are_not_run(
    anthropic_harness: Harness, server: FakeModelServer
) -> None:
    server.push(
        anthropic_stream(
            tool_use("toolu_w", "write", {"path": "a.txt", "content": "x"}), stop_reason="max_tokens"
        ),
        anthropic_stream(text("I will retry.")),
    )
    await anthropic_harness.run("write a file")
    assert not (anthropic_harness.workdir / "a.txt").exists()
    result = anthropic_harness.messages("toolResult")[0]
    assert result["isError"] and "output token limit" in result["content"][0]["text"]
    assert anthropic_harness.messages("assistant")[0]["stopReason"] == "length"
    anthropic_harness.assert_requests_match_context()


async def test_continue_without_prompt(anthropic_harness: Harness, server: FakeModelServer) -> None:
    server.push(anthropic_stream(text("Hi.")))
    await anthropic_harness.run("hello")
    events = await anthropic_harness.run(None)  # the last message is the model's: nothing to continue
    assert of(events, TurnError) and events[-1] == TurnDone("error")
    assert len(server.requests) == 1


# -- aborts ---------------------------------------------------------------------------------------


async def test_abort_mid_stream_keeps_the_partial_message(
    anthropic_harness: Harness, server: FakeModelServer
) -> None:
    words = " ".join(f"word{i}" for i in range(200))
    server.push(anthropic_stream(text(words)).slow(50))
    events: list[Any] = []
    async for event in anthropic_harness.loop.run("talk slowly"):
        events.append(event)
        if isinstance(event, TextDelta) and len(of(events, TextDelta)) == 3:
            anthropic_harness.loop.abort()
    assert events[-1] == TurnDone("aborted")
    assert not of(events, TurnError)
    assistant = anthropic_harness.messages("assistant")[0]
    assert assistant["stopReason"] == "aborted"
    partial = assistant["content"][0]["text"]
    assert partial.startswith("word0 word1 word2") and len(partial) < len(words)
    # The next request is valid: the aborted message is left out, the new prompt follows the old one.
    server.push(anthropic_stream(text("Fine.")))
    await anthropic_harness.run("ok, short answer")
    messages = server.requests[1].body["messages"]
    assert [m["role"] for m in messages] == ["user"]
    assert [b["text"] for b in messages[0]["content"]] == ["talk slowly", "ok, short answer"]
    anthropic_harness.assert_requests_match_context()


async def test_abort_before_the_first_byte(anthropic_harness: Harness, server: FakeModelServer) -> None:
    server.push(Hang(10))
    run = anthropic_harness.loop.run("hello?")
    task = asyncio.ensure_future(_collect(run))
    for _ in range(500):  # the request reached the server (which sends nothing): abort only then
        if server.requests:
            break
        await asyncio.sleep(0.01)
    assert len(server.requests) == 1
    anthropic_harness.loop.abort()
    events = await asyncio.wait_for(task, 5)
    assert events[-1] == TurnDone("aborted")
    assistant = anthropic_harness.messages("assistant")[0]
    assert assistant["stopReason"] == "aborted" and assistant["content"] == []
    assert assistant["errorMessage"] == "Request was aborted"


async def _collect(run: AsyncIterator[Any]) -> list[Any]:
    return [e async for e in run]


async def test_abort_mid_tool_kills_the_process_group_and_answers_every_call(
    anthropic_harness: Harness, server: FakeModelServer
) -> None:
    pidfile = anthropic_harness.workdir / "child.pid"
    server.push(
        anthropic_stream(
            tool_use("toolu_quick", "bash", {"command": "echo quick"}),
            tool_use("toolu_sleep", "bash", {"command": f"sleep 600 & echo $! > {pidfile}; wait"}),
            tool_use("toolu_read", "ls", {}),
        )
    )
    events: list[Any] = []
    # the sleep outlives the test's timeout: the turn ends only if the abort ends the command
    async for event in anthropic_harness.loop.run("start a long job"):
        events.append(event)
        if isinstance(event, ToolStarted) and event.call_id == "toolu_read":
            for _ in range(100):
                if pidfile.exists() and pidfile.read_text().strip():
                    break
                await asyncio.sleep(0.02)
            anthropic_harness.loop.abort()
    assert events[-1] == TurnDone("aborted")
    results = {r["toolCallId"]: r for r in anthropic_harness.messages("toolResult")}
    assert set(results) == {"toolu_quick", "toolu_sleep", "toolu_read"}
    assert results["toolu_sleep"]["isError"] is True
    assert "Command aborted" in results["toolu_sleep"]["content"][0]["text"]
    child = int(pidfile.read_text())
    for _ in range(500):  # killed already, or dying: poll (up to 10 s under load) rather than sleep
        if not _alive(child):
            break
        await asyncio.sleep(0.02)
    assert not _alive(child), "the background sleep survived the abort"
    # The next request is valid: every call has its result.
    server.push(anthropic_stream(text("Stopped.")))
    await anthropic_harness.run("what happened?")
    last = server.requests[-1].body["messages"]
    ids = [b["tool_use_id"] for b in last[2]["content"] if b["type"] == "tool_result"]
    assert ids == ["toolu_quick", "toolu_sleep", "toolu_read"]
    anthropic_harness.assert_requests_match_context()


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    try:  # a zombie is dead for our purposes
        with open(f"/proc/{pid}/stat") as f:
            return f.read().split()[2] != "Z"
    except OSError:
        return True


# -- errors and retries -------------------------------------------------------------------------


async def test_429_with_retry_after_is_retried(anthropic_harness: Harness, server: FakeModelServer) -> None:
    server.push(
        anthropic_error(
            429, "rate_limit_error", "Number of requests has exceeded your rate limit", retry_after="1"
        ),
        anthropic_stream(text("Made it.")),
    )
    events = await anthropic_harness.run("hello")
    retries = of(events, Retrying)
    assert len(retries) == 1 and retries[0].attempt == 1
    assert retries[0].delay == pytest.approx(1.0)  # retry-after wins over the 0.01 s backoff
    assert "429" in retries[0].reason and "rate limit" in retries[0].reason
    gap = server.requests[1].received - server.requests[0].received
    assert gap >= 0.95
    assert events[-1] == TurnDone("stop")
    assistants = anthropic_harness.messages("assistant")
    assert [a["stopReason"] for a in assistants] == ["error", "stop"]
    assert "429" in assistants[0]["errorMessage"]
    assert server.requests[0].body == server.requests[1].body  # the failed attempt is not sent back
    anthropic_harness.assert_requests_match_context()


async def test_529_overloaded_gives_up_after_three_retries(
    anthropic_harness: Harness, server: FakeModelServer
) -> None:
    for _ in range(4):
        server.push(anthropic_error(529, "overloaded_error", "Overloaded", retry_after_ms="20"))
    events = await anthropic_harness.run("hello")
    assert len(server.requests) == 4
    assert [r.attempt for r in of(events, Retrying)] == [1, 2, 3]
    errors = of(events, TurnError)
    assert len(errors) == 1 and events[-1] == TurnDone("error")
    assert "overloaded" in errors[0].message.lower() and "gave up after 3 retries" in errors[0].message
    assistants = anthropic_harness.messages("assistant")
    assert [a["stopReason"] for a in assistants] == ["error"] * 4
    assert assistants[-1]["errorMessage"] == errors[0].message
    anthropic_harness.assert_requests_match_context()


async def test_500_is_retried_with_backoff(server: FakeModelServer, tmp_path: Path) -> None:
    h = Harness(server, tmp_path, retry=RetryPolicy(max_retries=3, base_delay=0.1, max_delay=5))
    try:
        server.push(
            anthropic_error(500, "api_error", "Internal server error"),
            anthropic_error(500, "api_error", "Internal server error"),
            anthropic_stream(text("Recovered.")),
        )
        events = await h.run("hello")
        assert [round(r.delay, 2) for r in of(events, Retrying)] == [0.1, 0.2]
        assert server.requests[2].received - server.requests[1].received >= 0.19
        assert events[-1] == TurnDone("stop")
        h.assert_requests_match_context()
    finally:
        await h.close()


async def test_overloaded_error_event_inside_the_stream_is_retried(
    anthropic_harness: Harness, server: FakeModelServer
) -> None:
    server.push(
        anthropic_stream(text("Starting"), error={"type": "overloaded_error", "message": "Overloaded"}),
        anthropic_stream(text("Second try works.")),
    )
    events = await anthropic_harness.run("hello")
    assert len(of(events, Retrying)) == 1
    first = anthropic_harness.messages("assistant")[0]
    assert first["stopReason"] == "error" and first["content"] == [{"type": "text", "text": "Starting"}]
    assert "overloaded_error" in first["errorMessage"]
    assert events[-1] == TurnDone("stop")
    anthropic_harness.assert_requests_match_context()


async def test_stream_dropped_half_way_records_the_partial_and_retries(
    anthropic_harness: Harness, server: FakeModelServer
) -> None:
    server.push(
        anthropic_stream(text("This answer will be cut off in the middle")).dropped(6),
        anthropic_stream(text("Complete answer.")),
    )
    events = await anthropic_harness.run("hello")
    assert len(of(events, Retrying)) == 1
    assert "closed the connection mid-reply" in of(events, Retrying)[0].reason
    first, second = anthropic_harness.messages("assistant")
    assert first["stopReason"] == "error"
    assert first["content"][0]["text"].startswith("This answer")
    assert "closed the connection mid-reply" in first["errorMessage"]
    assert second["stopReason"] == "stop"
    assert server.requests[0].body == server.requests[1].body
    anthropic_harness.assert_requests_match_context()


async def test_stream_ending_without_stop_reason_is_an_error(
    anthropic_harness: Harness, server: FakeModelServer
) -> None:
    server.push(anthropic_stream(text("truncated"), stop=False), anthropic_stream(text("ok")))
    events = await anthropic_harness.run("hello")
    assert "without a stop reason" in of(events, Retrying)[0].reason
    assert events[-1] == TurnDone("stop")


async def test_bad_key_is_not_retried(anthropic_harness: Harness, server: FakeModelServer) -> None:
    server.push(anthropic_error(401, "authentication_error", "invalid x-api-key"))
    events = await anthropic_harness.run("hello")
    assert len(server.requests) == 1
    assert not of(events, Retrying)
    (error,) = of(events, TurnError)
    assert "API key was rejected" in error.message and "invalid x-api-key" in error.message
    assert "ANTHROPIC_API_KEY" in error.message
    assert events[-1] == TurnDone("error")
    assert anthropic_harness.messages("assistant")[0]["errorMessage"] == error.message
    text_of_file = anthropic_harness.session.path.read_text()
    assert "sk-test-key" not in text_of_file


async def test_refusal_is_an_error_without_retry(anthropic_harness: Harness, server: FakeModelServer) -> None:
    server.push(anthropic_stream(text("I can't"), stop_reason="refusal"))
    events = await anthropic_harness.run("do something bad")
    assert len(server.requests) == 1
    assert of(events, TurnError)[0].message == "The model refused to complete the request"
    assert anthropic_harness.messages("assistant")[0]["stopReason"] == "error"


# -- OpenAI Chat Completions ----------------------------------------------------------------------


async def test_openai_tool_loop_with_parallel_calls(openai_harness: Harness, server: FakeModelServer) -> None:
    (openai_harness.workdir / "a.txt").write_text("alpha\n")
    (openai_harness.workdir / "b.txt").write_text("beta\n")
    server.push(
        openai_stream(
            "Reading both.",
            tool_calls=[call("call_a", "read", {"path": "a.txt"}), call("call_b", "read", {"path": "b.txt"})],
            prompt_tokens=500,
            cached_tokens=300,
        ),
        openai_stream("alpha and beta"),
    )
    events = await openai_harness.run("read a and b")
    assert "".join(e.text for e in of(events, TextDelta)) == "Reading both.alpha and beta"
    assistant = openai_harness.messages("assistant")[0]
    assert assistant["api"] == "openai-completions" and assistant["provider"] == "openai"
    assert assistant["content"] == [
        {"type": "text", "text": "Reading both."},
        {"type": "toolCall", "id": "call_a", "name": "read", "arguments": {"path": "a.txt"}},
        {"type": "toolCall", "id": "call_b", "name": "read", "arguments": {"path": "b.txt"}},
    ]
    assert assistant["stopReason"] == "toolUse"
    assert assistant["usage"]["input"] == 200 and assistant["usage"]["cacheRead"] == 300
    second = server.requests[1].body["messages"]
    tools = [m for m in second if m["role"] == "tool"]
    assert [(m["tool_call_id"], m["content"]) for m in tools] == [("call_a", "alpha\n"), ("call_b", "beta\n")]
    assert server.requests[0].headers["authorization"] == "Bearer sk-test-key"
    assert server.requests[0].path == "/v1/chat/completions"
    openai_harness.assert_requests_match_context()


async def test_openai_reasoning_content_becomes_thinking(
    openai_harness: Harness, server: FakeModelServer
) -> None:
    server.push(openai_stream("42", reasoning="Six times seven."))
    events = await openai_harness.run("6*7?")
    assert "".join(e.text for e in of(events, ThinkingDelta)) == "Six times seven."
    content = openai_harness.messages("assistant")[0]["content"]
    assert content[0] == {
        "type": "thinking",
        "thinking": "Six times seven.",
        "thinkingSignature": "reasoning_content",
    }
    assert content[1] == {"type": "text", "text": "42"}


async def test_openai_errors_and_retries(openai_harness: Harness, server: FakeModelServer) -> None:
    server.push(
        openai_error(429, "Rate limit reached", "requests", retry_after_ms="10"),
        openai_stream("fine").dropped(3),
        openai_stream("fine now"),
    )
    events = await openai_harness.run("hello")
    assert len(of(events, Retrying)) == 2
    assert [a["stopReason"] for a in openai_harness.messages("assistant")] == ["error", "error", "stop"]
    openai_harness.assert_requests_match_context()


async def test_openai_quota_429_is_not_retried(openai_harness: Harness, server: FakeModelServer) -> None:
    server.push(openai_error(429, "You exceeded your current quota", "insufficient_quota"))
    events = await openai_harness.run("hello")
    assert len(server.requests) == 1 and not of(events, Retrying)
    assert "quota" in of(events, TurnError)[0].message


async def test_model_switch_appends_a_model_change(
    anthropic_harness: Harness, server: FakeModelServer
) -> None:
    server.push(anthropic_stream(text("A")), anthropic_stream(text("B", chunks=1), model="claude-haiku-5-5"))
    await anthropic_harness.run("one")
    anthropic_harness.loop.model = "claude-haiku-5-5"
    await anthropic_harness.run("two")
    changes = [e for e in anthropic_harness.entries() if e["type"] == "model_change"]
    assert [c["modelId"] for c in changes] == ["claude-sonnet-5-5", "claude-haiku-5-5"]
    assert server.requests[1].body["model"] == "claude-haiku-5-5"
    assert anthropic_harness.messages("assistant")[1]["model"] == "claude-haiku-5-5"
    anthropic_harness.assert_requests_match_context()


async def test_request_log_has_every_body_and_no_key(server: FakeModelServer, tmp_path: Path) -> None:
    log = tmp_path / "requests.jsonl"
    h = Harness(server, tmp_path)
    h.loop.provider.request_log = str(log)  # type: ignore[attr-defined]
    try:
        server.push(anthropic_error(500, "api_error", "boom"), anthropic_stream(text("ok")))
        await h.run("hello")
        lines = [json.loads(line) for line in log.read_text().splitlines()]
        assert lines == [r.body for r in server.requests]
        assert "sk-test-key" not in log.read_text()
        assert oct(log.stat().st_mode & 0o777) == "0o600"
    finally:
        await h.close()


async def test_thinking_level_is_recorded_and_sent(server: FakeModelServer, tmp_path: Path) -> None:
    h = Harness(server, tmp_path)
    h.loop.thinking = "high"
    try:
        server.push(anthropic_stream(thinking("Hmm.", signature="s"), text("Yes.")))
        await h.run("think hard")
        levels = [e["thinkingLevel"] for e in h.entries() if e["type"] == "thinking_level_change"]
        assert levels == ["high"]
        body = server.requests[0].body
        assert body["thinking"] == {"type": "adaptive", "display": "summarized"}
        assert body["output_config"] == {"effort": "high"}
        h.assert_requests_match_context()  # `agent-tui context` reads the level from the session too
    finally:
        await h.close()


@pytest.mark.parametrize(
    ("model", "level", "effort"),
    [
        ("gpt-5.2", "off", "none"),  # gpt-5.1 and later turn reasoning off with "none"
        ("gpt-5.2", "minimal", "low"),  # no minimal: clamped up
        ("gpt-5.2", "low", "low"),
        ("gpt-5.2", "medium", "medium"),
        ("gpt-5.2", "high", "high"),
        ("gpt-5.2", "xhigh", "xhigh"),
        ("gpt-5", "minimal", "minimal"),
        ("gpt-5", "xhigh", "high"),  # no xhigh: clamped down
        ("o3", "off", None),  # no off value: nothing is sent
        ("o3", "high", "high"),
        ("gpt-4.1", "off", None),  # not a reasoning model
        ("gpt-4.1", "high", None),
    ],
)
async def test_openai_reasoning_effort_follows_the_thinking_level(
    server: FakeModelServer, tmp_path: Path, model: str, level: str, effort: str | None
) -> None:
    h = Harness(server, tmp_path, provider="openai", model=model)
    h.loop.thinking = level
    try:
        server.push(openai_stream("ok"))
        await h.run("think")
        body = server.requests[0].body
        assert body.get("reasoning_effort") == effort
        assert ("reasoning_effort" in body) == (effort is not None)
        h.assert_requests_match_context()  # `agent-tui context --format openai` sends the same effort
    finally:
        await h.close()


async def test_openai_reasoning_effort_per_model_overrides_from_the_config(
    server: FakeModelServer, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    config = tmp_path / "config.toml"
    config.write_text(
        '[models."local-reasoner"]\nreasoning = true\n'
        'thinking_level_map = { off = "none", minimal = false, xhigh = "max" }\n'
        '[models."no-effort-reasoner"]\nreasoning = true\nsupports_reasoning_effort = false\n'
    )
    monkeypatch.setenv("AGENT_TUI_CONFIG", str(config))  # `agent-tui context` reads the same table
    load_model_table()
    try:
        for model, level, effort in (
            ("local-reasoner", "minimal", "low"),
            ("local-reasoner", "xhigh", "max"),
            ("local-reasoner", "off", "none"),
            ("no-effort-reasoner", "high", None),
        ):
            server.requests.clear()
            (tmp_path / level).mkdir(exist_ok=True)
            h = Harness(server, tmp_path / level, provider="openai", model=model)
            h.loop.thinking = level
            try:
                server.push(openai_stream("ok"))
                await h.run("think")
                assert server.requests[0].body.get("reasoning_effort") == effort, (model, level)
                h.assert_requests_match_context()
            finally:
                await h.close()
    finally:
        MODELS.pop("local-reasoner", None)
        MODELS.pop("no-effort-reasoner", None)


async def test_a_slow_fsync_does_not_freeze_the_event_loop(
    anthropic_harness: Harness, server: FakeModelServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The app answers keys on the agent's event loop: a disk that takes 200 ms per fsync must
    not stop it. Each entry is still fsynced before it is acknowledged."""
    import threading

    assert (
        anthropic_harness.session.writer is not None
        and anthropic_harness.session.writer.fsync.value == "always"
    )
    server.push(anthropic_stream(text("warm")))
    await anthropic_harness.run(
        "a first turn imports the SDK (the app does that in a thread after its first frame)"
    )
    real_fsync = os.fsync
    synced_from: list[bool] = []

    def slow_fsync(fd: int) -> None:
        synced_from.append(threading.current_thread() is threading.main_thread())
        time.sleep(0.2)
        real_fsync(fd)

    monkeypatch.setattr(os, "fsync", slow_fsync)
    server.push(anthropic_stream(text("hello")))
    events = await anthropic_harness.run("hi")
    appended = [e for e in events if isinstance(e, EntryAppended)]
    assert len(appended) >= 2 and len(synced_from) >= len(appended)  # every entry was fsynced
    # off the event loop's thread, the loop answers meanwhile (how long it stalls: a bench figure)
    assert not any(synced_from), "fsync ran on the event loop's thread"
