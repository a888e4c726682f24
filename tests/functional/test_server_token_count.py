"""The server's token count decides whether a request near the threshold fits, against the fake
model server speaking the real count endpoints (Anthropic's ``count_tokens``, Gemini's
``countTokens``, llama.cpp's ``/apply-template`` + ``/tokenize``); its ``count:P`` fault makes it
count P percent of its usual figure, so its count and agent-tui's estimate disagree."""

from __future__ import annotations

import json
import subprocess
import sys
from collections.abc import AsyncIterator
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest

from agent_tui.agent.events import CompactionStarted, TurnDone
from agent_tui.agent.server_count import MAX_FAILURES, NEAR
from agent_tui.agent.window import CACHE_NAME, WindowCache
from agent_tui.config import CompactionConfig
from agent_tui.projection import registry
from agent_tui.projection.compaction import (
    SUMMARIZATION_SYSTEM_PROMPT,
    CompactionSettings,
    compaction_threshold,
)
from agent_tui.projection.models import ModelInfo, register
from agent_tui.projection.request import Prepared, PreparedMessage
from agent_tui.projection.tokens import estimate_message
from agent_tui.providers.gemini_provider import GeminiProvider
from agent_tui.providers.model_list import context_window
from agent_tui.providers.openai_provider import OpenAIProvider
from tests.support.agent_support import Harness
from tests.support.fake_model_server import (
    FakeModelServer,
    anthropic_stream,
    gemini_stream,
    gemini_text,
    text,
)
from tests.support.print_env import Env

pytestmark = pytest.mark.timeout(120)

ROOT = Path(__file__).resolve().parents[2]

SUMMARY = "## Goal\nAnswer the questions.\n\n## Progress\n### Done\n- [x] said hello"
FIRST = "first: " + " ".join(f"f{i:04d}" for i in range(400))  # ≈800 tokens: a summary makes it smaller
PROMPT = "question: " + " ".join(f"w{i:04d}" for i in range(750))  # ≈1,500 tokens estimated


@pytest.fixture(autouse=True)
def _small_window() -> None:
    register(ModelInfo("anthropic", "tiny-window", 8_000, 1_000))


@pytest.fixture
async def harness(server: FakeModelServer, tmp_path: Path) -> AsyncIterator[Harness]:
    h = Harness(server, tmp_path, model="tiny-window")
    h.config = replace(
        h.config,
        compaction=CompactionConfig(CompactionSettings(reserve_tokens=1_000, keep_recent_tokens=400)),
    )
    h.loop = h.new_loop()
    yield h
    await h.close()


def threshold(h: Harness) -> int:
    return compaction_threshold(h.loop.context_window(), h.loop.compaction_settings())


def prompt_tokens() -> int:
    return estimate_message({"role": "user", "content": [{"type": "text", "text": PROMPT}]})


def is_summary(body: dict[str, Any]) -> bool:
    return bool(body.get("system", [{}])[0].get("text") == SUMMARIZATION_SYSTEM_PROMPT)


async def two_turns(h: Harness, server: FakeModelServer, figure: int) -> list[Any]:
    """Turn 1 reports usage so that turn 2's figure (its usage + the estimate of PROMPT) is ``figure``;
    the events of turn 2."""
    reported = figure - prompt_tokens() - 20  # the reply's 20 output tokens count too
    server.push(anthropic_stream(text("hello"), input_tokens=reported, model="tiny-window"))
    first = await h.run(FIRST)
    assert isinstance(first[-1], TurnDone) and first[-1].stop_reason == "stop"
    assert not server.count_requests  # far from the threshold after turn 1: nothing asked
    server.push(
        anthropic_stream(text(SUMMARY), model="tiny-window"),  # a summary, if one is asked for
        anthropic_stream(text("answered"), model="tiny-window"),
    )
    events = await h.run(PROMPT)
    assert isinstance(events[-1], TurnDone) and events[-1].stop_reason == "stop"
    return events


@pytest.mark.parametrize("counting", [True, False])
async def test_estimate_fits_but_the_servers_count_does_not_so_it_compacts_first(
    harness: Harness, server: FakeModelServer, counting: bool
) -> None:
    if counting:
        server.fault("count:300")  # its tokenizer counts three times what the plain figure says
    limit = threshold(harness)
    figure = int(limit * (1 + NEAR) / 2)  # under the threshold, near it
    events = await two_turns(harness, server, figure)
    compactions = [e for e in events if isinstance(e, CompactionStarted)]
    turn_bodies = [r.body for r in server.requests if not is_summary(r.body)]
    if not counting:  # the estimate alone: it fits, sent as it is (and a real server would refuse it)
        assert compactions == [] and len(server.requests) == 2
        return
    (asked,) = server.count_requests
    assert asked.path == "/v1/messages/count_tokens"
    # the request turn 2 was about to send: turn 1's question and reply, then the new prompt
    assert [m["role"] for m in asked.body["messages"]] == ["user", "assistant", "user"]
    assert asked.body["messages"][-1]["content"][-1]["text"] == PROMPT
    assert asked.body["system"] == turn_bodies[0]["system"] and asked.body["tools"] == turn_bodies[0]["tools"]
    assert "max_tokens" not in asked.body and "stream" not in asked.body
    assert server.tokens(asked.body) > limit >= figure
    # compacted before turn 2 was sent: no refused request, the summary, then turn 2 once
    assert [c.reason for c in compactions] == ["threshold"]
    assert [is_summary(r.body) for r in server.requests] == [False, True, False]
    assert [e.type for e in harness.loop.projection().path].count("compaction") == 1
    sent = str(server.requests[2].body["messages"])
    assert "compacted into the following summary" in sent and FIRST not in sent and PROMPT in sent


@pytest.mark.parametrize("counting", [True, False])
async def test_estimate_is_over_but_the_servers_count_fits_so_nothing_is_compacted(
    harness: Harness, server: FakeModelServer, counting: bool
) -> None:
    if counting:
        server.fault("count:100")
    limit = threshold(harness)
    events = await two_turns(harness, server, limit + 300)  # over by the estimate
    compactions = [e for e in events if isinstance(e, CompactionStarted)]
    if not counting:  # the estimate alone compacts
        assert [c.reason for c in compactions] == ["threshold"]
        assert [is_summary(r.body) for r in server.requests] == [False, True, False]
        return
    (asked,) = server.count_requests
    assert server.tokens(asked.body) < limit
    assert compactions == [] and [is_summary(r.body) for r in server.requests] == [False, False]
    assert server.pending == 1  # the summary was never asked for


async def test_a_repeat_decision_is_not_recounted_and_a_failing_server_is_left_alone(
    harness: Harness, server: FakeModelServer
) -> None:
    counts = harness.loop.server_counts
    body = harness.loop.request_body()
    server.fault("count:100")
    first = await counts.count(harness.loop.provider, body)
    assert first == server.tokens(server.count_requests[0].body)
    assert await counts.count(harness.loop.provider, {**body, "max_tokens": 1}) == first  # same input
    assert len(server.count_requests) == 1 and counts.asked == 1
    del server.faults["count"]  # now the endpoint answers 404: the estimate decides, silently
    other = {**body, "messages": [{"role": "user", "content": "something else"}]}
    for n in range(MAX_FAILURES + 2):
        assert await counts.count(harness.loop.provider, {**other, "n": n}) is None
    assert counts.asked == 1 + MAX_FAILURES  # not asked again after MAX_FAILURES failures


def chat_body(provider: OpenAIProvider) -> dict[str, Any]:
    message = PreparedMessage("user", [{"type": "text", "text": "count me"}], "u1", {"role": "user"})
    return provider.request_body(Prepared("Be brief.", [], [message]), "local-model")


async def test_llama_cpp_is_asked_only_once_its_props_said_it_is_llama_cpp(server: FakeModelServer) -> None:
    server.fault("count:100")
    provider = OpenAIProvider(api_key=None, base_url=server.openai_base_url)
    body = chat_body(provider)
    try:
        assert await provider.count_tokens(body) is None  # not known as llama.cpp: never probed
        assert server.count_requests == []
        server.props = {"default_generation_settings": {"n_ctx": 4096}}
        spec = registry.spec("openai")
        assert context_window(spec, server.openai_base_url, "local-model", None) == 4096
        counted = await provider.count_tokens(body)
    finally:
        await provider.aclose()
    template, tokenize = server.count_requests
    assert template.path == "/apply-template" and template.body["messages"] == body["messages"]
    assert tokenize.path == "/tokenize" and counted == (len(tokenize.body["content"]) + 3) // 4 > 0


async def test_gemini_counts_its_contents_and_the_system_instruction_is_estimated(
    server: FakeModelServer,
) -> None:
    server.fault("count:200")
    provider = GeminiProvider(api_key="k", base_url=server.base_url)
    message = PreparedMessage("user", [{"type": "text", "text": "count me " * 50}], "u1", {"role": "user"})
    body = provider.request_body(Prepared("Be brief.", [], [message]), "gemini-2.5-flash")
    server.push(gemini_stream(gemini_text("unused")))
    try:
        counted = await provider.count_tokens(body)
    finally:
        await provider.aclose()
    (asked,) = server.count_requests
    assert asked.path == "/v1beta/models/gemini-2.5-flash:countTokens"
    assert asked.body["contents"][0]["parts"][0]["text"] == "count me " * 50
    assert counted == server.tokens(asked.body) + 3  # + "Be brief." estimated (9 characters)


@pytest.mark.slow
@pytest.mark.parametrize("counting", [True, False])
def test_print_mode_asks_the_servers_count_near_the_threshold(tmp_path: Path, counting: bool) -> None:
    """``-p`` against the fake server run as a process (``--fault count:300``), its 8,000-token
    window known from the data dir's cache: turn 2's figure fits by the estimate (turn 1 reported a
    small usage), the server counts it three times over, and the run compacts before sending it."""
    log = tmp_path / "server.jsonl"
    faults = ["--fault", "count:300"] if counting else []
    proc = subprocess.Popen(
        [sys.executable, "-m", "tests.support.fake_model_server", *faults, "--log", str(log)],
        cwd=ROOT,
        stdout=subprocess.PIPE,
        text=True,
    )
    try:
        assert proc.stdout is not None
        url = proc.stdout.readline().strip()
        env = Env(tmp_path, url)
        model = registry.spec("anthropic").default_model
        WindowCache(env.home / CACHE_NAME).put("anthropic", url, model, 8_000)
        out = env.run("-p", FIRST)
        assert out.returncode == 0, out.stderr
        # the replies report 100 input tokens: turn 2's figure is 120 + the estimate of ``second``,
        # 5,700: under the 6,000 threshold (8,000 less the 2,000 reserve fitted to it), near it
        second = "question: " + " ".join(f"x{i:05d}" for i in range(2_790))
        out = env.run("-p", second, "-c")
        assert out.returncode == 0, out.stderr
    finally:
        proc.terminate()
        assert proc.wait(timeout=10) == 0
    lines = [json.loads(line) for line in log.read_text().splitlines()]
    paths = [line["path"] for line in lines]
    (session,) = env.sessions()
    compacted = any(e["type"] == "compaction" for e in env.entries(session))
    if not counting:  # the count endpoint answers 404: the estimate decides, and it fits
        assert paths == ["/v1/messages", "/v1/messages"] and not compacted
        return
    assert paths.count("/v1/messages/count_tokens") == 1
    assert [p for p in paths if p != "/v1/messages/count_tokens"] == ["/v1/messages"] * 3  # + summary
    assert compacted and out.stdout.strip() == ("reply to: " + second[:80]).strip()  # turn 2 answered
