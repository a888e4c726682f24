"""tmux for the end-to-end tests: a real terminal to run a program in, keys in, the screen out."""

from __future__ import annotations

import shutil
import subprocess
import time
from collections.abc import Callable
from pathlib import Path


class Tmux:
    """A detached tmux session running one command: type into it, read its screen, wait for text."""

    def __init__(self, name: str, width: int = 160, height: int = 50) -> None:
        self.name = name
        self.width, self.height = width, height
        self.tmux = shutil.which("tmux")
        assert self.tmux, "the end-to-end test needs tmux (.ci/run installs it)"

    def start(self, command: str, cwd: Path) -> None:
        """Start the session. A ``new-session`` issued while the tmux server is exiting (another
        test's last session just ended) fails with "server exited unexpectedly": it is tried
        again, three times at most, and a failure left says tmux's own words."""
        argv = [
            self.tmux or "tmux",
            "new-session",
            "-d",
            "-s",
            self.name,
            "-x",
            str(self.width),
            "-y",
            str(self.height),
            "-c",
            str(cwd),
            command,
        ]
        for attempt in range(3):
            done = subprocess.run(argv, capture_output=True, text=True)
            if done.returncode == 0:
                return
            if "duplicate session" in done.stderr or attempt == 2:
                break
            time.sleep(0.3)
        raise AssertionError(f"tmux new-session -s {self.name} failed: {done.stderr.strip()}")

    def screen(self) -> str:
        return subprocess.run(
            [self.tmux or "tmux", "capture-pane", "-p", "-t", self.name], capture_output=True, text=True
        ).stdout

    def keys(self, *keys: str) -> None:
        subprocess.run([self.tmux or "tmux", "send-keys", "-t", self.name, *keys], check=True)

    def type(self, text: str) -> None:
        subprocess.run([self.tmux or "tmux", "send-keys", "-t", self.name, "-l", text], check=True)

    def stop(self) -> None:
        subprocess.run([self.tmux or "tmux", "kill-session", "-t", self.name], capture_output=True)

    def wait(self, condition: Callable[[str], bool], what: str, timeout: float = 60) -> str:
        deadline = time.monotonic() + timeout
        screen = ""
        while time.monotonic() < deadline:
            screen = self.screen()
            if condition(screen):
                return screen
            time.sleep(0.05)
        raise AssertionError(f"timed out waiting for {what}; the screen:\n{screen}")

    def wait_text(self, text: str, timeout: float = 60) -> str:
        return self.wait(lambda s: text in s, repr(text), timeout)
