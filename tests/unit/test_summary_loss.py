"""What a summary lost, kind by kind: found by code in the summarized span, checked against the
summary's text."""

from __future__ import annotations

from typing import Any

from agent_tui.projection.summary_loss import losses_in, losses_text


def user(text: str) -> dict[str, Any]:
    return {"role": "user", "content": [{"type": "text", "text": text}]}


def reply(text: str = "", calls: list[dict[str, Any]] | None = None) -> dict[str, Any]:
    content: list[dict[str, Any]] = [{"type": "text", "text": text}] if text else []
    content += [
        {"type": "toolCall", "id": f"c{i}", "name": c["name"], "arguments": c}
        for i, c in enumerate(calls or [])
    ]
    return {"role": "assistant", "content": content}


def lost(messages: list[dict[str, Any]], summary: str) -> set[tuple[str, str]]:
    return {(x.kind, x.text) for x in losses_in([(f"e{i}", m) for i, m in enumerate(messages)], summary)}


def test_a_path_is_lost_unless_the_summary_names_it_or_its_file_name() -> None:
    span = [
        user("look at src/parser/lexer.py please"),
        reply("", [{"name": "read", "path": "docs/NOTES.md"}]),
        reply("done"),
    ]
    assert ("path", "src/parser/lexer.py") in lost(span, "We looked at the docs.")
    assert ("path", "docs/NOTES.md") in lost(span, "We looked at the lexer.")
    assert not {k for k, _ in lost(span, "Read NOTES.md and src/parser/lexer.py; done.")} & {"path"}


def test_identifiers_in_backticks_and_code_words_of_the_user() -> None:
    span = [user("rename parse_header to readHeader"), reply("I renamed `parse_header` in `Lexer.scan()`")]
    found = lost(span, "Renamed a function.")
    assert {
        ("identifier", "parse_header"),
        ("identifier", "readHeader"),
        ("identifier", "Lexer.scan()"),
    } <= found
    assert not [
        x for x in lost(span, "parse_header became readHeader; Lexer.scan updated.") if x[0] == "identifier"
    ]


def test_numbers_versions_and_file_lines_the_user_wrote() -> None:
    span = [
        user("the server must listen on 8080, pin httpx to 0.27.2, the bug is at app.py:412"),
        reply("ok"),
    ]
    found = {t for k, t in lost(span, "Configured the server.") if k == "number"}
    assert {"8080", "0.27.2"} <= found and any("412" in t for t in found)
    assert not {t for k, t in lost(span, "Port 8080, httpx 0.27.2, app.py:412.") if k == "number"}


def test_user_instructions_are_kept_when_most_of_their_words_are() -> None:
    span = [user("Never commit directly to main. Write tests first."), reply("understood")]
    assert ("instruction", "Never commit directly to main.") in lost(span, "The user wants tests.")
    assert not [
        x for x in lost(span, "Rule: never commit directly to main; tests first.") if x[0] == "instruction"
    ]


def test_a_request_no_reply_answered_is_open() -> None:
    span = [
        user("first: explain the cache"),
        reply("It is an LRU."),
        user("second: and make it thread safe"),
        reply("", [{"name": "read", "path": "cache.py"}]),
    ]
    found = lost(span, "Explained the cache.")
    assert ("request", "second: and make it thread safe") in found
    assert ("request", "first: explain the cache") not in found  # answered by the reply after it
    assert not [
        x for x in lost(span, "Open: make the cache thread safe (second request).") if x[0] == "request"
    ]


def test_tool_output_paths_are_not_things_the_user_named_and_lines_name_the_entry() -> None:
    listing = {
        "role": "toolResult",
        "toolCallId": "c0",
        "content": [{"type": "text", "text": "a/b.py\nc/d.py"}],
    }
    assert not lost([user("hi"), reply("hello"), listing], "hi")
    lines = losses_text(losses_in([("e7", user("use port 9000"))], "nothing"))
    assert "number: 9000 (e7)" in lines
