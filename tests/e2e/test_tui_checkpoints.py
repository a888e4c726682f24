"""File checkpoints in the real app, in tmux: branch to the first turn's reply, accept the offer
to restore the files as it left them, and the files on disk are that turn's (issue 28)."""

from __future__ import annotations

import os
import time
from pathlib import Path

import pytest

from agent_tui.tui.screens.dialog import ANSWER_GRACE, TYPING_GAP
from tests.e2e.test_tui_e2e import app_command, branch_at, entries, select_in_tree, wait_until
from tests.support.fake_model_server import FakeModelServer, call, openai_stream
from tests.support.tmux import Tmux

pytestmark = [pytest.mark.timeout(180), pytest.mark.slow]


def _reply(path: Path, words: str) -> str:
    return str(
        next(
            e["id"]
            for e in entries(path)
            if e.get("message", {}).get("role") == "assistant"
            and e["message"]["content"][0].get("text") == words
        )
    )


def _two_turns(server: FakeModelServer) -> None:
    server.push(openai_stream(None, tool_calls=[call("w1", "write", {"path": "a.txt", "content": "v1\n"})]))
    server.push(openai_stream("Done."))
    server.push(
        openai_stream(
            None, tool_calls=[call("b1", "bash", {"command": "printf 'v2\\n' > a.txt; echo b > b.txt"})]
        )
    )
    server.push(openai_stream("Done again."))


def _run_two_turns(tmux: Tmux, work: Path, sessions: Path) -> Path:
    tmux.wait(lambda s: "new session" in s and "Send" in s, "the app, ready to type")
    tmux.type("write a.txt")
    tmux.keys("Enter")
    tmux.wait_text("Done.")
    path = next(sessions.glob("*.jsonl"))
    tmux.type("rewrite it")
    tmux.keys("Enter")
    tmux.wait_text("Done again.")
    wait_until(lambda: (work / "b.txt").exists(), "bash's files")
    wait_until(
        lambda: sum(e.get("customType") == "agent-tui.checkpoint" for e in entries(path)) == 3,
        "the turns' checkpoints",
    )
    return path


def test_branching_to_the_first_turn_offers_its_files_back(tmp_path: Path, server: FakeModelServer) -> None:
    command, work, sessions = app_command(tmp_path, server)
    command = command.replace(" --session-dir ", " --permissions auto --session-dir ")
    _two_turns(server)
    tmux = Tmux(f"agent-tui-checkpoints-{os.getpid()}")
    tmux.start(command, work)
    try:
        path = _run_two_turns(tmux, work, sessions)
        branch_at(tmux, path, _reply(path, "Done."))
        screen = tmux.wait_text("Restore the files as this node left them?")
        assert "delete b.txt" in screen and "write  a.txt" in screen
        assert (work / "a.txt").read_text() == "v2\n"  # nothing written before the answer
        time.sleep(ANSWER_GRACE + 0.3)  # the question's guard: no key answers in its first moments
        tmux.keys("Enter")  # "1  Restore 2 file(s)", highlighted
        wait_until(lambda: not (work / "b.txt").exists(), "the restore")
        assert (work / "a.txt").read_text() == "v1\n"
        tmux.wait_text("Restored 2 file(s)")
        restores = [e for e in entries(path) if e.get("customType") == "agent-tui.restore"]
        assert len(restores) == 1 and restores[0]["data"]["files"]["deleted"] == ["b.txt"]
        # the restore's row (the leaf now) previews the files it left against the checkpoint before
        select_in_tree(tmux, path, restores[0]["id"])
        tmux.wait_text("Files since the checkpoint before:")
        # the diff's line shows once the "Restored" toast over the preview's foot has gone
        screen = tmux.wait(lambda s: "+v1" in s, "a.txt's diff in the preview", timeout=20)
        assert "▸ a.txt" in screen and "[files 2]" in screen, screen
    finally:
        tmux.stop()


def test_at_80x24_branch_accept_and_see_the_files(tmp_path: Path, server: FakeModelServer) -> None:
    command, work, sessions = app_command(tmp_path, server)
    command = command.replace(" --session-dir ", " --permissions auto --session-dir ")
    _two_turns(server)
    tmux = Tmux(f"agent-tui-checkpoints80-{os.getpid()}", 80, 24)
    tmux.start(command, work)
    try:
        path = _run_two_turns(tmux, work, sessions)
        tmux.wait(lambda s: "streaming…" not in s, "the turn's end", timeout=60)
        tmux.type(f"/branch {_reply(path, 'Done.')}")
        tmux.keys("Enter")
        tmux.wait_text("Summarize branch?")
        time.sleep(max(ANSWER_GRACE, TYPING_GAP) + 0.3)
        tmux.keys("Enter")  # No summary (pi's default)
        screen = tmux.wait_text("Restore the files as this node left them?")
        assert max(len(line) for line in screen.splitlines()) <= 80
        assert "delete b.txt" in screen and "write  a.txt" in screen and "1  Restore 2 file(s)" in screen
        assert "2  Keep the files as they are" in screen
        tmux.keys("1")  # typed as the question appears: no answer
        time.sleep(TYPING_GAP + 0.3)
        assert (work / "b.txt").exists() and (work / "a.txt").read_text() == "v2\n"
        tmux.keys("1")  # now the digit answers: 1 Restore
        wait_until(lambda: not (work / "b.txt").exists(), "the restore")
        assert (work / "a.txt").read_text() == "v1\n"
        tmux.wait_text("Restored 2 file(s)")
    finally:
        tmux.stop()
