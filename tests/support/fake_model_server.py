"""A local fake model server speaking the real Anthropic and OpenAI HTTP/SSE wire formats.

Start it, point the official SDKs at it by base URL, queue one scripted response
per expected request, and inspect what it received::

    server = FakeModelServer().start()
    server.push(anthropic_stream(text("Hello")), http_error(429, retry_after_ms=10))
    client = AsyncAnthropic(api_key="k", base_url=server.anthropic_base_url, max_retries=0)
    ...
    server.requests[0].body   # the JSON body the SDK sent
    server.stop()

Responses are served in order whatever the path (``/v1/messages`` or
``/v1/chat/completions``). An empty queue answers 400 with a message naming the
request, so a test that makes one call too many fails fast. Streams use chunked
transfer encoding, so ``Stream(drop_after=N)`` (the connection closed without
the final chunk) looks to the client exactly like a connection lost half way.
``Stream(delay=...)`` or ``tokens_per_second`` streams slowly. What a server says about its
models (``/v1/models``, llama.cpp's ``/props``, Ollama's ``/api/show``) is answered apart from the
queue, from ``server.models`` (``serve_models``), ``server.props`` and ``server.ollama_show``.

Faults (``server.fault("context_window:9000")``, or ``--fault`` on the command line) make it act as
a server with a limit: ``context_window:N`` refuses every model request the server counts as more
than N tokens (the body's JSON, 4 characters a token) with its real overflow error, before the queue.
``count:P`` makes it count tokens as servers with a count endpoint do, P percent of that figure
(100: as the window fault counts; 300: a tokenizer that counts three times more), in the window
fault too: Anthropic's ``POST /v1/messages/count_tokens`` (``{"input_tokens": N}``), Gemini's
``POST /v1beta/models/{model}:countTokens`` (``{"totalTokens": N}``) and llama.cpp's
``POST /apply-template`` then ``POST /tokenize`` (``{"tokens": [...]}``), answered apart from the
queue and recorded in ``server.count_requests``. Without it those endpoints answer 404, as a server
without them does.

Used by the provider, agent and print-mode tests, and importable by TUI tests
(``from tests.support.fake_model_server import ...``). Standard library only. As a process
(``python -m tests.support.fake_model_server --fault context_window:9000 --log requests.jsonl``)
it prints its base URL on the first line, records each request as a JSON line in ``--log`` and
answers each model request by quoting its last user message ("reply to: ...").
"""

from __future__ import annotations

import argparse
import base64
import json
import signal
import socket
import threading
import time
import zlib
from collections import deque
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

JSON = dict[str, Any]
#: A Stream event name whose data (a string) is written to the wire verbatim, not as ``data: ...``.
RAW = "<raw>"


# -- scripted responses ------------------------------------------------------------------


@dataclass
class Stream:
    """An SSE response: ``events`` are (event name or None, data) pairs; data is JSON or a raw string."""

    events: list[tuple[str | None, Any]]
    delay: float = 0.0  # seconds before each event after the first
    drop_after: int | None = None  # close the connection abruptly after this many events
    status: int = 200
    headers: dict[str, str] = field(default_factory=dict)
    gate: threading.Event | None = None  # wait until it is set before sending event ``gate_at``
    gate_at: int = 0
    content_type: str = "text/event-stream"

    def slow(self, tokens_per_second: float) -> Stream:
        self.delay = 1.0 / tokens_per_second
        return self

    def dropped(self, after: int) -> Stream:
        self.drop_after = after
        return self


@dataclass
class HTTPError:
    """A non-streaming error response (status, JSON body, headers such as retry-after)."""

    status: int
    body: JSON
    headers: dict[str, str] = field(default_factory=dict)


@dataclass
class Hang:
    """Send nothing until the client goes away or the server stops (for aborts before the first byte)."""

    seconds: float = 30.0


Response = Stream | HTTPError | Hang


@dataclass
class RecordedRequest:
    method: str
    path: str
    headers: dict[str, str]  # lower-cased names
    body: Any
    received: float  # time.monotonic()


# -- Anthropic Messages -----------------------------------------------------------------------


@dataclass
class Block:
    kind: str  # text, thinking, redacted_thinking, tool_use
    text: str = ""
    signature: str = ""
    id: str = ""
    name: str = ""
    input: Any = None
    chunks: int = 0  # split the content into this many deltas (0: word by word)


def text(value: str, *, chunks: int = 0) -> Block:
    return Block("text", text=value, chunks=chunks)


def thinking(value: str, signature: str = "sig-abc", *, chunks: int = 0) -> Block:
    return Block("thinking", text=value, signature=signature, chunks=chunks)


def redacted_thinking(data: str) -> Block:
    return Block("redacted_thinking", signature=data)


def tool_use(call_id: str, name: str, arguments: Any, *, chunks: int = 3) -> Block:
    return Block("tool_use", id=call_id, name=name, input=arguments, chunks=chunks)


def _split(value: str, chunks: int) -> list[str]:
    if not value:
        return []
    if chunks <= 0:  # word by word, keeping the spaces
        parts: list[str] = []
        current = ""
        for ch in value:
            current += ch
            if ch == " ":
                parts.append(current)
                current = ""
        if current:
            parts.append(current)
        return parts
    size = max(1, -(-len(value) // chunks))
    return [value[i : i + size] for i in range(0, len(value), size)]


def anthropic_stream(
    *blocks: Block,
    stop_reason: str | None = None,
    model: str = "claude-sonnet-5-5",
    input_tokens: int = 100,
    output_tokens: int = 20,
    cache_read: int = 0,
    cache_write: int = 0,
    message_id: str = "msg_fake",
    error: JSON | None = None,
    stop: bool = True,
) -> Stream:
    """The SSE events of one Messages API stream; ``error`` adds an ``error`` event after the blocks.

    ``stop_reason`` defaults to ``tool_use`` when a block is a tool call, else ``end_turn``.
    ``stop=False`` leaves out message_delta and message_stop (a stream that ends early but cleanly).
    """
    if stop_reason is None:
        stop_reason = "tool_use" if any(b.kind == "tool_use" for b in blocks) else "end_turn"
    events: list[tuple[str | None, Any]] = [
        (
            "message_start",
            {
                "type": "message_start",
                "message": {
                    "id": message_id,
                    "type": "message",
                    "role": "assistant",
                    "model": model,
                    "content": [],
                    "stop_reason": None,
                    "stop_sequence": None,
                    "usage": {
                        "input_tokens": input_tokens,
                        "output_tokens": 1,
                        "cache_read_input_tokens": cache_read,
                        "cache_creation_input_tokens": cache_write,
                    },
                },
            },
        ),
        ("ping", {"type": "ping"}),
    ]
    for index, block in enumerate(blocks):
        if block.kind == "text":
            start: JSON = {"type": "text", "text": ""}
            deltas = [{"type": "text_delta", "text": part} for part in _split(block.text, block.chunks)]
        elif block.kind == "thinking":
            start = {"type": "thinking", "thinking": "", "signature": ""}
            deltas = [
                {"type": "thinking_delta", "thinking": part} for part in _split(block.text, block.chunks)
            ]
            deltas.append({"type": "signature_delta", "signature": block.signature})
        elif block.kind == "redacted_thinking":
            start = {"type": "redacted_thinking", "data": block.signature}
            deltas = []
        else:
            start = {"type": "tool_use", "id": block.id, "name": block.name, "input": {}}
            encoded = json.dumps(block.input)
            deltas = [
                {"type": "input_json_delta", "partial_json": part}
                for part in _split(encoded, block.chunks or 3)
            ]
        events.append(
            ("content_block_start", {"type": "content_block_start", "index": index, "content_block": start})
        )
        for delta in deltas:
            events.append(
                ("content_block_delta", {"type": "content_block_delta", "index": index, "delta": delta})
            )
        events.append(("content_block_stop", {"type": "content_block_stop", "index": index}))
    if error is not None:
        events.append(("error", {"type": "error", "error": error}))
        return Stream(events)
    if stop:
        events.append(
            (
                "message_delta",
                {
                    "type": "message_delta",
                    "delta": {"stop_reason": stop_reason, "stop_sequence": None},
                    "usage": {
                        "input_tokens": input_tokens,
                        "output_tokens": output_tokens,
                        "cache_read_input_tokens": cache_read,
                        "cache_creation_input_tokens": cache_write,
                    },
                },
            )
        )
        events.append(("message_stop", {"type": "message_stop"}))
    return Stream(events)


def anthropic_error(status: int, error_type: str, message: str, **headers: str) -> HTTPError:
    """An Anthropic error response, e.g. ``anthropic_error(529, "overloaded_error", "Overloaded")``."""
    return HTTPError(
        status,
        {"type": "error", "error": {"type": error_type, "message": message}},
        {k.replace("_", "-"): v for k, v in headers.items()},
    )


# -- OpenAI Chat Completions ------------------------------------------------------------------


@dataclass
class Call:
    id: str
    name: str
    arguments: Any
    chunks: int = 3


def call(call_id: str, name: str, arguments: Any, *, chunks: int = 3) -> Call:
    return Call(call_id, name, arguments, chunks)


def openai_stream(
    content: str | None = None,
    *,
    tool_calls: Sequence[Call] = (),
    reasoning: str | None = None,
    finish_reason: str | None = None,
    model: str = "gpt-4.1",
    prompt_tokens: int = 100,
    completion_tokens: int = 20,
    cached_tokens: int = 0,
    usage: bool = True,
    done: bool = True,
    chunk_id: str = "chatcmpl-fake",
) -> Stream:
    """The chat.completion.chunk events of one streamed completion, ending with ``[DONE]``.

    ``reasoning`` streams ``reasoning_content`` deltas first (llama.cpp, vLLM, Ollama).
    Tool call arguments are split into fragments; only the first fragment of a call
    carries its id and name, as OpenAI sends them.
    """
    if finish_reason is None:
        finish_reason = "tool_calls" if tool_calls else "stop"
    created = int(time.time())

    def chunk(delta: JSON, finish: str | None = None) -> JSON:
        return {
            "id": chunk_id,
            "object": "chat.completion.chunk",
            "created": created,
            "model": model,
            "choices": [{"index": 0, "delta": delta, "logprobs": None, "finish_reason": finish}],
        }

    events: list[tuple[str | None, Any]] = [(None, chunk({"role": "assistant", "content": ""}))]
    for part in _split(reasoning or "", 0):
        events.append((None, chunk({"reasoning_content": part})))
    for part in _split(content or "", 0):
        events.append((None, chunk({"content": part})))
    for index, c in enumerate(tool_calls):
        fragments = _split(json.dumps(c.arguments), c.chunks)
        first: JSON = {
            "index": index,
            "id": c.id,
            "type": "function",
            "function": {"name": c.name, "arguments": fragments[0] if fragments else ""},
        }
        events.append((None, chunk({"tool_calls": [first]})))
        for fragment in fragments[1:]:
            events.append(
                (None, chunk({"tool_calls": [{"index": index, "function": {"arguments": fragment}}]}))
            )
    if finish_reason:
        events.append((None, chunk({}, finish_reason)))
    if usage:
        events.append(
            (
                None,
                {
                    "id": chunk_id,
                    "object": "chat.completion.chunk",
                    "created": created,
                    "model": model,
                    "choices": [],
                    "usage": {
                        "prompt_tokens": prompt_tokens,
                        "completion_tokens": completion_tokens,
                        "total_tokens": prompt_tokens + completion_tokens,
                        "prompt_tokens_details": {"cached_tokens": cached_tokens},
                    },
                },
            )
        )
    if done:
        events.append((None, "[DONE]"))
    return Stream(events)


def openai_error(status: int, message: str, error_type: str = "server_error", **headers: str) -> HTTPError:
    code = {401: "invalid_api_key", 429: "rate_limit_exceeded"}.get(status)
    return HTTPError(
        status,
        {"error": {"message": message, "type": error_type, "param": None, "code": code}},
        {k.replace("_", "-"): v for k, v in headers.items()},
    )


# -- OpenAI Responses --------------------------------------------------------------------------


@dataclass
class Item:
    """One output item of a Responses stream: a reasoning item, a message or a function call."""

    kind: str  # reasoning, message, function_call
    text: str = ""  # the summary (reasoning), the text (message)
    id: str = ""
    call_id: str = ""
    name: str = ""
    arguments: Any = None
    encrypted: str | None = None  # a reasoning item's encrypted_content
    encrypted_in_done: bool = True  # False: only response.completed carries it (as Azure sends it)
    chunks: int = 0


def reasoning_item(summary: str, encrypted: str = "enc-abc", *, item_id: str = "rs_1") -> Item:
    return Item("reasoning", text=summary, id=item_id, encrypted=encrypted)


def message_item(value: str, *, item_id: str = "msg_1", chunks: int = 0) -> Item:
    return Item("message", text=value, id=item_id, chunks=chunks)


def function_call_item(
    call_id: str, name: str, arguments: Any, *, item_id: str = "fc_1", chunks: int = 3
) -> Item:
    return Item("function_call", id=item_id, call_id=call_id, name=name, arguments=arguments, chunks=chunks)


def responses_stream(
    *items: Item,
    model: str = "gpt-5.4",
    response_id: str = "resp_fake",
    input_tokens: int = 100,
    output_tokens: int = 20,
    cached_tokens: int = 0,
    reasoning_tokens: int = 0,
    status: str = "completed",
    incomplete_reason: str | None = None,
    complete: bool = True,
    error: JSON | None = None,
) -> Stream:
    """The SSE events of one streamed Responses API call, as OpenAI sends them (event types and
    shapes from the openai SDK's ``ResponseStreamEvent`` types; each event names its type both in
    ``event:`` and in ``type``, with a rising ``sequence_number``). ``status`` "incomplete" ends
    with ``response.incomplete``; ``complete=False`` leaves out the terminal event."""
    created_at = int(time.time())
    sequence = 0
    events: list[tuple[str | None, Any]] = []

    def emit(kind: str, **fields: Any) -> None:
        nonlocal sequence
        events.append((kind, {"type": kind, "sequence_number": sequence, **fields}))
        sequence += 1

    def response(state: str, output: list[JSON], usage: JSON | None) -> JSON:
        return {
            "id": response_id,
            "object": "response",
            "created_at": created_at,
            "status": state,
            "model": model,
            "output": output,
            "parallel_tool_calls": True,
            "tool_choice": "auto",
            "tools": [],
            "error": error if state == "failed" else None,
            "incomplete_details": {"reason": incomplete_reason} if incomplete_reason else None,
            "instructions": None,
            "metadata": {},
            "temperature": 1.0,
            "top_p": 1.0,
            "store": False,
            "usage": usage,
        }

    emit("response.created", response=response("in_progress", [], None))
    emit("response.in_progress", response=response("in_progress", [], None))
    finished: list[JSON] = []
    for index, item in enumerate(items):
        if item.kind == "reasoning":
            emit(
                "response.output_item.added",
                output_index=index,
                item={"id": item.id, "type": "reasoning", "summary": []},
            )
            if item.text:
                part: JSON = {"type": "summary_text", "text": ""}
                emit(
                    "response.reasoning_summary_part.added",
                    item_id=item.id,
                    output_index=index,
                    summary_index=0,
                    part=part,
                )
                for piece in _split(item.text, item.chunks):
                    emit(
                        "response.reasoning_summary_text.delta",
                        item_id=item.id,
                        output_index=index,
                        summary_index=0,
                        delta=piece,
                    )
                emit(
                    "response.reasoning_summary_text.done",
                    item_id=item.id,
                    output_index=index,
                    summary_index=0,
                    text=item.text,
                )
                emit(
                    "response.reasoning_summary_part.done",
                    item_id=item.id,
                    output_index=index,
                    summary_index=0,
                    part={"type": "summary_text", "text": item.text},
                )
            done: JSON = {
                "id": item.id,
                "type": "reasoning",
                "summary": [{"type": "summary_text", "text": item.text}] if item.text else [],
            }
            final = dict(done)
            if item.encrypted is not None:
                final["encrypted_content"] = item.encrypted
                if item.encrypted_in_done:
                    done["encrypted_content"] = item.encrypted
            emit("response.output_item.done", output_index=index, item=done)
            finished.append(final)
        elif item.kind == "message":
            added = {
                "id": item.id,
                "type": "message",
                "status": "in_progress",
                "role": "assistant",
                "content": [],
            }
            emit("response.output_item.added", output_index=index, item=added)
            emit(
                "response.content_part.added",
                item_id=item.id,
                output_index=index,
                content_index=0,
                part={"type": "output_text", "text": "", "annotations": []},
            )
            for piece in _split(item.text, item.chunks):
                emit(
                    "response.output_text.delta",
                    item_id=item.id,
                    output_index=index,
                    content_index=0,
                    delta=piece,
                    logprobs=[],
                )
            emit(
                "response.output_text.done",
                item_id=item.id,
                output_index=index,
                content_index=0,
                text=item.text,
                logprobs=[],
            )
            part = {"type": "output_text", "text": item.text, "annotations": []}
            emit(
                "response.content_part.done", item_id=item.id, output_index=index, content_index=0, part=part
            )
            message = {**added, "status": "completed", "content": [part]}
            emit("response.output_item.done", output_index=index, item=message)
            finished.append(message)
        else:
            encoded = json.dumps(item.arguments)
            added = {
                "id": item.id,
                "type": "function_call",
                "status": "in_progress",
                "call_id": item.call_id,
                "name": item.name,
                "arguments": "",
            }
            emit("response.output_item.added", output_index=index, item=added)
            for piece in _split(encoded, item.chunks or 3):
                emit(
                    "response.function_call_arguments.delta", item_id=item.id, output_index=index, delta=piece
                )
            emit(
                "response.function_call_arguments.done",
                item_id=item.id,
                output_index=index,
                name=item.name,
                arguments=encoded,
            )
            call_done = {**added, "status": "completed", "arguments": encoded}
            emit("response.output_item.done", output_index=index, item=call_done)
            finished.append(call_done)
    if complete:
        usage = {
            "input_tokens": input_tokens,
            "input_tokens_details": {"cached_tokens": cached_tokens, "cache_write_tokens": 0},
            "output_tokens": output_tokens,
            "output_tokens_details": {"reasoning_tokens": reasoning_tokens},
            "total_tokens": input_tokens + output_tokens,
        }
        terminal = "response.completed" if status == "completed" else f"response.{status}"
        emit(terminal, response=response(status, finished, usage))
    return Stream(events)


def responses_error_event(code: str, message: str, *, model: str = "gpt-5.4") -> Stream:
    """A Responses stream that starts and then fails with an ``error`` event (a server-side failure)."""
    stream = responses_stream(model=model, complete=False)
    sequence = len(stream.events)
    stream.events.append(
        (
            "error",
            {"type": "error", "sequence_number": sequence, "code": code, "message": message, "param": None},
        )
    )
    return stream


# -- Google Gemini ----------------------------------------------------------------------------


@dataclass
class Part:
    """One part of a Gemini reply: text, a thought (``thought: true``) or a function call."""

    kind: str  # text, thought, function_call
    text: str = ""
    signature: str | None = None  # thoughtSignature (base64), sent on the part's last chunk
    name: str = ""
    args: Any = None
    id: str | None = None
    chunks: int = 0


def gemini_text(value: str, *, signature: str | None = None, chunks: int = 0) -> Part:
    return Part("text", text=value, signature=signature, chunks=chunks)


def gemini_thought(value: str, *, signature: str | None = None, chunks: int = 0) -> Part:
    return Part("thought", text=value, signature=signature, chunks=chunks)


def gemini_call(name: str, args: Any, *, call_id: str | None = None, signature: str | None = None) -> Part:
    return Part("function_call", name=name, args=args, id=call_id, signature=signature)


def gemini_stream(
    *parts: Part,
    finish_reason: str | None = "STOP",
    model: str = "gemini-2.5-flash",
    prompt_tokens: int = 100,
    candidates_tokens: int = 20,
    thoughts_tokens: int = 0,
    cached_tokens: int = 0,
) -> Stream:
    """The SSE chunks of ``streamGenerateContent?alt=sse``: each a GenerateContentResponse
    (``data:`` lines, no event names), one piece of one part per chunk, the last chunk carrying
    ``finishReason`` and ``usageMetadata``. ``finish_reason=None`` ends without one."""
    chunks: list[JSON] = []
    for part in parts:
        if part.kind == "function_call":
            call: JSON = {"name": part.name, "args": part.args}
            if part.id:
                call["id"] = part.id
            pieces: list[JSON] = [{"functionCall": call}]
        else:
            pieces = [{"text": piece} for piece in _split(part.text, part.chunks)]
            if part.kind == "thought":
                pieces = [{**p, "thought": True} for p in pieces]
        if part.signature and pieces:
            pieces[-1]["thoughtSignature"] = part.signature
        chunks.extend(
            {"candidates": [{"content": {"role": "model", "parts": [piece]}, "index": 0}]} for piece in pieces
        )
    if not chunks:
        chunks.append({"candidates": [{"content": {"role": "model", "parts": [{"text": ""}]}, "index": 0}]})
    last = chunks[-1]
    if finish_reason:
        last["candidates"][0]["finishReason"] = finish_reason
    usage: JSON = {
        "promptTokenCount": prompt_tokens,
        "candidatesTokenCount": candidates_tokens,
        "totalTokenCount": prompt_tokens + candidates_tokens + thoughts_tokens,
    }
    if thoughts_tokens:
        usage["thoughtsTokenCount"] = thoughts_tokens
    if cached_tokens:
        usage["cachedContentTokenCount"] = cached_tokens
    for chunk in chunks:
        chunk["modelVersion"] = model
        chunk["responseId"] = "gemini-fake"
        chunk["usageMetadata"] = usage
    return Stream([(None, chunk) for chunk in chunks])


def gemini_error(status: int, message: str, status_name: str, **headers: str) -> HTTPError:
    """A Gemini API error, e.g. ``gemini_error(429, "Resource exhausted", "RESOURCE_EXHAUSTED")``."""
    return HTTPError(
        status,
        {"error": {"code": status, "message": message, "status": status_name}},
        {k.replace("_", "-"): v for k, v in headers.items()},
    )


# -- context overflow, as each server family answers it --------------------------------------

#: The server families :func:`overflow_error` can imitate (real bodies: tests/fixtures/overflow).
OVERFLOW_FAMILIES = ("anthropic", "openai", "llamacpp", "vllm", "ollama", "lmstudio", "openrouter")


def overflow_error(family: str, window: int, prompt: int, completion: int = 0) -> HTTPError:
    """The error ``family``'s server answers a prompt of ``prompt`` tokens with, its window being
    ``window`` (the bodies and statuses of the fixtures, with these figures)."""
    if family == "anthropic":
        message = f"prompt is too long: {prompt} tokens > {window} maximum"
        return HTTPError(
            400, {"type": "error", "error": {"type": "invalid_request_error", "message": message}}
        )
    if family == "openai":
        message = (
            f"This model's maximum context length is {window} tokens. However, you requested "
            f"{prompt + completion} tokens ({prompt} in the messages, {completion} in the completion). "
            "Please reduce the length of the messages or completion."
        )
        error = {"message": message, "type": "invalid_request_error", "param": "messages"}
        return HTTPError(400, {"error": {**error, "code": "context_length_exceeded"}})
    if family == "llamacpp":  # the same body on /v1/chat/completions and /v1/messages
        message = f"request ({prompt} tokens) exceeds the available context size ({window} tokens), try increasing it"
        fields: JSON = {"code": 400, "message": message, "type": "exceed_context_size_error"}
        return HTTPError(400, {"error": {**fields, "n_prompt_tokens": prompt, "n_ctx": window}})
    if family == "vllm":
        message = (
            f"This model's maximum context length is {window} tokens. However, your request has {prompt} "
            "input tokens. Please reduce the length of the input messages."
        )
        return HTTPError(
            400, {"error": {"message": message, "type": "BadRequestError", "param": None, "code": 400}}
        )
    if family == "ollama":
        message = f"prompt too long; exceeded max context length by {prompt - window} tokens"
        return HTTPError(
            400, {"error": {"message": message, "type": "invalid_request_error", "param": None, "code": None}}
        )
    if family == "lmstudio":
        message = (
            f"Trying to keep the first {prompt} tokens when context the overflows. However, the model is "
            f"loaded with context length of only {window} tokens, which is not enough. Try to load the "
            "model with a larger context length, or provide a shorter input"
        )
        return HTTPError(400, {"error": message})
    if family == "openrouter":
        message = (
            f"This endpoint's maximum context length is {window} tokens. However, you requested about "
            f"{prompt + completion} tokens ({prompt} of text input, {completion} in the output). Please "
            'reduce the length of either one, or use the "middle-out" transform to compress your prompt '
            "automatically."
        )
        return HTTPError(
            400, {"error": {"message": message, "code": 400, "metadata": {"provider_name": None}}}
        )
    raise ValueError(f"unknown server family {family!r}")


# -- Amazon Bedrock ---------------------------------------------------------------------------


def _event_stream_message(headers: dict[str, str], payload: bytes) -> bytes:
    """One message of the AWS event stream encoding (application/vnd.amazon.eventstream): prelude
    (total and headers length, CRC32), string headers, the payload, the message's CRC32."""
    encoded = b"".join(
        bytes([len(name)]) + name.encode() + b"\x07" + len(value).to_bytes(2, "big") + value.encode()
        for name, value in headers.items()
    )
    total = 12 + len(encoded) + len(payload) + 4
    prelude = total.to_bytes(4, "big") + len(encoded).to_bytes(4, "big")
    prelude += zlib.crc32(prelude).to_bytes(4, "big")
    message = prelude + encoded + payload
    return message + zlib.crc32(message).to_bytes(4, "big")


def bedrock_stream(stream: Stream) -> Stream:
    """An Anthropic Messages stream as Bedrock's invoke-with-response-stream sends it: each event's
    JSON, base64-encoded, in a ``chunk`` event of the AWS event stream encoding."""
    frames: list[tuple[str | None, Any]] = []
    for _, data in stream.events:
        payload = json.dumps({"bytes": base64.b64encode(json.dumps(data).encode()).decode()}).encode()
        headers = {":event-type": "chunk", ":content-type": "application/json", ":message-type": "event"}
        frames.append((RAW, _event_stream_message(headers, payload)))
    return Stream(frames, content_type="application/vnd.amazon.eventstream")


# -- the server -------------------------------------------------------------------------------


class FakeModelServer:
    """A real HTTP server on 127.0.0.1 (random port) answering each request with the next scripted response."""

    def __init__(self) -> None:
        self.requests: list[RecordedRequest] = []
        self._queue: deque[Response] = deque()
        self._lock = threading.Lock()
        self._stopping = threading.Event()
        self._httpd: ThreadingHTTPServer | None = None
        self._thread: threading.Thread | None = None
        self.disconnects = 0  # streams the client closed before the end
        # Called in the server thread as each request arrives, before it is answered: a test can
        # snapshot the session file at exactly the moment of the call.
        self.on_request: Callable[[RecordedRequest], None] | None = None
        # Answers requests when the queue is empty (long-running campaigns whose clients get killed
        # mid-request, so no fixed queue could stay in step with them). Called in the server thread.
        self.responder: Callable[[RecordedRequest], Response] | None = None
        #: Called in the server thread with each token count answered (the ``count`` fault).
        self.on_count: Callable[[RecordedRequest], None] | None = None
        # What the server says about its models, answered apart from the queue (404 when unset):
        # ``GET /v1/models`` (OpenAI-compatible servers and Anthropic; vLLM adds max_model_len),
        # llama.cpp's ``GET /props`` and Ollama's ``POST /api/show``.
        self.models: list[JSON] | None = None
        self.props: JSON | None = None
        self.ollama_show: JSON | None = None
        self.model_requests: list[RecordedRequest] = []
        #: When set to an Event, each models question waits for it (at most 30 s) before its answer.
        self.models_gate: threading.Event | None = None
        #: The faults in force, by name (FAULTS): ``context_window`` -> the window in tokens,
        #: ``count`` -> the percent of its figure the server counts (and its count endpoints answer).
        self.faults: dict[str, int] = {}
        #: The token counts asked (count endpoints; only when the ``count`` fault is in force).
        self.count_requests: list[RecordedRequest] = []

    def fault(self, spec: str) -> FakeModelServer:
        """Put the fault ``spec`` ("name:N", a name of FAULTS) in force; ValueError for a bad one."""
        name, _, value = spec.partition(":")
        if name not in FAULTS or not value.isdigit():
            raise ValueError(f"unknown fault {spec!r} (known: {', '.join(f + ':N' for f in FAULTS)})")
        self.faults[name] = int(value)
        return self

    def _fault(self, request: RecordedRequest) -> Response | None:
        """The refusal a fault in force answers ``request`` with, or None."""
        window = self.faults.get("context_window")
        if window is None:
            return None
        tokens = self.tokens(request.body)
        if tokens <= window:
            return None
        return overflow_error("anthropic" if "/messages" in request.path else "openai", window, tokens)

    def tokens(self, body: Any) -> int:
        """What this server counts ``body`` as: :func:`server_tokens`, times the ``count`` fault's percent."""
        return server_tokens(body) * self.faults.get("count", 100) // 100

    def _count(self, request: RecordedRequest) -> JSON | None:
        """The answer to a token count (the ``count`` fault in force), or None: not a count path."""
        path = request.path.split("?")[0]
        body = request.body if isinstance(request.body, dict) else {}
        if "count" not in self.faults or request.method != "POST":
            return None
        if path == "/v1/messages/count_tokens":
            return {"input_tokens": self.tokens(body)}
        if path.startswith("/v1beta/models/") and path.endswith(":countTokens"):
            return {"totalTokens": self.tokens(body)}
        if path == "/apply-template":  # the chat template: here, the messages and tools as JSON
            return {"prompt": json.dumps(body, ensure_ascii=False)}
        if path == "/tokenize":
            content = str(body.get("content", ""))
            return {"tokens": list(range((len(content) + 3) // 4 * self.faults["count"] // 100))}
        return None

    def serve_models(self, *ids: str, **extra: Any) -> FakeModelServer:
        """``GET /v1/models`` lists ``ids`` (each entry gets ``extra``, e.g. ``max_model_len=4096``)."""
        self.models = [{"id": i, "object": "model", "created": 0, "owned_by": "fake", **extra} for i in ids]
        return self

    def _about_models(self, request: RecordedRequest) -> JSON | None:
        """The answer to a models question, or None when the path is not one (or not set)."""
        path = request.path.split("?")[0]
        if path == "/v1/models" and request.method == "GET" and self.models is not None:
            return {"object": "list", "data": self.models, "has_more": False}
        if path == "/props" and self.props is not None:
            return self.props
        if path == "/api/show" and self.ollama_show is not None:
            return self.ollama_show
        return None

    # lifecycle

    def start(self) -> FakeModelServer:
        server = self

        class Handler(_Handler):
            owner = server

        self._httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self._httpd.daemon_threads = True
        self._thread = threading.Thread(
            target=self._httpd.serve_forever,
            kwargs={"poll_interval": 0.05},
            name="fake-model-server",
            daemon=True,
        )
        self._thread.start()
        return self

    def stop(self) -> None:
        self._stopping.set()
        if self._httpd is not None:
            self._httpd.shutdown()
            self._httpd.server_close()
            self._httpd = None
        if self._thread is not None:
            self._thread.join(timeout=5)
            self._thread = None

    def __enter__(self) -> FakeModelServer:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()

    # addresses

    @property
    def port(self) -> int:
        assert self._httpd is not None, "server not started"
        return int(self._httpd.server_address[1])

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    @property
    def anthropic_base_url(self) -> str:
        return self.base_url  # the SDK appends /v1/messages

    @property
    def openai_base_url(self) -> str:
        return self.base_url + "/v1"  # the SDK appends /chat/completions

    # scripting

    def push(self, *responses: Response) -> FakeModelServer:
        with self._lock:
            self._queue.extend(responses)
        return self

    @property
    def pending(self) -> int:
        with self._lock:
            return len(self._queue)

    @property
    def bodies(self) -> list[Any]:
        return [r.body for r in self.requests]

    def _next(self, request: RecordedRequest) -> Response:
        if self.on_request is not None:
            self.on_request(request)
        with self._lock:
            self.requests.append(request)
            refused = self._fault(request)
            if refused is not None:
                return refused
            if self._queue:
                return self._queue.popleft()
            number = len(self.requests)
        if self.responder is not None:
            return self.responder(request)
        return HTTPError(
            400,
            {
                "type": "error",
                "error": {
                    "type": "invalid_request_error",
                    "message": f"fake server: no scripted response for request {number}",
                },
            },
        )


class _Handler(BaseHTTPRequestHandler):
    owner: FakeModelServer
    protocol_version = "HTTP/1.1"

    def log_message(self, format: str, *args: Any) -> None:  # quiet
        return

    def do_GET(self) -> None:
        self._handle()

    def do_POST(self) -> None:
        self._handle()

    def _read_body(self) -> bytes:
        if self.headers.get("transfer-encoding", "").lower() == "chunked":
            data = b""
            while True:
                size = int(self.rfile.readline().strip() or b"0", 16)
                if size == 0:
                    self.rfile.readline()
                    return data
                data += self.rfile.read(size)
                self.rfile.readline()
        length = int(self.headers.get("content-length") or 0)
        return self.rfile.read(length) if length else b""

    def _handle(self) -> None:
        raw = self._read_body()
        try:
            body: Any = json.loads(raw) if raw else None
        except ValueError:
            body = raw.decode("utf-8", "replace")
        recorded = RecordedRequest(
            self.command,
            self.path,
            {k.lower(): v for k, v in self.headers.items()},
            body,
            time.monotonic(),
        )
        path = recorded.path.split("?")[0]
        if path in COUNT_PATHS or path.endswith(":countTokens"):
            counted = self.owner._count(recorded)
            if counted is not None:
                self.owner.count_requests.append(recorded)
                if self.owner.on_count is not None:
                    self.owner.on_count(recorded)
            self._send_error(
                HTTPError(200, counted) if counted is not None else HTTPError(404, {"error": "not found"})
            )
            return
        if path in ("/v1/models", "/props", "/api/show"):
            self.owner.model_requests.append(recorded)
            if self.owner.models_gate is not None:
                self.owner.models_gate.wait(30)
            answer = self.owner._about_models(recorded)
            self._send_error(
                HTTPError(200, answer) if answer is not None else HTTPError(404, {"error": "not found"})
            )
            return
        response = self.owner._next(recorded)
        try:
            if isinstance(response, HTTPError):
                self._send_error(response)
            elif isinstance(response, Hang):
                self._hang(response)
            else:
                self._send_stream(response)
        except (BrokenPipeError, ConnectionResetError, ConnectionAbortedError):
            self.owner.disconnects += 1
            self.close_connection = True

    def _send_error(self, response: HTTPError) -> None:
        payload = json.dumps(response.body).encode()
        self.send_response(response.status)
        self.send_header("content-type", "application/json")
        self.send_header("content-length", str(len(payload)))
        self.send_header("request-id", "req_fake")
        for name, value in response.headers.items():
            self.send_header(name, value)
        self.end_headers()
        self.wfile.write(payload)
        self.wfile.flush()

    def _hang(self, response: Hang) -> None:
        deadline = time.monotonic() + response.seconds
        self.connection.settimeout(0.05)
        while time.monotonic() < deadline and not self.owner._stopping.is_set():
            try:
                if self.connection.recv(1, socket.MSG_PEEK) == b"":
                    self.owner.disconnects += 1
                    break
            except (TimeoutError, BlockingIOError):
                continue
            except OSError:
                break
        self.close_connection = True

    def _send_stream(self, response: Stream) -> None:
        self.send_response(response.status)
        self.send_header("content-type", response.content_type)
        self.send_header("cache-control", "no-cache")
        self.send_header("transfer-encoding", "chunked")
        self.send_header("request-id", "req_fake")
        for name, value in response.headers.items():
            self.send_header(name, value)
        self.end_headers()
        self.wfile.flush()
        for number, (event, data) in enumerate(response.events):
            if response.drop_after is not None and number >= response.drop_after:
                self._drop()
                return
            if number and response.delay and self.owner._stopping.wait(response.delay):
                self._drop()
                return
            if response.gate is not None and number == response.gate_at:
                while not response.gate.wait(0.05):
                    if self.owner._stopping.is_set():
                        self._drop()
                        return
            if isinstance(data, bytes):  # a binary frame (AWS event stream), sent as it is
                self._chunk(data)
                continue
            payload = data if isinstance(data, str) else json.dumps(data)
            if event == RAW:  # sent as it is: garbage lines, broken framing
                frame = payload
            else:
                frame = (f"event: {event}\n" if event else "") + f"data: {payload}\n\n"
            self._chunk(frame.encode())
        if response.drop_after is not None and response.drop_after >= len(response.events):
            self._drop()
            return
        self.wfile.write(b"0\r\n\r\n")
        self.wfile.flush()

    def _chunk(self, data: bytes) -> None:
        self.wfile.write(f"{len(data):x}\r\n".encode() + data + b"\r\n")
        self.wfile.flush()

    def _drop(self) -> None:
        """Close the socket without the final chunk: the client sees a body cut short."""
        self.close_connection = True
        try:
            self.wfile.flush()
            self.connection.shutdown(socket.SHUT_RDWR)
        except OSError:
            pass


#: The faults :meth:`FakeModelServer.fault` and ``--fault`` know.
FAULTS = ("context_window", "count")
#: The token-count endpoints (and Gemini's ``...:countTokens``), answered under the ``count`` fault.
COUNT_PATHS = ("/v1/messages/count_tokens", "/apply-template", "/tokenize")


def server_tokens(body: Any) -> int:
    """What the server counts a request as: its body's JSON, 4 characters a token (a little more
    than agent-tui estimates, as real tokenizers and chat templates count)."""
    return (len(json.dumps(body, ensure_ascii=False)) + 3) // 4


def _last_user_text(body: Any) -> str:
    """The last text block of the last user message (a summary and the turn after it are one)."""
    messages = body.get("messages") if isinstance(body, dict) else None
    for message in reversed(messages or []):
        if isinstance(message, dict) and message.get("role") == "user":
            content = message.get("content")
            if isinstance(content, str):
                return content
            texts = [b.get("text", "") for b in content or [] if isinstance(b, dict) and b.get("text")]
            return str(texts[-1]) if texts else ""
    return ""


def quoting_responder(request: RecordedRequest) -> Response:
    """The process's answer: its last user message quoted (80 characters), in the request's API."""
    reply = "reply to: " + " ".join(_last_user_text(request.body).split())[:80]
    return anthropic_stream(text(reply)) if "/messages" in request.path else openai_stream(reply)


def main(argv: Sequence[str] | None = None) -> int:
    """Serve until SIGTERM or SIGINT: the base URL on stdout's first line, requests in ``--log``."""
    parser = argparse.ArgumentParser(prog="fake_model_server", description=__doc__.split("\n")[0])
    parser.add_argument(
        "--fault", action="append", default=[], metavar="NAME:N", help=f"one of {', '.join(FAULTS)}"
    )
    parser.add_argument("--log", help="append each request received as a JSON line to this file")
    args = parser.parse_args(argv)
    server = FakeModelServer()
    for spec in args.fault:
        try:
            server.fault(spec)
        except ValueError as e:
            parser.error(str(e))
    server.responder = quoting_responder
    if args.log:
        log = args.log

        def record(request: RecordedRequest) -> None:
            line = {"method": request.method, "path": request.path, "body": request.body}
            with open(log, "a", encoding="utf-8") as f:
                f.write(json.dumps(line, ensure_ascii=False) + "\n")

        server.on_request = record
        server.on_count = record
    stop = threading.Event()
    signal.signal(signal.SIGTERM, lambda *_: stop.set())
    signal.signal(signal.SIGINT, lambda *_: stop.set())
    with server:
        print(server.base_url, flush=True)
        while not stop.wait(0.2):
            pass
    return 0


__all__ = [
    "COUNT_PATHS",
    "FAULTS",
    "OVERFLOW_FAMILIES",
    "RAW",
    "Block",
    "Call",
    "FakeModelServer",
    "HTTPError",
    "Hang",
    "Item",
    "Part",
    "RecordedRequest",
    "Stream",
    "anthropic_error",
    "anthropic_stream",
    "bedrock_stream",
    "call",
    "function_call_item",
    "gemini_call",
    "gemini_error",
    "gemini_stream",
    "gemini_text",
    "gemini_thought",
    "message_item",
    "openai_error",
    "openai_stream",
    "overflow_error",
    "quoting_responder",
    "reasoning_item",
    "redacted_thinking",
    "responses_error_event",
    "responses_stream",
    "server_tokens",
    "text",
    "thinking",
    "tool_use",
]


if __name__ == "__main__":
    raise SystemExit(main())
