"""How each face shows a subagent's events and the plan: print mode's and ACP's one line, the JSON
record, the app's rows above the composer (pure parts, no app)."""

from __future__ import annotations

from pathlib import Path

from agent_tui.agent.events import EntryAppended, SubagentEvent, TextDelta, ToolStarted, TurnDone
from agent_tui.agent.subagents import progress_line
from agent_tui.projection.todos import clean_todos, todo_lines
from agent_tui.sdk.pi_events import subagent_record
from agent_tui.tui.widgets.agent_work import AgentWork, Running

SECRET = "sk-ant-api03-" + "A" * 80


def tagged(event: object, tokens: int = 0) -> SubagentEvent:
    return SubagentEvent("toolu_1", "find it", "general-purpose", "/s/task-toolu_1.jsonl", event, tokens, 0.5)  # type: ignore[arg-type]


def test_progress_lines_are_one_redacted_line() -> None:
    assert (
        progress_line(tagged(EntryAppended("e1", "message", "user"))) == "[general-purpose: find it] started"
    )
    line = progress_line(tagged(ToolStarted("c", "bash", {"command": f"echo {SECRET}\nrm -rf x"}), 10))
    assert line is not None and line.startswith("[general-purpose: find it] > bash")
    assert SECRET not in line and "\n" not in line
    assert (
        progress_line(tagged(TurnDone("aborted"), 1234))
        == "[general-purpose: find it] aborted (1,234 tokens, $0.5000)"
    )
    assert progress_line(tagged(TextDelta("hi"))) is None


def test_json_records_carry_the_call_and_leave_out_streamed_pieces() -> None:
    record = subagent_record(tagged(ToolStarted("c", "bash", {"command": f"echo {SECRET}"}), 7))
    assert record is not None
    assert record["type"] == "subagent_event" and record["toolCallId"] == "toolu_1" and record["tokens"] == 7
    assert record["event"]["type"] == "tool_started" and record["event"]["name"] == "bash"
    assert SECRET not in str(record)
    assert subagent_record(tagged(TextDelta("streamed"))) is None
    nested = subagent_record(tagged(tagged(TurnDone("stop"))))
    assert nested is not None and nested["event"]["type"] == "subagent_event"
    assert nested["event"]["event"] == {"type": "turn_done", "stop_reason": "stop"}


def test_the_plan_and_running_subagents_above_the_composer() -> None:
    todos = clean_todos(
        [
            {"content": "Read", "status": "completed"},
            {"content": "Fix", "status": "in_progress", "activeForm": "Fixing"},
            {"content": "Test", "status": "pending"},
        ]
    )
    assert isinstance(todos, list)
    assert todo_lines(todos) == ["[x] Read", "[>] Fixing", "[ ] Test"]
    assert (
        clean_todos([{"content": "x", "status": "done"}])
        == "todos[0].status must be one of pending, in_progress, completed"
    )
    work = AgentWork()
    work.running["toolu_1"] = Running("general-purpose", "find \x1b[31mit", 1500)
    work.todos = todos
    lines = work.lines()
    assert lines[0].endswith("general-purpose: find \\x1b[31mit · 1,500 tokens")  # the ESC shown, inert
    assert "\x1b" not in "".join(lines)
    assert lines[1:] == ["[x] Read", "[>] Fixing", "[ ] Test"]
    work.todos = [{"content": "Read", "status": "completed"}]
    work.running.clear()
    assert work.lines() == []  # a plan all done is not shown


def test_the_tree_and_exports_describe_the_records() -> None:
    from agent_tui.projection.describe import first_line
    from agent_tui.store.record import Entry

    def custom(kind: str, data: dict[str, object]) -> Entry:
        fields = {
            "type": "custom",
            "id": "abcd1234",
            "parentId": None,
            "timestamp": "2026-01-01T00:00:00.000Z",
        }
        return Entry.from_data({**fields, "customType": kind, "data": data})

    link: dict[str, object] = {
        "toolCallId": "toolu_1",
        "type": "general-purpose",
        "description": "find it",
        "status": "done",
    }
    done = custom("agent-tui.subagent", {**link, "usage": {"totalTokens": 1234}})
    assert first_line(done) == "subagent general-purpose: find it · done · 1,234 tokens"
    assert (
        first_line(custom("agent-tui.task", link))
        == "subagent of task call toolu_1, general-purpose: find it"
    )


def test_an_acp_replay_sends_the_plan_after_its_todo_write(tmp_path: Path) -> None:
    from acp.schema import AgentPlanUpdate

    from agent_tui.acp.updates import replay
    from agent_tui.store.session import Session

    session = Session.create(tmp_path, tmp_path)
    todos = [{"content": "Step one", "status": "in_progress"}, {"content": "Step two", "status": "pending"}]
    call = {"type": "toolCall", "id": "t1", "name": "todo_write", "arguments": {"todos": todos}}
    session.append_message({"role": "user", "content": "plan", "timestamp": 1})
    session.append_message({"role": "assistant", "content": [call], "stopReason": "toolUse", "timestamp": 2})
    result = {"role": "toolResult", "toolCallId": "t1", "toolName": "todo_write", "isError": False}
    session.append_message(
        {**result, "content": [{"type": "text", "text": "ok"}], "details": {"todos": todos}, "timestamp": 3}
    )
    updates = list(replay(session.index, str(tmp_path)))
    plans = [u for u in updates if isinstance(u, AgentPlanUpdate)]
    assert len(plans) == 1 and updates[-1] is plans[0]
    assert [(e.content, e.status) for e in plans[0].entries] == [
        ("Step one", "in_progress"),
        ("Step two", "pending"),
    ]
    session.close()
