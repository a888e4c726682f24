"""Plan mode in the session core, against the fake model server: the model is told it plans (a
``custom_message`` in its context), a write it asks for is refused with a message it reads and
writes nothing, and approving the plan switches the mode (an entry) and starts the work."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from agent_tui.agent.agent_session import AgentSession
from agent_tui.agent.permission_modes import plan_approved_text
from agent_tui.agent.permissions import PermissionMode, PermissionModeError, Permissions
from agent_tui.projection.context import project
from tests.support.agent_support import Harness
from tests.support.fake_model_server import FakeModelServer, anthropic_stream, text, tool_use

pytestmark = pytest.mark.timeout(60)


def _texts(body: dict[str, object]) -> str:
    return json.dumps(body.get("messages"))


async def test_plan_mode_refuses_a_write_and_approval_starts_the_work(
    server: FakeModelServer, tmp_path: Path
) -> None:
    h = Harness(server, tmp_path)
    try:
        h.loop.permissions = Permissions(PermissionMode.ASK)
        agent = AgentSession(h.session, h.loop)
        assert agent.set_permission_mode("plan") is PermissionMode.PLAN
        server.push(
            anthropic_stream(tool_use("w1", "write", {"path": "a.txt", "content": "x"})),
            anthropic_stream(text("Plan: 1. write a.txt with x. 2. check it.")),
            anthropic_stream(tool_use("w2", "write", {"path": "a.txt", "content": "x"})),
            anthropic_stream(text("Done.")),
        )
        async for _ in agent.prompt("add a.txt"):
            pass
        assert not (h.workdir / "a.txt").exists()
        first, second = server.requests[0].body, server.requests[1].body
        assert "Plan mode is on" in _texts(first)  # told, in its context, before the prompt
        assert "agent-tui is in plan mode" in _texts(second)  # the refusal it reads
        results = [m for m in h.messages("toolResult")]
        assert results[0]["isError"] and "plan mode" in results[0]["content"][0]["text"]

        agent.set_permission_mode(PermissionMode.ACCEPT_EDITS)
        async for _ in agent.prompt(plan_approved_text(PermissionMode.ACCEPT_EDITS)):
            pass
        assert (h.workdir / "a.txt").read_text() == "x"
        third = _texts(server.requests[2].body)
        assert "Plan mode is off" in third and "I approve the plan" in third
        records = [e["data"] for e in h.entries() if e.get("customType") == "agent-tui.permission-mode"]
        assert records == [{"mode": "plan", "previous": "ask"}, {"mode": "accept-edits", "previous": "plan"}]
        decisions = [
            e["data"]["decision"] for e in h.entries() if e.get("customType") == "agent-tui.permission"
        ]
        assert decisions == [
            "plan-refused",
            "accept-edits",
        ]  # the second write passed inside the cwd, unasked
        # the notes are in the model's context (a user message each), the records are not
        messages = project(h.session.index).messages
        assert messages[0].role == "user" and "Plan mode is on" in str(messages[0])
    finally:
        await h.close()


async def test_a_change_while_a_run_goes_on_is_written_when_it_ends(
    server: FakeModelServer, tmp_path: Path
) -> None:
    h = Harness(server, tmp_path)
    try:
        h.loop.permissions = Permissions(PermissionMode.ASK)
        agent = AgentSession(h.session, h.loop)
        agent.set_permission_mode("plan", record_later=True)
        assert agent.permission_mode is PermissionMode.PLAN
        assert not [e for e in h.entries() if e["type"].startswith("custom")]  # nothing yet
        server.push(anthropic_stream(text("ok")))
        async for _ in agent.prompt("hi"):
            pass
        kinds = [(e["type"], e.get("customType")) for e in h.entries()]
        assert [k for k in kinds if k[0] != "model_change"][:3] == [
            ("custom", "agent-tui.permission-mode"),
            ("custom_message", "agent-tui.plan-mode"),
            ("message", None),
        ]
        with pytest.raises(PermissionModeError, match="unknown permission mode"):
            agent.set_permission_mode("sometimes")
        assert agent.permission_mode is PermissionMode.PLAN
    finally:
        await h.close()


@pytest.mark.slow
@pytest.mark.timeout(600)  # the first test to need pi may install it (tests/support/pi_install)
async def test_pi_reads_the_mode_entries_and_sends_the_plan_note(
    server: FakeModelServer, tmp_path: Path
) -> None:
    import subprocess

    from tests.functional.test_pi_compat import SCRIPT
    from tests.support.pi_install import pi_node

    node = pi_node()
    h = Harness(server, tmp_path)
    try:
        h.loop.permissions = Permissions(PermissionMode.ASK)
        agent = AgentSession(h.session, h.loop)
        agent.set_permission_mode("plan")
        server.push(anthropic_stream(text("Plan: nothing to do.")))
        async for _ in agent.prompt("plan it"):
            pass
        agent.set_permission_mode("auto")
        proc = subprocess.run(
            [node, str(SCRIPT), "--batch"],
            input=json.dumps([{"file": str(h.session.path)}]),
            capture_output=True,
            text=True,
            timeout=120,
            check=False,
        )
        assert proc.returncode == 0, proc.stderr
        (result,) = json.loads(proc.stdout)
        sent = json.dumps(result["messages"])
        assert "error" not in result and "Plan mode is on" in sent and "Plan mode is off" in sent, result
    finally:
        await h.close()


async def test_an_agent_started_in_plan_mode_tells_the_model(server: FakeModelServer, tmp_path: Path) -> None:
    h = Harness(server, tmp_path)
    try:
        h.loop.permissions = Permissions(PermissionMode.PLAN)
        agent = AgentSession(h.session, h.loop)
        server.push(anthropic_stream(text("Plan: none.")))
        async for _ in agent.prompt("plan"):
            pass
        assert "Plan mode is on" in _texts(server.requests[0].body)
    finally:
        await h.close()
