"""The Gemini adapter: the real google-genai SDK against the fake server's
``streamGenerateContent?alt=sse`` stream; thinking from the thinking level, function calling,
thought signatures kept and sent back only to the model that made them."""

from __future__ import annotations

import base64
from typing import Any

import pytest

from agent_tui.projection.request import Prepared, PreparedMessage
from agent_tui.projection.wire import google_generative_ai as gemini
from agent_tui.providers.events import MessageBuilder, ProviderError, Stop, TextDelta, ThinkingDelta, ToolCall
from agent_tui.providers.gemini_provider import GeminiProvider
from tests.support.fake_model_server import (
    FakeModelServer,
    gemini_call,
    gemini_error,
    gemini_stream,
    gemini_text,
    gemini_thought,
)

pytestmark = pytest.mark.timeout(20)

SIG_A = base64.b64encode(b"signature-a").decode()
SIG_B = base64.b64encode(b"signature-b").decode()
READ_TOOL = {
    "name": "read",
    "description": "Read a file",
    "parameters": {"type": "object", "properties": {"path": {"type": "string"}}, "required": ["path"]},
}


def camel(value: Any) -> Any:
    """Field names as lowerCamelCase. The API takes either spelling (proto JSON), and the SDK writes
    some nested objects (thinkingConfig, a declaration's schema field) in snake_case."""
    if isinstance(value, dict):
        return {
            (k if k in ("properties",) else _camel_key(k)): (v if k == "properties" else camel(v))
            for k, v in value.items()
        }
    if isinstance(value, list):
        return [camel(v) for v in value]
    return value


def _camel_key(key: str) -> str:
    head, *rest = key.split("_")
    return head + "".join(part.title() for part in rest)


def user(text: str) -> PreparedMessage:
    return PreparedMessage("user", [{"type": "text", "text": text}], "u1", {"role": "user", "content": text})


def prepared(*messages: PreparedMessage, tools: list[dict[str, Any]] | None = None) -> Prepared:
    return Prepared("You are terse.", tools or [], list(messages) or [user("hi")])


async def run(provider: GeminiProvider, body: dict[str, Any]) -> tuple[list[Any], dict[str, Any]]:
    events = [e async for e in provider.stream(body)]
    await provider.aclose()
    builder = MessageBuilder("google", gemini.API, body["model"], 1)
    for e in events:
        builder.add(e)
    return events, builder.message()


async def test_thinking_text_and_a_function_call(server: FakeModelServer) -> None:
    server.push(
        gemini_stream(
            gemini_thought("Check the file first.", signature=SIG_A),
            gemini_text("Reading it."),
            gemini_call("read", {"path": "a.txt"}, signature=SIG_B),
            prompt_tokens=50,
            cached_tokens=10,
            candidates_tokens=7,
            thoughts_tokens=5,
        )
    )
    provider = GeminiProvider(api_key="gem-key", base_url=server.base_url)
    body = provider.request_body(prepared(tools=[READ_TOOL]), "gemini-2.5-flash", thinking_level="medium")
    events, message = await run(provider, body)

    request = server.requests[0]
    assert request.path == "/v1beta/models/gemini-2.5-flash:streamGenerateContent?alt=sse"
    assert request.headers["x-goog-api-key"] == "gem-key"
    sent = camel(request.body)
    assert sent["contents"] == [{"role": "user", "parts": [{"text": "hi"}]}]
    assert sent["systemInstruction"]["parts"] == [{"text": "You are terse."}]
    assert sent["generationConfig"]["thinkingConfig"] == {"includeThoughts": True, "thinkingBudget": 8192}
    declaration = sent["tools"][0]["functionDeclarations"][0]
    assert declaration["name"] == "read" and declaration["parametersJsonSchema"] == READ_TOOL["parameters"]

    assert "".join(e.text for e in events if isinstance(e, ThinkingDelta)) == "Check the file first."
    assert "".join(e.text for e in events if isinstance(e, TextDelta)) == "Reading it."
    (call,) = [e for e in events if isinstance(e, ToolCall)]
    assert call.name == "read" and call.arguments == {"path": "a.txt"} and call.thought_signature == SIG_B
    assert events[-1] == Stop("toolUse")
    thought, text, tool = message["content"]
    assert thought == {"type": "thinking", "thinking": "Check the file first.", "thinkingSignature": SIG_A}
    assert text == {"type": "text", "text": "Reading it."}
    assert tool["thoughtSignature"] == SIG_B and tool["id"].startswith("read_")
    assert message["usage"]["input"] == 40 and message["usage"]["cacheRead"] == 10
    assert message["usage"]["output"] == 12  # candidates plus thoughts, as pi counts them


async def test_the_turn_goes_back_with_its_signatures_and_the_result(server: FakeModelServer) -> None:
    server.push(
        gemini_stream(gemini_call("read", {"path": "a"}, call_id="c1", signature=SIG_B)),
        gemini_stream(gemini_text("Done.")),
    )
    provider = GeminiProvider(api_key="k", base_url=server.base_url)
    model = "gemini-3-flash-preview"  # Gemini 3: call ids are sent, thinking is a level
    _, assistant = await run(provider, provider.request_body(prepared(tools=[READ_TOOL]), model))
    assert assistant["content"][0]["id"] == "c1"
    result = {"role": "toolResult", "toolCallId": "c1", "toolName": "read"}
    body = provider.request_body(
        prepared(
            user("hi"),
            PreparedMessage("assistant", assistant["content"], "a1", assistant),
            PreparedMessage("toolResult", [{"type": "text", "text": "contents"}], "t1", result),
            tools=[READ_TOOL],
        ),
        model,
        thinking_level="high",
    )
    _, final = await run(provider, body)
    contents = camel(server.requests[1].body["contents"])
    assert contents[1] == {
        "role": "model",
        "parts": [
            {"functionCall": {"id": "c1", "name": "read", "args": {"path": "a"}}, "thoughtSignature": SIG_B}
        ],
    }
    assert contents[2] == {
        "role": "user",
        "parts": [{"functionResponse": {"id": "c1", "name": "read", "response": {"output": "contents"}}}],
    }
    assert camel(server.requests[1].body)["generationConfig"]["thinkingConfig"] == {
        "includeThoughts": True,
        "thinkingLevel": "HIGH",
    }
    assert final["content"] == [{"type": "text", "text": "Done."}] and final["stopReason"] == "stop"


def test_another_models_thinking_and_signatures_are_not_sent() -> None:
    content: list[dict[str, Any]] = [
        {"type": "thinking", "thinking": "secret plan", "thinkingSignature": SIG_A},
        {"type": "text", "text": "hello", "textSignature": SIG_A},
        {"type": "toolCall", "id": "toolu_1", "name": "read", "arguments": {}, "thoughtSignature": SIG_B},
    ]
    message = {
        "role": "assistant",
        "api": "anthropic-messages",
        "model": "claude-sonnet-5-5",
        "content": content,
    }
    body = gemini.request_body(
        prepared(user("hi"), PreparedMessage("assistant", content, "a1", message)), "gemini-2.5-flash"
    )
    assert body["contents"][1] == {
        "role": "model",
        "parts": [{"text": "hello"}, {"function_call": {"name": "read", "args": {}}}],
    }


def test_thinking_config_from_the_level() -> None:
    assert gemini.thinking_config("off", "gemini-2.5-flash") == {"thinking_budget": 0}
    assert gemini.thinking_config("high", "gemini-2.5-pro") == {
        "include_thoughts": True,
        "thinking_budget": 32768,
    }
    assert gemini.thinking_config("minimal", "gemini-2.5-flash-lite") == {
        "include_thoughts": True,
        "thinking_budget": 512,
    }
    # Gemini 3 cannot turn thinking off: "off" is its lowest level
    assert gemini.thinking_config("off", "gemini-3-flash-preview") == {"thinking_level": "MINIMAL"}


async def test_output_limit_errors_and_a_missing_finish(server: FakeModelServer) -> None:
    server.push(
        gemini_stream(gemini_text("cut here"), finish_reason="MAX_TOKENS"),
        gemini_stream(gemini_text("no end"), finish_reason=None),
        gemini_error(
            429, "Resource has been exhausted (e.g. check quota).", "RESOURCE_EXHAUSTED", retry_after="3"
        ),
        gemini_error(400, "API key not valid. Please pass a valid API key.", "INVALID_ARGUMENT"),
        gemini_error(503, "The model is overloaded. Please try again later.", "UNAVAILABLE"),
        gemini_error(
            400,
            "The input token count (1196265) exceeds the maximum number of tokens allowed (1048575).",
            "INVALID_ARGUMENT",
        ),
    )
    provider = GeminiProvider(api_key="k", base_url=server.base_url)
    body = provider.request_body(prepared(), "gemini-2.5-flash")
    events, message = await run(provider, body)
    assert events[-1] == Stop("length") and message["content"][0]["text"] == "cut here"
    events, _ = await run(provider, body)
    assert isinstance(events[-1], ProviderError) and events[-1].kind == "incomplete"
    events, _ = await run(provider, body)
    assert isinstance(events[-1], ProviderError) and events[-1].kind == "rate_limit"
    assert events[-1].retry_after == 3
    events, _ = await run(provider, body)
    assert isinstance(events[-1], ProviderError) and events[-1].kind == "request" and not events[-1].retryable
    events, _ = await run(provider, body)
    assert isinstance(events[-1], ProviderError) and events[-1].kind == "server" and events[-1].retryable
    events, _ = await run(provider, body)  # an overflow: the agent compacts with the window it names
    assert isinstance(events[-1], ProviderError) and events[-1].kind == "context_overflow"
    assert events[-1].overflow is not None and events[-1].overflow.window == 1048575
