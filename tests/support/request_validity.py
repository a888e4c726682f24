"""Checks that a request body would be accepted by the provider's API rules we rely on."""

from __future__ import annotations

import re
from typing import Any

_ANTHROPIC_ID = re.compile(r"^[A-Za-z0-9_-]{1,64}$")


def anthropic_problems(body: dict[str, Any]) -> list[str]:
    problems: list[str] = []
    messages = body.get("messages", [])
    if not messages:
        problems.append("no messages")
        return problems
    if messages[0]["role"] != "user":
        problems.append("first message is not user")
    for i, m in enumerate(messages):
        if m["role"] not in ("user", "assistant"):
            problems.append(f"{i}: role {m['role']}")
        if i and messages[i - 1]["role"] == m["role"]:
            problems.append(f"{i}: two {m['role']} messages in a row")
        if not m["content"]:
            problems.append(f"{i}: empty content")
        for b in m["content"]:
            if b["type"] == "text" and not b["text"].strip():
                problems.append(f"{i}: empty text block")
            if b["type"] == "tool_use" and not _ANTHROPIC_ID.match(b["id"]):
                problems.append(f"{i}: bad tool_use id {b['id']}")
            if b["type"] == "tool_use" and not isinstance(b["input"], dict):
                problems.append(f"{i}: tool_use input not an object")
        calls = [b["id"] for b in m["content"] if b["type"] == "tool_use"]
        if m["role"] == "assistant" and calls:
            nxt = messages[i + 1]["content"] if i + 1 < len(messages) else None
            if nxt is None:
                problems.append(f"{i}: tool_use without a following user message")
                continue
            results = [b["tool_use_id"] for b in nxt if b["type"] == "tool_result"]
            if sorted(results) != sorted(calls):
                problems.append(f"{i}: calls {calls} answered by {results}")
            kinds = [b["type"] for b in nxt]
            if kinds[: len(results)] != ["tool_result"] * len(results):
                problems.append(f"{i + 1}: tool_result blocks are not first")
        if m["role"] == "user":
            results = [b["tool_use_id"] for b in m["content"] if b["type"] == "tool_result"]
            if results:
                prev = messages[i - 1] if i else None
                prev_calls = [b["id"] for b in prev["content"] if b["type"] == "tool_use"] if prev else []
                if prev is None or prev["role"] != "assistant" or sorted(prev_calls) != sorted(results):
                    problems.append(
                        f"{i}: tool_results {results} do not match the previous calls {prev_calls}"
                    )
    uses = [b["id"] for m in messages for b in m["content"] if b["type"] == "tool_use"]
    if len(uses) != len(set(uses)):
        problems.append(f"tool_use ids are not unique: {uses}")
    return problems


def openai_problems(body: dict[str, Any]) -> list[str]:
    problems: list[str] = []
    messages = body.get("messages", [])
    owed: list[str] = []
    for i, m in enumerate(messages):
        role = m["role"]
        if role == "tool":
            if m["tool_call_id"] not in owed:
                problems.append(f"{i}: tool message for {m['tool_call_id']} without a call")
            else:
                owed.remove(m["tool_call_id"])
            if not isinstance(m["content"], str) or not m["content"]:
                problems.append(f"{i}: empty tool content")
            continue
        if owed:
            problems.append(f"{i}: calls {owed} left without results")
            owed = []
        if role == "system" and i != 0:
            problems.append(f"{i}: system message not first")
        if role == "assistant":
            owed = [c["id"] for c in m.get("tool_calls", [])]
            if not m.get("content") and not owed:
                problems.append(f"{i}: empty assistant message")
        if role == "user" and not m["content"]:
            problems.append(f"{i}: empty user message")
    if owed:
        problems.append(f"end: calls {owed} left without results")
    calls = [c["id"] for m in messages if m["role"] == "assistant" for c in m.get("tool_calls", [])]
    if len(calls) != len(set(calls)):
        problems.append(f"tool call ids are not unique: {calls}")
    return problems
