"""The real program in tmux against the fake model server: send, stream, branch, hide, compact.

Each step waits on what the screen or the session file shows (no fixed sleeps).
At the end the panel on screen must list exactly the projected messages, and the
request the server then receives must be exactly the projection's request body.
"""

from __future__ import annotations

import json
import os
import re
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from agent_tui.projection.context import project
from agent_tui.projection.request import prepare
from agent_tui.projection.wire.openai_completions import openai_request
from agent_tui.store.session import BRANCH_MARKER, Session
from agent_tui.tui.screens.dialog import ANSWER_GRACE, TYPING_GAP
from tests.support.fake_model_server import FakeModelServer, call, openai_stream
from tests.support.tmux import Tmux

pytestmark = [pytest.mark.timeout(120), pytest.mark.slow]

MODEL = "gpt-4o"
WIDTH, HEIGHT = 160, 50
_ROW = re.compile(r"^\s*(\d+|-)\s+(\S+)\s+([0-9a-f]{8})\s+(\S+)")


_SELECTED = re.compile(r"If you act on ([0-9a-f]{8})")  # the panel's edit preview names the selection


def select_in_tree(tmux: Tmux, path: Path, entry_id: str) -> None:
    """Focus the tree and move its cursor, one key at a time, until ``entry_id`` is selected.

    The preview (which names the selection once the cursor rests) is the only sign of where the
    cursor is, and a refresh of the views can move the cursor back to the leaf after a key: so each
    key is chosen from where the preview says the cursor is now (Up above the target on the active
    path, Down below it), and a key whose move the preview never shows is pressed again."""
    with Session.open(path, write=False) as session:
        order = [e.id for e in session.index.path_to(session.index.leaf_id or "")]
    tmux.keys("F1")
    for _ in range(60):
        current = _SELECTED.findall(tmux.screen())
        if current and current[-1] == entry_id:
            return
        here = order.index(current[-1]) if current and current[-1] in order else len(order)
        tmux.keys("Up" if here > order.index(entry_id) else "Down")
        before = current[-1] if current else None
        try:
            tmux.wait(
                lambda s, before=before: (m := _SELECTED.findall(s)) != [] and m[-1] != before,  # type: ignore[misc]
                "the cursor to move",
                timeout=5,
            )
        except AssertionError:
            continue  # the key's move was undone by a refresh (or is slow to show): look again
    raise AssertionError(f"could not select {entry_id}; the screen:\n{tmux.screen()}")


def branch_at(tmux: Tmux, path: Path, entry_id: str, attempts: int = 3) -> None:
    """Select ``entry_id`` in the tree and press Enter until the branch marker under it is in the file.

    The preview names the selection a moment after the cursor rests; on a loaded machine the views'
    refresh at the end of a turn can still put the cursor back on the leaf after that, and Enter
    there only says "Already there". So: select again and press Enter again (a second Enter on the
    entry writes no second marker)."""

    def marked() -> bool:
        return any(
            e.get("customType") == BRANCH_MARKER and e.get("parentId") == entry_id for e in entries(path)
        )

    # The spinner stops before the turn's last refresh of the views has run: that refresh puts the
    # cursor back on the leaf, and the preview follows it only once the cursor rests. Until the
    # preview names the leaf, what it names is not where the cursor is (Enter there branched
    # elsewhere, or said "Already there", on every try of a slow run).
    leaf = entries(path)[-1]["id"]
    tmux.wait(lambda s: _SELECTED.findall(s)[-1:] == [leaf], f"the views caught up: the preview of {leaf}")
    for _ in range(attempts):
        select_in_tree(tmux, path, entry_id)
        tmux.keys("Enter")
        try:
            screen = tmux.wait(
                lambda s: marked() or "Summarize branch?" in s, "the move or pi's question", timeout=30
            )
            if not marked() and "Summarize branch?" in screen:
                time.sleep(max(ANSWER_GRACE, TYPING_GAP) + 0.3)  # the question's guard
                tmux.keys("Enter")  # No summary (pi's default)
            wait_until(marked, "the branch marker", timeout=30)
            return
        except AssertionError:
            continue
    raise AssertionError(
        f"no branch marker under {entry_id} after {attempts} tries; the screen:\n{tmux.screen()}"
    )


def wait_until(condition: Callable[[], bool], what: str, timeout: float = 60) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if condition():
            return
        time.sleep(0.05)
    raise AssertionError(f"timed out waiting for {what}")


def entries(path: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in path.read_text().splitlines()[1:] if line.strip()]


def panel_rows(screen: str, messages_only: bool = False) -> list[tuple[str, str, str]]:
    """(role, entry id, status) of every panel row on the screen (only numbered message rows if asked)."""
    rows = []
    for line in screen.splitlines():
        if "▏" not in line:
            continue
        match = _ROW.match(line.rsplit("▏", 1)[-1])
        if match and (match.group(1).isdigit() or not messages_only):
            rows.append((match.group(2), match.group(3), match.group(4)))
    return rows


def app_command(tmp_path: Path, server: FakeModelServer) -> tuple[str, Path, Path]:
    """The shell command that runs the app on the fake server; its work folder and sessions folder."""
    work = tmp_path / "project"
    work.mkdir()
    sessions = tmp_path / "sessions"
    config = tmp_path / "config.toml"
    config.write_text("[retry]\nbase_delay = 0.01\n\n[compaction]\nkeep_recent_tokens = 10\n")
    env = {
        "AGENT_TUI_HOME": str(tmp_path / "home"),
        "AGENT_TUI_CONFIG": str(config),
        "OPENAI_API_KEY": "test-key",
        "AGENT_TUI_FSYNC": "never",
        # a stale exported size (CI had one) must not override the real terminal's
        "COLUMNS": "80",
        "LINES": "24",
    }
    exports = " ".join(f"{k}={v}" for k, v in env.items())
    unset = " ".join(
        f"-u {k}" for k in os.environ if k.startswith(("ANTHROPIC_", "OPENAI_", "AGENT_TUI_", "TEXTUAL"))
    )
    command = (
        f"env {unset} {exports} {sys.executable} -m agent_tui --provider openai --base-url {server.openai_base_url}"
        f" --model {MODEL} --session-dir {sessions}; sleep 30"
    )
    return command, work, sessions


def test_at_80x24_a_message_is_sent_and_the_reply_read_on_screen(
    tmp_path: Path, server: FakeModelServer
) -> None:
    """The size pi and Claude Code are used at every day: the chat and composer fill it."""
    command, work, _sessions = app_command(tmp_path, server)
    server.push(openai_stream("The answer is forty-two, streamed to a small terminal."))
    tmux = Tmux(f"agent-tui-e2e80-{os.getpid()}", 80, 24)
    tmux.start(command, work)
    try:
        tmux.wait(lambda s: "new session" in s and "Send" in s, "the app, ready to type")
        tmux.type("what is the answer?")
        tmux.wait_text("what is the answer?")  # the composer shows what is typed
        tmux.keys("Enter")
        screen = tmux.wait_text("streamed to a small terminal.")
        assert "The answer is forty-two," in screen
        lines = screen.splitlines()
        assert max(len(line) for line in lines) <= 80
        reply = next(line for line in lines if "forty-two" in line)
        assert reply.strip().startswith("The answer is forty-two"), "the reply has the width, not a stripe"
        assert server.requests[0].body["messages"][-1] == {"role": "user", "content": "what is the answer?"}
        tmux.keys("F1")  # the tree opens over the chat...
        tmux.wait(lambda s: "❯ what is the answer?" in s, "the tree drawer")
        tmux.keys("Escape")  # ...and Esc closes it, back to the composer
        tmux.wait(lambda s: "❯ what is the answer?" not in s, "the drawer closed")
        tmux.type("typed after")
        tmux.wait_text("typed after")
    finally:
        tmux.stop()


def test_send_stream_branch_hide_compact_then_the_request_equals_the_panel(
    tmp_path: Path, server: FakeModelServer
) -> None:
    command, work, sessions = app_command(tmp_path, server)
    # long enough that step 5's summary is shorter than it (a summary that grows is not applied)
    reply = "Hello! I am the fake model, streaming word by word." + " More." * 60
    server.push(openai_stream(reply).slow(100))
    server.push(openai_stream(None, tool_calls=[call("b1", "bash", {"command": "echo e2e-ok"})]))
    server.push(openai_stream("Second answer."))
    server.push(openai_stream("Third answer, on a new branch."))
    tmux = Tmux(f"agent-tui-e2e-{os.getpid()}")
    tmux.start(command, work)
    try:
        tmux.wait(lambda s: "new session" in s and "Send" in s, "the app, ready to type")
        # 1. type and send; the reply streams into the chat
        tmux.type("first question")
        tmux.keys("Enter")
        tmux.wait_text("I am the fake model")
        wait_until(lambda: bool(list(sessions.glob("*.jsonl"))), "the session file")
        path = next(sessions.glob("*.jsonl"))
        wait_until(
            lambda: any(e.get("message", {}).get("role") == "assistant" for e in entries(path)), "reply 1"
        )
        tmux.wait_text("word.")
        tmux.wait(lambda s: "streaming…" not in s, "the turn to end")
        first_reply = next(e for e in entries(path) if e.get("message", {}).get("role") == "assistant")
        assert server.requests[0].body["messages"][-1] == {"role": "user", "content": "first question"}

        # 2. a second turn: the model runs a command, the app asks first (permissions "ask")
        tmux.type("second question")
        tmux.keys("Enter")
        tmux.wait(lambda s: "Allow bash?" in s and "echo e2e-ok" in s, "the permission dialog")
        # no key answers in the question's first half second, nor while keys come less than a
        # second apart (typing): "1" (Yes, once: the first of the numbered choices) after a pause
        time.sleep(1.2)
        for _ in range(20):  # an allow is taken once the question has been on screen half a second
            tmux.keys("1")
            try:
                tmux.wait(lambda s: "Allow bash?" not in s, "the question answered", timeout=2)
                break
            except AssertionError:
                continue
        tmux.wait_text("Second answer.")
        result = next(e for e in entries(path) if e.get("message", {}).get("role") == "toolResult")
        assert "e2e-ok" in json.dumps(result["message"]["content"])
        permission = next(e for e in entries(path) if e.get("customType") == "agent-tui.permission")
        assert permission["data"]["decision"] == "allow-once"
        wait_until(
            lambda: sum(e.get("message", {}).get("role") == "assistant" for e in entries(path)) == 3,
            "reply 2 (after its tool call)",
        )
        tmux.wait(lambda s: "streaming…" not in s, "the turn to end")

        # 3. select the first reply in the tree and continue from it: a branch
        branch_at(tmux, path, first_reply["id"])
        assert entries(path)[-1].get("customType") == BRANCH_MARKER
        assert entries(path)[-1]["parentId"] == first_reply["id"]
        tmux.wait_text("⑂1")  # the tree marks the fork at the first reply
        tmux.keys("F2")
        tmux.type("third question")
        tmux.keys("Enter")
        tmux.wait_text("Third answer, on a new branch.")
        wait_until(
            lambda: sum(e.get("message", {}).get("role") == "assistant" for e in entries(path)) == 4,
            "reply 3",
        )
        tmux.wait(lambda s: "streaming…" not in s, "the turn to end")
        with Session.open(path, write=False) as session:
            third_user = next(e for e in reversed(session.index.entries) if e.role == "user")
            ancestors = [e.id for e in session.index.path_to(third_user.id)]
            assert first_reply["id"] in ancestors
            assert len(session.index.children[first_reply["id"]]) == 2, "two branches leave the first reply"
        assert "second question" not in json.dumps(server.requests[-1].body["messages"])

        # 4. hide the first question from the model
        first_user = next(e for e in entries(path) if e.get("message", {}).get("role") == "user")
        select_in_tree(tmux, path, first_user["id"])
        tmux.keys("h")
        wait_until(lambda: entries(path)[-1].get("type") == "context_edit", "the hide")
        assert entries(path)[-1]["targetId"] == first_user["id"] and entries(path)[-1]["replacement"] is None
        screen = tmux.wait(
            lambda s: (
                (r := [x for x in panel_rows(s) if x[1] == first_user["id"]]) != [] and r[0][2] == "hidden"
            ),
            "the panel to show the hidden entry",
        )

        # 5. compact with a focus: the model writes the summary, a compaction entry is appended
        summary = "## Goal\nAnswer the questions.\n\n## Next Steps\n1. Keep answering."
        server.push(openai_stream(summary), openai_stream(summary))  # a split turn makes two calls
        requests_before = len(server.requests)
        tmux.keys("C-g")
        tmux.wait_text("Compact the context")
        tmux.type("keep the answers")
        tmux.keys("Enter")
        tmux.wait(lambda _: any(e.get("type") == "compaction" for e in entries(path)), "the compaction entry")
        tmux.wait(
            lambda s: "streaming…" not in s and any(r[2] == "summary" for r in panel_rows(s)), "the summary"
        )
        compaction = next(e for e in entries(path) if e.get("type") == "compaction")
        assert compaction["summary"].startswith("## Goal")
        calls = server.requests[requests_before:]
        assert calls and "keep the answers" in json.dumps(calls[0].body["messages"])
        with server._lock:  # drop the second summary if the cut did not split a turn
            server._queue.clear()

        # 6. the panel numbers exactly the messages of the request (the system messages are one
        # system prompt row above them)...
        screen = tmux.screen()
        with Session.open(path, write=False) as session:
            projection = project(session.index)
            expected = [(m.role, m.source_id) for m in prepare(projection.messages).messages]
            summarized = list(projection.summarized_ids)
        shown = [(role, eid) for role, eid, _ in panel_rows(screen, messages_only=True)]
        assert shown == expected
        assert first_user["id"] in summarized, "the hidden question now lies before the compaction's cut"
        assert any(status == "summarized" for _, _, status in panel_rows(screen))
        assert first_user["id"] not in [eid for _, eid in expected]

        # ...and the next request is exactly that projection (plus the new message)
        server.push(openai_stream("Fourth answer."))
        tmux.keys("F2")
        tmux.type("fourth question")
        tmux.keys("Enter")
        tmux.wait_text("Fourth answer.")
        wait_until(
            lambda: server.requests[-1].body["messages"][-1].get("content") == "fourth question", "request 4"
        )
        with Session.open(path, write=False) as session:
            user4 = next(e for e in reversed(session.index.entries) if e.role == "user")
            body = openai_request(prepare(project(session.index, user4.id).messages), MODEL)
        sent = server.requests[-1].body
        assert sent == body
        assert "first question" not in json.dumps(sent["messages"])
        assert "## Goal" in json.dumps(sent["messages"]), "the compaction summary is in the request"
    finally:
        tmux.stop()
