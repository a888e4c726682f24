"""Every API gets a body it accepts, whatever is left of the branch: a branch whose projection is one
empty user message (an imported Claude Code transcript whose last lines were malformed) gave the
Anthropic body a placeholder, but OpenAI Chat ``"messages": []`` and a Responses body with no input,
which both APIs reject."""

from __future__ import annotations

import pytest

from agent_tui.projection.context import project
from agent_tui.projection.request import CONTINUE_TEXT, prepare, sendable
from agent_tui.projection.wire import (
    anthropic_messages,
    google_generative_ai,
    openai_completions,
    openai_responses,
)
from agent_tui.store.index import SessionIndex
from agent_tui.store.reader import parse_session
from tests.support.request_validity import anthropic_problems, openai_problems

HEADER = b'{"type":"session","version":3,"id":"s1","timestamp":"2026-01-01T00:00:00.000Z","cwd":"/w"}\n'
EMPTY_USER = (
    b'{"type":"message","id":"u1","parentId":null,"timestamp":"2026-01-01T00:00:01.000Z",'
    b'"message":{"role":"user","content":[{"type":"text","text":"   "}],"timestamp":1}}\n'
)
ABORTED = (
    b'{"type":"message","id":"a1","parentId":"u1","timestamp":"2026-01-01T00:00:02.000Z",'
    b'"message":{"role":"assistant","content":[],"stopReason":"aborted","api":"anthropic-messages",'
    b'"provider":"anthropic","model":"claude-sonnet-4-5","usage":{},"timestamp":2}}\n'
)


@pytest.mark.parametrize(
    "lines", [b"", EMPTY_USER, EMPTY_USER + ABORTED], ids=["no-entry", "empty-user", "aborted"]
)
def test_an_empty_conversation_is_one_placeholder_user_message_for_every_api(lines: bytes) -> None:
    index = SessionIndex(parse_session(HEADER + lines), "s.jsonl")
    prepared = prepare(project(index).messages)
    assert prepared.messages == []  # the panel shows what is there: nothing
    sent = sendable(prepared)  # what each wire module starts from
    assert [(m.role, m.content) for m in sent.messages] == [
        ("user", [{"type": "text", "text": CONTINUE_TEXT}])
    ]
    assert any("every API requires one" in r for r in sent.repairs)

    anthropic = anthropic_messages.request_body(prepared, "claude-sonnet-4-5")
    assert anthropic_problems(anthropic) == []
    assert [(m["role"], [b["text"] for b in m["content"]]) for m in anthropic["messages"]] == [
        ("user", [CONTINUE_TEXT])
    ]

    chat = openai_completions.request_body(prepared, "gpt-4.1")
    assert openai_problems(chat) == []
    assert [m["role"] for m in chat["messages"] if m["role"] != "system"] == ["user"]
    assert CONTINUE_TEXT in str(chat["messages"][-1]["content"])

    responses = openai_responses.request_body(prepared, "gpt-5")
    assert responses["input"], responses
    assert CONTINUE_TEXT in str(responses["input"][-1])

    gemini = google_generative_ai.request_body(prepared, "gemini-2.5-pro")
    assert gemini["contents"] == [{"role": "user", "parts": [{"text": CONTINUE_TEXT}]}]
