"""The OpenAI Responses adapter: the real openai SDK's ``responses.stream`` against the fake server's
Responses event stream; reasoning kept whole and sent back encrypted, stateless (store false)."""

from __future__ import annotations

import json
from typing import Any

import pytest

from agent_tui.projection.request import Prepared, PreparedMessage
from agent_tui.projection.wire import openai_responses
from agent_tui.providers.events import MessageBuilder, ProviderError, Stop, TextDelta, ThinkingDelta, ToolCall
from agent_tui.providers.openai_responses_provider import OpenAIResponsesProvider
from tests.support.fake_model_server import (
    FakeModelServer,
    function_call_item,
    message_item,
    openai_error,
    reasoning_item,
    responses_error_event,
    responses_stream,
)

pytestmark = pytest.mark.timeout(20)


def user(text: str, source: str = "u1") -> PreparedMessage:
    return PreparedMessage(
        "user", [{"type": "text", "text": text}], source, {"role": "user", "content": text}
    )


def prepared(*messages: PreparedMessage, tools: list[dict[str, Any]] | None = None) -> Prepared:
    return Prepared("You are terse.", tools or [], list(messages) or [user("hi")])


async def run(provider: OpenAIResponsesProvider, body: dict[str, Any]) -> tuple[list[Any], dict[str, Any]]:
    events = [e async for e in provider.stream(body)]
    await provider.aclose()
    builder = MessageBuilder("openai", openai_responses.API, body["model"], 1)
    for e in events:
        builder.add(e)
    return events, builder.message()


READ_TOOL = {"name": "read", "description": "Read a file", "parameters": {"type": "object", "properties": {}}}


async def test_reasoning_text_and_a_tool_call_become_pis_blocks(server: FakeModelServer) -> None:
    server.push(
        responses_stream(
            reasoning_item("Look at the file.", "ENCRYPTED-1", item_id="rs_7"),
            message_item("Reading it now.", item_id="msg_7"),
            function_call_item("call_9", "read", {"path": "a.txt"}, item_id="fc_9"),
            input_tokens=120,
            cached_tokens=100,
            output_tokens=30,
        )
    )
    provider = OpenAIResponsesProvider(api_key="sk-test", base_url=server.openai_base_url)
    body = provider.request_body(prepared(tools=[READ_TOOL]), "gpt-5.4", thinking_level="high")
    events, message = await run(provider, body)

    request = server.requests[0]
    assert request.path == "/v1/responses"
    assert request.body == {**body, "stream": True}  # responses.stream sends the body as written
    assert request.body["store"] is False
    assert request.body["reasoning"] == {"effort": "high", "summary": "auto"}
    assert request.body["include"] == ["reasoning.encrypted_content"]
    assert request.body["input"][0] == {"role": "developer", "content": "You are terse."}
    assert request.body["tools"][0]["type"] == "function" and request.body["tools"][0]["name"] == "read"

    assert "".join(e.text for e in events if isinstance(e, ThinkingDelta)) == "Look at the file."
    assert "".join(e.text for e in events if isinstance(e, TextDelta)) == "Reading it now."
    assert [e for e in events if isinstance(e, ToolCall)] == [
        ToolCall(2, "call_9|fc_9", "read", {"path": "a.txt"})
    ]
    assert events[-1] == Stop("toolUse")
    thought, text, tool = message["content"]
    assert thought["thinking"] == "Look at the file."
    assert json.loads(thought["thinkingSignature"]) == {
        "id": "rs_7",
        "type": "reasoning",
        "summary": [{"type": "summary_text", "text": "Look at the file."}],
        "encrypted_content": "ENCRYPTED-1",
    }
    assert text == {"type": "text", "text": "Reading it now.", "textSignature": '{"v":1,"id":"msg_7"}'}
    assert tool["id"] == "call_9|fc_9"
    assert message["usage"]["input"] == 20 and message["usage"]["cacheRead"] == 100
    assert message["usage"]["output"] == 30


async def test_the_next_request_sends_the_reasoning_back_encrypted(server: FakeModelServer) -> None:
    """The whole turn goes back, stateless: the reasoning item with its encrypted content, the
    message under its id, the call under its ids, then the result."""
    server.push(
        responses_stream(
            reasoning_item("Plan.", "ENC-XYZ", item_id="rs_1"),
            function_call_item("call_1", "read", {"path": "a"}, item_id="fc_1"),
        ),
        responses_stream(message_item("Done.", item_id="msg_2")),
    )
    provider = OpenAIResponsesProvider(api_key="sk-test", base_url=server.openai_base_url)
    first = provider.request_body(prepared(tools=[READ_TOOL]), "gpt-5.4", thinking_level="medium")
    _, assistant = await run(provider, first)
    result = {"role": "toolResult", "toolCallId": "call_1|fc_1", "toolName": "read"}
    second = provider.request_body(
        prepared(
            user("hi"),
            PreparedMessage("assistant", assistant["content"], "a1", assistant),
            PreparedMessage("toolResult", [{"type": "text", "text": "contents"}], "t1", result),
            tools=[READ_TOOL],
        ),
        "gpt-5.4",
        thinking_level="medium",
    )
    _, final = await run(provider, second)
    sent = server.requests[1].body["input"]
    assert sent[2] == {
        "id": "rs_1",
        "type": "reasoning",
        "summary": [{"type": "summary_text", "text": "Plan."}],
        "encrypted_content": "ENC-XYZ",
    }
    assert sent[3] == {
        "type": "function_call",
        "call_id": "call_1",
        "name": "read",
        "arguments": '{"path": "a"}',
        "id": "fc_1",
    }
    assert sent[4] == {"type": "function_call_output", "call_id": "call_1", "output": "contents"}
    assert final["content"][0]["text"] == "Done." and final["stopReason"] == "stop"


async def test_encrypted_content_only_in_the_terminal_event_is_kept(server: FakeModelServer) -> None:
    """Azure leaves encrypted_content out of output_item.done; the completed response has it."""
    item = reasoning_item("Hm.", "ENC-LATE")
    item.encrypted_in_done = False
    server.push(responses_stream(item, message_item("ok")))
    provider = OpenAIResponsesProvider(api_key="k", base_url=server.openai_base_url)
    _, message = await run(provider, provider.request_body(prepared(), "gpt-5.4", thinking_level="low"))
    assert json.loads(message["content"][0]["thinkingSignature"])["encrypted_content"] == "ENC-LATE"


async def test_another_models_reasoning_is_not_sent() -> None:
    """pi's rule: reasoning is valid only for the model that produced it (and its API)."""
    signature = json.dumps({"id": "rs_1", "type": "reasoning", "summary": [], "encrypted_content": "E"})
    content: list[dict[str, Any]] = [
        {"type": "thinking", "thinking": "t", "thinkingSignature": signature},
        {"type": "text", "text": "hello", "textSignature": '{"v":1,"id":"msg_1"}'},
        {"type": "toolCall", "id": "call_1|fc_1", "name": "read", "arguments": {}},
    ]
    for api, model in (("openai-responses", "gpt-5.2"), ("anthropic-messages", "gpt-5.4")):
        message = {"role": "assistant", "api": api, "model": model, "content": content}
        body = openai_responses.request_body(
            prepared(user("hi"), PreparedMessage("assistant", content, "a1", message)), "gpt-5.4"
        )
        items = body["input"][2:]
        assert [i.get("type") for i in items] == ["message", "function_call"]
        assert items[0]["id"] == "msg_pi_1"  # not the other model's message id
        assert "id" not in items[1] and items[1]["call_id"] == "call_1"


def test_reasoning_effort_from_the_thinking_level() -> None:
    assert openai_responses.reasoning_effort("high", "gpt-5.4") == "high"
    assert openai_responses.reasoning_effort("off", "gpt-5.4") == "none"  # gpt-5.1 and later turn it off
    assert openai_responses.reasoning_effort("off", "gpt-5") is None  # gpt-5 cannot: nothing is sent
    assert openai_responses.reasoning_effort("minimal", "o3") == "low"  # clamped to the model's levels
    assert openai_responses.reasoning_effort("high", "gpt-4.1") is None  # not a reasoning model
    body = openai_responses.request_body(prepared(), "gpt-5.4", thinking_level="off")
    assert body["reasoning"] == {"effort": "none"} and "include" not in body
    assert "reasoning" not in openai_responses.request_body(prepared(), "gpt-4.1", thinking_level="high")
    assert openai_responses.request_body(prepared(), "gpt-4.1")["input"][0]["role"] == "system"


async def test_cut_off_by_the_output_limit_and_errors(server: FakeModelServer) -> None:
    server.push(
        responses_stream(message_item("partial"), status="incomplete", incomplete_reason="max_output_tokens"),
        responses_stream(message_item("no end"), complete=False),
        responses_error_event("server_error", "The server had an error"),
        openai_error(429, "Rate limit reached", "rate_limit_error", retry_after="2"),
        openai_error(
            400,
            "Your input exceeds the context window of this model.",
            "invalid_request_error",
        ),
    )
    provider = OpenAIResponsesProvider(api_key="k", base_url=server.openai_base_url)
    body = provider.request_body(prepared(), "gpt-4.1")
    events, message = await run(provider, body)
    assert events[-1] == Stop("length") and message["content"][0]["text"] == "partial"
    events, _ = await run(provider, body)
    assert isinstance(events[-1], ProviderError) and events[-1].kind == "incomplete"
    events, _ = await run(provider, body)
    assert isinstance(events[-1], ProviderError) and "The server had an error" in events[-1].message
    assert events[-1].retryable
    events, _ = await run(provider, body)
    assert isinstance(events[-1], ProviderError) and events[-1].kind == "rate_limit"
    assert events[-1].retry_after == 2
    events, _ = await run(provider, body)
    assert isinstance(events[-1], ProviderError) and events[-1].kind == "context_overflow"


async def test_a_failed_response_is_an_error_with_the_servers_words(server: FakeModelServer) -> None:
    server.push(
        responses_stream(
            message_item("half"),
            status="failed",
            error={"code": "server_error", "message": "The model produced invalid content."},
        )
    )
    provider = OpenAIResponsesProvider(api_key="k", base_url=server.openai_base_url)
    events, message = await run(provider, provider.request_body(prepared(), "gpt-4.1"))
    assert isinstance(events[-1], ProviderError) and "invalid content" in events[-1].message
    assert events[-1].retryable  # a server error: tried again
    assert message["stopReason"] == "error" and message["content"][0]["text"] == "half"
