"""The composer in the app, with the real agent loop on the fake model server: steering and follow-up
queue, ``!cmd``, history across restarts, ``@file`` attachments, completion, paste markers."""

from __future__ import annotations

import asyncio
import json
import os
import stat
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from textual import events
from textual.pilot import Pilot
from textual.widgets import Static

from agent_tui.agent.build import make_provider
from agent_tui.agent.loop import AgentLoop
from agent_tui.agent.tools.base import JSONObject, Tool, ToolContext, ToolResult
from agent_tui.agent.tools.builtin import default_tools
from agent_tui.store.session import Session
from agent_tui.tui.agent_bridge import ModelChoice
from agent_tui.tui.app import AgentTuiApp
from agent_tui.tui.external_editor import EditorError, edit_text
from agent_tui.tui.widgets.completion_menu import CompletionMenu
from agent_tui.tui.widgets.queue_view import QueueView
from tests.support.agent_support import make_config as agent_config
from tests.support.fake_model_server import FakeModelServer, anthropic_stream, text, tool_use
from tests.support.pilot import wait_for
from tests.support.tui_fixtures import SIZE, make_app

pytestmark = [pytest.mark.timeout(60), pytest.mark.slow]  # a Textual app per test


class GateTool(Tool):
    """A slow tool: it runs until the test opens its gate."""

    name = "wait"
    description = "Wait for the gate"
    parameters: JSONObject = {"type": "object", "properties": {}}  # noqa: RUF012

    def __init__(self) -> None:
        self.gate = asyncio.Event()
        self.started = asyncio.Event()

    async def execute(self, args: JSONObject, ctx: ToolContext) -> ToolResult:
        self.started.set()
        stop = asyncio.ensure_future(ctx.signal.wait())
        gate = asyncio.ensure_future(self.gate.wait())
        await asyncio.wait({stop, gate}, return_when=asyncio.FIRST_COMPLETED)
        stop.cancel()
        gate.cancel()
        return ToolResult.text("waited")


def real_agent(
    server: FakeModelServer, tmp_path: Path, tool: GateTool
) -> Callable[[Session, ModelChoice], Any]:
    config = agent_config(server)

    def factory(session: Session, choice: ModelChoice) -> AgentLoop:
        loop = AgentLoop(
            session,
            make_provider(config),
            [*default_tools(), tool],
            config=config,
            global_context_dir=tmp_path / "no-global-context",
        )
        loop.tool_grace = 1.0
        return loop

    return factory


async def type_text(pilot: Pilot[None], value: str) -> None:
    await pilot.press(
        *[{" ": "space", "@": "at", "!": "exclamation_mark", "/": "slash"}.get(c, c) for c in value]
    )


def messages(app: AgentTuiApp) -> list[dict[str, Any]]:
    assert app.session is not None
    lines = app.session.path.read_text().splitlines()[1:]
    return [e["message"] for e in map(json.loads, lines) if e["type"] == "message"]


def queued(app: AgentTuiApp) -> list[str]:
    return [m.text for m in app.query_one(QueueView).messages]


# -- steering and follow-ups ------------------------------------------------------------------


async def test_steering_typed_mid_tool_reaches_the_next_request_after_the_tool_result(
    tmp_path: Path, server: FakeModelServer
) -> None:
    tool = GateTool()
    server.push(
        anthropic_stream(tool_use("toolu_w", "wait", {})),
        anthropic_stream(text("Steered answer.")),
        anthropic_stream(text("Follow-up answer.")),
    )
    app = make_app(tmp_path, None, agent_factory=real_agent(server, tmp_path, tool))
    async with app.run_test(size=SIZE) as pilot:
        await type_text(pilot, "start")
        await pilot.press("enter")
        await wait_for(pilot, tool.started.is_set, "the slow tool")
        await type_text(pilot, "use b.py")
        await pilot.press("enter")  # steering
        await type_text(pilot, "then docs")
        await pilot.press("alt+enter")  # follow-up
        await wait_for(pilot, lambda: queued(app) == ["use b.py", "then docs"], "both queued")
        assert app.composer.text == ""
        assert len(server.requests) == 1
        tool.gate.set()
        await wait_for(pilot, lambda: not app.busy and len(server.requests) == 3, "three calls")
        second, third = server.requests[1].body["messages"], server.requests[2].body["messages"]
        # the steering message follows the tool result in the second call, not the first
        assert [b["type"] for b in second[-1]["content"]] == ["tool_result", "text"]
        assert second[-1]["content"][1]["text"] == "use b.py"
        assert "then docs" not in json.dumps(second)
        assert third[-1]["content"][-1]["text"] == "then docs"
        roles = [m["role"] for m in messages(app)]
        assert roles[-6:] == ["assistant", "toolResult", "user", "assistant", "user", "assistant"]
        assert queued(app) == [] and not app.query_one(QueueView).display


async def test_a_follow_up_typed_while_the_agent_works_starts_a_second_turn_after_the_first(
    tmp_path: Path, server: FakeModelServer
) -> None:
    """Alt+Enter mid-turn waits for the turn's final reply, then is sent as a new turn."""
    tool = GateTool()
    server.push(
        anthropic_stream(tool_use("toolu_w", "wait", {})),
        anthropic_stream(text("First turn done.")),
        anthropic_stream(text("Follow-up answer.")),
    )
    app = make_app(tmp_path, None, agent_factory=real_agent(server, tmp_path, tool))
    async with app.run_test(size=SIZE) as pilot:
        await type_text(pilot, "start")
        await pilot.press("enter")
        await wait_for(pilot, tool.started.is_set, "the slow tool")
        await type_text(pilot, "and then docs")
        await pilot.press("alt+enter")
        await wait_for(pilot, lambda: queued(app) == ["and then docs"], "the follow-up queued")
        assert len(server.requests) == 1
        tool.gate.set()
        await wait_for(pilot, lambda: not app.busy and len(server.requests) == 3, "three calls")
        second, third = server.requests[1].body["messages"], server.requests[2].body["messages"]
        # the first turn finishes without it: the tool result goes back alone
        assert "and then docs" not in json.dumps(second)
        assert [b["type"] for b in second[-1]["content"]] == ["tool_result"]
        # then a second turn: the follow-up is the last user message, after the first turn's reply
        assert third[-1]["role"] == "user"
        assert [b.get("text") for b in third[-1]["content"]] == ["and then docs"]
        assert third[-2]["role"] == "assistant"
        assert third[-2]["content"][-1]["text"] == "First turn done."
        roles = [m["role"] for m in messages(app) if m["role"] != "system"]
        assert roles == ["user", "assistant", "toolResult", "assistant", "user", "assistant"]
        assert queued(app) == []


async def test_escape_returns_queued_messages_to_the_composer_unsent(
    tmp_path: Path, server: FakeModelServer
) -> None:
    tool = GateTool()
    server.push(anthropic_stream(tool_use("toolu_w", "wait", {})))
    app = make_app(tmp_path, None, agent_factory=real_agent(server, tmp_path, tool))
    async with app.run_test(size=SIZE) as pilot:
        await type_text(pilot, "start")
        await pilot.press("enter")
        await wait_for(pilot, tool.started.is_set, "the slow tool")
        await type_text(pilot, "steer")
        await pilot.press("enter")
        await type_text(pilot, "later")
        await pilot.press("alt+enter")
        await type_text(pilot, "draft")
        await wait_for(pilot, lambda: len(queued(app)) == 2, "queued")
        await pilot.press("escape")
        await wait_for(pilot, lambda: not app.busy, "the abort")
        assert app.composer.text == "steer\n\nlater\n\ndraft"
        assert len(server.requests) == 1
        sent = json.dumps(messages(app))
        assert "steer" not in sent and "later" not in sent
        assert queued(app) == []


async def test_alt_up_takes_the_queue_back_and_delete_removes_one(
    tmp_path: Path, server: FakeModelServer
) -> None:
    tool = GateTool()
    server.push(anthropic_stream(tool_use("toolu_w", "wait", {})), anthropic_stream(text("done")))
    app = make_app(tmp_path, None, agent_factory=real_agent(server, tmp_path, tool))
    async with app.run_test(size=SIZE) as pilot:
        await type_text(pilot, "start")
        await pilot.press("enter")
        await wait_for(pilot, tool.started.is_set, "the slow tool")
        for word in ("one", "two", "three"):
            await type_text(pilot, word)
            await pilot.press("enter")
        await wait_for(pilot, lambda: len(queued(app)) == 3, "queued")
        view = app.query_one(QueueView)
        app.set_focus(view)
        view.highlighted = 1
        await pilot.press("delete")
        await wait_for(pilot, lambda: queued(app) == ["one", "three"], "one removed")
        app.set_focus(app.composer)
        await pilot.press("alt+up")
        await wait_for(pilot, lambda: app.composer.text == "one\n\nthree", "taken back")
        tool.gate.set()
        await wait_for(pilot, lambda: not app.busy, "the end of the turn")
        assert len(server.requests) == 2
        assert "one" not in json.dumps(server.requests[1].body["messages"][-1])


# -- !cmd -----------------------------------------------------------------------------------


async def test_bang_command_appends_a_bash_execution_and_calls_no_model(
    tmp_path: Path, server: FakeModelServer
) -> None:
    app = make_app(tmp_path, None, agent_factory=real_agent(server, tmp_path, GateTool()))
    async with app.run_test(size=SIZE) as pilot:
        app.composer.set_text("!echo from-the-shell")
        await pilot.press("enter")
        await wait_for(
            pilot,
            lambda: app.session is not None and any(m["role"] == "bashExecution" for m in messages(app)),
            "the bashExecution entry",
        )
        app.composer.set_text("!!echo private")
        await pilot.press("enter")
        await wait_for(
            pilot, lambda: len([m for m in messages(app) if m["role"] == "bashExecution"]) == 2, "two"
        )
        first, second = [m for m in messages(app) if m["role"] == "bashExecution"]
        assert first["command"] == "echo from-the-shell" and first["output"] == "from-the-shell\n"
        assert first["exitCode"] == 0 and first["cancelled"] is False and "excludeFromContext" not in first
        assert second["excludeFromContext"] is True
        assert server.requests == []
        # the model sees the first (pi's convertToLlm) in the next request, never the second
        server.push(anthropic_stream(text("seen")))
        app.composer.set_text("what did it print?")
        await pilot.press("enter")
        await wait_for(pilot, lambda: not app.busy and len(server.requests) == 1, "the request")
        body = json.dumps(server.requests[0].body["messages"])
        assert "Ran `echo from-the-shell`" in body and "private" not in body


@pytest.mark.parametrize("bang", ["!", "!!"])
async def test_escape_cancels_a_command_that_never_ends(
    tmp_path: Path, server: FakeModelServer, bang: str
) -> None:
    app = make_app(tmp_path, None, agent_factory=real_agent(server, tmp_path, GateTool()))
    async with app.run_test(size=SIZE) as pilot:
        app.composer.set_text(bang + "echo begun; sleep 600")
        await pilot.press("enter")
        await wait_for(pilot, lambda: app.composer_actions.bash_abort is not None, "the command")
        await pilot.pause(0.3)
        await pilot.press("escape")
        await wait_for(pilot, lambda: app.composer_actions.bash_abort is None, "the cancel")
        (entry,) = [m for m in messages(app) if m["role"] == "bashExecution"]
        assert entry["cancelled"] is True and "exitCode" not in entry
        assert entry.get("excludeFromContext", False) is (bang == "!!")  # a cancelled !!cmd stays unsent
        assert server.requests == []
        reopened = Session.open(app.session.path, write=False)  # type: ignore[union-attr]
        assert len(reopened.index) == len(app.index)
        reopened.close()


# -- history ----------------------------------------------------------------------------------


async def test_history_is_recalled_after_a_restart_private_and_redacted(tmp_path: Path) -> None:
    history = tmp_path / "data" / "history.jsonl"
    secret = "sk-ant-api03-" + "B" * 40

    def no_model(session: Session, choice: ModelChoice) -> Any:
        from agent_tui.tui.agent_bridge import AgentUnavailable

        raise AgentUnavailable("no model in this test")

    app = make_app(tmp_path, None, agent_factory=no_model, history_file=history)
    async with app.run_test(size=SIZE) as pilot:
        app.composer.set_text("!echo first")
        await pilot.press("enter")
        await wait_for(pilot, lambda: app.composer_actions.bash_abort is None and history.exists(), "history")
        app.composer.set_text(f"!echo line one\nline two {secret}")
        await pilot.press("enter")
        await wait_for(pilot, lambda: len(history.read_text().splitlines()) == 2, "two prompts")
    assert stat.S_IMODE(history.stat().st_mode) == 0o600
    assert secret not in history.read_text()

    again = make_app(tmp_path, None, agent_factory=no_model, history_file=history)
    async with again.run_test(size=SIZE) as pilot:
        await pilot.press("up")
        assert again.composer.text.startswith("!echo line one\nline two [REDACTED")  # whole, multi-line
        await pilot.press("up", "up")  # the first Up moves to the recalled prompt's first line
        assert again.composer.text == "!echo first"
        await pilot.press("down", "down")
        assert again.composer.text == ""
        await pilot.press("ctrl+r")
        await type_text(pilot, "first")
        await pilot.press("enter")
        await wait_for(pilot, lambda: again.composer.text == "!echo first", "the search's pick")


def test_history_file_is_capped(tmp_path: Path) -> None:
    from agent_tui.tui.history import PromptHistory

    path = tmp_path / "h.jsonl"
    h = PromptHistory(path, max_entries=20)
    for i in range(150):
        h.add(f"prompt {i}")
    assert len(path.read_text().splitlines()) <= 20 + 100
    again = PromptHistory(path, max_entries=20)
    assert again.entries == [f"prompt {i}" for i in range(130, 150)]
    assert again.recall_list(["prompt 140", "mine"])[-2:] == ["prompt 140", "mine"]


# -- @file and completion ------------------------------------------------------------------------


async def test_at_file_content_is_attached_to_the_request(tmp_path: Path, server: FakeModelServer) -> None:
    server.push(anthropic_stream(text("Read it.")))
    app = make_app(tmp_path, None, agent_factory=real_agent(server, tmp_path, GateTool()))
    project = tmp_path / "project"
    (project / "src").mkdir(parents=True, exist_ok=True)
    (project / "src" / "main.py").write_text("def main():\n    return 42\n")
    (tmp_path / "outside.txt").write_text("not yours")
    async with app.run_test(size=SIZE) as pilot:
        await type_text(pilot, "explain @src/mai")
        menu = app.query_one(CompletionMenu)
        await wait_for(pilot, lambda: menu.shown and menu.candidates[0].label == "src/main.py", "the picker")
        await pilot.press("tab")
        assert app.composer.text == "explain @src/main.py "
        await type_text(pilot, "and @../outside.txt")
        await pilot.press("escape")  # closes a menu if one opened, else nothing is running
        await pilot.press("enter")
        await wait_for(pilot, lambda: not app.busy and len(server.requests) == 1, "the request")
        content = server.requests[0].body["messages"][-1]["content"]
        assert content[0]["text"] == "explain @src/main.py and @../outside.txt"
        assert (
            content[1]["text"]
            == f'<file name="{project / "src" / "main.py"}">\ndef main():\n    return 42\n\n</file>'
        )
        assert "not yours" not in json.dumps(server.requests[0].body)
        user = [m for m in messages(app) if m["role"] == "user"][-1]
        assert len(user["content"]) == 2


async def test_slash_lists_commands_with_descriptions_and_tab_completes_paths(tmp_path: Path) -> None:
    app = make_app(tmp_path, None)
    (tmp_path / "project" / "docs").mkdir(parents=True, exist_ok=True)
    (tmp_path / "project" / "docs" / "guide.md").write_text("x")
    async with app.run_test(size=SIZE) as pilot:
        await type_text(pilot, "/com")
        menu = app.query_one(CompletionMenu)
        assert menu.shown and [c.label for c in menu.candidates][:1] == ["/compact [FOCUS]"]
        assert "summary" in menu.candidates[0].detail
        await pilot.press("tab")
        assert app.composer.text == "/compact "
        assert not menu.shown
        app.composer.set_text("look at doc")
        await pilot.press("tab")
        assert app.composer.text == "look at docs/"
        await pilot.press("tab")
        assert app.composer.text == "look at docs/guide.md"
        assert app.focused is app.composer  # Tab never moved the focus


async def test_a_huge_paste_shows_a_marker_and_is_sent_whole(tmp_path: Path, server: FakeModelServer) -> None:
    server.push(anthropic_stream(text("Big.")))
    app = make_app(tmp_path, None, agent_factory=real_agent(server, tmp_path, GateTool()))
    big = "".join(f"log line {i}\n" for i in range(300_000))  # ~5 MB
    async with app.run_test(size=SIZE) as pilot:
        await type_text(pilot, "why")
        app.composer.post_message(events.Paste(big))
        await wait_for(pilot, lambda: "[paste #" in app.composer.text, "the marker")
        assert app.composer.text == "why[paste #1 +300001 lines]"
        await pilot.press("enter")
        await wait_for(pilot, lambda: not app.busy and len(server.requests) == 1, "the request")
        assert server.requests[0].body["messages"][-1]["content"][0]["text"] == "why" + big


async def test_a_dropped_image_path_is_attached_as_an_image_block(
    tmp_path: Path, server: FakeModelServer
) -> None:
    from tests.support.images import png

    server.push(anthropic_stream(text("A red square.")))
    shot = png(tmp_path / "My Shot.png")
    app = make_app(tmp_path, None, agent_factory=real_agent(server, tmp_path, GateTool()))
    async with app.run_test(size=SIZE) as pilot:
        app.composer.post_message(events.Paste(str(shot).replace(" ", "\\ ")))
        await wait_for(pilot, lambda: "[image #1 My Shot.png]" in app.composer.text, "the marker")
        await pilot.press("enter")
        await wait_for(pilot, lambda: not app.busy and len(server.requests) == 1, "the request")
        content = server.requests[0].body["messages"][-1]["content"]
        assert [b["type"] for b in content] == ["text", "text", "image"]
        stored = next(m for m in messages(app) if m["role"] == "user")["content"][2]
        assert set(stored) == {"type", "data", "mimeType"}  # pi's image block, nothing added
        # the chat's line for it names the image, its format, pixel size and tokens
        lines = [str(w.content) for w in app.screen.query(".attachments").results(Static)]
        assert lines == ["[image] My Shot.png · PNG 40x30 · ~2 tokens"]


# -- external editor ---------------------------------------------------------------------------


def test_external_editor_round_trip(tmp_path: Path) -> None:
    script = tmp_path / "fake-editor"
    script.write_text(f"#!{sys.executable}\nimport sys\np = sys.argv[1]\nopen(p, 'a').write(' edited\\n')\n")
    script.chmod(0o755)
    assert edit_text("draft", [str(script)]) == "draft edited"
    failing = tmp_path / "failing-editor"
    failing.write_text("#!/bin/sh\nexit 3\n")
    failing.chmod(0o755)
    with pytest.raises(EditorError, match="code 3"):
        edit_text("draft", [str(failing)])
    assert not [p for p in os.listdir(tmp_path) if p.startswith("agent-tui-prompt-")]


async def test_the_editor_key_where_the_app_cannot_suspend_says_so_and_keeps_the_text(tmp_path: Path) -> None:
    app = make_app(tmp_path, None)
    async with app.run_test(size=SIZE) as pilot:
        app.composer.set_text("keep me")
        await pilot.press("alt+e")
        await pilot.pause()
        assert app.composer.text == "keep me"
        notes = [str(n.message) for n in app._notifications]
        assert any("no suspend" in n or "editor" in n for n in notes), notes


async def test_a_bang_command_while_the_agent_works_is_recorded_when_the_turn_ends(
    tmp_path: Path, server: FakeModelServer
) -> None:
    tool = GateTool()
    server.push(anthropic_stream(tool_use("toolu_w", "wait", {})), anthropic_stream(text("done")))
    app = make_app(tmp_path, None, agent_factory=real_agent(server, tmp_path, tool))
    async with app.run_test(size=SIZE) as pilot:
        await type_text(pilot, "start")
        await pilot.press("enter")
        await wait_for(pilot, tool.started.is_set, "the slow tool")
        app.composer.set_text("!echo meanwhile")
        await pilot.press("enter")
        await wait_for(pilot, lambda: len(app.composer_actions.pending) == 1, "the command's result held")
        assert not any(m["role"] == "bashExecution" for m in messages(app))  # not between call and result
        tool.gate.set()
        await wait_for(pilot, lambda: not app.busy and not app.composer_actions.pending, "the turn's end")
        await wait_for(pilot, lambda: messages(app)[-1]["role"] == "bashExecution", "recorded last")
        await wait_for(
            pilot, lambda: not any(w.group == "turn" and w.is_running for w in app.workers), "redrawn"
        )
        roles = [m["role"] for m in messages(app)]
        assert roles[-4:] == ["assistant", "toolResult", "assistant", "bashExecution"]
        assert "meanwhile" not in json.dumps([r.body for r in server.requests])
