"""The compaction-review editor and the branch-summary question appear unasked (when the model's
summary arrives; right after the Enter that branched), so they are behind the question guard: a
key typed as one appears (real bytes, in tmux) answers nothing; the same key after the guard does.
(Issue 24, finding 3.)"""

from __future__ import annotations

import os
import time
from pathlib import Path

import pytest

from agent_tui.tui.screens.dialog import ANSWER_GRACE, TYPING_GAP
from tests.e2e.test_tui_e2e import app_command, entries, wait_until
from tests.support.fake_model_server import FakeModelServer, openai_stream
from tests.support.tmux import Tmux

pytestmark = [pytest.mark.timeout(180), pytest.mark.slow]

GUARD = max(ANSWER_GRACE, TYPING_GAP) + 0.3


def _two_turns(tmux: Tmux, sessions: Path) -> Path:
    tmux.wait(lambda s: "new session" in s and "Send" in s, "the app, ready to type")
    tmux.type("first question")
    tmux.keys("Enter")
    tmux.wait_text("First answer.")
    tmux.type("second question")
    tmux.keys("Enter")
    tmux.wait_text("Second answer.")
    tmux.wait(lambda s: "streaming…" not in s, "the turn's end", timeout=60)
    return next(sessions.glob("*.jsonl"))


def test_enter_as_the_branch_summary_question_appears_does_not_start_a_summary(
    tmp_path: Path, server: FakeModelServer
) -> None:
    command, work, sessions = app_command(tmp_path, server)
    config = tmp_path / "config.toml"
    config.write_text(config.read_text() + "summarize_branches = true\n")  # in [compaction]: Summarize first
    server.push(openai_stream("First answer."), openai_stream("Second answer."))
    tmux = Tmux(f"agent-tui-guard-branch-{os.getpid()}", 80, 24)
    tmux.start(command, work)
    try:
        path = _two_turns(tmux, sessions)
        first = next(
            e["id"]
            for e in entries(path)
            if e.get("message", {}).get("role") == "assistant"
            and e["message"]["content"][0].get("text") == "First answer."
        )
        requests = len(server.requests)
        tmux.type(f"/branch {first}")
        tmux.keys("Enter")
        tmux.wait_text("Summarize branch?")
        tmux.keys("Enter")  # the Enter of a double-Enter, as the question appears: no answer
        time.sleep(GUARD)
        screen = tmux.screen()
        assert "Summarize branch?" in screen, screen
        assert len(server.requests) == requests  # no summary asked of the model
        assert not any(e.get("type") == "branch_summary" for e in entries(path))
        tmux.keys("Up")  # now the keys answer: "No summary"
        tmux.keys("Enter")
        wait_until(lambda: entries(path)[-1].get("parentId") == first, "the move")
        assert len(server.requests) == requests
        assert not any(e.get("type") == "branch_summary" for e in entries(path))
    finally:
        tmux.stop()


def test_keys_typed_as_the_compaction_review_appears_neither_edit_nor_save_it(
    tmp_path: Path, server: FakeModelServer
) -> None:
    command, work, sessions = app_command(tmp_path, server)
    server.push(openai_stream("First answer."), openai_stream("Second answer."))
    tmux = Tmux(f"agent-tui-guard-review-{os.getpid()}", 80, 24)
    tmux.start(command, work)
    try:
        path = _two_turns(tmux, sessions)
        summary = "## Goal\nAnswer the questions."
        server.push(openai_stream(summary), openai_stream(summary))  # a split turn makes two calls
        tmux.keys("C-g")
        tmux.wait_text("Compact the context")
        tmux.keys("C-r")
        tmux.wait_text("Review the summary")
        tmux.type("zz")  # typed for the composer as the editor appears
        tmux.keys("C-s")  # and a save: neither edits nor saves the summary
        time.sleep(GUARD)
        screen = tmux.screen()
        assert "Review the summary" in screen, screen
        assert not any(e.get("type") == "compaction" for e in entries(path))
        tmux.keys("C-s")  # after the guard, Ctrl+S saves it, as the model wrote it
        wait_until(lambda: any(e.get("type") == "compaction" for e in entries(path)), "the compaction")
        (compaction,) = [e for e in entries(path) if e.get("type") == "compaction"]
        assert "Answer the questions." in compaction["summary"] and "zz" not in compaction["summary"]
        tmux.wait(lambda s: "Review the summary" not in s, "the editor closed")
        assert "zz" in tmux.screen()  # the letters went on into the composer
    finally:
        tmux.stop()
