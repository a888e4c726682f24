"""SIGHUP (the terminal closed) mid-reply keeps the partial reply, as Ctrl+C and SIGTERM do."""

from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest

from tests.support.fake_model_server import FakeModelServer, anthropic_stream, openai_stream, text
from tests.support.print_env import Env

pytestmark = pytest.mark.timeout(90)

WORDS = " ".join(f"w{i}" for i in range(400))


def _assistants(path: Path) -> list[dict[str, Any]]:
    lines = [json.loads(line) for line in path.read_text().splitlines()[1:] if line.strip()]
    return [e["message"] for e in lines if e.get("message", {}).get("role") == "assistant"]


def _wait(condition: Any, what: str, timeout: float = 60) -> None:
    # (a loaded machine is slow, not wrong: under twice the cores' load the app took over 20 s
    # to start a turn; the test's timeout bounds a real hang)
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if condition():
            return
        time.sleep(0.05)
    raise AssertionError(f"timed out waiting for {what}")


@pytest.mark.parametrize("number", [signal.SIGHUP, signal.SIGTERM])
def test_print_mode_keeps_the_partial_reply_on_sighup_and_sigterm(
    tmp_path: Path, server: FakeModelServer, number: int
) -> None:
    env = Env(tmp_path, server)
    server.push(anthropic_stream(text(WORDS)).slow(40))
    proc = subprocess.Popen(
        [sys.executable, "-m", "agent_tui", "-p", "talk"],
        cwd=env.work,
        env=env.env,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    assert proc.stdout is not None
    assert os.read(proc.stdout.fileno(), 3)  # the reply has started
    time.sleep(0.2)
    proc.send_signal(number)
    _out, err = proc.communicate(timeout=20)
    assert proc.returncode == 130, err
    assert "Traceback" not in err
    (session,) = env.sessions()
    reply = _assistants(session)[-1]
    assert reply["stopReason"] == "aborted"
    partial = reply["content"][0]["text"]
    assert partial.startswith("w0 w1") and len(partial) < len(WORDS)


def test_closing_the_terminal_of_the_app_keeps_the_partial_reply(
    tmp_path: Path, server: FakeModelServer
) -> None:
    tmux = shutil.which("tmux")
    assert tmux, "this test needs tmux"
    work = tmp_path / "project"
    work.mkdir()
    sessions = tmp_path / "sessions"
    config = tmp_path / "config.toml"
    config.write_text("[retry]\nbase_delay = 0.01\n")
    pid_file = tmp_path / "pid"
    env = {
        "AGENT_TUI_HOME": str(tmp_path / "home"),
        "AGENT_TUI_CONFIG": str(config),
        "OPENAI_API_KEY": "test-key",
        "AGENT_TUI_FSYNC": "never",
    }
    exports = " ".join(f"{k}={v}" for k, v in env.items())
    unset = " ".join(
        f"-u {k}" for k in os.environ if k.startswith(("ANTHROPIC_", "OPENAI_", "AGENT_TUI_", "TEXTUAL"))
    )
    # exec: the app is the pane's process, so closing the pane hangs up on it directly
    command = (
        f"echo $$ > {pid_file}; exec env {unset} {exports} {sys.executable} -m agent_tui --provider openai"
        f" --base-url {server.openai_base_url} --model gpt-4o --session-dir {sessions}"
    )
    server.push(openai_stream(WORDS).slow(40))
    name = f"agent-tui-hup-{os.getpid()}"
    subprocess.run(
        [tmux, "new-session", "-d", "-s", name, "-x", "120", "-y", "40", "-c", str(work), command], check=True
    )
    try:

        def screen() -> str:
            return subprocess.run(
                [tmux, "capture-pane", "-p", "-t", name], capture_output=True, text=True
            ).stdout

        _wait(lambda: "Send" in screen(), "the app, ready to type")
        subprocess.run([tmux, "send-keys", "-t", name, "-l", "talk"], check=True)
        subprocess.run([tmux, "send-keys", "-t", name, "Enter"], check=True)
        _wait(lambda: "w5" in screen(), "the reply to stream")
        pid = int(pid_file.read_text())
    finally:
        subprocess.run([tmux, "kill-session", "-t", name], capture_output=True)  # SIGHUP to the app

    def gone() -> bool:
        try:
            os.kill(pid, 0)
        except ProcessLookupError:
            return True
        return False

    _wait(gone, "the app to exit")
    (path,) = sessions.glob("*.jsonl")
    reply = _assistants(path)[-1]
    assert reply["stopReason"] == "aborted"
    partial = reply["content"][0]["text"]
    assert partial.startswith("w0 w1") and len(partial) < len(WORDS)
