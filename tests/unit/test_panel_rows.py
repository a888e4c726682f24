"""The panel's rows follow the request as sent, and its figure is the one compaction decides on."""

from __future__ import annotations

from typing import Any

from agent_tui.projection.context import project
from agent_tui.projection.models import lookup
from agent_tui.projection.request import prepare
from agent_tui.projection.rows import PanelModel, PanelRow, build_panel_model
from agent_tui.projection.tokens import context_tokens, estimate_text
from agent_tui.projection.wire.anthropic_messages import anthropic_request
from tests.support.indexes import index_of
from tests.support.session_builder import Builder, assistant, tool_result, user

SYSTEM = {
    "role": "system",
    "content": "",
    "sections": {"template": "You are a careful coding agent. " * 20, "cwd": "Current directory: /tmp/p"},
    "timestamp": 0,
}


def model_of(b: Builder, model: str = "claude-sonnet-4-5") -> PanelModel:
    return build_panel_model(project(index_of(b)), lookup(model), model)


def row(model: PanelModel, source: str | None, role: str | None = None) -> PanelRow:
    return next(r for r in model.rows if r.source_id == source and (role is None or r.role == role))


def compacted() -> tuple[Builder, dict[str, str]]:
    b = Builder()
    b.message(SYSTEM)
    ids: dict[str, str] = {}
    b.message(user("first question " * 10))
    b.message(assistant("first answer " * 10))
    ids["pinned"] = b.message(user("pin me please"))
    b.message(assistant("second answer"))
    b.add("pin", targetId=ids["pinned"], pinned=True)
    ids["kept"] = b.message(user("third"))
    b.message(assistant("third answer"))
    ids["compaction"] = b.add(
        "compaction", summary="SUMMARY", firstKeptEntryId=ids["kept"], tokensBefore=500, systemMessage=SYSTEM
    )
    ids["after"] = b.message(user("after"))
    ids["aborted"] = b.message({**assistant("half a repl"), "stopReason": "aborted"})
    return b, ids


def test_the_figure_is_the_one_compaction_decides_on_and_says_how_it_is_made() -> None:
    b = Builder()
    b.message(SYSTEM)
    b.message(user("q " * 50))
    reply = b.message({**assistant("a " * 50), "usage": {"input": 3000, "output": 200, "totalTokens": 3200}})
    b.message(user("and now " * 20))
    model = model_of(b)
    figure = context_tokens(project(index_of(b)))
    assert model.total == figure.tokens == 3200 + figure.trailing_tokens
    assert model.context == f"3,200 reported by reply {reply} + {figure.trailing_tokens:,} estimated after it"
    # the rows are estimates of what is sent; with nothing reported, their sum is the figure
    b2 = Builder()
    b2.message(SYSTEM)
    b2.message(user("q " * 50))
    b2.message({**assistant("a " * 50, [("c1", "read", {"path": "x.py"})]), "usage": {}})
    b2.message(tool_result("c1", "line\n" * 40))
    estimated = model_of(b2)
    assert estimated.context.startswith("estimated")
    assert sum(r.tokens for r in estimated.rows) == estimated.total == estimated.estimated


def test_the_system_prompt_row_is_the_prompt_sent_not_the_compaction() -> None:
    b, ids = compacted()
    model = model_of(b)
    prepared = prepare(project(index_of(b)).messages)
    first = model.rows[0]
    assert (first.role, first.source_id, first.status) == ("system", None, "sent")
    assert first.tokens == estimate_text(prepared.system) > 0
    assert first.full_text() == prepared.system
    snapshot = row(model, ids["compaction"], "system")
    assert snapshot.tokens == 0 and snapshot.number is None and "system prompt" in snapshot.status


def test_an_aborted_reply_is_left_out_with_no_tokens() -> None:
    b, ids = compacted()
    aborted = row(model_of(b), ids["aborted"])
    assert aborted.status == "left out" and aborted.tokens == 0 and aborted.number is None
    assert "aborted" in aborted.text


def test_messages_the_request_merges_are_shown_merged() -> None:
    b, ids = compacted()
    model = model_of(b)
    assert row(model, ids["compaction"], "user").status.startswith("summary")
    pinned = row(model, ids["pinned"])
    assert "+↑" in pinned.status and "one message with the row above" in pinned.text
    body = anthropic_request(prepare(project(index_of(b)).messages), "claude-sonnet-4-5")
    first_user = body["messages"][0]
    texts = [blk.get("text", "") for blk in first_user["content"]]
    assert any("pin me please" in t for t in texts), "the request does merge them"
    # Chat Completions sends them apart: no merge mark
    assert "+↑" not in row(model_of(b, "gpt-4o"), ids["pinned"]).status


def test_numbered_rows_are_the_request_messages_one_for_one() -> None:
    b = Builder()
    b.message(user("q"))
    b.message(assistant("", [("c1", "read", {"path": "a.py"}), ("c2", "read", {"path": "b.py"})]))
    b.message(tool_result("c1", "A"))
    b.message(user("next"))
    model = model_of(b)
    prepared = model.prepared
    assert prepared is not None
    numbered = model.message_rows
    assert [r.role for r in numbered] == [m.role for m in prepared.messages]
    added = [r for r in numbered if r.status == "added"]
    assert len(added) == 1 and "c2" in added[0].text


def test_opening_a_row_gives_the_full_text_sent() -> None:
    b = Builder()
    b.message(user("line one\nline two\nline three"))
    call = b.message(assistant("let me look", [("c1", "grep", {"pattern": "def main", "path": "src"})]))
    model = model_of(b)
    text = row(model, call).full_text()
    assert "let me look" in text and '"pattern":"def main"' in text and "[tool call grep]" in text
    tools: Any = next((r for r in model.rows if r.role == "tools"), None)
    assert tools is None  # no tools declared by a system message: no row


def test_tool_definitions_count_once_in_every_figure() -> None:
    """A real server counted the prompt with its tools rendered once; the rows and the figure must
    too: the system row is the prompt's text, the tools row the definitions, the system message's
    own row nothing (estimated right after a compaction, the case that compacted twice)."""
    from agent_tui.projection.request import prepare
    from agent_tui.projection.tokens import estimate_tools

    tools = [
        {"name": f"tool{i}", "description": "does a thing " * 20, "parameters": {"type": "object"}}
        for i in range(6)
    ]
    system = {**SYSTEM, "toolsAdded": tools}
    b = Builder()
    b.message(system)
    first = b.message(user("question " * 30))
    b.message(assistant("answer " * 30))
    kept = b.message(user("next"))
    b.add("compaction", summary="SUMMARY", firstKeptEntryId=kept, tokensBefore=900, systemMessage=system)
    del first
    model = model_of(b)
    by_role = {r.role: r.tokens for r in model.rows if r.source_id is None}
    prepared = prepare(project(index_of(b)).messages)
    assert by_role["tools"] == estimate_tools(prepared.tools) > 0
    assert by_role["system"] == estimate_text(prepared.system)
    assert all(r.tokens == 0 for r in model.rows if r.role == "system" and r.source_id is not None)
    assert model.total == sum(r.tokens for r in model.rows)  # estimated: the rows add up to the figure
