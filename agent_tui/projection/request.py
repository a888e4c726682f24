"""From projected messages to a provider request that is always valid.

``prepare`` makes the message list well-formed whatever hides, cuts and
branches did to it (every tool call has exactly one result and every result
its call, no empty messages, the system prompt pulled out) and records each
repair. Each API's module under :mod:`agent_tui.projection.wire` then writes
its request body from the result.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field, replace
from typing import Any

import msgspec

from agent_tui.projection.context import ProjectedMessage
from agent_tui.store.content import content_text

JSONObject = dict[str, Any]
NO_RESULT_TEXT = "No result provided"
EMPTY_RESULT_TEXT = "(no output)"
CONTINUE_TEXT = "(The earlier conversation is not shown.)"


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
        text = content_text(message.get("content"), "\n")
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
    text = content_text(message.get("content"), "\n")
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
    content = [text for m in systems if (text := content_text(m.get("content"), "\n"))]
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


def prepare(
    projected: Sequence[ProjectedMessage], read: Callable[[ProjectedMessage], JSONObject] | None = None
) -> Prepared:
    """Make the projected messages a valid conversation, noting every repair. ``read`` gives each
    message (the panel's reads and counts one without keeping it decoded); the default, ``message``."""
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
        message = read(pm) if read is not None else pm.message
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


def sent_content(role: str, message: JSONObject) -> list[JSONObject]:
    """The content :func:`prepare` sends for one message it keeps (its tool call ids as written)."""
    if role == "assistant":
        return _assistant_content(message.get("content"))
    content = _user_content(message.get("content"))
    if role == "toolResult" and not content:
        return [{"type": "text", "text": EMPTY_RESULT_TEXT}]
    return content


def sendable(prepared: Prepared) -> Prepared:
    """``prepared`` as every wire format sends it: an empty conversation (a branch whose messages
    are all empty or left out) becomes one placeholder user message, recorded as a repair; every
    API refuses none (OpenAI Chat's ``messages: []``, a Responses body without input, Gemini's empty
    contents). Each wire module's ``request_body`` starts here, so the rule is one."""
    if prepared.messages:
        return prepared
    placeholder = PreparedMessage("user", [{"type": "text", "text": CONTINUE_TEXT}], None, {"role": "user"})
    return replace(
        prepared,
        messages=[placeholder],
        repairs=[
            *prepared.repairs,
            "added a user message: nothing else is left to send, and every API requires one",
        ],
    )


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
