"""The projection rules, one by one, with provenance."""

from __future__ import annotations

from typing import Any

from agent_tui.projection.context import Status, project
from agent_tui.projection.request import prepare
from agent_tui.projection.wire.anthropic_messages import anthropic_request
from agent_tui.projection.wire.openai_completions import openai_request
from agent_tui.store.index import SessionIndex
from agent_tui.store.reader import parse_session
from tests.support.request_validity import anthropic_problems, openai_problems
from tests.support.session_builder import Builder, assistant, tool_result, user


def index_of(b: Builder) -> SessionIndex:
    return SessionIndex(parse_session(b.text().encode()))


def texts(index: SessionIndex, leaf: str | None = None) -> list[tuple[str, str]]:
    out = []
    for m in project(index, leaf).messages:
        content = m.message["content"]
        text = (
            content
            if isinstance(content, str)
            else " ".join(b.get("text", "") for b in content if b.get("type") == "text")
        )
        out.append((m.role, text))
    return out


def test_path_only_follows_the_active_branch() -> None:
    b = Builder()
    root = b.message(user("root"))
    b.message(assistant("first answer"))
    b.message(user("abandoned"))
    b.message(assistant("second answer"), parent=root)
    index = index_of(b)
    assert texts(index) == [("user", "root"), ("assistant", "second answer")]
    assert texts(index, "e0003") == [("user", "root"), ("assistant", "first answer"), ("user", "abandoned")]


def test_compaction_keeps_range_skips_system_and_supersedes_older() -> None:
    b = Builder()
    b.message(user("old 1"))
    b.message(assistant("old 2"))
    first_kept = b.message(user("kept 3"))
    b.message({"role": "system", "content": "old system prompt", "timestamp": 1})
    b.message(assistant("kept 4"))
    c = b.add(
        "compaction",
        summary="SUMMARY",
        firstKeptEntryId=first_kept,
        tokensBefore=1000,
        systemMessage={"role": "system", "content": "snapshot prompt", "timestamp": 5},
    )
    b.message(user("after 5"))
    index = index_of(b)
    p = project(index)
    assert [(m.role, m.status, m.source_id) for m in p.messages] == [
        ("system", Status.SUMMARY, c),
        ("user", Status.SUMMARY, c),
        ("user", Status.KEPT, "e0003"),
        ("assistant", Status.KEPT, "e0005"),
        ("user", Status.AFTER_COMPACTION, "e0007"),
    ]
    assert "SUMMARY" in p.messages[1].message["content"][0]["text"]
    assert p.summarized_ids == ["e0001", "e0002"] and p.compaction_id == c
    # a second compaction that keeps the first one's id in its range: the old one contributes nothing
    c2 = b.add("compaction", summary="SECOND", firstKeptEntryId=c, tokensBefore=10)
    p2 = project(index_of(b))
    assert [m.source_id for m in p2.messages] == [c2, "e0007"]
    assert [ce.status for ce in p2.entries][:2] == [Status.SUMMARY, Status.SUPERSEDED]


def test_compaction_that_keeps_nothing() -> None:
    b = Builder()
    b.message(user("a"))
    b.lines.append(
        {
            "type": "compaction",
            "id": "cx",
            "parentId": "e0001",
            "timestamp": "2026-01-01T00:00:00.000Z",
            "summary": "S",
            "firstKeptEntryId": "cx",
            "tokensBefore": 1,
        }
    )
    b.leaf = "cx"
    b.message(user("b"))
    assert [r for r, _ in texts(index_of(b))] == ["user", "user"]
    assert texts(index_of(b))[1] == ("user", "b")


def test_edits_hide_replace_restore_and_are_branch_relative() -> None:
    b = Builder()
    u = b.message(user("original question"))
    a = b.message(assistant("original answer"))
    fork = b.leaf
    b.add("context_edit", targetId=u, replacement={"content": "edited question"})
    b.add("context_edit", targetId=a, replacement=None)
    leaf1 = b.leaf
    index = index_of(b)
    p = project(index, leaf1)
    assert texts(index, leaf1) == [("user", "edited question")]
    assert [(ce.entry.id, ce.status) for ce in p.entries if ce.entry.type == "message"] == [
        (u, Status.REPLACED),
        (a, Status.HIDDEN),
    ]
    # on a sibling branch the edits do not apply
    b.message(user("other branch"), parent=fork)
    assert texts(index_of(b))[:2] == [("user", "original question"), ("assistant", "original answer")]
    # a later edit wins; restore brings back the original and says so
    b.leaf = leaf1
    b.add("context_edit", targetId=u, replacement={"content": "original question"}, restore=True)
    index = index_of(b)
    p = project(index)
    assert texts(index)[0] == ("user", "original question")
    assert p.entries[0].status is Status.RESTORED


def test_replacement_of_assistant_text_is_wrapped_in_blocks() -> None:
    b = Builder()
    b.message(user("q"))
    a = b.message(assistant("long answer"))
    b.add("context_edit", targetId=a, replacement={"content": "short"})
    msg = project(index_of(b)).messages[1].message
    assert msg["content"] == [{"type": "text", "text": "short"}] and msg["provider"] == "anthropic"


def test_settings_come_from_the_whole_path() -> None:
    b = Builder()
    b.add("thinking_level_change", thinkingLevel="high")
    b.message(user("q"))
    b.message(assistant("a", model="claude-opus-4-5"))
    b.add("model_change", provider="openai", modelId="gpt-4.1")
    p = project(index_of(b))
    assert p.model == {"provider": "openai", "modelId": "gpt-4.1"} and p.thinking_level == "high"


def test_custom_branch_summary_and_bash_become_user_messages() -> None:
    b = Builder()
    b.add("custom_message", customType="note", content="remember this", display=True)
    b.add("branch_summary", fromId="x", summary="we tried Y")
    b.message(
        {
            "role": "bashExecution",
            "command": "ls",
            "output": "a b",
            "exitCode": 2,
            "cancelled": False,
            "timestamp": 1,
        }
    )
    b.message(
        {
            "role": "bashExecution",
            "command": "secret",
            "output": "x",
            "exitCode": 0,
            "excludeFromContext": True,
            "timestamp": 1,
        }
    )
    b.add("custom", customType="state", data={"x": 1})
    got = texts(index_of(b))
    assert got[0] == ("user", "remember this")
    assert got[1][0] == "user" and "we tried Y" in got[1][1] and "summary of a branch" in got[1][1]
    assert got[2] == ("user", "Ran `ls`\n```\na b\n```\n\nCommand exited with code 2")
    assert len(got) == 3


def test_null_content_is_normalised() -> None:
    b = Builder()
    b.message({"role": "user", "content": None, "timestamp": 1})
    b.message({"role": "system", "timestamp": 1})
    msgs = project(index_of(b)).messages
    assert msgs[0].message["content"] == [] and msgs[1].message["content"] == ""


def test_request_repairs_orphans_and_empties() -> None:
    b = Builder()
    b.message(
        {
            "role": "system",
            "content": "be brief",
            "toolsAdded": [{"name": "read", "description": "r", "parameters": {"type": "object"}}],
            "timestamp": 0,
        }
    )
    u = b.message(user("hi"))
    a = b.message(assistant("", [("call|weird.id", "read", {"path": "x"}), ("c2", "read", {"path": "y"})]))
    b.message(tool_result("call|weird.id", "X"))
    # c2 never answered; then a user message
    b.message(user("   "))
    b.message(user("next"))
    b.message(assistant("aborted half", stop="aborted"))
    b.message(tool_result("zzz", "orphan result"))
    p = project(index_of(b))
    prepared = prepare(p.messages)
    assert prepared.system == "be brief" and [t["name"] for t in prepared.tools] == ["read"]
    assert any("unanswered tool call c2" in r for r in prepared.repairs)
    assert any("empty user message" in r for r in prepared.repairs)
    assert any("aborted" in r for r in prepared.repairs)
    assert any("zzz" in r for r in prepared.repairs)
    body = anthropic_request(prepared, "claude-sonnet-4-5")
    assert anthropic_problems(body) == []
    assert body["system"][0]["text"] == "be brief" and body["tools"][0]["name"] == "read"
    assert openai_problems(openai_request(prepared, "gpt-4.1")) == []
    _ = (u, a)


def test_hiding_a_tool_call_drops_its_result_and_hiding_the_first_user_adds_a_start() -> None:
    b = Builder()
    u = b.message(user("hi"))
    a = b.message(assistant("", [("c1", "read", {"path": "x"})]))
    b.message(tool_result("c1", "X"))
    b.message(assistant("done"))
    b.add("context_edit", targetId=a, replacement=None)
    b.add("context_edit", targetId=u, replacement=None)
    prepared = prepare(project(index_of(b)).messages)
    body = anthropic_request(prepared, "claude-sonnet-4-5")
    assert anthropic_problems(body) == [] and body["messages"][0]["role"] == "user"
    assert [m["role"] for m in body["messages"]] == ["user", "assistant"]
    assert openai_problems(openai_request(prepared, "gpt-4.1")) == []


def test_anthropic_request_shape() -> None:
    b = Builder()
    b.message(user("q"))
    b.message(
        {
            **assistant("a", [("c1", "read", {"path": "x"})]),
            "content": [
                {"type": "thinking", "thinking": "hmm", "thinkingSignature": "sig"},
                {"type": "text", "text": "a"},
                {"type": "toolCall", "id": "c1", "name": "read", "arguments": {"path": "x"}},
            ],
        }
    )
    b.message({**tool_result("c1", "X"), "isError": True})
    body: dict[str, Any] = anthropic_request(prepare(project(index_of(b)).messages), "claude-sonnet-4-5")
    assert body["messages"][1]["content"][0] == {"type": "thinking", "thinking": "hmm", "signature": "sig"}
    result = body["messages"][2]["content"][0]
    assert result["type"] == "tool_result" and result["is_error"] is True and result["tool_use_id"] == "c1"
    assert result["cache_control"] == {"type": "ephemeral"}  # the breakpoint at the end of the stable prefix
    other = anthropic_request(prepare(project(index_of(b)).messages), "claude-opus-4-5")
    assert all(
        blk["type"] != "thinking" for blk in other["messages"][1]["content"]
    )  # signed by another model


def test_token_estimates_are_per_message() -> None:
    from agent_tui.projection.tokens import estimate_message

    assert estimate_message(user("x" * 35)) == 10
    assert (
        estimate_message(
            {"role": "assistant", "content": [{"type": "toolCall", "name": "read", "arguments": {"a": 1}}]}
        )
        == 4
    )
    assert estimate_message({"role": "user", "content": [{"type": "image", "data": "..."}]}) == 1372


# -- what other programs' files hold -------------------------------------------------------


def test_duplicate_tool_call_ids_are_renamed() -> None:
    """Local servers number calls from 0 in every reply, or give two calls one id: the request
    bodies must not hold one ``tool_use`` id twice, or a result the API cannot place."""
    b = Builder()
    b.message(user("list both folders"))
    b.message(assistant(calls=[("0", "ls", {"path": "a"}), ("0", "ls", {"path": "b"})]))
    b.message(tool_result("0", "a.txt", name="ls"))
    b.message(tool_result("0", "b.txt", name="ls"))
    b.message(assistant(calls=[("0", "read", {"path": "a/a.txt"})]))  # the next reply starts at 0 again
    b.message(tool_result("0", "hello"))
    b.message(assistant("done"))
    prepared = prepare(project(index_of(b)).messages)
    assert [r for r in prepared.repairs if r.startswith("renamed")] == [
        "renamed tool call 0 of e0002 to 0_2: the id was already used",
        "renamed tool call 0 of e0005 to 0_3: the id was already used",
    ]
    anthropic = anthropic_request(prepared, "claude-sonnet-4-5")
    openai = openai_request(prepared, "gpt-4.1")
    assert anthropic_problems(anthropic) == [] and openai_problems(openai) == []
    uses = [b["id"] for m in anthropic["messages"] for b in m["content"] if b["type"] == "tool_use"]
    results = [
        (b["tool_use_id"], b["content"][0]["text"])
        for m in anthropic["messages"]
        for b in m["content"]
        if b["type"] == "tool_result"
    ]
    assert uses == ["0", "0_2", "0_3"] and results == [("0", "a.txt"), ("0_2", "b.txt"), ("0_3", "hello")]
    assert [(m["tool_call_id"], m["content"]) for m in openai["messages"] if m["role"] == "tool"] == [
        ("0", "a.txt"),
        ("0_2", "b.txt"),
        ("0_3", "hello"),
    ]


def test_a_duplicate_id_with_one_result_gets_a_placeholder_not_an_extra_result() -> None:
    b = Builder()
    b.message(user("go"))
    b.message(assistant(calls=[("call", "ls", {}), ("call", "ls", {"path": "x"})]))
    b.message(tool_result("call", "one", name="ls"))
    b.message(tool_result("call", "two", name="ls"))
    b.message(tool_result("call", "three", name="ls"))  # one result too many
    prepared = prepare(project(index_of(b)).messages)
    assert any(r.startswith("left out e0005: second result") for r in prepared.repairs)
    assert anthropic_problems(anthropic_request(prepared, "claude-sonnet-4-5")) == []
    assert openai_problems(openai_request(prepared, "gpt-4.1")) == []


def test_assistant_text_given_as_a_string_reaches_both_bodies() -> None:
    b = Builder()
    b.message(user("hi"))
    b.message({**assistant(), "content": "hello from a string"})
    b.message(user("and?"))
    prepared = prepare(project(index_of(b)).messages)
    anthropic = anthropic_request(prepared, "claude-sonnet-4-5")
    openai = openai_request(prepared, "gpt-4.1")
    assert anthropic["messages"][1] == {
        "role": "assistant",
        "content": [{"type": "text", "text": "hello from a string"}],
    }
    assert openai["messages"][1] == {"role": "assistant", "content": "hello from a string"}
    assert anthropic_problems(anthropic) == [] and openai_problems(openai) == []
