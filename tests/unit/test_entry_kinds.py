"""One vocabulary of entry types: the reader, the entry models, the projection and every view agree on
it, and a type we do not know is kept and shown raw everywhere, never an error."""

from __future__ import annotations

import json
from typing import get_args

import pytest

from agent_tui.library.export import export_markdown
from agent_tui.library.search_text import entry_text
from agent_tui.projection.context import Status, entry_messages
from agent_tui.projection.describe import first_line
from agent_tui.store import entries
from agent_tui.store.index import SessionIndex
from agent_tui.store.kinds import KNOWN_TYPES, EntryType, entry_type, kind_info
from agent_tui.store.reader import parse_session
from agent_tui.tui.widgets.chat_view import shown_in_chat

HEADER = {"type": "session", "version": 3, "id": "s1", "timestamp": "2025-01-01T00:00:00.000Z", "cwd": "/w"}


def index_of(*lines: dict[str, object]) -> SessionIndex:
    return SessionIndex(parse_session(("\n".join(json.dumps(x) for x in (HEADER, *lines)) + "\n").encode()))


def test_every_known_type_has_an_entry_model_and_a_row_in_the_table() -> None:
    assert set(get_args(EntryType)) == KNOWN_TYPES
    # none of them falls through to the unknown-entry model when we validate an append
    assert set(entries.SCHEMAS) == KNOWN_TYPES
    for kind in get_args(EntryType):
        info = kind_info(kind)
        assert info.title and info.look in ("block", "event") and info.chat_class and info.tree_name


@pytest.mark.parametrize(
    ("line", "expected"),
    [
        ({"type": "label", "targetId": "m1", "label": "start"}, "m1 = 'start'"),
        ({"type": "label", "targetId": "m1"}, "clear label of m1"),
        ({"type": "model_change", "provider": "anthropic", "modelId": "claude-x"}, "anthropic/claude-x"),
        ({"type": "thinking_level_change", "thinkingLevel": "high"}, "high"),
        ({"type": "session_info", "name": "refactor"}, "name: refactor"),
        ({"type": "pin", "targetId": "m1", "pinned": False}, "unpin m1"),
        ({"type": "context_edit", "targetId": "m1", "replacement": None}, "hide m1"),
        (
            {
                "type": "custom",
                "customType": "agent-tui.permission",
                "data": {"decision": "deny", "tool": "bash", "summary": "rm -rf /"},
            },
            "denied: bash rm -rf /",
        ),
        (
            {
                "type": "compaction",
                "summary": "We fixed\\nthe parser.",
                "firstKeptEntryId": "m1",
                "tokensBefore": 9,
            },
            "We fixed\\nthe parser.",
        ),
    ],
)
def test_the_tree_line_of_each_kind_comes_from_the_table(line: dict[str, object], expected: str) -> None:
    index = index_of({"id": "e1", "parentId": None, "timestamp": HEADER["timestamp"], **line})
    assert first_line(index.by_id["e1"], 200) == expected


def test_a_type_we_do_not_know_is_kept_and_shown_raw() -> None:
    index = index_of(
        {
            "type": "message",
            "id": "m1",
            "parentId": None,
            "timestamp": HEADER["timestamp"],
            "message": {"role": "user", "content": "hi", "timestamp": 1},
        },
        {
            "type": "bookmark_v9",
            "id": "x1",
            "parentId": "m1",
            "timestamp": HEADER["timestamp"],
            "note": "later",
        },
    )
    unknown = index.by_id["x1"]
    assert entry_type(unknown.type) is None
    assert first_line(unknown) == "" and entry_text(unknown) == ""
    assert entry_messages(unknown, Status.KEPT) == []  # the model never sees it (pi skips it too)
    assert shown_in_chat(unknown)
    markdown = export_markdown(index)
    assert "bookmark_v9" in markdown and '"note": "later"' in markdown


def test_usage_entries_stay_out_of_the_chat_only() -> None:
    index = index_of(
        {"type": "usage", "id": "u1", "parentId": None, "timestamp": HEADER["timestamp"], "input": 3}
    )
    assert not shown_in_chat(index.by_id["u1"])
    assert not kind_info("usage").in_chat
