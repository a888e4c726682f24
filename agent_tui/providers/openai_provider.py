"""OpenAI Chat Completions through the official SDK: OpenAI itself and any compatible server.

Ollama, vLLM, the llama.cpp server and LM Studio speak this API; point
``base_url`` at them. The body is
:mod:`agent_tui.projection.wire.openai_completions`' body, passed field by field to
``AsyncOpenAI.chat.completions.create``. Reasoning that compatible servers
stream as ``reasoning_content`` / ``reasoning`` becomes a thinking block, as pi
records it.
"""

from __future__ import annotations

import secrets
from collections.abc import AsyncIterator
from typing import TYPE_CHECKING, Any, cast

from agent_tui.projection import registry
from agent_tui.projection.request import Prepared
from agent_tui.projection.wire import openai_completions
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
    from openai import AsyncOpenAI, AsyncStream
    from openai.types.chat import ChatCompletionChunk

API = openai_completions.API
REASONING_FIELDS = ("reasoning_content", "reasoning", "reasoning_text")


def map_finish_reason(reason: str | None) -> Stop:
    """pi's mapStopReason for Chat Completions."""
    if reason in (None, "stop", "end"):
        return Stop("stop")
    if reason == "length":
        return Stop("length")
    if reason in ("tool_calls", "function_call"):
        return Stop("toolUse")
    return Stop("error", f"Provider finish_reason: {reason}")


class OpenAIProvider(SdkProvider["AsyncOpenAI"]):
    name = registry.openai.NAME
    api = API

    def request_body(self, prepared: Prepared, model: str, *, thinking_level: str = "off") -> JSONObject:
        return openai_completions.request_body(prepared, model, thinking_level=thinking_level)

    def client(self) -> AsyncOpenAI:
        if self._client is None:
            import openai
            from openai import AsyncOpenAI

            self._client = AsyncOpenAI(**self._client_options(openai.Timeout, openai.DefaultAsyncHttpxClient))
        return self._client

    async def count_tokens(self, body: JSONObject) -> int | None:
        """A llama.cpp server's count: its chat template applied (``POST /apply-template``), then
        ``POST /tokenize``. Only a server whose ``/props`` said it is llama.cpp is asked; OpenAI's
        Chat Completions and the other compatible servers have no count: None."""
        from agent_tui.providers.model_list import llama_server_root

        root = llama_server_root(self.base_url)
        if root is None:
            return None
        client = self.client()
        options: Any = {"timeout": COUNT_TIMEOUT}
        template_body = {key: body[key] for key in ("messages", "tools") if key in body}
        template = await client.post(
            root + "/apply-template", cast_to=object, body=template_body, options=options
        )
        prompt = template.get("prompt") if isinstance(template, dict) else None
        if not isinstance(prompt, str):
            return None
        tokens = await client.post(
            root + "/tokenize", cast_to=object, body={"content": prompt}, options=options
        )
        listed = tokens.get("tokens") if isinstance(tokens, dict) else None
        return len(listed) if isinstance(listed, list) else None

    async def stream(self, body: JSONObject) -> AsyncIterator[ProviderEvent]:
        import openai

        client = self.client()
        log_request(self.request_log, body)
        try:
            response = cast("AsyncStream[ChatCompletionChunk]", await client.chat.completions.create(**body))
        except openai.APIStatusError as e:
            yield classify(e.status_code, e.body, e.response.headers, e.message)
            return
        except openai.APIConnectionError as e:
            yield connection_error(e.__cause__ or e, started=False, timeout=self._timeout)
            return
        next_index = 0
        text_index: int | None = None
        thinking_index: int | None = None
        calls: dict[int, JSONObject] = {}  # stream index -> {index, id, name, json}
        calls_by_id: dict[str, JSONObject] = {}
        finish: Stop | None = None
        try:
            async for chunk in response:
                usage: Any = getattr(chunk, "usage", None)
                if usage is not None:
                    yield _usage(usage)
                choices = chunk.choices or []
                if not choices:
                    continue
                choice: Any = choices[0]
                if choice.finish_reason:
                    finish = map_finish_reason(choice.finish_reason)
                delta: Any = choice.delta
                if delta is None:
                    continue
                for fieldname in REASONING_FIELDS:
                    value = getattr(delta, fieldname, None)
                    if isinstance(value, str) and value:
                        if thinking_index is None:
                            thinking_index, next_index = next_index, next_index + 1
                            yield ThinkingSignature(thinking_index, fieldname)
                        yield ThinkingDelta(thinking_index, value)
                        break
                if delta.content:
                    if text_index is None:
                        text_index, next_index = next_index, next_index + 1
                    yield TextDelta(text_index, delta.content)
                for tc in delta.tool_calls or []:
                    function = tc.function
                    state = calls.get(tc.index) if tc.index is not None else None
                    if state is None and tc.id:
                        state = calls_by_id.get(tc.id)
                    if state is None:
                        state = {"index": next_index, "id": tc.id or "", "name": "", "json": ""}
                        next_index += 1
                        calls[tc.index if tc.index is not None else -state["index"] - 1] = state
                    if tc.id:
                        state["id"] = state["id"] or tc.id
                        calls_by_id[tc.id] = state
                    if function is not None and function.name and not state["name"]:
                        state["name"] = function.name
                    fragment = (function.arguments if function is not None else None) or ""
                    state["json"] += fragment
                    yield ToolCallDelta(state["index"], state["id"], state["name"], fragment)
        except openai.APIStatusError as e:  # an error object inside the stream
            yield classify(e.status_code, e.body, None, e.message)
            return
        except openai.APIConnectionError as e:
            yield connection_error(e.__cause__ or e, started=True, timeout=self._timeout)
            return
        except openai.APIError as e:  # an error object inside the stream, without a status
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
        for state in calls.values():
            args, error = parse_arguments(state["json"])
            call_id = state["id"] or f"call_{secrets.token_hex(12)}"  # some local servers send no id
            yield ToolCall(state["index"], call_id, state["name"], args, error)
        if finish is None:
            yield ProviderError("incomplete", "the stream ended without a finish_reason", True)
        else:
            yield finish


def _usage(raw: Any) -> Usage:
    """pi's parseChunkUsage: cached prompt tokens are cache reads, not input."""
    prompt = getattr(raw, "prompt_tokens", 0) or 0
    details = getattr(raw, "prompt_tokens_details", None)
    cached = (getattr(details, "cached_tokens", 0) if details is not None else 0) or 0
    completion = getattr(raw, "completion_tokens", 0) or 0
    return Usage(max(0, prompt - cached), completion, cached, 0)


__all__ = ["API", "OpenAIProvider", "map_finish_reason"]
