"""The app ends soon after its terminal goes away: the pane or the session killed in tmux (a
SIGHUP, and the pty closed), the pty closed with no signal (the read fails), stdin's pipe closed.

Each case runs the real program at 80x24 against the fake model server, idle, while a reply
streams (held by a gate, so the reply is partial when the terminal goes) or while a ``bash`` tool
call runs ``sleep 30``, and checks that the process is gone, that the session file is valid JSONL
with the partial reply or the tool's aborted result in it, and that its lock is free. The bound
asserted here has slack for a loaded machine (:data:`GONE_WITHIN`); ``bench/tui_bench.py``
measures the time itself (the goal is 2 s, which the hangup's watchdog enforces).
"""

from __future__ import annotations

import fcntl
import json
import os
import pty
import select
import signal
import struct
import subprocess
import sys
import termios
import threading
import time
from pathlib import Path
from typing import Any

import pytest

from agent_tui.store.session import Session
from tests.support.fake_model_server import FakeModelServer, call, openai_stream
from tests.support.tmux import Tmux

pytestmark = [pytest.mark.timeout(150), pytest.mark.slow]

WORDS = " ".join(f"w{i}" for i in range(300))
#: The process is gone by then (the app's own bound is 2 s: this is slack for a loaded machine).
GONE_WITHIN = 15.0


class App:
    """The app in a tmux pane of its own at 80x24, talking to ``server`` (OpenAI-compatible)."""

    def __init__(self, tmp: Path, server: FakeModelServer) -> None:
        self.tmp = tmp
        self.work = tmp / "project"
        self.work.mkdir()
        self.sessions = tmp / "sessions"
        (tmp / "user").mkdir()
        config = tmp / "config.toml"
        config.write_text("[retry]\nbase_delay = 0.01\n")
        self.pid_file = tmp / "pid"
        self.env = {
            "HOME": str(tmp / "user"),
            "AGENT_TUI_HOME": str(tmp / "home"),
            "AGENT_TUI_CONFIG": str(config),
            "OPENAI_API_KEY": "test-key",
            "AGENT_TUI_FSYNC": "never",
            "TERM": "xterm-256color",
        }
        self.args = [
            "--provider",
            "openai",
            "--base-url",
            server.openai_base_url,
            "--model",
            "gpt-4o",
            "--permissions",
            "auto",
            "--session-dir",
            str(self.sessions),
        ]
        self.tmux = Tmux(f"agent-tui-hangup-{os.getpid()}-{tmp.name}", 80, 24)

    def start(self) -> int:
        exports = " ".join(f"{k}={v}" for k, v in self.env.items())
        unset = " ".join(
            f"-u {k}" for k in os.environ if k.startswith(("ANTHROPIC_", "OPENAI_", "AGENT_TUI_", "TEXTUAL"))
        )
        # exec: the app is the pane's process, so closing the pane hangs up on it directly
        self.tmux.start(
            f"echo $$ > {self.pid_file}; exec env {unset} {exports} {sys.executable} -m agent_tui "
            + " ".join(self.args),
            self.work,
        )
        self.tmux.wait_text("Send")
        return int(self.pid_file.read_text())

    def send(self, text: str) -> None:
        self.tmux.type(text)
        self.tmux.wait_text(text)
        self.tmux.type("\r")  # Enter, as the terminal sends it

    def session_file(self) -> Path:
        (path,) = self.sessions.glob("*.jsonl")
        return path


def gone(pid: int) -> bool:
    """Whether ``pid`` has exited (a zombie its parent has not reaped yet counts as exited)."""
    try:
        with open(f"/proc/{pid}/stat") as f:
            return f.read().rsplit(")", 1)[1].split()[0] == "Z"
    except FileNotFoundError:
        return True


def wait_gone(pid: int, what: str) -> float:
    started = time.monotonic()
    while time.monotonic() - started < GONE_WITHIN:
        if gone(pid):
            return time.monotonic() - started
        time.sleep(0.02)
    os.kill(pid, signal.SIGKILL)
    raise AssertionError(f"the app was still running {GONE_WITHIN} s after {what}")


def entries(path: Path) -> list[dict[str, Any]]:
    lines = path.read_text().splitlines()
    assert all(line.strip() for line in lines), "a blank or torn line"
    return [json.loads(line) for line in lines]  # every line is JSON: the file is whole


def assert_unlocked(path: Path) -> None:
    with Session.open(path) as session:  # opening for writing takes the lock: it is free
        assert session.writer is not None


@pytest.mark.parametrize("how", ["kill-pane", "kill-session"])
def test_an_idle_app_ends_when_its_pane_goes(tmp_path: Path, server: FakeModelServer, how: str) -> None:
    app = App(tmp_path, server)
    try:
        pid = app.start()
        subprocess.run([app.tmux.tmux or "tmux", how, "-t", app.tmux.name], check=True)
        wait_gone(pid, how)
    finally:
        app.tmux.stop()
    assert not list(app.sessions.glob("*.jsonl"))  # nothing was sent: no session file was made


@pytest.mark.parametrize("how", ["kill-pane", "kill-session"])
def test_a_streaming_reply_is_kept_as_aborted_when_the_pane_goes(
    tmp_path: Path, server: FakeModelServer, how: str
) -> None:
    gate = threading.Event()
    stream = openai_stream(WORDS)
    stream.gate, stream.gate_at = gate, 40  # 39 words are sent, then the server holds the rest
    server.push(stream)
    app = App(tmp_path, server)
    try:
        pid = app.start()
        app.send("talk")
        app.tmux.wait_text("w30")
        subprocess.run([app.tmux.tmux or "tmux", how, "-t", app.tmux.name], check=True)
        wait_gone(pid, how)
    finally:
        gate.set()
        app.tmux.stop()
    path = app.session_file()
    lines = entries(path)
    assert lines[0]["type"] == "session"
    (reply,) = [e["message"] for e in lines if e.get("message", {}).get("role") == "assistant"]
    assert reply["stopReason"] == "aborted"
    partial = reply["content"][0]["text"]
    assert partial.startswith("w0 w1") and "w30" in partial and len(partial) < len(WORDS)
    assert_unlocked(path)


def test_a_running_tool_is_stopped_and_recorded_when_the_session_goes(
    tmp_path: Path, server: FakeModelServer
) -> None:
    server.push(
        openai_stream(tool_calls=[call("c1", "bash", {"command": "sleep 30"})]), openai_stream("done")
    )
    app = App(tmp_path, server)
    try:
        pid = app.start()
        app.send("wait")
        app.tmux.wait_text("sleep 30")
        path = app.session_file()
        # the call is on disk and running (its result is not)
        deadline = time.monotonic() + 60
        while not any(e.get("message", {}).get("role") == "assistant" for e in entries(path)):
            assert time.monotonic() < deadline, "the tool call never reached the file"
            time.sleep(0.05)
        time.sleep(0.3)
        app.tmux.stop()  # kill-session
        wait_gone(pid, "kill-session")
    finally:
        app.tmux.stop()
    (result,) = [e["message"] for e in entries(path) if e.get("message", {}).get("role") == "toolResult"]
    assert result["toolCallId"] == "c1" and result["isError"] is True
    assert "abort" in json.dumps(result["content"]).lower()
    assert len(server.requests) == 1  # the turn ended: no next call with the result
    assert_unlocked(path)


def _pty_app(tmp: Path, server: FakeModelServer, *, stdin_pipe: bool) -> tuple[subprocess.Popen[bytes], int]:
    """The app on a pty that is not its controlling terminal (closing it sends no SIGHUP); stdin
    the pty too, or a pipe. Returns the process and the pty's master, once the app is drawn."""
    app = App(tmp, server)
    master, slave = pty.openpty()
    fcntl.ioctl(slave, termios.TIOCSWINSZ, struct.pack("HHHH", 24, 80, 0, 0))
    env = {
        k: v
        for k, v in os.environ.items()
        if not k.startswith(("ANTHROPIC_", "OPENAI_", "AGENT_TUI_", "TEXTUAL"))
    }
    env.update(app.env)
    proc = subprocess.Popen(
        [sys.executable, "-m", "agent_tui", *app.args],
        stdin=subprocess.PIPE if stdin_pipe else slave,
        stdout=slave,
        stderr=slave,
        cwd=app.work,
        env=env,
    )
    os.close(slave)
    screen = b""
    deadline = time.monotonic() + 60
    while b"Send" not in screen:
        assert time.monotonic() < deadline, f"the app never drew its footer: {screen[-400:]!r}"
        ready, _, _ = select.select([master], [], [], 0.1)
        if ready:
            screen += os.read(master, 65536)
    return proc, master


def test_the_pty_closed_without_a_signal_ends_the_app(tmp_path: Path, server: FakeModelServer) -> None:
    proc, master = _pty_app(tmp_path, server, stdin_pipe=False)
    os.close(master)  # reading the terminal now fails (EIO): that is the hangup, not a crash
    try:
        assert proc.wait(GONE_WITHIN) == 128 + signal.SIGHUP
    finally:
        proc.kill()


def test_stdin_closed_ends_the_app(tmp_path: Path, server: FakeModelServer) -> None:
    """A stdin that is not a terminal is read as the prompt (pi's rule): its writer gone with
    nothing written, the app never starts; one line on the terminal and exit 2, at once."""
    app = App(tmp_path, server)
    master, slave = pty.openpty()
    env = {
        k: v
        for k, v in os.environ.items()
        if not k.startswith(("ANTHROPIC_", "OPENAI_", "AGENT_TUI_", "TEXTUAL"))
    }
    env.update(app.env)
    proc = subprocess.Popen(
        [sys.executable, "-m", "agent_tui", *app.args],
        stdin=subprocess.PIPE,
        stdout=slave,
        stderr=slave,
        cwd=app.work,
        env=env,
    )
    os.close(slave)
    try:
        assert proc.stdin is not None
        proc.stdin.close()  # the writer of stdin went away (POLLHUP)
        assert proc.wait(GONE_WITHIN) == 2
        said = b""
        while select.select([master], [], [], 0.5)[0]:
            try:
                chunk = os.read(master, 65536)
            except OSError:
                break
            if not chunk:
                break
            said += chunk
        assert b"stdin is not a terminal" in said and said.count(b"\n") == 1, said
    finally:
        proc.kill()
        os.close(master)
