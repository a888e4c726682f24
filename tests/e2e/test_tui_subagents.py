"""The app at 80x24 in tmux: a task call's subagent runs, the tree opens its transcript (its own
rows and its own "what the model sees" panel), and ``o`` again in it goes back to the parent."""

from __future__ import annotations

import json
import os
import time
from pathlib import Path

import pytest

from agent_tui.agent.agent_types import GENERAL_PROMPT
from tests.e2e.test_tui_e2e import app_command
from tests.support.fake_model_server import FakeModelServer, RecordedRequest, Response, call, openai_stream
from tests.support.tmux import Tmux

pytestmark = [pytest.mark.timeout(180), pytest.mark.slow]


def test_at_80x24_the_tree_opens_a_subagents_transcript_and_its_panel(
    tmp_path: Path, server: FakeModelServer
) -> None:
    def responder(request: RecordedRequest) -> Response:
        body = json.dumps(request.body)
        if GENERAL_PROMPT[:40] in body:
            return openai_stream("SUBAGENT-REPLY: it is in notes.txt")
        if '"role": "tool"' in body:
            return openai_stream("The parent read the subagent's answer.")
        args = {"description": "find the notes", "prompt": "Look for SUB-MARK in this folder"}
        return openai_stream(tool_calls=[call("call_task1", "task", args)])

    server.responder = responder
    command, work, _sessions = app_command(tmp_path, server)
    tmux = Tmux(f"agent-tui-subagents-{os.getpid()}", 80, 24)
    tmux.start(command, work)
    try:
        tmux.wait(lambda s: "new session" in s and "Send" in s, "the app, ready to type")
        tmux.type("ask a subagent")
        tmux.keys("Enter")
        tmux.wait(lambda s: "The parent read the subagent's answer." in s and "last ↑" in s, "the turn's end")
        assert len(server.requests) == 3
        tmux.keys("F1")  # the tree, a drawer at 80 columns; its cursor on the leaf
        tmux.wait(lambda s: "Continue here" in s, "the tree and its keys")
        time.sleep(0.5)  # a person's pace: the drawer has the focus
        tmux.keys("Up")  # the task call's result
        time.sleep(0.5)
        tmux.keys("o")
        screen = tmux.wait_text("Opened the subagent", timeout=20)
        tmux.keys("Escape")
        screen = tmux.wait(lambda s: "SUB-MARK" in s and "SUBAGENT-REPLY" in s, "the subagent's rows")
        assert "The parent read" not in screen  # the parent's own rows are not shown
        time.sleep(0.5)
        tmux.keys("F3")  # its own panel: what the subagent's model saw
        screen = tmux.wait(
            lambda s: "What the model sees" in s and "You are a subagen" in s, "its panel, its system prompt"
        )
        assert "2 messages sent" in screen  # the task prompt and its reply: nothing of the parent's
        tmux.keys("Escape")
        time.sleep(0.5)
        tmux.keys("F1")
        tmux.wait(lambda s: "Continue here" in s, "the tree and its keys")
        time.sleep(0.5)
        tmux.keys("o")  # nothing linked is selected: back to the parent
        tmux.wait_text("Opened the parent session", timeout=20)
        tmux.keys("Escape")
        tmux.wait_text("The parent read the subagent")  # the parent's rows again
    finally:
        tmux.stop()
