"""A system message (pi keeps its text in ``sections``) reads as the system prompt in the tree and
in ``agent-tui tree``, not as an empty "message"."""

from __future__ import annotations

from typing import Any

from agent_tui.projection.describe import first_line
from agent_tui.store.record import Entry
from agent_tui.tui.tree_state import describe

SYSTEM: dict[str, Any] = {
    "type": "message",
    "id": "s1",
    "parentId": None,
    "timestamp": "2026-01-01T00:00:00.000Z",
    "message": {
        "role": "system",
        "content": "",
        "sections": {"preamble": "\nYou are an expert coding assistant.\nMore.", "cwd": "<cwd>/p</cwd>"},
    },
}


def _entry(data: dict[str, Any]) -> Entry:
    return Entry.from_data(data)


def test_a_system_message_reads_as_the_system_prompt() -> None:
    entry = _entry(SYSTEM)
    assert first_line(entry) == "You are an expert coding assistant."
    assert describe(entry) == "system prompt: You are an expert coding assistant."


def test_a_system_message_without_text_is_still_named() -> None:
    entry = _entry({**SYSTEM, "message": {"role": "system", "content": "", "sections": {"tools": None}}})
    assert describe(entry) == "system prompt"
