"""Permission rules through the session core and the agent loop, on the fake model server."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from agent_tui.agent import slash_commands
from agent_tui.agent.agent_session import create_agent_session
from agent_tui.agent.events import AgentEvent, Notice, ToolFinished, TurnDone
from agent_tui.agent.permissions import RECORD_TYPE, Decision, PermissionMode, PermissionRequest, Permissions
from agent_tui.agent.sandbox import OFF, Sandbox
from agent_tui.agent.trust import TrustStore
from tests.support.agent_support import Harness
from tests.support.fake_model_server import FakeModelServer, anthropic_stream, text, tool_use

pytestmark = pytest.mark.timeout(60)


class Answers:
    def __init__(self, *answers: Decision) -> None:
        self.answers = list(answers)
        self.asked: list[PermissionRequest] = []

    async def __call__(self, request: PermissionRequest) -> Decision:
        self.asked.append(request)
        return self.answers.pop(0)


def settings(folder: Path, **lists: list[str]) -> Path:
    (folder / ".claude").mkdir(exist_ok=True)
    path = folder / ".claude" / "settings.json"
    path.write_text(json.dumps({"permissions": lists}))
    return path


def decisions(anthropic_harness: Harness) -> list[dict[str, Any]]:
    return [
        e["data"]
        for e in anthropic_harness.entries()
        if e["type"] == "custom" and e.get("customType") == RECORD_TYPE
    ]


def tool_text(server: FakeModelServer, request: int, call_id: str) -> tuple[bool, str]:
    blocks = server.requests[request].body["messages"][-1]["content"]
    block = next(b for b in blocks if b.get("tool_use_id") == call_id)
    return bool(block.get("is_error")), block["content"][0]["text"]


async def drive(agent: Any, prompt: str) -> list[AgentEvent]:
    return [event async for event in agent.prompt(prompt)]


async def test_rules_allow_deny_and_always_allow_in_the_loop(
    anthropic_harness: Harness, server: FakeModelServer
) -> None:
    work = anthropic_harness.workdir
    shared = settings(work, allow=["Bash(echo:*)"], deny=["Bash(rm:*)"], ask=["Bash(git push:*)", "Bash(x"])
    (work / "keep").write_text("k")
    TrustStore().remember(work, True)
    answers = Answers(Decision.ALLOW_ALWAYS)
    permissions = Permissions(PermissionMode.ASK, answers, sandbox=Sandbox(OFF, False))
    agent = create_agent_session(
        anthropic_harness.session, anthropic_harness.config, permissions=permissions, cwd=str(work)
    )
    server.push(
        anthropic_stream(
            tool_use("toolu_1", "bash", {"command": "echo one"}),
            tool_use("toolu_2", "bash", {"command": "echo two && rm -rf keep"}),
            tool_use("toolu_3", "bash", {"command": "ls"}),
        ),
        anthropic_stream(tool_use("toolu_4", "bash", {"command": "ls"})),
        anthropic_stream(text("Done.")),
    )
    events = await drive(agent, "go")
    assert events[-1] == TurnDone("stop")
    notices = [e.text for e in events if isinstance(e, Notice)]
    assert any("'Bash(x'" in n and str(shared) in n for n in notices)  # the bad rule, once, named
    assert [r.summary for r in answers.asked] == ["ls"]  # asked once; the second ls ran unasked
    assert answers.asked[0].rule == "Bash(ls:*)"
    assert (work / "keep").exists()
    local = json.loads((work / ".claude" / "settings.local.json").read_text())
    assert local == {"permissions": {"allow": ["Bash(ls:*)"]}}
    errors = {e.call_id: e.is_error for e in events if isinstance(e, ToolFinished)}
    assert errors == {"toolu_1": False, "toolu_2": True, "toolu_3": False, "toolu_4": False}
    refused, said = tool_text(server, 1, "toolu_2")
    assert refused and "Bash(rm:*)" in said and str(shared) in said
    recorded = [
        (d["summary"], d["decision"], d.get("rule"), d.get("source")) for d in decisions(anthropic_harness)
    ]
    assert recorded == [
        ("echo one", "rule-allow", "Bash(echo:*)", str(shared)),
        ("echo two && rm -rf keep", "rule-deny", "Bash(rm:*)", str(shared)),
        ("ls", "allow-always", "Bash(ls:*)", str(work / ".claude" / "settings.local.json")),
        ("ls", "rule-allow", "Bash(ls:*)", str(work / ".claude" / "settings.local.json")),
    ]
    listing = slash_commands.run(agent, slash_commands.Command("permissions", ""))
    assert isinstance(listing, slash_commands.Said)
    assert "allow  Bash(ls:*)  " + str(work / ".claude" / "settings.local.json") in listing.text
    anthropic_harness.assert_requests_match_context()


async def test_an_untrusted_projects_allow_rules_are_ignored_its_deny_rules_apply(
    anthropic_harness: Harness, server: FakeModelServer
) -> None:
    work = anthropic_harness.workdir
    settings(work, allow=["Bash", "Edit(//**)"], deny=["Bash(touch:*)"])
    answers = Answers(Decision.DENY)
    permissions = Permissions(PermissionMode.ASK, answers, sandbox=Sandbox(OFF, False))
    agent = create_agent_session(
        anthropic_harness.session, anthropic_harness.config, permissions=permissions, cwd=str(work)
    )
    server.push(
        anthropic_stream(
            tool_use("toolu_1", "bash", {"command": "echo pwned > made.txt"}),
            tool_use("toolu_2", "bash", {"command": "touch x"}),
        ),
        anthropic_stream(text("Stopped.")),
    )
    events = await drive(agent, "go")
    assert events[-1] == TurnDone("stop")
    assert [r.summary for r in answers.asked] == ["echo pwned > made.txt"]  # the allow was not taken
    assert not (work / "made.txt").exists() and not (work / "x").exists()
    assert [d["decision"] for d in decisions(anthropic_harness)] == ["deny", "rule-deny"]
    listing = slash_commands.run(agent, slash_commands.Command("permissions", ""))
    assert isinstance(listing, slash_commands.Said)
    assert "allow  Bash  " in listing.text and "(not applied: this folder is not trusted)" in listing.text
