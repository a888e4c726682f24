"""A progress line on stderr for a slow step of a command (e.g. the first index of a big folder).

Nothing is written for a step that ends within ``delay`` seconds, nor when stderr is not a
terminal (a script's log gets no carriage returns). The line is rewritten in place at most
``every`` seconds and erased (with spaces) by :meth:`ProgressLine.done`.
"""

from __future__ import annotations

import sys
import time
from collections.abc import Callable
from typing import TextIO


class ProgressLine:
    """``progress(done, total)`` for a callback; ``what`` names the items (e.g. "sessions")."""

    def __init__(
        self,
        what: str,
        *,
        stream: TextIO | None = None,
        delay: float = 1.0,
        every: float = 0.2,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self.what = what
        self.stream = stream if stream is not None else sys.stderr
        self.delay = delay
        self.every = every
        self.clock = clock
        self.started = clock()
        self._shown = 0  # width of the line on screen
        self._last = 0.0
        try:
            self.enabled = self.stream.isatty()
        except (AttributeError, ValueError):
            self.enabled = False

    def __call__(self, done: int, total: int) -> None:
        if not self.enabled:
            return
        now = self.clock()
        if now - self.started < self.delay or (
            self._shown and now - self._last < self.every and done < total
        ):
            return
        self._last = now
        self._write(f"agent-tui: indexing {self.what}: {done:,}/{total:,} ({now - self.started:.0f} s)")

    def _write(self, text: str) -> None:
        pad = " " * max(0, self._shown - len(text))
        try:
            self.stream.write(f"\r{text}{pad}\r")
            self.stream.flush()
        except (OSError, ValueError):
            self.enabled = False
            return
        self._shown = len(text)

    def done(self) -> None:
        """Erase the line (if one was shown)."""
        if self._shown:
            self._write("")
            self._shown = 0
