"""The OpenAI Chat Completions request body, from a prepared projection (pure).

The system prompt is the first message; tool results are ``tool`` messages (text only: their images
follow as a user message); ``reasoning_effort`` follows the thinking level as pi 1.6 sends it.
"""

from __future__ import annotations

from typing import Any

from agent_tui.projection.models import clamp_thinking_level, lookup
from agent_tui.projection.request import EMPTY_RESULT_TEXT, Prepared, sendable
from agent_tui.projection.wire.common import JSONObject, json_text, tool_description, tool_parameters

API = "openai-completions"


def request_body(
    prepared: Prepared, model: str, *, thinking_level: str | None = "off", max_tokens: int | None = None
) -> JSONObject:
    """The body sent for ``model`` at ``thinking_level`` (what ``context --format`` prints)."""
    return openai_request(prepared, model, max_tokens=max_tokens, **openai_thinking(thinking_level, model))


def openai_reasoning_effort(level: str | None, model: str) -> str | None:
    """The Chat Completions ``reasoning_effort`` for a session's thinking level, as pi 1.6 sends it.

    Only reasoning models whose endpoint takes the field get one. "off" sends the model's off value
    if it has one ("none" for gpt-5.1 and later), else nothing; another level is clamped to the
    model's levels (gpt-5.1 has no minimal: low; o3 has no xhigh: high) and sent as the model's
    value for it, or its own name when the model has no map.
    """
    info = lookup(model)
    if not info.reasoning or not info.supports_reasoning_effort:
        return None
    levels = info.thinking_level_map or {}
    effort = clamp_thinking_level(info, level) if level and level != "off" else "off"
    if effort == "off":
        return levels.get("off")
    mapped = levels.get(effort)
    return mapped if mapped is not None else effort


def openai_thinking(level: str | None, model: str) -> dict[str, Any]:
    """``openai_request`` keyword arguments for a thinking level (nothing when no effort is sent)."""
    effort = openai_reasoning_effort(level, model)
    return {} if effort is None else {"reasoning_effort": effort}


def openai_request(
    prepared: Prepared,
    model: str,
    *,
    max_tokens: int | None = None,
    reasoning_effort: str | None = None,
    stream: bool = True,
) -> JSONObject:
    """The Chat Completions body; the system prompt is the first message. ``reasoning_effort``
    comes from :func:`openai_thinking`."""
    prepared = sendable(prepared)  # one rule for every API: never an empty conversation
    messages: list[JSONObject] = []
    if prepared.system:
        messages.append({"role": "system", "content": prepared.system})
    held_images: list[JSONObject] = []  # tool messages take text only: their images follow as a user message
    for i, pm in enumerate(prepared.messages):
        if pm.role == "assistant":
            text = "".join(b["text"] for b in pm.content if b["type"] == "text")
            calls = [
                {
                    "id": b["id"],
                    "type": "function",
                    "function": {"name": b["name"], "arguments": json_text(b["arguments"])},
                }
                for b in pm.content
                if b["type"] == "toolCall"
            ]
            message: JSONObject = {"role": "assistant", "content": text or None}
            if calls:
                message["tool_calls"] = calls
            if not text and not calls:
                message["content"] = "(no text)"
            messages.append(message)
        elif pm.role == "toolResult":
            text = "\n".join(b["text"] for b in pm.content if b["type"] == "text")
            images = [b for b in pm.content if b["type"] == "image"]
            if images:
                held_images.extend(images)
                text = (text + "\n" if text else "") + "(images attached below)"
            messages.append(
                {
                    "role": "tool",
                    "tool_call_id": pm.message.get("toolCallId"),
                    "content": text or EMPTY_RESULT_TEXT,
                }
            )
            following = prepared.messages[i + 1].role if i + 1 < len(prepared.messages) else None
            if held_images and following != "toolResult":
                messages.append({"role": "user", "content": [_openai_part(b) for b in held_images]})
                held_images = []
        else:
            parts = [_openai_part(b) for b in pm.content]
            if all(p["type"] == "text" for p in parts):
                messages.append({"role": "user", "content": "\n".join(p["text"] for p in parts)})
            else:
                messages.append({"role": "user", "content": parts})
    info = lookup(model)
    body: JSONObject = {
        "model": model,
        "messages": messages,
        "max_completion_tokens": max_tokens or info.max_output,
    }
    if prepared.tools:
        body["tools"] = [
            {
                "type": "function",
                "function": {
                    "name": t["name"],
                    "description": tool_description(t),
                    "parameters": tool_parameters(t),
                },
            }
            for t in prepared.tools
        ]
    if reasoning_effort is not None:
        body["reasoning_effort"] = reasoning_effort
    if stream:
        body["stream"] = True
        body["stream_options"] = {"include_usage": True}
    return body


def _openai_part(block: JSONObject) -> JSONObject:
    if block.get("type") == "image":
        return {
            "type": "image_url",
            "image_url": {"url": f"data:{block.get('mimeType', 'image/png')};base64,{block['data']}"},
        }
    return {"type": "text", "text": block.get("text", "")}
