"""pi's rules for a session written by one provider and continued on another: thinking and its
signatures go back only to the model and API that made them, text goes as plain text, tool calls
keep working (ids each API accepts, results after their calls)."""

from __future__ import annotations

import json
from typing import Any

from agent_tui.projection.request import Prepared, PreparedMessage
from agent_tui.projection.wire import (
    anthropic_messages,
    google_generative_ai,
    openai_completions,
    openai_responses,
)

REASONING = json.dumps({"id": "rs_1", "type": "reasoning", "summary": [], "encrypted_content": "ENC"})
WRITERS: dict[str, dict[str, Any]] = {
    "anthropic": {
        "api": "anthropic-messages",
        "model": "claude-sonnet-5-5",
        "content": [
            {"type": "thinking", "thinking": "plan A", "thinkingSignature": "sig-anthropic"},
            {"type": "text", "text": "Reading."},
            {"type": "toolCall", "id": "toolu_01", "name": "read", "arguments": {"path": "a"}},
        ],
    },
    "responses": {
        "api": "openai-responses",
        "model": "gpt-5.4",
        "content": [
            {"type": "thinking", "thinking": "plan B", "thinkingSignature": REASONING},
            {"type": "text", "text": "Reading.", "textSignature": '{"v":1,"id":"msg_9"}'},
            {"type": "toolCall", "id": "call_1|fc_1", "name": "read", "arguments": {"path": "a"}},
        ],
    },
    "gemini": {
        "api": "google-generative-ai",
        "model": "gemini-2.5-flash",
        "content": [
            {"type": "thinking", "thinking": "plan C", "thinkingSignature": "c2lnLWdlbWluaQ=="},
            {"type": "text", "text": "Reading."},
            {
                "type": "toolCall",
                "id": "read_1_1",
                "name": "read",
                "arguments": {"path": "a"},
                "thoughtSignature": "c2ln",
            },
        ],
    },
}


def conversation(writer: str) -> Prepared:
    message = {"role": "assistant", **WRITERS[writer]}
    call_id = message["content"][2]["id"]
    result = {"role": "toolResult", "toolCallId": call_id, "toolName": "read"}
    return Prepared(
        "sys",
        [],
        [
            PreparedMessage("user", [{"type": "text", "text": "hi"}], "u1", {"role": "user"}),
            PreparedMessage("assistant", message["content"], "a1", message),
            PreparedMessage("toolResult", [{"type": "text", "text": "apples"}], "t1", result),
        ],
    )


def sent_text(body: Any) -> str:
    return json.dumps(body)


def test_anthropic_sends_back_only_its_own_signed_thinking() -> None:
    own = anthropic_messages.request_body(conversation("anthropic"), "claude-sonnet-5-5")
    assert {"type": "thinking", "thinking": "plan A", "signature": "sig-anthropic"} in own["messages"][1][
        "content"
    ]
    for writer in ("responses", "gemini"):
        body = sent_text(anthropic_messages.request_body(conversation(writer), "claude-sonnet-5-5"))
        assert "plan" not in body and "ENC" not in body and "c2ln" not in body
        assert '"Reading."' in body and "apples" in body


def test_the_same_model_name_through_another_api_is_another_model() -> None:
    """A Claude model reached through a Chat Completions gateway wrote this: its thinking carries
    no signature the Messages API would accept, so it is dropped (pi compares api and model)."""
    prepared = conversation("anthropic")
    prepared.messages[1].message = {**prepared.messages[1].message, "api": "openai-completions"}
    body = anthropic_messages.request_body(prepared, "claude-sonnet-5-5")
    assert all(b["type"] != "thinking" for b in body["messages"][1]["content"])


def test_responses_and_gemini_drop_other_models_thinking() -> None:
    for writer in ("anthropic", "gemini"):
        body = openai_responses.request_body(conversation(writer), "gpt-5.4")
        assert not [i for i in body["input"] if i.get("type") == "reasoning"]
        assert "plan" not in sent_text(body)
        call = next(i for i in body["input"] if i.get("type") == "function_call")
        result = next(i for i in body["input"] if i.get("type") == "function_call_output")
        assert "id" not in call and call["call_id"] == result["call_id"]
    for writer in ("anthropic", "responses"):
        body = google_generative_ai.request_body(conversation(writer), "gemini-2.5-flash")
        parts = body["contents"][1]["parts"]
        assert parts == [{"text": "Reading."}, {"function_call": {"name": "read", "args": {"path": "a"}}}]
    own = google_generative_ai.request_body(conversation("gemini"), "gemini-2.5-flash")
    assert own["contents"][1]["parts"][0] == {
        "thought": True,
        "text": "plan C",
        "thought_signature": "c2lnLWdlbWluaQ==",
    }
    assert own["contents"][1]["parts"][2]["thought_signature"] == "c2ln"


def test_chat_completions_sends_text_and_calls_of_any_writer() -> None:
    for writer in WRITERS:
        body = openai_completions.request_body(conversation(writer), "gpt-4.1")
        assistant = body["messages"][2]
        assert assistant["content"] == "Reading." and assistant["tool_calls"][0]["function"]["name"] == "read"
        assert body["messages"][3]["tool_call_id"] == assistant["tool_calls"][0]["id"]
        assert "plan" not in sent_text(body)
