"""The OpenAI Responses API body (``client.responses.stream``), as pi 1.6 writes it.

Stateless: ``store`` is false, so every request carries the whole conversation, and the reasoning a
model produced is sent back as the item it streamed (its ``encrypted_content`` included, which
``include: ["reasoning.encrypted_content"]`` asks for). The item is kept whole, as JSON, in the
thinking block's ``thinkingSignature`` (pi's layout); a text block's ``textSignature`` holds its
message item id (``{"v": 1, "id": ...}``); a tool call's id is ``call_id|item_id``.

Blocks written by another model follow pi's transform-messages rules: thinking is dropped (its
signature is only valid for the model that made it), a text block goes as plain text, a foreign
tool call keeps its call id (normalized to ``[A-Za-z0-9_-]``, 64 characters) without an item id.
"""

from __future__ import annotations

import hashlib
import json
import re
from typing import Any

from agent_tui.projection.models import clamp_thinking_level, lookup
from agent_tui.projection.request import EMPTY_RESULT_TEXT, Prepared, PreparedMessage, sendable
from agent_tui.projection.wire.common import JSONObject, tool_description, tool_parameters

API = "openai-responses"
#: OpenAI Responses rejects max_output_tokens below 16 (pi's OPENAI_RESPONSES_MIN_OUTPUT_TOKENS).
MIN_OUTPUT_TOKENS = 16
_ID_UNSAFE = re.compile(r"[^a-zA-Z0-9_-]")


def reasoning_effort(level: str | None, model: str) -> str | None:
    """``reasoning.effort`` for a thinking level, as pi's Responses adapter sends it.

    Only reasoning models get one. "off" sends the model's off value ("none" when the model has no
    map; nothing when the map says off is unsupported, as for gpt-5 and the o-series); another level
    is clamped to the model's levels and sent as the model's value for it, or its own name.
    """
    info = lookup(model)
    if not info.reasoning:
        return None
    levels = info.thinking_level_map or {}
    effort = clamp_thinking_level(info, level) if level and level != "off" else "off"
    if effort == "off":
        if "off" in levels:
            return levels["off"]
        return "none"
    mapped = levels.get(effort)
    return mapped if mapped is not None else effort


def request_body(
    prepared: Prepared,
    model: str,
    *,
    thinking_level: str | None = "off",
    max_tokens: int | None = None,
) -> JSONObject:
    """The ``responses.create`` / ``responses.stream`` keyword arguments (``stream`` included: the
    adapter leaves it out for ``responses.stream``, which sets it itself)."""
    prepared = sendable(prepared)  # one rule for every API: never an empty conversation
    info = lookup(model)
    effort = reasoning_effort(thinking_level, model)
    thinking = effort is not None and (thinking_level or "off") != "off"
    items: list[JSONObject] = []
    if prepared.system:
        items.append({"role": "developer" if info.reasoning else "system", "content": prepared.system})
    for number, pm in enumerate(prepared.messages):
        if pm.role == "user":
            content = [_input_part(b) for b in pm.content]
            if content:
                items.append({"role": "user", "content": content})
        elif pm.role == "assistant":
            items.extend(_assistant_items(pm, model, number))
        else:
            call_id = _call_id(str(pm.message.get("toolCallId") or ""))
            text = "\n".join(b["text"] for b in pm.content if b.get("type") == "text")
            if not text.strip():
                text = "(see attached image)" if any(b.get("type") == "image" for b in pm.content) else ""
            items.append(
                {"type": "function_call_output", "call_id": call_id, "output": text or EMPTY_RESULT_TEXT}
            )
    body: JSONObject = {
        "model": model,
        "input": items,
        "stream": True,
        "store": False,
        "max_output_tokens": max(max_tokens or info.max_output, MIN_OUTPUT_TOKENS),
    }
    if prepared.tools:
        body["tools"] = [
            {
                "type": "function",
                "name": t["name"],
                "description": tool_description(t),
                "parameters": tool_parameters(t),
            }
            for t in prepared.tools
        ]
    if effort is not None:
        if thinking:
            body["reasoning"] = {"effort": effort, "summary": "auto"}
            body["include"] = ["reasoning.encrypted_content"]
        else:
            body["reasoning"] = {"effort": effort}
    return body


def same_model(message: JSONObject, model: str) -> bool:
    """Whether an assistant message was written by ``model`` through this API (pi's isSameModel)."""
    return message.get("api") == API and message.get("model") == model


def _assistant_items(pm: PreparedMessage, model: str, number: int) -> list[JSONObject]:
    own = same_model(pm.message, model)
    out: list[JSONObject] = []
    texts = 0
    for block in pm.content:
        kind = block.get("type")
        if kind == "thinking":
            signature = block.get("thinkingSignature")
            if not own or not isinstance(signature, str):
                continue  # another model's reasoning: dropped, as pi does
            item = _reasoning_item(signature)
            if item is not None:
                out.append(item)
        elif kind == "text":
            message_id, phase = _text_signature(block.get("textSignature")) if own else (None, None)
            if not message_id:
                message_id = f"msg_pi_{number}" if texts == 0 else f"msg_pi_{number}_{texts}"
            elif len(message_id) > 64:
                message_id = "msg_" + _short_hash(message_id)
            texts += 1
            item = {
                "type": "message",
                "role": "assistant",
                "content": [{"type": "output_text", "text": block["text"], "annotations": []}],
                "status": "completed",
                "id": message_id,
            }
            if phase:
                item["phase"] = phase
            out.append(item)
        elif kind == "toolCall":
            raw = str(block["id"])
            item_id = raw.partition("|")[2]
            call: JSONObject = {
                "type": "function_call",
                "call_id": _call_id(raw),
                "name": block["name"],
                "arguments": json.dumps(block.get("arguments") or {}, ensure_ascii=False),
            }
            if own and item_id.startswith("fc_"):
                call["id"] = _normalize(item_id)
            out.append(call)
    return out


def _reasoning_item(signature: str) -> JSONObject | None:
    try:
        item = json.loads(signature)
    except (ValueError, RecursionError):  # a session file's: nested too deeply is no item
        return None
    return item if isinstance(item, dict) and item.get("type") == "reasoning" else None


def _text_signature(signature: Any) -> tuple[str | None, str | None]:
    """pi's parseTextSignature: ``{"v": 1, "id": ..., "phase": ...}`` or a bare id."""
    if not isinstance(signature, str) or not signature:
        return None, None
    if signature.startswith("{"):
        try:
            parsed = json.loads(signature)
        except (ValueError, RecursionError):
            parsed = None
        if isinstance(parsed, dict) and parsed.get("v") == 1 and isinstance(parsed.get("id"), str):
            phase = parsed.get("phase")
            return parsed["id"], phase if phase in ("commentary", "final_answer") else None
    return signature, None


def text_signature(item_id: str, phase: str | None = None) -> str:
    """pi's encodeTextSignatureV1: what a text block keeps of its message item."""
    payload: JSONObject = {"v": 1, "id": item_id}
    if phase:
        payload["phase"] = phase
    return json.dumps(payload, separators=(",", ":"))


def _normalize(part: str) -> str:
    return _ID_UNSAFE.sub("_", part)[:64].rstrip("_")


def _call_id(tool_call_id: str) -> str:
    """The ``call_id`` of a tool call id (``call_id|item_id`` for our own, anything for others')."""
    return _normalize(tool_call_id.partition("|")[0]) or "call_" + _short_hash(tool_call_id)


def _short_hash(value: str) -> str:
    return hashlib.sha256(value.encode()).hexdigest()[:24]


def _input_part(block: JSONObject) -> JSONObject:
    if block.get("type") == "image":
        return {
            "type": "input_image",
            "detail": "auto",
            "image_url": f"data:{block.get('mimeType', 'image/png')};base64,{block['data']}",
        }
    return {"type": "input_text", "text": block.get("text", "")}


__all__ = ["API", "reasoning_effort", "request_body", "same_model", "text_signature"]
