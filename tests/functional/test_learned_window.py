"""The server's real context window, learned from its overflow error, against a fake server that
refuses like the real ones: each family's body and status (llama.cpp on both APIs), for any request
larger than its window, the model's nominal window being far larger (a local server run with a
small context). The window is recorded (session entry and cache), the retry fits, and the next turn
compacts at the learned threshold without another overflow."""

from __future__ import annotations

import json
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest

from agent_tui.agent.events import AgentEvent, CompactionFailed, CompactionStarted, TurnDone, TurnError
from agent_tui.agent.window import WindowCache
from agent_tui.projection.compaction import SUMMARIZATION_SYSTEM_PROMPT
from agent_tui.projection.tokens import estimate_text
from agent_tui.projection.window import WINDOW_TYPE
from tests.support.agent_support import Harness
from tests.support.fake_model_server import (
    FakeModelServer,
    RecordedRequest,
    Response,
    anthropic_stream,
    call,
    openai_stream,
    overflow_error,
    text,
    tool_use,
)

pytestmark = pytest.mark.timeout(60)

WINDOW = 6_000  # the server's real context; the models' nominal windows are 128,000 and more
SUMMARY = "## Goal\nRead the files.\n\n## Progress\n### Done\n- [x] read the files"
CASES = [
    ("anthropic", "anthropic"),
    ("openai", "openai"),
    ("llamacpp", "openai"),
    ("llamacpp", "anthropic"),
    ("vllm", "openai"),
    ("ollama", "openai"),
]


def server_count(body: dict[str, Any]) -> int:
    """What the fake server counts a request as: the whole body's JSON (a little more than agent-tui
    estimates for it, as real tokenizers and chat templates do)."""
    return estimate_text(json.dumps(body, ensure_ascii=False))


def is_summary(body: dict[str, Any]) -> bool:
    system = body.get("system")
    if isinstance(system, list):
        return bool(system and system[0].get("text") == SUMMARIZATION_SYSTEM_PROMPT)
    messages = body.get("messages") or [{}]
    return bool(
        messages[0].get("role") == "system" and messages[0].get("content") == SUMMARIZATION_SYSTEM_PROMPT
    )


Reply = Callable[[int], Response]


@dataclass
class WindowedServer:
    """Answers like a server with a ``window``-token context: refuses larger requests with ``family``'s
    overflow error, answers summarization requests with a summary and others with the next reply."""

    api: str
    family: str
    window: int = WINDOW
    replies: deque[Reply] = field(default_factory=deque)
    refused: list[int] = field(default_factory=list)
    accepted: list[int] = field(default_factory=list)

    counts_completion: bool = False  # vLLM and OpenAI: prompt + max_completion_tokens must fit

    def __call__(self, request: RecordedRequest) -> Response:
        body = request.body
        tokens = server_count(body)
        completion = int(body.get("max_completion_tokens") or 0) if self.counts_completion else 0
        if tokens + completion > self.window:
            self.refused.append(tokens)
            return overflow_error(self.family, self.window, tokens, completion)
        self.accepted.append(tokens)
        if is_summary(body):
            return self.say(SUMMARY)(tokens)
        return self.replies.popleft()(tokens)

    def say(self, words: str) -> Reply:
        if self.api == "anthropic":
            return lambda n: anthropic_stream(text(words), input_tokens=n)
        return lambda n: openai_stream(words, prompt_tokens=n)

    def read(self, call_id: str, path: str) -> Reply:
        if self.api == "anthropic":
            return lambda n: anthropic_stream(tool_use(call_id, "read", {"path": path}), input_tokens=n)
        return lambda n: openai_stream(tool_calls=[call(call_id, "read", {"path": path})], prompt_tokens=n)


def windowed(
    server: FakeModelServer, tmp_path: Path, family: str, api: str
) -> tuple[Harness, WindowedServer]:
    model = "claude-sonnet-5-5" if api == "anthropic" else "local-model"
    h = Harness(server, tmp_path, provider=api, model=model)
    h.loop.window_cache = WindowCache(tmp_path / "home" / "windows.json")
    for name in ("a", "b", "c"):  # ~2,200 tokens each as a tool result
        (h.workdir / f"{name}.txt").write_text(f"{name}-line of the file\n" * 420)
    fake = WindowedServer(api, family)
    server.responder = fake
    return h, fake


def turn_ok(events: list[AgentEvent]) -> None:
    errors = [e for e in events if isinstance(e, TurnError)]
    assert not errors and isinstance(events[-1], TurnDone) and events[-1].stop_reason == "stop", errors


@pytest.mark.parametrize(("family", "api"), CASES, ids=[f"{f}-{a}" for f, a in CASES])
async def test_the_window_an_overflow_reports_is_learned_and_used(
    server: FakeModelServer, tmp_path: Path, family: str, api: str
) -> None:
    h, fake = windowed(server, tmp_path, family, api)
    try:
        fake.replies.extend([fake.read("c1", "a.txt"), fake.say("a.txt is read")])
        turn_ok(await h.run("read a.txt"))
        assert not fake.refused
        # the second file takes the request over the server's window: refused, learned, compacted, retried
        fake.replies.extend([fake.read("c2", "b.txt"), fake.say("b.txt is read")])
        events = await h.run("read b.txt")
        turn_ok(events)
        assert len(fake.refused) == 1, fake.refused
        # (a compaction at the threshold may follow the reply: the server counts a little more than we do)
        assert next(e.reason for e in events if isinstance(e, CompactionStarted)) == "overflow"
        learned = [e for e in h.entries() if e["type"] == "custom" and e["customType"] == WINDOW_TYPE]
        assert len(learned) == 1
        data = learned[0]["data"]
        assert data["provider"] == api and data["modelId"] == h.loop.model
        if (
            family == "ollama"
        ):  # only the excess is said: the window is our count of the refused request less it
            assert abs(data["contextWindow"] - WINDOW) < WINDOW * 0.15, data
        else:
            assert data["contextWindow"] == WINDOW and data["promptTokens"] == fake.refused[0]
        assert data["nominalWindow"] >= 128_000
        assert h.loop.context_window() == data["contextWindow"]
        cache = json.loads((tmp_path / "home" / "windows.json").read_text())
        assert [v["contextWindow"] for v in cache["windows"].values()] == [data["contextWindow"]]
        assert h.messages("assistant")[-1]["content"][-1]["text"] == "b.txt is read"  # the retry fitted
        # the next turn grows past the learned threshold: compacted before the call, never refused
        fake.replies.extend([fake.read("c3", "c.txt"), fake.say("c.txt is read")])
        events = await h.run("read c.txt")
        turn_ok(events)
        assert len(fake.refused) == 1, fake.refused
        assert "threshold" in [e.reason for e in events if isinstance(e, CompactionStarted)]
        assert h.messages("assistant")[-1]["content"][-1]["text"] == "c.txt is read"
    finally:
        await h.close()


async def read_two_files(anthropic_harness: Harness, fake: WindowedServer) -> list[AgentEvent]:
    """Two turns, each reading a file; the second turn's events."""
    fake.replies.extend([fake.read("c1", "a.txt"), fake.say("a.txt is read")])
    fake.replies.extend([fake.read("c2", "b.txt"), fake.say("b.txt is read")])
    turn_ok(await anthropic_harness.run("read a.txt"))
    events = await anthropic_harness.run("read b.txt")
    turn_ok(events)
    return events


async def test_a_new_session_starts_with_the_window_the_cache_learned(
    server: FakeModelServer, tmp_path: Path
) -> None:
    h, fake = windowed(server, tmp_path, "llamacpp", "openai")
    try:
        await read_two_files(h, fake)
        assert len(fake.refused) == 1
    finally:
        await h.close()
    (tmp_path / "second").mkdir()
    h2, fake2 = windowed(server, tmp_path / "second", "llamacpp", "openai")
    h2.loop.window_cache = WindowCache(tmp_path / "home" / "windows.json")
    try:
        assert h2.loop.context_window() == WINDOW
        events = await read_two_files(h2, fake2)
        assert not fake2.refused  # compacted at the threshold instead
        assert {e.reason for e in events if isinstance(e, CompactionStarted)} == {"threshold"}
        # the session records what the cache knew, so `context` and pi see it too
        learned = [e for e in h2.entries() if e["type"] == "custom" and e["customType"] == WINDOW_TYPE]
        assert [e["data"]["contextWindow"] for e in learned] == [WINDOW]
    finally:
        await h2.close()


async def test_a_window_smaller_than_the_system_prompt_says_so_in_one_line(
    server: FakeModelServer, tmp_path: Path
) -> None:
    h, fake = windowed(server, tmp_path, "llamacpp", "openai")
    fake.window = 1_024
    try:
        fake.replies.append(fake.say("never"))
        events = await h.run("hello")
        errors = [e.message for e in events if isinstance(e, TurnError)]
        assert len(errors) == 1 and "\n" not in errors[0], errors
        assert "1,024 tokens" in errors[0] and "system prompt and tool definitions" in errors[0]
        assert isinstance(events[-1], TurnDone) and events[-1].stop_reason == "error"
        assert len(fake.refused) == 1  # no retry that could not fit
        # and no compaction tried first (its failure was a second line in print mode)
        assert not [e for e in events if isinstance(e, CompactionStarted | CompactionFailed)], events
        # the refused attempt is hidden: nothing of it reaches the next request
        hides = [e for e in h.entries() if e["type"] == "context_edit" and e["replacement"] is None]
        failed = [
            e for e in h.entries() if e["type"] == "message" and e["message"].get("stopReason") == "error"
        ]
        assert [x["targetId"] for x in hides] == [f["id"] for f in failed]
    finally:
        await h.close()


async def test_an_entry_larger_than_the_window_is_named_and_once_hidden_the_next_turn_works(
    server: FakeModelServer, tmp_path: Path
) -> None:
    h, fake = windowed(server, tmp_path, "vllm", "openai")
    (h.workdir / "big.txt").write_text("big-line of the file\n" * 900)  # ~5,400 tokens as a tool result
    try:
        fake.replies.extend([fake.read("c1", "big.txt"), fake.say("big.txt is read")])
        fake.window = 100_000  # the first turn goes through
        turn_ok(await h.run("read big.txt"))
        result = next(
            e for e in h.entries() if e["type"] == "message" and e["message"]["role"] == "toolResult"
        )
        h.session.pin(result["id"])  # kept verbatim through every compaction
        fake.window = WINDOW
        fake.replies.append(fake.say("never"))
        events = await h.run("and now?")
        errors = [e.message for e in events if isinstance(e, TurnError)]
        assert len(errors) == 1 and "\n" not in errors[0], errors
        assert f"entry {result['id']} (a tool result)" in errors[0] and "hide or replace" in errors[0]
        assert f"{WINDOW:,} tokens" in errors[0]
        refused = len(fake.refused)
        assert refused >= 1
        # the way out the line names: hide it; the next turn fits, nothing of the refused attempt in it
        fake.replies.clear()
        fake.replies.append(fake.say("fits now"))
        h.session.hide(result["id"])
        turn_ok(await h.run("try again"))
        assert len(fake.refused) == refused
        assert h.messages("assistant")[-1]["content"][-1]["text"] == "fits now"
        last = json.dumps(server.requests[-1].body)
        assert "big-line of the file" not in last and "never" not in last
    finally:
        await h.close()


async def test_a_server_that_counts_the_completion_gets_an_output_limit_that_fits(
    server: FakeModelServer, tmp_path: Path
) -> None:
    """vLLM and OpenAI count max_completion_tokens into the window: the model's 8,192 alone is more
    than a 6,000-token server has, so every request would be refused however short."""
    h, fake = windowed(server, tmp_path, "openai", "openai")
    fake.counts_completion = True
    try:
        fake.replies.append(fake.say("hello back"))
        turn_ok(await h.run("hello"))
        assert len(fake.refused) == 1
        first, retry = server.requests[0].body, server.requests[-1].body
        assert first["max_completion_tokens"] == 8_192
        assert server_count(retry) + retry["max_completion_tokens"] <= WINDOW
        assert retry["max_completion_tokens"] >= 256
        # what was sent is what `agent-tui context --format openai` prints for the session then
        h.assert_requests_match_context()
        fake.replies.append(fake.say("and again"))
        turn_ok(await h.run("once more"))
        assert len(fake.refused) == 1  # learned: no second refusal
    finally:
        await h.close()


@pytest.mark.slow  # agent-tui (or Python) as a process: integration by nature
def test_context_text_shows_the_learned_window(tmp_path: Path) -> None:
    import subprocess
    import sys

    from agent_tui.projection.window import window_entry
    from agent_tui.store.session import Session

    def context_text(path: Path) -> str:
        out = subprocess.run(
            [sys.executable, "-m", "agent_tui", "context", str(path), "--format", "text"],
            capture_output=True,
            text=True,
            env={"AGENT_TUI_CONFIG": str(tmp_path / "none.toml"), "PATH": "/usr/bin:/bin"},
        )
        assert out.returncode == 0, out.stderr
        return out.stdout

    session = Session.create(tmp_path / "sessions", tmp_path)
    session.append({"type": "model_change", "provider": "openai", "modelId": "local-model"})
    session.append_message({"role": "user", "content": [{"type": "text", "text": "hi"}], "timestamp": 1})
    assert "tokens of 128,000" in context_text(session.path)
    session.append(window_entry("openai", "local-model", 4_096, prompt_tokens=5_000))
    session.close()
    assert "tokens of 4,096" in context_text(session.path)


async def test_a_summarization_request_the_server_refuses_is_split_to_the_window_it_reports(
    server: FakeModelServer, tmp_path: Path
) -> None:
    h, fake = windowed(server, tmp_path, "llamacpp", "openai")
    fake.window = 100_000  # the history is made first
    try:
        for name in ("alpha", "bravo", "charlie"):  # pasted text is summarized whole (tool output is clipped)
            fake.replies.append(fake.say(f"noted {name}"))
            turn_ok(await h.run(f"remember this: {(name + ' ') * 1_000}"))
        fake.replies.extend([fake.say("done")])
        turn_ok(await h.run("that is all"))
        fake.window = 2_500  # now the server has far less than the model's nominal 128,000
        start = len(server.requests)
        events = [e async for e in h.loop.compact()]
        assert events[-1] == TurnDone("stop"), events
        assert h.entries()[-1]["type"] == "compaction"
        assert len(fake.refused) == 1  # the first, too large, then parts that fit
        assert len(server.requests) - start >= 3
        assert all(server_count(r.body) <= 2_500 for r in server.requests[start + 1 :])
    finally:
        await h.close()


@pytest.mark.parametrize("api", ["openai", "anthropic"])
async def test_a_tokenizer_that_counts_more_than_the_estimate_splits_the_summary(
    server: FakeModelServer, tmp_path: Path, api: str
) -> None:
    """The window is known already (the real llama.cpp server: 1,024 tokens), but its tokenizer
    counts 3 of its tokens for each one estimated (a small vocabulary on text it has few tokens
    for): the summarization request the estimate says fits is refused. The refusal's prompt count shrinks the budget, and the summary is made in
    smaller parts instead of the compaction failing (``400 exceed_context_size``)."""
    h, fake = windowed(server, tmp_path, "llamacpp", api)
    fake.window = 3_000
    counted: list[int] = []

    def refuse_by_a_larger_count(request: RecordedRequest) -> Response:
        tokens = server_count(request.body) * 3
        counted.append(tokens)
        if tokens > fake.window:
            fake.refused.append(tokens)
            return overflow_error("llamacpp", fake.window, tokens)
        return fake.say(SUMMARY)(tokens)

    server.responder = refuse_by_a_larger_count
    summarizer = h.loop.summarizer(fake.window)
    messages: list[dict[str, Any]] = [
        {"role": "user", "content": [{"type": "text", "text": f"part {i}: " + "words of the talk " * 160}]}
        for i in range(8)
    ]
    summary, _ = await summarizer.summarize(messages, None, None)
    assert summary == SUMMARY
    assert fake.refused, "the estimate was meant to undercount: the first request must be refused"
    assert summarizer.token_scale > 2.5 and summarizer.context_window == fake.window
    assert counted[-1] <= fake.window and len(counted) > len(fake.refused) + 1  # the parts all fit
