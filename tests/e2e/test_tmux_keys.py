"""The keys a person presses, as the bytes a terminal sends, to the real program in tmux.

Pilot hands the app a key name; a terminal hands it bytes, and Textual's parser decides which key
they are. These send the bytes (``send-keys -H``) or tmux's own key names at 80x24 and 200x50:

- ``ESC CR`` (Alt+Enter in tmux, xterm, VTE) queues a follow-up: it was read as Enter and queued
  as steering. The follow-up waits until the agent would stop: the request after the tool's
  result does not carry it, the next one ends with it;
- ``ESC e`` (Alt+E) opens ``$VISUAL`` with the draft and the edited text comes back (it typed an
  ``e``); Ctrl+G does the same with ``keymap = "pi"``;
- F6 (tmux's ``F6`` and the bytes ``CSI 17 ~``) moves to the next model and the draft stays (the
  composer's TextArea selected the line and the next key replaced the draft).
"""

from __future__ import annotations

import ast
import json
import os
import stat
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import pytest

from agent_tui.tui.terminal_keys import LEGACY_BYTES
from tests.e2e.test_tui_e2e import app_command, wait_until
from tests.support.fake_model_server import FakeModelServer, call, openai_stream
from tests.support.tmux import Tmux

pytestmark = [pytest.mark.timeout(180), pytest.mark.slow]

SIZES = [pytest.param((80, 24), id="80x24"), pytest.param((200, 50), id="200x50")]
ALT_ENTER = ["-H", "1b", "0d"]
ALT_E = ["-H", "1b", "65"]
F6_BYTES = ["-H", "1b", "5b", "31", "37", "7e"]
EDITED = " and a line from the editor"


def started(tmp_path: Path, server: FakeModelServer, size: tuple[int, int], **changes: str) -> Tmux:
    """The app in tmux at ``size`` on the fake server, ready to type. ``changes``: ``env`` (more
    variables), ``config`` (top-level config lines), ``models`` (``--models`` instead of ``--model``)."""
    command, work, _sessions = app_command(tmp_path, server)
    config = tmp_path / "config.toml"
    if "config" in changes:
        config.write_text(changes["config"] + "\n" + config.read_text())
    if "env" in changes:
        command = command.replace(" AGENT_TUI_HOME=", f" {changes['env']} AGENT_TUI_HOME=", 1)
    if "models" in changes:
        command = command.replace("--model gpt-4o", f"--models {changes['models']}")
    (work / "notes.txt").write_text("the notes: nothing to do today\n")
    tmux = Tmux(f"agent-tui-keys-{os.getpid()}-{tmp_path.name}", *size)
    tmux.start(command, work)
    try:
        tmux.wait(lambda s: "new session" in s and "Send" in s, "the app, ready to type")
    except BaseException:
        tmux.stop()
        raise
    return tmux


def editor_script(tmp_path: Path) -> Path:
    """A ``$VISUAL`` that appends :data:`EDITED` to the file it is given."""
    script = tmp_path / "editor.sh"
    script.write_text(f"#!/bin/sh\nprintf '%s' '{EDITED}' >> \"$1\"\n")
    script.chmod(script.stat().st_mode | stat.S_IXUSR)
    return script


def composer_line(screen: str) -> str:
    """The composer's first line of text: the row under its top border (the lowest ``╭``, with
    the tree beside it on a wide screen), from its left border on."""
    rows = screen.splitlines()
    top = max(i for i, row in enumerate(rows) if "╭" in row)
    column = rows[top].index("╭")
    return rows[top + 1][column + 1 :].strip(" │▌▏")


def status_line(screen: str) -> str:
    """The line under the composer: the session, its model, the thinking level, the context."""
    rows = screen.splitlines()
    return next(row for row in reversed(rows) if "session · " in row)


def user_text(message: dict[str, Any]) -> str:
    content = message.get("content")
    return content if isinstance(content, str) else "".join(p.get("text", "") for p in content or [])


@pytest.mark.parametrize(
    ("size", "alt_enter"),
    [
        pytest.param((80, 24), ALT_ENTER, id="80x24-bytes"),
        pytest.param((200, 50), ALT_ENTER, id="200x50-bytes"),
        pytest.param((80, 24), ["M-Enter"], id="80x24-M-Enter"),
    ],
)
def test_alt_enter_queues_a_follow_up_that_waits_until_the_agent_would_stop(
    tmp_path: Path, server: FakeModelServer, size: tuple[int, int], alt_enter: list[str]
) -> None:
    server.push(
        openai_stream(
            "Let me read the notes first, slowly. " * 3,
            tool_calls=[call("r1", "read", {"path": "notes.txt"})],
        ).slow(10)
    )
    server.push(openai_stream("The notes say there is nothing to do today. " * 2).slow(10))
    server.push(openai_stream("Follow-up answered."))
    tmux = started(tmp_path, server, size)
    try:
        tmux.type("read the notes")
        tmux.keys("Enter")
        tmux.wait_text("Let me read the notes")
        tmux.type("then say goodbye")
        tmux.wait_text("then say goodbye")
        tmux.keys(*alt_enter)
        screen = tmux.wait_text("Follow-up: then say goodbye", timeout=30)
        assert "Steering: then say goodbye" not in screen
        tmux.wait(lambda s: "Follow-up answered." in s and "streaming" not in s, "the follow-up's reply", 90)
        wait_until(lambda: len(server.requests) >= 3, "three model calls")
        after_tool, follow_up = server.requests[1].body["messages"], server.requests[2].body["messages"]
        assert after_tool[-1]["role"] == "tool", json.dumps(after_tool[-1])
        assert not any("goodbye" in user_text(m) for m in after_tool if m["role"] == "user")
        assert follow_up[-1] == {"role": "user", "content": "then say goodbye"}
        assert "nothing to do today" in user_text(follow_up[-2])  # after the agent's last reply
        assert "then say goodbye" not in composer_line(tmux.screen())
    finally:
        tmux.stop()


@pytest.mark.parametrize(
    ("size", "alt_e"),
    [
        pytest.param((80, 24), ALT_E, id="80x24-bytes"),
        pytest.param((200, 50), ALT_E, id="200x50-bytes"),
        pytest.param((80, 24), ["M-e"], id="80x24-M-e"),
    ],
)
def test_alt_e_opens_the_editor_with_the_draft_and_the_edit_comes_back(
    tmp_path: Path, server: FakeModelServer, size: tuple[int, int], alt_e: list[str]
) -> None:
    server.push(openai_stream("Got the edited draft."))
    tmux = started(tmp_path, server, size, env=f"VISUAL={editor_script(tmp_path)}")
    try:
        tmux.type("draft for editor")
        tmux.wait_text("draft for editor")
        tmux.keys(*alt_e)
        screen = tmux.wait_text(f"draft for editor{EDITED}", timeout=30)
        assert "draft for editore" not in screen
        tmux.keys("Enter")
        tmux.wait_text("Got the edited draft.")
        assert server.requests[0].body["messages"][-1] == {
            "role": "user",
            "content": f"draft for editor{EDITED}",
        }
    finally:
        tmux.stop()


@pytest.mark.parametrize("size", SIZES)
def test_ctrl_g_opens_the_editor_with_pi_keys(
    tmp_path: Path, server: FakeModelServer, size: tuple[int, int]
) -> None:
    tmux = started(tmp_path, server, size, env=f"VISUAL={editor_script(tmp_path)}", config='keymap = "pi"')
    try:
        tmux.type("pi habits")
        tmux.wait_text("pi habits")
        tmux.keys("C-g")
        tmux.wait_text(f"pi habits{EDITED}", timeout=30)
    finally:
        tmux.stop()


@pytest.mark.parametrize("size", SIZES)
def test_f6_moves_to_the_next_model_and_the_draft_stays(
    tmp_path: Path, server: FakeModelServer, size: tuple[int, int]
) -> None:
    server.push(openai_stream("Sent on the second model."))
    tmux = started(tmp_path, server, size, models="gpt-4o,gpt-4.1")
    try:
        assert "openai/gpt-4o" in status_line(tmux.screen())
        tmux.type("keep this draft")
        tmux.wait_text("keep this draft")
        tmux.keys("F6")
        tmux.wait(lambda s: "openai/gpt-4.1" in status_line(s), "the next model (F6)", 30)
        tmux.keys(*F6_BYTES)
        tmux.wait(lambda s: "openai/gpt-4o" in status_line(s), "the next model (CSI 17 ~)", 30)
        tmux.keys("F6")
        tmux.wait(lambda s: "openai/gpt-4.1" in status_line(s), "the next model again", 30)
        # the draft was not selected: a key typed now adds to it rather than replacing it
        tmux.type("!")
        tmux.wait(lambda s: composer_line(s).startswith("keep this draft!"), "the draft, kept", 10)
        tmux.keys("Enter")
        tmux.wait_text("Sent on the second model.")
        request = server.requests[0].body
        assert request["model"] == "gpt-4.1"
        assert request["messages"][-1] == {"role": "user", "content": "keep this draft!"}
    finally:
        tmux.stop()


#: tmux's name for each key of LEGACY_BYTES (what a person presses, as tmux's send-keys names it).
TMUX_NAMES = {
    "ctrl+a": "C-a", "ctrl+c": "C-c", "ctrl+f": "C-f", "ctrl+g": "C-g", "ctrl+j": "C-j", "ctrl+l": "C-l",
    "ctrl+n": "C-n", "ctrl+o": "C-o", "ctrl+p": "C-p", "ctrl+q": "C-q", "ctrl+r": "C-r",
    "ctrl+s": "C-s", "ctrl+t": "C-t", "ctrl+v": "C-v", "escape": "Escape", "enter": "Enter",
    "alt+enter": "M-Enter", "alt+e": "M-e", "alt+t": "M-t", "alt+up": "M-Up", "tab": "Tab",
    "shift+tab": "BTab", "backspace": "BSpace", "delete": "DC", "space": "Space",
    "question_mark": "?", "up": "Up", "down": "Down", "home": "Home", "end": "End",
    "pageup": "PageUp", "pagedown": "PageDown", "ctrl+home": "C-Home", "ctrl+end": "C-End",
    "f1": "F1", "f2": "F2", "f3": "F3", "f4": "F4", "f5": "F5", "f6": "F6", "f7": "F7",
    "f8": "F8", "f9": "F9", "f10": "F10",
}  # fmt: skip

_RAW_READER = """
import os, select, sys, tty
tty.setraw(0)
with open(sys.argv[1], "w") as out:
    out.write("ready\\n"); out.flush()
    while select.select([0], [], [], 20)[0]:
        out.write(repr(os.read(0, 100)) + "\\n"); out.flush()
"""


def test_tmux_sends_each_bound_key_as_the_bytes_the_parser_reads() -> None:
    """The table the parser is tested on (LEGACY_BYTES) is what tmux's default config sends: each
    key pressed alone, its bytes read raw by a program in the pane."""
    assert set(TMUX_NAMES) == set(LEGACY_BYTES)
    with tempfile.TemporaryDirectory() as folder:
        log = Path(folder) / "bytes.log"
        reader = Path(folder) / "reader.py"
        reader.write_text(_RAW_READER)
        tmux = Tmux(f"agent-tui-keybytes-{os.getpid()}", 80, 24)
        tmux.start(f"{sys.executable} {reader} {log}; sleep 5", Path(folder))
        try:
            wait_until(lambda: log.exists() and log.read_text().startswith("ready"), "the reader")
            got: dict[str, str] = {}
            for key, name in TMUX_NAMES.items():
                before = len(log.read_text().splitlines())
                tmux.keys(name)
                wait_until(
                    lambda n=before: len(log.read_text().splitlines()) > n,  # type: ignore[misc]
                    f"the bytes of {name}",
                    10,
                )
                time.sleep(0.05)  # one key's bytes may come in two reads
                lines = log.read_text().splitlines()[before:]
                got[key] = "".join(ast.literal_eval(line).decode() for line in lines)
        finally:
            tmux.stop()
    assert got == LEGACY_BYTES
