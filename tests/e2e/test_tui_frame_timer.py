"""The main screen's frame timer: a frame as soon as one is needed after a long one, never more
than one per interval after a frame of a quarter interval or more, one per half interval after a
cheaper one."""

from __future__ import annotations

import asyncio
import time
from pathlib import Path

import pytest
from textual.app import App

from agent_tui.tui.frame_timer import FrameTimer, frame_delay
from agent_tui.tui.screens.main import MainScreen
from tests.support.tui_fixtures import SIZE, make_app

pytestmark = [pytest.mark.timeout(60)]

INTERVAL = 0.5  # long, so that the load of a busy machine cannot blur the difference (0.6 s apart)


async def ticks_after(overrun: float, resume_inside: bool) -> float:
    """The time from the first tick to the second, when the first takes ``overrun`` seconds and a
    new frame is asked for (resumed) during it or right after it."""
    ticks: list[float] = []
    done = asyncio.Event()
    async with App[None]().run_test() as pilot:
        timer: FrameTimer

        def tick() -> None:
            ticks.append(time.monotonic())
            timer.pause()  # as the screen does at the start of a frame
            if len(ticks) == 1:
                if resume_inside:
                    timer.resume()
                time.sleep(overrun)
                timer.resume()
            else:
                done.set()

        timer = FrameTimer(pilot.app, INTERVAL, callback=tick, pause=True)
        timer._start()
        timer.resume()
        await asyncio.wait_for(done.wait(), 5)
        timer.stop()
    return ticks[1] - ticks[0]


async def test_after_a_frame_longer_than_the_interval_the_next_begins_at_once() -> None:
    # Textual's grid timer waited for the slot after next: 3 intervals after the first tick; ours
    # begins 1.25 intervals after it, as soon as the long frame ends.
    gap = await ticks_after(1.25 * INTERVAL, resume_inside=False)
    assert gap < 2 * INTERVAL, gap


async def test_after_a_frame_of_a_third_of_the_interval_the_next_waits_for_the_interval() -> None:
    gap = await ticks_after(INTERVAL / 3, resume_inside=True)
    assert gap >= INTERVAL * 0.95, gap


async def test_after_a_cheap_frame_the_next_may_come_after_half_an_interval() -> None:
    # a 2 ms frame (a scrollbar redrawn) held the next, and the key in it, for 16.7 ms
    gap = await ticks_after(0.0, resume_inside=True)
    assert INTERVAL * 0.45 <= gap < INTERVAL * 0.9, gap


def test_the_delay_is_what_is_left_of_the_interval() -> None:
    assert frame_delay(10.0, 0.5, 10.2) == pytest.approx(0.3)
    assert frame_delay(10.0, 0.5, 10.7) == 0.0
    assert frame_delay(-float("inf"), 0.5, 0.0) == 0.0
    assert frame_delay(10.0, 0.5, 10.2, last_took=0.2) == pytest.approx(0.3)  # the whole interval
    assert frame_delay(10.0, 0.5, 10.05, last_took=0.1) == pytest.approx(0.35)  # four times 0.1
    assert frame_delay(10.0, 0.5, 10.05, last_took=0.001) == pytest.approx(0.2)  # half, at least


async def test_the_main_screen_draws_from_it(tmp_path: Path) -> None:
    app = make_app(tmp_path)
    async with app.run_test(size=SIZE) as pilot:
        await pilot.pause()
        screen = app.screen
        assert isinstance(screen, MainScreen)
        assert isinstance(screen._update_timer, FrameTimer)
