"""The Python SDK (``from agent_tui import open_session, create_agent``) against the fake model server."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

import agent_tui
from agent_tui.sdk import (
    EntryAppended,
    PiEventStream,
    TextDelta,
    ToolFinished,
    ToolStarted,
    TurnDone,
    create_agent,
    open_session,
)
from agent_tui.store.errors import StoreError
from tests.support.agent_support import make_config
from tests.support.fake_model_server import (
    FakeModelServer,
    anthropic_stream,
    call,
    openai_stream,
    text,
    tool_use,
)
from tests.support.pi_stream import check_stream


def _lines(path: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in path.read_text().splitlines()]


async def test_a_prompt_runs_tools_and_every_entry_is_in_the_file(
    server: FakeModelServer, tmp_path: Path
) -> None:
    (tmp_path / "a.txt").write_text("alpha\n")
    server.push(
        anthropic_stream(text("Reading."), tool_use("toolu_1", "read", {"path": "a.txt"})),
        anthropic_stream(text("It says alpha.")),
    )
    with open_session(tmp_path / "s.jsonl", cwd=str(tmp_path)) as session:
        async with create_agent(session, config=make_config(server), cwd=str(tmp_path)) as agent:
            events = [e async for e in agent.prompt("what is in a.txt?")]
        appended = [e.entry_id for e in events if isinstance(e, EntryAppended)]
        assert "".join(e.text for e in events if isinstance(e, TextDelta)) == "Reading.It says alpha."
        assert [type(e) for e in events if isinstance(e, ToolStarted | ToolFinished)] == [
            ToolStarted,
            ToolFinished,
        ]
        assert isinstance(events[-1], TurnDone) and events[-1].stop_reason == "stop"
        # every appended entry is the file's, in order, and the handle reads the same
        ids = [e["id"] for e in _lines(session.path)[1:]]
        assert appended == ids == [e["id"] for e in session.entries()]
        roles = [m["role"] for m in session.messages()]
        assert roles == ["system", "user", "assistant", "toolResult", "assistant"]
        context = session.context()
        assert context["messages"] == session.messages()
        assert [s["entryId"] for s in context["sources"]] == [
            e["id"] for e in session.entries() if e["type"] == "message"
        ]


async def test_edit_branch_fork_and_the_request_follow_the_projection(
    server: FakeModelServer, tmp_path: Path
) -> None:
    server.push(anthropic_stream(text("One.")), anthropic_stream(text("Two.")))
    with open_session(tmp_path / "s.jsonl", cwd=str(tmp_path)) as session:
        async with create_agent(session, config=make_config(server), cwd=str(tmp_path)) as agent:
            [e async for e in agent.prompt("first")]
            [e async for e in agent.prompt("second")]
            user_ids = [e["id"] for e in session.entries() if e.get("message", {}).get("role") == "user"]
            first_reply = next(
                e["id"] for e in session.entries() if e.get("message", {}).get("role") == "assistant"
            )
            session.replace(user_ids[1], "second, reworded")
            sent = [m["content"] for m in agent.request_body()["messages"]]
            assert sent[-2] == [{"type": "text", "text": "second, reworded"}]
            session.hide(user_ids[1])
            assert "second, reworded" not in json.dumps(agent.request_body())
            session.restore(user_ids[1])
            assert json.dumps(agent.request_body()).count('"second"') == 1

            marker = session.branch(first_reply)
            assert marker is not None and session.leaf_id == marker
            assert [m["role"] for m in session.messages()][-1] == "assistant"
            assert "second" not in json.dumps(agent.request_body()["messages"])

            fork = session.fork(first_reply)
            forked = _lines(fork)
            assert forked[0]["parentSession"] == str(session.path.resolve())
            assert first_reply in [e["id"] for e in forked[1:]]
            assert user_ids[1] not in [e["id"] for e in forked[1:]]
            with pytest.raises(StoreError):
                session.hide("no-such-entry")


async def test_pi_events_from_the_sdk_stream_and_settle(server: FakeModelServer, tmp_path: Path) -> None:
    server.push(openai_stream("Hello there, how are you?", reasoning="Let me think."))
    with open_session(tmp_path / "s.jsonl", cwd=str(tmp_path)) as session:
        async with create_agent(session, config=make_config(server, "openai"), cwd=str(tmp_path)) as agent:
            records = [r async for r in agent.pi_events(agent.prompt("hi"))]
    types = [r["type"] for r in records]
    assert types[:2] == ["agent_start", "turn_start"]
    assert types[-3:] == ["turn_end", "agent_end", "agent_settled"]
    updates = [r["assistantMessageEvent"] for r in records if r["type"] == "message_update"]
    assert all("partial" not in u and "message" not in u for u in updates)
    end = next(r for r in records if r["type"] == "message_end" and r["message"]["role"] == "assistant")
    final = end["message"]["content"]
    for u in updates:
        if u["type"] in ("text_end", "thinking_end"):
            block = final[u["contentIndex"]]
            assert u["content"] == block.get("text", block.get("thinking"))
    rebuilt: dict[int, str] = {}
    for u in updates:
        if u["type"] in ("text_delta", "thinking_delta"):
            rebuilt[u["contentIndex"]] = rebuilt.get(u["contentIndex"], "") + u["delta"]
    assert rebuilt == {i: b.get("text", b.get("thinking")) for i, b in enumerate(final)}
    assert records[-1] == {"type": "agent_settled", "aborted": False}


def test_the_package_exports_the_sdk_lazily() -> None:
    assert agent_tui.open_session is open_session and agent_tui.create_agent is create_agent
    assert agent_tui.PiEventStream is PiEventStream
    out = subprocess.run(
        [sys.executable, "-c", "import sys, agent_tui; print('agent_tui.sdk' in sys.modules)"],
        capture_output=True,
        text=True,
        check=True,
    )
    assert out.stdout.strip() == "False"  # `agent-tui --version` and the session commands do not load it
    with pytest.raises(AttributeError):
        _ = agent_tui.no_such_name


async def test_pi_events_of_an_openai_tool_call_rebuild_its_arguments(
    server: FakeModelServer, tmp_path: Path
) -> None:
    """OpenAI sends a call's id and name only with its first fragment: every fragment still lands
    on the call's block (its index), and the stream is valid."""
    (tmp_path / "a.txt").write_text("alpha\n")
    server.push(
        openai_stream("Let me look.", tool_calls=[call("call_1", "read", {"path": "a.txt"}, chunks=4)]),
        openai_stream("It says alpha."),
    )
    with open_session(tmp_path / "s.jsonl", cwd=str(tmp_path)) as session:
        async with create_agent(session, config=make_config(server, "openai"), cwd=str(tmp_path)) as agent:
            records = [r async for r in agent.pi_events(agent.prompt("read a.txt"))]
    check_stream(records)
    updates = [r["assistantMessageEvent"] for r in records if r["type"] == "message_update"]
    (start,) = [u for u in updates if u["type"] == "toolcall_start"]
    assert start == {"type": "toolcall_start", "contentIndex": 1, "id": "call_1", "toolName": "read"}
    # (the fragments are held back for redaction until a line ends, here until the call is complete)
    fragments = [u["delta"] for u in updates if u["type"] == "toolcall_delta"]
    assert json.loads("".join(fragments)) == {"path": "a.txt"}
