"""From projected messages to a provider request that is always valid.

``prepare`` makes the message list well-formed whatever hides, cuts and
branches did to it (every tool call has exactly one result and every result
its call, no empty messages, the system prompt pulled out) and records each
repair. ``anthropic_request`` and ``openai_request`` then write the request
bodies of the Anthropic Messages and OpenAI Chat Completions APIs.
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

import msgspec

from agent_tui.projection.context import ProjectedMessage
from agent_tui.projection.models import clamp_thinking_level, lookup

JSONObject = dict[str, Any]
NO_RESULT_TEXT = "No result provided"
EMPTY_RESULT_TEXT = "(no output)"
CONTINUE_TEXT = "(The earlier conversation is not shown.)"

_encode = msgspec.json.Encoder().encode
_ANTHROPIC_ID = re.compile(r"^[A-Za-z0-9_-]{1,64}$")


@dataclass(slots=True)
class PreparedMessage:
    """A message ready for conversion, with the entry it came from (None if synthesized)."""

    role: str  # user, assistant, toolResult
    content: list[JSONObject]
    source_id: str | None
    message: JSONObject  # the original message fields (provider, model, toolCallId, ...)


@dataclass(slots=True)
class Prepared:
    system: str
    tools: list[JSONObject]
    messages: list[PreparedMessage]
    repairs: list[str] = field(default_factory=list)
    #: messages of the projection not sent, by source entry: why (aborted, empty, orphan result...)
    left_out: dict[str, str] = field(default_factory=dict)
    #: the "No result provided" results added for an assistant message's unanswered calls, by its entry
    added: dict[str, list[PreparedMessage]] = field(default_factory=dict)


def system_prompt(messages: Sequence[JSONObject]) -> tuple[str, list[JSONObject]]:
    """pi's getCurrentSystemMessage: replay every system message into one prompt and tool set."""
    content: list[str] = []
    sections: dict[str, str] = {}
    tools: dict[str, JSONObject] = {}
    for message in messages:
        text = _text_of(message.get("content"))
        if text:
            content.append(text)
        for name, value in _mapping(message.get("sections")).items():
            if value is None:
                sections.pop(name, None)
            elif isinstance(value, str):
                sections[name] = value
        for tool in _sequence(message.get("toolsRemoved")):
            if isinstance(tool, dict):
                tools.pop(str(tool.get("name")), None)
        for tool in _sequence(message.get("toolsAdded")):
            if isinstance(tool, dict) and isinstance(tool.get("name"), str) and tool["name"]:
                tools[tool["name"]] = tool
    parts = ["\n\n".join(content), *sections.values()]
    return "\n\n".join(p for p in parts if p), list(tools.values())


def system_message_text(message: JSONObject) -> str:
    """One system message as readable text: its content, each section it sets (pi keeps the prompt
    in ``sections``; a removed section is named), and the tools it adds or removes."""
    parts: list[str] = []
    text = _text_of(message.get("content"))
    if text:
        parts.append(text)
    for name, value in _mapping(message.get("sections")).items():
        if isinstance(value, str):
            parts.append(value)
        elif value is None:
            parts.append(f"[section {name} removed]")
    added = [str(t.get("name")) for t in _sequence(message.get("toolsAdded")) if isinstance(t, dict)]
    removed = [str(t.get("name")) for t in _sequence(message.get("toolsRemoved")) if isinstance(t, dict)]
    if added:
        parts.append("[tools: " + ", ".join(added) + "]")
    if removed:
        parts.append("[tools removed: " + ", ".join(removed) + "]")
    return "\n\n".join(parts)


def current_system_message(messages: Sequence[JSONObject]) -> JSONObject | None:
    """pi's getCurrentSystemMessage: every system message replayed into one (content, sections, tools).

    A compaction stores it as its ``systemMessage`` snapshot, which stands in for the
    system messages it folds away.
    """
    systems = [m for m in messages if m.get("role") == "system"]
    if not systems:
        return None
    content = [text for m in systems if (text := _text_of(m.get("content")))]
    sections: dict[str, str] = {}
    for m in systems:
        for name, value in _mapping(m.get("sections")).items():
            if value is None:
                sections.pop(name, None)
            elif isinstance(value, str):
                sections[name] = value
    _, tools = system_prompt(systems)
    message: JSONObject = {"role": "system", "content": "\n\n".join(content)}
    if sections:
        message["sections"] = sections
    if tools:
        message["toolsAdded"] = tools
    message["timestamp"] = systems[0].get("timestamp", 0)
    return message


def prepare(projected: Sequence[ProjectedMessage]) -> Prepared:
    """Make the projected messages a valid conversation, noting every repair."""
    repairs: list[str] = []
    left_out: dict[str, str] = {}
    added: dict[str, list[PreparedMessage]] = {}
    systems = [m.message for m in projected if m.role == "system"]
    system, tools = system_prompt(systems)
    out: list[PreparedMessage] = []
    pending: list[JSONObject] = []  # tool calls of the last assistant message still owed a result
    answered: set[str] = set()
    pending_owner: str | None = None
    used_ids: set[str] = set()  # every tool call id sent so far: the APIs want them unique
    sent_as: dict[int, str] = {}  # id() of a pending call -> the id it was written under (renamed)

    def close_pending() -> None:
        nonlocal pending, answered
        for call in pending:
            call_id = sent_as[id(call)]
            if call_id not in answered:
                repairs.append(
                    f"added a result for unanswered tool call {call_id} ({call.get('name')}) of {pending_owner}"
                )
                placeholder = PreparedMessage(
                    "toolResult",
                    [{"type": "text", "text": NO_RESULT_TEXT}],
                    None,
                    {
                        "role": "toolResult",
                        "toolCallId": call_id,
                        "toolName": call.get("name"),
                        "isError": True,
                    },
                )
                out.append(placeholder)
                added.setdefault(pending_owner or "", []).append(placeholder)
        pending = []
        answered = set()

    for pm in projected:
        role = pm.role
        if role == "system":
            continue
        message = pm.message
        if role == "assistant":
            close_pending()
            if message.get("stopReason") in ("error", "aborted"):
                reason = f"ended with {message.get('stopReason')}"
                left_out[pm.source_id] = reason
                repairs.append(f"left out {pm.source_id}: assistant message that {reason}")
                continue
            content = _assistant_content(message.get("content"))
            if not content:
                left_out[pm.source_id] = "empty"
                repairs.append(f"left out {pm.source_id}: empty assistant message")
                continue
            content, calls, sent_as = _unique_call_ids(content, used_ids, pm.source_id, repairs)
            out.append(PreparedMessage("assistant", content, pm.source_id, message))
            pending, answered, pending_owner = calls, set(), pm.source_id
        elif role == "toolResult":
            call_id = message.get("toolCallId")
            if not any(c["id"] == call_id for c in pending):
                left_out[pm.source_id] = "its tool call is not in view"
                repairs.append(
                    f"left out {pm.source_id}: result for tool call {call_id}, which is not in view"
                )
                continue
            # the first call of that id still owed a result (two calls may share an id: see
            # _unique_call_ids); none left: a second result
            owed = next((c for c in pending if c["id"] == call_id and sent_as[id(c)] not in answered), None)
            if owed is None:
                left_out[pm.source_id] = "a second result for its call"
                repairs.append(f"left out {pm.source_id}: second result for tool call {call_id}")
                continue
            answered.add(sent_as[id(owed)])
            if sent_as[id(owed)] != call_id:
                message = {**message, "toolCallId": sent_as[id(owed)]}
            content = _user_content(message.get("content")) or [{"type": "text", "text": EMPTY_RESULT_TEXT}]
            out.append(PreparedMessage("toolResult", content, pm.source_id, message))
        elif role == "user":
            close_pending()
            content = _user_content(message.get("content"))
            if not content:
                left_out[pm.source_id] = "empty"
                repairs.append(f"left out {pm.source_id}: empty user message")
                continue
            out.append(PreparedMessage("user", content, pm.source_id, message))
    close_pending()
    return Prepared(system, tools, out, repairs, left_out, added)


def _unique_call_ids(
    content: list[JSONObject], used: set[str], source_id: str | None, repairs: list[str]
) -> tuple[list[JSONObject], list[JSONObject], dict[int, str]]:
    """``content`` with every tool call id unique in the request (local servers reuse ids: two calls
    ``0``), its calls as the model sent them, and what each call is sent as. A repeated id is
    renamed ``ID_2``, ``ID_3``... (recorded as a repair); results are matched to the calls of their
    id in order."""
    calls = [b for b in content if b.get("type") == "toolCall"]
    sent_as: dict[int, str] = {}
    renamed: dict[int, str] = {}
    for call in calls:
        original = str(call["id"])
        new = original
        n = 1
        while new in used:
            n += 1
            new = f"{original}_{n}"
        used.add(new)
        sent_as[id(call)] = new
        if new != original:
            renamed[id(call)] = new
            repairs.append(f"renamed tool call {original} of {source_id} to {new}: the id was already used")
    if renamed:
        content = [{**b, "id": renamed[id(b)]} if id(b) in renamed else b for b in content]
    return content, calls, sent_as


def _mapping(value: Any) -> dict[str, Any]:
    """``value`` if it is an object (a damaged file may hold anything where one is expected)."""
    return value if isinstance(value, dict) else {}


def _sequence(value: Any) -> list[Any]:
    return value if isinstance(value, list) else []


def _text_of(content: Any) -> str:
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        return "\n".join(
            str(b.get("text", "")) for b in content if isinstance(b, dict) and b.get("type") == "text"
        )
    return ""


def _user_content(content: Any) -> list[JSONObject]:
    """Text and image blocks, without empty text."""
    if isinstance(content, str):
        return [{"type": "text", "text": content}] if content.strip() else []
    blocks: list[JSONObject] = []
    for block in content if isinstance(content, list) else []:
        if not isinstance(block, dict):
            continue
        if block.get("type") == "text" and isinstance(block.get("text"), str) and block["text"].strip():
            blocks.append(block)
        elif block.get("type") == "image" and isinstance(block.get("data"), str) and block["data"]:
            mime = block.get("mimeType")
            blocks.append(block if isinstance(mime, str) and mime else {**block, "mimeType": "image/png"})
    return blocks


def _assistant_content(content: Any) -> list[JSONObject]:
    """Text, thinking and tool call blocks, without empty ones; text given as a string is one text
    block (pi's type says a list, other programs write a string)."""
    if isinstance(content, str):
        return [{"type": "text", "text": content}] if content.strip() else []
    blocks: list[JSONObject] = []
    for block in content if isinstance(content, list) else []:
        if not isinstance(block, dict):
            continue
        kind = block.get("type")
        if kind == "text" and isinstance(block.get("text"), str) and block["text"].strip():
            blocks.append(block)
        elif kind == "thinking":
            signature = block.get("thinkingSignature")
            thought = block.get("thinking")
            if not isinstance(signature, str):
                signature = None
            if not isinstance(thought, str):
                thought = ""
            if signature or thought.strip():
                blocks.append({**block, "thinking": thought, "thinkingSignature": signature})
        elif (
            kind == "toolCall"
            and isinstance(block.get("id"), str)
            and block["id"]
            and isinstance(block.get("name"), str)
            and block["name"]
        ):
            args = block.get("arguments")
            blocks.append(block if isinstance(args, dict) else {**block, "arguments": _as_object(args)})
    return blocks


def _as_object(value: Any) -> JSONObject:
    if isinstance(value, str):
        try:
            decoded = msgspec.json.decode(value)
        except msgspec.DecodeError:
            return {"input": value}
        return decoded if isinstance(decoded, dict) else {"input": decoded}
    return {} if value is None else {"input": value}


def _json(value: Any) -> str:
    return _encode(value).decode()


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


# -- Anthropic Messages ---------------------------------------------------------------


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
    messages: list[JSONObject] = []

    def push(role: str, blocks: list[JSONObject]) -> None:
        if messages and messages[-1]["role"] == role:
            messages[-1]["content"].extend(blocks)
        else:
            messages.append({"role": role, "content": blocks})

    for pm in prepared.messages:
        if pm.role == "assistant":
            same_model = pm.message.get("model") == model
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
            {"name": t["name"], "description": _description(t), "input_schema": _parameters(t)}
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


def _description(tool: JSONObject) -> str:
    value = tool.get("description")
    return value if isinstance(value, str) else ""


def _parameters(tool: JSONObject) -> JSONObject:
    value = tool.get("parameters")
    return value if isinstance(value, dict) and value else {"type": "object", "properties": {}}


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


# -- OpenAI Chat Completions ------------------------------------------------------------


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
                    "function": {"name": b["name"], "arguments": _json(b["arguments"])},
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
                "function": {"name": t["name"], "description": _description(t), "parameters": _parameters(t)},
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
