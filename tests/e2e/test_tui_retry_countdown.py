"""The retry countdown counts whole seconds up: "retrying in 1 s" until the call is sent again,
never "retrying in 0 s" for the last half second."""

from __future__ import annotations

import pytest
from textual.app import App, ComposeResult

from agent_tui.tui.widgets.status_line import StatusLine
from tests.support.clock import ManualClock

pytestmark = [pytest.mark.timeout(60), pytest.mark.slow]


class _Status(App[None]):
    def __init__(self, clock: ManualClock) -> None:
        super().__init__()
        self.clock = clock

    def compose(self) -> ComposeResult:
        yield StatusLine(id="status", clock=self.clock)


async def test_the_countdown_never_says_zero_seconds_before_the_retry() -> None:
    clock = ManualClock()
    app = _Status(clock)
    async with app.run_test(size=(80, 3)):
        status = app.query_one(StatusLine)
        status.start("streaming…")  # a turn runs
        status.retrying(4.0, 2, 3, "could not reach api.example.com")
        said = {}
        for left in (4.0, 3.6, 3.4, 1.0, 0.6, 0.4, 0.01):
            clock.now = 100.0 + 4.0 - left
            working = status.working or ""
            said[left] = working.split("retrying in ")[1].split(" s ")[0]
        assert said == {4.0: "4", 3.6: "4", 3.4: "4", 1.0: "1", 0.6: "1", 0.4: "1", 0.01: "1"}, said
        assert "(retry 2 of 3): could not reach api.example.com" in (status.working or "")


async def test_a_retry_reported_while_idle_still_shows_its_countdown() -> None:
    clock = ManualClock()
    app = _Status(clock)
    async with app.run_test(size=(80, 3)):
        status = app.query_one(StatusLine)
        status.retrying(2.0, 1, 3, "overloaded")
        assert "retrying in 2 s (retry 1 of 3): overloaded" in (status.working or ""), status.working
