"""The OpenAI Responses API through the official SDK (``AsyncOpenAI.responses.stream``).

The API OpenAI recommends for its reasoning models. The body is
:mod:`agent_tui.projection.wire.openai_responses`' (stateless: ``store`` false, reasoning sent
back encrypted). Each output item of the stream becomes one content block: a reasoning item a
thinking block (its summary as the thinking, the whole item, ``encrypted_content`` included, as
the signature), a message a text block (its id as the text signature), a function call a tool
call with the id ``call_id|item_id``, as pi records them.
"""

from __future__ import annotations

import json
from collections.abc import AsyncIterator
from typing import TYPE_CHECKING, Any

from agent_tui.projection import registry
from agent_tui.projection.request import Prepared
from agent_tui.projection.wire import openai_responses
from agent_tui.providers.base import (
    JSONObject,
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
    TextSignature,
    ThinkingDelta,
    ThinkingSignature,
    ToolCall,
    ToolCallDelta,
    Usage,
    parse_arguments,
)
from agent_tui.providers.openai_provider import OpenAIProvider

if TYPE_CHECKING:
    pass

API = openai_responses.API


def map_status(status: str | None, reason: str | None) -> Stop:
    """pi's mapStopReason for the Responses API."""
    if status in (None, "completed", "in_progress", "queued"):
        return Stop("stop")
    if status == "incomplete":
        if reason == "max_output_tokens":
            return Stop("length")
        return Stop("error", f"Response incomplete: {reason}" if reason else "Response incomplete")
    return Stop("error", f"Response {status}")


def _dict(item: Any) -> JSONObject:
    """An SDK model as the JSON the server sent (unset fields left out)."""
    to_dict = getattr(item, "to_dict", None)
    if callable(to_dict):
        value = to_dict()
        if isinstance(value, dict):
            return value
    return dict(vars(item))


class OpenAIResponsesProvider(OpenAIProvider):
    """OpenAI's Responses API: the Chat provider's client, another request body and stream."""

    name = registry.openai.NAME
    api = API

    def request_body(self, prepared: Prepared, model: str, *, thinking_level: str = "off") -> JSONObject:
        return openai_responses.request_body(prepared, model, thinking_level=thinking_level)

    async def stream(self, body: JSONObject) -> AsyncIterator[ProviderEvent]:
        import openai

        client = self.client()
        log_request(self.request_log, body)
        arguments = {k: v for k, v in body.items() if k != "stream"}  # responses.stream sets it
        manager = client.responses.stream(**arguments)
        try:
            events = await manager.__aenter__()
        except openai.APIStatusError as e:
            yield classify(e.status_code, e.body, e.response.headers, e.message)
            return
        except openai.APIConnectionError as e:
            yield connection_error(e.__cause__ or e, started=False, timeout=self._timeout)
            return
        started = False
        slots: dict[int, JSONObject] = {}  # output_index -> {kind, index, ...}
        next_index = 0
        reasoning: dict[str, tuple[int, JSONObject]] = {}  # reasoning item id -> (block index, item)
        done_calls: set[int] = set()
        outcome: Stop | ProviderError | None = None
        usage: Usage | None = None
        try:
            async for raw in events:
                started = True
                event: Any = raw  # one of ~60 event types, told apart by ``type``
                kind = event.type
                if kind == "response.output_item.added":
                    item: Any = event.item
                    slot: JSONObject = {"kind": item.type, "index": next_index, "summaries": 0}
                    if item.type not in ("reasoning", "message", "function_call"):
                        continue
                    next_index += 1
                    slots[event.output_index] = slot
                    if item.type == "function_call":
                        slot["id"] = f"{item.call_id}|{item.id}" if item.id else item.call_id
                        slot["name"] = item.name
                        slot["json"] = item.arguments or ""
                        yield ToolCallDelta(slot["index"], slot["id"], item.name, item.arguments or "")
                elif kind in ("response.reasoning_summary_text.delta", "response.reasoning_text.delta"):
                    slot = slots.get(event.output_index) or {}
                    if slot.get("kind") == "reasoning":
                        yield ThinkingDelta(slot["index"], event.delta)
                elif kind == "response.reasoning_summary_part.added":
                    slot = slots.get(event.output_index) or {}
                    if slot.get("kind") == "reasoning":
                        if slot["summaries"]:
                            yield ThinkingDelta(slot["index"], "\n\n")  # pi joins summary parts so
                        slot["summaries"] += 1
                elif kind in ("response.output_text.delta", "response.refusal.delta"):
                    slot = slots.get(event.output_index) or {}
                    if slot.get("kind") == "message":
                        yield TextDelta(slot["index"], event.delta)
                elif kind == "response.function_call_arguments.delta":
                    slot = slots.get(event.output_index) or {}
                    if slot.get("kind") == "function_call":
                        slot["json"] += event.delta
                        yield ToolCallDelta(slot["index"], slot["id"], slot["name"], event.delta)
                elif kind == "response.output_item.done":
                    item = event.item
                    slot = slots.get(event.output_index) or {}
                    if item.type == "reasoning" and slot.get("kind") == "reasoning":
                        if not slot["summaries"] and item.summary:  # no deltas streamed: the item's
                            yield ThinkingDelta(slot["index"], "\n\n".join(s.text for s in item.summary))
                        reasoning[item.id] = (slot["index"], _dict(item))
                    elif item.type == "message" and slot.get("kind") == "message":
                        phase = getattr(item, "phase", None)
                        yield TextSignature(slot["index"], openai_responses.text_signature(item.id, phase))
                    elif item.type == "function_call" and slot.get("kind") == "function_call":
                        args, bad = parse_arguments(item.arguments or slot["json"])
                        done_calls.add(slot["index"])
                        yield ToolCall(slot["index"], slot["id"], slot["name"], args, bad)
                elif kind in ("response.completed", "response.incomplete"):
                    response: Any = event.response
                    # Azure can leave encrypted_content out of output_item.done and send it only here.
                    for out in response.output or []:
                        if out.type == "reasoning" and out.id in reasoning and out.encrypted_content:
                            reasoning[out.id][1].setdefault("encrypted_content", out.encrypted_content)
                    if response.usage is not None:
                        usage = _usage(response.usage)
                    details = response.incomplete_details
                    outcome = map_status(response.status, details.reason if details is not None else None)
                elif kind == "response.failed":
                    failure: Any = event.response.error
                    outcome = classify(
                        None,
                        {"type": failure.code, "message": failure.message} if failure is not None else None,
                        None,
                        "the response failed",
                    )
                elif kind == "error":
                    outcome = classify(None, {"type": event.code, "message": event.message}, None)
        except openai.APIStatusError as e:  # an error object inside the stream
            yield classify(e.status_code, e.body, None, e.message)
            return
        except openai.APIConnectionError as e:
            yield connection_error(e.__cause__ or e, started=started, timeout=self._timeout)
            return
        except openai.APIError as e:
            yield classify(None, e.body, None, e.message)
            return
        except Exception as e:
            if is_transport_error(e):
                yield connection_error(e, started=started, timeout=self._timeout)
            else:
                yield malformed_error(e)
            return
        finally:
            await manager.__aexit__(None, None, None)
        for index, item in reasoning.values():
            yield ThinkingSignature(index, json.dumps(item, ensure_ascii=False, separators=(",", ":")))
        for slot in slots.values():
            if slot["kind"] == "function_call" and slot["index"] not in done_calls:
                args, parse_error = parse_arguments(slot["json"])
                yield ToolCall(slot["index"], slot["id"], slot["name"], args, parse_error)
        if usage is not None:
            yield usage
        if outcome is None:
            yield ProviderError("incomplete", "the stream ended before a terminal response event", True)
        elif isinstance(outcome, Stop) and outcome.stop_reason == "stop" and done_calls:
            yield Stop("toolUse")
        else:
            yield outcome


def _usage(raw: Any) -> Usage:
    """pi's Responses usage: cached and cache-write tokens are counted in input_tokens."""
    details = getattr(raw, "input_tokens_details", None)
    cached = (getattr(details, "cached_tokens", 0) if details is not None else 0) or 0
    written = (getattr(details, "cache_write_tokens", 0) if details is not None else 0) or 0
    total_in = getattr(raw, "input_tokens", 0) or 0
    return Usage(max(0, total_in - cached - written), getattr(raw, "output_tokens", 0) or 0, cached, written)


__all__ = ["API", "OpenAIResponsesProvider", "map_status"]
