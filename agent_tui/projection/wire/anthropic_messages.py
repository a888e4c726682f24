"""The Anthropic Messages API's request body, from a prepared projection (pure).

Tool results go in the user message after their call; thinking blocks go back only to the model
that signed them; the system prompt and the last message carry ``cache_control``.
"""

from __future__ import annotations

import hashlib
import re
from typing import Any

from agent_tui.projection.models import lookup
from agent_tui.projection.request import CONTINUE_TEXT, Prepared, sendable
from agent_tui.projection.wire.common import JSONObject, tool_description, tool_parameters

API = "anthropic-messages"
_ANTHROPIC_ID = re.compile(r"^[A-Za-z0-9_-]{1,64}$")


def request_body(
    prepared: Prepared, model: str, *, thinking_level: str | None = "off", max_tokens: int | None = None
) -> JSONObject:
    """The body sent for ``model`` at ``thinking_level`` (what ``context --format`` prints)."""
    return anthropic_request(
        prepared, model, max_tokens=max_tokens, **anthropic_thinking(thinking_level, model)
    )


# pi's thinking budgets per level (DEFAULT_THINKING_BUDGETS); at least 1,024 tokens stay for the answer.
THINKING_BUDGETS = {"minimal": 1024, "low": 2048, "medium": 8192, "high": 16384, "xhigh": 16384}
THINKING_EFFORTS = {"minimal": "low", "low": "low", "medium": "medium", "high": "high", "xhigh": "xhigh"}


def thinking_budget(level: str | None, model: str) -> int | None:
    """The Anthropic thinking budget for a session's thinking level, None when off or the model cannot think."""
    budget = THINKING_BUDGETS.get(level or "off")
    info = lookup(model)
    if budget is None or not info.reasoning:
        return None
    return max(1024, min(budget, info.max_output - 1024))


def anthropic_thinking(level: str | None, model: str) -> dict[str, Any]:
    """``anthropic_request`` keyword arguments for a thinking level: an effort for models with adaptive
    thinking, a token budget for older ones, nothing when off or the model cannot think (as pi sends it)."""
    if lookup(model).adaptive_thinking:
        effort = THINKING_EFFORTS.get(level or "off")
        return {"thinking_effort": effort} if effort else {}
    budget = thinking_budget(level, model)
    return {"thinking_budget": budget} if budget else {}


def anthropic_tool_id(call_id: str) -> str:
    """Anthropic wants ``^[A-Za-z0-9_-]{1,64}$``; other providers' ids are mapped stably."""
    if _ANTHROPIC_ID.match(call_id):
        return call_id
    return "toolu_" + hashlib.sha256(call_id.encode()).hexdigest()[:40]  # a hash: two ids never collide


def anthropic_request(
    prepared: Prepared,
    model: str,
    *,
    max_tokens: int | None = None,
    thinking_budget: int | None = None,
    thinking_effort: str | None = None,
    stream: bool = True,
    cache: bool = True,
) -> JSONObject:
    """The Messages API body. Tool results go in the user message after their call, results first."""
    prepared = sendable(prepared)  # one rule for every API: never an empty conversation
    messages: list[JSONObject] = []

    def push(role: str, blocks: list[JSONObject]) -> None:
        if messages and messages[-1]["role"] == role:
            messages[-1]["content"].extend(blocks)
        else:
            messages.append({"role": role, "content": blocks})

    for pm in prepared.messages:
        if pm.role == "assistant":
            # pi's isSameModel: the same model through the same API (a Claude model's thinking
            # relayed by a Chat Completions gateway carries no signature this API accepts)
            same_model = pm.message.get("model") == model and pm.message.get("api") in (API, None)
            blocks: list[JSONObject] = []
            for b in pm.content:
                kind = b["type"]
                if kind == "text":
                    blocks.append({"type": "text", "text": b["text"]})
                elif kind == "thinking":
                    if not same_model or not b.get("thinkingSignature"):
                        continue  # thinking is only valid for the model that signed it
                    if b.get("redacted"):
                        blocks.append({"type": "redacted_thinking", "data": b["thinkingSignature"]})
                    else:
                        blocks.append(
                            {
                                "type": "thinking",
                                "thinking": b.get("thinking", ""),
                                "signature": b["thinkingSignature"],
                            }
                        )
                elif kind == "toolCall":
                    blocks.append(
                        {
                            "type": "tool_use",
                            "id": anthropic_tool_id(b["id"]),
                            "name": b["name"],
                            "input": b["arguments"],
                        }
                    )
            if not blocks:
                blocks = [{"type": "text", "text": "(no text)"}]
            push("assistant", blocks)
        elif pm.role == "toolResult":
            result: JSONObject = {
                "type": "tool_result",
                "tool_use_id": anthropic_tool_id(str(pm.message.get("toolCallId"))),
                "content": [_anthropic_block(b) for b in pm.content],
            }
            if pm.message.get("isError"):
                result["is_error"] = True
            push("user", [result])  # prepare() put every result right after its call
        else:
            push("user", [_anthropic_block(b) for b in pm.content])
    if not messages or messages[0]["role"] != "user":
        prepared.repairs.append("added a user message at the start: the API requires one")
        messages.insert(0, {"role": "user", "content": [{"type": "text", "text": CONTINUE_TEXT}]})
    info = lookup(model)
    body: JSONObject = {"model": model, "max_tokens": max_tokens or info.max_output, "messages": messages}
    if prepared.system:
        system_block: JSONObject = {"type": "text", "text": prepared.system}
        if cache:
            system_block["cache_control"] = {"type": "ephemeral"}
        body["system"] = [system_block]
    if prepared.tools:
        body["tools"] = [
            {"name": t["name"], "description": tool_description(t), "input_schema": tool_parameters(t)}
            for t in prepared.tools
        ]
    if cache and messages:
        # The stable prefix ends at the last message: mark it so the next call reads it from cache.
        last = messages[-1]["content"][-1]
        if last.get("type") in ("text", "tool_result", "image", "tool_use"):
            last["cache_control"] = {"type": "ephemeral"}
    if thinking_effort:
        body["thinking"] = {"type": "adaptive", "display": "summarized"}
        body["output_config"] = {"effort": thinking_effort}
    elif thinking_budget:
        body["thinking"] = {"type": "enabled", "budget_tokens": thinking_budget}
    if stream:
        body["stream"] = True
    return body


def _anthropic_block(block: JSONObject) -> JSONObject:
    if block.get("type") == "image":
        return {
            "type": "image",
            "source": {
                "type": "base64",
                "media_type": block.get("mimeType", "image/png"),
                "data": block["data"],
            },
        }
    return {"type": "text", "text": block.get("text", "")}
