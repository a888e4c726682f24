"""A clock a test moves by hand (``clock.now += 0.5``), for widgets that take a ``clock``."""

from __future__ import annotations


class ManualClock:
    def __init__(self, now: float = 100.0) -> None:
        self.now = now

    def __call__(self) -> float:
        return self.now
