"""Anthropic Messages API through the official SDK, streaming, normalized to provider events.

The body is :mod:`agent_tui.projection.wire.anthropic_messages`'s, passed field
by field to ``AsyncAnthropic.messages.create`` (every field has an SDK
parameter), so the server receives exactly what ``agent-tui context --format
anthropic`` prints. The SDK's own retries are off: the agent loop retries.
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from typing import TYPE_CHECKING, Any, cast

from agent_tui.projection import registry
from agent_tui.projection.request import Prepared
from agent_tui.projection.wire import anthropic_messages
from agent_tui.providers.base import (
    COUNT_TIMEOUT,
    JSONObject,
    SdkProvider,
    classify,
    connection_error,
    is_transport_error,
    log_request,
    malformed_error,
)
from agent_tui.providers.events import (
    ProviderError,
    ProviderEvent,
    Stop,
    TextDelta,
    ThinkingDelta,
    ThinkingSignature,
    ToolCall,
    ToolCallDelta,
    Usage,
    parse_arguments,
)

if TYPE_CHECKING:
    from anthropic import AsyncAnthropic, AsyncStream
    from anthropic.types import RawMessageStreamEvent

API = anthropic_messages.API
#: The body's fields ``messages.count_tokens`` takes (the rest shape the answer, not the input).
COUNT_FIELDS = ("model", "messages", "system", "tools", "tool_choice", "thinking", "output_config")


def map_stop_reason(reason: str | None) -> Stop:
    """pi's mapStopReason for the Messages API."""
    if reason in ("end_turn", "pause_turn", "stop_sequence"):
        return Stop("stop")
    if reason == "max_tokens":
        return Stop("length")
    if reason == "tool_use":
        return Stop("toolUse")
    if reason == "refusal":
        return Stop("error", "The model refused to complete the request")
    return Stop("error", f"Provider stopped with: {reason}")


class AnthropicProvider(SdkProvider["AsyncAnthropic"]):
    name = registry.anthropic.NAME
    api = API

    def request_body(self, prepared: Prepared, model: str, *, thinking_level: str = "off") -> JSONObject:
        return anthropic_messages.request_body(prepared, model, thinking_level=thinking_level)

    def client(self) -> AsyncAnthropic:
        if self._client is None:
            import anthropic
            from anthropic import AsyncAnthropic

            self._client = AsyncAnthropic(
                **self._client_options(anthropic.Timeout, anthropic.DefaultAsyncHttpxClient)
            )
        return self._client

    async def count_tokens(self, body: JSONObject) -> int | None:
        """``POST /v1/messages/count_tokens`` on the body's input (free; its own rate limit)."""
        args = {field: body[field] for field in COUNT_FIELDS if field in body}
        counted = await self.client().messages.count_tokens(**args, timeout=COUNT_TIMEOUT)
        return int(counted.input_tokens)

    async def stream(self, body: JSONObject) -> AsyncIterator[ProviderEvent]:
        import anthropic

        client = self.client()
        log_request(self.request_log, body)
        try:
            response = cast("AsyncStream[RawMessageStreamEvent]", await client.messages.create(**body))
        except anthropic.APIStatusError as e:
            yield classify(e.status_code, e.body, e.response.headers, e.message)
            return
        except anthropic.APIConnectionError as e:
            yield connection_error(e.__cause__ or e, started=False, timeout=self._timeout)
            return
        blocks: dict[int, JSONObject] = {}  # Anthropic block index -> tool call state
        input_tokens = output_tokens = cache_read = cache_write = 0
        stop: Stop | None = None
        try:
            async for event in response:
                if event.type == "message_start":
                    u = event.message.usage
                    input_tokens = u.input_tokens or 0
                    output_tokens = u.output_tokens or 0
                    cache_read = u.cache_read_input_tokens or 0
                    cache_write = u.cache_creation_input_tokens or 0
                    yield Usage(input_tokens, output_tokens, cache_read, cache_write)
                elif event.type == "content_block_start":
                    block: Any = event.content_block
                    index = event.index
                    if block.type == "text":
                        yield TextDelta(index, block.text or "")
                    elif block.type == "thinking":
                        yield ThinkingDelta(index, block.thinking or "")
                        if block.signature:
                            yield ThinkingSignature(index, block.signature)
                    elif block.type == "redacted_thinking":
                        yield ThinkingSignature(index, block.data, redacted=True)
                    elif block.type == "tool_use":
                        blocks[index] = {"id": block.id, "name": block.name, "json": "", "input": block.input}
                        yield ToolCallDelta(index, block.id, block.name, "")
                elif event.type == "content_block_delta":
                    delta: Any = event.delta
                    index = event.index
                    if delta.type == "text_delta":
                        yield TextDelta(index, delta.text)
                    elif delta.type == "thinking_delta":
                        yield ThinkingDelta(index, delta.thinking)
                    elif delta.type == "signature_delta":
                        yield ThinkingSignature(index, delta.signature)
                    elif delta.type == "input_json_delta" and index in blocks:
                        blocks[index]["json"] += delta.partial_json
                        yield ToolCallDelta(
                            index, blocks[index]["id"], blocks[index]["name"], delta.partial_json
                        )
                elif event.type == "content_block_stop":
                    state = blocks.pop(event.index, None)
                    if state is not None:
                        if state["json"]:
                            args, error = parse_arguments(state["json"])
                        else:
                            start_input = state["input"]
                            args, error = (start_input if isinstance(start_input, dict) else {}), None
                        yield ToolCall(event.index, state["id"], state["name"], args, error)
                elif event.type == "message_delta":
                    if event.delta.stop_reason:
                        stop = map_stop_reason(event.delta.stop_reason)
                    u2: Any = event.usage
                    if u2 is not None:
                        input_tokens = _pick(u2, "input_tokens", input_tokens)
                        output_tokens = _pick(u2, "output_tokens", output_tokens)
                        cache_read = _pick(u2, "cache_read_input_tokens", cache_read)
                        cache_write = _pick(u2, "cache_creation_input_tokens", cache_write)
                        yield Usage(input_tokens, output_tokens, cache_read, cache_write)
        except anthropic.APIStatusError as e:  # an `error` event inside the stream
            yield classify(e.status_code, e.body, None, e.message)
            return
        except anthropic.APIConnectionError as e:
            yield connection_error(e.__cause__ or e, started=True, timeout=self._timeout)
            return
        except anthropic.APIError as e:  # an error object inside the stream, without a status
            yield classify(None, e.body, None, e.message)
            return
        except Exception as e:
            if is_transport_error(e):
                yield connection_error(e, started=True, timeout=self._timeout)
            else:
                yield malformed_error(e)
            return
        finally:
            await response.close()
        # Tool calls whose block never closed: the stream ended without them being complete.
        for index, state in blocks.items():
            args, error = parse_arguments(state["json"])
            yield ToolCall(index, state["id"], state["name"], args, error)
        if stop is None:
            yield ProviderError("incomplete", "the stream ended without a stop reason", True)
        else:
            yield stop


def _pick(usage: Any, name: str, default: int) -> int:
    value = getattr(usage, name, None)
    return int(value) if value is not None else default


__all__ = ["API", "COUNT_FIELDS", "AnthropicProvider", "map_stop_reason"]
