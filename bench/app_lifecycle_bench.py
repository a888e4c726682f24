"""The app's first message after Enter, and its exit when its terminal goes away.

``python bench/app_lifecycle_bench.py [--runs N] [--json]`` or, from ``bench/run.py``, ``run()``.

The whole program (``agent-tui``) in tmux at 80x24 against the fake model server
(``tests/support/fake_model_server.py``, OpenAI-compatible, on 127.0.0.1), a fresh process and a
new session each run:

(a) **first message on screen**: the message typed, then from the Enter (``send-keys``, as bytes)
    until the screen shows it in the chat with the composer empty again (tmux's screen read every
    10 ms: each read is a tmux client process, which overstates by up to 10 ms and a few more for
    the key's own ``send-keys``); and until the status line's spinner has turned (a second
    frame). The server holds its answer, so this is the time of the turn's start alone. Twice: the
    Enter as soon as the first frame is up (the provider's SDK still being imported after it:
    the worst case) and after 2 s (everything warm). Goal: under 100 ms.
(b) **exit after the terminal goes**: ``tmux kill-session`` (a SIGHUP, and the pty closed) until
    the process has exited (``/proc``, read every 5 ms), idle, while a reply streams (held by the
    server) and while a ``bash`` tool call runs ``sleep 30``. Goal: under 2 s.

Skipped with a note when tmux is missing.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path
from typing import Any

BENCH = Path(__file__).resolve().parent
ROOT = BENCH.parent
sys.path.insert(0, str(ROOT))

from tests.support.fake_model_server import FakeModelServer, call, openai_stream  # noqa: E402

MESSAGE = "quokka-first-message"
SPINNER = "⠋⠙⠹⠸⠼⠴⠦⠧⠇⠏"
MESSAGE_TARGET = 0.100
EXIT_TARGET = 2.0
SIZE = (80, 24)
POLL = 0.010


class _Run:
    """One app in a tmux session of its own, on a fresh home and session folder."""

    def __init__(self, tmux: str, tmp: Path, server: FakeModelServer, name: str) -> None:
        self.tmux, self.name, self.tmp = tmux, name, tmp
        for folder in ("project", "user"):
            (tmp / folder).mkdir(parents=True, exist_ok=True)
        (tmp / "config.toml").write_text("[retry]\nbase_delay = 0.01\n")
        env = {
            "HOME": tmp / "user",
            "AGENT_TUI_HOME": tmp / "home",
            "AGENT_TUI_CONFIG": tmp / "config.toml",
            "OPENAI_API_KEY": "bench-key",
            "AGENT_TUI_FSYNC": "never",
        }
        exports = " ".join(f"{k}={v}" for k, v in env.items())
        unset = " ".join(
            f"-u {k}" for k in os.environ if k.startswith(("ANTHROPIC_", "OPENAI_", "AGENT_TUI_", "TEXTUAL"))
        )
        exe = Path(sys.executable).parent / "agent-tui"
        self.command = (
            f"echo $$ > {tmp}/pid; exec env {unset} {exports} {exe} --provider openai --base-url"
            f" {server.openai_base_url} --model gpt-4o --permissions auto --session-dir {tmp}/sessions"
        )

    def start(self) -> int:
        width, height = SIZE
        size = ["-x", str(width), "-y", str(height)]
        where = ["-c", str(self.tmp / "project")]
        subprocess.run(
            [self.tmux, "new-session", "-d", "-s", self.name, *size, *where, self.command], check=True
        )
        self.wait(lambda s: "Send" in s, 60)
        return int((self.tmp / "pid").read_text())

    def screen(self) -> str:
        return subprocess.run(
            [self.tmux, "capture-pane", "-p", "-t", self.name], capture_output=True, text=True
        ).stdout

    def wait(self, condition: Any, timeout: float) -> str:
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            screen = self.screen()
            if condition(screen):
                return screen
            time.sleep(POLL)
        raise RuntimeError(f"timed out; the screen:\n{self.screen()}")

    def type(self, text: str) -> None:
        subprocess.run([self.tmux, "send-keys", "-t", self.name, "-l", text], check=True)

    def stop(self) -> None:
        subprocess.run([self.tmux, "kill-session", "-t", self.name], capture_output=True)


def _exited(pid: int) -> bool:
    try:
        with open(f"/proc/{pid}/stat") as f:
            return f.read().rsplit(")", 1)[1].split()[0] == "Z"
    except FileNotFoundError:
        return True


def _keep_server(tmux: str) -> str:
    """A session that keeps the tmux server up between the runs (see tui_bench.first_paint_process)."""
    keep = f"agent-tui-lifecycle-keep-{os.getpid()}"
    for _ in range(50):
        if (
            subprocess.run(
                [tmux, "new-session", "-d", "-s", keep, "sleep 900"], capture_output=True
            ).returncode
            == 0
        ):
            break
        time.sleep(0.1)
    return keep


def first_message(tmux: str, runs: int, settle: float) -> dict[str, list[float]]:
    shown: list[float] = []
    turning: list[float] = []
    for run in range(runs):
        gate = threading.Event()
        with FakeModelServer() as server, tempfile.TemporaryDirectory() as tmp:
            stream = openai_stream("the reply")
            stream.gate = gate  # held: the turn's start alone is timed
            server.push(stream)
            app = _Run(tmux, Path(tmp), server, f"agent-tui-first-{os.getpid()}-{run}")
            try:
                app.start()
                time.sleep(settle)
                app.type(MESSAGE)
                app.wait(lambda s: MESSAGE in s, 30)
                start = time.perf_counter()
                app.type("\r")
                at_message: float | None = None
                at_turn: float | None = None
                frames: set[str] = set()
                deadline = start + 30
                while (at_message is None or at_turn is None) and time.perf_counter() < deadline:
                    screen = app.screen()
                    now = time.perf_counter() - start
                    if at_message is None and MESSAGE in screen and "Type a message" in screen:
                        at_message = now
                    status = [line for line in screen.splitlines() if "streaming…" in line]
                    frames.update(c for line in status for c in line if c in SPINNER)
                    if at_turn is None and len(frames) >= 2:
                        at_turn = now
                    time.sleep(POLL)
                if at_message is None or at_turn is None:
                    raise RuntimeError(
                        f"no message or no turning spinner in 30 s; the screen:\n{app.screen()}"
                    )
                shown.append(at_message)
                turning.append(at_turn)
            finally:
                gate.set()
                app.stop()
    return {"message": shown, "spinner": turning}


def exit_after_hangup(tmux: str, runs: int, mode: str) -> list[float]:
    times: list[float] = []
    for run in range(runs):
        gate = threading.Event()
        with FakeModelServer() as server, tempfile.TemporaryDirectory() as tmp:
            if mode == "streaming":
                stream = openai_stream(" ".join(f"w{i}" for i in range(300)))
                stream.gate, stream.gate_at = gate, 40
                server.push(stream)
            elif mode == "tool":
                server.push(
                    openai_stream(tool_calls=[call("c1", "bash", {"command": "sleep 30"})]),
                    openai_stream("done"),
                )
            app = _Run(tmux, Path(tmp), server, f"agent-tui-exit-{os.getpid()}-{run}")
            try:
                pid = app.start()
                if mode != "idle":
                    app.type("go")
                    app.wait(lambda s: "go" in s, 30)
                    app.type("\r")
                    app.wait(lambda s: ("w30" if mode == "streaming" else "sleep 30") in s, 60)
                    time.sleep(0.3)
                start = time.perf_counter()
                app.stop()
                while not _exited(pid) and time.perf_counter() - start < 30:
                    time.sleep(0.005)
                times.append(time.perf_counter() - start)
            finally:
                gate.set()
                app.stop()
    return times


def _summary(values: list[float]) -> dict[str, float]:
    return {"n": len(values), "median": statistics.median(values), "min": min(values), "max": max(values)}


def run_bench(runs: int = 5) -> dict[str, Any] | str:
    tmux = shutil.which("tmux")
    if tmux is None:
        return "tmux not installed"
    keep = _keep_server(tmux)
    results: dict[str, Any] = {}
    try:
        for label, settle in (("at_first_frame", 0.0), ("settled", 2.0)):
            figures = first_message(tmux, runs, settle)
            results[f"message_{label}"] = _summary(figures["message"])
            results[f"spinner_{label}"] = _summary(figures["spinner"]) if figures["spinner"] else None
        for mode in ("idle", "streaming", "tool"):
            results[f"exit_{mode}"] = _summary(exit_after_hangup(tmux, runs, mode))
    finally:
        subprocess.run([tmux, "kill-session", "-t", keep], capture_output=True)
    return results


def rows(results: dict[str, Any] | str) -> list[tuple[str, str]]:
    if isinstance(results, str):
        return [("first message / exit after hangup", f"skipped: {results}")]

    def ms(x: float) -> str:
        return f"{1000 * x:.0f} ms"

    def figure(s: dict[str, float], target: float) -> str:
        verdict = "PASS" if s["median"] < target else "MISS"
        return f"{ms(s['median'])} (min {ms(s['min'])}, max {ms(s['max'])})  target < {ms(target)}  {verdict}"

    out: list[tuple[str, str]] = []
    for label, what in (("at_first_frame", "Enter at the first frame"), ("settled", "Enter 2 s later")):
        m = results[f"message_{label}"]
        out.append(
            (f"first message on screen after Enter, {what} (median of {m['n']})", figure(m, MESSAGE_TARGET))
        )
        s = results[f"spinner_{label}"]
        if s is not None:
            out.append(
                ("  ... the spinner turning", f"{ms(s['median'])} (min {ms(s['min'])}, max {ms(s['max'])})")
            )
    for mode, what in (
        ("idle", "idle"),
        ("streaming", "a reply streaming"),
        ("tool", "bash `sleep 30` running"),
    ):
        e = results[f"exit_{mode}"]
        out.append((f"exit after tmux kill-session, {what} (median of {e['n']})", figure(e, EXIT_TARGET)))
    return out


def run() -> list[tuple[str, str]]:
    """For ``bench/run.py``: 5 runs of each."""
    return rows(run_bench(5))


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args()
    results = run_bench(args.runs)
    if args.json:
        print(json.dumps(results, indent=2))
    else:
        for label, value in rows(results):
            print(f"  {label:<70} {value}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
