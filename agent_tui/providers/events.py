"""One normalized event stream for every provider, and the assistant message built from it.

A provider's ``stream(body)`` yields these events and ends with exactly one
:class:`Stop` or :class:`ProviderError`. :class:`MessageBuilder` folds them into
the assistant message in pi's transcript schema, and can hand out what it has
so far at any moment (for an abort or a stream cut short).
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any, Literal

from agent_tui.projection import pricing
from agent_tui.providers.overflow import Overflow

JSONObject = dict[str, Any]

StopReason = Literal["stop", "length", "toolUse", "error", "aborted"]


@dataclass(frozen=True, slots=True)
class TextDelta:
    index: int  # content block index within the assistant message
    text: str


@dataclass(frozen=True, slots=True)
class ThinkingDelta:
    index: int
    text: str


@dataclass(frozen=True, slots=True)
class ThinkingSignature:
    """The signature of a thinking block (Anthropic), or the field it came from (OpenAI-compatible)."""

    index: int
    signature: str
    redacted: bool = False  # a redacted_thinking block: the signature is its opaque data


@dataclass(frozen=True, slots=True)
class TextSignature:
    """What a text block keeps of the item it came from, to send it back as it was: the Responses
    API's message id (pi's ``textSignature``), Gemini's thought signature on a text part."""

    index: int
    signature: str


@dataclass(frozen=True, slots=True)
class ToolCallDelta:
    index: int
    id: str
    name: str
    arguments_delta: str  # a fragment of the JSON arguments


@dataclass(frozen=True, slots=True)
class ToolCall:
    """A tool call whose arguments are complete. ``parse_error`` is set when they were not valid JSON."""

    index: int
    id: str
    name: str
    arguments: JSONObject
    parse_error: str | None = None
    thought_signature: str | None = None  # Gemini's signature on a function call (pi's thoughtSignature)


@dataclass(frozen=True, slots=True)
class Usage:
    input: int = 0
    output: int = 0
    cache_read: int = 0
    cache_write: int = 0

    def to_json(self, model: str | None = None) -> JSONObject:
        """pi's usage object, with ``cost`` priced for ``model`` as pi's calculateCost does."""
        total = self.input + self.output + self.cache_read + self.cache_write
        tokens = pricing.Usage(self.input, self.output, self.cache_read, self.cache_write)
        return {
            "input": self.input,
            "output": self.output,
            "cacheRead": self.cache_read,
            "cacheWrite": self.cache_write,
            "totalTokens": total,
            "cost": pricing.cost_json(model, tokens),
        }


@dataclass(frozen=True, slots=True)
class Stop:
    stop_reason: StopReason
    error_message: str | None = None  # for stop reasons that are errors (refusal, content filter)


ErrorKind = Literal[
    "auth",  # bad or missing key (401/403): never retried
    "rate_limit",  # 429
    "overloaded",  # 529 / overloaded_error
    "server",  # 5xx
    "connection",  # could not connect, or the stream was cut
    "incomplete",  # the stream ended without a stop reason
    "malformed",  # the stream could not be read (invalid JSON in an event, an unexpected shape)
    "request",  # 4xx other than the above: the request itself is wrong
    "context_overflow",  # the prompt is too long for the model
]


@dataclass(frozen=True, slots=True)
class ProviderError:
    kind: ErrorKind
    message: str
    retryable: bool
    retry_after: float | None = None  # seconds, from retry-after / retry-after-ms
    status: int | None = None
    overflow: Overflow | None = None  # for "context_overflow": what the server said about its window


ProviderEvent = (
    TextDelta
    | TextSignature
    | ThinkingDelta
    | ThinkingSignature
    | ToolCallDelta
    | ToolCall
    | Usage
    | Stop
    | ProviderError
)


@dataclass(slots=True)
class _Block:
    type: str
    text: str = ""
    signature: str | None = None
    redacted: bool = False
    id: str = ""
    name: str = ""
    arguments_json: str = ""
    arguments: JSONObject | None = None
    parse_error: str | None = None


@dataclass(slots=True)
class MessageBuilder:
    """Accumulates provider events into an assistant message (pi's schema)."""

    provider: str
    api: str
    model: str
    timestamp: int
    blocks: dict[int, _Block] = field(default_factory=dict)
    usage: Usage = field(default_factory=Usage)
    stop: Stop | None = None
    error: ProviderError | None = None

    def add(self, event: ProviderEvent) -> None:
        if isinstance(event, TextDelta):
            self._block(event.index, "text").text += event.text
        elif isinstance(event, TextSignature):
            self._block(event.index, "text").signature = event.signature
        elif isinstance(event, ThinkingDelta):
            self._block(event.index, "thinking").text += event.text
        elif isinstance(event, ThinkingSignature):
            block = self._block(event.index, "thinking")
            block.signature = (block.signature or "") + event.signature
            if event.redacted:
                block.redacted = True
                block.text = block.text or "[Reasoning redacted]"
        elif isinstance(event, ToolCallDelta):
            block = self._block(event.index, "toolCall")
            block.id = block.id or event.id
            block.name = block.name or event.name
            block.arguments_json += event.arguments_delta
        elif isinstance(event, ToolCall):
            block = self._block(event.index, "toolCall")
            block.id, block.name = event.id, event.name
            block.arguments = event.arguments
            block.parse_error = event.parse_error
            if event.thought_signature:
                block.signature = event.thought_signature
        elif isinstance(event, Usage):
            self.usage = event
        elif isinstance(event, Stop):
            self.stop = event
        elif isinstance(event, ProviderError):
            self.error = event

    def _block(self, index: int, kind: str) -> _Block:
        block = self.blocks.get(index)
        if block is None:
            block = self.blocks[index] = _Block(kind)
        return block

    @property
    def has_content(self) -> bool:
        return any(b.text or b.type == "toolCall" or b.signature for b in self.blocks.values())

    def tool_calls(self) -> list[ToolCall]:
        """The tool calls of the message, in order (arguments parsed from what streamed if never completed)."""
        calls = []
        for index in sorted(self.blocks):
            block = self.blocks[index]
            if block.type == "toolCall":
                args, error = _arguments(block)
                calls.append(ToolCall(index, block.id, block.name, args, error))
        return calls

    def content(self) -> list[JSONObject]:
        out: list[JSONObject] = []
        for index in sorted(self.blocks):
            block = self.blocks[index]
            if block.type == "text":
                text: JSONObject = {"type": "text", "text": block.text}
                if block.signature:
                    text["textSignature"] = block.signature
                out.append(text)
            elif block.type == "thinking":
                thought: JSONObject = {"type": "thinking", "thinking": block.text}
                if block.signature is not None:
                    thought["thinkingSignature"] = block.signature
                if block.redacted:
                    thought["redacted"] = True
                out.append(thought)
            else:
                args, _ = _arguments(block)
                call: JSONObject = {"type": "toolCall", "id": block.id, "name": block.name, "arguments": args}
                if block.signature:
                    call["thoughtSignature"] = block.signature
                out.append(call)
        return out

    def message(self, stop_reason: StopReason | None = None, error_message: str | None = None) -> JSONObject:
        """The assistant message: as it ended, or with ``stop_reason`` forced (aborted, error)."""
        reason: StopReason
        if stop_reason is not None:
            reason = stop_reason
        elif self.error is not None:
            reason = "error"
            error_message = error_message or self.error.message
        elif self.stop is not None:
            reason = self.stop.stop_reason
            error_message = error_message or self.stop.error_message
        else:
            reason = "error"
            error_message = error_message or "the stream ended without a stop reason"
        message: JSONObject = {
            "role": "assistant",
            "content": self.content(),
            "api": self.api,
            "provider": self.provider,
            "model": self.model,
            "usage": self.usage.to_json(self.model),
            "stopReason": reason,
            "timestamp": self.timestamp,
        }
        if error_message:
            message["errorMessage"] = error_message
        return message


def _arguments(block: _Block) -> tuple[JSONObject, str | None]:
    if block.arguments is not None:
        return block.arguments, block.parse_error
    return parse_arguments(block.arguments_json)


def parse_arguments(text: str) -> tuple[JSONObject, str | None]:
    """Tool-call arguments from their streamed JSON: ({}, None) for none, ({}, error) when invalid."""
    if not text.strip():
        return {}, None
    try:
        value = json.loads(text)
    except ValueError as e:
        return {}, f"the arguments are not valid JSON ({e}): {text[:200]}"
    except RecursionError:
        return {}, f"the arguments are not valid JSON (nested too deeply): {text[:200]}"
    if not isinstance(value, dict):
        return {}, f"the arguments are not a JSON object: {text[:200]}"
    return value, None


__all__ = [
    "ErrorKind",
    "MessageBuilder",
    "ProviderError",
    "ProviderEvent",
    "Stop",
    "StopReason",
    "TextDelta",
    "TextSignature",
    "ThinkingDelta",
    "ThinkingSignature",
    "ToolCall",
    "ToolCallDelta",
    "Usage",
    "parse_arguments",
]
