"""Subagents (the ``task`` tool) and the plan (``todo_write``) against the fake model server.

The subagent's request holds only its own system prompt and the task prompt; the parent's next
request holds its reply as the tool result; two task calls in one message run at once; an abort
stops both, each transcript kept and marked aborted; the parent's file never holds the child's
transcript (pi 1.6 agrees on its projection: ``test_pi_agrees_on_the_parent``).
"""

from __future__ import annotations

import json
import threading
import time
from pathlib import Path
from typing import Any

import pytest

from agent_tui.agent.agent_types import GENERAL_PROMPT, load_agent_types, parse_type
from agent_tui.agent.events import SubagentEvent, TurnDone
from agent_tui.agent.subagents import LINK_TYPE, TASK_TYPE, add_agent_tools, resolve_link
from agent_tui.agent.system_prompt import PREAMBLE
from agent_tui.projection.context import project
from agent_tui.projection.request import prepare
from agent_tui.projection.todos import latest_todos
from agent_tui.store.session import Session
from tests.functional.test_pi_compat import pi  # noqa: F401  (the fixture that installs pi)
from tests.support.agent_support import Harness
from tests.support.fake_model_server import (
    FakeModelServer,
    Hang,
    RecordedRequest,
    Response,
    Stream,
    anthropic_stream,
    text,
    tool_use,
)

pytestmark = pytest.mark.timeout(60)


def system_text(body: dict[str, Any]) -> str:
    system = body.get("system") or []
    return "\n".join(b.get("text", "") for b in system) if isinstance(system, list) else str(system)


def is_subagent(request: RecordedRequest) -> bool:
    return GENERAL_PROMPT[:40] in system_text(request.body)


def links_of(path: Path) -> list[dict[str, Any]]:
    lines = [json.loads(line) for line in path.read_text().splitlines()[1:]]
    return [e["data"] for e in lines if e["type"] == "custom" and e.get("customType") == LINK_TYPE]


def child_entries(path: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in path.read_text().splitlines()]


def task(call_id: str, marker: str) -> Any:
    return tool_use(
        call_id, "task", {"description": f"find {marker}", "prompt": f"Find {marker} in the repo"}
    )


async def test_a_task_runs_a_subagent_with_a_fresh_context(
    anthropic_harness: Harness, server: FakeModelServer, capsys: pytest.CaptureFixture[str]
) -> None:
    add_agent_tools(anthropic_harness.loop)
    server.push(
        anthropic_stream(text("Let me delegate."), task("toolu_1", "MARKER-42")),
        anthropic_stream(text("MARKER-42 is in a.py line 3"), input_tokens=50, output_tokens=9),
        anthropic_stream(text("The subagent found it.")),
    )
    await anthropic_harness.run("hello, where is MARKER-42?")

    parent, sub, after = server.requests
    assert not is_subagent(parent) and is_subagent(sub) and not is_subagent(after)
    # the subagent saw its own prompt and the task, nothing of the parent's history
    assert PREAMBLE not in system_text(sub.body)
    assert "hello, where is MARKER-42?" not in json.dumps(sub.body)
    assert [m["role"] for m in sub.body["messages"]] == ["user"]
    assert "Find MARKER-42 in the repo" in json.dumps(sub.body["messages"])
    names = [t["name"] for t in sub.body["tools"]]
    assert "task" not in names and "read" in names and "todo_write" in names
    assert "task" in [t["name"] for t in parent.body["tools"]]
    # the parent's next request has the reply as the task call's result
    results = [
        b
        for m in after.body["messages"]
        if m["role"] == "user" and isinstance(m["content"], list)
        for b in m["content"]
        if b.get("type") == "tool_result"
    ]
    assert results and results[0]["tool_use_id"] == "toolu_1"
    assert "MARKER-42 is in a.py line 3" in json.dumps(results[0]["content"])
    assert "Let me delegate" not in json.dumps(sub.body)

    # the parent's file: link records, the result's details, never the child's messages
    statuses = [d["status"] for d in links_of(anthropic_harness.session.path)]
    assert statuses == ["running", "done"]
    result = next(m for m in anthropic_harness.messages("toolResult"))
    link = result["details"]["subagent"]
    assert link["status"] == "done" and link["usage"]["input"] == 50 and link["usage"]["output"] == 9
    assert "MARKER-42 is in a.py" not in "".join(
        json.dumps(m) for m in anthropic_harness.messages() if m["role"] != "toolResult"
    )
    child = resolve_link(anthropic_harness.session.path, link["file"])
    assert child.parent == anthropic_harness.session.path.with_suffix("") / "subagents"
    lines = child_entries(child)
    assert lines[0]["parentSession"] == str(anthropic_harness.session.path)
    assert lines[1]["customType"] == TASK_TYPE and lines[1]["data"]["toolCallId"] == "toolu_1"
    roles = [e["message"]["role"] for e in lines[1:] if e["type"] == "message"]
    assert roles == ["system", "user", "assistant"]
    # agent-tui tree --json lists it, under the call
    from agent_tui.cli.main import main

    capsys.readouterr()
    assert main(["tree", str(anthropic_harness.session.path), "--json"]) == 0
    (row,) = json.loads(capsys.readouterr().out)["subagents"]
    assert row["toolCallId"] == "toolu_1" and row["file"] == str(child) and row["exists"]
    assert (
        row["status"] == "done"
        and row["description"] == "find MARKER-42"
        and row["type"] == "general-purpose"
    )
    assert row["resultId"] == next(
        e["id"] for e in anthropic_harness.entries() if e.get("message", {}).get("role") == "toolResult"
    )
    # the Markdown export renders its transcript after the conversation
    from agent_tui.library.export import export_bytes

    with Session.open(anthropic_harness.session.path, write=False) as opened:
        markdown = export_bytes(opened.index, "md", source=anthropic_harness.session.path).decode()
    section = markdown.index("## Subagent general-purpose: find MARKER-42")
    assert markdown.index("The subagent found it.") < section
    assert "Find MARKER-42 in the repo" in markdown[section:] and "line 3" in markdown[section:]
    with Session.open(anthropic_harness.session.path, write=False) as opened:
        page = export_bytes(opened.index, "html", source=anthropic_harness.session.path).decode()
    assert "subagent transcript · general-purpose · done" in page and "Find MARKER-42 in the repo" in page
    # the child opens and projects on its own
    with Session.open(child, write=False) as opened:
        assert [m.role for m in project(opened.index).messages] == ["system", "user", "assistant"]


async def test_subagent_events_are_tagged_with_the_call(
    anthropic_harness: Harness, server: FakeModelServer
) -> None:
    add_agent_tools(anthropic_harness.loop)
    server.push(
        anthropic_stream(task("toolu_9", "M9")),
        anthropic_stream(text("found M9")),
        anthropic_stream(text("ok")),
    )
    events = await anthropic_harness.run("go")
    tagged = [e for e in events if isinstance(e, SubagentEvent)]
    assert tagged and {e.call_id for e in tagged} == {"toolu_9"}
    assert isinstance(tagged[-1].event, TurnDone) and tagged[-1].event.stop_reason == "stop"
    assert tagged[-1].description == "find M9" and tagged[-1].agent_type == "general-purpose"
    assert events[-1] == TurnDone("stop")
    # JSON and RPC mode: pi's records, plus agent-tui's subagent_event ones for the call
    from agent_tui.sdk.pi_events import PiEventStream

    stream = PiEventStream(anthropic_harness.session.index)
    records = [r for event in events for r in stream.feed(event)]
    mine = [r for r in records if r["type"] == "subagent_event"]
    assert mine and {r["toolCallId"] for r in mine} == {"toolu_9"}
    assert mine[-1]["event"] == {"type": "turn_done", "stop_reason": "stop"}
    first = mine[0]["event"]
    assert first["type"] == "entry_appended" and first["entryType"] == "model_change"
    assert not any(r["event"]["type"] == "text_delta" for r in mine)
    assert records[-1]["type"] == "agent_settled"


async def test_two_tasks_in_one_message_run_at_once(
    anthropic_harness: Harness, server: FakeModelServer
) -> None:
    add_agent_tools(anthropic_harness.loop)
    both_asked = threading.Event()
    subagent_requests: list[RecordedRequest] = []

    def responder(request: RecordedRequest) -> Response:
        if is_subagent(request):
            subagent_requests.append(request)
            if len(subagent_requests) == 2:
                both_asked.set()
            marker = "A" if "Find A" in json.dumps(request.body) else "B"
            # neither answers before both were asked: run one after the other, this would time out
            return Stream(anthropic_stream(text(f"found {marker}")).events, gate=both_asked, gate_at=0)
        return anthropic_stream(text("both done"))

    server.responder = responder
    server.push(anthropic_stream(task("toolu_a", "A"), task("toolu_b", "B")))
    events = await anthropic_harness.run("find A and B")
    assert events[-1] == TurnDone("stop")
    assert len(subagent_requests) == 2
    results = {m["toolCallId"]: m for m in anthropic_harness.messages("toolResult")}
    assert "found A" in results["toolu_a"]["content"][0]["text"]
    assert "found B" in results["toolu_b"]["content"][0]["text"]
    files = {
        resolve_link(anthropic_harness.session.path, d["file"])
        for d in links_of(anthropic_harness.session.path)
    }
    assert len(files) == 2


async def test_abort_during_two_subagents_keeps_both_marked_aborted(
    anthropic_harness: Harness, server: FakeModelServer
) -> None:
    add_agent_tools(anthropic_harness.loop)
    asked: list[RecordedRequest] = []
    both = threading.Event()

    def responder(request: RecordedRequest) -> Response:
        asked.append(request)
        if len(asked) == 2:
            both.set()
            threading.Timer(
                0.2, anthropic_harness.loop.abort
            ).start()  # Esc, from another thread, while both wait
        return Hang(20)

    server.responder = responder
    server.push(anthropic_stream(task("toolu_a", "A"), task("toolu_b", "B")))
    started = time.monotonic()
    seen = [event async for event in anthropic_harness.loop.run("find A and B")]
    assert time.monotonic() - started < 10
    if not both.is_set():
        pytest.fail("the two subagents never asked the model at the same time")
    assert seen[-1] == TurnDone("aborted")
    final = {}
    for d in links_of(anthropic_harness.session.path):
        final[d["toolCallId"]] = d
    assert {k: v["status"] for k, v in final.items()} == {"toolu_a": "aborted", "toolu_b": "aborted"}
    results = {m["toolCallId"]: m for m in anthropic_harness.messages("toolResult")}
    assert set(results) == {"toolu_a", "toolu_b"} and all(m["isError"] for m in results.values())
    for link in final.values():
        child = child_entries(resolve_link(anthropic_harness.session.path, link["file"]))
        messages = [e["message"] for e in child[1:] if e["type"] == "message"]
        assert [m["role"] for m in messages] == ["system", "user", "assistant"]
        assert messages[-1]["stopReason"] == "aborted"  # what it did so far, marked
    # the parent's next request is valid without any repair of the task calls
    with Session.open(anthropic_harness.session.path, write=False) as opened:
        prepared = prepare(project(opened.index).messages)
        assert not [r for r in prepared.repairs if "No result" in str(r)]


async def test_todo_write_is_recorded_and_the_latest_list_derived(
    anthropic_harness: Harness, server: FakeModelServer
) -> None:
    add_agent_tools(anthropic_harness.loop)
    todos = [
        {"content": "Read the code", "status": "completed"},
        {"content": "Fix the bug", "status": "in_progress", "activeForm": "Fixing the bug"},
        {"content": "Run tests", "status": "pending"},
    ]
    server.push(
        anthropic_stream(tool_use("toolu_t", "todo_write", {"todos": todos})),
        anthropic_stream(text("planned")),
    )
    await anthropic_harness.run("plan it")
    result = next(m for m in anthropic_harness.messages("toolResult"))
    assert not result["isError"] and result["details"]["todos"] == todos
    assert latest_todos(anthropic_harness.session.index.active_path()) == todos
    assert not any(
        d.get("customType") == "agent-tui.permission"
        for d in anthropic_harness.entries()
        if d["type"] == "custom"
    )


def test_agent_types_load_from_the_folders(tmp_path: Path) -> None:
    home, project_dir = tmp_path / "home", tmp_path / "proj"
    (home / ".claude" / "agents").mkdir(parents=True)
    (project_dir / ".claude" / "agents").mkdir(parents=True)
    (home / ".claude" / "agents" / "reviewer.md").write_text(
        "---\nname: reviewer\ndescription: Reviews code\ntools: Read, Grep\nmodel: sonnet\n---\nYou review code.\n"
    )
    (project_dir / ".claude" / "agents" / "local.md").write_text(
        "---\nname: local\ndescription: The repo's own\n---\nRepo prompt.\n"
    )
    (home / ".claude" / "agents" / "broken.md").write_text("---\nname: broken\n---\nno description\n")
    types, warnings = load_agent_types(project_dir, home, trusted=False)
    assert [t.name for t in types] == ["reviewer", "general-purpose"]
    reviewer = types[0]
    assert (
        reviewer.tools == ("Read", "Grep")
        and reviewer.model is None
        and reviewer.prompt == "You review code."
    )
    assert len(warnings) == 1 and "broken.md" in warnings[0] and "description" in warnings[0]
    trusted, _ = load_agent_types(project_dir, home, trusted=True)
    assert [t.name for t in trusted] == ["local", "reviewer", "general-purpose"]
    with pytest.raises(ValueError, match="system prompt"):
        parse_type(Path("x.md"), "---\nname: x\ndescription: d\n---\n")


async def test_slash_agents_lists_the_types_in_every_face(anthropic_harness: Harness, tmp_path: Path) -> None:
    from agent_tui.agent.agent_session import AgentSession
    from agent_tui.agent.slash_commands import Command, Said, parse, run

    agents = Path.home() / ".claude" / "agents"
    agents.mkdir(parents=True)
    (agents / "reviewer.md").write_text("---\nname: reviewer\ndescription: Reviews diffs\n---\nReview.\n")
    command = parse("/agents", None)
    assert command == Command("agents", "")
    said = run(AgentSession(anthropic_harness.session, anthropic_harness.loop), command)
    assert isinstance(said, Said)
    assert "- reviewer (" in said.text and "Reviews diffs" in said.text and "- general-purpose" in said.text
    assert "not trusted" in said.text


@pytest.mark.slow
@pytest.mark.timeout(120)
async def test_acp_gets_todo_write_as_plan_updates_and_subagent_thoughts(
    tmp_path: Path, server: FakeModelServer
) -> None:
    from acp import text_block
    from acp.schema import AgentPlanUpdate

    from tests.support.acp_editor import AcpEnv, EditorClient

    todos = [
        {"content": "Look around", "status": "completed"},
        {"content": "Delegate the search", "status": "in_progress", "activeForm": "Delegating"},
    ]
    server.push(
        anthropic_stream(tool_use("toolu_t", "todo_write", {"todos": todos})),
        anthropic_stream(task("toolu_s", "ACP-7")),
        anthropic_stream(text("ACP-7 found")),
        anthropic_stream(text("All done.")),
    )
    env = AcpEnv(tmp_path, server)
    client = EditorClient(answers=[])
    async with env.agent(client) as conn:
        session = await conn.new_session(cwd=str(env.work), mcp_servers=[])
        response = await conn.prompt(session_id=session.session_id, prompt=[text_block("plan and search")])
        assert response.stop_reason == "end_turn"
    (plan,) = client.of(AgentPlanUpdate)
    assert [(e.content, e.status) for e in plan.entries] == [
        ("Look around", "completed"),
        ("Delegate the search", "in_progress"),
    ]
    assert "[general-purpose: find ACP-7] started" in client.thought_text()
    assert "[general-purpose: find ACP-7] done" in client.thought_text()
    assert client.message_text().endswith("All done.")


@pytest.mark.slow
@pytest.mark.timeout(300)
async def test_pi_agrees_on_the_parent_at_every_request(
    anthropic_harness: Harness,
    server: FakeModelServer,
    pi: Any,  # noqa: F811  (the fixture imported above)
) -> None:
    """The parent's file as it was when each request arrived (the subagents' included: mid-task)
    and the subagents' files, projected by pi 1.6 and by agent-tui: the same messages."""
    from tests.functional.test_pi_compat import Job, compare

    add_agent_tools(anthropic_harness.loop)

    def responder(request: RecordedRequest) -> Response:
        body = json.dumps(request.body)
        if is_subagent(request):
            if '"tool_result"' not in body:
                return anthropic_stream(tool_use("toolu_ls", "ls", {"path": "."}))
            return anthropic_stream(text("the subagent's answer"))
        return anthropic_stream(text("the parent's answer"))

    server.responder = responder
    server.push(anthropic_stream(text("Two at once."), task("toolu_a", "A"), task("toolu_b", "B")))
    events = await anthropic_harness.run("go")
    assert events[-1] == TurnDone("stop")
    jobs = []
    for number, snapshot in enumerate(anthropic_harness.snapshots):
        copy = anthropic_harness.tmp / f"parent-at-{number}.jsonl"
        copy.write_bytes(snapshot)
        jobs.append(Job(copy))
    children = sorted((anthropic_harness.session.path.with_suffix("") / "subagents").glob("*.jsonl"))
    assert len(children) == 2
    jobs += [Job(child) for child in children]
    assert len(jobs) == len(server.requests) + 2 == 8  # parent, 2 x 2 subagent calls, parent
    assert compare(pi, jobs) == []


async def test_continuing_a_subagent_goes_on_in_its_own_file(
    anthropic_harness: Harness, server: FakeModelServer
) -> None:
    from agent_tui.agent.agent_session import create_agent_session

    add_agent_tools(anthropic_harness.loop)
    server.push(
        anthropic_stream(task("toolu_c", "C1")),
        anthropic_stream(text("C1 is in c.py")),
        anthropic_stream(text("ok")),
        anthropic_stream(text("and C2 is in d.py")),
    )
    await anthropic_harness.run("find C1")
    parent_bytes = anthropic_harness.session.path.read_bytes()
    (link,) = {d["toolCallId"]: d for d in links_of(anthropic_harness.session.path)}.values()
    child_path = resolve_link(anthropic_harness.session.path, link["file"])
    # any face opening the transcript (here the session core every face builds) continues it
    with Session.open(child_path) as child:
        agent = create_agent_session(child, anthropic_harness.config, cwd=str(anthropic_harness.workdir))
        try:
            events = [e async for e in agent.prompt("now find C2 too")]
        finally:
            await agent.aclose()
    assert events[-1] == TurnDone("stop")
    request = server.requests[-1]
    assert is_subagent(request) and PREAMBLE not in system_text(request.body)
    assert "task" not in [t["name"] for t in request.body["tools"]]
    said = json.dumps(request.body["messages"])
    assert "Find C1 in the repo" in said and "C1 is in c.py" in said and "now find C2 too" in said
    assert "find C1" not in said.replace("Find C1", "")  # nothing of the parent's own turn
    assert anthropic_harness.session.path.read_bytes() == parent_bytes  # the parent is untouched
    roles = [e["message"]["role"] for e in child_entries(child_path)[1:] if e["type"] == "message"]
    assert roles == ["system", "user", "assistant", "user", "assistant"]  # no second system message


async def test_a_type_listing_task_starts_its_own_subagents_beside_its_file(
    anthropic_harness: Harness, server: FakeModelServer
) -> None:
    agents = Path.home() / ".claude" / "agents"
    agents.mkdir(parents=True)
    (agents / "lead.md").write_text(
        "---\nname: lead\ndescription: Delegates\ntools: task, ls\n---\nYou lead.\n"
    )
    add_agent_tools(anthropic_harness.loop)
    server.push(
        anthropic_stream(
            tool_use("toolu_l", "task", {"description": "lead", "prompt": "P1", "subagent_type": "lead"})
        ),
        anthropic_stream(tool_use("toolu_n", "task", {"description": "nested", "prompt": "P2"})),
        anthropic_stream(text("nested reply")),
        anthropic_stream(text("lead reply")),
        anthropic_stream(text("top reply")),
    )
    events = await anthropic_harness.run("go deep")
    assert events[-1] == TurnDone("stop")
    lead_request = server.requests[1]
    assert "You lead." in system_text(lead_request.body)
    assert sorted(t["name"] for t in lead_request.body["tools"]) == ["ls", "task"]
    # the nested subagent's records are in the lead's file, never in the top session's
    assert {d["toolCallId"] for d in links_of(anthropic_harness.session.path)} == {"toolu_l"}
    (lead,) = {d["toolCallId"]: d for d in links_of(anthropic_harness.session.path)}.values()
    lead_file = resolve_link(anthropic_harness.session.path, lead["file"])
    assert {d["toolCallId"] for d in links_of(lead_file)} == {"toolu_n"}
    nested = links_of(lead_file)[-1]
    assert resolve_link(lead_file, nested["file"]).is_file() and nested["status"] == "done"
    assert "lead reply" in json.dumps(server.requests[-1].body["messages"])


async def test_a_subagents_calls_are_asked_saying_which_subagent_asks(
    anthropic_harness: Harness, server: FakeModelServer
) -> None:
    from agent_tui.agent.permissions import Decision, PermissionMode, PermissionRequest, Permissions

    asked: list[PermissionRequest] = []

    async def approver(request: PermissionRequest) -> Decision:
        asked.append(request)
        return Decision.ALLOW_SESSION

    anthropic_harness.loop.permissions = Permissions(PermissionMode.ASK, approver)
    add_agent_tools(anthropic_harness.loop)
    server.push(
        anthropic_stream(task("toolu_p", "P")),
        anthropic_stream(tool_use("toolu_b", "bash", {"command": "echo from-the-subagent"})),
        anthropic_stream(text("it printed")),
        anthropic_stream(tool_use("toolu_b2", "bash", {"command": "echo from-the-subagent"})),
        anthropic_stream(text("done")),
    )
    await anthropic_harness.run("go")
    # the task call itself asked nothing; the subagent's bash did, naming the subagent
    assert [r.tool for r in asked] == ["bash"]
    assert "asked by the subagent general-purpose: find P" in asked[0].reason
    # its decision is recorded in its own file, and its "allow for this session" holds for the parent
    (link,) = {d["toolCallId"]: d for d in links_of(anthropic_harness.session.path)}.values()
    child = child_entries(resolve_link(anthropic_harness.session.path, link["file"]))
    assert [e["data"]["decision"] for e in child if e.get("customType") == "agent-tui.permission"] == [
        "allow-session"
    ]
    parent = [
        e["data"]["decision"]
        for e in anthropic_harness.entries()
        if e.get("customType") == "agent-tui.permission"
    ]
    assert parent == ["allow-session"] and len(asked) == 1
