"""Context-overflow errors of every server family: recognised, and the window read out of them.

Each fixture under tests/fixtures/overflow is a real error body (status, body, which API); it is
served by the fake server and read back through the official SDK, as a real run reads it."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from agent_tui.projection.request import Prepared, PreparedMessage
from agent_tui.providers.anthropic_provider import AnthropicProvider
from agent_tui.providers.base import classify
from agent_tui.providers.events import ProviderError
from agent_tui.providers.gemini_provider import GeminiProvider
from agent_tui.providers.openai_provider import OpenAIProvider
from agent_tui.providers.overflow import Overflow
from tests.support.fake_model_server import OVERFLOW_FAMILIES, FakeModelServer, HTTPError, overflow_error

pytestmark = pytest.mark.timeout(20)

FIXTURES = sorted((Path(__file__).parent.parent / "fixtures" / "overflow").glob("*.json"))


def load(path: Path) -> dict[str, Any]:
    return dict(json.loads(path.read_text()))


def prepared() -> Prepared:
    message = {"role": "user", "content": "hi", "timestamp": 0}
    return Prepared("", [], [PreparedMessage("user", [{"type": "text", "text": "hi"}], "e1", message)])


async def error_through_sdk(server: FakeModelServer, api: str, response: HTTPError) -> ProviderError:
    provider: AnthropicProvider | OpenAIProvider | GeminiProvider
    if api == "gemini":
        provider = GeminiProvider(api_key="k", base_url=server.base_url)
        model = "gemini-2.5-flash"
    elif api == "anthropic":
        provider = AnthropicProvider(api_key="k", base_url=server.anthropic_base_url)
        model = "claude-sonnet-5-5"
    else:
        provider = OpenAIProvider(api_key="k", base_url=server.openai_base_url)
        model = "local-model"
    server.push(response)
    try:
        events = [e async for e in provider.stream(provider.request_body(prepared(), model))]
    finally:
        await provider.aclose()
    assert len(events) == 1 and isinstance(events[0], ProviderError), events
    return events[0]


def test_there_is_a_fixture_for_every_family() -> None:
    names = {p.stem.split("-")[0] for p in FIXTURES}
    assert {"anthropic", "openai", "gemini", "llamacpp", "vllm", "ollama", "lmstudio", "openrouter"} <= names
    assert any(load(p)["overflow"] is None for p in FIXTURES)  # and errors that are not overflows


@pytest.mark.parametrize("path", FIXTURES, ids=[p.stem for p in FIXTURES])
async def test_each_real_overflow_body_is_classified_with_its_window(
    server: FakeModelServer, path: Path
) -> None:
    fixture = load(path)
    error = await error_through_sdk(server, fixture["api"], HTTPError(fixture["status"], fixture["body"]))
    expected = fixture["overflow"]
    if expected is None:
        assert error.kind != "context_overflow" and error.overflow is None
        return
    assert error.kind == "context_overflow", error
    assert not error.retryable  # retrying the same prompt cannot help: it is compacted instead
    assert error.overflow == Overflow(expected["window"], expected["prompt_tokens"], expected["excess"])


@pytest.mark.parametrize("family", OVERFLOW_FAMILIES)
async def test_the_fake_servers_overflow_bodies_give_back_their_figures(
    server: FakeModelServer, family: str
) -> None:
    apis = ("anthropic", "openai") if family in ("anthropic", "llamacpp") else ("openai",)
    for api in apis:
        error = await error_through_sdk(server, api, overflow_error(family, 3_000, 3_456))
        assert error.kind == "context_overflow"
        assert error.overflow is not None
        if family == "ollama":  # Ollama says only how far over it is
            assert (error.overflow.window, error.overflow.excess) == (None, 456)
        else:
            assert error.overflow.window == 3_000 and error.overflow.prompt_tokens == 3_456


def test_an_overflow_in_a_stream_error_event_is_recognised_too() -> None:
    error = classify(
        200,
        {
            "type": "error",
            "error": {
                "type": "invalid_request_error",
                "message": "prompt is too long: 10 tokens > 5 maximum",
            },
        },
    )
    assert error.kind == "context_overflow" and error.overflow == Overflow(5, 10)


def test_a_rate_limit_counted_in_tokens_is_not_an_overflow() -> None:
    error = classify(
        429, {"error": {"message": "too many tokens per min (TPM)", "code": "rate_limit_exceeded"}}
    )
    assert error.kind == "rate_limit" and error.retryable and error.overflow is None
