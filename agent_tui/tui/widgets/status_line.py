"""The status line: session, model and thinking level, context, last turn, cost, and what is running.

The figures and how they fit the width come from ``projection.figures`` (pure); this
widget only draws them, one line, no markup, and animates a spinner with the
elapsed time while a turn or a compaction runs. A retry replaces the elapsed time
with its countdown ("retrying in 4 s (retry 2 of 3): could not reach ...").
"""

from __future__ import annotations

import math
import time
from collections.abc import Callable

from rich.text import Text
from textual.timer import Timer
from textual.widget import Widget

from agent_tui.projection.figures import StatusFigures, format_status
from agent_tui.terminal_text import visible_line

SPINNER = "⠋⠙⠹⠸⠼⠴⠦⠧⠇⠏"
ASCII_SPINNER = "|/-\\"
TICK = 0.1  # seconds per spinner frame


def elapsed_text(seconds: float) -> str:
    whole = int(seconds)
    return f"{whole}s" if whole < 60 else f"{whole // 60}m{whole % 60:02d}s"


class StatusLine(Widget):
    DEFAULT_CSS = """
    StatusLine { height: 1; width: 1fr; padding: 0 1; background: $panel; color: $text-muted; }
    """

    def __init__(self, *, id: str | None = None, clock: Callable[[], float] = time.monotonic) -> None:
        super().__init__(id=id)
        self.clock = clock
        self.ascii = False  # the config's ascii_symbols: no braille spinner
        self.figures: StatusFigures | None = None
        self._started: float | None = None
        self._what = ""
        self._retry: tuple[float, str] | None = None  # (when it is sent, what to say)
        self._timer: Timer | None = None

    # -- what the app calls ---------------------------------------------------------

    def show(self, figures: StatusFigures | None) -> None:
        """The figures; None: none (only what is running, if anything)."""
        self.figures = figures
        self.refresh()

    def start(self, what: str = "") -> None:
        """A turn (or compaction) is running: spin, with the elapsed time."""
        if self._started is None:
            self._started = self.clock()
        self._what = what
        self._retry = None
        if self._timer is None:
            self._timer = self.set_interval(TICK, self._tick)
        self.refresh()

    def activity(self, what: str) -> str:
        """While a turn runs, say ``what`` (``waiting for approval``) instead of what it said, which
        is returned (to say again after). Idle, nothing changes."""
        before = self._what
        if self._started is not None:
            self._what = what
            self.refresh()
        return before

    def retrying(self, delay: float, attempt: int, of: int, reason: str) -> None:
        """One updating line for a retry: the countdown, which retry, why."""
        count = f"retry {attempt} of {of}" if of else f"retry {attempt}"
        if self._started is None:
            self.start()  # (before the countdown is set: start clears it)
        self._retry = (self.clock() + delay, f"({count}): {' '.join(reason.split())}")
        self.refresh()

    def retried(self) -> None:
        """The retried call is answering: the countdown gives way to the elapsed time."""
        if self._retry is not None:
            self._retry = None
            self.refresh()

    def stop(self) -> None:
        self._started = None
        self._retry = None
        self._what = ""
        if self._timer is not None:
            self._timer.stop()
            self._timer = None
        self.refresh()

    @property
    def working(self) -> str | None:
        """The activity part of the line (None when idle)."""
        if self._started is None:
            return None
        frames = ASCII_SPINNER if self.ascii else SPINNER
        now = self.clock()
        spin = frames[int((now - self._started) / TICK) % len(frames)]  # from the clock: a test can stop it
        if self._retry is not None:
            when, what = self._retry
            # whole seconds up: "in 1 s" until it is sent, never "in 0 s" half a second before
            return f"{spin} retrying in {max(0, math.ceil(when - now))} s {what}"
        what = f"{self._what} " if self._what else ""
        return f"{spin} {what}{elapsed_text(now - self._started)}"

    @property
    def text(self) -> str:
        """The line as drawn now (for tests)."""
        width = max(self.content_size.width, 1) if self.is_mounted else 80
        if self.figures is None:
            return self.working or ""
        return format_status(self.figures, width, self.working)

    def _tick(self) -> None:
        self.refresh()

    def render(self) -> Text:
        # names and models quote the session file: inert, one line
        return Text(visible_line(self.text), no_wrap=True, overflow="ellipsis", end="")
