"""Provider fault campaign: what a model server can do wrong, against the real SDKs.

Turn after turn on one session, for Anthropic and OpenAI, the fake server
answers with a random plan of faults before (or instead of) a good reply:
429, 529/503, 500, a hang before the first byte and a stall in mid-stream
(the client's timeout fires), a stream dropped half way, invalid JSON in a
``data:`` line, an error event inside the stream, a stream without a stop
reason; good replies come with garbage lines, unknown event types and no
``message_stop`` / ``[DONE]``, which must be ignored. Checked after every turn:

- recovered (retried within the policy; the turn ends ``stop`` with the good
  reply) or reported (``TurnDone("error")`` after exactly one one-line ``TurnError``);
- every partial reply is kept, as an assistant message with stopReason ``error``;
- nothing is lost: the file only grew, loads, projects to a valid request, and
  every request the server received equals the projection at that moment.

Context overflow, bad keys and a hang in print mode are checked on their own.
"""

from __future__ import annotations

import asyncio
import os
import random
import subprocess
import sys
import threading
import time
from collections import Counter
from collections.abc import Callable
from dataclasses import replace
from pathlib import Path

import pytest

from agent_tui.agent.events import TurnDone, TurnError
from agent_tui.config import RetryPolicy
from agent_tui.store.index import SessionIndex
from agent_tui.store.reader import read_file
from tests.support.agent_support import Harness
from tests.support.campaign_support import SEED, report, request_problems, scale
from tests.support.fake_model_server import (
    RAW,
    FakeModelServer,
    Hang,
    Response,
    Stream,
    anthropic_error,
    anthropic_stream,
    call,
    openai_error,
    openai_stream,
    text,
    tool_use,
)

TURNS = scale(14, 300)
TIMEOUT = 0.5  # the client's: seconds without a byte before a request is given up
RETRY = RetryPolicy(max_retries=3, base_delay=0.001, max_delay=0.01)
pytestmark = [pytest.mark.timeout(scale(120, 3600)), pytest.mark.slow]

PARTIAL = "This reply is cut off somewhere in the middle of its words"


def reply(provider: str, words: str, *, tool: str | None = None) -> Stream:
    if provider == "anthropic":
        blocks = [text(words)]
        if tool:
            blocks.append(tool_use(tool, "ls", {"path": "."}))
        return anthropic_stream(*blocks)
    return openai_stream(words, tool_calls=[call(tool, "ls", {"path": "."})] if tool else ())


def _mid(stream: Stream) -> int:
    """An event index inside the text: after the start, some deltas already sent."""
    return 5 if stream.events[0][0] == "message_start" else 4


# -- faults: each makes one response; ``partial`` says whether text streams before it fails ----------

Fault = Callable[[str, threading.Event], Response]


def http_429(provider: str, _: threading.Event) -> Response:
    if provider == "anthropic":
        return anthropic_error(429, "rate_limit_error", "rate limited", retry_after_ms="5")
    return openai_error(429, "Rate limit reached", "requests", retry_after_ms="5")


def http_overloaded(provider: str, _: threading.Event) -> Response:
    if provider == "anthropic":
        return anthropic_error(529, "overloaded_error", "Overloaded")
    return openai_error(503, "The server is overloaded", "server_error")


def http_500(provider: str, _: threading.Event) -> Response:
    if provider == "anthropic":
        return anthropic_error(500, "api_error", "Internal server error")
    return openai_error(500, "The server had an error", "server_error")


def hang(provider: str, _: threading.Event) -> Response:
    return Hang(30)


def stall(provider: str, never: threading.Event) -> Response:
    stream = reply(provider, PARTIAL)
    stream.gate, stream.gate_at = never, _mid(stream)
    return stream


def dropped(provider: str, _: threading.Event) -> Response:
    stream = reply(provider, PARTIAL)
    return stream.dropped(_mid(stream))


def invalid_json(provider: str, _: threading.Event) -> Response:
    stream = reply(provider, PARTIAL)
    bad = ("content_block_delta", '{"type": "content_block_delta", "index": 0, "delta": {"text": "x"')
    stream.events.insert(_mid(stream), bad if provider == "anthropic" else (None, "{not json at all"))
    return stream


def error_event(provider: str, _: threading.Event) -> Response:
    if provider == "anthropic":
        return anthropic_stream(text(PARTIAL), error={"type": "overloaded_error", "message": "Overloaded"})
    stream = reply(provider, PARTIAL)
    stream.events.insert(
        _mid(stream), (None, {"error": {"message": "upstream failed", "type": "server_error"}})
    )
    return stream


def no_stop(provider: str, _: threading.Event) -> Response:
    if provider == "anthropic":
        return anthropic_stream(text(PARTIAL), stop=False)
    return openai_stream(PARTIAL, finish_reason="", done=False)


RETRYABLE: dict[str, tuple[Fault, bool]] = {  # name: (fault, streams part of a reply before failing)
    "429": (http_429, False),
    "529/503 overloaded": (http_overloaded, False),
    "500": (http_500, False),
    "hang (timeout)": (hang, False),
    "stall mid-stream (timeout)": (stall, True),
    "dropped mid-stream": (dropped, True),
    "invalid JSON in data": (invalid_json, True),
    "error event in stream": (error_event, True),
    "no stop reason": (no_stop, True),
}


def decorate(provider: str, stream: Stream, rng: random.Random, kinds: Counter[str]) -> Stream:
    """Harmless oddities a good reply may carry: they must not break it."""
    if rng.random() < 0.3:
        garbage = ": keep-alive comment\n\ngarbage line without a colon\n\n"
        if provider == "anthropic":  # the OpenAI SDK reads a lone ``retry:`` field as an event to decode
            garbage += "retry: 10\n\n"
        stream.events.insert(2, (RAW, garbage))
        kinds["garbage lines (ignored)"] += 1
    if rng.random() < 0.3:
        odd = (
            ("mystery_event", {"type": "mystery_event"})
            if provider == "anthropic"
            else (
                None,
                {"id": "x", "object": "mystery.chunk", "choices": [], "extra": {"a": 1}},
            )
        )
        stream.events.insert(3, odd)
        kinds["unknown event type (ignored)"] += 1
    if rng.random() < 0.3:
        last = stream.events[-1]
        if last[0] == "message_stop" or last[1] == "[DONE]":
            stream.events.pop()
            kinds["missing message_stop/[DONE] (ignored)"] += 1
    return stream


def one_line(message: str) -> None:
    assert message and "\n" not in message and "Traceback" not in message, message


def run_campaign(provider: str, server: FakeModelServer, tmp: Path, seed: int) -> tuple[Counter[str], int]:
    rng = random.Random(seed)
    never = threading.Event()  # stalls wait on it: it is never set
    h = Harness(server, tmp, provider=provider, retry=RETRY)
    h.config = replace(h.config, timeout=TIMEOUT)
    h.loop = h.new_loop()
    (h.workdir / "f.txt").write_text("x")
    figures: Counter[str] = Counter()
    before = b""

    async def turns() -> None:
        nonlocal before
        for turn in range(TURNS):
            plan = [rng.choice(list(RETRYABLE)) for _ in range(rng.choice([0, 1, 1, 2, 3, 4]))]
            for name in plan:
                fault, _ = RETRYABLE[name]
                server.push(fault(provider, never))
                figures[name] += 1
            gives_up = len(plan) > RETRY.max_retries
            final_words = f"Answer {turn} complete."
            if not gives_up:
                tool = f"call_{turn}" if rng.random() < 0.3 else None
                server.push(
                    decorate(
                        provider,
                        reply(provider, "Working." if tool else final_words, tool=tool),
                        rng,
                        figures,
                    )
                )
                if tool:
                    server.push(decorate(provider, reply(provider, final_words), rng, figures))
            assistants_before = len(h.messages("assistant"))
            events = await h.run(f"question {turn}")
            done = events[-1]
            assert isinstance(done, TurnDone)
            errors = [e for e in events if isinstance(e, TurnError)]
            new = h.messages("assistant")[assistants_before:]
            attempts = plan[: RETRY.max_retries + 1]
            failed = [m for m in new if m["stopReason"] == "error"]
            assert len(failed) == len(attempts), (plan, [m.get("errorMessage") for m in failed])
            for name, message in zip(attempts, failed, strict=True):
                one_line(message["errorMessage"])
                if RETRYABLE[name][1]:  # the partial reply is kept
                    kept = "".join(b.get("text", "") for b in message["content"] if b["type"] == "text")
                    assert kept and PARTIAL.startswith(kept.rstrip()), (name, kept)
                    figures["partial replies kept"] += 1
            if gives_up:
                assert done.stop_reason == "error" and len(errors) == 1, events
                one_line(errors[0].message)
                assert f"gave up after {RETRY.max_retries} retries" in errors[0].message
                figures["reported in one line"] += 1
            else:
                assert done.stop_reason == "stop" and not errors, (plan, errors)
                assert new[-1]["content"][0]["text"] == final_words
                figures["recovered"] += 1
            data = h.session.path.read_bytes()
            assert data.startswith(before)
            before = data
            index = SessionIndex(read_file(h.session.path))
            assert not index.warnings and request_problems(index) == []
        h.assert_requests_match_context()
        await h.close()

    asyncio.run(turns())
    return figures, len(server.requests)


def test_random_provider_faults(
    server: FakeModelServer, tmp_path: Path, request: pytest.FixtureRequest
) -> None:
    started = time.monotonic()
    total: Counter[str] = Counter()
    requests = 0
    for number, provider in enumerate(("anthropic", "openai")):
        server.requests.clear()
        (tmp_path / provider).mkdir()
        figures, sent = run_campaign(provider, server, tmp_path / provider, SEED + number)
        total.update(figures)
        requests += sent
    faults = sum(total[name] for name in RETRYABLE) + sum(v for k, v in total.items() if "(ignored)" in k)
    report(
        request,
        "provider faults",
        {
            "turns": 2 * TURNS,
            "faults injected": faults,
            "requests": requests,
            **total,
            "entries lost": 0,
            "seed": SEED,
            "seconds": f"{time.monotonic() - started:.1f}",
        },
    )


async def test_overflow_and_bad_key_are_reported_in_one_line(server: FakeModelServer, tmp_path: Path) -> None:
    h = Harness(server, tmp_path, retry=RETRY)
    try:
        server.push(anthropic_stream(text("First answer.")))
        await h.run("hello")
        before = h.session.path.read_bytes()
        # Nothing old enough to compact: the overflow is reported, the attempt hidden, nothing lost.
        server.push(
            anthropic_error(
                400, "invalid_request_error", "prompt is too long: 250000 tokens > 200000 maximum"
            )
        )
        events = await h.run("a long question")
        errors = [e for e in events if isinstance(e, TurnError)]
        assert events[-1] == TurnDone("error") and len(errors) == 1
        one_line(errors[0].message)
        assert "prompt is too long" in errors[0].message
        assert h.session.path.read_bytes().startswith(before)
        assert h.messages("user")[-1]["content"][0]["text"] == "a long question"
        server.push(anthropic_error(401, "authentication_error", "invalid x-api-key"))
        events = await h.run("again")
        errors = [e for e in events if isinstance(e, TurnError)]
        assert len(errors) == 1 and "API key was rejected" in errors[0].message
        one_line(errors[0].message)
        server.push(anthropic_stream(text("Back.")))
        events = await h.run("and now")
        assert events[-1] == TurnDone("stop")
        assert request_problems(SessionIndex(read_file(h.session.path))) == []
    finally:
        await h.close()


def test_a_hang_in_print_mode_is_reported_not_waited_on(server: FakeModelServer, tmp_path: Path) -> None:
    work = tmp_path / "work"
    work.mkdir()
    config = tmp_path / "config.toml"
    config.write_text("timeout = 0.5\n[retry]\nmax_retries = 1\nbase_delay = 0.01\n")
    env = {k: v for k, v in os.environ.items() if not k.startswith(("ANTHROPIC_", "OPENAI_", "AGENT_TUI_"))}
    env.update(
        AGENT_TUI_HOME=str(tmp_path / "home"),
        AGENT_TUI_CONFIG=str(config),
        ANTHROPIC_API_KEY="test-key-0123456789",
        ANTHROPIC_BASE_URL=server.anthropic_base_url,
    )
    # A client that waited for the hang would hit the subprocess timeout below (it ends only when
    # the client goes away); one that gave up says "timed out" after its own 0.5 s.
    server.push(stall("anthropic", threading.Event()), Hang(600))
    result = subprocess.run(
        [sys.executable, "-m", "agent_tui", "-p", "hello"],
        cwd=work,
        env=env,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert result.returncode == 1 and result.stdout == "This reply \n"  # the partial reply, then nothing
    lines = result.stderr.splitlines()
    assert lines[0].startswith("[retrying]")  # the partial reply on stdout is marked as cut off
    assert (
        lines[1].startswith("retrying in")
        and "the server sent nothing for 0.5 s during the response" in lines[1]
    )
    errors = [x for x in lines if x.startswith("agent-tui:") and not x.startswith("agent-tui: session ")]
    assert errors == [
        f"agent-tui: anthropic (claude-opus-5-5): timed out: no answer from the server within 0.5 s "
        f"[{server.anthropic_base_url}] (gave up after 1 retry)"
    ]
    (session,) = (tmp_path / "home").glob("sessions/*/*.jsonl")
    assert '"text":"This reply "' in session.read_text()  # the partial reply is kept
