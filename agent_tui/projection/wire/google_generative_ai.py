"""The Gemini API body (``google-genai``'s ``models.generate_content_stream``), as pi 1.6 writes it.

The body is the SDK call's keyword arguments: ``model``, ``contents`` and ``config`` in the SDK's
field names (snake_case; the SDK sends them camelCased to ``:streamGenerateContent?alt=sse``).
Thought signatures stay base64 text here, as pi keeps them (``thinkingSignature`` on a thinking
block, ``textSignature`` on text, ``thoughtSignature`` on a tool call); the adapter hands the SDK
their bytes. Signatures and thinking written by another model are not sent (pi's rule).

Thinking: Gemini 2.5 models take a token budget (pi's per-model budgets, -1 "dynamic" for the
rest), Gemini 3 and later a level; "off" is a budget of 0, or the lowest level a model has when it
cannot turn thinking off.
"""

from __future__ import annotations

import re
from typing import Any

from agent_tui.projection.models import ModelInfo, clamp_thinking_level, lookup
from agent_tui.projection.request import Prepared, PreparedMessage, sendable
from agent_tui.projection.wire.common import JSONObject, tool_description, tool_parameters

API = "google-generative-ai"
_BASE64 = re.compile(r"^[A-Za-z0-9+/]+={0,2}$")
_ID_UNSAFE = re.compile(r"[^a-zA-Z0-9_-]")
_LEVELS = ("minimal", "low", "medium", "high")
# pi's getGoogleBudget: tokens per level for the Gemini 2.5 families, checked in this order.
_BUDGETS = (
    ("2.5-pro", {"minimal": 128, "low": 2048, "medium": 8192, "high": 32768}),
    ("2.5-flash-lite", {"minimal": 512, "low": 2048, "medium": 8192, "high": 24576}),
    ("2.5-flash", {"minimal": 128, "low": 2048, "medium": 8192, "high": 24576}),
)
_THINKING_LEVEL_MODEL = re.compile(r"gemini-3(?:\.\d+)?-(?:pro|flash)|gemini-(?:[4-9]|[1-9]\d)|gemma-?4")


def uses_thinking_level(model: str) -> bool:
    """pi's usesGoogleThinkingLevel: Gemini 3 Pro/Flash and later take a level, not a budget."""
    lowered = model.lower()
    return bool(_THINKING_LEVEL_MODEL.search(lowered)) or lowered in (
        "gemini-flash-latest",
        "gemini-flash-lite-latest",
    )


def thinking_budget(model: str, level: str) -> int:
    for fragment, budgets in _BUDGETS:
        if fragment in model:
            return budgets.get(level, -1)
    return -1


def _google_level(info: ModelInfo, level: str) -> str | None:
    mapped = (info.thinking_level_map or {}).get(level)
    resolved = mapped.lower() if isinstance(mapped, str) else level
    return resolved.upper() if resolved in _LEVELS else None


def thinking_config(level: str | None, model: str) -> JSONObject | None:
    """The ``thinking_config`` for a thinking level (None for a model that does not think)."""
    info = lookup(model)
    if not info.reasoning:
        return None
    clamped = clamp_thinking_level(info, level) if level and level != "off" else "off"
    if clamped == "off":
        if not uses_thinking_level(model):
            return {"thinking_budget": 0}
        lowest = clamp_thinking_level(info, "off")
        google = _google_level(info, lowest) if lowest != "off" else None
        return {"thinking_level": google} if google else {"thinking_budget": 0}
    if uses_thinking_level(model):
        google = _google_level(info, clamped)
        return {"include_thoughts": True, **({"thinking_level": google} if google else {})}
    return {"include_thoughts": True, "thinking_budget": thinking_budget(model, clamped)}


def requires_tool_call_id(model: str) -> bool:
    """pi's requiresToolCallId: Gemini 3 and later (and Claude, gpt-oss through Google) want ids."""
    match = re.match(r"^gemini(?:-live)?-(\d+)", model.lower())
    return model.startswith(("claude-", "gpt-oss-")) or (match is not None and int(match.group(1)) >= 3)


def request_body(
    prepared: Prepared,
    model: str,
    *,
    thinking_level: str | None = "off",
    max_tokens: int | None = None,
) -> JSONObject:
    prepared = sendable(prepared)  # one rule for every API: never an empty conversation
    info = lookup(model)
    contents: list[JSONObject] = []
    with_ids = requires_tool_call_id(model)
    for pm in prepared.messages:
        if pm.role == "user":
            parts = [_user_part(b) for b in pm.content]
            if parts:
                contents.append({"role": "user", "parts": parts})
        elif pm.role == "assistant":
            parts = _model_parts(pm, model, with_ids)
            if parts:
                contents.append({"role": "model", "parts": parts})
        else:
            contents_append_result(contents, pm, with_ids)
    config: JSONObject = {"max_output_tokens": max_tokens or info.max_output}
    if prepared.system:
        config["system_instruction"] = prepared.system
    if prepared.tools:
        config["tools"] = [
            {
                "function_declarations": [
                    {
                        "name": t["name"],
                        "description": tool_description(t),
                        "parameters_json_schema": tool_parameters(t),
                    }
                    for t in prepared.tools
                ]
            }
        ]
        # the SDK would otherwise run Python callables it was given; we pass none, but say so
        config["automatic_function_calling"] = {"disable": True}
    thinking = thinking_config(thinking_level, model)
    if thinking is not None:
        config["thinking_config"] = thinking
    return {"model": model, "contents": contents, "config": config}


def same_model(message: JSONObject, model: str) -> bool:
    return message.get("api") == API and message.get("model") == model


def _signature(own: bool, value: Any) -> str | None:
    if not own or not isinstance(value, str) or not value or len(value) % 4 or not _BASE64.match(value):
        return None
    return value


def _model_parts(pm: PreparedMessage, model: str, with_ids: bool) -> list[JSONObject]:
    own = same_model(pm.message, model)
    parts: list[JSONObject] = []
    for block in pm.content:
        kind = block.get("type")
        if kind == "text":
            signature = _signature(own, block.get("textSignature"))
            if not block["text"].strip() and not signature:
                continue
            part: JSONObject = {"text": block["text"]}
            if signature:
                part["thought_signature"] = signature
            parts.append(part)
        elif kind == "thinking":
            if not own:
                continue  # another model's thinking is dropped (pi's transform-messages)
            signature = _signature(own, block.get("thinkingSignature"))
            thought = block.get("thinking") or ""
            if not thought.strip() and not signature:
                continue
            part = {"thought": True, "text": thought}
            if signature:
                part["thought_signature"] = signature
            parts.append(part)
        elif kind == "toolCall":
            call: JSONObject = {"name": block["name"], "args": block.get("arguments") or {}}
            if with_ids:
                call["id"] = _ID_UNSAFE.sub("_", str(block["id"]))[:64]
            part = {"function_call": call}
            signature = _signature(own, block.get("thoughtSignature"))
            if signature:
                part["thought_signature"] = signature
            parts.append(part)
    return parts


def contents_append_result(contents: list[JSONObject], pm: PreparedMessage, with_ids: bool) -> None:
    """A tool result as a ``function_response`` part; results of one turn share one user content."""
    text = "\n".join(b["text"] for b in pm.content if b.get("type") == "text")
    images = [b for b in pm.content if b.get("type") == "image"]
    value = text if text.strip() else ("(see attached image)" if images else "")
    response: JSONObject = {
        "name": str(pm.message.get("toolName") or ""),
        "response": {"error": value} if pm.message.get("isError") else {"output": value},
    }
    if with_ids:
        response["id"] = _ID_UNSAFE.sub("_", str(pm.message.get("toolCallId") or ""))[:64]
    part = {"function_response": response}
    last = contents[-1] if contents else None
    if last is not None and last["role"] == "user" and any("function_response" in p for p in last["parts"]):
        last["parts"].append(part)
    else:
        contents.append({"role": "user", "parts": [part]})
    if images:
        contents.append({"role": "user", "parts": [{"text": "Tool result image:"}, *map(_user_part, images)]})


def _user_part(block: JSONObject) -> JSONObject:
    if block.get("type") == "image":
        return {"inline_data": {"mime_type": block.get("mimeType", "image/png"), "data": block["data"]}}
    return {"text": block.get("text", "")}


__all__ = [
    "API",
    "request_body",
    "requires_tool_call_id",
    "same_model",
    "thinking_budget",
    "thinking_config",
    "uses_thinking_level",
]
