"""A hangup ends the app when no SIGHUP reaches it, whatever came before: the terminal's end is
then seen only by the thread watching stdin (``agent_tui.tui.signals.watch_stdin``).

What left an app running for 80 minutes at 80% of a core once its tmux session was gone: a
hung-up terminal's read gives b'', on which Textual's input thread selects again at once, and the
watching thread's hangup went through a SIGHUP to the process itself, which a blocked SIGHUP (a
signal mask is inherited across exec) never delivers: the thread ended, the app spun. Here the app
runs in tmux at 80x24 under a wrapper that blocks SIGHUP (or a leader that ignores it and never
passes it on), after nothing, after a suspend and resume (SIGTSTP, SIGCONT) or after the
external editor returned (each: the driver stopped and started again, a new input thread); each
checks that the process is gone soon after ``tmux kill-session`` and used little CPU meanwhile
(no spin).
"""

from __future__ import annotations

import contextlib
import os
import signal
import stat
import subprocess
import sys
import time
from pathlib import Path

import pytest

from tests.e2e.test_tui_hangup import GONE_WITHIN, App, gone
from tests.support.fake_model_server import FakeModelServer

pytestmark = [pytest.mark.timeout(150), pytest.mark.slow]

#: What the process may spend between the hangup and its end (the input thread spins until the
#: exit, 1.8 s at most; a spin that never ends takes a core for the whole of GONE_WITHIN).
CPU_WITHIN = 1.2

BLOCK_HUP = (
    f"{sys.executable} -c 'import os, signal, sys; signal.pthread_sigmask(signal.SIG_BLOCK, "
    "[signal.SIGHUP]); os.execvp(sys.argv[1], sys.argv[1:])'"
)


def cpu_seconds(pid: int) -> float:
    with open(f"/proc/{pid}/stat") as f:
        fields = f.read().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def start(app: App, *, wrapper: str = "", leader: str = "exec") -> int:
    """The app in its tmux pane, run by ``wrapper`` (exec'd by the pane's shell, so the app is
    the session's leader) or, with ``leader`` a shell prefix, as that shell's child."""
    exports = " ".join(f"{k}={v}" for k, v in app.env.items())
    unset = " ".join(
        f"-u {k}" for k in os.environ if k.startswith(("ANTHROPIC_", "OPENAI_", "AGENT_TUI_", "TEXTUAL"))
    )
    command = f"{wrapper} env {unset} {exports} {sys.executable} -m agent_tui " + " ".join(app.args)
    if leader == "exec":
        app.tmux.start(f"exec {command}", app.work)
    else:
        app.tmux.start(f"{leader} {command}; sleep 60", app.work)
    app.tmux.wait_text("Send")
    found = subprocess.run(
        ["pgrep", "-f", "-n", f"agent_tui .*{app.sessions}"], capture_output=True, text=True
    )
    return int(found.stdout.split()[0])


def hang_up_and_measure(app: App, pid: int) -> tuple[float, float]:
    """Kill the tmux session; the seconds until the process is gone and the CPU seconds it used."""
    before = cpu_seconds(pid)
    used = 0.0
    subprocess.run([app.tmux.tmux or "tmux", "kill-session", "-t", app.tmux.name], check=True)
    started = time.monotonic()
    while time.monotonic() - started < GONE_WITHIN:
        with contextlib.suppress(FileNotFoundError):  # (gone meanwhile)
            used = cpu_seconds(pid) - before
        if gone(pid):
            return time.monotonic() - started, used
        time.sleep(0.05)
    os.kill(pid, signal.SIGKILL)
    raise AssertionError(
        f"the app was still running {GONE_WITHIN} s after its session was killed ({used:.1f} s of CPU)"
    )


def editor(tmp: Path) -> Path:
    script = tmp / "editor.sh"
    script.write_text('#!/bin/sh\nprintf "edited in the editor\\n" > "$1"\n')
    script.chmod(script.stat().st_mode | stat.S_IXUSR)
    return script


@pytest.mark.parametrize("before", ["nothing", "suspend-resume", "external-editor"])
def test_a_hangup_with_sighup_blocked_ends_the_app(
    tmp_path: Path, server: FakeModelServer, before: str
) -> None:
    app = App(tmp_path, server)
    app.env["EDITOR"] = str(editor(tmp_path))
    try:
        pid = start(app, wrapper=BLOCK_HUP)
        if before == "suspend-resume":
            # what Ctrl+Z sends with ISIG on: the app stops itself, and tmux continues a stopped
            # pane's process at once (as fg would): a new input thread reads the terminal
            os.kill(pid, signal.SIGTSTP)
            time.sleep(1.0)
            app.tmux.type("typed after the resume")
            app.tmux.wait_text("typed after the resume")
        elif before == "external-editor":
            app.tmux.type("draft")
            app.tmux.wait_text("draft")
            app.tmux.keys("-H", "1b", "65")  # Alt+E, as the terminal sends it (ESC e)
            app.tmux.wait_text("edited in the editor")
        took, used = hang_up_and_measure(app, pid)
    finally:
        app.tmux.stop()
    assert took < GONE_WITHIN
    assert used < CPU_WITHIN, f"{used:.2f} s of CPU between the hangup and the end (a spin)"


def test_a_hangup_under_a_leader_that_ignores_sighup_ends_the_app(
    tmp_path: Path, server: FakeModelServer
) -> None:
    """The kernel sends SIGHUP to the session's leader only (and to the foreground group when
    that leader exits): a leader that ignores it and waits on passes nothing to the app."""
    app = App(tmp_path, server)
    try:
        pid = start(app, leader="trap '' HUP;")
        took, used = hang_up_and_measure(app, pid)
    finally:
        app.tmux.stop()
    assert took < GONE_WITHIN
    assert used < CPU_WITHIN, f"{used:.2f} s of CPU between the hangup and the end (a spin)"
