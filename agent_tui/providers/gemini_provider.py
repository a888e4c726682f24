"""Google Gemini through the official ``google-genai`` SDK (``client.aio.models.generate_content_stream``).

The body is :mod:`agent_tui.projection.wire.google_generative_ai`'s; the SDK sends it to
``models/{model}:streamGenerateContent?alt=sse`` with the key in ``x-goog-api-key``. Parts become
pi's blocks as pi's Google adapter makes them: consecutive thought parts one thinking block,
consecutive text parts one text block (each keeping the last thought signature it was given), a
function call one tool call (with its own signature; an id made up when Gemini sends none).
"""

from __future__ import annotations

import base64
import json
import secrets
from collections.abc import AsyncIterator
from typing import TYPE_CHECKING, Any

from agent_tui.projection import registry
from agent_tui.projection.request import Prepared
from agent_tui.projection.tokens import estimate_text, estimate_tools
from agent_tui.projection.wire import google_generative_ai
from agent_tui.providers.base import (
    COUNT_TIMEOUT,
    DEFAULT_TIMEOUT,
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
    TextSignature,
    ThinkingDelta,
    ThinkingSignature,
    ToolCall,
    ToolCallDelta,
    Usage,
)

if TYPE_CHECKING:
    from google.genai import Client

API = google_generative_ai.API
API_VERSION = "v1beta"  # pi's base URL ends in /v1beta: thought summaries and levels are there first
_LENGTH = {"MAX_TOKENS", "CONTINUATION"}


def map_finish_reason(reason: str | None) -> Stop:
    """pi's mapStopReason for Gemini: STOP ends, MAX_TOKENS is the output limit, the rest errors."""
    if reason == "STOP":
        return Stop("stop")
    if reason in _LENGTH:
        return Stop("length")
    return Stop("error", f"Provider stopped with: {reason}")


def sdk_contents(contents: list[JSONObject]) -> list[JSONObject]:
    """``contents`` with the base64 text the body keeps (thought signatures, inline image data) as
    the bytes the SDK's types hold (the SDK base64-encodes bytes again on the wire)."""
    out: list[JSONObject] = []
    for content in contents:
        parts = []
        for part in content.get("parts", []):
            part = dict(part)
            if isinstance(part.get("thought_signature"), str):
                part["thought_signature"] = base64.b64decode(part["thought_signature"])
            inline = part.get("inline_data")
            if isinstance(inline, dict) and isinstance(inline.get("data"), str):
                part["inline_data"] = {**inline, "data": base64.b64decode(inline["data"])}
            parts.append(part)
        out.append({**content, "parts": parts})
    return out


class GeminiProvider(SdkProvider[Any]):  # genai.Client closes with aio.aclose()
    name = registry.google.NAME
    api = API

    def request_body(self, prepared: Prepared, model: str, *, thinking_level: str = "off") -> JSONObject:
        return google_generative_ai.request_body(prepared, model, thinking_level=thinking_level)

    def client(self) -> Client:
        if self._client is None:
            from google import genai
            from google.genai import types

            seconds = DEFAULT_TIMEOUT if self._timeout is None else self._timeout
            options = types.HttpOptions(
                base_url=self.base_url or None,
                api_version=API_VERSION,
                timeout=int(seconds * 1000),  # milliseconds; the SDK retries nothing unless told
                headers=self.headers or None,
            )
            self._client = genai.Client(api_key=self._api_key, http_options=options)
        return self._client

    async def aclose(self) -> None:
        if self._client is not None:
            await self._client.aio.aclose()
            self._client = None

    async def count_tokens(self, body: JSONObject) -> int | None:
        """``models/{model}:countTokens`` on the body's contents. The Developer API's count takes
        no system instruction or tools (the SDK refuses them outside Vertex): those are estimated
        and added, as they are in every other figure."""
        import asyncio

        from google.genai import types

        contents = [types.Content.model_validate(c) for c in sdk_contents(body["contents"])]
        counted = await asyncio.wait_for(
            self.client().aio.models.count_tokens(model=body["model"], contents=contents), COUNT_TIMEOUT
        )
        if counted.total_tokens is None:
            return None
        config = body.get("config") or {}
        system = config.get("system_instruction")
        added = estimate_text(system) if isinstance(system, str) else 0
        declarations = [
            d for tool in config.get("tools") or [] for d in tool.get("function_declarations", [])
        ]
        return int(counted.total_tokens) + added + estimate_tools(declarations)

    async def stream(self, body: JSONObject) -> AsyncIterator[ProviderEvent]:
        from google.genai import errors, types

        client = self.client()
        log_request(self.request_log, body)
        try:
            # the SDK's own types, validated from the body: a plain dict's nested fields would go
            # out as written (snake_case), which the API ignores
            contents = [types.Content.model_validate(c) for c in sdk_contents(body["contents"])]
            config = types.GenerateContentConfig.model_validate(body.get("config") or {})
            response = await client.aio.models.generate_content_stream(
                model=body["model"], contents=contents, config=config
            )
        except errors.APIError as e:
            yield _api_error(e)
            return
        except Exception as e:
            if is_transport_error(e):
                yield connection_error(e, started=False, timeout=self._timeout)
            else:
                yield malformed_error(e)
            return
        started = False
        next_index = 0
        current: tuple[str, int] | None = None  # (thinking | text, block index)
        calls = 0
        seen_ids: set[str] = set()
        finish: Stop | None = None
        try:
            async for chunk in response:
                started = True
                candidates = chunk.candidates or []
                candidate: Any = candidates[0] if candidates else None
                parts = (
                    candidate.content.parts if candidate is not None and candidate.content else None
                ) or []
                for part in parts:
                    signature = _b64(part.thought_signature)
                    if part.text is not None:
                        kind = "thinking" if part.thought else "text"
                        if current is None or current[0] != kind:
                            current, next_index = (kind, next_index), next_index + 1
                        index = current[1]
                        if kind == "thinking":
                            yield ThinkingDelta(index, part.text)
                            if signature:
                                yield ThinkingSignature(index, signature)
                        else:
                            yield TextDelta(index, part.text)
                            if signature:
                                yield TextSignature(index, signature)
                    if part.function_call is not None:
                        current = None
                        call = part.function_call
                        calls += 1
                        call_id = call.id if call.id and call.id not in seen_ids else None
                        call_id = call_id or f"{call.name}_{secrets.token_hex(6)}_{calls}"
                        seen_ids.add(call_id)
                        args = dict(call.args or {})
                        index, next_index = next_index, next_index + 1
                        yield ToolCallDelta(index, call_id, call.name or "", json.dumps(args))
                        yield ToolCall(index, call_id, call.name or "", args, None, signature)
                if candidate is not None and candidate.finish_reason:
                    reason = getattr(candidate.finish_reason, "value", candidate.finish_reason)
                    finish = map_finish_reason(str(reason))
                    if finish.stop_reason == "stop" and calls:
                        finish = Stop("toolUse")
                meta: Any = chunk.usage_metadata
                if meta is not None:
                    cached = meta.cached_content_token_count or 0
                    yield Usage(
                        max(0, (meta.prompt_token_count or 0) - cached),
                        (meta.candidates_token_count or 0) + (meta.thoughts_token_count or 0),
                        cached,
                        0,
                    )
        except errors.APIError as e:
            yield _api_error(e)
            return
        except Exception as e:
            if is_transport_error(e):
                yield connection_error(e, started=started, timeout=self._timeout)
            else:
                yield malformed_error(e)
            return
        if finish is None:
            yield ProviderError("incomplete", "the stream ended without a finish reason", True)
        else:
            yield finish


def _b64(value: bytes | None) -> str | None:
    return base64.b64encode(value).decode() if value else None


def _api_error(error: Any) -> ProviderError:
    """An HTTP error of the Gemini API (``{"error": {"code", "message", "status"}}``)."""
    response = getattr(error, "response", None)
    headers = getattr(response, "headers", None)
    body = {"type": error.status, "message": error.message}
    lowered = {str(k).lower(): str(v) for k, v in headers.items()} if headers is not None else None
    return classify(error.code, body, lowered, str(error))


__all__ = ["API", "GeminiProvider", "map_finish_reason", "sdk_contents"]
