"""The provider adapters: real SDKs against the fake server, normalized events, error classification."""

from __future__ import annotations

from typing import Any

import pytest

from agent_tui.projection.request import Prepared, PreparedMessage
from agent_tui.providers.anthropic_provider import AnthropicProvider, map_stop_reason
from agent_tui.providers.base import classify, retry_after_seconds
from agent_tui.providers.events import (
    MessageBuilder,
    ProviderError,
    Stop,
    TextDelta,
    ThinkingDelta,
    ToolCall,
    ToolCallDelta,
    Usage,
)
from agent_tui.providers.openai_provider import OpenAIProvider, map_finish_reason
from tests.support.fake_model_server import (
    FakeModelServer,
    anthropic_error,
    anthropic_stream,
    call,
    openai_error,
    openai_stream,
    redacted_thinking,
    text,
    thinking,
    tool_use,
)

pytestmark = pytest.mark.timeout(20)


def prepared(prompt: str = "hi") -> Prepared:
    message = {"role": "user", "content": prompt, "timestamp": 0}
    return Prepared(
        "You are terse.", [], [PreparedMessage("user", [{"type": "text", "text": prompt}], "e1", message)]
    )


async def collect(provider: Any, body: dict[str, Any]) -> list[Any]:
    events = [e async for e in provider.stream(body)]
    await provider.aclose()
    return events


def build(events: list[Any], provider: str = "anthropic", api: str = "anthropic-messages") -> dict[str, Any]:
    builder = MessageBuilder(provider, api, "m", 1)
    for e in events:
        builder.add(e)
    return builder.message()


async def test_anthropic_stream_is_normalized(server: FakeModelServer) -> None:
    server.push(
        anthropic_stream(
            thinking("Think first.", signature="sig-1"),
            text("Hello world"),
            tool_use("toolu_1", "read", {"path": "a.txt", "offset": 2}, chunks=4),
            input_tokens=11,
            output_tokens=5,
            cache_read=100,
            cache_write=7,
        )
    )
    provider = AnthropicProvider(api_key="sk-test", base_url=server.anthropic_base_url)
    body = provider.request_body(prepared(), "claude-sonnet-5-5")
    events = await collect(provider, body)
    assert server.requests[0].body == body  # exactly the projection's body, nothing added
    assert server.requests[0].path == "/v1/messages"
    assert [e.text for e in events if isinstance(e, TextDelta) and e.text] == ["Hello ", "world"]
    assert "".join(e.text for e in events if isinstance(e, ThinkingDelta)) == "Think first."
    assert len([e for e in events if isinstance(e, ToolCallDelta) and e.arguments_delta]) == 4
    assert [e for e in events if isinstance(e, ToolCall)] == [
        ToolCall(2, "toolu_1", "read", {"path": "a.txt", "offset": 2})
    ]
    assert events[-1] == Stop("toolUse")
    assert [e for e in events if isinstance(e, Usage)][-1] == Usage(11, 5, 100, 7)
    message = build(events)
    assert message["content"] == [
        {"type": "thinking", "thinking": "Think first.", "thinkingSignature": "sig-1"},
        {"type": "text", "text": "Hello world"},
        {"type": "toolCall", "id": "toolu_1", "name": "read", "arguments": {"path": "a.txt", "offset": 2}},
    ]
    assert message["stopReason"] == "toolUse"
    assert message["usage"]["totalTokens"] == 123 and message["usage"]["cacheWrite"] == 7


async def test_anthropic_redacted_thinking(server: FakeModelServer) -> None:
    server.push(anthropic_stream(redacted_thinking("opaque=="), text("ok")))
    provider = AnthropicProvider(api_key="k", base_url=server.anthropic_base_url)
    message = build(await collect(provider, provider.request_body(prepared(), "claude-sonnet-5-5")))
    assert message["content"][0] == {
        "type": "thinking",
        "thinking": "[Reasoning redacted]",
        "thinkingSignature": "opaque==",
        "redacted": True,
    }


async def test_anthropic_thinking_levels_in_the_body() -> None:
    provider = AnthropicProvider(api_key="k")
    adaptive = provider.request_body(prepared(), "claude-sonnet-5-5", thinking_level="high")
    assert adaptive["thinking"] == {"type": "adaptive", "display": "summarized"}
    assert adaptive["output_config"] == {"effort": "high"}
    budget = provider.request_body(prepared(), "claude-sonnet-4-5", thinking_level="medium")
    assert budget["thinking"] == {"type": "enabled", "budget_tokens": 8192}
    assert "thinking" not in provider.request_body(prepared(), "claude-sonnet-5-5")
    assert "thinking" not in provider.request_body(
        prepared(), "claude-3-5-haiku-latest", thinking_level="high"
    )


@pytest.mark.parametrize(
    ("response", "kind", "retryable", "retry_after"),
    [
        (anthropic_error(429, "rate_limit_error", "slow down", retry_after="3"), "rate_limit", True, 3.0),
        (anthropic_error(529, "overloaded_error", "Overloaded"), "overloaded", True, None),
        (
            anthropic_error(500, "api_error", "Internal server error", retry_after_ms="250"),
            "server",
            True,
            0.25,
        ),
        (anthropic_error(503, "api_error", "unavailable"), "server", True, None),
        (anthropic_error(401, "authentication_error", "invalid x-api-key"), "auth", False, None),
        (anthropic_error(403, "permission_error", "no access"), "auth", False, None),
        (
            anthropic_error(400, "invalid_request_error", "prompt is too long: 300000 tokens"),
            "context_overflow",
            False,
            None,
        ),
        (anthropic_error(400, "invalid_request_error", "messages: bad"), "request", False, None),
    ],
)
async def test_anthropic_http_errors(
    server: FakeModelServer, response: Any, kind: str, retryable: bool, retry_after: float | None
) -> None:
    server.push(response)
    provider = AnthropicProvider(api_key="k", base_url=server.anthropic_base_url)
    events = await collect(provider, provider.request_body(prepared(), "claude-sonnet-5-5"))
    assert len(events) == 1 and isinstance(events[0], ProviderError)
    error = events[0]
    assert (error.kind, error.retryable, error.retry_after) == (kind, retryable, retry_after)
    assert error.status == response.status
    assert response.body["error"]["message"] in error.message
    assert len(server.requests) == 1  # the SDK's own retries are off


async def test_anthropic_error_event_and_dropped_stream(server: FakeModelServer) -> None:
    server.push(
        anthropic_stream(text("partial"), error={"type": "overloaded_error", "message": "Overloaded"}),
        anthropic_stream(text("cut off here")).dropped(5),
        anthropic_stream(text("no stop"), stop=False),
    )
    provider = AnthropicProvider(api_key="k", base_url=server.anthropic_base_url)
    body = provider.request_body(prepared(), "claude-sonnet-5-5")
    first = await collect(provider, body)
    assert first[-1].kind == "overloaded" and first[-1].retryable
    assert build(first)["content"] == [{"type": "text", "text": "partial"}]
    second = await collect(provider, body)
    assert second[-1].kind == "connection" and second[-1].retryable
    assert "closed the connection mid-reply" in second[-1].message
    third = await collect(provider, body)
    assert third[-1] == ProviderError("incomplete", "the stream ended without a stop reason", True)


async def test_connection_refused_is_retryable() -> None:
    provider = AnthropicProvider(api_key="k", base_url="http://127.0.0.1:9")  # nothing listens on port 9
    events = await collect(provider, provider.request_body(prepared(), "claude-sonnet-5-5"))
    assert events[-1].kind == "connection" and events[-1].retryable
    assert "could not reach the server" in events[-1].message


async def test_openai_stream_is_normalized(server: FakeModelServer) -> None:
    server.push(
        openai_stream(
            "Let me check.",
            reasoning="Need files.",
            tool_calls=[
                call("call_1", "read", {"path": "a"}, chunks=3),
                call("call_2", "bash", {"command": "ls -la"}, chunks=2),
            ],
            prompt_tokens=1000,
            completion_tokens=50,
            cached_tokens=600,
        )
    )
    provider = OpenAIProvider(api_key="sk-o", base_url=server.openai_base_url)
    body = provider.request_body(prepared(), "gpt-4.1")
    events = await collect(provider, body)
    assert server.requests[0].body == body
    assert server.requests[0].path == "/v1/chat/completions"
    assert server.requests[0].headers["authorization"] == "Bearer sk-o"
    message = build(events, "openai", "openai-completions")
    assert message["content"] == [
        {"type": "thinking", "thinking": "Need files.", "thinkingSignature": "reasoning_content"},
        {"type": "text", "text": "Let me check."},
        {"type": "toolCall", "id": "call_1", "name": "read", "arguments": {"path": "a"}},
        {"type": "toolCall", "id": "call_2", "name": "bash", "arguments": {"command": "ls -la"}},
    ]
    assert message["stopReason"] == "toolUse"
    assert message["usage"] == {
        "input": 400,
        "output": 50,
        "cacheRead": 600,
        "cacheWrite": 0,
        "totalTokens": 1050,
        "cost": {"input": 0, "output": 0, "cacheRead": 0, "cacheWrite": 0, "total": 0},
    }


async def test_openai_local_server_without_key_or_tool_ids(server: FakeModelServer) -> None:
    stream = openai_stream(tool_calls=[call("", "ls", {})], usage=False)
    server.push(stream)
    provider = OpenAIProvider(api_key=None, base_url=server.openai_base_url)
    events = await collect(provider, provider.request_body(prepared(), "qwen2.5-coder:7b"))
    calls = [e for e in events if isinstance(e, ToolCall)]
    assert calls[0].id.startswith("call_") and len(calls[0].id) > 10  # generated: the result needs an id
    assert server.requests[0].headers["authorization"] == "Bearer not-needed"
    assert events[-1] == Stop("toolUse")


async def test_openai_invalid_arguments_and_missing_finish_reason(server: FakeModelServer) -> None:
    broken = openai_stream(tool_calls=[call("call_x", "read", {"path": "a"})])
    broken.events[2] = (None, {**broken.events[2][1]})
    fragment = broken.events[2][1]["choices"][0]["delta"]["tool_calls"][0]["function"]
    fragment["arguments"] = "{not json"
    server.push(broken, openai_stream("hi", finish_reason="", usage=True))
    provider = OpenAIProvider(api_key="k", base_url=server.openai_base_url)
    body = provider.request_body(prepared(), "gpt-4.1")
    events = await collect(provider, body)
    (bad,) = [e for e in events if isinstance(e, ToolCall)]
    assert bad.arguments == {} and bad.parse_error is not None and "not valid JSON" in bad.parse_error
    second = await collect(provider, body)
    assert second[-1].kind == "incomplete"


async def test_openai_http_errors(server: FakeModelServer) -> None:
    server.push(
        openai_error(401, "Incorrect API key provided", "invalid_request_error"),
        openai_error(429, "Rate limit reached", "requests", retry_after="2"),
        openai_error(429, "You exceeded your current quota", "insufficient_quota"),
        openai_error(502, "Bad gateway"),
    )
    provider = OpenAIProvider(api_key="k", base_url=server.openai_base_url)
    body = provider.request_body(prepared(), "gpt-4.1")
    results = [(await collect(provider, body))[-1] for _ in range(4)]
    assert [(r.kind, r.retryable) for r in results] == [
        ("auth", False),
        ("rate_limit", True),
        ("rate_limit", False),
        ("server", True),
    ]
    assert results[1].retry_after == 2.0
    assert "Incorrect API key provided" in results[0].message


def test_stop_reason_maps_as_pi() -> None:
    assert map_stop_reason("end_turn") == Stop("stop")
    assert map_stop_reason("max_tokens") == Stop("length")
    assert map_stop_reason("tool_use") == Stop("toolUse")
    assert map_stop_reason("pause_turn") == Stop("stop")
    assert map_stop_reason("refusal").stop_reason == "error"
    assert map_finish_reason("stop") == Stop("stop")
    assert map_finish_reason("length") == Stop("length")
    assert map_finish_reason("tool_calls") == Stop("toolUse")
    assert map_finish_reason("content_filter") == Stop("error", "Provider finish_reason: content_filter")


def test_retry_after_parsing_and_error_event_classification() -> None:
    assert retry_after_seconds({"retry-after-ms": "1500"}) == 1.5
    assert retry_after_seconds({"retry-after": "7"}) == 7.0
    assert retry_after_seconds({"retry-after": "Wed, 21 Oct 2015 07:28:00 GMT"}) == 0.0
    assert retry_after_seconds({}) is None
    event = classify(200, {"type": "error", "error": {"type": "api_error", "message": "Internal"}})
    assert (event.kind, event.retryable, event.message) == ("server", True, "api_error: Internal")
    invalid = classify(200, {"type": "error", "error": {"type": "invalid_request_error", "message": "bad"}})
    assert not invalid.retryable


def test_providers_never_show_their_key() -> None:
    assert "sk-secret" not in repr(AnthropicProvider(api_key="sk-secret", base_url="http://x"))
    assert "sk-secret" not in repr(OpenAIProvider(api_key="sk-secret", base_url="http://x"))
