"""The opt-in ``context`` tool: the model lists its largest tool results and hides or restores them,
as surgeries whose author is the model; never a user message or the system prompt."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest

from agent_tui.agent.permissions import PermissionMode, Permissions
from agent_tui.agent.tools.base import ToolContext, ToolError
from agent_tui.agent.tools.context import ContextTool
from agent_tui.config import load_config
from agent_tui.projection.context import Status, project
from agent_tui.projection.request import prepare
from agent_tui.projection.surgery import SURGERY, edit_authors, plan_undo
from agent_tui.projection.wire.anthropic_messages import anthropic_request
from agent_tui.projection.wire.openai_completions import openai_request
from agent_tui.store.session import Session
from tests.support.agent_support import Harness
from tests.support.fake_model_server import FakeModelServer, anthropic_stream, text, tool_use
from tests.support.request_validity import anthropic_problems, openai_problems
from tests.support.session_builder import Builder, assistant, tool_result, user

pytestmark = pytest.mark.timeout(30)


def _session(tmp_path: Path) -> Path:
    b = Builder()
    b.message({"role": "system", "content": "be brief", "timestamp": 0})  # e0001
    b.message(user("look around"))  # e0002
    b.message(assistant("", [("c1", "read", {"path": "big.py"}), ("c2", "bash", {"command": "ls"})]))  # e0003
    b.message(tool_result("c1", "z" * 7_000))  # e0004: 2,000 tokens
    b.message(tool_result("c2", "a b c", name="bash"))  # e0005
    b.message(assistant("seen"))  # e0006
    return b.write(tmp_path / "s.jsonl")


def _run(tool: ContextTool, **args: object) -> str:
    result = asyncio.run(tool.execute(dict(args), ToolContext("/tmp")))
    return str(result.content[0]["text"])


def test_list_names_the_largest_results_first(tmp_path: Path) -> None:
    with Session.open(_session(tmp_path)) as s:
        out = _run(ContextTool(s), action="list")
        lines = out.splitlines()
        assert lines[0] == "2 tool results in context, 2,002 tokens; the largest 2:"
        assert lines[1] == 'e0004  read "big.py"  2,000 tokens'
        assert lines[2].startswith('e0005  bash "ls"  ')


def test_hide_and_restore_are_model_surgeries(tmp_path: Path) -> None:
    with Session.open(_session(tmp_path)) as s:
        tool = ContextTool(s)
        out = _run(tool, action="hide", ids=["e0004"])
        assert out.startswith("Hid 1 tool result (e0004): context ")
        view = project(s.index)
        hidden = next(ce for ce in view.entries if ce.entry.id == "e0004")
        assert hidden.status is Status.REPLACED
        stub = hidden.messages[0].message["content"][0]["text"]
        assert (
            stub
            == '[output of read "big.py" hidden by the model: 2,000 tokens; context restore e0004 brings it back]'
        )
        record = s.index.entries[-1]
        assert record.data["customType"] == SURGERY and record.data["data"]["author"] == "model"
        assert edit_authors(view.path)[hidden.edit_id or ""][0] == "model"
        assert "[hidden by model]" in _run(tool, action="list")
        prepared = prepare(view.messages)
        assert anthropic_problems(anthropic_request(prepared, "claude-sonnet-4-5")) == []
        assert openai_problems(openai_request(prepared, "gpt-4.1")) == []
        # the user can undo what the model did, in one go
        undo = plan_undo(view, record.id)
        assert undo.targets == ["e0004"]
        assert _run(tool, action="restore", ids=["e0004"]).startswith("Restored 1 tool result")
        assert next(ce for ce in project(s.index).entries if ce.entry.id == "e0004").status is Status.RESTORED


@pytest.mark.parametrize(
    ("ids", "why"),
    [
        (["e0002"], r"e0002 is not a tool result \(user\)"),
        (["e0001"], r"e0001 is not a tool result \(system\)"),
        (["e0003"], r"e0003 is not a tool result \(assistant\)"),
        (["nope"], "nope is not in the context"),
    ],
)
def test_it_never_touches_anything_but_tool_results(tmp_path: Path, ids: list[str], why: str) -> None:
    path = _session(tmp_path)
    size = path.stat().st_size
    with Session.open(path) as s, pytest.raises(ToolError, match=why):
        _run(ContextTool(s), action="hide", ids=["e0004", *ids])
    assert path.stat().st_size == size  # nothing was changed, not even the allowed id


def test_it_is_opt_in_and_gated_in_ask_mode(tmp_path: Path) -> None:
    config_file = tmp_path / "config.toml"
    env = {"ANTHROPIC_API_KEY": "sk-test"}
    assert not load_config(env=env, path=config_file).context_tool
    config_file.write_text("[tools]\ncontext = true\n")
    assert load_config(env=env, path=config_file).context_tool
    verdict = asyncio.run(Permissions(PermissionMode.ASK).check("context", {"action": "hide"}, str(tmp_path)))
    assert not verdict.allowed and verdict.decision == "deny"


async def test_the_model_hides_its_own_output_through_the_loop(
    server: FakeModelServer, tmp_path: Path
) -> None:
    h = Harness(server, tmp_path)
    h.loop.tools.append(ContextTool(h.session))
    (h.workdir / "big.txt").write_text("big line\n" * 900)
    server.push(
        anthropic_stream(tool_use("c1", "read", {"path": "big.txt"})),
        anthropic_stream(text("read it")),
    )
    await h.run("read big.txt")
    result_id = next(
        e["id"] for e in h.entries() if e["type"] == "message" and e["message"]["role"] == "toolResult"
    )
    server.push(
        anthropic_stream(tool_use("c2", "context", {"action": "hide", "ids": [result_id]})),
        anthropic_stream(text("hidden")),
    )
    await h.run("you no longer need that file")
    last = server.requests[-1].body
    sent = str(last["messages"])
    assert "big line\\nbig line" not in sent and "hidden by the model" in sent
    assert "Hid 1 tool result" in sent
    assert any(t["name"] == "context" for t in last["tools"])
    await h.close()
